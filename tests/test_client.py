"""`Client`: its blocking methods, callbacks, negotiation, local checks, cancellation and timeouts.

Most tests talk to a real `Server` in memory. Where the server has to misbehave (lie about its structured
output, repeat a cursor, never answer) the far end is a bare `ServerSession` or a `RawPeer` driven by hand.
"""

import queue
import threading
import time
from typing import Any, Callable, Dict, List, Optional

import pytest

from mcplite import (
    CapabilityError, Client, ConnectionClosed, Context, LocalProtocolError, RemoteError, RemoteProtocolError,
    RequestCancelled, RequestTimeout, Server, ToolResult,
)
from mcplite import content as c
from mcplite.protocol import types as t
from mcplite.protocol import jsonrpc
from mcplite.client.callbacks import InputCallbacks
from mcplite.errors import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND, RPCError
from mcplite.transports.memory import memory_pair
from mcplite.session import ServerSession
from mcplite.transports import Transport

from support import WAIT, Background, RawPeer, Recording, run_concurrently

#: The handshake era's latest revision: most tests here read its wire (test_client_envelope.py has 2026-07-28's).
HANDSHAKE = "2025-11-25"


def recorded_client(server: Server, **options: Any) -> "tuple[Client, Recording]":
    client_end, server_end = memory_pair()
    server.connect(server_end)
    recording = Recording(client_end)
    return Client(recording, timeout=WAIT, **options), recording


def fake_server(handler: Callable[[Any], Dict[str, Any]], capabilities: Optional[Dict[str, Any]] = None,
                versions: Optional[tuple] = None) -> Transport:
    """A bare ServerSession answering every request with ``handler``; returns the client's transport."""
    client_end, server_end = memory_pair()
    ServerSession(server_end, initialize_result=lambda params: {
        "capabilities": capabilities if capabilities is not None else {"tools": {}},
        "serverInfo": {"name": "fake", "version": "0"}}, handle_request=handler,
        supported_versions=versions).start()
    return client_end


class Inbox:
    """Collects callback arguments; read with a timeout."""

    def __init__(self, answer: Any = None) -> None:
        self.items: "queue.Queue[Any]" = queue.Queue()
        self.answer = answer

    def __call__(self, *args: Any) -> Any:
        self.items.put(args[0] if len(args) == 1 else args)
        return self.answer

    def next(self) -> Any:
        return self.items.get(timeout=WAIT)


def full_server() -> Server:
    server = Server("full", "3.1", instructions="Be kind.", page_size=2)

    @server.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool
    def echo(text: str) -> str:
        return text

    @server.tool
    def shout(text: str) -> str:
        return text.upper()

    @server.resource("res://readme", mime_type="text/plain")
    def readme() -> str:
        return "read me"

    @server.resource("res://{name}/data")
    def data(name: str) -> bytes:
        return name.encode()

    @server.prompt
    def hello(name: str) -> str:
        return f"Hello {name}"

    @server.completion(prompt="hello", argument="name")
    def names(value: str, arguments: Dict[str, str]) -> List[str]:
        return [n for n in ("ada", "alan", "grace") if n.startswith(value)]

    return server


# ---- connecting -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("asked, spoken", [("auto", "2026-07-28"), (HANDSHAKE, HANDSHAKE)])
def test_context_manager_connects_negotiates_and_closes(asked, spoken):
    """The default ("auto") speaks 2026-07-28 with a server that does; a pin to a handshake revision does the
    handshake. Either way the client knows the same things about the server."""
    client = Client(full_server(), timeout=WAIT, client_info={"name": "me", "version": "1"}, protocol_version=asked)
    assert client.protocol_version is None
    with client as entered:
        assert entered is client
        assert client.protocol_version == spoken
        assert client.server_info == {"name": "full", "version": "3.1"}
        assert client.instructions == "Be kind."
        assert client.server_capabilities == {
            "logging": {}, "completions": {}, "tools": {"listChanged": True},
            "resources": {"subscribe": True, "listChanged": True}, "prompts": {"listChanged": True}}
        assert client.client_info == {"name": "me", "version": "1"}
    assert client.session.is_closed
    with pytest.raises(ConnectionClosed):
        client.ping()


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
def test_an_older_revision_can_be_asked_for(version):
    with Client(full_server(), timeout=WAIT, protocol_version=version) as client:
        assert client.protocol_version == version
        assert client.call_tool("echo", {"text": "hi"})["content"] == [{"type": "text", "text": "hi"}]


