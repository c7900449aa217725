"""The action space: one table (`ACTIONS`) of OpenWebRL's 13 browser tools and go_forward, Weblica's
aliases, and the parsers that turn model output into typed actions.

Each action is defined once, as an `ActionDef`: its schema (the tool the model is shown), its argument
normalizer, its gesture (what it does to a page: weblica.env.gestures) and its feedback (how the env runs
it and describes the effect: weblica.env.feedback). The env's executor, the synth oracle player, the
BrowserGym adapter and the prompt all read this table; adding an action is adding one entry.

Env-level coordinates are absolute viewport pixels (1280x720). A policy converts model conventions
(Qwen3-VL's 0-1000 grid, smart-resized pixels) before actions reach the env.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from weblica.env import feedback, gestures
from weblica.env.clock import STEP_VIRTUAL_MS, wait_ms
from weblica.env.gestures import VIEWPORT_HEIGHT, VIEWPORT_WIDTH

__all__ = ["ACTIONS", "ALIASES", "Action", "ActionDef", "ActionError", "ParsedCalls", "TOOLS", "VIEWPORT_HEIGHT",
           "VIEWPORT_WIDTH", "gesture_for", "make_action", "parse_tool_calls", "tool_schema", "virtual_ms"]

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


Args = dict[str, Any]


@dataclass(frozen=True)
class ActionDef:
    """One action, defined once.

    - schema: `name`, `params` (argument -> JSON type), `required`, `description` (the tool a model sees);
    - `normalize`: raw arguments (the required ones present) -> canonical ones, or ActionError;
    - `gesture`: canonical arguments -> what the action does to a page (weblica.env.gestures), for every
      runner that plays actions on a page; None for what is not a page's (tabs, waiting, ending);
    - `feedback`: how the env runs it on an episode's executor and says what it did (weblica.env.feedback);
    - `clock`: the virtual time that passes after it: a `step`'s, the `wait`'s own seconds, or `none` (done).
    """

    name: str
    params: dict[str, str]
    required: tuple[str, ...]
    description: str
    normalize: Callable[[Args], Args]
    feedback: Callable[..., Any]
    gesture: Callable[[Args], gestures.Gesture] | None = None
    clock: str = "step"
    advertised: bool = True   # shown to models; go_forward is accepted (Weblica's name) but not offered


# ---- argument normalizers ---------------------------------------------------------------------------

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


def _point(args: Args, only_one: str) -> Args:
    """x and y, both or neither (`only_one`: the error when one comes alone)."""
    if "x" not in args and "y" not in args:
        return {}
    if "x" not in args or "y" not in args:
        raise ActionError(only_one)
    return {"x": _coord("x", args["x"], VIEWPORT_WIDTH), "y": _coord("y", args["y"], VIEWPORT_HEIGHT)}


def _flag(value: Any) -> bool:
    """A model's true/false: "false" from a model must not count as true."""
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1", "yes")
    return bool(value)


def _click(args: Args) -> Args:
    button = str(args.get("button", "left")).lower()
    if button not in MOUSE_BUTTONS:
        raise ActionError(f"argument 'button' must be one of {', '.join(MOUSE_BUTTONS)}")
    clicks = int(_number("clicks", args.get("clicks", 1)))
    if clicks not in (1, 2, 3):
        raise ActionError("argument 'clicks' must be 1, 2 or 3")
    return {**_point(args, "'click' needs both x and y"), "button": button, "clicks": clicks}


def _hover(args: Args) -> Args:
    return _point(args, "'hover' needs both x and y")


def _drag(args: Args) -> Args:
    W, H = VIEWPORT_WIDTH, VIEWPORT_HEIGHT
    return {"x1": _coord("x1", args["x1"], W), "y1": _coord("y1", args["y1"], H),
            "x2": _coord("x2", args["x2"], W), "y2": _coord("y2", args["y2"], H)}


def _write(args: Args) -> Args:
    text = args["text"]
    if not isinstance(text, (str, int, float)) or isinstance(text, bool):
        raise ActionError("argument 'text' must be a string")
    out: Args = {"text": str(text), **_point(args, "'write' needs both x and y to click a field first")}
    if _flag(args.get("enter", False)):
        out["enter"] = True
    return out


