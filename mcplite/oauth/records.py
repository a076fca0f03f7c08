"""What the flow keeps: tokens, client registrations, and the authorization redirect's parameters.

Their ``repr`` never shows a token, secret or code, so logging one is safe.
"""

from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional
from urllib.parse import parse_qsl, urlsplit

from ..errors import AuthError
from . import jose

__all__ = ["Tokens", "ClientRegistration", "AuthorizationResponse"]

#: The authorization response's own parameters (RFC 6749 §4.1.2 and §4.1.2.1, RFC 9207 §2).
_RESPONSE_PARAMETERS = frozenset(("code", "state", "iss", "error", "error_description", "error_uri"))

_REFRESH_MARGIN = 30.0  # seconds before expiry at which a token counts as expired


def _clip(value: Any, limit: int = 40) -> Any:
    return value[:limit] + "..." if isinstance(value, str) and len(value) > limit else value


#: The largest number of seconds taken as a lifetime or a time: 2**53, past which a double is not exact (and
#: far past any real lifetime: 285 million years).
_MAX_SECONDS = 2 ** 53


def _expiry(expires_in: Any, now: float) -> Optional[float]:
    if isinstance(expires_in, str) and expires_in.isdigit() and len(expires_in) <= 16:
        expires_in = int(expires_in)  # some servers send the lifetime as a string
    seconds = _seconds(expires_in, "the token response's expires_in")
    return None if seconds is None else now + seconds


