"""weblica episodes under TRL's real GRPOTrainer (TRL 1.16, CPU, the tiny Qwen3-VL, a real site in
Chromium): one optimizer step through `WeblicaRollout`; the rows TRL trains on are our episodes."""
import math

import pytest
import torch

trl = pytest.importorskip("trl", reason="TRL is in the `train` extra (pip install -e '.[train]')")

from weblica.env.task import Task  # noqa: E402
from weblica.integrations.trl import (WeblicaGRPOTrainer, WeblicaRollout, episode_reward, load_processor,  # noqa: E402
                                      task_dataset, task_id_of)
from weblica.policy.backends.hf import model_inputs, response_logits  # noqa: E402
from fixtures_models import tiny_checkpoint  # noqa: E402
from sites import LocalServer, create_app  # noqa: E402

G = 2  # episodes per task (TRL's num_generations)
# The site's URL is in every prompt, so on an ephemeral port the sampled episodes (and whether any group's
# rewards differ, which the update needs) change from run to run; this file's one server sits on a port
# no other test uses, so the run is the same every time (seeded sampling, same prompts).
PINNED_PORT = 28417


@pytest.fixture(scope="module")
def pinned_site():
    try:
        server = LocalServer(create_app(), port=PINNED_PORT)
    except OSError as exc:
        pytest.fail(f"port {PINNED_PORT} is taken ({exc}); this test needs it free to be repeatable")
    with server:
        yield server


def any_answer(site, i, path, steps=2):
    return Task.from_dict({"id": f"any-{i}", "start_url": site.url + path, "instruction": "Finish with any answer.",
                           "max_steps": steps, "checks": [{"type": "answer_match", "expected": ".", "mode": "regex"}]})


def recompute(model, processor, row_prompt, row_completion, images, temperature):
    """Log-probs of the completion under `model`, pixels from the processor TRL uses."""
    pixels = processor.image_processor(images=images, return_tensors="pt") if images else None
    inputs = model_inputs(model, row_prompt + row_completion, pixels["pixel_values"] if pixels else None,
                          pixels["image_grid_thw"] if pixels else None, "cpu")
    was_training = model.training
    model.eval()
    with torch.no_grad():
        logits = response_logits(model, inputs, len(row_prompt), len(row_completion)).float()
    model.train(was_training)
    scores = torch.log_softmax(logits / temperature, dim=-1)
    return scores.gather(-1, torch.tensor(row_completion)[:, None])[:, 0].tolist()


