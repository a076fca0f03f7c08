"""The HTTP client's connections: keep-alive pools per origin, TLS, proxies, and the ``auth`` seam.

`ConnectionPool.begin` sends one request and returns a `Call`; `Call.finish` waits for the response, an
`Exchange`, whose body is read whole (`Exchange.read`) or as an event stream (`read_sse`). A connection
goes back to the pool once its response was read to the end. Every failure is an `HTTPError` carrying
the status (0 when no response arrived) and the body.

Proxies come from the environment as `urllib` reads them (``http_proxy``, ``https_proxy``, ``no_proxy``);
HTTPS goes through a proxy with CONNECT. This is the plumbing of the dialects (`streamable`, `legacy_sse`), not a
public API; it knows HTTP, and nothing of MCP beyond the media types and event names of `protocol.http_rules`.
"""

import base64
import http.client
import socket
import ssl
import threading
import urllib.parse
import urllib.request
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple

from ..._log import log
from ...errors import HTTPError, RemoteProtocolError
from ...protocol.http_rules import EVENT_STREAM, MESSAGE_EVENT
from ...protocol.jsonrpc import InvalidMessage, decode
from ...protocol.sse import Event, SSEError, SSEParser
from ..http_messages import AuthFlow, HTTPRequest, HTTPResponse, lower_case_headers, read_at_most

__all__ = ["OnResponse", "Destination", "plan_destination", "Exchange", "Call", "ConnectionPool", "deliver_event",
           "read_sse", "describe", "DEFAULT_MAX_BODY_SIZE"]

#: Told of each HTTP response as its headers arrive, before its body is read, on the thread that reads it:
#: ``on_response(request, status, headers)``, with the request as sent (after ``auth``: its credentials
#: included) and the response's headers in lower case. A watcher (``mcplite inspect``'s log); what it raises is
#: logged and ignored.
OnResponse = Callable[[HTTPRequest, int, Dict[str, str]], None]

_CHUNK = 64 * 1024
#: The largest response body a pool reads whole, and the largest event in a stream (the transport's
#: ``max_message_size``, whose default this is).
DEFAULT_MAX_BODY_SIZE = 64 * 1024 * 1024
_MAX_ERROR_BODY = 64 * 1024
#: After a stream's last answer, how long to wait for the server to end it, so the connection is reused.
_END_GRACE = 0.5
#: A server too busy to take a request answers 503 with ``Retry-After`` before reading it (the stdlib server
#: does, from its accepting thread, at ``max_connections``): the request is sent again after that many
#: seconds (stretched by up to as much again at random, so that the clients turned away together do not all
#: come back at the same moment), as long as the waits add up to no more than the request's timeout, when
#: the server asks for at most `_MAX_RETRY_AFTER` seconds. Without ``Retry-After`` a 503 is the caller's.
_MAX_RETRY_AFTER = 10.0


class Origin(NamedTuple):
    """Where a connection goes, and so which idle connections a request may reuse."""

    scheme: str
    host: str
    port: int


class Destination(NamedTuple):
    """How to reach one URL: which origin's connections, the request target, and the proxy to go through."""

    origin: Origin
    target: str  # what goes on the request line: a path, or the whole URL through an HTTP proxy
    proxy: Optional[Tuple[str, int]]
    proxy_headers: Dict[str, str]


