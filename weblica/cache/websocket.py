"""WebSockets and server-sent events: what recording and replaying them needs beside plain exchanges.

A WebSocket is recorded as its handshake (an exchange with status 101, matched on replay like any
GET) and its messages (table `ws_messages`: direction, text or binary, content, order). On replay
the matched handshake goes to the loopback socket player (`socket_player.py`), which accepts it with
the recorded headers and plays the socket back by `SocketScript`: the server messages recorded before
the browser's first message are sent at once, and those recorded after the browser's k-th message are
sent when the browser sends its k-th message. What the browser sends reaches no site (the player is
the only server), so a ticker or a chat replays the same in every episode.

A server-sent event stream (`text/event-stream`) is streamed through the recorder (never buffered
until the stream ends, which it may never do) and its chunks kept as the exchange's body when the
stream ends or the browser goes away. On replay it is answered whole; a reconnect of the same
episode (the stream ended, EventSource retries) gets 204, which tells EventSource to stop, so the
recorded events are shown once, as live.

In a WARC export a socket's frames are a `resource` record beside its 101 response (as the IIPC
proposal for WebSockets in WARC, iipc/warc-specifications#115, and Browsertrix do): its target the
socket's ws(s):// URL, `WARC-Concurrent-To` the handshake's response record, Content-Type
`SOCKET_FRAMES_TYPE`, one JSON line a frame with the fields HAR's `_webSocketMessages` has (type
send|receive, time, opcode 1 text | 2 binary, data; binary data base64). Import reads them back.
"""
from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass, field
from io import BytesIO
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from weblica.cache.store import WsMessage

SOCKET_FRAMES_TYPE = "application/x-websocket-frames+jsonl"

_WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"   # RFC 6455, section 1.3
EVENT_STREAM = "text/event-stream"


def accept_key(client_key: str) -> str:
    """The `Sec-WebSocket-Accept` value a server answers `Sec-WebSocket-Key: client_key` with."""
    return base64.b64encode(hashlib.sha1((client_key.strip() + _WS_GUID).encode()).digest()).decode()


@dataclass
class SocketScript:
    """One replayed socket: the recorded server messages, grouped by the browser message they followed."""

    opening: list[WsMessage] = field(default_factory=list)          # before the browser sent anything
    replies: list[list[WsMessage]] = field(default_factory=list)    # after the browser's k-th message
    client_sent: int = 0

    @classmethod
    def from_messages(cls, messages: list[WsMessage]) -> "SocketScript":
        script = cls()
        for message in sorted(messages, key=lambda m: m.seq):
            if message.from_client:
                script.replies.append([])
            elif script.replies:
                script.replies[-1].append(message)
            else:
                script.opening.append(message)
        return script

    def on_client_message(self) -> list[WsMessage]:
        """The server messages to send now that the browser sent one more message (none past the
        recording's end: a browser that says more than it did live gets no invented answers)."""
        k = self.client_sent
        self.client_sent += 1
        return self.replies[k] if k < len(self.replies) else []


def is_event_stream(content_type: str) -> bool:
    return content_type.split(";")[0].strip().lower() == EVENT_STREAM


def socket_url(handshake_url: str) -> str:
    """The ws(s):// URL a handshake's http(s) URL opened."""
    parts = urlsplit(handshake_url)
    return urlunsplit(({"https": "wss", "http": "ws"}.get(parts.scheme, parts.scheme),) + tuple(parts[1:]))


def frames_record(writer: Any, handshake_url: str, response_record: Any, frames: list[dict[str, Any]]) -> Any:
    """The WARC resource record of a socket's frames (HAR `_webSocketMessages` dicts), beside its 101."""
    body = "".join(json.dumps(f, ensure_ascii=False, separators=(",", ":")) + "\n" for f in frames).encode()
    headers = {"WARC-Concurrent-To": response_record.rec_headers.get_header("WARC-Record-ID"),
               "WARC-Date": response_record.rec_headers.get_header("WARC-Date")}
    return writer.create_warc_record(socket_url(handshake_url), "resource", payload=BytesIO(body),
                                     warc_content_type=SOCKET_FRAMES_TYPE, warc_headers_dict=headers)


def frames_of(record: Any) -> list[Any] | None:
    """The frame dicts a WARC resource record of `SOCKET_FRAMES_TYPE` holds (None for another record);
    raises ValueError for a line that is no JSON object."""
    if record.kind != "resource" or record.content_type.split(";")[0].strip().lower() != SOCKET_FRAMES_TYPE:
        return None
    frames = []
    for n, line in enumerate(record.body.decode("utf-8", "replace").splitlines()):
        if line.strip():
            try:
                frames.append(json.loads(line))
            except ValueError as exc:
                raise ValueError(f"frame line {n + 1} is not JSON ({exc})") from None
    return frames
