"""Tasks and resumable streams in Redis: a server on any number of hosts, with nothing pinned to one process.

`RedisTaskStore` is a `TaskStore` and `RedisEventStore` an `EventStore` kept in one Redis, so that a task started
on host A is polled, answered, cancelled and fetched on host B, and a handshake-era stream cut on A resumes on
B (``Last-Event-ID``). With the event bus (`RedisEventBus`, imported here from ``redis_bus``), Redis holds
everything a request may need that a sealed ``requestState`` does not carry::

    from redis_store import RedisEventBus, RedisEventStore, RedisTaskStore
    url = "redis://127.0.0.1:6379/0"
    server = Server("notes", event_bus=RedisEventBus(url), task_store=RedisTaskStore(url))
    app = server.wsgi_app(allowed_hosts=[...], event_store=RedisEventStore(url))

Needs redis-py (``pip install -r examples/deploy/requirements.txt``); mcplite itself stays standard-library only.

What is in Redis (``prefix`` is ``mcplite`` unless told otherwise):

- ``<prefix>:task:<id>``: the task's record (JSON), kept by Redis until its TTL has passed (and a minute more:
  whether a task has expired is decided by the caller's clock, as `TaskStore` says; Redis only collects it);
- ``<prefix>:tasks`` (every task, in order of creation: the cap), ``<prefix>:expiry`` (when each expires:
  `purge`) and ``<prefix>:owner:<owner>`` / ``<prefix>:owner-less`` (``tasks/list``): sorted sets of ids;
- ``<prefix>:lease:<id>``: the runner's lease, set by `create` and renewed by a thread of the runner's store
  every third of ``lease`` seconds. A task whose lease is gone but that has not ended has lost its runner (the
  host died, or was cut off from Redis longer than the lease): whoever reads it next settles it ``failed``;
- the channel ``<prefix>:task-changes``: the id of every task changed, published in the same transaction as
  the change, which is how a cancel made on B reaches the handler on A (`TaskStore.watch`) and a
  ``tasks/result`` waiting on B hears that A completed the task;
- ``<prefix>:events:<session>:<stream>``: a stream's last ``max_events`` events, and ``<prefix>:streams:
  <session>`` the session's streams; both expire ``expire_seconds`` after the last event.

Every change to a task is a transaction (WATCH/MULTI/EXEC: optimistic, retried when another process changed the
task meanwhile). When Redis is unreachable the calls that need it fail (redis-py's ``ConnectionError``: the
client gets an internal error) and work again once it is back; a task's lease is not renewed meanwhile, so a
cut longer than the lease fails the tasks it runs.
"""

import json
import logging
import os
import threading
import uuid
from typing import Any, Callable, Dict, List, Optional, Tuple

import redis

from mcplite.errors import INTERNAL_ERROR
from mcplite.protocol.tasks import FAILED, TaskRecord, expired, settle
from mcplite.server.task_store import DEFAULT_MAX_TASKS, TaskLimitError, TaskStore
from mcplite.transports.http_server.eventstore import EventStore, StoredEvent

try:
    from .redis_bus import RedisEventBus
except ImportError:  # run from this folder, as a top-level module
    from redis_bus import RedisEventBus  # type: ignore[no-redef]

__all__ = ["RedisTaskStore", "RedisEventStore", "RedisEventBus", "DEFAULT_LEASE"]

log = logging.getLogger("mcplite.redis_store")

#: How long a runner's lease lasts, in seconds, unless renewed (every third of it): a task whose host is lost
#: is reported failed within this time of the last renewal.
DEFAULT_LEASE = 30.0
#: How long Redis keeps a task's key past its TTL (the caller's clock decides the expiry; this collects it).
_GRACE_MS = 60_000


