"""Canonical request keys: one flat view of a request's method, host, path, query and body.

Every place a request can carry a value (query string, urlencoded form, JSON body, multipart form,
GraphQL operation) becomes a named *field*, namespaced by where it came from:

    query:_            ?_=1700000000000
    form:csrf          csrf=ab12… in an application/x-www-form-urlencoded body
    json:variables.cursor   {"variables": {"cursor": "…"}}
    multipart:title    a multipart/form-data part named "title"
    gql:operationName  the GraphQL operation, from the JSON or parsed out of the query text
    body:sha256        a body none of the above understands, by digest
    path:ord           a parameter embedded in the path (`/ad/side;ord=123;misc=1700000000`)

so one rule language ("ignore `query:_`", "require `form:q`") covers all of them, and matching
compares requests field by field.

Request headers and cookies are *context* fields (`header:accept-language`, `header:range`,
`cookie:sid`), kept apart from the fields above: they are not in the request's own key, because most
of them (session cookies, user agents) say nothing about the content. The matcher makes one a key
field where the recording says it decides the response: a header named by the response's `Vary`,
`Range`, a header or cookie a `require` rule names.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import HTTP
from typing import Any, Iterable
from urllib.parse import parse_qsl, urlsplit

# JSON bodies are flattened up to this many leaves; past it the rest is folded into one digest so a
# huge upload does not make a huge key.
MAX_JSON_LEAVES = 500
_GQL_OP_RE = re.compile(r"^\s*(?:query|mutation|subscription)\s+([_A-Za-z][_0-9A-Za-z]*)")


@dataclass(frozen=True)
class RequestView:
    """The parts of a request that decide which response it gets."""

    method: str
    scheme: str
    host: str          # lower case, with ":port" when the port is not the scheme's default
    path: str          # without path-embedded `;k=v` parameters (those are `path:k` fields)
    fields: tuple[tuple[str, str], ...] = field(default_factory=tuple)  # (name, value), sorted
    context: tuple[tuple[str, str], ...] = field(default_factory=tuple)  # header:/cookie: fields, sorted

    def context_dict(self) -> dict[str, str]:
        return dict(self.context)

    def field_dict(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for name, value in self.fields:
            out.setdefault(name, []).append(value)
        return out

    @property
    def key(self) -> str:
        return canonical_key(self)


def netloc(scheme: str, host: str, port: int | None) -> str:
    """`host` or `host:port`, lower case; the default port of the scheme is left out."""
    host = host.lower().rstrip(".")
    if port is None or (scheme == "https" and port == 443) or (scheme == "http" and port == 80):
        return host
    return f"{host}:{port}"


def _flatten_json(value: Any, prefix: str, out: list[tuple[str, str]]) -> None:
    if len(out) >= MAX_JSON_LEAVES:
        return
    if isinstance(value, dict):
        if not value:
            out.append((prefix or ".", "{}"))
        for k in sorted(value):
            _flatten_json(value[k], f"{prefix}.{k}" if prefix else str(k), out)
    elif isinstance(value, list):
        if not value:
            out.append((prefix or ".", "[]"))
        for i, item in enumerate(value):
            _flatten_json(item, f"{prefix}.{i}" if prefix else str(i), out)
    else:
        out.append((prefix or ".", _scalar(value)))


_JSON_LITERAL_RE = re.compile(r"^(?:-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null)$")


def _scalar(value: Any) -> str:
    """Strings stay as they are (rules and detectors read plain values), other scalars as JSON; a string
    that would read as a JSON literal is quoted, so 1 and "1" stay apart as the server may keep them."""
    if isinstance(value, str):
        return json.dumps(value) if _JSON_LITERAL_RE.match(value) else value
    return json.dumps(value)


def _content_type(headers: Iterable[tuple[str, str]]) -> str:
    for name, value in headers:
        if name.lower() == "content-type":
            return value
    return ""


def body_fields(body: bytes, content_type: str) -> list[tuple[str, str]]:
    """Fields of a request body; an opaque body becomes one `body:sha256` field."""
    if not body:
        return []
    mime = content_type.split(";")[0].strip().lower()
    if mime == "application/x-www-form-urlencoded":
        try:
            text = body.decode("utf-8")
            return [(f"form:{k}", v) for k, v in parse_qsl(text, keep_blank_values=True)]
        except UnicodeDecodeError:
            pass
    elif mime == "application/json" or mime.endswith("+json") or (mime in ("", "text/plain") and body[:1] in b"{["):
        try:
            data = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            data = None
        if data is not None:
            leaves: list[tuple[str, str]] = []
            _flatten_json(data, "", leaves)
            out = [(f"json:{k}", v) for k, v in leaves]
            op = _graphql_operation(data)
            if op:
                out.append(("gql:operationName", op))
            return out
    elif mime == "multipart/form-data":
        parts = _multipart_fields(body, content_type)
        if parts is not None:
            return parts
    return [("body:sha256", hashlib.sha256(body).hexdigest())]


def _graphql_operation(data: Any) -> str | None:
    if not isinstance(data, dict) or not isinstance(data.get("query"), str):
        return None
    if isinstance(data.get("operationName"), str) and data["operationName"]:
        return data["operationName"]
    match = _GQL_OP_RE.match(data["query"])
    return match.group(1) if match else None


def _multipart_fields(body: bytes, content_type: str) -> list[tuple[str, str]] | None:
    # the email parser understands multipart given its Content-Type header in front of the body
    try:
        message = BytesParser(policy=HTTP).parsebytes(b"Content-Type: " + content_type.encode("latin-1")
                                                      + b"\r\n\r\n" + body)
    except Exception:  # malformed input of every kind: fall back to the digest
        return None
    if not message.is_multipart():
        return None
    out = []
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if not name:
            continue
        payload = part.get_payload(decode=True) or b""
        if part.get_filename() or len(payload) > 1024:
            value = "sha256:" + hashlib.sha256(payload).hexdigest()  # files compare by content
        else:
            value = payload.decode("utf-8", "replace")
        out.append((f"multipart:{name}", value))
    return out


# headers that never decide content, or that the matcher handles itself (validators, the body's type)
NON_CONTEXT_HEADERS = frozenset({"host", "content-length", "content-type", "connection", "keep-alive",
                                 "proxy-connection", "accept-encoding", "te", "transfer-encoding", "upgrade",
                                 "cookie", "if-none-match", "if-modified-since", "if-match", "if-unmodified-since",
                                 "cache-control", "pragma", "x-weblica-episode"})
_MATRIX_RE = re.compile(r";([^;/=]+)=([^;/]*)")


def split_path_params(path: str) -> tuple[str, list[tuple[str, str]]]:
    """`/ad/side;ord=123;misc=17` -> (`/ad/side`, [("path:ord", "123"), ("path:misc", "17")])."""
    if ";" not in path:
        return path, []
    params: list[tuple[str, str]] = []
    segments = []
    for segment in path.split("/"):
        head, sep, tail = segment.partition(";")
        found = _MATRIX_RE.findall(sep + tail) if sep else []
        if found and _MATRIX_RE.sub("", sep + tail) == "":
            params += [(f"path:{k}", v) for k, v in found]
            segments.append(head)
        else:
            segments.append(segment)
    return "/".join(segments), params


def cookie_fields(value: str) -> list[tuple[str, str]]:
    out = []
    for part in value.split(";"):
        name, sep, val = part.strip().partition("=")
        if sep and name:
            out.append((f"cookie:{name.strip()}", val.strip()))
    return out


def context_fields(headers: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """The request's headers and cookies as `header:<lower name>` and `cookie:<name>` fields."""
    out: list[tuple[str, str]] = []
    for name, value in headers:
        lower = name.lower()
        if lower == "cookie":
            out += cookie_fields(value)
        elif lower not in NON_CONTEXT_HEADERS and not lower.startswith(":"):
            out.append((f"header:{lower}", value.strip()))
    return out