def plan_destination(url: str, proxies: Dict[str, str]) -> Destination:
    """How to reach ``url``, given the proxies by scheme (as `urllib.request.getproxies` returns them).

    Raises:
        ValueError: ``url`` is not an http(s) URL with a host, or one that cannot be sent (a port out of range, a
            bracket left open, a space or control character): said here, when the client is made, rather than
            as `http.client`'s own exception at the first request.
    """
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port  # parsed on access: raises for a port that is not a number in range
    except ValueError as exc:  # "Invalid IPv6 URL", "Port out of range 0-65535"
        raise ValueError(f"not a usable http(s) URL: {url!r}: {exc}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not an http(s) URL: {url!r}")
    if any(char <= " " or char == "\x7f" for char in url):
        raise ValueError(f"not a usable http(s) URL: {url!r}: it holds a space or a control character")
    origin = Origin(parts.scheme, parts.hostname, port or (443 if parts.scheme == "https" else 80))
    target = parts.path or "/"
    if parts.query:
        target += "?" + parts.query
    proxy_url = proxies.get(parts.scheme)
    netloc = parts.netloc.rpartition("@")[2]
    if not proxy_url or urllib.request.proxy_bypass(netloc):
        return Destination(origin, target, None, {})
    proxy = urllib.parse.urlsplit(proxy_url if "://" in proxy_url else "http://" + proxy_url)
    headers = {}
    if proxy.username is not None:
        credentials = f"{urllib.parse.unquote(proxy.username)}:{urllib.parse.unquote(proxy.password or '')}"
        headers["Proxy-Authorization"] = "Basic " + base64.b64encode(credentials.encode()).decode("ascii")
    if parts.scheme == "http":  # a plain HTTP proxy wants the absolute URL on the request line
        target = urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path or "/", parts.query, ""))
    return Destination(origin, target, (proxy.hostname or "", proxy.port or 80), headers)


class Exchange:
    """One HTTP response and the pooled connection it arrived on.

    The connection goes back to the pool once the body has been read to its end (`read`, `release`);
    `close` gives it up. `interrupt` may be called from any thread to unblock a reader.
    """

    def __init__(self, pool: "ConnectionPool", destination: Destination, conn: http.client.HTTPConnection,
                 sock: Optional[socket.socket], response: http.client.HTTPResponse, method: str, url: str) -> None:
        self.max_body_size = pool.max_body_size
        self.method = method
        self.url = url
        self.status = response.status
        self.reason = response.reason
        self.headers = response.headers
        self._response = response
        self._pool = pool
        self._destination = destination
        self._conn = conn
        self._sock = sock
        self._lock = threading.Lock()  # guards _held, so interrupt() never hits a connection given back
        self._held = True
        self._body: Optional[bytes] = None

    @property
    def content_type(self) -> str:
        return (self.headers.get("Content-Type") or "").partition(";")[0].strip().lower()

    def read(self) -> bytes:
        """The whole body; the connection is then free for the next request.

        Raises:
            HTTPError: the body broke off, or is larger than the pool's ``max_body_size`` (it is then not read
                beyond that, and the connection is closed).
        """
        if self._body is None:
            limit = self.max_body_size
            declared = self.headers.get("Content-Length", "")
            if declared.isdigit() and int(declared) > limit:  # (isdigit: no sign; http.client checked it is a number)
                self.close()
                raise self._too_large(f"{int(declared)} bytes")
            try:
                body = read_at_most(self._response, limit + 1)  # one byte more than allowed tells a body that is too long
                if declared.isdigit() and len(body) < int(declared):  # read(n) returns what came before the end
                    raise http.client.IncompleteRead(body, int(declared) - len(body))
            except (OSError, ValueError, http.client.HTTPException) as exc:
                self.close()
                raise HTTPError(f"{self.method} {self.url}: the response body broke off: {describe(exc)}",
                                status=self.status, headers=self.headers) from exc
            if len(body) > limit:
                self.close()
                raise self._too_large(f"more than {limit} bytes")
            self._body = body
            self.release()
        return self._body

    def _too_large(self, size: str) -> HTTPError:
        return HTTPError(f"{self.method} {self.url}: HTTP {self.status}: the response body ({size}) is larger than "
                         f"max_message_size ({self.max_body_size} bytes); not read", status=self.status,
                         headers=self.headers)

    def error_text(self) -> str:
        """Up to 64 KiB of the body as text, for an error message."""
        if self._body is None:
            try:
                self._body = read_at_most(self._response, _MAX_ERROR_BODY)
            except (OSError, ValueError, http.client.HTTPException):
                self._body = b""
            self.release()
        return self._body.decode("utf-8", "replace")

    def failure(self, problem: str = "") -> HTTPError:
        """The `HTTPError` for this response, with its status and body (whole in ``body``; in the message, only
        its first line of text: `summary`)."""
        body = self.error_text()
        text = f"{self.method} {self.url}: HTTP {self.status} {self.reason}"
        if problem:
            text += f": {problem}"
        said = summary(body)
        if said:
            text += f" -- {said}"
        return HTTPError(text, status=self.status, body=body, headers=self.headers)

    def read_chunk(self) -> bytes:
        """The next bytes of the body as they arrive (at most 64 KiB); b"" at its end."""
        return self._response.read1(_CHUNK)

    def set_timeout(self, seconds: float) -> None:
        if self._sock is not None:
            self._sock.settimeout(seconds)

    def release(self) -> None:
        """Done with the body: keep the connection if the body was read to its end, else close it."""
        self._let_go(keep_if_read=True)

    def close(self) -> None:
        """Give up the connection (unless it already went back to the pool)."""
        self._let_go(keep_if_read=False)

    def _let_go(self, *, keep_if_read: bool) -> None:
        with self._lock:
            if not self._held:
                return  # already given back or closed
            self._held = False
        if keep_if_read and self._response.isclosed() and not self._response.will_close:
            self._pool.put(self._destination.origin, self._conn)
        else:
            self._response.close()
            self._conn.close()

    def interrupt(self) -> None:
        """Make a read blocked on this response return at once (from another thread)."""
        with self._lock:
            if self._held:
                _shut_down(self._sock)


