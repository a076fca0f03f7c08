"""mcplite: the Model Context Protocol for plain Python. Blocking, threads only, standard library only.

    from mcplite import Server, Client

    server = Server("demo")

    @server.tool
    def add(a: int, b: int) -> int:
        "Add two numbers."
        return a + b

    with Client(server) as client:            # or Client.stdio([...]), or Client("http://host/mcp")
        client.call_tool("add", {"a": 1, "b": 2})

Layers, each importing only from those above it: protocol (`errors`, `jsonrpc`, `types`, `versions`,
`validation`, `schema`, `sse`, `uritemplate`, `http_messages`), transports (`transport`, `memory`, `stdio`,
`http_server` with `eventstore` and `wsgi`, `http_client`), `session` (the only module that owns message
threads), API (`server`, `client`, `content`), auth (`oauth`, `jose`), tools (`cli`).
"""

from . import content
from .client import Client
from .errors import (
    AuthError, CapabilityError, ConnectionClosed, HTTPError, LocalProtocolError, MCPError, ProtocolError,
    RemoteError, RemoteProtocolError, RequestCancelled, RequestTimeout, ResourceNotFound, RPCError,
    SessionExpired, TransportError, VersionMismatch,
)
from .server import Context, Server, ToolResult
from .session import PendingRequest
from .versions import LATEST_VERSION, SUPPORTED_VERSIONS

__version__ = "0.1.0"

__all__ = [
    "Server", "Client", "Context", "ToolResult", "PendingRequest", "content",
    "LATEST_VERSION", "SUPPORTED_VERSIONS",
    "MCPError", "ProtocolError", "LocalProtocolError", "CapabilityError", "RemoteProtocolError",
    "VersionMismatch", "RPCError", "RemoteError", "ResourceNotFound", "ConnectionClosed", "RequestTimeout",
    "RequestCancelled", "TransportError", "HTTPError", "SessionExpired", "AuthError",
]
