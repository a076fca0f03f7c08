"""`HTTPApp`, the core of the HTTP server: Streamable HTTP (2025-03-26 to 2025-11-25) and legacy HTTP+SSE.

It takes one parsed request (`IncomingRequest`) and answers it through the `Responder` that the HTTP server in
front of it provides (`http_server`, `wsgi`). It owns the MCP sessions, applies the security checks, and
leaves routing each outgoing message to exactly one stream to `http_streams`. It never touches a socket.

How a POST carrying a request is answered. Its handler runs inline, on the thread that read the POST
(``session.receive(..., inline=True)``): no hand-off to another thread. Whatever the handler sends is
routed by `related_request_id` to that POST's stream and written at once by the sending thread: one JSON
body if the response comes first, otherwise an SSE stream (`http_streams` says when it switches).

Resumability (2025-03-26) and SSE polling (2025-11-25): a client that resumes with GET + ``Last-Event-ID``
receives exactly the events of that stream it missed, then the live ones. From 2025-11-25 a handler may
close its POST's stream early to free the connection; the client then resumes::

    @server.tool
    def long_job(ctx: Context) -> str:
        ctx.transport_info["close_sse_stream"]()   # True if closed; False where the stream cannot resume
        ...

``ctx.transport_info`` holds ``headers`` (lower-case names), ``auth`` (what `authenticate` returned),
``session_id`` and ``close_sse_stream``.

Security: ``Origin`` is validated on every request (403), ``Host`` against an allow-list (DNS rebinding;
403), bodies are limited (413), sessions are capped (503), and an ``authenticate`` hook can refuse a
request with 401/403 and ``WWW-Authenticate`` (`HTTPRefusal`). Reading deadlines and the thread cap are
the adapter's.

A revision-dependent rule is read from the `versions` table (``batching``, ``protocol_version_header``,
``resumable_streams``, ``sse_polling``), so a later revision is a new row there plus its new features here.
"""

import logging
import secrets
import threading
import time
from typing import Any, Callable, Dict, FrozenSet, List, Mapping, Optional, Sequence, Set, Tuple
from urllib.parse import parse_qs, urlsplit

from ...errors import INTERNAL_ERROR, INVALID_REQUEST, PARSE_ERROR
from ...protocol import jsonrpc, methods
from ...protocol.jsonrpc import InvalidMessage
from ...protocol.sse import encode_event
from ...protocol.versions import DEFAULT_HTTP_VERSION, is_supported
from ...session import ServerSession
from ..http_messages import HTTPRefusal
from .eventstore import EventStore, InMemoryEventStore
from .exchange import JSON_HEADERS, IncomingRequest, Reject, Responder, RouteHandler, error_body
from .streams import Attachment, SessionTransport, Stream

__all__ = ["HTTPApp"]

log = logging.getLogger("mcplite")

_LOOPBACK_ORIGIN_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})


def _media_types(value: str) -> Set[str]:
    return {part.split(";", 1)[0].strip().lower() for part in value.split(",")}


def _accepts(accept: Set[str], media_type: str) -> bool:
    major = media_type.split("/", 1)[0]
    return media_type in accept or "*/*" in accept or f"{major}/*" in accept


def _split_host(value: str) -> Tuple[str, str]:
    """``"Host:port"`` -> (lower-case host, port or ""); IPv6 hosts keep their brackets."""
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        host, rest = value[: end + 1], value[end + 1:]
        return host, rest[1:] if rest.startswith(":") else ""
    host, _, port = value.partition(":")
    return host, port


class _SessionEntry:
    """A live stateful session, and how recently a request used it."""

    __slots__ = ("session", "transport", "busy", "last_active")

    def __init__(self, session: ServerSession, transport: SessionTransport) -> None:
        self.session = session
        self.transport = transport
        self.busy = 1  # requests and streams in progress; the session is never idle while this is > 0
        self.last_active = time.monotonic()


