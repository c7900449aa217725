"""Synth benchmark (issue 18 point 9): how varied and how large the generated sites are, and what
validating them costs, side by side with an older generator's sites and an older validation code.

Every figure is measured in this run, in real Chromium at 1280x720, on whatever the generator makes
(N sites, skills taken in turn, styles sampled; nothing here names a site or a template):
- structure distance: the mean pairwise Jaccard distance of the start pages' tag-path sets (a tag
  path: the chain of tag names from <html> to an element of the rendered page);
- visual distance: the mean pairwise pHash distance (64 bits) of the start pages' first screens, and
  its ratio to the same for N sites sharing one resolved style (what styles add beyond content);
- skeleton share: distinct instruction skeletons (names, numbers, quoted text masked) per kept task;
- page size: the median start page's elements, `a[href]` links and screens of content;
- validation cost: CPU seconds per validated site (the validating process, its site server and its
  Chromium, from /proc), against the floor its page loads alone cost: each site's page loads times the
  CPU of one load of the documents validation loaded there, each loaded as validation loads a page
  (`document_load_cpu`: documents drawn by how often validation loaded them, loaded in validation's own
  episodes at its concurrency, each followed by the virtual step the env gives a new page; no action,
  no check). The earlier estimate, the same documents reloaded one at a time with the clock frozen
  (`reload_floor_cpu`), is reported beside it: it leaves out the page's timers and the contention of
  pages running at once, and it is noisier (±13% between runs against ±5%). Pages differ: a listing of
  48 pictures costs twice an about page, and validation dwells on listings, results and forms, so a
  sample of the site's pages (the start page and pages spread over its page list, what
  `sample_page_load_cpu` measures and the report shows beside it) would set the floor too low. Sites
  per CPU-minute count generation and validation;
- bare replay (bench/synth_replay.py): validation's own episodes played again with no page question,
  compiling, check or negative, each recorded action followed by its env step of virtual time: its CPU
  per load against the same floor is what the actions alone cost, and validation's ratio over it what
  validation adds to them;
- episode kinds: validation's episodes by kind (oracle runs, fresh "do everything" runs, random runs)
  and seed (0 or the extra ones): episodes, actions, page loads, actions a load and share of all
  actions. A kind's loads cost what the floor counts; its actions are the excess over it.

Validation runs in a child process with a tree's code on its own copy of the same bundles, so
`--old-code TREE` (a checkout of an older commit) puts the older validation's cost and decisions (the
tasks it keeps, the negatives it tries and rejects) beside this tree's. `--baseline DIR` is a folder of
bundles an older generator made; its sites are measured like the new ones. To make both:

    git worktree add /tmp/weblica-old <older-commit>
    (cd /tmp/weblica-old && PYTHONPATH=$PWD python -m weblica.cli synth --n 12 --seed 0 --out /tmp/old-sites)
    python bench/synth.py --n 12 --baseline /tmp/old-sites --old-code /tmp/weblica-old [--json]

`--repeat R` validates with this tree's code R times, each run followed by its own floor: every run's
ratio, their median (what the goal is read on) and spread, and whether the runs decided alike. The
same validation's CPU moves by up to ~12% between runs here, the floor by ~5%.

`--scale` measures something else: validated sites per CPU-hour when `weblica synth --ray` makes them on
1 and on 2 Ray workers, and the 2-worker / 1-worker ratio (bench/synth_scale.py).

`--tasks K` validates only the first K tasks of each site (a quick run; a site then counts as
validated when it keeps all of them).
"""
from __future__ import annotations

import argparse
import asyncio
import inspect
import io
import itertools
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/synth_replay.py

from weblica.env.task import load_tasks, save_tasks  # noqa: E402
from weblica.synth.generate import MIN_TASKS, write_unvalidated  # noqa: E402
from weblica.synth.content_metrics import content_figures  # noqa: E402
from weblica.synth.genre_metrics import bundle_figures  # noqa: E402
from weblica.synth.page_metrics import PageSize, mean_pairwise_jaccard, measure  # noqa: E402
from weblica.synth.intents.skeleton import names_in, skeleton_share  # noqa: E402
from weblica.synth.spec import SiteSpec, categories, sample_spec, skills  # noqa: E402
from synth_replay import replay_episodes  # noqa: E402

