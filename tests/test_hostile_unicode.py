"""Strings that are valid JSON but not valid Unicode (a lone surrogate, ``"\\ud800"``), and other malformed
params, on every entry point: each request gets its precise answer and the connection stays usable.

Before: a lone surrogate in a request's id made its reply impossible to encode as UTF-8; over stdio the
error was taken for the end of the input, so the server stopped answering and exited 0; in arguments it
logged a traceback per request; over HTTP the answer was a 500; in a method name it was an internal error
rather than "method not found". ``completion/complete`` with a list where a name belongs was a TypeError.
Now a reply holding such a string is written with its ``\\u`` escape, as it came.
"""

import json
import runpy
import subprocess
import sys
import urllib.request
from typing import Any, Dict, List

import pytest

from mcplite import Server
from mcplite.protocol.jsonrpc import decode, encode, encode_bytes
from tests.support import ROOT
from tests.support.http import serving
from tests.support.wait import WAIT

SERVER = ROOT / "tests" / "fixtures" / "hostile_server.py"

INITIALIZE = ('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
              '"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}')
INITIALIZED = '{"jsonrpc":"2.0","method":"notifications/initialized"}'
# (line sent, id, what its answer must be) in JSON text as written on the wire.
HOSTILE = [
    ('{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}', "\ud800", {"result": {}}),
    ('{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"\\udc00x"}}}', 3,
     {"result": {"content": [{"type": "text", "text": "\udc00x"}]}}),
    ('{"jsonrpc":"2.0","id":4,"method":"\\ud800bad"}', 4,
     {"error": {"code": -32601, "message": "Method not found: \ud800bad"}}),
    ('{"jsonrpc":"2.0","id":5,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":["greet"]},'
     '"argument":{"name":"name","value":"a"}}}', 5,
     {"error": {"code": -32602, "message": "Invalid params: ref.name must be a string, not ['greet']"}}),
    ('{"jsonrpc":"2.0","id":6,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"greet"},'
     '"argument":{"name":"name","value":"a"},"context":[1]}}', 6,
     {"error": {"code": -32602, "message": "Invalid params: context must be {arguments: {name: value}}"}}),
    ('{"jsonrpc":"2.0","id":7,"method":"ping"}', 7, {"result": {}}),  # and the connection is still there
]


def by_id(lines: List[str]) -> Dict[Any, Dict[str, Any]]:
    answers = {}
    for line in lines:
        message = json.loads(line)
        answers[message["id"]] = {key: value for key, value in message.items() if key not in ("jsonrpc", "id")}
    return answers


def test_a_stdio_server_answers_every_hostile_request_and_reads_on():
    lines = [INITIALIZE, INITIALIZED] + [line for line, _, _ in HOSTILE]
    done = subprocess.run([sys.executable, str(SERVER)], input="\n".join(lines) + "\n", capture_output=True,
                          text=True, timeout=WAIT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    answers = by_id(done.stdout.splitlines())
    for _, request_id, expected in HOSTILE:
        assert answers[request_id] == expected
    assert "Traceback" not in done.stderr


def hostile_server() -> Server:
    """The same server, in this process (a fresh one each time: run_path executes the file anew)."""
    return runpy.run_path(str(SERVER), run_name="hostile_server")["server"]


@pytest.mark.parametrize("json_response", [True, False])
def test_an_http_server_answers_a_lone_surrogate_with_its_escape(json_response):
    with serving(hostile_server(), stateless=True, json_response=json_response) as http:
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        for line, request_id, expected in HOSTILE[:3]:
            request = urllib.request.Request(http.url, data=line.encode("ascii"), method="POST", headers={
                "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": "2025-11-25"})
            try:
                with opener.open(request, timeout=WAIT) as response:
                    status, body = response.status, response.read().decode("utf-8")
            except urllib.error.HTTPError as refusal:
                status, body = refusal.code, refusal.read().decode("utf-8")
            if not json_response and body.startswith(("event:", "data:", "id:", ":")):
                body = next(part[len("data:"):].strip() for part in body.splitlines() if part.startswith("data:"))
            assert status == 200, body  # (2025-11-25: a JSON-RPC error travels in a 200)
            answer = json.loads(body)
            assert answer["id"] == request_id
            assert {key: answer[key] for key in expected} == expected


@pytest.mark.parametrize("value", ["\ud800", "a\udfffb", {"k\ud800": ["\udc00"]}])
def test_encoding_writes_a_lone_surrogate_as_its_escape_and_decodes_back(value: Any):
    message = {"jsonrpc": "2.0", "id": 1, "result": {"v": value}}
    text = encode(message)
    text.encode("utf-8")  # always writable
    assert decode(text) == message
    assert decode(encode_bytes(message)) == message


def test_ordinary_text_keeps_its_characters():
    message = {"jsonrpc": "2.0", "id": 1, "result": {"text": "日本 é"}}
    assert encode(message) == '{"jsonrpc":"2.0","id":1,"result":{"text":"日本 é"}}'
    assert encode_bytes(message) == encode(message).encode("utf-8")
