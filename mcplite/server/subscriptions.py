"""Who hears what: the state a server keeps per connection, and the fan-out of server-initiated notifications.

Up to revision 2025-11-25 a client chooses, for its whole connection, the lowest log level it wants
(`logging/setLevel`) and the resources it wants update notifications for (`resources/subscribe`). That
per-connection state lives here, in `Connection`, and nowhere else: revision 2026-07-28 replaces it with
per-request levels and listen streams, which will be a sibling of this module.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import threading

from .._log import log
from ..errors import INVALID_PARAMS, RPCError
from ..protocol import methods
from ..protocol.versions import HANDSHAKE

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Optional, Set

    from ..session import RequestContext, ServerSession


class Connection:
    """The per-connection state the server keeps: the session, its log level and its subscriptions."""

    def __init__(self, session: ServerSession) -> None:
        self.session = session
        self.log_level: Optional[str] = None  # None: everything until the client sets a level
        # Guards subscriptions: subscribe requests and notify_resource_updated run on different threads.
        self.lock = threading.Lock()
        self.subscriptions: Set[str] = set()

    def wants_log(self, level: str) -> bool:
        rank = methods.LOGGING_LEVELS.index
        return self.log_level is None or rank(level) >= rank(self.log_level)

    def subscribed_to(self, uri: str) -> bool:
        with self.lock:
            return uri in self.subscriptions


class Connections:
    """Every open connection of one `Server`, and the notifications sent to all (or some) of them."""

    def __init__(self) -> None:
        # Guards _by_session: sessions open and close on their transports' threads while notifications,
        # sent from any thread, walk a copy of it.
        self._lock = threading.Lock()
        self._by_session: Dict[ServerSession, Connection] = {}

    def add(self, session: ServerSession) -> Connection:
        connection = Connection(session)
        with self._lock:
            self._by_session[session] = connection
        return connection

    def forget(self, session: ServerSession) -> None:
        with self._lock:
            self._by_session.pop(session, None)

    def notify_all(self, method: str, params: Optional[Dict[str, Any]] = None,
                   only: Optional[Callable[[Connection], bool]] = None) -> None:
        """Send a notification to every initialized connection (that ``only`` accepts, when given)."""
        with self._lock:
            connections = list(self._by_session.values())
        for connection in connections:
            # A 2026-07-28 connection hears only through its subscriptions/listen streams.
            if connection.session.era == HANDSHAKE and connection.session.initialized.is_set() \
                    and (only is None or only(connection)):
                try:
                    connection.session.notify(method, params)
                except Exception:  # one dead connection must not stop the others
                    log.debug("notification %s to a closed session dropped", method)

    def resource_updated(self, uri: str) -> None:
        """`notifications/resources/updated` to the connections subscribed to ``uri``."""
        self.notify_all(methods.RESOURCE_UPDATED, {"uri": uri}, only=lambda conn: conn.subscribed_to(uri))

    def log(self, level: str, data: Any, logger: Optional[str] = None) -> None:
        """A log message not tied to any request, to the connections whose level lets it through."""
        check_log_level(level)
        self.notify_all(methods.LOG_MESSAGE, log_params(level, data, logger), only=lambda conn: conn.wants_log(level))


def check_log_level(level: str) -> None:
    if level not in methods.LOGGING_LEVELS:
        raise ValueError(f"unknown log level {level!r}; use one of {', '.join(methods.LOGGING_LEVELS)}")


def log_params(level: str, data: Any, logger: Optional[str]) -> Dict[str, Any]:
    params: Dict[str, Any] = {"level": level, "data": data}
    if logger is not None:
        params["logger"] = logger
    return params


# ---- the requests that change what a connection hears ---------------------------------------------------
def subscribe(connection: Connection, ctx: RequestContext) -> Dict[str, Any]:
    uri = _subscription_uri(ctx)
    with connection.lock:
        connection.subscriptions.add(uri)
    return {}


def unsubscribe(connection: Connection, ctx: RequestContext) -> Dict[str, Any]:
    uri = _subscription_uri(ctx)
    with connection.lock:
        connection.subscriptions.discard(uri)
    return {}


def set_level(connection: Connection, ctx: RequestContext) -> Dict[str, Any]:
    level = ctx.params.get("level")
    if level not in methods.LOGGING_LEVELS:
        raise RPCError(INVALID_PARAMS, f"Invalid params: unknown log level {level!r}")
    connection.log_level = level
    return {}


def _subscription_uri(ctx: RequestContext) -> str:
    uri = ctx.params.get("uri")
    if not isinstance(uri, str):
        raise RPCError(INVALID_PARAMS, "Invalid params: uri must be a string")
    return uri
