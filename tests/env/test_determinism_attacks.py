"""Attacks on the determinism layer (weblica/browser/determinism.py) from what a page can read about the
machine it runs on: the same task, seed and actions must give the same page on any machine.

And on the fixed machine in the determinism layer (weblica/browser/determinism.js): what a
page reads about the machine and the network from places other than the top frame's navigator: iframes
(an about:blank one made by script, a srcdoc one), a secure context (a page on 127.0.0.1, as replayed
https pages are: deviceMemory, navigator.userAgentData and storage.estimate exist only there), the
network information Chromium adds noise to, and workers. Two fresh contexts must read the same."""
from __future__ import annotations
import asyncio
import os
import http.server
import threading
import pytest
from weblica.browser.determinism import DEFAULT_EPOCH_MS

_MACHINE_JS = """() => [navigator.hardwareConcurrency, navigator.deviceMemory ?? null,
                        Object.getOwnPropertyDescriptor(Navigator.prototype, 'hardwareConcurrency') !== undefined]"""


def _read_machine(deterministic: bool) -> list:
    from playwright.async_api import async_playwright

    from weblica.browser.determinism import make_deterministic
    from weblica.browser.launcher import launch_browser

    async def go() -> list:
        async with async_playwright() as pw:
            browser = await launch_browser(pw)
            try:
                context = await browser.new_context()
                if deterministic:
                    await make_deterministic(context, 0)
                page = await context.new_page()
                await page.set_content("<p>machine</p>")
                return await page.evaluate(_MACHINE_JS)
            finally:
                await browser.close()
    return asyncio.run(go())


def test_a_page_reads_the_layer_s_machine_not_this_one():
    # without the layer Chromium reports this machine's logical cores (2 on the shared box, 16 on the GPU one)
    assert _read_machine(False)[0] in {os.cpu_count(), len(os.sched_getaffinity(0))}
    cores, memory, native = _read_machine(True)
    assert cores == 4 and memory in (None, 8) and native  # still Navigator's own property, as without the layer


# ---- the fixed machine ------------------------------------------------------------
_READ = """async () => {
  const out = {};
  const machine = (w) => [w.navigator.hardwareConcurrency, w.navigator.deviceMemory ?? null, w.Date.now(),
                          w.Math.random(), w.performance.now()];
  out.top = machine(window);
  const blank = document.createElement('iframe'); document.body.appendChild(blank);
  out.blank = machine(blank.contentWindow);
  const doc = document.createElement('iframe'); doc.srcdoc = '<p>x</p>'; document.body.appendChild(doc);
  await new Promise((r) => { doc.onload = r; });
  out.srcdoc = machine(doc.contentWindow);
  const c = navigator.connection;
  out.net = c ? [c.effectiveType, c.downlink, c.rtt, c.saveData] : null;
  out.quota = navigator.storage ? (await navigator.storage.estimate()).quota : null;
  const u = navigator.userAgentData;
  out.ua = u ? await u.getHighEntropyValues(['architecture', 'bitness', 'platformVersion', 'model']) : null;
  out.secure = isSecureContext;
  const src = 'postMessage([navigator.hardwareConcurrency, Date.now()])';
  const worker = new Worker(URL.createObjectURL(new Blob([src], {type: 'text/javascript'})));
  out.worker = await new Promise((r) => { worker.onmessage = (e) => r(e.data); });
  return out;
}"""


class _Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(b"<!doctype html><title>m</title><p>machine</p>")

    def log_message(self, *args: object) -> None:
        pass


def _read(contexts: int = 2) -> list[dict]:
    from playwright.async_api import async_playwright

    from weblica.browser.determinism import make_deterministic
    from weblica.browser.launcher import launch_browser

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()

    async def go() -> list[dict]:
        async with async_playwright() as pw:
            browser = await launch_browser(pw)
            try:
                out = []
                for _ in range(contexts):
                    context = await browser.new_context()
                    await make_deterministic(context, 7)
                    page = await context.new_page()
                    await page.goto(f"http://127.0.0.1:{server.server_port}/")  # a secure context
                    out.append(await page.evaluate(_READ))
                    await context.close()
                return out
            finally:
                await browser.close()
    try:
        return asyncio.run(go())
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def reads() -> list[dict]:
    return _read()


def test_every_frame_reads_the_layer_s_machine_and_clock(reads):
    for read in reads:
        assert read["secure"] is True
        for frame in ("top", "blank", "srcdoc"):
            cores, memory, now, _, _ = read[frame]
            assert (cores, memory, now) == (4, 8, DEFAULT_EPOCH_MS), (frame, read[frame])


def test_two_contexts_read_the_same_frames_network_and_storage(reads):
    first, second = ({k: v for k, v in r.items() if k != "worker"} for r in reads)
    assert first == second


def test_the_network_is_fixed_where_chromium_adds_noise(reads):
    # without the layer the downlink read 9.9 in one context and 10 in the next on one machine
    assert reads[0]["net"] == ["4g", 10, 50, False]
    assert reads[0]["quota"] == 10737418240


def test_user_agent_client_hints_name_no_machine_detail(reads):
    ua = reads[0]["ua"]
    assert ua is not None and ua["platformVersion"] == "" and ua["model"] == ""


@pytest.mark.xfail(strict=True, reason="the layer is an init script, which Chromium runs in frames, not in "
                   "workers: a dedicated worker reads this machine's core count (2 here, 16 on the GPU machine), "
                   "the wall clock and an unseeded Math.random. No shipped or generated page starts a worker "
                   "(tests/synth/test_validation_seed_attacks.py); a recorded site that does is not deterministic")
def test_a_worker_reads_the_layer_s_machine_and_clock(reads):
    assert reads[0]["worker"] == [4, DEFAULT_EPOCH_MS]
