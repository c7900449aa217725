"""`weblica run` end to end: oracle solves hand-written tasks; the random policy is repeatable."""
import json
import subprocess
import sys

from weblica.env.backend import EPISODE_HEADER, NetworkConfig
from weblica.env.pool import EnvPool
from weblica.env.task import Task, save_tasks
from weblica.rollout import run_tasks
from hand_tasks import hand_tasks
from tests_helpers import run

WEBLICA = [sys.executable, "-m", "weblica.cli"]


def test_oracle_run_succeeds_on_every_task(site, tmp_path):
    tasks_file = tmp_path / "tasks.jsonl"
    save_tasks(hand_tasks(site.url), tasks_file)
    out = tmp_path / "run"
    proc = subprocess.run(WEBLICA + ["run", "--tasks", str(tasks_file), "--policy", "oracle", "--out", str(out),
                                     "--parallel", "2", "--json"], capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary == {"episodes": 4, "success_rate": 1.0, "termination_reasons": {"done": 4}, "removed": 0}
    episodes = [json.loads(l) for l in (out / "episodes.jsonl").read_text().splitlines()]
    assert [e["task_id"] for e in episodes] == ["open-search", "name-enter", "submit-form", "read-second"]
    for ep in episodes:
        assert ep["success"] and ep["reward"] == 1.0 and ep["termination_reason"] == "done"
        for s in ep["steps"]:
            assert s["actions"] and s["feedback"] and s["url"]
            assert (out / "screens" / f"{s['screenshot_sha256']}.png").exists()


def test_random_policy_is_repeatable(site, tmp_path):
    tasks_file = tmp_path / "tasks.jsonl"
    tasks = hand_tasks(site.url)
    for t in tasks:
        t.max_steps = 6
    save_tasks(tasks, tasks_file)
    outputs = []
    for name in ("a", "b"):
        out = tmp_path / name
        proc = subprocess.run(WEBLICA + ["run", "--tasks", str(tasks_file), "--policy", "random", "--seed", "3",
                                         "--out", str(out), "--parallel", "2", "--json"],
                              capture_output=True, text=True, timeout=180)
        assert proc.returncode == 0, proc.stderr
        outputs.append((out / "episodes.jsonl").read_bytes())
    assert outputs[0] == outputs[1]
    steps = sum(len(json.loads(l)["steps"]) for l in outputs[0].decode().splitlines())
    assert steps >= 8  # the random policy really acted


def test_run_reports_bad_task_file(tmp_path):
    bad = tmp_path / "tasks.jsonl"
    bad.write_text('{"id": "x"}\n')
    proc = subprocess.run(WEBLICA + ["run", "--tasks", str(bad), "--out", str(tmp_path / "r")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "tasks.jsonl:1: task is missing 'start_url'" in proc.stderr
    assert "Traceback" not in proc.stderr


class StateBackend:
    """A source backend that reads the test site's server-side state, as synth's does."""

    def __init__(self, url):
        self.url, self.seen = url, []

    async def begin(self, task, episode_id, seed):
        self.seen.append(episode_id)
        return NetworkConfig(extra_headers={EPISODE_HEADER: episode_id})

    async def state(self, task, episode_id):
        import httpx

        async with httpx.AsyncClient() as client:
            return (await client.get(self.url + "/__state")).json()

    async def end(self, task, episode_id):
        pass


def test_state_match_through_a_backend_and_pool(site, tmp_path):
    def act(name, **args):
        return {"name": name, "arguments": args}

    task = Task.from_dict({
        "id": "state", "source": {"kind": "teststate"}, "start_url": site.url + "/form",
        "instruction": "Submit 'zebra'.", "checks": [{"type": "state_match", "path": "submitted", "expected": "zebra",
                                                       "mode": "contains"}],
        "oracle": [act("type", text="zebra", x=200, y=60, enter=True), act("done", answer="")]})
    wrong = Task.from_dict({**task.to_dict(), "id": "state-wrong",
                            "oracle": [act("type", text="yak", x=200, y=60, enter=True), act("done", answer="")],
                            "checks": [{"type": "state_match", "path": "submitted", "expected": "okapi",
                                        "mode": "contains"}]})
    backend = StateBackend(site.url)
    from weblica.policy.oracle import OraclePolicy

    trajs, summary = run(run_tasks([task, wrong], OraclePolicy, tmp_path / "run", parallel=2,
                                   backends={"teststate": backend}))
    assert [t.success for t in trajs] == [True, False]
    assert len(set(backend.seen)) == 2  # each episode had its own id


def test_pool_runs_envs_concurrently():
    """Four episodes each waiting on a slow server response are in flight at the same time."""
    from sites import LocalServer, create_app
    import httpx

    with LocalServer(create_app()) as site:  # its own server: the concurrency count is per app
        async def go():
            async with EnvPool(4) as pool:
                async def job(env, i):
                    await env.reset(Task(id=f"p{i}", start_url=site.url + "/", instruction="x"), seed=i)
                    await env.step({"name": "goto_url", "arguments": {"url": site.url + "/hang?s=1.5"}})
                    return id(env._context), env.episode_id
                return await pool.map(range(4), job)
        results = run(go())
        assert len({ctx for ctx, _ in results}) == 4 and len({ep for _, ep in results}) == 4
        assert httpx.get(site.url + "/__state").json()["max_concurrent_hang"] == 4


def test_completion_threshold_cuts_stragglers(site, tmp_path):
    """Three quick episodes and one that hangs: with threshold 0.75 the straggler is cut and removed."""
    from weblica.policy.oracle import OraclePolicy

    tasks = hand_tasks(site.url)[:3]
    hang = Task.from_dict({"id": "hang", "start_url": site.url + "/", "instruction": "x",
                           "oracle": [{"name": "goto_url", "arguments": {"url": site.url + "/hang?s=20"}},
                                      {"name": "done", "arguments": {"answer": ""}}]})
    trajs, summary = run(run_tasks(tasks + [hang], OraclePolicy, tmp_path / "r", parallel=4,
                                   completion_threshold=0.75, grace_s=1.0))
    assert [t.success for t in trajs[:3]] == [True, True, True]
    assert trajs[3].removed and trajs[3].termination_reason == "timeout" and "completion threshold" in trajs[3].error
    assert summary.removed == 1
