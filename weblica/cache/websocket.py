"""WebSockets and server-sent events: what recording and replaying them needs beside plain exchanges.

A WebSocket is recorded as its handshake (an exchange with status 101, matched on replay like any
GET) and its messages (table `ws_messages`: direction, text or binary, content, order). On replay
the handshake is answered from the recording (its `Sec-WebSocket-Accept` recomputed for the browser's
new key) and the socket is played back by `SocketScript`: the server messages recorded before the
browser's first message are sent at once, and those recorded after the browser's k-th message are
sent when the browser sends its k-th message. What the browser sends is never forwarded (there is no
server), so a ticker or a chat replays the same in every episode.

A server-sent event stream (`text/event-stream`) is streamed through the recorder (never buffered
until the stream ends, which it may never do) and its chunks kept as the exchange's body when the
stream ends or the browser goes away. On replay it is answered whole; a reconnect of the same
episode (the stream ended, EventSource retries) gets 204, which tells EventSource to stop, so the
recorded events are shown once, as live.
"""
from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass, field

from weblica.cache.store import WsMessage

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
