"""HTTP env server: `GET /health`, `POST /reset`, `POST /step`, `POST /close`, shaped like OpenWebRL's
browser env server so external trainers (slime, verl, anything that speaks HTTP) can drive weblica
environments. `/reset` answers with the task the episode plays (`instruction`, `task`, `instance`): for
a task with instances (weblica/synth/instances.py) that is its seed's member, whose instruction and gold
follow the data the site serves, not the copy the client sent.

All episodes run on one event loop in a background thread, in one Chromium, one context each. The
Flask app (an app factory, no globals) only validates JSON and translates it to calls on that service.

Safe to expose on a cluster network: every request is validated (JSON 4xx naming the field and the fix,
never an HTML page or a traceback), bodies are capped, an optional bearer token guards every route, and
requests on one session are serialized: concurrent `/step`s run one after another in arrival order and
each gets the observation of its own step (a few may wait; more than `MAX_QUEUED_PER_SESSION` waiting
are refused with 429). A task's bundle or recording must lie inside the served roots (`SourceRoots`), and
every /reset and /step answers within the request time limit (a 504 that closes the session past it).

Every reset starts an episode with an id of its own (weblica/env/browser_env.py), so sessions on one task
and seed never share server-side state. Local tasks may open only the servers named at start
(`local_origins`, --local-origin): other loopback services of the machine are refused. A session idle for
`session_idle_s` is closed, and one whose episode has ended gives its slot to a new session when all are
taken. The HTTP server (`make_env_server`) answers only requests whose Host header names it (a page that
rebinds its own name to 127.0.0.1 is refused), caps its open connections and reads each request within a
time limit, so slow clients cannot hold its threads.
"""
from __future__ import annotations

import asyncio
import base64
import dataclasses
import hmac
import json
import threading
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from flask import Flask, jsonify, request
from werkzeug.exceptions import HTTPException
from werkzeug.serving import BaseWSGIServer

from weblica.browser.navigation import NavigationPolicy, with_endpoints
from weblica.browser.session import BrowserHost
from weblica.env.backend import DirectBackend, LiveBackend, SiteBackend
from weblica.env.browser_env import EnvConfig, EnvStateError, WebEnv
from weblica.env.observation import Observation
# the HTTP side (is_loopback, check_bind, MIN_TOKEN_CHARS stay importable from here, as before the split)
from weblica.env.server_http import (DEFAULT_MAX_CONNECTIONS, DEFAULT_READ_TIMEOUT_S, DEFAULT_REQUEST_READ_S,
                                     TOKEN_ENV, CappedWSGIServer, HostCheck, JSONErrorHandler, check_bind)
from weblica.env.server_http import MIN_TOKEN_CHARS as MIN_TOKEN_CHARS, is_loopback as is_loopback
from weblica.env.server_requests import (CLOSE_USAGE, MAX_BODY_BYTES, RESET_USAGE, STEP_USAGE, RequestError,
                                         actions_of, flag_of, read_json_body, seed_of, session_id_of)
from weblica.env.source_roots import SourceRefused, SourceRoots, default_site_roots
from weblica.env.sources import SourceBackends, SourceUnavailable, lazy_backends
from weblica.env.task import Task, TaskError

MAX_QUEUED_PER_SESSION = 8        # requests waiting behind the running one on a session
DEFAULT_REQUEST_TIMEOUT_S = 120.0  # above a step's own limit (60 s); below a reset's three tries (3 x 60 s)
DEFAULT_SESSION_IDLE_S = 600.0     # a session without a request for this long is closed

ROUTES = "GET /health, POST /reset, POST /step, POST /close"


class SessionGone(KeyError):
    """The session was closed while this request waited for it."""


class RequestTimedOut(Exception):
    """A request ran past the service's time limit; its session was closed."""


MAX_REMEMBERED_BROKEN = 1024      # closed-on-timeout session ids kept to say why they are gone


@dataclass
class Session:
    """One WebEnv and the lock that serializes the requests on it (used on the service's loop only)."""

    env: WebEnv
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    waiting: int = 0       # requests admitted and not finished (changed under EnvService._lock)
    closed: bool = False
    last_used: float = field(default_factory=time.monotonic)  # when its last request finished (or began)


