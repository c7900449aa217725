"""The synth site server: host routing, per-episode state, the admin endpoint, proxy-style requests,
and two parallel browser episodes on one site keeping separate state."""
from __future__ import annotations

import asyncio

import httpx
import pytest

from weblica.env.backend import EPISODE_HEADER
from weblica.env.task import Task, TaskSource
from weblica.serve.app import ADMIN_HEADER, SEED_HEADER, ServeConfig, create_app
from weblica.serve.backend import SynthBackend
from weblica.serve.server import SiteServer
from weblica.synth.generate import write_unvalidated
from weblica.synth.spec import sample_spec


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    out = tmp_path_factory.mktemp("serve")
    return write_unvalidated(sample_spec(4, "checkout", "groceries", "corporate-clean"), out)


def _client(bundle):
    app = create_app(ServeConfig(sites=[bundle], admin_token="secret"))
    host = bundle.name + ".synth.test"
    return app.test_client(), host


def test_pages_are_routed_by_host_and_unknown_hosts_never_leave(bundle):
    client, host = _client(bundle)
    home = client.get("/", headers={"Host": host})
    assert home.status_code == 200 and b"<!doctype html>" in home.data.lower()
    assert client.get("/assets/site.css", headers={"Host": host}).mimetype == "text/css"
    assert client.get("/img/" + "x.png", headers={"Host": host}).status_code == 404
    other = client.get("/", headers={"Host": "example.com"})
    assert other.status_code == 502 and b"Nothing was fetched" in other.data
    # the bundle's gold answers are not served
    assert client.get("/tasks.jsonl", headers={"Host": host}).status_code == 404
    assert client.get("/../tasks.jsonl", headers={"Host": host}).status_code == 404


def test_state_is_per_episode_and_admin_needs_the_token(bundle):
    client, host = _client(bundle)
    a, b = {"Host": host, EPISODE_HEADER: "ep-a"}, {"Host": host, EPISODE_HEADER: "ep-b"}
    assert client.put("/api/doc/cart", json={"i001": 2}, headers=a).status_code == 200
    client.post("/api/orders", json={"name": "Ana"}, headers=a)
    assert client.get("/api/state", headers=a).json["cart"] == {"i001": 2}
    assert client.get("/api/state", headers=b).json["cart"] == {}
    assert client.get("/__weblica/state", headers=a).status_code == 403
    admin = {**a, ADMIN_HEADER: "secret"}
    state = client.get("/__weblica/state", headers=admin).json
    assert state["orders_ids"] == ["r1"] and state["orders_by_id"]["r1"]["name"] == "Ana"
    client.post("/__weblica/reset", headers=admin)
    assert client.get("/api/state", headers=a).json["cart"] == {}


def test_absolute_form_proxy_requests_and_the_backend(bundle):
    with SiteServer([bundle]) as server:
        host = server.hosts[0]
        with httpx.Client(proxy=server.url, trust_env=False) as client:  # a real proxy-style request
            page = client.get(f"http://{host}/cart")
            assert page.status_code == 200 and b"Your cart" in page.content
            assert client.get("http://unknown.example/").status_code == 502
        task = Task(id="t", start_url=f"http://{host}/", instruction="x",
                    source=TaskSource(kind="synth", site=bundle.name))
        backend = SynthBackend(server)

        async def flow():
            net = await backend.begin(task, "ep-1", 0)
            # the episode's id and seed (the page draws its pop-ups from the seed); no instance header
            assert net.proxy == server.url and net.extra_headers == {EPISODE_HEADER: "ep-1", SEED_HEADER: "0"}
            async with httpx.AsyncClient(proxy=server.url, trust_env=False) as c:
                await c.put(f"http://{host}/api/doc/cart", json={"i002": 1}, headers=net.extra_headers)
            assert (await backend.state(task, "ep-1"))["cart"] == {"i002": 1}
            await backend.begin(task, "ep-1", 0)  # a new episode with the same id starts clean
            assert (await backend.state(task, "ep-1"))["cart"] == {}
        asyncio.run(flow())


