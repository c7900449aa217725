"""The LLM generator's agent loop against a local server speaking the Anthropic Messages and OpenAI
chat-completions wire formats: tool calls go out, tool results (and screenshots) come back, and the
bundle the scripted agent writes is validated like a procedural one."""
from __future__ import annotations

import json

import pytest
from flask import Flask, jsonify, request

from weblica.env.task import load_tasks
from weblica.synth.llm import AnthropicClient, OpenAIClient, synthesize_llm

PAGE = """<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>Kettles</title>
<link rel="stylesheet" href="/assets/site.css"><script>window.SITE = {}</script>
<script src="/assets/site.js" defer></script></head><body data-page="home"><main>
<h1>Blue Kettle</h1><p>Price: $12.50</p>
<form data-api="/api/submissions" data-redirect="/thanks" novalidate>
<label for="email">Email</label><input type="email" name="email" id="email" required>
<button type="submit" id="go">Subscribe</button></form></main></body></html>"""
TASKS = [
    {"start_url": "/", "instruction": "What does the Blue Kettle cost?", "difficulty": "easy", "rubric": ["price"],
     "checks": [{"type": "answer_match", "expected": r"(?<![\d.,])12\.50(?!\d)", "mode": "regex"}],
     "metadata": {"plan": [{"op": "done", "answer": "$12.50"}], "negatives": {"answers": ["$13.00", "12.05"]}}},
    {"start_url": "/", "instruction": "Subscribe with ann@example.test", "difficulty": "easy", "rubric": ["saved"],
     "checks": [{"type": "state_match", "path": "submissions.0.email", "expected": "ann@example.test"}],
     "metadata": {"plan": [{"op": "fill", "sel": "#email", "text": "ann@example.test"}, {"op": "click", "sel": "#go"}]}},
]
SCRIPT = [
    [("write_file", {"path": "public/index.html", "content": PAGE}),
     ("write_file", {"path": "public/thanks.html", "content": PAGE.replace("Blue Kettle", "Thanks")}),
     ("write_file", {"path": "data.json", "content": json.dumps({"kettle": {"price": 12.5}})}),
     ("write_file", {"path": "tasks.jsonl", "content": "\n".join(json.dumps(t) for t in TASKS)})],
    [("screenshot", {"path": "/"})],
    [("validate", {})],
    [("finish", {})],
]


def fake_provider() -> tuple[Flask, list[dict]]:
    app, seen = Flask("fake-llm"), []

    @app.post("/v1/messages")
    def messages():
        body = request.get_json()
        seen.append(body)
        turn = sum(m["role"] == "assistant" for m in body["messages"])
        calls = SCRIPT[min(turn, len(SCRIPT) - 1)]
        return jsonify({"id": f"msg_{turn}", "type": "message", "role": "assistant", "model": body["model"],
                        "content": [{"type": "tool_use", "id": f"toolu_{turn}_{i}", "name": n, "input": a}
                                    for i, (n, a) in enumerate(calls)],
                        "stop_reason": "tool_use", "stop_sequence": None,
                        "usage": {"input_tokens": 10, "output_tokens": 10}})

    @app.post("/v1/chat/completions")
    def completions():
        body = request.get_json()
        seen.append(body)
        turn = sum(m["role"] == "assistant" for m in body["messages"])
        calls = SCRIPT[min(turn, len(SCRIPT) - 1)]
        message = {"role": "assistant", "content": None,
                   "tool_calls": [{"id": f"call_{turn}_{i}", "type": "function",
                                   "function": {"name": n, "arguments": json.dumps(a)}} for i, (n, a) in enumerate(calls)]}
        return jsonify({"id": f"chatcmpl-{turn}", "object": "chat.completion", "created": 0, "model": body["model"],
                        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
                        "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}})
    return app, seen


@pytest.fixture()
def provider():
    from werkzeug.serving import make_server
    import threading

    app, seen = fake_provider()
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}", seen
    server.shutdown()


@pytest.mark.parametrize("kind", ["anthropic", "openai"])
def test_agent_loop_writes_a_validated_bundle(provider, tmp_path, kind):
    url, seen = provider
    client = (AnthropicClient("claude-test", base_url=url, api_key="test") if kind == "anthropic"
              else OpenAIClient("gpt-test", base_url=url + "/v1", api_key="test"))
    [result] = synthesize_llm(skill="forms", category="books", seed=3, out=tmp_path, client=client, min_tasks=2)
    assert result.ok and result.tasks_kept == 2, result.failures
    tasks = load_tasks(result.path / "tasks.jsonl")
    assert all(t.oracle and t.source.kind == "synth" for t in tasks)
    assert json.loads((result.path / "site.json").read_text())["generator"] == "llm"
    # the loop stopped once validation passed: write, screenshot, validate = three model turns
    assert len(seen) == 3
    last = seen[-1]["messages"]
    if kind == "anthropic":
        results = [b for m in last if m["role"] == "user" and isinstance(m["content"], list) for b in m["content"]]
        assert {b["tool_use_id"] for b in results} >= {"toolu_0_0", "toolu_1_0"}
        shot = next(b for b in results if b["tool_use_id"] == "toolu_1_0")
        assert any(part["type"] == "image" for part in shot["content"])
    else:
        tool_ids = {m["tool_call_id"] for m in last if m["role"] == "tool"}
        assert {"call_0_0", "call_1_0"} <= tool_ids
        assert any(m["role"] == "user" and isinstance(m["content"], list) and m["content"][1]["type"] == "image_url"
                   for m in last)
