"""SynthBackend: the env's hooks for synth tasks. The browser context uses the site server as its proxy
and names the episode in headers: its id (the server keeps state per episode), its seed (the page draws
its distractors from it: weblica/synth/distractors.py) and, for a task of a site with instances, which
instance of the data it plays (weblica/synth/instances.py). State is reset in begin() and read through
the admin endpoint."""
from __future__ import annotations

import asyncio
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator

import httpx

from weblica.env.backend import EPISODE_HEADER, NetworkConfig
from weblica.env.task import Task
from weblica.serve.app import ADMIN_HEADER, INSTANCE_HEADER, SEED_HEADER
from weblica.synth.spec import SYNTH_HOST_SUFFIX
from weblica.tls import tls_context


REQUEST_TIMEOUT_S = 10.0
ATTEMPTS = 3
# the admin calls that may be sent again after a transport failure: resetting an episode's state twice
# leaves it as once, and a read changes nothing; any other request is sent once
IDEMPOTENT = {("POST", "/__weblica/reset"), ("GET", "/__weblica/state")}


class SynthServerUnreachable(httpx.TransportError):
    """The site server gave no answer to an admin call, every attempt; the message names server and call."""


class SynthBackend:
    """Backend for tasks whose `source.kind` is `synth`, served by a SiteServer (or any server URL)."""

    def __init__(self, server: Any = None, *, url: str | None = None, admin_token: str | None = None) -> None:
        self.url = url or server.url
        self.admin_token = admin_token if admin_token is not None else server.admin_token

    def _headers(self, task: Task, episode_id: str) -> dict[str, str]:
        return {"Host": self.host(task), ADMIN_HEADER: self.admin_token, **self._episode_headers(task, episode_id)}

    @staticmethod
    def host(task: Task) -> str:
        """The host name the task's site is served under."""
        site = task.source.site
        if not site:
            raise ValueError(f"task {task.id} has no source.site; synth tasks name their site id")
        return f"{site}.{SYNTH_HOST_SUFFIX}"

    @staticmethod
    def instance(task: Task) -> int:
        """Which instance of its site's data the task plays (weblica/synth/instances.py; 0: the bundle's own)."""
        return int(task.metadata.get("instance", 0) or 0)

    @staticmethod
    def _episode_headers(task: Task, episode_id: str, seed: int | None = None) -> dict[str, str]:
        out = {EPISODE_HEADER: episode_id}
        if seed is not None:
            out[SEED_HEADER] = str(int(seed) & 0xFFFFFFFF)
        instance = SynthBackend.instance(task)
        if instance:
            out[INSTANCE_HEADER] = str(instance)
        return out

    @asynccontextmanager
    async def _client(self) -> AsyncIterator[httpx.AsyncClient]:
        # a client per call: the backend may be used from several event loops (tests, CLI, trainers)
        async with httpx.AsyncClient(base_url=self.url, timeout=REQUEST_TIMEOUT_S, trust_env=False,
                                     verify=tls_context()) as client:
            yield client

    async def _call(self, method: str, path: str, task: Task, episode_id: str) -> httpx.Response:
        """One admin request; reset and state reads are idempotent (IDEMPOTENT), so a timeout or dropped
        connection (a loaded machine) is tried again a few times before the episode fails with it. An
        answer with an error status is an answer: it is never sent again."""
        attempts = ATTEMPTS if (method, path) in IDEMPOTENT else 1
        for attempt in range(attempts):
            try:
                async with self._client() as client:
                    response = await client.request(method, path, headers=self._headers(task, episode_id))
                response.raise_for_status()
                return response
            except httpx.TransportError as exc:
                if attempt == attempts - 1:
                    said = str(exc).splitlines()[0][:200] if str(exc) else "no detail"
                    raise SynthServerUnreachable(
                        f"the synth site server at {self.url} gave no answer to {method} {path} (task {task.id}) "
                        f"in {attempts} attempt{'s' if attempts > 1 else ''} of {REQUEST_TIMEOUT_S:g} s "
                        f"({type(exc).__name__}: {said}); check that it is running and the machine is not "
                        "overloaded") from exc
                await asyncio.sleep(0.5 * (attempt + 1))
        raise AssertionError("unreachable")

    async def begin(self, task: Task, episode_id: str, seed: int) -> NetworkConfig:
        await self._call("POST", "/__weblica/reset", task, episode_id)
        return self.network(task, episode_id, seed)

    def network(self, task: Task, episode_id: str, seed: int) -> NetworkConfig:
        """How the episode's browser reaches the site server: it is the proxy, and the headers name the episode."""
        return NetworkConfig(proxy=self.url, extra_headers=self._episode_headers(task, episode_id, seed),
                             offline_hint="(synth: only the generated sites are served)")

    async def state(self, task: Task, episode_id: str) -> dict[str, Any] | None:
        return (await self._call("GET", "/__weblica/state", task, episode_id)).json()

    async def end(self, task: Task, episode_id: str) -> None:
        return None
