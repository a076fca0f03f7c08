"""JSON Web Signatures for OAuth client authentication: ES256 and RS256 in pure Python.

No standard-library module signs with ECDSA or RSA, and OAuth needs both: ``private_key_jwt`` client
authentication (RFC 7523) and the enterprise cross-app access grants sign JWTs with ES256 (ECDSA over
P-256 with SHA-256) or RS256 (RSASSA-PKCS1-v1_5 with SHA-256). This module holds exactly that:

- base64url without padding (RFC 7515 §2);
- P-256 point arithmetic in Jacobian coordinates and ECDSA with RFC 6979 deterministic nonces, so a
  signature never depends on the quality of a random number generator;
- RSA signatures with the Chinese remainder theorem (RFC 8017 §5.1.2);
- keys from JWK dicts (RFC 7517/7518) and from PEM (PKCS#8, SEC1 and PKCS#1 private keys,
  SubjectPublicKeyInfo and PKCS#1 public keys), read by a minimal DER parser;
- compact JWT encoding and verification.

What a pure-Python signer can promise about timing, and what it cannot:

- ECDSA's nonce ``k`` is never revealed by the *number* of operations: ``k * G`` is a sum of 65 points from a
  precomputed table, one for each 4-bit digit of a recoding in which every digit is odd (never zero), so every
  nonce, whatever its bit length or number of one bits, costs exactly 64 point additions. (A double-and-add loop
  over ``bin(k)`` costs one doubling per bit and one addition per one bit: how long a signature took told the
  nonce's length, the leak lattice attacks recover a key from.) The public key is derived the same way.
- CPython's big integers are not constant-time: a multiplication or a modular reduction takes longer when an
  operand has more digits, the table lookup reads memory at a secret index, and the interpreter's own work
  varies. Each of these leaks far less than the nonce length did, but no pure-Python code can remove them.
- RSA signing (``pow`` with the private exponent) varies with the exponent's bits as CPython's ``pow`` does.

A client signing its own assertions and DPoP proofs is fine with that. A service that signs on behalf of
others, or on a machine an attacker can measure closely (shared host, same core), should keep its key in a
hardware token, an HSM or a cloud KMS, or sign with a C library written for constant time.

What verifying may cost is bounded, since keys arrive from other parties (an issuer's JWKS, a DPoP proof's
header): RSA keys are 2048 to 4096 bits with the exponent 65537, EC keys are P-256 points on the curve,
and JSON is read with `mcplite.protocol.json_text.loads` (no NaN or Infinity, bounded depth and number
length). The costliest accepted verification, ES256, takes about 2 ms of CPU; refusing an oversized key
costs what reading its text does.
"""

import base64
import hashlib
import hmac
import json
import math
import re
import secrets
import time
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Tuple, TypeVar, Union

from .._once import once
from ..protocol import json_text

__all__ = [
    "JWTError", "b64url_encode", "b64url_decode",
    "ECPrivateKey", "ECPublicKey", "RSAPrivateKey", "RSAPublicKey", "PrivateKey", "PublicKey",
    "load_private_key", "load_public_key", "jwt_encode", "jwt_decode",
]


class JWTError(ValueError):
    """A key or token could not be read, or a signature or claim did not verify."""


# --- base64url (RFC 7515 §2) --------------------------------------------------------------------------

_B64URL = re.compile(r"[A-Za-z0-9_-]*")


