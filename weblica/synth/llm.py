"""The LLM generator: a coding agent writes a site bundle through tools until validation passes.

Providers: Anthropic's Messages API (`anthropic`) and any OpenAI-compatible chat-completions server
(`openai`). Tools: write_file, screenshot (1280x720 PNG + console errors), validate (plans compiled
and checked in Chromium, negatives tried), finish. The bundle has the same layout as procedural ones.
"""
from __future__ import annotations

import asyncio
import base64
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from weblica.synth.generate import SynthResult, site_seeds
from weblica.synth.site import SiteBuilder, render_site
from weblica.synth.spec import SiteSpec, sample_spec, skills, synth_dir

TOOLS = [
    {"name": "write_file", "description": "Write a file of the bundle (public/… is served).",
     "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                    "required": ["path", "content"]}},
    {"name": "screenshot", "description": "Screenshot a page of the site at 1280x720; returns console errors too.",
     "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}},
    {"name": "validate", "description": "Run every task's plan and checks in Chromium; report failures.",
     "parameters": {"type": "object", "properties": {}}},
    {"name": "finish", "description": "Stop: the site and its tasks are complete.",
     "parameters": {"type": "object", "properties": {}}},
]


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]


@dataclass
class Turn:
    text: str
    tool_calls: list[ToolCall]
    raw: Any = None


@dataclass
class ToolOutput:
    text: str
    image_png: bytes | None = None


class ChatClient(Protocol):
    def start(self, system: str, user: str) -> None: ...
    def turn(self) -> Turn: ...
    def tool_results(self, turn: Turn, outputs: list[ToolOutput]) -> None: ...


class AnthropicClient:
    """Messages API: tool_use blocks in, tool_result blocks (with image blocks) back."""

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None, max_tokens: int = 8192) -> None:
        import anthropic

        self.client = anthropic.Anthropic(base_url=base_url, api_key=api_key or os.environ.get("ANTHROPIC_API_KEY", "unset"))
        self.model, self.max_tokens = model, max_tokens
        self.system, self.messages = "", []  # type: ignore[var-annotated]

    def start(self, system: str, user: str) -> None:
        self.system, self.messages = system, [{"role": "user", "content": user}]

    def turn(self) -> Turn:
        tools = [{"name": t["name"], "description": t["description"], "input_schema": t["parameters"]} for t in TOOLS]
        response = self.client.messages.create(model=self.model, max_tokens=self.max_tokens, system=self.system,
                                               messages=self.messages, tools=tools)
        content = [block.model_dump(exclude_none=True) for block in response.content]
        self.messages.append({"role": "assistant", "content": content})
        text = "".join(b.get("text", "") for b in content if b["type"] == "text")
        calls = [ToolCall(b["id"], b["name"], dict(b.get("input") or {})) for b in content if b["type"] == "tool_use"]
        return Turn(text, calls, response)

    def tool_results(self, turn: Turn, outputs: list[ToolOutput]) -> None:
        blocks = []
        for call, out in zip(turn.tool_calls, outputs):
            inner: list[dict[str, Any]] = [{"type": "text", "text": out.text}]
            if out.image_png:
                inner.append({"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                          "data": base64.b64encode(out.image_png).decode()}})
            blocks.append({"type": "tool_result", "tool_use_id": call.id, "content": inner})
        self.messages.append({"role": "user", "content": blocks})


class OpenAIClient:
    """Chat completions: tool_calls in, `tool` messages back; images follow as a user message, since
    tool messages carry text only."""

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None) -> None:
        import openai

        self.client = openai.OpenAI(base_url=base_url, api_key=api_key or os.environ.get("OPENAI_API_KEY", "unset"))
        self.model = model
        self.messages: list[dict[str, Any]] = []

    def start(self, system: str, user: str) -> None:
        self.messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]

    def turn(self) -> Turn:
        tools = [{"type": "function", "function": t} for t in TOOLS]
        response = self.client.chat.completions.create(model=self.model, messages=self.messages, tools=tools)
        message = response.choices[0].message
        self.messages.append(message.model_dump(exclude_none=True))
        calls = []
        for call in message.tool_calls or []:
            try:
                args = json.loads(call.function.arguments or "{}")
            except json.JSONDecodeError:
                args = {"_error": f"arguments are not valid JSON: {call.function.arguments[:200]}"}
            calls.append(ToolCall(call.id, call.function.name, args))
        return Turn(message.content or "", calls, response)

    def tool_results(self, turn: Turn, outputs: list[ToolOutput]) -> None:
        images = []
        for call, out in zip(turn.tool_calls, outputs):
            self.messages.append({"role": "tool", "tool_call_id": call.id, "content": out.text})
            if out.image_png:
                images.append({"type": "image_url", "image_url": {
                    "url": "data:image/png;base64," + base64.b64encode(out.image_png).decode()}})
        if images:
            self.messages.append({"role": "user", "content": [{"type": "text", "text": "Screenshots:"}] + images})


