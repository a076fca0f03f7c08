"""Serve a `Server` over HTTP with a server built on the standard library: `serve`, `HTTPServerThread`.

Two layers:

- `HTTPApp` (`app`, with `streams` and `sessions`), the core. It takes one parsed request (`IncomingRequest`) and
  answers it through a `Responder` that the HTTP server in front of it provides. It owns the MCP sessions,
  routes every outgoing message to exactly one stream, and applies the security checks. It never touches
  a socket.
- Adapters that parse HTTP and implement `Responder`: this one, on the standard library's ``http.server``
  and ``selectors``, and a PEP 3333 application in `wsgi`.

This adapter adds what only a server that owns its sockets can do: no thread waits for a client. One reactor
thread (`_Reactor`) holds every connection between requests and every open stream, reading request heads as
they come and writing streams' events as their clients read; a request whose head has arrived is served on a
worker (`_Workers`), blocking, then its connection goes back to the reactor (see `_Connection` for who holds
a connection when). Reading a request has deadlines (a slow or silent client is cut off; 408), the number of
connections is bounded (503), a stream whose client reads too slowly is cut off (``stream_buffer``), ``Host`` defaults to
the loopback names when bound to loopback and must be listed (``allowed_hosts``) to bind anywhere else (DNS
rebinding; 403), and the request grammar is strict (RFC 9112, `protocol.http11`), so that no request can
be framed two ways to smuggle another past a proxy: a malformed request line, header section or chunked body is answered 400, 413, 431, 501 or 505, and its connection closed.

The core's public names are importable from here too.
"""

import heapq
import selectors
import socket
import socketserver
import sys
import threading
import time
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, HTTPServer
from ipaddress import ip_address
from collections import deque
from typing import Any, Callable, Deque, Dict, List, Optional, Set, Tuple
from urllib.parse import urlsplit

from ..._log import log, redact_session_ids
from ...protocol.http11 import (
    MAX_HEAD_BYTES, MAX_HEADERS, MAX_LINE, MalformedRequest, body_framing, end_of_head, parse_header_section,
    parse_request_line, read_chunked,
)
from ..http_messages import HTTPRefusal
from .app import HTTPApp
from .eventstore import EventStore, InMemoryEventStore
from .adapter import Headers, IncomingRequest, Responder, RouteHandler, error_body, reason_phrase
from .guards import LOOPBACK_HOSTS, unlisted_hosts

__all__ = [
    "HTTPApp", "IncomingRequest", "Responder", "HTTPRefusal", "Headers", "RouteHandler", "serve",
    "HTTPServerThread", "start_http_server", "LOOPBACK_HOSTS", "EventStore", "InMemoryEventStore", "reason_phrase",
]

_CTRL_C_WAKE = 1.0  # seconds the accept loop may sleep without looking up (see _MCPHTTPServer.serve_forever)
#: Seconds a connection turned away with 503 stays open for its client to finish writing and read the answer;
#: at most so many such connections at once (beyond, one is closed at once, as it always was).
_TURNED_AWAY_LINGER = 2.0
_MAX_TURNED_AWAY = 1024
#: What a parked stream's client may send before the stream ends (a pipelined next request) before it is cut.
_MAX_HEAD_BUFFER = MAX_LINE + MAX_HEAD_BYTES
#: Descriptors the process keeps beyond its connections' (files, the event store, pipes, the reactor's own).
_SPARE_DESCRIPTORS = 256
#: Seconds a shutdown waits for the reactor to send the ends of the streams it ended, before cutting connections.
_FLUSH_AT_CLOSE = 0.5
_cached_date: Tuple[int, str] = (0, "")


def _http_date() -> str:
    """The Date header value, formatted once per second."""
    global _cached_date
    second, text = _cached_date
    now = int(time.time())
    if now != second:
        text = formatdate(now, usegmt=True)
        _cached_date = (now, text)
    return text


class _DeadlineReader:
    """A connection's input whose reads give up at a deadline, however slowly the bytes trickle in.

    A per-read socket timeout alone lets a client that sends one byte every few seconds hold a thread
    forever; here every read is bounded by what is left until the deadline.
    """

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._buffer = bytearray()
        self._deadline: Optional[float] = None

    def set_deadline(self, seconds: Optional[float]) -> None:
        self._deadline = None if seconds is None else time.monotonic() + seconds

    def readline(self, limit: int) -> bytes:
        """One line with its "\\n", cut at ``limit`` bytes; shorter if the client stops sending first."""
        searched = 0
        while True:
            end = self._buffer.find(b"\n", searched)
            if end >= 0:
                return self._take(min(end + 1, limit))
            if limit <= len(self._buffer):
                return self._take(limit)
            searched = len(self._buffer)
            if not self._fill():
                return self._take(len(self._buffer))

    def read_head(self, max_line: int, max_lines: int, max_bytes: int) -> bytes:
        """Read a request's header fields and the empty line that ends them, in one piece.

        Returns what has arrived, without that empty line, if the client stops sending first or the fields
        can no longer be valid (more than ``max_lines`` lines, one of ``max_line`` bytes or more, or more than
        ``max_bytes`` in all). One search per read from the socket: reading line by line would copy each line
        out of the buffer.
        """
        scanned = lines = line_start = 0
        while True:
            end = end_of_head(self._buffer, scanned)
            if end:
                return self._take(end)
            lines += self._buffer.count(b"\n", scanned)
            last_newline = self._buffer.rfind(b"\n", scanned)
            if last_newline >= 0:
                line_start = last_newline + 1
            scanned = len(self._buffer)
            if lines > max_lines or scanned - line_start >= max_line or scanned > max_bytes or not self._fill():
                return self._take(len(self._buffer))

    def read(self, size: int) -> bytes:
        while len(self._buffer) < size and self._fill():
            pass
        return self._take(min(size, len(self._buffer)))

    def feed(self) -> bytes:
        """One read from a non-blocking socket into the buffer (the reactor's); b"" when the client has closed.
        Raises `BlockingIOError` when nothing has arrived, OSError when the connection failed."""
        data = self._sock.recv(65536)
        self._buffer += data
        return data

    def buffered(self) -> int:
        return len(self._buffer)

    def head_arrived(self) -> bool:
        """Whether a worker can take the request now: its line and head are here in full, or enough has come
        to refuse it (a malformed request line, a line or a head beyond the limits). Until then the reactor
        keeps reading, and no thread waits for a slow client."""
        buffer = self._buffer
        line_end = buffer.find(b"\n")
        if line_end < 0:
            return len(buffer) > MAX_LINE
        try:
            parse_request_line(bytes(buffer[:line_end + 1]))
        except MalformedRequest:
            return True
        head = buffer[line_end + 1:]
        if end_of_head(head, 0):
            return True
        last_line = len(head) - head.rfind(b"\n") - 1
        return len(head) > MAX_HEAD_BYTES or last_line >= MAX_LINE or head.count(b"\n") > MAX_HEADERS

    def _take(self, size: int) -> bytes:
        data = bytes(self._buffer[:size])
        del self._buffer[:size]
        return data

    def _fill(self) -> bool:
        if self._deadline is not None:
            remaining = self._deadline - time.monotonic()
            if remaining <= 0:
                raise socket.timeout("timed out")
            self._sock.settimeout(remaining)
        data = self._sock.recv(65536)
        self._buffer += data
        return bool(data)


