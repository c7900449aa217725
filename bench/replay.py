"""Replay benchmark: weblica's replay vs Playwright routeFromHAR vs mitmproxy server replay (defaults).

On the local multi-host shop (tests/cache_sites/shop.py: HTTPS hosts, cache-busters, CSRF and session
tokens, JSON API with nonces, beacons, a POST search), one recording of two runs is replayed by each
approach with the live servers replaced by listeners, using an episode seed no recorded run used:

- served: requests answered from the recording (ours: any tier but miss);
- outbound: connections that reached the listeners on the original servers' ports;
- wrong content: a search for a query never recorded ("sofa") showing another query's results;
- screens: screenshots identical to the first recorded run's;
- page load: the start page opened and settled, replay vs live (median of repeats).

Then issue 20's probes on the local news site (weblica/cache/demo_site.py: slug article URLs, a search
recorded with one query, a rotating ad behind a random cache-buster), recorded twice and replayed by
ours with the inferred rules and with none:

- wrong-content serves: probe requests (an unrecorded article slug, an unrecorded query) answered
  with a recorded page instead of a miss (goal 0);
- misses and screens on the recorded browse: the ad must be served with the rules as without them.

Then coverage: the news site's tasks built into a cache by `weblica cache build` (oracle, 2 runs),
without crawl expansion and with --crawl-depth 1; the share of requests served when the random
policy, or the oracle at other seeds, plays the cached tasks (`--coverage-only` prints just this).
Then the repeat rate (tests/cache_sites/loader.py: a loader that batches and races by arrival time,
recorded with random server latency): same requests and screens in N of 10 replays.

Then issue 20's probes side by side (tests/cache_sites/probes.py: Vary on Accept-Language, the login
cookie, slugs, an unrecorded search, Range; recorded by real Chromium, two locales, logged out and in):
each probe correct, miss or WRONG under ours (inferred rules; no rules), Playwright routeFromHAR and
mitmproxy server replay (`--probes-only`). Then held-out-load recall on the local live-like sites
(news, shop, loader; 4 loads each, rules learned from loads 1..k-1, load k asked of the matcher):
recall and precision, strict and net of the sites' own randomness (`--heldout-only`). These are local
sites built to behave like the live web, not the real web. Then the same on real loads of public sites
(`bench/replay_real.py`, `--real-only`: HARs sitespeed.io's pagexray ships, source cited in the output)
and the logged-in crawl (`bench/replay_login.py`, `--login-only`: a members' site built with and without
the episode's session, and what an agent exploring the member pages is served).

Prints figures and ratios; nothing is asserted. Run: `.venv/bin/python bench/replay.py [--repeats 3]`.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "cache"))  # the live-like tasks of the cache build tests
sys.path.insert(0, str(ROOT))

from weblica.cache.demo_site import NEWS_ACTIONS, RECORDED_ARTICLE, NewsSite  # noqa: E402
from cache_sites.loader import LOADER_ACTIONS, LoaderSite, replay_rounds  # noqa: E402
from cache_sites.shop import SEARCH_ACTIONS, ShopSite  # noqa: E402
from listener import Listener  # noqa: E402
from replay_figures import (_mitm_flows, heldout_recall, print_heldout, print_probe_figures,  # noqa: E402
                            probe_figures)
from replay_login import login_crawl, print_login  # noqa: E402
from replay_real import print_real, real_heldout  # noqa: E402

from weblica.browser.session import BrowserHost  # noqa: E402
from weblica.cache.addons import HostMapper, parse_resolve  # noqa: E402
from weblica.cache.backend import CacheBackend  # noqa: E402
from weblica.cache.infer import infer_rules  # noqa: E402
from weblica.cache.interop import export_har  # noqa: E402
from weblica.cache.play import load_screens, make_env, play  # noqa: E402
from weblica.cache.proxy import ProxyServer  # noqa: E402
from weblica.cache.record import record  # noqa: E402
from weblica.cache.rules import save_rules  # noqa: E402
from weblica.cache.store import Store, screens_dir  # noqa: E402
from weblica.env.actions import make_action  # noqa: E402
from weblica.env.backend import NetworkConfig  # noqa: E402
from weblica.env.executor import ActionExecutor  # noqa: E402
from weblica.env.task import TaskSource  # noqa: E402
from weblica.env.tabs import SettleOptions, TabSet  # noqa: E402

SEED = 5
SOFA = [dict(a) for a in SEARCH_ACTIONS]
SOFA[4] = {"name": "write", "arguments": {"text": "sofa"}}


class LiveBackend:
    """Straight to the site (host names resolved by Chromium's host-resolver rules)."""

    async def begin(self, task: Any, episode_id: str, seed: int) -> NetworkConfig:
        return NetworkConfig(ignore_https_errors=True)

    async def state(self, task: Any, episode_id: str) -> None:
        return None

    async def end(self, task: Any, episode_id: str) -> None:
        return None


class ReplayCounter:
    """Counts what mitmproxy's server replay answered and what it let through."""

    def __init__(self) -> None:
        self.served = 0
        self.requests = 0

    def response(self, flow: Any) -> None:
        self.requests += 1
        self.served += flow.is_replay == "response"

    def error(self, flow: Any) -> None:
        self.requests += 1


async def _browse_context(host: BrowserHost, context: Any, start_url: str, actions: list[dict]) -> list[bytes]:
    """The env's episode loop on a context we prepared ourselves (for the HAR router)."""
    tabs = TabSet(context, SettleOptions())
    executor = ActionExecutor(tabs, 15)
    page = await tabs.open_first()
    shots = []
    try:
        await page.goto(start_url, wait_until="load", timeout=15000)
    except Exception:
        pass
    await tabs.settle()
    shots.append(await tabs.screenshot())
    for action in actions:
        await executor.run(make_action(action))
        await tabs.settle()
        shots.append(await tabs.screenshot())
    return shots


def _identical(reference: list[bytes], shots: list[bytes]) -> str:
    return f"{sum(a == b for a, b in zip(reference, shots))}/{max(len(reference), len(shots))}"


def _shows_desk_results(shot: bytes, desk: bytes) -> bool:
    return shot == desk


async def main(repeats: int) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="weblica-bench-"))
    rec, rules = work / "rec", work / "rules"
    out: dict[str, Any] = {}
    with ShopSite() as site:
        ports = dict(site.ports)
        start_url = site.start_url
        summary = await record(start_url, SEARCH_ACTIONS, rec, runs=2, resolve=site.resolve)
        out["recorded"] = summary.to_dict()
        # live page load: straight to the servers
        rules_flag = ", ".join(f"MAP {spec.split(':')[0]} 127.0.0.1" for spec in site.resolve)
        from weblica.browser.launcher import BrowserOptions
        from weblica.env.browser_env import EnvConfig, WebEnv
        from weblica.env.task import Task

        # the replaying env's browser flags (the launcher's defaults) plus host mapping: only the network differs
        live_env = WebEnv(EnvConfig(browser=BrowserOptions(extra_args=[f"--host-resolver-rules={rules_flag}"])),
                          backends={"live-bench": LiveBackend()})
        live_times = []
        task = Task(id="live", start_url=start_url, instruction="", source=TaskSource(kind="live-bench"))
        for i in range(repeats):
            t = time.perf_counter()
            await live_env.reset(task, seed=SEED)
            live_times.append(time.perf_counter() - t)
        await live_env.close()
    with Store.open_dir(rec) as store:
        for ruleset in infer_rules(store).values():
            save_rules(ruleset, rules)
        reference_run = store.runs()[0].id
        export_har(rec, work / "rec.har", keep_secrets=True)
        _mitm_flows(store, work / "rec.flows")
    reference = load_screens(screens_dir(rec, reference_run))
    desk = reference[-1]
    listeners = [Listener(p) for p in ports.values()]
    try:
        # ---- ours
        backend = CacheBackend([rec], [rules], log_misses=False)
        env = make_env({"cache": backend})
        source = TaskSource(kind="cache", recording=str(rec))
        ours_times = []
        for i in range(repeats):
            t = time.perf_counter()
            await env.reset(Task(id="t", start_url=start_url, instruction="", source=source), seed=SEED)
            ours_times.append(time.perf_counter() - t)
        await env.close_episode()
        before = dict(backend.stats.tiers)
        result = await play(env, start_url, SEARCH_ACTIONS, SEED, source=source)
        tiers = {k: v - before.get(k, 0) for k, v in backend.stats.tiers.items()}
        sofa = await play(env, start_url, SOFA, SEED, source=source)
        await env.close()
        await backend.stop()
        requests = sum(tiers.values())
        out["ours"] = {"requests": requests, "served": requests - tiers["miss"], "tiers": tiers,
                       "screens_identical": _identical(reference, result.screenshots),
                       "wrong_content": int(_shows_desk_results(sofa.screenshots[-1], desk)),
                       "page_load_s": statistics.median(ours_times),
                       "outbound_connections": sum(listener.accepted for listener in listeners)}

        # ---- Playwright routeFromHAR (exact URL + method (+ body) matching; unmatched aborted)
        host = BrowserHost()
        finished, failed = [0], [0]

        async def har_browse(actions: list[dict]) -> list[bytes]:
            context = await host.new_context(SEED, None, None, True)
            await context.route_from_har(str(work / "rec.har"), not_found="abort")
            context.on("requestfinished", lambda r: finished.__setitem__(0, finished[0] + 1))
            context.on("requestfailed", lambda r: failed.__setitem__(0, failed[0] + 1))
            try:
                return await _browse_context(host, context, start_url, actions)
            finally:
                await context.close()

        har_times = []
        for i in range(repeats):
            context = await host.new_context(SEED, None, None, True)
            await context.route_from_har(str(work / "rec.har"), not_found="abort")
            t = time.perf_counter()
            await _browse_context(host, context, start_url, [])
            har_times.append(time.perf_counter() - t)
            await context.close()
        finished[0] = failed[0] = 0
        har_shots = await har_browse(SEARCH_ACTIONS)
        har_counts = (finished[0], failed[0])
        har_sofa = await har_browse(SOFA)
        await host.close()
        out["playwright_routeFromHAR"] = {
            "outbound_connections": sum(listener.accepted for listener in listeners) - out["ours"]["outbound_connections"],
            "requests": sum(har_counts), "served": har_counts[0],
            "screens_identical": _identical(reference, har_shots),
            "wrong_content": int(_shows_desk_results(har_sofa[-1], desk)),
            "page_load_s": statistics.median(har_times)}

        # ---- mitmproxy server replay, default options (unmatched requests are forwarded upstream; each
        # recorded response is served once). A fresh proxy per browse, so every browse sees all flows.
        resolve = parse_resolve([s for s in site.resolve])
        accepted_before = sum(listener.accepted for listener in listeners)

        async def mitm_browse(actions: list[dict] | None) -> tuple[Any, ReplayCounter, float]:
            counter = ReplayCounter()
            with ProxyServer([HostMapper(resolve), counter],
                             options={"server_replay": [str(work / "rec.flows")]}) as proxy:
                class Via:
                    async def begin(self, task: Any, episode_id: str, seed: int) -> NetworkConfig:
                        return NetworkConfig(proxy=proxy.url, ignore_https_errors=True)

                    async def state(self, *a: Any) -> None:
                        return None

                    async def end(self, *a: Any) -> None:
                        return None

                env = make_env({"mitm": Via()})
                msrc = TaskSource(kind="mitm")
                try:
                    t = time.perf_counter()
                    if actions is None:
                        await env.reset(Task(id="m", start_url=start_url, instruction="", source=msrc), seed=SEED)
                        return None, counter, time.perf_counter() - t
                    return await play(env, start_url, actions, SEED, source=msrc), counter, 0.0
                finally:
                    await env.close()

        mitm, counter, _ = await mitm_browse(SEARCH_ACTIONS)
        mitm_outbound = sum(listener.accepted for listener in listeners) - accepted_before
        mitm_sofa, _, _ = await mitm_browse(SOFA)
        mitm_times = [(await mitm_browse(None))[2] for _ in range(repeats)]
        out["mitmproxy_server_replay"] = {
            "requests": counter.requests, "served": counter.served,
            "screens_identical": _identical(reference, mitm.screenshots),
            "wrong_content": int(_shows_desk_results(mitm_sofa.screenshots[-1], desk)),
            "outbound_connections": mitm_outbound,
            "page_load_s": statistics.median(mitm_times)}
    finally:
        for listener in listeners:
            listener.close()
    out["live"] = {"page_load_s": statistics.median(live_times)}
    for name in ("ours", "playwright_routeFromHAR", "mitmproxy_server_replay"):
        row = out[name]
        row["served_pct"] = round(100 * row["served"] / max(row["requests"], 1), 1)
        row["page_load_vs_live"] = round(row["page_load_s"] / out["live"]["page_load_s"], 2)
    return out


