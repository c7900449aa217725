"""Every kind of check, one entry per (type, mode): how it scores a run, how a page shows its gold, and the
negatives validation asks it about. The checks, the site gate, the page-confuser harvest and validation
all read this table; none of them keeps a list of modes of its own.

A task file naming a type or mode this table lacks is refused when it loads (weblica.env.task), with the
file and line, instead of becoming a check that fails every episode.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

from weblica.scoring import negatives as N
from weblica.scoring import state as S
from weblica.scoring.answer import ANSWER_MODES, PatternError, check_answer
from weblica.scoring.model import Check, CheckResult, TaskLike
from weblica.scoring.negatives import Negative, OracleRun


@dataclass(frozen=True)
class Evidence:
    """What an episode left for its checks: the final answer, the page's URL, the source's state, the
    task's instruction (values it states are context) and the `done` tool's infeasible flag."""

    answer: str | None
    url: str
    state: dict[str, Any] | None
    instruction: str = ""
    infeasible: bool = False


NegativeBuilder = Callable[[TaskLike, OracleRun], "list[Negative]"]


@dataclass(frozen=True)
class CheckKind:
    type: str
    mode: str
    check: Callable[[Check, Evidence], CheckResult]
    # whether a page's normalized text (and its numbers) shows the gold; None where there is no one value
    gold_on_page: Callable[[Check, str, Sequence[float]], bool] | None = None
    negatives: tuple[NegativeBuilder, ...] = ()
    # the gold is one value a page shows beside other values of its field (so confusers can be harvested)
    single_value: bool = False


# ---- scoring -------------------------------------------------------------------------------------------

def _answer(check: Check, ev: Evidence) -> CheckResult:
    if ev.answer is None:
        return CheckResult(check, False, "no final answer")
    outcome = check_answer(check, ev.answer, instruction=ev.instruction, infeasible=ev.infeasible)
    shown = ev.answer if len(ev.answer) <= 200 else ev.answer[:200] + "..."
    source = check.confusers_from or ("data" if check.confusers else "none")
    return CheckResult(check, outcome.passed, f"answer {shown!r} {outcome.reason} ({check.mode} "
                                              f"{check.expected!r}; confusers: {source})")


def _url(match: Callable[[str, str], bool]) -> Callable[[Check, Evidence], CheckResult]:
    def score(check: Check, ev: Evidence) -> CheckResult:
        ok = match(ev.url, str(check.expected))
        return CheckResult(check, ok, f"url {ev.url} {'matches' if ok else 'does not match'} {check.expected}")
    return score


def _state(match: Callable[[Any, Any, float], bool]) -> Callable[[Check, Evidence], CheckResult]:
    def score(check: Check, ev: Evidence) -> CheckResult:
        if ev.state is None:
            return CheckResult(check, False, "the task's source supplies no state")
        value = S.lookup_path(ev.state, check.path or "")
        if value is S.MISSING:
            return CheckResult(check, False, f"state has no '{check.path}'")
        ok = match(value, check.expected, check.tol)
        shown = "(a password hash)" if check.mode == "password" else repr(value)
        return CheckResult(check, ok, f"state {check.path}={shown} {'matches' if ok else 'does not match'} "
                                      f"{'the password' if check.mode == 'password' else repr(check.expected)}")
    return score


# ---- a gold on a page ------------------------------------------------------------------------------------

def _exact_on_page(check: Check, text: str, numbers: Sequence[float]) -> bool:
    options = check.expected if isinstance(check.expected, (list, tuple)) else [check.expected]
    return any(S.normalize_text(o) and S.normalize_text(o) in text for o in options)


def _regex_on_page(check: Check, text: str, numbers: Sequence[float]) -> bool:
    try:
        return re.search(str(check.expected), text, re.IGNORECASE | re.DOTALL) is not None
    except re.error:
        return False


def _numeric_on_page(check: Check, text: str, numbers: Sequence[float]) -> bool:
    target = S.parse_number(check.expected)
    return target is not None and any(math.isclose(n, target, abs_tol=max(check.tol, 1e-9)) for n in numbers)


def _set_on_page(check: Check, text: str, numbers: Sequence[float]) -> bool:
    items = check.expected if isinstance(check.expected, (list, tuple)) else re.split(r"\s*[,;]\s*", str(check.expected))
    return all(S.normalize_text(i) in text for i in items if S.normalize_text(i))


# ---- negatives (weblica.scoring.negatives), as builders of (task, the oracle's run) ----------------------

def _answer_negatives(task: TaskLike, run: OracleRun) -> list[Negative]:
    return N.answer_negatives(task, run.gold, run.page_text)


def _phrasing_negatives(task: TaskLike, run: OracleRun) -> list[Negative]:
    return N.phrasing_negatives(task, run.gold, run.page_text, run.another_answer)


def _url_negatives(task: TaskLike, run: OracleRun) -> list[Negative]:
    return N.url_negatives(task)


def _state_negatives(task: TaskLike, run: OracleRun) -> list[Negative]:
    return N.state_negatives(task, run.state)


def _field_negatives(task: TaskLike, run: OracleRun) -> list[Negative]:
    return N.field_negatives(task, run.state, run.initial if run.initial is not None else {})


# ---- the table -------------------------------------------------------------------------------------------

_ON_PAGE = {"exact": _exact_on_page, "numeric": _numeric_on_page, "regex": _regex_on_page, "set": _set_on_page}
_STATE_MODES = {"exact": S.state_exact, "numeric": S.state_numeric, "set": S.state_set, "regex": S.state_regex,
                "contains": S.state_contains, "count": S.state_count, "password": S.state_password}
_URL_MODES = {"exact": S.url_exact, "prefix": S.url_prefix, "contains": S.url_contains, "regex": S.url_regex}

KINDS: dict[tuple[str, str], CheckKind] = {}
for _mode in ANSWER_MODES:
    KINDS[("answer_match", _mode)] = CheckKind(
        "answer_match", _mode, _answer, _ON_PAGE.get(_mode),
        (_answer_negatives,) if _mode == "refusal" else (_answer_negatives, _phrasing_negatives),
        single_value=_mode in ("exact", "numeric", "date"))  # regex, set and refusal golds are no one value
for _mode, _match in _URL_MODES.items():
    KINDS[("url_match", _mode)] = CheckKind("url_match", _mode, _url(_match),
                                            negatives=(_url_negatives,) if _mode == "exact" else ())
for _mode, _match in _STATE_MODES.items():
    KINDS[("state_match", _mode)] = CheckKind("state_match", _mode, _state(_match),
                                              negatives=(_state_negatives, _field_negatives))

CHECK_TYPES = tuple(dict.fromkeys(t for t, _ in KINDS))


def kind_of(check: Check) -> CheckKind | None:
    return KINDS.get((check.type, check.mode)) if isinstance(check.mode, str) else None


def modes_of(check_type: str) -> list[str]:
    return [m for t, m in KINDS if t == check_type]


def check_problem(check: Check) -> str | None:
    """Why a check cannot be scored (an unknown type or mode), with the fix; None for a known kind."""
    if not isinstance(check.mode, str):
        return f"the check is malformed: mode must be a string, got {type(check.mode).__name__}"
    if check.type not in CHECK_TYPES:
        return f"unknown check type '{check.type}' (use {', '.join(CHECK_TYPES)})"
    if kind_of(check) is None:
        return f"unknown {check.type} mode {check.mode!r} (use {', '.join(modes_of(check.type))})"
    return None


def negative_builders(checks: Iterable[Check]) -> list[NegativeBuilder]:
    """The negative builders the checks' kinds name, each once, in the order the checks give them."""
    out: list[NegativeBuilder] = []
    for check in checks:
        kind = kind_of(check)
        for build in kind.negatives if kind else ():
            if build not in out:
                out.append(build)
    return out


def score_check(check: Check, evidence: Evidence) -> CheckResult:
    """One check's result; a pattern that does not compile or runs too long fails it with the reason."""
    kind = kind_of(check)
    if kind is None:
        return CheckResult(check, False, check_problem(check) or "unknown check")
    try:
        return kind.check(check, evidence)
    except PatternError as exc:
        return CheckResult(check, False, f"{check.type} {check.mode} {check.expected!r}: {exc}")


def all_negatives(task: TaskLike, run: OracleRun) -> list[Negative]:
    """Everything validation asks a task's checks to reject: the listed wrong answers and URLs, then every
    negative the kinds of its checks name, each builder once."""
    out = N.listed_negatives(task)
    for build in negative_builders(task.checks):
        out += build(task, run)
    return out
