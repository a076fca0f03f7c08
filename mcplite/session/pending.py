"""`PendingRequest`: a request the session sent and whose answer has not been taken yet.

It knows its session only through the small `Owner` protocol, so that this module and `endpoint` (which
makes pending requests) do not import each other. `RequestContext`, the other direction's record, lives
in `endpoint`, which makes and dispatches it.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import threading

from .._sync import DEFAULT
from ..errors import RequestCancelled, RequestTimeout

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see __init__)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Optional, Protocol

    from ..protocol.jsonrpc import RequestId

    ProgressCallback = Callable[[float, Optional[float], Optional[str]], None]


#: Seconds a request waits for its answer unless the caller says otherwise.
DEFAULT_TIMEOUT = 60.0

if TYPE_CHECKING:
    class Owner(Protocol):
        """What a pending request needs of its session (a `Session`; named here so that this module and
        `endpoint` do not import each other)."""

        default_timeout: float

        def _abandon(self, pending: PendingRequest, error: BaseException, reason: Optional[str]) -> bool: ...


class PendingRequest:
    """A request we sent and whose answer has not been taken yet.

    `result()` blocks for the answer; `cancel()` gives up on it and tells the peer. Exactly one of the
    answer, a cancellation, a timeout or the connection's end settles it: whoever removes it from the
    session's pending map settles it, so there is no double settlement and no lost wake-up.
    """

    __slots__ = ("id", "method", "on_progress", "on_settled", "_session", "_done", "_settled", "_value", "_error")

    def __init__(self, session: Owner, id: RequestId, method: str,
                 on_progress: Optional[ProgressCallback]) -> None:
        self.id = id
        self.method = method
        self.on_progress = on_progress
        #: Called once settled, on the thread that settled it (keep it short: it may be the reader's). For
        #: the owner of a request that stays open (a listen stream), to hear it end without a thread of its own.
        self.on_settled: Optional[Callable[[], None]] = None
        self._session = session
        # A lock held from birth and released once when settled: the cheapest one-shot wake-up there is.
        self._done = threading.Lock()
        self._done.acquire()
        self._settled = False
        self._value: Optional[Dict[str, Any]] = None
        self._error: Optional[BaseException] = None

    def _settle(self, value: Optional[Dict[str, Any]], error: Optional[BaseException]) -> None:
        self._value, self._error = value, error
        self._settled = True
        self._done.release()
        if self.on_settled is not None:
            self.on_settled()

    def done(self) -> bool:
        return self._settled

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Wait up to ``timeout`` seconds (None: forever) for the answer; True if it has come."""
        if self._settled:
            return True
        if self._done.acquire(timeout=-1 if timeout is None else max(timeout, 0)):
            self._done.release()  # let any other waiter through too
            return True
        return self._settled

    def result(self, timeout: Any = DEFAULT) -> Dict[str, Any]:
        """The result, blocking up to ``timeout`` seconds (default: the session's).

        Raises:
            RemoteError: the peer answered with a JSON-RPC error.
            RequestTimeout: no answer in time; the request is cancelled on the peer.
            RequestCancelled: `cancel()` was called.
            ConnectionClosed: the connection ended first.
        """
        if timeout is DEFAULT:
            timeout = self._session.default_timeout
        if not self.wait(timeout):
            self._session._abandon(self, RequestTimeout(f"{self.method} timed out after {timeout} s"),
                                   f"timed out after {timeout} s")
            # Either we settled it with the timeout, or the answer won the race by a hair. An answer routed
            # through the dispatcher can still be stuck behind a slow callback: then it is a timeout too.
            if not self.wait(self._session.default_timeout):
                raise RequestTimeout(f"{self.method}: the answer came but was not delivered within "
                                     f"{self._session.default_timeout} s")
        if self._error is not None:
            raise self._error
        assert self._value is not None
        return self._value

    def cancel(self, reason: Optional[str] = None) -> bool:
        """Stop waiting and send `notifications/cancelled`; False if the answer had already come."""
        return self._session._abandon(self, RequestCancelled(f"{self.method} was cancelled"), reason)
