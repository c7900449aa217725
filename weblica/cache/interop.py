"""HAR and WARC in and out of recordings.

A HAR whose `pages` are repeated loads of one site (as WebPageTest and sitespeed.io write them) imports
as one run per page, so rules can be inferred from it. Where a HAR has no bodies, response identity
falls back to status, size, content type and validators.

Imports are all or nothing: the file is read and checked completely first (a HAR entry of the wrong
shape, a WARC record whose length or digest is wrong, a truncated file), then its runs are written in
one transaction, into a new recording built beside its final place and moved there. A file already
imported into a recording (same sha256) is skipped unless asked again.

Secrets stay in the recording for replay and are redacted on export (see `redact.py`) unless asked
otherwise; every export is written to a temporary file and moved into place.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
import tempfile
from collections import defaultdict
from contextlib import contextmanager
from datetime import datetime, timezone
from io import BytesIO
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import parse_qsl, urlsplit

from weblica.cache.decompress import har_body
from weblica.cache.exchange import HOP_HEADERS, Exchange, header
from weblica.cache.har_entries import nothing_to_replay, post_body, request_url
from weblica.cache.import_folder import building_folder
from weblica.cache.redact import Redactor, exported_exchange
from weblica.cache.store import DB_NAME, PendingRun, Store, StoreError, WsMessage
from weblica.cache.warc import BadRecord, read_warc
from weblica.cache.websocket import frames_of, frames_record


class InteropError(StoreError):
    """A HAR or WARC file that cannot be imported, or an export that cannot be written."""


def _parse_time(text: str | None) -> float:
    if not text:
        return 0.0
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts or 0, tz=timezone.utc).isoformat().replace("+00:00", "Z")


def file_digest(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# ---- HAR: reading and checking ------------------------------------------------------------------------

_KINDS = {str: "a string", int: "an integer", float: "a number", dict: "an object", list: "a list"}


def _get(obj: dict[str, Any], key: str, kinds: tuple[type, ...], where: str, required: bool = False) -> Any:
    """obj[key] if it has one of `kinds` (None when absent and optional); else an InteropError naming the field."""
    value = obj.get(key)
    if value is None:
        if required:
            raise InteropError(f"{where}.{key}: missing")
        return None
    if isinstance(value, bool) or not isinstance(value, kinds):
        expected = " or ".join(_KINDS.get(k, k.__name__) for k in kinds)
        raise InteropError(f"{where}.{key}: expected {expected}, got {type(value).__name__} {str(value)[:40]!r}")
    return value


def _har_headers(obj: dict[str, Any], where: str) -> list[tuple[str, str]]:
    # HTTP/2 pseudo-headers are not headers; bodies in HAR are decoded, so their transfer headers go
    out = []
    for i, item in enumerate(_get(obj, "headers", (list,), where) or []):
        if not isinstance(item, dict):
            raise InteropError(f"{where}.headers[{i}]: expected an object with name and value")
        name = _get(item, "name", (str,), f"{where}.headers[{i}]", required=True)
        value = _get(item, "value", (str, int, float), f"{where}.headers[{i}]")
        if not name.startswith(":") and name.lower() not in HOP_HEADERS:
            out.append((name, "" if value is None else str(value)))
    return out


def _har_exchange(entry: Any, where: str, seq: int, notes: list[str] | None = None
                  ) -> tuple[Exchange, bytes | None, bytes | None]:
    """One entry's exchange and bodies; `notes` gets what was read by an exporter's reading
    (`har_entries.py`)."""
    notes = [] if notes is None else notes
    if not isinstance(entry, dict):
        raise InteropError(f"{where}: expected an object, got {type(entry).__name__}")
    req = _get(entry, "request", (dict,), where, required=True)
    resp = _get(entry, "response", (dict,), where, required=True)
    method = _get(req, "method", (str,), f"{where}.request", required=True)
    try:
        url = request_url(_get(req, "url", (str,), f"{where}.request", required=True), f"{where}.request.url", notes)
    except ValueError as exc:
        raise InteropError(str(exc)) from None
    request_headers = _har_headers(req, f"{where}.request")
    post = _get(req, "postData", (dict,), f"{where}.request") or {}
    request_body: bytes | None = None
    text = _get(post, "text", (str,), f"{where}.request.postData")
    mime = _get(post, "mimeType", (str,), f"{where}.request.postData")
    if text is not None:
        request_body = text.encode("utf-8")
    else:
        try:
            request_body = post_body(post, mime or header(request_headers, "content-type"),
                                     f"{where}.request.postData", notes)
        except ValueError as exc:
            raise InteropError(str(exc)) from None
    if request_body is not None and mime and not header(request_headers, "content-type"):
        request_headers.append(("Content-Type", mime))
    status = _get(resp, "status", (int,), f"{where}.response", required=True)
    content = _get(resp, "content", (dict,), f"{where}.response") or {}
    response_body: bytes | None = None
    body_text = _get(content, "text", (str,), f"{where}.response.content")
    encoding = _get(content, "encoding", (str,), f"{where}.response.content")
    if body_text is not None:
        if encoding == "base64":
            try:
                response_body = base64.b64decode("".join(body_text.split()), validate=True)
            except (binascii.Error, ValueError) as exc:
                raise InteropError(f"{where}.response.content.text: not valid base64 ({exc})") from None
        elif encoding:
            raise InteropError(f"{where}.response.content.encoding: unknown encoding {encoding!r} (HAR knows base64)")
        else:
            response_body = body_text.encode("utf-8")
    if response_body is not None:  # decoded within the caps of weblica/cache/decompress.py
        try:
            response_body = har_body(response_body, _declared_encoding(resp), f"{where}.response.content")
        except ValueError as exc:
            raise InteropError(str(exc)) from None
    started = _parse_time(_get(entry, "startedDateTime", (str,), where))
    elapsed = _get(entry, "time", (int, float), where) or 0
    response_headers = _har_headers(resp, f"{where}.response")
    ex = Exchange(method=method, url=url, request_headers=request_headers, status=status,
                  reason=_get(resp, "statusText", (str,), f"{where}.response") or "",
                  response_headers=response_headers,
                  http_version=_get(resp, "httpVersion", (str,), f"{where}.response") or "HTTP/1.1",
                  started=started, ended=started + float(elapsed) / 1000, seq=seq)
    if response_body is None:
        size = _get(content, "size", (int, float), f"{where}.response.content")
        size = -1 if size is None else int(size)
        mime_type = _get(content, "mimeType", (str,), f"{where}.response.content") or ""
        ex.response_body_size = max(size, 0)
        ex.response_fingerprint = ":".join([str(status), str(size), mime_type.split(";")[0], header(response_headers, "etag"),
                                            header(response_headers, "last-modified")])
    return ex, request_body, response_body


def _declared_encoding(resp: dict[str, Any]) -> str:
    headers = resp.get("headers") if isinstance(resp.get("headers"), list) else []
    return next((str(h.get("value") or "") for h in headers if isinstance(h, dict)
                 and str(h.get("name", "")).lower() == "content-encoding"), "")


# WebSocket frames in HAR: Chrome DevTools' extension on the handshake's entry, `_webSocketMessages`:
# [{"type": "send"|"receive", "time": <epoch seconds>, "opcode": 1 (text) | 2 (binary), "data": ...}],
# binary data base64-encoded
def _har_ws_messages(entry: dict[str, Any], where: str) -> list[WsMessage]:
    raw = entry.get("_webSocketMessages")
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise InteropError(f"{where}._webSocketMessages: expected a list of messages")
    out = []
    for i, m in enumerate(raw):
        at = f"{where}._webSocketMessages[{i}]"
        if not isinstance(m, dict) or m.get("type") not in ("send", "receive") or m.get("opcode") not in (1, 2):
            raise InteropError(f"{at}: expected type send|receive and opcode 1 (text) or 2 (binary)")
        data = _get(m, "data", (str,), at) or ""
        try:
            content = data.encode("utf-8") if m["opcode"] == 1 else base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise InteropError(f"{at}.data: a binary message that is not valid base64 ({exc})") from None
        time_at = _get(m, "time", (int, float), at) or 0.0
        out.append(WsMessage(exchange_id=0, seq=i, from_client=m["type"] == "send", is_text=m["opcode"] == 1,
                             content=content, at=float(time_at)))
    return out


def _har_ws_export(messages: list[WsMessage], redactor: Redactor | None) -> list[dict[str, Any]]:
    out = []
    for m in messages:
        if m.is_text:
            text = m.content.decode("utf-8", "replace")
            data = redactor.text(text) if redactor else text
        else:
            data = base64.b64encode(m.content).decode()
        out.append({"type": "send" if m.from_client else "receive", "time": m.at, "opcode": 1 if m.is_text else 2,
                    "data": data})
    return out


def read_har(path: str | Path, skip_bad: bool = False) -> tuple[list[PendingRun], list[BadRecord]]:
    """The runs a HAR file holds (one per page when it has several pages), checked entry by entry."""
    try:
        log = json.loads(Path(path).read_text(encoding="utf-8"))["log"]
        entries = log["entries"]
        if not isinstance(entries, list):
            raise TypeError("log.entries is not a list")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InteropError(f"{path} is not a HAR file ({exc}); export one from the browser's network panel") from None
    pages = [p for p in (log.get("pages") or []) if isinstance(p, dict)] if isinstance(log.get("pages"), list) else []
    bad: list[BadRecord] = []
    groups: dict[Any, list[tuple[Exchange, bytes | None, bytes | None]]] = defaultdict(list)
    sockets: dict[int, list[WsMessage]] = {}   # by id() of the handshake's Exchange
    coerced: dict[int, list[dict[str, Any]]] = defaultdict(list)   # by id() of the Exchange: its notes
    for i, entry in enumerate(entries):
        unreplayable = nothing_to_replay(entry)
        if unreplayable is not None:   # not damaged: nothing in it to serve, skipped and named
            bad.append(BadRecord(index=i, offset=None, record_id=None, uri=None, reason=unreplayable))
            continue
        notes: list[str] = []
        try:
            item = _har_exchange(entry, f"entries[{i}]", 0, notes)
            messages = _har_ws_messages(entry, f"entries[{i}]")
        except InteropError as exc:
            if not skip_bad:
                raise InteropError(f"{path}: {exc}; nothing was imported. Fix: correct or remove that entry, or "
                                   "pass --skip-bad to import the other entries") from None
            bad.append(BadRecord(index=i, offset=None, record_id=None, uri=None, reason=str(exc)))
            continue
        if messages:
            sockets[id(item[0])] = messages
        if notes:
            coerced[id(item[0])].append({"index": i, "read": notes})
        page_ref = entry.get("pageref") if len(pages) > 1 else None
        groups[page_ref if isinstance(page_ref, str) else None].append(item)
    order = [p.get("id") for p in pages if p.get("id") in groups] if len(pages) > 1 else [None]
    order += [k for k in groups if k not in order]
    runs = []
    for page_id in order:
        page = next((p for p in pages if p.get("id") == page_id), {})
        items = sorted(groups[page_id], key=lambda item: item[0].started)
        for seq, (ex, _, _) in enumerate(items):
            ex.seq = seq
        title = page.get("title")
        read = [note for ex, _, _ in items for note in coerced.get(id(ex), [])]
        runs.append(PendingRun("import", start_url=items[0][0].url if items else None, exchanges=items,
                               info={"source": str(path), "page": page_id,
                                     "title": title if isinstance(title, str) else None,
                                     **({"coerced": read} if read else {})},
                               ws_messages={ex.seq: sockets[id(ex)] for ex, _, _ in items if id(ex) in sockets}))
    return [r for r in runs if r.exchanges], bad


# ---- WARC: reading ------------------------------------------------------------------------------------

def read_warc_runs(path: str | Path, skip_bad: bool = False) -> tuple[list[PendingRun], list[BadRecord]]:
    """One run of the WARC's response records (with their requests), every record checked first."""
    try:
        records, bad = read_warc(path)
    except OSError as exc:
        raise InteropError(f"{path} cannot be read ({exc.strerror or exc})") from None
    if bad and not skip_bad:
        listed = "; ".join(b.describe() for b in bad[:3]) + (f"; and {len(bad) - 3} more" if len(bad) > 3 else "")
        raise InteropError(f"{path}: {len(bad)} bad WARC record(s): {listed}; nothing was imported. Fix: export "
                           "the WARC again, or pass --skip-bad to import only the good records")
    requests = {r.concurrent_to: r for r in records if r.kind == "request" and r.concurrent_to}
    bad_requests_of = {b.concurrent_to for b in bad if b.concurrent_to}
    frames: dict[str, list[WsMessage]] = {}   # a socket's frames, by its handshake's response record
    for record in records:
        try:
            found = frames_of(record)
            if found is not None and record.concurrent_to:
                frames[record.concurrent_to] = _har_ws_messages({"_webSocketMessages": found}, f"record {record.index}")
        except (ValueError, InteropError) as exc:
            if not skip_bad:
                raise InteropError(f"{path}: record {record.index} ({record.uri}): {exc}; nothing was imported") from None
            bad.append(BadRecord(record.index, record.offset, record.record_id, record.uri, str(exc)))
    exchanges = []
    sockets: dict[int, list[WsMessage]] = {}
    for record in records:
        if record.kind != "response":
            continue
        request = requests.get(record.record_id)
        if not record.uri or urlsplit(record.uri).scheme not in ("http", "https"):
            reason = f"WARC-Target-URI {record.uri!r} is not an http(s) URL"
            if not skip_bad:
                raise InteropError(f"{path}: record {record.index}: {reason}; nothing was imported")
            bad.append(BadRecord(record.index, record.offset, record.record_id, record.uri, reason))
            continue
        if record.record_id in bad_requests_of:  # half an exchange is not imported
            bad.append(BadRecord(record.index, record.offset, record.record_id, record.uri,
                                 "its request record is bad"))
            continue
        try:
            status_parts = record.http_headers.statusline.split(" ", 1)
            status = int(status_parts[0])
        except (ValueError, IndexError):
            reason = f"status line {record.http_headers.statusline[:40]!r} is not HTTP"
            if not skip_bad:
                raise InteropError(f"{path}: record {record.index} ({record.uri}): {reason}; nothing was imported")
            bad.append(BadRecord(record.index, record.offset, record.record_id, record.uri, reason))
            continue
        # warcio splits a request line "GET /x HTTP/1.1" into protocol "GET" and statusline "/x HTTP/1.1"
        method = (request.http_headers.protocol or "GET") if request is not None else "GET"
        ex = Exchange(method=method, url=record.uri or "",
                      request_headers=list(request.http_headers.headers) if request is not None else [],
                      status=status, reason=status_parts[1] if len(status_parts) > 1 else "",
                      response_headers=[(k, v) for k, v in record.http_headers.headers if k.lower() not in HOP_HEADERS],
                      started=_parse_time(record.date), ended=_parse_time(record.date), seq=len(exchanges))
        if record.record_id in frames:
            sockets[ex.seq] = frames[record.record_id]
        exchanges.append((ex, (request.body if request is not None else b"") or None, record.body))
    runs = [PendingRun("import", start_url=exchanges[0][0].url, exchanges=exchanges,
                       info={"source": str(path)}, ws_messages=sockets)] if exchanges else []
    return runs, bad


