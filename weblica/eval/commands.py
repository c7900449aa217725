"""`weblica eval` (offline on task files, or --live on a benchmark) and `weblica view` (the trajectory viewer)."""
from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import click

from weblica.cli import UserError, bind_or_fail, emit, load_task_file, user_errors

BENCHMARK_NAMES = ("online-mind2web", "webvoyager", "deepshop", "webtailbench")


@click.command("eval")
@click.option("--tasks", "tasks_path", required=True, type=click.Path(exists=True, dir_okay=False),
              help="tasks.jsonl, or with --live a benchmark's task file")
@click.option("--policy", default="oracle", show_default=True, help="oracle, random, hf:DIR, openai:URL, ...")
@click.option("--k", "k", default=1, show_default=True, type=click.IntRange(1, 1000), help="report pass@k")
@click.option("--samples", "samples", default=None, type=click.IntRange(1, 1000),
              help="episodes per task (default k; never fewer than k)")
@click.option("--parallel", default=1, show_default=True, type=click.IntRange(1, 64),
              help="browser environments at once")
@click.option("--seed", default=0, show_default=True, type=int, help="run seed; episode seeds derive from it")
@click.option("--out", default=None, type=click.Path(file_okay=False),
              help="run directory for episodes, screenshots and report (default eval-runs/<tasks>)")
@click.option("--live", is_flag=True, help="evaluate on the live web with a benchmark's judge")
@click.option("--benchmark", type=click.Choice(BENCHMARK_NAMES), default=None, help="with --live")
@click.option("--judge", "judge_spec", default=None,
              help="with --live: judge model, openai:URL#MODEL (any OpenAI-compatible server)")
@click.option("--max-steps", default=None, type=click.IntRange(1, 500), help="with --live: steps per task")
@click.option("--block-after", default=2, show_default=True, type=click.IntRange(1, 100),
              help="with --live: block a host after this many load failures in a row")
@click.option("--judge-prompts", default=None, type=click.Path(exists=True, file_okay=False),
              help="with --live: directory of judge prompts (default: the repository's eval/judges)")
@click.option("--allow-private", is_flag=True,
              help="let local and live tasks reach link-local and private addresses (refused by default)")
@click.option("--resume", is_flag=True,
              help="finish the evaluation in --out: keep the episodes it already wrote, play the others")
@click.option("--json", "as_json", is_flag=True, help="print a JSON summary")
def eval_command(tasks_path: str, policy: str, k: int, samples: int | None, parallel: int, seed: int,
                 out: str | None, live: bool, benchmark: str | None, judge_spec: str | None,
                 max_steps: int | None, block_after: int, judge_prompts: str | None, allow_private: bool,
                 resume: bool, as_json: bool) -> None:
    """Evaluate a policy: success, pass@k, per skill / category / difficulty; writes report.json/.html."""
    from weblica.eval.runner import human_summary, summary_of

    out_dir = Path(out) if out else Path("eval-runs") / Path(tasks_path).stem
    if live:
        if resume:
            raise UserError("--resume works for offline evaluation; a live evaluation starts again")
        report = _eval_live(tasks_path, benchmark, policy, judge_spec, out_dir, k, samples, parallel, seed,
                            max_steps, block_after, judge_prompts, allow_private)
    else:
        if benchmark or judge_spec or judge_prompts:
            raise UserError("--benchmark and --judge belong to live mode: add --live")
        report = _eval_offline(tasks_path, policy, out_dir, k, samples, parallel, seed, as_json, allow_private,
                               resume)
    summary = summary_of(report)
    emit(summary, as_json, human=human_summary(summary))

@click.command("view")
@click.argument("run_dir", type=click.Path(file_okay=False))
@click.option("--compare", "compare_dir", default=None, type=click.Path(file_okay=False),
              help="a second run directory, shown side by side")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8765, show_default=True, type=click.IntRange(0, 65535), help="0 picks a free port")
