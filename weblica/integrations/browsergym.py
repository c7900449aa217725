"""BrowserGym adapter: a weblica task as a BrowserGym `AbstractBrowserTask`, run inside `BrowserEnv`.

BrowserGym owns the browser and hands the task a (sync) Playwright page: `setup` opens the start URL
(after resetting the site's per-episode state) and returns the goal, `validate` scores the agent's last
message to the user with the task's checks, and `cheat` plays the oracle as the env's oracle policy does.

Registered task sets and an AgentLab benchmark: weblica.integrations.browsergym_tasks.

Written against browsergym-core 0.14.3 (`browsergym/core/task.py`, `env.py`, `chat.py`, `__init__.py`). It
pins Playwright 1.44; install it beside weblica's Playwright without its dependencies
(`pip install --no-deps browsergym-core==0.14.3`: its env and task modules import only gymnasium, numpy,
pillow, pyparsing and Playwright). Without it the same base interface is defined here, so the task class can
still be driven by hand. `browser_env_kwargs` gives BrowserEnv what it needs for a weblica task: Debian's
Chromium (`use_system_chromium`) and, for sites behind a backend (synth, cache), the episode's proxy and
headers.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
from typing import Any, Awaitable, Coroutine, TypeVar

from weblica.browser.determinism import determinism_script
from weblica.browser.launcher import LOCALE, TIMEZONE, VIEWPORT, BrowserOptions
from weblica.env.actions import Action, gesture_for
from weblica.env.backend import SiteBackend
from weblica.env.task import Task, episode_task
from weblica.scoring.checks import evaluate_checks

try:  # browsergym-core, installed with --no-deps (see above)
    from browsergym.core.task import AbstractBrowserTask as _Base
    HAVE_BROWSERGYM = True
except ImportError:  # for users without it: the interface of browsergym.core.task.AbstractBrowserTask
    HAVE_BROWSERGYM = False

    class _Base:  # type: ignore[no-redef]
        def __init__(self, seed: int) -> None:
            import numpy as np

            self.random = np.random.RandomState(seed)
            self.viewport = {"width": 1280, "height": 720}
            self.slow_mo = 1000
            self.timeout = 5000
            self.locale = None
            self.timezone_id = None

T = TypeVar("T")


def _run_async(coro: Awaitable[T]) -> T:
    # BrowserGym drives a sync Playwright on this thread; a backend's coroutine gets a loop of its own
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


class WeblicaBrowserTask(_Base):
    """Wraps one weblica Task. With a backend (tasks whose source has server-side state), `setup` starts the
    episode on it and `validate` reads its state; BrowserEnv's context must then use the episode's network
    settings (`browser_env_kwargs`)."""

    def __init__(self, seed: int | None, task: Task, backend: SiteBackend | None = None,
                 episode_id: str | None = None) -> None:
        # BrowserEnv.reset() without a seed passes None: that episode is seed 0, as weblica's env's
        # reset is, not a random one (int(None) failed on a task with instances)
        seed = 0 if seed is None else seed
        # BrowserGym's own RandomState takes 0..2**32-1; weblica's episode seeds go to 2**63-1 (the env
        # server's range), so its draws get the seed's low 32 bits and the episode the seed itself
        super().__init__(int(seed) & 0xFFFFFFFF)
        self.task = episode_task(task, seed)  # with instances: the member of this seed's data, as the env plays it
        self.backend = backend
        self.seed = seed
        self.episode_id = episode_id or f"bgym-{task.id}-{seed}"
        self.viewport = dict(VIEWPORT)
        self.slow_mo = 100  # BrowserGym's 1 s per Playwright call; the gestures and cheat pace themselves
        self.locale = LOCALE
        self.timezone_id = TIMEZONE

    @classmethod
    def get_task_id(cls) -> str:
        return "weblica"

    def setup(self, page: Any) -> tuple[str, dict]:
        # the determinism layer's page script (seeded Math.random and crypto, one machine and network,
        # animations off) on BrowserEnv's fresh context, before the start page loads. Not its fake clock:
        # nothing advances virtual time between BrowserGym's steps, so a paused clock would stop the
        # page's timers
        page.context.add_init_script(script=determinism_script(self.seed))
        if self.backend is not None:  # a fresh per-episode state on the site, every reset
            net = _run_async(self.backend.begin(self.task, self.episode_id, self.seed))
            # this episode's headers (its seed, its member's instance of the data), not those of the seed
            # `browser_env_kwargs` was called with: one BrowserEnv is reset at many seeds
            page.context.set_extra_http_headers(dict(net.extra_headers or {}))
        page.goto(self.task.start_url, wait_until="load")
        return self.task.instruction, {"task_id": self.task.id, "skill": self.task.skill}

    def _state(self) -> dict | None:
        if self.backend is None:
            return None
        return _run_async(self.backend.state(self.task, self.episode_id))

    def validate(self, page: Any, chat_messages: list[Any]) -> tuple[float, bool, str, dict]:
        """Done once the agent has sent a message to the user (BrowserGym's `send_msg_to_user`), scored by the
        task's checks. BrowserEnv's chat opens with its own assistant greeting, before the goal (a user
        message): only assistant messages after the first user message count."""
        messages = [m if isinstance(m, dict) else {"role": "assistant", "message": str(m)} for m in chat_messages]
        first_user = next((i for i, m in enumerate(messages) if m.get("role") == "user"), -1)
        answers = [m.get("message", "") for m in messages[first_user + 1:] if m.get("role") == "assistant"]
        if not answers:
            return 0.0, False, "", {}
        reward, results = evaluate_checks(self.task, answers[-1], page.url, self._state())
        return reward, True, "", {"check_results": [r.to_dict() for r in results]}

    def cheat(self, page: Any, chat_messages: list[Any]) -> None:
        """Play the oracle as the env's oracle policy plays it (weblica.policy.oracle), one of its turns at a
        time on BrowserGym's sync page: it reads the page each turn, so this episode's pop-ups are dismissed
        where they stand in the way and a sticky header this episode does not keep where the recording
        clicked it is scrolled back to (weblica.env.sticky_header), as in the env's own episodes."""
        from weblica.env.observation import Observation
        from weblica.scoring.page_snapshot import page_snapshot
        from weblica.policy.oracle import OraclePolicy

        policy = OraclePolicy()
        policy.reset(self.task, self.seed)
        for _ in range(max(self.task.max_steps, 1)):  # the env's own budget for the episode
            snapshot = _resolved(page_snapshot(_AwaitablePage(page)))
            obs = Observation(screenshot=b"", url=page.url, tabs=[], active_tab=0, page=snapshot)
            for action in _resolved(policy.act(obs, self.task, [])).actions:
                if action.name == "done":
                    chat_messages.append({"role": "assistant", "message": action.args.get("answer", "")})
                    return
                _perform(page, action)

    def teardown(self) -> None:
        pass


def _perform(page: Any, action: Action) -> None:
    """One action with the env's own gestures (the action table) on a sync page."""
    from weblica.env import gestures

    gesture = gesture_for(action)
    if gesture is not None:
        gestures.perform_sync(page, gesture)
    # a click or Enter may start a navigation a moment later; BrowserGym paces actions the same way
    page.wait_for_timeout(250)
    page.wait_for_load_state("load")


class _AwaitablePage:
    """A sync page where `page_snapshot` awaits `page.evaluate`: the call runs at once, on this thread."""

    def __init__(self, page: Any) -> None:
        self._page = page

    async def evaluate(self, js: str) -> Any:
        return self._page.evaluate(js)


def _resolved(coro: Coroutine[Any, Any, T]) -> T:
    """The value of a coroutine that never waits (the oracle policy's turn, a snapshot through
    `_AwaitablePage`), run to its end here: BrowserGym's sync Playwright owns this thread's event loop."""
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value
    coro.close()
    raise RuntimeError("the coroutine waited on real I/O; it cannot run on BrowserGym's sync page")


class _ChromiumType:
    """Playwright's `chromium` with Debian's executable as the default: BrowserGym's chat window launches
    Chromium with no way to pass an executable, and Playwright's own build is not installed here."""

    def __init__(self, chromium: Any, executable: str) -> None:
        self._chromium, self._executable = chromium, executable

    def launch(self, **kwargs: Any) -> Any:
        kwargs.setdefault("executable_path", self._executable)
        return self._chromium.launch(**kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._chromium, name)


class _Playwright:
    def __init__(self, playwright: Any, executable: str) -> None:
        self._playwright = playwright
        self.chromium = _ChromiumType(playwright.chromium, executable)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._playwright, name)

    def stop(self) -> None:
        self._playwright.stop()