GOALS = {  # figure: (comparison, goal); issue 18 point 9
    "structure_distance": (">=", 0.5), "skeleton_share": (">=", 0.6), "median_elements": (">=", 500),
    "median_links": (">=", 40), "median_screens": (">=", 2.5), "validation_cost_ratio": ("<=", 2.0),
    # issue 38 point 9 (what a person notices)
    "non_english_share": (">=", 0.2), "composed_share": (">=", 0.3),
}
FLOOR_SITES, FLOOR_PAGES, FLOOR_LOADS = 4, 4, 5  # sites and pages of each reloaded for the per-load CPU, and how often
FLOOR_DRAWS = 3  # documents drawn per site (by how often validation loaded them) for its per-load CPU


def process_tree_cpu() -> float:
    """CPU seconds of this process (all its threads) and every live descendant, each with what its
    reaped children used (a closed Chromium renderer's time is in its parent's cutime/cstime). Read
    while the browser still runs: a killed browser's orphans would take their time with them."""
    ticks = os.sysconf("SC_CLK_TCK")
    parent, spent = {}, {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # it exited meanwhile
            continue
        parent[int(entry)] = int(fields[1])
        spent[int(entry)] = sum(int(v) for v in fields[11:15]) / ticks  # utime stime cutime cstime
    children: dict[int, list[int]] = {}
    for pid, ppid in parent.items():
        children.setdefault(ppid, []).append(pid)
    total, stack = 0.0, list(children.get(os.getpid(), []))
    while stack:
        pid = stack.pop()
        total += spent.get(pid, 0.0)
        stack += children.get(pid, [])
    own, reaped = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return total + own.ru_utime + own.ru_stime + reaped.ru_utime + reaped.ru_stime


# Run by a child Python with the code tree under test on PYTHONPATH: only APIs older trees have too.
_VALIDATE = """
import asyncio, inspect, json, os, resource, sys
from pathlib import Path
from playwright.async_api import async_playwright
from weblica.browser.launcher import launch_browser
from weblica.synth.generate import keep_valid
{tree_cpu}
async def main(paths, concurrency):
    played = None
    from weblica.synth import validate
    if "episodes_played" in inspect.getsource(validate.Validator):
        played = []  # every episode this validation plays, for the bare replay (an older code keeps none)
        made = validate.Validator.__init__
        def keeping(self, *args, **kwargs):
            made(self, *args, **kwargs)
            self.episodes_played = played
        validate.Validator.__init__ = keeping
    async with async_playwright() as pw:
        browser = await launch_browser(pw)
        start = process_tree_cpu()
        results = await keep_valid(paths, concurrency, browser=browser)
        spent = process_tree_cpu() - start
        await browser.close()
    sites = {{r.site_id: {{"generated": r.tasks_generated, "kept": r.tasks_kept, "page_loads": r.page_loads,
                         "documents": getattr(r, "documents", None),
                         "negatives_tried": r.negatives_tried, "negatives_rejected": r.negatives_rejected}}
             for r in results}}
    kept = {{r.site_id: sorted(json.loads(line)["id"] for line in (r.path / "tasks.jsonl").read_text().splitlines()
                              if line.strip()) for r in results}}
    episodes = [{{**e, "actions": [a.to_dict() for a in e["actions"]]}} for e in played] if played is not None else None
    print(json.dumps({{"cpu_seconds": spent, "sites": sites, "kept": kept, "episodes": episodes}}))
folder = Path(sys.argv[1])
asyncio.run(main(sorted(p for p in folder.iterdir() if (p / "site.json").exists()), int(sys.argv[2])))
"""


def validate_with(tree: Path, bundles: Path, out: Path, concurrency: int) -> dict[str, Any]:
    """Validate a copy of the bundles with the code of `tree` in a child process; its CPU, page loads
    per site, kept task ids and negatives (the copy's tasks.jsonl then holds the kept tasks)."""
    shutil.copytree(bundles, out)
    script = _VALIDATE.format(tree_cpu=inspect.getsource(process_tree_cpu))
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, "-c", script, str(out), str(concurrency)], env=env, cwd=tree,
                          capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        raise SystemExit(f"validation with the code of {tree} failed:\n{done.stderr[-2000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["validated"] = sum(validated(s) for s in result["sites"].values())
    result["page_loads"] = sum(s["page_loads"] for s in result["sites"].values())
    return result


def validated(site: dict[str, Any]) -> bool:
    """A site is validated when it keeps MIN_TASKS tasks, or every task when it was given fewer."""
    return site["generated"] > 0 and site["kept"] >= min(MIN_TASKS, site["generated"])


def bundle_dirs(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if (p / "site.json").exists()) if folder.is_dir() else []


def start_url(bundle: Path, path: str = "/") -> str:
    spec = json.loads((bundle / "site.json").read_text(encoding="utf-8")).get("spec", {})
    return (spec.get("base_url") or f"http://{spec.get('host') or bundle.name + '.synth.test'}").rstrip("/") + path


def sample_pages(bundle: Path, count: int) -> list[str]:
    """The start page and pages spread evenly over the rest of the site's page list (validation loads
    listings, detail pages and forms, not only start pages)."""
    listed = [p for p in json.loads((bundle / "site.json").read_text(encoding="utf-8")).get("pages", []) if p != "/"]
    step = max(1, len(listed) // max(1, count - 1))
    return ["/"] + listed[::step][:count - 1]


async def _validation_like_context(browser: Any, server: Any, clock: bool = True) -> Any:
    """A context set up as validation's (weblica.synth.validate.Validator): the env's determinism layer,
    with its fake clock unless `clock` is off (the site figures read start pages on a real clock, as
    they always have, so that timers have run)."""
    from weblica.browser.determinism import determinism_script, make_deterministic
    from weblica.browser.launcher import context_kwargs

    context = await browser.new_context(**context_kwargs(proxy=server.url))
    if clock:
        await make_deterministic(context, 0)
    else:
        await context.add_init_script(determinism_script(0))
    return context


async def start_pages(paths: list[Path]) -> list[tuple[PageSize, bytes]]:
    """Each bundle's start page, loaded as validation loads it: its size and tag paths, and its first screen."""
    from playwright.async_api import async_playwright

    from weblica.browser.launcher import launch_browser
    from weblica.serve.server import SiteServer

    out = []
    with SiteServer(paths) as server:
        async with async_playwright() as pw:
            browser = await launch_browser(pw)
            context = await _validation_like_context(browser, server, clock=False)
            for path in paths:
                page = await context.new_page()
                await page.goto(start_url(path), wait_until="load")
                out.append((await measure(page, tag_paths=True), await page.screenshot()))
                await page.close()
            await browser.close()
    return out


async def reload_cpu_seconds(paths: list[Path], urls: list[str]) -> dict[str, float]:
    """CPU (this process with its site server, and Chromium) per load of each URL, reloaded FLOOR_LOADS
    times in one page as validation reuses its pages; the browser's start and each URL's first load
    (which fills the HTTP cache) not counted."""
    from playwright.async_api import async_playwright

    from weblica.browser.launcher import launch_browser
    from weblica.serve.server import SiteServer

    cost: dict[str, float] = {}
    with SiteServer(paths) as server:
        async with async_playwright() as pw:
            browser = await launch_browser(pw)
            page = await (await _validation_like_context(browser, server)).new_page()
            for url in dict.fromkeys(urls):
                await page.goto(url, wait_until="load")
                start = process_tree_cpu()
                for _ in range(FLOOR_LOADS):
                    await page.goto(url, wait_until="load")
                cost[url] = (process_tree_cpu() - start) / FLOOR_LOADS
            await browser.close()
    return cost


def sample_page_load_cpu(paths: list[Path]) -> float:
    """The per-load CPU of a sample of the sites' pages (their start pages and pages spread over their
    page lists): the floor's old estimate, which does not ask which pages validation loads."""
    urls = [start_url(path, p) for path in paths for p in sample_pages(path, FLOOR_PAGES)]
    cost = asyncio.run(reload_cpu_seconds(paths, urls))
    return statistics.mean(cost[u] for u in urls) if urls else 0.0


def _draws(documents: dict[str, dict[str, int]]) -> dict[str, list[str]]:
    """Per site, FLOOR_DRAWS documents drawn (with replacement, seeded by the site) by how often
    validation loaded each: the mean over the draws estimates the load-weighted mean."""
    import random

    draws: dict[str, list[str]] = {}
    for site, urls in sorted(documents.items()):
        loaded = {u: n for u, n in sorted(urls.items()) if u.startswith(("http://", "https://")) and n > 0}
        if loaded:
            draws[site] = random.Random(f"floor:{site}").choices(list(loaded), weights=list(loaded.values()), k=FLOOR_DRAWS)
    return draws


def reload_floor_cpu(paths: list[Path], documents: dict[str, dict[str, int]]) -> dict[str, float]:
    """Per site, the mean CPU of reloading its drawn documents (`_draws`) one at a time in one page with
    the clock frozen, each timed once however often drawn: the floor's earlier, lower estimate (no
    virtual step after the load, so no timer the page sets at load runs; no other page beside it)."""
    draws = _draws(documents)
    cost = asyncio.run(reload_cpu_seconds(paths, [u for urls in draws.values() for u in urls]))
    return {site: statistics.mean(cost[u] for u in urls) for site, urls in draws.items()}


async def _episode_loads_cpu(paths: list[Path], draws: dict[str, list[str]], concurrency: int) -> dict[str, float]:
    from playwright.async_api import async_playwright

    from weblica.browser.launcher import launch_browser
    from weblica.env.task import Task
    from weblica.serve.server import SiteServer
    from weblica.synth.playback import STEP_VIRTUAL_MS, settle
    from weblica.synth.validate import Validator

    cost: dict[str, float] = {}
    with SiteServer(paths) as server:
        async with async_playwright() as pw:
            browser = await launch_browser(pw)
            validator = Validator(browser, server, concurrency)
            try:
                for site, urls in draws.items():
                    async def episode(n: int, rounds: int) -> None:
                        order = urls[n % len(urls):] + urls[:n % len(urls)]  # each slot its own order
                        task = Task.from_dict({"id": f"floor-{site}-{n}", "start_url": order[0], "instruction": "load",
                                               "source": {"kind": "synth", "site": site}})

                        async def loads(page: Any, tracker: Any, _errors: list[str]) -> None:
                            for url in (order * rounds)[1:]:
                                await page.goto(url, wait_until="load")
                                await settle(page, tracker, advance_ms=STEP_VIRTUAL_MS)
                        await validator._episode(task, task.id, loads)
                    # a first round fills each slot's HTTP cache with the documents' assets, as validation's
                    # many episodes on a site do; the second is timed
                    await asyncio.gather(*(episode(n, 1) for n in range(concurrency)))
                    before, start = sum(validator.page_loads.values()), process_tree_cpu()
                    await asyncio.gather(*(episode(n, FLOOR_LOADS) for n in range(concurrency)))
                    cost[site] = (process_tree_cpu() - start) / (sum(validator.page_loads.values()) - before)
            finally:
                await validator.close()
                await browser.close()
    return cost


def document_load_cpu(paths: list[Path], documents: dict[str, dict[str, int]], concurrency: int = 4) -> dict[str, float]:
    """Per site, the mean CPU of one of validation's page loads there, each made as validation makes a
    load: its drawn documents (`_draws`) loaded in validation's own episodes (weblica.synth.validate.
    Validator: its slots, cleared and seeded, and the episode's headers), `concurrency` at once as
    validation runs them, each load followed by the virtual step the env's reset gives a new page (so
    the timers the page sets at load run, as after every load validation makes). No action, no check."""
    return asyncio.run(_episode_loads_cpu(paths, _draws(documents), concurrency))


def run_floor(run: dict[str, Any], per_load: dict[str, float], fallback: float) -> float:
    """CPU the run's page loads alone cost: each site's loads times its per-load CPU (`fallback`, the
    mean over sites, for a site not measured)."""
    return sum(site["page_loads"] * per_load.get(name, fallback) for name, site in run["sites"].items())


def mean_phash_distance(shots: list[bytes]) -> float:
    import imagehash
    from PIL import Image

    hashes = [imagehash.phash(Image.open(io.BytesIO(s))) for s in shots]
    pairs = list(itertools.combinations(hashes, 2))
    return sum(a - b for a, b in pairs) / len(pairs) if pairs else 0.0


def generate(n: int, seed: int, out: Path, tasks: int | None) -> tuple[list[Path], float]:
    """N unvalidated bundles, skills taken in turn, styles sampled; returns them and the CPU it took."""
    start = resource.getrusage(resource.RUSAGE_SELF)
    ids = sorted(skills())
    paths = [write_unvalidated(sample_spec(seed * 1000 + i, ids[(seed + i) % len(ids)]), out) for i in range(n)]
    for path in paths if tasks else []:
        save_tasks(load_tasks(path / "tasks.jsonl")[:tasks], path / "tasks.jsonl")
    end = resource.getrusage(resource.RUSAGE_SELF)
    return paths, (end.ru_utime + end.ru_stime) - (start.ru_utime + start.ru_stime)


def one_style_sites(n: int, seed: int, out: Path, style: str) -> list[Path]:
    """N bundles with one fully resolved style; only skill, category and content differ."""
    base = sample_spec(seed, style=style)
    ids, cats = sorted(skills()), sorted(categories())
    specs = [SiteSpec(skill=ids[i % len(ids)], category=cats[(i * 5) % len(cats)], style=base.style,
                      seed=seed + i, distractors=dict(base.distractors)) for i in range(n)]
    return [write_unvalidated(spec, out) for spec in specs]


def instructions(paths: list[Path]) -> list[tuple[str, set[str]]]:
    """(instruction, the site's names) for every task of the bundles."""
    out = []
    for path in paths:
        data = json.loads((path / "data.json").read_text(encoding="utf-8")) if (path / "data.json").exists() else {}
        site = json.loads((path / "site.json").read_text(encoding="utf-8"))
        names = names_in(data) | ({site["name"]} if site.get("name") else set())
        out += [(task.instruction, names) for task in load_tasks(path / "tasks.jsonl")] if (path / "tasks.jsonl").exists() else []
    return out


def site_figures(paths: list[Path]) -> dict[str, Any]:
    """Diversity and page size of a set of bundles (their start pages and their tasks)."""
    pages = asyncio.run(start_pages(paths)) if paths else []
    sizes = [size for size, _ in pages]
    told = instructions(paths)
    return {
        "sites": len(paths), "tasks": len(told),
        "structure_distance": round(mean_pairwise_jaccard([s.tag_paths for s in sizes]), 3),
        "phash_distance": round(mean_phash_distance([shot for _, shot in pages]), 2),
        "skeleton_share": round(skeleton_share(told), 3),
        "median_elements": statistics.median([s.elements for s in sizes]) if sizes else 0,
        "median_links": statistics.median([s.links for s in sizes]) if sizes else 0,
        "median_screens": round(statistics.median([s.screens for s in sizes]), 2) if sizes else 0.0,
        # issue 38: design systems used, shop phrases per genre, within-genre name overlap (weblica/synth/genre_metrics.py)
        **bundle_figures(paths),
        # and what a person reading them notices: stamped-out lines, repeated headings, languages, mechanics,
        # alt text, composed tasks, oracle lengths (weblica/synth/content_metrics.py)
        **content_figures(paths),
    }


def cost_figures(run: dict[str, Any], floor_cpu: float, generation_cpu: float) -> dict[str, Any]:
    """CPU per validated site against the floor its page loads cost (`floor_cpu`, `run_floor`), for one
    validation run."""
    count = run["validated"]
    per_site = run["cpu_seconds"] / count if count else None
    floor = floor_cpu / count if count else None
    return {
        "validated_sites": count, "cpu_seconds": round(run["cpu_seconds"], 1),
        "cpu_seconds_per_validated_site": round(per_site, 2) if per_site else None,
        "page_loads_per_validated_site": round(run["page_loads"] / count, 1) if count else None,
        "floor_cpu_seconds_per_validated_site": round(floor, 2) if floor else None,
        "validation_cost_ratio": round(per_site / floor, 2) if per_site and floor else None,
        "validated_sites_per_cpu_minute": round(count / (run["cpu_seconds"] + generation_cpu) * 60, 2),
    }


def repeated_figures(repeats: list[tuple[dict[str, Any], float]]) -> dict[str, Any] | None:
    """The cost ratio over repeated validations of the same bundles by the same code, each against
    the floor measured right after it (`repeats`: (run, floor CPU) pairs): every run's ratio, their
    median and spread, and whether every run decided alike. One run's CPU moves by up to ~12% between
    runs on a shared machine, so a single ratio near the goal says little."""
    if len(repeats) < 2:
        return None
    ratios = [round(run["cpu_seconds"] / floor, 2) for run, floor in repeats if floor]
    first = decisions(repeats[0][0])
    return {"validation_cost_ratios": ratios, "median_ratio": round(statistics.median(ratios), 2) if ratios else None,
            "spread": round(max(ratios) - min(ratios), 2) if ratios else None,
            "cpu_seconds": [round(run["cpu_seconds"], 1) for run, _ in repeats],
            "floor_load_cpu_ms": [round(floor / run["page_loads"] * 1000, 1) for run, floor in repeats if run["page_loads"]],
            "same_decisions": all(decisions(run) == first for run, _ in repeats)}


def replay_figures(replayed: dict[str, Any], floor_cpu: float, run: dict[str, Any], run_floor_cpu: float) -> dict[str, Any]:
    """The bare replay's CPU per page load against its loads' floor (the actions' own cost), and
    validation's ratio over it (what validation adds to playing its actions)."""
    loads = replayed["page_loads"]
    if not loads or not floor_cpu or not run["page_loads"]:
        return {}
    ratio = replayed["cpu_seconds"] / floor_cpu
    return {"episodes": replayed["episodes"], "page_loads": loads, "actions_per_load": round(replayed["actions"] / loads, 2),
            "cpu_ms_per_load": round(replayed["cpu_seconds"] / loads * 1000, 1), "cost_ratio": round(ratio, 2),
            "validation_ratio_over_replay": round(run["cpu_seconds"] / run_floor_cpu / ratio, 2) if run_floor_cpu else None}


def episode_kinds(played: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Validation's episodes by kind and seed (oracle runs, which at seed 0 also play on into their first
    "do everything" plan; fresh "do everything" runs; random runs): episodes, actions, page loads and
    actions a load, and each kind's share of all actions. What the cost ratio follows: a kind's loads
    cost what the floor counts, its actions are the excess. None for an older code's episodes."""
    if not played or any("loads" not in e for e in played):
        return None
    kinds: dict[str, dict[str, Any]] = {}
    for episode in played:
        key = f"{episode['kind']}@{'seed 0' if episode['seed'] == 0 else 'other seeds'}"
        kind = kinds.setdefault(key, {"episodes": 0, "actions": 0, "loads": 0})
        kind["episodes"] += 1
        kind["actions"] += len(episode["actions"])
        kind["loads"] += episode["loads"]
    actions = sum(k["actions"] for k in kinds.values()) or 1
    for kind in kinds.values():
        kind["actions_per_load"] = round(kind["actions"] / kind["loads"], 2) if kind["loads"] else None
        kind["action_share"] = round(kind["actions"] / actions, 2)
    return dict(sorted(kinds.items()))


def decisions(run: dict[str, Any]) -> dict[str, Any]:
    """What a validation decided, to compare two codes: kept task ids and negatives by site."""
    return {site: (run["kept"].get(site), s["negatives_tried"], s["negatives_rejected"]) for site, s in run["sites"].items()}


def verdict(figure: str, value: Any) -> str:
    if figure not in GOALS or value is None:
        return ""
    op, goal = GOALS[figure]
    ok = value >= goal if op == ">=" else value <= goal
    return f"{'pass' if ok else 'FAIL'} (goal {op} {goal:g})"


def main() -> None:
    if "--scale" in sys.argv[1:]:   # sites per CPU-hour on 1 and 2 Ray workers: bench/synth_scale.py
        from synth_scale import main as scale_main

        scale_main([a for a in sys.argv[1:] if a != "--scale"])
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", action="store_true",
                        help="instead: validated sites per CPU-hour on 1 and 2 Ray workers (bench/synth_scale.py; "
                             "takes its --n, --seed, --skill, --cpus, --episode-seeds, --json)")
    parser.add_argument("--n", type=int, default=12, help="sites to generate")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tasks", type=int, default=None, help="validate only the first K tasks of each site")
    parser.add_argument("--baseline", type=Path, default=None, help="a folder of bundles an older generator made")
    parser.add_argument("--old-code", type=Path, default=None, help="a checkout of an older commit: its validation beside ours")
    parser.add_argument("--style", default="corporate-clean", help="the one style of the within-style set")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=1,
                        help="validate with this code R times, each with its own floor: the ratios' median and spread")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    for flag, path in (("--baseline", args.baseline), ("--old-code", args.old_code)):
        if path is not None and not path.is_dir():
            raise SystemExit(f"{flag} {path}: no such folder")
    if args.old_code is not None and not (args.old_code / "weblica" / "synth" / "validate.py").exists():
        raise SystemExit(f"--old-code {args.old_code}: not a weblica checkout (make one with `git worktree add DIR COMMIT`)")
    if args.repeat < 1:
        raise SystemExit(f"--repeat {args.repeat}: give 1 or more runs")
    baseline = bundle_dirs(args.baseline) if args.baseline else []
    if args.baseline and not baseline:
        raise SystemExit(f"--baseline {args.baseline}: no bundles (folders with a site.json) in it")
    load_average = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        paths, generation_cpu = generate(args.n, args.seed, work / "generated", args.tasks)
        runs = {"current_code": validate_with(ROOT, work / "generated", work / "current", args.concurrency)}
        if args.old_code:
            runs["old_code"] = validate_with(args.old_code.resolve(), work / "generated", work / "old", args.concurrency)
        kept = [p for p in bundle_dirs(work / "current") if validated(runs["current_code"]["sites"].get(p.name, {"generated": 0, "kept": 0}))]
        measured = kept or bundle_dirs(work / "current")
        sampled_cpu = sample_page_load_cpu(measured[:FLOOR_SITES])
        documents = {name: s["documents"] for name, s in runs["current_code"]["sites"].items()
                     if s.get("documents") and name in {p.name for p in measured}}
        per_load = document_load_cpu(measured, documents, args.concurrency)
        reload_per_load = reload_floor_cpu(measured, documents)
        # a site without documents (none kept, or an older run's): the mean over measured sites
        fallback = statistics.mean(per_load.values()) if per_load else sampled_cpu
        floors = {name: run_floor(run, per_load, fallback) for name, run in runs.items()}
        repeats = [(runs["current_code"], floors["current_code"])]
        for r in range(2, args.repeat + 1):  # validation again on fresh copies, each with its floor after it
            again = validate_with(ROOT, work / "generated", work / f"current-{r}", args.concurrency)
            again_documents = {name: s["documents"] for name, s in again["sites"].items() if name in documents}
            again_per_load = document_load_cpu(measured, again_documents, args.concurrency)
            repeats.append((again, run_floor(again, again_per_load,
                                             statistics.mean(again_per_load.values()) if again_per_load else fallback)))
        reload_floor = run_floor(runs["current_code"], reload_per_load,
                                 statistics.mean(reload_per_load.values()) if reload_per_load else sampled_cpu)
        loads = sum(s["page_loads"] for s in runs["current_code"]["sites"].values())
        played = runs["current_code"].get("episodes") or []
        replayed = replay_episodes(bundle_dirs(work / "current"), played, process_tree_cpu) if played else None
        replay_floor = run_floor({"sites": {site: {"page_loads": sum(urls.values())}
                                            for site, urls in replayed["documents"].items()}},
                                 per_load, fallback) if replayed else 0.0
        current = site_figures(bundle_dirs(work / "current"))
        within = mean_phash_distance([shot for _, shot in asyncio.run(start_pages(
            one_style_sites(args.n, args.seed + 1, work / "same", args.style)))])
        current["phash_distance_within_style"] = round(within, 2)
        current["phash_diversity_ratio"] = round(current["phash_distance"] / within, 2) if within else None
        old_sites = site_figures(baseline) if baseline else None
    summary: dict[str, Any] = {
        "sites": current, "baseline_sites": old_sites,
        "validation": {name: cost_figures(run, floors[name], generation_cpu) for name, run in runs.items()},
        # the mean CPU of one of validation's page loads, and of a load of a sample of the sites' pages
        "page_load_cpu_ms": round(floors["current_code"] / loads * 1000, 1) if loads else None,
        "sampled_pages_load_cpu_ms": round(sampled_cpu * 1000, 1),
        # the same documents reloaded one at a time with the clock frozen: the floor's earlier estimate
        "reload_floor_load_cpu_ms": round(reload_floor / loads * 1000, 1) if loads else None,
        "validation_ratio_over_reload_floor": (round(runs["current_code"]["cpu_seconds"] / reload_floor, 2)
                                               if reload_floor else None),
        "generation_cpu_seconds": round(generation_cpu, 1),
        # validation's episodes played again bare (bench/synth_replay.py): what the actions alone cost a load
        "bare_replay": replay_figures(replayed, replay_floor, runs["current_code"], floors["current_code"]) if replayed else None,
        "episode_kinds": episode_kinds(played),
        "repeats": repeated_figures(repeats),
        "load_average_1m": round(max(load_average, os.getloadavg()[0]), 1),  # a shared machine: CPU is noisy
        "cores": len(os.sched_getaffinity(0)), "tasks_per_site": args.tasks,
    }
    if "old_code" in runs:
        summary["same_decisions"] = decisions(runs["old_code"]) == decisions(runs["current_code"])
    summary["goals"] = {f: verdict(f, current.get(f, summary["validation"]["current_code"].get(f))) for f in GOALS}
    if summary["repeats"]:  # the goal read on the median of the repeated runs
        summary["goals"]["validation_cost_ratio"] = verdict("validation_cost_ratio", summary["repeats"]["median_ratio"])
    print(json.dumps(summary, sort_keys=True) if args.json else report(summary))


