"""`RedisEventBus`: the server's events (list changes, resource updates) reach the clients of every process.

A `Server` publishes an event (``server.notify_resource_updated(uri)``, ``add_tool``...) on its event bus, and
the bus calls the server's subscribers, which send it to the handshake sessions that hear it and to the
``subscriptions/listen`` streams (2026-07-28) whose filter names it. The default bus is one process. This one
is Redis pub/sub: every process publishes to one channel and delivers what it receives, its own events
included, so a client connected to worker A hears a change made through worker B::

    from redis_bus import RedisEventBus
    server = Server("notes", event_bus=RedisEventBus("redis://127.0.0.1:6379/0"))

Needs redis-py (``pip install -r examples/deploy/requirements.txt``); mcplite itself stays standard-library
only. Pub/sub is fire-and-forget: an event published while a process is disconnected from Redis does not reach
that process's clients (it reconnects and goes on). Each process has one connection for publishing and one
thread that listens; a process forked after the bus was built (``gunicorn --preload``) starts its own.
"""

import json
import logging
import os
import threading
from typing import Any, Callable, Dict, Optional

import redis

from mcplite.server.connections import LocalEventBus

log = logging.getLogger("mcplite.redis_bus")

Event = Dict[str, Any]


class RedisEventBus:
    """An event bus over a Redis pub/sub channel, for `Server(event_bus=...)`.

    Args:
        url: the Redis server (``redis://host:port/db``).
        channel: the channel every process of this server uses (one per server, if several share Redis).
    """

    def __init__(self, url: str = "redis://127.0.0.1:6379/0", channel: str = "mcplite:events") -> None:
        self.url = url
        self.channel = channel
        # This process's subscribers: what arrives from Redis is published to them, as the default bus would.
        self._local = LocalEventBus()
        self._stopping = threading.Event()
        self._redis: Optional[Any] = None
        self._thread: Optional[threading.Thread] = None
        self._start()
        # Threads and sockets do not survive fork: a worker forked from a process that built this bus listens
        # on a connection of its own (and the parent's connection is not shared with it).
        os.register_at_fork(after_in_child=self._start)

    def _start(self) -> None:
        """Connect, subscribe (before returning, so no event published after start-up is missed), listen."""
        self._redis = redis.Redis.from_url(self.url)
        pubsub = self._redis.pubsub(ignore_subscribe_messages=True)
        pubsub.subscribe(self.channel)
        pubsub.get_message(timeout=5.0)  # the subscription's confirmation: from now on every event arrives
        self._thread = threading.Thread(target=self._listen, args=(pubsub,), name="mcplite-redis-bus",
                                        daemon=True)
        self._thread.start()

    def publish(self, event: Event) -> None:
        """Send ``event`` to every process's subscribers (this one's too, when Redis echoes it back)."""
        assert self._redis is not None
        self._redis.publish(self.channel, json.dumps(event, separators=(",", ":")))

    def subscribe(self, callback: Callable[[Event], None]) -> Callable[[], None]:
        """Call ``callback(event)`` for every event from now on, on the listening thread; returns how to stop."""
        return self._local.subscribe(callback)

    def close(self) -> None:
        """Stop listening (within a second) and close the connections."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(5.0)
        if self._redis is not None:
            self._redis.close()

    def _listen(self, pubsub: Any) -> None:
        while not self._stopping.is_set():
            try:
                # A wait with a timeout, so that close() is noticed; a message wakes it at once.
                message = pubsub.get_message(timeout=1.0)
            except redis.ConnectionError as exc:
                log.warning("Redis event bus: %s; reconnecting", exc)
                if self._stopping.wait(1.0):
                    break
                try:
                    pubsub.subscribe(self.channel)  # redis-py reconnects on the next command
                except redis.ConnectionError:
                    pass
                continue
            if message is None or message.get("type") != "message":
                continue
            try:
                event = json.loads(message["data"])
            except ValueError:
                log.warning("Redis event bus: not an event on %s: %r", self.channel, message["data"][:200])
                continue
            self._local.publish(event)
        pubsub.close()
