"""x-mcp-header on the server: `Header` in a tool's signature, the checks at registration, and the per-call check.

Pure: servers are built and their tool entries read, no session, no threads. The rules come from the spec's
streamable-http.mdx (2026-07-28: "Custom Headers from Tool Parameters", "Server Validation") and
../shared/spec/CONFORMANCE-2026.md §4.4 and §5.5; the codec and schema rules themselves are table-tested in
test_mcp_headers.py, so these tests check that the server uses them, with its own messages.
"""

from typing import Annotated, Any, Dict, List, Optional

import pytest

import mcplite
from mcplite import Header, Server
from mcplite.errors import HEADER_MISMATCH
from mcplite.protocol.mcp_headers import ParamHeader
from mcplite.schema.functions import type_schema


def register(fn: Any, **options: Any) -> Any:
    """The entry of ``fn`` registered as a tool on a fresh server."""
    server = Server("headers")
    server.add_tool(fn, **options)
    return server._tools[options.get("name") or fn.__name__]


# -- Header in a signature -------------------------------------------------------------------------------------

def test_header_is_exported_from_mcplite():
    assert mcplite.Header is Header
    assert "Header" in mcplite.__all__
    assert Header("Region") == Header("Region") and Header("Region") != Header("Zone")
    assert repr(Header("Region")) == "Header('Region')"


@pytest.mark.parametrize("annotation, expected", [
    (Annotated[str, Header("Region")], {"type": "string", "x-mcp-header": "Region"}),
    (Annotated[int, Header("Shard")], {"type": "integer", "x-mcp-header": "Shard"}),
    (Annotated[bool, Header("Dry-Run")], {"type": "boolean", "x-mcp-header": "Dry-Run"}),
    (Annotated[str, Header("Region"), "the data centre"],
     {"type": "string", "description": "the data centre", "x-mcp-header": "Region"}),
    # Optional, in either spelling: the one primitive type (null, like leaving it out, means no header).
    (Annotated[Optional[str], Header("Region")], {"type": "string", "x-mcp-header": "Region"}),
    (Optional[Annotated[int, Header("Shard")]], {"type": "integer", "x-mcp-header": "Shard"}),
    (Optional[Annotated[bool, Header("Dry"), "no writes"]],
     {"type": "boolean", "description": "no writes", "x-mcp-header": "Dry"}),
])
def test_header_becomes_x_mcp_header_in_the_property_schema(annotation, expected):
    assert type_schema(annotation) == expected


def test_valid_headers_are_published_and_mapped_at_registration():
    def query(region: Annotated[str, Header("Region")], shard: Annotated[int, Header("Shard")],
              dry_run: Annotated[bool, Header("Dry-Run")] = False, text: str = "") -> str:
        return text

    entry = register(query)
    properties = entry.definition["inputSchema"]["properties"]
    assert properties["region"] == {"type": "string", "x-mcp-header": "Region"}
    assert properties["shard"] == {"type": "integer", "x-mcp-header": "Shard"}
    assert properties["dry_run"] == {"type": "boolean", "x-mcp-header": "Dry-Run", "default": False}
    assert "x-mcp-header" not in properties["text"]
    assert entry.param_headers == {
        ("region",): ParamHeader(("region",), "Mcp-Param-Region", "string"),
        ("shard",): ParamHeader(("shard",), "Mcp-Param-Shard", "integer"),
        ("dry_run",): ParamHeader(("dry_run",), "Mcp-Param-Dry-Run", "boolean"),
    }
    # The annotation changes the schema only: the function is called as before.
    assert entry.bind({"region": "eu", "shard": 3}) == {"region": "eu", "shard": 3}


def test_a_tool_without_headers_has_an_empty_map():
    def plain(a: int, b: Optional[str] = None) -> int:
        return a

    entry = register(plain)
    assert entry.param_headers == {}
    assert entry.check_param_headers({"Mcp-Param-A": "anything"}, {"a": 1}) is None


# -- invalid annotations: refused at registration --------------------------------------------------------------

def empty_name(region: Annotated[str, Header("")]) -> str:
    return region


def space_in_name(region: Annotated[str, Header("My Region")]) -> str:
    return region


def colon_in_name(region: Annotated[str, Header("Region:")]) -> str:
    return region


def non_ascii_name(region: Annotated[str, Header("Régión")]) -> str:
    return region


def duplicate_names(a: Annotated[str, Header("Region")], b: Annotated[str, Header("REGION")]) -> str:
    return a + b


def on_a_number(ratio: Annotated[float, Header("Ratio")]) -> float:
    return ratio


def on_a_list(tags: Annotated[List[str], Header("Tags")]) -> str:
    return ",".join(tags)


def on_an_object(extra: Annotated[Dict[str, int], Header("Extra")]) -> str:
    return str(extra)


def on_any(value: Annotated[Optional[int], "x", Header("Value")] = None,
           other: Annotated[Any, Header("Other")] = None) -> str:
    return str(value)


