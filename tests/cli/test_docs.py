"""The guide and the references stay true (issue 42): docs/cli.md is what the click commands say, every
`weblica ...` command in README.md and docs/ parses against the real command line (its subcommands, options,
option values and required options), every option, repository path, module and relative link they name
exists, the actions and check kinds the code defines are all documented, and the two commands CI runs are
the README's. Each checker is also shown refusing a wrong input, so none of these can pass by not looking."""
from __future__ import annotations

import ast
import json
import importlib.util
import re
import shlex
from pathlib import Path

import click
import pytest

from weblica import docs_cli
from weblica.cli import get_cli

ROOT = Path(__file__).resolve().parents[2]
GUIDES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MEASUREMENTS = ROOT / "bench" / "RESULTS.md"
SHELL_BLOCKS = {"bash", "sh", "shell", "console"}   # an unlabelled block is read too, but may be program output

DEMO_COMMAND = "bash .ci/setup && .venv/bin/weblica demo"
TEST_COMMAND = ".venv/bin/python -m pytest -q -x -p no:cacheprovider -n 2 --dist loadfile"

# options of other programs that the guides mention (pip, pytest, Chromium, torchrun)
FOREIGN_OPTIONS = {"--extra-index-url", "--no-deps", "--dist", "--proxy-server", "--proxy-bypass-list",
                   "--force-webrtc-ip-handling-policy", "--dns-prefetch-disable", "--disable-threaded-compositing",
                   "--disable-partial-raster", "--nproc-per-node", "--no-sandbox", "--check"}
# paths the guides' own commands create (the tiny recipe's site; the held-out split's folders)
MADE_BY_THE_GUIDE = ("sites/menus-fitness-ae7515bb", "sites/train", "sites/val")
# what click's parser leaves for a parameter the command line did not give (click 8.2 and later: UNSET)
NOT_GIVEN = getattr(click.core, "UNSET", None)
REPO_PATH = re.compile(r"(?<![\w./\"-])((?:weblica|tests|bench|train|eval|sites|docs|examples|cache_rules|requirements|"
                       r"\.ci)/[\w./*-]*|(?:README|pyproject)\.(?:md|toml))")


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def fenced_blocks(text: str) -> list[tuple[int, str, str]]:
    """(line number of the block's first line, language, body) of every fenced code block."""
    blocks, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        opened = re.match(r"^\s*(```+|~~~+)\s*([\w+-]*)", lines[i])
        if not opened:
            i += 1
            continue
        fence, language, start, body = opened.group(1), opened.group(2).lower(), i + 2, []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(fence):
            body.append(lines[i])
            i += 1
        blocks.append((start, language, "\n".join(body)))
        i += 1
    return blocks


def inline_spans(text: str) -> list[str]:
    """The `code` spans of a markdown text outside its fenced blocks."""
    prose = re.sub(r"^\s*(```+|~~~+).*?^\s*\1\s*$", "", text, flags=re.S | re.M)
    return re.findall(r"(?<!`)`([^`\n]+)`(?!`)", prose)


def _without_comment(line: str) -> str:
    """A shell line up to its comment: `#` at the start of a word, outside quotes (`URL#MODEL` stays)."""
    quote = None
    for i, c in enumerate(line):
        if quote:
            quote = None if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i]
    return line


def shell_commands(body: str, strict: bool = True) -> list[list[str]]:
    """The simple commands of a shell snippet, each as its words (continuations joined, comments, `$ `
    prompts, `VAR=value` prefixes and redirections dropped; split at &&, ||, |, ; and &). A line the shell
    could not read is an AssertionError, or skipped when not `strict` (an unlabelled block of output)."""
    out = []
    for line in re.sub(r"\\\n", " ", body).splitlines():
        line = _without_comment(line.strip()).strip()
        line = line[2:] if line.startswith("$ ") else line
        if not line:
            continue
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split, lexer.commenters = True, ""
        try:
            words = list(lexer)
        except ValueError as exc:
            if not strict:
                continue
            raise AssertionError(f"cannot read the shell line {line!r}: {exc}") from None
        command: list[str] = []
        for word in [*words, ";"]:
            if word and set(word) <= set("&|;()"):
                if command:
                    out.append(command)
                command = []
            else:
                command.append(word)
    cleaned = []
    for words in out:
        while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
            words = words[1:]
        cut = next((i for i, w in enumerate(words) if w[:1] in "<>"), len(words))
        if words[:cut]:
            cleaned.append(words[:cut])
    return cleaned


