"""Where a server keeps its tasks: the `TaskStore` interface and the in-memory store every server starts with.

A store holds `TaskRecord`s (protocol/tasks.py) by id and changes each one atomically: `TaskStore.update`
takes a function from the current record to the next, so "answer the questions this task is waiting for"
or "cancel it unless it already ended" cannot interleave with another change. Every method takes ``now``
(seconds since the epoch) rather than reading a clock, so expiry is tested without waiting.

Stores are bounded two ways: a task is forgotten once its TTL has passed (`tasks.expired`), and a store holds
at most ``max_tasks``; creating one more raises `TaskLimitError` (the ``tools/call`` is refused with a
message that says so) rather than growing without end. Expired tasks are purged when a create finds the
store full, and lazily when looked up.

`SQLiteTaskStore` (task_store_sqlite.py) keeps tasks in a file: they survive a restart and are shared by the
processes of one host. ``examples/deploy/redis_store.py`` keeps them in Redis, shared by every host.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import threading

from ..protocol.tasks import TaskRecord, expired

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    from typing import Callable, Dict, List, Optional

__all__ = ["TaskStore", "MemoryTaskStore", "TaskLimitError", "DEFAULT_MAX_TASKS"]

#: How many tasks a store holds by default, ended ones included (until their TTL passes).
DEFAULT_MAX_TASKS = 10_000


class TaskLimitError(Exception):
    """The store holds as many tasks as it may: no new one until some expire."""


class TaskStore:
    """The interface of a task store. Subclass it (or provide the same methods) to keep tasks elsewhere.

    The rules a store keeps (the contract suite, tests/test_task_store_contract.py, checks them for every store):

    - **Atomicity.** `create` is visible to `get`, from every process sharing the store, before it returns (a
      ``tasks/get`` right after the ``CreateTaskResult`` must find the task, wherever it lands). Each `update`
      is atomic: no other change to that task lands between the read ``change`` sees and the write of what it
      returns. A store that does this optimistically may call ``change`` more than once (the managers' changes
      are functions of the record alone), but writes only its last result.
    - **Ordering.** `list` gives the tasks oldest first (by ``created_at``, then order of creation).
    - **Expiry.** A task whose TTL has passed at ``now`` (`tasks.expired`) is gone for every method: `get` and
      `update` treat it as unknown, `list` leaves it out, `purge` deletes it. ``now`` is the caller's clock:
      a store may also let its backend drop the task some time later, never earlier.
    - **Owners.** `list` with ``owner`` None gives the tasks nobody owns, not everyone's.
    - **The runner.** The process that called `create` for a task is its runner: only it runs the handler and
      settles the task when the handler ends; other processes change it only through `update` (a cancel, the
      answers of ``tasks/update``). A store shared by several processes must not leave the task of a runner
      that is gone ``working`` for ever: whoever next reads it (`get`, `update`, `list`) finds it ``failed``
      (SQLite: the runner's process no longer exists on the host; Redis: the runner stopped renewing its lease).
    - **Change notification.** `watch` tells a process of changes to tasks, whichever process made them, so
      that the runner's handler sees a cancel (``ctx.cancelled``) and a wait for an answer or for the end of a
      task wakes at once. A store that cannot notify returns None and the task manager re-reads the store every
      `tasks.RECHECK_SECONDS` instead.
    """

    def create(self, record: TaskRecord, now: float) -> None:
        """Add a new task, run by the calling process. Raises `TaskLimitError` when the store is full,
        ValueError for a known id."""
        raise NotImplementedError

    def get(self, task_id: str, now: float) -> Optional[TaskRecord]:
        """The task, or None when unknown or expired."""
        raise NotImplementedError

    def update(self, task_id: str, change: Callable[[TaskRecord], TaskRecord], now: float) -> Optional[TaskRecord]:
        """Replace the task with ``change(task)``, atomically; returns the new record, or None (unknown or
        expired: ``change`` is not called). What ``change`` raises propagates, and nothing is changed."""
        raise NotImplementedError

    def list(self, now: float, owner: Optional[str]) -> List[TaskRecord]:
        """``owner``'s tasks not expired (None: the tasks nobody owns), oldest first."""
        raise NotImplementedError

    def purge(self, now: float) -> int:
        """Forget the expired tasks; returns how many."""
        raise NotImplementedError

    def watch(self, callback: Callable[[str], None]) -> Optional[Callable[[], None]]:
        """Call ``callback(task_id)`` after each change to a task (its creation, an update), from any process
        sharing the store; returns how to stop, or None when this store cannot tell (the default).

        ``callback`` may be called on a thread of the store's, and more than once for one change; it only says
        *which* task changed (the callee reads it). It must not be called for a change that is not yet visible
        to `get`."""
        return None

    def close(self) -> None:
        """Release what the store holds open (nothing, for the memory store)."""


class MemoryTaskStore(TaskStore):
    """Tasks in a dict of this process (lost with it). ``max_tasks`` bounds it (see the module docstring)."""

    def __init__(self, max_tasks: int = DEFAULT_MAX_TASKS) -> None:
        if max_tasks < 1:
            raise ValueError("max_tasks must be at least 1")
        self.max_tasks = max_tasks
        # Guards _tasks: every read and every read-change-write of a record (updates are atomic under it).
        self._lock = threading.Lock()
        self._tasks: Dict[str, TaskRecord] = {}  # in creation order (dicts keep insertion order)
        self._watchers: List[Callable[[str], None]] = []  # replaced, never changed in place: read without the lock

    def __len__(self) -> int:
        return len(self._tasks)

    def create(self, record: TaskRecord, now: float) -> None:
        with self._lock:
            if record.task_id in self._tasks:
                raise ValueError(f"task {record.task_id!r} exists")
            if len(self._tasks) >= self.max_tasks:
                self._purge(now)
                if len(self._tasks) >= self.max_tasks:
                    raise TaskLimitError(f"the server holds {self.max_tasks} tasks, its limit: try again once "
                                         "some have expired")
            self._tasks[record.task_id] = record
        self._tell(record.task_id)

    def get(self, task_id: str, now: float) -> Optional[TaskRecord]:
        with self._lock:
            return self._live(task_id, now)

    def update(self, task_id: str, change: Callable[[TaskRecord], TaskRecord], now: float) -> Optional[TaskRecord]:
        with self._lock:
            record = self._live(task_id, now)
            if record is None:
                return None
            changed = change(record)
            self._tasks[task_id] = changed
        self._tell(task_id)
        return changed

    def list(self, now: float, owner: Optional[str]) -> List[TaskRecord]:
        with self._lock:
            self._purge(now)
            return [record for record in self._tasks.values() if record.owner == owner]

    def purge(self, now: float) -> int:
        with self._lock:
            return self._purge(now)

    def watch(self, callback: Callable[[str], None]) -> Optional[Callable[[], None]]:
        """Every change is made in this process: the callback is called on the thread that made it."""
        with self._lock:
            self._watchers = [*self._watchers, callback]

        def stop() -> None:
            with self._lock:
                self._watchers = [watcher for watcher in self._watchers if watcher is not callback]
        return stop

    def _tell(self, task_id: str) -> None:
        for watcher in self._watchers:  # outside the lock: a watcher reads the store
            watcher(task_id)

    # -- under the lock --
    def _live(self, task_id: str, now: float) -> Optional[TaskRecord]:
        record = self._tasks.get(task_id)
        if record is not None and expired(record, now):
            del self._tasks[task_id]
            return None
        return record

    def _purge(self, now: float) -> int:
        gone = [task_id for task_id, record in self._tasks.items() if expired(record, now)]
        for task_id in gone:
            del self._tasks[task_id]
        return len(gone)
