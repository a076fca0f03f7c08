"""Helpers that build content blocks and messages in their wire shape.

Every helper returns the plain dict the protocol carries, so results can be combined, inspected and
returned from handlers as they are: ``return [text("done"), image(png_bytes, "image/png")]``.

Three more read results the other way, typed for ``mypy --strict`` and pyright without casts:
`text_of` (the text of a tool result, a prompt or a resource read), `blob_of` (its one binary item,
decoded) and `structured_of` (a tool result's ``structuredContent``, or a clear error when there is none).
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see __init__)
if TYPE_CHECKING:
    from typing import Any, Dict, Iterator, List, Mapping, Optional, Union

    from .protocol import types as t

__all__ = ["text", "image", "audio", "resource", "resource_link", "message", "b64",
           "text_of", "blob_of", "structured_of"]


def b64(data: Union[bytes, str]) -> str:
    """Base64 text for binary data (a str is taken as already encoded)."""
    if isinstance(data, str):
        return data
    import base64  # here: most servers never send binary content

    return base64.b64encode(data).decode("ascii")


def _extras(block: Dict[str, Any], annotations: Optional[t.Annotations], meta: Optional[Dict[str, Any]]) -> Any:
    if annotations:
        block["annotations"] = annotations
    if meta:
        block["_meta"] = meta
    return block


def text(value: str, *, annotations: Optional[t.Annotations] = None,
         meta: Optional[Dict[str, Any]] = None) -> t.TextContent:
    """A text content block."""
    block: t.TextContent = _extras({"type": "text", "text": value}, annotations, meta)
    return block


def image(data: Union[bytes, str], mime_type: str = "image/png", *, annotations: Optional[t.Annotations] = None,
          meta: Optional[Dict[str, Any]] = None) -> t.ImageContent:
    """An image content block: ``bytes`` are base64-encoded, a ``str`` is taken as already encoded."""
    block: t.ImageContent = _extras({"type": "image", "data": b64(data), "mimeType": mime_type}, annotations, meta)
    return block


def audio(data: Union[bytes, str], mime_type: str = "audio/wav", *, annotations: Optional[t.Annotations] = None,
          meta: Optional[Dict[str, Any]] = None) -> t.AudioContent:
    """An audio content block (2025-03-26): ``bytes`` are base64-encoded, a ``str`` as already encoded."""
    block: t.AudioContent = _extras({"type": "audio", "data": b64(data), "mimeType": mime_type}, annotations, meta)
    return block


def resource(uri: str, content: Union[str, bytes], mime_type: Optional[str] = None, *,
             annotations: Optional[t.Annotations] = None, meta: Optional[Dict[str, Any]] = None
             ) -> t.EmbeddedResource:
    """An embedded resource: ``str`` content is text, ``bytes`` a base64 blob."""
    contents: Dict[str, Any] = {"uri": uri}
    if not mime_type:
        # Imported here: mimetypes (and the urllib.parse it imports) would weigh on every server's start-up.
        import mimetypes

        mime_type = mimetypes.guess_type(uri)[0]
    if mime_type:
        contents["mimeType"] = mime_type
    if isinstance(content, str):
        contents["text"] = content
    else:
        contents["blob"] = b64(content)
    block: t.EmbeddedResource = _extras({"type": "resource", "resource": contents}, annotations, meta)
    return block


def resource_link(uri: str, name: Optional[str] = None, *, title: Optional[str] = None,
                  description: Optional[str] = None, mime_type: Optional[str] = None, size: Optional[int] = None,
                  annotations: Optional[t.Annotations] = None, meta: Optional[Dict[str, Any]] = None
                  ) -> t.ResourceLink:
    """A link to a resource the client may read (2025-06-18)."""
    fields: Dict[str, Any] = {"type": "resource_link", "uri": uri, "name": name or uri}
    for key, value in (("title", title), ("description", description), ("mimeType", mime_type), ("size", size)):
        if value is not None:
            fields[key] = value
    block: t.ResourceLink = _extras(fields, annotations, meta)
    return block


def message(content: Union[str, Dict[str, Any]], role: str = "user") -> t.PromptMessage:
    """A prompt or sampling message; a str becomes text content."""
    return {"role": role, "content": text(content) if isinstance(content, str) else content}  # type: ignore


# ---- reading results ------------------------------------------------------------------------------------
def _items(result: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """The content blocks of a CallToolResult, a GetPromptResult's messages, a CreateMessageResult or a
    PromptMessage, and the contents of a ReadResourceResult (in that order of looking); a block is itself."""
    if "contents" in result:  # ReadResourceResult
        yield from result["contents"]
        return
    if "messages" in result:  # GetPromptResult
        for message in result["messages"]:
            yield from _items(message)
        return
    if "content" in result:  # CallToolResult (a list), PromptMessage / CreateMessageResult (a block or a list)
        content = result["content"]
        yield from content if isinstance(content, list) else [content]
        return
    if "type" in result:
        yield result


def text_of(result: Mapping[str, Any], sep: str = "\n") -> str:
    """The text of a result, joined with ``sep``: the ``text`` blocks of a `CallToolResult` or of a
    `GetPromptResult`'s messages, or the text contents of a `ReadResourceResult`; "" when there is none.

    Images, audio, blobs and links are left out; an embedded resource counts only when it is text.
    """
    texts: List[str] = []
    for item in _items(result):
        kind = item.get("type")
        if kind == "text" or (kind is None and "text" in item):  # a content block, or text resource contents
            texts.append(item["text"])
        elif kind == "resource" and "text" in item.get("resource", {}):
            texts.append(item["resource"]["text"])
    return sep.join(texts)


def blob_of(result: Mapping[str, Any]) -> bytes:
    """The one binary item of a result, decoded from base64: the blob contents of a `ReadResourceResult`, or
    the image, audio or embedded blob of a `CallToolResult` or prompt. `ValueError` when there is none or
    more than one (iterate ``result["content"]`` for several)."""
    found: List[str] = []
    for item in _items(result):
        kind = item.get("type")
        if kind in ("image", "audio"):
            found.append(item["data"])
        elif kind == "resource" and "blob" in item.get("resource", {}):
            found.append(item["resource"]["blob"])
        elif kind is None and "blob" in item:
            found.append(item["blob"])
    if len(found) != 1:
        raise ValueError(f"blob_of: the result holds {len(found) or 'no'} binary items, not one"
                         + (f" (its text: {_excerpt(text_of(result))})" if not found and text_of(result) else ""))
    import base64  # here: most clients never read binary content

    return base64.b64decode(found[0])


def structured_of(result: Mapping[str, Any]) -> Any:
    """A `CallToolResult`'s ``structuredContent`` (2025-06-18): any JSON value (an object until 2026-07-28).

    `ValueError` when the result has none (a tool without an ``outputSchema`` may leave it out, and servers
    before 2025-06-18 always do), saying whether the call failed and what its text was.
    """
    if "structuredContent" in result:
        return result["structuredContent"]
    failed = " (the call failed: isError)" if result.get("isError") else ""
    text = text_of(result)
    raise ValueError(f"structured_of: the result has no structuredContent{failed}"
                     + (f"; its text: {_excerpt(text)}" if text else ""))


def _excerpt(text: str, limit: int = 200) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")
