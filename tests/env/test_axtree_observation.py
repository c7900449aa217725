"""The accessibility-tree observation (issue 40, point 5: `obs: screenshot | axtree | both`), in real
Chromium on the local test site: Chromium's tree read through CDP gives each element in view with its role,
name and box centre; a click at a centre hits that element; the prompt shows the tree in the model's
coordinate frame instead of (or beside) the screenshot; a policy that reads only the tree solves tasks;
the trajectory keeps every tree, and SFT rebuilds exactly the prompts the policy saw."""
import asyncio
import re

import pytest
from hand_tasks import hand_tasks

from weblica.env.axtree import flatten, visible_centre
from weblica.env.browser_env import WebEnv
from weblica.env.observation import Observation, Tab
from weblica.env.task import Task
from weblica.policy.backends.base import Generation
from weblica.policy.context import ContextBuilder, render_axtree, system_prompt
from weblica.policy.coords import frame_for_model_type
from weblica.policy.model_policy import ModelPolicy
from weblica.rollout import run_tasks
from weblica.train.samples import turn_messages

FRAME = frame_for_model_type("qwen3_vl")  # the 0-1000 grid a Qwen3-VL answers in


def test_the_tree_of_a_real_page_names_its_elements_and_a_click_at_a_centre_hits_it(site):
    async def go():
        env = WebEnv()
        try:
            await env.reset(Task(id="home", start_url=site.url + "/", instruction="x"), 0)
            nodes = await env.axtree()
            search = next(n for n in nodes if n["role"] == "button")
            obs, *_ = await env.step(f'<tool_call>{{"name": "click", "arguments": {{"x": {search["x"]}, '
                                     f'"y": {search["y"]}}}}}</tool_call>')
            after = await env.axtree()
            return nodes, search, obs, after
        finally:
            await env.close()

    nodes, search, obs, after = asyncio.run(go())
    named = {(n["role"], n["name"]) for n in nodes}
    assert {("button", "Search"), ("textbox", "Your name"), ("textbox", "Code"), ("link", "Open in new tab"),
            ("combobox", "Colour")} <= named
    assert next(n for n in nodes if n["role"] == "combobox")["value"] == "Red"
    assert (search["x"], search["y"]) == (160, 120)  # the button's box: 100..220 x 100..140 (+ its border)
    assert all(0 <= n["x"] < 1280 and 0 <= n["y"] < 720 for n in nodes)
    assert not any(n["role"] == "StaticText" and n["name"] == "Search" for n in nodes)  # the button says it
    assert obs.url == site.url + "/second"  # the click at the tree's centre pressed the button
    assert ("heading", "Second page") in {(n["role"], n["name"]) for n in after}


def test_flatten_keeps_what_is_in_view_and_indents_by_kept_ancestors():
    def ax(node_id, role, name="", parent=None, children=(), backend=None, ignored=False, **props):
        node = {"nodeId": node_id, "role": {"value": role}, "name": {"value": name}, "childIds": list(children),
                "ignored": ignored, "properties": [{"name": k, "value": {"value": v}} for k, v in props.items()]}
        if parent:
            node["parentId"] = parent
        if backend is not None:
            node["backendDOMNodeId"] = backend
        return node

    nodes = [ax("1", "RootWebArea", "Shop", children=["2"], backend=1),
             ax("2", "navigation", "Main", "1", ["3", "4", "5"], backend=2),
             ax("3", "link", "Cart", "2", ["6"], backend=3, focused=True),
             ax("6", "StaticText", "Cart", "3", backend=6),
             ax("4", "link", "Below", "2", backend=4),
             ax("5", "generic", "", "2", ["7"], backend=5),
             ax("7", "button", "Buy", "5", backend=7)]
    boxes = {1: (0, 0, 1280, 3000), 2: (0, 0, 1280, 60), 3: (10, 10, 40, 20), 6: (12, 12, 30, 16),
             4: (10, 900, 40, 20), 5: (0, 0, 200, 60), 7: (1260, 700, 100, 100)}
    out = flatten(nodes, boxes)
    assert out == [{"role": "navigation", "name": "Main", "x": 640, "y": 30, "depth": 0},
                   {"role": "link", "name": "Cart", "x": 30, "y": 20, "depth": 1, "focused": True},
                   {"role": "button", "name": "Buy", "x": 1270, "y": 710, "depth": 1}]  # its visible part
    assert visible_centre((0, -50, 100, 40), (1280, 720)) is None  # scrolled away