# ---- import: all or nothing ---------------------------------------------------------------------------

def import_file(path: str | Path, out: str | Path, again: bool = False, skip_bad: bool = False) -> dict[str, Any]:
    """Import a .har, .warc or .warc.gz file into the recording `out` (new or existing), atomically."""
    path, out = Path(path), Path(out)
    if not path.is_file():
        raise InteropError(f"{path} does not exist or is not a file; give a .har, .warc or .warc.gz file")
    suffix = "".join(path.suffixes[-2:]).lower()
    if suffix.endswith(".har"):
        return import_har(path, out, again, skip_bad)
    if suffix.endswith((".warc", ".warc.gz")):
        return import_warc(path, out, again, skip_bad)
    raise InteropError(f"{path}: unknown format; import a .har, .warc or .warc.gz file")


def import_har(path: str | Path, out: str | Path, again: bool = False, skip_bad: bool = False) -> dict[str, Any]:
    runs, bad = read_har(path, skip_bad)
    summary = _commit(Path(path), Path(out), runs, bad, again)
    coerced = sorted((n for r in runs for n in r.info.get("coerced", [])), key=lambda n: n["index"])
    if coerced and not summary.get("skipped"):
        summary["coerced"] = coerced   # entries imported by an exporter's reading, each with what was read how
    return summary


