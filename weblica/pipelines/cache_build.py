"""`weblica cache build`: live tasks in, replayable cache tasks out, over many tasks at once.

Each task is built by `weblica.cache.build.build_task` (record K episodes, infer rules, replay with the
network cut, keep it if still solved). This module runs many of them: in `parallel` worker processes
(mitmproxy allows one proxy per process), or on the actors of a Ray cluster (`cache_build_ray`), and
makes the build resumable: every task's outcome is written to `OUT/results/<task>.json` when it
finishes, so a re-run skips finished tasks; `OUT/tasks.jsonl` (the kept tasks, `source.kind = cache`)
and `OUT/report.json` are rewritten from the results at the end.
"""
from __future__ import annotations

import asyncio
import json
from collections import Counter
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any, Callable

from weblica.cache.build import BuildOptions, build_in_worker, build_prefix, build_task, failed_worker_result, task_slug
from weblica.env.task import Task
from weblica.progress import OptionalBar


class BuildRequestError(ValueError):
    """A cache build asked for something it cannot do (duplicate task ids, a bad --resolve, a store that
    cannot be opened); found before any task is recorded."""


def check_request(tasks: list[Task], options: BuildOptions, out: str | Path) -> BuildOptions:
    """Everything about a build that can fail before any task is recorded: the task ids, the policy spec
    (and oracle actions for the oracle), the judge spec, the output directory, --resolve entries and a
    shared store. Returns the options with a shared store's paths made absolute."""
    from weblica.cache.addons import parse_resolve
    from weblica.env.task import first_duplicate_id
    from weblica.policy.factory import PolicySpecError, make_policy_factory, parse_spec

    duplicate = first_duplicate_id(tasks)
    if duplicate:
        raise BuildRequestError(f"task id {duplicate!r} appears twice; give each task its own id")
    make_policy_factory(options.policy, options.seed, tasks=tasks)
    if options.judge:
        kind = parse_spec(options.judge)[0]
        if kind not in ("openai", "anthropic"):
            raise PolicySpecError(f"--judge {options.judge}: a judge is an openai:URL#MODEL or anthropic:MODEL")
    if Path(out).exists() and not Path(out).is_dir():
        raise BuildRequestError(f"--out {out} is a file; give a directory (new, or one a build wrote to resume it)")
    try:
        parse_resolve(list(options.resolve))
    except ValueError as exc:
        raise BuildRequestError(str(exc)) from None
    if bool(options.store_url) != bool(options.store_bodies):
        raise BuildRequestError("--store URL and --bodies DIR go together: the rows in the shared database, the "
                                "bodies in a directory every worker reaches")
    if options.store_url:
        options = shared_store_options(options, out)
        _open_checked(options)
    return options


def shared_store_options(options: BuildOptions, out: str | Path) -> BuildOptions:
    """The options with the shared store's paths absolute (workers do not share the driver's directory)
    and this build's name prefix in it."""
    return replace(options, store_url=absolute_sqlite_url(options.store_url or ""),
                   store_bodies=str(Path(options.store_bodies).resolve()) if options.store_bodies else None,
                   store_prefix=options.store_prefix or build_prefix(out))


def _open_checked(options: BuildOptions) -> None:
    """A shared store that cannot be opened is one line naming the URL and the fix."""
    from sqlalchemy.exc import ArgumentError, NoSuchModuleError

    from weblica.cache.store import StoreError

    try:
        open_shared_store(options)
    except StoreError as exc:   # reached, but refused (no such database, no connection)
        raise BuildRequestError(f"--store {options.store_url}: {exc}") from None
    except (ArgumentError, NoSuchModuleError, ImportError, ValueError, OSError) as exc:
        raise BuildRequestError(
            f"--store {options.store_url}: cannot open it ({type(exc).__name__}: {exc}). Fix: give a SQLAlchemy "
            "URL whose driver is installed, e.g. postgresql+psycopg://USER@HOST/DB (pip install "
            "'weblica[postgres]') or sqlite:////shared/recordings.sqlite") from None


