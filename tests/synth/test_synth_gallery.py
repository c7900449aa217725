"""`weblica synth gallery` screenshots real pages; synth and validate show a progress bar on stderr."""
from __future__ import annotations

import hashlib
import json
import re

from click.testing import CliRunner

from weblica.cli import get_cli
from weblica.synth.generate import write_unvalidated
from weblica.synth.spec import sample_spec


def _bundles(tmp_path):
    out = tmp_path / "sites"
    a = write_unvalidated(sample_spec(3, "search", "fashion", "brutalist"), out)
    b = write_unvalidated(sample_spec(4, "filter-sort", "books", "glass"), out)
    return out, [a.name, b.name]


def test_gallery_screenshots_start_and_inner_pages_of_each_site(tmp_path):
    out, ids = _bundles(tmp_path)
    result = CliRunner().invoke(get_cli(), ["synth", "gallery", str(out), "--out", str(tmp_path / "g" / "sheet.html"),
                                      "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    html = (tmp_path / "g" / "sheet.html").read_text()
    digests = set()
    for site_id in ids:
        assert site_id in html
        for label in ("start", "inner"):
            name = f"{site_id}-{label}.png"
            assert f'src="{name}"' in html and f'href="{name}"' in html
            png = (tmp_path / "g" / name).read_bytes()
            assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
            digests.add(hashlib.sha256(png).hexdigest())
    assert len(digests) == 4  # four different pages
    entries = {e["site_id"]: e for e in summary["sites"]}
    assert entries[ids[0]]["skill"] == "search" and entries[ids[1]]["category"] == "books"
    assert all(e["urls"]["inner"] != e["urls"]["start"] and not e["errors"] for e in entries.values())
    for site_id, entry in entries.items():  # each card says what the site is built on, speaks and exercises
        site = json.loads((out / site_id / "site.json").read_text())
        design = site.get("design")
        assert entry["design"] == (f"{design['title']} {design['version']}" if design else "weblica (its own styles)")
        assert entry["language"] == "en" and entry["skills"] and f"design <b>{entry['design']}</b>" in html


def test_gallery_of_an_empty_folder_is_a_one_line_error(tmp_path):
    result = CliRunner().invoke(get_cli(), ["synth", "gallery", str(tmp_path)])
    assert result.exit_code != 0 and "no site bundle" in result.output


def test_validate_and_synth_show_a_progress_bar_with_counts_on_stderr(tmp_path):
    runner = CliRunner(mix_stderr=False) if "mix_stderr" in CliRunner.__init__.__code__.co_varnames else CliRunner()
    out = tmp_path / "s"
    made = runner.invoke(get_cli(), ["synth", "--skill", "forms", "--n", "2", "--no-validate", "--out", str(out)])
    assert made.exit_code == 0, made.output
    assert re.search(r"writing sites.*2/2", made.stderr)
    # the bar's counts are read back from the files below, whatever their size: two tasks a site keep
    # the two sites and their counts while validation runs a seventh of the drafted tasks
    for bundle in out.iterdir():
        if (bundle / "tasks.jsonl").exists():
            lines = (bundle / "tasks.jsonl").read_text().splitlines()
            (bundle / "tasks.jsonl").write_text("\n".join(lines[:2]) + "\n")
    checked = runner.invoke(get_cli(), ["validate", str(out)])
    tasks = sum(len((p / "tasks.jsonl").read_text().splitlines()) for p in out.iterdir() if (p / "tasks.jsonl").exists())
    assert re.search(rf"validating tasks \(2/2 sites done\).*{tasks}/{tasks}", checked.stderr), checked.stderr[-500:]
    assert "ETA" in checked.stderr
    quiet = runner.invoke(get_cli(), ["validate", str(out), "--json"])
    assert "validating tasks" not in quiet.stderr and json.loads(quiet.stdout)["sites"] == 2
