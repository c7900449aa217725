"""A stand-in for an origin server that is gone: it accepts and counts TCP connections, so a test can
assert replay made none."""
import socket
import threading


class Listener:
    """Accepts and counts TCP connections on a port (stands where the original server was)."""

    def __init__(self, port: int):
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", port))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.accepted = 0
        self._stop = False
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self):
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
                self.accepted += 1
                conn.close()
            except OSError:
                pass

    def close(self):
        self._stop = True
        self.thread.join(2)
        self.sock.close()
