"""Local Flask pages for the foundation tests: forms, links, tabs, scrolling, timers, navigation."""
from __future__ import annotations

import threading
from typing import Any

from flask import Flask, jsonify, request
from werkzeug.serving import WSGIRequestHandler, make_server

PAGES: dict[str, str] = {
    "/": """<!doctype html><html><head><title>Home</title><style>
body{margin:0;font-family:sans-serif} #go{position:absolute;left:100px;top:100px;width:120px;height:40px}
#name{position:absolute;left:100px;top:200px;width:200px;height:30px}
#upper{position:absolute;left:100px;top:260px;width:200px;height:30px}
#blank{position:absolute;left:400px;top:100px} #out{position:absolute;left:100px;top:320px}
#menu{position:absolute;left:400px;top:200px;width:100px;height:30px;background:#ccd}
#tip{display:none;position:absolute;left:400px;top:240px} #menu:hover + #tip{display:block}
#drag{position:absolute;left:700px;top:100px;width:60px;height:60px;background:#8c8}
#drop{position:absolute;left:900px;top:100px;width:120px;height:120px;border:2px dashed #888}
#sel{position:absolute;left:700px;top:300px}
</style></head><body>
<button id="go" onclick="location.href='/second'">Search</button>
<input id="name" aria-label="Your name" placeholder="name">
<input id="upper" aria-label="Code" maxlength="4" oninput="this.value=this.value.toUpperCase()">
<a id="blank" href="/second" target="_blank">Open in new tab</a>
<div id="menu">Menu</div><div id="tip">Tooltip shown</div>
<div id="drag" draggable="true">drag</div><div id="drop">drop here</div>
<select id="sel" aria-label="Colour"><option>Red</option><option>Green</option></select>
<div id="out"></div>
<script>
  const drag = document.getElementById('drag'), drop = document.getElementById('drop');
  drag.addEventListener('dragstart', e => e.dataTransfer.setData('text', 'x'));
  drop.addEventListener('dragover', e => e.preventDefault());
  drop.addEventListener('drop', e => { e.preventDefault(); drop.textContent = 'dropped'; });
  document.addEventListener('keydown', e => { if (e.key === 'Enter') document.getElementById('out').textContent = 'enter:' + document.getElementById('name').value; });
</script></body></html>""",
    "/second": """<!doctype html><html><head><title>Second</title></head><body style="font-family:sans-serif">
<h1>Second page</h1><p id="t">results</p></body></html>""",
    "/long": """<!doctype html><html><head><title>Long</title></head><body style="margin:0;font-family:sans-serif">
<div style="height:3000px;background:linear-gradient(#fff,#88f)">top</div>
<div id="box" style="position:fixed;left:800px;top:100px;width:200px;height:200px;overflow:auto;border:1px solid #000">
<div style="height:1000px">inner</div></div><script>
document.addEventListener('click', () => { window.__seen = [document.getElementById('box').scrollTop, scrollY]; });
</script></body></html>""",
    "/clock": """<!doctype html><html><head><title>Clock</title><style>
@keyframes spin{from{transform:rotate(0deg)}to{transform:rotate(360deg)}}
#spin{width:80px;height:80px;background:#c33;animation:spin 2s linear infinite}
#fade{width:80px;height:80px;background:#33c;transition:opacity 3s} body{font-family:sans-serif}
</style></head><body><div id="spin"></div><div id="fade"></div><input id="f" autofocus value="caret here">
<pre id="out"></pre><script>
const out = document.getElementById('out');
out.textContent = [new Date().toString(), Date.now(), Math.random(), Math.random(), performance.now(),
  crypto.randomUUID(), Array.from(crypto.getRandomValues(new Uint8Array(6))).join(',')].join('\\n');
setTimeout(() => { out.textContent += '\\ntimer at ' + Date.now(); document.getElementById('fade').style.opacity = 0.2; }, 300);
</script></body></html>""",
    "/framed": """<!doctype html><html><head><title>Framed</title></head><body>
<iframe id="inner" src="/second" style="width:400px;height:200px"></iframe></body></html>""",
    "/slow": """<!doctype html><html><head><title>Slow</title></head><body><p id="p">loading</p><script>
fetch('/api/data').then(r => r.json()).then(d => setTimeout(() => { document.getElementById('p').textContent = d.value; }, 100));
</script></body></html>""",
    # a tag input as mail and issue trackers have: Backspace in the empty field removes the last tag
    "/tags": """<!doctype html><html><head><title>Tags</title></head><body style="font-family:sans-serif">
<div id="chips"><span class="chip">alpha</span> <span class="chip">beta</span></div>
<input id="tag" placeholder="Add a tag" style="position:absolute;left:50px;top:100px;width:300px">
<script>document.getElementById('tag').addEventListener('keydown', (e) => {
  if (e.key === 'Backspace' && e.target.value === '') { const c = document.querySelectorAll('.chip'); if (c.length) c[c.length - 1].remove(); }
});</script></body></html>""",
    "/form": """<!doctype html><html><head><title>Form</title></head><body style="font-family:sans-serif">
<form method="post" action="/submit"><input name="q" id="q" style="position:absolute;left:50px;top:50px;width:300px">
<button style="position:absolute;left:400px;top:50px">Send</button></form></body></html>""",
}


def create_app(config: dict[str, Any] | None = None) -> Flask:
    app = Flask(__name__)
    app.config.update(config or {})
    submitted: list[str] = []
    hanging = {"now": 0, "max": 0}
    hanging_tags: list[str] = []  # the `tag` of each /hang request in progress (a test waits on its own)
    lock = threading.Lock()

    def page(path: str) -> Any:
        return PAGES[path], 200, {"Content-Type": "text/html; charset=utf-8"}

    for path in PAGES:
        app.add_url_rule(path, endpoint=path, view_func=lambda path=path: page(path))

    @app.get("/api/data")
    def data() -> Any:
        return jsonify(value="fetched value")

    @app.post("/submit")
    def submit() -> Any:
        submitted.append(request.form.get("q", ""))
        return f"<html><head><title>Done</title></head><body><p id='r'>got {request.form.get('q', '')}</p></body></html>"

    @app.get("/hang")
    def hang() -> Any:
        import time

        tag = request.args.get("tag", "")
        with lock:
            hanging["now"] += 1
            hanging["max"] = max(hanging["max"], hanging["now"])
            hanging_tags.append(tag)
        time.sleep(float(request.args.get("s", "5")))
        with lock:
            hanging["now"] -= 1
            hanging_tags.remove(tag)
        return "<html><body>late</body></html>"

    @app.get("/__state")
    def state() -> Any:
        with lock:
            return jsonify(submitted=submitted, max_concurrent_hang=hanging["max"], hanging=list(hanging_tags))

    return app


class QuietHandler(WSGIRequestHandler):
    def log_request(self, *args: Any, **kwargs: Any) -> None:  # keep test output readable
        pass


class LocalServer:
    """A Flask app served for real on 127.0.0.1 in a background thread."""

    def __init__(self, app: Flask, port: int = 0) -> None:
        self._server = make_server("127.0.0.1", port, app, threaded=True, request_handler=QuietHandler)
        self.port = self._server.server_port
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> "LocalServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
