"""`import weblica` gives the public API (issue 42): the env, the pool, the task model, actions and policies,
each loaded on first use; the package ships `py.typed`; the docstring's example runs as written on a
shipped site in real Chromium."""
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import weblica

ROOT = Path(__file__).resolve().parents[2]


def test_every_public_name_is_the_deep_one():
    from weblica.env.browser_env import EnvConfig, WebEnv
    from weblica.env.pool import EnvPool
    from weblica.env.sync_env import SyncWebEnv
    from weblica.env.task import Task, load_tasks

    assert {"WebEnv", "SyncWebEnv", "EnvPool", "load_tasks", "Task"} <= set(weblica.__all__)
    assert sorted(weblica.__all__) == sorted(weblica._EXPORTS)   # the list a reader sees is the lazy table
    assert (weblica.WebEnv, weblica.SyncWebEnv, weblica.EnvPool, weblica.load_tasks, weblica.Task, weblica.EnvConfig) \
        == (WebEnv, SyncWebEnv, EnvPool, load_tasks, Task, EnvConfig)
    for name in weblica.__all__:
        assert getattr(weblica, name) is not None and name in dir(weblica)
    with pytest.raises(AttributeError, match="has no attribute 'Env'"):
        weblica.Env  # noqa: B018
    from weblica import make_action  # `from weblica import X` works too
    assert make_action({"name": "stop", "arguments": {"response": "3"}}).args == {"answer": "3"}


def test_importing_the_package_loads_no_browser_or_model_stack():
    code = ("import sys, weblica; heavy = [m for m in ('playwright', 'torch', 'transformers', 'weblica.env.browser_env')"
            " if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]"


def test_the_docstring_example_runs_on_a_shipped_site():
    tasks = weblica.load_tasks(ROOT / "sites" / "forms-travel-2a9523da" / "tasks.jsonl")
    with weblica.SyncWebEnv() as env:
        obs = env.reset(tasks[0], seed=0)
        assert obs.url.startswith("http://forms-travel-2a9523da.synth.test/") and obs.screenshot
        obs, reward, terminated, truncated, info = env.step([{"name": "click", "arguments": {"x": 230, "y": 30}}])
        assert "Success: click" in obs.feedback[0] and not terminated and not truncated


def test_the_wheel_ships_py_typed(tmp_path):
    from wheel_build import _wheel

    names = set(zipfile.ZipFile(_wheel(tmp_path)).namelist())
    assert "weblica/py.typed" in names and "weblica/__init__.py" in names


def test_a_type_checker_reads_the_public_names(tmp_path):
    """mypy (where installed) resolves `from weblica import WebEnv` to the real class, not Any."""
    mypy = pytest.importorskip("mypy.api")
    script = tmp_path / "use.py"
    script.write_text("from weblica import WebEnv, load_tasks\nreveal_type(WebEnv)\nreveal_type(load_tasks)\n")
    out, _, _ = mypy.run([str(script), "--ignore-missing-imports", "--follow-imports=silent"])
    assert "weblica.env.browser_env.WebEnv" in out, out
    assert "pathlib.Path" in out and "weblica.env.task.Task" in out, out   # load_tasks(path) -> list[Task]
