"""What the commands print for a person (issue 42): readable lines, never a Python dict, and JSON with --json;
a recipe whose site was never generated fails at once, naming the command that makes it; the viewer's port;
the small items (--instances help, "1 site")."""
import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from weblica.cli import get_cli, plural, readable_lines
from weblica.missing_site import missing_tasks_message, synth_command_for

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "weblica.cli", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd)


def test_readable_lines_show_nested_summaries_without_python_reprs():
    summary = {"iterations": 4, "final": "out/final", "last": {"reward": 0.5, "removed": {}, "terminations": {"done": 3}},
               "errors": [], "episodes": [{"run_id": 1, "seed": 2}, {"run_id": 2, "seed": 3}], "files": ["a", "b"]}
    text = "\n".join(readable_lines(summary))
    assert "{" not in text and "[" not in text and "'" not in text
    assert text.splitlines() == ["iterations: 4", "final: out/final", "last:", "  reward: 0.5", "  removed: none",
                                 "  terminations:", "    done: 3", "errors: none", "episodes:", "  - run_id: 1",
                                 "    seed: 2", "  - run_id: 2", "    seed: 3", "files: a, b"]


def test_plural():
    assert [plural(n, "site") for n in (0, 1, 2)] == ["0 sites", "1 site", "2 sites"]
    assert plural(1, "repeat", "repeats") == "1 repeat" and plural(3, "entry", "entries") == "3 entries"


def test_instances_help_shows_a_percent_sign():
    result = CliRunner().invoke(get_cli(), ["synth", "--help"], terminal_width=200)
    assert result.exit_code == 0
    assert "seed % K" in result.output and "%%" not in result.output


# ---- a recipe naming a site that was never generated ---------------------------------------------

def test_the_command_that_makes_a_site_is_found_from_its_id():
    assert synth_command_for("menus-fitness-ae7515bb") == \
        "weblica synth --skill menus --category fitness --style glass --n 1 --seed 0"
    assert synth_command_for("menus-fitness-00000000") is None      # no aesthetic and seed give that digest
    assert synth_command_for("not-a-site") is None
    message = missing_tasks_message("elsewhere/menus-fitness-ae7515bb/tasks.jsonl")
    assert message.endswith("--seed 0 --out elsewhere`")


def test_the_shipped_cpu_recipe_fails_at_once_naming_the_command_that_makes_its_site(tmp_path):
    """train/tiny-cpu.yaml reads a synth site that is not shipped: its first error names `weblica synth ...`,
    within seconds (it came after 68 s of model building before)."""
    site = ROOT / "sites" / "menus-fitness-ae7515bb"
    if site.exists():
        pytest.skip("the recipe's site was generated in this checkout")
    for kind in ("sft", "grpo"):
        output_dir = ROOT / "out" / "tiny-cpu" / kind
        existed = output_dir.exists()
        result = cli("train", kind, "--config", str(ROOT / "train" / "tiny-cpu.yaml"), "--json", cwd=ROOT)
        assert result.returncode == 1, result.stderr[-2000:]
        error = json.loads(result.stdout)["error"]
        assert "tasks: task file sites/menus-fitness-ae7515bb/tasks.jsonl not found" in error
        assert "`weblica synth --skill menus --category fitness --style glass --n 1 --seed 0`" in error
        assert output_dir.exists() == existed   # failed before any work: no model built, nothing written


def test_the_command_the_recipe_names_writes_the_site_it_needs():
    """The named command really makes that site: its spec hashes to the recipe's site id."""
    from weblica.synth.generate import site_seeds
    from weblica.synth.spec import sample_spec

    assert sample_spec(site_seeds(0, 1)[0], "menus", "fitness", "glass").site_id == "menus-fitness-ae7515bb"


# ---- the viewer's port ----------------------------------------------------------------------------

@pytest.fixture
def run_dir(tmp_path):
    from weblica.env.episode import Trajectory

    run = tmp_path / "run"
    run.mkdir()
    traj = Trajectory(task_id="t01", seed=0, episode_id="e", start_url="https://x.test/", start_screenshot_sha256="")
    (run / "episodes.jsonl").write_text(json.dumps(traj.to_dict()) + "\n")
    return run


def test_the_viewer_on_port_0_says_which_port_it_took(run_dir):
    import httpx

    proc = subprocess.Popen([sys.executable, "-m", "weblica.cli", "view", str(run_dir), "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("viewer at http://127.0.0.1:")
        url = line.split()[2]
        port = int(url.rstrip("/").rsplit(":", 1)[1])
        assert port != 0
        assert httpx.get(url + "api/runs", timeout=10).json()["runs"][0]["episodes"] == 1
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_a_busy_port_is_one_line_naming_port_0(run_dir):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = cli("view", str(run_dir), "--port", str(port))
        assert result.returncode == 1
        assert f"cannot listen on 127.0.0.1:{port}" in result.stderr and "--port 0" in result.stderr
        assert "Traceback" not in result.stderr and "werkzeug" not in result.stderr.lower()
        assert json.loads(cli("view", str(run_dir), "--port", str(port), "--json").stdout)["error"]


# ---- training summaries -----------------------------------------------------------------------------

def test_training_summaries_read_as_lines():
    from weblica.train.commands import human_summary

    sft = human_summary("sft", {"samples": 40, "steps": 200, "final": "out/sft/final", "last_loss": 0.123456,
                                "nothing_to_do": False}, "out/sft")
    assert sft == "SFT: 200 steps on 40 samples, last loss 0.1235\nmodel: out/sft/final"
    grpo = human_summary("grpo", {"iterations": 4, "final": "out/grpo/final", "nothing_to_do": False,
                                  "last": {"reward": 0.5, "success": 0.5, "episodes": 8, "loss": -0.01,
                                           "removed": {}, "terminations": {"done": 8}}}, "out/grpo")
    assert grpo.splitlines()[0] == "GRPO: 4 iterations; last: reward 0.5  success 0.5  episodes 8  loss -0.01"
    assert "{" not in grpo
    again = human_summary("sft", {"samples": 40, "steps": 200, "final": "out/sft/final", "last_loss": None,
                                  "nothing_to_do": True}, "out/sft")
    assert again.startswith("nothing to do: out/sft already holds this recipe's finished run (200 steps)")
    assert "--set epochs=N" in again
