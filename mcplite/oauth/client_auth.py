"""How a client proves who it is at a token endpoint (RFC 6749 §2.3, OAuth 2.1 §2.4, RFC 7523 §2.2):
``client_secret_basic``, ``client_secret_post``, ``private_key_jwt`` or ``none`` (a public client)."""

import base64
import secrets
from typing import Dict, List, Optional, Sequence, Tuple
from urllib.parse import quote

from ..errors import AuthError
from . import jose
from .records import ClientRegistration

__all__ = [
    "JWT_BEARER_ASSERTION_TYPE", "choose_token_endpoint_auth_method", "registration_auth_method",
    "basic_credentials", "client_assertion", "client_authentication",
]

JWT_BEARER_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
_ASSERTION_LIFETIME = 300

#: Form fields and headers to add to a token request.
Credentials = Tuple[Dict[str, str], Dict[str, str]]


def choose_token_endpoint_auth_method(
    registered: Optional[str], supported: Optional[Sequence[str]], *, has_secret: bool, has_private_key: bool
) -> str:
    """How to authenticate at the token endpoint.

    The method fixed at registration wins. Otherwise the first of these that the AS supports (its
    ``token_endpoint_auth_methods_supported``; RFC 8414 §2 default ``client_secret_basic``):
    ``private_key_jwt`` (with a key), ``client_secret_basic`` then ``client_secret_post`` (with a secret),
    ``none``.
    """
    if registered:
        return registered
    preferred: List[str] = []
    if has_private_key:
        preferred.append("private_key_jwt")
    if has_secret:
        preferred += ["client_secret_basic", "client_secret_post"]
    preferred.append("none")
    offered = supported if supported else ["client_secret_basic"]
    for method in preferred:
        if method in offered:
            return method
    return preferred[0]


def registration_auth_method(supported: Optional[Sequence[str]], has_private_key: bool) -> str:
    """What to ask for in dynamic client registration.

    A client on a user's machine cannot keep a secret, so it registers as a public client (``none``)
    unless it has a key, or the AS lists methods and ``none`` is not among them.
    """
    preferred = (["private_key_jwt"] if has_private_key else []) + [
        "none", "client_secret_basic", "client_secret_post",
    ]
    if not supported:
        return preferred[0]
    for method in preferred:
        if method in supported:
            return method
    return "client_secret_basic"


def basic_credentials(client_id: str, secret: str) -> str:
    """The ``Authorization`` value for ``client_secret_basic``.

    RFC 6749 §2.3.1: both parts are form-urlencoded before base64. ``quote(safe="")`` reads back right
    with both form decoding and plain percent decoding.
    """
    raw = f"{quote(client_id, safe='')}:{quote(secret, safe='')}"
    return "Basic " + base64.b64encode(raw.encode("utf-8")).decode("ascii")


def client_assertion(client_id: str, audience: str, key: jose.PrivateKey, *, now: float) -> str:
    """A ``private_key_jwt`` client assertion (RFC 7523 §3): ``iss`` = ``sub`` = client id, a unique
    ``jti``, five minutes of validity. ``aud`` is the AS issuer identifier, as RFC 7523bis requires (the
    token endpoint URL of RFC 7523 allowed audience-injection attacks)."""
    issued = int(now)
    claims = {
        "iss": client_id, "sub": client_id, "aud": audience, "iat": issued,
        "exp": issued + _ASSERTION_LIFETIME, "jti": secrets.token_urlsafe(16),
    }
    return jose.jwt_encode(claims, key)


def client_authentication(
    client: ClientRegistration, *, supported: Optional[Sequence[str]], issuer: str,
    private_key: Optional[jose.PrivateKey], now: float,
) -> Credentials:
    """The form fields and headers that authenticate ``client`` at a token endpoint.

    Args:
        client: the client, with the method it registered (if any).
        supported: the AS's ``token_endpoint_auth_methods_supported``.
        issuer: the AS issuer, the audience of a ``private_key_jwt`` assertion.
        private_key: the key for ``private_key_jwt``.
        now: the time, for the assertion.

    Raises:
        AuthError: the method needs a secret or key that is missing, or is unknown.
    """
    method = choose_token_endpoint_auth_method(
        client.token_endpoint_auth_method, supported,
        has_secret=client.client_secret is not None, has_private_key=private_key is not None,
    )
    if method in ("client_secret_basic", "client_secret_post") and client.client_secret is None:
        raise AuthError(f"token endpoint authentication {method} needs a client secret")
    if method == "client_secret_basic":
        return {}, {"Authorization": basic_credentials(client.client_id, client.client_secret or "")}
    if method == "client_secret_post":
        return {"client_id": client.client_id, "client_secret": client.client_secret or ""}, {}
    if method == "private_key_jwt":
        if private_key is None:
            raise AuthError("token endpoint authentication private_key_jwt needs private_key=")
        return {
            "client_id": client.client_id, "client_assertion_type": JWT_BEARER_ASSERTION_TYPE,
            "client_assertion": client_assertion(client.client_id, issuer, private_key, now=now),
        }, {}
    if method != "none":
        raise AuthError(f"unsupported token endpoint authentication method {method!r}")
    return {"client_id": client.client_id}, {}
