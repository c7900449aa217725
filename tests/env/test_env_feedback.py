"""Feedback for every tool, checked against what really happened in the page."""
import pytest

from weblica.env.task import Task


def call(name, **args):
    return {"name": name, "arguments": args}


@pytest.fixture()
def home(site, sync_env):
    sync_env.reset(Task(id="home", start_url=site.url + "/", instruction="x", max_steps=100), seed=0)
    return sync_env


def step(env, *calls):
    obs, reward, terminated, truncated, info = env.step(list(calls))
    return obs, info


def test_click_reports_element_and_navigation(home, site):
    obs, _ = step(home, call("click", x=150, y=115))
    assert obs.feedback[0].startswith('Success: click on <button> "Search" (role button) at (150, 115).')
    assert f"navigated to {site.url}/second" in obs.feedback[0]
    assert obs.url == site.url + "/second"


def test_click_on_nothing_notes_no_effect(home):
    obs, _ = step(home, call("click", x=1200, y=700))
    assert "no navigation or new tab" in obs.feedback[0]


def test_write_reports_field_and_mismatch(home):
    obs, _ = step(home, call("click", x=150, y=215), call("write", text="Alpine Ridge"))
    assert 'Focused field: <input> "Your name" (role textbox)' in obs.feedback[0]
    assert obs.feedback[1] == 'Success: wrote "Alpine Ridge" into <input> "Your name" (role textbox).'
    obs, _ = step(home, call("click", x=150, y=275), call("write", text="abcdef"))
    assert 'the field now holds "ABCD"' in obs.feedback[1]


def test_write_clears_previous_value(home):
    step(home, call("click", x=150, y=215), call("write", text="first"))
    step(home, call("write", text="second"))
    assert home._call(home.env._tabs.page.input_value("#name")) == "second"


def test_write_without_focus_fails_clearly(home):
    obs, _ = step(home, call("write", text="x"))
    assert obs.feedback[0].startswith("Failed: 'write' found no focused input field")


def test_type_alias_clicks_then_writes_and_enter(home):
    obs, _ = step(home, {"name": "type", "arguments": {"text": "Bob", "x": 150, "y": 215, "enter": True}})
    assert "Pressed Enter" in obs.feedback[0]
    assert home._call(home.env._tabs.page.inner_text("#out")) == "enter:Bob"


def test_write_by_its_own_name_clicks_its_field_and_presses_enter(home):
    # how synth oracles type (one step): the point and the Enter are not dropped for the name `write`
    obs, _ = step(home, call("write", text="Ann", x=150, y=215, enter=True))
    assert obs.feedback[0].startswith("Success: click on <input>") and "Pressed Enter" in obs.feedback[0]
    assert home._call(home.env._tabs.page.inner_text("#out")) == "enter:Ann"
    # a model's "false" is no Enter: the field holds the text and nothing was submitted
    obs, _ = step(home, call("write", text="Bea", x=150, y=215, enter="false"))
    assert "Pressed Enter" not in obs.feedback[0]
    assert home._call(home.env._tabs.page.input_value("#name")) == "Bea"
    assert home._call(home.env._tabs.page.inner_text("#out")) == "enter:Ann"


def test_write_into_an_empty_tag_input_keeps_its_tags(site, sync_env):
    """Typing into an empty field presses no Backspace: a tag input's Backspace would remove a tag the
    task never asked to remove. A field that holds text is still cleared first."""
    from weblica.env import gestures

    sync_env.reset(Task(id="tags", start_url=site.url + "/tags", instruction="x", max_steps=20), seed=0)
    page = sync_env.env._tabs.page
    chips = lambda: sync_env._call(page.locator(".chip").count())  # noqa: E731
    obs, _ = step(sync_env, call("write", text="gamma", x=200, y=110))
    assert "Success: wrote \"gamma\"" in obs.feedback[0] and chips() == 2
    step(sync_env, call("write", text="delta"))  # the field holds "gamma": replaced
    assert sync_env._call(page.input_value("#tag")) == "delta" and chips() == 2
    # the gesture as validation plays it (it reads the focused field itself): the same
    sync_env._call(page.fill("#tag", ""))
    sync_env._call(gestures.perform(page, gestures.write("eps")))
    assert sync_env._call(page.input_value("#tag")) == "eps" and chips() == 2
    assert gestures.holds_nothing({"tag": "input", "type": "search", "value": ""})
    assert not gestures.holds_nothing({"tag": "input", "type": "date", "value": ""})  # may hold a partial date
    assert not gestures.holds_nothing({"tag": "div", "type": "", "value": ""}) and not gestures.holds_nothing(None)


def test_write_selects_option(home):
    step(home, call("click", x=720, y=310))
    step(home, call("press_keys", keys=["Escape"]))
    obs, _ = step(home, call("write", text="Green"))
    assert home._call(home.env._tabs.page.input_value("#sel")) == "Green"


