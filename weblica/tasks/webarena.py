"""WebArena task configs (web-arena-x/webarena `config_files/test.raw.json`) as weblica tasks.

A config names its site by placeholder (`"start_url": "__SHOPPING_ADMIN__"`) and says how it is evaluated
(`eval.eval_types`, read by WebArena's `evaluation_harness/evaluators.py`):

| WebArena | weblica |
|---|---|
| `string_match`, `reference_answers.exact_match` | `answer_match` exact |
| `string_match`, `must_include` with one phrase | `answer_match` exact (the phrase, said plainly) |
| `string_match`, `must_include` with several | `answer_match` set (every phrase, no other value) |
| `string_match`, `fuzzy_match: "N/A"` (an infeasible task) | `answer_match` refusal |
| `string_match`, `fuzzy_match` phrases (an LLM judged them) | rubric criteria |
| `url_match` (`reference_url`, alternatives joined by ` \\|OR\\| `, "GOLD in PRED") | `url_match` contains, or regex where query parameters or alternatives must match |
| `program_html` (JavaScript run on a page after the episode) | rubric criteria |

weblica's answer checks are stricter than WebArena's string match (an answer must state the gold and
no competing value). A task whose evaluation does not map wholly to checks gets all of its criteria as
rubric (judged by an LLM), never a part of them as checks: a check that passes while an unmapped
criterion fails would be a wrong reward. Log-in state (`storage_state`), geolocation and extra start tabs
are not imported; the report lists what was not, per task.
"""
from __future__ import annotations

import os
import re
from typing import Any, Mapping
from urllib.parse import parse_qs, quote, quote_plus, urlsplit

from weblica.env.task import Task, TaskError, TaskSource
from weblica.scoring.model import Check
from weblica.tasks.report import ImportReport

# WebArena's sites, as its configs name them; the URL of each comes from --site NAME=URL or the environment
# (WA_NAME, as BrowserGym's port reads them, else NAME, as WebArena's own scripts do)
SITES = ("SHOPPING", "SHOPPING_ADMIN", "REDDIT", "GITLAB", "WIKIPEDIA", "MAP", "HOMEPAGE")
_PLACEHOLDER = re.compile(r"__([A-Z_]+?)__")
MAX_STEPS = 30


