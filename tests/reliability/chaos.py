"""A TCP proxy that cuts connections: the fault a flaky network, a load balancer or a restart causes.

`ChaosProxy` listens on 127.0.0.1 and relays each connection to a target with two threads (one per
direction). It watches the server's bytes for an SSE response (``Content-Type: text/event-stream``) to a
request `cuttable` accepts; once the first event of that stream has passed (the point from which a
resumable stream can be resumed), it picks a random byte offset up to ``span`` bytes further, relays
exactly that much, and closes both sides, mid-chunk or mid-event as it falls. It cuts until ``cuts`` is
spent. The offsets come from a seeded generator, though which connection a cut lands on depends on timing.
"""

import random
import socket
import threading
from typing import Callable, List, Optional, Tuple

#: The server bytes that mark an SSE response's head, and the end of an SSE event.
_SSE_TYPE = b"text/event-stream"
_EVENT_END = b"\n\n"
#: The last chunk of a chunked body: the stream ended (JSON never holds a raw CR LF, so no event does).
_LAST_CHUNK = b"\r\n0\r\n\r\n"


def resumable_request(head: bytes) -> bool:
    """A POST (a request's answer stream) or a GET resuming one (``Last-Event-ID``); not the listen stream."""
    return head.startswith(b"POST ") or (head.startswith(b"GET ") and b"\nlast-event-id:" in head.lower())


