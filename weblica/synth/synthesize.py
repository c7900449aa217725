"""`weblica synth`: which generator builds the sites and from which specs. The procedural generator's
work is weblica/synth/generate.py (and instances.py for `--instances`); the LLM generator's is llm.py."""
from __future__ import annotations

from pathlib import Path

from weblica.synth.generate import SynthResult, site_seeds, synthesize_specs
from weblica.synth.instances import synthesize_instances
from weblica.synth.llm import synthesize_llm
from weblica.synth.spec import SiteSpec, sample_spec
from weblica.synth.splits import split_site_seeds


def synthesize(skill: str | None = None, category: str | None = None, style: str | None = None,
               design: str | None = None, n: int = 1,
               seed: int = 0, out: Path = Path("sites"), generator: str = "procedural", validate: bool = True,
               concurrency: int = 4, split: str | None = None, model: str | None = None,
               parallel: int = 1, progress: bool = False, instances: int = 1,
               episode_seeds: int | None = None) -> list[SynthResult]:
    """Generate N bundles; with `validate`, compile oracles in Chromium and drop invalid tasks. With
    `split` (train | val) seeds, categories and aesthetics come from that split only. `model` and
    `parallel` (sites at a time) are the LLM generator's. `instances` > 1 gives each site that many
    validated instances of its data, one per episode seed class (weblica/synth/instances.py).
    `episode_seeds`: how many episode seeds besides 0 validation plays each task at (default
    weblica.synth.validate_seeds.EXTRA_SEEDS). `design` pins the design system (weblica/synth/design)."""
    if generator == "llm":
        return synthesize_llm(skill=skill, category=category, style=style, n=n, seed=seed, out=out, model=model,
                              parallel=parallel, progress=progress, split=split)
    if generator != "procedural":
        raise ValueError(f"unknown generator '{generator}': use procedural or llm")
    specs = procedural_specs(skill, category, style, design, n, seed, split)
    if instances > 1:
        if not validate:
            raise ValueError("--instances needs validation: an instance is only served once its tasks are checked")
        return synthesize_instances(specs, out, instances, concurrency, progress, episode_seeds)
    return synthesize_specs(specs, out, validate, concurrency, progress, episode_seeds)


def procedural_specs(skill: str | None, category: str | None, style: str | None, design: str | None, n: int,
                     seed: int, split: str | None) -> list[SiteSpec]:
    """The specs of a procedural run's N sites, in order: what `synthesize` builds, and what the Ray
    pipeline (weblica/pipelines/synth_ray.py) hands out site by site, so both write the same bundles."""
    return [sample_spec(s, skill, category, style, split=split, design=design)
            for s in split_site_seeds(site_seeds(seed, n), split)]
