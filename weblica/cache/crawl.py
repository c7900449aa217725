"""Coverage expansion: open the same-site links and GET form targets of recorded pages through the recorder.

After a task's episodes, the pages they recorded are read back from the store; every `<a href>` and
every `<form method=get>` target (its named fields with the values the page gives them) on the
task's registrable domain that no run has fetched yet is opened in the browser through the recording
proxy, one recorded run per level, up to `depth` levels (links of the pages a level opened make the
next level). So an agent exploring the cached site finds pages one click away recorded too.
"""
from __future__ import annotations

from html.parser import HTMLParser
from typing import Any
from urllib.parse import urldefrag, urlencode, urljoin, urlsplit

from weblica.cache.rules import registrable_domain

HTML_TYPES = ("text/html", "application/xhtml+xml")


class _Targets(HTMLParser):
    """Link and GET-form targets of one page, in document order."""

    def __init__(self, base: str):
        super().__init__(convert_charrefs=True)
        self.base = base
        self.urls: list[str] = []
        self._form: tuple[str, list[tuple[str, str]]] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "base" and a.get("href"):
            self.base = urljoin(self.base, a["href"])
        elif tag == "a" and a.get("href"):
            self.urls.append(urljoin(self.base, a["href"]))
        elif tag == "form" and a.get("method", "get").lower() == "get":
            self._form = (urljoin(self.base, a.get("action") or self.base), [])
        elif tag in ("input", "select", "textarea") and self._form is not None and a.get("name"):
            if a.get("type", "").lower() not in ("submit", "button", "image", "reset", "file"):
                self._form[1].append((a["name"], a.get("value", "")))

    def handle_endtag(self, tag: str) -> None:
        if tag == "form" and self._form is not None:
            action, fields = self._form
            self.urls.append(action.split("?")[0] + ("?" + urlencode(fields) if fields else ""))
            self._form = None


def page_targets(url: str, html: str, site: str) -> list[str]:
    """The http(s) targets on `site` (a registrable domain) that a page links or submits to."""
    parser = _Targets(url)
    try:
        parser.feed(html)
        parser.close()
    except Exception:   # a page the parser chokes on contributes what it gave so far
        pass
    out = []
    for target in parser.urls:
        target = urldefrag(target)[0]
        parts = urlsplit(target)
        if parts.scheme in ("http", "https") and parts.hostname and registrable_domain(parts.hostname) == site:
            out.append(target)
    return out


def recorded_pages(store: Any, run_ids: list[int] | None = None) -> list[tuple[str, str]]:
    """(url, html) of the successful HTML responses recorded in `run_ids` (all runs by default)."""
    pages = []
    for ex in store.exchanges(run_ids=run_ids, with_request_bodies=False):
        if ex.method == "GET" and ex.status == 200 and ex.content_type in HTML_TYPES:
            try:
                pages.append((ex.url, store.bodies.get(ex.response_body_digest).decode("utf-8", "replace")))
            except Exception:   # a body that cannot be read is a page with no links
                continue
    return pages


async def crawl(env: Any, store: Any, recorder: Any, start_url: str, depth: int, seed: int,
                max_pages: int = 30) -> list[dict[str, Any]]:
    """Open unrecorded same-site targets of the recorded pages, `depth` levels deep, as recorded runs."""
    from weblica.cache.play import play

    site = registrable_domain(urlsplit(start_url).hostname or "")
    fetched = {urldefrag(ex.url)[0] for ex in store.exchanges(with_request_bodies=False) if ex.method == "GET"}
    frontier = recorded_pages(store)
    opened: list[dict[str, Any]] = []
    for level in range(1, depth + 1):
        targets: list[str] = []
        for url, html in frontier:
            for target in page_targets(url, html, site):
                if target not in fetched and target not in targets:
                    targets.append(target)
        targets = targets[:max_pages]
        if not targets:
            break
        run_id = store.new_run("record", seed=seed, start_url=targets[0], info={"crawl_level": level})
        recorder.begin_run(run_id)
        for target in targets:
            try:
                error = (await play(env, target, [], seed)).error
            except Exception as exc:   # a target that does not open is recorded as far as it got
                error = str(exc).splitlines()[0]
            opened.append({"url": target, "level": level, "error": error})
            fetched.add(target)
        store.finish_run(run_id, {"crawl_level": level, "pages": len(targets)})
        frontier = recorded_pages(store, [run_id])
    return opened
