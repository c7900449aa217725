"""Issue 39, point 1: episodes share nothing. Two env-server sessions on one synth task and seed keep their
own server-side state (the table's probe: an idle session's `done` scored 1.0 from the other's actions), a
GRPO group of 8 on one task at one seed is scored on each rollout's own actions, and the clipboard is the
episode's own (Chromium keeps one clipboard for every context: episode 2 pasted what episode 1 copied)."""
from __future__ import annotations

import asyncio
import json
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from flask import Flask

from sites import LocalServer
from weblica.env.browser_env import WebEnv
from weblica.env.server import EnvService, make_env_server
from weblica.env.source_roots import SourceRoots
from weblica.env.task import Task

SITES = Path(__file__).resolve().parents[2] / "sites"
BUNDLE = "checkout-groceries-0bebe201"


def state_task() -> dict[str, Any]:
    """The shipped bundle's first task: 4 x an item in the cart, checked on the site's server-side state."""
    line = (SITES / BUNDLE / "tasks.jsonl").read_text(encoding="utf-8").splitlines()[0]
    task = json.loads(line)
    assert [c["type"] for c in task["checks"]] == ["state_match", "state_match"]
    return task


class Served:
    def __init__(self, max_sessions: int = 8) -> None:
        self.service = EnvService(max_sessions=max_sessions, roots=SourceRoots(sites=[SITES]))
        self.server = make_env_server(self.service, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.client = httpx.Client(base_url=self.url, timeout=180)

    def post(self, path: str, **body: Any) -> dict[str, Any]:
        answer = self.client.post(path, json=body)
        assert answer.status_code == 200, answer.text[:300]
        return answer.json()

    def close(self) -> None:
        self.client.close()
        self.server.shutdown()
        self.server.server_close()
        self.service.shutdown()


@pytest.fixture(scope="module")
def served():
    running = Served()
    yield running
    running.close()


def play_oracle(served: Served, session: str, task: dict[str, Any]) -> None:
    for action in task["oracle"]:
        step = served.post("/step", session_id=session, action={"name": action["name"],
                                                                "arguments": action["arguments"]}, screenshot=False)
        assert not step["done"], step["info"]


def finish(served: Served, session: str) -> float:
    step = served.post("/step", session_id=session, action={"name": "done", "arguments": {"answer": "done"}},
                       screenshot=False)
    assert step["done"] and step["info"]["termination_reason"] == "done"
    return step["reward"]


def test_the_table_probe_an_idle_session_scores_its_own_state_not_the_other_s(served):
    task = state_task()
    a = served.post("/reset", task=task, seed=0, screenshot=False)
    b = served.post("/reset", task=task, seed=0, screenshot=False)
    play_oracle(served, a["session_id"], task)
    # B never acted: with the state of A's episode it scored 1.0
    assert finish(served, b["session_id"]) == 0.0
    assert finish(served, a["session_id"]) == 1.0
    for sid in (a["session_id"], b["session_id"]):
        served.post("/close", session_id=sid)


def test_a_grpo_group_of_8_on_one_task_and_seed_is_scored_on_each_rollout_s_own_actions(served):
    task = state_task()
    with ThreadPoolExecutor(8) as pool:
        sessions = [r["session_id"] for r in pool.map(
            lambda _: served.post("/reset", task=task, seed=0, screenshot=False), range(8))]
    assert len(set(sessions)) == 8
    players = sessions[::2]
    with ThreadPoolExecutor(4) as pool:  # half the group solves the task, all at once
        list(pool.map(lambda sid: play_oracle(served, sid, task), players))
    # the other half ends only after the solvers filled their carts: shared state would score them 1.0
    with ThreadPoolExecutor(8) as pool:
        rewards = list(pool.map(lambda sid: finish(served, sid), sessions))
    assert rewards == [1.0, 0.0] * 4
    for sid in sessions:
        served.post("/close", session_id=sid)


def test_every_reset_of_one_task_and_seed_gets_its_own_episode_id(site):
    async def go() -> list[str]:
        env = WebEnv()
        try:
            ids = []
            task = Task(id="same", start_url=site.url + "/", instruction="x")
            for _ in range(3):
                await env.reset(task, seed=7)
                ids.append(env.episode_id)
            return ids
        finally:
            await env.close()
    ids = asyncio.run(go())
    assert len(set(ids)) == 3 and all(i.startswith("ep-") for i in ids)


# ---- the clipboard ---------------------------------------------------------------------------------------

def clip_app() -> Flask:
    app = Flask("clip")

    @app.get("/")
    def index() -> str:
        return """<!doctype html><html><body style="margin:0">
<input id="src" value="secret-of-episode-one" style="position:absolute;left:20px;top:20px;width:300px;height:30px">
<input id="dst" style="position:absolute;left:20px;top:80px;width:300px;height:30px">
<p id="read" style="position:absolute;left:20px;top:140px"></p>
<script>
document.getElementById('dst').addEventListener('focus', () => {
  navigator.clipboard.readText().then(t => { document.getElementById('read').textContent = 'read:' + t; },
                                      e => { document.getElementById('read').textContent = 'denied'; });
});
</script></body></html>"""
    return app


def act(name: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "arguments": args}


async def _value(env: WebEnv, selector: str) -> str:
    return await env._tabs.page.eval_on_selector(selector, "e => e.value")


def test_the_clipboard_is_the_episode_s_own_across_resets_and_at_the_same_time():
    with LocalServer(clip_app()) as server:
        task = Task(id="clip", start_url=server.url + "/", instruction="x", max_steps=50)

        async def go() -> dict[str, Any]:
            env, other = WebEnv(), None
            try:
                await env.reset(task, seed=0)
                await env.step([act("click", x=100, y=35), act("press_keys", keys=["Control+a"]),
                                act("press_keys", keys=["Control+c"])])
                # the same episode pastes what it copied (copy and paste still work)
                obs, *_ = await env.step([act("click", x=100, y=95), act("press_keys", keys=["Control+v"])])
                own = await _value(env, "#dst")
                page_read = await env._tabs.page.eval_on_selector("#read", "e => e.textContent")
                # another episode running at the same time, in the same browser, pastes nothing of it
                other = WebEnv(host=env.host)
                await other.reset(task, seed=0)
                await other.step([act("click", x=100, y=95), act("press_keys", keys=["Control+v"])])
                concurrent = await _value(other, "#dst")
                # the next episode of the first env neither
                await env.reset(task, seed=1)
                await env.step([act("click", x=100, y=95), act("press_keys", keys=["Shift+Insert"])])
                next_episode = await _value(env, "#dst")
                # cut takes the text out of the field and into this episode's clipboard only
                await env.step([act("click", x=100, y=35), act("press_keys", keys=["Control+a"]),
                                act("press_keys", keys=["Control+x"]), act("click", x=100, y=95),
                                act("press_keys", keys=["Control+v"])])
                cut = (await _value(env, "#src"), await _value(env, "#dst"))
                return {"own": own, "page_read": page_read, "concurrent": concurrent, "next": next_episode,
                        "cut": cut}
            finally:
                if other is not None:
                    await other.close_episode()
                await env.close()
        seen = asyncio.run(go())
    assert seen["own"] == "secret-of-episode-one"
    assert seen["page_read"] in ("denied", "")  # a page cannot read the browser's clipboard
    assert seen["concurrent"] == "" and seen["next"] == ""
    assert seen["cut"] == ("", "secret-of-episode-one")
