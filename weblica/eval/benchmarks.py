"""Loaders for live web benchmarks' published task files, into our `Task`.

| benchmark | published file | fields we read |
|---|---|---|
| online-mind2web | `Online_Mind2Web.json` (JSON array) | task_id, confirmed_task (or task_description), website, reference_length, level |
| webvoyager | `WebVoyager_data.jsonl` | id ("Allrecipes--0"), web_name, ques, web |
| deepshop | `deepshop.jsonl` | id, ques, web, web_name, category, difficulty, attribute, filter, sort |
| webtailbench | `WebTailBench.tsv` (tab-separated, header row) | benchmark (its category), id, task_summary |

Every task gets `source.kind = "live"`, the benchmark's name in `metadata["benchmark"]` (which picks the
judge protocol) and whatever the judge needs (reference answers, DeepShop's components) in `metadata`.
Live tasks carry no checks: a judge model decides success.
"""
from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any, Callable
from urllib.parse import urlsplit

from weblica.env.task import Task, TaskSource, first_duplicate_id

LIVE_MAX_STEPS = 30
# WebTailBench's TSV names no start page; its tasks begin at a search engine, as in the Fara harness.
WEBTAILBENCH_START_URL = "https://www.bing.com/"
# DeepShop marks an absent component with one of these
_ABSENT = {"", "none", "null", "**", "n/a"}


class BenchmarkFormatError(ValueError):
    """A benchmark file that does not follow its published format."""


def _url(value: Any, where: str) -> str:
    url = str(value or "").strip()
    if not url:
        raise BenchmarkFormatError(f"{where}: no website URL")
    if "://" not in url:  # the files sometimes give bare hosts ("www.amazon.com")
        url = "https://" + url
    return url


def host_of(url: str) -> str:
    return (urlsplit(url).hostname or "").lower()


def _live(task_id: str, url: str, instruction: str, benchmark: str, **fields: Any) -> Task:
    metadata = {"benchmark": benchmark, **fields.pop("metadata", {})}
    return Task(id=task_id, start_url=url, instruction=instruction.strip(),
                source=TaskSource(kind="live", site=host_of(url) or None), max_steps=LIVE_MAX_STEPS,
                metadata=metadata, **fields)


def _records(path: Path) -> list[dict[str, Any]]:
    """A JSON array, or JSON lines; errors name the line."""
    text = path.read_text(encoding="utf-8")
    if text.lstrip().startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise BenchmarkFormatError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
        return [dict(r, _line=i) for i, r in enumerate(data, 1)]
    rows = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                rows.append(dict(json.loads(line), _line=lineno))
            except (json.JSONDecodeError, TypeError, ValueError):
                raise BenchmarkFormatError(f"{path}:{lineno}: not a JSON object") from None
    return rows


def _need(row: dict[str, Any], path: Path, *keys: str) -> Any:
    for key in keys:
        if row.get(key) not in (None, ""):
            return row[key]
    raise BenchmarkFormatError(f"{path}:{row.get('_line', '?')}: missing '{keys[0]}'")


def mind2web_level(reference_length: int) -> str:
    """Online-Mind2Web's difficulty from the human step count: easy 1-5, medium 6-10, hard 11+."""
    return "easy" if reference_length <= 5 else "medium" if reference_length <= 10 else "hard"


def load_online_mind2web(path: Path) -> list[Task]:
    tasks = []
    for row in _records(path):
        ref = row.get("reference_length")
        level = row.get("level") or (mind2web_level(int(ref)) if ref is not None else None)
        tasks.append(_live(str(_need(row, path, "task_id")), _url(_need(row, path, "website"), str(path)),
                           str(_need(row, path, "confirmed_task", "task_description")), "online-mind2web",
                           difficulty=level, metadata={"reference_length": ref}))
    return tasks


def load_webvoyager(path: Path) -> list[Task]:
    tasks = []
    for row in _records(path):
        task_id = str(_need(row, path, "id"))
        web_name = row.get("web_name") or task_id.split("--")[0]
        metadata = {"web_name": web_name}
        if row.get("answer") or row.get("reference_answer"):  # reference answers, when merged into the file
            metadata["reference_answer"] = row.get("answer") or row.get("reference_answer")
        tasks.append(_live(task_id, _url(_need(row, path, "web"), str(path)), str(_need(row, path, "ques")),
                           "webvoyager", category=web_name, metadata=metadata))
    return tasks


def deepshop_components(row: dict[str, Any]) -> dict[str, str]:
    """The parts of a DeepShop query its judge checks separately: product attributes, search filters,
    sort order. Only those the task states."""
    return {key: str(row[key]).strip() for key in ("attribute", "filter", "sort")
            if row.get(key) is not None and str(row[key]).strip().lower() not in _ABSENT}


def load_deepshop(path: Path) -> list[Task]:
    tasks = []
    for row in _records(path):
        components = deepshop_components(row)
        tasks.append(_live(str(_need(row, path, "id")), _url(_need(row, path, "web"), str(path)),
                           str(_need(row, path, "ques")), "deepshop", difficulty=row.get("difficulty"),
                           category=row.get("category"), rubric=[f"{k}: {v}" for k, v in components.items()],
                           metadata={"web_name": row.get("web_name"), "components": components}))
    return tasks


def load_webtailbench(path: Path) -> list[Task]:
    if path.suffix in (".json", ".jsonl"):
        rows = _records(path)
    else:
        with path.open(encoding="utf-8", newline="") as f:
            rows = [dict(r, _line=i) for i, r in enumerate(csv.DictReader(f, delimiter="\t"), 2)]
        if rows and not {"benchmark", "id", "task_summary"} <= set(rows[0]):
            raise BenchmarkFormatError(f"{path}: expected a tab-separated header 'benchmark, id, task_summary', "
                                       f"got {', '.join(k for k in rows[0] if k != '_line')}")
    tasks = []
    for row in rows:
        category = str(_need(row, path, "benchmark"))
        start = row.get("init_url") or row.get("url") or WEBTAILBENCH_START_URL
        # ids repeat across categories in the published file; the category makes them unique
        tasks.append(_live(f"{category}_{_need(row, path, 'id')}", _url(start, str(path)),
                           str(_need(row, path, "task_summary")), "webtailbench", category=category))
    return tasks


LOADERS: dict[str, Callable[[Path], list[Task]]] = {
    "online-mind2web": load_online_mind2web,
    "webvoyager": load_webvoyager,
    "deepshop": load_deepshop,
    "webtailbench": load_webtailbench,
}


def load_benchmark(name: str, path: str | Path) -> list[Task]:
    """Tasks of benchmark `name` from its published file; duplicate ids are an error."""
    if name not in LOADERS:
        raise BenchmarkFormatError(f"unknown benchmark '{name}'; use one of {', '.join(LOADERS)}")
    path = Path(path)
    if not path.is_file():
        raise BenchmarkFormatError(f"benchmark file not found: {path}")
    tasks = LOADERS[name](path)
    if not tasks:
        raise BenchmarkFormatError(f"{path} holds no {name} tasks")
    duplicate = first_duplicate_id(tasks)
    if duplicate is not None:
        raise BenchmarkFormatError(f"{path}: task id '{duplicate}' appears twice")
    return tasks
