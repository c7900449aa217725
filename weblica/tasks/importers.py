"""Importers from published web-task files into weblica Tasks (`source.kind = live`).

| format | read from | fields used |
|---|---|---|
| `webgym` | WebGym task JSONL (microsoft/webgym, `areal/dataset/webgym.py`) | `task_id`, `task_name` (or `task`), `website`, `domain`, `subdomain`, `difficulty`, `evaluator_reference`, `reference_answer` |
| `insta` | InSTA task files (data-for-agents/insta-150k and its v3 release) | `domain`, `task`; optional `id`, `url`, `judgment`/`success` kept as metadata |
| `webarena` | WebArena configs (`config_files/test.raw.json`) | `task_id`, `intent`, `start_url`, `sites`, `eval` (see `weblica.tasks.webarena`) |
| `mind2web` | Mind2Web and Online-Mind2Web task files | `annotation_id`/`task_id`, `confirmed_task`, `website`, `domain`, `action_reprs` (see `weblica.tasks.mind2web`) |

`import_file` also returns an `ImportReport`: what became checks, what went to rubric criteria and what did
not map (WebArena's evaluations, Mind2Web's recorded actions).

`evaluator_reference` is a flat list of facts (strings or `{"description": ...}`) — one fact group, as
WebGym's judge treats it — or a list of groups (lists, or `{"objective"?, "facts": [...]}`). The task's
difficulty becomes the fact count (WebGym's definition); WebGym's own difficulty label is kept in metadata.
InSTA tasks carry no rubric: they are judged against their instruction.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterable

from weblica.env.task import Task, TaskError, TaskSource, first_duplicate_id
from weblica.scoring.fact_groups import difficulty, parse_fact_groups
from weblica.tasks.report import ImportReport

FORMATS = ("webgym", "insta", "webarena", "mind2web")


def read_records(path: str | Path) -> list[dict[str, Any]]:
    """Objects from a JSON array, a JSON object holding one array, or JSON lines."""
    path = Path(path)
    if not path.is_file():
        raise TaskError(f"task file not found: {path}")
    text = path.read_text(encoding="utf-8").strip()
    if text.startswith("["):
        data: Any = json.loads(text)
    elif text.startswith("{") and "\n" not in text.strip():
        data = json.loads(text)
        data = next((v for v in data.values() if isinstance(v, list)), [data])
    else:
        data = []
        for lineno, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    data.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise TaskError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from None
    records = [r for r in data if isinstance(r, dict)]
    if len(records) != len(data):
        raise TaskError(f"{path}: every task must be a JSON object")
    return records


def site_url(site: str) -> str:
    """'laminex.com.au' -> 'https://laminex.com.au/'; full URLs pass through."""
    site = site.strip()
    if not site:
        raise TaskError("a task needs a website")
    return site if re.match(r"^[a-z][a-z0-9+.-]*://", site, re.I) else f"https://{site.strip('/')}/"


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40] or "task"


def from_webgym(record: dict[str, Any], index: int) -> Task:
    instruction = record.get("task_name") or record.get("task")
    if not isinstance(instruction, str) or not instruction.strip():
        raise TaskError(f"WebGym task {index}: no task_name")
    reference = record.get("evaluator_reference") or []
    if isinstance(reference, str):  # the AReaL loader serialises it as JSON text
        try:
            reference = json.loads(reference)
        except json.JSONDecodeError:
            reference = [reference]
    groups = parse_fact_groups(reference) or []
    website = str(record.get("website") or "")
    task_id = str(record.get("task_id") if record.get("task_id") is not None else f"webgym-{index}")
    metadata = {"benchmark": "webgym", **{k: record[k] for k in ("domain", "subdomain") if record.get(k)}}
    if record.get("difficulty") not in (None, ""):
        metadata["webgym_difficulty"] = record["difficulty"]
    if record.get("reference_answer"):
        metadata["reference_answer"] = record["reference_answer"]
    return Task(id=task_id, start_url=site_url(website), instruction=instruction.strip(),
                source=TaskSource("live", site=website or None), max_steps=int(record.get("max_steps", 30)),
                rubric=[g.to_json() for g in groups] or None, difficulty=difficulty(groups) or None,
                category=record.get("domain") or None, metadata=metadata)


def from_insta(record: dict[str, Any], index: int) -> Task:
    instruction = record.get("task") or record.get("instruction")
    domain = record.get("domain") or record.get("website") or ""
    if not isinstance(instruction, str) or not instruction.strip():
        raise TaskError(f"InSTA task {index}: no task")
    metadata: dict[str, Any] = {"benchmark": "insta"}
    for key in ("judgment", "success", "split"):
        if key in record:
            metadata[key] = record[key]
    task_id = str(record.get("id") or f"insta-{_slug(str(domain))}-{index}")
    return Task(id=task_id, start_url=site_url(str(record.get("url") or domain)), instruction=instruction.strip(),
                source=TaskSource("live", site=str(domain) or None), max_steps=int(record.get("max_steps", 30)),
                metadata=metadata)


def detect_format(records: Iterable[dict[str, Any]]) -> str:
    first = next(iter(records), {})
    if "task_name" in first or "evaluator_reference" in first:
        return "webgym"
    if "intent" in first and "eval" in first:
        return "webarena"
    if "confirmed_task" in first:
        return "mind2web"
    if "domain" in first and "task" in first:
        return "insta"
    raise TaskError(f"cannot tell the task format from fields {sorted(first)[:12]}: pass --format "
                    f"{'|'.join(FORMATS)}")


def import_file(path: str | Path, fmt: str = "auto", sites: dict[str, str] | None = None
                ) -> tuple[list[Task], ImportReport]:
    """Tasks from a WebGym, InSTA, WebArena or Mind2Web file (`fmt` auto-detects from the first record's
    fields), and the report of what mapped. `sites`: NAME -> URL for the sites a file names without a URL
    (WebArena's __SHOPPING__ placeholders, Mind2Web's website names)."""
    from weblica.tasks.mind2web import from_mind2web
    from weblica.tasks.webarena import from_webarena, site_urls

    records = read_records(path)
    report = ImportReport()
    if not records:
        return [], report
    fmt = detect_format(records) if fmt == "auto" else fmt
    sites = dict(sites or {})
    if fmt == "webgym":
        tasks = [from_webgym(r, i) for i, r in enumerate(records)]
    elif fmt == "insta":
        tasks = [from_insta(r, i) for i, r in enumerate(records)]
    elif fmt == "webarena":
        urls = site_urls(sites)
        tasks = [from_webarena(r, urls, report) for r in records]
    elif fmt == "mind2web":
        tasks = [t for i, r in enumerate(records) if (t := from_mind2web(r, i, sites, report)) is not None]
    else:
        raise TaskError(f"unknown task format '{fmt}': use {', '.join(FORMATS)} or auto")
    duplicate = first_duplicate_id(tasks)
    if duplicate is not None:
        raise TaskError(f"{path}: task id '{duplicate}' appears twice")
    checked = [Task.from_dict(t.to_dict()) for t in tasks]   # what a tasks.jsonl loads: the same checks apply
    return checked, report


def import_tasks(path: str | Path, fmt: str = "auto", sites: dict[str, str] | None = None) -> list[Task]:
    """Tasks from a WebGym, InSTA, WebArena or Mind2Web file (see `import_file`)."""
    return import_file(path, fmt, sites)[0]
