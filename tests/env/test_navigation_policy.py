"""The navigation policy against a hostile agent and hostile pages: real Chromium, real servers, real
mitmproxy. Every probe must be refused with feedback that says so, and a listener standing where the
probe points must see no connection at all."""
import asyncio
import json
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from flask import Flask, Response, redirect, request

sys.path.insert(0, str(Path(__file__).parents[1]))

from sites import LocalServer  # noqa: E402

from weblica.browser.navigation import NavigationPolicy, host_address, parse_ipv4_host  # noqa: E402
from weblica.env.backend import EPISODE_HEADER, LiveBackend, NetworkConfig  # noqa: E402
from weblica.env.browser_env import WebEnv  # noqa: E402
from weblica.env.task import Task, TaskError  # noqa: E402

VICTIM_HOST = "127.0.0.2"  # a loopback address no env server is configured on
PASSWD = "file:///etc/passwd"


class Victim:
    """Counts TCP connections accepted on VICTIM_HOST (answering each with a tiny page) and UDP
    datagrams received on the same port number."""

    def __init__(self, host: str = VICTIM_HOST):
        self.tcp = socket.create_server((host, 0))
        self.port = self.tcp.getsockname()[1]
        self.udp = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind((host, self.port))
        for s in (self.tcp, self.udp):
            s.settimeout(0.1)
        self.accepted = self.datagrams = 0
        self._stop = False
        self._threads = [threading.Thread(target=f, daemon=True) for f in (self._tcp_loop, self._udp_loop)]
        for t in self._threads:
            t.start()

    def url(self, path: str = "/") -> str:
        host = f"[{self.tcp.getsockname()[0]}]" if self.tcp.family == socket.AF_INET6 else self.tcp.getsockname()[0]
        return f"http://{host}:{self.port}{path}"

    def _tcp_loop(self):
        while not self._stop:
            try:
                conn, _ = self.tcp.accept()
            except OSError:
                continue
            self.accepted += 1
            try:
                conn.settimeout(1)
                conn.recv(4096)
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 23\r\n"
                             b"Connection: close\r\n\r\n<html>the secret</html>")
            except OSError:
                pass
            conn.close()

    def _udp_loop(self):
        while not self._stop:
            try:
                self.udp.recvfrom(4096)
                self.datagrams += 1
            except OSError:
                continue

    def close(self):
        self._stop = True
        for t in self._threads:
            t.join(2)
        self.tcp.close()
        self.udp.close()


def hostile_app(victim: Victim) -> Flask:
    """Pages that try to leave the sandbox on their own."""
    app = Flask(__name__)
    v = victim.url("/")
    html = {
        "/links": f"""<html><body style="margin:0">
<a id="l1" href="{v}" style="position:absolute;left:10px;top:10px;width:200px;height:40px;display:block">victim</a>
<a id="l2" href="{PASSWD}" style="position:absolute;left:10px;top:80px;width:200px;height:40px;display:block">passwd</a>
<a id="l3" href="/redirect?to={v}" style="position:absolute;left:10px;top:150px;width:200px;height:40px;display:block">r1</a>
<a id="l4" href="/redirect?to={PASSWD}" style="position:absolute;left:10px;top:220px;width:200px;height:40px;display:block">r2</a>
<a id="l5" href="{v}" target="_blank" style="position:absolute;left:10px;top:290px;width:200px;height:40px;display:block">new tab</a>
</body></html>""",
        "/subresources": f"""<html><body><img src="{v}img.png"><iframe src="{v}frame"></iframe>
<iframe src="{PASSWD}"></iframe><img src="{PASSWD}"><script>fetch("{v}api").catch(() => {{}});
navigator.sendBeacon && navigator.sendBeacon("{v}beacon", "x");</script></body></html>""",
        "/popup": f"""<html><body><button onclick="window.open('{v}popup')"
style="position:absolute;left:0;top:0;width:300px;height:100px">open</button></body></html>""",
        "/plain": "<html><body>plain page</body></html>",
    }

    @app.get("/<page>")
    def page(page):
        if page == "redirect":
            return redirect(request.args["to"], 302)
        return Response(html["/" + page], mimetype="text/html")

    return app


