"""`Server` through a real `Client` in memory: what handlers return, how errors surface, every feature.

Each test builds a small server, connects `Client(server)` and checks what arrives on the client side, so
the wire shapes are the ones a remote peer would see (the memory transport really encodes JSON).
Notifications that must *not* arrive are checked with a marker sent after them: notifications reach the
client in order, so once the marker is seen anything sent before it has been seen too.
"""

import base64
import dataclasses
import logging
import queue
import threading
from typing import Any, Dict, List

import pytest

from mcplite import Client, Context, Server, ToolResult
from mcplite import content as c
from mcplite.protocol import types as t
from mcplite.protocol.versions import LATEST_HANDSHAKE_VERSION
from mcplite.errors import (
    INVALID_PARAMS, METHOD_NOT_FOUND, RESOURCE_NOT_FOUND, RemoteError, ResourceNotFound, RPCError,
)

from support import WAIT

OLD_VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18"]
PNG = b"\x89PNG\r\n\x1a\n"


def connect(server: Server, **options: Any) -> Client:
    """A connected in-memory client (use it in a ``with`` block), on the handshake era unless ``options`` say
    otherwise: these tests read the 2025-11-25 wire (test_envelope_server.py has 2026-07-28's)."""
    options.setdefault("protocol_version", LATEST_HANDSHAKE_VERSION)
    return Client(server, timeout=WAIT, **options)


def settled(client: Client) -> Client:
    """Make sure the server has taken our `initialized` notification, which it answers nothing to.

    Until then the server must not send us notifications; a ping's answer comes after it on the wire.
    """
    client.ping()
    return client


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


class Inbox:
    """A thread-safe collector for callbacks, read with a timeout."""

    def __init__(self) -> None:
        self.items: "queue.Queue[Any]" = queue.Queue()

    def __call__(self, *args: Any) -> None:
        self.items.put(args[0] if len(args) == 1 else args)

    def next(self) -> Any:
        return self.items.get(timeout=WAIT)

    def until(self, predicate: Any) -> List[Any]:
        """Everything received up to and including the first item matching ``predicate``."""
        seen = []
        while True:
            item = self.next()
            seen.append(item)
            if predicate(item):
                return seen


# ---- tools: what a handler returns ------------------------------------------------------------------------
def tool_server() -> Server:
    server = Server("tools")

    @server.tool
    def plain() -> str:
        return "hello"

    @server.tool
    def nothing() -> None:
        return None

    @server.tool
    def mapping():
        return {"a": 1, "b": [1, 2]}

    @server.tool
    def listing():
        return [1, 2, 3]

    @server.tool
    def picture():
        return c.image(PNG, "image/png")

    @server.tool
    def sound():
        return c.audio(b"RIFF", "audio/wav")

    @server.tool
    def embedded():
        return [c.resource("file:///notes.txt", "some notes"), c.resource("mem://data", b"\x00\x01")]

    @server.tool
    def link():
        return c.resource_link("file:///big.csv", "big", title="Big", description="a big file",
                               mime_type="text/csv", size=10)

    @server.tool
    def mixed():
        return ["first", c.text("second", annotations={"priority": 0.5}), c.image(b"x", "image/gif")]

    @server.tool
    def full() -> ToolResult:
        return ToolResult(["done", c.text("really")], structured={"n": 1}, meta={"trace": "abc"})

    @server.tool
    def failing_result() -> ToolResult:
        return ToolResult(["no luck"], is_error=True)

    @server.tool
    def explode():
        raise ValueError("the disk is on fire")

    @server.tool
    def explode_silently():
        raise KeyError()

    return server


@pytest.mark.parametrize("name, content", [
    ("plain", [{"type": "text", "text": "hello"}]),
    ("nothing", []),
    ("listing", [{"type": "text", "text": "[1, 2, 3]"}]),
    ("picture", [{"type": "image", "data": b64(PNG), "mimeType": "image/png"}]),
    ("sound", [{"type": "audio", "data": b64(b"RIFF"), "mimeType": "audio/wav"}]),
    ("embedded", [
        {"type": "resource", "resource": {"uri": "file:///notes.txt", "mimeType": "text/plain", "text": "some notes"}},
        {"type": "resource", "resource": {"uri": "mem://data", "blob": b64(b"\x00\x01")}},
    ]),
    ("link", [{"type": "resource_link", "uri": "file:///big.csv", "name": "big", "title": "Big",
               "description": "a big file", "mimeType": "text/csv", "size": 10}]),
    ("mixed", [{"type": "text", "text": "first"},
               {"type": "text", "text": "second", "annotations": {"priority": 0.5}},
               {"type": "image", "data": b64(b"x"), "mimeType": "image/gif"}]),
])
def test_tool_return_values_become_content(name, content):
    with connect(tool_server()) as client:
        result = client.call_tool(name)
    assert result == {"content": content}


def test_a_dict_becomes_json_text_and_structured_content():
    with connect(tool_server()) as client:
        result = client.call_tool("mapping")
    assert result == {"content": [{"type": "text", "text": '{"a": 1, "b": [1, 2]}'}],
                      "structuredContent": {"a": 1, "b": [1, 2]}}


def test_a_tool_result_is_sent_as_built():
    with connect(tool_server()) as client:
        assert client.call_tool("full") == {
            "content": [{"type": "text", "text": "done"}, {"type": "text", "text": "really"}],
            "structuredContent": {"n": 1}, "_meta": {"trace": "abc"}}
        assert client.call_tool("failing_result") == {"content": [{"type": "text", "text": "no luck"}],
                                                      "isError": True}


