"""Judges for live benchmarks: each benchmark's published protocol, through any chat model.

A provider is any callable `(messages) -> str` taking OpenAI chat-completions messages (text and
`image_url` parts). `OpenAIChatProvider` speaks that wire format to any compatible server (vLLM,
SGLang, OpenAI); other providers (the reward models of `weblica.policy`) plug in as plain callables.

| protocol | benchmark | calls |
|---|---|---|
| webjudge | online-mind2web | key points; a 1-5 relevance score per screenshot; outcome over the screenshots scoring >= 3 |
| webvoyager | webvoyager | one call: task, answer, the last screenshots -> SUCCESS / NOT SUCCESS |
| deepshop | deepshop | one structured call: attribute / filter / sort each true or false; success needs all stated |
| webtailbench | webtailbench | one structured call -> {"success": bool}; stopping at a critical point is success |

Prompts live in `eval/judges/*.txt` (sections `### system` and `### user`, `$name` placeholders);
`$answer_rule` is `weblica.scoring.answer.ANSWER_RULE`: enumerations, hedges and refuse-and-guess fail.
"""
from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from string import Template
from typing import Any, Callable, Sequence

from weblica.scoring.answer import ANSWER_RULE
from weblica.env.episode import Trajectory
from weblica.env.task import Task, episode_task

Message = dict[str, Any]
ChatProvider = Callable[[list[Message]], str]

PROMPT_DIR = Path(__file__).resolve().parents[2] / "eval" / "judges"
PROTOCOL_OF_BENCHMARK = {"online-mind2web": "webjudge", "webvoyager": "webvoyager", "deepshop": "deepshop",
                         "webtailbench": "webtailbench"}
WEBJUDGE_THRESHOLD = 3      # WebJudge keeps screenshots scored at least this relevant
WEBJUDGE_MAX_SCORED = 50    # screenshots scored per trajectory (the most recent ones)
WEBJUDGE_MAX_KEPT = 8       # screenshots shown to the outcome call
FINAL_IMAGES = 3            # screenshots the single-call protocols see (the last ones)


class JudgeError(RuntimeError):
    """The judge could not give a verdict: provider unreachable, or a reply that follows no format."""


class OpenAIChatProvider:
    """Chat completions at `base_url` (e.g. http://127.0.0.1:8000/v1) through the OpenAI SDK, whose own
    retries (`retries` more tries of a 408, 409, 429 or 5xx answer or a dropped connection, waiting what
    the server's retry-after says, else an exponential backoff) stand for hand-written ones. Without a
    model name, uses the first model the server lists, as vLLM and SGLang serve exactly one."""

    def __init__(self, base_url: str, model: str | None = None, api_key: str | None = None,
                 timeout_s: float = 120.0, max_tokens: int = 1024, retries: int = 1) -> None:
        try:
            import openai
        except ImportError:
            raise JudgeError("the judge needs the 'openai' package: pip install 'weblica[llm]'") from None
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.max_tokens = max_tokens
        self._client = openai.OpenAI(base_url=self.base_url, api_key=api_key or "EMPTY", timeout=timeout_s,
                                     max_retries=retries)
        self._errors = (openai.APIError,)

    def _model(self) -> str:
        if self.model is None:
            try:
                self.model = self._client.models.list().data[0].id
            except (*self._errors, IndexError) as exc:
                raise JudgeError(f"judge at {self.base_url}: cannot list models ({exc}); "
                                 "name one as openai:URL#MODEL") from None
        return self.model

    def __call__(self, messages: list[Message]) -> str:
        try:
            response = self._client.chat.completions.create(model=self._model(), messages=messages,  # type: ignore[arg-type]
                                                            temperature=0.0, max_tokens=self.max_tokens)
        except self._errors as exc:
            raise JudgeError(f"judge at {self.base_url} failed: {type(exc).__name__}: {exc}") from None
        if not response.choices:
            raise JudgeError(f"judge at {self.base_url} answered outside the chat-completions format (no choices)")
        return response.choices[0].message.content or ""