def import_warc(path: str | Path, out: str | Path, again: bool = False, skip_bad: bool = False) -> dict[str, Any]:
    runs, bad = read_warc_runs(path, skip_bad)
    return _commit(Path(path), Path(out), runs, bad, again)


def _commit(path: Path, out: Path, runs: list[PendingRun], bad: list[BadRecord], again: bool) -> dict[str, Any]:
    if not runs:
        raise InteropError(f"{path} holds no complete exchange (no request with its response); nothing was imported")
    digest = file_digest(path)
    for run in runs:
        run.info["sha256"] = digest
    total = sum(len(r.exchanges) for r in runs)
    summary: dict[str, Any] = {"recording": str(out), "runs": len(runs), "exchanges": total}
    if bad:
        summary["bad_records"] = [b.to_dict() for b in bad]
    if (out / DB_NAME).exists():
        with Store.open_dir(out) as store:
            earlier = [r.id for r in store.runs(("import",)) if r.info.get("sha256") == digest]
            if earlier and not again:
                return {"recording": str(out), "runs": 0, "exchanges": 0, "skipped": True,
                        "reason": f"{path} (sha256 {digest[:12]}…) is already imported as run(s) "
                                  f"{', '.join(map(str, earlier))}; pass --again to import it once more"}
            store.add_runs(runs)
        return summary
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise InteropError(f"{out} exists and is not a recording; choose a new --out (or an empty directory)")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InteropError(f"{out}: cannot create a recording there ({exc.strerror or exc}); choose another --out") from None
    try:  # built beside its place, then moved there; a killed import's folder goes at the next import
        with building_folder(out) as building:
            with Store.open_dir(building, create=True) as store:
                store.add_runs(runs)
            if out.exists():
                out.rmdir()
            os.rename(building, out)
    except OSError as exc:
        raise InteropError(f"{out}: the import could not be written there or moved into place "
                           f"({exc.strerror or exc}); nothing was imported; choose another --out") from None
    return summary


