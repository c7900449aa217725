"""The LLM generator's parts without a model: bundle confinement of the file tools (hostile paths,
symlinks out), read/patch semantics, the retry helper on the SDKs' real error types, screenshot
pruning in both providers' message shapes, model specs, gate helpers and the shipped config."""
from __future__ import annotations

import asyncio
import os

import httpx
import pytest

from weblica.synth.agent_tools import BundleFiles, ToolError, anthropic_tools, openai_tools
from weblica.synth.gate import GateThresholds, page_paths, unseen_golds
from weblica.synth.llm import LLMConfig
from weblica.synth.llm_chat import (IMAGE_PLACEHOLDER, ProviderError, RetryPolicy, _anthropic_images, _openai_images,
                                    _prune_images, parse_model_spec, retry_after_seconds, with_retries)


@pytest.fixture()
def bundle(tmp_path):
    root = tmp_path / "site"
    (root / "public").mkdir(parents=True)
    (root / "site.json").write_text("{}")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("top secret")
    os.symlink(outside, root / "public" / "link")
    os.symlink(outside / "secret.txt", root / "public" / "secret.html")
    return BundleFiles(root), outside


@pytest.mark.parametrize("path", ["../x.html", "/etc/passwd", "public/../../x.html", "public/link/x.html",
                                  "public/secret.html", "~/x", "public\\..\\x", "", "public/a\x00b", 3])
def test_hostile_paths_are_refused_for_read_and_write(bundle, path):
    files, outside = bundle
    with pytest.raises(ToolError):
        files.write(path, "pwned")
    with pytest.raises(ToolError):
        files.read(path)
    assert (outside / "secret.txt").read_text() == "top secret" and sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


def test_writes_only_to_public_data_and_tasks(bundle):
    files, _ = bundle
    for path in ("site.json", "public", "other/x.html", "data.json/x"):
        with pytest.raises(ToolError, match="write only|directory"):
            files.write(path, "x")
    files.write("public/a/b.html", "<p>ok</p>")
    files.write("data.json", "{}")
    listing = files.list()
    assert "public/a/b.html  9" in listing and "secret" not in listing and "link" not in listing


def test_read_pages_by_line_and_patch_must_match_once(bundle):
    files, _ = bundle
    files.write("public/index.html", "\n".join(f"line {i}" for i in range(1, 11)) + "\n<p>a</p><p>a</p>")
    out = files.read("public/index.html", 3, 2)
    assert out.splitlines()[1:3] == ["    3  line 3", "    4  line 4"] and "offset=5" in out
    with pytest.raises(ToolError, match="positive integer"):
        files.read("public/index.html", 0)
    with pytest.raises(ToolError, match="occurs 2 times"):
        files.patch("public/index.html", "<p>a</p>", "<p>b</p>")
    with pytest.raises(ToolError, match="not found.*closest line is '<p>a</p><p>a</p>'"):
        files.patch("public/index.html", "<p>a</p><p>c</p>", "y")
    with pytest.raises(ToolError, match="no file"):
        files.patch("public/none.html", "a", "b")
    _, text = files.patch("public/index.html", "line 7\n", "line seven\n")
    assert "line seven" in text and "line 7\n" not in text


def test_tool_schemas_in_both_formats():
    names = [t["name"] for t in anthropic_tools()]
    assert names == [t["function"]["name"] for t in openai_tools()]
    patch = next(t for t in anthropic_tools() if t["name"] == "patch_file")
    assert patch["input_schema"]["required"] == ["path", "search", "replace"]


def _status_error(sdk: str, status: int, headers: dict[str, str]) -> Exception:
    import anthropic
    import openai

    module = anthropic if sdk == "anthropic" else openai
    response = httpx.Response(status, headers=headers, request=httpx.Request("POST", "http://127.0.0.1/v1/x"))
    return module.APIStatusError(f"HTTP {status}", response=response, body=None)


