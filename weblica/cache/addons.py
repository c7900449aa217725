"""mitmproxy addons over one store: Recorder, Replayer, Stubber and HostMapper.

Each is one small class with mitmproxy event hooks; they compose in a proxy (see `proxy.py`):
record = HostMapper + Recorder; replay = Stubber + Replayer. The proxy core knows nothing about them.
Collaborators (store, index, rules) are passed to the constructor rather than read from mitmproxy
options, because mitmproxy keeps its options in a process-wide context.
"""
from __future__ import annotations

import base64
import itertools
import json
import logging
import re
import threading
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any, Callable
from urllib.parse import urlsplit

from mitmproxy import command, http
from mitmproxy.websocket import Opcode
from mitmproxy.proxy.server_hooks import ServerConnectionHookData

from weblica.cache.canonical import request_view
from weblica.cache.dates import shift_headers
from weblica.cache.decompress import decoded_body
from weblica.cache.delivery import DeliveryOrder
from weblica.cache.exchange import HOP_HEADERS, Exchange
from weblica.cache.matcher import TIERS, ReplayIndex, Validators
from weblica.cache.ranges import apply_range, not_modified
from weblica.cache.rules import Rule
from weblica.cache.store import Store, StoreError, WsMessage
from weblica.cache.socket_player import PLAYER_HOST, SocketPlayer
from weblica.cache.websocket import SocketScript, is_event_stream
from weblica.env.backend import EPISODE_HEADER

logger = logging.getLogger(__name__)
REPLAY_HEADER = "X-Weblica-Replay"       # on every replayed response: which tier answered
TIER_KEY = "weblica_tier"


def _headers_of(message: http.Message) -> list[tuple[str, str]]:
    # latin-1 round-trips every header byte exactly
    return [(k.decode("latin-1"), v.decode("latin-1")) for k, v in message.headers.fields]


def _headers_to_mitm(headers: list[tuple[str, str]]) -> http.Headers:
    return http.Headers([(k.encode("latin-1", "replace"), v.encode("latin-1", "replace")) for k, v in headers])


def _request_body(request: http.Request) -> bytes:
    return request.get_content(strict=False) or b""


def parse_resolve(specs: list[str] | tuple[str, ...]) -> dict[tuple[str, int], tuple[str, int | None]]:
    """curl-style `HOST:PORT:ADDR` entries (HOST may be `*`) -> {(host, port): (addr, None)}.

    ADDR may end in `:PORT2` (`127.0.0.1:8081`, `[::1]:8081`) to reach a local server on another port,
    as curl's --connect-to does; a plain IPv6 address needs brackets then."""
    out: dict[tuple[str, int], tuple[str, int | None]] = {}
    for spec in specs:
        parts = spec.split(":", 2)
        if len(parts) != 3 or not parts[1].isdigit() or not parts[0] or not parts[2]:
            raise ValueError(f"--resolve {spec!r}: expected HOST:PORT:ADDR[:PORT2], e.g. www.shop.test:443:127.0.0.1")
        addr, target_port = parts[2], None
        bracketed = re.match(r"^\[([^\]]+)\](?::(\d+))?$", addr)
        if bracketed:
            addr, target_port = bracketed.group(1), int(bracketed.group(2)) if bracketed.group(2) else None
        elif addr.count(":") == 1:
            addr, port_text = addr.split(":")
            if not port_text.isdigit():
                raise ValueError(f"--resolve {spec!r}: the port after the address must be a number")
            target_port = int(port_text)
        out[(parts[0].lower(), int(parts[1]))] = (addr, target_port)
    return out


class HostMapper:
    """Connects to ADDR for HOST:PORT, keeping the Host header and TLS server name (curl's --resolve)."""

    def __init__(self, resolve: dict[tuple[str, int], tuple[str, int | None]]):
        self.resolve = resolve

    def server_connect(self, data: ServerConnectionHookData) -> None:
        if not data.server.address:
            return
        host, port = data.server.address[0].lower(), data.server.address[1]
        target = self.resolve.get((host, port)) or self.resolve.get(("*", port))
        if target:
            if data.server.sni is None:
                data.server.sni = host
            addr, target_port = target
            data.server.address = (addr, target_port or port)


