"""The revision table (`mcplite.protocol.versions`) held against the spec, and the rules that read it.

- Each row of `REVISIONS` against the claims of VERSIONS.md (shared/spec/VERSIONS.md next to the checkout),
  written below as `CLAIMS`: per field, the value from each revision on, the spec-repository files VERSIONS.md
  cites, and the words of VERSIONS.md that say so. The rows are checked against `CLAIMS` always; `CLAIMS`
  and the table's list of revisions are checked against VERSIONS.md itself when the file is there.
- Negotiation per era, and `protocol.capabilities`, as tables.
- The envelope-era row (2026-07-28) changes no legacy negotiation, and every default names its era.
"""

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import types
from pathlib import Path
from typing import Any, Dict, Iterator, List, NamedTuple, Optional, Tuple

import pytest

from mcplite.errors import INVALID_PARAMS, RESOURCE_NOT_FOUND
from mcplite.oauth.rules import AUTH_RULES, AuthRules
from mcplite.protocol import capabilities as caps
from mcplite.protocol import versions as v
from mcplite.protocol.versions import (
    ENVELOPE,
    HANDSHAKE,
    HANDSHAKE_VERSIONS,
    LATEST_HANDSHAKE_VERSION,
    REVISIONS,
    Revision,
    RevisionRecord,
    by_version,
    choose_envelope_version,
    negotiate,
)
from support import ROOT, WAIT


class Claim(NamedTuple):
    """What VERSIONS.md says of one field of `Revision`."""

    field: str
    #: (first revision, value from it on), oldest first: a step function over revision dates.
    steps: Tuple[Tuple[str, Any], ...]
    #: The spec-repository files VERSIONS.md cites for it.
    sources: str
    #: (words that start a table row of VERSIONS.md, words that row must contain), one or more.
    evidence: Tuple[Tuple[str, Tuple[str, ...]], ...]

    def value_at(self, version: str) -> Any:
        return [value for first, value in self.steps if first <= version][-1]