INVALID = [
    # (case, function, words the message must hold besides the tool's name)
    ("empty name", empty_name, ["region", "empty"]),
    ("a space is not a token character", space_in_name, ["My Region", "token", "' '"]),
    ("a colon is not a token character", colon_in_name, ["Region:", "token", "':'"]),
    ("non-ASCII is not a token character", non_ascii_name, ["token"]),
    ("duplicate, case-insensitively", duplicate_names, ["REGION", "repeats", "case-insensitive"]),
    ("number is not allowed", on_a_number, ["Ratio", "'number'", "string, integer or boolean"]),
    ("array", on_a_list, ["Tags", "'array'"]),
    ("object", on_an_object, ["Extra", "'object'"]),
    ("no type at all (the first, valid, passes)", on_any, ["Other", "None", "string, integer or boolean"]),
]


@pytest.mark.parametrize("case, fn, words", INVALID, ids=[row[0] for row in INVALID])
def test_an_invalid_annotation_is_refused_with_the_tool_and_the_problem(case, fn, words):
    server = Server("headers")
    with pytest.raises(ValueError) as caught:
        server.add_tool(fn)
    message = str(caught.value)
    assert f"tool {fn.__name__!r}" in message and "x-mcp-header" in message
    for word in words:
        assert word in message, (word, message)
    assert fn.__name__ not in server._tools  # nothing was registered


@pytest.mark.parametrize("bound", ["minimum", "maximum"])
def test_integer_bounds_beyond_the_safe_range_are_refused(bound):
    schema = {"type": "object", "properties": {
        "shard": {"type": "integer", "x-mcp-header": "Shard", bound: 2 ** 53 if bound == "maximum" else -2 ** 53}}}
    with pytest.raises(ValueError, match=r"tool 'shard'.*Shard.*safe integer range"):
        register(lambda shard: shard, name="shard", input_schema=schema)
    within = {"type": "object", "properties": {
        "shard": {"type": "integer", "x-mcp-header": "Shard", "minimum": -(2 ** 53 - 1), "maximum": 2 ** 53 - 1}}}
    assert register(lambda shard: shard, name="shard", input_schema=within).param_headers


HAND_WRITTEN_INVALID = [
    ("a number property", {"ratio": {"type": "number", "x-mcp-header": "Ratio"}}, "'number'"),
    ("a non-string name", {"a": {"type": "string", "x-mcp-header": 7}}, "must be a string"),
    ("a nested annotation out of reach", {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}},
     "not reachable"),
    ("duplicate", {"a": {"type": "string", "x-mcp-header": "X-Id"}, "b": {"type": "string", "x-mcp-header": "x-id"}},
     "repeats"),
]


@pytest.mark.parametrize("case, properties, words", HAND_WRITTEN_INVALID, ids=[r[0] for r in HAND_WRITTEN_INVALID])
def test_a_hand_written_input_schema_is_checked_too(case, properties, words):
    def handwritten(**arguments: Any) -> str:
        return "ok"

    with pytest.raises(ValueError) as caught:
        register(handwritten, input_schema={"type": "object", "properties": properties})
    assert "tool 'handwritten'" in str(caught.value) and words in str(caught.value)


