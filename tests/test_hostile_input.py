"""Hostile input on the client side and in the shared codec: numbers that are not portable JSON, nesting too
deep, messages, lines, events and bodies too large, lone surrogates, and OAuth documents that are none of what
they should be. Each gets a precise error, the request it concerns fails at once (never a wait for a timeout),
and the connection reads on.

Before: ``NaN``, ``Infinity`` and ``1e400`` were read as Python floats (and an answer holding one could not be
encoded again); nesting was bounded only by the interpreter's recursion limit, wherever the stack stood; the
stdio transports ended the connection on a line over 64 MiB, with no setting to change it; a malformed answer
left its request waiting for its timeout; the HTTP client buffered any JSON body whole and read SSE events of
up to 16 MiB whatever it was told; OAuth documents with huge numbers raised OverflowError, and nesting raised
RecursionError.
"""

import json
import logging
import queue
import socket
import subprocess
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Tuple
from urllib.parse import parse_qsl, urlsplit

import pytest

from mcplite import Client
from mcplite.errors import (
    INVALID_REQUEST,
    PARSE_ERROR,
    AuthError,
    HTTPError,
    MCPError,
    RemoteProtocolError,
    TransportError,
)
from mcplite.oauth import HTTPRequest, HTTPResponse, OAuth, drive
from mcplite.oauth.advanced import send_with_http_client
from mcplite.protocol import json_text, jsonrpc
from mcplite.protocol.jsonrpc import MAX_DEPTH, MAX_NUMBER_LENGTH, InvalidMessage
from tests.support import ROOT
from tests.support.http import ServerLoop
from tests.support.threads import Background
from tests.support.wait import WAIT, wait_until

# A reader thread that dies of what it read fails the test rather than printing a warning.
pytestmark = pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning")

FIXTURES = ROOT / "tests" / "fixtures"
ENV = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
MiB = 1024 * 1024


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


# ---- the codec: what decode refuses, and the id it still finds ----------------------------------------------
REQUEST = '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"v":%s}}'
ANSWER = '{"jsonrpc":"2.0","id":"a","result":{"v":%s}}'
NOTIFICATION = '{"jsonrpc":"2.0","method":"notifications/x","params":{"v":%s}}'
REFUSED = [  # (value text, what the error says)
    ("NaN", "NaN is not JSON"),
    ("Infinity", "Infinity is not JSON"),
    ("-Infinity", "-Infinity is not JSON"),
    ("1e400", "the number 1e400 is beyond the range of a double"),
    ("-2.5e308", "the number -2.5e308 is beyond the range of a double"),
    ("9" * (MAX_NUMBER_LENGTH + 1), f"an integer of more than {MAX_NUMBER_LENGTH} digits"),
    ("-" + "9" * (MAX_NUMBER_LENGTH + 1), f"an integer of more than {MAX_NUMBER_LENGTH} digits"),
    ("0." + "1" * MAX_NUMBER_LENGTH, f"a number of {MAX_NUMBER_LENGTH + 2} characters"),
    (nested(MAX_DEPTH - 1), f"nesting deeper than {MAX_DEPTH} levels"),  # + the message and params: 130
    (nested(100_000), f"nesting deeper than {MAX_DEPTH} levels"),
    ('{"a":' * 100_000 + "1" + "}" * 100_000, f"nesting deeper than {MAX_DEPTH} levels"),
]


@pytest.mark.parametrize("value, reason", REFUSED, ids=lambda value: value[:12])
@pytest.mark.parametrize("template, id, respond", [(REQUEST, 7, True), (ANSWER, "a", False),
                                                   (NOTIFICATION, None, False)], ids=["request", "answer", "notice"])
def test_what_is_not_portable_json_is_a_parse_error_naming_the_id(value, reason, template, id, respond):
    text = template % value
    for data in (text, text.encode("utf-8")):
        with pytest.raises(InvalidMessage) as info:
            jsonrpc.decode(data)
        assert info.value.code == PARSE_ERROR
        assert str(info.value).startswith(f"Parse error: {reason}")
        # A request is answered with its own id; an answer fails the request it answers; a notification is
        # never answered, unless it is too deep to be read even leniently: then only its ends are known, and
        # what shows no id is answered with a null id.
        if template is NOTIFICATION and value.startswith(("[" * 1000, "{" * 1000, '{"a":' * 1000)):
            respond = True
        assert (info.value.id, info.value.respond) == (id, respond)


