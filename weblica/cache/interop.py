"""HAR and WARC in and out of recordings.

A HAR whose `pages` are repeated loads of one site (as WebPageTest and sitespeed.io write them) imports
as one run per page, so rules can be inferred from it. Where a HAR has no bodies, response identity
falls back to status, size, content type and validators. Secrets (Authorization, Cookie, Set-Cookie)
stay in the recording for replay and are redacted on export unless asked otherwise.
"""
from __future__ import annotations

import base64
import json
from collections import defaultdict
from datetime import datetime, timezone
from io import BytesIO
from pathlib import Path
from typing import Any

from weblica.cache.exchange import HOP_HEADERS, Exchange, header
from weblica.cache.store import Store, StoreError

SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "set-cookie"})
REDACTED = "REDACTED"


class InteropError(ValueError):
    pass


def _parse_time(text: str | None) -> float:
    if not text:
        return 0.0
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts or 0, tz=timezone.utc).isoformat().replace("+00:00", "Z")


def _clean_headers(headers: list[dict[str, Any]]) -> list[tuple[str, str]]:
    # HTTP/2 pseudo-headers are not headers; bodies in HAR are decoded, so their transfer headers go
    return [(h["name"], str(h.get("value", ""))) for h in headers
            if not h["name"].startswith(":") and h["name"].lower() not in HOP_HEADERS]


# ---- HAR ----------------------------------------------------------------------------------------------

