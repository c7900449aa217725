"""Per-step / per-iteration metrics: one JSON line each in metrics.jsonl, mirrored to TensorBoard and,
where a recipe asks (`report_to: [tensorboard, wandb]`), to Weights & Biases."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any


class MetricsLogger:
    """`resume_after`: the last step the checkpoint being resumed covers. Lines a crashed or stopped run
    wrote after its last checkpoint describe work the resumed run does again, so they are dropped (the
    resumed run writes them anew; a fixed seed gives the same lines)."""

    def __init__(self, out_dir: Path, resume_after: int | None = None, tensorboard: bool = True,
                 wandb: dict[str, Any] | None = None) -> None:
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
        self._wandb = start_wandb(out_dir, **wandb) if wandb is not None else None
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
        if self._wandb is not None:
            self._wandb.log(scalars(metrics), step=step)

    def close(self) -> None:
        self._file.close()
        if self._writer is not None:
            self._writer.close()
        if self._wandb is not None:
            self._wandb.finish()


def scalars(metrics: dict[str, Any]) -> dict[str, float]:
    """The numbers of a metrics line, nested dicts as `key/sub` (TensorBoard's and wandb's grouping)."""
    out: dict[str, float] = {}
    for key, value in metrics.items():
        if isinstance(value, dict):
            out.update({f"{key}/{k}": v for k, v in scalars(value).items()})
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            out[key] = value
    return out


def start_wandb(out_dir: Path, project: str, name: str, config: dict[str, Any]) -> Any:
    """A wandb run for this output directory: a resumed training continues the same run (its id is kept in
    output_dir/wandb-run-id). Without the package, an error that names the fix."""
    try:
        import wandb
    except ImportError:
        raise ValueError("report_to wandb needs the wandb package: pip install wandb (WANDB_MODE=offline "
                         "writes the run locally, for `wandb sync` later)") from None
    id_file = out_dir / "wandb-run-id"
    run_id = id_file.read_text().strip() if id_file.exists() else wandb.util.generate_id()
    id_file.write_text(run_id + "\n")
    return wandb.init(project=project, name=name or out_dir.resolve().name, id=run_id, resume="allow",
                      config=config, dir=str(out_dir))


def logger_for(config: Any, out_dir: Path, resume_after: int | None) -> MetricsLogger:
    """The metrics logger a recipe asks for (`report_to`, `wandb_project`, `run_name`)."""
    from dataclasses import asdict

    report_to = getattr(config, "report_to", ["tensorboard"])
    wandb = {"project": config.wandb_project, "name": config.run_name, "config": asdict(config)} \
        if "wandb" in report_to else None
    return MetricsLogger(out_dir, resume_after, tensorboard="tensorboard" in report_to, wandb=wandb)
