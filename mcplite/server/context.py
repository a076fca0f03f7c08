"""`Context`: what a handler can do about the request it is answering.

A handler that declares a parameter annotated `Context` gets one: who is calling, the request's cancel
event and ``_meta``, progress and log notifications tied to the request, and the requests a server may send
its client while it answers (sampling, elicitation, roots), which block until the client answers. Up to
2025-11-25 those are nested requests on the same connection; 2026-07-28 will answer them by replay.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

from .. import content as c
from ..errors import INVALID_PARAMS, CapabilityError, RPCError
from ..protocol import methods
from ..protocol.capabilities import missing_request_capability, url_elicitation_supported
from ..protocol.methods import LOGGING_LEVELS
from ..schema.validation import ValidationError, validate
from ..session.pending import DEFAULT_TIMEOUT
from .subscriptions import check_log_level, log_params

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Sequence, Union

    from ..protocol.versions import Revision
    from ..session import LazyEvent, RequestContext, ServerSession
    from ..transports import RequestInfo
    from .subscriptions import Connection

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

    def __init__(self, server: Any, connection: Connection, request: RequestContext) -> None:
        # Typed Any, not Server: the server package imports this module, and a type-only import back
        # would be an import cycle (tests/test_layers.py).
        self.server = server
        self.session: ServerSession = connection.session
        self._connection = connection
        self._request = request
        self.request_id = request.id
        #: What the transport knows of the caller (HTTP: headers, auth claims, session id); None on stdio.
        self.request_info: Optional[RequestInfo] = request.request_info

    # ---- about the caller -------------------------------------------------------------------------------
    # Each of these is the request's own on 2026-07-28 (from its `_meta`) and the connection's before.
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
        if envelope is None:
            return self.session.client_info
        return envelope.client_info or {}

    @property
    def client_capabilities(self) -> Dict[str, Any]:
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
        """The request's ``_meta``."""
        return self._request.meta

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

    # ---- requests to the client -------------------------------------------------------------------------
    def sample(self, messages: Union[str, Sequence[Union[str, Dict[str, Any]]]], *, max_tokens: int = 1000,
               system_prompt: Optional[str] = None, temperature: Optional[float] = None,
               stop_sequences: Optional[List[str]] = None, model_preferences: Optional[Dict[str, Any]] = None,
               include_context: Optional[str] = None, metadata: Optional[Dict[str, Any]] = None,
               tools: Optional[List[Dict[str, Any]]] = None, tool_choice: Union[str, Dict[str, Any], None] = None,
               timeout: Optional[float] = ELICIT_TIMEOUT, **extra: Any) -> Dict[str, Any]:
        """Ask the client's model for a completion (`sampling/createMessage`); returns its result.

        ``messages`` may be one string (a user message) or a list of strings and message dicts. ``tools``
        (2025-11-25) are tool definitions the model may call (``name``, ``description``, ``inputSchema``);
        ``tool_choice`` is "auto", "required", "none" or a ``toolChoice`` dict.

        Raises:
            CapabilityError: the client did not declare sampling, or ``tools`` were given and it did not
                declare ``sampling.tools`` (the spec forbids sending them then).
        """
        if isinstance(messages, str):
            messages = [messages]
        params: Dict[str, Any] = {"messages": [c.message(item) if isinstance(item, str) else item for item in messages],
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
        if missing_request_capability(methods.SAMPLING_CREATE, params, self.client_capabilities, self.session.revision):
            raise CapabilityError("the client did not declare sampling.tools: a sampling request may not carry tools")
        return self.session.request(methods.SAMPLING_CREATE, params, timeout=timeout,
                                    related_request_id=self.request_id)

    def elicit(self, message: str, schema: Any, *, timeout: Optional[float] = ELICIT_TIMEOUT) -> Dict[str, Any]:
        """Ask the user for structured input (form mode); returns ``{"action", "content"?}``.

        ``schema`` is a JSON Schema object dict, or a dataclass / TypedDict whose schema is derived.
        """
        requested = schema if isinstance(schema, dict) else _flat_object_schema(schema)
        params: Dict[str, Any] = {"message": message, "requestedSchema": requested}
        if self._url_elicitation():
            params["mode"] = "form"
        result = self.session.request(methods.ELICIT, params, timeout=timeout, related_request_id=self.request_id)
        if result.get("action") == "accept" and isinstance(result.get("content"), dict):
            try:
                validate(result["content"], requested)
            except ValidationError as exc:
                raise RPCError(INVALID_PARAMS, f"the elicited content does not match the schema: {exc}") from None
        return result

    def elicit_url(self, message: str, url: str, elicitation_id: str, *,
                   timeout: Optional[float] = ELICIT_TIMEOUT) -> Dict[str, Any]:
        """Send the user to ``url`` (URL-mode elicitation, 2025-11-25); returns the client's answer."""
        params = {"mode": "url", "message": message, "url": url, "elicitationId": elicitation_id}
        if missing_request_capability(methods.ELICIT, params, self.client_capabilities, self.session.revision):
            raise CapabilityError("the client does not support URL-mode elicitation")
        return self.session.request(methods.ELICIT, params, timeout=timeout, related_request_id=self.request_id)

    def _url_elicitation(self) -> bool:
        return url_elicitation_supported(self.client_capabilities, self.session.revision)

    def list_roots(self, *, timeout: Optional[float] = DEFAULT_TIMEOUT) -> List[Dict[str, Any]]:
        """The client's roots (`roots/list`)."""
        return self.session.request(methods.ROOTS_LIST, timeout=timeout, related_request_id=self.request_id)["roots"]


def _flat_object_schema(cls: Any) -> Dict[str, Any]:
    """Elicitation schemas are flat objects with no $ref: inline the one definition the type makes."""
    from ..schema.functions import type_schema

    schema = type_schema(cls)
    defs = schema.pop("$defs", {})
    if "$ref" in schema:
        schema = defs[schema["$ref"].rsplit("/", 1)[-1]]
    return schema