def make_provider(spec: str, **options: Any) -> ChatProvider:
    """`openai:URL[#MODEL]` -> an OpenAIChatProvider; the API key comes from $OPENAI_API_KEY if set."""
    import os

    kind, _, target = spec.partition(":")
    if kind != "openai" or not target:
        raise JudgeError(f"unknown judge '{spec}': use openai:http://HOST:PORT/v1#MODEL")
    url, _, model = target.partition("#")
    return OpenAIChatProvider(url, model or None, api_key=options.pop("api_key", os.environ.get("OPENAI_API_KEY")),
                              **options)


@dataclass
class Prompt:
    system: str
    user: str

    def render(self, **values: Any) -> tuple[str, str]:
        # substitute (not safe_substitute): a placeholder left unfilled is a bug in the protocol code
        return Template(self.system).substitute(values), Template(self.user).substitute(values)


def load_prompt(name: str, prompt_dir: Path = PROMPT_DIR) -> Prompt:
    path = prompt_dir / f"{name}.txt"
    if not path.is_file():
        raise JudgeError(f"judge prompt {path} not found: point --judge-prompts at the eval/judges directory")
    sections = dict.fromkeys(("system", "user"), "")
    current = None
    for line in path.read_text(encoding="utf-8").splitlines(keepends=True):
        match = re.match(r"^### (system|user)\s*$", line)
        if match:
            current = match.group(1)
        elif current:
            sections[current] += line
    return Prompt(sections["system"].strip(), sections["user"].strip())


@dataclass
class Evidence:
    """What a judge sees of an episode: the task, the agent's actions and answer, its screenshots."""

    task: Task
    answer: str | None
    actions: list[str]
    screenshots: list[bytes] = field(default_factory=list)

    @classmethod
    def from_trajectory(cls, traj: Trajectory, task: Task, screens_dir: Path | None) -> "Evidence":
        shas = [traj.start_screenshot_sha256] + [s.screenshot_sha256 for s in traj.steps]
        images = []
        for sha in shas:
            path = screens_dir / f"{sha}.png" if screens_dir and sha else None
            if path is not None and path.is_file() and (not images or images[-1] != path):
                images.append(path)
        actions = [f"{s.step}. {a['name']}({', '.join(f'{k}={v!r}' for k, v in a.get('arguments', {}).items())})"
                   for s in traj.steps for a in s.actions]
        # with instances (a synth family): judged as the member this episode's seed played
        return cls(episode_task(task, traj.seed), traj.answer, actions, [p.read_bytes() for p in images])


@dataclass
class Verdict:
    success: bool
    reason: str
    protocol: str
    calls: int = 0
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"success": self.success, "reason": self.reason, "protocol": self.protocol, "calls": self.calls,
                **({"details": self.details} if self.details else {})}


def image_part(png: bytes) -> Message:
    return {"type": "image_url", "image_url": {"url": "data:image/png;base64," + base64.b64encode(png).decode()}}


def chat(system: str, user: str, images: Sequence[bytes] = ()) -> list[Message]:
    content: list[Message] = [{"type": "text", "text": user}] + [image_part(p) for p in images]
    return [{"role": "system", "content": system}, {"role": "user", "content": content}]


