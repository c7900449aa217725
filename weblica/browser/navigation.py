"""The navigation policy: which URLs an episode's browser may open, and its enforcement on a context.

An agent never leaves its sandbox. In every mode only http(s) URLs (and `about:blank`, where new tabs
start) are opened: no `file:`, `chrome:`, `javascript:`, `view-source:`, `data:`… Where traffic reaches
addresses directly (live and record modes, and local test servers), loopback other than the configured
servers, link-local, private and shared ranges are refused unless private addresses are allowed.

- `sandbox`: synth and replay. Every request goes to the env's own gateway (the site server or the
  replay proxy), which never dials out; the browser checks schemes only.
- `live`: live and record modes: loopback other than the configured servers, link-local, private and
  shared addresses are refused, names that resolve to them included.
- `local`: tasks served by local test servers on loopback: loopback is reachable; the agent's own
  navigations to other addresses are refused as in `live` (the pages are the operator's own).

Checks run in the env before `goto_url` and at reset (clear feedback, no navigation at all), and on
every connection in the proxy in front of the browser: the live gateway (`gateway.py`) or the recording
proxy (`weblica.cache.egress`) resolve the host, refuse a private address and connect to the address
they checked, so redirects, links, window.open, frames and subresources are covered, names included.
A context whose backend has no such proxy yet checks addresses gets a Playwright route on the URLs
matching `route_pattern()` (address literals, other schemes); it cannot see a redirect's later hops.
Launch flags (`launcher.py`) keep WebRTC and DNS prefetch from reaching the network beside the proxy.
"""
from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import unquote, urlsplit

ALLOWED_SCHEMES = frozenset({"http", "https"})
# Pages the browser itself opens: new tabs start blank.
INTERNAL_URLS = frozenset({"about:blank"})
MODES = ("sandbox", "live", "local")
ALLOW_HINT = "pass --allow-private to reach private addresses"
REFUSED_HEADER = "X-Weblica-Refused"  # on a proxy's answer to a request it refused: why

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
# (network, what it is): the first match names the refusal. IPv4-mapped IPv6 is checked as IPv4.
_RANGES: tuple[tuple[Any, str], ...] = tuple((ipaddress.ip_network(net), kind) for net, kind in (
    ("127.0.0.0/8", "loopback"), ("::1/128", "loopback"),
    ("169.254.0.0/16", "link-local"), ("fe80::/10", "link-local"),
    ("10.0.0.0/8", "private"), ("172.16.0.0/12", "private"), ("192.168.0.0/16", "private"),
    ("fc00::/7", "private"), ("100.64.0.0/10", "shared (carrier-grade NAT)"),
    ("0.0.0.0/8", "unspecified"), ("::/128", "unspecified"),
    ("224.0.0.0/4", "multicast"), ("ff00::/8", "multicast"), ("255.255.255.255/32", "broadcast"),
))
# What Chromium sends for refusable URLs, in canonical form (hosts lowercased, IPv4 dotted decimal,
# IPv6 bracketed): another scheme, an address literal, or a *.localhost name. Written for both Python
# and JavaScript regex engines: Playwright matches it in its driver.
_ADDRESS_URL = r"https?://(?:[^/?#@]*@)?(?:\[|[0-9.]+(?:[:/?#]|$)|(?:[^/?#:]*\.)?localhost\.?(?:[:/?#]|$))"
_OTHER_SCHEME = r"(?!https?:)"


class NavigationRefused(ValueError):
    """A URL the policy does not let the browser open; the message says why."""


def parse_ipv4_host(host: str) -> ipaddress.IPv4Address | None:
    """A host written as an IPv4 number the way browsers read it (`127.1`, `0x7f.0.0.1`, `2130706433`,
    `0177.0.0.1`), or None when it is a name."""
    parts = host.split(".")
    if parts and parts[-1] == "":
        parts.pop()
    if not parts or len(parts) > 4:
        return None
    numbers = []
    for part in parts:
        try:
            if part[:2].lower() == "0x":
                numbers.append(int(part[2:] or "0", 16))
            elif len(part) > 1 and part.startswith("0"):
                numbers.append(int(part, 8))
            else:
                numbers.append(int(part, 10))
        except ValueError:
            return None
    if any(n > 255 for n in numbers[:-1]) or numbers[-1] >= 256 ** (5 - len(numbers)):
        return None
    value = numbers[-1]
    for i, n in enumerate(numbers[:-1]):
        value += n << (8 * (3 - i))
    return ipaddress.IPv4Address(value)