@pytest.mark.parametrize("text", ids=lambda text: text[:12], argvalues=[
    nested(MAX_DEPTH),
    '{"jsonrpc":"2.0","id":1,"result":{"v":%s}}' % nested(MAX_DEPTH - 2),
    '{"v":[%s]}' % ",".join([nested(MAX_DEPTH - 2)] * 3),
    '["[[[[", "{{{{{"]' + " " * 10,  # brackets in strings are not nesting
    "9" * MAX_NUMBER_LENGTH, "-" + "9" * MAX_NUMBER_LENGTH,
    "1.7976931348623157e308", "-1e-400", "0.1", "[1, 2.5, -0, 1E5]",
])
def test_what_every_parser_agrees_on_is_read(text):
    assert jsonrpc.decode(text) == json.loads(text)


def tightest_objects(depth: int, arrays: int = 0) -> str:
    """Objects nested ``depth`` deep (the innermost ``arrays`` levels arrays) in the fewest characters."""
    objects = depth - arrays
    return '{"":' * (objects - 1) + ("{" if not arrays else '{"":' + "[" * arrays) + "]" * arrays + "}" * objects


def test_nesting_without_arrays_is_bounded_from_the_shortest_text_that_can_break_it():
    """`loads` counts no brackets in a text without ``[`` shorter than 5 * MAX_DEPTH + 2 characters (objects
    alone cannot nest deeper in it): the shortest text that does is refused, the deepest that does not is read,
    and a shorter text with arrays in it is counted."""
    too_deep, deepest = tightest_objects(MAX_DEPTH + 1), tightest_objects(MAX_DEPTH)
    assert len(too_deep) == 5 * MAX_DEPTH + 2 and "[" not in too_deep
    for text, arrays in ((too_deep, 0), (tightest_objects(MAX_DEPTH + 1, arrays=60), 60)):
        assert json_text.loads_leniently(text) is not None  # (deep, but within what Python's parser reads)
        with pytest.raises(json_text.NotPortableJSON, match=f"nesting deeper than {MAX_DEPTH} levels"):
            json_text.loads(text)
        assert (len(text) < 5 * MAX_DEPTH + 2) == (arrays > 0)
    assert json_text.loads(deepest) == json.loads(deepest)
    assert json_text.loads(" " * 300 + deepest) == json.loads(deepest)


def test_a_long_integer_id_within_the_bound_is_answered_exactly():
    big = int("9" * 40)  # far beyond 2**53: a JavaScript peer would round it; we answer it as it came
    message = jsonrpc.decode('{"jsonrpc":"2.0","id":%d,"method":"ping"}' % big)
    assert jsonrpc.kind_of(message) == jsonrpc.REQUEST and message["id"] == big
    assert json.loads(jsonrpc.encode(jsonrpc.result(message["id"], {})))["id"] == big


@pytest.mark.parametrize("number", ["1e400", "-1e999", "1" * 400 + ".0"])
def test_an_overflowing_number_in_a_large_message_is_found_too(number):
    """Large texts are parsed without the per-number hook and checked by one walk after: the same rules."""
    text = REQUEST % ('{"rows":[%s],"v":[1.5,[%s]]}' % (",".join(["[1.25,2]"] * 5000), number))
    assert len(text) > 16 * 1024
    with pytest.raises(InvalidMessage) as info:
        jsonrpc.decode(text)
    assert "Parse error: a number beyond the range of a double" in str(info.value)
    assert (info.value.id, info.value.respond) == (7, True)
    assert jsonrpc.decode(text.replace(number, "1e308"))["params"]["v"]["v"][1] == [1e308]


@pytest.mark.parametrize("template, id, respond", [(REQUEST, 7, True), (ANSWER, "a", False)])
def test_text_that_is_not_utf8_is_a_parse_error_naming_the_id(template, id, respond):
    data = (template % '"caf\udce9"').encode("utf-8", "surrogateescape")  # a Latin-1 byte in a string
    with pytest.raises(InvalidMessage) as info:
        jsonrpc.decode(data)
    assert str(info.value).startswith("Parse error: not UTF-8 (byte 0xe9 at ")
    assert (info.value.code, info.value.id, info.value.respond) == (PARSE_ERROR, id, respond)


