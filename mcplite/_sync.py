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

try:  # queue.SimpleQueue is this C class: imported from its own module, without queue's heapq and Queue classes
    from _queue import SimpleQueue
except ImportError:  # an interpreter without the C module
    from queue import SimpleQueue

from ._log import log

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see __init__)
if TYPE_CHECKING:
    from typing import Any, Callable, Optional, Tuple

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


class DaemonPool:
    """Runs jobs on threads started as jobs need them, up to ``limit``, then reused; later jobs wait in order."""

    def __init__(self, limit: int, name: str) -> None:
        self._limit = limit
        self._name = name
        self._jobs: "SimpleQueue[Optional[Tuple[Callable[..., None], Tuple[Any, ...]]]]" = SimpleQueue()
        # Guards the counters and _stopped: whether a new job needs a new thread, and whether any will run it.
        self._lock = threading.Lock()
        self._threads = 0
        self._idle = 0
        self._backlog = 0  # jobs queued while every thread was busy: the next thread to finish takes one
        self._stopped = False

    def submit(self, job: Callable[..., None], *args: Any) -> bool:
        """Run ``job(*args)`` on a pool thread; False (and nothing runs) once `shutdown` was called."""
        started = 0  # the number of the thread to start for this job, if one is
        with self._lock:
            if self._stopped:
                return False
            if self._idle:
                self._idle -= 1
            elif self._threads < self._limit:
                self._threads += 1
                started = self._threads
            else:
                self._backlog += 1
        if started:
            # Started outside the lock: Thread.start() waits for the new thread to run, which on a busy
            # interpreter can take a GIL switch or more, and every other submit would wait behind it.
            try:
                threading.Thread(target=self._work, name=f"{self._name}-{started}", daemon=True).start()
            except BaseException:  # no thread (RuntimeError: can't start new thread): the job is not queued
                with self._lock:
                    self._threads -= 1
                raise
        self._jobs.put((job, args))
        return True

    def _work(self) -> None:
        while True:
            item = self._jobs.get()  # blocks until a job, or the None that shutdown() queues for each thread
            if item is None:
                return
            job, args = item
            try:
                job(*args)
            except Exception:  # the jobs report their own failures; this guards the thread itself
                log.exception("%s: a job failed", self._name)
            with self._lock:
                if self._backlog:
                    self._backlog -= 1
                else:
                    self._idle += 1

    def shutdown(self) -> None:
        """Let every thread finish the jobs already queued and end; nothing waits for them."""
        with self._lock:
            self._stopped = True
            threads = self._threads
        for _ in range(threads):
            self._jobs.put(None)
