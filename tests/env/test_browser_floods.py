"""Issue 39, point 4: the browser cannot be flooded. Tabs are capped (a page's 500 window.open calls, the
agent's own new_tab), downloads go to the episode's folder and are capped in count and bytes, reload and
redirect loops are cut, no blob:/data: document survives (tabs and frames), and a page off the task's
site that the agent opened and that hangs or crashes ends the episode as the agent's failure, while the
task's own site hanging or crashing stays an environment failure."""
from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from flask import Flask, Response

from sites import LocalServer
from weblica.browser.downloads import DownloadLimits
from weblica.env.browser_env import EnvConfig, WebEnv
from weblica.env.tabs import EpisodeLimits
from weblica.env.task import Task

MiB = 1 << 20


def act(name: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "arguments": args}


BUTTON = "position:absolute;left:20px;top:20px;width:200px;height:40px"


def hostile_app(hits: dict[str, int]) -> Flask:
    app = Flask("hostile")

    def button(script: str, extra: str = "") -> str:
        return (f"<!doctype html><html><body style='margin:0'><button id=b style='{BUTTON}' "
                f"onclick=\"{script}\">go</button>{extra}</body></html>")

    @app.get("/")
    def index() -> str:
        return "<!doctype html><title>Start</title><p>start</p>"

    @app.get("/flood")
    def flood() -> str:
        return button("for (let i = 0; i < 500; i++) window.open('/second?' + i)")

    @app.get("/second")
    def second() -> str:
        return "<!doctype html><title>Second</title><p>second</p>"

    @app.get("/downloads")
    def downloads() -> str:
        links = "".join(f"<a id=d{i} href='/file/{i}' download='f{i}.bin'>f{i}</a>" for i in range(4))
        return button("document.getElementById('big').click()",
                      f"<a id=big href='/big' download='big.bin'>big</a>{links}"
                      "<button id=many style='position:absolute;left:20px;top:100px;width:200px;height:40px' "
                      "onclick=\"for (const a of document.querySelectorAll('[id^=d]')) a.click()\">many</button>")

    @app.get("/big")
    def big() -> Response:
        hits["big"] = hits.get("big", 0) + 1

        def chunks() -> Any:
            for _ in range(500):
                yield b"\0" * MiB
        return Response(chunks(), mimetype="application/octet-stream")

    @app.get("/file/<int:i>")
    def small(i: int) -> Response:
        return Response(b"x" * 1000, mimetype="application/octet-stream")

    @app.get("/reload")
    def reload() -> str:
        hits["reload"] = hits.get("reload", 0) + 1
        return "<!doctype html><p>again</p><script>location.reload()</script>"

    @app.get("/ping")
    def ping() -> str:
        hits["pingpong"] = hits.get("pingpong", 0) + 1
        return "<!doctype html><script>location.href = '/pong'</script>"

    @app.get("/pong")
    def pong() -> str:
        hits["pingpong"] = hits.get("pingpong", 0) + 1
        return "<!doctype html><meta http-equiv=refresh content='0;url=/ping'><p>pong</p>"

    @app.get("/documents")
    def documents() -> str:
        return button("""
          const blob = window.URL.createObjectURL(new window.Blob(['<h1>made by script</h1>'], {type: 'text/html'}));
          window.open(blob);
          const f1 = document.createElement('iframe'); f1.src = 'data:text/html,<h1>data frame</h1>'; document.body.append(f1);
          const f2 = document.createElement('iframe'); f2.src = blob; document.body.append(f2);
          setTimeout(() => { window.location.href = blob; }, 50);""".replace("\n", " "))

    @app.get("/hang")
    def hang() -> str:
        return "<!doctype html><title>Hang</title><p>hang</p><script>setTimeout(() => { for (;;) {} }, 10)</script>"

    @app.get("/own-hang")
    def own_hang() -> str:
        return button("for (;;) {}")
    return app


@pytest.fixture(scope="module")
def hostile():
    hits: dict[str, int] = {}
    with LocalServer(hostile_app(hits)) as server:
        server.hits = hits
        yield server


def episode(server: Any, path: str, body: Any, config: EnvConfig | None = None) -> Any:
    async def go() -> Any:
        env = WebEnv(config or EnvConfig())
        try:
            await env.reset(Task(id="hostile", start_url=server.url + path, instruction="x", max_steps=200), seed=0)
            return await body(env)
        finally:
            await env.close()
    return asyncio.run(go())


