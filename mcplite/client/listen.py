"""``subscriptions/listen`` on the client (2026-07-28): a blocking, closable iterator of notifications.

    with client.listen(tools=True, uris=["file:///cfg"]) as stream:
        for method, params in stream:          # blocks; ends when the stream ends (see `end_reason`)
            ...

A listen is a request the server never answers while it lasts: its stream of notifications opens with
``notifications/subscriptions/acknowledged`` (the filter the server honours) and each notification on it carries
``_meta["io.modelcontextprotocol/subscriptionId"]``, the listen request's id, by which the client's
`SubscriptionRegistry` hands it to its `Subscription` (on stdio every stream shares the one connection). It ends
when we close it ("local": on stdio ``notifications/cancelled``, over HTTP the response is closed), when the server
ends it with a result ("graceful"), or when the connection or the request fails ("lost"). No thread is kept per
listen: the notifications arrive on the session's dispatcher thread and wait in the subscription's queue for the
caller.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import queue
import threading

from .._sync import DEFAULT
from ..errors import RemoteProtocolError, RequestTimeout
from ..protocol import methods

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Iterator, Optional, Sequence, Tuple

    from ..protocol.jsonrpc import RequestId
    from ..session.client import ClientSession
    from ..session.pending import PendingRequest

    Notification = Tuple[str, Dict[str, Any]]

__all__ = ["Subscription", "SubscriptionRegistry", "LOCAL", "GRACEFUL", "LOST"]

#: How a listen stream ended (`Subscription.end_reason`): we closed it; the server ended it with a result;
#: the connection or the request failed.
LOCAL, GRACEFUL, LOST = "local", "graceful", "lost"

_ENDED = object()  # the queue's last item


class Subscription:
    """One listen stream. Iterate it for ``(method, params)``; `close` (or leaving ``with``) ends it.

    ``honored``: the filter the server acknowledged (``{"toolsListChanged": True, "resourceSubscriptions":
    [...]}``). ``end_reason``: None while open, then `LOCAL`, `GRACEFUL` or `LOST`; ``error``: why it was lost.
    """

    def __init__(self, listens: SubscriptionRegistry, requested: Dict[str, Any],
                 sink: Optional[Callable[[str, Dict[str, Any]], None]] = None) -> None:
        self._listens = listens
        self._sink = sink  # where notifications go instead of the queue (the client's managed stream)
        self._ended = False
        self.requested = requested
        self.honored: Optional[Dict[str, Any]] = None
        self.end_reason: Optional[str] = None
        self.error: Optional[BaseException] = None
        self._pending: Optional[PendingRequest] = None
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._acknowledged = threading.Event()

    @property
    def id(self) -> Optional[RequestId]:
        """The listen request's id: the ``subscriptionId`` its notifications carry."""
        return self._pending.id if self._pending is not None else None

    # ---- what the session's threads call ------------------------------------------------------------------
    def _deliver(self, method: str, params: Dict[str, Any]) -> None:
        if method == methods.SUBSCRIPTIONS_ACKNOWLEDGED:
            honored = params.get("notifications")
            self.honored = honored if isinstance(honored, dict) else {}
            self._acknowledged.set()
            return
        if self._sink is not None:
            self._sink(method, params)
            return
        self._queue.put((method, params))

    def _settled(self) -> None:
        """The listen request ended (a result, an error, a cancel, the connection's end)."""
        pending = self._pending
        assert pending is not None
        with self._listens._lock:  # once, though the hook and `open` may both see it end
            if self._ended:
                return
            self._ended = True
        if self.end_reason is None:
            try:
                pending.result(0)
                self.end_reason = GRACEFUL
            except BaseException as exc:  # (RemoteError, ConnectionClosed, ...)
                self.end_reason, self.error = LOST, exc
        self._listens._forget(self)
        self._acknowledged.set()  # a listen refused before its acknowledgement wakes the opener
        self._queue.put(_ENDED)

    # ---- what the caller uses -----------------------------------------------------------------------------
    def next(self, timeout: Optional[float] = None) -> Optional[Notification]:
        """The next notification, waiting up to ``timeout`` seconds (None: as long as it takes); None when
        the stream has ended. Raises `RequestTimeout` when nothing came in time."""
        try:
            item = self._queue.get(timeout=timeout)
        except queue.Empty:
            raise RequestTimeout(f"no notification on listen {self.id} within {timeout} s") from None
        if item is _ENDED:
            self._queue.put(_ENDED)  # every later call ends too
            return None
        return item  # type: ignore[no-any-return]

    def __iter__(self) -> Iterator[Notification]:
        return iter(self.next, None)  # (`next` until it says the stream ended)

    def close(self) -> None:
        """End the stream (the server stops sending); iteration ends. Idempotent."""
        pending = self._pending
        if self.end_reason is None:
            self.end_reason = LOCAL
        if pending is not None:
            pending.cancel("listen closed")  # (False if it had ended already)

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Subscription(id={self.id!r}, honored={self.honored!r}, end_reason={self.end_reason!r})"


