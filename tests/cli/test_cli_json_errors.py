"""Every `--json` failure is one `{"error": ...}` object on stdout with a non-zero exit; without --json,
input errors are one line on stderr, never a traceback. Task files name the file and line."""
from __future__ import annotations

import json
import socket
import subprocess
import sys

import click
import pytest

from weblica import cli as cli_module
from weblica.cli import UserError, emit, get_cli, main
from weblica.env.task import Task, TaskError

WEBLICA = [sys.executable, "-m", "weblica.cli"]


def weblica(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run(WEBLICA + list(args), capture_output=True, text=True, timeout=120, cwd=cwd)


def one_json_error(proc: subprocess.CompletedProcess, *words: str) -> str:
    assert proc.returncode != 0, proc.stdout
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1, proc.stdout
    error = json.loads(lines[0])["error"]
    for word in words:
        assert word in error, error
    return error


BAD_TASK_LINES = [
    ('{"id": "x", "start_url": "http://127.0.0.1:9/", "instruction": "i", "max_steps": "many"}',
     "'max_steps' must be an integer from 1 to 1000"),
    ('{"id": "x", "start_url": "http://127.0.0.1:9/", "instruction": "i", "max_steps": true}', "'max_steps'"),
    ('{"id": "x", "start_url": "http://127.0.0.1:9/", "instruction": "i", "checks": {"type": "url_match"}}',
     "'checks' must be a list"),
    ('{"id": "x", "start_url": "http://127.0.0.1:9/", "instruction": "i", "checks": [3]}', "check 1 must be an object"),
    ('{"id": "x", "start_url": "http://127.0.0.1:9/", "instruction": "i", "checks": [{"expected": 1}]}',
     "check 1 needs 'type'"),
    ('{"id": "x", "start_url": "http://127.0.0.1:9/", "instruction": "' + "w" * 20_001 + '"}',
     "'instruction' is 20001 characters; the limit is 20000"),
    ('{"id": "x", "start_url": "http://127.0.0.1:9/", "instruction": "i", "oracle": "click"}', "'oracle' must be a list"),
    ('{"id": "x", "start_url": "http://127.0.0.1:9/", "instruction": "i", "source": 5}', "'source' must be"),
    ('{"id": "x", "start_url": "http://127.0.0.1:9/", "instruction": "i", "metadata": [1]}', "'metadata' must be an object"),
    ('{"id": "x", "start_url": "http://127.0.0.1:9/", "instruction": "i", "skill": 3}', "'skill' must be a string"),
    ('{"id": "x", "start_url": "u", "instruction": "i", "checks": [{"type": "answer_match", "tol": "x"}]}',
     "check 1 'tol' must be a finite number"),
    ('{"id": "x", "start_url": "u", "instruction": "i", "checks": [{"type": "answer_match", "tol": NaN}]}', "'tol'"),
    ('{"id": "x", "start_url": "u", "instruction": "i", "checks": [{"type": "url_match", "mode": ["regex"]}]}',
     "check 1 'mode' must be a string"),
    ('{"id": "x", "start_url": "http://127.0.0.1:9/"', "not valid JSON"),
    ("[" * 100_000, "nests too deeply"),
    ('{"id": "x", "start_url": "u", "instruction": "i", "max_steps": 1' + "0" * 5000 + "}", "not valid JSON"),
    ('["a task?"]', "a task must be a JSON object, got list"),
]


@pytest.mark.parametrize("line, words", BAD_TASK_LINES)
def test_task_from_dict_and_load_tasks_reject_with_the_line(tmp_path, line, words):
    path = tmp_path / "tasks.jsonl"
    path.write_text('{"id": "ok", "start_url": "http://127.0.0.1:9/", "instruction": "i"}\n\n' + line + "\n")
    from weblica.env.task import load_tasks

    with pytest.raises(TaskError) as info:
        load_tasks(path)
    message = str(info.value)
    assert message.startswith(f"{path}:3: ") and words in message and "\n" not in message


def test_whole_numbers_from_other_tools_are_accepted():
    """pandas and JavaScript write 15.0, numpy hands back its own integers: those are whole step counts."""
    import numpy as np

    base = {"id": "x", "start_url": "http://127.0.0.1:9/", "instruction": "i"}
    assert [Task.from_dict({**base, "max_steps": v}).max_steps for v in (15.0, np.int64(7), 3)] == [15, 7, 3]
    assert Task.from_dict(base).max_steps == 15


def test_binary_and_directory_task_files(tmp_path):
    from weblica.env.task import load_tasks

    (tmp_path / "bin.jsonl").write_bytes(b'{"id": "a"}\n\xff\xfe\x00\n')
    with pytest.raises(TaskError, match=r"bin.jsonl:2: not UTF-8 text"):
        load_tasks(tmp_path / "bin.jsonl")
    with pytest.raises(TaskError, match="is not a file"):
        load_tasks(tmp_path)


def test_run_and_eval_print_one_line_for_a_bad_task_file(tmp_path):
    path = tmp_path / "tasks.jsonl"
    path.write_text(BAD_TASK_LINES[0][0] + "\n")
    for command in (["run", "--tasks", str(path), "--out", str(tmp_path / "r")],
                    ["eval", "--tasks", str(path), "--out", str(tmp_path / "e")]):
        proc = weblica(*command)
        assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
        assert proc.stderr.strip() == f"Error: {path}:1: task x: 'max_steps' must be an integer from 1 to 1000, got str 'many'"
        one_json_error(weblica(*command, "--json"), f"{path}:1:", "'max_steps'")
    assert not (tmp_path / "r").exists()  # nothing written for a file that never loaded


def test_every_kind_of_failure_is_json_with_json(tmp_path):
    one_json_error(weblica("run", "--json"), "Missing option '--tasks'", "weblica.cli run --help")
    one_json_error(weblica("frobnicate", "--json"), "No such command 'frobnicate'")
    one_json_error(weblica("run", "--tasks", str(tmp_path / "none.jsonl"), "--out", "x", "--json"), "does not exist")
    one_json_error(weblica("run", "--tasks", str(tmp_path), "--out", "x", "--json"), "is a directory")
    (tmp_path / "empty.jsonl").write_text("\n")
    one_json_error(weblica("run", "--tasks", str(tmp_path / "empty.jsonl"), "--parallel", "0", "--out", "x", "--json"),
                   "--parallel")
    one_json_error(weblica("run", "--tasks", str(tmp_path / "empty.jsonl"), "--out", "x", "--json"), "holds no tasks")
    rec = tmp_path / "rec"
    rec.mkdir()
    (rec / "recording.sqlite").write_bytes(b"garbage, not sqlite" * 100)
    one_json_error(weblica("replay", str(rec), "--check", "--json"), "recording.sqlite")
    one_json_error(weblica("env-server", "--host", "0.0.0.0", "--port", "0", "--json"), "--token")
    one_json_error(weblica("env-server", "--token", "short", "--port", "0", "--json"), "at least 16")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        one_json_error(weblica("env-server", "--port", str(taken.getsockname()[1]), "--json"),
                       "cannot listen on 127.0.0.1", "pick another --port")
    # without --json: the same errors as one line on stderr, stdout empty
    proc = weblica("env-server", "--host", "10.1.2.3", "--port", "0")
    assert proc.returncode == 1 and proc.stdout == "" and proc.stderr.startswith("Error: refusing to serve on 10.1.2.3")


# ---- the wrapper itself, on commands made for the test ------------------------------------------------

@pytest.fixture
def test_commands(monkeypatch):
    group = get_cli()
    monkeypatch.setattr(cli_module, "_json_printed", False)

    @click.command("t-fail-after-json")
    @click.option("--json", "as_json", is_flag=True)
    def after_json(as_json):
        emit({"ok": False, "partial": 1}, as_json)
        raise UserError("half done")

    @click.command("t-bug")
    @click.option("--json", "as_json", is_flag=True)
    def bug(as_json):
        {}["missing"]

    @click.command("t-project-error")
    @click.option("--json", "as_json", is_flag=True)
    def project_error(as_json):
        raise TaskError("tasks.jsonl:4: bad")

    @click.command("t-disk")
    @click.option("--json", "as_json", is_flag=True)
    def disk(as_json):
        open("/nonexistent-dir/x", "w")

    @click.command("t-interrupt")
    @click.option("--json", "as_json", is_flag=True)
    def interrupt(as_json):
        raise KeyboardInterrupt

    for command in (after_json, bug, project_error, interrupt, disk):
        group.add_command(command)
    yield
    for name in ("t-fail-after-json", "t-bug", "t-project-error", "t-interrupt", "t-disk"):
        group.commands.pop(name)


def run_main(capsys, *args):
    with pytest.raises(SystemExit) as info:
        main(list(args))
    out, err = capsys.readouterr()
    return info.value.code, out, err


def test_a_command_that_printed_json_does_not_print_twice(test_commands, capsys):
    code, out, err = run_main(capsys, "t-fail-after-json", "--json")
    assert code == 1 and [json.loads(l) for l in out.splitlines()] == [{"ok": False, "partial": 1}]
    assert err.strip() == "Error: half done"


def test_unexpected_exceptions(test_commands, capsys):
    code, out, err = run_main(capsys, "t-bug", "--json")
    assert code == 1 and "internal error (KeyError: 'missing')" in json.loads(out)["error"]
    assert "Traceback" in err  # for the bug report, on stderr only
    with pytest.raises(KeyError):  # without --json a bug keeps its traceback
        main(["t-bug"])


def test_project_errors_and_interrupts(test_commands, capsys):
    code, out, err = run_main(capsys, "t-project-error", "--json")
    assert code == 1 and json.loads(out) == {"error": "tasks.jsonl:4: bad"} and err == ""
    code, out, err = run_main(capsys, "t-project-error")
    assert code == 1 and out == "" and err == "Error: tasks.jsonl:4: bad\n"
    code, out, err = run_main(capsys, "t-interrupt", "--json")
    assert code == 130 and json.loads(out) == {"error": "interrupted"}
    code, out, err = run_main(capsys, "t-disk")  # a filesystem refusal names the file, in one line
    assert code == 1 and err == "Error: No such file or directory: /nonexistent-dir/x\n"
    code, out, _ = run_main(capsys, "t-project-error", "--", "--json")  # after `--` it is an argument
    assert code == 2 and out == ""


def test_success_and_help_exit_zero(capsys):
    code, out, _ = run_main(capsys, "--help")
    assert code == 0 and "env-server" in out
