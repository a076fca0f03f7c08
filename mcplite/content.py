"""Helpers that build content blocks and messages in their wire shape.

Every helper returns the plain dict the protocol carries, so results can be combined, inspected and
returned from handlers as they are: ``return [text("done"), image(png_bytes, "image/png")]``.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see __init__)
if TYPE_CHECKING:
    from typing import Any, Dict, Optional, Union

    from .protocol import types as t

__all__ = ["text", "image", "audio", "resource", "resource_link", "message", "b64"]


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
    block: t.TextContent = _extras({"type": "text", "text": value}, annotations, meta)
    return block


def image(data: Union[bytes, str], mime_type: str = "image/png", *, annotations: Optional[t.Annotations] = None,
          meta: Optional[Dict[str, Any]] = None) -> t.ImageContent:
    block: t.ImageContent = _extras({"type": "image", "data": b64(data), "mimeType": mime_type}, annotations, meta)
    return block


def audio(data: Union[bytes, str], mime_type: str = "audio/wav", *, annotations: Optional[t.Annotations] = None,
          meta: Optional[Dict[str, Any]] = None) -> t.AudioContent:
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
