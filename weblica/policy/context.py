"""Prompt and context: what a model sees each turn, in one neutral form, and its three renderings.

A conversation is a system prompt (protocol + the 13 tools with their arguments), then one user turn per
observation and one assistant turn per response. The current turn carries the screenshot, URL, tabs and
the feedback of the previous step; only the last `keep_images` user turns keep their screenshot, older
ones keep their text (URL + feedback), and every earlier response stays verbatim, reasoning included.
With `observation` axtree the current turn shows the page's accessibility tree as text instead of the
screenshot (each element's role, name and centre in the model's coordinate frame; weblica.env.axtree),
with both it shows the two.

Renderings: Qwen chat-template segments (text / image placeholders / verbatim token ids, so sampled
tokens are never re-tokenized), OpenAI chat-completions messages, Anthropic messages.
"""
from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import Any, Iterator, Literal, Mapping, Sequence

from weblica.env.actions import TOOLS, Action, parse_tool_calls
from weblica.env.episode import StepRecord
from weblica.env.observation import Observation
from weblica.env.task import Task
from weblica.policy.coords import CoordinateFrame

# What each argument means; the tool specs give names and types, the model also needs units and ranges.
ARGUMENT_DOCS: dict[str, str] = {
    "x": "horizontal coordinate", "y": "vertical coordinate",
    "x1": "start x", "y1": "start y", "x2": "end x", "y2": "end y",
    "button": "left | right | middle (default left)", "clicks": "1 single, 2 double (default 1)",
    "text": "text to type into the focused field (it is cleared first)",
    "enter": "true to press Enter after typing (default false)",
    "keys": "list of key names in order, e.g. [\"Enter\"] or [\"Control+a\"]",
    "direction": "up | down | left | right", "amount": "fraction of the viewport, default 0.5",
    "url": "absolute URL", "seconds": "0 to 10", "index": "0-based tab index",
    "answer": "the final answer to the task (empty if the task asks for none)",
    "infeasible": "true only when the task cannot be done on this site, and then the answer says why "
                  "and states no value (leave it out otherwise)",
}

SYSTEM_TEMPLATE = """You are a web agent. You operate a browser through tools to complete the user's task.
Each turn you see {seeing}, the current URL, the open tabs, and
feedback describing what your previous tool calls did. Earlier {earlier} not shown again; rely on
your earlier reasoning and the feedback.

{coordinates}

# Tools
{tools}

# Response format
First reason inside <think>...</think>. Then give one or more tool calls, each as a JSON object in its
own block; they run in order:
<tool_call>{{"name": "click", "arguments": {{"x": 500, "y": 300}}}}</tool_call>
Finish with the done tool, whose answer is your final answer to the task: state the one value asked for,
not a list of candidates. If the task cannot be done on this site, say so: done with infeasible true."""


@dataclass
class Part:
    """A piece of a message: text, or an image (PNG bytes)."""

    type: Literal["text", "image"]
    text: str = ""
    image: bytes | None = None


@dataclass
class Message:
    """One chat message. An assistant message a local model sampled keeps its exact `token_ids`."""

    role: Literal["system", "user", "assistant"]
    parts: list[Part]
    token_ids: list[int] | None = None

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.parts if p.type == "text")

    @property
    def images(self) -> list[bytes]:
        return [p.image for p in self.parts if p.type == "image" and p.image is not None]


def describe_tools() -> str:
    """The 13 tools, one JSON signature a line, followed by what each argument means."""
    lines = []
    for spec in TOOLS.values():
        lines.append(json.dumps({"name": spec.name, "description": spec.description,
                                 "arguments": {p: t for p, t in spec.params.items()},
                                 "required": list(spec.required)}, sort_keys=False))
    used = sorted({p for spec in TOOLS.values() for p in spec.params})
    lines.append("Arguments: " + "; ".join(f"{p}: {ARGUMENT_DOCS.get(p, p)}" for p in used) + ".")
    return "\n".join(lines)


# Prompt formats: weblica's own tool schema (above), or Qwen3-VL's native computer_use tool
# (`weblica.policy.computer_use`), whose calls are mapped onto the same 13 tools.
PROMPT_FORMATS = ("weblica", "computer_use")


def check_format(prompt_format: str) -> str:
    if prompt_format not in PROMPT_FORMATS:
        raise ValueError(f"unknown prompt format '{prompt_format}'; use one of: {', '.join(PROMPT_FORMATS)}")
    return prompt_format


# What a turn shows of the page: the screenshot, the accessibility tree as text (weblica.env.axtree), or both.
OBSERVATION_MODES = ("screenshot", "axtree", "both")
AXTREE_SEEN = ("the page's accessibility tree (every element in view: its role, its name and the coordinates of "
               "its centre, in the coordinate frame below)")


def check_observation(mode: str) -> str:
    if mode not in OBSERVATION_MODES:
        raise ValueError(f"unknown observation mode '{mode}'; use one of: {', '.join(OBSERVATION_MODES)}")
    return mode


