"""The streams of the Streamable HTTP server: which response carries each outgoing message, and when.

Used by `app` and `sessions`; not an API. `SessionTransport` is one MCP session's side of the HTTP
transport: it sends every outgoing message on exactly one `Stream`. A message related to a request
(``related_request_id``: its response, progress, a log message, a sampling request...) goes to the stream
of the POST that carried the request; anything else goes to the session's standalone GET stream. Nothing
is ever broadcast.

A POST stream is written at once by the thread that sends, under the stream's lock. It starts undecided: if
the response is the first message to arrive it goes out as one ``application/json`` body with its headers,
in a single write (the fast path). The first message that is not the response switches the stream to
``text/event-stream``; that is still possible because no header has been sent yet. A stream that stays
silent for ``keepalive_interval`` also switches, so that keep-alive comments can flow. With
``json_response=True`` a stream never switches: related notifications go to the standalone GET stream
instead, and server requests related to the POST fail (there is no stream that may carry them). The one
exception is the stream of a ``subscriptions/listen`` (2026-07-28), which is all notifications.

Resumability (2025-03-26) and SSE polling (2025-11-25): events of a stateful session carry ids
``"<stream>:<seq>"`` and are stored in an `EventStore` before they are written, so a client that resumes
with GET + ``Last-Event-ID`` receives exactly the events of that stream it missed, then the live ones. From
2025-11-25 a stream starts with a priming event (an id, empty data and ``retry``), and a handler may close
its POST's stream early (`Stream.close_early`) to free the connection; the client then resumes.

The life of a stream, and of the responses that carry it (an `Attachment` each)::

    POST stream   open_post -> undecided --(its response comes first)---------> one JSON body -> finished
                                   |
                                   +--(anything else, or a keep-alive)--> SSE --(last response)--> finished
                                                                           |
                       detached <--(close_early, or the client left)------+
                       detached --(GET + Last-Event-ID)--> SSE again, after the events it missed
    GET stream    attach -> SSE --(session ends, client left, resumed elsewhere, or server drains)--> released

A stream outlives the responses that carry it: while none does, a resumable stream's events are only stored.

The streams know nothing of the app: whoever hosts them (`sessions.SessionTable`) is their `StreamHost`,
which holds the settings they read, the event store, and the registry the keep-alive thread walks.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import abc
import threading
import time

from ..._log import log
from ..._sync import FanOut
from ...errors import ConnectionClosed, TransportError
from ...protocol import jsonrpc
from ...protocol.envelope import http_status
from ...protocol.sse import encode_comment, encode_event
from .. import MessageSink, Route, Transport
from .adapter import JSON_HEADERS, Headers, Reject, Responder, error_body

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

    from ...protocol.jsonrpc import RequestId
    from .. import HostedSession
    from .eventstore import EventStore, StoredEvent

__all__ = ["Attachment", "Stream", "StreamHost", "SessionTransport", "SSE_HEADERS"]

_STANDALONE_STREAM = "0"  # the GET stream's id; a session's POST streams are numbered from 1
#: The headers of every response that carries a stream (nginx: no buffering).
SSE_HEADERS: Headers = [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache, no-transform"),
                        ("X-Accel-Buffering", "no")]


class Attachment:
    """One HTTP response that currently carries a stream to the client."""

    __slots__ = ("responder", "streaming", "last_write", "released", "owner")

    def __init__(self, responder: Responder, *, waited_on: bool = False) -> None:
        self.responder = responder
        #: The stream it carries, for the thread waiting on ``released`` (set by `Stream._attach`).
        self.owner: Optional[Stream] = None
        #: The SSE headers have gone out; until then a POST can still answer with JSON.
        self.streaming = False
        self.last_write = time.monotonic()
        #: Set once this response no longer carries the stream, for the thread that waits to return (a
        #: GET's). A POST's thread needs none: it finishes its stream itself once its handlers return.
        self.released = threading.Event() if waited_on else None


class StreamHost(abc.ABC):
    """What the streams need from whoever hosts them (`sessions.SessionTable`), so they never name the app.

    Attributes:
        json_response: POST streams never switch to SSE (`HTTPOptions.json_response`).
        sse_retry: the reconnection delay sent with priming events, in milliseconds.
        event_store: where resumable events are kept; None when streams are not resumable.
    """

    json_response: bool
    sse_retry: int
    event_store: Optional[EventStore]

    @abc.abstractmethod
    def track(self, out: Attachment, stream: Stream) -> Attachment:
        """``out`` now carries ``stream``: give it keep-alives until `untrack`. Returns ``out``."""

    @abc.abstractmethod
    def untrack(self, out: Attachment) -> None:
        """``out`` no longer carries a stream (idempotent)."""


class Stream:
    """One SSE stream of a session: the one a POST opens for its requests, or the standalone GET stream.

    Messages are written by whichever thread sends them, under `lock`, so events are numbered, stored and
    written in one order, with as few writes as possible (the headers go out with the first event, the last
    event with the end of the body). The stream outlives any one connection: while the client is not
    attached (it disconnected, or we closed the connection early) events are only stored, if the session
    is resumable, and replayed when it resumes.
    """

    def __init__(self, transport: "SessionTransport", stream_id: str, request_ids: Sequence[RequestId] = (),
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
        self.out: Optional[Attachment] = None
        self.held: List[str] = []  # responses kept while a POST may still answer with one JSON body
        self.finished = False
        self.opened = False  # standalone only: a client has listened, so missed events are worth keeping
        self._first_listener: Optional[threading.Event] = None  # standalone only: made by the first waiter
        #: The status of a one-body JSON answer: 200, or on 2026-07-28 the one its error code calls for.
        self.status = 200

    # -- called by the session transport, from the threads that send --
    def deliver(self, data: str, answers: Sequence[RequestId]) -> bool:
        """Take one encoded message; False if this stream cannot carry it (the caller routes it elsewhere)."""
        with self.lock:
            if self.finished or (self.is_post and not answers and self.transport.json_only):
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

    def _answer_with_json(self, out: Attachment) -> None:
        body = f"[{','.join(self.held)}]" if self.batch else self.held[0]
        self.held = []
        self.finished = True
        try:
            out.responder.respond(self.status, JSON_HEADERS + self.transport.session_headers(), body.encode("utf-8"))
        except OSError:
            log.debug("client left before its JSON response")
        self._release(out, end=False)

    def _start_sse(self, out: Attachment, messages: List[str]) -> bool:
        """Switch an undecided POST to SSE: headers, priming event, held responses and ``messages``, one write."""
        priming = self._priming()  # before numbering: it points just before the first event
        pending, self.held = self.held + messages, []
        events = [self._number(data) for data in pending]
        try:
            out.responder.start_stream(self.transport.sse_headers(), priming + b"".join(event for event, _ in events))
        except OSError:
            self._release(out, end=False)
            self.transport.client_left()
            return all(stored for _, stored in events)
        out.streaming = True
        out.last_write = time.monotonic()
        return True

    def _priming(self) -> bytes:
        """The priming event (SSE polling): an id to resume from, empty data, and the reconnection delay."""
        if not self.transport.polling:
            return b""
        return encode_event("", id=f"{self.id}:{self.seq}", retry=self.transport.host.sse_retry)

    def _number(self, data: str) -> Tuple[bytes, bool]:
        """Encode one event; if the session is resumable, number and store it first. Returns (event, stored)."""
        if self.transport.resumable and (self.is_post or self.opened):
            self.seq += 1
            self.transport.store(self.id, self.seq, data)
            return b"id: %s:%d\n%b" % (self.id.encode(), self.seq, _shared_event(data)), True
        return _shared_event(data), False

    def _write(self, out: Attachment, payload: bytes) -> bool:
        try:
            out.responder.write(payload)
        except OSError:
            self._release(out, end=False)  # the client went away; it may resume
            self.transport.client_left()
            return False
        out.last_write = time.monotonic()
        return True

    def _release(self, out: Attachment, *, end: bool = True, last: bytes = b"",
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
        self.transport.host.untrack(out)
        if out.released is not None:
            out.released.set()
            out.responder.wake()
        return written

    # -- called by the HTTP app, from the thread of the request concerned --
    def attach(self, responder: Responder, preface: bytes = b"") -> Attachment:
        """Open the standalone stream on a GET (or the legacy stream, after ``preface``)."""
        with self.lock:
            if self.finished:
                raise Reject(404, "Session not found")
            if self.out is not None:
                raise Reject(409, "Conflict: this session already has a standalone SSE stream")
            self.opened = True
            out = self._attach(responder, preface + self._priming())
            if self._first_listener is not None:
                self._first_listener.set()
            return out

    def wait_first_listener(self, timeout: float) -> None:
        """Wait, up to ``timeout`` seconds, for a client to open this standalone stream for the first time.

        A client opens its GET stream right after the handshake, on a thread of its own; a handler or a task
        that asks the client something at once can be ahead of it. Returns at once if a client has listened
        before (it left: the request fails now, not later) or the session is over; and once a wait has run out,
        no later request waits again (a client that never listens costs one grace, not one per question)."""
        with self.lock:
            if self.opened or self.finished:
                return
            if self._first_listener is None:
                self._first_listener = threading.Event()
            first_listener = self._first_listener
        if not first_listener.wait(timeout):
            first_listener.set()

    def resume(self, responder: Responder, after_seq: int) -> Optional[Attachment]:
        """Replay the events after ``after_seq`` on a GET, then carry the live ones; None if the stream had ended."""
        with self.lock:
            if self.finished:
                self.transport.send_replay(responder, self.id, after_seq)
                return None
            if after_seq > self.seq:
                raise Reject(400, f"Last-Event-ID {self.id}:{after_seq} is not an event of this session")
            missed = [] if after_seq == self.seq else self.transport.replay(self.id, after_seq)
            if missed is None:
                raise Reject(400, "The events after this Last-Event-ID are no longer available")
            if self.out is not None:
                if not self.out.streaming:
                    raise Reject(400, "This stream has not started")
                self._release(self.out)  # the client has moved to the new connection
            self.opened = True
            out = self._attach(responder, b"".join(_event(self.id, seq, data) for seq, data in missed))
            if self._first_listener is not None:
                self._first_listener.set()
            return out

    def _attach(self, responder: Responder, first: bytes) -> Attachment:
        out = self.transport.host.track(Attachment(responder, waited_on=True), self)
        out.owner = self
        self.out = out
        try:
            responder.start_stream(self.transport.sse_headers(), first)
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
                        out.responder.respond(404, JSON_HEADERS, error_body("Session not found"))
                    else:  # cancelled: no response will ever come, so the stream is empty
                        out.responder.start_stream(self.transport.sse_headers(), b"")
                        out.streaming = True
                except OSError:
                    pass
                self._release(out)

    def detach(self) -> None:
        """End the streamed response carrying this stream, cleanly; the stream and its session live on.

        For the server's shutdown: an open GET stream must not hold it up. Later events are only stored (if
        resumable), as for a client that left.
        """
        with self.lock:
            if self.out is not None and self.out.streaming:
                self._release(self.out)

    def client_gone(self, out: Attachment) -> None:
        """The client of ``out`` has left (its connection closed while nothing was written): let it go, as a
        failed write would, so that it holds no connection or thread until the next keep-alive."""
        with self.lock:
            if self.out is out:
                self._release(out, end=False)
                self.transport.client_left()

    def end(self) -> None:
        """The session is over: end whatever streamed response carries this stream."""
        with self.lock:
            self.finished = True
            if self.out is not None and self.out.streaming:
                self._release(self.out)
            if self._first_listener is not None:
                self._first_listener.set()  # no client will listen now: a waiting request fails at once
            # An undecided POST keeps its response: `finish_post`, on the POST's thread, answers it.

    def keepalive(self, out: Attachment, idle_since: float) -> None:
        """Write a comment if ``out`` has been silent since ``idle_since`` (the housekeeping thread)."""
        with self.lock:
            if self.out is not out or out.last_write > idle_since:
                return
            if out.streaming:
                self._write(out, encode_comment())
            elif not self.transport.json_only:
                # A handler silent this long: switch to SSE so that comments can keep the connection open.
                self._start_sse(out, [])


def _event(stream_id: str, seq: int, data: str) -> bytes:
    return encode_event(data, id=f"{stream_id}:{seq}")


def _shared_event(data: str) -> bytes:
    """``encode_event(data)``, made once per fan-out (`FanOut`) for every stream that carries the same ``data``
    (a resumable stream puts its own ``id:`` line before it)."""
    memo = FanOut.memo()
    if memo is None:
        return encode_event(data)
    key = ("sse", id(data))
    found = memo.get(key)
    if found is None or found[0] is not data:
        found = memo[key] = (data, encode_event(data))  # (data kept: its id stays its own until the memo goes)
    event: bytes = found[1]
    return event


def _shared_encoding(message: Any) -> str:
    """``jsonrpc.encode(message)``, made once per fan-out (`FanOut`) for the notifications that carry the same
    params dict: every session builds its own message around the params the publisher handed them all."""
    memo = FanOut.memo()
    params = message.get("params")
    if memo is None or params is None or "id" in message or len(message) != 3:
        return jsonrpc.encode(message)
    key = ("json", message.get("method"), id(params))
    found = memo.get(key)
    if found is None or found[0] is not params:
        found = memo[key] = (params, jsonrpc.encode(message))  # (params kept: its id stays its own)
    data: str = found[1]
    return data


#: How long a server-initiated request waits for a client that has not yet opened its GET stream (see
#: `Stream.wait_first_listener`); one that never opens it gets the request refused after this.
FIRST_LISTENER_GRACE = 5.0


class SessionTransport(Transport):
    """One MCP session's side of the HTTP transport: sends each outgoing message on exactly one stream.

    A message related to a request goes to the stream of the POST that carried the request; anything else
    goes to the standalone GET stream. Nothing is ever broadcast.
    """

    wants_route = True  # a message related to a request goes to that request's stream

    def __init__(self, host: StreamHost, session_id: Optional[str], *, legacy: bool = False,
                 enveloped: bool = False, listen: bool = False) -> None:
        self.host = host
        self.session_id = session_id
        self.legacy = legacy
        #: Carries one 2026-07-28 request: an error answer gets its own HTTP status, and a client that closes
        #: the response has cancelled the request (streamable-http.mdx, "Cancellation").
        self.enveloped = enveloped
        #: Carries a ``subscriptions/listen`` (2026-07-28): its response is an SSE stream even in JSON response
        #: mode, since notifications are all it carries.
        self.listen = listen
        #: The session this transport carries, set by whoever made both; its revision decides the stream rules.
        self.session: Optional[HostedSession] = None
        self._sink: Optional[MessageSink] = None  # told connection_lost on close
        # Guards _routes, _streams, _next_stream and closed.
        self._lock = threading.Lock()
        self._routes: Dict[RequestId, Stream] = {}  # request id -> the stream of the POST carrying it
        self.standalone = Stream(self, _STANDALONE_STREAM)
        self._streams: Dict[str, Stream] = {_STANDALONE_STREAM: self.standalone}
        self._next_stream = 1
        self.closed = False

    def start(self, sink: MessageSink) -> None:
        """Nothing to read: the HTTP app delivers each POSTed message to the session itself. ``sink`` is told
        `MessageSink.connection_lost` when this transport closes."""
        self._sink = sink

    @property
    def json_only(self) -> bool:
        """POST streams never switch to SSE (JSON response mode), unless this transport carries a listen."""
        return self.host.json_response and not self.listen

    @property
    def resumable(self) -> bool:
        """Events carry ids and are stored (a stateful Streamable HTTP session of 2025-03-26 or later)."""
        revision = self.session.revision if self.session is not None else None
        return (self.session_id is not None and not self.legacy and self.host.event_store is not None
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

    def sse_headers(self) -> Headers:
        """The headers of a response that carries a stream."""
        return SSE_HEADERS + self.session_headers()

    def store(self, stream_id: str, seq: int, data: str) -> None:
        assert self.host.event_store is not None and self.session_id is not None
        self.host.event_store.append(self.session_id, stream_id, seq, data)

    def replay(self, stream_id: str, after_seq: int) -> Optional[List[StoredEvent]]:
        if not self.resumable:
            return None
        assert self.host.event_store is not None and self.session_id is not None
        return self.host.event_store.replay(self.session_id, stream_id, after_seq)

    def send_replay(self, responder: Responder, stream_id: str, after_seq: int) -> None:
        """Answer a GET that resumes a stream which has ended: the events it sent after ``after_seq``."""
        events = self.replay(stream_id, after_seq)
        if events is None:
            raise Reject(400, "Unknown or expired Last-Event-ID")
        responder.start_stream(self.sse_headers(), b"".join(_event(stream_id, seq, data) for seq, data in events))
        responder.end_stream()

    def client_left(self) -> None:
        """A write to the client failed. On 2026-07-28 that cancels the request the response carried.

        Called with the stream's lock held (from a failed write). Safe: a lost connection only sets the
        requests' cancel events and ends their deferred answers without sending anything (`Session.connection_lost`),
        so nothing comes back to this stream's lock.
        """
        if self.enveloped and self._sink is not None:
            self._sink.connection_lost(ConnectionClosed("the client closed the response stream"))

    def send(self, message: Any, route: Optional[Route] = None) -> None:
        related_request_id = route.related_request_id if route is not None else None
        data = _shared_encoding(message)  # a ValueError here reaches the session, which answers an error instead
        answers = jsonrpc.response_ids(message)
        with self._lock:
            if self.closed:
                raise ConnectionClosed("the HTTP session has ended")
            stream = self._routes.get(related_request_id) if related_request_id is not None else None
        if self.enveloped and answers and stream is not None and "error" in message:
            stream.status = http_status(message["error"]["code"])
        if stream is not None and stream.deliver(data, answers):
            return
        if answers and not self.legacy:
            # Its POST has been answered or abandoned; a response never goes on the standalone stream.
            log.debug("response to %r dropped: its stream has ended", answers)
            return
        if stream is not None and jsonrpc.is_request(message):
            raise TransportError(f"{message['method']}: the stream of request {related_request_id!r} cannot carry "
                                 "it (JSON response mode, the request was answered, or the client left)")
        if not self.standalone.deliver(data, answers):
            if jsonrpc.is_request(message):
                self.standalone.wait_first_listener(FIRST_LISTENER_GRACE)
                if self.standalone.deliver(data, answers):
                    return
                raise ConnectionClosed(f"{message['method']}: the client has no open stream to receive it")
            log.debug("message dropped: the client has no open stream: %.200s", data)

    def open_post(self, request_ids: List[RequestId], responder: Responder, batch: bool) -> Stream:
        """A new stream for a POST carrying ``request_ids``."""
        with self._lock:
            if self.closed:
                raise Reject(404, "Session not found")
            for request_id in request_ids:
                if request_id in self._routes or request_ids.count(request_id) > 1:
                    refusal = jsonrpc.id_in_use(request_id)
                    raise Reject(400, refusal.message, refusal.code, id=request_id)
            stream = Stream(self, str(self._next_stream), request_ids, batch)
            stream.out = Attachment(responder)
            self._next_stream += 1
            for request_id in request_ids:
                self._routes[request_id] = stream
            self._streams[stream.id] = stream
        self.host.track(stream.out, stream)
        return stream

    def finish_post(self, stream: Stream) -> None:
        stream.finish_post()
        with self._lock:
            for request_id in stream.request_ids:
                del self._routes[request_id]
            del self._streams[stream.id]

    def resume(self, last_event_id: str, responder: Responder) -> Optional[Attachment]:
        stream_id, sep, seq = last_event_id.partition(":")
        if not sep or not (seq.isascii() and seq.isdigit()):
            raise Reject(400, f"Invalid Last-Event-ID {last_event_id!r}")
        with self._lock:
            stream = self._streams.get(stream_id)
        if stream is None:  # a POST stream that has ended: replay what it sent after that id, if kept
            self.send_replay(responder, stream_id, int(seq))
            return None
        return stream.resume(responder, int(seq))

    def close(self) -> None:
        """End every stream and forget the session's events; the sink then gets ``connection_lost``."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
            streams = list(self._streams.values())
        for stream in streams:
            stream.end()
        if self.session_id is not None and self.host.event_store is not None:
            self.host.event_store.forget(self.session_id)
        if self._sink is not None:
            self._sink.connection_lost(None)
