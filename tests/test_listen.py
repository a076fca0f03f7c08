"""``subscriptions/listen`` (2026-07-28) on the server, and the one publish seam both eras hear through.

A listen is acknowledged first, with the filter the server honours; every notification on it carries its
subscription id; it hears only the kinds and resource URIs it named; it ends without an answer when the client
cancels it (stdio, in memory) or drops its stream (HTTP), and with a graceful result when the server ends it.
No pool worker waits for a listen, and HTTP caps how many are open. Checked in memory, over HTTP with real
sockets and over stdio with a real subprocess; the handshake era's subscriptions keep working beside it.

"Not delivered" is checked without sleeping: publishing is synchronous, so the unwanted event is published
first and the next message a stream carries must be the wanted one published after it.
"""

import json
import os
import queue
import subprocess
import sys
import threading
from typing import Any, Callable, Dict, Iterator, List, Optional

import pytest

from mcplite import Server
from mcplite.errors import RPCError
from mcplite.protocol import jsonrpc
from mcplite.server.listen import honoured_filter
from mcplite.server.connections import LocalEventBus
from mcplite.transports.memory import memory_pair
from support import ROOT, WAIT, RawPeer, wait_until
from support.http import serving
from support.raw_http import EnvelopeClient, EventReader, RawClient, envelope

SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"
ACK = "notifications/subscriptions/acknowledged"
TOOLS_CHANGED = "notifications/tools/list_changed"
PROMPTS_CHANGED = "notifications/prompts/list_changed"
UPDATED = "notifications/resources/updated"
EVERYTHING = {"toolsListChanged": True, "promptsListChanged": True, "resourcesListChanged": True,
              "resourceSubscriptions": ["test://watched"]}

#: The fixture's tools, as source, so that the stdio subprocess serves the very same server.
SERVER_SOURCE = '''
import itertools
from mcplite import Server

def make_server(**options):
    server = Server("listen-test", **options)
    numbers = itertools.count()

    @server.tool
    def change_tools() -> str:
        """Add a tool: the tools list changes."""
        name = f"extra_{next(numbers)}"

        def extra() -> str:
            """An extra tool."""
            return name

        server.add_tool(extra, name=name)
        return name

    @server.tool
    def change_prompts() -> str:
        """Add a prompt: the prompts list changes."""
        name = f"prompt_{next(numbers)}"

        def extra() -> str:
            """An extra prompt."""
            return name

        server.add_prompt(extra, name=name)
        return name

    @server.tool
    def touch(uri: str) -> str:
        """Tell subscribers that a resource changed."""
        server.notify_resource_updated(uri)
        return uri

    @server.resource("test://watched")
    def watched() -> str:
        return "watched"

    return server
'''
_namespace: Dict[str, Any] = {}
exec(SERVER_SOURCE, _namespace)
make_server: Callable[..., Server] = _namespace["make_server"]


def listen_request(id: Any, notifications: Dict[str, Any]) -> Dict[str, Any]:
    return jsonrpc.request(id, "subscriptions/listen", {"_meta": envelope(), "notifications": notifications})


