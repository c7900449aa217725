"""Progress bars on stderr (rich): rollouts, synth generation and validation, LLM site runs, cache builds."""
from __future__ import annotations

from typing import Any


def progress_bar(total: int) -> Any:
    """A rich progress bar on stderr: done of total, elapsed, ETA (rollouts, synth, validation)."""
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                               TimeRemainingColumn)
    from rich.console import Console

    # redirect_stdout off: rich would otherwise send what the command prints to stdout meanwhile into the
    # bar's terminal (stderr) whenever stderr is a terminal, and a caller reading stdout would lose it
    return Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(), console=Console(stderr=True),
                    transient=False, redirect_stdout=False)


class OptionalBar:
    """One labelled progress bar (`progress_bar`) that may be switched off: with `enabled` False every call
    is a no-op, so callers count and label without asking whether a bar is shown. A context manager:
    the bar is drawn from enter to exit."""

    def __init__(self, total: int, label: str, enabled: bool) -> None:
        self.bar: Any = progress_bar(total) if enabled else None
        self.task = self.bar.add_task(label, total=total) if self.bar is not None else None

    def advance(self, label: str | None = None) -> None:
        """One more done, with a new label when given."""
        if self.bar is not None:
            self.bar.update(self.task, advance=1, **({"description": label} if label is not None else {}))

    def relabel(self, label: str) -> None:
        if self.bar is not None:
            self.bar.update(self.task, description=label)

    def __enter__(self) -> "OptionalBar":
        if self.bar is not None:
            self.bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()


class TrainingProgress:
    """The progress hook a trainer reports to: optimizer steps (SFT) or iterations (GRPO) done of the total,
    the last step's headline metrics (loss, reward, success, episodes), elapsed time and ETA, on stderr.

    Until the trainer calls `start` (it is still loading the model, building a tiny one, playing a
    teacher's episodes, encoding samples) the bar says it is preparing. With `enabled` False every call is
    a no-op, so a trainer reports without asking whether anyone watches. A context manager."""

    SHOWN = ("loss", "reward", "success", "episodes", "grad_norm")   # the metrics a line has room for

    def __init__(self, label: str, enabled: bool = True) -> None:
        self.label = label
        self.bar: Any = None
        self.task: Any = None
        if enabled:
            from rich.console import Console
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn,
                                       TimeElapsedColumn, TimeRemainingColumn)

            self.bar = Progress(SpinnerColumn(), TextColumn("[bold]{task.description}"), BarColumn(),
                                MofNCompleteColumn(), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                                TextColumn("{task.fields[metrics]}"), console=Console(stderr=True),
                                transient=False, redirect_stdout=False)
            self.task = self.bar.add_task(f"{label}: preparing", total=None, metrics="")

    def start(self, total: int, done: int = 0) -> None:
        """The work is known: `total` steps, `done` of them already (a resumed run)."""
        if self.bar is not None:
            self.bar.reset(self.task, total=total, completed=done, description=self.label, metrics="")

    def step(self, done: int, metrics: dict[str, Any] | None = None) -> None:
        """`done` steps are finished; `metrics` is the last one's."""
        if self.bar is not None:
            self.bar.update(self.task, completed=done, metrics=describe_metrics(metrics or {}, self.SHOWN))

    def __enter__(self) -> "TrainingProgress":
        if self.bar is not None:
            self.bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()


def describe_metrics(metrics: dict[str, Any], keys: tuple[str, ...]) -> str:
    """'loss 0.4213  reward 0.50': the named metrics a step has, numbers to 4 significant digits."""
    parts = []
    for key in keys:
        value = metrics.get(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        parts.append(f"{key} {value:.4g}" if isinstance(value, float) else f"{key} {value}")
    return "  ".join(parts)
