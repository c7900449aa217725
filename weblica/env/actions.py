"""The action space: OpenWebRL's 13 browser tools, Weblica's aliases, and the parsers that turn model
output into typed actions.

Env-level coordinates are absolute viewport pixels (1280x720). A policy converts model conventions
(Qwen3-VL's 0-1000 grid, smart-resized pixels) before actions reach the env.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable

VIEWPORT_WIDTH = 1280
VIEWPORT_HEIGHT = 720


@dataclass(frozen=True)
class ToolSpec:
    name: str
    params: dict[str, str]  # name -> json type ("integer", "number", "string", "array")
    required: tuple[str, ...]
    description: str


TOOLS: dict[str, ToolSpec] = {
    t.name: t
    for t in [
        ToolSpec("click", {"x": "number", "y": "number", "button": "string", "clicks": "integer"}, ("x", "y"),
                 "Mouse click at a viewport pixel; button left|right|middle, clicks 1 (single) or 2 (double)."),
        ToolSpec("hover", {"x": "number", "y": "number"}, ("x", "y"),
                 "Move the pointer to a pixel to reveal tooltips or open menus."),
        ToolSpec("drag", {"x1": "number", "y1": "number", "x2": "number", "y2": "number"}, ("x1", "y1", "x2", "y2"),
                 "Press at (x1, y1), move to (x2, y2) and release."),
        # with x and y, the field to click first; enter, Enter after typing: one step where a person clicks
        # a search box, types and submits (how synth oracles type)
        ToolSpec("write", {"text": "string", "x": "number", "y": "number", "enter": "boolean"}, ("text",),
                 "Clear the focused input field (or the one at x, y, clicked first) and type the text; "
                 "enter true presses Enter after it."),
        ToolSpec("press_keys", {"keys": "array"}, ("keys",),
                 "Press keys in order; a '+'-joined entry such as 'Control+a' is a chord."),
        ToolSpec("scroll", {"direction": "string", "amount": "number", "x": "number", "y": "number"}, ("direction",),
                 "Scroll up|down|left|right by a fraction of the viewport (amount, default 0.5), optionally "
                 "inside the element at (x, y)."),
        ToolSpec("goto_url", {"url": "string"}, ("url",), "Navigate the current tab to the URL."),
        ToolSpec("go_back", {}, (), "Go back in the tab's history."),
        ToolSpec("wait", {"seconds": "number"}, (), "Let the page settle for some seconds (max 10)."),
        ToolSpec("new_tab", {}, (), "Open a new blank tab and switch to it."),
        ToolSpec("switch_tab", {"index": "integer"}, ("index",), "Switch to the tab with this 0-based index."),
        ToolSpec("close_tab", {}, (), "Close the current tab."),
        ToolSpec("done", {"answer": "string", "infeasible": "boolean"}, (),
                 "End the episode with the final answer; infeasible true says the task cannot be done on this site."),
    ]
}

# Weblica's tool names, accepted as aliases. go_forward has no OpenWebRL counterpart, so it is its own tool.
ALIASES = {"type": "write", "press": "press_keys", "stop": "done", "go_forward": "go_forward"}
EXTRA_TOOLS: dict[str, ToolSpec] = {
    "go_forward": ToolSpec("go_forward", {}, (), "Go forward in the tab's history."),
}
MAX_WAIT_SECONDS = 10.0
SCROLL_DIRECTIONS = ("up", "down", "left", "right")
MOUSE_BUTTONS = ("left", "right", "middle")


class ActionError(ValueError):
    """A tool call that cannot be executed; its message is shown to the agent as feedback."""


@dataclass(frozen=True)
class Action:
    """One validated tool call. `args` holds canonical argument names and types."""

    name: str
    args: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "arguments": dict(self.args)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Action":
        return make_action(data)

    def pointed_at(self) -> tuple[float, float] | None:
        """Where the action puts the pointer down first: a click's or hover's point, a drag's start, the
        field a write clicks (when it names one); None for keys, scrolls, navigation and the rest."""
        a = self.args
        if self.name == "drag":
            return (a["x1"], a["y1"])
        if self.name in ("click", "hover", "write") and "x" in a and "y" in a:
            return (a["x"], a["y"])
        return None

    def __str__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self.args.items())
        return f"{self.name}({inner})"


def _number(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ActionError(f"argument '{name}' must be a number, got {json.dumps(value)}")
    try:
        number = float(value)
    except ValueError:
        raise ActionError(f"argument '{name}' must be a number, got {json.dumps(value)}") from None
    if number != number or number in (float("inf"), float("-inf")):
        raise ActionError(f"argument '{name}' must be a finite number")
    return number


def _coord(name: str, value: Any, limit: int) -> float:
    number = _number(name, value)
    if not 0 <= number < limit:
        raise ActionError(f"argument '{name}'={number:g} is outside the viewport (0..{limit - 1})")
    return number


def _keys(value: Any) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(k, str) and k.strip() for k in value):
        raise ActionError("argument 'keys' must be a non-empty list of key names, e.g. [\"Enter\"]")
    return [k.strip() for k in value]


def make_action(call: Any) -> Action:
    """Validate one raw call ``{"name": ..., "arguments": {...}}`` into an Action, resolving aliases."""
    if not isinstance(call, dict):
        raise ActionError(f"a tool call must be a JSON object with 'name' and 'arguments', got {type(call).__name__}")
    name = call.get("name", call.get("action", call.get("tool")))
    if not isinstance(name, str) or not name:
        raise ActionError("the tool call has no 'name'")
    args = call.get("arguments", call.get("args", call.get("parameters", {})))
    if isinstance(args, str):  # OpenAI-style calls carry arguments as a JSON string
        try:
            args = json.loads(args) if args.strip() else {}
        except json.JSONDecodeError as exc:
            raise ActionError(f"the arguments of '{name}' are not valid JSON: {exc.msg}") from None
        except RecursionError:  # hostile nesting must be a bad call, not a crash
            raise ActionError(f"the arguments of '{name}' nest too deeply") from None
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise ActionError(f"the arguments of '{name}' must be a JSON object")
    alias = name
    name = ALIASES.get(name, name)
    spec = TOOLS.get(name) or EXTRA_TOOLS.get(name)
    if spec is None:
        known = ", ".join(list(TOOLS) + list(ALIASES))
        raise ActionError(f"unknown tool '{alias}'; available tools: {known}")
    args = dict(args)
    # Weblica alias arguments
    if alias == "type" and "press_enter" in args:
        args.setdefault("enter", args.pop("press_enter"))
    if alias == "press" and "key" in args:
        args["keys"] = [args.pop("key")]
    if alias == "stop" and "response" in args:
        args["answer"] = args.pop("response")
    if name == "click" and "click_type" in args and "clicks" not in args:
        args["clicks"] = 2 if str(args.pop("click_type")).lower() in ("double", "2", "dblclick") else 1
    missing = [p for p in spec.required if p not in args]
    if missing:
        raise ActionError(f"'{alias}' is missing required argument(s): {', '.join(missing)}")
    return Action(name, _normalize_args(name, args))


def _normalize_args(name: str, args: dict[str, Any]) -> dict[str, Any]:
    W, H = VIEWPORT_WIDTH, VIEWPORT_HEIGHT
    if name == "click":
        button = str(args.get("button", "left")).lower()
        if button not in MOUSE_BUTTONS:
            raise ActionError(f"argument 'button' must be one of {', '.join(MOUSE_BUTTONS)}")
        clicks = int(_number("clicks", args.get("clicks", 1)))
        if clicks not in (1, 2, 3):
            raise ActionError("argument 'clicks' must be 1, 2 or 3")
        return {"x": _coord("x", args["x"], W), "y": _coord("y", args["y"], H), "button": button, "clicks": clicks}
    if name == "hover":
        return {"x": _coord("x", args["x"], W), "y": _coord("y", args["y"], H)}
    if name == "drag":
        return {"x1": _coord("x1", args["x1"], W), "y1": _coord("y1", args["y1"], H),
                "x2": _coord("x2", args["x2"], W), "y2": _coord("y2", args["y2"], H)}
    if name == "write":
        text = args["text"]
        if not isinstance(text, (str, int, float)) or isinstance(text, bool):
            raise ActionError("argument 'text' must be a string")
        out: dict[str, Any] = {"text": str(text)}
        if "x" in args or "y" in args:
            if "x" not in args or "y" not in args:
                raise ActionError("'write' needs both x and y to click a field first")
            out["x"], out["y"] = _coord("x", args["x"], W), _coord("y", args["y"], H)
        enter = args.get("enter", False)
        if isinstance(enter, str):  # "false" from a model must not press Enter
            enter = enter.strip().lower() in ("true", "1", "yes")
        if enter:
            out["enter"] = True
        return out
    if name == "press_keys":
        return {"keys": _keys(args["keys"])}
    if name == "scroll":
        direction = str(args["direction"]).lower()
        if direction not in SCROLL_DIRECTIONS:
            raise ActionError(f"argument 'direction' must be one of {', '.join(SCROLL_DIRECTIONS)}")
        amount = _number("amount", args.get("amount", 0.5))
        if amount > 10:  # models also give pixels; treat large values as pixels of the viewport axis
            amount = amount / (H if direction in ("up", "down") else W)
        if not 0 < amount <= 10:
            raise ActionError("argument 'amount' must be a positive fraction of the viewport, e.g. 0.5")
        out = {"direction": direction, "amount": amount}
        if "x" in args or "y" in args:
            if "x" not in args or "y" not in args:
                raise ActionError("scroll inside an element needs both x and y")
            out["x"], out["y"] = _coord("x", args["x"], W), _coord("y", args["y"], H)
        return out
    if name == "goto_url":
        url = args["url"]
        if not isinstance(url, str) or not url.strip():
            raise ActionError("argument 'url' must be a non-empty string")
        url = url.strip()
        if not re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", url):
            url = "https://" + url
        return {"url": url}
    if name == "wait":
        seconds = _number("seconds", args.get("seconds", 1.0))
        if not 0 <= seconds <= MAX_WAIT_SECONDS:
            raise ActionError(f"argument 'seconds' must be between 0 and {MAX_WAIT_SECONDS:g}")
        return {"seconds": seconds}
    if name == "switch_tab":
        index = _number("index", args["index"])
        if index != int(index) or index < 0:
            raise ActionError("argument 'index' must be a non-negative integer")
        return {"index": int(index)}
    if name == "done":
        answer = args.get("answer", "")
        if answer is None:
            answer = ""
        if not isinstance(answer, (str, int, float)) or isinstance(answer, bool):
            answer = json.dumps(answer)
        flag = args.get("infeasible", False)
        if isinstance(flag, str) and flag.strip().lower() in ("true", "false"):
            flag = flag.strip().lower() == "true"
        if flag is not None and not isinstance(flag, bool):
            raise ActionError("argument 'infeasible' must be true or false")
        # only a declared infeasibility is kept, so every other done call stays {"answer": ...}
        return {"answer": str(answer), "infeasible": True} if flag else {"answer": str(answer)}
    return {}


@dataclass
class ParsedCalls:
    """What a model response holds: the valid actions, in order, and one error text per invalid call."""

    actions: list[Action]
    errors: list[str]
    found_any: bool  # whether anything call-shaped was present at all

    @property
    def ok(self) -> bool:
        return bool(self.actions) and not self.errors


_TOOL_CALL_RE = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.DOTALL)


def _strip_code_fence(text: str) -> str:
    text = text.strip()
    fence = re.match(r"^```(?:json)?\s*(.*?)\s*```$", text, re.DOTALL)
    return fence.group(1) if fence else text


def parse_tool_calls(text: str, transform: Callable[[Any], Any] | None = None) -> ParsedCalls:
    """Parse model output into actions.

    Accepts one or more ``<tool_call>{json}</tool_call>`` blocks (Qwen/Hermes) or a bare JSON list or
    object of calls (optionally in a code fence). `transform` maps each raw call before validation (a
    policy converts its model's coordinate convention to viewport pixels there). Never raises: problems
    are returned as error texts.
    """
    if not isinstance(text, str):
        return ParsedCalls([], [f"model output must be text, got {type(text).__name__}"], False)
    # reasoning may mention tool syntax; only look after the closing think tag
    if "</think>" in text:
        text = text.rsplit("</think>", 1)[1]
    raw_calls: list[Any] = []
    errors: list[str] = []
    blocks = _TOOL_CALL_RE.findall(text)
    if blocks:
        for i, block in enumerate(blocks):
            try:
                value = json.loads(_strip_code_fence(block))
            except json.JSONDecodeError as exc:
                errors.append(f"tool call {i + 1} is not valid JSON ({exc.msg} at char {exc.pos})")
                continue
            except RecursionError:
                errors.append(f"tool call {i + 1} nests too deeply")
                continue
            raw_calls.extend(value if isinstance(value, list) else [value])
    else:
        candidate = _strip_code_fence(text)
        start = min((i for i in (candidate.find("["), candidate.find("{")) if i >= 0), default=-1)
        if start < 0:
            return ParsedCalls([], ["no tool call found; answer with <tool_call>{\"name\": ..., "
                                    "\"arguments\": {...}}</tool_call>"], False)
        try:
            value, _ = json.JSONDecoder().raw_decode(candidate[start:])
        except json.JSONDecodeError as exc:
            return ParsedCalls([], [f"the tool calls are not valid JSON ({exc.msg})"], True)
        except RecursionError:
            return ParsedCalls([], ["the tool calls nest too deeply"], True)
        raw_calls.extend(value if isinstance(value, list) else [value])
    actions: list[Action] = []
    for i, call in enumerate(raw_calls):
        if isinstance(call, dict) and "function" in call and isinstance(call["function"], dict):
            call = call["function"]  # OpenAI tool_calls entries
        try:
            actions.append(make_action(transform(call) if transform is not None else call))
        except ActionError as exc:
            errors.append(f"tool call {i + 1}: {exc}")
    if not raw_calls and not errors:
        errors.append("the tool call list is empty")
    return ParsedCalls(actions, errors, True)


def tool_schema() -> list[dict[str, Any]]:
    """JSON-schema descriptions of the 13 tools, for system prompts and OpenAI-style `tools`."""
    out = []
    for spec in TOOLS.values():
        out.append({
            "type": "function",
            "function": {
                "name": spec.name,
                "description": spec.description,
                "parameters": {
                    "type": "object",
                    "properties": {p: {"type": t} | ({"items": {"type": "string"}} if t == "array" else {})
                                   for p, t in spec.params.items()},
                    "required": list(spec.required),
                },
            },
        })
    return out
