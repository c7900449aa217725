"""The env server exposed to a hostile network: every malformed request is a JSON 4xx (never a 5xx, an
HTML page or a traceback), concurrent steps on one session each get their own observation, a token
guards every route, and a seeded fuzz of a few hundred requests leaves the server healthy."""
from __future__ import annotations

import json
import random
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from weblica.env import server as env_server
from weblica.env.server import EnvService, check_bind, make_env_server
from weblica.env.task import Task, TaskError

TOKEN = "t0ken-for-tests-0123456789"


class Running:
    """An env server on a free loopback port, over its own EnvService."""

    def __init__(self, token: str | None = None, max_sessions: int = 4) -> None:
        self.service = EnvService(max_sessions=max_sessions)
        self.server = make_env_server(self.service, "127.0.0.1", 0, token)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.service.shutdown()


@pytest.fixture(scope="module")
def env_url():
    running = Running()
    yield running.url
    running.close()


def task_for(url: str, **extra: Any) -> dict[str, Any]:
    return {"id": "hard", "start_url": url + "/", "instruction": "Look around.", "max_steps": 50, **extra}


def raw(base: str, method: str, path: str, body: bytes | None = None,
        content_type: str | None = "application/json", headers: dict[str, Any] | None = None) -> httpx.Response:
    sent = dict(headers or {})
    if content_type is not None and body is not None:
        sent["Content-Type"] = content_type
    with httpx.Client(base_url=base, timeout=60) as client:
        return client.request(method, path, content=body, headers=sent)


def assert_json_error(response: httpx.Response, status: int, *words: str) -> dict[str, Any]:
    assert response.status_code == status, (response.status_code, response.text[:300])
    assert response.headers["content-type"].startswith("application/json"), response.text[:200]
    body = response.json()
    assert isinstance(body.get("error"), str) and "Traceback" not in body["error"]
    for word in words:
        assert word in body["error"], body["error"]
    return body


# ---- the probes of issue 17 ----------------------------------------------------------------------------

def test_probes_of_the_issue_are_json_400s(env_url, site):
    task = task_for(site.url)
    assert_json_error(raw(env_url, "POST", "/reset", b'{"task": %s, "seed": 1e999}' % json.dumps(task).encode()),
                      400, "1e999", "finite")
    assert_json_error(raw(env_url, "POST", "/step", json.dumps({"session_id": ["a"], "action": "x"}).encode()),
                      400, "'session_id' must be a string", "got a list")
    assert_json_error(raw(env_url, "POST", "/close", b'["session_id"]'), 400, "must be a JSON object", "got a list")
    huge = json.dumps({"task": task_for(site.url, instruction="x" * 20_000_000)}).encode()
    assert_json_error(raw(env_url, "POST", "/reset", huge), 413, "larger than 1048576 bytes")
    with httpx.Client(timeout=60) as client:  # chunked, no Content-Length: cut at the limit, refused the same way
        parts = [huge[i:i + 65536] for i in range(0, 3 << 20, 65536)]
        assert_json_error(client.post(env_url + "/reset", content=iter(parts),
                                      headers={"Content-Type": "application/json"}), 413, "larger than")
    long = json.dumps({"task": task_for(site.url, instruction="x" * 30_000)}).encode()
    assert_json_error(raw(env_url, "POST", "/reset", long), 400, "'instruction' is 30000 characters", "20000")
    assert_json_error(raw(env_url, "POST", "/reset", json.dumps({"task": task_for(site.url, max_steps="many")}).encode()),
                      400, "'max_steps' must be an integer")
    assert httpx.get(env_url + "/health").json()["sessions"] == 0


