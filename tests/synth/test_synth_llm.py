"""The LLM generator's agent loop against a local server speaking the Anthropic Messages and OpenAI
chat-completions wire formats (tests/llm_agent_server.py plays a scripted conversation): tool calls go
out, tool results (and screenshots) come back, failures of the provider are retried, a cut reply is
reported back, hostile paths are refused, the gate rejects a site until the agent fixes it, and the
bundle is validated in Chromium like a procedural one."""
from __future__ import annotations

import json

import pytest
from llm_agent_server import ScriptedProvider

from weblica.env.task import load_tasks
from weblica.synth.gate import GateThresholds
from weblica.synth.llm import CUT_CALL, REJECTED_DIR, BudgetLimits, LLMConfig, synthesize_llm
from weblica.synth.llm_chat import IMAGE_PLACEHOLDER, ChatOptions, RetryPolicy, make_client

HEAD = """<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>Kettles</title>
<link rel="stylesheet" href="/assets/site.css"><script>window.SITE = {}</script>
<script src="/assets/site.js" defer></script></head>"""
FORM = """<form data-api="/api/submissions" data-redirect="/thanks" novalidate>
<label for="email">Email</label><input type="email" name="email" id="email" required>
<button type="submit" id="go">Subscribe</button></form>"""
# the first version: tasks validate, but the price the answer task expects is on no page and the start
# page is far below the gate's size minimums
PAGE = HEAD + f"""<body data-page="home"><main><h1>Blue Kettle</h1><p>Kettle prices on request.</p>{FORM}</main></body></html>"""
NAV = "<nav><ul>" + "".join(f'<li><a href="/help#{i}">Help topic {i}</a></li>' for i in range(15)) + "</ul></nav>"
FIX = {"path": "public/index.html", "search": "<p>Kettle prices on request.</p>",
       "replace": f'<p>Price: $12.50</p>{NAV}<div style="height:1500px">More kettles below.</div>'}
TASKS = [
    {"start_url": "/", "instruction": "What does the Blue Kettle cost?", "difficulty": "easy", "rubric": ["price"],
     "checks": [{"type": "answer_match", "expected": r"(?<![\d.,])12\.50(?!\d)", "mode": "regex"}],
     "metadata": {"plan": [{"op": "done", "answer": "$12.50"}], "negatives": {"answers": ["$13.00", "12.05"]}}},
    {"start_url": "/", "instruction": "Subscribe with ann@example.test", "difficulty": "easy", "rubric": ["saved"],
     "checks": [{"type": "state_match", "path": "submissions", "expected": 1, "mode": "count"},
                {"type": "state_match", "path": "submissions.0.email", "expected": "ann@example.test"}],
     "metadata": {"plan": [{"op": "fill", "sel": "#email", "text": "ann@example.test"}, {"op": "click", "sel": "#go"}]}},
]
RATE_LIMITED = {"wire": {"anthropic": "anthropic_rate_limited", "openai": "openai_rate_limited"}}
OVERLOADED = {"wire": {"anthropic": "anthropic_overloaded", "openai": "openai_server_overloaded"}}
REFUSED = {"wire": {"anthropic": "anthropic_messages_refusal", "openai": "openai_chat_content_filter"}}
HOSTILE = ["../escape.html", "/tmp/weblica-llm-escape.html", "public/../../escape.html", "site.json"]
SCRIPT = [
    {"calls": [("write_file", {"path": "public/index.html", "content": PAGE}),
               ("write_file", {"path": "public/thanks.html", "content": PAGE.replace("Blue Kettle", "Thanks")}),
               ("write_file", {"path": "data.json", "content": json.dumps({"kettle": {"price": 12.5}})}),
               ("write_file", {"path": "./tasks.jsonl", "content": "\n".join(json.dumps(t) for t in TASKS)})]
              + [("write_file", {"path": p, "content": "pwned"}) for p in HOSTILE]},
    RATE_LIMITED,
    {"calls": [("screenshot", {"path": "/"}), ("read_file", {"path": "public/index.html", "offset": 4, "limit": 1})]},
    {"calls": [("run_checks", {})]},  # 2/2 tasks valid, but the gate fails
    {"calls": [("list_files", {}), ("write_file", {"path": "public/catalogue.html", "content": PAGE * 40})],
     "cut": True},
    OVERLOADED,
    OVERLOADED,
    {"calls": [("patch_file", {"path": "public/index.html", "search": "Kettle", "replace": "Teapot"}),
               ("patch_file", FIX)]},
    {"calls": [("screenshot", {"path": "/"})]},
    {"calls": [("run_checks", {})]},  # accepted: the loop ends here
    {"calls": [("finish", {})]},
]


