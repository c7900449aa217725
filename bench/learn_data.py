"""The data of bench/learn.py: which sites are synthesized with which layout, and how their tasks split
into training and the held-out sets (new sites, new sections, new layouts).

Every site is one template family (skill `menus`, category `fitness`, aesthetic `glass`, no distractors);
a layout pins the style axes that move the menu. The page grammar's header and skeleton are either set per
episode variant (bench/learn_variants.py, the default) or, in the one-layout design, pinned on every site
(`PINNED_GRAMMAR`). The training layout is a mega-menu in a top header
(hover a department, click the section). Held-out layouts change one thing each: `centered` centres the
header (the same menu, elsewhere on the screen), `tree` swaps the mega-menu for a tree (click a toggle,
then the section; hovering opens nothing).

Sections are split by data, by their id (`department/section`, the path the task's `url_match` check
expects), never by instruction text: `split_sections` holds out some sections of every department, and no
training task asks for one of them.

| split | sites | layout | sections asked |
|---|---|---|---|
| train | train sites | training | training sections |
| heldout_sites | held-out sites | training | training sections |
| heldout_sections | held-out sites | training | held-out sections |
| heldout_layout_NAME | that layout's sites | NAME | training sections |
"""
from __future__ import annotations

import dataclasses
import random
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Iterable, Sequence
from urllib.parse import urlparse

SKILL, CATEGORY, AESTHETIC = "menus", "fitness", "glass"
# the axes the seed would otherwise sample, the same on every site
FIXED_STYLE = dict(mode="light", density="regular", listing="rows", locale="en-US")
TRAIN_LAYOUT = "mega-top"
LAYOUTS: dict[str, dict[str, str]] = {
    TRAIN_LAYOUT: dict(archetype="top-nav", widgets="custom"),
    "centered": dict(archetype="centered", widgets="custom"),  # the header, and so the menu, centred
    "tree": dict(archetype="top-nav", widgets="native"),       # a tree menu: click the toggle, not hover
}
SECTION_PREFIX = "/d/"
# The page grammar's components that move the menu on the screen (weblica.synth.page_grammar draws them per
# site): the header variant sets its height (a "utility" header puts the menu 67 px lower than a "bar"), the
# skeleton its left edge. Pinned on every site, so the layouts above are what differ between the splits; sites
# whose drawn grammar differs are passed over. An empty dict pins nothing (every site keeps its draw: the
# menu then sits at 6+ places in the training layout, too many for the tiny model from a few sites).
PINNED_GRAMMAR: dict[str, str] = dict(header="bar", skeleton="plain")


@dataclass(frozen=True)
class PlannedSite:
    role: str    # train | heldout | layout
    layout: str  # a key of LAYOUTS
    seed: int


def grammar_fits(site_seed: int, layout: str, pinned: dict[str, str]) -> bool:
    """Whether the page grammar draws the `pinned` component variants for this site (its pages are built
    in memory to draw them: no browser, milliseconds)."""
    if not pinned:
        return True
    from weblica.synth.generate import build_site
    from weblica.synth.page_grammar import choose_layout

    drawn = choose_layout(build_site(family_spec(site_seed, layout))).to_dict()
    return all(drawn[key] == value for key, value in pinned.items())


def site_plan(data_seed: int, train_sites: int, heldout_sites: int, layout_sites: int,
              heldout_layouts: Sequence[str], pinned: dict[str, str] | None = None) -> list[PlannedSite]:
    """The sites, in the order of one seed list (`synth.generate.site_seeds`): train, held-out, then a
    block per held-out layout; each role takes the next seeds of the list whose page grammar fits `pinned`
    (default PINNED_GRAMMAR). Distinct seeds, so no held-out site is a training site in another style."""
    from weblica.synth.generate import site_seeds

    from weblica.synth.components import VARIANTS

    pinned = PINNED_GRAMMAR if pinned is None else pinned
    pinnable = [k for k in VARIANTS if k != "section"]
    for key, value in pinned.items():
        if key not in pinnable:
            raise ValueError(f"cannot pin page-grammar component '{key}'; pin any of {', '.join(pinnable)}")
        if value not in VARIANTS[key]:
            raise ValueError(f"page-grammar {key} has no variant '{value}'; use one of {', '.join(VARIANTS[key])}")

    for name in heldout_layouts:
        if name not in LAYOUTS or name == TRAIN_LAYOUT:
            raise ValueError(f"unknown held-out layout '{name}'; use any of: "
                             f"{', '.join(n for n in LAYOUTS if n != TRAIN_LAYOUT)}")
    roles = [("train", TRAIN_LAYOUT)] * train_sites + [("heldout", TRAIN_LAYOUT)] * heldout_sites
    for name in heldout_layouts:
        roles += [("layout", name)] * layout_sites
    tries = 200 * max(1, len(roles))  # a pin of one variant of each of two components keeps ~1 site in 15
    seeds = iter(site_seeds(data_seed, tries))
    plan: list[PlannedSite] = []
    for role, layout in roles:
        seed = next((s for s in seeds if grammar_fits(s, layout, pinned)), None)
        if seed is None:
            raise ValueError(f"no site among {tries} seeds draws the page grammar {pinned}; pin fewer components")
        plan.append(PlannedSite(role, layout, seed))
    if len({s.seed for s in plan}) != len(plan):
        raise ValueError(f"data seed {data_seed} drew a site seed twice; use another --data-seed")
    return plan