FIRST = "2024-11-05"
CLAIMS: Tuple[Claim, ...] = (
    Claim("era", ((FIRST, HANDSHAKE), ("2026-07-28", ENVELOPE)),
          "schema/2025-11-25/schema.ts:12; docs/specification/2026-07-28/basic/versioning.mdx",
          (("`2025-11-25`", ('**Last "legacy" (initialize-handshake) revision**',)),
           ("`2026-07-28`", ('**First "modern" (stateless, per-request `_meta`) revision**',)))),
    Claim("batching", ((FIRST, False), ("2025-03-26", True), ("2025-06-18", False)),
          "2025-03-26/basic/index.mdx:92-97; 2025-06-18/changelog.mdx #1",
          (("**JSON-RPC batching**", ("**2025-03-26**: receivers MUST accept batches", "**RM 2025-06-18**")),)),
    Claim("annotations_audio_completions", ((FIRST, False), ("2025-03-26", True)),
          "schema/2025-03-26 ToolAnnotations; 2025-03-26/changelog.mdx",
          (("Tool `annotations`", ("| **2025-03-26** |",)),
           ("AudioContent", ("| 2025-03-26 |",)),
           ("**Completion**", ("2025-03-26 adds the `completions` server capability",)),
           ("**Progress**", ("`message` added 2025-03-26",)))),
    Claim("structured_output", ((FIRST, False), ("2025-06-18", True)),
          "2025-06-18/changelog.mdx #2, #7, other #3",
          (("`outputSchema` + `structuredContent`", ("| **2025-06-18** (object only",)),
           ("`title` (BaseMetadata)", ("| **2025-06-18** |",)),
           ("`resource_link` content block", ("| **2025-06-18** (PR #603) |",)))),
    Claim("url_elicitation", ((FIRST, False), ("2025-11-25", True)),
          "2025-11-25/client/elicitation.mdx; schema/2025-11-25/schema.ts (icons)",
          (("Elicitation `elicitation/create`", ('2025-11-25: `mode:"form"|"url"`',)),
           ("`icons`", ("| **2025-11-25** (SEP-973) |",)))),
    Claim("tool_input_errors_as_results", ((FIRST, False), ("2025-11-25", True)),
          "2025-11-25/changelog.mdx (SEP-1303)",
          (("Tools: `tools/list`", ("2025-11-25: input-validation errors SHOULD be tool execution errors "
                                    "(`isError`, SEP-1303)",)),)),
    Claim("protocol_version_header", ((FIRST, False), ("2025-06-18", True)),
          "2025-06-18/basic/transports.mdx:240; 2026-07-28/streamable-http.mdx",
          (("**`MCP-Protocol-Version` header**", ("**2025-06-18: MUST on all HTTP requests after init**",
                                                  "2026-07-28: MUST on **every** POST")),)),
    Claim("resumable_streams", ((FIRST, False), ("2025-03-26", True), ("2026-07-28", False)),
          "2025-11-25/changelog.mdx #7; 2026-07-28/changelog.mdx #9",
          (("**Resumability**", ("| **2025-03-26** |", "**RM 2026-07-28**")),)),
    Claim("sse_polling", ((FIRST, False), ("2025-11-25", True), ("2026-07-28", False)),
          "2025-11-25/basic/transports.mdx:106-116,152-153",
          (("**SSE polling**", ("| **2025-11-25** (SEP-1699) |", "**RM 2026-07-28**")),)),
    Claim("resource_not_found_code", ((FIRST, RESOURCE_NOT_FOUND), ("2026-07-28", INVALID_PARAMS)),
          "2025-11-25/server/resources.mdx:388; 2026-07-28/basic/index.mdx:140",
          (("**-32002**", ("2024-11-05 … 2025-11-25", "**Not to be emitted in 2026-07-28** (→ -32602)")),)),
    Claim("server_requests", ((FIRST, True), ("2026-07-28", False)),
          "2026-07-28/basic/transports/stdio.mdx; streamable-http.mdx §Receiving",
          (("Server→client requests", ("**RM 2026-07-28**: servers MUST NOT send requests",)),)),
    Claim("input_required", ((FIRST, False), ("2026-07-28", True)),
          "2026-07-28/basic/patterns/mrtr.mdx",
          (("**MRTR**", ("2026-07-28 (SEP-2322)", "Allowed only on `tools/call`, `prompts/get`, `resources/read`")),)),
    Claim("result_type", ((FIRST, False), ("2026-07-28", True)),
          "2026-07-28/basic/index.mdx §ResultType; §_meta",
          (("`resultType` on **every** result", ("2026-07-28 (SEP-2322)",)),
           ("`Implementation` clientInfo/serverInfo", ("per-result `_meta[\"io.modelcontextprotocol/serverInfo\"]`",)))),
    Claim("cache_hints", ((FIRST, False), ("2026-07-28", True)),
          "2026-07-28/server/utilities/caching.mdx",
          (("Caching `ttlMs`", ("2026-07-28 (SEP-2549)",)),)),
    Claim("listen", ((FIRST, False), ("2026-07-28", True)),
          "2026-07-28/basic/patterns/subscriptions.mdx",
          (("**`subscriptions/listen`**", ("| **2026-07-28** |",)),
           ("GET standalone SSE stream", ("**RM 2026-07-28**",)))),
    Claim("per_request_log_level", ((FIRST, False), ("2026-07-28", True)),
          "2026-07-28/server/utilities/logging.mdx",
          (("**Logging**", ("**`logging/setLevel` RM**", "without it the server MUST NOT emit messages")),)),
    Claim("core_tasks", ((FIRST, False), ("2025-11-25", True), ("2026-07-28", False)),
          "2025-11-25/basic/utilities/tasks.mdx; seps/2663-tasks-extension.md",
          (("**Tasks** |", ("**2025-11-25**, experimental core", "**RM from core 2026-07-28**")),)),
)


# ---- the rows against the claims ----------------------------------------------------------------------

def test_every_field_of_a_revision_has_a_claim() -> None:
    assert sorted(claim.field for claim in CLAIMS) == sorted(set(Revision._fields) - {"version"})


@pytest.mark.parametrize("version", sorted(REVISIONS))
@pytest.mark.parametrize("claim", CLAIMS, ids=lambda claim: claim.field)
def test_each_row_says_what_the_spec_says(version: str, claim: Claim) -> None:
    assert getattr(REVISIONS[version], claim.field) == claim.value_at(version), claim.sources


def test_the_rows_are_the_released_revisions() -> None:
    # VERSIONS.md §1 (the versions) and §2 "JSON-RPC batching" row (the dates of the table's first change).
    assert list(REVISIONS) == ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]
    assert all(version == row.version for version, row in REVISIONS.items())
    assert "2024-10-07" not in REVISIONS  # a pre-release string that only the TS SDK still accepts