def test_an_exception_in_a_tool_is_an_error_result_with_its_type_and_message(caplog):
    with connect(tool_server()) as client, caplog.at_level(logging.WARNING, logger="mcplite"):
        assert client.call_tool("explode") == {
            "content": [{"type": "text", "text": "ValueError: the disk is on fire"}], "isError": True}
        # No message: the exception's type names the problem.
        assert client.call_tool("explode_silently")["content"][0]["text"] == "KeyError"
        with pytest.raises(RemoteError, match="ValueError: the disk is on fire"):
            client.call_tool("explode", raise_on_error=True)
    # The author gets the traceback, at WARNING: visible without configuring anything under Server.run.
    failures = [record for record in caplog.records if record.getMessage() == "tool explode failed"]
    assert len(failures) == 2 and all(record.levelno == logging.WARNING for record in failures)
    assert failures[0].exc_info is not None and failures[0].exc_info[0] is ValueError
    assert "the disk is on fire" in caplog.text and "Traceback" in caplog.text


def test_a_key_error_keeps_its_type():
    server = Server("keys")

    @server.tool
    def lookup(user: str) -> str:
        return {"alice": "ok"}[user]

    with connect(server) as client:
        assert client.call_tool("lookup", {"user": "bob"})["content"][0]["text"] == "KeyError: 'bob'"


def test_an_rpc_error_raised_in_a_tool_is_the_answer():
    server = Server("rpc")

    @server.tool
    def strict():
        raise RPCError(-32099, "custom refusal", {"why": "test"})

    with connect(server) as client:
        with pytest.raises(RemoteError) as info:
            client.call_tool("strict")
    assert (info.value.code, info.value.message, info.value.data) == (-32099, "custom refusal", {"why": "test"})


def test_a_refused_nested_request_is_a_tool_error_not_the_clients_error_code():
    server = Server("nested")

    @server.tool
    def ask(ctx: Context) -> str:
        return ctx.sample("hi")["content"]["text"]

    def refuse(params):
        raise RPCError(-1, "User rejected sampling")

    with connect(server, sampling=refuse) as client:
        result = client.call_tool("ask")
    assert result["isError"] is True and "User rejected sampling" in result["content"][0]["text"]


def test_a_hand_written_output_schema_needs_an_object_result():
    server = Server("schema")

    @server.tool(output_schema={"type": "object", "properties": {"n": {"type": "integer"}}})
    def bad():
        return 1

    with connect(server) as client:
        result = client.call_tool("bad")
    assert result["isError"] is True and "must return an object" in result["content"][0]["text"]


def test_a_hand_written_input_schema_is_published_and_checked_before_the_signatures():
    server = Server("schema")
    published = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}, "required": ["n"]}

    @server.tool(input_schema=published)
    def count(n: int = 0, **extra: Any) -> int:
        return n

    with pytest.raises(ValueError, match='"type": "object"'):
        server.add_tool(lambda: None, name="not_an_object", input_schema={"type": "array"})
    with connect(server) as client:
        assert client.list_tools()[0]["inputSchema"] == published
        assert client.call_tool("count", {"n": 2})["structuredContent"] == {"result": 2}
        refused = client.call_tool("count", {"n": 0})  # the signature allows it; the published schema does not
    assert refused["isError"] is True and "minimum" in refused["content"][0]["text"], refused


def test_unknown_tool_is_invalid_params():
    with connect(tool_server()) as client:
        with pytest.raises(RemoteError) as info:
            client.call_tool("no_such_tool")
    assert info.value.code == INVALID_PARAMS
    assert "no_such_tool" in info.value.message


def adder() -> Server:
    server = Server("adder")

    @server.tool
    def add(a: int, b: int = 0) -> int:
        return a + b

    return server


def test_invalid_arguments_are_an_error_result_in_2025_11_25():
    with connect(adder()) as client:
        result = client.call_tool("add", {"a": "one"})
    assert result["isError"] is True
    assert "$.a: expected integer, got string" in result["content"][0]["text"]


@pytest.mark.parametrize("version", OLD_VERSIONS)
def test_invalid_arguments_are_invalid_params_before_2025_11_25(version):
    with connect(adder(), protocol_version=version) as client:
        assert client.protocol_version == version
        with pytest.raises(RemoteError) as info:
            client.call_tool("add", {"b": 2})
        assert info.value.code == INVALID_PARAMS
        assert "$.a: missing required property" in info.value.message
        with pytest.raises(RemoteError) as info:
            client.request(t.TOOLS_CALL, {"name": "add", "arguments": [1, 2]})
        assert info.value.code == INVALID_PARAMS


def test_arguments_are_converted_to_what_the_annotations_promise():
    server = Server("convert")

    @dataclasses.dataclass
    class Point:
        x: float
        y: float

    @server.tool
    def describe(point: Point, tags: set, scale: float = 1.0) -> str:
        assert isinstance(point, Point) and isinstance(tags, set) and isinstance(scale, float)
        return f"{point.x * scale},{point.y * scale} {sorted(tags)}"

    with connect(server) as client:
        result = client.call_tool("describe", {"point": {"x": 1, "y": 2}, "tags": ["b", "a"], "scale": 2})
    assert result["content"][0]["text"] == "2.0,4.0 ['a', 'b']"


# ---- output schema and structured content -------------------------------------------------------------
def structured_server() -> Server:
    server = Server("structured")

    @dataclasses.dataclass
    class Weather:
        city: str
        celsius: float

    @server.tool
    def count() -> int:
        return 42

    @server.tool
    def weather(city: str) -> Weather:
        return Weather(city, 21.5)

    @server.tool
    def table() -> Dict[str, int]:
        return {"a": 1}

    @server.tool(output_schema=False)
    def unstructured() -> int:
        return 7

    @server.tool(output_schema={"type": "object", "properties": {"ok": {"type": "boolean"}}})
    def custom():
        return {"ok": True}

    return server


def tools_by_name(client: Client) -> Dict[str, Any]:
    return {tool["name"]: tool for tool in client.list_tools()}


def test_output_schemas_come_from_the_return_annotation():
    with connect(structured_server()) as client:
        tools = tools_by_name(client)
    assert tools["count"]["outputSchema"] == {"type": "object", "properties": {"result": {"type": "integer"}},
                                              "required": ["result"], "x-fastmcp-wrap-result": True}
    assert tools["weather"]["outputSchema"] == {
        "type": "object", "properties": {"city": {"type": "string"}, "celsius": {"type": "number"}},
        "required": ["city", "celsius"]}
    assert tools["table"]["outputSchema"] == {"type": "object", "additionalProperties": {"type": "integer"}}
    assert "outputSchema" not in tools["unstructured"]
    assert tools["custom"]["outputSchema"] == {"type": "object", "properties": {"ok": {"type": "boolean"}}}


