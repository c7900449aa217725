"""`weblica synth`, `weblica validate`, `weblica serve` from the command line; one seed => same bytes."""
from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path

from click.testing import CliRunner

from weblica.cli import get_cli
from weblica.env.task import load_tasks, save_tasks
from weblica.synth.generate import keep_valid, write_unvalidated
from weblica.synth.spec import sample_spec

cli = get_cli()


def _digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_synth_writes_bundles_and_one_seed_gives_the_same_bytes(tmp_path):
    runner = CliRunner()
    args = ["synth", "--skill", "forms", "--n", "2", "--seed", "9", "--no-validate", "--json"]
    first = runner.invoke(cli, args + ["--out", str(tmp_path / "a")])
    assert first.exit_code == 0, first.output
    summary = json.loads(first.output)
    assert len(summary["sites"]) == 2 and all(s["site_id"].startswith("forms-") for s in summary["sites"])
    site = tmp_path / "a" / summary["sites"][0]["site_id"]
    for name in ("site.json", "data.json", "tasks.jsonl", "public/index.html", "public/assets/site.css"):
        assert (site / name).is_file(), name
    assert not (site / "public" / "assets" / "site.js").exists()  # the site server serves it from the package
    assert list((site / "public" / "img").glob("*.png"))
    assert len(load_tasks(site / "tasks.jsonl")) >= 10
    second = runner.invoke(cli, args + ["--out", str(tmp_path / "b")])
    assert _digest(tmp_path / "a") == _digest(tmp_path / "b")
    other = runner.invoke(cli, ["synth", "--skill", "forms", "--seed", "10", "--no-validate", "--json",
                                "--out", str(tmp_path / "c")])
    assert json.loads(other.output)["sites"][0]["site_id"] not in {s["site_id"] for s in summary["sites"]}


def test_validated_generation_is_byte_identical(tmp_path):
    """Oracles are measured in the browser; the same seed must still give the same tasks.jsonl."""
    digests = []
    for name in ("x", "y"):
        path = write_unvalidated(sample_spec(21, "table-reasoning", "pets", "brutalist"), tmp_path / name)
        save_tasks(load_tasks(path / "tasks.jsonl")[:3], path / "tasks.jsonl")
        asyncio.run(keep_valid([path]))
        digests.append(_digest(path))
    assert digests[0] == digests[1]
    assert load_tasks(next((tmp_path / "x").iterdir()) / "tasks.jsonl")[0].oracle


def test_cli_errors_name_the_fix(tmp_path):
    runner = CliRunner()
    bad = runner.invoke(cli, ["synth", "--skill", "juggling", "--no-validate", "--out", str(tmp_path)])
    assert bad.exit_code != 0 and "choose one of" in bad.output and "forms" in bad.output
    empty = runner.invoke(cli, ["validate", str(tmp_path)])
    assert empty.exit_code != 0 and "weblica synth" in empty.output
    serve = runner.invoke(cli, ["serve", str(tmp_path)])
    assert serve.exit_code != 0 and "weblica synth" in serve.output


def test_validate_command_reports_json(tmp_path):
    path = write_unvalidated(sample_spec(5, "crud", "books"), tmp_path)
    save_tasks(load_tasks(path / "tasks.jsonl")[:1], path / "tasks.jsonl")
    asyncio.run(keep_valid([path]))
    result = CliRunner().invoke(cli, ["validate", str(tmp_path), "--json"])
    summary = json.loads(result.stdout)
    assert set(summary) == {"sites", "tasks", "valid_tasks", "oracle_success", "tasks_negatives_rejected",
                            "negatives_tried", "negatives_rejected", "dropped", "seeds", "failures"}
    assert (summary["sites"], summary["tasks"], summary["valid_tasks"]) == (1, 1, 1) and result.exit_code == 0
    assert [entry["valid"] for entry in summary["seeds"]] == [True] and summary["seeds"][0]["seeds"][0] == 0
    # by kind: a crud task's baselines, altered states and its "do everything" run, all rejected
    tried, rejected = summary["negatives_tried"], summary["negatives_rejected"]
    assert {"noop", "random", "altered_state", "maximal"} <= set(tried), tried
    assert rejected == tried and summary["dropped"] == []


def test_bundle_bytes_do_not_depend_on_the_hash_seed(tmp_path):
    """Set order changes with PYTHONHASHSEED (a fresh process each time): one seed must still give one
    bundle. Money answers are where it showed: their regex lists the separator spellings of a number."""
    import os
    import subprocess
    import sys

    script = ("import sys; from pathlib import Path; from weblica.synth.generate import write_unvalidated; "
              "from weblica.synth.spec import sample_spec; "
              "write_unvalidated(sample_spec(1, 'filter-sort', 'electronics'), Path(sys.argv[1]))")
    digests = []
    for hash_seed in ("1", "2", "3"):
        out = tmp_path / hash_seed
        subprocess.run([sys.executable, "-c", script, str(out)], check=True,
                       env={**os.environ, "PYTHONHASHSEED": hash_seed})
        digests.append(_digest(out))
    import re
    # a price past a thousand: its answer regex spells the separators out (where set order showed)
    assert any(re.search(r"\d,\d{3}", line) for line in (next(out.iterdir()) / "tasks.jsonl").read_text().splitlines())
    assert digests[0] == digests[1] == digests[2]
