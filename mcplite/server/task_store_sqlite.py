"""`SQLiteTaskStore`: tasks in an SQLite file (stdlib ``sqlite3``), so they survive a restart and are shared by
the processes of one host (the workers of a gunicorn, several stdio servers).

One row per task: the `TaskRecord` as JSON, plus the columns the store queries (creation time, expiry, owner)
and the id of the process that runs it. Every change is a transaction (``BEGIN IMMEDIATE``: SQLite's write
lock, across processes), so `update` is atomic; the file is in WAL mode so readers do not wait for writers.

A process that ends leaves its running tasks behind: when a store is opened, tasks whose process no longer
exists on this host are settled ``failed`` ("the server process running it ended"), so clients polling
them get an answer rather than ``working`` until their TTL. (A process id reused by an unrelated process
hides this until that one ends: a small window, accepted.)

What another process changes is seen at the next read: a task parked for input notices an answer delivered
through another worker within `tasks.RECHECK_SECONDS`, and its handler's ``ctx.is_cancelled`` reads the store.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import contextlib
import json
import os
import sqlite3
import threading

from .._files import create_private_database
from ..errors import INTERNAL_ERROR
from ..protocol.tasks import FAILED, TERMINAL, TaskRecord, expired, settle
from .task_store import DEFAULT_MAX_TASKS, TaskLimitError, TaskStore

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    from typing import Callable, Iterator, List, Optional, Union

__all__ = ["SQLiteTaskStore"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS mcplite_tasks (
    task_id TEXT PRIMARY KEY,
    created_at REAL NOT NULL,
    expires_at REAL,
    owner TEXT,
    terminal INTEGER NOT NULL,
    runner INTEGER NOT NULL,
    record TEXT NOT NULL
)
"""


class SQLiteTaskStore(TaskStore):
    """Tasks in the SQLite database at ``path`` (created if missing). ``max_tasks`` bounds it, as in memory.

    ``timeout``: how long a write waits for another process's (SQLite's busy timeout).
    """

    def __init__(self, path: Union[str, os.PathLike[str]], max_tasks: int = DEFAULT_MAX_TASKS, *,
                 timeout: float = 30.0) -> None:
        if max_tasks < 1:
            raise ValueError("max_tasks must be at least 1")
        self.path = os.fspath(path)
        self.max_tasks = max_tasks
        # One connection, shared by this process's threads under _lock (sqlite3 objects are not thread-safe
        # to use at once); other processes have their own, and SQLite's file locks order them.
        self._lock = threading.Lock()
        create_private_database(self.path)  # 0600, and so its -wal and -shm files (see _files)
        self._db = sqlite3.connect(self.path, timeout=timeout, isolation_level=None, check_same_thread=False)
        with self._lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(_SCHEMA)
            self._recover()

    # ---- the interface ----------------------------------------------------------------------------------
    def create(self, record: TaskRecord, now: float) -> None:
        with self._transaction() as db:
            (count,) = db.execute("SELECT COUNT(*) FROM mcplite_tasks").fetchone()
            if count >= self.max_tasks:
                self._purge(db, now)
                (count,) = db.execute("SELECT COUNT(*) FROM mcplite_tasks").fetchone()
                if count >= self.max_tasks:
                    raise TaskLimitError(f"the server holds {self.max_tasks} tasks, its limit: try again once "
                                         "some have expired")
            try:
                db.execute("INSERT INTO mcplite_tasks VALUES (?, ?, ?, ?, ?, ?, ?)",
                           (record.task_id, record.created_at, _expires_at(record), record.owner,
                            int(record.terminal), os.getpid(), json.dumps(record.to_dict())))
            except sqlite3.IntegrityError:
                raise ValueError(f"task {record.task_id!r} exists") from None

    def get(self, task_id: str, now: float) -> Optional[TaskRecord]:
        with self._lock:
            row = self._db.execute("SELECT record FROM mcplite_tasks WHERE task_id = ?", (task_id,)).fetchone()
        if row is None:
            return None
        record = TaskRecord.from_dict(json.loads(row[0]))
        return None if expired(record, now) else record

    def update(self, task_id: str, change: Callable[[TaskRecord], TaskRecord], now: float) -> Optional[TaskRecord]:
        with self._transaction() as db:
            row = db.execute("SELECT record FROM mcplite_tasks WHERE task_id = ?", (task_id,)).fetchone()
            if row is None:
                return None
            record = TaskRecord.from_dict(json.loads(row[0]))
            if expired(record, now):
                db.execute("DELETE FROM mcplite_tasks WHERE task_id = ?", (task_id,))
                return None
            changed = change(record)
            db.execute("UPDATE mcplite_tasks SET record = ?, terminal = ? WHERE task_id = ?",
                       (json.dumps(changed.to_dict()), int(changed.terminal), task_id))
            return changed

    def list(self, now: float, owner: Optional[str]) -> List[TaskRecord]:
        with self._lock:
            rows = self._db.execute(
                "SELECT record FROM mcplite_tasks WHERE (expires_at IS NULL OR expires_at > ?) "
                "AND owner IS ? ORDER BY created_at, rowid", (now, owner)).fetchall()
        return [TaskRecord.from_dict(json.loads(row[0])) for row in rows]

    def purge(self, now: float) -> int:
        with self._transaction() as db:
            return self._purge(db, now)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __len__(self) -> int:
        with self._lock:
            (count,) = self._db.execute("SELECT COUNT(*) FROM mcplite_tasks").fetchone()
        return int(count)

    # ---- inside ------------------------------------------------------------------------------------------
    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    @staticmethod
    def _purge(db: sqlite3.Connection, now: float) -> int:
        return db.execute("DELETE FROM mcplite_tasks WHERE expires_at IS NOT NULL AND expires_at <= ?",
                          (now,)).rowcount

    def _recover(self) -> None:
        """Settle ``failed`` the unfinished tasks of processes of this host that no longer exist (under _lock)."""
        rows = self._db.execute("SELECT task_id, runner, record FROM mcplite_tasks WHERE terminal = 0").fetchall()
        for task_id, runner, text in rows:
            if runner == os.getpid() or _alive(runner):
                continue
            record = TaskRecord.from_dict(json.loads(text))
            if record.status in TERMINAL:
                continue
            ended = settle(record, FAILED, now=record.updated_at, error={
                "code": INTERNAL_ERROR, "message": "Internal error: the server process running this task ended"})
            self._db.execute("UPDATE mcplite_tasks SET record = ?, terminal = 1 WHERE task_id = ?",
                             (json.dumps(ended.to_dict()), task_id))


def _expires_at(record: TaskRecord) -> Optional[float]:
    return None if record.ttl_ms is None else record.created_at + record.ttl_ms / 1000.0


def _alive(pid: int) -> bool:
    """Whether a process ``pid`` exists on this host (on Windows, where os.kill would end it: assumed so)."""
    if os.name == "nt":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, and is someone else's
        return True
    except OSError:
        return False
    return True

