"""Issue 41, point 3: HAR import as forgiving as the exporters. A real HAR (pagexray's Walmart fixture,
bench/data/real_hars/SOURCE.md: chrome-har wrote a logger's JSON body as params whose values are
objects) was refused whole unless --skip-bad; it now imports every entry in one transaction, each
coerced entry named with what was read how. Entries with nothing to replay (a data: URL, a request never
answered) are skipped and named without --skip-bad; what cannot be read at all still refuses the file."""
import gzip
import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from weblica.cache.canonical import request_view
from weblica.cache.store import DB_NAME, Store
from weblica.cli import get_cli

WALMART = Path(__file__).resolve().parents[2] / "bench" / "data" / "real_hars" / "walmart-304.har.gz"


def cli(*args):
    return CliRunner().invoke(get_cli(), list(args), catch_exceptions=False)


def entry(url, method="GET", status=200, post=None, **extra):
    request = {"method": method, "url": url, "httpVersion": "HTTP/1.1", "headers": [], "queryString": [],
               "cookies": [], "headersSize": -1, "bodySize": 0}
    if post is not None:
        request["postData"] = post
    return {"startedDateTime": "2024-05-01T10:00:00.000Z", "time": 5, "request": request,
            "response": {"status": status, "statusText": "", "httpVersion": "HTTP/1.1", "headers": [], "cookies": [],
                         "content": {"size": 2, "mimeType": "text/plain", "text": "ok"}, "redirectURL": "",
                         "headersSize": -1, "bodySize": 2},
            "cache": {}, "timings": {"send": 0, "wait": 5, "receive": 0}, **extra}


def har(entries):
    return {"log": {"version": "1.2", "creator": {"name": "test", "version": "1"}, "entries": entries}}


