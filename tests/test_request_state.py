"""protocol/request_state: `requestState` sealed and opened with the standard library (MODERN.md, "Protecting
`requestState`"). Pure: every case is a row of a table, with ``now`` passed in; no threads, no clock."""

import base64
import hashlib
import hmac
import json
import subprocess
import sys
from typing import Any, Callable, Dict, List, Optional, Tuple

import pytest

from mcplite.errors import INTERNAL_ERROR, INVALID_PARAMS, RPCError
from mcplite.protocol import jsonrpc, request_state
from mcplite.protocol.request_state import (
    MAX_ROUNDS, MAX_STATE_BYTES, InvalidRequestState, StateKeys, arguments_digest, canonical_json, open_state,
    question_digest, seal_state,
)

from support import ROOT, WAIT

OLD = StateKeys([b"o" * 32])
NEW = StateKeys([b"n" * 32])
FOREIGN = StateKeys([b"f" * 32])
NOW = 1_800_000_000
TTL = 600

ROUND_STATE: Dict[str, Any] = {
    "r": 1,
    "asked": {"ask-1": question_digest("elicitation/create", {"message": "Sure?"})},
    "answers": {"ask-1": {"action": "accept", "content": {"sure": True}}},
    "memo": {"id": "5d4c"},
    "user": ["anything", 1, None],
}

#: The request a state is sealed for: the keyword arguments of seal_state and open_state.
REQUEST: Dict[str, Any] = {
    "method": "tools/call", "target": "delete_files", "arguments": {"path": "/tmp/x", "force": True},
    "audience": "files-server", "principal": "https://issuer.example|alice|client-1",
}


def seal(round_state: Optional[Dict[str, Any]] = None, keys: StateKeys = OLD, now: float = NOW, **changes: Any) -> str:
    return seal_state(ROUND_STATE if round_state is None else round_state, keys=keys, now=now, ttl=TTL,
                      **{**REQUEST, **changes})


def open_(token: Any, keys: StateKeys = OLD, now: float = NOW + 1, **changes: Any) -> Dict[str, Any]:
    return open_state(token, keys=keys, now=now, **{**REQUEST, **changes})


def refusal(call: Callable[[], Any]) -> InvalidRequestState:
    with pytest.raises(InvalidRequestState) as caught:
        call()
    return caught.value


def b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def parts(token: str) -> Tuple[str, str, str]:
    version, body, signature = token.split(".")
    return version, body, signature


def payload_of(token: str) -> Dict[str, Any]:
    body = parts(token)[1]
    return json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))


def resign(payload: Dict[str, Any], secret: bytes) -> str:
    """A token built by hand from the design's formula: what a key holder (or a bug) could mint."""
    k_mac = hmac.new(secret, b"mcplite/request-state/v1", hashlib.sha256).digest()
    kid = hashlib.sha256(b"mcplite/kid" + k_mac).digest()[:4].hex()
    body = b64(canonical_json(payload))
    return f"v1.{body}.{b64(hmac.new(k_mac, f'v1.{kid}.{body}'.encode(), hashlib.sha256).digest())}"


# --- the round trip ---------------------------------------------------------------------------------------


def test_a_sealed_state_opens_to_its_envelope() -> None:
    assert open_(seal()) == ROUND_STATE


def test_an_envelope_without_the_optional_fields_opens_with_empty_ones_and_no_user() -> None:
    assert open_(seal({"r": 0})) == {"r": 0, "asked": {}, "answers": {}, "memo": {}}


def test_an_unauthenticated_request_round_trips_and_carries_no_principal_claim() -> None:
    token = seal(principal=None)
    assert "p" not in payload_of(token)
    assert open_(token, principal=None) == ROUND_STATE


def test_no_arguments_and_empty_arguments_are_the_same_call() -> None:
    assert arguments_digest(None) == arguments_digest({})
    assert open_(seal(arguments=None), arguments={}) == ROUND_STATE


def test_the_token_has_the_designed_format_and_claims() -> None:
    token = seal()
    version, body, signature = parts(token)
    assert version == "v1" and "=" not in token
    payload = payload_of(token)
    assert payload["kid"] == OLD.kids[0] and len(payload["kid"]) == 8
    assert (payload["v"], payload["iat"], payload["exp"]) == (1, NOW, NOW + TTL)
    assert (payload["m"], payload["t"], payload["aud"]) == ("tools/call", "delete_files", "files-server")
    assert payload["a"] == b64(hashlib.sha256(canonical_json(REQUEST["arguments"])).digest())
    assert REQUEST["principal"] not in token and "alice" not in json.dumps(payload)  # the principal stays unreadable
    assert len(base64.urlsafe_b64decode(payload["p"] + "==")) == 16
    assert resign(payload, b"o" * 32) == token  # the formula of MODERN.md, computed independently


