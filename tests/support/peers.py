"""`RawPeer`: the far end of a transport, driven by hand, for tests of the session and the server; `Recording`:
a transport that remembers what a client sent through it."""

import queue
import threading
from typing import TYPE_CHECKING, Any, List, Optional

from mcplite.protocol import jsonrpc
from mcplite.transports import MessageSink, Transport

from .wait import WAIT

if TYPE_CHECKING:
    from mcplite.transports import Route


class RawPeer(MessageSink):
    """The far end of a transport, driven by hand: send raw bytes or dicts, read what arrives."""

    def __init__(self, transport: Transport) -> None:
        self.transport = transport
        self.inbox: "queue.Queue[Any]" = queue.Queue()
        self.lost = threading.Event()
        transport.start(self)

    def receive(self, value: Any) -> None:
        self.inbox.put(value)

    def receive_invalid(self, exc: Exception) -> None:
        self.inbox.put(exc)

    def connection_lost(self, exc: Optional[BaseException]) -> None:
        self.lost.set()

    def send(self, message: Any) -> None:
        self.transport.send(message)

    def send_raw(self, data: bytes) -> None:
        # The memory transport encodes dicts; reach its queue to inject bytes that are not JSON.
        self.transport._peer._inbox.put(data)  # type: ignore[attr-defined]

    def next(self, timeout: float = WAIT) -> Any:
        return self.inbox.get(timeout=timeout)

    def next_matching(self, predicate: Any, timeout: float = WAIT) -> Any:
        """The next message for which predicate is true, skipping others."""
        skipped: List[Any] = []
        while True:
            msg = self.next(timeout)
            if predicate(msg):
                return msg
            skipped.append(msg)

    def request(self, id: Any, method: str, params: Any = None) -> Any:
        self.send(jsonrpc.request(id, method, params))
        return self.next_matching(lambda m: isinstance(m, dict) and m.get("id") == id and "method" not in m)

    def initialize(self, version: str = "2025-11-25", capabilities: Any = None) -> Any:
        answer = self.request("init", "initialize", {"protocolVersion": version, "capabilities": capabilities or {},
                                                     "clientInfo": {"name": "raw", "version": "0"}})
        self.send(jsonrpc.notification("notifications/initialized"))
        return answer


class Kept(Transport):
    """A stream transport that goes nowhere and keeps every message it is given, as it is: for a session fed
    by the test itself (``session.receive(..., inline=True)``), whose answers are then read from ``sent``."""

    def __init__(self) -> None:
        self.sent: List[Any] = []

    def start(self, sink: MessageSink) -> None:
        pass

    def send(self, message: Any, route: "Optional[Route]" = None) -> None:
        self.sent.append(message)

    def close(self) -> None:
        pass


class Recording(Transport):
    """Wraps a transport and remembers every message the client sent through it."""

    def __init__(self, inner: Transport) -> None:
        self.inner = inner
        self.sent: List[Any] = []

    def start(self, sink: MessageSink) -> None:
        self.inner.start(sink)

    def send(self, message: Any, route: "Optional[Route]" = None) -> None:
        self.sent.append(message)
        self.inner.send(message, route)

    def close(self) -> None:
        self.inner.close()

    def methods(self) -> List[str]:
        return [m["method"] for m in self.sent if isinstance(m, dict) and "method" in m]

    def count(self, method: str) -> int:
        """How many requests (not notifications) of ``method`` went out."""
        return sum(1 for m in self.sent if isinstance(m, dict) and m.get("method") == method and "id" in m)
