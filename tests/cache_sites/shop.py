"""A small shop that behaves like the live web, served for real on loopback.

Hosts (all mapped onto 127.0.0.1 with --resolve, as curl does):
  https  www.shop.test:P1    pages; session cookie, CSRF token, redirect, POST search (303 -> results)
  https  api.shop.test:P1    JSON API: POST /graphql (operationName, variables, nonce) and GET /api/suggest
  https  cdn.shop.test:P1    static JS/CSS behind cache-busters (?_=<ms>, ?v=<ms>)
  https  stats.tracker.test:P1   analytics: sendBeacon POST /collect?cid=<uuid>, GET /pixel.gif?r=<random>
  http   shop.test:P2        the bare domain over plain HTTP: 301 to https://www.shop.test:P1/start

Volatile by design: session ids, CSRF tokens, server nonces and request ids, hidden random HTML, a
random "visitors" number, random query params on redirects. Semantic by design: the search query
decides the results and the suggestions, so a wrong fuzzy match shows different text.
"""
from __future__ import annotations

import base64
import json
import secrets
import threading
import time
import uuid
from typing import Any

from flask import Flask, Response, jsonify, make_response, redirect, request
from werkzeug.serving import make_server

from weblica.cache.demo_site import QuietHandler as _Quiet

CATALOG = ["Arc Floor Lamp", "Desk Lamp", "Oak Desk", "Standing Desk", "Velvet Sofa", "Wool Rug", "Lamp Shade"]
PIXEL = base64.b64decode("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7")


def search(q: str) -> list[str]:
    words = q.lower().split()
    return [item for item in CATALOG if words and all(w in item.lower() for w in words)]


def suggest(q: str) -> list[str]:
    return [f"{q} ideas", f"best {q}", f"{q} on sale"] if q else []


class Hits:
    """What the servers saw, so tests can tell live traffic from replayed traffic."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.log: list[tuple[str, str, str]] = []

    def add(self, host: str, method: str, path: str) -> None:
        with self.lock:
            self.log.append((host, method, path))


def create_app(ports: dict[str, int], hits: Hits) -> Flask:
    """One app for every host; the Host header picks the site (as virtual hosting does)."""
    app = Flask(__name__)
    sessions: dict[str, str] = {}      # sid -> csrf token
    P1, P2 = ports["https"], ports["http"]
    www, api = f"https://www.shop.test:{P1}", f"https://api.shop.test:{P1}"
    cdn, stats = f"https://cdn.shop.test:{P1}", f"https://stats.tracker.test:{P1}"

    def host() -> str:
        return request.host.split(":")[0]

    @app.before_request
    def count() -> None:
        hits.add(host(), request.method, request.full_path)

    def page(title: str, body: str, sid: str) -> Response:
        csrf = sessions.setdefault(sid, secrets.token_hex(16))
        ms = int(time.time() * 1000)
        html = f"""<!doctype html><html><head><meta charset="utf-8"><title>{title}</title>
<meta name="csrf-token" content="{csrf}">
<link rel="stylesheet" href="{cdn}/static/style.css?v={ms}">
<!-- build {uuid.uuid4()} rendered {time.time()} -->
</head><body data-render="{secrets.token_hex(8)}">
<header><b>Lamp &amp; Desk</b> <span id="visitors">Visitors today: {secrets.randbelow(9000) + 1000}</span></header>
<form id="search" method="post" action="/search">
<input type="hidden" name="csrf" value="{csrf}">
<input id="q" name="q" aria-label="Search" autocomplete="off">
<button id="go">Search</button></form>
<main>{body}</main>
<img src="{stats}/pixel.gif?r={secrets.token_hex(6)}&amp;cb={ms}" width="1" height="1" alt="">
<script src="{cdn}/static/app.js?_={ms}"></script>
</body></html>"""
        resp = make_response(html)
        resp.headers["Content-Type"] = "text/html; charset=utf-8"
        resp.headers["Cache-Control"] = "no-store"
        resp.set_cookie("sid", sid, max_age=3600, httponly=True, secure=True, samesite="Lax")
        return resp

    def session_id() -> str:
        sid = request.cookies.get("sid")
        return sid if sid in sessions else secrets.token_hex(16)

    @app.get("/")
    def bare() -> Any:
        if host() != "shop.test":
            return home()
        return redirect(f"{www}/start", code=301)

    @app.get("/start")
    def start() -> Any:
        if host() != "www.shop.test":
            return "not found", 404
        # a tracking parameter on the redirect, different every visit
        return redirect(f"/?ref=home&vt={secrets.token_hex(8)}", code=302)

    def home() -> Any:
        if host() != "www.shop.test":
            return "not found", 404
        return page("Lamp & Desk", '<h1>Featured</h1><ul id="products"></ul>', session_id())

    @app.post("/search")
    def post_search() -> Any:
        sid = request.cookies.get("sid", "")
        if sessions.get(sid) != request.form.get("csrf"):
            return "bad csrf token", 403
        q = request.form.get("q", "")
        return redirect(f"/results?q={q}&sr={secrets.token_hex(10)}", code=303)

    @app.get("/results")
    def results() -> Any:
        q = request.args.get("q", "")
        items = "".join(f"<li>{i}</li>" for i in search(q)) or "<li>No results</li>"
        body = (f'<h1>Results for “{q}”</h1><ul id="results">{items}</ul>'
                f'<p>Suggestions:</p><ul id="suggest" data-q="{q}"></ul>')
        return page(f"{q} - Lamp & Desk", body, session_id())

    @app.route("/graphql", methods=["POST", "OPTIONS"])
    def graphql() -> Any:
        if request.method == "OPTIONS":
            return cors(Response(status=204))
        data = request.get_json(force=True)
        page_no = int(data.get("variables", {}).get("page", 1))
        products = CATALOG[(page_no - 1) * 4: page_no * 4]
        return cors(jsonify(data={"products": products}, nonce=secrets.token_hex(8), requestId=str(uuid.uuid4())))

    @app.get("/api/suggest")
    def api_suggest() -> Any:
        q = request.args.get("q", "")
        return cors(jsonify(q=q, suggestions=suggest(q), served=time.time()))

    def cors(resp: Response) -> Response:
        resp.headers["Access-Control-Allow-Origin"] = www
        resp.headers["Access-Control-Allow-Headers"] = "Content-Type"
        resp.headers["Access-Control-Allow-Methods"] = "GET, POST"
        return resp

    @app.get("/static/app.js")
    def app_js() -> Any:
        js = """