def test_a_batch_that_breaks_a_rule_is_answered_with_a_null_id():
    with pytest.raises(InvalidMessage) as info:
        jsonrpc.decode('[{"jsonrpc":"2.0","id":1,"method":"ping","params":{"v":NaN}}]')
    assert (info.value.id, info.value.respond) == (None, True)


def test_a_long_integer_costs_no_quadratic_time():
    text = "[" + "9" * (10 * MiB) + "]"
    started = time.monotonic()
    with pytest.raises(InvalidMessage, match="an integer of more than"):
        jsonrpc.decode(text)
    assert time.monotonic() - started < 1.0  # (parsing it would take minutes: quadratic in the digits)


@pytest.mark.parametrize("head, tail, id, respond", ids=lambda value: str(value)[:20], argvalues=[
    (b'{"jsonrpc":"2.0","id":5,"method":"x","params":{"a":"xx', b'xx"}}', 5, True),      # our order, Python SDK's
    (b'{"jsonrpc":"2.0","id":"ab","result":{"a":"xx', b'xx"}}', "ab", False),
    (b'{"result":{"a":"xx', b'xx"},"jsonrpc":"2.0","id":7}\n', 7, False),                 # the TypeScript SDK's
    (b'{"method":"m","params":{"a":"xx', b'xx"},"jsonrpc":"2.0","id":"r-8"}', "r-8", True),
    (b'{"method":"m","params":{"a":"xx', b'xx"},"jsonrpc":"2.0"}', None, True),           # no id in sight
    (b'{"result":{"a":{"id":3', b'xx","id":3}}}', None, True),                           # a nested id is not it
    (b"not json at all", b"", None, True),
    (b'{"id":true,"method":"x","params":{', b"}}", None, True),
])
def test_a_message_too_large_is_known_by_its_two_ends(head, tail, id, respond):
    exc = jsonrpc.too_large(1000, head, tail, "max_line_size")
    assert (exc.code, exc.id, exc.respond) == (INVALID_REQUEST, id, respond)
    assert "larger than 1000 bytes (max_line_size)" in str(exc)


# ---- stdio: a server reading hostile requests ----------------------------------------------------------------
INITIALIZE = ('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
              '"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}')
INITIALIZED = '{"jsonrpc":"2.0","method":"notifications/initialized"}'
BIG = "x" * (2 * MiB)


def run_server(lines: List[str], *args: str) -> "subprocess.CompletedProcess[str]":
    return subprocess.run([sys.executable, str(FIXTURES / "hostile_server.py"), *args],
                          input="\n".join([INITIALIZE, INITIALIZED, *lines]) + "\n", capture_output=True,
                          text=True, timeout=WAIT, env=ENV)


def answers_by_id(stdout: str) -> Dict[Any, Dict[str, Any]]:
    answers: Dict[Any, Dict[str, Any]] = {}
    for line in stdout.splitlines():
        message = json.loads(line)
        answers.setdefault(message["id"], message)
    return answers


def test_a_stdio_server_answers_numbers_and_nesting_that_are_not_json_and_reads_on():
    calls = [REQUEST.replace("7", str(10 + i)) % value for i, (value, _) in enumerate(REFUSED)]
    done = run_server([*calls, '{"jsonrpc":"2.0","id":99,"method":"ping"}'])
    assert done.returncode == 0, done.stderr
    answers = answers_by_id(done.stdout)
    for i, (_, reason) in enumerate(REFUSED):
        error = answers[10 + i]["error"]
        assert error["code"] == PARSE_ERROR and error["message"].startswith(f"Parse error: {reason}")
    assert answers[99]["result"] == {}
    assert "Traceback" not in done.stderr