# ---- export -------------------------------------------------------------------------------------------

@contextmanager
def _written_atomically(out: str | Path) -> Iterator[Path]:
    """A temporary file beside `out`, moved onto it when the block succeeds, removed when it fails."""
    out = Path(out)
    try:
        fd, name = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".part", dir=out.parent if str(out.parent) else ".")
    except OSError as exc:
        raise InteropError(f"{out}: cannot write the export ({exc.strerror or exc}); choose another --out") from None
    os.close(fd)
    try:
        yield Path(name)
        try:
            os.replace(name, out)
        except OSError as exc:
            raise InteropError(f"{out}: cannot write the export ({exc.strerror or exc}); choose another --out") from None
    finally:
        if os.path.exists(name):
            os.unlink(name)


def export_har(recording: str | Path, out: str | Path, keep_secrets: bool = False) -> dict[str, Any]:
    redactor = None if keep_secrets else Redactor()
    with Store.open_dir(recording, readonly=True) as store:
        runs = store.runs()
        pages, entries = [], []
        sockets = store.ws_messages()
        for run in runs:
            page_id = f"run_{run.id}"
            title = redactor.url(run.start_url) if redactor and run.start_url else run.start_url
            pages.append({"id": page_id, "startedDateTime": _iso(run.started), "title": title or page_id,
                          "pageTimings": {}})
            for ex in store.exchanges(run_ids=[run.id]):
                entry = _har_entry(store, ex, page_id, redactor)
                if ex.id in sockets:
                    entry.update(_resourceType="websocket", _webSocketMessages=_har_ws_export(sockets[ex.id], redactor))
                entries.append(entry)
    har = {"log": {"version": "1.2", "creator": {"name": "weblica", "version": "0.1"}, "pages": pages,
                   "entries": entries}}
    with _written_atomically(out) as part:
        part.write_text(json.dumps(har, indent=1), encoding="utf-8")
    return {"recording": str(recording), "out": str(out), "format": "har", "runs": len(runs),
            "exchanges": len(entries), "secrets": "kept" if keep_secrets else "redacted"}