SAFELISTED_HEADERS = frozenset({"accept", "accept-language", "content-language"})
EPISODE_KEY = "weblica_episode"
EXCHANGE_KEY = "weblica_exchange"   # the id a recorded flow got in the store (its WebSocket messages name it)
STREAM_KEY = "weblica_stream"       # the chunks of a streamed event stream
WS_SEQ_KEY = "weblica_ws_seq"
SCRIPT_KEY = "weblica_socket"       # a replayed WebSocket sent to the socket player: the tier that matched it
LOCAL_KEY = "weblica_local"       # answered by weblica itself: neither recorded nor counted


def episode_of(flow: http.HTTPFlow) -> str:
    return flow.metadata.get(EPISODE_KEY) or flow.request.headers.get(EPISODE_HEADER, "")


def origin_of(url: str) -> tuple[str, str, int]:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or (443 if scheme == "https" else 80)


class OrphanEpisode:
    """Gives a request that came without the episode header (Chromium sends a context's extra headers
    on page requests, not on a service worker's script fetch) the episode `find(origin)` names, if any."""

    def __init__(self, find: Callable[[tuple[str, str, int]], str | None]):
        self.find = find

    def request(self, flow: http.HTTPFlow) -> None:
        if episode_of(flow):
            return
        episode = self.find((flow.request.scheme.lower(), flow.request.pretty_host.lower(), flow.request.port))
        if episode:
            flow.metadata[EPISODE_KEY] = episode


class EpisodeHeader:
    """Reads the episode header and keeps it away from the site.

    The env names each episode with a request header set on the browser context. On a cross-origin
    fetch that header alone turns a simple request into one with a CORS preflight, which the site
    would answer without allowing the header, and the fetch would fail. So the header is removed before
    anything else sees the request, preflights that exist only because of it are answered here, and
    other preflights are forwarded without it and their answers allow it.
    """

    def request(self, flow: http.HTTPFlow) -> None:
        req = flow.request
        if EPISODE_HEADER in req.headers:
            flow.metadata[EPISODE_KEY] = req.headers.pop(EPISODE_HEADER)
        if req.method != "OPTIONS" or "access-control-request-method" not in req.headers:
            return
        asked = [h.strip() for h in req.headers.get("access-control-request-headers", "").split(",") if h.strip()]
        rest = [h for h in asked if h.lower() != EPISODE_HEADER.lower()]
        if len(rest) == len(asked):
            return
        flow.metadata["weblica_preflight"] = True
        method = req.headers["access-control-request-method"].upper()
        if method in ("GET", "HEAD", "POST") and all(h.lower() in SAFELISTED_HEADERS for h in rest):
            flow.response = http.Response.make(204, b"", {
                "Access-Control-Allow-Origin": req.headers.get("origin", "*"),
                "Access-Control-Allow-Methods": method, "Access-Control-Allow-Headers": ", ".join(asked),
                "Access-Control-Allow-Credentials": "true", "Vary": "Origin"})
            flow.metadata[LOCAL_KEY] = True
        elif rest:
            req.headers["access-control-request-headers"] = ", ".join(rest)
        else:
            del req.headers["access-control-request-headers"]

    def response(self, flow: http.HTTPFlow) -> None:
        if not flow.metadata.get("weblica_preflight") or flow.metadata.get(LOCAL_KEY) or flow.response is None:
            return
        allowed = flow.response.headers.get("access-control-allow-headers", "")
        if allowed.strip() != "*" and EPISODE_HEADER.lower() not in allowed.lower():
            flow.response.headers["access-control-allow-headers"] = ", ".join(
                [h for h in (allowed, EPISODE_HEADER) if h.strip()])


