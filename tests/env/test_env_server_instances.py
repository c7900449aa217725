"""Fresh instances through the env server (issue 18 point 6): a remote trainer sends the base task; `/reset`
answers with the task the episode plays (the member of its seed's data), so its instruction, checks and
gold follow the pages the site now serves. Real server over HTTP, real Chromium, real site server; the
oracle of each returned member is played over `/step` and scores 1.0, another member's gold scores 0."""
from __future__ import annotations

import base64
import json
import threading
from typing import Any

import httpx
import pytest
from fixtures_sites import instance_family

from weblica.env.server import EnvService, make_env_server
from weblica.env.source_roots import SourceRoots
from weblica.env.task import Task, episode_task, load_tasks
from weblica.synth.instances import instance_root
from weblica.synth.spec import sample_spec

K = 3
NO_POPUPS = {"sticky_header": False, "lazy_loading": False, "overlays": {}}  # the oracle replays as recorded


@pytest.fixture(scope="module")
def family(tmp_path_factory):
    spec = sample_spec(3, skill="search")
    spec.distractors = dict(NO_POPUPS)
    out, bundle = instance_family(tmp_path_factory, spec, K)  # built once, shared with test_synth_instances
    tasks = load_tasks(bundle / "tasks.jsonl")
    task = next(t for t in tasks if len(t.metadata.get("instances", [])) == K and t.oracle
                and any(c.type == "answer_match" for c in t.checks)
                and len({json.dumps(m["checks"], sort_keys=True) for m in t.metadata["instances"][1:]}) == K - 1)
    return out, bundle, task


@pytest.fixture(scope="module")
def server(family):
    out, _, _ = family
    service = EnvService(max_sessions=3, roots=SourceRoots(sites=[out]))
    srv = make_env_server(service, "127.0.0.1", 0)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    client = httpx.Client(base_url=f"http://127.0.0.1:{srv.server_port}", timeout=120)
    yield client
    client.close()
    srv.shutdown()
    srv.server_close()
    service.shutdown()


def reset(client: httpx.Client, task: Task, seed: int) -> dict[str, Any]:
    r = client.post("/reset", json={"task": task.to_dict(), "seed": seed})
    assert r.status_code == 200, r.text[:400]
    return r.json()


def gold(task: dict[str, Any]) -> str:
    return str(next(c for c in task["checks"] if c["type"] == "answer_match")["expected"])


def play(client: httpx.Client, sid: str, task: dict[str, Any], answer: str) -> dict[str, Any]:
    """The returned task's oracle over /step (its own actions, without its done), then done(answer)."""
    body: dict[str, Any] = {}
    for action in task["oracle"]:
        if action["name"] == "done":
            break
        call = {"name": action["name"], "arguments": action["arguments"]}
        body = client.post("/step", json={"session_id": sid, "action": [call], "screenshot": False}).json()
        assert not body.get("done"), body
    body = client.post("/step", json={"session_id": sid, "screenshot": False,
                                      "action": [{"name": "done", "arguments": {"answer": answer}}]}).json()
    assert body["done"] and body["info"]["termination_reason"] == "done", body
    return body


def test_reset_returns_the_member_of_the_seed_and_it_scores_as_returned(family, server):
    _, bundle, task = family
    one, two, again = reset(server, task, 1), reset(server, task, 2), reset(server, task, 1 + K)
    for seed, answer in ((1, one), (2, two), (1 + K, again)):
        member = episode_task(task, seed)
        assert answer["task"] == member.to_dict() and answer["instruction"] == member.instruction
        assert answer["instance"] == seed % K and answer["task"]["metadata"]["instance"] == seed % K
        assert "instances" not in answer["task"]["metadata"]  # the family stays on the server's side
    assert one["instance"] == 1 and two["instance"] == 2
    assert one["task"]["checks"] != two["task"]["checks"] and gold(one["task"]) != gold(two["task"])
    assert one["instruction"] != task.instruction or one["task"]["checks"] != [c.to_dict() for c in task.checks]
    # the same seed (mod K): the same instruction, checks and start page, to the byte
    assert again["task"] == one["task"]
    assert base64.b64decode(again["observation"]["screenshot"]) == base64.b64decode(one["observation"]["screenshot"])
    assert base64.b64decode(two["observation"]["screenshot"]) != base64.b64decode(one["observation"]["screenshot"])
    # each member's gold is on its own instance's pages (the data the site serves that episode)
    for answer in (one, two):
        public = next(instance_root(bundle, answer["instance"]).glob("*/public"))
        text = "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in public.rglob("*")
                         if p.is_file() and p.suffix in (".html", ".json"))
        assert gold(answer["task"]) in text, gold(answer["task"])
    for sid in {one["session_id"], two["session_id"], again["session_id"]}:
        server.post("/close", json={"session_id": sid})


def test_the_returned_oracle_and_gold_succeed_and_another_member_s_gold_fails(family, server):
    _, _, task = family
    rewards = {}
    for seed in (1, 2):
        answer = reset(server, task, seed)
        rewards[seed] = play(server, answer["session_id"], answer["task"], gold(answer["task"]))["reward"]
        server.post("/close", json={"session_id": answer["session_id"]})
    assert rewards == {1: 1.0, 2: 1.0}
    # seed 2's episode answered with seed 1's gold (what a client that kept the base task's copy gets wrong)
    wrong = reset(server, task, 2)
    body = play(server, wrong["session_id"], wrong["task"], gold(episode_task(task, 1).to_dict()))
    assert body["reward"] == 0.0 and not all(r["passed"] for r in body["info"]["check_results"])
    server.post("/close", json={"session_id": wrong["session_id"]})
    assert server.get("/health").json()["sessions"] == 0


def test_the_gym_adapter_reports_the_played_instruction(family, monkeypatch):
    pytest.importorskip("gymnasium")
    from weblica.integrations.gym import WeblicaGymEnv

    out, _, task = family
    monkeypatch.setenv("WEBLICA_SITES", str(out))  # where the env's own synth backend finds the bundle
    env = WeblicaGymEnv([task])
    try:
        infos = [env.reset(seed=seed)[1] for seed in (1, 2, 1)]
    finally:
        env.close()
    assert [i["instance"] for i in infos] == [1, 2, 1]
    assert infos[0] == infos[2] and infos[0]["instruction"] == episode_task(task, 1).instruction
    assert env.task is not None and env.task.metadata.get("instance") == 1


def test_rewards_and_sft_prompts_use_the_member_of_the_trajectory_s_seed(family):
    import asyncio

    from weblica.env.episode import StepRecord, Trajectory
    from weblica.scoring.reward import compute_reward

    _, _, task = family
    member = episode_task(task, 2)
    traj = Trajectory(task_id=task.id, seed=2, episode_id="e", start_url=task.start_url, start_screenshot_sha256="",
                      termination_reason="done", answer=gold(member.to_dict()),
                      steps=[StepRecord(step=1, response="", actions=[{"name": "done", "arguments": {
                          "answer": gold(member.to_dict())}}], feedback=[], url=task.start_url,
                          screenshot_sha256="", reward=1.0, parse_errors=[])])
    # no env-side results: the reward reads the checks, which must be the member's
    result = asyncio.run(compute_reward(traj, task, state={}))
    assert result.reward == 1.0, result
    traj.seed = 1
    assert asyncio.run(compute_reward(traj, task, state={})).reward == 0.0

    from weblica.viewer.app import played_instruction
    assert played_instruction(task.to_dict(), 2) == member.instruction
    assert played_instruction({"id": "x", "instruction": "plain"}, 5) == "plain"