@pytest.mark.parametrize("sdk", ["anthropic", "openai"])
def test_retries_honour_retry_after_and_never_retry_a_bad_request(sdk):
    sleeps: list[float] = []

    async def sleep(s: float) -> None:
        sleeps.append(s)

    def flaky(errors: list[Exception]):
        async def call():
            if errors:
                raise errors.pop(0)
            return "ok"
        return call

    errors = [_status_error(sdk, 429, {"retry-after-ms": "1500"}), _status_error(sdk, 529, {}),
              _status_error(sdk, 500, {"retry-after": "Wed, 21 Oct 2026 07:28:00 GMT"}),
              _status_error(sdk, 503, {"retry-after": "900"})]
    assert asyncio.run(with_retries(flaky(errors), RetryPolicy(attempts=5, base_s=0.5, max_s=30), sleep)) == "ok"
    assert sleeps == [1.5, 1.0, 2.0, 30.0]  # ms header; backoff 0.5·2^1, 0.5·2^2 (a date is ignored); capped
    with pytest.raises(ProviderError, match="HTTP 400"):
        asyncio.run(with_retries(flaky([_status_error(sdk, 400, {})]), RetryPolicy(), sleep))
    with pytest.raises(ProviderError, match="HTTP 429"):
        asyncio.run(with_retries(flaky([_status_error(sdk, 429, {"x-should-retry": "false"})]), RetryPolicy(), sleep))
    assert len(sleeps) == 4
    assert retry_after_seconds({"retry-after": "2"}) == 2.0 and retry_after_seconds(None) is None


def test_only_the_last_k_screenshots_stay():
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}
    anthropic_messages = [{"role": "user", "content": "build"}] + [
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i}",
                                      "content": [{"type": "text", "text": "shot"}, dict(image)]}]} for i in range(3)]
    _prune_images(anthropic_messages, 2, _anthropic_images)
    kinds = [m["content"][0]["content"][1]["type"] for m in anthropic_messages[1:]]
    assert kinds == ["text", "image", "image"]
    assert anthropic_messages[1]["content"][0]["content"][1]["text"] == IMAGE_PLACEHOLDER
    openai_messages = [{"role": "user", "content": [{"type": "text", "text": "Screenshots:"},
                                                    {"type": "image_url", "image_url": {"url": "data:,"}}]}
                       for _ in range(3)]
    _prune_images(openai_messages, 0, _openai_images)
    assert not _openai_images(openai_messages)


def test_model_specs():
    assert parse_model_spec("openai:http://127.0.0.1:8000/v1#Qwen/Qwen3-VL;max_tokens=2048") == (
        "openai", "http://127.0.0.1:8000/v1", "Qwen/Qwen3-VL", {"max_tokens": "2048"})
    assert parse_model_spec("anthropic:claude-sonnet-4-5;base_url=http://h") == ("anthropic", "http://h",
                                                                                 "claude-sonnet-4-5", {})
    assert parse_model_spec("openai:gpt-4.1")[:3] == ("openai", None, "gpt-4.1")
    from weblica.synth.llm_chat import make_client

    assert make_client("anthropic:c;prompt_cache=false;keep_images=3;api_key=k").options.prompt_cache is False
    with pytest.raises(ValueError, match="bad option"):
        make_client("anthropic:c;prompt_cache=maybe")
    for bad in ("oracle", "hf:/x", "openai:http://h/v1", "nope:x"):
        with pytest.raises(ValueError):
            parse_model_spec(bad)


def test_gold_answers_by_check_mode(tmp_path):
    from weblica.env.task import Check, Task
    from weblica.scoring.state import normalize_text
    from weblica.synth.checks import answer_infeasible

    task = Task.from_dict({"id": "t", "start_url": "http://s.test/", "instruction": "i", "checks": [
        {"type": "answer_match", "expected": "Blue Kettle"},
        {"type": "answer_match", "expected": "12.5", "mode": "numeric", "tol": 0.01},
        {"type": "state_match", "path": "a", "expected": "x"}]})
    text = normalize_text("The BLUE  kettle costs $12.50.")
    assert unseen_golds(task, text, [12.5]) == []  # the state check has no gold to look for
    assert unseen_golds(task, text, [13.0]) == ["12.5"]
    assert unseen_golds(task, normalize_text("A red kettle"), [12.5]) == ["Blue Kettle"]

    def shown(check, text, numbers):
        return not unseen_golds(Task(id="t", start_url="http://s.test/", instruction="i", checks=[check]), text, numbers)
    assert not shown(Check("answer_match", "13", "numeric"), text, [12.5])
    assert shown(Check("answer_match", ["blue kettle", "costs"], "set"), text, [])
    assert not shown(Check("answer_match", "red, blue", "set"), text, [])
    assert shown(Check("answer_match", r"12\.50", "regex"), text, []) and not shown(Check("answer_match", "([", "regex"), text, [])
    assert shown(answer_infeasible(), text, [])  # a refusal has no gold on any page
    (tmp_path / "public" / "a").mkdir(parents=True)
    for rel in ("index.html", "help.html", "a/b.html", "a/style.css"):
        (tmp_path / "public" / rel).write_text("x")
    assert page_paths(tmp_path) == ["/a/b", "/help", "/"]