class RedisTaskStore(TaskStore):
    """Tasks in Redis, shared by every process of every host that uses the same ``url`` and ``prefix``.

    Args:
        url: the Redis server (``redis://host:port/db``).
        prefix: what every key and the channel start with (one per server, if several share Redis).
        max_tasks: how many tasks the store holds, ended ones included, until their TTL passes.
        lease: seconds after which the task of a runner that stopped renewing its lease is failed.
    """

    def __init__(self, url: str = "redis://127.0.0.1:6379/0", *, prefix: str = "mcplite",
                 max_tasks: int = DEFAULT_MAX_TASKS, lease: float = DEFAULT_LEASE) -> None:
        if max_tasks < 1:
            raise ValueError("max_tasks must be at least 1")
        if lease <= 0:
            raise ValueError("a lease is a positive number of seconds")
        self.url = url
        self.prefix = prefix
        self.max_tasks = max_tasks
        self.lease = lease
        self.channel = f"{prefix}:task-changes"
        self._redis = redis.Redis.from_url(url)  # its pool reconnects by itself, and after a fork
        # Guards the sets below and the starting of the threads.
        self._lock = threading.Lock()
        self._running: Dict[str, None] = {}  # the unfinished tasks this process created: its leases to renew
        self._watchers: List[Callable[[str], None]] = []  # replaced, never changed in place
        self._stopping = threading.Event()
        self._renewer: Optional[threading.Thread] = None
        self._listener: Optional[threading.Thread] = None
        self._token = ""  # who holds a lease: this process (new after a fork)
        self._after_fork()
        os.register_at_fork(after_in_child=self._after_fork)

    def _after_fork(self) -> None:
        """A forked process runs none of its parent's tasks, and starts its own threads when it needs them."""
        self._lock = threading.Lock()  # another thread may have held it at the fork
        self._token = f"{os.getpid()}-{uuid.uuid4().hex}"
        self._running = {}
        self._renewer = self._listener = None

    # ---- keys ------------------------------------------------------------------------------------------------
    def _task_key(self, task_id: str) -> str:
        return f"{self.prefix}:task:{task_id}"

    def _lease_key(self, task_id: str) -> str:
        return f"{self.prefix}:lease:{task_id}"

    def _owner_key(self, owner: Optional[str]) -> str:
        return f"{self.prefix}:owner-less" if owner is None else f"{self.prefix}:owner:{owner}"

    @property
    def _index(self) -> str:
        return f"{self.prefix}:tasks"

    @property
    def _expiry(self) -> str:
        return f"{self.prefix}:expiry"

    # ---- the interface ---------------------------------------------------------------------------------------
    def create(self, record: TaskRecord, now: float) -> None:
        key = self._task_key(record.task_id)
        for attempt in range(2):  # the second after purging the expired tasks, when the store was full
            with self._redis.pipeline() as pipe:
                while True:
                    try:
                        pipe.watch(self._index, key)
                        if pipe.exists(key):
                            raise ValueError(f"task {record.task_id!r} exists")
                        if pipe.zcard(self._index) >= self.max_tasks:
                            break
                        order = self._redis.incr(f"{self.prefix}:created")
                        pipe.multi()
                        pipe.set(key, _dump(record), px=_keep_ms(record))
                        pipe.zadd(self._index, {record.task_id: order})
                        pipe.zadd(self._expiry, {record.task_id: _expires_at(record)})
                        pipe.zadd(self._owner_key(record.owner), {record.task_id: order})
                        if not record.terminal:
                            pipe.set(self._lease_key(record.task_id), self._token, px=int(self.lease * 1000))
                        pipe.publish(self.channel, record.task_id)
                        pipe.execute()
                    except redis.WatchError:
                        continue
                    if not record.terminal:
                        self._renew_later(record.task_id)
                    return
            if attempt == 0:
                self._purge(now, everything=True)
        raise TaskLimitError(f"the server holds {self.max_tasks} tasks, its limit: try again once some have expired")

    def get(self, task_id: str, now: float) -> Optional[TaskRecord]:
        text, leased = self._redis.pipeline(transaction=False).get(self._task_key(task_id)).exists(
            self._lease_key(task_id)).execute()
        if text is None:
            return None
        record = _load(text)
        if expired(record, now):
            return None
        if not record.terminal and not leased:  # its runner is gone: settle it (update checks again, atomically)
            return self.update(task_id, lambda r: r, now)
        return record

    def update(self, task_id: str, change: Callable[[TaskRecord], TaskRecord], now: float) -> Optional[TaskRecord]:
        key, lease = self._task_key(task_id), self._lease_key(task_id)
        with self._redis.pipeline() as pipe:
            while True:
                try:
                    pipe.watch(key, lease)
                    text = pipe.get(key)
                    if text is None:
                        return None
                    record = _load(text)
                    if expired(record, now):
                        pipe.multi()
                        self._forget(pipe, record)
                        pipe.execute()
                        return None
                    if not record.terminal and not pipe.exists(lease):
                        record = _runner_lost(record)
                    changed = change(record)
                    pipe.multi()
                    pipe.set(key, _dump(changed), keepttl=True)
                    if changed.terminal:
                        pipe.delete(lease)
                    pipe.publish(self.channel, task_id)
                    pipe.execute()
                except redis.WatchError:
                    continue
                if changed.terminal:
                    with self._lock:
                        self._running.pop(task_id, None)
                return changed

    def list(self, now: float, owner: Optional[str]) -> List[TaskRecord]:
        owned = self._owner_key(owner)
        entries: List[Tuple[bytes, float]] = self._redis.zrange(owned, 0, -1, withscores=True)
        if not entries:
            return []
        reads = self._redis.pipeline(transaction=False)
        for task_id, _ in entries:
            reads.get(self._task_key(task_id.decode()))
            reads.exists(self._lease_key(task_id.decode()))
        answers = reads.execute()
        found: List[Tuple[float, float, TaskRecord]] = []
        vanished = []
        for (task_id, order), text, leased in zip(entries, answers[0::2], answers[1::2]):
            if text is None:  # Redis collected it
                vanished.append(task_id)
                continue
            record: Optional[TaskRecord] = _load(text)
            assert record is not None
            if expired(record, now):
                continue
            if not record.terminal and not leased:
                record = self.update(record.task_id, lambda r: r, now)
                if record is None:
                    continue
            found.append((record.created_at, order, record))
        if vanished:
            self._redis.pipeline().zrem(owned, *vanished).zrem(self._index, *vanished).zrem(
                self._expiry, *vanished).execute()
        return [record for _, _, record in sorted(found, key=lambda entry: entry[:2])]

    def purge(self, now: float) -> int:
        return self._purge(now)

    def watch(self, callback: Callable[[str], None]) -> Optional[Callable[[], None]]:
        """Tell ``callback`` of every change published on the channel, by any process, on a thread of ours."""
        with self._lock:
            self._watchers = [*self._watchers, callback]
            if self._listener is None:
                pubsub = self._redis.pubsub(ignore_subscribe_messages=True)
                pubsub.subscribe(self.channel)
                pubsub.get_message(timeout=5.0)  # the confirmation: from now on every change is heard
                self._listener = threading.Thread(target=self._listen, args=(pubsub,),
                                                  name="mcplite-redis-tasks", daemon=True)
                self._listener.start()

        def stop() -> None:
            with self._lock:
                self._watchers = [watcher for watcher in self._watchers if watcher is not callback]
        return stop

    def close(self) -> None:
        """Stop renewing leases and listening (within a second), and close the connections. The tasks this
        process still runs are then failed by the next reader once their leases expire."""
        self._stopping.set()
        for thread in (self._renewer, self._listener):
            if thread is not None and thread is not threading.current_thread():
                thread.join(5.0)
        self._redis.close()

    def __len__(self) -> int:
        return int(self._redis.zcard(self._index))

    # ---- inside ----------------------------------------------------------------------------------------------
    def _forget(self, pipe: Any, record: TaskRecord) -> None:
        pipe.delete(self._task_key(record.task_id), self._lease_key(record.task_id))
        pipe.zrem(self._index, record.task_id)
        pipe.zrem(self._expiry, record.task_id)
        pipe.zrem(self._owner_key(record.owner), record.task_id)

    def _purge(self, now: float, everything: bool = False) -> int:
        """Delete the tasks expired at ``now``; with ``everything``, also forget the ids Redis collected."""
        candidates = [task_id.decode() for task_id in self._redis.zrangebyscore(self._expiry, "-inf", now)]
        if everything:
            every = [task_id.decode() for task_id in self._redis.zrange(self._index, 0, -1)]
            present = self._redis.pipeline(transaction=False)
            for task_id in every:
                present.exists(self._task_key(task_id))
            candidates.extend(task_id for task_id, there in zip(every, present.execute()) if not there)
        purged = 0
        for task_id in dict.fromkeys(candidates):
            with self._redis.pipeline() as pipe:
                while True:
                    try:
                        pipe.watch(self._task_key(task_id))
                        text = pipe.get(self._task_key(task_id))
                        record = _load(text) if text is not None else None
                        if record is not None and not expired(record, now):
                            break
                        pipe.multi()
                        if record is not None:
                            self._forget(pipe, record)
                            purged += 1
                        else:  # collected by Redis: only its ids are left (its owner is unknown: all of them)
                            pipe.zrem(self._index, task_id)
                            pipe.zrem(self._expiry, task_id)
                        pipe.execute()
                        break
                    except redis.WatchError:
                        continue
        return purged

    def _renew_later(self, task_id: str) -> None:
        with self._lock:
            self._running[task_id] = None
            if self._renewer is None:
                self._renewer = threading.Thread(target=self._renew, name="mcplite-redis-leases", daemon=True)
                self._renewer.start()

    def _renew(self) -> None:
        """The renewing thread: every third of the lease, extend the lease of each task this process runs."""
        while not self._stopping.wait(self.lease / 3):
            with self._lock:
                running = list(self._running)
            if not running:
                continue
            pipe = self._redis.pipeline(transaction=False)
            for task_id in running:
                # XX: a lease that is gone (the task ended, or was failed as lost) is not brought back.
                pipe.set(self._lease_key(task_id), self._token, px=int(self.lease * 1000), xx=True)
            try:
                renewed = pipe.execute()
            except redis.RedisError as exc:
                log.warning("Redis task store: cannot renew %d leases: %s", len(running), exc)
                continue
            with self._lock:
                for task_id, kept in zip(running, renewed):
                    if not kept:
                        self._running.pop(task_id, None)

    def _listen(self, pubsub: Any) -> None:
        while not self._stopping.is_set():
            try:
                message = pubsub.get_message(timeout=1.0)  # a timeout, so that close() is noticed
            except redis.ConnectionError as exc:
                log.warning("Redis task store: %s; reconnecting", exc)
                if self._stopping.wait(1.0):
                    break
                try:
                    pubsub.subscribe(self.channel)
                except redis.ConnectionError:
                    continue
                # What changed meanwhile was not heard: the tasks run here are re-read by their watchers.
                with self._lock:
                    running = list(self._running)
                for task_id in running:
                    self._tell(task_id)
                continue
            if message is None or message.get("type") != "message":
                continue
            self._tell(message["data"].decode())
        pubsub.close()

    def _tell(self, task_id: str) -> None:
        for watcher in self._watchers:
            try:
                watcher(task_id)
            except Exception:
                log.warning("a task store watcher failed", exc_info=True)


