"""Running the site server in a background thread (tests, validation, `weblica serve`)."""
from __future__ import annotations

import threading
from pathlib import Path

from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler, make_server

from weblica.serve.app import ServeConfig, create_app


class _QuietHandler(WSGIRequestHandler):
    """Per-request access lines would drown the CLI's output; errors are still logged."""

    def log_request(self, *args: object, **kwargs: object) -> None:
        return None


class SiteServer:
    """A threaded Werkzeug server for the given bundles on 127.0.0.1; `url` is the proxy address."""

    def __init__(self, sites: list[Path] | Path, host: str = "127.0.0.1", port: int = 0,
                 state_url: str = "sqlite://") -> None:
        paths = [sites] if isinstance(sites, Path) else list(sites)
        self.config = ServeConfig(sites=[Path(p) for p in paths], state_url=state_url)
        self.app = create_app(self.config)
        self._server: BaseWSGIServer = make_server(host, port, self.app, threaded=True, request_handler=_QuietHandler)
        self.host, self.port = host, self._server.server_port
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def admin_token(self) -> str:
        return self.config.admin_token

    def inflight(self, episode_id: str) -> int:
        """The episode's requests the server is answering now (weblica/serve/inflight.py)."""
        return self.app.extensions["weblica_inflight"](episode_id)

    @property
    def hosts(self) -> list[str]:
        return sorted(self.app.extensions["weblica_sites"])

    def start(self) -> "SiteServer":
        self._thread = threading.Thread(target=self._server.serve_forever, name="weblica-synth-server", daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self._server.serve_forever()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread:
            self._thread.join(timeout=5)

    def __enter__(self) -> "SiteServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
