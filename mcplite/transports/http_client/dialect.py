"""The HTTP client's dialects: what a dialect may ask of the transport that runs it, and what the transport asks
of a dialect.

MCP has two ways of carrying a session over HTTP, its *dialects*: Streamable HTTP (`streamable`) and the
2024-11-05 HTTP+SSE transport (`legacy_sse`). `HTTPClientTransport` chooses one per connection and hands it a
`DialectHost`: itself. A dialect depends on this module and on `pool`, never on
the transport's module, so the dialects and the transport form no import cycle, and a dialect can be driven in a
test by any object that has these members.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

from typing import TYPE_CHECKING, Any, Dict, Optional, Protocol

if TYPE_CHECKING:
    from ...protocol.http_rules import Route
    from ...protocol.jsonrpc import InvalidMessage, RequestId
    from .pool import ConnectionPool

__all__ = ["DialectHost", "Dialect"]


class DialectHost(Protocol):
    """The transport, as a dialect sees it: the settings, the connections, and where messages go."""

    #: The URL the user gave: the MCP endpoint (for an HTTP+SSE server, its SSE endpoint).
    url: str
    #: Seconds to connect and to receive an answer's headers (and JSON body).
    timeout: float
    #: Seconds an SSE stream may stay silent before it counts as dropped.
    sse_read_timeout: float
    #: Requests whose answers may be awaited at once, each by a reader thread.
    max_readers: int
    #: The largest message read: a JSON body, or one SSE event or line.
    max_message_size: int
    #: The user's extra headers, for every request (the protocol's own are added by the dialect).
    headers: Dict[str, str]
    #: The keep-alive connections, TLS, proxies and the ``auth`` flow.
    connections: ConnectionPool

    def send_timeout(self) -> float:
        """Seconds a send may block now (connecting, writing, the opening answer): `timeout`, or what is left of
        the deadline of a connect under way (`Transport.set_deadline`)."""
        ...

    def deliver(self, value: Any) -> None:
        """One decoded message (or batch) from the server, for the session."""

    def deliver_invalid(self, exc: InvalidMessage) -> None:
        """Something from the server that did not decode."""

    def fail(self, request_id: RequestId, exc: BaseException) -> None:
        """Our request ``request_id`` will get no answer: its caller gets ``exc``."""

    def lost(self, exc: Optional[BaseException]) -> None:
        """Nothing more will arrive (said once, however often called)."""


class Dialect(Protocol):
    """One way of carrying the session over HTTP, as the transport drives it."""

    #: The ``MCP-Session-Id`` the server assigned (None: none, not yet, or a dialect without one).
    session_id: Optional[str]

    def send(self, message: Any, body: bytes, route: Route) -> None:
        """Send one message, already encoded as ``body``. Raises as `HTTPClientTransport.send`."""

    def cancel(self, request_id: RequestId) -> bool:
        """Stop awaiting the answer to ``request_id``, if the dialect awaits answers one by one; True when that
        closed the request's connection and so cancelled it (2026-07-28)."""
        ...

    def close(self) -> None:
        """End the session and stop every stream (idempotent)."""
