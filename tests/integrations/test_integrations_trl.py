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
SCROLL = '<think>Look further down.</think>\n<tool_call>{"name": "scroll", "arguments": {"direction": "down"}}</tool_call>'
DONE = '<think>Answer.</think>\n<tool_call>{{"name": "done", "arguments": {{"answer": "{}"}}}}</tool_call>'
# Each group's first episode to start scrolls, then answers right (reward 1, two turns: an observation turn
# between them); its second answers wrong at once (reward 0). The group's rewards differ by construction,
# so the advantage is not zero and the step must move the weights, whatever the weights would sample.
SCRIPTS = ([SCROLL, DONE.format("yes")], [DONE.format("no")])


class ScriptedBackend:
    """The trainer's weights made to answer a fixed script: each response is forced token by token and
    carries its log-probs under those weights (what sampling that text logs), so the rows TRL trains on
    are real model rows whose outcome does not depend on what the tiny model happens to sample."""

    def __init__(self, inner, claim):
        self.inner, self.claim, self.script = inner, claim, None

    def __getattr__(self, name):
        return getattr(self.inner, name)

    async def generate(self, messages, seed):
        import asyncio

        from weblica.policy.backends.base import Generation

        turn = sum(m.role == "assistant" for m in messages)
        if self.script is None:
            self.script = self.claim(messages)
        text = self.script[turn]  # an episode that outlives its script fails the test loudly
        tokenizer = self.inner.tokenizer
        ids = tokenizer.encode(text, add_special_tokens=False) + [tokenizer.convert_tokens_to_ids("<|im_end|>")]
        prompt = self.inner.encode(messages)
        logprobs = await asyncio.to_thread(self.inner.sequence_logprobs, prompt, ids)
        return Generation(text, list(prompt.input_ids), ids, logprobs, "stop")


class ScriptedRollout(WeblicaRollout):
    """Hands each episode's policy the next script of its task's group (first come, first served)."""

    def make_policy(self, backend, horizon):
        return super().make_policy(ScriptedBackend(backend, self._claim), horizon)

    def _claim(self, messages):
        key = next(t for t in self.tasks if self.tasks[t].instruction in " ".join(m.text for m in messages))
        taken = self.claimed.setdefault(key, 0)
        self.claimed[key] = taken + 1
        return SCRIPTS[taken % len(SCRIPTS)]

    def __call__(self, prompts, trainer):
        self.claimed = {}
        return super().__call__(prompts, trainer)


def answer_yes(site, i, path, steps=3):
    return Task.from_dict({"id": f"yes-{i}", "start_url": site.url + path,
                           "instruction": f"Say yes (task {i}).", "max_steps": steps,
                           "checks": [{"type": "answer_match", "expected": "yes"}]})


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


def test_one_grpo_step_through_our_rollout(site, tmp_path):
    from transformers import AutoModelForImageTextToText

    torch.set_num_threads(1)
    path = tiny_checkpoint(0)  # untrained: the scripts decide every outcome, whatever the weights sample
    model = AutoModelForImageTextToText.from_pretrained(path, dtype=torch.float32)
    processor = load_processor(path)
    tasks = [answer_yes(site, 0, "/"), answer_yes(site, 1, "/second")]
    rollout = ScriptedRollout(tasks, max_new_tokens=48, parallel=2, seed=3, run_dir=tmp_path / "rollouts")
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
        assert f"Say yes (task {traj.task_id[-1]})." in tokenizer.decode(prompt)
        sampled = [i for i, m in zip(completion, mask) if m]
        assert sampled == [i for s in traj.steps for i in s.token_ids]
        for step in traj.steps:
            assert tokenizer.decode(step.token_ids).startswith(tokenizer.decode(step.token_ids[:1]))
            assert prompt + completion[:len(step.prompt_token_ids) - len(prompt)] == step.prompt_token_ids
        # observation turns the env added between responses are masked out; they hold the new screenshot
        assert len(traj.steps) == (2 if traj.reward else 1)
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
    # every group holds one rewarded and one unrewarded episode, so the update has a signal
    for task in tasks:
        assert sorted(t.reward for t in trajs if t.task_id == task.id) == [0.0, 1.0]
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
    rollout = WeblicaRollout([answer_yes(site, 0, "/"), answer_yes(site, 1, "/second")])
    with pytest.raises(ValueError, match="num_generations"):
        rollout._groups([[{"role": "user", "content": i}] for i in ["yes-0", "yes-1", "yes-0", "yes-1"]])
    with pytest.raises(ValueError, match="not given"):
        rollout._groups([[{"role": "user", "content": "nope"}]] * 2)
