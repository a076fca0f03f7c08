"""`ServerSession`: the server end of the lifecycle (answers `initialize`, refuses requests before it)."""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

from .._sync import LazyEvent
from ..errors import INVALID_PARAMS
from ..protocol import jsonrpc, methods
from ..protocol.lifecycle import HANDSHAKE_SKIPPED, READY, SEND, SERVER
from ..protocol.versions import HANDSHAKE_VERSIONS, negotiate, revision
from ..transports import Transport

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see __init__)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Optional, Tuple

    from ..protocol.jsonrpc import Message
    from ..protocol.lifecycle import Event, Lifecycle
    from ..transports import RequestInfo


from .endpoint import RequestContext, Session, _Batch


class ServerSession(Session):
    """The server end: answers `initialize` and refuses other requests until it has.

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
        self.client_info: Dict[str, Any] = {}
        #: Set once the lifecycle is READY: the client has sent `notifications/initialized` (or, stateless,
        #: there is no handshake). An event as well as a state, so that a caller can wait for it.
        self.initialized = LazyEvent()

    @property
    def lifecycle(self) -> Lifecycle:
        """Where the session is in the MCP lifecycle (``lifecycle.state``). For reading: only the session moves it."""
        assert self._lifecycle is not None
        return self._lifecycle

    def assume_initialized(self, version: str, client_capabilities: Optional[Dict[str, Any]] = None) -> None:
        """Start already past the handshake (stateless HTTP: every request stands alone)."""
        self.revision = revision(version)
        self.peer_capabilities = client_capabilities or {}
        self._advance(HANDSHAKE_SKIPPED)

    def _advance(self, event: Event) -> Optional[str]:
        state = super()._advance(event)
        if state == READY:
            self.initialized.set()
        return state

    def _accept_request(self, msg: Message, batch: Optional[_Batch], inline: bool,
                        request_info: Optional[RequestInfo] = None) -> None:
        if (msg["method"] == methods.INITIALIZE and self.lifecycle.awaiting_initialize
                and self.lifecycle.check_incoming(jsonrpc.REQUEST, methods.INITIALIZE, batched=batch is not None)
                is None):
            # The handshake, answered here on the reader thread so that no request can overtake it. The
            # lifecycle's refusals (a batched or second initialize) are answered like any other refusal.
            self._initialize(msg)
            return
        super()._accept_request(msg, batch, inline, request_info)

    def _initialize(self, msg: Message) -> None:
        params = msg.get("params") or {}
        ctx = RequestContext(self, msg["id"], methods.INITIALIZE, params)
        requested = params.get("protocolVersion")
        if not isinstance(requested, str) or not isinstance(params.get("capabilities", {}), dict):
            self._advance((SEND, jsonrpc.ERROR, methods.INITIALIZE))  # still waiting for a good one
            self._respond(ctx, jsonrpc.error(msg["id"], INVALID_PARAMS, "Invalid params: initialize needs "
                                             "protocolVersion (a string) and capabilities (an object)"))
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
