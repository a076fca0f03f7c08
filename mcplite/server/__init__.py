"""`Server`: register tools, resources, prompts and completions with decorators; serve them.

A `Server` is the registry and the method table. Each connection gets its own `ServerSession` (from
`connect`), so one `Server` serves one stdio client or many HTTP clients at once. Handlers are plain
functions; their signatures become JSON Schemas (`schema.py`), and whatever they return is turned into the
wire shape here. A handler that declares a parameter annotated with `Context` gets one: progress, logging,
sampling, elicitation, roots and the cancel event of the request it is answering.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import json
import re
import threading

from .. import content as c
from .._log import log
from ..errors import INVALID_PARAMS, CapabilityError, RemoteError, ResourceNotFound, RPCError
from ..protocol import methods
from ..protocol.capabilities import missing_request_capability, url_elicitation_supported
from ..protocol.versions import HANDSHAKE_VERSIONS
from ..schema.validation import ValidationError, validate
from ..session import DEFAULT_TIMEOUT, LazyEvent, RequestContext, ServerSession
from ..transports import Transport

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see __init__)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, TypeVar, Union, overload

    from ..protocol import types as t
    from ..schema.functions import FunctionSchema
    from ..schema.uritemplate import URITemplate
    from ..transports import RequestInfo

    F = TypeVar("F", bound=Callable[..., Any])

# `schema` (which needs `typing`) and `uritemplate` are imported by the first registration that needs
# them: a process that imports Server only to, say, print its version does not pay for them.

__all__ = ["Server", "Context", "ToolResult"]

#: Elicitation waits for a person, so it gets longer than an ordinary request.
ELICIT_TIMEOUT = 600.0
_CONTENT_KEYS = {"text": "text", "image": "data", "audio": "data", "resource": "resource", "resource_link": "uri"}
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_.\-]{1,128}$")
_MAX_COMPLETIONS = 100  # the spec's cap on completion values per response
#: A structured result's text content, as json.dumps(value, ensure_ascii=False) writes it; json.dumps
#: would build a new encoder for every call because ensure_ascii is not its default.
_json_text = json.JSONEncoder(ensure_ascii=False).encode


class ToolResult(dict):  # type: ignore[type-arg]
    """A complete `CallToolResult`: return one from a tool to control every field yourself."""

    def __init__(self, content: Sequence[Any] = (), *, structured: Any = None, is_error: bool = False,
                 meta: Optional[Dict[str, Any]] = None) -> None:
        super().__init__(content=[_content_block(item) for item in content])
        if structured is not None:
            self["structuredContent"] = _to_jsonable(structured)
        if is_error:
            self["isError"] = True
        if meta:
            self["_meta"] = meta


class Context:
    """What a handler can do about the request it is answering. Declare a parameter of this type to get one.

    Attributes:
        request_id: the JSON-RPC id of the request.
        cancelled: set when the client cancels (or disconnects): ``is_set()`` and ``wait(timeout)`` as on a
            `threading.Event`; long handlers should check it and stop.
        session: the `ServerSession` of the connection.
        server: the `Server`.
    """

    def __init__(self, server: "Server", connection: "_Connection", request: RequestContext) -> None:
        self.server = server
        self.session: ServerSession = connection.session
        self._connection = connection
        self._request = request
        self.request_id = request.id
        #: What the transport knows of the caller (HTTP: headers, auth claims, session id); None on stdio.
        self.request_info: Optional[RequestInfo] = request.request_info

    # ---- about the caller -------------------------------------------------------------------------------
    @property
    def client_info(self) -> Dict[str, Any]:
        return self.session.client_info

    @property
    def client_capabilities(self) -> Dict[str, Any]:
        return self.session.peer_capabilities

    @property
    def protocol_version(self) -> str:
        assert self.session.revision is not None
        return self.session.revision.version

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
        if message is not None and self.session.revision and self.session.revision.annotations_audio_completions:
            params["message"] = message
        self.session.notify(methods.PROGRESS, params, related_request_id=self.request_id)

    def log(self, level: str, data: Any, logger: Optional[str] = None) -> None:
        """Send a log message to the client, unless its chosen level filters it out."""
        _check_log_level(level)
        if self._connection.wants_log(level):
            self.session.notify(methods.LOG_MESSAGE, _log_params(level, data, logger),
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


def _returns_content(fn: Callable[..., Any]) -> bool:
    """True when ``fn`` is annotated to return content blocks (or a `ToolResult`), not structured data."""
    import collections.abc
    import typing

    from ..protocol import types as t

    content_types = (t.TextContent, t.ImageContent, t.AudioContent, t.ResourceLink, t.EmbeddedResource)
    try:
        annotation = typing.get_type_hints(fn).get("return")
    except Exception:  # unresolvable hints: let function_schema report them
        return False
    if typing.get_origin(annotation) in (list, tuple, collections.abc.Sequence):
        args = typing.get_args(annotation)
        annotation = args[0] if args else None
    if typing.get_origin(annotation) is typing.Union:
        return all(arg in content_types for arg in typing.get_args(annotation))
    return annotation in content_types or annotation is ToolResult


def _with_input_schema(schema: FunctionSchema, input_schema: Dict[str, Any]) -> FunctionSchema:
    """``schema`` publishing and validating against a hand-written input schema."""
    if input_schema.get("type") != "object":
        raise ValueError('a tool\'s input_schema must be a JSON Schema with "type": "object"')
    import copy  # a rare path: most tools take their input schema from the signature
    custom = copy.copy(schema)
    custom.input_schema = input_schema
    original_bind = schema.bind

    def bind(arguments: Optional[Dict[str, Any]], *, from_strings: bool = False) -> Dict[str, Any]:
        validate(arguments or {}, input_schema)
        return original_bind(arguments, from_strings=from_strings)

    custom.bind = bind  # type: ignore[method-assign]
    return custom


def _flat_object_schema(cls: Any) -> Dict[str, Any]:
    """Elicitation schemas are flat objects with no $ref: inline the one definition the type makes."""
    from ..schema.functions import type_schema

    schema = type_schema(cls)
    defs = schema.pop("$defs", {})
    if "$ref" in schema:
        schema = defs[schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def _check_log_level(level: str) -> None:
    if level not in methods.LOGGING_LEVELS:
        raise ValueError(f"unknown log level {level!r}; use one of {', '.join(methods.LOGGING_LEVELS)}")


def _log_params(level: str, data: Any, logger: Optional[str]) -> Dict[str, Any]:
    params: Dict[str, Any] = {"level": level, "data": data}
    if logger is not None:
        params["logger"] = logger
    return params


# ---- registry entries ---------------------------------------------------------------------------------
class _Entry:
    """A registered handler: its wire definition, the function, and what `function_schema` read from it."""

    __slots__ = ("definition", "fn", "schema")

    def __init__(self, definition: Dict[str, Any], fn: Callable[..., Any], schema: FunctionSchema) -> None:
        self.definition = definition  # the `Tool` / `Prompt` sent in the list result
        self.fn = fn
        self.schema = schema


class _Tool(_Entry):
    __slots__ = ()


class _Prompt(_Entry):
    __slots__ = ()


class _Resource(_Entry):
    __slots__ = ("template",)

    def __init__(self, definition: Dict[str, Any], fn: Callable[..., Any], schema: FunctionSchema,
                 template: Optional[URITemplate]) -> None:
        super().__init__(definition, fn, schema)  # definition: a `Resource` or `ResourceTemplate`
        self.template = template


class _Connection:
    """The per-connection state the server keeps: the session, its log level and its subscriptions."""

    def __init__(self, session: ServerSession) -> None:
        self.session = session
        self.log_level: Optional[str] = None  # None: everything until the client sets a level
        # Guards subscriptions: subscribe requests and notify_resource_updated run on different threads.
        self.lock = threading.Lock()
        self.subscriptions: set = set()

    def wants_log(self, level: str) -> bool:
        rank = methods.LOGGING_LEVELS.index
        return self.log_level is None or rank(level) >= rank(self.log_level)


def _drop_none(**fields: Any) -> Dict[str, Any]:
    return {key: value for key, value in fields.items() if value is not None}


class Server:
    """An MCP server: a registry of tools, resources, prompts and completions.

    Args:
        name: the server's name in `serverInfo`.
        version: the server's version in `serverInfo`.
        title, description, website_url, icons: optional `serverInfo` fields.
        instructions: text the client may give its model about how to use this server.
        page_size: items per page in list results (None: everything in one page).
        max_workers: concurrent requests per connection.
        supported_versions: protocol revisions to accept, newest first (default: every handshake revision).
    """

    def __init__(self, name: str, version: str = "0.1.0", *, title: Optional[str] = None,
                 description: Optional[str] = None, website_url: Optional[str] = None,
                 icons: Optional[List[t.Icon]] = None, instructions: Optional[str] = None,
                 page_size: Optional[int] = None, max_workers: int = 16,
                 supported_versions: Sequence[str] = HANDSHAKE_VERSIONS) -> None:
        self.name = name
        self.version = version
        self.info: Dict[str, Any] = {"name": name, "version": version,
                                     **_drop_none(title=title, description=description, websiteUrl=website_url,
                                                  icons=icons)}
        self.instructions = instructions
        self.page_size = page_size
        self.max_workers = max_workers
        self.supported_versions = tuple(supported_versions)
        # Registries are replaced, never mutated, under _lock: readers take a reference and need no lock.
        self._lock = threading.Lock()
        self._tools: Dict[str, _Tool] = {}
        self._resources: Dict[str, _Resource] = {}
        self._templates: Dict[str, _Resource] = {}
        self._prompts: Dict[str, _Prompt] = {}
        self._completions: Dict[Tuple[str, str, str], Callable[..., Any]] = {}
        self._connections: Dict[ServerSession, _Connection] = {}
        self._methods: Dict[str, Callable[[_Connection, RequestContext], Dict[str, Any]]] = {
            methods.TOOLS_LIST: self._list_tools,
            methods.TOOLS_CALL: self._call_tool,
            methods.RESOURCES_LIST: self._list_resources,
            methods.RESOURCES_TEMPLATES_LIST: self._list_templates,
            methods.RESOURCES_READ: self._read_resource,
            methods.RESOURCES_SUBSCRIBE: self._subscribe,
            methods.RESOURCES_UNSUBSCRIBE: self._unsubscribe,
            methods.PROMPTS_LIST: self._list_prompts,
            methods.PROMPTS_GET: self._get_prompt,
            methods.COMPLETE: self._complete,
            methods.LOGGING_SET_LEVEL: self._set_level,
        }
        #: Called with (method, params, session) for client notifications other than the lifecycle ones.
        self.notification_handlers: Dict[str, Callable[[Dict[str, Any], ServerSession], None]] = {}

    # ---- registration -----------------------------------------------------------------------------------
    if TYPE_CHECKING:  # the two ways to call it, for type checkers (at run time: the definition below)
        @overload
        def tool(self, fn: F) -> F: ...
        @overload
        def tool(self, fn: None = None, *, name: Optional[str] = None, title: Optional[str] = None,
                 description: Optional[str] = None, annotations: Optional[t.ToolAnnotations] = None,
                 icons: Optional[List[t.Icon]] = None, meta: Optional[Dict[str, Any]] = None,
                 input_schema: Optional[Dict[str, Any]] = None,
                 output_schema: Union[Dict[str, Any], bool, None] = None) -> Callable[[F], F]: ...

    def tool(self, fn: Optional[F] = None, **options: Any) -> Any:
        """Register a tool: ``@server.tool`` or ``@server.tool(name=..., annotations=...)``.

        The input schema comes from the signature (``input_schema=`` publishes a hand-written one instead,
        and calls are validated against it), the description from the docstring, the output schema from
        the return annotation (``output_schema=False`` turns it off, a dict replaces it). A tool annotated
        to return content (``ImageContent``, ``List[ContentBlock]``, `ToolResult`) has no output schema.
        """
        if fn is None:
            return lambda f: self.tool(f, **options)
        self.add_tool(fn, **options)
        return fn

    def add_tool(self, fn: Callable[..., Any], *, name: Optional[str] = None, title: Optional[str] = None,
                 description: Optional[str] = None, annotations: Optional[t.ToolAnnotations] = None,
                 icons: Optional[List[t.Icon]] = None, meta: Optional[Dict[str, Any]] = None,
                 input_schema: Optional[Dict[str, Any]] = None,
                 output_schema: Union[Dict[str, Any], bool, None] = None) -> None:
        """Register ``fn`` as a tool (see `tool`); clients are told the list changed."""
        from ..schema.functions import function_schema

        derive_output = output_schema is not False and not _returns_content(fn)
        schema = function_schema(fn, skip_types=(Context,), output=derive_output)
        if input_schema is not None:
            schema = _with_input_schema(schema, input_schema)
        name = name or schema.name
        if not _TOOL_NAME.match(name):
            log.warning("tool name %r does not follow the spec's naming rules ([A-Za-z0-9_.-], 1-128)", name)
        definition: Dict[str, Any] = {"name": name, **_drop_none(title=title),
                                      "description": description or schema.description or "",
                                      "inputSchema": schema.input_schema}
        if isinstance(output_schema, dict):
            definition["outputSchema"] = output_schema
        elif derive_output and schema.output_schema is not None:
            definition["outputSchema"] = schema.output_schema
        definition.update(_drop_none(annotations=annotations, icons=icons, _meta=meta))
        self._register("_tools", name, _Tool(definition, fn, schema), "tool", methods.TOOLS_LIST_CHANGED)

    def remove_tool(self, name: str) -> None:
        self._unregister("_tools", name, "tool", methods.TOOLS_LIST_CHANGED)

    def resource(self, uri: str, *, name: Optional[str] = None, title: Optional[str] = None,
                 description: Optional[str] = None, mime_type: Optional[str] = None, size: Optional[int] = None,
                 annotations: Optional[t.Annotations] = None, icons: Optional[List[t.Icon]] = None,
                 meta: Optional[Dict[str, Any]] = None) -> Callable[[F], F]:
        """Register a resource (a fixed URI) or a resource template (an RFC 6570 URI template).

        The function returns ``str`` (text), ``bytes`` (a blob), a contents dict, or a list of those.
        A template's variables are passed as keyword arguments.
        """
        def register(fn: F) -> F:
            self.add_resource(fn, uri, name=name, title=title, description=description, mime_type=mime_type,
                              size=size, annotations=annotations, icons=icons, meta=meta)
            return fn
        return register

    def add_resource(self, fn: Callable[..., Any], uri: str, *, name: Optional[str] = None,
                     title: Optional[str] = None, description: Optional[str] = None,
                     mime_type: Optional[str] = None, size: Optional[int] = None,
                     annotations: Optional[t.Annotations] = None, icons: Optional[List[t.Icon]] = None,
                     meta: Optional[Dict[str, Any]] = None) -> None:
        from ..schema.functions import function_schema
        from ..schema.uritemplate import URITemplate, is_template

        schema = function_schema(fn, skip_types=(Context,), output=False)
        fields = _drop_none(name=name or schema.name, title=title, description=description or schema.description,
                            mimeType=mime_type, annotations=annotations, icons=icons, _meta=meta)
        if is_template(uri):
            template = URITemplate(uri)
            unknown = {p.name for p in schema.parameters if p.required} - set(template.variables)
            if unknown:
                raise TypeError(f"{schema.name}: parameters {sorted(unknown)} are not variables of {uri!r}")
            entry = _Resource({"uriTemplate": uri, **fields}, fn, schema, template)
            self._register("_templates", uri, entry, "resource template", methods.RESOURCES_LIST_CHANGED)
        else:
            entry = _Resource({"uri": uri, **fields, **_drop_none(size=size)}, fn, schema, None)
            self._register("_resources", uri, entry, "resource", methods.RESOURCES_LIST_CHANGED)

    def remove_resource(self, uri: str) -> None:
        attr = "_templates" if uri in self._templates else "_resources"
        self._unregister(attr, uri, "resource", methods.RESOURCES_LIST_CHANGED)

    if TYPE_CHECKING:
        @overload
        def prompt(self, fn: F) -> F: ...
        @overload
        def prompt(self, fn: None = None, *, name: Optional[str] = None, title: Optional[str] = None,
                   description: Optional[str] = None, icons: Optional[List[t.Icon]] = None,
                   meta: Optional[Dict[str, Any]] = None) -> Callable[[F], F]: ...

    def prompt(self, fn: Optional[F] = None, **options: Any) -> Any:
        """Register a prompt: ``@server.prompt`` or ``@server.prompt(name=...)``.

        Arguments come from the signature. The function returns a string (one user message), a message
        dict, a list of strings and messages, or a whole `GetPromptResult` dict.
        """
        if fn is None:
            return lambda f: self.prompt(f, **options)
        self.add_prompt(fn, **options)
        return fn

    def add_prompt(self, fn: Callable[..., Any], *, name: Optional[str] = None, title: Optional[str] = None,
                   description: Optional[str] = None, icons: Optional[List[t.Icon]] = None,
                   meta: Optional[Dict[str, Any]] = None) -> None:
        from ..schema.functions import function_schema

        schema = function_schema(fn, skip_types=(Context,), output=False)
        name = name or schema.name
        arguments = [_drop_none(name=p.name, description=p.description, required=p.required)
                     for p in schema.parameters]
        definition = {"name": name, **_drop_none(title=title), "description": description or schema.description or "",
                      "arguments": arguments, **_drop_none(icons=icons, _meta=meta)}
        self._register("_prompts", name, _Prompt(definition, fn, schema), "prompt", methods.PROMPTS_LIST_CHANGED)

    def remove_prompt(self, name: str) -> None:
        self._unregister("_prompts", name, "prompt", methods.PROMPTS_LIST_CHANGED)

    def completion(self, *, argument: str, prompt: Optional[str] = None,
                   resource: Optional[str] = None) -> Callable[[F], F]:
        """Register completions for one argument of a prompt or one variable of a resource template.

        The function takes ``(value: str, arguments: dict)`` (the partial value and the arguments already
        chosen) and returns a list of strings, or a ``{"values", "total"?, "hasMore"?}`` dict.
        """
        if (prompt is None) == (resource is None):
            raise TypeError("completion() needs exactly one of prompt= or resource=")
        key = ("ref/prompt", prompt, argument) if prompt is not None else ("ref/resource", resource, argument)

        def register(fn: F) -> F:
            with self._lock:
                self._completions = {**self._completions, key: fn}  # type: ignore[dict-item]
            return fn
        return register

    def _register(self, attr: str, key: str, entry: Any, kind: str, changed: str) -> None:
        with self._lock:
            registry = getattr(self, attr)
            if key in registry:
                raise ValueError(f"a {kind} named {key!r} is already registered")
            setattr(self, attr, {**registry, key: entry})
        self._notify_all(changed)

    def _unregister(self, attr: str, key: str, kind: str, changed: str) -> None:
        with self._lock:
            registry = dict(getattr(self, attr))
            if registry.pop(key, None) is None:
                raise KeyError(f"no {kind} named {key!r}")
            setattr(self, attr, registry)
        self._notify_all(changed)

    # ---- server-initiated notifications -----------------------------------------------------------------
    def _notify_all(self, method: str, params: Optional[Dict[str, Any]] = None,
                    only: Optional[Callable[[_Connection], bool]] = None) -> None:
        with self._lock:
            connections = list(self._connections.values())
        for connection in connections:
            if connection.session.initialized.is_set() and (only is None or only(connection)):
                try:
                    connection.session.notify(method, params)
                except Exception:  # one dead connection must not stop the others
                    log.debug("notification %s to a closed session dropped", method)

    def notify_resource_updated(self, uri: str) -> None:
        """Tell every client subscribed to ``uri`` that it changed (`notifications/resources/updated`)."""
        self._notify_all(methods.RESOURCE_UPDATED, {"uri": uri}, only=lambda conn: uri in conn.subscriptions)

    def log(self, level: str, data: Any, logger: Optional[str] = None) -> None:
        """Send a log message not tied to any request to every connected client that wants it."""
        _check_log_level(level)
        self._notify_all(methods.LOG_MESSAGE, _log_params(level, data, logger), only=lambda conn: conn.wants_log(level))

    # ---- connections ------------------------------------------------------------------------------------
    def capabilities(self) -> Dict[str, Any]:
        """The `ServerCapabilities` this server declares.

        All of them, whatever is registered right now: tools, resources and prompts can be added while a
        client is connected, and a capability cannot be declared after the handshake.
        """
        return {"tools": {"listChanged": True}, "resources": {"subscribe": True, "listChanged": True},
                "prompts": {"listChanged": True}, "logging": {}, "completions": {}}

    def _initialize_result(self, params: Dict[str, Any]) -> Dict[str, Any]:
        result: Dict[str, Any] = {"capabilities": self.capabilities(), "serverInfo": self.info}
        if self.instructions:
            result["instructions"] = self.instructions
        return result

    def create_session(self, transport: Transport, *, max_workers: Optional[int] = None) -> ServerSession:
        """A session serving this server over ``transport``, not yet started (transports call this)."""
        holder: List[_Connection] = []
        session: ServerSession
        session = ServerSession(
            transport, initialize_result=self._initialize_result, supported_versions=self.supported_versions,
            handle_request=lambda ctx: self._handle(holder[0], ctx),
            handle_notification=lambda method, params: self._notification(session, method, params),
            max_workers=max_workers or self.max_workers, name=f"mcplite-server-{self.name}")
        connection = _Connection(session)
        holder.append(connection)
        with self._lock:
            self._connections[session] = connection
        session.on_close(lambda: self._forget(session))
        return session

    def connect(self, transport: Transport, *, max_workers: Optional[int] = None) -> ServerSession:
        """Serve this server over ``transport``; returns the started session."""
        session = self.create_session(transport, max_workers=max_workers)
        session.start()
        return session

    def _forget(self, session: ServerSession) -> None:
        with self._lock:
            self._connections.pop(session, None)

    def run(self, http: Optional[str] = None, **options: Any) -> None:
        """Serve until the client goes away: stdio by default, or Streamable HTTP on ``"host:port"``."""
        if http is not None:
            from ..transports.http_server.stdlib import serve  # the HTTP server is only imported by those who use it
            serve(self, http, **options)
            return
        self.serve_stdio()

    def wsgi_app(self, **options: Any) -> Any:
        """This server as a PEP 3333 WSGI application (gunicorn, waitress, mod_wsgi); options as for HTTP."""
        from ..transports.http_server.wsgi import wsgi_app
        return wsgi_app(self, **options)

    def serve_stdio(self) -> None:
        """Serve this process's stdin/stdout until stdin ends (or Ctrl-C)."""
        from ..transports.stdio import StdioServerTransport
        session = self.connect(StdioServerTransport())
        try:
            # A wait with a timeout, repeated: on Windows a wait without one cannot be interrupted by Ctrl-C.
            while not session.closed.wait(3600):
                pass
        except KeyboardInterrupt:
            pass
        finally:
            session.close()

    # ---- method table -----------------------------------------------------------------------------------
    def _handle(self, connection: _Connection, ctx: RequestContext) -> Dict[str, Any]:
        handler = self._methods.get(ctx.method)
        if handler is None:
            raise RPCError(-32601, f"Method not found: {ctx.method}")
        return handler(connection, ctx)

    def _notification(self, session: ServerSession, method: str, params: Dict[str, Any]) -> None:
        handler = self.notification_handlers.get(method)
        if handler is not None:
            handler(params, session)

    def _context(self, connection: _Connection, ctx: RequestContext) -> Context:
        return Context(self, connection, ctx)

    def _call(self, connection: _Connection, ctx: RequestContext, fn: Callable[..., Any],
              schema: FunctionSchema, kwargs: Dict[str, Any]) -> Any:
        for name in schema.injected:
            kwargs[name] = self._context(connection, ctx)
        return fn(**kwargs)

    # tools
    def _list_tools(self, connection: _Connection, ctx: RequestContext) -> Dict[str, Any]:
        return self._page("tools", [tool.definition for tool in self._tools.values()], ctx.params)

    def _call_tool(self, connection: _Connection, ctx: RequestContext) -> Dict[str, Any]:
        name = ctx.params.get("name")
        tool = self._tools.get(name) if isinstance(name, str) else None
        if tool is None:
            raise RPCError(INVALID_PARAMS, f"Unknown tool: {name}")
        arguments = ctx.params.get("arguments")
        revision = connection.session.revision
        assert revision is not None
        if arguments is not None and not isinstance(arguments, dict):
            raise RPCError(INVALID_PARAMS, "Invalid params: arguments must be an object")
        try:
            kwargs = tool.schema.bind(arguments or {})
        except ValidationError as exc:
            if revision.tool_input_errors_as_results:
                return {"content": [c.text(f"Invalid arguments for tool {name}: {exc}")], "isError": True}
            raise RPCError(INVALID_PARAMS, f"Invalid arguments for tool {name}: {exc}") from None
        try:
            value = self._call(connection, ctx, tool.fn, tool.schema, kwargs)
            result = _tool_result(value, tool)
        except RPCError as exc:
            if not isinstance(exc, RemoteError):
                raise  # the tool chose this JSON-RPC error on purpose
            # A nested request (sampling, elicitation) was refused: that is this tool failing.
            return {"content": [c.text(str(exc))], "isError": True}
        except Exception as exc:
            log.debug("tool %s failed", name, exc_info=True)
            return {"content": [c.text(str(exc) or type(exc).__name__)], "isError": True}
        if not revision.structured_output:
            result.pop("structuredContent", None)
        return result

    # resources
    def _list_resources(self, connection: _Connection, ctx: RequestContext) -> Dict[str, Any]:
        return self._page("resources", [r.definition for r in self._resources.values()], ctx.params)

    def _list_templates(self, connection: _Connection, ctx: RequestContext) -> Dict[str, Any]:
        return self._page("resourceTemplates", [r.definition for r in self._templates.values()], ctx.params)

    def _find_resource(self, uri: str) -> Tuple[_Resource, Dict[str, Any]]:
        entry = self._resources.get(uri)
        if entry is not None:
            return entry, {}
        for entry in self._templates.values():
            assert entry.template is not None
            variables = entry.template.match(uri)
            if variables is not None:
                return entry, variables
        raise ResourceNotFound(uri)

    def _read_resource(self, connection: _Connection, ctx: RequestContext) -> Dict[str, Any]:
        uri = ctx.params.get("uri")
        if not isinstance(uri, str):
            raise RPCError(INVALID_PARAMS, "Invalid params: uri must be a string")
        revision = connection.session.revision
        assert revision is not None
        try:
            entry, variables = self._find_resource(uri)
            try:
                kwargs = entry.schema.bind(variables, from_strings=True)
            except ValidationError as exc:
                raise ResourceNotFound(uri, f"Resource not found: {uri} ({exc})") from None
            value = self._call(connection, ctx, entry.fn, entry.schema, kwargs)
        except ResourceNotFound as exc:
            raise RPCError(revision.resource_not_found_code, exc.message, exc.data) from None
        return {"contents": _resource_contents(value, uri, entry.definition.get("mimeType"))}

    def _subscribe(self, connection: _Connection, ctx: RequestContext) -> Dict[str, Any]:
        uri = self._subscription_uri(ctx)
        with connection.lock:
            connection.subscriptions.add(uri)
        return {}

    def _unsubscribe(self, connection: _Connection, ctx: RequestContext) -> Dict[str, Any]:
        uri = self._subscription_uri(ctx)
        with connection.lock:
            connection.subscriptions.discard(uri)
        return {}

    @staticmethod
    def _subscription_uri(ctx: RequestContext) -> str:
        uri = ctx.params.get("uri")
        if not isinstance(uri, str):
            raise RPCError(INVALID_PARAMS, "Invalid params: uri must be a string")
        return uri

    # prompts
    def _list_prompts(self, connection: _Connection, ctx: RequestContext) -> Dict[str, Any]:
        return self._page("prompts", [p.definition for p in self._prompts.values()], ctx.params)

    def _get_prompt(self, connection: _Connection, ctx: RequestContext) -> Dict[str, Any]:
        name = ctx.params.get("name")
        prompt = self._prompts.get(name) if isinstance(name, str) else None
        if prompt is None:
            raise RPCError(INVALID_PARAMS, f"Unknown prompt: {name}")
        arguments = ctx.params.get("arguments")
        if arguments is not None and not isinstance(arguments, dict):
            raise RPCError(INVALID_PARAMS, "Invalid params: arguments must be an object")
        try:
            kwargs = prompt.schema.bind(arguments or {}, from_strings=True)
        except ValidationError as exc:
            raise RPCError(INVALID_PARAMS, f"Invalid arguments for prompt {name}: {exc}") from None
        value = self._call(connection, ctx, prompt.fn, prompt.schema, kwargs)
        if isinstance(value, dict) and "messages" in value:
            return value
        result: Dict[str, Any] = {"messages": _prompt_messages(value)}
        if prompt.definition.get("description"):
            result["description"] = prompt.definition["description"]
        return result

    # completion and logging
    def _complete(self, connection: _Connection, ctx: RequestContext) -> Dict[str, Any]:
        ref = ctx.params.get("ref")
        argument = ctx.params.get("argument")
        if not isinstance(ref, dict) or not isinstance(argument, dict) or not isinstance(argument.get("name"), str):
            raise RPCError(INVALID_PARAMS, "Invalid params: completion needs ref and argument{name, value}")
        kind = ref.get("type")
        target = ref.get("name") if kind == "ref/prompt" else ref.get("uri")
        if kind == "ref/prompt" and target not in self._prompts:
            raise RPCError(INVALID_PARAMS, f"Unknown prompt: {target}")
        if kind == "ref/resource" and target not in self._templates and target not in self._resources:
            raise RPCError(INVALID_PARAMS, f"Unknown resource template: {target}")
        if kind not in ("ref/prompt", "ref/resource"):
            raise RPCError(INVALID_PARAMS, f"Invalid params: unknown ref type {kind!r}")
        completer = self._completions.get((kind, target, argument["name"]))  # type: ignore[arg-type]
        values: Any = []
        if completer is not None:
            context = ctx.params.get("context") or {}
            values = completer(str(argument.get("value", "")), dict(context.get("arguments") or {}))
        completion = dict(values) if isinstance(values, dict) else {"values": list(values)}
        if len(completion["values"]) > _MAX_COMPLETIONS:
            completion.setdefault("total", len(completion["values"]))
            completion["values"] = completion["values"][:_MAX_COMPLETIONS]
            completion["hasMore"] = True
        return {"completion": completion}

    def _set_level(self, connection: _Connection, ctx: RequestContext) -> Dict[str, Any]:
        level = ctx.params.get("level")
        if level not in methods.LOGGING_LEVELS:
            raise RPCError(INVALID_PARAMS, f"Invalid params: unknown log level {level!r}")
        connection.log_level = level
        return {}

    # pagination
    def _page(self, key: str, items: List[Dict[str, Any]], params: Dict[str, Any]) -> Dict[str, Any]:
        start = _decode_cursor(params.get("cursor"), len(items))
        if self.page_size is None:
            return {key: items[start:]}
        end = start + self.page_size
        page: Dict[str, Any] = {key: items[start:end]}
        if end < len(items):
            page["nextCursor"] = _encode_cursor(end)
        return page


