"""The interop contract (see examples/interop_server.py) served by the official Python SDK (PyPI ``mcp``).

    .peers/py/bin/python tests/interop/py_server.py                          (stdio)
    .peers/py/bin/python tests/interop/py_server.py streamable-http|sse PORT    (on 127.0.0.1)

Written against mcp 2.x's ``MCPServer`` (the 1.x ``FastMCP``).
"""

import sys
import warnings
from typing import TypedDict

import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPDeprecationWarning
from pydantic import BaseModel

# Sampling and logging are deprecated from 2026-07-28 on; this server speaks the handshake revisions,
# where they are current. The warnings would only clutter the test output.
warnings.simplefilter("ignore", MCPDeprecationWarning)

server = MCPServer("interop-python-sdk", version="1.0.0", log_level="WARNING")


class Echo(TypedDict):
    text: str
    length: int


class Contact(BaseModel):
    name: str
    age: int


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def echo(text: str) -> Echo:
    """Echo the text back with its length."""
    return {"text": text, "length": len(text)}


@server.tool()
async def countdown(steps: int, ctx: Context) -> str:
    """Report progress and log once per step."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step}")
        await ctx.info(f"step {step} of {steps}", logger_name="countdown")
    return f"counted {steps}"


@server.tool()
async def ask_model(prompt: str, ctx: Context) -> str:
    """Ask the client's model (sampling) and return what it said."""
    message = types.SamplingMessage(role="user", content=types.TextContent(type="text", text=prompt))
    reply = await ctx.session.create_message([message], max_tokens=50, system_prompt="Answer briefly.",
                                             related_request_id=ctx.request_context.request_id)
    return f"{reply.model}: {reply.content.text}"


@server.tool()
async def ask_user(ctx: Context) -> str:
    """Ask the client's user who they are (form elicitation) and return the answer."""
    answer = await ctx.elicit("Who are you?", Contact)
    if answer.action != "accept":
        return answer.action
    return f"accept: {answer.data.name}, {answer.data.age}"


@server.resource("interop://static", mime_type="text/plain")
def static_resource() -> str:
    """A fixed text resource."""
    return "static text"


@server.resource("interop://greeting/{name}", mime_type="text/plain")
def greeting(name: str) -> str:
    """A greeting for anyone (a resource template)."""
    return f"Hello, {name}!"


@server.prompt()
def greet(name: str) -> str:
    """A prompt asking to greet someone."""
    return f"Please greet {name} warmly."


if __name__ == "__main__":
    if len(sys.argv) == 1:
        server.run("stdio")
    else:  # streamable-http (endpoint /mcp) or sse (endpoints /sse and /messages/), on 127.0.0.1
        server.run(sys.argv[1], host="127.0.0.1", port=int(sys.argv[2]))  # type: ignore[call-overload]
