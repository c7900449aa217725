"""`weblica env-server`: the HTTP reset/step/close server for external trainers."""
from __future__ import annotations

import click


def register(cli: click.Group) -> None:
    @cli.command("env-server")
    @click.option("--host", default="127.0.0.1", show_default=True)
    @click.option("--port", default=8900, show_default=True, type=int)
    @click.option("--max-sessions", default=16, show_default=True, type=click.IntRange(1, 1024))
    def env_server(host: str, port: int, max_sessions: int) -> None:
        """Serve GET /health, POST /reset, /step, /close (JSON) over weblica environments."""
        from werkzeug.serving import make_server

        from weblica.env.server import EnvService, create_app

        service = EnvService(max_sessions=max_sessions)
        server = make_server(host, port, create_app(service), threaded=True)
        click.echo(f"weblica env server on http://{host}:{server.server_port} (Ctrl-C to stop)", err=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            service.shutdown()