@pytest.mark.parametrize("body, words", [
    (b'{"task": {}, "seed": NaN}', ["NaN", "finite"]),
    (b'{"task": {}, "seed": -Infinity}', ["-Infinity"]),
    (b'{"task": {"id": "x", "start_url": "http://127.0.0.1:9/", "instruction": "i"}, "seed": 1.5}', ["'seed' must be an integer"]),
    (b'{"task": {"id": "x", "start_url": "http://127.0.0.1:9/", "instruction": "i"}, "seed": 99999999999999999999999}', ["out of range"]),
    (b'{"task": {"id": "x", "start_url": "http://127.0.0.1:9/", "instruction": "i"}, "seed": true}', ["got a boolean"]),
    (b'{"task": {"id": "x", "start_url": "http://127.0.0.1:9/", "instruction": "i"}, "screenshot": "no"}', ["'screenshot' must be true or false"]),
    (b'{"task": {"id": "x", "start_url": "http://127.0.0.1:9/", "instruction": "i"}, "tsak": 1}', ["unknown field(s) 'tsak'", "allowed: screenshot, seed, session_id, task"]),
    (b'{"task": "do it"}', ["needs a JSON body with 'task'"]),
    (b'{"task": {"id": "x", "start_url": "u", "instruction": "i", "checks": {"type": "url_match"}}}', ["'checks' must be a list"]),
    (b'{"task": {"id": "x", "start_url": "u", "instruction": "i", "checks": ["url"]}}', ["check 1 must be an object"]),
    (b'{"task": {"id": "x", "start_url": "u", "instruction": "i", "max_steps": 0}}', ["from 1 to 1000, got int '0'"]),
    (b'{"task": {"id": "x", "start_url": "u", "instruction": "i", "max_steps": 3.5}}', ["'max_steps' must be an integer"]),
    (b'{"task": {"id": "x", "start_url": "u", "instruction": "i", "oracle": {"name": "done"}}}', ["'oracle' must be a list"]),
    (b'{"task": {"id": "x", "start_url": "u", "instruction": "i", "source": {"kind": ["synth"]}}}', ["source 'kind' must be a string"]),
    (b'{"task": {"id": "x", "start_url": "u", "instruction": "\\ud800"}}', ["lone surrogate"]),
    (b'{"task": ' + b'[' * 5000 + b']' * 5000 + b'}', ["nest"]),
    (b'{"task": ' + b'[' * 40 + b']' * 40 + b'}', ["deeper than 32 levels"]),
    (b'{"task": 1' + b'0' * 5000 + b'}', ["not valid JSON"]),
    (b'\xff\xfe\x00garbage', ["not valid JSON"]),
    (b'{"task": ', ["not valid JSON", "at char 9"]),
    (b'', ["not valid JSON"]),
])
def test_malformed_reset_bodies(env_url, body, words):
    assert_json_error(raw(env_url, "POST", "/reset", body), 400, *words)


def test_step_and_close_fields(env_url):
    for body, words in [
        ({"action": "x"}, ["'session_id' must be a string", "got missing"]),
        ({"session_id": "s" * 65, "action": "x"}, ["1 to 64 characters"]),
        ({"session_id": 7, "action": "x"}, ["got a number"]),
        ({"session_id": "nope"}, ["needs a JSON body with 'session_id' and 'action'"]),
        ({"session_id": "nope", "action": "x", "actions": "y"}, ["either 'action' or 'actions'"]),
        ({"session_id": "nope", "action": 5}, ["'action' must be model text", "got a number"]),
        ({"session_id": "nope", "action": None}, ["got null"]),
        ({"session_id": "nope", "action": "x" * 200_001}, ["the limit is 200000"]),
        ({"session_id": "nope", "action": [{}] * 65}, ["65 tool calls; the limit is 64"]),
        ({"session_id": "nope", "action": "x", "extra": 1}, ["unknown field(s) 'extra'"]),
    ]:
        assert_json_error(raw(env_url, "POST", "/step", json.dumps(body).encode()), 400, *words)
    assert_json_error(raw(env_url, "POST", "/step", json.dumps({"session_id": "nope", "action": "x"}).encode()),
                      404, "no session nope")
    assert_json_error(raw(env_url, "POST", "/close", b"{}"), 400, "'session_id' must be a string")
    assert_json_error(raw(env_url, "POST", "/close", b'{"session_id": "\\u00fc\\u00f1\\u00ee"}'), 404, "no session")


def test_content_types_routes_and_methods_answer_json(env_url):
    assert_json_error(raw(env_url, "POST", "/reset", b"task=1", "application/x-www-form-urlencoded"), 415,
                      "Content-Type: application/json")
    assert_json_error(raw(env_url, "POST", "/step", b'{"session_id": "a", "action": "x"}', "text/plain"), 415)
    assert_json_error(raw(env_url, "POST", "/close", b'{"session_id": "a"}', None), 415, "no content type")
    assert_json_error(raw(env_url, "GET", "/nope"), 404, "no route GET /nope", "POST /reset")
    assert_json_error(raw(env_url, "GET", "/%00"), 404, "no route")
    assert_json_error(raw(env_url, "GET", "/step"), 405, "GET is not allowed on /step")
    assert_json_error(raw(env_url, "DELETE", "/health"), 405)
    assert_json_error(raw(env_url, "OPTIONS", "/reset"), 405)  # no preflight: a web page cannot POST JSON here
    assert raw(env_url, "HEAD", "/nope").status_code == 404


