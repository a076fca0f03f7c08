"""mcplite: the Model Context Protocol for plain Python. Blocking, threads only, standard library only.

    from mcplite import Server, Client

    server = Server("demo")

    @server.tool
    def add(a: int, b: int) -> int:
        "Add two numbers."
        return a + b

    with Client(server) as client:            # or Client.stdio([...]), or Client("http://host/mcp")
        client.call_tool("add", {"a": 1, "b": 2})

The folders are the layers, each importing only from those listed before it (`tests/test_layers.py` holds
the rule; docs/architecture.md draws the map): `protocol/` (JSON-RPC, methods, wire types, the revision
table, capabilities, the lifecycle, MCP-over-HTTP rules, SSE: pure), `schema/` (Python callables <-> JSON
Schema, validation, URI templates), `transports/` (memory, stdio, the HTTP client, the HTTP server: bytes
<-> messages), `session/` (the only layer that owns message threads), `server/` and `client/` (the API),
`oauth/` (authorization), and `cli`. `mcplite.http_server`, `mcplite.wsgi` and `mcplite.jose` are the
documented paths of three modules inside them.

The names below are loaded on first use (PEP 562), so ``from mcplite import Client`` does not import the
server, the schema machinery or anything HTTP: start-up time is a feature for command-line tools.

For the same reason the modules a server or client loads at start-up do not import `typing` (it costs
more than the rest of such a start-up): they use ``from __future__ import annotations``, import typing
names under ``TYPE_CHECKING = False; if TYPE_CHECKING:`` (the spelling type checkers recognise), and
load `protocol.types`, `schema.functions` and `schema.uritemplate` when something first needs them.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see above)
if TYPE_CHECKING:
    from typing import Any, List

from .errors import (
    AuthError,
    CapabilityError,
    ConnectionClosed,
    HTTPError,
    LocalProtocolError,
    MCPError,
    ProtocolError,
    RecordingError,
    RemoteError,
    RemoteProtocolError,
    RequestCancelled,
    RequestTimeout,
    ResourceNotFound,
    ResponseLost,
    RPCError,
    SessionExpired,
    SkillVerificationError,
    TransportError,
    VersionMismatch,
)
from .protocol.versions import LATEST_VERSION, SUPPORTED_VERSIONS

if TYPE_CHECKING:  # what the lazy names are, for type checkers and IDEs
    from . import content
    from .client import Client
    from .gateway import Gateway
    from .protocol.input_rounds import Elicit, ElicitURL, InputRequired, ListRoots, Sample
    from .schema.functions import Header
    from .server import Context, Server, ToolResult
    from .session import PendingRequest

__version__ = "0.1.0"

__all__ = [
    "Server", "Client", "Gateway", "Context", "ToolResult", "PendingRequest", "content", "Header",
    "Elicit", "ElicitURL", "Sample", "ListRoots", "InputRequired",
    "LATEST_VERSION", "SUPPORTED_VERSIONS",
    "MCPError", "ProtocolError", "LocalProtocolError", "CapabilityError", "RemoteProtocolError",
    "VersionMismatch", "RPCError", "RemoteError", "ResourceNotFound", "ConnectionClosed", "ResponseLost",
    "RequestTimeout", "RequestCancelled", "TransportError", "HTTPError", "SessionExpired", "AuthError",
    "SkillVerificationError", "RecordingError",
]

#: Lazily loaded name -> the module that defines it (a module itself when the name is a submodule).
_LAZY = {"Server": ".server", "Context": ".server", "ToolResult": ".server", "Client": ".client",
         "Gateway": ".gateway",
         "PendingRequest": ".session", "content": ".content", "Header": ".schema.functions",
         "Elicit": ".protocol.input_rounds", "ElicitURL": ".protocol.input_rounds", "Sample": ".protocol.input_rounds",
         "ListRoots": ".protocol.input_rounds", "InputRequired": ".protocol.input_rounds"}


def __getattr__(name: str) -> Any:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    # __import__ rather than importlib.import_module: importing importlib would cost more than this lookup.
    module = __import__(module_name[1:], globals(), None, ["__name__"], 1)
    value = module if module_name == f".{name}" else getattr(module, name)
    globals()[name] = value  # the next lookup is an ordinary attribute
    return value


def __dir__() -> List[str]:
    return sorted(set(globals()) | set(__all__))
