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

Hosts are read as Chromium reads them (`browser_host`): the authority after any run of `/` and `\\`,
percent-decoded, mapped by IDNA/UTS-46 (circled and fullwidth digits, ideographic full stops), and an
address when its last label is a number (`127.1`, `0x7f.1`). Addresses that embed a refused IPv4 address
(IPv4-mapped, IPv4-compatible, IPv4-translated, NAT64, 6to4) are refused as that address. In local mode a
name the agent opens is resolved and its addresses checked, as the proxies do for live mode.
"""
from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import unquote_to_bytes

import idna

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


class UnreadableHost(ValueError):
    """A URL whose host no browser reads: it is refused wherever addresses are checked."""


# what a host may not hold once mapped (the URL standard's forbidden domain code points)
_FORBIDDEN_HOST = re.compile(r"[\x00-\x20#%/:<>?@\[\\\]^|\x7f]")
_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*):")
_NUMBER_LABEL = re.compile(r"^(?:[0-9]+|0[xX][0-9a-fA-F]*)$")


def _ascii_host(host: str) -> str:
    """`host` (percent-decoded) as Chromium canonicalizes a name: IDNA/UTS-46 mapping (non-transitional,
    no STD3 rules), lowercase, each non-ASCII label in punycode. UnreadableHost when no browser reads it."""
    try:
        mapped = idna.uts46_remap(host, std3_rules=False, transitional=False)
    except (idna.IDNAError, UnicodeError, ValueError) as exc:
        raise UnreadableHost(f"the host {host[:80]!r} is not a name a browser reads ({exc})") from None
    if _FORBIDDEN_HOST.search(mapped):
        raise UnreadableHost(f"the host {host[:80]!r} holds a character no host name may hold")
    labels = []
    for label in mapped.split("."):
        if label.isascii():
            labels.append(label)
            continue
        try:
            labels.append("xn--" + label.encode("punycode").decode("ascii"))
        except UnicodeError as exc:
            raise UnreadableHost(f"the host {host[:80]!r} is not a name a browser reads ({exc})") from None
    return ".".join(labels)


def browser_host(url: str) -> tuple[str, int | None] | None:
    """The host and port Chromium reads in an http(s) `url` (None for other schemes and for URLs without
    a host): an IPv4 address in dotted decimal, an IPv6 address in brackets (compressed), or an ASCII name.
    UnreadableHost when the browser would find no valid host (it opens nothing then either)."""
    cleaned = _clean(url)
    match = _SCHEME.match(cleaned)
    if not match or match.group(1).lower() not in ALLOWED_SCHEMES:
        return None
    rest = cleaned[match.end():].lstrip("/\\")  # http: reads any run of slashes and backslashes as `//`
    authority = re.split(r"[/\\?#]", rest, maxsplit=1)[0]
    hostport = authority.rpartition("@")[2]
    if hostport.startswith("["):
        end = hostport.find("]")
        if end < 0:
            raise UnreadableHost(f"the host of {url[:80]!r} opens '[' without closing it")
        raw_host, after = hostport[:end + 1], hostport[end + 1:]
        if after and not after.startswith(":"):
            raise UnreadableHost(f"the host of {url[:80]!r} has text after its ']'")
        port_text = after[1:]
        try:
            host = f"[{ipaddress.IPv6Address(raw_host[1:-1]).compressed}]"
        except ValueError:
            raise UnreadableHost(f"{raw_host[:80]!r} is not an IPv6 address") from None
    else:
        raw_host, _, port_text = hostport.partition(":")
        decoded = unquote_to_bytes(raw_host)
        try:
            text = decoded.decode("utf-8")
        except UnicodeDecodeError:
            raise UnreadableHost(f"the host {raw_host[:80]!r} is not UTF-8 once percent-decoded") from None
        if not text:
            return None
        host = _ascii_host(text)
        labels = host.split(".")
        last = labels[-2] if labels[-1] == "" and len(labels) > 1 else labels[-1]
        if _NUMBER_LABEL.match(last):  # a host whose last label is a number is an IPv4 address, or no host
            address = parse_ipv4_host(host)
            if address is None:
                raise UnreadableHost(f"the host {raw_host[:80]!r} ends in a number but is no IPv4 address")
            host = str(address)
    port: int | None = None
    if port_text:
        if not port_text.isdigit() or not port_text.isascii() or int(port_text) > 65535:
            raise UnreadableHost(f"the port {port_text[:20]!r} of {url[:80]!r} is not a port number")
        port = int(port_text)
    return host, port


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
    """The address a URL host denotes without DNS: an IPv4 or IPv6 literal, in any spelling Chromium
    reads as one (`①②⑦.0.0.1`, fullwidth digits, `。`); `localhost` names loopback."""
    host = host.strip()
    if not (host.startswith("[") and host.endswith("]")):
        try:
            read = browser_host(f"http://{host}/")
        except UnreadableHost:
            read = None
        if read is not None:
            host = read[0]
    host = host.lower().rstrip(".")
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


_NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
_IPV4_TRANSLATED = ipaddress.ip_network("::ffff:0:0:0/96")
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")


def embedded_ipv4(ip: ipaddress.IPv6Address) -> tuple[ipaddress.IPv4Address, str] | None:
    """The IPv4 address an IPv6 address carries, and the form it is in: IPv4-mapped (`::ffff:a.b.c.d`),
    IPv4-compatible (`::a.b.c.d`), IPv4-translated (`::ffff:0:a.b.c.d`), NAT64 (`64:ff9b::a.b.c.d` and the
    local-use `64:ff9b:1::/48`, RFC 6052's /96 layout) or 6to4 (`2002:AABB:CCDD::`); None otherwise."""
    low32 = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped, "IPv4-mapped"
    if ip in _IPV4_TRANSLATED:
        return low32, "IPv4-translated"
    if ip in _IPV4_COMPATIBLE and int(ip) > 1:  # :: and ::1 are themselves
        return low32, "IPv4-compatible"
    if any(ip in net for net in _NAT64):
        return low32, "NAT64"
    if ip.sixtofour is not None:
        return ip.sixtofour, "6to4"
    return None


def address_kind(address: IPAddress | str) -> str | None:
    """What kind of non-public address this is (loopback, link-local, private…), or None if public. An
    IPv6 address that carries an IPv4 one (mapped, compatible, NAT64, 6to4) is that IPv4 address."""
    ip = ipaddress.ip_address(address) if isinstance(address, str) else address
    if isinstance(ip, ipaddress.IPv6Address):
        inner = embedded_ipv4(ip)
        if inner is not None:
            kind = address_kind(inner[0])
            return f"{kind} (as {inner[1]} IPv6)" if kind else None
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
    # local mode reaches loopback only at `allowed_endpoints` (an env server's --local-origin servers)
    loopback_endpoints_only: bool = False

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
        match = _SCHEME.match(cleaned)
        if not match:
            return f"{url!r} is not an absolute http(s) URL"
        scheme = match.group(1).lower()
        if scheme not in ALLOWED_SCHEMES:
            shown = f"{scheme}://" if scheme == "file" else f"{scheme}:"
            return f"{shown} URLs are outside the sandbox (only http and https are opened)"
        if not self.checks_addresses:
            return None
        try:
            read = browser_host(cleaned)
        except UnreadableHost as exc:
            return f"{url[:200]!r} is not a URL a browser opens: {exc}"
        if read is None:
            return f"{url[:200]!r} names no host"
        host, port = read
        address = host_address(host)
        if address is None:
            return None
        return self.address_refusal(address, port or (443 if scheme == "https" else 80), host)

    async def resolved_refusal(self, url: str) -> str | None:
        """`url_refusal`, and in local mode a name's resolved addresses checked too (a name that maps to
        0.0.0.0 or a private address is that address). Live and record modes leave names to their proxy,
        which checks the address it connects to."""
        reason = self.url_refusal(url)
        if reason or not self.checks_addresses or self.mode != "local":
            return reason
        read = browser_host(url)
        if read is None or host_address(read[0]) is not None:
            return None
        host, port = read
        scheme = _SCHEME.match(_clean(url)).group(1).lower()  # type: ignore[union-attr]
        _addresses, reason = await checked_addresses(self, host, port or (443 if scheme == "https" else 80))
        return reason

    def address_refusal(self, address: IPAddress | str, port: int, host: str | None = None) -> str | None:
        """Why a connection to `address:port` (reached for `host`) is refused, or None when allowed."""
        if not self.checks_addresses:
            return None
        kind = address_kind(address)
        if kind is None:
            return None
        if kind == "loopback" and self.mode == "local" and not self.loopback_endpoints_only:
            return None
        names = {str(address), (host or "").lower().strip("[]")}
        if any((name, port) in self.allowed_endpoints for name in names if name):
            return None
        shown = f"{host} ({address})" if host and host.strip("[]") != str(address) else str(address)
        article = "an" if kind[0] in "aeiou" else "a"
        if kind == "loopback" and self.loopback_endpoints_only:
            served = ", ".join(f"{h}:{p}" for h, p in sorted(self.allowed_endpoints)) or "none"
            return (f"{shown}:{port} is a loopback service this server was not started to serve (local origins: "
                    f"{served}; start it with --local-origin URL)")
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
        read = browser_host(url)
        if read is not None:
            https = _clean(url).lower().startswith("https:")
            extra.add((read[0].strip("[]"), read[1] or (443 if https else 80)))
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
