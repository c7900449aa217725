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
