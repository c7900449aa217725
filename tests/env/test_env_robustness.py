"""Malformed input never crashes step; crashes and hangs end episodes with their reason; the env recovers."""
import asyncio
import json
import random

import pytest

from weblica.env.actions import TOOLS
from weblica.env.browser_env import EnvConfig, WebEnv
from weblica.env.task import Task
from tests_helpers import run


def fuzzed_calls(n, seed=1234):
    """Random junk in both wire forms: wrong types, unknown tools, truncation, huge and odd values."""
    rng = random.Random(seed)
    values = [None, True, -1, 1e308, float("nan"), "", "x" * 5000, [], {}, [1, [2]], {"a": {}}, "12px",
              -0.0, 2 ** 70, "\u202e\x00", 720, 1280]
    out = []
    while len(out) < n:
        name = rng.choice(list(TOOLS) + ["fly", "", None, 7, "CLICK", "type", "press", "stop"])
        args = {rng.choice(["x", "y", "text", "keys", "url", "index", "direction", "amount", "seconds", "zz"]):
                rng.choice(values) for _ in range(rng.randrange(0, 4))}
        call = {"name": name, "arguments": args}
        form = rng.randrange(4)
        raw = json.dumps(call) if form != 3 else json.dumps([call, call])
        if form == 1:
            raw = raw[: rng.randrange(len(raw))]  # truncated
        if form in (0, 1):
            raw = f"<tool_call>{raw}</tool_call>"
        out.append(raw)
    return out


def test_fuzzed_tool_calls_never_crash_step(site, sync_env):
    task = Task(id="fuzz", start_url=site.url + "/", instruction="x", max_steps=1000)
    sync_env.reset(task, seed=0)
    reasons = set()
    for i, text in enumerate(fuzzed_calls(60)):
        obs, reward, terminated, truncated, info = sync_env.step(text)
        assert obs.feedback, text
        assert info["termination_reason"] in (None, "done", "format_error"), (text, info)
        reasons.add(info["termination_reason"])
        if terminated:
            sync_env.reset(task, seed=i)
    assert "format_error" in reasons  # three unparseable turns in a row did happen and ended episodes


def test_three_consecutive_format_errors_end_episode(site, sync_env):
    sync_env.reset(Task(id="fmt", start_url=site.url + "/", instruction="x", max_steps=50), seed=0)
    for i in range(2):
        _, _, terminated, _, info = sync_env.step("I think I should click somewhere")
        assert not terminated and info["parse_errors"]
    # a valid step in between resets the count
    sync_env.step('<tool_call>{"name": "wait", "arguments": {"seconds": 0}}</tool_call>')
    for i in range(3):
        _, _, terminated, _, info = sync_env.step("{not json")
    assert terminated and info["termination_reason"] == "format_error"


def test_max_steps_truncates(site, sync_env):
    sync_env.reset(Task(id="ms", start_url=site.url + "/", instruction="x", max_steps=2), seed=0)
    _, _, terminated, truncated, _ = sync_env.step({"name": "wait", "arguments": {"seconds": 0}})
    assert not (terminated or truncated)
    _, _, terminated, truncated, info = sync_env.step({"name": "wait", "arguments": {"seconds": 0}})
    assert truncated and not terminated and info["termination_reason"] == "max_steps"
    with pytest.raises(RuntimeError, match="call reset"):
        sync_env.step({"name": "wait", "arguments": {}})


def test_browser_killed_mid_episode_is_browser_crash_and_reset_recovers(site):
    async def go():
        env = WebEnv()
        task = Task(id="crash", start_url=site.url + "/", instruction="x", max_steps=10)
        try:
            await env.reset(task, seed=0)
            cdp = await env.host.browser.new_browser_cdp_session()
            try:
                await asyncio.wait_for(cdp.send("Browser.crash"), 5)
            except Exception:
                pass  # the browser dies before it can answer
            obs, reward, terminated, truncated, info = await env.step({"name": "click", "arguments": {"x": 150, "y": 115}})
            assert terminated and info["termination_reason"] == "browser_crash" and info["env_failure"]
            assert "Environment failure (browser_crash)" in obs.feedback[0]
            obs = await env.reset(task, seed=0)
            assert env.host.launches == 2 and obs.url == site.url + "/"
            obs, *_ = await env.step({"name": "click", "arguments": {"x": 150, "y": 115}})
            assert obs.url == site.url + "/second"
        finally:
            await env.close()
    run(go())


def test_renderer_crash_is_browser_crash(site):
    async def go():
        env = WebEnv()
        task = Task(id="crash2", start_url=site.url + "/", instruction="x", max_steps=10)
        try:
            await env.reset(task, seed=0)
            # the agent cannot open chrome://crash (the navigation policy refuses it), so the renderer
            # is crashed from outside, as a bug in Chromium would
            refused, *_ = await env.step({"name": "goto_url", "arguments": {"url": "chrome://crash"}})
            assert refused.feedback[0].startswith("Refused:")
            cdp = await env._context.new_cdp_session(env._tabs.page)
            try:
                await asyncio.wait_for(cdp.send("Page.crash"), 5)
            except Exception:  # the crashed target answers nothing
                pass
            _, _, terminated, _, info = await env.step({"name": "wait", "arguments": {"seconds": 0.5}})
            assert terminated and info["termination_reason"] == "browser_crash"
            obs = await env.reset(task, seed=0)
            assert env.host.launches == 1 and obs.tabs[0].title == "Home"  # only the page died
        finally:
            await env.close()
    run(go())


def test_step_timeout(site):
    async def go():
        env = WebEnv(EnvConfig(step_timeout_s=1.0))
        task = Task(id="hang", start_url=site.url + "/", instruction="x", max_steps=10)
        try:
            await env.reset(task, seed=0)
            _, _, terminated, _, info = await env.step({"name": "goto_url", "arguments": {"url": site.url + "/hang?s=4"}})
            assert terminated and info["termination_reason"] == "timeout"
            obs = await env.reset(task, seed=0)
            assert obs.url == site.url + "/"
        finally:
            await env.close()
    run(go())


def test_episode_timeout(site):
    async def go():
        env = WebEnv(EnvConfig(episode_timeout_s=2.0))
        task = Task(id="slowep", start_url=site.url + "/", instruction="x", max_steps=100)
        try:
            await env.reset(task, seed=0)
            for _ in range(100):
                _, _, terminated, _, info = await env.step({"name": "goto_url", "arguments": {"url": site.url + "/hang?s=0.4"}})
                if terminated:
                    break
            assert info["termination_reason"] == "timeout"
        finally:
            await env.close()
    run(go())


def test_missing_chromium_names_the_fix(monkeypatch):
    from weblica.browser.launcher import ChromiumNotFound, find_chromium

    monkeypatch.setenv("WEBLICA_CHROMIUM", "/nonexistent/chrome")
    with pytest.raises(ChromiumNotFound, match="apt-get install -y chromium"):
        find_chromium()
