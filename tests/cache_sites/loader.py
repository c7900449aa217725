"""A page whose script loader batches and races by arrival time, as wiki software's module loader does.

One host, `www.loader.test`, HTTPS on one loopback port (mapped with --resolve). The server adds a
latency to every API answer (a base per API plus 0-40 ms at random): live, `/api/b` answers before
`/api/a` and `/api/y` before `/api/x` although the page asks in the other order.

The page's loader (inline script):
- `need(name)` queues a module and flushes the queue in a `setTimeout(…, 0)`: every module asked for
  before the timer runs goes into one `/load?modules=<names in the order asked>` request, so the
  request depends on which of `/api/a` and `/api/b` (each naming a module) answered before the timer
  and in which order (`a,b`, `b,a`, or `a` and `b` apart);
- `Promise.race` between `/api/x` and `/api/y`: the winner is shown and fetched as `/winner?first=…`;
- a button (at 100,300) asks for two more modules the same way, through `/api/c` and `/api/d`.
Every module the loader gets is listed on the page, so a different batch is a different screen.
"""
from __future__ import annotations

import random
import threading
import time
from typing import Any

from flask import Flask, Response, jsonify, request

from weblica.cache.demo_site import LocalHttpsSite

PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>loader</title>
<style>body{margin:0;font:18px sans-serif} #go{position:absolute;left:40px;top:280px;width:160px;height:40px}
ul{position:absolute;left:40px;top:40px;margin:0} #winner{position:absolute;left:600px;top:40px}</style>
</head><body><ul id="out"></ul><p id="winner">race: …</p><button id="go">more</button>
<script>
const queue = []; let timer = null;
function need(name) { queue.push(name); if (!timer) timer = setTimeout(flush, 0); }
function flush() {
  timer = null;
  const s = document.createElement('script');
  s.src = '/load?modules=' + queue.splice(0).join(',');
  document.head.appendChild(s);
}
window.define = (name, text) => {
  const li = document.createElement('li'); li.textContent = name + ': ' + text;
  document.getElementById('out').appendChild(li);
};
const ask = (path) => fetch(path).then(r => r.json()).then(d => need(d.module));
ask('/api/a'); ask('/api/b');
Promise.race([fetch('/api/x').then(r => r.json()).then(() => 'x'), fetch('/api/y').then(r => r.json()).then(() => 'y')]).then(first => {
  document.getElementById('winner').textContent = 'race: ' + first;
  fetch('/winner?first=' + first);
});
document.getElementById('go').onclick = () => { ask('/api/c'); ask('/api/d'); };
</script></body></html>"""
MODULES = {"a": "alpha", "b": "bravo", "c": "charlie", "d": "delta"}
# live latency: a base per API plus 0-40 ms at random, so the answers land in another order than asked
# (b before a, y before x); a replay that answers in request order would batch `a,b` and let x win
LATENCY_S = {"a": 0.09, "x": 0.09, "d": 0.09}


def create_app(seed: int | None = None) -> Flask:
    app = Flask(__name__)
    rng = random.Random(seed)
    lock = threading.Lock()

    def jitter(name: str) -> None:
        with lock:
            delay = LATENCY_S.get(name, 0.0) + rng.uniform(0, 0.04)
        time.sleep(delay)

    @app.get("/")
    def page() -> Any:
        return Response(PAGE, content_type="text/html; charset=utf-8", headers={"Cache-Control": "no-store"})

    @app.get("/api/<name>")
    def api(name: str) -> Any:
        jitter(name)
        resp = jsonify(module=name)
        resp.headers["Cache-Control"] = "no-store"
        return resp

    @app.get("/load")
    def load() -> Any:
        names = [n for n in request.args.get("modules", "").split(",") if n in MODULES]
        body = "".join(f"define({n!r}, {MODULES[n]!r} + ' (batch {'+'.join(names)})');\n" for n in names)
        return Response(body, content_type="text/javascript", headers={"Cache-Control": "no-store"})

    @app.get("/winner")
    def winner() -> Any:
        return jsonify(ok=True)

    return app


class LoaderSite(LocalHttpsSite):
    """The loader page on one loopback HTTPS port, in a background thread."""

    HOSTS = ("www.loader.test",)

    def __init__(self, seed: int | None = None) -> None:
        super().__init__()
        self.seed = seed

    def app(self, port: int) -> Flask:
        return create_app(self.seed)


LOADER_ACTIONS = [{"name": "click", "arguments": {"x": 120, "y": 300}}]


async def replay_rounds(recording: Any, rounds: int, seed: int = 5) -> list[tuple[list[str], list[bytes]]]:
    """Replay the recorded browse `rounds` times in one env; each round's requests (sorted, as
    `METHOD URL`) and screenshots."""
    from weblica.cache.backend import CacheBackend
    from weblica.cache.play import make_env, play
    from weblica.cache.store import load_actions
    from weblica.env.task import TaskSource

    start_url, actions = load_actions(recording)
    backend = CacheBackend([recording], [], log_misses=False)
    env = make_env({"cache": backend})
    out = []
    try:
        for k in range(rounds):
            episode = f"round-{k}"
            result = await play(env, start_url, actions, seed, source=TaskSource(kind="cache", recording=str(recording)),
                                episode_id=episode)
            asked = sorted(f"{m} {u}" for e, m, u, _t in backend.stats.answered if e == episode)
            out.append((asked, result.screenshots))
    finally:
        await env.close()
        await backend.stop()
    return out