class _SocketWriter:
    """What `BaseHTTPRequestHandler` writes its own error pages to."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock

    def write(self, data: bytes) -> int:
        self._sock.sendall(data)
        return len(data)

    def flush(self) -> None:
        pass


class _Connection:
    """One client connection, and who holds it now.

    A connection is held by exactly one side at a time, and only that side reads from it or closes it:

    - the reactor (`_Reactor`), while it waits: ``HEAD`` (for a request's head to arrive in full: a new
      connection, or one kept alive between requests) or ``STREAM`` (a parked stream: its response goes on,
      written from ``out`` as the client reads, and the connection is watched for the client leaving);
    - a worker (``WORKER``), from a complete request head to the end of its response: it parses, reads the
      body, runs the app and writes, blocking, as a thread per connection used to.

    The hand-offs go through the reactor's call queue and the worker pool, which order them. ``lock`` guards
    what other threads touch while a stream is parked (they write events from wherever they are sent).
    """

    __slots__ = ("sock", "address", "reader", "handler", "state", "served", "head_since", "deadline",
                 "lock", "out", "parked", "gone", "close_after", "flush_queued", "released", "done",
                 "interest", "limit", "closed")

    def __init__(self, sock: socket.socket, address: Any, server: "_MCPHTTPServer") -> None:
        self.sock = sock
        self.address = address
        self.reader = _DeadlineReader(sock)
        self.handler = _ConnectionHandler(self, server)
        self.state = _HEAD
        self.served = False  # a request has been answered on it: it waits keepalive_timeout, not header_timeout
        self.head_since = 0.0  # when the first byte of the request now arriving came (0: none yet)
        self.deadline = 0.0  # when the reactor closes it, waiting in HEAD (0: no deadline)
        self.interest = 0  # what the reactor's selector watches it for (0: not registered)
        self.limit = server.stream_buffer
        self.closed = False
        # Guarded by lock:
        self.lock = threading.Lock()
        self.parked = False  # its stream's bytes go to `out`, for the reactor to write (see `_SocketResponder`)
        self.out = bytearray()  # bytes of a parked stream not yet sent
        self.gone = False  # the client left, or was cut off: nothing more is written
        self.close_after = False  # close the connection once its stream has ended and `out` is sent
        self.flush_queued = False  # a flush is on the reactor's call queue
        self.released: Optional[threading.Event] = None  # of the parked stream, set once it has ended
        self.done: Optional[Callable[[bool], None]] = None  # called once the parked stream has ended

    def queue(self, data: bytes, reactor: "_Reactor") -> None:
        """Queue bytes of a parked stream for the reactor to send. Called with ``lock`` held. Raises OSError
        once the client has left, or when it reads too slowly (more than ``limit`` bytes waiting): then it is
        cut off, with one log line, so that a stalled client cannot make the server buffer without end."""
        if self.gone:
            raise ConnectionResetError("the client has left the stream")
        if len(self.out) + len(data) > self.limit:
            waiting = len(self.out)
            self.gone = True
            self.out = bytearray()
            self._schedule(reactor)
            log.warning("mcplite HTTP: cut off the stream to %s: the client reads too slowly (%d bytes waiting to "
                        "be sent, more than stream_buffer=%d)", _peer(self.address), waiting + len(data), self.limit)
            raise ConnectionAbortedError("the client reads too slowly: cut off")
        self.out += data
        self._schedule(reactor)

    def _schedule(self, reactor: "_Reactor") -> None:
        if not self.flush_queued:
            self.flush_queued = True
            reactor.call(reactor.flush, self)


def _peer(address: Any) -> str:
    return str(address[0]) if isinstance(address, tuple) and address else str(address)


_HEAD, _WORKER, _STREAM = "head", "worker", "stream"


class _SocketResponder(Responder):
    """Writes one response on a connection of the built-in server.

    Until the response is parked each call is one blocking ``sendall``, on the thread that calls it (the
    connection's worker, or whichever thread sends an event), under the connection's lock. Once a stream is
    parked (`park`), its bytes are queued instead and the reactor sends them, without blocking anyone.
    """

    can_park = True

    def __init__(self, handler: "_ConnectionHandler") -> None:
        self._handler = handler
        self._conn: _Connection = handler.conn
        self._sock: socket.socket = handler.connection
        self._head_only = handler.command == "HEAD"
        self._chunked = handler.request_version == "HTTP/1.1"

    def _head(self, status: int, headers: Headers, framing: str) -> bytes:
        lines = [f"HTTP/1.1 {status} {reason_phrase(status)}\r\nServer: mcplite\r\nDate: {_http_date()}\r\n"]
        lines.extend(f"{name}: {value}\r\n" for name, value in headers)
        lines.append(framing)
        if self._handler.server.draining:
            self._handler.close_connection = True  # the server is shutting down: this is the last response
        if self._handler.close_connection:
            lines.append("Connection: close\r\n")
        lines.append("\r\n")
        return "".join(lines).encode("latin-1")

    def _send(self, data: bytes) -> None:
        conn = self._conn
        with conn.lock:
            if conn.parked:
                conn.queue(data, self._handler.server.reactor)
            else:
                self._sock.sendall(data)

    def respond(self, status: int, headers: Headers, body: bytes) -> None:
        head = self._head(status, headers, f"Content-Length: {len(body)}\r\n")
        self._send(head if self._head_only else head + body)

    def start_stream(self, headers: Headers, first: bytes) -> None:
        if self._chunked:
            head = self._head(200, headers, "Transfer-Encoding: chunked\r\n")
            self._send(head + self._frame(first) if first else head)
        else:  # HTTP/1.0: the body ends when the connection does
            self._handler.close_connection = True
            self._send(self._head(200, headers, "") + first)

    def write(self, data: bytes) -> None:
        self._send(self._frame(data) if self._chunked else data)

    def end_stream(self, last: bytes = b"", *, close_connection: bool = False) -> None:
        closing = close_connection or not self._chunked
        if self._chunked:
            last = self._frame(last) + b"0\r\n\r\n" if last else b"0\r\n\r\n"
        conn = self._conn
        with conn.lock:
            if closing:
                self._handler.close_connection = True
                conn.close_after = True
            if conn.parked:
                if last:
                    conn.queue(last, self._handler.server.reactor)
                return  # the reactor closes the connection, if it must, once the bytes are out
            if last:
                self._sock.sendall(last)
            if closing:
                self._sock.shutdown(socket.SHUT_RDWR)

    def park(self, released: threading.Event, done: Callable[[bool], None]) -> bool:
        """Hand the stream to the reactor: this thread goes back to the pool, the connection to the reactor,
        which sends what is queued and watches the client; `done` runs on a worker once the stream has ended."""
        conn = self._conn
        with conn.lock:
            conn.released, conn.done = released, done
            conn.parked = True
            self._handler.parked = True
            reactor = self._handler.server.reactor
            reactor.call(reactor.adopt_stream, conn)  # under the lock: before any flush a write queues
        return True

    def wake(self) -> None:
        conn = self._conn
        with conn.lock:
            if conn.parked:
                reactor = self._handler.server.reactor
                reactor.call(reactor.flush, conn)  # it sees the stream released once its bytes are out

    @staticmethod
    def _frame(data: bytes) -> bytes:
        return b"%x\r\n%b\r\n" % (len(data), data)


class _ConnectionHandler(BaseHTTPRequestHandler):
    """Serves the requests of one connection (HTTP/1.1 keep-alive) on a worker, one head at a time, and hands
    each to the server's `HTTPApp`. Made once per connection; `serve` runs whenever a request's head has arrived."""

    protocol_version = "HTTP/1.1"
    server_version = "mcplite"
    server: "_MCPHTTPServer"  # pyright: ignore[reportIncompatibleVariableOverride]  # always ours
    raw_requestline: bytes
    _body_length: Optional[int]  # of the request being read, as `body_framing` found it; None: chunked

    def __init__(self, conn: _Connection, server: "_MCPHTTPServer") -> None:  # (not the base class's: no loop)
        self.conn = conn
        self.server = server  # pyright: ignore[reportIncompatibleVariableOverride]  # always ours
        self.request = self.connection = conn.sock
        self.client_address = conn.address
        self.reader = conn.reader
        self.rfile = self.reader  # type: ignore[assignment]  # where the base class reads the request line
        self.wfile = _SocketWriter(conn.sock)  # type: ignore[assignment]
        self.close_connection = True
        #: The response was handed to the reactor (a parked stream): the connection is no longer this thread's.
        self.parked = False

    def serve(self) -> None:
        """On a worker: serve the request whose head has arrived, and any whole one behind it; then give the
        connection back to the reactor, to wait for the next, or close it."""
        conn = self.conn
        self.parked = False
        try:
            self.connection.settimeout(self.server.read_timeout)
            while True:
                self.handle_one_request()
                if self.parked:
                    return  # the reactor has it now
                if self.close_connection or self.server.draining or not self.reader.head_arrived():
                    break
        except Exception:
            log.debug("mcplite HTTP: connection from %s failed", _peer(conn.address), exc_info=True)
            self.close_connection = True
        self.after_response()

    def after_response(self) -> None:
        """The connection's response is complete (on a worker): close it, or park it until its next request."""
        if self.close_connection or self.server.draining:
            self.server.close_connection(self.conn)
        else:
            reactor = self.server.reactor
            reactor.call(reactor.wait_for_request, self.conn)

    def handle_one_request(self) -> None:
        if self.server.draining:  # shutting down: no further request on this connection
            self.close_connection = True
            return
        self.conn.served = True
        self.reader.set_deadline(self.server.header_timeout)  # (its head is here already: no read should wait)
        try:
            super().handle_one_request()
        finally:
            if not self.parked:  # (a parked stream's request ends with the stream)
                self.server.request_finished(self.connection)

    def parse_request(self) -> bool:
        """Parse the request line and header fields; ``self.headers`` becomes a dict with lower-case names.

        Replaces the standard library's email-based parser, the largest cost of a small request, with the
        strict grammar of `protocol.http11`: a malformed head is answered (400, 431, 501 or 505), its connection closed.
        """
        self.server.request_started(self.connection)  # its request line has arrived: a drain waits for it
        self.close_connection = True
        self.command = ""  # until known: an error answer is then not taken for the answer to a HEAD
        self.request_version = "HTTP/1.0"  # until known
        self.requestline = str(self.raw_requestline, "iso-8859-1").rstrip("\r\n")
        try:
            self.command, self.path, self.request_version = parse_request_line(self.raw_requestline)
            head = self.reader.read_head(MAX_LINE, MAX_HEADERS, MAX_HEAD_BYTES)
            ended = head.endswith((b"\n\r\n", b"\n\n")) or head in (b"\r\n", b"\n")
            if ended:
                head = head[:-2] if head.endswith(b"\r\n") else head[:-1]  # the empty line
            headers = parse_header_section(head)  # a head cut short by a limit is refused here
            if not ended:
                return False  # the client left mid-head
            if self.request_version == "HTTP/1.1" and "host" not in headers:
                raise MalformedRequest(400, "Bad Request: no Host header")  # RFC 9112 3.2
            self._body_length = body_framing(headers, self.request_version)
        except MalformedRequest as error:
            self._refuse(error.status, error.message)
            return False
        self.headers = headers  # type: ignore[assignment]
        # Keep-alive is HTTP/1.1's default; an HTTP/1.0 connection always closes after its response.
        self.close_connection = self.request_version != "HTTP/1.1" or "close" in headers.get("connection", "").lower()
        if headers.get("expect", "").lower() == "100-continue" and self.request_version == "HTTP/1.1":
            return self.handle_expect_100()
        return True

    def handle_expect_100(self) -> bool:
        if self._body_length is not None and self._body_length > self.server.app.max_body_size:
            self._refuse(413, "Payload Too Large")
            return False
        return super().handle_expect_100()

    def send_error(self, code: int, message: Optional[str] = None, explain: Optional[str] = None) -> None:
        """The base class's own refusals (414 for a request line too long, 501 for an unknown method) take the
        same path as ours: a JSON body, then the connection is closed."""
        self._refuse(int(code), message or reason_phrase(int(code)))

    def _dispatch(self) -> None:
        body = self._read_body(self.server.app.max_body_size)
        if body is None:
            return
        self.reader.set_deadline(None)
        self.connection.settimeout(self.server.read_timeout)  # now bounds each write of the response
        path, _, query = self.path.partition("?")
        if not path.startswith("/"):  # the absolute form a proxy sends: http://host/mcp
            path = urlsplit(path).path or "/"
        try:
            request = IncomingRequest(self.command, path, query, self.headers, body,  # type: ignore[arg-type]
                                      remote=self.client_address[0])
            self.server.app.handle(request, _SocketResponder(self))
        except OSError:
            self.close_connection = True

    do_GET = do_POST = do_DELETE = do_PUT = do_PATCH = do_OPTIONS = do_HEAD = _dispatch

    def _read_body(self, limit: int) -> Optional[bytes]:
        """The request body, framed as `body_framing` found; None when the request was refused or the client
        left (the connection is then closed)."""
        self.reader.set_deadline(self.server.read_timeout)
        try:
            if self._body_length is None:
                body = read_chunked(self.reader, limit)
            elif self._body_length > limit:
                raise MalformedRequest(413, "Payload Too Large")
            else:
                body = self.reader.read(self._body_length)
                if len(body) < self._body_length:
                    body = None
            if body is None:
                self.close_connection = True
            return body
        except socket.timeout:
            self._refuse(408, "Request Timeout")
        except MalformedRequest as error:
            self._refuse(error.status, error.message)
        return None

    def _refuse(self, status: int, message: str) -> None:
        """Answer an error and close the connection, reading what the client still sends for a moment, so
        that closing with unread data does not reset the connection before the client reads our answer."""
        self.close_connection = True
        try:
            HTTPApp.refuse(_SocketResponder(self), status, message)
            self.connection.shutdown(socket.SHUT_WR)
            self.reader.set_deadline(min(self.server.read_timeout, 2.0))
            while self.reader.read(65536):
                pass
        except OSError:
            pass

    def log_message(self, format: str, *args: Any) -> None:
        # The request line of a legacy POST carries its session id (?session_id=): cut short, as in every log line.
        log.debug("mcplite HTTP %s: %s", self.address_string(), redact_session_ids(format % args))


class _Workers:
    """The threads that serve requests: started as requests need them, up to ``limit``, then reused; later
    requests wait their turn in order. A thread idle for ``idle_timeout`` seconds ends, so that a burst leaves
    no crowd of threads behind."""

    def __init__(self, limit: int, name: str, idle_timeout: float = 5.0) -> None:
        self.limit = limit
        self.idle_timeout = idle_timeout
        self._name = name
        # Guards _jobs, _threads and _sleeping (threads waiting for a job); waited on by idle threads.
        self._ready = threading.Condition(threading.Lock())
        self._jobs: Deque[Tuple[Callable[..., None], Tuple[Any, ...]]] = deque()
        self._threads = 0
        self._sleeping = 0
        self._started = 0

    def submit(self, job: Callable[..., None], *args: Any) -> None:
        number = 0
        with self._ready:
            self._jobs.append((job, args))
            start = len(self._jobs) > self._sleeping and self._threads < self.limit
            if start:
                self._threads += 1
                self._started += 1
                number = self._started
            else:
                self._ready.notify()
        if start:
            try:
                threading.Thread(target=self._work, name=f"{self._name}-{number}", daemon=True).start()
            except BaseException:  # no thread to be had: the job waits for one that finishes
                with self._ready:
                    self._threads -= 1
                raise

    def _work(self) -> None:
        while True:
            with self._ready:
                while not self._jobs:
                    self._sleeping += 1
                    try:
                        woken = self._ready.wait(self.idle_timeout)
                    finally:
                        self._sleeping -= 1
                    if not woken and not self._jobs:
                        self._threads -= 1
                        return
                job, args = self._jobs.popleft()
            try:
                job(*args)
            except Exception:  # the jobs report their own failures; this guards the thread
                log.exception("mcplite HTTP: a worker's job failed")
            del job, args  # not kept while idle: they hold the connection and its response until the next job


class _Reactor:
    """The one thread that waits on every connection no worker holds (`_Connection`), with a selector (epoll on
    Linux: no limit on descriptors).

    It reads request heads as they trickle in and hands a connection to a worker once its head is whole; it
    closes connections whose head is late (``header_timeout``) or that stay idle (``keepalive_timeout``),
    tracking deadlines in a heap; and it sends what parked streams queue, with non-blocking sends (watching
    for writability only while bytes wait), noticing at once a client that leaves. Other threads talk to it
    through `call` only: a queue, and one byte on a socket pair to wake it.
    """

    def __init__(self, server: "_MCPHTTPServer") -> None:
        self._server = server
        self._selector = selectors.DefaultSelector()
        self._wake_reader, self._wake_writer = socket.socketpair()
        self._wake_reader.setblocking(False)
        self._wake_writer.setblocking(False)
        self._selector.register(self._wake_reader, selectors.EVENT_READ)
        # Guards _calls and _woken.
        self._calls_lock = threading.Lock()
        self._calls: Deque[Tuple[Callable[..., None], Tuple[Any, ...]]] = deque()
        self._woken = False
        # The reactor thread's own (no lock): the connections it holds and their deadlines (when, order, conn).
        self._held: Set[_Connection] = set()
        self._deadlines: List[Tuple[float, int, _Connection]] = []
        self._order = 0
        self._stopping = False
        self._thread: Optional[threading.Thread] = None

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="mcplite-http-reactor", daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 1.0) -> None:
        """End the thread; it closes the connections it still holds."""
        self.call(self._stop)
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)
        if self._thread is None or not self._thread.is_alive():
            self._wake_reader.close()
            self._wake_writer.close()
            self._selector.close()

    def sync(self, timeout: float) -> None:
        """Wait, up to ``timeout`` s, until the reactor has run every call made before this one (what streams
        ended by a shutdown have queued is then handed to the kernel, before their connections are cut)."""
        if self._thread is not None and self._thread.is_alive() and self._thread is not threading.current_thread():
            caught_up = threading.Event()
            self.call(caught_up.set)
            caught_up.wait(timeout)

    def call(self, function: Callable[..., None], *args: Any) -> None:
        """Run ``function(*args)`` on the reactor thread, soon, in the order of the calls (any thread)."""
        with self._calls_lock:
            self._calls.append((function, args))
            if self._woken:
                return
            self._woken = True
        try:
            self._wake_writer.send(b"\0")
        except OSError:  # (full: it is awake anyway; closed: stopped)
            pass

    # -- on the reactor thread --
    def _run(self) -> None:
        select = self._selector.select
        while not self._stopping:
            timeout = None
            if self._deadlines:
                timeout = max(0.0, self._deadlines[0][0] - time.monotonic())
            for key, events in select(timeout):
                conn = key.data
                if conn is None:
                    try:
                        self._wake_reader.recv(4096)
                    except OSError:
                        pass
                elif events & selectors.EVENT_READ and conn.state is _HEAD:
                    self._read_head(conn)
                elif conn.state is _STREAM:
                    if events & selectors.EVENT_READ:
                        self._watch_stream(conn)
                    if events & selectors.EVENT_WRITE and conn.state is _STREAM:
                        self.flush(conn)
            self._run_calls()
            if self._deadlines:
                self._expire(time.monotonic())
                if len(self._deadlines) > 2 * len(self._held):
                    self._drop_stale_deadlines()
        self.close_all()

    def _run_calls(self) -> None:
        while True:
            with self._calls_lock:
                if not self._calls:
                    self._woken = False
                    return
                calls, self._calls = self._calls, deque()
            for function, args in calls:
                try:
                    function(*args)
                except Exception:
                    log.exception("mcplite HTTP: the reactor's call %r failed", function)

    def _stop(self) -> None:
        self._stopping = True

    def close_all(self) -> None:
        """Close every connection held here (the server is closing): idle ones at once, streams as their
        clients' leaving would (their cleanup runs on a worker, which closes them)."""
        for conn in list(self._held):
            self._close(conn)

    def _watch(self, conn: _Connection, interest: int) -> None:
        if interest == conn.interest:
            return
        try:
            if not interest:
                self._selector.unregister(conn.sock)
            elif not conn.interest:
                self._selector.register(conn.sock, interest, conn)
            else:
                self._selector.modify(conn.sock, interest, conn)
        except (KeyError, ValueError, OSError):  # closed meanwhile (a drain shut it): reading will say so
            pass
        conn.interest = interest

    def _set_deadline(self, conn: _Connection, when: float) -> None:
        conn.deadline = when
        self._order += 1
        heapq.heappush(self._deadlines, (when, self._order, conn))

    def _expire(self, now: float) -> None:
        deadlines = self._deadlines
        while deadlines and deadlines[0][0] <= now:
            when, _, conn = heapq.heappop(deadlines)
            if conn.deadline == when and conn.state is _HEAD and conn in self._held:
                self._close(conn)  # a head too slow, or a connection idle too long: closed, as they always were

    def _drop_stale_deadlines(self) -> None:
        """Forget the deadlines no connection waits for any more: those of connections that were closed, handed
        to a worker, parked as a stream or given a later deadline. `_expire` skips them, but only once their
        time comes (up to ``keepalive_timeout`` later), and until then each holds its connection, its buffers and
        its handler: ten thousand clients that leave would be kept for as long. Run when more than half of the
        entries are stale (each connection held has at most one live), so each entry is looked at a bounded number
        of times."""
        self._deadlines = [entry for entry in self._deadlines
                           if entry[2].deadline == entry[0] and entry[2].state is _HEAD and entry[2] in self._held]
        heapq.heapify(self._deadlines)

    def adopt(self, conn: _Connection) -> None:
        """A new connection: it has ``header_timeout`` for its first request's head."""
        self._server.connection_opened(conn.sock)
        conn.sock.setblocking(False)
        self._held.add(conn)
        conn.state = _HEAD
        self._set_deadline(conn, time.monotonic() + self._server.header_timeout)
        self._watch(conn, selectors.EVENT_READ)

    def wait_for_request(self, conn: _Connection) -> None:
        """A worker has answered; the connection waits up to ``keepalive_timeout`` for its next request."""
        if self._stopping:
            self._server.close_connection(conn)
            return
        conn.sock.setblocking(False)
        self._held.add(conn)
        conn.state = _HEAD
        conn.head_since = 0.0
        self._set_deadline(conn, time.monotonic() + self._server.keepalive_timeout)
        self._watch(conn, selectors.EVENT_READ)
        self._read_head(conn)  # what the client sent meanwhile, and whether it is gone

    def _read_head(self, conn: _Connection) -> None:
        try:
            arrived = conn.reader.feed()
        except BlockingIOError:
            arrived = None
        except OSError:
            arrived = b""
        if arrived == b"":
            self._close(conn)  # the client closed it (or a drain shut it)
            return
        if arrived and not conn.head_since:
            conn.head_since = time.monotonic()
            if conn.served:  # kept alive: the head has header_timeout from its first byte
                self._set_deadline(conn, conn.head_since + self._server.header_timeout)
        if conn.reader.head_arrived():
            self._hand_to_worker(conn)

    def _hand_to_worker(self, conn: _Connection) -> None:
        self._watch(conn, 0)
        self._held.discard(conn)
        conn.state = _WORKER
        conn.deadline = 0.0
        conn.head_since = 0.0
        self._server.workers.submit(conn.handler.serve)

    def adopt_stream(self, conn: _Connection) -> None:
        """A worker has parked a stream (`_SocketResponder.park`): its connection is the reactor's now."""
        conn.sock.setblocking(False)
        self._held.add(conn)
        conn.state = _STREAM
        self._watch(conn, selectors.EVENT_READ)
        self.flush(conn)

    def _watch_stream(self, conn: _Connection) -> None:
        """A parked stream's connection is readable: the client left (EOF, or an error), or sent more."""
        try:
            arrived = conn.reader.feed()
        except BlockingIOError:
            return
        except OSError:
            arrived = b""
        if arrived == b"" or conn.reader.buffered() > _MAX_HEAD_BUFFER:
            with conn.lock:
                conn.gone = True
                conn.out = bytearray()
            self._stream_over(conn)

    def flush(self, conn: _Connection) -> None:
        """Send what a parked stream has queued, as much as the socket takes; end the stream once it is
        released and all is sent, or the client has gone."""
        if conn.state is not _STREAM:
            return
        with conn.lock:
            conn.flush_queued = False
            if conn.out and not conn.gone:
                try:
                    sent = conn.sock.send(conn.out)
                except BlockingIOError:
                    sent = 0
                except OSError:
                    conn.gone = True
                    conn.out = bytearray()
                else:
                    del conn.out[:sent]
            waiting, gone = bool(conn.out), conn.gone
            released = conn.released is not None and conn.released.is_set()
        if gone or (released and not waiting):
            self._stream_over(conn)
        else:
            self._watch(conn, selectors.EVENT_READ | (selectors.EVENT_WRITE if waiting else 0))

    def _stream_over(self, conn: _Connection) -> None:
        """The parked stream has ended (released and sent), or its client has gone: a worker runs the app's
        cleanup, then the connection is closed or waits for its next request."""
        self._watch(conn, 0)
        self._held.discard(conn)
        conn.state = _WORKER
        with conn.lock:
            conn.parked = False
            done, conn.done = conn.done, None
            client_left = conn.gone
            if client_left:
                conn.handler.close_connection = True
            if conn.close_after:
                conn.handler.close_connection = True
        if conn.handler.close_connection or self._server.draining:
            self._server.close_connection(conn)  # now, not after the cleanup: a shutdown waits for this only
        else:
            conn.sock.settimeout(self._server.read_timeout)
        self._server.workers.submit(self._server.stream_ended, conn, done, client_left)

    def _close(self, conn: _Connection) -> None:
        self._watch(conn, 0)
        self._held.discard(conn)
        if conn.state is _STREAM:
            with conn.lock:
                conn.gone = True
                conn.parked = False
                done, conn.done = conn.done, None
            conn.state = _WORKER
            self._server.close_connection(conn)
            self._server.workers.submit(self._server.stream_ended, conn, done, True)
            return
        self._server.close_connection(conn)


