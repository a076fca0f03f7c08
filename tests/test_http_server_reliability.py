"""The HTTP server under churn and at shutdown: idle sessions cost no thread; SIGTERM drains and exits 0.

Real sockets on 127.0.0.1: an in-process `HTTPServerThread` for the thread count, and ``python -m mcplite serve
--http`` in a subprocess for the signals.
"""

import json
import threading
from http.client import HTTPConnection
from typing import Any, Dict

from mcplite import Server
from support import WAIT
from support.http import serving

JSON_AND_SSE = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
VERSION = "2025-11-25"


def post(conn: HTTPConnection, body: Dict[str, Any], session_id: str = "") -> Any:
    headers = dict(JSON_AND_SSE)
    if session_id:
        headers.update({"Mcp-Session-Id": session_id, "MCP-Protocol-Version": VERSION})
    conn.request("POST", "/mcp", json.dumps(body), headers)
    return conn.getresponse()


def test_a_thousand_idle_sessions_cost_no_thread_each_and_all_still_answer() -> None:
    server = Server("idle")

    @server.tool
    def add(a: int, b: int) -> int:
        return a + b

    # One keep-alive connection opens them all: the connection costs one thread, the sessions none.
    with serving(server, json_response=True, max_sessions=2000) as http:
        conn = HTTPConnection(http.host, http.port, timeout=WAIT)
        before = threading.active_count()
        sessions = []
        for _ in range(1000):
            reply = post(conn, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "idle", "version": "1"}}})
            reply.read()
            assert reply.status == 200
            session_id = reply.getheader("mcp-session-id")
            reply = post(conn, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session_id)
            reply.read()
            assert reply.status == 202
            sessions.append(session_id)
        idle_threads = threading.active_count()
        # Before: a dispatcher thread per session, started by its "initialized" and never ended (1,000 more).
        assert idle_threads - before < 50, f"{idle_threads - before} more threads for 1,000 idle sessions"
        for session_id in sessions:
            reply = post(conn, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                "params": {"name": "add", "arguments": {"a": 1, "b": 2}}}, session_id)
            answer = json.loads(reply.read())
            assert reply.status == 200 and answer["result"]["structuredContent"] == {"result": 3}, answer
        assert threading.active_count() - before < 50
        conn.close()
