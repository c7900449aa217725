"""HTTP env server: `GET /health`, `POST /reset`, `POST /step`, `POST /close`, shaped like OpenWebRL's
browser env server so external trainers (slime, verl, anything that speaks HTTP) can drive weblica
environments.

All episodes run on one event loop in a background thread, in one Chromium, one context each. The
Flask app (an app factory, no globals) only translates JSON to calls on that service.
"""
from __future__ import annotations

import asyncio
import base64
import importlib
import threading
import uuid
from typing import Any

from flask import Flask, jsonify, request

from weblica.browser.session import BrowserHost
from weblica.env.backend import DirectBackend, LiveBackend, SiteBackend
from weblica.env.browser_env import EnvConfig, WebEnv
from weblica.env.observation import Observation
from weblica.env.sources import SOURCE_MODULES
from weblica.env.task import Task, TaskError


class EnvService:
    """Sessions of WebEnv sharing one browser, driven from other threads."""

    def __init__(self, config: EnvConfig | None = None, max_sessions: int = 16,
                 backends: dict[str, SiteBackend] | None = None) -> None:
        self.config = config or EnvConfig()
        self.max_sessions = max_sessions
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="weblica-env-server", daemon=True)
        self._thread.start()
        self.host = BrowserHost(self.config.browser)
        self.backends: dict[str, SiteBackend] = {"local": DirectBackend(), "live": LiveBackend()}
        self.backends.update(backends or {})
        self._started: list[Any] = []
        self.sessions: dict[str, WebEnv] = {}
        self._lock = threading.Lock()

    def call(self, coro: Any, timeout: float | None = None) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    async def _backend_for(self, task: Task) -> None:
        kind = task.source.kind
        if kind in self.backends:
            return
        if kind not in SOURCE_MODULES:
            raise TaskError(f"unknown task source '{kind}'")
        backend = importlib.import_module(SOURCE_MODULES[kind]).create_backend([task])
        if hasattr(backend, "start"):
            await backend.start()
        self._started.append(backend)
        self.backends[kind] = backend

    def reset(self, task: Task, seed: int, session_id: str | None = None) -> tuple[str, Observation]:
        created = session_id is None
        with self._lock:
            if session_id is None:
                if len(self.sessions) >= self.max_sessions:
                    raise OverflowError(f"all {self.max_sessions} sessions are in use; close one first")
                session_id = uuid.uuid4().hex
                self.sessions[session_id] = WebEnv(self.config, self.backends, host=self.host)
            elif session_id not in self.sessions:
                raise KeyError(session_id)
            env = self.sessions[session_id]

        async def go() -> Observation:
            await self._backend_for(task)
            env.backends = self.backends
            return await env.reset(task, seed)

        try:
            return session_id, self.call(go())
        except Exception:
            if created:  # a session that never started must not hold a slot
                with self._lock:
                    self.sessions.pop(session_id, None)
            raise

    def step(self, session_id: str, actions: Any) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        env = self.sessions[session_id]
        return self.call(env.step(actions))

    def close_session(self, session_id: str) -> None:
        with self._lock:
            env = self.sessions.pop(session_id)
        self.call(env.close_episode())

    def shutdown(self) -> None:
        for sid in list(self.sessions):
            self.close_session(sid)

        async def stop() -> None:
            for backend in reversed(self._started):
                if hasattr(backend, "stop"):
                    await backend.stop()
            await self.host.close()

        self.call(stop())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)


def observation_json(obs: Observation, include_screenshot: bool = True) -> dict[str, Any]:
    out = obs.to_dict()
    if include_screenshot:
        out["screenshot"] = base64.b64encode(obs.screenshot).decode("ascii")
    return out


def create_app(service: EnvService) -> Flask:
    """The env server's Flask app over a running EnvService."""
    app = Flask("weblica.env_server")

    def error(status: int, message: str) -> Any:
        return jsonify(error=message), status

    @app.get("/health")
    def health() -> Any:
        return jsonify(status="ok", sessions=len(service.sessions), max_sessions=service.max_sessions,
                       browser=service.host.is_alive())

    @app.post("/reset")
    def reset() -> Any:
        body = request.get_json(silent=True)
        if not isinstance(body, dict) or "task" not in body:
            return error(400, "POST /reset needs a JSON body with 'task' (a task object) and optional "
                              "'seed' and 'session_id'")
        try:
            task = Task.from_dict(body["task"])
            seed = int(body.get("seed", 0))
        except (TaskError, TypeError, ValueError) as exc:
            return error(400, f"bad task: {exc}")
        try:
            session_id, obs = service.reset(task, seed, body.get("session_id"))
        except KeyError:
            return error(404, f"no session {body.get('session_id')}")
        except OverflowError as exc:
            return error(429, str(exc))
        except TaskError as exc:
            return error(400, str(exc))
        except Exception as exc:  # the start page did not open: the caller marks the sample removed
            return error(503, f"env_error: {exc}")
        return jsonify(session_id=session_id, observation=observation_json(obs, body.get("screenshot", True)))

    @app.post("/step")
    def step() -> Any:
        body = request.get_json(silent=True)
        if not isinstance(body, dict) or "session_id" not in body:
            return error(400, "POST /step needs a JSON body with 'session_id' and 'action' (model text, "
                              "a tool call or a list of tool calls)")
        if body["session_id"] not in service.sessions:
            return error(404, f"no session {body['session_id']}")
        actions = body.get("action", body.get("actions", ""))
        try:
            obs, reward, terminated, truncated, info = service.step(body["session_id"], actions)
        except RuntimeError as exc:  # step after the episode ended
            return error(409, str(exc))
        return jsonify(observation=observation_json(obs, body.get("screenshot", True)), reward=reward,
                       terminated=terminated, truncated=truncated, done=terminated or truncated, info=info)

    @app.post("/close")
    def close() -> Any:
        body = request.get_json(silent=True) or {}
        session_id = body.get("session_id")
        if session_id not in service.sessions:
            return error(404, f"no session {session_id}")
        service.close_session(session_id)
        return jsonify(closed=session_id)

    return app
