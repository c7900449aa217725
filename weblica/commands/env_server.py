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
    @click.option("--local-origin", "local_origins", multiple=True, metavar="URL",
                  help="a server local tasks may open (e.g. http://127.0.0.1:5000); repeatable. Default: none, so "
                       "local tasks are refused: a client could otherwise read this machine's other loopback "
                       "services through the browser")
    @click.option("--any-local-origin", is_flag=True,
                  help="let local tasks open any loopback server of this machine (only where every client is trusted)")
    @click.option("--allow-host", "allow_hosts", multiple=True, metavar="NAME",
                  help="a Host name clients reach this server by, besides the bound address; repeatable "
                       "(other names are refused: DNS rebinding)")
    @click.option("--session-idle-timeout", default=600.0, show_default=True, type=click.FloatRange(1, 86400),
                  help="seconds without a request after which a session is closed")
    @click.option("--max-connections", default=64, show_default=True, type=click.IntRange(1, 4096),
                  help="open HTTP connections at once; more get a JSON 503")
    @click.option("--read-timeout", default=10.0, show_default=True, type=click.FloatRange(0.1, 600),
                  help="seconds one read of a request may wait (and an idle kept-alive connection stays); a whole "
                       "request must be read within 3x this")
    @click.option("--json", "as_json", is_flag=True, help="print the URL as JSON, then serve")
    def env_server(host: str, port: int, max_sessions: int, token: str | None, sites: tuple[Path, ...],
                   recordings: tuple[Path, ...], request_timeout: float, local_origins: tuple[str, ...],
                   any_local_origin: bool, allow_hosts: tuple[str, ...], session_idle_timeout: float,
                   max_connections: int, read_timeout: float, as_json: bool) -> None:
        """Serve GET /health, POST /reset, /step, /close (JSON) over weblica environments."""
        from weblica.browser.navigation import UnreadableHost, browser_host
        from weblica.env.server import EnvService, check_bind, make_env_server
        from weblica.env.source_roots import SourceRoots, default_site_roots
        from weblica.cli import bind_or_fail

        try:
            check_bind(host, token)
        except ValueError as exc:
            raise UserError(str(exc)) from None
        for origin in local_origins:
            try:
                read = browser_host(origin)
            except UnreadableHost as exc:
                read, why = None, f" ({exc})"
            else:
                why = ""
            if read is None:
                raise UserError(f"--local-origin {origin!r} is not an http(s) URL with a host{why}; "
                                "give one like http://127.0.0.1:5000")
        roots = SourceRoots(sites=list(sites) or default_site_roots(), recordings=list(recordings))
        service = EnvService(max_sessions=max_sessions, roots=roots, request_timeout_s=request_timeout,
                             local_origins=None if any_local_origin else list(local_origins),
                             session_idle_s=session_idle_timeout)
        try:
            server = bind_or_fail(host, port, lambda: make_env_server(
                service, host, port, token, allow_hosts=allow_hosts, max_connections=max_connections,
                read_timeout_s=read_timeout, request_read_s=3 * read_timeout))
        except UserError:
            service.shutdown()
            raise
        url = f"http://{host}:{server.server_port}"
        emit({"url": url, "auth": token is not None, "sites": [str(p) for p in roots.sites],
              "recordings": [str(p) for p in roots.recordings], "request_timeout_s": request_timeout,
              "local_origins": "any" if any_local_origin else list(local_origins),
              "session_idle_timeout_s": session_idle_timeout, "max_connections": max_connections}, as_json,
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
