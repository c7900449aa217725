"""Reading HAR entries as forgivingly as the exporters that write them (issue 41, point 3).

Real exporters (Chrome, Firefox, WebPageTest, chrome-har/Browsertime) write shapes the HAR 1.2 text does
not: `postData.params` whose values are the parsed JSON of the body (objects, lists, numbers) with no
`text`, numeric names, `ws://`/`wss://` URLs on a WebSocket handshake, entries for `data:` and `blob:`
URLs and for requests that never got an answer (status 0). Where there is one reading of what the
browser sent, it is taken and the entry is imported with a note saying what was read how:

- a JSON body written as params (mime type JSON, no text) is the JSON the params spell: an array when the
  names are 0, 1, 2, ... in order, else an object (both readings give the same canonical fields);
- any other non-string param value is the JSON text of the value (a form field the exporter parsed);
- a `ws://`/`wss://` handshake URL is the `http://`/`https://` request it was.

An entry that holds no HTTP exchange to replay (a `data:`/`blob:`/extension URL, a request without an
answer) is skipped and named, without `--skip-bad`: it is not damaged, there is nothing in it to serve.
What cannot be read at all (a relative URL, a status that is no number, bad base64) stays an error
that `--skip-bad` alone turns into a skipped entry.
"""
from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

JSON_MIME_RE = re.compile(r"^application/(?:[\w.+-]+\+)?json\b|^text/json\b", re.IGNORECASE)
NOT_HTTP_SCHEMES = frozenset({"data", "blob", "about", "chrome", "chrome-extension", "moz-extension",
                              "safari-extension", "file", "javascript"})
_HANDSHAKE_SCHEMES = {"ws": "http", "wss": "https"}


def json_text(value: Any) -> str:
    """A value as the compact JSON text a browser's JSON.stringify writes."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def post_body(post: dict[str, Any], mime: str, where: str, notes: list[str]) -> bytes | None:
    """The request body a HAR `postData` without `text` spells through its `params`; None without params.
    Raises ValueError naming the param that cannot be read."""
    params = post.get("params")
    if not params:
        return None
    if not isinstance(params, list):
        raise ValueError(f"{where}.params: expected a list, got {type(params).__name__}")
    names: list[str] = []
    values: list[Any] = []
    for i, p in enumerate(params):
        at = f"{where}.params[{i}]"
        if not isinstance(p, dict):
            raise ValueError(f"{at}: expected an object with name and value")
        name = p.get("name")
        if isinstance(name, (int, float)) and not isinstance(name, bool):
            notes.append(f"{at}.name: the number {name} read as the name {name!s}")
            name = str(name)
        if not isinstance(name, str):
            raise ValueError(f"{at}.name: missing" if name is None else
                             f"{at}.name: expected a string, got {type(name).__name__} {str(name)[:40]!r}")
        names.append(name)
        values.append(p.get("value"))
    if JSON_MIME_RE.match(mime or ""):
        as_array = names == [str(i) for i in range(len(names))]
        body = values if as_array else dict(zip(names, values))
        if any(not isinstance(v, str) for v in values):
            notes.append(f"{where}.params: a JSON body the exporter wrote as params; read as the JSON "
                         f"{'array' if as_array else 'object'} they spell")
        return json_text(body).encode("utf-8")
    pairs = []
    for i, (name, value) in enumerate(zip(names, values)):
        if value is not None and not isinstance(value, str):
            notes.append(f"{where}.params[{i}].value: {type(value).__name__} read as its JSON text")
            value = json_text(value)
        pairs.append((name, value or ""))
    return urlencode(pairs).encode()


def request_url(url: str, where: str, notes: list[str]) -> str:
    """The http(s) URL of an entry; a WebSocket handshake written with its ws(s):// URL is read as the
    http(s) request it was. Raises ValueError for anything else that is not an absolute http(s) URL."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme in _HANDSHAKE_SCHEMES and parts.netloc:
        notes.append(f"{where}: the WebSocket URL {url[:60]} read as its {_HANDSHAKE_SCHEMES[scheme]} handshake")
        return urlunsplit((_HANDSHAKE_SCHEMES[scheme],) + tuple(parts[1:]))
    if scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"{where}: expected an absolute http(s) URL, got {url[:60]!r}")
    return url


def nothing_to_replay(entry: Any) -> str | None:
    """Why an entry holds no HTTP exchange to replay (a `data:` URL, a request never answered), or None."""
    if not isinstance(entry, dict) or not isinstance(entry.get("request"), dict):
        return None
    url = entry["request"].get("url")
    if isinstance(url, str) and urlsplit(url).scheme.lower() in NOT_HTTP_SCHEMES:
        return f"a {urlsplit(url).scheme.lower()}: URL is no network request"
    response = entry.get("response")
    if isinstance(response, dict) and response.get("status") == 0 and not isinstance(response.get("status"), bool):
        error = entry.get("_error") or response.get("_error") or response.get("statusText") or ""
        return "the request got no answer when recorded (status 0" + (f": {str(error)[:60]}" if error else "") + ")"
    return None