_CURSOR_PREFIX = "mcplite:"


def _encode_cursor(offset: int) -> str:
    import base64  # here: only paginated lists need it

    return base64.urlsafe_b64encode(f"{_CURSOR_PREFIX}{offset}".encode()).decode("ascii")


def _decode_cursor(cursor: Any, length: int) -> int:
    """The offset a cursor stands for; -32602 for anything we did not issue."""
    if cursor is None:
        return 0
    import base64

    try:
        text = base64.urlsafe_b64decode(cursor.encode("ascii")).decode("ascii")
        if not text.startswith(_CURSOR_PREFIX):
            raise ValueError(text)
        offset = int(text[len(_CURSOR_PREFIX):])
        if not 0 <= offset <= length:
            raise ValueError(offset)
    except (AttributeError, ValueError, UnicodeError):
        raise RPCError(INVALID_PARAMS, f"Invalid params: invalid cursor {cursor!r}") from None
    return offset


# ---- handler results -> wire shapes -------------------------------------------------------------------
def _is_content_block(value: Any) -> bool:
    return isinstance(value, dict) and _CONTENT_KEYS.get(value.get("type")) in value  # type: ignore[arg-type]


def _content_block(item: Any) -> t.ContentBlock:
    if isinstance(item, str):
        return c.text(item)
    if _is_content_block(item):
        return item
    return c.text(_json_text(_to_jsonable(item)))


