"""`Context`: what a handler can do about the request it is answering.

A handler that declares a parameter annotated `Context` gets one: who is calling, the request's cancel
event and ``_meta``, progress and log notifications tied to the request, and the requests a server may send
its client while it answers (sampling, elicitation, roots), which block until the client answers. Up to
2025-11-25 those are nested requests on the same connection; 2026-07-28 will answer them by replay.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

from ..errors import INVALID_PARAMS, CapabilityError, LocalProtocolError, RPCError
from ..protocol import methods
from ..protocol.capabilities import (
    missing_capability,
    missing_request_capability,
    sampling_tools_declared,
    url_elicitation_supported,
)
from ..protocol.envelope import missing_capabilities_error
from ..protocol.json_text import copied
from ..protocol.methods import LOGGING_LEVELS
from ..protocol.input_rounds import Elicit, ElicitURL, InputRequest, ListRoots, Round, Sample, StartTask
from ..schema.validation import ValidationError, validate
from ..session.pending import DEFAULT_TIMEOUT
from ..session.server import stateless_refusal
from .connections import check_log_level, log_params
from .coroutines import watch_cancel

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Union

    from ..protocol.versions import Revision
    from ..session import LazyEvent, RequestContext, ServerSession
    from ..transports import RequestInfo
    from .connections import Connection

__all__ = ["Context", "ELICIT_TIMEOUT"]

#: Elicitation waits for a person, so it gets longer than an ordinary request.
ELICIT_TIMEOUT = 600.0


class Context:
    """What a handler can do about the request it is answering. Declare a parameter of this type to get one.

    Attributes:
        request_id: the JSON-RPC id of the request.
        cancelled: set when the client cancels (or disconnects): ``is_set()`` and ``wait(timeout)`` as on a
            `threading.Event`; long handlers should check it and stop.
        session: the `ServerSession` of the connection.
        server: the `Server`.
    """

    def __init__(self, server: Any, connection: Connection, request: RequestContext,
                 round: Optional[Round] = None, prelude: bool = False) -> None:
        # Typed Any, not Server: the server package imports this module, and a type-only import back
        # would be an import cycle (tests/test_layers.py).
        self.server = server
        self.session: ServerSession = connection.session
        self._connection = connection
        self._request = request
        self.request_id = request.id
        #: What the transport knows of the caller (HTTP: headers, auth claims, session id); None on stdio.
        self.request_info: Optional[RequestInfo] = request.request_info
        # The input round this execution belongs to (a 2026-07-28 tools/call, prompts/get or resources/read, or
        # a handshake-era re-run of a handler that returned InputRequired); None elsewhere.
        self._round = round
        # Whether this execution gathers input before becoming a task (`start_task` unwinds it then).
        self._prelude = prelude

    # ---- about the caller -------------------------------------------------------------------------------
    # Each of these is the request's own on 2026-07-28 (from its `_meta`) and the connection's before; the dicts
    # are copies, as everything handed to a handler is (the connection's, or its envelope's, serve later requests).
    @property
    def revision(self) -> Revision:
        """The protocol revision of this request: a `versions.Revision` row (ask it, do not compare strings)."""
        revision = self._request.revision
        assert revision is not None  # requests reach handlers only once a revision is known
        return revision

    @property
    def protocol_version(self) -> str:
        return self.revision.version

    @property
    def client_info(self) -> Dict[str, Any]:
        envelope = self._request.envelope
        return copied(self.session.client_info if envelope is None else envelope.client_info or {})

    @property
    def client_capabilities(self) -> Dict[str, Any]:
        return copied(self._capabilities())

    def _capabilities(self) -> Dict[str, Any]:
        """The declared capabilities themselves, for this class's own reads: only the public property hands
        out a copy (it belongs to the caller; these are the connection's or the envelope's)."""
        envelope = self._request.envelope
        return self.session.peer_capabilities if envelope is None else envelope.client_capabilities

    @property
    def auth(self) -> Any:
        """What the HTTP server's ``authenticate`` hook returned for this request: for
        `mcplite.oauth.BearerAuth`, the verified token's claims. None without a hook, and on stdio."""
        return self.request_info.auth if self.request_info is not None else None

    @property
    def transport_info(self) -> Dict[str, Any]:
        """`request_info` as a dict (``headers``, ``auth``, ``session_id``, ``close_sse_stream``); empty on stdio.

        The older spelling, kept for handlers written against it: ``ctx.transport_info["close_sse_stream"]()``.
        """
        info = self.request_info
        if info is None:
            return {}
        return {"headers": info.headers, "auth": info.auth, "session_id": info.session_id,
                "close_sse_stream": info.close_sse_stream}

    @property
    def cancelled(self) -> LazyEvent:
        return self._request.cancelled

    @property
    def is_cancelled(self) -> bool:
        return self._request.cancelled.is_set()

    @property
    def meta(self) -> Dict[str, Any]:
        """The request's ``_meta``: a copy, nested values included, yours to change."""
        return copied(self._request.meta)

    @property
    def request_params(self) -> Dict[str, Any]:
        """The request's params as the client sent them (a copy): for a handler that passes a request on whole,
        such as a gateway's (a template's URI, a tool's arguments before any conversion)."""
        return copied(self._request.params)

    def on_cancel(self, callback: Callable[[], Any]) -> Callable[[], None]:
        """Call ``callback()`` when the client cancels this request (or its connection ends), on the thread that
        cancels it; at once when it already is. Returns a function that takes the callback back (call it when
        the work it would stop is done). For a handler that waits on something else than ``ctx.cancelled``,
        such as a request of its own to another server, which the callback cancels."""
        return watch_cancel(self._request, callback)  # (as an async handler's coroutine is watched)

    # ---- notifications tied to this request -------------------------------------------------------------
    def progress(self, progress: float, total: Optional[float] = None, message: Optional[str] = None) -> None:
        """Report progress, if the caller asked for it (otherwise this does nothing)."""
        token = self._request.progress_token
        if token is None:
            return
        params: Dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None and self.revision.annotations_audio_completions:
            params["message"] = message
        self.session.notify(methods.PROGRESS, params, related_request_id=self.request_id)

    def log(self, level: str, data: Any, logger: Optional[str] = None) -> None:
        """Send a log message to the client, unless its chosen level filters it out.

        Up to 2025-11-25 the level is the connection's (`logging/setLevel`; everything until one is set). From
        2026-07-28 it is the request's ``_meta`` ``logLevel``, and a request without one gets no log messages
        at all (server/utilities/logging.mdx).
        """
        check_log_level(level)
        envelope = self._request.envelope
        if envelope is not None:
            wanted = envelope.log_level
            if wanted is not None and LOGGING_LEVELS.index(level) >= LOGGING_LEVELS.index(wanted):
                self.session.notify(methods.LOG_MESSAGE, log_params(level, data, logger),
                                    related_request_id=self.request_id)
        elif self._connection.wants_log(level):
            self.session.notify(methods.LOG_MESSAGE, log_params(level, data, logger),
                                related_request_id=self.request_id)

    def debug(self, data: Any, logger: Optional[str] = None) -> None:
        self.log("debug", data, logger)

    def info(self, data: Any, logger: Optional[str] = None) -> None:
        self.log("info", data, logger)

    def warning(self, data: Any, logger: Optional[str] = None) -> None:
        self.log("warning", data, logger)

    def error(self, data: Any, logger: Optional[str] = None) -> None:
        self.log("error", data, logger)

    # ---- questions to the client -------------------------------------------------------------------------
    # Up to 2025-11-25 a question is a request to the client, and the call blocks until it answers. From
    # 2026-07-28 the server sends no requests: a question is part of an input-required round, and the handler
    # is replayed with the answers (protocol/input_rounds.py). The same calls work in both; see docs/servers.md.
    def sample(self, messages: Union[str, Sequence[Union[str, Dict[str, Any]]]], *, max_tokens: int = 1000,
               system_prompt: Optional[str] = None, temperature: Optional[float] = None,
               stop_sequences: Optional[List[str]] = None, model_preferences: Optional[Dict[str, Any]] = None,
               include_context: Optional[str] = None, metadata: Optional[Dict[str, Any]] = None,
               tools: Optional[List[Dict[str, Any]]] = None, tool_choice: Union[str, Dict[str, Any], None] = None,
               timeout: Optional[float] = ELICIT_TIMEOUT, key: Optional[str] = None, **extra: Any) -> Dict[str, Any]:
        """Ask the client's model for a completion (`sampling/createMessage`); returns its result.

        ``messages`` may be one string (a user message) or a list of strings and message dicts. ``tools``
        (2025-11-25) are tool definitions the model may call (``name``, ``description``, ``inputSchema``);
        ``tool_choice`` is "auto", "required", "none" or a ``toolChoice`` dict. ``key`` names the question in
        a 2026-07-28 input round (``inputRequests``); by default the n-th question is ``ask-<n>``.

        Raises:
            CapabilityError: the client did not declare sampling, or ``tools`` were given and it did not
                declare ``sampling.tools`` (the spec forbids sending them then). On 2026-07-28: `RPCError`
                -32021 naming the missing capability instead, answered to the request.
        """
        request = Sample(messages, max_tokens=max_tokens, system_prompt=system_prompt, temperature=temperature,
                         stop_sequences=stop_sequences, model_preferences=model_preferences,
                         include_context=include_context, metadata=metadata, tools=tools, tool_choice=tool_choice,
                         **extra)
        return self._ask_one(key, request, timeout)  # type: ignore[no-any-return]

    def elicit(self, message: str, schema: Any, *, timeout: Optional[float] = ELICIT_TIMEOUT,
               key: Optional[str] = None) -> Dict[str, Any]:
        """Ask the user for structured input (form mode); returns ``{"action", "content"?}``.

        ``schema`` is a JSON Schema object dict, or a dataclass / TypedDict whose schema is derived. A decline
        or cancel is an answer (``action``), not an error. On 2026-07-28 the handler runs again each round:
        ask first, act last (docs/servers.md). Accepted content that does not match the schema is -32602.
        """
        return self._ask_one(key, Elicit(message, _requested_schema(schema)), timeout)  # type: ignore[no-any-return]

    def elicit_url(self, message: str, url: str, elicitation_id: Optional[str] = None, *,
                   timeout: Optional[float] = ELICIT_TIMEOUT, key: Optional[str] = None) -> Dict[str, Any]:
        """Send the user to ``url`` (URL-mode elicitation, 2025-11-25 on); returns the client's answer.

        ``elicitation_id`` is sent on 2025-11-25 only (one is generated when not given); 2026-07-28 has none.
        """
        if not self.revision.input_required and elicitation_id is None:
            import uuid

            elicitation_id = uuid.uuid4().hex
        answer: Dict[str, Any] = self._ask_one(
            key, ElicitURL(message, url, None if self.revision.input_required else elicitation_id), timeout)
        return answer

    def list_roots(self, *, timeout: Optional[float] = DEFAULT_TIMEOUT, key: Optional[str] = None
                   ) -> List[Dict[str, Any]]:
        """The client's roots (`roots/list`)."""
        return self._ask_one(key, ListRoots(), timeout)["roots"]  # type: ignore[no-any-return]

    def ask(self, questions: Mapping[str, InputRequest], *, timeout: Optional[float] = ELICIT_TIMEOUT
            ) -> Dict[str, Any]:
        """Ask several questions at once: ``{key: Elicit(...) | ElicitURL(...) | Sample(...) | ListRoots()}``
        -> ``{key: the client's answer}`` (the raw results: a ``roots/list`` answer is ``{"roots": [...]}``).

        On 2026-07-28 everything still unanswered goes in one input round; before, the requests are sent
        together and their answers awaited together.
        """
        for request in questions.values():
            self._check_capability(request)
        if self._enveloped:
            return self._replay_round().ask_many(questions)
        pending = {key: self.session.send_request(request.method, self._legacy_params(request),
                                                  related_request_id=self.request_id)
                   for key, request in questions.items()}
        return {key: self._legacy_answer(questions[key], waiting.result(timeout))
                for key, waiting in pending.items()}

    def remember(self, key: str, compute: Callable[[], Any]) -> Any:
        """``compute()``, once: on 2026-07-28 its (JSON) value rides in the request's state, so every round of
        a replayed handler sees the same value (for ids, clocks, random choices a question depends on)."""
        if self._round is not None:
            return self._round.remember(key, compute)
        return compute()

    def can_elicit(self, mode: str = "form") -> bool:
        """Whether this request's client declared elicitation (in ``mode``: "form" or "url")."""
        elicitation = self._capabilities().get("elicitation")
        if not isinstance(elicitation, dict):
            return False
        if mode == "url":
            return "url" in elicitation and self.revision.url_elicitation
        return not elicitation or "form" in elicitation  # {} declares form mode (2025-11-25)

    def can_sample(self, tools: bool = False) -> bool:
        """Whether this request's client declared sampling (with tool use, when ``tools``)."""
        sampling = self._capabilities().get("sampling")
        return isinstance(sampling, dict) and (not tools or sampling_tools_declared(self._capabilities()))

    def can_list_roots(self) -> bool:
        """Whether this request's client declared roots."""
        return isinstance(self._capabilities().get("roots"), dict)

    @property
    def input_responses(self) -> Dict[str, Any]:
        """This round's answers, by key (the explicit form: a handler that returned `InputRequired`)."""
        return self._round.input_responses if self._round is not None else {}

    @property
    def request_state(self) -> Any:
        """The ``state`` of the `InputRequired` the handler returned last round (verified), or None."""
        return self._round.user_state if self._round is not None else None

    @property
    def round(self) -> int:
        """How many input rounds came before this execution of the handler (0 on the first call)."""
        return self._round.number if self._round is not None else 0

    # ---- tasks ------------------------------------------------------------------------------------------------
    @property
    def task_id(self) -> Optional[str]:
        """The id of the task this execution runs as, or None when it answers its request directly."""
        return None

    def start_task(self) -> None:
        """Go on as a task from here (a tool registered with ``task="optional"`` or ``"required"`` and
        ``ask_before_task=True``). Before this call the handler runs on the request, in input rounds like any
        2026-07-28 handler, so the questions it asks are answered before a task exists; at the call the server
        answers with the task, and the handler runs again inside it from the top with those answers (replay:
        ask first, act last). Does nothing when the call is not served as a 2026-07-28 task, or already is one.
        """
        if self._prelude:
            raise StartTask()

    # -- how a question is asked --
    @property
    def _enveloped(self) -> bool:
        return self.revision.input_required

    def _ask_one(self, key: Optional[str], request: InputRequest, timeout: Optional[float]) -> Any:
        if not self._enveloped and self.session.stateless:  # the true reason, before "did not declare"
            raise LocalProtocolError(stateless_refusal(request.method, self.revision.version))
        self._check_capability(request)
        if self._enveloped:
            return self._replay_round().ask(key, request)
        result = self.session.request(request.method, self._legacy_params(request), timeout=timeout,
                                      related_request_id=self.request_id)
        return self._legacy_answer(request, result)

    def _replay_round(self) -> Round:
        if self._round is None:
            raise LocalProtocolError(f"{self._request.method}: on 2026-07-28 only tools/call, prompts/get and "
                                     "resources/read may ask the client (mrtr.mdx)")
        return self._round

    def _check_capability(self, request: InputRequest) -> None:
        """Refuse a question the client cannot answer: -32021 on 2026-07-28, `CapabilityError` before."""
        missing = missing_capability(request.method, self._capabilities(), self.revision, peer_is_server=False)
        if missing is None:
            missing = missing_request_capability(request.method, request.params, self._capabilities(),
                                                 self.revision)
        if missing is None:
            return
        if self._enveloped:
            required: Dict[str, Any] = {}
            for name in reversed(missing.split(".")):
                required = {name: required}
            raise missing_capabilities_error(required)
        if missing == "sampling.tools":
            raise CapabilityError("the client did not declare sampling.tools: a sampling request may not carry tools")
        if missing == "elicitation.url":
            raise CapabilityError("the client does not support URL-mode elicitation")
        raise CapabilityError(f"{request.method}: the peer did not declare the {missing!r} capability")

    def _legacy_params(self, request: InputRequest) -> Dict[str, Any]:
        """A question's params as a request of this (handshake) revision sends them."""
        if request.method == methods.ELICIT and "mode" not in request.params and \
                url_elicitation_supported(self._capabilities(), self.revision):
            return {**request.params, "mode": "form"}  # a client that knows URL mode is told which
        return request.params

    def _legacy_answer(self, request: InputRequest, result: Dict[str, Any]) -> Dict[str, Any]:
        """Check an elicitation's accepted content against its schema (-32602 if it does not match)."""
        if request.method == methods.ELICIT and result.get("action") == "accept" \
                and isinstance(result.get("content"), dict) and "requestedSchema" in request.params:
            try:
                validate(result["content"], request.params["requestedSchema"])
            except ValidationError as exc:
                raise RPCError(INVALID_PARAMS, f"the elicited content does not match the schema: {exc}") from None
        return result


def _requested_schema(schema: Any) -> Dict[str, Any]:
    return schema if isinstance(schema, dict) else _flat_object_schema(schema)


def _flat_object_schema(cls: Any) -> Dict[str, Any]:
    """Elicitation schemas are flat objects with no $ref: inline the one definition the type makes."""
    from ..schema.functions import type_schema

    schema = type_schema(cls)
    defs = schema.pop("$defs", {})
    if "$ref" in schema:
        schema = defs[schema["$ref"].rsplit("/", 1)[-1]]
    return schema
