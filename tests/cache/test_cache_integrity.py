"""Store integrity as a careless or hostile user meets it: damaged recordings, damaged bodies, damaged
HAR and WARC files. Each gives one line naming the file and a non-zero exit (JSON with --json), read
commands leave the recording's bytes as they were, and a failed import leaves nothing behind."""
import hashlib
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from weblica.cache import interop
from weblica.cache.exchange import Exchange
from weblica.cache.interop import export_warc
from weblica.cache.store import DB_NAME, PendingRun, Store, save_actions
from weblica.cli import get_cli

PAGE = (b"<!doctype html><html><head><title>Shop</title><link rel=stylesheet href=/style.css></head>"
        b"<body><h1 id=t>Lamps</h1><p>" + b"catalogue " * 200 + b"</p></body></html>")


def cli(*args: str):
    result = CliRunner().invoke(get_cli(), list(args))
    # a damaged input must never end in an uncaught exception (a traceback for the user)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result


def _exchange(url: str, ctype: str, seq: int) -> Exchange:
    return Exchange(method="GET", url=url, request_headers=[("Accept", "*/*"), ("X-Filler", "f" * 300)], status=200,
                    reason="OK", response_headers=[("Content-Type", ctype)], started=1e9 + seq, ended=1e9 + seq,
                    seq=seq)


def build_recording(rec: Path, extra: int = 40) -> Path:
    """A recording of one page and its stylesheet (plus filler exchanges, so the database has many pages)."""
    with Store.open_dir(rec, create=True) as store:
        run = store.new_run("record", start_url="http://shop.test/")
        for seq, (url, ctype, body) in enumerate([("http://shop.test/", "text/html", PAGE),
                                                  ("http://shop.test/style.css", "text/css", b"h1{color:#c00}")]):
            ex = _exchange(url, ctype, seq)
            ex.run_id = run
            store.add_exchange(ex, None, body)
        for i in range(extra):
            ex = _exchange(f"http://shop.test/filler/{i}", "text/plain", 2 + i)
            ex.run_id = run
            store.add_exchange(ex, None, f"filler {i}".encode())
        store.finish_run(run)
    save_actions(rec, [], "http://shop.test/")
    return rec


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    return build_recording(tmp_path_factory.mktemp("pristine") / "rec")


@pytest.fixture
def good(pristine, tmp_path):
    rec = tmp_path / "rec"
    shutil.copytree(pristine, rec)
    return rec


def snapshot(path: Path) -> dict[str, tuple[str, int]]:
    """Every file under `path` with its sha256 and mtime (SQLite's -wal/-shm companions left out)."""
    if path.is_file():
        return {path.name: (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns)}
    return {str(p.relative_to(path)): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
            for p in sorted(path.rglob("*")) if p.is_file() and not p.name.endswith(("-wal", "-shm"))}


def listing(path: Path) -> list[str]:
    """Every path under `path`; a read-only SQLite reader may leave the -wal/-shm files of a WAL database."""
    return sorted(str(p.relative_to(path)) for p in path.rglob("*") if not p.name.endswith(("-wal", "-shm")))


# ---- damaged recordings, every read command ----------------------------------------------------------

def _zero_bytes(base: Path, good: Path) -> Path:
    (base / "damaged").mkdir()
    (base / "damaged" / DB_NAME).write_bytes(b"")
    return base / "damaged"


def _garbage(base: Path, good: Path) -> Path:
    (good / DB_NAME).write_bytes(os.urandom(64 * 1024))
    return good


def _garbage_over_pages(base: Path, good: Path) -> Path:
    data = bytearray((good / DB_NAME).read_bytes())
    assert len(data) > 4 * 4096
    data[4096:] = os.urandom(len(data) - 4096)  # the header and the schema page survive; the rows do not
    (good / DB_NAME).write_bytes(bytes(data))
    return good


