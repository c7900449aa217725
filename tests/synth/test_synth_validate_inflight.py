"""Validation waits on the site server's own count of an episode's requests (weblica/serve/inflight.py)
and on the page's loading frames (weblica.synth.page_session), not on Playwright's request events.
Real site server (Werkzeug, as validation runs it), real Chromium: a request the page sends past the
site runtime's `busy` count (a raw fetch, a script's own navigation) to an endpoint that answers late
must still hold `settle` until it is answered, and a request of another episode or without one must
not count."""
from __future__ import annotations

import asyncio
import http.client
import json
import threading
import time
from pathlib import Path
from typing import Any

from flask import Response

from weblica.env.backend import EPISODE_HEADER
from weblica.env.task import Task, TaskSource
from weblica.serve.server import SiteServer
from weblica.synth.checks import answer_text

SITE = "inflight"
HOST = f"{SITE}.synth.test"


def _bundle(root: Path) -> Path:
    bundle = root / SITE
    (bundle / "public").mkdir(parents=True)
    (bundle / "public" / "index.html").write_text("<!doctype html><title>start</title><p>start</p>")
    (bundle / "site.json").write_text(json.dumps({"spec": {"site_id": SITE, "host": HOST}, "initial_state": {}}))
    return bundle


class _Late:
    """Endpoints that answer only once released: /late (text), /late-page (a document), /broken (raises)."""

    def __init__(self, server: SiteServer) -> None:
        self.release = threading.Event()
        self.answered_at: list[float] = []
        server.app.add_url_rule("/late", "late", self._late)
        server.app.add_url_rule("/late-page", "late_page", self._late_page)
        server.app.add_url_rule("/broken", "broken", self._broken)

    def _wait(self) -> None:
        assert self.release.wait(20), "the test never released the late answer"
        self.answered_at.append(time.monotonic())

    def _late(self) -> Response:
        self._wait()
        return Response("answered", mimetype="text/plain")

    def _late_page(self) -> Response:
        self._wait()
        return Response("<!doctype html><title>late</title><p id=late>late page</p>", mimetype="text/html")

    def _broken(self) -> Response:
        raise RuntimeError("a failing view")


def _get(server: SiteServer, path: str, episode: str | None) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    headers = {"Host": HOST, **({EPISODE_HEADER: episode} if episode else {})}
    connection.request("GET", f"http://{HOST}{path}", headers=headers)
    status = connection.getresponse().status
    connection.close()
    return status


def _until(predicate: Any, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return False


def test_the_server_counts_an_episodes_requests_until_they_are_answered(tmp_path: Path) -> None:
    server = SiteServer([_bundle(tmp_path)])
    late = _Late(server)
    with server:
        threads = [threading.Thread(target=_get, args=(server, "/late", "ep-a")) for _ in range(2)]
        threads.append(threading.Thread(target=_get, args=(server, "/late", None)))
        for thread in threads:
            thread.start()
        assert _until(lambda: server.inflight("ep-a") == 2)
        assert server.inflight("ep-b") == 0
        assert server.inflight("") == 0
        late.release.set()
        for thread in threads:
            thread.join(20)
        assert _until(lambda: server.inflight("ep-a") == 0)
        assert len(late.answered_at) == 3
        # a view that raises is answered with a 500 and stops counting (once the server closed the answer)
        assert _get(server, "/broken", "ep-a") == 500
        assert _until(lambda: server.inflight("ep-a") == 0)
        # a client that hangs up without reading the answer (Werkzeug then skips close()) stops counting too
        assert _get(server, "/", "ep-a") == 200 and _until(lambda: server.inflight("ep-a") == 0)


def _settle_after(script: str, tmp_path: Path) -> dict[str, Any]:
    """Run `script` in a validation episode's start page (not awaited, past the site runtime), settle
    as validation does, and say what the page shows then; the late answer is released 0.6 s after."""
    from playwright.async_api import async_playwright

    from weblica.browser.launcher import launch_browser
    from weblica.synth.playback import settle
    from weblica.synth.validate import Validator

    task = Task(id=f"{SITE}-t01", start_url=f"http://{HOST}/", instruction="What does it say?",
                checks=[answer_text("start")], source=TaskSource(kind="synth", site=SITE))
    server = SiteServer([_bundle(tmp_path)])
    late = _Late(server)

    async def body(page: Any, tracker: Any, errors: list[str]) -> dict[str, Any]:
        await page.evaluate(script)
        started = time.monotonic()
        threading.Timer(0.6, late.release.set).start()
        await settle(page, tracker, timeout=15.0)
        settled = time.monotonic()
        shown = await page.evaluate("() => ({url: location.pathname, ready: document.readyState,"
                                    " got: document.body.dataset.got || null, late: !!document.getElementById('late')})")
        return {**shown, "waited": settled - started, "answered": late.answered_at[0] - started if late.answered_at else None}

    async def main() -> dict[str, Any]:
        with server:
            async with async_playwright() as pw:
                browser = await launch_browser(pw)
                validator = Validator(browser, server, concurrency=1)
                try:
                    return await validator._episode(task, "validate-inflight", body)
                finally:
                    await validator.close()
                    await browser.close()
    return asyncio.run(main())


def test_settle_waits_for_a_raw_fetch_the_site_runtime_does_not_count(tmp_path: Path) -> None:
    shown = _settle_after("() => { fetch('/late').then((r) => r.text()).then((t) => { document.body.dataset.got = t; }); }",
                          tmp_path)
    assert shown["answered"] is not None and shown["waited"] >= shown["answered"]
    assert shown["got"] == "answered", shown


def test_settle_waits_for_a_navigation_a_script_starts(tmp_path: Path) -> None:
    shown = _settle_after("() => { location.href = '/late-page'; }", tmp_path)
    assert shown["answered"] is not None and shown["waited"] >= shown["answered"]
    assert shown["url"] == "/late-page" and shown["ready"] == "complete" and shown["late"], shown
