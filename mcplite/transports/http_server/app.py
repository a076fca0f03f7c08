"""`HTTPApp`, the core of the HTTP server: Streamable HTTP (2025-03-26 to 2025-11-25) and legacy HTTP+SSE.

It takes one parsed request (`IncomingRequest`) and answers it through the `Responder` that the HTTP server in
front of it provides (`stdlib`, `wsgi`). It routes each request by path and method, applies the checks of
`guards`, asks its `SessionFactory` (the `Server`) for a session when a client initializes, keeps the live
sessions in a `sessions.SessionTable`, and leaves routing each outgoing message to exactly one stream to
`streams`. It never touches a socket, and knows no session class: only the `HostedSession` contract.

How a POST carrying a request is answered. Its handler runs inline, on the thread that read the POST
(``session.receive(..., inline=True)``): no hand-off to another thread. Whatever the handler sends is
routed by `related_request_id` to that POST's stream and written at once by the sending thread: one JSON
body if the response comes first, otherwise an SSE stream (`streams` says when it switches).

Resumability (2025-03-26) and SSE polling (2025-11-25): a client that resumes with GET + ``Last-Event-ID``
receives exactly the events of that stream it missed, then the live ones. From 2025-11-25 a handler may
close its POST's stream early to free the connection; the client then resumes::

    @server.tool
    def long_job(ctx: Context) -> str:
        ctx.request_info.close_sse_stream()   # True if closed; False where the stream cannot resume
        ...

Each request's handler gets a `RequestInfo` (``ctx.request_info``): ``headers`` (lower-case names), ``auth``
(what `authenticate` returned), ``session_id`` and ``close_sse_stream``. ``ctx.transport_info`` gives the
same as a dict.

Security: ``Origin`` is validated on every request (403), ``Host`` against an allow-list (DNS rebinding;
403), bodies are limited (413), sessions are capped (a full table evicts the longest-idle session; 503
when every session is in use), and an ``authenticate`` hook can refuse a request with 401/403 and
``WWW-Authenticate`` (`HTTPRefusal`). Reading deadlines and the thread cap are the adapter's.

A revision-dependent rule is read from the `versions` table (``batching``, ``protocol_version_header``,
``resumable_streams``, ``sse_polling``), so a later revision is a new row there plus its new features here.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import os
import threading
from urllib.parse import parse_qs

from ..._log import ACCESS_LOGGER_NAME, log, new_error_id
from ..._options import refuse_unknown
from ...errors import INTERNAL_ERROR, INVALID_REQUEST, PARSE_ERROR
from ...protocol import jsonrpc, methods
from ...protocol.envelope import classify
from ...protocol.jsonrpc import InvalidMessage
from ...protocol.principal import principal_of
from ...protocol.sse import encode_event
from ...protocol.versions import DEFAULT_HTTP_VERSION, ENVELOPE, HANDSHAKE, is_supported
from .. import RequestInfo
from ..http_messages import ChecksRequests, HTTPRefusal, PublishesRoutes
from . import HTTPOptions
from .eventstore import InMemoryEventStore
from .adapter import JSON_HEADERS, IncomingRequest, Reject, Responder, RouteHandler, error_body
from .guards import RequestGuard, check_post_media, check_stream_accept
from .sessions import SessionEntry, SessionTable
from .streams import SSE_HEADERS, SessionTransport

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Mapping, Optional, Set, Tuple

    from .. import HostedSession, SessionFactory
    from ..recording import Recorder
    from .eventstore import EventStore
    from .streams import Attachment, Stream

    Route = Callable[[IncomingRequest, Responder, Any], None]  # (request, responder, authenticate's claims)

__all__ = ["HTTPApp"]


#: Why sessions fail across processes, and the fixes: said by the 404 of an unknown session id and the warning a
#: multi-process WSGI deployment logs.
MULTIPROCESS_SESSIONS = (
    "Sessions live in the memory of the process that created them, and this server runs several processes "
    "(wsgi.multiprocess): route each session to its process (a proxy that maps the Mcp-Session-Id, with "
    "session_id_prefix; see examples/deploy/nginx-sessions.conf), or run one process with threads "
    "(gunicorn -w 1 --threads N), or serve stateless (stateless=True; revision 2026-07-28 needs no session)")


class HTTPApp:
    """Answers HTTP requests for one `Server`: Streamable HTTP at ``path``, plus the legacy HTTP+SSE endpoints.

    Args:
        server: where sessions come from: the `Server` to serve (any `SessionFactory`).
        **options: the fields of `HTTPOptions` (path, stateless, json_response, allowed_hosts, authenticate...).

    Raises:
        TypeError: an option `HTTPOptions` does not have.
        ValueError: a path that does not start with "/".
    """

    def __init__(self, server: SessionFactory, **options: Any) -> None:
        refuse_unknown("HTTPOptions", options, HTTPOptions.__dataclass_fields__)
        self.options = settings = HTTPOptions(**options)
        #: The recorder this app opened for ``record=`` (a path), closed with the app.
        self._recorder: Optional[Recorder] = None
        if settings.record is not None:
            from ..recording import RecordingFactory, open_recorder  # only servers that record load it

            recorder, opened = open_recorder(settings.record)
            self._recorder = recorder if opened else None
            server = RecordingFactory(server, recorder)  # each session's messages are recorded
        self.server = server
        self.path = settings.path.rstrip("/") or "/"
        self.messages_path = settings.messages_path.rstrip("/") or "/"
        self.stateless = settings.stateless
        self.json_response = settings.json_response
        self.require_version_header = settings.require_version_header
        #: The ``authenticate`` hook, read on every request.
        self.authenticate = settings.authenticate
        #: The ``routes`` (path -> handler); add to it to serve more before the first request.
        self.extra_routes: Dict[str, RouteHandler] = {}
        if isinstance(self.authenticate, PublishesRoutes):
            self.extra_routes.update(self.authenticate.well_known_routes())
        self.extra_routes.update(settings.routes or {})
        self.event_store: Optional[EventStore] = None
        if settings.resumable:
            self.event_store = settings.event_store if settings.event_store is not None else InMemoryEventStore()
        if settings.access_log:
            import logging

            access = logging.getLogger(ACCESS_LOGGER_NAME)
            if access.level == logging.NOTSET:
                access.setLevel(logging.INFO)  # asked for: not held back by the package logger's WARNING
        self.guard = RequestGuard(settings.allowed_hosts, settings.allowed_origins, settings.max_body_size)
        self.sessions = SessionTable(server, settings, self.event_store)
        #: Set by `begin_drain`: the server is shutting down, so nothing long-lived may start (503).
        self.draining = False
        # Guards _listening: the throwaway sessions of open subscriptions/listen POSTs (2026-07-28), which the
        # session table does not hold, ended gracefully by `close`.
        self._listening_lock = threading.Lock()
        self._listening: Set[HostedSession] = set()
        # Guards _open_streams and _streams_full_said: the long-lived streams holding a thread each (max_streams).
        self._streams_lock = threading.Lock()
        self._open_streams = 0
        self._streams_full_said = False
        # The method table of each path: a path missing here is 404, a method missing is 405.
        mcp: Dict[str, Route] = {"POST": self._post}
        # GET streams and DELETE belong to sessions, which 2026-07-28 does not have: a server that speaks no
        # handshake revision answers them 405 (streamable-http.mdx, "Earlier Revisions").
        sessions = not self.stateless and any(is_supported(v, HANDSHAKE) for v in server.supported_versions)
        #: Whether this app opens sessions at all (not stateless, and a handshake revision is spoken).
        self.serves_sessions = sessions
        if settings.allow_get and sessions:
            mcp["GET"] = self._get
        if settings.allow_delete and sessions:
            mcp["DELETE"] = self._delete
        self._routes: Dict[str, Dict[str, Route]] = {self.path: mcp}
        #: Set by an adapter whose server cannot hold a session open (a WSGI server that runs one request at a
        #: time): the HTTP status and message that refuse every request that would open one.
        self.session_refusal: Optional[Tuple[int, str]] = None
        #: The same for every long-lived stream (a listen, where sessions are not refused already).
        self.stream_refusal: Optional[Tuple[int, str]] = None
        #: Set by an adapter that serves from several processes (``wsgi.multiprocess``): an unknown session id
        #: is then most likely another process's, and the 404 says so.
        self.multiprocess = False
        if settings.legacy_sse and sessions:
            self._routes[settings.sse_path.rstrip("/") or "/"] = {"GET": self._legacy_stream}
            self._routes[self.messages_path] = {"POST": self._legacy_post}

    @property
    def max_body_size(self) -> int:
        """The largest request body accepted, in bytes: adapters refuse a larger one with 413."""
        return self.guard.max_body_size

    # ---- entry point ------------------------------------------------------------------------------------
    def handle(self, request: IncomingRequest, responder: Responder) -> None:
        """Answer one request; returns once its response is complete (a GET stream: once it has ended)."""
        if self.options.access_log:
            from .access import AccessRecorder  # only servers that log their requests load it

            recorder = AccessRecorder(responder, request)
            try:
                self._handle(request, recorder)
            finally:
                if not recorder.parked:  # (a parked stream's line is written when it ends)
                    recorder.finish()
            return
        self._handle(request, responder)

    def _handle(self, request: IncomingRequest, responder: Responder) -> None:
        try:
            self.guard.check_host_and_origin(request.headers)
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
            handler(request, responder, self._authenticate(request))
        except Reject as reject:
            responder.respond(reject.status, JSON_HEADERS + reject.headers, reject.body)
        except OSError:
            raise  # the adapter's business: the client has gone
        except Exception:
            # The client learns an id, never the exception (it may hold paths, names, secrets); the log has both.
            error_id = new_error_id()
            log.exception("mcplite HTTP: %s %s failed (error id %s)", request.method, request.path, error_id)
            try:
                self.refuse(responder, 500, f"Internal error (error id {error_id})", INTERNAL_ERROR)
            except Exception:  # a response had already begun; nothing more to say
                pass

    @staticmethod
    def refuse(responder: Responder, status: int, message: str, code: int = INVALID_REQUEST) -> None:
        """Answer with an HTTP error and a JSON-RPC error body: for requests an adapter refuses itself."""
        responder.respond(status, JSON_HEADERS, error_body(message, code))

    def close(self) -> None:
        """End every session and stream (the server is shutting down); an open listen gets its graceful result."""
        self.draining = True
        self.sessions.close()
        self._end_listens()
        if self._recorder is not None:
            self._recorder.close()

    def begin_drain(self) -> None:
        """The server is shutting down gracefully: end what would never end by itself, and start nothing such.

        Every open GET stream is ended cleanly (a legacy HTTP+SSE session with it), every open listen gets its
        graceful result, and from now on a request that would open a session or a stream is answered 503.
        Requests in progress are not touched: the adapter waits for them, then calls `close`.
        """
        self.draining = True  # before ending the streams: a GET attaching meanwhile sees it and ends its own
        self.sessions.end_streams()
        self._end_listens()

    def _end_listens(self) -> None:
        with self._listening_lock:
            listening = list(self._listening)
        for session in listening:
            session.close()

    def _refuse_while_draining(self, request_id: Any = None) -> None:
        if self.draining:
            raise Reject(503, "Service Unavailable: the server is shutting down", id=request_id,
                         headers=[("Retry-After", "5")])

    # ---- before any route -------------------------------------------------------------------------------
    @staticmethod
    def _serve_extra(request: IncomingRequest, responder: Responder, handler: RouteHandler) -> None:
        if request.method != "GET":
            raise Reject(405, f"Method Not Allowed: {request.method}", headers=[("Allow", "GET")])
        status, headers, body = handler(request)
        responder.respond(status, headers, body)

    def _authenticate(self, request: IncomingRequest) -> Any:
        if self.authenticate is None:
            return None
        try:
            if isinstance(self.authenticate, ChecksRequests):
                return self.authenticate.authenticate_request(
                    request.method, request.script_name + request.path, request.headers)
            return self.authenticate(request.headers)
        except HTTPRefusal as refusal:
            raise Reject(refusal.status, refusal.message, headers=refusal.headers) from None

    # ---- Streamable HTTP --------------------------------------------------------------------------------
    def _post(self, request: IncomingRequest, responder: Responder, claims: Any) -> None:
        headers = request.headers
        check_post_media(headers, self.json_response)
        try:
            value = jsonrpc.decode(request.body)
        except InvalidMessage as exc:
            # With the id of the request, when it could still be read (see `jsonrpc.decode`): its sender
            # is answered now rather than left waiting for its timeout.
            raise Reject(400, str(exc), exc.code or PARSE_ERROR, id=exc.id if exc.respond else None) from None
        batch = isinstance(value, list)
        messages: List[Any] = value if batch else [value]
        if not messages:
            raise Reject(400, "Invalid Request: empty batch")
        try:
            kinds = [jsonrpc.kind_of(message) for message in messages]
        except InvalidMessage as exc:
            raise Reject(400, str(exc), id=exc.id) from None
        if not batch and self._is_enveloped(messages[0], headers):
            self._envelope_post(request, responder, messages[0], kinds[0], claims)
            return
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
                self._stateless_post(request, responder, messages, batch, claims, version)
                return
            entry = self._checkout(headers, claims)
            try:
                self._require_version_header(entry.session, version)
                self._deliver(entry.session, entry.transport, request, responder, messages, batch, claims)
            finally:
                self.sessions.checkin(entry)
        except Reject as exc:  # a refusal of one request names it, so the client can match it
            raise exc.answering(messages[0]["id"] if kinds == [jsonrpc.REQUEST] else None) from None

    # ---- 2026-07-28: one request per POST, no session ------------------------------------------------------
    @staticmethod
    def _is_enveloped(message: Any, headers: Mapping[str, str]) -> bool:
        """Whether a POSTed message goes down the 2026-07-28 path: by its body, else by its version header."""
        era = classify(message)
        if era is not None:
            return era == ENVELOPE
        version = headers.get("mcp-protocol-version")
        return version is not None and is_supported(version.strip(" \t"), ENVELOPE)

    def _envelope_post(self, request: IncomingRequest, responder: Responder, message: Any, kind: str,
                     claims: Any) -> None:
        """A 2026-07-28 POST: its own throwaway session, which runs the `_meta` ladder and the handler inline.

        No session table, no ``Mcp-Session-Id`` (ignored if sent) and no resumability; an error answer gets the
        HTTP status of its code (400, or 404 for an unknown method); a notification is accepted (202).
        """
        if kind is not jsonrpc.REQUEST and kind is not jsonrpc.NOTIFICATION:
            raise Reject(400, "Invalid Request: a 2026-07-28 client POSTs requests and notifications only")
        # A listen's response is its notification stream: SSE even in JSON response mode, so the client must
        # accept it (406). Its POST holds this thread until the listen ends.
        listen = kind is jsonrpc.REQUEST and message["method"] == methods.SUBSCRIPTIONS_LISTEN
        if listen:
            try:
                check_stream_accept(request.headers)
                self._refuse_while_draining()
                self._hold_stream(responder.can_park)
            except Reject as exc:
                raise exc.answering(message["id"]) from None
        try:
            transport = SessionTransport(self.sessions, None, enveloped=True, listen=listen)
            session = self.sessions.new_session(transport)
            session.expect_envelope()
            if listen:
                with self._listening_lock:
                    self._listening.add(session)
        except BaseException:
            if listen:
                self._release_stream()
            raise

        def done(client_left: bool) -> None:  # its response has ended
            try:
                session.close()
            finally:
                if listen:
                    with self._listening_lock:
                        self._listening.discard(session)
                    self._release_stream()

        parked = False
        try:
            if listen:  # the drain may have begun after the check above, and missed this listen
                self._refuse_while_draining(message["id"])
            parked = self._deliver(session, transport, request, responder, [message], False, claims,
                                   then=done if listen and responder.can_park else None)
        finally:
            if not parked:
                done(False)

    def _initialize(self, request: IncomingRequest, responder: Responder, messages: List[Any], claims: Any) -> None:
        if self.stateless:  # answered normally, by a session that is then forgotten
            transport = SessionTransport(self.sessions, None)
            session = self.sessions.new_session(transport)
            try:
                self._deliver(session, transport, request, responder, messages, False, claims)
            finally:
                session.close()
            return
        self._refuse_while_draining(messages[0]["id"])
        self._check_sessions_possible(messages[0]["id"])
        entry = self.sessions.open(legacy=False, principal=self._principal(claims))
        try:
            self._deliver(entry.session, entry.transport, request, responder, messages, False, claims)
        finally:
            self.sessions.checkin(entry)
        if entry.session.lifecycle.awaiting_initialize:  # the handshake failed: no session was established
            entry.session.close()

    def _stateless_post(self, request: IncomingRequest, responder: Responder, messages: List[Any], batch: bool,
                        claims: Any, version: Optional[str]) -> None:
        version = version or DEFAULT_HTTP_VERSION
        if version not in self.server.supported_versions:
            raise Reject(400, "Bad Request: an MCP-Protocol-Version header is required by this server")
        transport = SessionTransport(self.sessions, None)
        session = self.sessions.new_session(transport)
        session.assume_initialized(version)
        try:
            self._deliver(session, transport, request, responder, messages, batch, claims)
        finally:
            session.close()

    def _deliver(self, session: HostedSession, transport: SessionTransport, request: IncomingRequest,
                 responder: Responder, messages: List[Any], batch: bool, claims: Any,
                 then: Optional[Callable[[bool], None]] = None) -> bool:
        """Hand POSTed messages to the session; requests are handled on this thread, their stream answered.

        With ``then`` (a listen, on an adapter that can `Responder.park`): a stream the handler left open (its
        request deferred) is handed to the adapter, and ``then(client_left)`` called when it ends; True then.
        """
        if batch and session.lifecycle.check_incoming_batch(session.revision) is not None:
            raise Reject(400, "Invalid Request: batches are not allowed in this protocol revision")
        request_ids = jsonrpc.request_ids(messages)  # the JSON-RPC frames have been checked
        if not request_ids:
            for message in messages:
                session.receive(message)
            responder.respond(202, [], b"")
            return False
        stream = transport.open_post(request_ids, responder, batch)
        info = RequestInfo(request.headers, auth=claims, session_id=transport.session_id,
                           close_sse_stream=stream.close_early)
        parked = False
        try:
            for message in messages:
                session.receive(message, inline=True, request_info=info, wait_deferred=then is None)
            if then is not None:
                parked = self._park_post(transport, stream, responder, then)
        finally:
            if not parked:
                transport.finish_post(stream)
        return parked

    def _park_post(self, transport: SessionTransport, stream: Stream, responder: Responder,
                   then: Callable[[bool], None]) -> bool:
        """Hand a POST's stream that is still open to the adapter (`Responder.park`); False if it has ended."""
        with stream.lock:
            out = stream.out
            if stream.finished or out is None or not out.streaming:
                return False
            out.released = threading.Event()  # set by the stream's release, as a GET's

        def done(client_left: bool) -> None:
            try:
                if client_left:
                    stream.client_gone(out)  # on 2026-07-28: the request is cancelled, its listen ended
                transport.finish_post(stream)
            finally:
                then(client_left)

        if not responder.park(out.released, done):  # (can_park said it would)
            done(not responder.wait_released(out.released))
        return True

    def _get(self, request: IncomingRequest, responder: Responder, claims: Any) -> None:
        check_stream_accept(request.headers)
        self._refuse_while_draining()
        last_event_id = request.headers.get("last-event-id")
        try:
            entry = self._checkout(request.headers, claims)
        except Reject as exc:
            if (exc.status != 404 or last_event_id is None or self.authenticate is not None
                    or not self._replay_stored(request, responder, last_event_id)):
                raise
            return
        try:
            self._require_version_header(entry.session, self._version_header(request.headers))
            self._hold_stream(responder.can_park)
        except BaseException:
            self.sessions.checkin(entry)
            raise
        try:
            if last_event_id is not None:
                out = entry.transport.resume(last_event_id, responder)
            else:
                out = entry.transport.standalone.attach(responder)
        except BaseException:
            self._release_stream()
            self.sessions.checkin(entry)
            raise
        if out is None:
            self._release_stream()
            self.sessions.checkin(entry)
            return
        if self.draining:  # the drain began after the check above, and may have missed this stream
            entry.transport.standalone.detach()

        def done(client_left: bool) -> None:
            try:
                if client_left and out.owner is not None:
                    out.owner.client_gone(out)
            finally:
                self._release_stream()
                self.sessions.checkin(entry)

        # The stream's whole life, by design. It is released when the session ends or expires, the server
        # closes, or the client is seen to leave: at once where the adapter watches the connection (the stdlib
        # server), else when a keep-alive write fails (every keepalive_interval).
        self._until_released(responder, out, done)

    @staticmethod
    def _until_released(responder: Responder, out: Attachment, done: Callable[[bool], None]) -> None:
        """Call ``done(client_left)`` once the stream ``out`` carries is released: later, with no thread waiting,
        where the adapter can hold the stream itself (`Responder.park`); else after waiting here for it."""
        assert out.released is not None
        if not responder.park(out.released, done):
            done(not responder.wait_released(out.released))

    def _replay_stored(self, request: IncomingRequest, responder: Responder, last_event_id: str) -> bool:
        """Resume a stream of a session another process owns, from an event store the processes share.

        The events the store holds after ``last_event_id`` are sent and the response ends: all of them if the
        stream had ended; otherwise the client resumes again from its new last id. False (the caller answers
        404) when the store is this process's own, or holds nothing of that stream. Not asked at all on a server
        with ``authenticate``: the store does not say whose the session is, and an id alone lets nobody in.
        """
        store = self.event_store
        session_id = request.headers.get("mcp-session-id")
        stream_id, sep, seq = last_event_id.partition(":")
        if store is None or not store.shared or session_id is None or not sep or not (seq.isascii()
                                                                                    and seq.isdigit()):
            return False
        events = store.replay(session_id, stream_id, int(seq))
        if events is None:
            return False
        body = b"".join(encode_event(data, id=f"{stream_id}:{n}") for n, data in events)
        responder.start_stream(SSE_HEADERS + [("MCP-Session-Id", session_id)], body)
        responder.end_stream()
        return True

    def _delete(self, request: IncomingRequest, responder: Responder, claims: Any) -> None:
        entry = self._checkout(request.headers, claims)
        try:
            self._require_version_header(entry.session, self._version_header(request.headers))
        finally:
            self.sessions.checkin(entry)
        entry.session.close()
        responder.respond(200, [], b"")

    def _version_header(self, headers: Mapping[str, str]) -> Optional[str]:
        version = headers.get("mcp-protocol-version")
        if version is not None and not (is_supported(version) and version in self.server.supported_versions):
            raise Reject(400, f"Bad Request: unsupported MCP-Protocol-Version {version!r} (supported: "
                         f"{', '.join(self.server.supported_versions)})")
        return version

    def _require_version_header(self, session: HostedSession, version: Optional[str]) -> None:
        if (version is None and self.require_version_header and session.revision is not None
                and session.revision.protocol_version_header):
            raise Reject(400, "Bad Request: the MCP-Protocol-Version header is required")

    # ---- sessions, and the deployments that cannot keep them ---------------------------------------------
    def _check_sessions_possible(self, request_id: Any) -> None:
        """Refuse to open a session the adapter says this server cannot keep (`session_refusal`)."""
        if self.session_refusal is not None:
            status, message = self.session_refusal
            raise Reject(status, message, INTERNAL_ERROR, id=request_id)

    def _hold_stream(self, parks: bool) -> None:
        """Count a long-lived stream about to open (holding this thread, unless the adapter ``parks`` it); 503 at
        ``max_streams`` (said once in the log)."""
        if self.stream_refusal is not None:
            status, reason = self.stream_refusal
            raise Reject(status, reason, INTERNAL_ERROR)
        limit = self.options.max_streams
        with self._streams_lock:
            full = limit is not None and self._open_streams >= limit
            if not full:
                self._open_streams += 1
            say = full and not self._streams_full_said
            if say:
                self._streams_full_said = True
        if full:
            if parks:  # (the built-in server: a stream holds no thread there)
                message = f"Service Unavailable: {limit} streams are open (max_streams={limit})"
            else:
                message = (f"Service Unavailable: {limit} streams are open, each holding one of this server's "
                           f"threads (max_streams={limit}); raise the server's threads (gunicorn --threads, "
                           f"waitress --threads) and max_streams with them")
            if say:
                log.warning("HTTP: %s", message)
            raise Reject(503, message, INTERNAL_ERROR, headers=[("Retry-After", "5")])

    def _release_stream(self) -> None:
        with self._streams_lock:
            self._open_streams -= 1

    def _principal(self, claims: Any) -> Optional[str]:
        """Who is calling, from what ``authenticate`` returned: the server's ``bind_principal`` (a `Server`'s;
        `principal_of` for any other session factory). The owner of the sessions the caller opens."""
        if claims is None:
            return None
        bind: Callable[[Any], Optional[str]] = getattr(self.server, "bind_principal", None) or principal_of
        return bind(claims)

    def _checkout(self, headers: Mapping[str, str], claims: Any, legacy_id: Optional[str] = None) -> SessionEntry:
        """`SessionTable.checkout` for this caller (`checkout_id` of the legacy session ``legacy_id``), whose 404
        says, when several processes serve, where sessions live."""
        principal = self._principal(claims)
        try:
            if legacy_id is not None:
                return self.sessions.checkout_id(legacy_id, legacy=True, principal=principal)
            return self.sessions.checkout(headers, principal)
        except Reject as exc:
            if exc.status != 404 or not self.multiprocess:
                raise
            raise Reject(404, f"Session not found in this process (pid {os.getpid()}): it ended, expired, or "
                         f"belongs to another process. {MULTIPROCESS_SESSIONS}", headers=exc.headers) from None

    # ---- legacy HTTP+SSE (2024-11-05) -------------------------------------------------------------------
    def _legacy_stream(self, request: IncomingRequest, responder: Responder, claims: Any) -> None:
        self._refuse_while_draining()
        self._check_sessions_possible(None)
        self._hold_stream(responder.can_park)
        try:
            entry = self.sessions.open(legacy=True, principal=self._principal(claims))
        except BaseException:
            self._release_stream()
            raise

        def done(client_left: bool) -> None:
            try:
                if client_left:
                    entry.transport.standalone.client_gone(out)
            finally:
                try:
                    self.sessions.checkin(entry)
                    entry.session.close()  # the stream is the connection: when it ends, so does the session
                finally:
                    self._release_stream()

        try:
            assert entry.transport.session_id is not None
            endpoint = f"{request.script_name}{self.messages_path}?session_id={entry.transport.session_id}"
            out = entry.transport.standalone.attach(responder, encode_event(endpoint, event="endpoint"))
            if self.draining:  # the drain began after the check above, and may have missed this session
                entry.transport.standalone.detach()
        except BaseException:
            done(False)
            raise
        # Released as the GET stream above is: session end, server close, a client seen to leave.
        self._until_released(responder, out, done)

    def _legacy_post(self, request: IncomingRequest, responder: Responder, claims: Any) -> None:
        session_id = parse_qs(request.query).get("session_id", [None])[0]
        if session_id is None:
            raise Reject(400, "Bad Request: session_id is required")
        entry = self._checkout(request.headers, claims, legacy_id=session_id)
        try:
            try:
                value = jsonrpc.decode(request.body)
                for message in value if isinstance(value, list) else [value]:
                    jsonrpc.kind_of(message)
            except InvalidMessage as exc:
                raise Reject(400, str(exc), exc.code, id=exc.id) from None
            info = RequestInfo(request.headers, auth=claims, session_id=session_id)  # its stream cannot close early
            # Handled on the session's pool: the answer goes out on the SSE stream, and the client may need
            # this POST answered before it can send what a handler waits for (a sampling result).
            entry.session.receive(value, request_info=info)
        finally:
            self.sessions.checkin(entry)
        responder.respond(202, [("Content-Type", "text/plain")], b"Accepted")
