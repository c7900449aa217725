"""The data of bench/learn.py: which sites are synthesized with which layout, and how their tasks split
into training and the held-out sets (new sites, new sections, new layouts).

Every site is one template family (skill `menus`, category `fitness`, aesthetic `glass`, no distractors);
a layout pins the style axes that move the menu. The training layout is a mega-menu in a top header
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


@dataclass(frozen=True)
class PlannedSite:
    role: str    # train | heldout | layout
    layout: str  # a key of LAYOUTS
    seed: int


def site_plan(data_seed: int, train_sites: int, heldout_sites: int, layout_sites: int,
              heldout_layouts: Sequence[str]) -> list[PlannedSite]:
    """The sites, in the order of one seed list (`synth.generate.site_seeds`): train, held-out, then a
    block per held-out layout. Distinct seeds, so no held-out site is a training site in another style."""
    from weblica.synth.generate import site_seeds

    for name in heldout_layouts:
        if name not in LAYOUTS or name == TRAIN_LAYOUT:
            raise ValueError(f"unknown held-out layout '{name}'; use any of: "
                             f"{', '.join(n for n in LAYOUTS if n != TRAIN_LAYOUT)}")
    roles = [("train", TRAIN_LAYOUT)] * train_sites + [("heldout", TRAIN_LAYOUT)] * heldout_sites
    for name in heldout_layouts:
        roles += [("layout", name)] * layout_sites
    seeds = site_seeds(data_seed, len(roles))
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"data seed {data_seed} drew a site seed twice; use another --data-seed")
    return [PlannedSite(role, layout, seed) for (role, layout), seed in zip(roles, seeds)]


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
