"""`weblica env-server`: the HTTP reset/step/close server for external trainers."""
from __future__ import annotations

import signal
from pathlib import Path

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
    @click.option("--sites", "sites", multiple=True, type=click.Path(exists=True, file_okay=False, path_type=Path),
                  help="folder of synth bundles (or one bundle) tasks may name; repeatable. Default: the folders "
                       "`weblica run` looks in ($WEBLICA_SITES, ./sites, the repository's sites/)")
    @click.option("--recordings", "recordings", multiple=True,
                  type=click.Path(exists=True, file_okay=False, path_type=Path),
                  help="folder of recordings (or one recording) cache tasks may name; repeatable. "
                       "Default: none (cache tasks are refused)")
    @click.option("--request-timeout", default=120.0, show_default=True, type=click.FloatRange(1, 3600),
                  help="seconds a /reset or /step may take, waiting included; past it: a JSON 504 and the "
                       "session is closed")
    @click.option("--json", "as_json", is_flag=True, help="print the URL as JSON, then serve")
    def env_server(host: str, port: int, max_sessions: int, token: str | None, sites: tuple[Path, ...],
                   recordings: tuple[Path, ...], request_timeout: float, as_json: bool) -> None:
        """Serve GET /health, POST /reset, /step, /close (JSON) over weblica environments."""
        from weblica.env.server import EnvService, check_bind, make_env_server
        from weblica.env.source_roots import SourceRoots, default_site_roots
        from weblica.serve.commands import bind_or_fail

        try:
            check_bind(host, token)
        except ValueError as exc:
            raise UserError(str(exc)) from None
        roots = SourceRoots(sites=list(sites) or default_site_roots(), recordings=list(recordings))
        service = EnvService(max_sessions=max_sessions, roots=roots, request_timeout_s=request_timeout)
        try:
            server = bind_or_fail(host, port, lambda: make_env_server(service, host, port, token))
        except UserError:
            service.shutdown()
            raise
        url = f"http://{host}:{server.server_port}"
        emit({"url": url, "auth": token is not None, "sites": [str(p) for p in roots.sites],
              "recordings": [str(p) for p in roots.recordings], "request_timeout_s": request_timeout}, as_json,
             human=f"weblica env server on {url} (Ctrl-C to stop)")
        # Ctrl-C (SIGINT) stops the server however it was started: a parent that ignores or blocks
        # SIGINT (a shell's background job, a test runner's worker) hands that on to its children
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()
            service.shutdown()
