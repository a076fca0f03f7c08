"""`ClientSession`: the client end of the lifecycle (the `initialize` handshake and the server's capabilities)."""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

from .._sync import DEFAULT
from ..errors import RemoteProtocolError, VersionMismatch
from ..protocol import jsonrpc, methods
from ..protocol.lifecycle import CLIENT, RECEIVE
from ..protocol.versions import HANDSHAKE, HANDSHAKE_VERSIONS, LATEST_HANDSHAKE_VERSION, is_supported, revision
from ..transports import Transport

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see __init__)
if TYPE_CHECKING:
    from typing import Any, Dict, Optional

    from ..protocol.lifecycle import Lifecycle


from .endpoint import Session


class ClientSession(Session):
    """The client end: sends `initialize`, checks the server's answer, then the server's capabilities.

    Until the handshake is done it sends no request but initialize and ping (`protocol/lifecycle.py`).
    """

    peer_is_server = True
    role = CLIENT

    def __init__(self, transport: Transport, **kwargs: Any) -> None:
        super().__init__(transport, **kwargs)
        self.server_info: Dict[str, Any] = {}
        self.instructions: Optional[str] = None
        self.initialize_result: Dict[str, Any] = {}

    @property
    def lifecycle(self) -> Lifecycle:
        """Where the session is in the MCP lifecycle (``lifecycle.state``). For reading: only the session moves it."""
        assert self._lifecycle is not None
        return self._lifecycle

    def initialize(self, client_info: Dict[str, Any], capabilities: Dict[str, Any], *,
                   protocol_version: str = LATEST_HANDSHAKE_VERSION, timeout: Any = DEFAULT) -> Dict[str, Any]:
        """Run the handshake and return the server's `InitializeResult`.

        Raises:
            LocalProtocolError: the session is already initialized, or its handshake is under way.
            VersionMismatch: the server answered with a revision we do not speak (the session is closed).
            RemoteError: the server refused to initialize.
        """
        # A refusal, or a send that fails, leaves the lifecycle where it was.
        pending = self.send_request(methods.INITIALIZE, {"protocolVersion": protocol_version,
                                                         "capabilities": capabilities, "clientInfo": client_info})
        try:
            result = pending.result(timeout)
        except BaseException:
            # Refused, timed out or cut off: nothing was negotiated, so initialize may be tried again.
            self._advance((RECEIVE, jsonrpc.ERROR, methods.INITIALIZE))
            raise
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
        # Only now, with the revision and the capabilities in place for the checks of other threads' requests.
        self._advance((RECEIVE, jsonrpc.RESPONSE, methods.INITIALIZE))
        self.notify(methods.INITIALIZED)
        return result
