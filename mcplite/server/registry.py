"""What a `Server` serves: tools, resources, prompts, completions, skills, notification handlers; the decorators.

`Registry` is the registration half of `Server` (which inherits it): one typed catalog per kind, the
decorators and ``add_*``/``remove_*`` methods that fill them, and the ``list_changed`` notification every
change sends to the connected clients. A registration reads the function once, with `schema.function_schema`
(imported by the first registration, not with the server), and keeps what it learned in an entry.

Catalogs are replaced, never mutated, under the registry's lock: the handlers, on any thread, take a
reference to the current dict and read it without a lock.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import os

from .._log import log
from .._once import once
from ..protocol import methods

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple, TypeVar, Union, overload

    from ..errors import RPCError
    from ..protocol import types as t
    from ..protocol.mcp_headers import ParamHeader
    from ..schema.functions import FunctionSchema
    from ..schema.uritemplate import URITemplate
    from ..session import ServerSession
    from .caching import ResourceHints
    from .skills import SkillIndex
    from .connections import Connections

    F = TypeVar("F", bound=Callable[..., Any])
    E = TypeVar("E")
    #: What a handler of a client notification is called with: the notification's params, its session.
    NotificationHandler = Callable[[Dict[str, Any], ServerSession], None]
    #: ("ref/prompt" or "ref/resource", the prompt's name or the template's URI, the argument's name).
    CompletionKey = Tuple[str, str, str]
    Completer = Callable[[str, Dict[str, Any]], Any]

__all__ = ["Registry"]

#: What a tool name is made of (the spec's naming rules, from 2025-11-25: 1 to 128 of these). Tested with a
#: string method rather than a regular expression: compiling one would cost every server's start-up ~0.2 ms.
_TOOL_NAME_CHARACTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-"


@once
def _validate() -> Callable[[Any, Any], None]:
    """`schema.validation.validate`, for a tool registered with a hand-written input schema: loaded by its first
    call (not when the registry is imported), then kept, so no import statement runs per call."""
    from ..schema.validation import validate

    return validate


def _follows_naming_rules(name: str) -> bool:
    """Whether ``name`` is a tool name as the spec asks: 1 to 128 letters, digits, ``_``, ``.`` or ``-``."""
    return 0 < len(name) <= 128 and not name.strip(_TOOL_NAME_CHARACTERS)


# ---- entries ------------------------------------------------------------------------------------------
class Entry:
    """A registered handler: its wire definition, the function, and what `function_schema` read from it."""

    __slots__ = ("definition", "fn", "schema")

    def __init__(self, definition: Dict[str, Any], fn: Callable[..., Any], schema: FunctionSchema) -> None:
        self.definition = definition  # the `Tool` / `Prompt` / `Resource` sent in the list result
        self.fn = fn
        self.schema = schema


class ToolEntry(Entry):
    """A tool; ``input_schema`` is a hand-written input schema that calls must also match (None: the signature's).

    ``param_headers`` maps the argument paths of the published input schema's ``x-mcp-header`` annotations
    to their `ParamHeader` (empty for most tools): computed once at registration, read on every call.
    ``task_support`` is how it may run as a task (``"forbidden"``, ``"optional"``, ``"required"``), and
    ``ask_before_task`` whether, as a 2026-07-28 task, it first gathers input on the request (`Context.start_task`).
    """

    __slots__ = ("input_schema", "param_headers", "task_support", "ask_before_task")

    def __init__(self, definition: Dict[str, Any], fn: Callable[..., Any], schema: FunctionSchema,
                 input_schema: Optional[Dict[str, Any]] = None,
                 param_headers: Optional[Dict[Tuple[str, ...], ParamHeader]] = None,
                 task_support: str = "forbidden", ask_before_task: bool = False) -> None:
        super().__init__(definition, fn, schema)
        self.input_schema = input_schema
        self.param_headers: Dict[Tuple[str, ...], ParamHeader] = param_headers or {}
        self.task_support = task_support
        self.ask_before_task = ask_before_task

    def check_param_headers(self, headers: Mapping[str, str], arguments: Any) -> Optional[RPCError]:
        """None when the ``Mcp-Param-*`` headers of a 2026-07-28 HTTP ``tools/call`` match ``arguments``, else
        the `-32020` error to answer with (HTTP 400): a header missing for a non-null argument, present
        without one, malformed (``=?base64?…?=`` is decoded strictly) or different (integers compare
        numerically). ``headers``: the request's, names in any case. A tool without annotations pays nothing.
        """
        if not self.param_headers:
            return None
        from ..protocol.mcp_headers import check_param_headers

        return check_param_headers(headers, self.param_headers, arguments)

    def bind(self, arguments: Dict[str, Any]) -> Dict[str, Any]:
        """The keyword arguments for a call: `FunctionSchema.bind`, after the hand-written schema's check.

        A null header parameter is taken as left out: null is how a client says "no header", and the
        schema of an optional header parameter is its plain type (`schema.from_types._with_header`).
        """
        if self.param_headers and None in arguments.values():
            arguments = {name: value for name, value in arguments.items()
                         if value is not None or (name,) not in self.param_headers}
        if self.input_schema is not None:
            _validate()(arguments, self.input_schema)
        return self.schema.bind(arguments)


class PromptEntry(Entry):
    __slots__ = ()


class ResourceEntry(Entry):
    """A resource (``template`` None, a `Resource` definition) or a template (a `ResourceTemplate`).

    ``cache_hints``: the ``(ttl_ms, cache_scope)`` it was registered with for ``resources/read`` (either may be
    None: the server's default), or None when it sets neither.
    """

    __slots__ = ("template", "cache_hints")

    def __init__(self, definition: Dict[str, Any], fn: Callable[..., Any], schema: FunctionSchema,
                 template: Optional[URITemplate], cache_hints: Optional[ResourceHints] = None) -> None:
        super().__init__(definition, fn, schema)
        self.template = template
        self.cache_hints = cache_hints


def _param_headers(tool: str, input_schema: Dict[str, Any]) -> Dict[Tuple[str, ...], ParamHeader]:
    """The checked ``x-mcp-header`` map of a tool's published input schema; `ValueError` naming the tool and the
    first invalid annotation. The module is loaded only for a schema that mentions the keyword at all."""
    if "x-mcp-header" not in repr(input_schema):
        return {}
    from ..protocol.mcp_headers import header_map

    try:
        return header_map(input_schema)
    except ValueError as exc:
        raise ValueError(f"tool {tool!r}: invalid x-mcp-header annotation: {exc}") from None


def _joined(prefix: str, path: str) -> str:
    """A skill's path in the skill namespace: ``prefix/path`` (either may be empty), without stray slashes."""
    return "/".join(part for part in (prefix.strip("/"), path.strip("/")) if part)


def drop_none(**fields: Any) -> Dict[str, Any]:
    return {key: value for key, value in fields.items() if value is not None}


def _added(catalog: Dict[str, E], key: str, entry: E, kind: str) -> Dict[str, E]:
    if key in catalog:
        raise ValueError(f"a {kind} named {key!r} is already registered")
    return {**catalog, key: entry}


def _without(catalog: Dict[str, E], key: str, kind: str) -> Dict[str, E]:
    if key not in catalog:
        raise KeyError(f"no {kind} named {key!r}")
    return {name: entry for name, entry in catalog.items() if name != key}


# ---- the registry -------------------------------------------------------------------------------------
class Registry:
    """The registration half of `Server`: typed catalogs, the decorators that fill them, list_changed."""

    def __init__(self, connections: Connections, page_size: Optional[int] = None) -> None:
        self._connections = connections  # who hears list_changed
        self.page_size = page_size  # items per page of a list result (None: everything in one page)
        import threading  # with the first registry built, not with the class: `Server` imports this module

        # Guards replacing the catalogs below (registrations may come from any thread); readers need none.
        self._lock = threading.Lock()
        self._tools: Dict[str, ToolEntry] = {}
        self._resources: Dict[str, ResourceEntry] = {}
        self._templates: Dict[str, ResourceEntry] = {}
        self._prompts: Dict[str, PromptEntry] = {}
        # Whether any resource or template sets its own cache hints: when none does (the usual case), a
        # resources/read needs no lookup for them. Rewritten with the catalogs, under the lock.
        self._cache_overrides = False
        self._completions: Dict[CompletionKey, Completer] = {}
        #: Notification method -> its handler, called with (params, session) on the session's dispatcher
        #: thread, in arrival order. Fill it with `notification`; assigning an entry also works. Every client
        #: notification but `notifications/cancelled` and the progress of the server's own requests (which
        #: the session consumes) reaches it, `notifications/initialized` included.
        self.notification_handlers: Dict[str, NotificationHandler] = {}
        # The skills served (the skills extension, `skills`): None until the first add_skill(s), and then the
        # extension is declared, even while no skill is left. Replaced whole under the lock, like the catalogs.
        self._skill_index: Optional[SkillIndex] = None
        #: Whether the skills extension declares ``directoryRead`` and serves ``resources/directory/read``
        #: for the skill directories (set it before clients connect).
        self.skills_directory_read = True

    # ---- tools ------------------------------------------------------------------------------------------
    if TYPE_CHECKING:  # the two ways to call it, for type checkers (at run time: the definition below)
        @overload
        def tool(self, fn: F) -> F: ...
        @overload
        def tool(self, fn: None = None, *, name: Optional[str] = None, title: Optional[str] = None,
                 description: Optional[str] = None, annotations: Optional[t.ToolAnnotations] = None,
                 icons: Optional[List[t.Icon]] = None, meta: Optional[Dict[str, Any]] = None,
                 input_schema: Optional[Dict[str, Any]] = None,
                 output_schema: Union[Dict[str, Any], bool, None] = None, task: str = "forbidden",
                 ask_before_task: bool = False) -> Callable[[F], F]: ...

    def tool(self, fn: Optional[F] = None, **options: Any) -> Any:
        """Register a tool: ``@server.tool`` or ``@server.tool(name=..., annotations=...)``.

        The input schema comes from the signature (``input_schema=`` publishes a hand-written one instead,
        and calls are validated against it), the description from the docstring, the output schema from
        the return annotation (``output_schema=False`` turns it off, a dict replaces it). A tool annotated
        to return content (``ImageContent``, ``List[ContentBlock]``, `ToolResult`) has no output schema.

        ``task`` says whether the tool may run as a task, a call that outlives its request (docs/servers.md):
        ``"forbidden"`` (the default: always answered directly), ``"optional"`` (a task when the client can
        take one) or ``"required"`` (only ever a task: refused to a client that cannot take one).
        ``ask_before_task=True``: on 2026-07-28 the handler first runs on the request and becomes a task where
        it calls `Context.start_task` (its questions before that are answered in input rounds).
        """
        if fn is None:
            return lambda f: self.tool(f, **options)
        self.add_tool(fn, **options)
        return fn

    def add_tool(self, fn: Callable[..., Any], *, name: Optional[str] = None, title: Optional[str] = None,
                 description: Optional[str] = None, annotations: Optional[t.ToolAnnotations] = None,
                 icons: Optional[List[t.Icon]] = None, meta: Optional[Dict[str, Any]] = None,
                 input_schema: Optional[Dict[str, Any]] = None,
                 output_schema: Union[Dict[str, Any], bool, None] = None, task: str = "forbidden",
                 ask_before_task: bool = False) -> None:
        """Register ``fn`` as a tool (see `tool`); clients are told the list changed."""
        from ..protocol.tasks import check_support
        from ..schema.functions import function_schema
        from .context import Context
        from .results import returns_content

        if input_schema is not None and input_schema.get("type") != "object":
            raise ValueError('a tool\'s input_schema must be a JSON Schema with "type": "object"')
        check_support(task)
        derive_output = output_schema is not False and not returns_content(fn)
        schema = function_schema(fn, skip_types=(Context,), output=derive_output)
        name = name or schema.name
        if not _follows_naming_rules(name):
            log.warning("tool name %r does not follow the spec's naming rules ([A-Za-z0-9_.-], 1-128)", name)
        published = schema.input_schema if input_schema is None else input_schema
        param_headers = _param_headers(name, published)
        definition: Dict[str, Any] = {"name": name, **drop_none(title=title),
                                      "description": description or schema.description or "",
                                      "inputSchema": published}
        if isinstance(output_schema, dict):
            definition["outputSchema"] = output_schema
        elif derive_output and schema.output_schema is not None:
            definition["outputSchema"] = schema.output_schema
        definition.update(drop_none(annotations=annotations, icons=icons, _meta=meta))
        entry = ToolEntry(definition, fn, schema, input_schema, param_headers, task, ask_before_task)
        with self._lock:
            self._tools = _added(self._tools, name, entry, "tool")
        self._connections.publish({"method": methods.TOOLS_LIST_CHANGED})

    def remove_tool(self, name: str) -> None:
        with self._lock:
            self._tools = _without(self._tools, name, "tool")
        self._connections.publish({"method": methods.TOOLS_LIST_CHANGED})

    # ---- resources --------------------------------------------------------------------------------------
    def resource(self, uri: str, *, name: Optional[str] = None, title: Optional[str] = None,
                 description: Optional[str] = None, mime_type: Optional[str] = None, size: Optional[int] = None,
                 annotations: Optional[t.Annotations] = None, icons: Optional[List[t.Icon]] = None,
                 meta: Optional[Dict[str, Any]] = None, ttl_ms: Optional[int] = None,
                 cache_scope: Optional[str] = None) -> Callable[[F], F]:
        """Register a resource (a fixed URI) or a resource template (an RFC 6570 URI template).

        The function returns ``str`` (text), ``bytes`` (a blob), a contents dict, or a list of those.
        A template's variables are passed as keyword arguments.

        ``ttl_ms`` and ``cache_scope`` set the caching hints of its ``resources/read`` results on revision
        2026-07-28 (how many milliseconds a client may reuse one; ``"public"`` or ``"private"``), in place of
        the server's ``cache_ttl_ms`` and ``cache_scope``; a template's apply to every URI read through it.
        """
        def register(fn: F) -> F:
            self.add_resource(fn, uri, name=name, title=title, description=description, mime_type=mime_type,
                              size=size, annotations=annotations, icons=icons, meta=meta, ttl_ms=ttl_ms,
                              cache_scope=cache_scope)
            return fn
        return register

    def add_resource(self, fn: Callable[..., Any], uri: str, *, name: Optional[str] = None,
                     title: Optional[str] = None, description: Optional[str] = None,
                     mime_type: Optional[str] = None, size: Optional[int] = None,
                     annotations: Optional[t.Annotations] = None, icons: Optional[List[t.Icon]] = None,
                     meta: Optional[Dict[str, Any]] = None, ttl_ms: Optional[int] = None,
                     cache_scope: Optional[str] = None) -> None:
        """Register ``fn`` as a resource or template (see `resource`); clients are told the list changed."""
        from ..schema.functions import function_schema
        from ..schema.uritemplate import URITemplate, is_template
        from .caching import check_scope, check_ttl_ms
        from .context import Context

        cache_hints: Optional[ResourceHints] = None
        if ttl_ms is not None or cache_scope is not None:  # checked here, before anything is registered
            cache_hints = (None if ttl_ms is None else check_ttl_ms(ttl_ms),
                           None if cache_scope is None else check_scope(cache_scope))
        schema = function_schema(fn, skip_types=(Context,), output=False)
        fields = drop_none(name=name or schema.name, title=title, description=description or schema.description,
                           mimeType=mime_type, annotations=annotations, icons=icons, _meta=meta)
        if is_template(uri):
            template = URITemplate(uri)
            unknown = {p.name for p in schema.parameters if p.required} - set(template.variables)
            if unknown:
                raise TypeError(f"{schema.name}: parameters {sorted(unknown)} are not variables of {uri!r}")
            entry = ResourceEntry({"uriTemplate": uri, **fields}, fn, schema, template, cache_hints)
            with self._lock:
                self._templates = _added(self._templates, uri, entry, "resource template")
                self._cache_overrides = self._cache_overrides or cache_hints is not None
        else:
            entry = ResourceEntry({"uri": uri, **fields, **drop_none(size=size)}, fn, schema, None, cache_hints)
            with self._lock:
                self._resources = _added(self._resources, uri, entry, "resource")
                self._cache_overrides = self._cache_overrides or cache_hints is not None
        self._connections.publish({"method": methods.RESOURCES_LIST_CHANGED})

    def remove_resource(self, uri: str) -> None:
        with self._lock:
            if uri in self._templates:
                self._templates = _without(self._templates, uri, "resource")
            else:
                self._resources = _without(self._resources, uri, "resource")
            self._cache_overrides = any(entry.cache_hints is not None for catalog in (self._resources, self._templates)
                                        for entry in catalog.values())
        self._connections.publish({"method": methods.RESOURCES_LIST_CHANGED})

    def _resource_cache_hints(self, uri: str) -> Optional[ResourceHints]:
        """The cache hints of the resource that serves a read of ``uri``: the resource of that URI, else the
        first template that matches it (as ``resources/read`` chooses); None when it sets none.

        `CachePolicy` asks this (see `Server`); no lookup at all while no resource sets hints.
        """
        if not self._cache_overrides:
            return None
        entry = self._resources.get(uri)
        if entry is not None:
            return entry.cache_hints
        for entry in self._templates.values():
            if entry.template is not None and entry.template.match(uri) is not None:
                return entry.cache_hints
        return None

    # ---- skills (the extension io.modelcontextprotocol/skills) -------------------------------------------
    def add_skills(self, root: Union[str, os.PathLike[str]], *, prefix: str = "", max_files: Optional[int] = None,
                   max_file_size: Optional[int] = None, max_total_size: Optional[int] = None) -> List[str]:
        """Serve every skill under the directory ``root``: each directory below it that holds a ``SKILL.md``
        (nested skills too), at ``skill://<prefix>/<its path under root>/SKILL.md``. Returns the URIs.

        Each skill is read whole now and served from memory (see `server.skills`): the limits
        (``max_files`` 512, ``max_file_size`` and ``max_total_size`` 16 MiB per skill) and the refusals
        (links out of the skill, frontmatter that is not valid, a name that differs from the directory's)
        raise `ValueError` before anything is served. Declares the skills extension in the capabilities.
        """
        from .skills import find_skills

        skills = [self._load_skill(directory, _joined(prefix, path), max_files, max_file_size, max_total_size)
                  for directory, path in find_skills(os.fspath(root))]
        return self._serve_skills(skills)

    def add_skill(self, directory: Union[str, os.PathLike[str]], *, prefix: str = "", max_files: Optional[int] = None,
                  max_file_size: Optional[int] = None, max_total_size: Optional[int] = None) -> str:
        """Serve the one skill in ``directory`` at ``skill://<prefix>/<its name>/SKILL.md``; returns that URI.
        As `add_skills` otherwise."""
        path = os.fspath(directory)
        name = os.path.basename(os.path.normpath(path))
        skill = self._load_skill(path, _joined(prefix, name), max_files, max_file_size, max_total_size)
        return self._serve_skills([skill])[0]

    def remove_skill(self, skill: str) -> None:
        """Stop serving a skill, named by its ``SKILL.md`` URI, its path or its name; `KeyError` if none."""
        with self._lock:
            index = self._skill_index
            if index is None:
                raise KeyError(f"no skill {skill!r}")
            self._skill_index = index.without(index.resolve(skill))
        self._connections.publish({"method": methods.RESOURCES_LIST_CHANGED})

    @staticmethod
    def _load_skill(directory: str, path: str, max_files: Optional[int], max_file_size: Optional[int],
                    max_total_size: Optional[int]) -> Any:
        from .skills import load_skill

        limits = drop_none(max_files=max_files, max_file_size=max_file_size, max_total_size=max_total_size)
        return load_skill(directory, path, **limits)

    def _serve_skills(self, skills: List[Any]) -> List[str]:
        from .skills import SkillIndex

        with self._lock:
            index = self._skill_index or SkillIndex()
            for skill in skills:
                index = index.with_skill(skill)
            self._skill_index = index
        self._connections.publish({"method": methods.RESOURCES_LIST_CHANGED})
        return [skill.uri for skill in skills]

    # ---- prompts ----------------------------------------------------------------------------------------
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
                   meta: Optional[Dict[str, Any]] = None,
                   arguments: Optional[List[t.PromptArgument]] = None) -> None:
        """Register ``fn`` as a prompt (see `prompt`). ``arguments`` publishes these `PromptArgument`s instead of
        the signature's (for a ``fn(**arguments)`` that takes whatever it is given: a gateway's)."""
        from ..schema.functions import function_schema
        from .context import Context

        schema = function_schema(fn, skip_types=(Context,), output=False)
        name = name or schema.name
        if arguments is None:
            arguments = [drop_none(name=p.name, description=p.description, required=p.required)  # type: ignore
                         for p in schema.parameters]
        definition = {"name": name, **drop_none(title=title), "description": description or schema.description or "",
                      "arguments": arguments, **drop_none(icons=icons, _meta=meta)}
        entry = PromptEntry(definition, fn, schema)
        with self._lock:
            self._prompts = _added(self._prompts, name, entry, "prompt")
        self._connections.publish({"method": methods.PROMPTS_LIST_CHANGED})

    def remove_prompt(self, name: str) -> None:
        with self._lock:
            self._prompts = _without(self._prompts, name, "prompt")
        self._connections.publish({"method": methods.PROMPTS_LIST_CHANGED})

    # ---- completions ------------------------------------------------------------------------------------
    def completion(self, *, argument: str, prompt: Optional[str] = None,
                   resource: Optional[str] = None) -> Callable[[F], F]:
        """Register completions for one argument of a prompt or one variable of a resource template.

        The function takes ``(value: str, arguments: dict)`` (the partial value and the arguments already
        chosen) and returns a list of strings, or a ``{"values", "total"?, "hasMore"?}`` dict.
        """
        if prompt is not None and resource is None:
            key: CompletionKey = ("ref/prompt", prompt, argument)
        elif resource is not None and prompt is None:
            key = ("ref/resource", resource, argument)
        else:
            raise TypeError("completion() needs exactly one of prompt= or resource=")

        def register(fn: F) -> F:
            with self._lock:
                self._completions = {**self._completions, key: fn}
            return fn
        return register

    # ---- notifications from the client ------------------------------------------------------------------
    def notification(self, method: str) -> Callable[[F], F]:
        """Register a handler for a notification the client sends: ``@server.notification("notifications/...")``.

        The handler is called with as many of ``(params, session)`` as it takes positional parameters: the
        notification's params dict, then the `ServerSession` it arrived on. It runs on that session's
        dispatcher thread, in arrival order, so a slow handler delays the connection's later notifications;
        what it raises is logged and dropped (a notification has no answer). See `notification_handlers`
        for which notifications reach it.
        """
        def register(fn: F) -> F:
            handler = _notification_handler(fn)
            with self._lock:
                if method in self.notification_handlers:
                    raise ValueError(f"a handler for notification {method!r} is already registered")
                self.notification_handlers = {**self.notification_handlers, method: handler}
            return fn
        return register


def _notification_handler(fn: Callable[..., Any]) -> NotificationHandler:
    """``fn`` called as a notification handler is, ``(params, session)``, whatever part of that it takes."""
    from ..schema.functions import _signature  # inspect-free for plain functions

    try:
        kinds = [kind for _, kind, _ in _signature(fn)]
    except (TypeError, ValueError):  # a callable whose signature cannot be read (some builtins): the full call
        return fn
    takes = 2 if "VAR_POSITIONAL" in kinds else min(2, sum(kind.startswith("POSITIONAL") for kind in kinds))
    if takes == 2:
        return fn
    if takes == 1:
        return lambda params, session: fn(params)
    return lambda params, session: fn()
