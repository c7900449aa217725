"""`weblica env-server`: the HTTP reset/step/close server for external trainers."""
from __future__ import annotations

import click

from weblica.cli import UserError, emit


def register(cli: click.Group) -> None:
    @cli.command("env-server")
    @click.option("--host", default="127.0.0.1", show_default=True,
                  help="address to bind; anything but loopback needs --token")
    @click.option("--port", default=8900, show_default=True, type=click.IntRange(0, 65535), help="0 picks a free port")
    @click.option("--max-sessions", default=16, show_default=True, type=click.IntRange(1, 1024))
    @click.option("--token", envvar="WEBLICA_ENV_TOKEN", default=None, show_envvar=True,
                  help="bearer token every request must send (Authorization: Bearer TOKEN); "
                       "required when --host is not a loopback address")
    @click.option("--json", "as_json", is_flag=True, help="print the URL as JSON, then serve")
    def env_server(host: str, port: int, max_sessions: int, token: str | None, as_json: bool) -> None:
        """Serve GET /health, POST /reset, /step, /close (JSON) over weblica environments."""
        from weblica.env.server import EnvService, check_bind, make_env_server

        try:
            check_bind(host, token)
        except ValueError as exc:
            raise UserError(str(exc)) from None
        service = EnvService(max_sessions=max_sessions)
        try:
            server = make_env_server(service, host, port, token)
        except (OSError, SystemExit) as exc:  # werkzeug exits by itself when the port is taken
            service.shutdown()
            reason = exc.strerror if isinstance(exc, OSError) else "address in use"
            raise UserError(f"cannot listen on {host}:{port} ({reason}): pick another --port") from None
        url = f"http://{host}:{server.server_port}"
        emit({"url": url, "auth": token is not None}, as_json,
             human=f"weblica env server on {url} (Ctrl-C to stop)")
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()
            service.shutdown()
