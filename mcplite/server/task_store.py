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
processes of one host.
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

    Implementations must make `create` visible to `get` before it returns (a ``tasks/get`` right after the
    ``CreateTaskResult`` must find the task), and run each `update` atomically.
    """

    def create(self, record: TaskRecord, now: float) -> None:
        """Add a new task. Raises `TaskLimitError` when the store is full, ValueError for a known id."""
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
            return changed

    def list(self, now: float, owner: Optional[str]) -> List[TaskRecord]:
        with self._lock:
            self._purge(now)
            return [record for record in self._tasks.values() if record.owner == owner]

    def purge(self, now: float) -> int:
        with self._lock:
            return self._purge(now)

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
