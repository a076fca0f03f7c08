"""The server the reliability suite runs: a few small tools whose answers the scenarios can check.

Served as a real user would serve it, ``python -m mcplite serve tests/reliability/server.py [--http ADDR]``,
or run directly with ``--http ADDR --sse-retry MS`` when a scenario needs an HTTP option the command line
does not offer (the chaos scenario wants clients to reconnect after 20 ms rather than the default second).
Every tool is bounded in time, so no input a fuzzer can make holds a handler thread for long.
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # this checkout's mcplite, from any cwd

from mcplite import Context, Server  # noqa: E402

server = Server("reliability", "1.0")

#: The longest any tool waits, so a fuzzed or forgotten call cannot hold a handler thread for long.
MAX_WAIT_MS = 2000


@server.tool
def echo(n: int) -> int:
    """Answer with n."""
    return n


@server.tool
def sequence(count: int, ctx: Context) -> int:
    """Report progress 1..count (a sequence a client can check for gaps and repeats), then answer count."""
    for step in range(1, min(count, 1000) + 1):
        ctx.progress(step, count)
    return count


#: The resource the many-streams scenario's clients subscribe to; `announce` numbers its updates.
NUMBERED = "test://numbered"


@server.resource(NUMBERED)
def numbered() -> str:
    """What announce's updates are about."""
    return "numbered"


@server.tool
def announce(first: int, count: int) -> int:
    """Publish ``notifications/resources/updated`` of test://numbered ``count`` times (at most 1000), numbered
    first, first + 1, ... in ``_meta.n``: to every subscribed session's GET stream and every listen naming it."""
    count = max(0, min(count, 1000))
    for n in range(first, first + count):
        server.publish({"method": "notifications/resources/updated", "params": {"uri": NUMBERED, "_meta": {"n": n}}})
    return count


@server.tool
def pause(ms: int, ctx: Context) -> str:
    """Wait ``ms`` milliseconds (at most MAX_WAIT_MS) or until cancelled; say which."""
    cancelled = ctx.cancelled.wait(max(0, min(ms, MAX_WAIT_MS)) / 1000)
    return "cancelled" if cancelled else "waited"


def main() -> None:
    parser = argparse.ArgumentParser(description="the reliability suite's fixture server")
    parser.add_argument("--http", metavar="HOST:PORT", help="serve Streamable HTTP here instead of stdio")
    parser.add_argument("--sse-retry", type=int, default=1000, metavar="MS",
                        help="the reconnection delay sent to clients with SSE priming events")
    args = parser.parse_args()
    if args.http is None:
        server.run()
    else:
        server.run(http=args.http, sse_retry=args.sse_retry)


if __name__ == "__main__":
    main()
