"""Proof Key for Code Exchange (RFC 7636), S256 only: the code verifier stays with the client, its hash
goes in the authorization request, so a stolen authorization code is useless to whoever stole it."""

import hashlib
import secrets
from typing import Tuple

from .jose import b64url_encode

__all__ = ["pkce_challenge", "pkce_pair"]

_PKCE_VERIFIER_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def pkce_challenge(verifier: str) -> str:
    """The S256 code challenge of a verifier: BASE64URL(SHA256(ASCII(verifier))) (RFC 7636 §4.2).

    Raises:
        ValueError: a verifier that is not 43-128 unreserved characters (RFC 7636 §4.1).
    """
    if not 43 <= len(verifier) <= 128 or not set(verifier) <= _PKCE_VERIFIER_CHARS:
        raise ValueError("a PKCE verifier is 43 to 128 unreserved characters")
    return b64url_encode(hashlib.sha256(verifier.encode("ascii")).digest())


def pkce_pair() -> Tuple[str, str]:
    """A fresh ``(code_verifier, code_challenge)``: 64 random base64url characters and their S256 challenge."""
    verifier = secrets.token_urlsafe(48)
    return verifier, pkce_challenge(verifier)