@click.option("--json", "as_json", is_flag=True, help="print the URL as JSON, then serve")
def view_command(run_dir: str, compare_dir: str | None, host: str, port: int, as_json: bool) -> None:
    """Serve a web page to step through a run's episodes (screenshots, click markers, reasoning)."""
    dirs = [Path(run_dir)] + ([Path(compare_dir)] if compare_dir else [])
    serve_viewer(dirs, host, port, as_json)


def register(cli: click.Group) -> None:
    cli.add_command(eval_command)
    cli.add_command(view_command)


def _eval_offline(tasks_path: str, policy: str, out: Path, k: int, samples: int | None, parallel: int,
                  seed: int, as_json: bool, allow_private: bool = False, resume: bool = False) -> dict[str, Any]:
    from weblica.browser.launcher import ChromiumNotFound
    from weblica.env.sources import UnknownSource, open_backends
    from weblica.eval.runner import evaluate
    from weblica.policy.factory import make_policy_factory
    from weblica.run_log import RunDirError

    tasks = load_task_file(tasks_path)
    with user_errors():
        factory = make_policy_factory(policy, seed, tasks=tasks)

    async def go() -> dict[str, Any]:
        async with open_backends(tasks, allow_private=allow_private) as backends:
            return await evaluate(tasks, factory, out, k=k, samples=samples, parallel=parallel, seed=seed,
                                  backends=backends, progress=not as_json,
                                  meta={"policy": policy, "tasks": tasks_path}, resume=resume)

    try:
        return asyncio.run(go())
    except (ChromiumNotFound, UnknownSource, RunDirError) as exc:
        raise UserError(str(exc)) from None


def _eval_live(tasks_path: str, benchmark: str | None, policy: str, judge_spec: str | None, out: Path, k: int,
               samples: int | None, parallel: int, seed: int, max_steps: int | None, block_after: int,
               judge_prompts: str | None, allow_private: bool = False) -> dict[str, Any]:
    if benchmark is None:
        raise UserError(f"--live needs --benchmark ({' | '.join(BENCHMARK_NAMES)})")
    if judge_spec is None:
        raise UserError("--live needs a judge: --judge openai:http://HOST:PORT/v1#MODEL")
    if policy == "oracle":
        raise UserError("benchmark tasks have no oracle actions: use --policy random or a model")
    from weblica.browser.launcher import ChromiumNotFound
    from weblica.policy.factory import make_policy_factory
    from weblica.eval.benchmarks import BenchmarkFormatError, load_benchmark
    from weblica.scoring.benchmark_judges import JudgeError, make_provider
    from weblica.eval.live import LiveConfig, OfflineError, run_live

    try:
        tasks = load_benchmark(benchmark, tasks_path)
        provider = make_provider(judge_spec)
    except (BenchmarkFormatError, JudgeError) as exc:
        raise UserError(str(exc)) from None
    if max_steps is not None:
        for task in tasks:
            task.max_steps = max_steps
    config = LiveConfig(benchmark=benchmark, k=k, samples=samples, parallel=parallel, seed=seed,
                        block_after=block_after, allow_private=allow_private)
    with user_errors():
        factory = make_policy_factory(policy, seed)
    try:
        return asyncio.run(run_live(tasks, factory, provider, out, config,
                                    meta={"policy": policy, "tasks": tasks_path, "judge": judge_spec},
                                    judge_prompts=Path(judge_prompts) if judge_prompts else None))
    except (OfflineError, ChromiumNotFound) as exc:
        raise UserError(str(exc)) from None


def serve_viewer(dirs: list[Path], host: str = "127.0.0.1", port: int = 8765, as_json: bool = False) -> None:
    """Serve the viewer over run directories until Ctrl-C, printing its URL first."""
    from werkzeug.serving import make_server

    from weblica.viewer import RunDirError, create_app

    try:
        app = create_app(dirs)
    except RunDirError as exc:
        raise UserError(str(exc)) from None
    server = bind_or_fail(host, port, lambda: make_server(host, port, app, threaded=True))
    url = f"http://{host}:{server.server_port}/"
    emit({"url": url, "runs": [str(d) for d in dirs]}, as_json, human=f"viewer at {url}  (Ctrl+C to stop)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
