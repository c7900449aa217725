"""Loss safety and visibility (issue 40, point 2): dual clip and a bounded log-ratio, the sampler/trainer
mismatch logged every update, truncated importance sampling, overlong filtering and sequence-mean
aggregation, each checked on a constructed mismatch, by hand and through `ppo_update` on the tiny model."""
import math

import pytest
import torch
from fixtures_models import make_obs, make_task, tiny_checkpoint

from weblica.policy.backends.base import SamplingOptions
from weblica.policy.backends.hf import HFBackend
from weblica.policy.context import ContextBuilder
from weblica.train.algorithms import clipped_policy_loss, mismatch_terms, truncated_is_weights
from weblica.train.config import ConfigError, GRPOConfig, config_from_dict
from weblica.train.model_io import load_trainable, make_optimizer
from weblica.train.policy_update import ppo_update
from weblica.train.samples import TurnSample

# ---- the math, by hand -----------------------------------------------------------------------------


def test_dual_clip_bounds_a_negative_advantage_token_the_trainer_finds_far_likelier():
    # a sync bug: the trainer gives the sampled token e^10 times the sampler's probability, and A < 0
    old, new = torch.tensor([[-12.0, -1.0]]), torch.tensor([[-2.0, -1.0]]).requires_grad_(True)
    adv, mask = torch.tensor([[-2.0]]), torch.ones(1, 2)
    unbounded, _ = clipped_policy_loss(new, old, adv, mask, clip_ratio_c=0)
    assert float(unbounded.detach()) == pytest.approx((2 * math.exp(10) + 2) / 2, rel=1e-5)  # the old loss: ~22,000
    loss, stats = clipped_policy_loss(new, old, adv, mask)  # default clip_ratio_c 3.0
    assert float(loss) == pytest.approx((2 * 3.0 + 2 * 1.0) / 2, abs=1e-5)
    assert stats.dual_clip_fraction == pytest.approx(0.5)
    loss.backward()
    assert new.grad[0, 0] == 0 and new.grad[0, 1] != 0  # the bounded token pushes nothing; the other learns
    # A > 0 is untouched by the dual clip (the ordinary clip already bounds it)
    pos, stats = clipped_policy_loss(torch.tensor([[-2.0]]), torch.tensor([[-12.0]]), torch.tensor([[1.0]]),
                                     torch.ones(1, 1))
    assert float(pos) == pytest.approx(-1.28) and stats.dual_clip_fraction == 0


def test_log_ratio_clamp_keeps_the_loss_finite():
    # a rollout log-prob of -1000 (a token the sampler all but banned): exp(999) overflows to inf
    new = torch.tensor([[-1.0]]).requires_grad_(True)
    old, adv, mask = torch.tensor([[-1000.0]]), torch.tensor([[-1.0]]), torch.ones(1, 1)
    loss, _ = clipped_policy_loss(new, old, adv, mask, clip_ratio_c=0)
    assert float(loss) == pytest.approx(math.exp(20), rel=1e-5)  # clamped at 20, not inf
    loss.backward()
    assert torch.isfinite(new.grad).all()
    unclamped, _ = clipped_policy_loss(new, old, adv, mask, clip_ratio_c=0, log_ratio_clamp=1e4)
    assert math.isinf(float(unclamped))  # what the clamp prevents


def test_truncated_importance_weights_and_mismatch_terms_by_hand():
    trainer = torch.tensor([[-1.0, -2.0, -3.0, 0.0]])
    rollout = torch.tensor([[-1.5, -2.0, -0.5, 0.0]])  # d = 0.5, 0, -2.5, (masked)
    mask = torch.tensor([[1, 1, 1, 0]])
    weights = truncated_is_weights(trainer, rollout, cap=1.5)
    assert weights[0, :3].tolist() == pytest.approx([1.5, 1.0, math.exp(-2.5)], rel=1e-6)  # min(e^0.5, 1.5)=1.5
    total, worst, k3, n = mismatch_terms(trainer, rollout, mask)
    assert (total, worst, n) == (pytest.approx(3.0), pytest.approx(2.5), 3)
    assert k3 == pytest.approx(sum(math.exp(d) - 1 - d for d in (0.5, 0.0, -2.5)), rel=1e-6)