def test_press_keys_normalizes(home):
    step(home, call("click", x=150, y=215), call("write", text="abc"))
    obs, _ = step(home, call("press_keys", keys=["ctrl+a", "backspace", "enter"]))
    assert obs.feedback[0] == "Success: pressed ['Control+a', 'Backspace', 'Enter']."
    assert home._call(home.env._tabs.page.inner_text("#out")) == "enter:"


def test_hover_drag(home):
    obs, _ = step(home, call("hover", x=420, y=210))
    assert obs.feedback[0].startswith('Success: hovering over <div> "Menu"')
    assert home._call(home.env._tabs.page.is_visible("#tip"))
    obs, _ = step(home, call("drag", x1=720, y1=120, x2=950, y2=150))
    assert 'dragged <div> "drag"' in obs.feedback[0] and "The page content changed." in obs.feedback[0]
    assert home._call(home.env._tabs.page.inner_text("#drop")) == "dropped"


def test_tabs(home, site):
    obs, _ = step(home, call("click", x=420, y=105))
    assert "A new tab opened (index 1)" in obs.feedback[0]
    assert obs.active_tab == 1 and [t.title for t in obs.tabs] == ["Home", "Second"]
    obs, _ = step(home, call("switch_tab", index=5))
    assert obs.feedback[0].startswith("Failed: 'switch_tab' to index 5: there are only 2 tab(s)")
    obs, _ = step(home, call("switch_tab", index=0))
    assert obs.url == site.url + "/" and obs.active_tab == 0
    obs, _ = step(home, call("new_tab"))
    assert obs.active_tab == 2 and obs.url == "about:blank"
    obs, _ = step(home, call("close_tab"))
    assert len(obs.tabs) == 2 and "closed tab 2" in obs.feedback[0]
    step(home, call("close_tab"))
    obs, _ = step(home, call("close_tab"))
    assert obs.feedback[0] == "Failed: 'close_tab' cannot close the last open tab."


def test_scroll_moves_and_hits_boundary(home, site):
    step(home, call("goto_url", url=site.url + "/long"))
    obs, _ = step(home, call("scroll", direction="up"))
    assert "did not change; a boundary may have been reached" in obs.feedback[0]
    obs, _ = step(home, call("scroll", direction="down", amount=0.5))
    assert "moved by 360 px" in obs.feedback[0]
    obs, _ = step(home, call("scroll", direction="down", amount=0.25, x=900, y=200))
    assert 'on <div> "inner"' in obs.feedback[0] and "moved by 180 px" in obs.feedback[0]
    for _ in range(6):
        obs, _ = step(home, call("scroll", direction="down", amount=1.0))
    assert "boundary" in obs.feedback[0]


def test_goto_back_forward_and_failures(home, site):
    obs, _ = step(home, call("goto_url", url=site.url + "/second"))
    assert obs.feedback[0] == f"Success: opened {site.url}/second."
    obs, _ = step(home, call("go_back"))
    assert obs.url == site.url + "/" and obs.feedback[0].startswith("Success: went back")
    obs, _ = step(home, {"name": "go_forward", "arguments": {}})
    assert obs.url == site.url + "/second"
    import socket

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    obs, _ = step(home, call("goto_url", url=f"http://127.0.0.1:{port}/nothing"))
    assert obs.feedback[0].startswith(f"Failed: 'goto_url' to http://127.0.0.1:{port}/nothing failed: ")
    assert "ERR_CONNECTION_REFUSED" in obs.feedback[0]


def test_wait_lets_fetch_and_timers_finish(home, site):
    step(home, call("goto_url", url=site.url + "/slow"))
    assert home._call(home.env._tabs.page.inner_text("#p")) == "fetched value"
    obs, _ = step(home, call("wait", seconds=0.5))
    assert obs.feedback[0] == "Success: waited 0.5 s; the page did not change."


def test_done_ends_with_answer(home):
    obs, reward, terminated, truncated, info = home.step('<think>ok</think><tool_call>{"name": "done", "arguments": {"answer": "forty two"}}</tool_call>')
    assert terminated and not truncated and info["termination_reason"] == "done"
    assert info["answer"] == "forty two" and obs.feedback[-1].endswith("Answer: forty two")


def test_screenshots_survive_cross_process_navigations_to_error_pages(home, site):
    """A Chromium error page on another host is a new renderer with no frame yet for a moment; the
    screenshot waits for that frame instead of ending the episode (it failed ~1 in 30 such steps)."""
    import socket

    from PIL import Image

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    for i in range(8):
        for url in (f"http://localhost:{port}/nothing-{i}", site.url + "/second"):
            obs, info = step(home, call("goto_url", url=url))
            assert not info.get("env_failure"), info
            assert Image.open(__import__("io").BytesIO(obs.screenshot)).size == (1280, 720)