def test_structured_content_is_sent_with_its_text_form():
    with connect(structured_server()) as client:
        # A non-object result is wrapped as {"result": ...}, as the output schema says.
        assert client.call_tool("count") == {"content": [{"type": "text", "text": "42"}],
                                             "structuredContent": {"result": 42}}
        assert client.call_tool("weather", {"city": "Oslo"}) == {
            "content": [{"type": "text", "text": '{"city": "Oslo", "celsius": 21.5}'}],
            "structuredContent": {"city": "Oslo", "celsius": 21.5}}
        assert client.call_tool("custom")["structuredContent"] == {"ok": True}
        assert client.call_tool("unstructured") == {"content": [{"type": "text", "text": "7"}]}


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26"])
def test_structured_content_is_left_out_before_2025_06_18(version):
    with connect(structured_server(), protocol_version=version) as client:
        assert client.call_tool("count") == {"content": [{"type": "text", "text": "42"}]}
        assert "structuredContent" not in client.call_tool("weather", {"city": "Oslo"})
    with connect(tool_server(), protocol_version=version) as client:
        assert "structuredContent" not in client.call_tool("mapping")
        assert "structuredContent" not in client.call_tool("full")


# ---- registration ---------------------------------------------------------------------------------------
def test_duplicate_registration_raises():
    server = Server("dup")

    @server.tool
    def same() -> str:
        return ""

    @server.resource("res://same")
    def res() -> str:
        return ""

    @server.resource("res://{x}")
    def template(x: str) -> str:
        return x

    @server.prompt
    def greet() -> str:
        return ""

    with pytest.raises(ValueError, match="same"):
        server.add_tool(lambda: "", name="same")
    with pytest.raises(ValueError, match="res://same"):
        server.add_resource(lambda: "", "res://same")
    with pytest.raises(ValueError, match="res://"):
        server.add_resource(lambda x: x, "res://{x}")
    with pytest.raises(ValueError, match="greet"):
        server.add_prompt(lambda: "", name="greet")


def test_removing_what_is_not_registered_raises():
    server = Server("none")
    for remove in (server.remove_tool, server.remove_resource, server.remove_prompt):
        with pytest.raises(KeyError):
            remove("missing")


def test_decorators_with_and_without_parentheses_return_the_function():
    server = Server("decorators")

    def bare() -> str:
        """Bare tool."""
        return "bare"

    def empty() -> str:
        return "empty"

    assert server.tool(bare) is bare
    assert server.tool()(empty) is empty
    assert server.prompt(bare) is bare
    assert server.prompt()(empty) is empty
    with connect(server) as client:
        assert [tool["name"] for tool in client.list_tools()] == ["bare", "empty"]
        assert [prompt["name"] for prompt in client.list_prompts()] == ["bare", "empty"]
        assert client.call_tool("empty")["content"][0]["text"] == "empty"


def test_tool_metadata_options_reach_the_tool_list():
    server = Server("meta")
    icon = {"src": "https://example.com/i.png", "mimeType": "image/png", "sizes": ["48x48"]}

    @server.tool(name="renamed", title="A Title", description="Overrides the docstring.",
                 annotations={"readOnlyHint": True, "openWorldHint": False}, icons=[icon], meta={"team": "x"})
    def original(query: str, limit: int = 10) -> str:
        """Docstring text.

        Args:
            query: what to look for.
        """
        return query

    @server.tool
    def documented(query: str) -> str:
        """Search things.

        Args:
            query: what to look for.
        """
        return query

    with connect(server) as client:
        tools = tools_by_name(client)
        assert client.call_tool("renamed", {"query": "q"})["content"][0]["text"] == "q"
    assert tools["renamed"] == {
        "name": "renamed", "title": "A Title", "description": "Overrides the docstring.",
        "inputSchema": {"type": "object", "properties": {
            "query": {"type": "string", "description": "what to look for."},
            "limit": {"type": "integer", "default": 10}}, "required": ["query"]},
        "annotations": {"readOnlyHint": True, "openWorldHint": False}, "icons": [icon], "_meta": {"team": "x"}}
    assert tools["documented"]["description"] == "Search things."
    assert "title" not in tools["documented"] and "annotations" not in tools["documented"]


def test_resource_and_prompt_metadata_options():
    server = Server("meta")
    icon = {"src": "https://example.com/r.png"}

    @server.resource("res://doc", name="doc", title="Doc", description="A document", mime_type="text/markdown",
                     size=5, annotations={"audience": ["user"]}, icons=[icon], meta={"v": 1})
    def doc() -> str:
        return "# hi"

    @server.resource("res://items/{id}", name="item", title="Item", mime_type="application/json")
    def item(id: str) -> str:
        """One item by id."""
        return '{"id": "%s"}' % id

    @server.prompt(name="ask", title="Ask", description="Ask a question", icons=[icon], meta={"v": 2})
    def ask_prompt(question: str) -> str:
        return question

    with connect(server) as client:
        assert client.list_resources() == [{
            "uri": "res://doc", "name": "doc", "title": "Doc", "description": "A document",
            "mimeType": "text/markdown", "annotations": {"audience": ["user"]}, "icons": [icon],
            "_meta": {"v": 1}, "size": 5}]
        assert client.list_resource_templates() == [{
            "uriTemplate": "res://items/{id}", "name": "item", "title": "Item", "description": "One item by id.",
            "mimeType": "application/json"}]
        assert client.list_prompts() == [{
            "name": "ask", "title": "Ask", "description": "Ask a question",
            "arguments": [{"name": "question", "required": True}], "icons": [icon], "_meta": {"v": 2}}]
        assert client.read_resource("res://doc")["contents"] == [
            {"uri": "res://doc", "mimeType": "text/markdown", "text": "# hi"}]
        assert client.read_resource("res://items/7")["contents"] == [
            {"uri": "res://items/7", "mimeType": "application/json", "text": '{"id": "7"}'}]


