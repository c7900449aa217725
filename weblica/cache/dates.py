"""Recordings that stay fresh: recorded dates moved to the replay's virtual clock, and how old a recording is.

A cache built today ages: its `Date`, `Expires` and `Last-Modified` headers and its cookies' expiries
say when it was recorded. `shift_headers` moves them to the replay's virtual clock (the env's paused
clock, 2025-01-15 10:00 UTC unless a replay sets another), as Web Page Replay (a header date moves by
its distance from the response's own `Date`) and mitmproxy's server-replay refresh (every date by the
same delta) do, but to the *virtual* clock rather than the wall clock, so the bytes a page sees are the
same at every replay of one clock, whenever it runs:

- the delta is the clock minus the response's own `Date` (else the time it was recorded): `Date`
  becomes the clock, `Expires` and `Last-Modified` keep their distance from it;
- a cookie's `Expires` moves by the same delta, and the cookie gets the lifetime it was sent with as
  `Max-Age` (when it has none). A browser keeps cookies by the machine's clock, not the page's virtual
  one: Chromium reads `Expires` relative to the response's `Date` (its clock-skew correction), which
  moved with it, but a response without a `Date`, or another browser, counts it from the machine's
  clock, where a shifted date may lie in the past. With `Max-Age` a cookie due to expire an hour after
  it was sent lives an hour from when the replay sets it, at any virtual date. A cookie sent already
  expired (a logout's deletion) stays expired (`Max-Age=0`).

Without the shift the replayer refreshes dates to the wall clock as mitmproxy does. Dates written in
bodies are not rewritten; `recording_age` lists the responses that carry any.
"""
from __future__ import annotations

import re
import time
from datetime import datetime, timezone
from email.utils import formatdate, mktime_tz, parsedate_tz
from typing import Any, Iterable

from weblica.browser.determinism import DEFAULT_EPOCH_MS
from weblica.cache.exchange import Exchange, header

SHIFTED = ("expires", "last-modified")
VIRTUAL_CLOCK = DEFAULT_EPOCH_MS / 1000   # the env's clock when a replay names none
TEXT_TYPES = ("text/", "application/json", "application/javascript", "application/xml", "application/xhtml+xml")
# dates a page may print: ISO dates, HTTP dates, "15 January 2025", "January 15, 2025", "Jan 15, 2025"
_MONTHS = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.?"
BODY_DATE_RE = re.compile(rf"\b(?:(?:19|20)\d\d-[01]\d-[0-3]\d|[0-3]?\d {_MONTHS},? (?:19|20)\d\d"
                          rf"|{_MONTHS} [0-3]?\d(?:st|nd|rd|th)?,? (?:19|20)\d\d)\b")


def parse_clock(text: str) -> float:
    """An ISO 8601 instant (`2026-01-15T10:00:00Z`, or a date: midnight UTC) as epoch seconds; ValueError
    names the form expected."""
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{text!r} is no ISO 8601 date or time; write e.g. 2026-01-15 or "
                         "2026-01-15T10:00:00Z") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.timestamp()


def http_date(value: str) -> float | None:
    parsed = parsedate_tz(value or "")
    if parsed is None:
        return None
    try:
        return float(mktime_tz(parsed))
    except (OverflowError, ValueError):
        return None


def _format(seconds: float) -> str | None:
    try:
        return formatdate(seconds, usegmt=True)
    except (OverflowError, OSError, ValueError):   # a date the calendar cannot hold stays as recorded
        return None


def base_time(headers: Iterable[tuple[str, str]], recorded_at: float) -> float:
    """When the response says it was sent: its `Date`, else the time it was recorded."""
    return http_date(header(list(headers), "date")) or recorded_at


def shift_headers(headers: list[tuple[str, str]], clock: float, recorded_at: float) -> list[tuple[str, str]]:
    """The headers with `Date`, `Expires`, `Last-Modified` and cookie expiries moved to `clock` (module doc)."""
    base = base_time(headers, recorded_at)
    delta = clock - base
    out = []
    for name, value in headers:
        lower = name.lower()
        if lower == "date":
            value = _format(clock) or value
        elif lower in SHIFTED:
            when = http_date(value)
            value = (_format(when + delta) or value) if when is not None else value   # `Expires: 0` stays
        elif lower == "set-cookie":
            value = shift_cookie(value, delta, base)
        out.append((name, value))
    return out


