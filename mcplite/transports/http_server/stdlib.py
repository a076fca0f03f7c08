"""Serve a `Server` over HTTP with the standard library's threading server: `serve`, `HTTPServerThread`.

Two layers:

- `HTTPApp` (`app`, with `streams` and `sessions`), the core. It takes one parsed request (`IncomingRequest`) and
  answers it through a `Responder` that the HTTP server in front of it provides. It owns the MCP sessions,
  routes every outgoing message to exactly one stream, and applies the security checks. It never touches
  a socket.
- Adapters that parse HTTP and implement `Responder`: the standard library's ``ThreadingHTTPServer``
  here and a PEP 3333 application in `wsgi`.

This adapter adds what only a server that owns its sockets can do: reading a request has deadlines (a slow
or silent client is cut off; 408), the number of connection threads is bounded (503), ``Host`` defaults to
the loopback names when bound to loopback and must be listed (``allowed_hosts``) to bind anywhere else (DNS
rebinding; 403), and the request grammar is strict (RFC 9112, `protocol.http11`), so that no request can
be framed two ways to smuggle another past a proxy: a malformed request line, header section or chunked body is answered 400, 413, 431, 501 or 505, and its connection closed.

The core's public names are importable from here too.
"""

import select
import selectors
import socket
import socketserver
import sys
import threading
import time
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from ipaddress import ip_address
from typing import Any, Callable, Dict, Optional, Tuple
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

    def await_input(self, seconds: float) -> bool:
        """Wait up to ``seconds`` for input (True at once if some is buffered); False if the client closed.
        Raises `socket.timeout` when nothing arrives in time."""
        if self._buffer:
            return True
        self.set_deadline(seconds)
        return self._fill()

    def read(self, size: int) -> bytes:
        while len(self._buffer) < size and self._fill():
            pass
        return self._take(min(size, len(self._buffer)))

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


class _SocketResponder(Responder):
    """Writes one response on a connection of the threading server; each call is one ``sendall``."""

    def __init__(self, handler: "_ConnectionHandler") -> None:
        self._handler = handler
        self._sock: socket.socket = handler.connection
        self._head_only = handler.command == "HEAD"
        self._chunked = handler.request_version == "HTTP/1.1"
        #: The writing end of the socket pair a `wait_released` in progress also watches (see `wake`).
        self._waker: Optional[socket.socket] = None

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

    def respond(self, status: int, headers: Headers, body: bytes) -> None:
        head = self._head(status, headers, f"Content-Length: {len(body)}\r\n")
        self._sock.sendall(head if self._head_only else head + body)

    def start_stream(self, headers: Headers, first: bytes) -> None:
        if self._chunked:
            head = self._head(200, headers, "Transfer-Encoding: chunked\r\n")
            self._sock.sendall(head + self._frame(first) if first else head)
        else:  # HTTP/1.0: the body ends when the connection does
            self._handler.close_connection = True
            self._sock.sendall(self._head(200, headers, "") + first)

    def write(self, data: bytes) -> None:
        self._sock.sendall(self._frame(data) if self._chunked else data)

    def end_stream(self, last: bytes = b"", *, close_connection: bool = False) -> None:
        if self._chunked:
            self._sock.sendall(self._frame(last) + b"0\r\n\r\n" if last else b"0\r\n\r\n")
        elif last:
            self._sock.sendall(last)
        if close_connection or not self._chunked:
            self._handler.close_connection = True
            self._sock.shutdown(socket.SHUT_RDWR)

    def wait_released(self, released: threading.Event) -> bool:
        """Wait for ``released`` while watching the connection: a client that closes it (EOF or a reset) is
        seen at once and answered False, so that its stream frees this thread and its connection slot now,
        not at the next keep-alive write. `wake` ends the watch through a socket pair of this wait's own
        (the connection itself must stay usable: the client may send its next request on it)."""
        sock = self._sock
        try:
            waker, self._waker = socket.socketpair()
        except OSError:  # out of descriptors: wait as a server that cannot watch does
            released.wait()
            return True
        try:
            while not released.is_set():
                try:
                    readable = select.select([sock, waker], [], [])[0]
                except (OSError, ValueError):  # the connection is closed: nothing left to watch
                    break
                if released.is_set() or sock not in readable:
                    continue
                try:
                    peeked = sock.recv(1, socket.MSG_PEEK)
                except BlockingIOError:
                    continue
                except OSError:
                    return False  # reset by the client
                if not peeked:
                    return False  # the client closed the connection
                break  # it sent more (a next request): watching would spin; wait as the default does
        finally:
            writer, self._waker = self._waker, None
            for end in (waker, writer):
                if end is not None:
                    end.close()
        released.wait()
        return True

    def wake(self) -> None:
        writer = self._waker
        if writer is not None:
            try:
                writer.send(b"\0")
            except OSError:
                pass  # the wait has just ended and closed it

    @staticmethod
    def _frame(data: bytes) -> bytes:
        return b"%x\r\n%b\r\n" % (len(data), data)


