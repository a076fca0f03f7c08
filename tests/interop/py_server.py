"""The interop contract (see examples/interop_server.py) served by the official Python SDK (PyPI ``mcp``).

    .peers/py/bin/python tests/interop/py_server.py                          (stdio)
    .peers/py/bin/python tests/interop/py_server.py streamable-http|sse PORT    (on 127.0.0.1)

Written against mcp 2.x's ``MCPServer`` (the 1.x ``FastMCP``). It serves both eras from one definition: a
client that negotiates 2026-07-28 (``server/discover``) gets sampling, elicitation and roots as
``input_required`` results (the SDK's resolvers: a tool parameter ``Annotated[T, Resolve(fn)]`` whose ``fn``
returns a ``Sample``, ``Elicit`` or ``ListRoots`` question; the tool body runs once every answer is in), a
handshake client gets them as server-to-client requests, which the same resolvers send mid-call on those
revisions.
"""

import json
import os
import sys
import warnings
from typing import Annotated, TypedDict

import mcp_types as types
from mcp.server.mcpserver import Context, Elicit, ElicitationResult, ListRoots, MCPServer, Resolve, Sample
from mcp.shared.exceptions import MCPDeprecationWarning
from pydantic import BaseModel

# Sampling, roots and logging are deprecated from 2026-07-28 on, but still served (sampling and roots as
# input_required, log messages for requests that ask for them in _meta); the handshake legs use them as current
# features. The warnings would only clutter the test output.
warnings.simplefilter("ignore", MCPDeprecationWarning)

server = MCPServer("interop-python-sdk", version="1.0.0", log_level="WARNING")
#: The resources' URI scheme: ``interop`` (the contract's), or another where this server shares a gateway with
#: other contract servers (gateway_legs.py), which cannot serve one URI from two servers.
SCHEME = os.environ.get("INTEROP_RESOURCE_SCHEME", "interop")


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


def sample_reply(prompt: str) -> Sample:
    """The sampling question behind ask_model: on 2026-07-28 an input request, before that a request."""
    message = types.SamplingMessage(role="user", content=types.TextContent(type="text", text=prompt))
    return Sample([message], max_tokens=50, system_prompt="Answer briefly.")


@server.tool()
async def ask_model(prompt: str, reply: Annotated[types.CreateMessageResult, Resolve(sample_reply)]) -> str:
    """Ask the client's model (sampling) and return what it said."""
    return f"{reply.model}: {reply.content.text}"


def who_is_asking() -> Elicit[Contact]:
    """The elicitation question behind ask_user."""
    return Elicit("Who are you?", Contact)


@server.tool()
async def ask_user(answer: Annotated[ElicitationResult[Contact], Resolve(who_is_asking)]) -> str:
    """Ask the client's user who they are (form elicitation) and return the answer."""
    if answer.action != "accept":
        return answer.action
    return f"accept: {answer.data.name}, {answer.data.age}"


def client_roots() -> ListRoots:
    """The roots question behind list_roots."""
    return ListRoots()


@server.tool()
async def list_roots(roots: Annotated[types.ListRootsResult, Resolve(client_roots)]) -> str:
    """Ask the client for its roots and return their URIs (a JSON array, as text)."""
    return json.dumps([str(root.uri) for root in roots.roots])


@server.resource(f"{SCHEME}://static", mime_type="text/plain")
def static_resource() -> str:
    """A fixed text resource."""
    return "static text"


@server.resource(f"{SCHEME}://greeting/{{name}}", mime_type="text/plain")
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
