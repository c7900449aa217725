"""Issue 39, point 3: the env server. A request whose Host header is not the server's (DNS rebinding) is
refused; local tasks reach only the servers named at start, not the machine's other loopback services;
idle sessions expire and a finished episode frees its slot; slow clients are cut off and connections
capped."""
from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from typing import Any

import httpx
import pytest
from flask import Flask

from sites import LocalServer
from weblica.env.server import EnvService, make_env_server


class Running:
    def __init__(self, service: EnvService, **server_options: Any) -> None:
        self.service = service
        self.server = make_env_server(service, "127.0.0.1", 0, **server_options)
        self.port = self.server.server_port
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.service.shutdown()


def secret_service() -> Flask:
    app = Flask("secret")

    @app.get("/")
    def index() -> str:
        return "<!doctype html><title>Internal admin: db password hunter2</title><h1>hunter2</h1>"
    return app


def local_task(url: str, **extra: Any) -> dict[str, Any]:
    return {"id": "local", "start_url": url + "/", "instruction": "Look.", "max_steps": 20, **extra}


def error_of(response: httpx.Response, status: int) -> str:
    assert response.status_code == status, (response.status_code, response.text[:300])
    assert response.headers["content-type"].startswith("application/json")
    return response.json()["error"]


# ---- Host header -----------------------------------------------------------------------------------------

def test_a_rebound_name_is_refused_and_the_server_s_own_names_are_answered():
    running = Running(EnvService(max_sessions=2), allow_hosts=("trainer.cluster.internal",))
    try:
        with httpx.Client(timeout=30) as client:
            for host in ("attacker.example", f"attacker.example:{running.port}", "127.0.0.1.nip.io",
                         "localhost.attacker.example"):
                said = error_of(client.post(running.url + "/reset", headers={"Host": host},
                                            json={"task": local_task("http://127.0.0.1:9")}), 403)
                assert "DNS rebinding" in said and "--allow-host" in said
                error_of(client.get(running.url + "/health", headers={"Host": host}), 403)
            for host in (f"127.0.0.1:{running.port}", f"localhost:{running.port}", "LOCALHOST",
                         "trainer.cluster.internal:80", f"[::1]:{running.port}"):
                assert client.get(running.url + "/health", headers={"Host": host}).status_code == 200, host
    finally:
        running.close()


# ---- local origins ---------------------------------------------------------------------------------------

def test_local_tasks_reach_only_the_local_origins_named_at_start(site):
    with LocalServer(secret_service()) as secret:
        running = Running(EnvService(max_sessions=2, local_origins=[site.url]))
        try:
            with httpx.Client(base_url=running.url, timeout=120) as client:
                said = error_of(client.post("/reset", json={"task": local_task(secret.url)}), 400)
                assert "--local-origin" in said and "hunter2" not in said and "Internal admin" not in said
                # the machine's own name resolves to loopback: refused the same way
                said = error_of(client.post("/reset", json={"task": local_task(
                    f"http://{socket.gethostname()}:{secret.port}")}), 400)
                assert "--local-origin" in said
                ok = client.post("/reset", json={"task": local_task(site.url), "screenshot": False})
                assert ok.status_code == 200, ok.text[:300]
                sid = ok.json()["session_id"]
                step = client.post("/step", json={"session_id": sid, "screenshot": False,
                                                  "action": {"name": "goto_url", "arguments": {"url": secret.url + "/"}}})
                observation = step.json()["observation"]
                assert observation["feedback"][-1].startswith("Refused:")
                assert all("hunter2" not in t["title"] for t in observation["tabs"])
        finally:
            running.close()


def test_the_cli_refuses_local_tasks_unless_their_origin_is_named(site):
    base = [sys.executable, "-m", "weblica.cli", "env-server", "--port", "0", "--json"]
    for extra, allowed in (([], False), (["--local-origin", site.url], True)):
        server = subprocess.Popen(base + extra, stdout=subprocess.PIPE, text=True)
        try:
            summary = json.loads(server.stdout.readline())
            answer = httpx.post(summary["url"] + "/reset", json={"task": local_task(site.url), "screenshot": False},
                                timeout=120)
            if allowed:
                assert answer.status_code == 200, answer.text[:300]
            else:
                assert "--local-origin" in error_of(answer, 400)
        finally:
            server.terminate()
            server.wait(timeout=60)


