"""CLI: `weblica record | rules infer | replay | cache age | cache build | import | export`."""
from __future__ import annotations

import asyncio
import json
import sys
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import urlsplit

import click

from weblica.cli import UserError, emit, load_task_file, user_errors


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


@click.command("record")
@click.argument("url")
@click.option("--actions", "actions_path", type=click.Path(exists=True, dir_okay=False),
              help="JSON list of env actions (viewport pixels) played after opening URL")
@click.option("--runs", default=2, show_default=True, type=click.IntRange(1, 50),
              help="how many times to record the browse; run k uses episode seed k (>= 2 lets `rules infer` find volatile values)")
@click.option("--resolve", multiple=True, metavar="HOST:PORT:ADDR", help="connect to ADDR for HOST:PORT (as curl)")
@click.option("--name", default=None, help="recording name (default: the output directory's name)")
@click.option("--out", default=None, type=click.Path(file_okay=False), help="recording directory")
@click.option("--policy", default=None, help="record this policy's browse (oracle, random, openai:URL, ...); "
                                             "needs --instruction")
@click.option("--instruction", default=None, help="--policy: what the policy is asked to do on the site")
@click.option("--allow-private", is_flag=True,
              help="let the browse reach loopback, link-local and private addresses besides URL's server "
                   "and the --resolve targets")
@click.option("--json", "as_json", is_flag=True)
def record_command(url: str, actions_path: str | None, runs: int, resolve: tuple[str, ...], name: str | None,
                   out: str | None, policy: str | None, instruction: str | None, allow_private: bool,
                   as_json: bool) -> None:
    """Record browses of URL through the recording proxy (HTTP and HTTPS).

    Without --actions a headed browser opens for a person to browse; close it to finish a run.
    With --policy an agent browses headless, once per run.
    """
    from urllib.parse import urlsplit

    import os

    from weblica.cache.record import record, record_interactive

    actions = _load_actions(actions_path)
    out = out or str(Path("recordings") / (name or urlsplit(url).hostname or "site"))
    if policy is not None:
        recorded = _record_policy(url, policy, instruction, actions, runs, resolve, out, allow_private, not as_json)
        emit(recorded, as_json, _human_record(recorded))
        return
    if actions is None and not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
        raise UserError("interactive recording needs a display: run `weblica record URL` on a desktop, or "
                        "give --actions FILE to record a scripted browse here")
    try:
        if actions is None:
            if not as_json:
                click.echo(f"recording {url}: browse in the window that opens; close it to finish", err=True)
            summary = asyncio.run(record_interactive(url, out, resolve=resolve, name=name,
                                                     allow_private=allow_private))
        else:
            summary = asyncio.run(record(url, actions, out, runs=runs, resolve=resolve, name=name,
                                         allow_private=allow_private, progress=not as_json))
    except ValueError as exc:
        raise UserError(str(exc)) from None
    except _store_errors() as exc:
        raise UserError(str(exc)) from None
    emit(summary.to_dict(), as_json, _human_record(summary.to_dict()))

@click.group("rules")
def rules_group() -> None:
    """Cache rules: which request fields replay may ignore or must match."""

@rules_group.command("infer")
@click.argument("recording", type=click.Path())
@click.option("--out", default="cache_rules", show_default=True, type=click.Path(file_okay=False))
@click.option("--json", "as_json", is_flag=True)
def infer_command(recording: str, out: str, as_json: bool) -> None:
    """Infer rules from a recording's runs (and the misses of its replays)."""
    from weblica.cache.infer import merge_with_existing, summarize
    from weblica.cache.rulecheck import human_decisions, infer_checked_rules, summarize_decisions
    from weblica.cache.rules import RuleBook, RuleSet, load_rules, save_rules
    from weblica.cache.store import Store

    with _reported(as_json):
        # the hand-written rules already in --out stay, and the inferred ones are tried on top of them
        manual = [RuleSet(rs.domain, [r for r in rs.rules if r.source != "inferred"])
                  for rs in RuleBook.load(out).by_domain.values()]
        with Store.open_dir(recording, readonly=True) as store:
            runs, cut = store.finished_runs()  # runs cut by a kill are flagged and left out
            rulesets, decisions = infer_checked_rules(store, background=RuleBook(manual))
        files = []
        for domain, ruleset in sorted(rulesets.items()):
            existing_path = Path(out) / f"{domain}.yaml"
            existing = load_rules(existing_path) if existing_path.exists() else None
            files.append(str(save_rules(merge_with_existing(ruleset, existing), out)))
    summary: dict[str, Any] = {"recording": recording, "runs": len(runs), "files": files, **summarize(rulesets),
                               "never_hurt": summarize_decisions(decisions)}
    if len(runs) < 2:
        summary["warning"] = "one run only: record with --runs 2 or more to tell volatile values from semantic ones"
    if cut:
        summary["cut_runs"] = [r.id for r in cut]
        summary["warning"] = (f"run(s) {', '.join(str(r.id) for r in cut)} were cut before their end (a killed "
                              "recording) and were left out; " + summary.get("warning", "")).rstrip("; ")
    counts = summarize(rulesets)
    human = [f"{recording}: {len(runs)} run(s); rules: " + ", ".join(f"{k} {v}" for k, v in counts.items()),
             f"never hurt: {summary['never_hurt']['downgraded']} downgraded, "
             f"{summary['never_hurt']['dropped']} dropped (tried on the recorded runs)", *human_decisions(decisions),
             *(f"wrote {f}" for f in files), *([f"warning: {summary['warning']}"] if "warning" in summary else [])]
    emit(summary, as_json, "\n".join(human))