class Call:
    """One request on the wire whose response has not been read yet.

    `ConnectionPool.begin` writes it on the caller's thread; `finish` waits for the response on whatever
    thread should (a reader, for a request), drives the ``auth`` flow, and retries once on a fresh
    connection when a reused keep-alive connection turns out to have been closed by the server.
    """

    def __init__(self, pool: "ConnectionPool", request: HTTPRequest, timeout: float, flow: Optional[AuthFlow]) -> None:
        self._pool = pool
        self._request = request
        self._timeout = timeout
        self._flow = flow
        self._lock = threading.Lock()  # guards _conn and _sock against interrupt() from another thread
        self._conn: Optional[http.client.HTTPConnection] = None
        self._sock: Optional[socket.socket] = None
        self._destination: Optional[Destination] = None
        self._reused = False
        self._interrupted = False
        self._woken = threading.Event()  # set by `interrupt`: ends a wait before a busy server's retry

    def start(self) -> None:
        """Send the request (the ``auth`` flow's first version of it, when there is a flow).

        Raises:
            HTTPError: it could not be sent (status 0): refused, reset, TLS failure, timeout.
            AuthError: the ``auth`` flow gave up before sending anything.
        """
        try:
            if self._flow is not None:
                self._request = next(self._flow)
            self._write()
        except BaseException:
            self._close_flow()
            raise

    def _write(self, *, fresh: bool = False) -> None:
        """Send the request on a pooled connection (a new one when ``fresh``).

        Raises:
            HTTPError: it could not be sent (status 0).
        """
        method, url, headers, body = self._request
        destination = self._pool.destination(url)
        if destination.proxy_headers and destination.origin.scheme == "http":  # through HTTPS: on the CONNECT
            headers = {**headers, **destination.proxy_headers}
        while True:
            conn = self._pool.connect(destination) if fresh else self._pool.take(destination)
            reused = conn.sock is not None
            try:
                if reused:
                    conn.sock.settimeout(self._timeout)
                else:
                    conn.timeout = self._timeout
                conn.request(method, destination.target, body, headers)
            except (OSError, http.client.HTTPException) as exc:
                conn.close()
                if reused and isinstance(exc, ConnectionError):
                    continue  # the server closed this idle connection: take another
                raise _no_response(method, url, self._timeout, exc, destination.proxy) from exc
            with self._lock:
                self._conn, self._sock, self._destination, self._reused = conn, conn.sock, destination, reused
            return

    def finish(self) -> Exchange:
        """The response, its body unread (for ``auth``: the response to the flow's last request).

        Raises:
            HTTPError: no response arrived (status 0): reset, timeout, refused on a retry.
            AuthError: the ``auth`` flow gave up.
        """
        try:
            while True:
                exchange = self._read_response()
                if self._flow is None:
                    return exchange
                seen = b"" if exchange.content_type == EVENT_STREAM else exchange.read()
                try:
                    headers = lower_case_headers(exchange.headers.items())
                    self._request = self._flow.send(HTTPResponse(exchange.status, headers, seen))
                except StopIteration:
                    return exchange
                exchange.close()  # an unread SSE answer that the flow will send again
                self._write()
        finally:
            self._close_flow()

    def _read_response(self) -> Exchange:
        retried = False
        waited = 0.0  # seconds spent waiting for a busy server (see _MAX_RETRY_AFTER)
        while True:
            conn, destination = self._conn, self._destination
            assert conn is not None and destination is not None
            try:
                response = conn.getresponse()
            except (OSError, http.client.HTTPException) as exc:
                conn.close()
                if self._reused and not retried and not self._interrupted and isinstance(exc, ConnectionError):
                    # The server closed the idle keep-alive connection before our request reached it.
                    retried = True
                    self._write(fresh=True)
                    continue
                raise _no_response(self._request.method, self._request.url, self._timeout, exc,
                                   destination.proxy) from exc
            delay = _busy_retry_delay(response)
            if delay is not None and waited + delay <= self._timeout:
                waited += delay
                response.close()
                conn.close()
                if self._woken.wait(delay):
                    raise HTTPError(f"{self._request.method} {self._request.url}: given up while the server was "
                                    "busy (503)", status=0)
                self._write(fresh=True)
                continue
            if self._pool.on_response is not None:
                self._tell(response)
            return Exchange(self._pool, destination, conn, self._sock, response, self._request.method,
                            self._request.url)

    def _tell(self, response: http.client.HTTPResponse) -> None:
        assert self._pool.on_response is not None
        try:
            self._pool.on_response(self._request, response.status, lower_case_headers(response.getheaders()))
        except Exception:  # an observer's bug must not fail the request it watches
            log.exception("mcplite: on_response raised")

    def _close_flow(self) -> None:
        if self._flow is not None:
            self._flow.close()  # a flow may hold a lock across its yields: let it go whatever happened
            self._flow = None

    def interrupt(self) -> None:
        """Make `finish` return at once (from another thread): the caller no longer wants the answer."""
        with self._lock:
            self._interrupted = True  # so the broken connection is not mistaken for a stale one and retried
            sock = self._sock
        self._woken.set()
        _shut_down(sock)

    def close(self) -> None:
        """Give the request up without reading its answer."""
        self._close_flow()
        if self._conn is not None:
            self._conn.close()