def test_a_stdio_server_skips_a_line_too_long_answers_it_and_reads_on():
    lines = [
        '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"%s"}}}' % BIG,
        '{"method":"tools/call","params":{"name":"echo","arguments":{"text":"%s"}},"jsonrpc":"2.0","id":3}' % BIG,
        '{"jsonrpc":"2.0","method":"notifications/x","params":{"v":"%s"}}' % BIG,
        '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"text":"fits"}}}',
    ]
    started = time.monotonic()
    done = run_server(lines, str(MiB))
    assert done.returncode == 0, done.stderr
    answers = answers_by_id(done.stdout)
    too_large = f"Invalid Request: larger than {MiB} bytes (max_line_size); skipped unread"
    assert answers[2]["error"] == {"code": INVALID_REQUEST, "message": too_large}
    assert answers[3]["error"] == {"code": INVALID_REQUEST, "message": too_large}
    assert answers[None]["error"] == {"code": INVALID_REQUEST, "message": too_large}  # no id in sight
    assert answers[4]["result"]["content"][0]["text"] == "fits"
    assert "Traceback" not in done.stderr
    assert time.monotonic() - started < WAIT


def test_the_stdio_server_reads_64_mib_lines_by_default():
    line = ('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"%s"}}}'
            % BIG)
    done = run_server([line])
    assert json.loads(done.stdout.splitlines()[1])["result"]["content"][0]["text"] == BIG


# ---- stdio: a client reading hostile answers -----------------------------------------------------------------
@pytest.fixture(scope="module")
def hostile_peer():
    client = Client.stdio([sys.executable, str(FIXTURES / "hostile_peer.py")], max_line_size=MiB,
                          protocol_version="2025-11-25", timeout=WAIT)
    with client:
        yield client


@pytest.mark.parametrize("tool, message", [
    ("nan", "Parse error: NaN is not JSON"),
    ("infinity", "Parse error: -Infinity is not JSON"),
    ("overflow", "Parse error: the number 1e400 is beyond the range of a double"),
    ("long-integer", f"Parse error: an integer of more than {MAX_NUMBER_LENGTH} digits"),
    ("deep", f"Parse error: nesting deeper than {MAX_DEPTH} levels"),
    ("deep-129", f"Parse error: nesting deeper than {MAX_DEPTH} levels"),
    ("latin-1", "Parse error: not UTF-8 (byte 0xe9 at "),
    ("huge", f"Invalid response: larger than {MiB} bytes (max_line_size); skipped unread"),
    ("huge-ts", f"Invalid response: larger than {MiB} bytes (max_line_size); skipped unread"),
    # JSON, but not an answer: it still names the request, which fails now instead of at its timeout
    ("result-not-object", "Invalid response: result must be an object"),
    ("result-and-error", "Invalid response: both result and error"),
])
def test_a_stdio_client_fails_the_request_a_hostile_answer_was_for_at_once_and_reads_on(hostile_peer, tool,
                                                                                         message):
    started = time.monotonic()
    with pytest.raises(InvalidMessage) as info:
        hostile_peer.call_tool(tool, {})
    assert str(info.value).startswith(message)
    assert time.monotonic() - started < WAIT / 2  # failed on arrival, not by the timeout
    hostile_peer.ping(timeout=WAIT)  # the connection reads on (raises if not)
    assert hostile_peer.call_tool("surrogate", {})["content"][0]["text"] == "a\ud800b\udfff"


def test_a_stdio_client_takes_lone_surrogates_and_drops_an_answer_to_nothing(hostile_peer):
    assert hostile_peer.call_tool("surrogate", {})["content"][0]["text"] == "a\ud800b\udfff"
    assert hostile_peer.call_tool("long-id", {})["content"][0]["text"] == "ok"


# ---- the HTTP client reading a hostile server ---------------------------------------------------------------
def sse(*events: str) -> bytes:
    return b"".join(b"event: message\ndata: " + event.encode("utf-8", "surrogatepass") + b"\n\n" for event in events)


def answer_text(id: Any, text: str) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}]}})


HUGE_TEXT = "x" * (2 * MiB)


