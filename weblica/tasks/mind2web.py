"""Mind2Web task files (osunlp/Mind2Web `train/*.json`, its test splits, and Online-Mind2Web's
`Online_Mind2Web.json`) as live weblica tasks.

| Mind2Web | weblica |
|---|---|
| `annotation_id` (Online-Mind2Web: `task_id`) | `id` (`mind2web-...`) |
| `confirmed_task` (or `task_description`) | `instruction` |
| `website`: a URL or host (Online-Mind2Web) | `start_url` |
| `website`: a name (`united`, `exploretock`) | `start_url` from `--site NAME=URL`; without one the task is skipped |
| `domain`, `subdomain`, `level`, `reference_length` | `category`, `metadata` |
| `action_reprs` (the annotator's steps, element by element) | `metadata.reference_actions` |

Mind2Web records no outcome to check: a task is judged against its instruction (the WebJudge protocol
of Online-Mind2Web, `metadata.benchmark = online-mind2web`). Its recorded actions name elements of
pages captured in 2023, not pixels of today's page, so they become no oracle; the report says so. A
website name is never guessed into a URL (`united` is united.com, `aa` is aa.com, some are not): a
wrong start page would be a wrong task.
"""
from __future__ import annotations

import re
from typing import Any, Mapping

from weblica.env.task import Task, TaskError, TaskSource
from weblica.tasks.report import ImportReport

MAX_STEPS = 30


def start_url(website: str, sites: Mapping[str, str]) -> str | None:
    """The start page of a record's `website`: `sites[website]`, else the website itself when it is a URL
    or a host name; None for a bare name without a mapping."""
    website = website.strip()
    if website in sites:
        return sites[website]
    if re.match(r"^https?://", website, re.I):
        return website
    if re.fullmatch(r"[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+\.?(/\S*)?", website):
        return f"https://{website}" + ("" if "/" in website else "/")
    return None


def from_mind2web(record: dict[str, Any], index: int, sites: Mapping[str, str], report: ImportReport) -> Task | None:
    """One Mind2Web record as a live task; None (and the reason in `report`) when it has no start page."""
    instruction = record.get("confirmed_task") or record.get("task_description")
    raw_id = record.get("annotation_id") or record.get("task_id") or index
    task_id = f"mind2web-{raw_id}"
    if not isinstance(instruction, str) or not instruction.strip():
        raise TaskError(f"Mind2Web record {index}: no confirmed_task")
    website = str(record.get("website") or "")
    url = start_url(website, sites)
    if url is None:
        report.skip(task_id, f"website {website!r} names no page: give --site {website or 'NAME'}=https://...")
        return None
    metadata: dict[str, Any] = {"benchmark": "online-mind2web", "website": website}
    for key in ("subdomain", "level", "reference_length"):
        if record.get(key) not in (None, ""):
            metadata[key] = record[key]
    steps = record.get("action_reprs")
    if isinstance(steps, list) and steps:
        metadata["reference_actions"] = [str(s) for s in steps]
        report.unmapped("actions as an oracle (element-level steps on 2023 pages, no pixels): kept as "
                        "metadata.reference_actions", task_id)
    report.mapped("no outcome reference -> judged against the instruction (WebJudge)")
    host = re.sub(r"^https?://", "", url, flags=re.I).split("/")[0].lower()
    return Task(id=task_id, start_url=url, instruction=instruction.strip(), source=TaskSource("live", site=host),
                max_steps=MAX_STEPS, category=record.get("domain") or None, metadata=metadata)
