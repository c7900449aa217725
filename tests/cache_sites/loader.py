"""A page whose script loader batches and races by arrival time, as wiki software's module loader does.

One host, `www.loader.test`, HTTPS on one loopback port (mapped with --resolve). The server adds a
latency to every API answer (0-40 ms at random) and holds `/api/a`, `/api/x` and `/api/d` until their
partner (`b`, `y`, `c`) has been answered, then 90 ms more: live, `/api/b` answers before `/api/a` and
`/api/y` before `/api/x` although the page asks in the other order. The hold is counted from the
partner's answer, not from the request's arrival: on a loaded machine the recording proxy's TLS
handshakes delay a request by more than the latency itself (y's request once reached the server so
late that x won the race live, and the recording had nothing to test).

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
from collections import Counter
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
# live latency: 0-40 ms at random, and each of a, x, d answered only after its partner plus 90 ms, so the
# answers land in another order than asked (b before a, y before x); a replay that answers in request
# order would batch `a,b` and let x win
ANSWERED_AFTER = {"a": "b", "x": "y", "d": "c"}
HOLD_S = 0.09
PARTNER_WAIT_S = 5.0   # a partner never asked for (a page that changed) holds an answer only so long


def create_app(seed: int | None = None) -> Flask:
    app = Flask(__name__)
    rng = random.Random(seed)
    changed = threading.Condition()
    asked: Counter[str] = Counter()
    answered: Counter[str] = Counter()

    def jitter(name: str) -> None:
        partner = ANSWERED_AFTER.get(name)
        with changed:
            asked[name] += 1
            nth = asked[name]   # the k-th ask waits for the partner's k-th answer (one per page load)
            if partner:
                changed.wait_for(lambda: answered[partner] >= nth, timeout=PARTNER_WAIT_S)
            delay = (HOLD_S if partner else 0.0) + rng.uniform(0, 0.04)
        time.sleep(delay)

    def landed(name: str) -> None:
        with changed:
            answered[name] += 1
            changed.notify_all()

    @app.get("/")
    def page() -> Any:
        return Response(PAGE, content_type="text/html; charset=utf-8", headers={"Cache-Control": "no-store"})

    @app.get("/api/<name>")
    def api(name: str) -> Any:
        jitter(name)
        resp = jsonify(module=name)
        resp.headers["Cache-Control"] = "no-store"
        landed(name)   # counted as it is handed to the server, HOLD_S before any partner's answer
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
