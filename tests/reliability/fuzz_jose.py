"""Fuzzer jose: seeded mutations of JWTs, DPoP proofs and JWKs against the parsers that read them.

Each case starts from something valid (an ES256 JWT, a DPoP proof, a JWK, all made from keys drawn from the
seed) and spoils it at one level: the compact text (characters replaced, inserted or dropped, parts
duplicated, non-ASCII and lone surrogates), the JSON of the header or the claims (hostile values such as NaN,
``1e400``, a 5,000-digit integer, strings for times, deep nesting, invalid UTF-8, UTF-16, a top level that
is not an object), usually signed again with the right key so that the claim checks behind the signature
are reached, or the JWK (wrong types, oversized members, RSA keys of up to 64 Ki bits with huge exponents,
points off the curve).

Passing means every parser ends in its own error and nothing else: `jose.jwt_decode`, `load_public_key`,
`load_private_key` and `dpop.jwk_thumbprint` raise `jose.JWTError`, `dpop.verify_proof` raises
`dpop.DPoPProofError`, `BearerAuth.authenticate_request` raises `HTTPRefusal`, and the client's unverified
read of an assertion (`grants._unverified_claims`) raises nothing. No case may cost more than `CASE_BOUND`
seconds of CPU: an input that holds the GIL for long (a large RSA exponent) fails the run too.

`run(seed, cases)` raises AssertionError naming the case and the line that replays it alone (`case`).
"""

import base64
import json
import random
import time
from typing import Any, Callable, Dict, List, Optional, Tuple, Type

from mcplite.oauth import BearerAuth, dpop, grants, jose
from mcplite.transports.http_messages import HTTPRefusal

#: The most CPU (seconds) a case may take: the costliest valid input (an ES256 verification) takes about 3 ms.
CASE_BOUND = 0.1
RESOURCE = "https://mcp.example.com/mcp"
ISSUER = "https://as.example.com"
NOW = 1_800_000_000.0
_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551  # of P-256's base point

_ALPHABET = "AZaz09-_.=+/ \x00\u00e9\ud800\U0001f600\n,"
HOSTILE_VALUES: List[Any] = [
    None, True, False, 0, -1, 1.5, 2 ** 64, 10 ** 400, 1e308, float("nan"), float("inf"), float("-inf"), "", "0",
    "NaN", "1e400", "\u00e9", "\ud800", "\x00", [], {}, [1], {"a": 1}, "A" * 5000, [[[[[]]]]], -1e308,
]
_TIME_CLAIMS = ("exp", "nbf", "iat")
#: A case: what it calls (for the failure message), the call, and the errors it may raise.
_Case = Tuple[str, Callable[[], Any], Tuple[Type[BaseException], ...]]
_PEM = "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----"
_RAW_JSON = [
    "NaN", "Infinity", "-Infinity", "1e400", "9" * 5000, "[" * 5000 + "]" * 5000, '{"a":' * 3000 + "1" + "}" * 3000,
    "[]", "1", '"text"', "null", "", "{", '{"alg":"ES256"', '{"alg":"ES256",}', '{"a":1} x', "\ufeff{}",
]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _encode_json(rng: random.Random, value: Any) -> bytes:
    """The JSON bytes of a header or claims object, sometimes spoiled in a way a dict cannot be."""
    roll = rng.random()
    if roll < 0.1:
        return rng.choice(_RAW_JSON).encode("utf-8")
    text = json.dumps(value, allow_nan=True, ensure_ascii=rng.random() < 0.5)
    if roll < 0.15:
        member = rng.choice(_TIME_CLAIMS + ("alg", "typ", "jwk", "htm", "htu", "jti"))
        literal = rng.choice(["NaN", "Infinity", "-Infinity", "1e400", "9" * 5000, '"0"', "true", "null", "-0"])
        text = text[:-1] + ("," if len(text) > 2 else "") + f'"{member}":{literal}' + "}"
    if roll < 0.2:
        return text.encode("utf-16", "surrogatepass")
    if roll < 0.25:
        return text.encode("utf-8", "surrogatepass") + b"\xff\xfe"
    return text.encode("utf-8", "surrogatepass")


