"""Issue 39, point 5: imports and rules with bounds. A compressed bomb in a WARC, a HAR or a recorded response
is refused at a size and ratio cap (the finding: a 1 MiB WARC imported as 1,024 MiB); rules' regexes run
under the time limit checks' patterns have; a killed import's building folder is removed by the next import
(and a live one's is not); a recording run cut by a kill is flagged by `rules infer` and left out."""
from __future__ import annotations

import base64
import gzip
import io
import json
import logging
import signal
import subprocess
import sys
import textwrap
import zlib
from pathlib import Path

import brotli
import pytest
import zstandard

from weblica.cache import decompress
from weblica.cache.decompress import BodyTooLarge, decoded_body, har_body
from weblica.cache.exchange import Exchange
from weblica.cache.import_folder import MARK, building_folder, remove_leftovers
from weblica.cache.rules import Rule, RuleBook, RuleSet
from weblica.cache.store import Store

MiB = 1 << 20
WEBLICA = [sys.executable, "-m", "weblica.cli"]
ROOT = Path(__file__).resolve().parents[2]


def gzip_of_zeros(size: int) -> bytes:
    encoder = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    chunk = b"\0" * MiB
    return b"".join([encoder.compress(chunk) for _ in range(size // MiB)] + [encoder.flush()])


@pytest.fixture(scope="module")
def bomb() -> bytes:
    """256 MiB of zeros in ~250 KiB of gzip (about 1000x, what a bomb looks like)."""
    return gzip_of_zeros(256 * MiB)


def run_measured(args: list[str], cwd: Path) -> tuple[subprocess.CompletedProcess, int]:
    """The CLI in a child that reports its own peak RSS (KiB) on its last stderr line. VmHWM, not getrusage's
    ru_maxrss: Linux carries ru_maxrss across exec, so a child of a large process (an xdist worker holding
    models) would report its parent's peak."""
    code = textwrap.dedent(f"""
        import re, sys
        from pathlib import Path
        from weblica.cli import main
        try:
            code = main({args!r})
        finally:
            hwm = re.search(r"VmHWM:\\s+(\\d+) kB", Path("/proc/self/status").read_text()).group(1)
            print("maxrss", hwm, file=sys.stderr)
        sys.exit(code)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=cwd)
    peak = int(proc.stderr.strip().splitlines()[-1].split()[1])
    return proc, peak


def one_json_error(proc: subprocess.CompletedProcess, *words: str) -> str:
    assert proc.returncode != 0, proc.stdout
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1, proc.stdout
    error = json.loads(lines[0])["error"]
    assert "\n" not in error and "Traceback" not in proc.stderr
    for word in words:
        assert word in error, error
    return error


def warc_with(payload: bytes, encoding: str) -> bytes:
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    out = io.BytesIO()
    writer = WARCWriter(out, gzip=False)
    headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html"), ("Content-Encoding", encoding),
                                          ("Content-Length", str(len(payload)))], protocol="HTTP/1.1")
    record = writer.create_warc_record("http://bomb.test/", "response", payload=io.BytesIO(payload),
                                       http_headers=headers)
    writer.write_record(record)
    return out.getvalue()


def test_a_gzip_bomb_in_a_warc_is_refused_with_one_line_and_bounded_memory(bomb, tmp_path):
    (tmp_path / "bomb.warc").write_bytes(warc_with(bomb, "gzip"))
    assert (tmp_path / "bomb.warc").stat().st_size < MiB
    proc, peak_kib = run_measured(["import", "bomb.warc", "--out", "rec", "--json"], tmp_path)
    one_json_error(proc, "decodes to more than", "WEBLICA_MAX_BODY_BYTES")
    assert not (tmp_path / "rec").exists()
    assert peak_kib < 200 * 1024  # the 256 MiB body was never held
    # the same page, gzip-encoded at a sane ratio, imports and decodes
    page = b"<!doctype html><p>" + b"".join(b"item %d " % i for i in range(20000)) + b"</p>"
    (tmp_path / "page.warc").write_bytes(warc_with(gzip.compress(page), "gzip"))
    ok = subprocess.run(WEBLICA + ["import", "page.warc", "--out", "rec", "--json"], capture_output=True, text=True,
                        cwd=tmp_path, timeout=120)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    with Store.open_dir(tmp_path / "rec", readonly=True) as store:
        ex = store.exchanges()[0]
        assert store.bodies.get(ex.response_body_digest) == page


def har_with(content: dict, headers: list[dict]) -> dict:
    return {"log": {"version": "1.2", "entries": [{
        "startedDateTime": "2024-01-01T00:00:00Z", "time": 1,
        "request": {"method": "GET", "url": "http://bomb.test/", "headers": []},
        "response": {"status": 200, "headers": headers, "content": content}}]}}


def test_a_har_that_keeps_a_bomb_encoded_is_refused_and_a_decoded_har_imports(bomb, tmp_path):
    encoded = har_with({"text": base64.b64encode(bomb).decode(), "encoding": "base64", "mimeType": "text/html"},
                       [{"name": "Content-Encoding", "value": "gzip"}])
    (tmp_path / "bomb.har").write_text(json.dumps(encoded))
    one_json_error(subprocess.run(WEBLICA + ["import", "bomb.har", "--out", "rec", "--json"], capture_output=True,
                                  text=True, cwd=tmp_path, timeout=120), "decodes to more than")
    # as browsers write HARs: decoded text beside the header the response had
    decoded = har_with({"text": "<p>hello</p>", "mimeType": "text/html"}, [{"name": "Content-Encoding", "value": "gzip"}])
    (tmp_path / "ok.har").write_text(json.dumps(decoded))
    ok = subprocess.run(WEBLICA + ["import", "ok.har", "--out", "rec", "--json"], capture_output=True, text=True,
                        cwd=tmp_path, timeout=120)
    assert ok.returncode == 0 and json.loads(ok.stdout)["exchanges"] == 1, ok.stdout + ok.stderr


@pytest.mark.parametrize("encoding, compress", [
    ("gzip", lambda d: gzip.compress(d, 9)),
    ("deflate", lambda d: zlib.compress(d, 9)),
    ("deflate", lambda d: zlib.compress(d, 9)[2:-4]),  # raw deflate, as servers send it too
    ("br", lambda d: brotli.compress(d, quality=5)),
    ("zstd", lambda d: zstandard.ZstdCompressor().compress(d)),
])
def test_every_encoding_decodes_within_the_caps_and_a_bomb_of_it_is_refused(encoding, compress, monkeypatch):
    page = json.dumps([{"id": i, "name": f"item {i}", "price": i * 1.5} for i in range(3000)]).encode()
    assert decoded_body(compress(page), encoding) == page
    monkeypatch.setattr(decompress, "MAX_BODY_BYTES", 16 * MiB)
    zeros = compress(b"\0" * (64 * MiB))
    with pytest.raises(BodyTooLarge, match="decodes to more than"):
        decoded_body(zeros, encoding, "the response")
    with pytest.raises(BodyTooLarge):
        decoded_body(compress(compress(b"\0" * (32 * MiB))) if encoding == "gzip" else zeros,
                     f"{encoding}, {encoding}" if encoding == "gzip" else encoding)


def test_the_ratio_cap_holds_below_the_size_cap_and_small_bodies_may_compress_well():
    assert decoded_body(gzip.compress(b" " * 512 * 1024), "gzip") == b" " * 512 * 1024  # 1000x, under 1 MiB
    with pytest.raises(BodyTooLarge, match="200x"):
        decoded_body(gzip_of_zeros(8 * MiB), "gzip")  # 8 MiB from ~8 KiB: far over 200x
    with pytest.raises(ValueError, match="cannot be decoded"):
        decoded_body(b"not gzip at all", "gzip")
    with pytest.raises(ValueError, match="unknown content encoding"):
        decoded_body(b"x", "compress")
    assert har_body(b"plain text", "gzip") == b"plain text"  # decoded already, as HAR keeps it


def test_the_recorder_keeps_a_bomb_encoded_instead_of_decoding_it(bomb, tmp_path):
    """weblica/cache/addons.py's Recorder decodes through decoded_body; past a cap it keeps the encoded
    bytes and their header, as for an encoding it cannot decode (the browser decodes it on replay)."""
    from mitmproxy.test import tflow

    from weblica.cache.addons import Recorder

    page = b"<p>" + b"hello " * 5000 + b"</p>"
    with Store.open_dir(tmp_path / "rec", create=True) as store:
        recorder = Recorder(store, store.new_run("record"))
        for body in (bomb, gzip.compress(page)):
            flow = tflow.tflow(resp=True)
            flow.response.headers["content-encoding"] = "gzip"
            flow.response.raw_content = body
            recorder.response(flow)
        (bombed, kept_bomb), (decoded, kept_page) = [(ex, store.bodies.get(ex.response_body_digest))
                                                     for ex in store.exchanges()]
    assert kept_bomb == bomb and ("content-encoding", "gzip") in [(k.lower(), v) for k, v in bombed.response_headers]
    assert kept_page == page and "content-encoding" not in [k.lower() for k, _ in decoded.response_headers]


# ---- rules ---------------------------------------------------------------------------------------------

def test_rule_regexes_run_under_the_check_time_limit(caplog):
    hostile = RuleSet("a.test", [Rule(kind="path", pattern=r"(a+)+$", replace="X"),
                                 Rule(kind="ignore", field=r"re:query:(a+)+$"),
                                 Rule(kind="path", pattern=r"/cart/[0-9a-f]{8,}", replace="/cart/{id}")])
    book = RuleBook([hostile])
    path = "/" + "a" * 4000 + "b"
    with caplog.at_level(logging.WARNING, logger="weblica.cache.rules"):
        assert book.path_template("GET", "a.test", path) == path  # the hostile rule is skipped, not run for ever
        assert book.ignored("GET", "a.test", "/", ["query:" + "a" * 4000 + "b"]) == set()
    assert "skipped" in caplog.text and "(a+)+$" in caplog.text
    # rules that behave still apply
    assert book.path_template("GET", "a.test", "/cart/9f3a0c1d2e/items") == "/cart/{id}/items"
    assert book.ignored("GET", "a.test", "/", ["query:aaa", "query:b"]) == {"query:aaa"}


# ---- leftovers of killed imports ---------------------------------------------------------------------------

def _killed_mid_import(out: Path) -> None:
    """A real import process killed (SIGKILL) while it builds `out`: its building folder is left behind."""
    code = textwrap.dedent(f"""
        import os, signal
        from pathlib import Path
        from weblica.cache.import_folder import building_folder
        with building_folder(Path({str(out)!r})) as folder:
            (folder / "recording.sqlite").write_bytes(b"half" * 1000)
            os.kill(os.getpid(), signal.SIGKILL)
    """)
    proc = subprocess.run([sys.executable, "-c", code], timeout=60)
    assert proc.returncode == -signal.SIGKILL


def test_a_killed_import_s_folder_goes_at_the_next_import_and_a_live_one_s_stays(tmp_path):
    _killed_mid_import(tmp_path / "newrec")
    leftovers = [p for p in tmp_path.iterdir() if MARK in p.name and p.is_dir()]
    assert len(leftovers) == 1 and (leftovers[0] / "recording.sqlite").exists()
    # an import running at the same time (another process holds its folder's lock)
    live = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        from weblica.cache.import_folder import building_folder
        with building_folder(Path({str(tmp_path / "busy")!r})) as folder:
            print(folder, flush=True)
            sys.stdin.readline()
    """)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        live_folder = Path(live.stdout.readline().strip())
        har = har_with({"text": "<p>hi</p>", "mimeType": "text/html"}, [])
        (tmp_path / "x.har").write_text(json.dumps(har))
        proc = subprocess.run(WEBLICA + ["import", str(tmp_path / "x.har"), "--out", str(tmp_path / "other"), "--json"],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert not leftovers[0].exists() and not Path(str(leftovers[0]) + ".lock").exists()
        assert live_folder.is_dir()
    finally:
        live.communicate("\n", timeout=60)
    assert not live_folder.exists()
    assert remove_leftovers(tmp_path) == []


def test_building_folder_is_removed_when_the_block_fails(tmp_path):
    with pytest.raises(RuntimeError):
        with building_folder(tmp_path / "rec") as folder:
            (folder / "x").write_text("x")
            raise RuntimeError("failed import")
    assert [p.name for p in tmp_path.iterdir()] == []


# ---- cut recording runs ------------------------------------------------------------------------------------

NOW = 1796168612.5


def _add(store: Store, run: int, seq: int, url: str, response: str) -> None:
    ex = Exchange(method="GET", url=url, status=200, run_id=run, seq=seq, started=NOW, ended=NOW,
                  response_headers=[("Content-Type", "application/json")])
    store.add_exchange(ex, None, response.encode())


def _recording(path: Path, cut: bool) -> None:
    """Two finished runs where `v` is a cache-buster (same answer, fresh values); with `cut`, a third run
    killed mid-browse whose one request, with a value seen before, got another answer."""
    with Store.open_dir(path, create=True) as store:
        for k, v in enumerate(("83acd2f1e9", "5f20b7c4aa")):
            run = store.new_run("record", seed=k, in_progress=True)
            _add(store, run, 0, f"https://api.a.test/items?v={v}&page=1", '{"items": [1, 2, 3]}')
            store.finish_run(run, {"name": "rec"})
    if cut:
        code = textwrap.dedent(f"""
            import os, signal
            from pathlib import Path
            from weblica.cache.exchange import Exchange
            from weblica.cache.store import Store
            store = Store.open_dir(Path({str(path)!r}))
            run = store.new_run("record", seed=2, in_progress=True)
            store.add_exchange(Exchange(method="GET", url="https://api.a.test/items?v=83acd2f1e9&page=1", status=200,
                                        run_id=run, seq=0, started={NOW}, ended={NOW},
                                        response_headers=[("Content-Type", "application/json")]),
                               None, b'{{"items": [7]}}')
            os.kill(os.getpid(), signal.SIGKILL)  # as a kill mid-recording leaves it: no end, still marked
        """)
        assert subprocess.run([sys.executable, "-c", code], timeout=60).returncode == -signal.SIGKILL


def _infer(path: Path, out: Path) -> tuple[dict, str]:
    proc = subprocess.run(WEBLICA + ["rules", "infer", str(path), "--out", str(out), "--json"], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    files = sorted(out.glob("*.yaml"))
    return json.loads(proc.stdout), "".join(f.read_text() for f in files)


def test_a_run_cut_by_a_kill_is_flagged_and_left_out_of_inference(tmp_path):
    _recording(tmp_path / "clean", cut=False)
    _recording(tmp_path / "with-cut", cut=True)
    clean_summary, clean_rules = _infer(tmp_path / "clean", tmp_path / "rules-clean")
    cut_summary, cut_rules = _infer(tmp_path / "with-cut", tmp_path / "rules-cut")
    assert "cut_runs" not in clean_summary
    assert cut_summary["cut_runs"] == [3] and "cut before their end" in cut_summary["warning"]
    assert cut_summary["runs"] == clean_summary["runs"] == 2
    assert cut_rules == clean_rules and "query:v" in clean_rules
    # had the cut run counted, its other answer for a value seen before would have changed the rules
    with Store.open_dir(tmp_path / "with-cut") as store:
        store.finish_run(3, {"name": "rec"})
    _, counted_rules = _infer(tmp_path / "with-cut", tmp_path / "rules-counted")
    assert counted_rules != clean_rules