def test_sequence_mean_weighs_turns_not_tokens():
    # on-policy (ratio 1): the per-token loss is -A; a 3-token turn with A=1 and a 1-token turn with A=-1
    lp = torch.zeros(2, 3)
    adv, mask = torch.tensor([[1.0], [-1.0]]), torch.tensor([[1, 1, 1], [0, 0, 1]])
    token, _ = clipped_policy_loss(lp, lp, adv, mask)
    sequence, stats = clipped_policy_loss(lp, lp, adv, mask, aggregation="sequence_mean")
    assert float(token) == pytest.approx(-(3 - 1) / 4) and float(sequence) == pytest.approx(0.0)
    assert stats.rows == 2
    with pytest.raises(ValueError, match="unknown loss aggregation"):
        clipped_policy_loss(lp, lp, adv, mask, aggregation="batch_mean")


def test_config_refuses_unsafe_values_with_the_fix():
    for bad, says in (({"clip_ratio_c": 0.9}, "must be > 1"), ({"tis_cap": 0.5}, "tis_cap"),
                      ({"loss_aggregation": "sum"}, "loss_aggregation"), ({"log_ratio_clamp": 0}, "log_ratio_clamp"),
                      ({"gpu_memory_utilization": 1.5}, "gpu_memory_utilization"),
                      ({"rollout_backend": "vllm", "max_new_tokens": 20000}, "raise max_model_len"),
                      ({"eval_every": 2}, "eval_tasks"), ({"report_to": "wandb"}, "is a list"),
                      ({"report_to": ["mlflow"]}, "report_to knows")):
        with pytest.raises(ConfigError, match=says):
            config_from_dict(GRPOConfig, bad)
    assert config_from_dict(GRPOConfig, {"clip_ratio_c": 0, "tis_cap": 2.0}).tis_cap == 2.0


# ---- through ppo_update on the tiny model ------------------------------------------------------------


@pytest.fixture(scope="module")
def on_policy():
    """Three turns of the tiny model with their responses' true log-probs (forced text, as
    tests/scripted_rollouts.py does): the rollout and the trainer agree exactly."""
    from scripted_rollouts import ANSWER, SCROLL, response_ids

    backend = HFBackend(tiny_checkpoint(), SamplingOptions(temperature=1.0), device="cpu")
    builder = ContextBuilder(backend.frame)
    out = []
    for index, (text, color, response) in enumerate((("Find the price.", (255, 0, 0), SCROLL),
                                                     ("Open Cardio.", (0, 90, 200), ANSWER),
                                                     ("Add a kettle.", (240, 240, 240), SCROLL + " " + ANSWER))):
        prompt = backend.encode(builder.build(make_task(text), [], make_obs(color=color)))
        ids = response_ids(backend.tokenizer, response)
        out.append(TurnSample(prompt, ids, backend.sequence_logprobs(prompt, ids), advantage=1.0 - index))
    BANNED[:] = backend.banned_ids  # the sampler bans the vision tokens; the trainer masks them alike
    return out


BANNED: list[int] = []


def _update(samples, **options):
    """One mini-batch step at lr 0 (weights unchanged): the logged terms and the gradient (not clipped)."""
    torch.manual_seed(0)
    trainable = load_trainable(tiny_checkpoint(), GRPOConfig(device="cpu"))
    config = GRPOConfig(device="cpu", ppo_epochs=1, mini_batches=1, learning_rate=0.0, max_grad_norm=1e9,
                        **{"micro_batch_size": 2, **options})
    stats = ppo_update(trainable.model, make_optimizer(trainable, config), samples, config, 0, "cpu",
                       banned=BANNED)
    grads = torch.cat([p.grad.flatten() for p in trainable.model.parameters() if p.grad is not None]) \
        if any(p.grad is not None for p in trainable.model.parameters()) else torch.zeros(1)
    return stats, grads