class ChaosProxy:
    """Relays 127.0.0.1:`port` to ``target``, cutting up to ``cuts`` SSE streams at random offsets.

    Attributes:
        port: where the proxy listens.
        cut_log: one ``(request line, bytes relayed on that connection)`` per cut made.
        resumptions: the GETs with ``Last-Event-ID`` relayed.
    """

    def __init__(self, target: Tuple[str, int], rng: random.Random, *, cuts: int, span: int = 4096,
                 cuttable: Callable[[bytes], bool] = resumable_request) -> None:
        self._target = target
        self._rng = rng
        self._span = span
        self._cuttable = cuttable
        # Guards _cuts_left, cut_log, _rng and _sockets: every relay thread reaches them.
        self._lock = threading.Lock()
        self._cuts_left = cuts
        self.cut_log: List[Tuple[str, int]] = []
        #: How many GETs with ``Last-Event-ID`` (a client resuming a stream) the proxy relayed.
        self.resumptions = 0
        self._sockets: List[socket.socket] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._closed = False
        self._thread = threading.Thread(target=self._accept, name="chaos-accept", daemon=True)

    @property
    def cuts_made(self) -> int:
        with self._lock:
            return len(self.cut_log)

    def start(self) -> "ChaosProxy":
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop accepting and close every relayed connection."""
        self._closed = True
        try:  # wake the accepting thread: closing a socket does not interrupt an accept() blocked on it
            socket.create_connection(("127.0.0.1", self.port), 1).close()
        except OSError:
            pass
        self._listener.close()
        with self._lock:
            sockets, self._sockets = self._sockets, []
        for sock in sockets:
            _close(sock)
        self._thread.join(5)

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if self._closed:  # the wake-up connection of `close`
                _close(client)
                return
            try:
                upstream = socket.create_connection(self._target, 5)
                upstream.settimeout(None)
            except OSError:
                _close(client)
                continue
            with self._lock:
                self._sockets.extend([client, upstream])
            relay = _Relay(self, client, upstream)
            threading.Thread(target=relay.upward, name="chaos-up", daemon=True).start()
            threading.Thread(target=relay.downward, name="chaos-down", daemon=True).start()

    def _choose_cut(self, request_head: bytes) -> Optional[int]:
        """Spend one cut on this stream (the offset past its first event), or None."""
        if not self._cuttable(request_head):
            return None
        with self._lock:
            if self._cuts_left <= 0:
                return None
            self._cuts_left -= 1
            return self._rng.randint(0, self._span)

    def _note_resume(self) -> None:
        with self._lock:
            self.resumptions += 1

    def _note_cut(self, request_head: bytes, relayed: int, made: bool) -> None:
        with self._lock:
            if made:
                self.cut_log.append((request_head.split(b"\r\n", 1)[0].decode("latin-1"), relayed))
            else:
                self._cuts_left += 1  # the stream ended before the offset: the cut is still to be made


class _Relay:
    """The two directions of one proxied connection."""

    def __init__(self, proxy: ChaosProxy, client: socket.socket, upstream: socket.socket) -> None:
        self.proxy = proxy
        self.client = client
        self.upstream = upstream
        # The head of the latest request the client sent (HTTP/1.1 without pipelining: the one being answered).
        self.request_head = b""
        self._request_buffer = b""  # the client's bytes not yet parsed
        self._body_left = 0  # bytes of the current request's body still to come
        # What `_scan` follows in the server's bytes (used by the downward thread only).
        self.state = "idle"  # "idle", "armed" (an SSE head seen), "cutting" (cut_at known)
        self.seen = b""  # the server's bytes from absolute offset seen_from on
        self.seen_from = 0
        self.position = 0  # where the scan goes on, in seen
        self.offset = 0
        self.cut_at: Optional[int] = None  # the absolute offset at which to cut

    def _forget_before(self, index: int) -> None:
        """Drop seen[:index] (bounded memory while idle)."""
        if index > 0:
            self.seen = self.seen[index:]
            self.seen_from += index
            self.position = max(0, self.position - index)

    def upward(self) -> None:
        try:
            while True:
                data = self.client.recv(65536)
                if not data:
                    break
                self._watch_request(data)
                self.upstream.sendall(data)
        except OSError:
            pass
        _shutdown(self.upstream, socket.SHUT_WR)

    def _watch_request(self, data: bytes) -> None:
        """Follow the client's requests (heads, then Content-Length bodies) to know which one is answered."""
        self._request_buffer += data
        while True:
            if self._body_left:
                taken = min(self._body_left, len(self._request_buffer))
                self._request_buffer = self._request_buffer[taken:]
                self._body_left -= taken
                if self._body_left:
                    return
            end = self._request_buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            self.request_head = self._request_buffer[:end]
            self._request_buffer = self._request_buffer[end + 4:]
            if self.request_head.startswith(b"GET ") and b"\nlast-event-id:" in self.request_head.lower():
                self.proxy._note_resume()
            for line in self.request_head.lower().split(b"\r\n")[1:]:
                if line.startswith(b"content-length:"):
                    self._body_left = int(line.split(b":", 1)[1])

    def downward(self) -> None:
        """Relay the server's bytes; cut where `_scan` says."""
        relayed = 0
        try:
            while True:
                data = self.upstream.recv(65536)
                if not data:
                    break
                self._scan(data)
                if self.cut_at is not None and self.cut_at <= relayed + len(data):
                    self.client.sendall(data[:self.cut_at - relayed])
                    self.proxy._note_cut(self.request_head, self.cut_at, True)
                    _close(self.client)
                    _close(self.upstream)
                    return
                self.client.sendall(data)
                relayed += len(data)
        except OSError:
            pass
        if self.state != "idle":  # the connection ended before the offset: the cut is still to be made
            self.proxy._note_cut(self.request_head, relayed, False)
        _shutdown(self.client, socket.SHUT_WR)

    def _scan(self, data: bytes) -> None:
        """Follow the server's bytes: an SSE head arms a cut ("armed"); the end of the stream's first event
        fixes its offset ("cutting"); the stream's last chunk before that offset disarms it ("idle")."""
        self.seen += data
        while True:
            if self.state == "idle":
                type_at = self.seen.find(_SSE_TYPE, self.position)
                head_end = self.seen.find(b"\r\n\r\n", type_at) if type_at >= 0 else -1
                if head_end < 0:
                    self._forget_before(len(self.seen) - 4096 if type_at < 0 else type_at)
                    return
                self.position = head_end + 4
                offset = self.proxy._choose_cut(self.request_head)
                if offset is not None:
                    self.state, self.offset = "armed", offset
            elif self.state == "armed":
                event_end = self.seen.find(_EVENT_END, self.position)
                if event_end < 0:
                    return
                self.position = event_end + len(_EVENT_END)
                self.cut_at = self.seen_from + self.position + self.offset
                self.state = "cutting"
            else:
                last = self.seen.find(_LAST_CHUNK, self.position)
                if last < 0 or self.cut_at is None or self.seen_from + last >= self.cut_at:
                    return
                self.proxy._note_cut(self.request_head, 0, False)
                self.state, self.cut_at = "idle", None
                self.position = last + len(_LAST_CHUNK)


def _shutdown(sock: socket.socket, how: int) -> None:
    try:
        sock.shutdown(how)
    except OSError:
        pass


def _close(sock: socket.socket) -> None:
    _shutdown(sock, socket.SHUT_RDWR)
    try:
        sock.close()
    except OSError:
        pass
