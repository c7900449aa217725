"""The two prompt formats: weblica's own tool schema and Qwen3-VL's native computer_use tool (0-1000
grid), each with its system prompt, its tool calls parsed into the env's actions in viewport pixels,
teacher actions rendered back into it for SFT, and episodes played in it in the real browser."""
import asyncio
import json

import pytest
from fixtures_models import tiny_checkpoint

from weblica.env.actions import TOOLS, Action
from weblica.env.task import Task
from weblica.policy.backends.base import Generation
from weblica.policy.computer_use import BROWSER_ACTIONS, COMPUTER_ACTIONS, render_actions
from weblica.policy.context import ContextBuilder, check_response, system_prompt
from weblica.policy.coords import CoordinateFrame
from weblica.policy.factory import PolicySpecError, make_policy, make_policy_factory
from weblica.policy.model_policy import ModelPolicy
from weblica.train.config import ConfigError, GRPOConfig, config_from_dict, load_config

GRID = CoordinateFrame.for_convention("relative1000")


def call(action, **args):
    return f'<tool_call>{json.dumps({"name": "computer_use", "arguments": {"action": action, **args}})}</tool_call>'


def parsed(text, pointer=None, frame=GRID):
    check = check_response(f"<think>t</think>\n{text}", frame, "computer_use", pointer)
    return check


def test_system_prompt_of_each_format():
    ours = system_prompt(GRID)
    assert '"name": "click"' in ours and "computer_use" not in ours and "0 to 1000" in ours
    native = system_prompt(GRID, "computer_use")
    tools = native.split("<tools>\n", 1)[1].split("\n</tools>", 1)[0].splitlines()
    functions = [json.loads(line)["function"] for line in tools]
    assert [f["name"] for f in functions] == ["computer_use", "browser"]
    assert functions[0]["parameters"]["properties"]["action"]["enum"] == list(COMPUTER_ACTIONS)
    assert set(functions[0]["parameters"]["properties"]) == {"action", "keys", "text", "coordinate", "pixels", "time",
                                                            "status"}
    assert functions[1]["parameters"]["properties"]["action"]["enum"] == list(BROWSER_ACTIONS)
    assert "resolution is 1000x1000" in native and "<tool_call>" in native and '"click"' not in native
    # another model family's frame: its own grid in the resolution line
    assert "resolution is 1288x728" in system_prompt(CoordinateFrame.for_convention("smart_resize"), "computer_use")
    with pytest.raises(ValueError, match="unknown prompt format"):
        ContextBuilder(GRID, prompt_format="json")


def test_each_format_parses_into_viewport_actions():
    ours = check_response('<think>t</think>\n<tool_call>{"name": "click", "arguments": {"x": 500, "y": 500}}</tool_call>',
                          GRID)
    assert ours.ok and ours.actions == [Action("click", {"x": 640.0, "y": 360.0, "button": "left", "clicks": 1})]
    # the same click in the native format
    native = parsed(call("left_click", coordinate=[500, 500]))
    assert native.ok and native.actions == ours.actions
    cases = [
        (call("right_click", coordinate=[0, 0]), Action("click", {"x": 0.0, "y": 0.0, "button": "right", "clicks": 1})),
        (call("double_click", coordinate=[250, 750]), Action("click", {"x": 320.0, "y": 540.0, "button": "left", "clicks": 2})),
        (call("triple_click", coordinate=[1000, 1000]),  # the grid's far edge is the last pixel
         Action("click", {"x": 1279.0, "y": 719.0, "button": "left", "clicks": 3})),
        (call("mouse_move", coordinate=[100, 200]), Action("hover", {"x": 128.0, "y": 144.0})),
        (call("type", text="hello"), Action("write", {"text": "hello"})),
        (call("key", keys=["ctrl", "a"]), Action("press_keys", {"keys": ["ctrl+a"]})),
        (call("key", keys=["enter"]), Action("press_keys", {"keys": ["enter"]})),
        (call("scroll", pixels=-360, coordinate=[500, 500]),
         Action("scroll", {"direction": "down", "amount": 0.5, "x": 640.0, "y": 360.0})),
        (call("scroll", pixels=720), Action("scroll", {"direction": "up", "amount": 1.0})),
        (call("hscroll", pixels=-640), Action("scroll", {"direction": "left", "amount": 0.5})),
        (call("wait", time=2), Action("wait", {"seconds": 2.0})),
        (call("answer", text="42"), Action("done", {"answer": "42"})),
        (call("terminate", status="success"), Action("done", {"answer": ""})),
        ('<tool_call>{"name": "browser", "arguments": {"action": "goto_url", "url": "http://a.test/"}}</tool_call>',
         Action("goto_url", {"url": "http://a.test/"})),
        ('<tool_call>{"name": "browser", "arguments": {"action": "switch_tab", "index": 1}}</tool_call>',
         Action("switch_tab", {"index": 1})),
        ('<tool_call>{"name": "browser", "arguments": {"action": "go_back"}}</tool_call>', Action("go_back", {})),
    ]
    for text, expected in cases:
        check = parsed(text)
        assert check.ok and check.actions == [expected], (text, check.errors)
    # a drag starts where the cursor is: placed earlier in the response, or by the previous turn
    drag = parsed(call("mouse_move", coordinate=[100, 100]) + call("left_click_drag", coordinate=[500, 100]))
    assert drag.actions[1] == Action("drag", {"x1": 128.0, "y1": 72.0, "x2": 640.0, "y2": 72.0})
    assert parsed(call("left_click_drag", coordinate=[500, 100]), pointer=(100, 100)).actions == [drag.actions[1]]


