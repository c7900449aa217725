"""The environment: one browser episode at a time behind `reset`, `step` and `close`.

The env knows nothing about where sites come from: `backends[task.source.kind]` supplies the network
(proxy, episode header) and the server-side state that checks read. A kind not given is served by the
env's own `SourceBackends` (each bundle or recording started on first use, stopped in `close()`).

Episodes share nothing: every reset gets a fresh episode id (server-side state is keyed by it, so two
episodes of one task and seed never see each other's state), a fresh browser context, its own clipboard
and its own downloads folder. A page that crashes or hangs ends the episode as an environment failure
(masked in training) only when it is the task's own site; a page off the task's site, which only the
agent's own navigation reaches, ends it as the agent's failure (`page_crash`, `page_hang`: reward 0).
"""
from __future__ import annotations

import asyncio
import hashlib
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

from weblica.browser.downloads import DownloadLimits, EpisodeDownloads
from weblica.browser.launcher import BrowserOptions
from weblica.browser.navigation import (NavigationGuard, NavigationRefused, UnreadableHost, browser_host,
                                       host_address)
from weblica.browser.session import BrowserHost
from weblica.env.actions import Action, ActionError, make_action, parse_tool_calls
from weblica.env.backend import DirectBackend, LiveBackend, SiteBackend
from weblica.env.episode import ENV_FAILURES
from weblica.env.executor import ActionExecutor, ActionResult
from weblica.env.observation import Observation
from weblica.env.sources import SOURCE_MODULES, SourceBackends
from weblica.env.tabs import BrowserCrashed, EpisodeLimits, SettleOptions, TabSet
from weblica.env.task import Task, TaskError, episode_task
from weblica.scoring.checks import evaluate_checks


@dataclass
class EnvConfig:
    settle: SettleOptions = field(default_factory=SettleOptions)
    step_timeout_s: float = 60.0          # one step (all its tool calls + settle + screenshot)
    episode_timeout_s: float = 900.0      # the whole episode, reset included
    reset_timeout_s: float = 60.0
    reset_retries: int = 2                # navigation to the start page is retried (flaky servers)
    max_format_errors: int = 3            # consecutive unparseable responses end the episode
    browser: BrowserOptions = field(default_factory=BrowserOptions)
    limits: EpisodeLimits = field(default_factory=EpisodeLimits)       # tabs, navigation loops
    downloads: DownloadLimits = field(default_factory=DownloadLimits)  # downloads: count, bytes, folder


class EnvStateError(RuntimeError):
    """The env was used out of order (step before reset, after close)."""


def episode_id_for(task: Task, seed: int, nonce: int = 0) -> str:
    """A deterministic episode id: the same task and seed name the same episode."""
    digest = hashlib.sha256(f"{task.id}\0{seed}\0{nonce}".encode()).hexdigest()[:16]
    return f"ep-{digest}"


def fresh_episode_id(task: Task, seed: int) -> str:
    """An episode id no other reset gets, even of the same task and seed (its random part only keys the
    server-side state: nothing the episode shows depends on it)."""
    return f"{episode_id_for(task, seed)}-{secrets.token_hex(6)}"


def _site_of(url: str) -> tuple[str, int | None] | None:
    try:
        return browser_host(url)
    except UnreadableHost:
        return None


def _on_site(where: tuple[str, int | None], site: tuple[str, int | None]) -> bool:
    """Whether a page at `where` (host, port) belongs to the task's site at `site`: for addresses and
    localhost the same server (host and port); for names the same last two labels (the site's own
    subdomains)."""
    (host, port), (site_host, site_port) = where, site
    if host_address(host) is not None or host_address(site_host) is not None:
        return host == site_host and port == site_port
    return host == site_host or (host.count(".") >= 1 and host.split(".")[-2:] == site_host.split(".")[-2:])


