"""Training as a user would (issue 40, point 4): GRPO plays a held-out task set every K iterations and its
success lands in metrics.jsonl, TensorBoard and (optionally) wandb; turns cut at max_new_tokens are
counted; the sampler/trainer mismatch is logged every iteration. The rollouts are scripted
(tests/scripted_rollouts.py): each group's repeat 0 scrolls then answers "ok", repeat 1 answers "" -- so
which held-out episodes succeed is decided by construction (the held-out task that wants "blue" fails)."""
import json
import sys
import types

import pytest
import torch
from fixtures_models import tiny_checkpoint
from scripted_rollouts import install_grpo_scripts
from test_train_loops import any_answer_tasks, fixed_port_site  # noqa: F401  (fixtures)

from weblica.env.task import Task, save_tasks
from weblica.train.config import ConfigError, GRPOConfig, config_from_dict
from weblica.train.grpo import train_grpo


class StandInWandb(types.ModuleType):
    """The calls `weblica.train.metrics` makes of wandb, recorded (no wandb account or network here)."""

    def __init__(self):
        import importlib.machinery

        super().__init__("wandb")
        self.__spec__ = importlib.machinery.ModuleSpec("wandb", None)
        self.runs = []
        self.util = types.SimpleNamespace(generate_id=lambda: "run123")

    def init(self, **kwargs):
        run = types.SimpleNamespace(kwargs=kwargs, logged=[], finished=False)
        run.log = lambda data, step: run.logged.append((step, data))
        run.finish = lambda: setattr(run, "finished", True)
        self.runs.append(run)
        return run


@pytest.fixture
def heldout(fixed_port_site, tmp_path):  # noqa: F811
    site = fixed_port_site
    path = tmp_path / "val.jsonl"
    save_tasks([Task.from_dict({"id": "val-any", "start_url": site.url + "/second", "instruction": "Finish with any answer.",
                                "max_steps": 2, "checks": [{"type": "answer_match", "expected": ".", "mode": "regex"}]}),
                Task.from_dict({"id": "val-blue", "start_url": site.url + "/form", "instruction": "Which colour?",
                                "max_steps": 2, "checks": [{"type": "answer_match", "expected": "blue"}]})], path)
    return path


def test_grpo_evaluates_held_out_tasks_every_k_iterations(any_answer_tasks, heldout, tmp_path, monkeypatch):  # noqa: F811
    torch.set_num_threads(1)
    install_grpo_scripts(monkeypatch.setattr)
    import accelerate  # noqa: F401  (imported before the stand-in: it looks for wandb when first imported)

    wandb = StandInWandb()
    monkeypatch.setitem(sys.modules, "wandb", wandb)
    config = config_from_dict(GRPOConfig, dict(
        model=str(tiny_checkpoint()), tasks=str(any_answer_tasks), output_dir=str(tmp_path / "run"),
        iterations=3, groups_per_batch=1, group_size=2, max_new_tokens=48, temperature=1.5, parallel=2,
        mini_batches=1, ppo_epochs=1, learning_rate=1e-4, eval_tasks=str(heldout), eval_every=2,
        report_to=["tensorboard", "wandb"], wandb_project="weblica-test", seed=3))
    train_grpo(config)
    lines = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert [("eval" in m) for m in lines] == [False, True, True]  # after iteration 1 (every 2nd) and the last
    for m in lines:
        assert {"mismatch_mean", "mismatch_max", "mismatch_k3", "dual_clip_fraction", "truncated_turns"} <= m.keys()
        assert 0 <= m["mismatch_mean"] <= m["mismatch_max"]
    for m in lines[1:]:
        # repeat 0 of each held-out task plays its script: "ok" passes any-answer and fails "blue"
        assert m["eval"] == {"success": 0.5, "reward": 0.5, "episodes": 2, "removed": 0}
    played = sorted(p.name for p in (tmp_path / "run" / "eval").iterdir())
    assert played == ["iter-0001", "iter-0002"]
    episodes = [json.loads(line) for line in (tmp_path / "run" / "eval" / "iter-0001" / "episodes.jsonl")
                .read_text().splitlines()]
    assert sorted((e["task_id"], e["success"]) for e in episodes) == [("val-any", True), ("val-blue", False)]
    # TensorBoard got eval/success; wandb the same scalars, in one run that finished
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(tmp_path / "run" / "tensorboard"))
    events.Reload()
    assert [(e.step, e.value) for e in events.Scalars("eval/success")] == [(1, 0.5), (2, 0.5)]
    (run,) = wandb.runs
    assert run.kwargs["project"] == "weblica-test" and run.kwargs["name"] == "run" and run.finished
    assert run.kwargs["config"]["eval_every"] == 2
    assert [step for step, _ in run.logged] == [0, 1, 2] and run.logged[1][1]["eval/success"] == 0.5
    assert (tmp_path / "run" / "wandb-run-id").read_text().strip() == "run123"


def test_held_out_tasks_must_be_held_out_and_wandb_must_be_there(any_answer_tasks, tmp_path, monkeypatch):  # noqa: F811
    with pytest.raises(ValueError, match="must be held out"):
        train_grpo(GRPOConfig(model=str(tiny_checkpoint()), tasks=str(any_answer_tasks), eval_tasks=str(any_answer_tasks),
                              eval_every=1, output_dir=str(tmp_path / "x")))
    monkeypatch.setitem(sys.modules, "wandb", None)  # not installed
    monkeypatch.setattr("importlib.util.find_spec", lambda name, *a: None if name == "wandb" else object())
    with pytest.raises(ConfigError, match="pip install wandb"):
        config_from_dict(GRPOConfig, {"report_to": ["wandb"]})