class HTTPApp:
    """Answers HTTP requests for one `Server`: Streamable HTTP at ``path``, plus the legacy HTTP+SSE endpoints.

    Args:
        server: the `Server` to serve.
        path: the MCP endpoint.
        stateless: no sessions: every POST gets a fresh session that assumes the revision in its
            ``MCP-Protocol-Version`` header (2025-03-26 without one). For horizontal scaling; server
            requests (sampling, elicitation, roots) and the GET stream are then unavailable.
        json_response: answer every request with one JSON body, never with an SSE stream.
        allow_get: serve the standalone GET stream (405 otherwise).
        allow_delete: let clients end their session with DELETE (405 otherwise).
        legacy_sse: also serve the 2024-11-05 HTTP+SSE transport (GET ``sse_path``, POST ``messages_path``).
        allowed_hosts: accepted ``Host`` values, ``"name"`` (any port) or ``"name:port"``; None accepts any.
            `serve` and `HTTPServerThread` default it to `LOOPBACK_HOSTS` when bound to loopback.
        allowed_origins: accepted ``Origin`` values (``"scheme://host[:port]"``, or ``"*"``). None accepts
            loopback origins and the request's own host (same origin).
        authenticate: called with the request headers (lower-case names) on every request; returns the
            caller's claims (put in ``ctx.transport_info["auth"]``, `Context.auth`) or raises `HTTPRefusal`.
            A hook with a ``well_known_routes()`` method (`mcplite.oauth.BearerAuth`) also serves what it
            returns, as ``routes``.
        routes: extra GET endpoints, ``{path: handler}``, answered without ``authenticate``: for the
            documents a client needs before it can authenticate (RFC 9728 protected resource metadata). A
            handler takes the `IncomingRequest` and returns ``(status, headers, body)``. Paths are below the
            mount point, like ``path``: a WSGI app mounted below the root cannot serve root well-known URLs.
        max_body_size: the largest request body accepted, in bytes (413 beyond it).
        max_sessions: how many sessions may be live at once (503 beyond it).
        session_idle_timeout: seconds after which a session no request or stream has used ends (None: never).
        keepalive_interval: seconds of silence after which an SSE stream gets a comment (None: never).
        sse_retry: the reconnection delay, in milliseconds, sent with priming events.
        event_store: where resumable events are kept (default: a bounded `InMemoryEventStore`).
        resumable: give events ids and store them so that streams can be resumed.
        require_version_header: refuse (400) a request without ``MCP-Protocol-Version`` in a session whose
            revision makes the header mandatory (2025-06-18 on). By default such a request is served under
            the session's negotiated revision, which the spec allows a server that knows it.
    """

    def __init__(self, server: Any, *, path: str = "/mcp", stateless: bool = False, json_response: bool = False,
                 allow_get: bool = True, allow_delete: bool = True, legacy_sse: bool = True, sse_path: str = "/sse",
                 messages_path: str = "/messages", allowed_hosts: Optional[Sequence[str]] = None,
                 allowed_origins: Optional[Sequence[str]] = None,
                 authenticate: Optional[Callable[[Mapping[str, str]], Any]] = None,
                 routes: Optional[Mapping[str, RouteHandler]] = None,
                 max_body_size: int = 4 * 1024 * 1024, max_sessions: int = 1000,
                 session_idle_timeout: Optional[float] = 1800.0, keepalive_interval: Optional[float] = 15.0,
                 sse_retry: int = 1000, event_store: Optional[EventStore] = None, resumable: bool = True,
                 require_version_header: bool = False) -> None:
        for name, value in (("path", path), ("sse_path", sse_path), ("messages_path", messages_path)):
            if not value.startswith("/"):
                raise ValueError(f"{name} must start with '/': {value!r}")
        self.server = server
        self.path = path.rstrip("/") or "/"
        self.stateless = stateless
        self.json_response = json_response
        self.authenticate = authenticate
        #: The ``routes`` (path -> handler); add to it to serve more before the first request.
        well_known = getattr(authenticate, "well_known_routes", None)
        self.extra_routes: Dict[str, RouteHandler] = dict(well_known() if well_known is not None else {})
        self.extra_routes.update(routes or {})
        self.max_body_size = max_body_size
        self.max_sessions = max_sessions
        self.session_idle_timeout = session_idle_timeout
        self.keepalive_interval = keepalive_interval
        self.sse_retry = sse_retry
        self.require_version_header = require_version_header
        self.event_store: Optional[EventStore] = None
        if resumable:
            self.event_store = event_store if event_store is not None else InMemoryEventStore()
        self.messages_path = messages_path.rstrip("/") or "/"
        self._any_port_hosts: Optional[FrozenSet[str]] = None
        self._host_ports: FrozenSet[str] = frozenset()
        if allowed_hosts is not None:
            names = [value.strip().lower() for value in allowed_hosts]
            self._any_port_hosts = frozenset(name for name in names if not _split_host(name)[1])
            self._host_ports = frozenset(name for name in names if _split_host(name)[1])
        self._allowed_origins = None if allowed_origins is None else frozenset(o.rstrip("/") for o in allowed_origins)
        # The method table of each path: a path missing here is 404, a method missing is 405.
        mcp: Dict[str, Callable[[IncomingRequest, Responder, Any], None]] = {"POST": self._post}
        if allow_get and not stateless:
            mcp["GET"] = self._get
        if allow_delete and not stateless:
            mcp["DELETE"] = self._delete
        self._routes: Dict[str, Dict[str, Callable[[IncomingRequest, Responder, Any], None]]] = {self.path: mcp}
        if legacy_sse and not stateless:
            self._routes[sse_path.rstrip("/") or "/"] = {"GET": self._legacy_stream}
            self._routes[self.messages_path] = {"POST": self._legacy_post}
        # Guards _sessions, _attachments and _housekeeper.
        self._lock = threading.Lock()
        self._sessions: Dict[str, _SessionEntry] = {}
        self._attachments: Dict[Attachment, Stream] = {}  # every response carrying a stream, for keep-alives
        self._housekeeper: Optional[threading.Thread] = None
        self._stopping = threading.Event()

    # ---- entry point ------------------------------------------------------------------------------------
    def handle(self, request: IncomingRequest, responder: Responder) -> None:
        """Answer one request; returns once its response is complete (a GET stream: once it has ended)."""
        try:
            self._check_host_and_origin(request.headers)
            path = request.path.rstrip("/") or "/"
            extra = self.extra_routes.get(path)
            if extra is not None:
                self._serve_extra(request, responder, extra)
                return
            by_method = self._routes.get(path)
            if by_method is None:
                raise Reject(404, "Not Found")
            handler = by_method.get(request.method)
            if handler is None:
                raise Reject(405, f"Method Not Allowed: {request.method}",
                             headers=[("Allow", ", ".join(sorted(by_method)))])
            handler(request, responder, self._authenticate(request.headers))
        except Reject as reject:
            responder.respond(reject.status, JSON_HEADERS + reject.headers, reject.body)
        except OSError:
            raise  # the adapter's business: the client has gone
        except Exception as exc:
            log.exception("mcplite HTTP: %s %s failed", request.method, request.path)
            try:
                self.refuse(responder, 500, f"Internal error: {exc}", INTERNAL_ERROR)
            except Exception:  # a response had already begun; nothing more to say
                pass

    @staticmethod
    def refuse(responder: Responder, status: int, message: str, code: int = INVALID_REQUEST) -> None:
        """Answer with an HTTP error and a JSON-RPC error body: for requests an adapter refuses itself."""
        responder.respond(status, JSON_HEADERS, error_body(message, code))

    def close(self) -> None:
        """End every session and stream (the server is shutting down)."""
        self._stopping.set()
        with self._lock:
            entries = list(self._sessions.values())
            self._sessions.clear()
        for entry in entries:
            entry.session.close()

    # ---- security ---------------------------------------------------------------------------------------
    def _check_host_and_origin(self, headers: Mapping[str, str]) -> None:
        host_header = headers.get("host", "")
        if self._any_port_hosts is not None:
            host, port = _split_host(host_header)
            if host not in self._any_port_hosts and f"{host}:{port}" not in self._host_ports:
                raise Reject(403, f"Forbidden: Host {host_header!r} is not allowed")
        origin = headers.get("origin")
        if origin is not None and not self._origin_allowed(origin, host_header):
            raise Reject(403, f"Forbidden: Origin {origin!r} is not allowed")

    def _origin_allowed(self, origin: str, host_header: str) -> bool:
        if self._allowed_origins is not None:
            return "*" in self._allowed_origins or origin.rstrip("/") in self._allowed_origins
        parts = urlsplit(origin)
        if parts.scheme not in ("http", "https"):
            return False  # "null" (sandboxed pages, files) and anything stranger
        return parts.hostname in _LOOPBACK_ORIGIN_HOSTS or parts.netloc.lower() == host_header.strip().lower()

    @staticmethod
    def _serve_extra(request: IncomingRequest, responder: Responder, handler: RouteHandler) -> None:
        if request.method != "GET":
            raise Reject(405, f"Method Not Allowed: {request.method}", headers=[("Allow", "GET")])
        status, headers, body = handler(request)
        responder.respond(status, headers, body)

    def _authenticate(self, headers: Mapping[str, str]) -> Any:
        if self.authenticate is None:
            return None
        try:
            return self.authenticate(headers)
        except HTTPRefusal as refusal:
            raise Reject(refusal.status, refusal.message, headers=refusal.headers) from None

    # ---- Streamable HTTP --------------------------------------------------------------------------------
    def _post(self, request: IncomingRequest, responder: Responder, claims: Any) -> None:
        headers = request.headers
        if "application/json" not in _media_types(headers.get("content-type", "")):
            raise Reject(415, "Unsupported Media Type: Content-Type must be application/json")
        accept = _media_types(headers.get("accept", ""))
        wants_events = self.json_response or _accepts(accept, "text/event-stream")
        if not _accepts(accept, "application/json") or not wants_events:
            raise Reject(406, "Not Acceptable: Accept must list application/json and text/event-stream")
        try:
            value = jsonrpc.decode(request.body)
        except InvalidMessage as exc:
            raise Reject(400, str(exc), PARSE_ERROR) from None
        batch = isinstance(value, list)
        messages: List[Any] = value if batch else [value]
        if not messages:
            raise Reject(400, "Invalid Request: empty batch")
        try:
            kinds = [jsonrpc.kind_of(message) for message in messages]
        except InvalidMessage as exc:
            raise Reject(400, str(exc), id=exc.id) from None
        if any(kind is jsonrpc.REQUEST and message["method"] == methods.INITIALIZE
               for message, kind in zip(messages, kinds)):
            if batch:
                raise Reject(400, "Invalid Request: initialize cannot be batched")
            # No version check: negotiation in the body answers a version we do not speak.
            self._initialize(request, responder, messages, claims)
            return
        try:
            version = self._version_header(headers)
            if self.stateless:
                self._stateless_post(request, responder, messages, kinds, batch, claims, version)
                return
            entry = self._checkout(headers)
            try:
                self._require_version_header(entry.session, version)
                self._deliver(entry.session, entry.transport, request, responder, messages, kinds, batch, claims)
            finally:
                self._checkin(entry)
        except Reject as exc:  # a refusal of one request names it, so the client can match it
            raise exc.answering(messages[0]["id"] if kinds == [jsonrpc.REQUEST] else None) from None

    def _initialize(self, request: IncomingRequest, responder: Responder, messages: List[Any], claims: Any) -> None:
        kinds = [jsonrpc.REQUEST]
        if self.stateless:  # answered normally, by a session that is then forgotten
            transport = SessionTransport(self, None)
            session = self._new_session(transport)
            try:
                self._deliver(session, transport, request, responder, messages, kinds, False, claims)
            finally:
                session.close()
            return
        entry = self._open_session(legacy=False)
        try:
            self._deliver(entry.session, entry.transport, request, responder, messages, kinds, False, claims)
        finally:
            self._checkin(entry)
        if entry.session.lifecycle.awaiting_initialize:  # the handshake failed: no session was established
            entry.session.close()

    def _stateless_post(self, request: IncomingRequest, responder: Responder, messages: List[Any], kinds: List[str],
                        batch: bool, claims: Any, version: Optional[str]) -> None:
        version = version or DEFAULT_HTTP_VERSION
        if version not in self.server.supported_versions:
            raise Reject(400, "Bad Request: an MCP-Protocol-Version header is required by this server")
        transport = SessionTransport(self, None)
        session = self._new_session(transport)
        session.assume_initialized(version)
        if jsonrpc.REQUEST not in kinds:
            # Only notifications' handlers need the dispatcher thread; a request's runs inline here.
            session.start()
        try:
            self._deliver(session, transport, request, responder, messages, kinds, batch, claims)
        finally:
            session.close()

    def _deliver(self, session: ServerSession, transport: SessionTransport, request: IncomingRequest,
                 responder: Responder, messages: List[Any], kinds: List[str], batch: bool, claims: Any) -> None:
        """Hand POSTed messages to the session; requests are handled on this thread, their stream answered."""
        if batch and session.lifecycle.check_incoming_batch(session.revision) is not None:
            raise Reject(400, "Invalid Request: batches are not allowed in this protocol revision")
        request_ids = [m["id"] for m, kind in zip(messages, kinds) if kind is jsonrpc.REQUEST]
        if not request_ids:
            for message in messages:
                session.receive(message)
            responder.respond(202, [], b"")
            return
        stream = transport.open_post(request_ids, responder, batch)
        info = {"headers": request.headers, "auth": claims, "session_id": transport.session_id,
                "close_sse_stream": stream.close_early}
        try:
            for message in messages:
                session.receive(message, inline=True, transport_info=info)
        finally:
            transport.finish_post(stream)

    def _get(self, request: IncomingRequest, responder: Responder, claims: Any) -> None:
        if not _accepts(_media_types(request.headers.get("accept", "")), "text/event-stream"):
            raise Reject(406, "Not Acceptable: Accept must list text/event-stream")
        entry = self._checkout(request.headers)
        try:
            self._require_version_header(entry.session, self._version_header(request.headers))
            last_event_id = request.headers.get("last-event-id")
            if last_event_id is not None:
                out = entry.transport.resume(last_event_id, responder)
            else:
                out = entry.transport.standalone.attach(responder)
            if out is not None:
                assert out.released is not None
                # The stream's whole life, by design. It is released when the session ends or expires, the
                # server closes, or a keep-alive write finds the client gone (every keepalive_interval).
                out.released.wait()
        finally:
            self._checkin(entry)

    def _delete(self, request: IncomingRequest, responder: Responder, claims: Any) -> None:
        entry = self._checkout(request.headers)
        try:
            self._require_version_header(entry.session, self._version_header(request.headers))
        finally:
            self._checkin(entry)
        entry.session.close()
        responder.respond(200, [], b"")

    def _version_header(self, headers: Mapping[str, str]) -> Optional[str]:
        version = headers.get("mcp-protocol-version")
        if version is not None and not (is_supported(version) and version in self.server.supported_versions):
            raise Reject(400, f"Bad Request: unsupported MCP-Protocol-Version {version!r} (supported: "
                         f"{', '.join(self.server.supported_versions)})")
        return version

    def _require_version_header(self, session: ServerSession, version: Optional[str]) -> None:
        if (version is None and self.require_version_header and session.revision is not None
                and session.revision.protocol_version_header):
            raise Reject(400, "Bad Request: the MCP-Protocol-Version header is required")

    # ---- legacy HTTP+SSE (2024-11-05) -------------------------------------------------------------------
    def _legacy_stream(self, request: IncomingRequest, responder: Responder, claims: Any) -> None:
        entry = self._open_session(legacy=True)
        try:
            assert entry.transport.session_id is not None
            endpoint = f"{request.script_name}{self.messages_path}?session_id={entry.transport.session_id}"
            out = entry.transport.standalone.attach(responder, encode_event(endpoint, event="endpoint"))
            assert out.released is not None
            out.released.wait()  # released as the GET stream above is: session end, server close, dead client
        finally:
            self._checkin(entry)
            entry.session.close()  # the stream is the connection: when it ends, so does the session

    def _legacy_post(self, request: IncomingRequest, responder: Responder, claims: Any) -> None:
        session_id = parse_qs(request.query).get("session_id", [None])[0]
        if session_id is None:
            raise Reject(400, "Bad Request: session_id is required")
        entry = self._checkout_id(session_id, legacy=True)
        try:
            try:
                value = jsonrpc.decode(request.body)
                for message in value if isinstance(value, list) else [value]:
                    jsonrpc.kind_of(message)
            except InvalidMessage as exc:
                raise Reject(400, str(exc), exc.code, id=exc.id) from None
            info = {"headers": request.headers, "auth": claims, "session_id": session_id,
                    "close_sse_stream": lambda: False}
            # Handled on the session's pool: the answer goes out on the SSE stream, and the client may need
            # this POST answered before it can send what a handler waits for (a sampling result).
            entry.session.receive(value, transport_info=info)
        finally:
            self._checkin(entry)
        responder.respond(202, [("Content-Type", "text/plain")], b"Accepted")

    # ---- sessions ---------------------------------------------------------------------------------------
    def _new_session(self, transport: SessionTransport) -> ServerSession:
        session: ServerSession = self.server.create_session(transport)
        transport.session = session
        return session

    def _open_session(self, *, legacy: bool) -> _SessionEntry:
        """Create a stateful session (busy: the caller checks it in), or refuse with 503 at the cap."""
        self._expire_idle(time.monotonic())
        session_id = secrets.token_hex(16)
        transport = SessionTransport(self, session_id, legacy=legacy)
        session = self._new_session(transport)
        entry = _SessionEntry(session, transport)
        with self._lock:
            full = len(self._sessions) >= self.max_sessions
            if not full:
                self._sessions[session_id] = entry
        if full:
            session.close()
            raise Reject(503, "Service Unavailable: too many sessions", headers=[("Retry-After", "5")])
        session.on_close(lambda: self._forget(session_id))
        session.start()
        self._ensure_housekeeper()
        return entry

    def _forget(self, session_id: str) -> None:
        with self._lock:
            self._sessions.pop(session_id, None)

    def _checkout(self, headers: Mapping[str, str]) -> _SessionEntry:
        session_id = headers.get("mcp-session-id")
        if session_id is None:
            raise Reject(400, "Bad Request: the MCP-Session-Id header is required")
        return self._checkout_id(session_id, legacy=False)

    def _checkout_id(self, session_id: str, *, legacy: bool) -> _SessionEntry:
        """The live session with this id, marked busy until `_checkin`; 404 if unknown or expired."""
        now = time.monotonic()
        with self._lock:
            entry = self._sessions.get(session_id)
            if entry is not None and not self._is_idle(entry, now) and entry.transport.legacy == legacy:
                entry.busy += 1
                entry.last_active = now
                return entry
        if entry is not None and self._is_idle(entry, now):
            entry.session.close()
        raise Reject(404, "Session not found")

    def _checkin(self, entry: _SessionEntry) -> None:
        with self._lock:
            entry.busy -= 1
            entry.last_active = time.monotonic()

    def _is_idle(self, entry: _SessionEntry, now: float) -> bool:
        timeout = self.session_idle_timeout
        return timeout is not None and entry.busy == 0 and now - entry.last_active > timeout

    def _expire_idle(self, now: float) -> None:
        with self._lock:
            idle = [entry for entry in self._sessions.values() if self._is_idle(entry, now)]
        for entry in idle:
            entry.session.close()  # its close hook removes it from _sessions

    # ---- keep-alives and expiry -------------------------------------------------------------------------
    def _track(self, out: Attachment, stream: Stream) -> Attachment:
        with self._lock:
            self._attachments[out] = stream
        self._ensure_housekeeper()
        return out

    def _untrack(self, out: Attachment) -> None:
        with self._lock:
            self._attachments.pop(out, None)

    def _ensure_housekeeper(self) -> None:
        if self._housekeeper is not None or (self.keepalive_interval is None and self.session_idle_timeout is None):
            return
        with self._lock:
            if self._housekeeper is not None or self._stopping.is_set():
                return
            # Started on first use, not in __init__: a WSGI server may fork workers after building the app.
            self._housekeeper = threading.Thread(target=self._housekeep, name="mcplite-http-housekeeper",
                                                 daemon=True)
        self._housekeeper.start()

    def _housekeep(self) -> None:
        tick = min(x for x in (self.keepalive_interval, self.session_idle_timeout) if x is not None)
        while not self._stopping.wait(tick):
            now = time.monotonic()
            if self.keepalive_interval is not None:
                with self._lock:
                    tracked = list(self._attachments.items())
                for out, stream in tracked:
                    stream.keepalive(out, now - self.keepalive_interval)
            self._expire_idle(now)
