"""DPoP, sender-constrained access tokens (RFC 9449, MCP SEP-1932), both sides, without I/O.

A DPoP-bound access token is useless without the private key it is bound to: with every request the client
signs a short *proof* (a JWT whose header carries its public key) naming the request's method and URL, the
hash of the token, a unique id and the time. The authorization server binds the token to the key's
thumbprint (``cnf.jkt``); the resource server checks that each proof is fresh, fits the request, and was
signed by that key.

- Client: `make_proof` (``DPoP`` header value), `access_token_hash`, `jwk_thumbprint`.
- Server: `verify_proof`, the verification ladder of RFC 9449 §4.3 as one function, raising `DPoPProofError`
  with the error code to send (``invalid_dpop_proof`` or ``use_dpop_nonce``); `ReplayCache` (a ``jti`` is
  accepted once within the ``iat`` window) and `NonceIssuer` (stateless server nonces, RFC 9449 §9).

SEP-1932 adopts RFC 9449 unchanged (no MCP-specific claims): ``iat`` within five minutes either way, ``jti``
tracking where the server can keep state, nonces where it wants fresher proofs than ``iat`` gives.
"""

import hashlib
import hmac
import json
import secrets
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Mapping, Optional, Sequence
from urllib.parse import urlsplit, urlunsplit

from . import jose

__all__ = [
    "DPOP_SCHEME", "DPOP_PROOF_TYPE", "DPOP_ALGORITHMS", "INVALID_DPOP_PROOF", "USE_DPOP_NONCE",
    "DPoPProofError", "VerifiedProof", "ReplayCache", "NonceIssuer",
    "make_proof", "verify_proof", "access_token_hash", "jwk_thumbprint", "htu_of",
]

#: The ``Authorization`` scheme of a DPoP-bound token (RFC 9449 §7.1).
DPOP_SCHEME = "DPoP"
#: The ``typ`` header of a proof (RFC 9449 §4.2).
DPOP_PROOF_TYPE = "dpop+jwt"
#: The proof algorithms `mcplite.jose` verifies: asymmetric only (never ``none`` or an HMAC, §11.6).
DPOP_ALGORITHMS = ("ES256", "RS256")
#: The error of a proof that is missing, malformed or does not fit the request (RFC 9449 §7.1).
INVALID_DPOP_PROOF = "invalid_dpop_proof"
#: The error that asks the client to sign again with the nonce in the ``DPoP-Nonce`` header (§8, §9).
USE_DPOP_NONCE = "use_dpop_nonce"
#: SEP-1932: servers accept an ``iat`` within five minutes of their clock.
DEFAULT_WINDOW = 300.0

_DEFAULT_PORTS = {"http": 80, "https": 443}
# JWK members that only a private key has (RFC 7518 §6.2.2, §6.3.2; "k" of a symmetric key, §6.4).
_PRIVATE_MEMBERS = frozenset(("d", "p", "q", "dp", "dq", "qi", "oth", "k"))
# The members of the RFC 7638 thumbprint, per key type, in their (lexicographic) order.
_THUMBPRINT_MEMBERS = {"EC": ("crv", "kty", "x", "y"), "RSA": ("e", "kty", "n")}
_MAX_JTI = 256  # longer jti values are refused rather than stored
# The longest proof read, in characters. A proof with a 4096-bit RSA key is under 3,000; the rest is room for a
# long htu. Refusing longer ones before reading them bounds what a proof may cost without the HTTP layer's limit.
_MAX_PROOF = 16 * 1024


class DPoPProofError(ValueError):
    """A proof the resource server refuses: ``error`` is the RFC 9449 error code for the challenge
    (`INVALID_DPOP_PROOF` or `USE_DPOP_NONCE`), the message its ``error_description``."""

    def __init__(self, error: str, description: str) -> None:
        super().__init__(description)
        self.error = error
        self.description = description


@dataclass(frozen=True)
class VerifiedProof:
    """A proof that passed `verify_proof`: the thumbprint of its key and its claims."""

    jkt: str
    claims: Dict[str, Any] = field(repr=False)


def access_token_hash(access_token: str) -> str:
    """The ``ath`` claim: base64url of the SHA-256 of the token's ASCII bytes (RFC 9449 §4.2)."""
    return jose.b64url_encode(hashlib.sha256(access_token.encode("ascii")).digest())