def _seconds(value: Any, what: str) -> Optional[float]:
    """A number of seconds from a server's JSON: None when it is not a number at all (ignored, as before);
    `AuthError` when it is one no clock can hold (negative, or beyond 2**53), rather than an OverflowError later.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if not 0 <= value <= _MAX_SECONDS:
        text = repr(value)  # (at most 4300 digits: json_text's bound)
        text = text if len(text) <= 40 else f"a number of {len(text)} digits"
        raise AuthError(f"{what} is out of range: {text} (0 to 2**53 seconds)")
    return float(value)


def _token(data: Mapping[str, Any], name: str, what: str) -> Optional[str]:
    """A token-like member (RFC 6749 A.1-A.13: visible ASCII, ``%x20-7E``): it goes into a header or a form as it
    is. None when absent or not a string (ignored, as before); `AuthError` when it holds anything else (a line
    end would split the header, a lone surrogate cannot be encoded)."""
    value = data.get(name)
    if not isinstance(value, str):
        return None
    if not (value.isascii() and value.isprintable()):
        raise AuthError(f"{what}'s {name} holds characters a token cannot have (RFC 6749: visible ASCII only)")
    return value


@dataclass
class Tokens:
    """An access token and what came with it. ``expires_at`` and ``issued_at`` are `time.time()` values.

    A DPoP-bound token (``token_type`` ``"DPoP"``, RFC 9449) keeps the private key it is bound to as a JWK
    in ``dpop_jwk``: the key lives and dies with the tokens, and is stored with them.
    """

    access_token: str = field(repr=False)
    token_type: str = "Bearer"
    refresh_token: Optional[str] = field(default=None, repr=False)
    scope: Optional[str] = None
    expires_at: Optional[float] = None
    issued_at: float = 0.0
    dpop_jwk: Optional[Dict[str, str]] = field(default=None, repr=False)
    # The key read from dpop_jwk once (reading one costs a point multiplication); not part of the value.
    _dpop_key: Optional[jose.ECPrivateKey] = field(default=None, init=False, repr=False, compare=False)

    @property
    def is_dpop(self) -> bool:
        """Whether the token is DPoP-bound: sent as ``Authorization: DPoP`` with a proof."""
        return self.dpop_jwk is not None

    @property
    def dpop_key(self) -> Optional[jose.ECPrivateKey]:
        """The private key a DPoP-bound token is bound to (None for a bearer token).

        Raises:
            AuthError: a stored key that cannot be read.
        """
        if self.dpop_jwk is None:
            return None
        if self._dpop_key is None:
            try:
                key = jose.load_private_key(self.dpop_jwk)
            except jose.JWTError as exc:
                raise AuthError(f"the stored DPoP key cannot be read: {exc}") from None
            if not isinstance(key, jose.ECPrivateKey):
                raise AuthError("the stored DPoP key is not a P-256 key")
            self._dpop_key = key
        return self._dpop_key

    @classmethod
    def from_token_response(
        cls, data: Mapping[str, Any], *, now: float, requested_scope: Optional[str] = None,
        previous: Optional["Tokens"] = None, dpop_key: Optional[jose.ECPrivateKey] = None,
    ) -> "Tokens":
        """Tokens from a successful token endpoint response (RFC 6749 §5.1).

        Args:
            data: the response JSON.
            now: the time the response arrived.
            requested_scope: the scope asked for; RFC 6749 §5.1 says an omitted ``scope`` means this one.
            previous: the tokens being refreshed. Their refresh token is kept unless a new one was issued
                (OAuth 2.1 §4.3.1: a rotated refresh token replaces the old one).
            dpop_key: the key whose proof went with the request. A ``DPoP`` token is bound to it; a
                ``Bearer`` one means the server chose not to bind (RFC 9449 §5), and the key is dropped.

        Raises:
            AuthError: no ``access_token``; a ``DPoP`` token when no proof was sent; another token type.
        """
        what = "the token response"
        access_token = _token(data, "access_token", what)
        if not access_token:
            raise AuthError("the token response has no access_token")
        token_type = data.get("token_type", "Bearer")
        kind = token_type.lower() if isinstance(token_type, str) else None
        if kind == "dpop" and dpop_key is None:
            raise AuthError("the token response is a DPoP token, and no DPoP proof was sent")
        if kind not in ("bearer", "dpop"):
            raise AuthError(f"unsupported token type {_clip(token_type)!r} (only Bearer and DPoP)")
        refresh_token = _token(data, "refresh_token", what)
        scope = _token(data, "scope", what)
        tokens = cls(
            access_token=access_token,
            token_type="DPoP" if kind == "dpop" else "Bearer",
            refresh_token=refresh_token if isinstance(refresh_token, str) else (
                previous.refresh_token if previous else None),
            scope=scope if isinstance(scope, str) else (previous.scope if previous else requested_scope),
            expires_at=_expiry(data.get("expires_in"), now),
            issued_at=now,
            dpop_jwk=dpop_key.to_jwk() if kind == "dpop" and dpop_key is not None else None,
        )
        if tokens.dpop_jwk is not None:
            tokens._dpop_key = dpop_key
        return tokens

    def needs_refresh(self, now: float) -> bool:
        """True when the token has expired or is about to (within 30 s, or a quarter of a short lifetime)."""
        if self.expires_at is None:
            return False
        margin = min(_REFRESH_MARGIN, (self.expires_at - self.issued_at) / 4)
        return now >= self.expires_at - margin

    def to_json(self) -> Dict[str, Any]:
        """A JSON object for storage (`FileTokenStorage`); `from_json` reads it back."""
        return {
            "access_token": self.access_token, "token_type": self.token_type,
            "refresh_token": self.refresh_token, "scope": self.scope,
            "expires_at": self.expires_at, "issued_at": self.issued_at, "dpop_jwk": self.dpop_jwk,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "Tokens":
        """Tokens from `to_json`'s output."""
        return cls(
            access_token=data["access_token"], token_type=data.get("token_type", "Bearer"),
            refresh_token=data.get("refresh_token"), scope=data.get("scope"),
            expires_at=data.get("expires_at"), issued_at=data.get("issued_at", 0.0),
            dpop_jwk=data.get("dpop_jwk"),
        )