def config(sleeps: list[float] | None = None, **budget) -> LLMConfig:
    async def sleep(seconds: float) -> None:  # instant and recorded: retries shape nothing but the log
        if sleeps is not None:
            sleeps.append(seconds)

    return LLMConfig(min_tasks=2, budget=BudgetLimits(**{"max_turns": 14, **budget}),
                     chat=ChatOptions(keep_images=1, max_tokens=4096, sleep=sleep, retry=RetryPolicy(attempts=3)),
                     gate=GateThresholds(min_elements=40, min_links=12, min_screens=1.5))


def model_spec(kind: str, url: str) -> str:
    return (f"anthropic:claude-test;base_url={url};api_key=test" if kind == "anthropic"
            else f"openai:{url}/v1#gpt-test;api_key=test")


def tool_results(kind: str, body: dict) -> dict[str, dict]:
    """Tool results of a request by call id: {'text', 'error', 'images'}."""
    out = {}
    for message in body["messages"]:
        if kind == "anthropic" and message["role"] == "user" and isinstance(message["content"], list):
            for block in message["content"]:
                if block.get("type") == "tool_result":
                    out[block["tool_use_id"]] = {"text": block["content"][0]["text"], "error": block.get("is_error", False),
                                                 "images": sum(p["type"] == "image" for p in block["content"])}
        elif kind == "openai" and message["role"] == "tool":
            out[message["tool_call_id"]] = {"text": message["content"], "error": message["content"].startswith("error:")}
    return out


def images_in(kind: str, body: dict) -> int:
    kind_name = "image" if kind == "anthropic" else "image_url"
    found = 0
    for message in body["messages"]:
        for part in message["content"] if isinstance(message["content"], list) else []:
            found += part.get("type") == kind_name
            found += sum(p.get("type") == kind_name for p in part.get("content", []) if isinstance(part.get("content"), list))
    return found


