"""`SQLiteTaskStore`: tasks in an SQLite file (stdlib ``sqlite3``), so they survive a restart and are shared by
the processes of one host (the workers of a gunicorn, several stdio servers).

One row per task: the `TaskRecord` as JSON, plus the columns the store queries (creation time, expiry, owner)
and the id of the process that runs it. Every change is a transaction (``BEGIN IMMEDIATE``: SQLite's write
lock, across processes), so `update` is atomic; the file is in WAL mode so readers do not wait for writers.

The runner of a task is the process that created it (its id is in the row). A process that ends leaves its
running tasks behind: when a store is opened, and whenever an unfinished task is read, a task whose process no
longer exists on this host is settled ``failed`` ("the server process running it ended"), so clients polling
them get an answer rather than ``working`` until their TTL. (A process id reused by an unrelated process
hides this until that one ends: a small window, accepted.)

Changes made by other processes are told (`TaskStore.watch`) by SQLite's own means: every change stamps its row
with the next revision number, and a thread per watching store asks SQLite every `WATCH_INTERVAL` seconds
whether the file changed (``PRAGMA data_version``, a read of the shared memory index that costs no I/O); when
it did, it reads the rows whose revision is newer than the last it saw. A cancel made through one worker so
reaches the handler running in another within that interval, and so does an answer or a task's end.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import contextlib
import json
import os
import sqlite3
import threading

from .._files import create_private_database
from .._log import log
from ..errors import INTERNAL_ERROR
from ..protocol.tasks import FAILED, TaskRecord, expired, settle
from .task_store import DEFAULT_MAX_TASKS, TaskLimitError, TaskStore

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    from typing import Callable, Iterator, List, Optional, Union

__all__ = ["SQLiteTaskStore", "WATCH_INTERVAL"]

#: How often a watching store asks SQLite whether another connection changed the file (seconds).
WATCH_INTERVAL = 0.05

_SCHEMA = """
CREATE TABLE IF NOT EXISTS mcplite_tasks (
    task_id TEXT PRIMARY KEY,
    created_at REAL NOT NULL,
    expires_at REAL,
    owner TEXT,
    terminal INTEGER NOT NULL,
    runner INTEGER NOT NULL,
    record TEXT NOT NULL,
    revision INTEGER NOT NULL DEFAULT 0
)
"""
_REVISION_INDEX = "CREATE INDEX IF NOT EXISTS mcplite_tasks_revision ON mcplite_tasks (revision)"
#: The next revision, for a row being written inside a transaction (BEGIN IMMEDIATE: no other writer meanwhile).
_NEXT_REVISION = "(SELECT COALESCE(MAX(revision), 0) + 1 FROM mcplite_tasks)"



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
        self._timeout = timeout
        with self._lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(_SCHEMA)
            columns = [row[1] for row in self._db.execute("PRAGMA table_info(mcplite_tasks)")]
            if "revision" not in columns:  # a file written by an earlier version
                self._db.execute("ALTER TABLE mcplite_tasks ADD COLUMN revision INTEGER NOT NULL DEFAULT 0")
            self._db.execute(_REVISION_INDEX)
            self._recover()
        self._watchers: List[Callable[[str], None]] = []  # replaced, never changed in place
        self._watch_thread: Optional[threading.Thread] = None
        self._closed = threading.Event()

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
                db.execute(f"INSERT INTO mcplite_tasks VALUES (?, ?, ?, ?, ?, ?, ?, {_NEXT_REVISION})",
                           (record.task_id, record.created_at, _expires_at(record), record.owner,
                            int(record.terminal), os.getpid(), json.dumps(record.to_dict())))
            except sqlite3.IntegrityError:
                raise ValueError(f"task {record.task_id!r} exists") from None

    def get(self, task_id: str, now: float) -> Optional[TaskRecord]:
        with self._lock:
            row = self._db.execute("SELECT record, runner FROM mcplite_tasks WHERE task_id = ?",
                                   (task_id,)).fetchone()
        if row is None:
            return None
        record = TaskRecord.from_dict(json.loads(row[0]))
        if expired(record, now):
            return None
        if not record.terminal and _gone(row[1]):
            return self.update(task_id, _runner_ended, now)
        return record

    def update(self, task_id: str, change: Callable[[TaskRecord], TaskRecord], now: float) -> Optional[TaskRecord]:
        with self._transaction() as db:
            row = db.execute("SELECT record, runner FROM mcplite_tasks WHERE task_id = ?", (task_id,)).fetchone()
            if row is None:
                return None
            record = TaskRecord.from_dict(json.loads(row[0]))
            if expired(record, now):
                db.execute("DELETE FROM mcplite_tasks WHERE task_id = ?", (task_id,))
                return None
            if not record.terminal and _gone(row[1]):
                record = _runner_ended(record)
            changed = change(record)
            db.execute(f"UPDATE mcplite_tasks SET record = ?, terminal = ?, revision = {_NEXT_REVISION} "
                       "WHERE task_id = ?", (json.dumps(changed.to_dict()), int(changed.terminal), task_id))
            return changed

    def list(self, now: float, owner: Optional[str]) -> List[TaskRecord]:
        with self._lock:
            rows = self._db.execute(
                "SELECT record, runner FROM mcplite_tasks WHERE (expires_at IS NULL OR expires_at > ?) "
                "AND owner IS ? ORDER BY created_at, rowid", (now, owner)).fetchall()
        records = []
        for text, runner in rows:
            record: Optional[TaskRecord] = TaskRecord.from_dict(json.loads(text))
            if record is not None and not record.terminal and _gone(runner):
                record = self.update(record.task_id, _runner_ended, now)
            if record is not None:
                records.append(record)
        return records

    def purge(self, now: float) -> int:
        with self._transaction() as db:
            return self._purge(db, now)

    def watch(self, callback: Callable[[str], None]) -> Optional[Callable[[], None]]:
        """Tell ``callback`` of every change, this process's and others', within `WATCH_INTERVAL` seconds."""
        with self._lock:
            self._watchers = [*self._watchers, callback]
            if self._watch_thread is None:
                # Where the watching starts is read here, not by the thread once it runs: a change made as soon
                # as this returns (before a busy machine has run the thread) is told too.
                db = sqlite3.connect(self.path, timeout=self._timeout, isolation_level=None, check_same_thread=False)
                try:
                    (seen,) = db.execute("SELECT COALESCE(MAX(revision), 0) FROM mcplite_tasks").fetchone()
                    (version,) = db.execute("PRAGMA data_version").fetchone()
                except BaseException:
                    db.close()
                    raise
                self._watch_thread = threading.Thread(target=self._watch_changes, args=(db, seen, version),
                                                      name="mcplite-sqlite-tasks", daemon=True)
                self._watch_thread.start()

        def stop() -> None:
            with self._lock:
                self._watchers = [watcher for watcher in self._watchers if watcher is not callback]
        return stop

    def close(self) -> None:
        self._closed.set()
        with self._lock:
            thread, self._watch_thread = self._watch_thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(5.0)
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

    def _watch_changes(self, db: sqlite3.Connection, seen: int, version: int) -> None:
        """The watching thread: on its own connection ``db``, whose ``data_version`` moves when another commits,
        from revision ``seen`` and data version ``version``."""
        try:
            while not self._closed.wait(WATCH_INTERVAL):
                try:
                    (now_version,) = db.execute("PRAGMA data_version").fetchone()
                    if now_version == version:
                        continue
                    version = now_version
                    rows = db.execute("SELECT task_id, revision FROM mcplite_tasks WHERE revision > ? "
                                      "ORDER BY revision", (seen,)).fetchall()
                except sqlite3.Error:  # busy past the timeout, or the file went away: try again
                    log.warning("SQLite task store %s: cannot read changes", self.path, exc_info=True)
                    continue
                for task_id, revision in rows:
                    seen = max(seen, revision)
                    for watcher in self._watchers:
                        try:
                            watcher(task_id)
                        except Exception:
                            log.warning("a task store watcher failed", exc_info=True)
        finally:
            db.close()

    @staticmethod
    def _purge(db: sqlite3.Connection, now: float) -> int:
        return db.execute("DELETE FROM mcplite_tasks WHERE expires_at IS NOT NULL AND expires_at <= ?",
                          (now,)).rowcount

    def _recover(self) -> None:
        """Settle ``failed`` the unfinished tasks of processes of this host that no longer exist (under _lock)."""
        rows = self._db.execute("SELECT task_id, runner, record FROM mcplite_tasks WHERE terminal = 0").fetchall()
        for task_id, runner, text in rows:
            record = TaskRecord.from_dict(json.loads(text))
            if record.terminal or not _gone(runner):
                continue
            self._db.execute(f"UPDATE mcplite_tasks SET record = ?, terminal = 1, revision = {_NEXT_REVISION} "
                             "WHERE task_id = ?", (json.dumps(_runner_ended(record).to_dict()), task_id))


def _runner_ended(record: TaskRecord) -> TaskRecord:
    return settle(record, FAILED, now=record.updated_at, error={
        "code": INTERNAL_ERROR, "message": "Internal error: the server process running this task ended"})


def _gone(runner: int) -> bool:
    """Whether the process that runs a task is gone from this host."""
    return runner != os.getpid() and not _alive(runner)


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

