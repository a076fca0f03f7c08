"""The server that other MCP SDKs' clients talk to in the interoperability tests (tests/interop/).

It shows every server feature those tests cover, one small handler each: tools with structured output,
a tool that reports progress and logs, tools that ask the client's model (sampling), its user
(elicitation) and its roots, a resource, a resource template and a prompt. The peer SDKs' servers in
tests/interop/ implement the same contract, so the same checks run against all of them.

Serve it over stdio:   python3 -m examples.interop_server
Or over HTTP:          python3 -m examples.interop_server 127.0.0.1:8000
                       (Streamable HTTP at /mcp, the legacy HTTP+SSE transport at /sse)
"""

import json
import sys
from dataclasses import dataclass
from typing import TypedDict

from mcplite import Context, Server

server = Server("interop-mcplite", version="1.0.0", instructions="The mcplite side of the interop tests.")


class Echo(TypedDict):
    text: str
    length: int


@dataclass
class Contact:
    """Who the user says they are."""

    name: str
    age: int


@server.tool
def add(a: int, b: int) -> int:
    """Add two integers (structured output: {"result": a + b})."""
    return a + b


@server.tool
def echo(text: str) -> Echo:
    """Echo the text back with its length (structured output: an object)."""
    return {"text": text, "length": len(text)}


@server.tool
def countdown(steps: int, ctx: Context) -> str:
    """Report progress and log once per step."""
    for step in range(1, steps + 1):
        ctx.progress(step, steps, message=f"step {step}")
        ctx.info(f"step {step} of {steps}", logger="countdown")
    return f"counted {steps}"


@server.tool
def ask_model(prompt: str, ctx: Context) -> str:
    """Ask the client's model (sampling) and return what it said."""
    reply = ctx.sample(prompt, max_tokens=50, system_prompt="Answer briefly.")
    return f"{reply['model']}: {reply['content']['text']}"


@server.tool
def ask_user(ctx: Context) -> str:
    """Ask the client's user who they are (form elicitation) and return the answer."""
    answer = ctx.elicit("Who are you?", Contact)
    if answer["action"] != "accept":
        return answer["action"]
    return f"accept: {answer['content']['name']}, {answer['content']['age']}"


@server.tool
def list_roots(ctx: Context) -> str:
    """Ask the client for its roots and return their URIs (a JSON array, as text)."""
    return json.dumps([root["uri"] for root in ctx.list_roots()])


@server.resource("interop://static", mime_type="text/plain")
def static_resource() -> str:
    """A fixed text resource."""
    return "static text"


@server.resource("interop://greeting/{name}", mime_type="text/plain")
def greeting(name: str) -> str:
    """A greeting for anyone (a resource template)."""
    return f"Hello, {name}!"


@server.prompt
def greet(name: str) -> str:
    """A prompt asking to greet someone."""
    return f"Please greet {name} warmly."


if __name__ == "__main__":
    server.run(http=sys.argv[1] if len(sys.argv) > 1 else None)