def test_server_info_and_instructions_reach_the_client():
    server = Server("info", "2.0", title="Info Server", website_url="https://example.com",
                    instructions="Use wisely.")
    server.add_tool(lambda: "", name="x")
    with connect(server) as client:
        assert client.server_info == {"name": "info", "version": "2.0", "title": "Info Server",
                                      "websiteUrl": "https://example.com"}
        assert client.instructions == "Use wisely."
        # Every feature is declared, registered or not: features can be added while clients are connected.
        assert client.server_capabilities == {"tools": {"listChanged": True},
                                              "resources": {"subscribe": True, "listChanged": True},
                                              "prompts": {"listChanged": True}, "logging": {}, "completions": {}}


# ---- resources ------------------------------------------------------------------------------------------
def resource_server() -> Server:
    server = Server("resources")

    @server.resource("res://text")
    def text() -> str:
        return "plain text"

    @server.resource("res://bytes")
    def data() -> bytes:
        return b"\x00\xffdata"

    @server.resource("res://many")
    def many() -> list:
        return ["one", b"two", {"text": "three", "mimeType": "text/x-three"}]

    @server.resource("users://{user_id}/profile", mime_type="application/json")
    def profile(user_id: int) -> str:
        if user_id == 0:
            raise ResourceNotFound(f"users://{user_id}/profile", "no user 0")
        return '{"id": %d}' % user_id

    @server.resource("files://{name}/raw")
    def raw(name: str) -> bytes:
        return name.encode()

    return server


def test_static_resources_text_and_bytes():
    with connect(resource_server()) as client:
        assert client.read_resource("res://text") == {
            "contents": [{"uri": "res://text", "mimeType": "text/plain", "text": "plain text"}]}
        assert client.read_resource("res://bytes") == {
            "contents": [{"uri": "res://bytes", "mimeType": "application/octet-stream", "blob": b64(b"\x00\xffdata")}]}
        assert client.read_resource("res://many")["contents"] == [
            {"uri": "res://many", "mimeType": "text/plain", "text": "one"},
            {"uri": "res://many", "mimeType": "application/octet-stream", "blob": b64(b"two")},
            {"uri": "res://many", "text": "three", "mimeType": "text/x-three"}]
        assert [r["uri"] for r in client.list_resources()] == ["res://text", "res://bytes", "res://many"]


def test_resource_templates_are_listed_and_read_with_typed_variables():
    with connect(resource_server()) as client:
        assert client.list_resource_templates() == [
            {"uriTemplate": "users://{user_id}/profile", "name": "profile", "mimeType": "application/json"},
            {"uriTemplate": "files://{name}/raw", "name": "raw"}]
        assert client.read_resource("users://42/profile")["contents"] == [
            {"uri": "users://42/profile", "mimeType": "application/json", "text": '{"id": 42}'}]
        assert client.read_resource("files://report/raw")["contents"] == [
            {"uri": "files://report/raw", "mimeType": "application/octet-stream", "blob": b64(b"report")}]


@pytest.mark.parametrize("uri", ["res://nothing", "users://not-a-number/profile", "users://0/profile"])
def test_unknown_resources_are_not_found(uri):
    with connect(resource_server()) as client:
        with pytest.raises(RemoteError) as info:
            client.read_resource(uri)
    assert info.value.code == RESOURCE_NOT_FOUND
    assert info.value.data == {"uri": uri}


def test_a_template_with_a_parameter_that_is_no_variable_is_refused():
    server = Server("bad")
    with pytest.raises(TypeError, match="other"):
        server.add_resource(lambda name, other: name, "res://{name}")


def subscription_server() -> Server:
    server = Server("subs")
    server.add_resource(lambda: "v1", "res://watched", name="watched")
    server.add_resource(lambda: "x", "res://other", name="other")
    return server


def test_resource_updates_reach_only_subscribed_clients():
    server = subscription_server()
    updates_a, updates_b = Inbox(), Inbox()
    logs_a, logs_b = Inbox(), Inbox()
    with connect(server, on_resource_updated=updates_a, on_log=logs_a) as a, \
            connect(server, on_resource_updated=updates_b, on_log=logs_b) as b:
        a.subscribe_resource("res://watched")
        b.subscribe_resource("res://other")
        server.notify_resource_updated("res://watched")
        assert updates_a.next() == "res://watched"
        server.log("info", "marker 1")
        assert logs_b.next()["data"] == "marker 1"
        assert updates_b.items.empty()  # b saw the marker, so it would have seen the update first

        a.unsubscribe_resource("res://watched")
        server.notify_resource_updated("res://watched")
        server.notify_resource_updated("res://other")
        assert updates_b.next() == "res://other"
        server.log("info", "marker 2")
        assert [m["data"] for m in logs_a.until(lambda m: m["data"] == "marker 2")] == ["marker 1", "marker 2"]
        assert updates_a.items.empty()


def test_subscription_needs_a_uri():
    with connect(subscription_server()) as client:
        with pytest.raises(RemoteError) as info:
            client.request(t.RESOURCES_SUBSCRIBE, {})
    assert info.value.code == INVALID_PARAMS


# ---- prompts --------------------------------------------------------------------------------------------
def prompt_server() -> Server:
    server = Server("prompts")

    @server.prompt
    def review(code: str, language: str = "python") -> str:
        """Review some code.

        Args:
            code: the code to review.
            language: its language.
        """
        return f"Review this {language}: {code}"

    @server.prompt
    def reply() -> dict:
        return c.message("I can help.", role="assistant")

    @server.prompt
    def chat(topic: str) -> list:
        return [f"Tell me about {topic}", c.message("Gladly.", role="assistant"), c.image(b"img", "image/png"),
                {"role": "user", "content": "thanks"}]

    @server.prompt
    def raw(n: int) -> dict:
        return {"description": "built by hand", "messages": [c.message(str(n * 2))]}

    return server


