"""The live gateway: a forwarding HTTP proxy that holds live episodes to the navigation policy.

A live context has no env server in front of it, and Playwright routes only a request's first hop, so a
site's redirect to 169.254.169.254, or a name that resolves to a private address, would reach the
network from the browser. Behind this proxy every upstream connection is checked after resolving its
host and made to the checked address. HTTPS and WebSockets pass as CONNECT tunnels (nothing is
intercepted: the sites' own certificates); plain HTTP is forwarded one request per connection.

Runs on its own event loop in a thread, so any loop (or none) may use it.
"""
from __future__ import annotations

import asyncio
import html
import logging
import threading
from typing import Any
from urllib.parse import urlsplit

from weblica.browser.navigation import REFUSED_HEADER, NavigationPolicy, checked_addresses

logger = logging.getLogger(__name__)
HEAD_LIMIT = 64 * 1024
CONNECT_TIMEOUT_S = 15.0
# hop-by-hop headers of the browser-to-proxy leg; the upstream leg gets `Connection: close`
_HOP_HEADERS = ("proxy-connection", "connection", "keep-alive", "proxy-authorization", "te", "upgrade")


class GatewayError(RuntimeError):
    pass


class ConnectionCheck:
    """The check a proxy makes before it opens an upstream connection: the host's addresses against the
    navigation policy, each refusal kept (`refused`) and logged. This gateway and the recorder's
    EgressGuard (weblica/cache/egress.py) both make it; `hint` ends their refusal texts."""

    def __init__(self, policy: NavigationPolicy, log: logging.Logger, level: int, prefix: str = "",
                 hint: str = "", log_prefix: str = "") -> None:
        self.policy = policy
        self.refused: list[str] = []
        self._log, self._level, self._prefix, self._hint, self._log_prefix = log, level, prefix, hint, log_prefix
        self._lock = threading.Lock()

    async def addresses(self, host: str, port: int) -> tuple[list[str], str | None]:
        """(addresses to connect to, None), ([], the refusal text), or ([], None) when the name does not
        resolve."""
        addresses, reason = await checked_addresses(self.policy, host, port)
        if not reason:
            return addresses, None
        message = f"{self._prefix}the connection to {host}:{port} is refused: {reason}" + \
            (f" ({self._hint})" if self._hint else "")
        with self._lock:
            self.refused.append(message)
        self._log.log(self._level, "%s%s", self._log_prefix, message)
        return [], message


def _split_authority(authority: str) -> tuple[str, int]:
    """`host:port` or `[v6]:port` of a CONNECT request."""
    host, _, port = authority.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"bad CONNECT target {authority!r}")
    return host.strip("[]"), int(port)


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        try:
            writer.close()
        except Exception:  # already gone
            pass


class LiveGateway:
    """The proxy; `start()` binds 127.0.0.1:<ephemeral>, `url` is what a browser context uses."""

    def __init__(self, policy: NavigationPolicy, host: str = "127.0.0.1") -> None:
        self.policy = policy
        self.host = host
        self.port = 0
        self.check = ConnectionCheck(policy, logger, logging.INFO, log_prefix="weblica live gateway: ")
        self.refused = self.check.refused  # what it refused, for the caller
        self.upstream_connections = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.base_events.Server | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self, timeout: float = 10.0) -> "LiveGateway":
        if self._thread is not None:
            return self
        self._thread = threading.Thread(target=self._run, name="weblica-live-gateway", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout) or self._error is not None:
            raise GatewayError(f"the live gateway did not start: {self._error or 'timeout'}")
        return self

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            self._server = loop.run_until_complete(asyncio.start_server(self._serve, self.host, 0, limit=HEAD_LIMIT))
            self.port = self._server.sockets[0].getsockname()[1]
        except BaseException as exc:  # reported to start()
            self._error = exc
            self._ready.set()
            return
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            loop.close()

    def stop(self) -> None:
        loop, server = self._loop, self._server
        if loop is None or server is None or self._thread is None:
            return

        async def shut() -> None:
            server.close()
            loop.stop()

        asyncio.run_coroutine_threadsafe(shut(), loop)
        self._thread.join(timeout=5)
        self._thread = self._loop = self._server = None

    async def _open(self, host: str, port: int) -> tuple[Any, Any] | str | None:
        """An upstream connection, the refusal text, or None when the host cannot be reached."""
        addresses, refusal = await self.check.addresses(host, port)
        if refusal:
            return refusal
        for address in addresses:
            try:
                streams = await asyncio.wait_for(asyncio.open_connection(address, port), CONNECT_TIMEOUT_S)
            except (OSError, asyncio.TimeoutError):
                continue
            with self._lock:
                self.upstream_connections += 1
            return streams
        return None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 60)
            lines = head.decode("latin-1").split("\r\n")
            method, target, version = lines[0].split(" ", 2)
            if method.upper() == "CONNECT":
                await self._tunnel(target, reader, writer)
            else:
                await self._forward(method, target, version, lines[1:], reader, writer)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, asyncio.TimeoutError, ValueError,
                ConnectionError, OSError):
            writer.close()

    async def _tunnel(self, target: str, reader: Any, writer: Any) -> None:
        host, port = _split_authority(target)
        upstream = await self._open(host, port)
        if not isinstance(upstream, tuple):
            status = b"403 Forbidden" if upstream else b"502 Bad Gateway"
            writer.write(b"HTTP/1.1 " + status + b"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            await writer.drain()
            writer.close()
            return
        up_reader, up_writer = upstream
        writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
        await writer.drain()
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))

    async def _forward(self, method: str, target: str, version: str, header_lines: list[str],
                       reader: Any, writer: Any) -> None:
        parts = urlsplit(target)
        if parts.scheme.lower() != "http" or not parts.hostname:
            raise ValueError(f"not a proxy request: {target!r}")
        upstream = await self._open(parts.hostname, parts.port or 80)
        if isinstance(upstream, str):
            body = (f"<!doctype html><title>Refused</title><h1>Refused by weblica</h1>"
                    f"<p>{html.escape(upstream)}: outside the sandbox.</p>").encode()
            reason = upstream.split(" is refused: ", 1)[-1]
            writer.write(b"HTTP/1.1 403 Forbidden\r\nContent-Type: text/html; charset=utf-8\r\n"
                         + f"{REFUSED_HEADER}: {reason}\r\n".encode("ascii", "replace")
                         + b"Content-Length: " + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n" + body)
            await writer.drain()
            writer.close()
            return
        if upstream is None:  # as a direct connection would fail: no response at all
            writer.close()
            return
        up_reader, up_writer = upstream
        path = parts.path or "/"
        if parts.query:
            path += "?" + parts.query
        headers = [h for h in header_lines if h and h.split(":", 1)[0].strip().lower() not in _HOP_HEADERS]
        up_writer.write(f"{method} {path} {version}\r\n".encode("latin-1")
                        + "".join(f"{h}\r\n" for h in headers + ["Connection: close"]).encode("latin-1") + b"\r\n")
        await up_writer.drain()
        # the request body follows the head on the browser's connection; the response ends with the
        # upstream connection, and the browser's connection with it
        sending = asyncio.ensure_future(_pipe(reader, up_writer))
        await _pipe(up_reader, writer)
        sending.cancel()
