"""Micro-batched training passes: several samples of different lengths (with and without a screenshot)
left-padded into one forward pass give the log-probs, loss and gradients of one sample at a time."""
import asyncio

import pytest
import torch
from fixtures_models import make_obs, make_task, tiny_checkpoint

from weblica.policy.backends.base import SamplingOptions
from weblica.policy.backends.hf import HFBackend
from weblica.policy.context import ContextBuilder, Message, Part
from weblica.train.config import GRPOConfig, SFTConfig
from weblica.train.model_io import Trainable, load_trainable, make_optimizer
from weblica.train.policy_update import ppo_update
from weblica.train.samples import TurnSample, batch_logprobs, sequence_logprobs
from weblica.train.sft import sft_step


@pytest.fixture(scope="module")
def samples():
    """Five sampled turns: three first turns on differently coloured pages (different instructions, so
    different lengths), one text-only prompt, one second turn; responses of different lengths."""
    backend = HFBackend(tiny_checkpoint(), SamplingOptions(temperature=2.0, max_new_tokens=40), device="cpu")
    builder = ContextBuilder(backend.frame)
    conversations = [builder.build(make_task(text), [], make_obs(color=color)) for text, color in (
        ("Find the price.", (255, 0, 0)), ("Open the Cardio section under Classes.", (0, 90, 200)),
        ("Add two blue kettles to the cart and check out.", (240, 240, 240)))]
    conversations.append([Message("user", [Part("text", "Say done.")])])
    conversations.append(builder.build(make_task(), [], make_obs(step=1, color=(9, 9, 9), feedback=["Success."])))
    out = []
    for index, conversation in enumerate(conversations):
        # the first sampling seed whose sequence length no earlier sample has: the padding under test needs
        # every length to differ, and the system prompt's wording must not decide whether two collide
        prompt = backend.encode(conversation)
        taken = {len(s.prompt.input_ids) + len(s.response_ids) for s in out}
        for seed in range(index * 100, index * 100 + 20):
            generation = asyncio.run(backend.generate(conversation, seed=seed))
            if len(prompt.input_ids) + len(generation.token_ids) not in taken:
                break
        out.append(TurnSample(prompt, list(generation.token_ids), list(generation.logprobs),
                              advantage=(-1.0) ** index * (1 + index / 4)))
    assert len({len(s.prompt.input_ids) + len(s.response_ids) for s in out}) == len(out)
    assert len({len(s.response_ids) for s in out}) > 1
    return out


def _trainable() -> Trainable:
    return load_trainable(tiny_checkpoint(), GRPOConfig(device="cpu"))


def test_batched_logprobs_match_one_sample_at_a_time(samples):
    model = _trainable().model.eval()
    with torch.no_grad():
        scores = batch_logprobs(model, samples, "cpu", temperature=0.7, with_entropy=True)
        for row, sample in enumerate(samples):
            logprobs, entropy = sequence_logprobs(model, sample, "cpu", temperature=0.7, with_entropy=True)
            n = len(sample.response_ids)
            assert scores.mask[row].sum() == n and scores.mask[row, -n:].all()
            assert scores.logprobs[row, -n:].tolist() == pytest.approx(logprobs.tolist(), abs=2e-5)
            assert scores.entropy[row, -n:].tolist() == pytest.approx(entropy.tolist(), abs=2e-5)
            assert not scores.logprobs[row, :-n].any()  # padding contributes nothing


def _grads(model) -> torch.Tensor:
    return torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None])


def test_micro_batched_grpo_update_matches_per_sample(samples):
    results = []
    for micro in (1, 3):
        torch.manual_seed(0)
        trainable = _trainable()
        config = GRPOConfig(device="cpu", micro_batch_size=micro, ppo_epochs=1, mini_batches=1, kl_coef=0.1,
                            entropy_coef=0.01, learning_rate=0.0)  # lr 0: the step leaves weights alone
        reference = _trainable().model.eval()
        metrics = ppo_update(trainable.model, make_optimizer(trainable, config), samples, config, 0, "cpu",
                             reference=reference)
        results.append((metrics, _grads(trainable.model)))
    (one, grads_one), (three, grads_three) = results
    assert one.keys() == three.keys() == {"loss", "clip_fraction", "kl", "entropy", "grad_norm"}
    for key in one:
        assert three[key] == pytest.approx(one[key], rel=1e-4, abs=1e-6), key
    assert torch.allclose(grads_three, grads_one, rtol=1e-3, atol=1e-6)


def test_micro_batched_sft_step_matches_per_sample(samples):
    losses = []
    for micro in (1, 4):
        trainable = _trainable()
        config = SFTConfig(device="cpu", micro_batch_size=micro, learning_rate=0.0)
        losses.append(sft_step(trainable, make_optimizer(trainable, config), samples, config))
    assert losses[1]["loss"] == pytest.approx(losses[0]["loss"], rel=1e-5)
    assert losses[1]["grad_norm"] == pytest.approx(losses[0]["grad_norm"], rel=1e-3)


def test_missing_rollout_logprobs_are_an_error_not_zeros(samples):
    trainable = _trainable()
    config = GRPOConfig(device="cpu", micro_batch_size=2)
    broken = [TurnSample(samples[0].prompt, samples[0].response_ids, [], 1.0), samples[1]]
    with pytest.raises(ValueError, match="rollout log-probs"):
        ppo_update(trainable.model, make_optimizer(trainable, config), broken, config, 0, "cpu")
