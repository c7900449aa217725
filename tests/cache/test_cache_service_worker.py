"""Service workers run under recording and replay: a PWA whose worker caches its shell and serves the
second load from that cache, recorded twice through the real recorder with real Chromium, replayed
with the network cut. The worker's own fetches are recorded and served from the recording, and the
second load is the worker's, as live."""
import asyncio
import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parents[1]))

from cache_sites.pwa import PwaSite, pwa_actions  # noqa: E402
from listener import Listener  # noqa: E402

from weblica.browser.launcher import context_kwargs  # noqa: E402
from weblica.cache.backend import CacheBackend  # noqa: E402
from weblica.cache.play import make_env  # noqa: E402
from weblica.cache.store import Store  # noqa: E402
from weblica.env.task import Task, TaskSource  # noqa: E402
from weblica.cli import get_cli  # noqa: E402


def invoke(*args: str) -> dict:
    result = CliRunner().invoke(get_cli(), [*args, "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.output.strip().splitlines()[-1])


def test_workers_are_blocked_unless_asked_for():
    assert context_kwargs()["service_workers"] == "block"    # synth and live contexts
    assert context_kwargs(service_workers=True)["service_workers"] == "allow"


@pytest.fixture(scope="module")
def pwa(tmp_path_factory):
    base = tmp_path_factory.mktemp("pwa")
    actions, rec = base / "actions.json", base / "rec"
    with PwaSite() as site:
        actions.write_text(json.dumps(pwa_actions(site.url("/"))))
        args = ["record", site.url("/"), "--actions", str(actions), "--runs", "2", "--out", str(rec)]
        for spec in site.resolve:
            args += ["--resolve", spec]
        summary = invoke(*args)
        port, url = site.port, site.url
    return {"rec": rec, "port": port, "url": url, "summary": summary}


def _dest(ex):
    return next((v for k, v in ex.request_headers if k.lower() == "sec-fetch-dest"), "")


def test_the_workers_own_fetches_are_recorded_and_the_second_load_is_its(pwa):
    assert not pwa["summary"]["errors"]
    with Store.open_dir(pwa["rec"], readonly=True) as store:
        for run in store.runs():
            exchanges = store.exchanges([run.id])
            paths = [(e.view.path, _dest(e)) for e in exchanges]
            # the worker cached its shell with its own requests; the page was loaded as a document once
            assert {("/", "empty"), ("/app.css", "empty"), ("/shell.js", "empty")} <= set(paths), paths
            assert paths.count(("/", "document")) == 1, paths


def test_replay_with_the_network_cut_runs_the_worker_from_the_recording(pwa):
    async def titles():
        backend = CacheBackend([pwa["rec"]], [], log_misses=False)
        env = make_env({"cache": backend})
        try:
            task = Task(id="pwa", start_url=pwa["url"]("/"), instruction="",
                        source=TaskSource(kind="cache", recording=str(pwa["rec"])))
            first = await env.reset(task, seed=5)
            out = [first.tabs[first.active_tab].title]
            for action in pwa_actions(pwa["url"]("/")):
                obs, *_ = await env.step([action])
                out.append(obs.tabs[obs.active_tab].title)
        finally:
            await env.close()
            await backend.stop()
        return out, backend.stats

    listener = Listener(pwa["port"])
    try:
        report = invoke("replay", str(pwa["rec"]), "--check", "--seed", "5")
        shown, stats = asyncio.run(titles())
    finally:
        listener.close()
    assert listener.accepted == 0 and report["outbound_connections"] == 0
    assert report["tiers"]["miss"] == 0, report["misses"]
    assert report["screens_identical"] == "3/3"
    with Store.open_dir(pwa["rec"], readonly=True) as store:
        headlines = [json.loads(store.bodies.get(e.response_body_digest))["headline"]
                     for e in store.exchanges([store.runs()[0].id]) if e.view.path == "/api/news"]
    assert shown[0] == f"network|{headlines[0]}"
    assert shown[2] == f"worker|{headlines[1]}"     # the second load came from the worker's cache
    assert stats.tiers["miss"] == 0



def test_the_worker_is_replayed_when_one_proxy_serves_several_recordings(pwa, tmp_path):
    """`weblica run` serves every cache task of a run from one proxy; the worker's script fetch carries no
    episode header, so it is told apart by its origin (only the PWA's recording holds it)."""
    from weblica.cache.exchange import Exchange

    other = tmp_path / "other"
    with Store.open_dir(other, create=True) as store:
        run = store.new_run("record", start_url="https://www.other.test/")
        store.add_exchange(Exchange(method="GET", url="https://www.other.test/", request_headers=[], status=200,
                                    reason="OK", response_headers=[("Content-Type", "text/html")], started=1.0,
                                    ended=1.1, seq=0, run_id=run), None, b"<title>other</title>")

    async def titles():
        backend = CacheBackend([pwa["rec"], other], [], log_misses=False)
        env = make_env({"cache": backend})
        try:
            task = Task(id="pwa", start_url=pwa["url"]("/"), instruction="",
                        source=TaskSource(kind="cache", recording=str(pwa["rec"])))
            first = await env.reset(task, seed=5)
            out = [first.tabs[first.active_tab].title]
            for action in pwa_actions(pwa["url"]("/")):
                obs, *_ = await env.step([action])
                out.append(obs.tabs[obs.active_tab].title)
        finally:
            await env.close()
            await backend.stop()
        return out, backend.stats

    listener = Listener(pwa["port"])
    try:
        shown, stats = asyncio.run(titles())
    finally:
        listener.close()
    assert listener.accepted == 0
    assert stats.tiers["miss"] == 0, stats.misses
    assert shown[2].startswith("worker|"), shown