def _truncated(base: Path, good: Path) -> Path:
    data = (good / DB_NAME).read_bytes()
    (good / DB_NAME).write_bytes(data[: len(data) // 3])
    return good


def _foreign(base: Path, good: Path) -> Path:
    (base / "damaged").mkdir()
    con = sqlite3.connect(base / "damaged" / DB_NAME)
    con.execute("create table customers (id integer, name text)")
    con.commit()
    con.close()
    return base / "damaged"


def _meta_only(base: Path, good: Path) -> Path:
    (base / "damaged").mkdir()
    con = sqlite3.connect(base / "damaged" / DB_NAME)
    con.execute("create table weblica_meta (key text primary key, value text)")
    con.executemany("insert into weblica_meta values (?, ?)", [("app", "weblica-recording"), ("schema", "1")])
    con.commit()
    con.close()
    return base / "damaged"


def _no_database(base: Path, good: Path) -> Path:
    (base / "damaged").mkdir()
    return base / "damaged"


def _missing_dir(base: Path, good: Path) -> Path:
    return base / "no-such-recording"


def _a_file(base: Path, good: Path) -> Path:
    (base / "rec.txt").write_text("not a recording")
    return base / "rec.txt"


DAMAGED = {"0-byte sqlite": (_zero_bytes, "empty (0 bytes)"), "garbage file": (_garbage, "not a SQLite database"),
           "garbage over the rows": (_garbage_over_pages, "corrupt"), "truncated sqlite": (_truncated, "corrupt"),
           "foreign sqlite": (_foreign, "not a weblica recording"), "meta table only": (_meta_only, "lacks"),
           "no recording.sqlite": (_no_database, "no recording.sqlite"), "missing dir": (_missing_dir, "does not exist"),
           "a file, not a dir": (_a_file, "a file, not a recording")}
READ_COMMANDS = {"export har": ["export", "{rec}", "--format", "har", "--out", "{out}/x.har"],
                 "export warc": ["export", "{rec}", "--format", "warc", "--out", "{out}/x.warc"],
                 "rules infer": ["rules", "infer", "{rec}", "--out", "{out}/rules"],
                 "replay --check": ["replay", "{rec}", "--check"],
                 "replay --serve": ["replay", "{rec}", "--serve"]}


@pytest.mark.parametrize("damage", DAMAGED)
def test_a_damaged_recording_is_one_line_naming_the_file_for_every_read_command(damage, good, tmp_path):
    make, expected = DAMAGED[damage]
    rec = make(tmp_path, good)
    out = tmp_path / "out"
    out.mkdir()
    before = snapshot(rec) if rec.exists() else None
    for name, template in READ_COMMANDS.items():
        args = [a.format(rec=rec, out=out) for a in template]
        result = cli(*args, "--json")
        assert result.exit_code == 1, (name, result.output)
        lines = result.stdout.strip().splitlines()
        assert len(lines) == 1, (name, result.stdout)
        error = json.loads(lines[0])["error"]
        assert str(rec) in error and expected in error, (name, error)
        assert "Traceback" not in result.output
        plain = cli(*args)
        assert plain.exit_code != 0 and len(plain.stderr.strip().splitlines()) == 1, (name, plain.stderr)
        assert str(rec) in plain.stderr
        assert listing(out) == [], (name, listing(out))   # no half-written export, no rules from nothing
        if before is not None:
            assert snapshot(rec) == before, name      # read commands never write, not even a schema
    if damage == "0-byte sqlite":
        assert os.listdir(rec) == [DB_NAME]           # not even SQLite's -wal and -shm files


def test_garbage_in_the_sqlite_file_through_the_real_command_line(good):
    _garbage_over_pages(good.parent, good)
    done = subprocess.run([sys.executable, "-m", "weblica.cli", "replay", str(good), "--check"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and str(good / DB_NAME) in done.stderr, done.stderr


def test_read_commands_leave_a_good_recording_byte_identical(good, tmp_path):
    before = snapshot(good)
    for template in list(READ_COMMANDS.values())[:3]:
        result = cli(*[a.format(rec=good, out=tmp_path) for a in template], "--json")
        assert result.exit_code == 0, result.output
    assert snapshot(good) == before
    assert json.loads((tmp_path / "x.har").read_text())["log"]["entries"]


# ---- missing and corrupt bodies ------------------------------------------------------------------------

def _body_path(rec: Path, url: str) -> Path:
    with Store.open_dir(rec, readonly=True) as store:
        [ex] = [e for e in store.exchanges() if e.url == url]
        return store.bodies.path(ex.response_body_digest)


@pytest.mark.parametrize("damage", ["deleted", "overwritten"])
def test_a_damaged_body_is_reported_by_replay_check_not_fetched_upstream(damage, good):
    body = _body_path(good, "http://shop.test/style.css")
    if damage == "deleted":
        body.unlink()
    else:
        body.write_bytes(b"h1{color:#00c}")
    result = cli("replay", str(good), "--check", "--json")
    assert result.exit_code == 1, result.output
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert str(body) in summary["error"] and ("missing" if damage == "deleted" else "corrupt") in summary["error"]
    assert summary["store_errors"] and summary["outbound_connections"] == 0
    assert summary["tiers"]["miss"] >= 1 and summary["tiers"]["exact"] >= 1  # the page itself was answered
    plain = cli("replay", str(good), "--check")
    assert plain.exit_code == 1 and f"error: body {body}" in plain.stdout


def test_a_damaged_body_fails_export_with_its_path(good, tmp_path):
    body = _body_path(good, "http://shop.test/")
    body.unlink()
    for args in (["export", str(good), "--format", "har", "--out", str(tmp_path / "x.har")],
                 ["export", str(good), "--format", "warc", "--out", str(tmp_path / "x.warc")]):
        result = cli(*args, "--json")
        assert result.exit_code == 1 and str(body) in json.loads(result.stdout)["error"]
    assert not (tmp_path / "x.har").exists() and not (tmp_path / "x.warc").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rec"]  # no temporary export left either


def test_a_missing_request_body_stops_replay_and_inference_before_they_start(good, tmp_path):
    with Store.open_dir(good) as store:
        run = store.new_run("record", start_url="http://shop.test/")
        post = Exchange(method="POST", url="http://shop.test/search", status=303, run_id=run,
                        request_headers=[("Content-Type", "application/x-www-form-urlencoded")])
        store.add_exchange(post, b"q=lamp&page=1", b"")
        store.finish_run(run)
        body = store.bodies.path(post.request_body_digest)
    body.unlink()
    for args in (["replay", str(good), "--check"], ["rules", "infer", str(good), "--out", str(tmp_path / "rules")]):
        result = cli(*args, "--json")
        assert result.exit_code == 1 and str(body) in json.loads(result.stdout)["error"], result.output
    assert not (tmp_path / "rules").exists()


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", '{"start_url": 3, "actions": []}', '{"actions": {}}'])
def test_a_damaged_actions_file_is_one_line(text, good):
    (good / "actions.json").write_text(text)
    result = cli("replay", str(good), "--check", "--json")
    assert result.exit_code == 1 and str(good / "actions.json") in json.loads(result.stdout)["error"], result.output


def test_import_of_what_is_not_an_importable_file(good, tmp_path):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "x.txt").write_text("mine")
    (tmp_path / "a.har").write_text(json.dumps(_har(1)))
    for args, expected in ((["import", str(tmp_path / "nope.har")], "does not exist"),
                           (["import", str(tmp_path / "notes")], "not a file"),
                           (["import", str(tmp_path / "notes" / "x.txt")], "unknown format"),
                           (["import", str(tmp_path / "a.har"), "--out", str(tmp_path / "notes")], "not a recording")):
        before = listing(tmp_path)
        result = cli(*args, "--out", str(tmp_path / "new"), "--json") if "--out" not in args else cli(*args, "--json")
        assert result.exit_code == 1 and expected in json.loads(result.stdout)["error"], result.output
        assert listing(tmp_path) == before


def test_outputs_that_cannot_be_written_are_one_line(good, tmp_path):
    (tmp_path / "a-file").write_text("x")
    (tmp_path / "a-dir").mkdir()
    (tmp_path / "a.har").write_text(json.dumps(_har(1)))
    cases = [(["export", str(good), "--format", "har", "--out", str(tmp_path / "a-dir")], "cannot write the export"),
             (["export", str(good), "--format", "warc", "--out", str(tmp_path / "missing" / "x.warc")],
              "cannot write the export"),
             (["import", str(tmp_path / "a.har"), "--out", str(tmp_path / "a-file" / "rec")], "cannot create a recording"),
             (["import", str(tmp_path / "a.har"), "--out", str(tmp_path / "a-file")], "exists and is not a recording")]
    for args, expected in cases:
        before = listing(tmp_path)
        result = cli(*args, "--json")
        assert result.exit_code == 1 and expected in json.loads(result.stdout)["error"], result.output
        assert listing(tmp_path) == before


# ---- HAR imports -------------------------------------------------------------------------------------

def _har(n: int = 3) -> dict:
    entries = [{"startedDateTime": f"2026-01-01T00:00:0{i}Z", "time": 5,
                "request": {"method": "GET", "url": f"https://a.test/p{i}", "headers": [{"name": "Accept", "value": "*/*"}]},
                "response": {"status": 200, "statusText": "OK", "headers": [{"name": "Content-Type", "value": "text/plain"}],
                             "content": {"size": 2, "mimeType": "text/plain", "text": "aGk=", "encoding": "base64"}}}
               for i in range(n)]
    return {"log": {"version": "1.2", "entries": entries}}


def _set(har: dict, path: str, value) -> dict:
    *keys, last = [int(k) if k.isdigit() else k for k in re.split(r"[.\[\]]+", path) if k]
    target = har["log"]
    for key in keys:
        target = target[key]
    target[last] = value
    return har


BAD_HARS = {
    "status a word": ("entries[1].response.status", "abc", "entries[1].response.status: expected an integer"),
    "status a float": ("entries[2].response.status", 200.5, "entries[2].response.status: expected an integer"),
    "url a number": ("entries[0].request.url", 12, "entries[0].request.url: expected a string"),
    "url relative": ("entries[0].request.url", "/p0", "entries[0].request.url: expected an absolute"),
    "headers an object": ("entries[1].request.headers", {"Accept": "*/*"}, "entries[1].request.headers: expected a list"),
    "header value a list": ("entries[1].response.headers[0].value", ["a"], "entries[1].response.headers[0].value"),
    "bad base64": ("entries[2].response.content.text", "@@not base64@@", "entries[2].response.content.text: not valid base64"),
    "request missing": ("entries[1].request", None, "entries[1].request: missing"),
    "entry a string": ("entries[1]", "oops", "entries[1]: expected an object"),
    "method null": ("entries[0].request.method", None, "entries[0].request.method: missing"),
}


@pytest.mark.parametrize("case", BAD_HARS)
def test_a_har_of_the_wrong_shape_names_entry_and_field_and_leaves_nothing(case, tmp_path):
    path, value, expected = BAD_HARS[case]
    har = tmp_path / "bad.har"
    har.write_text(json.dumps(_set(_har(), path, value)))
    before = listing(tmp_path)
    result = cli("import", str(har), "--out", str(tmp_path / "recs" / "new"), "--json")
    assert result.exit_code == 1, result.output
    error = json.loads(result.stdout)["error"]
    assert expected in error and str(har) in error and "nothing was imported" in error
    assert listing(tmp_path) == before   # no recording, no recording.sqlite, no temporary directory


@pytest.mark.parametrize("text", ["not json", "[]", '{"log": {"entries": {}}}', '{"log": 3}'])
def test_a_file_that_is_not_a_har_at_all(text, tmp_path):
    (tmp_path / "x.har").write_text(text)
    result = cli("import", str(tmp_path / "x.har"), "--out", str(tmp_path / "new"), "--json")
    assert result.exit_code == 1 and "is not a HAR file" in json.loads(result.stdout)["error"]
    assert not (tmp_path / "new").exists()


def test_a_bad_har_into_an_existing_recording_adds_no_half_run(good, tmp_path):
    before = snapshot(good)
    har = tmp_path / "partial.har"
    har.write_text(json.dumps(_set(_har(5), "entries[3].response.content.text", "%%%")))
    result = cli("import", str(har), "--out", str(good), "--json")
    assert result.exit_code == 1 and "entries[3]" in json.loads(result.stdout)["error"]
    assert snapshot(good) == before
    skipped = cli("import", str(har), "--out", str(good), "--skip-bad", "--json")
    summary = json.loads(skipped.stdout)
    assert skipped.exit_code == 0 and summary["exchanges"] == 4
    assert [b["index"] for b in summary["bad_records"]] == [3] and "base64" in summary["bad_records"][0]["reason"]


def test_a_failure_while_writing_rolls_the_whole_import_back(good, tmp_path, monkeypatch):
    har = tmp_path / "ok.har"
    har.write_text(json.dumps(_har(3)))
    real_read_har = interop.read_har

    def read_har_then_a_broken_run(path, skip_bad=False):
        runs, bad = real_read_har(path, skip_bad)
        broken = Exchange(method="GET", url=None, status=200)  # NOT NULL url: fails inside the transaction
        return runs + [PendingRun("import", exchanges=[(broken, None, b"late body")])], bad

    monkeypatch.setattr(interop, "read_har", read_har_then_a_broken_run)
    with Store.open_dir(good, readonly=True) as store:
        runs_before, exchanges_before = len(store.runs()), store.count_exchanges()
    result = cli("import", str(har), "--out", str(good), "--json")
    assert result.exit_code == 1 and str(good / DB_NAME) in json.loads(result.stdout)["error"]
    with Store.open_dir(good, readonly=True) as store:
        assert (len(store.runs()), store.count_exchanges()) == (runs_before, exchanges_before)
    before = listing(tmp_path)
    result = cli("import", str(har), "--out", str(tmp_path / "fresh"), "--json")
    assert result.exit_code == 1 and listing(tmp_path) == before  # no recording and no temporary directory


def test_importing_the_same_file_twice_is_skipped_unless_again(tmp_path):
    har = tmp_path / "a.har"
    har.write_text(json.dumps(_har(3)))
    rec = tmp_path / "rec"
    first = json.loads(cli("import", str(har), "--out", str(rec), "--json").stdout)
    assert first == {"recording": str(rec), "runs": 1, "exchanges": 3}
    second = cli("import", str(har), "--out", str(rec), "--json")
    assert second.exit_code == 0 and json.loads(second.stdout)["skipped"] is True
    assert "--again" in json.loads(second.stdout)["reason"]
    assert "skipped" in cli("import", str(har), "--out", str(rec)).stdout
    again = json.loads(cli("import", str(har), "--out", str(rec), "--again", "--json").stdout)
    assert again["runs"] == 1 and again["exchanges"] == 3
    with Store.open_dir(rec, readonly=True) as store:
        runs = store.runs()
        assert len(runs) == 2 and runs[0].info["sha256"] == runs[1].info["sha256"] == interop.file_digest(har)
        assert store.count_exchanges() == 6


# ---- WARC imports ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def warc_bytes(tmp_path_factory):
    base = tmp_path_factory.mktemp("warc")
    rec = build_recording(base / "rec", extra=6)      # 8 exchanges: 16 WARC records
    export_warc(rec, base / "rec.warc", keep_secrets=True)
    export_warc(rec, base / "rec.warc.gz", keep_secrets=True)
    return (base / "rec.warc").read_bytes(), (base / "rec.warc.gz").read_bytes()


def _record_starts(data: bytes) -> list[int]:
    return [m.start() for m in re.finditer(rb"WARC/1\.[01]\r\n", data)]


def _content_length(data: bytes, record: int, delta: int) -> bytes:
    start = _record_starts(data)[record]
    m = re.compile(rb"\r\nContent-Length: (\d+)\r\n").search(data, start)
    return data[:m.start(1)] + str(int(m.group(1)) + delta).encode() + data[m.end(1):]


def _strip_digests(data: bytes) -> bytes:
    return re.sub(rb"WARC-(?:Payload|Block)-Digest: [^\r]*\r\n", b"", data)


def _flip_payload_byte(data: bytes) -> bytes:
    return data.replace(b"h1{color:#c00}", b"h1{color:#c0f}", 1)


BAD_WARCS = {  # name -> (make bytes, gzip?, expected words in the reason, exchanges --skip-bad keeps)
    "Content-Length 5 short": (lambda d: _content_length(d, 4, -5), False, "Content-Length", 7),
    # the next record's start is swallowed too: reading resumes at the one after it
    "Content-Length 5 long": (lambda d: _content_length(d, 4, 5), False, "Content-Length", 7),
    "Content-Length long, no digests": (lambda d: _content_length(_strip_digests(d), 4, 5), False, "Content-Length", 7),
    "truncated in a record": (lambda d: d[: _record_starts(d)[9] + 150], False, "truncated", 5),
    "truncated in a payload": (lambda d: d[: len(d) - 40], False, "truncated", 7),
    "garbage between records": (lambda d: d[: _record_starts(d)[6]] + os.urandom(300) + d[_record_starts(d)[7]:],
                                False, "cannot be read", 7),
    "payload byte changed": (_flip_payload_byte, False, "digest mismatch", 7),
    "gzip member cut": (lambda d: d[: len(d) - 30], True, "truncated", 7),
}


@pytest.mark.parametrize("case", BAD_WARCS)
def test_a_damaged_warc_fails_whole_unless_skip_bad_lists_what_it_skipped(case, warc_bytes, tmp_path):
    make, gz, reason, kept = BAD_WARCS[case]
    warc = tmp_path / ("bad.warc.gz" if gz else "bad.warc")
    warc.write_bytes(make(warc_bytes[1] if gz else warc_bytes[0]))
    before = listing(tmp_path)
    result = cli("import", str(warc), "--out", str(tmp_path / "new"), "--json")
    assert result.exit_code == 1, result.output
    error = json.loads(result.stdout)["error"]
    assert "bad WARC record" in error and reason in error and "nothing was imported" in error, error
    assert listing(tmp_path) == before
    skipped = cli("import", str(warc), "--out", str(tmp_path / "new"), "--skip-bad", "--json")
    assert skipped.exit_code == 0, skipped.output
    summary = json.loads(skipped.stdout)
    assert summary["exchanges"] == kept and summary["bad_records"]
    assert any(reason in b["reason"] for b in summary["bad_records"]), summary["bad_records"]
    human = cli("import", str(warc), "--out", str(tmp_path / "other"), "--skip-bad")
    assert "skipped record" in human.stdout


@pytest.mark.parametrize("content", [b"", b"garbage \x00\x01\x02" * 100, b"WARC/1.0\r\nWARC-Type: resp"])
def test_a_warc_with_nothing_good_imports_nothing(content, tmp_path):
    (tmp_path / "x.warc").write_bytes(content)
    for flags in ([], ["--skip-bad"]):
        result = cli("import", str(tmp_path / "x.warc"), "--out", str(tmp_path / "new"), "--json", *flags)
        assert result.exit_code == 1 and str(tmp_path / "x.warc") in json.loads(result.stdout)["error"]
        assert not (tmp_path / "new").exists()


def test_a_good_warc_round_trips(warc_bytes, tmp_path):
    for name, data in (("ok.warc", warc_bytes[0]), ("ok.warc.gz", warc_bytes[1])):
        (tmp_path / name).write_bytes(data)
        summary = json.loads(cli("import", str(tmp_path / name), "--out", str(tmp_path / f"r-{name}"),
                                 "--json").stdout)
        assert summary["exchanges"] == 8 and "bad_records" not in summary