@pytest.mark.parametrize("kind", ["anthropic", "openai"])
def test_agent_writes_patches_survives_retries_and_a_cut_reply_and_passes_the_gate(tmp_path, kind):
    sleeps: list[float] = []
    with ScriptedProvider(SCRIPT) as server:
        cfg = config(sleeps)
        [result] = synthesize_llm(skill="forms", category="books", seed=3, out=tmp_path / "sites",
                                  client_factory=lambda: make_client(model_spec(kind, server.url), cfg.chat), config=cfg)
    assert result.ok and result.tasks_kept == 2, result.failures
    tasks = load_tasks(result.path / "tasks.jsonl")
    assert all(t.oracle and t.source.kind == "synth" for t in tasks)
    assert json.loads((result.path / "site.json").read_text())["generator"] == "llm"
    # 429 honoured its retry-after (7 s); the two overloads backed off 1 s then 2 s (no jitter)
    assert sleeps == [7.0, 1.0, 2.0]
    record = json.loads((result.path / "agent.json").read_text())
    assert record["accepted"] and record["usage"] == {"turns": 7, "tokens_in": 7000 + 4120, "tokens_out": 6 * 200 + 16384,
                                                      "tool_calls": 16}  # the cut call is not counted
    assert len(record["retries"]) == 3 and "retry 1 in 7s" in record["retries"][0]
    bodies = [r["json"] for r in server.requests]
    assert len(bodies) == 10  # 7 replies + 3 failed requests; accepted at the second run_checks, no finish
    prefix = "toolu" if kind == "anthropic" else "call"
    last = tool_results(kind, bodies[-1])
    # hostile paths: each an error result, nothing written outside public/, data.json, tasks.jsonl
    for i in range(4, 4 + len(HOSTILE)):
        assert last[f"{prefix}_00_{i}"]["error"], last[f"{prefix}_00_{i}"]
    assert not (tmp_path / "escape.html").exists() and not (tmp_path / "sites" / "escape.html").exists()
    assert not __import__("os").path.exists("/tmp/weblica-llm-escape.html")
    assert "pwned" not in (result.path / "site.json").read_text()
    assert "lines 4-4 of" in last[f"{prefix}_02_1"]["text"]
    # the gate's first verdict named the missing gold answer and the small start page
    gate = json.loads(last[f"{prefix}_03_0"]["text"])
    assert gate["valid_tasks"] == 2 and not gate["accepted"]
    assert any("gold answer" in f for f in gate["gate"]["failures"])
    assert any("links" in f for f in gate["gate"]["failures"])
    # the cut reply: the complete call ran, the cut one was refused and nothing of it written
    assert "site.json" in last[f"{prefix}_04_0"]["text"]
    assert last[f"{prefix}_04_1"] == {**last[f"{prefix}_04_1"], "text": CUT_CALL, "error": True}
    assert not (result.path / "public" / "catalogue.html").exists()
    # the ambiguous patch was refused, the exact one applied
    assert "occurs" in last[f"{prefix}_07_0"]["text"] and last[f"{prefix}_07_0"]["error"]
    html = (result.path / "public" / "index.html").read_text()
    assert "Teapot" not in html and "$12.50" in html and html.count('href="/help') == 15
    # only the last screenshot is kept in context; the earlier one is a placeholder
    assert images_in(kind, bodies[-1]) == 1
    assert IMAGE_PLACEHOLDER in json.dumps(bodies[-1])
    # both providers got the tools in their own schema
    tools = bodies[0]["tools"]
    names = {t["name"] for t in tools} if kind == "anthropic" else {t["function"]["name"] for t in tools}
    assert {"list_files", "read_file", "write_file", "patch_file", "screenshot", "run_checks", "finish"} <= names
    assert all(("input_schema" in t) if kind == "anthropic" else (t["type"] == "function") for t in tools)
    headers = server.requests[0]["headers"]
    assert (headers["x-api-key"] == "test" and "anthropic-version" in headers if kind == "anthropic"
            else headers["authorization"] == "Bearer test")
    assert bodies[0]["max_tokens"] == 4096
    if kind == "anthropic":  # one rolling prompt-cache breakpoint on the newest block, one on the system prompt
        assert bodies[-1]["system"][0]["cache_control"] == {"type": "ephemeral"}
        assert json.dumps(bodies[-1]["messages"]).count("cache_control") == 1
        assert "cache_control" in bodies[-1]["messages"][-1]["content"][-1]


@pytest.mark.parametrize("kind,refusal", [("anthropic", REFUSED), ("openai", REFUSED),
                                          ("openai", {"wire": {"openai": "openai_chat_refusal"}})])
def test_refusal_fails_the_site_with_its_reason(tmp_path, kind, refusal):
    with ScriptedProvider([refusal]) as server:
        cfg = config()
        [result] = synthesize_llm(skill="forms", seed=1, out=tmp_path, config=cfg,
                                  client_factory=lambda: make_client(model_spec(kind, server.url), cfg.chat))
    assert not result.ok and "the model refused" in result.failures[0]
    assert "can't help" in result.failures[0] or "content_filter" in result.failures[0]
    assert len(server.requests) == 1
    assert result.path == tmp_path / REJECTED_DIR / result.site_id and (result.path / "site.json").exists()
    assert not (tmp_path / result.site_id).exists()  # `weblica validate OUT` does not see a rejected site


def test_retries_spent_fail_the_site_with_the_provider_error(tmp_path):
    sleeps: list[float] = []
    with ScriptedProvider([OVERLOADED]) as server:
        cfg = config(sleeps)
        [result] = synthesize_llm(skill="forms", seed=1, out=tmp_path, config=cfg,
                                  client_factory=lambda: make_client(model_spec("anthropic", server.url), cfg.chat))
    assert not result.ok and "provider error" in result.failures[0] and "529" in result.failures[0]
    assert len(server.requests) == 3 and sleeps == [1.0, 2.0]


@pytest.mark.parametrize("budget,reason", [({"max_turns": 3}, "3 of 3 max_turns"),
                                           ({"max_tool_calls": 4}, "4 of 4 max_tool_calls"),
                                           ({"max_tokens_out": 500}, "600 > 500 max_tokens_out")])
