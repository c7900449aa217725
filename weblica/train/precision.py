"""fp32 master weights for models trained in bf16/fp16.

A bf16 weight has 8 significant bits: an AdamW update of lr 1e-6 on a weight of 0.02 is 2.5e-3 of an ulp
and rounds away, so a bf16 model stepped in place barely learns. `MasterWeightAdamW` keeps an fp32 copy of
every trainable parameter; the gradients (computed in the model's dtype) are copied up, AdamW steps the
fp32 copies, and the model's parameters are then overwritten by their rounded cast. So the model -- and
whatever reads its weights (the hf rollout backend shares them, the vLLM sync copies them) -- always
holds the low-precision cast of the masters, and the masters accumulate the small steps.

The masters are part of the optimizer's state dict, so a checkpoint restores them exactly (the exported
bf16 weights alone would lose the sub-ulp progress).
"""
from __future__ import annotations

from typing import Any, Iterable

from weblica.train.config import MASTER_WEIGHT_MODES as MODES


def wants_masters(mode: str, params: list[Any]) -> bool:
    """`auto`: on when any trainable parameter is stored below fp32 (bf16/fp16 compute)."""
    import torch

    if mode not in MODES:
        raise ValueError(f"master_weights must be one of {', '.join(MODES)}, not {mode!r}")
    if mode == "auto":
        return any(p.dtype in (torch.bfloat16, torch.float16) for p in params)
    return mode == "on"


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
        for p in self.params:
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad.zero_()

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
                             "master_weights off): resume with master_weights: off, or start a new output_dir")
        if len(state["masters"]) != len(self.masters):
            raise ValueError(f"checkpoint has {len(state['masters'])} master tensors, the model "
                             f"{len(self.masters)} trainable parameters")
        with torch.no_grad():
            for m, saved in zip(self.masters, state["masters"]):
                m.copy_(saved.to(m.device))
        self.inner.load_state_dict(state["adamw"])
        self._publish()
