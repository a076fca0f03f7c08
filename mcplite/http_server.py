"""Serve a `Server` over HTTP: Streamable HTTP (2025-03-26 to 2025-11-25) and the legacy HTTP+SSE transport.

Two layers:

- `HTTPApp`, the core. It takes one parsed request (`HTTPRequest`) and answers it through a `Responder`
  that the HTTP server in front of it provides. It owns the MCP sessions, routes every outgoing message to
  exactly one stream, and applies the security checks. It never touches a socket.
- Adapters that parse HTTP and implement `Responder`: the standard library's ``ThreadingHTTPServer``
  here (`serve`, `HTTPServerThread`, `start_http_server`) and a PEP 3333 application in `wsgi`.

How a POST carrying a request is answered. Its handler runs inline, on the thread that read the POST
(``session.receive(..., inline=True)``): no hand-off to another thread. Whatever the handler sends is
routed by `related_request_id` to that POST's stream and written at once by the sending thread, under the
stream's lock. The stream starts undecided: if the response is the first message to arrive it goes out as
one ``application/json`` body with its headers, in a single write (the fast path). The first message that
is not the response (progress, a log message, a sampling request...) switches the stream to
``text/event-stream``; that is still possible because no header has been sent yet. A stream that stays
silent for ``keepalive_interval`` also switches, so that keep-alive comments can flow. With
``json_response=True`` a stream never switches: related notifications go to the standalone GET stream
instead, and server requests related to the POST fail (there is no stream that may carry them).

Resumability (2025-03-26) and SSE polling (2025-11-25): events of a stateful session carry ids
``"<stream>:<seq>"`` and are stored in an `EventStore` before they are written, so a client that resumes
with GET + ``Last-Event-ID`` receives exactly the events of that stream it missed, then the live ones. From
2025-11-25 a stream starts with a priming event (an id, empty data and ``retry``), and a handler may close
its POST's stream early to free the connection; the client then resumes::

    @server.tool
    def long_job(ctx: Context) -> str:
        ctx.transport_info["close_sse_stream"]()   # True if closed; False where the stream cannot resume
        ...

``ctx.transport_info`` holds ``headers`` (lower-case names), ``auth`` (what `authenticate` returned),
``session_id`` and ``close_sse_stream``.

Security: ``Origin`` is validated on every request (403), ``Host`` against an allow-list that defaults to the
loopback names when bound to loopback (DNS rebinding; 403), bodies are limited (413), reading a request has
deadlines (a slow or silent client is cut off), the thread count is bounded (503), and an ``authenticate``
hook can refuse a request with 401/403 and ``WWW-Authenticate`` (`HTTPRefusal`).

A revision-dependent rule is read from the `versions` table (``batching``, ``protocol_version_header``,
``resumable_streams``, ``sse_polling``), so a later revision is a new row there plus its new features here.
"""

import abc
import logging
import secrets
import socket
import socketserver
import sys
import threading
import time
from email.utils import formatdate
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from ipaddress import ip_address
from typing import Any, Callable, Dict, FrozenSet, List, Mapping, NamedTuple, Optional, Sequence, Set, Tuple
from urllib.parse import parse_qs, urlsplit

from . import jsonrpc
from . import types as t
from .errors import (
    INTERNAL_ERROR, INVALID_REQUEST, PARSE_ERROR, ConnectionClosed, TransportError,
)
from .eventstore import EventStore, InMemoryEventStore, StoredEvent
from .http_messages import HTTPRefusal
from .jsonrpc import InvalidMessage, RequestId
from .session import ServerSession
from .sse import encode_comment, encode_event
from .transport import MessageSink, Transport
from .versions import DEFAULT_HTTP_VERSION, is_supported

__all__ = [
    "HTTPApp", "HTTPRequest", "Responder", "HTTPRefusal", "Headers", "RouteHandler", "serve",
    "HTTPServerThread", "start_http_server", "LOOPBACK_HOSTS", "EventStore", "InMemoryEventStore", "reason_phrase",
]

log = logging.getLogger("mcplite")

Headers = List[Tuple[str, str]]

#: The ``Host`` names accepted by default when the server is bound to a loopback address.
LOOPBACK_HOSTS: Tuple[str, ...] = ("localhost", "127.0.0.1", "[::1]")
_LOOPBACK_ORIGIN_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
_REASONS = {status.value: status.phrase for status in HTTPStatus}
_STANDALONE_STREAM = "0"  # the GET stream's id; a session's POST streams are numbered from 1
_SSE_HEADERS: Headers = [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache, no-transform"),
                         ("X-Accel-Buffering", "no")]