def enveloped(id: Any, method: str, params: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    return jsonrpc.request(id, method, {**(params or {}), "_meta": envelope()})


def is_response(message: Any, id: Any) -> bool:
    return isinstance(message, dict) and message.get("id") == id and "method" not in message


class Peer(RawPeer):
    """A raw in-memory client of a `Server`, and the server's session."""

    def __init__(self, server: Server) -> None:
        ours, theirs = memory_pair()
        self.session = server.connect(theirs)
        super().__init__(ours)

    def listen(self, id: Any, notifications: Dict[str, Any]) -> Dict[str, Any]:
        """Open a listen; returns its acknowledgement, which must be the next message."""
        self.send(listen_request(id, notifications))
        ack = self.next()
        assert ack["method"] == ACK and ack["params"]["_meta"] == {SUBSCRIPTION_ID: id}, ack
        return ack


@pytest.fixture
def server() -> Server:
    return make_server()


@pytest.fixture
def peer(server: Server) -> Iterator[Peer]:
    peer = Peer(server)
    yield peer
    peer.session.close()


# ---- the filter, pure ---------------------------------------------------------------------------------------

ALL_CAPABILITIES = {"tools": {"listChanged": True}, "prompts": {"listChanged": True},
                    "resources": {"listChanged": True, "subscribe": True}}


@pytest.mark.parametrize("requested, capabilities, honoured", [
    (EVERYTHING, ALL_CAPABILITIES, EVERYTHING),
    ({}, ALL_CAPABILITIES, {}),
    ({"toolsListChanged": False, "resourceSubscriptions": []}, ALL_CAPABILITIES, {}),
    ({"toolsListChanged": True, "tasksChanged": True}, ALL_CAPABILITIES, {"toolsListChanged": True}),  # unknown
    (EVERYTHING, {"tools": {}, "resources": {"subscribe": True}}, {"resourceSubscriptions": ["test://watched"]}),
    (EVERYTHING, {"prompts": {"listChanged": True}, "resources": {"listChanged": True}},
     {"promptsListChanged": True, "resourcesListChanged": True}),
    ({"resourceSubscriptions": ["a", "b", "a"]}, ALL_CAPABILITIES, {"resourceSubscriptions": ["a", "b"]}),
])
def test_the_honoured_filter_is_what_was_asked_and_declared(requested: Any, capabilities: Any, honoured: Any) -> None:
    assert honoured_filter(requested, capabilities) == honoured


@pytest.mark.parametrize("requested", [None, [], {"toolsListChanged": "yes"}, {"resourceSubscriptions": "a"},
                                       {"resourceSubscriptions": [1]}])
def test_a_malformed_filter_is_invalid_params(requested: Any) -> None:
    with pytest.raises(RPCError) as caught:
        honoured_filter(requested, ALL_CAPABILITIES)
    assert caught.value.code == -32602


# ---- in memory ----------------------------------------------------------------------------------------------

def test_the_acknowledgement_comes_first_with_the_honoured_filter(peer: Peer) -> None:
    ack = peer.listen("L", {**EVERYTHING, "tasksChanged": True})
    assert ack["params"]["notifications"] == EVERYTHING  # this server declares every kind; unknown ones omitted


def test_a_kind_the_server_does_not_declare_is_not_acknowledged() -> None:
    class NoPromptChanges(Server):
        def capabilities(self) -> Dict[str, Any]:
            return {**super().capabilities(), "prompts": {}}

    server = NoPromptChanges("quiet")
    peer = Peer(server)
    try:
        ack = peer.listen(1, {"toolsListChanged": True, "promptsListChanged": True})
        assert ack["params"]["notifications"] == {"toolsListChanged": True}
        server.add_prompt(lambda: "p", name="p")  # not honoured, so not delivered
        server.add_tool(lambda: "t", name="t")
        assert peer.next()["method"] == TOOLS_CHANGED
    finally:
        peer.session.close()


def test_every_notification_carries_its_subscription_id_and_only_its_kinds(server: Server, peer: Peer) -> None:
    # Two listens on one connection, demultiplexed by their ids (a string and a number).
    peer.listen("tools", {"toolsListChanged": True})
    peer.listen(5, {"promptsListChanged": True})
    server.add_tool(lambda: "t", name="t")
    assert peer.next() == {"jsonrpc": "2.0", "method": TOOLS_CHANGED, "params": {"_meta": {SUBSCRIPTION_ID: "tools"}}}
    server.add_prompt(lambda: "p", name="p")  # the tools listen hears nothing of it: the next message is for 5
    assert peer.next() == {"jsonrpc": "2.0", "method": PROMPTS_CHANGED, "params": {"_meta": {SUBSCRIPTION_ID: 5}}}
    server.remove_tool("t")
    assert peer.next()["params"]["_meta"][SUBSCRIPTION_ID] == "tools"


def test_resource_updates_only_for_the_subscribed_uris(server: Server, peer: Peer) -> None:
    peer.listen(1, {"resourceSubscriptions": ["test://watched"], "toolsListChanged": True})
    server.notify_resource_updated("test://other")
    server.notify_resource_updated("test://watched")
    assert peer.next() == {"jsonrpc": "2.0", "method": UPDATED,
                           "params": {"uri": "test://watched", "_meta": {SUBSCRIPTION_ID: 1}}}
    # A tools/call on the same connection triggers one: the listen hears it beside the call's own answer.
    peer.send(enveloped(2, "tools/call", {"name": "touch", "arguments": {"uri": "test://watched"}}))
    seen = [peer.next(), peer.next()]
    assert {m.get("method") for m in seen} == {UPDATED, None}


def test_a_cancelled_listen_ends_without_an_answer(server: Server, peer: Peer) -> None:
    peer.listen("L", {"toolsListChanged": True})
    assert len(server.listens) == 1
    peer.send(jsonrpc.notification("notifications/cancelled", {"requestId": "L"}))
    wait_until(lambda: len(server.listens) == 0)
    server.add_tool(lambda: "t", name="t")  # heard by nobody now
    peer.send(enveloped(2, "tools/list"))
    assert is_response(peer.next(), 2)  # the next message is this answer: nothing for L, neither event nor result
    peer.listen("L", {"toolsListChanged": True})  # its id is free again


def test_closing_the_session_ends_listens_gracefully(server: Server, peer: Peer) -> None:
    peer.listen("a", {"toolsListChanged": True})
    peer.listen("b", {"promptsListChanged": True})
    peer.session.close()
    results = {m["id"]: m["result"] for m in (peer.next(), peer.next())}
    assert results["a"] == {"resultType": "complete", "_meta": {
        SUBSCRIPTION_ID: "a", SERVER_INFO: {"name": "listen-test", "version": "0.1.0"}}}
    assert results["b"]["_meta"][SUBSCRIPTION_ID] == "b"
    assert len(server.listens) == 0


def test_the_connection_lost_frees_its_listens(server: Server, peer: Peer) -> None:
    peer.listen("a", {"toolsListChanged": True})
    peer.transport.close()  # the client goes away
    wait_until(lambda: len(server.listens) == 0)
    server.add_tool(lambda: "t", name="t")  # nothing to deliver, nothing fails


def test_the_cap_refuses_before_acknowledging() -> None:
    server = make_server(max_listens=2)
    peer = Peer(server)
    try:
        peer.listen(1, {"toolsListChanged": True})
        peer.listen(2, {"toolsListChanged": True})
        peer.send(listen_request(3, {"toolsListChanged": True}))
        refusal = peer.next()  # no acknowledgement first
        assert refusal["id"] == 3 and refusal["error"]["code"] == -32603
        peer.send(jsonrpc.notification("notifications/cancelled", {"requestId": 1}))
        wait_until(lambda: len(server.listens) == 1)
        peer.listen(4, {"toolsListChanged": True})  # a slot is free again
    finally:
        peer.session.close()


def test_a_malformed_listen_is_refused_without_acknowledgement(peer: Peer) -> None:
    peer.send(listen_request(1, {"toolsListChanged": "yes"}))
    assert peer.next()["error"]["code"] == -32602
    peer.send(jsonrpc.request(2, "subscriptions/listen", {"_meta": envelope()}))  # no filter at all
    assert peer.next()["error"]["code"] == -32602


def test_listen_needs_the_envelope(server: Server) -> None:
    peer = Peer(server)
    try:
        peer.initialize()
        answer = peer.request(1, "subscriptions/listen", {"notifications": {"toolsListChanged": True}})
        assert answer["error"]["code"] == -32601
    finally:
        peer.session.close()


def test_listens_hold_no_handler_thread() -> None:
    server = make_server(max_workers=2)
    peer = Peer(server)
    try:
        for id in range(6):  # three times the pool
            peer.listen(id, {"toolsListChanged": True})
        answer = peer.request("call", "tools/call", {"name": "touch", "arguments": {"uri": "x"}, "_meta": envelope()})
        assert answer["result"]["content"][0]["text"] == "x"
    finally:
        peer.session.close()


def test_handshake_subscribers_and_listens_hear_the_same_events(server: Server) -> None:
    legacy, current = Peer(server), Peer(server)
    try:
        legacy.initialize()
        assert legacy.request(1, "resources/subscribe", {"uri": "test://watched"})["result"] == {}
        current.listen("L", EVERYTHING)
        server.notify_resource_updated("test://other")
        server.notify_resource_updated("test://watched")
        # The handshake session gets exactly what it got before listens existed: no subscription id.
        assert legacy.next() == {"jsonrpc": "2.0", "method": UPDATED, "params": {"uri": "test://watched"}}
        assert current.next()["params"] == {"uri": "test://watched", "_meta": {SUBSCRIPTION_ID: "L"}}
        server.add_tool(lambda: "t", name="t")
        assert legacy.next() == {"jsonrpc": "2.0", "method": TOOLS_CHANGED}
        assert current.next()["params"] == {"_meta": {SUBSCRIPTION_ID: "L"}}
        assert legacy.request(2, "resources/unsubscribe", {"uri": "test://watched"})["result"] == {}
    finally:
        legacy.session.close()
        current.session.close()


def test_the_event_bus_is_the_one_path_and_can_be_shared() -> None:
    class RecordingBus(LocalEventBus):
        def __init__(self) -> None:
            super().__init__()
            self.published: List[Dict[str, Any]] = []

        def publish(self, event: Dict[str, Any]) -> None:
            self.published.append(event)
            super().publish(event)

    bus = RecordingBus()
    # Two servers on one bus stand in for two worker processes of one deployment.
    first, second = make_server(event_bus=bus), make_server(event_bus=bus)
    bus.published.clear()  # the registrations' own list changes
    peer = Peer(second)
    try:
        peer.listen("L", {"toolsListChanged": True, "resourceSubscriptions": ["test://watched"]})
        first.add_tool(lambda: "t", name="t")
        first.notify_resource_updated("test://watched")
        assert [peer.next()["method"], peer.next()["method"]] == [TOOLS_CHANGED, UPDATED]
        assert bus.published == [{"method": TOOLS_CHANGED},
                                 {"method": UPDATED, "params": {"uri": "test://watched"}}]
    finally:
        peer.session.close()


# ---- HTTP, real sockets -------------------------------------------------------------------------------------

@pytest.fixture
def http_server() -> Iterator[Any]:
    server = make_server(max_listens=3)
    with serving(server, keepalive_interval=0.2) as http:
        http.fixture_server = server
        yield http


def open_listen(client: EnvelopeClient, notifications: Dict[str, Any],
                headers: Optional[Dict[str, str]] = None) -> EventReader:
    stream = client.stream(client.request("subscriptions/listen", {"_meta": envelope(),
                                                                   "notifications": notifications}), headers)
    assert stream.status == 200 and stream.headers["content-type"] == "text/event-stream", stream.headers
    return stream


def next_message(stream: EventReader) -> Any:
    event = stream.next()
    assert event is not None, "the stream ended"
    return json.loads(event.data)


def call(client: EnvelopeClient, tool: str, **arguments: Any) -> Any:
    reply = client.post(client.enveloped("tools/call", {"name": tool, "arguments": arguments}))
    assert reply.status == 200, reply.body
    return reply.json()["result"]


def test_http_listen_acknowledges_then_streams_tagged_notifications(http_server: Any) -> None:
    client = EnvelopeClient(http_server)
    stream = open_listen(client, {"toolsListChanged": True, "resourceSubscriptions": ["test://watched"]})
    ack = next_message(stream)
    listen_id = ack["params"]["_meta"][SUBSCRIPTION_ID]
    assert ack["method"] == ACK and listen_id  # a truthy id (the conformance suite checks it so)
    assert ack["params"]["notifications"] == {"toolsListChanged": True, "resourceSubscriptions": ["test://watched"]}
    assert "mcp-session-id" not in stream.headers
    call(client, "change_tools")  # another POST triggers it; the listen's stream carries it at once
    assert next_message(stream) == {"jsonrpc": "2.0", "method": TOOLS_CHANGED,
                                    "params": {"_meta": {SUBSCRIPTION_ID: listen_id}}}
    call(client, "touch", uri="test://other")
    call(client, "touch", uri="test://watched")
    assert next_message(stream)["params"] == {"uri": "test://watched", "_meta": {SUBSCRIPTION_ID: listen_id}}
    stream.drop()


def test_http_listen_hears_only_its_kinds(http_server: Any) -> None:
    client = EnvelopeClient(http_server)
    stream = open_listen(client, {"promptsListChanged": True})
    assert next_message(stream)["method"] == ACK
    call(client, "change_tools")
    call(client, "change_prompts")
    assert next_message(stream)["method"] == PROMPTS_CHANGED
    stream.drop()


def test_http_a_dropped_stream_ends_the_listen(http_server: Any) -> None:
    server = http_server.fixture_server
    client = EnvelopeClient(http_server)
    stream = open_listen(client, {"toolsListChanged": True})
    assert next_message(stream)["method"] == ACK
    assert len(server.listens) == 1
    stream.drop()
    wait_until(lambda: len(server.listens) == 0)  # the next keep-alive write failed
    call(client, "change_tools")  # publishing to nobody is fine


def test_http_the_cap(http_server: Any) -> None:
    client = EnvelopeClient(http_server)
    streams = [open_listen(client, {"toolsListChanged": True}) for _ in range(3)]
    for stream in streams:
        assert next_message(stream)["method"] == ACK
    body = client.request("subscriptions/listen", {"_meta": envelope(), "notifications": {"toolsListChanged": True}})
    reply = client.post(body)
    assert reply.headers["content-type"] == "application/json"  # refused before any acknowledgement
    assert (reply.json()["id"], reply.json()["error"]["code"]) == (body["id"], -32603)
    streams[0].drop()
    wait_until(lambda: len(http_server.fixture_server.listens) == 2)
    again = open_listen(client, {"toolsListChanged": True})
    assert next_message(again)["method"] == ACK
    for stream in [again, *streams[1:]]:
        stream.drop()


def test_http_shutdown_ends_listens_gracefully() -> None:
    server = make_server()
    with serving(server, keepalive_interval=0.2) as http:
        client = EnvelopeClient(http)
        stream = open_listen(client, {"toolsListChanged": True})
        listen_id = next_message(stream)["params"]["_meta"][SUBSCRIPTION_ID]
        http.shutdown()
        result = next_message(stream)
        assert result["id"] == listen_id and result["result"]["resultType"] == "complete"
        assert result["result"]["_meta"][SUBSCRIPTION_ID] == listen_id
        assert stream.next() is None  # and the stream ends
    assert len(server.listens) == 0


def test_http_listen_streams_even_in_json_response_mode() -> None:
    server = make_server()
    with serving(server, json_response=True, keepalive_interval=0.2) as http:
        client = EnvelopeClient(http)
        stream = open_listen(client, {"toolsListChanged": True})
        assert next_message(stream)["method"] == ACK
        reply = client.post(client.enveloped("tools/call", {"name": "change_tools", "arguments": {}}))
        assert reply.headers["content-type"] == "application/json"  # other requests still answer with JSON
        assert next_message(stream)["method"] == TOOLS_CHANGED
        stream.drop()
        # A client that cannot read SSE cannot listen.
        body = client.request("subscriptions/listen", {"_meta": envelope(), "notifications": {}})
        reply = client.post(body, {"Accept": "application/json"})
        assert (reply.status, reply.json()["id"]) == (406, body["id"])


def test_http_handshake_session_beside_a_listen(http_server: Any) -> None:
    legacy = RawClient(http_server)
    legacy.initialize()
    assert legacy.post(legacy.request("resources/subscribe", {"uri": "test://watched"})).status == 200
    updates = legacy.get()
    client = EnvelopeClient(http_server)
    stream = open_listen(client, {"resourceSubscriptions": ["test://watched"]})
    assert next_message(stream)["method"] == ACK
    call(client, "touch", uri="test://watched")
    assert next_message(stream)["params"]["_meta"][SUBSCRIPTION_ID]
    event = updates.next()
    assert event is not None and json.loads(event.data) == {"jsonrpc": "2.0", "method": UPDATED,
                                                            "params": {"uri": "test://watched"}}
    stream.drop()
    updates.drop()


# ---- stdio, a real subprocess -------------------------------------------------------------------------------

class StdioServer:
    """The fixture server in a subprocess, read line by line on a thread (each read bounded by WAIT)."""

    def __init__(self, tmp_path: Any) -> None:
        script = tmp_path / "listen_server.py"
        script.write_text(SERVER_SOURCE + "\nmake_server().run()\n")
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
        self.process = subprocess.Popen([sys.executable, str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True, env=env)
        self.lines: "queue.Queue[Optional[str]]" = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send(self, message: Any) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def next(self) -> Any:
        line = self.lines.get(timeout=WAIT)
        assert line is not None, "the server's output ended"
        return json.loads(line)

    def close_input(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(WAIT)


def test_stdio_listens(tmp_path: Any) -> None:
    server = StdioServer(tmp_path)
    try:
        # Twenty open listens, more than the sixteen handler threads: tools/call is still answered.
        server.send(listen_request("tools", {"toolsListChanged": True}))
        for id in range(19):
            server.send(listen_request(id, {"resourceSubscriptions": [f"test://{id}"]}))
        acks = [server.next() for _ in range(20)]
        assert {ack["params"]["_meta"][SUBSCRIPTION_ID] for ack in acks} == {"tools", *range(19)}
        assert all(ack["method"] == ACK for ack in acks)
        server.send(enveloped("c1", "tools/call", {"name": "change_tools", "arguments": {}}))
        seen = [server.next(), server.next()]
        assert {"jsonrpc": "2.0", "method": TOOLS_CHANGED, "params": {"_meta": {SUBSCRIPTION_ID: "tools"}}} in seen
        assert any(m.get("id") == "c1" and m["result"]["content"] for m in seen)
        server.send(enveloped("c2", "tools/call", {"name": "touch", "arguments": {"uri": "test://7"}}))
        seen = [server.next(), server.next()]
        assert {"jsonrpc": "2.0", "method": UPDATED, "params": {"uri": "test://7", "_meta": {SUBSCRIPTION_ID: 7}}} \
            in seen
        # Cancelled: no answer, and no more notifications.
        server.send(jsonrpc.notification("notifications/cancelled", {"requestId": "tools"}))
        server.send(enveloped("c3", "tools/call", {"name": "change_tools", "arguments": {}}))
        assert server.next()["id"] == "c3"
        # The client's input ends: every listen still open gets its graceful result, and the server exits.
        server.close_input()
        ended = [server.next() for _ in range(19)]
        assert sorted(m["id"] for m in ended) == list(range(19))
        assert all(m["result"]["resultType"] == "complete" and m["result"]["_meta"][SUBSCRIPTION_ID] == m["id"]
                   for m in ended)
        assert server.lines.get(timeout=WAIT) is None  # nothing else: no answer to the cancelled listen
        assert server.process.wait(WAIT) == 0
    finally:
        server.kill()
