"""protocol/http_rules: MCP over HTTP per revision, as tables. Pure: no sockets, no threads."""

from typing import Any, Dict, Optional

import pytest

from mcplite.protocol import http_rules, jsonrpc
from mcplite.protocol.http_rules import Route, is_valid_session_id, protocol_headers, route
from mcplite.protocol.versions import REVISIONS, revision

#: version -> the headers every HTTP request carries once it is negotiated (VERSIONS.md: 2025-06-18 onwards).
EXPECTED_HEADERS: Dict[str, Dict[str, str]] = {
    "2024-11-05": {},
    "2025-03-26": {},
    "2025-06-18": {"MCP-Protocol-Version": "2025-06-18"},
    "2025-11-25": {"MCP-Protocol-Version": "2025-11-25"},
    "2026-07-28": {"MCP-Protocol-Version": "2026-07-28"},
}


def test_every_revision_has_a_row_here() -> None:
    assert set(EXPECTED_HEADERS) == set(REVISIONS)


@pytest.mark.parametrize("version", sorted(EXPECTED_HEADERS))
def test_protocol_headers_per_revision(version: str) -> None:
    headers = protocol_headers(revision(version))
    assert dict(headers) == EXPECTED_HEADERS[version]
    assert protocol_headers(revision(version)) is headers  # one shared mapping: transports compare by identity


def test_no_protocol_headers_before_the_handshake() -> None:
    assert protocol_headers(None) is http_rules.NO_HEADERS and dict(http_rules.NO_HEADERS) == {}


INIT = jsonrpc.request(0, "initialize", {"protocolVersion": "2025-11-25"})
V11 = {"MCP-Protocol-Version": "2025-11-25"}

ROUTES = [
    # (what is sent, negotiated version, related request, the route)
    ("initialize", INIT, None, None, Route("initialize", 0, None, {}, opens_session=True)),
    ("ping before the handshake", jsonrpc.request(1, "ping"), None, None, Route("ping", 1)),
    ("initialized", jsonrpc.notification("notifications/initialized"), "2025-11-25", None,
     Route("notifications/initialized", None, None, V11, starts_listening=True)),
    ("a request", jsonrpc.request("a", "tools/call", {}), "2025-11-25", None, Route("tools/call", "a", None, V11)),
    ("a request on 2025-03-26", jsonrpc.request(2, "tools/list"), "2025-03-26", None, Route("tools/list", 2)),
    ("a notification", jsonrpc.notification("notifications/cancelled", {"requestId": 2}), "2025-06-18", None,
     Route("notifications/cancelled", None, None, {"MCP-Protocol-Version": "2025-06-18"})),
    ("a response", jsonrpc.result(7, {}), "2025-11-25", 7, Route(None, None, 7, V11)),
    ("an error", jsonrpc.error(None, -32700, "Parse error"), "2025-11-25", None, Route(None, None, None, V11)),
    ("a server's request while handling one", jsonrpc.request(3, "sampling/createMessage", {}), "2025-11-25", 9,
     Route("sampling/createMessage", 3, 9, V11)),
    ("progress while handling a request", jsonrpc.notification("notifications/progress", {}), "2024-11-05", 9,
     Route("notifications/progress", None, 9)),
    ("a batch of responses", [jsonrpc.result(1, {}), jsonrpc.result(2, {})], "2025-03-26", None, Route()),
]


@pytest.mark.parametrize("case,message,version,related,expected", ROUTES, ids=[row[0] for row in ROUTES])
def test_route_of_each_message(case: str, message: Any, version: Optional[str], related: Any,
                               expected: Route) -> None:
    assert route(message, revision(version) if version else None, related) == expected


def test_routes_compare_and_print_by_their_fields() -> None:
    assert Route("ping", 1) != Route("ping", 2)
    assert Route() != ("not", "a", "route")
    assert repr(Route("ping", 1)) == ("Route(method='ping', request_id=1, related_request_id=None, headers={}, "
                                      "opens_session=False, starts_listening=False, enveloped=False)")


def test_a_envelope_route_carries_its_own_headers_and_the_revision() -> None:
    call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "add"}}
    routed = route(call, revision("2026-07-28"), None, {"Mcp-Method": "tools/call", "Mcp-Name": "add"})
    assert routed == Route("tools/call", 3, None, {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call",
                                                   "Mcp-Name": "add"}, False, False, True)
    # no headers of its own: the revision's alone (a notification, a response)
    note = route({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}}, revision("2026-07-28"))
    assert note == Route("notifications/cancelled", None, None, {"MCP-Protocol-Version": "2026-07-28"},
                         False, False, True)
    answer = route({"jsonrpc": "2.0", "id": 1, "result": {}}, revision("2026-07-28"), 7)
    assert answer == Route(None, None, 7, {"MCP-Protocol-Version": "2026-07-28"}, False, False, True)
    # handshake revisions ignore per-message headers: theirs hold for the session
    assert route({"jsonrpc": "2.0", "id": 1, "method": "ping"}, revision("2025-11-25"), None, {"X": "y"}).headers == {
        "MCP-Protocol-Version": "2025-11-25"}


@pytest.mark.parametrize("value,valid", [
    ("session-1", True),
    ("a1B2~!#$%&'()*+,-./:;<=>?@[]^_`{|}", True),
    ("", False),
    ("has space", False),
    ("tab\there", False),
    ("new\nline", False),
    ("caf\u00e9", False),  # visible, but not ASCII
    ("\x7f", False),
    (None, False),
    (42, False),
])
def test_session_ids_are_visible_ascii(value: Any, valid: bool) -> None:
    assert is_valid_session_id(value) is valid


def test_media_types_and_names() -> None:
    assert http_rules.POST_ACCEPT == "application/json, text/event-stream"
    assert (http_rules.SESSION_ID_HEADER, http_rules.PROTOCOL_VERSION_HEADER) == ("MCP-Session-Id",
                                                                                   "MCP-Protocol-Version")
    assert (http_rules.MESSAGE_EVENT, http_rules.ENDPOINT_EVENT) == ("message", "endpoint")
    assert http_rules.LEGACY_FALLBACK_STATUSES == (400, 404, 405)