class PolicyBackend:
    """The network of a live/record episode with its configured server on 127.0.0.1 (direct)."""

    def __init__(self, policy: NavigationPolicy):
        self.policy = policy

    async def begin(self, task, episode_id, seed):
        return NetworkConfig(extra_headers={EPISODE_HEADER: episode_id}, policy=self.policy)

    async def state(self, task, episode_id):
        return None

    async def end(self, task, episode_id):
        return None


@pytest.fixture(scope="module")
def victim():
    v = Victim()
    yield v
    v.close()


@pytest.fixture(scope="module")
def hostile(victim):
    with LocalServer(hostile_app(victim)) as server:
        yield server


ENFORCERS = ["gateway", "route"]


def live_env(hostile, allow_private=False, enforcer="gateway"):
    """An env in live mode whose one configured server is the hostile site: behind the live gateway
    (as `weblica eval --live` runs), or direct with the browser's route alone (a backend without a proxy)."""
    policy = NavigationPolicy("live", allow_private=allow_private,
                              allowed_endpoints=frozenset({("127.0.0.1", hostile.port)}))
    backend = LiveBackend(policy=policy) if enforcer == "gateway" else PolicyBackend(policy)
    return WebEnv(backends={"probe": backend})


def task(url, kind="probe", source=None, **extra):
    """A task starting at `url`. One that is no http(s) URL is refused when a task file loads (weblica.env.task):
    it is set on the loaded task here, as code building Task objects could, so the env's own refusal is tested."""
    from dataclasses import replace

    loaded = Task.from_dict({"id": "nav", "source": source or {"kind": kind}, "start_url": "https://loaded.invalid/",
                             "instruction": "leave the sandbox", "max_steps": 30, **extra})
    return replace(loaded, start_url=url)


def act(name, **args):
    return {"name": name, "arguments": args}


def run(coro):
    return asyncio.run(coro)


# ---- the policy itself -------------------------------------------------------------------------

def test_browser_forms_of_addresses_are_recognised():
    assert str(parse_ipv4_host("127.1")) == "127.0.0.1"
    assert str(parse_ipv4_host("2130706433")) == "127.0.0.1"
    assert str(parse_ipv4_host("0x7f.0.0.1")) == "127.0.0.1"
    assert str(parse_ipv4_host("0251.0376.0251.0376")) == "169.254.169.254"
    assert parse_ipv4_host("example.com") is None and parse_ipv4_host("1.2.3.4.nip.io") is None
    assert str(host_address("[::ffff:169.254.169.254]")) == "::ffff:a9fe:a9fe"
    live = NavigationPolicy("live")
    for url in ("http://169.254.169.254/latest/meta-data/", "http://[fe80::1]/", "http://10.0.0.1/",
                "http://172.16.5.4/", "http://192.168.1.1/", "http://[fd00::1]/", "http://100.64.0.1/",
                "http://0.0.0.0/", "http://[::ffff:169.254.169.254]/", "http://0251.0376.0251.0376/",
                "http://foo.localhost/", "http://127.0.0.1:9/"):
        assert live.url_refusal(url), url
    assert live.url_refusal("https://example.com/") is None
    assert NavigationPolicy("live", allow_private=True).url_refusal("http://169.254.169.254/") is None
    for scheme_url in (PASSWD, "FILE:///etc/passwd", " fi\tle:///etc/passwd", "javascript:alert(1)",
                       "chrome://version", "view-source:http://a.test/", "data:text/html,x", "blob:http://a/1"):
        for policy in (live, NavigationPolicy("sandbox"), NavigationPolicy("local", allow_private=True)):
            assert "outside the sandbox" in policy.url_refusal(scheme_url), scheme_url
    assert NavigationPolicy("sandbox").url_refusal("about:blank") is None