def test_the_server_may_answer_with_an_older_revision():
    transport = fake_server(lambda ctx: {}, versions=("2025-03-26",))
    with Client(transport, timeout=WAIT) as client:
        assert client.protocol_version == "2025-03-26"
        assert client.session.revision.batching is True


def test_a_handshake_that_gets_no_answer_times_out_and_closes():
    client_end, server_end = memory_pair()
    peer = RawPeer(server_end)  # reads, never answers
    client = Client(client_end, timeout=WAIT, protocol_version=HANDSHAKE)
    start = time.monotonic()
    with pytest.raises(RequestTimeout):
        client.connect(timeout=0.2)
    assert time.monotonic() - start < WAIT / 2
    assert peer.next()["method"] == "initialize"
    assert peer.lost.wait(WAIT)  # the failed connect closed the connection


def test_a_target_that_is_not_a_server_url_or_transport_is_refused():
    with pytest.raises(TypeError, match="Client.stdio"):
        Client("server.py")


# ---- every blocking method ------------------------------------------------------------------------------
def test_every_blocking_method_against_a_real_server():
    with Client(full_server(), timeout=WAIT, protocol_version=HANDSHAKE) as client:
        assert client.ping() is None
        assert [tool["name"] for tool in client.list_tools()] == ["add", "echo", "shout"]
        assert client.call_tool("add", {"a": 2, "b": 3}) == {"content": [{"type": "text", "text": "5"}],
                                                             "structuredContent": {"result": 5}}
        pending = client.start_tool_call("shout", {"text": "hey"})
        assert client.finish_tool_call("shout", pending)["content"][0]["text"] == "HEY"
        assert client.list_resources() == [{"uri": "res://readme", "name": "readme", "mimeType": "text/plain"}]
        assert client.list_resource_templates() == [{"uriTemplate": "res://{name}/data", "name": "data"}]
        assert client.read_resource("res://readme")["contents"][0]["text"] == "read me"
        assert client.read_resource("res://x/data")["contents"][0]["blob"] == "eA=="
        assert client.subscribe_resource("res://readme") is None
        assert client.unsubscribe_resource("res://readme") is None
        assert client.list_prompts() == [{"name": "hello", "description": "",
                                          "arguments": [{"name": "name", "required": True}]}]
        assert client.get_prompt("hello", {"name": "Ada"})["messages"][0]["content"]["text"] == "Hello Ada"
        assert client.complete({"type": "ref/prompt", "name": "hello"}, "name", "a") == {"values": ["ada", "alan"]}
        assert client.set_logging_level("error") is None
        assert client.request(t.TOOLS_LIST, {})["nextCursor"]
        assert client.send_request(t.PING).result(WAIT) == {}


def test_get_prompt_sends_argument_values_as_strings():
    server = Server("p")

    @server.prompt
    def repeat(word: str, times: int) -> str:
        return word * times

    with Client(server, timeout=WAIT) as client:
        assert client.get_prompt("repeat", {"word": "ab", "times": 3})["messages"][0]["content"]["text"] == "ababab"


def test_iterators_fetch_pages_only_as_they_are_reached():
    client, recording = recorded_client(full_server())
    with client:
        tools = client.iter_tools()
        assert recording.methods().count(t.TOOLS_LIST) == 0  # nothing asked before the first item is wanted
        assert next(tools)["name"] == "add"
        assert recording.methods().count(t.TOOLS_LIST) == 1
        next(tools)
        assert recording.methods().count(t.TOOLS_LIST) == 1  # the second tool was on the first page
        assert next(tools)["name"] == "shout"
        assert recording.methods().count(t.TOOLS_LIST) == 2
        assert list(tools) == []
        assert [r["uri"] for r in client.iter_resources()] == ["res://readme"]
        assert [r["name"] for r in client.iter_resource_templates()] == ["data"]
        assert [p["name"] for p in client.iter_prompts()] == ["hello"]
    cursors = [m.get("params", {}).get("cursor") for m in recording.sent if m.get("method") == t.TOOLS_LIST]
    assert cursors[0] is None and isinstance(cursors[1], str)


