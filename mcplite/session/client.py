"""`ClientSession`: the client end of the lifecycle, in both protocol eras.

Handshake era (2024-11-05 … 2025-11-25): `initialize` negotiates one revision for the connection, and the
server's capabilities come with its answer. Envelope era (2026-07-28): no handshake. `discover` asks
``server/discover`` (the era probe, which changes nothing), and `adopt` makes the session speak an envelope-era
revision: from then on every request carries the envelope in ``params._meta`` (protocol version, client
capabilities, client info, and the log level once one is set), built once and reused, and over HTTP the
headers that mirror its body (``Mcp-Method``, ``Mcp-Name``). Which era to speak is the `Client`'s decision.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up


from .._once import once
from .._sync import DEFAULT
from ..errors import RemoteProtocolError, VersionMismatch
from ..protocol import jsonrpc, methods
from ..protocol.json_text import copied
from ..protocol.lifecycle import CLIENT, ENVELOPE_ADOPTED, RECEIVE
from ..protocol.versions import (
    ENVELOPE,
    HANDSHAKE,
    HANDSHAKE_VERSIONS,
    LATEST_HANDSHAKE_VERSION,
    is_supported,
    revision,
)
from ..transports import Transport

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see __init__)
if TYPE_CHECKING:
    from typing import Any, Dict, Mapping, Optional

    from ..protocol.jsonrpc import Message, RequestId
    from ..protocol.lifecycle import Lifecycle
    from .pending import PendingRequest, ProgressCallback


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
        #: The ``server/discover`` result the session adopted (2026-07-28), or None (a handshake, or a pin
        #: that has not asked yet).
        self.discover_result: Optional[Dict[str, Any]] = None
        # The envelope stamped on every request once enveloped (see `adopt`), None before. Replaced whole, never
        # mutated: a sender reads it once, without the lock.
        self._envelope: Optional[_Envelope] = None
        self._client_info: Dict[str, Any] = {}
        self._capabilities: Dict[str, Any] = {}
        self._log_level: Optional[str] = None
        self._probing: Any = None  # the revision the probe in flight is routed as (`_send_at`), else None

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

    # ---- the envelope era (2026-07-28) ---------------------------------------------------------------------
    @staticmethod
    def envelope(version: str, client_info: Dict[str, Any], capabilities: Dict[str, Any],
                 log_level: Optional[str] = None) -> Dict[str, Any]:
        """The ``_meta`` a 2026-07-28 request carries: its revision, the client's capabilities and info, and
        the least severe log level it wants (absent: the server logs nothing for it)."""
        meta = {methods.PROTOCOL_VERSION_KEY: version, methods.CLIENT_CAPABILITIES_KEY: capabilities,
                methods.CLIENT_INFO_KEY: client_info}
        if log_level is not None:
            meta[methods.LOG_LEVEL_KEY] = log_level
        return meta

    def discover(self, client_info: Dict[str, Any], capabilities: Dict[str, Any], *, version: str,
                 timeout: Any = DEFAULT) -> Dict[str, Any]:
        """Ask ``server/discover`` at ``version`` (a 2026-07-28 request, whatever the session speaks) and
        return the `DiscoverResult`. Changes nothing: the probe of era detection, and the liveness check of a
        envelope-era session.

        Raises:
            RemoteError: the server answered with an error (``-32022`` carries the versions it speaks).
            RequestTimeout, ConnectionClosed: as any request (a timed-out probe is not cancelled).
        """
        params = {"_meta": self.envelope(version, client_info, capabilities, self._log_level)}
        result = self._send_at(revision(version), methods.SERVER_DISCOVER, params).result(timeout)
        if not isinstance(result, dict) or not isinstance(result.get("capabilities", {}), dict):
            raise RemoteProtocolError(f"server/discover answered {result!r}, not a DiscoverResult")
        return result

    def adopt(self, version: str, discover_result: Optional[Dict[str, Any]], client_info: Dict[str, Any],
              capabilities: Dict[str, Any]) -> None:
        """Speak ``version`` (an envelope-era revision) from now on, without a handshake. ``discover_result``: what
        the probe learnt of the server (None under a pin: then nothing is known of it yet)."""
        if revision(version).era != ENVELOPE:
            raise ValueError(f"{version} is not a revision without a handshake")
        self._client_info, self._capabilities = client_info, capabilities
        self._envelope = _Envelope(self.envelope(version, client_info, capabilities, self._log_level))
        if discover_result is not None:
            self.learn(discover_result)
        self.revision = revision(version)
        self._advance(ENVELOPE_ADOPTED)

    def learn(self, discover_result: Dict[str, Any]) -> None:
        """Take the server's description from a `DiscoverResult` (its info rides in the result's ``_meta``;
        some servers also send a body-level ``serverInfo``)."""
        self.discover_result = discover_result
        self.peer_capabilities = discover_result.get("capabilities") or {}
        meta = discover_result.get("_meta")
        info = meta.get(methods.SERVER_INFO_KEY) if isinstance(meta, dict) else None
        self.server_info = info or discover_result.get("serverInfo") or {}
        self.instructions = discover_result.get("instructions")

    @property
    def enveloped(self) -> bool:
        """True once the session speaks a revision without a handshake (`adopt`)."""
        return self._envelope is not None

    @property
    def log_level(self) -> Optional[str]:
        """The log level stamped on every 2026-07-28 request (None: none, so the server logs nothing)."""
        return self._log_level

    @log_level.setter
    def log_level(self, level: Optional[str]) -> None:
        self._log_level = level
        envelope = self._envelope
        if envelope is not None:
            self._envelope = _Envelope(self.envelope(envelope.meta[methods.PROTOCOL_VERSION_KEY], self._client_info,
                                                     self._capabilities, level))

    def send_request(self, method: str, params: Optional[Dict[str, Any]] = None, *,
                     progress: Optional[ProgressCallback] = None,
                     related_request_id: Optional[RequestId] = None,
                     headers: Optional[Mapping[str, str]] = None) -> PendingRequest:
        envelope = self._envelope
        if envelope is None:
            return super().send_request(method, params, progress=progress, related_request_id=related_request_id,
                                        headers=headers)
        # 2026-07-28: the envelope under the caller's own _meta keys (or, with none, appended as the request is
        # made: `_request_message`), and the headers that mirror the body.
        params = dict(params) if params else {}
        own = params.pop("_meta", None)  # (an empty one too: the envelope takes its place)
        if own or progress is not None:  # (the session adds the progress token to the _meta it finds)
            params["_meta"] = {**envelope.meta, **(own or {})}
        # Mirrored headers are HTTP's alone: a stream transport (stdio, memory) would compute them for nothing.
        return super().send_request(method, params, progress=progress, related_request_id=related_request_id,
                                    headers=_mirrored_headers(method, params, headers) if self._transport.wants_route
                                    else headers)

    def _request_message(self, request_id: RequestId, method: str, params: Optional[Dict[str, Any]]) -> Message:
        envelope = self._envelope
        if envelope is None or params is None or "_meta" in params:  # (the probe, a caller's own _meta)
            return jsonrpc.request(request_id, method, params)
        if envelope.text is None:  # not JSON: its encoding fails as the request is sent
            return jsonrpc.request(request_id, method, {**params, "_meta": envelope.meta})
        return jsonrpc.request_with_members(request_id, method, params, envelope.members, envelope.text)

    def _send_at(self, at: Any, method: str, params: Dict[str, Any]) -> PendingRequest:
        """Send one request routed as revision ``at`` speaks, whatever the session speaks (the probe)."""
        self._probing = at if self.revision is None else None
        try:
            return super().send_request(method, params, headers=_mirrored_headers(method, params, None))
        finally:
            self._probing = None

    def _send(self, message: Any, related_request_id: Optional[RequestId] = None,
              headers: Optional[Mapping[str, str]] = None) -> None:
        probing = self._probing
        if probing is None or not self._transport.wants_route:
            super()._send(message, related_request_id, headers)
            return
        from ..protocol import http_rules

        self._transport.send(message, http_rules.route(message, probing, related_request_id, headers))

    def _check_outgoing_request(self, method: str) -> None:
        if self._envelope is not None and self.discover_result is None:
            # A pinned session knows nothing of the server's capabilities yet: nothing to check against.
            self._lifecycle_send(jsonrpc.REQUEST, method)
            return
        super()._check_outgoing_request(method)


class _Envelope:
    """A 2026-07-28 client's envelope: the ``_meta`` of its requests, made from copies of what it was given and
    never changed (a new log level makes a new one), and its JSON text as a member (``text``: None when it is
    not JSON), encoded once for every request that carries it (tests/bench/README.md has the figures)."""

    __slots__ = ("meta", "members", "text")

    def __init__(self, meta: Dict[str, Any]) -> None:
        self.meta = copied(meta)
        self.members = {"_meta": self.meta}
        self.text: Optional[str]
        try:
            self.text = jsonrpc.encode(self.members)
        except (TypeError, ValueError, RecursionError):
            self.text = None


@once
def _mcp_headers() -> Any:
    """`protocol.mcp_headers`, loaded by the first request that mirrors its headers (2026-07-28 over HTTP only)."""
    from ..protocol import mcp_headers

    return mcp_headers


def _mirrored_headers(method: str, params: Dict[str, Any],
                      extra: Optional[Mapping[str, str]]) -> Dict[str, str]:
    """``Mcp-Method`` and ``Mcp-Name`` for a request (its ``MCP-Protocol-Version`` comes with its route), and
    the caller's extra headers (``Mcp-Param-*``)."""
    mcp_headers = _mcp_headers()
    headers = {mcp_headers.METHOD_HEADER: method}
    field = mcp_headers.NAME_FIELDS.get(method)
    if field is not None:
        name = params.get(field)
        if isinstance(name, str):
            headers[mcp_headers.NAME_HEADER] = mcp_headers.encode_value(name)
    if extra:
        headers.update(extra)
    return headers