def make_client(model: str) -> ChatClient:
    """`anthropic:MODEL` or `openai:MODEL`; base URLs from ANTHROPIC_BASE_URL / OPENAI_BASE_URL."""
    provider, _, name = model.partition(":")
    if provider == "anthropic":
        return AnthropicClient(name, base_url=os.environ.get("ANTHROPIC_BASE_URL"))
    if provider == "openai":
        return OpenAIClient(name, base_url=os.environ.get("OPENAI_BASE_URL"))
    raise ValueError(f"unknown model '{model}': use anthropic:MODEL or openai:MODEL (set WEBLICA_SYNTH_MODEL)")


@dataclass
class SiteAgent:
    """One site's agent loop over a chat client; stops at `finish`, a passing validation, or the budget."""

    client: ChatClient
    spec: SiteSpec
    root: Path
    max_turns: int = 30
    min_tasks: int = 10
    browser: Any = None  # one Chromium for every screenshot and validation of the loop
    log: list[str] = field(default_factory=list)
    valid_tasks: int = 0

    def prompt(self) -> str:
        entry = skills()[self.spec.skill]
        from weblica.synth.spec import categories
        cat = categories()[self.spec.category]
        template = (synth_dir() / "prompts" / "llm_generator.md").read_text(encoding="utf-8")
        style = self.spec.style
        return template.format(base_url=self.spec.base_url, category=self.spec.category, skill=self.spec.skill,
                               skill_title=entry["title"], site_must_contain=entry["site_must_contain"],
                               checked_by=entry["checked_by"], kinds=", ".join(cat["kinds"]),
                               makers=", ".join(cat["makers"]), min_tasks=self.min_tasks,
                               style=f"{style.aesthetic}, {style.mode} mode, {style.archetype} layout, "
                                     f"{style.widgets} widgets, locale {style.locale}")

    def scaffold(self) -> None:
        """site.json and the shared assets, so the agent starts from a served, styled empty site."""
        site = SiteBuilder(self.spec)
        site.spec.generator = "llm"
        files = render_site(site)
        for rel in ("assets/site.css", "assets/site.js", "assets/widgets.js", "assets/catalog.json"):
            target = self.root / "public" / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(files[rel])
        meta = {"spec": self.spec.to_dict(), "name": site.name, "initial_state": {}, "generator": "llm"}
        (self.root / "site.json").write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        (self.root / "tasks.jsonl").touch()

    async def tool(self, call: ToolCall) -> ToolOutput:
        try:
            if "_error" in call.arguments:
                return ToolOutput("error: " + call.arguments["_error"])
            if call.name == "write_file":
                return self._write(call.arguments["path"], call.arguments["content"])
            if call.name == "screenshot":
                png, errors = await _screenshot(self.browser, self.root, self.spec, call.arguments.get("path", "/"))
                return ToolOutput(f"console errors: {errors or 'none'}", png)
            if call.name == "validate":
                return ToolOutput(await self._validate())
            if call.name == "finish":
                return ToolOutput("finished")
            return ToolOutput(f"error: unknown tool {call.name}")
        except Exception as exc:  # the agent sees its mistakes and fixes them
            return ToolOutput(f"error: {type(exc).__name__}: {exc}")

    def _write(self, rel: str, content: str) -> ToolOutput:
        target = (self.root / rel).resolve()
        allowed = target.name in ("data.json", "tasks.jsonl") and target.parent == self.root.resolve()
        if not (allowed or (self.root / "public").resolve() in target.parents):
            return ToolOutput("error: write only public/…, data.json or tasks.jsonl")
        if target.name == "tasks.jsonl":
            content = _normalize_tasks(content, self.spec)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
        return ToolOutput(f"wrote {rel} ({len(content)} bytes)")

    async def _validate(self) -> str:
        from weblica.env.task import load_tasks
        from weblica.synth.validate import validate_bundles

        report, _ = await validate_bundles([self.root], compile_plans=True, browser=self.browser)
        self.valid_tasks = report.valid_tasks
        summary = report.to_dict()
        summary["needed"] = self.min_tasks
        summary["tasks_in_file"] = len(load_tasks(self.root / "tasks.jsonl"))
        return json.dumps(summary)

    async def run(self) -> int:
        self.root.mkdir(parents=True, exist_ok=True)
        self.scaffold()
        self.client.start("You are a careful front-end engineer and test author.", self.prompt())
        for _ in range(self.max_turns):
            turn = self.client.turn()
            self.log.append(turn.text)
            if not turn.tool_calls:
                break
            outputs = [await self.tool(call) for call in turn.tool_calls]
            self.client.tool_results(turn, outputs)
            if any(c.name == "finish" for c in turn.tool_calls) or self.valid_tasks >= self.min_tasks:
                break
        return self.valid_tasks


