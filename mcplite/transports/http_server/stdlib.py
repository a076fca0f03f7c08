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
the loopback names when bound to loopback (DNS rebinding; 403), and headers that could smuggle a request
past a proxy are refused (400).

The core's public names are importable from here too.
"""

import selectors
import socket
import socketserver
import sys
import threading
import time
from email.utils import formatdate
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from ipaddress import ip_address
from typing import Any, Dict, Optional, Set, Tuple
from urllib.parse import urlsplit

from ..._log import log
from ..http_messages import HTTPRefusal
from .app import HTTPApp
from .eventstore import EventStore, InMemoryEventStore
from .exchange import Headers, IncomingRequest, Responder, RouteHandler, error_body, reason_phrase
from .guards import LOOPBACK_HOSTS

__all__ = [
    "HTTPApp", "IncomingRequest", "Responder", "HTTPRefusal", "Headers", "RouteHandler", "serve",
    "HTTPServerThread", "start_http_server", "LOOPBACK_HOSTS", "EventStore", "InMemoryEventStore", "reason_phrase",
]

_MAX_LINE = 65536  # the longest request line or header line read
_MAX_HEADERS = 100
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

    def read_head(self, max_line: int, max_lines: int) -> bytes:
        """Read a request's header fields and the empty line that ends them, in one piece.

        Returns what has arrived, without that empty line, if the client stops sending first or the fields
        can no longer be valid (more than ``max_lines`` lines, or one of ``max_line`` bytes or more). One
        search per read from the socket: reading line by line would copy each line out of the buffer.
        """
        scanned = lines = line_start = 0
        while True:
            end = _end_of_head(self._buffer, scanned)
            if end:
                return self._take(end)
            lines += self._buffer.count(b"\n", scanned)
            last_newline = self._buffer.rfind(b"\n", scanned)
            if last_newline >= 0:
                line_start = last_newline + 1
            scanned = len(self._buffer)
            if lines > max_lines or scanned - line_start >= max_line or not self._fill():
                return self._take(len(self._buffer))

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


def _end_of_head(buffer: bytearray, searched: int) -> int:
    """Where the empty line that ends a request's header fields ends in ``buffer``; 0 if it has not arrived.

    Lines end with CRLF or a bare LF; there may be no fields at all. The first ``searched`` bytes have been
    searched before, but an empty line may begin in their last two.
    """
    for empty_head in (b"\r\n", b"\n"):
        if buffer.startswith(empty_head):
            return len(empty_head)
    since = max(searched - 2, 0)
    crlf, lf = buffer.find(b"\n\r\n", since), buffer.find(b"\n\n", since)
    if crlf >= 0 and (lf < 0 or crlf < lf):
        return crlf + 3
    return lf + 2 if lf >= 0 else 0


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

    def _head(self, status: int, headers: Headers, framing: str) -> bytes:
        lines = [f"HTTP/1.1 {status} {reason_phrase(status)}\r\nServer: mcplite\r\nDate: {_http_date()}\r\n"]
        lines.extend(f"{name}: {value}\r\n" for name, value in headers)
        lines.append(framing)
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

    @staticmethod
    def _frame(data: bytes) -> bytes:
        return b"%x\r\n%b\r\n" % (len(data), data)


class _ConnectionHandler(BaseHTTPRequestHandler):
    """Reads requests from one connection (HTTP/1.1 keep-alive) and hands them to the server's `HTTPApp`."""

    protocol_version = "HTTP/1.1"
    server_version = "mcplite"
    server: "_MCPHTTPServer"
    raw_requestline: bytes

    def setup(self) -> None:
        self.connection = self.request
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.connection.settimeout(self.server.read_timeout)
        self.reader = _DeadlineReader(self.connection)
        self.rfile = self.reader  # type: ignore[assignment]  # where the base class reads the request line
        self.wfile = _SocketWriter(self.connection)  # type: ignore[assignment]
        self.server.connection_opened(self.connection)

    def finish(self) -> None:
        self.server.connection_closed(self.connection)

    def handle_one_request(self) -> None:
        # Waiting for the next request and reading its head share one deadline: it is also the
        # keep-alive timeout of an idle connection.
        self.reader.set_deadline(self.server.header_timeout)
        super().handle_one_request()

    def parse_request(self) -> bool:
        """Parse the request line and header fields; ``self.headers`` becomes a dict with lower-case names.

        Replaces the standard library's email-based parser, the largest cost of a small request. It refuses
        what could smuggle a request past a proxy: obsolete line folding and whitespace before a colon.
        """
        self.close_connection = True
        self.request_version = "HTTP/1.0"  # until known: error answers then have a status line
        self.requestline = str(self.raw_requestline, "iso-8859-1").rstrip("\r\n")
        words = self.requestline.split()
        if len(words) != 3 or words[2] not in ("HTTP/1.0", "HTTP/1.1"):
            self.send_error(HTTPStatus.BAD_REQUEST, "Bad request line")
            return False
        self.command, self.path, self.request_version = words
        head = self.reader.read_head(_MAX_LINE, _MAX_HEADERS)
        *lines, unfinished = str(head, "iso-8859-1").split("\n")
        ended = bool(lines) and lines[-1] in ("", "\r")  # else the client left, or the head is too large
        if ended:
            lines.pop()  # the empty line
        elif unfinished:
            lines.append(unfinished)  # a line cut short: refused below if it is bad, like any other
        if len(lines) > _MAX_HEADERS:
            self.send_error(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, "Too many header fields")
            return False
        headers: Dict[str, str] = {}
        for line in lines:
            name, colon, value = line.partition(":")
            if len(line) >= _MAX_LINE or not colon or not name or name != name.strip():  # len: without "\n"
                self.send_error(HTTPStatus.BAD_REQUEST, "Bad header line")
                return False
            key = name.lower()
            value = value.strip()
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        if not ended:
            return False  # the client left mid-request
        self.headers = headers  # type: ignore[assignment]
        # Keep-alive is HTTP/1.1's default; an HTTP/1.0 connection always closes after its response.
        self.close_connection = self.request_version != "HTTP/1.1" or "close" in headers.get("connection", "").lower()
        if headers.get("expect", "").lower() == "100-continue" and self.request_version == "HTTP/1.1":
            return self.handle_expect_100()
        return True

    def handle_expect_100(self) -> bool:
        if self._declared_length() > self.server.app.max_body_size:
            self._refuse(413, "Payload Too Large")
            return False
        return super().handle_expect_100()

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
            request = IncomingRequest(self.command, path, query, self.headers, body)  # type: ignore[arg-type]
            self.server.app.handle(request, _SocketResponder(self))
        except OSError:
            self.close_connection = True

    do_GET = do_POST = do_DELETE = do_PUT = do_PATCH = do_OPTIONS = do_HEAD = _dispatch

    def _declared_length(self) -> int:
        length = self.headers.get("content-length", "0")
        return int(length) if length.isascii() and length.isdigit() else 0

    def _read_body(self, limit: int) -> Optional[bytes]:
        """The request body, or None when the request was refused or the client left."""
        self.reader.set_deadline(self.server.read_timeout)
        try:
            if "chunked" in self.headers.get("transfer-encoding", "").lower():
                return self._read_chunked(limit)
            length = self.headers.get("content-length")
            if length is None:
                return b""
            if not (length.isascii() and length.isdigit()):
                self._refuse(400, "Bad Request: invalid Content-Length")
                return None
            if int(length) > limit:
                self._refuse(413, "Payload Too Large")
                return None
            body = self.reader.read(int(length))
            if len(body) < int(length):
                self.close_connection = True
                return None
            return body
        except socket.timeout:
            self._refuse(408, "Request Timeout")
            return None
        except ValueError:
            self._refuse(400, "Bad Request: invalid chunked body")
            return None

    def _read_chunked(self, limit: int) -> Optional[bytes]:
        body = bytearray()
        while True:
            size = int(self.reader.readline(1024).split(b";", 1)[0].strip(), 16)  # ValueError: malformed
            if size == 0:
                while self.reader.readline(65537) not in (b"\r\n", b"\n", b""):
                    pass  # trailer fields, which we ignore
                return bytes(body)
            if len(body) + size > limit:
                self._refuse(413, "Payload Too Large")
                return None
            chunk = self.reader.read(size + 2)
            if len(chunk) < size + 2:
                self.close_connection = True
                return None
            body += chunk[:size]

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
        log.debug("mcplite HTTP %s: %s", self.address_string(), format % args)