def test_bad_native_calls_get_errors_that_name_the_fix():
    for text, message in [
        (call("left_click_drag", coordinate=[5, 5]), "mouse_move to the start point first"),
        (call("left_click"), "needs coordinate: [x, y]"),
        (call("fly", coordinate=[1, 2]), "unknown computer_use action 'fly'; use one of: key, type"),
        (call("scroll", pixels=0), "needs pixels: a non-zero number"),
        ('<tool_call>{"name": "computer_use", "arguments": {}}</tool_call>', "needs an 'action' argument"),
        ('<tool_call>{"name": "browser", "arguments": {"action": "reload"}}</tool_call>', "unknown browser action"),
    ]:
        check = parsed(text)
        assert not check.ok and message in check.errors[0], (text, check.errors)


def test_teacher_actions_render_into_the_native_format_and_parse_back():
    actions = [Action("click", {"x": 150.0, "y": 115.0, "button": "left", "clicks": 1}),
               Action("click", {"x": 640.0, "y": 360.0, "button": "left", "clicks": 2}),
               Action("hover", {"x": 10.0, "y": 700.0}),
               Action("press_keys", {"keys": ["Enter", "Control+a"]}),
               Action("scroll", {"direction": "down", "amount": 0.5}),
               Action("wait", {"seconds": 1.0}), Action("goto_url", {"url": "http://a.test/"}),
               Action("go_back", {}), Action("new_tab", {}), Action("switch_tab", {"index": 0}),
               Action("close_tab", {}), Action("done", {"answer": "Bob"})]
    calls = render_actions(actions, GRID)
    back = parsed("\n".join(f"<tool_call>{json.dumps(c)}</tool_call>" for c in calls))
    assert back.ok, back.errors
    flat = [a for a in back.actions]
    assert [a.name for a in flat] == ["click", "click", "hover", "press_keys", "press_keys", "scroll", "wait",
                                      "goto_url", "go_back", "new_tab", "switch_tab", "close_tab", "done"]
    assert flat[0].args["x"] == pytest.approx(150, abs=1) and flat[0].args["y"] == pytest.approx(115, abs=1)
    assert flat[3].args["keys"] == ["Enter"] and flat[4].args["keys"] == ["Control+a"]
    assert flat[-1] == Action("done", {"answer": "Bob"})
    # the composite ones: a drag is mouse_move + left_click_drag; a write into a field clicks it first
    drag = render_actions([Action("drag", {"x1": 128.0, "y1": 72.0, "x2": 640.0, "y2": 72.0})], GRID)
    assert [c["arguments"]["action"] for c in drag] == ["mouse_move", "left_click_drag"]
    write = render_actions([Action("write", {"text": "hi", "x": 640.0, "y": 360.0, "enter": True})], GRID)
    assert [c["arguments"]["action"] for c in write] == ["left_click", "type", "key"]
    assert {t.name for t in actions} | {"drag", "write"} == set(TOOLS)  # all 13 tools covered


def test_format_is_a_policy_option_and_a_training_option():
    policy = make_policy(f"hf:{tiny_checkpoint()};format=computer_use", seed=0)
    assert policy.prompt_format == "computer_use" and policy.spawn().prompt_format == "computer_use"
    assert "computer_use" in policy.context.build(Task("t", "http://a.test/", "Do."), [],
                                                  __import__("fixtures_models").make_obs())[0].text
    with pytest.raises(PolicySpecError, match="unknown format 'xml'"):
        make_policy(f"hf:{tiny_checkpoint()};format=xml")
    with pytest.raises(ConfigError, match="prompt_format must be one of weblica, computer_use"):
        config_from_dict(GRPOConfig, {"prompt_format": "native"})
    assert load_config("train/qwen3vl-8b-grpo.yaml", "grpo").prompt_format == "computer_use"


class NativeScript:
    """A backend answering in the native format: click the centre, then answer."""

    name = "script"
    frame = GRID

    def __init__(self):
        self.systems = []

    async def generate(self, messages, seed):
        self.systems.append(messages[0].text)
        turn = sum(m.role == "assistant" for m in messages)
        text = call("left_click", coordinate=[500, 500]) if turn == 0 else call("answer", text="ok")
        return Generation(f"<think>go</think>\n{text}")


