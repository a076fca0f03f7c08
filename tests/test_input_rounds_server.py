"""One handler, every revision: questions to the client by replay on 2026-07-28, by requests before.

A handler asks with ``ctx.elicit`` / ``ctx.sample`` / ``ctx.list_roots`` / ``ctx.ask``. On 2026-07-28 the call
answers ``input_required`` and the client calls again with the answers and the sealed ``requestState``; the
handler runs again and gets them. Checked here over a raw in-memory peer (every message by hand) and over HTTP
with two app instances standing in for two workers; the handshake era through the in-process `Client`.
"""

import threading
from typing import Any, Dict, Iterator, List, Optional

import pytest

from mcplite import Client, Context, Elicit, InputRequired, ListRoots, Sample, Server
from mcplite.protocol import input_rounds
from mcplite.transports.memory import memory_pair
from support import RawPeer
from support.http import serving
from support.raw_http import EnvelopeClient, envelope

ALL_CAPS = {"elicitation": {}, "sampling": {}, "roots": {}}
NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
ACCEPT_ADA = {"action": "accept", "content": {"name": "Ada"}}
SAMPLED = {"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m"}
ROOTS = {"roots": [{"uri": "file:///w", "name": "w"}]}


def make_server(**options: Any) -> Server:
    server = Server("replay-test", **options)
    runs: List[str] = []
    server.runs = runs  # type: ignore[attr-defined]

    @server.tool
    def greet(ctx: Context) -> str:
        """Ask a name, then greet."""
        runs.append("greet")
        answer = ctx.elicit("Your name?", NAME)
        if answer["action"] != "accept":
            return "Hello, stranger!"
        return f"Hello, {answer['content']['name']}!"

    @server.tool
    def two_steps(ctx: Context) -> str:
        """Two questions one after the other: two rounds."""
        first = ctx.elicit("First name?", NAME, key="first")["content"]["name"]
        last = ctx.elicit(f"Last name of {first}?", NAME, key="last")["content"]["name"]
        return f"{first} {last}"

    @server.tool
    def all_at_once(ctx: Context) -> Dict[str, Any]:
        """Three questions in one round."""
        got = ctx.ask({"name": Elicit("Name?", NAME), "capital": Sample("Capital of France?", max_tokens=5),
                       "roots": ListRoots()})
        return {"name": got["name"]["content"]["name"], "capital": got["capital"]["content"]["text"],
                "roots": [root["uri"] for root in got["roots"]["roots"]]}

    @server.tool
    def pinned(ctx: Context) -> str:
        """A value computed once, whatever the rounds."""
        ticket = ctx.remember("ticket", lambda: f"t{len(runs)}")
        runs.append(ticket)
        ctx.elicit(f"Confirm ticket {ticket}?", {"type": "object", "properties": {}})
        return ticket

    @server.tool
    def swallows(ctx: Context) -> str:
        """A handler that catches everything still ends the round as input_required."""
        try:
            ctx.elicit("Name?", NAME)
        except Exception:  # noqa: BLE001 (the point of the test)
            return "swallowed"
        return "asked"

    @server.tool
    def explicit(ctx: Context) -> Any:
        """The explicit form: return the questions, read the answers next round."""
        if "ok" not in ctx.input_responses:
            return InputRequired({"ok": Elicit("OK?", {"type": "object", "properties": {}})}, state={"step": 1})
        return f"state={ctx.request_state}, ok={ctx.input_responses['ok']['action']}"

    @server.tool
    def needs_sampling(ctx: Context) -> str:
        """Asks the model; the request must declare sampling."""
        return ctx.sample("Hi", max_tokens=5)["content"]["text"]

    @server.prompt
    def asking_prompt(ctx: Context) -> str:
        """A prompt that asks for context first."""
        answer = ctx.elicit("Context?", {"type": "object", "properties": {"context": {"type": "string"}}})
        return f"Use {answer['content']['context']}"

    @server.resource("test://asking")
    def asking_resource(ctx: Context) -> str:
        return "roots: " + ",".join(root["uri"] for root in ctx.list_roots())

    @server.completion(prompt="asking_prompt", argument="x")
    def complete_x(value: str, arguments: Dict[str, Any]) -> List[str]:
        return []

    return server


@pytest.fixture
def server() -> Server:
    return make_server()


@pytest.fixture
def peer(server: Server) -> Iterator[RawPeer]:
    ours, theirs = memory_pair()
    session = server.connect(theirs)
    yield RawPeer(ours)
    session.close()


class Caller:
    """Calls on a raw peer at 2026-07-28, keeping ids unique."""

    def __init__(self, peer: RawPeer, capabilities: Optional[Dict[str, Any]] = None) -> None:
        self.peer = peer
        self.capabilities = ALL_CAPS if capabilities is None else capabilities
        self.next_id = 0

    def call(self, method: str, params: Dict[str, Any]) -> Dict[str, Any]:
        self.next_id += 1
        return self.peer.request(self.next_id, method, {**params, "_meta": envelope(self.capabilities)})

    def tool(self, name: str, **retry: Any) -> Dict[str, Any]:
        return self.call("tools/call", {"name": name, "arguments": {}, **retry})


