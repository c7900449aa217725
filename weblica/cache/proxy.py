"""Run mitmproxy's engine from Python: an ephemeral loopback port, a background thread, a clean stop.

mitmproxy keeps its master and options in a process-wide context (`mitmproxy.ctx`) and hands new
connections to `ctx.master`, so two masters in one process would answer each other's connections.
One proxy runs per process at a time; several recordings share one replay proxy instead (the
Replayer routes by episode).
"""
from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any

from mitmproxy import addons as mitm_addons
from mitmproxy import options as mitm_options
from mitmproxy.master import Master

from weblica.browser import mitm_ca

logger = logging.getLogger(__name__)
_ACTIVE_LOCK = threading.Lock()
_active: "ProxyServer | None" = None


class ProxyError(RuntimeError):
    pass


def confdir() -> str:
    """Where mitmproxy keeps its CA (see weblica.browser.mitm_ca: the browser trusts its key)."""
    return str(mitm_ca.ensure_ca())


class _Ready:
    """Reports the bound port to the starting thread once the listeners are up (the `running` event)."""

    def __init__(self, server: "ProxyServer"):
        self.server = server

    def running(self) -> None:
        master = self.server._master
        proxyserver = master.addons.get("proxyserver") if master else None
        addrs = proxyserver.listen_addrs() if proxyserver else []
        if addrs:
            self.server.port = addrs[0][1]
        self.server._ready.set()


class ProxyServer:
    """mitmproxy with the given addons on 127.0.0.1:<ephemeral> in a thread. Use as a context manager."""

    def __init__(self, addons: list[Any], host: str = "127.0.0.1", port: int = 0,
                 options: dict[str, Any] | None = None):
        self.addons = addons
        self.extra_options = dict(options or {})
        self.host = host
        self.port = port
        self._thread: threading.Thread | None = None
        self._master: Master | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self, timeout: float = 20.0) -> "ProxyServer":
        global _active
        with _ACTIVE_LOCK:
            if _active is not None:
                raise ProxyError("a weblica proxy is already running in this process (mitmproxy allows one "
                                 "master per process); stop it first or share it")
            _active = self
        self._thread = threading.Thread(target=self._run, name="weblica-proxy", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout) or self._error is not None or not self.port:
            self.stop()
            raise ProxyError(f"the proxy did not start: {self._error or 'timeout'}")
        return self

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as exc:  # reported to start() through _error
            self._error = exc
            self._ready.set()

    async def _main(self) -> None:
        master = Master(mitm_options.Options())
        master.addons.add(*mitm_addons.default_addons())
        master.addons.add(*self.addons)
        # addon options exist only once their addons are loaded, so they are set afterwards
        master.options.update(
            listen_host=self.host, listen_port=self.port, confdir=confdir(),
            # recordings of local test servers use self-signed certificates
            ssl_insecure=True,
            # never open an upstream connection before a request needs it: replay must not dial out,
            # not even to sniff a certificate on CONNECT
            connection_strategy="lazy",
            http3=False,
        )
        if self.extra_options:
            master.options.update(**self.extra_options)
        master.addons.add(_Ready(self))
        self._master = master
        await master.run()

    def stop(self) -> None:
        global _active
        if self._master is not None:
            try:
                self._master.shutdown()
            except RuntimeError:  # loop already closed
                pass
        if self._thread is not None:
            self._thread.join(timeout=10)
        with _ACTIVE_LOCK:
            if _active is self:
                _active = None

    def __enter__(self) -> "ProxyServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
