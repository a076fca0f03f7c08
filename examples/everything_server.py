"""Every feature the official MCP conformance suite checks, in one server (and our showcase).

Each tool, resource, template, prompt and completion below is one the suite
(`@modelcontextprotocol/conformance`, see tests/conformance/) calls by name and checks by behaviour, plus
`add`, the one-line example of everything else. Each handler is a plain function: mcplite turns its
signature into the input schema, its docstring into the description and its return value into content.

One server answers both protocol eras: the 2025-11-25 suite (an `initialize` handshake, then requests the
server sends back to the client mid-call) and the 2026-07-28 suite (no handshake, and no server-to-client
requests: a question to the client becomes an `input_required` result that the client answers by calling
again). The same `ctx.elicit()` / `ctx.sample()` / `ctx.ask()` serves both; on 2026-07-28 the handler is
re-run with the answers so far ("replay"), so every handler below asks first and acts last.

Serve it over stdio:           python3 -m mcplite serve examples/everything_server.py
or over Streamable HTTP:       python3 -m mcplite serve examples/everything_server.py --http 127.0.0.1:8000
                               (at /mcp; the legacy HTTP+SSE transport at /sse)
Try it from the command line:  python3 -m mcplite call add a=2 b=3 -- \
                                   python3 -m mcplite serve examples/everything_server.py
"""

import base64
import io
import json
import os
import threading
import time
import wave
from typing import Annotated, Any, Dict, List, Optional

from mcplite import Context, Elicit, Header, InputRequired, ListRoots, RPCError, Sample, Server, ToolResult, content
from mcplite.errors import INVALID_PARAMS

server = Server("mcplite-everything", version="1.0.0",
                instructions="The conformance suite's fixture: one tool, resource or prompt per MCP feature.")

#: A 1x1 red pixel: the smallest image a client can check.
RED_PIXEL_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")