def test_broken_http_gets_json_not_html(env_url):
    host, port = env_url.rsplit("/", 1)[1].split(":")
    for request in (b"GARBAGE\r\n\r\n", b"GET /health HTTP/9.9\r\n\r\n",
                    b"GET /health HTTP/1.1\r\n" + b"".join(b"X-%d: 1\r\n" % i for i in range(200)) + b"\r\n"):
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            sock.sendall(request)
            data = b""
            while chunk := sock.recv(65536):
                data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        assert head.split(b" ")[1][:1] == b"4" and b"application/json" in head, data[:300]
        assert "error" in json.loads(body)


# ---- concurrency on one session -------------------------------------------------------------------------

def test_concurrent_steps_on_one_session_each_get_their_own_observation(env_url, site):
    client = httpx.Client(base_url=env_url, timeout=120)
    sid = client.post("/reset", json={"task": task_for(site.url), "screenshot": False}).json()["session_id"]
    urls = [f"{site.url}/second?i={i}" for i in range(6)]

    def go(url: str) -> httpx.Response:
        return httpx.post(env_url + "/step", timeout=120, json={
            "session_id": sid, "screenshot": False, "action": {"name": "goto_url", "arguments": {"url": url}}})

    with ThreadPoolExecutor(len(urls)) as pool:
        answers = list(pool.map(go, urls))
    assert [a.status_code for a in answers] == [200] * len(urls), [a.text[:200] for a in answers]
    for url, answer in zip(urls, answers):
        body = answer.json()
        assert body["observation"]["url"] == url  # its own page, not another step's
        assert body["observation"]["feedback"][0].startswith("Success"), body["observation"]["feedback"]
    assert sorted(a.json()["info"]["step"] for a in answers) == list(range(1, len(urls) + 1))
    assert client.post("/close", json={"session_id": sid}).status_code == 200


def test_too_many_waiting_steps_are_refused_and_close_ends_the_queue(site, monkeypatch):
    monkeypatch.setattr(env_server, "MAX_QUEUED_PER_SESSION", 1)
    running = Running()
    try:
        client = httpx.Client(base_url=running.url, timeout=60)
        sid = client.post("/reset", json={"task": task_for(site.url), "screenshot": False}).json()["session_id"]
        slow = {"session_id": sid, "screenshot": False,
                "action": {"name": "goto_url", "arguments": {"url": site.url + "/hang?s=1.5"}}}
        with ThreadPoolExecutor(4) as pool:
            answers = list(pool.map(lambda _: httpx.post(running.url + "/step", json=slow, timeout=60), range(4)))
        codes = sorted(a.status_code for a in answers)
        assert codes.count(200) == 2 and codes.count(429) == 2, codes  # one ran, one waited, two refused
        assert all("requests on one session run one at a time" in a.json()["error"]
                   for a in answers if a.status_code == 429)
        # a close while a step runs: the step finishes, a step queued behind it gets 404, nothing hangs.
        # The close goes once the step is seen running (its page load waits in the site's /hang), not after
        # a fixed pause a loaded machine can outlast
        tag = f"close-race-{sid}"
        running_step = {**slow, "action": {"name": "goto_url", "arguments": {"url": site.url + f"/hang?s=1.5&tag={tag}"}}}
        with ThreadPoolExecutor(3) as pool:
            first = pool.submit(httpx.post, running.url + "/step", json=running_step, timeout=60)
            deadline = time.monotonic() + 30
            while tag not in httpx.get(site.url + "/__state").json()["hanging"] and not first.done() \
                    and time.monotonic() < deadline:
                time.sleep(0.01)
            closing = pool.submit(httpx.post, running.url + "/close", json={"session_id": sid}, timeout=60)
            threading.Event().wait(0.1)
            late = pool.submit(httpx.post, running.url + "/step", json=slow, timeout=60)
            assert first.result().status_code == 200 and closing.result().status_code == 200
            assert late.result().status_code == 404
        assert client.get("/health").json()["sessions"] == 0
    finally:
        running.close()


# ---- auth and binding -----------------------------------------------------------------------------------

