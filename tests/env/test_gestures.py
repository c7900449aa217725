"""The gestures behind the actions, shared by the env's executor and the synth oracle player."""
import asyncio

from weblica.env.actions import Action
from weblica.env.gestures import normalize_key, scroll_delta
from weblica.env.task import Task


def test_key_names_normalize():
    assert normalize_key("ctrl+a") == "Control+a"
    assert normalize_key("enter") == "Enter"
    assert normalize_key("Shift+tab") == "Shift+Tab"
    assert normalize_key("f5") == "F5"
    assert normalize_key("+") == "+"
    assert normalize_key("q") == "q"


def test_scroll_delta_is_a_share_of_the_viewport():
    assert scroll_delta("down", 0.5) == (0, 360)
    assert scroll_delta("up", 1) == (0, -720)
    assert scroll_delta("left", 0.25) == (-320, 0)
    assert scroll_delta("right", 1) == (1280, 0)


def _player_and_env(site, sync_env, path: str, actions: list[Action], read: str) -> tuple:
    """Play `actions` on `path` through the synth player and through the env; what `read` gives after each."""
    from playwright.async_api import async_playwright

    from weblica.browser.launcher import context_kwargs, launch_browser
    from weblica.synth.player import RequestTracker, play

    async def played():
        async with async_playwright() as pw:
            browser = await launch_browser(pw)
            try:
                page = await (await browser.new_context(**context_kwargs())).new_page()
                await page.goto(site.url + path, wait_until="load")
                await play(page, RequestTracker(page), actions)
                return await page.evaluate(read)
            finally:
                await browser.close()

    by_player = asyncio.run(played())
    sync_env.reset(Task(id="gestures", start_url=site.url + path, instruction="x", max_steps=100), seed=0)
    sync_env.step([{"name": a.name, "arguments": a.args} for a in actions])
    return by_player, sync_env._call(sync_env.env._tabs.page.evaluate(read))


def test_oracle_player_and_env_leave_the_same_page_state(site, sync_env):
    """The same actions through the synth player (bare gestures, real clock) and through the env
    (gestures wrapped in feedback) end in the same field values: a validated oracle replays alike."""
    actions = [Action("click", {"x": 150, "y": 215}), Action("write", {"text": "Alpine"}),
               Action("click", {"x": 720, "y": 310}), Action("write", {"text": "green"}),
               Action("click", {"x": 150, "y": 275}), Action("write", {"text": "abcdef"}),
               Action("press_keys", {"keys": ["backspace"]})]
    read = "() => [...document.querySelectorAll('input, select')].map((e) => e.id + '=' + e.value)"
    by_player, by_env = _player_and_env(site, sync_env, "/", actions, read)
    assert by_player == by_env
    assert "sel=Green" in by_env and "name=Alpine" in by_env and "upper=ABC" in by_env


def test_wheel_scrolls_land_alike_in_player_and_env(site, sync_env):
    """A wheel over a scrollable box scrolls the box, elsewhere the window; both runners wait for the
    asynchronously applied scroll, so the next action sees where it landed."""
    actions = [Action("scroll", {"direction": "down", "amount": 0.5, "x": 900, "y": 200}),
               Action("scroll", {"direction": "down", "amount": 0.25, "x": 300, "y": 400}),
               Action("click", {"x": 300, "y": 400})]
    # the click records the offsets it saw: a wheel still in flight would show there as 0
    read = "() => [document.getElementById('box').scrollTop, scrollY, window.__seen]"
    by_player, by_env = _player_and_env(site, sync_env, "/long", actions, read)
    assert by_player == by_env == [360, 180, [360, 180]]
