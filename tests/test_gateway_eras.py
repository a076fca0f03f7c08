"""The four pairings of eras through the gateway, each against the same pairing without it.

For each (front client era x upstream era): an elicitation round and a sampling round complete through the
gateway. Where the two eras differ, the same client connected straight to the upstream cannot talk to it at all
(no common revision): the bridge is what makes the round possible. Where they are the same, the question the
front's user sees through the gateway is the one the upstream asked (as a client connected straight to it sees
it). Upstreams are real processes (examples/gateway/pinned_server.py). Every wait is bounded by WAIT.
"""

import sys
from typing import Any, Dict, List

import pytest
from support import ROOT, WAIT

from mcplite import Client, Gateway, MCPError
from mcplite.protocol.versions import ENVELOPE_VERSIONS

FRONTS = {"handshake": "2025-11-25", "envelope": ENVELOPE_VERSIONS[0]}


def pinned(era: str) -> Dict[str, Any]:
    return {"command": sys.executable, "args": ["-m", "examples.gateway.pinned_server", era, "examples.everything_server"],
            "cwd": str(ROOT)}


class User:
    """The front's user: answers elicitation and sampling, and remembers each question as it was shown."""

    def __init__(self) -> None:
        self.elicited: List[Dict[str, Any]] = []
        self.sampled: List[Dict[str, Any]] = []

    def elicit(self, params: Dict[str, Any]) -> Dict[str, Any]:
        self.elicited.append(params)
        return {"action": "accept", "content": {"username": "ada", "email": "ada@example.org"}}

    def sample(self, params: Dict[str, Any]) -> Dict[str, Any]:
        self.sampled.append(params)
        return {"role": "assistant", "content": {"type": "text", "text": "forty-two"}, "model": "test-model"}

    def client(self, target: Any, era: str) -> Client:
        return Client(target, protocol_version=FRONTS[era], elicitation=self.elicit, sampling=self.sample,
                      timeout=WAIT)


def rounds(client: Client, prefix: str) -> None:
    """An elicitation round and a sampling round, each checked for the answer it carried back."""
    result = client.call_tool(f"{prefix}test_elicitation", {"message": "Who are you?"})
    assert "ada@example.org" in result["content"][0]["text"], result
    result = client.call_tool(f"{prefix}test_sampling", {"prompt": "The answer?"})
    assert result["content"][0]["text"] == "LLM response: forty-two", result


@pytest.mark.parametrize("front", sorted(FRONTS))
@pytest.mark.parametrize("upstream", ["handshake", "envelope"])
def test_each_pairing_of_eras_needs_the_gateway_or_passes_the_question_through(front: str, upstream: str) -> None:
    config = pinned(upstream)
    straight = User()
    direct = Client.stdio([config["command"], *config["args"]], cwd=config["cwd"],
                          protocol_version=FRONTS[front], elicitation=straight.elicit, sampling=straight.sample,
                          timeout=WAIT)
    if front != upstream:
        # No revision in common: this client cannot use this server by itself.
        with pytest.raises(MCPError):
            with direct:
                direct.list_tools()
    else:
        with direct:
            rounds(direct, "")
    user = User()
    with Gateway({"mcpServers": {"ev": config}}) as gateway, user.client(gateway, front) as client:
        assert client.protocol_version == FRONTS[front]
        assert gateway.upstreams["ev"].revision == FRONTS[upstream]
        rounds(client, "ev_")
        assert [params["message"] for params in user.elicited] == ["Who are you?"]
        assert user.sampled[0]["messages"][0]["content"]["text"] == "The answer?"
        if front == upstream:  # passed through: the question shown is the upstream's own
            assert user.elicited == straight.elicited
            assert user.sampled == straight.sampled
        assert not gateway.calls._calls