async def news_probes() -> dict[str, Any]:
    """Wrong-content serves on the unrecorded-slug and unrecorded-query probes, ours with and without rules."""
    work = Path(tempfile.mkdtemp(prefix="weblica-bench-news-"))
    rec, rules = work / "rec", work / "rules"
    with NewsSite() as site:
        port, start = site.port, site.url("/")
        await record(start, NEWS_ACTIONS, rec, runs=2, resolve=site.resolve)
    with Store.open_dir(rec) as store:
        for ruleset in infer_rules(store).values():
            save_rules(ruleset, rules)
        reference = load_screens(screens_dir(rec, store.runs()[0].id))
    origin = f"https://www.news.test:{port}"
    probe_urls = [f"{origin}/nyheter/election-results-2024-live-updates/", f"{origin}/search?q=sofa"]
    probe = [{"name": "goto_url", "arguments": {"url": probe_urls[0]}},
             {"name": "goto_url", "arguments": {"url": f"{origin}/nyheter/{RECORDED_ARTICLE}/"}},
             *NEWS_ACTIONS[1:3], {"name": "write", "arguments": {"text": "sofa"}}, NEWS_ACTIONS[3]]
    out: dict[str, Any] = {}
    listener = Listener(port)
    try:
        for name, rules_dirs in (("ours_inferred_rules", [rules]), ("ours_no_rules", [])):
            backend = CacheBackend([rec], rules_dirs, log_misses=False)
            env = make_env({"cache": backend})
            source = TaskSource(kind="cache", recording=str(rec))
            browse = await play(env, start, NEWS_ACTIONS, SEED, source=source)
            browse_tiers = dict(backend.stats.tiers)
            await play(env, start, probe, SEED, source=source)
            await env.close()
            await backend.stop()
            missed = {m["url"] for m in backend.stats.misses}
            out[name] = {"probes": len(probe_urls), "wrong_content": sum(u not in missed for u in probe_urls),
                         "browse_misses": browse_tiers["miss"], "browse_tiers": browse_tiers,
                         "screens_identical": _identical(reference, browse.screenshots)}
    finally:
        listener.close()
    out["outbound_connections"] = listener.accepted
    return out