def parse_json_reply(text: str) -> dict[str, Any]:
    """The JSON object in a reply, tolerating prose or a code fence around it."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        raise JudgeError(f"judge reply holds no JSON object: {text[:200]!r}")
    try:
        data = json.loads(text[start:end + 1])
    except json.JSONDecodeError as exc:
        raise JudgeError(f"judge reply is not valid JSON ({exc.msg}): {text[:200]!r}") from None
    if not isinstance(data, dict):
        raise JudgeError("judge reply JSON is not an object")
    return data


class Judge:
    """Runs a benchmark's protocol with `provider`. One Judge may serve many episodes (it holds no
    per-episode state), so callers can judge episodes concurrently."""

    def __init__(self, provider: ChatProvider, prompt_dir: Path = PROMPT_DIR) -> None:
        self.provider = provider
        self.prompt_dir = prompt_dir

    def _ask(self, prompt: str, images: Sequence[bytes] = (), **values: Any) -> str:
        # every prompt that judges an answer says, as $answer_rule, that lists and hedges fail
        system, user = load_prompt(prompt, self.prompt_dir).render(answer_rule=ANSWER_RULE, **values)
        return self.provider(chat(system, user, images))

    def judge(self, evidence: Evidence, protocol: str | None = None) -> Verdict:
        protocol = protocol or PROTOCOL_OF_BENCHMARK.get(str(evidence.task.metadata.get("benchmark")), "webvoyager")
        method = getattr(self, f"_{protocol}", None)
        if method is None:
            raise JudgeError(f"unknown judge protocol '{protocol}'; use {', '.join(PROTOCOL_OF_BENCHMARK.values())}")
        return method(evidence)

    @staticmethod
    def _common(evidence: Evidence) -> dict[str, Any]:
        return {"task": evidence.task.instruction, "answer": evidence.answer or "(no answer)",
                "actions": "\n".join(evidence.actions) or "(no actions)"}

    def _webjudge(self, evidence: Evidence) -> Verdict:
        common = self._common(evidence)
        reply = self._ask("webjudge_key_points", task=common["task"])
        key_points = reply.split("**Key Points**:", 1)[-1].strip() or reply.strip()
        calls, kept = 1, []
        scored = evidence.screenshots[-WEBJUDGE_MAX_SCORED:]
        for i, png in enumerate(scored):
            note = self._ask("webjudge_image", [png], task=common["task"], key_points=key_points)
            calls += 1
            match = re.search(r"Score:\s*\**\s*([1-5])", note)
            score = int(match.group(1)) if match else 0  # an unscored image carries no evidence
            if score >= WEBJUDGE_THRESHOLD:
                reasoning = note.split("Score:", 1)[0].replace("Reasoning:", "").strip()
                kept.append((i, png, reasoning, score))
        kept = kept[-WEBJUDGE_MAX_KEPT:]
        notes = "\n".join(f"{n}. (step image {i}, score {s}) {r}" for n, (i, _, r, s) in enumerate(kept, 1)) or "(none)"
        reply = self._ask("webjudge_outcome", [p for _, p, _, _ in kept], key_points=key_points,
                          image_notes=notes, **common)
        statuses = re.findall(r"Status:\s*\**\s*\"?(success|failure)", reply, re.IGNORECASE)
        if not statuses:
            raise JudgeError(f"webjudge outcome has no 'Status: success|failure' line: {reply[-200:]!r}")
        return Verdict(statuses[-1].lower() == "success", reply.strip()[-500:], "webjudge", calls + 1,
                       {"key_points": key_points, "kept_images": [i for i, _, _, _ in kept]})

    def _webvoyager(self, evidence: Evidence) -> Verdict:
        images = evidence.screenshots[-FINAL_IMAGES:]
        reply = self._ask("webvoyager", images, n_images=len(images), **self._common(evidence))
        verdicts = re.findall(r"NOT SUCCESS|SUCCESS", reply)
        if not verdicts:
            raise JudgeError(f"webvoyager judge said neither SUCCESS nor NOT SUCCESS: {reply[-200:]!r}")
        return Verdict(verdicts[-1] == "SUCCESS", reply.strip()[-500:], "webvoyager", 1)

    def _deepshop(self, evidence: Evidence) -> Verdict:
        components: dict[str, str] = evidence.task.metadata.get("components") or {}
        images = evidence.screenshots[-FINAL_IMAGES:]
        listed = "\n".join(f"- {k}: {v}" for k, v in components.items()) or "- (none stated)"
        data = parse_json_reply(self._ask("deepshop", images, components=listed, n_images=len(images),
                                          **self._common(evidence)))
        checked = {k: data.get(k) for k in ("attribute", "filter", "sort")}
        if components:
            success = all(checked.get(k) is True for k in components)
        else:  # nothing stated separately: every component the judge did assess must hold
            assessed = [v for v in checked.values() if v is not None]
            success = bool(assessed) and all(v is True for v in assessed)
        return Verdict(success, str(data.get("reason", "")), "deepshop", 1,
                       {"components": {k: checked.get(k) for k in components} or checked})

    def _webtailbench(self, evidence: Evidence) -> Verdict:
        images = evidence.screenshots[-FINAL_IMAGES:]
        data = parse_json_reply(self._ask("webtailbench", images, n_images=len(images), **self._common(evidence)))
        if not isinstance(data.get("success"), bool):
            raise JudgeError(f"webtailbench judge reply lacks a boolean 'success': {data}")
        return Verdict(data["success"], str(data.get("reason", "")), "webtailbench", 1)
