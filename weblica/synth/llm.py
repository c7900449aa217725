"""The LLM generator: a coding agent writes a site bundle through tools until the site is accepted.

Accepted = at least `min_tasks` tasks validate in Chromium (plans run, checks pass, negatives rejected)
and the gate passes (gold answers on the rendered pages, start-page size minimums; `gate.py`). Tools,
their schemas and the bundle confinement are in `agent_tools.py`; the provider conversations
(Anthropic, OpenAI-compatible), retries and screenshot pruning in `llm_chat.py`. Every site has its own
budget (turns, tokens in/out, tool calls); sites run in parallel on one browser. The bundle layout is
the procedural one; a site that is not accepted is moved to `OUT/_rejected/`.
"""
from __future__ import annotations

import asyncio
import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from weblica.progress import OptionalBar
from weblica.synth.agent_tools import TOOL_ALIASES, BundleFiles, ToolCall, ToolError, ToolOutput, error
from weblica.synth.gate import GateThresholds, run_gate, site_page
from weblica.synth.generate import SynthResult, site_seeds
from weblica.synth.llm_chat import ChatClient, ChatOptions, ProviderError, RetryPolicy, make_client
from weblica.synth.page_metrics import measure
from weblica.synth.genres.registry import new_site
from weblica.site_runtime import runtime_asset
from weblica.synth.site import render_site
from weblica.synth.spec import SiteSpec, all_skills, categories, sample_spec, synth_dir

DEFAULT_MODEL = "anthropic:claude-sonnet-4-5"
REJECTED_DIR = "_rejected"
MAX_REPORTED_FAILURES = 40
AGENT_RECORD = "agent.json"  # in the bundle, beside site.json (not served): how the site was made and at what cost
SYSTEM = "You are a careful front-end engineer and test author. You work only through the tools."
CUT_CALL = ("error: your reply was cut at the output-token limit while you were writing this call, so "
            "nothing of it was run (no file was written). Continue with smaller edits: patch_file for "
            "changes, or several smaller files instead of one large write_file.")
CUT_TEXT = "Your reply was cut at the output-token limit. Continue where you stopped, in smaller steps."


@dataclass
class BudgetLimits:
    max_turns: int = 40
    max_tokens_in: int = 3_000_000
    max_tokens_out: int = 300_000
    max_tool_calls: int = 200


@dataclass
class Usage:
    turns: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    tool_calls: int = 0

    def over(self, limits: BudgetLimits) -> str | None:
        """Before a turn: the first limit reached (turns, tool calls) or exceeded (tokens), as a reason."""
        for used, limit, name in ((self.turns, limits.max_turns, "max_turns"),
                                  (self.tool_calls, limits.max_tool_calls, "max_tool_calls")):
            if used >= limit:
                return f"budget exceeded: {used} of {limit} {name}"
        return self.tokens_over(limits)

    def tokens_over(self, limits: BudgetLimits) -> str | None:
        for used, limit, name in ((self.tokens_in, limits.max_tokens_in, "max_tokens_in"),
                                  (self.tokens_out, limits.max_tokens_out, "max_tokens_out")):
            if used > limit:
                return f"budget exceeded: {used} > {limit} {name}"
        return None

    def to_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


@dataclass
class LLMConfig:
    min_tasks: int = 10
    budget: BudgetLimits = field(default_factory=BudgetLimits)
    chat: ChatOptions = field(default_factory=ChatOptions)
    gate: GateThresholds = field(default_factory=GateThresholds)

    @classmethod
    def load(cls, path: Path | None = None) -> "LLMConfig":
        import yaml

        default = synth_dir() / "prompts" / "llm_generator.yaml"
        path = path or Path(os.environ.get("WEBLICA_SYNTH_LLM_CONFIG") or default)
        try:
            raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise ValueError(f"cannot read the LLM generator config {path}: {exc}") from None
        try:
            return cls(min_tasks=int(raw.get("min_tasks", 10)), budget=BudgetLimits(**raw.get("budget", {})),
                       chat=ChatOptions(retry=RetryPolicy(**raw.get("retry", {})), **raw.get("context", {})),
                       gate=GateThresholds.from_dict(raw.get("gate")))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{path}: {exc}") from None


@dataclass
class AgentOutcome:
    accepted: bool
    reason: str
    usage: Usage


