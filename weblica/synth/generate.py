"""Generating sites: spec -> site bundle -> validation in a real browser -> only valid tasks kept. The
`weblica synth` entry that picks a generator and the specs is weblica/synth/synthesize.py."""
from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from weblica.env.task import save_tasks
from weblica.synth.distractors import OVERLAYS
from weblica.synth.genres.registry import new_site
from weblica.synth.site import SiteBuilder, draft_to_task, write_bundle
from weblica.synth.skills import SKILLS
from weblica.synth.spec import SiteSpec

MIN_TASKS = 10


@dataclass
class SynthResult:
    site_id: str
    path: Path
    tasks_generated: int
    tasks_kept: int
    failures: list[str] = field(default_factory=list)
    min_tasks: int = MIN_TASKS
    page_loads: int = 0  # documents Chromium loaded to validate the site
    documents: dict[str, int] = field(default_factory=dict)  # which: URL -> loads
    negatives_tried: dict[str, int] = field(default_factory=dict)  # by kind (weblica.scoring.negatives)
    negatives_rejected: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.tasks_kept >= self.min_tasks

    def to_dict(self) -> dict[str, Any]:
        return {"site_id": self.site_id, "path": str(self.path), "tasks_generated": self.tasks_generated,
                "tasks_kept": self.tasks_kept, "ok": self.ok, "negatives_tried": self.negatives_tried,
                "negatives_rejected": self.negatives_rejected, "failures": self.failures}


def build_site(spec: SiteSpec, instance: int = 0) -> SiteBuilder:
    """Run the skill's builder on a fresh SiteBuilder (pages, data, task drafts), then its genre's own
    flows (weblica/synth/genres): the pages and intents every site of the category has. Instance k > 0
    (weblica/synth/instances.py) keeps the site (name, look, host) and draws its data afresh."""
    site = new_site(spec, instance)
    SKILLS[spec.skill](site)
    site.genre.build(site)
    return site


def site_seeds(seed: int, n: int) -> list[int]:
    """Seeds of the N sites of one run; site 0 uses the run seed itself."""
    rng = random.Random(f"run:{seed}")
    return [seed] + [rng.randrange(2 ** 31) for _ in range(n - 1)]


def emitted_drafts(site: SiteBuilder) -> list:
    """The drafts a site emits: those whose instruction passes the lint (weblica/synth/intents/lint.py),
    each request once (intents/dedupe.py), with the difficulty their plan gives (the oracle's replaces
    it after validation)."""
    from weblica.synth.intents.dedupe import dedupe
    from weblica.synth.intents.difficulty import planned
    from weblica.synth.intents.lint import lint_drafts

    kept, _ = lint_drafts(site.tasks, site)
    kept = dedupe(kept, site)
    for draft in kept:
        draft.difficulty = planned(draft.plan)
    return kept


def write_unvalidated(spec: SiteSpec, out: Path) -> Path:
    site = build_site(spec)
    tasks = [draft_to_task(site, i + 1, d) for i, d in enumerate(emitted_drafts(site))]
    return write_bundle(site, out, tasks)


def synthesize_specs(specs: list[SiteSpec], out: Path, validate: bool = True, concurrency: int = 4,
                     progress: bool = False, episode_seeds: int | None = None) -> list[SynthResult]:
    """Write a bundle per spec and, with `validate`, check them all in one browser and one site server."""
    out.mkdir(parents=True, exist_ok=True)
    paths = _write_all(specs, out, progress)
    if not validate:
        from weblica.env.task import load_tasks
        return [SynthResult(s.site_id, p, len(load_tasks(p / "tasks.jsonl")), 0) for s, p in zip(specs, paths)]
    return asyncio.run(keep_valid(paths, concurrency, progress=progress, episode_seeds=episode_seeds))


def _write_all(specs: list[SiteSpec], out: Path, progress: bool) -> list[Path]:
    if not progress:
        return [write_unvalidated(spec, out) for spec in specs]
    from weblica.progress import progress_bar

    with progress_bar(len(specs)) as bar:
        tid = bar.add_task("writing sites", total=len(specs))
        paths = []
        for spec in specs:
            paths.append(write_unvalidated(spec, out))
            bar.advance(tid)
    return paths


async def keep_valid(paths: list[Path], concurrency: int = 4, browser: Any = None,
                     progress: bool = False, episode_seeds: int | None = None) -> list[SynthResult]:
    """Compile and check every task of the bundles, at episode seed 0 and `episode_seeds` more
    (weblica/synth/validate_seeds.py); rewrite tasks.jsonl with the valid ones only."""
    from weblica.synth.intents.difficulty import oracle_effort
    from weblica.synth.validate import ValidationReport
    from weblica.synth.validate_seeds import EXTRA_SEEDS, validate_bundles_at_seeds

    report, per_bundle = await validate_bundles_at_seeds(
        paths, compile_plans=True, concurrency=concurrency, browser=browser, progress=progress,
        extra=EXTRA_SEEDS if episode_seeds is None else episode_seeds)
    results = []
    for path in paths:
        pairs = per_bundle.get(path, [])
        kept = []
        for task, outcome in pairs:
            if outcome.valid:
                task.oracle, task.oracle_thoughts = outcome.oracle, outcome.oracle_thoughts
                # difficulty is what the compiled oracle took (actions, pages, reveals, dismissals, typing)
                effort = oracle_effort(outcome.oracle or [], outcome.oracle_thoughts, task.metadata.get("plan", []))
                task.difficulty = effort.level
                task.metadata["effort"] = effort.to_dict()
                if outcome.maximal:  # the task done with everything else: what the adversarial policy plays
                    task.metadata["maximal_oracle"] = [a.to_dict() for a in outcome.maximal]
                # room for the oracle plus a few missteps: a long calendar walk must not hit the limit
                # and for the "do everything" run one action a turn (the adversarial policy plays it so:
                # several clicks in one turn outrun a pop-up that comes after N clicks, and the clicks it
                # swallows left a run that did only the task), plus this episode's dismissals (each kind
                # of pop-up at most once: it stays dismissed for the episode)
                task.max_steps = max(task.max_steps, len(outcome.oracle or []) + 5,
                                     len(outcome.maximal or []) + 2 + len(OVERLAYS) if outcome.maximal else 0)
                kept.append(task)
        save_tasks(kept, path / "tasks.jsonl")
        failures = [f"{o.task_id}: {f}" for _, o in pairs for f in o.failures]
        site_report = ValidationReport(outcomes=[o for _, o in pairs])
        tried, rejected = site_report.negatives()
        results.append(SynthResult(path.name, path, len(pairs), len(kept), failures,
                                   page_loads=report.page_loads[path.name],
                                   documents=dict(report.documents.get(path.name, {})), negatives_tried=tried,
                                   negatives_rejected=rejected))
    return results
