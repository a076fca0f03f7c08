"""The input-required rounds of 2026-07-28, on the client: pure; `InputRounds` says what to send next and
`Client` sends it (no callback into the client: a call goes down once).

A server that needs input to finish ``tools/call``, ``prompts/get`` or ``resources/read`` answers
``{resultType: "input_required", inputRequests: {key: {method, params}}, requestState}``; the client answers each
input request (sampling, elicitation, roots: the callbacks it already has) and sends the request again, a new
JSON-RPC id each time, with ``inputResponses`` (the answers by key) and ``requestState`` exactly as received
(byte for byte, never parsed), and without ``requestState`` when none came (basic/patterns/mrtr.mdx;
CONFORMANCE-2026 §5.2). Rounds that carry only state wait a little before they retry (50 ms, doubling to
250 ms). A result without ``resultType`` is complete.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

from ..errors import METHOD_NOT_FOUND, RemoteProtocolError, RPCError

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Optional, Tuple

    Answer = Callable[[str, Dict[str, Any]], Dict[str, Any]]

__all__ = ["COMPLETE", "INPUT_REQUIRED", "DEFAULT_MAX_ROUNDS", "InputRounds"]

COMPLETE = "complete"
INPUT_REQUIRED = "input_required"
#: Retries one request may take before the client gives up on a server that keeps asking.
DEFAULT_MAX_ROUNDS = 10
#: The pause before retrying a round that asked nothing (state only): the first, and the most.
_FIRST_PAUSE, _LONGEST_PAUSE = 0.05, 0.25


class InputRounds:
    """The rounds of one request (``params``, not modified): `after` takes each result and says what to send
    next. ``answer``: ``(method, params) -> result`` for one input request, raising `RPCError` -32601 for a method
    it has no callback for; ``max_rounds``: retries allowed; ``final``: the ``resultType`` values that end the
    rounds (``"task"`` too, for a call that may become a task: the tasks extension)."""

    __slots__ = ("_params", "_answer", "_max_rounds", "_final", "_taken", "_pause")

    def __init__(self, params: Dict[str, Any], answer: Answer, max_rounds: int = DEFAULT_MAX_ROUNDS,
                 final: Tuple[str, ...] = (COMPLETE,)) -> None:
        self._params, self._answer, self._max_rounds, self._final = params, answer, max_rounds, final
        self._taken, self._pause = 0, _FIRST_PAUSE  # rounds taken; the pause before the next state-only retry

    def after(self, result: Any) -> Optional[Tuple[Dict[str, Any], float]]:
        """None when ``result`` ends the request; else the next request's params (the input requests answered,
        the state echoed) and the seconds to wait before sending it (0: at once). Raises `RemoteProtocolError`
        for an unknown ``resultType``, a malformed ``input_required`` result, an input request of a kind the
        client never declared, or more than ``max_rounds`` rounds; what a callback raises, unchanged."""
        requests = _input_requests(result, self._final)
        if requests is None:
            return None
        if self._taken == self._max_rounds:
            raise RemoteProtocolError(f"the server kept asking for input after {self._max_rounds} rounds")
        self._taken += 1
        retry = {key: value for key, value in self._params.items() if key not in ("inputResponses", "requestState")}
        pause = 0.0
        if requests:
            retry["inputResponses"] = {key: _answer(self._answer, key, request) for key, request in requests.items()}
        else:  # only state: the server is working; ask again a little later
            pause, self._pause = self._pause, min(self._pause * 2, _LONGEST_PAUSE)
        if "requestState" in result:
            retry["requestState"] = result["requestState"]
        return retry, pause


def _input_requests(result: Any, final: Tuple[str, ...] = (COMPLETE,)) -> Any:
    """None for a final result, else the ``inputRequests`` of an input-required one (``{}``: state only)."""
    if not isinstance(result, dict):
        raise RemoteProtocolError(f"a result must be an object, not {result!r}")
    kind = result.get("resultType", COMPLETE)
    if kind in final:
        return None
    if kind != INPUT_REQUIRED:
        raise RemoteProtocolError(f"unknown resultType {kind!r} (this client knows complete and input_required)")
    requests = result.get("inputRequests", {})
    if not isinstance(requests, dict) or not all(
            isinstance(request, dict) and isinstance(request.get("method"), str) for request in requests.values()):
        raise RemoteProtocolError(f"inputRequests must map keys to {{method, params}} objects, not {requests!r}")
    if "requestState" in result and not isinstance(result["requestState"], str):
        raise RemoteProtocolError("requestState must be a string")
    if not requests and "requestState" not in result:
        raise RemoteProtocolError("an input_required result asked for nothing and carried no requestState")
    return requests


def _answer(answer: Answer, key: str, request: Dict[str, Any]) -> Dict[str, Any]:
    params = request.get("params")
    try:
        return answer(request["method"], params if isinstance(params, dict) else {})
    except RPCError as refusal:
        if refusal.code == METHOD_NOT_FOUND:
            # Servers may ask only what the request's capabilities declared (mrtr.mdx): this one did not.
            raise RemoteProtocolError(f"the server asked {request['method']} (input {key!r}), which this client "
                                      "declared no capability for") from None
        raise
