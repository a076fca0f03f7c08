"""Tasks from the client: `Client.start_tool_call(task=True)` and its `Task` handle, ``call_tool(task=True)``,
required-task tools called as tasks unasked, questions inside a task answered by the client's callbacks; both
forms (the 2026-07-28 extension and 2025-11-25 core tasks) against our own server in memory, over stdio and over
HTTP.
"""

import os
import sys
import time
from typing import Any, Dict, Iterator

import pytest
from support import ROOT, WAIT, Recording
from support.http import serving

from mcplite import Client
from mcplite.errors import RemoteError, RequestCancelled, RequestTimeout
from mcplite.transports.memory import memory_pair

sys.path.insert(0, str(ROOT / "tests" / "fixtures"))
import tasks_server  # noqa: E402

ENVELOPE_VERSION = "2026-07-28"
CORE = "2025-11-25"


def answers(params: Dict[str, Any]) -> Dict[str, Any]:
    """The elicitation callback: names Alice, and says yes."""
    properties = params["requestedSchema"].get("properties", {})
    content = {"name": "Alice"} if "name" in properties else {"ok": True}
    return {"action": "accept", "content": content}


def sampling(params: Dict[str, Any]) -> Dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "test", "stopReason": "endTurn"}


OPTIONS: Dict[str, Any] = {"timeout": WAIT, "elicitation": answers, "sampling": sampling}


@pytest.fixture(params=[("memory", ENVELOPE_VERSION), ("memory", CORE), ("stdio", ENVELOPE_VERSION), ("stdio", CORE),
                        ("http", ENVELOPE_VERSION), ("http", CORE)], ids=lambda p: f"{p[0]}-{p[1]}")
def client(request: Any) -> Iterator[Client]:
    wire, version = request.param
    if wire == "memory":
        with Client(tasks_server.build(), protocol_version=version, **OPTIONS) as connected:
            yield connected
    elif wire == "stdio":
        with Client.stdio([sys.executable, str(ROOT / "tests" / "fixtures" / "tasks_server.py")],
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, protocol_version=version,
                          **OPTIONS) as connected:
            yield connected
    else:
        with serving(tasks_server.build()) as http:
            with Client(http.url, protocol_version=version, **OPTIONS) as connected:
                yield connected


def test_a_task_handle_polls_to_the_result(client: Client) -> None:
    task = client.start_tool_call("sleepy", {"seconds": 0.3}, task=True)
    assert task.form == ("extension" if client.protocol_version == ENVELOPE_VERSION else "core") and task.task_id
    assert task.status() in ("working", "completed")
    assert task.wait(WAIT) == "completed" and task.done
    assert task.result()["content"][0]["text"] == "slept 0.3"
    assert task.progress == "halfway"
    assert client.task(task.task_id).status() == "completed"  # a handle from the id alone


def test_call_tool_as_a_task_and_required_tools_unasked(client: Client) -> None:
    assert client.call_tool("quick", {"n": 3}, task=True)["structuredContent"] == {"result": 3}
    assert client.call_tool("must", {"word": "yes"})["content"][0]["text"] == "yes"  # only ever a task
    assert client.call_tool("plain", {"x": 2}, task=True)["structuredContent"] == {"result": 4}  # never one


def test_questions_inside_a_task_go_to_the_callbacks(client: Client) -> None:
    assert client.start_tool_call("confirm", task=True).result()["content"][0]["text"] == "went"
    assert client.start_tool_call("two", task=True).result()["content"][0]["text"] == "Alice:True"
    assert client.start_tool_call("sample_it", task=True).result()["content"][0]["text"] == "hi"


def test_cancel(client: Client) -> None:
    task = client.start_tool_call("sleepy", {"seconds": WAIT}, task=True)
    with pytest.raises(RequestTimeout):
        task.wait(0.05)
    task.cancel()
    assert task.status() == "cancelled"
    with pytest.raises(RequestCancelled):
        task.result()


def test_failures(client: Client) -> None:
    broken = client.start_tool_call("broken", task=True).result()
    assert broken["isError"] is True and "no good" in broken["content"][0]["text"]
    with pytest.raises(RemoteError) as refused:
        client.start_tool_call("refuses", task=True).result()
    assert refused.value.code == -32000 and refused.value.data == {"why": "test"}


def test_input_before_the_task_is_answered_in_rounds() -> None:
    with Client(tasks_server.build(), protocol_version=ENVELOPE_VERSION, **OPTIONS) as client:
        assert client.call_tool("prelude")["content"][0]["text"] == "hello Alice from task True"


def test_revisions_without_tasks_answer_directly() -> None:
    with Client(tasks_server.build(), protocol_version="2025-06-18", **OPTIONS) as client:
        task = client.start_tool_call("sleepy", {"seconds": 0}, task=True)
        assert task.form == "direct" and task.task_id is None and task.done
        assert task.result()["content"][0]["text"] == "slept 0"
        task.cancel()  # nothing to cancel


@pytest.mark.parametrize("version", [ENVELOPE_VERSION, CORE])
def test_polling_honours_the_poll_interval(version: str) -> None:
    server = tasks_server.build(task_poll_interval_ms=200)
    ours, theirs = memory_pair()
    session = server.connect(theirs)
    recording = Recording(ours)
    try:
        with Client(recording, protocol_version=version, **OPTIONS) as client:
            started = time.monotonic()
            task = client.start_tool_call("sleepy", {"seconds": 0.6}, task=True)
            assert task.poll_interval == 0.2
            assert task.wait(WAIT) == "completed"
            elapsed = time.monotonic() - started
        polls = [m for m in recording.sent if isinstance(m, dict) and m.get("method") == "tasks/get"]
        # One poll per interval, give or take: a busy loop would send hundreds in this time.
        assert 1 <= len(polls) <= elapsed / 0.2 + 2
    finally:
        session.close()
