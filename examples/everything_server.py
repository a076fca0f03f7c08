"""Every feature the official MCP conformance suite checks, in one server (and our showcase).

Each tool, resource, template, prompt and completion below is one the suite
(`@modelcontextprotocol/conformance`, see tests/conformance/) calls by name and checks by behaviour, plus
`add`, the one-line example of everything else. Each handler is a plain function: mcplite turns its
signature into the input schema, its docstring into the description and its return value into content.

Serve it over stdio:           python3 -m mcplite serve examples/everything_server.py
or over Streamable HTTP:       python3 -m mcplite serve examples/everything_server.py --http 127.0.0.1:8000
                               (at /mcp; the legacy HTTP+SSE transport at /sse)
Try it from the command line:  python3 -m mcplite call add a=2 b=3 -- \
                                   python3 -m mcplite serve examples/everything_server.py
"""

import base64
import io
import json
import time
import wave
from typing import Any, Dict, List, Optional

from mcplite import Context, Server, ToolResult, content

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
@server.tool
def add(a: int, b: int) -> int:
    """Add two integers (the result is also structured: {"result": a + b})."""
    return a + b


@server.tool
def test_simple_text() -> str:
    """Return one text item."""
    return "This is a simple text response for testing."


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


#: The input schema of json_schema_2020_12_tool, exactly as the suite expects to see it listed (SEP-1613):
#: a JSON Schema 2020-12 document keeps "$schema", "$defs" and "additionalProperties" intact.
JSON_SCHEMA_2020_12 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {"type": "object", "properties": {"street": {"type": "string"}, "city": {"type": "string"}}},
    },
    "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
    "additionalProperties": False,
}


@server.tool(description="Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)",
             input_schema=JSON_SCHEMA_2020_12)  # published as written; calls are validated against it
def json_schema_2020_12_tool(name: Optional[str] = None, address: Optional[Dict[str, str]] = None) -> str:
    """Echo the arguments; what the suite checks is the schema in tools/list."""
    return f"JSON Schema 2020-12 tool called with: {json.dumps({'name': name, 'address': address})}"


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


if __name__ == "__main__":
    server.run()