def _to_jsonable(value: Any) -> Any:
    """`schema.to_jsonable`, for the results that are neither text nor an output schema's structured value.

    Imported here rather than at the top, where it would load `schema` (and `typing`) with the server: by
    the time a handler returns, its registration has imported `schema` already, so this costs a lookup.
    """
    from ..schema.functions import to_jsonable

    return to_jsonable(value)


def _tool_result(value: Any, tool: _Tool) -> Dict[str, Any]:
    """Turn what a tool returned into a `CallToolResult`."""
    if isinstance(value, ToolResult):
        return dict(value)
    if "outputSchema" in tool.definition:
        schema = tool.schema
        # The JSON form of the value, once: it is the structured content (wrapped as {"result": ...} when
        # the value is not an object) and, as text, the content block that older clients read.
        structured = schema.structure_output(value)
        data = structured["result"] if schema.wraps_output else structured
        if schema.output_schema is None and not isinstance(structured, dict):
            # A hand-written output schema: the tool must return the object itself.
            raise TypeError(f"tool {tool.definition['name']} has an outputSchema, so it must return an "
                            f"object, not {type(value).__name__}")
        return {"content": [c.text(_json_text(data))], "structuredContent": structured}
    if value is None:
        return {"content": []}
    if isinstance(value, str) or _is_content_block(value):
        return {"content": [_content_block(value)]}
    if isinstance(value, (list, tuple)) and all(isinstance(i, str) or _is_content_block(i) for i in value):
        return {"content": [_content_block(item) for item in value]}
    data = _to_jsonable(value)
    result: Dict[str, Any] = {"content": [c.text(_json_text(data))]}
    if isinstance(data, dict):
        result["structuredContent"] = data
    return result