def test_one_grpo_step_through_our_rollout(pinned_site, tmp_path):
    from transformers import AutoModelForImageTextToText

    torch.set_num_threads(1)
    path = tiny_checkpoint()  # warm-started: answers in the protocol
    model = AutoModelForImageTextToText.from_pretrained(path, dtype=torch.float32)
    processor = load_processor(path)
    tasks = [any_answer(pinned_site, 0, "/"), any_answer(pinned_site, 1, "/second")]
    rollout = WeblicaRollout(tasks, max_new_tokens=48, parallel=2, seed=3, run_dir=tmp_path / "rollouts")
    seen = {}

    def recording_rollout(prompts, trainer):
        seen["prompts"] = [task_id_of(p) for p in prompts]
        out = rollout(prompts, trainer)
        model_now = trainer.accelerator.unwrap_model(trainer.model)
        seen["recomputed"] = [recompute(model_now, processor, p, c, imgs, trainer.temperature)
                              for p, c, imgs in zip(out["prompt_ids"], out["completion_ids"], out["images"])]
        seen["out"] = out
        return out

    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    args = trl.GRPOConfig(output_dir=str(tmp_path / "trl"), max_steps=1, per_device_train_batch_size=G * len(tasks),
                          num_generations=G, gradient_accumulation_steps=1, learning_rate=1e-3, temperature=1.5,
                          beta=0.0, use_cpu=True, report_to=[], save_strategy="no", logging_steps=1, seed=3,
                          max_completion_length=4096, bf16=False, disable_dropout=True)
    trainer = WeblicaGRPOTrainer(model=model, processing_class=processor, args=args,
                                 train_dataset=task_dataset(tasks), reward_funcs=episode_reward,
                                 rollout_func=recording_rollout)
    trainer.train()
    assert trainer.state.global_step == 1

    # TRL handed us each task num_generations times in a row; one row came back per episode
    out, trajs = seen["out"], rollout.last
    assert sorted(seen["prompts"]) == sorted([t.id for t in tasks] * G)
    assert len(out["prompt_ids"]) == len(trajs) == G * len(tasks)
    tokenizer = processor.tokenizer
    for traj, prompt, completion, mask, logprobs, again, reward in zip(
            trajs, out["prompt_ids"], out["completion_ids"], out["env_mask"], out["logprobs"],
            seen["recomputed"], out["reward"]):
        assert not traj.removed and traj.steps
        # the row decodes to our prompt, and its model tokens are exactly the sampled turns
        assert prompt == traj.steps[0].prompt_token_ids
        assert "Finish with any answer." in tokenizer.decode(prompt)
        sampled = [i for i, m in zip(completion, mask) if m]
        assert sampled == [i for s in traj.steps for i in s.token_ids]
        for step in traj.steps:
            assert tokenizer.decode(step.token_ids).startswith(tokenizer.decode(step.token_ids[:1]))
            assert prompt + completion[:len(step.prompt_token_ids) - len(prompt)] == step.prompt_token_ids
        # observation turns the env added between responses are masked out; they hold the new screenshot
        if len(traj.steps) > 1:
            added = [i for i, m in zip(completion, mask) if not m]
            assert "Step 1." in tokenizer.decode(added) and added.count(processor.image_token_id if hasattr(
                processor, "image_token_id") else tokenizer.convert_tokens_to_ids("<|image_pad|>")) > 0
        # sampling log-probs: finite, and what the same weights give again (vision tokens banned when
        # sampling, so a small tolerance)
        model_lps = [lp for lp, m in zip(logprobs, mask) if m]
        again_lps = [lp for lp, m in zip(again, mask) if m]
        assert all(math.isfinite(x) for x in model_lps)
        diffs = [round(abs(a - b), 3) for a, b in zip(model_lps, again_lps)]
        assert max(diffs) < 0.05, (diffs, [len(s.token_ids) for s in traj.steps])
        # the reward is the env's check result (compute_reward), not anything TRL computed
        assert reward == traj.reward
        if traj.termination_reason == "done":
            assert traj.check_results and reward == float(traj.success)
    # the step really moved the weights
    changed = sum(not torch.equal(before[n], p.detach()) for n, p in model.named_parameters())
    assert changed > 0
    # TRL trained on the episodes' screenshots (not bare image-pad tokens), and logged our rewards
    batch = trainer._buffered_inputs[0]
    assert "pixel_values" in batch and batch["image_grid_thw"].shape[0] == sum(len(s.steps) for s in trajs)
    logged = trainer.state.log_history[0]["reward"]
    assert abs(logged - sum(out["reward"]) / len(out["reward"])) < 1e-6


def test_removed_episode_is_unscorable_and_masked():
    from pathlib import Path

    from weblica.env.episode import Trajectory
    from weblica.integrations.trl import episode_row

    traj = Trajectory.from_dict({"episode_id": "e", "task_id": "t", "seed": 0, "steps": [], "removed": True,
                                 "start_url": "http://x.test/", "start_screenshot_sha256": ""})
    row = episode_row(traj, Path("/nonexistent"), filler_id=7)
    assert row.completion_ids == [7] and row.env_mask == [0]
    assert episode_reward([], [], reward=[None, 1.0]) == [None, 1.0]


def test_prompts_out_of_group_order_are_refused(site):
    rollout = WeblicaRollout([any_answer(site, 0, "/"), any_answer(site, 1, "/second")])
    with pytest.raises(ValueError, match="num_generations"):
        rollout._groups([[{"role": "user", "content": i}] for i in ["any-0", "any-1", "any-0", "any-1"]])
    with pytest.raises(ValueError, match="not given"):
        rollout._groups([[{"role": "user", "content": "nope"}]] * 2)
