"""SiteSpec (skill x category x style x seed) and the catalogs it is drawn from, package data of
weblica.synth: `catalogs/skills.yaml`, `catalogs/styles.yaml` and one genre file per category,
`genres/<genre>/genre.yaml` (its entity model: kinds and their nouns, labels, traits, price semantics;
see `weblica/synth/entities.py`; the genre's folder is its category id with "_" for "-").

Not every skill fits every genre: a skill may name a genre trait it `needs` (checkout needs `cart`,
booking `bookable`, store-locator `places`, date-picker `dates`); `sample_spec` draws only compatible
pairs and refuses an incompatible one with the reason and the compatible categories."""
from __future__ import annotations

import hashlib
import random
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

SYNTH_HOST_SUFFIX = "synth.test"


GENRE_FILE = "genre.yaml"


def synth_dir() -> Path:
    """The folder of weblica.synth's package data: `catalogs/`, `templates/`, `prompts/` and
    `genres/<genre>/`; an installed wheel carries all of it (and the site runtime, weblica/site_runtime)."""
    return Path(__file__).resolve().parent


class CatalogError(ValueError):
    """An unknown skill, category or style, or a broken catalog file."""


@lru_cache(maxsize=None)
def _load(name: str) -> dict[str, Any]:
    path = synth_dir() / "catalogs" / f"{name}.yaml"
    if not path.exists():
        raise CatalogError(f"catalog {path} is missing: reinstall weblica (the catalogs are its package data)")
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def all_skills() -> dict[str, dict[str, Any]]:
    """Every skill of the catalog, the opt-in ones (`opt_in: true`, the modern web's mechanics) included."""
    return _load("skills")


@lru_cache(maxsize=None)
def skills() -> dict[str, dict[str, Any]]:
    """The skills every seed draws from, and that code and tests going over "every skill" go over. An
    opt-in skill is made only when asked for by name (`sample_spec(seed, "new-tab")`, `weblica synth
    --skill new-tab`): adding one changes no seed's draw and no loop over the skills, so every site made
    before it (the shipped ones in sites/ included) is made again as it was."""
    return {name: entry for name, entry in all_skills().items() if not entry.get("opt_in")}


GENRE_KEYS = ("entity", "item", "kinds", "makers", "labels", "traits", "price", "attr", "facts", "departments",
              "site_words", "site_suffix")
TRAITS = ("cart", "bookable", "places", "dates")


@lru_cache(maxsize=None)
def categories() -> dict[str, dict[str, Any]]:
    """Category id -> its genre file (`genres/<genre>/genre.yaml`), checked (`read_genres`)."""
    return read_genres(synth_dir() / "genres")


def read_genres(folder: Path) -> dict[str, dict[str, Any]]:
    """Category id -> genre file of every `<folder>/<genre>/genre.yaml`, checked: every required key,
    kinds as kind -> its own nouns (no noun shared by two kinds, so a name tells its kind), known traits."""
    files = sorted(folder.glob(f"*/{GENRE_FILE}"))
    if not files:
        raise CatalogError(f"no genre files ({folder}/*/{GENRE_FILE}): reinstall weblica (the genres are its package data)")
    out: dict[str, dict[str, Any]] = {}
    for path in files:
        genre = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        missing = [key for key in GENRE_KEYS if key not in genre]
        if missing:
            raise CatalogError(f"{path}: missing {', '.join(missing)} (see weblica/synth/genres/electronics/{GENRE_FILE})")
        kinds = genre["kinds"]
        if not isinstance(kinds, dict) or not all(isinstance(n, list) and n for n in kinds.values()):
            raise CatalogError(f"{path}: kinds must map each kind to a list of its nouns")
        nouns = [str(n) for ns in kinds.values() for n in ns]
        if len(nouns) != len(set(nouns)):
            raise CatalogError(f"{path}: a noun belongs to two kinds; each kind needs its own nouns")
        unknown = set(genre["traits"]) - set(TRAITS)
        if unknown:
            raise CatalogError(f"{path}: unknown traits {sorted(unknown)}; known: {', '.join(TRAITS)}")
        out[path.parent.name.replace("_", "-")] = genre
    return out


def drawn_skills() -> list[str]:
    """The skills a seed draws from when none is asked for, sorted (the opt-in ones left out: `skills`)."""
    return sorted(skills())


def incompatibility(skill: str, category: str) -> str | None:
    """Why `skill` makes no sense on a `category` site (its reason from skills.yaml), or None when it fits."""
    entry = all_skills()[skill]
    need = entry.get("needs")
    if need and need not in categories()[category]["traits"]:
        return entry.get("why", f"it needs a genre with the '{need}' trait")
    return None


def compatible_categories(skill: str, among: list[str] | None = None) -> list[str]:
    """The categories (of `among`, default all) whose genre the skill fits, sorted."""
    return [c for c in (sorted(categories()) if among is None else among) if incompatibility(skill, c) is None]