def host_address(host: str) -> IPAddress | None:
    """The address a URL host denotes without DNS: an IPv4 or IPv6 literal; `localhost` names loopback."""
    host = unquote(host).strip().lower().rstrip(".")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if host == "localhost" or host.endswith(".localhost"):
        return ipaddress.IPv4Address("127.0.0.1")
    if ":" in host:
        try:
            return ipaddress.IPv6Address(host.split("%")[0])
        except ValueError:
            return None
    return parse_ipv4_host(host)


def address_kind(address: IPAddress | str) -> str | None:
    """What kind of non-public address this is (loopback, link-local, private…), or None if public."""
    ip = ipaddress.ip_address(address) if isinstance(address, str) else address
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    for network, kind in _RANGES:
        if ip.version == network.version and ip in network:
            return kind
    return None


def _clean(url: str) -> str:
    # as browsers do: leading/trailing C0 controls and spaces go, tabs and newlines anywhere go
    return re.sub(r"[\t\n\r]", "", url).strip("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x0b\x0c\x0e\x0f"
                                              "\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c"
                                              "\x1d\x1e\x1f ")


@dataclass(frozen=True)
class NavigationPolicy:
    """Which URLs one episode may open. `allowed_endpoints` are the configured servers: (host or
    address, port) pairs reachable even when loopback or private (record's --resolve targets)."""

    mode: str = "sandbox"
    allow_private: bool = False
    allowed_endpoints: frozenset[tuple[str, int]] = field(default_factory=frozenset)
    # the context's proxy checks every upstream address itself (record's proxy, the live gateway), so
    # the browser needs no route: a route would also change what the browser sends (see route_pattern)
    proxy_checks_addresses: bool = False

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"navigation mode {self.mode!r}: use one of {', '.join(MODES)}")

    @property
    def checks_addresses(self) -> bool:
        return self.mode != "sandbox" and not self.allow_private

    def url_refusal(self, url: str) -> str | None:
        """Why `url` may not be opened, or None when it may."""
        cleaned = _clean(url)
        if cleaned.lower() in INTERNAL_URLS:
            return None
        match = re.match(r"^([a-zA-Z][a-zA-Z0-9+.-]*):", cleaned)
        if not match:
            return f"{url!r} is not an absolute http(s) URL"
        scheme = match.group(1).lower()
        if scheme not in ALLOWED_SCHEMES:
            shown = f"{scheme}://" if scheme == "file" else f"{scheme}:"
            return f"{shown} URLs are outside the sandbox (only http and https are opened)"
        if not self.checks_addresses:
            return None
        try:
            parts = urlsplit(cleaned)
            host, port = parts.hostname or "", parts.port
        except ValueError:
            return f"{url!r} is not a valid URL"
        address = host_address(host)
        if address is None:
            return None
        return self.address_refusal(address, port or (443 if scheme == "https" else 80), host)

    def address_refusal(self, address: IPAddress | str, port: int, host: str | None = None) -> str | None:
        """Why a connection to `address:port` (reached for `host`) is refused, or None when allowed."""
        if not self.checks_addresses:
            return None
        kind = address_kind(address)
        if kind is None:
            return None
        if kind == "loopback" and self.mode == "local":
            return None
        names = {str(address), (host or "").lower().strip("[]")}
        if any((name, port) in self.allowed_endpoints for name in names if name):
            return None
        shown = f"{host} ({address})" if host and host.strip("[]") != str(address) else str(address)
        article = "an" if kind[0] in "aeiou" else "a"
        return f"{shown} is {article} {kind} address, outside the sandbox"

    def check(self, url: str) -> None:
        """Raise NavigationRefused when `url` may not be opened."""
        reason = self.url_refusal(url)
        if reason:
            raise NavigationRefused(reason)

    def route_pattern(self) -> re.Pattern[str] | None:
        """The URLs the browser hands to `url_refusal`, all others passing in Playwright's driver; None
        where the browser needs no route: in the sandbox every request meets the env's gateway, and
        Chromium itself refuses file: and other local schemes from web pages. (Any route costs: Playwright
        then pauses every request and turns the HTTP cache off; a synth goto_url step took 1.7-2x the CPU,
        and a recording made under a route lacked requests its replay then sent.) Local mode routes
        nothing either: its pages are the operator's own servers, and what the agent opens itself
        (goto_url, start_url) is checked before the browser sees it (a route cost a local page load
        +15-20% CPU)."""
        if self.checks_addresses and not self.proxy_checks_addresses and self.mode != "local":
            return re.compile(f"^(?:{_OTHER_SCHEME}|{_ADDRESS_URL})", re.IGNORECASE)
        return None


