"""Per-step / per-iteration metrics: one JSON line each in metrics.jsonl, mirrored to TensorBoard."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any


class MetricsLogger:
    """`resume_after`: the last step the checkpoint being resumed covers. Lines a crashed or stopped run
    wrote after its last checkpoint describe work the resumed run does again, so they are dropped (the
    resumed run writes them anew; a fixed seed gives the same lines)."""

    def __init__(self, out_dir: Path, resume_after: int | None = None, tensorboard: bool = True) -> None:
        self.path = out_dir / "metrics.jsonl"
        if resume_after is not None and self.path.exists():
            kept = [line for line in self.path.read_text(encoding="utf-8").splitlines(keepends=True)
                    if line.strip() and json.loads(line).get("step", 0) <= resume_after]
            self.path.write_text("".join(kept), encoding="utf-8")
        self._file = self.path.open("w" if resume_after is None else "a", encoding="utf-8")
        self._writer = None
        if tensorboard:
            try:
                from torch.utils.tensorboard import SummaryWriter

                self._writer = SummaryWriter(str(out_dir / "tensorboard"))
            except ImportError:  # tensorboard is in the train extra; metrics.jsonl is enough without it
                self._writer = None
        self.last: dict[str, Any] = {}

    def log(self, step: int, metrics: dict[str, Any]) -> None:
        record = {"step": step, **metrics}
        self._file.write(json.dumps(record, sort_keys=True) + "\n")
        self._file.flush()
        self.last = record
        if self._writer is not None:
            for key, value in metrics.items():
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    self._writer.add_scalar(key, value, step)
                elif isinstance(value, dict):
                    for sub, v in value.items():
                        if isinstance(v, (int, float)):
                            self._writer.add_scalar(f"{key}/{sub}", v, step)

    def close(self) -> None:
        self._file.close()
        if self._writer is not None:
            self._writer.close()
