"""A news site that behaves like the live web where matchers go wrong, served for real on loopback.

`weblica demo` records it as if it were live (to show what inference finds), and the cache tests and
`weblica cache build` tests use it as their live site; it lives in the package so the demo needs
nothing from `tests/`.

Hosts (HTTPS on one port, mapped onto 127.0.0.1 with --resolve):
  www.news.test    front page, slug article URLs (`/nyheter/how-to-cook-pasta-in-2019/`) with a byline,
                   a GET search whose results link the matching articles
  ads.adnet.test   `/ad?slot=side&cb=<10 random digits>`: a creative picked at random on every request
  static.news.test the stylesheet
  stats.tracker.test  an analytics beacon on every page: sendBeacon POST /collect?cid=<uuid> (204)
  www.news.test/daily/ fetches `/api/story?id=<random 3 digits>` and links the story it names: a replay at
                   another seed asks an id never recorded (a miss: `id` is required)
  www.news.test/down/  always 503
  www.news.test/player/   fetches /media/clip.bin (4096 bytes) whole, or with `Range: bytes=<hash>` when
                   the URL has a hash (`/player/#100-199`), and puts status, length, first byte and
                   Content-Range in the title

The traps: an article slug looks like a token, so a matcher that templates it serves the pasta article
for any other article; the search is recorded with one query, so a matcher without a floor answers
any query with its results; the ad's cache-buster is fresh on every request and the answer changes
with it, so an inference that calls it "required" makes every ad request a miss.
"""
from __future__ import annotations

import secrets
import threading
from typing import Any

from flask import Flask, Response, jsonify, request
from werkzeug.serving import WSGIRequestHandler, make_server

ARTICLES = {
    "how-to-cook-pasta-in-2019": ("How to cook pasta", "Boil water, add salt, cook for nine minutes."),
    "election-results-2024-live-updates": ("Election results", "Counting continues in every district."),
    "best-desk-lamps-of-the-year": ("The best desk lamps", "Warm light, sturdy arms, small feet."),
}
AUTHORS = {"how-to-cook-pasta-in-2019": "Anna Berg", "election-results-2024-live-updates": "Olle Lind",
           "best-desk-lamps-of-the-year": "Sara Ek"}
RECORDED_ARTICLE = "how-to-cook-pasta-in-2019"     # the browse opens only this one
CREATIVES = ["Sofa sale: 30% off", "Lamp week at Lumen", "Rugs from 49 kr"]
CATALOG = ["Arc floor lamp", "Desk lamp", "Velvet sofa", "Wool rug"]
CLIP = bytes(range(256)) * 16
PLAYER = """<!doctype html><html><head><meta charset="utf-8"><title>player</title></head><body><p>player</p>
<script>
const range = location.hash.slice(1);
fetch('/media/clip.bin', range ? {headers: {Range: 'bytes=' + range}} : {}).then(async r => {
  const bytes = new Uint8Array(await r.arrayBuffer());
  document.title = [r.status, bytes.length, bytes[0], r.headers.get('content-range') || '-'].join(' ');
});
</script></body></html>"""


def create_app(port: int) -> Flask:
    app = Flask(__name__)
    www, ads, static, stats = (f"https://{h}:{port}" for h in ("www.news.test", "ads.adnet.test", "static.news.test",
                                                                "stats.tracker.test"))

    def host() -> str:
        return request.host.split(":")[0]

    def page(title: str, body: str) -> Response:
        html = f"""<!doctype html><html><head><meta charset="utf-8"><title>{title}</title>
<link rel="stylesheet" href="{static}/news.css"></head><body>
<header><b>Nyheter</b></header>
<form id="search" method="get" action="/search"><input id="q" name="q" aria-label="Search" autocomplete="off">
<button>Search</button></form>
<main>{body}</main><aside id="ad">…</aside>
<script>
fetch('{ads}/ad?slot=side&cb=' + Math.floor(Math.random() * 9e9 + 1e9))
  .then(r => r.json()).then(d => {{ document.getElementById('ad').textContent = d.text; }});
navigator.sendBeacon('{stats}/collect?cid=' + crypto.randomUUID(),
  JSON.stringify({{event: 'pageview', page: location.pathname, rnd: Math.random()}}));
</script></body></html>"""
        return Response(html, content_type="text/html; charset=utf-8", headers={"Cache-Control": "no-store"})

    @app.get("/")
    def front() -> Any:
        if host() != "www.news.test":
            return "not found", 404
        links = "".join(f'<li><a href="/nyheter/{slug}/">{title}</a></li>' for slug, (title, _) in ARTICLES.items())
        return page("Nyheter", f"<h1>Today</h1><ul id=articles>{links}</ul>")

    @app.get("/nyheter/<slug>/")
    def article(slug: str) -> Any:
        if slug not in ARTICLES:
            return "not found", 404
        title, text = ARTICLES[slug]
        return page(title, f"<h1>{title}</h1><p class=byline>By {AUTHORS[slug]}</p><p>{text}</p>")

    @app.get("/search")
    def search() -> Any:
        q = request.args.get("q", "")
        words = q.lower().rstrip("s")
        articles = [f'<li><a href="/nyheter/{slug}/">{title}</a></li>' for slug, (title, _) in ARTICLES.items()
                    if words and words in title.lower()]
        found = [f"<li>{i}</li>" for i in CATALOG if q and q.lower() in i.lower()] or ["<li>No results</li>"]
        return page(f"{q} - Nyheter", f"<h1>Results for {q}</h1><ul id=results>{''.join(articles + found)}</ul>")

    @app.get("/daily/")
    def daily() -> Any:   # today's story is picked by a random id in the page: another seed asks another id
        script = ("<script>fetch('/api/story?id=' + Math.floor(Math.random() * 900 + 100)).then(r => r.json())"
                  ".then(d => { document.getElementById('story').innerHTML = "
                  "'<a href=\"/nyheter/' + d.slug + '/\">' + d.headline + '</a>'; });</script>")
        return page("Daily", f"<h1>Daily</h1><p id=story>loading</p>{script}")

    @app.get("/api/story")
    def story() -> Any:
        return jsonify(id=request.args.get("id"), slug="election-results-2024-live-updates",
                       headline="Counting continues in every district")

    @app.get("/down/")
    def down() -> Any:   # a site having a bad day: what `cache build` reports as a website failure
        return Response("service unavailable", status=503, content_type="text/plain")

    @app.post("/collect")
    def collect() -> Any:
        return Response(status=204)

    @app.get("/ad")
    def ad() -> Any:
        resp = jsonify(slot=request.args.get("slot"), text=secrets.choice(CREATIVES))
        resp.headers["Access-Control-Allow-Origin"] = www
        resp.headers["Cache-Control"] = "no-store"
        return resp

    @app.get("/player/")
    def player() -> Any:
        return Response(PLAYER, content_type="text/html; charset=utf-8")

    @app.get("/media/clip.bin")
    def clip() -> Any:  # always whole: the recording holds the full body, replay cuts ranges from it
        return Response(CLIP, content_type="application/octet-stream", headers={"Accept-Ranges": "bytes"})

    @app.get("/news.css")
    def css() -> Any:
        return Response("body{margin:0;font-family:sans-serif} header{padding:12px 24px;background:#802;color:#fff}"
                        " #search{position:absolute;left:24px;top:60px} #q{width:300px;height:28px}"
                        " main{position:absolute;left:24px;top:110px;width:700px} li{line-height:2}"
                        " #ad{position:absolute;left:900px;top:110px;width:300px;height:120px;background:#fe8;"
                        "font-size:22px;padding:12px}", content_type="text/css")

    return app


