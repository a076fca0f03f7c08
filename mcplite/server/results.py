"""What a handler returned, turned into its wire shape: tool results, resource contents, prompt messages, pages.

Pure functions of their arguments (no session, no I/O): a tool's value with its registry entry becomes a
`CallToolResult`, a resource's value its `contents`, a prompt's value its `messages`. `ToolResult` is the
escape hatch, a result built field by field. List results are cut into pages here, with cursors that are
opaque to the client and checked when they come back.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up


from .. import content as c
from .._once import once
from ..errors import INVALID_PARAMS, RPCError
from ..protocol import json_text, jsonrpc, methods
from ..protocol.methods import SERVER_INFO_KEY
from .caching import CACHEABLE_METHODS

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence

    from ..protocol import types as t
    from ..schema.functions import FunctionSchema
    from ..session import RequestContext

__all__ = ["ToolResult"]

#: The field that makes a dict a content block of each type (a dict with "type": "text" and no "text" is not).
_CONTENT_KEYS = {"text": "text", "image": "data", "audio": "data", "resource": "resource", "resource_link": "uri"}
#: The spec's cap on completion values per response.
MAX_COMPLETIONS = 100
#: A structured result's text content, as json.dumps(value, ensure_ascii=False) writes it, with an encoder built
#: once (`json_text.encoder`) rather than one per call.
_json_text = json_text.encoder(ensure_ascii=False, separators=(", ", ": "), allow_nan=True)


class ToolResult(dict):  # type: ignore[type-arg]
    """A complete `CallToolResult`: return one from a tool to control every field yourself."""

    def __init__(self, content: Sequence[Any] = (), *, structured: Any = None, is_error: bool = False,
                 meta: Optional[Dict[str, Any]] = None) -> None:
        super().__init__(content=[content_block(item) for item in content])
        if structured is not None:
            self["structuredContent"] = _to_jsonable(structured)
        if is_error:
            self["isError"] = True
        if meta:
            self["_meta"] = meta


def returns_content(fn: Callable[..., Any]) -> bool:
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


# ---- content blocks -----------------------------------------------------------------------------------
def is_content_block(value: Any) -> bool:
    return isinstance(value, dict) and _CONTENT_KEYS.get(value.get("type")) in value  # type: ignore[arg-type]


def content_block(item: Any) -> t.ContentBlock:
    """A string as text, a content block as it is, anything else as its JSON text."""
    if isinstance(item, str):
        return c.text(item)
    if is_content_block(item):
        return item  # type: ignore[no-any-return]
    return c.text(_json_text(_to_jsonable(item)))


def describe_exception(exc: BaseException) -> str:
    """What a client is told of an exception a handler raised: its type and its message
    (``"KeyError: 'user_id'"``), or the type alone when it has no message."""
    message = str(exc)
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def error_result(message: str) -> Dict[str, Any]:
    """A `CallToolResult` reporting a failed tool call (``isError``), which the model gets to read."""
    return {"content": [c.text(message)], "isError": True}


@once
def _jsonable() -> Callable[[Any], Any]:
    """`schema.to_jsonable`, for the results that are neither text nor an output schema's structured value:
    loaded by its first use (by the time a handler returns, its registration has imported `schema`), not with
    the server (it would load `typing` too)."""
    from ..schema.functions import to_jsonable

    return to_jsonable


def _to_jsonable(value: Any) -> Any:
    return _jsonable()(value)


# ---- handler values -> results ------------------------------------------------------------------------
def tool_result(value: Any, definition: Dict[str, Any], schema: FunctionSchema) -> Dict[str, Any]:
    """Turn what a tool returned into a `CallToolResult`, given the tool's definition and schema."""
    if isinstance(value, ToolResult):
        return dict(value)
    if "outputSchema" in definition:
        # The JSON form of the value, once: it is the structured content (wrapped as {"result": ...} when
        # the value is not an object) and, as text, the content block that older clients read.
        structured = schema.structure_output(value)
        data = structured["result"] if schema.wraps_output else structured
        if schema.output_schema is None and not isinstance(structured, dict):
            # A hand-written output schema: the tool must return the object itself.
            raise TypeError(f"tool {definition['name']} has an outputSchema, so it must return an "
                            f"object, not {type(value).__name__}")
        return {"content": [c.text(_json_text(data))], "structuredContent": structured}
    if value is None:
        return {"content": []}
    if isinstance(value, str) or is_content_block(value):
        return {"content": [content_block(value)]}
    if isinstance(value, (list, tuple)) and all(isinstance(i, str) or is_content_block(i) for i in value):
        return {"content": [content_block(item) for item in value]}
    data = _to_jsonable(value)
    result: Dict[str, Any] = {"content": [c.text(_json_text(data))]}
    if isinstance(data, dict):
        result["structuredContent"] = data
    return result