def hostile_http_answer(name: str, id: Any) -> bytes:
    """The whole HTTP response (head and body) the hostile server writes for tools/call ``name``."""
    sid = json.dumps(id)
    json_head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
    sse_head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
    if name == "json-nan":
        body = ('{"jsonrpc":"2.0","id":%s,"result":{"content":[],"v":NaN}}' % sid).encode()
        return json_head + b"Content-Length: %d\r\n\r\n" % len(body) + body
    if name == "json-huge":
        body = answer_text(id, HUGE_TEXT).encode()
        return json_head + b"Content-Length: %d\r\n\r\n" % len(body) + body
    if name == "json-huge-chunked":  # no length said: the client must stop reading by itself
        chunk = b"x" * 65536
        return (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                + (b"%x\r\n" % len(chunk) + chunk + b"\r\n") * 64 + b"0\r\n\r\n")
    if name == "sse-nan":
        return sse_head + sse('{"jsonrpc":"2.0","id":%s,"result":{"content":[],"v":Infinity}}' % sid)
    if name == "sse-deep":
        return sse_head + sse('{"jsonrpc":"2.0","id":%s,"result":{"v":%s}}' % (sid, nested(10_000)))
    if name == "sse-huge-event":
        return sse_head + sse(answer_text(id, HUGE_TEXT))
    if name == "sse-endless-line":
        return sse_head + b"data: " + b"x" * (4 * MiB)
    if name == "sse-surrogate":
        return sse_head + sse(answer_text(id, "a\ud800b"))
    if name == "many-headers":
        return (b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-H%d: v\r\n" % i for i in range(200))
                + b"Content-Length: 0\r\n\r\n")
    if name == "long-header":
        return b"HTTP/1.1 200 OK\r\nX-Long: " + b"v" * (100 * 1024) + b"\r\nContent-Length: 0\r\n\r\n"
    raise AssertionError(name)


