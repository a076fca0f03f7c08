"""`ClientCallbacks`: a test's answers to a server's questions, and the record of every question asked.

A server asks its client for input in the middle of a tool call: a completion from the client's model
(sampling), something from the user (elicitation), the client's roots. A test scripts the answers here, gives
`options` to the client, and afterwards checks what was asked with `assert_asked`::

    callbacks = ClientCallbacks(elicit={"username": "ada"}, sample="Paris")
    with Client(server, **callbacks.options()) as client:
        client.call_tool("sign_up", {})
    assert_asked(callbacks, "elicitation", text="your name")

The same answers serve every revision: up to 2025-11-25 the questions arrive as requests on the connection,
from 2026-07-28 inside an ``input_required`` result; either way they reach these callbacks.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import threading

from ..protocol import methods
from .assertions import _lines, show

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Mapping, NamedTuple, Optional, Sequence, Union

    #: An answer: a fixed one, or a function of the request's params that makes one.
    Answer = Union[str, Mapping[str, Any], Callable[[Dict[str, Any]], Any]]

    class AskedRequest(NamedTuple):
        """One request for input a server made: its method and params."""

        method: str
        params: Dict[str, Any]
else:
    import collections

    AskedRequest = collections.namedtuple("AskedRequest", "method params")

__all__ = ["ClientCallbacks", "AskedRequest", "assert_asked", "KINDS"]

#: The short names a test uses for each kind of request, and their methods.
KINDS = {"sampling": methods.SAMPLING_CREATE, "elicitation": methods.ELICIT, "roots": methods.ROOTS_LIST}

#: The model a sampling answer given as plain text claims to come from.
TEST_MODEL = "mcplite-test"


class ClientCallbacks:
    """Scripted answers to a server's requests for input, recording every request made.

    Args:
        sample: the answer to ``sampling/createMessage``: a text (the model's reply), a whole
            `CreateMessageResult`, or a function of the request's params returning either.
        elicit: the answer to ``elicitation/create``: the content the user accepts (a dict without
            ``action``), a whole `ElicitResult` (with ``action``), "decline" or "cancel", or a function of the
            request's params returning any of these.
        roots: the client's roots: URIs or `Root` dicts (or a function returning them).

    A kind with no answer is not declared to the server (no capability), so it cannot ask for it.
    ``requests`` lists the requests made, in order, as `AskedRequest` (method, params).
    """

    def __init__(self, *, sample: Optional[Answer] = None, elicit: Optional[Answer] = None,
                 roots: Union[None, Sequence[Union[str, Mapping[str, Any]]], Callable[[], Any]] = None) -> None:
        self._sample = sample
        self._elicit = elicit
        self._roots = roots
        self._lock = threading.Lock()  # the callbacks run on the session's threads, the checks on the test's
        self._requests: List[AskedRequest] = []

    @property
    def requests(self) -> List[AskedRequest]:
        """The requests for input the server made so far, in order (a copy)."""
        with self._lock:
            return list(self._requests)

    def asked(self, kind: str) -> List[Dict[str, Any]]:
        """The params of each request of one kind ("sampling", "elicitation", "roots", or a method name)."""
        method = _method_of(kind)
        return [request.params for request in self.requests if request.method == method]

    def clear(self) -> None:
        """Forget the requests recorded so far (the answers stay)."""
        with self._lock:
            self._requests.clear()

    def options(self) -> Dict[str, Any]:
        """The keyword arguments that give these callbacks to a `Client` (or ``Client.stdio``, ``mcp_client``)."""
        options: Dict[str, Any] = {}
        if self._sample is not None:
            options["sampling"] = self._answer_sampling
        if self._elicit is not None:
            options["elicitation"] = self._answer_elicitation
        if self._roots is not None:
            options["roots"] = self._answer_roots
        return options

    def _record(self, method: str, params: Dict[str, Any]) -> None:
        with self._lock:
            self._requests.append(AskedRequest(method, params))

    def _answer_sampling(self, params: Dict[str, Any]) -> Dict[str, Any]:
        self._record(methods.SAMPLING_CREATE, params)
        answer = self._sample(params) if callable(self._sample) else self._sample
        if isinstance(answer, str):
            return {"role": "assistant", "content": {"type": "text", "text": answer}, "model": TEST_MODEL,
                    "stopReason": "endTurn"}
        return dict(answer or {})

    def _answer_elicitation(self, params: Dict[str, Any]) -> Dict[str, Any]:
        self._record(methods.ELICIT, params)
        answer = self._elicit(params) if callable(self._elicit) else self._elicit
        if answer in ("decline", "cancel"):
            return {"action": answer}
        if isinstance(answer, str):
            raise ValueError(f"ClientCallbacks: an elicitation answer is a dict, 'decline' or 'cancel', not {answer!r}")
        answer = dict(answer or {})
        return answer if "action" in answer else {"action": "accept", "content": answer}

    def _answer_roots(self) -> List[Dict[str, Any]]:
        self._record(methods.ROOTS_LIST, {})
        roots = self._roots() if callable(self._roots) else self._roots
        return [{"uri": root} if isinstance(root, str) else dict(root) for root in roots or ()]


def assert_asked(callbacks: ClientCallbacks, kind: str, *, text: Optional[str] = None, times: Optional[int] = None,
                 **params: Any) -> Dict[str, Any]:
    """Check that the server asked the client for ``kind`` of input, and return the first such request's params.

    Args:
        callbacks: the `ClientCallbacks` the client was given.
        kind: "sampling", "elicitation" or "roots" (or the method's name).
        text: a part of the question's text: an elicitation's ``message``, or the text of a sampling request's
            messages.
        times: how many matching requests there must be (0: the server must not have asked).
        params: top-level params the request must have, with these values (``maxTokens=100``).
    """
    __tracebackhide__ = True
    method = _method_of(kind)
    requests = callbacks.requests
    matching = [request.params for request in requests if request.method == method
                and (text is None or text in _question_text(request.params))
                and all(request.params.get(key) == value for key, value in params.items())]
    wanted = " ".join([kind] + ([f"with text containing {text!r}"] if text is not None else [])
                      + [f"{key}={value!r}" for key, value in params.items()])
    if times is not None and len(matching) != times:
        raise AssertionError(_lines(f"expected the server to ask for {wanted} {_count(times)}, "
                                    f"but it asked {_count(len(matching))}", ("it asked", _listing(requests))))
    if not matching:
        if times == 0:
            return {}
        raise AssertionError(_lines(f"the server did not ask the client for {wanted}", ("it asked", _listing(requests))))
    return matching[0]


def _method_of(kind: str) -> str:
    if kind in KINDS:
        return KINDS[kind]
    if kind in KINDS.values():
        return kind
    raise ValueError(f"unknown kind of request {kind!r}: one of {', '.join(KINDS)} (or its method name)")


def _question_text(params: Mapping[str, Any]) -> str:
    """What a person would read of a request: an elicitation's message, a sampling request's texts."""
    texts = [params["message"]] if isinstance(params.get("message"), str) else []
    for message in params.get("messages") or ():
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else [content]:
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                texts.append(block["text"])
    return "\n".join(texts)


def _count(n: int) -> str:
    return {0: "never", 1: "once", 2: "twice"}.get(n, f"{n} times")


def _listing(requests: List[AskedRequest]) -> str:
    if not requests:
        return "nothing (no sampling, elicitation or roots request reached the client)"
    return "\n".join([f"{len(requests)} request(s):"] + [f"{number}. {request.method} {show(request.params, one_line=True)}"
                                                         for number, request in enumerate(requests, 1)])