class _MCPHTTPServer(HTTPServer):
    """The standard library's ``HTTPServer``, with parked connections, a bounded number of them, and a clean
    shutdown.

    Three kinds of threads: this one accepts (`serve_forever`); the reactor (`_Reactor`) waits on every
    connection between requests and carries every parked stream; the workers (`_Workers`) serve one request
    each, from its whole head to the end of its response. So an idle keep-alive connection and an open GET or
    listen stream hold no thread, and a thousand of them cost a few dozen threads, not a thousand.

    Each open connection is either idle (waiting for its next request) or busy (from its request line to the
    end of its response, a parked stream's included), so that a graceful shutdown (`drain`) can close the idle
    ones at once and wait for the busy ones.
    """

    request_queue_size = 1024

    def __init__(self, address: Tuple[str, int], app: HTTPApp, *, max_connections: int, header_timeout: float,
                 read_timeout: float, keepalive_timeout: float = 30.0, max_workers: int = 256,
                 stream_buffer: int = 1 << 20) -> None:
        self.app = app
        self.header_timeout = header_timeout
        self.keepalive_timeout = keepalive_timeout
        self.read_timeout = read_timeout
        self.stream_buffer = stream_buffer
        _raise_descriptor_limit(max_connections)
        self.workers = _Workers(max_workers, "mcplite-http")
        self.reactor = _Reactor(self)
        self._slots = threading.BoundedSemaphore(max_connections)
        self._open_changed = threading.Condition()  # guards _open and draining
        self._open: Dict[socket.socket, bool] = {}  # each open connection -> whether a request is in progress
        self._busy = 0  # how many of them are (guarded as _open)
        #: The keep-alive connections waiting for their next request, each with since when (guarded as _open):
        #: the one idle longest is closed when every slot is taken (`_make_room`).
        self._idle_since: Dict[socket.socket, float] = {}
        #: Set by `drain`: connections serve no further request, and every response says ``Connection: close``.
        self.draining = False
        # serve_forever() waits on the listening socket and on this pair, and shutdown() writes to the pair: so
        # stopping is immediate (socketserver's own loop notices shutdown() only at its next poll).
        self._wake_reader, self._wake_writer = socket.socketpair()
        self._stopping = threading.Event()
        self._stopped = threading.Event()  # set while serve_forever() is not running
        self._stopped.set()
        #: Connections turned away with 503, each with when it is closed at the latest: the accepting thread
        #: reads and drops what their clients still send until they close, so that closing does not reset a
        #: connection whose client is still writing (which would lose it the 503 and its Retry-After).
        #: Touched by the accepting thread only (serve_forever and what it calls), like _selector.
        self._turned_away: Dict[socket.socket, float] = {}
        self._selector: Optional[selectors.BaseSelector] = None
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        # (socketserver never makes the handler: `process_request` gives each connection to the reactor instead)
        super().__init__(address, BaseHTTPRequestHandler)

    def serve_forever(self, poll_interval: float = 0.5) -> None:
        """Accept connections until `shutdown`; ``poll_interval`` is ignored, as nothing needs polling."""
        self._stopped.clear()
        self.reactor.start()
        try:
            with selectors.DefaultSelector() as selector:
                self._selector = selector
                selector.register(self, selectors.EVENT_READ)
                selector.register(self._wake_reader, selectors.EVENT_READ)
                while not self._stopping.is_set():
                    # `shutdown` wakes the select through the socket pair. The timeout is for Windows only,
                    # where a select that waits forever cannot be interrupted by Ctrl-C (and for the next
                    # turned-away connection to close by its deadline).
                    timeout = _CTRL_C_WAKE
                    if self._turned_away:
                        timeout = max(0.0, min(timeout, min(self._turned_away.values()) - time.monotonic()))
                    ready = selector.select(timeout)
                    if self._stopping.is_set():
                        break
                    for key, _ in ready:
                        turned_away = key.fileobj
                        if isinstance(turned_away, socket.socket) and turned_away in self._turned_away:
                            self._drop_input(turned_away)
                    if any(key.fileobj is self for key, _ in ready):
                        self._handle_request_noblock()  # type: ignore[attr-defined]  # BaseServer's, untyped
                    if self._turned_away:
                        self._close_turned_away(time.monotonic())
                    self.service_actions()
        finally:
            self._close_turned_away(None)
            self._selector = None
            self._stopped.set()

    def request_stop(self) -> None:
        """Make `serve_forever` return soon; returns at once, so a signal handler may call it."""
        self._stopping.set()
        try:
            self._wake_writer.send(b"\0")
        except OSError:
            pass

    def shutdown(self) -> None:
        """Stop `serve_forever` and wait until it has returned."""
        self.request_stop()
        self._stopped.wait()

    def server_close(self) -> None:
        super().server_close()
        self.reactor.stop()
        self._wake_reader.close()
        self._wake_writer.close()

    def server_bind(self) -> None:
        # HTTPServer.server_bind also looks the host's name up in DNS, which can take seconds; skip it.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]  # type: ignore[assignment]

    def process_request(self, request: Any, client_address: Any) -> None:
        """A new connection: to the reactor, which waits for its first request (no thread waits for it)."""
        if not self._slots.acquire(blocking=False):
            self._make_room()
            self._turn_away(request)
            return
        try:
            request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass
        conn = _Connection(request, client_address, self)
        self.reactor.call(self.reactor.adopt, conn)

    def close_connection(self, conn: _Connection) -> None:
        """Close a connection its holder is done with, and give its slot back (once)."""
        if conn.closed:
            return
        conn.closed = True
        sock = conn.sock
        try:
            sock.shutdown(socket.SHUT_WR)  # (as socketserver does: our side ends cleanly)
        except OSError:
            pass
        sock.close()
        self.connection_closed(sock)
        self._slots.release()

    def stream_ended(self, conn: _Connection, done: Optional[Callable[[bool], None]], client_left: bool) -> None:
        """On a worker: a parked stream has ended (or its client left): the app's cleanup, then the connection
        is closed or waits for its next request."""
        try:
            if done is not None:
                done(client_left)
        except Exception:
            log.exception("mcplite HTTP: ending a stream failed")
        finally:
            self.request_finished(conn.sock)
            if not conn.closed:
                conn.handler.after_response()

    def _turn_away(self, request: socket.socket) -> None:
        """Every connection thread is busy: answer 503 from the accepting thread, without blocking it.

        The client may not have finished writing its request: the answer goes out, then the end of our
        side (FIN), and the connection stays open, its input read and dropped by the accepting thread, until
        the client closes it or `_TURNED_AWAY_LINGER` has passed. Closing at once would reset it under a
        client still writing, which then sees a broken pipe instead of the 503 and its ``Retry-After``.
        """
        body = error_body("Service Unavailable: too many connections")
        try:
            request.setblocking(False)
            request.send(b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                         b"Retry-After: 1\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%b" % (len(body), body))
            request.shutdown(socket.SHUT_WR)
        except OSError:
            self.shutdown_request(request)
            return
        if self._selector is None or len(self._turned_away) >= _MAX_TURNED_AWAY:
            try:
                request.recv(65536)  # what has arrived: closing with unread input would reset at once
            except OSError:
                pass
            self.shutdown_request(request)
            return
        self._turned_away[request] = time.monotonic() + _TURNED_AWAY_LINGER
        self._selector.register(request, selectors.EVENT_READ)

    def _make_room(self) -> None:
        """Every slot is taken: close the keep-alive connection idle longest, if one waits for a next request,
        so that the client just turned away finds a slot when it comes back (its 503 says after 1 s). Idle
        connections of clients long gone must not keep active ones out; a client whose idle connection is
        closed opens another (HTTP clients retry a request that met a closing keep-alive connection)."""
        with self._open_changed:
            if not self._idle_since:
                return
            idle = min(self._idle_since, key=self._idle_since.__getitem__)
            del self._idle_since[idle]
        _shut(idle)  # wakes its thread, waiting for a next request; it ends and gives its slot back

    def _drop_input(self, request: socket.socket) -> None:
        """Read what a turned-away client sent; close the connection once it has closed its side."""
        try:
            ended = not request.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            ended = True
        if ended:
            self._forget_turned_away(request)

    def _close_turned_away(self, now: Optional[float]) -> None:
        """Close the turned-away connections whose time is up at ``now`` (all of them, for None)."""
        for request in [sock for sock, deadline in self._turned_away.items() if now is None or deadline <= now]:
            self._forget_turned_away(request)

    def _forget_turned_away(self, request: socket.socket) -> None:
        self._turned_away.pop(request, None)
        if self._selector is not None:
            try:
                self._selector.unregister(request)
            except (KeyError, ValueError):
                pass
        request.close()

    def connection_opened(self, sock: socket.socket) -> None:
        with self._open_changed:
            self._open[sock] = False

    def request_started(self, sock: socket.socket) -> None:
        with self._open_changed:
            if not self._open.get(sock, True):
                self._busy += 1
            self._open[sock] = True
            self._idle_since.pop(sock, None)

    def request_finished(self, sock: socket.socket) -> None:
        with self._open_changed:
            if self._open.get(sock):
                self._busy -= 1
                self._open[sock] = False
                self._idle_since[sock] = time.monotonic()
                if not self._busy:  # (what `drain` waits for: told once, not once a connection)
                    self._open_changed.notify_all()

    def connection_closed(self, sock: socket.socket) -> None:
        with self._open_changed:
            if self._open.pop(sock, False):
                self._busy -= 1
            self._idle_since.pop(sock, None)
            if not self._busy or not self._open:
                self._open_changed.notify_all()

    def drain(self, grace: float) -> bool:
        """Shut down gracefully, once `serve_forever` has returned: stop accepting, close the idle connections,
        end the open streams, and wait up to ``grace`` s for the requests in progress to be answered.

        Returns whether they all were. A connection that was idle when the drain began is closed even if its
        next request is already on the way (the keep-alive race every server has: the client sees the
        connection close with no answer, and may retry); a request whose line has arrived is served, with
        ``Connection: close``.
        """
        self.socket.close()  # stop accepting: a connection still in the backlog is refused
        with self._open_changed:
            self.draining = True
            for sock, busy in self._open.items():
                if not busy:
                    _shut(sock)  # wakes its thread, waiting for a next request that will not be read
        self.app.begin_drain()  # ends the GET streams, whose requests would otherwise never end
        with self._open_changed:
            return self._open_changed.wait_for(lambda: not self._busy, grace)

    def close_connections(self, timeout: float) -> None:
        """Cut every open connection and wait up to ``timeout`` s for their threads to finish."""
        with self._open_changed:
            self.draining = True
        self.reactor.sync(min(timeout, _FLUSH_AT_CLOSE))  # the ends of the streams just ended go out first
        self.reactor.call(self.reactor.close_all)  # what it holds, at once (no shutdown and event for each)
        with self._open_changed:
            for sock, busy in self._open.items():
                if busy:  # (held by a worker: shut, so that its reads and writes fail now)
                    _shut(sock)
            self._open_changed.wait_for(lambda: not self._open, timeout)


