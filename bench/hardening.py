"""Hardening figures (issue 17, R1): what a hostile or careless user can do to the environment, counted.

Sections (each a function returning Figures, so more can be added to SECTIONS):
- malformed tool calls through WebEnv.step and malformed env-server requests: tried, crashes;
- concurrent writers with nothing lost: /steps on one session, the site server's state API, the cache
  store from several processes, `weblica run --parallel` writing episodes.jsonl;
- browser kills: Chromium SIGKILLed between steps and during one; the env reports browser_crash and
  the next reset recovers;
- corrupt inputs (task files, recordings, HAR, WARC, configs) through the CLI with --json: each a clear
  one-line JSON error, no traceback;
- outbound connections in synth and replay modes: loopback listeners that must see no connection, and
  the replay check's own count;
- issue 39 (hardening v2): sessions on one task and seed independent, refused addresses in a generated set
  of spellings (each read as Chromium reads it) with 0 passes, the tab and download caps held, a gzip
  bomb refused with bounded memory, and a run killed with SIGKILL then resumed with nothing lost.

Prints a table; exits 1 if any figure is off its goal. Run: `.venv/bin/python bench/hardening.py`
(about two minutes on 2 cores; `--quick` halves the fuzz sizes).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import logging
import multiprocessing
import os
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
# the hardening sections reuse the tests' hostile pages and servers, which live in these rooms
for room in ("env", "cache", "eval", "cli"):
    sys.path.insert(0, str(ROOT / "tests" / room))
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from hardening_v2 import V2_SECTIONS  # noqa: E402
from sites import LocalServer, create_app as create_test_site  # noqa: E402
from weblica.env.browser_env import WebEnv  # noqa: E402
from weblica.env.task import Task, TaskSource  # noqa: E402

WEBLICA = [sys.executable, "-m", "weblica.cli"]


@dataclass
class Figure:
    name: str
    value: Any
    goal: str
    ok: bool
    detail: str = ""


def act(name: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "arguments": args}


# ---- malformed input -----------------------------------------------------------------------------------

def malformed_input(work: Path, scale: float) -> list[Figure]:
    from test_env_robustness import fuzzed_calls
    from test_env_server_hardening import Running, malformed_requests, send, task_for

    figures = []
    with LocalServer(create_test_site()) as site:
        # tool calls straight into the env
        calls = fuzzed_calls(int(120 * scale), seed=4321)
        crashes, notes = 0, []

        async def play() -> None:
            nonlocal crashes
            env = WebEnv()
            task = Task(id="fuzz", start_url=site.url + "/", instruction="x", max_steps=1000)
            try:
                await env.reset(task, seed=0)
                for i, text in enumerate(calls):
                    try:
                        _, _, terminated, _, info = await env.step(text)
                    except Exception as exc:  # step promises never to raise on bad input
                        crashes += 1
                        notes.append(f"{type(exc).__name__}: {exc}"[:120])
                        await env.reset(task, seed=i)
                        continue
                    if info["env_failure"]:
                        crashes += 1
                        notes.append(info.get("error", "")[:120])
                    if terminated:
                        await env.reset(task, seed=i)
            finally:
                await env.close()
        asyncio.run(play())
        tool_tried = len(calls)

        # requests to the env server, a quarter of them at once
        running = Running(max_sessions=3)
        try:
            client = httpx.Client(base_url=running.url, timeout=120)
            sid = client.post("/reset", json={"task": task_for(site.url, max_steps=1000),
                                              "screenshot": False}).json()["session_id"]
            requests = malformed_requests(int(240 * scale), seed=99, session_id=sid, start_url=site.url + "/")
            cut = len(requests) * 3 // 4

            def one(request: Any) -> str | None:
                try:
                    answer = send(running.url, request)
                except httpx.HTTPError as exc:
                    return f"{request[:2]}: {type(exc).__name__}"
                if answer.status_code >= 500:
                    return f"{request[:2]}: {answer.status_code} {answer.text[:80]}"
                if answer.status_code >= 400 and request[0] != "HEAD" and "error" not in answer.json():
                    return f"{request[:2]}: {answer.status_code} without a JSON error"
                return None
            failures = [one(r) for r in requests[:cut]]
            with ThreadPoolExecutor(8) as pool:
                failures += list(pool.map(one, requests[cut:]))
            server_crashes = [f for f in failures if f]
            health = client.get("/health").json()
            healthy = health["status"] == "ok" and health["browser"] and health["sessions"] == 1
            if not healthy:
                server_crashes.append(f"unhealthy after the fuzz: {health}")
        finally:
            running.close()
    figures.append(Figure("malformed tool calls + env-server requests tried", tool_tried + len(requests), ">= 200",
                          tool_tried + len(requests) >= 200, f"{tool_tried} tool calls, {len(requests)} requests"))
    figures.append(Figure("  crashes (exceptions, env failures, 5xx, non-JSON errors)", crashes + len(server_crashes),
                          "0", crashes + len(server_crashes) == 0, "; ".join((notes + server_crashes)[:3])))
    return figures


# ---- concurrent writers --------------------------------------------------------------------------------

def _store_writer(rec: str, writer: int, n: int) -> None:
    from weblica.cache.exchange import Exchange
    from weblica.cache.store import Store

    with Store.open_dir(rec) as store:
        run_id = store.new_run("import", seed=writer)
        for i in range(n):
            body = f"writer {writer} exchange {i}".encode()
            store.add_exchange(Exchange(method="GET", url=f"http://w{writer}.test/{i}", status=200, seq=i,
                                        run_id=run_id), response_body=body)


def concurrent_writers(work: Path, scale: float) -> list[Figure]:
    from test_env_server_hardening import Running, task_for
    from hand_tasks import hand_tasks

    from weblica.cache.store import Store
    from weblica.env.task import save_tasks
    from weblica.serve.app import EPISODE_HEADER
    from weblica.serve.server import SiteServer
    from weblica.synth.generate import write_unvalidated
    from weblica.synth.spec import sample_spec

    figures = []
    with LocalServer(create_test_site()) as site:
        # /step on one env-server session from 8 threads: each must see the page it asked for
        running = Running()
        try:
            sid = httpx.post(running.url + "/reset", timeout=60, json={"task": task_for(site.url),
                                                                        "screenshot": False}).json()["session_id"]
            urls = [f"{site.url}/second?writer={i}" for i in range(8)]
            with ThreadPoolExecutor(len(urls)) as pool:
                answers = list(pool.map(lambda u: httpx.post(running.url + "/step", timeout=120, json={
                    "session_id": sid, "screenshot": False, "action": act("goto_url", url=u)}), urls))
            own = sum(1 for u, a in zip(urls, answers) if a.status_code == 200 and a.json()["observation"]["url"] == u)
            steps = sorted(a.json()["info"]["step"] for a in answers if a.status_code == 200)
        finally:
            running.close()
        figures.append(Figure("concurrent /steps on one session, each its own observation", f"{own}/{len(urls)}",
                              "all", own == len(urls) and steps == list(range(1, len(urls) + 1)), f"steps {steps}"))

        # weblica run --parallel 4: every episode's line in episodes.jsonl, whole
        tasks = []
        for k in range(2):
            for task in hand_tasks(site.url):
                task.id = f"{task.id}-{k}"
                tasks.append(task)
        save_tasks(tasks, work / "tasks.jsonl")
        out = work / "run"
        proc = subprocess.run(WEBLICA + ["run", "--tasks", str(work / "tasks.jsonl"), "--out", str(out),
                                         "--parallel", "4", "--repeats", "2", "--json"],
                              capture_output=True, text=True, timeout=600)
        lines = (out / "episodes.jsonl").read_text().splitlines() if (out / "episodes.jsonl").exists() else []
        whole = sum(1 for line in lines if json.loads(line).get("task_id"))
        expected = len(tasks) * 2
        figures.append(Figure("weblica run --parallel 4: episodes written whole", f"{whole}/{expected}", "all",
                              proc.returncode == 0 and whole == expected, proc.stderr.strip()[-120:]))

    # the site server's state API from 8 threads at once, on one episode
    bundle = write_unvalidated(sample_spec(4, "checkout", "groceries", "corporate-clean"), work / "sites")
    per_thread = int(25 * scale)
    with SiteServer([bundle], state_url=f"sqlite:///{work / 'state.sqlite'}") as server:
        host = server.hosts[0]
        headers = {EPISODE_HEADER: "writers"}

        def post(thread: int) -> int:
            with httpx.Client(proxy=server.url, trust_env=False, timeout=30) as client:
                return sum(client.post(f"http://{host}/api/orders", headers=headers,
                                       json={"id": f"t{thread}-{i}", "n": i}).status_code == 200
                           for i in range(per_thread))
        with ThreadPoolExecutor(8) as pool:
            accepted = sum(pool.map(post, range(8)))
        with httpx.Client(proxy=server.url, trust_env=False) as client:
            kept = len(client.get(f"http://{host}/api/state", headers=headers).json().get("orders", []))
    figures.append(Figure("site server state API, 8 concurrent writers: records kept", f"{kept}/{8 * per_thread}",
                          "all", kept == accepted == 8 * per_thread))

    # the cache store from 4 processes at once (SQLite + content-addressed bodies)
    rec = work / "rec"
    Store.open_dir(rec, create=True).close()
    n = int(50 * scale)
    procs = [multiprocessing.Process(target=_store_writer, args=(str(rec), w, n)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    with Store.open_dir(rec) as store:
        exchanges = store.exchanges()
        intact = sum(1 for e in exchanges  # each body is the one its writer stored for that URL
                     if store.bodies.get(e.response_body_digest).decode().endswith(e.url.rsplit("/", 1)[1]))
    figures.append(Figure("cache store, 4 writer processes: exchanges kept with their bodies",
                          f"{intact}/{4 * n}", "all", intact == len(exchanges) == 4 * n
                          and all(p.exitcode == 0 for p in procs)))
    return figures


# ---- browser kills -------------------------------------------------------------------------------------

def _chromium_pids() -> list[int]:
    """Main Chromium processes descended from this one (not its renderers or helpers)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
                parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                pass
    mine = {os.getpid()}
    changed = True
    while changed:
        changed = False
        for pid, ppid in parents.items():
            if ppid in mine and pid not in mine:
                mine.add(pid)
                changed = True
    out = []
    for pid in mine - {os.getpid()}:
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and b"chrom" in Path(argv[0].decode(errors="replace")).name.encode() and not any(
                a.startswith(b"--type=") for a in argv):
            out.append(pid)
    return out