def system_prompt(frame: CoordinateFrame, prompt_format: str = "weblica", observation: str = "screenshot") -> str:
    if check_format(prompt_format) == "computer_use":
        from weblica.policy import computer_use

        return computer_use.system_prompt(frame)
    screenshot = f"a screenshot of the browser ({frame.viewport_width}x{frame.viewport_height} viewport)"
    seeing = {"screenshot": screenshot, "axtree": AXTREE_SEEN,
              "both": f"{screenshot} and {AXTREE_SEEN}"}[check_observation(observation)]
    earlier = "screenshots are" if observation == "screenshot" else "pages are"
    return SYSTEM_TEMPLATE.format(seeing=seeing, earlier=earlier, coordinates=frame.describe(), tools=describe_tools())


def render_axtree(nodes: Sequence[Mapping[str, Any]] | None, frame: CoordinateFrame) -> str:
    """The accessibility nodes as text, one a line, indented by depth: `role 'name' [value='v'] [state...]
    (x, y)` with the centre in the model's coordinate frame (where a click on it lands)."""
    if not nodes:
        return "(no element in view)"
    lines = []
    for node in nodes:
        x, y = frame.from_viewport(node["x"], node["y"])
        extra = f" value='{node['value']}'" if "value" in node else ""
        extra += "".join(f" {state}" for state in ("checked", "selected", "expanded", "disabled", "focused",
                                                   "required", "pressed") if node.get(state))
        lines.append(f"{'  ' * int(node.get('depth', 0))}{node['role']} '{node['name']}'{extra} ({x}, {y})")
    return "\n".join(lines)


def observation_text(step: int, url: str, tabs: Sequence[Any] = (), active_tab: int | None = None,
                     feedback: Sequence[str] = (), image_shown: bool = True, axtree: str | None = None,
                     screenshots: bool = True) -> str:
    """The text of a user turn: step, URL, tabs, feedback on the previous step's calls, and the page's
    accessibility tree when given (`axtree`, rendered); without `screenshots` no screenshot line."""
    lines = [f"Step {step}. Current URL: {url}"]
    if tabs:
        lines.append("Tabs: " + "; ".join(
            f"[{t.index}] {t.title or '(untitled)'} - {t.url}{' (active)' if t.index == active_tab else ''}"
            for t in tabs))
    if feedback:
        lines.append("Feedback on your previous tool calls:")
        lines.extend(f"- {f}" for f in feedback)
    if axtree is not None:
        lines.append("Accessibility tree:")
        lines.append(axtree)
    if screenshots:
        lines.append("Screenshot:" if image_shown else "(screenshot not shown)")
    return "\n".join(lines)


@dataclass
class ContextBuilder:
    """Builds the conversation for one turn from the task, the episode's history and the observation.

    `screens` maps a turn index to that turn's screenshot (PNG) for turns older than the current one; a
    turn without an entry is shown as text only, which is all k=1 needs.
    """

    frame: CoordinateFrame
    keep_images: int = 1
    system: str | None = None
    prompt_format: str = "weblica"
    observation: str = "screenshot"  # screenshot | axtree | both: what the current turn shows of the page

    def __post_init__(self) -> None:
        if self.keep_images < 1:
            raise ValueError("keep_images must be at least 1: the current screenshot is always shown")
        check_format(self.prompt_format)
        check_observation(self.observation)

    def build(self, task: Task, history: Sequence[StepRecord], obs: Observation,
              screens: Mapping[int, bytes] | None = None) -> list[Message]:
        screens = screens or {}
        current = len(history)
        pictures = self.observation != "axtree"
        system = self.system or system_prompt(self.frame, self.prompt_format, self.observation)
        messages = [Message("system", [Part("text", system)])]
        for turn in range(current + 1):
            show = pictures and turn > current - self.keep_images
            if turn == current:
                tree = render_axtree(obs.axtree, self.frame) if self.observation != "screenshot" else None
                text = observation_text(turn, obs.url, obs.tabs, obs.active_tab, obs.feedback, True, tree, pictures)
                image: bytes | None = obs.screenshot if pictures else None
            else:
                # turn t observes what step t-1 left behind: its URL and its feedback
                prev = history[turn - 1] if turn > 0 else None
                image = screens.get(turn) if show else None
                text = observation_text(turn, prev.url if prev else task.start_url, (), None,
                                        prev.feedback if prev else (), image is not None, screenshots=pictures)
            if turn == 0:
                text = f"Task: {task.instruction}\n\n{text}"
            parts = [Part("text", text)]
            if image is not None:
                parts.append(Part("image", image=image))
            messages.append(Message("user", parts))
            if turn < current:
                record = history[turn]
                messages.append(Message("assistant", [Part("text", record.response)], record.token_ids))
        return messages


# ---- response format -----------------------------------------------------------------------------

