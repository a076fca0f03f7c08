"""The client's input-required rounds (client/input_rounds.py), table-tested without threads, sockets or clocks."""

import time
from typing import Any, Callable, Dict, List

import pytest

from mcplite.client.input_rounds import DEFAULT_MAX_ROUNDS, InputRounds
from mcplite.errors import METHOD_NOT_FOUND, RemoteProtocolError, RPCError

ELICIT = {"method": "elicitation/create", "params": {"message": "ok?", "requestedSchema": {"type": "object"}}}
DONE = {"content": [], "resultType": "complete"}


class Server:
    """Answers each send with the next canned result, and records the params it was sent."""

    def __init__(self, *results: Dict[str, Any]) -> None:
        self.results = list(results)
        self.sent: List[Dict[str, Any]] = []

    def __call__(self, params: Dict[str, Any]) -> Dict[str, Any]:
        self.sent.append(params)
        return self.results.pop(0)


def run_rounds(send: Callable[[Dict[str, Any]], Dict[str, Any]], params: Dict[str, Any],
               answer: Callable[[str, Dict[str, Any]], Dict[str, Any]], *, max_rounds: int = DEFAULT_MAX_ROUNDS,
               sleep: Callable[[float], None] = time.sleep, manual: bool = False) -> Dict[str, Any]:
    """Send and answer as `Client._run` does: the first request, then each one the rounds say, until they end."""
    result = send(params)
    if manual:
        return result
    rounds = InputRounds(params, answer, max_rounds)
    while True:
        step = rounds.after(result)
        if step is None:
            return result
        retry, pause = step
        if pause:
            sleep(pause)
        result = send(retry)


def asks(*keys: str, state: Any = None) -> Dict[str, Any]:
    result: Dict[str, Any] = {"resultType": "input_required", "inputRequests": {key: ELICIT for key in keys}}
    if state is not None:
        result["requestState"] = state
    return result


def yes(method: str, params: Dict[str, Any]) -> Dict[str, Any]:
    return {"action": "accept", "content": {"method": method}}


def test_each_round_is_answered_and_the_state_echoed_byte_for_byte() -> None:
    state = '{"nonce": "n1",  "x": 1}'  # odd spacing: it must not be parsed and re-serialised
    server = Server(asks("a", state=state), asks("b", state="s2"), DONE)
    assert run_rounds(server, {"name": "t", "arguments": {}}, yes) == DONE
    first, second, third = server.sent
    assert first == {"name": "t", "arguments": {}}
    assert second == {"name": "t", "arguments": {}, "requestState": state,
                      "inputResponses": {"a": {"action": "accept", "content": {"method": "elicitation/create"}}}}
    assert third["requestState"] == "s2" and list(third["inputResponses"]) == ["b"]


def test_no_state_key_when_none_came_and_nothing_carried_into_the_next_round() -> None:
    server = Server(asks("a"), asks("b"), DONE)
    run_rounds(server, {"name": "t"}, yes)
    assert "requestState" not in server.sent[1] and "requestState" not in server.sent[2]
    assert list(server.sent[2]["inputResponses"]) == ["b"]  # only this round's answers


def test_a_result_without_result_type_is_complete() -> None:
    server = Server({"content": []})
    assert run_rounds(server, {}, yes) == {"content": []}
    assert len(server.sent) == 1


def test_state_only_rounds_back_off() -> None:
    pauses: List[float] = []
    server = Server(*[{"resultType": "input_required", "requestState": "s"}] * 5, DONE)
    run_rounds(server, {}, yes, sleep=pauses.append)
    assert pauses == [0.05, 0.1, 0.2, 0.25, 0.25]


def test_a_server_that_keeps_asking_is_stopped() -> None:
    server = Server(*[asks("a")] * 4)
    with pytest.raises(RemoteProtocolError, match="3 rounds"):
        run_rounds(server, {}, yes, max_rounds=3)
    assert len(server.sent) == 4


def test_manual_mode_returns_the_first_result() -> None:
    server = Server(asks("a", state="s"))
    assert run_rounds(server, {}, yes, manual=True) == asks("a", state="s")


@pytest.mark.parametrize("result, message", [
    ({"resultType": "task"}, "unknown resultType 'task'"),
    ({"resultType": "input_required", "inputRequests": []}, "inputRequests must map"),
    ({"resultType": "input_required", "inputRequests": {"a": {"params": {}}}}, "inputRequests must map"),
    ({"resultType": "input_required", "inputRequests": {"a": ELICIT}, "requestState": 5}, "requestState must be"),
    ({"resultType": "input_required"}, "asked for nothing"),
    ("not an object", "must be an object"),
])
def test_malformed_results_are_protocol_errors(result: Any, message: str) -> None:
    with pytest.raises(RemoteProtocolError, match=message):
        run_rounds(Server(result), {}, yes)


def test_a_question_of_a_kind_never_declared_is_a_protocol_error() -> None:
    def nothing(method: str, params: Dict[str, Any]) -> Dict[str, Any]:
        raise RPCError(METHOD_NOT_FOUND, f"Method not found: {method}")

    with pytest.raises(RemoteProtocolError, match="declared no capability"):
        run_rounds(Server(asks("a")), {}, nothing)


def test_a_callback_exception_propagates_unchanged() -> None:
    def broken(method: str, params: Dict[str, Any]) -> Dict[str, Any]:
        raise ValueError("user went away")

    server = Server(asks("a"))
    with pytest.raises(ValueError, match="user went away"):
        run_rounds(server, {}, broken)
    assert len(server.sent) == 1
