"""Validating synth bundles in a real browser.

A task is valid when its start page loads without console errors, its oracle succeeds, and its
checks reject a no-op run, a seeded random run, the "do everything" runs of a state task (played in
the browser against the site server) and every negative of weblica.scoring.negatives (wrong and
adversarial answers, URLs, states). Each negative is counted by kind; a task whose checks accept one
is dropped, listed with it. With `compile_plans` the oracle is first compiled from the task's plan
(generation); otherwise the stored oracle is replayed. Episodes run on the env's virtual clock (see
Validator._context), so each decides as an env episode with the same actions would, at any speed.
"""
from __future__ import annotations

import asyncio
import copy
import functools
import random
import re
from collections import Counter
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from weblica.env.actions import VIEWPORT_HEIGHT, VIEWPORT_WIDTH, Action
from weblica.env.popups import without_dismissals
from weblica.env.task import Task, load_tasks
from weblica.scoring.checks import evaluate_checks
from weblica.progress import OptionalBar
from weblica.serve.server import SiteServer
from weblica.scoring.negatives import OracleRun, describe
from weblica.scoring.registry import all_negatives
from weblica.synth.maximal import NAMED_FIELD_PLAYED, maximal_plans
from weblica.synth.playback import STEP_VIRTUAL_MS, RequestTracker, performed, play, settle
from weblica.synth.player import Compiler, PlanError
from weblica.synth.quick_typing import QuickTyping
from weblica.synth.bundles import bundle_dirs  # noqa: F401  (callers import it from here too)
from weblica.synth.validation_report import TaskOutcome, ValidationReport
from weblica.synth.validation_tabs import InProcessBackend, SlotPool, origin_of

__all__ = ["TaskOutcome", "ValidationReport", "Validator", "bundle_dirs", "negatives_rejected", "random_actions",
           "validate_bundles"]

RANDOM_STEPS = 8


def negatives_rejected(task: Task, answer: str | None, url: str, state: dict[str, Any] | None,
                       page_text: str | None = None, initial: Any = None,
                       another_answer: str | None = None) -> tuple[Counter[str], list[tuple[str, str]]]:
    """Ask the task's checks about every negative (weblica.scoring.negatives) built from the oracle's
    answer, URL, end state (beside the site's initial state) and final page text; returns the negatives
    tried by kind and those accepted as (kind, what it was)."""
    tried: Counter[str] = Counter()
    accepted: list[tuple[str, str]] = []
    for negative in all_negatives(task, OracleRun(answer, page_text, state, initial, another_answer)):
        tried[negative.kind] += 1
        if evaluate_checks(task, *negative.resolve(answer, url, state))[0] > 0:
            accepted.append((negative.kind, describe(negative)))
    return tried, accepted


async def _visible_text(tracker: RequestTracker) -> str | None:
    """All visible text of the page (what a page-dump answer copies); None while it is navigating."""
    try:
        return await tracker.ask("() => document.body ? document.body.innerText : ''", None)
    except Exception:
        return None


