"""A live page fed by a WebSocket ticker and a server-sent event feed, served for real on loopback (aiohttp).

Host `www.feeds.test` over plain HTTP on one port (mapped with --resolve). The page (`/`, or `/#N`
for ticker room N, the same page request) opens:
- `ws://…/ticker?room=R`: the server greets with `hello <random id>`; on `subscribe ACME` it sends three
  ticks `ACME <random price>` at once; on `quote` (the page's button at 100,300) it answers
  `quote <random>`. Every value is random, so a replay that shows the recorded values shows frames
  that came from the recording, in their recorded order. Room `mute` never sends a frame; room `stream`
  sends one every 20 ms for 30 s, whatever the page says;
- `/feed` (EventSource): three events `news <random>` in separate writes, then the stream stays open, as a
  live feed does.
Frames come in bursts: the env's settle waits for requests, for each frame a socket owes (one after it
opens, one after each frame the page sent) and `socket_burst_s` for the rest of that frame's burst, not
for every frame, so frames spread out in real time would land on a screenshot or not depending on the
machine's speed, live and in replay.
Each channel has its own list on the page, so the screen shows every frame that arrived; the title
is the socket's list joined by `|`.
"""
from __future__ import annotations

import asyncio
import secrets
import threading
from typing import Any

from aiohttp import WSMsgType, web

PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>feeds</title>
<style>body{margin:0;font:18px sans-serif} ul{position:absolute;top:30px;margin:0;width:400px}
#ws{left:20px} #sse{left:500px} #ask{position:absolute;left:40px;top:280px;width:160px;height:40px}</style>
</head><body><ul id="ws"></ul><ul id="sse"></ul><button id="ask">quote</button>
<script>
const add = (id, text) => { const li = document.createElement('li'); li.textContent = text;
  document.getElementById(id).appendChild(li);
  document.title = [...document.querySelectorAll('#ws li')].map((x) => x.textContent).join('|'); };
const room = location.hash.slice(1) || '1';
const ws = new WebSocket('ws://' + location.host + '/ticker?room=' + room);
ws.onopen = () => ws.send('subscribe ACME');
ws.onmessage = (e) => add('ws', e.data);
ws.onerror = () => add('ws', 'socket error');
const feed = new EventSource('/feed');
feed.onmessage = (e) => add('sse', e.data);
document.getElementById('ask').onclick = () => ws.send('quote');
</script></body></html>"""


async def _page(request: web.Request) -> web.Response:
    return web.Response(text=PAGE, content_type="text/html", headers={"Cache-Control": "no-store"})


async def _ticker(request: web.Request) -> web.WebSocketResponse:
    ws = web.WebSocketResponse()
    await ws.prepare(request)
    if request.query.get("room") == "mute":   # a socket that never says anything (tests settle's bound)
        async for _msg in ws:
            pass
        return ws
    if request.query.get("room") == "stream":   # a price feed: a frame every 20 ms, asked for or not
        for _ in range(1500):
            if ws.closed:
                break
            await ws.send_str(f"PX {secrets.randbelow(9000) + 1000}")
            await asyncio.sleep(0.02)
        return ws
    await asyncio.sleep(request.app[GREETING_DELAY])
    await ws.send_str(f"hello {secrets.token_hex(3)}")
    async for msg in ws:
        if msg.type != WSMsgType.TEXT:
            break
        if msg.data.startswith("subscribe "):
            await asyncio.sleep(request.app[ANSWER_DELAY])
            for _ in range(3):
                await ws.send_str(f"{msg.data.split()[1]} {secrets.randbelow(9000) + 1000}")
        elif msg.data == "quote":
            await ws.send_str(f"quote {secrets.randbelow(900) + 100}")
    return ws


async def _feed(request: web.Request) -> web.StreamResponse:
    resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-store"})
    await resp.prepare(request)
    for _ in range(3):
        await resp.write(f"data: news {secrets.randbelow(9000) + 1000}\n\n".encode())
    for _ in range(200):   # stays open, as a live feed does, until the browser goes (at most 20 s)
        if request.transport is None or request.transport.is_closing():
            break
        await asyncio.sleep(0.1)
    return resp


GREETING_DELAY = web.AppKey("greeting_delay_s", float)
ANSWER_DELAY = web.AppKey("answer_delay_s", float)


class FeedsSite:
    """The feeds page on one loopback HTTP port, in a background thread with its own event loop.
    `greeting_delay_s`: how long the ticker waits before its first frame (a slow server); `answer_delay_s`:
    before it answers a subscription (its three ticks then go back to back)."""

    HOST = "www.feeds.test"

    def __init__(self, greeting_delay_s: float = 0.0, answer_delay_s: float = 0.0) -> None:
        self.greeting_delay_s = greeting_delay_s
        self.answer_delay_s = answer_delay_s
        self.port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> "FeedsSite":
        ready = threading.Event()
        loop = self._loop = asyncio.new_event_loop()

        def run() -> None:
            asyncio.set_event_loop(loop)
            app = web.Application()
            app[GREETING_DELAY] = self.greeting_delay_s
            app[ANSWER_DELAY] = self.answer_delay_s
            app.router.add_get("/", _page)
            app.router.add_get("/ticker", _ticker)
            app.router.add_get("/feed", _feed)
            self._runner = web.AppRunner(app, shutdown_timeout=0.5, access_log=None)
            loop.run_until_complete(self._runner.setup())
            site = web.TCPSite(self._runner, "127.0.0.1", 0)
            loop.run_until_complete(site.start())
            self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
            ready.set()
            loop.run_forever()

        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()
        ready.wait(10)
        return self

    def stop(self) -> None:
        if self._loop is None or self._runner is None:
            return
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(5)
        self._loop = self._runner = None

    @property
    def resolve(self) -> list[str]:
        return [f"{self.HOST}:{self.port}:127.0.0.1"]

    def url(self, path: str = "/") -> str:
        return f"http://{self.HOST}:{self.port}{path}"

    def __enter__(self) -> "FeedsSite":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


FEEDS_ACTIONS = [{"name": "click", "arguments": {"x": 120, "y": 300}}]
