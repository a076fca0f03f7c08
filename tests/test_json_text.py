"""`json_text`'s shortcuts past the `json` module's per-call set-up give exactly what the module gives."""

import json

import pytest

from mcplite.protocol import json_text

# Texts the scanner reads whole, and texts it must hand to JSONDecoder.decode: leading or trailing whitespace (JSON's
# four, and others that are not JSON's), more after the value, nothing, a value cut short or that never starts.
TEXTS = [
    '{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":[1,2.5,true,null,"é"]}}', "{}", "[]", '"s"', "7", "-0.5",
    '{"a":1}\n', '{"a":1}\r\n', '{"a":1} \t ', ' {"a":1}', '\n{"a":1}', "", " ", "\n",
    '{"a":1}x', '{"a":1} {"b":2}', '{"a":1}\x0b', '{"a":1}\u00a0', '{"a":1}\x00',
    '{"a":', '{"a":}', '{"a" 1}', '{"a":[1,]}', "[1,", "nul", "x", "}", '{"a":"\\x"}', '{"a":"\x01"}',
    '{"a":1,"a":2}', '"\\ud800"',
]


def outcome(call, argument):
    """What ``call(argument)`` gives: ("value", what it returned), or the type and message of what it raised."""
    try:
        return "value", call(argument)
    except (TypeError, ValueError) as exc:
        return type(exc).__name__, str(exc)


@pytest.mark.parametrize("text", TEXTS)
def test_the_reader_gives_what_decode_gives_for_every_text(text):
    decoder = json.JSONDecoder()
    assert outcome(json_text._reader(decoder), text) == outcome(decoder.decode, text)


def test_loads_still_refuses_what_is_not_portable_through_the_scanner():
    assert json_text.loads('{"a":1}\n') == {"a": 1}
    for text, rule in (('{"a":NaN}', "NaN is not JSON"), ('{"a":1e400}', "beyond the range of a double"),
                       ("[" * 200 + "]" * 200, "nesting deeper than")):
        with pytest.raises(json_text.NotPortableJSON, match=rule):
            json_text.loads(text)


class Unknown:
    pass


def looped():
    loop = {"a": [1]}
    loop["a"].append(loop)
    return loop


def deep(levels):
    value = []
    for _ in range(levels):
        value = [value]
    return value


VALUES = [
    {"jsonrpc": "2.0", "id": 1,
     "result": {"content": [{"type": "text", "text": "é\n\"\\"}], "v": [1.5, -0.0, True, None]}},
    "s", 7, 2**70, 1e300, [], {}, {"\ud800": "\udfff"}, {1: "int key"}, {"k": float("nan")}, {"k": float("inf")},
    {"k": Unknown()}, {(1, 2): "tuple key"}, {"k": {1, 2}}, (1, 2), deep(50),
]


@pytest.mark.parametrize("ensure_ascii", [False, True])
@pytest.mark.parametrize("separators, allow_nan", [((",", ":"), False), ((", ", ": "), True)])
@pytest.mark.parametrize("value", VALUES, ids=range(len(VALUES)))
def test_the_encoder_writes_and_refuses_what_json_encoder_does(value, ensure_ascii, separators, allow_nan):
    options = {"ensure_ascii": ensure_ascii, "separators": separators, "allow_nan": allow_nan}
    assert outcome(json_text.encoder(**options), value) == outcome(json.JSONEncoder(**options).encode, value)


def test_a_value_that_holds_itself_gets_the_circular_reference_error():
    encode = json_text.encoder(ensure_ascii=False)
    with pytest.raises(ValueError, match="Circular reference detected"):
        encode(looped())
    assert encode({"a": [1]}) == '{"a":[1]}'  # (no state left behind)


def test_a_value_nested_too_deep_for_either_raises_recursion_error_as_json_does():
    too_deep = deep(100_000)
    with pytest.raises(RecursionError):
        json.JSONEncoder().encode(too_deep)
    with pytest.raises(RecursionError):
        json_text.encoder(ensure_ascii=False)(too_deep)
