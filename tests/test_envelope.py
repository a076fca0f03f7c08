"""protocol/envelope: the 2026-07-28 per-request `_meta` envelope, as tables.

Pure: no sockets, no threads. The rows come from the spec's basic/index.mdx (2026-07-28, "Per-request protocol
fields"), basic/versioning.mdx (the -32022 example), streamable-http.mdx (status codes), and
../shared/spec/CONFORMANCE-2026.md §4.0 (the order of the checks) and §4.1 (server-stateless).
"""

from typing import Any, Dict, Optional

import pytest

from mcplite.errors import RPCError
from mcplite.protocol.envelope import (
    CLIENT_CAPABILITIES_KEY,
    CLIENT_INFO_KEY,
    LOG_LEVEL_KEY,
    PROTOCOL_VERSION_KEY,
    SERVER_INFO_KEY,
    SUBSCRIPTION_ID_KEY,
    Envelope,
    classify,
    http_status,
    missing_capabilities_error,
    read_envelope,
)
from mcplite.protocol.versions import ENVELOPE, HANDSHAKE

ENVELOPE_VERSIONS = ("2026-07-28",)
ALL_VERSIONS = ("2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
V = "2026-07-28"
CLIENT = {"name": "conformance-client", "version": "1.0.0"}
#: CONFORMANCE-2026 §4's validMeta: version, client info and an empty capability object.
VALID_META: Dict[str, Any] = {PROTOCOL_VERSION_KEY: V, CLIENT_INFO_KEY: CLIENT, CLIENT_CAPABILITIES_KEY: {}}
#: The headers a conformant HTTP client sends with a `server/discover` carrying VALID_META.
DISCOVER_HEADERS = {"MCP-Protocol-Version": V, "Mcp-Method": "server/discover"}


def meta(**changes: Any) -> Dict[str, Any]:
    """VALID_META with keys replaced; a value of `DROP` removes the key."""
    out = dict(VALID_META)
    for short, value in changes.items():
        key = {"version": PROTOCOL_VERSION_KEY, "info": CLIENT_INFO_KEY, "caps": CLIENT_CAPABILITIES_KEY,
               "level": LOG_LEVEL_KEY}.get(short, short)
        if value is DROP:
            out.pop(key, None)
        else:
            out[key] = value
    return out


DROP = object()


def read(method: str, params: Any, headers: Optional[Dict[str, str]] = None) -> Envelope:
    return read_envelope(method, params, supported_envelope=ENVELOPE_VERSIONS, supported_all=ALL_VERSIONS,
                         headers=headers)


def test_reserved_key_names_are_the_spec_s() -> None:
    assert PROTOCOL_VERSION_KEY == "io.modelcontextprotocol/protocolVersion"
    assert CLIENT_INFO_KEY == "io.modelcontextprotocol/clientInfo"
    assert CLIENT_CAPABILITIES_KEY == "io.modelcontextprotocol/clientCapabilities"
    assert LOG_LEVEL_KEY == "io.modelcontextprotocol/logLevel"
    assert SUBSCRIPTION_ID_KEY == "io.modelcontextprotocol/subscriptionId"
    assert SERVER_INFO_KEY == "io.modelcontextprotocol/serverInfo"


# -- classify --------------------------------------------------------------------------------------------------

CLASSIFY = [
    # (case, body, era)
    ("enveloped request", {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": VALID_META}},
     ENVELOPE),
    ("enveloped, version only (the ladder answers the rest)",
     {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {PROTOCOL_VERSION_KEY: "v999"}}},
     ENVELOPE),
    ("enveloped, version null: the key is the evidence",
     {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {PROTOCOL_VERSION_KEY: None}}},
     ENVELOPE),
    ("enveloped notification", {"jsonrpc": "2.0", "method": "notifications/cancelled",
                                "params": {"_meta": VALID_META, "requestId": 1}}, ENVELOPE),
    ("enveloped initialize: envelope-era, refused by the ladder (§4.1 check 17)",
     {"jsonrpc": "2.0", "id": 500, "method": "initialize", "params": {"_meta": VALID_META}}, ENVELOPE),
    ("legacy initialize", {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                           "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                                      "clientInfo": CLIENT}}, HANDSHAKE),
    ("initialize with _meta lacking the version key",
     {"jsonrpc": "2.0", "id": 0, "method": "initialize",
      "params": {"protocolVersion": "2025-11-25", "_meta": {"progressToken": 1}}}, HANDSHAKE),
    ("initialize without params", {"jsonrpc": "2.0", "id": 0, "method": "initialize"}, HANDSHAKE),
    ("initialize as a notification says nothing", {"jsonrpc": "2.0", "method": "initialize"}, None),
    ("unenveloped request", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, None),
    ("_meta without the version key", {"jsonrpc": "2.0", "id": 1, "method": "tools/list",
                                       "params": {"_meta": {CLIENT_CAPABILITIES_KEY: {}}}}, None),
    ("_meta not an object", {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": [1]}}, None),
    ("params not an object", {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": [VALID_META]}, None),
    ("a response", {"jsonrpc": "2.0", "id": 1, "result": {"_meta": VALID_META}}, None),
    ("a batch", [{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": VALID_META}}], None),
    ("not an object", "initialize", None),
    ("method not a string", {"jsonrpc": "2.0", "id": 1, "method": 7, "params": {"_meta": VALID_META}}, None),
]


@pytest.mark.parametrize("case, body, era", CLASSIFY, ids=[row[0] for row in CLASSIFY])
def test_classify(case: str, body: Any, era: Optional[str]) -> None:
    assert classify(body) == era


# -- the ladder: accepted envelopes ----------------------------------------------------------------------------

VALID = [
    # (case, method, params, headers, expected envelope)
    ("validMeta", "server/discover", {"_meta": VALID_META}, None, Envelope(V, {}, client_info=CLIENT)),
    ("client info is optional (§4.1 check 7)", "server/discover", {"_meta": meta(info=DROP)}, None,
     Envelope(V, {})),
    ("capabilities, level and progress token are read",
     "tools/call", {"name": "t", "_meta": meta(caps={"sampling": {}, "elicitation": {}}, level="warning",
                                              progressToken="p-1")}, None,
     Envelope(V, {"sampling": {}, "elicitation": {}}, client_info=CLIENT, log_level="warning",
              progress_token="p-1")),
    ("an integer progress token", "tools/list", {"_meta": meta(progressToken=7)}, None,
     Envelope(V, {}, client_info=CLIENT, progress_token=7)),
    ("other _meta keys are ignored", "tools/list",
     {"_meta": meta(traceparent="00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01",
                    **{"com.example/x": 1})}, None, Envelope(V, {}, client_info=CLIENT)),
    ("over HTTP, conformant headers", "server/discover", {"_meta": VALID_META}, DISCOVER_HEADERS,
     Envelope(V, {}, client_info=CLIENT)),
    ("over HTTP, header names in any case, values trimmed", "server/discover", {"_meta": VALID_META},
     {"mcp-protocol-version": " 2026-07-28\t", "MCP-METHOD": "server/discover"},
     Envelope(V, {}, client_info=CLIENT)),
    ("over HTTP, a named method with its Mcp-Name", "tools/call", {"name": "echo", "_meta": VALID_META},
     {"MCP-Protocol-Version": V, "Mcp-Method": "tools/call", "Mcp-Name": "echo"},
     Envelope(V, {}, client_info=CLIENT)),
]


@pytest.mark.parametrize("case, method, params, headers, expected", VALID, ids=[row[0] for row in VALID])
def test_valid_envelopes(case: str, method: str, params: Any, headers: Optional[Dict[str, str]],
                         expected: Envelope) -> None:
    assert read(method, params, headers) == expected


def test_envelope_is_read_only_and_compares_by_value() -> None:
    envelope = read("tools/list", {"_meta": meta(level="debug")})
    assert (envelope.version, envelope.client_info, envelope.client_capabilities, envelope.log_level,
            envelope.progress_token) == (V, CLIENT, {}, "debug", None)
    with pytest.raises(AttributeError):
        envelope.version = "2025-11-25"  # type: ignore[misc]
    assert envelope != Envelope(V, {}, client_info=CLIENT)
    assert "log_level='debug'" in repr(envelope)


# -- the ladder: every rung's error ----------------------------------------------------------------------------

UNSUPPORTED = {"supported": list(ALL_VERSIONS), "requested": "v999.0.0"}
REFUSED = [
    # (case, method, params, headers, code, message, data)
    # Rung 1: the required keys, -32602 (§4.1 checks 1-6).
    ("no params", "server/discover", None, None, -32602,
     "Invalid params: missing _meta (a 2026-07-28 request carries its protocol version and client capabilities "
     "there)", None),
    ("params {} (check 1)", "server/discover", {}, None, -32602,
     "Invalid params: missing _meta (a 2026-07-28 request carries its protocol version and client capabilities "
     "there)", None),
    ("params not an object", "server/discover", [VALID_META], None, -32602,
     "Invalid params: missing _meta (a 2026-07-28 request carries its protocol version and client capabilities "
     "there)", None),
    ("_meta null", "server/discover", {"_meta": None}, None, -32602,
     "Invalid params: missing _meta (a 2026-07-28 request carries its protocol version and client capabilities "
     "there)", None),
    ("_meta not an object", "server/discover", {"_meta": "2026-07-28"}, None, -32602,
     "Invalid params: _meta must be an object", None),
    ("no protocol version (check 3)", "server/discover", {"_meta": meta(version=DROP)}, None, -32602,
     "Invalid params: missing required _meta field io.modelcontextprotocol/protocolVersion", None),
    ("protocol version not a string", "server/discover", {"_meta": meta(version=20260728)}, None, -32602,
     "Invalid params: _meta field io.modelcontextprotocol/protocolVersion must be a string", None),
    ("no client capabilities (check 5)", "server/discover", {"_meta": meta(caps=DROP)}, None, -32602,
     "Invalid params: missing required _meta field io.modelcontextprotocol/clientCapabilities", None),
    ("client capabilities not an object", "server/discover", {"_meta": meta(caps=["sampling"])}, None, -32602,
     "Invalid params: _meta field io.modelcontextprotocol/clientCapabilities must be an object", None),
    ("rung 1 before the version: no capabilities and an unsupported version", "server/discover",
     {"_meta": meta(version="v999.0.0", caps=DROP)}, None, -32602,
     "Invalid params: missing required _meta field io.modelcontextprotocol/clientCapabilities", None),
    ("rung 1 before the headers", "server/discover", {"_meta": meta(caps=DROP)}, {}, -32602,
     "Invalid params: missing required _meta field io.modelcontextprotocol/clientCapabilities", None),
    # Rung 2: the version header, -32020.
    ("header 2026-07-28, _meta v999.0.0 (check 14)", "server/discover", {"_meta": meta(version="v999.0.0")},
     DISCOVER_HEADERS, -32020,
     "Header mismatch: MCP-Protocol-Version header value '2026-07-28' does not match body value 'v999.0.0'", None),
    ("no version header", "server/discover", {"_meta": VALID_META}, {"Mcp-Method": "server/discover"}, -32020,
     "Header mismatch: missing required MCP-Protocol-Version header", None),
    ("a legacy version header over an envelope-era body", "server/discover", {"_meta": VALID_META},
     {"MCP-Protocol-Version": "2025-11-25", "Mcp-Method": "server/discover"}, -32020,
     "Header mismatch: MCP-Protocol-Version header value '2025-11-25' does not match body value '2026-07-28'",
     None),
    ("header values are case-sensitive", "server/discover", {"_meta": meta(version="v999.0.0")},
     {"MCP-Protocol-Version": "V999.0.0", "Mcp-Method": "server/discover"}, -32020,
     "Header mismatch: MCP-Protocol-Version header value 'V999.0.0' does not match body value 'v999.0.0'", None),
    # Rung 3: the version, -32022 with every supported version (both eras) and the one requested.
    ("unsupported version (checks 12-13)", "server/discover", {"_meta": meta(version="v999.0.0")}, None,
     -32022, "Unsupported protocol version", UNSUPPORTED),
    ("unsupported version over HTTP, headers agreeing", "server/discover", {"_meta": meta(version="v999.0.0")},
     {"MCP-Protocol-Version": "v999.0.0", "Mcp-Method": "server/discover"}, -32022,
     "Unsupported protocol version", UNSUPPORTED),
    ("a handshake version in _meta", "tools/list", {"_meta": meta(version="2025-11-25")}, None, -32022,
     "Unsupported protocol version", {"supported": list(ALL_VERSIONS), "requested": "2025-11-25"}),
    ("the empty string", "tools/list", {"_meta": meta(version="")}, None, -32022,
     "Unsupported protocol version", {"supported": list(ALL_VERSIONS), "requested": ""}),
    ("rung 3 before rung 4: unsupported version and a wrong Mcp-Method", "tools/list",
     {"_meta": meta(version="v999.0.0")}, {"MCP-Protocol-Version": "v999.0.0", "Mcp-Method": "prompts/list"},
     -32022, "Unsupported protocol version", UNSUPPORTED),
    # Rung 4: Mcp-Method and Mcp-Name, -32020 (mcp_headers words the message).
    ("no Mcp-Method", "tools/list", {"_meta": VALID_META}, {"MCP-Protocol-Version": V}, -32020,
     "Header mismatch: missing required Mcp-Method header", None),
    ("Mcp-Method differs", "tools/list", {"_meta": VALID_META},
     {"MCP-Protocol-Version": V, "Mcp-Method": "prompts/list"}, -32020,
     "Header mismatch: Mcp-Method header value 'prompts/list' does not match body value 'tools/list'", None),
    ("no Mcp-Name on tools/call", "tools/call", {"name": "echo", "_meta": VALID_META},
     {"MCP-Protocol-Version": V, "Mcp-Method": "tools/call"}, -32020,
     "Header mismatch: missing required Mcp-Name header", None),
    ("rung 4 before rung 6: initialize with a wrong Mcp-Method", "initialize", {"_meta": VALID_META},
     DISCOVER_HEADERS, -32020,
     "Header mismatch: Mcp-Method header value 'server/discover' does not match body value 'initialize'", None),
    # Rung 6: methods 2026-07-28 removed, -32601 (checks 17-21).
    ("initialize", "initialize", {"_meta": VALID_META}, None, -32601, "Method not found: initialize", None),
    ("ping", "ping", {"_meta": VALID_META}, None, -32601, "Method not found: ping", None),
    ("logging/setLevel", "logging/setLevel", {"level": "info", "_meta": VALID_META}, None, -32601,
     "Method not found: logging/setLevel", None),
    ("resources/subscribe", "resources/subscribe", {"uri": "a://b", "_meta": VALID_META}, None, -32601,
     "Method not found: resources/subscribe", None),
    ("resources/unsubscribe over HTTP", "resources/unsubscribe", {"uri": "a://b", "_meta": VALID_META},
     {"MCP-Protocol-Version": V, "Mcp-Method": "resources/unsubscribe"}, -32601,
     "Method not found: resources/unsubscribe", None),
    ("rung 6 before rung 7: ping with a bad log level", "ping", {"_meta": meta(level="loud")}, None, -32601,
     "Method not found: ping", None),
    # Rung 7: the optional keys, -32602.
    ("client info not an object", "tools/list", {"_meta": meta(info="conformance-client")}, None, -32602,
     "Invalid params: _meta field io.modelcontextprotocol/clientInfo must be an object", None),
    ("unknown log level", "tools/list", {"_meta": meta(level="loud")}, None, -32602,
     "Invalid params: _meta field io.modelcontextprotocol/logLevel must be one of debug, info, notice, warning, "
     "error, critical, alert, emergency", None),
    ("log level in the wrong case", "tools/list", {"_meta": meta(level="INFO")}, None, -32602,
     "Invalid params: _meta field io.modelcontextprotocol/logLevel must be one of debug, info, notice, warning, "
     "error, critical, alert, emergency", None),
    ("progress token a boolean", "tools/list", {"_meta": meta(progressToken=True)}, None, -32602,
     "Invalid params: _meta field progressToken must be a string or a number", None),
    ("progress token an object", "tools/list", {"_meta": meta(progressToken={"id": 1})}, None, -32602,
     "Invalid params: _meta field progressToken must be a string or a number", None),
]


@pytest.mark.parametrize("case, method, params, headers, code, message, data", REFUSED,
                         ids=[row[0] for row in REFUSED])
def test_ladder_refusals(case: str, method: str, params: Any, headers: Optional[Dict[str, str]], code: int,
                         message: str, data: Any) -> None:
    with pytest.raises(RPCError) as caught:
        read(method, params, headers)
    assert (caught.value.code, caught.value.message, caught.value.data) == (code, message, data)
    assert type(caught.value) is RPCError


def test_supported_lists_are_arguments() -> None:
    """A legacy-only server (no envelope-era version) answers every envelope -32022, listing its legacy versions
    (MODERN.md spec point 9): both SDKs then fall back to initialize."""
    with pytest.raises(RPCError) as caught:
        read_envelope("server/discover", {"_meta": VALID_META}, supported_envelope=[],
                      supported_all=iter(["2025-11-25", "2025-06-18"]))
    assert (caught.value.code, caught.value.data) == (-32022, {"supported": ["2025-11-25", "2025-06-18"],
                                                               "requested": V})
    envelope = read_envelope("tools/list", {"_meta": meta(version="2027-01-01")},
                             supported_envelope=iter(["2026-07-28", "2027-01-01"]), supported_all=())
    assert envelope.version == "2027-01-01"


# -- the status table and -32021 -------------------------------------------------------------------------------

STATUS = [
    (-32700, 400), (-32600, 400), (-32602, 400), (-32020, 400), (-32021, 400), (-32022, 400),
    (-32601, 404),
    (-32603, 200), (-32002, 200), (-32042, 200), (-32000, 200), (-32001, 200), (0, 200), (1234, 200),
]


@pytest.mark.parametrize("code, status", STATUS, ids=[str(row[0]) for row in STATUS])
def test_http_status(code: int, status: int) -> None:
    assert http_status(code) == status


def test_every_ladder_error_has_a_4xx_status() -> None:
    for case, method, params, headers, code, _, _ in REFUSED:
        assert http_status(code) in (400, 404), case


MISSING = [
    # (case, required, message, requiredCapabilities)
    ("an object (§4.1 checks 15-16)", {"sampling": {}}, "Missing required client capability: sampling",
     {"sampling": {}}),
    ("sub-fields are kept", {"elicitation": {"url": {}}, "sampling": {"tools": {}}},
     "Missing required client capability: elicitation, sampling", {"elicitation": {"url": {}},
                                                                   "sampling": {"tools": {}}}),
    ("names become empty objects", ["roots", "sampling"], "Missing required client capability: roots, sampling",
     {"roots": {}, "sampling": {}}),
]


@pytest.mark.parametrize("case, required, message, expected", MISSING, ids=[row[0] for row in MISSING])
def test_missing_capabilities_error(case: str, required: Any, message: str, expected: Dict[str, Any]) -> None:
    error = missing_capabilities_error(required)
    assert (error.code, error.message, error.data) == (-32021, message, {"requiredCapabilities": expected})
    assert http_status(error.code) == 400


def test_missing_capabilities_error_copies_its_argument() -> None:
    required: Dict[str, Any] = {"sampling": {}}
    error = missing_capabilities_error(required)
    required["roots"] = {}
    assert error.data == {"requiredCapabilities": {"sampling": {}}}


@pytest.mark.parametrize("required, problem", [("sampling", TypeError), ({}, ValueError), ([], ValueError)])
def test_missing_capabilities_error_refuses(required: Any, problem: type) -> None:
    with pytest.raises(problem):
        missing_capabilities_error(required)
