"""The `weblica` command line. Each concept registers its own commands; this module only assembles them.

Every command takes `--json` and then prints one machine-readable JSON object on stdout.
"""
from __future__ import annotations

import importlib
import json
import sys
from typing import Any

import click

# modules exposing `register(cli: click.Group) -> None`
COMMAND_MODULES = (
    "weblica.commands.run",
    "weblica.commands.demo",
    "weblica.commands.env_server",
    "weblica.synth.commands",
    "weblica.serve.commands",
    "weblica.cache.commands",
    "weblica.policy.commands",
    "weblica.train.commands",
    "weblica.eval.commands",
    "weblica.tasks.commands",
    "weblica.judge.commands",
    "weblica.analysis.commands",
)


def emit(summary: dict[str, Any], as_json: bool, human: str | None = None) -> None:
    """Print a command's summary: one JSON object with --json, else the human text."""
    if as_json:
        click.echo(json.dumps(summary, sort_keys=True))
    elif human is not None:
        click.echo(human)
    else:
        for key, value in summary.items():
            click.echo(f"{key}: {value}")


class UserError(click.ClickException):
    """An error caused by input or setup, shown without a traceback, naming the fix."""


def load_task_file(path: str) -> list[Any]:
    """The tasks of a tasks.jsonl given on the command line; a bad or empty file is a UserError."""
    from weblica.env.task import TaskError, load_tasks

    try:
        tasks = load_tasks(path)
    except TaskError as exc:
        raise UserError(str(exc)) from None
    if not tasks:
        raise UserError(f"{path} holds no tasks")
    return tasks


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="weblica")
def cli() -> None:
    """weblica: hermetic, reproducible training environments for visual web agents."""


_registered = False


def get_cli() -> click.Group:
    """The command group with every concept's commands registered (done once, lazily, so that command
    modules can import this module's helpers)."""
    global _registered
    if not _registered:
        _registered = True
        _register_all()
    return cli


def _register_all() -> None:
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:  # that concept has no commands yet
                continue
            raise
        module.register(cli)


def main() -> None:
    try:
        get_cli()(standalone_mode=True)
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