def test_the_prompt_shows_the_tree_in_the_models_frame():
    obs = Observation(b"png", "http://shop.test/", [Tab(0, "http://shop.test/", "Shop")], 0, [], 0,
                      axtree=[{"role": "button", "name": "Search", "x": 160, "y": 120, "depth": 0},
                              {"role": "textbox", "name": "Your name", "x": 204, "y": 218, "depth": 1,
                               "value": "Bob", "focused": True}])
    task = Task(id="t", start_url="http://shop.test/", instruction="Search.")
    tree = render_axtree(obs.axtree, FRAME)
    assert tree == "button 'Search' (125, 167)\n  textbox 'Your name' value='Bob' focused (159, 303)"
    axtree = ContextBuilder(FRAME, observation="axtree").build(task, [], obs)
    user = axtree[-1]
    assert not user.images and "Accessibility tree:\n" + tree in user.text and "Screenshot" not in user.text
    assert "accessibility tree" in axtree[0].text and "screenshot of the browser" not in axtree[0].text
    both = ContextBuilder(FRAME, observation="both").build(task, [], obs)[-1]
    assert both.images == [b"png"] and tree in both.text and both.text.endswith("Screenshot:")
    plain = ContextBuilder(FRAME).build(task, [], obs)
    assert plain[-1].images == [b"png"] and "Accessibility" not in plain[-1].text
    assert "Each turn you see a screenshot of the browser (1280x720 viewport), the current URL" in plain[0].text
    assert "Earlier screenshots are not shown again" in system_prompt(FRAME)
    with pytest.raises(ValueError, match="unknown observation mode"):
        ContextBuilder(FRAME, observation="dom")


class TreeReader:
    """A backend that acts from the tree alone: it clicks the line the task names, then answers with the
    page's first text; it keeps every conversation it was shown."""

    name, frame = "tree-reader", FRAME

    def __init__(self):
        self.seen = []

    async def generate(self, messages, seed):
        self.seen.append(messages)
        text = messages[-1].text
        assert not messages[-1].images
        turns = sum(m.role == "assistant" for m in messages)
        if "Press the Search button" in messages[1].text and turns == 0:
            x, y = re.search(r"button 'Search' \((\d+), (\d+)\)", text).groups()
            call = {"name": "click", "arguments": {"x": int(x), "y": int(y)}}
        else:
            answer = re.search(r"StaticText '([^']+)'", text)
            call = {"name": "done", "arguments": {"answer": answer.group(1) if answer else ""}}
        import json

        return Generation(f"<think>From the tree.</think>\n<tool_call>{json.dumps(call)}</tool_call>")


def test_a_policy_that_reads_only_the_tree_solves_tasks_and_sft_rebuilds_its_prompts(site, tmp_path):
    tasks = [t for t in hand_tasks(site.url) if t.id in ("open-search", "read-second")]
    backend = TreeReader()
    trajs, summary = asyncio.run(run_tasks(tasks, lambda: ModelPolicy(backend, observation="axtree"),
                                           tmp_path / "run", parallel=1, seed=0))
    assert summary.success_rate == 1.0
    by_id = {t.task_id: t for t in trajs}
    assert by_id["read-second"].answer == "results"
    start = by_id["open-search"].metadata["start_axtree"]
    assert ("button", "Search") in {(n["role"], n["name"]) for n in start}
    assert by_id["open-search"].steps[0].axtree  # the page after the click, as the next turn read it
    # SFT's rebuild from the run directory gives the very conversations the policy was shown
    builder = ContextBuilder(FRAME, observation="axtree")
    rebuilt = []
    for task in tasks:
        rebuilt += turn_messages(task, by_id[task.id], tmp_path / "run" / "screens", builder)
    shown = sorted((m[1].text, m[-1].text) for m in backend.seen)
    assert sorted((m[1].text, m[-1].text) for m in rebuilt) == shown
