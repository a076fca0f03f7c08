"""Deployments under gunicorn and waitress, as users run them: what cannot work says so at once, with the fix;
what can, works.

The app is ``examples/deploy/app.py`` (docs/http.md's recipes), configured by environment variables:

- the default stateful app on gunicorn's default sync worker: a session is refused at once (no hang), with
  a 500 whose JSON-RPC error names ``--threads`` and ``stateless=True``; 2026-07-28 works there, but a listen
  is refused the same way;
- ``--threads 4``, and waitress with threads: sessions work, sampling and elicitation included; waitress with
  4 threads and ``max_streams=2`` is not stalled by four sessions' GET streams;
- ``-w 4`` stateless: 1,000 calls from 8 clients spread over the workers, each in the access log;
- ``-w 2`` with sessions: a request that reaches a process without the session gets a 404 saying where
  sessions live;
- ``-w 4 --preload`` and ``MCPLITE_STATE_KEYS`` at 2026-07-28: the input-required rounds of one call are
  answered by different processes; without either (each worker its own key) the warning is logged and a
  crossing round gets -32602.
"""

import json
import os
import signal
import time
from http.client import HTTPConnection
from pathlib import Path
from typing import Any, Dict, Iterator, List, Set, Tuple

import pytest
from support import WAIT, run_concurrently
from support.servers import Served, gunicorn, python_env, waitress

from mcplite import Client
from mcplite.errors import MCPError, RPCError, SessionExpired

APP = "examples.deploy.app:app"

#: For the tests that make many calls through real servers at once: far more than they take (a few
#: seconds), for a CI machine busy with other work (10 s was once too short for 40 calls of 3 rounds each).
BUSY_WAIT = 60.0


def accept(params: Dict[str, Any]) -> Dict[str, Any]:
    return {"action": "accept", "content": {"ok": True}}


def summarize(params: Dict[str, Any]) -> Dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "short"}, "model": "test"}


def client(served: Served, version: str, timeout: float = WAIT) -> Client:
    return Client(served.url, protocol_version=version, timeout=timeout, elicitation=accept, sampling=summarize)


@pytest.fixture
def started(tmp_path: Path) -> Iterator[List[Served]]:
    servers: List[Served] = []
    yield servers
    for served in servers:
        served.stop()


def start(started: List[Served], tmp_path: Path, args: List[str], name: str = "gunicorn", **env: str) -> Served:
    served = gunicorn(tmp_path, APP, args, env=python_env(**env), name=name)
    started.append(served)
    return served


def raw_initialize(served: Served) -> Any:
    connection = HTTPConnection("127.0.0.1", served.port, timeout=WAIT)
    try:
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}})
        connection.request("POST", "/mcp", body, {"Content-Type": "application/json",
                                                  "Accept": "application/json, text/event-stream"})
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


# ---- one sync worker: sessions cannot work, and say so ------------------------------------------------------
def test_sessions_on_gunicorns_default_sync_worker_are_refused_at_once_with_the_fix(started: List[Served],
                                                                                      tmp_path: Path) -> None:
    served = start(started, tmp_path, [])  # gunicorn's defaults: one sync worker, one request at a time
    began = time.monotonic()
    status, body = raw_initialize(served)
    assert time.monotonic() - began < 2  # immediate (well under 1 s when the machine is idle), not a timeout
    assert status == 500
    assert body["id"] == 1 and body["error"]["code"] == -32603
    message = body["error"]["message"]
    assert "one request at a time" in message and "--threads" in message and "stateless=True" in message
    # mcplite's client, offered only a handshake revision, fails at once with the server's reason.
    with pytest.raises(MCPError) as failure:
        client(served, "2025-11-25").__enter__()
    assert "--threads" in str(failure.value) or "--threads" in getattr(failure.value, "body", "")
    assert time.monotonic() - began < 5
    # Refused every time, logged once (per worker).
    assert raw_initialize(served)[0] == 500
    served.stop()
    assert served.output().count("Sessions cannot work here") == 1


