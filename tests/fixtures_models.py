"""Model fixtures shared by the policy tests: tiny Qwen3-VL checkpoints, built once per session."""
from __future__ import annotations

import atexit
import functools
import io
import os
import shutil
import tempfile
from pathlib import Path

from build_once import built_once
from weblica.env.observation import Observation, Tab
from weblica.env.task import Task


@functools.lru_cache(maxsize=None)
def tiny_checkpoint(warm_start_steps: int | None = None, seed: int = 0) -> Path:
    """A checkpoint directory, warm-started by default so it answers with parseable tool calls (one build
    serves every test: building is most of the suite's time on a shared CPU). Under pytest-xdist the
    workers of one run share it too: the first to ask builds it under a lock, the others wait and read it
    (tests only read a checkpoint; one that trains from it copies it or writes elsewhere)."""
    from weblica.policy.tiny import WARM_START_STEPS, build_tiny_qwen3_vl

    if warm_start_steps is None:
        warm_start_steps = WARM_START_STEPS
    _remove_orphans()
    owner = run_owner_pid()
    out = Path(tempfile.gettempdir()) / f"weblica-tiny-{owner}-{warm_start_steps}-{seed}"
    def build() -> str:
        build_tiny_qwen3_vl(out, seed=seed, warm_start_steps=warm_start_steps)
        return ""
    built_once(out, build)
    if owner == os.getpid():  # a plain run; under xdist the controller removes them (conftest.py)
        atexit.register(remove_checkpoints, owner)
    return out


def run_owner_pid() -> int:
    """The pid that names this run's checkpoints: the xdist controller's (every worker is its child), else ours."""
    return os.getppid() if os.environ.get("PYTEST_XDIST_WORKER") else os.getpid()


def remove_checkpoints(owner: int) -> None:
    for entry in Path(tempfile.gettempdir()).glob(f"weblica-tiny-{owner}-*"):
        shutil.rmtree(entry, ignore_errors=True) if entry.is_dir() else entry.unlink(missing_ok=True)


def _remove_orphans() -> None:
    """Checkpoints of finished runs: atexit cleanup does not run when another exit handler (the
    browser stack registers some) ends the process first."""
    for entry in Path(tempfile.gettempdir()).glob("weblica-tiny-*-*"):
        pid = entry.name.split("-")[2]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            remove_checkpoints(int(pid))


def png(color: tuple[int, int, int] = (255, 255, 255), size: tuple[int, int] = (1280, 720)) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", size, color).save(buffer, "PNG")
    return buffer.getvalue()


def make_task(instruction: str = "Find the price of the blue kettle.", **kwargs) -> Task:
    return Task(id=kwargs.pop("id", "t-kettle"), start_url="http://shop.test/", instruction=instruction, **kwargs)


def make_obs(step: int = 0, color: tuple[int, int, int] = (255, 255, 255), url: str = "http://shop.test/",
             feedback: list[str] | None = None) -> Observation:
    return Observation(png(color), url, [Tab(0, url, "Shop"), Tab(1, "http://help.test/", "Help")], 0,
                       list(feedback or []), step)


# ---- a local provider server answering recorded exchanges (tests/wire/*.json) -------------------------

WIRE = Path(__file__).parent / "wire"


def wire(name: str) -> dict:
    import json

    return json.loads((WIRE / f"{name}.json").read_text())


class ProviderServer:
    """Flask on 127.0.0.1 (ephemeral port) speaking the OpenAI and Anthropic wire formats.

    Each POST is answered with the next queued exchange (`queue("openai_chat_agent")`), optionally after
    a delay; every request body and header set is kept in `requests` for assertions.
    """

    def __init__(self) -> None:
        import threading

        from flask import Flask, jsonify, request
        from werkzeug.serving import make_server

        self.queued: list[tuple[dict, float]] = []
        self.requests: list[dict] = []
        app = Flask("fake-provider")

        def answer(path: str):
            self.requests.append({"path": path, "json": request.get_json(silent=True),
                                  "headers": {k.lower(): v for k, v in request.headers.items()}})
            if not self.queued:
                return jsonify({"error": {"message": "no exchange queued", "type": "test_error"}}), 500
            exchange, delay = self.queued.pop(0)
            expected = exchange.get("request", {})
            if expected.get("path") not in (None, path):
                return jsonify({"error": {"message": f"expected {expected['path']}, got {path}"}}), 400
            if delay:
                import time

                time.sleep(delay)
            response = exchange["response"]
            return jsonify(response["body"]), response["status"]

        @app.get("/v1/models")
        def models():
            self.requests.append({"path": "/v1/models", "json": None, "headers": dict(request.headers)})
            return jsonify(wire("openai_models")["response"]["body"])

        app.post("/v1/chat/completions")(lambda: answer("/v1/chat/completions"))
        app.add_url_rule("/v1/messages", "messages", lambda: answer("/v1/messages"), methods=["POST"])
        self._server = make_server("127.0.0.1", 0, app, threaded=True)
        self.port = self._server.server_port
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def queue(self, name: str, delay: float = 0.0) -> "ProviderServer":
        self.queued.append((wire(name), delay))
        return self

    def __enter__(self) -> "ProviderServer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._thread.join(timeout=5)