def b64url_encode(data: bytes) -> str:
    """Base64url without ``=`` padding."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes:
    """Decode unpadded base64url.

    Raises:
        JWTError: on characters outside the base64url alphabet or an impossible length. (The stdlib
        decoder silently skips unknown characters, which would let two different strings mean the same.)
    """
    if not _B64URL.fullmatch(text) or len(text) % 4 == 1:
        raise JWTError("invalid base64url")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _int_from_b64url(text: str) -> int:
    return int.from_bytes(b64url_decode(text), "big")


def _int_to_b64url(value: int, length: Optional[int] = None) -> str:
    size = length if length is not None else max(1, (value.bit_length() + 7) // 8)
    return b64url_encode(value.to_bytes(size, "big"))


# --- P-256 (SEC 2 secp256r1, FIPS 186-4 D.1.2.3) -----------------------------------------------------

_P = 0xFFFFFFFF00000001000000000000000000000000FFFFFFFFFFFFFFFFFFFFFFFF  # field prime
_B = 0x5AC635D8AA3A93E7B3EBBD55769886BC651D06B0CC53B0F63BCE3C3E27D2604B  # y^2 = x^3 - 3x + b
_N = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551  # order of the base point
_G = (
    0x6B17D1F2E12C4247F8BCE6E563A440F277037D812DEB33A0F4A13945D898C296,
    0x4FE342E2FE1A7F9B8EE7EB4A7C0F9E162BCE33576B315ECECBB6406837BF51F5,
)
_COORDINATE_SIZE = 32

# Points are kept in Jacobian coordinates (X, Y, Z), meaning the affine point (X/Z^2, Y/Z^3), so that
# adding and doubling need no modular inversion; only the final conversion back to affine inverts once.
# Z == 0 is the point at infinity.
_Jacobian = Tuple[int, int, int]
_INFINITY: _Jacobian = (1, 1, 0)


def _double(point: _Jacobian) -> _Jacobian:
    x, y, z = point
    if z == 0 or y == 0:
        return _INFINITY
    y2 = y * y % _P
    s = 4 * x * y2 % _P
    z2 = z * z % _P
    m = 3 * (x - z2) * (x + z2) % _P  # 3x^2 + a*z^4 with a = -3
    x3 = (m * m - 2 * s) % _P
    y3 = (m * (s - x3) - 8 * y2 * y2) % _P
    z3 = 2 * y * z % _P
    return x3, y3, z3


def _add(p1: _Jacobian, p2: _Jacobian) -> _Jacobian:
    x1, y1, z1 = p1
    x2, y2, z2 = p2
    if z1 == 0:
        return p2
    if z2 == 0:
        return p1
    z1z1 = z1 * z1 % _P
    z2z2 = z2 * z2 % _P
    u1 = x1 * z2z2 % _P
    u2 = x2 * z1z1 % _P
    s1 = y1 * z2 * z2z2 % _P
    s2 = y2 * z1 * z1z1 % _P
    h = (u2 - u1) % _P
    r = (s2 - s1) % _P
    if h == 0:
        # Same x: either the same point (double it) or a point and its negation (sum is infinity).
        return _double(p1) if r == 0 else _INFINITY
    h2 = h * h % _P
    h3 = h * h2 % _P
    u1h2 = u1 * h2 % _P
    x3 = (r * r - h3 - 2 * u1h2) % _P
    y3 = (r * (u1h2 - x3) - s1 * h3) % _P
    z3 = h * z1 * z2 % _P
    return x3, y3, z3


def _add_affine(p1: _Jacobian, x2: int, y2: int) -> _Jacobian:
    """p1 + (x2, y2): `_add` with the second point affine (Z = 1), which saves four multiplications."""
    x1, y1, z1 = p1
    if z1 == 0:
        return x2, y2, 1
    z1z1 = z1 * z1 % _P
    h = (x2 * z1z1 - x1) % _P
    r = (y2 * z1 * z1z1 - y1) % _P
    if h == 0:
        return _double(p1) if r == 0 else _INFINITY
    h2 = h * h % _P
    h3 = h * h2 % _P
    u1h2 = x1 * h2 % _P
    x3 = (r * r - h3 - 2 * u1h2) % _P
    y3 = (r * (u1h2 - x3) - y1 * h3) % _P
    return x3, y3, h * z1 % _P


# Multiples of the base point for `_base_multiply`: row i holds (2j + 1) * 16^i * G for j = 0..7, each as
# (x, (y, -y)), so a digit's sign picks a y instead of branching. Built on first use (about 10 ms); two threads
# that get there at once build the same table.
_BASE_DIGITS = 64  # 4-bit digits below the top one: 256 bits
_BaseTable = Tuple[List[List[Tuple[int, Tuple[int, int]]]], Tuple[int, int]]


@once
def _base_table() -> _BaseTable:
    rows: List[List[Tuple[int, Tuple[int, int]]]] = []
    power: _Jacobian = (_G[0], _G[1], 1)  # 16^i * G
    for _ in range(_BASE_DIGITS):
        twice = _double(power)
        multiple = power
        row = []
        for _ in range(8):
            x, y = _to_affine(multiple) or (0, 0)  # never infinity: every multiple is below the order
            row.append((x, (y, _P - y)))
            multiple = _add(multiple, twice)
        rows.append(row)
        for _ in range(4):
            power = _double(power)
    top = _to_affine(power)  # 2^256 * G
    assert top is not None
    return rows, top


def _base_multiply(scalar: int) -> _Jacobian:
    """scalar * G for 1 <= scalar < n, in the same 64 additions whatever the scalar (see the module docstring).

    The scalar is made odd (an even k is replaced by n - k, whose multiple is the negation of k's) and recoded
    into 64 odd digits in -15..15 and a top digit 1 (Joye and Tunstall's regular recoding): k = 16^64 +
    sum(d_i * 16^i). No digit is zero, so no addition is ever skipped.
    """
    rows, top = _base_table()
    even = 1 - (scalar & 1)
    k = (scalar, _N - scalar)[even]
    total: _Jacobian = (top[0], top[1], 1)
    for row in rows:
        digit = (k & 31) - 16  # odd, since k is
        k = (k - digit) >> 4  # odd again: k - digit is 16 modulo 32
        x, ys = row[abs(digit) >> 1]
        total = _add_affine(total, x, ys[digit < 0])
    x, y, z = total
    return x, (y, _P - y)[even], z


def _multiply(scalar: int, point: Tuple[int, int]) -> _Jacobian:
    """scalar * point by left-to-right double-and-add: for public scalars only (verification)."""
    result = _INFINITY
    addend: _Jacobian = (point[0], point[1], 1)
    for bit in bin(scalar)[2:]:
        result = _double(result)
        if bit == "1":
            result = _add(result, addend)
    return result


def _to_affine(point: _Jacobian) -> Optional[Tuple[int, int]]:
    x, y, z = point
    if z == 0:
        return None
    z_inv = pow(z, -1, _P)
    z_inv2 = z_inv * z_inv % _P
    return x * z_inv2 % _P, y * z_inv2 * z_inv % _P


def _on_curve(x: int, y: int) -> bool:
    return 0 <= x < _P and 0 <= y < _P and (y * y - (x * x * x - 3 * x + _B)) % _P == 0


def _rfc6979_nonces(private_value: int, digest: bytes) -> Iterator[int]:
    """The candidate nonces k of RFC 6979 §3.2 for P-256 with HMAC-SHA-256.

    For P-256 with SHA-256 the order and the hash are both 256 bits long, so bits2int is a plain
    big-endian conversion and bits2octets is a reduction modulo n.
    """
    x = private_value.to_bytes(_COORDINATE_SIZE, "big")
    h = (int.from_bytes(digest, "big") % _N).to_bytes(_COORDINATE_SIZE, "big")
    v = b"\x01" * 32
    k = b"\x00" * 32
    k = hmac.new(k, v + b"\x00" + x + h, hashlib.sha256).digest()
    v = hmac.new(k, v, hashlib.sha256).digest()
    k = hmac.new(k, v + b"\x01" + x + h, hashlib.sha256).digest()
    v = hmac.new(k, v, hashlib.sha256).digest()
    while True:
        v = hmac.new(k, v, hashlib.sha256).digest()
        candidate = int.from_bytes(v, "big")
        if 1 <= candidate < _N:
            yield candidate
        k = hmac.new(k, v + b"\x00", hashlib.sha256).digest()
        v = hmac.new(k, v, hashlib.sha256).digest()


class ECPublicKey:
    """A P-256 public key; verifies ES256 signatures."""

    algorithm = "ES256"

    def __init__(self, x: int, y: int, *, kid: Optional[str] = None) -> None:
        if not _on_curve(x, y):
            raise JWTError("the point is not on P-256")
        self.x = x
        self.y = y
        self.kid = kid

    def verify(self, message: bytes, signature: bytes) -> bool:
        """True when ``signature`` (r || s, 64 bytes, as JWS uses) is a valid ES256 signature of ``message``."""
        if len(signature) != 2 * _COORDINATE_SIZE:
            return False
        r = int.from_bytes(signature[:_COORDINATE_SIZE], "big")
        s = int.from_bytes(signature[_COORDINATE_SIZE:], "big")
        if not (1 <= r < _N and 1 <= s < _N):
            return False
        e = int.from_bytes(hashlib.sha256(message).digest(), "big")
        w = pow(s, -1, _N)
        u1 = e * w % _N
        total = _add(_base_multiply(u1) if u1 else _INFINITY, _multiply(r * w % _N, (self.x, self.y)))
        affine = _to_affine(total)
        return affine is not None and affine[0] % _N == r

    def to_jwk(self) -> Dict[str, str]:
        """The public JWK (RFC 7518 §6.2.1)."""
        jwk = {
            "kty": "EC", "crv": "P-256",
            "x": _int_to_b64url(self.x, _COORDINATE_SIZE), "y": _int_to_b64url(self.y, _COORDINATE_SIZE),
        }
        if self.kid is not None:
            jwk["kid"] = self.kid
        return jwk

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ECPublicKey) and (self.x, self.y) == (other.x, other.y)

    def __hash__(self) -> int:
        return hash((self.x, self.y))

    def __repr__(self) -> str:
        return f"ECPublicKey(x={self.x:#x}, y={self.y:#x}, kid={self.kid!r})"


class ECPrivateKey:
    """A P-256 private key; makes ES256 signatures with RFC 6979 deterministic nonces."""

    algorithm = "ES256"

    def __init__(self, d: int, *, kid: Optional[str] = None, public_key: Optional[ECPublicKey] = None) -> None:
        """Args:
            d: the private scalar, 1 <= d < n.
            kid: the JWK key id, copied into JWT headers.
            public_key: the matching public key when the source carried one; it is checked against d.

        Raises:
            JWTError: d out of range, or a ``public_key`` that does not belong to d.
        """
        if not 1 <= d < _N:
            raise JWTError("the P-256 private key is out of range")
        point = _to_affine(_base_multiply(d))
        assert point is not None  # 1 <= d < n never gives infinity
        derived = ECPublicKey(point[0], point[1], kid=kid)
        if public_key is not None and public_key != derived:
            raise JWTError("the EC private key does not match its public key")
        self._d = d
        self.kid = kid
        self.public_key = derived

    @classmethod
    def generate(cls, *, kid: Optional[str] = None) -> "ECPrivateKey":
        """A new random key (from the `secrets` module)."""
        return cls(secrets.randbelow(_N - 1) + 1, kid=kid)

    def sign(self, message: bytes) -> bytes:
        """The ES256 signature of ``message``: r || s, 32 bytes each (RFC 7518 §3.4)."""
        digest = hashlib.sha256(message).digest()
        e = int.from_bytes(digest, "big")
        for k in _rfc6979_nonces(self._d, digest):
            point = _to_affine(_base_multiply(k))
            assert point is not None
            r = point[0] % _N
            if r == 0:
                continue
            s = pow(k, -1, _N) * (e + r * self._d) % _N
            if s == 0:
                continue
            return r.to_bytes(_COORDINATE_SIZE, "big") + s.to_bytes(_COORDINATE_SIZE, "big")
        raise AssertionError("unreachable: the nonce generator is infinite")

    def to_jwk(self) -> Dict[str, str]:
        """The private JWK, ``d`` included. Handle the result as a secret."""
        return {**self.public_key.to_jwk(), "d": _int_to_b64url(self._d, _COORDINATE_SIZE)}

    def __repr__(self) -> str:
        return f"ECPrivateKey(kid={self.kid!r}, public_key={self.public_key!r})"


# --- RSA (RFC 8017) -----------------------------------------------------------------------------------

# DER of DigestInfo{sha256, NULL} up to the digest itself (RFC 8017 §9.2 note 1).
_SHA256_DIGEST_INFO = bytes.fromhex("3031300d060960864801650304020105000420")
_MIN_RSA_BITS = 2048  # RFC 7518 §3.3: RS256 keys MUST be 2048 bits or larger
# The ceiling bounds what a key from another party may cost: verifying is one pow() that holds the GIL, and a
# modulus of 16,384 bits with a large exponent held it for a second. 4096 bits is the largest size issuers
# publish (most use 2048); verifying with it takes well under a millisecond with the exponent below.
_MAX_RSA_BITS = 4096
# Only 65537 (F4): every issuer's and every library's default, so nothing real is refused, and the verifying
# pow() costs 17 multiplications. Any odd exponent would be valid RSA, but a large one is the cost attack
# itself, and e = 3 invites the signature forgeries of careless PKCS#1 v1.5 verifiers.
_RSA_EXPONENT = 65537


def _emsa_pkcs1_v15(message: bytes, length: int) -> bytes:
    t = _SHA256_DIGEST_INFO + hashlib.sha256(message).digest()
    return b"\x00\x01" + b"\xff" * (length - len(t) - 3) + b"\x00" + t


class RSAPublicKey:
    """An RSA public key; verifies RS256 signatures."""

    algorithm = "RS256"

    def __init__(self, n: int, e: int, *, kid: Optional[str] = None) -> None:
        """Raises:
            JWTError: a modulus outside 2048 to 4096 bits or even, or an exponent other than 65537.
        """
        if not _MIN_RSA_BITS <= n.bit_length() <= _MAX_RSA_BITS:
            raise JWTError(f"RSA keys for RS256 must have {_MIN_RSA_BITS} to {_MAX_RSA_BITS} bits")
        if n % 2 == 0:
            raise JWTError("invalid RSA modulus")
        if e != _RSA_EXPONENT:
            raise JWTError(f"the RSA public exponent must be {_RSA_EXPONENT}")
        self.n = n
        self.e = e
        self.kid = kid

    @property
    def size(self) -> int:
        """The modulus length in bytes, which is also the signature length."""
        return (self.n.bit_length() + 7) // 8

    def verify(self, message: bytes, signature: bytes) -> bool:
        """True when ``signature`` is a valid RS256 (RSASSA-PKCS1-v1_5, SHA-256) signature of ``message``."""
        if len(signature) != self.size:
            return False
        s = int.from_bytes(signature, "big")
        if s >= self.n:
            return False
        encoded = pow(s, self.e, self.n).to_bytes(self.size, "big")
        return hmac.compare_digest(encoded, _emsa_pkcs1_v15(message, self.size))

    def to_jwk(self) -> Dict[str, str]:
        """The public JWK (RFC 7518 §6.3.1)."""
        jwk = {"kty": "RSA", "n": _int_to_b64url(self.n), "e": _int_to_b64url(self.e)}
        if self.kid is not None:
            jwk["kid"] = self.kid
        return jwk

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RSAPublicKey) and (self.n, self.e) == (other.n, other.e)

    def __hash__(self) -> int:
        return hash((self.n, self.e))

    def __repr__(self) -> str:
        return f"RSAPublicKey(bits={self.n.bit_length()}, e={self.e}, kid={self.kid!r})"


class RSAPrivateKey:
    """An RSA private key; makes RS256 signatures, using the CRT parameters when it has them."""

    algorithm = "RS256"

    def __init__(
        self, n: int, e: int, d: int, *, p: Optional[int] = None, q: Optional[int] = None,
        kid: Optional[str] = None,
    ) -> None:
        """Args:
            n, e, d: modulus, public and private exponent.
            p, q: the prime factors; with them signing uses the CRT (about three times faster).
            kid: the JWK key id, copied into JWT headers.

        Raises:
            JWTError: a key the public key refuses (see `RSAPublicKey`), d out of range, or primes that do
            not multiply to n.
        """
        self.public_key = RSAPublicKey(n, e, kid=kid)
        if not 1 < d < n:
            raise JWTError("the RSA private exponent is out of range")
        self.kid = kid
        self._d = d
        self._crt: Optional[Tuple[int, int, int, int, int]] = None
        if p is not None and q is not None:
            if p * q != n or p < 3 or q < 3 or math.gcd(p, q) != 1:
                raise JWTError("the RSA primes do not match the modulus")
            # dp, dq and qi are recomputed rather than trusted: a wrong one would leak a factor of n.
            self._crt = (p, q, d % (p - 1), d % (q - 1), pow(q, -1, p))

    def sign(self, message: bytes) -> bytes:
        """The RS256 signature of ``message`` (RSASSA-PKCS1-v1_5 with SHA-256)."""
        size = self.public_key.size
        m = int.from_bytes(_emsa_pkcs1_v15(message, size), "big")
        if self._crt is None:
            s = pow(m, self._d, self.public_key.n)
        else:
            p, q, dp, dq, qi = self._crt
            m1 = pow(m, dp, p)
            m2 = pow(m, dq, q)
            s = m2 + (qi * (m1 - m2) % p) * q
        # Check before releasing: a faulty CRT signature would reveal a factor of n (Boneh-DeMillo-Lipton).
        if pow(s, self.public_key.e, self.public_key.n) != m:
            raise JWTError("RSA signature self-check failed")
        return s.to_bytes(size, "big")

    def __repr__(self) -> str:
        return f"RSAPrivateKey(kid={self.kid!r}, public_key={self.public_key!r})"


PrivateKey = Union[ECPrivateKey, RSAPrivateKey]
PublicKey = Union[ECPublicKey, RSAPublicKey]


# --- JWK (RFC 7517, RFC 7518 §6) ----------------------------------------------------------------------

# The longest JWK integers read, in bytes: P-256 coordinates and scalars, and RSA values up to _MAX_RSA_BITS
# (one byte more for a leading zero, which some encoders add).
_EC_INT_BYTES = _COORDINATE_SIZE
_RSA_INT_BYTES = _MAX_RSA_BITS // 8 + 1


def _jwk_int(jwk: Mapping[str, Any], name: str, max_bytes: int) -> int:
    """A JWK member's integer, refused before decoding when its text is longer than ``max_bytes`` allow."""
    value = jwk.get(name)
    if not isinstance(value, str):
        raise JWTError(f"JWK member {name!r} is missing")
    if len(value) > (4 * max_bytes + 2) // 3:
        raise JWTError(f"JWK member {name!r} is too long")
    return _int_from_b64url(value)


def _jwk_kid(jwk: Mapping[str, Any]) -> Optional[str]:
    kid = jwk.get("kid")
    if kid is not None and not isinstance(kid, str):
        raise JWTError("JWK member 'kid' is not a string")
    return kid


def _ec_public_from_jwk(jwk: Mapping[str, Any]) -> ECPublicKey:
    if jwk.get("crv") != "P-256":
        raise JWTError(f"unsupported EC curve {jwk.get('crv')!r} (only P-256)")
    return ECPublicKey(_jwk_int(jwk, "x", _EC_INT_BYTES), _jwk_int(jwk, "y", _EC_INT_BYTES), kid=_jwk_kid(jwk))


def _rsa_int(jwk: Mapping[str, Any], name: str) -> int:
    return _jwk_int(jwk, name, _RSA_INT_BYTES)


def _private_from_jwk(jwk: Mapping[str, Any]) -> PrivateKey:
    kty = jwk.get("kty")
    if kty == "EC":
        public = _ec_public_from_jwk(jwk)
        return ECPrivateKey(_jwk_int(jwk, "d", _EC_INT_BYTES), kid=_jwk_kid(jwk), public_key=public)
    if kty == "RSA":
        has_primes = "p" in jwk and "q" in jwk
        return RSAPrivateKey(
            _rsa_int(jwk, "n"), _rsa_int(jwk, "e"), _rsa_int(jwk, "d"),
            p=_rsa_int(jwk, "p") if has_primes else None, q=_rsa_int(jwk, "q") if has_primes else None,
            kid=_jwk_kid(jwk),
        )
    raise JWTError(f"unsupported JWK key type {kty!r}")


def _public_from_jwk(jwk: Mapping[str, Any]) -> PublicKey:
    kty = jwk.get("kty")
    if kty == "EC":
        return _ec_public_from_jwk(jwk)
    if kty == "RSA":
        return RSAPublicKey(_rsa_int(jwk, "n"), _rsa_int(jwk, "e"), kid=_jwk_kid(jwk))
    raise JWTError(f"unsupported JWK key type {kty!r}")


# --- PEM and a minimal DER reader (X.690) -------------------------------------------------------------

_SEQUENCE, _INTEGER, _BIT_STRING, _OCTET_STRING, _OID = 0x30, 0x02, 0x03, 0x04, 0x06
_CONTEXT_0, _CONTEXT_1 = 0xA0, 0xA1
_OID_EC_PUBLIC_KEY = bytes.fromhex("2a8648ce3d0201")  # 1.2.840.10045.2.1
_OID_P256 = bytes.fromhex("2a8648ce3d030107")  # 1.2.840.10045.3.1.7 (prime256v1)
_OID_RSA = bytes.fromhex("2a864886f70d010101")  # 1.2.840.113549.1.1.1 (rsaEncryption)

_PEM_BLOCK = re.compile(r"-----BEGIN ([A-Z0-9 ]+)-----(.*?)-----END \1-----", re.S)

_DER = List[Tuple[int, bytes]]


def _der_elements(data: bytes) -> _DER:
    """Split concatenated DER elements into (tag, contents) pairs; only definite lengths (DER has no other)."""
    elements: _DER = []
    offset = 0
    while offset < len(data):
        if offset + 2 > len(data):
            raise JWTError("truncated DER")
        tag, length = data[offset], data[offset + 1]
        offset += 2
        if length & 0x80:
            count = length & 0x7F
            if not 1 <= count <= 4 or offset + count > len(data):
                raise JWTError("unsupported DER length")
            length = int.from_bytes(data[offset:offset + count], "big")
            offset += count
        if offset + length > len(data):
            raise JWTError("truncated DER")
        elements.append((tag, data[offset:offset + length]))
        offset += length
    return elements


def _der_sequence(data: bytes, minimum: int) -> _DER:
    """The elements inside ``data``, which must be exactly one SEQUENCE of at least ``minimum`` elements."""
    outer = _der_elements(data)
    if len(outer) != 1 or outer[0][0] != _SEQUENCE:
        raise JWTError("expected a DER SEQUENCE")
    inner = _der_elements(outer[0][1])
    if len(inner) < minimum:
        raise JWTError("truncated DER SEQUENCE")
    return inner


def _der_expect(element: Tuple[int, bytes], tag: int) -> bytes:
    if element[0] != tag:
        raise JWTError(f"unexpected DER tag {element[0]:#x} (wanted {tag:#x})")
    return element[1]


def _der_integer(element: Tuple[int, bytes]) -> int:
    return int.from_bytes(_der_expect(element, _INTEGER), "big", signed=True)


def _der_bit_string(element: Tuple[int, bytes]) -> bytes:
    contents = _der_expect(element, _BIT_STRING)
    if not contents or contents[0] != 0:
        raise JWTError("unsupported DER BIT STRING")
    return contents[1:]


def _algorithm_identifier(element: Tuple[int, bytes]) -> Tuple[bytes, Optional[bytes]]:
    """(algorithm OID, curve OID or None) from an AlgorithmIdentifier."""
    fields = _der_elements(_der_expect(element, _SEQUENCE))
    if not fields:
        raise JWTError("empty DER AlgorithmIdentifier")
    algorithm = _der_expect(fields[0], _OID)
    curve = fields[1][1] if len(fields) > 1 and fields[1][0] == _OID else None
    return algorithm, curve


def _ec_point(encoded: bytes, kid: Optional[str] = None) -> ECPublicKey:
    """An uncompressed SEC1 point (0x04 || x || y)."""
    if len(encoded) != 1 + 2 * _COORDINATE_SIZE or encoded[0] != 4:
        raise JWTError("only uncompressed P-256 points are supported")
    return ECPublicKey(
        int.from_bytes(encoded[1:1 + _COORDINATE_SIZE], "big"),
        int.from_bytes(encoded[1 + _COORDINATE_SIZE:], "big"),
        kid=kid,
    )


def _sec1_private_key(der: bytes, curve: Optional[bytes] = None) -> ECPrivateKey:
    """SEC1 ECPrivateKey (RFC 5915): version, d, [0] parameters, [1] public key."""
    fields = _der_sequence(der, 2)
    if _der_integer(fields[0]) != 1:
        raise JWTError("unsupported EC private key version")
    d = int.from_bytes(_der_expect(fields[1], _OCTET_STRING), "big")
    public: Optional[ECPublicKey] = None
    for tag, contents in fields[2:]:
        explicit = _der_elements(contents)
        if tag == _CONTEXT_0 and explicit:
            curve = _der_expect(explicit[0], _OID)
        elif tag == _CONTEXT_1 and explicit:
            public = _ec_point(_der_bit_string(explicit[0]))
    if curve is not None and curve != _OID_P256:
        raise JWTError("unsupported EC curve (only P-256)")
    return ECPrivateKey(d, public_key=public)


def _pkcs1_private_key(der: bytes) -> RSAPrivateKey:
    """PKCS#1 RSAPrivateKey (RFC 8017 A.1.2): version, n, e, d, p, q, dp, dq, qi."""
    fields = _der_sequence(der, 9)
    if _der_integer(fields[0]) != 0:
        raise JWTError("unsupported RSA private key (multi-prime or unknown version)")
    n, e, d, p, q = (_der_integer(field) for field in fields[1:6])
    return RSAPrivateKey(n, e, d, p=p, q=q)


def _pkcs8_private_key(der: bytes) -> PrivateKey:
    """PKCS#8 PrivateKeyInfo (RFC 5208): version, AlgorithmIdentifier, OCTET STRING key."""
    fields = _der_sequence(der, 3)
    algorithm, curve = _algorithm_identifier(fields[1])
    key = _der_expect(fields[2], _OCTET_STRING)
    if algorithm == _OID_EC_PUBLIC_KEY:
        if curve != _OID_P256:
            raise JWTError("unsupported EC curve (only P-256)")
        return _sec1_private_key(key, curve)
    if algorithm == _OID_RSA:
        return _pkcs1_private_key(key)
    raise JWTError("unsupported private key algorithm")


def _spki_public_key(der: bytes) -> PublicKey:
    """SubjectPublicKeyInfo (RFC 5280 §4.1): AlgorithmIdentifier, BIT STRING key."""
    fields = _der_sequence(der, 2)
    algorithm, curve = _algorithm_identifier(fields[0])
    key = _der_bit_string(fields[1])
    if algorithm == _OID_EC_PUBLIC_KEY:
        if curve != _OID_P256:
            raise JWTError("unsupported EC curve (only P-256)")
        return _ec_point(key)
    if algorithm == _OID_RSA:
        return _pkcs1_public_key(key)
    raise JWTError("unsupported public key algorithm")


def _pkcs1_public_key(der: bytes) -> RSAPublicKey:
    fields = _der_sequence(der, 2)
    return RSAPublicKey(_der_integer(fields[0]), _der_integer(fields[1]))


def _pem_block(text: str) -> Tuple[str, bytes]:
    match = _PEM_BLOCK.search(text)
    if match is None:
        raise JWTError("no PEM block found")
    label, body = match.group(1), match.group(2)
    if "Proc-Type:" in body or label == "ENCRYPTED PRIVATE KEY":
        raise JWTError("encrypted PEM keys are not supported; decrypt the key first")
    try:
        return label, base64.b64decode("".join(body.split()), validate=True)
    except ValueError as exc:
        raise JWTError("invalid PEM base64") from exc


_PRIVATE_PEM_READERS = {
    "PRIVATE KEY": _pkcs8_private_key,
    "EC PRIVATE KEY": _sec1_private_key,
    "RSA PRIVATE KEY": _pkcs1_private_key,
}
_PUBLIC_PEM_READERS = {"PUBLIC KEY": _spki_public_key, "RSA PUBLIC KEY": _pkcs1_public_key}


def _as_jwk(source: Union[str, bytes, Mapping[str, Any]]) -> Union[Mapping[str, Any], str]:
    """A JWK mapping, or the PEM text when ``source`` is PEM."""
    if isinstance(source, Mapping):
        return source
    try:
        text = source.decode("utf-8") if isinstance(source, bytes) else source
        if "-----BEGIN" in text:
            return text
        jwk = json_text.loads(text)  # strict: no NaN, bounded depth and numbers
    except ValueError as exc:  # UnicodeDecodeError, json.JSONDecodeError, NotPortableJSON
        raise JWTError("a key must be PEM text or a JWK") from exc
    if not isinstance(jwk, dict):
        raise JWTError("a JWK must be a JSON object")
    return jwk


_Key = TypeVar("_Key", PrivateKey, PublicKey)


def _load(source: Union[str, bytes, Mapping[str, Any]], from_jwk: Callable[[Mapping[str, Any]], _Key],
          pem_readers: Mapping[str, Callable[[bytes], _Key]], kind: str) -> _Key:
    material = _as_jwk(source)
    if not isinstance(material, str):
        return from_jwk(material)
    label, der = _pem_block(material)
    reader = pem_readers.get(label)
    if reader is None:
        raise JWTError(f"unsupported PEM label {label!r} for a {kind} key")
    return reader(der)


def load_private_key(source: Union[str, bytes, Mapping[str, Any]]) -> PrivateKey:
    """A signing key from a JWK (dict or JSON text) or unencrypted PEM.

    PEM labels: ``PRIVATE KEY`` (PKCS#8, EC P-256 or RSA), ``EC PRIVATE KEY`` (SEC1), ``RSA PRIVATE KEY``
    (PKCS#1).

    Raises:
        JWTError: an unsupported or malformed key.
    """
    return _load(source, _private_from_jwk, _PRIVATE_PEM_READERS, "private")


def load_public_key(source: Union[str, bytes, Mapping[str, Any]]) -> PublicKey:
    """A verification key from a JWK (private members are ignored) or PEM (``PUBLIC KEY``, ``RSA PUBLIC KEY``).

    Raises:
        JWTError: an unsupported or malformed key.
    """
    return _load(source, _public_from_jwk, _PUBLIC_PEM_READERS, "public")


# --- JWT (RFC 7519, compact JWS serialization RFC 7515 §7.1) -----------------------------------------

def _json_b64(value: Mapping[str, Any]) -> str:
    return b64url_encode(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))


def jwt_encode(
    claims: Mapping[str, Any], key: PrivateKey, *, headers: Optional[Mapping[str, Any]] = None
) -> str:
    """Sign ``claims`` as a compact JWT with the key's algorithm (ES256 or RS256).

    Args:
        claims: the JWT claims set.
        key: the signing key; its ``kid``, when set, goes into the header.
        headers: extra header members (``typ`` for example); ``alg`` always comes from the key.

    Returns:
        ``header.payload.signature``, each part base64url.
    """
    header: Dict[str, Any] = {"typ": "JWT"}
    if key.kid is not None:
        header["kid"] = key.kid
    header.update(headers or {})
    header["alg"] = key.algorithm
    signing_input = f"{_json_b64(header)}.{_json_b64(claims)}"
    return f"{signing_input}.{b64url_encode(key.sign(signing_input.encode('ascii')))}"


def json_object_part(part: str, what: str) -> Dict[str, Any]:
    """A JWT part's JSON object: base64url of UTF-8 (RFC 7515 §5.2), read by the strict `json_text.loads`
    (``NaN`` or ``1e400`` would make a time claim that never expires; deep nesting would recurse).

    Raises:
        JWTError: anything else, naming ``what`` (``header``, ``claims``).
    """
    try:
        value = json_text.loads(b64url_decode(part).decode("utf-8"))
    except ValueError:  # JWTError, UnicodeDecodeError, json.JSONDecodeError and NotPortableJSON
        raise JWTError(f"the JWT {what} is not base64url JSON") from None
    if not isinstance(value, dict):
        raise JWTError(f"the JWT {what} is not a JSON object")
    return value


def numeric_date(claims: Mapping[str, Any], name: str) -> Optional[float]:
    """A time claim (``exp``, ``nbf``, ``iat``) as a float, None when absent (RFC 7519 §2 NumericDate).

    Raises:
        JWTError: present but not a finite number (a string, a bool, null, or an integer beyond a double).
    """
    if name not in claims:
        return None
    value = claims[name]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise JWTError(f"the JWT claim {name!r} is not a number")
    try:
        seconds = float(value)
    except OverflowError:
        raise JWTError(f"the JWT claim {name!r} is out of range") from None
    if not math.isfinite(seconds):
        raise JWTError(f"the JWT claim {name!r} is out of range")
    return seconds


def jwt_decode(
    token: str, key: PublicKey, *, issuer: Optional[str] = None, audience: Optional[str] = None,
    now: Optional[float] = None, leeway: float = 60.0,
) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """Verify a compact JWT and return ``(header, claims)``.

    The header's ``alg`` must be the key's algorithm: trusting the token to choose would allow the
    algorithm-confusion attacks (``none``, or RS256 turned into HS256). ``exp`` and ``nbf`` are checked
    when present; ``iss`` and ``aud`` when asked for.

    Args:
        token: the compact JWT.
        key: the key that must have signed it.
        issuer: the required ``iss``.
        audience: a value that ``aud`` (a string or a list) must contain.
        now: the current time (seconds since the epoch); defaults to `time.time()`.
        leeway: clock skew allowed on ``exp`` and ``nbf``, in seconds.

    Raises:
        JWTError: a malformed token (JSON is read strictly: no NaN, bounded depth; ``exp``, ``nbf`` and
        ``iat`` must be finite numbers), a wrong algorithm, a ``crit`` header, a bad signature or a failed
        claim check.
    """
    parts = token.split(".")
    if len(parts) != 3:
        raise JWTError("a JWT has three parts")
    header = json_object_part(parts[0], "header")
    if header.get("alg") != key.algorithm:
        raise JWTError(f"JWT algorithm {header.get('alg')!r} does not match the key ({key.algorithm})")
    if "crit" in header:  # RFC 7515 §4.1.11: extensions it names must be understood, and none are
        raise JWTError("the JWT header names critical extensions")
    b64url_decode(parts[1])  # the signing input is ASCII only when the payload is base64url
    if not key.verify(f"{parts[0]}.{parts[1]}".encode("ascii"), b64url_decode(parts[2])):
        raise JWTError("JWT signature does not verify")
    claims = json_object_part(parts[1], "claims")
    current = time.time() if now is None else now
    expires, not_before = numeric_date(claims, "exp"), numeric_date(claims, "nbf")
    numeric_date(claims, "iat")  # not compared, but a malformed one is a malformed token
    if expires is not None and current > expires + leeway:
        raise JWTError("JWT has expired")
    if not_before is not None and current < not_before - leeway:
        raise JWTError("JWT is not valid yet")
    if issuer is not None and claims.get("iss") != issuer:
        raise JWTError("JWT issuer does not match")
    if audience is not None:
        aud = claims.get("aud")
        if not (aud == audience or (isinstance(aud, list) and audience in aud)):
            raise JWTError("JWT audience does not match")
    return header, claims