def test_a_server_that_repeats_a_cursor_is_a_protocol_error():
    transport = fake_server(lambda ctx: {"tools": [{"name": "x", "inputSchema": {"type": "object"}}],
                                         "nextCursor": "again"})
    with Client(transport, timeout=WAIT) as client:
        with pytest.raises(RemoteProtocolError, match="again"):
            client.list_tools()


# ---- what the client checks before sending -------------------------------------------------------------
def test_methods_the_server_did_not_declare_raise_before_anything_is_sent():
    recording = Recording(fake_server(lambda ctx: {"content": [{"type": "text", "text": ""}]},
                                      capabilities={"tools": {}}))
    client = Client(recording, timeout=WAIT)
    with client:
        before = list(recording.sent)
        for call in (client.list_prompts, client.list_resources, client.list_resource_templates,
                     lambda: client.read_resource("res://x"), lambda: client.subscribe_resource("res://x"),
                     lambda: client.get_prompt("p")):
            with pytest.raises(CapabilityError):
                call()
        with pytest.raises(LocalProtocolError):
            client.set_logging_level("chatty")
        assert recording.sent == before
        assert client.call_tool("x")["content"] == [{"type": "text", "text": ""}]


def test_subscribing_needs_the_subscribe_capability():
    transport = fake_server(lambda ctx: {"resources": []}, capabilities={"resources": {"listChanged": True}})
    with Client(transport, timeout=WAIT) as client:
        assert client.list_resources() == []
        with pytest.raises(CapabilityError, match="resources.subscribe"):
            client.subscribe_resource("res://x")


def test_completions_need_the_capability_only_from_2025_03_26():
    def handler(ctx):
        return {"completion": {"values": ["v"]}}

    with Client(fake_server(handler, capabilities={"prompts": {}}), timeout=WAIT) as client:
        with pytest.raises(CapabilityError):
            client.complete({"type": "ref/prompt", "name": "p"}, "a")
    with Client(fake_server(handler, capabilities={"prompts": {}}), timeout=WAIT,
                protocol_version="2024-11-05") as client:
        assert client.complete({"type": "ref/prompt", "name": "p"}, "a") == {"values": ["v"]}


# ---- structured output checks ---------------------------------------------------------------------------
def lying_server() -> Server:
    server = Server("liar")
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}

    @server.tool(output_schema=schema)
    def wrong_type() -> ToolResult:
        return ToolResult(["n is a string"], structured={"n": "seven"})

    @server.tool(output_schema=schema)
    def missing() -> ToolResult:
        return ToolResult(["no structured content at all"])

    @server.tool(output_schema=schema)
    def failed() -> ToolResult:
        return ToolResult(["errors need not match"], is_error=True)

    @server.tool(output_schema=schema)
    def honest() -> ToolResult:
        return ToolResult(["7"], structured={"n": 7})

    return server


def test_structured_content_that_breaks_the_output_schema_is_a_remote_protocol_error():
    with Client(lying_server(), timeout=WAIT) as client:
        with pytest.raises(RemoteProtocolError, match=r"\$\.n: expected integer, got string"):
            client.call_tool("wrong_type")
        with pytest.raises(RemoteProtocolError, match="no structuredContent"):
            client.call_tool("missing")
        assert client.call_tool("failed")["isError"] is True
        assert client.call_tool("honest")["structuredContent"] == {"n": 7}


def test_structured_content_is_not_checked_where_the_revision_has_none():
    with Client(lying_server(), timeout=WAIT, protocol_version="2025-03-26") as client:
        assert client.call_tool("wrong_type") == {"content": [{"type": "text", "text": "n is a string"}]}


def test_a_changed_tool_list_refreshes_the_output_schemas():
    server = Server("changing")
    server.add_tool(lambda: {"result": 1}, name="value", output_schema={
        "type": "object", "properties": {"result": {"type": "integer"}}, "required": ["result"]})
    changes = Inbox()
    with Client(server, timeout=WAIT, on_list_changed=changes) as client:
        assert client.call_tool("value")["structuredContent"] == {"result": 1}
        server.remove_tool("value")
        server.add_tool(lambda: {"result": "one"}, name="value", output_schema={
            "type": "object", "properties": {"result": {"type": "string"}}, "required": ["result"]})
        assert (changes.next(), changes.next()) == ("tools", "tools")
        assert client.call_tool("value")["structuredContent"] == {"result": "one"}