class LinkClicker:
    """Another policy for coverage: seeded clicks where the news pages put their links (the main column),
    a go_back now and then, done after `steps` steps. The random policy's clicks land anywhere on the
    1280x720 viewport, so on these pages it rarely leaves the first one."""

    name = "link-clicker"

    def __init__(self, seed: int, steps: int = 8):
        import random

        self.seed, self.steps, self.rng = seed, steps, random.Random(seed)

    def reset(self, task: Any, seed: int) -> None:
        import hashlib
        import random

        self.rng = random.Random(int.from_bytes(hashlib.sha256(f"{task.id}:{seed}:{self.seed}".encode()).digest()[:8],
                                                "big"))

    async def act(self, obs: Any, task: Any, history: list[Any]) -> Any:
        from weblica.env.actions import Action
        from weblica.policy.base import PolicyOutput, render_tool_calls

        if len(history) >= self.steps:
            action = Action("done", {"answer": ""})
        elif self.rng.random() < 0.2:
            action = Action("go_back", {})
        else:
            action = Action("click", {"x": float(self.rng.randrange(40, 200)), "y": float(self.rng.randrange(195, 275)),
                                      "button": "left", "clicks": 1})
        return PolicyOutput(text=render_tool_calls([action], "Exploring."), actions=[action])


