"""mcplite's Client on revision 2026-07-28 against mcplite's Server: input-required rounds run by the client's
callbacks, the manual mode, listen streams, and the client API mapped onto the revision.

The pure loop is table-tested in test_client_input_rounds.py; here every flow goes through a real Server (in memory,
and once over stdio), so the server's replay and the client's loop are held to each other.
"""

import sys
import threading
from pathlib import Path
from typing import Any, Dict, List

import pytest

from mcplite import Client, Context, Server
from mcplite.client.listen import GRACEFUL, LOCAL
from mcplite.errors import LocalProtocolError, RemoteError, RemoteProtocolError, RequestTimeout
from mcplite.protocol import jsonrpc
from mcplite.protocol.input_rounds import Elicit, ListRoots, Sample
from mcplite.transports.memory import memory_pair

from support import WAIT, Recording, wait_until

ENVELOPE_VERSION = "2026-07-28"
CONFIRM = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


def make_server() -> Server:
    server = Server("envelope-era-client", version="1.0")
    server.runs: List[str] = []  # type: ignore[attr-defined]

    @server.tool
    def delete(path: str, ctx: Context) -> str:
        """Delete after two confirmations."""
        server.runs.append(path)  # type: ignore[attr-defined]
        first = ctx.elicit(f"Delete {path}?", CONFIRM, key="first")
        if first["action"] != "accept" or not first["content"]["ok"]:
            return "kept"
        second = ctx.elicit("Really?", CONFIRM, key="second")
        return "deleted" if second["action"] == "accept" and second["content"]["ok"] else "kept"

    @server.tool
    def onboard(ctx: Context) -> Dict[str, Any]:
        got = ctx.ask({"name": Elicit("Your name?", {"type": "object", "properties": {"name": {"type": "string"}}}),
                       "greeting": Sample("Say hello", max_tokens=10),
                       "roots": ListRoots()})
        return {"name": got["name"]["content"]["name"], "greeting": got["greeting"]["content"]["text"],
                "roots": [root["uri"] for root in got["roots"]["roots"]]}

    @server.tool
    def plain(a: int) -> int:
        return a * 2

    @server.prompt
    def greet(ctx: Context) -> str:
        answer = ctx.elicit("Who?", {"type": "object", "properties": {"who": {"type": "string"}}})
        return f"Hello, {answer['content']['who']}!"

    @server.resource("test://secret")
    def secret(ctx: Context) -> str:
        answer = ctx.elicit("Password?", {"type": "object", "properties": {"pw": {"type": "string"}}})
        return "open" if answer["content"]["pw"] == "sesame" else "closed"

    @server.resource("test://plain")
    def plain_resource() -> str:
        return "plain"

    return server


def answers(*replies: Dict[str, Any]) -> Any:
    """An elicitation callback that gives ``replies`` in turn and records what it was asked."""
    asked: List[str] = []
    queue = list(replies)

    def elicitation(params: Dict[str, Any]) -> Dict[str, Any]:
        asked.append(params["message"])
        return queue.pop(0)

    elicitation.asked = asked  # type: ignore[attr-defined]
    return elicitation


def accept(**content: Any) -> Dict[str, Any]:
    return {"action": "accept", "content": content}


def connect(server: Server, **options: Any) -> Client:
    return Client(server, timeout=WAIT, protocol_version=options.pop("protocol_version", "auto"), **options)


# ---- the input-required loop ---------------------------------------------------------------------------------

def test_a_tool_that_asks_twice_is_answered_by_the_elicitation_callback() -> None:
    server = make_server()
    elicitation = answers(accept(ok=True), accept(ok=True))
    with connect(server, elicitation=elicitation) as client:
        assert client.protocol_version == ENVELOPE_VERSION
        result = client.call_tool("delete", {"path": "/tmp/x"})
        assert result["content"][0]["text"] == "deleted" and result["resultType"] == "complete"
    assert elicitation.asked == ["Delete /tmp/x?", "Really?"]
    assert server.runs == ["/tmp/x"] * 3  # replay: once per round


def test_a_decline_is_an_answer() -> None:
    with connect(make_server(), elicitation=answers({"action": "decline"})) as client:
        assert client.call_tool("delete", {"path": "p"})["content"][0]["text"] == "kept"


def test_several_questions_of_every_kind_in_one_round() -> None:
    seen: Dict[str, Any] = {}

    def sampling(params: Dict[str, Any]) -> Dict[str, Any]:
        seen["sampling"] = params["messages"][0]["content"]["text"]
        return {"role": "assistant", "content": {"type": "text", "text": "hi!"}, "model": "m"}

    with connect(make_server(), elicitation=answers(accept(name="Ada")), sampling=sampling,
                 roots=[{"uri": "file:///work"}]) as client:
        result = client.call_tool("onboard")
    assert result["structuredContent"] == {"name": "Ada", "greeting": "hi!", "roots": ["file:///work"]}
    assert seen == {"sampling": "Say hello"}


