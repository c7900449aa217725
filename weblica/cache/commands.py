"""CLI: `weblica record`, `weblica rules infer`, `weblica replay`, `weblica import`, `weblica export`."""
from __future__ import annotations

import asyncio
import json
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import click

from weblica.cli import UserError, emit


def _load_actions(path: str | None) -> list[dict[str, Any]] | None:
    if path is None:
        return None
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UserError(f"--actions {path}: not a JSON file ({exc}); give a JSON list of actions such as "
                        '[{"name": "click", "arguments": {"x": 100, "y": 200}}]') from None
    if isinstance(data, dict) and "actions" in data:
        data = data["actions"]
    if not isinstance(data, list):
        raise UserError(f"--actions {path}: expected a JSON list of actions")
    from weblica.env.actions import ActionError, make_action

    try:
        return [make_action(a).to_dict() for a in data]
    except ActionError as exc:
        raise UserError(f"--actions {path}: {exc}") from None


def _store_errors() -> tuple[type[Exception], ...]:
    from weblica.browser.launcher import ChromiumNotFound
    from weblica.cache.interop import InteropError
    from weblica.cache.proxy import ProxyError
    from weblica.cache.rules import RuleError
    from weblica.cache.store import StoreError

    return (StoreError, RuleError, InteropError, ProxyError, ChromiumNotFound)


@contextmanager
def _reported(as_json: bool) -> Iterator[None]:
    """A store, file or input error as one line naming the file: `{"error": …}` on stdout with --json
    (exit status 1), else click's usual error on stderr."""
    try:
        yield
    except (UserError, *_store_errors()) as exc:
        message = exc.format_message() if isinstance(exc, click.ClickException) else str(exc)
        message = " ".join(message.split())
        if as_json:
            click.echo(json.dumps({"error": message}))
            sys.exit(1)
        raise UserError(message) from None


def register(cli: click.Group) -> None:
    @cli.command("record")
    @click.argument("url")
    @click.option("--actions", "actions_path", type=click.Path(exists=True, dir_okay=False),
                  help="JSON list of env actions (viewport pixels) played after opening URL")
    @click.option("--runs", default=2, show_default=True, type=click.IntRange(1, 50),
                  help="how many times to record the browse; run k uses episode seed k (>= 2 lets `rules infer` find volatile values)")
    @click.option("--resolve", multiple=True, metavar="HOST:PORT:ADDR", help="connect to ADDR for HOST:PORT (as curl)")
    @click.option("--name", default=None, help="recording name (default: the output directory's name)")
    @click.option("--out", default=None, type=click.Path(file_okay=False), help="recording directory")
    @click.option("--allow-private", is_flag=True,
                  help="let the browse reach loopback, link-local and private addresses besides URL's server "
                       "and the --resolve targets")
    @click.option("--json", "as_json", is_flag=True)
    def record_command(url: str, actions_path: str | None, runs: int, resolve: tuple[str, ...], name: str | None,
                       out: str | None, allow_private: bool, as_json: bool) -> None:
        """Record browses of URL through the recording proxy (HTTP and HTTPS).

        Without --actions a headed browser opens for a person to browse; close it to finish a run.
        """
        from urllib.parse import urlsplit

        import os

        from weblica.cache.record import record, record_interactive

        actions = _load_actions(actions_path)
        out = out or str(Path("recordings") / (name or urlsplit(url).hostname or "site"))
        if actions is None and not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
            raise UserError("interactive recording needs a display: run `weblica record URL` on a desktop, or "
                            "give --actions FILE to record a scripted browse here")
        try:
            if actions is None:
                summary = asyncio.run(record_interactive(url, out, resolve=resolve, name=name,
                                                         allow_private=allow_private))
            else:
                summary = asyncio.run(record(url, actions, out, runs=runs, resolve=resolve, name=name,
                                             allow_private=allow_private))
        except ValueError as exc:
            raise UserError(str(exc)) from None
        except _store_errors() as exc:
            raise UserError(str(exc)) from None
        emit(summary.to_dict(), as_json)

    @cli.group("rules")
    def rules_group() -> None:
        """Cache rules: which request fields replay may ignore or must match."""

    @rules_group.command("infer")
    @click.argument("recording", type=click.Path())
    @click.option("--out", default="cache_rules", show_default=True, type=click.Path(file_okay=False))
    @click.option("--json", "as_json", is_flag=True)
    def infer_command(recording: str, out: str, as_json: bool) -> None:
        """Infer rules from a recording's runs (and the misses of its replays)."""
        from weblica.cache.infer import infer_rules, merge_with_existing, summarize
        from weblica.cache.rules import load_rules, save_rules
        from weblica.cache.store import Store

        with _reported(as_json):
            with Store.open_dir(recording, readonly=True) as store:
                runs = store.runs()
                rulesets = infer_rules(store)
            files = []
            for domain, ruleset in sorted(rulesets.items()):
                existing_path = Path(out) / f"{domain}.yaml"
                existing = load_rules(existing_path) if existing_path.exists() else None
                files.append(str(save_rules(merge_with_existing(ruleset, existing), out)))
        summary: dict[str, Any] = {"recording": recording, "runs": len(runs), "files": files, **summarize(rulesets)}
        if len(runs) < 2:
            summary["warning"] = "one run only: record with --runs 2 or more to tell volatile values from semantic ones"
        emit(summary, as_json)

    @cli.command("replay")
    @click.argument("recording", type=click.Path())
    @click.option("--actions", "actions_path", type=click.Path(exists=True, dir_okay=False),
                  help="actions to play (default: the recorded ones)")
    @click.option("--check", is_flag=True, help="replay offline and report tiers, screens and outbound connections")
    @click.option("--serve", is_flag=True, help="run the replay proxy for any browser until interrupted")
    @click.option("--port", default=0, show_default=True, type=int, help="--serve: proxy port (0 = any free port)")
    @click.option("--seed", default=0, show_default=True, type=int, help="episode seed of the replayed browse")
    @click.option("--url", "start_url", default=None, help="--check: start page (default: the recorded one)")
    @click.option("--rules", "rules_dirs", multiple=True, type=click.Path(file_okay=False),
                  help="rule directories (default: ./cache_rules); REC/rules is always read")
    @click.option("--json", "as_json", is_flag=True)
    def replay_command(recording: str, actions_path: str | None, check: bool, serve: bool, port: int, seed: int,
                       start_url: str | None, rules_dirs: tuple[str, ...], as_json: bool) -> None:
        """Replay a recording with the network cut."""
        with _reported(as_json):
            if check == serve:
                raise UserError("choose one of --check (validate offline) or --serve (run the replay proxy)")
            _replay(recording, actions_path, check, port, seed, start_url, list(rules_dirs) or None, as_json)

    @cli.command("import")
    @click.argument("file", type=click.Path())
    @click.option("--out", default=None, type=click.Path(), help="recording directory (new, or one to add runs to)")
    @click.option("--again", is_flag=True, help="import the file even if this recording already holds it")
    @click.option("--skip-bad", is_flag=True,
                  help="import the good records of a damaged file and list the bad ones (default: import nothing)")
    @click.option("--json", "as_json", is_flag=True)
    def import_command(file: str, out: str | None, again: bool, skip_bad: bool, as_json: bool) -> None:
        """Import a HAR or WARC file as a recording (new, or more runs of an existing one): all or nothing."""
        from weblica.cache.interop import import_file

        name = Path(file).name.split(".")[0]
        with _reported(as_json):
            summary = import_file(file, out or str(Path("recordings") / name), again=again, skip_bad=skip_bad)
        emit(summary, as_json, _human_import(summary))

    @cli.command("export")
    @click.argument("recording", type=click.Path())
    @click.option("--format", "fmt", type=click.Choice(["har", "warc"]), required=True)
    @click.option("--out", default=None, type=click.Path(), help="file to write (default: REC's name .har or .warc.gz)")
    @click.option("--keep-secrets", is_flag=True,
                  help="keep credentials, cookies, tokens and passwords (redacted by default; see README)")
    @click.option("--json", "as_json", is_flag=True)
    def export_command(recording: str, fmt: str, out: str | None, keep_secrets: bool, as_json: bool) -> None:
        """Export a recording as HAR or WARC (read-only; secrets redacted unless --keep-secrets)."""
        from weblica.cache.interop import export_har, export_warc

        out = out or f"{Path(recording).name}.{'har' if fmt == 'har' else 'warc.gz'}"
        with _reported(as_json):
            summary = (export_har if fmt == "har" else export_warc)(recording, out, keep_secrets)
        emit(summary, as_json)