def style_space() -> dict[str, Any]:
    return _load("styles")


def _pick(kind: str, value: str | None, known: list[str], rng: random.Random) -> str:
    if value is None:
        return rng.choice(known)
    if value not in known:
        raise CatalogError(f"unknown {kind} '{value}'; choose one of: {', '.join(known)}")
    return value


@dataclass
class Style:
    """A resolved point of the style space."""

    aesthetic: str
    mode: str
    density: str
    archetype: str
    listing: str
    widgets: str
    locale: str
    palette: dict[str, str]
    font: str
    heading: str
    radius: int
    surface: str
    shadow: str
    # the component layer (weblica/synth/design): a real design system, or weblica's own hand-written style
    # ("weblica", what bundles written before systems existed use); `theme` a system's theme (Bootswatch's)
    design: str = "weblica"
    theme: str = ""

    @property
    def locale_format(self) -> dict[str, Any]:
        return style_space()["locales"][self.locale]


@dataclass
class SiteSpec:
    skill: str
    category: str
    style: Style
    seed: int
    distractors: dict[str, Any] = field(default_factory=dict)  # the menu of weblica/synth/distractors.py
    generator: str = "procedural"

    @property
    def site_id(self) -> str:
        digest = hashlib.sha256(f"{self.skill}|{self.category}|{self.style.aesthetic}|{self.seed}".encode()).hexdigest()
        return f"{self.skill}-{self.category}-{digest[:8]}"

    @property
    def host(self) -> str:
        return f"{self.site_id}.{SYNTH_HOST_SUFFIX}"

    @property
    def base_url(self) -> str:
        return f"http://{self.host}"

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out.update(site_id=self.site_id, host=self.host, base_url=self.base_url)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "SiteSpec":
        return cls(skill=data["skill"], category=data["category"], style=Style(**data["style"]),
                   seed=int(data["seed"]), distractors=dict(data.get("distractors", {})),
                   generator=data.get("generator", "procedural"))


def sample_spec(seed: int, skill: str | None = None, category: str | None = None, style: str | None = None,
                generator: str = "procedural", split: str | None = None, design: str | None = None) -> SiteSpec:
    """Resolve the axes left as None from the seed; the same arguments always give the same spec.
    With `split` (train | val), categories and aesthetics come only from that split (synth/splits.py).
    `design` pins the design system (weblica/synth/design; "weblica" for the hand-written style); left
    as None it is drawn for the genre from its own rng, so it moves no other draw."""
    from weblica.synth import design as designs
    from weblica.synth.distractors import sample_menu
    from weblica.synth.splits import allowed

    rng = random.Random(f"spec:{seed}:{skill}:{category}:{style}")
    known = allowed(split, "category", sorted(categories()))
    if skill is None and category is not None:  # a skill that fits the asked category
        category = _pick("category", category, known, rng)
        skill = _pick("skill", None, [s for s in drawn_skills() if incompatibility(s, category) is None], rng)
    else:
        skill = _pick("skill", skill, sorted(all_skills()) if skill is not None else drawn_skills(), rng)
        fitting = compatible_categories(skill, known)
        if category is not None:
            category = _pick("category", category, known, rng)
            why = incompatibility(skill, category)
            if why:
                raise CatalogError(f"skill '{skill}' does not fit category '{category}': {why}; "
                                   f"compatible categories: {', '.join(fitting) or 'none in this split'}")
        elif not fitting:
            raise CatalogError(f"no category{' of the ' + split + ' split' if split else ''} fits skill '{skill}'")
        else:
            category = _pick("category", None, fitting, rng)
    space = style_space()
    aesthetic = _pick("style", style, allowed(split, "aesthetic", sorted(space["aesthetics"])), rng)
    preset = space["aesthetics"][aesthetic]
    pins = preset.get("pins", {})
    axes = {axis: pins.get(axis, rng.choice(values)) for axis, values in space["axes"].items()}
    resolved = Style(aesthetic=aesthetic, palette=dict(preset["palette"]), font=preset["font"],
                     heading=preset["heading"], radius=int(preset["radius"]), surface=preset["surface"],
                     shadow=preset["shadow"], **axes)
    distractors = sample_menu(rng, space["distractors"])
    system, theme = designs.choose(category, seed, skill, aesthetic, resolved.mode)
    if design is not None:
        try:
            designs.context(design)
        except designs.DesignError as exc:  # an unknown system, refused naming the known ones
            raise CatalogError(str(exc)) from None
        system, theme = design, theme if design == system else ""
    resolved.design, resolved.theme = system, theme
    return SiteSpec(skill=skill, category=category, style=resolved, seed=seed, distractors=distractors,
                    generator=generator)
