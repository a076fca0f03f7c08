"""protocol/input_rounds: one execution of a handler that asks, as tables. Pure: no threads, no I/O."""

from typing import Any, Dict, Optional

import pytest

from mcplite.errors import RPCError
from mcplite.protocol.input_rounds import (
    Elicit,
    ElicitURL,
    InputRequired,
    ListRoots,
    Round,
    Sample,
    Suspend,
    key_pending,
    sampling_params,
)
from mcplite.protocol.request_state import StateKeys, open_state, question_digest, seal_state

FORM = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
YES = {"action": "accept", "content": {"ok": True}}


def suspended(round_: Round, key: Optional[str], request: Any) -> bool:
    try:
        round_.ask(key, request)
    except Suspend:
        return True
    return False


def next_round(round_: Round, responses: Any) -> Round:
    """The round a client's retry starts, through a real seal and open."""
    outcome = round_.outcome(None)
    assert outcome is not None
    keys = StateKeys([b"s" * 32])
    binding: Dict[str, Any] = dict(method="tools/call", target="t", arguments={}, audience="a", principal=None)
    token = seal_state(outcome["round_state"], keys=keys, now=1000.0, **binding)
    return Round(open_state(token, keys=keys, now=1001.0, **binding), responses)


@pytest.mark.parametrize("request_, wire", [
    (Elicit("OK?", FORM), {"method": "elicitation/create", "params": {"message": "OK?", "requestedSchema": FORM}}),
    (ElicitURL("Go", "https://x"), {"method": "elicitation/create",
                                    "params": {"mode": "url", "message": "Go", "url": "https://x"}}),
    (ElicitURL("Go", "https://x", "e1"), {"method": "elicitation/create", "params": {
        "mode": "url", "message": "Go", "url": "https://x", "elicitationId": "e1"}}),
    (Sample("Hi", max_tokens=5), {"method": "sampling/createMessage", "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "Hi"}}], "maxTokens": 5}}),
    (ListRoots(), {"method": "roots/list", "params": {}}),
])
def test_the_questions_on_the_wire(request_: Any, wire: Dict[str, Any]) -> None:
    assert request_.to_request() == wire


def test_sampling_params() -> None:
    params = sampling_params(["a", {"role": "assistant", "content": {"type": "text", "text": "b"}}],
                             tool_choice="auto", tools=[{"name": "t"}], temperature=0.5)
    assert params["toolChoice"] == {"mode": "auto"} and params["temperature"] == 0.5
    assert [m["role"] for m in params["messages"]] == ["user", "assistant"]


def test_a_first_round_suspends_then_an_answer_is_taken() -> None:
    first = Round(None, None)
    assert suspended(first, None, Elicit("OK?", FORM))
    assert first.pending == {"ask-1": Elicit("OK?", FORM).to_request()}
    second = next_round(first, {"ask-1": YES})
    assert second.number == 1 and second.ask(None, Elicit("OK?", FORM)) == YES
    assert suspended(second, None, ListRoots())  # a second question: the first answer is now recorded
    third = next_round(second, {"ask-2": {"roots": []}})
    assert third.ask(None, Elicit("OK?", FORM)) == YES and third.ask(None, ListRoots()) == {"roots": []}
    assert third.outcome("done") is None


def test_a_changed_question_is_asked_again() -> None:
    first = Round(None, None)
    suspended(first, "q", Elicit("OK?", FORM))
    second = next_round(first, {"q": YES})
    assert suspended(second, "q", Elicit("Really OK?", FORM))  # not the question that was answered
    assert second.changed_questions == ["q"]


def test_a_first_call_may_carry_its_answers() -> None:
    # With no state at all, an answer under the key of a question asked now is taken (the client knew it).
    assert Round(None, {"q": YES}).ask("q", Elicit("OK?", FORM)) == YES


def test_ask_many_suspends_once_with_every_missing_question() -> None:
    first = Round(None, None)
    questions = {"a": Elicit("A?", FORM), "b": ListRoots()}
    with pytest.raises(Suspend):
        first.ask_many(questions)
    assert list(first.pending) == ["a", "b"]
    second = next_round(first, {"a": YES})
    with pytest.raises(Suspend):
        second.ask_many(questions)
    assert list(second.pending) == ["b"]
    third = next_round(second, {"b": {"roots": []}})
    assert third.ask_many(questions) == {"a": YES, "b": {"roots": []}}


def test_remember_is_stable_across_rounds() -> None:
    first = Round(None, None)
    assert first.remember("n", lambda: 1) == 1
    suspended(first, None, ListRoots())
    assert next_round(first, None).remember("n", lambda: 2) == 1


@pytest.mark.parametrize("answer, problem", [
    (12345, "must be an object"),
    ({"action": "maybe"}, "needs an action"),
    ({"action": "accept", "content": {"ok": "yes"}}, "does not match"),
])
def test_malformed_answers(answer: Any, problem: str) -> None:
    def strict(content: Any, schema: Dict[str, Any]) -> None:
        if not isinstance(content.get("ok"), bool):
            raise ValueError("ok must be a boolean")

    round_ = Round(None, {"q": answer}, strict)
    with pytest.raises(RPCError, match=problem) as raised:
        round_.ask("q", Elicit("OK?", FORM))
    assert raised.value.code == -32602


def test_input_responses_must_be_an_object() -> None:
    with pytest.raises(RPCError) as raised:
        Round(None, [1])
    assert raised.value.code == -32602


def test_reserved_keys() -> None:
    with pytest.raises(ValueError, match="reserved"):
        Round(None, None).ask("ask-7", ListRoots())


def test_the_explicit_form() -> None:
    round_ = Round(None, None)
    outcome = round_.outcome(InputRequired({"ok": Elicit("OK?", FORM)}, state={"step": 1}))
    assert outcome is not None and list(outcome["inputRequests"]) == ["ok"]
    assert outcome["round_state"]["user"] == {"step": 1}
    clash = Round(None, None)
    suspended(clash, "ok", ListRoots())
    with pytest.raises(RPCError) as raised:
        clash.outcome(InputRequired({"ok": ListRoots()}))
    assert raised.value.code == -32603
    with pytest.raises(ValueError):
        InputRequired({})


def test_a_swallowed_suspension_still_asks() -> None:
    round_ = Round(None, None)
    suspended(round_, None, ListRoots())
    outcome = round_.outcome("the handler returned anyway")
    assert outcome is not None and "ask-1" in outcome["inputRequests"]


def test_the_envelope_records_digests() -> None:
    round_ = Round(None, None)
    suspended(round_, "q", ListRoots())
    outcome = round_.outcome(None)
    assert outcome is not None
    assert outcome["round_state"]["asked"] == {"q": question_digest("roots/list", {})}
    assert outcome["round_state"]["r"] == 1
    assert not key_pending("an answer")
