"""Every rule that depends on the protocol revision, in one table.

A session negotiates one revision and then asks its `Revision` row, never the version string, whether a
feature exists ("does this revision accept batches?"). A new revision is a new row here plus the code for
whatever genuinely new feature it brings; nothing else should compare version strings.

Revisions come in two eras (VERSIONS.md §1): the *handshake* era (2024-11-05 … 2025-11-25: a connection starts with
`initialize`, which negotiates one revision for the connection) and the *envelope* era (2026-07-28 on: no handshake;
every request carries its *envelope*, the `_meta` block that names its revision, client and capabilities). Each era
is named after the mechanism by which a peer comes to speak a revision, not its age. The era is a column of the
table, each era has its own latest revision and its own negotiation, and every default names its era: adding an
envelope-era row changes `LATEST_VERSION` and `SUPPORTED_VERSIONS` (which describe the whole table) but no default
and no legacy negotiation.

Which method needs which capability is in `capabilities`.

Sources: ../shared/spec/VERSIONS.md (with the spec-repository file for each rule); the rows are held
against it by tests/test_versions.py.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

from ..errors import INVALID_PARAMS, RESOURCE_NOT_FOUND

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see __init__)
if TYPE_CHECKING:
    from typing import Any, ClassVar, Dict, Iterable, Optional, Tuple, TypeVar

    R = TypeVar("R", bound="RevisionRecord")

__all__ = [
    "RevisionRecord", "by_version", "Revision", "HANDSHAKE", "ENVELOPE", "ERA_NAMES", "REVISIONS",
    "SUPPORTED_VERSIONS", "LATEST_VERSION", "HANDSHAKE_VERSIONS", "ENVELOPE_VERSIONS", "LATEST_HANDSHAKE_VERSION",
    "LATEST_ENVELOPE_VERSION", "DEFAULT_HTTP_VERSION", "revision", "is_supported", "negotiate",
    "choose_envelope_version",
]


class RevisionRecord:
    """One read-only row of a per-revision table: `Revision` here, `mcplite.oauth.rules.AuthRules` there.

    A subclass declares its fields as class annotations (names starting with "_" are not fields). A row is
    built with every field by keyword, none missing and none unknown, so adding a field to a table means
    giving every row its value; the check runs when the table is built, at import. Rows compare and hash by
    value, and `_replace` makes a copy with some fields changed (as a NamedTuple would). A plain class rather
    than a NamedTuple or a dataclass: those import `typing` or `inspect`, and this module is on the start-up
    path.
    """

    #: The field names, in declaration order (base class first); set for each subclass.
    _fields: ClassVar[Tuple[str, ...]] = ("version",)

    version: str

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        names: Dict[str, None] = {}
        for klass in reversed(cls.__mro__):
            names.update(dict.fromkeys(n for n in klass.__dict__.get("__annotations__", {}) if not n.startswith("_")))
        cls._fields = tuple(names)

    def __init__(self, **fields: object) -> None:
        expected = set(self._fields)
        if fields.keys() != expected:
            raise TypeError(f"a {type(self).__name__} needs exactly its fields; missing "
                            f"{sorted(expected - fields.keys())}, unknown {sorted(fields.keys() - expected)}")
        self.__dict__.update(fields)
        self._check()

    def _check(self) -> None:
        """Refuse a row whose values do not make sense together (raise ValueError); nothing by default."""

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"a {type(self).__name__} row is read-only")

    def _asdict(self) -> Dict[str, Any]:
        return {name: getattr(self, name) for name in self._fields}

    def _replace(self: R, **changes: object) -> R:
        return type(self)(**{**self._asdict(), **changes})

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._asdict() == other._asdict()

    def __hash__(self) -> int:
        return hash((type(self), tuple(getattr(self, name) for name in self._fields)))

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__name__}({fields})"


def by_version(rows: Iterable[R]) -> Dict[str, R]:
    """A per-revision table: ``rows`` keyed by version, oldest first.

    Raises:
        ValueError: two rows for one version, or rows not oldest first (the table is read top to bottom as
            a changelog, and "newest first" orders are derived from it).
    """
    table: Dict[str, R] = {}
    newest = ""
    for row in rows:
        if row.version in table:
            raise ValueError(f"two rows for revision {row.version}")
        if row.version < newest:  # ISO dates: string order is date order
            raise ValueError(f"revision {row.version} is listed after {newest}: rows go oldest first")
        table[row.version] = row
        newest = row.version
    return table


#: The handshake era: `initialize` negotiates the revision of a connection (2024-11-05 … 2025-11-25).
HANDSHAKE = "handshake"
#: The envelope era: no handshake; each request carries its revision in its `_meta` envelope (2026-07-28 on).
#: (The design notes, MODERN.md, call it "modern"; the value is what `Revision.era`, the lifecycle and
#: ``mcplite info`` say.)
ENVELOPE = "envelope"
#: Oldest era first: every revision of an era is newer than every revision of the eras before it.
ERA_NAMES: Tuple[str, ...] = (HANDSHAKE, ENVELOPE)


class Revision(RevisionRecord):
    """What one protocol revision has. Field names say the feature; values say whether it exists."""

    version: str
    #: `HANDSHAKE` or `ENVELOPE`: how a peer comes to speak this revision (see the module docstring).
    era: str
    #: JSON-RPC batches on the wire: receivers MUST accept them (2025-03-26 only).
    batching: bool
    #: ToolAnnotations, AudioContent, `completions` capability, progress `message` (2025-03-26).
    annotations_audio_completions: bool
    #: `outputSchema`/`structuredContent`, `title`, elicitation, resource links, `_meta` everywhere (2025-06-18).
    structured_output: bool
    #: URL-mode elicitation, icons, tool-name rules, invalid tool args as `isError` results (2025-11-25).
    url_elicitation: bool
    #: Invalid tool arguments answered as a tool error (`isError`) rather than -32602 (SEP-1303, 2025-11-25).
    tool_input_errors_as_results: bool
    #: After initialize, HTTP requests MUST carry `MCP-Protocol-Version` (2025-06-18 onwards).
    protocol_version_header: bool
    #: A POSTed request's SSE stream may be resumed with GET + `Last-Event-ID` (2025-03-26 onwards).
    resumable_streams: bool
    #: SSE polling: priming event (id + empty data), `retry`, server may close streams early (2025-11-25).
    sse_polling: bool
    #: The error code for an unknown resource URI.
    resource_not_found_code: int
    #: The server may send the client requests of its own (sampling, elicitation, roots, ping). From
    #: 2026-07-28 it may not: it asks through input-required results instead (mrtr.mdx).
    server_requests: bool
    #: `tools/call`, `prompts/get` and `resources/read` may answer `input_required` (SEP-2322, 2026-07-28).
    input_required: bool
    #: Every result carries `resultType`, and `_meta` names the server (`serverInfo`) (2026-07-28).
    result_type: bool
    #: Cacheable results carry `ttlMs` and `cacheScope` (SEP-2549, 2026-07-28).
    cache_hints: bool
    #: Notifications reach a client through `subscriptions/listen` streams, not GET streams or
    #: `resources/subscribe` (2026-07-28).
    listen: bool
    #: Log messages go out only at the level the request's `_meta` asks for (no `logging/setLevel`, 2026-07-28).
    per_request_log_level: bool
    #: The experimental core tasks: the ``task`` param, ``tasks/get|result|list|cancel``, the ``tasks``
    #: capability and ``execution.taskSupport`` (2025-11-25 only; 2026-07-28 moved tasks to an extension).
    core_tasks: bool

    def _check(self) -> None:
        if self.era not in ERA_NAMES:
            raise ValueError(f"revision {self.version}: era {self.era!r} is not one of {', '.join(ERA_NAMES)}")


def _revisions(rows: Iterable[Revision]) -> Dict[str, Revision]:
    """`by_version`, plus: the eras follow each other (no handshake revision newer than an envelope-era one)."""
    table = by_version(rows)
    eras = [ERA_NAMES.index(row.era) for row in table.values()]
    if eras != sorted(eras):
        raise ValueError("a revision of an older era is listed after one of a newer era")
    return table


# Oldest first; each row is the one above with what the changelog changed.
_2024_11_05 = Revision(version="2024-11-05", era=HANDSHAKE, batching=False, annotations_audio_completions=False,
                       structured_output=False, url_elicitation=False, tool_input_errors_as_results=False,
                       protocol_version_header=False, resumable_streams=False, sse_polling=False,
                       resource_not_found_code=RESOURCE_NOT_FOUND, server_requests=True, input_required=False,
                       result_type=False, cache_hints=False, listen=False, per_request_log_level=False,
                       core_tasks=False)
_2025_03_26 = _2024_11_05._replace(version="2025-03-26", batching=True, annotations_audio_completions=True,
                                   resumable_streams=True)
_2025_06_18 = _2025_03_26._replace(version="2025-06-18", batching=False, structured_output=True,
                                   protocol_version_header=True)
_2025_11_25 = _2025_06_18._replace(version="2025-11-25", url_elicitation=True, tool_input_errors_as_results=True,
                                   sse_polling=True, core_tasks=True)
# The envelope era: no handshake, per-request _meta, no server requests, no sessions or resumable streams.
_2026_07_28 = _2025_11_25._replace(version="2026-07-28", era=ENVELOPE, resumable_streams=False, sse_polling=False,
                                   resource_not_found_code=INVALID_PARAMS, server_requests=False,
                                   input_required=True, result_type=True, cache_hints=True, listen=True,
                                   per_request_log_level=True, core_tasks=False)
_ROWS = (_2024_11_05, _2025_03_26, _2025_06_18, _2025_11_25, _2026_07_28)
REVISIONS: Dict[str, Revision] = _revisions(_ROWS)

# What the whole table holds, both eras. No default reads these two, so that adding a row of a new era
# changes what the package knows but not what it does: a default names its era (below).
#: Every revision in the table, of either era, newest first.
SUPPORTED_VERSIONS: Tuple[str, ...] = tuple(sorted(REVISIONS, reverse=True))
#: The newest revision in the table, of either era.
LATEST_VERSION: str = SUPPORTED_VERSIONS[0]

#: The handshake-era revisions, newest first: what `initialize` may negotiate.
HANDSHAKE_VERSIONS: Tuple[str, ...] = tuple(v for v in SUPPORTED_VERSIONS if REVISIONS[v].era == HANDSHAKE)
#: The envelope-era revisions, newest first.
ENVELOPE_VERSIONS: Tuple[str, ...] = tuple(v for v in SUPPORTED_VERSIONS if REVISIONS[v].era == ENVELOPE)
#: What a client offers in `initialize` unless told otherwise, and every other default's revision.
LATEST_HANDSHAKE_VERSION: str = HANDSHAKE_VERSIONS[0]
#: The newest envelope-era revision, or None while the table has none. None rather than absent: it follows from the
#: rows (the envelope-era row alone sets it), and "no envelope-era revision" stays a state that code must handle
#: anyway, for a server restricted to handshake revisions; the Optional type makes a type checker ask for it.
LATEST_ENVELOPE_VERSION: Optional[str] = ENVELOPE_VERSIONS[0] if ENVELOPE_VERSIONS else None

#: What a Streamable HTTP server assumes when a request carries no `MCP-Protocol-Version` header.
DEFAULT_HTTP_VERSION = "2025-03-26"


def revision(version: str) -> Revision:
    """The row for a supported version; KeyError for any other string."""
    return REVISIONS[version]


def is_supported(version: object, era: Optional[str] = None) -> bool:
    """True for a version in the table (of ``era``, when given)."""
    return isinstance(version, str) and version in REVISIONS and era in (None, REVISIONS[version].era)


def negotiate(requested: object, supported: Tuple[str, ...] = HANDSHAKE_VERSIONS) -> str:
    """The server's answer to a client's `initialize` (handshake era): echo the requested version if we
    speak it, else counter-offer the first handshake revision of ``supported`` (our preferred, newest first).

    Only handshake revisions are ever answered: an envelope-era revision in ``supported`` is neither echoed nor
    offered, since `initialize` selects the handshake era (2026-07-28 basic/versioning.mdx).

    Raises:
        ValueError: ``supported`` holds no handshake revision (a server configured for the envelope era only
            has nothing to answer `initialize` with).
    """
    handshake = [version for version in supported if is_supported(version, HANDSHAKE)]
    if not handshake:
        raise ValueError(f"no handshake revision among the supported versions {', '.join(supported)}")
    if isinstance(requested, str) and requested in handshake:
        return requested
    return handshake[0]


def choose_envelope_version(offered: Iterable[object], supported: Tuple[str, ...] = ENVELOPE_VERSIONS) -> Optional[str]:
    """Envelope-era negotiation: the first envelope-era revision of ``supported`` (our preferred) that is also in
    ``offered``, or None. There is no counter-offer in this era: a server given a request at a revision it
    does not speak answers `-32022` with its list, and the client chooses again from that list
    (2026-07-28 basic/versioning.mdx). A server checks one request with ``offered=[its version]``; a client
    chooses from a `DiscoverResult`'s ``supportedVersions`` or the error's ``data.supported``.
    """
    theirs = {version for version in offered if isinstance(version, str)}
    for version in supported:
        if version in theirs and is_supported(version, ENVELOPE):
            return version
    return None
