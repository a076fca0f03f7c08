"""protocol/mcp_headers: the 2026-07-28 mirrored headers (Mcp-Method, Mcp-Name, Mcp-Param-*), as tables.

Pure: no sockets, no threads. The rows come from the spec's streamable-http.mdx (2026-07-28: "Value Encoding",
"Schema Extension", "Server Validation") and ../shared/spec/CONFORMANCE-2026.md §4.3, §4.4, §5.4 and §5.5.
"""

from typing import Any, Dict, Optional, Tuple

import pytest

from mcplite.errors import HEADER_MISMATCH, RPCError
from mcplite.protocol import jsonrpc
from mcplite.protocol.mcp_headers import (
    MAX_SAFE_INTEGER,
    HeaderValueError,
    ParamHeader,
    check_request_headers,
    check_schema,
    decode_value,
    encode_value,
    header_map,
    param_headers,
    standard_headers,
)

# -- the value codec -----------------------------------------------------------------------------------------

ENCODE = [
    # (case, value, header text)
    ("plain ASCII", "us-west1", "us-west1"),
    ("inner spaces stay plain", "us west 1", "us west 1"),
    ("empty string: present, empty", "", ""),
    ("visible punctuation", "SELECT * FROM users;", "SELECT * FROM users;"),
    ("non-ASCII (spec table)", "Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
    ("leading and trailing spaces (spec table)", " padded ", "=?base64?IHBhZGRlZCA=?="),
    ("a leading space", " us-west1", "=?base64?IHVzLXdlc3Qx?="),
    ("a trailing space", "us-west1 ", "=?base64?dXMtd2VzdDEg?="),
    ("a newline (spec table)", "line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
    ("CR LF", "line1\r\nline2", "=?base64?bGluZTENCmxpbmUy?="),
    ("a tab", "\tindented", "=?base64?CWluZGVudGVk?="),
    ("DEL", "a\x7fb", "=?base64?YX9i?="),
    ("looks like the sentinel (spec table)", "=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
    ("only half the sentinel stays plain", "=?base64?SGVsbG8=", "=?base64?SGVsbG8="),
    ("emoji", "\U0001F600", "=?base64?8J+YgA==?="),
    ("true", True, "true"),
    ("false", False, "false"),
    ("an integer", 42, "42"),
    ("a negative integer", -7, "-7"),
    ("zero", 0, "0"),
    ("the largest safe integer", MAX_SAFE_INTEGER, "9007199254740991"),
    ("the smallest safe integer", -MAX_SAFE_INTEGER, "-9007199254740991"),
    ("an integral float is an integer", 3.0, "3"),
]


@pytest.mark.parametrize("case,value,text", ENCODE, ids=[row[0] for row in ENCODE])
def test_encode_value(case: str, value: Any, text: str) -> None:
    assert encode_value(value) == text


@pytest.mark.parametrize("case,value,text", ENCODE, ids=[row[0] for row in ENCODE])
def test_what_is_encoded_decodes_to_its_text(case: str, value: Any, text: str) -> None:
    expected = value if isinstance(value, str) else text
    assert decode_value(text) == expected


ENCODE_REFUSED = [
    # (case, value, words the error says)
    ("2^53", MAX_SAFE_INTEGER + 1, "safe range"),
    ("-2^53", -MAX_SAFE_INTEGER - 1, "safe range"),
    ("a huge integer", 10 ** 30, "safe range"),
    ("a huge integral float", 2.0 ** 60, "safe range"),
    ("a fraction (number is not allowed)", 3.14159, "float"),
    ("null: the header is omitted instead", None, "NoneType"),
    ("an object", {"a": 1}, "dict"),
    ("an array", ["a"], "list"),
]


@pytest.mark.parametrize("case,value,words", ENCODE_REFUSED, ids=[row[0] for row in ENCODE_REFUSED])
def test_encode_value_refuses(case: str, value: Any, words: str) -> None:
    with pytest.raises(HeaderValueError, match=words):
        encode_value(value)


DECODE = [
    # (case, received header value, the text it stands for)
    ("plain", "us-west1", "us-west1"),
    ("surrounding whitespace is trimmed", "  tool  ", "tool"),
    ("a tab around is trimmed", "\ttool\t", "tool"),
    ("an inner tab is allowed plain", "a\tb", "a\tb"),
    ("valid base64 (§4.4)", "=?base64?SGVsbG8=?=", "Hello"),
    ("base64 inside whitespace", "  =?base64?SGVsbG8=?=  ", "Hello"),
    ("empty base64", "=?base64??=", ""),
    ("no suffix: a literal (§4.4)", "=?base64?SGVsbG8=", "=?base64?SGVsbG8="),
    ("no prefix: a literal (§4.4)", "SGVsbG8=", "SGVsbG8="),
    ("upper-case markers are not the sentinel", "=?BASE64?SGVsbG8=?=", "=?BASE64?SGVsbG8=?="),
    ("too short to be a wrapper", "=?base64?=", "=?base64?="),
    ("empty", "", ""),
]


@pytest.mark.parametrize("case,raw,text", DECODE, ids=[row[0] for row in DECODE])
def test_decode_value(case: str, raw: str, text: str) -> None:
    assert decode_value(raw) == text


DECODE_REFUSED = [
    # (case, received header value, words the error says)
    ("missing padding (§4.4)", "=?base64?SGVsbG8?=", "base64"),
    ("characters outside the alphabet (§4.4)", "=?base64?SGVs!!!bG8=?=", "base64"),
    ("inner whitespace in base64", "=?base64?SGVs bG8=?=", "base64"),
    ("too much padding", "=?base64?SGVsbG8==?=", "base64"),
    ("stray bits (not canonical)", "=?base64?SGVsbG9=?=", "canonical"),
    ("URL-safe alphabet", "=?base64?-_-_?=", "base64"),
    ("bytes that are not UTF-8", "=?base64?/w==?=", "UTF-8"),
    ("a control character", "a\x01b", "invalid character"),
    ("a newline", "a\nb", "invalid character"),
    ("non-ASCII (latin-1 read of UTF-8)", "Ã©", "invalid character"),
    ("DEL", "a\x7f", "invalid character"),
]


@pytest.mark.parametrize("case,raw,words", DECODE_REFUSED, ids=[row[0] for row in DECODE_REFUSED])
def test_decode_value_refuses(case: str, raw: str, words: str) -> None:
    with pytest.raises(HeaderValueError, match=words):
        decode_value(raw)


# -- tool schemas --------------------------------------------------------------------------------------------

def prop(type: Any, header: Any = None, **extra: Any) -> Dict[str, Any]:
    schema: Dict[str, Any] = {"type": type, **extra}
    if header is not None:
        schema["x-mcp-header"] = header
    return schema


def tool(**properties: Any) -> Dict[str, Any]:
    return {"type": "object", "properties": properties}


VALID_SCHEMAS = [
    # (case, inputSchema, {path: (header, type)})
    ("no annotation", tool(query=prop("string")), {}),
    ("no properties at all", {"type": "object"}, {}),
    ("the spec's example", tool(region=prop("string", "Region"), query=prop("string")),
     {("region",): ("Mcp-Param-Region", "string")}),
    ("each allowed type", tool(region=prop("string", "Region"), priority=prop("integer", "Priority"),
                               verbose=prop("boolean", "Verbose")),
     {("region",): ("Mcp-Param-Region", "string"), ("priority",): ("Mcp-Param-Priority", "integer"),
      ("verbose",): ("Mcp-Param-Verbose", "boolean")}),
    ("nullable type", tool(verbose=prop(["boolean", "null"], "Verbose")),
     {("verbose",): ("Mcp-Param-Verbose", "boolean")}),
    ("named like a standard header", tool(method_val=prop("string", "Method")),
     {("method_val",): ("Mcp-Param-Method", "string")}),
    ("every token character", tool(a=prop("string", "A1!#$%&'*+-.^_`|~z")),
     {("a",): ("Mcp-Param-A1!#$%&'*+-.^_`|~z", "string")}),
    ("nested through properties", tool(user=prop("object", properties={"id": prop("integer", "User-Id")})),
     {("user", "id"): ("Mcp-Param-User-Id", "integer")}),
    ("integer bounds at the safe range", tool(n=prop("integer", "N", minimum=-MAX_SAFE_INTEGER,
                                                     maximum=MAX_SAFE_INTEGER)),
     {("n",): ("Mcp-Param-N", "integer")}),
    ("exclusive bounds one past the safe range", tool(n=prop("integer", "N", exclusiveMinimum=-2 ** 53,
                                                             exclusiveMaximum=2 ** 53)),
     {("n",): ("Mcp-Param-N", "integer")}),
    ("a property named x-mcp-header is not an annotation", tool(**{"x-mcp-header": prop("string")}), {}),
    ("an x-mcp-header key in a default is data", tool(a=prop("object", default={"x-mcp-header": "X"})), {}),
]


@pytest.mark.parametrize("case,schema,expected", VALID_SCHEMAS, ids=[row[0] for row in VALID_SCHEMAS])
def test_header_map_of_a_valid_schema(case: str, schema: Dict[str, Any],
                                      expected: Dict[Tuple[str, ...], Tuple[str, str]]) -> None:
    assert check_schema(schema) is None
    mapping = header_map(schema)
    assert {path: (entry.header, entry.type) for path, entry in mapping.items()} == expected
    assert all(entry.key == entry.header.lower() for entry in mapping.values())


INVALID_SCHEMAS = [
    # (case, inputSchema, words the error says) -- the first eleven are CONFORMANCE-2026.md §5.5's invalid tools
    ("empty", tool(a=prop("string", "")), "is empty"),
    ("on an object", tool(a=prop("object", "A")), "type 'object'"),
    ("on an array", tool(a=prop("array", "A")), "type 'array'"),
    ("on null", tool(a=prop("null", "A")), "type 'null'"),
    ("on a number", tool(a=prop("number", "A")), "type 'number'"),
    ("duplicate, same case", tool(a=prop("string", "Region"), b=prop("string", "Region")), "repeats"),
    ("duplicate, other case", tool(a=prop("string", "MyField"), b=prop("string", "myfield")), "case-insensitive"),
    ("a space", tool(a=prop("string", "My Region")), "character ' '"),
    ("a colon", tool(a=prop("string", "Region:Primary")), "character ':'"),
    ("non-ASCII", tool(a=prop("string", "Région")), "character 'é'"),
    ("a control character", tool(a=prop("string", "Region\t1")), "character '\\\\t'"),
    ("CR LF", tool(a=prop("string", "A\r\nB")), "character '\\\\r'"),
    ("not a string", tool(a=prop("string", 7)), "must be a string"),
    ("no declared type", tool(a={"x-mcp-header": "A"}), "type None"),
    ("two types", tool(a=prop(["string", "integer"], "A")), "cannot carry"),
    ("maximum beyond the safe range", tool(n=prop("integer", "N", maximum=2 ** 53)), "maximum"),
    ("minimum beyond the safe range", tool(n=prop("integer", "N", minimum=-2 ** 53)), "minimum"),
    ("exclusiveMaximum beyond it", tool(n=prop("integer", "N", exclusiveMaximum=2 ** 53 + 1)), "exclusiveMaximum"),
    ("a float bound beyond it", tool(n=prop("integer", "N", maximum=1e300)), "maximum"),
    ("on the root", {"type": "object", "x-mcp-header": "A"}, "root"),
    ("through items", tool(a=prop("array", items=prop("string", "A"))), "/properties/a/items"),
    ("through anyOf", tool(a={"anyOf": [prop("string", "A"), prop("null")]}), "/properties/a/anyOf/0"),
    ("through allOf at the root", {"allOf": [tool(a=prop("string", "A"))]}, "/allOf/0/properties/a"),
    ("through $defs", {"$defs": {"d": prop("string", "A")}, "properties": {"a": {"$ref": "#/$defs/d"}}},
     "/$defs/d"),
    ("through if/then", tool(a={"if": prop("string"), "then": prop("string", "A")}), "/properties/a/then"),
    ("through patternProperties", {"patternProperties": {"^r": prop("string", "A")}}, "/patternProperties/^r"),
    ("through additionalProperties", {"additionalProperties": prop("string", "A")}, "/additionalProperties"),
    ("through not", tool(a={"not": prop("string", "A")}), "/properties/a/not"),
    ("not an object", ["a"], "must be an object"),
]


@pytest.mark.parametrize("case,schema,words", INVALID_SCHEMAS, ids=[row[0] for row in INVALID_SCHEMAS])
def test_invalid_annotations_are_named(case: str, schema: Any, words: str) -> None:
    problem = check_schema(schema)
    assert problem is not None and words.replace("\\\\", "\\") in problem
    with pytest.raises(ValueError) as raised:
        header_map(schema)
    assert str(raised.value) == problem


# -- what a client sends -------------------------------------------------------------------------------------

#: CONFORMANCE-2026.md §5.4's `test_custom_headers`, with its annotations.
CUSTOM = tool(region=prop("string", "Region"), priority=prop("integer", "Priority"),
              verbose=prop("boolean", "Verbose"), debug=prop("boolean", "Debug"),
              empty_val=prop("string", "EmptyVal"), method_val=prop("string", "Method"),
              float_val=prop("number"), non_ascii_val=prop("string", "NonAscii"),
              whitespace_val=prop("string", "Whitespace"), leading_space_val=prop("string", "LeadingSpace"),
              trailing_space_val=prop("string", "TrailingSpace"), internal_space_val=prop("string", "InternalSpace"),
              control_char_val=prop("string", "ControlChar"), crlf_val=prop("string", "CrLf"),
              tab_val=prop("string", "Tab"), query=prop("string"))
CUSTOM_MAP = header_map(CUSTOM)


def test_param_headers_of_the_conformance_call() -> None:
    arguments = {"region": "us-west1", "priority": 42, "verbose": False, "debug": True, "empty_val": "",
                 "method_val": "test-method", "float_val": 3.14159, "non_ascii_val": "Hello, 世界",
                 "whitespace_val": " padded ", "leading_space_val": " us-west1", "trailing_space_val": "us-west1 ",
                 "internal_space_val": "us west 1", "control_char_val": "line1\nline2", "crlf_val": "line1\r\nline2",
                 "tab_val": "\tindented", "query": "SELECT * FROM users"}
    assert param_headers(CUSTOM_MAP, arguments) == {
        "Mcp-Param-Region": "us-west1", "Mcp-Param-Priority": "42", "Mcp-Param-Verbose": "false",
        "Mcp-Param-Debug": "true", "Mcp-Param-EmptyVal": "", "Mcp-Param-Method": "test-method",
        "Mcp-Param-NonAscii": "=?base64?SGVsbG8sIOS4lueVjA==?=", "Mcp-Param-Whitespace": "=?base64?IHBhZGRlZCA=?=",
        "Mcp-Param-LeadingSpace": "=?base64?IHVzLXdlc3Qx?=", "Mcp-Param-TrailingSpace": "=?base64?dXMtd2VzdDEg?=",
        "Mcp-Param-InternalSpace": "us west 1", "Mcp-Param-ControlChar": "=?base64?bGluZTEKbGluZTI=?=",
        "Mcp-Param-CrLf": "=?base64?bGluZTENCmxpbmUy?=", "Mcp-Param-Tab": "=?base64?CWluZGVudGVk?=",
    }


def test_param_headers_omit_null_and_absent_arguments() -> None:
    arguments = {"region": "us-east1", "priority": 1, "verbose": None, "query": "SELECT 1"}
    assert param_headers(CUSTOM_MAP, arguments) == {"Mcp-Param-Region": "us-east1", "Mcp-Param-Priority": "1"}


def test_param_headers_of_nested_arguments() -> None:
    mapping = header_map(tool(user=prop("object", properties={"id": prop("integer", "User-Id")})))
    assert param_headers(mapping, {"user": {"id": 7}}) == {"Mcp-Param-User-Id": "7"}
    assert param_headers(mapping, {"user": "not an object"}) == {}
    assert param_headers(mapping, None) == {}


def test_param_headers_refuse_an_unsafe_integer() -> None:
    with pytest.raises(HeaderValueError, match="'priority' for Mcp-Param-Priority: integer"):
        param_headers(CUSTOM_MAP, {"priority": 2 ** 53})


def meta(version: str = "2026-07-28") -> Dict[str, Any]:
    return {"io.modelcontextprotocol/protocolVersion": version, "io.modelcontextprotocol/clientCapabilities": {}}


STANDARD = [
    # (case, message, headers)
    ("tools/list", jsonrpc.request(1, "tools/list", {"_meta": meta()}),
     {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}),
    ("tools/call names the tool", jsonrpc.request(1, "tools/call", {"name": "get_weather", "_meta": meta()}),
     {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "get_weather"}),
    ("prompts/get names the prompt", jsonrpc.request(1, "prompts/get", {"name": "test_prompt"}),
     {"Mcp-Method": "prompts/get", "Mcp-Name": "test_prompt"}),
    ("resources/read: the uri byte for byte", jsonrpc.request(1, "resources/read",
                                                              {"uri": "file:///path/to/file%20name.txt"}),
     {"Mcp-Method": "resources/read", "Mcp-Name": "file:///path/to/file%20name.txt"}),
    ("resources/read with a query", jsonrpc.request(1, "resources/read", {"uri": "https://example.com/r?id=123"}),
     {"Mcp-Method": "resources/read", "Mcp-Name": "https://example.com/r?id=123"}),
    ("a name outside the safe set", jsonrpc.request(1, "tools/call", {"name": "météo"}),
     {"Mcp-Method": "tools/call", "Mcp-Name": "=?base64?bcOpdMOpbw==?="}),
    ("tasks/get names the task", jsonrpc.request(1, "tasks/get", {"taskId": "t-1"}),
     {"Mcp-Method": "tasks/get", "Mcp-Name": "t-1"}),
    ("no params", jsonrpc.request(1, "ping"), {"Mcp-Method": "ping"}),
    ("a notification", jsonrpc.notification("notifications/cancelled", {"requestId": 1}),
     {"Mcp-Method": "notifications/cancelled"}),
    ("a response has none", jsonrpc.result(1, {}), {}),
    ("a batch has none", [jsonrpc.request(1, "ping")], {}),
]


@pytest.mark.parametrize("case,message,headers", STANDARD, ids=[row[0] for row in STANDARD])
def test_standard_headers(case: str, message: Any, headers: Dict[str, str]) -> None:
    assert standard_headers(message) == headers


# -- what a server checks ------------------------------------------------------------------------------------

LIST = jsonrpc.request(100, "tools/list", {"_meta": meta()})
CALL = jsonrpc.request(101, "tools/call", {"name": "greet", "arguments": {}, "_meta": meta()})
READ = jsonrpc.request(102, "resources/read", {"uri": "file:///a%20b.txt", "_meta": meta()})
TASK = jsonrpc.request(103, "tasks/get", {"taskId": "t-1", "_meta": meta()})
CALL_HEADERS = {"Mcp-Method": "tools/call", "Mcp-Name": "greet"}

STANDARD_CHECKS = [
    # (case, headers, message, None or the error's message) -- §4.3 and the spec's "Server Validation"
    ("matching", {"Mcp-Method": "tools/list"}, LIST, None),
    ("lower-case name (§4.3)", {"mcp-method": "tools/list"}, LIST, None),
    ("upper-case name (§4.3)", {"MCP-METHOD": "tools/list"}, LIST, None),
    ("mismatched method (§4.3)", {"Mcp-Method": "prompts/list"}, LIST,
     "Header mismatch: Mcp-Method header value 'prompts/list' does not match body value 'tools/list'"),
    ("missing method (§4.3)", {}, LIST, "Header mismatch: missing required Mcp-Method header"),
    ("values are case-sensitive (§4.3)", {"Mcp-Method": "TOOLS/LIST"}, LIST,
     "Header mismatch: Mcp-Method header value 'TOOLS/LIST' does not match body value 'tools/list'"),
    ("a repeated header joins and mismatches", {"mcp-method": "tools/list, tools/list"}, LIST,
     "Header mismatch: Mcp-Method header value 'tools/list, tools/list' does not match body value 'tools/list'"),
    ("method is never base64", {"Mcp-Method": "=?base64?dG9vbHMvbGlzdA==?="}, LIST,
     "Header mismatch: Mcp-Method header value '=?base64?dG9vbHMvbGlzdA==?=' does not match body value "
     "'tools/list'"),
    ("name matching", CALL_HEADERS, CALL, None),
    ("name with surrounding whitespace (§4.3)", {"Mcp-Method": "tools/call", "Mcp-Name": "  greet  "}, CALL, None),
    ("name in base64", {"Mcp-Method": "tools/call", "Mcp-Name": "=?base64?Z3JlZXQ=?="}, CALL, None),
    ("mismatched name (§4.3)", {"Mcp-Method": "tools/call", "Mcp-Name": "wrong_tool_name"}, CALL,
     "Header mismatch: Mcp-Name header value 'wrong_tool_name' does not match body value 'greet'"),
    ("missing name (§4.3)", {"Mcp-Method": "tools/call"}, CALL, "Header mismatch: missing required Mcp-Name header"),
    ("malformed base64 name", {"Mcp-Method": "tools/call", "Mcp-Name": "=?base64?Z3JlZXQ?="}, CALL,
     "Header mismatch: Mcp-Name header value '=?base64?Z3JlZXQ?=' is malformed: invalid base64: Incorrect padding"),
    ("the uri byte for byte", {"Mcp-Method": "resources/read", "Mcp-Name": "file:///a%20b.txt"}, READ, None),
    ("a decoded uri is another uri", {"Mcp-Method": "resources/read", "Mcp-Name": "file:///a b.txt"}, READ,
     "Header mismatch: Mcp-Name header value 'file:///a b.txt' does not match body value 'file:///a%20b.txt'"),
    ("the task id (§4.7)", {"Mcp-Method": "tasks/get", "Mcp-Name": "t-1"}, TASK, None),
    ("a wrong task id (§4.7)", {"Mcp-Method": "tasks/get", "Mcp-Name": "t-2"}, TASK,
     "Header mismatch: Mcp-Name header value 't-2' does not match body value 't-1'"),
    ("a body without a name leaves it to params validation", {"Mcp-Method": "tools/call"},
     jsonrpc.request(1, "tools/call", {}), None),
    ("a notification may omit the method", {}, jsonrpc.notification("notifications/cancelled"), None),
    ("a notification's method must match if sent", {"Mcp-Method": "ping"},
     jsonrpc.notification("notifications/cancelled"),
     "Header mismatch: Mcp-Method header value 'ping' does not match body value 'notifications/cancelled'"),
    ("a response is not checked", {}, jsonrpc.result(1, {}), None),
]


def assert_check(headers: Dict[str, str], message: Any, expected: Optional[str],
                 param_map: Any = None) -> None:
    error = check_request_headers(headers, message, param_map)
    if expected is None:
        assert error is None
    else:
        assert isinstance(error, RPCError) and error.code == HEADER_MISMATCH == -32020
        assert error.message == expected and error.data is None


@pytest.mark.parametrize("case,headers,message,expected", STANDARD_CHECKS, ids=[row[0] for row in STANDARD_CHECKS])
def test_check_standard_headers(case: str, headers: Dict[str, str], message: Any, expected: Optional[str]) -> None:
    assert_check(headers, message, expected)


#: Python's fixture tool `test_x_mcp_header` (§4.4), plus an integer and a boolean parameter.
PARAMS_MAP = header_map(tool(region=prop("string", "Region"), priority=prop("integer", "Priority"),
                             verbose=prop("boolean", "Verbose")))


def call(**arguments: Any) -> Dict[str, Any]:
    return jsonrpc.request(7, "tools/call", {"name": "greet", "arguments": arguments, "_meta": meta()})


PARAM_CHECKS = [
    # (case, Mcp-Param-* headers, arguments, None or the error's message)
    ("a plain string", {"Mcp-Param-Region": "us-west1"}, {"region": "us-west1"}, None),
    ("header names in any case", {"mcp-param-region": "us-west1"}, {"region": "us-west1"}, None),
    ("upper case", {"MCP-PARAM-REGION": "us-west1"}, {"region": "us-west1"}, None),
    ("valid base64 (§4.4)", {"Mcp-Param-Region": "=?base64?SGVsbG8=?="}, {"region": "Hello"}, None),
    ("invalid base64 padding (§4.4)", {"Mcp-Param-Region": "=?base64?SGVsbG8?="}, {"region": "Hello"},
     "Header mismatch: Mcp-Param-Region header value '=?base64?SGVsbG8?=' is malformed: invalid base64: "
     "Incorrect padding"),
    ("invalid base64 characters (§4.4)", {"Mcp-Param-Region": "=?base64?SGVs!!!bG8=?="}, {"region": "Hello"},
     "Header mismatch: Mcp-Param-Region header value '=?base64?SGVs!!!bG8=?=' is malformed: invalid base64: "
     "not the canonical encoding (stray characters or padding)"),
    ("no prefix is a literal (§4.4)", {"Mcp-Param-Region": "SGVsbG8="}, {"region": "SGVsbG8="}, None),
    ("no suffix is a literal (§4.4)", {"Mcp-Param-Region": "=?base64?SGVsbG8="}, {"region": "=?base64?SGVsbG8="},
     None),
    ("missing with a value in the body (§4.4)", {}, {"region": "test-value"},
     "Header mismatch: missing required Mcp-Param-Region header"),
    ("different", {"Mcp-Param-Region": "us-east1"}, {"region": "us-west1"},
     "Header mismatch: Mcp-Param-Region header value 'us-east1' does not match body value 'us-west1'"),
    ("values are case-sensitive", {"Mcp-Param-Region": "US-WEST1"}, {"region": "us-west1"},
     "Header mismatch: Mcp-Param-Region header value 'US-WEST1' does not match body value 'us-west1'"),
    ("unicode in base64", {"Mcp-Param-Region": "=?base64?SGVsbG8sIOS4lueVjA==?="}, {"region": "Hello, 世界"}, None),
    ("unicode sent plain (read as latin-1)", {"Mcp-Param-Region": "Hello, ä¸\x96ç\x95\x8c"},
     {"region": "Hello, 世界"}, "Header mismatch: Mcp-Param-Region header value 'Hello, ä¸\x96ç\x95\x8c' is "
     "malformed: invalid character 'ä'"),
    ("whitespace sent plain is trimmed, so it differs", {"Mcp-Param-Region": " padded "}, {"region": " padded "},
     "Header mismatch: Mcp-Param-Region header value 'padded' does not match body value ' padded '"),
    ("whitespace in base64", {"Mcp-Param-Region": "=?base64?IHBhZGRlZCA=?="}, {"region": " padded "}, None),
    ("an empty value", {"Mcp-Param-Region": ""}, {"region": ""}, None),
    ("null: no header expected", {}, {"region": None}, None),
    ("absent: no header expected", {}, {}, None),
    ("a header without a body value", {"Mcp-Param-Region": "us-west1"}, {},
     "Header mismatch: Mcp-Param-Region header is present but the body has no value for 'region'"),
    ("an unannotated Mcp-Param header is ignored", {"Mcp-Param-Other": "x"}, {}, None),
    ("integer", {"Mcp-Param-Priority": "1"}, {"priority": 1}, None),
    ("integer: leading zero compares numerically", {"Mcp-Param-Priority": "01"}, {"priority": 1}, None),
    ("integer: 1.0 is 1 (the spec's 42.0 and 42)", {"Mcp-Param-Priority": "1.0"}, {"priority": 1}, None),
    ("integer: a plus sign", {"Mcp-Param-Priority": "+1"}, {"priority": 1}, None),
    ("integer: body 1.0", {"Mcp-Param-Priority": "1"}, {"priority": 1.0}, None),
    ("integer: negative", {"Mcp-Param-Priority": "-7"}, {"priority": -7}, None),
    ("integer: the safe maximum", {"Mcp-Param-Priority": "9007199254740991"}, {"priority": MAX_SAFE_INTEGER}, None),
    ("integer: one past it still differs", {"Mcp-Param-Priority": "9007199254740992"},
     {"priority": MAX_SAFE_INTEGER},
     "Header mismatch: Mcp-Param-Priority header value '9007199254740992' does not match body value "
     "'9007199254740991'"),
    ("integer: different", {"Mcp-Param-Priority": "2"}, {"priority": 1},
     "Header mismatch: Mcp-Param-Priority header value '2' does not match body value '1'"),
    ("integer: 1.5 is not 1", {"Mcp-Param-Priority": "1.5"}, {"priority": 1},
     "Header mismatch: Mcp-Param-Priority header value '1.5' does not match body value '1'"),
    ("integer: an exponent is not decimal text", {"Mcp-Param-Priority": "1e0"}, {"priority": 1},
     "Header mismatch: Mcp-Param-Priority header value '1e0' does not match body value '1'"),
    ("integer: not a number", {"Mcp-Param-Priority": "one"}, {"priority": 1},
     "Header mismatch: Mcp-Param-Priority header value 'one' does not match body value '1'"),
    ("integer: in base64", {"Mcp-Param-Priority": "=?base64?NDI=?="}, {"priority": 42}, None),
    ("integer: the body holds a string", {"Mcp-Param-Priority": "1"}, {"priority": "1"},
     "Header mismatch: Mcp-Param-Priority header value '1' does not match body value '1' (a string, not an integer)"),
    ("integer: the body holds a boolean", {"Mcp-Param-Priority": "1"}, {"priority": True},
     "Header mismatch: Mcp-Param-Priority header value '1' does not match body value 'true' "
     "(a boolean, not an integer)"),
    ("boolean true", {"Mcp-Param-Verbose": "true"}, {"verbose": True}, None),
    ("boolean false", {"Mcp-Param-Verbose": "false"}, {"verbose": False}, None),
    ("boolean is case-sensitive", {"Mcp-Param-Verbose": "True"}, {"verbose": True},
     "Header mismatch: Mcp-Param-Verbose header value 'True' does not match body value 'true'"),
    ("boolean: 1 is not true", {"Mcp-Param-Verbose": "1"}, {"verbose": True},
     "Header mismatch: Mcp-Param-Verbose header value '1' does not match body value 'true'"),
    ("string: the body holds an integer", {"Mcp-Param-Region": "5"}, {"region": 5},
     "Header mismatch: Mcp-Param-Region header value '5' does not match body value '5' (an integer, not a string)"),
    ("all three", {"Mcp-Param-Region": "eu", "Mcp-Param-Priority": "3", "Mcp-Param-Verbose": "false"},
     {"region": "eu", "priority": 3, "verbose": False}, None),
]


@pytest.mark.parametrize("case,params,arguments,expected", PARAM_CHECKS, ids=[row[0] for row in PARAM_CHECKS])
def test_check_param_headers(case: str, params: Dict[str, str], arguments: Dict[str, Any],
                             expected: Optional[str]) -> None:
    assert_check({**CALL_HEADERS, **params}, call(**arguments), expected, PARAMS_MAP)


def test_standard_headers_are_checked_before_params() -> None:
    assert_check({"Mcp-Method": "tools/call", "Mcp-Param-Region": "x"}, call(region="y"),
                 "Header mismatch: missing required Mcp-Name header", PARAMS_MAP)


def test_arguments_that_are_not_an_object_need_no_param_header() -> None:
    message = jsonrpc.request(7, "tools/call", {"name": "greet", "arguments": "oops"})
    assert_check(CALL_HEADERS, message, None, PARAMS_MAP)


def test_nested_parameters_are_checked() -> None:
    mapping = header_map(tool(user=prop("object", properties={"id": prop("integer", "User-Id")})))
    assert_check({**CALL_HEADERS, "Mcp-Param-User-Id": "07"}, call(user={"id": 7}), None, mapping)
    assert_check({**CALL_HEADERS, "Mcp-Param-User-Id": "8"}, call(user={"id": 7}),
                 "Header mismatch: Mcp-Param-User-Id header value '8' does not match body value '7'", mapping)


@pytest.mark.parametrize("case,value,text", ENCODE, ids=[row[0] for row in ENCODE])
def test_what_a_client_sends_a_server_accepts(case: str, value: Any, text: str) -> None:
    """The two halves agree: every encodable value, sent by `param_headers`, passes `check_request_headers`."""
    kind = "boolean" if isinstance(value, bool) else "string" if isinstance(value, str) else "integer"
    mapping = header_map(tool(v=prop(kind, "V")))
    message = call(v=value)
    headers = {**standard_headers(message), **param_headers(mapping, {"v": value})}
    assert check_request_headers(headers, message, mapping) is None


def test_param_header_equality_and_repr() -> None:
    entry = ParamHeader(("region",), "Mcp-Param-Region", "string")
    assert entry == ParamHeader(("region",), "Mcp-Param-Region", "string")
    assert entry != ParamHeader(("region",), "Mcp-Param-Zone", "string")
    assert repr(entry) == "ParamHeader(('region',), 'Mcp-Param-Region', 'string')"
