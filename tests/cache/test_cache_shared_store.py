"""A shared recording store (issue 20, point 6): many recordings in one database (a SQLite file, or a real
PostgreSQL server on loopback), bodies in one directory, each recording a directory with a store.json
pointer. A recording never sees another's rows; concurrent creators of the schema lose nothing; an old
single-recording file still opens and is migrated when written."""
import multiprocessing
import sqlite3
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1]))

from postgres_server import postgres_server  # noqa: E402

from weblica.cache.exchange import Exchange  # noqa: E402
from weblica.cache.store import SharedStore, Store, StoreError, WsMessage, write_store_pointer  # noqa: E402
from weblica.env.source_roots import SourceRoots  # noqa: E402
from weblica.env.task import Task, TaskSource  # noqa: E402


def _exchange(run_id: int, seq: int, url: str) -> Exchange:
    return Exchange(method="GET", url=url, request_headers=[("Accept", "*/*")], status=200, reason="OK",
                    response_headers=[("Content-Type", "text/plain")], started=1.0 + seq, ended=1.5 + seq,
                    seq=seq, run_id=run_id)


@pytest.fixture(scope="module")
def pg_url():
    with postgres_server() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'shared.sqlite'}"
    url = request.getfixturevalue("pg_url")
    # a database of its own per test: the module's server is shared
    import sqlalchemy

    name = f"t{abs(hash(request.node.name)) % 10**9}"
    engine = sqlalchemy.create_engine(url, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.exec_driver_sql(f"DROP DATABASE IF EXISTS {name}")
        conn.exec_driver_sql(f"CREATE DATABASE {name}")
    engine.dispose()
    return url.rsplit("/", 1)[0] + "/" + name


def _fill(store: Store, tag: str) -> int:
    run = store.new_run("record", start_url=f"https://{tag}.test/")
    ex = _exchange(run, 0, f"https://{tag}.test/x")
    store.add_exchange(ex, None, f"body of {tag}".encode())
    store.add_ws_message(WsMessage(ex.id, 0, False, True, tag.encode(), 1.0))
    store.add_miss(run, "GET", f"https://{tag}.test/missing", [], None, ex.id, {})
    store.finish_run(run)
    return run


def test_two_recordings_in_one_database_never_see_each_others_rows(db_url, tmp_path):
    bodies = tmp_path / "bodies"
    for tag in ("alpha", "beta"):
        write_store_pointer(tmp_path / tag, SharedStore(db_url, str(bodies), f"build/{tag}"))
        with Store.open_dir(tmp_path / tag, create=True) as store:
            _fill(store, tag)
            _fill(store, tag)
    for tag, other in (("alpha", "beta"), ("beta", "alpha")):
        with Store.open_dir(tmp_path / tag, readonly=True) as store:
            assert len(store.runs()) == 2 and store.count_exchanges() == 2
            urls = {e.url for e in store.exchanges()}
            assert urls == {f"https://{tag}.test/x"}, urls
            assert {m.url for m in store.misses()} == {f"https://{tag}.test/missing"}
            assert {m.content for msgs in store.ws_messages().values() for m in msgs} == {tag.encode()}
            assert store.bodies.get(store.exchanges()[0].response_body_digest) == f"body of {tag}".encode()
            assert not any(other in e.url for e in store.exchanges())
    assert not (tmp_path / "alpha" / "recording.sqlite").exists()   # the rows are in the shared database
    # rebuilding one recording clears its rows only
    with Store.open_dir(tmp_path / "alpha") as store:
        store.clear()
        assert store.runs() == [] and store.count_exchanges() == 0 and store.ws_messages() == {}
    with Store.open_dir(tmp_path / "beta", readonly=True) as store:
        assert len(store.runs()) == 2 and store.count_exchanges() == 2 and len(store.misses()) == 2


def test_a_read_only_open_of_a_shared_store_cannot_write(db_url, tmp_path):
    write_store_pointer(tmp_path / "rec", SharedStore(db_url, str(tmp_path / "bodies"), "r"))
    with Store.open_dir(tmp_path / "rec", create=True) as store:
        _fill(store, "a")
    with Store.open_dir(tmp_path / "rec", readonly=True) as store:
        with pytest.raises(StoreError, match="read-only|readonly"):
            store.new_run("replay")
        assert len(store.runs(("record", "replay"))) == 1


def _create_and_write(url: str, bodies: str, worker: int) -> None:
    store = Store(url, bodies, create=True, recording=f"w{worker}")
    for _ in range(3):
        run = store.new_run("record")
        for i in range(10):
            store.add_exchange(_exchange(run, i, f"https://w{worker}.test/{i}"), None, f"{worker}-{i}".encode())
    store.close()


def test_concurrent_workers_creating_the_schema_lose_nothing(db_url, tmp_path):
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_create_and_write, args=(db_url, str(tmp_path / "bodies"), w)) for w in range(6)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    for w in range(6):
        with Store(db_url, tmp_path / "bodies", readonly=True, recording=f"w{w}") as store:
            assert store.count_exchanges() == 30 and len(store.runs()) == 3
            assert {e.url for e in store.exchanges()} == {f"https://w{w}.test/{i}" for i in range(10)}


def test_an_old_single_recording_file_opens_and_is_migrated_when_written(tmp_path):
    rec = tmp_path / "rec"
    with Store.open_dir(rec, create=True) as store:
        _fill(store, "old")
    con = sqlite3.connect(rec / "recording.sqlite")   # as written before runs.recording existed
    index = con.execute("SELECT name FROM sqlite_master WHERE type='index' AND sql LIKE '%recording%'").fetchone()
    con.execute(f"DROP INDEX {index[0]}")
    con.execute("ALTER TABLE runs DROP COLUMN recording")
    con.commit()
    con.close()
    with Store.open_dir(rec, readonly=True) as store:
        assert len(store.runs()) == 1 and store.count_exchanges() == 1
    columns = lambda: {r[1] for r in sqlite3.connect(rec / "recording.sqlite").execute("PRAGMA table_info(runs)")}  # noqa: E731
    with pytest.raises(StoreError, match="one unnamed recording"):   # not a shared store: refused, unchanged
        Store(f"sqlite:///{rec / 'recording.sqlite'}", rec / "bodies", recording="named").close()
    assert "recording" not in columns()            # a read-only open changed nothing
    with Store.open_dir(rec) as store:
        _fill(store, "new")
        assert len(store.runs()) == 2 and store.count_exchanges() == 2
    assert "recording" in columns()


def test_a_damaged_pointer_is_one_line_naming_the_file(tmp_path):
    rec = tmp_path / "rec"
    rec.mkdir()
    (rec / "store.json").write_text('{"url": "sqlite:///x"}')
    with pytest.raises(StoreError, match=r"store\.json cannot be read"):
        Store.open_dir(rec)
    (rec / "store.json").write_text('{"url": "", "bodies": "/b", "recording": "r"}')
    with pytest.raises(StoreError, match="names no database"):
        Store.open_dir(rec)


def test_the_env_server_serves_a_recording_kept_in_a_shared_store(tmp_path):
    root = tmp_path / "recordings"
    write_store_pointer(root / "rec", SharedStore(f"sqlite:///{tmp_path / 's.sqlite'}", str(tmp_path / "b"), "r"))
    task = Task(id="t", start_url="https://a.test/", instruction="x", source=TaskSource(kind="cache", recording="rec"))
    confined = SourceRoots(recordings=[root]).confine(task)
    assert confined.source.recording == str((root / "rec").resolve())
