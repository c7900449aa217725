"""The linter and the type check that `.ci/run` runs (issue 42): ruff with pyproject.toml's rules passes, and
mypy over weblica/ finds no error its baseline (.ci/mypy-baseline.txt) lacks. The baseline only shrinks:
its comparison, tested here on mypy's own output format, fails on a new error and on a fixed one left in."""
import importlib.util
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("typecheck", ROOT / ".ci" / "typecheck.py")
typecheck = importlib.util.module_from_spec(spec)
spec.loader.exec_module(typecheck)

MYPY_OUTPUT = """\
weblica/env/popups.py:61: error: Incompatible types in assignment (expression has type "dict[str, Any] | None", variable has type "dict[str, Any]")  [assignment]
weblica/env/sticky_header.py:39: error: Item "None" of "dict[str, Any] | None" has no attribute "get"  [union-attr]
weblica/env/sticky_header.py:40: error: Item "None" of "dict[str, Any] | None" has no attribute "get"  [union-attr]
weblica/env/sticky_header.py:40: note: a note is no error
"""


def test_errors_are_keyed_without_line_numbers_and_counted():
    errors = typecheck.errors_of(MYPY_OUTPUT)
    assert errors == Counter({
        'weblica/env/popups.py: [assignment] Incompatible types in assignment (expression has type "dict[str, Any] | '
        'None", variable has type "dict[str, Any]")': 1,
        'weblica/env/sticky_header.py: [union-attr] Item "None" of "dict[str, Any] | None" has no attribute "get"': 2})
    moved = MYPY_OUTPUT.replace(":39:", ":139:").replace(":40:", ":141:").replace(":61:", ":7:")
    assert typecheck.errors_of(moved) == errors       # an edit above an error does not move it


def test_the_baseline_only_shrinks(tmp_path):
    baseline = typecheck.errors_of(MYPY_OUTPUT)
    path = tmp_path / "baseline.txt"
    typecheck.write_baseline(baseline, path)
    assert typecheck.read_baseline(path) == baseline
    # the same errors: nothing new, nothing gone
    assert typecheck.compare(baseline, typecheck.read_baseline(path)) == ([], [])
    # a third union-attr in the same file is new, though its text is a baseline one's
    more = typecheck.errors_of(MYPY_OUTPUT + MYPY_OUTPUT.splitlines()[2].replace(":40:", ":90:") + "\n")
    new, gone = typecheck.compare(more, baseline)
    assert len(new) == 1 and "union-attr" in new[0] and gone == []
    # one fixed: reported as gone (the run fails until the baseline is shrunk)
    fewer = typecheck.errors_of("\n".join(MYPY_OUTPUT.splitlines()[1:]))
    new, gone = typecheck.compare(fewer, baseline)
    assert new == [] and len(gone) == 1 and "popups.py" in gone[0]


def test_the_script_fails_on_a_new_error_and_asks_to_shrink_on_a_fixed_one(tmp_path, monkeypatch):
    fake = tmp_path / "fake_mypy.py"
    fake.write_text("import sys\nsys.stdout.write(open(sys.argv[1]).read())\nsys.exit(1)\n")
    out = tmp_path / "out.txt"
    monkeypatch.setattr(typecheck, "BASELINE", tmp_path / "baseline.txt")
    out.write_text(MYPY_OUTPUT)
    command = f"{sys.executable} {fake} {out}"
    assert typecheck.main(["--mypy", command, "--init"]) == 0
    assert typecheck.main(["--mypy", command]) == 0
    out.write_text(MYPY_OUTPUT + "weblica/cli.py:3: error: Name \"x\" is not defined  [name-defined]\n")
    assert typecheck.main(["--mypy", command]) == 1
    out.write_text("\n".join(MYPY_OUTPUT.splitlines()[1:]))
    assert typecheck.main(["--mypy", command]) == 1          # fixed, not yet shrunk
    assert typecheck.main(["--mypy", command, "--shrink"]) == 0
    assert sum(typecheck.read_baseline(tmp_path / "baseline.txt").values()) == 2
    assert typecheck.main(["--mypy", command]) == 0


def _tool(module: str) -> None:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed in this environment (the dev extra brings it)")


def test_ruff_passes():
    _tool("ruff")
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "weblica", "tests", "bench", "examples", ".ci"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-4000:]


@pytest.mark.timeout(900)
def test_the_type_check_holds_its_baseline():
    _tool("mypy")
    done = subprocess.run([sys.executable, str(ROOT / ".ci" / "typecheck.py")], cwd=ROOT, capture_output=True,
                          text=True, timeout=880)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_the_ci_script_runs_both():
    text = (ROOT / ".ci" / "run").read_text()
    ruff, mypy, tests = text.index("-m ruff check"), text.index(".ci/typecheck.py"), text.index("-m pytest")
    assert ruff < tests and mypy < tests
    assert shutil.which("bash")