class Recorder:
    """Writes every completed exchange to the store under one run, numbered in request order."""

    def __init__(self, store: Store, run_id: int):
        self.store = store
        self.run_id = run_id
        self._seq = itertools.count()
        self.recorded = 0
        self.failures: list[str] = []

    def begin_run(self, run_id: int) -> None:
        """Record what follows under another run, numbered from 0 again."""
        self.run_id = run_id
        self._seq = itertools.count()

    def requestheaders(self, flow: http.HTTPFlow) -> None:
        flow.metadata["weblica_seq"] = next(self._seq)
        flow.metadata["weblica_run"] = self.run_id

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        # an event stream may never end: pass it on as it comes and keep its chunks (see websocket.py)
        if flow.response is not None and is_event_stream(flow.response.headers.get("content-type", "")):
            chunks: list[bytes] = []
            flow.metadata[STREAM_KEY] = chunks

            def keep(data: bytes) -> bytes:
                chunks.append(data)
                return data
            flow.response.stream = keep

    def response(self, flow: http.HTTPFlow) -> None:
        self._record(flow)

    def error(self, flow: http.HTTPFlow) -> None:
        # the browser closed an event stream that never ended: what it received is the recording
        if STREAM_KEY in flow.metadata:
            self._record(flow)

    def websocket_message(self, flow: http.HTTPFlow) -> None:
        exchange_id = flow.metadata.get(EXCHANGE_KEY)
        if flow.websocket is None or exchange_id is None:
            return
        message = flow.websocket.messages[-1]
        seq = flow.metadata[WS_SEQ_KEY] = flow.metadata.get(WS_SEQ_KEY, -1) + 1
        try:
            self.store.add_ws_message(WsMessage(exchange_id, seq, message.from_client,
                                                message.type == Opcode.TEXT, message.content, message.timestamp))
        except Exception as exc:  # as for exchanges: reported, the browse goes on
            self.failures.append(f"{flow.request.pretty_url} (WebSocket message {seq}): {exc}")
            logger.exception("could not record a WebSocket message of %s", flow.request.pretty_url)

    def _record(self, flow: http.HTTPFlow) -> None:
        if flow.response is None or flow.metadata.get(LOCAL_KEY) or EXCHANGE_KEY in flow.metadata:
            return
        headers = [h for h in _headers_of(flow.response)]
        if STREAM_KEY in flow.metadata:  # streamed: mitmproxy kept no body, the chunks are it
            body = b"".join(flow.metadata[STREAM_KEY])
            headers = [h for h in headers if h[0].lower() not in HOP_HEADERS - {"content-encoding"}]
        else:
            try:  # decoded (gzip bytes differ run to run for the same page), within weblica/cache/decompress.py's caps
                body = decoded_body(flow.response.raw_content or b"", flow.response.headers.get("content-encoding", ""),
                                    flow.request.pretty_url[:200])
                headers = [h for h in headers if h[0].lower() not in HOP_HEADERS]
            except ValueError:  # an encoding that cannot be decoded, or a bomb: keep the bytes and their header
                body = flow.response.raw_content or b""
                headers = [h for h in headers if h[0].lower() not in HOP_HEADERS - {"content-encoding"}]
        request_headers = [h for h in _headers_of(flow.request) if h[0].lower() != EPISODE_HEADER.lower()]
        exchange = Exchange(
            method=flow.request.method, url=flow.request.pretty_url, request_headers=request_headers,
            status=flow.response.status_code, reason=flow.response.reason, response_headers=headers,
            http_version=flow.response.http_version, started=flow.request.timestamp_start,
            ended=flow.response.timestamp_end or time.time(), seq=flow.metadata.get("weblica_seq", 0),
            run_id=flow.metadata.get("weblica_run", self.run_id))
        flow.metadata[EXCHANGE_KEY] = None   # recorded once, even if the stream also ends in an error
        try:
            flow.metadata[EXCHANGE_KEY] = self.store.add_exchange(exchange, _request_body(flow.request), body)
            self.recorded += 1
        except Exception as exc:  # a failed write must not take the browse down; it is reported
            self.failures.append(f"{flow.request.pretty_url}: {exc}")
            logger.exception("could not record %s %s", flow.request.method, flow.request.pretty_url)


@dataclass
class ReplaySource:
    """One recording being replayed: its store (bodies, misses), its match index and the recorded
    order its responses are released in (see `weblica.cache.delivery`)."""

    store: Store
    index: ReplayIndex
    run_id: int | None = None   # the replay run that misses are logged under; None = do not log
    delivery: DeliveryOrder = field(init=False)
    streams: dict[str, set] = field(default_factory=dict)   # event streams each episode was shown
    origins: set[tuple[str, str, int]] | None = None         # the recorded requests' origins (see backend)
    clocks: dict[str, float] = field(default_factory=dict)   # episodes whose dates move to a virtual clock

    def __post_init__(self) -> None:
        index = self.index

        def stubbed(ex: Exchange) -> bool:
            return index.rules.stub_for(ex.method, ex.view.host, ex.view.path) is not None

        self.delivery = DeliveryOrder(index.exchanges, lambda ex: index.normalized_key(ex.view), stubbed)

    def reset(self, episode: str = "") -> None:
        """Start an episode over: its repeated requests from their first response, its delivery order."""
        self.index.reset(episode)
        self.delivery.reset(episode)
        self.streams.pop(episode, None)

    def first_stream(self, episode: str, exchange: Exchange) -> bool:
        """Whether this episode is shown this recorded event stream for the first time."""
        served = self.streams.setdefault(episode, set())
        first = exchange.id not in served
        served.add(exchange.id)
        return first