_descriptor_limit_said = False


def _raise_descriptor_limit(connections: int) -> None:
    """Raise the process's soft limit on open files (RLIMIT_NOFILE) toward its hard limit, as far as
    ``connections`` need; say once in the log when it cannot go that far (each connection is a descriptor)."""
    global _descriptor_limit_said
    try:
        import resource
    except ImportError:  # (Windows: no such limit to raise)
        return
    wanted = connections + _SPARE_DESCRIPTORS
    soft = wanted  # (unknown: then nothing to say)
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft != resource.RLIM_INFINITY and soft < wanted:
            target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
            if target > soft:
                resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
                soft = target
    except (OSError, ValueError):
        pass
    if soft != resource.RLIM_INFINITY and soft < wanted and not _descriptor_limit_said:
        _descriptor_limit_said = True
        log.warning("mcplite HTTP: the process may open %d files (RLIMIT_NOFILE), fewer than the %d that "
                    "max_connections=%d needs: raise the hard limit (ulimit -Hn, LimitNOFILE= in systemd) or expect "
                    "connections refused when it runs out", soft, wanted, connections)


def _shut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


def _parse_address(address: str) -> Tuple[str, int]:
    """``"host:port"``, ``"[::1]:port"``, ``":port"`` or ``"port"`` -> (host, port); the host defaults to 127.0.0.1."""
    host, sep, port = address.rpartition(":")
    if not sep:
        host, port = "", address
    host = host.strip("[]") or "127.0.0.1"
    if not (port.isascii() and port.isdigit()):
        raise ValueError(f"expected 'host:port', got {address!r}")
    return host, int(port)


