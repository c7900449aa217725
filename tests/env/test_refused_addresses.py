"""Issue 39, point 2: refused addresses are refused in every spelling, read as Chromium reads them.

Each spelling (the table's: circled and fullwidth digits, the ideographic full stop, `⓪`, NAT64 and
IPv4-compatible IPv6; and a generated set: integer, hex, octal and short forms, percent-encoding, other
Unicode digits and dots, userinfo, backslashes, embedded IPv4 in every IPv6 form) is checked against
Chromium itself: `new URL(spelling).hostname` in a real page must be the host `browser_host` reads, and
the policy must refuse it. In local mode a name is resolved and its addresses checked."""
from __future__ import annotations

import asyncio
import ipaddress
import time
from typing import Any

import pytest

from listener import Listener
from weblica.browser.navigation import NavigationPolicy, UnreadableHost, address_kind, browser_host
from weblica.browser.session import BrowserHost
from weblica.env.backend import DirectBackend
from weblica.env.browser_env import WebEnv
from weblica.env.task import Task

REFUSED_V4 = ["169.254.169.254", "0.0.0.0", "10.0.0.1", "192.168.1.1", "172.16.0.1", "100.64.0.1", "127.0.0.1"]
FULLWIDTH = str.maketrans("0123456789.", "０１２３４５６７８９．")
CIRCLED = str.maketrans("0123456789", "⓪①②③④⑤⑥⑦⑧⑨")
MATH_BOLD = str.maketrans("0123456789", "𝟎𝟏𝟐𝟑𝟒𝟓𝟔𝟕𝟖𝟗")
SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")

# the table's spellings, each pointing at an address the sandbox refuses
TABLE = ["①⑥⑨.②⑤④.①⑥⑨.②⑤④", "１６９．２５４．１６９．２５４", "169。254。169。254", "⓪",
         "[64:ff9b::a9fe:a9fe]", "[64:ff9b::169.254.169.254]", "[::169.254.169.254]", "[::a9fe:a9fe]"]


def v4_spellings(address: str) -> list[str]:
    a, b, c, d = (int(x) for x in address.split("."))
    value = int(ipaddress.IPv4Address(address))
    dotted = address
    out = [dotted, str(value), hex(value), hex(value).upper().replace("0X", "0x"), "0X" + format(value, "x"),
           ".".join(hex(x) for x in (a, b, c, d)), ".".join("0" + oct(x)[2:] for x in (a, b, c, d)),
           f"{a}.{b}.{c * 256 + d}", f"{a}.{(b << 16) + (c << 8) + d}", f"{a}.{hex(b)}.{c}.0{oct(d)[2:]}",
           dotted + ".", "0000" + oct(a)[2:] + "." + ".".join(map(str, (b, c, d))),
           dotted.translate(FULLWIDTH), dotted.translate(CIRCLED), dotted.translate(MATH_BOLD),
           dotted.translate(SUPERSCRIPT), dotted.replace(".", "。"), dotted.replace(".", "｡"),
           dotted.replace(".", "．"), "".join(f"%{ord(ch):02x}" for ch in dotted), dotted.replace(".", "%2e"),
           f"user:pass@{dotted}", f"{dotted}\t", str(value).translate(FULLWIDTH)]
    six = ipaddress.IPv6Address(f"::ffff:{address}")
    hi, lo = format(value >> 16, "x"), format(value & 0xFFFF, "x")
    out += [f"[::ffff:{dotted}]", f"[{six.exploded}]", f"[::ffff:{hi}:{lo}]", f"[::FFFF:{hi.upper()}:{lo}]",
            f"[64:ff9b::{dotted}]", f"[64:ff9b::{hi}:{lo}]", f"[64:ff9b:1::{hi}:{lo}]", f"[2002:{hi}:{lo}::1]",
            f"[::ffff:0:{dotted}]", f"[0:0:0:0:0:ffff:{dotted}]"]
    if value > 1:
        out += [f"[::{dotted}]", f"[::{hi}:{lo}]"]
    return out


V6 = ["[::1]", "[0:0:0:0:0:0:0:1]", "[fe80::1]", "[fc00::1]", "[fd12:3456::1]", "[::]", "[ff02::1]",
      "[FE80::abcd]", "[::0:1]"]


def generated() -> list[str]:
    spellings = list(TABLE) + list(V6)
    for address in REFUSED_V4:
        spellings += v4_spellings(address)
    return list(dict.fromkeys(spellings))


def urls(port: int = 8080) -> list[str]:
    return [f"http://{s}:{port}/" for s in generated()] + \
           [f"http:\\\\{s}:{port}/" for s in TABLE[:2]] + [f"HTTP:{s}/x" for s in TABLE[:2]]


