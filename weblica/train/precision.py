"""fp32 master weights (or stochastic rounding) for models trained in bf16/fp16.

A bf16 weight has 8 significant bits: an AdamW update of lr 1e-6 on a weight of 0.02 is 2.5e-3 of an ulp
and rounds away, so a bf16 model stepped in place barely learns. `MasterWeightAdamW` keeps an fp32 copy of
every trainable parameter; the gradients (computed in the model's dtype) are copied up, AdamW steps the
fp32 copies, and the model's parameters are then overwritten by their rounded cast. So the model -- and
whatever reads its weights (the hf rollout backend shares them, the vLLM sync copies them) -- always
holds the low-precision cast of the masters, and the masters accumulate the small steps.

The masters are part of the optimizer's state dict, so a checkpoint restores them exactly (the exported
bf16 weights alone would lose the sub-ulp progress).

`StochasticRoundingAdamW` is the leaner alternative (4 bytes a weight less: no fp32 copy): the AdamW
step is computed in fp32 from the bf16 weight and fp32 moments, and written back rounded up or down at
random with the probabilities that make the rounding unbiased. A sub-ulp update then moves a weight by a
whole ulp now and then, and by the right amount on average. The rounding draws from a seeded generator
that is checkpointed, so runs repeat and resume exactly.
"""
from __future__ import annotations

from typing import Any, Iterable

from weblica.train.config import MASTER_WEIGHT_MODES as MODES


def _zero_grad(params: list[Any], set_to_none: bool) -> None:
    for p in params:
        if set_to_none:
            p.grad = None
        elif p.grad is not None:
            p.grad.zero_()


def update_kind(mode: str, params: list[Any]) -> str:
    """"masters", "stochastic" or "plain" for a `master_weights` mode: `auto` is masters when any
    trainable parameter is stored below fp32 (bf16/fp16 compute), plain otherwise."""
    import torch

    if mode not in MODES:
        raise ValueError(f"master_weights must be one of {', '.join(MODES)}, not {mode!r}")
    if mode == "auto":
        return "masters" if any(p.dtype in (torch.bfloat16, torch.float16) for p in params) else "plain"
    return {"on": "masters", "off": "plain", "stochastic_rounding": "stochastic"}[mode]


class MasterWeightAdamW:
    """AdamW over fp32 masters of low-precision parameters, with the `torch.optim` calls the trainers
    use (`zero_grad`, `step`, `state_dict`, `load_state_dict`, `param_groups`)."""

    def __init__(self, params: Iterable[Any], lr: float, weight_decay: float = 0.0) -> None:
        import torch

        self.params = list(params)
        self.masters = [p.detach().to(torch.float32).clone().requires_grad_(True) for p in self.params]
        self.inner = torch.optim.AdamW(self.masters, lr=lr, weight_decay=weight_decay)

    @property
    def param_groups(self) -> list[dict[str, Any]]:
        return self.inner.param_groups

    def zero_grad(self, set_to_none: bool = True) -> None:
        _zero_grad(self.params, set_to_none)

    def step(self) -> None:
        import torch

        for p, m in zip(self.params, self.masters):
            m.grad = None if p.grad is None else p.grad.detach().to(torch.float32)
        self.inner.step()
        self._publish()
        for m in self.masters:
            m.grad = None

    def _publish(self) -> None:
        """The model's parameters := the round-to-nearest cast of the masters."""
        import torch

        with torch.no_grad():
            for p, m in zip(self.params, self.masters):
                p.copy_(m)

    def state_dict(self) -> dict[str, Any]:
        return {"adamw": self.inner.state_dict(), "masters": [m.detach().cpu().clone() for m in self.masters]}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        import torch

        if "masters" not in state:
            raise ValueError("this checkpoint's optimizer has no fp32 master weights (it was saved with "
                             "master_weights off or stochastic_rounding): resume with that mode, or start a new output_dir")
        if len(state["masters"]) != len(self.masters):
            raise ValueError(f"checkpoint has {len(state['masters'])} master tensors, the model "
                             f"{len(self.masters)} trainable parameters")
        with torch.no_grad():
            for m, saved in zip(self.masters, state["masters"]):
                m.copy_(saved.to(m.device))
        self.inner.load_state_dict(state["adamw"])
        self._publish()