def test_two_parallel_browser_episodes_keep_separate_state(bundle):
    from playwright.async_api import async_playwright

    from weblica.browser.launcher import context_kwargs, launch_browser

    data = __import__("json").loads((bundle / "data.json").read_text())
    first, second = data["items"][0], data["items"][1]

    async def episode(browser, server, backend, task, episode_id, item, qty):
        net = await backend.begin(task, episode_id, 0)
        context = await browser.new_context(**context_kwargs(proxy=net.proxy, extra_headers=net.extra_headers))
        page = await context.new_page()
        await page.goto(f"http://{server.hosts[0]}/item/{item['slug']}")
        await page.evaluate("document.querySelectorAll('[data-distractor]').forEach(e => e.hidden = true)")
        await page.fill("#qty", str(qty))
        await page.click("#add-to-cart")
        await page.wait_for_selector("[data-added]:not([hidden])")
        await context.close()
        return await backend.state(task, episode_id)

    async def run():
        with SiteServer([bundle]) as server:
            backend = SynthBackend(server)
            task = Task(id="t", start_url="", instruction="x", source=TaskSource(kind="synth", site=bundle.name))
            async with async_playwright() as pw:
                browser = await launch_browser(pw)
                try:
                    return await asyncio.gather(episode(browser, server, backend, task, "left", first, 2),
                                                episode(browser, server, backend, task, "right", second, 3))
                finally:
                    await browser.close()
    left, right = asyncio.run(run())
    assert left["cart"] == {first["id"]: 2}
    assert right["cart"] == {second["id"]: 3}


@pytest.mark.parametrize("path, status", [
    ("/%00", 400), ("/cart%00.html", 400), ("/%0a", 400), ("/a%7fb", 400), ("/%ff%fe", 400),
    ("/" + "a" * 3000, 400), ("/" + "a" * 300, 404), ("/%zz", 404), ("/%", 404), ("/..%2f..%2ftasks.jsonl", 404),
    ("/../../../../etc/passwd", 404), ("/assets/../../site.json", 404), ("/%2e%2e/data.json", 404),
    ("/\u00fcn\u00ee/\U0001f642", 404),
])
def test_malformed_paths_are_4xx_never_500(bundle, path, status):
    client, host = _client(bundle)
    for method in (client.get, client.head):
        response = method(path, headers={"Host": host})
        assert response.status_code == status, (path, response.status_code)
    assert b"Traceback" not in client.get(path, headers={"Host": host}).data


def test_malformed_paths_over_a_real_socket(bundle):
    """What a browser or curl sends, unnormalized: raw request lines to the served app."""
    import socket

    with SiteServer([bundle]) as server:
        host = server.hosts[0]
        port = int(server.url.rsplit(":", 1)[1])
        for target, status in [(b"/%00", b"400"), (b"/../tasks.jsonl", b"404"), (b"/%c0%ae%c0%ae/tasks.jsonl", b"400"),
                               (b"/" + b"b" * 4000, b"400"), (b"/cart", b"200")]:
            with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
                sock.sendall(b"GET " + target + b" HTTP/1.1\r\nHost: " + host.encode() + b"\r\nConnection: close\r\n\r\n")
                data = b""
                while chunk := sock.recv(65536):
                    data += chunk
            assert data.split(b" ", 2)[1] == status, (target, data[:200])


def test_state_api_refuses_bodies_of_the_wrong_shape(bundle):
    client, host = _client(bundle)
    h = {"Host": host, EPISODE_HEADER: "ep-bad"}
    client.post("/api/orders", json={"name": "Ana"}, headers=h)
    assert client.patch("/api/orders/r1", json=[1, 2], headers=h).status_code == 400
    assert client.post("/api/orders", data=b"[" * 50000, headers=h).status_code == 400
    assert client.put("/api/doc/cart", data=b"[" * 50000, headers=h).status_code == 200  # no body: null doc
    assert client.post("/api/login", json=["admin"], headers=h).status_code == 400
    assert client.post("/api/login", headers=h).status_code == 401  # no body: a failed login, as before
    assert client.post("/api/signup", json="bob", headers=h).status_code == 400
    assert client.put("/api/doc/x", data=b"x" * (5 << 20), headers=h).status_code == 413
    assert client.get("/api/state", headers=h).json["orders"][0]["name"] == "Ana"
    assert client.get("/__weblica/state", headers={**h, ADMIN_HEADER: "secr\u00e9t"}).status_code == 403


