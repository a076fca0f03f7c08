"""Across hosts, with Redis holding what is shared (``examples/deploy/redis_store.py``): two independent gunicorn
masters stand for two hosts (separate ports, no ``--preload``, one shared ``MCPLITE_STATE_KEYS``), both with
``MCPLITE_REDIS_URL``, and nginx round-robin in front of them without affinity.

- A task started on one host is polled, answered (``tasks/update``), cancelled and fetched on the other, and
  tasks run through nginx round-robin; the official Python SDK's client (which has no tasks) calls and answers
  input rounds through the same front, answered by both hosts.
- A host killed mid-task (SIGKILL, master and workers): the other reports the task failed within the lease.
- A host stopped gracefully (SIGTERM: gunicorn's workers exit): its tasks are failed at once (the tasks'
  shutdown wired for WSGI), not left ``working``.
- Redis restarted mid-run: a task call made while it is down fails with a clear error, and the next one
  works once it is back, without restarting the host.
- A handshake-era stream cut on one host resumes on the other (``Last-Event-ID``): nothing lost or duplicated;
  and the same through nginx, the session's POSTs kept on their host (nginx-sessions.conf's affinity), its stream
  cut mid-read, and the resume sent to the other host by the test's nginx.
- `RedisEventStore` itself: order, the bound per stream, expiry, forget.
"""

import json
import os
import signal
import sys
import time
from pathlib import Path
from http.client import HTTPConnection
from typing import Any, Dict, Iterator, List, Set, Tuple

import pytest
from support import ROOT, WAIT, wait_until
from support.servers import (Running, Served, builtin_server, free_port, gunicorn, nginx, pid_running, python_env,
                             redis_server, require_binary)
from test_deploy_events import events_of, get, post
from test_deploy_proxy import CONFIG, Front, accept
from test_deploy_sdk import require_sdk, run_sdk

from mcplite import Client
from mcplite.errors import RemoteError
from mcplite.protocol import tasks as t

sys.path.insert(0, str(ROOT / "examples" / "deploy"))

KEYS = "37" * 32
LEASE = 1.0  # TASK_LEASE on the hosts: a lost host's tasks fail within a second of its last renewal


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    pytest.importorskip("redis")
    running, port = redis_server(tmp_path)
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        running.stop()


def host(tmp: Path, name: str, redis_url: str, **env: str) -> Served:
    """One "host": its own gunicorn master and workers, sharing only Redis and the state keys."""
    return gunicorn(tmp, "examples.deploy.app:app", ["-w", "2", "--threads", "4"], name=name,
                    env=python_env(MCPLITE_REDIS_URL=redis_url, MCPLITE_STATE_KEYS=KEYS, STATELESS="1",
                                   TASK_LEASE=str(env.pop("TASK_LEASE", LEASE)), **env))


def children(pid: int) -> List[int]:
    """The processes whose parent is ``pid`` (Linux: from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as stat:
                    if int(stat.read().rpartition(b")")[2].split()[1]) == pid:
                        found.append(int(entry))
            except (OSError, ValueError, IndexError):
                pass
    return found


def workers_of(served: Served) -> Set[int]:
    """The worker processes of a host's gunicorn master (both of them, once both have started)."""
    master = served.running.process.pid
    wait_until(lambda: len(children(master)) == 2, WAIT, f"{served.url}: two gunicorn workers")
    return set(children(master))