def test_a_question_is_an_input_round(peer: RawPeer, server: Server) -> None:
    caller = Caller(peer)
    first = caller.tool("greet")["result"]
    assert first["resultType"] == "input_required"
    assert first["inputRequests"] == {"ask-1": {"method": "elicitation/create",
                                                "params": {"message": "Your name?", "requestedSchema": NAME}}}
    assert isinstance(first["requestState"], str) and first["requestState"].startswith("v1.")
    assert "ttlMs" not in first  # an interim result is never cacheable
    done = caller.tool("greet", inputResponses={"ask-1": ACCEPT_ADA}, requestState=first["requestState"])["result"]
    assert done["resultType"] == "complete" and done["content"][0]["text"] == "Hello, Ada!"
    assert server.runs == ["greet", "greet"]  # type: ignore[attr-defined]  # replayed, not parked


def test_a_decline_is_an_answer(peer: RawPeer) -> None:
    caller = Caller(peer)
    state = caller.tool("greet")["result"]["requestState"]
    done = caller.tool("greet", inputResponses={"ask-1": {"action": "decline"}}, requestState=state)["result"]
    assert done["content"][0]["text"] == "Hello, stranger!"


def test_questions_in_sequence_take_a_round_each(peer: RawPeer) -> None:
    caller = Caller(peer)
    one = caller.tool("two_steps")["result"]
    assert list(one["inputRequests"]) == ["first"]
    two = caller.tool("two_steps", inputResponses={"first": ACCEPT_ADA}, requestState=one["requestState"])["result"]
    assert list(two["inputRequests"]) == ["last"] and two["requestState"] != one["requestState"]
    assert two["inputRequests"]["last"]["params"]["message"] == "Last name of Ada?"
    done = caller.tool("two_steps", inputResponses={"last": {"action": "accept", "content": {"name": "Lovelace"}}},
                       requestState=two["requestState"])["result"]
    assert done["content"][0]["text"] == "Ada Lovelace"


def test_ask_puts_every_question_in_one_round(peer: RawPeer) -> None:
    caller = Caller(peer)
    first = caller.tool("all_at_once")["result"]
    assert {key: request["method"] for key, request in first["inputRequests"].items()} == {
        "name": "elicitation/create", "capital": "sampling/createMessage", "roots": "roots/list"}
    partial = caller.tool("all_at_once", inputResponses={"name": ACCEPT_ADA}, requestState=first["requestState"])
    assert set(partial["result"]["inputRequests"]) == {"capital", "roots"}  # the answered one is recorded
    done = caller.tool("all_at_once", inputResponses={"capital": SAMPLED, "roots": ROOTS},
                       requestState=partial["result"]["requestState"])["result"]
    assert done["structuredContent"] == {"name": "Ada", "capital": "Paris", "roots": ["file:///w"]}


def test_remember_keeps_a_value_across_rounds(peer: RawPeer, server: Server) -> None:
    caller = Caller(peer)
    first = caller.tool("pinned")["result"]
    done = caller.tool("pinned", inputResponses={"ask-1": {"action": "accept", "content": {}}},
                       requestState=first["requestState"])["result"]
    assert done["content"][0]["text"] == "t0"
    assert server.runs == ["t0", "t0"]  # type: ignore[attr-defined]


def test_a_swallowed_suspension_still_asks(peer: RawPeer) -> None:
    assert issubclass(input_rounds.Suspend, BaseException) and not issubclass(input_rounds.Suspend, Exception)
    assert Caller(peer).tool("swallows")["result"]["resultType"] == "input_required"


def test_the_explicit_form(peer: RawPeer) -> None:
    caller = Caller(peer)
    first = caller.tool("explicit")["result"]
    assert list(first["inputRequests"]) == ["ok"]
    done = caller.tool("explicit", inputResponses={"ok": {"action": "accept", "content": {}}},
                       requestState=first["requestState"])["result"]
    assert done["content"][0]["text"] == "state={'step': 1}, ok=accept"


@pytest.mark.parametrize("change", ["tampered", "other tool", "other arguments"])
def test_a_state_is_bound_to_its_request(peer: RawPeer, change: str) -> None:
    caller = Caller(peer)
    state = caller.tool("greet")["result"]["requestState"]
    params: Dict[str, Any] = {"name": "greet", "arguments": {}, "inputResponses": {"ask-1": ACCEPT_ADA},
                              "requestState": state}
    if change == "tampered":
        params["requestState"] = state + "-TAMPERED"
    elif change == "other tool":
        params["name"] = "two_steps"
    else:
        params["arguments"] = {"x": 1}
    error = caller.call("tools/call", params)["error"]
    assert (error["code"], error["message"]) == (-32602, "Invalid or expired requestState")


@pytest.mark.parametrize("responses", [None, {"ask-1": 12345}, {"ask-1": {"action": "maybe"}},
                                       {"ask-1": {"action": "accept", "content": {"name": 7}}}])
