"""Context assembly: what the model sees each turn, and its Qwen / OpenAI / Anthropic renderings."""
import base64
import json

import pytest
from fixtures_models import make_obs, make_task, png, tiny_checkpoint

from weblica.env.actions import TOOLS
from weblica.env.episode import StepRecord
from weblica.policy.context import (IMAGE_PAD, ContextBuilder, Message, Part, check_response, render_qwen,
                                    system_prompt, to_anthropic_messages, to_openai_messages)
from weblica.policy.coords import CoordinateFrame

REL = CoordinateFrame.for_convention("relative1000")


def step(i: int, response: str | None = None, token_ids=None) -> StepRecord:
    return StepRecord(step=i, response=response or f"<think>thought {i}</think><tool_call>{{}}</tool_call>",
                      actions=[], feedback=[f"feedback of step {i}"], url=f"http://shop.test/p{i}",
                      screenshot_sha256="0" * 64, token_ids=token_ids)


def test_system_prompt_documents_every_tool_and_argument():
    prompt = system_prompt(REL)
    for name, spec in TOOLS.items():
        assert f'"name": "{name}"' in prompt
        for arg in spec.params:
            assert f"{arg}:" in prompt  # each argument explained in the Arguments line
    assert "0 to 1000" in prompt and "<think>" in prompt and "<tool_call>" in prompt
    assert "1288x728" in system_prompt(CoordinateFrame.for_convention("smart_resize"))
    assert "1280x720" in system_prompt(CoordinateFrame.for_convention("viewport"))


def test_first_turn_has_instruction_url_tabs_and_one_image():
    messages = ContextBuilder(REL).build(make_task(), [], make_obs())
    assert [m.role for m in messages] == ["system", "user"]
    user = messages[1]
    assert "Task: Find the price of the blue kettle." in user.text
    assert "Current URL: http://shop.test/" in user.text
    assert "[1] Help - http://help.test/" in user.text and "(active)" in user.text
    assert len(user.images) == 1


def test_history_keeps_all_text_but_only_the_last_image_by_default():
    history = [step(0), step(1), step(2)]
    obs = make_obs(3, feedback=["Success: clicked <button> \"Buy\"."])
    messages = ContextBuilder(REL).build(make_task(), history, obs, screens={0: png(), 1: png(), 2: png()})
    assert [m.role for m in messages] == ["system"] + ["user", "assistant"] * 3 + ["user"]
    assert sum(len(m.images) for m in messages) == 1
    assert messages[-1].images == [obs.screenshot]
    # every earlier response verbatim, every earlier feedback and URL as text
    for i in range(3):
        assert messages[2 + 2 * i].text == history[i].response
    for i in range(2):  # user turn i+1 reports what step i did; the current one carries obs.feedback
        assert f"feedback of step {i}" in messages[3 + 2 * i].text
        assert f"Current URL: http://shop.test/p{i}" in messages[3 + 2 * i].text
    assert "clicked <button> \"Buy\"" in messages[-1].text
    assert "(screenshot not shown)" in messages[3].text
    assert "Task:" in messages[1].text and "Task:" not in messages[3].text


@pytest.mark.parametrize("keep", [1, 2, 3, 5])
def test_keep_last_k_images(keep):
    history = [step(i) for i in range(4)]
    screens = {i: png((i * 40, 0, 0)) for i in range(4)}
    messages = ContextBuilder(REL, keep_images=keep).build(make_task(), history, make_obs(4), screens)
    users = [m for m in messages if m.role == "user"]
    shown = [i for i, m in enumerate(users) if m.images]
    assert shown == list(range(max(0, 5 - keep), 5))
    assert users[3].images == ([screens[3]] if keep >= 2 else [])


def test_older_turn_without_a_stored_screenshot_falls_back_to_text():
    messages = ContextBuilder(REL, keep_images=3).build(make_task(), [step(0), step(1)], make_obs(2), screens={1: png()})
    users = [m for m in messages if m.role == "user"]
    assert [len(u.images) for u in users] == [0, 1, 1]
    assert "(screenshot not shown)" in users[0].text


def test_keep_images_must_include_current():
    with pytest.raises(ValueError):
        ContextBuilder(REL, keep_images=0)


