"""The openai: and anthropic: backends against a local server answering in the providers' wire format."""
import asyncio
import base64

import pytest
from fixtures_models import ProviderServer, make_obs, make_task, wire

from weblica.env.episode import StepRecord
from weblica.policy.backends.api import frame_for_model_name
from weblica.policy.factory import make_policy


def run(coro):
    return asyncio.run(coro)


def test_openai_compatible_agent_turn():
    with ProviderServer() as server:
        server.queue("openai_chat_agent")
        policy = make_policy(f"openai:{server.url}/v1", seed=3)
        task, obs = make_task(), make_obs(color=(9, 9, 9))
        policy.reset(task, 3)
        out = run(policy.act(obs, task, []))
    # the model name came from /v1/models; its family fixes the coordinate frame
    assert policy.backend.model == "Qwen/Qwen3-VL-4B-Thinking"
    assert policy.frame.convention == "relative1000"
    assert out.format_ok and out.token_ids is None
    assert out.text == wire("openai_chat_agent")["response"]["body"]["choices"][0]["message"]["content"]
    click, write = out.actions
    assert (click.name, click.args["x"], click.args["y"]) == ("click", 640.0, 72.0)
    assert write.args == {"text": "blue kettle"}

    body = server.requests[-1]["json"]
    for key in wire("openai_chat_agent")["request"]["required_keys"]:
        assert key in body, key
    assert body["model"] == "Qwen/Qwen3-VL-4B-Thinking" and body["temperature"] == 0.0
    assert isinstance(body["seed"], int)
    system, user = body["messages"]
    assert system["role"] == "system" and "# Tools" in system["content"]
    image = next(p for p in user["content"] if p["type"] == "image_url")["image_url"]["url"]
    assert base64.b64decode(image.split(",", 1)[1]) == obs.screenshot
    assert server.requests[-1]["headers"]["authorization"].startswith("Bearer ")


def test_openai_model_in_spec_and_reasoning_content_folded_back():
    with ProviderServer() as server:
        server.queue("openai_chat_reasoning")
        policy = make_policy(f"openai:{server.url}/v1#Qwen/Qwen3-VL-4B-Thinking;temperature=0.6;top_k=20")
        task = make_task()
        history = [StepRecord(0, "<think>a</think><tool_call>{}</tool_call>", [], ["Success: scrolled."],
                              "http://shop.test/kettle", "0" * 64)]
        out = run(policy.act(make_obs(1), task, history))
    assert [r["path"] for r in server.requests] == ["/v1/chat/completions"]  # no /models lookup
    assert out.text.startswith("<think>The price is shown") and out.format_ok
    assert out.actions[0].args == {"answer": "$24.99"}
    body = server.requests[0]["json"]
    assert body["temperature"] == 0.6 and body["top_k"] == 20
    assert [m["role"] for m in body["messages"]] == ["system", "user", "assistant", "user"]
    assert body["messages"][2]["content"] == history[0].response


def test_anthropic_agent_turn_with_base_url_from_environment(monkeypatch):
    with ProviderServer() as server:
        server.queue("anthropic_messages_agent")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        policy = make_policy("anthropic:claude-sonnet-4-5", seed=1)
        task, obs = make_task(), make_obs()
        out = run(policy.act(obs, task, []))
    assert policy.frame.convention == "viewport"
    assert out.format_ok and len(out.actions) == 1
    assert (out.actions[0].args["x"], out.actions[0].args["y"]) == (1210.0, 42.0)
    exchange = wire("anthropic_messages_agent")["request"]
    request = server.requests[-1]
    for header in exchange["required_headers"]:
        assert header in request["headers"], header
    assert request["headers"]["x-api-key"] == "test-key"
    body = request["json"]
    for key in exchange["required_keys"]:
        assert key in body, key
    assert "# Tools" in body["system"]
    assert [m["role"] for m in body["messages"]] == ["user"]
    image = next(b for b in body["messages"][0]["content"] if b["type"] == "image")
    assert base64.b64decode(image["source"]["data"]) == obs.screenshot


def test_anthropic_base_url_option_and_server_errors_raise_backend_error():
    from weblica.policy.backends.base import BackendError

    with ProviderServer() as server:
        server.queue("anthropic_overloaded")
        policy = make_policy("anthropic:claude-sonnet-4-5", base_url=server.url, api_key="k")
        policy.backend.client = policy.backend.client.with_options(max_retries=0)
        with pytest.raises(BackendError, match="Overloaded|529"):
            run(policy.act(make_obs(), make_task(), []))


@pytest.mark.parametrize("name,convention", [
    ("Qwen/Qwen3-VL-4B-Thinking", "relative1000"), ("qwen3-vl-8b-instruct", "relative1000"),
    ("Qwen/Qwen2.5-VL-7B-Instruct", "smart_resize"), ("gpt-4.1", "viewport"),
])
def test_frame_from_served_model_name(name, convention):
    assert frame_for_model_name(name).convention == convention
