"""What a task file may hold, checked when tasks load (issue 42): a start URL that is not http(s) and a field
the format does not have are `file:line` errors, before any browser starts; free-form data goes under
`metadata`. A synth task finds its bundle from the tasks file's own location, so `weblica synth --out X`
then `weblica eval --tasks X/<site>/tasks.jsonl` works from any directory."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from weblica.env.task import TASK_FIELDS, Task, TaskError, anchored, load_tasks

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "sites" / "forms-travel-2a9523da"
GOOD = {"id": "t1", "start_url": "https://shop.example/", "instruction": "Find the price."}


def write(path: Path, *rows: dict) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize("url", ["shop.example/", "www.shop.example", "/index.html", "about:blank", "file:///etc/passwd",
                                 "javascript:alert(1)", "data:text/html,<h1>x</h1>", "ftp://shop.example/", "http://",
                                 "https:///path", "http://[::1", "http//shop.example/"])
def test_a_start_url_that_is_not_http_is_an_error_naming_file_and_line(tmp_path, url):
    path = write(tmp_path / "tasks.jsonl", GOOD, {**GOOD, "id": "t2", "start_url": url})
    with pytest.raises(TaskError, match=r"tasks\.jsonl:2: task t2: 'start_url' must be an http\(s\) URL"):
        load_tasks(path)


@pytest.mark.parametrize("url", ["http://127.0.0.1:5000/", "https://shop.example/a?b=c#d", "HTTPS://SHOP.EXAMPLE/",
                                 "http://[::1]:8080/", "http://forms-travel-2a9523da.synth.test/"])
def test_http_and_https_start_urls_load(tmp_path, url):
    assert load_tasks(write(tmp_path / "tasks.jsonl", {**GOOD, "start_url": url}))[0].start_url == url


@pytest.mark.parametrize("field", ["answer", "Checks", "start-url", "notes", "__proto__", "x" * 300])
def test_an_unknown_field_is_an_error_that_points_to_metadata(tmp_path, field):
    path = write(tmp_path / "tasks.jsonl", GOOD, GOOD | {"id": "t2"}, {**GOOD, "id": "t3", field: "value"})
    with pytest.raises(TaskError, match=r"tasks\.jsonl:3: task t3: unknown field\(s\) .*put free-form data under "
                                        r"'metadata'") as caught:
        load_tasks(path)
    assert repr(field[:40]) in str(caught.value) and len(str(caught.value)) < 400


def test_metadata_takes_free_form_data_and_round_trips(tmp_path):
    meta = {"benchmark": "mine", "notes": ["a", {"b": 1}], "answer_key": None}
    path = write(tmp_path / "tasks.jsonl", {**GOOD, "metadata": meta})
    task = load_tasks(path)[0]
    assert task.metadata == meta
    assert Task.from_dict(task.to_dict()).metadata == meta
    assert set(task.to_dict()) <= set(TASK_FIELDS)


def test_a_bad_file_fails_the_command_before_any_browser_starts(tmp_path):
    path = write(tmp_path / "tasks.jsonl", GOOD, {**GOOD, "id": "t2", "start_url": "shop.example"})
    result = subprocess.run([sys.executable, "-m", "weblica.cli", "run", "--tasks", str(path), "--out",
                             str(tmp_path / "run"), "--json"], capture_output=True, text=True, timeout=120,
                            env={**os.environ, "WEBLICA_CHROMIUM": "/nonexistent"})
    assert result.returncode == 1
    error = json.loads(result.stdout)["error"]
    assert "tasks.jsonl:2" in error and "http(s) URL" in error
    assert not (tmp_path / "run").exists()


# ---- bundles found from the tasks file ---------------------------------------------------------------

def renamed_copy(folder: Path, new_id: str) -> Path:
    """The shipped bundle copied under another site id (files and texts), so only its own folder holds it."""
    old_id = SHIPPED.name
    target = folder / new_id
    shutil.copytree(SHIPPED, target)
    for path in target.rglob("*"):
        if path.is_file() and path.suffix in (".html", ".json", ".jsonl", ".js", ".css"):
            text = path.read_text(encoding="utf-8")
            if old_id in text:
                path.write_text(text.replace(old_id, new_id), encoding="utf-8")
    return target


def test_a_tasks_file_inside_its_bundle_names_that_bundle(tmp_path):
    bundle = renamed_copy(tmp_path / "out", "forms-travel-0a0b0c0d")
    tasks = load_tasks(bundle / "tasks.jsonl")
    assert tasks and {t.source.bundle for t in tasks} == {str(bundle.resolve())}
    # beside its bundles (a split's tasks file): found too; a bundle elsewhere: left to the search path
    (tmp_path / "out" / "tasks.jsonl").write_text((bundle / "tasks.jsonl").read_text())
    assert {t.source.bundle for t in load_tasks(tmp_path / "out" / "tasks.jsonl")} == {str(bundle.resolve())}
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "tasks.jsonl").write_text((bundle / "tasks.jsonl").read_text())
    assert {t.source.bundle for t in load_tasks(tmp_path / "elsewhere" / "tasks.jsonl")} == {"forms-travel-0a0b0c0d"}


def test_only_synth_tasks_with_a_relative_bundle_are_anchored(tmp_path):
    bundle = renamed_copy(tmp_path, "forms-travel-0a0b0c0d")
    task = load_tasks(bundle / "tasks.jsonl")[0]
    data = task.to_dict()
    data["source"] = {"kind": "synth", "site": "forms-travel-0a0b0c0d", "bundle": "/somewhere/forms-travel-0a0b0c0d"}
    assert anchored(Task.from_dict(data), bundle).source.bundle == "/somewhere/forms-travel-0a0b0c0d"
    data["source"] = {"kind": "live", "site": "forms-travel-0a0b0c0d"}
    assert anchored(Task.from_dict(data), bundle).source.bundle is None
    data["source"] = {"kind": "synth", "site": "other-site-12345678"}   # a folder of another name is not it
    assert anchored(Task.from_dict(data), bundle).source.bundle is None


def test_eval_finds_a_bundle_written_outside_sites_from_any_directory(tmp_path):
    """`weblica synth --out X` then `weblica eval --tasks X/<site>/tasks.jsonl`, run from another directory
    with no WEBLICA_SITES: the oracle solves every task of the bundle found beside the file."""
    bundle = renamed_copy(tmp_path / "X", "forms-travel-0a0b0c0d")
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "WEBLICA_SITES"}
    result = subprocess.run([sys.executable, "-m", "weblica.cli", "eval", "--tasks",
                             str(Path("..") / "X" / bundle.name / "tasks.jsonl"), "--policy", "oracle",
                             "--out", "run", "--json"], cwd=work, capture_output=True, text=True, timeout=600,
                            env=env)
    assert result.returncode == 0, result.stdout + result.stderr[-2000:]
    summary = json.loads(result.stdout)
    tasks = len(load_tasks(bundle / "tasks.jsonl"))
    assert summary["episodes"] == tasks >= 2 and summary["success_rate"] == 1.0, summary
