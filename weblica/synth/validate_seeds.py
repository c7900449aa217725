"""Validation at more episode seeds than 0.

A synth site varies per episode seed: its distractors (which pop-ups, where, when, how they close), its
sticky header and lazy loading, and for a site with fresh instances (weblica/synth/instances.py) its data,
with the gold following it. Validation proper (weblica.synth.validate) runs every baseline and negative
at episode seed 0. Here each task valid there is played again at a few more seeds, drawn from its site
(`episode_seeds`), exactly as an episode at that seed plays it: the task is resolved with the env's own
`episode_task` (an instance family's member of that seed: its instruction, checks and gold), the page
gets that seed (distractors, header, `Math.random`) and the server that instance. At each seed the
oracle plan is compiled afresh (a recorded oracle holds seed 0's dismissals) and must win, and every
answer, URL and state negative of weblica.scoring.negatives must be rejected against that seed's gold
and end page. The no-op, random and "do everything" baselines do not depend on the seed's pop-ups the
way an oracle does and stay at seed 0 only. A task that fails at a seed is dropped with the seed named.
"""
from __future__ import annotations

import asyncio
import json
import math
import random
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from weblica.env.task import Task, episode_task
from weblica.progress import OptionalBar
from weblica.serve.server import SiteServer
from weblica.synth.validate import TaskOutcome, ValidationReport, Validator, validate_bundles
from weblica.synth.validation_tabs import SlotPool

EXTRA_SEEDS = 2  # episode seeds validated besides 0, by default
SEED_SPACE = 2 ** 32  # episode seeds are unsigned 32-bit (weblica.rollout.episode_seed)
MAX_PERIOD = 2 ** 20  # the most the seeds' common period may take of SEED_SPACE (episode_seeds)


def episode_seeds(site_id: str, extra: int = EXTRA_SEEDS, members: int = 1) -> list[int]:
    """Seed 0 and `extra` more episode seeds for a site, drawn from its id alone (the same site gives
    the same seeds on any machine). An episode plays member seed % m of an m-member instance family,
    and a site's families may have any size up to its largest, `members` (a draft skipped on one
    instance leaves a smaller family). So the j-th seed is drawn as j modulo the lcm of the family
    sizes 2..members: it plays member j % m of every family at once, and any family of
    m <= extra + 1 members has each member validated. The cost stays `extra` oracle runs a task,
    whatever the sizes; a family larger than extra + 1 has its members 0..extra validated. The lcm
    takes the sizes largest first while it stays <= MAX_PERIOD (so the seeds keep that much choice);
    a size that does not fit is left out of the lcm, not of the seeds."""
    if extra < 0:
        raise ValueError("the number of extra episode seeds must be at least 0")
    period = 1
    for size in range(max(members, 1), 1, -1):
        if period * size // math.gcd(period, size) <= MAX_PERIOD:
            period = period * size // math.gcd(period, size)
    rng = random.Random(f"validate-seeds:{site_id}")
    seeds = [0]
    while len(seeds) < extra + 1:
        drawn = rng.randrange(period, SEED_SPACE - period)
        seed = drawn - drawn % period + len(seeds) % period
        if seed not in seeds:
            seeds.append(seed)
    return seeds


def site_id_of(bundle: Path) -> str:
    """A bundle's site id (site.json's spec.site_id, what names the site to the server and in tasks),
    else its folder name (a bundle the server could not serve anyway)."""
    try:
        spec = json.loads((bundle / "site.json").read_text(encoding="utf-8")).get("spec") or {}
    except (OSError, ValueError, AttributeError):
        spec = {}
    site_id = spec.get("site_id") if isinstance(spec, dict) else None
    return site_id if isinstance(site_id, str) and site_id else bundle.name


def parse_seed_list(text: str) -> list[int]:
    """`3,17,40001` -> [3, 17, 40001]: explicit episode seeds (seed 0 is always validated too)."""
    seeds = []
    for part in text.split(","):
        part = part.strip()
        if not part.isdigit() or int(part) >= SEED_SPACE:
            raise ValueError(f"episode seed {part!r} is not an integer in 0..{SEED_SPACE - 1}: "
                             "give a comma-separated list such as 3,17,40001")
        if int(part) not in seeds:
            seeds.append(int(part))
    return seeds


def family_size(tasks: list[Task]) -> int:
    """The most members any of the tasks' instance families has (1 for a site without instances)."""
    return max([len(t.metadata.get("instances") or [None]) for t in tasks] or [1])


class SeedValidator(Validator):
    """A Validator whose episodes all play one episode seed and that runs oracles and their answer
    negatives only: the maximal runs it would continue from a valid oracle stay with seed 0."""

    async def _continue_maximal(self, *args: Any, **kwargs: Any) -> None:
        return None


