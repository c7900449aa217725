"""A loopback WebSocket server that plays recorded sockets for the replay proxy.

A replayed WebSocket needs a server end: mitmproxy relays a socket between the browser and a server
connection, and when the browser closes the socket (or pings it) mitmproxy passes the close on to the
server side. Answered from the recording with no server connection at all, that close crashed the
connection handler ("mitmproxy has crashed!", a KeyError on the missing server). So the replayer sends
a recorded handshake here instead of upstream: `SocketPlayer` listens on 127.0.0.1 inside the proxy's
own event loop, accepts the handshake with the recorded subprotocol and headers, sends the recorded
server frames as `SocketScript` says (the opening ones at once, the replies to the browser's k-th frame
when it sends its k-th), answers pings, and closes when the browser closes. Nothing leaves the
machine: the only upstream connection a replay makes is to this player.
"""
from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass
from typing import Any

from wsproto import ConnectionType, WSConnection
from wsproto.events import (AcceptConnection, BytesMessage, CloseConnection, Message, Ping, RejectConnection,
                            Request, TextMessage)

from weblica.cache.websocket import SocketScript

PLAYER_HOST = "127.0.0.1"
# handshake headers the player's own handshake writes (or that describe the recorded connection)
_OWN_HEADERS = frozenset({"upgrade", "connection", "sec-websocket-accept", "sec-websocket-extensions",
                          "sec-websocket-protocol", "content-length", "transfer-encoding", "date"})


@dataclass
class Booking:
    """One replayed socket waiting for its handshake: what to play and the recorded handshake's headers."""

    script: SocketScript
    headers: list[tuple[str, str]]


class SocketPlayer:
    """Plays recorded sockets on a loopback port (see the module doc). Start it inside the proxy's loop."""

    def __init__(self) -> None:
        self.port = 0
        self._server: asyncio.AbstractServer | None = None
        self._bookings: dict[str, Booking] = {}
        self._numbers = itertools.count()
        self.closed = 0   # sockets the browser closed and the player answered

    async def start(self) -> None:
        if self._server is None:
            self._server = await asyncio.start_server(self._serve, PLAYER_HOST, 0)
            self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None

    def book(self, script: SocketScript, headers: list[tuple[str, str]]) -> str:
        """The path the replayed handshake is sent to; it plays `script` once."""
        path = f"/socket/{next(self._numbers)}"   # routes one handshake; the page never sees it
        self._bookings[path] = Booking(script, headers)
        return path

    def serves(self, address: Any) -> bool:
        return self._server is not None and tuple(address or ())[:2] == (PLAYER_HOST, self.port)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        ws = WSConnection(ConnectionType.SERVER)
        booking: Booking | None = None
        try:
            while True:
                data = await reader.read(65536)
                ws.receive_data(data or None)
                for event in ws.events():
                    if isinstance(event, Request):
                        booking = self._bookings.pop(event.target, None)
                        if booking is None:
                            writer.write(ws.send(RejectConnection(status_code=404)))
                            return
                        writer.write(ws.send(_accept(event, booking.headers)))
                        _play(ws, writer, booking.script.opening)
                    elif isinstance(event, Message) and event.message_finished and booking is not None:
                        _play(ws, writer, booking.script.on_client_message())
                    elif isinstance(event, Ping):
                        writer.write(ws.send(event.response()))
                    elif isinstance(event, CloseConnection):
                        writer.write(ws.send(event.response()))
                        self.closed += 1
                        return
                await writer.drain()
                if not data:
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            return   # the proxy went away with the browser: nothing left to play
        except Exception:   # a frame wsproto refuses: the socket ends, the proxy reports the close
            return
        finally:
            writer.close()


def _accept(request: Request, recorded: list[tuple[str, str]]) -> AcceptConnection:
    protocol = next((v for k, v in recorded if k.lower() == "sec-websocket-protocol"), None)
    if protocol not in request.subprotocols:
        protocol = None   # a subprotocol the browser did not offer would fail its handshake
    extra = [(k.encode("latin-1", "replace"), v.encode("latin-1", "replace")) for k, v in recorded
             if k.lower() not in _OWN_HEADERS]
    return AcceptConnection(subprotocol=protocol, extra_headers=extra)


def _play(ws: WSConnection, writer: asyncio.StreamWriter, messages: list[Any]) -> None:
    for message in messages:
        if message.is_text:
            writer.write(ws.send(TextMessage(data=message.content.decode("utf-8", "replace"))))
        else:
            writer.write(ws.send(BytesMessage(data=message.content)))
