"""Tasks on the server, both forms: the 2026-07-28 extension (SEP-2663) and the 2025-11-25 core tasks.

The same tools (tests/fixtures/tasks_server.py) are driven in memory, over stdio (a real subprocess) and over
HTTP (a real socket): creation and the strong consistency of a ``tasks/get`` right after it, progress
recorded on the task, questions that park the task until ``tasks/update``, cancellation, tool errors and
protocol errors, gating on the extension, the store's cap and TTL, and a flood of tasks with none lost.
"""

import json
import os
import subprocess
import sys
import threading
import time
from typing import Any, Callable, Dict, Iterator, List, Optional

import pytest
from support import ROOT, WAIT, RawPeer, run_concurrently, wait_until
from support.http import serving
from support.raw_http import EnvelopeClient, envelope

from mcplite.protocol import jsonrpc
from mcplite.protocol.tasks import EXTENSION_ID
from mcplite.server.task_store import MemoryTaskStore
from mcplite.transports.memory import memory_pair

sys.path.insert(0, str(ROOT / "tests" / "fixtures"))
import tasks_server  # noqa: E402

TASKS = {"extensions": {EXTENSION_ID: {}}}
ASKING = {**TASKS, "elicitation": {}, "sampling": {}}

#: Sends one 2026-07-28 request ``(method, params, capabilities)`` and returns the JSON-RPC response.
Rpc = Callable[[str, Dict[str, Any], Optional[Dict[str, Any]]], Dict[str, Any]]


class Memory:
    def __init__(self, server: Any) -> None:
        ours, theirs = memory_pair()
        self.session = server.connect(theirs)
        self.peer = RawPeer(ours)
        self._ids = iter(range(1, 10 ** 6))
        self._lock = threading.Lock()  # one request and its answer at a time on the raw peer

    def __call__(self, method: str, params: Dict[str, Any], capabilities: Optional[Dict[str, Any]]) -> Any:
        with self._lock:
            return self.peer.request(next(self._ids), method, {**params, "_meta": envelope(capabilities)})

    def close(self) -> None:
        self.session.close()