def jwk_thumbprint(jwk: Mapping[str, Any]) -> str:
    """The RFC 7638 SHA-256 thumbprint of a public JWK, base64url: what ``cnf.jkt`` holds (RFC 9449 §6.1).

    Raises:
        jose.JWTError: a key type other than EC or RSA, or a required member missing.
    """
    members = _THUMBPRINT_MEMBERS.get(str(jwk.get("kty")))
    if members is None:
        raise jose.JWTError(f"no thumbprint for JWK key type {jwk.get('kty')!r}")
    if not all(isinstance(jwk.get(name), str) for name in members):
        raise jose.JWTError("the JWK lacks a member of its thumbprint")
    canonical = json.dumps({name: jwk[name] for name in members}, separators=(",", ":"), sort_keys=True)
    return jose.b64url_encode(hashlib.sha256(canonical.encode("utf-8")).digest())


def htu_of(url: str) -> str:
    """A URL as ``htu`` names it and as proofs are compared: no query or fragment, lower-case scheme and
    host, no default port, ``/`` for an empty path (RFC 9449 §4.2, RFC 3986 §6.2.2-6.2.3)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    netloc = host if port is None or port == _DEFAULT_PORTS.get(scheme) else f"{host}:{port}"
    return urlunsplit((scheme, netloc, parts.path or "/", "", ""))


def make_proof(
    key: jose.PrivateKey, method: str, url: str, *, now: float, access_token: Optional[str] = None,
    nonce: Optional[str] = None,
) -> str:
    """A fresh proof for one request: the ``DPoP`` header value (RFC 9449 §4.2).

    Args:
        key: the client's key for this authorization (its public half goes into the header).
        method: the request's HTTP method (``htm``).
        url: the request's URL; ``htu`` is it without query and fragment.
        now: the time, for ``iat``.
        access_token: the token the request presents, hashed into ``ath`` (none on a token request).
        nonce: the server's latest ``DPoP-Nonce`` for this origin, if it gave one.
    """
    parts = urlsplit(url)
    claims: Dict[str, Any] = {
        "jti": secrets.token_urlsafe(16), "htm": method.upper(),
        "htu": urlunsplit((parts.scheme, parts.netloc, parts.path or "/", "", "")), "iat": int(now),
    }
    if access_token is not None:
        claims["ath"] = access_token_hash(access_token)
    if nonce is not None:
        claims["nonce"] = nonce
    public = {name: value for name, value in key.public_key.to_jwk().items() if name != "kid"}
    return jose.jwt_encode(claims, key, headers={"typ": DPOP_PROOF_TYPE, "jwk": public})


class ReplayCache:
    """The ``jti`` values of accepted proofs, each kept for twice the ``iat`` window (long enough to cover
    any proof that could still pass the ``iat`` check), so a proof is accepted once.

    Bounded: beyond ``max_entries`` the oldest entries are forgotten first. A replay then needs a proof
    older than ``max_entries`` newer ones that is still within the ``iat`` window; refusing new proofs
    instead would let a flood of valid ones lock every client out.
    """

    def __init__(self, window: float = DEFAULT_WINDOW, max_entries: int = 100_000) -> None:
        self.window = window
        self.max_entries = max_entries
        self._lock = threading.Lock()  # guards _seen
        self._seen: "OrderedDict[str, float]" = OrderedDict()  # jti -> when it may be forgotten, oldest first

    def first_use(self, jti: str, now: float) -> bool:
        """Record ``jti``; False when it was already used within the window."""
        with self._lock:
            while self._seen:
                oldest, forget_at = next(iter(self._seen.items()))
                if forget_at > now and len(self._seen) < self.max_entries:
                    break
                del self._seen[oldest]
            if jti in self._seen:
                return False
            self._seen[jti] = now + 2 * self.window
            return True


class NonceIssuer:
    """Server nonces that need no state (RFC 9449 §9, SEP-1932): the time of issue and its HMAC under a
    secret of this process. A nonce is valid for ``lifetime`` seconds; a restart invalidates every nonce,
    which costs each client one ``use_dpop_nonce`` round trip."""

    def __init__(self, lifetime: float = DEFAULT_WINDOW, secret: Optional[bytes] = None) -> None:
        self.lifetime = lifetime
        self._secret = secret if secret is not None else secrets.token_bytes(32)

    def _mac(self, issued: bytes) -> bytes:
        return hmac.new(self._secret, issued, hashlib.sha256).digest()[:16]

    def issue(self, now: float) -> str:
        """A new nonce."""
        issued = int(now).to_bytes(8, "big")
        return jose.b64url_encode(issued + self._mac(issued))

    def is_valid(self, nonce: Optional[str], now: float) -> bool:
        """Whether ``nonce`` came from this issuer and is younger than ``lifetime``."""
        if not isinstance(nonce, str):
            return False
        try:
            raw = jose.b64url_decode(nonce)
        except jose.JWTError:
            return False
        if len(raw) != 24 or not hmac.compare_digest(raw[8:], self._mac(raw[:8])):
            return False
        age = now - int.from_bytes(raw[:8], "big")
        return -1.0 <= age <= self.lifetime


def _proof_header(proof: str) -> Dict[str, Any]:
    if len(proof) > _MAX_PROOF:
        raise DPoPProofError(INVALID_DPOP_PROOF, "the DPoP proof is too long")
    parts = proof.split(".")
    if len(parts) != 3:
        raise DPoPProofError(INVALID_DPOP_PROOF, "the DPoP proof is not a JWT")
    try:
        return jose.json_object_part(parts[0], "header")
    except jose.JWTError as exc:
        raise DPoPProofError(INVALID_DPOP_PROOF, f"the DPoP proof is malformed: {exc}") from None


def _proof_jwk(header: Mapping[str, Any], algorithms: Sequence[str]) -> Dict[str, Any]:
    if header.get("typ") != DPOP_PROOF_TYPE:
        raise DPoPProofError(INVALID_DPOP_PROOF, f"the DPoP proof's typ must be {DPOP_PROOF_TYPE}")
    if header.get("alg") not in algorithms:
        raise DPoPProofError(INVALID_DPOP_PROOF, f"the DPoP proof's alg must be one of {' '.join(algorithms)}")
    jwk = header.get("jwk")
    if not isinstance(jwk, dict):
        raise DPoPProofError(INVALID_DPOP_PROOF, "the DPoP proof has no jwk")
    if _PRIVATE_MEMBERS & set(jwk):
        raise DPoPProofError(INVALID_DPOP_PROOF, "the DPoP proof's jwk holds a private key")
    return jwk


def _proof_key(jwk: Mapping[str, Any], algorithm: str) -> jose.PublicKey:
    try:
        key = jose.load_public_key(jwk)  # bounded: see jose's module docstring
    except jose.JWTError as exc:
        raise DPoPProofError(INVALID_DPOP_PROOF, f"the DPoP proof's jwk is not usable: {exc}") from None
    if key.algorithm != algorithm:
        raise DPoPProofError(INVALID_DPOP_PROOF, "the DPoP proof's jwk does not fit its alg")
    return key


def _thumbprint_of(jwk: Mapping[str, Any]) -> str:
    try:
        return jwk_thumbprint(jwk)
    except jose.JWTError as exc:
        raise DPoPProofError(INVALID_DPOP_PROOF, f"the DPoP proof's jwk is not usable: {exc}") from None


def _same_text(a: str, b: str) -> bool:
    """Constant-time equality of two strings (compare_digest takes str only when it is ASCII)."""
    return hmac.compare_digest(a.encode("utf-8", "surrogatepass"), b.encode("utf-8", "surrogatepass"))


def verify_proof(
    proof: Optional[str], *, method: str, url: str, now: float, access_token: Optional[str] = None,
    jkt: Optional[str] = None, window: float = DEFAULT_WINDOW, algorithms: Sequence[str] = DPOP_ALGORITHMS,
    nonce_valid: Optional[Callable[[Optional[str]], bool]] = None, replay: Optional[ReplayCache] = None,
) -> VerifiedProof:
    """Check a ``DPoP`` header against the request it came with (RFC 9449 §4.3, §7.1), in this order: one
    well-formed proof; ``typ``, an accepted asymmetric ``alg`` and a public ``jwk``; the key's thumbprint
    against ``jkt`` (before any signature work, so a key that is not the token's costs nothing to refuse);
    the key itself (RSA 2048 to 4096 bits with exponent 65537, or a P-256 point); the signature; ``jti``;
    ``htm``; ``htu``; ``iat`` within ``window``; ``ath``; the nonce; and last (so a refused proof never uses
    up its ``jti``) that the ``jti`` is new. JSON is read strictly (`mcplite.protocol.json_text`), and the
    time claims must be finite numbers.

    Args:
        proof: the ``DPoP`` header (None: absent). Repeated headers joined with ``,`` count as several.
        method, url: the request's method and its URL as the client addressed it.
        now: the server's time.
        access_token: the token presented with the proof (None on a token request): ``ath`` must hash it.
        jkt: the thumbprint the token is bound to (its ``cnf.jkt``), when known.
        window: how far ``iat`` may be from ``now``, either way, in seconds.
        algorithms: the accepted ``alg`` values.
        nonce_valid: when the server requires nonces, says whether the proof's ``nonce`` is current.
        replay: where used ``jti`` values are remembered (None: no replay check).

    Raises:
        DPoPProofError: the first check that failed, with its error code.
    """
    if not proof:
        raise DPoPProofError(INVALID_DPOP_PROOF, "a DPoP proof is required")
    if "," in proof:
        raise DPoPProofError(INVALID_DPOP_PROOF, "more than one DPoP proof")
    header = _proof_header(proof.strip())
    jwk = _proof_jwk(header, algorithms)
    thumbprint = _thumbprint_of(jwk)
    if jkt is not None and not _same_text(thumbprint, jkt):
        raise DPoPProofError(INVALID_DPOP_PROOF, "the DPoP proof's key is not the one the token is bound to")
    key = _proof_key(jwk, header["alg"])
    try:
        _, claims = jose.jwt_decode(proof.strip(), key, now=now, leeway=window)
        issued = jose.numeric_date(claims, "iat")
    except jose.JWTError as exc:
        raise DPoPProofError(INVALID_DPOP_PROOF, f"the DPoP proof does not verify: {exc}") from None
    jti = claims.get("jti")
    if not isinstance(jti, str) or not jti or len(jti) > _MAX_JTI:
        raise DPoPProofError(INVALID_DPOP_PROOF, "the DPoP proof has no usable jti")
    if claims.get("htm") != method.upper():
        raise DPoPProofError(INVALID_DPOP_PROOF, "the DPoP proof's htm is not the request's method")
    if not _names_url(claims.get("htu"), url):
        raise DPoPProofError(INVALID_DPOP_PROOF, "the DPoP proof's htu is not the request's URL")
    if issued is None or abs(now - issued) > window:
        raise DPoPProofError(INVALID_DPOP_PROOF, "the DPoP proof's iat is outside the accepted window")
    if access_token is not None and not _hashes_token(claims.get("ath"), access_token):
        raise DPoPProofError(INVALID_DPOP_PROOF, "the DPoP proof's ath does not match the access token")
    if nonce_valid is not None and not nonce_valid(claims.get("nonce")):
        raise DPoPProofError(USE_DPOP_NONCE, "a current DPoP nonce is required")
    if replay is not None and not replay.first_use(jti, now):
        raise DPoPProofError(INVALID_DPOP_PROOF, "the DPoP proof was used before")
    return VerifiedProof(jkt=thumbprint, claims=claims)


def _names_url(htu: Any, url: str) -> bool:
    """Whether a proof's ``htu`` names ``url``: a string without query or fragment, equal once normalised."""
    if not isinstance(htu, str) or "#" in htu:
        return False
    try:
        return not urlsplit(htu).query and htu_of(htu) == htu_of(url)
    except ValueError:  # urlsplit's, on a malformed IPv6 host ("http://[::1")
        return False


def _hashes_token(ath: Any, access_token: str) -> bool:
    """Whether ``ath`` is the token's hash; a token with non-ASCII characters (never a valid one) has none."""
    try:
        expected = access_token_hash(access_token)
    except UnicodeEncodeError:
        return False
    return isinstance(ath, str) and _same_text(ath, expected)
