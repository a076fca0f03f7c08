"""The server's request handlers: the list methods, tools/call, resources/read, prompts/get, completion/complete.

Each handler takes the server's `Registry`, the `Connection` the request came on and its `RequestContext`,
checks the params, calls the registered function (with a `Context` when it asks for one) and returns the
result dict, or raises `RPCError`. Turning the function's value into its wire shape is `results`' job.
Loaded by the first request a server answers, not with the server.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import time

from .._log import log
from ..errors import INTERNAL_ERROR, INVALID_PARAMS, RemoteError, ResourceNotFound, RPCError
from ..protocol.request_state import open_state, seal_state
from ..protocol.input_rounds import InputRequired, Round, StartTask, Suspend
from ..protocol.tasks import EXTENSION_ID as TASKS_EXTENSION
from ..protocol.versions import ENVELOPE, revision
from ..schema.validation import ValidationError, validate
from .connections import uri_param
from .context import ELICIT_TIMEOUT, Context
from .coroutines import COROUTINE, run as run_coroutine
from .results import (
    completion_result,
    describe_exception,
    error_result,
    page,
    prompt_messages,
    resource_contents,
    tool_result,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Optional, Tuple

    from ..schema.functions import FunctionSchema
    from ..session import RequestContext
    from .registry import Registry, ResourceEntry, ToolEntry
    from .connections import Connection


def _call(server: Registry, connection: Connection, ctx: RequestContext, fn: Callable[..., Any],
          schema: FunctionSchema, kwargs: Dict[str, Any], round: Optional[Round] = None,
          prelude: bool = False) -> Any:
    """Call a registered function, giving each parameter annotated `Context` this request's."""
    for name in schema.injected:
        kwargs[name] = Context(server, connection, ctx, round, prelude)
    return _value(fn(**kwargs), ctx)


def _value(value: Any, ctx: RequestContext) -> Any:
    """What a handler returned, its coroutine run first when it is ``async def`` (`coroutines`)."""
    if value.__class__ is COROUTINE:
        return run_coroutine(value, ctx, _request_cancelled)
    return value


def _request_cancelled() -> BaseException:
    """What an ``async def`` handler cancelled by its client ends with: an error nobody is told (the session
    answers no cancelled request), as a plain handler that saw ``ctx.cancelled`` ends with anything."""
    return RPCError(INTERNAL_ERROR, "Request cancelled")


class _TaskStarted:
    """What `_call_with_rounds` returns for a handler that called ``ctx.start_task()``: what it knew by then."""

    __slots__ = ("answers",)

    def __init__(self, answers: Dict[str, Any]) -> None:
        self.answers = answers


#: How many times a handshake-era handler that returns `InputRequired` is re-run with the answers (TS parity).
LEGACY_INPUT_ROUNDS = 8


def _call_with_rounds(server: Registry, connection: Connection, ctx: RequestContext, fn: Callable[..., Any],
                      schema: FunctionSchema, kwargs: Dict[str, Any], target: str,
                      arguments: Dict[str, Any], prelude: bool = False) -> Tuple[Any, Optional[Dict[str, Any]]]:
    """Run a handler that may ask the client (tools/call, prompts/get, resources/read).

    Returns ``(value, None)`` when it completed, or ``(None, result)`` with the ``input_required`` result to
    answer (2026-07-28): the handler asked questions that have no answer yet, or returned `InputRequired`.
    On a handshake revision the questions were requests already answered, and an `InputRequired` return is
    served by sending its requests and re-running the handler with the answers (the legacy shim).
    ``prelude``: the handler gathers input before becoming a 2026-07-28 task; when it calls
    ``ctx.start_task()`` the value is a `_TaskStarted` with the answers it had.
    """
    revision = ctx.revision
    assert revision is not None
    if not revision.input_required:
        value = _call(server, connection, ctx, fn, schema, dict(kwargs))
        for _ in range(LEGACY_INPUT_ROUNDS):
            if not isinstance(value, InputRequired):
                return value, None
            answers = {key: connection.session.request(request["method"], request.get("params") or {},
                                                       timeout=ELICIT_TIMEOUT, related_request_id=ctx.id)
                       for key, request in value.requests.items()}
            round = Round({"user": value.state} if value.state is not None else {}, answers)
            value = _call(server, connection, ctx, fn, schema, dict(kwargs), round)
        if isinstance(value, InputRequired):
            raise RPCError(INTERNAL_ERROR, f"Internal error: {target} kept asking ({LEGACY_INPUT_ROUNDS} rounds)")
        return value, None
    token = ctx.params.get("requestState")
    responses = ctx.params.get("inputResponses")
    if token is None and responses is None and not schema.injected and not prelude:
        # A handler without a Context cannot ask: the common case costs no round (unless it returns the
        # explicit form, which then goes through one below).
        value = _value(fn(**kwargs), ctx)
        if not isinstance(value, InputRequired):
            return value, None
        round = Round(None, None)
    else:
        round_state = None if token is None else open_state(token, now=time.time(),
                                                            **_binding(server, ctx, target, arguments))
        round = Round(round_state, responses, validate)  # its ValidationError is a ValueError
        try:
            value = _call(server, connection, ctx, fn, schema, kwargs, round, prelude)
        except Suspend:
            value = None
        except StartTask:
            return _TaskStarted(round.snapshot()), None
    for key in round.changed_questions:
        log.warning("%s: question %r changed between rounds (the handler is not deterministic: build questions "
                    "from the arguments and earlier answers, or wrap values in ctx.remember); asked again",
                    target, key)
    outcome = round.outcome(value)
    if outcome is None:
        return value, None
    info: Any = server  # the Server
    state = seal_state(outcome["round_state"], now=time.time(), ttl=info.state_ttl,
                       **_binding(server, ctx, target, arguments))
    return None, {"resultType": "input_required", "inputRequests": outcome["inputRequests"], "requestState": state}


