"""The server's request handlers: the list methods, tools/call, resources/read, prompts/get, completion/complete.

Each handler takes the server's `Registry`, the `Connection` the request came on and its `RequestContext`,
checks the params, calls the registered function (with a `Context` when it asks for one) and returns the
result dict, or raises `RPCError`. Turning the function's value into its wire shape is `results`' job.
Loaded by the first request a server answers, not with the server.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

from .._log import log
from ..errors import INVALID_PARAMS, RemoteError, ResourceNotFound, RPCError
from ..protocol.versions import MODERN, revision
from ..schema.validation import ValidationError
from .context import Context
from .results import completion_result, error_result, page, prompt_messages, resource_contents, tool_result

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Tuple

    from ..schema.functions import FunctionSchema
    from ..session import RequestContext
    from .registry import Registry, ResourceEntry
    from .subscriptions import Connection


def _call(server: Registry, connection: Connection, ctx: RequestContext, fn: Callable[..., Any],
          schema: FunctionSchema, kwargs: Dict[str, Any]) -> Any:
    """Call a registered function, giving each parameter annotated `Context` this request's."""
    for name in schema.injected:
        kwargs[name] = Context(server, connection, ctx)
    return fn(**kwargs)


def _arguments(ctx: RequestContext) -> Dict[str, Any]:
    arguments = ctx.params.get("arguments")
    if arguments is not None and not isinstance(arguments, dict):
        raise RPCError(INVALID_PARAMS, "Invalid params: arguments must be an object")
    return arguments or {}


# ---- discovery (2026-07-28) ----------------------------------------------------------------------------
def discover(server: Registry, connection: Connection, ctx: RequestContext) -> Dict[str, Any]:
    """`server/discover`: the modern versions served, the capabilities and the instructions.

    Only the modern versions: a client that finds none it speaks falls back to ``initialize`` (MODERN.md spec
    point 9); ``-32022`` lists both eras. The server's identity goes in ``_meta`` with every result.
    """
    info: Any = server
    result: Dict[str, Any] = {"supportedVersions": [v for v in info.supported_versions if revision(v).era == MODERN],
                              "capabilities": info.capabilities()}
    if info.instructions:
        result["instructions"] = info.instructions
    return result


# ---- tools ----------------------------------------------------------------------------------------------
def list_tools(server: Registry, connection: Connection, ctx: RequestContext) -> Dict[str, Any]:
    return page("tools", [tool.definition for tool in server._tools.values()], ctx.params, server.page_size)


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
    try:
        value = _call(server, connection, ctx, tool.fn, tool.schema, kwargs)
        result = tool_result(value, tool.definition, tool.schema)
    except RPCError as exc:
        if not isinstance(exc, RemoteError):
            raise  # the tool chose this JSON-RPC error on purpose
        # A nested request (sampling, elicitation) was refused: that is this tool failing.
        return error_result(str(exc))
    except Exception as exc:
        log.debug("tool %s failed", name, exc_info=True)
        return error_result(str(exc) or type(exc).__name__)
    if not revision.structured_output:
        result.pop("structuredContent", None)
    return result


# ---- resources ------------------------------------------------------------------------------------------
def list_resources(server: Registry, connection: Connection, ctx: RequestContext) -> Dict[str, Any]:
    return page("resources", [r.definition for r in server._resources.values()], ctx.params, server.page_size)


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
    uri = ctx.params.get("uri")
    if not isinstance(uri, str):
        raise RPCError(INVALID_PARAMS, "Invalid params: uri must be a string")
    revision = ctx.revision
    assert revision is not None
    try:
        entry, variables = _find_resource(server, uri)
        try:
            kwargs = entry.schema.bind(variables, from_strings=True)
        except ValidationError as exc:
            raise ResourceNotFound(uri, f"Resource not found: {uri} ({exc})") from None
        value = _call(server, connection, ctx, entry.fn, entry.schema, kwargs)
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
    value = _call(server, connection, ctx, prompt.fn, prompt.schema, kwargs)
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
    target = ref.get("name") if kind == "ref/prompt" else ref.get("uri")
    if kind == "ref/prompt" and target not in server._prompts:
        raise RPCError(INVALID_PARAMS, f"Unknown prompt: {target}")
    if kind == "ref/resource" and target not in server._templates and target not in server._resources:
        raise RPCError(INVALID_PARAMS, f"Unknown resource template: {target}")
    if kind not in ("ref/prompt", "ref/resource"):
        raise RPCError(INVALID_PARAMS, f"Invalid params: unknown ref type {kind!r}")
    completer = server._completions.get((kind, target, argument["name"]))  # type: ignore[arg-type]
    values: Any = []
    if completer is not None:
        context = ctx.params.get("context") or {}
        values = completer(str(argument.get("value", "")), dict(context.get("arguments") or {}))
    return completion_result(values)
