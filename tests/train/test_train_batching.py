"""Micro-batched training passes: several samples of different lengths (with and without a screenshot)
left-padded into one forward pass give the log-probs, loss and gradients of one sample at a time."""
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
    """Five turns of the tiny model: three first turns on differently coloured pages (different
    instructions, so different lengths), one text-only prompt, one second turn; responses of different
    lengths, some closed by the stop token and some cut at a length limit, as sampling at temperature 2
    gives them. The responses are forced (tests/scripted_rollouts.py) and carry the log-probs the weights
    give them at temperature 2: the padding under test needs every sequence length to differ, which
    sampled lengths leave to luck (all five sampled responses can run to the limit)."""
    from scripted_rollouts import ANSWER, SCROLL
    from weblica.policy.tiny import WARM_START_RESPONSE

    backend = HFBackend(tiny_checkpoint(), SamplingOptions(temperature=2.0, max_new_tokens=40), device="cpu")
    builder = ContextBuilder(backend.frame)
    conversations = [builder.build(make_task(text), [], make_obs(color=color)) for text, color in (
        ("Find the price.", (255, 0, 0)), ("Open the Cardio section under Classes.", (0, 90, 200)),
        ("Add two blue kettles to the cart and check out.", (240, 240, 240)))]
    conversations.append([Message("user", [Part("text", "Say done.")])])
    conversations.append(builder.build(make_task(), [], make_obs(step=1, color=(9, 9, 9), feedback=["Success."])))
    tokenizer = backend.tokenizer
    stop = tokenizer.convert_tokens_to_ids("<|im_end|>")
    text = tokenizer.encode("\n".join([WARM_START_RESPONSE, SCROLL, ANSWER] * 4), add_special_tokens=False)
    out = []
    for index, conversation in enumerate(conversations):
        prompt = backend.encode(conversation)
        # the first response length from the list that gives a sequence length no earlier sample has
        taken = {len(s.prompt.input_ids) + len(s.response_ids) for s in out}
        n = next(n for n in (29, 40, 17, 11, 35, 23, 8, 31, 14, 5) if len(prompt.input_ids) + n not in taken
                 and n not in {len(s.response_ids) for s in out})
        ids = text[7 * index:7 * index + n]
        if index % 2 == 0:  # stopped: the stop token closes it; else cut at the length limit
            ids = ids[:-1] + [stop]
        logprobs = backend.sequence_logprobs(prompt, ids)
        out.append(TurnSample(prompt, ids, logprobs, advantage=(-1.0) ** index * (1 + index / 4)))
    assert len({len(s.prompt.input_ids) + len(s.response_ids) for s in out}) == len(out)
    assert len({len(s.response_ids) for s in out}) == len(out)
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
    assert one.keys() == three.keys() == {"loss", "clip_fraction", "dual_clip_fraction", "kl", "entropy", "grad_norm",
                                          "mismatch_mean", "mismatch_max", "mismatch_k3"}
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
