"""Record browses of a site through the recording proxy: K runs of the same actions, one seed each.

Runs use different seeds on purpose: a page's own randomness (nonces from Math.random, random ids)
then differs between runs as it does on the live web, so inference sees which values are volatile.
"""
from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from weblica.browser.navigation import NavigationPolicy, with_endpoints
from weblica.cache.addons import EpisodeHeader, HostMapper, Recorder, parse_resolve
from weblica.cache.egress import EgressGuard
from weblica.cache.play import PROXY_SOURCE, ProxyBackend, make_env, play, save_screens
from weblica.cache.proxy import ProxyServer
from weblica.cache.store import Store, save_actions, screens_dir
from weblica.progress import OptionalBar


@dataclass
class RecordSummary:
    recording: str
    runs: int
    exchanges: int
    errors: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {"recording": self.recording, "runs": self.runs, "exchanges": self.exchanges, "errors": self.errors}


def recording_policy(url: str, resolve: dict[tuple[str, int], tuple[str, int | None]],
                     allow_private: bool = False) -> NavigationPolicy:
    """What a recorded browse may reach: the live web, the start URL's server and the --resolve
    targets; other loopback, link-local and private addresses only with `allow_private`."""
    targets = [(addr.lower(), target_port or port) for (_host, port), (addr, target_port) in resolve.items()]
    return with_endpoints(NavigationPolicy("live", allow_private=allow_private, proxy_checks_addresses=True),
                          [url], targets)


async def record(url: str, actions: list[dict[str, Any]], out: str | Path, runs: int = 2,
                 resolve: list[str] | tuple[str, ...] = (), name: str | None = None,
                 first_seed: int = 1, allow_private: bool = False, progress: bool = False) -> RecordSummary:
    """Record `runs` browses (seeds first_seed, first_seed+1, …) into the recording directory `out`; with
    `progress`, a bar of the steps played on stderr."""
    out = Path(out)
    mapping = parse_resolve(list(resolve))  # a bad --resolve fails before anything is written
    host_mapper = HostMapper(mapping)
    policy = recording_policy(url, mapping, allow_private)
    policy.check(url)
    egress = EgressGuard(policy)
    store = Store.open_dir(out, create=True)
    save_actions(out, actions, url)
    recorder = Recorder(store, run_id=0)
    errors: list[str] = []
    steps = len(actions) + 1   # the start page, then one step per action
    try:
        with ProxyServer([EpisodeHeader(), host_mapper, egress, recorder]) as proxy, \
                OptionalBar(runs * steps, f"record: run 1/{runs}", progress) as bar:
            env = make_env({PROXY_SOURCE: ProxyBackend(proxy.url, policy)})
            try:
                for k in range(runs):
                    seed = first_seed + k
                    bar.relabel(f"record: run {k + 1}/{runs}")
                    run_id = store.new_run("record", seed=seed, start_url=url,
                                           info={"name": name or out.name, "resolve": list(resolve)}, in_progress=True)
                    recorder.begin_run(run_id)
                    result = await play(env, url, actions, seed, on_step=bar.advance)
                    for _ in range(steps - len(result.screenshots)):   # a run cut short: its steps count as done
                        bar.advance()
                    save_screens(screens_dir(out, run_id), result.screenshots)
                    if result.error:
                        errors.append(f"run {run_id}: {result.error}")
                    store.finish_run(run_id, {"name": name or out.name, "resolve": list(resolve),
                                              "steps": len(result.screenshots) - 1, "urls": result.urls,
                                              "error": result.error})
            finally:
                await env.close()
        return RecordSummary(str(out), runs, store.count_exchanges(), errors + recorder.failures + egress.refused)
    finally:
        store.close()


async def record_interactive(url: str, out: str | Path, resolve: list[str] | tuple[str, ...] = (),
                             name: str | None = None, allow_private: bool = False) -> RecordSummary:
    """One run browsed by a person in a headed Chromium; the run ends when the browser window closes.
    Needs a display; no screenshots are kept (there are no actions to replay them against)."""
    from playwright.async_api import async_playwright

    from weblica.browser.launcher import BrowserOptions, context_kwargs, launch_browser

    out = Path(out)
    mapping = parse_resolve(list(resolve))
    egress = EgressGuard(recording_policy(url, mapping, allow_private))
    egress.policy.check(url)
    store = Store.open_dir(out, create=True)
    save_actions(out, [], url)
    run_id = store.new_run("record", seed=0, start_url=url, info={"name": name or out.name, "interactive": True},
                           in_progress=True)
    recorder = Recorder(store, run_id)
    try:
        with ProxyServer([EpisodeHeader(), HostMapper(mapping), egress, recorder]) as proxy:
            async with async_playwright() as playwright:
                browser = await launch_browser(playwright, BrowserOptions(headless=False))
                context = await browser.new_context(**context_kwargs(proxy.url, ignore_https_errors=True,
                                                                        service_workers=True))
                page = await context.new_page()
                await page.goto(url)
                closed = asyncio.Event()
                browser.on("disconnected", lambda _: closed.set())
                context.on("close", lambda _: closed.set())
                await closed.wait()
        store.finish_run(run_id)
        return RecordSummary(str(out), 1, store.count_exchanges(), recorder.failures + egress.refused)
    finally:
        store.close()
