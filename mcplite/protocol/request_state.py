"""`requestState` (2026-07-28): the server's round state sealed into a token and opened again, and the question
digests.

On revision 2026-07-28 a server that needs input answers ``{resultType: "input_required", inputRequests,
requestState}`` and the client retries the request with the answers and the same ``requestState``. mcplite runs
such handlers by *replay* (MODERN.md, "Round trips on the server"): the answers gathered so far travel in the
state, so a retry may land on another worker or after a restart. This module is the pure half of that: it turns
a round state (``r``, ``asked``, ``answers``, ``memo``, ``user``) into a token bound to its request, and back.

The token (MODERN.md, "Protecting `requestState` with the standard library only")::

    v1.<b64url(payload)>.<b64url(HMAC-SHA256(k_mac, "v1." + kid + "." + b64url(payload)))>
    payload = canonical JSON {v, kid, iat, exp, m, t, a, aud, p?, r, asked, answers, memo, user?}

- ``k_mac`` = HMAC(secret, "mcplite/request-state/v1"): the secret itself never keys anything else directly.
- ``kid`` = hex of the first 4 bytes of SHA-256("mcplite/kid" + k_mac): which key of the ring minted the state.
- ``m``/``t``/``a``/``aud``: the method, the target (tool or prompt name, resource uri), the SHA-256 of the
  canonical arguments, and the server's name. A state replayed against another request is refused.
- ``p`` = HMAC(k_mac, "principal:" + principal)[:16]: binds the state to the caller without revealing who it is.

The token is **signed, not encrypted**: the client can read the answers it gave, the claims, ``memo`` and
``user``, so neither may hold secrets. A deployment that needs confidentiality passes a codec (any object with
``seal(bytes) -> str`` and ``unseal(str) -> bytes``, e.g. AES-GCM or a KMS); the claim checks stay these.

Every refusal is the one frozen error, -32602 "Invalid or expired requestState" (`InvalidRequestState`), whatever
went wrong: the reason is kept on the exception for the server's log and never reaches the wire, so a prober
learns nothing from it.

Pure: no I/O, no threads, no clock (the caller passes ``now``, in seconds since the epoch). ``hmac``, ``hashlib``
and ``base64`` are imported on first use, never at start-up; a key ring can be built without them.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import json
import os

from ..errors import INTERNAL_ERROR, INVALID_PARAMS, RPCError

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    from typing import Any, Dict, Iterable, List, Optional, Protocol, Tuple

    class StateCodec(Protocol):
        """What a codec that replaces the HMAC signature provides (e.g. AES-GCM over ``cryptography``)."""

        def seal(self, payload: bytes) -> str: ...

        def unseal(self, token: str) -> bytes: ...  # raises on anything it did not seal itself

__all__ = [
    "STATE_KEYS_ENV", "MIN_SECRET_BYTES", "MAX_ROUNDS", "MAX_STATE_BYTES", "DEFAULT_TTL", "INVALID_STATE_MESSAGE",
    "ROUND_STATE_FIELDS", "InvalidRequestState", "StateKeys", "canonical_json", "arguments_digest",
    "question_digest", "seal_state", "open_state",
]

#: The environment variable a deployment sets to share keys between processes: comma-separated hex secrets,
#: the minting key first (read by the server, parsed by `StateKeys.from_hex`).
STATE_KEYS_ENV = "MCPLITE_STATE_KEYS"
#: The shortest secret accepted: 256 bits, the HMAC-SHA256 key size.
MIN_SECRET_BYTES = 32
#: Round trips one request may take before the server gives up (-32603); the client's own cap (10) comes first.
MAX_ROUNDS = 16
#: The largest token sealed or opened: a bigger state is a server bug when sealing, and a waste when opening.
MAX_STATE_BYTES = 256 * 1024
#: How long a state stays valid, in seconds: long enough for a human to answer a question.
DEFAULT_TTL = 3600
#: The one message of every refusal; both official SDKs use this wording.
INVALID_STATE_MESSAGE = "Invalid or expired requestState"
#: What a round state may hold (the bookkeeping of `input_rounds`); everything else in a payload is a claim.
ROUND_STATE_FIELDS = ("r", "asked", "answers", "memo", "user")

_VERSION = "v1"
_FORMAT = 1  # the payload's "v"
_KEY_LABEL = b"mcplite/request-state/v1"  # domain separation: k_mac is only ever used for request states
_KID_LABEL = b"mcplite/kid"
_PRINCIPAL_LABEL = b"principal:"
_MAC_BYTES = 32
_B64URL_ALPHABET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
_CLAIMS = ("v", "kid", "iat", "exp", "m", "t", "a", "aud", "p")


class InvalidRequestState(RPCError):
    """A ``requestState`` was refused: always -32602 "Invalid or expired requestState" on the wire.

    ``reason`` says why (tampered, expired, another request's, a foreign key...) for the server's log only: it
    is not in ``message`` or ``data``, so the client learns nothing from a refusal."""

    def __init__(self, reason: str) -> None:
        super().__init__(INVALID_PARAMS, INVALID_STATE_MESSAGE)
        self.reason = reason


class _Key:
    """One derived key of a ring: its id and its MAC key (the secret itself is not kept)."""

    __slots__ = ("kid", "k_mac")

    def __init__(self, secret: bytes) -> None:
        import hashlib
        import hmac

        self.k_mac = hmac.new(secret, _KEY_LABEL, hashlib.sha256).digest()
        self.kid = hashlib.sha256(_KID_LABEL + self.k_mac).digest()[:4].hex()


class StateKeys:
    """A key ring for ``requestState``: the first key mints, every key verifies.

    Rotation without refusing states in flight rolls out ``[old, new]`` (everyone verifies new states), then
    ``[new, old]`` (new mints; states of old still open), then ``[new]`` once the old states have expired.
    Secrets are at least 32 bytes (`MIN_SECRET_BYTES`). `generate` draws one ephemeral key, good for one process
    and for the workers it forks; `from_hex` reads `STATE_KEYS_ENV`'s form. The keys are derived on first use,
    so building a ring at start-up imports neither ``hmac`` nor ``hashlib``."""

    __slots__ = ("_secrets", "_derived", "ephemeral")

    def __init__(self, secrets: Iterable[bytes], *, ephemeral: bool = False) -> None:
        if isinstance(secrets, (bytes, bytearray, str)):
            raise TypeError("StateKeys takes a list of secrets, not one secret")
        ring: List[bytes] = []
        for position, secret in enumerate(secrets, 1):
            if not isinstance(secret, (bytes, bytearray)):
                raise TypeError(f"state key {position} must be bytes, not {type(secret).__name__}")
            if len(secret) < MIN_SECRET_BYTES:
                raise ValueError(f"state key {position} is {len(secret)} bytes; at least {MIN_SECRET_BYTES} "
                                 "are needed")
            if bytes(secret) not in ring:  # a key listed twice verifies once
                ring.append(bytes(secret))
        if not ring:
            raise ValueError("a state key ring needs at least one key")
        self._secrets: Tuple[bytes, ...] = tuple(ring)
        # Derived on first use. No lock: the derivation is idempotent and the assignment atomic, so two threads
        # that race here compute the same keys and one of them wins.
        self._derived: Optional[Tuple[_Key, ...]] = None
        #: Drawn in this process (`generate`) rather than configured: other processes cannot open its states.
        self.ephemeral = ephemeral

    @classmethod
    def generate(cls) -> StateKeys:
        """One fresh random key: states open in this process and in the processes it forks, nowhere else."""
        return cls([os.urandom(MIN_SECRET_BYTES)], ephemeral=True)

    @classmethod
    def from_hex(cls, value: str) -> StateKeys:
        """Parse ``"hex,hex,..."`` (the form of `STATE_KEYS_ENV`), the minting key first.

        Spaces around a key and empty items (a trailing comma) are ignored. Errors name the key's position, never
        its value, so they are safe to log."""
        secrets = []
        for position, item in enumerate((item.strip() for item in value.split(",") if item.strip()), 1):
            try:
                secrets.append(bytes.fromhex(item))
            except ValueError:
                raise ValueError(f"{STATE_KEYS_ENV}: key {position} is not hexadecimal") from None
        if not secrets:
            raise ValueError(f"{STATE_KEYS_ENV} holds no key")
        try:
            return cls(secrets)
        except ValueError as exc:
            raise ValueError(f"{STATE_KEYS_ENV}: {exc}") from None

    @property
    def kids(self) -> Tuple[str, ...]:
        """The key ids, the minting key's first (safe to log: they reveal nothing about the secrets)."""
        return tuple(key.kid for key in self._keys())

    def __len__(self) -> int:
        return len(self._secrets)

    def __repr__(self) -> str:  # never the secrets
        return f"StateKeys({len(self._secrets)} key{'s' if len(self._secrets) != 1 else ''}" \
               f"{', ephemeral' if self.ephemeral else ''})"

    def _keys(self) -> Tuple[_Key, ...]:
        derived = self._derived
        if derived is None:
            derived = self._derived = tuple(_Key(secret) for secret in self._secrets)
        return derived

    def _minting(self) -> _Key:
        return self._keys()[0]

    def _find(self, kid: str) -> Optional[_Key]:
        for key in self._keys():
            if key.kid == kid:
                return key
        return None


# --- digests ----------------------------------------------------------------------------------------------


def canonical_json(value: Any) -> bytes:
    """The one encoding digests and payloads use: sorted keys, no spaces, ASCII only (so a lone surrogate that
    came from JSON still encodes), no NaN. Equal JSON values give equal bytes."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False).encode()


def _b64url(raw: bytes) -> str:
    import base64

    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _unb64url(text: str) -> bytes:
    """Strict base64url without padding: any other character, or a non-canonical last character, is refused (a
    lenient decoder would let two tokens decode to one, or skip characters it does not know)."""
    import base64

    if not text or not _B64URL_ALPHABET.issuperset(text) or len(text) % 4 == 1:
        raise ValueError("not base64url")
    raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if _b64url(raw) != text:
        raise ValueError("not canonical base64url")
    return raw


def _sha256(data: bytes) -> bytes:
    import hashlib

    return hashlib.sha256(data).digest()


def arguments_digest(arguments: Any) -> str:
    """The ``a`` claim: SHA-256 of the canonical arguments, base64url. No arguments and ``{}`` are the same call."""
    return _b64url(_sha256(canonical_json({} if arguments is None else arguments)))


def question_digest(method: str, params: Any) -> str:
    """Pins a question for replay: SHA-256 of the canonical ``{method, params}``, 16 bytes, base64url.

    A key whose digest changed between rounds was asked something else this time: its old answer does not apply."""
    return _b64url(_sha256(canonical_json({"method": method, "params": params}))[:16])


def _principal_digest(key: _Key, principal: str) -> str:
    import hashlib
    import hmac

    return _b64url(hmac.new(key.k_mac, _PRINCIPAL_LABEL + principal.encode("utf-8", "surrogatepass"),
                            hashlib.sha256).digest()[:16])


def _same(sealed: str, expected: str) -> bool:
    """Constant-time equality of two digests (compare_digest takes str only when it is ASCII: bytes always)."""
    import hmac

    return hmac.compare_digest(sealed.encode("utf-8", "surrogatepass"), expected.encode("ascii"))


def _mac(key: _Key, signed_part: str) -> bytes:
    import hashlib
    import hmac

    return hmac.new(key.k_mac, signed_part.encode("ascii"), hashlib.sha256).digest()


# --- sealing and opening ----------------------------------------------------------------------------------


def seal_state(round_state: Dict[str, Any], *, keys: StateKeys, method: str, target: str, arguments: Any,
               audience: str, principal: Optional[str], now: float, ttl: float = DEFAULT_TTL,
               codec: Optional[StateCodec] = None, max_bytes: int = MAX_STATE_BYTES) -> str:
    """Seal ``round_state`` into a ``requestState`` token bound to this request, valid from ``now`` for ``ttl`` s.

    ``round_state`` holds ``r`` (the round counter, an int) and optionally ``asked``, ``answers``, ``memo`` (dicts)
    and ``user`` (any JSON). ``target`` is the tool or prompt name or the resource uri; ``audience`` the server's
    name; ``principal`` who is calling, or None when the request is not authenticated. A ``codec`` replaces the
    HMAC signature (the key ring still derives ``kid`` and ``p``).

    Raises `RPCError` -32603 when the round counter passes `MAX_ROUNDS` or the token passes ``max_bytes``: both
    are the server's fault and must fail loudly rather than be cut short. A malformed round state (a bug in the
    caller) raises ValueError or TypeError."""
    unknown = set(round_state) - set(ROUND_STATE_FIELDS)
    if unknown:
        raise ValueError(f"not round state fields: {sorted(unknown)}")
    rounds = round_state.get("r")
    if type(rounds) is not int or rounds < 0:
        raise ValueError(f"the round counter r must be a non-negative int, not {rounds!r}")
    if rounds > MAX_ROUNDS:
        raise RPCError(INTERNAL_ERROR, f"Too many input rounds: {rounds} (at most {MAX_ROUNDS})")
    if not ttl > 0:
        raise ValueError(f"ttl must be positive, not {ttl!r}")
    key = keys._minting()
    payload: Dict[str, Any] = {
        "v": _FORMAT, "kid": key.kid, "iat": int(now), "exp": int(now + ttl),
        "m": method, "t": target, "a": arguments_digest(arguments), "aud": audience,
        "r": rounds, "asked": round_state.get("asked", {}), "answers": round_state.get("answers", {}),
        "memo": round_state.get("memo", {}),
    }
    for name in ("asked", "answers", "memo"):
        if not isinstance(payload[name], dict):
            raise TypeError(f"round state field {name!r} must be a dict, not {type(payload[name]).__name__}")
    if principal is not None:
        payload["p"] = _principal_digest(key, principal)
    if "user" in round_state:
        payload["user"] = round_state["user"]
    encoded = canonical_json(payload)
    if codec is not None:
        token = codec.seal(encoded)
    else:
        body = _b64url(encoded)
        token = f"{_VERSION}.{body}.{_b64url(_mac(key, f'{_VERSION}.{key.kid}.{body}'))}"
    if len(token) > max_bytes:
        raise RPCError(INTERNAL_ERROR, f"requestState too large: {len(token)} bytes (at most {max_bytes})")
    return token


def open_state(token: Any, *, keys: StateKeys, method: str, target: str, arguments: Any, audience: str,
               principal: Optional[str], now: float, codec: Optional[StateCodec] = None,
               max_bytes: int = MAX_STATE_BYTES) -> Dict[str, Any]:
    """Verify a ``requestState`` against this request and return its round state (``r``, ``asked``, ``answers``,
    ``memo``, and ``user`` when it was sealed with one).

    Raises `InvalidRequestState` (-32602 "Invalid or expired requestState") for any failure: not a string, too
    large, malformed, signed by no key of the ring, expired (at ``exp`` or later), or bound to another method,
    target, arguments, audience or principal. Its ``reason`` is for the log."""
    if not isinstance(token, str):
        raise InvalidRequestState(f"requestState is a {type(token).__name__}, not a string")
    if len(token) > max_bytes:
        raise InvalidRequestState(f"requestState too large: {len(token)} bytes (at most {max_bytes})")
    if codec is not None:
        try:
            encoded = codec.unseal(token)
        except Exception as exc:  # whatever the codec raises is a refusal, not a crash
            raise InvalidRequestState(f"the codec refused it: {type(exc).__name__}: {exc}") from None
        verified_by: Optional[_Key] = None
    else:
        if not token.isascii():  # our tokens are base64url and dots; the MAC is computed over ASCII
            raise InvalidRequestState("not ASCII")
        encoded, verified_by = _verify(token, keys)
    payload = _read_payload(encoded)
    try:
        return _check(payload, verified_by, keys=keys, method=method, target=target, arguments=arguments,
                      audience=audience, principal=principal, now=now)
    except InvalidRequestState:
        raise
    except (ValueError, TypeError, KeyError, RecursionError) as exc:  # a shape no check foresaw: still a refusal
        raise InvalidRequestState(f"malformed: {type(exc).__name__}") from None


def _read_payload(encoded: Any) -> Dict[str, Any]:
    """The payload object, read with the strict reader (`json_text.loads`: no NaN, no 1e400, bounded nesting
    and numbers), from UTF-8 bytes (or the str a codec may return); `InvalidRequestState` for anything else."""
    from .json_text import loads

    try:
        text = encoded.decode("utf-8") if isinstance(encoded, (bytes, bytearray)) else encoded
        if not isinstance(text, str):
            raise TypeError(f"a {type(text).__name__}")
        payload = loads(text)
    except (ValueError, TypeError, RecursionError):  # UnicodeDecodeError and NotPortableJSON are ValueErrors
        raise InvalidRequestState("the payload is not JSON") from None
    if not isinstance(payload, dict):
        raise InvalidRequestState("the payload is not an object")
    return payload


def _verify(token: str, keys: StateKeys) -> Tuple[bytes, _Key]:
    """The payload bytes of an HMAC token and the key that signed it. The signature is checked under each key of
    the ring (a handful) before the payload is even decoded: nothing unauthenticated is parsed."""
    import hmac

    parts = token.split(".")
    if len(parts) != 3:
        raise InvalidRequestState(f"not three dot-separated parts but {len(parts)}")
    version, body, signature = parts
    if version != _VERSION:
        raise InvalidRequestState(f"unknown token version {version[:16]!r}")
    try:
        mac = _unb64url(signature)
    except ValueError:
        raise InvalidRequestState("the signature is not base64url") from None
    if len(mac) != _MAC_BYTES:
        raise InvalidRequestState(f"the signature is {len(mac)} bytes, not {_MAC_BYTES}")
    for key in keys._keys():
        if hmac.compare_digest(mac, _mac(key, f"{_VERSION}.{key.kid}.{body}")):
            break
    else:
        raise InvalidRequestState("the signature verifies under no key of the ring (tampered, a foreign key, or "
                                  "a key rotated out)")
    try:
        return _unb64url(body), key
    except ValueError:  # only a key holder could have signed it: a bug, but still a refusal
        raise InvalidRequestState("the payload is not base64url") from None


def _check(payload: Dict[str, Any], verified_by: Optional[_Key], *, keys: StateKeys, method: str, target: str,
           arguments: Any, audience: str, principal: Optional[str], now: float) -> Dict[str, Any]:
    if type(payload.get("v")) is not int or payload.get("v") != _FORMAT:  # not True, which == 1
        raise InvalidRequestState(f"payload format {payload.get('v')!r}, not {_FORMAT}")
    kid = payload.get("kid")
    key = keys._find(kid) if isinstance(kid, str) else None
    if key is None or (verified_by is not None and key is not verified_by):
        raise InvalidRequestState(f"key id {kid!r} is not the ring's signing key")
    exp = payload.get("exp")
    if type(exp) is not int or type(payload.get("iat")) is not int:
        raise InvalidRequestState("iat or exp is missing")
    if now >= exp:
        raise InvalidRequestState(f"expired {now - exp:.0f} s ago")
    for claim, expected in (("m", method), ("t", target), ("aud", audience)):
        if payload.get(claim) != expected:
            raise InvalidRequestState(f"bound to {claim}={payload.get(claim)!r}, not {expected!r}")
    sealed_arguments = payload.get("a")
    if not isinstance(sealed_arguments, str) or not _same(sealed_arguments, arguments_digest(arguments)):
        raise InvalidRequestState("bound to other arguments")
    sealed_principal = payload.get("p")
    if principal is None:
        if sealed_principal is not None:
            raise InvalidRequestState("bound to a principal, and the request is not authenticated")
    elif not isinstance(sealed_principal, str):
        raise InvalidRequestState("not bound to a principal, and the request is authenticated")
    elif not _same(sealed_principal, _principal_digest(key, principal)):
        raise InvalidRequestState("bound to another principal")
    rounds = payload.get("r")
    if type(rounds) is not int or not 0 <= rounds <= MAX_ROUNDS:
        raise InvalidRequestState(f"round counter {rounds!r} out of range")
    round_state: Dict[str, Any] = {"r": rounds}
    for name in ("asked", "answers", "memo"):
        value = payload.get(name)
        if not isinstance(value, dict):
            raise InvalidRequestState(f"round state field {name!r} is not an object")
        round_state[name] = value
    if "user" in payload:
        round_state["user"] = payload["user"]
    unknown = set(payload) - set(_CLAIMS) - set(ROUND_STATE_FIELDS)
    if unknown:
        raise InvalidRequestState(f"unknown fields {sorted(unknown)}")
    return round_state