def import_har(path: str | Path, out: str | Path) -> dict[str, Any]:
    try:
        log = json.loads(Path(path).read_text(encoding="utf-8"))["log"]
        entries = log["entries"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InteropError(f"{path} is not a HAR file ({exc}); export one from the browser's network panel") from None
    pages = log.get("pages") or []
    groups: dict[str | None, list[dict[str, Any]]] = defaultdict(list)
    for entry in entries:
        groups[entry.get("pageref") if len(pages) > 1 else None].append(entry)
    order = [p.get("id") for p in pages if p.get("id") in groups] if len(pages) > 1 else [None]
    order += [k for k in groups if k not in order]
    store = Store.open_dir(out, create=True)
    try:
        total = 0
        for page_id in order:
            page = next((p for p in pages if p.get("id") == page_id), {})
            items = sorted(groups[page_id], key=lambda e: _parse_time(e.get("startedDateTime")))
            start_url = items[0]["request"]["url"] if items else None
            run_id = store.new_run("import", start_url=start_url,
                                   info={"source": str(path), "page": page_id, "title": page.get("title")})
            for seq, entry in enumerate(items):
                store.add_exchange(*_har_exchange(entry, run_id, seq))
                total += 1
            store.finish_run(run_id)
        return {"recording": str(out), "runs": len(order), "exchanges": total}
    finally:
        store.close()


def _har_exchange(entry: dict[str, Any], run_id: int, seq: int) -> tuple[Exchange, bytes | None, bytes | None]:
    req, resp = entry["request"], entry["response"]
    post = req.get("postData") or {}
    request_headers = _clean_headers(req.get("headers", []))
    request_body: bytes | None = None
    if post.get("text") is not None:
        request_body = post["text"].encode("utf-8")
    elif post.get("params"):
        from urllib.parse import urlencode
        request_body = urlencode([(p["name"], p.get("value", "")) for p in post["params"]]).encode()
    if request_body is not None and post.get("mimeType") and not header(request_headers, "content-type"):
        request_headers.append(("Content-Type", post["mimeType"]))
    content = resp.get("content") or {}
    response_body: bytes | None = None
    if content.get("text") is not None:
        text = content["text"]
        response_body = base64.b64decode(text) if content.get("encoding") == "base64" else text.encode("utf-8")
    started = _parse_time(entry.get("startedDateTime"))
    response_headers = _clean_headers(resp.get("headers", []))
    ex = Exchange(method=req["method"], url=req["url"], request_headers=request_headers,
                  status=int(resp.get("status", 0)), reason=resp.get("statusText", ""),
                  response_headers=response_headers, http_version=resp.get("httpVersion") or "HTTP/1.1",
                  started=started, ended=started + float(entry.get("time") or 0) / 1000, seq=seq, run_id=run_id)
    if response_body is None:
        size = content.get("size", -1)
        ex.response_body_size = max(int(size), 0)
        ex.response_fingerprint = ":".join([str(ex.status), str(size), (content.get("mimeType") or "").split(";")[0],
                                            header(response_headers, "etag"),
                                            header(response_headers, "last-modified")])
    return ex, request_body, response_body


def _redact(headers: list[tuple[str, str]], keep_secrets: bool) -> list[tuple[str, str]]:
    if keep_secrets:
        return headers
    return [(k, REDACTED if k.lower() in SECRET_HEADERS else v) for k, v in headers]


def export_har(recording: str | Path, out: str | Path, keep_secrets: bool = False) -> dict[str, Any]:
    store = Store.open_dir(recording)
    try:
        runs = store.runs()
        pages, entries = [], []
        for run in runs:
            page_id = f"run_{run.id}"
            pages.append({"id": page_id, "startedDateTime": _iso(run.started), "title": run.start_url or page_id,
                          "pageTimings": {}})
            for ex in store.exchanges(run_ids=[run.id]):
                entries.append(_har_entry(store, ex, page_id, keep_secrets))
        har = {"log": {"version": "1.2", "creator": {"name": "weblica", "version": "0.1"}, "pages": pages,
                       "entries": entries}}
        Path(out).write_text(json.dumps(har, indent=1), encoding="utf-8")
        return {"recording": str(recording), "out": str(out), "format": "har", "runs": len(runs),
                "exchanges": len(entries), "secrets": "kept" if keep_secrets else "redacted"}
    finally:
        store.close()


def _har_entry(store: Store, ex: Exchange, page_id: str, keep_secrets: bool) -> dict[str, Any]:
    from urllib.parse import parse_qsl, urlsplit

    body = store.bodies.get(ex.response_body_digest)
    content: dict[str, Any] = {"size": ex.response_body_size, "mimeType": header(ex.response_headers, "content-type")}
    if ex.response_body_digest:
        try:
            content["text"] = body.decode("utf-8")
        except UnicodeDecodeError:
            content.update(text=base64.b64encode(body).decode(), encoding="base64")
    request: dict[str, Any] = {
        "method": ex.method, "url": ex.url, "httpVersion": ex.http_version,
        "headers": [{"name": k, "value": v} for k, v in _redact(ex.request_headers, keep_secrets)],
        "queryString": [{"name": k, "value": v} for k, v in parse_qsl(urlsplit(ex.url).query, keep_blank_values=True)],
        "cookies": [], "headersSize": -1, "bodySize": len(ex.request_body or b""),
    }
    if ex.request_body:
        request["postData"] = {"mimeType": header(ex.request_headers, "content-type"),
                               "text": ex.request_body.decode("utf-8", "replace")}
    return {
        "pageref": page_id, "startedDateTime": _iso(ex.started), "time": max(ex.ended - ex.started, 0) * 1000,
        "request": request,
        "response": {"status": ex.status, "statusText": ex.reason, "httpVersion": ex.http_version,
                     "headers": [{"name": k, "value": v} for k, v in _redact(ex.response_headers, keep_secrets)],
                     "cookies": [], "content": content, "redirectURL": header(ex.response_headers, "location"),
                     "headersSize": -1, "bodySize": ex.response_body_size},
        "cache": {}, "timings": {"send": 0, "wait": max(ex.ended - ex.started, 0) * 1000, "receive": 0},
    }


# ---- WARC ---------------------------------------------------------------------------------------------

def export_warc(recording: str | Path, out: str | Path, keep_secrets: bool = False) -> dict[str, Any]:
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    store = Store.open_dir(recording)
    count = 0
    try:
        with open(out, "wb") as f:
            writer = WARCWriter(f, gzip=str(out).endswith(".gz"))
            for ex in store.exchanges():
                body = store.bodies.get(ex.response_body_digest)
                resp_headers = _redact(ex.response_headers, keep_secrets) + [("Content-Length", str(len(body)))]
                status = StatusAndHeaders(f"{ex.status} {ex.reason or 'OK'}", resp_headers, protocol="HTTP/1.1")
                response = writer.create_warc_record(ex.url, "response", payload=BytesIO(body), http_headers=status,
                                                     warc_headers_dict={"WARC-Date": _iso(ex.started)})
                from urllib.parse import urlsplit
                parts = urlsplit(ex.url)
                target = parts.path + (f"?{parts.query}" if parts.query else "")
                req_status = StatusAndHeaders(f"{ex.method} {target or '/'} HTTP/1.1",
                                              _redact(ex.request_headers, keep_secrets), is_http_request=True)
                request = writer.create_warc_record(ex.url, "request", payload=BytesIO(ex.request_body or b""),
                                                    http_headers=req_status)
                request.rec_headers.add_header("WARC-Concurrent-To", response.rec_headers.get_header("WARC-Record-ID"))
                writer.write_record(response)
                writer.write_record(request)
                count += 1
        return {"recording": str(recording), "out": str(out), "format": "warc", "exchanges": count,
                "secrets": "kept" if keep_secrets else "redacted"}
    finally:
        store.close()


def import_warc(path: str | Path, out: str | Path) -> dict[str, Any]:
    from warcio.archiveiterator import ArchiveIterator
    from warcio.exceptions import ArchiveLoadFailed

    responses: list[tuple[str, Any, bytes, float, str]] = []
    requests: dict[str, tuple[Any, bytes]] = {}
    try:
        with open(path, "rb") as f:
            for record in ArchiveIterator(f):
                kind = record.rec_type
                if kind not in ("response", "request") or record.http_headers is None:
                    continue
                body = record.content_stream().read()
                if kind == "response":
                    responses.append((record.rec_headers.get_header("WARC-Record-ID"), record.http_headers, body,
                                      _parse_time(record.rec_headers.get_header("WARC-Date")),
                                      record.rec_headers.get_header("WARC-Target-URI")))
                else:
                    requests[record.rec_headers.get_header("WARC-Concurrent-To") or ""] = (record.http_headers, body)
    except (OSError, ArchiveLoadFailed) as exc:
        raise InteropError(f"{path} is not a WARC file ({exc})") from None
    store = Store.open_dir(out, create=True)
    try:
        run_id = store.new_run("import", start_url=responses[0][4] if responses else None, info={"source": str(path)})
        for seq, (record_id, http_headers, body, started, url) in enumerate(responses):
            req_headers, req_body = requests.get(record_id, (None, b""))
            # warcio splits a request line "GET /x HTTP/1.1" into protocol "GET" and statusline "/x HTTP/1.1"
            method = (req_headers.protocol or "GET") if req_headers is not None else "GET"
            status_parts = http_headers.statusline.split(" ", 1)
            ex = Exchange(method=method, url=url,
                          request_headers=list(req_headers.headers) if req_headers is not None else [],
                          status=int(status_parts[0]), reason=status_parts[1] if len(status_parts) > 1 else "",
                          response_headers=[(k, v) for k, v in http_headers.headers if k.lower() not in HOP_HEADERS],
                          started=started, ended=started, seq=seq, run_id=run_id)
            store.add_exchange(ex, req_body or None, body)
        store.finish_run(run_id)
        return {"recording": str(out), "runs": 1, "exchanges": len(responses)}
    finally:
        store.close()


def import_file(path: str | Path, out: str | Path) -> dict[str, Any]:
    suffix = "".join(Path(path).suffixes[-2:]).lower()
    if suffix.endswith(".har"):
        return import_har(path, out)
    if suffix.endswith((".warc", ".warc.gz")):
        return import_warc(path, out)
    raise StoreError(f"{path}: unknown format; import a .har, .warc or .warc.gz file")