def _busy_retry_delay(response: http.client.HTTPResponse) -> Optional[float]:
    """Seconds to wait before sending again a request that a busy server turned away (503 with a
    ``Retry-After`` of at most `_MAX_RETRY_AFTER` seconds), or None: the answer is the caller's."""
    if response.status != 503:
        return None
    value = (response.getheader("Retry-After") or "").strip()
    if not (value.isascii() and value.isdigit()) or float(value) > _MAX_RETRY_AFTER:
        return None  # absent, an HTTP date, or longer than a caller would want to wait unasked
    import random

    return float(value) * (1.0 + random.random())


class ConnectionPool:
    """Keep-alive connections per origin, TLS, proxies from the environment, and the ``auth`` seam."""

    def __init__(self, *, ssl_context: Optional[ssl.SSLContext], cafile: Optional[str], pool_size: int,
                 auth: Any, max_body_size: int = DEFAULT_MAX_BODY_SIZE,
                 on_response: Optional[OnResponse] = None) -> None:
        #: The largest response body `Exchange.read` takes, in bytes (the ``auth`` flow's documents included).
        self.max_body_size = max_body_size
        #: Told of each response as its headers arrive (`OnResponse`; None: nobody).
        self.on_response = on_response
        self._ssl_context = ssl_context
        self._cafile = cafile
        self._pool_size = pool_size
        self._auth = auth
        self._proxies = urllib.request.getproxies()  # read once: the environment is not re-read per call
        self._lock = threading.Lock()  # guards _idle, _destinations, _closed and the lazy TLS context
        self._idle: Dict[Origin, List[http.client.HTTPConnection]] = {}
        self._destinations: Dict[str, Destination] = {}
        self._closed = False  # once closed, connections handed back are closed rather than kept

    @property
    def auth(self) -> Any:
        """The ``auth`` object every request goes through (None: none)."""
        return self._auth

    def request(self, method: str, url: str, headers: Dict[str, str], body: Optional[bytes],
                timeout: float) -> Exchange:
        """Send one request and wait for its response (body unread). Raises as `begin` and `Call.finish`."""
        return self.begin(method, url, headers, body, timeout).finish()

    def begin(self, method: str, url: str, headers: Dict[str, str], body: Optional[bytes],
              timeout: float) -> Call:
        """Send one request (through ``auth`` when there is one); `Call.finish` reads the answer.

        Raises as `Call.start`.
        """
        flow: Optional[AuthFlow] = None
        if self._auth is not None:
            flow = self._auth.auth_flow(HTTPRequest(method, url, dict(headers), body))
        call = Call(self, HTTPRequest(method, url, headers, body), timeout, flow)
        call.start()
        return call

    def destination(self, url: str) -> Destination:
        destination = self._destinations.get(url)
        if destination is None:
            destination = plan_destination(url, self._proxies)
            with self._lock:
                self._destinations[url] = destination
        return destination

    def take(self, destination: Destination) -> http.client.HTTPConnection:
        """An idle connection to the destination's origin, or a new (unconnected) one."""
        with self._lock:
            idle = self._idle.get(destination.origin)
            if idle:
                return idle.pop()
        return self.connect(destination)

    def connect(self, destination: Destination) -> http.client.HTTPConnection:
        """A new connection object for ``destination``; it connects on first use (http.client sets TCP_NODELAY)."""
        origin = destination.origin
        host, port = destination.proxy if destination.proxy is not None else (origin.host, origin.port)
        if origin.scheme != "https":
            return http.client.HTTPConnection(host, port)
        conn = http.client.HTTPSConnection(host, port, context=self._tls())
        if destination.proxy is not None:
            conn.set_tunnel(origin.host, origin.port, headers=destination.proxy_headers)  # CONNECT
        return conn

    def _tls(self) -> ssl.SSLContext:
        with self._lock:
            if self._ssl_context is None:
                self._ssl_context = ssl.create_default_context(cafile=self._cafile)
            return self._ssl_context

    def put(self, origin: Origin, conn: http.client.HTTPConnection) -> None:
        """Take back a connection whose last response was read to its end."""
        with self._lock:
            idle = self._idle.setdefault(origin, [])
            if len(idle) < self._pool_size and not self._closed:
                idle.append(conn)
                return
        conn.close()

    def idle_counts(self) -> Dict[str, int]:
        """How many idle keep-alive connections are kept, per origin ("scheme://host:port")."""
        with self._lock:
            return {f"{origin.scheme}://{origin.host}:{origin.port}": len(conns)
                    for origin, conns in self._idle.items()}

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle = [conn for conns in self._idle.values() for conn in conns]
            self._idle.clear()
        for conn in idle:
            conn.close()