def test_shipped_config_loads_and_bad_keys_are_named(tmp_path, monkeypatch):
    config = LLMConfig.load()
    assert config.gate == GateThresholds(500, 40, 2.5, True) and config.chat.keep_images >= 1
    bad = tmp_path / "c.yaml"
    bad.write_text("gate: {min_link: 3}\n")
    with pytest.raises(ValueError, match="min_link"):
        LLMConfig.load(bad)
    monkeypatch.setenv("WEBLICA_SYNTH_LLM_CONFIG", str(tmp_path / "missing.yaml"))
    with pytest.raises(ValueError, match="cannot read the LLM generator config"):
        LLMConfig.load()


def test_gate_in_chromium_measures_the_start_page_and_finds_gold_on_inner_pages(tmp_path):
    from playwright.async_api import async_playwright

    from weblica.browser.launcher import launch_browser
    from weblica.env.task import Task
    from weblica.synth.gate import run_gate
    from weblica.synth.llm import SiteAgent
    from weblica.synth.spec import sample_spec

    spec = sample_spec(3, "forms", "books", generator="llm")
    agent = SiteAgent(None, spec, tmp_path / spec.site_id)  # type: ignore[arg-type]
    agent.scaffold()
    public = agent.root / "public"
    links = "".join(f'<li><a href="/help#{i}">Topic {i}</a></li>' for i in range(45))
    cells = "".join(f"<span>{i}</span>" for i in range(450))
    (public / "index.html").write_text(f'<!doctype html><html><body><ul>{links}</ul><div>{cells}</div>'
                                       '<div style="height:1500px">tall</div></body></html>')
    (public / "help.html").write_text("<!doctype html><p>The Blue Kettle costs 12.50 euros.</p>")

    def task(expected: str, mode: str = "exact") -> Task:
        return Task.from_dict({"id": f"t-{expected}", "start_url": spec.base_url + "/", "instruction": "i",
                               "checks": [{"type": "answer_match", "expected": expected, "mode": mode}]})

    async def gate(tasks, **thresholds):
        async with async_playwright() as pw:
            browser = await launch_browser(pw)
            try:
                return await run_gate(agent.root, spec.base_url, tasks, browser, GateThresholds(**thresholds))
            finally:
                await browser.close()

    report = asyncio.run(gate([task("Blue Kettle"), task("12.5", "numeric"), task("Red Teapot")]))
    assert report.start_page.links == 45 and report.start_page.elements >= 500 and report.start_page.screens > 2.5
    assert report.failures == ["t-Red Teapot: gold answer 'Red Teapot' appears on no rendered page"]
    assert report.pages == 2
    report = asyncio.run(gate([], min_links=46, min_screens=4.0))
    assert [f.split(";")[0] for f in report.failures] == ["the start page has 45 links (a[href])",
                                                         f"the start page has {report.start_page.screens:g} screens of content"]


def test_a_write_after_passing_checks_withdraws_acceptance_and_bad_task_lines_write_nothing(tmp_path):
    from weblica.synth.agent_tools import ToolCall
    from weblica.synth.llm import SiteAgent
    from weblica.synth.spec import sample_spec

    spec = sample_spec(3, "forms", "books", generator="llm")
    agent = SiteAgent(None, spec, tmp_path / spec.site_id)  # type: ignore[arg-type]
    agent.scaffold()
    agent.accepted = True
    out = asyncio.run(agent.tool(ToolCall("c1", "write_file", {"path": "public/x.html", "content": "<p>x</p>"})))
    assert not out.is_error and not agent.accepted
    out = asyncio.run(agent.tool(ToolCall("c2", "write_file", {"path": "tasks.jsonl", "content": '{"a": 1}\nnot json'})))
    assert out.is_error and "line 2 is not JSON" in out.text
    assert (agent.root / "tasks.jsonl").read_text() == ""
    out = asyncio.run(agent.tool(ToolCall("c3", "screenshot", {"path": "http://169.254.169.254/"})))
    assert out.is_error and "starting with '/'" in out.text
    out = asyncio.run(agent.tool(ToolCall("c4", "rm_rf", {})))
    assert out.is_error and "unknown tool" in out.text
