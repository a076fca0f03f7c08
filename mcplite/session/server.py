"""`ServerSession`: the server end of the lifecycle, in both protocol eras.

A connection speaks one era, and its lifecycle (`protocol/lifecycle.py`) says which, and what each era
refuses (MODERN.md, "The server side on stdio and in-memory"). It starts where both eras begin: ``initialize``
moves it on in the handshake era, and the first enveloped request that the `_meta` ladder accepts moves it to
2026-07-28's, where every request then runs the ladder and goes to its handler with its own revision.
``server/discover`` decides nothing: a client's probe that was merely slow may be followed by ``initialize``
(2026-07-28 transports/stdio.mdx). Over HTTP every envelope-era request gets a throwaway session of its own, so the
era of an HTTP session is only ever decided by its first request.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

from .._sync import LazyEvent
from ..errors import INVALID_PARAMS, UNSUPPORTED_PROTOCOL_VERSION, LocalProtocolError, RPCError
from ..protocol import envelope, jsonrpc, methods
from ..protocol.json_text import copied
from ..protocol.lifecycle import CLOSED, ENVELOPE_EXPECTED, ENVELOPED, READY, RECEIVE, SEND, SERVER, skipped_to
from ..protocol.versions import ENVELOPE, HANDSHAKE, HANDSHAKE_VERSIONS, negotiate, revision
from ..transports import Transport

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see __init__)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Optional, Tuple

    from ..protocol.jsonrpc import Message
    from ..protocol.lifecycle import Event, Lifecycle
    from ..transports import RequestInfo


from .endpoint import RequestContext, Session, _Batch


class ServerSession(Session):
    """The server end: answers `initialize` (the handshake era) or runs the `_meta` ladder (2026-07-28).

    Which requests are refused, and with which error, is the lifecycle's table (`protocol/lifecycle.py`).

    Args:
        initialize_result: builds our `InitializeResult` (minus ``protocolVersion``) for a client's
            initialize params; called on the reader thread, so it must not block.
        supported_versions: the revisions this server accepts, newest first.
    """

    role = SERVER

    def __init__(self, transport: Transport, *,
                 initialize_result: Callable[[Dict[str, Any]], Dict[str, Any]],
                 supported_versions: Optional[Tuple[str, ...]] = None, **kwargs: Any) -> None:
        super().__init__(transport, **kwargs)
        self._initialize_result = initialize_result
        self._supported_versions = supported_versions or HANDSHAKE_VERSIONS
        self._envelope_versions = tuple(v for v in self._supported_versions if revision(v).era == ENVELOPE)
        #: The last envelope the ladder accepted on this stream connection, once it is pinned to the envelope era, as
        #: (its ``_meta``, the `Envelope`, its `Revision`), the session's own copies: a client stamps the same
        #: ``_meta`` on every request, and one dict comparison (in C) is much cheaper than the ladder. Never used
        #: for a request that came with HTTP headers (their rungs must run). Reader thread only.
        self._last_envelope: Optional[Tuple[Dict[str, Any], envelope.Envelope, Any]] = None
        self._handshake_versions = tuple(v for v in self._supported_versions if revision(v).era == HANDSHAKE)
        self.client_info: Dict[str, Any] = {}
        #: True for a session that lives for one stateless HTTP request (`assume_initialized`): it cannot send
        #: the client a request, since no stream stays open to carry it and no session to answer on.
        self.stateless = False
        #: Set once the lifecycle is READY: the client has sent `notifications/initialized` (or, stateless,
        #: there is no handshake). An event as well as a state, so that a caller can wait for it.
        self.initialized = LazyEvent()

    @property
    def lifecycle(self) -> Lifecycle:
        """Where the session is in the MCP lifecycle (``lifecycle.state``). For reading: only the session moves it."""
        assert self._lifecycle is not None
        return self._lifecycle

    def assume_initialized(self, version: str, client_capabilities: Optional[Dict[str, Any]] = None) -> None:
        """Start already past the handshake (stateless HTTP: every request stands alone), in ``version``'s era."""
        self.revision = revision(version)
        self.peer_capabilities = client_capabilities or {}
        self.stateless = True
        self._advance(skipped_to(self.revision.era))

    def _advance(self, event: Event) -> Optional[str]:
        state = super()._advance(event)
        if state == READY:
            self.initialized.set()
        return state

    def _accept_request(self, msg: Message, batch: Optional[_Batch], inline: bool,
                        request_info: Optional[RequestInfo] = None) -> None:
        if envelope.classify(msg) == ENVELOPE:
            self._accept_enveloped(msg, batch, inline, request_info)
        elif msg["method"] == methods.INITIALIZE:
            self._initialize(msg, batch)
        else:
            super()._accept_request(msg, batch, inline, request_info)

    def _accept_enveloped(self, msg: Message, batch: Optional[_Batch], inline: bool,
                          request_info: Optional[RequestInfo]) -> None:
        """A request with a 2026-07-28 envelope: the lifecycle's verdict, the `_meta` ladder, then its handler
        with the request's own revision."""
        params = msg["params"]  # an object with a _meta object: what made `envelope.classify` say ENVELOPE
        ctx = RequestContext(self, msg["id"], msg["method"], params)
        last = self._last_envelope
        if last is not None and request_info is None and batch is None and params["_meta"] == last[0] \
                and ctx.method not in envelope.REMOVED_METHODS:
            ctx.envelope, ctx.revision = last[1], last[2]  # the same _meta as last time: the same verdict
            self._admit(ctx, inline)
            return
        ctx.batch, ctx.request_info = batch, request_info
        life = self.lifecycle
        refusal = life.check_incoming(ENVELOPED, ctx.method, batched=batch is not None)
        read = None
        if refusal is None:
            try:
                read = envelope.read_envelope(
                    # -32022 lists what server/discover lists (the envelope-era versions), or, from a server that
                    # speaks only the handshake era, those versions, so that a probing client falls back at once.
                    ctx.method, params, supported_envelope=self._envelope_versions,
                    supported_all=self._envelope_versions or self._supported_versions,
                    headers=request_info.headers if request_info is not None else None)
            except RPCError as exc:
                refusal = exc
        if read is None:
            self._admit(ctx, inline, refusal)
            return
        ctx.envelope, ctx.revision = read, revision(read.version)
        accepted = (RECEIVE, ENVELOPED, ctx.method)
        if life.moved_by(accepted):  # the request that decides the era
            self.revision = ctx.revision  # what notifications not tied to a request are routed by
            self._advance(accepted)
        if request_info is None and life.state == READY:  # (2026-07-28's READY: the handshake's refused it)
            # Copies, so that a handler that changes its request's _meta changes no later request's verdict.
            self._last_envelope = (copied(params["_meta"]), envelope.Envelope(
                read.version, copied(read.client_capabilities), client_info=copied(read.client_info),
                log_level=read.log_level, progress_token=read.progress_token), ctx.revision)
        self._admit(ctx, inline)

    def expect_envelope(self) -> None:
        """Speak 2026-07-28 only: the transport knows (an HTTP request sent at that revision), so a request
        without an envelope is refused for its missing ``_meta`` rather than for a missing handshake."""
        self._advance(ENVELOPE_EXPECTED)

    def _check_outgoing_request(self, method: str) -> None:
        if self.stateless:
            raise LocalProtocolError(stateless_refusal(method, self.revision.version if self.revision else "?"))
        super()._check_outgoing_request(method)

    # ---- the handshake era --------------------------------------------------------------------------------
    def _initialize(self, msg: Message, batch: Optional[_Batch]) -> None:
        """The handshake, answered here on the reader thread so that no request can overtake it; or the
        lifecycle's refusal (a batched or second initialize, one on a 2026-07-28 connection)."""
        params = msg.get("params") or {}
        ctx = RequestContext(self, msg["id"], methods.INITIALIZE, params)
        ctx.batch = batch
        refusal = self.lifecycle.check_incoming(jsonrpc.REQUEST, methods.INITIALIZE, batched=batch is not None)
        if refusal is not None or self.lifecycle.state == CLOSED:  # (once closed, `_admit` drops it)
            if refusal is not None and refusal.code == UNSUPPORTED_PROTOCOL_VERSION:
                refusal.data = self._versions_spoken(params)
            self._admit(ctx, False, refusal)
            return
        requested = params.get("protocolVersion")
        if not isinstance(requested, str) or not isinstance(params.get("capabilities", {}), dict):
            self._advance((SEND, jsonrpc.ERROR, methods.INITIALIZE))  # still waiting for a good one
            self._respond(ctx, jsonrpc.error(msg["id"], INVALID_PARAMS, "Invalid params: initialize needs "
                                             "protocolVersion (a string) and capabilities (an object)"))
            return
        if not self._handshake_versions:  # a server that speaks 2026-07-28 only (versioning.mdx)
            self._advance((SEND, jsonrpc.ERROR, methods.INITIALIZE))
            self._respond(ctx, jsonrpc.error(msg["id"], UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol "
                                             "version: this server has no initialize handshake",
                                             self._versions_spoken(params)))
            return
        version = negotiate(requested, self._supported_versions)
        self.client_info = params.get("clientInfo") or {}
        self.peer_capabilities = params.get("capabilities") or {}
        self.revision = revision(version)
        result = {"protocolVersion": version, **self._initialize_result(params)}
        # Moved before the result goes out: over HTTP the client's next request may arrive on another thread
        # as soon as it has read it, and must find the session NEGOTIATED.
        self._advance((SEND, jsonrpc.RESPONSE, methods.INITIALIZE))
        self._respond(ctx, jsonrpc.result(msg["id"], result))

    def _versions_spoken(self, params: Any) -> Dict[str, Any]:
        """The data of a -32022 answer to initialize: the versions we speak, and the one the client asked for."""
        requested = params.get("protocolVersion") if isinstance(params, dict) else None
        return {"supported": list(self._supported_versions), "requested": requested}


def stateless_refusal(method: str, version: str) -> str:
    """Why a stateless server cannot ask a client of a handshake revision anything, and what works instead."""
    return (f"{method}: a stateless HTTP server cannot send requests to the client (this request is at "
            f"{version}, where the server asks through a request of its own, and no session or stream stays "
            "open for it): serve with sessions (stateless=False), or have the client speak 2026-07-28, where "
            "ctx.elicit, ctx.sample and ctx.list_roots work statelessly through input-required rounds")