class _ConnectionHandler(BaseHTTPRequestHandler):
    """Reads requests from one connection (HTTP/1.1 keep-alive) and hands them to the server's `HTTPApp`."""

    protocol_version = "HTTP/1.1"
    server_version = "mcplite"
    server: "_MCPHTTPServer"  # pyright: ignore[reportIncompatibleVariableOverride]  # always ours
    raw_requestline: bytes
    _body_length: Optional[int]  # of the request being read, as `body_framing` found it; None: chunked

    def setup(self) -> None:
        self.connection = self.request
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.connection.settimeout(self.server.read_timeout)
        self.reader = _DeadlineReader(self.connection)
        self.rfile = self.reader  # type: ignore[assignment]  # where the base class reads the request line
        self.wfile = _SocketWriter(self.connection)  # type: ignore[assignment]
        self._served = False  # whether a request has begun on this connection (see handle_one_request)
        self.server.connection_opened(self.connection)

    def _await_next_request(self) -> bool:
        """Wait up to ``keepalive_timeout`` for a kept-alive connection's next request to begin; False when the
        client closes the connection or stays silent that long."""
        try:
            return self.reader.await_input(self.server.keepalive_timeout)
        except OSError:  # a timeout, or the connection reset or shut by a drain
            return False

    def finish(self) -> None:
        self.server.connection_closed(self.connection)

    def handle_one_request(self) -> None:
        if self.server.draining:  # shutting down: no further request on this connection
            self.close_connection = True
            return
        # A new connection has header_timeout for its first request's line and head: one that never sends
        # anything must not hold its thread for the (longer) keep-alive timeout. A connection kept alive may
        # wait keepalive_timeout for its next request, whose head then has header_timeout from its first byte.
        if self._served and not self._await_next_request():
            self.close_connection = True
            return
        self._served = True
        self.reader.set_deadline(self.server.header_timeout)
        try:
            super().handle_one_request()
        finally:
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


class _MCPHTTPServer(ThreadingHTTPServer):
    """``ThreadingHTTPServer`` with a bounded number of connection threads and a clean shutdown.

    Each open connection is either idle (waiting for its next request) or busy (from its request line to the
    end of its response), so that a graceful shutdown (`drain`) can close the idle ones at once and wait for
    the busy ones.
    """

    daemon_threads = True
    block_on_close = False  # shutdown() waits for connections itself, with a timeout
    request_queue_size = 128

    def __init__(self, address: Tuple[str, int], app: HTTPApp, *, max_connections: int, header_timeout: float,
                 read_timeout: float, keepalive_timeout: float = 30.0) -> None:
        self.app = app
        self.header_timeout = header_timeout
        self.keepalive_timeout = keepalive_timeout
        self.read_timeout = read_timeout
        self._slots = threading.BoundedSemaphore(max_connections)
        self._open_changed = threading.Condition()  # guards _open and draining
        self._open: Dict[socket.socket, bool] = {}  # each open connection -> whether a request is in progress
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
        super().__init__(address, _ConnectionHandler)

    def serve_forever(self, poll_interval: float = 0.5) -> None:
        """Accept connections until `shutdown`; ``poll_interval`` is ignored, as nothing needs polling."""
        self._stopped.clear()
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
        self._wake_reader.close()
        self._wake_writer.close()

    def server_bind(self) -> None:
        # HTTPServer.server_bind also looks the host's name up in DNS, which can take seconds; skip it.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]  # type: ignore[assignment]

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            self._make_room()
            self._turn_away(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

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

    def handle_error(self, request: Any, client_address: Any) -> None:
        log.debug("mcplite HTTP: connection from %s failed", client_address, exc_info=True)

    def connection_opened(self, sock: socket.socket) -> None:
        with self._open_changed:
            self._open[sock] = False

    def request_started(self, sock: socket.socket) -> None:
        with self._open_changed:
            self._open[sock] = True
            self._idle_since.pop(sock, None)

    def request_finished(self, sock: socket.socket) -> None:
        with self._open_changed:
            if sock in self._open:
                self._open[sock] = False
                self._idle_since[sock] = time.monotonic()
                self._open_changed.notify_all()

    def connection_closed(self, sock: socket.socket) -> None:
        with self._open_changed:
            self._open.pop(sock, None)
            self._idle_since.pop(sock, None)
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
            return self._open_changed.wait_for(lambda: not any(self._open.values()), grace)

    def close_connections(self, timeout: float) -> None:
        """Cut every open connection and wait up to ``timeout`` s for their threads to finish."""
        with self._open_changed:
            self.draining = True
            for sock in self._open:
                _shut(sock)
            self._open_changed.wait_for(lambda: not self._open, timeout)


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
    """A `Server` served over HTTP by the standard library's threading server, in a background thread.

    The socket is bound when this is created (``port`` 0 picks a free one), so `url` is known at once::

        with HTTPServerThread(server, "127.0.0.1:0") as http:
            client = Client(http.url)

    Args:
        server: the `Server` to serve.
        address: ``"host:port"``; the host defaults to 127.0.0.1.
        max_connections: connections served at once (each has a thread); more are refused with 503.
        header_timeout: seconds a request's line and headers may take to arrive: from the moment the
            connection opens for its first request, from the first byte of each later one. A client that
            connects and sends nothing holds a thread this long at most.
        keepalive_timeout: seconds a connection may stay idle between one response and its next request.
        read_timeout: seconds a request's body may take to arrive; also bounds each write to a client.
        shutdown_grace: seconds `serve` gives the requests in progress to be answered when SIGTERM or SIGINT
            stops it (`shutdown` with ``grace``).
        app_options: passed to `HTTPApp` (path, stateless, json_response, allowed_hosts, authenticate...).

    Raises:
        ValueError: a malformed address, or one that is not loopback without ``allowed_hosts`` (DNS rebinding:
            name the hosts clients use, or ``["*"]``).
    """

    def __init__(self, server: Any, address: str = "127.0.0.1:0", *, max_connections: int = 256,
                 header_timeout: float = 10.0, keepalive_timeout: float = 30.0, read_timeout: float = 30.0,
                 shutdown_grace: float = 5.0, **app_options: Any) -> None:
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
                                     read_timeout=read_timeout)
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
