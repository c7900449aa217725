"""Coverage expansion: open the same-site links and GET form targets of recorded pages through the recorder.

After a task's episodes, the pages they recorded are read back from the store; every `<a href>` and
every `<form method=get>` target (its named fields with the values the page gives them) on the
task's registrable domain that no run has fetched yet is opened in the browser through the recording
proxy, one recorded run per level, up to `depth` levels (links of the pages a level opened make the
next level). So an agent exploring the cached site finds pages one click away recorded too.

Each target is opened with the session of the episode whose page links it: the cookies, localStorage
and IndexedDB that episode left (`weblica.cache.session.SessionHost`), so a logged-in episode's admin
links are recorded as the logged-in user sees them, not as the login page's redirect. A target opened
at a later level keeps the session of the page that linked it. Every target starts from the episode's
session as it was left, never from what another crawled page did to it.

A crawl must not end or spend the session it carries, nor change the site: links that log out or
delete (`/logout`, `wp-login.php?action=logout`, `/posts/3/delete`, `?action=trash`, `do=remove`), links
whose action parameter names any change (`action=deactivate`, `action=spamcomment`), links that carry a
CSRF token (`_wpnonce=`, `csrf_token=`: a site protects actions that way, not pages), links a page marks
as an action (`data-method="delete"` or any non-GET `data-method`, `data-confirm`) and forms that are not
GET (a POST form is never submitted) are not followed; `ending_reason` says why. Readable slugs that
merely contain such a word (`/how-to-remove-stains/`) are pages and are followed.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any
from urllib.parse import parse_qsl, urldefrag, urlencode, urljoin, urlsplit

from weblica.cache.rules import registrable_domain

HTML_TYPES = ("text/html", "application/xhtml+xml")
# verbs that end a session or change the site when a GET carries them (a path segment, a query name or value)
ENDING_VERBS = frozenset({"logout", "logoff", "signout", "signoff", "delete", "remove", "destroy", "trash",
                          "erase", "purge", "unsubscribe", "deactivate", "revoke", "cancel", "terminate", "disconnect",
                          "unlink", "ban", "spam", "untrash", "emptytrash", "unpublish"})
# an action parameter whose value starts with one of these changes something (`action=approvecomment`)
CHANGE_VERBS = ENDING_VERBS | {"approve", "unapprove", "activate", "publish", "update", "upgrade", "install",
                               "uninstall", "enable", "disable", "reset", "restore", "move", "mark", "send", "add",
                               "set", "toggle", "lock", "unlock", "flag", "vote", "like", "follow", "unfollow",
                               "subscribe", "dismiss", "hide", "block", "unblock", "close", "open", "run"}
ACTION_PARAMS = frozenset({"action", "do", "op", "cmd", "command", "task", "act", "_method", "method"})
CSRF_PARAMS = frozenset({"_wpnonce", "nonce", "_nonce", "csrf", "csrf_token", "csrftoken", "_csrf", "_token", "xsrf",
                         "authenticity_token", "csrfmiddlewaretoken", "__requestverificationtoken", "sesskey"})
_WORD_SPLIT = re.compile(r"[-_.]")


@dataclass(frozen=True)
class Target:
    url: str
    ending: str | None = None   # why following it could end the session or change the site (then not followed)


def _is_ending_word(word: str) -> bool:
    word = word.lower()
    if word in ENDING_VERBS or _WORD_SPLIT.sub("", word.split(".")[0]) in ("logout", "logoff", "signout", "signoff"):
        return True
    parts = [p for p in _WORD_SPLIT.split(word) if p]
    # a verb first (`delete-post`, `remove_item`, `logout.php`), never one inside a readable slug
    # (`how-to-remove-stains` is an article)
    return bool(parts) and parts[0] in ENDING_VERBS and (len(parts) <= 3 or word.endswith((".php", ".asp", ".aspx")))


def ending_reason(url: str, attrs: dict[str, str] | None = None) -> str | None:
    """Why opening `url` (a link with `attrs`) could end the session or change the site, or None."""
    attrs = attrs or {}
    method = attrs.get("data-method", "").strip().lower()
    if method and method != "get":
        return f"a {method.upper()} action link (data-method)"
    if "data-confirm" in attrs or "data-turbo-confirm" in attrs:
        return "a link that asks for confirmation (an action)"
    parts = urlsplit(url)
    for segment in parts.path.split("/"):
        if segment and _is_ending_word(segment):
            return f"its path names an action ({segment})"
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        lower = name.lower()
        if lower in CSRF_PARAMS:
            return f"it carries a CSRF token ({name}): an action"
        if lower in ACTION_PARAMS and value.lower().startswith(tuple(CHANGE_VERBS)):
            return f"its query names an action ({name}={value})"
        if _is_ending_word(name):   # `?logout=1`, `?delete=3`; a value (`q=delete`) is only a value
            return f"its query names an action ({name})"
    return None


class _Targets(HTMLParser):
    """Link and GET-form targets of one page, in document order; POST forms only as refused targets."""

    def __init__(self, base: str):
        super().__init__(convert_charrefs=True)
        self.base = base
        self.targets: list[Target] = []
        self._form: tuple[str, list[tuple[str, str]], str | None] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "base" and a.get("href"):
            self.base = urljoin(self.base, a["href"])
        elif tag == "a" and a.get("href"):
            url = urljoin(self.base, a["href"])
            self.targets.append(Target(url, ending_reason(url, a)))
        elif tag == "form":
            action = urljoin(self.base, a.get("action") or self.base)
            method = (a.get("method") or "get").strip().lower()
            refused = None if method == "get" else f"a {method.upper()} form (not idempotent)"
            self._form = (action, [], refused or ending_reason(action, a))
        elif tag in ("input", "select", "textarea", "button") and self._form is not None and a.get("name"):
            kind = a.get("type", "").lower()
            if tag == "button" or kind in ("submit", "button", "image", "reset", "file"):
                return
            self._form[1].append((a["name"], a.get("value", "")))

    def handle_endtag(self, tag: str) -> None:
        if tag == "form" and self._form is not None:
            action, fields, refused = self._form
            get = refused is None or not refused.endswith("(not idempotent)")
            url = action.split("?")[0] + ("?" + urlencode(fields) if fields and get else "")
            self.targets.append(Target(url, refused or ending_reason(url)))
            self._form = None


def page_links(url: str, html: str, site: str) -> list[Target]:
    """The http(s) targets on `site` (a registrable domain) a page links or submits to, each with the
    reason it is not to be followed, if any."""
    parser = _Targets(url)
    try:
        parser.feed(html)
        parser.close()
    except Exception:   # a page the parser chokes on contributes what it gave so far
        pass
    out = []
    for target in parser.targets:
        link = urldefrag(target.url)[0]
        parts = urlsplit(link)
        if parts.scheme in ("http", "https") and parts.hostname and registrable_domain(parts.hostname) == site:
            out.append(Target(link, target.ending))
    return out


def page_targets(url: str, html: str, site: str) -> list[str]:
    """The targets of a page a crawl may follow (see `page_links`)."""
    return [t.url for t in page_links(url, html, site) if t.ending is None]


def recorded_pages(store: Any, run_ids: list[int] | None = None) -> list[tuple[str, str]]:
    """(url, html) of the successful HTML responses recorded in `run_ids` (all runs by default)."""
    return [(url, html) for url, html, _run in _pages(store, run_ids)]


def _pages(store: Any, run_ids: list[int] | None = None) -> list[tuple[str, str, int]]:
    pages = []
    for ex in store.exchanges(run_ids=run_ids, with_request_bodies=False):
        if ex.method == "GET" and ex.status == 200 and ex.content_type in HTML_TYPES:
            try:
                pages.append((ex.url, store.bodies.get(ex.response_body_digest).decode("utf-8", "replace"), ex.run_id))
            except Exception:   # a body that cannot be read is a page with no links
                continue
    return pages


async def crawl(env: Any, store: Any, recorder: Any, start_url: str, depth: int, seed: int,
                max_pages: int = 30, sessions: dict[int, dict[str, Any] | None] | None = None,
                host: Any = None) -> list[dict[str, Any]]:
    """Open unrecorded same-site targets of the recorded pages, `depth` levels deep, as recorded runs.

    `sessions` maps each recorded episode's run to the storage state it left; `host` (a SessionHost,
    the env's) opens each target with the session of the episode that links it. Without them the crawl
    carries no session. Returns every target opened (url, level, the session's run, the document's
    status, error) and every target refused (url, reason)."""
    from weblica.cache.play import play

    site = registrable_domain(urlsplit(start_url).hostname or "")
    fetched = {urldefrag(ex.url)[0] for ex in store.exchanges(with_request_bodies=False) if ex.method == "GET"}
    sessions = sessions or {}
    # (url, html, the run whose session it was seen with)
    frontier = _pages(store)
    opened: list[dict[str, Any]] = []
    refused: dict[str, str] = {}
    for level in range(1, depth + 1):
        targets: dict[str, int] = {}   # url -> the run whose session opens it (first page linking it wins)
        for url, html, run in frontier:
            for target in page_links(url, html, site):
                if target.ending is not None:
                    refused.setdefault(target.url, target.ending)
                elif target.url not in fetched and target.url not in targets:
                    targets[target.url] = run
        chosen = list(targets.items())[:max_pages]
        if not chosen:
            break
        run_id = store.new_run("record", seed=seed, start_url=chosen[0][0], info={"crawl_level": level})
        recorder.begin_run(run_id)
        opened_by: dict[str, int] = {}
        for target, session_run in chosen:
            session = sessions.get(session_run)
            if host is not None:
                host.start_with = session
            try:
                error = (await play(env, target, [], seed)).error
            except Exception as exc:   # a target that does not open is recorded as far as it got
                error = str(exc).splitlines()[0]
            finally:
                if host is not None:
                    host.start_with = None
            opened.append({"url": target, "level": level, "session_of_run": session_run if session else None,
                           "error": error})
            opened_by[target] = session_run
            fetched.add(target)
        store.finish_run(run_id, {"crawl_level": level, "pages": len(chosen)})
        statuses = _document_statuses(store, run_id)
        for row in opened[-len(chosen):]:
            row["status"] = statuses.get(row["url"])
        frontier = [(u, h, opened_by.get(u, run_id)) for u, h, _r in _pages(store, [run_id]) if u in opened_by]
    return opened + [{"url": url, "refused": reason} for url, reason in refused.items()]


def _document_statuses(store: Any, run_id: int) -> dict[str, int]:
    """The status each URL first answered with in a run (a crawled page's own document)."""
    out: dict[str, int] = {}
    for ex in store.exchanges(run_ids=[run_id], with_request_bodies=False):
        out.setdefault(urldefrag(ex.url)[0], ex.status)
    return out


def summarize(crawled: list[dict[str, Any]]) -> dict[str, Any]:
    """A crawl in numbers: pages opened (with an episode's session, and by the status their document
    answered) and links not followed because they would act (log out, delete, a POST form)."""
    opened = [c for c in crawled if "refused" not in c]
    statuses = Counter(str(c.get("status")) for c in opened)
    return {"opened": len(opened), "with_session": sum(1 for c in opened if c.get("session_of_run")),
            "answered": dict(sorted(statuses.items())), "not_followed": len(crawled) - len(opened)}