def _binding(server: Registry, ctx: RequestContext, target: str, arguments: Dict[str, Any]) -> Dict[str, Any]:
    """What a request's ``requestState`` is sealed with and bound to: the server's keys, codec and name, the
    request's method, target and arguments, and who is calling
    (`request_state.seal_state`, `request_state.open_state`)."""
    info: Any = server
    return {"keys": info.state_keys, "codec": info.state_codec, "method": ctx.method, "target": target,
            "arguments": arguments, "audience": info.name, "principal": request_owner(server, ctx)}


def request_owner(server: Registry, ctx: RequestContext) -> Optional[str]:
    """Who owns what this request makes (its tasks, its ``requestState``): `Server.owner_of` of what the
    ``authenticate`` hook returned. None when it is not authenticated; -32600 when it is but names nobody."""
    info: Any = server  # the Server: owner_of is its, not the Registry's
    auth = ctx.request_info.auth if ctx.request_info is not None else None
    principal: Optional[str] = info.owner_of(auth)
    return principal


def _arguments(ctx: RequestContext) -> Dict[str, Any]:
    arguments = ctx.params.get("arguments")
    if arguments is not None and not isinstance(arguments, dict):
        raise RPCError(INVALID_PARAMS, "Invalid params: arguments must be an object")
    return arguments or {}


# ---- discovery (2026-07-28) ----------------------------------------------------------------------------
def discover(server: Registry, connection: Connection, ctx: RequestContext) -> Dict[str, Any]:
    """`server/discover`: the envelope-era versions served, the capabilities and the instructions.

    Only the envelope-era versions: a client that finds none it speaks falls back to ``initialize`` (MODERN.md spec
    point 9); ``-32022`` lists both eras. The server's identity goes in ``_meta`` with every result.
    """
    info: Any = server
    capabilities = info.capabilities()
    # The tasks extension (SEP-2663) is declared here, never as 2025-11-25's ``tasks`` capability; like that
    # one, only by a server with a tool that may run as a task.
    if any(tool.task_support != "forbidden" for tool in server._tools.values()):
        capabilities["extensions"] = {**capabilities.get("extensions", {}), TASKS_EXTENSION: {}}
    result: Dict[str, Any] = {"supportedVersions": [v for v in info.supported_versions if revision(v).era == ENVELOPE],
                              "capabilities": capabilities}
    if info.instructions:
        result["instructions"] = info.instructions
    return result


# ---- tools ----------------------------------------------------------------------------------------------
def list_tools(server: Registry, connection: Connection, ctx: RequestContext) -> Dict[str, Any]:
    revision = ctx.revision
    if revision is not None and revision.core_tasks:  # 2025-11-25 tells which tools may run as tasks
        definitions = [tool.definition if tool.task_support == "forbidden" else
                       {**tool.definition, "execution": {**tool.definition.get("execution", {}),
                                                         "taskSupport": tool.task_support}}
                       for tool in server._tools.values()]
    else:
        definitions = [tool.definition for tool in server._tools.values()]
    return page("tools", definitions, ctx.params, server.page_size)


