"""A stateless HTTP server asked to do what needs a session says so, rather than blaming the client.

A stateless server (``stateless=True``, as behind several workers) answers each request with a session that
lives for that request alone; at a handshake revision it cannot send the client a request (sampling,
elicitation, roots). It used to fail such a tool with "the peer did not declare the 'sampling' capability",
although the client had declared it. At 2026-07-28 the same handler works, through input-required rounds.
"""

from typing import Any, Dict

import pytest

from mcplite import Client, Context, Server
from mcplite.content import text_of

from support import WAIT
from support.http import serving

HANDSHAKE = "2025-11-25"


def answer_sampling(params: Dict[str, Any]) -> Dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "sampled"}, "model": "m"}


def answer_elicitation(params: Dict[str, Any]) -> Dict[str, Any]:
    return {"action": "accept", "content": {"name": "Ada"}}


def asking_server() -> Server:
    server = Server("asking")

    @server.tool()
    def sample(ctx: Context) -> str:
        return text_of(ctx.sample("hello"))

    @server.tool()
    def elicit(ctx: Context) -> str:
        answer = ctx.elicit("name?", {"type": "object", "properties": {"name": {"type": "string"}}})
        return str(answer.get("content", {}).get("name"))

    @server.tool()
    def roots(ctx: Context) -> str:
        return str(len(ctx.list_roots()))

    return server


@pytest.mark.parametrize("tool", ["sample", "elicit", "roots"])
def test_a_stateless_server_at_a_handshake_revision_says_why_it_cannot_ask(tool: str) -> None:
    with serving(asking_server(), stateless=True) as http:
        with Client(http.url, timeout=WAIT, protocol_version=HANDSHAKE, sampling=answer_sampling,
                    elicitation=answer_elicitation, roots=["file:///tmp"]) as client:
            result = client.call_tool(tool)
            assert client.call_tool("sample") is not None  # the connection stays usable
    assert result.get("isError") is True
    message = text_of(result)
    assert "stateless HTTP server cannot send requests to the client" in message
    assert "2026-07-28" in message and "stateless=False" in message
    assert "did not declare" not in message


def test_the_same_handlers_work_statelessly_at_2026_07_28() -> None:
    with serving(asking_server(), stateless=True) as http:
        with Client(http.url, timeout=WAIT, sampling=answer_sampling, elicitation=answer_elicitation,
                    roots=["file:///tmp"]) as client:
            assert client.session.revision.version == "2026-07-28"
            assert text_of(client.call_tool("sample")) == "sampled"
            assert text_of(client.call_tool("elicit")) == "Ada"
            assert text_of(client.call_tool("roots")) == "1"


def test_with_sessions_the_handshake_revision_asks_as_before() -> None:
    with serving(asking_server()) as http:
        with Client(http.url, timeout=WAIT, protocol_version=HANDSHAKE, sampling=answer_sampling,
                    elicitation=answer_elicitation, roots=["file:///tmp"]) as client:
            assert text_of(client.call_tool("sample")) == "sampled"
            assert text_of(client.call_tool("elicit")) == "Ada"