def test_token_guards_every_route(site):
    running = Running(token=TOKEN)
    try:
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN},
                        {"Authorization": "Bearer " + TOKEN + "x"}, {"Authorization": "Bearer ünï".encode()}):
            r = httpx.get(running.url + "/health", headers=headers)
            assert_json_error(r, 401, "Authorization: Bearer TOKEN", "WEBLICA_ENV_TOKEN")
            assert r.headers["www-authenticate"] == "Bearer"
            assert_json_error(raw(running.url, "POST", "/reset", b"{}", headers=headers), 401)
        good = {"Authorization": "Bearer " + TOKEN}
        assert httpx.get(running.url + "/health", headers=good).json()["status"] == "ok"
        r = httpx.post(running.url + "/reset", headers=good, timeout=60,
                       json={"task": task_for(site.url), "screenshot": False})
        assert r.status_code == 200
        assert httpx.post(running.url + "/close", headers=good, json={"session_id": r.json()["session_id"]}).status_code == 200
    finally:
        running.close()


def test_non_loopback_binds_need_a_token():
    for host in ("127.0.0.1", "127.8.0.1", "::1", "localhost"):
        check_bind(host, None)
    for host in ("0.0.0.0", "10.0.0.5", "::", "env.cluster.local"):
        with pytest.raises(ValueError, match="--token TOKEN"):
            check_bind(host, None)
        check_bind(host, TOKEN)
    with pytest.raises(ValueError, match="at least 16"):
        check_bind("0.0.0.0", "short")


def test_cli_refuses_a_network_bind_without_token(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-m", "weblica.cli", "env-server", "--host", "0.0.0.0", "--port", "0"],
                          capture_output=True, text=True, timeout=60, env={**env, "PYTHONPATH": ":".join(sys.path)})
    assert proc.returncode != 0 and "--token" in proc.stderr and "Traceback" not in proc.stderr
    proc = subprocess.run([sys.executable, "-m", "weblica.cli", "env-server", "--host", "0.0.0.0", "--port", "0",
                           "--json"], capture_output=True, text=True, timeout=60,
                          env={**env, "PYTHONPATH": ":".join(sys.path)})
    assert proc.returncode != 0 and "--token" in json.loads(proc.stdout)["error"]


# ---- the fuzz -------------------------------------------------------------------------------------------

JUNK: list[Any] = [None, True, False, 0, -1, 2 ** 64, 1e308, -0.0, "", "x" * 5000, "\u202e\x00", "ünï©ødé 🙂",
                   [], {}, [1, [2, [3]]], {"a": {"b": {}}}, "../../etc/passwd", "<script>", 720]


