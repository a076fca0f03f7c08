"""Bounded, strict JOSE and DPoP: what a key, a JWT or a DPoP proof from another party may cost, how strictly
they are read, and how ECDSA signs.

1. Cost: keys are bounded (RSA 2048 to 4096 bits with e = 65537, P-256 points on the curve), and a DPoP
   proof whose key is not the token's is refused before any signature work. The bounds below are
   generous for CI (the figures measured are in comments); the old code spent seconds on one proof.
2. Strict reading: JWT and DPoP JSON is read by `json_text.loads` (no NaN, bounded depth), time claims must
   be finite numbers, and every malformed input ends in the parser's own error (a seeded fuzzer checks it).
3. Signing: every ECDSA nonce costs the same point operations, whatever its length.
4. Protections that were already held and must stay so: algorithm confusion, constant-time comparisons,
   replayed proofs, htm and htu.
"""

import hmac
import inspect
import json
import random
import re
import time
from typing import Any, Callable, Dict, List, Optional

import pytest

from mcplite.oauth import BearerAuth, dpop, grants, jose
from mcplite.oauth.dpop import DPoPProofError, access_token_hash, jwk_thumbprint, verify_proof
from mcplite.transports.http_messages import HTTPRefusal
from reliability.fuzz_jose import run as fuzz_jose_run
from support.keys import EC_PKCS8_PEM, RFC7515_RSA_JWK

MCP = "https://mcp.example.com/mcp"
NOW = 1_800_000_000.0
KEY = jose.ECPrivateKey.generate()
OTHER_KEY = jose.ECPrivateKey.generate()
JKT = jwk_thumbprint(KEY.public_key.to_jwk())
#: The most CPU a refusal may take (generous for a loaded CI machine: the measured figures are far below).
REFUSAL_BOUND = 0.05
#: The most CPU the costliest accepted proof may take.
ACCEPTED_BOUND = 0.05


def b64(data: bytes) -> str:
    return jose.b64url_encode(data)


