"""The shipped bundles in sites/ are what the generator makes (issue 38, point 8): each is
`weblica synth --skill S --category C --seed K --out sites` (README), and regenerating all of them,
validation in Chromium included, gives their committed bytes. A generator or runtime change that alters a
site shows here until sites/ is regenerated."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from weblica.synth.generate import synthesize_specs
from weblica.synth.spec import SiteSpec, sample_spec

REPO = Path(__file__).resolve().parents[2]
SHIPPED = sorted(p for p in (REPO / "sites").iterdir() if (p / "site.json").is_file())


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_regenerating_the_shipped_sites_gives_their_committed_bytes(tmp_path):
    assert len(SHIPPED) >= 4
    specs = []
    for bundle in SHIPPED:
        spec = SiteSpec.from_dict(json.loads((bundle / "site.json").read_text(encoding="utf-8"))["spec"])
        drawn = sample_spec(spec.seed, spec.skill, spec.category)  # what the README's command draws
        assert drawn.to_dict() == spec.to_dict() and drawn.site_id == bundle.name, bundle.name
        specs.append(drawn)
    results = synthesize_specs(specs, tmp_path)
    assert all(r.ok for r in results), [(r.site_id, r.tasks_kept, r.failures[:3]) for r in results]
    for bundle, spec in zip(SHIPPED, specs):
        made, shipped = _files(tmp_path / bundle.name), _files(bundle)
        assert sorted(made) == sorted(shipped), (bundle.name, sorted(set(made) ^ set(shipped))[:10])
        differ = [rel for rel in shipped if made[rel] != shipped[rel]]
        assert not differ, (f"{bundle.name}: {differ[:10]} differ; regenerate it: `weblica synth --skill {spec.skill} "
                            f"--category {spec.category} --seed {spec.seed} --out sites`")
