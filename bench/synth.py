"""Synth benchmark: validated sites per minute, and visual diversity of the sites' first screenshots.

Diversity is the mean pairwise perceptual-hash (pHash, 64 bits) distance between the first screenshots
of N sites with sampled styles, against the same for N sites sharing one resolved style (aesthetic, mode,
density, layout, widgets, locale and distractors pinned; skill, category and content still vary): the
ratio says how much the style space, beyond the content, changes what an agent sees.

Where the time goes: the machine's CPU seconds per validated site, against the budget the goal of 60
sites a minute leaves on this machine's cores, and the share of it that page loads alone take (the
documents validation loads per site, times the CPU of one load of a validated site's start page,
measured in the same run in a browser set up like validation's).

    python bench/synth.py --n 12 [--seed 0] [--style brutalist] [--concurrency 4] [--json]
"""
from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from weblica.synth.generate import synthesize_specs, write_unvalidated
from weblica.synth.spec import SiteSpec, categories, sample_spec, skills


GOAL_SITES_PER_MINUTE = 60


def machine_cpu_seconds() -> float:
    """CPU time used by every process on this machine (Linux): Chromium's processes are not children
    this process waits for, so its own rusage would miss them."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle and iowait
    return (sum(fields) - idle) / os.sysconf("SC_CLK_TCK")


async def page_load_cpu_ms(paths: list[Path], loads: int = 20) -> float:
    """Machine CPU per load of a site's start page, reloaded in one page as validation reuses its pages."""
    from playwright.async_api import async_playwright

    from weblica.browser.launcher import context_kwargs, launch_browser
    from weblica.serve.server import SiteServer
    from weblica.synth.validate import _DETERMINISM

    with SiteServer(paths) as server:
        async with async_playwright() as pw:
            browser = await launch_browser(pw)
            context = await browser.new_context(**context_kwargs(proxy=server.url))
            await context.add_init_script(_DETERMINISM.read_text(encoding="utf-8").replace("__WEBLICA_SEED__", "0"))
            page = await context.new_page()
            spent = 0.0
            for path in paths:
                url = f"http://{path.name}.synth.test/"
                await page.goto(url, wait_until="load")
                start = machine_cpu_seconds()
                for _ in range(loads):
                    await page.goto(url, wait_until="load")
                spent += machine_cpu_seconds() - start
            await browser.close()
    return spent / (loads * len(paths)) * 1000


def generate(n: int, seed: int, out: Path, style: str | None, concurrency: int) -> tuple[list[Any], float]:
    """N validated sites, skills taken in turn, generated and then validated in one browser; returns the
    results and the wall time of both."""
    start = time.perf_counter()
    ids = sorted(skills())
    specs = [sample_spec(seed * 1000 + i, ids[(seed + i) % len(ids)], style=style) for i in range(n)]
    results = synthesize_specs(specs, out, concurrency=concurrency)
    return results, time.perf_counter() - start


def one_style_sites(n: int, seed: int, out: Path, style: str) -> list[Path]:
    """N bundles with one fully resolved style; only skill, category and content differ."""
    base = sample_spec(seed, style=style)
    ids, cats = sorted(skills()), sorted(categories())
    specs = [SiteSpec(skill=ids[i % len(ids)], category=cats[(i * 5) % len(cats)], style=base.style,
                      seed=seed + i, distractors=dict(base.distractors)) for i in range(n)]
    return [write_unvalidated(spec, out) for spec in specs]


async def first_screenshots(paths: list[Path]) -> list[bytes]:
    from playwright.async_api import async_playwright

    from weblica.browser.launcher import context_kwargs, launch_browser
    from weblica.serve.server import SiteServer

    shots = []
    with SiteServer(paths) as server:
        async with async_playwright() as pw:
            browser = await launch_browser(pw)
            context = await browser.new_context(**context_kwargs(proxy=server.url))
            for path in paths:
                page = await context.new_page()
                await page.goto(f"http://{path.name}.synth.test/", wait_until="load")
                shots.append(await page.screenshot())
                await page.close()
            await browser.close()
    return shots


def mean_phash_distance(shots: list[bytes]) -> float:
    import io

    import imagehash
    from PIL import Image

    hashes = [imagehash.phash(Image.open(io.BytesIO(s))) for s in shots]
    pairs = list(itertools.combinations(hashes, 2))
    return sum(a - b for a, b in pairs) / len(pairs) if pairs else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=12)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--style", default="corporate-clean", help="the one style of the within-style set")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        load = os.getloadavg()[0]
        cpu = machine_cpu_seconds()
        mixed, seconds = generate(args.n, args.seed, Path(tmp) / "mixed", None, args.concurrency)
        cpu = machine_cpu_seconds() - cpu
        load = max(load, os.getloadavg()[0])
        load_ms = asyncio.run(page_load_cpu_ms([r.path for r in mixed if r.ok][:4]))
        same = one_style_sites(args.n, args.seed + 1, Path(tmp) / "same", args.style)
        validated = sum(r.ok for r in mixed)
        across = mean_phash_distance(asyncio.run(first_screenshots([r.path for r in mixed])))
        within = mean_phash_distance(asyncio.run(first_screenshots(same)))
    cores = len(os.sched_getaffinity(0))
    loads = sum(r.page_loads for r in mixed)
    summary = {
        "sites": args.n, "validated_sites": validated, "seconds": round(seconds, 1),
        "validated_sites_per_minute": round(validated / seconds * 60, 2),
        "load_average_1m": round(load, 1),  # a shared machine: the wall time depends on what else runs
        "tasks_kept": sum(r.tasks_kept for r in mixed), "tasks_generated": sum(r.tasks_generated for r in mixed),
        "phash_distance_across_styles": round(across, 2), "phash_distance_within_style": round(within, 2),
        "diversity_ratio": round(across / within, 2) if within else None,
        "cores": cores, "cpu_seconds_per_site": round(cpu / args.n, 2),
        "cpu_seconds_per_site_at_goal": round(cores * 60 / GOAL_SITES_PER_MINUTE, 2),
        "page_loads_per_site": round(loads / args.n, 1), "page_load_cpu_ms": round(load_ms, 1),
        "page_loads_cpu_seconds_per_site": round(loads / args.n * load_ms / 1000, 2),
    }
    if args.json:
        print(json.dumps(summary, sort_keys=True))
    else:
        for key, value in summary.items():
            print(f"{key}: {value}")


if __name__ == "__main__":
    main()