@pytest.fixture(scope="module")
def hostile_bundles(bundle, tmp_path_factory):
    """Copies of the bundle whose files try to reach outside it: symlinks in public/ to /etc/passwd, to
    /etc, to the bundle's gold answers; and a bundle whose public/ itself is a symlink to / (or onto the
    bundle, which holds tasks.jsonl)."""
    import shutil

    base = tmp_path_factory.mktemp("hostile")
    links = shutil.copytree(bundle, base / "links" / bundle.name, symlinks=True)
    (links / "public" / "passwd").symlink_to("/etc/passwd")
    (links / "public" / "passwd.html").symlink_to("/etc/passwd")
    (links / "public" / "etcdir").symlink_to("/etc", target_is_directory=True)
    (links / "public" / "gold.html").symlink_to(links / "tasks.jsonl")
    rooted = shutil.copytree(bundle, base / "rooted" / bundle.name, symlinks=True)
    shutil.rmtree(rooted / "public")
    (rooted / "public").symlink_to("/", target_is_directory=True)
    onto = shutil.copytree(bundle, base / "onto" / bundle.name, symlinks=True)
    shutil.rmtree(onto / "public")
    (onto / "public").symlink_to(onto, target_is_directory=True)
    return {"links": links, "rooted": rooted, "onto": onto}


SECRETS = (b"root:x:0:0", b"root:", b'"checks"', b"instruction")

ESCAPE_PROBES = ["/passwd", "/passwd.html", "/etcdir/passwd", "/etcdir/hostname", "/gold", "/gold.html",
                 "/etc/passwd", "//etc/passwd", "/..%2f..%2f..%2fetc%2fpasswd", "/%2e%2e/%2e%2e/etc/passwd",
                 "/assets/../../../etc/passwd", "/tasks.jsonl", "/site.json", "/data.json", "/public/../site.json",
                 "/./../site.json", "/%2fetc%2fpasswd", "/..\\..\\site.json", "/proc/self/environ"]


@pytest.mark.parametrize("which", ["links", "rooted", "onto"])
def test_static_files_never_leave_the_bundle(hostile_bundles, which):
    client, host = _client(hostile_bundles[which])
    for probe in ESCAPE_PROBES:
        response = client.get(probe, headers={"Host": host})
        assert response.status_code in (400, 404), (which, probe, response.status_code)
        assert not any(secret in response.data for secret in SECRETS), (which, probe, response.data[:200])
    if which == "links":  # the bundle's own pages are still served
        assert client.get("/cart", headers={"Host": host}).status_code == 200


def test_static_escapes_over_a_real_proxy_socket(hostile_bundles):
    """Absolute-form proxy request lines, as the browser sends them, for the escape probes."""
    import socket

    with SiteServer([hostile_bundles["links"].parent, hostile_bundles["rooted"].parent]) as server:
        port = int(server.url.rsplit(":", 1)[1])
        host = server.hosts[0]
        for probe in ESCAPE_PROBES + ["/../../../../etc/passwd", "/%2e%2e/%2e%2e/%2e%2e/etc/passwd"]:
            with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
                sock.sendall(b"GET http://" + host.encode() + probe.encode() + b" HTTP/1.1\r\nHost: " + host.encode()
                             + b"\r\nConnection: close\r\n\r\n")
                data = b""
                while chunk := sock.recv(65536):
                    data += chunk
            assert data.split(b" ", 2)[1] in (b"400", b"404"), (probe, data[:200])
            assert b"root:x:0:0" not in data and b'"checks"' not in data, probe


def test_serve_on_a_taken_port_is_one_json_line(bundle):
    import json
    import socket
    import subprocess
    import sys

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        for command in (["serve", str(bundle)], ["env-server"]):
            proc = subprocess.run([sys.executable, "-m", "weblica.cli", *command, "--port", port, "--json"],
                                  capture_output=True, text=True, timeout=60)
            assert proc.returncode == 1, (command, proc.stdout, proc.stderr)
            lines = proc.stdout.strip().splitlines()
            assert len(lines) == 1 and f"127.0.0.1:{port}" in json.loads(lines[0])["error"], (command, proc.stdout)
            assert "another --port" in json.loads(lines[0])["error"]
            proc = subprocess.run([sys.executable, "-m", "weblica.cli", *command, "--port", port],
                                  capture_output=True, text=True, timeout=60)
            assert proc.returncode == 1 and proc.stderr.strip().count("\n") == 0, proc.stderr
            assert f"127.0.0.1:{port}" in proc.stderr and "Traceback" not in proc.stderr