def weblica_args(words: list[str]) -> list[str] | None:
    """The arguments after `weblica` (or `.venv/bin/weblica`), or None for another program."""
    return words[1:] if words and Path(words[0]).name == "weblica" else None


def _contexts(args: list[str]) -> list[tuple[click.Command, click.Context, list[str]]]:
    """Walk `args` down the command tree: (command, its context, the arguments left for it) per level."""
    cli = get_cli()
    ctx = click.Context(cli, info_name="weblica", **cli.context_settings)
    levels, command = [], cli
    while True:
        levels.append((command, ctx, args))
        if not isinstance(command, click.Group):
            return levels
        opts, rest, _ = command.make_parser(ctx).parse_args(list(args))
        help_option = command.get_help_option(ctx)
        if help_option is not None and opts.get(help_option.name) is True:
            return levels
        if not rest:
            if not command.invoke_without_command:
                raise click.UsageError(f"`{ctx.command_path}` needs a subcommand ({', '.join(command.commands)})")
            return levels
        sub = command.get_command(ctx, rest[0])
        if sub is None:
            raise click.UsageError(f"no command {ctx.command_path} {rest[0]!r} "
                                   f"(there are: {', '.join(command.commands)})")
        ctx = click.Context(sub, info_name=rest[0], parent=ctx, **sub.context_settings)
        command, args = sub, rest[1:]


def check_command(args: list[str], complete: bool = True) -> None:
    """Parse `weblica ARGS` as click would, without running it: the subcommands exist and every option is
    one of its command's and has its value; for a `complete` command line (a fenced one, meant to be run)
    also no extra argument is left, required options and arguments are given, and choices, numbers and
    ranges convert. Path values are not opened: the guide's commands make the files later commands read.
    Raises click.UsageError (or click.BadParameter) where click would refuse the command line. Prose names
    commands without their required options (`weblica run` writes ...): those are not `complete`."""
    for command, ctx, given in _contexts(args):
        opts, rest, _ = command.make_parser(ctx).parse_args(list(given))
        if not complete:
            continue
        if not isinstance(command, click.Group) and rest:
            raise click.UsageError(f"`{ctx.command_path}`: unexpected extra argument(s) {rest}")
        help_option = command.get_help_option(ctx)
        if help_option is not None and opts.get(help_option.name) is True:  # `--help` runs nothing else
            return
        runs_here = not isinstance(command, click.Group) or not rest  # else it only passes its options on
        for param in command.params:
            value = opts.get(param.name)
            if value is None or value == () or value is NOT_GIVEN:
                if param.required and runs_here:
                    raise click.UsageError(f"`{ctx.command_path}` needs {param.get_error_hint(ctx)}")
                continue
            if isinstance(param.type, (click.Path, click.File)):
                continue
            values = value if param.multiple or param.nargs != 1 else [value]
            for one in values:
                for item in one if isinstance(one, (list, tuple)) else [one]:
                    param.type.convert(item, param, ctx)


def guide_commands() -> list[tuple[str, list[str] | str]]:
    """(file:line, arguments) of every `weblica` command in the fenced shell blocks (and unlabelled ones) of
    README.md and docs/; in place of the arguments, the reason where a shell block cannot be read."""
    found: list[tuple[str, list[str] | str]] = []
    for path in GUIDES:
        for line, language, body in fenced_blocks(_text(path)):
            if language not in SHELL_BLOCKS | {""}:
                continue
            where = f"{path.relative_to(ROOT)}:{line}"
            try:
                commands = shell_commands(body, strict=language != "")
            except AssertionError as exc:
                found.append((where, str(exc)))
                continue
            found += [(where, args) for words in commands if (args := weblica_args(words)) is not None]
    return found