def malformed_requests(n: int, seed: int, session_id: str, start_url: str) -> list[tuple[str, str, str | None, bytes]]:
    """`n` seeded requests that are each wrong in some way: (method, path, content type, body).
    Steps on `session_id` whose JSON is well formed carry junk tool calls (the model's mistakes)."""
    rng = random.Random(seed)
    base_task = {"id": "fuzz", "start_url": start_url, "instruction": "x"}

    bad_seeds = [v for v in JUNK if type(v) is not int or abs(v) >= 2 ** 63]

    def dumps(value: Any) -> bytes:
        return json.dumps(value).encode()

    def bad_task() -> dict[str, Any]:
        while True:
            task = dict(base_task)
            key = rng.choice(["id", "start_url", "instruction", "max_steps", "checks", "source", "oracle",
                              "metadata", "rubric", "skill", "difficulty"])
            task[key] = rng.choice(JUNK)
            if rng.random() < 0.2:
                del task[rng.choice(list(task))]
            try:
                Task.from_dict(task)
            except TaskError:
                return task

    def junk_call() -> Any:
        return rng.choice([{"name": rng.choice(["click", "fly", "", 7, None, "type", "scroll", "goto_url"]),
                            "arguments": {rng.choice(["x", "y", "text", "url", "zz"]): rng.choice(JUNK)}},
                           "click", 5, None, [], {"function": {"name": "wait", "arguments": "{"}}])

    makers = [
        lambda: ("POST", "/reset", "application/json", dumps({"task": bad_task(), "seed": rng.randrange(9)})),
        lambda: ("POST", "/reset", "application/json", dumps({"task": base_task, "seed": rng.choice(bad_seeds)})
                 if rng.random() < 0.5 else dumps({"task": base_task, rng.choice(["zz", "Task", "seed "]): 1})),
        lambda: ("POST", rng.choice(["/reset", "/step", "/close"]), "application/json",
                 rng.choice([b"", b"{", b"[1,", b"nul", b"\xff\xfe", b"{\"a\": NaN}", b"{\"seed\": Infinity}",
                             b"{\"seed\": 1e999}", b"[" * 3000, b"{\"a\":" * 200, b"\"str\"", b"42", b"null",
                             bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64)))])),
        lambda: ("POST", rng.choice(["/reset", "/step", "/close"]),
                 rng.choice([None, "text/plain", "application/x-www-form-urlencoded", "multipart/form-data",
                             "application/jsonx", "text/json"]), dumps({"session_id": session_id, "action": "x"})),
        lambda: ("POST", rng.choice(["/step", "/close"]), "application/json",
                 dumps({"session_id": rng.choice(JUNK + ["nope", "s" * 65, session_id + "x"]), "action": "x"})),
        lambda: ("POST", "/step", "application/json",
                 dumps({"session_id": session_id, "action": rng.choice(JUNK[:8] + [[{}] * 70, "y" * 200_001])})),
        lambda: ("POST", "/step", "application/json",
                 dumps({"session_id": session_id, "screenshot": rng.choice(JUNK[2:]), "action": "x"})),
        lambda: ("POST", "/reset", "application/json",
                 dumps({"task": dict(base_task, instruction="i" * rng.choice([20_001, 600_000, 2_000_000]))})),
        lambda: (rng.choice(["GET", "PUT", "DELETE", "PATCH", "POST"]),
                 rng.choice(["/nope", "/reset/", "/%00", "/..%2f..%2fetc", "/health/x", "/" + "a" * 3000,
                             "/st\u00e9p", "/step?session_id=1"]), None, b""),
        lambda: rng.choice([("POST", "/reset", "application/json", dumps({"seed": 1, "screenshot": False})),
                            ("POST", "/step", "application/json", dumps({"session_id": session_id})),
                            ("POST", "/step", "application/json", dumps({"action": "x"})),
                            ("POST", "/close", "application/json", b"{}"),
                            ("POST", "/reset", "application/json", dumps({"task": {}}))]),  # missing fields
        lambda: ("POST", "/step", "application/json",  # well-formed request, junk tool calls: 200 + feedback
                 dumps({"session_id": session_id, "screenshot": False,
                        "action": [junk_call() for _ in range(rng.randrange(1, 4))]})),
    ]
    return [rng.choice(makers)() for _ in range(n)]


def send(base: str, request: tuple[str, str, str | None, bytes]) -> httpx.Response:
    method, path, content_type, body = request
    return raw(base, method, path, body or None, content_type)


def test_fuzz_of_malformed_requests_never_5xx_and_server_stays_healthy(site):
    running = Running(max_sessions=3)
    try:
        client = httpx.Client(base_url=running.url, timeout=120)
        sid = client.post("/reset", json={"task": task_for(site.url, max_steps=1000), "screenshot": False}).json()["session_id"]
        requests = malformed_requests(240, seed=17, session_id=sid, start_url=site.url + "/")
        answers = [send(running.url, r) for r in requests[:160]]
        with ThreadPoolExecutor(8) as pool:  # the rest all at once, on the same session
            answers += list(pool.map(lambda r: send(running.url, r), requests[160:]))
        statuses = [a.status_code for a in answers]
        assert max(statuses) < 500, [(r[:2], a.status_code, a.text[:200]) for r, a in zip(requests, answers)
                                     if a.status_code >= 500]
        for request, answer in zip(requests, answers):
            if answer.status_code >= 400 and request[0] != "HEAD":
                assert answer.headers["content-type"].startswith("application/json"), (request[:2], answer.text[:200])
                assert "error" in answer.json()
        assert len({s for s in statuses}) >= 5  # the fuzz hit many kinds of refusal, not one
        # still healthy: a fresh episode works, and no fuzzed reset holds a session
        health = client.get("/health").json()
        assert health["status"] == "ok" and health["browser"] and health["sessions"] == 1
        client.post("/close", json={"session_id": sid})
        r = client.post("/reset", json={"task": task_for(site.url), "screenshot": False})
        assert r.status_code == 200
        r = client.post("/step", json={"session_id": r.json()["session_id"], "screenshot": False,
                                       "action": {"name": "click", "arguments": {"x": 150, "y": 115}}})
        assert r.status_code == 200 and r.json()["observation"]["url"] == site.url + "/second"
    finally:
        running.close()
