"""Tasks and resource subscriptions through the gateway.

Tasks: a front client that calls with a task (2025-11-25 core tasks, or the 2026-07-28 tasks extension) on a
tool whose upstream takes tasks gets a task of the gateway's, which runs the call as a task upstream; the task's
questions reach the front; ``tasks/cancel`` in front cancels the upstream's task. Subscriptions: a front
client's subscription (``resources/subscribe``, or a 2026-07-28 listen) is relayed to the upstream serving the
URI, and its updates reach every front subscriber. Upstreams are real processes or real HTTP servers on
127.0.0.1; every wait is bounded by WAIT.
"""

import queue
import sys
import threading
from typing import Any, Dict, List

import pytest
from support import ROOT, WAIT, wait_until
from support.http import serving

from mcplite import Client, Gateway, Server
from mcplite.protocol.versions import ENVELOPE_VERSIONS, HANDSHAKE_VERSIONS

FRONTS = {"handshake": "2025-11-25", "envelope": ENVELOPE_VERSIONS[0]}
PAIRS = [(front, upstream) for front in ("handshake", "envelope") for upstream in ("handshake", "envelope")]


def pinned(era: str) -> Dict[str, Any]:
    return {"command": sys.executable, "args": ["-m", "examples.gateway.pinned_server", era, "examples.everything_server"],
            "cwd": str(ROOT)}


# ---- tasks --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("front, upstream", PAIRS)
def test_a_task_in_front_runs_as_a_task_upstream_and_its_question_reaches_the_front(front: str, upstream: str) -> None:
    upstream_tasks: List[Any] = []
    with Gateway({"mcpServers": {"ev": pinned(upstream)}}) as gateway:
        calls = gateway.upstreams["ev"].in_flight

        def confirm(params: Dict[str, Any]) -> Dict[str, Any]:
            # The upstream call waiting for this answer (its task id is read once it is over: on 2025-11-25 the
            # task's question may overtake the answer that creates the task).
            upstream_tasks.extend(calls)
            assert params["message"] == "Delete a.txt?"
            return {"action": "accept", "content": {"confirm": True}}

        with Client(gateway, protocol_version=FRONTS[front], elicitation=confirm) as client:
            if front == "handshake":  # the front tool says what the upstream's does (2025-11-25 lists it)
                tools = {tool["name"]: tool for tool in client.list_tools()}
                assert tools["ev_confirm_delete"]["execution"]["taskSupport"] == "optional"
                assert "execution" not in tools["ev_greet"] or upstream == "envelope"
            task = client.start_tool_call("ev_confirm_delete", {"filename": "a.txt"}, task=True)
            assert task.form == ("core" if front == "handshake" else "extension"), task
            assert task.result(WAIT)["content"][0]["text"] == "Deleted a.txt"
            assert len(upstream_tasks) == 1 and isinstance(upstream_tasks[0].task_id, str)  # a task upstream too
            # Called without a task, the same tool runs without one upstream.
            upstream_tasks.clear()
            assert client.call_tool("ev_confirm_delete", {"filename": "a.txt"})["content"][0]["text"] == \
                "Deleted a.txt"
            assert [call.task_id for call in upstream_tasks] == [None]


@pytest.mark.parametrize("front, upstream", [("handshake", "handshake"), ("envelope", "envelope")])
def test_cancelling_the_front_task_cancels_the_upstream_task(front: str, upstream: str) -> None:
    with Gateway({"mcpServers": {"ev": pinned(upstream)}}) as gateway, \
            Client(gateway, protocol_version=FRONTS[front]) as client:
        state = gateway.upstreams["ev"]
        task = client.start_tool_call("ev_slow_compute", {"seconds": WAIT * 4}, task=True)
        upstream_id = wait_until(lambda: state.in_flight and state.in_flight[0].task_id,
                                 message="the upstream task was not started")
        assert state.client is not None
        assert state.client.task(upstream_id).status() == "working"
        task.cancel()
        assert task.status() == "cancelled"
        wait_until(lambda: not state.in_flight, message="the upstream call did not end")
        assert state.client.task(upstream_id).status() == "cancelled"


@pytest.mark.parametrize("upstream", ["handshake", "envelope"])
def test_a_tool_the_upstream_runs_only_as_a_task_serves_a_front_without_tasks(upstream: str) -> None:
    """A 2025-06-18 client has no tasks: the gateway waits for the upstream's task and answers the call."""
    with Gateway({"mcpServers": {"ev": pinned(upstream)}}) as gateway, \
            Client(gateway, protocol_version="2025-06-18") as client:
        result = client.call_tool("ev_failing_job")
        assert result.get("isError") is True and "The job failed" in result["content"][0]["text"], result


# ---- subscriptions ------------------------------------------------------------------------------------------
def notes_server(era: str) -> Server:
    server = Server("notes", supported_versions=HANDSHAKE_VERSIONS if era == "handshake" else ENVELOPE_VERSIONS)

    @server.resource("note://today", mime_type="text/plain")
    def today() -> str:
        return "buy milk"

    @server.resource("note://day/{day}", mime_type="text/plain")
    def day(day: str) -> str:
        return f"nothing on {day}"

    return server




@pytest.mark.parametrize("upstream", ["handshake", "envelope"])
def test_a_front_subscription_is_relayed_and_updates_reach_every_kind_of_front_subscriber(upstream: str) -> None:
    notes = notes_server(upstream)
    heard: Dict[str, "queue.Queue[str]"] = {name: queue.Queue() for name in ("memory", "envelope", "http")}
    with serving(notes) as upstream_http, \
            Gateway({"mcpServers": {"notes": {"url": upstream_http.url}}}) as gateway, \
            serving(gateway) as front_http, \
            Client(gateway, protocol_version=FRONTS["handshake"], on_resource_updated=heard["memory"].put) as memory, \
            Client(gateway, protocol_version=FRONTS["envelope"], on_resource_updated=heard["envelope"].put) as listen, \
            Client(front_http.url, protocol_version=FRONTS["handshake"], on_resource_updated=heard["http"].put) as http:
        assert gateway.upstreams["notes"].revision == FRONTS[upstream]
        memory.subscribe_resource("note://today")        # a handshake session: resources/subscribe
        listen.subscribe_resource("note://today")        # 2026-07-28: its listen stream names the URI
        http.subscribe_resource("note://day/monday")     # over HTTP, the session's GET stream; a template's URI
        assert gateway.upstreams["notes"].subscribed == {"note://today", "note://day/monday"}
        notes.notify_resource_updated("note://today")
        assert heard["memory"].get(timeout=WAIT) == "note://today"
        assert heard["envelope"].get(timeout=WAIT) == "note://today"
        notes.notify_resource_updated("note://day/monday")
        assert heard["http"].get(timeout=WAIT) == "note://day/monday"
        assert heard["memory"].empty() and heard["envelope"].empty()  # each hears what it subscribed to


def test_threads_of_a_task_call_end_with_it() -> None:
    before = set(threading.enumerate())
    with Gateway({"mcpServers": {"ev": pinned("handshake")}}) as gateway, \
            Client(gateway, protocol_version=FRONTS["handshake"]) as client:
        task = client.start_tool_call("ev_slow_compute", {"seconds": 0.1}, task=True)
        assert task.result(WAIT)["content"][0]["text"].startswith("Computed")
        gateway.close_tasks()
    wait_until(lambda: not [thread for thread in threading.enumerate() if thread not in before
                            and thread.name.startswith(("mcplite-gateway", "mcplite-task"))],
               message="gateway or task threads were left")