def _shut_down(sock: Optional[socket.socket]) -> None:
    """Make a read blocked on ``sock`` (if any) return at once, as if the peer had closed it."""
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def _no_response(method: str, url: str, timeout: float, exc: BaseException,
                 proxy: Optional[Tuple[str, int]] = None) -> HTTPError:
    # Through a proxy the failure is usually the proxy's, which the environment chose without the user seeing
    # it (http_proxy set for something else): name it, and how to go around it.
    via = (f" through the proxy {proxy[0]}:{proxy[1]} (from the {urllib.parse.urlsplit(url).scheme}_proxy "
           "environment variable; add the host to NO_PROXY to connect directly)") if proxy is not None else ""
    if isinstance(exc, socket.timeout):
        return HTTPError(f"{method} {url}{via}: no response within {round(timeout, 2):g} s")
    if isinstance(exc, http.client.HTTPException) and not isinstance(exc, ConnectionError):
        # A head that http.client refuses to read (a line over 64 KiB, more than 100 fields, a bad status
        # line): a response came, but not one anybody should buffer.
        return HTTPError(f"{method} {url}{via}: a response this client does not read: {describe(exc)}")
    return HTTPError(f"{method} {url}{via}: no response: {describe(exc)}")


def describe(exc: BaseException) -> str:
    """An exception as a few words for an error message (its class name when it has no text)."""
    return str(exc) or type(exc).__name__