_JSON_HEADERS: Headers = [("Content-Type", "application/json")]


def reason_phrase(status: int) -> str:
    """The standard reason phrase of an HTTP status ("" for an unknown one)."""
    return _REASONS.get(status, "")


class HTTPRequest(NamedTuple):
    """One HTTP request, as an adapter hands it to `HTTPApp.handle`."""

    method: str
    #: The path below the application's mount point, without the query string.
    path: str
    query: str
    #: Header names in lower case; repeated headers joined with ", ".
    headers: Mapping[str, str]
    body: bytes
    #: Where the application is mounted (WSGI ``SCRIPT_NAME``); prefixes the URLs it hands out.
    script_name: str = ""


#: Answers a GET on one of `HTTPApp`'s extra ``routes``: ``(status, headers, body)``.
RouteHandler = Callable[[HTTPRequest], Tuple[int, Headers, bytes]]


class Responder(abc.ABC):
    """How `HTTPApp` answers one request: implemented by each HTTP server adapter.

    A response is either complete (`respond`) or streamed (`start_stream`, `write`..., `end_stream`).
    Stream methods may be called from any thread, never two at once; they raise `OSError` once the client
    has gone. Adapters add the framing headers (Content-Length, Transfer-Encoding, Connection) themselves.
    """

    #: False where a response cannot end before the application returns (WSGI).
    can_end_early = True

    @abc.abstractmethod
    def respond(self, status: int, headers: Headers, body: bytes) -> None:
        """Send a complete response."""

    @abc.abstractmethod
    def start_stream(self, headers: Headers, first: bytes) -> None:
        """Send ``200 OK`` with ``headers`` and the first bytes of a body that goes on."""

    @abc.abstractmethod
    def write(self, data: bytes) -> None:
        """Send more of the streamed body, at once."""

    @abc.abstractmethod
    def end_stream(self, last: bytes = b"", *, close_connection: bool = False) -> None:
        """Send ``last`` and end the streamed body (and the connection too, if asked and possible)."""


