"""Hardening figures of issue 39 (bench/hardening.py runs them with its own sections): episodes that share
nothing, refused addresses in a generated set of spellings each read as Chromium reads it, the tab and
download caps, a gzip bomb on import, and a run killed with SIGKILL then resumed. Each section returns its
figures as (name, value, goal, ok[, detail]) tuples.
"""
from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any, Callable

from sites import LocalServer
from weblica.env.browser_env import WebEnv
from weblica.env.task import Task


def episodes_isolated(work: Path, scale: float) -> list[tuple[Any, ...]]:
    from test_episode_isolation import Served, finish, play_oracle, state_task

    served = Served(max_sessions=4)
    try:
        task = state_task()
        solver, idle = (served.post("/reset", task=task, seed=0, screenshot=False)["session_id"] for _ in range(2))
        play_oracle(served, solver, task)
        rewards = (finish(served, solver), finish(served, idle))
    finally:
        served.close()
    return [("two sessions on one task and seed: rewards (solver, idle)", f"{rewards[0]:g}, {rewards[1]:g}",
                   "1, 0", rewards == (1.0, 0.0))]


def address_spellings(work: Path, scale: float) -> list[tuple[Any, ...]]:
    import ipaddress

    from test_refused_addresses import chromium_hosts, ours, urls
    from weblica.browser.navigation import NavigationPolicy, address_kind

    candidates = urls()
    read = asyncio.run(chromium_hosts(candidates))
    differs = sum(1 for url, host in zip(candidates, read) if ours(url) != host)
    live = NavigationPolicy("live")
    passes = sum(1 for url, host in zip(candidates, read)
                 if host is not None and address_kind(ipaddress.ip_address(host.strip("[]")))
                 and live.url_refusal(url) is None)
    return [("refused-address spellings tried (each read by Chromium)", len(candidates), ">= 250",
                   len(candidates) >= 250),
            ("  read otherwise than Chromium reads them", differs, "0", differs == 0),
            ("  passes", passes, "0", passes == 0)]


def browser_floods(work: Path, scale: float) -> list[tuple[Any, ...]]:
    from test_browser_floods import act, hostile_app
    from weblica.browser.downloads import DownloadLimits
    from weblica.env.browser_env import EnvConfig
    from weblica.env.tabs import EpisodeLimits

    hits: dict[str, int] = {}
    config = EnvConfig(limits=EpisodeLimits(max_tabs=20), downloads=DownloadLimits(max_bytes=16 << 20))
    with LocalServer(hostile_app(hits)) as server:
        async def go() -> tuple[int, int, int]:
            env = WebEnv(config)
            try:
                await env.reset(Task(id="flood", start_url=server.url + "/flood", instruction="x", max_steps=50), 0)
                await env.step(act("click", x=100, y=40))
                tabs = len(env._tabs.context.pages)
                await env.reset(Task(id="dl", start_url=server.url + "/downloads", instruction="x", max_steps=50), 0)
                folder = env._downloads.folder
                await env.step([act("click", x=100, y=40), act("wait", seconds=1)])
                deadline = time.monotonic() + 30
                while time.monotonic() < deadline and (env._downloads.running or not env._downloads.started):
                    await asyncio.sleep(0.05)
                kept, peak = sum(p.stat().st_size for p in folder.iterdir()), env._downloads.peak_bytes
                return tabs, peak, kept
            finally:
                await env.close()
        tabs, peak, kept = asyncio.run(go())
    return [("tabs after a page's 500 window.open (cap 20)", tabs, "<= 20", tabs <= 20),
            ("download bytes kept after a 500 MiB download (cap 16 MiB)", f"{kept >> 20} MiB", "0",
                   kept == 0, f"peak written {peak >> 20} MiB"),
            ("  most written at once before the cancel", f"{peak >> 20} MiB", "< 64 MiB", peak < 64 << 20)]


def import_bombs(work: Path, scale: float) -> list[tuple[Any, ...]]:
    from test_import_bounds import gzip_of_zeros, run_measured, warc_with

    (work / "bomb.warc").write_bytes(warc_with(gzip_of_zeros(int(1024 * scale) << 20), "gzip"))
    proc, peak_kib = run_measured(["import", "bomb.warc", "--out", "rec", "--json"], work)
    lines = proc.stdout.strip().splitlines()
    refused = (proc.returncode != 0 and len(lines) == 1 and "decodes to more than" in json.loads(lines[0])["error"]
               and not (work / "rec").exists())
    size = (work / "bomb.warc").stat().st_size
    return [(f"gzip bomb ({size >> 10} KiB WARC of {int(1024 * scale)} MiB) refused", "yes" if refused else "no",
                   "yes", refused, proc.stdout[-200:]),
            ("  peak memory of the import (2.1 GiB before the cap)", f"{peak_kib >> 10} MiB", "< 400 MiB",
                   peak_kib < 400 << 10)]


def kill_and_resume(work: Path, scale: float) -> list[tuple[Any, ...]]:
    from test_run_resume import Counted, kill_group, resume_tasks, run_cmd, wait_for_lines

    from weblica.env.task import save_tasks
    from weblica.run_log import read_whole_lines

    served = Counted()
    with LocalServer(served.app) as server:
        tasks = work / "tasks.jsonl"
        save_tasks(resume_tasks(server.url), tasks)
        whole = subprocess.run(run_cmd(tasks, work / "whole"), capture_output=True, text=True, timeout=600)
        proc = subprocess.Popen(run_cmd(tasks, work / "killed"), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
        try:
            wait_for_lines(work / "killed" / "episodes.jsonl", 3, proc)
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=60)
        finally:
            kill_group(proc)
        kept = len(read_whole_lines(work / "killed" / "episodes.jsonl")[0])
        resumed = subprocess.run(run_cmd(tasks, work / "killed", "--resume"), capture_output=True, text=True,
                                 timeout=600)
    same = (whole.returncode == 0 and resumed.returncode == 0 and (work / "whole" / "episodes.jsonl").read_bytes()
            == (work / "killed" / "episodes.jsonl").read_bytes())
    return [("kill -9 mid-run, then --resume: episodes as an uninterrupted run", "yes" if same else "no", "yes",
                   same, f"{kept} kept through the kill; {resumed.stdout[-160:]}")]


V2_SECTIONS: list[Callable[[Path, float], list[tuple[Any, ...]]]] = [
    episodes_isolated, address_spellings, browser_floods, import_bombs, kill_and_resume,
]
