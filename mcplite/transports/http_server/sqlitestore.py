"""`SQLiteEventStore`: resumable SSE events in a SQLite file that the server processes of one host share.

The default `InMemoryEventStore` lives and dies with its process. With this store every worker of a host
(``gunicorn -w 4``, or several servers behind a proxy) writes each event to one file before sending it, so:

- a client whose stream broke can resume it (GET + ``Last-Event-ID``) through any of those processes. The
  process that owns the session replays the missed events and carries the live ones as always; another
  process, which does not know the session, replays what the store holds of that stream and ends the response
  (`EventStore.shared`): all of it if the stream had ended, else the client resumes again from its last id.
  Not on a server with ``authenticate``: the store does not record whose a session is, so only the owning
  process, which does, replays it;
- the events survive a worker that is restarted.

SQLite in WAL mode lets the processes write while others read; each append is one short transaction. The
store keeps the ``max_events`` most recent events of all sessions (and drops a session's events when it
ends), so the file stays bounded. Standard library only (`sqlite3`); for several hosts implement `EventStore`
on a shared database instead.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import os
import sqlite3
import threading

from ..._files import create_private_database
from .eventstore import EventStore

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    from typing import List, Optional

    from .eventstore import StoredEvent

__all__ = ["SQLiteEventStore"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS mcplite_events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,   -- the order of arrival over every process: what eviction follows
    session TEXT NOT NULL,
    stream TEXT NOT NULL,
    seq INTEGER NOT NULL,
    data TEXT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS mcplite_events_by_stream ON mcplite_events (session, stream, seq);
"""

#: How many appends a process makes between two evictions: an eviction is one indexed DELETE.
_EVICT_EVERY = 64


class SQLiteEventStore(EventStore):
    """Stream events in the SQLite database at ``path``, shared by every process that opens the same file.

    Args:
        path: the database file (created with its table if missing). Every process of the deployment gives
            the same path; a file on local disk (SQLite's locking is unreliable over network file systems).
        max_events: about how many events are kept in all, over every session and process: the oldest are
            dropped (a stream that lost events can no longer be resumed from before them).
        timeout: seconds a write waits for another process's transaction before failing.
    """

    shared = True

    def __init__(self, path: str, *, max_events: int = 100_000, timeout: float = 5.0) -> None:
        if max_events < 1:
            raise ValueError("max_events must be at least 1")
        self.path = path
        self.max_events = max_events
        self.timeout = timeout
        # Guards _connection, _pid and _appends. One connection per process: sqlite3 connections must not
        # cross a fork, so a process forked after this store was built (gunicorn --preload) opens its own.
        self._lock = threading.Lock()
        self._connection: Optional[sqlite3.Connection] = None
        self._pid = 0
        self._appends = 0
        with self._lock:
            self._connect()  # fail now, at start-up, on a path that cannot be opened

    def _connect(self) -> sqlite3.Connection:
        """This process's connection, opened (and the table created) on first use; called with the lock held."""
        if self._connection is not None and self._pid == os.getpid():
            return self._connection
        create_private_database(self.path)  # 0600, and so its -wal and -shm files (see _files)
        connection = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None,
                                     check_same_thread=False)
        connection.execute("PRAGMA journal_mode=WAL")  # readers do not block the writer, nor it them
        connection.execute("PRAGMA synchronous=NORMAL")  # durable at each checkpoint: enough for a replay buffer
        connection.executescript(_SCHEMA)
        self._connection, self._pid = connection, os.getpid()
        return connection

    def append(self, session_id: str, stream_id: str, seq: int, data: str) -> None:
        with self._lock:
            connection = self._connect()
            connection.execute("INSERT OR REPLACE INTO mcplite_events (session, stream, seq, data) "
                               "VALUES (?, ?, ?, ?)", (session_id, stream_id, seq, data))
            self._appends += 1
            if self._appends % _EVICT_EVERY == 0:
                connection.execute("DELETE FROM mcplite_events WHERE id <= "
                                   "(SELECT MAX(id) FROM mcplite_events) - ?", (self.max_events,))

    def replay(self, session_id: str, stream_id: str, after_seq: int) -> Optional[List[StoredEvent]]:
        with self._lock:
            connection = self._connect()
            connection.execute("BEGIN")  # one snapshot: an eviction between the two reads cannot open a gap
            try:
                first = connection.execute("SELECT MIN(seq) FROM mcplite_events WHERE session = ? AND stream = ?",
                                           (session_id, stream_id)).fetchone()[0]
                if first is None or first > after_seq + 1:
                    return None  # unknown to the store, or the events right after `after_seq` were dropped
                rows = connection.execute("SELECT seq, data FROM mcplite_events WHERE session = ? AND stream = ? "
                                          "AND seq > ? ORDER BY seq", (session_id, stream_id, after_seq)).fetchall()
            finally:
                connection.execute("COMMIT")
        return [(int(seq), str(data)) for seq, data in rows]

    def forget(self, session_id: str) -> None:
        with self._lock:
            self._connect().execute("DELETE FROM mcplite_events WHERE session = ?", (session_id,))

    def close(self) -> None:
        """Close this process's connection (the file and its events stay for the others)."""
        with self._lock:
            if self._connection is not None and self._pid == os.getpid():
                self._connection.close()
            self._connection = None