def test_a_page_s_500_window_opens_leave_at_most_the_cap_and_the_agent_is_told(hostile):
    async def body(env: WebEnv) -> Any:
        obs, _, terminated, _, info = await env.step(act("click", x=100, y=40))
        await asyncio.sleep(0.5)
        return obs, terminated, info, len(env._tabs.context.pages), env._tabs.popups_closed
    obs, terminated, info, pages, closed = episode(hostile, "/flood", body,
                                                   EnvConfig(limits=EpisodeLimits(max_tabs=20)))
    assert not terminated and not info["env_failure"]
    assert len(obs.tabs) <= 20 and pages <= 20 and closed >= 1
    assert "at most 20 tabs" in obs.feedback[-1]


def test_the_agent_s_own_new_tabs_stop_at_the_cap(hostile):
    async def body(env: WebEnv) -> Any:
        obs, *_ = await env.step([act("new_tab")] * 30)
        return obs, len(env._tabs.context.pages)
    obs, pages = episode(hostile, "/", body, EnvConfig(limits=EpisodeLimits(max_tabs=8)))
    assert len(obs.tabs) == 8 and pages == 8
    assert sum(f.startswith("Failed: 'new_tab'") for f in obs.feedback) == 30 - 7


def test_download_count_is_capped(hostile, tmp_path):
    limits = DownloadLimits(max_count=2, folder=str(tmp_path / "downloads"))

    async def body(env: WebEnv) -> Any:
        many, *_ = await env.step([act("click", x=100, y=120), act("wait", seconds=2)])
        await _settled(env, started=4)
        later, *_ = await env.step(act("wait", seconds=0.1))  # what ended after the click's step is told now
        return many.feedback + later.feedback, sorted(p.stat().st_size for p in env._downloads.folder.iterdir())
    feedback, kept = episode(hostile, "/downloads", body, EnvConfig(downloads=limits))
    assert kept == [1000, 1000]
    said = " ".join(feedback)
    assert said.count("was cancelled: an episode may download at most 2 files") == 2 and "downloaded 'f" in said


async def _settled(env: WebEnv, started: int) -> None:
    """Until the page's downloads have all started and none runs (a loaded machine starts them late)."""
    deadline = time.monotonic() + 30
    while (env._downloads.started < started or env._downloads.running) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)


def _folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.iterdir()) if folder.exists() else 0


async def _drained(folder: Path) -> int:
    """The folder's bytes once a cancelled download's partial file is gone (Chromium deletes it after the
    cancel returns; a loaded machine takes a moment), or what is still there after 30 s."""
    deadline = time.monotonic() + 30
    while _folder_bytes(folder) and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    return _folder_bytes(folder)


def test_downloads_go_to_the_episode_s_folder_capped_in_bytes_and_count(hostile, tmp_path):
    limits = DownloadLimits(max_count=3, max_bytes=8 * MiB, folder=str(tmp_path / "downloads"))

    async def body(env: WebEnv) -> Any:
        folder = env._downloads.folder
        big, *_ = await env.step([act("click", x=100, y=40), act("wait", seconds=3)])
        await _settled(env, started=1)
        after_big = await _drained(folder)
        many, *_ = await env.step([act("click", x=100, y=120), act("wait", seconds=2)])
        await _settled(env, started=5)
        later, *_ = await env.step(act("wait", seconds=0.1))
        kept = sorted(p.stat().st_size for p in folder.iterdir())
        return folder, big.feedback + many.feedback + later.feedback, after_big, kept
    folder, feedback, after_big, kept = episode(hostile, "/downloads", body, EnvConfig(downloads=limits))
    assert folder.parent == tmp_path / "downloads"
    assert after_big == 0  # the 500 MiB one was cancelled and its partial file deleted
    # the agent is told at its next action what happened since its last
    said = " ".join(feedback)
    assert "1 download(s) were cancelled: an episode's downloads may take at most 8.0 MiB" in said
    # the byte cap was reached: the episode downloads nothing more
    assert kept == [] and said.count("already took their 8.0 MiB") == 4
    assert not folder.exists()  # the episode's folder goes with the episode


