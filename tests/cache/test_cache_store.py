"""The recording store: SQL rows, content-addressed bodies, concurrent writers, clear errors."""
import multiprocessing
import sqlite3

import pytest

from weblica.cache.exchange import Exchange
from weblica.cache.store import Store, StoreError


def _exchange(run_id: int, seq: int, url: str = "https://a.test/x") -> Exchange:
    return Exchange(method="GET", url=url, request_headers=[("Accept", "*/*")], status=200, reason="OK",
                    response_headers=[("Content-Type", "text/plain")], started=1.0 + seq, ended=1.5 + seq,
                    seq=seq, run_id=run_id)


def test_round_trip_and_content_addressed_bodies(tmp_path):
    store = Store.open_dir(tmp_path / "rec", create=True)
    run = store.new_run("record", seed=3, start_url="https://a.test/")
    store.add_exchange(_exchange(run, 0), None, b"same body")
    store.add_exchange(_exchange(run, 1, "https://a.test/y?q=1"), b"q=1", b"same body")
    store.finish_run(run, {"steps": 2})
    store.close()

    store = Store.open_dir(tmp_path / "rec")
    exchanges = store.exchanges()
    assert [e.url for e in exchanges] == ["https://a.test/x", "https://a.test/y?q=1"]
    assert exchanges[1].request_body == b"q=1"
    assert exchanges[0].response_body_digest == exchanges[1].response_body_digest  # stored once
    assert store.bodies.get(exchanges[0].response_body_digest) == b"same body"
    bodies = [p for p in (tmp_path / "rec" / "bodies").rglob("*") if p.is_file()]
    assert len(bodies) == 2  # "same body" and "q=1"
    [run_row] = store.runs()
    assert run_row.seed == 3 and run_row.info == {"steps": 2} and run_row.ended is not None


def _writer(path: str, worker: int, n: int) -> None:
    store = Store.open_dir(path)
    run = store.new_run("record", seed=worker)
    for i in range(n):
        store.add_exchange(_exchange(run, i, f"https://a.test/{worker}/{i}"), None, f"{worker}-{i}".encode())
    store.close()


def test_concurrent_writers_lose_nothing(tmp_path):
    path = tmp_path / "rec"
    Store.open_dir(path, create=True).close()
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(path), w, 60)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    store = Store.open_dir(path)
    assert store.count_exchanges() == 240
    assert len({e.url for e in store.exchanges(with_request_bodies=False)}) == 240
    assert len(store.runs()) == 4


def test_corrupt_file_gives_a_clear_error(tmp_path):
    rec = tmp_path / "rec"
    rec.mkdir()
    (rec / "recording.sqlite").write_bytes(b"this is not a database at all" * 10)
    with pytest.raises(StoreError, match="not a SQLite database"):
        Store.open_dir(rec)


def test_foreign_sqlite_file_gives_a_clear_error(tmp_path):
    rec = tmp_path / "rec"
    rec.mkdir()
    con = sqlite3.connect(rec / "recording.sqlite")
    con.execute("create table customers (id integer)")
    con.commit()
    con.close()
    before = (rec / "recording.sqlite").read_bytes()
    with pytest.raises(StoreError, match="not a weblica recording"):
        Store.open_dir(rec)
    with pytest.raises(StoreError, match="not a weblica recording"):
        Store.open_dir(rec, create=True)  # recording into it: refused before anything is written
    assert (rec / "recording.sqlite").read_bytes() == before


def test_missing_recording_names_the_fix(tmp_path):
    with pytest.raises(StoreError, match="weblica record"):
        Store.open_dir(tmp_path / "nothing")


def test_missing_body_names_the_fix(tmp_path):
    store = Store.open_dir(tmp_path / "rec", create=True)
    run = store.new_run()
    store.add_exchange(_exchange(run, 0), None, b"body")
    digest = store.exchanges()[0].response_body_digest
    store.bodies.path(digest).unlink()
    with pytest.raises(StoreError, match="bodies/"):
        store.bodies.get(digest)
