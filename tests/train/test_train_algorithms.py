"""Advantage and loss math against hand-computed values."""
import math

import pytest
import torch

from weblica.train.algorithms import clipped_policy_loss, group_advantages, is_informative, masked_token_nll


def test_grpo_advantages_by_hand():
    # rewards 1, 0, 0, 1: mean 0.5, population std 0.5 -> +-1
    adv = group_advantages([1, 0, 0, 1], "grpo", eps=0.0)
    assert adv == [1.0, -1.0, -1.0, 1.0]
    adv = group_advantages([1, 0, 0, 0], "grpo", eps=0.0)
    std = math.sqrt((0.75 ** 2 + 3 * 0.25 ** 2) / 4)
    assert adv == pytest.approx([0.75 / std, -0.25 / std, -0.25 / std, -0.25 / std])


def test_dr_grpo_and_filtered_bc():
    assert group_advantages([1, 0, 0, 0], "dr_grpo") == [0.75, -0.25, -0.25, -0.25]
    assert group_advantages([-1, 0, 1], "filtered_bc") == [0.0, 0.0, 1.0]
    with pytest.raises(ValueError, match="unknown advantage estimator"):
        group_advantages([1], "ppo")


def test_informative_groups():
    assert not is_informative([1, 1, 1]) and not is_informative([0, 0]) and not is_informative([])
    assert is_informative([0, 1]) and is_informative([-1, 0])
    assert not is_informative([0, 0], "filtered_bc") and is_informative([0, 1], "filtered_bc")


def test_clipped_loss_by_hand():
    # two sequences, three tokens; the last token of the second is padding
    old = torch.log(torch.tensor([[0.5, 0.5, 0.5], [0.5, 0.5, 0.5]]))
    new = torch.log(torch.tensor([[0.5, 0.75, 0.25], [0.7, 0.5, 0.9]]))  # ratios 1, 1.5, 0.5 / 1.4, 1, (pad)
    adv = torch.tensor([[1.0], [-1.0]])
    mask = torch.tensor([[1, 1, 1], [1, 1, 0]])
    loss, stats = clipped_policy_loss(new, old, adv, mask)
    # seq 1 (A=+1): min(r, clip(r, .8, 1.28)) -> 1, 1.28, 0.5
    # seq 2 (A=-1): min(-r, -clip(r)) -> -1.4, -1 ; token-mean over 5 tokens
    expected = -(1 + 1.28 + 0.5 - 1.4 - 1.0) / 5
    assert stats.loss == pytest.approx(expected, abs=1e-6) and float(loss) == pytest.approx(expected, abs=1e-6)
    assert stats.tokens == 5
    assert stats.clip_fraction == pytest.approx(1 / 5)  # only the 1.5 ratio with A>0 is clipped
    # the clipped token carries no gradient, the others do
    new_param = new.clone().requires_grad_(True)
    loss, _ = clipped_policy_loss(new_param, old, adv, mask)
    loss.backward()
    grad = new_param.grad
    assert grad[0, 1] == 0 and grad[0, 0] != 0 and grad[1, 2] == 0 and grad[1, 0] != 0


def test_asymmetric_clip_bounds():
    old = torch.zeros(1, 2)
    new = torch.log(torch.tensor([[1.3, 0.7]]))
    _, stats_pos = clipped_policy_loss(new, old, torch.tensor([[1.0]]), torch.ones(1, 2))
    # A>0: 1.3 clipped to 1.28; 0.7 unclipped (min picks the ratio) -> -(1.28 + 0.7)/2
    assert stats_pos.loss == pytest.approx(-(1.28 + 0.7) / 2, abs=1e-6)
    _, stats_neg = clipped_policy_loss(new, old, torch.tensor([[-1.0]]), torch.ones(1, 2))
    # A<0: min(-1.3, -1.28) = -1.3 ; min(-0.7, -0.8) = -0.8
    assert stats_neg.loss == pytest.approx((1.3 + 0.8) / 2, abs=1e-6)


def test_kl_and_entropy_terms_are_off_by_default_and_work_when_on():
    new = torch.log(torch.tensor([[0.5, 0.25]]))
    old = new.clone()
    ref = torch.log(torch.tensor([[0.25, 0.25]]))
    adv, mask = torch.tensor([[0.0]]), torch.ones(1, 2)
    loss0, _ = clipped_policy_loss(new, old, adv, mask, ref_logprobs=ref)
    assert float(loss0) == 0.0
    loss1, stats = clipped_policy_loss(new, old, adv, mask, ref_logprobs=ref, kl_coef=1.0)
    # k3 per token: exp(d) - d - 1 with d = ref - new = log(0.5), then 0
    d = math.log(0.5)
    assert stats.kl == pytest.approx((math.exp(d) - d - 1) / 2, abs=1e-6) and float(loss1) == pytest.approx(stats.kl)


def test_masked_nll():
    lp = torch.log(torch.tensor([[0.5, 0.25, 0.1]]))
    assert float(masked_token_nll(lp, torch.tensor([[1, 1, 0]]))) == pytest.approx(-(math.log(0.5) + math.log(0.25)) / 2)
