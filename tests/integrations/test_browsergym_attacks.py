"""Attacks on the BrowserGym adapter (weblica/integrations/browsergym.py) as its user drives it: one
BrowserEnv made with `browser_env_kwargs`, then reset at several episode seeds, on a site with instances
of its data (an instance family's member per seed). The page an episode shows must be the one its task's
gold is for: the episode's own seed (the page's pop-up draws) and the member's instance of the data."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1]))
# BrowserGym where .ci/setup puts it, skipped without it, and its shared Playwright stopped at the end
from test_integrations_browsergym import bg_env, shared_playwright  # noqa: E402,F401

from weblica.env.task import Task, TaskSource  # noqa: E402
from weblica.integrations import browsergym as wbg  # noqa: E402
from weblica.synth.checks import answer_text  # noqa: E402

SITE, K = "shelf", 3
HOST = f"{SITE}.synth.test"


def _site(root: Path, instance: int) -> None:
    (root / "public").mkdir(parents=True)
    (root / "public" / "index.html").write_text(
        '<!doctype html><title>Shelf</title><script src="/_weblica/episode.js"></script>'
        f'<h1 id="k">Shelf number {instance + 11}</h1>')
    meta = {"spec": {"site_id": SITE, "host": HOST}, "initial_state": {}, **({"instance": instance} if instance else {})}
    (root / "site.json").write_text(json.dumps(meta))


@pytest.fixture(scope="module")
def family(tmp_path_factory):
    """A site with K instances of its data (as `weblica synth --instances` lays them out) and a task
    family whose member k asks about instance k."""
    from weblica.serve.backend import SynthBackend
    from weblica.serve.server import SiteServer

    bundle = tmp_path_factory.mktemp("bgym-instances") / SITE
    _site(bundle, 0)
    for k in range(1, K):
        _site(bundle / "instances" / str(k) / SITE, k)
    members = [{"instance": k, "instruction": "Which shelf number is shown?",
                "checks": [answer_text(f"Shelf number {k + 11}").to_dict()]} for k in range(K)]
    task = Task(id=f"{SITE}-t01", start_url=f"http://{HOST}/", instruction="Which shelf number is shown?",
                checks=[answer_text("Shelf number 11")], source=TaskSource(kind="synth", site=SITE),
                metadata={"instances": members})
    with SiteServer([bundle]) as server:
        yield SynthBackend(server), task


@pytest.mark.parametrize("made_for", [0, 2])
def test_each_reset_shows_its_own_seed_and_instance_and_the_right_answer_wins(family, made_for):
    backend, task = family
    env = bg_env.BrowserEnv(**wbg.browser_env_kwargs(task, backend, episode_id=f"bg-inst-{made_for}", seed=made_for),
                            headless=True)
    try:
        seen = {}
        for seed in (1, 2, 4):
            env.reset(seed=seed)
            page = env.unwrapped.page
            shown = page.inner_text("#k")
            seen[seed] = (page.evaluate("window.WEBLICA_EPISODE.seed"), shown)
            _, reward, terminated, _, _ = env.step(f'send_msg_to_user("{shown}")')
            assert terminated and reward == (1.0 if shown == f"Shelf number {seed % K + 11}" else 0.0)
        assert seen == {s: (s, f"Shelf number {s % K + 11}") for s in (1, 2, 4)}, seen
    finally:
        env.close()