def test_malformed_answers_are_not_taken(peer: RawPeer, responses: Any) -> None:
    caller = Caller(peer)
    state = caller.tool("greet")["result"]["requestState"]
    answer = caller.tool("greet", inputResponses=responses, requestState=state)
    if responses is None:  # no answers at all: asked again
        assert answer["result"]["resultType"] == "input_required"
    else:
        assert answer["error"]["code"] == -32602


def test_unknown_answer_keys_are_ignored(peer: RawPeer) -> None:
    caller = Caller(peer)
    state = caller.tool("greet")["result"]["requestState"]
    done = caller.tool("greet", inputResponses={"ask-1": ACCEPT_ADA, "stray": {"x": 1}}, requestState=state)
    assert done["result"]["content"][0]["text"] == "Hello, Ada!"


def test_a_missing_capability_is_32021(peer: RawPeer) -> None:
    error = Caller(peer, capabilities={"elicitation": {}}).tool("needs_sampling")["error"]
    assert error["code"] == -32021 and error["data"] == {"requiredCapabilities": {"sampling": {}}}
    assert Caller(peer, capabilities={"sampling": {}}).tool("needs_sampling")["result"]["resultType"] == \
        "input_required"


def test_prompts_and_resources_ask_too(peer: RawPeer) -> None:
    caller = Caller(peer)
    first = caller.call("prompts/get", {"name": "asking_prompt"})["result"]
    done = caller.call("prompts/get", {"name": "asking_prompt", "inputResponses": {
        "ask-1": {"action": "accept", "content": {"context": "tests"}}}, "requestState": first["requestState"]})
    assert done["result"]["messages"][0]["content"]["text"] == "Use tests"
    first = caller.call("resources/read", {"uri": "test://asking"})["result"]
    assert first["inputRequests"]["ask-1"]["method"] == "roots/list"
    done = caller.call("resources/read", {"uri": "test://asking", "inputResponses": {"ask-1": ROOTS},
                                          "requestState": first["requestState"]})["result"]
    assert done["contents"][0]["text"] == "roots: file:///w" and done["ttlMs"] == 0


def test_the_same_handlers_on_a_handshake_session(server: Server) -> None:
    asked: List[str] = []

    def elicitation(params: Dict[str, Any]) -> Dict[str, Any]:
        asked.append(params["message"])
        return ACCEPT_ADA if "name" in params["message"].lower() else {"action": "accept", "content": {}}

    with Client(server, elicitation=elicitation, sampling=lambda params: SAMPLED,
                roots=[{"uri": "file:///w", "name": "w"}], protocol_version="2025-11-25") as client:
        assert client.protocol_version == "2025-11-25"
        assert client.call_tool("greet")["content"][0]["text"] == "Hello, Ada!"
        assert client.call_tool("all_at_once")["structuredContent"] == {
            "name": "Ada", "capital": "Paris", "roots": ["file:///w"]}
        assert client.call_tool("explicit")["content"][0]["text"] == "state={'step': 1}, ok=accept"  # the shim
        assert client.call_tool("pinned")["content"][0]["text"].startswith("t")
    assert asked[:2] == ["Your name?", "Name?"]
    assert server.runs == ["greet", "t1"]  # type: ignore[attr-defined]  # each handler ran once


def test_a_retry_on_another_worker_needs_the_same_keys() -> None:
    keys = [b"k" * 32]
    with serving(make_server(state_keys=keys)) as worker_a, serving(make_server(state_keys=keys)) as worker_b, \
            serving(make_server()) as stranger:
        first = EnvelopeClient(worker_a, ALL_CAPS)
        body = first.enveloped("tools/call", {"name": "greet", "arguments": {}})
        state = first.post(body).json()["result"]["requestState"]
        retry = {"name": "greet", "arguments": {}, "inputResponses": {"ask-1": ACCEPT_ADA}, "requestState": state}
        second = EnvelopeClient(worker_b, ALL_CAPS)
        reply = second.post(second.enveloped("tools/call", retry))
        assert reply.json()["result"]["content"][0]["text"] == "Hello, Ada!"
        third = EnvelopeClient(stranger, ALL_CAPS)
        reply = third.post(third.enveloped("tools/call", retry))
        assert (reply.status, reply.json()["error"]["code"]) == (400, -32602)


def test_state_keys_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCPLITE_STATE_KEYS", "ab" * 32 + "," + "cd" * 32)
    server = Server("env")
    assert server.state_keys_source == "MCPLITE_STATE_KEYS" and len(server.state_keys) == 2
    assert server.multiprocess_warning() is None
    monkeypatch.delenv("MCPLITE_STATE_KEYS")
    assert "state_keys" in (Server("ephemeral").multiprocess_warning() or "")


def test_asks_come_from_the_handlers_thread() -> None:
    round_ = input_rounds.Round(None, None)
    errors: List[BaseException] = []

    def other() -> None:
        try:
            round_.ask(None, input_rounds.ListRoots())
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    thread = threading.Thread(target=other)
    thread.start()
    thread.join(5)
    assert len(errors) == 1 and "own thread" in str(errors[0])