def _silent_wav(milliseconds: int = 10, rate: int = 8000) -> bytes:
    """A short, valid WAV file of silence (mono, 16-bit)."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes(b"\0\0" * (rate * milliseconds // 1000))
    return buffer.getvalue()


SILENCE_WAV = _silent_wav()


# ---- tools --------------------------------------------------------------------------------------------
# Tools are listed in the order they are registered. The first one must accept no arguments: the
# 2026-07-28 header scenario calls whichever tool comes first with {}.
@server.tool
def test_simple_text() -> str:
    """Return one text item."""
    return "This is a simple text response for testing."


@server.tool
def add(a: int, b: int) -> int:
    """Add two integers (the result is also structured: {"result": a + b})."""
    return a + b


@server.tool
def test_image_content() -> ToolResult:
    """Return an image (a base64 PNG)."""
    return ToolResult([content.image(RED_PIXEL_PNG, "image/png")])


@server.tool
def test_audio_content() -> ToolResult:
    """Return audio (a base64 WAV)."""
    return ToolResult([content.audio(SILENCE_WAV, "audio/wav")])


@server.tool
def test_embedded_resource() -> ToolResult:
    """Return a resource embedded in the result."""
    return ToolResult([content.resource("test://embedded-resource", "This is an embedded resource content.",
                                        "text/plain")])


@server.tool
def test_multiple_content_types() -> ToolResult:
    """Return text, an image and an embedded resource together."""
    return ToolResult([
        "Multiple content types test:",
        content.image(RED_PIXEL_PNG, "image/png"),
        content.resource("test://mixed-content-resource", json.dumps({"test": "data", "value": 123}),
                         "application/json"),
    ])


@server.tool
def test_tool_with_logging(ctx: Context) -> str:
    """Send three log messages while running, 50 ms apart."""
    # Log notifications tied to this request travel on the request's own stream (over HTTP: the POST's
    # SSE response), so the client sees all three before the result.
    ctx.info("Tool execution started")
    time.sleep(0.05)
    ctx.info("Tool processing data")
    time.sleep(0.05)
    ctx.info("Tool execution completed")
    return "Tool with logging executed successfully"


@server.tool
def test_tool_with_progress(ctx: Context) -> str:
    """Report progress 0, 50 and 100 of 100, 50 ms apart."""
    # ctx.progress echoes the caller's progressToken, and does nothing when the caller sent none.
    for done in (0, 50, 100):
        if done:
            time.sleep(0.05)
        ctx.progress(done, 100, message=f"Completed step {done} of 100")
    return "Tool with progress executed successfully"


@server.tool
def test_error_handling() -> str:
    """Always fail: the client gets a result with isError, not a JSON-RPC error."""
    raise RuntimeError("This tool intentionally returns an error for testing")


@server.tool
def test_sampling(prompt: str, ctx: Context) -> str:
    """Ask the client's model to answer the prompt (sampling/createMessage) and return its answer.

    Args:
        prompt: The prompt to send to the LLM.
    """
    # Blocks this handler until the client answers; a client without the sampling capability makes
    # ctx.sample raise, which the caller receives as an isError result.
    reply = ctx.sample(prompt, max_tokens=100)
    return f"LLM response: {reply['content'].get('text', '')}"


@server.tool
def test_elicitation(message: str, ctx: Context) -> str:
    """Ask the user for a username and an email (elicitation/create) and return the answer.

    Args:
        message: The message to show the user.
    """
    answer = ctx.elicit(message, {
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        },
        "required": ["username", "email"],
    })
    return f"User response: action={answer['action']}, content={json.dumps(answer.get('content', {}))}"


@server.tool
def test_elicitation_sep1034_defaults(ctx: Context) -> str:
    """Ask for a form whose every field has a default (SEP-1034), and return the answer."""
    answer = ctx.elicit("Please review and update the form fields with defaults", {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {"type": "string", "description": "User status", "enum": ["active", "inactive", "pending"],
                       "default": "active"},
            "verified": {"type": "boolean", "description": "Verification status", "default": True},
        },
        "required": [],
    })
    return f"Elicitation completed: action={answer['action']}, content={json.dumps(answer.get('content', {}))}"


@server.tool
def test_elicitation_sep1330_enums(ctx: Context) -> str:
    """Ask for a form with each of the five enum shapes of SEP-1330, and return the answer."""
    def choices(prefix: str, titles: List[str]) -> List[Dict[str, str]]:
        return [{"const": f"{prefix}{n}", "title": title} for n, title in enumerate(titles, 1)]

    answer = ctx.elicit("Please select options from the enum fields", {
        "type": "object",
        "properties": {
            # single choice, untitled: a plain enum
            "untitledSingle": {"type": "string", "description": "Select one option",
                               "enum": ["option1", "option2", "option3"]},
            # single choice with titles: oneOf const/title pairs
            "titledSingle": {"type": "string", "description": "Select one option with titles",
                             "oneOf": choices("value", ["First Option", "Second Option", "Third Option"])},
            # the deprecated way to title an enum, still accepted
            "legacyEnum": {"type": "string", "description": "Select one option (legacy)",
                           "enum": ["opt1", "opt2", "opt3"],
                           "enumNames": ["Option One", "Option Two", "Option Three"]},
            # several choices, untitled: an array of an enum
            "untitledMulti": {"type": "array", "description": "Select multiple options", "minItems": 1, "maxItems": 3,
                              "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
            # several choices with titles: an array of anyOf const/title pairs
            "titledMulti": {"type": "array", "description": "Select multiple options with titles",
                            "minItems": 1, "maxItems": 3,
                            "items": {"anyOf": choices("value", ["First Choice", "Second Choice", "Third Choice"])}},
        },
        "required": [],
    })
    return f"Elicitation completed: action={answer['action']}, content={json.dumps(answer.get('content', {}))}"


@server.tool
def test_reconnection(ctx: Context) -> str:
    """Close this call's SSE stream before answering, so the client must resume it (SEP-1699).

    Over Streamable HTTP the server has already sent a priming event (an id and a `retry:` delay); closing
    the stream makes the client wait that delay and reconnect with GET and `Last-Event-ID`, and the result
    below is replayed to it there. Over stdio there is no stream to close and the result comes as usual.
    """
    close_stream = ctx.request_info.close_sse_stream if ctx.request_info is not None else None
    if close_stream is not None:
        close_stream()
        time.sleep(0.1)  # answer after the close, as a long-running tool would
    return ("Reconnection test completed successfully. If you received this, the client properly "
            "reconnected after stream closure.")


#: The input schema of json_schema_2020_12_tool, exactly as the suite expects to see it listed (SEP-1613,
#: SEP-2106): a JSON Schema 2020-12 document keeps "$schema", "$defs" (with its "$anchor"),
#: "additionalProperties" and the composition and conditional keywords intact.
JSON_SCHEMA_2020_12 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {"$anchor": "addressDef", "type": "object",
                    "properties": {"street": {"type": "string"}, "city": {"type": "string"}}},
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


@server.tool(description="Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)",
             input_schema=JSON_SCHEMA_2020_12)  # published as written; calls are validated against it
def json_schema_2020_12_tool(name: Optional[str] = None, address: Optional[Dict[str, str]] = None,
                             contactMethod: Optional[str] = None,  # noqa: N803 (the suite's name)
                             phone: Optional[str] = None, email: Optional[str] = None) -> str:
    """Echo the arguments given; what the suite checks is the schema in tools/list."""
    given = {"name": name, "address": address, "contactMethod": contactMethod, "phone": phone, "email": email}
    return f"JSON Schema 2020-12 tool called with: {json.dumps({k: v for k, v in given.items() if v is not None})}"


# ---- tools the 2026-07-28 suite adds -----------------------------------------------------------------
# They work on 2025-11-25 too: there a question is a request sent to the client during the call.

@server.tool
def test_x_mcp_header(region: Annotated[Optional[str], Header("Region")] = None) -> str:
    """Echo the region, which a 2026-07-28 client also sends as the Mcp-Param-Region header (x-mcp-header).

    Args:
        region: The region to route to.
    """
    # The server compares the header with the argument before this runs (a mismatch is -32020).
    return f"Region: {region}" if region is not None else "No region given"


@server.tool
def test_missing_capability(ctx: Context) -> str:
    """Ask the client's model a question, which needs the sampling capability.

    A 2026-07-28 request whose client capabilities lack sampling gets error -32021 naming the missing
    capability; on 2025-11-25 a client without sampling gets an isError result.
    """
    reply = ctx.sample("Say hello.", max_tokens=20)
    return f"LLM response: {reply['content'].get('text', '')}"


@server.tool
def test_streaming_elicitation(ctx: Context) -> str:
    """Ask the user a question mid-call (on 2026-07-28: an input_required result, never a request)."""
    answer = ctx.elicit("Please enter a value", {
        "type": "object", "properties": {"value": {"type": "string"}}, "required": ["value"],
    })
    return f"Elicitation completed: action={answer['action']}, content={json.dumps(answer.get('content', {}))}"


@server.tool
def test_logging_tool(ctx: Context) -> str:
    """Log one message, then answer.

    On 2026-07-28 the log reaches the client only if the request's _meta asked for a log level.
    """
    ctx.info("test_logging_tool ran")
    return "Logging tool executed"


#: Whether the throwaway tool and prompt are registered now; `_trigger_lock` guards it, so that two
#: concurrent triggers cannot both add (or both remove) the same entry.
_throwaway_registered = {"tool": False, "prompt": False}
_trigger_lock = threading.Lock()


def _throwaway() -> str:
    """A throwaway entry: here only so that adding or removing it changes a list."""
    return "This entry exists to make the list change."


def _toggle(kind: str, add: Any, remove: Any) -> str:
    """Register the throwaway ``kind`` ("tool" or "prompt") with ``add``, or unregister it with ``remove``."""
    name = f"test_throwaway_{kind}"
    with _trigger_lock:
        if _throwaway_registered[kind]:
            remove(name)
        else:
            add(_throwaway, name=name, description=f"A throwaway {kind}.")
        _throwaway_registered[kind] = not _throwaway_registered[kind]
        return f"{name} {'added' if _throwaway_registered[kind] else 'removed'}"


@server.tool
def test_trigger_tool_change() -> str:
    """Add a throwaway tool, or remove it if there: listeners get notifications/tools/list_changed."""
    return _toggle("tool", server.add_tool, server.remove_tool)


@server.tool
def test_trigger_prompt_change() -> str:
    """Add a throwaway prompt, or remove it if there: listeners get notifications/prompts/list_changed."""
    return _toggle("prompt", server.add_prompt, server.remove_prompt)


# ---- questions to the client (2026-07-28: input_required results, SEP-2322) ------------------------------
# On 2026-07-28 a question does not block: the first call answers {"resultType": "input_required",
# "inputRequests": {key: request}, "requestState": ...}, the client calls again with the answers, and the
# handler runs again from the top, this time getting them. The keys below are the ones the suite expects.

NAME_FORM = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
OK_FORM = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


@server.tool
def test_input_required_result_elicitation(ctx: Context) -> Any:
    """Ask the user's name (key user_name) and greet them; the explicit form of a question.

    Instead of the blocking ctx.elicit(), this handler returns the question (InputRequired) and reads the
    answer from ctx.input_responses when called again. It keeps no state between rounds, so an answer
    that arrives without a requestState (a client that already knew the question) completes too.
    """
    answer = ctx.input_responses.get("user_name")
    if answer is None:  # not answered yet, or answered under another key: ask (again)
        return InputRequired({"user_name": Elicit("What is your name?", NAME_FORM)})
    if not isinstance(answer, dict) or "action" not in answer:
        raise RPCError(INVALID_PARAMS, "inputResponses.user_name must be an elicitation result")
    if answer["action"] != "accept":
        return "Hello, stranger!"  # a decline or cancel is an answer: do not ask again
    name = (answer.get("content") or {}).get("name")
    if not isinstance(name, str):
        raise RPCError(INVALID_PARAMS, "inputResponses.user_name: content.name must be a string")
    return f"Hello, {name}!"


@server.tool
def test_input_required_result_sampling(ctx: Context) -> str:
    """Ask the client's model a question (key capital_question) and return its answer."""
    reply = ctx.ask({"capital_question": Sample("What is the capital of France?", max_tokens=100)})
    return f"LLM response: {reply['capital_question']['content'].get('text', '')}"