class QuietHandler(WSGIRequestHandler):
    def log_request(self, *args: Any, **kwargs: Any) -> None:
        pass


class LocalHttpsSite:
    """A Flask app on one loopback HTTPS port, in a background thread, under the host names `HOSTS`
    (reached through `--resolve`); `app(port)` builds it once the port is known."""

    HOSTS: tuple[str, ...] = ()

    def __init__(self) -> None:
        self._server: Any = None
        self.port = 0

    def app(self, port: int) -> Flask:
        raise NotImplementedError

    def start(self) -> Any:
        from werkzeug.serving import generate_adhoc_ssl_context

        self._server = make_server("127.0.0.1", 0, Flask("placeholder"), threaded=True, request_handler=QuietHandler,
                                   ssl_context=generate_adhoc_ssl_context())
        self.port = self._server.server_port
        self._server.app = self.app(self.port)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @property
    def resolve(self) -> list[str]:
        return [f"{h}:{self.port}:127.0.0.1" for h in self.HOSTS]

    def url(self, path: str = "/") -> str:
        return f"https://{self.HOSTS[0]}:{self.port}{path}"

    def __enter__(self) -> Any:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


class NewsSite(LocalHttpsSite):
    """The news site on one loopback HTTPS port, in a background thread."""

    HOSTS = ("www.news.test", "ads.adnet.test", "static.news.test", "stats.tracker.test")

    def app(self, port: int) -> Flask:
        return create_app(port)


# open the pasta article from the front page, then search for "lamp"
NEWS_ACTIONS = [
    {"name": "click", "arguments": {"x": 100, "y": 206}},
    {"name": "click", "arguments": {"x": 150, "y": 74}},
    {"name": "write", "arguments": {"text": "lamp"}},
    {"name": "press_keys", "arguments": {"keys": ["Enter"]}},
]

_SEARCH_BOX = {"name": "click", "arguments": {"x": 150, "y": 74}}


def news_tasks(site: NewsSite) -> list[dict[str, Any]]:
    """Three live tasks on the site, with checks and oracles (what `weblica cache build` takes in): read
    an article's byline, search and open a result, navigate to an article by its slug."""
    return [
        {"id": "news-author", "start_url": site.url("/"), "max_steps": 4,
         "instruction": "Open the article about cooking pasta and say who wrote it.",
         "source": {"kind": "live", "site": "news"},
         "checks": [{"type": "answer_match", "expected": "Anna Berg"}],
         "oracle": [{"name": "click", "arguments": {"x": 100, "y": 206}},
                    {"name": "done", "arguments": {"answer": "Anna Berg"}}]},
        {"id": "news-search", "start_url": site.url("/"), "max_steps": 6,
         "instruction": "Search for lamp, open the article among the results and say who wrote it.",
         "source": {"kind": "live", "site": "news"},
         "checks": [{"type": "answer_match", "expected": "Sara Ek"},
                    {"type": "url_match", "expected": "/nyheter/best-desk-lamps-of-the-year/", "mode": "contains"}],
         "oracle": [_SEARCH_BOX, {"name": "write", "arguments": {"text": "lamp"}},
                    {"name": "press_keys", "arguments": {"keys": ["Enter"]}},
                    {"name": "click", "arguments": {"x": 100, "y": 206}},
                    {"name": "done", "arguments": {"answer": "Sara Ek"}}]},
        {"id": "news-election", "start_url": site.url("/"), "max_steps": 4,
         "instruction": "Open the election results article.", "source": {"kind": "live", "site": "news"},
         "checks": [{"type": "url_match", "expected": "/nyheter/election-results-2024-live-updates/",
                     "mode": "contains"}],
         "oracle": [{"name": "click", "arguments": {"x": 100, "y": 238}}, {"name": "done", "arguments": {"answer": ""}}]},
    ]