@click.command("replay")
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
@click.option("--shift-dates", is_flag=True,
              help="move recorded Date, Expires, Last-Modified and cookie expiries to the replay's virtual "
                   "clock (default: refreshed to the wall clock, as mitmproxy does)")
@click.option("--clock", default=None, metavar="ISO",
              help="--shift-dates: the virtual clock the replay starts at, e.g. 2026-01-15T10:00:00Z "
                   "(default: the env's, 2025-01-15T10:00:00Z)")
@click.option("--json", "as_json", is_flag=True)
def replay_command(recording: str, actions_path: str | None, check: bool, serve: bool, port: int, seed: int,
                   start_url: str | None, rules_dirs: tuple[str, ...], shift_dates: bool, clock: str | None,
                   as_json: bool) -> None:
    """Replay a recording with the network cut."""
    with _reported(as_json):
        if check == serve:
            raise UserError("choose one of --check (validate offline) or --serve (run the replay proxy)")
        if clock is not None and not shift_dates:
            raise UserError("--clock sets the clock dates are shifted to: give it with --shift-dates")
        at = None
        if shift_dates:
            from weblica.cache.dates import VIRTUAL_CLOCK, parse_clock

            try:
                at = parse_clock(clock) if clock is not None else VIRTUAL_CLOCK
            except ValueError as exc:
                raise UserError(f"--clock {exc}") from None
        _replay(recording, actions_path, check, port, seed, start_url, list(rules_dirs) or None, as_json, at)

@click.group("cache")
def cache_group() -> None:
    """Cached environments built from live tasks by an agent."""

@cache_group.command("age")
@click.argument("recording", type=click.Path())
@click.option("--list", "listed", default=50, show_default=True, type=click.IntRange(0, 100000),
              help="responses listed with the dates they carry")
@click.option("--json", "as_json", is_flag=True)
def cache_age_command(recording: str, listed: int, as_json: bool) -> None:
    """How old a recording is, and which responses carry dates (headers, cookie expiries, bodies)."""
    from weblica.cache.dates import recording_age
    from weblica.cache.store import Store

    with _reported(as_json):
        with Store.open_dir(recording, readonly=True) as store:
            report = {"recording": recording, **recording_age(store, listed=listed)}
    emit(report, as_json, _human_age(report))

@cache_group.command("build")
@click.option("--tasks", "tasks_path", required=True, type=click.Path(exists=True, dir_okay=False),
              help="tasks.jsonl of live tasks (start_url on the live site)")
@click.option("--policy", required=True, help="the policy that plays each task: oracle, random, openai:URL, ...")
@click.option("--runs", default=2, show_default=True, type=click.IntRange(1, 20),
              help="recorded episodes per task (>= 2 lets inference tell volatile values from semantic ones)")
@click.option("--crawl-depth", default=0, show_default=True, type=click.IntRange(0, 5),
              help="also record same-site links and GET form targets of the recorded pages, this many levels")
@click.option("--crawl-session/--no-crawl-session", default=True, show_default=True,
              help="crawl with the cookies and storage each recorded episode left (a login stays logged in); "
                   "links and forms that would log out, delete or act are never followed either way")
@click.option("--parallel", default=1, show_default=True, type=click.IntRange(1, 64),
              help="tasks built at once (one worker process each)")
@click.option("--resolve", multiple=True, metavar="HOST:PORT:ADDR", help="connect to ADDR for HOST:PORT (as curl)")
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--judge", default=None, help="openai:URL#MODEL or anthropic:MODEL: decides tasks without checks")
@click.option("--allow-private", is_flag=True,
              help="let the browses reach loopback, link-local and private addresses besides each task's "
                   "server and the --resolve targets")
@click.option("--ray", "ray_address", default=None,
              help="build the tasks on Ray actors: 'auto' (an existing cluster), 'local', or ADDRESS")
@click.option("--ray-workers", default=2, show_default=True, type=click.IntRange(1, 4096),
              help="with --ray: build workers (one task at a time each)")