class HostileHTTPHandler(BaseHTTPRequestHandler):
    """A stateless Streamable HTTP server that answers initialize, ping and notifications properly and every
    tools/call with the hostile response its tool's name asks for (written raw: http.server would refuse)."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_POST(self) -> None:
        message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        method, id = message.get("method"), message.get("id")
        if id is None:
            self.wfile.write(b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n")
            return
        if method == "tools/call":
            try:
                self.wfile.write(hostile_http_answer(message["params"]["name"], id))
            except OSError:  # the client stopped reading: as it should
                pass
            self.close_connection = True
            return
        result: Dict[str, Any] = {}
        if method == "initialize":
            result = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                      "serverInfo": {"name": "hostile-http", "version": "1"}}
        body = json.dumps({"jsonrpc": "2.0", "id": id, "result": result}).encode()
        self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
                         % len(body) + body)

    def do_GET(self) -> None:
        self.wfile.write(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")

    def do_DELETE(self) -> None:
        self.do_GET()


@pytest.fixture(scope="module")
def hostile_http():
    server = ThreadingHTTPServer(("127.0.0.1", 0), HostileHTTPHandler)
    server.daemon_threads = True
    with ServerLoop(server):
        url = f"http://127.0.0.1:{server.server_address[1]}/mcp"
        with Client(url, protocol_version="2025-11-25", timeout=WAIT, max_message_size=MiB) as client:
            yield client


@pytest.mark.parametrize("tool, error, message", [
    ("json-nan", HTTPError, "the JSON answer does not parse: Parse error: NaN is not JSON"),
    ("json-huge", HTTPError, f"the response body ({len(answer_text(9, HUGE_TEXT))} bytes) is larger than "
                             f"max_message_size ({MiB} bytes)"),
    ("json-huge-chunked", HTTPError, f"the response body (more than {MiB} bytes) is larger than max_message_size"),
    ("sse-nan", InvalidMessage, "Parse error: Infinity is not JSON"),
    ("sse-deep", InvalidMessage, f"Parse error: nesting deeper than {MAX_DEPTH} levels"),
    ("sse-huge-event", RemoteProtocolError, f"server-sent event larger than {MiB} bytes (max_message_size)"),
    ("sse-endless-line", RemoteProtocolError, f"server-sent event larger than {MiB} bytes (max_message_size)"),
    ("many-headers", HTTPError, "a response this client does not read: got more than 100 headers"),
    ("long-header", HTTPError, "a response this client does not read: got more than 65536 bytes"),
])
def test_the_http_client_fails_the_request_a_hostile_answer_was_for_at_once_and_goes_on(hostile_http, tool, error,
                                                                                       message):
    started = time.monotonic()
    with pytest.raises(error) as info:
        hostile_http.call_tool(tool, {})
    assert message in str(info.value)
    assert time.monotonic() - started < WAIT / 2  # failed on arrival, not by the timeout
    hostile_http.ping(timeout=WAIT)  # the session goes on (raises if not)
    assert hostile_http.call_tool("sse-surrogate", {})["content"][0]["text"] == "a\ud800b"


# ---- OAuth: documents that are none of what they should be ---------------------------------------------------
MCP_URL = "https://api.example.com/mcp"
ISSUER = "https://auth.example.com"
PRM_URL = "https://api.example.com/.well-known/oauth-protected-resource/mcp"
AS_METADATA_URL = f"{ISSUER}/.well-known/oauth-authorization-server"


def body_response(status: int, body: bytes) -> HTTPResponse:
    return HTTPResponse(status, {"content-type": "application/json"}, body)


def deployment(**bodies: bytes) -> Callable[[HTTPRequest], HTTPResponse]:
    """A canned MCP server and authorization server; ``bodies`` replaces the metadata, registration or token
    response body (200 or 201) by name."""
    metadata = {"issuer": ISSUER, "authorization_endpoint": f"{ISSUER}/authorize",
                "token_endpoint": f"{ISSUER}/token", "registration_endpoint": f"{ISSUER}/register",
                "code_challenge_methods_supported": ["S256"], "token_endpoint_auth_methods_supported": ["none"]}
    routes = {
        ("GET", PRM_URL): (200, json.dumps({"resource": MCP_URL, "authorization_servers": [ISSUER]}).encode()),
        ("GET", AS_METADATA_URL): (200, bodies.get("metadata", json.dumps(metadata).encode())),
        ("POST", f"{ISSUER}/register"): (201, bodies.get("registration", b'{"client_id":"c-1"}')),
        ("POST", f"{ISSUER}/token"): (200, bodies.get("token", b'{"access_token":"t-1","token_type":"Bearer"}')),
    }

    def send(request: HTTPRequest) -> HTTPResponse:
        url = request.url.partition("?")[0]
        if (request.method, url) == ("POST", MCP_URL):
            if request.headers.get("Authorization") == "Bearer t-1":
                return body_response(200, b'{"ok":true}')
            return HTTPResponse(401, {"www-authenticate": "Bearer"}, b"")
        status, body = routes.get((request.method, url), (404, b""))
        return body_response(status, body)
    return send


def consent(url: str) -> str:
    query = dict(parse_qsl(urlsplit(url).query))
    return f"{query['redirect_uri']}?code=code-1&state={query['state']}"


METADATA = ('{"issuer":"%s","authorization_endpoint":"%s/authorize","token_endpoint":%%s,'
            '"registration_endpoint":"%s/register","code_challenge_methods_supported":["S256"]}'
            % (ISSUER, ISSUER, ISSUER))


@pytest.mark.parametrize("document, body, message", ids=lambda value: str(value)[:24], argvalues=[
    ("token", b'{"access_token":"t-1","token_type":"Bearer","expires_in":NaN}',
     f"the authorization_code token response from {ISSUER}/token is not portable JSON (NaN is not JSON)"),
    ("token", b'{"access_token":"t-1","token_type":"Bearer","expires_in":1e400}', "beyond the range of a double"),
    ("token", b'{"access_token":"t-1","token_type":"Bearer","expires_in":' + b"9" * 400 + b"}",
     "the token response's expires_in is out of range: a number of 400 digits (0 to 2**53 seconds)"),
    ("token", b'{"access_token":"t-1","token_type":"Bearer","expires_in":-5}', "expires_in is out of range: -5"),
    ("token", b'{"access_token":"t-1","x":' + nested(100_000).encode() + b"}",
     f"is not portable JSON (nesting deeper than {MAX_DEPTH} levels)"),
    ("token", b'{"access_token":"t\\ud800","token_type":"Bearer"}', "access_token holds characters a token cannot"),
    ("token", b'{"access_token":"t\\r\\nX-Evil: 1","token_type":"Bearer"}', "access_token holds characters"),
    ("token", b'{"access_token":"t-1","refresh_token":"r\\udfff","token_type":"Bearer"}', "refresh_token holds"),
    ("token", b'{"access_token":"t-1","token_type":"Bearer","scope":"a\\u2028b"}', "scope holds characters"),
    ("token", b"<html>busy</html>", "is not JSON (Expecting value: line 1 column 1 (char 0)): '<html>busy</html>'"),
    ("token", b"\xff\xfe", "token response from https://auth.example.com/token is not UTF-8"),
    ("token", b'["access_token"]', "is an array, not an object"),
    ("token", b'"t-1"', "is a string, not an object"),
    ("token", b'{"access_token":5}', "the token response has no access_token"),
    ("registration", b'{"client_id":"c\\ud800"}', "the registration response's client_id holds characters"),
    ("registration", b'{"client_id":"c-1","client_secret":"s","client_secret_expires_at":' + b"9" * 30 + b"}",
     "client_secret_expires_at is out of range"),
    ("registration", b'{"client_id":"c-1","x":' + nested(200).encode() + b"}",
     f"the registration response from {ISSUER}/register is not portable JSON (nesting deeper than 128"),
    ("metadata", (METADATA % '"https://auth.example.com/t\\ud800"').encode(),
     f"the authorization server {ISSUER} gives a token_endpoint that is not an http(s) URL"),
    ("metadata", (METADATA % '"javascript:alert(1)"').encode(), "token_endpoint that is not an http(s) URL"),
    ("metadata", (METADATA % "NaN").encode(),
     f"no authorization server metadata found for {ISSUER} ({AS_METADATA_URL} is not portable JSON (NaN is not"),
])
def test_an_oauth_document_that_is_not_what_it_should_be_is_a_precise_auth_error(document, body, message):
    auth = OAuth(authorize=consent, redirect_uri="http://127.0.0.1:8976/callback")
    with pytest.raises(AuthError) as info:
        drive(auth.auth_flow(HTTPRequest("POST", MCP_URL, {}, b"{}")), deployment(**{document: body}))
    assert message in str(info.value)


def test_a_sound_deployment_still_signs_in():
    auth = OAuth(authorize=consent, redirect_uri="http://127.0.0.1:8976/callback")
    response = drive(auth.auth_flow(HTTPRequest("POST", MCP_URL, {}, b"{}")), deployment(
        token=b'{"access_token":"t-1","token_type":"Bearer","expires_in":"3600","refresh_token":"r 1"}'))
    assert response.status == 200


def serve_raw_once(raw: bytes) -> Tuple[str, Background]:
    """A one-shot server on 127.0.0.1 that answers its first request with ``raw`` (as much as is read)."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(WAIT)

    def answer() -> None:
        with listener:
            connection, _ = listener.accept()
            with connection:
                connection.settimeout(WAIT)
                connection.recv(65536)
                try:
                    connection.sendall(raw)
                except OSError:  # the client stopped reading: as it should
                    pass

    return f"http://127.0.0.1:{listener.getsockname()[1]}/token", Background(answer)