def test_a_task_started_on_one_host_is_polled_answered_cancelled_and_fetched_on_the_other(
        tmp_path: Path, redis_url: str, cleanup: List[Any]) -> None:
    require_binary("nginx")
    a = host(tmp_path, "host-a", redis_url)
    cleanup.append(a)
    b = host(tmp_path, "host-b", redis_url)
    cleanup.append(b)
    front = Front(tmp_path, a.port, b.port)
    cleanup.append(front)
    with Client(a.url, protocol_version="2026-07-28", timeout=WAIT, elicitation=accept) as on_a, \
            Client(b.url, protocol_version="2026-07-28", timeout=WAIT, elicitation=accept) as on_b, \
            Client(front.url, protocol_version="2026-07-28", timeout=WAIT, elicitation=accept) as anywhere:
        pids_a, pids_b = workers_of(a), workers_of(b)  # (not from a few calls: one may miss a worker)
        # Answered on the other host: its questions polled and answered there, its result fetched there.
        asked = on_a.start_tool_call("approve", {"item": "x"}, task=True)
        on_b_handle = on_b.task(asked.task_id)
        wait_until(lambda: on_b_handle.status() == t.INPUT_REQUIRED, WAIT)
        result = on_b_handle.result(WAIT)
        assert result["structuredContent"]["approved"] is True
        assert result["structuredContent"]["ran_by"] in pids_a
        # Cancelled on the other host: the handler on A hears it, the task reads cancelled everywhere.
        slow = on_a.start_tool_call("slow", {"seconds": 60}, task=True)
        there = on_b.task(slow.task_id)
        assert there.status() == t.WORKING
        wait_until(lambda: (there.status(), there.progress)[1] is not None, WAIT)
        assert str(there.progress).startswith("started by ")
        there.cancel()
        assert slow.status() == t.CANCELLED and there.status() == t.CANCELLED
        # Round-robin, no affinity: every request of a task may land on either host.
        for _ in range(3):
            handle = anywhere.start_tool_call("approve", {"item": "y"}, task=True)
            assert handle.result(WAIT)["structuredContent"]["approved"] is True
        quick = anywhere.start_tool_call("slow", {"seconds": 0.2}, task=True)
        assert quick.result(WAIT)["structuredContent"]["cancelled"] is False
    # The official Python SDK's client through the same front (it has no tasks: its calls and input rounds).
    require_sdk()
    tally = run_sdk("calls", front.url, "2026-07-28", "2", "10")
    assert tally["failed"] == 0 and tally["ok"] == 20, tally["errors"]
    assert set(tally["pids"]) & pids_a and set(tally["pids"]) & pids_b  # both hosts answered it
    report = run_sdk("rounds", front.url, "2026-07-28", "2")
    assert report["failed"] == 0 and all(result["summary"] == "short" for result in report["results"]), report


def test_a_host_killed_mid_task_reports_failure_within_the_lease(tmp_path: Path, redis_url: str,
                                                                   cleanup: List[Any]) -> None:
    a = host(tmp_path, "host-a", redis_url)
    cleanup.append(a)
    b = host(tmp_path, "host-b", redis_url)
    cleanup.append(b)
    with Client(a.url, protocol_version="2026-07-28", timeout=WAIT) as on_a, \
            Client(b.url, protocol_version="2026-07-28", timeout=WAIT) as on_b:
        started = on_a.start_tool_call("slow", {"seconds": 60}, task=True)
        time.sleep(LEASE)  # a renewal or two: the lease is alive while the host is
        assert on_b.task(started.task_id).status() == t.WORKING
        master = a.running.process.pid
        workers = children(master)
        assert workers
        for pid in [master, *workers]:  # the host is lost: nothing runs its shutdown
            os.kill(pid, signal.SIGKILL)
        a.running.process.wait(WAIT)
        wait_until(lambda: not any(pid_running(pid) for pid in workers), WAIT)
        killed = time.monotonic()
        there = on_b.task(started.task_id)
        wait_until(lambda: there.status() == t.FAILED, WAIT, "the lost host's task stayed working")
        assert time.monotonic() - killed < LEASE + 1.0
        assert "lease expired" in str(there.info.get("error"))


def test_a_host_stopped_gracefully_fails_its_tasks_at_once(tmp_path: Path, redis_url: str,
                                                            cleanup: List[Any]) -> None:
    a = host(tmp_path, "host-a", redis_url, TASK_LEASE="600")  # the lease would take ten minutes
    cleanup.append(a)
    b = host(tmp_path, "host-b", redis_url, TASK_LEASE="600")
    cleanup.append(b)
    with Client(a.url, protocol_version="2026-07-28", timeout=WAIT) as on_a, \
            Client(b.url, protocol_version="2026-07-28", timeout=WAIT) as on_b:
        started = on_a.start_tool_call("slow", {"seconds": 60}, task=True)
        assert on_b.task(started.task_id).status() == t.WORKING
        a.running.process.send_signal(signal.SIGTERM)  # gunicorn stops its workers gracefully
        a.running.process.wait(WAIT)
        there = on_b.task(started.task_id)
        assert there.status() == t.FAILED, there.info
        assert "stopped" in str(there.info.get("error"))


