"""Wire types: `TypedDict`s mirroring the MCP schema (2024-11-05 to 2025-11-25), and the method names of `methods`.

They are for reading and type checkers only: at run time every message is the plain dict that came off
the wire, so fields from newer peers pass through untouched and nothing is converted on the hot path.
Fields that only exist from some revision on say so in a comment; optional fields use ``total=False``, and
the keys the 2025-11-25 schema requires live in a ``_<Name>Required`` base class (``typing.Required`` is
3.11+), so that ``result["content"]`` type-checks where ``result.get("structuredContent")`` must be asked.
"""

from typing import Any, Dict, List, Literal, TypedDict, Union

from . import methods
from .methods import *  # noqa: F401,F403  the method names and LOGGING_LEVELS, re-exported

__all__ = [
    "Implementation", "Icon", "ClientCapabilities", "ServerCapabilities", "InitializeResult", "Annotations",
    "TextContent", "ImageContent", "AudioContent", "ResourceLink", "EmbeddedResource", "ContentBlock",
    "TextResourceContents", "BlobResourceContents", "Tool", "ToolAnnotations", "CallToolResult", "Resource",
    "ResourceTemplate", "ReadResourceResult", "SkillResource", "Skill", "Prompt", "PromptArgument",
    "PromptMessage", "GetPromptResult",
    "CompleteResult", "Root", "SamplingMessage", "CreateMessageResult", "ElicitResult", "LoggingLevel",
]
__all__ += methods.__all__

LoggingLevel = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]


# ---- base and lifecycle -------------------------------------------------------------------------------
class _IconRequired(TypedDict):
    src: str


class Icon(_IconRequired, total=False):  # 2025-11-25
    mimeType: str
    sizes: List[str]
    theme: Literal["light", "dark"]


class _ImplementationRequired(TypedDict):
    name: str
    version: str


class Implementation(_ImplementationRequired, total=False):
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


class _InitializeResultRequired(TypedDict):
    protocolVersion: str
    capabilities: ServerCapabilities
    serverInfo: Implementation


class InitializeResult(_InitializeResultRequired, total=False):
    instructions: str
    _meta: Dict[str, Any]


# ---- content ------------------------------------------------------------------------------------------
class Annotations(TypedDict, total=False):
    audience: List[Literal["user", "assistant"]]
    priority: float
    lastModified: str  # 2025-06-18


class _TextContentRequired(TypedDict):
    type: Literal["text"]
    text: str


class TextContent(_TextContentRequired, total=False):
    annotations: Annotations
    _meta: Dict[str, Any]


class _ImageContentRequired(TypedDict):
    type: Literal["image"]
    data: str  # base64
    mimeType: str


class ImageContent(_ImageContentRequired, total=False):
    annotations: Annotations
    _meta: Dict[str, Any]


class _AudioContentRequired(TypedDict):
    type: Literal["audio"]
    data: str  # base64
    mimeType: str


class AudioContent(_AudioContentRequired, total=False):  # 2025-03-26
    annotations: Annotations
    _meta: Dict[str, Any]


class _TextResourceContentsRequired(TypedDict):
    uri: str
    text: str


class TextResourceContents(_TextResourceContentsRequired, total=False):
    mimeType: str
    _meta: Dict[str, Any]


class _BlobResourceContentsRequired(TypedDict):
    uri: str
    blob: str  # base64


class BlobResourceContents(_BlobResourceContentsRequired, total=False):
    mimeType: str
    _meta: Dict[str, Any]


class _EmbeddedResourceRequired(TypedDict):
    type: Literal["resource"]
    resource: Union[TextResourceContents, BlobResourceContents]


class EmbeddedResource(_EmbeddedResourceRequired, total=False):
    annotations: Annotations
    _meta: Dict[str, Any]


class _ResourceLinkRequired(TypedDict):
    type: Literal["resource_link"]
    uri: str
    name: str


class ResourceLink(_ResourceLinkRequired, total=False):  # 2025-06-18
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


class _CallToolResultRequired(TypedDict):
    content: List[ContentBlock]


class CallToolResult(_CallToolResultRequired, total=False):
    structuredContent: Any  # 2025-06-18 (an object until 2026-07-28)
    isError: bool
    _meta: Dict[str, Any]


# ---- resources ----------------------------------------------------------------------------------------
class _ResourceRequired(TypedDict):
    uri: str
    name: str


class Resource(_ResourceRequired, total=False):
    title: str
    description: str
    mimeType: str
    size: int
    annotations: Annotations
    icons: List[Icon]


class _ResourceTemplateRequired(TypedDict):
    uriTemplate: str
    name: str


class ResourceTemplate(_ResourceTemplateRequired, total=False):
    title: str
    description: str
    mimeType: str
    annotations: Annotations
    icons: List[Icon]


class _ReadResourceResultRequired(TypedDict):
    contents: List[Union[TextResourceContents, BlobResourceContents]]


class ReadResourceResult(_ReadResourceResultRequired, total=False):
    _meta: Dict[str, Any]


# ---- skills (the extension io.modelcontextprotocol/skills, SEP-2640; see protocol.skills) -------------
class SkillResource(TypedDict):
    """One file of a skill: its resource URI, ``sha256:<hex>`` digest and size in bytes."""

    uri: str
    digest: str
    size: int


class Skill(TypedDict):
    """A skill entry of ``skills/list`` and ``skills/get``; ``resources`` may also be the string "dynamic"."""

    uri: str
    frontmatter: Dict[str, Any]
    resources: Union[List[SkillResource], str]


# ---- prompts ------------------------------------------------------------------------------------------
class _PromptArgumentRequired(TypedDict):
    name: str


class PromptArgument(_PromptArgumentRequired, total=False):
    title: str
    description: str
    required: bool


class _PromptRequired(TypedDict):
    name: str


class Prompt(_PromptRequired, total=False):
    title: str
    description: str
    arguments: List[PromptArgument]
    icons: List[Icon]


class PromptMessage(TypedDict):
    role: Literal["user", "assistant"]
    content: ContentBlock


class _GetPromptResultRequired(TypedDict):
    messages: List[PromptMessage]


class GetPromptResult(_GetPromptResultRequired, total=False):
    description: str
    _meta: Dict[str, Any]


class CompleteResult(TypedDict):
    completion: Dict[str, Any]  # {"values": [...], "total"?: int, "hasMore"?: bool}


# ---- client features ----------------------------------------------------------------------------------
class _RootRequired(TypedDict):
    uri: str


class Root(_RootRequired, total=False):
    name: str


class SamplingMessage(TypedDict):
    role: Literal["user", "assistant"]
    content: ContentBlock


class _CreateMessageResultRequired(TypedDict):
    role: Literal["user", "assistant"]
    content: ContentBlock
    model: str


class CreateMessageResult(_CreateMessageResultRequired, total=False):
    stopReason: str


class _ElicitResultRequired(TypedDict):
    action: Literal["accept", "decline", "cancel"]


class ElicitResult(_ElicitResultRequired, total=False):  # 2025-06-18
    content: Dict[str, Any]
