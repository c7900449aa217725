"""gymnasium registration and the BrowserGym task wrapper, on the local test site."""
import gymnasium as gym
import numpy as np
from playwright.sync_api import sync_playwright

from weblica.browser.launcher import BrowserOptions, context_kwargs
from weblica.env.task import Task
from hand_tasks import hand_tasks


def test_gymnasium_make_reset_step(site):
    import weblica.integrations.gym  # noqa: F401  (registers the id)

    tasks = hand_tasks(site.url)
    env = gym.make("weblica/Web-v0", tasks=tasks)
    try:
        obs, info = env.reset(seed=5, options={"task_id": "open-search"})
        assert obs["screenshot"].shape == (720, 1280, 3) and obs["screenshot"].dtype == np.uint8
        assert info["task_id"] == "open-search" and obs["url"] == site.url + "/"
        obs, reward, terminated, truncated, info = env.step(
            '<tool_call>{"name": "click", "arguments": {"x": 150, "y": 115}}</tool_call>')
        assert obs["url"] == site.url + "/second" and not terminated
        obs, reward, terminated, truncated, info = env.step([{"name": "done", "arguments": {"answer": ""}}])
        assert terminated and reward == 1.0
    finally:
        env.close()


def test_browsergym_task_setup_validate_cheat(site):
    from weblica.integrations.browsergym import WeblicaBrowserTask

    task = [t for t in hand_tasks(site.url) if t.id == "submit-form"][0]
    kwargs = BrowserOptions().launch_kwargs()
    with sync_playwright() as p:
        browser = p.chromium.launch(**kwargs)
        page = browser.new_context(**context_kwargs()).new_page()
        bg_task = WeblicaBrowserTask(seed=0, task=task)
        goal, info = bg_task.setup(page)
        assert goal == task.instruction and info["task_id"] == "submit-form"
        chat = []
        assert bg_task.validate(page, chat) == (0.0, False, "", {})
        chat.append({"role": "assistant", "message": "got hello"})
        reward, done, _, _ = bg_task.validate(page, chat)
        assert done and reward == 0.0  # right answer, but the form was never sent (url check fails)
        chat.clear()
        bg_task.cheat(page, chat)
        reward, done, _, info = bg_task.validate(page, chat)
        assert reward == 1.0 and done, info
        browser.close()


def test_browsergym_cheat_uses_the_env_gestures(site):
    """cheat runs the env's gestures on BrowserGym's sync page: a native <select> gets its option
    chosen (typing into it would not), a drag drops, and a wheel over a box scrolls the box."""
    from weblica.env.actions import Action
    from weblica.integrations.browsergym import WeblicaBrowserTask

    oracle = [Action("click", {"x": 720, "y": 310}), Action("write", {"text": "green"}),
              Action("drag", {"x1": 730, "y1": 130, "x2": 960, "y2": 160}),
              Action("done", {"answer": "ok"})]
    task = Task(id="gestures", start_url=site.url + "/", instruction="x", oracle=oracle)
    with sync_playwright() as p:
        browser = p.chromium.launch(**BrowserOptions().launch_kwargs())
        try:
            page = browser.new_context(**context_kwargs()).new_page()
            bg_task = WeblicaBrowserTask(seed=0, task=task)
            bg_task.setup(page)
            chat: list = []
            bg_task.cheat(page, chat)
            assert page.evaluate("document.getElementById('sel').value") == "Green"
            assert page.inner_text("#drop") == "dropped"
            assert chat == [{"role": "assistant", "message": "ok"}]
            page.goto(site.url + "/long")
            WeblicaBrowserTask(seed=0, task=Task(id="wheel", start_url=site.url + "/long", instruction="x", oracle=[
                Action("scroll", {"direction": "down", "amount": 0.5, "x": 900, "y": 200})])).cheat(page, [])
            assert page.evaluate("document.getElementById('box').scrollTop") == 360
        finally:
            browser.close()