def test_a_real_har_with_objects_in_its_params_imports_whole(tmp_path):
    path = tmp_path / "walmart-304.har"
    path.write_bytes(gzip.decompress(WALMART.read_bytes()))
    total = len(json.loads(path.read_text())["log"]["entries"])
    result = cli("import", str(path), "--out", str(tmp_path / "rec"), "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["exchanges"] == total and summary["runs"] == 9 and "bad_records" not in summary
    assert len(summary["coerced"]) == 14 and summary["coerced"][0]["index"] == 28
    assert "JSON array" in summary["coerced"][0]["read"][0]
    with Store.open_dir(tmp_path / "rec", readonly=True) as store:
        logger = [ex for ex in store.exchanges() if ex.url.endswith("/cp/api/logger")]
        assert len(logger) == 14
        fields = logger[0].view.field_dict()
        assert fields["json:0.tags.0"] == ["info"] and fields["json:1.data.msg"] == ["performance_metrics"]
        assert json.loads(logger[0].request_body)[0]["data"]["_type"] == "application-mounted"
    human = cli("import", str(path), "--out", str(tmp_path / "again"))
    assert "read entry 28 as its exporter wrote it" in human.stdout


def test_params_are_read_as_what_the_browser_sent(tmp_path):
    form = {"mimeType": "application/x-www-form-urlencoded",
            "params": [{"name": "q", "value": "lamp"}, {"name": "n", "value": 3}, {"name": "ok", "value": True},
                       {"name": 7, "value": {"a": [1, 2]}}]}
    as_json = {"mimeType": "application/json; charset=utf-8",
               "params": [{"name": "type", "value": "FETCH"}, {"name": "current", "value": {"sid": False, "n": 0}}]}
    entries = [entry("https://www.a.test/search", "POST", post=form), entry("https://api.a.test/log", "POST", post=as_json),
               entry("wss://www.a.test/ticker?room=1", status=101)]
    (tmp_path / "a.har").write_text(json.dumps(har(entries)))
    summary = json.loads(cli("import", str(tmp_path / "a.har"), "--out", str(tmp_path / "rec"), "--json").stdout)
    assert summary["exchanges"] == 3 and [c["index"] for c in summary["coerced"]] == [0, 1, 2]
    with Store.open_dir(tmp_path / "rec", readonly=True) as store:
        search, log, socket = store.exchanges()
    assert search.view.field_dict() == {"form:q": ["lamp"], "form:n": ["3"], "form:ok": ["true"],
                                        "form:7": ['{"a":[1,2]}']}
    assert json.loads(log.request_body) == {"type": "FETCH", "current": {"sid": False, "n": 0}}
    assert socket.url == "https://www.a.test/ticker?room=1"
    assert request_view("POST", log.url, log.request_headers, log.request_body).field_dict()["json:current.sid"] == ["false"]


def test_entries_with_nothing_to_replay_are_skipped_and_named_without_skip_bad(tmp_path):
    entries = [entry("https://www.a.test/"), entry("data:image/png;base64,iVBORw0KGgo="),
               entry("https://ads.a.test/blocked.js", status=0, _error="net::ERR_BLOCKED_BY_CLIENT"),
               entry("https://www.a.test/next")]
    (tmp_path / "a.har").write_text(json.dumps(har(entries)))
    result = cli("import", str(tmp_path / "a.har"), "--out", str(tmp_path / "rec"), "--json")
    summary = json.loads(result.stdout)
    assert result.exit_code == 0 and summary["exchanges"] == 2
    assert {b["index"]: b["reason"].split(" (")[0] for b in summary["bad_records"]} == {
        1: "a data: URL is no network request", 2: "the request got no answer when recorded"}
    assert "ERR_BLOCKED_BY_CLIENT" in summary["bad_records"][1]["reason"]


@pytest.mark.parametrize("broken,expected", [
    ({"request": {"method": "POST", "url": "https://a.test/x", "headers": [],
                  "postData": {"mimeType": "application/x-www-form-urlencoded", "params": [{"value": "v"}]}}},
     "params[0].name: missing"),
    ({"request": {"method": "POST", "url": "https://a.test/x", "headers": [],
                  "postData": {"mimeType": "application/x-www-form-urlencoded", "params": ["q=1"]}}},
     "params[0]: expected an object"),
    ({"request": {"method": "GET", "url": "/relative", "headers": []}}, "expected an absolute http(s) URL"),
])
def test_what_cannot_be_read_still_refuses_the_file_and_leaves_nothing(tmp_path, broken, expected):
    bad = entry("https://a.test/x")
    bad["request"] = {**bad["request"], **broken["request"]}
    (tmp_path / "a.har").write_text(json.dumps(har([entry("https://a.test/"), bad])))
    result = cli("import", str(tmp_path / "a.har"), "--out", str(tmp_path / "rec"), "--json")
    assert result.exit_code == 1 and expected in json.loads(result.stdout)["error"]
    assert not (tmp_path / "rec").exists()
    kept = json.loads(cli("import", str(tmp_path / "a.har"), "--out", str(tmp_path / "rec"), "--skip-bad",
                          "--json").stdout)
    assert kept["exchanges"] == 1 and kept["bad_records"][0]["index"] == 1


def test_what_is_imported_lands_in_one_transaction(tmp_path):
    entries = [entry("https://www.a.test/", post=None),
               entry("https://api.a.test/log", "POST", post={"mimeType": "application/json",
                                                             "params": [{"name": "0", "value": {"x": 1}}]})]
    (tmp_path / "a.har").write_text(json.dumps(har(entries)))
    cli("import", str(tmp_path / "a.har"), "--out", str(tmp_path / "rec"), "--json")
    with sqlite3.connect(tmp_path / "rec" / DB_NAME) as conn:
        runs = conn.execute("SELECT info FROM runs").fetchall()
    assert len(runs) == 1 and json.loads(runs[0][0])["coerced"] == [
        {"index": 1, "read": ["entries[1].request.postData.params: a JSON body the exporter wrote as params; "
                              "read as the JSON array they spell"]}]