class _MCPHTTPServer(ThreadingHTTPServer):
    """``ThreadingHTTPServer`` with a bounded number of connection threads and a clean shutdown."""

    daemon_threads = True
    block_on_close = False  # shutdown() waits for connections itself, with a timeout
    request_queue_size = 128

    def __init__(self, address: Tuple[str, int], app: HTTPApp, *, max_connections: int, header_timeout: float,
                 read_timeout: float) -> None:
        self.app = app
        self.header_timeout = header_timeout
        self.read_timeout = read_timeout
        self._slots = threading.BoundedSemaphore(max_connections)
        self._open_changed = threading.Condition()  # guards _open
        self._open: Set[socket.socket] = set()
        # serve_forever() waits on the listening socket and on this pair, and shutdown() writes to the pair: so
        # stopping is immediate (socketserver's own loop notices shutdown() only at its next poll).
        self._wake_reader, self._wake_writer = socket.socketpair()
        self._stopping = threading.Event()
        self._stopped = threading.Event()  # set while serve_forever() is not running
        self._stopped.set()
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, _ConnectionHandler)

    def serve_forever(self, poll_interval: float = 0.5) -> None:
        """Accept connections until `shutdown`; ``poll_interval`` is ignored, as nothing needs polling."""
        self._stopped.clear()
        try:
            with selectors.DefaultSelector() as selector:
                selector.register(self, selectors.EVENT_READ)
                selector.register(self._wake_reader, selectors.EVENT_READ)
                while not self._stopping.is_set():
                    ready = selector.select()
                    if self._stopping.is_set():
                        break
                    if any(key.fileobj is self for key, _ in ready):
                        self._handle_request_noblock()  # type: ignore[attr-defined]  # BaseServer's, untyped
                    self.service_actions()
        finally:
            self._stopped.set()

    def shutdown(self) -> None:
        """Stop `serve_forever` and wait until it has returned."""
        self._stopping.set()
        try:
            self._wake_writer.send(b"\0")
        except OSError:
            pass
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
        """Every connection thread is busy: answer 503 from the accepting thread, without blocking it."""
        body = error_body("Service Unavailable: too many connections")
        try:
            request.setblocking(False)
            request.send(b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                         b"Retry-After: 1\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%b" % (len(body), body))
            request.recv(65536)  # drain what has arrived, so that closing sends FIN rather than RST
        except OSError:
            pass
        self.shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        log.debug("mcplite HTTP: connection from %s failed", client_address, exc_info=True)

    def connection_opened(self, sock: socket.socket) -> None:
        with self._open_changed:
            self._open.add(sock)

    def connection_closed(self, sock: socket.socket) -> None:
        with self._open_changed:
            self._open.discard(sock)
            self._open_changed.notify_all()

    def close_connections(self, timeout: float) -> None:
        """Cut every open connection and wait up to ``timeout`` s for their threads to finish."""
        with self._open_changed:
            for sock in self._open:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            self._open_changed.wait_for(lambda: not self._open, timeout)


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
        header_timeout: seconds a connection may take to send a request's line and headers, and may
            stay idle between requests.
        read_timeout: seconds a request's body may take to arrive; also bounds each write to a client.
        app_options: passed to `HTTPApp` (path, stateless, json_response, allowed_hosts, authenticate...).
    """

    def __init__(self, server: Any, address: str = "127.0.0.1:0", *, max_connections: int = 256,
                 header_timeout: float = 30.0, read_timeout: float = 30.0, **app_options: Any) -> None:
        host, port = _parse_address(address)
        if "allowed_hosts" not in app_options and _is_loopback(host):
            app_options["allowed_hosts"] = LOOPBACK_HOSTS
        self.app = HTTPApp(server, **app_options)
        self._httpd = _MCPHTTPServer((host, port), self.app, max_connections=max_connections,
                                     header_timeout=header_timeout, read_timeout=read_timeout)
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

    def shutdown(self, timeout: float = 5.0) -> None:
        """Stop accepting, end every session and stream, and wait up to ``timeout`` s for connections to end."""
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(timeout)
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


def serve(server: Any, address: str, **options: Any) -> None:
    """Serve ``server`` over HTTP until Ctrl-C (`Server.run(http=...)`); options as for `HTTPServerThread`."""
    http = HTTPServerThread(server, address, **options)
    print(f"mcplite: serving {server.name!r} at {http.url}", file=sys.stderr)
    try:
        http.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        http.shutdown()
