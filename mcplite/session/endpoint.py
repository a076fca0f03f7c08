"""`Session`: one JSON-RPC endpoint over one `Transport`, and the only owner of message threads."""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import threading
from collections import deque

from .._log import log, new_error_id
from .._sync import DEFAULT, DaemonPool, LazyEvent
from ..errors import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    CapabilityError,
    ConnectionClosed,
    MCPError,
    RemoteError,
    RPCError,
    SessionExpired,
)
from ..protocol import http_rules, jsonrpc, lifecycle, methods
from ..protocol.capabilities import missing_capability
from ..protocol.jsonrpc import InvalidMessage
from ..protocol.versions import Revision
from ..transports import MessageSink, Transport
from .pending import DEFAULT_TIMEOUT, PendingRequest

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see __init__)
if TYPE_CHECKING:
    from typing import Any, Callable, Deque, Dict, List, Mapping, Optional, Set, Tuple, Union

    from ..protocol.envelope import Envelope
    from ..protocol.jsonrpc import Message, RequestId
    from ..protocol.lifecycle import Event, Lifecycle
    from ..transports import RequestInfo
    from .pending import ProgressCallback

    #: A request's result, or `Deferred` to answer it later.
    RequestHandler = Callable[["RequestContext"], Union[Dict[str, Any], "Deferred"]]
    NotificationHandler = Callable[[str, Dict[str, Any]], None]


#: How many invalid messages from a peer are each logged at WARNING, and then how seldom (see
#: `Session.receive_invalid`); every one is logged at DEBUG.
_INVALID_LOGGED = 20
#: Per thread: the `Session.receive` running on it was told not to wait for a request its handler defers.
_receiving = threading.local()
_INVALID_LOG_EVERY = 1000


class RequestContext:
    """One incoming request while it is being handled: what the handler may know and do about it."""

    __slots__ = ("session", "id", "method", "params", "cancelled", "batch", "request_info", "revision", "envelope",
                 "answered")

    def __init__(self, session: "Session", id: RequestId, method: str, params: Dict[str, Any]) -> None:
        self.session = session
        self.id = id
        self.method = method
        self.params = params
        #: Set when the peer cancels the request or the connection dies; handlers should check it.
        self.cancelled = LazyEvent()
        self.batch: Optional["_Batch"] = None
        #: What the transport knows about this request (HTTP: headers, auth claims); None on streams.
        self.request_info: Optional[RequestInfo] = None
        #: The revision this request speaks: its own on 2026-07-28 (from ``_meta``), else the session's as it
        #: was when the request arrived (None before a handshake has negotiated one).
        self.revision: Optional[Revision] = session.revision
        #: What the request's ``_meta`` envelope said (2026-07-28), once the ladder accepted it; None for a
        #: handshake-era request.
        self.envelope: Optional[Envelope] = None
        #: Set just before its answer is written. The request stays in flight until the write is done, so
        #: that `Session.input_ended` still waits for it; its id is free again from here (the peer may reuse
        #: an id as soon as it has the answer).
        self.answered = False

    @property
    def meta(self) -> Dict[str, Any]:
        """The request's ``_meta`` (its own: no other message shares it)."""
        meta = self.params.get("_meta")
        return meta if isinstance(meta, dict) else {}

    @property
    def progress_token(self) -> Any:
        """The token the requester asked progress to be reported under, or None."""
        return self.meta.get("progressToken")


class _Batch:
    """Collects the answers to one incoming JSON-RPC batch (2025-03-26) and sends them as one array."""

    def __init__(self, session: "Session") -> None:
        self._session = session
        self._lock = threading.Lock()  # guards _responses and _open
        self._responses: List[Message] = []
        self._open = 1  # the batch itself until sealed, plus one per request being handled

    def expect(self) -> None:
        with self._lock:
            self._open += 1

    def add(self, response: Optional[Message]) -> None:
        with self._lock:
            if response is not None:
                self._responses.append(response)
            self._open -= 1
            finished = self._open == 0
        if finished and self._responses:
            try:
                self._session._send(self._responses)
            except MCPError as exc:  # the connection is gone: nobody is waiting for these answers
                log.debug("%s: the answers to a batch were dropped: %s", self._session._name, exc)

    def seal(self) -> None:
        self.add(None)