def test_revision_2026_07_28_works_on_the_default_sync_worker(started: List[Served], tmp_path: Path) -> None:
    served = start(started, tmp_path, [])
    with client(served, "2026-07-28") as enveloped:
        result = enveloped.call_tool("confirm_and_summarize", {"topic": "sync"})
        assert result["structuredContent"]["summary"] == "short"
        # But a listen stream would hold the one thread for its lifetime: refused at once, with the fix.
        began = time.monotonic()
        with pytest.raises(MCPError) as failure:
            enveloped.listen(tools=True)
        assert time.monotonic() - began < 2
        assert "one request at a time" in str(failure.value) and "--threads" in str(failure.value)
        assert enveloped.call_tool("whoami")["structuredContent"]["result"] > 0  # and the server still serves


def test_sessions_work_with_threads(started: List[Served], tmp_path: Path) -> None:
    served = start(started, tmp_path, ["--threads", "4"])
    with client(served, "2025-11-25") as session:
        assert session.protocol_version == "2025-11-25"
        result = session.call_tool("confirm_and_summarize", {"topic": "threads"})  # a sampling request mid-call
    assert result["structuredContent"]["summary"] == "short"


def test_sessions_work_under_waitress_with_threads_for_their_streams(started: List[Served], tmp_path: Path) -> None:
    served = waitress(tmp_path, APP, ["--threads=12"])
    started.append(served)

    def session(index: int) -> str:
        with client(served, "2025-11-25") as connected:
            result = connected.call_tool("confirm_and_summarize", {"topic": str(index)})
        return str(result["structuredContent"]["summary"])

    # Each session holds a thread for its GET stream, and each call one more while it waits for the answer.
    assert run_concurrently(session, range(4), timeout=BUSY_WAIT) == ["short"] * 4


def test_streams_cannot_take_every_thread_with_max_streams(started: List[Served], tmp_path: Path) -> None:
    # waitress with 4 threads: 4 sessions' GET streams would hold all 4, and every later request would wait
    # (a call that waits for the client's answer holds one more). max_streams=2 refuses the other GET streams
    # (503; the client goes on without one), leaving 2 threads for the requests.
    served = waitress(tmp_path, APP, ["--threads=4"], env=python_env(MAX_STREAMS="2"))
    started.append(served)

    def session(index: int) -> int:
        with client(served, "2025-11-25") as connected:
            return len({connected.call_tool("whoami")["structuredContent"]["result"] for _ in range(20)})

    assert run_concurrently(session, range(4), timeout=BUSY_WAIT) == [1] * 4
    served.stop()
    assert served.output().count("(max_streams=2)") == 1  # said once


def test_stateless_calls_spread_over_four_sync_workers(started: List[Served], tmp_path: Path) -> None:
    served = start(started, tmp_path, ["-w", "4"], STATELESS="1", ACCESS_LOG="1", MCPLITE_STATE_KEYS="ab" * 32)

    def calls(_: int) -> Set[int]:
        with client(served, "2025-11-25") as stateless:
            return {stateless.call_tool("whoami")["structuredContent"]["result"] for _ in range(125)}

    pids = set().union(*run_concurrently(calls, range(8), timeout=BUSY_WAIT))
    assert len(pids) >= 2  # 1,000 calls from 8 concurrent clients, none failed
    served.stop()
    # The access log asked for reaches stderr under gunicorn too (gunicorn configures no root logger).
    assert served.output().count('"POST /mcp" 200') >= 1000


def raw_request(served: Served, body: Dict[str, Any], session_id: str) -> Tuple[int, Any]:
    """One POST on a fresh connection (so the kernel picks a worker for it), as a client of the session."""
    connection = HTTPConnection("127.0.0.1", served.port, timeout=WAIT)
    try:
        connection.request("POST", "/mcp", json.dumps(body), {
            "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
            "Mcp-Session-Id": session_id, "MCP-Protocol-Version": "2025-11-25", "Connection": "close"})
        response = connection.getresponse()
        return response.status, json.loads(response.read() or b"null")
    finally:
        connection.close()


