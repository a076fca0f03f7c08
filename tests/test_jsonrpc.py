"""The JSON-RPC frame: every way a message can be malformed gets the precise error."""

import json

import pytest

from mcplite.errors import INVALID_REQUEST, PARSE_ERROR
from mcplite.protocol import jsonrpc
from mcplite.protocol.jsonrpc import ERROR, NOTIFICATION, REQUEST, RESPONSE, InvalidMessage


@pytest.mark.parametrize("msg, kind", [
    ({"jsonrpc": "2.0", "id": 1, "method": "ping"}, REQUEST),
    ({"jsonrpc": "2.0", "id": "a", "method": "ping", "params": {}}, REQUEST),
    ({"jsonrpc": "2.0", "id": 0, "method": "x"}, REQUEST),
    ({"jsonrpc": "2.0", "method": "notifications/initialized"}, NOTIFICATION),
    ({"jsonrpc": "2.0", "id": 1, "result": {}}, RESPONSE),
    ({"jsonrpc": "2.0", "id": 1, "error": {"code": -1, "message": "no"}}, ERROR),
    ({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse"}}, ERROR),
])
def test_valid_messages_are_classified(msg, kind):
    assert jsonrpc.kind_of(msg) == kind


@pytest.mark.parametrize("msg, answer_id, respond", [
    ([], None, True),
    ("text", None, True),
    ({"id": 1, "method": "ping"}, 1, True),                                   # no jsonrpc member
    ({"jsonrpc": "1.0", "id": 1, "method": "ping"}, 1, True),
    ({"jsonrpc": "2.0", "id": True, "method": "ping"}, None, True),           # bool is not an id
    ({"jsonrpc": "2.0", "id": None, "method": "ping"}, None, True),           # null id in a request
    ({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}, None, True),
    ({"jsonrpc": "2.0", "id": 7, "method": 3}, 7, True),
    ({"jsonrpc": "2.0", "id": 7, "method": ""}, 7, True),
    ({"jsonrpc": "2.0", "id": 7, "method": "x", "params": [1, 2]}, 7, True),  # by-position params
    ({"jsonrpc": "2.0", "id": 7, "method": "x", "result": {}}, 7, True),
    ({"jsonrpc": "2.0", "id": 7}, 7, True),
    ({"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "m"}}, 1, False),
    ({"jsonrpc": "2.0", "id": 1, "result": [1]}, 1, False),
    ({"jsonrpc": "2.0", "id": 1, "error": {"code": "x", "message": "m"}}, 1, False),
    ({"jsonrpc": "2.0", "id": {}, "error": {"code": 1, "message": "m"}}, None, False),
    ({"jsonrpc": "2.0", "result": {}}, None, False),
])
def test_invalid_messages_name_the_id_to_answer(msg, answer_id, respond):
    with pytest.raises(InvalidMessage) as info:
        jsonrpc.kind_of(msg)
    assert info.value.code == INVALID_REQUEST
    assert info.value.id == answer_id
    assert info.value.respond is respond
    response = info.value.response()
    assert response["id"] == answer_id and response["error"]["code"] == INVALID_REQUEST


@pytest.mark.parametrize("data", [b"{", b"", b"\xff\xfe", "nul", b'{"a": NaN', "[1,]",
                                  # Python's json reads these; they are not portable JSON (protocol/json_text.py)
                                  "NaN", b"[-Infinity]", b'{"a": 1e400}', "9" * 4301, "[" * 200 + "]" * 200])
def test_parse_errors_answer_with_null_id(data):
    with pytest.raises(InvalidMessage) as info:
        jsonrpc.decode(data)
    assert info.value.code == PARSE_ERROR
    assert info.value.response() == {"jsonrpc": "2.0", "id": None,
                                      "error": {"code": PARSE_ERROR, "message": str(info.value)}}


def test_encode_is_compact_single_line_utf8():
    text = jsonrpc.encode(jsonrpc.request(1, "x", {"s": "line\nbreak é"}))
    assert text == '{"jsonrpc":"2.0","id":1,"method":"x","params":{"s":"line\\nbreak é"}}'
    assert jsonrpc.decode(text.encode("utf-8"))["params"]["s"] == "line\nbreak é"


def test_encode_refuses_values_json_cannot_carry():
    with pytest.raises(ValueError):
        jsonrpc.encode({"x": float("nan")})


TAIL = {"resultType": "complete", "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s é", "version": "1"}}}
ENVELOPE = {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "x": ["\ud800", 1.5]}}


@pytest.mark.parametrize("head", [{"content": [{"type": "text", "text": "é\n"}], "structuredContent": {"v": 1}},
                                  {}, {"content": [], "s": "\ud800"}], ids=["members", "empty", "surrogate"])
@pytest.mark.parametrize("id", [7, -3, 'a"b', 2**70])
def test_an_answer_made_with_its_members_text_is_the_answer_it_stands_for(head, id):
    message = jsonrpc.result_with_members(id, head, TAIL, jsonrpc.encode(TAIL))
    plain = jsonrpc.result(id, {**head, **TAIL})
    assert message == plain and list(message) == list(plain) and list(message["result"]) == [*head, *TAIL]
    assert jsonrpc.encode(message) == jsonrpc.encode(plain)
    assert jsonrpc.encode_bytes(message) == jsonrpc.encode_bytes(plain)


@pytest.mark.parametrize("head", [{"name": "add", "arguments": {"a": "é\n"}}, {}], ids=["members", "empty"])
@pytest.mark.parametrize("method", ["tools/call", 'a "quoted" méthode\n'])
@pytest.mark.parametrize("id", [7, 'a"b', 2**70])
def test_a_request_made_with_its_members_text_is_the_request_it_stands_for(head, method, id):
    message = jsonrpc.request_with_members(id, method, head, ENVELOPE, jsonrpc.encode(ENVELOPE))
    plain = jsonrpc.request(id, method, {**head, **ENVELOPE})
    assert message == plain and list(message) == list(plain)
    # (the same value; a string that is not Unicode escapes the whole of a plain message, only itself here)
    assert json.loads(jsonrpc.encode(message)) == json.loads(jsonrpc.encode(plain))
    assert jsonrpc.decode(jsonrpc.encode_bytes(message)) == jsonrpc.decode(jsonrpc.encode_bytes(plain))


def test_a_message_made_with_its_text_is_written_as_it_was_made():
    """The text is written when the message is made: nothing done to the dicts afterwards reaches the wire
    (no message is changed once made; this says what the wire holds if one were)."""
    head = {"content": []}
    message = jsonrpc.result_with_members(1, head, TAIL, jsonrpc.encode(TAIL))
    head["content"] = ["changed"]
    message["result"]["extra"] = 1
    assert json.loads(jsonrpc.encode(message)) == jsonrpc.result(1, {"content": [], **TAIL})


def test_a_head_that_is_not_json_gives_a_plain_message_that_fails_as_any_other():
    message = jsonrpc.result_with_members(1, {"x": float("nan")}, TAIL, jsonrpc.encode(TAIL))
    assert type(message) is dict
    with pytest.raises(ValueError):
        jsonrpc.encode(message)


def test_builders():
    assert jsonrpc.notification("n") == {"jsonrpc": "2.0", "method": "n"}
    assert jsonrpc.result(3, {"a": 1}) == {"jsonrpc": "2.0", "id": 3, "result": {"a": 1}}
    assert jsonrpc.error(3, -1, "m", {"d": 1}) == {"jsonrpc": "2.0", "id": 3,
                                                     "error": {"code": -1, "message": "m", "data": {"d": 1}}}


def test_request_and_response_ids_of_one_message_or_a_batch():
    batch = [jsonrpc.request(1, "a"), jsonrpc.notification("n"), jsonrpc.result("x", {}),
             jsonrpc.error(None, -32700, "parse"), jsonrpc.error(2, -1, "no"), "junk"]
    assert jsonrpc.request_ids(batch) == [1]
    assert jsonrpc.response_ids(batch) == ["x", 2]
    assert jsonrpc.request_ids(jsonrpc.request("r", "m")) == ["r"]
    assert jsonrpc.response_ids(jsonrpc.request("r", "m")) == []
    assert jsonrpc.is_request(jsonrpc.request(0, "m")) and not jsonrpc.is_request(jsonrpc.notification("m"))


def test_a_reused_id_is_refused_with_one_error_wherever_it_is_checked():
    refusal = jsonrpc.id_in_use("abc")
    assert (refusal.code, refusal.message) == (-32600, "Invalid Request: id 'abc' is already in use")
    assert jsonrpc.id_in_use(7).message == "Invalid Request: id 7 is already in use"
