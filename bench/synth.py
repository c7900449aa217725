"""Synth benchmark: validated sites per minute, and visual diversity of the sites' first screenshots.

Diversity is the mean pairwise perceptual-hash (pHash, 64 bits) distance between the first screenshots
of N sites with sampled styles, against the same for N sites sharing one resolved style (aesthetic, mode,
density, layout, widgets, locale and distractors pinned; skill, category and content still vary): the
ratio says how much the style space, beyond the content, changes what an agent sees.

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
        mixed, seconds = generate(args.n, args.seed, Path(tmp) / "mixed", None, args.concurrency)
        load = max(load, os.getloadavg()[0])
        same = one_style_sites(args.n, args.seed + 1, Path(tmp) / "same", args.style)
        validated = sum(r.ok for r in mixed)
        across = mean_phash_distance(asyncio.run(first_screenshots([r.path for r in mixed])))
        within = mean_phash_distance(asyncio.run(first_screenshots(same)))
    summary = {
        "sites": args.n, "validated_sites": validated, "seconds": round(seconds, 1),
        "validated_sites_per_minute": round(validated / seconds * 60, 2),
        "load_average_1m": round(load, 1),  # a shared machine: the wall time depends on what else runs
        "tasks_kept": sum(r.tasks_kept for r in mixed), "tasks_generated": sum(r.tasks_generated for r in mixed),
        "phash_distance_across_styles": round(across, 2), "phash_distance_within_style": round(within, 2),
        "diversity_ratio": round(across / within, 2) if within else None,
    }
    if args.json:
        print(json.dumps(summary, sort_keys=True))
    else:
        for key, value in summary.items():
            print(f"{key}: {value}")


if __name__ == "__main__":
    main()
