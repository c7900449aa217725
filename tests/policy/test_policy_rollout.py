"""Model policies inside the real rollout engine and browser: the tiny checkpoint's tool calls reach
Chromium in viewport pixels, and the trainer's token ids and log-probs land in the trajectory."""
import asyncio
import hashlib

from fixtures_models import tiny_checkpoint

from weblica.env.task import Task
from weblica.policy.factory import make_policy_factory
from weblica.scoring.reward import compute_reward, load_screenshots


def test_tiny_model_plays_episodes_in_the_browser(site, tmp_path):
    from weblica.rollout import run_tasks

    tasks = [Task.from_dict({"id": f"say-ok-{i}", "start_url": site.url + "/", "instruction": "Say ok.",
                             "checks": [{"type": "answer_match", "expected": "ok"}], "max_steps": 3})
             for i in range(2)]
    # greedy: the path of the trained answer through the engine is under test, not whether a sample at
    # temperature 0.7 slips a character (it does now and then; which seed slips moves with the torch build)
    factory = make_policy_factory(f"hf:{tiny_checkpoint()};temperature=0;max_new_tokens=64", seed=0)
    trajs, summary = asyncio.run(run_tasks(tasks, factory, tmp_path / "run", parallel=2, seed=0))
    assert summary.removed == 0
    for traj in trajs:
        first = traj.steps[0]
        assert first.parse_errors == [], first.response
        click = first.actions[0]
        # the model wrote (500, 500) on Qwen3-VL's grid; the browser clicked the viewport centre
        assert click["name"] == "click" and (click["arguments"]["x"], click["arguments"]["y"]) == (640.0, 360.0)
        assert "(640, 360)" in first.feedback[0]
        assert first.token_ids and len(first.logprobs) == len(first.token_ids) and first.prompt_token_ids
        assert traj.termination_reason == "done" and traj.answer == "ok"
        # rewards from the run's own records: checks pass, nothing removed
        screens = load_screenshots(traj, tmp_path / "run" / "screens")
        assert screens and hashlib.sha256(screens[-1]).hexdigest() == traj.steps[-1].screenshot_sha256
        result = asyncio.run(compute_reward(traj, tasks[0] if traj.task_id.endswith("0") else tasks[1],
                                            screenshots=screens))
        assert (result.reward, result.source, result.removed) == (1.0, "checks", False)
