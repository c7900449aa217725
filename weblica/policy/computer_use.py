"""Qwen3-VL's native `computer_use` prompt format, mapped onto weblica's 13 tools.

Qwen3-VL was trained (Qwen3-VL cookbook `computer_use`, Qwen-Agent's `ComputerUse` tool) to act through
one function, `computer_use`, whose `action` argument names what to do, with coordinates as
`coordinate: [x, y]` on the screenshot's grid (0-1000 on both axes for Qwen3-VL):

    <tool_call>{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [500, 300]}}</tool_call>

Actions (argument names as in Qwen's tool): key{keys}, type{text}, mouse_move{coordinate},
left_click/right_click/middle_click/double_click/triple_click{coordinate}, left_click_drag{coordinate}
(from the current pointer position), scroll/hscroll{pixels, coordinate?}, wait{time},
terminate{status: success|failure}, answer{text}. The browser tools that have no computer_use action
(goto_url, go_back, new_tab, switch_tab, close_tab) are a second function, `browser`, in the same form.

The tool descriptions below are weblica's own words; the names, arguments and call form are Qwen's.
"""
from __future__ import annotations

import json
from typing import Any, Sequence

from weblica.env.actions import TOOLS, Action, ActionError
from weblica.policy.coords import CoordinateFrame

FORMAT = "computer_use"
CLICKS = {"left_click": ("left", 1), "right_click": ("right", 1), "middle_click": ("middle", 1),
          "double_click": ("left", 2), "triple_click": ("left", 3)}
COMPUTER_ACTIONS = ("key", "type", "mouse_move", *CLICKS, "left_click_drag", "scroll", "hscroll", "wait",
                    "terminate", "answer")
BROWSER_ACTIONS = ("goto_url", "go_back", "new_tab", "switch_tab", "close_tab")


def tool_functions(frame: CoordinateFrame) -> list[dict[str, Any]]:
    """The two functions, as the `<tools>` block lists them."""
    width, height = int(frame.model_width), int(frame.model_height)
    computer = {
        "name": "computer_use",
        "description": (f"Use a mouse and keyboard to interact with a web browser, and take screenshots.\n"
                        f"* The screen's resolution is {width}x{height}: coordinates are integers in that grid, "
                        f"(0, 0) the top-left corner.\n"
                        "* Find an element on the screenshot before moving the cursor to it, and click "
                        "buttons, links and fields in their centre.\n"
                        "* Pages may take a moment to respond; wait and look at the next screenshot."),
        "parameters": {"type": "object", "required": ["action"], "properties": {
            "action": {"type": "string", "enum": list(COMPUTER_ACTIONS), "description": (
                "The action to perform:\n"
                "* `key`: press the keys given, in order, as one chord (all down, then all up), e.g. [\"ctrl\", \"a\"] "
                "or [\"enter\"].\n"
                "* `type`: type text into the focused field (its previous content is replaced).\n"
                "* `mouse_move`: move the cursor to (x, y).\n"
                "* `left_click`, `right_click`, `middle_click`, `double_click`, `triple_click`: click at (x, y).\n"
                "* `left_click_drag`: press at the cursor's position, drag to (x, y) and release.\n"
                "* `scroll`: turn the wheel vertically by `pixels` (positive up, negative down), at (x, y) if given.\n"
                "* `hscroll`: scroll horizontally by `pixels` (positive right, negative left).\n"
                "* `wait`: wait `time` seconds (at most 10).\n"
                "* `terminate`: end the task, reporting `status` success or failure.\n"
                "* `answer`: end the task with `text` as the final answer.")},
            "keys": {"type": "array", "description": "Required only by `action=key`."},
            "text": {"type": "string", "description": "Required only by `action=type` and `action=answer`."},
            "coordinate": {"type": "array", "description": "(x, y) on the screen grid."},
            "pixels": {"type": "number", "description": "Required only by `action=scroll` and `action=hscroll`."},
            "time": {"type": "number", "description": "Required only by `action=wait`."},
            "status": {"type": "string", "enum": ["success", "failure"],
                       "description": "Required only by `action=terminate`."},
        }},
    }
    browser = {
        "name": "browser",
        "description": "Browser controls that have no mouse or keyboard action.",
        "parameters": {"type": "object", "required": ["action"], "properties": {
            "action": {"type": "string", "enum": list(BROWSER_ACTIONS), "description": (
                "* `goto_url`: open `url` in the current tab.\n* `go_back`: go back in the tab's history.\n"
                "* `new_tab`: open a blank tab and switch to it.\n* `switch_tab`: switch to the tab `index` "
                "(0-based, as listed each turn).\n* `close_tab`: close the current tab.")},
            "url": {"type": "string", "description": "Required only by `action=goto_url`."},
            "index": {"type": "integer", "description": "Required only by `action=switch_tab`."},
        }},
    }
    return [{"type": "function", "function": f} for f in (computer, browser)]