def test_a_hand_written_input_schema_gives_the_map_and_nested_paths_work():
    def handwritten(**arguments: Any) -> str:
        return "ok"

    schema = {"type": "object", "properties": {
        "target": {"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}},
        "count": {"type": "integer", "x-mcp-header": "Count"}}}
    entry = register(handwritten, input_schema=schema)
    assert entry.definition["inputSchema"] is schema
    assert entry.param_headers == {
        ("target", "region"): ParamHeader(("target", "region"), "Mcp-Param-Region", "string"),
        ("count",): ParamHeader(("count",), "Mcp-Param-Count", "integer"),
    }
    arguments = {"target": {"region": "eu"}, "count": 2}
    assert entry.check_param_headers({"Mcp-Param-Region": "eu", "Mcp-Param-Count": "2"}, arguments) is None
    error = entry.check_param_headers({"Mcp-Param-Region": "us", "Mcp-Param-Count": "2"}, arguments)
    assert error is not None and error.code == HEADER_MISMATCH


def test_a_union_may_carry_one_header_only():
    from typing import Union

    with pytest.raises(TypeError, match="one Header"):
        type_schema(Union[Annotated[str, Header("A")], Annotated[int, Header("B")]])


# -- the per-call check ----------------------------------------------------------------------------------------

def routed(region: Annotated[str, Header("Region")], shard: Annotated[Optional[int], Header("Shard")] = None,
           dry_run: Annotated[bool, Header("Dry-Run")] = False, query: str = "") -> str:
    return query


ROUTED = register(routed)

ACCEPT = [
    # (case, headers, arguments)
    ("plain value", {"Mcp-Param-Region": "us-west1"}, {"region": "us-west1"}),
    ("header names in any case", {"mcp-param-region": "eu", "MCP-PARAM-SHARD": "4"}, {"region": "eu", "shard": 4}),
    ("optional whitespace trimmed", {"Mcp-Param-Region": "  eu\t"}, {"region": "eu"}),
    ("base64 of non-ASCII", {"Mcp-Param-Region": "=?base64?SGVsbG8sIOS4lueVjA==?="}, {"region": "Hello, 世界"}),
    ("base64 of spaces around", {"Mcp-Param-Region": "=?base64?IHBhZGRlZCA=?="}, {"region": " padded "}),
    ("base64 of a plain value", {"Mcp-Param-Region": "=?base64?ZXU=?="}, {"region": "eu"}),
    ("empty string", {"Mcp-Param-Region": ""}, {"region": ""}),
    ("integer, leading zeros", {"Mcp-Param-Region": "eu", "Mcp-Param-Shard": "007"}, {"region": "eu", "shard": 7}),
    ("integer, plus sign", {"Mcp-Param-Region": "eu", "Mcp-Param-Shard": "+7"}, {"region": "eu", "shard": 7}),
    ("integer, integral decimal", {"Mcp-Param-Region": "eu", "Mcp-Param-Shard": "7.0"}, {"region": "eu", "shard": 7}),
    ("integer body as 7.0", {"Mcp-Param-Region": "eu", "Mcp-Param-Shard": "7"}, {"region": "eu", "shard": 7.0}),
    ("negative integer", {"Mcp-Param-Region": "eu", "Mcp-Param-Shard": "-3"}, {"region": "eu", "shard": -3}),
    ("boolean", {"Mcp-Param-Region": "eu", "Mcp-Param-Dry-Run": "true"}, {"region": "eu", "dry_run": True}),
    ("null argument: no header", {"Mcp-Param-Region": "eu"}, {"region": "eu", "shard": None}),
    ("absent optional argument: no header", {"Mcp-Param-Region": "eu"}, {"region": "eu", "query": "x"}),
    ("no arguments at all: nothing to mirror", {}, None),  # (the call's own validation refuses it)
    ("other headers ignored", {"Mcp-Param-Region": "eu", "Mcp-Method": "tools/call", "X-Other": "1"},
     {"region": "eu"}),
]


@pytest.mark.parametrize("case, headers, arguments", ACCEPT, ids=[row[0] for row in ACCEPT])
def test_matching_headers_are_accepted(case, headers, arguments):
    assert ROUTED.check_param_headers(headers, arguments) is None


REJECT = [
    # (case, headers, arguments, words the message holds)
    ("missing header", {}, {"region": "eu"}, "missing required Mcp-Param-Region header"),
    ("missing integer header", {"Mcp-Param-Region": "eu"}, {"region": "eu", "shard": 2},
     "missing required Mcp-Param-Shard header"),
    ("different value", {"Mcp-Param-Region": "us"}, {"region": "eu"}, "'us' does not match body value 'eu'"),
    ("case matters in values", {"Mcp-Param-Region": "EU"}, {"region": "eu"}, "does not match"),
    ("base64 of another value", {"Mcp-Param-Region": "=?base64?dXM=?="}, {"region": "eu"}, "does not match"),
    ("base64 not strict", {"Mcp-Param-Region": "=?base64?ZXU?="}, {"region": "eu"}, "malformed"),
    ("base64 with stray characters", {"Mcp-Param-Region": "=?base64?Z!XU=?="}, {"region": "eu"}, "malformed"),
    ("base64 of invalid UTF-8", {"Mcp-Param-Region": "=?base64?/w==?="}, {"region": "eu"}, "not UTF-8"),
    ("integer differs", {"Mcp-Param-Region": "eu", "Mcp-Param-Shard": "8"}, {"region": "eu", "shard": 7},
     "does not match"),
    ("integer not integral", {"Mcp-Param-Region": "eu", "Mcp-Param-Shard": "7.5"}, {"region": "eu", "shard": 7},
     "does not match"),
    ("integer in hex", {"Mcp-Param-Region": "eu", "Mcp-Param-Shard": "0x7"}, {"region": "eu", "shard": 7},
     "does not match"),
    ("boolean spelled otherwise", {"Mcp-Param-Region": "eu", "Mcp-Param-Dry-Run": "True"},
     {"region": "eu", "dry_run": True}, "does not match"),
    ("a body value of the wrong type", {"Mcp-Param-Region": "1"}, {"region": 1}, "(an integer, not a string)"),
    ("header without an argument", {"Mcp-Param-Region": "eu", "Mcp-Param-Shard": "1"}, {"region": "eu"},
     "present but the body has no value for 'shard'"),
    ("header for a null argument", {"Mcp-Param-Region": "eu", "Mcp-Param-Shard": "1"}, {"region": "eu", "shard": None},
     "present but the body has no value"),
]


@pytest.mark.parametrize("case, headers, arguments, words", REJECT, ids=[row[0] for row in REJECT])
def test_missing_mismatched_or_malformed_headers_are_refused_with_32020(case, headers, arguments, words):
    error = ROUTED.check_param_headers(headers, arguments)
    assert error is not None
    assert error.code == HEADER_MISMATCH == -32020
    assert error.message.startswith("Header mismatch: ")
    assert words in error.message, error.message
