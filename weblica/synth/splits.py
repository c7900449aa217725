"""Train / validation splits of the synth space, disjoint in seeds, categories and aesthetics.

The validation split is named by a manifest (`eval/synth-val.yaml`, or $WEBLICA_SYNTH_SPLIT): the
categories and aesthetics it reserves and the seed offset of its seed range. Training sites never
draw from what validation reserves, so held-out success measures generalization to new content and
new looks, not memorized pages.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

SPLITS = ("train", "val")


class SplitError(ValueError):
    pass


@dataclass(frozen=True)
class SplitManifest:
    seed_offset: int
    categories: frozenset[str]
    aesthetics: frozenset[str]


def manifest_path() -> Path:
    override = os.environ.get("WEBLICA_SYNTH_SPLIT")
    return Path(override) if override else Path(__file__).resolve().parents[2] / "eval" / "synth-val.yaml"


@lru_cache(maxsize=4)
def load_manifest(path: str | None = None) -> SplitManifest:
    file = Path(path) if path else manifest_path()
    if not file.exists():
        raise SplitError(f"split manifest not found: {file} (set WEBLICA_SYNTH_SPLIT to its path)")
    data = yaml.safe_load(file.read_text()) or {}
    try:
        return SplitManifest(int(data["seed_offset"]), frozenset(data["categories"]), frozenset(data["aesthetics"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise SplitError(f"{file}: needs seed_offset, categories and aesthetics ({exc})") from None


def allowed(split: str | None, kind: str, known: list[str]) -> list[str]:
    """The values of `kind` (category | aesthetic) a split may use."""
    if split is None:
        return known
    if split not in SPLITS:
        raise SplitError(f"unknown split '{split}': use train or val")
    reserved = getattr(load_manifest(), "categories" if kind == "category" else "aesthetics")
    return [v for v in known if (v in reserved) == (split == "val")]


def split_seed(seed: int, split: str | None) -> int:
    """Validation seeds live at and above the offset, training seeds below it."""
    if split is None:
        return seed
    offset = load_manifest().seed_offset
    if split == "val":
        return offset + seed
    if not 0 <= seed < offset:
        raise SplitError(f"training seeds must be in [0, {offset}); {seed} is in the validation range")
    return seed


def split_site_seeds(seeds: list[int], split: str | None) -> list[int]:
    """A run's site seeds moved into the split's seed range (the run seed itself keeps its place)."""
    if split is None:
        return seeds
    offset = load_manifest().seed_offset
    return [split_seed(s % offset, split) for s in seeds]


def split_of(spec: dict) -> str:
    """The split a bundle's spec (site.json's `spec`) belongs to: val when its seed is in the validation
    range or its category or aesthetic is reserved for validation, else train."""
    manifest = load_manifest()
    reserved = (spec.get("seed", 0) >= manifest.seed_offset or spec.get("category") in manifest.categories
                or (spec.get("style") or {}).get("aesthetic") in manifest.aesthetics)
    return "val" if reserved else "train"


TASK_SET = "tasks.jsonl"


def write_task_set(out: Path, split: str) -> tuple[Path, int, int]:
    """`out/tasks.jsonl`: the tasks of every bundle in `out` that belongs to `split`, each naming its bundle by
    its folder's name, which `load_tasks` finds beside the file (so the set keeps working wherever `out` is
    moved or the recipe runs from). Bundles of the other split are left out. Returns (path, tasks, bundles);
    written whole or not at all."""
    import json

    from weblica.env.task import load_tasks, save_tasks
    from weblica.synth.bundles import bundle_dirs

    if split not in SPLITS:
        raise SplitError(f"unknown split '{split}': use train or val")
    tasks, bundles = [], 0
    for bundle in bundle_dirs(out):
        spec = json.loads((bundle / "site.json").read_text(encoding="utf-8")).get("spec", {})
        if split_of(spec) != split or not (bundle / "tasks.jsonl").exists():
            continue
        bundles += 1
        for task in load_tasks(bundle / "tasks.jsonl"):
            task.source.bundle = bundle.name
            tasks.append(task)
    path = out / TASK_SET
    partial = path.with_name(path.name + ".partial")
    save_tasks(tasks, partial)
    partial.replace(path)
    return path, len(tasks), bundles