def browser_kills(work: Path, scale: float) -> list[Figure]:
    kills = [("between steps", False), ("during a step", True), ("between steps", False)]
    survived, notes = 0, []
    with LocalServer(create_test_site()) as site:
        async def go() -> None:
            nonlocal survived
            env = WebEnv()
            task = Task(id="kill", start_url=site.url + "/", instruction="x", max_steps=20)
            try:
                for when, during in kills:
                    await env.reset(task, seed=0)
                    pids = _chromium_pids()
                    if not pids:
                        notes.append("no Chromium process found to kill")
                        continue
                    if during:
                        step = asyncio.ensure_future(env.step(act("goto_url", url=site.url + "/hang?s=3")))
                        await asyncio.sleep(0.7)
                        for pid in pids:
                            os.kill(pid, signal.SIGKILL)
                        _, _, terminated, _, info = await step
                    else:
                        for pid in pids:
                            os.kill(pid, signal.SIGKILL)
                        await asyncio.sleep(0.3)
                        _, _, terminated, _, info = await env.step(act("click", x=150, y=115))
                    reported = terminated and info["termination_reason"] == "browser_crash" and info["env_failure"]
                    obs = await env.reset(task, seed=0)
                    obs, *_ = await env.step(act("click", x=150, y=115))
                    recovered = obs.url == site.url + "/second"
                    survived += reported and recovered
                    if not (reported and recovered):
                        notes.append(f"{when}: reason {info['termination_reason']}, recovered {recovered}")
            finally:
                await env.close()
        asyncio.run(go())
    return [Figure("browser kills survived (browser_crash reported, next reset works)",
                   f"{survived}/{len(kills)}", "all", survived == len(kills), "; ".join(notes))]