def test_a_stream_cut_on_one_host_resumes_on_the_other(tmp_path: Path, redis_url: str,
                                                       cleanup: List[Any]) -> None:
    shared = {"MCPLITE_REDIS_URL": redis_url}
    a = builtin_server(tmp_path, "host-a", shared)
    cleanup.append(a)
    b = builtin_server(tmp_path, "host-b", shared)
    cleanup.append(b)
    version = {"MCP-Protocol-Version": "2025-11-25"}
    status, headers, _ = post(a, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "r", "version": "1"}}}, {})
    assert status == 200
    session = {"Mcp-Session-Id": headers["mcp-session-id"], **version}
    assert post(a, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)[0] == 202
    status, headers, body = post(a, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "count", "arguments": {"n": 5}, "_meta": {"progressToken": 7}}}, session)
    streamed = events_of(body)
    assert status == 200 and len(streamed) == 6, body
    for cut in (0, 2, 5):  # wherever the stream broke, B replays exactly what came after
        status, replayed = get(b, {**session, "Last-Event-ID": streamed[cut][0]})
        assert status == 200, replayed
        assert events_of(replayed) == streamed[cut + 1:]
    assert [json.loads(data).get("id") for _, data in streamed][-1] == 2


class ResumeElsewhere:
    """nginx with nginx-sessions.conf's affinity (a session's requests go to the host its id names), except for
    a resume: a request with ``Last-Event-ID`` goes to the OTHER host. The shipped configuration sends it to the
    owner, which by design can replay it from its own memory; here it must come from Redis. Its log says which
    upstream answered each request."""

    def __init__(self, tmp: Path, first: int, second: int) -> None:
        self.port = free_port()
        self.log = tmp / "routed.log"
        config = CONFIG.read_text()
        for shipped, port in (("127.0.0.1:8000", self.port), ("127.0.0.1:8001", first), ("127.0.0.1:8002", second)):
            config = config.replace(shipped, f"127.0.0.1:{port}")
        resume = ("    map \"$http_last_event_id|$http_mcp_session_id\" $mcp_route {\n"
                  "        \"~^.+\\|a-\" mcp_b;\n        \"~^.+\\|b-\" mcp_a;\n        default $mcp_upstream;\n    }\n"
                  "    log_format routed '$request_method $upstream_addr';\n")
        shipped = "        location /mcp {\n            proxy_pass http://$mcp_upstream;\n"
        assert shipped in config and "\nhttp {\n" in config
        config = config.replace(shipped, "        location /mcp {\n            proxy_pass http://$mcp_route;\n"
                                         f"            access_log {self.log} routed;\n")
        config = config.replace("\nhttp {\n", "\nhttp {\n" + resume, 1)
        self.nginx = nginx(tmp, config)
        self.nginx.wait_for_port(self.port)

    def routed(self) -> List[Tuple[str, int]]:
        """(method, upstream port) of every request so far."""
        lines = [line.split() for line in self.log.read_text().splitlines()]
        return [(method, int(upstream.rpartition(":")[2])) for method, upstream in lines]

    def stop(self) -> None:
        self.nginx.stop()