def _merge(outcome: TaskOutcome, seed: int, at_seed: TaskOutcome) -> None:
    """Fold a task's run at `seed` into its seed-0 outcome: what failed there drops it, seed named."""
    outcome.seeds.append(seed)
    outcome.negatives_tried.update(at_seed.negatives_tried)
    accepted = {f"{kind} negative accepted: {what}" for kind, what in at_seed.negatives_accepted}
    for kind, what in at_seed.negatives_accepted:
        outcome.accepted(kind, f"{what} (at episode seed {seed})")
    outcome.failures.extend(f"at episode seed {seed}: {f}" for f in at_seed.failures if f not in accepted)


async def validate_extra_seeds(paths: list[Path], report: ValidationReport,
                               per_bundle: dict[Path, list[tuple[Task, TaskOutcome]]], browser: Any,
                               concurrency: int = 4, extra: int = EXTRA_SEEDS, seeds: list[int] | None = None,
                               progress: bool = False, server: SiteServer | None = None,
                               pool: SlotPool | None = None) -> None:
    """Play every task valid at seed 0 at its site's further seeds (`seeds`, else `extra` drawn ones),
    in rounds: round j plays each site's j-th seed, all sites at once, `concurrency` episodes at a
    time (episode ids are per task, so two seeds of one task never overlap). A task stops at the first
    seed it fails. Outcomes in `per_bundle` (the report's) are updated in place and the page loads
    added to the report's. A task without a plan (nothing to compile at another seed) keeps seeds [0].
    `server` and `pool` (a site server serving the bundles and a slot pool on it) are reused where given
    and left open."""
    rounds: list[dict[int, list[tuple[Task, TaskOutcome]]]] = []
    for path in paths:
        pairs = per_bundle.get(path, [])
        site_seeds = [s for s in seeds if s != 0] if seeds is not None else \
            episode_seeds(site_id_of(path), extra, family_size([t for t, _ in pairs]))[1:]
        for j, seed in enumerate(site_seeds):
            if len(rounds) <= j:
                rounds.append({})
            rounds[j].setdefault(seed, []).extend(pairs)
    total = sum(len(pairs) for by_seed in rounds for pairs in by_seed.values())
    if not total:
        return
    limit = asyncio.Semaphore(concurrency)  # one limit over every seed's validator
    with (nullcontext(server) if server is not None else SiteServer(paths)) as served, \
            OptionalBar(total, "validating at more episode seeds", progress) as bar:
        # one pool of `concurrency` slots for every round and seed: a page is seeded per episode
        # (weblica.synth.validation_tabs), so a context serves any seed, where a context per seed's
        # validator cost each a renderer and a cold HTTP cache (~0.7 s of CPU)
        slots = pool if pool is not None else SlotPool(browser, served.url, concurrency)
        try:
            for by_seed in rounds:
                validators = {seed: SeedValidator(browser, served, concurrency, episode_seed=seed, pool=slots)
                              for seed in by_seed}

                async def one(validator: SeedValidator, task: Task, outcome: TaskOutcome) -> None:
                    seed = validator.episode_seed
                    played = episode_task(task, seed)  # the env's task at this seed: its instance's gold
                    if outcome.valid and played.metadata.get("plan"):
                        _merge(outcome, seed, await validator.oracle_run(played, compile_plan=True))
                    bar.advance()
                try:
                    for validator in validators.values():
                        validator.limit = limit
                    await asyncio.gather(*(one(validators[seed], t, o) for seed, pairs in by_seed.items() for t, o in pairs))
                finally:
                    for validator in validators.values():
                        report.count_loads(validator)
                        await validator.close()
        finally:
            if pool is None:
                await slots.close()


async def validate_bundles_at_seeds(paths: list[Path], compile_plans: bool = False, concurrency: int = 4,
                                    browser: Any = None, limit: int | None = None, progress: bool = False,
                                    extra: int = EXTRA_SEEDS, seeds: list[int] | None = None,
                                    ) -> tuple[ValidationReport, dict[Path, list[tuple[Task, TaskOutcome]]]]:
    """weblica.synth.validate.validate_bundles at episode seed 0, then every task valid there at its
    site's further seeds (`validate_extra_seeds`); what fails at any seed is invalid, seed named."""
    more = any(s != 0 for s in seeds) if seeds is not None else extra > 0
    if browser is None and paths and more:
        from playwright.async_api import async_playwright

        from weblica.browser.launcher import launch_browser

        async with async_playwright() as pw:
            own = await launch_browser(pw)
            try:
                return await validate_bundles_at_seeds(paths, compile_plans, concurrency, own, limit, progress,
                                                       extra, seeds)
            finally:
                await own.close()
    if not (paths and more):
        return await validate_bundles(paths, compile_plans, concurrency, browser, limit, progress)
    # one site server and one slot pool for seed 0 and the rest: their contexts' pages and HTTP caches
    # carry over (a page is seeded per episode: weblica.synth.validation_tabs)
    with SiteServer(paths) as server:
        pool = SlotPool(browser, server.url, concurrency)
        try:
            report, per_bundle = await validate_bundles(paths, compile_plans, concurrency, browser, limit, progress,
                                                        server=server, pool=pool)
            await validate_extra_seeds(paths, report, per_bundle, browser, concurrency, extra, seeds, progress,
                                       server=server, pool=pool)
        finally:
            await pool.close()
    return report, per_bundle
