"""A one-connection server on 127.0.0.1 that pyserial opens as `socket://...`: the stand-in
for a board's UART in the recorder tests."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable


class LoopbackPort:
    """Accepts one connection (20 s at most) and hands it to `serve` on a thread, after the
    pause pyserial needs: its open() discards whatever has already arrived."""

    def __init__(self, serve: Callable[[socket.socket], None]) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.url = f"socket://127.0.0.1:{self.server.getsockname()[1]}"
        self.connected = threading.Event()
        self._serve = serve
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        self.server.settimeout(20)
        try:
            conn, _ = self.server.accept()
        except OSError:
            return
        self.connected.set()
        with conn:
            time.sleep(0.3)
            self._serve(conn)

    def close(self) -> None:
        self.server.close()