class SubscriptionRegistry:
    """A client's open listen streams, by subscription id; hands each tagged notification to its stream."""

    def __init__(self) -> None:
        # Guards _open. Held while a listen is sent, so that its acknowledgement (which may overtake the
        # send's return) finds it registered.
        self._lock = threading.Lock()
        self._open: Dict[RequestId, Subscription] = {}

    def open(self, session: ClientSession, *, tools: bool, prompts: bool, resources: bool, uris: Sequence[str],
             timeout: Any = DEFAULT, sink: Optional[Callable[[str, Dict[str, Any]], None]] = None) -> Subscription:
        """Send ``subscriptions/listen`` and wait (up to ``timeout``) for its acknowledgement. With ``sink``,
        the stream's notifications are handed to it (on the session's dispatcher thread) instead of queued."""
        requested: Dict[str, Any] = {}
        if tools:
            requested["toolsListChanged"] = True
        if prompts:
            requested["promptsListChanged"] = True
        if resources:
            requested["resourcesListChanged"] = True
        if uris:
            requested["resourceSubscriptions"] = list(uris)
        subscription = Subscription(self, requested, sink)
        with self._lock:
            pending = session.send_request(methods.SUBSCRIPTIONS_LISTEN, {"notifications": requested})
            subscription._pending = pending
            self._open[pending.id] = subscription
        pending.on_settled = subscription._settled
        if pending.done():  # ended before the hook was in place
            subscription._settled()
        wait = session.default_timeout if timeout is DEFAULT else timeout
        if not subscription._acknowledged.wait(wait):
            subscription.close()
            raise RequestTimeout(f"subscriptions/listen was not acknowledged within {wait} s")
        if subscription.honored is None:  # it ended first
            if subscription.error is not None:
                raise subscription.error
            raise RemoteProtocolError("subscriptions/listen ended before it was acknowledged")
        return subscription

    def deliver(self, method: str, params: Dict[str, Any]) -> bool:
        """Hand a notification to the stream its ``subscriptionId`` names (dropped if that stream has ended);
        False if it carries no ``subscriptionId``."""
        meta = params.get("_meta")
        subscription_id = meta.get(methods.SUBSCRIPTION_ID_KEY) if isinstance(meta, dict) else None
        if subscription_id is None:
            return False
        with self._lock:
            subscription = self._open.get(subscription_id)
        if subscription is not None:
            subscription._deliver(method, params)
        # else a late one for a stream we have closed: it is dropped, not handed to the client's callbacks
        return True

    def _forget(self, subscription: Subscription) -> None:
        with self._lock:
            if self._open.get(subscription.id) is subscription:  # type: ignore[arg-type]
                del self._open[subscription.id]  # type: ignore[arg-type]

    def closing(self) -> None:
        """The client is closing the connection: the streams it ends end by our hand ("local")."""
        with self._lock:
            for subscription in self._open.values():
                if subscription.end_reason is None:
                    subscription.end_reason = LOCAL
