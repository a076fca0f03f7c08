"""Scenarios idle-sessions and abandoned-streams: HTTP state that clients open and walk away from.

idle-sessions:

1,100 clients each complete the handshake (2025-11-25: ``initialize``, then ``notifications/initialized``) and
leave without a word: no DELETE, no GET stream, 100
more than the default ``max_sessions`` (1,000). Then a new client must still get a session (the table evicts
the longest-idle one rather than refusing newcomers with 503), the idle sessions must cost no thread each
(the server's threads stay within a few of their baseline), and the server must still answer at once.

abandoned-streams: 300 clients open the legacy HTTP+SSE stream (GET /sse), read its head, and close the
connection: more than the server's default ``max_connections`` (256; while the server has not noticed
the first ones leave, later ones may get 503, which is counted). A new client must then be served within
2 s (the server notices a closed stream's connection without waiting for its next keep-alive
write, 15 s by default), and the server's threads must come back to their baseline.
"""

import time
from typing import Dict, Tuple

from mcplite import Client

from .harness import HTTPServerProcess, Result, Run, ms, rss_kib, scenario, settle, steady, thread_count
from .rawhttp import exchange, json_body, request

#: Threads the server may hold beyond its baseline with every session idle: a handful, not one per session.
SPARE_THREADS = 10


def warmed_server(run: Run) -> Tuple[HTTPServerProcess, int]:
    """An HTTP server that has served one client (its lazily made threads and imports are there), and its
    thread count once steady: the baseline the scenario's figures are compared with."""
    server = HTTPServerProcess(run)
    with Client(server.url, protocol_version="2025-11-25", timeout=30) as warm:
        warm.ping()
    return server, steady(lambda: thread_count(server.pid))


@scenario("idle-sessions", quick_timeout=120, long_timeout=600)
def idle_sessions(run: Run) -> Result:
    sessions = run.size(1_100, 5_000)
    result = Result()
    server, baseline = warmed_server(run)
    rss_before = rss_kib(server.pid)
    statuses: Dict[str, int] = {}
    headers = [("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream")]
    for n in range(sessions):
        body = json_body({"jsonrpc": "2.0", "id": n, "method": "initialize",
                          "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                                     "clientInfo": {"name": "idle", "version": "1"}}})
        answer = exchange(server.port, request("POST", "/mcp", headers, body), 30)
        key = str(answer.status or answer.ended)
        statuses[key] = statuses.get(key, 0) + 1
        session = answer.headers.get("mcp-session-id")
        if session:  # the handshake's end, then silence
            exchange(server.port, request("POST", "/mcp", headers + [("MCP-Session-Id", session),
                                                                     ("MCP-Protocol-Version", "2025-11-25")],
                                          json_body({"jsonrpc": "2.0", "method": "notifications/initialized"})), 30)
    idle_threads = steady(lambda: thread_count(server.pid))
    newcomer_error = ""
    try:
        with Client(server.url, protocol_version="2025-11-25", timeout=30) as client:
            client.call_tool("echo", {"n": 1})
    except Exception as exc:  # noqa: BLE001
        newcomer_error = f"{type(exc).__name__}: {exc}"
    rss_after = rss_kib(server.pid)
    server.stop()
    result.figures.update(sessions=sessions, **{f"status_{key}": count for key, count in sorted(statuses.items())},
                          threads=f"{baseline}->{idle_threads}", newcomer="ok" if not newcomer_error else "refused",
                          rss_growth=f"{(rss_after - rss_before) / 1024:.1f}MiB")
    result.check(statuses.get("200", 0) == sessions, f"initialize answered otherwise than 200: {statuses}")
    result.check(not newcomer_error, f"a new client could not connect after {sessions} idle sessions: "
                                     f"{newcomer_error[:200]}")
    result.check(idle_threads <= baseline + SPARE_THREADS,
                 f"{idle_threads} server threads with {sessions} idle sessions ({baseline} before)")
    return result


#: How soon a new client must be served once the abandoned streams' clients are gone, in seconds.
SERVED_WITHIN = 2.0


@scenario("abandoned-streams", quick_timeout=120, long_timeout=300)
def abandoned_streams(run: Run) -> Result:
    streams = run.size(300, 1_000)
    result = Result()
    server, baseline = warmed_server(run)
    statuses: Dict[str, int] = {}
    for _ in range(streams):
        answer = exchange(server.port, request("GET", "/sse", [("Accept", "text/event-stream")]), 30)
        key = str(answer.status or answer.ended)
        statuses[key] = statuses.get(key, 0) + 1
    started = time.monotonic()
    attempts = 0
    newcomer_error = ""
    while True:  # a fresh client every 50 ms until one is served or SERVED_WITHIN has passed
        attempts += 1
        try:
            with Client(server.url, protocol_version="2025-11-25", timeout=30) as client:
                client.call_tool("echo", {"n": 1})
            newcomer_error = ""
            break
        except Exception as exc:  # noqa: BLE001
            newcomer_error = f"{type(exc).__name__}: {exc}"
        if time.monotonic() - started > SERVED_WITHIN:
            break
        time.sleep(0.05)
    served_after = time.monotonic() - started
    after = settle(lambda: thread_count(server.pid), baseline, 5)
    server.stop()
    result.figures.update(streams=streams, **{f"status_{key}": count for key, count in sorted(statuses.items())},
                          newcomer="ok" if not newcomer_error else "refused", attempts=attempts,
                          served_after=ms(served_after),
                          threads=f"{baseline}->{after}")
    result.check(not newcomer_error,
                 f"a new client was not served within {SERVED_WITHIN:g} s of {streams} streams being abandoned "
                 f"({ms(served_after)}): {newcomer_error[:200]}")
    result.check(after <= baseline, f"server threads {after} 5 s after the streams were abandoned, {baseline} before")
    return result