# ---- callbacks for the server's requests ---------------------------------------------------------------
def asking_server(roots_changed: Optional["queue.Queue[Any]"] = None) -> Server:
    server = Server("asking")

    @server.tool
    def sample(ctx: Context) -> dict:
        return ctx.sample("What is 6 x 7?", max_tokens=10)

    @server.tool
    def elicit(ctx: Context) -> dict:
        return ctx.elicit("Colour?", {"type": "object", "properties": {"colour": {"type": "string"}}})

    @server.tool
    def roots(ctx: Context) -> list:
        return [root["uri"] for root in ctx.list_roots()]

    if roots_changed is not None:
        server.notification_handlers[t.ROOTS_LIST_CHANGED] = lambda params, session: roots_changed.put(session)
    return server


def test_callbacks_answer_sampling_and_elicitation_and_declare_capabilities():
    sampling = Inbox({"role": "assistant", "content": c.text("42"), "model": "m"})
    elicitation = Inbox({"action": "accept", "content": {"colour": "blue"}})
    client = Client(asking_server(), timeout=WAIT, sampling=sampling, elicitation=elicitation)
    assert client.capabilities() == {"sampling": {}, "elicitation": {"form": {}}}
    with client:
        assert client.call_tool("sample")["structuredContent"]["content"] == {"type": "text", "text": "42"}
        assert sampling.next()["messages"] == [{"role": "user", "content": {"type": "text", "text": "What is 6 x 7?"}}]
        assert client.call_tool("elicit")["structuredContent"] == {"action": "accept", "content": {"colour": "blue"}}
        assert elicitation.next()["message"] == "Colour?"


def test_a_callback_that_fails_answers_with_an_error():
    def refuse(params: Dict[str, Any]) -> Dict[str, Any]:
        raise RemoteError(-1, "the user said no")

    def broken(params: Dict[str, Any]) -> Dict[str, Any]:
        raise RuntimeError("bug in the callback")

    server = Server("asking")
    seen: "queue.Queue[Any]" = queue.Queue()

    @server.tool
    def sample(ctx: Context) -> str:
        try:
            ctx.sample("hi")
        except RemoteError as exc:
            seen.put((exc.code, exc.message))
        return "handled"

    with Client(server, timeout=WAIT, protocol_version=HANDSHAKE, sampling=refuse) as client:
        client.call_tool("sample")
        assert seen.get(timeout=WAIT) == (-1, "the user said no")
    with Client(server, timeout=WAIT, protocol_version=HANDSHAKE, sampling=broken) as client:
        client.call_tool("sample")
        code, message = seen.get(timeout=WAIT)  # the callback's exception stays in the client's log
        assert code == INTERNAL_ERROR and message.startswith("Internal error (error id ") and "bug" not in message


def test_roots_from_a_list_or_a_function_and_the_change_notification():
    roots_changed: "queue.Queue[Any]" = queue.Queue()
    current = [{"uri": "file:///one"}]
    client = Client(asking_server(roots_changed), timeout=WAIT, protocol_version=HANDSHAKE,
                    roots=lambda: current)
    assert client.capabilities() == {"roots": {"listChanged": True}}
    with client:
        assert client.call_tool("roots")["structuredContent"] == {"result": ["file:///one"]}
        current = [{"uri": "file:///one"}, {"uri": "file:///two", "name": "two"}]
        client.notify_roots_changed()
        assert roots_changed.get(timeout=WAIT) is not None
        assert client.call_tool("roots")["structuredContent"] == {"result": ["file:///one", "file:///two"]}
    with Client(asking_server(), timeout=WAIT, protocol_version=HANDSHAKE,
                roots=[{"uri": "file:///fixed"}]) as client:
        assert client.call_tool("roots")["structuredContent"] == {"result": ["file:///fixed"]}


def test_without_callbacks_the_client_declares_nothing_and_refuses_server_requests():
    client = Client(asking_server(), timeout=WAIT, protocol_version=HANDSHAKE)
    assert client.capabilities() == {}
    with client:
        for tool in ("sample", "elicit", "roots"):
            assert client.call_tool(tool)["isError"] is True