def _roots_of(answer: Any) -> List[Dict[str, Any]]:
    """The roots in a roots/list answer (the list itself or the result object holding it)."""
    return answer.get("roots", []) if isinstance(answer, dict) else list(answer)


@server.tool
def test_input_required_result_list_roots(ctx: Context) -> str:
    """Ask the client for its roots (key client_roots) and list them."""
    roots = _roots_of(ctx.ask({"client_roots": ListRoots()})["client_roots"])
    return "Client roots: " + ", ".join(root.get("uri", "") for root in roots)


@server.tool
def test_input_required_result_request_state(ctx: Context) -> str:
    """Ask for a confirmation (key confirm); what carries the first round to the second is requestState.

    ctx.remember pins a value computed in the first round: it travels in the (sealed) requestState, so
    the second round sees the same value instead of computing a new one.
    """
    started = ctx.remember("started", time.time)
    answer = ctx.elicit("Please confirm to continue", OK_FORM, key="confirm")
    confirmed = answer["action"] == "accept" and bool((answer.get("content") or {}).get("ok"))
    return f"state-ok: confirmed={confirmed}, asked at {started:.0f}"


def _ask_what_the_client_can(ctx: Context) -> str:
    """One round for every question the request's client capabilities allow: a name, a greeting, roots."""
    questions: Dict[str, Any] = {}
    if ctx.can_elicit():
        questions["user_name"] = Elicit("What is your name?", NAME_FORM)
    if ctx.can_sample():
        questions["greeting"] = Sample("Generate a short greeting", max_tokens=50)
    if ctx.can_list_roots():
        questions["client_roots"] = ListRoots()
    if not questions:
        return "The client can answer none of the questions"
    answers = ctx.ask(questions)  # all of them at once: one round trip
    parts = []
    if "user_name" in answers:
        parts.append(f"name={(answers['user_name'].get('content') or {}).get('name')}")
    if "greeting" in answers:
        parts.append(f"greeting={answers['greeting']['content'].get('text', '')}")
    if "client_roots" in answers:
        parts.append(f"roots={len(_roots_of(answers['client_roots']))}")
    return "Got " + ", ".join(parts)


