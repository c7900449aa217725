"""Play a start URL and a list of actions through the env, keeping the screenshot after each action.

Record and replay both browse through `WebEnv` (determinism layer on), so a replay's screenshots can
be compared byte for byte with the recording's.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from weblica.browser.navigation import NavigationPolicy
from weblica.env.backend import EPISODE_HEADER, NetworkConfig, SiteBackend
from weblica.env.task import Task, TaskSource

PROXY_SOURCE = "weblica-cache-proxy"


class ProxyBackend:
    """Sends an episode's browser context through one proxy (the recorder)."""

    def __init__(self, proxy_url: str, policy: NavigationPolicy | None = None):
        self.proxy_url = proxy_url
        self.policy = policy  # what the browser may open (None: the sandbox policy of a proxied context)

    async def begin(self, task: Task, episode_id: str, seed: int) -> NetworkConfig:
        # the MITM proxy presents its own certificates; the context trusts them
        return NetworkConfig(proxy=self.proxy_url, extra_headers={EPISODE_HEADER: episode_id},
                             ignore_https_errors=True, policy=self.policy, service_workers=True)

    async def state(self, task: Task, episode_id: str) -> dict[str, Any] | None:
        return None

    async def end(self, task: Task, episode_id: str) -> None:
        return None


@dataclass
class PlayResult:
    screenshots: list[bytes] = field(default_factory=list)   # step 0 = the opened start page
    urls: list[str] = field(default_factory=list)
    feedback: list[list[str]] = field(default_factory=list)
    error: str | None = None


async def play(env: Any, start_url: str, actions: list[dict[str, Any]], seed: int,
               source: TaskSource | None = None, episode_id: str | None = None,
               on_step: Callable[[], None] | None = None) -> PlayResult:
    """Open `start_url` in a fresh episode and run each action as its own step; `on_step` is called once
    the start page is open and after each step (a progress bar's advance)."""
    task = Task(id=f"cache-play-{seed}", start_url=start_url, instruction="replay the recorded browse",
                source=source or TaskSource(kind=PROXY_SOURCE), max_steps=len(actions) + 1)
    result = PlayResult()
    obs = await env.reset(task, seed=seed, episode_id=episode_id)
    result.screenshots.append(obs.screenshot)
    result.urls.append(obs.url)
    if on_step is not None:
        on_step()
    for action in actions:
        obs, _reward, terminated, truncated, info = await env.step([action])
        result.screenshots.append(obs.screenshot)
        result.urls.append(obs.url)
        result.feedback.append(list(obs.feedback))
        if on_step is not None:
            on_step()
        if info.get("env_failure"):
            result.error = info.get("error")
            break
        if terminated or truncated:
            break
    await env.close_episode()
    return result


def save_screens(directory: Path, screenshots: list[bytes]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for i, png in enumerate(screenshots):
        (directory / f"step-{i}.png").write_bytes(png)


def load_screens(directory: Path) -> list[bytes]:
    if not directory.is_dir():
        return []
    paths = sorted(directory.glob("step-*.png"), key=lambda p: int(p.stem.split("-")[1]))
    return [p.read_bytes() for p in paths]


def make_env(backends: dict[str, SiteBackend], host: Any = None) -> Any:
    """A WebEnv on `backends`; `host` (a `weblica.cache.session.SessionHost`: a virtual clock, a session to
    start with) stays the caller's to close."""
    from weblica.env.browser_env import WebEnv

    return WebEnv(backends=backends, host=host)
