"""The synth backend's admin calls (reset, state) survive a dropped connection: on a loaded machine a
state read timed out once and failed a whole evaluation (bench/learn.py). Both calls are idempotent,
so a transport failure is tried again; a server that keeps failing still fails the call."""
import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from weblica.env.task import Task
from weblica.serve.backend import ATTEMPTS, SynthBackend


def _server(drops: int):
    seen = []

    class Handler(BaseHTTPRequestHandler):
        def _answer(self):
            seen.append((self.command, self.path))
            if len(seen) <= drops:   # drop the connection without an answer, as a stalled server does
                self.connection.shutdown(2)
                self.close_connection = True
                return
            body = json.dumps({"orders": [1]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = _answer

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, seen


def _task():
    return Task.from_dict({"id": "t", "start_url": "http://s.synth.test/", "instruction": "q",
                           "source": {"kind": "synth", "site": "s"}})


def test_a_dropped_connection_is_tried_again():
    httpd, seen = _server(drops=ATTEMPTS - 1)
    try:
        backend = SynthBackend(url=f"http://127.0.0.1:{httpd.server_port}", admin_token="k")
        assert asyncio.run(backend.state(_task(), "ep")) == {"orders": [1]}
        assert len(seen) == ATTEMPTS
    finally:
        httpd.shutdown()


def test_a_server_that_keeps_failing_fails_the_call():
    httpd, seen = _server(drops=10)
    try:
        backend = SynthBackend(url=f"http://127.0.0.1:{httpd.server_port}", admin_token="k")
        with pytest.raises(httpx.TransportError):
            asyncio.run(backend.begin(_task(), "ep", 0))
        assert len(seen) == ATTEMPTS
    finally:
        httpd.shutdown()
