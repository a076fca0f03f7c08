"""Across processes: server events over Redis pub/sub (``examples/deploy/redis_bus.py``), and resumable stream
events in a SQLite file the processes of one host share (`SQLiteEventStore`).

- A 2026-07-28 ``subscriptions/listen`` stream and a 2025-11-25 ``resources/subscribe`` session, both connected
  to process A, hear a change made through process B (a gunicorn with ``-w 2 --preload``: the bus was built
  before the fork, each worker listens on its own connection).
- A client whose stream broke resumes it (GET + ``Last-Event-ID``) through a process that does not own the
  session: the events the shared store holds are replayed.
"""

import json
import queue
import sqlite3
from http.client import HTTPConnection
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest
from support import WAIT, wait_until
from support.servers import Served, builtin_server, gunicorn, python_env, redis_server, require_module

from mcplite import Client
from mcplite.wsgi import SQLiteEventStore


def test_a_listener_on_one_process_hears_a_change_made_through_another(tmp_path: Path, cleanup: List[Any]) -> None:
    require_module("redis")
    redis, port = redis_server(tmp_path)
    cleanup.append(redis)
    bus = {"REDIS_URL": f"redis://127.0.0.1:{port}/0"}
    a = gunicorn(tmp_path, "examples.deploy.app:app", ["--threads", "8"], env=python_env(**bus), name="process-a")
    cleanup.append(a)
    b = gunicorn(tmp_path, "examples.deploy.app:app", ["-w", "2", "--preload"],
                 env=python_env(STATELESS="1", **bus), name="process-b")
    cleanup.append(b)
    updates: "queue.Queue[str]" = queue.Queue()
    with Client(a.url, protocol_version="2026-07-28", timeout=WAIT) as enveloped, \
            Client(a.url, protocol_version="2025-11-25", timeout=WAIT, on_resource_updated=updates.put) as legacy, \
            Client(b.url, protocol_version="2026-07-28", timeout=WAIT) as writer:
        legacy.subscribe_resource("note://shared")
        wait_until(lambda: legacy.transport.dialect.listening)  # type: ignore[attr-defined]  # its GET stream
        with enveloped.listen(uris=["note://shared"]) as stream:
            pid_a = enveloped.call_tool("whoami")["structuredContent"]["result"]
            for round in range(3):  # whichever of B's workers takes the write
                pid_b = writer.call_tool("write_note", {"name": "shared", "text": f"v{round}"})["structuredContent"]
                assert pid_b["result"] != pid_a
                heard = stream.next(timeout=WAIT)
                assert heard is not None and heard[0] == "notifications/resources/updated", heard
                assert heard[1]["uri"] == "note://shared"
                assert updates.get(timeout=WAIT) == "note://shared"
            # A change nobody subscribed to is not heard: the next thing heard is the one after it.
            writer.call_tool("write_note", {"name": "other", "text": "x"})
            writer.call_tool("write_note", {"name": "shared", "text": "last"})
            heard = stream.next(timeout=WAIT)
            assert heard is not None and heard[1]["uri"] == "note://shared"
            assert updates.get(timeout=WAIT) == "note://shared" and updates.empty()


# ---- SQLite: the event store of one host ------------------------------------------------------------------------
def test_the_sqlite_store_keeps_streams_in_order_and_says_what_it_lost(tmp_path: Path) -> None:
    path = str(tmp_path / "events.db")
    store, other = SQLiteEventStore(path, max_events=100), SQLiteEventStore(path)
    for seq in range(1, 4):
        store.append("s1", "1", seq, f"m{seq}")
    store.append("s2", "1", 1, "other session")
    assert other.replay("s1", "1", 1) == [(2, "m2"), (3, "m3")]  # another connection sees them
    assert other.replay("s1", "1", 3) == []
    assert other.replay("s1", "9", 0) is None  # a stream it never had
    other.forget("s1")
    assert store.replay("s1", "1", 0) is None and store.replay("s2", "1", 0) == [(1, "other session")]
    for seq in range(1, 201):  # past max_events: the oldest are dropped, and a replay from before them refused
        store.append("s3", "1", seq, "x")
    assert store.replay("s3", "1", 0) is None
    assert store.replay("s3", "1", 199) == [(200, "x")]
    rows = sqlite3.connect(path).execute("SELECT COUNT(*) FROM mcplite_events").fetchone()[0]
    assert rows <= 100 + 64
    with pytest.raises(ValueError):
        SQLiteEventStore(path, max_events=0)
    store.close()
    other.close()


def post(served: Served, body: Dict[str, Any], headers: Dict[str, str]) -> Tuple[int, Dict[str, str], bytes]:
    connection = HTTPConnection("127.0.0.1", served.port, timeout=WAIT)
    try:
        connection.request("POST", "/mcp", json.dumps(body), {
            "Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers})
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def get(served: Served, headers: Dict[str, str]) -> Tuple[int, bytes]:
    connection = HTTPConnection("127.0.0.1", served.port, timeout=WAIT)
    try:
        connection.request("GET", "/mcp", headers={"Accept": "text/event-stream", **headers})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def events_of(body: bytes) -> List[Tuple[str, str]]:
    """(id, data) of each SSE event."""
    from mcplite.protocol.sse import SSEParser

    parser = SSEParser()
    return [(event.id or "", event.data) for event in parser.feed(body) + parser.close()]


def test_a_stream_resumes_through_a_process_that_does_not_own_the_session(tmp_path: Path,
                                                                            cleanup: List[Any]) -> None:
    database = {"EVENT_DB": str(tmp_path / "events.db")}
    a = builtin_server(tmp_path, "process-a", database)
    cleanup.append(a)
    b = builtin_server(tmp_path, "process-b", database)
    cleanup.append(b)
    version = {"MCP-Protocol-Version": "2025-11-25"}
    status, headers, _ = post(a, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "r", "version": "1"}}}, {})
    assert status == 200
    session = {"Mcp-Session-Id": headers["mcp-session-id"], **version}
    assert post(a, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)[0] == 202
    # A call whose answer is streamed (progress first): every event is stored before it is sent.
    status, headers, body = post(a, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "count", "arguments": {"n": 3}, "_meta": {"progressToken": 7}}}, session)
    streamed = events_of(body)
    assert status == 200 and headers["content-type"] == "text/event-stream", body
    messages = [json.loads(data).get("method") for _, data in streamed if data]
    assert messages == ["notifications/progress"] * 3 + [None] and all(event_id for event_id, _ in streamed)
    # B never saw this session: it replays, from the shared file, what came after the first event.
    status, replayed = get(b, {**session, "Last-Event-ID": streamed[0][0]})
    assert status == 200, replayed
    assert events_of(replayed) == streamed[1:]
    # Without the shared store's events (an unknown stream), B answers as before: the session is unknown here.
    assert get(b, {**session, "Last-Event-ID": "99:0"})[0] == 404
