"""WebSockets and server-sent events through the real recorder and replayer: a live ticker and an event
feed (aiohttp) recorded twice with real Chromium and mitmproxy, replayed with the network cut. The
replay shows the recorded frames in their recorded order (every value is random live), an unrecorded
handshake is a miss and no other socket's frames, and an old recording without the table still reads."""
import asyncio
import hashlib
import json
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parents[1]))

from cache_sites.feeds import FEEDS_ACTIONS, FeedsSite  # noqa: E402
from cache_sites.loader import replay_rounds  # noqa: E402
from listener import Listener  # noqa: E402

from weblica.cache.backend import CacheBackend  # noqa: E402
from weblica.cache.play import make_env  # noqa: E402
from weblica.cache.store import DB_NAME, Store  # noqa: E402
from weblica.cache.websocket import SocketScript, accept_key  # noqa: E402
from weblica.env.task import Task, TaskSource  # noqa: E402
from weblica.cli import get_cli  # noqa: E402


def invoke(*args: str) -> dict:
    result = CliRunner().invoke(get_cli(), [*args, "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.output.strip().splitlines()[-1])


def test_accept_key_is_rfc6455s_example():
    assert accept_key("dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="


@pytest.fixture(scope="module")
def feeds(tmp_path_factory):
    base = tmp_path_factory.mktemp("feeds")
    actions, rec = base / "actions.json", base / "rec"
    actions.write_text(json.dumps(FEEDS_ACTIONS))
    with FeedsSite() as site:
        args = ["record", site.url("/"), "--actions", str(actions), "--runs", "2", "--out", str(rec)]
        for spec in site.resolve:
            args += ["--resolve", spec]
        summary = invoke(*args)
        port, url = site.port, site.url
    return {"rec": rec, "port": port, "url": url, "summary": summary, "base": base}


def _recorded(rec):
    with Store.open_dir(rec, readonly=True) as store:
        run = store.runs()[0].id
        exchanges = store.exchanges([run])
        handshake = next(e for e in exchanges if e.status == 101)
        feed = next(e for e in exchanges if e.url.endswith("/feed"))
        return store.ws_messages([handshake.id])[handshake.id], store.bodies.get(feed.response_body_digest)


def test_frames_are_recorded_with_direction_and_order_and_the_feed_is_streamed(feeds):
    assert not feeds["summary"]["errors"]
    messages, feed = _recorded(feeds["rec"])
    shape = [(m.from_client, m.content.split()[0]) for m in messages]
    assert shape == [(False, b"hello"), (True, b"subscribe"), (False, b"ACME"), (False, b"ACME"), (False, b"ACME"),
                     (True, b"quote"), (False, b"quote")]
    assert all(m.is_text for m in messages)
    # the feed never ended live (it stays open 20 s): it was kept as it streamed, all three events
    assert feed.count(b"data: news ") == 3


def _titles(rec, url, paths):
    async def go():
        backend = CacheBackend([rec], [], log_misses=False)
        env = make_env({"cache": backend})
        out = []
        try:
            for path in paths:
                task = Task(id="feeds", start_url=url(path), instruction="", source=TaskSource(kind="cache",
                                                                                          recording=str(rec)))
                obs = await env.reset(task, seed=5)
                out.append(obs.tabs[obs.active_tab].title)
        finally:
            await env.close()
            await backend.stop()
        return out, backend.stats
    return asyncio.run(go())


def test_replay_with_the_network_cut_shows_the_recorded_frames_every_time(feeds):
    messages, _ = _recorded(feeds["rec"])
    listener = Listener(feeds["port"])
    try:
        report = invoke("replay", str(feeds["rec"]), "--check", "--seed", "5")
        rounds = asyncio.run(replay_rounds(feeds["rec"], 3))
        (title, unrecorded), stats = _titles(feeds["rec"], feeds["url"], ["/", "/#2"])
    finally:
        listener.close()
    assert listener.accepted == 0 and report["outbound_connections"] == 0
    assert report["tiers"]["miss"] == 0, report["misses"]
    assert report["screens_identical"] == f"{len(FEEDS_ACTIONS) + 1}/{len(FEEDS_ACTIONS) + 1}"
    assert all(shots == rounds[0][1] for _asked, shots in rounds)
    # the opening frames, then the ticks the subscription was answered with, as recorded
    assert title == "|".join(m.content.decode() for m in messages[:5] if not m.from_client)
    # another room's socket was never recorded: a miss, and none of room 1's frames
    assert unrecorded in ("", "socket error"), unrecorded   # the error may land after the screenshot
    assert [m["url"] for m in stats.misses] == [feeds["url"]("/ticker?room=2")]


def test_a_browser_saying_more_than_it_did_live_gets_no_invented_answers():
    from weblica.cache.store import WsMessage
    script = SocketScript.from_messages([WsMessage(1, 0, False, True, b"hi", 0), WsMessage(1, 1, True, True, b"q", 0),
                                         WsMessage(1, 2, False, True, b"a", 0)])
    assert [m.content for m in script.opening] == [b"hi"]
    assert [m.content for m in script.on_client_message()] == [b"a"]
    assert script.on_client_message() == []


def test_a_recording_without_the_table_reads_and_is_migrated_only_when_written(feeds, tmp_path):
    old = tmp_path / "old"
    shutil.copytree(feeds["rec"], old)
    with sqlite3.connect(old / DB_NAME) as conn:
        conn.execute("DROP TABLE ws_messages")
    conn.close()
    digest = hashlib.sha256((old / DB_NAME).read_bytes()).hexdigest()
    with Store.open_dir(old, readonly=True) as store:
        assert store.ws_messages() == {} and store.count_exchanges() > 0
    assert hashlib.sha256((old / DB_NAME).read_bytes()).hexdigest() == digest   # nothing written
    invoke("export", str(old), "--format", "har", "--out", str(tmp_path / "old.har"))   # a read command
    assert hashlib.sha256((old / DB_NAME).read_bytes()).hexdigest() == digest
    with Store.open_dir(old) as store:   # opened to write: the table is added
        assert store.ws_messages() == {}
    with sqlite3.connect(old / DB_NAME) as conn:
        assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name='ws_messages'").fetchone()[0] == 1
    conn.close()


def test_an_event_stream_is_shown_once_a_reconnect_is_told_to_stop(feeds):
    import urllib.request

    async def fetch_twice():
        backend = CacheBackend([feeds["rec"]], [], log_misses=False)
        await backend.start()
        try:
            opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": backend.proxy.url}))

            def get():
                with opener.open(feeds["url"]("/feed"), timeout=10) as resp:
                    return resp.status, resp.read()
            return [await asyncio.to_thread(get) for _ in range(2)]
        finally:
            await backend.stop()

    listener = Listener(feeds["port"])
    try:
        (first, body), (again, rest) = asyncio.run(fetch_twice())
    finally:
        listener.close()
    assert listener.accepted == 0
    assert first == 200 and body == _recorded(feeds["rec"])[1]
    assert again == 204 and rest == b""   # EventSource stops instead of showing the events twice
