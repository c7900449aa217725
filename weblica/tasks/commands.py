"""`weblica tasks decompose FILE` and `weblica tasks import FILE`."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from weblica.cli import UserError, emit
from weblica.tasks.importers import FORMATS


@click.group("tasks")
def tasks_group() -> None:
    """Task sets from elsewhere: import WebGym, InSTA, WebArena and Mind2Web files; decompose rubric tasks."""

@tasks_group.command("decompose")
@click.argument("task_file", type=click.Path(dir_okay=False))
@click.option("--out", "out_path", type=click.Path(dir_okay=False),
              help="where to write parents + sub-tasks (default: FILE with .decomposed.jsonl)")
@click.option("--llm", "llm_spec", help="rewrite instructions with this chat model (openai:URL#MODEL); "
                                        "default: the offline template")
@click.option("--only-subtasks", is_flag=True, help="write the sub-tasks without their parents")
@click.option("--json", "as_json", is_flag=True)
def decompose(task_file: str, out_path: str | None, llm_spec: str | None, only_subtasks: bool,
              as_json: bool) -> None:
    """WebGym decomposition: for each task with >= 2 fact groups and a group of >= 3 facts, one sub-task
    per proper subset of groups that keeps a large group."""
    from weblica.env.task import TaskError, load_tasks, save_tasks
    from weblica.scoring.benchmark_judges import JudgeError, make_provider
    from weblica.tasks.decompose import LLMRewriter, decompose_tasks

    try:
        tasks = load_tasks(task_file)
        rewriter = LLMRewriter(make_provider(llm_spec)) if llm_spec else None
        out_tasks, summary = decompose_tasks(tasks, rewriter, keep_parents=not only_subtasks)
    except (TaskError, JudgeError) as exc:
        raise UserError(str(exc)) from None
    out = Path(out_path) if out_path else Path(task_file).with_suffix(".decomposed.jsonl")
    save_tasks(out_tasks, out)
    summary["out"] = str(out)
    emit(summary, as_json, f"{summary['subtasks']} sub-tasks from {summary['decomposed']} of "
                           f"{summary['tasks']} tasks -> {out}")

@tasks_group.command("import")
@click.argument("source_file", type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["auto", *FORMATS]), default="auto", show_default=True)
@click.option("--out", "out_path", required=True, type=click.Path(dir_okay=False), help="tasks.jsonl to write")
@click.option("--site", "sites", multiple=True, metavar="NAME=URL",
              help="where a site the file names without a URL lives: WebArena's SHOPPING, GITLAB, ... "
                   "(default $WA_NAME), Mind2Web's website names; repeatable")
@click.option("--json", "as_json", is_flag=True)
def import_command(source_file: str, fmt: str, out_path: str, sites: tuple[str, ...], as_json: bool) -> None:
    """Convert a WebGym, InSTA, WebArena or Mind2Web task file into weblica tasks (live); reports what
    became checks, what went to rubric criteria and what did not map."""
    from weblica.env.task import TaskError, save_tasks
    from weblica.tasks.importers import import_file

    named = {}
    for item in sites:
        name, sep, url = item.partition("=")
        if not sep or not name.strip() or not url.strip():
            raise UserError(f"--site {item}: use NAME=URL, e.g. --site SHOPPING=http://127.0.0.1:7770")
        named[name.strip()] = url.strip()
    try:
        tasks, report = import_file(source_file, fmt, named)
    except (TaskError, ValueError) as exc:
        raise UserError(str(exc)) from None
    save_tasks(tasks, out_path)
    with_rubric = sum(1 for t in tasks if t.rubric)
    with_checks = sum(1 for t in tasks if t.checks)
    summary: dict[str, Any] = {"tasks": len(tasks), "with_checks": with_checks, "with_rubric": with_rubric, "out": out_path,
               "report": report.to_dict()}
    human = [f"{len(tasks)} tasks ({with_checks} with checks, {with_rubric} with rubric criteria) -> {out_path}"]
    emit(summary, as_json, "\n".join(human + report.lines()))


def register(cli: click.Group) -> None:
    cli.add_command(tasks_group)
