"""Seeded hostile input: random JSON-RPC-shaped values, byte mutations, and JSON that is valid but hostile.

Shared by the stdio and the HTTP fuzzers. Every request made here carries an id that is never a
non-negative integer (`fuzz_id`), so its answers cannot be mistaken for those of the fuzzers' control
requests, whose ids are integers from `VALID_BASE`.
"""

import json
import random
from typing import Any, Callable, Dict, List, Tuple

#: Control requests (the ones that must be answered exactly once) have integer ids from here on, below
#: `VALID_END`; no fuzzed id is an integer in that range.
VALID_BASE = 7_000_000_000
VALID_END = VALID_BASE + 10 ** 8

METHODS = ["initialize", "ping", "tools/list", "tools/call", "resources/list", "resources/read",
           "resources/templates/list", "prompts/list", "prompts/get", "completion/complete", "logging/setLevel",
           "server/discover", "subscriptions/listen", "unknown/method", "", "notifications/cancelled",
           "notifications/progress", "notifications/initialized", "notifications/roots/list_changed"]
TOOLS = ["echo", "sequence", "nonexistent", "", "ECHO"]
KEYS = ["name", "arguments", "n", "count", "uri", "level", "ref", "argument", "cursor", "requestId", "progressToken",
        "progress", "_meta", "protocolVersion", "capabilities", "clientInfo", "type", "value"]
VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28", "1999-01-01", ""]


def call_rng(seed: int, n: int) -> random.Random:
    """The generator of call ``n`` of a run: what a hostile peer does with one call depends on nothing else
    (not on which thread sent it first), and the client can tell in advance how it will be answered."""
    return random.Random(seed * 1_000_003 + n)


def choose(rng: random.Random, weighted: List[Tuple[str, int]]) -> str:
    """One name of ``weighted`` ((name, weight) pairs), drawn from ``rng``."""
    return rng.choices([name for name, _ in weighted], [weight for _, weight in weighted])[0]


def fuzz_id(rng: random.Random) -> Any:
    """An id for a fuzzed request: a string, a negative number, or a value that is no valid id at all."""
    return rng.choice([f"f{rng.randrange(10 ** 6)}", -rng.randrange(1, 10 ** 6), None, True, 1.5, [1], {"a": 1},
                       "", "\u00e9\u4e2d", -0.0])


def random_value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth > 2 or roll < 0.4:
        return rng.choice([None, True, False, 0, -5, 1.5, 2 ** 64, -2 ** 63, 1e308, "", "a", "\u0000", "\u2028",
                           "\U0001f600", *TOOLS, *VERSIONS, [], {}])
    if roll < 0.6:
        return [random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {rng.choice(KEYS): random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))}


def random_message(rng: random.Random) -> Dict[str, Any]:
    """A JSON-RPC-shaped message that may or may not be valid, never a control request."""
    method = rng.choice(METHODS)
    message: Dict[str, Any] = {"jsonrpc": "2.0", "id": fuzz_id(rng), "method": method}
    roll = rng.random()
    if method == "tools/call" and roll < 0.6:
        message["params"] = {"name": rng.choice(TOOLS), "arguments": random_value(rng)}
        if roll < 0.3:
            message["params"]["arguments"] = {"n": random_value(rng), "count": rng.choice([0, 1, 3, -1, "3"])}
    elif method == "initialize" and roll < 0.6:
        message["params"] = {"protocolVersion": rng.choice(VERSIONS), "capabilities": random_value(rng),
                             "clientInfo": {"name": "fuzz", "version": "1"}}
    elif roll < 0.8:
        message["params"] = random_value(rng)
    if method.startswith("notifications/"):
        del message["id"]
    elif rng.random() < 0.05:
        del message["id"]
    if rng.random() < 0.05:
        message["jsonrpc"] = rng.choice(["1.0", 2, None, ""])
    if rng.random() < 0.03:  # a response to nothing we asked
        message = {"jsonrpc": "2.0", "id": fuzz_id(rng), rng.choice(["result", "error"]): random_value(rng)}
    return message