def call_tool(server: Registry, connection: Connection, ctx: RequestContext) -> Dict[str, Any]:
    name = ctx.params.get("name")
    tool = server._tools.get(name) if isinstance(name, str) else None
    if tool is None:
        raise RPCError(INVALID_PARAMS, f"Unknown tool: {name}")
    revision = ctx.revision
    assert revision is not None
    arguments = _arguments(ctx)
    if ctx.envelope is not None and ctx.request_info is not None:  # 2026-07-28 over HTTP: Mcp-Param-* headers
        mismatch = tool.check_param_headers(ctx.request_info.headers, arguments)
        if mismatch is not None:
            raise mismatch
    try:
        kwargs = tool.bind(arguments)
    except ValidationError as exc:
        if revision.tool_input_errors_as_results:
            return error_result(f"Invalid arguments for tool {name}: {exc}")
        raise RPCError(INVALID_PARAMS, f"Invalid arguments for tool {name}: {exc}") from None
    mode = "sync"
    if tool.task_support != "forbidden" or "task" in ctx.params:
        from ..protocol import tasks as states

        mode = states.execution_mode(tool.task_support, enveloped=ctx.envelope is not None,
                                     extension=ctx.envelope is not None
                                     and states.extension_declared(ctx.envelope.client_capabilities),
                                     core_tasks=revision.core_tasks, task_param=ctx.params.get("task"))
        if mode == states.CORE or (mode == states.EXTENSION and not tool.ask_before_task):
            return _start_task(server, connection, ctx, tool, kwargs, mode, None)
    try:
        value, asking = _call_with_rounds(server, connection, ctx, tool.fn, tool.schema, kwargs, str(name),
                                          arguments, prelude=mode == "extension")
        if asking is not None:
            return asking
        if isinstance(value, _TaskStarted):
            return _start_task(server, connection, ctx, tool, kwargs, mode, value.answers)
        result = tool_result(value, tool.definition, tool.schema)
    except RPCError as exc:
        if not isinstance(exc, RemoteError):
            raise  # the tool chose this JSON-RPC error on purpose
        # A nested request (sampling, elicitation) was refused: that is this tool failing.
        return error_result(str(exc))
    except Exception as exc:
        # The author's bug or the world's failure: the author needs the traceback, the model the type and
        # message ("KeyError: 'user_id'", where str() alone would say "'user_id'").
        log.warning("tool %s failed", name, exc_info=True)
        return error_result(describe_exception(exc))
    if not revision.structured_output:
        result.pop("structuredContent", None)
    return result