def _resource_contents(value: Any, uri: str, mime_type: Optional[str]) -> List[Dict[str, Any]]:
    items: Iterable[Any] = value if isinstance(value, list) else [value]
    contents = []
    for item in items:
        if isinstance(item, str):
            contents.append({"uri": uri, "mimeType": mime_type or "text/plain", "text": item})
        elif isinstance(item, (bytes, bytearray)):
            contents.append({"uri": uri, "mimeType": mime_type or "application/octet-stream",
                             "blob": c.b64(bytes(item))})
        elif isinstance(item, dict) and ("text" in item or "blob" in item):
            entry = {"uri": uri, **item}
            if mime_type and "mimeType" not in entry:
                entry["mimeType"] = mime_type
            contents.append(entry)
        else:
            raise TypeError(f"resource {uri}: cannot turn {type(item).__name__} into resource contents")
    return contents


def _prompt_messages(value: Any) -> List[Dict[str, Any]]:
    items = value if isinstance(value, (list, tuple)) else [value]
    messages: List[Any] = []
    for item in items:
        if isinstance(item, str) or _is_content_block(item):
            messages.append(c.message(item))
        elif isinstance(item, dict) and "role" in item and "content" in item:
            messages.append({**item, "content": _content_block(item["content"])})
        else:
            raise TypeError(f"a prompt returned {type(item).__name__}; return str, content or messages")
    return messages

