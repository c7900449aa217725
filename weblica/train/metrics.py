"""Per-step / per-iteration metrics: one JSON line each in metrics.jsonl, mirrored to TensorBoard."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any


class MetricsLogger:
    def __init__(self, out_dir: Path, append: bool = False, tensorboard: bool = True) -> None:
        self.path = out_dir / "metrics.jsonl"
        self._file = self.path.open("a" if append else "w", encoding="utf-8")
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