@pytest.mark.parametrize("raw, message", ids=["long", "chunked", "headers", "cut"], argvalues=[
    (b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % (2 * MiB) + b"x" * (2 * MiB),
     "the response body is larger than 1048576 bytes (max_body_size); not read"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + (b"10000\r\n" + b"x" * 65536 + b"\r\n") * 32
     + b"0\r\n\r\n", "the response body is larger than 1048576 bytes"),
    (b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-H%d: v\r\n" % i for i in range(200)) + b"Content-Length: 0\r\n\r\n",
     "got more than 100 headers"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{}", "failed: IncompleteRead"),
])
def test_the_oauth_driver_bounds_what_it_reads(raw, message):
    url, server = serve_raw_once(raw)
    with pytest.raises(TransportError) as info:
        send_with_http_client(HTTPRequest("GET", url, {}, None), timeout=WAIT)
    server.join(WAIT)
    assert message in str(info.value)


class HostileLegacyHandler(BaseHTTPRequestHandler):
    """A 2024-11-05 HTTP+SSE server: GET /sse is the one stream; POST /messages puts the answer on it."""

    protocol_version = "HTTP/1.1"
    stream: "queue.Queue[bytes]"  # what the GET handler writes next (set per server, below)

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
                         b"event: endpoint\ndata: /messages\n\n")
        self.wfile.flush()
        while True:
            try:
                chunk = self.stream.get(timeout=WAIT)
                self.wfile.write(chunk)
                self.wfile.flush()
            except (queue.Empty, OSError):
                return

    def do_POST(self) -> None:
        message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.wfile.write(b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n")
        method, id = message.get("method"), message.get("id")
        if id is None:
            return
        if method == "tools/call":
            name = message["params"]["name"]
            self.stream.put(sse('{"jsonrpc":"2.0","id":%d,"result":{"v":NaN}}' % id) if name == "nan"
                            else sse(answer_text(id, HUGE_TEXT)))
            return
        result: Dict[str, Any] = {}
        if method == "initialize":
            result = {"protocolVersion": "2024-11-05", "capabilities": {"tools": {}},
                      "serverInfo": {"name": "hostile-legacy", "version": "1"}}
        self.stream.put(sse(json.dumps({"jsonrpc": "2.0", "id": id, "result": result})))


def test_the_legacy_sse_client_fails_a_hostile_answer_at_once_and_ends_on_an_event_too_large():
    handler = type("Handler", (HostileLegacyHandler,), {"stream": queue.Queue()})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    with ServerLoop(server):
        url = f"http://127.0.0.1:{server.server_address[1]}/sse"
        with Client(url, transport="sse", protocol_version="2024-11-05", timeout=WAIT,
                    max_message_size=MiB) as client:
            started = time.monotonic()
            with pytest.raises(InvalidMessage, match="Parse error: NaN is not JSON"):
                client.call_tool("nan", {})
            client.ping(timeout=WAIT)  # the connection goes on
            # The one stream of this revision is the connection, and cannot be resumed: an event too large ends it,
            # with the error, and fails the request at once.
            with pytest.raises(MCPError, match=f"server-sent event larger than {MiB} bytes .max_message_size."):
                client.call_tool("huge", {})
            assert time.monotonic() - started < WAIT / 2
            with pytest.raises(MCPError):
                client.ping(timeout=WAIT)


class HostileListenHandler(HostileHTTPHandler):
    """The same server, whose GET stream (for server-initiated messages) sends an event too large."""

    def do_GET(self) -> None:
        try:
            self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
                             + sse(json.dumps({"jsonrpc": "2.0", "method": "notifications/message",
                                               "params": {"level": "info", "data": HUGE_TEXT}})))
        except OSError:  # the client stopped reading: as it should
            pass
        self.close_connection = True


