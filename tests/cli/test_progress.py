"""One optional progress bar for validation and the LLM run: off, it draws nothing and still counts;
on, it shows done of total with the caller's label on stderr."""
from __future__ import annotations

import io

from rich.console import Console

from weblica.progress import OptionalBar
from weblica.synth.llm import _Progress
from weblica.synth.validate import _TaskBar


def _capture(bar: OptionalBar) -> io.StringIO:
    sink = io.StringIO()
    bar.bar.live.console = Console(file=sink, force_terminal=False, width=120)
    return sink


def test_a_switched_off_bar_draws_nothing_and_keeps_counting(capsys):
    with _Progress(3, enabled=False) as bar:
        bar.site_done(True)
        bar.site_done(False)
    assert bar.bar is None and (bar.accepted, bar.failed) == (1, 1)
    with _TaskBar([], None, enabled=False) as tasks:
        tasks.task_done(None)
        tasks.site_done()
    assert tasks.done == 1
    assert capsys.readouterr().err == ""


def test_the_llm_and_validation_bars_show_counts_and_labels():
    llm = _Progress(2, enabled=True)
    sink = _capture(llm)
    with llm:
        llm.site_done(True)
        llm.site_done(False)
    assert "LLM sites (accepted 1, failed 1)" in sink.getvalue() and "2/2" in sink.getvalue()
    check = _TaskBar([], None, enabled=True)
    sink = _capture(check)
    with check:
        check.site_done()
    assert "validating tasks (1/0 sites done)" in sink.getvalue()
