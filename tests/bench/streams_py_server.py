"""The streams table's server on the official Python SDK (PyPI ``mcp`` 2.x, ``MCPServer`` on uvicorn), run by
.peers/py: what streams_mc_server.py serves, written the SDK's way.

    .peers/py/bin/python tests/bench/streams_py_server.py PORT STREAMS

One resource, ``bench://watched``; tools ``add`` and ``touch``. The SDK splits an update by era:
``Context.notify_resource_updated`` publishes on its subscription bus, which reaches ``subscriptions/listen``
streams (2026-07-28) only; a 2025-11-25 client that sent ``resources/subscribe`` hears it on its session's GET
stream, sent with ``ServerSession.send_resource_updated``. MCPServer serves no ``resources/subscribe``, so this
server adds the handler on its lowlevel server, remembering each subscribing session, and ``touch`` does both.
As for mcplite's, only the policy cap on listens is raised to fit STREAMS: the SDK's ``ListenHandler`` refuses
listens beyond ``max_subscriptions`` (1,024 by default; -32603 "Subscription limit reached"), so this server
registers one with STREAMS + 100 in its place. Its session manager allows 10,000 sessions by default, more than
the table's half of 10,000 streams needs.
"""

import sys
from typing import Any, List

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.subscriptions import ListenHandler
from mcp_types import EmptyResult, SubscribeRequestParams, SubscriptionsListenRequestParams

WATCHED = "bench://watched"
streams = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
server = MCPServer("bench-streams-python-sdk", log_level="WARNING")
subscribers: List[Any] = []  # the ServerSession of each 2025-11-25 client subscribed to WATCHED
updates = [0]


@server.resource(WATCHED)
def watched() -> str:
    """What the streams are subscribed to."""
    return "watched"


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
async def touch(ctx: Context) -> int:
    """Announce an update of bench://watched to every subscriber; the update's number."""
    updates[0] += 1
    await ctx.notify_resource_updated(WATCHED)  # the listen streams
    for session in list(subscribers):  # the GET streams
        try:
            await session.send_resource_updated(WATCHED)
        except Exception:  # noqa: BLE001  (a session that ended: forget it)
            subscribers.remove(session)
    return updates[0]


async def subscribe(ctx: Any, params: SubscribeRequestParams) -> EmptyResult:
    if params.uri == WATCHED:
        subscribers.append(ctx.session)
    return EmptyResult()


server._lowlevel_server.add_request_handler("resources/subscribe", SubscribeRequestParams, subscribe)
server._lowlevel_server.add_request_handler("subscriptions/listen", SubscriptionsListenRequestParams,
                                            ListenHandler(server._subscriptions, max_subscriptions=streams + 100))

if __name__ == "__main__":
    server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
