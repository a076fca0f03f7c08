"""mcplite's client against the official reference server, ``@modelcontextprotocol/server-everything``.

    python3 tests/interop/everything_client.py stdio -- COMMAND [ARG...]
    python3 tests/interop/everything_client.py streamable-http|sse URL

everything.py starts this with mcplite importable (PYTHONPATH) and reads one ``PASS name[: detail]`` or
``FAIL name: why`` line per check of everything.json, in that order. The expected answers are those of
the server's own code (its dist/tools, dist/resources and dist/prompts), its only specification.

The server's unrequested messages (log messages, resource updates) reach `Inbox`es; a check that expects
one waits for it there, never longer than `WAIT`.
"""

import base64
import json
import os
import re
import sys
import threading
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from checks import WAIT, CheckFailed, Report, expect, expect_equal

from mcplite import Client
from mcplite.errors import URL_ELICITATION_REQUIRED, RemoteError
from mcplite.protocol.versions import LATEST_HANDSHAKE_VERSION

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "everything.json"), encoding="utf-8") as _file:
    PLAN: Dict[str, List[str]] = json.load(_file)

SERVER_NAME = "mcp-servers/everything"
#: Tools the server always has, and those it adds once initialize showed it our capabilities (sampling,
#: form and URL elicitation, roots): seeing them proves it read our capabilities.
TOOLS = ("echo", "get-sum", "get-structured-content", "trigger-long-running-operation", "toggle-simulated-logging",
         "toggle-subscriber-updates")
CONDITIONAL_TOOLS = ("trigger-sampling-request", "trigger-elicitation-request", "trigger-url-elicitation",
                     "get-roots-list")
DOCUMENT = "demo://resource/static/document/{}"
TEXT_TEMPLATE = "demo://resource/dynamic/text/{resourceId}"
BLOB_TEMPLATE = "demo://resource/dynamic/blob/{resourceId}"
FIRST_ROOT = {"uri": "file:///tmp/mcplite-interop", "name": "interop"}
SECOND_ROOT = {"uri": "file:///tmp/mcplite-interop-2", "name": "interop 2"}
MODEL_REPLY = {"role": "assistant", "content": {"type": "text", "text": "42, said the model"},
               "model": "interop-model", "stopReason": "endTurn"}
FORM_ANSWER = {"name": "Ada Lovelace", "check": True, "email": "ada@example.org", "integer": 7}
CONSENT_URL = "https://example.org/mcplite-consent"
#: The client's transport for each HTTP transport the command line names (named, never guessed).
HTTP_TRANSPORTS = {"streamable-http": "streamable", "sse": "sse"}
#: The simulated log messages: "Debug-level message", ..., "Alert level-message" (sic).
SIMULATED_LOG = re.compile(r"\w+[- ]level[- ]message")


# ---- what the server sends unasked, and the client's stand-ins for a model, a user and a workspace -------
class Inbox:
    """Collects what a callback receives, so that checks can wait for an item (bounded by `WAIT`)."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.items: List[Any] = []
        self._changed = threading.Condition()

    def __call__(self, item: Any) -> None:
        with self._changed:
            self.items.append(item)
            self._changed.notify_all()

    def mark(self) -> int:
        """Where the items received from now on start (for `wait_for` and `since`)."""
        with self._changed:
            return len(self.items)

    def since(self, mark: int) -> List[Any]:
        with self._changed:
            return self.items[mark:]

    def wait_for(self, match: Callable[[Any], bool], since: int = 0) -> Any:
        """The first item from ``since`` on that ``match``es; raises `CheckFailed` if none comes in time."""
        def found() -> Optional[Any]:
            return next((item for item in self.items[since:] if match(item)), None)

        with self._changed:
            item = self._changed.wait_for(found, WAIT)
            if item is None:
                raise CheckFailed(f"no matching {self.what} within {WAIT:.0f} s; got {self.items[since:]!r}")
            return item


class Model:
    """Answers `sampling/createMessage` with `MODEL_REPLY`; remembers what it was asked."""

    def __init__(self) -> None:
        self.requests: List[Dict[str, Any]] = []

    def __call__(self, params: Dict[str, Any]) -> Dict[str, Any]:
        self.requests.append(params)
        return MODEL_REPLY


class User:
    """Answers `elicitation/create`: fills a form with `FORM_ANSWER`, accepts to open a URL."""

    def __init__(self) -> None:
        self.requests: List[Dict[str, Any]] = []

    def __call__(self, params: Dict[str, Any]) -> Dict[str, Any]:
        self.requests.append(params)
        if params.get("mode", "form") == "url":
            return {"action": "accept"}
        return {"action": "accept", "content": FORM_ANSWER}


class Workspace:
    """The roots we offer, as they are whenever the server asks; counts how often it asked."""

    def __init__(self) -> None:
        self.roots = [FIRST_ROOT]
        self.asked = 0

    def __call__(self) -> List[Dict[str, Any]]:
        self.asked += 1
        return list(self.roots)


def texts(result: Mapping[str, Any]) -> List[str]:
    """The text of each content block of a tool's successful result (all must be text)."""
    expect(not result.get("isError"), f"the tool failed: {result!r}")
    content = result.get("content") or []
    expect(all(block.get("type") == "text" for block in content), f"expected only text content, got {content!r}")
    return [block["text"] for block in content]