def test_a_session_that_reaches_another_worker_is_told_where_sessions_live(started: List[Served],
                                                                             tmp_path: Path) -> None:
    # Which worker the kernel hands a connection to is not ours to choose (an idle worker may take them all).
    # So when a request reaches the session's owner, the owner is killed: the session's next request reaches a
    # process without it, as it would on another worker. 16 threads a worker: a failed session's GET stream,
    # held until a keep-alive finds the client gone, must not use up the threads this test needs.
    served = start(started, tmp_path, ["-w", "2", "--threads", "16"])
    session_id = initialize_session(served)
    whoami = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "whoami", "arguments": {}}}
    status, answer = raw_request(served, whoami, session_id)
    if status == 200:  # the owner answered: end it
        os.kill(answer["result"]["structuredContent"]["result"], signal.SIGKILL)
        status, answer = raw_request(served, whoami, session_id)
    assert status == 404, answer
    message = answer["error"]["message"]
    assert "another process" in message and "session_id_prefix" in message and "--threads" in message
    # mcplite's client shows the server's reason in SessionExpired.
    with pytest.raises(SessionExpired) as expired:
        with client(served, "2025-11-25") as session:
            os.kill(session.call_tool("whoami")["structuredContent"]["result"], signal.SIGKILL)
            session.call_tool("whoami")
    assert "another process" in str(expired.value)
    served.stop()
    assert "Sessions live in the memory of the process" in served.output()


def initialize_session(served: Served) -> str:
    """Initialize a session by hand (no GET stream); its id."""
    connection = HTTPConnection("127.0.0.1", served.port, timeout=WAIT)
    try:
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}})
        connection.request("POST", "/mcp", body, {"Content-Type": "application/json", "Connection": "close",
                                                  "Accept": "application/json, text/event-stream"})
        response = connection.getresponse()
        response.read()
        assert response.status == 200
        return str(response.getheader("Mcp-Session-Id"))
    finally:
        connection.close()


# ---- 2026-07-28 across workers: the key that seals requestState must be shared ------------------------------
# Which worker the kernel hands a connection to is not ours to choose: an idle worker may take them all. So
# that every input round of a call reaches another process than the round before (the property under test),
# these workers are replaced after each request (--max-requests 1): each round is answered by a new process.
REPLACED = ["--max-requests", "1"]


def rounds_by_workers(served: Served, clients: int, calls: int) -> List[Dict[str, Any]]:
    def call(_: int) -> List[Dict[str, Any]]:
        with client(served, "2026-07-28") as enveloped:
            return [enveloped.call_tool("confirm_and_summarize", {"topic": "scale"})["structuredContent"]
                    for _ in range(calls)]

    return [result for results in run_concurrently(call, range(clients), timeout=BUSY_WAIT) for result in results]


def crossed(result: Dict[str, Any]) -> bool:
    return len({result["asked_by"], result["sampled_by"], result["answered_by"]}) == 3


def test_input_rounds_cross_preloaded_workers(started: List[Served], tmp_path: Path) -> None:
    served = start(started, tmp_path, ["-w", "4", "--preload", *REPLACED])  # workers forked with the key
    results = rounds_by_workers(served, 4, 3)
    assert len(results) == 12 and all(result["summary"] == "short" for result in results)
    assert all(crossed(result) for result in results)  # three rounds, three processes, each call
    served.stop()
    assert "requestState" not in served.output()  # shared key: no warning


def test_input_rounds_on_workers_that_are_not_replaced(started: List[Served], tmp_path: Path) -> None:
    served = start(started, tmp_path, ["-w", "4", "--preload"])  # as deployed: whichever worker takes a round
    results = rounds_by_workers(served, 4, 10)
    assert len(results) == 40 and all(result["summary"] == "short" for result in results)


def test_input_rounds_cross_workers_with_a_configured_key(started: List[Served], tmp_path: Path) -> None:
    served = start(started, tmp_path, ["-w", "3", *REPLACED], MCPLITE_STATE_KEYS="11" * 32)
    results = rounds_by_workers(served, 1, 2)
    assert all(result["summary"] == "short" and crossed(result) for result in results)


def test_workers_with_keys_of_their_own_warn_and_refuse_a_crossing_round(started: List[Served],
                                                                           tmp_path: Path) -> None:
    served = start(started, tmp_path, ["-w", "2", *REPLACED])  # no --preload, no MCPLITE_STATE_KEYS
    with client(served, "2026-07-28") as enveloped, pytest.raises(RPCError) as refused:
        enveloped.call_tool("confirm_and_summarize", {"topic": "keys"})  # its second round: another process
    assert refused.value.code == -32602 and "Invalid or expired requestState" in str(refused.value)
    served.stop()
    assert "each with a key of its own for requestState" in served.output()