async def chromium_hosts(candidates: list[str]) -> list[str | None]:
    """What Chromium's URL parser (the one navigation uses) reads as each URL's host, null when invalid."""
    host = BrowserHost()
    try:
        context = await host.new_context(0)
        page = await context.new_page()
        return await page.evaluate("""(urls) => urls.map(u => {
            try { const p = new URL(u); return p.protocol.startsWith('http') ? p.hostname : null; }
            catch (e) { return null; } })""", candidates)
    finally:
        await host.close()


def ours(url: str) -> str | None:
    try:
        read = browser_host(url)
    except UnreadableHost:
        return None
    return read[0] if read else None


@pytest.fixture(scope="module")
def readings() -> list[tuple[str, str | None]]:
    candidates = urls()
    return list(zip(candidates, asyncio.run(chromium_hosts(candidates))))


def test_the_generated_set_is_large_and_reads_as_chromium_reads_it(readings):
    assert len(readings) >= 250
    differs = [(u, chromium, ours(u)) for u, chromium in readings if ours(u) != chromium]
    assert not differs, differs[:10]


def test_no_generated_spelling_of_a_refused_address_passes(readings):
    live, local = NavigationPolicy("live"), NavigationPolicy("local")
    passed = []
    for url, chromium in readings:
        if chromium is None:  # the browser opens nothing there: refused as unreadable
            assert live.url_refusal(url), url
            continue
        address = ipaddress.ip_address(chromium.strip("[]"))
        kind = address_kind(address)
        assert kind is not None, (url, chromium)  # every spelling names a refused address
        if live.url_refusal(url) is None:
            passed.append(("live", url))
        if not kind.startswith("loopback") and local.url_refusal(url) is None:
            passed.append(("local", url))
    assert passed == []


def test_embedded_ipv4_forms_are_their_ipv4_address_and_public_ones_pass():
    live = NavigationPolicy("live")
    for host in ("[64:ff9b::8.8.8.8]", "[::ffff:8.8.8.8]", "[2002:808:808::1]", "[::8.8.8.8]", "８．８．８．８"):
        assert live.url_refusal(f"http://{host}/") is None, host
    assert "NAT64" in live.url_refusal("http://[64:ff9b::a9fe:a9fe]/")
    assert "link-local" in live.url_refusal("http://①⑥⑨.②⑤④.①⑥⑨.②⑤④/")
    assert live.url_refusal("http://exa_mple.test/") is None and live.url_refusal("http://bücher.test/") is None


# ---- what the browser really opens -------------------------------------------------------------------------

async def _goto_all(backend: DirectBackend, targets: list[str]) -> list[str]:
    env = WebEnv(backends={"local": backend})
    try:
        await env.reset(Task(id="spell", start_url="about:blank", instruction="x", max_steps=100), seed=0)
        feedback = []
        for url in targets:
            obs, *_ = await env.step({"name": "goto_url", "arguments": {"url": url}})
            feedback.append(obs.feedback[-1])
        return feedback
    finally:
        await env.close()


def test_goto_url_in_spellings_of_zero_reaches_no_listener_though_the_browser_would_connect():
    listener = Listener(0)
    port = listener.sock.getsockname()[1]
    targets = [f"http://⓪:{port}/", f"http://０:{port}/", f"http://0x0:{port}/", f"http://⓪。⓪。⓪。⓪:{port}/"]
    try:
        refused = asyncio.run(_goto_all(DirectBackend(), targets))
        time.sleep(0.3)
        reached_refused = listener.accepted
        # the control: the same URLs where addresses are not checked reach the listener, so each spelling
        # is one Chromium connects to
        asyncio.run(_goto_all(DirectBackend(allow_private=True), targets))
        time.sleep(0.3)
        reached_control = listener.accepted - reached_refused
    finally:
        listener.close()
    assert reached_refused == 0
    assert all(f.startswith("Refused:") and "unspecified" in f for f in refused), refused
    assert reached_control >= len(targets)


def test_local_mode_resolves_names_and_checks_their_addresses():
    import socket

    name = socket.gethostname()  # a name of this machine: /etc/hosts maps it to a loopback address
    address = socket.getaddrinfo(name, 80, type=socket.SOCK_STREAM)[0][4][0]
    assert address_kind(address) == "loopback"
    served = NavigationPolicy("local", loopback_endpoints_only=True,
                              allowed_endpoints=frozenset({("127.0.0.1", 5000)}))

    async def check() -> list[Any]:
        return [await served.resolved_refusal(f"http://{name}:5001/"),
                await served.resolved_refusal(f"http://{name}:5000/"),
                served.url_refusal(f"http://{name}:5001/"),  # the name alone says nothing
                await NavigationPolicy("local").resolved_refusal(f"http://{name}:5001/"),
                await NavigationPolicy("local").resolved_refusal("http://no-such-name.invalid/")]
    refused_name, allowed_endpoint, unresolved, plain_local, unknown = asyncio.run(check())
    assert refused_name and "loopback service" in refused_name and "--local-origin" in refused_name
    assert allowed_endpoint is None and unresolved is None and plain_local is None and unknown is None
