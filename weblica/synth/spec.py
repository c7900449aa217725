"""SiteSpec (skill x category x style x seed) and the catalogs it is drawn from (`synth/*.yaml`)."""
from __future__ import annotations

import hashlib
import os
import random
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

SYNTH_HOST_SUFFIX = "synth.test"


def synth_dir() -> Path:
    """The catalogs/templates folder: $WEBLICA_SYNTH_DIR, else `synth/` at the repository root."""
    override = os.environ.get("WEBLICA_SYNTH_DIR")
    return Path(override) if override else Path(__file__).resolve().parents[2] / "synth"


class CatalogError(ValueError):
    """An unknown skill, category or style, or a broken catalog file."""


@lru_cache(maxsize=None)
def _load(name: str) -> dict[str, Any]:
    path = synth_dir() / f"{name}.yaml"
    if not path.exists():
        raise CatalogError(f"catalog {path} is missing: set WEBLICA_SYNTH_DIR to the folder holding {name}.yaml")
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def skills() -> dict[str, dict[str, Any]]:
    return _load("skills")


def categories() -> dict[str, dict[str, Any]]:
    return _load("categories")


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
                generator: str = "procedural", split: str | None = None) -> SiteSpec:
    """Resolve the axes left as None from the seed; the same arguments always give the same spec.
    With `split` (train | val), categories and aesthetics come only from that split (synth/splits.py)."""
    from weblica.synth.distractors import sample_menu
    from weblica.synth.splits import allowed

    rng = random.Random(f"spec:{seed}:{skill}:{category}:{style}")
    skill = _pick("skill", skill, sorted(skills()), rng)
    category = _pick("category", category, allowed(split, "category", sorted(categories())), rng)
    space = style_space()
    aesthetic = _pick("style", style, allowed(split, "aesthetic", sorted(space["aesthetics"])), rng)
    preset = space["aesthetics"][aesthetic]
    pins = preset.get("pins", {})
    axes = {axis: pins.get(axis, rng.choice(values)) for axis, values in space["axes"].items()}
    resolved = Style(aesthetic=aesthetic, palette=dict(preset["palette"]), font=preset["font"],
                     heading=preset["heading"], radius=int(preset["radius"]), surface=preset["surface"],
                     shadow=preset["shadow"], **axes)
    distractors = sample_menu(rng, space["distractors"])
    return SiteSpec(skill=skill, category=category, style=resolved, seed=seed, distractors=distractors,
                    generator=generator)