class StochasticRoundingAdamW:
    """AdamW (torch's defaults: betas 0.9/0.999, eps 1e-8, decoupled weight decay) on bf16 parameters
    with fp32 moments, each new weight stochastically rounded to bf16. fp32 parameters are stepped
    exactly (the rounding is then the identity)."""

    betas = (0.9, 0.999)
    eps = 1e-8

    def __init__(self, params: Iterable[Any], lr: float, weight_decay: float = 0.0, seed: int = 0) -> None:
        import torch

        self.params = list(params)
        self.param_groups = [{"params": self.params, "lr": lr, "weight_decay": weight_decay}]
        self.exp_avg = [torch.zeros_like(p, dtype=torch.float32) for p in self.params]
        self.exp_avg_sq = [torch.zeros_like(p, dtype=torch.float32) for p in self.params]
        self.steps = [0] * len(self.params)
        device = self.params[0].device if self.params else "cpu"
        self.generator = torch.Generator(device=device).manual_seed(seed)

    def zero_grad(self, set_to_none: bool = True) -> None:
        _zero_grad(self.params, set_to_none)

    def step(self) -> None:
        import math

        import torch

        group = self.param_groups[0]
        lr, decay = group["lr"], group["weight_decay"]
        beta1, beta2 = self.betas
        with torch.no_grad():
            for i, p in enumerate(self.params):
                if p.grad is None:
                    continue
                grad = p.grad.to(torch.float32)
                self.steps[i] += 1
                m, v = self.exp_avg[i], self.exp_avg_sq[i]
                m.lerp_(grad, 1 - beta1)
                v.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                correction1 = 1 - beta1 ** self.steps[i]
                correction2 = 1 - beta2 ** self.steps[i]
                denom = (v.sqrt() / math.sqrt(correction2)).add_(self.eps)
                weight = p.to(torch.float32)
                weight.mul_(1 - lr * decay).addcdiv_(m, denom, value=-lr / correction1)
                p.copy_(stochastic_round(weight, p.dtype, self.generator))

    def state_dict(self) -> dict[str, Any]:
        return {"stochastic_rounding": True, "steps": list(self.steps),
                "exp_avg": [t.cpu().clone() for t in self.exp_avg],
                "exp_avg_sq": [t.cpu().clone() for t in self.exp_avg_sq],
                "generator": self.generator.get_state(), "lr": self.param_groups[0]["lr"]}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if not state.get("stochastic_rounding"):
            raise ValueError("this checkpoint's optimizer is not the stochastic-rounding one: resume with the "
                             "master_weights mode it was saved with, or start a new output_dir")
        if len(state["exp_avg"]) != len(self.params):
            raise ValueError(f"checkpoint has moments for {len(state['exp_avg'])} tensors, the model "
                             f"{len(self.params)} trainable parameters")
        for mine, saved in zip(self.exp_avg + self.exp_avg_sq, state["exp_avg"] + state["exp_avg_sq"]):
            mine.copy_(saved.to(mine.device))
        self.steps = list(state["steps"])
        self.generator.set_state(state["generator"])


def stochastic_round(values: Any, dtype: Any, generator: Any) -> Any:
    """fp32 -> bf16 rounding up or down with probability proportional to the distance (unbiased): add
    uniform noise below bf16's last bit to the fp32 bit pattern, then drop those 16 bits."""
    import torch

    if dtype != torch.bfloat16:
        return values.to(dtype)
    bits = values.contiguous().view(torch.int32)
    noise = torch.randint(0, 1 << 16, bits.shape, generator=generator, device=bits.device, dtype=torch.int32)
    rounded = (bits + noise) & -65536  # the low 16 bits are zero: exact in bf16
    finite = torch.isfinite(values)
    return torch.where(finite, rounded.view(torch.float32), values).to(torch.bfloat16)