# ---- goto_url and start_url --------------------------------------------------------------------

@pytest.mark.parametrize("enforcer", ENFORCERS)
def test_goto_url_refusals_make_no_connection(hostile, victim, enforcer):
    async def go():
        env = live_env(hostile, enforcer=enforcer)
        try:
            await env.reset(task(hostile.url + "/plain"))
            before = victim.accepted
            feedback = {}
            for url in (PASSWD, victim.url("/"), "http://169.254.169.254/latest/meta-data/",
                        f"http://2130706434:{victim.port}/", "javascript:document.title='x'"):
                obs, *_ = await env.step(act("goto_url", url=url))
                feedback[url] = obs.feedback[0]
            assert obs.url == hostile.url + "/plain"  # never left the page
            return feedback, victim.accepted - before
        finally:
            await env.close()

    feedback, connections = run(go())
    assert connections == 0
    assert feedback[PASSWD].startswith(f"Refused: 'goto_url' to {PASSWD}: file:// URLs are outside the sandbox")
    assert "127.0.0.2 is a loopback address, outside the sandbox" in feedback[victim.url("/")]
    assert "169.254.169.254 is a link-local address" in feedback["http://169.254.169.254/latest/meta-data/"]
    assert all(f.startswith("Refused:") for f in feedback.values()), feedback


def test_allow_private_reaches_the_victim(hostile, victim):
    async def go():
        env = live_env(hostile, allow_private=True)
        try:
            await env.reset(task(hostile.url + "/plain"))
            before = victim.accepted
            obs, *_ = await env.step(act("goto_url", url=victim.url("/")))
            return obs, victim.accepted - before
        finally:
            await env.close()

    obs, connections = run(go())
    assert connections >= 1 and obs.feedback[0].startswith("Success: opened")


@pytest.mark.parametrize("enforcer", ENFORCERS)
def test_start_url_outside_the_sandbox_is_a_bad_task(hostile, victim, enforcer):
    async def go():
        env = live_env(hostile, enforcer=enforcer)
        errors = []
        try:
            for url in (PASSWD, victim.url("/"), "http://169.254.169.254/"):
                with pytest.raises(TaskError) as info:
                    await env.reset(task(url))
                errors.append(str(info.value))
            # a start page that redirects out of the sandbox is refused as well (the proxy-less live
            # browser sees only a redirect's first hop, so this one goes through the URL check itself)
            return errors
        finally:
            await env.close()

    before = victim.accepted
    errors = run(go())
    assert victim.accepted == before
    assert "start_url file:///etc/passwd is refused: file:// URLs are outside the sandbox" in errors[0]
    assert "loopback address" in errors[1] and "link-local address" in errors[2]


