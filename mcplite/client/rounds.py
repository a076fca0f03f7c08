"""The input-required loop of 2026-07-28, on the client: pure, with the sending and the answering passed in.

A server that needs input to finish ``tools/call``, ``prompts/get`` or ``resources/read`` answers
``{resultType: "input_required", inputRequests: {key: {method, params}}, requestState}``; the client answers each
input request (sampling, elicitation, roots: the callbacks it already has) and sends the request again, a new
JSON-RPC id each time, with ``inputResponses`` (the answers by key) and ``requestState`` exactly as received
(byte for byte, never parsed), and without ``requestState`` when none came (basic/patterns/mrtr.mdx;
CONFORMANCE-2026 §5.2). Rounds that carry only state wait a little before they retry (50 ms, doubling to
250 ms). A result without ``resultType`` is complete.

`run_rounds` runs on the caller's thread; it sends through ``send`` (which times each leg: time spent in the
callbacks counts against no timeout) and sleeps through ``sleep``, so tests run it without threads or clocks.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import time

from ..errors import METHOD_NOT_FOUND, RemoteProtocolError, RPCError

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Tuple

    Send = Callable[[Dict[str, Any]], Dict[str, Any]]
    Answer = Callable[[str, Dict[str, Any]], Dict[str, Any]]

__all__ = ["COMPLETE", "INPUT_REQUIRED", "DEFAULT_MAX_ROUNDS", "run_rounds"]

COMPLETE = "complete"
INPUT_REQUIRED = "input_required"
#: Retries one request may take before the client gives up on a server that keeps asking.
DEFAULT_MAX_ROUNDS = 10
#: The pause before retrying a round that asked nothing (state only): the first, and the most.
_FIRST_PAUSE, _LONGEST_PAUSE = 0.05, 0.25


def run_rounds(send: Send, params: Dict[str, Any], answer: Answer, *, max_rounds: int = DEFAULT_MAX_ROUNDS,
               sleep: Callable[[float], None] = time.sleep, manual: bool = False,
               final: Tuple[str, ...] = (COMPLETE,)) -> Dict[str, Any]:
    """Send a request and run its input-required rounds to the complete result.

    Args:
        send: sends the request with the given params (a new id each call) and returns its raw result.
        params: the first request's params (not modified).
        answer: ``(method, params) -> result`` for one input request; raises `RPCError` -32601 for a method it
            has no callback for.
        max_rounds: retries allowed before `RemoteProtocolError`.
        sleep: how to wait before a state-only retry.
        manual: return the first result as it came, ``input_required`` or not (the caller resumes later by
            passing ``inputResponses``/``requestState`` in ``params``).
        final: the ``resultType`` values that end the rounds (``"task"`` too, for a call that may become a
            task: the tasks extension).

    Raises:
        RemoteProtocolError: an unknown ``resultType``, a malformed ``input_required`` result, an input
            request of a kind the client never declared, or more than ``max_rounds`` rounds.
        Whatever ``send`` or a callback raises, unchanged: the flow stops there.
    """
    result = send(params)
    if manual:
        return result
    pause = _FIRST_PAUSE
    for _ in range(max_rounds):
        requests = _input_requests(result, final)
        if requests is None:
            return result
        retry = {key: value for key, value in params.items() if key not in ("inputResponses", "requestState")}
        if requests:
            retry["inputResponses"] = {key: _answer(answer, key, request) for key, request in requests.items()}
        else:  # only state: the server is working; ask again a little later
            sleep(pause)
            pause = min(pause * 2, _LONGEST_PAUSE)
        if "requestState" in result:
            retry["requestState"] = result["requestState"]
        result = send(retry)
    if _input_requests(result, final) is None:
        return result
    raise RemoteProtocolError(f"the server kept asking for input after {max_rounds} rounds")


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