def _har_entry(store: Store, ex: Exchange, page_id: str, redactor: Redactor | None) -> dict[str, Any]:
    out = exported_exchange(ex, ex.request_body or b"", store.bodies.get(ex.response_body_digest), redactor)
    body = out.response_body
    size = len(body) if ex.response_body_digest else ex.response_body_size
    content: dict[str, Any] = {"size": size, "mimeType": header(out.response_headers, "content-type")}
    if ex.response_body_digest:
        try:
            content["text"] = body.decode("utf-8")
        except UnicodeDecodeError:
            content.update(text=base64.b64encode(body).decode(), encoding="base64")
    request: dict[str, Any] = {
        "method": ex.method, "url": out.url, "httpVersion": ex.http_version,
        "headers": [{"name": k, "value": v} for k, v in out.request_headers],
        "queryString": [{"name": k, "value": v} for k, v in parse_qsl(urlsplit(out.url).query, keep_blank_values=True)],
        "cookies": [], "headersSize": -1, "bodySize": len(out.request_body),
    }
    if out.request_body:
        request["postData"] = {"mimeType": header(out.request_headers, "content-type"),
                               "text": out.request_body.decode("utf-8", "replace")}
    return {
        "pageref": page_id, "startedDateTime": _iso(ex.started), "time": max(ex.ended - ex.started, 0) * 1000,
        "request": request,
        "response": {"status": ex.status, "statusText": ex.reason, "httpVersion": ex.http_version,
                     "headers": [{"name": k, "value": v} for k, v in out.response_headers],
                     "cookies": [], "content": content, "redirectURL": header(out.response_headers, "location"),
                     "headersSize": -1, "bodySize": size},
        "cache": {}, "timings": {"send": 0, "wait": max(ex.ended - ex.started, 0) * 1000, "receive": 0},
    }