def test_the_derived_constants() -> None:
    assert HANDSHAKE_VERSIONS == ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
    assert LATEST_HANDSHAKE_VERSION == "2025-11-25"
    assert v.ENVELOPE_VERSIONS == ("2026-07-28",) and v.LATEST_ENVELOPE_VERSION == "2026-07-28"
    # The whole table, of either era.
    assert v.SUPPORTED_VERSIONS == ("2026-07-28",) + HANDSHAKE_VERSIONS and v.LATEST_VERSION == "2026-07-28"
    # VERSIONS.md §2 `MCP-Protocol-Version` row: "a missing header means assume `2025-03-26`".
    assert v.DEFAULT_HTTP_VERSION == "2025-03-26"


def test_the_public_names_keep_their_meaning() -> None:
    import mcplite

    assert mcplite.LATEST_VERSION == v.LATEST_VERSION == v.SUPPORTED_VERSIONS[0]
    assert mcplite.SUPPORTED_VERSIONS == v.SUPPORTED_VERSIONS == tuple(sorted(REVISIONS, reverse=True))


# ---- the claims against VERSIONS.md -------------------------------------------------------------------

#: Where the project's VERSIONS.md is, when it is not beside the checkout (``<dir>/shared/spec/VERSIONS.md`` for
#: a parent ``<dir>`` of the checkout): the file itself or the folder that holds it.
VERSIONS_MD_VARIABLE = "MCPLITE_VERSIONS_MD"


def _versions_md() -> Path:
    named = os.environ.get(VERSIONS_MD_VARIABLE)
    if named:
        candidate = Path(named)
        candidate = candidate / "VERSIONS.md" if candidate.is_dir() else candidate
        if not candidate.is_file():
            pytest.fail(f"{VERSIONS_MD_VARIABLE}={named} names no VERSIONS.md")
        return candidate
    for directory in ROOT.parents:
        candidate = directory / "shared" / "spec" / "VERSIONS.md"
        if candidate.is_file():
            return candidate
    pytest.skip(f"VERSIONS.md not found: set {VERSIONS_MD_VARIABLE} to the file (or its folder) to check the "
                "revision table against it")


@pytest.fixture(scope="module")
def versions_md() -> str:
    return _versions_md().read_text(encoding="utf-8")


def _table_row(text: str, starts_with: str) -> str:
    rows = [line for line in text.splitlines() if line.startswith(f"| {starts_with}")]
    assert len(rows) == 1, f"VERSIONS.md has {len(rows)} table rows starting {starts_with!r}"
    return rows[0]


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda claim: claim.field)
def test_the_claims_are_what_versions_md_says(versions_md: str, claim: Claim) -> None:
    for row_start, words in claim.evidence:
        row = _table_row(versions_md, row_start)
        for word in words:
            assert word in row, f"VERSIONS.md no longer says {word!r} in the {row_start!r} row"


def _section_1(text: str) -> Dict[str, str]:
    """VERSIONS.md §1's table: version string -> its status cell."""
    section = text.split("## 1. Protocol version strings", 1)[1].split("\n## ", 1)[0]
    return dict(re.findall(r"^\| `(\d{4}-\d{2}-\d{2})` \| ([^|]*) \|", section, re.MULTILINE))


def test_the_table_holds_the_released_revisions_of_versions_md(versions_md: str) -> None:
    statuses = _section_1(versions_md)
    released = sorted(version for version, status in statuses.items() if status.startswith("Released"))
    last_handshake = next(version for version, status in statuses.items() if 'Last "legacy"' in status)
    first_envelope = next(version for version, status in statuses.items() if 'First "modern"' in status)
    assert "2024-10-07" in statuses and "2024-10-07" not in released  # the parse reads the pre-release row
    assert [first for first, era in CLAIMS[0].steps] == [released[0], first_envelope]
    # Every released handshake revision is a row, in its era; nothing else is, and a row newer than the last
    # handshake revision can only be an envelope-era one.
    assert [version for version in released if version <= last_handshake] == list(HANDSHAKE_VERSIONS)[::-1]
    assert set(REVISIONS) <= set(released)
    for version, row in REVISIONS.items():
        assert row.era == (HANDSHAKE if version <= last_handshake else ENVELOPE), version


# ---- the record mechanism -----------------------------------------------------------------------------

def test_revisions_and_auth_rules_are_the_same_kind_of_record() -> None:
    assert issubclass(Revision, RevisionRecord) and issubclass(AuthRules, RevisionRecord)
    assert AuthRules._fields == ("version", "resource_parameter", "pkce_methods_advertised")
    assert list(AUTH_RULES) == list(REVISIONS)  # oldest first, one row each