def request_view(method: str, url: str, headers: Iterable[tuple[str, str]] = (), body: bytes = b"") -> RequestView:
    """The canonical view of one request: fields from the URL and body, context from the headers."""
    headers = list(headers)
    parts = urlsplit(url)
    scheme = parts.scheme.lower() or "http"
    path, fields = split_path_params(parts.path or "/")
    fields += [(f"query:{k}", v) for k, v in parse_qsl(parts.query, keep_blank_values=True)]
    fields += body_fields(body or b"", _content_type(headers))
    return RequestView(method=method.upper(), scheme=scheme, host=netloc(scheme, parts.hostname or "", parts.port),
                       path=path or "/", fields=tuple(sorted(fields)), context=tuple(sorted(context_fields(headers))))


def canonical_key(view: RequestView, drop: Iterable[str] = (), path: str | None = None,
                  context: Iterable[str] = ()) -> str:
    """A digest of method, host, path, the fields not in `drop` (field order does not matter) and the
    context fields named in `context` (an absent one counts as absent: logged out is not logged in)."""
    dropped = set(drop)
    payload: list[Any] = [view.method, view.host, path if path is not None else view.path,
                          [list(f) for f in view.fields if f[0] not in dropped]]
    names = sorted(set(context) - dropped)
    if names:
        values = view.context_dict()
        payload.append([[n, values.get(n)] for n in names])
    return hashlib.sha256(json.dumps(payload, separators=(",", ":")).encode()).hexdigest()


def field_location(name: str) -> str:
    """The namespace of a field name (`query`, `form`, `json`, `multipart`, `gql`, `body`, `path`,
    `header`, `cookie`)."""
    return name.split(":", 1)[0]


def field_short_name(name: str) -> str:
    return name.split(":", 1)[-1]


def is_context(name: str) -> bool:
    """Whether a field comes from the headers (`header:`, `cookie:`) rather than the URL or body."""
    return name.startswith(("header:", "cookie:"))
