"""The `weblica` command line. Each concept registers its own commands; this module only assembles them.

Every command takes `--json` and then prints one machine-readable JSON object on stdout: its summary
(through `emit`), or `{"error": ...}` when it fails (see `main`).
"""
from __future__ import annotations

import contextlib
import importlib
import io
import json
import sys
import traceback
from typing import Any, Callable, Iterator, TypeVar

import click

T = TypeVar("T")

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
    global _json_printed
    if as_json:
        click.echo(json.dumps(summary, sort_keys=True))
        _json_printed = True
    elif human is not None:
        click.echo(human)
    else:
        click.echo("\n".join(readable_lines(summary)))


def readable_lines(summary: dict[str, Any], indent: int = 0) -> list[str]:
    """A summary as `key: value` lines a person reads: nested objects indented under their key, lists of
    plain values joined, lists of objects as `-` items; never a Python repr."""
    pad = "  " * indent
    lines = []
    for key, value in summary.items():
        if isinstance(value, dict) and value:
            lines += [f"{pad}{key}:", *readable_lines(value, indent + 1)]
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            lines.append(f"{pad}{key}:")
            for item in value:
                inner = readable_lines(item, indent + 2)
                lines.append(f"{pad}  - {inner[0].strip()}" if inner else f"{pad}  -")
                lines += inner[1:]
        elif isinstance(value, (list, tuple)):
            lines.append(f"{pad}{key}: {', '.join(str(v) for v in value) if value else 'none'}")
        elif isinstance(value, dict):
            lines.append(f"{pad}{key}: none")
        else:
            lines.append(f"{pad}{key}: {value}")
    return lines


def bind_or_fail(host: str, port: int, make: Callable[[], T]) -> T:
    """`make()` (which binds host:port: a server), or a one-line UserError naming the port and the fix.
    Werkzeug prints its own lines and calls sys.exit(1) when the port is taken: both are caught here."""
    printed = io.StringIO()
    try:
        with contextlib.redirect_stderr(printed):
            return make()
    except (OSError, SystemExit) as exc:
        said = printed.getvalue().strip().splitlines()
        reason = exc.strerror or str(exc) if isinstance(exc, OSError) else (said[0] if said else "cannot bind")
        raise UserError(f"cannot listen on {host}:{port} ({reason}): pick another --port, or --port 0 for any "
                        "free one (the port taken is printed)") from None


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """'1 site', '2 sites' (`nouns` where the plural is not noun + s)."""
    return f"{count} {noun if count == 1 else nouns or noun + 's'}"


_json_printed = False  # set once a command printed its JSON summary: a later failure must not print a second


class UserError(click.ClickException):
    """An error caused by input or setup, shown without a traceback, naming the fix."""


def load_task_file(path: str) -> list[Any]:
    """The tasks of a tasks.jsonl given on the command line; a bad or empty file is a UserError."""
    from weblica.env.task import TaskError, load_tasks

    from weblica.env.server_requests import check_json_text

    try:
        tasks = load_tasks(path)
    except TaskError as exc:
        raise UserError(str(exc)) from None
    if not tasks:
        raise UserError(f"{path} holds no tasks")
    for number, task in enumerate(tasks, 1):  # text a run would fail to write later, with its output half done
        try:
            check_json_text(task.to_dict(), max_depth=256)
        except ValueError as exc:
            raise UserError(f"{path}: task {number} ({ascii(task.id)[:60]}): {exc}; fix that line") from None
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


def wants_json(args: list[str]) -> bool:
    """Whether the command line asks for --json (options end at `--`)."""
    return "--json" in (args[: args.index("--")] if "--" in args else args)


@contextlib.contextmanager
def user_errors() -> Iterator[None]:
    """weblica's own errors raised inside (`is_project_error`: their message names the fix) as a UserError, so
    the click command itself shows them as one line, also where it is invoked without `main` (CliRunner, a
    program embedding the command)."""
    try:
        yield
    except click.ClickException:
        raise
    except Exception as exc:
        if not is_project_error(exc):
            raise
        raise UserError(str(exc) or type(exc).__name__) from None


def is_project_error(exc: BaseException) -> bool:
    """Errors weblica raises on purpose (TaskError, StoreError, InteropError, ...): their message names
    the fix, so they are shown as one line, never as a traceback."""
    return type(exc).__module__.split(".")[0] == "weblica"


def _fail(message: str, code: int, as_json: bool) -> None:
    if as_json and not _json_printed:
        click.echo(json.dumps({"error": message}, sort_keys=True))
    else:  # without --json, or after the command's own JSON: stdout keeps exactly one object
        click.echo(f"Error: {message}", err=True)
    sys.exit(code)


def main(args: list[str] | None = None) -> None:
    """Run the command line. With --json, every failure is `{"error": ...}` on stdout and a non-zero exit:
    usage errors (exit 2), input errors (1), interrupts (130) and unexpected exceptions (1, with the
    traceback on stderr)."""
    args = sys.argv[1:] if args is None else list(args)
    as_json = wants_json(args)
    try:
        status = get_cli().main(args, standalone_mode=False)
    except click.exceptions.UsageError as exc:
        hint = f" (see `{exc.ctx.command_path} --help`)" if exc.ctx is not None else ""
        if not as_json:
            exc.show()
            sys.exit(exc.exit_code)
        _fail(exc.format_message() + hint, exc.exit_code, True)
    except click.ClickException as exc:  # UserError and click's own (a bad file argument, ...)
        if not as_json:
            exc.show()
            sys.exit(exc.exit_code)
        _fail(exc.format_message(), exc.exit_code, True)
    except (KeyboardInterrupt, click.Abort):
        _fail("interrupted", 130, as_json)
    except Exception as exc:
        if is_project_error(exc):
            _fail(str(exc) or type(exc).__name__, 1, as_json)
        if isinstance(exc, OSError) and exc.filename is not None:  # the disk said no: a setup problem, not a bug
            target = f"{exc.filename}" + (f" -> {exc.filename2}" if exc.filename2 is not None else "")
            _fail(f"{exc.strerror or type(exc).__name__}: {target}", 1, as_json)
        if not as_json:
            raise
        traceback.print_exc()  # a bug: the traceback goes to stderr, stdout stays one JSON object
        _fail(f"internal error ({type(exc).__name__}: {exc}); this is a bug in weblica, please report it", 1, True)
    sys.exit(status if isinstance(status, int) else 0)


if __name__ == "__main__":
    main()
