"""Validating synth bundles in a real browser.

A task is valid when its start page loads without console errors, its oracle succeeds, and a no-op
run, a seeded random run and wrong answers are all rejected by its checks. With `compile_plans` the
oracle is first compiled from the task's plan (generation); otherwise the stored oracle is replayed.
"""
from __future__ import annotations

import asyncio
import copy
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from weblica.browser.launcher import context_kwargs
from weblica.env.actions import VIEWPORT_HEIGHT, VIEWPORT_WIDTH, Action
from weblica.env.task import Task, evaluate_checks, load_tasks, lookup_path
from weblica.serve.backend import SynthBackend
from weblica.serve.server import SiteServer
from weblica.synth.player import Compiler, PlanError, RequestTracker, perform, settle

_DETERMINISM = (Path(__file__).resolve().parents[1] / "browser" / "determinism.js")
RANDOM_STEPS = 8


@dataclass
class TaskOutcome:
    task_id: str
    site: str
    oracle_ok: bool = False
    negatives_rejected: bool = True
    failures: list[str] = field(default_factory=list)
    oracle: list[Action] | None = None

    @property
    def valid(self) -> bool:
        return self.oracle_ok and self.negatives_rejected and not self.failures


@dataclass
class ValidationReport:
    sites: int = 0
    tasks: int = 0
    outcomes: list[TaskOutcome] = field(default_factory=list)
    site_failures: list[str] = field(default_factory=list)

    @property
    def valid_tasks(self) -> int:
        return sum(o.valid for o in self.outcomes)

    def to_dict(self) -> dict[str, Any]:
        failures = list(self.site_failures) + [f"{o.task_id}: {f}" for o in self.outcomes for f in o.failures]
        return {"sites": self.sites, "tasks": self.tasks, "valid_tasks": self.valid_tasks,
                "oracle_success": sum(o.oracle_ok for o in self.outcomes),
                "negatives_rejected": sum(o.negatives_rejected for o in self.outcomes),
                "failures": failures}


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
    import re
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


def negatives_rejected(task: Task, answer: str | None, url: str, state: dict[str, Any] | None) -> list[str]:
    """Check that wrong answers, wrong URLs and altered states all score 0; returns what slipped through."""
    slipped = []
    negatives = task.metadata.get("negatives", {})
    for wrong in negatives.get("answers", []):
        if evaluate_checks(task, wrong, url, state)[0] > 0:
            slipped.append(f"wrong answer {wrong!r} accepted")
    for wrong_url in negatives.get("urls", []):
        if evaluate_checks(task, answer, wrong_url, state)[0] > 0:
            slipped.append(f"wrong url {wrong_url} accepted")
    for check in task.checks:
        if check.type == "state_match" and state is not None and check.path:
            altered = copy.deepcopy(state)
            current = lookup_path(altered, check.path)
            if isinstance(current, (str, int, float, bool, list, dict)) and _set_path(altered, check.path, _wrong_value(current)):
                if evaluate_checks(task, answer, url, altered)[0] > 0:
                    slipped.append(f"altered state at {check.path} accepted")
    return slipped


def random_actions(seed: str, steps: int = RANDOM_STEPS) -> list[Action]:
    """A seeded random run: clicks, scrolls, typing, keys, then a random answer."""
    rng = random.Random(seed)
    words = ["yes", "42", "hello", "cheapest", "0", "done", "unknown", "3"]
    actions = []
    for _ in range(steps):
        kind = rng.choice(["click", "click", "click", "scroll", "write", "keys"])
        if kind == "click":
            actions.append(Action("click", {"x": float(rng.randrange(VIEWPORT_WIDTH)), "y": float(rng.randrange(VIEWPORT_HEIGHT)),
                                            "button": "left", "clicks": 1}))
        elif kind == "scroll":
            actions.append(Action("scroll", {"direction": rng.choice(["down", "up"]), "amount": 0.5}))
        elif kind == "write":
            actions.append(Action("write", {"text": rng.choice(words)}))
        else:
            actions.append(Action("press_keys", {"keys": [rng.choice(["Enter", "Tab", "ArrowDown"])]}))
    actions.append(Action("done", {"answer": rng.choice(words)}))
    return actions