def resource_contents(value: Any, uri: str, mime_type: Optional[str]) -> List[Dict[str, Any]]:
    """Turn what a resource returned into its `contents` (docs/servers.md has the table of what it may be).

    ``str`` is text, ``bytes`` a blob, a contents dict (``text`` or ``blob``) is taken as it is, and a list
    holds any of those. Under a JSON MIME type (``application/json``, ``...+json``) any other dict or list,
    and the values `schema.to_jsonable` writes (dataclasses, models, datetimes...), are the resource's data:
    one text entry, its JSON.
    """
    if mime_type is not None and _is_json_type(mime_type) and not isinstance(value, (str, bytes, bytearray)) \
            and not _is_contents(value) and not (isinstance(value, list) and value and all(map(_is_contents, value))):
        return [{"uri": uri, "mimeType": mime_type, "text": _json_text(_to_jsonable(value))}]
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
            raise TypeError(f"resource {uri}: cannot turn {type(item).__name__} into resource contents; return "
                            "str, bytes, a contents dict, or register it with mime_type=\"application/json\" "
                            "to send a dict or list as JSON")
    return contents


#: The members of a `ResourceContents` dict: a dict with ``text`` or ``blob`` and no other member is contents
#: even under a JSON MIME type (anything else there is the resource's data).
_CONTENTS_MEMBERS = frozenset({"uri", "mimeType", "text", "blob", "_meta"})


def _is_contents(item: Any) -> bool:
    return isinstance(item, (str, bytes, bytearray)) or (
        isinstance(item, dict) and ("text" in item or "blob" in item) and item.keys() <= _CONTENTS_MEMBERS)


def _is_json_type(mime_type: str) -> bool:
    """Whether a MIME type is JSON: ``application/json``, or any ``.../...+json`` (parameters ignored)."""
    essence = mime_type.split(";", 1)[0].strip().lower()
    return essence == "application/json" or essence.endswith("+json")


def prompt_messages(value: Any) -> List[Dict[str, Any]]:
    """Turn what a prompt returned (strings, content, messages, or a list of those) into its `messages`."""
    items = value if isinstance(value, (list, tuple)) else [value]
    messages: List[Any] = []
    for item in items:
        if isinstance(item, str) or is_content_block(item):
            messages.append(c.message(item))
        elif isinstance(item, dict) and "role" in item and "content" in item:
            messages.append({**item, "content": content_block(item["content"])})
        else:
            raise TypeError(f"a prompt returned {type(item).__name__}; return str, content or messages")
    return messages


def completion_result(values: Any) -> Dict[str, Any]:
    """A completer's list (or ``{"values", ...}`` dict) as a `CompleteResult`, cut to the spec's cap."""
    completion: Dict[str, Any] = dict(values) if isinstance(values, dict) else {"values": list(values)}
    if len(completion["values"]) > MAX_COMPLETIONS:
        completion.setdefault("total", len(completion["values"]))
        completion["values"] = completion["values"][:MAX_COMPLETIONS]
        completion["hasMore"] = True
    return {"completion": completion}


