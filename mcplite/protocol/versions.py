"""Every rule that depends on the protocol revision, in one table.

A session negotiates one revision and then asks its `Revision` row, never the version string, whether a
feature exists ("does this revision accept batches?"). A new revision is a new row here plus the code for
whatever genuinely new feature it brings; nothing else should compare version strings.

Which method needs which capability is in `capabilities`.

Sources: ../shared/spec/VERSIONS.md (with the spec-repository file for each rule).
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

from ..errors import RESOURCE_NOT_FOUND

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see __init__)
if TYPE_CHECKING:
    from typing import Dict, Tuple

__all__ = [
    "Revision", "REVISIONS", "SUPPORTED_VERSIONS", "LATEST_VERSION", "DEFAULT_HTTP_VERSION", "revision",
    "is_supported", "negotiate",
]


class Revision:
    """What one protocol revision has. Field names say the feature; values say whether it exists.

    A plain class rather than a NamedTuple (which would import `typing`): the annotations below are the
    fields, `__init__` takes each of them by keyword, and there is one row per revision, so rows compare
    by identity.
    """

    version: str
    #: JSON-RPC batches on the wire: receivers MUST accept them (2025-03-26 only).
    batching: bool
    #: ToolAnnotations, AudioContent, `completions` capability, progress `message` (2025-03-26).
    annotations_audio_completions: bool
    #: `outputSchema`/`structuredContent`, `title`, elicitation, resource links, `_meta` everywhere (2025-06-18).
    structured_output: bool
    #: `elicitation/create` exists (2025-06-18).
    elicitation: bool
    #: URL-mode elicitation, icons, tool-name rules, invalid tool args as `isError` results (2025-11-25).
    url_elicitation: bool
    #: Invalid tool arguments answered as a tool error (`isError`) rather than -32602 (SEP-1303, 2025-11-25).
    tool_input_errors_as_results: bool
    #: The HTTP transport: "sse" (HTTP+SSE, two endpoints) or "streamable" (one endpoint).
    http_transport: str
    #: After initialize, HTTP requests MUST carry `MCP-Protocol-Version` (2025-06-18 onwards).
    protocol_version_header: bool
    #: A POSTed request's SSE stream may be resumed with GET + `Last-Event-ID` (2025-03-26 onwards).
    resumable_streams: bool
    #: SSE polling: priming event (id + empty data), `retry`, server may close streams early (2025-11-25).
    sse_polling: bool
    #: The error code for an unknown resource URI.
    resource_not_found_code: int
    #: Connection-scoped handshake with `initialize` (every revision up to 2025-11-25).
    initialize_handshake: bool

    def __init__(self, **fields: object) -> None:
        expected = Revision.__annotations__.keys()
        if fields.keys() != expected:
            raise TypeError(f"a Revision needs exactly its fields; missing {sorted(expected - fields.keys())}, "
                            f"unknown {sorted(fields.keys() - expected)}")
        self.__dict__.update(fields)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("a Revision row is read-only")

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in Revision.__annotations__)
        return f"Revision({fields})"


def _row(version: str, **features: object) -> Revision:
    return Revision(version=version, **features)


# Oldest first; each row differs from the one above only where the changelog says so.
REVISIONS: Dict[str, Revision] = {
    r.version: r
    for r in (
        _row("2024-11-05", batching=False, annotations_audio_completions=False, structured_output=False,
             elicitation=False, url_elicitation=False, tool_input_errors_as_results=False,
             http_transport="sse", protocol_version_header=False, resumable_streams=False,
             sse_polling=False, resource_not_found_code=RESOURCE_NOT_FOUND, initialize_handshake=True),
        _row("2025-03-26", batching=True, annotations_audio_completions=True, structured_output=False,
             elicitation=False, url_elicitation=False, tool_input_errors_as_results=False,
             http_transport="streamable", protocol_version_header=False, resumable_streams=True,
             sse_polling=False, resource_not_found_code=RESOURCE_NOT_FOUND, initialize_handshake=True),
        _row("2025-06-18", batching=False, annotations_audio_completions=True, structured_output=True,
             elicitation=True, url_elicitation=False, tool_input_errors_as_results=False,
             http_transport="streamable", protocol_version_header=True, resumable_streams=True,
             sse_polling=False, resource_not_found_code=RESOURCE_NOT_FOUND, initialize_handshake=True),
        _row("2025-11-25", batching=False, annotations_audio_completions=True, structured_output=True,
             elicitation=True, url_elicitation=True, tool_input_errors_as_results=True,
             http_transport="streamable", protocol_version_header=True, resumable_streams=True,
             sse_polling=True, resource_not_found_code=RESOURCE_NOT_FOUND, initialize_handshake=True),
        # 2026-07-28 (stateless, per-request _meta, Mcp-Method headers) is planned as the next row:
        # resource_not_found_code=INVALID_PARAMS, initialize_handshake=False, no resumable streams.
    )
}

#: Newest first: the order in which we prefer them.
SUPPORTED_VERSIONS: Tuple[str, ...] = tuple(sorted(REVISIONS, reverse=True))
LATEST_VERSION: str = SUPPORTED_VERSIONS[0]
#: What a Streamable HTTP server assumes when a request carries no `MCP-Protocol-Version` header.
DEFAULT_HTTP_VERSION = "2025-03-26"

def revision(version: str) -> Revision:
    """The row for a supported version; KeyError for any other string."""
    return REVISIONS[version]


def is_supported(version: object) -> bool:
    return isinstance(version, str) and version in REVISIONS


def negotiate(requested: object, supported: Tuple[str, ...] = SUPPORTED_VERSIONS) -> str:
    """The server's answer to a client's `initialize`: echo a version we speak, else offer our latest."""
    if isinstance(requested, str) and requested in supported:
        return requested
    return supported[0]