def test_a_server_that_asks_anyway_gets_method_not_found():
    client_end, server_end = memory_pair()
    peer = RawPeer(server_end)
    client = Client(client_end, timeout=WAIT, protocol_version=HANDSHAKE)
    connecting = Background(client.connect)
    init = peer.next()
    peer.send(jsonrpc.result(init["id"], {"protocolVersion": init["params"]["protocolVersion"], "capabilities": {},
                                          "serverInfo": {"name": "raw", "version": "0"}}))
    connecting.join()
    assert client.protocol_version == "2025-11-25"
    assert peer.next()["method"] == t.INITIALIZED
    for request_id, method in enumerate((t.SAMPLING_CREATE, t.ELICIT, t.ROOTS_LIST)):
        peer.send(jsonrpc.request(request_id, method, {}))
        assert peer.next()["error"]["code"] == METHOD_NOT_FOUND
    client.close()


def test_elicitation_modes_are_declared():
    client = Client(asking_server(), elicitation=lambda p: {"action": "cancel"}, elicitation_modes=("form", "url"))
    assert client.capabilities() == {"elicitation": {"form": {}, "url": {}}}


def test_answer_input_request_answers_without_a_connection():
    """The one entry that answers a server's request for input: no session or thread needed."""
    roots = [{"uri": "file:///work", "name": "work"}]
    callbacks = InputCallbacks(sampling=lambda params: {"model": "m", "asked": params["messages"]},
                               elicitation=lambda params: {"action": "decline"}, roots=lambda: roots)
    assert callbacks.answer_input_request(t.SAMPLING_CREATE, {"messages": []}) == {"model": "m", "asked": []}
    assert callbacks.answer_input_request(t.ELICIT, {"message": "?"}) == {"action": "decline"}
    assert callbacks.answer_input_request(t.ROOTS_LIST, {}) == {"roots": roots}
    with pytest.raises(RPCError) as refused:
        callbacks.answer_input_request(t.SAMPLING_CREATE, {"messages": [], "tools": []})
    assert refused.value.code == INVALID_PARAMS  # "tools" was not among the sampling features
    with pytest.raises(RPCError) as unknown:
        InputCallbacks().answer_input_request(t.ROOTS_LIST, {})
    assert unknown.value.code == METHOD_NOT_FOUND


def test_anything_with_connect_is_served_in_memory_like_a_server():
    """`Client(target)` knows a server by its `connect(transport)`, not by its class."""

    class Gateway:  # not a Server: it hands the transport on to one
        def __init__(self, server: Server) -> None:
            self.server = server
            self.transports: List[Transport] = []

        def connect(self, transport: Transport) -> ServerSession:
            self.transports.append(transport)
            return self.server.connect(transport)

    gateway = Gateway(asking_server())
    with Client(gateway, timeout=WAIT) as client:
        assert client.server_info["name"] == gateway.server.name
    assert len(gateway.transports) == 1


# ---- callbacks for the server's notifications -----------------------------------------------------------
def notifying_server() -> Server:
    server = Server("notifying")
    server.add_resource(lambda: "v", "res://watched")

    @server.tool
    def report(ctx: Context) -> str:
        ctx.progress(1, 2, "half")
        ctx.warning("careful", logger="report")
        ctx.session.notify("notifications/custom", {"x": 1})
        ctx.progress(2, 2, "all")
        return "reported"

    return server


def test_notification_callbacks():
    logs, updates, changes, others = Inbox(), Inbox(), Inbox(), Inbox()
    progress: List[Any] = []
    server = notifying_server()
    with Client(server, timeout=WAIT, protocol_version=HANDSHAKE, on_log=logs, on_resource_updated=updates,
                on_list_changed=changes, on_notification=others) as client:
        result = client.call_tool("report", progress=lambda *report: progress.append(report))
        # With a progress callback the result waits for every notification queued before it.
        assert result["content"][0]["text"] == "reported"
        assert progress == [(1, 2, "half"), (2, 2, "all")]
        assert logs.next() == {"level": "warning", "data": "careful", "logger": "report"}
        assert others.next() == ("notifications/custom", {"x": 1})

        client.subscribe_resource("res://watched")
        server.notify_resource_updated("res://watched")
        assert updates.next() == "res://watched"
        server.add_prompt(lambda: "p", name="new")
        assert changes.next() == "prompts"