def export_warc(recording: str | Path, out: str | Path, keep_secrets: bool = False) -> dict[str, Any]:
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    count = 0
    redactor = None if keep_secrets else Redactor()
    with Store.open_dir(recording, readonly=True) as store, _written_atomically(out) as part:
        sockets = store.ws_messages()
        with open(part, "wb") as f:
            writer = WARCWriter(f, gzip=str(out).endswith(".gz"))
            for ex in store.exchanges():
                sent = exported_exchange(ex, ex.request_body or b"", store.bodies.get(ex.response_body_digest),
                                         redactor)
                body = sent.response_body
                resp_headers = [(k, v) for k, v in sent.response_headers if k.lower() != "content-length"]
                status = StatusAndHeaders(f"{ex.status} {ex.reason or 'OK'}",
                                          resp_headers + [("Content-Length", str(len(body)))], protocol="HTTP/1.1")
                response = writer.create_warc_record(sent.url, "response", payload=BytesIO(body), http_headers=status,
                                                     warc_headers_dict={"WARC-Date": _iso(ex.started)})
                parts = urlsplit(sent.url)
                target = parts.path + (f"?{parts.query}" if parts.query else "")
                req_status = StatusAndHeaders(f"{ex.method} {target or '/'} HTTP/1.1", sent.request_headers,
                                              is_http_request=True)
                request = writer.create_warc_record(sent.url, "request", payload=BytesIO(sent.request_body),
                                                    http_headers=req_status)
                request.rec_headers.add_header("WARC-Concurrent-To", response.rec_headers.get_header("WARC-Record-ID"))
                writer.write_record(response)
                writer.write_record(request)
                if ex.id in sockets:   # the socket's frames, a resource record beside its 101 (websocket.py)
                    writer.write_record(frames_record(writer, sent.url, response, _har_ws_export(sockets[ex.id],
                                                                                                 redactor)))
                count += 1
    return {"recording": str(recording), "out": str(out), "format": "warc", "exchanges": count,
            "secrets": "kept" if keep_secrets else "redacted"}
