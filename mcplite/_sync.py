"""Concurrency primitives shared by the session and the transports, kept small for start-up time.

- `DEFAULT`: the sentinel for "the session's default timeout" (None means "wait forever").
- `LazyEvent`: a `threading.Event` made only for its first waiter.
- `DaemonPool`: a few reusable daemon threads for blocking jobs (request handlers, HTTP answer readers).

On `DaemonPool`:

Not `concurrent.futures.ThreadPoolExecutor`: importing it costs more than mcplite's whole client, it makes
a Future per job (nobody waits on these: a job's outcome goes to the peer or to a pending request), and it
joins its threads at interpreter exit, so a job blocked on a silent peer would hold up the exit of a
program that forgot to close its connection. These threads are daemons.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import threading
from collections import deque  # (threading has loaded it already)

from ._log import log

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see __init__)
if TYPE_CHECKING:
    from typing import Any, Callable, Deque, Dict, List, Optional, Tuple

__all__ = ["DEFAULT", "LazyEvent", "DaemonPool"]

#: "Use the session's default timeout", where None already means "wait forever".
DEFAULT: Any = object()


class LazyEvent:
    """`threading.Event`'s ``is_set``, ``set`` and ``wait``, with the Event itself made for the first waiter.

    Every request and every session has such flags (cancelled, closed, initialized) and most are never
    waited on: building a real Event (a Condition and its lock) for each costs more than the rest of a
    small tool call's bookkeeping. Testing and setting one is a plain attribute access.
    """

    __slots__ = ("_set", "_event")

    #: Guards the making of every LazyEvent's Event (only waiters take it, once each).
    _making = threading.Lock()

    def __init__(self) -> None:
        self._set = False
        self._event: Optional[threading.Event] = None

    def is_set(self) -> bool:
        return self._set

    def set(self) -> None:
        self._set = True
        event = self._event  # read after _set: a waiter that made its Event before this sees _set below
        if event is not None:
            event.set()

    def wait(self, timeout: Optional[float] = None) -> bool:
        if self._set:
            return True
        event = self._event
        if event is None:
            with LazyEvent._making:
                event = self._event
                if event is None:
                    event = self._event = threading.Event()
        if self._set:  # set before the Event existed: set() found nothing to wake
            event.set()
        return event.wait(timeout)

    def __repr__(self) -> str:
        return f"<LazyEvent {'set' if self._set else 'unset'}>"


class _Worker:
    """One pool thread's hand-off slot: the job `DaemonPool.submit` gives it, and the lock it sleeps on."""

    __slots__ = ("job", "wake")

    def __init__(self) -> None:
        self.job: Optional[Tuple[Callable[..., None], Tuple[Any, ...]]] = None  # None on waking: end
        self.wake = threading.Lock()  # held while the thread sleeps; released to wake it (a binary semaphore)
        self.wake.acquire()


class DaemonPool:
    """Runs jobs on threads started as jobs need them, up to ``limit``, then reused; later jobs wait in order.

    An idle thread sleeps on a lock of its own, and a job is handed to one thread by name: the one that went
    idle last (its stack and caches are warm; the others sleep on). Why not one queue that every idle thread
    waits on: a thread coming back from a job takes a queued job itself while the thread the queue woke for it
    finds nothing and sleeps again (two needless switches), and threads take turns, so a steady stream of
    one-at-a-time requests, as a stdio client sends, wakes a different cold thread for each (measured on a
    stdio server, the reader thread's included: 4 to 4.5 context switches a request where two handler threads
    had started, 2 where one had, and 40-70% more CPU time).
    """

    def __init__(self, limit: int, name: str) -> None:
        self._limit = limit
        self._name = name
        # Guards _idle, _backlog, _threads and _stopped: which thread a job goes to, or whether it waits or a
        # thread is started for it. Never held while a job runs or a thread starts.
        self._lock = threading.Lock()
        self._idle: List[_Worker] = []  # sleeping threads, the last to go idle last
        self._backlog: Deque[Tuple[Callable[..., None], Tuple[Any, ...]]] = deque()  # jobs no thread was free for
        self._threads = 0
        self._stopped = False

    def submit(self, job: Callable[..., None], *args: Any) -> bool:
        """Run ``job(*args)`` on a pool thread; False (and nothing runs) once `shutdown` was called."""
        with self._lock:
            if self._stopped:
                return False
            if self._idle:
                worker = self._idle.pop()
                worker.job = (job, args)
                worker.wake.release()
                return True
            if self._threads >= self._limit:
                self._backlog.append((job, args))
                return True
            self._threads += 1
            started = self._threads
        # Started outside the lock: Thread.start() waits for the new thread to run, which on a busy
        # interpreter can take a GIL switch or more, and every other submit would wait behind it.
        try:
            threading.Thread(target=self._work, args=(job, args), name=f"{self._name}-{started}",
                             daemon=True).start()
        except BaseException:  # no thread (RuntimeError: can't start new thread): the job is not queued
            with self._lock:
                self._threads -= 1
            raise
        return True

    def _work(self, job: Callable[..., None], args: Tuple[Any, ...]) -> None:
        worker = _Worker()
        while True:
            try:
                job(*args)
            except Exception:  # the jobs report their own failures; this guards the thread itself
                log.exception("%s: a job failed", self._name)
            with self._lock:
                if self._backlog:
                    job, args = self._backlog.popleft()
                    continue
                if self._stopped:
                    return
                self._idle.append(worker)
            worker.wake.acquire()  # until submit hands this thread a job, or shutdown ends it
            item, worker.job = worker.job, None
            if item is None:
                return
            job, args = item

    def shutdown(self) -> None:
        """Let every thread finish the jobs already queued and end; nothing waits for them."""
        with self._lock:
            self._stopped = True
            idle, self._idle = self._idle, []
        for worker in idle:  # (busy threads end when they find no job left and the pool stopped)
            worker.wake.release()


class FanOut:
    """While one notification goes out to many sessions, each piece of its encoding is made once.

    A server's event (a list change, a resource update) is sent to every connection that hears it, one session
    after another, on the publishing thread; each session's transport would encode the same message again.
    Within ``with FanOut():`` the transports keep what they encode in `memo` (this thread's, dropped when the
    block ends), keyed by the identity of objects that stay alive and unchanged for the block: the shared
    params dict, the encoded JSON string. So ten thousand open streams cost one JSON encoding and one SSE
    event, queued to each. Nested blocks share the outer one's memo.
    """

    _local = threading.local()

    def __enter__(self) -> "FanOut":
        self._outer = getattr(FanOut._local, "memo", None) is not None
        if not self._outer:
            FanOut._local.memo = {}
        return self

    def __exit__(self, *exc_info: Any) -> None:
        if not self._outer:
            FanOut._local.memo = None

    @staticmethod
    def memo() -> Optional[Dict[Any, Any]]:
        """This thread's memo while a fan-out is under way; None otherwise."""
        memo: Optional[Dict[Any, Any]] = getattr(FanOut._local, "memo", None)
        return memo
