"""Everything mcplite raises, in one tree.

Names say whose fault a failure is: *Local* errors are the caller's (or this process's) mistake, *Remote*
errors are the peer's. The tree::

    MCPError                      base of every exception mcplite raises on purpose
    ├── ProtocolError             a rule of JSON-RPC or MCP was broken
    │   ├── LocalProtocolError    ... by us: a request the peer never declared support for, a call on a
    │   │   │                       session that is not initialized, an argument that cannot be encoded
    │   │   └── CapabilityError   the peer did not declare the capability this call needs
    │   └── RemoteProtocolError   ... by the peer: malformed JSON, an invalid JSON-RPC frame, a result that does
    │       │                       not match its schema
    │       ├── VersionMismatch   negotiation ended on a protocol revision we do not speak
    │       └── SkillVerificationError  a skill file read does not match the entry that lists it
    │                                   (digest, size, frontmatter, or a file the entry does not list)
    ├── RPCError                  a JSON-RPC error object (code, message, data). Raise it in a handler to
    │   │                           answer a request with exactly that error
    │   ├── RemoteError           the peer answered our request with a JSON-RPC error
    │   └── ResourceNotFound      raise in a resource handler: -32002 (legacy) / -32602 (2026-07-28)
    ├── ConnectionClosed          the connection ended (EOF, peer death, close()) before an answer came
    │   └── ResponseLost          2026-07-28 HTTP: the request's response stream broke before its answer;
    │                               the request may or may not have run (safe ones are sent again once)
    ├── RequestTimeout            no answer within the timeout (the request was cancelled); a TimeoutError
    ├── RequestCancelled          the request was cancelled before it was answered
    ├── TransportError            the transport failed below the protocol
    │   └── HTTPError             an HTTP exchange failed; carries ``status`` and ``body``
    │       └── SessionExpired    the server no longer knows our session (HTTP 404); start a new one.
    │                               Also a ConnectionClosed: the session is over
    ├── AuthError                 authorization failed (OAuth discovery, registration, token exchange)
    ├── gateway.ConfigError       a gateway configuration that cannot be used (names the file, server, key);
    │                               also a ValueError. Defined in mcplite/gateway/config.py
    └── RecordingError            a file `mcplite.recording.read_recording` reads is not a recording (no
                                    header, another format version, a line that is not one of its lines)

`ToolError` is not in the tree on purpose: a tool that fails returns a result with ``isError: true``;
that is data, not an exception (`Client.call_tool(..., raise_on_error=True)` turns it into `RemoteError`).
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see __init__)
if TYPE_CHECKING:
    from typing import Any, Optional

__all__ = [
    "PARSE_ERROR", "INVALID_REQUEST", "METHOD_NOT_FOUND", "INVALID_PARAMS", "INTERNAL_ERROR",
    "RESOURCE_NOT_FOUND", "URL_ELICITATION_REQUIRED", "HEADER_MISMATCH", "MISSING_REQUIRED_CLIENT_CAPABILITY",
    "UNSUPPORTED_PROTOCOL_VERSION", "CONNECTION_CLOSED", "REQUEST_TIMEOUT",
    "MCPError", "ProtocolError", "LocalProtocolError", "CapabilityError", "RemoteProtocolError",
    "VersionMismatch", "SkillVerificationError", "RPCError", "RemoteError", "ResourceNotFound", "ConnectionClosed",
    "ResponseLost",
    "RequestTimeout", "RequestCancelled", "TransportError", "HTTPError", "SessionExpired", "AuthError",
    "RecordingError",
]

# JSON-RPC 2.0 codes.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# MCP codes (VERSIONS.md §4).
RESOURCE_NOT_FOUND = -32002  # 2024-11-05 .. 2025-11-25; -32602 from 2026-07-28
URL_ELICITATION_REQUIRED = -32042  # 2025-11-25 only
HEADER_MISMATCH = -32020  # 2026-07-28
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021  # 2026-07-28
UNSUPPORTED_PROTOCOL_VERSION = -32022  # 2026-07-28
# Implementation-defined codes that the official SDKs also use; we only ever *read* them.
CONNECTION_CLOSED = -32000
REQUEST_TIMEOUT = -32001


class MCPError(Exception):
    """Base of every exception mcplite raises on purpose."""


class ProtocolError(MCPError):
    """A rule of JSON-RPC or MCP was broken (see the subclasses for whose fault it was)."""


class LocalProtocolError(ProtocolError):
    """We (the caller of mcplite) were about to break the protocol; nothing was sent."""


class CapabilityError(LocalProtocolError):
    """The peer did not declare the capability that this call needs, so it was not sent."""


class RemoteProtocolError(ProtocolError):
    """The peer broke the protocol: malformed JSON, an invalid JSON-RPC frame or an invalid result."""


class VersionMismatch(RemoteProtocolError):
    """Version negotiation ended on a revision this side does not support."""

    def __init__(self, message: str, *, requested: Optional[str] = None, offered: Optional[str] = None) -> None:
        super().__init__(message)
        self.requested = requested
        self.offered = offered


class SkillVerificationError(RemoteProtocolError):
    """A skill file the server served does not match the skill entry the client holds (skills extension).

    ``uri`` is the file; ``reason`` is "size", "digest", "frontmatter" (``SKILL.md``'s frontmatter differs
    from the entry's, or cannot be read), "unlisted" (the entry does not list the file), "unreadable" (the
    read returned no usable content) or "entry" (the entry itself is malformed or over the limits). The
    content was not used: refresh the entry (`Client.get_skill`) to pick up a skill that changed.
    """

    def __init__(self, uri: str, reason: str, message: str) -> None:
        super().__init__(message)
        self.uri = uri
        self.reason = reason


class RPCError(MCPError):
    """A JSON-RPC error object. Raise it in a handler to answer the request with this exact error."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def __str__(self) -> str:
        return f"{self.message} (code {self.code})"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.code!r}, {self.message!r}, data={self.data!r})"


