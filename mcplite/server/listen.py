"""``subscriptions/listen`` (2026-07-28): the registry of open listen streams, and the request that opens one.

From 2026-07-28 a client hears the server's list changes and resource updates only on a listen stream
(basic/patterns/subscriptions.mdx); ``resources/subscribe`` and the HTTP GET stream are gone. A listen:

1. names what it wants in ``params.notifications``: ``toolsListChanged``, ``promptsListChanged``,
   ``resourcesListChanged`` (booleans) and ``resourceSubscriptions`` (resource URIs);
2. gets, as its first message, ``notifications/subscriptions/acknowledged`` with the filter this server
   honours: the kinds its capabilities declare, the others omitted (`honoured_filter`);
3. then hears every published event its filter names (`ListenRegistry.deliver`), each notification carrying
   ``_meta["io.modelcontextprotocol/subscriptionId"]``: the JSON-RPC id of the listen request;
4. ends when the client cancels it (``notifications/cancelled`` on stdio, a closed response on HTTP) or
   leaves: no answer; or when the server ends the session (shutdown): the graceful result
   ``{resultType: "complete", _meta: {subscriptionId}}`` (MODERN.md spec point 7: the result, not
   ``notifications/cancelled``).

No thread waits for a listen on stdio or in memory: the handler answers with a `session.Deferred`, so the
pool worker that ran it is free at once, and the session keeps the request in flight until it ends. Over HTTP
the thread of the POST holds the response open (the response is the stream). ``Server(max_listens=...)``
caps the listens open at once: beyond it, a listen is refused with ``-32603`` before any acknowledgement.

Each `Server` has a `ListenRegistry` (``server.listens``), subscribed to its event bus next to the
handshake connections (`connections`). This module loads with every server built, so it keeps its imports
light: `results` and the session layer's `Deferred` are imported by the first listen.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import threading

from .._log import log
from .._sync import FanOut
from ..errors import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND, RPCError
from ..protocol import methods
from ..protocol.methods import SUBSCRIPTION_ID_KEY

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    from typing import Any, Dict, FrozenSet, Optional, Set, Tuple

    from ..protocol.jsonrpc import RequestId
    from ..session import RequestContext, ServerSession
    from ..session.endpoint import Deferred
    from .registry import Registry
    from .connections import Connection, Event

__all__ = ["Listen", "ListenRegistry", "honoured_filter", "listen"]

#: A boolean field of the filter -> the notification it asks for, and the capability that must declare it.
_LIST_CHANGES: Dict[str, Tuple[str, str, str]] = {
    "toolsListChanged": (methods.TOOLS_LIST_CHANGED, "tools", "listChanged"),
    "promptsListChanged": (methods.PROMPTS_LIST_CHANGED, "prompts", "listChanged"),
    "resourcesListChanged": (methods.RESOURCES_LIST_CHANGED, "resources", "listChanged"),
}
#: The filter field naming resources whose ``notifications/resources/updated`` is wanted (``resources.subscribe``).
_RESOURCE_SUBSCRIPTIONS = "resourceSubscriptions"


# ---- the filter (pure) ------------------------------------------------------------------------------------
def honoured_filter(requested: Any, capabilities: Dict[str, Any]) -> Dict[str, Any]:
    """The part of a listen's ``notifications`` filter that a server declaring ``capabilities`` can deliver.

    A kind asked for and declared is kept; one not asked for (absent, false, an empty list) or not declared is
    omitted, as are fields this revision does not define. The URIs keep their order, without duplicates.

    Raises:
        RPCError: INVALID_PARAMS for a filter that is not an object, a kind that is not a boolean, or
            ``resourceSubscriptions`` that is not a list of strings.
    """
    if not isinstance(requested, dict):
        raise RPCError(INVALID_PARAMS, "Invalid params: notifications must be an object (the subscription filter)")
    honoured: Dict[str, Any] = {}
    for field, (_, section, flag) in _LIST_CHANGES.items():
        wanted = requested.get(field, False)
        if not isinstance(wanted, bool):
            raise RPCError(INVALID_PARAMS, f"Invalid params: notifications.{field} must be a boolean")
        if wanted and _declares(capabilities, section, flag):
            honoured[field] = True
    uris = requested.get(_RESOURCE_SUBSCRIPTIONS, [])
    if not isinstance(uris, list) or not all(isinstance(uri, str) for uri in uris):
        raise RPCError(INVALID_PARAMS, f"Invalid params: notifications.{_RESOURCE_SUBSCRIPTIONS} must be a list of "
                                       "resource URIs")
    if uris and _declares(capabilities, "resources", "subscribe"):
        honoured[_RESOURCE_SUBSCRIPTIONS] = list(dict.fromkeys(uris))
    return honoured


def _declares(capabilities: Dict[str, Any], section: str, flag: str) -> bool:
    declared = capabilities.get(section)
    return isinstance(declared, dict) and declared.get(flag) is True


# ---- the registry -----------------------------------------------------------------------------------------
class Listen:
    """One open listen stream: its session, its id (the listen request's) and what its filter lets through."""

    __slots__ = ("session", "id", "methods", "uris", "lock", "live")

    def __init__(self, session: ServerSession, request_id: RequestId, honoured: Dict[str, Any]) -> None:
        self.session = session
        self.id = request_id
        #: The list-change notifications it hears.
        self.methods: FrozenSet[str] = frozenset(
            method for field, (method, _, _) in _LIST_CHANGES.items() if honoured.get(field))
        #: The resources whose updates it hears.
        self.uris: FrozenSet[str] = frozenset(honoured.get(_RESOURCE_SUBSCRIPTIONS, ()))
        # Guards the order of what goes out on this stream: the acknowledgement first (nothing is sent until
        # `live`), then each notification whole. Held while sending; never taken by whoever ends the listen.
        self.lock = threading.Lock()
        #: Notifications may be sent: acknowledged, and not yet ended. Set and cleared by plain assignments.
        self.live = False

    def wants(self, method: str, params: Optional[Dict[str, Any]]) -> bool:
        if method == methods.RESOURCE_UPDATED:
            return isinstance(params, dict) and params.get("uri") in self.uris
        return method in self.methods

    def acknowledge(self, honoured: Dict[str, Any]) -> None:
        """Send ``notifications/subscriptions/acknowledged``; from then on, notifications flow."""
        with self.lock:
            self.session.notify(methods.SUBSCRIPTIONS_ACKNOWLEDGED, {
                "_meta": {SUBSCRIPTION_ID_KEY: self.id}, "notifications": honoured}, related_request_id=self.id)
            self.live = True

    def send(self, method: str, params: Optional[Dict[str, Any]]) -> None:
        """Send one notification on this stream, tagged with its subscription id (nothing once it has ended).

        Within a fan-out (`FanOut`) the listens with the same id (clients number their requests alike) share
        one tagged params dict, so that their transports encode the notification once."""
        memo = FanOut.memo()
        key = ("listen-params", id(params), type(self.id), self.id)
        tagged: Optional[Dict[str, Any]] = memo.get(key) if memo is not None else None
        if tagged is None:
            tagged = dict(params or {})
            meta = tagged.get("_meta")
            tagged["_meta"] = {**(meta if isinstance(meta, dict) else {}), SUBSCRIPTION_ID_KEY: self.id}
            if memo is not None:
                memo[key] = tagged
        params = tagged
        with self.lock:
            if not self.live:
                return
            try:
                # Related to the listen request: over HTTP it goes out at once on that POST's SSE stream.
                self.session.notify(method, params, related_request_id=self.id)
            except Exception as exc:  # a listener gone: its session ends the listen (on_end), not this
                log.debug("%s to listen %r dropped: %s", method, self.id, exc)


class ListenRegistry:
    """The open listen streams of one `Server`, at most ``max_listens`` at once; ``len()`` is how many.

    Args:
        event_bus: the server's event bus: every event published on it goes to the listens it names.
        max_listens: beyond it, `open` refuses a new listen with ``-32603``.
    """

    def __init__(self, event_bus: Any, max_listens: int) -> None:
        self.max_listens = max_listens
        # Guards _open: listens open and end on their sessions' threads while events, published from any
        # thread, walk a copy of it.
        self._lock = threading.Lock()
        self._open: Set[Listen] = set()
        event_bus.subscribe(self.deliver_event)

    def __len__(self) -> int:
        """How many listens are open now."""
        with self._lock:
            return len(self._open)

    def open(self, session: ServerSession, request_id: RequestId, honoured: Dict[str, Any]) -> Listen:
        """Register a listen, not yet acknowledged (it hears nothing until `Listen.acknowledge`).

        Raises:
            RPCError: INTERNAL_ERROR when ``max_listens`` are open already.
        """
        entry = Listen(session, request_id, honoured)
        with self._lock:
            if len(self._open) >= self.max_listens:
                raise RPCError(INTERNAL_ERROR, f"Internal error: too many open listen streams ({self.max_listens})")
            self._open.add(entry)
        return entry

    def close(self, entry: Listen) -> None:
        """The listen has ended: it hears nothing more (idempotent)."""
        entry.live = False
        with self._lock:
            self._open.discard(entry)

    def deliver_event(self, event: Event) -> None:
        """Send a published event to every open listen whose filter names it (the bus calls this)."""
        self.deliver(event["method"], event.get("params"))

    def deliver(self, method: str, params: Optional[Dict[str, Any]]) -> None:
        """Send a notification to every open listen whose filter names it."""
        if not self._open:  # no listen (read without the lock: one opening now missed nothing it was acked for)
            return
        with self._lock:
            listening = [entry for entry in self._open if entry.wants(method, params)]
        with FanOut():  # the same notification to each: encoded once per subscription id
            for entry in listening:
                entry.send(method, params)


# ---- the request ------------------------------------------------------------------------------------------
def listen(server: Registry, connection: Connection, ctx: RequestContext) -> Deferred:
    """``subscriptions/listen``: acknowledge the honoured filter, register the stream, answer later."""
    revision = ctx.revision
    if revision is None or not revision.listen:
        raise RPCError(METHOD_NOT_FOUND, f"Method not found: {ctx.method}")
    from ..session.endpoint import Deferred
    from .results import shape_result

    info: Any = server  # a Server: its capabilities, its listens, its info
    honoured = honoured_filter(ctx.params.get("notifications"), info.capabilities())
    registry: ListenRegistry = info.listens
    entry = registry.open(ctx.session, ctx.id, honoured)  # type: ignore[arg-type]  # a ServerSession
    try:
        # The graceful end's result, shaped now as any result of this request would be (resultType, serverInfo).
        final = shape_result({"_meta": {SUBSCRIPTION_ID_KEY: ctx.id}}, ctx, server)
    except BaseException:
        registry.close(entry)
        raise
    # Acknowledged once the session holds the request (`Deferred.start`): a shutdown the client sees coming
    # after the acknowledgement then finds the request, and ends it with `final`.
    return Deferred(final, on_end=lambda: registry.close(entry), start=lambda: entry.acknowledge(honoured))