def test_each_site_has_its_own_budget_and_sites_run_in_parallel(tmp_path, budget, reason):
    loop = [{"calls": [("list_files", {}), ("read_file", {"path": "site.json"})]}]
    with ScriptedProvider(loop) as server:
        cfg = config(**budget)
        results = synthesize_llm(category="books", skill="forms", n=2, seed=5, out=tmp_path, config=cfg, parallel=2,
                                 client_factory=lambda: make_client(model_spec("openai", server.url), cfg.chat))
    assert len(results) == 2 and len({r.site_id for r in results}) == 2
    for r in results:
        assert not r.ok and reason in r.failures[0], r.failures
    # two conversations, each spending its own budget
    per_site = {}
    for req in server.requests:
        per_site[req["key"]] = per_site.get(req["key"], 0) + 1
    expected = {"max_turns": 3, "max_tool_calls": 2, "max_tokens_out": 3}[next(iter(budget))]
    assert sorted(per_site.values()) == [expected, expected]


@pytest.mark.parametrize("kind", ["anthropic", "openai"])
@pytest.mark.parametrize("cut", [False, True])
def test_plain_text_turns_are_nudged_back_to_the_tools_and_cut_text_is_continued(tmp_path, kind, cut):
    with ScriptedProvider([{"text": "I think the site is", "cut": cut}]) as server:
        cfg = config(max_turns=2)
        [result] = synthesize_llm(skill="forms", seed=2, out=tmp_path, config=cfg,
                                  client_factory=lambda: make_client(model_spec(kind, server.url), cfg.chat))
    assert "max_turns" in result.failures[0]
    second = server.requests[1]["json"]["messages"]
    said = second[-1]["content"][0]["text"] if kind == "anthropic" else second[-1]["content"]
    assert second[-1]["role"] == "user" and second[-2]["role"] == "assistant"
    assert ("was cut at the output-token limit" if cut else "not accepted yet") in said


def test_cli_model_flag_reaches_the_provider_and_bad_specs_are_one_line_errors(tmp_path):
    from click.testing import CliRunner

    from weblica.cli import get_cli

    runner = CliRunner()
    with ScriptedProvider([REFUSED]) as server:
        res = runner.invoke(get_cli(), ["synth", "--generator", "llm", "--skill", "forms", "--out", str(tmp_path),
                                   "--model", f"openai:{server.url}/v1#gpt-test;api_key=k", "--parallel", "2",
                                   "--split", "val", "--json"])
    assert res.exit_code == 1, res.output
    summary = json.loads(res.stdout)
    from weblica.synth.splits import load_manifest

    spec = json.loads((tmp_path / REJECTED_DIR / summary["sites"][0]["site_id"] / "site.json").read_text())["spec"]
    assert spec["category"] in load_manifest().categories  # --split reaches the LLM generator
    assert "the model refused" in summary["sites"][0]["failures"][0]
    assert server.requests[0]["json"]["model"] == "gpt-test"
    assert server.requests[0]["headers"]["authorization"] == "Bearer k"
    for args, message in ((["--model", "openai:http://127.0.0.1:9/v1"], "names no model"),
                          (["--model", "gpt-4:x"], "unknown policy"),
                          (["--model", "anthropic:claude;colour=red"], "unknown option"),
                          (["--parallel", "0"], "--parallel must be at least 1")):
        res = runner.invoke(get_cli(), ["synth", "--generator", "llm", "--out", str(tmp_path), *args])
        assert res.exit_code != 0 and message in res.output, res.output
        assert "Traceback" not in res.output
    res = runner.invoke(get_cli(), ["synth", "--model", "anthropic:claude", "--out", str(tmp_path)])
    assert res.exit_code != 0 and "--generator llm" in res.output


def test_one_sites_crash_does_not_lose_the_others(tmp_path):
    calls = []

    def factory():
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("no client for you")
        return make_client(model_spec("anthropic", server.url), cfg.chat)

    with ScriptedProvider([REFUSED]) as server:
        cfg = config()
        results = synthesize_llm(skill="forms", n=2, seed=4, out=tmp_path, config=cfg, client_factory=factory)
    assert [("no client for you" in r.failures[0], "refused" in r.failures[0]) for r in results] == [
        (True, False), (False, True)]