def inline_commands() -> list[tuple[str, list[str]]]:
    """(file, arguments) of the `weblica ...` code spans in prose that name a concrete command line (no
    `[optional]` parts, `a|b` alternatives or `...`)."""
    found = []
    for path in GUIDES:
        for span in inline_spans(_text(path)):
            if not span.startswith("weblica ") or any(mark in span for mark in ("[", "|", "…", "...", "<")):
                continue
            try:
                words = shlex.split(span)
            except ValueError:
                continue
            found.append((f"{path.relative_to(ROOT)}: {span}", words[1:]))
    return found


# ---- docs/cli.md -------------------------------------------------------------------------------------------

def test_the_cli_reference_is_what_the_commands_say():
    written = _text(ROOT / "docs" / "cli.md")
    assert written == docs_cli.render(), "docs/cli.md is out of date: run `python -m weblica.docs_cli > docs/cli.md`"
    for path, _ in docs_cli.commands(get_cli()):
        assert f"\n## {' '.join(path)}\n" in written


def test_the_cli_reference_changes_with_a_command_and_the_check_says_so(tmp_path, capsys):
    @click.group()
    def tool() -> None:
        """A tool."""

    @tool.command("go")
    @click.option("--far", type=click.IntRange(1, 9), default=3, show_default=True, help="How far | how long.")
    def go(far: int) -> None:
        """Go somewhere."""

    before = docs_cli.render(tool)
    assert "| `--far INTEGER RANGE` | How far \\| how long. [default: 3; 1<=x<=9] |" in before
    click.option("--near", is_flag=True, help="Stay close.")(go)
    after = docs_cli.render(tool)
    assert after != before and "`--near`" in after
    stale = tmp_path / "cli.md"
    stale.write_text(docs_cli.render())
    assert docs_cli.main(["--check", str(stale)]) == 0
    stale.write_text(docs_cli.render().replace("--json", "--jsn", 1))
    assert docs_cli.main(["--check", str(stale)]) == 1
    assert "out of date" in capsys.readouterr().err


# ---- commands in the guides ---------------------------------------------------------------------------------

def test_the_guides_show_commands():
    commands = [" ".join(args[:2]) for _, args in guide_commands() if not isinstance(args, str)]
    for wanted in ("record", "rules infer", "replay", "synth", "validate", "eval", "train sft", "train grpo",
                   "env-server", "cache build", "import", "export", "tasks import", "run", "view"):
        assert any(c == wanted or c.startswith(wanted + " ") for c in commands), f"no example of `weblica {wanted}`"


@pytest.mark.parametrize("where,args", guide_commands(), ids=lambda v: v if isinstance(v, str) else None)
def test_every_fenced_command_parses(where, args):
    if isinstance(args, str):
        pytest.fail(f"{where}: {args}")
    try:
        check_command(args)
    except click.ClickException as exc:
        pytest.fail(f"{where}: `weblica {' '.join(args)}`: {exc.format_message()}")
    except ValueError as exc:  # a value click's own types cannot read
        pytest.fail(f"{where}: `weblica {' '.join(args)}`: {exc}")


@pytest.mark.parametrize("where,args", inline_commands(), ids=lambda v: v if isinstance(v, str) else None)
def test_every_inline_command_parses(where, args):
    try:
        check_command(args, complete=False)
    except click.ClickException as exc:
        pytest.fail(f"{where}: {exc.format_message()}")


@pytest.mark.parametrize("line", [
    "weblica synth --skil forms",                               # no such option
    "weblica rules guess out/rec",                              # no such subcommand
    "weblica rules",                                            # a group that needs its subcommand
    "weblica run --tasks t.jsonl",                              # --out is required
    "weblica eval --tasks t.jsonl --benchmark webarena",        # not one of the choices
    "weblica eval --tasks t.jsonl --parallel 0",                # out of its range
    "weblica replay out/rec out/other --check",                 # one argument too many
    "weblica record --runs 2",                                  # the URL argument is missing
    "weblica train tune --config train/tiny-cpu.yaml",          # KIND is sft or grpo
    "weblica view out/run --port",                              # an option without its value
    "weblica",                                                  # no command at all
])
def test_the_command_check_refuses_wrong_commands(line):
    [words] = shell_commands(line)
    with pytest.raises(click.ClickException):
        check_command(weblica_args(words))


