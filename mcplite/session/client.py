"""`ClientSession`: the client end of the lifecycle (the `initialize` handshake and the server's capabilities).
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

from .._sync import DEFAULT
from ..errors import (
    LocalProtocolError,
    RemoteProtocolError,
    VersionMismatch,
)
from ..protocol import methods
from ..protocol.versions import (
    HANDSHAKE,
    HANDSHAKE_VERSIONS,
    LATEST_HANDSHAKE_VERSION,
    is_supported,
    revision,
)
from ..transports import Transport

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see __init__)
if TYPE_CHECKING:
    from typing import Any, Dict, Optional



from .endpoint import Session


class ClientSession(Session):
    """The client end: sends `initialize`, checks the server's answer, then the server's capabilities."""

    peer_is_server = True

    def __init__(self, transport: Transport, **kwargs: Any) -> None:
        super().__init__(transport, **kwargs)
        self.server_info: Dict[str, Any] = {}
        self.instructions: Optional[str] = None
        self.initialize_result: Dict[str, Any] = {}

    def initialize(self, client_info: Dict[str, Any], capabilities: Dict[str, Any], *,
                   protocol_version: str = LATEST_HANDSHAKE_VERSION, timeout: Any = DEFAULT) -> Dict[str, Any]:
        """Run the handshake and return the server's `InitializeResult`.

        Raises:
            VersionMismatch: the server answered with a revision we do not speak (the session is closed).
            RemoteError: the server refused to initialize.
        """
        if self.revision is not None:
            raise LocalProtocolError("the session is already initialized")
        result = self.request(methods.INITIALIZE, {"protocolVersion": protocol_version, "capabilities": capabilities,
                                             "clientInfo": client_info}, timeout=timeout)
        version = result.get("protocolVersion")
        if not is_supported(version, HANDSHAKE):
            self.close()
            raise VersionMismatch(f"the server answered with protocol version {version!r}; this client speaks "
                                  f"{', '.join(HANDSHAKE_VERSIONS)}", requested=protocol_version,
                                  offered=version if isinstance(version, str) else None)
        if not isinstance(result.get("capabilities"), dict):
            self.close()
            raise RemoteProtocolError("initialize result has no capabilities object")
        self.initialize_result = result
        self.peer_capabilities = result["capabilities"]
        self.server_info = result.get("serverInfo") or {}
        self.instructions = result.get("instructions")
        self.revision = revision(version)  # type: ignore[arg-type]
        self.notify(methods.INITIALIZED)
        return result

    def _check_outgoing_request(self, method: str) -> None:
        if self.revision is None and method not in (methods.INITIALIZE, methods.PING):
            raise LocalProtocolError(f"{method}: the session is not initialized")
        super()._check_outgoing_request(method)
