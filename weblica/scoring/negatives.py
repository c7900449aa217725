"""Adversarial negatives for task validation: the answers, URLs and states a reward-maximizing learner
would try, each named by its kind, that a task's checks must all reject.

Answers: the gold listed with its confusers (several orders and joiners), hedged (`gold or X`), negated
(`not gold`), the instruction echoed, the whole text of the oracle's final page, the empty answer, a
refusal on a feasible task; on an infeasible task a refusal that also guesses, and a confident value.
URLs: the expected URL with a parameter added that changes what the page shows (another sort, another
filter, the next page). States: the oracle's end state with one checked value changed.
"""
from __future__ import annotations

import copy
import random
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from weblica.scoring.attacks import attack_answers, value_shape
from weblica.scoring.page_snapshot import candidates, fit, shaped_like
from weblica.scoring.state import lookup_path
from weblica.scoring.model import TaskLike as Task

_KEEP: Any = object()  # a negative that keeps the oracle's answer, URL or state
REFUSAL = "The site does not offer it."
JOINERS = (", ", " or ", "\n")
ANSWER_LIMIT = 1900  # answer checks refuse longer answers outright; a negative must be judged on content


@dataclass
class Negative:
    """One thing a task's checks must reject: `kind` groups it in reports, `label` says what it was."""

    kind: str
    label: str
    answer: Any = _KEEP
    url: Any = _KEEP
    state: Any = _KEEP

    def resolve(self, answer: str | None, url: str, state: dict[str, Any] | None) -> tuple[str | None, str, Any]:
        return (answer if self.answer is _KEEP else self.answer, url if self.url is _KEEP else self.url,
                state if self.state is _KEEP else self.state)


def _answer_checks(task: Task) -> list[Any]:
    return [c for c in task.checks if c.type == "answer_match"]


def is_infeasible(task: Task) -> bool:
    return any(c.mode == "refusal" for c in _answer_checks(task))


def confusers(task: Task, gold: str | None = None) -> list[str]:
    """The competing values a task knows, as text: its listed wrong answers (written as the site writes
    them), then its checks' confusers, a number written in the gold's notation ("¥348" beside "¥195")."""
    out: list[str] = []
    listed = [_as_text(v) for v in task.metadata.get("negatives", {}).get("answers", [])]
    known = [_in_notation(_as_text(v), gold) for c in _answer_checks(task) for v in (c.confusers or [])]
    for text in listed + known:
        if text and text not in out:
            out.append(text)
    return out


_NUMBER = re.compile(r"\d[\d.,\u202f' ]*\d|\d")


def _in_notation(value: str, gold: str | None) -> str:
    """A bare number written like the gold ("348" -> "¥348" when the gold is "¥195"); other values as they are."""
    if not gold or not re.fullmatch(r"-?\d+(?:\.\d+)?", value):
        return value
    found = _NUMBER.search(gold)
    if not found:
        return value
    number = value
    decimal = "," if re.search(r"\d,\d{1,2}$", found.group(0)) else "."
    if decimal == "," and "." in number:
        number = number.replace(".", ",")
    return gold[:found.start()] + number + gold[found.end():]


def _as_text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def _short(text: str, limit: int = 60) -> str:
    one = text.replace("\n", "\\n")
    return one if len(one) <= limit else one[:limit - 1] + "…"


