"""The Task data model (one JSON object a line in tasks.jsonl). Its checks are weblica.scoring's: the
kinds a task may name, and how each scores an episode, live there."""
from __future__ import annotations

import json
import math
import numbers
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable
from urllib.parse import urlsplit

from weblica.env.actions import Action, ActionError, make_action
from weblica.scoring.model import Check
from weblica.scoring.registry import CHECK_TYPES, check_problem

__all__ = ["Check", "MEMBER_FIELDS", "TASK_FIELDS", "Task", "TaskError", "TaskSource", "episode_task",
           "first_duplicate_id", "load_tasks", "save_tasks"]


class TaskError(ValueError):
    """A task file or task object that does not follow the schema."""


@dataclass
class TaskSource:
    """Where a task's site comes from: `kind` is synth, cache, live or local."""

    kind: str = "local"
    site: str | None = None       # synth site id or live site name
    recording: str | None = None  # cache recording path
    bundle: str | None = None     # synth bundle directory
    dates: str | None = None      # cache: "shift" moves recorded dates to the replay's clock (weblica.cache.dates)

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}





# a task's fields in tasks.jsonl; anything else is an error when tasks load (free-form data goes in `metadata`)
TASK_FIELDS = ("id", "start_url", "instruction", "source", "max_steps", "checks", "rubric", "oracle", "skill",
               "difficulty", "category", "metadata")


@dataclass
class Task:
    """One task (one JSON object a line in tasks.jsonl; README "Task format").

    `start_url` is an http(s) URL; `checks` are weblica.scoring's (a kind no entry of its registry scores is
    an error when the task loads); `metadata` holds free-form data of the task's author or importer
    (a benchmark's own fields, notes, `instances` of a synth family): weblica reads only the keys it
    documents and keeps the rest. Any other field is an error when the task loads."""

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
        for i, check in enumerate(checks, 1):  # a kind no entry of the registry scores fails here, not in every episode
            problem = check_problem(check)
            if problem:
                raise TaskError(f"{where}: check {i}: {problem}")
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
        unknown = sorted(str(k) for k in data if k not in TASK_FIELDS)
        if unknown:
            raise TaskError(f"{where}: unknown field(s) {', '.join(repr(k[:40]) for k in unknown[:5])}; a task's "
                            f"fields are {', '.join(TASK_FIELDS)}: put free-form data under 'metadata'")
        if not _is_web_url(data["start_url"]):
            raise TaskError(f"{where}: 'start_url' must be an http(s) URL with a host, e.g. https://example.com/, "
                            f"got {data['start_url'][:80]!r}")
        return cls(
            id=data["id"], start_url=data["start_url"], instruction=data["instruction"],
            source=TaskSource(**{k: v for k, v in source.items() if k in TaskSource.__dataclass_fields__}),
            max_steps=15 if max_steps is None else max_steps, checks=checks, rubric=data.get("rubric"),
            oracle=oracle, oracle_thoughts=thoughts, skill=data.get("skill"), difficulty=data.get("difficulty"),
            category=data.get("category"), metadata=metadata,
        )


def _is_web_url(url: str) -> bool:
    """An http(s) URL with a host: the only kind of page an episode may start on (DESIGN: navigation policy)."""
    try:
        parts = urlsplit(url)
    except ValueError:   # a malformed authority ("http://[::1")
        return False
    return parts.scheme.lower() in ("http", "https") and bool(parts.hostname)


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
    """Read tasks.jsonl; errors name the file and line. A synth task whose bundle sits where the file is
    (the file inside its bundle, as `weblica synth --out X` writes X/<site>/tasks.jsonl, or beside it) is
    given that bundle, wherever the file was copied to (`anchored`)."""
    path = Path(path)
    if not path.exists():
        raise TaskError(f"task file not found: {path}")
    if not path.is_file():
        raise TaskError(f"{path} is not a file: give a tasks.jsonl")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        bad_line = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise TaskError(f"{path}:{bad_line}: not UTF-8 text (byte {exc.start}); a task file is JSON lines") from None
    except OSError as exc:
        raise TaskError(f"cannot read {path}: {exc.strerror}") from None
    tasks = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            tasks.append(anchored(Task.from_dict(json.loads(line)), path.parent))
        except json.JSONDecodeError as exc:
            raise TaskError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from None
        except RecursionError:
            raise TaskError(f"{path}:{lineno}: the JSON nests too deeply") from None
        except TaskError as exc:
            raise TaskError(f"{path}:{lineno}: {exc}") from None
        except ValueError as exc:  # numbers Python cannot hold (e.g. 5000-digit integers)
            raise TaskError(f"{path}:{lineno}: not valid JSON ({exc})") from None
    return tasks


def anchored(task: Task, folder: Path) -> Task:
    """A synth task naming its bundle by site id (or a relative path), with the bundle of that name found in
    `folder` (the tasks file's own folder, when the file sits in its bundle) or right under it, as an
    absolute path; any other task unchanged (its bundle is looked up where `weblica run` looks)."""
    ref = task.source.bundle or task.source.site
    if task.source.kind != "synth" or not ref or Path(ref).is_absolute():
        return task
    name = Path(ref).name
    for candidate in (folder, folder / ref, folder / name):
        if candidate.name == name and (candidate / "site.json").is_file():
            return replace(task, source=replace(task.source, bundle=str(candidate.resolve())))
    return task


def first_duplicate_id(tasks: Iterable[Task]) -> str | None:
    """The first task id that appears twice, or None (task files must name each task once)."""
    seen: set[str] = set()
    for task in tasks:
        if task.id in seen:
            return task.id
        seen.add(task.id)
    return None


def save_tasks(tasks: Iterable[Task], path: str | Path) -> None:
    """Write tasks.jsonl. A synth bundle that `load_tasks` anchored to the file's own folder (`anchored`) is
    written back as its folder's name, so the file keeps the same bytes wherever the bundle lies."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        for task in tasks:
            f.write(json.dumps(unanchored(task, path.parent).to_dict(), ensure_ascii=False, sort_keys=True) + "\n")


def unanchored(task: Task, folder: Path) -> Task:
    """The inverse of `anchored`: a bundle that is `folder` itself or a folder right under it, by name."""
    bundle = task.source.bundle
    if task.source.kind != "synth" or not bundle or not Path(bundle).is_absolute():
        return task
    where, here = Path(bundle).resolve(), folder.resolve()
    if where == here or where.parent == here:
        return replace(task, source=replace(task.source, bundle=where.name))
    return task
