"""The tested package set: the locks match pyproject.toml, this environment is the main lock's set, and
a dependency changed without a refresh is caught before anything installs."""
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def lock(*args, cwd=ROOT):
    return subprocess.run([sys.executable, str(cwd / ".ci" / "lock.py"), *args], cwd=cwd, capture_output=True,
                          text=True, timeout=60)


def test_locks_match_pyproject_and_this_environment():
    assert lock("check").returncode == 0, lock("check").stderr
    installed = lock("installed")
    assert installed.returncode == 0, installed.stderr


def test_changed_dependency_without_refresh_fails(tmp_path):
    for part in (".ci", "requirements"):
        shutil.copytree(ROOT / part, tmp_path / part)
    pyproject = (ROOT / "pyproject.toml").read_text()
    (tmp_path / "pyproject.toml").write_text(pyproject.replace('"pillow>=10.0",', '"pillow>=10.0",\n    "six",'))
    out = lock("check", cwd=tmp_path)
    assert out.returncode == 1 and "requirements/py311.txt was compiled from other dependencies" in out.stderr
    assert "lock.py refresh" in out.stderr
    # a lock whose torch pin moved off the CPU pin fails too, though its digest is right
    (tmp_path / "pyproject.toml").write_text(pyproject)
    locked = tmp_path / "requirements" / "py311.txt"
    locked.write_text(locked.read_text().replace("torch==2.13.0+cpu", "torch==2.14.1"))
    out = lock("check", cwd=tmp_path)
    assert out.returncode == 1 and "pins torch==2.14.1" in out.stderr


def test_setup_installs_through_the_lock():
    setup = (ROOT / ".ci" / "setup").read_text()
    assert "python3 .ci/lock.py check" in setup and "-r requirements/py311.txt" in setup
    assert ".venv/bin/python .ci/lock.py installed" in setup