@server.tool
def test_input_required_result_multiple_inputs(ctx: Context) -> str:
    """Ask the user, the client's model and the client's roots in one round (keys user_name, greeting,
    client_roots), each only if the client declared that capability."""
    return _ask_what_the_client_can(ctx)


@server.tool
def test_input_required_result_capabilities(ctx: Context) -> str:
    """Ask only what the request's client capabilities allow (a sampling-only client gets a sampling-only
    round, never an elicitation)."""
    return _ask_what_the_client_can(ctx)


@server.tool
def test_input_required_result_multi_round(ctx: Context) -> str:
    """Ask a name (key step1), then a favourite colour (key step2): two rounds, each with its own state."""
    name = ctx.elicit("What is your name?", NAME_FORM, key="step1")
    who = (name.get("content") or {}).get("name", "stranger")
    colour = ctx.elicit(f"{who}, what is your favourite colour?", {
        "type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"],
    }, key="step2")
    return f"{who} likes {(colour.get('content') or {}).get('color', 'no colour')}"


@server.tool
def test_input_required_result_tampered_state(ctx: Context) -> str:
    """Ask for a confirmation (key confirm); a retry whose requestState was altered is refused (-32602)."""
    answer = ctx.elicit("Please confirm", OK_FORM, key="confirm")
    return f"Confirmed: {answer['action'] == 'accept' and bool((answer.get('content') or {}).get('ok'))}"


