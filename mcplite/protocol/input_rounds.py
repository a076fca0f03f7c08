"""Replay: how a blocking ``ctx.elicit()`` works on 2026-07-28, where the server may not send requests.

On revision 2026-07-28 a server that needs input answers ``{resultType: "input_required", inputRequests,
requestState}``; the client asks its user or model and calls again with ``inputResponses`` and the same
``requestState`` (basic/patterns/mrtr.mdx). mcplite keeps the handler's blocking API by *replay*
(MODERN.md, "Round trips on the server"): each round runs the handler again from the top; a question already
answered returns its recorded answer, the first unanswered one unwinds the handler (`Suspend`), and the
answers so far ride in the sealed ``requestState`` (`request_state.seal_state`). Nothing is parked: no thread waits,
and a retry may land on another worker or after a restart.

This module is the pure bookkeeping of one execution of a handler (`Round`) and the question builders a
handler passes to ``ctx.ask``: no threads, sessions or I/O. A question is identified by its *key* (given, or
``ask-<n>`` for the n-th unnamed question of an execution) and pinned by its *digest* (`request_state.question_digest`
of its method and params): an answer is only ever taken for the very question it answers.

    round 1: ask(k) -> no answer -> pending {k: q}, Suspend -> input_required, state {asked: {k: d(q)}}
    round 2: ask(k) -> inputResponses[k] and asked[k] == d(q) -> checked, recorded in answers -> returned
             ask(j) -> ... (one more round per unanswered question; ``ask_many`` asks several in one)
    last:    the handler returns with nothing pending -> its value is the complete result
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import threading

from ..errors import INTERNAL_ERROR, INVALID_PARAMS, LocalProtocolError, RPCError
from . import methods
from .request_state import question_digest

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Union

    #: Checks an accepted elicitation's content against the requested schema; raises ValueError if it does not
    #: match (the schema layer's validator, passed in: protocol/ may not import it).
    ContentValidator = Callable[[Any, Dict[str, Any]], None]

__all__ = ["InputRequest", "Elicit", "ElicitURL", "Sample", "ListRoots", "InputRequired", "Suspend", "StartTask",
           "Round", "sampling_params", "check_answer", "AUTO_KEY_PREFIX"]

#: Keys of questions asked without one: ``ask-1``, ``ask-2``... in the order of the asks. Reserved.
AUTO_KEY_PREFIX = "ask-"
_ELICIT_ACTIONS = ("accept", "decline", "cancel")


# ---- the questions ----------------------------------------------------------------------------------------
class InputRequest:
    """One question to the client: a request the client would have answered before 2026-07-28.

    ``method`` and ``params`` are the request's; ``capability`` the client capability it needs.
    """

    __slots__ = ("method", "params", "capability")

    def __init__(self, method: str, params: Dict[str, Any], capability: str) -> None:
        self.method = method
        self.params = params
        self.capability = capability

    def to_request(self) -> Dict[str, Any]:
        """The wire form, an entry of ``inputRequests``."""
        return {"method": self.method, "params": self.params}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.params!r})"


class Elicit(InputRequest):
    """Ask the user to fill in a form: ``schema`` is a flat JSON Schema object (a dict)."""

    __slots__ = ()

    def __init__(self, message: str, schema: Dict[str, Any]) -> None:
        super().__init__(methods.ELICIT, {"message": message, "requestedSchema": schema}, "elicitation")


class ElicitURL(InputRequest):
    """Send the user to a URL (URL-mode elicitation); ``elicitation_id`` only before 2026-07-28."""

    __slots__ = ()

    def __init__(self, message: str, url: str, elicitation_id: Optional[str] = None) -> None:
        params: Dict[str, Any] = {"mode": "url", "message": message, "url": url}
        if elicitation_id is not None:
            params["elicitationId"] = elicitation_id
        super().__init__(methods.ELICIT, params, "elicitation")


class Sample(InputRequest):
    """Ask the client's model for a completion (``sampling/createMessage``); arguments as `sampling_params`."""

    __slots__ = ()

    def __init__(self, messages: Union[str, Sequence[Union[str, Dict[str, Any]]]], **options: Any) -> None:
        super().__init__(methods.SAMPLING_CREATE, sampling_params(messages, **options), "sampling")


