"""The HTTP env server round trip: reset, step (text and JSON calls), errors, close."""
import base64
import threading

import httpx
import pytest
from werkzeug.serving import make_server

from weblica.env.server import EnvService, create_app


@pytest.fixture(scope="module")
def server():
    service = EnvService(max_sessions=2)
    srv = make_server("127.0.0.1", 0, create_app(service), threaded=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_port}"
    srv.shutdown()
    service.shutdown()


def test_round_trip(server, site):
    client = httpx.Client(base_url=server, timeout=60)
    assert client.get("/health").json()["status"] == "ok"
    task = {"id": "srv", "start_url": site.url + "/", "instruction": "Press Search and say done.",
            "checks": [{"type": "url_match", "expected": site.url + "/second"}]}
    r = client.post("/reset", json={"task": task, "seed": 3})
    assert r.status_code == 200
    sid = r.json()["session_id"]
    obs = r.json()["observation"]
    assert obs["url"] == site.url + "/" and base64.b64decode(obs["screenshot"])[:8] == b"\x89PNG\r\n\x1a\n"
    r = client.post("/step", json={"session_id": sid, "action":
                                   '<think>go</think><tool_call>{"name": "click", "arguments": {"x": 150, "y": 115}}</tool_call>'})
    body = r.json()
    assert body["observation"]["url"] == site.url + "/second" and not body["done"]
    assert body["observation"]["feedback"][0].startswith('Success: click on <button> "Search"')
    r = client.post("/step", json={"session_id": sid, "action": "oops not a call"})
    assert r.status_code == 200 and r.json()["info"]["parse_errors"]
    r = client.post("/step", json={"session_id": sid, "action": [{"name": "done", "arguments": {"answer": "ok"}}]})
    assert r.json()["done"] and r.json()["reward"] == 1.0 and r.json()["info"]["termination_reason"] == "done"
    assert client.post("/step", json={"session_id": sid, "action": "x"}).status_code == 409
    # the session can be reused for another episode, then closed
    assert client.post("/reset", json={"task": task, "session_id": sid}).status_code == 200
    assert client.post("/close", json={"session_id": sid}).json() == {"closed": sid}
    assert client.post("/step", json={"session_id": sid, "action": "x"}).status_code == 404


def test_bad_requests_get_clear_errors(server):
    client = httpx.Client(base_url=server, timeout=30)
    r = client.post("/reset", content=b"not json", headers={"content-type": "application/json"})
    assert r.status_code == 400 and "needs a JSON body with 'task'" in r.json()["error"]
    r = client.post("/reset", json={"task": {"id": "x"}})
    assert r.status_code == 400 and "start_url" in r.json()["error"]
    r = client.post("/reset", json={"task": {"id": "x", "start_url": "http://127.0.0.1:9/", "instruction": "i",
                                             "source": {"kind": "martian"}}})
    assert r.status_code == 400 and "unknown task source 'martian'" in r.json()["error"]
    assert client.post("/close", json={"session_id": "nope"}).status_code == 404
    assert client.get("/health").json()["sessions"] == 0  # failed resets hold no session


def test_existing_client_shapes_still_work(server, site):
    """What clients written against the first version send: `actions` lists, `screenshot: false`, no seed."""
    client = httpx.Client(base_url=server, timeout=60)
    task = {"id": "compat", "start_url": site.url + "/", "instruction": "Press Search."}
    r = client.post("/reset", json={"task": task, "screenshot": False})
    assert r.status_code == 200 and "screenshot" not in r.json()["observation"]
    sid = r.json()["session_id"]
    r = client.post("/step", json={"session_id": sid, "screenshot": False,
                                   "actions": [{"name": "click", "arguments": {"x": 150, "y": 115}}]})
    assert r.status_code == 200 and r.json()["observation"]["url"] == site.url + "/second"
    r = client.post("/step", json={"session_id": sid, "action": {"name": "fly", "arguments": {}}, "screenshot": False})
    assert r.status_code == 200 and "unknown tool 'fly'" in r.json()["info"]["parse_errors"][0]
    assert client.post("/close", json={"session_id": sid}).status_code == 200
