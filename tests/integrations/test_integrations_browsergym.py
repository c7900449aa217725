"""Our task class as a subclass of the real browsergym-core 0.14.3 AbstractBrowserTask, run inside its real
BrowserEnv (Debian's Chromium) on a synth site served for real, with the site's per-episode state checked.
browsergym-core is installed by `.ci/setup` with --no-deps into .browsergym/ (its Playwright 1.44 pin cannot
sit in our venv without failing `pip check`); BROWSERGYM_PATH points elsewhere."""
import json
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_path = os.environ.get("BROWSERGYM_PATH") or str(ROOT / ".browsergym")
if Path(_path).is_dir() and _path not in sys.path:
    sys.path.append(_path)
bg_env = pytest.importorskip("browsergym.core.env",
                             reason="browsergym-core not installed (.ci/setup puts it in .browsergym/)")

from weblica.env.task import Task  # noqa: E402
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


# a checkout site with a sticky header (tests/synth/test_synth_episode_structure.py): task t08's compiled oracle
# clicks the stuck header's cart link while scrolled, and at episode seeds 1, 2 and 5 this episode's header
# is not there (the env's oracle policy scrolls back to it in those episodes)
STICKY_TASK, STICKY_SEEDS = "-t08", (1, 2)


@pytest.fixture(scope="module")
def sticky(tmp_path_factory):
    from weblica.env.task import load_tasks, save_tasks
    from weblica.serve.backend import SynthBackend
    from weblica.serve.server import SiteServer
    from weblica.synth.generate import keep_valid, write_unvalidated
    from weblica.synth.spec import sample_spec

    spec = sample_spec(100, skill="checkout")
    spec.distractors = dict(spec.distractors, sticky_header=True, lazy_loading=True)
    bundle = write_unvalidated(spec, tmp_path_factory.mktemp("bgym-sticky"))
    tasks = [t for t in load_tasks(bundle / "tasks.jsonl") if t.id.endswith(STICKY_TASK)]
    assert len(tasks) == 1, "the site's tasks changed: pick another whose oracle clicks the stuck header"
    save_tasks(tasks, bundle / "tasks.jsonl")
    # compiles the oracle (episode seed 0); on a thread of its own: BrowserGym's sync Playwright holds this one's loop
    wbg._run_async(keep_valid([bundle], 1))
    (task,) = load_tasks(bundle / "tasks.jsonl")
    assert task.oracle
    with SiteServer([bundle]) as server:
        yield SynthBackend(server), task


def cheat_in_browser_env(backend, task, seed):
    """BrowserEnv at this episode seed, the task's cheat() on its page, then a step so it validates."""
    env = bg_env.BrowserEnv(**wbg.browser_env_kwargs(task, backend, episode_id=f"bg-sticky-{seed}", seed=seed),
                            headless=True)
    try:
        env.reset(seed=seed)
        mode = env.unwrapped.page.evaluate("document.body.dataset.headerMode")
        env.unwrapped.task.cheat(env.unwrapped.page, env.unwrapped.chat.messages)
        obs, reward, terminated, truncated, info = env.step("noop()")
        return mode, reward, terminated, info
    finally:
        env.close()


def test_cheat_scrolls_back_to_a_stuck_header_and_wins(sticky, monkeypatch):
    """cheat() plays the env's oracle policy, so where this episode's header is not where the recorded
    click aimed, it scrolls back to it first and the task is done; the same recording without that
    scroll (the cheat before it) clicks what lies there instead and the task fails."""
    import weblica.policy.oracle as oracle_policy
    from weblica.env.sticky_header import header_fix_before

    backend, task = sticky
    fixes = []

    def counted(header, action):
        fix = header_fix_before(header, action)
        fixes.append(fix)
        return fix

    monkeypatch.setattr(oracle_policy, "header_fix_before", counted)
    for seed in STICKY_SEEDS:
        fixes.clear()
        mode, reward, terminated, info = cheat_in_browser_env(backend, task, seed)
        assert terminated and reward == 1.0, (seed, mode, info.get("task_info"))
        assert mode != "full" and any(fixes), (seed, mode)  # this episode's header is elsewhere
    # without the scroll back, the recorded click meets content or nothing: no win
    monkeypatch.setattr(oracle_policy, "header_fix_before", lambda header, action: None)
    mode, reward, terminated, info = cheat_in_browser_env(backend, task, STICKY_SEEDS[0])
    assert terminated and reward == 0.0, (mode, info.get("task_info"))