class EnvService:
    """Sessions of WebEnv sharing one browser, driven from other threads.

    Task sources are confined to `roots` (bundles and recordings outside them are refused) and served by
    one backend per bundle or recording, started on first use and stopped at shutdown. Every request is
    bounded by `request_timeout_s` (lock wait included): past it the request answers RequestTimedOut and
    its session is closed, so a client never waits forever on a hung page or browser."""

    def __init__(self, config: EnvConfig | None = None, max_sessions: int = 16,
                 backends: dict[str, SiteBackend] | None = None, roots: SourceRoots | None = None,
                 request_timeout_s: float = DEFAULT_REQUEST_TIMEOUT_S, local_origins: list[str] | None = None,
                 session_idle_s: float = DEFAULT_SESSION_IDLE_S) -> None:
        """`local_origins`: the servers (URLs; their host and port count) local tasks may open; None lets
        them open any loopback server (an embedding program's own test servers), [] none."""
        self.config = config or EnvConfig()
        self.max_sessions = max_sessions
        self.roots = roots if roots is not None else SourceRoots(sites=default_site_roots())
        self.request_timeout_s = request_timeout_s
        self.session_idle_s = session_idle_s
        self.local_origins = local_origins
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="weblica-env-server", daemon=True)
        self._thread.start()
        self.host = BrowserHost(self.config.browser)
        self._own_backends = lazy_backends()
        local = DirectBackend()
        if local_origins is not None:
            local.policy = with_endpoints(NavigationPolicy("local", loopback_endpoints_only=True), list(local_origins))
        self.backends: dict[str, SiteBackend] = {"local": local, "live": LiveBackend(), **self._own_backends}
        self.backends.update(backends or {})
        self.sessions: dict[str, Session] = {}
        self.broken: OrderedDict[str, str] = OrderedDict()  # session id -> why it was closed
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._reaper = threading.Thread(target=self._reap_forever, name="weblica-env-reaper", daemon=True)
        self._reaper.start()

    def call(self, coro: Any, timeout: float | None = None) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    async def _prepare(self, task: Task) -> None:
        """Start the backend of the task's source (a bundle's site server, a recording) if it is not yet."""
        backend = self.backends.get(task.source.kind)
        if backend is None:
            raise TaskError(f"unknown task source '{task.source.kind}'; use one of {', '.join(sorted(self.backends))}")
        if isinstance(backend, SourceBackends):
            try:
                await backend.prepare(task)
            except SourceUnavailable as exc:
                raise TaskError(str(exc)) from None

    def _admit(self, session_id: str) -> Session:
        with self._lock:
            session = self.sessions.get(session_id)
            if session is None:
                raise KeyError(session_id)
            if session.waiting > MAX_QUEUED_PER_SESSION:
                raise OverflowError(f"session {session_id} already has {session.waiting} requests in flight; "
                                    "wait for their answers (requests on one session run one at a time)")
            session.waiting += 1
            return session

    def _release(self, session: Session) -> None:
        with self._lock:
            session.waiting -= 1
            session.last_used = time.monotonic()

    def _reap_forever(self) -> None:
        while not self._stopping.wait(max(0.1, min(1.0, self.session_idle_s / 4))):
            self.reap_idle()

    def reap_idle(self) -> int:
        """Close every session without a request for `session_idle_s`; how many were closed."""
        now = time.monotonic()
        with self._lock:
            idle = [(sid, s) for sid, s in self.sessions.items()
                    if s.waiting == 0 and now - s.last_used > self.session_idle_s]
        for sid, session in idle:
            self._break(sid, session, f"it was idle for more than {self.session_idle_s:g} s (--session-idle-timeout) "
                                      "and was closed")
        return len(idle)

    def _free_a_slot(self) -> bool:
        """With every slot taken, close the longest-idle session whose episode has ended (called under
        self._lock); whether one was freed."""
        ended = [(s.last_used, sid, s) for sid, s in self.sessions.items()
                 if s.waiting == 0 and not s.env.episode_running]
        if not ended:
            return False
        _, sid, session = min(ended, key=lambda item: item[:2])
        self._forget(sid, session, "its episode had ended and its slot was given to a new session")
        self._close_later(session)
        return True

    def counts(self) -> tuple[int, int]:
        """(sessions, sessions with a running episode)."""
        with self._lock:
            return len(self.sessions), sum(1 for s in self.sessions.values() if s.env.episode_running)

    def gone_reason(self, session_id: str) -> str:
        """Why `session_id` is no session ('' when it never was one, as far as the service remembers)."""
        with self._lock:
            return self.broken.get(session_id, "")

    def _forget(self, session_id: str, session: Session, reason: str) -> None:
        """Drop a session (under self._lock) and remember why, for the 404 its later requests get."""
        if self.sessions.get(session_id) is session:
            del self.sessions[session_id]
        session.closed = True
        self.broken[session_id] = reason
        while len(self.broken) > MAX_REMEMBERED_BROKEN:
            self.broken.popitem(last=False)

    def _break(self, session_id: str, session: Session, reason: str) -> None:
        """Close a session whose request ran too long (or that sat idle): its slot is freed now, its episode
        closed on the loop once a cancelled request has unwound."""
        with self._lock:
            self._forget(session_id, session, reason)
        self._close_later(session)

    def _close_later(self, session: Session) -> None:
        async def cleanup() -> None:
            async with session.lock:
                await asyncio.wait_for(session.env.close_episode(), 30)
        asyncio.run_coroutine_threadsafe(cleanup(), self._loop)

    def _serialized(self, session_id: str, session: Session, work: Any) -> Any:
        """Run `work(env)` on the loop once the session's earlier requests have finished, within the
        request time limit."""
        async def go() -> Any:
            async with session.lock:
                if session.closed:
                    raise SessionGone(session_id)
                return await work(session.env)
        future = asyncio.run_coroutine_threadsafe(go(), self._loop)
        try:
            return future.result(self.request_timeout_s)
        except TimeoutError:
            if not future.cancel():  # it finished meanwhile, or raised a TimeoutError of its own: that is the answer
                return future.result()
            reason = (f"a request on it ran past the {self.request_timeout_s:g} s request time limit "
                      "(--request-timeout); it was closed")
            self._break(session_id, session, reason)
            raise RequestTimedOut(f"the request ran past the {self.request_timeout_s:g} s time limit "
                                  f"(--request-timeout); session {session_id} was closed: reset a new one") from None
        finally:
            self._release(session)

    def reset(self, task: Task, seed: int, session_id: str | None = None) -> tuple[str, Observation, Task]:
        """Start an episode of `task` with `seed`: the session id, the first observation, and the task the
        episode plays (`episode_task`: for a task with instances, the member of this seed's data, whose
        instruction, gold and checks are not the ones the client sent)."""
        sent = task.source
        try:
            task = self.roots.confine(task)
        except SourceRefused as exc:
            raise TaskError(str(exc)) from None
        created = session_id is None
        if session_id is None:
            with self._lock:
                if len(self.sessions) >= self.max_sessions and not self._free_a_slot():
                    raise OverflowError(f"all {self.max_sessions} sessions have a running episode; close one first "
                                        f"(a session idle for {self.session_idle_s:g} s is closed)")
                session_id = uuid.uuid4().hex
                self.sessions[session_id] = Session(WebEnv(self.config, self.backends, host=self.host))
        session = self._admit(session_id)

        async def go(env: WebEnv) -> tuple[Observation, Task]:
            await self._prepare(task)
            obs = await env.reset(task, seed)
            assert env.task is not None
            # the source as the client named it: the confined one is a path on this machine
            return obs, dataclasses.replace(env.task, source=sent)

        try:
            return (session_id, *self._serialized(session_id, session, go))
        except Exception:
            if created:  # a session that never started must not hold a slot
                with self._lock:
                    self.sessions.pop(session_id, None)
            raise

    def step(self, session_id: str, actions: Any) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        session = self._admit(session_id)
        return self._serialized(session_id, session, lambda env: env.step(actions))

    def close_session(self, session_id: str) -> None:
        with self._lock:
            session = self.sessions.pop(session_id)
            session.closed = True  # requests still waiting on it answer 404

        async def go() -> None:
            async with session.lock:
                await session.env.close_episode()
        try:
            self.call(go(), self.request_timeout_s)
        except TimeoutError:  # the session is gone already; its episode closes once its request unwinds
            pass

    def shutdown(self) -> None:
        self._stopping.set()
        for sid in list(self.sessions):
            try:
                self.close_session(sid)
            except KeyError:  # reaped meanwhile
                pass

        async def stop() -> None:
            for backend in self._own_backends.values():
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