# ---- corrupt inputs ------------------------------------------------------------------------------------

def _corrupt_cases(work: Path) -> list[tuple[str, list[str]]]:
    from test_cli_json_errors import BAD_TASK_LINES

    cases = []
    for i, (line, _) in enumerate(BAD_TASK_LINES[:8]):
        path = work / f"tasks-{i}.jsonl"
        path.write_text(line + "\n")
        cases.append((f"task file: {_[:40]}", ["run", "--tasks", str(path), "--out", str(work / f"r{i}")]))
    for name, data in [("garbage", b"\x00garbage" * 300), ("empty", b"")]:
        rec = work / f"rec-{name}"
        rec.mkdir()
        (rec / "recording.sqlite").write_bytes(data)
        cases.append((f"recording: {name} SQLite, replay --check", ["replay", str(rec), "--check"]))
        cases.append((f"recording: {name} SQLite, export har", ["export", str(rec), "--format", "har",
                                                                 "--out", str(work / f"{name}.har")]))
    files = {
        "garbage.har": b"\x89PNG not a har",
        "types.har": json.dumps({"log": {"entries": [{"request": 5, "response": "x"}]}}).encode(),
        "base64.har": json.dumps({"log": {"entries": [{"startedDateTime": "2024-01-01T00:00:00Z",
                                                      "request": {"method": "GET", "url": "http://a.test/",
                                                                  "headers": []},
                                                      "response": {"status": 200, "headers": [], "content": {
                                                          "text": "!!notbase64", "encoding": "base64"}}}]}}).encode(),
        "garbage.warc": b"garbage\r\n" * 40,
        "truncated.warc": b"WARC/1.0\r\nWARC-Type: response\r\nContent-Length: 5000\r\n\r\nHTTP/1.1 200 OK\r\n",
    }
    for name, data in files.items():
        (work / name).write_bytes(data)
        cases.append((f"import {name}", ["import", str(work / name), "--out", str(work / f"imp-{name}")]))
    (work / "bad.yaml").write_text("model: [unclosed\n  lr: : :\n")
    cases.append(("train config: broken YAML", ["train", "sft", "--config", str(work / "bad.yaml")]))
    (work / "nobundle").mkdir()
    cases.append(("validate: a folder without bundles", ["validate", str(work / "nobundle")]))
    return cases


