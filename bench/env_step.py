"""Env step latency and throughput, against a raw `page.screenshot()` measured in the same run.

Prints per-step latency p50/p95 (action + settle + screenshot + feedback) on a local page, and aggregate
steps/s with 1, 4 and 8 parallel envs. Goals: p50 <= 1.5x the raw screenshot; >= 25 steps/s with 8
envs on 2 cores. Usage: python bench/env_step.py [--steps N]
"""
from __future__ import annotations

import argparse
import asyncio
import statistics
import threading
import time

from flask import Flask
from werkzeug.serving import WSGIRequestHandler, make_server

from weblica.env.browser_env import WebEnv
from weblica.env.pool import EnvPool
from weblica.env.task import Task

PAGE = """<!doctype html><html><head><title>Bench</title><style>
body{font-family:sans-serif;margin:0} .row{padding:8px;border-bottom:1px solid #ddd}
button{position:absolute;left:100px;top:100px;width:140px;height:40px}</style></head><body>
<button onclick="document.getElementById('n').textContent = +document.getElementById('n').textContent + 1">Add</button>
<p id="n" style="position:absolute;left:300px;top:100px">0</p>
<div style="position:absolute;top:200px;width:100%">""" + "".join(
    f"<div class='row'>Row {i}: lorem ipsum dolor sit amet</div>" for i in range(40)) + "</div></body></html>"


class Quiet(WSGIRequestHandler):
    def log_request(self, *a, **k):
        pass


def serve() -> tuple[str, object]:
    app = Flask("bench")
    app.add_url_rule("/", view_func=lambda: PAGE)
    server = make_server("127.0.0.1", 0, app, threaded=True, request_handler=Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_port}/", server


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


CLICK = {"name": "click", "arguments": {"x": 170, "y": 120}}


async def raw_screenshot_latency(env: WebEnv, n: int) -> list[float]:
    page = env._tabs.page
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        await page.screenshot(type="png")
        out.append(time.perf_counter() - t0)
    return out


async def step_latency(url: str, n: int) -> tuple[list[float], list[float]]:
    env = WebEnv()
    task = Task(id="bench", start_url=url, instruction="x", max_steps=10 ** 6)
    await env.reset(task, seed=0)
    await env.step(CLICK)  # warm up
    raw, steps = [], []
    for _ in range(n):  # interleaved, so both see the same machine load
        raw.extend(await raw_screenshot_latency(env, 1))
        t0 = time.perf_counter()
        await env.step(CLICK)
        steps.append(time.perf_counter() - t0)
    await env.close()
    return raw, steps


async def throughput(url: str, parallel: int, steps_each: int, capture_only: bool = False,
                     episode_steps: int = 0) -> float:
    """Aggregate steps/s of `parallel` envs; with `capture_only` each "step" is only the env's viewport
    capture (the ceiling a step can reach on this machine, since every step ends with one); with
    `episode_steps` each env starts a new episode (a fresh context) every that many steps."""
    async with EnvPool(parallel) as pool:
        async def job(env: WebEnv, i: int) -> int:
            await env.reset(Task(id=f"b{i}", start_url=url, instruction="x", max_steps=10 ** 6), seed=i)
            await env.step(CLICK)
            return 0

        await pool.map(range(parallel), job)  # warm: contexts open, pages loaded
        start = time.perf_counter()

        async def run(env: WebEnv, i: int) -> None:
            for n in range(steps_each):
                if episode_steps and n % episode_steps == 0:
                    await env.reset(Task(id=f"b{i}-{n}", start_url=url, instruction="x", max_steps=10 ** 6), seed=n)
                if capture_only:
                    await env._tabs.screenshot()
                else:
                    await env.step(CLICK)

        await asyncio.gather(*(run(env, i) for i, env in enumerate(pool.envs)))
        elapsed = time.perf_counter() - start
    return parallel * steps_each / elapsed


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=40)
    args = parser.parse_args()
    url, server = serve()
    raw, steps = await step_latency(url, args.steps)
    raw_p50 = statistics.median(raw)
    print(f"raw page.screenshot(): p50 {raw_p50 * 1000:.1f} ms  p95 {pct(raw, 0.95) * 1000:.1f} ms")
    print(f"env.step(click):       p50 {statistics.median(steps) * 1000:.1f} ms  p95 {pct(steps, 0.95) * 1000:.1f} ms"
          f"  ratio p50 {statistics.median(steps) / raw_p50:.2f}x raw (goal <= 1.5x)")
    raw_rate = 1 / raw_p50
    for parallel in (1, 4, 8):
        rate = await throughput(url, parallel, max(5, args.steps // 2))
        print(f"{parallel} env(s): {rate:.1f} steps/s  ({rate / raw_rate:.2f}x one raw screenshot loop)"
              + ("  (goal >= 25 steps/s)" if parallel == 8 else ""))
    # training resets often: the same 8 envs with a new episode (context, page load) every 5 steps
    episodes = await throughput(url, 8, max(10, args.steps // 2), episode_steps=5)
    print(f"8 env(s), a new episode every 5 steps: {episodes:.1f} steps/s, resets included")
    # the same 8 pages doing nothing but viewport captures, measured last under the same conditions:
    # how much of the machine's capture throughput the full steps keep
    ceiling = await throughput(url, 8, max(5, args.steps // 2), capture_only=True)
    print(f"8 pages, captures only: {ceiling:.1f} captures/s  (8-env steps reach {rate / ceiling:.2f}x of it)")
    server.shutdown()


if __name__ == "__main__":
    asyncio.run(main())
