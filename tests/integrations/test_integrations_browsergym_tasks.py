"""weblica task sets registered as BrowserGym tasks (`browsergym/weblica.<site>.<task>`) and run as an AgentLab
benchmark, against the real browsergym-core and browsergym-experiments 0.14.3 (installed by `.ci/setup` into
.browsergym/ without their dependencies; BROWSERGYM_PATH points elsewhere): gymnasium.make gives BrowserGym's
own BrowserEnv, in Debian's Chromium, on a shipped synth site and on a cache built from a live one, the
site's backend started by the registration itself."""
import json
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_path = os.environ.get("BROWSERGYM_PATH") or str(ROOT / ".browsergym")
if Path(_path).is_dir() and _path not in sys.path:
    sys.path.append(_path)
pytest.importorskip("browsergym.core.env", reason="browsergym-core not installed (.ci/setup puts it in .browsergym/)")

import gymnasium as gym  # noqa: E402

from weblica.env.task import Task, TaskSource, load_tasks  # noqa: E402
from weblica.integrations import browsergym as wbg  # noqa: E402
from weblica.integrations.browsergym_tasks import agentlab_benchmark, gym_name, register_tasks  # noqa: E402

SITE = ROOT / "sites" / "forms-travel-2a9523da"


@pytest.fixture(scope="module", autouse=True)
def shared_playwright():
    yield
    wbg.stop_playwright()  # BrowserGym's global Playwright would block every later sync Playwright here


def play(gym_id, seed, cheat=True):
    """gymnasium.make, reset at `seed`, the task's cheat (the env's oracle policy) when asked, then a step."""
    env = gym.make(gym_id, headless=True)
    try:
        obs, info = env.reset(seed=seed)
        task = env.unwrapped.task
        assert list(obs["goal_object"]) == [{"type": "text", "text": task.task.instruction}]
        if cheat:
            task.cheat(env.unwrapped.page, env.unwrapped.chat.messages)
            obs, reward, terminated, truncated, info = env.step("noop()")
        else:
            obs, reward, terminated, truncated, info = env.step('send_msg_to_user("Done.")')
        return reward, terminated, info
    finally:
        env.close()


def test_gym_names():
    task = Task(id="forms-travel-2a9523da-t01", start_url="http://x.test/", instruction="i",
                source=TaskSource("synth", site="forms-travel-2a9523da"))
    assert gym_name(task) == "weblica.forms-travel-2a9523da.t01"
    odd = Task(id="buy a lamp/v2", start_url="https://shop.example/", instruction="i")
    assert gym_name(odd) == "weblica.shop.example.buy_a_lamp_v2"
    versioned = Task(id="task-v3", start_url="https://shop.example/", instruction="i")
    assert gym_name(versioned) == "weblica.shop.example.task-v3_"   # gymnasium would read -v3 as a version
    assert gym.envs.registration.ENV_ID_RE.match(f"browsergym/{gym_name(versioned)}").group("version") is None


def test_a_shipped_synth_set_registers_and_plays_in_browser_env():
    ids = register_tasks(SITE / "tasks.jsonl")
    tasks = load_tasks(SITE / "tasks.jsonl")
    assert ids == [f"browsergym/weblica.forms-travel-2a9523da.{t.id.rsplit('-', 1)[1]}" for t in tasks]
    assert all(gym_id in gym.registry for gym_id in ids)
    # the oracle wins on the site's real per-episode state; the same answer without acting does not
    reward, terminated, info = play(ids[0], seed=0)
    assert terminated and reward == 1.0, info.get("task_info")
    assert info["task_info"]["check_results"] and all(r["passed"] for r in info["task_info"]["check_results"])
    reward, terminated, _ = play(ids[0], seed=0, cheat=False)
    assert terminated and reward == 0.0


