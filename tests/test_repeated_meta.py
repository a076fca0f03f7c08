"""RepeatedMetaDecoder: a repeated ``_meta`` is parsed once, and every line decodes exactly as jsonrpc.decode
decodes it, whatever a hostile peer writes around the learned ending."""

import json
import random

import pytest
from support import Kept

from mcplite.protocol import jsonrpc, repeated_meta
from mcplite.protocol.jsonrpc import InvalidMessage
from mcplite.protocol.repeated_meta import RepeatedMetaDecoder

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "é client", "version": "1"}}
META_TEXT = json.dumps(META, ensure_ascii=False, separators=(",", ":")).encode()
ENDING = b'"_meta":' + META_TEXT + b"}}\n"


def request(i, params=b'"name":"add","arguments":{"a":1,"b":2},'):
    return b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{' % i + params + ENDING


def outcome(decode, line):
    """What ``decode(line)`` gives: ("value", v) or ("error", code, message, id, respond)."""
    try:
        return ("value", decode(line))
    except InvalidMessage as exc:
        return ("error", exc.code, str(exc), exc.id, exc.respond)


class Recording:
    """jsonrpc.decode, keeping each text it was given: which parses the decoder made."""

    def __init__(self):
        self.texts = []

    def __call__(self, data):
        self.texts.append(bytes(data))
        return jsonrpc.decode(data)


@pytest.fixture
def parses(monkeypatch):
    recording = Recording()
    monkeypatch.setattr(repeated_meta, "decode", recording)
    return recording.texts


def learned():
    decoder = RepeatedMetaDecoder()
    for i in (1, 2):
        decoder.decode(request(i))
    return decoder


def test_the_second_repeat_is_learned_and_later_lines_parse_without_the_envelope_text(parses):
    decoder = RepeatedMetaDecoder()
    first = decoder.decode(request(1))
    assert parses == [request(1)]  # once: nothing to compare it with yet
    second = decoder.decode(request(2))
    assert parses[1:] == [request(2), META_TEXT]  # the repeat: the envelope parsed by itself, once
    del parses[:]
    third = decoder.decode(request(3))
    assert len(parses) == 1 and META_TEXT not in parses[0] and b'"_meta":"' in parses[0]
    for i, value in enumerate((first, second, third), 1):
        assert value == jsonrpc.decode(request(i))
        assert value["params"]["_meta"] == META


def test_every_request_has_a_meta_dict_of_its_own_by_default():
    decoder = learned()
    one, two = decoder.decode(request(3)), decoder.decode(request(4))
    assert one["params"]["_meta"] is not two["params"]["_meta"]
    one["params"]["_meta"]["progressToken"] = 1
    del one["params"]["_meta"]["io.modelcontextprotocol/clientInfo"]
    assert decoder.decode(request(5))["params"]["_meta"] == META


def test_later_metas_hold_the_very_values_of_the_message_it_was_learned_from():
    """So a server session comparing each request's ``_meta`` with the one it kept of that message (its envelope
    verdict, `session.server`) finds the same objects and compares no nested dict or string."""
    decoder = RepeatedMetaDecoder()
    decoder.decode(request(1))
    learned_from = decoder.decode(request(2))["params"]["_meta"]
    later = decoder.decode(request(3))["params"]["_meta"]
    assert later == learned_from and later is not learned_from
    assert all(later[key] is learned_from[key] for key in META)


def test_shared_requests_that_repeat_the_envelope_get_the_dict_of_the_request_it_was_learned_from():
    """``share_requests`` (a server's stdio reader): so the server session, which keeps the ``_meta`` of the
    request it accepted (`session.server`), tells each later repeat by identity: no copy and no comparison per
    request. Notifications that end the same way still get a dict each."""
    decoder = RepeatedMetaDecoder(share_requests=True)
    first = decoder.decode(request(1))["params"]["_meta"]
    learned_from = decoder.decode(request(2))["params"]["_meta"]
    later = [decoder.decode(request(i))["params"]["_meta"] for i in (3, 4)]
    assert first == learned_from == META and first is not learned_from
    assert later[0] is learned_from and later[1] is learned_from
    notification = b'{"jsonrpc":"2.0","method":"notifications/x","params":{' + ENDING
    notified = decoder.decode(notification)
    assert notified == jsonrpc.decode(notification) and notified["params"]["_meta"] is not learned_from


def test_answers_that_repeat_the_meta_each_have_a_dict_of_their_own():
    """A client hands each result to its caller, who may change it: an answer's ``_meta`` is its own dict (with
    the learned values), and changing one changes no later answer."""
    server_meta = b'{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}'
    decoder = RepeatedMetaDecoder()
    lines = [b'{"jsonrpc":"2.0","id":%d,"result":{"content":[],"_meta":%s}}\n' % (i, server_meta)
             for i in range(5)]
    metas = [decoder.decode(line)["result"]["_meta"] for line in lines[:4]]
    assert metas[2] is not metas[3] and metas[2]["io.modelcontextprotocol/serverInfo"] is \
        metas[3]["io.modelcontextprotocol/serverInfo"]
    metas[3]["progressToken"] = 1
    del metas[3]["io.modelcontextprotocol/serverInfo"]
    assert decoder.decode(lines[4]) == jsonrpc.decode(lines[4])


@pytest.mark.parametrize("discover_ending", [ENDING, b'"_meta": ' + META_TEXT + b"}}\n"],
                         ids=["same-ending", "spaced-ending"])
def test_the_server_session_keeps_the_dict_the_decoder_hands_out(discover_ending):
    """Whichever request the decoder learned the envelope from (``server/discover``, when it ends as the calls
    do; else the second call), the session's kept envelope ends up being the dict the decoder hands out, so
    that each later request is told by identity. (At first the session kept the first call's own values, and
    after a discover that did not end like the calls, compared every later request's down to its strings.)"""
    from mcplite import Server

    server = Server("kept")
    server.tool(lambda a, b: a + b, name="add")
    transport = Kept()
    session = server.create_session(transport)
    session.start()
    decoder = RepeatedMetaDecoder(share_requests=True)  # (as a stdio server's reader)
    session.receive(decoder.decode(b'{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{'
                                   + discover_ending), inline=True)
    for i in range(1, 6):
        message = decoder.decode(request(i))
        session.receive(message, inline=True)
    kept = session._last_envelope[0]
    assert kept == META and kept is message["params"]["_meta"]
    assert [json.loads(jsonrpc.encode(answer))["result"]["content"][0]["text"] for answer in transport.sent[1:]] == \
        ["3"] * 5
    session.close()


def test_an_ending_meta_that_is_not_the_params_one_is_learned_as_its_own_text():
    """A line whose last ``"_meta":RAW}}`` belongs to another member than ``params``: RAW is learned, as parsed
    by itself, and lines ending so keep decoding exactly as jsonrpc.decode says."""
    def line(i):
        return (b'{"jsonrpc":"2.0","id":%d,"method":"m","params":{"_meta":{"a":1}},"x":{' % i + ENDING)

    decoder = RepeatedMetaDecoder()
    for i in (1, 2, 3, 4):
        value = decoder.decode(line(i))
        assert value == jsonrpc.decode(line(i)) and value["params"]["_meta"] == {"a": 1}
        assert value["x"]["_meta"] == META
    assert decoder._meta == META


def test_a_meta_that_changes_every_time_is_never_learned(parses):
    decoder = RepeatedMetaDecoder()
    for i in range(5):
        meta = {**META, "progressToken": i}
        line = b'{"jsonrpc":"2.0","id":%d,"method":"ping","params":{"_meta":%s}}\n' % (i, json.dumps(meta).encode())
        assert decoder.decode(line) == jsonrpc.decode(line)
    assert len(parses) == 5  # one parse a line: no envelope parsed apart, no second try


@pytest.mark.parametrize("ending", [b"}}", b"}}\r\n", b"}}  \n"], ids=["bare", "crlf", "spaces"])
def test_line_endings_are_learned_as_they_come(ending, parses):
    decoder = RepeatedMetaDecoder()
    lines = [request(i)[:-3] + ending for i in range(4)]
    values = [decoder.decode(line) for line in lines]
    assert values == [jsonrpc.decode(line) for line in lines]
    assert META_TEXT not in parses[-1]


def test_spaced_json_and_a_meta_that_is_the_only_member_are_learned_too(parses):
    decoder = RepeatedMetaDecoder()
    lines = [json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/list", "params": {"_meta": META}}).encode()
             + b"\n" for i in range(4)]
    assert [decoder.decode(line) for line in lines] == [jsonrpc.decode(line) for line in lines]
    assert json.dumps(META).encode() not in parses[-1]


# Lines that end with the learned ending but are not what they seem: each must decode (or fail) exactly as
# jsonrpc.decode says, with the same error text, id and respond.
HOSTILE_PREFIXES = [
    b'',                                                                     # the ending alone
    b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":"inside a string ',  # the ending inside a string
    b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":"ends in a backslash\\',
    b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":',                  # "_meta" where a value goes
    b'{"jsonrpc":"2.0","id":1,"method":"x","params":["a",',                  # in an array
    b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"other":1},',  # a duplicate, earlier
    b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":"',             # an open string before it
    b'{"jsonrpc":"2.0","id":1,"result":{',                                   # an answer's result
    b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"p":{',                 # one level deeper
    b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"n":NaN,',
    b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"n":1e400,',
    b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"n":' + b"9" * 5000 + b',',
    b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"s":"\xff",',            # not UTF-8
    b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"s":"\xc3',              # cut inside a character
    b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"s":"\\ud800",',         # a lone surrogate, escaped
    b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"d":' + b"[" * 125 + b"]" * 125 + b',',
    b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"d":' + b"[" * 126 + b"]" * 126 + b',',
    b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"d":' + b"[" * 127 + b"]" * 127 + b',',
    b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"big":"' + b"x" * 20000 + b'","f":1e999,',
    b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"big":"' + b"x" * 20000 + b'",',
    b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":1}} {"params":{',   # two values
    b'{"jsonrpc":"2.0","id":1,"method":"x"}, "params":{',
    b'[{"jsonrpc":"2.0","id":1,"method":"x","params":{',                      # a batch, cut
    b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":1,',
    b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":1 , ',
    b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":1,,',
    b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":1',                  # no comma
    b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":1}, "x":{',          # params is not the last member
    b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":1},"params":{',      # a second params, last
    b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":1,"_meta\\u0022":1,',
    b'   {"jsonrpc":"2.0","id":1,"method":"x","params":{',                     # leading whitespace
    b'{"jsonrpc":"2.0","id":1.5,"method":"x","params":{',                     # an invalid id
    b'{"jsonrpc":"2.0","id":true,"method":"x","params":{',
]


@pytest.mark.parametrize("prefix", HOSTILE_PREFIXES, ids=range(len(HOSTILE_PREFIXES)))
def test_a_line_ending_as_learned_decodes_exactly_as_jsonrpc_decode_says(prefix):
    decoder = learned()
    line = prefix + ENDING
    assert outcome(decoder.decode, line) == outcome(jsonrpc.decode, line)
    # and the decoder is as good as before for the next request
    assert decoder.decode(request(9)) == jsonrpc.decode(request(9))


@pytest.mark.parametrize("kind", [bytearray, memoryview])
@pytest.mark.parametrize("prefix", [request(9)[:-len(ENDING)], *HOSTILE_PREFIXES[:8]], ids=range(9))
def test_a_line_that_is_not_bytes_decodes_exactly_as_jsonrpc_decode_says(prefix, kind):
    # Only bytes give back the very line when removesuffix finds no ending; any other type would seem cut.
    # The first prefix is a request's own; without the ending, appending the stand-in would complete it.
    decoder = learned()
    for line in (prefix + ENDING, prefix):
        assert outcome(decoder.decode, kind(line)) == outcome(jsonrpc.decode, line)
    assert decoder.decode(request(10)) == jsonrpc.decode(request(10))


@pytest.mark.parametrize("meta_text", [
    b'{"a":1.5e300,"b":[1,2,{"c":null}],"d":"\\u00e9\\ud83d\\ude00"}',
    b' { "a" : 1 } ',
    b'{"a":' + b"[" * 17 + b"]" * 17 + b'}',      # too deep to learn: decoded whole, each time
    b'{"a":"' + b"y" * 3000 + b'"}',                # too long to learn
    b'[1,2]',                                        # not an object: not learned
    b'"text"',
    b'{"a":1}}',                                     # not JSON by itself
], ids=["values", "spaced", "deep", "long", "array", "string", "unbalanced"])
def test_unusual_envelopes_decode_as_they_always_did(meta_text):
    decoder = RepeatedMetaDecoder()
    for i in range(5):
        line = b'{"jsonrpc":"2.0","id":%d,"method":"x","params":{"a":1,"_meta":' % i + meta_text + b'}}\n'
        assert outcome(decoder.decode, line) == outcome(jsonrpc.decode, line)


def test_each_decoder_has_a_stand_in_of_its_own():
    assert RepeatedMetaDecoder()._stand_in != RepeatedMetaDecoder()._stand_in


def test_random_damage_anywhere_in_a_line_decodes_as_jsonrpc_decode_says():
    """Thousands of lines, each a learned request with bytes changed, cut or added (often near the ending,
    where the decoder's own work is): the decoder and jsonrpc.decode agree on every one."""
    rng = random.Random(20261126)
    alphabet = b'{}[]",:\\ \n0123456789.eE-+tfnul_ametax\xc3\xa9\xff'
    decoder = learned()
    base = request(7)
    agreed = fast = 0
    for _ in range(4000):
        line = bytearray(base)
        for _ in range(rng.randint(1, 3)):
            where = rng.choice((rng.randrange(len(line) - len(ENDING)), rng.randrange(len(line)),
                                len(line) - len(ENDING) + rng.randrange(-8, 8)))
            where = max(0, min(len(line) - 1, where))
            action = rng.randrange(3)
            if action == 0:
                line[where] = rng.choice(alphabet)
            elif action == 1:
                del line[where]
            else:
                line.insert(where, rng.choice(alphabet))
        data = bytes(line)
        fast += data.endswith(ENDING)
        assert outcome(decoder.decode, data) == outcome(jsonrpc.decode, data), data
        agreed += 1
    assert agreed == 4000 and fast > 1500  # many took the decoder's own path


def test_answers_that_end_with_the_same_result_meta_are_learned_too(parses):
    server_meta = b'{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}'
    decoder = RepeatedMetaDecoder()
    lines = [b'{"jsonrpc":"2.0","id":%d,"result":{"content":[],"resultType":"complete","_meta":%s}}\n'
             % (i, server_meta) for i in range(4)]
    values = [decoder.decode(line) for line in lines]
    assert values == [jsonrpc.decode(line) for line in lines]
    assert server_meta not in parses[-1]
    assert values[2]["result"]["_meta"] is not values[3]["result"]["_meta"]
    # a request with that ending, and an answer whose params hold something else, are decoded exactly too
    for line in (b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":%s}}\n' % server_meta,
                 b'{"jsonrpc":"2.0","id":1,"params":{"_meta":1},"result":{"_meta":%s}}\n' % server_meta,
                 b'{"jsonrpc":"2.0","id":1,"params":[],"result":{"_meta":%s}}\n' % server_meta,
                 b'{"jsonrpc":"2.0","id":1,"result":[{"_meta":%s}}\n' % server_meta):
        assert outcome(decoder.decode, line) == outcome(jsonrpc.decode, line)
