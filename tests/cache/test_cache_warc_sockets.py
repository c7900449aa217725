"""Issue 41, point 5: WebSocket frames in WARC exports (as HAR exports already carry them), and a replayed
socket that closes without a mitmproxy crash. The live ticker (tests/cache_sites/feeds.py) is recorded by
real Chromium; replayed with the site gone, its socket is played by the loopback socket player, so the
browser's close (and ping) has a server end to reach: no "mitmproxy has crashed!" in the log (a KeyError
on the missing server connection before). The WARC export carries each socket's frames in a resource
record beside its 101 (one JSON line a frame), which imports back with direction, kind, content and order;
text frames are redacted unless asked to keep them."""
import asyncio
import gzip
import json
import logging
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parents[1]))

from cache_sites.feeds import FEEDS_ACTIONS, FeedsSite  # noqa: E402
from test_cache_har_sockets import FRAMES, JWT, _frames, _recording  # noqa: E402
from listener import Listener  # noqa: E402

from weblica.cache.backend import CacheBackend  # noqa: E402
from weblica.cache.interop import InteropError, export_warc, import_warc  # noqa: E402
from weblica.cache.play import make_env, play  # noqa: E402
from weblica.cache.store import Store  # noqa: E402
from weblica.cache.websocket import SOCKET_FRAMES_TYPE  # noqa: E402
from weblica.cli import get_cli  # noqa: E402
from weblica.env.task import TaskSource  # noqa: E402


class Errors(logging.Handler):
    def __init__(self):
        super().__init__(logging.ERROR)
        self.records = []

    def emit(self, record):
        self.records.append(f"{record.name}: {record.getMessage()}")


@pytest.fixture(scope="module")
def feeds(tmp_path_factory):
    base = tmp_path_factory.mktemp("feeds")
    (base / "actions.json").write_text(json.dumps(FEEDS_ACTIONS))
    with FeedsSite() as site:
        args = ["record", site.url("/"), "--actions", str(base / "actions.json"), "--runs", "1", "--out",
                str(base / "rec"), "--json"]
        for spec in site.resolve:
            args += ["--resolve", spec]
        result = CliRunner().invoke(get_cli(), args, catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return {"rec": base / "rec", "port": site.port, "url": site.url("/")}


def test_a_replayed_socket_closes_without_a_mitmproxy_crash(feeds):
    errors = Errors()
    for name in ("mitmproxy", "asyncio"):
        logging.getLogger(name).addHandler(errors)

    async def go():
        backend = CacheBackend([feeds["rec"]], [], log_misses=False)
        env = make_env({"cache": backend})
        source = TaskSource(kind="cache", recording=str(feeds["rec"]))
        try:
            result = await play(env, feeds["url"], FEEDS_ACTIONS, 5, source=source)   # ends the episode: closes
            deadline = time.monotonic() + 10
            while backend.replayer.player.closed < 1 and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            return result, backend.replayer.player.closed, backend.stats
        finally:
            await env.close()
            await backend.stop()

    listener = Listener(feeds["port"])
    try:
        result, closed, stats = asyncio.run(go())
    finally:
        listener.close()
        for name in ("mitmproxy", "asyncio"):
            logging.getLogger(name).removeHandler(errors)
    assert listener.accepted == 0 and stats.outbound_attempts == 0
    assert stats.tiers["miss"] == 0, stats.misses
    assert closed >= 1                      # the browser's close reached the player and was answered
    assert errors.records == [], errors.records
    assert result.error is None and result.screenshots


def test_socket_frames_round_trip_through_warc(tmp_path):
    _recording(tmp_path / "rec")
    for name in ("rec.warc", "rec.warc.gz"):
        export_warc(tmp_path / "rec", tmp_path / name, keep_secrets=True)
        import_warc(tmp_path / name, tmp_path / f"back-{name}")
        assert _frames(tmp_path / f"back-{name}") == FRAMES
        with Store.open_dir(tmp_path / f"back-{name}", readonly=True) as store:
            assert sum(len(v) for v in store.ws_messages().values()) == len(FRAMES)
    raw = (tmp_path / "rec.warc").read_bytes()
    assert b"WARC-Type: resource" in raw and SOCKET_FRAMES_TYPE.encode() in raw
    assert b"WARC-Target-URI: wss://www.feeds.test/ticker?room=1" in raw


def test_a_secret_in_a_warc_frame_is_redacted_by_default(tmp_path):
    _recording(tmp_path / "rec")
    export_warc(tmp_path / "rec", tmp_path / "rec.warc.gz")
    text = gzip.decompress((tmp_path / "rec.warc.gz").read_bytes()).decode("utf-8", "replace")
    assert JWT not in text and "subscribe ACME token=REDACTED" in text


def test_a_recorded_ticker_exports_its_frames_to_warc_and_back(feeds, tmp_path):
    export_warc(feeds["rec"], tmp_path / "feeds.warc", keep_secrets=True)
    import_warc(tmp_path / "feeds.warc", tmp_path / "back")
    with Store.open_dir(feeds["rec"], readonly=True) as a, Store.open_dir(tmp_path / "back", readonly=True) as b:
        before = [(m.from_client, m.content) for ms in a.ws_messages().values() for m in ms]
        after = [(m.from_client, m.content) for ms in b.ws_messages().values() for m in ms]
    assert before and after == before


def test_a_damaged_frames_record_imports_nothing(tmp_path):
    _recording(tmp_path / "rec")
    export_warc(tmp_path / "rec", tmp_path / "rec.warc", keep_secrets=True)
    raw = (tmp_path / "rec.warc").read_bytes()
    bad = raw.replace(b'"opcode":2', b'"opcode":9', 1)
    import re

    # keep the record's length right: only the frame is wrong
    (tmp_path / "bad.warc").write_bytes(re.sub(rb"WARC-(?:Block|Payload)-Digest: [^\r]*\r\n", b"", bad))
    with pytest.raises(InteropError, match=r"_webSocketMessages\[3\]"):
        import_warc(tmp_path / "bad.warc", tmp_path / "back")
    assert not (tmp_path / "back").exists()