class Deferred:
    """What a request handler returns to answer later: a `subscriptions/listen` stream (2026-07-28).

    The request stays in flight (its id taken, cancellable) with no thread waiting for it: the pool worker that
    ran the handler is free at once, so a stdio client with many open listens cannot exhaust the pool. It ends
    in one of three ways, and `on_end` is called once whichever it is (the owner forgets the request there):

    - the peer cancels it (``notifications/cancelled``), or the connection is lost: no answer is sent;
    - we end the session (`Session.close`), or the peer's input ends (`Session.input_ended`): the session
      answers it with `final` (when given: a graceful end), then calls `on_end`;
    - nothing else: a deferred request has no timeout.

    A transport that gives each request a thread of its own and ends the request's response when `receive`
    returns (``inline``, HTTP) has that thread wait until the request ends: the response is the stream.

    Args:
        final: the result sent when the session ends the request itself (shaped as any result).
        on_end: called (on whichever thread ended it) once the request has ended; must not block.
        start: called once the session holds the request, before anything else can end it: what the peer is
            first told (a listen's acknowledgement) goes out there, so that a `Session.close` right after the
            peer has heard it finds the request, and answers it with `final`. When it raises, the request ends
            with no answer (`on_end` still runs).
    """

    __slots__ = ("final", "on_end", "start", "ended")

    def __init__(self, final: Optional[Dict[str, Any]] = None, on_end: Optional[Callable[[], None]] = None,
                 start: Optional[Callable[[], None]] = None) -> None:
        self.final = final
        self.on_end = on_end
        self.start = start
        #: Set once the request has ended (after `on_end`).
        self.ended = LazyEvent()


