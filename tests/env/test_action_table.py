"""One action table and one clock (issue 42): each action is defined once (`ActionDef`: schema, normalizer,
gesture, feedback) and the parser, the tool list, the env's executor, validation's playback and the
BrowserGym adapter read it; the env and validation read their clock constants and scripts from
weblica/env/clock.py, never from copies."""
import asyncio
import re
from pathlib import Path

import pytest

from weblica.env import actions as A
from weblica.env import clock
from weblica.env.actions import ACTIONS, TOOLS, ActionDef, ActionError, gesture_for, make_action, tool_schema

ROOT = Path(__file__).resolve().parents[2]


def test_every_action_is_one_complete_entry():
    assert list(TOOLS) == [n for n in ACTIONS if n != "go_forward"] and len(TOOLS) == 13
    for name, d in ACTIONS.items():
        assert d.name == name and callable(d.normalize) and callable(d.feedback)
        assert d.clock in ("step", "wait", "none")
        assert set(d.required) <= set(d.params)
    # what a page plays: input and navigation; tabs, waiting and ending are each runner's own
    assert {n for n, d in ACTIONS.items() if d.gesture is None} == {"wait", "new_tab", "switch_tab", "close_tab", "done"}


def test_gestures_come_from_the_table():
    def calls(action):
        gesture, out, result = gesture_for(action), [], None
        try:
            while True:
                call = gesture.send(result)
                out.append((call.on, call.method, call.args, call.kwargs))
                result = {"tag": "input", "type": "text", "value": "x"} if call.method == "evaluate" else None
        except StopIteration:
            return out

    assert calls(make_action({"name": "goto_url", "arguments": {"url": "example.com/a"}})) == [
        ("page", "goto", ("https://example.com/a",), {"wait_until": "load"})]
    assert calls(make_action({"name": "go_forward"})) == [("page", "go_forward", (), {"wait_until": "load"})]
    typed = calls(make_action({"name": "type", "arguments": {"text": "hi", "x": 10, "y": 20, "press_enter": "true"}}))
    assert typed[0][:3] == ("mouse", "click", (10.0, 20.0)) and typed[-1][:3] == ("keyboard", "press", ("Enter",))
    assert gesture_for(make_action({"name": "done", "arguments": {"answer": "3"}})) is None


def test_the_executor_dispatches_through_the_table_not_by_method_name():
    from weblica.env import executor

    assert not [n for n in dir(executor.ActionExecutor) if n.startswith("_do_")]
    source = (ROOT / "weblica" / "env" / "executor.py").read_text()
    assert "getattr(self" not in source and "ACTIONS[action.name].feedback" in source


def test_an_action_added_to_the_table_is_parsed_offered_and_run(monkeypatch):
    """Adding an action is one entry: the parser accepts it, the tool schema offers it, the executor runs
    its feedback (here a stand-in executor: the dispatch is what is tested)."""
    from weblica.env.executor import ActionExecutor
    from weblica.env.feedback import ActionResult

    async def shout(ex, text):
        return ActionResult(f"Success: shouted {text}.")

    def loud(args):
        if not isinstance(args["text"], str) or not args["text"]:
            raise ActionError("argument 'text' must be a non-empty string")
        return {"text": args["text"].upper()}

    entry = ActionDef("shout", {"text": "string"}, ("text",), "Shout the text.", loud, shout)
    monkeypatch.setitem(A.ACTIONS, "shout", entry)
    monkeypatch.setitem(A.TOOLS, "shout", entry)
    action = make_action({"name": "shout", "arguments": {"text": "hi"}})
    assert action.args == {"text": "HI"}
    with pytest.raises(ActionError, match="non-empty string"):
        make_action({"name": "shout", "arguments": {"text": ""}})
    assert "shout" in [t["function"]["name"] for t in tool_schema()]

    class Tabs:
        def begin_action(self): pass
        def take_notes(self): return []

    class Guard:
        def feedback(self): return ""

    ex = ActionExecutor.__new__(ActionExecutor)
    ex.tabs, ex.guard, ex.downloads = Tabs(), Guard(), None
    assert asyncio.run(ex.run(action)).feedback == "Success: shouted HI."


def test_the_clock_has_one_definition():
    from weblica.env.tabs import SettleOptions
    from weblica.synth import playback

    assert SettleOptions().step_virtual_ms == clock.STEP_VIRTUAL_MS == playback.STEP_VIRTUAL_MS
    assert SettleOptions().quiet_poll_s == clock.QUIET_POLL_S == playback.IDLE_POLL_S
    assert playback.virtual_ms is A.virtual_ms
    assert A.virtual_ms(make_action({"name": "wait", "arguments": {"seconds": 2.5}})) == 2500
    assert A.virtual_ms(make_action({"name": "done"})) == 0
    assert A.virtual_ms(make_action({"name": "click", "arguments": {"x": 1, "y": 1}})) == clock.STEP_VIRTUAL_MS
    assert clock.step_chunks(600) == (300, 300) and clock.step_chunks(1001) == (500, 501)
    # the in-page clock calls are written once, in weblica/env/clock.py
    written = [p.relative_to(ROOT).as_posix() for p in (ROOT / "weblica").rglob("*.py")
               if re.search(r"controller\.(log\('runFor'|runFor\()", p.read_text(encoding="utf-8"))]
    assert written == ["weblica/env/clock.py"]