def test_the_token_is_signed_not_encrypted() -> None:
    """Documented: the client can read what the state carries, so memo and user must hold no secrets."""
    payload = payload_of(seal())
    assert {name: payload[name] for name in ("asked", "answers", "memo", "user")} == \
        {name: ROUND_STATE[name] for name in ("asked", "answers", "memo", "user")}


def test_sealing_is_deterministic_for_equal_inputs_whatever_the_key_order() -> None:
    reordered = {"arguments": {"force": True, "path": "/tmp/x"}}
    assert seal() == seal(**reordered)
    assert open_(seal(), **reordered) == ROUND_STATE


# --- refusals ---------------------------------------------------------------------------------------------

#: (case, keyword changes at opening, a word the logged reason holds)
CLAIM_MISMATCHES: List[Tuple[str, Dict[str, Any], str]] = [
    ("another method", {"method": "prompts/get"}, "m="),
    ("another target", {"target": "read_files"}, "t="),
    ("other arguments", {"arguments": {"path": "/", "force": True}}, "arguments"),
    ("arguments added", {"arguments": {"path": "/tmp/x", "force": True, "more": 1}}, "arguments"),
    ("arguments dropped", {"arguments": None}, "arguments"),
    ("true become 1", {"arguments": {"path": "/tmp/x", "force": 1}}, "arguments"),
    ("another audience", {"audience": "other-server"}, "aud="),
    ("another principal", {"principal": "https://issuer.example|mallory|client-1"}, "another principal"),
    ("no principal now", {"principal": None}, "not authenticated"),
]


@pytest.mark.parametrize("changes,word", [(c, w) for _, c, w in CLAIM_MISMATCHES],
                         ids=[n for n, _, _ in CLAIM_MISMATCHES])
def test_a_state_opened_for_another_request_is_refused(changes: Dict[str, Any], word: str) -> None:
    assert word in refusal(lambda: open_(seal(), **changes)).reason


def test_a_state_sealed_without_principal_is_refused_to_an_authenticated_request() -> None:
    assert "not bound to a principal" in refusal(lambda: open_(seal(principal=None))).reason


def _flip(text: str, index: int) -> str:
    return text[:index] + ("A" if text[index] != "A" else "B") + text[index + 1:]


def _tamper_payload(token: str) -> str:
    version, body, signature = parts(token)
    return f"{version}.{_flip(body, 10)}.{signature}"


def _tamper_signature(token: str) -> str:
    version, body, signature = parts(token)
    return f"{version}.{body}.{_flip(signature, 5)}"


def _forge_claims(token: str) -> str:
    """A client edits a claim and re-encodes the payload, keeping the signature."""
    payload = payload_of(token)
    payload["t"] = "other"
    return f"v1.{b64(canonical_json(payload))}.{parts(token)[2]}"


