"""`ServerSession`: the server end of the lifecycle (answers `initialize`, refuses requests before it).
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

from .._sync import LazyEvent
from ..errors import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    LocalProtocolError,
    RPCError,
)
from ..protocol import jsonrpc, methods
from ..protocol.versions import (
    HANDSHAKE_VERSIONS,
    negotiate,
    revision,
)
from ..transports import Transport

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see __init__)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Optional, Tuple

    from ..protocol.jsonrpc import Message, RequestId
    from ..transports import RequestInfo


from .endpoint import RequestContext, Session, _Batch


class ServerSession(Session):
    """The server end: answers `initialize` and refuses other requests until it has.

    Args:
        initialize_result: builds our `InitializeResult` (minus ``protocolVersion``) for a client's
            initialize params; called on the reader thread, so it must not block.
        supported_versions: the revisions this server accepts, newest first.
    """

    def __init__(self, transport: Transport, *,
                 initialize_result: Callable[[Dict[str, Any]], Dict[str, Any]],
                 supported_versions: Optional[Tuple[str, ...]] = None, **kwargs: Any) -> None:
        super().__init__(transport, **kwargs)
        self._initialize_result = initialize_result
        self._supported_versions = supported_versions or HANDSHAKE_VERSIONS
        self.client_info: Dict[str, Any] = {}
        #: True once the client has sent `notifications/initialized`.
        self.initialized = LazyEvent()

    def assume_initialized(self, version: str, client_capabilities: Optional[Dict[str, Any]] = None) -> None:
        """Start already past the handshake (stateless HTTP: every request stands alone)."""
        self.revision = revision(version)
        self.peer_capabilities = client_capabilities or {}
        self.initialized.set()

    def _check_incoming_request(self, method: str) -> Optional[RPCError]:
        if method == methods.INITIALIZE:
            if self.revision is not None:
                return RPCError(INVALID_REQUEST, "Invalid Request: the session is already initialized")
            return None
        if self.revision is None and method != methods.PING:
            return RPCError(INVALID_REQUEST, f"Invalid Request: {method} before initialize")
        return None

    def _accept_request(self, msg: Message, batch: Optional[_Batch], inline: bool,
                        request_info: Optional[RequestInfo] = None) -> None:
        if msg["method"] == methods.INITIALIZE and batch is not None:
            self._respond_error(msg["id"], INVALID_REQUEST, "Invalid Request: initialize cannot be batched", batch)
            return
        if msg["method"] == methods.INITIALIZE and self.revision is None:
            # Answered here on the reader thread, so no request can overtake the handshake.
            self._initialize(msg)
            return
        super()._accept_request(msg, batch, inline, request_info)

    def _respond_error(self, id: RequestId, code: int, message: str, batch: Optional[_Batch],
                       data: Any = None) -> None:
        ctx = RequestContext(self, id, "", {})
        ctx.batch = batch
        self._respond(ctx, jsonrpc.error(id, code, message, data))

    def _initialize(self, msg: Message) -> None:
        params = msg.get("params") or {}
        requested = params.get("protocolVersion")
        if not isinstance(requested, str) or not isinstance(params.get("capabilities", {}), dict):
            self._respond_error(msg["id"], INVALID_PARAMS, "Invalid params: initialize needs protocolVersion "
                                "(a string) and capabilities (an object)", None)
            return
        version = negotiate(requested, self._supported_versions)
        self.client_info = params.get("clientInfo") or {}
        self.peer_capabilities = params.get("capabilities") or {}
        self.revision = revision(version)
        result = {"protocolVersion": version, **self._initialize_result(params)}
        self._respond(RequestContext(self, msg["id"], methods.INITIALIZE, params), jsonrpc.result(msg["id"], result))

    def _notification_received(self, method: str, params: Dict[str, Any]) -> None:
        if method == methods.INITIALIZED:
            self.initialized.set()

    def _check_outgoing_request(self, method: str) -> None:
        # Before `initialized` the spec allows the server only pings (and log notifications).
        if not self.initialized.is_set() and method != methods.PING:
            raise LocalProtocolError(f"{method}: the client has not finished initializing")
        super()._check_outgoing_request(method)