def _normalize_tasks(content: str, spec: SiteSpec) -> str:
    """Fill in what the agent may leave out (source, absolute start URLs) so tasks load everywhere."""
    lines = []
    for index, line in enumerate(l for l in content.splitlines() if l.strip()):
        task = json.loads(line)
        task.setdefault("id", f"{spec.site_id}-t{index + 1:02d}")
        task["source"] = {"kind": "synth", "site": spec.site_id, "bundle": spec.site_id}
        start = task.get("start_url", "/")
        task["start_url"] = spec.base_url + start if start.startswith("/") else start
        task.setdefault("skill", spec.skill)
        task.setdefault("category", spec.category)
        lines.append(json.dumps(task, sort_keys=True, ensure_ascii=False))
    return "\n".join(lines) + "\n"


async def _screenshot(browser: Any, root: Path, spec: SiteSpec, path: str) -> tuple[bytes, list[str]]:
    from weblica.browser.launcher import context_kwargs
    from weblica.serve.server import SiteServer

    with SiteServer([root]) as server:
        context = await browser.new_context(**context_kwargs(proxy=server.url))
        try:
            page = await context.new_page()
            errors: list[str] = []
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            await page.goto(spec.base_url + path, wait_until="load")
            return await page.screenshot(), errors
        finally:
            await context.close()


def synthesize_llm(skill: str | None = None, category: str | None = None, style: str | None = None, n: int = 1,
                   seed: int = 0, out: Path = Path("sites"), client: ChatClient | None = None,
                   max_turns: int = 30, min_tasks: int = 10) -> list[SynthResult]:
    """N bundles written by the agent; invalid tasks are dropped as for procedural sites."""
    return asyncio.run(_synthesize_llm(skill, category, style, n, seed, out, client, max_turns, min_tasks))


async def _synthesize_llm(skill: str | None, category: str | None, style: str | None, n: int, seed: int, out: Path,
                          client: ChatClient | None, max_turns: int, min_tasks: int) -> list[SynthResult]:
    from playwright.async_api import async_playwright

    from weblica.browser.launcher import launch_browser
    from weblica.synth.generate import keep_valid

    results = []
    async with async_playwright() as pw:
        browser = await launch_browser(pw)
        try:
            for site_seed in site_seeds(seed, n):
                spec = sample_spec(site_seed, skill, category, style, generator="llm")
                model = os.environ.get("WEBLICA_SYNTH_MODEL", "anthropic:claude-sonnet-4-5")
                agent = SiteAgent(client or make_client(model), spec, out / spec.site_id, max_turns=max_turns,
                                  min_tasks=min_tasks, browser=browser)
                await agent.run()
                result = (await keep_valid([agent.root], browser=browser))[0]
                result.min_tasks = min_tasks
                results.append(result)
        finally:
            await browser.close()
    return results
