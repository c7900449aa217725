"""The env server's task sources: confined to the served roots (a client cannot make it serve or open any
folder of its disk), one backend per bundle or recording in one process, and every request bounded in
time. Real Chromium, real site servers, a real mitmproxy replay, real SQLite recordings."""
from __future__ import annotations

import json
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from weblica.cache.interop import import_har
from weblica.env.server import EnvService, make_env_server
from weblica.env.source_roots import SourceRoots
from weblica.env.task import load_tasks
from weblica.synth.generate import write_unvalidated
from weblica.synth.spec import sample_spec


class Running:
    """An env server on a free loopback port over its own EnvService."""

    def __init__(self, roots: SourceRoots, **kwargs: Any) -> None:
        self.service = EnvService(max_sessions=4, roots=roots, **kwargs)
        self.server = make_env_server(self.service, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        self.client = httpx.Client(base_url=self.url, timeout=120)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def reset(self, task: dict[str, Any], **extra: Any) -> httpx.Response:
        return self.client.post("/reset", json={"task": task, "screenshot": False, **extra})

    def close(self) -> None:
        self.client.close()
        self.server.shutdown()
        self.server.server_close()
        self.service.shutdown()


def har_of(host: str, title: str) -> dict[str, Any]:
    page = f"<!doctype html><html><head><title>{title}</title></head><body><h1>{title}</h1></body></html>"
    entry = {"startedDateTime": "2026-01-01T00:00:00Z", "time": 5,
             "request": {"method": "GET", "url": f"http://{host}/", "headers": [{"name": "Accept", "value": "*/*"}]},
             "response": {"status": 200, "statusText": "OK",
                          "headers": [{"name": "Content-Type", "value": "text/html; charset=utf-8"}],
                          "content": {"size": len(page), "mimeType": "text/html", "text": page}}}
    return {"log": {"version": "1.2", "entries": [entry]}}


@pytest.fixture(scope="module")
def disk(tmp_path_factory):
    """Two synth bundles in a served folder, one bundle outside it, two recordings in a served folder and
    one outside, and symlinks from the served folders to the outside ones."""
    base = tmp_path_factory.mktemp("sources")
    sites, outside, recs = base / "sites", base / "outside", base / "recs"
    for folder in (sites, outside, recs):
        folder.mkdir()
    a = write_unvalidated(sample_spec(1, "forms", "travel", "corporate-clean"), sites)
    b = write_unvalidated(sample_spec(2, "search", "groceries", "corporate-clean"), sites)
    foreign = write_unvalidated(sample_spec(3, "forms", "banking", "corporate-clean"), outside)
    (sites / "escape").symlink_to(foreign, target_is_directory=True)
    (sites / "broken").mkdir()
    (sites / "broken" / "site.json").write_text("{}")  # a bundle whose spec is missing
    for name, host, title in (("rec-a", "alpha.rec.test", "Recording Alpha"),
                              ("rec-b", "beta.rec.test", "Recording Beta")):
        (base / f"{name}.har").write_text(json.dumps(har_of(host, title)))
        import_har(base / f"{name}.har", recs / name)
    (base / "rec-x.har").write_text(json.dumps(har_of("x.rec.test", "Recording X")))
    import_har(base / "rec-x.har", outside / "rec-x")
    (recs / "escape").symlink_to(outside / "rec-x", target_is_directory=True)
    return {"sites": sites, "recs": recs, "outside": outside, "a": a, "b": b, "foreign": foreign}


def first_task(bundle: Path) -> dict[str, Any]:
    """The bundle's first task as its file holds it: naming its bundle by site id (load_tasks would anchor
    it to the folder the file sits in)."""
    return json.loads((bundle / "tasks.jsonl").read_text(encoding="utf-8").splitlines()[0])


def cache_task(recording: str, host: str) -> dict[str, Any]:
    return {"id": f"c-{host}", "start_url": f"http://{host}/", "instruction": "Read the title.",
            "source": {"kind": "cache", "recording": recording}}


def assert_refused(response: httpx.Response, *words: str) -> None:
    assert response.status_code == 400, (response.status_code, response.text[:300])
    error = response.json()["error"]
    for word in words:
        assert word in error, error


def test_sources_outside_the_roots_are_refused(disk):
    running = Running(SourceRoots(sites=[disk["sites"]], recordings=[disk["recs"]]))
    try:
        synth = first_task(disk["a"])

        def with_source(**source: Any) -> dict[str, Any]:
            return dict(synth, source={"kind": "synth", "site": synth["source"]["site"], **source})

        # a real bundle at an absolute path outside --sites: served before roots existed
        assert_refused(running.reset(with_source(bundle=str(disk["foreign"]))), "outside", "--sites")
        for probe in ("/", "/etc", "/etc/passwd"):
            assert_refused(running.reset(with_source(bundle=probe)), "outside", "--sites")
        for probe in ("../outside/" + disk["foreign"].name, "a/../../outside", ".."):
            assert_refused(running.reset(with_source(bundle=probe)), "'..'", "--sites")
        assert_refused(running.reset(with_source(bundle="escape")), "through a symlink", "--sites")
        assert_refused(running.reset(with_source(bundle="no-such-site")), "no bundle 'no-such-site'", "--sites")
        assert_refused(running.reset(with_source(bundle="broken")), "its synth source cannot be opened")
        assert_refused(running.reset(dict(synth, source={"kind": "synth", "site": "../outside"})), "'..'")
        # recordings: an absolute path outside, a symlink out, a file that is not a recording, a SQLite file
        outside_rec = str(disk["outside"] / "rec-x")
        assert_refused(running.reset(cache_task(outside_rec, "x.rec.test")), "outside", "--recordings")
        assert_refused(running.reset(cache_task("escape", "x.rec.test")), "through a symlink", "--recordings")
        assert_refused(running.reset(cache_task(outside_rec + "/recording.sqlite", "x.rec.test")), "--recordings")
        assert_refused(running.reset(cache_task("/etc", "x.rec.test")), "outside", "--recordings")
        assert running.client.get("/health").json()["sessions"] == 0
        # the same task names its bundle by site id or by a path inside the root: served
        for source in ({"bundle": disk["a"].name}, {"bundle": str(disk["a"])}, {"bundle": "sites/" + disk["a"].name}, {}):
            r = running.reset(with_source(**source))
            assert r.status_code == 200, r.text[:300]
            running.client.post("/close", json={"session_id": r.json()["session_id"]})
    finally:
        running.close()


def test_no_recordings_served_unless_given():
    running = Running(SourceRoots(sites=[]))
    try:
        assert_refused(running.reset(cache_task("/tmp", "x.rec.test")), "serves no recordings",
                       "--recordings DIR")
        assert_refused(running.reset({"id": "s", "start_url": "http://x.synth.test/", "instruction": "i",
                                      "source": {"kind": "synth", "site": "x"}}), "serves no bundles", "--sites DIR")
    finally:
        running.close()


def test_two_bundles_and_two_recordings_in_one_server(disk):
    running = Running(SourceRoots(sites=[disk["sites"]], recordings=[disk["recs"]]))
    try:
        tasks = [first_task(disk["a"]), first_task(disk["b"])]
        sids = []
        for task in tasks:
            r = running.reset(task)
            assert r.status_code == 200, r.text[:300]
            obs = r.json()["observation"]
            assert obs["url"].startswith(task["start_url"].split("/")[0] + "//" + task["start_url"].split("/")[2])
            assert obs["tabs"][0]["title"] != "Not a synth site", obs  # its own site, not the gateway's refusal
            sids.append(r.json()["session_id"])
        titles = [running.client.post("/step", json={"session_id": sid, "screenshot": False, "action": {
            "name": "wait", "arguments": {"seconds": 0}}}).json()["observation"]["tabs"][0]["title"] for sid in sids]
        assert titles[0] != titles[1] and "Not a synth site" not in titles
        # a cache task after a synth task on the same session, and a second recording on another
        r = running.reset(cache_task("rec-a", "alpha.rec.test"), session_id=sids[0])
        assert r.status_code == 200 and r.json()["observation"]["tabs"][0]["title"] == "Recording Alpha", r.text[:300]
        r = running.reset(cache_task(str(disk["recs"] / "rec-b"), "beta.rec.test"), session_id=sids[1])
        assert r.status_code == 200 and r.json()["observation"]["tabs"][0]["title"] == "Recording Beta", r.text[:300]
        # and back to the first bundle: its server was kept
        r = running.reset(tasks[0], session_id=sids[1])
        assert r.status_code == 200 and r.json()["observation"]["tabs"][0]["title"] == titles[0]
        synth = running.service.backends["synth"]
        assert len(synth.by_source) == 2  # one site server per bundle, started once each
    finally:
        running.close()
    assert not synth.by_source  # stopped with the service


def test_a_webenv_serves_several_bundles_and_stops_them(disk, monkeypatch):
    import asyncio

    from weblica.env.sources import SourceUnavailable

    from weblica.env.browser_env import WebEnv
    from weblica.env.task import Task

    async def episode() -> tuple[list[str], Any]:
        env = WebEnv()
        titles = []
        try:
            with pytest.raises(SourceUnavailable, match="set WEBLICA_SITES"):  # at once, not after 3 tries
                await env.reset(Task.from_dict(first_task(disk["a"])))
            monkeypatch.setenv("WEBLICA_SITES", str(disk["sites"]))
            for bundle in (disk["a"], disk["b"]):
                obs = await env.reset(Task.from_dict(first_task(bundle)))
                titles.append(obs.tabs[0].title)
            servers = [b.server for b in env.backends["synth"].by_source.values()]
        finally:
            await env.close()
        return titles, servers

    titles, servers = asyncio.run(episode())
    assert len(set(titles)) == 2 and "Not a synth site" not in titles
    assert len(servers) == 2
    for server in servers:  # closed with the env: nothing listens any more
        with pytest.raises(httpx.HTTPError):
            httpx.get(server.url, timeout=2)


def test_requests_past_the_time_limit_answer_504_and_close_the_session(site):
    running = Running(SourceRoots(sites=[]))
    try:  # Chromium starts on the first reset: start it before the limit is made short
        r = running.reset({"id": "warm", "start_url": site.url + "/", "instruction": "Look."})
        running.client.post("/close", json={"session_id": r.json()["session_id"]})
        running.service.request_timeout_s = 2
        hang = {"id": "slow", "start_url": site.url + "/hang?s=120", "instruction": "Wait."}
        started = time.monotonic()
        r = running.reset(hang)
        assert r.status_code == 504 and "--request-timeout" in r.json()["error"], r.text[:300]
        assert time.monotonic() - started < 60   # the 2 s limit, not the 120 s hang (load adds seconds)
        assert running.client.get("/health").json()["sessions"] == 0
        r = running.reset({"id": "ok", "start_url": site.url + "/", "instruction": "Look."})
        assert r.status_code == 200
        sid = r.json()["session_id"]
        started = time.monotonic()
        r = running.client.post("/step", json={"session_id": sid, "screenshot": False, "action": {
            "name": "goto_url", "arguments": {"url": site.url + "/hang?s=120"}}})
        assert r.status_code == 504 and sid in r.json()["error"], r.text[:300]
        assert time.monotonic() - started < 60   # the 2 s limit, not the 120 s hang (load adds seconds)
        r = running.client.post("/step", json={"session_id": sid, "action": "x"})
        assert r.status_code == 404 and "request time limit" in r.json()["error"]
        assert running.client.get("/health").json()["sessions"] == 0
        r = running.reset({"id": "ok", "start_url": site.url + "/", "instruction": "Look."})  # still serving
        assert r.status_code == 200
    finally:
        running.close()


def test_roots_resolve_symlinked_roots_and_refuse_nul(tmp_path, disk):
    link = tmp_path / "linked-sites"
    link.symlink_to(disk["sites"], target_is_directory=True)
    roots = SourceRoots(sites=[link])
    task = load_tasks(disk["a"] / "tasks.jsonl")[0]
    assert roots.confine(task).source.bundle == str(disk["a"].resolve())
    copy = tmp_path / "copy"
    shutil.copytree(disk["a"], copy)
    roots = SourceRoots(sites=[copy])  # a root that is one bundle answers to its own name
    from dataclasses import replace
    assert roots.confine(replace(task, source=replace(task.source, bundle="copy"))).source.bundle == str(copy.resolve())
    with pytest.raises(ValueError, match="NUL"):
        roots.confine(replace(task, source=replace(task.source, bundle="a\x00b")))


def test_cli_serves_only_the_folders_it_is_given(disk, tmp_path):
    import signal
    import subprocess
    import sys

    base = [sys.executable, "-m", "weblica.cli", "env-server", "--port", "0", "--json"]
    proc = subprocess.run(base + ["--sites", str(tmp_path / "nope")], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "nope" in json.loads(proc.stdout)["error"]
    def sigint_ignored_and_blocked() -> None:  # as a background job or some test runners' workers start it
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    server = subprocess.Popen(base + ["--sites", str(disk["sites"]), "--recordings", str(disk["recs"]),
                                      "--request-timeout", "30"], stdout=subprocess.PIPE, text=True,
                              preexec_fn=sigint_ignored_and_blocked)
    try:
        summary = json.loads(server.stdout.readline())
        assert summary["sites"] == [str(disk["sites"].resolve())] and summary["request_timeout_s"] == 30
        task = first_task(disk["a"])
        outside = dict(task, source=dict(task["source"], bundle=str(disk["foreign"])))
        r = httpx.post(summary["url"] + "/reset", json={"task": outside}, timeout=60)
        assert_refused(r, "outside", "--sites")
        r = httpx.post(summary["url"] + "/reset", json={"task": cache_task("rec-b", "beta.rec.test"),
                                                         "screenshot": False}, timeout=60)
        assert r.status_code == 200 and r.json()["observation"]["tabs"][0]["title"] == "Recording Beta", r.text[:300]
    finally:  # Ctrl-C, whatever the server inherited: it closes its sessions, site servers, replay proxy and Chromium
        server.send_signal(signal.SIGINT)
        assert server.wait(timeout=60) == 0
