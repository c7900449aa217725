"""Real token-in/token-out generation over the tiny Qwen3-VL: an SGLang-style `/generate` HTTP server and a
verl-style server manager, both sampling with weblica's own HF backend."""
from __future__ import annotations

import base64
import io
import threading
from typing import Any

from flask import Flask, jsonify, request
from werkzeug.serving import make_server

from weblica.policy.backends.base import SamplingOptions
from weblica.policy.backends.hf import EncodedPrompt, HFBackend


def _prompt(backend: HFBackend, input_ids: list[int], images: list[Any]) -> EncodedPrompt:
    if not images:
        return EncodedPrompt(list(input_ids))
    processed = backend.image_processor(images=images, return_tensors="pt")
    return EncodedPrompt(list(input_ids), processed["pixel_values"], processed["image_grid_thw"], images)


def create_sglang_app(backend: HFBackend) -> Flask:
    from PIL import Image

    app = Flask("sglang-standin")

    @app.post("/generate")
    def generate() -> Any:
        body = request.get_json()
        images = [Image.open(io.BytesIO(base64.b64decode(b))).convert("RGB") for b in body.get("image_data") or []]
        params = body["sampling_params"]
        backend.sampling = SamplingOptions(temperature=params.get("temperature", 1.0), top_p=params.get("top_p", 1.0),
                                           max_new_tokens=params.get("max_new_tokens", 64))
        gen = backend._sample(_prompt(backend, body["input_ids"], images), params.get("sampling_seed", 0))
        return jsonify(text=gen.text, output_ids=gen.token_ids, meta_info={
            "output_token_logprobs": [[lp, t, None] for lp, t in zip(gen.logprobs, gen.token_ids)],
            "finish_reason": {"type": gen.finish_reason}})

    return app


class ServeInThread:
    def __init__(self, app: Flask) -> None:
        self._server = make_server("127.0.0.1", 0, app, threaded=True)
        self.url = f"http://127.0.0.1:{self._server.server_port}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self._server.shutdown()


class TokenOutput:
    def __init__(self, token_ids: list[int], log_probs: list[float]) -> None:
        self.token_ids, self.log_probs = token_ids, log_probs


class VerlStyleServerManager:
    """What verl's AsyncLLMServerManager offers an agent loop: generate(request_id, prompt_ids, ...)."""

    def __init__(self, backend: HFBackend) -> None:
        self.backend = backend
        self.calls = 0

    async def generate(self, request_id: str, *, prompt_ids: list[int], sampling_params: dict, image_data=None) -> TokenOutput:
        import asyncio

        self.calls += 1
        self.backend.sampling = SamplingOptions(temperature=sampling_params.get("temperature", 1.0),
                                                max_new_tokens=sampling_params.get("max_new_tokens", 64))
        gen = await asyncio.to_thread(self.backend._sample, _prompt(self.backend, prompt_ids, image_data or []),
                                      self.calls)
        return TokenOutput(gen.token_ids, gen.logprobs)