# ---- sessions that end ------------------------------------------------------------------------------------

def test_a_finished_episode_frees_its_slot_and_idle_sessions_expire(site):
    running = Running(EnvService(max_sessions=3))
    try:
        with httpx.Client(base_url=running.url, timeout=120) as client:
            def reset() -> httpx.Response:
                return client.post("/reset", json={"task": local_task(site.url), "screenshot": False})
            sessions = [reset().json()["session_id"] for _ in range(3)]
            assert "running episode" in error_of(reset(), 429)
            done = client.post("/step", json={"session_id": sessions[0], "screenshot": False,
                                              "action": {"name": "done", "arguments": {"answer": "x"}}})
            assert done.json()["done"]
            fourth = reset()  # the ended episode gives its slot
            assert fourth.status_code == 200, fourth.text[:300]
            said = error_of(client.post("/step", json={"session_id": sessions[0], "action": "x"}), 404)
            assert "slot was given to a new session" in said
            health = client.get("/health").json()
            assert health["sessions"] == 3 and health["running"] == 3
            running.service.session_idle_s = 1.0  # from now on a second without a request closes a session
            deadline = time.monotonic() + 30
            while client.get("/health").json()["sessions"] and time.monotonic() < deadline:
                time.sleep(0.3)
            assert client.get("/health").json()["sessions"] == 0
            said = error_of(client.post("/step", json={"session_id": sessions[1], "action": "x"}), 404)
            assert "idle" in said and "--session-idle-timeout" in said
            assert reset().status_code == 200
    finally:
        running.close()


# ---- slow clients, many connections -----------------------------------------------------------------------

def _slow_client(url_port: int, stop: threading.Event, outcome: list[str]) -> None:
    sock = socket.create_connection(("127.0.0.1", url_port), timeout=10)
    try:
        sock.sendall(b"POST /reset HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        while not stop.is_set():
            sock.sendall(b"X-a: b\r\n")  # a header line now and then, never the end of the headers
            time.sleep(0.2)
        outcome.append("held")
    except OSError:
        outcome.append("cut")
    finally:
        sock.close()


def _answer_of(port: int) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        data = b""
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                return data
            data += chunk


def test_slow_clients_are_cut_off_and_connections_are_capped():
    running = Running(EnvService(max_sessions=2), max_connections=8, read_timeout_s=0.5, request_read_s=1.5)
    stop = threading.Event()
    outcomes: list[str] = []
    try:
        slow = [threading.Thread(target=_slow_client, args=(running.port, stop, outcomes), daemon=True)
                for _ in range(40)]
        for thread in slow:
            thread.start()
        time.sleep(0.5)
        assert running.server.open_connections <= 8
        busy = _answer_of(running.port)  # while the slow ones hold every slot: a JSON 503, no thread
        assert b" 503 " in busy.split(b"\r\n", 1)[0] and b'"error"' in busy
        time.sleep(3)  # past the time to read a whole request: every slow client was cut off
        assert outcomes.count("cut") == 40 and running.server.refused_connections >= 30
        stop.set()
        ok = _answer_of(running.port)
        assert b" 200 " in ok.split(b"\r\n", 1)[0], ok[:200]
        assert running.server.open_connections <= 1
    finally:
        stop.set()
        running.close()


def test_a_body_sent_too_slowly_is_a_json_408_not_a_server_error():
    running = Running(EnvService(max_sessions=2), read_timeout_s=0.5, request_read_s=1.5)
    try:
        with socket.create_connection(("127.0.0.1", running.port), timeout=10) as sock:
            sock.sendall(b"POST /reset HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                         b"Content-Length: 200\r\n\r\n{\"task\": ")
            time.sleep(2)
            answer = sock.recv(65536)
        status = answer.split(b"\r\n", 1)[0]
        assert answer == b"" or b" 408 " in status, answer[:200]
        assert b" 500 " not in status
    finally:
        running.close()


@pytest.mark.parametrize("origin", ["127.0.0.1:5000", "file:///etc", "http://"])
def test_the_cli_refuses_a_local_origin_that_is_no_url(origin):
    proc = subprocess.run([sys.executable, "-m", "weblica.cli", "env-server", "--port", "0", "--json",
                           "--local-origin", origin], capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "--local-origin" in json.loads(proc.stdout)["error"]