def use_system_chromium(executable: str | None = None) -> None:
    """Make every browser BrowserGym launches (the env's and its chat's) Debian's Chromium, through the
    global Playwright instance it shares (`browsergym.core._set_global_playwright`)."""
    import browsergym.core as bgym
    from playwright.sync_api import sync_playwright

    current = bgym._get_global_playwright() if getattr(bgym, "_PLAYWRIGHT", None) else None
    if isinstance(current, _Playwright):
        return
    playwright = current or sync_playwright().start()
    executable = executable or BrowserOptions().launch_kwargs()["executable_path"]
    bgym._set_global_playwright(_Playwright(playwright, executable))


def browser_env_kwargs(task: Task, backend: SiteBackend | None = None, episode_id: str | None = None,
                       seed: int = 0) -> dict[str, Any]:
    """Keyword arguments for `browsergym.core.env.BrowserEnv` that play `task`: the task class, Debian's
    Chromium, and for a task behind a backend the episode's proxy and headers (network settings only:
    BrowserEnv sets the viewport, locale and time zone from the task and refuses them twice). The headers
    are `seed`'s; each reset's `setup` replaces them with its own seed's."""
    use_system_chromium()
    options = BrowserOptions().launch_kwargs()
    context: dict[str, Any] = {"service_workers": "block"}
    episode_id = episode_id or f"bgym-{task.id}-{seed}"
    if backend is not None:
        net = _run_async(backend.begin(episode_task(task, seed), episode_id, seed))
        if net.proxy:
            context["proxy"] = {"server": net.proxy, "bypass": ""}
        context["extra_http_headers"] = dict(net.extra_headers or {})
        if net.ignore_https_errors:   # the replay proxy answers HTTPS with its own certificates
            context["ignore_https_errors"] = True
        if net.service_workers:
            context["service_workers"] = "allow"
    return {"task_entrypoint": WeblicaBrowserTask,
            "task_kwargs": {"task": task, "backend": backend, "episode_id": episode_id},
            "pw_chromium_kwargs": {"executable_path": options["executable_path"], "env": options["env"]},
            "pw_context_kwargs": context}


def stop_playwright() -> None:
    """Stop the Playwright that BrowserGym shares (after its envs are closed): while it runs, no other sync
    Playwright can start on this thread."""
    import browsergym.core as bgym

    playwright = getattr(bgym, "_PLAYWRIGHT", None)
    if playwright is not None:
        playwright.stop()
        bgym._set_global_playwright(None)