def build_cache(tasks: list[Task], options: BuildOptions, out: str | Path, parallel: int = 1,
                progress: bool = False, ray_address: str | None = None, ray_workers: int = 2) -> dict[str, Any]:
    """Build a cache task set from live tasks; resumable (finished tasks are read back, not redone).
    With `ray_address` ('local', 'auto' or a cluster's address) the tasks run on `ray_workers` Ray actors.
    The report's `nothing_to_do` says a re-run found every task already built."""
    out = Path(out)
    if options.store_url:
        options = shared_store_options(options, out)
        open_shared_store(options)
    results_dir = out / "results"
    results_dir.mkdir(parents=True, exist_ok=True)
    results: dict[str, dict[str, Any]] = {}
    todo = []
    for task in tasks:
        path = results_dir / f"{task_slug(task.id)}.json"
        if path.exists():
            try:
                results[task.id] = {**json.loads(path.read_text(encoding="utf-8")), "resumed": True}
                continue
            except ValueError:   # a result cut off mid-write: build the task again
                pass
        todo.append(task)

    counts = Counter(("kept" if r["kept"] else "dropped") for r in results.values())
    with OptionalBar(len(todo), _describe(counts), progress and bool(todo)) as bar:
        def advance(result: dict[str, Any]) -> None:
            path = results_dir / f"{task_slug(result['id'])}.json"
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(result, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
            tmp.replace(path)
            results[result["id"]] = result
            counts["kept" if result["kept"] else "dropped"] += 1
            bar.advance(_describe(counts))

        if ray_address and todo:
            from weblica.pipelines.cache_build_ray import build_on_ray

            build_on_ray(todo, options, out, ray_address, ray_workers, advance)
        elif parallel <= 1 or len(todo) <= 1:
            for task in todo:
                advance(asyncio.run(build_task(task, options, out)))
        else:
            _run_pool(todo, options, out, parallel, advance)
    report = write_outputs(tasks, results, options, out)
    report["nothing_to_do"] = not todo and bool(tasks)
    return report


def absolute_sqlite_url(url: str) -> str:
    """A SQLite URL with a relative path made absolute (workers do not share the driver's directory)."""
    prefix = "sqlite:///"
    if url.startswith(prefix) and not url.startswith(prefix + "/") and url != prefix + ":memory:":
        return prefix + str(Path(url[len(prefix):]).resolve())
    return url


def open_shared_store(options: BuildOptions) -> None:
    """Make the shared store's schema once, before any worker starts (a bad URL or an unreachable server
    fails here, in one line, before any task is recorded)."""
    from weblica.cache.store import Store

    if not options.store_url or not options.store_bodies:
        raise BuildRequestError("a shared store needs a body directory every worker reaches: give --store URL "
                                "and --bodies DIR")
    Path(options.store_bodies).mkdir(parents=True, exist_ok=True)
    Store(options.store_url, options.store_bodies, create=True).close()


def _run_pool(todo: list[Task], options: BuildOptions, out: Path, parallel: int,
              advance: Callable[[dict[str, Any]], None]) -> None:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    context = multiprocessing.get_context("spawn")   # no forked asyncio loops or browser handles
    with ProcessPoolExecutor(max_workers=parallel, mp_context=context) as pool:
        futures = {pool.submit(build_in_worker, t.to_dict(), asdict(options), str(out)): t for t in todo}
        for future in as_completed(futures):
            task = futures[future]
            try:
                advance(future.result())
            except Exception as exc:   # the worker itself died (a crash, out of memory)
                advance(failed_worker_result(task, exc))


def write_outputs(tasks: list[Task], results: dict[str, dict[str, Any]], options: BuildOptions,
                  out: Path) -> dict[str, Any]:
    """OUT/tasks.jsonl (kept tasks, in input order) and OUT/report.json, from every task's result."""
    from weblica.env.task import save_tasks

    ordered = [results[t.id] for t in tasks if t.id in results]
    kept = [Task.from_dict(r["task"]) for r in ordered if r["kept"]]
    save_tasks(kept, out / "tasks.jsonl")

    def row(r: dict[str, Any]) -> dict[str, Any]:
        replay = r.get("replay", {})
        out_row = {"id": r["id"], "recording": r.get("recording"), "resumed": r.get("resumed", False),
                   "exchanges": r.get("record", {}).get("exchanges"),
                   "live_solved": sum(e["success"] for e in r.get("record", {}).get("episodes", [])),
                   "replay_tiers": replay.get("policy", {}).get("tiers"),
                   "replay_misses": len(replay.get("policy", {}).get("misses", [])) if replay else None,
                   "recorded_actions": {k: replay["recorded_actions"][k] for k in ("tiers", "screens_identical")}
                   if replay else None,
                   "outbound_connections": replay.get("policy", {}).get("outbound_connections") if replay else None,
                   "rules": {k: v for k, v in r.get("rules", {}).items() if k != "never_hurt"} or None,
                   "crawled": sum(1 for c in r.get("record", {}).get("crawled", []) if "refused" not in c),
                   "crawl": r.get("crawl"), "confusers": r.get("confusers")}
        if not r["kept"]:
            out_row.update(reason=r["reason"], detail=r.get("detail"))
        return out_row

    report = {"policy": options.policy, "runs": options.runs, "crawl_depth": options.crawl_depth,
              "tasks": len(tasks), "kept": [row(r) for r in ordered if r["kept"]],
              "dropped": [row(r) for r in ordered if not r["kept"]],
              "reasons": dict(Counter(r["reason"] for r in ordered if not r["kept"])),
              "tasks_file": str(out / "tasks.jsonl")}
    (out / "report.json").write_text(json.dumps(report, indent=1, sort_keys=True, ensure_ascii=False) + "\n",
                                     encoding="utf-8")
    return report


def _describe(counts: Counter) -> str:
    return f"cache build: kept {counts['kept']}, dropped {counts['dropped']}"