def coverage(seeds: tuple[int, ...] = (1, 2, 3), max_steps: int = 10) -> dict[str, Any]:
    """Coverage: the share of requests served when another policy plays in a cached environment.

    The news site's three oracle tasks (tests/cache/test_cache_build.py) are built into cache tasks by
    `weblica cache build` (oracle, 2 runs) without crawl expansion and with --crawl-depth 1; then the
    random policy, a link clicker (seeded clicks on the pages' link column) and the oracle at other
    seeds play the kept tasks (up to `max_steps` steps) with the site gone; every request is counted
    by tier."""
    from test_cache_build import live_tasks

    from weblica.cache.build import BuildOptions
    from weblica.pipelines.cache_build import build_cache
    from weblica.env.task import Task, load_tasks
    from weblica.policy.factory import make_policy_factory
    from weblica.rollout import run_tasks

    work = Path(tempfile.mkdtemp(prefix="weblica-bench-coverage-"))
    built: dict[int, dict[str, Any]] = {}
    with NewsSite() as site:
        tasks = [Task.from_dict(t) for t in live_tasks(site)]
        for depth in (0, 1):
            started = time.monotonic()
            built[depth] = build_cache(tasks, BuildOptions(policy="oracle", runs=2, crawl_depth=depth,
                                                           resolve=tuple(site.resolve)), work / f"cache-depth{depth}")
            built[depth]["seconds"] = round(time.monotonic() - started, 1)
        port = site.port
    out: dict[str, Any] = {"seeds": list(seeds), "max_steps": max_steps}
    listener = Listener(port)
    try:
        for depth, report in built.items():
            kept = load_tasks(report["tasks_file"])
            for task in kept:
                task.max_steps = max_steps
            row: dict[str, Any] = {"kept": len(kept), "build_seconds": report["seconds"],
                                   "crawled": sum(r["crawled"] for r in report["kept"])}
            for policy in ("random", "link-clicker", "oracle"):
                tiers: dict[str, int] = {}
                solved = episodes = 0
                for seed in seeds:
                    backend = CacheBackend([t.source.recording for t in kept], [], log_misses=False)
                    try:
                        factory = ((lambda s=seed: LinkClicker(s)) if policy == "link-clicker"
                                   else make_policy_factory(policy, seed))
                        trajectories, _ = asyncio.run(run_tasks(kept, factory, None, seed=seed,
                                                                backends={"cache": backend}))
                    finally:
                        asyncio.run(backend.stop())
                    for tier, n in backend.stats.tiers.items():
                        tiers[tier] = tiers.get(tier, 0) + n
                    solved += sum(t.success for t in trajectories)
                    episodes += len(trajectories)
                requests = sum(tiers.values())
                served = requests - tiers.get("miss", 0)
                row[policy] = {"requests": requests, "served": served, "tiers": tiers,
                               "served_pct": round(100 * served / max(requests, 1), 1),
                               "solved": f"{solved}/{episodes}"}
            out[f"crawl_depth_{depth}"] = row
    finally:
        listener.close()
    out["outbound_connections"] = listener.accepted
    return out