(function () {
  const csrf = document.querySelector('meta[name=csrf-token]').content;
  const nonce = Math.random().toString(16).slice(2, 14);
  const list = document.getElementById('products');
  if (list) {
    fetch('API/graphql?_=' + Date.now(), {method: 'POST', headers: {'Content-Type': 'application/json'},
      body: JSON.stringify({operationName: 'Products', query: 'query Products($page: Int) { products }',
                            variables: {page: 1, cursor: null}, nonce: nonce, csrf: csrf})})
      .then(r => r.json()).then(d => {
        list.innerHTML = d.data.products.map(p => '<li>' + p + '</li>').join('');
      });
  }
  const sug = document.getElementById('suggest');
  if (sug) {
    fetch('API/api/suggest?q=' + encodeURIComponent(sug.dataset.q) + '&nonce=' + nonce)
      .then(r => r.json()).then(d => { sug.innerHTML = d.suggestions.map(s => '<li>' + s + '</li>').join(''); });
  }
  navigator.sendBeacon('STATS/collect?cid=' + crypto.randomUUID() + '&t=' + Date.now(),
    JSON.stringify({event: 'pageview', page: location.pathname, rnd: Math.random()}));
})();
""".replace("API", api).replace("STATS", stats)
        return Response(js, content_type="application/javascript")

    @app.get("/static/style.css")
    def style() -> Any:
        css = ("body{margin:0;font-family:sans-serif;background:#fafafa} header{padding:12px 24px;background:#234;"
               "color:#fff} #search{position:absolute;left:24px;top:60px} #q{width:300px;height:28px} "
               "main{position:absolute;left:24px;top:110px} li{line-height:1.6}")
        return Response(css, content_type="text/css")

    @app.route("/collect", methods=["POST"])
    def collect() -> Any:
        return Response(status=204)

    @app.get("/pixel.gif")
    def pixel() -> Any:
        return Response(PIXEL, content_type="image/gif", headers={"Cache-Control": "no-store"})

    return app


class ShopSite:
    """The shop on two loopback ports (HTTPS and HTTP) in background threads."""

    HOSTS = {"https": ("www.shop.test", "api.shop.test", "cdn.shop.test", "stats.tracker.test"),
             "http": ("shop.test",)}

    def __init__(self) -> None:
        self.hits = Hits()
        self._servers: list[Any] = []
        self._threads: list[threading.Thread] = []
        self.ports: dict[str, int] = {}

    def start(self) -> "ShopSite":
        from werkzeug.serving import generate_adhoc_ssl_context

        # bind both first: the app needs both ports to write its absolute URLs
        holder = Flask("placeholder")
        https = make_server("127.0.0.1", 0, holder, threaded=True, request_handler=_Quiet,
                            ssl_context=generate_adhoc_ssl_context())
        http = make_server("127.0.0.1", 0, holder, threaded=True, request_handler=_Quiet)
        self.ports = {"https": https.server_port, "http": http.server_port}
        app = create_app(self.ports, self.hits)
        for server in (https, http):
            server.app = app
            thread = threading.Thread(target=server.serve_forever, daemon=True)
            thread.start()
            self._servers.append(server)
            self._threads.append(thread)
        return self

    def stop(self) -> None:
        for server in self._servers:
            server.shutdown()
            server.server_close()
        self._servers.clear()

    @property
    def resolve(self) -> list[str]:
        return [f"{h}:{self.ports[scheme]}:127.0.0.1" for scheme, hosts in self.HOSTS.items() for h in hosts]

    @property
    def start_url(self) -> str:
        return f"http://shop.test:{self.ports['http']}/"

    def __enter__(self) -> "ShopSite":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


# the browse the tests record: two searches, so one search endpoint sees two different queries
SEARCH_ACTIONS = [
    {"name": "click", "arguments": {"x": 150, "y": 74}},
    {"name": "write", "arguments": {"text": "lamp"}},
    {"name": "press_keys", "arguments": {"keys": ["Enter"]}},
    {"name": "click", "arguments": {"x": 150, "y": 74}},
    {"name": "write", "arguments": {"text": "desk"}},
    {"name": "press_keys", "arguments": {"keys": ["Enter"]}},
]


def actions_json() -> str:
    return json.dumps(SEARCH_ACTIONS)