def _mutate_object(rng: random.Random, value: Dict[str, Any], names: Tuple[str, ...]) -> Dict[str, Any]:
    value = dict(value)
    for _ in range(rng.randint(1, 3)):
        roll = rng.random()
        name = rng.choice(names + tuple(value) if value else names)
        if roll < 0.6:
            value[name] = rng.choice(HOSTILE_VALUES)
        elif roll < 0.8:
            value.pop(name, None)
        else:
            value[rng.choice(["crit", "x5u", "kid", "jku", "nonce", "ath", "cnf", "\ud800", "é"])] = rng.choice(
                HOSTILE_VALUES)
    return value


def _mutate_text(rng: random.Random, text: str) -> str:
    for _ in range(rng.randint(1, 4)):
        roll = rng.random()
        at = rng.randrange(len(text) + 1)
        if roll < 0.3 and text:
            text = text[:at] + rng.choice(_ALPHABET) + text[at + 1:]
        elif roll < 0.5:
            text = text[:at] + rng.choice(_ALPHABET) * rng.randint(1, 3) + text[at:]
        elif roll < 0.65:
            text = text[:at] + text[at + rng.randint(1, 20):]
        elif roll < 0.75:
            parts = text.split(".")
            rng.shuffle(parts)
            text = ".".join(parts)
        elif roll < 0.85:
            text = text + "." + text.split(".")[0]
        else:
            text = text[:at]
    return text


