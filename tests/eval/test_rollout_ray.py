"""Rollouts on a local Ray instance write the same run as a local pool (determinism across workers)."""
import pytest

from weblica.rollout import run_tasks
from weblica.policy.random_policy import RandomPolicy
from hand_tasks import hand_tasks
from tests_helpers import run

ray = pytest.importorskip("ray")


def test_ray_run_matches_local_run(site, tmp_path):
    from weblica.pipelines.rollouts_ray import run_tasks_ray

    tasks = hand_tasks(site.url)
    for t in tasks:
        t.max_steps = 4
    run(run_tasks(tasks, lambda: RandomPolicy(5), tmp_path / "local", parallel=2, seed=5))
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        trajs, summary = run_tasks_ray(tasks, "random", tmp_path / "ray", address="local", workers=2, seed=5)
    finally:
        ray.shutdown()
    assert summary.episodes == 4
    assert (tmp_path / "ray" / "episodes.jsonl").read_bytes() == (tmp_path / "local" / "episodes.jsonl").read_bytes()
    shas = {s.screenshot_sha256 for t in trajs for s in t.steps}
    assert all((tmp_path / "ray" / "screens" / f"{sha}.png").exists() for sha in shas)