class Session(MessageSink):
    """A JSON-RPC endpoint with MCP's utilities, over one transport.

    Args:
        transport: the connection; `start()` begins reading from it.
        handle_request: runs on the handler pool for every request from the peer that the session does
            not answer itself; returns the result dict (or a `Deferred`, to answer later) or raises `RPCError`.
        answer_request: in place of ``handle_request``, the whole answer message to such a request (or a
            `Deferred`): a server shapes each result for its request's revision on its way back up.
        handle_notification: runs on the dispatcher thread, in arrival order, for every notification
            that the session does not consume itself.
        take_request: runs on the reader thread for a request about to go to the handler pool; returns True
            when it has taken the request, to answer it with `answer_later` (it must not block), False to
            leave it to the pool. A gateway passes a call on from here.
        max_workers: size of the handler pool (concurrent requests from the peer).
        default_timeout: seconds a request waits for its answer when the caller gives no timeout.
    """

    #: The peer is a server (True for ClientSession); decides which capability table applies.
    peer_is_server = False
    #: Our end of the MCP lifecycle (`lifecycle.CLIENT` or `lifecycle.SERVER`); None for a bare JSON-RPC
    #: endpoint, which has no lifecycle: it never negotiates, and sends and takes anything.
    role: Optional[str] = None

    def __init__(self, transport: Transport, *, handle_request: Optional[RequestHandler] = None,
                 handle_notification: Optional[NotificationHandler] = None, max_workers: int = 16,
                 default_timeout: float = DEFAULT_TIMEOUT, name: str = "mcplite",
                 answer_request: Optional[Callable[[RequestContext], Union[Message, Deferred]]] = None,
                 take_request: Optional[Callable[[RequestContext], bool]] = None) -> None:
        self._transport = transport
        self._take_request = take_request
        self._handle_request = handle_request or _method_not_found
        self._answer = answer_request or self._answer_with_result
        self._handle_notification = handle_notification or _ignore_notification
        self.default_timeout = default_timeout
        self._name = name
        self._max_workers = max_workers
        #: The negotiated revision; None until the handshake is done.
        self.revision: Optional[Revision] = None
        #: What the peer declared at initialize.
        self.peer_capabilities: Dict[str, Any] = {}
        # Where we are in the handshake: the session asks it what may be sent and taken, and tells it what
        # happened (protocol/lifecycle.py). Moved only under _lock; read from any thread.
        self._lifecycle: Optional[Lifecycle] = lifecycle.Lifecycle(self.role) if self.role is not None else None
        # Guards _pending, _in_flight, _deferred, _next_id, _closed, _owed, the moves of _lifecycle and the
        # lazy creation of _pool. Never held while calling the transport or user code.
        self._lock = threading.Lock()
        self._pending: Dict[RequestId, PendingRequest] = {}
        self._in_flight: Dict[RequestId, RequestContext] = {}
        # The requests of _in_flight whose handler returned a `Deferred`: answered later, or never.
        self._deferred: Dict[RequestId, Tuple[RequestContext, Deferred]] = {}
        self._next_id = 0
        self._closed = False
        #: Invalid messages received so far: each is logged until `_INVALID_LOGGED`, then one in
        #: `_INVALID_LOG_EVERY` (a peer that sends junk must not fill the log). Unguarded: over HTTP two
        #: threads may count at once, and only how much is logged depends on it.
        self._invalid_count = 0
        # None until input_ended (the peer sends nothing more but still reads); from then on, the requests
        # whose answers are still owed. _drained is set when none are left, or when the connection ends.
        self._owed: Optional[Set[RequestId]] = None
        self._drained = LazyEvent()
        self._pool: Optional[DaemonPool] = None  # runs request handlers; made by the first request
        # The dispatcher: callbacks run one at a time, in the order `dispatch` queued them, on a thread that
        # exists only while there is something to run (see `dispatch` for the hand-off). An idle session, such
        # as each of a thousand HTTP sessions nobody is using, costs no thread.
        # Guards _callbacks and _dispatching; held only to queue, take or decide, never while a callback runs.
        self._dispatch_lock = threading.Lock()
        self._callbacks: Deque[Tuple[Callable[..., None], Tuple[Any, ...]]] = deque()
        self._dispatching = False  # a dispatcher thread is running, and will run everything in _callbacks
        #: Set when the connection has ended.
        self.closed = LazyEvent()
        #: Why the connection ended (None for an orderly close).
        self.close_reason: Optional[BaseException] = None
        self._close_hooks: List[Callable[[], None]] = []

    # ---- lifetime ---------------------------------------------------------------------------------------
    def start(self) -> None:
        self._transport.start(self)

    def close(self) -> None:
        """Close the transport; every pending request fails with `ConnectionClosed`.

        A deferred request (`Deferred`) gets its final answer first: we are ending it, gracefully.
        """
        with self._lock:
            deferred = self._take_deferred()
        self._end_deferred(deferred, answer=True)
        self._transport.close()
        # Transports report connection_lost themselves; this covers one whose reader never started.
        self.connection_lost(None)

    def on_close(self, hook: Callable[[], None]) -> None:
        """Call ``hook`` (on the reader thread) once the connection has ended."""
        self._close_hooks.append(hook)

    @property
    def is_closed(self) -> bool:
        return self._closed

    @property
    def lifecycle(self) -> Optional[Lifecycle]:
        """Where the session is in the MCP lifecycle (``lifecycle.state``); None for a bare `Session`.

        For reading: only the session moves it.
        """
        return self._lifecycle

    def connection_lost(self, exc: Optional[BaseException]) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._lifecycle is not None:
                self._lifecycle.close()
            pending = list(self._pending.values())
            self._pending.clear()
            in_flight = list(self._in_flight.values())
            deferred = self._take_deferred()
        self.close_reason = exc
        self._fail_pending(pending, exc)
        for ctx in in_flight:
            ctx.cancelled.set()
        self._end_deferred(deferred, answer=False)  # nobody can read an answer now
        if self._pool is not None:
            self._pool.shutdown()
        self._drained.set()  # an input_ended still waiting for answers stops: nobody can send them
        self.closed.set()
        for hook in self._close_hooks:
            try:
                hook()
            except Exception:  # a hook must not stop the others
                log.exception("close hook failed")

    def input_ended(self, exc: Optional[BaseException] = None) -> None:
        """The peer will send nothing more but may still read (a stdio server's stdin ended).

        Our own pending requests fail at once (their answers can no longer arrive), and so does any request
        a handler makes from now on. The requests already read are not cancelled: their handlers run to the
        end and their answers are sent, so ``printf '...' | server`` gets every answer; only those the peer
        cancelled earlier are not waited for, and deferred ones (`Deferred`) get their final answer at once.
        Then the session closes. Blocks the calling thread (the transport's reader, which has nothing left to
        read) until then.
        """
        with self._lock:
            if self._closed or self._owed is not None:
                return
            pending = list(self._pending.values())
            self._pending.clear()
            deferred = self._take_deferred()  # they would never end: answered now, and not waited for
            self._owed = {ctx.id for ctx in self._in_flight.values() if not ctx.cancelled.is_set()}
            if not self._owed:
                self._drained.set()
        self._fail_pending(pending, exc)
        self._end_deferred(deferred, answer=True)
        self._drained.wait()  # ends early if the connection is closed meanwhile (connection_lost sets it)
        self.connection_lost(exc)

    def _fail_pending(self, pending: List[PendingRequest], exc: Optional[BaseException]) -> None:
        message = f"connection closed: {exc}" if exc else "connection closed"
        for request in pending:
            error: ConnectionClosed
            if isinstance(exc, SessionExpired):  # keep the type: the caller must start a new session
                error = SessionExpired(f"{request.method}: {exc}", status=exc.status, body=exc.body)
            else:
                error = ConnectionClosed(f"{request.method}: {message}")
            self._settle(request, None, error)

    def _settle(self, pending: PendingRequest, value: Optional[Dict[str, Any]], error: Optional[BaseException]) -> None:
        """Settle a request taken out of _pending; one with a progress callback through the dispatcher, so that
        its caller sees every progress report queued before the answer."""
        if pending.on_progress is not None:
            self.dispatch(pending._settle, value, error)
        else:
            pending._settle(value, error)

    # ---- sending ----------------------------------------------------------------------------------------
    def _send(self, message: Any, related_request_id: Optional[RequestId] = None,
              headers: Optional[Mapping[str, str]] = None) -> None:
        # The transport reads nothing of MCP: what it needs to know about the message is in its route.
        transport = self._transport
        transport.send(message, http_rules.route(message, self.revision, related_request_id, headers)
                       if transport.wants_route else None)

    def send_request(self, method: str, params: Optional[Dict[str, Any]] = None, *,
                     progress: Optional[ProgressCallback] = None,
                     related_request_id: Optional[RequestId] = None,
                     headers: Optional[Mapping[str, str]] = None) -> PendingRequest:
        """Send a request and return at once; the answer is taken with `PendingRequest.result()`.

        ``headers``: HTTP headers for this request alone, on a revision without sessions (2026-07-28: the
        ``Mcp-Param-*`` of a tool call); other transports and revisions ignore them.

        Raises:
            LocalProtocolError: the session is not in a state to send ``method``.
            CapabilityError: the peer did not declare the capability ``method`` needs.
            ConnectionClosed: the connection is gone.
        """
        self._check_outgoing_request(method)  # may move the lifecycle (initialize)
        try:
            with self._lock:
                # Checked again under the lock, whatever the lifecycle said: a request registered after
                # connection_lost has failed the pending ones would wait for ever.
                if self._closed:
                    raise ConnectionClosed(f"{method}: connection closed")
                if self._owed is not None:  # the input has ended: the answer could never arrive
                    raise ConnectionClosed(f"{method}: connection closed: the peer sends nothing more")
                request_id = self._next_id
                self._next_id += 1
                pending = PendingRequest(self, request_id, method, progress)
                # Registered before sending, so a fast answer always finds it.
                self._pending[request_id] = pending
            if progress is not None:
                params = dict(params or {})
                params["_meta"] = {**(params.get("_meta") or {}), "progressToken": request_id}
            try:
                self._send(self._request_message(request_id, method, params), related_request_id, headers)
            except BaseException:
                with self._lock:
                    self._pending.pop(request_id, None)
                raise
        except BaseException:
            # Never sent: for the lifecycle that is a request that failed (an initialize may be tried again).
            self._advance((lifecycle.RECEIVE, jsonrpc.ERROR, method))
            raise
        return pending

    def request(self, method: str, params: Optional[Dict[str, Any]] = None, *, timeout: Any = DEFAULT,
                progress: Optional[ProgressCallback] = None,
                related_request_id: Optional[RequestId] = None) -> Dict[str, Any]:
        """Send a request and block for its result (see `PendingRequest.result` for what it raises)."""
        return self.send_request(method, params, progress=progress,
                                 related_request_id=related_request_id).result(timeout)

    def notify(self, method: str, params: Optional[Dict[str, Any]] = None, *,
               related_request_id: Optional[RequestId] = None) -> None:
        """Send a notification.

        Raises:
            LocalProtocolError: the lifecycle does not allow ``method`` now.
            ConnectionClosed: the connection is gone.
        """
        self._lifecycle_send(jsonrpc.NOTIFICATION, method)
        self._send(jsonrpc.notification(method, params), related_request_id)

    def ping(self, timeout: Any = DEFAULT) -> None:
        self.request(methods.PING, timeout=timeout)

    def fail_request(self, request_id: RequestId, exc: BaseException) -> None:
        """The transport cannot get an answer to ``request_id``: its caller gets ``exc`` (no cancel is sent)."""
        with self._lock:
            pending = self._pending.pop(request_id, None)
        if pending is not None:
            self._settle(pending, None, exc)

    def _abandon(self, pending: PendingRequest, error: BaseException, reason: Optional[str]) -> bool:
        """Settle ``pending`` with ``error`` and tell the peer to stop, unless its answer came first."""
        with self._lock:
            if self._pending.pop(pending.id, None) is None:
                return False
        pending._settle(None, error)
        # Stop awaiting the answer (HTTP: stop reading its stream). On 2026-07-28 HTTP that closes the
        # request's connection, which is the cancellation: no notification then.
        told = self._transport.cancel(pending.id)
        if not told and lifecycle.cancellable(pending.method):  # the spec forbids cancelling initialize
            params: Dict[str, Any] = {"requestId": pending.id}
            if reason:
                params["reason"] = reason
            try:
                self._send(jsonrpc.notification(methods.CANCELLED, params))
            except MCPError:
                pass  # the connection is gone: nothing left to cancel
        return True

    # ---- receiving (reader thread) ----------------------------------------------------------------------
    def receive(self, value: Any, *, inline: bool = False, request_info: Optional[RequestInfo] = None,
                wait_deferred: bool = True) -> None:
        """Take one decoded JSON value from the transport.

        ``inline=True`` runs a request's handler in the calling thread instead of the pool: for transports
        that already give each incoming request a thread of its own (HTTP). Such a request that its handler
        defers (`Deferred`) is then waited for before this returns, unless ``wait_deferred=False``: for a
        transport that holds the response open without a thread and learns of its end itself (the stdlib HTTP
        server's parked streams). ``request_info`` is handed to the request's handler (`RequestContext.request_info`).
        """
        if not wait_deferred:
            _receiving.no_wait = True  # read by `_admit`, on this thread (the handler runs inline on it)
        try:
            self._receive(value, inline, request_info)
        except Exception:
            # A fault of ours must not end the transport's reader thread, and the connection with it: log
            # it, answer the request it came with (so its sender does not wait for ever) and read on.
            error_id = new_error_id()
            log.exception("%s: failed to take a message from the peer (error id %s)", self._name, error_id)
            if isinstance(value, dict) and "method" in value and jsonrpc.is_valid_id(value.get("id")):
                try:
                    self._send(jsonrpc.error(value["id"], INTERNAL_ERROR, f"Internal error (error id {error_id})"))
                except Exception:  # (the connection is gone, or this too cannot be written: read on)
                    pass
        finally:
            if not wait_deferred:
                _receiving.no_wait = False

    def _receive(self, value: Any, inline: bool, request_info: Optional[RequestInfo]) -> None:
        if isinstance(value, list):
            self._receive_batch(value)
            return
        try:
            kind = jsonrpc.kind_of(value)
        except InvalidMessage as exc:
            self.receive_invalid(exc)
            return
        if kind is jsonrpc.REQUEST:
            self._accept_request(value, None, inline, request_info)
        elif kind is jsonrpc.NOTIFICATION:
            self._accept_notification(value)
        else:
            self._accept_response(value, kind)

    def receive_invalid(self, exc: InvalidMessage, batch: Optional[_Batch] = None) -> None:
        self._invalid_count += 1
        count = self._invalid_count
        if count <= _INVALID_LOGGED:
            log.warning("%s: invalid message from peer: %s", self._name, exc)
        elif count % _INVALID_LOG_EVERY == 0:
            log.warning("%s: %d invalid messages from peer so far (one in %d is logged); this one: %s",
                        self._name, count, _INVALID_LOG_EVERY, exc)
        else:
            log.debug("%s: invalid message from peer: %s", self._name, exc)
        if not exc.respond:
            if exc.id is not None:  # an answer to one of our requests, broken: that request fails now
                self.fail_request(exc.id, exc)
            return
        if batch is not None:
            batch.add(exc.response())
            return
        try:
            self._send(exc.response())
        except MCPError:
            pass

    def _receive_batch(self, items: List[Any]) -> None:
        # A bare Session never negotiates, so it stays where a new lifecycle starts.
        state = self._lifecycle.state if self._lifecycle is not None else lifecycle.NEW
        refusal = lifecycle.check_incoming_batch(state, self.revision)
        if refusal is not None:
            self.receive_invalid(InvalidMessage(refusal.code, refusal.message))
            return
        if not items:
            self.receive_invalid(InvalidMessage(INVALID_REQUEST, "Invalid Request: empty batch"))
            return
        batch = _Batch(self)
        for item in items:
            try:
                kind = jsonrpc.kind_of(item)
            except InvalidMessage as exc:
                batch.expect()
                self.receive_invalid(exc, batch)
                continue
            if kind is jsonrpc.REQUEST:
                batch.expect()
                self._accept_request(item, batch, False)
            elif kind is jsonrpc.NOTIFICATION:
                self._accept_notification(item)
            else:
                self._accept_response(item, kind)
        batch.seal()

    def _accept_response(self, msg: Message, kind: str) -> None:
        with self._lock:
            pending = self._pending.pop(msg.get("id"), None)  # type: ignore[arg-type]  # a null id: no match
        if pending is None:
            # Late (we timed out or cancelled), or an error about something unparseable we sent.
            log.debug("%s: answer to no pending request: %r", self._name, msg)
            return
        if kind is jsonrpc.RESPONSE:
            value, error = msg["result"], None
        else:
            err = msg["error"]
            value, error = None, RemoteError(err["code"], err["message"], err.get("data"))
        self._settle(pending, value, error)

    def _accept_request(self, msg: Message, batch: Optional[_Batch], inline: bool,
                        request_info: Optional[RequestInfo] = None) -> None:
        params = msg.get("params")
        ctx = RequestContext(self, msg["id"], msg["method"], params if params is not None else {})
        ctx.batch = batch
        ctx.request_info = request_info
        refusal = None
        if self._lifecycle is not None and not self._lifecycle.untouched_by(jsonrpc.REQUEST, ctx.method):
            refusal = self._lifecycle.check_incoming(jsonrpc.REQUEST, ctx.method, batched=batch is not None)
        if refusal is None and ctx.method == methods.PING:
            self._respond(ctx, jsonrpc.result(ctx.id, {}))
            return
        self._admit(ctx, inline, refusal)

    def _admit(self, ctx: RequestContext, inline: bool, refusal: Optional[RPCError] = None) -> None:
        """Answer ``ctx`` with ``refusal``, or register it in flight and run its handler (inline or pooled)."""
        with self._lock:
            if self._closed:
                return
            if refusal is None:
                holder = self._in_flight.get(ctx.id)
                if holder is not None and not holder.answered:
                    refusal = jsonrpc.id_in_use(ctx.id)
            if refusal is None:
                self._in_flight[ctx.id] = ctx
                if not inline and self._pool is None:
                    self._pool = DaemonPool(self._max_workers, f"{self._name}-handler")
        if refusal is not None:
            self._respond(ctx, jsonrpc.error(ctx.id, refusal.code, refusal.message, refusal.data))
        elif inline:
            self._answer_request(ctx, self._answer)
            if self._deferred and not getattr(_receiving, "no_wait", False):  # (deferred on this thread, so seen
                # here without the lock; else nothing to wait for)
                with self._lock:
                    held = self._deferred.get(ctx.id)
                if held is not None:
                    # The transport ends this request's response when we return: it is held open until the
                    # request ends (the peer leaves or cancels, or we close), as a stream the request owns.
                    held[1].ended.wait()
        else:
            if self._take_request is not None:
                try:
                    if self._take_request(ctx):
                        return  # answered later (`answer_later`), by whoever took it
                except Exception as exc:  # a fault of the taker's: the request is answered with it, as a handler's
                    self._answer_request(ctx, _raising(exc))
                    return
            assert self._pool is not None
            self._pool.submit(self._answer_request, ctx, self._answer)

    def answer_later(self, ctx: RequestContext, answer: Callable[[RequestContext], Message]) -> None:
        """Answer a request that ``take_request`` took, on any thread, once: ``answer(ctx)`` is the answer
        message, or raises as a handler would (an `RPCError` is the error answered). Until then the request is
        in flight as if a handler were running: cancellable, owed when the input ends, its id taken."""
        self._answer_request(ctx, answer)

    def _answer_request(self, ctx: RequestContext,
                        answer: Callable[[RequestContext], Union[Message, Deferred]]) -> None:
        """Run ``answer`` (the handler of ``ctx``) and send its answer (none yet if it returned a `Deferred`)."""
        held: Optional[Deferred] = None
        try:
            try:
                response = answer(ctx)
                if isinstance(response, Deferred):
                    held = response
                    self._defer(ctx, held)  # it stays in flight: `_defer` decides
                    return
            except RPCError as exc:
                response = jsonrpc.error(ctx.id, exc.code, exc.message, exc.data)
            except Exception:
                # An unexpected failure: the peer is told an id, never the exception (its text may hold paths,
                # names or secrets); the log line has the id and the traceback. A handler that means to tell the
                # peer why raises RPCError (a tool's exceptions become isError results before this).
                error_id = new_error_id()
                log.exception("%s: handler for %s failed (error id %s)", self._name, ctx.method, error_id)
                response = jsonrpc.error(ctx.id, INTERNAL_ERROR, f"Internal error (error id {error_id})")
            ctx.answered = True
            if ctx.cancelled.is_set():
                # Cancelled by the peer: it has stopped waiting, and the spec says not to answer.
                if ctx.batch is not None:
                    ctx.batch.add(None)
            else:
                self._respond(ctx, response)
        finally:
            # Out of flight only once written: input_ended, reading _in_flight meanwhile, must count it as owed,
            # or it could close the output before this answer is on it.
            with self._lock:
                if held is None and self._in_flight.get(ctx.id) is ctx:  # (not a newer request that reused
                    del self._in_flight[ctx.id]  # the id; a deferred one stays: `_defer` decides)
                if self._owed is not None:  # draining (input_ended): one answer fewer still owed
                    self._owed.discard(ctx.id)
                    if not self._owed:
                        self._drained.set()

    # ---- deferred answers (Deferred) --------------------------------------------------------------------
    def _defer(self, ctx: RequestContext, deferred: Deferred) -> None:
        """Keep ``ctx`` in flight until it ends (see `Deferred`), unless it has ended while its handler ran."""
        with self._lock:
            # Whatever happened while its handler ran (a cancel, the end of the input or of the connection)
            # found no Deferred to end: it is ended here instead.
            live = (ctx.id in self._in_flight and not ctx.cancelled.is_set() and not self._closed
                    and self._owed is None and ctx.batch is None)
            if live:
                self._deferred[ctx.id] = (ctx, deferred)
            else:
                self._in_flight.pop(ctx.id, None)
        if not live:
            self._end_deferred([(ctx, deferred)], answer=not ctx.cancelled.is_set() and not self._closed)
        elif deferred.start is not None:
            try:
                deferred.start()
            except Exception as exc:  # (the connection went meanwhile: nobody to tell)
                log.debug("%s: starting the deferred request %r failed: %s", self._name, ctx.id, exc)
                with self._lock:
                    taken = self._deferred.pop(ctx.id, None)
                    if taken is not None:
                        self._in_flight.pop(ctx.id, None)
                if taken is not None:
                    self._end_deferred([taken], answer=False)

    def _take_deferred(self) -> List[Tuple[RequestContext, Deferred]]:
        """Every deferred request, out of flight. Called with _lock held."""
        taken = list(self._deferred.values())
        self._deferred.clear()
        for ctx, _ in taken:
            self._in_flight.pop(ctx.id, None)
        return taken

    def _end_deferred(self, deferred: List[Tuple[RequestContext, Deferred]], *, answer: bool) -> None:
        """End deferred requests already out of flight: their final answers (if ``answer``), then `on_end`."""
        for ctx, request in deferred:
            try:
                if answer and request.final is not None:
                    self._respond(ctx, jsonrpc.result(ctx.id, request.final))
                elif ctx.batch is not None:
                    ctx.batch.add(None)
                if request.on_end is not None:
                    request.on_end()
            except Exception:  # one owner's failure must not leave the other requests (or their threads) hanging
                log.exception("%s: ending the deferred request %r failed", self._name, ctx.id)
            finally:
                request.ended.set()

    def _request_message(self, request_id: RequestId, method: str, params: Optional[Dict[str, Any]]) -> Message:
        """The request to send (overridden by a 2026-07-28 client, whose requests end with its envelope)."""
        return jsonrpc.request(request_id, method, params)

    def _answer_with_result(self, ctx: RequestContext) -> Union[Message, Deferred]:
        """The answer to a request the session does not answer itself: its handler's result (`handle_request`)."""
        result = self._handle_request(ctx)
        return result if isinstance(result, Deferred) else jsonrpc.result(ctx.id, result)

    def _respond(self, ctx: RequestContext, response: Message) -> None:
        if ctx.batch is not None:
            ctx.batch.add(response)
            return
        try:
            self._send(response, ctx.id)
        except ValueError as exc:  # the handler's result is not JSON (NaN, a set, an object)
            error_id = new_error_id()
            log.error("%s: result of %s cannot be encoded (error id %s): %s", self._name, ctx.method, error_id, exc)
            try:
                self._send(jsonrpc.error(ctx.id, INTERNAL_ERROR,
                                         f"Internal error: the result is not JSON (error id {error_id})"), ctx.id)
            except MCPError:
                pass  # the connection is gone; nobody is waiting
        except MCPError:
            pass  # the connection is gone; nobody is waiting

    def _accept_notification(self, msg: Message) -> None:
        method = msg["method"]
        params = msg.get("params") or {}  # (an object when present: `jsonrpc.kind_of` checked)
        if method == methods.CANCELLED:
            request_id = params.get("requestId")
            if not jsonrpc.is_valid_id(request_id):
                return  # names no request we could have (a list or an object would not even be a key)
            with self._lock:
                ctx = self._in_flight.get(request_id)
                if ctx is None or not lifecycle.cancellable(ctx.method):  # the spec forbids cancelling initialize
                    return
                deferred = self._deferred.pop(request_id, None)
                if deferred is not None:
                    del self._in_flight[request_id]
            ctx.cancelled.set()
            if deferred is not None:  # it ends now, without an answer (2026-07-28 cancellation.mdx)
                self._end_deferred([deferred], answer=False)
            return
        if method == methods.PROGRESS:
            token = params.get("progressToken")
            with self._lock:
                pending = self._pending.get(token) if jsonrpc.is_valid_id(token) else None
            if pending is not None and pending.on_progress is not None:
                self.dispatch(_call_progress, pending.on_progress, params)
                return
        if self._lifecycle is not None and not self._lifecycle.untouched_by(jsonrpc.NOTIFICATION, method):
            self._advance((lifecycle.RECEIVE, jsonrpc.NOTIFICATION, method))  # (initialized)
        self.dispatch(self._handle_notification, method, params)

    # ---- the dispatcher thread --------------------------------------------------------------------------
    # At most one dispatcher thread runs at a time, and only while callbacks are queued. The hand-off between a
    # dispatcher that is about to end and a `dispatch` that queues more is decided under _dispatch_lock:
    #
    # - `dispatch` queues its callback and reads _dispatching in one locked step. If a dispatcher is running
    #   (True), that dispatcher will take the callback: it ends only after finding the queue empty, under the
    #   same lock, so it cannot have decided to end already. Otherwise `dispatch` sets _dispatching and starts
    #   a new dispatcher itself.
    # - the dispatcher takes each callback, and decides to end (clearing _dispatching), in one locked step.
    #
    # So a queued callback always has a dispatcher that will run it (nothing is lost), and a new dispatcher
    # starts only after the previous one has run everything and ended (nothing is reordered: one runs at a time,
    # in queue order). The thread that ends may still be returning when the next starts; it runs nothing more.
    def dispatch(self, callback: Callable[..., None], *args: Any) -> None:
        """Run ``callback(*args)`` on the dispatcher thread, after everything already queued there."""
        with self._dispatch_lock:
            self._callbacks.append((callback, args))
            if self._dispatching:
                return
            self._dispatching = True
        try:
            threading.Thread(target=self._dispatch_loop, name=f"{self._name}-dispatcher", daemon=True).start()
        except BaseException:  # no thread (interpreter shutdown, or none left): the next dispatch tries again
            with self._dispatch_lock:
                self._dispatching = False
            raise

    def _dispatch_loop(self) -> None:
        while True:
            with self._dispatch_lock:
                if not self._callbacks:
                    self._dispatching = False  # decided under the lock: see above
                    return
                callback, args = self._callbacks.popleft()
            try:
                callback(*args)
            except Exception:
                log.exception("%s: notification callback failed", self._name)

    # ---- the lifecycle ----------------------------------------------------------------------------------
    def _lifecycle_send(self, kind: str, method: str) -> None:
        """Raise the lifecycle's refusal of sending ``method`` now; else move it on as if it had been sent."""
        if self._lifecycle is None or self._lifecycle.untouched_by(kind, method):  # ordinary traffic: no lock
            return
        with self._lock:  # checked and moved in one step: two threads cannot both send the one initialize
            refusal = self._lifecycle.send(kind, method)
        if refusal is not None:
            raise refusal

    def _advance(self, event: Event) -> Optional[str]:
        """Tell the lifecycle what happened; returns the state it is in now (None for a bare Session)."""
        if self._lifecycle is None:
            return None
        with self._lock:
            return self._lifecycle.advance(event)

    def _check_outgoing_request(self, method: str) -> None:
        """Raise `LocalProtocolError` (or `ConnectionClosed`) if ``method`` may not be sent now."""
        self._lifecycle_send(jsonrpc.REQUEST, method)
        if self.revision is not None:
            missing = missing_capability(method, self.peer_capabilities, self.revision,
                                         peer_is_server=self.peer_is_server)
            if missing is not None:
                raise CapabilityError(f"{method}: the peer did not declare the {missing!r} capability")


def _call_progress(callback: ProgressCallback, params: Dict[str, Any]) -> None:
    callback(params.get("progress", 0), params.get("total"), params.get("message"))


def _raising(exc: Exception) -> Callable[[RequestContext], Message]:
    """An answer that raises ``exc`` (`Session._answer_request` answers it as a handler's failure)."""
    def answer(ctx: RequestContext) -> Message:
        raise exc
    return answer


def _method_not_found(ctx: RequestContext) -> Dict[str, Any]:
    raise RPCError(METHOD_NOT_FOUND, f"Method not found: {ctx.method}")


def _ignore_notification(method: str, params: Dict[str, Any]) -> None:
    pass