def make_response(store: Store, exchange: Exchange, now: float | None = None, clock: float | None = None
                  ) -> http.Response:
    """The recorded response, its dates and cookie expiries moved to the replay's virtual `clock`
    (`weblica.cache.dates`), or without one forward to the wall clock as mitmproxy's `refresh` does."""
    # stored bodies are decoded unless the recorder kept an undecodable encoding with its header
    headers = [h for h in exchange.response_headers if h[0].lower() not in HOP_HEADERS - {"content-encoding"}]
    if clock is not None:
        headers = shift_headers(headers, clock, exchange.started or exchange.ended)
    response = http.Response.make(exchange.status, store.bodies.get(exchange.response_body_digest),
                                  _headers_to_mitm(headers))
    response.reason = exchange.reason or response.reason
    response.timestamp_start = exchange.ended or exchange.started or time.time()
    if clock is None:
        response.refresh(now)
    return response


def local_error(status: int, text: str, tier: str) -> http.Response:
    return http.Response.make(status, text.encode(), {"Content-Type": "text/plain; charset=utf-8",
                                                      REPLAY_HEADER: tier, "Cache-Control": "no-store"})


def stub_response(rule: Rule) -> http.Response:
    spec = rule.response or {}
    headers = {str(k): str(v) for k, v in (spec.get("headers") or {}).items()}
    headers[REPLAY_HEADER] = "stub"
    if "body_b64" in spec:
        body = base64.b64decode(spec["body_b64"])
    else:
        body = str(spec.get("body", "")).encode()
    return http.Response.make(int(spec.get("status", 204)), body, headers)


SourceResolver = Callable[[str], "ReplaySource | None"]


class Stubber:
    """Answers requests that a stub rule names (analytics beacons -> 204) before any lookup."""

    def __init__(self, resolve_source: SourceResolver):
        self.resolve_source = resolve_source

    def request(self, flow: http.HTTPFlow) -> None:
        if flow.response is not None:
            return
        source = self.resolve_source(episode_of(flow))
        if source is None:
            return
        req = flow.request
        view = request_view(req.method, req.pretty_url)  # its path without `;k=v` parameters, as rules see it
        rule = source.index.rules.stub_for(req.method, view.host, view.path)
        if rule is not None:
            flow.response = stub_response(rule)
            flow.metadata[TIER_KEY] = "stub"


@dataclass
class ReplayStats:
    tiers: Counter = field(default_factory=lambda: Counter({t: 0 for t in TIERS}))
    outbound_attempts: int = 0
    misses: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)   # the store could not answer (a body missing or corrupt)
    # the latest requests answered, in the order answered: (episode, method, url, tier)
    answered: deque = field(default_factory=lambda: deque(maxlen=10000))

    @property
    def requests(self) -> int:
        return sum(self.tiers.values())