def tools_text(frame: CoordinateFrame) -> str:
    """Qwen's function-calling preamble (Hermes style), as its chat template writes it."""
    listed = "\n".join(json.dumps(f, ensure_ascii=False) for f in tool_functions(frame))
    return ("# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
            "You are provided with function signatures within <tools></tools> XML tags:\n"
            f"<tools>\n{listed}\n</tools>\n\n"
            "For each function call, return a json object with function name and arguments within "
            "<tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": "
            "<args-json-object>}\n</tool_call>")


SYSTEM_TEMPLATE = """You are a web agent. You operate a browser to complete the user's task. Each turn you see a
screenshot of the browser, the current URL, the open tabs, and feedback on what your previous actions did.
Earlier screenshots are not shown again; rely on your earlier reasoning and the feedback.

First reason inside <think>...</think>, then give one or more function calls; they run in order. Finish
with `answer` (your final answer to the task) or `terminate`.

{tools}"""


def system_prompt(frame: CoordinateFrame) -> str:
    return SYSTEM_TEMPLATE.format(tools=tools_text(frame))


class ComputerUseCalls:
    """Converts the raw calls of one response into weblica calls (coordinates still in the model's
    frame), keeping the pointer position that `left_click_drag` starts from. `pointer` is where the
    previous turn left it (model coordinates), or None."""

    def __init__(self, pointer: tuple[float, float] | None = None) -> None:
        self.pointer = pointer

    def __call__(self, call: Any) -> Any:
        if not isinstance(call, dict) or call.get("name") not in ("computer_use", "browser"):
            return call  # weblica's own tool names stay accepted; anything else is reported by the validator
        args = call.get("arguments", {})
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except json.JSONDecodeError as exc:
                raise ActionError(f"the arguments of '{call['name']}' are not valid JSON: {exc.msg}") from None
        if not isinstance(args, dict) or not isinstance(args.get("action"), str):
            raise ActionError(f"'{call['name']}' needs an 'action' argument")
        return self._convert(call["name"], args["action"], args)

    def _xy(self, args: dict[str, Any], required: bool = True) -> dict[str, Any]:
        point = args.get("coordinate")
        if isinstance(point, (list, tuple)) and len(point) == 2:
            if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in point):
                self.pointer = (float(point[0]), float(point[1]))
            return {"x": point[0], "y": point[1]}
        if required or point is not None:
            raise ActionError(f"action '{args['action']}' needs coordinate: [x, y], got {json.dumps(point)}")
        return {}

    def _convert(self, tool: str, action: str, args: dict[str, Any]) -> dict[str, Any]:
        if tool == "browser":
            if action not in BROWSER_ACTIONS:
                raise ActionError(f"unknown browser action '{action}'; use one of: {', '.join(BROWSER_ACTIONS)}")
            return {"name": action, "arguments": {k: args[k] for k in ("url", "index") if k in args}}
        if action in CLICKS:
            button, clicks = CLICKS[action]
            return {"name": "click", "arguments": {**self._xy(args), "button": button, "clicks": clicks}}
        if action == "mouse_move":
            return {"name": "hover", "arguments": self._xy(args)}
        if action == "left_click_drag":
            start = self.pointer
            end = self._xy(args)
            if start is None:
                raise ActionError("left_click_drag starts at the cursor, which no action has placed yet: "
                                  "mouse_move to the start point first")
            return {"name": "drag", "arguments": {"x1": start[0], "y1": start[1], "x2": end["x"], "y2": end["y"]}}
        if action == "type":
            return {"name": "write", "arguments": {k: args[k] for k in ("text",) if k in args}}
        if action == "key":
            keys = args.get("keys")
            if isinstance(keys, str):
                keys = [keys]
            chord = "+".join(str(k) for k in keys) if isinstance(keys, list) and keys else None
            return {"name": "press_keys", "arguments": {"keys": [chord]} if chord else {}}
        if action in ("scroll", "hscroll"):
            return {"name": "scroll", "arguments": {**_scroll(action, args.get("pixels")),
                                                    **self._xy(args, required=False)}}
        if action == "wait":
            return {"name": "wait", "arguments": {"seconds": args["time"]} if "time" in args else {}}
        if action == "answer":
            return {"name": "done", "arguments": {"answer": args.get("text", "")}}
        if action == "terminate":
            out: dict[str, Any] = {"answer": ""}
            if args.get("status") == "failure" and "infeasible" in TOOLS["done"].params:
                out["infeasible"] = True
            return {"name": "done", "arguments": out}
        raise ActionError(f"unknown computer_use action '{action}'; use one of: {', '.join(COMPUTER_ACTIONS)}")