class RemoteError(RPCError):
    """The peer answered our request with a JSON-RPC error (``code``, ``message``, ``data``)."""


class ResourceNotFound(RPCError):
    """Raise in a resource handler when the URI names nothing; the session picks the revision's code."""

    def __init__(self, uri: str, message: Optional[str] = None) -> None:
        super().__init__(RESOURCE_NOT_FOUND, message or f"Resource not found: {uri}", {"uri": uri})
        self.uri = uri


class ConnectionClosed(MCPError):
    """The connection ended before the answer came: EOF, a dead peer, or `close()`."""


class ResponseLost(ConnectionClosed):
    """The response stream of a 2026-07-28 HTTP request broke before its answer came.

    That revision has no resumable streams: the request may or may not have run on the server. `Client`
    sends a request that is safe to repeat (discover, lists, reads, prompts, completions, tools annotated
    read-only or idempotent) again once, with a new id, before this reaches the caller.
    """


class RequestTimeout(MCPError, TimeoutError):
    """No answer arrived within the timeout; the request was cancelled on the peer."""


class RequestCancelled(MCPError):
    """The request was cancelled (by the caller, or by the peer for a request it was handling)."""


class TransportError(MCPError):
    """The transport failed below the protocol (a process that cannot start, a socket error)."""


class HTTPError(TransportError):
    """An HTTP exchange failed: ``status`` is the HTTP status (0 when none arrived), ``body`` the text."""

    def __init__(self, message: str, *, status: int = 0, body: str = "", headers: Any = None) -> None:
        super().__init__(message)
        self.status = status
        self.body = body
        self.headers = headers


class SessionExpired(HTTPError, ConnectionClosed):
    """The server answered 404 for our session id: it ended or forgot the session. Start a new one."""


class AuthError(MCPError):
    """Authorization failed: discovery, registration, the user's consent, or the token exchange."""


class RecordingError(MCPError):
    """A file read as a recording (`mcplite.recording.read_recording`) is not one: the message names the line."""