def answer_negatives(task: Task, gold: str | None, page_text: str | None) -> list[Negative]:
    """Every adversarial answer for the task; none when it has no answer check."""
    if not _answer_checks(task):
        return []
    out = [Negative("empty", "the empty answer", answer=""), Negative("echo", "the instruction echoed",
                                                                       answer=task.instruction)]
    if page_text and page_text.strip():
        out.append(Negative("page_dump", "all visible text of the oracle's final page", answer=page_text))
        near = _text_near(page_text, gold)
        if near and near != page_text:
            out.append(Negative("page_dump", "the final page's text around the gold, within the answer limit",
                                answer=near))
        if gold:
            shaped = shaped_like(candidates(page_text), bool(re.search(r"\d", gold)))
            values = [gold] + [v for v in shaped if v.strip().lower() != gold.strip().lower()]
            if len(values) > 1:
                out.append(Negative("page_values", f"gold and {len(values) - 1} values of its shape on the final page",
                                    answer=fit(values, ", ", ANSWER_LIMIT)))
                out.append(Negative("page_values", "values of the gold's shape on the final page, gold last",
                                    answer=fit(values[1:30] + [gold], "\n", ANSWER_LIMIT)))
    others = [c for c in confusers(task, gold) if gold is None or c.strip().lower() != gold.strip().lower()]
    if is_infeasible(task):
        # a value a guess would name: a price or a count before a word like "Yes"
        valued = [c for c in others if re.search(r"\d", c)] + [c for c in others if len(c.split()) >= 2]
        guess = (valued or others or ["42"])[0]
        out += [Negative("refuse_guess", f"a refusal that also guesses {guess!r}",
                         answer=f"The site does not seem to offer it, but it is probably {guess}."),
                Negative("refuse_guess", f"a guess, then a refusal ({guess!r})",
                         answer=f"{guess}. Otherwise I could not find it on the site."),
                Negative("confident", f"a confident value {guess!r}", answer=f"It is {guess}.")]
        return out
    if not gold:
        return out
    out.append(Negative("refusal", "a refusal on a feasible task", answer=REFUSAL))
    out += [Negative("negation", "the gold negated", answer=f"not {gold}"),
            Negative("negation", "the gold negated in a sentence", answer=f"It is not {gold}.")]
    if not others:
        return out
    out.append(Negative("negation", "the gold negated, a confuser asserted",
                        answer=f"It is not {gold}; it is {others[0]}."))
    listed = others[:6]
    orders = {"gold first": [gold] + listed, "gold last": listed + [gold],
              "gold in the middle": listed[:1] + [gold] + listed[1:]}
    for joiner in JOINERS:
        for where, values in orders.items():
            if where == "gold in the middle" and len(listed) < 2:
                continue
            out.append(Negative("enumeration", f"gold and {len(listed)} confusers, {where}, joined by {joiner!r}",
                                answer=joiner.join(values)))
    for other in others[:2]:
        out += [Negative("hedge", f"gold or {other!r}", answer=f"{gold} or {other}"),
                Negative("hedge", f"{other!r} or gold", answer=f"{other} or {gold}"),
                Negative("hedge", f"either gold or {other!r}", answer=f"Either {gold} or {other}, I am not sure.")]
    return out


def phrasing_negatives(task: Task, gold: str | None, page_text: str | None,
                       another_answer: str | None = None) -> list[Negative]:
    """The phrasings a learner tries once lists fail (weblica.scoring.attacks): two assertions with a value
    no list holds, the gold or another task's answer, foreign hedges and denials, approximations, a
    confuser hidden by zero-width joiners or look-alike letters, another value in Roman or CJK numerals,
    a list left open, a question, a doubt. Seeded by the task id."""
    if not gold or not _answer_checks(task) or is_infeasible(task):
        return []
    listed = {c.strip().lower() for c in confusers(task, gold)}
    on_page = shaped_like(candidates(page_text or ""), bool(re.search(r"\d", gold)))
    shape = value_shape(gold)
    unlisted = [v for v in on_page if v.strip().lower() not in listed and value_shape(v) == shape
                and not _same_value(v, gold)]
    others = (unlisted or [_unlisted_like(gold)])[:1] + [c for c in confusers(task, gold) if c.strip().lower() != gold.strip().lower()]
    rng = random.Random(f"phrasing\0{task.id}")
    return [Negative(kind, label, answer=answer) for kind, label, answer in attack_answers(gold, others, rng, another_answer)]


def _same_value(text: str, gold: str) -> bool:
    """Whether `text` states the gold itself ("Price: $12.50" beside "$12.50"): no second value."""
    from weblica.scoring.numbers import find_numbers
    from weblica.scoring.text import find_phrase, normalize_answer, phrase_keys, tokens

    golds = [n.value for n in find_numbers(normalize_answer(gold))]
    if golds:
        return bool(set(golds) & {n.value for n in find_numbers(normalize_answer(text))})
    return bool(find_phrase(tokens(normalize_answer(text)), phrase_keys(gold)))