class SiteAgent:
    """One site's agent loop: tool calls run, results go back, until accepted or out of budget."""

    def __init__(self, client: ChatClient, spec: SiteSpec, root: Path, config: LLMConfig | None = None,
                 browser: Any = None) -> None:
        self.client, self.spec, self.root = client, spec, root
        self.config = config or LLMConfig()
        self.browser = browser  # one Chromium for every screenshot, validation and gate of the loop
        self.files = BundleFiles(root)
        self.usage = Usage()
        self.accepted = False
        self.last_report = "run_checks has not been called yet"
        self.log: list[str] = []

    def prompt(self) -> str:
        entry, cat, style, gate = (all_skills()[self.spec.skill], categories()[self.spec.category], self.spec.style,
                                   self.config.gate)
        template = (synth_dir() / "prompts" / "llm_generator.md").read_text(encoding="utf-8")
        return template.format(base_url=self.spec.base_url, category=self.spec.category, skill=self.spec.skill,
                               skill_title=entry["title"], site_must_contain=entry["site_must_contain"],
                               checked_by=entry["checked_by"], kinds=", ".join(cat["kinds"]),
                               makers=", ".join(cat["makers"]), min_tasks=self.config.min_tasks,
                               min_elements=gate.min_elements, min_links=gate.min_links, min_screens=gate.min_screens,
                               max_turns=self.config.budget.max_turns,
                               style=f"{style.aesthetic}, {style.mode} mode, {style.archetype} layout, "
                                     f"{style.widgets} widgets, locale {style.locale}")

    def scaffold(self) -> None:
        """site.json and the shared assets, so the agent starts from a served, styled empty site."""
        if (self.root / "site.json").exists():
            shutil.rmtree(self.root)  # a bundle of an earlier run: start clean, no stale pages
        site = new_site(self.spec)
        site.spec.generator = "llm"
        files = render_site(site)
        for rel in ("assets/site.css", "assets/site.js", "assets/widgets.js", "assets/catalog.json"):
            target = self.root / "public" / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            # the runtime's scripts are copied for the agent to read (and change); the server serves a
            # bundle's own copy before the package's
            target.write_bytes(files[rel] if rel in files else runtime_asset(rel))
        meta = {"spec": self.spec.to_dict(), "name": site.name, "initial_state": {}, "generator": "llm"}
        (self.root / "site.json").write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        (self.root / "tasks.jsonl").touch()

    async def tool(self, call: ToolCall) -> ToolOutput:
        name, args = TOOL_ALIASES.get(call.name, call.name), call.arguments
        try:
            if "_error" in args:
                return error(args["_error"])
            if name == "list_files":
                return ToolOutput(self.files.list())
            if name == "read_file":
                return ToolOutput(self.files.read(args.get("path"), args.get("offset", 1), args.get("limit", 400)))
            if name == "write_file":
                return self._save(args.get("path"), args.get("content"))
            if name == "patch_file":
                _, text = self.files.patch(args.get("path"), args.get("search"), args.get("replace"))
                out = self._save(args.get("path"), text)
                return ToolOutput(out.text.replace("wrote", "patched", 1)) if not out.is_error else out
            if name == "screenshot":
                return await self._screenshot(args.get("path", "/"))
            if name == "run_checks":
                return ToolOutput(await self.run_checks())
            if name == "finish":
                if not self.accepted:
                    return ToolOutput("not accepted yet, so not finished: " + await self.run_checks(), is_error=True)
                return ToolOutput("finished")
            return error(f"unknown tool {call.name!r}; the tools are list_files, read_file, write_file, "
                         "patch_file, screenshot, run_checks, finish")
        except ToolError as exc:
            return error(str(exc))
        except Exception as exc:  # the agent sees its mistakes and fixes them
            return error(f"{type(exc).__name__}: {str(exc)[:500]}")

    def _save(self, rel: Any, content: Any) -> ToolOutput:
        if self.files.resolve(rel, for_write=True) == self.files.root / "tasks.jsonl" and isinstance(content, str):
            content = _normalize_tasks(content, self.spec)  # however the path is spelled (./tasks.jsonl)
        self.files.write(rel, content)
        self.accepted = False  # the checks passed on other files: they must run again
        return ToolOutput(f"wrote {rel} ({len(content.encode('utf-8'))} bytes)")

    async def _screenshot(self, path: Any) -> ToolOutput:
        if not isinstance(path, str) or not path.startswith("/"):
            raise ToolError(f"screenshot path must be a site path starting with '/', got {path!r}")
        png, errors, size = await _screenshot(self.browser, self.root, self.spec, path)
        return ToolOutput(f"{path}: console errors: {errors or 'none'}; page size: {json.dumps(size)}", png)

    async def run_checks(self) -> str:
        from weblica.env.task import load_tasks
        from weblica.synth.validate import validate_bundles

        report, per_bundle = await validate_bundles([self.root], compile_plans=True, browser=self.browser)
        valid = [task for task, outcome in per_bundle.get(self.root, []) if outcome.valid]
        gate = await run_gate(self.root, self.spec.base_url, valid, self.browser, self.config.gate)
        self.accepted = report.valid_tasks >= self.config.min_tasks and gate.ok
        summary = report.to_dict()
        if len(summary["failures"]) > MAX_REPORTED_FAILURES:  # the context is for fixing, not for a log
            extra = len(summary["failures"]) - MAX_REPORTED_FAILURES
            summary["failures"] = summary["failures"][:MAX_REPORTED_FAILURES] + [f"... and {extra} more"]
        summary.update(needed=self.config.min_tasks, tasks_in_file=len(load_tasks(self.root / "tasks.jsonl")),
                       gate=gate.to_dict(), accepted=self.accepted)
        self.last_report = json.dumps(summary)
        return self.last_report

    async def run(self) -> AgentOutcome:
        self.root.mkdir(parents=True, exist_ok=True)
        self.scaffold()
        self.client.start(SYSTEM, self.prompt())
        limits = self.config.budget
        while True:
            over = self.usage.over(limits)
            if over:
                return self._outcome(over)
            try:
                reply = await self.client.turn()
            except ProviderError as exc:
                return self._outcome(f"provider error: {exc}")
            self.usage.turns += 1
            self.usage.tokens_in += reply.tokens_in
            self.usage.tokens_out += reply.tokens_out
            self.log.append(reply.text)
            if reply.stop == "refused":
                return self._outcome(f"the model refused: {reply.detail[:300]}")
            over = self.usage.tokens_over(limits)  # this reply's tokens are spent already
            if over:
                return self._outcome(over)
            outputs = []
            for index, call in enumerate(reply.tool_calls):
                if reply.stop == "truncated" and reply.cut_call and index == len(reply.tool_calls) - 1:
                    outputs.append(ToolOutput(CUT_CALL, is_error=True))
                    continue
                if self.usage.tool_calls >= limits.max_tool_calls:
                    return self._outcome(f"budget exceeded: {self.usage.tool_calls} of {limits.max_tool_calls} "
                                         "max_tool_calls")
                self.usage.tool_calls += 1
                outputs.append(await self.tool(call))
            if reply.tool_calls:
                self.client.tool_results(reply.tool_calls, outputs)
            if self.accepted:
                return self._outcome("accepted")
            if reply.stop == "truncated" and not reply.cut_call:
                self.client.say(CUT_TEXT)
            elif not reply.tool_calls:
                self.client.say("The site is not accepted yet; keep working through the tools. Last checks: "
                                + self.last_report[:4000])

    def _outcome(self, reason: str) -> AgentOutcome:
        self.log.append(reason)
        return AgentOutcome(self.accepted and reason == "accepted", reason, self.usage)


