"""`weblica serve DIR`: serve synth bundles for people and external tools."""
from __future__ import annotations

from pathlib import Path

import click

from weblica.cli import UserError, bind_or_fail, emit


@click.command("serve")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=click.IntRange(0, 65535), default=8800, show_default=True, help="0 picks a free port")
@click.option("--state-url", default="sqlite://", show_default=True, help="SQLAlchemy URL of the per-episode state store.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON summary (then serve).")
def serve_command(path: Path, host: str, port: int, state_url: str, as_json: bool) -> None:
    """Serve synth sites; point a browser's HTTP proxy at the printed address."""
    from weblica.serve.server import SiteServer
    from weblica.synth.bundles import bundle_dirs

    dirs = bundle_dirs(path)
    if not dirs:
        raise UserError(f"no site bundle (a folder with site.json) at {path}: run `weblica synth --out {path}` first")
    server = bind_or_fail(host, port, lambda: SiteServer(dirs, host=host, port=port, state_url=state_url))
    summary = {"proxy": server.url, "sites": [f"http://{h}/" for h in server.hosts], "admin_token": server.admin_token}
    human = (f"serving {len(server.hosts)} site(s); use {server.url} as the browser's HTTP proxy, e.g.\n"
             f"  chromium --proxy-server={server.url} --proxy-bypass-list='<-loopback>' "
             + (f"http://{server.hosts[0]}/" if server.hosts else ""))
    emit(summary, as_json, human)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()


def register(cli: click.Group) -> None:
    cli.add_command(serve_command)