@click.option("--store", "store_url", default=None, metavar="URL",
              help="write every recording's rows to this shared database (a SQLAlchemy URL, e.g. "
                   "postgresql+psycopg://HOST/DB) instead of a SQLite file per recording")
@click.option("--bodies", "store_bodies", default=None, type=click.Path(file_okay=False),
              help="with --store: the body directory every worker reaches (a shared filesystem)")
@click.option("--out", required=True, type=click.Path(file_okay=False),
              help="directory for recordings/, results/, tasks.jsonl and report.json")
@click.option("--json", "as_json", is_flag=True)
def cache_build_command(tasks_path: str, policy: str, runs: int, crawl_depth: int, crawl_session: bool,
                        parallel: int, resolve: tuple[str, ...], seed: int, judge: str | None, allow_private: bool,
                        ray_address: str | None, ray_workers: int, store_url: str | None,
                        store_bodies: str | None, out: str, as_json: bool) -> None:
    """Record each live task's episodes of POLICY, infer rules, replay with the network cut and keep the
    tasks still solved: writes OUT/tasks.jsonl (source.kind = cache) and OUT/report.json. Re-running
    skips the tasks already finished."""
    from weblica.cache.build import BuildOptions
    from weblica.pipelines.cache_build import build_cache, check_request

    if ray_address:
        try:
            import ray  # noqa: F401
        except ImportError:
            raise UserError("--ray needs Ray: pip install 'weblica[ray]'") from None
    tasks = load_task_file(tasks_path)
    options = BuildOptions(policy=policy, runs=runs, crawl_depth=crawl_depth, resolve=tuple(resolve), seed=seed,
                           judge=judge, allow_private=allow_private, store_url=store_url,
                           store_bodies=store_bodies, crawl_session=crawl_session)
    with user_errors():   # everything that can fail before any task is recorded
        options = check_request(tasks, options, out)
    with _reported(as_json):
        report = build_cache(tasks, options, out, parallel=parallel, progress=not as_json,
                             ray_address=ray_address, ray_workers=ray_workers)
    emit(report, as_json, _human_build(report))


@click.command("import")
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

@click.command("export")
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


def register(cli: click.Group) -> None:
    for command in (record_command, rules_group, replay_command, cache_group, import_command, export_command):
        cli.add_command(command)


def _record_policy(url: str, policy: str, instruction: str | None, actions: list[dict[str, Any]] | None, runs: int,
                   resolve: tuple[str, ...], out: str, allow_private: bool = False,
                   progress: bool = False) -> dict[str, Any]:
    from weblica.cache.build import record_policy
    from weblica.env.task import Task
    from weblica.policy.factory import make_policy_factory

    if actions is not None:
        raise UserError("give either --actions FILE (a scripted browse) or --policy P (an agent's browse), not both")
    if not instruction:
        raise UserError("--policy needs --instruction TEXT: what the agent is asked to do on the site")
    if policy == "oracle":
        raise UserError("the oracle policy needs a task's oracle actions; record them with --actions FILE, or use "
                        "`weblica cache build --tasks T --policy oracle`")
    task = Task(id=f"record-{urlsplit(url).hostname or 'site'}", start_url=url, instruction=instruction)
    with user_errors():
        factory = make_policy_factory(policy, 0)
    try:
        recorded = asyncio.run(record_policy(task, factory, out, runs, resolve, allow_private=allow_private,
                                             progress=progress))
    except ValueError as exc:
        raise UserError(str(exc)) from None
    except _store_errors() as exc:
        raise UserError(str(exc)) from None
    errors = [f"run {e.run_id}: {e.error}" for e in recorded.episodes if e.error] + recorded.failures + recorded.refused
    return {"recording": recorded.recording, "runs": len(recorded.episodes), "exchanges": recorded.exchanges,
            "errors": errors, "policy": policy, "episodes": [asdict(e) for e in recorded.episodes]}


def _replay(recording: str, actions_path: str | None, check: bool, port: int, seed: int, start_url: str | None,
            dirs: list[str] | None, as_json: bool, clock: float | None = None) -> None:
    from weblica.cache import replay

    try:
        if check:
            summary = asyncio.run(replay.check(recording, _load_actions(actions_path), seed=seed, rules_dirs=dirs,
                                               start_url=start_url, clock=clock))
            emit(summary, as_json, _human_check(summary))
            if summary.get("store_errors"):  # the recording is damaged: the check failed
                sys.exit(1)
            return

        def ready(url: str) -> None:
            emit({"recording": recording, "proxy": url, "ignore_https_errors": True}, as_json,
                 f"replay proxy for {recording} on {url} (point a browser at it; accept its certificate "
                 "or ignore HTTPS errors). Ctrl-C stops it.")

        asyncio.run(replay.serve(recording, port, dirs, ready, clock))
    except KeyboardInterrupt:
        pass