def test_a_question_the_client_cannot_answer_is_refused_by_the_server_with_32021() -> None:
    # The server checks the request's declared capabilities before asking (basic/index.mdx).
    with connect(make_server()) as client:  # no elicitation callback, so no elicitation capability
        with pytest.raises(RemoteError) as refused:
            client.call_tool("delete", {"path": "p"})
    assert refused.value.code == -32021
    assert refused.value.data == {"requiredCapabilities": {"elicitation": {}}}


def test_prompts_and_resources_ask_too() -> None:
    with connect(make_server(), elicitation=answers(accept(who="Ada"), accept(pw="sesame"))) as client:
        prompt = client.get_prompt("greet")
        assert prompt["messages"][0]["content"]["text"] == "Hello, Ada!"
        assert client.read_resource("test://secret")["contents"][0]["text"] == "open"
        assert client.read_resource("test://plain")["contents"][0]["text"] == "plain"


def test_manual_mode_returns_the_question_and_a_saved_flow_resumes() -> None:
    server = make_server()
    with connect(server, elicitation=answers()) as client:
        first = client.call_tool("delete", {"path": "q"}, input_required="return")
        assert first["resultType"] == "input_required"
        assert list(first["inputRequests"]) == ["first"]
        state = first["requestState"]
        second = client.call_tool("delete", {"path": "q"}, input_required="return",
                                  input_responses={"first": accept(ok=True)}, request_state=state)
        assert list(second["inputRequests"]) == ["second"]
        # resuming with the loop on: the rest is answered by the callback (none left here: answer by hand)
        done = client.call_tool("delete", {"path": "q"}, input_responses={"second": accept(ok=True)},
                                request_state=second["requestState"])
        assert done["content"][0]["text"] == "deleted"


def test_manual_resume_arguments_are_refused_on_a_handshake_session() -> None:
    with connect(make_server(), protocol_version="2025-11-25") as client:
        with pytest.raises(LocalProtocolError, match="2026-07-28"):
            client.call_tool("plain", {"a": 1}, request_state="x")
        with pytest.raises(ValueError):
            connect(make_server()).__enter__().call_tool("plain", {"a": 1}, input_required="sometimes")


def test_a_callback_that_raises_stops_the_flow_with_its_exception() -> None:
    def broken(params: Dict[str, Any]) -> Dict[str, Any]:
        raise KeyError("no user here")

    with connect(make_server(), elicitation=broken) as client:
        with pytest.raises(KeyError, match="no user here"):
            client.call_tool("delete", {"path": "p"})
        assert client.call_tool("plain", {"a": 4})["structuredContent"] == {"result": 8}  # still usable


def test_the_rounds_work_over_stdio(tmp_path: Path) -> None:
    script = tmp_path / "server.py"
    script.write_text(
        "from mcplite import Context, Server\n"
        "server = Server('stdio-asks')\n"
        "@server.tool\n"
        "def confirm(ctx: Context) -> str:\n"
        "    answer = ctx.elicit('Sure?', {'type': 'object', 'properties': {'ok': {'type': 'boolean'}}})\n"
        "    return 'yes' if answer['action'] == 'accept' else 'no'\n"
        "server.run()\n")
    import os

    from support import ROOT

    env = {"PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    with Client.stdio([sys.executable, str(script)], env=env, timeout=WAIT, protocol_version="auto",
                      elicitation=lambda params: accept(ok=True)) as client:
        assert client.protocol_version == ENVELOPE_VERSION
        assert client.call_tool("confirm")["content"][0]["text"] == "yes"


# ---- listen ----------------------------------------------------------------------------------------------------

def test_a_listen_stream_hears_list_changes_and_resource_updates() -> None:
    server = make_server()
    with connect(server) as client:
        with client.listen(tools=True, uris=["test://plain"]) as stream:
            assert stream.honored == {"toolsListChanged": True, "resourceSubscriptions": ["test://plain"]}

            @server.tool
            def added() -> str:
                return "new"

            method, params = stream.next(timeout=WAIT)  # type: ignore[misc]
            assert method == "notifications/tools/list_changed"
            assert params["_meta"]["io.modelcontextprotocol/subscriptionId"] == stream.id
            server.notify_resource_updated("test://plain")
            server.notify_resource_updated("test://other")  # not asked for
            method, params = stream.next(timeout=WAIT)  # type: ignore[misc]
            assert (method, params["uri"]) == ("notifications/resources/updated", "test://plain")
            with pytest.raises(RequestTimeout):
                stream.next(timeout=0.2)
        assert stream.end_reason == LOCAL
        assert stream.next(timeout=WAIT) is None  # ended: iteration is over
        assert client.call_tool("plain", {"a": 1})["structuredContent"] == {"result": 2}