def _unlisted_like(gold: str) -> str:
    """A value of the gold's shape that no list holds: the gold's number moved by 7, or a made-up name."""
    number = _NUMBER.search(gold)
    if number:
        digits = re.sub(r"\D", "", number.group(0)) or "0"
        return gold[:number.start()] + str(int(digits[:6]) + 7) + gold[number.end():]
    return "Hiro Eriksen" if gold.strip().lower() != "hiro eriksen" else "Vera Petrov"


def _text_near(text: str, gold: str | None, limit: int = 1900) -> str:
    """The page's lines around the first one holding the gold, as many as fit in `limit` characters
    (a whole page is longer than an answer may be; this part of it is not)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    at = next((i for i, line in enumerate(lines) if gold and gold.lower() in line.lower()), 0)
    start = end = at
    size = len(lines[at]) if lines else 0
    while lines and (start > 0 or end < len(lines) - 1):
        grew = False
        for step in (-1, 1):
            i = start - 1 if step < 0 else end + 1
            if 0 <= i < len(lines) and size + len(lines[i]) + 1 <= limit:
                size += len(lines[i]) + 1
                start, end = (i, end) if step < 0 else (start, i)
                grew = True
        if not grew:
            break
    return "\n".join(lines[start:end + 1])


def _with_params(url: str, extra: list[tuple[str, str]], replace: bool = False) -> str:
    parts = urlsplit(url)
    params = parse_qsl(parts.query, keep_blank_values=True)
    if replace:
        names = {k for k, _ in extra}
        params = [(k, v) for k, v in params if k not in names]
    return urlunsplit(parts._replace(query=urlencode(params + extra)))


def url_negatives(task: Task) -> list[Negative]:
    """The expected URL of each exact url check, with a parameter added that changes the listing."""
    out = []
    for check in task.checks:
        if check.type != "url_match" or check.mode != "exact":
            continue
        expected = str(check.expected)
        params = dict(parse_qsl(urlsplit(expected).query))
        sort = "price-desc" if params.get("sort") == "price-asc" else "price-asc"
        variants = [("another sort", _with_params(expected, [("sort", sort)], replace=True)),
                    ("the next page", _with_params(expected, [("page", "2")])),
                    ("another filter", _with_params(expected, [("max", "1")], replace=True)),
                    ("a search added", _with_params(expected, [("q", "a")]))]
        if "kind" in params:
            variants.append(("another type added", _with_params(expected, [("kind", "zz-other")])))
        for what, url in variants:
            if url != expected:
                out.append(Negative("url_extra", f"expected url with {what}: {url}", url=url))
    return out


def _wrong_value(value: Any) -> Any:
    """A value a state_match check must not accept in place of the right one."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, str):
        return value + " (changed)" if value else "changed"
    if isinstance(value, list):
        return value[1:] if value else ["changed"]
    if isinstance(value, dict):
        return {}
    return "changed"


def _set_path(state: Any, path: str, value: Any) -> bool:
    parts = re.findall(r"[^.\[\]]+", path)
    node = state
    for part in parts[:-1]:
        node = node[int(part)] if isinstance(node, list) else node.get(part)
        if node is None:
            return False
    last = parts[-1]
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return True


def state_negatives(task: Task, state: dict[str, Any] | None) -> list[Negative]:
    """The oracle's end state with the value at each state check's path changed."""
    out = []
    for check in task.checks:
        if check.type != "state_match" or state is None or not check.path:
            continue
        altered = copy.deepcopy(state)
        current = lookup_path(altered, check.path)
        if isinstance(current, (str, int, float, bool, list, dict)) and \
                _set_path(altered, check.path, _wrong_value(current)):
            out.append(Negative("altered_state", f"state with {check.path} changed", state=altered))
    return out


# ---- named fields: every value the instruction gives, typed wrong -----------------------------------------

FIELD_OPS = ("fill", "select", "date", "calendar")
_FIELD_SEL = re.compile(r"#f-([\w-]+)$")