def test_native_format_episodes_in_the_browser(site, tmp_path):
    from weblica.rollout import run_tasks

    task = Task.from_dict({"id": "say-ok", "start_url": site.url + "/", "instruction": "Say ok.", "max_steps": 3,
                           "checks": [{"type": "answer_match", "expected": "ok"}]})
    script = NativeScript()
    trajs, _ = asyncio.run(run_tasks([task], lambda: ModelPolicy(script, prompt_format="computer_use"),
                                     tmp_path / "script", parallel=1, seed=0))
    (traj,) = trajs
    assert "computer_use" in script.systems[0]
    first = traj.steps[0]
    assert first.actions[0]["name"] == "click" and (first.actions[0]["arguments"]["x"],
                                                    first.actions[0]["arguments"]["y"]) == (640.0, 360.0)
    assert "(640, 360)" in first.feedback[0]
    assert traj.termination_reason == "done" and traj.answer == "ok"
    # the tiny model plays a step in this format: its prompt holds the native tool, token ids are recorded
    factory = make_policy_factory(f"hf:{tiny_checkpoint()};format=computer_use;temperature=0.7;max_new_tokens=48")
    trajs, summary = asyncio.run(run_tasks([Task.from_dict({**task.to_dict(), "max_steps": 1})], factory,
                                           tmp_path / "tiny", parallel=1, seed=0))
    (step,) = trajs[0].steps
    from transformers import AutoTokenizer

    prompt = AutoTokenizer.from_pretrained(tiny_checkpoint()).decode(step.prompt_token_ids)
    assert '"name": "computer_use"' in prompt and step.token_ids and len(step.logprobs) == len(step.token_ids)
    assert summary.removed == 0


def test_sft_and_grpo_train_in_the_native_format(site, tmp_path):
    """SFT clones the oracle's actions rendered as computer_use calls on the 0-1000 grid; a GRPO
    iteration rolls out in the format and rebuilds every prompt exactly (it raises otherwise)."""
    import torch
    from transformers import AutoTokenizer

    from weblica.env.task import save_tasks
    from weblica.policy.backends.hf import load_image_processor
    from weblica.train.config import SFTConfig
    from weblica.train.grpo import train_grpo
    from weblica.train.samples import sft_samples
    from weblica.train.sft import train_sft
    from hand_tasks import hand_tasks

    torch.set_num_threads(1)
    tasks_file = tmp_path / "tasks.jsonl"
    (task,) = hand_tasks(site.url)[:1]  # click (150, 115), then done
    save_tasks([task], tasks_file)
    base = tiny_checkpoint()
    result = train_sft(SFTConfig(model=str(base), tasks=str(tasks_file), output_dir=str(tmp_path / "sft"), epochs=1,
                                 batch_size=2, prompt_format="computer_use", learning_rate=1e-3))
    assert result["samples"] == 2 and result["steps"] == 1
    tokenizer = AutoTokenizer.from_pretrained(base)
    samples = sft_samples({task.id: task}, [tmp_path / "sft" / "teacher"],
                          ContextBuilder(GRID, prompt_format="computer_use"), tokenizer, load_image_processor(base))
    responses = [tokenizer.decode(s.response_ids) for s in samples]
    assert '"action": "left_click", "coordinate": [117, 160]' in responses[0]
    assert '"action": "terminate", "status": "success"' in responses[1]
    assert '"name": "computer_use"' in tokenizer.decode(samples[0].prompt.input_ids)

    any_answer = tmp_path / "any.jsonl"
    save_tasks([Task.from_dict({"id": "any", "start_url": site.url + "/", "instruction": "Finish with any answer.",
                                "max_steps": 1, "checks": [{"type": "answer_match", "expected": ".", "mode": "regex"}]})],
               any_answer)
    summary = train_grpo(GRPOConfig(model=str(base), tasks=str(any_answer), output_dir=str(tmp_path / "grpo"),
                                    iterations=1, groups_per_batch=1, group_size=2, max_new_tokens=32,
                                    temperature=1.5, dynamic_sampling=False, mini_batches=1, ppo_epochs=1,
                                    parallel=2, prompt_format="computer_use", save_every=0))
    assert summary["last"]["samples"] == 2 and summary["last"]["episodes"] == 2
    from weblica.rollout import load_trajectories

    (rollout,) = load_trajectories(tmp_path / "grpo" / "rollouts" / "iter-0000-r0")[:1]
    assert '"name": "computer_use"' in tokenizer.decode(rollout.steps[0].prompt_token_ids)


def test_the_pointer_carries_over_from_the_previous_turn():
    from weblica.env.episode import StepRecord
    from weblica.policy.computer_use import last_pointer

    def record(*actions):
        return StepRecord(0, "", [a.to_dict() for a in actions], [], "http://a.test/", "")

    history = [record(Action("hover", {"x": 128.0, "y": 72.0})), record(Action("write", {"text": "x"}))]
    assert last_pointer(history, GRID) == (100.0, 100.0)  # the write did not move it
    history.append(record(Action("drag", {"x1": 0.0, "y1": 0.0, "x2": 640.0, "y2": 360.0})))
    assert last_pointer(history, GRID) == (500.0, 500.0)  # a drag leaves it at its end
    assert last_pointer([], GRID) is None
