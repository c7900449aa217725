"""`weblica tasks decompose FILE` and `weblica tasks import FILE`."""
from __future__ import annotations

from pathlib import Path

import click

from weblica.cli import UserError, emit


def register(cli: click.Group) -> None:
    @cli.group("tasks")
    def tasks_group() -> None:
        """Rubric task sets: decompose into sub-tasks, import WebGym / InSTA files."""

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
        from weblica.eval.judge import JudgeError, make_provider
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
    @click.option("--format", "fmt", type=click.Choice(["auto", "webgym", "insta"]), default="auto",
                  show_default=True)
    @click.option("--out", "out_path", required=True, type=click.Path(dir_okay=False), help="tasks.jsonl to write")
    @click.option("--json", "as_json", is_flag=True)
    def import_command(source_file: str, fmt: str, out_path: str, as_json: bool) -> None:
        """Convert a WebGym or InSTA task file into weblica tasks (live, judged by rubric)."""
        from weblica.env.task import TaskError, save_tasks
        from weblica.tasks.importers import import_tasks

        try:
            tasks = import_tasks(source_file, fmt)
        except (TaskError, ValueError) as exc:
            raise UserError(str(exc)) from None
        save_tasks(tasks, out_path)
        with_rubric = sum(1 for t in tasks if t.rubric)
        emit({"tasks": len(tasks), "with_rubric": with_rubric, "out": out_path}, as_json,
             f"{len(tasks)} tasks ({with_rubric} with fact-group rubrics) -> {out_path}")