def test_a_stream_cut_behind_nginx_resumes_on_the_other_host(tmp_path: Path, redis_url: str,
                                                             cleanup: List[Any]) -> None:
    require_binary("nginx")
    a = builtin_server(tmp_path, "host-a", {"MCPLITE_REDIS_URL": redis_url, "SESSION_ID_PREFIX": "a-"})
    cleanup.append(a)
    b = builtin_server(tmp_path, "host-b", {"MCPLITE_REDIS_URL": redis_url, "SESSION_ID_PREFIX": "b-"})
    cleanup.append(b)
    front = ResumeElsewhere(tmp_path, a.port, b.port)
    cleanup.append(front)
    status, headers, _ = post(front, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "r", "version": "1"}}}, {})
    assert status == 200
    session = {"Mcp-Session-Id": headers["mcp-session-id"], "MCP-Protocol-Version": "2025-11-25"}
    owner, other = (a, b) if session["Mcp-Session-Id"].startswith("a-") else (b, a)
    assert post(front, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)[0] == 202
    # The call's SSE answer, read through nginx up to its third event, then the connection cut.
    connection = HTTPConnection("127.0.0.1", front.port, timeout=WAIT)
    try:
        connection.request("POST", "/mcp", json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "count", "arguments": {"n": 5}, "_meta": {"progressToken": 7}}}),
            {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **session})
        response = connection.getresponse()
        assert response.status == 200
        before = b""
        while len(events_of(before)) < 3:  # (a priming event, without data, may come first)
            line = response.readline()
            assert line, before
            before += line
    finally:
        connection.close()
    seen = events_of(before)
    assert len(seen) == 3
    status, replayed = get(front, {**session, "Last-Event-ID": seen[-1][0]})
    assert status == 200, replayed
    after = events_of(replayed)
    # Nothing lost, nothing twice: progress 1..5 in order, then the result, each event once.
    everything = [json.loads(data) for _, data in seen + after]
    assert [message.get("params", {}).get("progress") for message in everything[:-1]] == [1, 2, 3, 4, 5]
    assert everything[-1]["id"] == 2 and everything[-1]["result"]["structuredContent"]["result"] == 5
    ids = [event_id for event_id, _ in seen + after]
    assert len(set(ids)) == len(ids) == 6
    # Every POST went to the session's host, the resume (the GET) to the other one.
    wait_until(lambda: len(front.routed()) == 4, WAIT, "nginx did not log the resume")  # (logged once closed)
    routed = front.routed()
    assert [method for method, _ in routed] == ["POST", "POST", "POST", "GET"], routed
    assert {port for method, port in routed[1:] if method == "POST"} == {owner.port}
    assert routed[-1] == ("GET", other.port)


def test_the_redis_event_store_keeps_order_bounds_and_expires(redis_url: str) -> None:
    from redis_store import RedisEventStore

    store, other = RedisEventStore(redis_url, max_events=5, expire_seconds=1.0), RedisEventStore(redis_url)
    try:
        for seq in range(1, 4):
            store.append("s1", "1", seq, f"m{seq}")
        store.append("s1", "2", 1, "second stream")
        assert other.replay("s1", "1", 1) == [(2, "m2"), (3, "m3")]  # another host sees them
        assert other.replay("s1", "1", 3) == [] and other.replay("s1", "9", 0) is None
        for seq in range(4, 9):  # past the bound: the oldest are dropped, a replay from before them refused
            store.append("s1", "1", seq, f"m{seq}")
        assert store.replay("s1", "1", 0) is None and store.replay("s1", "1", 2) is None
        assert store.replay("s1", "1", 3) == [(seq, f"m{seq}") for seq in range(4, 9)]
        other.forget("s1")
        assert store.replay("s1", "1", 3) is None and store.replay("s1", "2", 0) is None
        store.append("s2", "1", 1, "short-lived")
        wait_until(lambda: store.replay("s2", "1", 0) is None, WAIT, "the events never expired")
        with pytest.raises(ValueError):
            RedisEventStore(redis_url, max_events=0)
    finally:
        store.close()
        other.close()


def test_redis_restarted_mid_run_fails_clearly_then_recovers(tmp_path: Path, cleanup: List[Any]) -> None:
    pytest.importorskip("redis")
    redis, port = redis_server(tmp_path)
    cleanup.append(redis)
    url = f"redis://127.0.0.1:{port}/0"
    a = host(tmp_path, "host-a", url)
    cleanup.append(a)
    with Client(a.url, protocol_version="2026-07-28", timeout=WAIT) as client:
        assert client.start_tool_call("slow", {"seconds": 0.1}, task=True).result(WAIT).get("isError") is not True
        redis.stop()
        with pytest.raises(RemoteError, match="the task store is unavailable; try again later"):
            client.start_tool_call("slow", {"seconds": 0.1}, task=True)  # a clear error, at once
        again = Running("redis-server", [redis.process.args[0], *redis.process.args[1:]], tmp_path / "redis2.log")
        cleanup.append(again)
        again.wait_for_port(port)
        handle = client.start_tool_call("slow", {"seconds": 0.1}, task=True)
        assert handle.result(WAIT)["structuredContent"]["cancelled"] is False