def family_spec(site_seed: int, layout: str = TRAIN_LAYOUT) -> Any:
    from weblica.synth.spec import sample_spec

    spec = sample_spec(site_seed, SKILL, CATEGORY, AESTHETIC)
    style = dataclasses.replace(spec.style, **FIXED_STYLE, **LAYOUTS[layout])
    return dataclasses.replace(spec, style=style, distractors={name: False for name in spec.distractors})


def section_of(task: Any) -> str | None:
    """The section a task asks to open (`department/section`), from its url_match check's expected URL;
    None for a task that opens no section page."""
    checks = [c for c in task.checks if c.type == "url_match"]
    if len(checks) != 1 or len(task.checks) != 1:
        return None
    path = urlparse(str(checks[0].expected)).path
    if not path.startswith(SECTION_PREFIX) or path.count("/") != 3:
        return None
    return path.removeprefix(SECTION_PREFIX)


def catalog_sections(category: str = CATEGORY) -> list[str]:
    """Every section id of a category's menu, as the menus skill builds its URLs."""
    from weblica.synth.data import slugify
    from weblica.synth.spec import categories

    departments = categories()[category]["departments"]
    return [f"{slugify(d)}/{slugify(s)}" for d, sections in departments.items() for s in sections]


def split_sections(sections: Iterable[str], seed: int, per_department: int = 1) -> tuple[list[str], list[str]]:
    """(training, held-out) section ids: `per_department` sections of every department held out, drawn
    from `seed`; every department keeps at least one training section."""
    ordered = sorted(set(sections))
    by_department: dict[str, list[str]] = defaultdict(list)
    for section in ordered:
        by_department[section.split("/", 1)[0]].append(section)
    rng = random.Random(f"heldout-sections:{seed}")
    heldout: list[str] = []
    for department, members in sorted(by_department.items()):
        if per_department >= len(members):
            raise ValueError(f"department {department} has {len(members)} sections: holding out {per_department} "
                             "would leave none to train on")
        heldout += rng.sample(members, per_department)
    return [s for s in ordered if s not in heldout], sorted(heldout)


def split_of(site: PlannedSite, section: str, heldout_sections: set[str] | frozenset[str]) -> str | None:
    """The split a task of `site` asking for `section` belongs to; None: it is used nowhere (a held-out
    section on a training site is never played, so training never opens it)."""
    held = section in heldout_sections
    if site.role == "train":
        return None if held else "train"
    if site.role == "heldout":
        return "heldout_sections" if held else "heldout_sites"
    return None if held else f"heldout_layout_{site.layout}"


def split_names(heldout_layouts: Sequence[str]) -> list[str]:
    return ["train", "heldout_sites", "heldout_sections"] + [f"heldout_layout_{n}" for n in heldout_layouts]


def assign_splits(sites: Sequence[tuple[PlannedSite, Sequence[Any]]], heldout_sections: Sequence[str],
                  heldout_layouts: Sequence[str]) -> dict[str, list[Any]]:
    """Tasks per split from (site, its section-opening tasks) pairs."""
    held = frozenset(heldout_sections)
    splits: dict[str, list[Any]] = {name: [] for name in split_names(heldout_layouts)}
    for site, tasks in sites:
        for task in tasks:
            section = section_of(task)
            name = split_of(site, section, held) if section is not None else None
            if name is not None:
                splits[name].append(task)
    return splits