def test_prompt_arguments_come_from_the_signature():
    with connect(prompt_server()) as client:
        prompts = {p["name"]: p for p in client.list_prompts()}
    assert prompts["review"] == {"name": "review", "description": "Review some code.", "arguments": [
        {"name": "code", "description": "the code to review.", "required": True},
        {"name": "language", "description": "its language.", "required": False}]}
    assert prompts["reply"]["arguments"] == []


def test_prompt_results():
    with connect(prompt_server()) as client:
        assert client.get_prompt("review", {"code": "x = 1"}) == {
            "description": "Review some code.",
            "messages": [{"role": "user", "content": {"type": "text", "text": "Review this python: x = 1"}}]}
        assert client.get_prompt("review", {"code": "fn main", "language": "rust"})["messages"][0]["content"][
            "text"] == "Review this rust: fn main"
        assert client.get_prompt("reply")["messages"] == [
            {"role": "assistant", "content": {"type": "text", "text": "I can help."}}]
        assert client.get_prompt("chat", {"topic": "owls"})["messages"] == [
            {"role": "user", "content": {"type": "text", "text": "Tell me about owls"}},
            {"role": "assistant", "content": {"type": "text", "text": "Gladly."}},
            {"role": "user", "content": {"type": "image", "data": b64(b"img"), "mimeType": "image/png"}},
            {"role": "user", "content": {"type": "text", "text": "thanks"}}]
        # Prompt arguments are strings on the wire; "21" becomes the int the signature asks for.
        assert client.get_prompt("raw", {"n": "21"}) == {
            "description": "built by hand", "messages": [{"role": "user", "content": {"type": "text", "text": "42"}}]}


@pytest.mark.parametrize("name, arguments", [("review", None), ("raw", {"n": "many"}), ("nope", None)])
def test_bad_prompt_requests_are_invalid_params(name, arguments):
    with connect(prompt_server()) as client:
        with pytest.raises(RemoteError) as info:
            client.get_prompt(name, arguments)
    assert info.value.code == INVALID_PARAMS


# ---- completion -----------------------------------------------------------------------------------------
def completion_server() -> Server:
    server = Server("complete")
    languages = ["python", "perl", "php", "rust"]

    @server.prompt
    def review(code: str, language: str = "python") -> str:
        return code

    @server.resource("repo://{owner}/{name}")
    def repo(owner: str, name: str) -> str:
        return f"{owner}/{name}"

    @server.completion(prompt="review", argument="language")
    def complete_language(value: str, arguments: Dict[str, str]) -> List[str]:
        return [lang for lang in languages if lang.startswith(value)]

    @server.completion(resource="repo://{owner}/{name}", argument="name")
    def complete_repo(value: str, arguments: Dict[str, str]) -> Dict[str, Any]:
        owner = arguments.get("owner", "?")
        return {"values": [f"{owner}-{value}1", f"{owner}-{value}2"], "total": 9, "hasMore": True}

    @server.completion(resource="repo://{owner}/{name}", argument="owner")
    def complete_owner(value: str, arguments: Dict[str, str]) -> List[str]:
        return [f"user{i}" for i in range(250)]

    return server


def test_completion_of_prompt_arguments():
    with connect(completion_server()) as client:
        ref = {"type": "ref/prompt", "name": "review"}
        assert client.complete(ref, "language", "p") == {"values": ["python", "perl", "php"]}
        assert client.complete(ref, "language", "") == {"values": ["python", "perl", "php", "rust"]}
        assert client.complete(ref, "code", "x") == {"values": []}  # no completer: nothing to offer


def test_completion_of_template_variables_sees_the_other_arguments():
    with connect(completion_server()) as client:
        ref = {"type": "ref/resource", "uri": "repo://{owner}/{name}"}
        assert client.complete(ref, "name", "lib", context={"owner": "ada"}) == {
            "values": ["ada-lib1", "ada-lib2"], "total": 9, "hasMore": True}


def test_completion_values_are_capped_at_a_hundred():
    with connect(completion_server()) as client:
        completion = client.complete({"type": "ref/resource", "uri": "repo://{owner}/{name}"}, "owner")
    assert completion["values"] == [f"user{i}" for i in range(100)]
    assert completion["total"] == 250 and completion["hasMore"] is True


@pytest.mark.parametrize("ref", [{"type": "ref/prompt", "name": "nope"}, {"type": "ref/resource", "uri": "x://{y}"},
                                 {"type": "ref/other", "name": "review"}])
def test_completion_for_unknown_references_is_invalid_params(ref):
    with connect(completion_server()) as client:
        with pytest.raises(RemoteError) as info:
            client.complete(ref, "language", "p")
    assert info.value.code == INVALID_PARAMS


def test_completion_needs_exactly_one_target():
    server = Server("x")
    with pytest.raises(TypeError):
        server.completion(argument="a")
    with pytest.raises(TypeError):
        server.completion(argument="a", prompt="p", resource="r://{a}")


# ---- logging --------------------------------------------------------------------------------------------
def logging_server() -> Server:
    server = Server("logs")

    @server.tool
    def chatty(ctx: Context) -> str:
        ctx.debug("debug detail")
        ctx.info("some info", logger="app")
        ctx.log("notice", {"structured": True})
        ctx.warning("careful")
        ctx.error("broken")
        return "done"

    @server.tool
    def bad_level(ctx: Context) -> str:
        ctx.log("loud", "x")
        return "unreachable"

    return server


def test_log_messages_are_filtered_by_the_level_the_client_sets():
    logs = Inbox()
    with connect(logging_server(), on_log=logs) as client:
        client.call_tool("chatty")
        first = logs.until(lambda m: m["data"] == "broken")
        assert [m["level"] for m in first] == ["debug", "info", "notice", "warning", "error"]
        assert first[1] == {"level": "info", "data": "some info", "logger": "app"}
        assert first[2] == {"level": "notice", "data": {"structured": True}}

        client.set_logging_level("warning")
        client.call_tool("chatty")
        assert [m["level"] for m in logs.until(lambda m: m["data"] == "broken")] == ["warning", "error"]