def encode(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def mutate(rng: random.Random, data: bytes) -> bytes:
    """1 to 6 byte-level edits: flips, insertions, deletions, repeats, truncation; never a newline."""
    buffer = bytearray(data)
    for _ in range(rng.randint(1, 6)):
        roll = rng.random()
        at = rng.randrange(len(buffer) + 1)
        if roll < 0.3 and buffer:
            buffer[min(at, len(buffer) - 1)] = rng.randrange(256)
        elif roll < 0.55:
            buffer[at:at] = bytes([rng.choice([rng.randrange(256), ord('"'), ord("\\"), ord("{"), ord("]")])])
        elif roll < 0.75:
            del buffer[at:at + rng.randint(1, 8)]
        elif roll < 0.9:
            buffer[at:at] = buffer[at:at + rng.randint(1, 16)]
        else:
            del buffer[at:]
    return bytes(buffer).replace(b"\n", b" ")


def _surrogate_id(rng: random.Random) -> bytes:
    return b'{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}'


def _surrogate_method(rng: random.Random) -> bytes:
    return b'{"jsonrpc":"2.0","id":"s1","method":"tools/\\udfff"}'


def _surrogate_argument(rng: random.Random) -> bytes:
    return b'{"jsonrpc":"2.0","id":"s2","method":"tools/call","params":{"name":"echo","arguments":{"n":"\\ud83d"}}}'


def _surrogate_tool_name(rng: random.Random) -> bytes:
    return b'{"jsonrpc":"2.0","id":"s3","method":"tools/call","params":{"name":"\\udc00","arguments":{}}}'


def _deep(rng: random.Random) -> bytes:
    depth = rng.choice([100, 1000, 5000, 100_000])
    return b'{"jsonrpc":"2.0","id":"deep","method":"ping","params":{"a":' + b"[" * depth + b"]" * depth + b"}}"


def _huge_integer(rng: random.Random) -> bytes:
    digits = rng.choice([20, 400, 5000])
    return b'{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":"echo","arguments":{"n":' + \
        b"9" * digits + b"}}}"


def _huge_integer_id(rng: random.Random) -> bytes:
    # Negative: a huge positive id would fall among the control ids.
    return b'{"jsonrpc":"2.0","id":-' + b"9" * rng.choice([30, 5000]) + b',"method":"ping"}'


def _non_finite(rng: random.Random) -> bytes:
    literal = rng.choice([b"NaN", b"Infinity", b"-Infinity", b"1e400", b"-1e400"])
    where = rng.choice([b'"id":%s,"method":"ping"', b'"id":"nf","method":"tools/call","params":{"name":"echo",'
                        b'"arguments":{"n":%s}}'])
    return b'{"jsonrpc":"2.0",' + where % literal + b"}"


def _duplicate_keys(rng: random.Random) -> bytes:
    return b'{"jsonrpc":"2.0","id":"d1","id":"d2","method":"ping","method":"tools/list"}'


def _batch(rng: random.Random) -> bytes:
    return encode([random_message(rng) for _ in range(rng.randint(0, 5))])


def _bad_utf8(rng: random.Random) -> bytes:
    junk = rng.choice([b"\xff\xfe", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x80"])
    return b'{"jsonrpc":"2.0","id":"u","method":"ping","params":{"x":"' + junk + b'"}}'


def _bom(rng: random.Random) -> bytes:
    return b"\xef\xbb\xbf" + encode(random_message(rng))


def _control_characters(rng: random.Random) -> bytes:
    return b'{"jsonrpc":"2.0","id":"c","method":"pi\x00ng\x1b"}'


def _blank(rng: random.Random) -> bytes:
    return rng.choice([b"", b" ", b"\t", b"\r", b"   \r"])


def _long_string(rng: random.Random) -> bytes:
    return encode({"jsonrpc": "2.0", "id": "long", "method": "tools/call",
                   "params": {"name": "echo", "arguments": {"n": "x" * rng.choice([1000, 100_000, 1_000_000])}}})


def _random_bytes(rng: random.Random) -> bytes:
    return bytes(rng.randrange(256) for _ in range(rng.randint(1, 200))).replace(b"\n", b"")


def _scalar(rng: random.Random) -> bytes:
    return rng.choice([b"null", b"1", b'"x"', b"[]", b"{}", b"true", b"[[]]", b"[null]", b"[{}]"])


def _cancel_fuzzed(rng: random.Random) -> bytes:
    return encode({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": fuzz_id(rng), "reason": random_value(rng)}})


#: Valid JSON (mostly) that a careless peer or an attacker could send; each makes one line.
HOSTILE: List[Callable[[random.Random], bytes]] = [
    _surrogate_id, _surrogate_method, _surrogate_argument, _surrogate_tool_name, _deep, _huge_integer,
    _huge_integer_id, _non_finite, _duplicate_keys, _batch, _bad_utf8, _bom, _control_characters, _blank,
    _scalar, _cancel_fuzzed, _random_bytes,
]


def fuzz_frame(rng: random.Random, allow_large: bool = True) -> bytes:
    """One hostile frame (no newline in it): a random message, a mutated one, or one of `HOSTILE`."""
    roll = rng.random()
    if roll < 0.35:
        return encode(random_message(rng))
    if roll < 0.75:
        return mutate(rng, encode(random_message(rng)))
    if allow_large and roll < 0.7505:
        return _long_string(rng)
    return rng.choice(HOSTILE)(rng)
