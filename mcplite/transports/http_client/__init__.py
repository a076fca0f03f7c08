"""The HTTP client transport: Streamable HTTP (2025-03-26 .. 2025-11-25), and the 2024-11-05 HTTP+SSE
transport for old servers. Standard library only: `http.client` for the wire, `urllib` for proxies.

    HTTPClientTransport("https://host/mcp")       # what Client("https://host/mcp") builds

`HTTPClientTransport` chooses a *dialect* with the first message of the handshake era, and drives it: Streamable
HTTP (`streamable.StreamableHTTP`), falling back to HTTP+SSE (`legacy_sse.LegacySSE`) when the message that
opens the session is refused with 400, 404 or 405. Messages of revision 2026-07-28 (their route says
``enveloped``) have no session and choose nothing: they go through a Streamable HTTP dialect of their own, so a
``server/discover`` probe that a handshake-era server refuses leaves the choice to the ``initialize`` that
follows. Each dialect depends only on `dialect.DialectHost` (what it may ask of
the transport, which this class implements) and on `pool` (keep-alive connections, TLS, proxies, the ``auth``
flow), so the dialects never import this module. The transport reads no MCP message: what it needs to know
about one comes with its `Route` (see `mcplite.transports`), and the session says when it gives up on a
request (`cancel`). The session above never knows which dialect is in use.

Every HTTP failure becomes an exception carrying the status and body: `HTTPError` raised by `send`
(status 0 when no response arrived) for the opening message, notifications and responses; for a request,
the same `HTTPError` raised by the caller's `result()` (through `MessageSink.fail_request`). A 404 for our
session ends the session: `SessionExpired` is raised by `send` or becomes the session's ``close_reason``.
Every socket read has a timeout.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import ssl
import threading
import time
from typing import TYPE_CHECKING, Any, Dict, Hashable, Optional, Union

from ..._log import log
from ...errors import ConnectionClosed, HTTPError, MCPError, TransportError
from ...protocol.http_rules import Route
from ...protocol.jsonrpc import InvalidMessage, encode_bytes
from .. import MessageSink, Transport, deliver_invalid
from ..http_messages import AuthFlow, HTTPRequest, HTTPResponse  # re-exported: what an ``auth`` object sees
from .legacy_sse import LegacySSE
from .pool import DEFAULT_MAX_BODY_SIZE, ConnectionPool, OnResponse, plan_destination
from .streamable import DEFAULT_RETRY_MS, NotStreamable, StreamableHTTP

if TYPE_CHECKING:
    from ...protocol.jsonrpc import RequestId

__all__ = [
    "HTTPClientTransport", "HTTPRequest", "HTTPResponse", "AuthFlow", "DEFAULT_TIMEOUT",
    "DEFAULT_SSE_READ_TIMEOUT", "DEFAULT_RETRY_MS", "DEFAULT_POOL_SIZE", "DEFAULT_MAX_READERS",
    "DEFAULT_MAX_MESSAGE_SIZE",
]

#: Seconds to connect and to receive an answer's headers or JSON body (the session layer's default too).
DEFAULT_TIMEOUT = 60.0
#: Seconds an SSE stream may stay silent before it counts as dropped (the official Python SDK's value).
DEFAULT_SSE_READ_TIMEOUT = 300.0
#: Idle keep-alive connections kept per origin; concurrent calls beyond it use short-lived extra ones.
DEFAULT_POOL_SIZE = 16
#: Requests whose answers are awaited at once, each by a reader thread; more wait for a free reader.
DEFAULT_MAX_READERS = 64
#: The largest message read from the server, in bytes: a JSON body, or one event of an SSE stream (64 MiB, as
#: the stdio client's ``max_line_size``).
DEFAULT_MAX_MESSAGE_SIZE = DEFAULT_MAX_BODY_SIZE

_TRANSPORTS = ("auto", "streamable", "sse")
#: The shortest socket timeout a send under a deadline gets (one that has passed fails almost at once).
_LEAST_TIMEOUT = 0.01
#: The route of a message sent without one (by a test, say): nothing known about it.
_NO_ROUTE = Route()


class HTTPClientTransport(Transport):
    """A client's connection to an MCP server at an ``http(s)://`` URL.

    Args:
        url: the MCP endpoint (for an old server: its SSE endpoint).
        timeout: seconds to connect and to receive each answer's headers (and JSON body); also how long a
            dropped answer stream is resumed without the server sending anything.
        transport: "auto" (Streamable HTTP, falling back to HTTP+SSE when the message that opens the
            session, initialize, is refused with 400, 404 or 405), "streamable", or "sse" (the 2024-11-05
            transport only).
        headers: extra headers for every request (they cannot override the protocol's own).
        auth: an object with ``auth_flow(HTTPRequest) -> AuthFlow`` (see `mcplite.transports.http_messages`),
            such as `mcplite.oauth.OAuth`; every request goes through it. The flow is always closed, whatever
            happens to the request, so a lock it holds across its yields is released.
        ssl_context: the TLS context; default ``ssl.create_default_context(cafile=cafile)``.
        cafile: a CA bundle to trust instead of the system's (ignored with ``ssl_context``).
        sse_read_timeout: seconds an SSE stream may stay silent before it counts as dropped.
        pool_size: idle keep-alive connections kept per origin.
        max_readers: requests whose answers are awaited at once (each by a reader thread, reused from
            call to call); answers to more wait for a free reader.
        max_message_size: the largest message read from the server, in bytes (default 64 MiB): a JSON body
            (an ``auth`` flow's documents too), or one event or line of an SSE stream. Nothing larger is
            buffered: a JSON answer that is larger fails its request with `HTTPError`; an SSE answer stream
            that sends a larger event is closed and the requests it still owed fail with
            `RemoteProtocolError` (a stream is not resumed: the server would send the event again), and the
            session goes on; the GET stream stops; the 2024-11-05 stream is the connection, so it ends.
            Response headers are bounded by `http.client` (100 fields, 64 KiB a line): a larger header
            section fails its request.
        on_response: ``on_response(request, status, headers)``, told of every HTTP response as its headers
            arrive (`pool.OnResponse`): the request as sent and the response's headers, lower case. For a
            watcher (``mcplite inspect`` shows them in its log); what it raises is logged and ignored.

    Proxies come from the environment (``http_proxy``, ``https_proxy``, ``no_proxy``), as `urllib` reads
    them; HTTPS goes through the proxy with CONNECT.

    The attributes ``url``, ``timeout``, ``sse_read_timeout``, ``max_readers``, ``max_message_size``, ``headers``
    and ``connections``, and the methods `deliver`, `deliver_invalid`, `fail` and `lost`, are its `dialect.DialectHost`
    side: what the dialects use.
    """

    wants_route = True  # the headers, the opening message and the listening stream come from it

    def __init__(self, url: str, *, timeout: float = DEFAULT_TIMEOUT, transport: str = "auto",
                 headers: Optional[Dict[str, str]] = None, auth: Any = None,
                 ssl_context: Optional[ssl.SSLContext] = None, cafile: Optional[str] = None,
                 sse_read_timeout: float = DEFAULT_SSE_READ_TIMEOUT, pool_size: int = DEFAULT_POOL_SIZE,
                 max_readers: int = DEFAULT_MAX_READERS, max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
                 on_response: Optional[OnResponse] = None) -> None:
        if transport not in _TRANSPORTS:
            raise ValueError(f"transport must be one of {', '.join(_TRANSPORTS)}, not {transport!r}")
        if max_message_size < 1:
            raise ValueError(f"max_message_size must be at least 1 byte, not {max_message_size}")
        plan_destination(url, {})  # reject a URL that is not http(s) now rather than at the first send
        self.url = url
        self.timeout = timeout
        self.sse_read_timeout = sse_read_timeout
        self.max_readers = max_readers
        self.max_message_size = max_message_size
        self.headers: Dict[str, str] = dict(headers or {})
        self.connections = ConnectionPool(ssl_context=ssl_context, cafile=cafile, pool_size=pool_size, auth=auth,
                                          max_body_size=max_message_size, on_response=on_response)
        self._kind = transport
        self._sink: Optional[MessageSink] = None
        self._dialect: Union[StreamableHTTP, LegacySSE, None] = None  # chosen by the first handshake-era send
        self._enveloped_dialect: Optional[StreamableHTTP] = None  # carries the 2026-07-28 messages; made by the first
        self._dialect_lock = threading.Lock()  # serialises that choice
        #: The thread that holds `_dialect_lock` to send the first message (0: none). Delivering the answer to
        #: that message can make the session send a reply (to an invalid message) on the same thread, which
        #: must fail at once rather than wait on the lock its own thread holds.
        self._opening_thread = 0
        self._lock = threading.Lock()  # guards _closed and _lost
        self._closed = False
        self._lost = False
        self._deadline: Optional[float] = None  # a connect's (`set_deadline`)

    @property
    def transport(self) -> Optional[str]:
        """"streamable" or "sse" once the first message chose one, else None."""
        if self._dialect is None:
            return None if self._enveloped_dialect is None else "streamable"
        return "sse" if isinstance(self._dialect, LegacySSE) else "streamable"

    @property
    def dialect(self) -> Union[StreamableHTTP, LegacySSE, None]:
        """The dialect in use (`StreamableHTTP` or `LegacySSE`) once the first message chose one, else None."""
        return self._dialect

    @property
    def session_id(self) -> Optional[str]:
        """The ``MCP-Session-Id`` the server gave at initialize (None: none, or not yet)."""
        return self._dialect.session_id if isinstance(self._dialect, StreamableHTTP) else None

    @property
    def protocol_version(self) -> Optional[str]:
        """The revision sent as ``MCP-Protocol-Version`` (None until initialize, or for old revisions)."""
        return self._dialect.protocol_version if isinstance(self._dialect, StreamableHTTP) else None

    def auth_context(self) -> Hashable:
        """Who the server sees us as, for the client's cache of private results: the ``Authorization`` header
        we were given and the ``auth`` object's credential for this URL (its ``credential_for``, when it has
        one, else the object itself). A new token makes a new context: private results are fetched again."""
        auth = self.connections.auth
        if auth is None:
            credential: Hashable = None
        else:
            credential_for = getattr(auth, "credential_for", None)
            credential = credential_for(self.url) if credential_for is not None else id(auth)
        given = next((value for name, value in self.headers.items() if name.lower() == "authorization"), None)
        return (given, credential)

    def start(self, sink: MessageSink) -> None:
        self._sink = sink

    def send(self, message: Any, route: Optional[Route] = None) -> None:
        """POST one message, with the headers of its ``route``. It is on the wire when this returns; a
        request's answer is awaited and delivered by a reader thread (unless the route says the message
        opens the session: then before this returns).

        Raises:
            HTTPError: the message could not be sent, or (initialize, notifications, responses) the server
                refused it or did not answer (``status``/``body`` say more).
            SessionExpired: the server forgot our session (404); the session is over.
            ConnectionClosed: the transport is closed.
        """
        if self._closed or self._sink is None:
            raise ConnectionClosed("the HTTP transport is " + ("closed" if self._closed else "not started"))
        body = encode_bytes(message)
        if route is None:
            route = _NO_ROUTE
        if route.enveloped:
            self._get_enveloped_dialect().send(message, body, route)
            return
        dialect = self._dialect
        if dialect is None:
            if self._opening_thread == threading.get_ident():
                raise TransportError("cannot send while the first exchange is still being answered")
            with self._dialect_lock:
                if self._dialect is None:
                    self._opening_thread = threading.get_ident()
                    try:
                        self._open(message, body, route)
                    finally:
                        self._opening_thread = 0
                    return
                dialect = self._dialect
        dialect.send(message, body, route)

    def cancel(self, request_id: RequestId) -> bool:
        """Stop awaiting the answer to ``request_id`` (Streamable HTTP: stop reading its stream); True when
        that cancelled it (2026-07-28: its connection is closed)."""
        enveloped, dialect = self._enveloped_dialect, self._dialect
        if enveloped is not None and enveloped.cancel(request_id):
            return True
        return dialect.cancel(request_id) if dialect is not None else False

    def _get_enveloped_dialect(self) -> StreamableHTTP:
        enveloped = self._enveloped_dialect
        if enveloped is None:
            with self._dialect_lock:
                if self._enveloped_dialect is None:
                    self._enveloped_dialect = StreamableHTTP(self)
                enveloped = self._enveloped_dialect
            if self._closed:  # close() ran meanwhile, and may have missed it
                enveloped.close()
        return enveloped

    def _open(self, message: Any, body: bytes, route: Route) -> None:
        """Choose the dialect with the first message (initialize), and send it there."""
        if self._kind == "sse":
            self._open_legacy(message, body, route, None)
            return
        streamable = StreamableHTTP(self)
        try:
            streamable.send(message, body, route)
        except NotStreamable as refusal:
            if self._kind == "streamable":
                raise refusal.error from None
            log.info("%s refused Streamable HTTP (HTTP %s); trying the HTTP+SSE transport", self.url,
                     refusal.error.status)
            self._open_legacy(message, body, route, refusal.error)
            return
        self._dialect = streamable
        if self._closed:  # close() ran while this first message was on its way
            streamable.close()

    def _open_legacy(self, message: Any, body: bytes, route: Route, refusal: Optional[HTTPError]) -> None:
        legacy = LegacySSE(self)
        try:
            legacy.connect()
        except MCPError as exc:
            if refusal is None:
                raise
            if isinstance(exc, HTTPError) and exc.status == refusal.status:  # one answer, said once
                also = f"and the same from GET {self.url} for the legacy HTTP+SSE transport"
            else:
                also = f"and the HTTP+SSE fallback failed: {exc}"
            raise HTTPError(f"{refusal} ({also})", status=refusal.status, body=refusal.body,
                            headers=refusal.headers) from exc
        self._dialect = legacy  # before sending: close() must reach its stream even if this POST fails
        legacy.send(message, body, route)

    def set_deadline(self, deadline: Optional[float]) -> None:
        """While a client connects: connecting, writing and the answer that opens the session end by
        ``deadline`` (the client's connect timeout, not this transport's ``timeout``)."""
        self._deadline = deadline

    # ---- the DialectHost side: called by the dialects ---------------------------------------------------------
    def send_timeout(self) -> float:
        deadline = self._deadline
        if deadline is None:
            return self.timeout
        # (at least a little: a socket timeout of 0 would make it non-blocking rather than failing at once)
        return max(min(self.timeout, deadline - time.monotonic()), _LEAST_TIMEOUT)

    def deliver(self, value: Any) -> None:
        if self._sink is not None and not self._lost:
            self._sink.receive(value)

    def fail(self, request_id: RequestId, exc: BaseException) -> None:
        if self._sink is not None and not self._lost:
            self._sink.fail_request(request_id, exc)

    def deliver_invalid(self, exc: InvalidMessage) -> None:
        if self._sink is not None and not self._lost:
            deliver_invalid(exc, self._sink)  # an answer that could not be read fails its request

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
        for dialect in (self._enveloped_dialect, self._dialect):
            if dialect is not None:
                dialect.close()
        self.connections.close()
        self.lost(None)
