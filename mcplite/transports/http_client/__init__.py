"""The HTTP client transport: Streamable HTTP (2025-03-26 .. 2025-11-25), and the 2024-11-05 HTTP+SSE
transport for old servers. Standard library only: `http.client` for the wire, `urllib` for proxies.

    HTTPClientTransport("https://host/mcp")       # what Client("https://host/mcp") builds

Every message is POSTed to the MCP endpoint. The answer to a request is either JSON or an SSE stream that
may carry the server's own requests and notifications before the response; responses and notifications
are answered 202. The transport watches the `initialize` exchange go by to learn the session id
(``MCP-Session-Id``) and the negotiated revision (``MCP-Protocol-Version``), then opens the GET stream
for server-initiated messages. The session above never knows which transport is in use.

Threads, and why:

- the caller's thread writes each POST, so a message is on the wire, in order, when `send` returns, and
  a refused connection raises at once. Notifications and responses are also answered (202) there;
- the answer to a request is awaited by a thread from a small pool of reusable daemon threads, which
  delivers a JSON answer, or reads an SSE answer (resuming it if it drops). The caller never waits inside
  `send` for the server to think: that wait happens in `PendingRequest.result()`, where the session's
  timeout and `cancel()` reach it (a cancellation interrupts the reader). This costs one thread hand-off
  per request. initialize is the exception, awaited by the caller: its answer decides the session id and
  whether to fall back to HTTP+SSE;
- one daemon thread reads the GET stream (or, for an old server, the one HTTP+SSE stream).

Every HTTP failure becomes an exception carrying the status and body: `HTTPError` raised by `send`
(status 0 when no response arrived) for initialize, notifications and responses; for a request, the
same `HTTPError` raised by the caller's `result()` (through `MessageSink.fail_request`). A 404 for our
session ends the session: `SessionExpired` is raised by `send` or becomes the session's ``close_reason``.
Every socket read has a timeout.

The connections (keep-alive pool, TLS, proxies, the ``auth`` flow) are `http_pool`'s; the HTTP+SSE mode
is `http_client_legacy`'s. This module holds the Streamable HTTP mode and `HTTPClientTransport`, which picks one.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import contextlib
import logging
import re
import ssl
import threading
import time
from typing import TYPE_CHECKING, AbstractSet, Any, Callable, Dict, Iterator, List, Optional, Set, Tuple, Union

from ..._sync import DaemonPool
from ...errors import ConnectionClosed, HTTPError, MCPError, RemoteProtocolError, SessionExpired
from ...protocol import jsonrpc, methods
from ...protocol.jsonrpc import InvalidMessage, decode, encode
from ...protocol.sse import Event, SSEParser
from ...protocol.versions import is_supported, revision
from .. import MessageSink, Transport
from ..http_messages import AuthFlow, HTTPRequest, HTTPResponse  # re-exported: what an ``auth`` object sees
from .legacy_sse import LegacySSE
from .pool import (
    EVENT_STREAM,
    JSON,
    Call,
    ConnectionPool,
    Exchange,
    deliver_event,
    describe,
    plan_route,
    read_sse,
)

if TYPE_CHECKING:
    from ...protocol.jsonrpc import RequestId

__all__ = [
    "HTTPClientTransport", "HTTPRequest", "HTTPResponse", "AuthFlow", "DEFAULT_TIMEOUT",
    "DEFAULT_SSE_READ_TIMEOUT", "DEFAULT_RETRY_MS", "DEFAULT_POOL_SIZE", "DEFAULT_MAX_READERS",
]

log = logging.getLogger("mcplite")

#: Seconds to connect and to receive an answer's headers or JSON body (the session layer's default too).
DEFAULT_TIMEOUT = 60.0
#: Seconds an SSE stream may stay silent before it counts as dropped (the official Python SDK's value).
DEFAULT_SSE_READ_TIMEOUT = 300.0
#: Milliseconds to wait before reconnecting a stream when the server never sent a ``retry`` field.
DEFAULT_RETRY_MS = 1000
#: Idle keep-alive connections kept per origin; concurrent calls beyond it use short-lived extra ones.
DEFAULT_POOL_SIZE = 16
#: Requests whose answers are awaited at once, each by a reader thread; more wait for a free reader.
DEFAULT_MAX_READERS = 64

_POST_ACCEPT = f"{JSON}, {EVENT_STREAM}"
#: The longest `close()` waits for the server to acknowledge the end of the session.
_DELETE_TIMEOUT = 5.0
#: Consecutive attempts at the GET stream that bring nothing before we stop listening.
_LISTEN_ATTEMPTS = 3
#: Statuses to initialize that mean "maybe an old HTTP+SSE server" (spec: backwards compatibility).
_FALLBACK_STATUSES = (400, 404, 405)
_SESSION_ID = re.compile(r"[\x21-\x7e]+")  # the spec's "visible ASCII"
_TRANSPORTS = ("auto", "streamable", "sse")


class _Stream:
    """One SSE stream we follow across reconnections: a POST's answer, or (no request ids) the GET stream.

    ``pending`` holds the ids of the requests it must still answer; an answer stream is done when it is
    empty, the GET stream only when stopped.
    """

    def __init__(self, request_ids: Set[RequestId], deadline: float) -> None:
        self.request_ids = frozenset(request_ids)
        self.pending = set(request_ids)
        self.listening = not request_ids
        self.last_event_id = ""
        self.retry_ms: Optional[int] = None
        #: When to give up resuming: `timeout` seconds after the server last sent anything.
        self.deadline = deadline
        self.chunks = 0  # how many chunks arrived, over all connections
        self.stopped = threading.Event()
        self._lock = threading.Lock()  # guards _reading against stop() from another thread
        self._reading: Union[Call, Exchange, None] = None  # what a reader is blocked on

    @property
    def done(self) -> bool:
        return self.stopped.is_set() or (not self.pending and not self.listening)

    def retry_delay(self) -> float:
        return (self.retry_ms if self.retry_ms is not None else DEFAULT_RETRY_MS) / 1000

    def attach(self, reading: Union[Call, Exchange]) -> bool:
        """Note what the reader is about to block on, so `stop` can interrupt it; False if stopped."""
        with self._lock:
            if self.stopped.is_set():
                return False
            self._reading = reading
            return True

    def detach(self) -> None:
        with self._lock:
            self._reading = None

    def stop(self) -> None:
        """Stop following the stream (from any thread): a blocked read returns at once."""
        self.stopped.set()
        with self._lock:
            if self._reading is not None:
                self._reading.interrupt()


# ---- Streamable HTTP ------------------------------------------------------------------------------------
class _NotStreamable(Exception):
    """initialize was refused with 400/404/405: perhaps an HTTP+SSE server. Carries the HTTPError."""

    def __init__(self, error: HTTPError) -> None:
        super().__init__(str(error))
        self.error = error


class _StreamableHTTP:
    """The Streamable HTTP transport (2025-03-26 onwards): one endpoint, POST per message, GET to listen."""

    def __init__(self, owner: "HTTPClientTransport") -> None:
        self._owner = owner
        self._url = owner.url
        self._conns = owner.connections
        self._lock = threading.Lock()  # guards _streams, _dead and the listener start
        self._streams: Dict[RequestId, _Stream] = {}  # request id -> the stream that will answer it
        self._readers: Optional[DaemonPool] = None
        self._listener: Optional[_Stream] = None
        self._dead = False  # closed, or the session expired
        self._expired = False
        self.session_id: Optional[str] = None
        self.protocol_version: Optional[str] = None
        self._initialize_id: Optional[RequestId] = None  # set while the initialize answer is awaited
        self._set_headers()

    def _set_headers(self) -> None:
        """Rebuild the header sets after the session id or version changed (each dict is never mutated)."""
        protocol = {}
        if self.session_id is not None:
            protocol["MCP-Session-Id"] = self.session_id
        if self.protocol_version is not None:
            protocol["MCP-Protocol-Version"] = self.protocol_version
        custom = self._owner.headers
        self._post_headers = {**custom, "Accept": _POST_ACCEPT, "Content-Type": JSON, **protocol}
        self._get_headers = {**custom, "Accept": EVENT_STREAM, **protocol}
        self._delete_headers = {**custom, **protocol}

    # ---- sending --------------------------------------------------------------------------------------
    def send(self, message: Any, body: bytes) -> None:
        """POST one message.

        A request's answer is awaited by a reader thread, so the session's timeout and cancellation work
        while the server is still thinking. initialize is the exception: its answer decides the session
        id and whether to fall back to HTTP+SSE, so the caller waits for it.
        """
        if self._dead:
            raise ConnectionClosed("the HTTP session is closed")
        request_ids = set(jsonrpc.request_ids(message))
        method = message.get("method") if isinstance(message, dict) else None
        if method == methods.INITIALIZE:
            self._initialize(message, body)
        elif request_ids:
            stream = self._register(request_ids)  # before sending: a cancellation must find it
            try:
                call = self._conns.begin("POST", self._url, self._post_headers, body, self._owner.timeout)
            except BaseException:
                self._unregister(stream)
                raise
            self._submit(self._await_answer, stream, call)
        else:
            if method == methods.CANCELLED:
                # The session gave up on that request (timeout or cancel): stop reading its answer.
                self._forget((message.get("params") or {}).get("requestId"))
            exchange = self._conns.request("POST", self._url, self._post_headers, body, self._owner.timeout)
            self._check(exchange)
            exchange.read()  # 202 with no body; a 200 with one is tolerated and ignored
            if method == methods.INITIALIZED:
                self._start_listening()

    def _check(self, exchange: Exchange) -> None:
        """Raise for a POST that failed: `SessionExpired` for a 404 on our session, else `HTTPError`."""
        if exchange.status == 404 and self.session_id is not None:
            raise self._expire(exchange)
        if not 200 <= exchange.status < 300:
            raise exchange.failure()

    def _initialize(self, message: Dict[str, Any], body: bytes) -> None:
        self._initialize_id = message.get("id")
        exchange = self._conns.request("POST", self._url, self._post_headers, body, self._owner.timeout)
        if exchange.status in _FALLBACK_STATUSES:
            raise _NotStreamable(exchange.failure())
        self._check(exchange)
        self._adopt_session(exchange)
        request_ids = {message["id"]}
        content_type = exchange.content_type
        if content_type == EVENT_STREAM:
            self._submit(self._read_answer_stream, self._register(request_ids), exchange)
            return
        problem = (self._json_answer(exchange, request_ids) if content_type == JSON
                   else self._unexpected_type(exchange))
        if problem is not None:
            raise problem

    def _adopt_session(self, exchange: Exchange) -> None:
        session_id = exchange.headers.get("MCP-Session-Id")
        if session_id is None:
            return  # a stateless server
        if not _SESSION_ID.fullmatch(session_id):
            exchange.close()
            raise RemoteProtocolError(f"the server sent an invalid MCP-Session-Id {session_id!r}")
        self.session_id = session_id
        self._set_headers()

    def _register(self, request_ids: Set[RequestId]) -> _Stream:
        """A stream for the answer to these requests, findable by their ids until `_unregister`."""
        stream = _Stream(request_ids, time.monotonic() + self._owner.timeout)
        with self._lock:
            if self._dead:
                raise ConnectionClosed("the HTTP session is closed")
            for request_id in request_ids:
                self._streams[request_id] = stream
            if self._readers is None:
                self._readers = DaemonPool(self._owner.max_readers, "mcplite-http-reader")
        return stream

    def _unregister(self, stream: _Stream) -> None:
        with self._lock:
            for request_id in stream.request_ids:
                if self._streams.get(request_id) is stream:
                    del self._streams[request_id]

    def _submit(self, job: Callable[[_Stream, Any], None], stream: _Stream, work: Any) -> None:
        """Run ``job(stream, work)`` on a reader thread; ``work`` is a `Call` or an `Exchange`."""
        with self._lock:
            readers = self._readers
        try:
            if readers is None or not readers.submit(job, stream, work):  # closed since it was registered
                raise ConnectionClosed("the HTTP session is closed")
        except BaseException:
            # Nobody will finish this call: close it here, or an auth flow suspended inside it (holding
            # its sign-in lock, say) would never be closed.
            self._unregister(stream)
            work.close()
            raise

    # ---- answers (reader threads) -----------------------------------------------------------------------
    def _await_answer(self, stream: _Stream, call: Call) -> None:
        """Wait for the answer to a POSTed request and deliver it, whatever form it takes."""
        with self._answering(stream):
            if not stream.attach(call):
                call.close()
                return
            try:
                exchange = call.finish()
            except HTTPError:
                if stream.stopped.is_set():
                    return  # interrupted on purpose: the session no longer waits
                raise
            finally:
                stream.detach()
            if exchange.status == 404 and self.session_id is not None:
                self._expire(exchange)
                return
            if not 200 <= exchange.status < 300:
                raise exchange.failure()
            content_type = exchange.content_type
            if content_type == JSON:
                problem = self._json_answer(exchange, stream.request_ids)
                if problem is not None:
                    raise problem
            elif content_type == EVENT_STREAM:
                self._follow(stream, exchange)
            else:
                raise self._unexpected_type(exchange)

    def _read_answer_stream(self, stream: _Stream, exchange: Exchange) -> None:
        with self._answering(stream):
            self._follow(stream, exchange)

    @contextlib.contextmanager
    def _answering(self, stream: _Stream) -> Iterator[None]:
        """Whatever goes wrong while answering ``stream`` is delivered as an error for its requests."""
        try:
            yield
        except HTTPError as exc:
            self._fail(stream, str(exc), exc.status, exc.body)
        except MCPError as exc:  # the auth flow gave up, say
            self._fail(stream, f"POST {self._url}: {exc}")
        except Exception as exc:  # a bug here must still wake the callers, not leave them hanging
            log.exception("reading the answer from %s failed", self._url)
            self._fail(stream, f"POST {self._url}: reading the answer failed: {describe(exc)}")
        finally:
            self._unregister(stream)

    def _json_answer(self, exchange: Exchange, request_ids: AbstractSet[RequestId]) -> Optional[HTTPError]:
        """Deliver a JSON answer; returns the error to report when it does not answer every request."""
        data = exchange.read()
        try:
            value = decode(data)
        except InvalidMessage as exc:
            problem = f"the JSON answer does not parse: {exc}"
        else:
            self._deliver(value)
            missing = request_ids - set(jsonrpc.response_ids(value))
            if not missing:
                return None
            problem = f"the JSON answer has no response to request {_list(missing)}"
        return HTTPError(f"POST {self._url}: HTTP {exchange.status}: {problem}", status=exchange.status,
                         body=data.decode("utf-8", "replace"), headers=exchange.headers)

    @staticmethod
    def _unexpected_type(exchange: Exchange) -> HTTPError:
        return exchange.failure(f"expected {JSON} or {EVENT_STREAM}, got Content-Type "
                                f"{exchange.headers.get('Content-Type')!r}")

    def _deliver(self, value: Any) -> None:
        """Hand one decoded message (or batch) to the session, noting what it answers."""
        if self._initialize_id is not None:
            self._watch_initialize(value)
        if self._streams:
            for request_id in jsonrpc.response_ids(value):
                with self._lock:
                    stream = self._streams.pop(request_id, None)
                if stream is not None:
                    stream.pending.discard(request_id)
        self._owner.deliver(value)

    def _watch_initialize(self, value: Any) -> None:
        if not isinstance(value, dict) or value.get("id") != self._initialize_id or "method" in value:
            return
        self._initialize_id = None
        result = value.get("result")
        version = result.get("protocolVersion") if isinstance(result, dict) else None
        if isinstance(version, str) and is_supported(version) and revision(version).protocol_version_header:
            self.protocol_version = version
            self._set_headers()

    def _pump(self, stream: _Stream, exchange: Exchange) -> Optional[str]:
        """Deliver one SSE response's messages until it ends or ``stream`` needs nothing more.

        Returns why the response broke off, or None when it ended or was no longer needed.
        """
        if not stream.attach(exchange):
            exchange.close()
            return None
        parser = SSEParser()
        timeout = self._owner.timeout

        def on_chunk(events: List[Event]) -> bool:
            stream.chunks += 1
            stream.deadline = time.monotonic() + timeout
            for event in events:
                deliver_event(event, self._deliver, self._owner.deliver_invalid)
            if parser.last_event_id:
                stream.last_event_id = parser.last_event_id
            if parser.retry is not None:
                stream.retry_ms = parser.retry
            return stream.done

        try:
            return read_sse(exchange, parser, on_chunk, self._owner.sse_read_timeout)
        finally:
            stream.detach()

    def _follow(self, stream: _Stream, exchange: Exchange) -> None:
        """Read a request's SSE answer, resuming it with GET + ``Last-Event-ID`` whenever it drops early.

        A dropped connection is not a cancellation: the request stays pending until its answer comes,
        the session gives up on it (its ``notifications/cancelled`` stops this stream), or the server
        sends nothing at all for `timeout` seconds.

        Raises:
            HTTPError: the server refused to resume the stream.
        """
        current: Optional[Exchange] = exchange
        reason = ""
        while True:
            if current is not None:
                reason = self._pump(stream, current) or "the server ended the stream"
            if stream.done:
                return
            if not stream.last_event_id:
                self._fail(stream, f"POST {self._url}: the answer stream ended before the response ({reason}), "
                                   "with no event id to resume it from")
                return
            if time.monotonic() > stream.deadline:
                self._fail(stream, f"POST {self._url}: the answer stream dropped ({reason}) and resuming it "
                                   f"brought nothing for {self._owner.timeout} s")
                return
            if stream.stopped.wait(stream.retry_delay()):
                return
            current, reason = self._resume(stream)

    def _resume(self, stream: _Stream) -> Tuple[Optional[Exchange], str]:
        """GET the stream again from its last event id: (the response, "") or (None, why it failed).

        Raises:
            HTTPError: the server refused to resume (the stream cannot be resumed at all).
        """
        try:
            exchange = self._get(stream)
        except HTTPError as exc:
            return None, str(exc)
        if exchange.status == 404 and self.session_id is not None:
            self._expire(exchange)
            return None, "the session expired"
        if exchange.status != 200 or exchange.content_type != EVENT_STREAM:
            raise exchange.failure(f"cannot resume the answer stream from event {stream.last_event_id!r}")
        return exchange, ""

    def _get(self, stream: _Stream) -> Exchange:
        """GET ``stream`` (again), from its last event id when it has one. Raises as `ConnectionPool.request`."""
        headers = self._get_headers
        if stream.last_event_id:
            headers = {**headers, "Last-Event-ID": stream.last_event_id}
        return self._conns.request("GET", self._url, headers, None, self._owner.timeout)

    def _fail(self, stream: _Stream, message: str, status: int = 0, body: str = "") -> None:
        """Answer each request still pending on ``stream`` with a JSON-RPC error, so its caller wakes."""
        with self._lock:
            if self._dead:
                return
            request_ids = list(stream.pending)
            stream.pending.clear()
        for request_id in request_ids:
            self._owner.fail(request_id, HTTPError(message, status=status, body=body))

    def _forget(self, request_id: Any) -> None:
        """Stop waiting for the answer of a request the session no longer waits for."""
        with self._lock:
            stream = self._streams.pop(request_id, None)
        if stream is not None:
            stream.pending.discard(request_id)
            if not stream.pending:
                stream.stop()

    # ---- the GET stream ---------------------------------------------------------------------------------
    def _start_listening(self) -> None:
        with self._lock:
            if self._listener is not None or self._dead:
                return
            self._listener = _Stream(set(), 0.0)
        threading.Thread(target=self._listen, args=(self._listener,), name="mcplite-http-listen",
                         daemon=True).start()

    def _listen(self, stream: _Stream) -> None:
        """Read the GET stream for server-initiated messages, reconnecting as the server allows.

        A 405 (or any refusal) means the server offers no such stream. Gives up after `_LISTEN_ATTEMPTS`
        connections in a row that brought nothing.
        """
        failures = 0
        while not stream.stopped.is_set():
            try:
                exchange = self._get(stream)
            except MCPError as exc:  # no response, or the auth flow gave up
                reason = str(exc)
                failures += 1
            else:
                if exchange.status != 200 or exchange.content_type != EVENT_STREAM:
                    log.debug("no GET stream from %s: %s", self._url, exchange.failure())
                    return
                chunks = stream.chunks
                reason = self._pump(stream, exchange) or "the server ended it"
                failures = 0 if stream.chunks > chunks else failures + 1
            if failures >= _LISTEN_ATTEMPTS:
                log.warning("stopped listening to the GET stream of %s: %s", self._url, reason)
                return
            if stream.stopped.wait(stream.retry_delay()):
                return

    # ---- ending -----------------------------------------------------------------------------------------
    def _expire(self, exchange: Exchange) -> SessionExpired:
        """The server answered 404 for our session: end everything; the error says to start a new one."""
        error = SessionExpired(f"{exchange.method} {self._url}: HTTP 404: the server no longer knows session "
                               f"{self.session_id!r}; start a new session", status=404,
                               body=exchange.error_text(), headers=exchange.headers)
        self._expired = True
        self._stop_streams()
        self._owner.lost(error)
        return error

    def _stop_streams(self) -> None:
        with self._lock:
            self._dead = True
            streams = set(self._streams.values())
            self._streams.clear()
            if self._listener is not None:
                streams.add(self._listener)
            readers, self._readers = self._readers, None
        for stream in streams:
            stream.stop()
        if readers is not None:
            readers.shutdown()

    def close(self) -> None:
        self._stop_streams()
        if self.session_id is None or self._expired:
            return
        try:
            exchange = self._conns.request("DELETE", self._url, self._delete_headers, None,
                                           min(self._owner.timeout, _DELETE_TIMEOUT))
        except MCPError as exc:  # a courtesy: closing goes on whatever the server (or auth) says
            log.debug("could not end the HTTP session: %s", exc)
            return
        if not 200 <= exchange.status < 300:
            log.debug("the server did not end the session: %s", exchange.failure())  # 405: it may refuse
        else:
            exchange.read()


def _list(ids: AbstractSet[RequestId]) -> str:
    return ", ".join(repr(request_id) for request_id in sorted(ids, key=repr))




# ---- the transport ----------------------------------------------------------------------------------
class HTTPClientTransport(Transport):
    """A client's connection to an MCP server at an ``http(s)://`` URL.

    Args:
        url: the MCP endpoint (for an old server: its SSE endpoint).
        timeout: seconds to connect and to receive each answer's headers (and JSON body); also how long a
            dropped answer stream is resumed without the server sending anything.
        transport: "auto" (Streamable HTTP, falling back to HTTP+SSE when initialize is refused with
            400, 404 or 405), "streamable", or "sse" (the 2024-11-05 transport only).
        headers: extra headers for every request (they cannot override the protocol's own).
        auth: an object with ``auth_flow(HTTPRequest) -> AuthFlow`` (see `mcplite.transports.http_messages`), such as
            `mcplite.oauth.OAuth`; every request goes through it. The flow is always closed, whatever
            happens to the request, so a lock it holds across its yields is released.
        ssl_context: the TLS context; default ``ssl.create_default_context(cafile=cafile)``.
        cafile: a CA bundle to trust instead of the system's (ignored with ``ssl_context``).
        sse_read_timeout: seconds an SSE stream may stay silent before it counts as dropped.
        pool_size: idle keep-alive connections kept per origin.
        max_readers: requests whose answers are awaited at once (each by a reader thread, reused from
            call to call); answers to more wait for a free reader.

    Proxies come from the environment (``http_proxy``, ``https_proxy``, ``no_proxy``), as `urllib` reads
    them; HTTPS goes through the proxy with CONNECT.
    """

    def __init__(self, url: str, *, timeout: float = DEFAULT_TIMEOUT, transport: str = "auto",
                 headers: Optional[Dict[str, str]] = None, auth: Any = None,
                 ssl_context: Optional[ssl.SSLContext] = None, cafile: Optional[str] = None,
                 sse_read_timeout: float = DEFAULT_SSE_READ_TIMEOUT, pool_size: int = DEFAULT_POOL_SIZE,
                 max_readers: int = DEFAULT_MAX_READERS) -> None:
        if transport not in _TRANSPORTS:
            raise ValueError(f"transport must be one of {', '.join(_TRANSPORTS)}, not {transport!r}")
        plan_route(url, {})  # reject a URL that is not http(s) now rather than at the first send
        self.url = url
        self.timeout = timeout
        self.sse_read_timeout = sse_read_timeout
        self.max_readers = max_readers
        self.headers: Dict[str, str] = dict(headers or {})
        self.connections = ConnectionPool(ssl_context=ssl_context, cafile=cafile, pool_size=pool_size, auth=auth)
        self._kind = transport
        self._sink: Optional[MessageSink] = None
        self._mode: Any = None  # _StreamableHTTP or LegacySSE, chosen by the first send
        self._mode_lock = threading.Lock()  # serialises that choice
        self._lock = threading.Lock()  # guards _closed and _lost
        self._closed = False
        self._lost = False

    @property
    def transport(self) -> Optional[str]:
        """"streamable" or "sse" once the first message chose one, else None."""
        if self._mode is None:
            return None
        return "sse" if isinstance(self._mode, LegacySSE) else "streamable"

    @property
    def session_id(self) -> Optional[str]:
        """The ``MCP-Session-Id`` the server gave at initialize (None: none, or not yet)."""
        return self._mode.session_id if isinstance(self._mode, _StreamableHTTP) else None

    @property
    def protocol_version(self) -> Optional[str]:
        """The revision sent as ``MCP-Protocol-Version`` (None until initialize, or for old revisions)."""
        return self._mode.protocol_version if isinstance(self._mode, _StreamableHTTP) else None

    def start(self, sink: MessageSink) -> None:
        self._sink = sink

    def send(self, message: Any, *, related_request_id: Optional[RequestId] = None) -> None:
        """POST one message. It is on the wire when this returns; a request's answer is awaited and
        delivered by a reader thread (initialize's before this returns).

        Raises:
            HTTPError: the message could not be sent, or (initialize, notifications, responses) the server
                refused it or did not answer (``status``/``body`` say more).
            SessionExpired: the server forgot our session (404); the session is over.
            ConnectionClosed: the transport is closed.
        """
        if self._closed or self._sink is None:
            raise ConnectionClosed("the HTTP transport is " + ("closed" if self._closed else "not started"))
        body = encode(message).encode("utf-8")
        mode = self._mode
        if mode is None:
            with self._mode_lock:
                if self._mode is None:
                    self._open(message, body)
                    return
                mode = self._mode
        mode.send(message, body)

    def _open(self, message: Any, body: bytes) -> None:
        """Choose the transport with the first message (initialize), and send it there."""
        if self._kind == "sse":
            self._open_legacy(message, body, None)
            return
        streamable = _StreamableHTTP(self)
        try:
            streamable.send(message, body)
        except _NotStreamable as refusal:
            if self._kind == "streamable":
                raise refusal.error from None
            log.info("%s refused Streamable HTTP (HTTP %s); trying the HTTP+SSE transport", self.url,
                     refusal.error.status)
            self._open_legacy(message, body, refusal.error)
            return
        self._mode = streamable
        if self._closed:  # close() ran while this first message was on its way
            streamable.close()

    def _open_legacy(self, message: Any, body: bytes, refusal: Optional[HTTPError]) -> None:
        legacy = LegacySSE(self)
        try:
            legacy.connect()
        except MCPError as exc:
            if refusal is None:
                raise
            raise HTTPError(f"{refusal} (and the HTTP+SSE fallback failed: {exc})", status=refusal.status,
                            body=refusal.body, headers=refusal.headers) from exc
        self._mode = legacy  # before sending: close() must reach its stream even if this POST fails
        legacy.send(message, body)

    # ---- called by the modes ----------------------------------------------------------------------------
    def deliver(self, value: Any) -> None:
        if self._sink is not None and not self._lost:
            self._sink.receive(value)

    def fail(self, request_id: Any, exc: BaseException) -> None:
        if self._sink is not None and not self._lost:
            self._sink.fail_request(request_id, exc)

    def deliver_invalid(self, exc: InvalidMessage) -> None:
        if self._sink is not None and not self._lost:
            self._sink.receive_invalid(exc)

    def lost(self, exc: Optional[BaseException]) -> None:
        """Tell the session, once, that nothing more will arrive."""
        with self._lock:
            if self._lost:
                return
            self._lost = True
        if self._sink is not None:
            self._sink.connection_lost(exc)

    def close(self) -> None:
        """End the session (DELETE it on a Streamable HTTP server; a 405 is fine) and close every connection."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        mode = self._mode
        if mode is not None:
            mode.close()
        self.connections.close()
        self.lost(None)
