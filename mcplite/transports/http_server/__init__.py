"""The HTTP server transport: Streamable HTTP (2025-03-26 to 2025-11-25) and legacy HTTP+SSE (2024-11-05).

The modules, bottom up:

- `adapter`: the seam with the adapters: one request as the core sees it (`IncomingRequest`) and how the core
  answers (`Responder`);
- `guards`: the checks before any route (Host, Origin, Accept, Content-Type, body size), and `LOOPBACK_HOSTS`;
- `eventstore`: where resumable SSE events are kept; `sqlitestore`: in a SQLite file shared by processes;
- `streams`: which response carries each outgoing message (`Stream`, `SessionTransport`), given a `StreamHost`;
- `sessions`: the table of live sessions (checkout/checkin, idle expiry) and the housekeeping thread: the
  streams' `StreamHost`;
- `app`: `HTTPApp`, routing and the MCP rules of each HTTP method, given a `SessionFactory` (the `Server`);
- adapters that own the I/O: `stdlib` (the standard library's threading server) and `wsgi` (PEP 3333).

This module holds `HTTPOptions`, the settings every one of them reads, and imports nothing else.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

from dataclasses import dataclass

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    from typing import Any, Callable, Mapping, Optional, Sequence

    from .eventstore import EventStore
    from .adapter import RouteHandler

__all__ = ["HTTPOptions"]


@dataclass
class HTTPOptions:
    """How an `HTTPApp` serves: the keyword options of `Server.run(http=...)`, `Server.wsgi_app`, `HTTPServerThread`
    and `HTTPApp`.

    Attributes:
        path: the MCP endpoint.
        stateless: no sessions: every POST gets a fresh session that assumes the revision in its
            ``MCP-Protocol-Version`` header (2025-03-26 without one). For horizontal scaling; server
            requests (sampling, elicitation, roots) and the GET stream are then unavailable.
        json_response: answer every request with one JSON body, never with an SSE stream.
        allow_get: serve the standalone GET stream (405 otherwise).
        allow_delete: let clients end their session with DELETE (405 otherwise).
        legacy_sse: also serve the 2024-11-05 HTTP+SSE transport (GET ``sse_path``, POST ``messages_path``).
        allowed_hosts: accepted ``Host`` values, ``"name"`` (any port) or ``"name:port"``; ``["*"]`` accepts any
            (DNS rebinding protection off: for a proxy that checks ``Host`` itself). `Server.run` and
            `HTTPServerThread` default it to `LOOPBACK_HOSTS` when bound to loopback and refuse to start
            without it on any other address; `Server.wsgi_app` requires it (it cannot know its address).
        allowed_origins: accepted ``Origin`` values (``"scheme://host[:port]"``, or ``"*"``). None accepts the
            loopback origins on a server bound to loopback (under WSGI: whose allowed hosts are all loopback
            names), and no other: an ``Origin`` that names the request's own ``Host`` proves nothing, since a
            DNS rebinding attacker controls both. A request without ``Origin`` (not from a browser) passes.
        authenticate: called with the request headers (lower-case names) on every request; returns the
            caller's claims (`Context.auth`, ``RequestInfo.auth``) or raises `HTTPRefusal`. A hook that is
            also a `PublishesRoutes` (`mcplite.oauth.BearerAuth`) has what its ``well_known_routes()``
            returns served as ``routes``; one that is a `ChecksRequests` is called as
            ``authenticate_request(method, path, headers)`` instead (DPoP proofs name the method and URL).
            What it returns also says who is calling (the server's ``bind_principal``, by default
            `mcplite.protocol.principal.principal_of`): token claims with ``sub``, ``username`` or
            ``client_id``, or any object with a ``principal`` attribute (a str) to name the caller yourself.
            A session belongs to the principal that opened it: a request of another principal that names
            it gets the 404 of an unknown session. Tasks and ``requestState`` belong to the principal too;
            credentials that name nobody (``{"active": True}``) are refused them (-32600).
        routes: extra GET endpoints, ``{path: handler}``, answered without ``authenticate``: for the
            documents a client needs before it can authenticate (RFC 9728 protected resource metadata). A
            handler takes the `IncomingRequest` and returns ``(status, headers, body)``. Paths are below the
            mount point, like ``path``: a WSGI app mounted below the root cannot serve root well-known URLs.
        max_body_size: the largest request body accepted, in bytes (413 beyond it).
        max_sessions: how many sessions may be live at once. A new session beyond it evicts the session
            idle longest (closed as expiry closes it: its client's next request gets 404); it is refused
            with 503 only when every session is in use (a request or an open stream has it).
        session_idle_timeout: seconds after which a session no request or stream has used ends (None: never).
        keepalive_interval: seconds of silence after which an SSE stream gets a comment (None: never).
        sse_retry: the reconnection delay, in milliseconds, sent with priming events.
        event_store: where resumable events are kept (default: a bounded `InMemoryEventStore`).
        resumable: give events ids and store them so that streams can be resumed.
        access_log: write one line per request to the ``mcplite.access`` logger (at INFO): client address when
            the adapter knows it, method, path, status, bytes sent, milliseconds, and the MCP method and session.
            Off by default; `Server.run` sends it to stderr unless logging was configured.
        max_streams: how many long-lived streams (session GET streams, legacy ``/sse`` streams,
            ``subscriptions/listen``) may be open at once; beyond it one is refused with 503 (None: no limit).
            Under a WSGI server each holds a thread for its lifetime (the built-in server holds them without
            one: its ``max_connections`` bounds them). Under a WSGI server with a fixed number of threads (gunicorn
            ``--threads``, waitress) set it below that number, by as many as the requests you want served at
            once, so that streams cannot take every thread and stall the server.
        session_id_prefix: put before every session id this app mints (``Mcp-Session-Id``, and the legacy
            transport's ``session_id``), so that a proxy in front of several server processes can route each
            session to the process that owns it (``examples/deploy/nginx-sessions.conf``): letters, digits,
            ``-``, ``_`` and ``.`` only, at most 64 characters. The random part stays 128 bits.
        record: record every message of every session, both ways, as JSON lines (`mcplite.recording`), each
            session under its id as the logs show it (``stateless`` without one): a path (created with mode
            0600, closed when the server shuts down), or a `Recorder` (its giver's to close).
        require_version_header: refuse (400) a request without ``MCP-Protocol-Version`` in a session whose
            revision makes the header mandatory (2025-06-18 on). By default such a request is served under
            the session's negotiated revision, which the spec allows a server that knows it.

    Raises:
        ValueError: a path that does not start with "/", or a ``session_id_prefix`` with other characters.
    """

    path: str = "/mcp"
    stateless: bool = False
    json_response: bool = False
    allow_get: bool = True
    allow_delete: bool = True
    legacy_sse: bool = True
    sse_path: str = "/sse"
    messages_path: str = "/messages"
    allowed_hosts: Optional[Sequence[str]] = None
    allowed_origins: Optional[Sequence[str]] = None
    authenticate: Optional[Callable[[Mapping[str, str]], Any]] = None
    routes: Optional[Mapping[str, RouteHandler]] = None
    max_body_size: int = 4 * 1024 * 1024
    max_sessions: int = 1000
    session_idle_timeout: Optional[float] = 1800.0
    keepalive_interval: Optional[float] = 15.0
    sse_retry: int = 1000
    event_store: Optional[EventStore] = None
    resumable: bool = True
    require_version_header: bool = False
    access_log: bool = False
    session_id_prefix: str = ""
    max_streams: Optional[int] = None
    record: Any = None

    def __post_init__(self) -> None:
        for name in ("path", "sse_path", "messages_path"):
            value = getattr(self, name)
            if not value.startswith("/"):
                raise ValueError(f"{name} must start with '/': {value!r}")
        if self.max_streams is not None and self.max_streams < 0:
            raise ValueError(f"max_streams must be None or at least 0: {self.max_streams!r}")
        prefix = self.session_id_prefix
        if len(prefix) > 64 or not all(c.isascii() and (c.isalnum() or c in "-_.") for c in prefix):
            raise ValueError(f"session_id_prefix may hold letters, digits, '-', '_' and '.' (at most 64): "
                             f"{prefix!r}")