def corrupt_inputs(work: Path, scale: float) -> list[Figure]:
    cases = _corrupt_cases(work)
    clear, unclear = 0, []
    for name, args in cases:
        proc = subprocess.run(WEBLICA + args + ["--json"], capture_output=True, text=True, timeout=180)
        lines = proc.stdout.strip().splitlines()
        try:
            error = json.loads(lines[-1]).get("error") if lines else None
        except ValueError:
            error = None
        good = (proc.returncode != 0 and len(lines) == 1 and isinstance(error, str) and "\n" not in error
                and not error.startswith("internal error") and "Traceback" not in proc.stderr)
        clear += good
        if not good:
            unclear.append(f"{name}: rc {proc.returncode}, {(error or proc.stdout or proc.stderr)[-90:]!r}")
    return [Figure("corrupt inputs, each a clear one-line error", f"{clear}/{len(cases)}", "all",
                   clear == len(cases), "; ".join(unclear))]


# ---- outbound connections ------------------------------------------------------------------------------

def listener(port: int = 0) -> Any:
    """A loopback port that counts the TCP connections made to it (where nothing should connect)."""
    from listener import Listener

    found = Listener(port)
    found.port = found.sock.getsockname()[1]
    return found


def _escapes(port: int) -> list[dict[str, Any]]:
    """What an agent might try to leave its sandbox by: direct loopback URLs to a listener."""
    return [act("goto_url", url=f"http://127.0.0.1:{port}/"), act("goto_url", url=f"http://localhost:{port}/x"),
            act("goto_url", url=f"http://127.0.0.1:{port}/img.png?{'a' * 10}")]