def b64_int(value: int) -> str:
    return b64(value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big"))


def raw_jwt(header: Any, claims: Any, signature: bytes = b"\x00" * 64, *,
            key: Optional[jose.ECPrivateKey] = None) -> str:
    """A compact JWT from header and claims given as JSON text (or values to dump), signed by ``key`` when given."""
    def part(value: Any) -> str:
        text = value if isinstance(value, (str, bytes)) else json.dumps(value, allow_nan=True)
        return b64(text if isinstance(text, bytes) else text.encode("utf-8"))
    signing_input = f"{part(header)}.{part(claims)}"
    if key is not None:
        signature = key.sign(signing_input.encode("ascii"))
    return f"{signing_input}.{b64(signature)}"


def good_claims(**changes: Any) -> Dict[str, Any]:
    claims: Dict[str, Any] = {"jti": "j-1", "htm": "POST", "htu": MCP, "iat": int(NOW), "ath": access_token_hash("tok")}
    claims.update(changes)
    return {k: v for k, v in claims.items() if v is not None}


def proof_header(key: jose.ECPrivateKey = KEY, **changes: Any) -> Dict[str, Any]:
    return {"typ": "dpop+jwt", "alg": "ES256", "jwk": key.public_key.to_jwk(), **changes}


def rsa_jwk(bits: int, e: int = 65537, seed: int = 1) -> Dict[str, str]:
    n = random.Random(seed).getrandbits(bits) | (1 << (bits - 1)) | 1
    return {"kty": "RSA", "n": b64_int(n), "e": b64_int(e)}


def rsa_proof(jwk: Dict[str, str]) -> str:
    """An RS256 proof carrying ``jwk`` with a signature of the right length that does not verify."""
    size = (int.from_bytes(jose.b64url_decode(jwk["n"]), "big").bit_length() + 7) // 8
    signature = bytes([0x42]) * (size - 1) + b"\x01"
    return raw_jwt({"typ": "dpop+jwt", "alg": "RS256", "jwk": jwk}, good_claims(), signature)


def cpu(call: Callable[[], Any]) -> float:
    started = time.process_time()
    call()
    return time.process_time() - started


def verify(proof: Optional[str], **options: Any) -> dpop.VerifiedProof:
    arguments: Dict[str, Any] = {"method": "POST", "url": MCP, "now": NOW, "access_token": "tok", "jkt": JKT}
    arguments.update(options)
    return verify_proof(proof, **arguments)


def refused_cheaply(call: Callable[[], Any], error: type, match: str = "") -> float:
    started = time.process_time()
    with pytest.raises(error, match=match):
        call()
    spent = time.process_time() - started
    assert spent < REFUSAL_BOUND, f"the refusal took {spent * 1000:.1f} ms of CPU"
    return spent


# --- 1. what a key may cost -----------------------------------------------------------------------------------

@pytest.mark.parametrize("bits", [1024, 2047, 4097, 8192, 16384, 65536])
def test_rsa_keys_outside_2048_to_4096_bits_are_refused_cheaply(bits: int) -> None:
    # Old: anything from 2048 bits up was accepted (a 65,536-bit modulus too).
    refused_cheaply(lambda: jose.load_public_key(rsa_jwk(bits)), jose.JWTError, "bits|too long")


@pytest.mark.parametrize("bits", [2048, 3072, 4096])
def test_rsa_keys_of_2048_to_4096_bits_are_accepted(bits: int) -> None:
    assert jose.load_public_key(rsa_jwk(bits)).n.bit_length() == bits  # type: ignore[union-attr]


@pytest.mark.parametrize("e", [3, 17, 65539, 2 ** 32 + 1, 2 ** 4096 - 1],
                         ids=["3", "17", "65539", "2^32+1", "2^4096-1"])
def test_rsa_exponents_other_than_65537_are_refused(e: int) -> None:
    # Old: any odd exponent; a 4096-bit one made verifying a 4096-bit key cost 150 ms, 8192 bits 1.1 s.
    refused_cheaply(lambda: jose.load_public_key(rsa_jwk(2048, e)), jose.JWTError, "exponent|too long")


def test_an_even_rsa_modulus_is_refused() -> None:
    n = (1 << 2047) | 2
    with pytest.raises(jose.JWTError, match="modulus"):
        jose.RSAPublicKey(n, 65537)


def test_rsa_private_keys_are_bounded_as_well() -> None:
    jose.load_private_key(RFC7515_RSA_JWK)  # the RFC's 2048-bit key still loads
    with pytest.raises(jose.JWTError, match="private exponent"):
        jose.RSAPrivateKey(int.from_bytes(jose.b64url_decode(RFC7515_RSA_JWK["n"]), "big"), 65537, 1)


def test_oversized_jwk_members_are_refused_before_they_are_decoded() -> None:
    ec = {**KEY.public_key.to_jwk(), "x": "A" * 60_000}
    refused_cheaply(lambda: jose.load_public_key(ec), jose.JWTError, "too long")
    huge_rsa = {"kty": "RSA", "n": "_" * 60_000, "e": "AQAB"}
    refused_cheaply(lambda: jose.load_public_key(huge_rsa), jose.JWTError, "too long")


def test_ec_keys_must_be_p256_points_on_the_curve() -> None:
    # Held before: only P-256, and the point is checked.
    jwk = KEY.public_key.to_jwk()
    for changes in ({"crv": "P-384"}, {"crv": "secp256k1"}, {"y": jwk["x"]}, {"x": b64(b"\x00" * 32)}):
        with pytest.raises(jose.JWTError):
            jose.load_public_key({**jwk, **changes})


@pytest.mark.parametrize("bits, e", [(8192, 2 ** 8192 - 1), (16384, 65537), (16384, 2 ** 16384 - 1)],
                         ids=["8192-bits-huge-e", "16384-bits", "16384-bits-huge-e"])
def test_a_dpop_proof_with_a_costly_rsa_key_is_refused_cheaply(bits: int, e: int) -> None:
    # Old: the signature was checked with whatever key came: (8192, 2**8192 - 1) took 1.1 s of CPU, holding
    # the GIL in one pow(). Now refused at the key (a bound token) or at the thumbprint: about 0.1 ms.
    proof = rsa_proof(rsa_jwk(bits, e))
    refused_cheaply(lambda: verify(proof, jkt=None), DPoPProofError, "jwk|too long")
    refused_cheaply(lambda: verify(proof), DPoPProofError, "bound|too long")


def test_a_proof_longer_than_16_kib_is_refused_before_it_is_read() -> None:
    proof = raw_jwt(proof_header(), good_claims(htu=MCP + "/" + "a" * 20_000), key=KEY)
    refused_cheaply(lambda: verify(proof, url=MCP + "/" + "a" * 20_000), DPoPProofError, "too long")


def test_the_thumbprint_is_compared_with_the_token_binding_before_any_signature_work(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Old: the key was loaded and the signature checked first, so any key, of any cost, got a pow().
    def no_signature_work(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("signature work for a key that is not the token's")
    monkeypatch.setattr(jose.ECPublicKey, "verify", no_signature_work)
    monkeypatch.setattr(jose.RSAPublicKey, "verify", no_signature_work)
    monkeypatch.setattr(jose, "load_public_key", no_signature_work)
    for proof in (raw_jwt(proof_header(OTHER_KEY), good_claims(), key=OTHER_KEY), rsa_proof(rsa_jwk(4096))):
        with pytest.raises(DPoPProofError, match="bound"):
            verify(proof)


def test_the_costliest_accepted_proofs_take_a_few_milliseconds() -> None:
    # ES256 is the costliest accepted proof: measured about 2.5 ms of CPU (two scalar multiplications); an RS256
    # proof with a 4096-bit key costs one pow() with e = 65537 whether its signature is good or not (measured
    # about 0.3 ms, refused here at the signature).
    replay = dpop.ReplayCache()
    es256 = [raw_jwt(proof_header(), good_claims(jti=f"j{n}"), key=KEY) for n in range(20)]
    spent = [cpu(lambda: verify(proof, replay=replay)) for proof in es256]
    assert sorted(spent)[len(spent) // 2] < ACCEPTED_BOUND, spent
    jwk = rsa_jwk(4096)
    proof = rsa_proof(jwk)
    rs256 = [cpu(lambda: pytest.raises(DPoPProofError, verify, proof, jkt=jwk_thumbprint(jwk))) for _ in range(20)]
    assert sorted(rs256)[len(rs256) // 2] < ACCEPTED_BOUND, rs256


# --- 2. strict reading -------------------------------------------------------------------------------------

HOSTILE_TIMES = ["NaN", "Infinity", "-Infinity", "1e400", "1" + "0" * 400, '"0"', '"1800000000"', "true", "[]", "{}"]
TIME_IDS = [literal if len(literal) < 20 else "10^400" for literal in HOSTILE_TIMES]


def jwt_with_claim(name: str, literal: str, *, header: Optional[Dict[str, Any]] = None) -> str:
    return raw_jwt(header or {"alg": "ES256"}, f'{{"iss":"a","{name}":{literal}}}', key=KEY)


@pytest.mark.parametrize("name", ["exp", "nbf", "iat"])
@pytest.mark.parametrize("literal", HOSTILE_TIMES, ids=TIME_IDS)
def test_time_claims_must_be_finite_numbers(name: str, literal: str) -> None:
    # Old: "exp": NaN or "0" (or 1e400, read as inf) never expired, and a 400-digit exp raised OverflowError.
    with pytest.raises(jose.JWTError):
        jose.jwt_decode(jwt_with_claim(name, literal), KEY.public_key, now=NOW)


def test_good_time_claims_still_count() -> None:
    for literal, ok in (("1800000100", True), ("1800000000.5", True), ("1799999000", False)):
        token = jwt_with_claim("exp", literal)
        if ok:
            assert jose.jwt_decode(token, KEY.public_key, now=NOW, leeway=0)[1]["iss"] == "a"
        else:
            with pytest.raises(jose.JWTError, match="expired"):
                jose.jwt_decode(token, KEY.public_key, now=NOW, leeway=0)


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "1e400", "1" + "0" * 400, '"0"', "true", "null"],
                         ids=["NaN", "Infinity", "1e400", "10^400", "string", "true", "null"])
def test_a_dpop_proof_whose_iat_is_not_a_finite_number_is_refused(literal: str) -> None:
    # Old: "iat": NaN passed the window check forever (abs(now - nan) > window is False).
    claims = json.dumps(good_claims())[:-1] + f', "iat": {literal}}}'
    proof = raw_jwt(proof_header(), claims.replace(f'"iat": {int(NOW)}, ', ""), key=KEY)
    with pytest.raises(DPoPProofError):
        verify(proof)


MALFORMED_TOKENS = {
    "non-ASCII payload": lambda: raw_jwt({"alg": "ES256"}, {"a": 1}).replace(".", ".\u00e9", 1),
    "lone surrogate": lambda: raw_jwt({"alg": "ES256"}, {"a": 1}) + "\ud800",
    "deep header": lambda: raw_jwt('{"alg":"ES256","x":' + "[" * 5000 + "]" * 5000 + "}", {"a": 1}),
    "deep claims": lambda: raw_jwt({"alg": "ES256"}, '{"a":' + "[" * 5000 + "]" * 5000 + "}", key=KEY),
    "UTF-16 header": lambda: raw_jwt('{"alg":"ES256"}'.encode("utf-16"), {"a": 1}),
    "invalid UTF-8 claims": lambda: raw_jwt({"alg": "ES256"}, b'{"a":"\xff"}', key=KEY),
    "NaN in the header": lambda: raw_jwt('{"alg":"ES256","x":NaN}', {"a": 1}),
    "5000-digit number": lambda: raw_jwt({"alg": "ES256"}, '{"a":' + "9" * 5000 + "}", key=KEY),
    "critical extension": lambda: raw_jwt({"alg": "ES256", "crit": ["exp"]}, {"a": 1}, key=KEY),
}


@pytest.mark.parametrize("name", list(MALFORMED_TOKENS))
def test_malformed_jwts_end_in_jwt_error(name: str) -> None:
    # Old: UnicodeEncodeError (non-ASCII), RecursionError (deep), or accepted (UTF-16, NaN, crit).
    with pytest.raises(jose.JWTError):
        jose.jwt_decode(MALFORMED_TOKENS[name](), KEY.public_key, now=NOW)


@pytest.mark.parametrize("name", list(MALFORMED_TOKENS))
def test_malformed_dpop_proofs_end_in_dpop_proof_error(name: str) -> None:
    token = MALFORMED_TOKENS[name]()
    head, _, rest = token.partition(".")
    header = jose.b64url_decode(head) if re.fullmatch(r"[\w-]*", head) else b""
    if header.startswith(b'{"alg": "ES256"}') or header == b'{"alg":"ES256"}':
        token = raw_jwt(proof_header(), good_claims(), key=KEY).partition(".")[0] + "." + rest
    with pytest.raises(DPoPProofError):
        verify(token)


def test_dpop_inputs_that_escaped_as_other_errors() -> None:
    good = raw_jwt(proof_header(), good_claims(), key=KEY)
    # compare_digest raised TypeError on a non-ASCII cnf.jkt; an access token with non-ASCII raised
    # UnicodeEncodeError in access_token_hash; a malformed IPv6 htu raised urlsplit's ValueError.
    with pytest.raises(DPoPProofError, match="bound"):
        verify(good, jkt="\u00e9" * 43)
    with pytest.raises(DPoPProofError, match="ath"):
        verify(good, access_token="t\u00e9")
    with pytest.raises(DPoPProofError, match="htu"):
        verify(raw_jwt(proof_header(), good_claims(htu="https://[::1/mcp"), key=KEY))
    with pytest.raises(DPoPProofError, match="htu"):
        verify(good, url="https://[::1/mcp")


def test_keys_are_read_strictly() -> None:
    # Old: UnicodeDecodeError for bytes that are not ASCII, RecursionError for deep JSON, NaN accepted.
    for source in (b'{"kty":"EC"}\xff', "[" * 5000 + "]" * 5000, '{"kty":"EC","crv":NaN}', '{"kty":"EC"',
                   {**KEY.public_key.to_jwk(), "kid": 5}):
        with pytest.raises(jose.JWTError):
            jose.load_public_key(source)


@pytest.mark.parametrize("exp", [float("nan"), "0", "1900000000", True, float("inf")])
def test_a_resource_server_refuses_a_token_whose_exp_is_not_a_finite_number(exp: Any) -> None:
    # Old: a verify() that passed on {"exp": "0"} or NaN gave a token that never expired.
    auth = BearerAuth(lambda token: {"exp": exp}, resource=MCP, authorization_servers=["https://as.example"],
                      clock=lambda: NOW)
    with pytest.raises(HTTPRefusal) as refused:
        auth.authenticate_request("POST", "/mcp", {"authorization": "Bearer tok"})
    assert refused.value.status == 401


def test_a_bound_token_with_a_non_ascii_jkt_is_refused_not_crashed() -> None:
    auth = BearerAuth(lambda token: {"cnf": {"jkt": "\u00e9" * 43}}, resource=MCP,
                      authorization_servers=["https://as.example"], clock=lambda: NOW, dpop="allowed")
    proof = raw_jwt(proof_header(), good_claims(), key=KEY)
    with pytest.raises(HTTPRefusal) as refused:
        auth.authenticate_request("POST", "/mcp", {"authorization": "DPoP tok", "dpop": proof})
    assert refused.value.status == 401


def test_the_clients_unverified_read_of_an_assertion_never_raises() -> None:
    # Old: RecursionError for deep claims (only ValueError was caught).
    for token in (MALFORMED_TOKENS["deep claims"](), MALFORMED_TOKENS["non-ASCII payload"](), "a.b.c", "..",
                  raw_jwt({"alg": "ES256"}, '{"exp":NaN}')):
        assert grants._unverified_claims(token) == {}


@pytest.mark.parametrize("seed", [1, 2])
def test_seeded_fuzzing_of_the_jose_and_dpop_parsers(seed: int) -> None:
    # 1,250 cases a seed (about 1 s of CPU each); only the parsers' own errors may escape, and no case may take
    # over 100 ms of CPU. The reliability suite runs more (tests/reliability/fuzz_jose.py).
    fuzz_jose_run(seed, 1250)


# --- 3. signing ----------------------------------------------------------------------------------------------

ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
NONCES = [1, 2, 3, 15, 16, 17, 2 ** 32 + 1, 2 ** 128, 2 ** 255, 2 ** 255 + 1, ORDER - 2, ORDER - 1,
          *(random.Random(7).randrange(1, ORDER) for _ in range(4))]


def test_every_nonce_costs_the_same_point_operations(monkeypatch: pytest.MonkeyPatch) -> None:
    # Old: double-and-add over bin(k): k = 1 cost no point operation, k near the order 256 doublings and
    # about 128 additions; the time of a signature told the nonce's length.
    counts: Dict[str, int] = {}

    def counting(name: str) -> None:
        original = getattr(jose, name, None)
        if original is None:
            return

        def counted(*args: Any) -> Any:
            counts[name] = counts.get(name, 0) + 1
            return original(*args)
        monkeypatch.setattr(jose, name, counted)

    key = jose.ECPrivateKey(0xC9AFA9D845BA75166B5C215767B1D6934E50C3DB36E89B127B8A622B120F6721)
    key.sign(b"warm-up")  # builds the base table (not counted)
    for name in ("_double", "_add", "_add_affine"):
        counting(name)
    seen: List[Dict[str, int]] = []
    for k in NONCES:
        monkeypatch.setattr(jose, "_rfc6979_nonces", lambda d, digest, k=k: iter([k]))
        counts.clear()
        signature = key.sign(b"message")
        seen.append(dict(counts))
        r = int.from_bytes(signature[:32], "big")
        assert 1 <= r < ORDER
    assert all(operations == seen[0] for operations in seen), seen
    assert seen[0].get("_double", 0) == 0 and seen[0].get("_add", 0) == 0


def test_the_table_multiplication_agrees_with_double_and_add() -> None:
    for k in NONCES + [ORDER // 2, ORDER // 2 + 1]:
        assert jose._to_affine(jose._base_multiply(k)) == jose._to_affine(jose._multiply(k, jose._G)), k


def test_signatures_still_verify_both_ways_with_the_reference_arithmetic() -> None:
    # The RFC 6979 known answers (tests/test_jose.py) pin the signer; here: each side checks the other's
    # scalar multiplication on fresh keys.
    rng = random.Random(3)
    for _ in range(10):
        key = jose.ECPrivateKey(rng.randrange(1, ORDER))
        message = rng.randbytes(50)
        signature = key.sign(message)
        assert key.public_key.verify(message, signature)
        reference = jose._to_affine(jose._multiply(key._d, jose._G))
        assert reference == (key.public_key.x, key.public_key.y)
        assert not key.public_key.verify(message + b"!", signature)


# --- 4. protections that were held and must stay so -----------------------------------------------------

RSA_PUBLIC = jose.load_public_key(RFC7515_RSA_JWK)


def test_hs256_signed_with_the_rsa_public_key_as_its_secret_is_refused() -> None:
    # Held before: alg comes from the key, never from the token.
    secret = json.dumps(RSA_PUBLIC.to_jwk()).encode()
    head = b64(b'{"alg":"HS256","typ":"JWT"}')
    body = b64(b'{"iss":"a"}')
    forged = f"{head}.{body}.{b64(hmac.new(secret, f'{head}.{body}'.encode(), 'sha256').digest())}"
    with pytest.raises(jose.JWTError, match="algorithm"):
        jose.jwt_decode(forged, RSA_PUBLIC)


def test_alg_none_and_an_alg_that_does_not_fit_the_key_are_refused() -> None:
    ec_token = jose.jwt_encode({"a": 1}, jose.load_private_key(EC_PKCS8_PEM))
    rsa_token = jose.jwt_encode({"a": 1}, jose.load_private_key(RFC7515_RSA_JWK))
    for token, key in ((ec_token, RSA_PUBLIC), (rsa_token, KEY.public_key),
                       (raw_jwt({"alg": "none"}, {"a": 1}, b""), KEY.public_key),
                       (raw_jwt({"alg": "none"}, {"a": 1}, b""), RSA_PUBLIC)):
        with pytest.raises(jose.JWTError, match="algorithm"):
            jose.jwt_decode(token, key)


@pytest.mark.parametrize("alg", ["none", "HS256", "RS256", "ES384", None])
def test_dpop_proofs_take_only_asymmetric_algorithms_that_fit_the_key(alg: Optional[str]) -> None:
    with pytest.raises(DPoPProofError, match="alg"):
        verify(raw_jwt(proof_header(alg=alg), good_claims(), key=KEY))


def test_thumbprints_tokens_and_nonces_are_compared_in_constant_time() -> None:
    # Held before: no == or != on a thumbprint, ath or nonce MAC; hmac.compare_digest does the comparing.
    source = inspect.getsource(dpop)
    assert not re.search(r"(thumbprint|jkt)\s*[!=]=|[!=]=\s*(thumbprint|jkt)\b", source)
    assert "compare_digest" in inspect.getsource(dpop.NonceIssuer.is_valid)
    assert "compare_digest" in inspect.getsource(jose.RSAPublicKey.verify)
    assert "compare_digest" in source


def test_a_replayed_proof_is_refused_and_htm_htu_must_fit() -> None:
    # Held before.
    replay = dpop.ReplayCache()
    proof = raw_jwt(proof_header(), good_claims(jti="once"), key=KEY)
    assert verify(proof, replay=replay).jkt == JKT
    with pytest.raises(DPoPProofError, match="used before"):
        verify(proof, replay=replay)
    with pytest.raises(DPoPProofError, match="htm"):
        verify(raw_jwt(proof_header(), good_claims(htm="GET"), key=KEY))
    with pytest.raises(DPoPProofError, match="htu"):
        verify(raw_jwt(proof_header(), good_claims(htu="https://mcp.example.com/other"), key=KEY))
    with pytest.raises(DPoPProofError, match="htu"):
        verify(raw_jwt(proof_header(), good_claims(), key=KEY), url="https://evil.example/mcp")