def _shifted(samples, delta: float, tokens: int | None = None):
    """The same turns with rollout log-probs `delta` below the truth on their first `tokens` tokens."""
    out = []
    for s in samples:
        n = len(s.old_logprobs) if tokens is None else tokens
        old = [lp - delta if i < n else lp for i, lp in enumerate(s.old_logprobs)]
        out.append(TurnSample(s.prompt, s.response_ids, old, s.advantage))
    return out


def test_the_mismatch_is_logged_and_measures_what_was_constructed(on_policy):
    stats, _ = _update(on_policy)
    assert stats["mismatch_max"] < 1e-4 and stats["mismatch_k3"] < 1e-8  # the trainer recomputes the rollout
    shifted = _shifted(on_policy, 0.7, tokens=2)
    stats, _ = _update(shifted)
    tokens = sum(len(s.response_ids) for s in on_policy)
    assert stats["mismatch_max"] == pytest.approx(0.7, abs=1e-4)
    assert stats["mismatch_mean"] == pytest.approx(0.7 * 2 * 3 / tokens, abs=1e-4)
    assert stats["mismatch_k3"] == pytest.approx((math.exp(0.7) - 1 - 0.7) * 6 / tokens, abs=1e-4)


def test_tis_learns_from_a_mismatched_rollout_that_plain_ppo_clips_away(on_policy):
    good = [on_policy[0]]  # A = +1
    _, reference = _update(good)
    # the sampler found every token e^5 less likely than the trainer does: the PPO ratio e^5 is clipped
    # (A > 0), so without TIS the turn teaches nothing
    mismatched = _shifted(good, 5.0)
    stats, plain = _update(mismatched)
    assert float(plain.abs().max()) == 0.0 and stats["clip_fraction"] == pytest.approx(1.0)
    # with TIS the ratio is taken against the trainer's own log-probs (1 at the start) and every token is
    # weighted by min(e^5, 2) = 2: exactly twice the on-policy gradient
    stats, tis = _update(mismatched, tis_cap=2.0)
    assert stats["clip_fraction"] == 0.0
    assert torch.allclose(tis, 2 * reference, rtol=1e-4, atol=1e-7)


def test_overlong_turns_carry_no_loss(on_policy):
    # one sample a pass: the batches with and without the cut turn then differ only in the order of sums
    _, without = _update(on_policy[:2], micro_batch_size=1)
    cut = TurnSample(on_policy[2].prompt, on_policy[2].response_ids, on_policy[2].old_logprobs, advantage=-5.0,
                     truncated=True)
    _, masked = _update(on_policy[:2] + [cut], micro_batch_size=1)
    assert torch.allclose(masked, without, rtol=1e-4, atol=1e-9)  # as if the cut turn were not there
    _, kept = _update(on_policy[:2] + [cut], micro_batch_size=1, mask_truncated=False)
    assert (kept - without).norm() > 0.5 * without.norm()
    stats, alone = _update([cut])  # a mini-batch of cut turns only: nothing to learn, no step
    assert float(alone.abs().max()) == 0.0 and stats["loss"] == 0.0


def test_sequence_mean_through_the_update(on_policy):
    # on-policy at the start: the logged loss is -(A weighted by tokens) or -(mean A over turns)
    lengths = [len(s.response_ids) for s in on_policy]
    advantages = [s.advantage for s in on_policy]
    token, _ = _update(on_policy)
    sequence, _ = _update(on_policy, loss_aggregation="sequence_mean")
    assert token["loss"] == pytest.approx(-sum(a * n for a, n in zip(advantages, lengths)) / sum(lengths), abs=1e-4)
    assert sequence["loss"] == pytest.approx(-sum(advantages) / 3, abs=1e-4)