def test_an_invalid_log_level_is_refused():
    with connect(logging_server()) as client:
        with pytest.raises(RemoteError) as info:
            client.request(t.LOGGING_SET_LEVEL, {"level": "loud"})
        assert info.value.code == INVALID_PARAMS
        result = client.call_tool("bad_level")
        assert result["isError"] is True and "unknown log level 'loud'" in result["content"][0]["text"]


def test_server_log_reaches_every_client_that_wants_it():
    server = logging_server()
    logs_a, logs_b = Inbox(), Inbox()
    with connect(server, on_log=logs_a) as a, connect(server, on_log=logs_b) as b:
        settled(b)
        a.set_logging_level("error")
        server.log("info", "for b only")
        server.log("error", "for both", logger="srv")
        assert logs_a.next() == {"level": "error", "data": "for both", "logger": "srv"}
        assert [m["data"] for m in logs_b.until(lambda m: m["data"] == "for both")] == ["for b only", "for both"]
    with connect(server, on_log=logs_b) as b:
        settled(b)
        with pytest.raises(ValueError, match="loud"):
            server.log("loud", "not a level")
        server.log("info", "marker")
        assert logs_b.next()["data"] == "marker"  # and nothing before it


# ---- pagination -----------------------------------------------------------------------------------------
def paged_server(count: int = 5, page_size: int = 2) -> Server:
    server = Server("paged", page_size=page_size)
    for i in range(count):
        server.add_tool(lambda: "", name=f"tool{i}")
        server.add_resource(lambda: "", f"res://{i}", name=f"res{i}")
        server.add_resource(lambda x: x, f"tpl{i}://{{x}}", name=f"tpl{i}")
        server.add_prompt(lambda: "", name=f"prompt{i}")
    return server


def test_list_methods_fetch_every_page():
    with connect(paged_server()) as client:
        page = client.request(t.TOOLS_LIST)
        assert [tool["name"] for tool in page["tools"]] == ["tool0", "tool1"] and page["nextCursor"]
        assert [tool["name"] for tool in client.list_tools()] == [f"tool{i}" for i in range(5)]
        assert [r["name"] for r in client.list_resources()] == [f"res{i}" for i in range(5)]
        assert [r["name"] for r in client.list_resource_templates()] == [f"tpl{i}" for i in range(5)]
        assert [p["name"] for p in client.list_prompts()] == [f"prompt{i}" for i in range(5)]


def test_the_last_page_has_no_cursor():
    with connect(paged_server(count=4, page_size=2)) as client:
        first = client.request(t.PROMPTS_LIST)
        second = client.request(t.PROMPTS_LIST, {"cursor": first["nextCursor"]})
    assert [p["name"] for p in second["prompts"]] == ["prompt2", "prompt3"]
    assert "nextCursor" not in second


@pytest.mark.parametrize("cursor", ["garbage", "", 17, base64.urlsafe_b64encode(b"mcplite:99").decode()])
def test_a_cursor_the_server_did_not_issue_is_invalid_params(cursor):
    with connect(paged_server()) as client:
        with pytest.raises(RemoteError) as info:
            client.request(t.TOOLS_LIST, {"cursor": cursor})
    assert info.value.code == INVALID_PARAMS


# ---- the registry changes while clients are connected -------------------------------------------------
def test_changes_at_run_time_notify_every_connected_client():
    server = Server("live")
    server.add_tool(lambda: "", name="first")
    server.add_resource(lambda: "", "res://first")
    server.add_prompt(lambda: "", name="first")
    changes_a, changes_b = Inbox(), Inbox()
    with connect(server, on_list_changed=changes_a) as a, connect(server, on_list_changed=changes_b) as b:
        settled(a), settled(b)
        server.add_tool(lambda: "new", name="second")
        assert changes_a.next() == changes_b.next() == "tools"
        assert [tool["name"] for tool in a.list_tools()] == ["first", "second"]
        assert a.call_tool("second")["content"][0]["text"] == "new"

        server.remove_tool("second")
        assert changes_a.next() == changes_b.next() == "tools"
        assert [tool["name"] for tool in b.list_tools()] == ["first"]

        server.add_resource(lambda x: x, "res://t/{x}")
        assert changes_a.next() == changes_b.next() == "resources"
        server.remove_resource("res://t/{x}")
        assert changes_a.next() == changes_b.next() == "resources"
        assert b.list_resource_templates() == []
        server.remove_resource("res://first")
        assert changes_a.next() == changes_b.next() == "resources"

        server.add_prompt(lambda: "", name="second")
        assert changes_a.next() == changes_b.next() == "prompts"
        server.remove_prompt("second")
        assert changes_a.next() == changes_b.next() == "prompts"
    with connect(server, on_list_changed=changes_a):
        pass
    assert changes_a.items.empty() and changes_b.items.empty()


# ---- Context ----------------------------------------------------------------------------------------------
def test_context_progress_reaches_the_callback_before_the_result():
    server = Server("progress")

    @server.tool
    def work(steps: int, ctx: Context) -> str:
        for i in range(1, steps + 1):
            ctx.progress(i, steps, message=f"step {i}")
        ctx.progress(steps + 1)
        return "finished"

    seen: List[Any] = []
    with connect(server) as client:
        result = client.call_tool("work", {"steps": 3}, progress=lambda *report: seen.append(report))
        assert result["content"][0]["text"] == "finished"
        assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3"), (4, None, None)]
        # Without a progress callback no token is sent, and ctx.progress does nothing.
        assert client.call_tool("work", {"steps": 2})["content"][0]["text"] == "finished"
    seen.clear()
    with connect(server, protocol_version="2024-11-05") as client:
        client.call_tool("work", {"steps": 1}, progress=lambda *report: seen.append(report))
    assert seen == [(1, 1, None), (2, None, None)]  # progress messages only exist from 2025-03-26


