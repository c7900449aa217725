"""Requests the site server is answering, per episode.

Every request of a synth episode's browser passes through the site server (it is the context's proxy)
with the episode's id in a header, so the server can say, at no cost to the browser, how many of that
episode's requests are still being answered. Validation waits on this count (weblica.synth.playback
.RequestTracker) instead of following every subresource through Playwright's request events, which
cost five protocol messages and two objects per request on the driver and Python sides (~6% of
validation's CPU). A request is counted from its arrival until its response is written out (or the server drops it).
"""
from __future__ import annotations

import threading
from collections import Counter
from typing import Any, Callable, Iterable, Iterator

from weblica.env.backend import EPISODE_HEADER

_ENVIRON_KEY = "HTTP_" + EPISODE_HEADER.upper().replace("-", "_")


class InFlight:
    """Per episode id, the requests being answered; `wrap` counts them around a WSGI app."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._count: Counter[str] = Counter()

    def __call__(self, episode: str) -> int:
        with self._lock:
            return self._count.get(episode, 0)

    def _add(self, episode: str, delta: int) -> None:
        with self._lock:
            self._count[episode] += delta
            if self._count[episode] <= 0:
                del self._count[episode]

    def wrap(self, wsgi_app: Callable[..., Any]) -> Callable[..., Any]:
        def middleware(environ: dict[str, Any], start_response: Any) -> Any:
            episode = environ.get(_ENVIRON_KEY)
            if not episode:
                return wsgi_app(environ, start_response)
            self._add(episode, 1)
            try:
                body = wsgi_app(environ, start_response)
            except BaseException:
                self._add(episode, -1)
                raise
            return _Answered(body, lambda: self._add(episode, -1))
        return middleware


class _Answered:
    """A response body that calls `done` once, when the server has written it all, closed it (WSGI's
    close) or dropped it: Werkzeug skips close() when the client reset the connection (a page that
    navigated away mid-answer), and a count left up would hold every later settle of the episode."""

    def __init__(self, body: Iterable[bytes], done: Callable[[], None]) -> None:
        self._body, self._done = body, done

    def __iter__(self) -> Iterator[bytes]:
        try:
            yield from self._body
        finally:
            self._finish()

    def close(self) -> None:
        try:
            close = getattr(self._body, "close", None)
            if close is not None:
                close()
        finally:
            self._finish()

    def _finish(self) -> None:
        done, self._done = self._done, None
        if done is not None:
            done()

    def __del__(self) -> None:
        self._finish()
