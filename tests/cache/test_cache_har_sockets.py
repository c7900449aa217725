"""WebSocket frames travel through HAR (issue 20, point 5's export gap): exported on the handshake's entry
as Chrome DevTools writes them (`_webSocketMessages`), imported back with direction, text or binary,
content and order; secrets in text frames redacted unless asked to keep them; a damaged frame list is a
one-line error that imports nothing."""
import json

import pytest

from weblica.cache.exchange import Exchange
from weblica.cache.interop import InteropError, export_har, import_har
from weblica.cache.store import Store, WsMessage

JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlc2lnbmF0dXJl"
FRAMES = [(False, True, b"hello 9cd231"), (True, True, f"subscribe ACME token={JWT}".encode()),
          (False, True, b"ACME 6847"), (False, False, bytes([0, 255, 7, 128])), (True, True, b"quote"),
          (False, True, b"quote 214")]


def _recording(path):
    with Store.open_dir(path, create=True) as store:
        run = store.new_run("record", start_url="https://www.feeds.test/")
        store.add_exchange(Exchange(method="GET", url="https://www.feeds.test/", request_headers=[], status=200,
                                    reason="OK", response_headers=[("Content-Type", "text/html")], started=1.0,
                                    ended=1.1, seq=0, run_id=run), None, b"<p>feeds</p>")
        hs = Exchange(method="GET", url="https://www.feeds.test/ticker?room=1",
                      request_headers=[("Upgrade", "websocket"), ("Sec-WebSocket-Version", "13")], status=101,
                      reason="Switching Protocols", response_headers=[("Upgrade", "websocket")], started=1.2,
                      ended=1.2, seq=1, run_id=run)
        store.add_exchange(hs, None, b"")
        for i, (from_client, is_text, content) in enumerate(FRAMES):
            store.add_ws_message(WsMessage(hs.id, i, from_client, is_text, content, 2.0 + i))
        store.finish_run(run)


def _frames(path):
    with Store.open_dir(path, readonly=True) as store:
        [handshake] = [e for e in store.exchanges() if e.status == 101]
        return [(m.from_client, m.is_text, m.content) for m in store.ws_messages()[handshake.id]]


def test_socket_frames_round_trip_through_har(tmp_path):
    _recording(tmp_path / "rec")
    export_har(tmp_path / "rec", tmp_path / "rec.har", keep_secrets=True)
    har = json.loads((tmp_path / "rec.har").read_text())
    [entry] = [e for e in har["log"]["entries"] if e["response"]["status"] == 101]
    assert entry["_resourceType"] == "websocket"
    assert [(m["type"], m["opcode"]) for m in entry["_webSocketMessages"]] == [
        ("receive", 1), ("send", 1), ("receive", 1), ("receive", 2), ("send", 1), ("receive", 1)]
    import_har(tmp_path / "rec.har", tmp_path / "back")
    assert _frames(tmp_path / "back") == FRAMES
    with Store.open_dir(tmp_path / "back", readonly=True) as store:   # the other entry has no frames
        assert sum(len(v) for v in store.ws_messages().values()) == len(FRAMES)


def test_a_secret_in_a_text_frame_is_redacted_by_default(tmp_path):
    _recording(tmp_path / "rec")
    export_har(tmp_path / "rec", tmp_path / "rec.har")
    text = (tmp_path / "rec.har").read_text()
    assert JWT not in text and "subscribe ACME token=REDACTED" in text


@pytest.mark.parametrize("bad", [{"type": "sent", "opcode": 1, "data": "x"}, {"type": "send", "opcode": 9, "data": "x"},
                                 {"type": "receive", "opcode": 2, "data": "not base64!"}])
def test_a_damaged_frame_list_imports_nothing(tmp_path, bad):
    _recording(tmp_path / "rec")
    export_har(tmp_path / "rec", tmp_path / "rec.har", keep_secrets=True)
    har = json.loads((tmp_path / "rec.har").read_text())
    entry = next(e for e in har["log"]["entries"] if e["response"]["status"] == 101)
    entry["_webSocketMessages"].append(bad)
    (tmp_path / "bad.har").write_text(json.dumps(har))
    with pytest.raises(InteropError, match=r"_webSocketMessages\[6\]"):
        import_har(tmp_path / "bad.har", tmp_path / "back")
    assert not (tmp_path / "back").exists()
