"""The streams table's server on mcplite's built-in HTTP server (run.py's "streams"; streams_client.py drives it).

    python3 tests/bench/streams_mc_server.py PORT STREAMS

One resource, ``bench://watched``, which clients subscribe to (2025-11-25: ``resources/subscribe``; 2026-07-28: a
``subscriptions/listen`` naming it), and two tools: ``add`` (the plain call whose latency is measured) and
``touch``, which announces an update of the resource (`Server.notify_resource_updated`: one event to every GET
stream of a subscribed session and every listen stream naming it) and answers the number of the update.

Only the policy caps are raised to fit STREAMS: ``max_listens`` and ``max_sessions``. Every connection and thread
limit of the HTTP server keeps its default (``max_connections``, ``max_workers``, ``stream_buffer``).
"""

import itertools
import sys

from mcplite import Server

WATCHED = "bench://watched"
streams = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
server = Server("bench-streams-mcplite", max_listens=streams + 100)
updates = itertools.count(1)


@server.resource(WATCHED)
def watched() -> str:
    """What the streams are subscribed to."""
    return "watched"


@server.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool
def touch() -> int:
    """Announce an update of bench://watched to every subscriber; the update's number."""
    number = next(updates)
    server.notify_resource_updated(WATCHED)
    return number


if __name__ == "__main__":
    server.run(http=f"127.0.0.1:{sys.argv[1]}", max_sessions=streams + 100)