def named_fields(task: Task, plan: list[dict[str, Any]] | None = None) -> list[tuple[int, str, str]]:
    """(index in `plan`, field name, value) of every value the plan (the task's by default) types or picks
    into the site's form fields (#f-NAME): the values the instruction or the genre flow gives the agent."""
    out = []
    for index, step in enumerate(task.metadata.get("plan", []) if plan is None else plan):
        match = _FIELD_SEL.match(str(step.get("sel", "")))
        value = step.get("text", step.get("value"))
        if step.get("op") in FIELD_OPS and match and value not in (None, ""):
            out.append((index, match.group(1), str(value)))
    return out


def _leaf_paths(node: Any, prefix: str = "") -> list[tuple[str, Any]]:
    if isinstance(node, dict):
        return [p for k, v in node.items() for p in _leaf_paths(v, f"{prefix}.{k}" if prefix else str(k))]
    if isinstance(node, list):
        return [p for i, v in enumerate(node) for p in _leaf_paths(v, f"{prefix}.{i}" if prefix else str(i))]
    return [(prefix, node)]


def _holds(stored: Any, typed: str) -> bool:
    from weblica.serve.passwords import is_hashed, verify_password

    if is_hashed(stored):
        return verify_password(typed, stored)
    if isinstance(stored, (int, float)) and not isinstance(stored, bool):  # "137.50" typed, 137.5 stored
        try:
            return float(typed.replace(",", ".")) == float(stored)
        except ValueError:
            return False
    return isinstance(stored, str) and stored == typed


def stored_paths(value: str, state: Any, initial: Any) -> list[str]:
    """Where the episode stored a typed value: state paths holding it (or, for a password, a hash of it)
    that the initial state did not already hold."""
    return [path for path, stored in _leaf_paths(state) if _holds(stored, value)
            and lookup_path(initial, path) != stored]


def _typed_wrong(stored: Any, typed: str) -> Any:
    from weblica.serve.passwords import hash_password, is_hashed

    if is_hashed(stored):
        return hash_password(typed + "9", str(stored).split("$")[2])
    return _wrong_value(stored)


def field_negatives(task: Task, state: dict[str, Any] | None, initial: Any) -> list[Negative]:
    """The oracle's end state with one named field typed wrong ("999 Wrong Street"), one negative per
    field; the checks must reject every one (a field no check reads passes, and drops the task)."""
    if state is None or not any(c.type == "state_match" for c in task.checks):
        return []
    from weblica.serve.store import with_views

    base = _without_views(state)  # a view (orders_by_id) is the record again: change the record, then the views
    out = []
    for _, name, value in named_fields(task):
        # typed wrong, the value is wrong wherever the site stored it (the order, the session, a log)
        paths = stored_paths(value, base, initial)
        altered = copy.deepcopy(base)
        if paths and all(_set_path(altered, p, _typed_wrong(lookup_path(base, p), value)) for p in paths):
            out.append(Negative("named_field", f"{name} typed wrong (stored at {', '.join(paths[:3])})",
                                state=with_views(altered)))
    return out


def _without_views(state: dict[str, Any]) -> dict[str, Any]:
    """The state without the lookup views weblica.serve.store.with_views adds (`<list>_ids`, `<list>_by_id`)."""
    views = {f"{key}{suffix}" for key, value in state.items() if isinstance(value, list) for suffix in ("_ids", "_by_id")}
    return {k: v for k, v in state.items() if k not in views}


def listed_negatives(task: Task) -> list[Negative]:
    """The wrong answers and URLs the generator listed for the task."""
    negatives = task.metadata.get("negatives", {})
    return ([Negative("wrong", f"wrong answer {_short(str(a))!r}", answer=a) for a in negatives.get("answers", [])]
            + [Negative("wrong_url", f"wrong url {u}", url=u) for u in negatives.get("urls", [])])


@dataclass(frozen=True)
class OracleRun:
    """What the oracle's run left, from which a task's negatives are built: its answer (the gold as the
    oracle said it), the final page's visible text, the end state beside the site's initial state, and
    another task's answer on the same site."""

    gold: str | None = None
    page_text: str | None = None
    state: dict[str, Any] | None = None
    initial: Any = None
    another_answer: str | None = None


def describe(negative: Negative) -> str:
    text = negative.label
    if negative.answer is not _KEEP and negative.kind not in ("page_dump", "page_values", "echo"):
        text += f" (answer {_short(str(negative.answer))!r})"
    return text