def _start_task(server: Registry, connection: Connection, ctx: RequestContext, tool: ToolEntry,
                kwargs: Dict[str, Any], mode: str, answers: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    """Create the task a ``tools/call`` is served as, and answer with it (server/tasks.py)."""
    from ..protocol import tasks as states

    info: Any = server
    if mode == states.CORE:
        task = ctx.params.get("task") or {}
        ttl = task.get("ttl")
        record = info.tasks.start(server, connection, ctx, tool, kwargs, states.CORE,
                                  ttl_ms=ttl if type(ttl) is int and ttl > 0 else None)
        return {"task": states.core_task(record)}
    record = info.tasks.start(server, connection, ctx, tool, kwargs, states.EXTENSION, answers)
    return states.create_task_result(record)


# ---- resources ------------------------------------------------------------------------------------------
def list_resources(server: Registry, connection: Connection, ctx: RequestContext) -> Dict[str, Any]:
    listed = [r.definition for r in server._resources.values()]
    skills = server._skill_index
    if skills is not None:  # each skill's SKILL.md, after the resources (its other files are not listed)
        listed += [skills.skills[uri].resource() for uri in sorted(skills.skills)]
    return page("resources", listed, ctx.params, server.page_size)


def list_templates(server: Registry, connection: Connection, ctx: RequestContext) -> Dict[str, Any]:
    return page("resourceTemplates", [r.definition for r in server._templates.values()], ctx.params,
                server.page_size)


def _find_resource(server: Registry, uri: str) -> Tuple[ResourceEntry, Dict[str, Any]]:
    """The resource named ``uri``, else the first template that matches it, with the template's variables."""
    entry = server._resources.get(uri)
    if entry is not None:
        return entry, {}
    for entry in server._templates.values():
        assert entry.template is not None
        variables = entry.template.match(uri)
        if variables is not None:
            return entry, variables
    raise ResourceNotFound(uri)


def read_resource(server: Registry, connection: Connection, ctx: RequestContext) -> Dict[str, Any]:
    uri = uri_param(ctx)
    revision = ctx.revision
    assert revision is not None
    skills = server._skill_index
    if skills is not None and uri in skills.files:  # a file of a skill (the skills extension)
        return {"contents": [skills.files[uri].contents()]}
    try:
        entry, variables = _find_resource(server, uri)
        try:
            kwargs = entry.schema.bind(variables, from_strings=True)
        except ValidationError as exc:
            raise ResourceNotFound(uri, f"Resource not found: {uri} ({exc})") from None
        try:
            value, asking = _call_with_rounds(server, connection, ctx, entry.fn, entry.schema, kwargs, uri, {})
        except (KeyError, FileNotFoundError):
            if entry.template is None:
                raise  # a fixed resource's own bug: an internal error
            # A template's lookup of what the URI names found nothing: the URI names nothing.
            raise ResourceNotFound(uri) from None
        if asking is not None:
            return asking
    except ResourceNotFound as exc:
        raise RPCError(revision.resource_not_found_code, exc.message, exc.data) from None
    return {"contents": resource_contents(value, uri, entry.definition.get("mimeType"))}


# ---- prompts --------------------------------------------------------------------------------------------
def list_prompts(server: Registry, connection: Connection, ctx: RequestContext) -> Dict[str, Any]:
    return page("prompts", [p.definition for p in server._prompts.values()], ctx.params, server.page_size)


def get_prompt(server: Registry, connection: Connection, ctx: RequestContext) -> Dict[str, Any]:
    name = ctx.params.get("name")
    prompt = server._prompts.get(name) if isinstance(name, str) else None
    if prompt is None:
        raise RPCError(INVALID_PARAMS, f"Unknown prompt: {name}")
    arguments = _arguments(ctx)
    try:
        kwargs = prompt.schema.bind(arguments, from_strings=True)
    except ValidationError as exc:
        raise RPCError(INVALID_PARAMS, f"Invalid arguments for prompt {name}: {exc}") from None
    value, asking = _call_with_rounds(server, connection, ctx, prompt.fn, prompt.schema, kwargs, str(name),
                                      arguments)
    if asking is not None:
        return asking
    if isinstance(value, dict) and "messages" in value:
        return value
    result: Dict[str, Any] = {"messages": prompt_messages(value)}
    if prompt.definition.get("description"):
        result["description"] = prompt.definition["description"]
    return result


# ---- completion ---------------------------------------------------------------------------------------
def complete(server: Registry, connection: Connection, ctx: RequestContext) -> Dict[str, Any]:
    ref = ctx.params.get("ref")
    argument = ctx.params.get("argument")
    if not isinstance(ref, dict) or not isinstance(argument, dict) or not isinstance(argument.get("name"), str):
        raise RPCError(INVALID_PARAMS, "Invalid params: completion needs ref and argument{name, value}")
    kind = ref.get("type")
    if kind not in ("ref/prompt", "ref/resource"):
        raise RPCError(INVALID_PARAMS, f"Invalid params: unknown ref type {kind!r}")
    field = "name" if kind == "ref/prompt" else "uri"
    target = ref.get(field)
    if not isinstance(target, str):  # a list where a name belongs would not even be a key to look up
        raise RPCError(INVALID_PARAMS, f"Invalid params: ref.{field} must be a string, not {target!r}")
    context = ctx.params.get("context")
    chosen = context.get("arguments") if isinstance(context, dict) else None
    if context is not None and (not isinstance(context, dict) or not isinstance(chosen or {}, dict)):
        raise RPCError(INVALID_PARAMS, "Invalid params: context must be {arguments: {name: value}}")
    if kind == "ref/prompt" and target not in server._prompts:
        raise RPCError(INVALID_PARAMS, f"Unknown prompt: {target}")
    if kind == "ref/resource" and target not in server._templates and target not in server._resources:
        raise RPCError(INVALID_PARAMS, f"Unknown resource template: {target}")
    completer = server._completions.get((kind, target, argument["name"]))
    values: Any = []
    if completer is not None:
        values = _value(completer(str(argument.get("value", "")), dict(chosen or {})), ctx)
    return completion_result(values)
