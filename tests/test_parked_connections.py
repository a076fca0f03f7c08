"""The built-in HTTP server's parked connections: idle keep-alive connections and open streams hold no thread.

One reactor thread waits on every connection between requests and carries every open GET stream and
``subscriptions/listen`` stream; requests run on a small pool of workers. These tests open more connections
than ``select`` can watch (descriptors past 1024) from one process, with raw sockets (no thread per client),
and count the server's threads.
"""

import json
import logging
import os
import socket
import threading
import time
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest

from mcplite import Server
from mcplite.transports.http_server.stdlib import HTTPServerThread
from support import WAIT, wait_until
from support.raw_http import envelope

resource = pytest.importorskip("resource")  # (no RLIMIT_NOFILE to raise on Windows; and no epoll)

SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
HANDSHAKE = "2025-11-25"
WATCHED = "test://watched"
#: Of each kind: idle keep-alive connections, session GET streams, listen streams (3 x 500: past descriptor 1024;
#: MCPLITE_PARKED_EACH=3000 measures 9,000).
EACH = int(os.environ.get("MCPLITE_PARKED_EACH", "500"))
#: Threads the server may add for all of them: the accepting thread, the reactor, the housekeeper, a few workers.
FEW_THREADS = 30


def raise_descriptor_limit(needed: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < needed:
        pytest.skip(f"the hard limit on open files ({hard}) is below the {needed} this test needs")
    if soft != resource.RLIM_INFINITY and soft < needed:
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))


def make_server(**options: Any) -> Server:
    server = Server("parked", **options)

    @server.resource(WATCHED)
    def watched() -> str:
        return "watched"

    return server


class Raw:
    """One client connection by hand: requests written whole, answers read from a buffer of its own."""

    def __init__(self, port: int, *, rcvbuf: Optional[int] = None) -> None:
        self.sock = socket.socket()
        if rcvbuf is not None:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.settimeout(WAIT)
        self.sock.connect(("127.0.0.1", port))
        self.buffer = b""

    def send(self, method: str, body: Any = None, headers: Optional[Dict[str, str]] = None,
             path: str = "/mcp") -> None:
        data = b"" if body is None else json.dumps(body).encode()
        lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", "Accept: application/json, text/event-stream"]
        if body is not None:
            lines += ["Content-Type: application/json", f"Content-Length: {len(data)}"]
        lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + data)

    def _fill(self) -> None:
        data = self.sock.recv(65536)
        if not data:
            raise EOFError("the server closed the connection")
        self.buffer += data

    def head(self) -> Tuple[int, Dict[str, str]]:
        while b"\r\n\r\n" not in self.buffer:
            self._fill()
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        headers = dict(line.split(": ", 1) for line in lines[1:])
        return int(lines[0].split()[1]), {name.lower(): value for name, value in headers.items()}

    def answer(self) -> Tuple[int, Dict[str, str], bytes]:
        """A complete answer (Content-Length)."""
        status, headers = self.head()
        length = int(headers.get("content-length", "0"))
        while len(self.buffer) < length:
            self._fill()
        body, self.buffer = self.buffer[:length], self.buffer[length:]
        return status, headers, body

    def until(self, marker: bytes) -> bytes:
        """Read a stream on until ``marker`` has come; what came up to it."""
        while marker not in self.buffer:
            self._fill()
        seen, self.buffer = self.buffer.split(marker, 1)
        return seen

    def rest(self) -> bytes:
        """Everything up to the server's end of the connection."""
        try:
            while True:
                self._fill()
        except (EOFError, ConnectionResetError):
            return self.buffer

    def closed_by_server(self) -> bool:
        try:
            self.sock.settimeout(0.05)
            return not self.sock.recv(65536)
        except socket.timeout:
            return False
        except OSError:
            return True
        finally:
            self.sock.settimeout(WAIT)

    def close(self) -> None:
        self.sock.close()