def _normalize_tasks(content: str, spec: SiteSpec) -> str:
    """Fill in what the agent may leave out (source, absolute start URLs) so tasks load everywhere."""
    lines = []
    for index, line in enumerate(l for l in content.splitlines() if l.strip()):
        try:
            task = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ToolError(f"tasks.jsonl line {index + 1} is not JSON ({exc.msg}); nothing was written") from None
        if not isinstance(task, dict):
            raise ToolError(f"tasks.jsonl line {index + 1} is not a JSON object; nothing was written")
        task.setdefault("id", f"{spec.site_id}-t{index + 1:02d}")
        task["source"] = {"kind": "synth", "site": spec.site_id, "bundle": spec.site_id}
        start = str(task.get("start_url", "/"))
        task["start_url"] = spec.base_url + start if start.startswith("/") else start
        task.setdefault("skill", spec.skill)
        task.setdefault("category", spec.category)
        lines.append(json.dumps(task, sort_keys=True, ensure_ascii=False))
    return "\n".join(lines) + "\n"


async def _screenshot(browser: Any, root: Path, spec: SiteSpec, path: str) -> tuple[bytes, list[str], dict[str, Any]]:
    async with site_page(root, browser) as page:
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        await page.goto(spec.base_url + path, wait_until="load")
        size = (await measure(page)).to_dict()
        return await page.screenshot(), errors, size


