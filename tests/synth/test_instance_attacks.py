"""Attacks on instance resolution: every consumer of a task with instances (weblica/synth/instances.py)
must read the member that the episode's seed played, never the seed-0 gold or instruction. A family
whose three members hold other golds is played at many seeds (negative, huge, int64 ends): the reward,
the reward judge's input, judge distillation and agreement, the live judge's evidence, SFT prompts, the
SFT teacher's oracle, the viewer and the BrowserGym task resolve the same member; the env server refuses
seeds that are not integers."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from weblica.env.episode import StepRecord, Trajectory
from weblica.env.task import Task, episode_task, save_tasks

GOLDS = ["Alpha Lamp", "Beta Chair", "Gamma Desk"]
SEEDS = [0, 1, 2, 3, 4, 5, -1, -2, -3, 2 ** 31 - 1, 2 ** 32, 2 ** 32 + 1, 2 ** 63 - 1, -(2 ** 63), 10 ** 30]


def _member(k: int) -> dict:
    return {"start_url": f"http://shop.synth.test/?i={k}", "instruction": f"Which item is cheapest? (data {k})",
            "checks": [{"type": "answer_match", "expected": GOLDS[k]}],
            "oracle": [{"name": "click", "arguments": {"x": 100.37 + k, "y": 200.51}, "thought": f"Open {GOLDS[k]}."},
                       {"name": "done", "arguments": {"answer": GOLDS[k]}, "thought": f"It is {GOLDS[k]}."}],
            "metadata": {"intent": "cheapest"}}


def _family() -> Task:
    base = {"id": "shop-cheapest", "source": {"kind": "synth", "site": "shop"}, **_member(0),
            "metadata": {"intent": "cheapest", "instances": [{"instance": 0}, {"instance": 1, **_member(1)},
                                                               {"instance": 2, **_member(2)}]}}
    return Task.from_dict(base)


def _expected(seed: int) -> int:
    return seed % 3


def _traj(seed: int, answer: str) -> Trajectory:
    step = StepRecord(step=1, response="", actions=[{"name": "done", "arguments": {"answer": answer}}],
                      feedback=[], url="http://shop.synth.test/", screenshot_sha256="")
    return Trajectory(task_id="shop-cheapest", seed=seed, episode_id=f"ep-{seed}", start_url="",
                      start_screenshot_sha256="", steps=[step], termination_reason="done")


@pytest.mark.parametrize("seed", SEEDS)
def test_the_reward_scores_the_member_the_seed_played(seed):
    from weblica.scoring.reward import compute_reward

    task, k = _family(), _expected(seed)
    played = episode_task(task, seed)
    assert played.checks[0].expected == GOLDS[k] and played.metadata.get("instance", 0) == k
    assert episode_task(played, seed + 1).checks[0].expected == GOLDS[k]  # resolving again changes nothing
    for j, gold in enumerate(GOLDS):
        result = asyncio.run(compute_reward(_traj(seed, gold), task))
        assert result.reward == (1.0 if j == k else 0.0), (seed, gold, result.detail)
        # the same trajectory scored against the already-resolved task agrees
        assert asyncio.run(compute_reward(_traj(seed, gold), played)).reward == result.reward


def test_the_synth_backend_names_the_played_instance_and_a_32_bit_page_seed():
    from weblica.serve.backend import SynthBackend

    for seed in SEEDS:
        headers = SynthBackend._episode_headers(episode_task(_family(), seed), "ep", seed)
        assert headers.get("X-Weblica-Instance", "0") == str(_expected(seed))
        assert 0 <= int(headers["X-Weblica-Seed"]) < 2 ** 32


@pytest.mark.parametrize("value", ["1", 1.0, 1.5, True, None, [1], {"s": 1}, 2 ** 63, -(2 ** 63) - 1, "NaN"])
def test_the_env_server_refuses_a_seed_that_is_no_int64(value):
    from weblica.env.server_requests import RequestError, seed_of

    with pytest.raises(RequestError) as raised:
        seed_of({"seed": value})
    assert raised.value.status == 400 and "seed" in raised.value.message
    assert seed_of({}) == 0 and seed_of({"seed": -(2 ** 63)}) == -(2 ** 63)


def _run_dir(tmp_path: Path, seeds: list[int]) -> Path:
    run = tmp_path / "run"
    run.mkdir()
    save_tasks([_family()], run / "tasks.jsonl")  # what a rollout writes: the family, not the members
    with (run / "episodes.jsonl").open("w") as f:
        for seed in seeds:
            traj = _traj(seed, GOLDS[_expected(seed)])
            traj.success, traj.reward = True, 1.0
            f.write(json.dumps(traj.to_dict()) + "\n")
    return run


def test_judge_distillation_shows_the_judge_the_played_instruction(tmp_path):
    from weblica.judge.distill import collect_examples, judge_input

    run = _run_dir(tmp_path, [1, 2, -1])
    examples, tasks, trajs = collect_examples([run])
    assert len(examples) == 3
    for example in examples:
        seed = trajs[(example.run, example.episode_id)].seed
        text = json.dumps([m.content if hasattr(m, "content") else m for m in judge_input(example, tasks, trajs)],
                          default=str)
        assert f"(data {_expected(seed)})" in text, (seed, text[:300])
        assert all(f"(data {j})" not in text for j in range(3) if j != _expected(seed))


def test_judge_agreement_asks_the_judge_about_the_played_task(tmp_path, monkeypatch):
    from weblica.judge import agree
    from weblica.scoring.judge import JudgeVerdict

    run = _run_dir(tmp_path, [1, 2])
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps({"run": str(run), "episode_id": f"ep-{s}", "success": True}) + "\n"
                              for s in (1, 2)))
    asked = []

    def recording_judge(spec, max_new_tokens=256):
        async def judge(task, answer, steps, screenshots):
            asked.append(task.instruction)
            return JudgeVerdict("success", "Verdict: SUCCESS")
        return judge
    monkeypatch.setattr(agree, "make_trajectory_judge", recording_judge)
    agree.judge_agreement("recording", labels)
    assert asked == ["Which item is cheapest? (data 1)", "Which item is cheapest? (data 2)"]


def test_the_live_judges_evidence_names_the_played_instruction():
    from weblica.scoring.benchmark_judges import Evidence

    for seed in (1, 2, 5):
        evidence = Evidence.from_trajectory(_traj(seed, "x"), _family(), None)
        assert evidence.task.instruction == f"Which item is cheapest? (data {_expected(seed)})"


def test_sft_prompts_and_the_viewer_name_the_played_instruction(tmp_path):
    import io

    from PIL import Image

    from weblica.policy.context import ContextBuilder
    from weblica.policy.coords import CoordinateFrame
    from weblica.train.samples import turn_messages
    from weblica.viewer.app import played_instruction

    png = io.BytesIO()
    Image.new("RGB", (8, 8), "white").save(png, format="PNG")
    (tmp_path / "start.png").write_bytes(png.getvalue())
    builder = ContextBuilder(CoordinateFrame.for_convention("relative1000"))
    for seed in (1, 2, -1, 2 ** 63 - 1):
        want = f"(data {_expected(seed)})"
        traj = _traj(seed, "x")
        traj.start_screenshot_sha256 = "start"
        messages = turn_messages(_family(), traj, tmp_path, builder)
        shown = json.dumps([[getattr(m, "content", m) for m in turn] for turn in messages], default=str)
        assert want in shown and shown.count("(data ") == shown.count(want)
        assert want in played_instruction(_family().to_dict(), seed)


@pytest.mark.parametrize("thoughts", [True, False])
def test_the_sft_teacher_plays_every_members_oracle_snapped_and_as_configured(thoughts):
    """The SFT teacher's task: the oracle snapped to the student's grid and, with oracle_thoughts off, no
    recorded thoughts; for a family, in every member the rollout will resolve, not only in the seed-0 one."""
    from weblica.train.config import SFTConfig
    from weblica.train.sft import teacher_task

    class Frame:  # a student grid of whole pixels
        def from_viewport(self, x, y):
            return round(x), round(y)

        def to_viewport(self, x, y):
            return float(x), float(y)

    taught = teacher_task(_family(), SFTConfig(teacher="oracle", oracle_thoughts=thoughts), Frame())
    for seed in range(3):
        played = episode_task(taught, seed)
        click = played.oracle[0]
        assert (click.args["x"], click.args["y"]) == (float(100 + seed), 201.0), seed
        assert played.oracle[-1].args["answer"] == GOLDS[seed]
        if thoughts:
            assert played.oracle_thoughts == [f"Open {GOLDS[seed]}.", f"It is {GOLDS[seed]}."]
        else:
            assert played.oracle_thoughts is None, (seed, played.oracle_thoughts)


def test_the_browsergym_task_scores_the_member_of_its_seed():
    pytest.importorskip("browsergym.core")
    from weblica.integrations.browsergym import WeblicaBrowserTask

    for seed in (1, 2, 4):
        bg = WeblicaBrowserTask(seed, _family())
        assert bg.task.checks[0].expected == GOLDS[_expected(seed)]


BASE = {"id": "t", "start_url": "http://a.synth.test/", "instruction": "q", "source": {"kind": "synth", "site": "a"}}


@pytest.mark.parametrize("instances", ["abc", [1, 2], {"a": 1}, [{"instance": 0}, "x"],
                                       [{"instance": 0}, {"instance": "x"}], [{"instance": 0}, {"instance": -1}],
                                       [{"instance": 0}, {"instance": 1.5}], [{"instance": 0}, {"instance": True}],
                                       [{"instance": 0}, {"instance": 1, "metadata": "zz"}]])
def test_a_malformed_family_is_a_task_error_at_every_seed(instances):
    """A hand-edited or hostile family: a TaskError naming the task (the env server answers 400 'bad
    task'), never an AttributeError/KeyError (a 503 'env_error') or an episode on a 'No such instance' page."""
    from weblica.env.task import TaskError

    task = Task.from_dict({**BASE, "metadata": {"instances": instances}})
    for seed in (0, 1, 2, 3):
        with pytest.raises(TaskError) as raised:
            episode_task(task, seed)
        assert "task t" in str(raised.value) and "instances" in str(raised.value)


def test_a_member_with_bad_checks_is_a_task_error_naming_the_member():
    from weblica.env.task import TaskError

    task = Task.from_dict({**BASE, "metadata": {"instances": [{"instance": 0}, {"instance": 1, "checks": "bad"}]}})
    assert episode_task(task, 0).instruction == "q"
    with pytest.raises(TaskError, match=r"checks.*instances\[1\]"):
        episode_task(task, 1)


def test_a_member_cannot_change_the_task_s_id_or_source():
    """The env server confines the sent task's source to its roots before it resolves the member: a member
    that names another id, source kind, bundle or recording must not carry that into the episode."""
    hostile = {"instance": 1, "instruction": "member", "id": "other", "source": {"kind": "cache", "recording": "/etc"},
               "checks": [{"type": "answer_match", "expected": "x"}]}
    task = Task.from_dict({**BASE, "metadata": {"instances": [{"instance": 0}, hostile]}})
    played = episode_task(task, 1)
    assert played.instruction == "member" and played.metadata["instance"] == 1
    assert played.id == "t" and played.source == task.source
