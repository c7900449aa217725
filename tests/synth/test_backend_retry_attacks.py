"""Attacks on the synth backend's retries (weblica/serve/backend.py) with real HTTP servers on loopback:
only the idempotent admin calls (reset, state read) are sent again; any other request, and any answer
with an error status, is sent once; a server that never answers, stalls past the timeout or is not
there fails the call with one clear error after ATTEMPTS tries, naming the server and the call."""
from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from weblica.env.task import Task
from weblica.serve import backend as backend_module
from weblica.serve.backend import ATTEMPTS, SynthBackend, SynthServerUnreachable


def _server(behaviour: str):
    """A loopback server that drops every connection, stalls, or answers 500; it records what it got."""
    seen: list[tuple[str, str]] = []

    class Handler(BaseHTTPRequestHandler):
        def _answer(self):
            seen.append((self.command, self.path))
            if behaviour == "drop" or behaviour == "drop-once" and len(seen) == 1:
                self.connection.shutdown(socket.SHUT_RDWR)
                self.close_connection = True
                return
            if behaviour == "stall":  # answers only once the test is over, however late the client times out
                self.server.released.wait(10)
            body = json.dumps({"error": "boom"}).encode()
            self.send_response(500 if behaviour == "error" else 200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _answer

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.released = threading.Event()
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, seen


def _task() -> Task:
    return Task.from_dict({"id": "shop-1", "start_url": "http://s.synth.test/", "instruction": "q",
                           "source": {"kind": "synth", "site": "s"}})


@pytest.fixture()
def dropping():
    httpd, seen = _server("drop")
    yield SynthBackend(url=f"http://127.0.0.1:{httpd.server_port}", admin_token="k"), seen
    httpd.shutdown()
    httpd.server_close()


@pytest.mark.parametrize("method, path", [("POST", "/api/orders"), ("PATCH", "/api/orders/r1"),
                                          ("DELETE", "/api/orders/r1"), ("PUT", "/api/doc/cart"),
                                          ("POST", "/__weblica/state"), ("GET", "/__weblica/reset"),
                                          ("POST", "/__weblica/reset/"), ("post", "/__weblica/reset")])
def test_a_request_that_is_not_an_idempotent_admin_call_is_sent_once(dropping, method, path):
    backend, seen = dropping
    with pytest.raises(SynthServerUnreachable) as raised:
        asyncio.run(backend._call(method, path, _task(), "ep"))
    assert len(seen) == 1, seen
    assert "in 1 attempt " in str(raised.value)


def test_a_server_that_drops_every_connection_gives_one_clear_error_after_the_attempts(dropping):
    backend, seen = dropping
    for call in (lambda: backend.begin(_task(), "ep", 7), lambda: backend.state(_task(), "ep")):
        seen.clear()
        with pytest.raises(httpx.TransportError) as raised:
            asyncio.run(call())
        assert len(seen) == ATTEMPTS
        message = str(raised.value)
        assert backend.url in message and f"in {ATTEMPTS} attempts" in message and "shop-1" in message
        assert "\n" not in message and isinstance(raised.value, SynthServerUnreachable)
    assert [m for m, _ in seen] == ["GET"] * ATTEMPTS


class _RecordedSleeps:
    """The backend module's `asyncio`, whose `sleep` records the back-off it was asked for and yields at
    once: the back-off is checked as asked for, not by a wall clock a loaded machine stretches."""

    def __init__(self) -> None:
        self.slept: list[float] = []

    def __getattr__(self, name):
        return getattr(asyncio, name)

    async def sleep(self, delay, result=None):
        self.slept.append(delay)
        return await asyncio.sleep(0, result)


def test_a_server_that_is_not_there_fails_after_the_attempts(monkeypatch):
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    backend = SynthBackend(url=f"http://127.0.0.1:{port}", admin_token="k")
    sleeps = _RecordedSleeps()
    monkeypatch.setattr(backend_module, "asyncio", sleeps)
    with pytest.raises(SynthServerUnreachable) as raised:
        asyncio.run(backend.state(_task(), "ep"))
    assert "ConnectError" in str(raised.value) and f"127.0.0.1:{port}" in str(raised.value)
    assert len(sleeps.slept) == ATTEMPTS - 1 and 0 < sum(sleeps.slept) <= 1.5  # short: 0.5 s + 1.0 s


def test_a_stalled_server_times_out_each_attempt_then_fails(monkeypatch):
    monkeypatch.setattr(backend_module, "REQUEST_TIMEOUT_S", 0.2)
    httpd, seen = _server("stall")
    try:
        backend = SynthBackend(url=f"http://127.0.0.1:{httpd.server_port}", admin_token="k")
        with pytest.raises(SynthServerUnreachable) as raised:
            asyncio.run(backend.state(_task(), "ep"))
        assert "ReadTimeout" in str(raised.value)
        # the last request timed out client-side; on a loaded machine its handler may only start now
        deadline = time.monotonic() + 10
        while len(seen) < ATTEMPTS and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(seen) == ATTEMPTS
    finally:
        httpd.released.set()
        httpd.shutdown()
        httpd.server_close()


def test_an_error_answer_is_an_answer_and_never_sent_again():
    httpd, seen = _server("error")
    try:
        backend = SynthBackend(url=f"http://127.0.0.1:{httpd.server_port}", admin_token="k")
        with pytest.raises(httpx.HTTPStatusError):
            asyncio.run(backend.begin(_task(), "ep", 0))
        assert seen == [("POST", "/__weblica/reset")]
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_the_real_site_server_resets_once_per_begin(tmp_path):
    """Against the real site server: begin() resets the episode with one request, state reads it."""
    from weblica.serve.server import SiteServer

    root = tmp_path / "s"
    (root / "public").mkdir(parents=True)
    (root / "public" / "index.html").write_text("<h1>s</h1>")
    (root / "site.json").write_text(json.dumps({"spec": {"site_id": "s", "host": "s.synth.test"},
                                                "initial_state": {"cart": []}}))
    with SiteServer([root]) as server:
        backend = SynthBackend(server)
        net = asyncio.run(backend.begin(_task(), "ep", 3))
        assert net.extra_headers["X-Weblica-Seed"] == "3"
        assert asyncio.run(backend.state(_task(), "ep"))["cart"] == []


def test_the_validators_in_process_backend_answers_as_the_admin_endpoints(tmp_path):
    """Validation's backend reads the site server's store in-process: after the page's own API calls
    (over HTTP, through the server as the browser's proxy) it reads the state the HTTP admin endpoint
    answers, lookup views and all, and its reset empties what the HTTP reads see; records it hands out
    are copies (changing one changes no view of the next read); an unknown site is a clear error."""
    from weblica.serve.server import SiteServer
    from weblica.synth.validation_tabs import InProcessBackend

    root = tmp_path / "s"
    (root / "public").mkdir(parents=True)
    (root / "public" / "index.html").write_text("<h1>s</h1>")
    (root / "site.json").write_text(json.dumps({"spec": {"site_id": "s", "host": "s.synth.test"},
                                                "initial_state": {"cart": [], "zeta": 1, "alpha": {"b": 2, "a": 1}}}))
    with SiteServer([root]) as server:
        http, here = SynthBackend(server), InProcessBackend(server)
        proxy = httpx.Client(proxy=server.url, trust_env=False)

        async def run() -> None:
            net = await here.begin(_task(), "ep", 5)
            assert net.extra_headers == (await http.begin(_task(), "ep", 5)).extra_headers
            for item in ("hat", "scarf"):
                sent = proxy.post("http://s.synth.test/api/cart", json={"item": item}, headers=net.extra_headers)
                assert sent.status_code == 200
            read = await here.state(_task(), "ep")
            assert read == await http.state(_task(), "ep")
            assert read["cart_ids"] == ["r1", "r2"] and read["cart_by_id"]["r1"]["item"] == "hat"
            assert list(read) == sorted(read)  # the keys as the endpoint writes them
            read["cart"][0]["item"] = "changed"
            assert read["cart_by_id"]["r1"]["item"] == "hat"  # a copy per view, as a JSON answer is
            assert (await here.state(_task(), "ep"))["cart"][0]["item"] == "hat"
            await here.begin(_task(), "ep", 5)
            assert (await http.state(_task(), "ep"))["cart"] == []
            other = Task.from_dict({"id": "x-1", "start_url": "http://x.synth.test/", "instruction": "q",
                                    "source": {"kind": "synth", "site": "x"}})
            with pytest.raises(LookupError, match="x.synth.test"):
                await here.state(other, "ep")
        try:
            asyncio.run(run())
        finally:
            proxy.close()
