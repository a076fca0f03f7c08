"""Sessions: the only place in mcplite that owns threads.

A `Session` is one JSON-RPC endpoint over one `Transport`. It matches responses to the requests we sent,
runs the peer's requests on a handler pool, delivers the peer's notifications in order, and implements the
MCP utilities that every session has: ping, cancellation, progress, timeouts, and failing everything at
once when the connection dies. `ClientSession` and `ServerSession` add the lifecycle (initialize,
version and capability negotiation): what may be sent and taken in each state is not decided here but
asked of `protocol/lifecycle.py`, which the sessions tell what happened. They know no other MCP method:
`Server` and `Client` supply handlers.

Threads, and what each may do:

- the transport's **reader** thread calls `receive`. It resolves responses, answers ping, sets cancel
  events, and queues everything else. It never runs user code, so a slow handler cannot stall replies.
- the **dispatcher** thread runs user callbacks for notifications (and the responses of requests that
  have a progress callback) one at a time in arrival order, so progress is seen before the result. It runs
  only while callbacks are queued: it ends when the queue is empty and starts again for the next one, so an
  idle session holds no thread.
- the **handler pool** runs request handlers, so a handler may itself make blocking requests to the peer
  (sampling, elicitation, roots) while the reader keeps reading. A request whose answer comes from elsewhere
  (a gateway's upstream) may be taken on the reader thread instead (``take_request``), and answered with
  `Session.answer_later` from the thread that has the answer; it stays in flight meanwhile, with no thread
  waiting for it.

Modules: `endpoint` (`Session`, `RequestContext`, batches), `pending` (`PendingRequest`), `client`
(`ClientSession`) and `server` (`ServerSession`); this ``__init__`` names what the layers above use.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    from typing import Any, List

    from .._sync import LazyEvent
    from .client import ClientSession
    from .endpoint import NotificationHandler, RequestContext, RequestHandler, Session  # noqa: F401
    from .pending import DEFAULT_TIMEOUT, PendingRequest, ProgressCallback  # noqa: F401
    from .server import ServerSession

__all__ = [
    "DEFAULT_TIMEOUT", "LazyEvent", "RequestContext", "PendingRequest", "Session", "ClientSession", "ServerSession",
]

#: Where each name lives. They load on first use (PEP 562): a client never loads the server's session, nor
#: a server the client's, and the layers above import the module they need directly.
_HOMES = {"DEFAULT_TIMEOUT": ".pending", "LazyEvent": ".._sync", "RequestContext": ".endpoint",
          "PendingRequest": ".pending", "Session": ".endpoint", "ClientSession": ".client",
          "ServerSession": ".server"}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    level = len(home) - len(home.lstrip("."))
    module = __import__(home.lstrip("."), globals(), None, [name], level)
    value = getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> List[str]:
    return sorted(set(globals()) | set(__all__))