class WebEnv:
    """Async browser environment. `reset(task, seed) -> Observation`;
    `step(actions) -> (Observation, reward, terminated, truncated, info)`; `close()`."""

    def __init__(self, config: EnvConfig | None = None, backends: dict[str, SiteBackend] | None = None,
                 host: BrowserHost | None = None) -> None:
        self.config = config or EnvConfig()
        self.backends: dict[str, SiteBackend] = {"local": DirectBackend(), "live": LiveBackend()}
        self.backends.update(backends or {})
        self._own_backends: list[SourceBackends] = []
        self._own_host = host is None
        self.host = host or BrowserHost(self.config.browser)
        self.task: Task | None = None
        self.episode_id: str | None = None
        self._context: Any = None
        self._tabs: TabSet | None = None
        self._executor: ActionExecutor | None = None
        self._backend: SiteBackend | None = None
        self._step = 0
        self._format_errors = 0
        self._finished = True
        self._deadline = 0.0
        self._last_obs: Observation | None = None
        self._episodes = 0
        self._downloads: EpisodeDownloads | None = None
        self._site: set[tuple[str, int | None]] = set()  # the task's own site: its start page, before and after load

    @property
    def episode_running(self) -> bool:
        """Whether an episode has started and not ended."""
        return self.task is not None and not self._finished

    # ---- lifecycle ----------------------------------------------------------------------------

    async def reset(self, task: Task, seed: int = 0, episode_id: str | None = None) -> Observation:
        """Start a new episode on `task`: fresh context, determinism layer seeded by `seed`, start page
        loaded and settled. Raises on environment failure (after retries); the caller marks it env_error."""
        await self._end_episode()
        task = episode_task(task, seed)  # a task with instances: the one of this seed's data
        backend = self.backends.get(task.source.kind)
        if backend is None and task.source.kind in SOURCE_MODULES:
            backend = self.backends[task.source.kind] = SourceBackends(task.source.kind)
            self._own_backends.append(backend)
        if backend is None:
            raise EnvStateError(f"no backend for task source '{task.source.kind}' (task {task.id}); "
                                f"known: {', '.join(sorted(self.backends))}")
        if isinstance(backend, SourceBackends):  # a source that cannot be opened is the task's fault: no retries
            await backend.prepare(task)
        self.task, self._backend = task, backend
        # a caller that names the episode (a run's deterministic label) keeps its name; otherwise every
        # reset gets its own, so server-side state is never shared between two resets
        self.episode_id = episode_id or fresh_episode_id(task, seed)
        self._step, self._format_errors, self._finished = 0, 0, False
        self._deadline = time.monotonic() + self.config.episode_timeout_s
        self._episodes += 1
        last_error: BaseException | None = None
        for attempt in range(self.config.reset_retries + 1):
            try:
                obs = await asyncio.wait_for(self._open(task, seed), self.config.reset_timeout_s)
                self._last_obs = obs
                return obs
            except NavigationRefused as exc:  # a bad task, not a flaky start page: no retry, nothing opened
                await self._end_episode()
                raise TaskError(f"task {task.id}: start_url {task.start_url} is refused: {exc}") from exc
            except (Exception, asyncio.TimeoutError) as exc:
                last_error = exc
                await self._close_context()
        self._finished = True
        raise RuntimeError(f"could not open {task.start_url} after {self.config.reset_retries + 1} attempts: "
                           f"{last_error!r}") from last_error

    async def _open(self, task: Task, seed: int) -> Observation:
        assert self._backend is not None and self.episode_id is not None
        network = await self._backend.begin(task, self.episode_id, seed)
        policy = network.navigation_policy()
        refusal = await policy.resolved_refusal(task.start_url)
        if refusal:
            raise NavigationRefused(refusal)
        self._context = await self.host.new_context(seed, network.proxy, network.extra_headers,
                                                    network.ignore_https_errors, network.service_workers)
        guard = await NavigationGuard(policy).install(self._context)
        self._tabs = await TabSet(self._context, self.config.settle, self.config.limits).install()
        page = await self._tabs.open_first()
        self._downloads = EpisodeDownloads(self.config.downloads, self.episode_id)
        await self._downloads.install(self._context, await self._tabs.cdp_session(page), await self.host.browser_session())
        self._executor = ActionExecutor(self._tabs, self.config.settle.navigation_timeout_s, guard, self._downloads)
        self._site = {s for s in (_site_of(task.start_url),) if s}
        try:
            await page.goto(task.start_url, wait_until="load",
                            timeout=self.config.settle.navigation_timeout_s * 1000)
        finally:
            # the browser's form of the URL, its redirect, or the name's address was refused after all
            refused = [r for r in guard.take() if r.navigation]
            if refused:
                raise NavigationRefused(refused[0].reason) from None
        self._site |= {s for s in (_site_of(page.url),) if s}
        await self._tabs.settle()
        return await self._observe(self._executor.limit_notes())

    async def _observe(self, feedback: list[str]) -> Observation:
        assert self._tabs is not None
        screenshot = await self._tabs.screenshot()
        tabs = await self._tabs.tabs()
        return Observation(screenshot=screenshot, url=self._tabs.page.url, tabs=tabs,
                           active_tab=self._tabs.active, feedback=feedback, step=self._step)

    async def step(self, actions: str | Action | dict | list[Action | dict], parse_errors: list[str] | None = None
                   ) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        """Run one agent turn. `actions` is model text (parsed here), one action, or a list; a policy
        that parsed the text itself passes its `parse_errors` along (they count for the format gate).
        Never raises for bad input or page errors: they become feedback; environment failures end the
        episode with their termination reason."""
        if self.task is None or self._finished:
            raise EnvStateError("call reset(task) before step(); the last episode has ended")
        self._step += 1
        parsed, parse_errors = self._coerce(actions, parse_errors)
        info: dict[str, Any] = {"episode_id": self.episode_id, "step": self._step, "parse_errors": parse_errors,
                                "termination_reason": None, "answer": None, "check_results": [],
                                "env_failure": False}
        remaining = self._deadline - time.monotonic()
        timeout = min(self.config.step_timeout_s, max(remaining, 0.001))
        try:
            obs, done = await asyncio.wait_for(self._run(parsed, parse_errors), timeout)
        except asyncio.TimeoutError:
            off_site = self._off_site(self._tabs.page.url if self._tabs and self._tabs.pages else None)
            if off_site:
                return await self._agent_failed("page_hang", f"the step took longer than {timeout:.0f} s on "
                                                f"{off_site}, a page off the task's site that the agent opened", info)
            return await self._fail("timeout", f"the step took longer than {timeout:.0f} s", info)
        except BrowserCrashed as exc:
            off_site = self._off_site(exc.page_url)
            if off_site:
                return await self._agent_failed("page_crash", f"{exc} on {off_site}, a page off the task's site "
                                                "that the agent opened", info)
            return await self._fail("browser_crash", str(exc), info)
        except Exception as exc:  # a bug or an unexpected browser state: an env failure, not the agent's
            return await self._fail("env_error", f"{type(exc).__name__}: {exc}", info)
        reward = 0.0
        truncated = False
        terminated = done is not None
        if done is not None:
            info["answer"] = done.answer
            info["termination_reason"] = "done"
            if done.infeasible:
                info["infeasible"] = True
            reward, results = await self._score(done.answer, obs.url, done.infeasible)
            info["check_results"] = [r.to_dict() for r in results]
        elif parse_errors and not parsed:
            self._format_errors += 1
            if self._format_errors >= self.config.max_format_errors:
                terminated = True
                info["termination_reason"] = "format_error"
        else:
            self._format_errors = 0
        if not terminated and self._step >= self.task.max_steps:
            truncated = True
            info["termination_reason"] = "max_steps"
        if terminated or truncated:
            await self._end_episode()
        return obs, reward, terminated, truncated, info

    def _coerce(self, actions: Any, parse_errors: list[str] | None = None) -> tuple[list[Action], list[str]]:
        if isinstance(actions, str):
            parsed = parse_tool_calls(actions)
            return parsed.actions, parsed.errors
        items = actions if isinstance(actions, list) else [actions]
        out: list[Action] = []
        errors = list(parse_errors or [])
        for i, item in enumerate(items):
            if isinstance(item, Action):
                out.append(item)
                continue
            try:
                out.append(make_action(item))
            except ActionError as exc:
                errors.append(f"tool call {i + 1}: {exc}")
        if not items and not errors:
            errors.append("the tool call list is empty")
        return out, errors

    async def _run(self, actions: list[Action], parse_errors: list[str]) -> tuple[Observation, ActionResult | None]:
        """The step's observation, and the `done` call's result when the agent ended the episode."""
        assert self._executor is not None and self._tabs is not None
        feedback = [f"Failed: {e}" for e in parse_errors]
        for action in actions:
            result = await self._executor.run(action)
            feedback.append(result.feedback)
            if result.done:
                obs = await self._observe(feedback)
                return obs, result
        if not actions:
            await self._tabs.settle(0)
        obs = await self._observe(feedback)
        self._last_obs = obs
        return obs, None

    async def _score(self, answer: str | None, url: str, infeasible: bool = False) -> tuple[float, list[Any]]:
        assert self.task is not None and self._backend is not None
        state = await self._backend.state(self.task, self.episode_id or "")
        return evaluate_checks(self.task, answer, url, state, infeasible=infeasible)

    def _off_site(self, url: str | None) -> str | None:
        """`url` when it is an http(s) page off the task's own site, else None."""
        where = _site_of(url) if url else None
        if where is None or not self._site or any(_on_site(where, site) for site in self._site):
            return None
        return url

    async def _agent_failed(self, reason: str, message: str, info: dict[str, Any]
                            ) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        """The agent's own navigation led to a page that crashed or hung: the episode ends, scored 0."""
        return await self._fail(reason, message, info, env_failure=False)

    async def _fail(self, reason: str, message: str, info: dict[str, Any], env_failure: bool = True
                    ) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        assert (reason in ENV_FAILURES) == env_failure
        info.update(termination_reason=reason, env_failure=env_failure, error=message)
        last = self._last_obs
        obs = Observation(screenshot=last.screenshot if last else b"", url=last.url if last else "",
                          tabs=last.tabs if last else [], active_tab=last.active_tab if last else 0,
                          feedback=[f"{'Environment failure' if env_failure else 'Failed'} ({reason}): {message}"],
                          step=self._step)
        await self._end_episode()
        return obs, 0.0, True, False, info

    async def page_snapshot(self) -> dict[str, Any] | None:
        """The active page's visible text and in-view controls (weblica.scoring.page_snapshot), for scripted
        policies with `reads_page`; None between episodes."""
        if self._tabs is None or self._finished:
            return None
        from weblica.scoring.page_snapshot import page_snapshot

        return await page_snapshot(self._tabs.page)

    async def axtree(self) -> list[dict[str, Any]] | None:
        """The active page's in-view accessibility nodes (weblica.env.axtree), for policies with
        `reads_axtree`; None between episodes."""
        if self._tabs is None or self._finished:
            return None
        from weblica.env.axtree import read_axtree

        return await read_axtree(self._tabs.page)

    async def state(self) -> dict[str, Any] | None:
        """The current episode's server-side state (what state_match checks read)."""
        if self.task is None or self._backend is None:
            return None
        return await self._backend.state(self.task, self.episode_id or "")

    async def _close_context(self) -> None:
        if self._context is not None:
            try:
                await asyncio.wait_for(self._context.close(), 10)
            except Exception:  # a crashed browser's contexts are already gone
                pass
        if self._downloads is not None:
            downloads, self._downloads = self._downloads, None
            await downloads.close()
        self._context = self._tabs = self._executor = None

    async def _end_episode(self) -> None:
        self._finished = True
        await self._close_context()
        if self._backend is not None and self.task is not None and self.episode_id is not None:
            try:
                await self._backend.end(self.task, self.episode_id)
            except Exception:
                pass

    async def close_episode(self) -> None:
        """End the current episode early (the caller gave up on it); the env stays usable."""
        await self._end_episode()

    async def close(self) -> None:
        await self._end_episode()
        while self._own_backends:
            await self._own_backends.pop().stop()
        if self._own_host:
            await self.host.close()

    async def __aenter__(self) -> "WebEnv":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()