ClientFactory = Callable[[], ChatClient]


def synthesize_llm(skill: str | None = None, category: str | None = None, style: str | None = None, n: int = 1,
                   seed: int = 0, out: Path = Path("sites"), model: str | None = None,
                   client_factory: ClientFactory | None = None, config: LLMConfig | None = None,
                   parallel: int = 1, progress: bool = False, split: str | None = None) -> list[SynthResult]:
    """N bundles written by agents, `parallel` at a time, each with its own conversation and budget.
    `model` is `anthropic:MODEL` or `openai:URL#MODEL` (default $WEBLICA_SYNTH_MODEL, then Claude);
    `split` (train | val) draws specs from one side of the held-out split, as for procedural sites."""
    config = config or LLMConfig.load()
    if client_factory is None:
        spec = model or os.environ.get("WEBLICA_SYNTH_MODEL") or DEFAULT_MODEL
        make_client(spec, config.chat)  # a bad spec fails here, before a browser starts
        client_factory = lambda: make_client(spec, config.chat)  # noqa: E731
    if parallel < 1:
        raise ValueError("parallel must be at least 1")
    return asyncio.run(_synthesize_llm(skill, category, style, n, seed, out, client_factory, config, parallel, progress,
                                       split))


async def _synthesize_llm(skill: str | None, category: str | None, style: str | None, n: int, seed: int, out: Path,
                          client_factory: ClientFactory, config: LLMConfig, parallel: int,
                          show_progress: bool, split: str | None) -> list[SynthResult]:
    from playwright.async_api import async_playwright

    from weblica.browser.launcher import launch_browser

    from weblica.synth.splits import split_site_seeds

    specs = [sample_spec(s, skill, category, style, generator="llm", split=split)
             for s in split_site_seeds(site_seeds(seed, n), split)]
    limit = asyncio.Semaphore(parallel)
    bar = _Progress(len(specs), show_progress)
    async with async_playwright() as pw:
        browser = await launch_browser(pw)
        try:
            async def one(spec: SiteSpec) -> SynthResult:
                async with limit:
                    try:
                        result = await _one_site(spec, out, client_factory(), config, browser)
                    except Exception as exc:  # one site's crash (browser, disk) must not lose the others
                        result = SynthResult(spec.site_id, out / spec.site_id, 0, 0,
                                             [f"not accepted: {type(exc).__name__}: {str(exc)[:300]}"],
                                             min_tasks=config.min_tasks)
                bar.site_done(result.ok)
                return result

            with bar:
                return list(await asyncio.gather(*(one(spec) for spec in specs)))
        finally:
            await browser.close()


async def _one_site(spec: SiteSpec, out: Path, client: ChatClient, config: LLMConfig, browser: Any) -> SynthResult:
    from weblica.synth.generate import keep_valid

    agent = SiteAgent(client, spec, out / spec.site_id, config, browser=browser)
    try:
        outcome = await agent.run()
    finally:
        close = getattr(client, "aclose", None)  # the HTTP connection pool of this site's conversation
        if close is not None:
            await close()
    record = {"accepted": outcome.accepted, "reason": outcome.reason, "usage": outcome.usage.to_dict(),
              "model": getattr(client, "model", None), "retries": list(getattr(client, "retries", [])),
              "replies": [text[:500] for text in agent.log[-20:]]}
    (agent.root / AGENT_RECORD).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    if outcome.accepted:
        result = (await keep_valid([agent.root], browser=browser))[0]
        result.min_tasks = config.min_tasks
        return result
    rejected = out / REJECTED_DIR / spec.site_id  # kept for a look, outside what `weblica validate OUT` reads
    if rejected.exists():
        shutil.rmtree(rejected)
    rejected.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(agent.root), str(rejected))
    usage = ", ".join(f"{k} {v}" for k, v in outcome.usage.to_dict().items())
    return SynthResult(spec.site_id, rejected, 0, 0, [f"not accepted: {outcome.reason} ({usage})"],
                       min_tasks=config.min_tasks)


class _Progress(OptionalBar):
    """The LLM run's progress bar on stderr (sites done of N, accepted/failed counts, elapsed, ETA)."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.total, self.accepted, self.failed = total, 0, 0
        super().__init__(total, self._label(), enabled)

    def _label(self) -> str:
        return f"LLM sites (accepted {self.accepted}, failed {self.failed})"

    def site_done(self, ok: bool) -> None:
        self.accepted += ok
        self.failed += not ok
        self.advance(self._label())