def report(summary: dict[str, Any]) -> str:
    """The figures as columns: these sites beside the baseline's, this validation beside the older one."""
    lines = []
    old = summary["baseline_sites"] or {}
    lines.append(f"{'sites':34} {'current':>12} {'baseline':>12}")
    for key, value in summary["sites"].items():
        if isinstance(value, dict):  # a table of its own (mechanics, languages, oracle lengths, ...)
            lines.append(key)
            before = old.get(key) or {} if old else {}
            for sub, figure in value.items():
                lines.append(f"  {sub!s:32} {figure!s:>12} {before.get(sub, '')!s:>12}")
            continue
        lines.append(f"{key:34} {value!s:>12} {old.get(key, '') if old else '':>12}  {verdict(key, value)}")
    runs = summary["validation"]
    lines.append("")
    lines.append(f"{'validation':34} {'this code':>12} {'old code' if 'old_code' in runs else '':>12}")
    for key, value in runs["current_code"].items():
        before = runs.get("old_code", {}).get(key, "")
        lines.append(f"{key:34} {value!s:>12} {before!s:>12}  {verdict(key, value)}")
    for key in ("page_load_cpu_ms", "sampled_pages_load_cpu_ms", "reload_floor_load_cpu_ms",
                "validation_ratio_over_reload_floor", "bare_replay", "episode_kinds", "repeats", "generation_cpu_seconds",
                "same_decisions",
                "load_average_1m", "cores",
                "tasks_per_site"):
        if key in summary:
            median = summary[key]["median_ratio"] if key == "repeats" and summary[key] else None
            lines.append(f"{key}: {summary[key]}" + (f"  {verdict('validation_cost_ratio', median)}" if median else ""))
    return "\n".join(lines)


if __name__ == "__main__":
    main()