def test_weblica_run_refuses_a_file_start_url_when_the_tasks_load(tmp_path):
    """A file: start URL is a bad task file (issue 42: a `file:line` error when tasks load), not an
    env_error episode that counts against success; no browser starts, nothing of the file is rendered."""
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"id": "passwd", "start_url": PASSWD, "instruction": "read it",
                                 "oracle": [act("done", answer="x")]}) + "\n")
    out = tmp_path / "run"
    proc = subprocess.run([sys.executable, "-m", "weblica.cli", "run", "--tasks", str(tasks), "--out", str(out),
                           "--json"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    error = json.loads(proc.stdout)["error"]
    assert f"{tasks}:1: task passwd: 'start_url' must be an http(s) URL" in error
    assert not out.exists()


# ---- what pages do: links, redirects, new tabs, subresources -----------------------------------

@pytest.mark.parametrize("enforcer", ENFORCERS)
def test_links_redirects_and_new_tabs_are_refused(hostile, victim, enforcer):
    async def go():
        env = live_env(hostile, enforcer=enforcer)
        feedback = []
        try:
            for y in (30, 100, 170, 240, 310):
                await env.reset(task(hostile.url + "/links"))
                obs, *_ = await env.step(act("click", x=50, y=y))
                if "Refused" not in obs.feedback[0] and y == 310:
                    # a new tab may open after the click's settle; its refusal is told with the next step
                    later, *_ = await env.step(act("wait", seconds=1))
                    obs.feedback[0] += " " + later.feedback[0]
                feedback.append((obs.feedback[0], obs.url, len(obs.tabs)))
            await env.reset(task(hostile.url + "/popup"))
            obs, *_ = await env.step(act("click", x=50, y=50))
            feedback.append((obs.feedback[0], obs.url, len(obs.tabs)))
            return feedback
        finally:
            await env.close()

    before = victim.accepted
    feedback = run(go())
    link, file_link, redirect_victim, redirect_file, new_tab, popup = feedback
    assert "Refused: a navigation to " + victim.url("/") + " was blocked: 127.0.0.2 is a loopback" in link[0]
    if enforcer == "route":   # behind the gateway the tab shows its "Refused by weblica" page
        assert "127.0.0.2" not in link[1]
    # the new tab shows Chromium's "blocked" page under the refused URL
    assert "Refused: a navigation to " + victim.url("/") in new_tab[0]
    assert "Refused: a navigation to " + victim.url("/popup") in popup[0]
    assert file_link[1] == hostile.url + "/links"   # Chromium itself never opens file: from a web page
    assert "passwd" not in redirect_file[1]          # nor follows a redirect to it
    if enforcer == "gateway":
        assert "Refused: a navigation to " + victim.url("/") in redirect_victim[0]
        assert victim.accepted == before, feedback
    else:  # the direct route sees no redirect hop: see the next test
        assert victim.accepted == before + (1 if "127.0.0.2" in redirect_victim[1] else 0), feedback


@pytest.mark.parametrize("enforcer", [
    "gateway",
    pytest.param("route", marks=pytest.mark.xfail(strict=True, reason=(
        "a backend without a proxy: Playwright does not route a redirect's second hop, so a page's 302 to a "
        "private address is followed; live mode runs behind the gateway, record behind its proxy, synth "
        "and replay never dial out")))])
def test_live_redirect_to_a_private_address_is_refused(hostile, victim, enforcer):
    async def go():
        env = live_env(hostile, enforcer=enforcer)
        try:
            await env.reset(task(hostile.url + "/links"))
            await env.step(act("click", x=50, y=170))
        finally:
            await env.close()

    before = victim.accepted
    run(go())
    assert victim.accepted == before


@pytest.mark.parametrize("enforcer", ENFORCERS)
def test_subresources_are_refused(hostile, victim, enforcer):
    async def go():
        env = live_env(hostile, enforcer=enforcer)
        try:
            await env.reset(task(hostile.url + "/plain"))
            obs, *_ = await env.step(act("goto_url", url=hostile.url + "/subresources"))
            return obs
        finally:
            await env.close()

    before = victim.accepted
    obs = run(go())
    assert victim.accepted == before
    assert "Refused: a request to" in obs.feedback[0]
    if enforcer == "route":  # each request refused in the browser is counted (behind the gateway, the
        # answers a page cannot read, such as an <img>'s or a cross-origin fetch's, say nothing)
        assert "more request(s) outside the sandbox" in obs.feedback[0]


# ---- direct connections: WebRTC ----------------------------------------------------------------

RTC = """async (url) => { const pc = new RTCPeerConnection({iceServers: [{urls: url}]});
  pc.createDataChannel('x'); await pc.setLocalDescription(await pc.createOffer());
  await new Promise(r => setTimeout(r, 1500)); pc.close(); return true; }"""


def test_webrtc_sends_nothing(hostile, victim):
    async def go():
        env = live_env(hostile, allow_private=True)   # even where private addresses are allowed
        try:
            await env.reset(task(hostile.url + "/plain"))
            page = env._tabs.page
            clock_free = page.evaluate(RTC, f"stun:{VICTIM_HOST}:{victim.port}")
            await asyncio.wait_for(clock_free_or_advance(env, clock_free), 20)
        finally:
            await env.close()

    async def clock_free_or_advance(env, pending):
        task_ = asyncio.ensure_future(pending)
        while not task_.done():  # the page's timers run on the env's virtual clock
            await env._tabs.settle(500)
        return await task_

    before_udp, before_tcp = victim.datagrams, victim.accepted
    run(go())
    assert victim.datagrams == before_udp and victim.accepted == before_tcp


# ---- synth: the site server is the only thing the browser reaches -------------------------------

def test_synth_episode_reaches_nothing_but_the_site_server(victim):
    from weblica.env.sources import open_backends

    root = Path(__file__).resolve().parents[2] / "sites" / "checkout-groceries-0bebe201"
    synth = Task.from_dict(json.loads((root / "tasks.jsonl").read_text().splitlines()[0]))
    synth.max_steps = 30
    probes = f"""() => {{ new Image().src = "{victim.url('/img')}"; fetch("{victim.url('/api')}").catch(() => {{}});
      window.open("{victim.url('/popup')}"); const f = document.createElement("iframe");
      f.src = "{victim.url('/frame')}"; document.body.appendChild(f);
      const pc = new RTCPeerConnection({{iceServers: [{{urls: "stun:{VICTIM_HOST}:{victim.port}"}}]}});
      pc.createDataChannel("x"); pc.createOffer().then(o => pc.setLocalDescription(o)); return true; }}"""

    async def go():
        async with open_backends([synth]) as backends:
            env = WebEnv(backends=backends)
            try:
                await env.reset(synth, seed=0)
                refused, *_ = await env.step(act("goto_url", url=PASSWD))
                meta, *_ = await env.step(act("goto_url", url="http://169.254.169.254/latest/meta-data/"))
                direct, *_ = await env.step(act("goto_url", url=victim.url("/")))
                await env.step(act("go_back"))
                await env._tabs.page.evaluate(probes)   # a hostile page script
                await env.step(act("wait", seconds=2))
                return refused, meta, direct
            finally:
                await env.close()

    before_tcp, before_udp = victim.accepted, victim.datagrams
    refused, meta, direct = run(go())
    assert refused.feedback[0].startswith("Refused: 'goto_url' to file:///etc/passwd: file:// URLs are outside")
    # the site server answers for every host (nothing is dialled), so these pages are its own errors
    assert victim.accepted == before_tcp and victim.datagrams == before_udp


# ---- record: the recording proxy refuses private upstreams unless allowed ----------------------

def loopback_alias():
    """A host name this machine's resolver maps to 127.0.0.1 (not `localhost`, which is special)."""
    for name in ("vm", "runsc", "ip6-localhost", socket.gethostname()):
        try:
            if {i[4][0] for i in socket.getaddrinfo(name, 80, type=socket.SOCK_STREAM)} <= {"127.0.0.1"}:
                return name
        except OSError:
            continue
    return None


@pytest.mark.parametrize("allow_private", [False, True])
def test_record_refuses_private_upstreams_unless_allowed(hostile, victim, tmp_path, allow_private):
    from click.testing import CliRunner

    from weblica.cache.store import Store
    from weblica.cli import get_cli

    second = Victim("127.0.0.1")   # loopback, but not a configured server
    alias = loopback_alias()
    actions = [act("click", x=50, y=170)]   # a link to the site's redirect to 127.0.0.2
    if alias:
        actions.append(act("goto_url", url=f"http://{alias}:{second.port}/"))
    (tmp_path / "actions.json").write_text(json.dumps(actions))
    args = ["record", "http://site.test/links", "--actions", str(tmp_path / "actions.json"), "--runs", "1",
            "--resolve", f"site.test:80:127.0.0.1:{hostile.port}", "--out", str(tmp_path / "rec"), "--json"]
    try:
        before, before_second = victim.accepted, second.accepted
        result = CliRunner().invoke(get_cli(), args + (["--allow-private"] if allow_private else []),
                                    catch_exceptions=False)
        hits, hits_second = victim.accepted - before, second.accepted - before_second
    finally:
        second.close()
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output.strip().splitlines()[-1])
    store = Store.open_dir(tmp_path / "rec")
    try:
        urls = [e.url for e in store.exchanges()]
    finally:
        store.close()
    assert "http://site.test/links" in urls   # the --resolve target still works
    if allow_private:
        assert hits >= 1 and (not alias or hits_second >= 1)
        assert not [e for e in summary["errors"] if "refused" in e]
        return
    assert hits == 0 and hits_second == 0
    refused = [e for e in summary["errors"] if "is refused" in e]
    assert any("127.0.0.2" in e and "loopback address" in e for e in refused), summary["errors"]
    if alias:
        assert any(f"{alias} (127.0.0.1) is a loopback address" in e for e in refused), summary["errors"]
    assert all("--allow-private" in e for e in refused)

    # replay the recording: the recorded redirect points at the victim, and nothing reaches it
    from weblica.cache.backend import CacheBackend

    cached = task("http://site.test/links", kind="cache", source={"kind": "cache", "recording": str(tmp_path / "rec")})

    async def replay():
        backend = CacheBackend([tmp_path / "rec"], rules_dirs=[], log_misses=False)
        env = WebEnv(backends={"cache": backend})
        try:
            await env.reset(cached)
            await env.step(act("click", x=50, y=170))
            obs, *_ = await env.step(act("goto_url", url=victim.url("/")))
            passwd, *_ = await env.step(act("goto_url", url=PASSWD))
            return backend.stats.outbound_attempts, passwd
        finally:
            await env.close()
            await backend.stop()

    before = victim.accepted
    outbound, passwd = run(replay())
    assert victim.accepted == before and outbound == 0
    assert passwd.feedback[0].startswith("Refused: 'goto_url' to file:///etc/passwd: file:// URLs")


# ---- the env server: the probe of the issue ------------------------------------------------------

def test_env_server_refuses_file_urls(site):
    import httpx
    from werkzeug.serving import make_server

    from weblica.env.server import EnvService, create_app

    service = EnvService(max_sessions=1)
    srv = make_server("127.0.0.1", 0, create_app(service), threaded=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        client = httpx.Client(base_url=f"http://127.0.0.1:{srv.server_port}", timeout=60)
        r = client.post("/reset", json={"task": {"id": "p", "start_url": PASSWD, "instruction": "read"}})
        # refused as the task loads: a start page must be an http(s) URL (weblica.env.task)
        assert r.status_code == 400 and "'start_url' must be an http(s) URL" in r.json()["error"]
        r = client.post("/reset", json={"task": {"id": "p", "start_url": site.url + "/", "instruction": "x"}})
        sid = r.json()["session_id"]
        r = client.post("/step", json={"session_id": sid, "action": [act("goto_url", url=PASSWD)]})
        obs = r.json()["observation"]
        assert obs["feedback"][0].startswith("Refused: 'goto_url' to file:///etc/passwd: file:// URLs are outside")
        assert obs["url"] == site.url + "/"
    finally:
        srv.shutdown()
        service.shutdown()


# ---- the live gateway --------------------------------------------------------------------------

def test_live_gateway_refuses_names_that_resolve_to_private_addresses(hostile):
    alias = loopback_alias()
    if alias is None:
        pytest.skip("no host name here resolves to 127.0.0.1 besides localhost")
    second = Victim("127.0.0.1")   # loopback, on a port that is not the configured server's

    async def go():
        env = live_env(hostile)
        try:
            await env.reset(task(hostile.url + "/plain"))
            obs, *_ = await env.step(act("goto_url", url=f"http://{alias}:{second.port}/"))
            return obs
        finally:
            await env.close()

    try:
        obs = run(go())
        assert second.accepted == 0
    finally:
        second.close()
    assert obs.feedback[0].startswith(f"Refused: 'goto_url' to http://{alias}:{second.port}/: {alias} "
                                      "(127.0.0.1) is a loopback address, outside the sandbox")


def test_live_start_page_redirecting_out_of_the_sandbox_is_a_bad_task(hostile, victim):
    async def go():
        env = live_env(hostile)
        try:
            with pytest.raises(TaskError) as info:
                await env.reset(task(hostile.url + "/redirect?to=" + victim.url("/")))
            return str(info.value)
        finally:
            await env.close()

    before = victim.accepted
    error = run(go())
    assert victim.accepted == before and "127.0.0.2 is a loopback address, outside the sandbox" in error


def test_live_gateway_forwards_forms_and_tunnels(site, victim):
    from weblica.browser.gateway import LiveGateway

    policy = NavigationPolicy("live", allowed_endpoints=frozenset({("127.0.0.1", site.port)}))

    async def go():
        env = WebEnv(backends={"probe": LiveBackend(policy=policy)})
        try:
            await env.reset(task(site.url + "/form"))
            obs, *_ = await env.step(act("type", text="through the gateway", x=200, y=60, enter=True))
            return obs
        finally:
            await env.close()

    obs = run(go())
    assert obs.url == site.url + "/submit" and obs.tabs[0].title == "Done", obs.feedback
    import httpx

    assert "through the gateway" in httpx.get(site.url + "/__state").json()["submitted"]  # the POST body too

    gateway = LiveGateway(policy).start()
    try:
        def tunnel(target):
            with socket.create_connection(("127.0.0.1", gateway.port), timeout=5) as s:
                s.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
                status = s.recv(4096).split(b"\r\n")[0]
                if b" 200 " not in status:
                    return status, b""
                s.sendall(b"GET /api/data HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                body = b""
                while chunk := s.recv(4096):
                    body += chunk
                return status, body

        status, body = tunnel(f"127.0.0.1:{site.port}")
        assert b"fetched value" in body
        before = victim.accepted
        status, _ = tunnel(f"{VICTIM_HOST}:{victim.port}")
        assert b" 403 " in status and victim.accepted == before
        status, _ = tunnel("169.254.169.254:443")
        assert b" 403 " in status
        assert gateway.upstream_connections == 1 and len(gateway.refused) == 2
    finally:
        gateway.stop()


def test_cache_build_recording_refuses_private_upstreams(hostile, victim, tmp_path):
    """`weblica cache build` records an agent's browse through the same egress guard as `weblica record`:
    the oracle follows a link whose redirect points at another loopback address, and nothing reaches it."""
    from click.testing import CliRunner

    from weblica.cli import get_cli

    task_line = {"id": "links", "start_url": "http://site.test/links", "instruction": "Open the first link.",
                 "source": {"kind": "live"}, "max_steps": 3,
                 "checks": [{"type": "answer_match", "expected": "never", "mode": "exact"}],
                 "oracle": [act("click", x=50, y=170), act("done", answer="done")]}
    (tmp_path / "tasks.jsonl").write_text(json.dumps(task_line) + "\n")
    before = victim.accepted
    result = CliRunner().invoke(get_cli(), [
        "cache", "build", "--tasks", str(tmp_path / "tasks.jsonl"), "--policy", "oracle", "--runs", "1",
        "--resolve", f"site.test:80:127.0.0.1:{hostile.port}", "--out", str(tmp_path / "cache"), "--json"],
        catch_exceptions=False)
    assert victim.accepted == before, "the recorded browse reached an unconfigured loopback address"
    assert result.exit_code == 0, result.output
    from weblica.cache.build import task_slug

    result_file = tmp_path / "cache" / "results" / f"{task_slug('links')}.json"
    record = json.loads(result_file.read_text())["record"]
    assert any("127.0.0.2" in r and "--allow-private" in r for r in record["refused"]), record