def only_text(result: Mapping[str, Any]) -> str:
    """The text of a tool's successful result with one content block."""
    found = texts(result)
    expect_equal(len(found), 1, "number of content blocks")
    return found[0]


def raw_result(text: str) -> Any:
    """The JSON the server's tools append as ``Raw result: ...`` (what our callback answered)."""
    expect("Raw result: " in text, f"no raw result in {text!r}")
    return json.loads(text.split("Raw result: ", 1)[1])


# ---- the checks ------------------------------------------------------------------------------------------
class EverythingChecks:
    """A client for the server, its stand-ins for a model, a user and a workspace, and the checks made with
    them. Each check returns a detail for its PASS line, or None.

    Args:
        transport: "stdio", "streamable-http" or "sse": the transport to name to the client.
        target: the server's command line (stdio) or its URL (the MCP endpoint, or the SSE endpoint).
    """

    def __init__(self, transport: str, target: Sequence[str]) -> None:
        self.transport = transport
        self.target = target
        self.logs, self.updates = Inbox("log message"), Inbox("resource update")
        self.model, self.user, self.workspace = Model(), User(), Workspace()
        options: Dict[str, Any] = dict(timeout=WAIT, sampling=self.model, elicitation=self.user,
                                       elicitation_modes=("form", "url"), roots=self.workspace, on_log=self.logs,
                                       on_resource_updated=self.updates)
        if transport == "stdio":
            self.client = Client.stdio(list(target), **options)
        else:
            self.client = Client(target[0], transport=HTTP_TRANSPORTS[transport], **options)

    def plan(self) -> List[Tuple[str, Callable[[], Optional[str]]]]:
        """everything.json's checks for our transport, each with the method that makes it."""
        methods: Dict[str, Callable[[], Optional[str]]] = {
            "initialize": self.initialize,
            "ping": self.client.ping,
            "tools/list": self.tools_list,
            "tools/call echo": self.echo,
            "tools/call get-sum": self.get_sum,
            "tools/call structured": self.structured,
            "tools/call invalid arguments": self.invalid_arguments,
            "progress": self.progress,
            "logging": self.logging,
            "sampling": self.sampling,
            "elicitation (form)": self.form_elicitation,
            "elicitation (url)": self.url_elicitation,
            "url elicitation required error": self.url_elicitation_required,
            "roots": self.roots,
            "resources/list": self.resources_list,
            "resources/read": self.read,
            "resources/templates/list": self.templates_list,
            "resources/read (template)": self.read_template,
            "resources/read unknown": self.read_unknown,
            "resources/subscribe": self.subscribe,
            "resources/unsubscribe": self.unsubscribe,
            "logging/setLevel": self.set_level,
            "prompts/list": self.prompts_list,
            "prompts/get": self.get_prompt,
            "prompts/get (embedded resource)": self.get_resource_prompt,
            "completion/complete (prompt)": self.complete_prompt,
            "completion/complete (resource template)": self.complete_template,
            "tasks (simulate-research-query)": self.research_task,
            "Client(url) picks the transport": self.pick_transport,
        }
        names = PLAN["checks"] + (PLAN["httpChecks"] if self.transport != "stdio" else [])
        return [(name, methods[name]) for name in names]

    def initialize(self) -> str:
        client = self.client
        expect_equal(client.protocol_version, LATEST_HANDSHAKE_VERSION, "negotiated protocol version")
        expect_equal(client.server_info.get("name"), SERVER_NAME, "serverInfo.name")
        caps = client.server_capabilities
        missing = [name for name in ("tools", "resources", "prompts", "logging", "completions") if name not in caps]
        expect(not missing, f"capabilities missing: {missing} (got {sorted(caps)})")
        expect(caps["resources"].get("subscribe") is True, f"resources.subscribe not declared: {caps['resources']!r}")
        expect(bool(client.instructions), "no instructions")
        return f"protocol {client.protocol_version}, {SERVER_NAME} {client.server_info.get('version')}"

    def listing(self, method: str, key: str, list_all: Callable[[], Sequence[Any]], field: str,
                wanted: Sequence[str]) -> Tuple[Sequence[Any], str]:
        """Check that ``list_all`` (the client, all pages) gives what walking the pages by hand gives, and
        that it has the ``wanted`` items (by ``field``). Returns the items and a detail for the PASS line."""
        by_hand: List[Dict[str, Any]] = []
        pages, cursor = 0, None
        while pages == 0 or cursor:
            page = self.client.request(method, {"cursor": cursor} if cursor else None)
            by_hand += page.get(key, [])
            cursor, pages = page.get("nextCursor"), pages + 1
            expect(pages <= 100, f"{method}: more than 100 pages")
        items = list_all()
        expect_equal(items, by_hand, f"{method} through the client")
        found = {item[field] for item in items}
        expect(set(wanted) <= found, f"{method} lacks {sorted(set(wanted) - found)} (got {sorted(found)})")
        return items, f"{len(items)} in {pages} page(s)"

    def resources_list(self) -> str:
        wanted = [DOCUMENT.format("instructions.md"), DOCUMENT.format("features.md")]
        return self.listing("resources/list", "resources", self.client.list_resources, "uri", wanted)[1]

    def templates_list(self) -> str:
        return self.listing("resources/templates/list", "resourceTemplates", self.client.list_resource_templates,
                            "uriTemplate", [TEXT_TEMPLATE, BLOB_TEMPLATE])[1]

    def prompts_list(self) -> str:
        wanted = ["simple-prompt", "args-prompt", "completable-prompt", "resource-prompt"]
        prompts, detail = self.listing("prompts/list", "prompts", self.client.list_prompts, "name", wanted)
        args_prompt = next(prompt for prompt in prompts if prompt["name"] == "args-prompt")
        arguments = {argument["name"]: argument.get("required", False) for argument in args_prompt.get("arguments", [])}
        expect_equal(arguments, {"city": True, "state": False}, "args-prompt arguments (name: required)")
        return detail

    def tools_list(self) -> str:
        tools = {tool["name"]: tool for tool in self.client.list_tools()}
        missing = [name for name in TOOLS + CONDITIONAL_TOOLS if name not in tools]
        expect(not missing, f"tools missing: {missing} (got {sorted(tools)})")
        schema = tools["get-structured-content"].get("outputSchema") or {}
        expect(schema.get("type") == "object" and "temperature" in schema.get("properties", {}),
               f"get-structured-content: no outputSchema with temperature: {schema!r}")
        return f"{len(tools)} tools"

    def echo(self) -> None:
        expect_equal(only_text(self.client.call_tool("echo", {"message": "hello from mcplite"})),
                     "Echo: hello from mcplite", "echo")

    def get_sum(self) -> None:
        expect_equal(only_text(self.client.call_tool("get-sum", {"a": 2, "b": 3.5})), "The sum of 2 and 3.5 is 5.5.",
                     "get-sum")

    def structured(self) -> None:
        weather = {"temperature": 36, "conditions": "Light rain / drizzle", "humidity": 82}
        # call_tool also validates structuredContent against the tool's outputSchema.
        result = self.client.call_tool("get-structured-content", {"location": "Chicago"})
        expect_equal(result.get("structuredContent"), weather, "structuredContent")
        expect_equal(json.loads(only_text(result)), weather, "text content (as JSON)")

    def invalid_arguments(self) -> str:
        """A tool's input error is a result with isError (2025-11-25, SEP-1303), or `RemoteError` on request."""
        result = self.client.call_tool("get-sum", {"a": "two", "b": 3})
        expect(result.get("isError") is True, f"expected isError: {result!r}")
        try:
            self.client.call_tool("get-sum", {"a": "two", "b": 3}, raise_on_error=True)
        except RemoteError as exc:
            return f"isError, then RemoteError: {' '.join(str(exc).split())[:80]}"
        raise CheckFailed("raise_on_error=True did not raise")

    def progress(self) -> None:
        reports: List[Tuple[Any, ...]] = []
        result = self.client.call_tool("trigger-long-running-operation", {"duration": 1, "steps": 4},
                                       progress=lambda *report: reports.append(report))
        expect_equal(only_text(result), "Long running operation completed. Duration: 1 seconds, Steps: 4.",
                     "result")
        # All four reports reached the callback before call_tool returned.
        expect_equal([(float(p), float(t)) for p, t, *_ in reports], [(i, 4.0) for i in (1.0, 2.0, 3.0, 4.0)],
                     "progress reports (progress, total)")

    def logging(self) -> str:
        """The server's simulated logging sends one random-levelled message at once, then one every 5 s."""
        self.client.set_logging_level("debug")
        mark = self.logs.mark()
        self.toggle("toggle-simulated-logging", "Started simulated")
        try:
            message = self.logs.wait_for(lambda m: bool(SIMULATED_LOG.match(str(m.get("data")))), mark)
        finally:
            self.toggle("toggle-simulated-logging", "Stopped simulated")
        level = message.get("level")
        expect(str(message.get("data")).lower().startswith(level), f"level and text disagree: {message!r}")
        return f"{level}: {message['data']}"

    def toggle(self, tool: str, expected_start: str) -> None:
        text = only_text(self.client.call_tool(tool, {}))
        expect(text.startswith(expected_start), f"{tool}: expected {expected_start!r}..., got {text!r}")

    def sampling(self) -> None:
        result = self.client.call_tool("trigger-sampling-request", {"prompt": "What is 6 x 7?", "maxTokens": 20})
        text = only_text(result)
        prefix = "LLM sampling result: \n"
        expect(text.startswith(prefix), f"result: {text!r}")
        expect_equal(json.loads(text[len(prefix):]), MODEL_REPLY, "the model's reply as the tool saw it")
        expect_equal(len(self.model.requests), 1, "sampling requests")
        params = self.model.requests[0]
        expect_equal(params.get("messages"), [{"role": "user", "content": {
            "type": "text", "text": "Resource trigger-sampling-request context: What is 6 x 7?"}}], "messages")
        expect_equal(params.get("maxTokens"), 20, "maxTokens")
        expect_equal(params.get("systemPrompt"), "You are a helpful test server.", "systemPrompt")

    def research_task(self) -> str:
        """The 2025-11-25 core tasks: a tool listed taskSupport "required", called plainly (mcplite makes it a
        task unasked), then as a handle whose task asks a question through tasks/result on the way."""
        report = only_text(self.client.call_tool("simulate-research-query", {"topic": "quantum"}))
        expect("Research Report: quantum" in report, f"not the report: {report[:80]!r}")
        task = self.client.start_tool_call("simulate-research-query", {"topic": "python", "ambiguous": True}, task=True)
        expect_equal(task.form, "core", "task form")
        seen = {task.status()}
        result = task.result()
        seen.add(task.status())
        text = only_text(result)
        expect("Clarification" in text, f"the question was not answered: {text[:120]!r}")
        asked = [params for params in self.user.requests if "interpretations" in str(params.get("message"))]
        expect(bool(asked), "the task's question never reached the elicitation callback")
        cancelled = self.client.start_tool_call("simulate-research-query", {"topic": "never mind"}, task=True)
        cancelled.cancel()
        expect_equal(cancelled.status(), "cancelled", "status after cancel")
        return f"statuses seen {sorted(seen)}, poll interval {task.poll_interval:g} s"

    def form_elicitation(self) -> None:
        found = texts(self.client.call_tool("trigger-elicitation-request", {}))
        expect_equal(found[0], "✅ User provided the requested information!", "first block")
        expect_equal(found[1], "User inputs:\n- Name: Ada Lovelace\n- Agreed to terms: true\n"
                               "- Email: ada@example.org\n- Favorite Integer: 7", "the inputs the tool read")
        expect_equal(raw_result(found[-1]), {"action": "accept", "content": FORM_ANSWER}, "raw result")
        params = self.user.requests[-1]
        expect(params.get("mode", "form") == "form", f"not a form: {params!r}")
        schema = params.get("requestedSchema") or {}
        expect_equal((schema.get("type"), schema.get("required")), ("object", ["name"]),
                     "requestedSchema type, required")

    def url_elicitation(self) -> None:
        arguments = {"url": CONSENT_URL, "elicitationId": "mcplite-1", "message": "Consent, please."}
        found = texts(self.client.call_tool("trigger-url-elicitation", arguments))
        expect_equal(found[0], "✅ User completed the URL elicitation flow.\nElicitation ID: mcplite-1\n"
                               f"URL: {CONSENT_URL}", "first block")
        expect_equal(self.user.requests[-1], {"mode": "url", **arguments}, "the elicitation/create params")

    def url_elicitation_required(self) -> str:
        """The tool's error path: a -32042 error whose data lists the elicitations to complete first."""
        arguments = {"url": CONSENT_URL, "elicitationId": "mcplite-2", "errorPath": True}
        try:
            result = self.client.call_tool("trigger-url-elicitation", arguments)
        except RemoteError as exc:
            expect_equal(exc.code, URL_ELICITATION_REQUIRED, "error code")
            elicitations = (exc.data or {}).get("elicitations") or [{}]
            expect_equal(elicitations[0].get("mode"), "url", "data.elicitations[0].mode")
            expect(bool(elicitations[0].get("url")), f"no URL to open: {exc.data!r}")
            # The server remembers it asked: the same call again proceeds (and elicits through the request).
            asked = len(self.user.requests)
            texts(self.client.call_tool("trigger-url-elicitation", arguments))
            expect_equal(len(self.user.requests), asked + 1, "elicitation requests after the retry")
            return f"-32042, then the retry elicited {CONSENT_URL}"
        raise CheckFailed(f"expected error -32042, got a result: {result!r}")

    def roots(self) -> str:
        """The server asks for our roots after initialize and again when told they changed."""
        self.logs.wait_for(lambda m: m.get("data") == "Roots updated: 1 root(s) received from client")
        mark = self.logs.mark()
        self.workspace.roots.append(SECOND_ROOT)
        self.client.notify_roots_changed()
        self.logs.wait_for(lambda m: m.get("data") == "Roots updated: 2 root(s) received from client", mark)
        text = only_text(self.client.call_tool("get-roots-list", {}))
        for index, root in enumerate(self.workspace.roots, 1):
            expect(f"{index}. {root['name']}\n   URI: {root['uri']}" in text, f"root {index} not listed: {text!r}")
        return f"asked {self.workspace.asked} times"

    def read(self) -> None:
        """instructions.md is both a resource and the server's initialize instructions."""
        uri = DOCUMENT.format("instructions.md")
        contents = self.client.read_resource(uri)["contents"]
        expect_equal([(c.get("uri"), c.get("mimeType")) for c in contents], [(uri, "text/markdown")], "contents")
        expect_equal(contents[0].get("text"), self.client.instructions, "text (the initialize instructions)")

    def read_template(self) -> None:
        text_uri, blob_uri = TEXT_TEMPLATE.format(resourceId=7), BLOB_TEMPLATE.format(resourceId=7)
        text = self.client.read_resource(text_uri)["contents"]
        expect_equal(len(text), 1, "text contents")
        expect_equal(text[0].get("uri"), text_uri, "text uri")
        expect(str(text[0].get("text")).startswith("Resource 7: This is a plaintext resource created at "),
               f"text: {text[0]!r}")
        blob = self.client.read_resource(blob_uri)["contents"]
        expect_equal(len(blob), 1, "blob contents")
        expect_equal(blob[0].get("uri"), blob_uri, "blob uri")
        decoded = base64.b64decode(str(blob[0].get("blob")), validate=True).decode()
        expect(decoded.startswith("Resource 7: This is a base64 blob created at "), f"blob: {decoded!r}")

    def read_unknown(self) -> str:
        """An unknown resource is an error. Its code is not checked: this server answers -32603, not the
        spec's -32002 (its template handler throws a plain Error)."""
        try:
            result = self.client.read_resource(TEXT_TEMPLATE.format(resourceId=0))
        except RemoteError as exc:
            expect("Unknown resource" in str(exc), f"error: {exc}")
            return f"RemoteError {exc.code}"
        raise CheckFailed(f"expected an error, got {result!r}")

    def subscribe(self) -> None:
        """Subscribing is acknowledged in a log message; the server's simulated updates reach the callback."""
        uri = TEXT_TEMPLATE.format(resourceId=1)
        mark, updates = self.logs.mark(), self.updates.mark()
        self.client.subscribe_resource(uri)
        acknowledgement = f"Received Subscribe Resource request for URI: {uri}"
        self.logs.wait_for(lambda m: str(m.get("data")).startswith(acknowledgement), mark)
        self.toggle("toggle-subscriber-updates", "Started simulated")
        try:
            self.updates.wait_for(lambda updated: updated == uri, updates)
        finally:
            self.toggle("toggle-subscriber-updates", "Stopped simulated")

    def unsubscribe(self) -> None:
        """Subscribed to 1 (above) and now 2, unsubscribed from 1: updates come for 2 only. The server sends
        them in the order the URIs were first subscribed, so 1's would have come before 2's."""
        first, second = TEXT_TEMPLATE.format(resourceId=1), TEXT_TEMPLATE.format(resourceId=2)
        self.client.subscribe_resource(second)
        self.client.unsubscribe_resource(first)
        updates = self.updates.mark()
        self.toggle("toggle-subscriber-updates", "Started simulated")
        try:
            self.updates.wait_for(lambda updated: updated == second, updates)
        finally:
            self.toggle("toggle-subscriber-updates", "Stopped simulated")
        expect(first not in self.updates.since(updates), f"updates for {first} after unsubscribing")
        self.client.unsubscribe_resource(second)

    def set_level(self) -> None:
        """At "warning" the server drops its info-level acknowledgement of a subscription; at "info" the
        next one comes. Both travel the same stream, so the first would have arrived before the second."""
        uri = TEXT_TEMPLATE.format(resourceId=3)
        mark = self.logs.mark()
        self.client.set_logging_level("warning")
        self.client.subscribe_resource(uri)
        self.client.set_logging_level("info")
        self.client.unsubscribe_resource(uri)
        self.logs.wait_for(lambda m: str(m.get("data")).startswith(f"Received Unsubscribe Resource request: {uri}"),
                           mark)
        dropped = [m for m in self.logs.since(mark) if str(m.get("data")).startswith("Received Subscribe")]
        expect(not dropped, f"info messages came at level warning: {dropped!r}")

    def get_prompt(self) -> None:
        result = self.client.get_prompt("args-prompt", {"city": "Paris", "state": "Texas"})
        expect_equal(result.get("messages"),
                     [{"role": "user", "content": {"type": "text", "text": "What's weather in Paris, Texas?"}}],
                     "messages")

    def get_resource_prompt(self) -> None:
        result: Dict[str, Any] = dict(self.client.get_prompt("resource-prompt", {"resourceType": "Text",
                                                                                 "resourceId": "3"}))
        messages = result["messages"]
        expect_equal(len(messages), 2, "number of messages")
        content = messages[1].get("content", {})
        resource = content.get("resource", {})
        expect_equal((content.get("type"), resource.get("uri"), resource.get("mimeType")),
                     ("resource", TEXT_TEMPLATE.format(resourceId=3), "text/plain"), "embedded resource")
        expect(str(resource.get("text")).startswith("Resource 3: "), f"embedded text: {resource!r}")

    def complete_prompt(self) -> None:
        ref = {"type": "ref/prompt", "name": "completable-prompt"}
        expect_equal(self.client.complete(ref, "department", "E").get("values"), ["Engineering"], "department 'E'")
        # The second argument's completions depend on the first, given as context.
        expect_equal(self.client.complete(ref, "name", "", context={"department": "Sales"}).get("values"),
                     ["David", "Eve", "Frank"], "name, in Sales")

    def complete_template(self) -> None:
        ref = {"type": "ref/resource", "uri": TEXT_TEMPLATE}
        expect_equal(self.client.complete(ref, "resourceId", "5").get("values"), ["5"], "resourceId '5'")
        expect_equal(self.client.complete(ref, "resourceId", "x").get("values"), [], "resourceId 'x'")

    def pick_transport(self) -> str:
        """``Client(url)`` with no transport named: Streamable HTTP first, HTTP+SSE if the server refuses it.
        The server answers a POST to its SSE endpoint 404, so a working connection there proves the fallback."""
        url = self.target[0]
        with Client(url, timeout=WAIT) as client:
            expect_equal(only_text(client.call_tool("echo", {"message": "auto"})), "Echo: auto", "echo")
            return f"connected to {url}, protocol {client.protocol_version}"


# ---- running them ----------------------------------------------------------------------------------------
def run_check(report: Report, name: str, check: Callable[[], Optional[str]]) -> None:
    try:
        detail = check()
    except Exception as exc:
        report.outcome(name, exc)
        return
    print(f"PASS {name}" + (f": {detail}" if detail else ""), flush=True)


def main(argv: List[str]) -> int:
    transport, target = argv[0], [arg for arg in argv[1:] if arg != "--"]
    report = Report()
    try:
        checks = EverythingChecks(transport, target)
        checks.client.connect()
    except Exception as exc:
        report.outcome("initialize", exc)
        return 1
    try:
        for name, check in checks.plan():
            run_check(report, name, check)
    finally:
        checks.client.close()
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