@dataclass
class ClientRegistration:
    """An OAuth client as an authorization server knows it. Valid with that server only (SEP-2352)."""

    client_id: str
    client_secret: Optional[str] = field(default=None, repr=False)
    token_endpoint_auth_method: Optional[str] = None
    redirect_uris: List[str] = field(default_factory=list)
    client_secret_expires_at: Optional[float] = None  # RFC 7591 §3.2.1: 0 or absent means never

    def secret_expired(self, now: float) -> bool:
        """True when the server gave the secret an expiry time and ``now`` is past it."""
        return bool(self.client_secret_expires_at) and now >= float(self.client_secret_expires_at or 0)

    @classmethod
    def from_registration_response(
        cls, data: Mapping[str, Any], *, requested_method: str, redirect_uri: str
    ) -> "ClientRegistration":
        """The client from an RFC 7591 §3.2.1 registration response.

        Raises:
            AuthError: no ``client_id``.
        """
        what = "the registration response"
        client_id = _token(data, "client_id", what)
        if not client_id:
            raise AuthError("the registration response has no client_id")
        secret = _token(data, "client_secret", what)
        method = data.get("token_endpoint_auth_method")
        uris = data.get("redirect_uris")
        expires = _seconds(data.get("client_secret_expires_at"), "the registration response's client_secret_expires_at")
        if not isinstance(method, str):
            # The server did not say. What we asked for, unless that needs a secret we were not given.
            needs_secret = requested_method in ("client_secret_basic", "client_secret_post")
            method = "none" if needs_secret and secret is None else requested_method
        return cls(
            client_id=client_id,
            client_secret=secret,
            token_endpoint_auth_method=method,
            redirect_uris=[u for u in uris if isinstance(u, str)] if isinstance(uris, list) else [redirect_uri],
            client_secret_expires_at=expires,
        )

    def to_json(self) -> Dict[str, Any]:
        """A JSON object for storage (`FileTokenStorage`); `from_json` reads it back."""
        return {
            "client_id": self.client_id, "client_secret": self.client_secret,
            "token_endpoint_auth_method": self.token_endpoint_auth_method,
            "redirect_uris": list(self.redirect_uris), "client_secret_expires_at": self.client_secret_expires_at,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "ClientRegistration":
        """A registration from `to_json`'s output."""
        return cls(
            client_id=data["client_id"], client_secret=data.get("client_secret"),
            token_endpoint_auth_method=data.get("token_endpoint_auth_method"),
            redirect_uris=list(data.get("redirect_uris") or []),
            client_secret_expires_at=data.get("client_secret_expires_at"),
        )


@dataclass(frozen=True)
class AuthorizationResponse:
    """The parameters of the redirect that ends the user's authorization step (RFC 6749 §4.1.2)."""

    code: Optional[str] = field(default=None, repr=False)
    state: Optional[str] = None
    iss: Optional[str] = None
    error: Optional[str] = None
    error_description: Optional[str] = None

    @classmethod
    def from_redirect_url(cls, url: str) -> "AuthorizationResponse":
        """Read the query of the redirect URL (the loopback request, or a 302 ``Location``).

        A parameter that is present but empty (``iss=``) stays present, so that the RFC 9207 check compares
        it rather than taking it for absent.

        Raises:
            AuthError: a response parameter appears more than once (OAuth 2.1 §3.1: they MUST NOT), which
                would leave it to the parser which ``iss`` or ``state`` is checked.
        """
        pairs = parse_qsl(urlsplit(url).query, keep_blank_values=True)
        params: Dict[str, str] = {}
        for name, value in pairs:
            if name in params and name in _RESPONSE_PARAMETERS:
                raise AuthError(f"the authorization response repeats the {name} parameter; refusing it")
            params[name] = value
        return cls(
            code=params.get("code"), state=params.get("state"), iss=params.get("iss"),
            error=params.get("error"), error_description=params.get("error_description"),
        )