def test_duplicate_gym_ids_are_refused():
    a = Task(id="x-t1", start_url="http://x.test/", instruction="i", source=TaskSource("synth", site="x"))
    b = Task(id="t1", start_url="http://x.test/", instruction="i", source=TaskSource("synth", site="x"))
    with pytest.raises(ValueError, match="would both be browsergym/weblica.x.t1"):
        register_tasks([a, b])


def test_an_agentlab_benchmark_of_the_set():
    pytest.importorskip("browsergym.experiments", reason="browsergym-experiments not installed (.ci/setup)")
    from browsergym.experiments.benchmark import Benchmark

    benchmark = agentlab_benchmark("weblica-forms-travel", SITE / "tasks.jsonl", seeds=(0, 1))
    tasks = load_tasks(SITE / "tasks.jsonl")
    assert isinstance(benchmark, Benchmark) and benchmark.backends == []
    assert len(benchmark.env_args_list) == 2 * len(tasks)
    first = benchmark.env_args_list[0]
    assert first.task_name == "weblica.forms-travel-2a9523da.t01" and first.max_steps == tasks[0].max_steps
    assert set(benchmark.task_metadata["task_name"]) == {e.task_name for e in benchmark.env_args_list}
    # what AgentLab's loop does with each entry: EnvArgs.make_env, with the agent's action mapping
    action_set = benchmark.high_level_action_set_args.make_action_set()
    env = first.make_env(action_mapping=action_set.to_python_code, exp_dir=Path("."))
    try:
        env.reset(seed=first.task_seed)
        env.unwrapped.task.cheat(env.unwrapped.page, env.unwrapped.chat.messages)
        _, reward, terminated, _, _ = env.step("noop()")
        assert terminated and reward == 1.0
    finally:
        env.close()
    assert json.loads(benchmark.to_json())["name"] == "weblica-forms-travel"   # AgentLab saves it with each study


def test_a_cache_set_plays_from_its_recording_with_the_site_gone(tmp_path):
    """`weblica cache build` on a live (loopback HTTPS) site, the site stopped, its cache tasks registered:
    BrowserEnv loads them from the replay proxy and the oracle's cheat is scored by the task's checks."""
    import subprocess

    from weblica.cache.demo_site import NewsSite, news_tasks

    with NewsSite() as site:
        live = [t for t in news_tasks(site) if t["id"] == "news-election"]
        (tmp_path / "live.jsonl").write_text("".join(json.dumps(t) + "\n" for t in live))
        args = [sys.executable, "-m", "weblica.cli", "cache", "build", "--tasks", str(tmp_path / "live.jsonl"),
                "--policy", "oracle", "--runs", "2", "--out", str(tmp_path / "cache"), "--json"]
        for spec in site.resolve:
            args += ["--resolve", spec]
        result = subprocess.run(args, capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, result.stdout + result.stderr[-3000:]
        assert [r["id"] for r in json.loads(result.stdout)["kept"]] == ["news-election"]
    (gym_id,) = register_tasks(tmp_path / "cache" / "tasks.jsonl")
    assert gym_id == "browsergym/weblica.news.election"   # the task id without its site's prefix
    reward, terminated, info = play(gym_id, seed=0)
    assert terminated and reward == 1.0, info.get("task_info")


def test_the_example_runs(tmp_path):
    """examples/browsergym_tasks.py, as a user runs it, on one task of the shipped site."""
    import subprocess

    tasks = load_tasks(SITE / "tasks.jsonl")[:1]
    from weblica.env.task import save_tasks

    save_tasks(tasks, tmp_path / "tasks.jsonl")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [_path, os.environ.get("PYTHONPATH")]))}
    result = subprocess.run([sys.executable, str(ROOT / "examples" / "browsergym_tasks.py"),
                             str(tmp_path / "tasks.jsonl")], capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "registered 1 BrowserGym tasks, e.g. browsergym/weblica.forms-travel-2a9523da.t01" in result.stdout
    assert "browsergym/weblica.forms-travel-2a9523da.t01: reward 1.0" in result.stdout
    assert "AgentLab benchmark weblica-example: 1 episodes" in result.stdout