def print_coverage(cov: dict[str, Any]) -> None:
    print(f"\ncoverage: requests served when another policy plays the cached news tasks "
          f"(seeds {cov['seeds']}, up to {cov['max_steps']} steps; outbound {cov['outbound_connections']})")
    print(f"{'cache':16} {'kept':>4} {'crawled':>7}  {'random':>18}  {'link clicker':>18}  {'oracle, other seeds':>20}")
    for depth in (0, 1):
        r = cov[f"crawl_depth_{depth}"]
        cells = "  ".join(f"{r[p]['served']:>5}/{r[p]['requests']:<4} {r[p]['served_pct']:>5}%"
                          for p in ("random", "link-clicker", "oracle"))
        print(f"{'crawl depth ' + str(depth):16} {r['kept']:>4} {r['crawled']:>7}  {cells}  "
              f"solved {r['oracle']['solved']}")


async def repeat_rate(rounds: int = 10) -> dict[str, Any]:
    """Issue 20 point 4: the timing-batching loader (tests/cache_sites/loader.py) recorded twice with
    random server latency, replayed `rounds` times; same requests and screens in how many."""
    rec = Path(tempfile.mkdtemp(prefix="weblica-bench-loader-")) / "rec"
    with LoaderSite() as site:
        await record(site.url("/"), LOADER_ACTIONS, rec, runs=2, resolve=site.resolve)
    with Store.open_dir(rec, readonly=True) as store:
        reference = load_screens(screens_dir(rec, store.runs()[0].id))
    results = await replay_rounds(rec, rounds)
    first = results[0]
    return {"rounds": rounds, "same": sum(r == first for r in results),
            "as_recorded": sum(shots == reference for _, shots in results)}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--coverage-only", action="store_true", help="print only the coverage figures")
    parser.add_argument("--probes-only", action="store_true", help="print only the probes side by side")
    parser.add_argument("--heldout-only", action="store_true", help="print only the held-out-load recall")
    parser.add_argument("--real-only", action="store_true", help="print only held-out loads of public sites")
    parser.add_argument("--login-only", action="store_true", help="print only the logged-in crawl")
    args = parser.parse_args()
    for flag, make, show in ((args.real_only, real_heldout, print_real), (args.login_only, login_crawl, print_login)):
        if flag:
            fig = make()
            print(json.dumps(fig, indent=1, default=str))
            show(fig)
            sys.exit(0)
    if args.probes_only:
        fig = probe_figures()
        print(json.dumps(fig, indent=1, default=str))
        print_probe_figures(fig)
        sys.exit(0)
    if args.heldout_only:
        fig = asyncio.run(heldout_recall())
        print(json.dumps(fig, indent=1, default=str))
        print_heldout(fig)
        sys.exit(0)
    if args.coverage_only:
        cov = coverage()
        print(json.dumps(cov, indent=1, default=str))
        print_coverage(cov)
        sys.exit(0)
    result = asyncio.run(main(args.repeats))
    result["news_probes"] = asyncio.run(news_probes())
    result["repeat_rate"] = asyncio.run(repeat_rate())
    print(json.dumps(result, indent=1, default=str))
    print(f"{'approach':28} {'served':>14} {'wrong':>6} {'screens':>8} {'load s':>7} {'vs live':>8} {'outbound':>9}")
    for name in ("ours", "playwright_routeFromHAR", "mitmproxy_server_replay"):
        r = result[name]
        print(f"{name:28} {r['served']:>5}/{r['requests']:<4} {r['served_pct']:>4}% {r['wrong_content']:>5} "
              f"{r['screens_identical']:>8} {r['page_load_s']:>7.3f} {r['page_load_vs_live']:>8} "
              f"{r['outbound_connections']:>9}")
    print(f"{'live':28} {'':>14} {'':>6} {'':>8} {result['live']['page_load_s']:>7.3f}")
    print("\nnews probes (unrecorded slug, unrecorded query): wrong-content serves, goal 0")
    for name in ("ours_inferred_rules", "ours_no_rules"):
        r = result["news_probes"][name]
        print(f"{name:28} wrong {r['wrong_content']}/{r['probes']}   browse misses {r['browse_misses']:>2}   "
              f"screens {r['screens_identical']}")
    r = result["repeat_rate"]
    print(f"\nrepeat rate (timing-batching loader): same requests and screens in {r['same']} of {r['rounds']} "
          f"replays, screens as recorded in {r['as_recorded']} of {r['rounds']}")
    print_coverage(coverage())
    print_probe_figures(probe_figures())
    print_heldout(asyncio.run(heldout_recall()))
    print_real(real_heldout())
    print_login(login_crawl())
