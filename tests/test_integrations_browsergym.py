"""Our task class as a subclass of the real browsergym-core 0.14.3 AbstractBrowserTask, run inside its real
BrowserEnv (Debian's Chromium) on a synth site served for real, with the site's per-episode state checked.
browsergym-core is installed by `.ci/setup` with --no-deps into .browsergym/ (its Playwright 1.44 pin cannot
sit in our venv without failing `pip check`); BROWSERGYM_PATH points elsewhere."""
import json
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_path = os.environ.get("BROWSERGYM_PATH") or str(ROOT / ".browsergym")
if Path(_path).is_dir() and _path not in sys.path:
    sys.path.append(_path)
bg_env = pytest.importorskip("browsergym.core.env",
                             reason="browsergym-core not installed (.ci/setup puts it in .browsergym/)")

from weblica.env.task import Task, TaskSource  # noqa: E402
from weblica.integrations import browsergym as wbg  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def shared_playwright():
    yield
    wbg.stop_playwright()  # BrowserGym's global Playwright would block every later sync Playwright here


@pytest.fixture(scope="module")
def synth(tmp_path_factory):
    from weblica.serve.backend import SynthBackend
    from weblica.serve.server import SiteServer
    from weblica.synth.generate import write_unvalidated
    from weblica.synth.spec import sample_spec

    bundle = write_unvalidated(sample_spec(4, "checkout", "groceries", "corporate-clean"),
                               tmp_path_factory.mktemp("bgym"))
    tasks = [Task.from_dict(json.loads(line)) for line in (bundle / "tasks.jsonl").read_text().splitlines() if line]
    with SiteServer([bundle]) as server:
        yield server, SynthBackend(server), tasks


def test_the_task_class_is_browsergym_s_own():
    from browsergym.core.task import AbstractBrowserTask

    assert wbg.HAVE_BROWSERGYM and issubclass(wbg.WeblicaBrowserTask, AbstractBrowserTask)


PLAIN_OPS = {"click", "fill", "reach"}


def play_plan(page, plan):
    """The synth task's plan (selectors) on BrowserEnv's own page, as a user of BrowserGym would act."""
    page.evaluate("document.querySelectorAll('[data-distractor]').forEach(e => e.hidden = true)")
    for step in plan:
        if step["op"] == "click":
            page.click(step["sel"])
            page.wait_for_load_state("load")
            page.evaluate("document.querySelectorAll('[data-distractor]').forEach(e => e.hidden = true)")
        elif step["op"] == "fill":
            page.fill(step["sel"], str(step["text"]))
        else:
            page.wait_for_selector(step["sel"] + ":not([hidden])")


def test_a_synth_task_in_the_real_browser_env(synth):
    server, backend, tasks = synth
    task = next(t for t in tasks if any(c.type == "state_match" for c in t.checks)
                and {s["op"] for s in t.metadata.get("plan", [])} <= PLAIN_OPS)
    env = bg_env.BrowserEnv(**wbg.browser_env_kwargs(task, backend, episode_id="bg-1"), headless=True)
    try:
        obs, info = env.reset(seed=3)
        assert info["task_info"]["task_id"] == task.id
        assert list(obs["goal_object"]) == [{"type": "text", "text": task.instruction}]
        assert obs["screenshot"].shape == (720, 1280, 3)
        assert obs["url"] == task.start_url
        # a step without a message to the user is not an answer (the chat's greeting does not count)
        obs, reward, terminated, truncated, info = env.step("noop()")
        assert (reward, terminated) == (0.0, False) and not obs["last_action_error"]
        # the plan on BrowserEnv's page, then BrowserGym's own send_msg_to_user action
        play_plan(env.unwrapped.page, task.metadata["plan"])
        obs, reward, terminated, truncated, info = env.step('send_msg_to_user("Done.")')
        assert terminated and reward == 1.0, info.get("task_info")
        assert info["task_info"]["check_results"] and all(r["passed"] for r in info["task_info"]["check_results"])
        # a reset starts a fresh episode state on the site: the same answer without acting fails
        env.reset(seed=3)
        obs, reward, terminated, truncated, info = env.step('send_msg_to_user("Done.")')
        assert terminated and reward == 0.0
    finally:
        env.close()