# ---- tasks: calls that outlive their request (2026-07-28 extension, SEP-2663; 2025-11-25 core tasks) -----
# A tool declares once whether it may run as a task; the server serves each call in the form the client can
# take (directly, as a 2026-07-28 extension task, or as a 2025-11-25 task). The handler does not change:
# ctx.elicit() inside a task parks it in input_required until the client answers (tasks/update).
@server.tool
def greet(name: str) -> str:
    """Greet someone (never a task)."""
    return f"Hello, {name}!"


@server.tool(task="optional")
def slow_compute(seconds: float, ctx: Context, label: str = "") -> str:
    """Wait ``seconds`` (reporting progress), then report done; a task when the client can take one."""
    deadline = time.monotonic() + max(0.0, seconds)
    while not ctx.cancelled.is_set():
        left = deadline - time.monotonic()
        if left <= 0:
            return f"Computed {label or 'result'} in {seconds:g} s"
        ctx.progress(max(0.0, seconds - left), seconds, f"computing {label}".strip())
        ctx.cancelled.wait(min(left, 0.5))
    return f"Stopped {label or 'computing'}: cancelled"


@server.tool(task="required")
def failing_job(ctx: Context) -> ToolResult:
    """Work for a second, then fail as a tool (always a task)."""
    ctx.cancelled.wait(1.0)
    return ToolResult(["The job failed: the input was not valid"], is_error=True)


@server.tool(task="optional")
def protocol_error_job() -> str:
    """Fail with a protocol error (the task ends "failed", the error inlined)."""
    raise RPCError(-32603, "Internal error: the job's backend went away")


_CONFIRM = {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}
_NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


@server.tool(task="optional")
def confirm_delete(filename: str, ctx: Context) -> str:
    """Delete a file once the user confirms (the task waits for the answer)."""
    answer = ctx.elicit(f"Delete {filename}?", _CONFIRM, key="confirm")
    if answer.get("action") == "accept" and (answer.get("content") or {}).get("confirm"):
        return f"Deleted {filename}"
    return f"Kept {filename}"