class ListRoots(InputRequest):
    """Ask the client for its roots (``roots/list``)."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__(methods.ROOTS_LIST, {}, "roots")


def sampling_params(messages: Union[str, Sequence[Union[str, Dict[str, Any]]]], *, max_tokens: int = 1000,
                    system_prompt: Optional[str] = None, temperature: Optional[float] = None,
                    stop_sequences: Optional[List[str]] = None, model_preferences: Optional[Dict[str, Any]] = None,
                    include_context: Optional[str] = None, metadata: Optional[Dict[str, Any]] = None,
                    tools: Optional[List[Dict[str, Any]]] = None,
                    tool_choice: Union[str, Dict[str, Any], None] = None, **extra: Any) -> Dict[str, Any]:
    """The params of a ``sampling/createMessage``: strings become user text messages, ``tool_choice`` a mode."""
    if isinstance(messages, str):
        messages = [messages]
    params: Dict[str, Any] = {
        "messages": [{"role": "user", "content": {"type": "text", "text": item}} if isinstance(item, str) else item
                     for item in messages],
        "maxTokens": max_tokens}
    if isinstance(tool_choice, str):
        tool_choice = {"mode": tool_choice}
    for key, value in (("systemPrompt", system_prompt), ("temperature", temperature),
                       ("stopSequences", stop_sequences), ("modelPreferences", model_preferences),
                       ("includeContext", include_context), ("metadata", metadata), ("tools", tools),
                       ("toolChoice", tool_choice)):
        if value is not None:
            params[key] = value
    params.update(extra)
    return params


class InputRequired:
    """The explicit form: a handler returns the questions instead of asking them one by one.

    ``requests``: key -> `InputRequest` (or its wire dict). ``state``: any JSON value, handed back on the next
    round as ``ctx.request_state`` (sealed on 2026-07-28: signed, not encrypted, so no secrets in it).
    """

    __slots__ = ("requests", "state")

    def __init__(self, requests: Mapping[str, Union[InputRequest, Dict[str, Any]]], state: Any = None) -> None:
        self.requests = {key: request.to_request() if isinstance(request, InputRequest) else dict(request)
                         for key, request in requests.items()}
        self.state = state
        if not self.requests and state is None:
            raise ValueError("InputRequired needs questions, a state, or both")


class Suspend(BaseException):
    """Unwinds a handler whose question has no answer yet. A BaseException, so that a handler's ``except
    Exception`` cannot swallow it; a handler that swallows it anyway still ends the round as input_required."""


class StartTask(BaseException):
    """Unwinds a task tool's handler at ``ctx.start_task()`` while it gathers input before becoming a task
    (2026-07-28 extension): the server creates the task there and runs the handler again inside it, with the
    answers gathered so far (`Round.snapshot`). A BaseException for the same reason as `Suspend`."""


# ---- one execution of a handler ---------------------------------------------------------------------------
class Round:
    """The questions and answers of one execution of a handler on 2026-07-28.

    Args:
        round_state: what the request's ``requestState`` held (`request_state.open_state`), or None on the
            first round.
        input_responses: the request's ``inputResponses`` (as received; None when absent).
        validate_content: checks an accepted elicitation's content against its schema (ValueError if not).

    Raises:
        RPCError: -32602 when ``inputResponses`` is not an object of objects.
    """

    def __init__(self, round_state: Optional[Dict[str, Any]], input_responses: Any,
                 validate_content: Optional[ContentValidator] = None) -> None:
        if input_responses is not None and not isinstance(input_responses, dict):
            raise RPCError(INVALID_PARAMS, "Invalid params: inputResponses must be an object")
        state = round_state or {}
        #: Round number: 0 on the first call, then one more on each retry.
        self.number: int = state.get("r", 0)
        self._stateless = round_state is None
        self._asked: Dict[str, str] = dict(state.get("asked", {}))   # key -> digest of the question asked
        self._answers: Dict[str, Any] = dict(state.get("answers", {}))  # key -> its checked answer
        self._memo: Dict[str, Any] = dict(state.get("memo", {}))
        #: The explicit form's state from the last round (``ctx.request_state``), and this round's answers.
        self.user_state: Any = state.get("user")
        self.input_responses: Dict[str, Any] = input_responses or {}
        self._validate = validate_content
        self.pending: Dict[str, Dict[str, Any]] = {}  # key -> the question still to ask, in order
        self._pending_digests: Dict[str, str] = {}
        #: Keys whose question differs from the one asked last round (a handler that is not deterministic).
        self.changed_questions: List[str] = []
        self._asks = 0
        self._last_key = ""  # the key the last ask resolved (`lookup`)
        self._thread = threading.get_ident()  # asks unwind this thread's stack, so only it may ask

    # -- asking --
    def ask(self, key: Optional[str], request: InputRequest) -> Any:
        """The answer to ``request`` under ``key`` (None: the next automatic key), or raise `Suspend`."""
        resolved = self._resolve(key, request)
        if key_pending(resolved):
            raise Suspend()
        return resolved

    def ask_many(self, requests: Mapping[str, InputRequest]) -> Dict[str, Any]:
        """Every answer at once, or raise `Suspend` with all the unanswered questions pending (one round)."""
        answers = {key: self._resolve(key, request) for key, request in requests.items()}
        if any(key_pending(answer) for answer in answers.values()):
            raise Suspend()
        return answers

    def remember(self, key: str, compute: Callable[[], Any]) -> Any:
        """``compute()`` on the first round; the same (JSON) value on every later one."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    def _resolve(self, key: Optional[str], request: InputRequest) -> Any:
        if threading.get_ident() != self._thread:
            raise LocalProtocolError("a handler may only ask the client from its own thread: on 2026-07-28 an "
                                     "unanswered question unwinds the handler's stack")
        self._asks += 1
        if key is None:
            key = f"{AUTO_KEY_PREFIX}{self._asks}"
        elif key.startswith(AUTO_KEY_PREFIX):
            raise ValueError(f"question keys starting {AUTO_KEY_PREFIX!r} are reserved for unnamed questions")
        self._last_key = key
        digest = question_digest(request.method, request.params)
        asked = self._asked.get(key)
        if asked is not None and asked != digest:
            self.changed_questions.append(key)  # recorded answers belong to the old question: ask again
            self._answers.pop(key, None)
        elif key in self._answers:
            return self._answers[key]
        elif key in self.input_responses and (asked == digest or (asked is None and self._stateless)):
            # Asked last round (or, on a first call that already carries answers, asked now): take it.
            answer = self._check(request, self.input_responses[key])
            self._answers[key] = answer
            self._asked[key] = digest
            return answer
        self.pending[key] = request.to_request()
        self._pending_digests[key] = digest
        return _PENDING

    def _check(self, request: InputRequest, answer: Any) -> Any:
        return check_answer(request.method, request.params, answer, self._validate)

    def snapshot(self) -> Dict[str, Any]:
        """What this round knows (questions asked, answers, remembered values), as a round state a later
        `Round` starts from: how a handler that started a task finds its earlier answers in the task."""
        return {"r": self.number, "asked": dict(self._asked), "answers": dict(self._answers), "memo": dict(self._memo)}

    def lookup(self, key: Optional[str], request: InputRequest) -> Any:
        """Like `ask`, but an unanswered question is returned as the pending marker (`key_pending`) instead
        of suspending; with its key, so the caller can ask it another way: ``(key, answer or marker)``."""
        resolved = self._resolve(key, request)
        return self._last_key, resolved

    # -- the end of the round --
    def outcome(self, value: Any) -> Optional[Dict[str, Any]]:
        """After the handler returned ``value`` (None if it was suspended): None when the round is complete,
        else ``{"inputRequests", "round_state"}``: the questions, and the round state to seal as ``requestState``.

        Raises:
            RPCError: -32603 when an explicit `InputRequired` reuses a key of a blocking question.
        """
        requests = dict(self.pending)
        user = self.user_state
        if isinstance(value, InputRequired):
            clash = sorted(set(value.requests) & (set(requests) | set(self._asked)))
            if clash:
                raise RPCError(INTERNAL_ERROR, f"Internal error: InputRequired keys {clash} are also keys of "
                                               "questions the handler asked")
            requests.update(value.requests)
            user = value.state
        elif not requests:
            return None
        round_state: Dict[str, Any] = {"r": self.number + 1, "asked": {**self._asked, **self._pending_digests},
                                       "answers": self._answers, "memo": self._memo}
        if user is not None:
            round_state["user"] = user
        return {"inputRequests": requests, "round_state": round_state}


