"""Wire types: `TypedDict`s mirroring the MCP schema (2024-11-05 to 2025-11-25), and the method names of `methods`.

They are for reading and type checkers only: at run time every message is the plain dict that came off
the wire, so fields from newer peers pass through untouched and nothing is converted on the hot path.
Fields that only exist from some revision on say so in a comment; optional fields use ``total=False``.
"""

from typing import Any, Dict, List, Literal, TypedDict, Union

from . import methods
from .methods import *  # noqa: F401,F403  the method names and LOGGING_LEVELS, re-exported

__all__ = [
    "Implementation", "Icon", "ClientCapabilities", "ServerCapabilities", "InitializeResult", "Annotations",
    "TextContent", "ImageContent", "AudioContent", "ResourceLink", "EmbeddedResource", "ContentBlock",
    "TextResourceContents", "BlobResourceContents", "Tool", "ToolAnnotations", "CallToolResult", "Resource",
    "ResourceTemplate", "ReadResourceResult", "Prompt", "PromptArgument", "PromptMessage", "GetPromptResult",
    "CompleteResult", "Root", "SamplingMessage", "CreateMessageResult", "ElicitResult", "LoggingLevel",
]
__all__ += methods.__all__

LoggingLevel = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]


# ---- base and lifecycle -------------------------------------------------------------------------------
class Icon(TypedDict, total=False):  # 2025-11-25
    src: str
    mimeType: str
    sizes: List[str]
    theme: Literal["light", "dark"]


class Implementation(TypedDict, total=False):
    name: str
    version: str
    title: str  # 2025-06-18
    description: str  # 2025-11-25
    websiteUrl: str  # 2025-11-25
    icons: List[Icon]  # 2025-11-25


class ClientCapabilities(TypedDict, total=False):
    experimental: Dict[str, Any]
    roots: Dict[str, Any]  # {"listChanged": bool}
    sampling: Dict[str, Any]
    elicitation: Dict[str, Any]  # 2025-06-18; {"form": {}, "url": {}} from 2025-11-25


class ServerCapabilities(TypedDict, total=False):
    experimental: Dict[str, Any]
    logging: Dict[str, Any]
    completions: Dict[str, Any]  # 2025-03-26
    prompts: Dict[str, Any]  # {"listChanged": bool}
    resources: Dict[str, Any]  # {"subscribe": bool, "listChanged": bool}
    tools: Dict[str, Any]  # {"listChanged": bool}


class InitializeResult(TypedDict, total=False):
    protocolVersion: str
    capabilities: ServerCapabilities
    serverInfo: Implementation
    instructions: str


# ---- content ------------------------------------------------------------------------------------------
class Annotations(TypedDict, total=False):
    audience: List[Literal["user", "assistant"]]
    priority: float
    lastModified: str  # 2025-06-18


class TextContent(TypedDict, total=False):
    type: Literal["text"]
    text: str
    annotations: Annotations
    _meta: Dict[str, Any]


class ImageContent(TypedDict, total=False):
    type: Literal["image"]
    data: str  # base64
    mimeType: str
    annotations: Annotations


class AudioContent(TypedDict, total=False):  # 2025-03-26
    type: Literal["audio"]
    data: str
    mimeType: str
    annotations: Annotations


class TextResourceContents(TypedDict, total=False):
    uri: str
    mimeType: str
    text: str


class BlobResourceContents(TypedDict, total=False):
    uri: str
    mimeType: str
    blob: str  # base64


class EmbeddedResource(TypedDict, total=False):
    type: Literal["resource"]
    resource: Union[TextResourceContents, BlobResourceContents]
    annotations: Annotations


class ResourceLink(TypedDict, total=False):  # 2025-06-18
    type: Literal["resource_link"]
    uri: str
    name: str
    title: str
    description: str
    mimeType: str
    size: int


ContentBlock = Union[TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource]


# ---- tools --------------------------------------------------------------------------------------------
class ToolAnnotations(TypedDict, total=False):  # 2025-03-26; hints are untrusted
    title: str
    readOnlyHint: bool
    destructiveHint: bool
    idempotentHint: bool
    openWorldHint: bool


class _ToolRequired(TypedDict):
    name: str
    inputSchema: Dict[str, Any]


class Tool(_ToolRequired, total=False):
    title: str
    description: str
    outputSchema: Dict[str, Any]  # 2025-06-18
    annotations: ToolAnnotations
    icons: List[Icon]
    _meta: Dict[str, Any]


class CallToolResult(TypedDict, total=False):
    content: List[ContentBlock]
    structuredContent: Any  # 2025-06-18 (an object until 2026-07-28)
    isError: bool
    _meta: Dict[str, Any]


# ---- resources ----------------------------------------------------------------------------------------
class Resource(TypedDict, total=False):
    uri: str
    name: str
    title: str
    description: str
    mimeType: str
    size: int
    annotations: Annotations
    icons: List[Icon]


class ResourceTemplate(TypedDict, total=False):
    uriTemplate: str
    name: str
    title: str
    description: str
    mimeType: str
    annotations: Annotations
    icons: List[Icon]


class ReadResourceResult(TypedDict):
    contents: List[Union[TextResourceContents, BlobResourceContents]]


# ---- prompts ------------------------------------------------------------------------------------------
class PromptArgument(TypedDict, total=False):
    name: str
    title: str
    description: str
    required: bool


class Prompt(TypedDict, total=False):
    name: str
    title: str
    description: str
    arguments: List[PromptArgument]
    icons: List[Icon]


class PromptMessage(TypedDict):
    role: Literal["user", "assistant"]
    content: ContentBlock


class GetPromptResult(TypedDict, total=False):
    description: str
    messages: List[PromptMessage]


class CompleteResult(TypedDict):
    completion: Dict[str, Any]  # {"values": [...], "total"?: int, "hasMore"?: bool}


# ---- client features ----------------------------------------------------------------------------------
class Root(TypedDict, total=False):
    uri: str
    name: str


class SamplingMessage(TypedDict):
    role: Literal["user", "assistant"]
    content: ContentBlock


class CreateMessageResult(TypedDict, total=False):
    role: Literal["user", "assistant"]
    content: ContentBlock
    model: str
    stopReason: str


class ElicitResult(TypedDict, total=False):  # 2025-06-18
    action: Literal["accept", "decline", "cancel"]
    content: Dict[str, Any]
