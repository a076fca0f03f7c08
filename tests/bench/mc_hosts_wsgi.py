"""The scale-out table's hosts (mc_hosts.py): the deployment example (examples/deploy/app.py) as configured by the
environment, so with ``MCPLITE_REDIS_URL`` its task store, event store and event bus in Redis, plus the bench's
tool ``add`` and ``finish``, a task that says when it finished (for the time its result takes to reach another
host)."""

import time
from typing import Any, Dict

from examples.deploy.app import LOOPBACK_HOSTS, options, server
from mcplite import Context


@server.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool(task="optional")
def finish(after: float, ctx: Context) -> Dict[str, Any]:
    """End after ``after`` seconds; ``finished_at`` is the machine's monotonic clock then (CLOCK_MONOTONIC:
    one clock for every process of the machine, so a client on it can tell how long the result took to reach it)."""
    ctx.cancelled.wait(after)
    return {"finished_at": time.monotonic()}


app = server.wsgi_app(**{"allowed_hosts": LOOPBACK_HOSTS, **options()})