class _Reject(Exception):
    """An error answer: raised by the checks, sent by `HTTPApp.handle` with a JSON-RPC error body."""

    def __init__(self, status: int, message: str, code: int = INVALID_REQUEST, *,
                 headers: Sequence[Tuple[str, str]] = (), id: Optional[RequestId] = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.id = id
        self.headers = list(headers)
        self.body = jsonrpc.encode(jsonrpc.error(id, code, message)).encode("utf-8")

    def answering(self, id: Optional[RequestId]) -> "_Reject":
        """The same refusal, addressed to request ``id`` (when it has no id yet)."""
        if self.id is not None or id is None:
            return self
        return _Reject(self.status, str(self), self.code, headers=self.headers, id=id)


# ---- pure checks ----------------------------------------------------------------------------------------
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


def _is_loopback(host: str) -> bool:
    host = host.strip("[]").lower()
    if host == "localhost":
        return True
    try:
        return ip_address(host).is_loopback
    except ValueError:
        return False


def _answered_ids(message: Any) -> Tuple[RequestId, ...]:
    """The ids of the requests that ``message`` (one outgoing message or a batch) answers."""
    items = message if isinstance(message, list) else (message,)
    return tuple(m["id"] for m in items if isinstance(m, dict) and "method" not in m and m.get("id") is not None)


def _is_request(message: Any) -> bool:
    return isinstance(message, dict) and "method" in message and "id" in message


# ---- streams --------------------------------------------------------------------------------------------
class _Attachment:
    """One HTTP response that currently carries a stream to the client."""

    __slots__ = ("responder", "streaming", "last_write", "released")

    def __init__(self, responder: Responder, *, waited_on: bool = False) -> None:
        self.responder = responder
        #: The SSE headers have gone out; until then a POST can still answer with JSON.
        self.streaming = False
        self.last_write = time.monotonic()
        #: Set once this response no longer carries the stream, for the thread that waits to return (a
        #: GET's). A POST's thread needs none: it finishes its stream itself once its handlers return.
        self.released = threading.Event() if waited_on else None


class _Stream:
    """One SSE stream of a session: the one a POST opens for its requests, or the standalone GET stream.

    Messages are written by whichever thread sends them, under `lock`, so events are numbered, stored and
    written in one order, with as few writes as possible (the headers go out with the first event, the last
    event with the end of the body). The stream outlives any one connection: while the client is not
    attached (it disconnected, or we closed the connection early) events are only stored, if the session
    is resumable, and replayed when it resumes.
    """

    def __init__(self, transport: "_SessionTransport", stream_id: str, request_ids: Sequence[RequestId] = (),
                 batch: bool = False) -> None:
        self.transport = transport
        self.id = stream_id
        self.request_ids = tuple(request_ids)
        self.is_post = bool(request_ids)
        self.batch = batch
        # Guards every field below and serialises writes to the attached response.
        self.lock = threading.Lock()
        self.unanswered: Set[RequestId] = set(request_ids)
        self.seq = 0  # number of the last event; 0 is the priming event's
        self.out: Optional[_Attachment] = None
        self.held: List[str] = []  # responses kept while a POST may still answer with one JSON body
        self.finished = False
        self.opened = False  # standalone only: a client has listened, so missed events are worth keeping

    # -- called by the session transport, from the threads that send --
    def deliver(self, data: str, answers: Tuple[RequestId, ...]) -> bool:
        """Take one encoded message; False if this stream cannot carry it (the caller routes it elsewhere)."""
        with self.lock:
            if self.finished or (self.is_post and not answers and self.transport.app.json_response):
                return False
            self.unanswered.difference_update(answers)
            final = self.is_post and not self.unanswered
            out = self.out
            if out is not None and not out.streaming:  # a POST that has sent nothing yet
                if answers:
                    self.held.append(data)
                    if final:
                        self._answer_with_json(out)
                    return True
                return self._start_sse(out, [data])
            event, stored = self._number(data)
            if final:
                self.finished = True
            if out is None:
                return stored
            if final:
                return self._release(out, last=event) or stored
            return self._write(out, event) or stored

    def _answer_with_json(self, out: _Attachment) -> None:
        body = f"[{','.join(self.held)}]" if self.batch else self.held[0]
        self.held = []
        self.finished = True
        try:
            out.responder.respond(200, _JSON_HEADERS + self.transport.session_headers(), body.encode("utf-8"))
        except OSError:
            log.debug("client left before its JSON response")
        self._release(out, end=False)

    def _start_sse(self, out: _Attachment, messages: List[str]) -> bool:
        """Switch an undecided POST to SSE: headers, priming event, held responses and ``messages``, one write."""
        priming = self._priming()  # before numbering: it points just before the first event
        pending, self.held = self.held + messages, []
        events = [self._number(data) for data in pending]
        try:
            out.responder.start_stream(_SSE_HEADERS + self.transport.session_headers(),
                                       priming + b"".join(event for event, _ in events))
        except OSError:
            self._release(out, end=False)
            return all(stored for _, stored in events)
        out.streaming = True
        out.last_write = time.monotonic()
        return True

    def _priming(self) -> bytes:
        """The priming event (SSE polling): an id to resume from, empty data, and the reconnection delay."""
        if not self.transport.polling:
            return b""
        return encode_event("", id=f"{self.id}:{self.seq}", retry=self.transport.app.sse_retry)

    def _number(self, data: str) -> Tuple[bytes, bool]:
        """Encode one event; if the session is resumable, number and store it first. Returns (event, stored)."""
        if self.transport.resumable and (self.is_post or self.opened):
            self.seq += 1
            self.transport.store(self.id, self.seq, data)
            return _event(self.id, self.seq, data), True
        return encode_event(data), False

    def _write(self, out: _Attachment, payload: bytes) -> bool:
        try:
            out.responder.write(payload)
        except OSError:
            self._release(out, end=False)  # the client went away; it may resume
            return False
        out.last_write = time.monotonic()
        return True

    def _release(self, out: _Attachment, *, end: bool = True, last: bytes = b"",
                 close_connection: bool = False) -> bool:
        """Detach ``out``, ending its body (after ``last``) if it streams; False if that write failed."""
        written = True
        if end and out.streaming:
            try:
                out.responder.end_stream(last, close_connection=close_connection)
            except OSError:
                written = False
        if self.out is out:
            self.out = None
        self.transport.app._untrack(out)
        if out.released is not None:
            out.released.set()
        return written

    # -- called by the HTTP app, from the thread of the request concerned --
    def attach(self, responder: Responder, preface: bytes = b"") -> _Attachment:
        """Open the standalone stream on a GET (or the legacy stream, after ``preface``)."""
        with self.lock:
            if self.finished:
                raise _Reject(404, "Session not found")
            if self.out is not None:
                raise _Reject(409, "Conflict: this session already has a standalone SSE stream")
            self.opened = True
            return self._attach(responder, preface + self._priming())

    def resume(self, responder: Responder, after_seq: int) -> Optional[_Attachment]:
        """Replay the events after ``after_seq`` on a GET, then carry the live ones; None if the stream had ended."""
        with self.lock:
            if self.finished:
                _send_replay(responder, self.transport, self.id, self.transport.replay(self.id, after_seq))
                return None
            if after_seq > self.seq:
                raise _Reject(400, f"Last-Event-ID {self.id}:{after_seq} is not an event of this session")
            missed = [] if after_seq == self.seq else self.transport.replay(self.id, after_seq)
            if missed is None:
                raise _Reject(400, "The events after this Last-Event-ID are no longer available")
            if self.out is not None:
                if not self.out.streaming:
                    raise _Reject(400, "This stream has not started")
                self._release(self.out)  # the client has moved to the new connection
            self.opened = True
            return self._attach(responder, b"".join(_event(self.id, seq, data) for seq, data in missed))

    def _attach(self, responder: Responder, first: bytes) -> _Attachment:
        out = self.transport.app._track(_Attachment(responder, waited_on=True), self)
        self.out = out
        try:
            responder.start_stream(_SSE_HEADERS + self.transport.session_headers(), first)
            out.streaming = True
        except OSError:
            self._release(out, end=False)
        return out

    def close_early(self) -> bool:
        """End the response carrying this stream now; the client resumes with GET + Last-Event-ID.

        The ``close_sse_stream`` hook of handlers. False where the stream could not be resumed (before
        2025-11-25, stateless, JSON response mode) or the response cannot end early (WSGI).
        """
        with self.lock:
            out = self.out
            if self.finished or out is None or not out.responder.can_end_early or not self.transport.polling:
                return False
            if not out.streaming:
                self._start_sse(out, [])  # its priming event gives the client an id to resume from
            if self.out is out:
                self._release(out, close_connection=True)
            return True

    def finish_post(self) -> None:
        """No more answers can come (the POST's handlers have returned): end the POST's response."""
        with self.lock:
            out = self.out
            self.finished = True
            if out is None:
                return
            if out.streaming:
                self._release(out)
            elif self.held:
                self._answer_with_json(out)  # a batch some of whose requests were cancelled
            else:
                try:
                    if self.transport.closed:
                        out.responder.respond(404, _JSON_HEADERS, _Reject(404, "Session not found").body)
                    else:  # cancelled: no response will ever come, so the stream is empty
                        out.responder.start_stream(_SSE_HEADERS + self.transport.session_headers(), b"")
                        out.streaming = True
                except OSError:
                    pass
                self._release(out)

    def end(self) -> None:
        """The session is over: end whatever streamed response carries this stream."""
        with self.lock:
            self.finished = True
            if self.out is not None and self.out.streaming:
                self._release(self.out)
            # An undecided POST keeps its response: `finish_post`, on the POST's thread, answers it.

    def keepalive(self, out: _Attachment, idle_since: float) -> None:
        """Write a comment if ``out`` has been silent since ``idle_since`` (the housekeeping thread)."""
        with self.lock:
            if self.out is not out or out.last_write > idle_since:
                return
            if out.streaming:
                self._write(out, encode_comment())
            elif not self.transport.app.json_response:
                # A handler silent this long: switch to SSE so that comments can keep the connection open.
                self._start_sse(out, [])


def _event(stream_id: str, seq: int, data: str) -> bytes:
    return encode_event(data, id=f"{stream_id}:{seq}")


def _send_replay(responder: Responder, transport: "_SessionTransport", stream_id: str,
                 events: Optional[List[StoredEvent]]) -> None:
    if events is None:
        raise _Reject(400, "Unknown or expired Last-Event-ID")
    responder.start_stream(_SSE_HEADERS + transport.session_headers(),
                           b"".join(_event(stream_id, seq, data) for seq, data in events))
    responder.end_stream()


# ---- one session's transport ----------------------------------------------------------------------------
class _SessionTransport(Transport):
    """One MCP session's side of the HTTP transport: sends each outgoing message on exactly one stream.

    A message related to a request goes to the stream of the POST that carried the request; anything else
    goes to the standalone GET stream. Nothing is ever broadcast.
    """

    def __init__(self, app: "HTTPApp", session_id: Optional[str], *, legacy: bool = False) -> None:
        self.app = app
        self.session_id = session_id
        self.legacy = legacy
        self.session: Optional[ServerSession] = None
        # Guards _routes, _streams, _next_stream and closed.
        self._lock = threading.Lock()
        self._routes: Dict[RequestId, _Stream] = {}  # request id -> the stream of the POST carrying it
        self.standalone = _Stream(self, _STANDALONE_STREAM)
        self._streams: Dict[str, _Stream] = {_STANDALONE_STREAM: self.standalone}
        self._next_stream = 1
        self.closed = False

    def start(self, sink: MessageSink) -> None:
        """Nothing to start: the HTTP app delivers each POSTed message to the session itself."""

    @property
    def resumable(self) -> bool:
        """Events carry ids and are stored (a stateful Streamable HTTP session of 2025-03-26 or later)."""
        revision = self.session.revision if self.session is not None else None
        return (self.session_id is not None and not self.legacy and self.app.event_store is not None
                and revision is not None and revision.resumable_streams)

    @property
    def polling(self) -> bool:
        """Streams are primed and may be closed early for the client to resume (2025-11-25)."""
        revision = self.session.revision if self.session is not None else None
        return self.resumable and revision is not None and revision.sse_polling

    def session_headers(self) -> Headers:
        if self.session_id is None or self.legacy or self.session is None or self.session.revision is None:
            return []
        return [("MCP-Session-Id", self.session_id)]

    def store(self, stream_id: str, seq: int, data: str) -> None:
        assert self.app.event_store is not None and self.session_id is not None
        self.app.event_store.append(self.session_id, stream_id, seq, data)

    def replay(self, stream_id: str, after_seq: int) -> Optional[List[StoredEvent]]:
        if not self.resumable:
            return None
        assert self.app.event_store is not None and self.session_id is not None
        return self.app.event_store.replay(self.session_id, stream_id, after_seq)

    def send(self, message: Any, *, related_request_id: Optional[RequestId] = None) -> None:
        data = jsonrpc.encode(message)  # a ValueError here reaches the session, which answers an error instead
        answers = _answered_ids(message)
        with self._lock:
            if self.closed:
                raise ConnectionClosed("the HTTP session has ended")
            stream = self._routes.get(related_request_id) if related_request_id is not None else None
        if stream is not None and stream.deliver(data, answers):
            return
        if answers and not self.legacy:
            # Its POST has been answered or abandoned; a response never goes on the standalone stream.
            log.debug("response to %r dropped: its stream has ended", answers)
            return
        if stream is not None and _is_request(message):
            raise TransportError(f"{message['method']}: the stream of request {related_request_id!r} cannot carry "
                                 "it (JSON response mode, the request was answered, or the client left)")
        if not self.standalone.deliver(data, answers):
            if _is_request(message):
                raise ConnectionClosed(f"{message['method']}: the client has no open stream to receive it")
            log.debug("message dropped: the client has no open stream: %.200s", data)

    def open_post(self, request_ids: List[RequestId], responder: Responder, batch: bool) -> _Stream:
        """A new stream for a POST carrying ``request_ids``."""
        with self._lock:
            if self.closed:
                raise _Reject(404, "Session not found")
            for request_id in request_ids:
                if request_id in self._routes or request_ids.count(request_id) > 1:
                    raise _Reject(400, f"Invalid Request: id {request_id!r} is already in use", id=request_id)
            stream = _Stream(self, str(self._next_stream), request_ids, batch)
            stream.out = _Attachment(responder)
            self._next_stream += 1
            for request_id in request_ids:
                self._routes[request_id] = stream
            self._streams[stream.id] = stream
        self.app._track(stream.out, stream)
        return stream

    def finish_post(self, stream: _Stream) -> None:
        stream.finish_post()
        with self._lock:
            for request_id in stream.request_ids:
                del self._routes[request_id]
            del self._streams[stream.id]

    def resume(self, last_event_id: str, responder: Responder) -> Optional[_Attachment]:
        stream_id, sep, seq = last_event_id.partition(":")
        if not sep or not (seq.isascii() and seq.isdigit()):
            raise _Reject(400, f"Invalid Last-Event-ID {last_event_id!r}")
        with self._lock:
            stream = self._streams.get(stream_id)
        if stream is None:  # a POST stream that has ended: replay what it sent after that id, if kept
            _send_replay(responder, self, stream_id, self.replay(stream_id, int(seq)))
            return None
        return stream.resume(responder, int(seq))

    def close(self) -> None:
        with self._lock:
            if self.closed:
                return
            self.closed = True
            streams = list(self._streams.values())
        for stream in streams:
            stream.end()
        if self.session_id is not None and self.app.event_store is not None:
            self.app.event_store.forget(self.session_id)


class _SessionEntry:
    """A live stateful session, and how recently a request used it."""

    __slots__ = ("session", "transport", "busy", "last_active")

    def __init__(self, session: ServerSession, transport: _SessionTransport) -> None:
        self.session = session
        self.transport = transport
        self.busy = 1  # requests and streams in progress; the session is never idle while this is > 0
        self.last_active = time.monotonic()


# ---- the core -------------------------------------------------------------------------------------------
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
            handler takes the `HTTPRequest` and returns ``(status, headers, body)``. Paths are below the
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
        mcp: Dict[str, Callable[[HTTPRequest, Responder, Any], None]] = {"POST": self._post}
        if allow_get and not stateless:
            mcp["GET"] = self._get
        if allow_delete and not stateless:
            mcp["DELETE"] = self._delete
        self._routes: Dict[str, Dict[str, Callable[[HTTPRequest, Responder, Any], None]]] = {self.path: mcp}
        if legacy_sse and not stateless:
            self._routes[sse_path.rstrip("/") or "/"] = {"GET": self._legacy_stream}
            self._routes[self.messages_path] = {"POST": self._legacy_post}
        # Guards _sessions, _attachments and _housekeeper.
        self._lock = threading.Lock()
        self._sessions: Dict[str, _SessionEntry] = {}
        self._attachments: Dict[_Attachment, _Stream] = {}  # every response carrying a stream, for keep-alives
        self._housekeeper: Optional[threading.Thread] = None
        self._stopping = threading.Event()

    # ---- entry point ------------------------------------------------------------------------------------
    def handle(self, request: HTTPRequest, responder: Responder) -> None:
        """Answer one request; returns once its response is complete (a GET stream: once it has ended)."""
        try:
            self._check_host_and_origin(request.headers)
            path = request.path.rstrip("/") or "/"
            extra = self.extra_routes.get(path)
            if extra is not None:
                self._serve_extra(request, responder, extra)
                return
            methods = self._routes.get(path)
            if methods is None:
                raise _Reject(404, "Not Found")
            handler = methods.get(request.method)
            if handler is None:
                raise _Reject(405, f"Method Not Allowed: {request.method}",
                              headers=[("Allow", ", ".join(sorted(methods)))])
            handler(request, responder, self._authenticate(request.headers))
        except _Reject as reject:
            responder.respond(reject.status, _JSON_HEADERS + reject.headers, reject.body)
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
        responder.respond(status, _JSON_HEADERS, _Reject(status, message, code).body)

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
                raise _Reject(403, f"Forbidden: Host {host_header!r} is not allowed")
        origin = headers.get("origin")
        if origin is not None and not self._origin_allowed(origin, host_header):
            raise _Reject(403, f"Forbidden: Origin {origin!r} is not allowed")

    def _origin_allowed(self, origin: str, host_header: str) -> bool:
        if self._allowed_origins is not None:
            return "*" in self._allowed_origins or origin.rstrip("/") in self._allowed_origins
        parts = urlsplit(origin)
        if parts.scheme not in ("http", "https"):
            return False  # "null" (sandboxed pages, files) and anything stranger
        return parts.hostname in _LOOPBACK_ORIGIN_HOSTS or parts.netloc.lower() == host_header.strip().lower()

    @staticmethod
    def _serve_extra(request: HTTPRequest, responder: Responder, handler: RouteHandler) -> None:
        if request.method != "GET":
            raise _Reject(405, f"Method Not Allowed: {request.method}", headers=[("Allow", "GET")])
        status, headers, body = handler(request)
        responder.respond(status, headers, body)

    def _authenticate(self, headers: Mapping[str, str]) -> Any:
        if self.authenticate is None:
            return None
        try:
            return self.authenticate(headers)
        except HTTPRefusal as refusal:
            raise _Reject(refusal.status, refusal.message, headers=refusal.headers) from None

    # ---- Streamable HTTP --------------------------------------------------------------------------------
    def _post(self, request: HTTPRequest, responder: Responder, claims: Any) -> None:
        headers = request.headers
        if "application/json" not in _media_types(headers.get("content-type", "")):
            raise _Reject(415, "Unsupported Media Type: Content-Type must be application/json")
        accept = _media_types(headers.get("accept", ""))
        if not _accepts(accept, "application/json") or not (self.json_response or _accepts(accept, "text/event-stream")):
            raise _Reject(406, "Not Acceptable: Accept must list application/json and text/event-stream")
        try:
            value = jsonrpc.decode(request.body)
        except InvalidMessage as exc:
            raise _Reject(400, str(exc), PARSE_ERROR) from None
        batch = isinstance(value, list)
        messages: List[Any] = value if batch else [value]
        if not messages:
            raise _Reject(400, "Invalid Request: empty batch")
        try:
            kinds = [jsonrpc.kind_of(message) for message in messages]
        except InvalidMessage as exc:
            raise _Reject(400, str(exc), id=exc.id) from None
        if any(kind is jsonrpc.REQUEST and m["method"] == t.INITIALIZE for m, kind in zip(messages, kinds)):
            if batch:
                raise _Reject(400, "Invalid Request: initialize cannot be batched")
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
        except _Reject as exc:  # a refusal of one request names it, so the client can match it
            raise exc.answering(messages[0]["id"] if kinds == [jsonrpc.REQUEST] else None) from None

    def _initialize(self, request: HTTPRequest, responder: Responder, messages: List[Any], claims: Any) -> None:
        kinds = [jsonrpc.REQUEST]
        if self.stateless:  # answered normally, by a session that is then forgotten
            transport = _SessionTransport(self, None)
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
        if entry.session.revision is None:  # the handshake failed: no session was established
            entry.session.close()

    def _stateless_post(self, request: HTTPRequest, responder: Responder, messages: List[Any], kinds: List[str],
                        batch: bool, claims: Any, version: Optional[str]) -> None:
        version = version or DEFAULT_HTTP_VERSION
        if version not in self.server.supported_versions:
            raise _Reject(400, "Bad Request: an MCP-Protocol-Version header is required by this server")
        transport = _SessionTransport(self, None)
        session = self._new_session(transport)
        session.assume_initialized(version)
        if jsonrpc.REQUEST not in kinds:
            # Only notifications' handlers need the dispatcher thread; a request's runs inline here.
            session.start()
        try:
            self._deliver(session, transport, request, responder, messages, kinds, batch, claims)
        finally:
            session.close()

    def _deliver(self, session: ServerSession, transport: _SessionTransport, request: HTTPRequest,
                 responder: Responder, messages: List[Any], kinds: List[str], batch: bool, claims: Any) -> None:
        """Hand POSTed messages to the session; requests are handled on this thread, their stream answered."""
        if batch and (session.revision is None or not session.revision.batching):
            raise _Reject(400, "Invalid Request: batches are not allowed in this protocol revision")
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

    def _get(self, request: HTTPRequest, responder: Responder, claims: Any) -> None:
        if not _accepts(_media_types(request.headers.get("accept", "")), "text/event-stream"):
            raise _Reject(406, "Not Acceptable: Accept must list text/event-stream")
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
                out.released.wait()
        finally:
            self._checkin(entry)

    def _delete(self, request: HTTPRequest, responder: Responder, claims: Any) -> None:
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
            raise _Reject(400, f"Bad Request: unsupported MCP-Protocol-Version {version!r} (supported: "
                          f"{', '.join(self.server.supported_versions)})")
        return version

    def _require_version_header(self, session: ServerSession, version: Optional[str]) -> None:
        if (version is None and self.require_version_header and session.revision is not None
                and session.revision.protocol_version_header):
            raise _Reject(400, "Bad Request: the MCP-Protocol-Version header is required")

    # ---- legacy HTTP+SSE (2024-11-05) -------------------------------------------------------------------
    def _legacy_stream(self, request: HTTPRequest, responder: Responder, claims: Any) -> None:
        entry = self._open_session(legacy=True)
        try:
            assert entry.transport.session_id is not None
            endpoint = f"{request.script_name}{self.messages_path}?session_id={entry.transport.session_id}"
            out = entry.transport.standalone.attach(responder, encode_event(endpoint, event="endpoint"))
            assert out.released is not None
            out.released.wait()
        finally:
            self._checkin(entry)
            entry.session.close()  # the stream is the connection: when it ends, so does the session

    def _legacy_post(self, request: HTTPRequest, responder: Responder, claims: Any) -> None:
        session_id = parse_qs(request.query).get("session_id", [None])[0]
        if session_id is None:
            raise _Reject(400, "Bad Request: session_id is required")
        entry = self._checkout_id(session_id, legacy=True)
        try:
            try:
                value = jsonrpc.decode(request.body)
                for message in value if isinstance(value, list) else [value]:
                    jsonrpc.kind_of(message)
            except InvalidMessage as exc:
                raise _Reject(400, str(exc), exc.code, id=exc.id) from None
            info = {"headers": request.headers, "auth": claims, "session_id": session_id,
                    "close_sse_stream": lambda: False}
            # Handled on the session's pool: the answer goes out on the SSE stream, and the client may need
            # this POST answered before it can send what a handler waits for (a sampling result).
            entry.session.receive(value, transport_info=info)
        finally:
            self._checkin(entry)
        responder.respond(202, [("Content-Type", "text/plain")], b"Accepted")

    # ---- sessions ---------------------------------------------------------------------------------------
    def _new_session(self, transport: _SessionTransport) -> ServerSession:
        session: ServerSession = self.server.create_session(transport)
        transport.session = session
        return session

    def _open_session(self, *, legacy: bool) -> _SessionEntry:
        """Create a stateful session (busy: the caller checks it in), or refuse with 503 at the cap."""
        self._expire_idle(time.monotonic())
        session_id = secrets.token_hex(16)
        transport = _SessionTransport(self, session_id, legacy=legacy)
        session = self._new_session(transport)
        entry = _SessionEntry(session, transport)
        with self._lock:
            full = len(self._sessions) >= self.max_sessions
            if not full:
                self._sessions[session_id] = entry
        if full:
            session.close()
            raise _Reject(503, "Service Unavailable: too many sessions", headers=[("Retry-After", "5")])
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
            raise _Reject(400, "Bad Request: the MCP-Session-Id header is required")
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
        raise _Reject(404, "Session not found")

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
    def _track(self, out: _Attachment, stream: _Stream) -> _Attachment:
        with self._lock:
            self._attachments[out] = stream
        self._ensure_housekeeper()
        return out

    def _untrack(self, out: _Attachment) -> None:
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


# ---- the standard library's HTTP server -----------------------------------------------------------------
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

    def readline(self, limit: int = -1) -> bytes:
        searched = 0
        while True:
            end = self._buffer.find(b"\n", searched)
            if end >= 0:
                return self._take(end + 1 if limit < 0 else min(end + 1, limit))
            if 0 <= limit <= len(self._buffer):
                return self._take(limit)
            searched = len(self._buffer)
            if not self._fill():
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

    def setup(self) -> None:
        self.connection = self.request
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.connection.settimeout(self.server.read_timeout)
        self.rfile = _DeadlineReader(self.connection)  # type: ignore[assignment]
        self.wfile = _SocketWriter(self.connection)  # type: ignore[assignment]
        self.server.connection_opened(self.connection)

    def finish(self) -> None:
        self.server.connection_closed(self.connection)

    def handle_one_request(self) -> None:
        # Waiting for the next request and reading its head share one deadline: it is also the
        # keep-alive timeout of an idle connection.
        self.rfile.set_deadline(self.server.header_timeout)  # type: ignore[attr-defined]
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
        headers: Dict[str, str] = {}
        for _ in range(_MAX_HEADERS + 1):
            line = self.rfile.readline(_MAX_LINE + 1)
            if line in (b"\r\n", b"\n"):
                break
            if not line:
                return False  # the client left mid-request
            name, colon, value = str(line, "iso-8859-1").partition(":")
            if len(line) > _MAX_LINE or not colon or not name or name != name.strip():
                self.send_error(HTTPStatus.BAD_REQUEST, "Bad header line")
                return False
            key = name.lower()
            value = value.strip()
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        else:
            self.send_error(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, "Too many header fields")
            return False
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
        self.rfile.set_deadline(None)  # type: ignore[attr-defined]
        self.connection.settimeout(self.server.read_timeout)  # now bounds each write of the response
        path, _, query = self.path.partition("?")
        if not path.startswith("/"):  # the absolute form a proxy sends: http://host/mcp
            path = urlsplit(path).path or "/"
        try:
            request = HTTPRequest(self.command, path, query, self.headers, body)  # type: ignore[arg-type]
            self.server.app.handle(request, _SocketResponder(self))
        except OSError:
            self.close_connection = True

    do_GET = do_POST = do_DELETE = do_PUT = do_PATCH = do_OPTIONS = do_HEAD = _dispatch

    def _declared_length(self) -> int:
        length = self.headers.get("content-length", "0")
        return int(length) if length.isascii() and length.isdigit() else 0

    def _read_body(self, limit: int) -> Optional[bytes]:
        """The request body, or None when the request was refused or the client left."""
        self.rfile.set_deadline(self.server.read_timeout)  # type: ignore[attr-defined]
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
            body = self.rfile.read(int(length))
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
            size = int(self.rfile.readline(1024).split(b";", 1)[0].strip(), 16)  # ValueError: malformed
            if size == 0:
                while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                    pass  # trailer fields, which we ignore
                return bytes(body)
            if len(body) + size > limit:
                self._refuse(413, "Payload Too Large")
                return None
            chunk = self.rfile.read(size + 2)
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
            self.rfile.set_deadline(min(self.server.read_timeout, 2.0))  # type: ignore[attr-defined]
            while self.rfile.read(65536):
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
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, _ConnectionHandler)

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
        body = _Reject(503, "Service Unavailable: too many connections").body
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
        self._httpd.serve_forever(poll_interval=0.1)

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