class Replayer:
    """Answers every request from the recording and never dials upstream.

    Episodes are told apart by the X-Weblica-Episode header; `resolve_source(episode)` says which
    recording serves one (several recordings can share one proxy).
    """

    def __init__(self, resolve_source: SourceResolver):
        self.resolve_source = resolve_source
        self.stats = ReplayStats()
        self._lock = threading.Lock()
        self.player = SocketPlayer()

    async def request(self, flow: http.HTTPFlow) -> None:
        episode = episode_of(flow)
        if flow.metadata.get(LOCAL_KEY):
            return
        if flow.response is not None:  # answered by an earlier addon (the stubber)
            self._count(flow.metadata.get(TIER_KEY, "stub"), flow)
            return
        source = self.resolve_source(episode)
        if source is None:
            flow.response = local_error(502, f"weblica replay: no recording serves episode {episode!r}", "miss")
            self._count("miss", flow)
            return
        req = flow.request
        view = request_view(req.method, req.pretty_url, _headers_of(req), _request_body(req))
        match = source.index.match(view, episode, validators=Validators.of(_headers_of(req)))
        if match.exchange is not None:
            # held until the responses recorded as landing before it (while it was in flight) are out
            await source.delivery.turn(episode, match.exchange)
            try:
                flow.response = make_response(source.store, match.exchange, clock=source.clocks.get(episode))
            except StoreError as exc:  # a body missing or corrupt: answered and reported, never sent upstream
                flow.response = local_error(502, f"weblica replay: {exc}\n", "miss")
                self._count("miss", flow, {"method": req.method, "url": req.pretty_url, "closest": match.exchange.url,
                                           "differing": {}, "error": str(exc)})
                with self._lock:
                    self.stats.errors.append(str(exc))
                return
            if match.exchange.status == 101:   # a WebSocket: the player is its server end (socket_player.py)
                flow.response = None
                self._count(match.tier, flow)
                await self._to_player(flow, source, match.exchange, match.tier)
                return
            if match.byte_range is not None:  # a Range request answered from a recorded full body
                apply_range(flow.response, match.byte_range)
            elif match.not_modified:   # the browser holds the recorded version: as the server would say
                not_modified(flow.response)
            if is_event_stream(match.exchange.content_type) and not source.first_stream(episode, match.exchange):
                # EventSource reconnecting after the recorded stream ended: 204 tells it to stop
                flow.response = http.Response.make(204, b"", {"Cache-Control": "no-store"})
            flow.response.headers[REPLAY_HEADER] = match.tier
            self._count(match.tier, flow)
            return
        closest = match.closest.url if match.closest else None
        text = (f"weblica replay: not recorded: {req.method} {req.pretty_url}\nclosest recorded: {closest}\n"
                f"differing fields: {sorted(match.differing)}\n")
        flow.response = local_error(502, text, "miss")
        self._count("miss", flow, {"method": req.method, "url": req.pretty_url, "closest": closest,
                                   "differing": match.differing})
        if source.run_id is not None:
            try:
                source.store.add_miss(source.run_id, req.method, req.pretty_url, _headers_of(req),
                                      _request_body(req), match.closest.id if match.closest else None,
                                      match.differing)
            except Exception:
                logger.exception("could not log the replay miss of %s", req.pretty_url)

    async def _to_player(self, flow: http.HTTPFlow, source: ReplaySource, handshake: Exchange, tier: str) -> None:
        """Send a recorded WebSocket handshake to the socket player, which plays the recorded frames (the
        recorded frames are stored uncompressed: the player's handshake negotiates no extension)."""
        await self.player.start()
        messages = source.store.ws_messages([handshake.id]).get(handshake.id, []) if handshake.id else []
        path = self.player.book(SocketScript.from_messages(messages), handshake.response_headers)
        flow.metadata[SCRIPT_KEY] = tier
        req = flow.request
        req.scheme, req.host, req.port, req.path = "http", PLAYER_HOST, self.player.port, path

    def response(self, flow: http.HTTPFlow) -> None:
        tier = flow.metadata.get(SCRIPT_KEY)
        if tier is not None and flow.response is not None:   # the player's handshake answer
            flow.response.headers[REPLAY_HEADER] = tier

    async def done(self) -> None:
        await self.player.stop()

    @command.command("weblica.replay.reset")
    def reset(self, episode: str = "") -> None:
        """Start an episode's repeated requests over from their first recorded response."""
        source = self.resolve_source(episode)
        if source is not None:
            source.reset(episode)

    @command.command("weblica.replay.tiers")
    def tiers(self) -> str:
        """Requests answered so far, by tier, and refused upstream connections."""
        return json.dumps({**self.stats.tiers, "outbound_attempts": self.stats.outbound_attempts})

    def _count(self, tier: str, flow: http.HTTPFlow, miss: dict[str, Any] | None = None) -> None:
        with self._lock:
            self.stats.tiers[tier] += 1
            self.stats.answered.append((episode_of(flow), flow.request.method, flow.request.pretty_url, tier))
            if miss is not None:
                self.stats.misses.append(miss)

    def server_connect(self, data: ServerConnectionHookData) -> None:
        # Every request is answered in `request` (a WebSocket by the loopback socket player), so this
        # only runs if something slipped through (a protocol the replayer does not answer). Refuse it:
        # replay never dials out.
        if self.player.serves(data.server.address):
            return
        with self._lock:
            self.stats.outbound_attempts += 1
        data.server.error = "weblica replay: upstream connections are disabled"
