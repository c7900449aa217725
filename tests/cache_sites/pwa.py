"""A PWA-style site whose service worker serves the shell from its own cache, served for real on loopback.

Host `www.pwa.test`, HTTPS on one port (mapped with --resolve). `/` registers `/sw.js`; the worker,
when installed, fetches `/`, `/app.css` and `/shell.js` into its cache (its own requests, through
the proxy) and then answers those from the cache, anything else from the network. The page says who
served it (`worker` once the worker controls it, else `network`) and shows `/api/news` (always from
the network: a random headline, so a replay shows the recorded one). A second load (`goto_url /`,
after the worker took control) is served by the worker.
"""
from __future__ import annotations

import secrets
from typing import Any

from flask import Flask, Response, jsonify

from weblica.cache.demo_site import LocalHttpsSite

PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>pwa</title>
<link rel="stylesheet" href="/app.css"></head><body><h1 id="by">…</h1><p id="news">…</p>
<script src="/shell.js"></script></body></html>"""
SHELL = """
const by = navigator.serviceWorker && navigator.serviceWorker.controller ? 'worker' : 'network';
document.getElementById('by').textContent = 'shell served by ' + by;
fetch('/api/news').then(r => r.json()).then(d => { document.getElementById('news').textContent = d.headline;
  document.title = by + '|' + d.headline; });
if (navigator.serviceWorker) navigator.serviceWorker.register('/sw.js').catch((e) => {
  document.getElementById('by').textContent = 'no worker: ' + e.message; });
"""
WORKER = """
const SHELL = ['/', '/app.css', '/shell.js'];
self.addEventListener('install', (e) => { self.skipWaiting();
  e.waitUntil(caches.open('shell').then((c) => c.addAll(SHELL))); });
self.addEventListener('activate', (e) => e.waitUntil(self.clients.claim()));
self.addEventListener('fetch', (e) => {
  const path = new URL(e.request.url).pathname;
  if (SHELL.includes(path)) e.respondWith(caches.match(path).then((hit) => hit || fetch(e.request)));
});
"""


def create_app() -> Flask:
    app = Flask(__name__)

    @app.get("/")
    def page() -> Any:
        return Response(PAGE, content_type="text/html; charset=utf-8")

    @app.get("/app.css")
    def css() -> Any:
        return Response("body{margin:0;font:20px sans-serif;padding:30px} h1{color:#046}", content_type="text/css")

    @app.get("/shell.js")
    def shell() -> Any:
        return Response(SHELL, content_type="text/javascript")

    @app.get("/sw.js")
    def worker() -> Any:
        return Response(WORKER, content_type="text/javascript", headers={"Cache-Control": "no-cache"})

    @app.get("/api/news")
    def news() -> Any:
        resp = jsonify(headline=f"headline {secrets.token_hex(3)}")
        resp.headers["Cache-Control"] = "no-store"
        return resp

    return app


class PwaSite(LocalHttpsSite):
    """The PWA on one loopback HTTPS port, in a background thread."""

    HOSTS = ("www.pwa.test",)

    def app(self, port: int) -> Flask:
        return create_app()


def pwa_actions(start_url: str) -> list[dict[str, Any]]:
    """Let the worker install, then load the page again: the worker serves its shell."""
    return [{"name": "wait", "arguments": {"seconds": 1}}, {"name": "goto_url", "arguments": {"url": start_url}}]