def test_a_row_names_exactly_its_fields() -> None:
    fields = REVISIONS[LATEST_HANDSHAKE_VERSION]._asdict()
    with pytest.raises(TypeError, match=r"missing \['batching'\]"):
        Revision(**{name: value for name, value in fields.items() if name != "batching"})
    with pytest.raises(TypeError, match=r"unknown \['elicitation'\]"):
        Revision(**fields, elicitation=True)  # a field that nothing read, removed
    with pytest.raises(ValueError, match="era 'stateless'"):
        Revision(**{**fields, "era": "stateless"})


def test_a_row_is_a_value() -> None:
    row = REVISIONS["2025-06-18"]
    with pytest.raises(AttributeError):
        row.batching = True  # type: ignore[misc]
    copy = row._replace()
    assert copy == row and hash(copy) == hash(row) and copy is not row
    assert row._replace(batching=True) != row
    assert AUTH_RULES["2024-11-05"] == AUTH_RULES["2025-03-26"]._replace(version="2024-11-05")
    assert row != AuthRules(version="2025-06-18", resource_parameter=True, pkce_methods_advertised=False)
    assert repr(row).startswith("Revision(version='2025-06-18', era='handshake', batching=False")


def test_a_table_goes_oldest_first_one_row_per_version_eras_in_order() -> None:
    old, new = REVISIONS["2025-03-26"], REVISIONS["2025-06-18"]
    assert list(by_version([old, new])) == ["2025-03-26", "2025-06-18"]
    with pytest.raises(ValueError, match="two rows"):
        by_version([old, old])
    with pytest.raises(ValueError, match="oldest first"):
        by_version([new, old])
    with pytest.raises(ValueError, match="older era"):
        v._revisions([old._replace(era=ENVELOPE), new])


# ---- negotiation per era ------------------------------------------------------------------------------

@pytest.mark.parametrize("requested, supported, expected", [
    ("2025-06-18", HANDSHAKE_VERSIONS, "2025-06-18"),      # a revision we speak is echoed
    ("2024-11-05", HANDSHAKE_VERSIONS, "2024-11-05"),
    ("2099-01-01", HANDSHAKE_VERSIONS, "2025-11-25"),      # otherwise our latest is offered
    ("2024-10-07", HANDSHAKE_VERSIONS, "2025-11-25"),      # the pre-release string is not spoken
    (None, HANDSHAKE_VERSIONS, "2025-11-25"),
    (20250618, HANDSHAKE_VERSIONS, "2025-11-25"),
    ("2025-06-18", ("2025-03-26",), "2025-03-26"),         # a server restricted to older revisions
    ("2025-11-25", ("2025-03-26", "2025-11-25"), "2025-11-25"),
    ("2099-01-01", ("2025-03-26", "2025-11-25"), "2025-03-26"),  # the server's order is its preference
    # A version the table lacks is neither echoed nor offered, even when the caller lists it.
    ("2026-07-28", ("2026-07-28",) + HANDSHAKE_VERSIONS, "2025-11-25"),
])
def test_negotiate_in_the_handshake_era(requested: Any, supported: Tuple[str, ...], expected: str) -> None:
    assert negotiate(requested, supported) == expected


def test_negotiate_needs_a_handshake_revision() -> None:
    with pytest.raises(ValueError, match="no handshake revision"):
        negotiate("2025-11-25", ("2026-07-28",))
    assert negotiate("2025-06-18") == "2025-06-18"  # the default: every handshake revision


@pytest.mark.parametrize("offered, supported, expected", [
    (["2025-11-25"], HANDSHAKE_VERSIONS, None),  # a handshake revision is never chosen in the envelope era
    (["2026-07-28"], (), None),
    ([], HANDSHAKE_VERSIONS, None),
])
def test_choose_envelope_among_the_supported(offered: List[Any], supported: Tuple[str, ...],
                                          expected: Optional[str]) -> None:
    assert choose_envelope_version(offered, supported) == expected


# ---- the envelope-era row -------------------------------------------------------------------------------------

def test_the_envelope_row_changes_the_whole_table_constants_only() -> None:
    assert REVISIONS["2026-07-28"].era == ENVELOPE
    assert v.LATEST_VERSION == "2026-07-28"  # the whole table's newest: read by no default
    assert v.HANDSHAKE_VERSIONS == ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
    assert LATEST_HANDSHAKE_VERSION == "2025-11-25"


