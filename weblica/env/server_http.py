"""The env server's HTTP side, below the app: which binds are safe, which Host headers name the server,
and a threaded server whose connections are capped and whose requests are read within a time limit.

A browser page can reach a loopback server by rebinding its own name to 127.0.0.1; it then sends its own
name as the Host header, so `HostCheck` answers only the names the server was bound under (and those
allowed with --allow-host). A client that sends its request slowly (slowloris) holds a thread only until
`request_read_s`; past `max_connections` a new connection gets a JSON 503 without a thread.
"""
from __future__ import annotations

import ipaddress
import json
import socket
import threading
import time
from typing import Any

from werkzeug.serving import ThreadedWSGIServer, WSGIRequestHandler

MIN_TOKEN_CHARS = 16
TOKEN_ENV = "WEBLICA_ENV_TOKEN"
DEFAULT_MAX_CONNECTIONS = 64       # open HTTP connections; more are answered 503 and closed
DEFAULT_READ_TIMEOUT_S = 10.0      # one read of a request (and a kept-alive connection's wait for the next)
DEFAULT_REQUEST_READ_S = 30.0      # reading one whole request: line, headers and body


def host_name(value: str) -> str:
    """The name in a Host header, without its port and brackets, lowercased."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1:value.find("]")] if "]" in value else value[1:]
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


class HostCheck:
    """Which Host headers name this server: the bound address (with `localhost` and the other loopback
    spellings for a loopback bind; with the machine's own names otherwise), every address literal for a
    wildcard bind, and `allowed` names. A page whose own name was rebound to this machine's address sends
    its own name, and is refused."""

    def __init__(self, bound: str, allowed: tuple[str, ...] = ()) -> None:
        self.bound = host_name(bound) if bound else ""
        self.names = {host_name(a) for a in allowed if a} | {self.bound}
        if is_loopback(self.bound):
            self.names |= {"localhost", "127.0.0.1", "::1"}
        else:  # reachable from the network: this machine's own names too (a rebinding page's name is not one)
            self.names |= {socket.gethostname().lower(), socket.getfqdn().lower()}
        self.any_address = self.bound in ("", "0.0.0.0", "::")

    def allows(self, header: str | None) -> bool:
        if header is None:  # HTTP/1.0 without Host: no page of a browser sends that
            return True
        name = host_name(header)
        if name in self.names:
            return True
        if self.any_address:
            try:
                ipaddress.ip_address(name)
                return True
            except ValueError:
                return False
        return False


def is_loopback(host: str) -> bool:
    """Whether binding `host` keeps the server on this machine."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, token: str | None) -> None:
    """Refuse a network-reachable server without a token, and tokens too short to guard one."""
    if token is not None and len(token) < MIN_TOKEN_CHARS:
        raise ValueError(f"the token is {len(token)} characters; use at least {MIN_TOKEN_CHARS} "
                         "(e.g. `python -c 'import secrets; print(secrets.token_hex(16))'`)")
    if token is None and not is_loopback(host):
        raise ValueError(f"refusing to serve on {host} without a token: anyone who reaches it could drive the "
                         f"browser; pass --token TOKEN (or set {TOKEN_ENV}), or bind --host 127.0.0.1")


class _DeadlineReader:
    """A connection's input whose reads share one deadline per request, so a client that sends its request
    a byte at a time (slowloris) is cut off when the time to read a whole request is up, however often it
    sends; each read also waits at most `read_timeout_s`."""

    def __init__(self, raw: Any, connection: socket.socket, read_timeout_s: float) -> None:
        self._raw, self._connection, self._read_timeout_s = raw, connection, read_timeout_s
        self.deadline: float | None = None

    def _arm(self) -> None:
        if self.deadline is None:
            self._connection.settimeout(self._read_timeout_s)
            return
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the request was not read within its time limit")
        self._connection.settimeout(min(left, self._read_timeout_s))

    def read(self, *args: Any) -> bytes:
        self._arm()
        return self._raw.read(*args)

    def readline(self, *args: Any) -> bytes:
        self._arm()
        return self._raw.readline(*args)

    def readinto(self, buffer: Any) -> int:
        self._arm()
        return self._raw.readinto(buffer)

    def read1(self, *args: Any) -> bytes:
        self._arm()
        return self._raw.read1(*args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)


class JSONErrorHandler(WSGIRequestHandler):
    """Requests that never reach the app (bad request line, too many headers) get JSON, not HTML. Reads are
    bounded by the server's `read_timeout_s` each and `request_read_s` for a whole request."""

    def setup(self) -> None:
        self.timeout = getattr(self.server, "read_timeout_s", None)
        super().setup()
        if self.timeout is not None:
            self.rfile = _DeadlineReader(self.rfile, self.connection, self.timeout)  # type: ignore[assignment]

    def handle_one_request(self) -> None:
        if isinstance(self.rfile, _DeadlineReader):
            self.rfile.deadline = time.monotonic() + getattr(self.server, "request_read_s", DEFAULT_REQUEST_READ_S)
        super().handle_one_request()

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        if code == 505:  # an HTTP version from the future is the client's fault: keep 5xx for our own faults
            code = 400
        body = json.dumps({"error": f"{code} {message or self.responses.get(code, ('',))[0]}"}).encode()
        self.log_error("code %d, message %s", code, message)
        if self.request_version == "HTTP/0.9":  # an unparsable request line: answer with a status line anyway
            self.request_version = "HTTP/1.0"
        self.send_response(code, message)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD" and code >= 200 and code not in (204, 304):
            self.wfile.write(body)


_BUSY = json.dumps({"error": "the env server has too many open connections; retry shortly, and reuse "
                             "connections (keep-alive) rather than opening many"}).encode()
_BUSY_RESPONSE = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\n"
                  b"Connection: close\r\nContent-Length: " + str(len(_BUSY)).encode() + b"\r\n\r\n" + _BUSY)


class CappedWSGIServer(ThreadedWSGIServer):
    """A thread per connection, at most `max_connections` at once: a connection past the cap gets a JSON
    503 and is closed at once, without a thread."""

    def __init__(self, *args: Any, max_connections: int = DEFAULT_MAX_CONNECTIONS,
                 read_timeout_s: float = DEFAULT_READ_TIMEOUT_S, request_read_s: float = DEFAULT_REQUEST_READ_S,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.max_connections = max_connections
        self.read_timeout_s = read_timeout_s
        self.request_read_s = request_read_s
        self.open_connections = 0
        self.refused_connections = 0
        self._count = threading.Lock()

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._count:
            full = self.open_connections >= self.max_connections
            if full:
                self.refused_connections += 1
            else:
                self.open_connections += 1
        if not full:
            super().process_request(request, client_address)
            return
        try:
            request.settimeout(1.0)
            request.sendall(_BUSY_RESPONSE)
        except OSError:
            pass
        self.shutdown_request(request)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self._count:
                self.open_connections -= 1
