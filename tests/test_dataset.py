"""A run directory exports as a Hugging Face dataset with one row per turn and real images."""
import json

import datasets

from weblica.dataset import export_dataset
from weblica.env.task import save_tasks
from weblica.policy.oracle import OraclePolicy
from weblica.rollout import run_tasks
from test_run import hand_tasks
from tests_helpers import run


def test_export_run_as_dataset(site, tmp_path):
    tasks = hand_tasks(site.url)[:2]
    run(run_tasks(tasks, OraclePolicy, tmp_path / "run", parallel=2))
    ds = export_dataset(tmp_path / "run", tmp_path / "ds")
    steps = sum(len(json.loads(l)["steps"]) for l in (tmp_path / "run" / "episodes.jsonl").read_text().splitlines())
    assert len(ds) == steps == 2 + 4
    row = ds[0]
    assert row["task_id"] == "open-search" and row["screenshot"].size == (1280, 720)
    assert json.loads(row["actions"])[0]["name"] == "click"
    reloaded = datasets.load_from_disk(str(tmp_path / "ds"))
    assert reloaded[1]["termination_reason"] == "done" and reloaded[1]["success"]