def _press_keys(args: Args) -> Args:
    keys = args["keys"]
    if isinstance(keys, str):
        keys = [keys]
    if not isinstance(keys, list) or not keys or not all(isinstance(k, str) and k.strip() for k in keys):
        raise ActionError("argument 'keys' must be a non-empty list of key names, e.g. [\"Enter\"]")
    return {"keys": [k.strip() for k in keys]}


def _scroll(args: Args) -> Args:
    direction = str(args["direction"]).lower()
    if direction not in SCROLL_DIRECTIONS:
        raise ActionError(f"argument 'direction' must be one of {', '.join(SCROLL_DIRECTIONS)}")
    amount = _number("amount", args.get("amount", 0.5))
    if amount > 10:  # models also give pixels; treat large values as pixels of the viewport axis
        amount = amount / (VIEWPORT_HEIGHT if direction in ("up", "down") else VIEWPORT_WIDTH)
    if not 0 < amount <= 10:
        raise ActionError("argument 'amount' must be a positive fraction of the viewport, e.g. 0.5")
    return {"direction": direction, "amount": amount, **_point(args, "scroll inside an element needs both x and y")}


def _goto_url(args: Args) -> Args:
    url = args["url"]
    if not isinstance(url, str) or not url.strip():
        raise ActionError("argument 'url' must be a non-empty string")
    url = url.strip()
    if not re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", url):
        url = "https://" + url
    return {"url": url}


def _wait(args: Args) -> Args:
    seconds = _number("seconds", args.get("seconds", 1.0))
    if not 0 <= seconds <= MAX_WAIT_SECONDS:
        raise ActionError(f"argument 'seconds' must be between 0 and {MAX_WAIT_SECONDS:g}")
    return {"seconds": seconds}


def _switch_tab(args: Args) -> Args:
    index = _number("index", args["index"])
    if index != int(index) or index < 0:
        raise ActionError("argument 'index' must be a non-negative integer")
    return {"index": int(index)}


def _done(args: Args) -> Args:
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


def _nothing(args: Args) -> Args:
    return {}


# ---- the table ---------------------------------------------------------------------------------------

ACTIONS: dict[str, ActionDef] = {
    d.name: d
    for d in [
        ActionDef("click", {"x": "number", "y": "number", "button": "string", "clicks": "integer"}, ("x", "y"),
                  "Mouse click at a viewport pixel; button left|right|middle, clicks 1 (single) or 2 (double).",
                  _click, feedback.click,
                  lambda a: gestures.click(a["x"], a["y"], a.get("button", "left"), a.get("clicks", 1))),
        ActionDef("hover", {"x": "number", "y": "number"}, ("x", "y"),
                  "Move the pointer to a pixel to reveal tooltips or open menus.",
                  _hover, feedback.hover, lambda a: gestures.hover(a["x"], a["y"])),
        ActionDef("drag", {"x1": "number", "y1": "number", "x2": "number", "y2": "number"}, ("x1", "y1", "x2", "y2"),
                  "Press at (x1, y1), move to (x2, y2) and release.",
                  _drag, feedback.drag, lambda a: gestures.drag(a["x1"], a["y1"], a["x2"], a["y2"])),
        # with x and y, the field to click first; enter, Enter after typing: one step where a person clicks
        # a search box, types and submits (how synth oracles type)
        ActionDef("write", {"text": "string", "x": "number", "y": "number", "enter": "boolean"}, ("text",),
                  "Clear the focused input field (or the one at x, y, clicked first) and type the text; "
                  "enter true presses Enter after it.",
                  _write, feedback.write,
                  lambda a: gestures.click_then_write(a["text"], a.get("x"), a.get("y"), a.get("enter", False))),
        ActionDef("press_keys", {"keys": "array"}, ("keys",),
                  "Press keys in order; a '+'-joined entry such as 'Control+a' is a chord.",
                  _press_keys, feedback.press_keys, lambda a: gestures.press_keys(a["keys"])),
        ActionDef("scroll", {"direction": "string", "amount": "number", "x": "number", "y": "number"}, ("direction",),
                  "Scroll up|down|left|right by a fraction of the viewport (amount, default 0.5), optionally "
                  "inside the element at (x, y).",
                  _scroll, feedback.scroll,
                  lambda a: gestures.scroll(a["direction"], a.get("amount", 0.5), a.get("x"), a.get("y"))),
        ActionDef("goto_url", {"url": "string"}, ("url",), "Navigate the current tab to the URL.",
                  _goto_url, feedback.goto_url, lambda a: gestures.navigate(a["url"])),
        ActionDef("go_back", {}, (), "Go back in the tab's history.",
                  _nothing, feedback.go_back, lambda a: gestures.history("back")),
        ActionDef("wait", {"seconds": "number"}, (), "Let the page settle for some seconds (max 10).",
                  _wait, feedback.wait, clock="wait"),
        ActionDef("new_tab", {}, (), "Open a new blank tab and switch to it.", _nothing, feedback.new_tab),
        ActionDef("switch_tab", {"index": "integer"}, ("index",), "Switch to the tab with this 0-based index.",
                  _switch_tab, feedback.switch_tab),
        ActionDef("close_tab", {}, (), "Close the current tab.", _nothing, feedback.close_tab),
        ActionDef("done", {"answer": "string", "infeasible": "boolean"}, (),
                  "End the episode with the final answer: the value asked for, alone or in one plain sentence "
                  "(no alternatives, hedges or second values); infeasible true says the task cannot be done on "
                  "this site.",
                  _done, feedback.done, clock="none"),
        # Weblica's name, accepted; it has no OpenWebRL counterpart, so it is not offered
        ActionDef("go_forward", {}, (), "Go forward in the tab's history.",
                  _nothing, feedback.go_forward, lambda a: gestures.history("forward"), advertised=False),
    ]
}
# the tools a model is offered (the prompt, `tool_schema`), in their order
TOOLS: dict[str, ActionDef] = {name: d for name, d in ACTIONS.items() if d.advertised}


