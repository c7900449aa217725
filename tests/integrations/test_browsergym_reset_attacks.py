"""Attacks on the BrowserGym adapter's resets (weblica/integrations/browsergym.py) as gymnasium's users call
them: `env.reset()` without a seed (BrowserEnv hands the task seed None), then resets at seeds again, on a
site with instances of its data. A reset without a seed must play one fixed episode (seed 0, as
weblica's env does), never fail and never a random one."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1]))
try:  # BrowserGym where .ci/setup puts it; the real-env test is skipped without it, the other runs
    from test_browsergym_attacks import K, bg_env, family, shared_playwright  # noqa: E402,F401
    HAVE_BROWSERGYM = True
except pytest.skip.Exception:
    HAVE_BROWSERGYM = False

from weblica.env.task import Task  # noqa: E402
from weblica.integrations import browsergym as wbg  # noqa: E402
from weblica.synth.checks import answer_text  # noqa: E402


def _family_task() -> Task:
    members = [{"instance": k, "instruction": "Which shelf number is shown?",
                "checks": [answer_text(f"Shelf number {k + 11}").to_dict()]} for k in range(3)]
    return Task(id="shelf-t01", start_url="http://shelf.synth.test/", instruction="Which shelf number is shown?",
                checks=[answer_text("Shelf number 11")], metadata={"instances": members})


def test_a_task_made_without_a_seed_is_seed_zero_s_episode():
    # no browser needed: what BrowserEnv.reset() does first is task_entrypoint(seed=None, **task_kwargs)
    task = wbg.WeblicaBrowserTask(seed=None, task=_family_task())
    assert task.seed == 0 and task.task.checks[0].expected == "Shelf number 11"
    again = wbg.WeblicaBrowserTask(seed=None, task=_family_task())
    assert again.random.randint(0, 2 ** 31) == task.random.randint(0, 2 ** 31)  # BrowserGym's own draws too
    assert wbg.WeblicaBrowserTask(seed=4, task=_family_task()).task.checks[0].expected == f"Shelf number {4 % 3 + 11}"


def test_a_seed_past_32_bits_plays_its_own_member():
    # BrowserEnv.reset(seed=2**40 + 1) reached BrowserGym's RandomState(seed), which refuses seeds past 2**32
    seed = 2 ** 40 + 1
    task = wbg.WeblicaBrowserTask(seed=seed, task=_family_task())
    assert task.seed == seed and task.task.checks[0].expected == f"Shelf number {seed % 3 + 11}"


@pytest.mark.skipif(not HAVE_BROWSERGYM, reason="browsergym-core not installed (.ci/setup puts it in .browsergym/)")
def test_a_real_browserenv_reset_without_a_seed_plays_seed_zero_then_seeds_as_given(family):
    backend, task = family
    env = bg_env.BrowserEnv(**wbg.browser_env_kwargs(task, backend, episode_id="bg-noseed", seed=2), headless=True)
    try:
        seen, draws = [], []
        for seed in (None, 1, None):
            env.reset() if seed is None else env.reset(seed=seed)
            page = env.unwrapped.page
            shown = page.inner_text("#k")
            seen.append((page.evaluate("window.WEBLICA_EPISODE.seed"), shown))
            draws.append(page.evaluate("[Math.random(), navigator.hardwareConcurrency, crypto.getRandomValues(new Uint32Array(1))[0]]"))
            _, reward, terminated, _, _ = env.step(f'send_msg_to_user("{shown}")')
            assert terminated and reward == 1.0, (seed, shown)
        assert seen == [(0, "Shelf number 11"), (1, f"Shelf number {1 % K + 11}"), (0, "Shelf number 11")], seen
        # the determinism layer's page script: seed 0's draws twice, seed 1's others, one machine
        assert draws[0] == draws[2] != draws[1] and {d[1] for d in draws} == {4}, draws
    finally:
        env.close()