#: (case, how the token is damaged, a word the logged reason holds)
DAMAGED: List[Tuple[str, Callable[[str], Any], str]] = [
    ("tampered payload", _tamper_payload, "no key"),
    ("forged claims", _forge_claims, "no key"),
    ("tampered signature", _tamper_signature, "no key"),
    ("signature's padding bits changed", lambda t: t[:-1] + chr(ord(t[-1]) ^ 1), "base64url"),
    ("truncated", lambda t: t[:len(t) // 2], "parts"),
    ("truncated signature", lambda t: t[:-3], "30 bytes"),
    ("signature dropped", lambda t: t.rsplit(".", 1)[0], "parts"),
    ("empty signature", lambda t: t.rsplit(".", 1)[0] + ".", "base64url"),
    ("an extra part", lambda t: t + ".x", "parts"),
    ("wrong version prefix", lambda t: "v2" + t[2:], "version"),
    ("no version prefix", lambda t: t[3:], "parts"),
    ("garbage base64 in the signature", lambda t: t.rsplit(".", 1)[0] + ".!!!$$$", "base64url"),
    ("padding added", lambda t: t + "=", "base64url"),
    ("garbage", lambda t: "not a token at all", "parts"),
    ("empty", lambda t: "", "parts"),
    ("not a string", lambda t: {"v1": t}, "not a string"),
    ("null", lambda t: None, "not a string"),
]


@pytest.mark.parametrize("damage,word", [(d, w) for _, d, w in DAMAGED], ids=[n for n, _, _ in DAMAGED])
def test_a_damaged_token_is_refused(damage: Callable[[str], Any], word: str) -> None:
    assert word in refusal(lambda: open_(damage(seal()))).reason


#: Tokens a key holder signed (a bug, or an old format): the signature verifies, the payload does not.
SIGNED_BUT_WRONG: List[Tuple[str, Callable[[Dict[str, Any]], Any], str]] = [
    ("another payload format", lambda p: {**p, "v": 2}, "format"),
    ("a kid not of the signing key", lambda p: {**p, "kid": "00000000"}, "key id"),
    ("no exp", lambda p: {k: v for k, v in p.items() if k != "exp"}, "exp"),
    ("a round counter past the cap", lambda p: {**p, "r": MAX_ROUNDS + 1}, "round"),
    ("a round counter that is not an int", lambda p: {**p, "r": "1"}, "round"),
    ("answers that are not an object", lambda p: {**p, "answers": []}, "answers"),
    ("an unknown field", lambda p: {**p, "x": 1}, "unknown"),
    ("not an object", lambda p: [p], "not an object"),
]


@pytest.mark.parametrize("change,word", [(c, w) for _, c, w in SIGNED_BUT_WRONG],
                         ids=[n for n, _, _ in SIGNED_BUT_WRONG])
def test_a_signed_payload_that_breaks_the_format_is_refused(change: Callable[[Dict[str, Any]], Any],
                                                            word: str) -> None:
    assert open_(resign(payload_of(seal()), b"o" * 32)) == ROUND_STATE  # the hand-made signature is right
    assert word in refusal(lambda: open_(resign(change(payload_of(seal())), b"o" * 32))).reason


def test_a_signed_payload_that_is_not_base64url_is_refused() -> None:
    k_mac = hmac.new(b"o" * 32, b"mcplite/request-state/v1", hashlib.sha256).digest()
    body = "e30="  # "{}" with padding: base64, but not the token's form
    token = f"v1.{body}.{b64(hmac.new(k_mac, f'v1.{OLD.kids[0]}.{body}'.encode(), hashlib.sha256).digest())}"
    assert "base64url" in refusal(lambda: open_(token)).reason


#: (case, when the state is opened relative to its exp, does it open)
EXPIRY: List[Tuple[str, float, bool]] = [
    ("just minted", -TTL, True),
    ("a second before exp", -1, True),
    ("a fraction before exp", -0.001, True),
    ("at exp", 0, False),
    ("after exp", 1, False),
    ("long after exp", 86400, False),
]


@pytest.mark.parametrize("offset,opens", [(o, ok) for _, o, ok in EXPIRY], ids=[n for n, _, _ in EXPIRY])
def test_a_state_expires_at_exp(offset: float, opens: bool) -> None:
    token = seal()
    if opens:
        assert open_(token, now=NOW + TTL + offset) == ROUND_STATE
    else:
        assert "expired" in refusal(lambda: open_(token, now=NOW + TTL + offset)).reason


def test_a_fractional_now_is_truncated_so_a_state_never_outlives_its_ttl() -> None:
    token = seal(now=NOW + 0.9)
    assert payload_of(token)["exp"] == NOW + TTL
    assert "expired" in refusal(lambda: open_(token, now=NOW + TTL)).reason


def test_every_refusal_is_the_one_frozen_error_and_keeps_the_reason_off_the_wire() -> None:
    reasons = set()
    for token, changes in [(seal(), {"target": "other"}), (_tamper_signature(seal()), {}), ("v2.x.y", {}),
                           (seal(), {"now": NOW + TTL})]:
        refused = refusal(lambda: open_(token, **changes))
        assert isinstance(refused, RPCError)
        assert (refused.code, refused.message, refused.data) == \
            (INVALID_PARAMS, "Invalid or expired requestState", None)
        assert refused.reason not in json.dumps(jsonrpc.error(7, refused.code, refused.message, refused.data))
        assert jsonrpc.error(7, refused.code, refused.message, refused.data) == \
            {"jsonrpc": "2.0", "id": 7, "error": {"code": -32602, "message": "Invalid or expired requestState"}}
        reasons.add(refused.reason)
    assert len(reasons) == 4  # the log tells the cases apart


# --- keys and rotation ------------------------------------------------------------------------------------

#: (case, ring sealing, ring opening, does it open)
ROTATION: List[Tuple[str, StateKeys, StateKeys, bool]] = [
    ("[old, new] verifies old's states", OLD, StateKeys([b"o" * 32, b"n" * 32]), True),
    ("[old, new] mints with old", StateKeys([b"o" * 32, b"n" * 32]), OLD, True),
    ("[old, new] verifies new's states", NEW, StateKeys([b"o" * 32, b"n" * 32]), True),
    ("[new, old] verifies old's states", OLD, StateKeys([b"n" * 32, b"o" * 32]), True),
    ("[new, old] mints with new", StateKeys([b"n" * 32, b"o" * 32]), NEW, True),
    ("[new] refuses old's states", OLD, NEW, False),
    ("[new, old] mints nothing [old] opens", StateKeys([b"n" * 32, b"o" * 32]), OLD, False),
    ("a foreign key", FOREIGN, OLD, False),
    ("a foreign key in a longer ring", FOREIGN, StateKeys([b"n" * 32, b"o" * 32]), False),
    ("two ephemeral keys (two processes)", StateKeys.generate(), StateKeys.generate(), False),
]


@pytest.mark.parametrize("sealing,opening,opens", [(s, o, ok) for _, s, o, ok in ROTATION],
                         ids=[n for n, _, _, _ in ROTATION])
def test_rotation(sealing: StateKeys, opening: StateKeys, opens: bool) -> None:
    token = seal(keys=sealing)
    if opens:
        assert open_(token, keys=opening) == ROUND_STATE
    else:
        assert "no key of the ring" in refusal(lambda: open_(token, keys=opening)).reason


def test_the_principal_binding_is_keyed_so_another_key_cannot_recompute_it() -> None:
    assert payload_of(seal(keys=OLD))["p"] != payload_of(seal(keys=NEW))["p"]


def test_key_ids_are_distinct_stable_and_reveal_no_secret() -> None:
    ring = StateKeys([b"n" * 32, b"o" * 32])
    assert ring.kids == (NEW.kids[0], OLD.kids[0]) and NEW.kids != OLD.kids
    assert StateKeys([b"o" * 32]).kids == OLD.kids  # derived from the secret alone: every process agrees
    assert "nnnn" not in repr(ring) and "6e6e" not in repr(ring)
    assert len(ring) == 2 and len(StateKeys([b"o" * 32, b"o" * 32])) == 1  # a key listed twice counts once


def test_generate_draws_one_fresh_ephemeral_key() -> None:
    first, second = StateKeys.generate(), StateKeys.generate()
    assert len(first) == 1 and first.ephemeral and not OLD.ephemeral
    assert first.kids != second.kids
    assert "ephemeral" in repr(first)


def test_from_hex_reads_the_environment_form() -> None:
    old, new = (b"o" * 32).hex(), (b"n" * 32).hex()
    ring = StateKeys.from_hex(f" {new} ,{old.upper()},")  # spaces, upper case and a trailing comma are fine
    assert ring.kids == (NEW.kids[0], OLD.kids[0])
    assert open_(seal(keys=OLD), keys=ring) == ROUND_STATE


#: (case, the environment value, a word of the error)
BAD_HEX: List[Tuple[str, str, str]] = [
    ("empty", "", "no key"),
    ("only commas", " , ,", "no key"),
    ("not hex", "zz" * 32, "key 1 is not hexadecimal"),
    ("the second not hex", ("ab" * 32) + ",0x" + ("ab" * 32), "key 2 is not hexadecimal"),
    ("odd length", "abc" * 21, "key 1 is not hexadecimal"),
    ("too short", "ab" * 31, "key 1 is 31 bytes"),
    ("the second too short", ("ab" * 32) + "," + ("cd" * 16), "key 2 is 16 bytes"),
]


@pytest.mark.parametrize("value,word", [(v, w) for _, v, w in BAD_HEX], ids=[n for n, _, _ in BAD_HEX])
def test_from_hex_refuses_bad_values_without_echoing_them(value: str, word: str) -> None:
    with pytest.raises(ValueError, match=word) as caught:
        StateKeys.from_hex(value)
    assert "MCPLITE_STATE_KEYS" in str(caught.value)
    for item in value.split(","):
        assert not item.strip() or item.strip() not in str(caught.value)


#: (case, the secrets, the exception, a word of it)
BAD_SECRETS: List[Tuple[str, Any, type, str]] = [
    ("no key", [], ValueError, "at least one key"),
    ("a short secret", [b"s" * 31], ValueError, "31 bytes"),
    ("an empty secret", [b"o" * 32, b""], ValueError, "key 2 is 0 bytes"),
    ("a str secret", ["o" * 32], TypeError, "bytes, not str"),
    ("one secret, not a list", b"o" * 32, TypeError, "list of secrets"),
]


@pytest.mark.parametrize("secrets,error,word", [(s, e, w) for _, s, e, w in BAD_SECRETS],
                         ids=[n for n, _, _, _ in BAD_SECRETS])
def test_key_ring_refuses_bad_secrets(secrets: Any, error: type, word: str) -> None:
    with pytest.raises(error, match=word):
        StateKeys(secrets)


# --- sizes and rounds -------------------------------------------------------------------------------------


def test_a_state_past_the_size_cap_fails_loudly_when_sealed() -> None:
    big = {"r": 1, "memo": {"blob": "x" * MAX_STATE_BYTES}}
    with pytest.raises(RPCError) as caught:
        seal(big)
    assert caught.value.code == INTERNAL_ERROR and not isinstance(caught.value, InvalidRequestState)
    assert "too large" in caught.value.message


def test_the_size_cap_is_the_token_length_and_can_be_set() -> None:
    token = seal()
    assert seal_state(ROUND_STATE, keys=OLD, now=NOW, ttl=TTL, max_bytes=len(token), **REQUEST) == token
    with pytest.raises(RPCError, match="too large"):
        seal_state(ROUND_STATE, keys=OLD, now=NOW, ttl=TTL, max_bytes=len(token) - 1, **REQUEST)
    assert open_state(token, keys=OLD, now=NOW, max_bytes=len(token), **REQUEST) == ROUND_STATE
    assert "too large" in refusal(lambda: open_state(token, keys=OLD, now=NOW, max_bytes=len(token) - 1,
                                                     **REQUEST)).reason


def test_an_oversized_token_is_refused_before_it_is_read() -> None:
    assert "too large" in refusal(lambda: open_("v1." + "A" * MAX_STATE_BYTES + ".x")).reason


#: (case, round counter, what sealing does: None when it seals)
ROUNDS: List[Tuple[str, Any, Optional[type]]] = [
    ("the first round", 0, None),
    ("the last round allowed", MAX_ROUNDS, None),
    ("one round too many", MAX_ROUNDS + 1, RPCError),
    ("negative", -1, ValueError),
    ("missing", None, ValueError),
    ("a bool", True, ValueError),
]


@pytest.mark.parametrize("rounds,error", [(r, e) for _, r, e in ROUNDS], ids=[n for n, _, _ in ROUNDS])
def test_the_round_counter(rounds: Any, error: Optional[type]) -> None:
    round_state = {} if rounds is None else {"r": rounds}
    if error is None:
        assert open_(seal(round_state))["r"] == rounds
        return
    with pytest.raises(error) as caught:
        seal(round_state)
    if error is RPCError:
        assert caught.value.code == INTERNAL_ERROR  # type: ignore[attr-defined]


#: (case, round_state, exception): the caller's bugs, raised as such rather than sealed.
BAD_ROUND_STATES: List[Tuple[str, Dict[str, Any], type]] = [
    ("an unknown field", {"r": 1, "state": {}}, ValueError),
    ("a claim in the round state", {"r": 1, "exp": 0}, ValueError),
    ("answers not a dict", {"r": 1, "answers": []}, TypeError),
    ("a value JSON cannot carry", {"r": 1, "memo": {"x": float("nan")}}, ValueError),
]


@pytest.mark.parametrize("round_state,error", [(e, x) for _, e, x in BAD_ROUND_STATES],
                         ids=[n for n, _, _ in BAD_ROUND_STATES])
def test_a_malformed_round_state_is_the_callers_bug(round_state: Dict[str, Any], error: type) -> None:
    with pytest.raises(error):
        seal(round_state)


def test_a_ttl_must_be_positive() -> None:
    with pytest.raises(ValueError, match="ttl"):
        seal_state(ROUND_STATE, keys=OLD, now=NOW, ttl=0, **REQUEST)


# --- a pluggable codec ------------------------------------------------------------------------------------


class ReversingCodec:
    """A stand-in for an encrypting codec: it hides the payload (reversed, hex) and refuses what it did not make."""

    def seal(self, payload: bytes) -> str:
        return "rev." + payload[::-1].hex()

    def unseal(self, token: str) -> bytes:
        if not token.startswith("rev."):
            raise ValueError("not mine")
        return bytes.fromhex(token[4:])[::-1]


def test_a_codec_replaces_the_signature_and_the_claims_are_still_checked() -> None:
    codec = ReversingCodec()
    token = seal_state(ROUND_STATE, keys=OLD, now=NOW, ttl=TTL, codec=codec, **REQUEST)
    assert token.startswith("rev.") and "accept" not in token
    assert open_state(token, keys=OLD, now=NOW + 1, codec=codec, **REQUEST) == ROUND_STATE
    assert "t=" in refusal(lambda: open_state(token, keys=OLD, now=NOW + 1, codec=codec,
                                              **{**REQUEST, "target": "other"})).reason
    assert "expired" in refusal(lambda: open_state(token, keys=OLD, now=NOW + TTL, codec=codec, **REQUEST)).reason
    assert "key id" in refusal(lambda: open_state(token, keys=NEW, now=NOW + 1, codec=codec, **REQUEST)).reason
    assert "codec refused" in refusal(lambda: open_state(seal(), keys=OLD, now=NOW + 1, codec=codec,
                                                         **REQUEST)).reason
    assert "not JSON" in refusal(lambda: open_state("rev.00", keys=OLD, now=NOW + 1, codec=codec,
                                                    **REQUEST)).reason


# --- digests ----------------------------------------------------------------------------------------------


def test_canonical_json_sorts_keys_and_escapes_to_ascii() -> None:
    assert canonical_json({"b": 1, "a": [True, None, "é"]}) == b'{"a":[true,null,"\\u00e9"],"b":1}'
    assert canonical_json({"s": "\ud800"}) == b'{"s":"\\ud800"}'  # a lone surrogate from JSON still encodes


def test_question_digest_is_16_bytes_of_sha256_in_base64url() -> None:
    params = {"message": "Sure?", "requestedSchema": {"type": "object"}}
    expected = hashlib.sha256(json.dumps({"method": "elicitation/create", "params": params}, sort_keys=True,
                                         separators=(",", ":")).encode()).digest()[:16]
    digest = question_digest("elicitation/create", params)
    assert digest == b64(expected) and len(digest) == 22
    assert question_digest("elicitation/create", dict(reversed(list(params.items())))) == digest
    assert question_digest("elicitation/create", {**params, "message": "Really?"}) != digest
    assert question_digest("sampling/createMessage", params) != digest


# --- start-up ---------------------------------------------------------------------------------------------

LAZY_SCRIPT = '''
import sys
sys.path.insert(0, ROOT)  # run with -S: no site, so nothing has imported these already
import json, os
lazy = ["hmac", "hashlib", "base64"]
assert not [name for name in lazy if name in sys.modules], "loaded before the test began"
from mcplite.protocol import request_state
keys = request_state.StateKeys.generate()  # what Server() will do at construction
keys = request_state.StateKeys.from_hex("ab" * 32)
print(" ".join(name for name in lazy if name in sys.modules) or "-")
token = request_state.seal_state({"r": 1}, keys=keys, method="tools/call", target="t", arguments={}, audience="a",
                        principal=None, now=0)
print(" ".join(name for name in lazy if name in sys.modules))
'''


def test_importing_the_module_and_building_keys_load_no_hmac_hashlib_or_base64() -> None:
    completed = subprocess.run([sys.executable, "-S", "-c", f"ROOT = {str(ROOT)!r}\n{LAZY_SCRIPT}"],
                               capture_output=True, text=True, timeout=WAIT * 3)
    assert completed.returncode == 0, completed.stderr
    before, after = completed.stdout.splitlines()
    assert before == "-"
    assert after.split() == ["hmac", "hashlib", "base64"]  # the first seal loads them


def test_the_module_names_its_public_api() -> None:
    assert [name for name in request_state.__all__ if not hasattr(request_state, name)] == []