@dataclass
class FormatCheck:
    """A response checked against the protocol: `</think>` present and every tool call valid."""

    ok: bool
    thought: str
    actions: list[Action] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def check_response(text: str, frame: CoordinateFrame, prompt_format: str = "weblica",
                   pointer: tuple[float, float] | None = None) -> FormatCheck:
    """Parse a response into viewport-pixel actions and check the protocol. Never raises. In the
    computer_use format, `pointer` is where the cursor was left (model coordinates; a drag starts there)."""
    if not isinstance(text, str):
        return FormatCheck(False, "", [], [f"model output must be text, got {type(text).__name__}"])
    errors: list[str] = []
    if "</think>" not in text:
        errors.append("the response has no </think>; reason inside <think>...</think> before the tool calls")
    thought = text.rsplit("</think>", 1)[0].replace("<think>", "").strip() if "</think>" in text else ""
    transform = frame.convert_call
    if check_format(prompt_format) == "computer_use":
        from weblica.policy.computer_use import ComputerUseCalls

        native = ComputerUseCalls(pointer)
        transform = lambda call: frame.convert_call(native(call))  # noqa: E731 (one response's state)
    parsed = parse_tool_calls(text, transform=transform)
    errors.extend(parsed.errors)
    return FormatCheck(not errors and bool(parsed.actions), thought, parsed.actions, errors)


# ---- renderings ------------------------------------------------------------------------------------

IM_START, IM_END = "<|im_start|>", "<|im_end|>"
VISION_START, VISION_END, IMAGE_PAD = "<|vision_start|>", "<|vision_end|>", "<|image_pad|>"

Segment = tuple[Literal["text"], str] | tuple[Literal["image"], int] | tuple[Literal["tokens"], list[int]]


def qwen_segments(messages: Sequence[Message], add_generation_prompt: bool = True,
                  assistant_prefix: str = "") -> Iterator[Segment]:
    """The Qwen chat template as a stream of segments: template text, image slots (numbered in order of
    appearance) and the verbatim token ids of sampled assistant turns.

    `assistant_prefix` is what the checkpoint's template puts after the assistant header (Qwen3-VL
    Thinking: `<think>\\n`). It is part of the prompt, so it precedes sampled ids; an assistant turn given as
    text already starts with it (the policy's text is prefix + sampled text).
    """
    image_index = 0
    for message in messages:
        if message.role == "assistant" and message.token_ids is not None:
            yield ("text", f"{IM_START}assistant\n{assistant_prefix}")
            yield ("tokens", list(message.token_ids))  # sampled ids, ending in <|im_end|> when the model stopped
            yield ("text", "\n")
            continue
        yield ("text", f"{IM_START}{message.role}\n")
        for part in message.parts:
            if part.type == "image":
                yield ("image", image_index)
                image_index += 1
            else:
                yield ("text", part.text)
        yield ("text", f"{IM_END}\n")
    if add_generation_prompt:
        yield ("text", f"{IM_START}assistant\n{assistant_prefix}")


def render_qwen(messages: Sequence[Message], image_tokens: Sequence[int], add_generation_prompt: bool = True,
                decode: Any = None) -> str:
    """Qwen chat-template text; image i becomes `<|vision_start|>` + `image_tokens[i]` x `<|image_pad|>` +
    `<|vision_end|>`. Token-id segments need `decode` (a tokenizer's decode) to be shown as text."""
    out = []
    for kind, value in qwen_segments(messages, add_generation_prompt):
        if kind == "text":
            out.append(value)
        elif kind == "image":
            out.append(VISION_START + IMAGE_PAD * image_tokens[value] + VISION_END)
        else:
            if decode is None:
                raise ValueError("rendering sampled token ids as text needs `decode`")
            out.append(decode(value))
    return "".join(out)


def _data_url(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode()


def to_openai_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """OpenAI chat-completions `messages`: images as `image_url` data URLs in user content parts."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.role != "user":
            out.append({"role": message.role, "content": message.text})
            continue
        content: list[dict[str, Any]] = []
        for part in message.parts:
            if part.type == "image" and part.image is not None:
                content.append({"type": "image_url", "image_url": {"url": _data_url(part.image)}})
            elif part.text:
                content.append({"type": "text", "text": part.text})
        out.append({"role": "user", "content": content})
    return out


def to_anthropic_messages(messages: Sequence[Message]) -> tuple[str, list[dict[str, Any]]]:
    """Anthropic Messages API (`system`, `messages`): images as base64 `image` blocks."""
    system = "\n\n".join(m.text for m in messages if m.role == "system")
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            continue
        if message.role == "assistant":
            out.append({"role": "assistant", "content": [{"type": "text", "text": message.text or "(empty)"}]})
            continue
        content: list[dict[str, Any]] = []
        for part in message.parts:
            if part.type == "image" and part.image is not None:
                content.append({"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                            "data": base64.b64encode(part.image).decode()}})
            elif part.text:
                content.append({"type": "text", "text": part.text})
        out.append({"role": "user", "content": content})
    return system, out
