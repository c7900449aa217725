"""The Task data model (one JSON object a line in tasks.jsonl) and its declarative checks."""
from __future__ import annotations

import json
import math
import numbers
import re
import unicodedata
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable
from urllib.parse import parse_qsl, urlsplit

import regex

from weblica.env.actions import Action, ActionError, make_action
from weblica.env.answer_check import MAX_ANSWER_CHARS, PatternError, check_answer, safe_search
from weblica.env.answers import find_numbers
from weblica.env.text import normalize_answer


class TaskError(ValueError):
    """A task file or task object that does not follow the schema."""


@dataclass
class TaskSource:
    """Where a task's site comes from: `kind` is synth, cache, live or local."""

    kind: str = "local"
    site: str | None = None       # synth site id or live site name
    recording: str | None = None  # cache recording path
    bundle: str | None = None     # synth bundle directory

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}


@dataclass
class Check:
    """One declarative check.

    type `answer_match`: mode exact | numeric (tol) | set | regex | refusal against `expected`. An answer
        passes only if it asserts the gold and no competing value: `confusers` are the values of the same
        field the site shows for other entities (`confusers_from` says where they came from: "data" or
        "page"); `locale` (e.g. "de-DE") says how the site writes numbers and dates; `unit` is the unit of
        the question ("owners"), which an answer may omit. Mode `refusal`: the task is infeasible and only
        a refusal that asserts no value passes.
    type `url_match`: `expected` is a URL or pattern; mode exact | prefix | regex | contains
        (exact compares host, path and query parameters, ignoring their order).
    type `state_match`: `path` into the source's state dict (dotted, list indexes allowed) and `expected`;
        mode exact | numeric | set | regex | contains | count (length of the list at `path`).
    """

    type: str
    expected: Any = None
    mode: str = "exact"
    path: str | None = None
    tol: float = 0.0
    confusers: list[Any] | None = None
    confusers_from: str | None = None  # "data" | "page"; None when no confusers are known
    locale: str | None = None
    unit: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {"type": self.type, "expected": self.expected}
        if self.mode != "exact":
            out["mode"] = self.mode
        if self.path is not None:
            out["path"] = self.path
        if self.tol:
            out["tol"] = self.tol
        for key in ("confusers", "confusers_from", "locale", "unit"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        return out


CHECK_TYPES = ("answer_match", "url_match", "state_match")


@dataclass
class Task:
    id: str
    start_url: str
    instruction: str
    source: TaskSource = field(default_factory=TaskSource)
    max_steps: int = 15
    checks: list[Check] = field(default_factory=list)
    rubric: list[Any] | str | None = None
    oracle: list[Action] | None = None
    # what the oracle says before each of its actions (a synth compiler names the element: 'Click "Cardio".');
    # None where no reasons were recorded
    oracle_thoughts: list[str] | None = None
    skill: str | None = None
    difficulty: str | int | None = None
    category: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id, "source": self.source.to_dict(), "start_url": self.start_url,
            "instruction": self.instruction, "max_steps": self.max_steps,
            "checks": [c.to_dict() for c in self.checks],
        }
        for key in ("rubric", "skill", "difficulty", "category"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.oracle is not None:
            out["oracle"] = [a.to_dict() for a in self.oracle]
            if self.oracle_thoughts is not None and len(self.oracle_thoughts) == len(self.oracle):
                for entry, thought in zip(out["oracle"], self.oracle_thoughts):
                    entry["thought"] = thought
        if self.metadata:
            out["metadata"] = self.metadata
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Task":
        """A Task from its JSON object; any field of the wrong type or size is a TaskError naming it."""
        if not isinstance(data, dict):
            raise TaskError(f"a task must be a JSON object, got {type(data).__name__}")
        for key, limit in (("id", MAX_ID_CHARS), ("start_url", MAX_URL_CHARS), ("instruction", MAX_INSTRUCTION_CHARS)):
            if not isinstance(data.get(key), str) or not data[key]:
                raise TaskError(f"task is missing '{key}' (a non-empty string)")
            if len(data[key]) > limit:
                raise TaskError(f"task '{key}' is {len(data[key])} characters; the limit is {limit}")
        where = f"task {data['id'][:80]}"

        def expect(key: str, types: tuple[type, ...], what: str) -> Any:
            value = data.get(key)
            if value is not None and (not isinstance(value, types) or isinstance(value, bool) and bool not in types):
                raise TaskError(f"{where}: '{key}' must be {what}, got {type(value).__name__} {str(value)[:40]!r}")
            return value

        source = expect("source", (dict, str), "an object (kind, site, recording, bundle) or a kind name") or {}
        if isinstance(source, str):
            source = {"kind": source}
        for key, value in source.items():
            if key in TaskSource.__dataclass_fields__ and not isinstance(value, str) and value is not None:
                raise TaskError(f"{where}: source '{key}' must be a string, got {type(value).__name__}")
        max_steps = data.get("max_steps")
        if max_steps is not None:
            # 15.0 (pandas, JavaScript) and numpy integers are whole numbers too; "many", 3.5 and true are not
            whole = (isinstance(max_steps, numbers.Integral) or isinstance(max_steps, float) and max_steps.is_integer())
            if isinstance(max_steps, bool) or not whole or not 1 <= max_steps <= MAX_TASK_STEPS:
                raise TaskError(f"{where}: 'max_steps' must be an integer from 1 to {MAX_TASK_STEPS}, "
                                f"got {type(max_steps).__name__} {str(max_steps)[:40]!r}")
            max_steps = int(max_steps)
        raw_checks = expect("checks", (list,), "a list of check objects") or []
        for i, raw in enumerate(raw_checks, 1):
            if not isinstance(raw, dict):
                raise TaskError(f"{where}: check {i} must be an object with 'type' and 'expected', "
                                f"got {type(raw).__name__}")
            if not isinstance(raw.get("type"), str):
                raise TaskError(f"{where}: check {i} needs 'type' ({', '.join(CHECK_TYPES)})")
            for key in ("mode", "path"):
                if raw.get(key) is not None and not isinstance(raw[key], str):
                    raise TaskError(f"{where}: check {i} '{key}' must be a string, got {type(raw[key]).__name__}")
            tol = raw.get("tol", 0.0)
            if isinstance(tol, bool) or not isinstance(tol, (int, float)) or not math.isfinite(tol) or tol < 0:
                raise TaskError(f"{where}: check {i} 'tol' must be a finite number >= 0, got {tol!r}"[:200])
        try:
            checks = [Check(**c) for c in raw_checks]
        except TypeError as exc:
            raise TaskError(f"task {data['id']}: bad check: {exc}") from None
        for check in checks:
            if check.type not in CHECK_TYPES:
                raise TaskError(f"task {data['id']}: unknown check type '{check.type}' (use {', '.join(CHECK_TYPES)})")
        expect("rubric", (list, str), "a list of criteria or a text")
        for key in ("skill", "category"):
            expect(key, (str,), "a string")
        expect("difficulty", (str, int), "a string or an integer")
        metadata = dict(expect("metadata", (dict,), "an object") or {})
        oracle = thoughts = None
        raw_oracle = expect("oracle", (list,), "a list of tool calls")
        if raw_oracle is not None:
            try:
                oracle = [make_action(a) for a in raw_oracle]
            except ActionError as exc:
                raise TaskError(f"task {data['id']}: bad oracle action: {exc}") from None
            said = [a.get("thought") for a in raw_oracle]
            thoughts = said if said and all(isinstance(t, str) for t in said) else None
        known = {"id", "start_url", "instruction", "source", "max_steps", "checks", "rubric", "oracle",
                 "skill", "difficulty", "category", "metadata"}
        metadata.update({k: v for k, v in data.items() if k not in known})
        return cls(
            id=data["id"], start_url=data["start_url"], instruction=data["instruction"],
            source=TaskSource(**{k: v for k, v in source.items() if k in TaskSource.__dataclass_fields__}),
            max_steps=15 if max_steps is None else max_steps, checks=checks, rubric=data.get("rubric"),
            oracle=oracle, oracle_thoughts=thoughts, skill=data.get("skill"), difficulty=data.get("difficulty"),
            category=data.get("category"), metadata=metadata,
        )


# what a family member may set on the task it plays: never its id or source, which the env server has
# confined to its roots before the member is resolved
MEMBER_FIELDS = ("start_url", "instruction", "max_steps", "checks", "rubric", "oracle", "metadata", "difficulty")


def episode_task(task: Task, seed: int) -> Task:
    """The task an episode with `seed` plays. A task with `metadata.instances` (a family of the same
    task on other instances of its site's data: weblica/synth/instances.py) becomes its member
    `seed % len(members)`, with that member's instruction, start URL, checks and oracle; any other task
    is itself. Resolving a resolved task changes nothing. A malformed family is a TaskError."""
    members = task.metadata.get("instances")
    if not members:
        return task
    fix = ("metadata.instances must list {\"instance\": k, ...} objects, k a whole number >= 0 "
           "(weblica synth --instances writes them)")
    if not isinstance(members, list) or not all(isinstance(m, dict) for m in members):
        raise TaskError(f"task {task.id}: {fix}")
    for index, member in enumerate(members):  # every member, so a family fails alike at every seed
        instance = member.get("instance", 0)
        if isinstance(instance, bool) or not isinstance(instance, int) or instance < 0 or \
                not isinstance(member.get("metadata", {}), dict):
            raise TaskError(f"task {task.id}: metadata.instances[{index}] is malformed; {fix}")
    index = int(seed) % len(members)
    member = members[index]
    data = task.to_dict()
    data["metadata"] = {k: v for k, v in data.get("metadata", {}).items() if k != "instances"}
    if member.get("instance", 0):
        data.update({k: v for k, v in member.items() if k in MEMBER_FIELDS})
        data["metadata"] = {**member.get("metadata", {}), "instance": member["instance"]}
        if "oracle" not in member:
            data.pop("oracle", None)
    try:
        return Task.from_dict(data)
    except TaskError as exc:
        raise TaskError(f"{exc} (in metadata.instances[{index}])") from None


# what a task file may hold (a task is a few sentences and a URL; a 20 MB instruction is a mistake or an attack)
MAX_ID_CHARS = 256
MAX_URL_CHARS = 8192
MAX_INSTRUCTION_CHARS = 20_000
MAX_TASK_STEPS = 1000


def load_tasks(path: str | Path) -> list[Task]:
    """Read tasks.jsonl; errors name the file and line."""
    path = Path(path)
    if not path.exists():
        raise TaskError(f"task file not found: {path}")
    if not path.is_file():
        raise TaskError(f"{path} is not a file: give a tasks.jsonl")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise TaskError(f"{path}:{line}: not UTF-8 text (byte {exc.start}); a task file is JSON lines") from None
    except OSError as exc:
        raise TaskError(f"cannot read {path}: {exc.strerror}") from None
    tasks = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            tasks.append(Task.from_dict(json.loads(line)))
        except json.JSONDecodeError as exc:
            raise TaskError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from None
        except RecursionError:
            raise TaskError(f"{path}:{lineno}: the JSON nests too deeply") from None
        except TaskError as exc:
            raise TaskError(f"{path}:{lineno}: {exc}") from None
        except ValueError as exc:  # numbers Python cannot hold (e.g. 5000-digit integers)
            raise TaskError(f"{path}:{lineno}: not valid JSON ({exc})") from None
    return tasks


def first_duplicate_id(tasks: Iterable[Task]) -> str | None:
    """The first task id that appears twice, or None (task files must name each task once)."""
    seen: set[str] = set()
    for task in tasks:
        if task.id in seen:
            return task.id
        seen.add(task.id)
    return None


def save_tasks(tasks: Iterable[Task], path: str | Path) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        for task in tasks:
            f.write(json.dumps(task.to_dict(), ensure_ascii=False, sort_keys=True) + "\n")


# ---- checks -----------------------------------------------------------------------------------------

def normalize_text(value: Any) -> str:
    """Case- and space-normalized text: NFKC, lower case, runs of whitespace collapsed, ends trimmed."""
    text = unicodedata.normalize("NFKC", str(value)).casefold()
    return re.sub(r"\s+", " ", text).strip().rstrip(".")


def parse_number(value: Any) -> float | None:
    """The first number in a value ('$1,234.50' -> 1234.5, 'twelve' -> 12), or None."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    numbers = find_numbers(normalize_answer(str(value)[:MAX_ANSWER_CHARS]))
    return numbers[0].value if numbers else None


def _as_set(value: Any) -> set[str]:
    if isinstance(value, (list, tuple, set)):
        items = value
    else:
        items = re.split(r"\s*(?:,|;|\n|\band\b)\s*", str(value))
    return {normalize_text(i) for i in items if normalize_text(i)}


def match_value(actual: Any, expected: Any, mode: str = "exact", tol: float = 0.0) -> bool:
    """Compare a state value under one of the check modes. Never raises on odd input: a mismatch is False
    (a regex that does not compile or runs past its time limit too; run_check reports why). Free-text
    answers go through `weblica.env.answer_check` instead."""
    try:
        return _match_value(actual, expected, mode, tol)
    except PatternError:
        return False


def _match_value(actual: Any, expected: Any, mode: str, tol: float) -> bool:
    if mode == "exact":
        if isinstance(expected, (list, tuple)):
            return any(_match_value(actual, e, "exact", 0.0) for e in expected)
        if isinstance(expected, bool) or expected is None:
            return actual == expected or normalize_text(actual) == normalize_text(expected)
        return normalize_text(actual) == normalize_text(expected)
    if mode == "numeric":
        a, e = parse_number(actual), parse_number(expected)
        return a is not None and e is not None and math.isclose(a, e, abs_tol=max(tol, 1e-9))
    if mode == "set":
        return _as_set(actual) == _as_set(expected)
    if mode == "regex":
        return safe_search(str(expected), str(actual), regex.IGNORECASE | regex.DOTALL) is not None
    if mode == "contains":
        if isinstance(actual, (list, tuple)):
            return any(_match_value(a, expected, "exact", 0.0) for a in actual)
        return normalize_text(expected) in normalize_text(actual)
    if mode == "count":
        try:
            return len(actual) == int(expected)
        except (TypeError, ValueError):
            return False
    return False


def _url_parts(url: str) -> tuple[str, str, list[tuple[str, str]]]:
    parts = urlsplit(url)
    return parts.netloc.lower(), parts.path.rstrip("/") or "/", sorted(parse_qsl(parts.query, keep_blank_values=True))


def match_url(actual: str, expected: str, mode: str = "exact") -> bool:
    if mode == "exact":
        return _url_parts(actual) == _url_parts(expected)
    if mode == "prefix":
        return actual.startswith(expected)
    if mode == "contains":
        return expected in actual
    if mode == "regex":
        return safe_search(expected, actual) is not None
    return False


_MISSING = object()


def lookup_path(state: Any, path: str) -> Any:
    """Follow a dotted path ('orders.0.total', 'cart[1].sku') into nested dicts and lists."""
    node = state
    for part in re.findall(r"[^.\[\]]+", path):
        if isinstance(node, dict):
            node = node.get(part, _MISSING)
        elif isinstance(node, list) and part.lstrip("-").isdigit() and -len(node) <= int(part) < len(node):
            node = node[int(part)]
        else:
            return _MISSING
        if node is _MISSING:
            return _MISSING
    return node


@dataclass
class CheckResult:
    check: Check
    passed: bool
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.check.type, "passed": self.passed, "detail": self.detail}


def run_check(check: Check, answer: str | None, url: str, state: dict[str, Any] | None, *,
              instruction: str = "", infeasible: bool = False) -> CheckResult:
    """One check's result. `instruction` is the task's (values it states are context, not competing
    answers); `infeasible` is the `done` tool's structured flag."""
    try:
        return _run_check(check, answer, url, state, instruction, infeasible)
    except PatternError as exc:
        return CheckResult(check, False, f"{check.type} {check.mode} {check.expected!r}: {exc}")


def _run_check(check: Check, answer: str | None, url: str, state: dict[str, Any] | None, instruction: str,
               infeasible: bool) -> CheckResult:
    if check.type == "answer_match":
        if answer is None:
            return CheckResult(check, False, "no final answer")
        outcome = check_answer(check, answer, instruction=instruction, infeasible=infeasible)
        shown = answer if len(answer) <= 200 else answer[:200] + "..."
        source = check.confusers_from or ("data" if check.confusers else "none")
        return CheckResult(check, outcome.passed, f"answer {shown!r} {outcome.reason} ({check.mode} "
                                                  f"{check.expected!r}; confusers: {source})")
    if check.type == "url_match":
        ok = match_url(url, str(check.expected), check.mode)
        return CheckResult(check, ok, f"url {url} {'matches' if ok else 'does not match'} {check.expected}")
    if check.type == "state_match":
        if state is None:
            return CheckResult(check, False, "the task's source supplies no state")
        value = lookup_path(state, check.path or "")
        if value is _MISSING:
            return CheckResult(check, False, f"state has no '{check.path}'")
        ok = _match_value(value, check.expected, check.mode, check.tol)
        return CheckResult(check, ok, f"state {check.path}={value!r} {'matches' if ok else 'does not match'} "
                                      f"{check.expected!r}")
    return CheckResult(check, False, f"unknown check type {check.type}")


def evaluate_checks(task: Task, answer: str | None, url: str, state: dict[str, Any] | None, *,
                    infeasible: bool = False) -> tuple[float, list[CheckResult]]:
    """Reward 1.0 when every check passes, else 0.0. A task with no checks scores 0 (a judge decides).
    `infeasible` is the `done` tool's flag: the agent says the task cannot be done."""
    results = [run_check(c, answer, url, state, instruction=task.instruction, infeasible=infeasible)
               for c in task.checks]
    reward = 1.0 if results and all(r.passed for r in results) else 0.0
    return reward, results