def test_a_get_stream_that_sends_an_event_too_large_stops_listening_and_the_session_goes_on(caplog):
    server = ThreadingHTTPServer(("127.0.0.1", 0), HostileListenHandler)
    server.daemon_threads = True
    with ServerLoop(server):
        url = f"http://127.0.0.1:{server.server_address[1]}/mcp"
        caplog.set_level(logging.WARNING, logger="mcplite")
        with Client(url, protocol_version="2025-11-25", timeout=WAIT, max_message_size=MiB) as client:
            stopped = wait_until(lambda: [record.getMessage() for record in caplog.records
                                          if "stopped listening to the GET stream" in record.getMessage()])
            assert f"server-sent event larger than {MiB} bytes (max_message_size)" in stopped[0]
            client.ping(timeout=WAIT)  # the session goes on (raises if not)
            assert client.call_tool("sse-surrogate", {})["content"][0]["text"] == "a\ud800b"


# ---- the HTTP server reading a hostile request ---------------------------------------------------------------
@pytest.mark.parametrize("body, code", [
    (b'{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"v":NaN}}', -32700),
    (b'{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"v":' + b"[" * 200 + b"]" * 200 + b"}}", -32700),
])
def test_the_http_server_answers_a_request_that_does_not_parse_with_its_id(body, code):
    # Its sender is waiting for id 7: a 400 with a null id would leave it waiting for its timeout.
    import http.client

    from mcplite import Server
    from support.http import serving

    with serving(Server("hostile-requests"), stateless=True, json_response=True) as served:
        connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=WAIT)
        try:
            connection.request("POST", "/mcp", body, {"Content-Type": "application/json",
                                                      "Accept": "application/json, text/event-stream",
                                                      "MCP-Protocol-Version": "2025-11-25"})
            response = connection.getresponse()
            answer = json.loads(response.read())
        finally:
            connection.close()
    assert response.status == 400
    assert answer["id"] == 7 and answer["error"]["code"] == code
