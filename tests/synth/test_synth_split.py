"""The held-out validation split is disjoint from training in seeds, categories and aesthetics."""
import json
import subprocess
import sys

import pytest

from weblica.synth.spec import CatalogError, sample_spec
from weblica.synth.generate import site_seeds
from weblica.synth.splits import SplitError, load_manifest, split_seed, split_site_seeds


def test_splits_are_disjoint():
    manifest = load_manifest()
    train = [sample_spec(s, "forms", split="train") for s in range(200)]
    val = [sample_spec(split_seed(s, "val"), "forms", split="val") for s in range(200)]
    assert not {t.category for t in train} & manifest.categories
    assert not {t.style.aesthetic for t in train} & manifest.aesthetics
    assert {v.category for v in val} == set(manifest.categories)
    assert {v.style.aesthetic for v in val} == set(manifest.aesthetics)
    assert max(t.seed for t in train) < manifest.seed_offset <= min(v.seed for v in val)


def test_site_seeds_stay_in_their_range():
    offset = load_manifest().seed_offset
    for run_seed in range(20):
        assert all(s < offset for s in split_site_seeds(site_seeds(run_seed, 8), "train"))
        assert all(s >= offset for s in split_site_seeds(site_seeds(run_seed, 8), "val"))
    assert split_site_seeds([5, 7], "train") == [5, 7] and split_site_seeds([5], "val") == [offset + 5]


def test_split_conflicts_are_errors():
    with pytest.raises(CatalogError, match="unknown category 'pets'"):
        sample_spec(1, "forms", category="pets", split="train")
    with pytest.raises(SplitError, match="validation range"):
        split_seed(load_manifest().seed_offset + 1, "train")
    with pytest.raises(SplitError, match="use train or val"):
        sample_spec(1, "forms", split="test")


def test_cli_val_split_writes_held_out_sites(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "weblica.cli", "synth", "--skill", "forms", "--n", "6", "--split",
                           "val", "--no-validate", "--out", str(tmp_path), "--json"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    manifest = load_manifest()
    for site in json.loads(proc.stdout)["sites"]:
        spec = json.loads((tmp_path / site["site_id"] / "site.json").read_text())
        spec = spec.get("spec", spec)
        assert spec["category"] in manifest.categories and spec["style"]["aesthetic"] in manifest.aesthetics
        assert spec["seed"] >= manifest.seed_offset