def _replay(recording: str, actions_path: str | None, check: bool, port: int, seed: int, start_url: str | None,
            dirs: list[str] | None, as_json: bool) -> None:
    from weblica.cache import replay

    try:
        if check:
            summary = asyncio.run(replay.check(recording, _load_actions(actions_path), seed=seed, rules_dirs=dirs,
                                               start_url=start_url))
            emit(summary, as_json, _human_check(summary))
            if summary.get("store_errors"):  # the recording is damaged: the check failed
                sys.exit(1)
            return

        def ready(url: str) -> None:
            emit({"recording": recording, "proxy": url, "ignore_https_errors": True}, as_json,
                 f"replay proxy for {recording} on {url} (point a browser at it; accept its certificate "
                 "or ignore HTTPS errors). Ctrl-C stops it.")

        asyncio.run(replay.serve(recording, port, dirs, ready))
    except KeyboardInterrupt:
        pass


def _human_import(summary: dict[str, Any]) -> str:
    if summary.get("skipped"):
        return f"skipped: {summary['reason']}"
    lines = [f"{summary['recording']}: {summary['runs']} run(s), {summary['exchanges']} exchange(s) imported"]
    for bad in summary.get("bad_records", []):
        at = f" at byte {bad['offset']}" if "offset" in bad else ""
        lines.append(f"skipped record {bad['index']}{at}: {bad['reason']}")
    return "\n".join(lines)


def _human_check(summary: dict[str, Any]) -> str:
    tiers = ", ".join(f"{k} {v}" for k, v in summary["tiers"].items())
    lines = [f"{summary['requests']} requests: {tiers}",
             f"screens identical: {summary['screens_identical']}",
             f"outbound connections: {summary['outbound_connections']}"]
    if summary.get("error"):
        lines.append(f"error: {summary['error']}")
    for miss in summary.get("misses", [])[:10]:
        lines.append(f"miss {miss['method']} {miss['url']} (closest {miss['closest']}; differs in "
                     f"{', '.join(miss['differing'])})")
    return "\n".join(lines)