def _hostile_jwk(rng: random.Random, good: Dict[str, Any]) -> Dict[str, Any]:
    roll = rng.random()
    if roll < 0.35:  # an RSA key whose size or exponent would make verifying costly
        bits = rng.choice([1024, 2047, 2048, 4096, 4097, 8192, 16384, 65536])
        n = rng.getrandbits(bits) | (1 << (bits - 1)) | 1
        e = rng.choice([3, 65537, 65539, (1 << rng.choice([64, 4096, 16384])) - 1, 2, 0])
        jwk: Dict[str, Any] = {"kty": "RSA", "n": _b64(n.to_bytes((bits + 7) // 8, "big")),
                               "e": _b64(e.to_bytes(max(1, (e.bit_length() + 7) // 8), "big"))}
        return _mutate_object(rng, jwk, ("n", "e", "kty")) if rng.random() < 0.3 else jwk
    if roll < 0.5:  # an EC point off the curve, or coordinates of the wrong size
        jwk = dict(good)
        coordinate = rng.choice(["x", "y"])
        size = rng.choice([1, 31, 32, 33, 64, 70_000])
        jwk[coordinate] = _b64(rng.getrandbits(8 * size).to_bytes(size, "big"))
        if rng.random() < 0.3:
            jwk["crv"] = rng.choice(["P-384", "P-521", "secp256k1", "Ed25519", None])
        return jwk
    return _mutate_object(rng, good, ("kty", "crv", "x", "y", "d", "n", "e", "k", "kid"))


class _Material:
    """The valid inputs mutations start from, drawn from the seed."""

    def __init__(self, seed: int) -> None:
        rng = random.Random(seed)
        self.key = jose.ECPrivateKey(rng.randrange(1, _ORDER), kid="k1")
        self.other = jose.ECPrivateKey(rng.randrange(1, _ORDER))
        self.public_jwk = {k: v for k, v in self.key.public_key.to_jwk().items() if k != "kid"}
        self.jkt = dpop.jwk_thumbprint(self.public_jwk)
        self.token = "tok-" + str(rng.getrandbits(64))
        self.replay = dpop.ReplayCache()
        self.nonces = dpop.NonceIssuer(secret=b"s" * 32)


def _sign(key: jose.ECPrivateKey, header: bytes, claims: bytes) -> str:
    signing_input = f"{_b64(header)}.{_b64(claims)}"
    return f"{signing_input}.{_b64(key.sign(signing_input.encode('ascii')))}"


def _spoiled_jwt(rng: random.Random, material: _Material, header: Dict[str, Any], claims: Dict[str, Any],
                 header_names: Tuple[str, ...], claim_names: Tuple[str, ...]) -> str:
    """A JWT signed by the material's key (or, sometimes, the other one) with one level spoiled."""
    key = material.key
    level = rng.random()
    if level < 0.3:
        return _mutate_text(rng, _sign(key, _encode_json(rng, header), _encode_json(rng, claims)))
    if level < 0.55:
        header = _mutate_object(rng, header, header_names)
    else:
        claims = _mutate_object(rng, claims, claim_names)
    token = _sign(rng.choice([key, key, key, material.other]),
                  _encode_json(rng, header), _encode_json(rng, claims))
    if rng.random() < 0.1:
        head, body, _ = token.split(".")
        token = f"{head}.{body}.{_b64(rng.randbytes(rng.choice([0, 63, 64, 65, 256])))}"
    return token


def _jwt_case(rng: random.Random, material: _Material) -> _Case:
    claims = {"iss": ISSUER, "aud": [RESOURCE], "exp": NOW + 60, "nbf": NOW - 60, "iat": NOW, "sub": "s"}
    token = _spoiled_jwt(rng, material, {"typ": "JWT", "alg": "ES256", "kid": "k1"}, claims,
                         ("alg", "typ", "kid", "crit"), ("iss", "aud", "exp", "nbf", "iat", "sub"))
    public = material.key.public_key
    options: Dict[str, Any] = rng.choice([{}, {"issuer": ISSUER, "audience": RESOURCE}, {"leeway": 0.0}])
    return f"jwt_decode({token!r})", lambda: jose.jwt_decode(token, public, now=NOW, **options), (jose.JWTError,)


def _proof_parts(rng: random.Random, material: _Material) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    header: Dict[str, Any] = {"typ": "dpop+jwt", "alg": "ES256", "jwk": material.public_jwk}
    if rng.random() < 0.3:
        header["jwk"] = _hostile_jwk(rng, material.public_jwk)
        if header["jwk"].get("kty") == "RSA" and rng.random() < 0.7:
            header["alg"] = "RS256"
    claims: Dict[str, Any] = {
        "jti": f"j{rng.getrandbits(64)}", "htm": "POST", "htu": RESOURCE, "iat": NOW,
        "ath": dpop.access_token_hash(material.token),
    }
    if rng.random() < 0.3:
        claims["nonce"] = material.nonces.issue(NOW)
    return header, claims


def _dpop_case(rng: random.Random, material: _Material) -> _Case:
    header, claims = _proof_parts(rng, material)
    proof = _spoiled_jwt(rng, material, header, claims, ("typ", "alg", "jwk", "crit"),
                         ("jti", "htm", "htu", "iat", "ath", "nonce", "exp", "nbf"))
    jkt = rng.choice([material.jkt, material.jkt, None, "", "\u00e9" * 43, "\ud800", material.jkt[:-1]])
    token = rng.choice([material.token, material.token, None, "t\u00e9", "\ud800"])
    url = rng.choice([RESOURCE, RESOURCE + "?q=1", "http://[::1", "https://MCP.example.com:443/mcp"])
    nonces = material.nonces
    nonce_valid = rng.choice([None, lambda nonce: nonces.is_valid(nonce, NOW)])

    def call() -> Any:
        return dpop.verify_proof(proof, method=rng.choice(["POST", "post", "GET"]), url=url, now=NOW,
                                 access_token=token, jkt=jkt, nonce_valid=nonce_valid, replay=material.replay)
    return f"verify_proof({proof!r}, jkt={jkt!r}, access_token={token!r}, url={url!r})", call, (dpop.DPoPProofError,)


def _bearer_case(rng: random.Random, material: _Material) -> _Case:
    header, claims = _proof_parts(rng, material)
    proof = _spoiled_jwt(rng, material, header, claims, ("typ", "alg", "jwk"), ("jti", "htm", "htu", "iat"))
    token_claims = _mutate_object(rng, {"aud": RESOURCE, "exp": NOW + 60, "scope": "mcp",
                                        "cnf": {"jkt": material.jkt}}, ("aud", "exp", "scope", "cnf"))
    auth = BearerAuth(lambda token: token_claims, resource=RESOURCE, authorization_servers=[ISSUER],
                      required_scopes=["mcp"], clock=lambda: NOW, dpop=rng.choice(["allowed", "required"]),
                      dpop_nonce=rng.random() < 0.3)
    headers = {"authorization": rng.choice([f"DPoP {material.token}", f"Bearer {material.token}", "DPoP t\u00e9"]),
               "dpop": proof}
    return (f"BearerAuth(claims={token_claims!r}).authenticate_request(dpop={proof!r})",
            lambda: auth.authenticate_request("POST", "/mcp", headers), (HTTPRefusal,))


def _jwk_case(rng: random.Random, material: _Material) -> _Case:
    good = dict(material.key.to_jwk()) if rng.random() < 0.3 else dict(material.public_jwk)
    jwk = _hostile_jwk(rng, good)
    source: Any = jwk
    roll = rng.random()
    if roll < 0.3:
        source = _encode_json(rng, jwk).decode("utf-8", "surrogateescape")
    elif roll < 0.45:
        source = _encode_json(rng, jwk)
    elif roll < 0.5:
        source = _mutate_text(rng, _PEM)
    target = rng.choice([jose.load_public_key, jose.load_private_key, dpop.jwk_thumbprint])
    if target is dpop.jwk_thumbprint and not isinstance(source, dict):
        target = jose.load_public_key
    return f"{target.__name__}({source!r})", lambda: target(source), (jose.JWTError,)


def _unverified_case(rng: random.Random, material: _Material) -> _Case:
    claims = {"iss": ISSUER, "aud": ISSUER, "exp": NOW + 60}
    token = _spoiled_jwt(rng, material, {"alg": "ES256"}, claims, ("alg",), ("iss", "aud", "exp"))

    def call() -> Any:
        claims = grants._unverified_claims(token)
        if not isinstance(claims, dict):
            raise TypeError(f"_unverified_claims gave {type(claims).__name__}")
        return claims
    return f"_unverified_claims({token!r})", call, ()


_CASES = [(_jwt_case, 3), (_dpop_case, 4), (_bearer_case, 1), (_jwk_case, 3), (_unverified_case, 1)]
_materials: Dict[int, _Material] = {}


def case(seed: int, n: int) -> float:
    """Case ``n`` of ``seed`` alone; returns the CPU seconds it took.

    Raises:
        AssertionError: the parser raised something other than its own error, or took over `CASE_BOUND`.
    """
    material = _materials.get(seed)
    if material is None:
        material = _materials[seed] = _Material(seed)
    rng = random.Random(seed * 1_000_003 + n)
    make = rng.choices([make for make, _ in _CASES], [weight for _, weight in _CASES])[0]
    what, call, allowed = make(rng, material)
    reproduce = (f"reproduce: python3 -c \"import sys; sys.path[:0] = ['.', 'tests']; "
                 f"from reliability.fuzz_jose import case; case({seed}, {n})\"")
    spent = _cpu_of(call, allowed, what, n, seed, reproduce)
    if spent > CASE_BOUND:
        # Measured again before it counts: a collection of the test run's garbage, or a slice lost on a loaded
        # machine, lands in one measurement; a parser's real cost is in both.
        spent = min(spent, _cpu_of(call, allowed, what, n, seed, reproduce))
    if spent > CASE_BOUND:
        raise AssertionError(f"fuzz_jose case {n} of seed {seed}: {_clip(what)} took {spent * 1000:.0f} ms of CPU "
                             f"(bound {CASE_BOUND * 1000:.0f} ms); {reproduce}")
    return spent


def _cpu_of(call: Callable[[], object], allowed: Any, what: str, n: int, seed: int, reproduce: str) -> float:
    """The CPU seconds this thread spent on one case (``thread_time``: other threads of the process don't count)."""
    started = time.thread_time()
    try:
        call()
    except allowed:
        pass
    except Exception as exc:
        raise AssertionError(f"fuzz_jose case {n} of seed {seed}: {_clip(what)} raised {type(exc).__name__}: "
                             f"{_clip(str(exc))}; {reproduce}") from exc
    return time.thread_time() - started


def _clip(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


def run(seed: int, cases: int) -> None:
    """Cases 0 to ``cases - 1`` of ``seed``.

    Raises:
        AssertionError: on the first case that fails (see `case`), with the line that replays it.
    """
    for n in range(cases):
        case(seed, n)


def slowest(seed: int, cases: int) -> Tuple[float, Optional[int]]:
    """The CPU seconds of the costliest case of a run, and its number (for the figures)."""
    worst, which = 0.0, None
    for n in range(cases):
        spent = case(seed, n)
        if spent > worst:
            worst, which = spent, n
    return worst, which
