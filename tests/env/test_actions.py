import json

import pytest

from weblica.env.actions import ALIASES, TOOLS, Action, ActionError, make_action, parse_tool_calls, tool_schema


def test_thirteen_tools_and_aliases():
    assert list(TOOLS) == ["click", "hover", "drag", "write", "press_keys", "scroll", "goto_url", "go_back",
                           "wait", "new_tab", "switch_tab", "close_tab", "done"]
    assert set(ALIASES) == {"type", "press", "stop", "go_forward"}
    assert [s["function"]["name"] for s in tool_schema()] == list(TOOLS)


def test_parse_qwen_blocks_after_think():
    text = ('<think>I will <tool_call>{"name":"bogus"}</tool_call> maybe</think>\n'
            '<tool_call>{"name": "click", "arguments": {"x": 10, "y": 20}}</tool_call>\n'
            '<tool_call>{"name": "write", "arguments": {"text": "hi"}}</tool_call>')
    parsed = parse_tool_calls(text)
    assert parsed.ok
    assert parsed.actions == [Action("click", {"x": 10.0, "y": 20.0, "button": "left", "clicks": 1}),
                              Action("write", {"text": "hi"})]


def test_parse_json_list_and_code_fence():
    text = '```json\n[{"name": "scroll", "arguments": {"direction": "down"}}, {"name": "done", "arguments": {"answer": 7}}]\n```'
    parsed = parse_tool_calls(text)
    assert parsed.ok
    assert parsed.actions[0] == Action("scroll", {"direction": "down", "amount": 0.5})
    assert parsed.actions[1] == Action("done", {"answer": "7"})


def test_openai_style_arguments_string():
    parsed = parse_tool_calls(json.dumps([{"type": "function", "function": {"name": "goto_url",
                                                                          "arguments": "{\"url\": \"example.com\"}"}}]))
    assert parsed.actions == [Action("goto_url", {"url": "https://example.com"})]


def test_weblica_aliases():
    assert make_action({"name": "type", "arguments": {"text": "abc", "x": 5, "y": 6, "enter": True}}) == \
        Action("write", {"text": "abc", "x": 5.0, "y": 6.0, "enter": True})
    assert make_action({"name": "press", "arguments": {"key": "Enter"}}) == Action("press_keys", {"keys": ["Enter"]})
    assert make_action({"name": "stop", "arguments": {"response": "yes"}}) == Action("done", {"answer": "yes"})
    assert make_action({"name": "go_forward", "arguments": {}}) == Action("go_forward", {})
    assert make_action({"name": "click", "arguments": {"x": 1, "y": 2, "click_type": "double"}}).args["clicks"] == 2


def test_round_trip():
    action = Action("drag", {"x1": 1.0, "y1": 2.0, "x2": 3.0, "y2": 4.0})
    assert Action.from_dict(action.to_dict()) == action
    # a write that clicks its field and presses Enter (how synth oracles type) keeps its point and its
    # Enter through a task file and through a model's call of it by its own name
    typed = Action("write", {"text": "abc", "x": 5.0, "y": 6.0, "enter": True})
    assert Action.from_dict(typed.to_dict()) == typed == make_action({"name": "write", "arguments":
                                                                     {"text": "abc", "x": 5, "y": 6, "enter": True}})


def test_write_refuses_half_a_point_and_a_false_enter():
    with pytest.raises(ActionError, match="both x and y"):
        make_action({"name": "write", "arguments": {"text": "abc", "x": 5}})
    with pytest.raises(ActionError, match="outside the viewport"):
        make_action({"name": "write", "arguments": {"text": "abc", "x": 5, "y": 9000}})
    for false in (False, "false", "no", 0):
        assert make_action({"name": "write", "arguments": {"text": "a", "enter": false}}).args == {"text": "a"}


MALFORMED = [
    "", "   ", "no calls here", "<tool_call>", "<tool_call></tool_call>", "<tool_call>{</tool_call>",
    "<tool_call>[]</tool_call>", "<tool_call>42</tool_call>", '<tool_call>"click"</tool_call>',
    '<tool_call>{"arguments": {}}</tool_call>', '<tool_call>{"name": "fly"}</tool_call>',
    '<tool_call>{"name": "click"}</tool_call>', '<tool_call>{"name": "click", "arguments": {"x": "a", "y": 1}}</tool_call>',
    '<tool_call>{"name": "click", "arguments": {"x": -5, "y": 1}}</tool_call>',
    '<tool_call>{"name": "click", "arguments": {"x": 1e309, "y": 1}}</tool_call>',
    '<tool_call>{"name": "click", "arguments": {"x": 1, "y": 1, "button": "side"}}</tool_call>',
    '<tool_call>{"name": "scroll", "arguments": {"direction": "sideways"}}</tool_call>',
    '<tool_call>{"name": "scroll", "arguments": {"direction": "down", "amount": -1}}</tool_call>',
    '<tool_call>{"name": "switch_tab", "arguments": {"index": 1.5}}</tool_call>',
    '<tool_call>{"name": "press_keys", "arguments": {"keys": []}}</tool_call>',
    '<tool_call>{"name": "press_keys", "arguments": {"keys": [1, 2]}}</tool_call>',
    '<tool_call>{"name": "goto_url", "arguments": {"url": ""}}</tool_call>',
    '<tool_call>{"name": "wait", "arguments": {"seconds": 3600}}</tool_call>',
    '<tool_call>{"name": "write", "arguments": {"text": null}}</tool_call>',
    '<tool_call>{"name": "click", "arguments": "not json"}</tool_call>',
    '<tool_call>{"name": "click", "arguments": [1, 2]}</tool_call>',
    '[{"name": "drag", "arguments": {"x1": 1}}]', "[", "{}", "[1, 2, 3]", "null", "\x00\x01\x02",
    '<tool_call>{"name": "click", "arguments": {"x": true, "y": 1}}</tool_call>',
]


@pytest.mark.parametrize("text", MALFORMED)
def test_malformed_calls_become_errors(text):
    parsed = parse_tool_calls(text)
    assert not parsed.ok
    assert parsed.errors and all(isinstance(e, str) and e for e in parsed.errors)


def test_bad_action_error_names_problem():
    with pytest.raises(ActionError, match="outside the viewport"):
        make_action({"name": "click", "arguments": {"x": 5000, "y": 1}})
    with pytest.raises(ActionError, match="unknown tool 'fly'"):
        make_action({"name": "fly"})