@server.tool(task="optional")
def multi_input(ctx: Context) -> str:
    """Ask two questions at once (the task waits until both are answered)."""
    got = ctx.ask({"name": Elicit("What is your name?", _NAME), "confirm": Elicit("Go ahead?", _CONFIRM)})
    name = (got["name"].get("content") or {}).get("name", "nobody")
    confirmed = (got["confirm"].get("content") or {}).get("confirm")
    return f"{name}: {'confirmed' if confirmed else 'not confirmed'}"


@server.tool(task="required", ask_before_task=True)
def test_tool_with_task(ctx: Context) -> str:
    """Ask for a name on the request (an input round), then go on as a task that greets it."""
    answer = ctx.elicit("What is your name?", _NAME, key="user_name")
    ctx.start_task()  # the answer above is in hand: from here on this runs as a task
    name = (answer.get("content") or {}).get("name", "stranger")
    return f"Hello, {name}! (from a task)"


# ---- resources ----------------------------------------------------------------------------------------
@server.resource("test://static-text", mime_type="text/plain")
def static_text() -> str:
    """A static text resource for testing."""
    return "This is the content of the static text resource."


@server.resource("test://static-binary", mime_type="image/png")
def static_binary() -> bytes:
    """A static binary resource (an image): bytes are sent as a base64 blob."""
    return RED_PIXEL_PNG


@server.resource("test://template/{id}/data", mime_type="application/json")
def template_data(id: str) -> str:
    """A resource template: the id in the URI is substituted into the data."""
    return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})


@server.resource("test://watched-resource", mime_type="text/plain")
def watched_resource() -> str:
    """A resource clients may subscribe to (resources/subscribe)."""
    return "Watched resource content"


# ---- prompts ------------------------------------------------------------------------------------------
@server.prompt
def test_simple_prompt() -> str:
    """A simple prompt without arguments."""
    return "This is a simple prompt for testing."


@server.prompt
def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
    """A prompt with required arguments.

    Args:
        arg1: First test argument.
        arg2: Second test argument.
    """
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@server.prompt
def test_prompt_with_embedded_resource(resourceUri: str) -> List[Any]:  # noqa: N803 (the suite's name)
    """A prompt that includes an embedded resource.

    Args:
        resourceUri: URI of the resource to embed.
    """
    return [content.resource(resourceUri, "Embedded resource content for testing.", "text/plain"),
            "Please process the embedded resource above."]


@server.prompt
def test_prompt_with_image() -> List[Any]:
    """A prompt that includes image content."""
    return [content.image(RED_PIXEL_PNG, "image/png"), "Please analyze the image above."]


@server.prompt
def test_input_required_result_prompt(ctx: Context) -> str:
    """A prompt that first asks the user for context (key user_context)."""
    answer = ctx.ask({"user_context": Elicit("What context should the prompt use?", {
        "type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"],
    })})["user_context"]
    return f"Use this context: {(answer.get('content') or {}).get('context', 'none given')}"


# ---- completions --------------------------------------------------------------------------------------
CITIES = ["paris", "park", "party", "prague", "porto"]


@server.completion(prompt="test_prompt_with_arguments", argument="arg1")
def complete_arg1(value: str, arguments: Dict[str, str]) -> List[str]:
    """Suggest values for arg1 that start with what the user typed so far."""
    return [city for city in CITIES if city.startswith(value.lower())]


@server.completion(resource="test://template/{id}/data", argument="id")
def complete_template_id(value: str, arguments: Dict[str, str]) -> List[str]:
    """Suggest template ids that start with what the user typed so far."""
    return [id for id in ("1", "2", "3", "42", "123") if id.startswith(value)]


# ---- skills -------------------------------------------------------------------------------------------
# The skills extension (io.modelcontextprotocol/skills): examples/skills/ holds a skill with a supporting
# file in a subdirectory, what the sep-2640-skills-* scenarios list, get, read back and walk.
server.add_skills(os.path.join(os.path.dirname(os.path.abspath(__file__)), "skills"))


if __name__ == "__main__":
    server.run()