def _is_loopback(host: str) -> bool:
    host = host.strip("[]").lower()
    if host == "localhost":
        return True
    try:
        return ip_address(host).is_loopback
    except ValueError:
        return False


class HTTPServerThread:
    """A `Server` served over HTTP by the built-in server (workers, and a reactor for idle connections and open
    streams), in a background thread.

    The socket is bound when this is created (``port`` 0 picks a free one), so `url` is known at once::

        with HTTPServerThread(server, "127.0.0.1:0") as http:
            client = Client(http.url)

    Args:
        server: the `Server` to serve.
        address: ``"host:port"``; the host defaults to 127.0.0.1.
        max_connections: connections open at once; more are refused with 503. An idle keep-alive connection
            and an open stream (a GET stream, a legacy ``/sse`` stream, a ``subscriptions/listen``) hold no
            thread, only a descriptor: the process raises its own open-file limit (RLIMIT_NOFILE) toward
            its hard limit to fit, and says so in the log once if it cannot.
        max_workers: requests served at once, each on a thread of its own from its complete head to the end of
            its response (a parked stream's thread is free once its headers are out); more wait their turn.
        stream_buffer: bytes an open stream may have waiting for a client that reads too slowly; beyond it the
            client is cut off, with a log line (it may resume with ``Last-Event-ID``).
        header_timeout: seconds a request's line and headers may take to arrive: from the moment the
            connection opens for its first request, from the first byte of each later one. A slow or silent
            client holds no thread meanwhile, and is closed after this.
        keepalive_timeout: seconds a connection may stay idle between one response and its next request.
        read_timeout: seconds a request's body may take to arrive; also bounds each write to a client.
        shutdown_grace: seconds `serve` gives the requests in progress to be answered when SIGTERM or SIGINT
            stops it (`shutdown` with ``grace``).
        app_options: passed to `HTTPApp` (path, stateless, json_response, allowed_hosts, authenticate...).

    Raises:
        ValueError: a malformed address, or one that is not loopback without ``allowed_hosts`` (DNS rebinding:
            name the hosts clients use, or ``["*"]``).
    """

    def __init__(self, server: Any, address: str = "127.0.0.1:0", *, max_connections: int = 16384,
                 max_workers: int = 256, stream_buffer: int = 1 << 20, header_timeout: float = 10.0,
                 keepalive_timeout: float = 30.0, read_timeout: float = 30.0, shutdown_grace: float = 5.0,
                 **app_options: Any) -> None:
        host, port = _parse_address(address)
        self.shutdown_grace = shutdown_grace
        loopback = _is_loopback(host)
        if app_options.get("allowed_hosts") is None:
            if not loopback:
                raise ValueError(unlisted_hosts(f"bound to {host}"))
            app_options["allowed_hosts"] = LOOPBACK_HOSTS
        self.app = HTTPApp(server, **app_options)
        self.app.guard.on_loopback = loopback  # known here, whatever the allowed hosts: loopback origins or none
        self._httpd = _MCPHTTPServer((host, port), self.app, max_connections=max_connections,
                                     header_timeout=header_timeout, keepalive_timeout=keepalive_timeout,
                                     read_timeout=read_timeout, max_workers=max_workers,
                                     stream_buffer=stream_buffer)
        self.host = host
        self.port: int = self._httpd.server_address[1]
        url_host = f"[{host}]" if ":" in host else host
        #: The MCP endpoint's URL.
        self.url = f"http://{url_host}:{self.port}{self.app.path}"
        self._thread: Optional[threading.Thread] = None

    def start(self) -> "HTTPServerThread":
        """Serve in a background thread; returns self."""
        self._thread = threading.Thread(target=self.serve_forever, name="mcplite-http-server", daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        """Serve in the calling thread until `shutdown`."""
        self._httpd.serve_forever()

    def shutdown(self, timeout: float = 5.0, *, grace: float = 0.0) -> None:
        """Stop accepting, end every session and stream, and wait up to ``timeout`` s for connections to end.

        With a ``grace`` (seconds), shut down gracefully first: idle connections are closed and open GET
        streams ended at once (cleanly), and the requests in progress have up to ``grace`` s to be answered
        (each with ``Connection: close``) before the rest is cut. Returns as soon as they are answered.
        """
        self._httpd.shutdown()  # (at once if serve_forever has already returned, or never ran)
        if self._thread is not None:
            self._thread.join(timeout)
        if grace > 0 and not self._httpd.draining:
            self._httpd.drain(grace)
        self.app.close()
        self._httpd.close_connections(timeout)
        self._httpd.server_close()

    def __enter__(self) -> "HTTPServerThread":
        return self if self._thread is not None else self.start()

    def __exit__(self, *exc_info: Any) -> None:
        self.shutdown()


def start_http_server(server: Any, address: str = "127.0.0.1:0", **options: Any) -> HTTPServerThread:
    """Serve ``server`` over HTTP in a background thread (see `HTTPServerThread`); call ``shutdown()`` to stop."""
    return HTTPServerThread(server, address, **options).start()


_AFTER_GRACE = 0.25  # seconds `serve` waits for connection threads after cutting what the grace did not end


def serve(server: Any, address: str, **options: Any) -> None:
    """Serve ``server`` over HTTP until SIGTERM or Ctrl-C (`Server.run(http=...)`); options as for `HTTPServerThread`.

    Either signal stops it gracefully: it stops accepting, closes idle connections, ends open GET streams
    cleanly, gives the requests in progress up to ``shutdown_grace`` seconds (5 by default) to be answered,
    then returns (``python -m mcplite serve --http`` then exits 0). A second signal ends the grace: SIGINT
    (Ctrl-C) cuts what is left at once, SIGTERM ends the process as SIGTERM normally does. Signals are only
    handled when this runs in the main thread.
    """
    http = HTTPServerThread(server, address, **options)
    print(f"mcplite: serving {server.name!r} at {http.url}", file=sys.stderr)
    restore = _stop_on_signals(http)
    try:
        http.serve_forever()
    except KeyboardInterrupt:  # (a Ctrl-C before the handlers were in place, or where there are none)
        pass
    finally:
        try:
            http.shutdown(_AFTER_GRACE, grace=http.shutdown_grace)
        except KeyboardInterrupt:  # a second Ctrl-C: no more grace
            http.shutdown(_AFTER_GRACE)
        finally:
            restore()


def _stop_on_signals(http: HTTPServerThread) -> Callable[[], None]:
    """Make SIGTERM and SIGINT stop ``http``'s accept loop, once; returns what puts the old handlers back."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None  # only the main thread may handle signals
    import signal

    names = [name for name in ("SIGTERM", "SIGINT") if hasattr(signal, name)]
    previous = {name: signal.getsignal(getattr(signal, name)) for name in names}

    def stop(signum: int, frame: Any) -> None:
        # A second signal is not asked to be polite: SIGINT raises KeyboardInterrupt (which ends the grace),
        # SIGTERM does what it does by default.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        if hasattr(signal, "SIGTERM"):
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
        http._httpd.request_stop()  # only sets a flag and writes a byte: safe between any two bytecodes

    for name in names:
        signal.signal(getattr(signal, name), stop)

    def restore() -> None:
        for name, handler in previous.items():
            if handler is not None:
                signal.signal(getattr(signal, name), handler)

    return restore