def test_a_stream_ended_by_the_server_is_graceful() -> None:
    from mcplite.transports.memory import memory_pair

    ours, theirs = memory_pair()
    server_session = make_server().connect(theirs)
    client = Client(ours, timeout=WAIT, protocol_version="auto").connect()
    try:
        stream = client.listen(prompts=True)
        ended = threading.Event()

        def drain() -> None:
            for _ in stream:
                pass
            ended.set()

        threading.Thread(target=drain, daemon=True).start()
        server_session.close()  # a shutdown: the server answers the listen, gracefully
        assert ended.wait(WAIT)
        assert stream.end_reason == GRACEFUL
    finally:
        client.close()


def test_callbacks_and_subscribe_resource_ride_the_managed_stream() -> None:
    server = make_server()
    changes: List[str] = []
    updates: List[str] = []
    with connect(server, on_list_changed=changes.append, on_resource_updated=updates.append) as client:
        server.add_tool(lambda: "x", name="another")
        wait_until(lambda: changes == ["tools"])
        client.subscribe_resource("test://plain")
        server.notify_resource_updated("test://plain")
        wait_until(lambda: updates == ["test://plain"])
        client.unsubscribe_resource("test://plain")
        server.notify_resource_updated("test://plain")
        client.set_logging_level("debug")
        client.notify_roots_changed()  # nothing to tell on 2026-07-28
        assert client.call_tool("plain", {"a": 2})["structuredContent"] == {"result": 4}
        assert updates == ["test://plain"]


def test_listen_needs_2026_07_28() -> None:
    with connect(make_server(), protocol_version="2025-11-25") as client:
        with pytest.raises(LocalProtocolError, match="on_list_changed"):
            client.listen(tools=True)


def test_an_unknown_result_type_is_a_protocol_error_and_a_missing_one_is_complete() -> None:
    from mcplite.transports.memory import memory_pair

    from support import Background, RawPeer

    ours, theirs = memory_pair()
    peer = RawPeer(ours)
    client = Client(theirs, timeout=WAIT, protocol_version=ENVELOPE_VERSION).connect()
    try:
        for result, outcome in (({"content": [], "resultType": "task"}, "task"),
                                ({"content": [{"type": "text", "text": "old style"}]}, "old style")):
            call = Background(lambda: client.call_tool("odd"))
            request = peer.next()
            peer.send({"jsonrpc": "2.0", "id": request["id"], "result": result})
            if outcome == "task":
                with pytest.raises(RemoteProtocolError, match="task"):
                    call.join()
            else:
                listing = peer.next()  # the client learns the tool's output schema once
                assert listing["method"] == "tools/list"
                peer.send({"jsonrpc": "2.0", "id": listing["id"], "result": {"tools": []}})
                assert call.join()["content"][0]["text"] == outcome
    finally:
        client.close()


def test_the_envelope_is_encoded_once_and_every_request_is_written_as_its_plain_dict_would_be():
    """The client appends its envelope's text as each request is made (`jsonrpc.request_with_members`) instead of
    encoding it per request: the wire holds the same request built as plain dicts, whatever else its _meta holds."""
    server = make_server()
    client_end, server_end = memory_pair()
    server.connect(server_end)
    recording = Recording(client_end)
    with Client(recording, timeout=WAIT) as client:
        assert client.protocol_version == ENVELOPE_VERSION
        progress: List[Any] = []
        assert client.call_tool("plain", {"a": 2})["structuredContent"] == {"result": 4}
        client.call_tool("plain", {"a": 3}, meta={"note": "mine"})
        client.call_tool("plain", {"a": 4}, progress=lambda *args: progress.append(args))
        client.list_tools()
        client.ping()
        client.request("tools/list", {"_meta": {}})  # an empty _meta of the caller's: the envelope alone
        client.request("tools/list", {"_meta": None})
        client.set_logging_level("debug")  # a new envelope: encoded again
        client.call_tool("plain", {"a": 5})
    requests = [m for m in recording.sent if isinstance(m, dict) and "id" in m and "method" in m]
    assert len(requests) >= 6
    assert sum(type(m) is not dict for m in requests) >= 3  # written with the envelope's text appended
    for message in requests:
        plain = json_copy(message)
        assert jsonrpc.encode_bytes(message) == jsonrpc.encode_bytes(plain)
        assert jsonrpc.encode(message).count('"_meta"') == 1
        assert plain["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == ENVELOPE_VERSION
    calls = [m["params"] for m in requests if m["method"] == "tools/call"]
    assert calls[1]["_meta"]["note"] == "mine" and "progressToken" in calls[2]["_meta"]
    assert calls[-1]["_meta"]["io.modelcontextprotocol/logLevel"] == "debug"
    assert "io.modelcontextprotocol/logLevel" not in calls[0]["_meta"]


def json_copy(value: Any) -> Any:
    """``value`` rebuilt of plain dicts and lists, in the same order."""
    if isinstance(value, dict):
        return {key: json_copy(item) for key, item in value.items()}
    if isinstance(value, list):
        return [json_copy(item) for item in value]
    return value