def test_shell_lines_are_split_as_a_shell_reads_them():
    body = ("OMP_NUM_THREADS=1 .venv/bin/weblica train sft --config train/tiny-cpu.yaml   # behaviour cloning\n"
            "weblica serve sites --port 8800 &\n"
            "weblica eval --live --judge 'openai:http://127.0.0.1:8000/v1#judge' \\\n  --benchmark webvoyager\n"
            "python -m weblica.docs_cli > docs/cli.md && weblica view out/run")
    assert shell_commands(body) == [
        [".venv/bin/weblica", "train", "sft", "--config", "train/tiny-cpu.yaml"],
        ["weblica", "serve", "sites", "--port", "8800"],
        ["weblica", "eval", "--live", "--judge", "openai:http://127.0.0.1:8000/v1#judge", "--benchmark", "webvoyager"],
        ["python", "-m", "weblica.docs_cli"],
        ["weblica", "view", "out/run"]]


# ---- what the guides name exists ----------------------------------------------------------------------------

def _known_options() -> set[str]:
    known: set[str] = set()

    def walk(command: click.Command) -> None:
        for param in command.params:
            known.update(o for o in [*param.opts, *param.secondary_opts] if o.startswith("--"))
        if isinstance(command, click.Group):
            for sub in command.commands.values():
                walk(sub)

    walk(get_cli())
    return known | {"--help", "--version"}


def _script_options(script: Path) -> set[str]:
    return set(re.findall(r"add_argument\(\s*['\"](--[a-z0-9-]+)", _text(script)))


def test_every_option_the_guides_name_exists():
    known = _known_options() | FOREIGN_OPTIONS
    for script in [*(ROOT / "bench").glob("*.py"), *(ROOT / ".ci").glob("*.py")]:
        known |= _script_options(script)
    for path in [*GUIDES, MEASUREMENTS]:
        named = set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*[a-z0-9])", _text(path)))
        assert not named - known, f"{path.relative_to(ROOT)} names options no command has: {sorted(named - known)}"


def test_every_bench_command_in_the_results_uses_its_script_options():
    commands = [words for _, language, body in fenced_blocks(_text(MEASUREMENTS)) if language in SHELL_BLOCKS
                for words in shell_commands(body)]
    commands += [shlex.split(span) for span in inline_spans(_text(MEASUREMENTS))
                 if re.match(r"^(?:\.venv/bin/)?python3? bench/\w+\.py", span)]
    benches = [words for words in commands if len(words) > 1 and words[1].startswith("bench/")]
    assert len(benches) >= 5, "bench/RESULTS.md gives each figure with the command that gives it"
    for words in benches:
        script = ROOT / words[1]
        assert script.is_file(), f"bench/RESULTS.md runs {words[1]}, which does not exist"
        options = {w.split("=", 1)[0] for w in words[2:] if w.startswith("--")}
        assert options <= _script_options(script), f"{' '.join(words)}: {sorted(options - _script_options(script))}"


def test_every_repository_path_the_guides_name_exists():
    for path in [*GUIDES, MEASUREMENTS]:
        for named in sorted(set(REPO_PATH.findall(_text(path)))):
            named = named.rstrip(".")
            if named.startswith(MADE_BY_THE_GUIDE):
                continue
            if "*" in named:  # a pattern (`eval/judges/webjudge_*.txt`): something must match it
                assert list(ROOT.glob(named)), f"{path.relative_to(ROOT)} names {named}, which matches nothing"
                continue
            assert (ROOT / named).exists(), f"{path.relative_to(ROOT)} names {named}, which does not exist"