def site_urls(given: Mapping[str, str], environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The URL of every WebArena site that has one: `given` (NAME -> URL) first, then $WA_NAME, then $NAME."""
    environ = os.environ if environ is None else environ
    urls = {}
    for name in SITES:
        url = given.get(name) or environ.get(f"WA_{name}") or environ.get(name)
        if url:
            urls[name] = url.rstrip("/")
    return {**urls, **{k.upper(): v.rstrip("/") for k, v in given.items()}}


def resolve(text: str, urls: Mapping[str, str]) -> str:
    """`text` with each `__SITE__` replaced by its URL; TaskError naming the sites without one."""
    missing = sorted({m for m in _PLACEHOLDER.findall(text) if m not in urls})
    if missing:
        raise TaskError(f"no URL for WebArena site(s) {', '.join(missing)}: give --site "
                        f"{missing[0]}=http://HOST:PORT (or set $WA_{missing[0]})")
    return _PLACEHOLDER.sub(lambda m: urls[m.group(1)], text)


def _url_pattern(references: list[str]) -> tuple[str, str]:
    """(mode, expected) of a url_match that passes where WebArena's "GOLD in PRED" does: some reference's
    host and path inside the page's host and path, and each of its query parameters with one of the
    values the references give it."""
    bases: list[str] = []
    queries: dict[str, set[str]] = {}
    for ref in references:
        parts = urlsplit(ref)
        bases.append((parts.netloc + parts.path).rstrip("/"))
        for key, values in parse_qs(parts.query).items():
            queries.setdefault(key, set()).update(values)
    if len(bases) == 1 and not queries:
        return "contains", bases[0]
    base = "|".join(re.escape(b) for b in bases)
    pattern = rf"^[A-Za-z][A-Za-z0-9+.-]*://(?=[^?#]*(?:{base}))"
    for key, accepted in sorted(queries.items()):
        forms = sorted({re.escape(f) for v in accepted for f in (v, quote_plus(v), quote(v, safe=""))})
        names = "|".join(sorted({re.escape(key), re.escape(quote_plus(key))}))
        pattern += rf"(?=.*[?&](?:{names})=(?:{'|'.join(forms)})(?:[&#]|$))"
    return "regex", pattern


def _answer_checks(reference: dict[str, Any], note: str, report: ImportReport, task_id: str
                   ) -> tuple[list[tuple[Check, str]], list[str]]:
    """The checks (each with what it maps) and rubric criteria of a string_match's reference answers."""
    checks: list[tuple[Check, str]] = []
    criteria = []
    for approach, value in reference.items():
        if approach == "exact_match":
            checks.append((Check("answer_match", str(value)), "string_match exact_match -> answer_match exact"))
        elif approach == "must_include" and isinstance(value, list) and value:
            if len(value) == 1:
                checks.append((Check("answer_match", str(value[0])),
                               "string_match must_include (one phrase) -> answer_match exact"))
            else:
                checks.append((Check("answer_match", [str(v) for v in value], "set"),
                               "string_match must_include -> answer_match set"))
        elif approach == "fuzzy_match" and value == "N/A":
            checks.append((Check("answer_match", note or "N/A", "refusal"),
                           "string_match fuzzy_match N/A -> answer_match refusal"))
        elif approach == "fuzzy_match" and isinstance(value, list):
            criteria += [f"The final answer says: {v}" for v in value]
            report.to_rubric("string_match fuzzy_match (an LLM judged it)", task_id)
        else:
            report.unmapped(f"string_match {approach} (unknown)", task_id)
            criteria.append(f"The final answer meets WebArena's {approach} reference {value!r}")
    return checks, criteria


def _html_criteria(targets: list[dict[str, Any]], urls: Mapping[str, str], report: ImportReport,
                   task_id: str) -> list[str]:
    criteria = []
    for target in targets:
        where = "the last page" if target.get("url") == "last" else target.get("url", "")
        if where != "the last page":
            try:
                where = resolve(where, urls)
            except TaskError:
                pass   # a func: target or a site without a URL: kept as written, for the judge to read
        contents = target.get("required_contents", {})
        for phrase in contents.get("must_include", []):
            shown = " or ".join(repr(p) for p in str(phrase).split(" |OR| "))
            criteria.append(f"After the task, {where} shows {shown}")
        if "exact_match" in contents:
            criteria.append(f"After the task, {where} shows exactly {contents['exact_match']!r}")
        report.to_rubric("program_html (JavaScript run on a page after the episode)", task_id)
    return criteria


def from_webarena(record: dict[str, Any], urls: Mapping[str, str], report: ImportReport) -> Task:
    """One WebArena config as a live task (its sites at `urls`); what does not map goes in `report`."""
    task_id = f"webarena-{record.get('task_id')}"
    instruction = record.get("intent")
    if not isinstance(instruction, str) or not instruction.strip():
        raise TaskError(f"WebArena task {record.get('task_id')}: no intent")
    starts = [s.strip() for s in str(record.get("start_url") or "").split(" |AND| ") if s.strip()]
    if not starts:
        raise TaskError(f"WebArena task {record.get('task_id')}: no start_url")
    start_url = resolve(starts[0], urls)
    if len(starts) > 1:
        report.unmapped("extra start tabs (start_url |AND|): only the first opens", task_id)
    if record.get("storage_state") or record.get("require_login"):
        report.unmapped("log-in state (storage_state): the agent starts logged out", task_id)
    if record.get("geolocation"):
        report.unmapped("geolocation", task_id)
    spec = record.get("eval") or {}
    checks: list[tuple[Check, str]] = []
    criteria: list[str] = []
    for eval_type in spec.get("eval_types") or []:
        if eval_type == "string_match":
            found, more = _answer_checks(spec.get("reference_answers") or {}, spec.get("string_note", ""), report,
                                         task_id)
            checks += found
            criteria += more
        elif eval_type == "url_match":
            refs = [resolve(r.strip(), urls) for r in str(spec.get("reference_url") or "").split(" |OR| ") if r.strip()]
            if spec.get("url_note", "GOLD in PRED") != "GOLD in PRED" or not refs:
                report.unmapped(f"url_match rule {spec.get('url_note')!r}", task_id)
                criteria.append(f"The final page is {' or '.join(refs)}")
                continue
            mode, expected = _url_pattern(refs)
            checks.append((Check("url_match", expected, mode), f"url_match -> url_match {mode}"))
        elif eval_type == "program_html":
            criteria += _html_criteria(spec.get("program_html") or [], urls, report, task_id)
        else:
            report.unmapped(f"eval type {eval_type!r} (unknown)", task_id)
            criteria.append(f"WebArena's {eval_type} evaluation passes")
    if not checks and not criteria:
        raise TaskError(f"WebArena task {record.get('task_id')}: no evaluation (eval.eval_types is empty)")
    rubric: list[str] | None = None
    if criteria:   # a part that is no check: the judge decides on every criterion, checks' included
        rubric = [_as_criterion(c) for c, _ in checks] + criteria
        for _, what in checks:
            report.to_rubric(f"{what.split(' -> ')[0]} (beside a criterion that is no check)", task_id)
        checks = []
    for _, what in checks:
        report.mapped(what)
    sites = record.get("sites") or []
    metadata: dict[str, Any] = {"benchmark": "webarena", "sites": sites, "webarena_eval": spec,
                **{k: record[k] for k in ("intent_template_id", "require_reset") if k in record}}
    return Task(id=task_id, start_url=start_url, instruction=instruction.strip(),
                source=TaskSource("live", site=sites[0] if sites else None), max_steps=MAX_STEPS,
                checks=[c for c, _ in checks], rubric=rubric, metadata=metadata)


def _as_criterion(check: Check) -> str:
    """A check restated for a judge, when the task's criteria go to the rubric together."""
    if check.type == "url_match":
        return f"The final page's URL matches {check.expected!r} ({check.mode})"
    if check.mode == "refusal":
        return "The final answer says the task cannot be done, and states no value"
    if check.mode == "set":
        return "The final answer names each of: " + "; ".join(map(str, check.expected))
    return f"The final answer is {check.expected!r}"
