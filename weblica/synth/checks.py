"""Check builders for synth tasks. Each answer check carries its confusers: the values of the same field
the site shows for other entities, so an answer that lists candidates, hedges or negates the gold fails,
while what a person would accept (number words, the site's number and date notation, units left out)
passes. The matching itself is in `weblica.env.task` / `weblica.scoring.numbers`."""
from __future__ import annotations

from typing import Any, Sequence

from weblica.env.task import Check

def _confusers(values: Sequence[Any], gold: Any) -> dict[str, Any]:
    kept = [v for v in dict.fromkeys(values) if v != gold]
    return {"confusers": kept, "confusers_from": "data"} if kept else {}


def answer_number(value: float, decimals: int = 2, confusers: Sequence[float] = (),
                  locale: str | None = None) -> Check:
    """A number (a price, a total) to `decimals` places; `locale` is the site's (e.g. "de-DE")."""
    tol = 0.5 * 10 ** -decimals if decimals else 0.0
    return Check(type="answer_match", expected=round(float(value), decimals), mode="numeric", tol=tol,
                 locale=locale, **_confusers([round(float(c), decimals) for c in confusers], round(float(value), decimals)))


def answer_count(value: int, confusers: Sequence[int] = (), unit: str | None = None) -> Check:
    """A whole number (a count, a year); `unit` is the question's unit ("owners"), which may be omitted."""
    return Check(type="answer_match", expected=int(value), mode="numeric", unit=unit,
                 **_confusers([int(c) for c in confusers], int(value)))


def answer_text(text: str, confusers: Sequence[str] = ()) -> Check:
    """A name or a fact as a whole phrase; `confusers` are the same field's values for other entities."""
    return Check(type="answer_match", expected=text, mode="exact", **_confusers([str(c) for c in confusers], text))


def answer_date(iso: str, confusers: Sequence[str] = (), locale: str | None = None) -> Check:
    """A date given as ISO `YYYY-MM-DD`; any common notation is accepted, `locale` decides 06/07 order."""
    return Check(type="answer_match", expected=iso, mode="date", locale=locale, **_confusers(list(confusers), iso))


def answer_infeasible(confusers: Sequence[Any] = ()) -> Check:
    """The task cannot be done on the site: only a refusal that asserts no value passes. `confusers` are
    the site's values a guess would name (the nearest items, their prices), as a feasible task's are."""
    return Check(type="answer_match", expected=None, mode="refusal", **_confusers(list(confusers), None))


def url_is(url: str) -> Check:
    return Check(type="url_match", expected=url, mode="exact")


def state_is(path: str, value: Any, mode: str = "exact") -> Check:
    return Check(type="state_match", path=path, expected=value, mode=mode)


def state_count(path: str, count: int) -> Check:
    return Check(type="state_match", path=path, expected=count, mode="count")
