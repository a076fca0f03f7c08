"""The server's connections: the state it keeps per connection, who hears what, and the one path of
server-initiated events.

Up to revision 2025-11-25 a client chooses, for its whole connection, the lowest log level it wants
(`logging/setLevel`) and the resources it wants update notifications for (`resources/subscribe`). That
per-connection state lives here, in `Connection`, and nowhere else. Revision 2026-07-28 replaces it with
per-request log levels and ``subscriptions/listen`` streams, whose registry is the sibling module `listen`.

Both eras hear the server's events through one seam, `Connections.publish`: a list change (`add_tool`,
`remove_prompt`...) or a resource update (`Server.notify_resource_updated`) is an *event*, the notification itself
as a JSON object (``{"method": ..., "params": {...}}``, params optional). It goes to the server's event bus, which
calls back its two subscribers in every process: `Connections.deliver` sends it to the handshake connections that
hear it (exactly as before there were listen streams), `listen.ListenRegistry.deliver_event` to the listen streams
whose filter names it. The default bus, `LocalEventBus`, is this process; a deployment of several processes passes
its own (``Server(event_bus=...)``: anything with ``publish(event)`` and ``subscribe(callback)``), which must call
every subscriber, the publishing process's own included.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import threading

from .._log import log
from .._sync import FanOut
from ..errors import INVALID_PARAMS, RPCError
from ..protocol import methods
from ..protocol.versions import HANDSHAKE

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional, Set

    from ..session import RequestContext, ServerSession

    #: A server event: the notification to send, ``{"method": ..., "params": {...}}`` (params optional).
    Event = Dict[str, Any]


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


class LocalEventBus:
    """The default event bus: events published in this process reach the subscribers of this process.

    A replacement (a `Server` in each of several processes) has the same two methods; ``publish`` must reach
    every process's subscribers, its own included, and may call them on any thread.
    """

    def __init__(self) -> None:
        # Guards _subscribers: subscriptions may come from any thread while events are published.
        self._lock = threading.Lock()
        self._subscribers: List[Callable[[Event], None]] = []

    def publish(self, event: Event) -> None:
        """Call every subscriber with ``event``, in the calling thread."""
        with self._lock:
            subscribers = list(self._subscribers)
        for callback in subscribers:
            try:
                callback(event)
            except Exception:  # one subscriber's failure must not keep the event from the others
                log.exception("an event subscriber failed on %s", event.get("method"))

    def subscribe(self, callback: Callable[[Event], None]) -> Callable[[], None]:
        """Call ``callback(event)`` for every event published from now on; returns how to stop."""
        with self._lock:
            self._subscribers.append(callback)

        def unsubscribe() -> None:
            with self._lock:
                if callback in self._subscribers:
                    self._subscribers.remove(callback)

        return unsubscribe


class Connections:
    """Every open connection of one `Server`, and the events and notifications sent to them.

    Args:
        event_bus: where events go and come from (default: a `LocalEventBus`, this process only).
    """

    def __init__(self, event_bus: Any = None) -> None:
        # Guards _by_session: sessions open and close on their transports' threads while notifications,
        # sent from any thread, walk a copy of it.
        self._lock = threading.Lock()
        self._by_session: Dict[ServerSession, Connection] = {}
        #: The server's event bus: `publish` sends to it, and it calls `deliver` (and the listen streams).
        self.bus = event_bus if event_bus is not None else LocalEventBus()
        self.bus.subscribe(self.deliver)

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
        with FanOut():  # the same message to each: its transports encode it once
            for connection in connections:
                # A 2026-07-28 connection hears only through its subscriptions/listen streams.
                if connection.session.lifecycle.era.name == HANDSHAKE and connection.session.initialized.is_set() \
                        and (only is None or only(connection)):
                    try:
                        connection.session.notify(method, params)
                    except Exception:  # one dead connection must not stop the others
                        log.debug("notification %s to a closed session dropped", method)

    # ---- events: the one path of list changes and resource updates -----------------------------------------
    def publish(self, event: Event) -> None:
        """Hand ``event`` to the event bus, which brings it to its subscribers in every process (this one too)."""
        self.bus.publish(event)

    def deliver(self, event: Event) -> None:
        """Send an event to the handshake connections that hear it (the bus calls this).

        Every event but a resource update goes to every initialized handshake connection; a resource update
        only to those subscribed to its URI.
        """
        method = event["method"]
        params = event.get("params")
        if method == methods.RESOURCE_UPDATED:
            uri = params.get("uri") if isinstance(params, dict) else None
            self.notify_all(method, params, only=lambda conn: isinstance(uri, str) and conn.subscribed_to(uri))
        else:
            self.notify_all(method, params)

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
    uri = uri_param(ctx)
    with connection.lock:
        connection.subscriptions.add(uri)
    return {}


def unsubscribe(connection: Connection, ctx: RequestContext) -> Dict[str, Any]:
    uri = uri_param(ctx)
    with connection.lock:
        connection.subscriptions.discard(uri)
    return {}


def uri_param(ctx: RequestContext) -> str:
    """The request's ``uri``; -32602 when it is not a string."""
    uri = ctx.params.get("uri")
    if not isinstance(uri, str):
        raise RPCError(INVALID_PARAMS, "Invalid params: uri must be a string")
    return uri


def set_level(connection: Connection, ctx: RequestContext) -> Dict[str, Any]:
    level = ctx.params.get("level")
    if level not in methods.LOGGING_LEVELS:
        raise RPCError(INVALID_PARAMS, f"Invalid params: unknown log level {level!r}")
    connection.log_level = level
    return {}