def _read_by_checks(task: Task, state: Any) -> dict[str, Any]:
    """The parts of a state the task's state checks read (their paths' first keys)."""
    keys = {re.split(r"[.\[]", c.path, maxsplit=1)[0] for c in task.checks if c.type == "state_match" and c.path}
    return {k: state.get(k) for k in sorted(keys)} if isinstance(state, dict) else {}


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

    def __init__(self, browser: Any, server: SiteServer, concurrency: int = 4, episode_seed: int = 0,
                 slots: int | None = None, pool: SlotPool | None = None) -> None:
        self.browser = browser
        self.episode_seed = episode_seed  # distractors, header and Math.random of every episode (validate_seeds.py)
        self.server = server
        self.backend = InProcessBackend(server)
        self.limit = asyncio.Semaphore(concurrency)  # episodes at once (validate_seeds shares one over validators)
        # the contexts episodes run in (one per concurrent episode by default), or a pool shared with the
        # validators of other episode seeds (validate_seeds), which `close` leaves to its owner
        self._owns_pool = pool is None
        self.pool = pool if pool is not None else SlotPool(browser, server.url, slots if slots is not None else concurrency)
        self.documents: dict[str, Counter[str]] = {}  # site -> URL -> loads: the page loads, and which documents
        self._continued: dict[tuple[str, int], Any] = {}  # (task id, maximal plan) -> played on from the oracle
        self.on_task: Any = None  # called after each task's oracle run (a progress bar)
        self.texts_typed: Counter[str] = Counter()  # the compiled runs' texts, typed at once or key by key
        # where a list is given, every episode played, for measurement (bench/synth_replay.py): its task's
        # site, start URL and instance, the episode seed, its kind (`_episode`), the actions performed and
        # the documents it loaded, as plain dicts
        self.episodes_played: list[dict[str, Any]] | None = None
        self._answers: dict[str, list[str]] = {}  # site -> the answers its tasks' plans give

    @property
    def page_loads(self) -> Counter[str]:
        """Documents loaded per site: the browser work."""
        return Counter({site: sum(urls.values()) for site, urls in self.documents.items()})

    @property
    def pages_opened(self) -> int:
        """New pages its pool opened (a slot's first, or after an episode that left the site or failed)."""
        return self.pool.pages_opened

    def _typist(self, page: Any) -> QuickTyping:
        """The episode page's quick typing (its tab's, with the CDP session it keeps)."""
        tab = self.pool.tabs.get(page)
        return tab.typist if tab is not None else QuickTyping(page)

    async def _episode(self, task: Task, episode_id: str, body: Any, kind: str = "oracle") -> Any:
        """Load the start page in a free slot's page (weblica.synth.validation_tabs.SlotPool: cleared of what an
        earlier episode left) and run `body(page, tracker, errors)`. The slot is taken before the limit: an
        episode waiting for one of its validator's slots holds none of a shared limit's places. `kind`
        (oracle, random, maximal) only labels the episode where episodes are kept for measurement."""
        slot = await self.pool.wait_free()
        try:
            async with self.limit:
                net = await self.backend.begin(task, episode_id, self.episode_seed)
                tab = await self.pool.prepare(slot, self.episode_seed)
                origin = origin_of(task.start_url)
                ok = False
                token = None
                record: dict[str, Any] | None = None  # this episode's entry in `episodes_played`, if kept
                try:
                    await tab.page.set_extra_http_headers(net.extra_headers)
                    tab.tracker.counted_by = functools.partial(self.server.inflight, episode_id)
                    tab.errors, tab.origins, tab.documents = [], set(), []
                    tab.keep_popups = kind != "random"  # an oracle may act in a tab the site opens
                    if self.episodes_played is not None:
                        played: list[Action] = []
                        token = performed.set(played)
                        record = {"site": task.source.site, "start_url": task.start_url, "seed": self.episode_seed,
                                  "instance": self.backend.instance(task), "kind": kind, "actions": played}
                        self.episodes_played.append(record)
                    await tab.page.goto(task.start_url, wait_until="load")
                    await settle(tab.page, tab.tracker, advance_ms=STEP_VIRTUAL_MS)  # as the env's reset settles
                    result = await body(tab.page, tab.tracker, tab.errors)
                    ok = True
                    return result
                finally:
                    if token is not None:
                        performed.reset(token)
                    if record is not None:
                        record["loads"] = len(tab.documents)
                    self.documents.setdefault(task.source.site or "", Counter()).update(tab.documents)
                    await self.pool.release(slot, tab, origin, ok)
        finally:
            self.pool.free(slot)

    async def close(self) -> None:
        if self._owns_pool:
            await self.pool.close()

    async def oracle_run(self, task: Task, compile_plan: bool, noop_group: list[Task] | None = None,
                         slipped: dict[str, list[tuple[str, str]]] | None = None) -> TaskOutcome:
        """Compile (or replay) the task's oracle in a fresh episode and check its end state. With
        `noop_group` (the tasks sharing this start page) the episode is also their no-op run: its
        state right after the start page settled, before any action, is exactly where a no-op run
        ends, so the group's checks are asked about it into `slipped` (one page load fewer)."""
        outcome = TaskOutcome(task.id, task.source.site or "")
        episode_id = f"validate-{task.id}"

        async def body(page: Any, tracker: RequestTracker, errors: list[str]) -> None:
            if noop_group and slipped is not None:
                self._baseline_checks("noop", noop_group, (None, ""), page.url,
                                     await self.backend.state(task, episode_id), slipped)
            if errors:
                outcome.failures.append(f"console errors on load: {errors[:2]}")
                return
            answer: str | None = None
            try:
                if compile_plan or task.oracle is None:  # a bundle written without validation has plans only
                    # a text goes in at once only where nothing on the page could tell (quick_typing): the
                    # recorded `write` is the same, and the env types it key by key to the same end
                    compiler = Compiler(page, tracker, typist=self._typist(page))
                    try:
                        outcome.oracle = await compiler.run(task.metadata.get("plan", []))
                    finally:
                        await self._typed(compiler.typist)
                    outcome.oracle_thoughts = list(compiler.thoughts)
                    answer = compiler.answer
                else:
                    outcome.oracle = list(task.oracle or [])
                    outcome.oracle_thoughts = task.oracle_thoughts
                    answer = await play(page, tracker, outcome.oracle, follow_tabs=True)
            except PlanError as exc:
                outcome.failures.append(f"oracle plan failed: {exc}")
                return
            state = await self.backend.state(task, episode_id)
            outcome.end_state = copy.deepcopy(state)
            reward, results = evaluate_checks(task, answer, page.url, state)
            outcome.oracle_ok = reward > 0
            if not outcome.oracle_ok:
                outcome.failures.append("oracle failed: " + "; ".join(r.detail for r in results if not r.passed))
            if errors:
                outcome.failures.append(f"console errors during the oracle run: {errors[:2]}")
            # only answer negatives read the page's text (innerText lays out the whole page)
            page_text = await _visible_text(tracker) if any(c.type == "answer_match" for c in task.checks) else None
            tried, accepted = negatives_rejected(task, answer, page.url, state, page_text,
                                                 self.backend.initial_state(task), self._another_answer(task, answer))
            outcome.negatives_tried.update(tried)
            for kind, what in accepted:
                outcome.accepted(kind, what)
            if compile_plan and outcome.valid:
                await self._continue_maximal(task, outcome, page, tracker, episode_id)

        try:
            await self._episode(task, episode_id, body)
        except Exception as exc:  # a browser or server error is this task's failure, not the run's
            outcome.failures.append(f"episode error: {type(exc).__name__}: {exc}")
            if noop_group and slipped is not None:
                for other in noop_group:
                    slipped[other.id].append(("noop", f"noop run error: {type(exc).__name__}: {exc}"))
        if self.on_task is not None:
            self.on_task(outcome)
        return outcome

    @staticmethod
    def _baseline_checks(kind: str, group: list[Task], answers: tuple[str | None, ...], url: str,
                         state: dict[str, Any] | None, slipped: dict[str, list[tuple[str, str]]]) -> None:
        """Ask each task of the group whether a baseline run's end state (with any of `answers`)
        passes its checks; what passes goes to `slipped` as (kind, what)."""
        for task in group:
            for answer in answers:
                if evaluate_checks(task, answer, url, state)[0] > 0:
                    slipped[task.id].append((kind, f"{kind} run (answer {answer!r}, url {url})"))
                    break

    async def random_run(self, group: list[Task], slipped: dict[str, list[tuple[str, str]]]) -> None:
        """A seeded random run from the group's start page; what its end state satisfies goes to `slipped`."""
        first = group[0]
        episode_id = f"validate-random-{first.id}"

        async def body(page: Any, tracker: RequestTracker, errors: list[str]) -> None:
            answer = await play(page, tracker, random_actions(f"{first.source.site}|{first.start_url}"), keep_going=True)
            state = await self.backend.state(first, episode_id)
            self._baseline_checks("random", group, (answer,), page.url, state, slipped)
        try:
            await self._episode(first, episode_id, body, kind="random")
        except Exception as exc:
            for task in group:
                slipped[task.id].append(("random", f"random run error: {type(exc).__name__}: {exc}"))

    async def _continue_maximal(self, task: Task, outcome: TaskOutcome, page: Any, tracker: RequestTracker,
                                episode_id: str) -> None:
        """Play the first maximal plan that starts with the oracle's plan (the task done twice always
        does) on from the oracle's end, in its episode: a fresh episode would replay that prefix to the
        same page and server state. Its result waits in `self._continued` for maximal_run; a run that
        breaks here (not a PlanError) is left to a fresh episode."""
        plan = task.metadata.get("plan", [])
        done_last = bool(plan) and plan[-1].get("op") == "done"
        prefix = plan[:-1] if done_last else plan
        if not prefix or any(s.get("op") == "done" for s in prefix) or not outcome.oracle:
            return
        for index, (_, steps) in enumerate(maximal_plans(task)):
            if steps[:len(prefix)] != prefix:
                continue
            played = outcome.oracle[:-1] if done_last and outcome.oracle[-1].name == "done" else outcome.oracle
            compiler = Compiler(page, tracker, actions=list(played), thoughts=(outcome.oracle_thoughts or [""] * len(played))[:len(played)],
                                typist=self._typist(page))
            try:
                await compiler.run(steps[len(prefix):])
                result: Any = (await self.backend.state(task, episode_id), page.url,
                               without_dismissals(compiler.actions, compiler.thoughts))
            except PlanError:
                result = None
            except Exception:  # the page navigated away mid-plan: a fresh episode decides
                return
            finally:
                await self._typed(compiler.typist)
            self._continued[(task.id, index)] = result
            return

    async def _typed(self, typist: QuickTyping | None) -> None:
        """Count how a run's texts were typed (at once or key by key); the typist stays with its page."""
        if typist is not None:
            at_once, key_by_key = typist.take_counts()
            self.texts_typed.update({"at_once": at_once, "key_by_key": key_by_key})

    async def maximal_run(self, task: Task, outcome: TaskOutcome) -> None:
        """The "do everything" runs of a state task (weblica.synth.maximal.maximal_plans), each in a
        fresh episode against the real site server; an end state other than the oracle's that the
        checks accept drops the task. A run that leaves what the checks read as the oracle left it
        (an idempotent save done twice, a second login that only adds to the site's log) is no
        negative, and one the page does not allow (a deleted row clicked again) is skipped."""
        for index, (label, plan) in enumerate(maximal_plans(task)):
            episode_id = f"validate-max{index}-{task.id}"

            async def body(page: Any, tracker: RequestTracker, errors: list[str]) -> tuple[Any, str, list[Action]] | None:
                compiler = Compiler(page, tracker, typist=self._typist(page))
                try:
                    await compiler.run(plan)
                except PlanError:
                    return None
                finally:
                    await self._typed(compiler.typist)
                return await self.backend.state(task, episode_id), page.url, without_dismissals(compiler.actions, compiler.thoughts)
            try:
                if (task.id, index) in self._continued:
                    result = self._continued.pop((task.id, index))
                else:
                    result = await self._episode(task, episode_id, body, kind="maximal")
            except Exception:  # the page navigated away mid-plan: not a run the site allows
                continue
            kind = "named_field" if label.startswith(NAMED_FIELD_PLAYED) else "maximal"
            if kind == "named_field" and result is None:  # the wrong value stopped the plan: the site refused it
                outcome.negatives_tried[kind] += 1
                continue
            if result is None or _read_by_checks(task, result[0]) == _read_by_checks(task, outcome.end_state):
                if kind == "named_field":  # a wrong password that changed nothing the checks read
                    outcome.negatives_tried[kind] += 1
                    outcome.accepted(kind, label + ": the checked state came out as the oracle's")
                continue
            state, url, actions = result
            outcome.negatives_tried[kind] += 1
            if evaluate_checks(task, None, url, state)[0] > 0:
                outcome.accepted(kind, label)
            elif outcome.maximal is None and kind == "maximal":
                outcome.maximal = actions

    def _another_answer(self, task: Task, answer: str | None) -> str | None:
        """The answer of another task of the same site, other than this one's (a "gold or another task's
        answer" negative)."""
        for other in self._answers.get(task.source.site or "", []):
            if answer is None or other.strip().lower() != str(answer).strip().lower():
                return other
        return None

    async def validate_tasks(self, tasks: list[Task], compile_plans: bool) -> list[TaskOutcome]:
        """Every task's oracle run, and per start page a no-op run (inside its first task's oracle
        episode) and a seeded random run, then each state task's maximal runs; what a baseline run
        wrongly satisfies invalidates the task."""
        for task in tasks:  # the answers the plans give, per site, for the "another task's answer" negatives
            done = [s for s in task.metadata.get("plan", []) if s.get("op") == "done" and s.get("answer")]
            if done:
                self._answers.setdefault(task.source.site or "", []).append(str(done[-1]["answer"]))
        slipped: dict[str, list[tuple[str, str]]] = {t.id: [] for t in tasks}
        by_start: dict[str, list[Task]] = {}
        for task in tasks:
            by_start.setdefault(task.start_url, []).append(task)
        noop_groups = {group[0].id: group for group in by_start.values()}
        outcomes, _ = await asyncio.gather(
            asyncio.gather(*(self.oracle_run(t, compile_plans, noop_groups.get(t.id), slipped) for t in tasks)),
            asyncio.gather(*(self.random_run(group, slipped) for group in by_start.values())))
        await asyncio.gather(*(self.maximal_run(t, o) for t, o in zip(tasks, outcomes) if o.valid))
        for outcome in outcomes:
            outcome.negatives_tried.update({"noop": 1, "random": 1})
            for kind, what in slipped[outcome.task_id]:
                outcome.accepted(kind, what)
        return list(outcomes)