@pytest.mark.parametrize("requested, supported, expected", [
    ("2026-07-28", None, "2025-11-25"),  # initialize selects the handshake era: never counter-offer an envelope-era one
    ("2026-07-28", "all", "2025-11-25"),
    ("2099-01-01", "all", "2025-11-25"),
    ("2025-06-18", "all", "2025-06-18"),
])
def test_the_envelope_row_does_not_change_legacy_negotiation(requested: str, supported: Optional[str],
                                                           expected: str) -> None:
    if supported is None:
        assert negotiate(requested) == expected
    else:  # a server that lists every revision of the table, envelope-era first
        assert negotiate(requested, v.ENVELOPE_VERSIONS + HANDSHAKE_VERSIONS) == expected


@pytest.mark.parametrize("offered, expected", [
    (["2026-07-28"], "2026-07-28"),
    (["2025-11-25", "2026-07-28"], "2026-07-28"),
    (["2025-11-25"], None),          # the peer speaks only the handshake era
    (["2099-01-01", 7, None], None),
])
def test_envelope_negotiation(offered: List[Any], expected: Optional[str]) -> None:
    assert choose_envelope_version(offered) == expected
    assert choose_envelope_version(offered, v.ENVELOPE_VERSIONS + HANDSHAKE_VERSIONS) == expected


DEFAULTS_SCRIPT = """
import inspect, json, mcplite
from mcplite import Client, Server
from mcplite.cli import build_parser
from mcplite.oauth.rules import DEFAULT_PROTOCOL_VERSION
from mcplite.session import ClientSession

server = Server("defaults")
with Client(server) as client:
    negotiated = client.protocol_version
print(json.dumps({
    "client": inspect.signature(Client).parameters["protocol_version"].default,
    "client_session": inspect.signature(ClientSession.initialize).parameters["protocol_version"].default,
    "server": list(server.supported_versions),
    "negotiated": negotiated,
    "oauth": DEFAULT_PROTOCOL_VERSION,
    "cli": build_parser().get_default("protocol_version"),
}))
"""


def test_the_defaults_name_their_era() -> None:
    # A server serves both eras; a client probes ("auto") and so speaks 2026-07-28 with it; a session told to
    # run the handshake offers the handshake era's latest.
    completed = subprocess.run([sys.executable, "-c", DEFAULTS_SCRIPT], cwd=ROOT, capture_output=True,
                               text=True, timeout=WAIT * 3)
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout) == {
        "client": "auto", "client_session": "2025-11-25", "server": ["2026-07-28", *HANDSHAKE_VERSIONS],
        "negotiated": "2026-07-28", "oauth": "2025-11-25", "cli": "auto",
    }


def test_defaults_name_their_era() -> None:
    """Outside versions.py and the package's public re-export, nothing reads the era-blind constants, so the
    test above cannot miss a default that a later change adds."""
    era_blind = {"LATEST_VERSION", "SUPPORTED_VERSIONS"}
    allowed = {ROOT / "mcplite" / "protocol" / "versions.py", ROOT / "mcplite" / "__init__.py"}
    files = [*(ROOT / "mcplite").rglob("*.py"), *(ROOT / "tests" / "interop").rglob("*.py"),
             *(ROOT / "tests" / "conformance").rglob("*.py")]
    readers = sorted(
        f"{path.relative_to(ROOT)}: {node.id if isinstance(node, ast.Name) else node.attr}"
        for path in files if path not in allowed
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if (isinstance(node, ast.Name) and node.id in era_blind)
        or (isinstance(node, ast.Attribute) and node.attr in era_blind)
    )
    assert readers == []


# ---- capabilities -------------------------------------------------------------------------------------