def context_server(record: Dict[str, Any]) -> Server:
    server = Server("context")

    @server.tool
    def whoami(ctx: Context) -> dict:
        record["request_id"] = ctx.request_id
        return {"client": ctx.client_info, "capabilities": ctx.client_capabilities,
                "version": ctx.protocol_version, "meta": ctx.meta, "server": ctx.server.name}

    @server.tool
    def think(question: str, ctx: Context) -> dict:
        return ctx.sample([question, c.message("Hmm?", role="assistant")], max_tokens=50, system_prompt="Be brief.",
                          temperature=0.5)

    @server.tool
    def ask_name(ctx: Context) -> dict:
        return ctx.elicit("Your name?", {"type": "object", "properties": {"name": {"type": "string"}},
                                         "required": ["name"]})

    @dataclasses.dataclass
    class Booking:
        date: str
        seats: int = 1

    @server.tool
    def book(ctx: Context) -> dict:
        return ctx.elicit("Book a table", Booking)

    @server.tool
    def login(ctx: Context) -> dict:
        answer = ctx.elicit_url("Please sign in", "https://example.com/login", "elicit-1")
        ctx.session.notify(t.ELICITATION_COMPLETE, {"elicitationId": "elicit-1"})
        return answer

    @server.tool
    def roots(ctx: Context) -> list:
        return ctx.list_roots()

    return server


def test_context_knows_the_request_and_the_client():
    record: Dict[str, Any] = {}
    with connect(context_server(record), client_info={"name": "tester", "version": "9"},
                 sampling=lambda params: {}) as client:
        result = client.call_tool("whoami", meta={"trace": "t1"})
        pending = client.start_tool_call("whoami")
        pending.result(WAIT)
    assert result["structuredContent"] == {"client": {"name": "tester", "version": "9"},
                                           "capabilities": {"sampling": {}}, "version": "2025-11-25",
                                           "meta": {"trace": "t1"}, "server": "context"}
    assert record["request_id"] == pending.id


def test_context_sample_asks_the_clients_model():
    asked: List[Dict[str, Any]] = []

    def model(params: Dict[str, Any]) -> Dict[str, Any]:
        asked.append(params)
        return {"role": "assistant", "content": c.text("42"), "model": "deep-thought", "stopReason": "endTurn"}

    with connect(context_server({}), sampling=model) as client:
        result = client.call_tool("think", {"question": "The answer?"})
    assert result["structuredContent"] == {"role": "assistant", "content": {"type": "text", "text": "42"},
                                           "model": "deep-thought", "stopReason": "endTurn"}
    assert asked == [{"messages": [{"role": "user", "content": {"type": "text", "text": "The answer?"}},
                                   {"role": "assistant", "content": {"type": "text", "text": "Hmm?"}}],
                      "maxTokens": 50, "systemPrompt": "Be brief.", "temperature": 0.5}]


def test_context_sample_without_the_capability_fails_the_tool():
    with connect(context_server({})) as client:
        result = client.call_tool("think", {"question": "?"})
    assert result["isError"] is True and "sampling" in result["content"][0]["text"]