# ---- the shape of a result per revision --------------------------------------------------------------
#: What 2026-07-28 adds to results, removed from results of older revisions (a handler may set them).
_ENVELOPE_ERA_FIELDS = ("resultType", "ttlMs", "cacheScope")


def shape_result(result: Dict[str, Any], ctx: RequestContext, server: Any) -> Dict[str, Any]:
    """A handler's result as a request of a revision with ``result_type`` (2026-07-28) receives it.

    ``resultType`` ("complete" unless the handler set another), the server's ``Implementation`` in ``_meta``
    (``io.modelcontextprotocol/serverInfo``) and, on a complete result of a cacheable method, the server's
    ``ttlMs`` and ``cacheScope`` unless the handler set its own. A copy: the handler may have returned a
    dict of its own (a whole `GetPromptResult`), which must not change under it.
    """
    method = ctx.method
    shaped = dict(result)
    result_type = shaped.setdefault("resultType", "complete")
    meta = shaped.get("_meta")
    shaped["_meta"] = {**meta, SERVER_INFO_KEY: server.info} if isinstance(meta, dict) else \
        {SERVER_INFO_KEY: server.info}
    if method in CACHEABLE_METHODS and result_type == "complete" and "ttlMs" not in shaped:
        uri = ctx.params.get("uri") if method == methods.RESOURCES_READ else None
        hints = server.cache.hints(method, uri)
        if hints is not None:
            shaped["ttlMs"], shaped["cacheScope"] = hints
    return shaped


class CompleteMembers:
    """The members every complete 2026-07-28 result of a server ends with (``resultType`` and the server's
    ``Implementation`` in ``_meta``) and their JSON text, both made from a copy of its info that nothing changes
    (``info``): the text always says what the members hold. Raises TypeError or ValueError for info that is not
    JSON."""

    __slots__ = ("info", "members", "text")

    def __init__(self, info: Dict[str, Any]) -> None:
        self.info = json_text.copied(info)
        self.members = {"resultType": "complete", "_meta": {SERVER_INFO_KEY: self.info}}
        self.text = jsonrpc.encode(self.members)


def answer(result: Dict[str, Any], ctx: RequestContext, server: Any,
           complete: Optional[CompleteMembers]) -> Dict[str, Any]:
    """The answer to a request of a revision with ``result_type`` (2026-07-28), with its handler's result
    shaped (`shape_result`).

    In the common case (a method that is not cacheable, a result that sets neither ``resultType`` nor ``_meta``)
    the result only gains the server's `CompleteMembers` (``complete``; None when its info is not JSON), whose
    text is encoded once per server info, not once per answer (tests/bench/README.md has the figures).
    """
    if complete is not None and ctx.method not in CACHEABLE_METHODS and "resultType" not in result \
            and "_meta" not in result:
        return jsonrpc.result_with_members(ctx.id, result, complete.members, complete.text)
    return jsonrpc.result(ctx.id, shape_result(result, ctx, server))


def strip_envelope_era_fields(result: Dict[str, Any]) -> Dict[str, Any]:
    """``result`` without the fields of 2026-07-28, for a request of an older revision."""
    return {key: value for key, value in result.items() if key not in _ENVELOPE_ERA_FIELDS}


# ---- pagination ---------------------------------------------------------------------------------------
_CURSOR_PREFIX = "mcplite:"


def page(key: str, items: List[Dict[str, Any]], params: Dict[str, Any], page_size: Optional[int]) -> Dict[str, Any]:
    """The page of ``items`` that the request's cursor asks for, with the next page's cursor if any."""
    start = decode_cursor(params.get("cursor"), len(items))
    if page_size is None:
        return {key: items[start:]}
    end = start + page_size
    result: Dict[str, Any] = {key: items[start:end]}
    if end < len(items):
        result["nextCursor"] = encode_cursor(end)
    return result


def encode_cursor(offset: int) -> str:
    import base64  # here: only paginated lists need it

    return base64.urlsafe_b64encode(f"{_CURSOR_PREFIX}{offset}".encode()).decode("ascii")


def decode_cursor(cursor: Any, length: int) -> int:
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
