"""bf16 training with fp32 master weights: at lr 1e-6 the masters move as an fp32 run's weights do,
while plain AdamW on bf16 weights rounds most updates away; checkpoints restore the masters exactly."""
import asyncio

import pytest
import torch
from fixtures_models import make_obs, make_task, tiny_checkpoint

from weblica.policy.backends.base import SamplingOptions
from weblica.policy.backends.hf import HFBackend
from weblica.policy.context import ContextBuilder
from weblica.train.config import ConfigError, GRPOConfig, SFTConfig, config_from_dict
from weblica.train.model_io import load_trainable, load_training_state, make_optimizer, save_checkpoint
from weblica.train.policy_update import ppo_update
from weblica.train.precision import MasterWeightAdamW, StochasticRoundingAdamW, stochastic_round
from weblica.train.samples import TurnSample
from weblica.train.sft import sft_step

LR, STEPS, SIZE = 1e-6, 10, 256


def _run(dtype: torch.dtype, masters: bool, stochastic: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """(start, end) fp32 weights of a SIZE x SIZE least-squares layer after STEPS AdamW steps at LR."""
    g = torch.Generator().manual_seed(0)
    start = (torch.randn(SIZE, SIZE, generator=g) * 0.02).to(torch.bfloat16).float()  # exact in bf16
    x, y = torch.randn(64, SIZE, generator=g), torch.randn(64, SIZE, generator=g)
    weight = torch.nn.Parameter(start.to(dtype).clone())
    if stochastic:
        optimizer = StochasticRoundingAdamW([weight], lr=LR)
    elif masters:
        optimizer = MasterWeightAdamW([weight], lr=LR)
    else:
        optimizer = torch.optim.AdamW([weight], lr=LR, weight_decay=0.0)
    for _ in range(STEPS):
        optimizer.zero_grad(set_to_none=True)
        ((x.to(dtype) @ weight - y.to(dtype)) ** 2).float().mean().backward()
        optimizer.step()
    if masters:
        (master,) = optimizer.masters
        assert torch.equal(weight.detach(), master.detach().to(dtype))  # the model holds the masters' cast
        return start, master.detach().clone()
    return start, weight.detach().float()


def _relative_error(delta: torch.Tensor, reference: torch.Tensor) -> float:
    return float((delta - reference).norm() / reference.norm())


def test_bf16_masters_move_like_fp32_and_plain_bf16_does_not():
    start, fp32_end = _run(torch.float32, masters=False)
    reference = fp32_end - start
    _, master_end = _run(torch.bfloat16, masters=True)
    _, plain_end = _run(torch.bfloat16, masters=False)
    # measured: masters 0.06 (the bf16 forward's gradients flip the sign of a few tiny ones), plain 0.99
    tolerance = 0.1
    assert _relative_error(master_end - start, reference) < tolerance
    assert float((master_end - start).abs().mean() / reference.abs().mean()) == pytest.approx(1.0, abs=0.02)
    # the old path: 1.9% of the weights move (by whole bf16 ulps), mean |delta| 36x below fp32's
    plain = plain_end - start
    assert _relative_error(plain, reference) > tolerance
    assert float((plain != 0).float().mean()) < 0.05 and float((master_end != start).float().mean()) > 0.99
    assert float(plain.abs().mean() / reference.abs().mean()) < 0.1


def _agreement(delta: torch.Tensor, reference: torch.Tensor) -> float:
    """How much of the fp32 run's movement `delta` reproduces, on average over the weights (1: all)."""
    return float((delta * reference.sign()).sum() / reference.abs().sum())


def test_stochastic_rounding_moves_bf16_weights_like_fp32_on_average():
    start, fp32_end = _run(torch.float32, masters=False)
    reference = fp32_end - start
    _, rounded_end = _run(torch.bfloat16, masters=False, stochastic=True)
    _, plain_end = _run(torch.bfloat16, masters=False)
    # measured: 0.99 with stochastic rounding (22% of the weights moved, by whole ulps), 0.03 plain
    assert _agreement(rounded_end - start, reference) == pytest.approx(1.0, abs=0.1)
    assert _agreement(plain_end - start, reference) < 0.2
    # unbiased rounding: the mean of many roundings of a value between two bf16 numbers is the value
    value = torch.full((200_000,), 1.0 + 2 ** -10)  # a quarter of the way from 1 to the next bf16 (1 + 2^-7)
    mean = float(stochastic_round(value, torch.bfloat16, torch.Generator().manual_seed(1)).float().mean())
    assert mean == pytest.approx(1.0 + 2 ** -10, abs=2e-5)


def test_stochastic_rounding_adamw_is_torch_adamw_in_fp32_and_resumes_exactly():
    g = torch.Generator().manual_seed(3)
    init = torch.randn(32, 16, generator=g)
    grads = [torch.randn(32, 16, generator=g) for _ in range(4)]
    ours, theirs = torch.nn.Parameter(init.clone()), torch.nn.Parameter(init.clone())
    mine = StochasticRoundingAdamW([ours], lr=1e-2, weight_decay=0.1)
    reference = torch.optim.AdamW([theirs], lr=1e-2, weight_decay=0.1)
    for grad in grads:
        for p, opt in ((ours, mine), (theirs, reference)):
            opt.zero_grad()
            p.grad = grad.clone()
            opt.step()
    assert torch.allclose(ours, theirs, atol=1e-6, rtol=0)
    # bf16: a state dict restores the moments and the rounding generator, so the next steps repeat
    weight = torch.nn.Parameter(init.to(torch.bfloat16))
    optimizer = StochasticRoundingAdamW([weight], lr=1e-4, seed=5)
    for grad in grads[:2]:
        weight.grad = grad.to(torch.bfloat16)
        optimizer.step()
    saved, saved_weight = optimizer.state_dict(), weight.detach().clone()
    for grad in grads[2:]:
        weight.grad = grad.to(torch.bfloat16)
        optimizer.step()
    resumed_weight = torch.nn.Parameter(saved_weight.clone())
    resumed = StochasticRoundingAdamW([resumed_weight], lr=1e-4, seed=99)
    resumed.load_state_dict(saved)
    for grad in grads[2:]:
        resumed_weight.grad = grad.to(torch.bfloat16)
        resumed.step()
    assert torch.equal(resumed_weight, weight)
    with pytest.raises(ValueError, match="not the stochastic-rounding one"):
        resumed.load_state_dict(MasterWeightAdamW([torch.nn.Parameter(init.clone())], lr=1e-3).state_dict())


def test_master_weights_option_defaults_on_for_bf16_only():
    for dtype, expected in (("bfloat16", MasterWeightAdamW), ("float32", torch.optim.AdamW)):
        trainable = load_trainable(tiny_checkpoint(0), SFTConfig(device="cpu", dtype=dtype))
        assert type(make_optimizer(trainable, SFTConfig(dtype=dtype))) is expected
    trainable = load_trainable(tiny_checkpoint(0), SFTConfig(device="cpu", dtype="bfloat16"))
    assert type(make_optimizer(trainable, SFTConfig(master_weights="off"))) is torch.optim.AdamW
    assert type(make_optimizer(trainable, SFTConfig(master_weights="stochastic_rounding"))) is StochasticRoundingAdamW
    with pytest.raises(ConfigError, match="master_weights"):
        config_from_dict(SFTConfig, {"master_weights": "yes"})


@pytest.fixture(scope="module")
def samples():
    backend = HFBackend(tiny_checkpoint(), SamplingOptions(temperature=2.0, max_new_tokens=24), device="cpu")
    builder = ContextBuilder(backend.frame)
    out = []
    for seed, (text, color) in enumerate((("Find the price.", (255, 0, 0)), ("Open Cardio.", (0, 90, 200)))):
        conversation = builder.build(make_task(text), [], make_obs(color=color))
        generation = asyncio.run(backend.generate(conversation, seed=seed))
        out.append(TurnSample(backend.encode(conversation), list(generation.token_ids), list(generation.logprobs),
                              advantage=1.0 if seed else -1.0))
    return out


def _masters(optimizer: MasterWeightAdamW) -> list[torch.Tensor]:
    return [m.detach().clone() for m in optimizer.masters]


def test_tiny_qwen3_vl_bf16_stochastic_rounding_resumes_exactly(samples, tmp_path):
    torch.set_num_threads(1)
    config = GRPOConfig(device="cpu", dtype="bfloat16", learning_rate=1e-5, mini_batches=1, ppo_epochs=1,
                        master_weights="stochastic_rounding")
    trainable = load_trainable(tiny_checkpoint(), config)
    optimizer = make_optimizer(trainable, config)
    before = [p.detach().clone() for p in optimizer.params]
    assert ppo_update(trainable.model, optimizer, samples, config, 0, "cpu")["grad_norm"] > 0
    assert any(not torch.equal(a, b) for a, b in zip(before, optimizer.params))
    checkpoint = save_checkpoint(tmp_path / "checkpoint-0", trainable, optimizer, {"iteration": 0})
    ppo_update(trainable.model, optimizer, samples, config, 1, "cpu")
    resumed = load_trainable(checkpoint, config)
    resumed_opt = make_optimizer(resumed, config)
    load_training_state(checkpoint, resumed_opt)
    ppo_update(resumed.model, resumed_opt, samples, config, 1, "cpu")
    assert all(torch.equal(a, b) for a, b in zip(optimizer.params, resumed_opt.params))


def test_tiny_qwen3_vl_bf16_grpo_and_sft_steps_with_masters_resume_exactly(samples, tmp_path):
    torch.set_num_threads(1)
    config = GRPOConfig(device="cpu", dtype="bfloat16", learning_rate=1e-5, mini_batches=1, ppo_epochs=1)
    trainable = load_trainable(tiny_checkpoint(), config)
    optimizer = make_optimizer(trainable, config)
    assert isinstance(optimizer, MasterWeightAdamW)
    before = _masters(optimizer)
    stats = ppo_update(trainable.model, optimizer, samples, config, 0, "cpu")
    assert stats["grad_norm"] > 0
    moved = _masters(optimizer)
    assert any(not torch.equal(a, b) for a, b in zip(before, moved))
    sft = sft_step(trainable, optimizer, samples, SFTConfig(max_grad_norm=1.0))
    assert sft["loss"] > 0 and sft["grad_norm"] > 0
    # the rollout engine's weights (the model's) are the bf16 cast of the masters
    trainable_params = [p for p in trainable.model.parameters() if p.requires_grad]
    assert all(p.dtype == torch.bfloat16 and torch.equal(p.detach(), m.to(torch.bfloat16))
               for p, m in zip(trainable_params, optimizer.masters))
    checkpoint = save_checkpoint(tmp_path / "checkpoint-1", trainable, optimizer, {"iteration": 1})
    ppo_update(trainable.model, optimizer, samples, config, 2, "cpu")
    uninterrupted = _masters(optimizer)

    resumed = load_trainable(checkpoint, config)
    resumed_opt = make_optimizer(resumed, config)
    fresh = _masters(resumed_opt)  # masters re-derived from the saved bf16 weights alone: progress lost
    load_training_state(checkpoint, resumed_opt)
    assert any(not torch.equal(a, b) for a, b in zip(fresh, resumed_opt.masters))
    ppo_update(resumed.model, resumed_opt, samples, config, 2, "cpu")
    assert all(torch.equal(a, b) for a, b in zip(uninterrupted, resumed_opt.masters))
    # a plain-AdamW resume of a master-weight checkpoint is refused with the fix
    with pytest.raises(ValueError, match="master_weights"):
        load_training_state(checkpoint, make_optimizer(resumed, GRPOConfig(master_weights="off")))