def _human_record(summary: dict[str, Any]) -> str:
    lines = [f"{summary['recording']}: {summary['runs']} run(s), {summary['exchanges']} exchange(s) recorded"]
    for episode in summary.get("episodes", []):
        lines.append(f"  run {episode['run_id']} (seed {episode['seed']}): "
                     f"{'solved' if episode['success'] else 'not solved'}, {episode['steps']} step(s), "
                     f"ended {episode['termination_reason']}")
    lines += [f"error: {e}" for e in summary["errors"]]
    lines.append(f"next: weblica rules infer {summary['recording']}")
    return "\n".join(lines)


def _human_age(report: dict[str, Any]) -> str:
    counts = ", ".join(f"{k} {v}" for k, v in report["carrying_dates"].items())
    lines = [f"{report['recording']}: recorded {report['recorded_from']} .. {report['recorded_to']}, "
             f"{report['age_days']} days ago ({report['runs']} run(s), {report['responses']} responses)",
             f"{report['responses_with_dates']} responses carry dates: {counts}",
             f"cookie expiries passed since recording: {report['cookies_expired_since']} (a replay moves them: to the "
             "wall clock by default, to the virtual clock with --shift-dates)"]
    for row in report["listed"]:
        what = ", ".join(k for k in ("date", "expires", "last-modified", "cookie_expiry", "body_dates") if k in row)
        lines.append(f"  {row['status']} {row['url'][:100]}: {what}")
    return "\n".join(lines)


def _human_import(summary: dict[str, Any]) -> str:
    if summary.get("skipped"):
        return f"skipped: {summary['reason']}"
    lines = [f"{summary['recording']}: {summary['runs']} run(s), {summary['exchanges']} exchange(s) imported"]
    for bad in summary.get("bad_records", []):
        at = f" at byte {bad['offset']}" if "offset" in bad else ""
        lines.append(f"skipped record {bad['index']}{at}: {bad['reason']}")
    for entry in summary.get("coerced", []):
        lines.append(f"read entry {entry['index']} as its exporter wrote it: {'; '.join(entry['read'])}")
    return "\n".join(lines)


def _human_check(summary: dict[str, Any]) -> str:
    tiers = ", ".join(f"{k} {v}" for k, v in summary["tiers"].items())
    lines = [f"{summary['requests']} requests: {tiers}",
             f"screens identical: {summary['screens_identical']}",
             f"outbound connections: {summary['outbound_connections']}"]
    if summary.get("clock"):
        lines.append(f"dates shifted to the virtual clock {summary['clock']}")
    sides = [(name, summary[key]) for name, key in (("with rules", "with_rules"), ("without rules", "without_rules"))
             if key in summary]
    if len(sides) == 2:
        lines.append(f"{'':14} {'rules':>5} {'served':>7} {'misses':>6} {'exact':>6} {'normal.':>7} {'scored':>6} "
                     f"{'stub':>5}  screens")
        for name, side in sides:
            t = side["tiers"]
            lines.append(f"{name:14} {side['rules']:>5} {side['served']:>7} {side['misses']:>6} {t.get('exact', 0):>6} "
                         f"{t.get('normalized', 0):>7} {t.get('scored', 0):>6} {t.get('stub', 0):>5}  "
                         f"{side['screens_identical']}")
    if summary.get("error"):
        lines.append(f"error: {summary['error']}")
    for miss in summary.get("misses", [])[:10]:
        lines.append(f"miss {miss['method']} {miss['url']} (closest {miss['closest']}; differs in "
                     f"{', '.join(miss['differing'])})")
    return "\n".join(lines)


def _human_build(report: dict[str, Any]) -> str:
    lines = [f"{len(report['kept'])} of {report['tasks']} task(s) kept, written to {report['tasks_file']}"]
    if report.get("nothing_to_do"):
        lines.insert(0, "nothing to do: every task was already built in this --out (its results/ hold them; "
                        "delete a task's results/<task>.json to build it again)")
    for row in report["kept"]:
        tiers = ", ".join(f"{k} {v}" for k, v in (row["replay_tiers"] or {}).items()) or "none"
        lines.append(f"kept    {row['id']}: replay misses {row['replay_misses']}, tiers: {tiers}")
        if row.get("crawl"):
            crawl = row["crawl"]
            lines.append(f"        crawled {crawl['opened']} page(s), {crawl['with_session']} with the episode's "
                         f"session, answered {crawl['answered']}; {crawl['not_followed']} link(s) not followed "
                         "(they would act)")
    for row in report["dropped"]:
        lines.append(f"dropped {row['id']}: {row['reason']} ({row['detail']})")
    return "\n".join(lines)