def _names_in_module(module: str) -> set[str] | None:
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
        return None
    names = set()
    for node in ast.parse(Path(spec.origin).read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def test_every_module_and_name_the_guides_give_exists():
    for path in [*GUIDES, MEASUREMENTS]:
        for span in inline_spans(_text(path)):
            dotted = re.match(r"^(weblica(?:\.\w+)+)(?:\(|$)", span)
            if not dotted:
                continue
            parts = dotted.group(1).split(".")
            # the longest importable module, then the rest as names defined in it (read, not imported)
            for cut in range(len(parts), 0, -1):
                try:
                    if importlib.util.find_spec(".".join(parts[:cut])) is not None:
                        break
                except ModuleNotFoundError:  # a name inside a module (weblica.dataset.export_dataset)
                    continue
            module, rest = ".".join(parts[:cut]), parts[cut:]
            assert cut > 1 or not rest, f"{path.relative_to(ROOT)}: no module {dotted.group(1)}"
            if rest:
                names = _names_in_module(module)
                assert names is not None and rest[0] in names, \
                    f"{path.relative_to(ROOT)}: {module} defines no {rest[0]} (`{span}`)"


def test_every_relative_link_leads_somewhere():
    for path in [*GUIDES, MEASUREMENTS]:
        for target in re.findall(r"\]\(([^)\s]+)\)", _text(path)):
            if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                continue
            assert (path.parent / target.split("#", 1)[0]).exists(), f"{path.relative_to(ROOT)} links {target}"


def test_the_path_check_sees_a_missing_path():
    assert REPO_PATH.findall("see `weblica/env/actionz.py` and weblica/env/actions.py. or bench/*.py") == \
        ["weblica/env/actionz.py", "weblica/env/actions.py.", "bench/*.py"]
    assert not (ROOT / "weblica/env/actionz.py").exists()


# ---- what the code defines is documented ---------------------------------------------------------------------

def test_every_action_and_alias_is_in_the_action_table():
    from weblica.env.actions import ACTIONS, ALIAS_TABLE

    table = _text(ROOT / "docs" / "environment.md")
    rows = {m.group(1) for m in re.finditer(r"^\| `(\w+)\(", table, re.M)}
    missing = sorted((set(ACTIONS) | set(ALIAS_TABLE)) - rows)
    assert not missing, f"docs/environment.md's action table lacks {missing}"
    for name, action in ACTIONS.items():
        row = next(line for line in table.splitlines() if line.startswith(f"| `{name}("))
        for param in action.params:
            assert param in row, f"docs/environment.md: the {name} row does not name its argument {param}"


def test_every_check_kind_is_in_the_task_reference():
    from weblica.scoring.registry import KINDS

    reference = _text(ROOT / "docs" / "tasks.md")
    for check_type, mode in KINDS:
        row = next((line for line in reference.splitlines() if line.startswith(f"| `{check_type}`")), None)
        assert row is not None and f"`{mode}`" in row, f"docs/tasks.md lacks {check_type} mode {mode}"


def test_every_task_field_is_in_the_task_reference():
    from weblica.env.task import TASK_FIELDS

    reference = _text(ROOT / "docs" / "tasks.md")
    for name in TASK_FIELDS:
        assert re.search(rf"^\| `{name}` \|", reference, re.M), f"docs/tasks.md lacks the task field {name}"


# ---- what CI runs -------------------------------------------------------------------------------------------

def test_the_readme_gives_the_two_commands_ci_depends_on():
    readme = _text(ROOT / "README.md")
    assert DEMO_COMMAND in readme
    assert f"bash .ci/setup && {TEST_COMMAND}" in readme
    ci_lines = [line.strip() for line in _text(ROOT / ".ci" / "run").splitlines()]
    assert TEST_COMMAND in ci_lines, ".ci/run must run exactly the README's test command"


# ---- the examples run ---------------------------------------------------------------------------------------

def _python_blocks() -> list[tuple[str, str]]:
    return [(f"{path.relative_to(ROOT)}:{line}", body) for path in GUIDES
            for line, language, body in fenced_blocks(_text(path)) if language == "python"]


@pytest.mark.parametrize("where,code", _python_blocks(), ids=lambda v: v if ":" in v and "\n" not in v else None)
def test_every_python_example_runs(where, code, tmp_path):
    """The README's and docs' Python examples, run as written from the repository root: real Chromium and
    the shipped site, served by the env itself."""
    import subprocess
    import sys

    script = tmp_path / "example.py"
    script.write_text(code)
    done = subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{where}:\n{done.stderr[-3000:]}"
    assert "Success: click on" in done.stdout, f"{where}: the example's click found nothing:\n{done.stdout}"


def test_every_check_example_loads_as_a_check():
    from weblica.env.task import Task

    examples = [line for _, language, body in fenced_blocks(_text(ROOT / "docs" / "tasks.md")) if language == "json"
                for line in body.splitlines() if line.strip()]
    assert len(examples) >= 3
    for line in examples:
        Task.from_dict({"id": "t", "start_url": "https://example.com/", "instruction": "x", "checks": [json.loads(line)]})