async def validate_bundles(paths: list[Path], compile_plans: bool = False, concurrency: int = 4,
                           browser: Any = None, limit: int | None = None, progress: bool = False,
                           server: SiteServer | None = None, pool: SlotPool | None = None,
                           ) -> tuple[ValidationReport, dict[Path, list[tuple[Task, TaskOutcome]]]]:
    """Validate every bundle (or its first `limit` tasks); returns the report and, per bundle, its tasks
    with their outcomes. With `progress`, a bar on stderr counts validated tasks (sites done, ETA).
    A caller validating on afterwards (weblica.synth.validate_seeds) passes the site server serving the
    bundles and the slot pool (of `browser`, on that server) to reuse; they stay open."""
    from playwright.async_api import async_playwright

    from weblica.browser.launcher import launch_browser

    report = ValidationReport(sites=len(paths))
    per_bundle: dict[Path, list[tuple[Task, TaskOutcome]]] = {}
    if not paths:
        return report, per_bundle
    async def run(browser: Any) -> None:
        with (nullcontext(server) if server is not None else SiteServer(paths)) as served, \
                _TaskBar(paths, limit, progress) as bar:
            validator = Validator(browser, served, concurrency, pool=pool)
            validator.on_task = bar.task_done

            async def one(path: Path) -> None:
                tasks = load_tasks(path / "tasks.jsonl")[:limit]
                if not tasks:
                    report.site_failures.append(f"{path.name}: no tasks")
                outcomes = await validator.validate_tasks(tasks, compile_plans)
                per_bundle[path] = list(zip(tasks, outcomes))
                bar.site_done()
            try:
                await asyncio.gather(*(one(p) for p in paths))
            finally:
                report.count_loads(validator)
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


class _TaskBar(OptionalBar):
    """The validation progress bar: tasks validated of all, sites done in the label."""

    def __init__(self, paths: list[Path], limit: int | None, enabled: bool) -> None:
        self.sites, self.done = len(paths), 0
        total = sum(len(load_tasks(p / "tasks.jsonl")[:limit]) for p in paths
                    if enabled and (p / "tasks.jsonl").exists())
        super().__init__(total, self._label(), enabled)

    def _label(self) -> str:
        return f"validating tasks ({self.done}/{self.sites} sites done)"

    def task_done(self, _outcome: TaskOutcome) -> None:
        self.advance()

    def site_done(self) -> None:
        self.done += 1
        self.relabel(self._label())
