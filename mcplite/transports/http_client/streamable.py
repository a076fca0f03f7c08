"""The Streamable HTTP dialect of the HTTP client: one endpoint, a POST per message; in revisions 2025-03-26 to
2025-11-25 also a GET to listen and a DELETE to end the session.

Every message is POSTed to the MCP endpoint. The answer to a request is either JSON or an SSE stream that
may carry the server's own requests and notifications before the response; notifications and responses
are answered 202. The message that opens the session (its route says so) is awaited by the caller: its
answer carries the session id (``MCP-Session-Id``), and a refusal may mean an HTTP+SSE server. The message
whose route says ``starts_listening`` opens the GET stream for server-initiated messages. Every other
header the protocol wants comes with each message's route, so this module reads no MCP message.

Threads, and why:

- the caller's thread writes each POST, so a message is on the wire, in order, when `send` returns, and
  a refused connection raises at once. Notifications and responses are also answered (202) there;
- the answer to a request is awaited by a thread from a small pool of reusable daemon threads, which
  delivers a JSON answer, or reads an SSE answer (resuming it if it drops). The caller never waits inside
  `send` for the server to think: that wait happens in `PendingRequest.result()`, where the session's
  timeout and `cancel()` reach it (`cancel` interrupts the reader). This costs one thread hand-off per
  request. The opening message is the exception, awaited by the caller;
- one daemon thread reads the GET stream.

A 404 for our session ends the session: `SessionExpired` is raised by `send` or becomes the session's
``close_reason``.

Revision 2026-07-28 (a message whose route is ``enveloped``) has no session: each POST carries exactly the
headers of its route, and nothing else is ever sent (no GET, no DELETE, no session id). Its answers differ in
three ways: a 4xx whose JSON body is the JSON-RPC error for the request is that request's answer (the
server's status follows the error code: 404 for -32601, 400 for -32602 and -32020..-32022); a stream that
breaks before the response cannot be resumed, so the request fails with `ResponseLost` (the client decides
whether to send it again); and `cancel` closes the request's connection, which is the cancellation.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import contextlib
import json
import threading
import time
from typing import (
    TYPE_CHECKING,
    AbstractSet,
    Any,
    Callable,
    Dict,
    FrozenSet,
    Iterator,
    List,
    Mapping,
    Optional,
    Set,
    Tuple,
    Union,
)

from ..._log import log
from ..._sync import DaemonPool
from ...errors import (
    AuthError,
    ConnectionClosed,
    HTTPError,
    MCPError,
    RemoteProtocolError,
    ResponseLost,
    SessionExpired,
)
from ...protocol import jsonrpc
from ...protocol.http_rules import (
    EVENT_STREAM,
    JSON,
    LAST_EVENT_ID_HEADER,
    LEGACY_FALLBACK_STATUSES,
    NO_HEADERS,
    POST_ACCEPT,
    PROTOCOL_VERSION_HEADER,
    SESSION_ID_HEADER,
    is_valid_session_id,
)
from ...protocol.jsonrpc import InvalidMessage, decode
from ...protocol.sse import Event, SSEParser
from .pool import Call, Exchange, deliver_event, describe, read_sse

if TYPE_CHECKING:
    from ...protocol.http_rules import Route
    from ...protocol.jsonrpc import RequestId
    from .dialect import DialectHost

__all__ = ["StreamableHTTP", "NotStreamable", "DEFAULT_RETRY_MS"]

#: Milliseconds to wait before reconnecting a stream when the server never sent a ``retry`` field.
DEFAULT_RETRY_MS = 1000
#: The longest `close()` waits for the server to acknowledge the end of the session.
_DELETE_TIMEOUT = 5.0
#: Consecutive attempts at the GET stream that bring nothing before we stop listening.
_LISTEN_ATTEMPTS = 3


class _Stream:
    """One SSE stream we follow across reconnections: a POST's answer, or (no request ids) the GET stream.

    ``pending`` holds the ids of the requests it must still answer; an answer stream is done when it is
    empty, the GET stream only when stopped.
    """

    def __init__(self, request_ids: Set[RequestId], deadline: float, enveloped: bool = False) -> None:
        self.request_ids = frozenset(request_ids)
        self.enveloped = enveloped  # a 2026-07-28 request: error answers come with 4xx; no resuming
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


class _Headers:
    """The header sets for one state of the session (its id, the protocol headers); never mutated, so a
    sender reads one consistent set without a lock, and a change replaces the whole object."""

    __slots__ = ("protocol", "post", "get", "delete")

    def __init__(self, custom: Dict[str, str], session_id: Optional[str], protocol: Mapping[str, str]) -> None:
        ours = {SESSION_ID_HEADER: session_id} if session_id is not None else {}
        ours.update(protocol)
        self.protocol = protocol  # as the route gave it: compared by identity with the next route's
        self.post = {**custom, "Accept": POST_ACCEPT, "Content-Type": JSON, **ours}
        self.get = {**custom, "Accept": EVENT_STREAM, **ours}
        self.delete = {**custom, **ours}


class NotStreamable(Exception):
    """The message that opens the session was refused with 400/404/405: perhaps an HTTP+SSE server.
    Carries the HTTPError."""

    def __init__(self, error: HTTPError) -> None:
        super().__init__(str(error))
        self.error = error


class StreamableHTTP:
    """The Streamable HTTP dialect (2025-03-26 onwards): one endpoint, POST per message, GET to listen.

    Everything it needs from the transport comes through ``host`` (see `dialect.DialectHost`).
    """

    def __init__(self, host: DialectHost) -> None:
        self._host = host
        self._url = host.url
        self._conns = host.connections
        self._lock = threading.Lock()  # guards _streams, _dead and the listener start
        self._streams: Dict[RequestId, _Stream] = {}  # request id -> the stream that will answer it
        self._readers: Optional[DaemonPool] = None
        self._listener: Optional[_Stream] = None
        self._dead = False  # closed, or the session expired
        self._expired = False
        self.session_id: Optional[str] = None
        self._headers = _Headers(host.headers, None, NO_HEADERS)
        # 2026-07-28 POSTs: these, then the route's own headers (which the custom ones cannot override).
        self._envelope_post = {**host.headers, "Accept": POST_ACCEPT, "Content-Type": JSON}

    @property
    def protocol_version(self) -> Optional[str]:
        """The revision sent as ``MCP-Protocol-Version`` (None until the session's routes carry one)."""
        return self._headers.protocol.get(PROTOCOL_VERSION_HEADER)

    @property
    def awaiting(self) -> FrozenSet[RequestId]:
        """The ids of the requests whose answers are still awaited (read, or to be read)."""
        with self._lock:
            return frozenset(self._streams)

    @property
    def listening(self) -> bool:
        """True once the GET stream has brought its first bytes, until it stops."""
        listener = self._listener
        return listener is not None and listener.chunks > 0 and not listener.stopped.is_set()

    def _headers_for(self, protocol: Mapping[str, str]) -> _Headers:
        """The header sets with the protocol headers of the message being sent, which from now on hold for
        the session's own requests too (GET, DELETE)."""
        headers = self._headers
        if headers.protocol is not protocol:  # a new revision's headers: at the handshake, so rare
            headers = self._headers = _Headers(self._host.headers, self.session_id, protocol)
        return headers

    # ---- sending --------------------------------------------------------------------------------------
    def send(self, message: Any, body: bytes, route: Route) -> None:
        """POST one message, with the protocol headers of its ``route``.

        A request's answer is awaited by a reader thread, so the session's timeout and cancellation work
        while the server is still thinking. The message that opens the session is the exception: its answer
        gives the session id and decides whether to fall back to HTTP+SSE, so the caller waits for it.

        Raises:
            NotStreamable: the message that opens the session was refused with a status that may mean
                an HTTP+SSE server.
            HTTPError, SessionExpired, ConnectionClosed: as `HTTPClientTransport.send`.
        """
        if self._dead:
            raise ConnectionClosed("the HTTP session is closed")
        if route.enveloped:
            self._send_enveloped(message, body, route)
            return
        headers = self._headers_for(route.headers)
        request_ids = jsonrpc.request_ids(message) if route.request_id is None else [route.request_id]
        if route.opens_session:
            self._open_session(body, set(request_ids), headers)
        elif request_ids:
            stream = self._register(set(request_ids))  # before sending: a cancellation must find it
            try:
                call = self._conns.begin("POST", self._url, headers.post, body, self._host.send_timeout())
            except BaseException:
                self._unregister(stream)
                raise
            self._submit(self._await_answer, stream, call)
        else:
            exchange = self._conns.request("POST", self._url, headers.post, body, self._host.send_timeout())
            self._check(exchange)
            exchange.read()  # 202 with no body; a 200 with one is tolerated and ignored
            if route.starts_listening:
                self._start_listening()

    def _send_enveloped(self, message: Any, body: bytes, route: Route) -> None:
        """POST one 2026-07-28 message with exactly its route's headers (no session: none exists)."""
        headers = {**self._envelope_post, **route.headers} if route.headers else self._envelope_post
        request_ids = jsonrpc.request_ids(message) if route.request_id is None else [route.request_id]
        if request_ids:
            stream = self._register(set(request_ids), enveloped=True)
            try:
                call = self._conns.begin("POST", self._url, headers, body, self._host.send_timeout())
            except BaseException:
                self._unregister(stream)
                raise
            self._submit(self._await_answer, stream, call)
            return
        exchange = self._conns.request("POST", self._url, headers, body, self._host.send_timeout())
        if not 200 <= exchange.status < 300:
            raise exchange.failure()
        exchange.read()  # 202 with no body

    def cancel(self, request_id: RequestId) -> bool:
        """The session gave up on ``request_id`` (a timeout or a cancel): stop reading its answer.

        Closing the answer's stream is not a cancellation in the handshake revisions (the server may go on),
        so the session's ``notifications/cancelled`` is still what tells the server: returns False. On
        2026-07-28 closing the request's connection is the cancellation: returns True.
        """
        with self._lock:
            stream = self._streams.pop(request_id, None)
        if stream is None:
            return False
        stream.pending.discard(request_id)
        if not stream.pending:
            stream.stop()  # interrupts the read: the connection closes under it
        return stream.enveloped

    def _check(self, exchange: Exchange) -> None:
        """Raise for a POST that failed: `SessionExpired` for a 404 on our session, else `HTTPError`."""
        if exchange.status == 404 and self.session_id is not None:
            raise self._expire(exchange)
        if not 200 <= exchange.status < 300:
            raise exchange.failure()

    def _open_session(self, body: bytes, request_ids: Set[RequestId], headers: _Headers) -> None:
        """POST the message that opens the session (initialize) and wait for its answer's head."""
        exchange = self._conns.request("POST", self._url, headers.post, body, self._host.send_timeout())
        if exchange.status in LEGACY_FALLBACK_STATUSES:
            raise NotStreamable(exchange.failure())
        self._check(exchange)
        self._adopt_session(exchange)
        content_type = exchange.content_type
        if content_type == EVENT_STREAM:
            self._submit(self._read_answer_stream, self._register(request_ids), exchange)
            return
        problem = (self._json_answer(exchange, request_ids) if content_type == JSON
                   else self._unexpected_type(exchange))
        if problem is not None:
            raise problem

    def _adopt_session(self, exchange: Exchange) -> None:
        session_id = exchange.headers.get(SESSION_ID_HEADER)
        if session_id is None:
            return  # a stateless server
        if not is_valid_session_id(session_id):
            exchange.close()
            raise RemoteProtocolError(f"the server sent an invalid {SESSION_ID_HEADER} {session_id!r}")
        self.session_id = session_id
        self._headers = _Headers(self._host.headers, session_id, self._headers.protocol)

    def _register(self, request_ids: Set[RequestId], enveloped: bool = False) -> _Stream:
        """A stream for the answer to these requests, findable by their ids until `_unregister`."""
        stream = _Stream(request_ids, time.monotonic() + self._host.timeout, enveloped)
        with self._lock:
            if self._dead:
                raise ConnectionClosed("the HTTP session is closed")
            for request_id in request_ids:
                self._streams[request_id] = stream
            if self._readers is None:
                self._readers = DaemonPool(self._host.max_readers, "mcplite-http-reader")
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
            if stream.enveloped and 400 <= exchange.status < 500 and self._error_answer(exchange, stream):
                return
            if exchange.status == 404 and self.session_id is not None:
                self._expire(exchange)
                return
            if not 200 <= exchange.status < 300:
                raise exchange.failure()
            content_type = exchange.content_type
            if content_type == JSON:
                try:
                    problem = self._json_answer(exchange, stream.request_ids)
                except HTTPError as exc:  # the body broke off
                    if not stream.enveloped:
                        raise
                    self._fail(stream, "", error=ResponseLost(f"POST {self._url}: {exc}; the request may or may "
                                                              "not have run"))
                    return
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
        except AuthError as exc:  # the sign-in failed: the caller sees it as such, as for the opening message
            self._fail(stream, str(exc), error=exc)
        except RemoteProtocolError as exc:  # the stream broke a limit (an event too large): say so as it is
            self._fail(stream, str(exc), error=exc)
        except MCPError as exc:
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

    def _error_answer(self, exchange: Exchange, stream: _Stream) -> bool:
        """Deliver a 2026-07-28 refusal whose JSON body is the JSON-RPC error for our request; False (the body
        kept for the `HTTPError`) when it is anything else."""
        if exchange.content_type != JSON:
            return False
        try:
            value = decode(exchange.error_text().encode("utf-8"))
        except InvalidMessage:
            return False
        request_id = value.get("id") if isinstance(value, dict) else None
        if (not isinstance(request_id, (str, int)) or request_id not in stream.request_ids
                or not isinstance(value.get("error"), dict)):
            return False
        self._deliver(value)
        return True

    @staticmethod
    def _unexpected_type(exchange: Exchange) -> HTTPError:
        return exchange.failure(f"expected {JSON} or {EVENT_STREAM}, got Content-Type "
                                f"{exchange.headers.get('Content-Type')!r}")

    def _deliver(self, value: Any) -> None:
        """Hand one decoded message (or batch) to the session, noting what it answers."""
        if self._streams:
            for request_id in jsonrpc.response_ids(value):
                with self._lock:
                    stream = self._streams.pop(request_id, None)
                if stream is not None:
                    stream.pending.discard(request_id)
        self._host.deliver(value)

    def _deliver_invalid(self, exc: InvalidMessage) -> None:
        """Hand an event that did not decode to the session; when it was the answer to one of our requests (see
        `jsonrpc.decode`), that request fails with it, and its stream no longer waits for it."""
        if exc.id is not None and not exc.respond:
            with self._lock:
                stream = self._streams.pop(exc.id, None)
            if stream is not None:
                stream.pending.discard(exc.id)
        self._host.deliver_invalid(exc)

    def _pump(self, stream: _Stream, exchange: Exchange) -> Optional[str]:
        """Deliver one SSE response's messages until it ends or ``stream`` needs nothing more.

        Returns why the response broke off, or None when it ended or was no longer needed.

        Raises:
            RemoteProtocolError: the stream sent an event larger than ``max_message_size`` (see `read_sse`).
        """
        if not stream.attach(exchange):
            exchange.close()
            return None
        parser = SSEParser(max_event_size=self._host.max_message_size)
        timeout = self._host.timeout

        def on_chunk(events: List[Event]) -> bool:
            stream.chunks += 1
            stream.deadline = time.monotonic() + timeout
            for event in events:
                deliver_event(event, self._deliver, self._deliver_invalid)
            if parser.last_event_id:
                stream.last_event_id = parser.last_event_id
            if parser.retry is not None:
                stream.retry_ms = parser.retry
            return stream.done

        try:
            return read_sse(exchange, parser, on_chunk, self._host.sse_read_timeout)
        finally:
            stream.detach()

    def _follow(self, stream: _Stream, exchange: Exchange) -> None:
        """Read a request's SSE answer, resuming it with GET + ``Last-Event-ID`` whenever it drops early.

        A dropped connection is not a cancellation: the request stays pending until its answer comes,
        the session gives up on it (`cancel` stops this stream), or the server sends nothing at all for
        `timeout` seconds.

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
            if stream.enveloped:  # 2026-07-28 streams cannot be resumed: the caller decides what to do
                self._fail(stream, "", error=ResponseLost(
                    f"POST {self._url}: the response stream broke before the response ({reason}); the request "
                    "may or may not have run"))
                return
            if not stream.last_event_id:
                self._fail(stream, f"POST {self._url}: the answer stream ended before the response ({reason}), "
                                   "with no event id to resume it from")
                return
            if time.monotonic() > stream.deadline:
                self._fail(stream, f"POST {self._url}: the answer stream dropped ({reason}) and resuming it "
                                   f"brought nothing for {self._host.timeout} s")
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
        headers = self._headers.get
        if stream.last_event_id:
            headers = {**headers, LAST_EVENT_ID_HEADER: stream.last_event_id}
        return self._conns.request("GET", self._url, headers, None, self._host.timeout)

    def _fail(self, stream: _Stream, message: str, status: int = 0, body: str = "",
              error: Optional[BaseException] = None) -> None:
        """Fail each request still pending on ``stream`` (with ``error``, else an `HTTPError`), so its caller
        wakes."""
        with self._lock:
            if self._dead:
                return
            request_ids = list(stream.pending)
            stream.pending.clear()
        for request_id in request_ids:
            self._host.fail(request_id, error if error is not None else HTTPError(message, status=status, body=body))

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
                try:
                    reason = self._pump(stream, exchange) or "the server ended it"
                except RemoteProtocolError as exc:  # an event too large: reconnecting would bring it again
                    log.warning("stopped listening to the GET stream of %s: %s", self._url, exc)
                    return
                failures = 0 if stream.chunks > chunks else failures + 1
            if failures >= _LISTEN_ATTEMPTS:
                log.warning("stopped listening to the GET stream of %s: %s", self._url, reason)
                return
            if stream.stopped.wait(stream.retry_delay()):
                return

    # ---- ending -----------------------------------------------------------------------------------------
    def _expire(self, exchange: Exchange) -> SessionExpired:
        """The server answered 404 for our session: end everything; the error says to start a new one."""
        body = exchange.error_text()
        said = _error_message(body)  # a server may say why (mcplite: sessions that live in another process)
        error = SessionExpired(f"{exchange.method} {self._url}: HTTP 404: the server no longer knows session "
                               f"{self.session_id!r}; start a new session" + (f" (the server says: {said})" if said
                                                                              else ""),
                               status=404, body=body, headers=exchange.headers)
        self._expired = True
        self._stop_streams()
        self._host.lost(error)
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
            exchange = self._conns.request("DELETE", self._url, self._headers.delete, None,
                                           min(self._host.timeout, _DELETE_TIMEOUT))
        except MCPError as exc:  # a courtesy: closing goes on whatever the server (or auth) says
            log.debug("could not end the HTTP session: %s", exc)
            return
        if not 200 <= exchange.status < 300:
            log.debug("the server did not end the session: %s", exchange.failure())  # 405: it may refuse
            return
        try:
            exchange.read()
        except MCPError as exc:  # a body cut short, or too large: the session has ended all the same
            log.debug("reading the answer to DELETE failed: %s", exc)


def _list(ids: AbstractSet[RequestId]) -> str:
    return ", ".join(repr(request_id) for request_id in sorted(ids, key=repr))






def _error_message(body: str) -> Optional[str]:
    """The message of a JSON-RPC error body, or None when the body is not one."""
    try:
        value = json.loads(body)
    except ValueError:
        return None
    error = value.get("error") if isinstance(value, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return message if isinstance(message, str) and message else None