def test_reload_and_redirect_loops_are_cut_with_feedback(hostile):
    async def body(env: WebEnv) -> Any:
        out = []
        for path in ("/reload", "/ping"):
            before = dict(hostile.hits)
            obs, _, terminated, _, info = await env.step(act("goto_url", url=hostile.url + path))
            await asyncio.sleep(1)  # a loop that survived the step would keep counting meanwhile
            key = "reload" if path == "/reload" else "pingpong"
            out.append((hostile.hits.get(key, 0) - before.get(key, 0), obs, terminated, info))
        return out
    for loads, obs, terminated, info in episode(hostile, "/", body, EnvConfig(limits=EpisodeLimits(max_navigations=20))):
        assert not terminated and info["termination_reason"] is None
        assert loads <= 24, loads
        assert "reload or redirect loop" in " ".join(obs.feedback) and obs.url == "about:blank"


def test_no_blob_or_data_document_survives_in_tabs_or_frames(hostile):
    async def body(env: WebEnv) -> Any:
        survivors, notes = 0, []
        for _ in range(20):
            obs, *_ = await env.step([act("goto_url", url=hostile.url + "/documents"), act("click", x=100, y=40),
                                      act("wait", seconds=0.5)])
            for page in env._tabs.context.pages:
                survivors += sum(f.url.startswith(("blob:", "data:")) for f in page.frames)
            notes.append(" ".join(obs.feedback))
        return survivors, notes
    survivors, notes = episode(hostile, "/", body)
    assert survivors == 0
    assert all("only http(s) pages are shown" in n for n in notes), notes[:2]


# ---- whose failure a hang or a crash is -------------------------------------------------------------------

def test_a_hang_off_the_task_s_site_is_the_agent_s_failure_and_on_it_the_environment_s(hostile, site):
    config = EnvConfig(step_timeout_s=6)

    async def go() -> list[dict[str, Any]]:
        env = WebEnv(config)
        try:
            await env.reset(Task(id="own", start_url=site.url + "/", instruction="x", max_steps=20), seed=0)
            _, reward, terminated, _, off_site = await env.step(act("goto_url", url=hostile.url + "/hang"))
            if not terminated:  # the hang began after the navigation's step: the next one meets it
                _, reward, terminated, _, off_site = await env.step(act("click", x=10, y=10))
            await env.reset(Task(id="own", start_url=hostile.url + "/own-hang", instruction="x", max_steps=20), seed=0)
            _, _, _, _, on_site = await env.step(act("click", x=100, y=40))
            return [off_site | {"reward": reward}, on_site]
        finally:
            await env.close()
    off_site, on_site = asyncio.run(go())
    assert off_site["termination_reason"] == "page_hang" and off_site["env_failure"] is False
    assert off_site["reward"] == 0.0 and hostile.url in off_site["error"]
    assert on_site["termination_reason"] == "timeout" and on_site["env_failure"] is True


async def _crash_active_page(env: WebEnv) -> None:
    """A real renderer crash, through the DevTools protocol (the call itself never returns)."""
    session = await env._tabs.context.new_cdp_session(env._tabs.page)
    try:
        await asyncio.wait_for(session.send("Page.crash"), 3)
    except Exception:  # the renderer dies under the call
        pass
    assert env._tabs.crashed


def test_a_crash_off_the_task_s_site_is_the_agent_s_failure_and_on_it_the_environment_s(hostile, site):
    async def go() -> list[dict[str, Any]]:
        env = WebEnv()
        try:
            await env.reset(Task(id="own", start_url=site.url + "/", instruction="x", max_steps=20), seed=0)
            await env.step(act("goto_url", url=hostile.url + "/second"))
            await _crash_active_page(env)
            *_, off_site = await env.step(act("click", x=10, y=10))
            await env.reset(Task(id="own", start_url=site.url + "/", instruction="x", max_steps=20), seed=0)
            await _crash_active_page(env)
            *_, on_site = await env.step(act("click", x=10, y=10))
            return [off_site, on_site]
        finally:
            await env.close()
    off_site, on_site = asyncio.run(go())
    assert off_site["termination_reason"] == "page_crash" and off_site["env_failure"] is False
    assert on_site["termination_reason"] == "browser_crash" and on_site["env_failure"] is True


def test_the_rollout_scores_an_agent_caused_crash_0_and_does_not_mask_it():
    from weblica.env.episode import Trajectory
    from weblica.scoring.reward import compute_reward

    traj = Trajectory(task_id="t", seed=0, episode_id="e", start_url="http://a.test/", start_screenshot_sha256="",
                      termination_reason="page_crash", removed=False)
    result = asyncio.run(compute_reward(traj, Task(id="t", start_url="http://a.test/", instruction="x")))
    assert result.reward == 0.0 and not result.removed
