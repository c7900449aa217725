"""An installed wheel carries everything `weblica synth` needs (issue 38, point 8): the catalogs, genres,
templates, prompts and site runtime are package data of weblica.synth, not files of a checkout. The wheel
is built from a copy of the tree, installed with --no-deps into a fresh venv that sees the project's
dependencies through a .pth file, and `weblica synth --skill forms` runs from a folder outside the tree,
validating its site in Chromium through the installed site server and runtime. (Before, `categories()`
failed there with "no genre files".)"""
from __future__ import annotations

import json
import os
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
from wheel_build import _run, _wheel

from weblica.synth.generate import MIN_TASKS
from weblica.site_runtime import runtime_paths

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.timeout(600)  # about 40 s on an idle machine: a wheel, a venv and a validated site


def test_an_installed_wheel_synthesizes_a_forms_site_outside_the_tree(tmp_path):
    wheel = _wheel(tmp_path)
    names = set(zipfile.ZipFile(wheel).namelist())
    data = [p.relative_to(REPO).as_posix() for p in (REPO / "weblica").rglob("*")
            if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts]
    assert len(data) > 150 and not [p for p in data if p not in names]  # every data file of the package
    for rel in ("weblica/synth/catalogs/skills.yaml", "weblica/synth/genres/news/genre.yaml",
                "weblica/synth/genres/news/templates/front.html.j2", "weblica/site_runtime/site.js",
                "weblica/synth/genres/travel/flows.js", "weblica/synth/prompts/llm_generator.md"):
        assert rel in names, rel

    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=tmp_path)
    python = venv / "bin" / "python"
    purelib = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=tmp_path).strip()
    # the project's dependencies, seen through the test venv's site-packages (its .pth files are not run,
    # so the editable install of the tree stays out of sight)
    Path(purelib, "_project_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    _run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "-q",
          str(wheel)], cwd=tmp_path)

    away = tmp_path / "elsewhere"
    away.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    where = _run([str(python), "-c", "import weblica.synth.spec as s; print(s.__file__); print(len(s.categories()))"],
                 cwd=away, env=env).split()
    assert where[0].startswith(purelib) and not where[0].startswith(str(REPO)), where
    assert int(where[1]) >= 23
    out = json.loads(_run([str(venv / "bin" / "weblica"), "synth", "--skill", "forms", "--seed", "3", "--out",
                           str(away / "sites"), "--json"], cwd=away, env=env))
    result = out["sites"][0]
    assert out["ok"] and result["ok"] and result["tasks_kept"] >= MIN_TASKS, result
    bundle = Path(result["path"])
    assert bundle.is_dir() and str(away) in str(bundle)
    public = {p.relative_to(bundle / "public").as_posix() for p in (bundle / "public").rglob("*") if p.is_file()}
    assert not public & set(runtime_paths())  # the installed site server served the runtime from the package
