"""A local provider speaking the Anthropic Messages and OpenAI chat-completions wire formats that plays
a scripted coding-agent conversation, one script per conversation (told apart by the first user
message, which names the site), so several sites can run against it at once.

A script is a list of steps, one per POST of that conversation:
- `{"calls": [(name, args), ...]}`: a tool-use reply (stop_reason tool_use / finish_reason tool_calls);
- `{"calls": [...], "cut": True}`: cut at max_tokens inside the last call (stop_reason max_tokens with a
  partial tool_use input / finish_reason length with unterminated JSON arguments), shaped like
  tests/wire/*_max_tokens.json and *_length.json;
- `{"text": "..."}`: a plain end_turn / stop reply;
- `{"wire": {"anthropic": NAME, "openai": NAME}}`: tests/wire/NAME.json replayed as recorded (status,
  headers, body): rate limits, overloads, refusals.
Past the end of a script the last step repeats.
"""
from __future__ import annotations

import copy
import json
import threading
from typing import Any

from fixtures_models import wire


class ScriptedProvider:
    def __init__(self, script: list[dict[str, Any]], scripts: dict[str, list[dict[str, Any]]] | None = None) -> None:
        from flask import Flask, Response, request
        from werkzeug.serving import make_server

        self.script, self.scripts = script, scripts or {}  # scripts: by a substring of the first user message
        self.requests: list[dict[str, Any]] = []
        self.counts: dict[str, int] = {}
        self._lock = threading.Lock()
        app = Flask("scripted-provider")

        def answer(provider: str) -> Response:
            body = request.get_json()
            first_user = next(m for m in body["messages"] if m["role"] == "user")["content"]
            # the prompt's text (a cache_control marker on it comes and goes from turn to turn)
            key = first_user if isinstance(first_user, str) else first_user[0].get("text", json.dumps(first_user))
            with self._lock:
                index = self.counts.get(key, 0)
                self.counts[key] = index + 1
                self.requests.append({"provider": provider, "key": key, "json": body,
                                      "headers": {k.lower(): v for k, v in request.headers.items()}})
            script = next((s for marker, s in self.scripts.items() if marker in key), self.script)
            step = script[min(index, len(script) - 1)]
            status, headers, payload = self.render(provider, step, body["model"], index)
            return Response(json.dumps(payload), status=status, headers=headers, mimetype="application/json")

        app.add_url_rule("/v1/messages", "messages", lambda: answer("anthropic"), methods=["POST"])
        app.add_url_rule("/v1/chat/completions", "chat", lambda: answer("openai"), methods=["POST"])
        self._server = make_server("127.0.0.1", 0, app, threaded=True)
        self.url = f"http://127.0.0.1:{self._server.server_port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def render(self, provider: str, step: dict[str, Any], model: str, index: int) -> tuple[int, dict, dict]:
        if "wire" in step:
            response = wire(step["wire"][provider])["response"]
            return response["status"], dict(response.get("headers", {})), response["body"]
        calls, cut, text = step.get("calls", []), step.get("cut", False), step.get("text")
        if provider == "anthropic":
            body = copy.deepcopy(wire("anthropic_messages_tool_use_max_tokens")["response"]["body"]) if cut else {
                "id": f"msg_{index:02d}", "type": "message", "role": "assistant", "model": model,
                "stop_sequence": None, "usage": {"input_tokens": 1000, "cache_creation_input_tokens": 0,
                                                 "cache_read_input_tokens": 0, "output_tokens": 200}}
            blocks = [{"type": "text", "text": text}] if text else []
            blocks += [{"type": "tool_use", "id": f"toolu_{index:02d}_{i}", "name": n, "input": a}
                       for i, (n, a) in enumerate(calls)]
            body["content"] = blocks
            body["stop_reason"] = "max_tokens" if cut else ("tool_use" if calls else "end_turn")
            return 200, {"request-id": f"req_{index:02d}"}, body
        body = copy.deepcopy(wire("openai_chat_tool_calls_length")["response"]["body"]) if cut else {
            "id": f"chatcmpl-{index:02d}", "object": "chat.completion", "created": 1764583200 + index, "model": model,
            "choices": [{"index": 0, "message": {}, "logprobs": None}],
            "usage": {"prompt_tokens": 1000, "completion_tokens": 200, "total_tokens": 1200}}
        tool_calls = []
        for i, (n, a) in enumerate(calls):
            arguments = json.dumps(a)
            if cut and i == len(calls) - 1:
                arguments = arguments[: len(arguments) // 2]  # unterminated JSON, as a cut reply leaves it
            tool_calls.append({"id": f"call_{index:02d}_{i}", "type": "function",
                               "function": {"name": n, "arguments": arguments}})
        message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": None, "annotations": []}
        if tool_calls:
            message["tool_calls"] = tool_calls
        choice = body["choices"][0]
        choice["message"] = message
        choice["finish_reason"] = "length" if cut else ("tool_calls" if calls else "stop")
        return 200, {"x-request-id": f"req_{index:02d}"}, body

    def __enter__(self) -> "ScriptedProvider":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._thread.join(timeout=5)
