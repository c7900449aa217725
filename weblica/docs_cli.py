"""The CLI reference (docs/cli.md), written from the click commands themselves so that it cannot drift.

    python -m weblica.docs_cli > docs/cli.md       # write it
    python -m weblica.docs_cli --check docs/cli.md # exit 1 when the file differs from the commands

Each command gets its usage line, its help text and a table of its options as `--help` shows them (the same
help records, defaults and ranges). tests/cli/test_docs.py fails when docs/cli.md is out of date.
"""
from __future__ import annotations

import inspect
import sys
from pathlib import Path
from typing import Iterator

import click

HEADER = """\
# CLI reference

Generated from the click commands by `python -m weblica.docs_cli > docs/cli.md`; do not edit by hand
(`tests/cli/test_docs.py` fails when this file and the commands disagree). Every command takes `--json` and then
prints one JSON object on stdout (a failure: `{"error": "..."}` and a non-zero exit, 2 for usage errors);
progress goes to stderr. `-h` / `--help` shows a command's help. The guides in this folder say when to use which command.
"""


def commands(group: click.Group, path: tuple[str, ...] = ("weblica",)) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    """Every command under `group`, depth first, by name; a group that also runs on its own
    (`invoke_without_command`, as `weblica synth`) is listed before its subcommands."""
    ctx = click.Context(group, info_name=path[-1])
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is None or command.hidden:
            continue
        if isinstance(command, click.Group):
            if command.invoke_without_command:
                yield (*path, name), command
            yield from commands(command, (*path, name))
        else:
            yield (*path, name), command


def _context(path: tuple[str, ...], command: click.Command) -> click.Context:
    parent = None
    for name in path[:-1]:  # the parents' names make the usage line read `weblica cache build ...`
        parent = click.Context(click.Command(name), info_name=name, parent=parent)
    return click.Context(command, info_name=path[-1], parent=parent)


def _help_text(command: click.Command) -> str:
    text = inspect.cleandoc(command.help or "").split("\f", 1)[0]
    return "\n".join(line for line in text.splitlines() if line.strip() != "\b").strip()


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def command_section(path: tuple[str, ...], command: click.Command) -> str:
    """One command's section: heading, usage, help text and its options' table."""
    ctx = _context(path, command)
    pieces = " ".join(command.collect_usage_pieces(ctx))
    if isinstance(command, click.Group):  # runs on its own; its subcommands have sections of their own
        pieces = pieces.replace(" [COMMAND] [ARGS]...", "").replace(" COMMAND [ARGS]...", "")
    lines = [f"## {' '.join(path)}", "", "```text", f"{' '.join(path)} {pieces}".rstrip(), "```", ""]
    text = _help_text(command)
    if text:
        lines += [text, ""]
    rows = []
    for param in command.params:  # not get_params: every command's -h/--help would be a row of its own
        record = param.get_help_record(ctx)
        if record is not None:
            names, what = record
            rows.append(f"| `{_cell(names)}` | {_cell(what) or ('argument' if isinstance(param, click.Argument) else ' ')} |")
    if rows:
        lines += ["| option | what |", "|---|---|", *rows, ""]
    return "\n".join(lines)


def render(group: click.Group | None = None) -> str:
    """docs/cli.md's text for `group` (default: the `weblica` command line)."""
    if group is None:
        from weblica.cli import get_cli

        group = get_cli()
    listed = list(commands(group))
    index = ["| command | what |", "|---|---|"]
    for path, command in listed:
        anchor = "-".join(path).replace("_", "")  # GitHub's anchor of the heading `## weblica cache build`
        summary = command.get_short_help_str(limit=90)
        index.append(f"| [`{' '.join(path)}`](#{anchor}) | {_cell(summary)} |")
    sections = [command_section(path, command) for path, command in listed]
    return "\n".join([HEADER, *index, "", *sections]).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    text = render()
    if args[:1] == ["--check"] and len(args) == 2:
        if Path(args[1]).read_text(encoding="utf-8") == text:
            return 0
        print(f"{args[1]} is out of date with the commands: run `python -m weblica.docs_cli > {args[1]}`",
              file=sys.stderr)
        return 1
    if args:
        print("usage: python -m weblica.docs_cli [--check docs/cli.md]", file=sys.stderr)
        return 2
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