@dataclass(frozen=True)
class Alias:
    """Weblica's name for one of the tools, with its own argument names."""

    tool: str
    renamed: dict[str, str] = field(default_factory=dict)   # Weblica's argument -> the tool's
    listed: bool = False      # the tool's argument is a list of the alias's one (`keys` from one `key`)
    wins: bool = True         # given both, the alias's argument is taken (type's press_enter yields to enter)


ALIAS_TABLE = {"type": Alias("write", {"press_enter": "enter"}, wins=False),
               "press": Alias("press_keys", {"key": "keys"}, listed=True),
               "stop": Alias("done", {"response": "answer"}), "go_forward": Alias("go_forward")}
ALIASES = {name: alias.tool for name, alias in ALIAS_TABLE.items()}


def virtual_ms(action: Action, step_ms: int = STEP_VIRTUAL_MS) -> int:
    """The virtual time the env lets pass after `action` (weblica.env.clock): a step's, what a `wait` asks
    for, none after `done` (the episode ends there and its state is read at once)."""
    kind = ACTIONS[action.name].clock
    if kind == "none":
        return 0
    return wait_ms(action.args.get("seconds", 1.0)) if kind == "wait" else step_ms


def gesture_for(action: Action) -> gestures.Gesture | None:
    """The gesture of an action that a page plays (input and navigation); None for tabs, waiting and
    done, which each runner does its own way."""
    make = ACTIONS[action.name].gesture
    return make(action.args) if make is not None else None


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
    alias = ALIAS_TABLE.get(name)
    spec = ACTIONS.get(alias.tool if alias else name)
    if spec is None:
        known = ", ".join(list(TOOLS) + list(ALIASES))
        raise ActionError(f"unknown tool '{name}'; available tools: {known}")
    args = dict(args)
    if alias is not None:
        for own, canonical in alias.renamed.items():
            if own in args:
                value = args.pop(own)
                if alias.wins or canonical not in args:
                    args[canonical] = [value] if alias.listed else value
    if spec.name == "click" and "click_type" in args and "clicks" not in args:
        args["clicks"] = 2 if str(args.pop("click_type")).lower() in ("double", "2", "dblclick") else 1
    missing = [p for p in spec.required if p not in args]
    if missing:
        raise ActionError(f"'{name}' is missing required argument(s): {', '.join(missing)}")
    return Action(spec.name, spec.normalize(args))


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
