"""A multi-host site whose pages change with what a replay matcher must not confuse, served for real on
loopback (issue 20, points 2 and 7): the probes that a replay answers right or as a miss, never with
another variant's page.

Hosts (HTTPS on one port, mapped with --resolve): `www.probe.test` (the pages), `static.probe.test`
(the stylesheet every page links). Every page puts what it shows in its title:

  /                      a greeting in the language of Accept-Language (`Vary: Accept-Language`)
  /login?user=NAME       sets the cookie sid=NAME and redirects to /account
  /account               "Hello NAME" for the cookie sid=NAME, else "Please log in"
  /articles/<slug>/      the article's title (slug URLs that look like tokens)
  /search?q=Q            "N results for Q"
  /player/#A-B           fetches /media/clip.bin with `Range: bytes=A-B` (whole without a hash; the
                         server honours ranges) and shows "status length first-byte content-range"

`PROBES` are the requests a replay is asked for, recorded or not; `RECORDED_BROWSE` is what the
recording holds (two locales; logged out and logged in as alice; one article; one query; the whole
clip and one range).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flask import Flask, Response, redirect, request

from weblica.cache.demo_site import LocalHttpsSite

GREETINGS = {"en": "Welcome", "sv": "Välkommen", "de": "Willkommen", "fr": "Bienvenue"}
ARTICLES = {"how-to-cook-pasta-in-2019": "How to cook pasta",
            "election-results-2024-live-updates": "Election results"}
CATALOG = ["Arc floor lamp", "Desk lamp", "Velvet sofa", "Wool rug", "Sofa bed"]
CLIP = bytes(range(256)) * 16
PLAYER = """<!doctype html><html><head><meta charset="utf-8"><title>player</title>{css}</head><body><p>player</p>
<script>
const range = location.hash.slice(1);
fetch('/media/clip.bin', range ? {{headers: {{Range: 'bytes=' + range}}}} : {{}}).then(async r => {{
  const bytes = new Uint8Array(await r.arrayBuffer());
  document.title = [r.status, bytes.length, bytes[0], r.headers.get('content-range') || '-'].join(' ');
}}).catch(e => {{ document.title = 'failed: ' + e.message; }});
</script></body></html>"""


def greeting(accept_language: str) -> str:
    primary = accept_language.split(",")[0].split(";")[0].strip().split("-")[0].lower()
    return GREETINGS.get(primary, GREETINGS["en"])


def account(user: str | None) -> str:
    return f"Hello {user}" if user else "Please log in"


def search_title(q: str) -> str:
    found = [i for i in CATALOG if q and q.lower() in i.lower()]
    return f"{len(found)} results for {q}"


def clip_title(start: int | None = None, end: int | None = None) -> str:
    if start is None:
        return f"200 {len(CLIP)} 0 -"
    return f"206 {end - start + 1} {CLIP[start]} bytes {start}-{end}/{len(CLIP)}"


def create_app(port: int) -> Flask:
    app = Flask(__name__)
    css = f'<link rel="stylesheet" href="https://static.probe.test:{port}/site.css">'

    def page(title: str, headers: dict[str, str] | None = None) -> Response:
        html = f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title>{css}</head>" \
               f"<body><h1>{title}</h1></body></html>"
        return Response(html, content_type="text/html; charset=utf-8", headers=headers or {})

    @app.get("/")
    def home() -> Any:
        if request.host.split(":")[0] != "www.probe.test":
            return "not found", 404
        return page(greeting(request.headers.get("Accept-Language", "")), {"Vary": "Accept-Language"})

    @app.get("/login")
    def login() -> Any:
        resp = redirect("/account")
        resp.set_cookie("sid", request.args.get("user", ""), secure=True, samesite="Lax")
        return resp

    @app.get("/account")
    def account_page() -> Any:
        return page(account(request.cookies.get("sid")), {"Cache-Control": "private"})

    @app.get("/articles/<slug>/")
    def article(slug: str) -> Any:
        return page(ARTICLES[slug]) if slug in ARTICLES else ("not found", 404)

    @app.get("/search")
    def search() -> Any:
        return page(search_title(request.args.get("q", "")))

    @app.get("/player/")
    def player() -> Any:
        return Response(PLAYER.format(css=css), content_type="text/html; charset=utf-8")

    @app.get("/media/clip.bin")
    def clip() -> Any:
        resp = Response(CLIP, content_type="application/octet-stream")
        return resp.make_conditional(request, accept_ranges=True, complete_length=len(CLIP))

    @app.get("/site.css")
    def site_css() -> Any:
        return Response("body{margin:0;font-family:sans-serif} h1{padding:24px}", content_type="text/css")

    return app


class ProbeSite(LocalHttpsSite):
    HOSTS = ("www.probe.test", "static.probe.test")

    def app(self, port: int) -> Flask:
        return create_app(port)


@dataclass(frozen=True)
class Probe:
    """One page a replay is asked for: in a context with `locale` and the cookie sid=`user` (None: none)."""

    name: str
    path: str
    expected: str            # the title the live site shows for it
    locale: str = "en-US"
    user: str | None = None
    recorded: bool = False   # whether the recorded browse asked exactly this


# the recorded browse: (locale, user, path); `login` paths set the cookie as a person logging in would
RECORDED_BROWSE = [("en-US", None, "/"), ("sv-SE", None, "/"), ("en-US", None, "/account"),
                   ("en-US", None, "/login?user=alice"), ("en-US", None, "/articles/how-to-cook-pasta-in-2019/"),
                   ("en-US", None, "/search?q=lamp"), ("en-US", None, "/player/"), ("en-US", None, "/player/#0-99")]

PROBES = [
    Probe("accept-language en (recorded)", "/", greeting("en-US"), "en-US", recorded=True),
    Probe("accept-language sv (recorded)", "/", greeting("sv-SE"), "sv-SE", recorded=True),
    Probe("accept-language de (never recorded)", "/", greeting("de-DE"), "de-DE"),
    Probe("logged out (recorded)", "/account", account(None), recorded=True),
    Probe("cookie alice (recorded)", "/account", account("alice"), user="alice", recorded=True),
    Probe("cookie bob (never recorded)", "/account", account("bob"), user="bob"),
    Probe("slug recorded", "/articles/how-to-cook-pasta-in-2019/", ARTICLES["how-to-cook-pasta-in-2019"],
          recorded=True),
    Probe("slug never recorded", "/articles/election-results-2024-live-updates/",
          ARTICLES["election-results-2024-live-updates"]),
    Probe("search recorded (lamp)", "/search?q=lamp", search_title("lamp"), recorded=True),
    Probe("search never recorded (sofa)", "/search?q=sofa", search_title("sofa")),
    Probe("range recorded (0-99)", "/player/#0-99", clip_title(0, 99), recorded=True),
    Probe("range from the whole body (100-199)", "/player/#100-199", clip_title(100, 199)),
]


def classify(title: str | None, status: int | None, probe: Probe) -> str:
    """'correct' (the live page's content), 'miss' (no page, an error, or the replay's miss), or 'wrong'
    (a page with other content: what a replay must never show)."""
    if title == probe.expected:
        return "correct"
    if title is None or status is None or status >= 500 or title.startswith(("failed", "5")) or title == "player":
        return "miss"
    return "wrong"


async def _open(context: Any, url: str) -> tuple[str | None, int | None]:
    page = await context.new_page()
    try:
        response = await page.goto(url, wait_until="load", timeout=15000)
        if "/player/" in url:   # the player's title comes when its fetch lands (or fails)
            try:
                await page.wait_for_function("document.title !== 'player'", timeout=5000)
            except Exception:
                pass
        return await page.title(), response.status if response else None
    except Exception:
        return None, None


async def record_browse(new_context: Any, origin: str) -> None:
    """One recorded run: each entry of RECORDED_BROWSE in a fresh context with its locale."""
    for locale, _user, path in RECORDED_BROWSE:
        context = await new_context(locale)
        try:
            await _open(context, origin + path)
        finally:
            await context.close()


async def browse_probes(new_context: Any, origin: str) -> dict[str, str]:
    """Every probe in a fresh context (`new_context(locale)`): probe name -> correct | miss | wrong."""
    results = {}
    for probe in PROBES:
        context = await new_context(probe.locale)
        try:
            if probe.user:
                await context.add_cookies([{"name": "sid", "value": probe.user, "url": origin}])
            title, status = await _open(context, origin + probe.path)
            results[probe.name] = classify(title, status, probe)
        finally:
            await context.close()
    return results


async def with_browser(go: Any, proxy_url: str | None = None, har: str | None = None) -> Any:
    """`go(new_context)` with real Chromium; each context goes through `proxy_url`, or is answered by
    Playwright's routeFromHAR from `har` (unmatched requests aborted)."""
    from playwright.async_api import async_playwright

    from weblica.browser.launcher import context_kwargs, launch_browser

    async with async_playwright() as pw:
        browser = await launch_browser(pw)
        try:
            async def new_context(locale: str) -> Any:
                context = await browser.new_context(**{**context_kwargs(proxy_url, ignore_https_errors=True),
                                                       "locale": locale})
                if har:
                    await context.route_from_har(har, not_found="abort")
                return context
            return await go(new_context)
        finally:
            await browser.close()


def record_probe_site(site: ProbeSite, recording: Any, runs: int = 2) -> dict[str, str]:
    """The live site's answer to every probe (through a mapping proxy, not recorded), then `runs` runs of
    RECORDED_BROWSE through the real recorder into `recording`."""
    import asyncio

    from weblica.cache.addons import EpisodeHeader, HostMapper, Recorder, parse_resolve
    from weblica.cache.proxy import ProxyServer
    from weblica.cache.store import Store

    origin = site.url("").rstrip("/")
    with ProxyServer([HostMapper(parse_resolve(site.resolve))]) as proxy:
        live = asyncio.run(with_browser(lambda new_context: browse_probes(new_context, origin), proxy.url))
    store = Store.open_dir(recording, create=True)
    recorder = Recorder(store, 0)
    try:
        with ProxyServer([EpisodeHeader(), HostMapper(parse_resolve(site.resolve)), recorder]) as proxy:
            async def record_runs(new_context: Any) -> None:
                for _ in range(runs):
                    recorder.begin_run(store.new_run("record", start_url=origin + "/"))
                    await record_browse(new_context, origin)
            asyncio.run(with_browser(record_runs, proxy.url))
    finally:
        store.close()
    return live
