"""The acceptance gate of an LLM-written site, on top of task validation.

Rendered in real Chromium (the validation browser, the site server, the determinism layer):
- every gold answer of the site's tasks appears in the rendered text of its pages (a task whose answer
  is on no page is a task the model invented an answer for);
- the start page meets realism minimums, measured as the bench measures them (weblica.synth.page_metrics):
  element count, `a[href]` links, and screens of content (`scrollHeight / innerHeight`). Thresholds
  come from the generator's config (`synth/prompts/llm_generator.yaml`, section `gate`).
"""
from __future__ import annotations

import re
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator

from weblica.env.task import Task
from weblica.scoring.registry import kind_of
from weblica.scoring.state import normalize_text
from weblica.synth.page_metrics import PageSize, measure

MAX_GATE_PAGES = 60  # pages rendered for the gold-answer search (a navigation each); the rest are counted


@dataclass
class GateThresholds:
    min_elements: int = 500
    min_links: int = 40
    min_screens: float = 2.5
    gold_in_text: bool = True

    @classmethod
    def from_dict(cls, raw: dict[str, Any] | None) -> "GateThresholds":
        raw = dict(raw or {})
        unknown = set(raw) - set(cls.__dataclass_fields__)
        if unknown:
            raise ValueError(f"unknown gate setting(s) {', '.join(sorted(unknown))}; known: "
                             f"{', '.join(cls.__dataclass_fields__)}")
        return cls(**raw)


@dataclass
class GateReport:
    start_page: PageSize | None = None
    failures: list[str] = field(default_factory=list)
    pages: int = 0
    skipped: int = 0  # pages past MAX_GATE_PAGES

    @property
    def ok(self) -> bool:
        return not self.failures

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "start_page": self.start_page.to_dict() if self.start_page else None,
                "pages_rendered": self.pages,
                "pages_skipped": self.skipped, "failures": self.failures}


def page_paths(root: Path) -> list[str]:
    """URL paths of the bundle's HTML pages as the site server maps them (public/a/b.html is /a/b)."""
    public = root / "public"
    paths = []
    for file in sorted(public.rglob("*.html")) if public.is_dir() else []:
        rel = file.relative_to(public).as_posix()
        paths.append("/" if rel == "index.html" else "/" + rel[: -len(".html")])
    return paths


def unseen_golds(task: Task, text: str, numbers: list[float]) -> list[Any]:
    """The golds of the task's answer checks that the normalized page `text` (and its `numbers`) does not
    show, for the kinds with one value to look for (weblica.scoring.registry: `gold_on_page`; the
    oracle's `done` text is a phrasing of the gold, not the gold, so it is not searched)."""
    missing = []
    for check in task.checks:
        kind = kind_of(check)
        if kind is None or kind.gold_on_page is None or check.expected in (None, ""):
            continue
        if not kind.gold_on_page(check, text, numbers):
            missing.append(check.expected)
    return missing


_NUMBERS = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?")


@asynccontextmanager
async def site_page(root: Path, browser: Any) -> AsyncIterator[Any]:
    """A page of a fresh context on one bundle's site server, with the determinism layer, as validation
    loads pages."""
    from weblica.browser.launcher import context_kwargs
    from weblica.serve.server import SiteServer
    from weblica.browser.determinism import determinism_script

    with SiteServer([root]) as server:
        context = await browser.new_context(**context_kwargs(proxy=server.url))
        try:
            await context.add_init_script(determinism_script(0))
            yield await context.new_page()
        finally:
            await context.close()


async def run_gate(root: Path, base_url: str, tasks: list[Task], browser: Any,
                   thresholds: GateThresholds) -> GateReport:
    """Render the start page and, for the gold-answer search, every page of the bundle and every task's
    start URL; report what fails (empty when the site is accepted)."""
    report = GateReport()
    urls = [base_url + "/"]
    if thresholds.gold_in_text:  # task start pages first: where answers most likely are
        urls += [t.start_url for t in tasks if t.start_url.startswith(base_url)]
        urls += [base_url + p for p in page_paths(root) if p != "/"]
    urls = list(dict.fromkeys(urls))
    report.skipped = max(len(urls) - MAX_GATE_PAGES, 0)
    urls = urls[:MAX_GATE_PAGES]
    texts: list[str] = []
    async with site_page(root, browser) as page:
        for index, url in enumerate(urls):
            try:
                response = await page.goto(url, wait_until="load")
                shown = await measure(page, text=True)
            except Exception as exc:  # a page that does not load is the site's failure
                report.failures.append(f"{url} did not load: {type(exc).__name__}: {str(exc)[:200]}")
                continue
            report.pages += 1
            if response is not None and response.status >= 400 and index > 0:
                continue  # a task start URL that 404s: validation reports it; its text is no page
            texts.append(shown.text or "")
            if index == 0:
                report.start_page = PageSize(shown.elements, shown.links, shown.screens)
    size = report.start_page
    if size is not None:
        for have, need, what in ((size.elements, thresholds.min_elements, "elements"),
                                 (size.links, thresholds.min_links, "links (a[href])"),
                                 (size.screens, thresholds.min_screens, "screens of content")):
            if have < need:
                report.failures.append(f"the start page has {have:g} {what}; at least {need:g} needed")
    if thresholds.gold_in_text:
        text = normalize_text("\n".join(texts))
        numbers = [float(n.replace(",", "")) for n in _NUMBERS.findall(text)]
        for task in tasks:
            missing = unseen_golds(task, text, numbers)
            if missing:
                shown = missing[0][0] if isinstance(missing[0], tuple) else missing[0]
                unseen = (f" (of {report.pages + report.skipped} pages, {report.skipped} not rendered)"
                          if report.skipped else "")
                report.failures.append(f"{task.id}: gold answer {str(shown)[:80]!r} appears on no rendered "
                                       f"page{unseen}")
    return report
