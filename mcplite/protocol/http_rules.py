"""MCP over HTTP, per revision: header names, media types, event names, and the route of each message.

Pure: no sockets, no threads. The session asks `route` what an outgoing message needs from the transport
(which request it is, which incoming request it belongs to, the protocol headers, and whether it opens the
session or starts the listening stream), so that the transports never read MCP messages themselves. The
HTTP client and server take the names below from here rather than spelling them out.

What changes with the revision (sources: ../shared/spec/VERSIONS.md):

| revision   | transport                      | MCP-Protocol-Version on every request after initialize |
|------------|--------------------------------|--------------------------------------------------------|
| 2024-11-05 | HTTP+SSE (GET stream + POSTs)  | no                                                     |
| 2025-03-26 | Streamable HTTP                | no                                                     |
| 2025-06-18 | Streamable HTTP                | yes (`Revision.protocol_version_header`)               |
| 2025-11-25 | Streamable HTTP                | yes                                                    |
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

from . import methods
from .versions import ENVELOPE as _ENVELOPE

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    from typing import Any, Dict, Mapping, Optional, Tuple

    from .jsonrpc import RequestId
    from .versions import Revision

__all__ = [
    "JSON", "EVENT_STREAM", "POST_ACCEPT", "SESSION_ID_HEADER", "PROTOCOL_VERSION_HEADER", "LAST_EVENT_ID_HEADER",
    "MESSAGE_EVENT", "ENDPOINT_EVENT", "LEGACY_FALLBACK_STATUSES", "NO_HEADERS", "Route", "is_valid_session_id",
    "protocol_headers", "route",
]

#: The media type of a JSON-RPC message or batch in a POST body or a JSON answer.
JSON = "application/json"
#: The media type of an SSE stream: a POST's streamed answer, the GET stream, the HTTP+SSE stream.
EVENT_STREAM = "text/event-stream"
#: What a client's POST accepts: the server chooses a JSON answer or a stream (Streamable HTTP).
POST_ACCEPT = f"{JSON}, {EVENT_STREAM}"

#: The session id a Streamable HTTP server may assign in its answer to initialize; sent back on every request.
SESSION_ID_HEADER = "MCP-Session-Id"
#: The negotiated revision, on every request after initialize (2025-06-18 onwards).
PROTOCOL_VERSION_HEADER = "MCP-Protocol-Version"
#: Where a resumed SSE stream picks up (the SSE standard's header, which MCP's resumability uses).
LAST_EVENT_ID_HEADER = "Last-Event-ID"

#: The SSE event type that carries one JSON-RPC message; events of any other type are not MCP's.
MESSAGE_EVENT = "message"
#: The first event of an HTTP+SSE stream (2024-11-05): its data is the URL to POST messages to.
ENDPOINT_EVENT = "endpoint"

#: Statuses to a POSTed initialize that mean "maybe an HTTP+SSE server": a client may then try the old
#: transport (the spec's backwards-compatibility section).
LEGACY_FALLBACK_STATUSES = (400, 404, 405)

#: No headers (shared, never mutated).
NO_HEADERS: Mapping[str, str] = {}

# version -> the protocol headers of that revision; each dict is shared and never mutated, so a transport
# may recognise "the same headers as last time" by identity.
_HEADERS: Dict[str, Mapping[str, str]] = {}


class Route:
    """What one outgoing message needs from its transport, computed by `route`.

    Stream transports (stdio, memory) need none of it; an HTTP transport uses all of it. The fields:

    - ``method``: the message's method (None for a response, an error or a batch), for logs and errors;
    - ``request_id``: the id of the request this message is (None unless it is one of our requests); the
      session names it again in `Transport.cancel`;
    - ``related_request_id``: the incoming request this message belongs to (its response, and the progress,
      logs and requests sent while handling it); transports with a stream per request route by it;
    - ``headers``: the protocol headers for the HTTP request that carries the message. They hold for the
      session from then on, so an HTTP client also sends the latest ones on the requests it makes of its
      own accord (the GET stream, resuming an answer, the DELETE that ends the session);
    - ``opens_session``: the message opens the session (initialize): an HTTP client awaits its answer
      before `send` returns, takes the session id from it, and may fall back to HTTP+SSE when it is refused;
    - ``starts_listening``: once the peer has accepted the message (notifications/initialized), the session
      is ready for messages the server sends of its own accord: an HTTP client opens its GET stream;
    - ``enveloped``: the message is sent at a revision without sessions (2026-07-28): its ``headers`` are its own
      (``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``, ``Mcp-Param-*``), hold for it alone, and no
      session id, GET stream or DELETE goes with it.
    """

    __slots__ = ("method", "request_id", "related_request_id", "headers", "opens_session", "starts_listening",
                 "enveloped")

    def __init__(self, method: Optional[str] = None, request_id: Optional[RequestId] = None,
                 related_request_id: Optional[RequestId] = None, headers: Mapping[str, str] = NO_HEADERS,
                 opens_session: bool = False, starts_listening: bool = False, enveloped: bool = False) -> None:
        self.method = method
        self.request_id = request_id
        self.related_request_id = related_request_id
        self.headers = headers
        self.opens_session = opens_session
        self.starts_listening = starts_listening
        self.enveloped = enveloped

    def _fields(self) -> Tuple[Any, ...]:
        return tuple(getattr(self, name) for name in Route.__slots__)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Route) and self._fields() == other._fields()

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in Route.__slots__)
        return f"Route({fields})"


def protocol_headers(revision: Optional[Revision]) -> Mapping[str, str]:
    """The headers every HTTP request carries once ``revision`` is negotiated (none before, or for old ones).

    The same mapping object for the same revision: callers may compare by identity, and must not mutate it.
    """
    if revision is None or not revision.protocol_version_header:
        return NO_HEADERS
    headers = _HEADERS.get(revision.version)
    if headers is None:
        headers = _HEADERS.setdefault(revision.version, {PROTOCOL_VERSION_HEADER: revision.version})
    return headers


def route(message: Any, revision: Optional[Revision], related_request_id: Optional[RequestId] = None,
          extra_headers: Optional[Mapping[str, str]] = None) -> Route:
    """The route of one outgoing message (or batch), sent while ``revision`` is negotiated (None: not yet).

    ``related_request_id`` is the incoming request the message belongs to, which only the sender knows.
    ``extra_headers``: headers for this message alone, on a revision without sessions (a client's
    ``Mcp-Method``, ``Mcp-Name``, ``Mcp-Param-*``); ignored otherwise. On every message's path, so written
    for speed: positional arguments, one dictionary look-up per field.
    """
    if revision is not None and revision.era == _ENVELOPE:
        return _envelope_route(message, revision, related_request_id, extra_headers)
    headers = protocol_headers(revision)
    if isinstance(message, dict):
        method = message.get("method")
        if method is not None:
            return Route(method, message.get("id"), related_request_id, headers, method == methods.INITIALIZE,
                         method == methods.INITIALIZED)
    return Route(None, None, related_request_id, headers, False, False)


def _envelope_route(message: Any, revision: Revision, related_request_id: Optional[RequestId],
                    extra_headers: Optional[Mapping[str, str]]) -> Route:
    """A message's route at a revision without sessions: the headers its sender computed for it alone (the
    client session mirrors each request's body with `mcp_headers.standard_headers`), and the revision's."""
    if extra_headers:
        headers = {PROTOCOL_VERSION_HEADER: revision.version, **extra_headers}
    else:
        headers = protocol_headers(revision)  # type: ignore[assignment]
    if isinstance(message, dict):
        method = message.get("method")
        if method is not None:
            return Route(method, message.get("id"), related_request_id, headers, False, False, True)
    return Route(None, None, related_request_id, headers, False, False, True)


def is_valid_session_id(value: object) -> bool:
    """A session id must be visible ASCII (0x21 to 0x7E), and not empty."""
    return (isinstance(value, str) and value.isascii() and value.isprintable() and " " not in value
            and value != "")