def outbound_connections(work: Path, scale: float) -> list[Figure]:
    from weblica.cache.record import record
    from weblica.cache.replay import check
    from weblica.synth.backend import ServedSynthBackend
    from weblica.synth.generate import write_unvalidated
    from weblica.synth.spec import sample_spec

    figures = []
    # synth: every request goes to the local site server; a listener on loopback must see none
    bundle = next((p for p in (work / "sites").glob("*") if (p / "site.json").exists()), None) or \
        write_unvalidated(sample_spec(4, "checkout", "groceries", "corporate-clean"), work / "sites")
    sentinel = listener()

    async def synth_episode() -> list[str]:
        backend = ServedSynthBackend([bundle])
        await backend.start()
        env = WebEnv(backends={"synth": backend})
        try:
            await env.reset(Task(id="out", start_url=f"http://{bundle.name}.synth.test/", instruction="x",
                                 source=TaskSource(kind="synth", site=bundle.name, bundle=str(bundle))), seed=0)
            feedback = []
            for action in _escapes(sentinel.port):
                obs, *_ = await env.step(action)
                feedback += obs.feedback
            return feedback
        finally:
            await env.close()
            await backend.stop()
    asyncio.run(synth_episode())
    time.sleep(0.3)
    synth_reached = sentinel.accepted

    async def control_episode() -> None:  # the same URLs without a gateway: the listener must see them
        env = WebEnv()
        try:
            await env.reset(Task(id="control", start_url="about:blank", instruction="x"), seed=0)
            for action in _escapes(sentinel.port):
                await env.step(action)
        finally:
            await env.close()
    asyncio.run(control_episode())
    time.sleep(0.3)
    control = sentinel.accepted - synth_reached
    sentinel.close()
    figures.append(Figure("outbound connections, synth mode (loopback listener)", synth_reached, "0",
                          synth_reached == 0 and control > 0,
                          f"{len(_escapes(0))} direct URLs tried; without a gateway they reached it {control} times"))

    # replay: record the test site, take it down, put listeners where it was and beside it
    with LocalServer(create_test_site()) as site:
        port = site.port
        start = site.url + "/"
        asyncio.run(record(start, [act("click", x=150, y=115)], work / "replay-rec", runs=1))
    time.sleep(0.3)
    where_it_was, beside = listener(port), listener()
    try:
        report = asyncio.run(check(work / "replay-rec", actions=[act("click", x=150, y=115)] + _escapes(beside.port)))
    finally:
        time.sleep(0.3)
        where_it_was.close()
        beside.close()
    reached = where_it_was.accepted + beside.accepted
    figures.append(Figure("outbound connections, replay mode (listeners)", reached, "0", reached == 0,
                          f"served {report['requests'] - report['tiers'].get('miss', 0)}/{report['requests']}"))
    figures.append(Figure("outbound connections, replay mode (replay --check count)", report["outbound_connections"],
                          "0", report["outbound_connections"] == 0))
    return figures


# ---- issue 39 (bench/hardening_v2.py): each section's figures as (name, value, goal, ok[, detail]) ---------

def _figures_of(section: Callable[[Path, float], list[tuple[Any, ...]]]) -> Callable[[Path, float], list[Figure]]:
    def run(work: Path, scale: float) -> list[Figure]:
        return [Figure(*figure) for figure in section(work, scale)]
    run.__name__ = section.__name__
    return run


SECTIONS: list[Callable[[Path, float], list[Figure]]] = [
    malformed_input, concurrent_writers, browser_kills, corrupt_inputs, outbound_connections,
    *(_figures_of(section) for section in V2_SECTIONS),
]


def print_table(figures: list[Figure]) -> None:
    width = max(len(f.name) for f in figures)
    print(f"{'figure':<{width}}  {'value':>9}  {'goal':>6}  ok")
    for f in figures:
        print(f"{f.name:<{width}}  {str(f.value):>9}  {f.goal:>6}  {'yes' if f.ok else 'NO'}"
              + (f"   ({f.detail})" if f.detail and not f.ok else ""))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="half the fuzz and writer sizes")
    parser.add_argument("--only", default=None, help="comma-separated section names")
    args = parser.parse_args()
    scale = 0.5 if args.quick else 1.0
    names = [section.__name__ for section in SECTIONS]
    unknown = sorted(set(args.only.split(",")) - set(names)) if args.only else []
    if unknown:
        parser.error(f"unknown section {', '.join(unknown)}; the sections are {', '.join(names)}")
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # thousands of request lines otherwise
    figures: list[Figure] = []
    with tempfile.TemporaryDirectory(prefix="weblica-hardening-") as tmp:
        for section in SECTIONS:
            if args.only and section.__name__ not in args.only.split(","):
                continue
            work = Path(tmp) / section.__name__
            work.mkdir()
            started = time.perf_counter()
            try:
                got = section(work, scale)
            except Exception as exc:  # a section that cannot run is a figure off its goal, not a crash
                got = [Figure(f"{section.__name__} (did not run)", "error", "runs", False,
                              f"{type(exc).__name__}: {exc}"[:300])]
            print(f"[{section.__name__}: {time.perf_counter() - started:.0f} s]", file=sys.stderr)
            figures += got
    print_table(figures)
    return 0 if all(f.ok for f in figures) else 1


if __name__ == "__main__":
    sys.exit(main())
