"""Where the Streamable HTTP server keeps the SSE events a client may ask to have replayed.

Resumability (2025-03-26) and SSE polling (2025-11-25) let a client whose stream broke, or that the server
closed on purpose, reconnect with GET + ``Last-Event-ID`` and receive exactly the events it missed on that
stream. The server numbers each stream's events itself (event id ``"<stream>:<seq>"``, seq 1, 2, ...) and
hands every event to an `EventStore` before writing it to the socket, so an event is never lost between
the two. The store only keeps and returns them; a deployment that wants replay to survive a restart or to
work across processes puts them in a database by implementing the three methods: `sqlitestore` does, for
the processes of one host.
"""

import abc
import collections
import threading
from typing import Deque, Dict, List, Optional, Tuple

__all__ = ["EventStore", "InMemoryEventStore", "StoredEvent"]

#: One stored event: its sequence number within its stream and its data (the JSON text of one message).
StoredEvent = Tuple[int, str]


class EventStore(abc.ABC):
    """Keeps each session's SSE events per stream, in order, so that a stream can be replayed.

    The rules a store keeps:

    - **Thread safety.** Every session's streams append from their own threads, at once.
    - **Atomicity.** An event is kept once `append` returns: a `replay` that starts after it, in any process
      sharing the store (`shared`), includes it. The server appends before it writes the event to the socket,
      so an event a client saw is always in the store.
    - **Ordering.** One stream's events are appended by one thread, ``seq`` 1, 2, ...; `replay` gives them in
      that order, each once.
    - **Nothing skipped.** A store may drop events (a bound, an expiry), but only the oldest of a stream, and
      then `replay` from before them answers None: the server refuses the resume rather than skip events.
    - **Expiry.** A store bounds what it holds (in all, per stream, or by age); the events of a session that
      ended are dropped by `forget`, and a shared store also lets unclaimed streams expire (a process may
      end without forgetting its sessions).
    """

    #: Whether other server processes read the same events (`sqlitestore.SQLiteEventStore`): then a process
    #: that does not know a session still answers a resume of one of its streams with what the store holds.
    shared = False

    @abc.abstractmethod
    def append(self, session_id: str, stream_id: str, seq: int, data: str) -> None:
        """Keep event ``seq`` of one stream. Within a stream ``seq`` starts at 1 and grows by 1."""

    @abc.abstractmethod
    def replay(self, session_id: str, stream_id: str, after_seq: int) -> Optional[List[StoredEvent]]:
        """The events of one stream that came after ``after_seq``, oldest first.

        Returns:
            The events (possibly none), or None when the store cannot give all of them: the stream is
            unknown to it, or some of the events were evicted. The server then refuses to resume rather
            than silently skip events.
        """

    @abc.abstractmethod
    def forget(self, session_id: str) -> None:
        """Drop every event of a session that has ended."""


class InMemoryEventStore(EventStore):
    """The default store: this process's memory, bounded by a total number of events.

    When full it evicts the oldest event of all, whichever session it belongs to; a stream that lost
    events to eviction can no longer be resumed from before them (`replay` returns None).

    Args:
        max_events: how many events are kept in all.
    """

    def __init__(self, max_events: int = 10_000) -> None:
        if max_events < 1:
            raise ValueError("max_events must be at least 1")
        self.max_events = max_events
        # Guards both structures below.
        self._lock = threading.Lock()
        # (session, stream) -> its retained events, oldest first.
        self._streams: Dict[Tuple[str, str], Deque[StoredEvent]] = {}
        # Every retained event's stream, oldest first: the eviction order. Entries of forgotten sessions
        # stay until they reach the front; counting them against the bound keeps memory bounded too.
        self._arrival: Deque[Tuple[str, str]] = collections.deque()

    def append(self, session_id: str, stream_id: str, seq: int, data: str) -> None:
        key = (session_id, stream_id)
        with self._lock:
            self._streams.setdefault(key, collections.deque()).append((seq, data))
            self._arrival.append(key)
            while len(self._arrival) > self.max_events:
                self._evict_oldest()

    def _evict_oldest(self) -> None:
        key = self._arrival.popleft()
        events = self._streams.get(key)
        if events is None:
            return  # its session was forgotten
        events.popleft()
        if not events:
            # Nothing left to replay from: the stream becomes unknown, which `replay` reports as None.
            del self._streams[key]

    def replay(self, session_id: str, stream_id: str, after_seq: int) -> Optional[List[StoredEvent]]:
        with self._lock:
            events = self._streams.get((session_id, stream_id))
            if events is None:
                return None
            if events[0][0] > after_seq + 1:
                return None  # the events right after `after_seq` were evicted
            return [event for event in events if event[0] > after_seq]

    def forget(self, session_id: str) -> None:
        with self._lock:
            for key in [key for key in self._streams if key[0] == session_id]:
                del self._streams[key]
