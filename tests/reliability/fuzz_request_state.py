"""Fuzzer fuzz-request-state: seeded mutations of sealed ``requestState`` tokens, opened by `request_state.open_state`.

Every case starts from a valid token for one request and spoils it one of three ways (`KINDS`):

- ``token``: the token's text (a flipped, dropped or inserted character, non-ASCII and lone surrogates, parts
  added, dropped or swapped, truncation), or not a str at all; the signature then fails, or never gets checked;
- ``payload``: the JSON inside, re-signed with the ring's own key, so the reader and the claim checks see it:
  members dropped or given other values of any type (NaN, ``1e400``, huge integers, bools, deep nesting, lone
  surrogates), or the text itself spoiled (invalid UTF-8, a BOM, ``NaN``, 100,000 brackets, trailing bytes);
- ``codec``: what a deployment's codec hands back (``Server(state_codec=...)``): the same spoiled payloads, a
  str, or something that is neither.

Passing means: every case returns a round state (a dict with ``r``, ``asked``, ``answers``, ``memo``) or raises
`InvalidRequestState`, never another exception (UnicodeError, ValueError, RecursionError, KeyError, TypeError).
A failure raises AssertionError with the line that reproduces the case alone (`run_case`).

Standalone: it imports only mcplite, so pytest (tests/security/test_sec_principal.py) and the reliability suite
both run it. ``run(seed, cases)``: 2,000 cases take well under a second.
"""

import base64
import hashlib
import hmac
import json
import random
from typing import Any, Callable, Dict, List, Optional

from mcplite.protocol.request_state import InvalidRequestState, StateKeys, open_state, question_digest, seal_state

__all__ = ["run", "run_case", "KINDS"]

SECRET = b"s" * 32
KEYS = StateKeys([SECRET])
NOW = 1_800_000_000
#: The request every case's token is sealed for, and opened against.
REQUEST: Dict[str, Any] = {"method": "tools/call", "target": "transfer", "arguments": {"to": "bob", "amount": 5},
                           "audience": "bank"}
ROUND_STATE: Dict[str, Any] = {
    "r": 1, "asked": {"ask-1": question_digest("elicitation/create", {"message": "Sure?"})},
    "answers": {"ask-1": {"action": "accept", "content": {"sure": True}}}, "memo": {"n": 1}, "user": ["u", 2]}
KINDS = ("token", "payload", "codec")
ODD_TEXT = ["\u00e9", "\ud800", "\udfff", "\x00", "\u2028", "\ufeff", "\U0001f600", "\uffff", ".", "=", "+", "/",
            " ", "\n", "%", "\\"]
RAW_SPOILS: List[bytes] = [b"NaN", b"Infinity", b"-Infinity", b"1e400", b"-1e400", b"9" * 5000, b"\xff", b"\xc3",
                           b"\xed\xa0\x80", b"\xef\xbb\xbf", b"[" * 100_000, b"{\"a\":" * 50_000, b"\"\\ud800\"",
                           b"", b"null", b"[]", b"\"v1\"", b"0", b"true"]


class _Codec:
    """A codec that hands back whatever the case chose, whatever the token."""

    def __init__(self, unsealed: Any) -> None:
        self.unsealed = unsealed

    def seal(self, payload: bytes) -> str:
        return "sealed"

    def unseal(self, token: str) -> Any:
        return self.unsealed


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _sign(payload: bytes) -> str:
    """A token around ``payload`` that the ring's key signed (the formula of MODERN.md, computed here)."""
    k_mac = hmac.new(SECRET, b"mcplite/request-state/v1", hashlib.sha256).digest()
    kid = hashlib.sha256(b"mcplite/kid" + k_mac).digest()[:4].hex()
    body = _b64(payload)
    return f"v1.{body}.{_b64(hmac.new(k_mac, f'v1.{kid}.{body}'.encode('ascii'), hashlib.sha256).digest())}"


def _value(rng: random.Random, depth: int = 0) -> Any:
    """A JSON-ish value of any type, some of them hostile."""
    choice = rng.randrange(14 if depth < 3 else 10)
    if choice == 0:
        return None
    if choice == 1:
        return rng.choice([True, False])
    if choice == 2:
        return rng.choice([0, 1, -1, 2 ** 63, 10 ** 40, 17])
    if choice == 3:
        return rng.choice([0.5, 1e308, float("nan"), float("inf"), -0.0])
    if choice == 4:
        return rng.choice(ODD_TEXT) * rng.randrange(1, 4)
    if choice == 5:
        return "".join(rng.choice(ODD_TEXT + ["a", "b"]) for _ in range(rng.randrange(0, 12)))
    if choice == 6:
        return "tools/call"
    if choice == 7:
        return {}
    if choice == 8:
        return []
    if choice == 9:
        nested: Any = 0
        for _ in range(rng.choice([10, 200, 5000])):
            nested = [nested]
        return nested
    if choice in (10, 11):
        return {rng.choice(["a", "r", "\ud800", "asked", ""]): _value(rng, depth + 1) for _ in range(rng.randrange(3))}
    return [_value(rng, depth + 1) for _ in range(rng.randrange(3))]