def test_format_check():
    ok = check_response('<think>x</think>\n<tool_call>{"name": "done", "arguments": {"answer": "4"}}</tool_call>', REL)
    assert ok.ok and ok.thought == "x" and ok.actions[0].args == {"answer": "4"}
    no_think = check_response('<tool_call>{"name": "done", "arguments": {}}</tool_call>', REL)
    assert not no_think.ok and "</think>" in no_think.errors[0]
    assert no_think.actions  # the call itself parsed; the protocol still failed
    bad_json = check_response("<think>x</think><tool_call>{name: done}</tool_call>", REL)
    assert not bad_json.ok and "not valid JSON" in bad_json.errors[0]
    no_call = check_response("<think>x</think> I give up.", REL)
    assert not no_call.ok and "no tool call" in no_call.errors[0]
    unknown = check_response('<think>x</think><tool_call>{"name": "fly", "arguments": {}}</tool_call>', REL)
    assert not unknown.ok and "unknown tool" in unknown.errors[0]
    # tool syntax inside the reasoning is not a call
    inner = check_response('<think>maybe <tool_call>{"name": "go_back"}</tool_call></think>'
                           '<tool_call>{"name": "wait", "arguments": {"seconds": 1}}</tool_call>', REL)
    assert inner.ok and [a.name for a in inner.actions] == ["wait"]


def _conversation():
    history = [step(0)]
    return ContextBuilder(REL).build(make_task(), history, make_obs(1, color=(0, 0, 255)))


def test_openai_rendering():
    messages = _conversation()
    out = to_openai_messages(messages)
    assert [m["role"] for m in out] == ["system", "user", "assistant", "user"]
    assert isinstance(out[0]["content"], str) and "# Tools" in out[0]["content"]
    assert out[2]["content"] == messages[2].text
    images = [p for p in out[3]["content"] if p["type"] == "image_url"]
    assert len(images) == 1
    url = images[0]["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    assert base64.b64decode(url.split(",", 1)[1]) == messages[-1].images[0]
    assert all(p["type"] != "image_url" for p in out[1]["content"])
    json.dumps(out)  # wire-serializable


def test_anthropic_rendering():
    messages = _conversation()
    system, out = to_anthropic_messages(messages)
    assert "# Tools" in system
    assert [m["role"] for m in out] == ["user", "assistant", "user"]  # the API requires alternation
    image = [b for b in out[2]["content"] if b["type"] == "image"][0]
    assert image["source"]["type"] == "base64" and image["source"]["media_type"] == "image/png"
    assert base64.b64decode(image["source"]["data"]) == messages[-1].images[0]
    json.dumps(out)


def test_qwen_rendering_expands_image_pads():
    messages = _conversation()
    text = render_qwen(messages, image_tokens=[7])
    assert text.startswith("<|im_start|>system\n") and text.endswith("<|im_start|>assistant\n")
    assert text.count(IMAGE_PAD) == 7
    assert text.count("<|vision_start|>") == 1 and text.count("<|im_start|>") == 5
    with pytest.raises(ValueError):  # sampled token ids need a decoder to render as text
        render_qwen([Message("assistant", [Part("text", "x")], token_ids=[1, 2])], [])


def test_qwen_prompt_ids_match_processor_grid_and_keep_sampled_ids():
    from transformers import AutoTokenizer

    from weblica.policy.backends.hf import encode_qwen_prompt, load_image_processor

    ckpt = tiny_checkpoint()
    tokenizer, processor = AutoTokenizer.from_pretrained(ckpt), load_image_processor(ckpt)
    pad_id = tokenizer.convert_tokens_to_ids(IMAGE_PAD)
    im_end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    # sampled ids that a re-tokenization would not produce (single bytes), one turn cut before <|im_end|>
    sampled = [[tokenizer.convert_tokens_to_ids(c) for c in "<thi"] + [im_end], [300, 301, 302]]
    history = [step(0, token_ids=sampled[0]), step(1, token_ids=sampled[1])]
    screens = {1: png((0, 255, 0), (640, 480)), 2: png((0, 0, 0), (1280, 720))}
    messages = ContextBuilder(REL, keep_images=2).build(make_task(), history, make_obs(2), screens)
    prompt = encode_qwen_prompt(messages, tokenizer, processor)
    grid = prompt.image_grid_thw
    assert grid.shape == (2, 3)
    expected_pads = sum(int(g.prod()) // processor.merge_size ** 2 for g in grid)
    assert prompt.input_ids.count(pad_id) == expected_pads
    assert prompt.pixel_values.shape[0] == int(grid.prod(dim=1).sum())
    assert int(grid[0].prod()) != int(grid[1].prod())  # differently sized images, different pad runs
    ids = prompt.input_ids
    for turn in sampled:
        start = next(i for i in range(len(ids)) if ids[i:i + len(turn)] == turn)
        assert start > 0
    # the cut turn is closed by the template; the finished one is not closed twice
    after_cut = ids.index(300) + 3
    assert ids[after_cut] == im_end
    first = ids.index(sampled[0][0])
    assert ids[first + len(sampled[0])] != im_end