class Validator:
    """Runs validation episodes against a SiteServer with one browser, several episodes at a time."""

    def __init__(self, browser: Any, server: SiteServer, concurrency: int = 4) -> None:
        self.browser = browser
        self.server = server
        self.backend = SynthBackend(server)
        self.limit = asyncio.Semaphore(concurrency)
        self.determinism = _DETERMINISM.read_text(encoding="utf-8")
        self._shared: Any = None

    async def _context(self) -> Any:
        """One shared context: episodes are pages in it, each naming its episode in page-level headers.
        Sites keep per-tab state in sessionStorage only, so a fresh page is a fresh episode (and the
        context's HTTP cache makes repeated asset loads cheap)."""
        if self._shared is None:
            self._shared = await self.browser.new_context(**context_kwargs(proxy=self.server.url))
            await self._shared.add_init_script(self.determinism.replace("__WEBLICA_SEED__", "0"))
        return self._shared

    async def _episode(self, task: Task, episode_id: str, body: Any) -> Any:
        """Open a fresh page for the episode, load the start page, run `body(page, tracker, errors)`."""
        async with self.limit:
            net = await self.backend.begin(task, episode_id, 0)
            context = await self._context()
            page = await context.new_page()
            try:
                await page.set_extra_http_headers(net.extra_headers)
                errors: list[str] = []
                page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
                page.on("pageerror", lambda e: errors.append(str(e)))
                tracker = RequestTracker(page)
                await page.goto(task.start_url, wait_until="load")
                await settle(page, tracker)
                return await body(page, tracker, errors)
            finally:
                await page.close()

    async def close(self) -> None:
        if self._shared is not None:
            await self._shared.close()
            self._shared = None

    async def oracle_run(self, task: Task, compile_plan: bool) -> TaskOutcome:
        outcome = TaskOutcome(task.id, task.source.site or "")
        episode_id = f"validate-{task.id}"

        async def body(page: Any, tracker: RequestTracker, errors: list[str]) -> None:
            if errors:
                outcome.failures.append(f"console errors on load: {errors[:2]}")
                return
            answer: str | None = None
            try:
                if compile_plan or task.oracle is None:  # a bundle written without validation has plans only
                    compiler = Compiler(page, tracker)
                    outcome.oracle = await compiler.run(task.metadata.get("plan", []))
                    answer = compiler.answer
                else:
                    outcome.oracle = list(task.oracle or [])
                    for action in outcome.oracle:
                        result = await perform(page, action)
                        answer = result if action.name == "done" else answer
                        await settle(page, tracker)
            except PlanError as exc:
                outcome.failures.append(f"oracle plan failed: {exc}")
                return
            state = await self.backend.state(task, episode_id)
            reward, results = evaluate_checks(task, answer, page.url, state)
            outcome.oracle_ok = reward > 0
            if not outcome.oracle_ok:
                outcome.failures.append("oracle failed: " + "; ".join(r.detail for r in results if not r.passed))
            if errors:
                outcome.failures.append(f"console errors during the oracle run: {errors[:2]}")
            slipped = negatives_rejected(task, answer, page.url, state)
            if slipped:
                outcome.negatives_rejected = False
                outcome.failures.extend(slipped)

        try:
            await self._episode(task, episode_id, body)
        except Exception as exc:  # a browser or server error is this task's failure, not the run's
            outcome.failures.append(f"episode error: {type(exc).__name__}: {exc}")
        return outcome

    async def baseline_runs(self, tasks: list[Task]) -> dict[str, list[str]]:
        """No-op and random runs per start page; returns task id -> what wrongly succeeded."""
        slipped: dict[str, list[str]] = {t.id: [] for t in tasks}
        by_start: dict[str, list[Task]] = {}
        for task in tasks:
            by_start.setdefault(task.start_url, []).append(task)

        async def run(group: list[Task], kind: str) -> None:
            first = group[0]
            episode_id = f"validate-{kind}-{first.id}"

            async def body(page: Any, tracker: RequestTracker, errors: list[str]) -> None:
                answer = None
                if kind == "random":
                    for action in random_actions(f"{first.source.site}|{first.start_url}"):
                        try:
                            result = await perform(page, action)
                            answer = result if action.name == "done" else answer
                            await settle(page, tracker)
                        except Exception:  # a random click may close or navigate away; keep going
                            continue
                state = await self.backend.state(first, episode_id)
                for task in group:
                    candidates = [None, ""] if kind == "noop" else [answer]
                    for candidate in candidates:
                        if evaluate_checks(task, candidate, page.url, state)[0] > 0:
                            slipped[task.id].append(f"{kind} run accepted (answer {candidate!r}, url {page.url})")
            try:
                await self._episode(first, episode_id, body)
            except Exception as exc:
                for task in group:
                    slipped[task.id].append(f"{kind} run error: {type(exc).__name__}: {exc}")

        await asyncio.gather(*(run(group, kind) for group in by_start.values() for kind in ("noop", "random")))
        return slipped

    async def validate_tasks(self, tasks: list[Task], compile_plans: bool) -> list[TaskOutcome]:
        outcomes, baseline = await asyncio.gather(
            asyncio.gather(*(self.oracle_run(t, compile_plans) for t in tasks)), self.baseline_runs(tasks))
        for outcome in outcomes:
            if baseline[outcome.task_id]:
                outcome.negatives_rejected = False
                outcome.failures.extend(baseline[outcome.task_id])
        return list(outcomes)


def bundle_dirs(path: Path) -> list[Path]:
    if (path / "site.json").exists():
        return [path]
    return sorted(p for p in path.iterdir() if (p / "site.json").exists()) if path.is_dir() else []


async def validate_bundles(paths: list[Path], compile_plans: bool = False, concurrency: int = 4,
                           browser: Any = None, limit: int | None = None) -> tuple[ValidationReport, dict[Path, list[tuple[Task, TaskOutcome]]]]:
    """Validate every bundle (or its first `limit` tasks); returns the report and, per bundle, its tasks
    with their outcomes."""
    from playwright.async_api import async_playwright

    from weblica.browser.launcher import launch_browser

    report = ValidationReport(sites=len(paths))
    per_bundle: dict[Path, list[tuple[Task, TaskOutcome]]] = {}
    if not paths:
        return report, per_bundle
    async def run(browser: Any) -> None:
        with SiteServer(paths) as server:
            validator = Validator(browser, server, concurrency)

            async def one(path: Path) -> None:
                tasks = load_tasks(path / "tasks.jsonl")[:limit]
                if not tasks:
                    report.site_failures.append(f"{path.name}: no tasks")
                outcomes = await validator.validate_tasks(tasks, compile_plans)
                per_bundle[path] = list(zip(tasks, outcomes))
            try:
                await asyncio.gather(*(one(p) for p in paths))
            finally:
                await validator.close()

    if browser is not None:  # the caller's browser (an agent loop validating again and again)
        await run(browser)
    else:
        async with async_playwright() as pw:
            own = await launch_browser(pw)
            try:
                await run(own)
            finally:
                await own.close()
    for path in paths:
        for task, outcome in per_bundle.get(path, []):
            report.tasks += 1
            report.outcomes.append(outcome)
    return report, per_bundle
