"""An in-memory connected pair of transports: `Client(server)` in one process, and our own tests.

Messages really are encoded to JSON text and decoded on the other side, so whatever works here works on
the wire (a tuple arrives as a list; a value JSON cannot carry fails at `send`, as it would over stdio).
Each direction has a queue and one reader thread, the same shape as a pipe.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import queue
import threading

from ..errors import ConnectionClosed
from ..protocol.jsonrpc import encode_bytes
from . import MessageSink, Transport, deliver_bytes

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see __init__)
if TYPE_CHECKING:
    from typing import Any, Optional, Tuple

    from ..protocol.http_rules import Route

__all__ = ["MemoryTransport", "memory_pair"]

_EOF = None  # queued to tell the reader the other side closed


class MemoryTransport(Transport):
    """One end of an in-memory pair. Like a pipe, it needs no `Route` and has nothing to `cancel`."""

    def __init__(self, inbox: "queue.SimpleQueue[Optional[bytes]]", name: str) -> None:
        self._inbox = inbox
        self._peer: Optional["MemoryTransport"] = None
        self._name = name
        # Guards _closed so that close() and send() agree on whether a message still goes out.
        self._lock = threading.Lock()
        self._closed = False

    def start(self, sink: MessageSink) -> None:
        threading.Thread(target=self._read, args=(sink,), name=f"mcplite-{self._name}-reader",
                         daemon=True).start()

    def _read(self, sink: MessageSink) -> None:
        while True:
            data = self._inbox.get()
            if data is None:  # _EOF
                sink.connection_lost(None)
                return
            deliver_bytes(data, sink)

    def send(self, message: Any, route: Optional[Route] = None) -> None:
        data = encode_bytes(message)  # outside the lock: encoding errors raise to the caller
        with self._lock:
            if self._closed:
                raise ConnectionClosed("the in-memory connection is closed")
            assert self._peer is not None
            self._peer._inbox.put(data)

    def close(self) -> None:
        assert self._peer is not None
        self._end()
        self._peer._end()

    def _end(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._inbox.put(_EOF)


def memory_pair() -> Tuple[MemoryTransport, MemoryTransport]:
    """Two transports wired to each other: what one sends, the other receives."""
    a: "queue.SimpleQueue[Optional[bytes]]" = queue.SimpleQueue()
    b: "queue.SimpleQueue[Optional[bytes]]" = queue.SimpleQueue()
    client, server = MemoryTransport(a, "client"), MemoryTransport(b, "server")
    client._peer, server._peer = server, client
    return client, server