#: The longest excerpt of an error body an error message carries.
SUMMARY_LIMIT = 200
#: How much of a JSON-RPC error's message an HTTP error's message quotes.
RPC_MESSAGE_LIMIT = 1000


def summary(body: str, limit: int = SUMMARY_LIMIT) -> str:
    """An error body as an error message quotes it: a JSON-RPC error's code and message (written for people:
    clipped only at `RPC_MESSAGE_LIMIT`), else its first line of text, markup stripped (an HTML error page
    becomes its title or heading, never the whole page), clipped to ``limit`` characters."""
    if body.startswith("{"):
        try:
            error = decode(body).get("error")
        except (InvalidMessage, AttributeError):
            error = None
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            line = f"error {error.get('code')}: {error['message']}"
            return line if len(line) <= RPC_MESSAGE_LIMIT else line[:RPC_MESSAGE_LIMIT] + "..."
    if body.lstrip().startswith("<"):
        import html
        import re

        body = re.sub(r"(?is)<(head|script|style)\b.*?</\1\s*>", "\n", body)  # not text anybody reads
        body = html.unescape(re.sub(r"<[^>]*>", "\n", body))
    line = next((line.strip() for line in body.splitlines() if line.strip()), "")
    return line if len(line) <= limit else line[:limit] + "..."


# ---- reading event streams ------------------------------------------------------------------------------
def deliver_event(event: Event, deliver: Callable[[Any], None], deliver_invalid: Callable[[InvalidMessage], None]
                  ) -> None:
    """Hand one SSE event's JSON-RPC message to ``deliver`` (to ``deliver_invalid`` when it is not JSON).

    MCP sends its messages as "message" events; any other event is not for us and is skipped.
    """
    if event.event != MESSAGE_EVENT:
        return
    try:
        value = decode(event.data)
    except InvalidMessage as exc:
        deliver_invalid(exc)
        return
    deliver(value)


def read_sse(exchange: Exchange, parser: SSEParser, on_chunk: Callable[[List[Event]], bool],
             idle_timeout: float) -> Optional[str]:
    """Feed an SSE response to ``parser`` and each chunk's events to ``on_chunk`` until the response ends.

    Once ``on_chunk`` returns True (nothing more is needed) the stream is read for `_END_GRACE` more
    seconds: a server ends it right after the last answer, and reading that end keeps the connection.

    Returns:
        None when the stream ended or was no longer needed; else why it broke off.

    Raises:
        RemoteProtocolError: an event or a line is larger than the parser's ``max_event_size``; the response
            is closed.
    """
    exchange.set_timeout(idle_timeout)
    finishing = False
    try:
        while True:
            chunk = exchange.read_chunk()
            if not chunk:
                exchange.release()
                return None
            try:
                events = parser.feed(chunk)
            except SSEError as exc:
                # Not a drop to resume from: the server would send the same event again.
                exchange.close()
                raise RemoteProtocolError(f"{exchange.method} {exchange.url}: {exc} (max_message_size); stopped "
                                          "reading the stream") from None
            if on_chunk(events) and not finishing:
                finishing = True
                exchange.set_timeout(_END_GRACE)
    except socket.timeout:
        exchange.close()
        return None if finishing else f"no data for {idle_timeout} s"
    except (OSError, ValueError, http.client.HTTPException) as exc:  # ValueError: closed under us
        exchange.close()
        return None if finishing else describe(exc)