def _payload(principal: Optional[str]) -> Dict[str, Any]:
    """The payload of a valid token for `REQUEST`, as a dict."""
    token = seal_state(ROUND_STATE, keys=KEYS, now=NOW, principal=principal, **REQUEST)
    body = token.split(".")[1]
    decoded: Dict[str, Any] = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    return decoded


def _spoiled_payload(rng: random.Random, principal: Optional[str]) -> bytes:
    payload = _payload(principal)
    move = rng.randrange(4)
    if move == 0:  # a member gets another value
        payload[rng.choice(sorted(payload) + ["p", "user", "extra"])] = _value(rng)
    elif move == 1:  # members go
        for name in rng.sample(sorted(payload), rng.randrange(1, 4)):
            del payload[name]
    elif move == 2:  # the text is spoiled somewhere
        text = _encode(payload)
        at = rng.randrange(len(text) + 1)
        return text[:at] + rng.choice(RAW_SPOILS) + text[at + rng.choice([0, 0, 1, 5]):]
    else:  # not an object, or a hostile one
        return rng.choice(RAW_SPOILS)
    return _encode(payload)


def _encode(value: Any) -> bytes:
    """JSON as a careless encoder writes it: NaN allowed, lone surrogates kept, no depth limit beyond the stack."""
    try:
        return json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")
    except RecursionError:
        return b"[" * 100_000


def _spoiled_token(rng: random.Random, token: str) -> Any:
    move = rng.randrange(8)
    if move == 0:
        return rng.choice([None, 5, 1.5, True, [token], {"t": token}, token.encode("ascii"), b"", ""])
    at = rng.randrange(len(token))
    if move == 1:
        return token[:at] + rng.choice(ODD_TEXT) + token[at:]
    if move == 2:
        return token[:at] + rng.choice(ODD_TEXT) + token[at + 1:]
    if move == 3:
        return token[:at]
    if move == 4:
        return token[:at] + token[at + 1:]
    parts = token.split(".")
    if move == 5:
        rng.shuffle(parts)
    elif move == 6:
        parts.insert(rng.randrange(len(parts) + 1), rng.choice(["", "v1", parts[1], "\u00e9"]))
    else:
        parts[rng.randrange(3)] = rng.choice(["", "v2", "AAAA", "A", "\ud800", parts[1][:7]])
    return ".".join(parts)


def run_case(seed: int, n: int) -> str:
    """Case ``n`` of ``seed``: opens one spoiled state; returns what came of it ("opened" or "refused").

    Raises AssertionError, with the line that reproduces it, when anything else comes of it."""
    rng = random.Random(f"request-state:{seed}:{n}")
    kind = KINDS[n % len(KINDS)]
    principal = rng.choice([None, "https://issuer.example|alice|app", "\u00e9|\ud800"])
    opened_by = principal if rng.random() < 0.8 else rng.choice([None, "mallory"])
    codec: Optional[_Codec] = None
    if kind == "token":
        token: Any = _spoiled_token(rng, seal_state(ROUND_STATE, keys=KEYS, now=NOW, principal=principal, **REQUEST))
    elif kind == "payload":
        token = _sign(_spoiled_payload(rng, principal))
    else:
        unsealed: Any = _spoiled_payload(rng, principal)
        pick = rng.randrange(4)
        if pick == 1:
            unsealed = unsealed.decode("utf-8", "replace")
        elif pick == 2:
            unsealed = _value(rng)
        codec, token = _Codec(unsealed), "opaque"
    try:
        round_state = open_state(token, keys=KEYS, now=NOW + 1, principal=opened_by, codec=codec, **REQUEST)
    except InvalidRequestState:
        return "refused"
    except Exception as exc:
        raise AssertionError(
            f"fuzz-request-state case {n} ({kind}) of seed {seed}: {type(exc).__name__}: {str(exc)[:200]}; "
            f"reproduce (from the checkout's root): python3 -c \"from tests.reliability.fuzz_request_state "
            f"import run_case; run_case({seed}, {n})\"") from exc
    assert isinstance(round_state, dict) and {"r", "asked", "answers", "memo"} <= set(round_state), \
        f"fuzz-request-state case {n} of seed {seed}: opened to {round_state!r:.200}"
    return "opened"


def run(seed: int, cases: int, *, on_case: Optional[Callable[[int, str], None]] = None) -> None:
    """Run cases 0 to ``cases - 1`` of ``seed`` (see the module docstring); AssertionError at the first failure.

    ``on_case(n, outcome)`` is told each outcome, for a caller that counts them."""
    for n in range(cases):
        outcome = run_case(seed, n)
        if on_case is not None:
            on_case(n, outcome)