def test_request_reports_progress_too():
    with Client(notifying_server(), timeout=WAIT) as client:
        seen: List[Any] = []
        client.request(t.TOOLS_CALL, {"name": "report"}, progress=lambda *report: seen.append(report))
    assert [report[0] for report in seen] == [1, 2]


def test_a_failing_notification_callback_does_not_break_the_connection():
    def explode(params: Dict[str, Any]) -> None:
        raise RuntimeError("callback bug")

    with Client(notifying_server(), timeout=WAIT, on_log=explode) as client:
        assert client.call_tool("report")["content"][0]["text"] == "reported"
        assert client.call_tool("report")["content"][0]["text"] == "reported"


# ---- cancellation, timeouts and the end of the connection ------------------------------------------------
def slow_server(events: Dict[str, threading.Event]) -> Server:
    server = Server("slow")

    @server.tool
    def wait_for_cancel(ctx: Context) -> str:
        events["started"].set()
        if ctx.cancelled.wait(WAIT):
            events["cancelled"].set()
        return "finished anyway"

    return server


def new_events() -> Dict[str, threading.Event]:
    return {"started": threading.Event(), "cancelled": threading.Event()}


def test_cancelling_a_started_call_raises_and_the_handler_sees_its_cancel_event():
    events = new_events()
    client, recording = recorded_client(slow_server(events))
    with client:
        pending = client.start_tool_call("wait_for_cancel")
        assert events["started"].wait(WAIT)
        assert pending.cancel("no longer needed") is True
        with pytest.raises(RequestCancelled):
            client.finish_tool_call("wait_for_cancel", pending)
        assert events["cancelled"].wait(WAIT)
        assert client.ping() is None  # the connection is still fine
    cancels = [m for m in recording.sent if m.get("method") == t.CANCELLED]
    assert cancels == [{"jsonrpc": "2.0", "method": t.CANCELLED,
                        "params": {"requestId": pending.id, "reason": "no longer needed"}}]


def test_a_call_that_times_out_raises_and_cancels_the_handler():
    events = new_events()
    with Client(slow_server(events), timeout=WAIT) as client:
        start = time.monotonic()
        with pytest.raises(RequestTimeout):
            client.call_tool("wait_for_cancel", timeout=0.2)
        assert time.monotonic() - start < WAIT / 2
        assert events["cancelled"].wait(WAIT)


def test_the_clients_default_timeout_applies_to_every_call():
    events = new_events()
    with Client(slow_server(events), timeout=0.3) as client:
        with pytest.raises(RequestTimeout):
            client.call_tool("wait_for_cancel")
        assert events["cancelled"].wait(WAIT)
        assert isinstance(RequestTimeout("x"), TimeoutError)


def test_closing_the_client_fails_calls_still_waiting():
    events = new_events()
    with Client(slow_server(events), timeout=WAIT) as client:
        pending = client.start_tool_call("wait_for_cancel")
        assert events["started"].wait(WAIT)
        closer = threading.Timer(0.05, client.close)
        closer.start()
        with pytest.raises(ConnectionClosed):
            pending.result(WAIT)
        closer.join(WAIT)
    assert events["cancelled"].wait(WAIT)  # the server side saw the connection end


def test_concurrent_calls_from_many_threads_each_get_their_own_answer():
    server = Server("echo")

    @server.tool
    def echo(n: int) -> int:
        time.sleep(0.001 * (n % 3))
        return n

    failures: List[Any] = []
    with Client(server, timeout=WAIT) as client:
        def worker(base: int) -> None:
            for n in range(base, base + 25):
                if client.call_tool("echo", {"n": n})["structuredContent"] != {"result": n}:
                    failures.append(n)

        run_concurrently(worker, [k * 100 for k in range(8)], timeout=WAIT * 3)
    assert failures == []


def test_a_client_connects_once_and_with_after_connect_is_fine():
    server = Server("once")
    server.add_tool(lambda: "ok", name="x")
    client = Client(server, timeout=WAIT).connect()
    with pytest.raises(LocalProtocolError, match="already connected"):
        client.connect()
    with client as same:  # entering a connected client does not connect again
        assert same is client
        assert client.call_tool("x")["content"][0]["text"] == "ok"
    assert client.session.is_closed


def test_the_transport_in_use_is_public():
    from mcplite.transports.memory import MemoryTransport
    with Client(Server("t"), timeout=WAIT) as client:
        assert isinstance(client.transport, MemoryTransport)