class RedisEventStore(EventStore):
    """Resumable stream events in Redis: a stream cut on one host resumes on any other sharing ``url``.

    Each stream keeps its last ``max_events`` events (a resume from before them is refused, never answered
    with a gap), and a stream's events expire ``expire_seconds`` after its last one, so the streams of a process
    that ended without forgetting its sessions do not stay for ever.

    Args:
        url: the Redis server (``redis://host:port/db``).
        prefix: what every key starts with.
        max_events: how many events each stream keeps.
        expire_seconds: how long a stream's events are kept after its last one.
    """

    shared = True

    def __init__(self, url: str = "redis://127.0.0.1:6379/0", *, prefix: str = "mcplite", max_events: int = 1000,
                 expire_seconds: float = 3600.0) -> None:
        if max_events < 1:
            raise ValueError("max_events must be at least 1")
        self.url = url
        self.prefix = prefix
        self.max_events = max_events
        self.expire_ms = int(expire_seconds * 1000)
        self._redis = redis.Redis.from_url(url)

    def _stream_key(self, session_id: str, stream_id: str) -> str:
        return f"{self.prefix}:events:{session_id}:{stream_id}"

    def _session_key(self, session_id: str) -> str:
        return f"{self.prefix}:streams:{session_id}"

    def append(self, session_id: str, stream_id: str, seq: int, data: str) -> None:
        key, session = self._stream_key(session_id, stream_id), self._session_key(session_id)
        pipe = self._redis.pipeline()  # one transaction: the event, the bound, the expiry
        pipe.rpush(key, json.dumps([seq, data], separators=(",", ":")))
        pipe.ltrim(key, -self.max_events, -1)
        pipe.pexpire(key, self.expire_ms)
        pipe.sadd(session, stream_id)
        pipe.pexpire(session, self.expire_ms)
        pipe.execute()

    def replay(self, session_id: str, stream_id: str, after_seq: int) -> Optional[List[StoredEvent]]:
        kept = self._redis.lrange(self._stream_key(session_id, stream_id), 0, -1)
        if not kept:
            return None  # unknown, or expired
        events: List[StoredEvent] = [(int(seq), str(data)) for seq, data in map(json.loads, kept)]
        if events[0][0] > after_seq + 1:
            return None  # the events right after `after_seq` were dropped by the bound
        return [event for event in events if event[0] > after_seq]

    def forget(self, session_id: str) -> None:
        session = self._session_key(session_id)
        streams = [stream.decode() for stream in self._redis.smembers(session)]
        self._redis.delete(session, *(self._stream_key(session_id, stream) for stream in streams))

    def close(self) -> None:
        self._redis.close()


def _dump(record: TaskRecord) -> str:
    return json.dumps(record.to_dict(), separators=(",", ":"))


def _load(text: bytes) -> TaskRecord:
    return TaskRecord.from_dict(json.loads(text))


def _expires_at(record: TaskRecord) -> float:
    return float("inf") if record.ttl_ms is None else record.created_at + record.ttl_ms / 1000.0


def _keep_ms(record: TaskRecord) -> Optional[int]:
    """How long Redis keeps the key: the TTL and a grace (None: until deleted)."""
    return None if record.ttl_ms is None else record.ttl_ms + _GRACE_MS


def _runner_lost(record: TaskRecord) -> TaskRecord:
    return settle(record, FAILED, now=record.updated_at, error={
        "code": INTERNAL_ERROR, "message": "Internal error: the server running this task was lost (its lease "
                                           "expired)"})