def open_session_stream(port: int) -> Raw:
    """A 2025-11-25 session subscribed to WATCHED, with its GET stream open."""
    raw = Raw(port)
    raw.send("POST", {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}})
    status, headers, _ = raw.answer()
    assert status == 200
    session = {"Mcp-Session-Id": headers["mcp-session-id"], "MCP-Protocol-Version": HANDSHAKE}
    raw.send("POST", {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    assert raw.answer()[0] == 202
    raw.send("POST", {"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe", "params": {"uri": WATCHED}},
             session)
    assert raw.answer()[0] == 200
    raw.send("GET", headers={**session, "Accept": "text/event-stream"})
    status, _ = raw.head()
    assert status == 200
    return raw


def open_listen(port: int, listen_id: Any = 7, rcvbuf: Optional[int] = None) -> Raw:
    """A 2026-07-28 ``subscriptions/listen`` for WATCHED, acknowledged."""
    raw = Raw(port, rcvbuf=rcvbuf)
    raw.send("POST", {"jsonrpc": "2.0", "id": listen_id, "method": "subscriptions/listen", "params": {
        "_meta": envelope(), "notifications": {"resourceSubscriptions": [WATCHED]}}},
        {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"})
    status, _ = raw.head()
    assert status == 200
    raw.until(b"notifications/subscriptions/acknowledged")
    return raw


def open_idle(port: int) -> Raw:
    """A keep-alive connection that has had one answer, and waits."""
    raw = Raw(port)
    raw.send("GET", path="/nowhere")
    assert raw.answer()[0] == 404
    return raw


def server_threads(http: HTTPServerThread) -> int:
    return threading.active_count()


@pytest.fixture
def many() -> Iterator[None]:
    raise_descriptor_limit(6 * EACH + 512)  # each connection twice (both ends, one process), and to spare
    yield


def test_thousands_of_connections_and_streams_hold_a_few_threads(many: None) -> None:
    server = make_server(max_listens=EACH + 100)
    baseline = threading.active_count()
    http = HTTPServerThread(server, "127.0.0.1:0", json_response=True, keepalive_interval=None,
                            max_sessions=EACH + 100).start()
    idle: List[Raw] = []
    streams: List[Raw] = []
    listens: List[Raw] = []
    try:
        http._httpd.workers.idle_timeout = 0.5  # (so that the end of the test sees the pool shrink soon)
        idle += (open_idle(http.port) for _ in range(EACH))
        streams += (open_session_stream(http.port) for _ in range(EACH))
        listens += (open_listen(http.port, listen_id=n) for n in range(EACH))
        assert len(server.listens) == EACH
        # Past select's limit: the server's own descriptors for them go beyond 1024.
        assert max(sock.fileno() for sock in list(http._httpd._open)) >= 1024
        threads = threading.active_count() - baseline
        assert threads <= FEW_THREADS, f"{threads} threads for {3 * EACH} connections"

        # One resource update reaches every stream, both eras.
        started = time.monotonic()
        server.notify_resource_updated(WATCHED)
        for raw in streams + listens:
            raw.until(b'"notifications/resources/updated"')
        fan_out = time.monotonic() - started
        assert fan_out < WAIT

        # A client that closes its stream is let go at once (no write needed to notice): those past fd 1024 too.
        open_before = len(http._httpd._open)
        leaving = streams[-10:] + listens[-10:]
        started = time.monotonic()
        for raw in leaving:
            raw.close()
        wait_until(lambda: len(http._httpd._open) == open_before - 20, 1.0, "closed streams were not released")
        wait_until(lambda: len(server.listens) == EACH - 10, 1.0, "closed listens did not end")
        released = time.monotonic() - started
        del streams[-10:], listens[-10:]

        # The idle connections still serve their next request.
        for raw in idle[:20]:
            raw.send("GET", path="/nowhere")
            assert raw.answer()[0] == 404

        # Shutdown is quick, and every stream ends properly: the chunked body's end (a listen: its result first).
        started = time.monotonic()
        http.shutdown()
        shutdown = time.monotonic() - started
        assert shutdown < max(1.0, EACH / 2000), f"shutdown took {shutdown:.2f} s"  # (bigger runs: CPU-bound)
        for raw in streams:
            assert raw.rest().endswith(b"0\r\n\r\n")
        for raw in listens:
            rest = raw.rest()
            assert b'"resultType":"complete"' in rest and rest.endswith(b"0\r\n\r\n"), rest[-300:]
        print(f"\n{3 * EACH} connections: +{threads} threads; fan-out {fan_out * 1000:.0f} ms; "
              f"20 closed released in {released * 1000:.0f} ms; shutdown {shutdown * 1000:.0f} ms")
    finally:
        http.shutdown()
        for raw in idle + streams + listens:
            raw.close()
    wait_until(lambda: threading.active_count() <= baseline + 1, WAIT, "the server's threads stayed behind")


def test_threads_go_back_to_baseline_after_clients_leave(many: None) -> None:
    server = make_server()
    with HTTPServerThread(server, "127.0.0.1:0", json_response=True, keepalive_interval=None) as http:
        http._httpd.workers.idle_timeout = 0.5
        wait_until(lambda: http._httpd.reactor._thread is not None, WAIT)
        baseline = threading.active_count()
        clients = [open_listen(http.port) for _ in range(300)] + [open_session_stream(http.port) for _ in range(300)]
        assert threading.active_count() - baseline <= FEW_THREADS
        for raw in clients:
            raw.close()
        wait_until(lambda: not http._httpd._open and len(server.listens) == 0, WAIT, "the streams stayed open")
        wait_until(lambda: threading.active_count() <= baseline + 2, WAIT, "the workers stayed behind")


def test_a_slow_reader_is_cut_off_with_one_log_line(caplog: pytest.LogCaptureFixture) -> None:
    server = make_server()
    limit = 64 * 1024
    marker = b'"notifications/resources/updated"'
    with HTTPServerThread(server, "127.0.0.1:0", json_response=True, keepalive_interval=None, read_timeout=2.0,
                          stream_buffer=limit) as http:
        slow = open_listen(http.port, rcvbuf=4096)  # and never reads again
        fine = open_listen(http.port)
        seen, tail = 0, b""

        def fine_reads(expected: int) -> None:
            nonlocal seen, tail
            while seen < expected:
                data = tail + fine.sock.recv(1 << 20)
                seen += data.count(marker)
                tail = data[-len(marker) + 1:]

        with caplog.at_level(logging.WARNING, logger="mcplite"):
            started = time.monotonic()
            published = 0
            # ~200 bytes an event: up to 12 MB to each listener, well past what the kernel buffers hold.
            while published < 60000 and len(server.listens) == 2:
                server.notify_resource_updated(WATCHED)  # never blocks on the slow client: its bytes queue
                published += 1
                if published % 20 == 0:
                    fine_reads(published)  # the good client keeps up
            assert time.monotonic() - started < WAIT
            wait_until(lambda: len(server.listens) == 1, WAIT, "the slow listener was not cut off")
        cut = [record for record in caplog.records if "reads too slowly" in record.getMessage()]
        assert len(cut) == 1, [record.getMessage() for record in caplog.records]
        for conn in list(http._httpd.reactor._held):
            assert len(conn.out) <= limit  # memory stays bounded
        server.notify_resource_updated(WATCHED)  # the other listener still hears
        fine_reads(published + 1)
        slow.close()
        fine.close()


def test_slowloris_connections_hold_no_thread_and_close_at_header_timeout(many: None) -> None:
    server = make_server()
    with HTTPServerThread(server, "127.0.0.1:0", header_timeout=1.0) as http:
        wait_until(lambda: http._httpd.reactor._thread is not None, WAIT)
        baseline = threading.active_count()
        slow: List[Raw] = []
        started = time.monotonic()
        for n in range(400):
            raw = Raw(http.port)
            if n % 2:
                raw.sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")  # never ends its head
            slow.append(raw)
        time.sleep(0.3)
        assert threading.active_count() - baseline <= FEW_THREADS
        # Meanwhile the server answers others at once.
        other = open_idle(http.port)
        other.close()
        for raw in slow:
            wait_until(raw.closed_by_server, WAIT, "a slow connection stayed open past header_timeout")
        elapsed = time.monotonic() - started
        assert 1.0 <= elapsed < 1.0 + WAIT
        for raw in slow:
            raw.close()


def test_an_idle_keepalive_connection_closes_after_keepalive_timeout() -> None:
    server = make_server()
    with HTTPServerThread(server, "127.0.0.1:0", keepalive_timeout=0.5) as http:
        raw = open_idle(http.port)
        started = time.monotonic()
        wait_until(raw.closed_by_server, WAIT, "the idle connection stayed open")
        assert 0.4 <= time.monotonic() - started < WAIT
        raw.close()


def test_a_stream_that_ends_gives_its_connection_back_for_the_next_request() -> None:
    server = make_server()
    with HTTPServerThread(server, "127.0.0.1:0", json_response=True) as http:
        raw = open_listen(http.port)
        server.listens._open.copy().pop().session.close()  # ends the listen gracefully: its result, then the end
        assert b'"resultType":"complete"' in raw.until(b"0\r\n\r\n")
        raw.send("GET", path="/nowhere")  # the same connection, kept alive
        assert raw.answer()[0] == 404
        raw.close()


def test_a_notification_to_many_streams_is_encoded_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from mcplite.protocol import jsonrpc, sse
    from mcplite.transports.http_server import streams as streams_module

    server = make_server()
    with HTTPServerThread(server, "127.0.0.1:0", json_response=True, keepalive_interval=None) as http:
        clients = [open_session_stream(http.port) for _ in range(20)] + [open_listen(http.port) for _ in range(20)]
        encoded: List[str] = []
        events: List[str] = []

        def encode(message: Any) -> str:
            encoded.append(message["method"])
            return real_encode(message)

        def encode_event(data: str, **fields: Any) -> bytes:
            events.append(data)
            return real_event(data, **fields)

        real_encode, real_event = jsonrpc.encode, sse.encode_event
        monkeypatch.setattr(streams_module.jsonrpc, "encode", encode)
        monkeypatch.setattr(streams_module, "encode_event", encode_event)
        server.notify_resource_updated(WATCHED)
        for raw in clients:
            raw.until(b'"notifications/resources/updated"')
        # Once for the handshake sessions' GET streams, once for the listens (all with the same id here).
        assert encoded.count("notifications/resources/updated") == 2, encoded
        assert len(events) == 2, len(events)
        for raw in clients:
            raw.close()


def test_connections_that_leave_are_let_go_at_once() -> None:
    """A connection that has left keeps nothing alive: not its socket, buffers and handler until its old
    deadline (keepalive_timeout, 30 s) would have come, as a heap of stale deadlines used to."""
    import gc

    from mcplite.transports.http_server.stdlib import _Connection

    server = make_server()
    with HTTPServerThread(server, "127.0.0.1:0", json_response=True, keepalive_interval=None) as http:

        def held() -> int:
            gc.collect()
            return sum(1 for obj in gc.get_objects()
                       if isinstance(obj, _Connection) and obj.handler.server is http._httpd)

        clients = [open_idle(http.port) for _ in range(100)] + [open_listen(http.port, n) for n in range(50)]
        assert held() >= 150
        for raw in clients:
            raw.close()
        wait_until(lambda: not http._httpd._open and len(server.listens) == 0, WAIT, "the connections stayed open")
        # (The reactor's loop may still name the last connection it looked at, until its next event.)
        wait_until(lambda: held() <= 1, WAIT, "connections that left are still held")