WEATHER_TOOL = {"name": "weather", "description": "The weather in a city",
                "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}


def tool_using_server() -> Server:
    server = Server("sampling-tools")

    @server.tool
    def plan(ctx: Context) -> Dict[str, Any]:
        return ctx.sample("Plan my day.", max_tokens=100, tools=[WEATHER_TOOL], tool_choice="auto")

    return server


def test_context_sample_with_tools_reaches_a_client_that_declared_sampling_tools():
    asked: List[Dict[str, Any]] = []

    def model(params: Dict[str, Any]) -> Dict[str, Any]:
        asked.append(params)
        return {"role": "assistant", "model": "m", "stopReason": "toolUse",
                "content": [{"type": "tool_use", "id": "call-1", "name": "weather", "input": {"city": "Oslo"}}]}

    with connect(tool_using_server(), sampling=model, sampling_features=("tools",)) as client:
        assert client.capabilities() == {"sampling": {"tools": {}}}
        result = client.call_tool("plan")
    assert result.get("isError") is not True, result
    assert result["structuredContent"]["stopReason"] == "toolUse"
    assert asked[0]["tools"] == [WEATHER_TOOL] and asked[0]["toolChoice"] == {"mode": "auto"}


def test_context_sample_with_tools_is_refused_before_sending_when_the_client_lacks_sampling_tools():
    asked: List[Dict[str, Any]] = []
    with connect(tool_using_server(), sampling=lambda params: asked.append(params) or {}) as client:
        result = client.call_tool("plan")
    assert result["isError"] is True and "sampling.tools" in result["content"][0]["text"]
    assert asked == []  # nothing was sent


def test_a_client_without_sampling_tools_refuses_a_sampling_request_that_carries_tools():
    # A server that ignores the rule: the client must answer with an error, not call its model.
    asked: List[Dict[str, Any]] = []
    server = Server("rule-breaker")

    @server.tool
    def plan(ctx: Context) -> str:
        try:
            ctx.session.request("sampling/createMessage", {"messages": [], "maxTokens": 10,
                                                           "tools": [WEATHER_TOOL]}, timeout=WAIT)
        except RPCError as exc:
            return f"{exc.code}: {exc.message}"
        return "sent"

    with connect(server, sampling=lambda params: asked.append(params) or {}) as client:
        text = client.call_tool("plan")["content"][0]["text"]
    assert text.startswith("-32602:") and "sampling.tools" in text and asked == []


def test_context_elicit_form_mode():
    asked: List[Dict[str, Any]] = []

    def person(params: Dict[str, Any]) -> Dict[str, Any]:
        asked.append(params)
        if "seats" in params["requestedSchema"]["properties"]:
            return {"action": "accept", "content": {"date": "2025-12-24", "seats": 4}}
        return {"action": "accept", "content": {"name": "Ada"}}

    with connect(context_server({}), elicitation=person) as client:
        assert client.call_tool("ask_name")["structuredContent"] == {"action": "accept", "content": {"name": "Ada"}}
        assert client.call_tool("book")["structuredContent"]["content"] == {"date": "2025-12-24", "seats": 4}
    assert asked[0]["message"] == "Your name?"
    assert "mode" not in asked[0]  # form is the default; "mode" only goes to clients that also know "url"
    assert asked[1]["requestedSchema"] == {"type": "object", "properties": {
        "date": {"type": "string"}, "seats": {"type": "integer", "default": 1}}, "required": ["date"]}


def test_context_elicit_checks_the_answer_against_the_schema():
    with connect(context_server({}), elicitation=lambda p: {"action": "accept", "content": {"name": 5}}) as client:
        with pytest.raises(RemoteError) as info:
            client.call_tool("ask_name")
    assert info.value.code == INVALID_PARAMS
    with connect(context_server({}), elicitation=lambda p: {"action": "decline"}) as client:
        assert client.call_tool("ask_name")["structuredContent"] == {"action": "decline"}


def test_context_elicit_url_mode_needs_2025_11_25_and_the_capability():
    asked: List[Dict[str, Any]] = []
    notes = Inbox()

    def browser(params: Dict[str, Any]) -> Dict[str, Any]:
        asked.append(params)
        return {"action": "accept"}

    with connect(context_server({}), elicitation=browser, elicitation_modes=("form", "url"),
                 on_notification=notes) as client:
        assert client.call_tool("login")["structuredContent"] == {"action": "accept"}
        assert notes.next() == (t.ELICITATION_COMPLETE, {"elicitationId": "elicit-1"})
        client.call_tool("ask_name")
    assert asked[0] == {"mode": "url", "message": "Please sign in", "url": "https://example.com/login",
                        "elicitationId": "elicit-1"}
    assert asked[1]["mode"] == "form"  # a client that knows both modes is told which one

    with connect(context_server({}), elicitation=browser) as client:  # form only
        result = client.call_tool("login")
        assert result["isError"] and "URL-mode" in result["content"][0]["text"]
    with connect(context_server({}), elicitation=browser, elicitation_modes=("form", "url"),
                 protocol_version="2025-06-18") as client:
        assert client.call_tool("login")["isError"] is True
    assert len(asked) == 2


def test_context_list_roots():
    roots = [{"uri": "file:///home/ada/project", "name": "project"}]
    with connect(context_server({}), roots=roots) as client:
        assert client.call_tool("roots")["structuredContent"] == {"result": roots}
    with connect(context_server({})) as client:
        assert client.call_tool("roots")["isError"] is True


def test_context_cancel_event_is_set_when_the_client_cancels():
    server = Server("cancel")
    started, finished = threading.Event(), threading.Event()
    outcome: Dict[str, bool] = {}

    @server.tool
    def long_job(ctx: Context) -> str:
        started.set()
        outcome["cancelled"] = ctx.cancelled.wait(WAIT)
        outcome["is_cancelled"] = ctx.is_cancelled
        finished.set()
        return "too late"

    with connect(server) as client:
        pending = client.start_tool_call("long_job")
        assert started.wait(WAIT)
        pending.cancel("changed my mind")
        assert finished.wait(WAIT)
    assert outcome == {"cancelled": True, "is_cancelled": True}


def test_client_notifications_reach_the_servers_handlers():
    server = Server("notes")
    server.add_tool(lambda: "", name="x")
    received: "queue.Queue[Any]" = queue.Queue()
    server.notification_handlers[t.ROOTS_LIST_CHANGED] = lambda params, session: received.put(("roots", params))
    server.notification_handlers["notifications/custom"] = lambda params, session: received.put(("custom", params))
    with connect(server, roots=[]) as client:
        client.notify_roots_changed()
        client.notify("notifications/custom", {"n": 1})
        assert received.get(timeout=WAIT) == ("roots", {})
        assert received.get(timeout=WAIT) == ("custom", {"n": 1})


def test_the_notification_decorator_registers_handlers_that_take_what_they_declare():
    server = Server("notes")
    server.add_tool(lambda: "", name="x")
    received: "queue.Queue[Any]" = queue.Queue()

    @server.notification(t.ROOTS_LIST_CHANGED)
    def roots_changed() -> None:  # takes nothing
        received.put(("roots",))

    @server.notification("notifications/custom")
    def custom(params: Dict[str, Any]) -> None:  # takes the params
        received.put(("custom", params))

    @server.notification("notifications/with-session")
    def with_session(params: Dict[str, Any], session: Any) -> None:  # takes the params and the session
        received.put(("with-session", params, session.client_info["name"]))

    assert roots_changed.__name__ == "roots_changed"  # the decorator gives the function back
    with pytest.raises(ValueError, match="already registered"):
        server.notification("notifications/custom")(lambda params: None)
    with connect(server, roots=[], client_info={"name": "notifier"}) as client:
        client.notify_roots_changed()
        client.notify("notifications/custom", {"n": 1})
        client.notify("notifications/with-session", {"n": 2})
        assert received.get(timeout=WAIT) == ("roots",)
        assert received.get(timeout=WAIT) == ("custom", {"n": 1})
        assert received.get(timeout=WAIT) == ("with-session", {"n": 2}, "notifier")


def test_unknown_methods_are_method_not_found():
    with connect(adder()) as client:
        with pytest.raises(RemoteError) as info:
            client.request("tools/frobnicate")
    assert info.value.code == METHOD_NOT_FOUND


def test_one_server_serves_many_clients_at_once():
    server = adder()
    clients = [connect(server).connect() for _ in range(3)]
    try:
        answers = [client.call_tool("add", {"a": i, "b": 1})["structuredContent"] for i, client in enumerate(clients)]
        assert answers == [{"result": 1}, {"result": 2}, {"result": 3}]
        clients[0].close()
        assert clients[1].call_tool("add", {"a": 5})["structuredContent"] == {"result": 5}
    finally:
        for client in clients:
            client.close()