@pytest.mark.parametrize("method, peer_capabilities, version, peer_is_server, expected", [
    ("tools/list", {}, "2025-11-25", True, "tools"),
    ("tools/call", {"tools": {}}, "2025-11-25", True, None),
    ("resources/list", {"tools": {}}, "2025-11-25", True, "resources"),
    ("resources/templates/list", {"resources": {}}, "2025-11-25", True, None),
    ("resources/read", None, "2025-11-25", True, "resources"),
    ("resources/subscribe", {"resources": {}}, "2025-11-25", True, "resources.subscribe"),
    ("resources/subscribe", {"resources": {"subscribe": True}}, "2025-11-25", True, None),
    ("resources/unsubscribe", {"resources": {"subscribe": False}}, "2025-11-25", True, "resources.subscribe"),
    ("prompts/list", {"prompts": None}, "2025-11-25", True, "prompts"),
    ("prompts/get", {"prompts": {"listChanged": True}}, "2025-11-25", True, None),
    ("logging/setLevel", {}, "2025-11-25", True, "logging"),
    ("completion/complete", {}, "2025-03-26", True, "completions"),
    ("completion/complete", {}, "2024-11-05", True, None),  # no `completions` capability before 2025-03-26
    ("ping", {}, "2025-11-25", True, None),
    ("tools/call", {}, "2025-11-25", False, None),          # the table of the other direction
    ("sampling/createMessage", {}, "2025-11-25", False, "sampling"),
    ("sampling/createMessage", {"sampling": {}}, "2025-11-25", False, None),
    ("elicitation/create", {"elicitation": {}}, "2025-06-18", False, None),
    ("elicitation/create", {"sampling": {}}, "2025-06-18", False, "elicitation"),
    ("roots/list", {"roots": {"listChanged": True}}, "2024-11-05", False, None),
    ("roots/list", {}, "2024-11-05", False, "roots"),
    ("ping", {}, "2025-11-25", False, None),
])
def test_missing_capability(method: str, peer_capabilities: Any, version: str, peer_is_server: bool,
                            expected: Optional[str]) -> None:
    assert caps.missing_capability(method, peer_capabilities, REVISIONS[version],
                                   peer_is_server=peer_is_server) == expected


SAMPLING_WITH_TOOLS = {"messages": [], "maxTokens": 10, "tools": [{"name": "t", "inputSchema": {}}]}
URL_ELICITATION = {"mode": "url", "message": "m", "url": "https://example.com", "elicitationId": "1"}
FORM_ELICITATION = {"mode": "form", "message": "m", "requestedSchema": {"type": "object"}}


@pytest.mark.parametrize("method, params, client_capabilities, version, expected", [
    ("sampling/createMessage", SAMPLING_WITH_TOOLS, {"sampling": {}}, "2025-11-25", "sampling.tools"),
    ("sampling/createMessage", SAMPLING_WITH_TOOLS, {"sampling": {"tools": {}}}, "2025-11-25", None),
    ("sampling/createMessage", SAMPLING_WITH_TOOLS, {"sampling": {"tools": True}}, "2025-11-25", "sampling.tools"),
    ("sampling/createMessage", SAMPLING_WITH_TOOLS, None, "2025-11-25", "sampling.tools"),
    ("sampling/createMessage", {"messages": [], "maxTokens": 10}, {"sampling": {}}, "2025-11-25", None),
    ("elicitation/create", URL_ELICITATION, {"elicitation": {"url": {}}}, "2025-11-25", None),
    ("elicitation/create", URL_ELICITATION, {"elicitation": {"url": {}}}, "2025-06-18", "elicitation.url"),
    ("elicitation/create", URL_ELICITATION, {"elicitation": {"form": {}}}, "2025-11-25", "elicitation.url"),
    ("elicitation/create", URL_ELICITATION, {"elicitation": {"url": {}}}, None, "elicitation.url"),
    ("elicitation/create", FORM_ELICITATION, {"elicitation": {}}, "2025-11-25", None),
    ("roots/list", {}, {}, "2025-11-25", None),  # the method's own capability is missing_capability's
])
def test_missing_request_capability(method: str, params: Dict[str, Any], client_capabilities: Any,
                                    version: Optional[str], expected: Optional[str]) -> None:
    rev = REVISIONS[version] if version else None
    assert caps.missing_request_capability(method, params, client_capabilities, rev) == expected


@pytest.mark.parametrize("client_capabilities, version, expected", [
    ({"elicitation": {"url": {}}}, "2025-11-25", True),
    ({"elicitation": {"form": {}, "url": {}}}, "2025-11-25", True),
    ({"elicitation": {"url": {}}}, "2025-06-18", False),  # the revision has no URL mode
    ({"elicitation": {}}, "2025-11-25", False),           # empty = form only
    ({"elicitation": True}, "2025-11-25", False),
    ({}, "2025-11-25", False),
    (None, None, False),
])
def test_url_elicitation_supported(client_capabilities: Any, version: Optional[str], expected: bool) -> None:
    rev = REVISIONS[version] if version else None
    assert caps.url_elicitation_supported(client_capabilities, rev) is expected


def test_sampling_tools_declared() -> None:
    assert caps.sampling_tools_declared({"sampling": {"tools": {}}})
    assert not caps.sampling_tools_declared({"sampling": {"tools": None}})
    assert not caps.sampling_tools_declared({"sampling": {}})
    assert not caps.sampling_tools_declared(None)
