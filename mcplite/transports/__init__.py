"""The contract between a transport and the session that uses it.

A transport moves whole JSON-RPC messages and knows nothing of MCP. The session hands it a `MessageSink`
once (`start`); from then on the transport calls the sink from its reader thread, in arrival order:

- ``receive(value)`` for every decoded JSON value (one message, or a list for a JSON-RPC batch);
- ``receive_invalid(exc)`` for bytes that were not JSON, so the session can answer -32700;
- ``connection_lost(exc)`` exactly once, when nothing more will arrive (EOF, peer death, `close()`), or
  instead ``input_ended(exc)`` when nothing more will arrive but the peer still reads what we send (a
  stdio server's stdin ended): the session answers what it has, then ends as for ``connection_lost``;
- ``fail_request(id, exc)`` when the transport knows one of our requests will never be answered (an HTTP
  exchange that failed), so its caller gets ``exc`` at once rather than a timeout.

The session, in turn, calls the transport:

- ``send(message, route)`` for every outgoing message, from any thread (each transport serialises its own
  writes). The `Route` (computed by the pure `protocol.http_rules.route`) says what the transport may need
  to know about the message: the request it is, the incoming request it belongs to, the protocol headers,
  whether it opens the session or starts the listening stream. A transport never reads the message for that;
  stdio and the in-memory pair need none of it;
- ``cancel(request_id)`` when it gives up on one of its own requests (a timeout, `PendingRequest.cancel`):
  the transport may stop awaiting that answer (an HTTP client stops reading its stream). The session still
  tells the peer itself, with ``notifications/cancelled``, where the protocol says so;
- ``close()`` once; ``abort()`` instead (or before it) when the connection failed before it was of use;
- ``set_deadline(when)`` around the client's connect: whatever ``send`` blocks on until then (an HTTP
  transport connecting, and waiting for the answer that opens its session) ends by ``when``.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import abc

from ..protocol.http_rules import Route
from ..protocol.jsonrpc import InvalidMessage, decode

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see __init__)
if TYPE_CHECKING:
    from typing import Any, Callable, Mapping, Optional, Protocol, Sequence

    from ..protocol.jsonrpc import RequestId
    from ..protocol.lifecycle import Lifecycle
    from ..protocol.versions import Revision
else:
    Protocol = object  # the protocols below are plain base classes at run time: no typing import

__all__ = ["MessageSink", "Route", "Transport", "deliver_bytes", "deliver_invalid", "RequestInfo", "HostedSession",
           "SessionFactory"]


class MessageSink(abc.ABC):
    """What a transport delivers to (implemented by `session.Session`)."""

    @abc.abstractmethod
    def receive(self, value: Any) -> None:
        """One decoded JSON value from the peer."""

    @abc.abstractmethod
    def receive_invalid(self, exc: InvalidMessage) -> None:
        """Bytes from the peer that did not decode."""

    @abc.abstractmethod
    def connection_lost(self, exc: Optional[BaseException]) -> None:
        """Nothing more will arrive; ``exc`` says why when it was not an orderly close."""

    def input_ended(self, exc: Optional[BaseException]) -> None:
        """Nothing more will arrive, but the peer may still read what we send (a stdio server's stdin
        ended): answer what has arrived, then close. By default the same as `connection_lost`."""
        self.connection_lost(exc)

    def fail_request(self, request_id: RequestId, exc: BaseException) -> None:
        """Our request ``request_id`` will get no answer: its caller should get ``exc`` now."""
        raise NotImplementedError


class Transport(abc.ABC):
    """Moves JSON-RPC messages between this process and one peer."""

    #: Whether `send` reads its ``route``. A stream transport (stdio, memory) writes every message the same
    #: way, so the session builds no route for it: one allocation less on every message.
    wants_route = False

    @abc.abstractmethod
    def start(self, sink: MessageSink) -> None:
        """Begin delivering incoming messages to ``sink``. Called once."""

    @abc.abstractmethod
    def send(self, message: Any, route: Optional[Route] = None) -> None:
        """Send one message (or a batch list). Thread-safe.

        ``route`` is what the session knows about the message that a transport may need (see `Route`):
        ``route.related_request_id`` names the incoming request it belongs to (progress, logs and server
        requests made while handling it), which transports with per-request streams route by;
        ``route.headers`` are the protocol headers an HTTP transport sends with it. None: no route (a
        message sent outside a session, as tests do).
        Raises `ConnectionClosed` when the connection is gone.
        """

    def cancel(self, request_id: RequestId) -> bool:
        """The session no longer waits for the answer to its request ``request_id``. Thread-safe.

        The transport may stop awaiting it (an HTTP client stops reading that answer's stream); it sends
        nothing. Returns True when stopping was itself the cancellation the peer sees (2026-07-28 over HTTP:
        closing a request's connection cancels it), so the session sends no ``notifications/cancelled``;
        False when the session must tell the peer. Nothing to do by default: a stream transport delivers a
        late answer, and the session drops it.
        """
        return False

    @abc.abstractmethod
    def close(self) -> None:
        """Close the connection (idempotent). The sink then gets ``connection_lost`` if it has not yet."""

    def abort(self) -> None:
        """Close at once, without the courtesies of `close` (a stdio server gets no grace to exit): the
        connection failed before it was of use. By default the same as `close`."""
        self.close()

    def set_deadline(self, deadline: Optional[float]) -> None:
        """Until called again with None, what `send` blocks on ends by ``deadline`` (a `time.monotonic`
        value), failing as a timeout would: the client sets one for the length of its connect. Nothing to do
        by default: a stream transport's send does not wait for the peer."""


def deliver_bytes(data: bytes, sink: MessageSink) -> None:
    """Decode one framed message and hand it to ``sink`` (the common path of the stream transports)."""
    try:
        value = decode(data)
    except InvalidMessage as exc:
        deliver_invalid(exc, sink)
    else:
        sink.receive(value)


def deliver_invalid(exc: InvalidMessage, sink: MessageSink) -> None:
    """Hand something that did not decode to ``sink``; when it could still be read as the answer to one of our
    requests (``exc.id`` set, ``exc.respond`` false: see `jsonrpc.decode`), that request fails with ``exc``
    now, rather than waiting for an answer that has come and will not come again."""
    sink.receive_invalid(exc)
    if exc.id is not None and not exc.respond:
        try:
            sink.fail_request(exc.id, exc)
        except NotImplementedError:  # a sink with no requests of its own
            pass




# ---- what a server transport that makes its own sessions (HTTP) knows of them ----------------------------------
# A stream transport (stdio, memory) is handed to a session that already exists. An HTTP server is the other way
# round: each client (or, stateless, each POST) needs a session of its own, made when its request arrives. It asks
# a `SessionFactory` (the `Server`) for one, and speaks to it only through `HostedSession`: no session class, no
# MCP method name. What it knows of each request reaches the handler as a `RequestInfo`.


def _cannot_close_stream() -> bool:
    return False


class RequestInfo:
    """What the transport knows about one incoming request, for its handler (`RequestContext.request_info`).

    Only transports that see requests one by one have one (HTTP); a stream transport's requests carry None.

    Attributes:
        headers: the HTTP request's headers, with lower-case names (repeated ones joined with ", ").
        auth: what the HTTP server's ``authenticate`` hook returned for the request (None without a hook).
        session_id: the transport's session id (``MCP-Session-Id``, or the legacy ``session_id``); None when
            stateless.
        close_sse_stream: ends the response that carries the request's SSE stream now, so that the client
            resumes it later (SSE polling, 2025-11-25); returns False where the stream cannot be resumed.
    """

    __slots__ = ("headers", "auth", "session_id", "close_sse_stream")

    def __init__(self, headers: Mapping[str, str], *, auth: Any = None, session_id: Optional[str] = None,
                 close_sse_stream: Callable[[], bool] = _cannot_close_stream) -> None:
        self.headers = headers
        self.auth = auth
        self.session_id = session_id
        self.close_sse_stream = close_sse_stream

    def __repr__(self) -> str:
        return f"RequestInfo(session_id={self.session_id!r}, auth={self.auth!r}, headers={dict(self.headers)!r})"


class HostedSession(Protocol):
    """A session as the server transport that made it sees it (implemented by `session.ServerSession`).

    The transport is its session's `MessageSink` source: it calls `receive` for each message the client POSTs.
    """

    @property
    def revision(self) -> Optional[Revision]:
        """The negotiated protocol revision; None until the handshake is done (read-only here: a session
        whose revision is never None still fits)."""
        ...

    @property
    def lifecycle(self) -> Lifecycle:
        """Where the session is in the MCP lifecycle: the app asks it whether the handshake is done."""
        ...

    def start(self) -> None:
        """Begin: calls the transport's ``start`` with the session as the sink."""

    def close(self) -> None:
        """End the session and close its transport (idempotent)."""

    def on_close(self, hook: Callable[[], None]) -> None:
        """Call ``hook`` once the session has ended, whoever ended it."""

    def receive(self, value: Any, *, inline: bool = False, request_info: Optional[RequestInfo] = None,
                wait_deferred: bool = True) -> None:
        """One decoded message; ``inline`` runs a request's handler on the calling thread (and, unless not
        ``wait_deferred``, waits for a request it defers to end)."""

    def assume_initialized(self, version: str) -> None:
        """Start past the handshake, under ``version`` (stateless HTTP: every request stands alone)."""

    def expect_envelope(self) -> None:
        """Speak 2026-07-28 only (an HTTP request sent at that revision): an unenveloped request is malformed."""


class SessionFactory(Protocol):
    """Where a server transport gets a session for each new client (implemented by `Server`)."""

    @property
    def supported_versions(self) -> Sequence[str]:
        """The protocol revisions the sessions accept, newest first."""
        ...

    def create_session(self, transport: Transport) -> HostedSession:
        """A new session that speaks over ``transport``, not yet started."""
        ...