SANDBOX = NavigationPolicy("sandbox")


async def checked_addresses(policy: NavigationPolicy, host: str, port: int) -> tuple[list[str], str | None]:
    """The addresses a connection to `host:port` may use, each checked against `policy`: (addresses,
    None), or ([], why) when one of them is refused (a name resolving to a private address counts as
    that address). ([], None): the name does not resolve. A proxy connects to the checked address, so a
    second lookup cannot answer otherwise."""
    literal = host_address(host)  # an address literal, or a *.localhost name (always loopback)
    if literal is not None:
        addresses = [str(literal)]
    else:
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError):
            return [], None
        addresses = list(dict.fromkeys(str(info[4][0]).split("%")[0] for info in infos))
    for address in addresses:
        reason = policy.address_refusal(ipaddress.ip_address(address), port, host)
        if reason:
            return [], reason
    return addresses, None


def with_endpoints(policy: NavigationPolicy, urls: list[str] = (), endpoints: list[tuple[str, int]] = ()
                   ) -> NavigationPolicy:
    """`policy` that also reaches the servers of `urls` (their host and port) and `endpoints`."""
    extra = set(endpoints)
    for url in urls:
        parts = urlsplit(_clean(url))
        if parts.hostname:
            extra.add((parts.hostname.lower(), parts.port or (443 if parts.scheme == "https" else 80)))
    return replace(policy, allowed_endpoints=policy.allowed_endpoints | frozenset(extra))


@dataclass
class Refusal:
    url: str
    reason: str
    navigation: bool    # a tab's own navigation (a link, window.open, a redirect's first hop)

    def feedback(self) -> str:
        what = "a navigation to" if self.navigation else "a request to"
        return f"Refused: {what} {self.url} was blocked: {self.reason}."


def _is_page_navigation(request: Any) -> bool:
    """A tab's own navigation (not a frame's, not a subresource)."""
    if not request.is_navigation_request():
        return False
    try:
        return request.frame.parent_frame is None
    except Exception:  # a new tab's first request comes before Playwright knows its page
        return True


class NavigationGuard:
    """The policy enforced on one browser context: requests it refuses are aborted before they leave
    Chromium and kept, so the env can tell the agent what was blocked."""

    def __init__(self, policy: NavigationPolicy) -> None:
        self.policy = policy
        self.refused: list[Refusal] = []

    async def install(self, context: Any) -> "NavigationGuard":
        pattern = self.policy.route_pattern()
        if pattern is not None:
            await context.route(pattern, self._handle)
        elif self.policy.checks_addresses and self.policy.proxy_checks_addresses:
            # the proxy refuses; its answers say so (the live gateway's)
            context.on("response", self._proxy_refused)
        return self

    def _proxy_refused(self, response: Any) -> None:
        reason = response.headers.get(REFUSED_HEADER.lower())
        if reason:
            self.refused.append(Refusal(response.url, reason, _is_page_navigation(response.request)))

    async def _handle(self, route: Any) -> None:
        request = route.request
        reason = self.policy.url_refusal(request.url)
        if reason is None:
            await route.fallback()
            return
        self.refused.append(Refusal(request.url, reason, _is_page_navigation(request)))
        await route.abort("blockedbyclient")

    def take(self) -> list[Refusal]:
        """Refusals since the last call."""
        refused, self.refused = self.refused, []
        return refused

    def feedback(self) -> str:
        """One line for the agent about what the last action tried and the policy blocked ('' if none)."""
        refused = self.take()
        if not refused:
            return ""
        first = [r for r in refused if r.navigation] or refused
        more = len(refused) - 1
        return first[0].feedback() + (f" ({more} more request(s) outside the sandbox were blocked.)" if more else "")