# ---- the app -----------------------------------------------------------------------------------------

def create_app(service: EnvService, token: str | None = None, hosts: HostCheck | None = None) -> Flask:
    """The env server's Flask app over a running EnvService; with `token`, every request must carry
    `Authorization: Bearer TOKEN`; with `hosts`, its Host header must name the server."""
    app = Flask("weblica.env_server")
    app.config["MAX_CONTENT_LENGTH"] = MAX_BODY_BYTES
    app.config["PROVIDE_AUTOMATIC_OPTIONS"] = False  # no CORS preflight answers: OPTIONS is a JSON 405
    expected = f"Bearer {token}".encode() if token else None

    def error(status: int, message: str) -> Any:
        return jsonify(error=message), status

    def no_session(session_id: str | None) -> Any:
        reason = service.gone_reason(session_id or "")
        return error(404, f"no session {session_id}" + (f": {reason}" if reason else ""))

    @app.errorhandler(RequestError)
    def refused(exc: RequestError) -> Any:
        return error(exc.status, exc.message)

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException) -> Any:
        messages = {404: f"no route {request.method} {request.path[:200]}; routes: {ROUTES}",
                    405: f"{request.method} is not allowed on {request.path[:200]}; routes: {ROUTES}",
                    413: f"the request body is larger than {MAX_BODY_BYTES} bytes"}
        response = exc.get_response()
        response.set_data(json.dumps({"error": messages.get(exc.code or 0, f"{exc.name}: {exc.description}")}))
        response.content_type = "application/json"
        return response

    @app.errorhandler(Exception)
    def internal(exc: Exception) -> Any:  # a bug: logged with its traceback, answered without it
        app.logger.exception("env server error on %s %s", request.method, request.path[:200])
        return error(500, f"internal error ({type(exc).__name__}); the server log has the details")

    @app.before_request
    def authorize() -> Any:
        if hosts is not None and not hosts.allows(request.headers.get("Host")):
            shown = request.headers.get("Host", "")[:100]
            return error(403, f"Host {shown!r} is not this server's name (it serves {hosts.bound or 'any address'}"
                              "); a page on another site may be reaching it through DNS rebinding. Start the "
                              "server with --allow-host NAME to serve under another name")
        if expected is None:
            return None
        given = request.headers.get("Authorization", "").encode("utf-8", "replace")
        if hmac.compare_digest(given, expected):
            return None
        response, status = error(401, "missing or wrong token: send 'Authorization: Bearer TOKEN' with the "
                                      f"token the server was started with (--token or {TOKEN_ENV})")
        response.headers["WWW-Authenticate"] = "Bearer"
        return response, status

    @app.get("/health")
    def health() -> Any:
        sessions, running = service.counts()
        return jsonify(status="ok", sessions=sessions, running=running,
                       max_sessions=service.max_sessions, browser=service.host.is_alive())

    @app.post("/reset")
    def reset() -> Any:
        body = read_json_body(request, RESET_USAGE, {"task", "seed", "session_id", "screenshot"})
        if not isinstance(body.get("task"), dict):
            raise RequestError(400, RESET_USAGE)
        try:
            task = Task.from_dict(body["task"])
        except TaskError as exc:
            raise RequestError(400, f"bad task: {exc}") from None
        seed = seed_of(body)
        session_id = session_id_of(body, RESET_USAGE) if body.get("session_id") is not None else None
        screenshot = flag_of(body, "screenshot", True)
        try:
            session_id, obs, played = service.reset(task, seed, session_id)
        except KeyError:
            return no_session(session_id)
        except RequestTimedOut as exc:
            return error(504, str(exc))
        except OverflowError as exc:
            return error(429, str(exc))
        except TaskError as exc:
            return error(400, str(exc))
        except Exception as exc:  # the start page did not open: the caller marks the sample removed
            return error(503, f"env_error: {exc}")
        # what the episode plays: with instances, this seed's member (its instruction, checks and gold follow
        # the data the site now serves), so a remote trainer prompts and scores with these, not its own copy
        return jsonify(session_id=session_id, observation=observation_json(obs, screenshot),
                       instruction=played.instruction, task=played.to_dict(),
                       instance=int(played.metadata.get("instance", 0) or 0))

    @app.post("/step")
    def step() -> Any:
        body = read_json_body(request, STEP_USAGE, {"session_id", "action", "actions", "screenshot"})
        session_id = session_id_of(body, STEP_USAGE)
        actions = actions_of(body)
        screenshot = flag_of(body, "screenshot", True)
        try:
            obs, reward, terminated, truncated, info = service.step(session_id, actions)
        except KeyError:
            return no_session(session_id)
        except RequestTimedOut as exc:
            return error(504, str(exc))
        except OverflowError as exc:
            return error(429, str(exc))
        except EnvStateError as exc:  # step after the episode ended
            return error(409, str(exc))
        return jsonify(observation=observation_json(obs, screenshot), reward=reward,
                       terminated=terminated, truncated=truncated, done=terminated or truncated, info=info)

    @app.post("/close")
    def close() -> Any:
        session_id = session_id_of(read_json_body(request, CLOSE_USAGE, {"session_id"}), CLOSE_USAGE)
        try:
            service.close_session(session_id)
        except KeyError:
            return no_session(session_id)
        return jsonify(closed=session_id)

    return app


# ---- serving ----------------------------------------------------------------------------------------

def make_env_server(service: EnvService, host: str = "127.0.0.1", port: int = 8900,
                    token: str | None = None, allow_hosts: tuple[str, ...] = (),
                    max_connections: int = DEFAULT_MAX_CONNECTIONS, read_timeout_s: float = DEFAULT_READ_TIMEOUT_S,
                    request_read_s: float = DEFAULT_REQUEST_READ_S) -> BaseWSGIServer:
    """A threaded HTTP server for the env app (not yet serving); refuses unsafe binds (ValueError). It
    answers only Host headers that name it (the bound address, `allow_hosts`), keeps at most
    `max_connections` open and reads each request within `request_read_s` (`read_timeout_s` a read)."""
    check_bind(host, token)
    app = create_app(service, token, HostCheck(host, allow_hosts))
    return CappedWSGIServer(host, port, app, JSONErrorHandler, max_connections=max_connections,
                            read_timeout_s=read_timeout_s, request_read_s=request_read_s)