def shift_cookie(value: str, delta: float, base: float) -> str:
    """One Set-Cookie value with its `Expires` moved by `delta` and its lifetime kept as `Max-Age`."""
    from mitmproxy.net.http import cookies

    try:
        parsed = cookies.parse_set_cookie_header(value)
    except ValueError:
        return value
    if not parsed:
        return value
    for _name, _value, attrs in parsed:
        expires = http_date(attrs.get("expires", "") or "")
        if expires is None:
            continue
        shifted = _format(expires + delta)
        if shifted is not None:
            attrs.set_all("expires", [shifted])
        if not any(k.lower() == "max-age" for k in attrs.keys()):
            attrs.add("Max-Age", str(max(int(expires - base), 0)))
    return cookies.format_set_cookie_header(parsed)


# ---- how old a recording is ------------------------------------------------------------------------------

def _dated(ex: Exchange, body: bytes | None) -> dict[str, Any]:
    """What in one recorded response carries a date."""
    found: dict[str, Any] = {}
    for name in ("date", "expires", "last-modified"):
        value = header(ex.response_headers, name)
        if value and http_date(value) is not None:
            found[name] = value
    expiring = [v.split(";")[0].split("=")[0].strip() for k, v in ex.response_headers
                if k.lower() == "set-cookie" and re.search(r";\s*expires\s*=", v, re.IGNORECASE)]
    if expiring:
        found["cookie_expiry"] = expiring
    if body and ex.content_type.startswith(TEXT_TYPES):
        dates = sorted(set(BODY_DATE_RE.findall(body[:200_000].decode("utf-8", "replace"))))
        if dates:
            found["body_dates"] = dates[:5]
    return found


def recording_age(store: Any, now: float | None = None, listed: int = 50) -> dict[str, Any]:
    """How old a recording is (its runs' recorded times against `now`) and which responses carry dates:
    headers (`Date`, `Expires`, `Last-Modified`), cookie expiries, dates written in text bodies."""
    now = time.time() if now is None else now
    runs = store.runs(("record", "import"))
    exchanges = store.exchanges(run_ids=[r.id for r in runs], with_request_bodies=False)
    times = [ex.started for ex in exchanges if ex.started] or [r.started for r in runs if r.started]
    counts = {"date": 0, "expires": 0, "last-modified": 0, "cookie_expiry": 0, "body_dates": 0}
    responses = []
    dated = cookies_expired = 0
    for ex in exchanges:
        try:
            body = store.bodies.get(ex.response_body_digest) if ex.response_body_digest else None
        except Exception:   # a body that cannot be read carries no date we can see
            body = None
        found = _dated(ex, body)
        for key in found:
            counts[key] += 1
        base = base_time(ex.response_headers, ex.started)
        for k, v in ex.response_headers:
            match = re.search(r";\s*expires\s*=\s*([^;]+)", v, re.IGNORECASE) if k.lower() == "set-cookie" else None
            expiry = http_date(match.group(1)) if match else None
            if expiry is not None and base < expiry < now:   # alive when sent, dead by now
                cookies_expired += 1
        dated += bool(found)
        if found and len(responses) < listed:
            responses.append({"url": ex.url, "status": ex.status, "run": ex.run_id, **found})
    first, last = (min(times), max(times)) if times else (None, None)
    return {"recorded_from": iso_time(first), "recorded_to": iso_time(last), "now": iso_time(now),
            "age_days": round((now - last) / 86400, 2) if last else None, "runs": len(runs),
            "responses": len(exchanges), "responses_with_dates": dated, "carrying_dates": counts,
            "cookies_expired_since": cookies_expired, "listed": responses}


def iso_time(seconds: float | None) -> str | None:
    if seconds is None:
        return None
    return datetime.fromtimestamp(seconds, tz=timezone.utc).isoformat().replace("+00:00", "Z")