class Stdio:
    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(ROOT / "tests" / "fixtures" / "tasks_server.py"), *args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)})
        self._ids = iter(range(1, 10 ** 6))

    def __call__(self, method: str, params: Dict[str, Any], capabilities: Optional[Dict[str, Any]]) -> Any:
        assert self.process.stdin is not None and self.process.stdout is not None
        id = next(self._ids)
        message = jsonrpc.request(id, method, {**params, "_meta": envelope(capabilities)})
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()
        while True:
            line = self.process.stdout.readline()  # the process is killed by close() if the test hangs
            assert line, "the server exited"
            answer = json.loads(line)
            if answer.get("id") == id and "method" not in answer:
                return answer

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(WAIT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(WAIT)
        for stream in (self.process.stdout,):
            if stream is not None:
                stream.close()


class Http:
    def __init__(self, server: Any) -> None:
        self._serving = serving(server)
        self.client = EnvelopeClient(self._serving.__enter__())

    def __call__(self, method: str, params: Dict[str, Any], capabilities: Optional[Dict[str, Any]]) -> Any:
        return self.client.post(self.client.enveloped(method, params, capabilities=capabilities or {})).json()

    def close(self) -> None:
        self._serving.__exit__(None, None, None)


@pytest.fixture(params=["memory", "stdio", "http"])
def rpc(request: Any) -> Iterator[Rpc]:
    wire: Any = {"memory": lambda: Memory(tasks_server.build()), "stdio": Stdio,
                 "http": lambda: Http(tasks_server.build())}[request.param]()
    try:
        yield wire
    finally:
        wire.close()


def result(answer: Dict[str, Any]) -> Dict[str, Any]:
    assert "result" in answer, answer
    return answer["result"]  # type: ignore[no-any-return]


def call(rpc: Rpc, tool: str, arguments: Optional[Dict[str, Any]] = None,
         capabilities: Optional[Dict[str, Any]] = TASKS, **params: Any) -> Dict[str, Any]:
    return rpc("tools/call", {"name": tool, "arguments": arguments or {}, **params}, capabilities)


def get(rpc: Rpc, task_id: str, capabilities: Dict[str, Any] = TASKS) -> Dict[str, Any]:
    return result(rpc("tasks/get", {"taskId": task_id}, capabilities))


def poll(rpc: Rpc, task_id: str, until: Callable[[Dict[str, Any]], bool]) -> Dict[str, Any]:
    deadline = time.monotonic() + WAIT
    while True:
        task = get(rpc, task_id)
        if until(task):
            return task
        assert time.monotonic() < deadline, task
        time.sleep(0.02)


def ended(task: Dict[str, Any]) -> bool:
    return task["status"] in ("completed", "failed", "cancelled")


def created(answer: Dict[str, Any]) -> str:
    shaped = result(answer)
    assert shaped["resultType"] == "task", shaped
    assert not {"result", "error", "inputRequests", "requestState", "task", "ttl", "pollInterval"} & set(shaped)
    return shaped["taskId"]  # type: ignore[no-any-return]


# ---- the extension (2026-07-28) ---------------------------------------------------------------------------------
def test_a_task_runs_to_its_result_and_a_get_right_after_creation_resolves(rpc: Rpc) -> None:
    task_id = created(call(rpc, "sleepy", {"seconds": 0.2}))
    first = get(rpc, task_id)
    assert first["taskId"] == task_id and first["status"] in ("working", "completed")
    done = poll(rpc, task_id, ended)
    assert done["status"] == "completed" and done["result"]["content"][0]["text"] == "slept 0.2"
    assert done["statusMessage"] == "halfway"  # the progress the handler reported, recorded on the task
    assert done["ttlMs"] > 0 and done["pollIntervalMs"] > 0


def test_without_the_extension_a_task_tool_runs_directly_and_a_required_one_is_refused(rpc: Rpc) -> None:
    plain = result(call(rpc, "sleepy", {"seconds": 0}, capabilities={}))
    assert plain["resultType"] == "complete" and "taskId" not in plain and plain["content"][0]["text"] == "slept 0"
    refused = call(rpc, "must", capabilities={})
    assert refused["error"]["code"] == -32021
    assert refused["error"]["data"] == {"requiredCapabilities": {"extensions": {EXTENSION_ID: {}}}}
    for method in ("tasks/get", "tasks/update", "tasks/cancel"):
        assert rpc(method, {"taskId": "x", "inputResponses": {}}, {})["error"]["code"] == -32021


def test_forbidden_tools_ignore_the_extension_and_the_v1_task_param(rpc: Rpc) -> None:
    answer = result(call(rpc, "plain", {"x": 2}, task={"ttl": 1000}))
    assert answer["resultType"] == "complete" and answer["structuredContent"] == {"result": 4}


def test_removed_and_unknown(rpc: Rpc) -> None:
    assert rpc("tasks/result", {"taskId": "x"}, TASKS)["error"]["code"] == -32601
    assert rpc("tasks/list", {}, TASKS)["error"]["code"] == -32601
    assert rpc("tasks/get", {"taskId": "nope"}, TASKS)["error"]["code"] == -32602
    assert rpc("tasks/cancel", {"taskId": "nope"}, TASKS)["error"]["code"] == -32602


def test_tool_errors_complete_with_is_error_and_protocol_errors_fail(rpc: Rpc) -> None:
    broken = poll(rpc, created(call(rpc, "broken")), ended)
    assert broken["status"] == "completed" and broken["result"]["isError"] is True
    assert "ValueError: no good" in broken["result"]["content"][0]["text"]
    refused = poll(rpc, created(call(rpc, "refuses")), ended)
    assert refused["status"] == "failed" and "result" not in refused
    assert refused["error"] == {"code": -32000, "message": "refused", "data": {"why": "test"}}


def test_cancel_settles_cancelled_at_once_and_the_handler_sees_it(rpc: Rpc) -> None:
    task_id = created(call(rpc, "sleepy", {"seconds": WAIT}))
    ack = result(rpc("tasks/cancel", {"taskId": task_id}, TASKS))
    assert not {"taskId", "status", "result", "error", "inputRequests"} & set(ack) and ack["resultType"] == "complete"
    assert get(rpc, task_id)["status"] == "cancelled"
    assert result(rpc("tasks/cancel", {"taskId": task_id}, TASKS))["resultType"] == "complete"  # idempotent
    assert get(rpc, task_id)["status"] == "cancelled"  # the handler's late return does not undo it


def test_a_question_parks_the_task_until_tasks_update(rpc: Rpc) -> None:
    task_id = created(call(rpc, "confirm", capabilities=ASKING))
    waiting = poll(rpc, task_id, lambda task: task["status"] != "working")
    assert waiting["status"] == "input_required"
    assert waiting["inputRequests"]["ok"]["method"] == "elicitation/create"
    bad = rpc("tasks/update", {"taskId": task_id, "inputResponses": {"ok": {"action": "accept", "content": {}}}},
              TASKS)
    assert bad["error"]["code"] == -32602  # the content does not match the requested schema
    ack = result(rpc("tasks/update", {"taskId": task_id, "inputResponses": {
        "ok": {"action": "accept", "content": {"ok": True}}, "unknown": {"x": 1}}}, TASKS))
    assert ack == {"resultType": "complete", **({"_meta": ack["_meta"]} if "_meta" in ack else {})}
    done = poll(rpc, task_id, ended)
    assert done["result"]["content"][0]["text"] == "went"


def test_a_partial_answer_keeps_the_other_question_pending(rpc: Rpc) -> None:
    task_id = created(call(rpc, "two", capabilities=ASKING))
    waiting = poll(rpc, task_id, lambda task: task["status"] == "input_required")
    assert set(waiting["inputRequests"]) == {"first", "second"}
    rpc("tasks/update", {"taskId": task_id, "inputResponses": {
        "first": {"action": "accept", "content": {"name": "Ada"}}}}, TASKS)
    still = get(rpc, task_id)
    assert still["status"] == "input_required" and set(still["inputRequests"]) == {"second"}
    rpc("tasks/update", {"taskId": task_id, "inputResponses": {
        "second": {"action": "accept", "content": {"ok": True}}}}, TASKS)
    assert poll(rpc, task_id, ended)["result"]["content"][0]["text"] == "Ada:True"


def test_a_question_the_client_cannot_answer_fails_the_task(rpc: Rpc) -> None:
    failed = poll(rpc, created(call(rpc, "confirm")), ended)  # no elicitation capability declared
    assert failed["status"] == "failed" and failed["error"]["code"] == -32021


def test_input_before_the_task_comes_in_rounds_then_the_task_knows_it(rpc: Rpc) -> None:
    first = result(call(rpc, "prelude", capabilities=ASKING))
    assert first["resultType"] == "input_required" and "taskId" not in first
    assert list(first["inputRequests"]) == ["who"]
    second = call(rpc, "prelude", capabilities=ASKING, requestState=first["requestState"],
                  inputResponses={"who": {"action": "accept", "content": {"name": "Alice"}}})
    done = poll(rpc, created(second), ended)
    assert done["result"]["content"][0]["text"] == "hello Alice from task True"


# ---- in process: what only the server's own objects show ------------------------------------------------------------
def test_the_handler_sees_the_cancel() -> None:
    server = tasks_server.build()
    wire = Memory(server)
    try:
        task_id = created(call(wire, "sleepy", {"seconds": WAIT}))
        poll(wire, task_id, lambda task: "statusMessage" in task)  # the handler is running
        result(wire("tasks/cancel", {"taskId": task_id}, TASKS))
        assert server.saw_cancel.wait(WAIT)  # type: ignore[attr-defined]
        wait_until(lambda: server.tasks.running() == 0)
    finally:
        wire.close()


def test_the_store_cap_refuses_new_tasks_with_a_clear_error() -> None:
    server = tasks_server.build(task_store=MemoryTaskStore(max_tasks=2))
    wire = Memory(server)
    try:
        created(call(wire, "quick", {"n": 1}))
        created(call(wire, "quick", {"n": 2}))
        refused = call(wire, "quick", {"n": 3})
        assert refused["error"]["code"] == -32603 and "2 tasks, its limit" in refused["error"]["message"]
    finally:
        wire.close()


def test_expired_tasks_are_forgotten() -> None:
    now = [1000.0]
    server = tasks_server.build(task_ttl_ms=5000)
    server.tasks.clock = lambda: now[0]
    wire = Memory(server)
    try:
        task_id = created(call(wire, "quick", {"n": 1}))
        assert poll(wire, task_id, ended)["status"] == "completed"
        now[0] += 4.9
        assert get(wire, task_id)["taskId"] == task_id
        now[0] += 0.2
        assert wire("tasks/get", {"taskId": task_id}, TASKS)["error"]["code"] == -32602
    finally:
        wire.close()


def test_a_flood_of_tasks_loses_none() -> None:
    server = tasks_server.build(task_workers=4)
    wires = [Memory(server) for _ in range(8)]
    ids: List[str] = []
    lock = threading.Lock()

    def flood(wire: Memory) -> None:
        for n in range(125):
            task_id = created(call(wire, "quick", {"n": n}))
            with lock:
                ids.append(task_id)

    try:
        run_concurrently(flood, wires)
        assert len(set(ids)) == 1000
        wait_until(lambda: server.tasks.running() == 0)
        statuses = [server.tasks.store.get(task_id, time.time()) for task_id in ids]
        assert all(record is not None and record.status == "completed" for record in statuses)
    finally:
        for wire in wires:
            wire.close()


# ---- core tasks (2025-11-25) --------------------------------------------------------------------------------------
@pytest.fixture
def handshake() -> Iterator[RawPeer]:
    ours, theirs = memory_pair()
    session = tasks_server.build().connect(theirs)
    peer = RawPeer(ours)
    yield peer
    session.close()


def test_core_tasks_are_declared_listed_and_served(handshake: RawPeer) -> None:
    init = handshake.initialize("2025-11-25", {"elicitation": {}})["result"]
    assert init["capabilities"]["tasks"] == {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
    tools = {tool["name"]: tool for tool in handshake.request(1, "tools/list")["result"]["tools"]}
    assert tools["sleepy"]["execution"] == {"taskSupport": "optional"}
    assert tools["must"]["execution"] == {"taskSupport": "required"} and "execution" not in tools["plain"]
    made = handshake.request(2, "tools/call", {"name": "sleepy", "arguments": {"seconds": 0.1},
                                               "task": {"ttl": 60_000}})["result"]["task"]
    assert made["status"] == "working" and made["ttl"] == 60_000 and "pollInterval" in made
    final = handshake.request(3, "tasks/result", {"taskId": made["taskId"]})["result"]
    assert final["content"][0]["text"] == "slept 0.1"
    assert final["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": made["taskId"]}
    listed = handshake.request(4, "tasks/list")["result"]["tasks"]
    assert [task["taskId"] for task in listed] == [made["taskId"]] and listed[0]["status"] == "completed"
    assert handshake.request(5, "tasks/cancel", {"taskId": made["taskId"]})["error"]["code"] == -32602  # ended
    assert handshake.request(6, "tasks/update", {"taskId": made["taskId"]})["error"]["code"] == -32601


def test_core_task_rules_of_the_declaration(handshake: RawPeer) -> None:
    handshake.initialize("2025-11-25")
    assert handshake.request(1, "tools/call", {"name": "must", "arguments": {}})["error"]["code"] == -32601
    assert handshake.request(2, "tools/call", {"name": "plain", "arguments": {"x": 1}, "task": {}})["error"][
        "code"] == -32601
    running = handshake.request(3, "tools/call", {"name": "sleepy", "arguments": {"seconds": WAIT},
                                                  "task": {}})["result"]["task"]
    cancelled = handshake.request(4, "tasks/cancel", {"taskId": running["taskId"]})["result"]
    assert cancelled["status"] == "cancelled"
    assert handshake.request(5, "tasks/get", {"taskId": running["taskId"]})["result"]["status"] == "cancelled"
    assert handshake.request(6, "tasks/result", {"taskId": running["taskId"]})["error"]["code"] == -32602


def test_a_core_task_asks_the_client_with_a_request_tied_to_the_task(handshake: RawPeer) -> None:
    handshake.initialize("2025-11-25", {"elicitation": {}})
    handshake.send(jsonrpc.request(1, "tools/call", {"name": "confirm", "arguments": {}, "task": {}}))
    seen: Dict[str, Any] = {}
    while len(seen) < 2:  # the question may come before the answer that made the task, or after it
        message = handshake.next()
        if message.get("method") == "elicitation/create":
            seen["asked"] = message
        elif message.get("id") == 1:
            seen["made"] = message  # (status notifications may come between: skipped)
    made, asked = seen["made"]["result"]["task"], seen["asked"]
    assert asked["params"]["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": made["taskId"]}
    waiting = handshake.request(2, "tasks/get", {"taskId": made["taskId"]})["result"]
    assert waiting["status"] == "input_required"
    handshake.send({"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "accept", "content": {"ok": True}}})
    handshake.send(jsonrpc.request(3, "tasks/result", {"taskId": made["taskId"]}))
    statuses = []
    while True:
        message = handshake.next()
        if message.get("method") == "notifications/tasks/status":
            statuses.append(message["params"]["status"])
        elif message.get("id") == 3:
            break
    assert message["result"]["content"][0]["text"] == "went"
    assert "completed" in statuses  # the status notifications of 2025-11-25 (a MAY), sent while connected


def test_older_revisions_run_task_tools_directly() -> None:
    ours, theirs = memory_pair()
    session = tasks_server.build().connect(theirs)
    peer = RawPeer(ours)
    try:
        init = peer.initialize("2025-06-18")["result"]
        assert "tasks" not in init["capabilities"]
        assert "execution" not in peer.request(1, "tools/list")["result"]["tools"][1]
        answer = peer.request(2, "tools/call", {"name": "must", "arguments": {}, "task": {}})["result"]
        assert answer["content"][0]["text"] == "done"
        assert peer.request(3, "tasks/get", {"taskId": "x"})["error"]["code"] == -32601
    finally:
        session.close()


def test_with_sqlite_a_task_outlives_the_server_process(tmp_path: Any) -> None:
    path = str(tmp_path / "tasks.db")
    first = Stdio(path)
    try:
        task_id = created(call(first, "quick", {"n": 7}))
        assert poll(first, task_id, ended)["status"] == "completed"
        running = created(call(first, "sleepy", {"seconds": WAIT}))
    finally:
        first.process.kill()  # no goodbye: the process just ends
        first.close()
    second = Stdio(path)
    try:
        assert get(second, task_id)["result"]["structuredContent"] == {"result": 7}
        orphan = get(second, running)  # its process is gone: an answer, not "working" until the TTL
        assert orphan["status"] == "failed" and "process running this task ended" in orphan["error"]["message"]
    finally:
        second.close()


def test_a_task_cancelled_while_queued_for_a_thread_ends_cancelled() -> None:
    server = tasks_server.build(task_workers=1)
    wire = Memory(server)
    try:
        busy = created(call(wire, "sleepy", {"seconds": WAIT}))
        poll(wire, busy, lambda task: "statusMessage" in task)  # the only thread is taken
        queued = created(call(wire, "sleepy", {"seconds": WAIT}))
        assert get(wire, queued)["status"] == "working" and "statusMessage" not in get(wire, queued)
        result(wire("tasks/cancel", {"taskId": queued}, TASKS))
        result(wire("tasks/cancel", {"taskId": busy}, TASKS))
        wait_until(lambda: server.tasks.running() == 0)
        final = get(wire, queued)
        assert final["status"] == "cancelled" and "statusMessage" in final  # the cancel's, not the handler's
        assert final["statusMessage"] == "Cancelled by the client"
    finally:
        wire.close()


def test_a_task_belongs_to_the_principal_that_created_it() -> None:
    who = ["ann"]
    server = tasks_server.build(bind_principal=lambda auth: who[0])
    wire = Memory(server)
    try:
        task_id = created(call(wire, "quick", {"n": 1}))
        assert get(wire, task_id)["taskId"] == task_id
        who[0] = "bob"
        for method in ("tasks/get", "tasks/cancel"):
            assert wire(method, {"taskId": task_id}, TASKS)["error"]["code"] == -32602
        assert wire("tasks/update", {"taskId": task_id, "inputResponses": {}}, TASKS)["error"]["code"] == -32602
        who[0] = "ann"
        assert poll(wire, task_id, ended)["status"] == "completed"
    finally:
        wire.close()


class CancelAfterTheHandler(MemoryTaskStore):
    """A store that lets a task's handler settle the task before a ``tasks/cancel`` settles it, if the handler
    can: the cancel's update (from a request thread) waits, at most `GRACE` s, for the handler's last one."""

    GRACE = 0.5

    def __init__(self) -> None:
        super().__init__()
        self.handler_ended = threading.Event()

    def update(self, task_id: str, change: Callable[[Any], Any], now: float) -> Any:
        on_pool = threading.current_thread().name.startswith("mcplite-task")
        if not on_pool:
            self.handler_ended.wait(self.GRACE)
        record = super().update(task_id, change, now)
        if on_pool and record is not None and record.terminal:
            self.handler_ended.set()
        return record


@pytest.mark.parametrize("version", ["extension", "core"])
def test_a_handler_that_sees_the_cancel_cannot_complete_the_task_first(version: str) -> None:
    """The cancel settles the task before the handler hears of it: what a handler returns once cancelled (sleepy's
    "stopped") never becomes the result of a task that then reads completed (a race a stress test found)."""
    store = CancelAfterTheHandler()
    server = tasks_server.build(task_store=store)
    wire = Memory(server)
    try:
        if version == "extension":
            task_id = created(call(wire, "sleepy", {"seconds": WAIT}))
        else:
            wire.peer.initialize("2025-11-25")
            task_id = result(wire.peer.request(10 ** 6, "tools/call", {"name": "sleepy", "arguments": {
                "seconds": WAIT}, "task": {}}))["task"]["taskId"]
        wait_until(lambda: server.tasks.store.get(task_id, time.time()).status_message == "halfway")
        if version == "extension":
            result(wire("tasks/cancel", {"taskId": task_id}, TASKS))
        else:
            assert result(wire.peer.request(10 ** 6 + 1, "tasks/cancel", {"taskId": task_id}))["status"] == "cancelled"
        assert server.saw_cancel.wait(WAIT)  # type: ignore[attr-defined]
        wait_until(lambda: server.tasks.running() == 0)
        final = server.tasks.store.get(task_id, time.time())
        assert final.status == "cancelled" and final.result is None, final
    finally:
        wire.close()
