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
