"""Site backends: how a task's source supplies the network and the server-side state of an episode.

The env knows nothing about synth sites or recordings; each source plugs in a backend. A backend says
which proxy the browser context uses (so all traffic goes through the gateway of that mode), which
headers name the episode, and how to read the state that `state_match` checks compare against.
"""
from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

from weblica.browser.navigation import NavigationPolicy
from weblica.env.task import Task

EPISODE_HEADER = "X-Weblica-Episode"


@dataclass
class NetworkConfig:
    """Browser-context network settings for one episode."""

    proxy: str | None = None                # e.g. "http://127.0.0.1:8081"; None = direct
    extra_headers: dict[str, str] = field(default_factory=dict)
    ignore_https_errors: bool = False       # True behind a MITM proxy whose CA the context does not know
    offline_hint: str = ""                  # appended to navigation failures, e.g. "(replay: not recorded)"
    service_workers: bool = False           # let the site's service worker run (recording and replay)
    # which URLs the episode may open; None: the sandbox policy behind a proxy (the gateway never dials
    # out), the local one without (loopback servers; link-local and private addresses refused)
    policy: NavigationPolicy | None = None

    def navigation_policy(self) -> NavigationPolicy:
        if self.policy is not None:
            return self.policy
        return NavigationPolicy("sandbox" if self.proxy else "local")


@runtime_checkable
class SiteBackend(Protocol):
    """One source kind's hooks around an episode (synth server, replay proxy, live web)."""

    async def begin(self, task: Task, episode_id: str, seed: int) -> NetworkConfig:
        """Prepare server-side state for a new episode and say how the browser reaches the site."""
        ...

    async def state(self, task: Task, episode_id: str) -> dict[str, Any] | None:
        """The server-side state `state_match` checks read, or None when the source has none."""
        ...

    async def end(self, task: Task, episode_id: str) -> None:
        """Release what begin() set up."""
        ...


class DirectBackend:
    """Tasks whose pages are reached directly on local servers (loopback). No server-side state.
    Link-local and private addresses are refused unless `allow_private`."""

    def __init__(self, allow_private: bool = False) -> None:
        self.policy = NavigationPolicy("local", allow_private=allow_private)

    async def begin(self, task: Task, episode_id: str, seed: int) -> NetworkConfig:
        return NetworkConfig(extra_headers={EPISODE_HEADER: episode_id}, policy=self.policy)

    async def state(self, task: Task, episode_id: str) -> dict[str, Any] | None:
        return None

    async def end(self, task: Task, episode_id: str) -> None:
        return None


class LiveBackend(DirectBackend):
    """The live web (eval only). Sends no episode header: on a cross-origin fetch a custom header alone
    triggers a CORS preflight that real sites reject. Loopback, link-local and private addresses are
    refused unless `allow_private`: every connection then goes through the live gateway, which checks
    the address it resolves (redirects and host names included) before connecting. `policy` replaces
    the default live policy (e.g. with allowed endpoints)."""

    def __init__(self, allow_private: bool = False, policy: NavigationPolicy | None = None) -> None:
        base = policy or NavigationPolicy("live", allow_private=allow_private)
        self.policy = replace(base, proxy_checks_addresses=base.checks_addresses)
        self._gateway: Any = None

    async def begin(self, task: Task, episode_id: str, seed: int) -> NetworkConfig:
        if not self.policy.checks_addresses:
            return NetworkConfig(policy=self.policy)
        if self._gateway is None:
            from weblica.browser.gateway import LiveGateway

            self._gateway = await asyncio.to_thread(LiveGateway(self.policy).start)
        return NetworkConfig(proxy=self._gateway.url, policy=self.policy)

    async def stop(self) -> None:
        if self._gateway is not None:
            gateway, self._gateway = self._gateway, None
            await asyncio.to_thread(gateway.stop)