def check_answer(method: str, params: Dict[str, Any], answer: Any,
                 validate: Optional[ContentValidator] = None) -> Any:
    """``answer`` if it has the shape of an answer to the question ``{method, params}``, else -32602.

    An accepted elicitation's content is checked against the requested schema with ``validate``, when given.
    """
    problem = None
    if not isinstance(answer, dict):
        problem = "must be an object"
    elif method == methods.ELICIT:
        if answer.get("action") not in _ELICIT_ACTIONS:
            problem = "needs an action: accept, decline or cancel"
        elif answer["action"] == "accept" and "requestedSchema" in params and validate:
            try:
                validate(answer.get("content") or {}, params["requestedSchema"])
            except ValueError as exc:
                problem = f"content does not match the requested schema: {exc}"
    elif method == methods.SAMPLING_CREATE:
        if not isinstance(answer.get("content"), (dict, list)):
            problem = "needs content"
    elif method == methods.ROOTS_LIST and not isinstance(answer.get("roots"), list):
        problem = "needs a list of roots"
    if problem is not None:
        raise RPCError(INVALID_PARAMS, f"Invalid params: the answer to {method} {problem}")
    return answer


class _Pending:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<pending>"


_PENDING = _Pending()


def key_pending(answer: Any) -> bool:
    """Whether an answer `Round._resolve` gave is the marker of a question still unanswered."""
    return answer is _PENDING