def _scroll(action: str, pixels: Any) -> dict[str, Any]:
    """Signed wheel pixels -> direction and amount (the env reads an amount above 10 as pixels)."""
    if isinstance(pixels, bool) or not isinstance(pixels, (int, float)) or pixels == 0:
        raise ActionError(f"action '{action}' needs pixels: a non-zero number (positive "
                          f"{'up' if action == 'scroll' else 'right'}), got {json.dumps(pixels)}")
    if action == "scroll":
        direction = "up" if pixels > 0 else "down"
        size = 720.0
    else:
        direction = "right" if pixels > 0 else "left"
        size = 1280.0
    return {"direction": direction, "amount": abs(float(pixels)) / size}


def last_pointer(history: Sequence[Any], frame: CoordinateFrame) -> tuple[float, float] | None:
    """Where the pointer was left by the episode's last action that moved it, in model coordinates."""
    for record in reversed(history):
        for action in reversed(record.actions or []):
            args = action.get("arguments") or {}
            for xk, yk in (("x2", "y2"), ("x", "y")):
                if xk in args and yk in args:
                    return tuple(float(v) for v in frame.from_viewport(float(args[xk]), float(args[yk])))  # type: ignore[return-value]
    return None


def render_actions(actions: Sequence[Action], frame: CoordinateFrame) -> list[dict[str, Any]]:
    """Viewport-pixel actions as the computer_use / browser calls that do the same (for cloning a
    teacher's episode in this format); a drag becomes mouse_move + left_click_drag."""
    calls: list[dict[str, Any]] = []

    def point(x: float, y: float) -> list[int]:
        return list(frame.from_viewport(x, y))

    def computer(action: str, **args: Any) -> None:
        calls.append({"name": "computer_use", "arguments": {"action": action, **args}})

    for action in actions:
        a = action.args
        if action.name == "click":
            name = {("left", 1): "left_click", ("right", 1): "right_click", ("middle", 1): "middle_click",
                    ("left", 2): "double_click", ("left", 3): "triple_click"}.get((a.get("button", "left"), a.get("clicks", 1)), "left_click")
            computer(name, coordinate=point(a["x"], a["y"]))
        elif action.name == "hover":
            computer("mouse_move", coordinate=point(a["x"], a["y"]))
        elif action.name == "drag":
            computer("mouse_move", coordinate=point(a["x1"], a["y1"]))
            computer("left_click_drag", coordinate=point(a["x2"], a["y2"]))
        elif action.name == "write":
            if "x" in a:
                computer("left_click", coordinate=point(a["x"], a["y"]))
            computer("type", text=a["text"])
            if a.get("enter"):
                computer("key", keys=["enter"])
        elif action.name == "press_keys":
            for chord in a["keys"]:
                computer("key", keys=chord.split("+") if len(chord) > 1 else [chord])
        elif action.name == "scroll":
            vertical = a["direction"] in ("up", "down")
            sign = 1 if a["direction"] in ("up", "right") else -1
            extra = {"coordinate": point(a["x"], a["y"])} if "x" in a else {}
            computer("scroll" if vertical else "hscroll", pixels=sign * round(a["amount"] * (720 if vertical else 1280)), **extra)
        elif action.name == "wait":
            computer("wait", time=a.get("seconds", 1.0))
        elif action.name == "done":
            if a.get("infeasible"):
                computer("terminate", status="failure")
            elif a.get("answer"):
                computer("answer", text=a["answer"])
            else:
                computer("terminate", status="success")
        elif action.name in BROWSER_ACTIONS:
            calls.append({"name": "browser", "arguments": {"action": action.name, **a}})
        else:  # go_forward: a key chord does the same
            computer("key", keys=["alt", "right"])
    return calls
