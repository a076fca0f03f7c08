"""OAuth 2.1 for MCP clients: discovery, registration, PKCE sign-in, refresh and step-up, as an I/O-free flow.

The flow never touches the network itself. `BaseOAuth.auth_flow` is a generator (httpx-style): it yields
an `HTTPRequest`, is sent the `HTTPResponse`, and so on, until the caller's own request has had its final
answer. The HTTP transport drives it over its connections with `drive`; tests drive it with canned
responses. The one step that is I/O by nature, the user's consent in a browser, is the ``authorize``
callback of `OAuth`.

Three ways to get a token share that machinery:

- `OAuth`: the authorization code grant with PKCE, for a user at a browser (the MCP authorization spec);
- `ClientCredentials`: the client credentials grant for machines (extension ``oauth-client-credentials``);
- `CrossAppAccess`: enterprise-managed authorization (SEP-990): an RFC 8693 token exchange of the user's
  ID token for an ID-JAG at the enterprise IdP, then the RFC 7523 JWT bearer grant at the MCP server's AS.

Where the protocol revisions differ (VERSIONS.md §3), the choice is made in the "Spec rules" section
below, in small functions named after the rule, so each can be checked against the spec text.
"""

import abc
import base64
import hashlib
import http.client
import json
import logging
import os
import secrets
import socketserver
import sys
import tempfile
import threading
import time
import webbrowser
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import (
    Any, Callable, Dict, Generator, Iterable, List, Mapping, NamedTuple, Optional, Sequence, Tuple, Union,
)
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

from . import jose
from .errors import AuthError, TransportError

__all__ = [
    "HTTPRequest", "HTTPResponse", "drive", "send_with_http_client",
    "DEFAULT_PROTOCOL_VERSION", "REVISION_RULES", "rule_applies",
    "canonical_resource_uri", "resource_matches", "protected_resource_metadata_urls",
    "authorization_server_metadata_urls", "legacy_metadata_url", "legacy_default_endpoints",
    "check_protected_resource_metadata", "check_metadata_issuer", "check_pkce_support",
    "check_authorization_response", "check_authorization_response_issuer", "is_insufficient_scope",
    "select_scopes",
    "add_step_up_scopes", "apply_offline_access", "application_type_for", "choose_token_endpoint_auth_method",
    "BearerChallenge", "parse_bearer_challenge", "pkce_pair", "pkce_challenge", "client_assertion",
    "Tokens", "ClientRegistration", "AuthorizationResponse",
    "TokenStorage", "MemoryTokenStorage", "FileTokenStorage",
    "LoopbackRedirectCatcher", "BrowserAuthorizer",
    "BaseOAuth", "OAuth", "ClientCredentials", "CrossAppAccess",
    "JWT_BEARER_ASSERTION_TYPE", "TOKEN_EXCHANGE_GRANT", "JWT_BEARER_GRANT", "ID_TOKEN_TYPE", "ID_JAG_TOKEN_TYPE",
]

_log = logging.getLogger(__name__)


# ======================================================================================================
# Wire types and drivers
# ======================================================================================================

class HTTPRequest(NamedTuple):
    """One HTTP request as an auth flow yields it."""

    method: str
    url: str
    headers: Dict[str, str]
    body: Optional[bytes] = None


class HTTPResponse(NamedTuple):
    """One HTTP response. ``headers`` has lower-case keys: look names up in lower case."""

    status: int
    headers: Mapping[str, str]
    body: bytes = b""


Flow = Generator[HTTPRequest, HTTPResponse, None]


def drive(flow: Flow, send: Callable[[HTTPRequest], HTTPResponse]) -> HTTPResponse:
    """Run an auth flow to its end, sending each request it yields with ``send``.

    Args:
        flow: the generator from `BaseOAuth.auth_flow`.
        send: performs one HTTP exchange (for example `send_with_http_client` with a timeout bound).

    Returns:
        The response to the last request, which is the caller's own request with credentials.

    Raises:
        AuthError: the flow could not obtain a token the server accepts.
        Whatever ``send`` raises (the flow is closed first, which releases its lock).
    """
    try:
        request = next(flow)
        while True:
            response = send(request)
            try:
                request = flow.send(response)
            except StopIteration:
                return response
    finally:
        flow.close()


def send_with_http_client(
    request: HTTPRequest, *, timeout: float, ssl_context: Optional[Any] = None
) -> HTTPResponse:
    """Perform one exchange with `http.client`. Redirects are returned, never followed.

    Not following redirects matters: the authorization endpoint answers with a 302 whose ``Location``
    carries the code, and headless flows must read it rather than fetch it.

    Args:
        request: the request to send.
        timeout: socket timeout in seconds for connecting and for every read.
        ssl_context: an `ssl.SSLContext` for https URLs (the default context when None).

    Raises:
        TransportError: an unsupported scheme, or the connection failed or timed out.
    """
    parts = urlsplit(request.url)
    host = parts.hostname or ""
    connection: http.client.HTTPConnection
    if parts.scheme == "https":
        connection = http.client.HTTPSConnection(host, parts.port, timeout=timeout, context=ssl_context)
    elif parts.scheme == "http":
        connection = http.client.HTTPConnection(host, parts.port, timeout=timeout)
    else:
        raise TransportError(f"unsupported URL scheme {parts.scheme!r}")
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        connection.request(request.method, target, body=request.body, headers=request.headers)
        raw = connection.getresponse()
        body = raw.read()
    except (OSError, http.client.HTTPException) as exc:
        raise TransportError(f"{request.method} {_without_query(request.url)} failed: {exc}") from exc
    finally:
        connection.close()
    headers: Dict[str, str] = {}
    for name, value in raw.getheaders():
        key = name.lower()
        headers[key] = f"{headers[key]}, {value}" if key in headers else value
    return HTTPResponse(raw.status, headers, body)


def _without_query(url: str) -> str:
    # Query strings can carry codes and state; error messages get the URL without them.
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


# ======================================================================================================
# Spec rules: which check applies in which revision (VERSIONS.md §3)
# ======================================================================================================

DEFAULT_PROTOCOL_VERSION = "2025-11-25"

#: The first revision in which a client-side rule is a MUST. A rule is enforced when the revision the
#: client speaks is that one or later. Discovery is deliberately not in this table: it happens before the
#: revision is negotiated (the first request is what gets the 401), so it always tries the URLs of every
#: revision in the order of VERSIONS.md §3 "Discovery URL order for a multi-version client".
#:
#: Enforced in every revision, because the underlying RFC already requires them (MCP 2026-07-28 restates
#: the first two as MUST): the metadata ``issuer`` equals the issuer the URL was built from (RFC 8414
#: §3.3), the RFC 9207 ``iss`` table, ``state`` (OAuth 2.1 §4.1.2), PKCE with S256 (MCP 2025-03-26 on).
REVISION_RULES: Dict[str, str] = {
    # RFC 8707 `resource` on the authorization and token requests (2025-06-18 authorization.mdx). It is
    # sent whenever protected resource metadata was found; this rule decides the 2025-03-26 fallback.
    "resource_parameter": "2025-06-18",
    # Refuse to authorize when AS metadata lacks `code_challenge_methods_supported` (2025-11-25).
    "pkce_methods_advertised": "2025-11-25",
}


def rule_applies(rule: str, protocol_version: str) -> bool:
    """True when ``rule`` (a `REVISION_RULES` key) binds a client speaking ``protocol_version``."""
    return protocol_version >= REVISION_RULES[rule]  # revision ids are ISO dates: they sort as strings


_DEFAULT_PORTS = {"http": 80, "https": 443}
_LOOPBACK_HOSTS = ("127.0.0.1", "::1", "localhost")


def canonical_resource_uri(url: str) -> str:
    """The canonical URI of an MCP server (2025-06-18 authorization.mdx, RFC 8707).

    Lower-case scheme and host, no default port, no fragment, and no trailing slash on an empty path.
    """
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    port = parts.port
    netloc = host if port is None or port == _DEFAULT_PORTS.get(scheme) else f"{host}:{port}"
    path = "" if parts.path == "/" else parts.path
    return urlunsplit((scheme, netloc, path, parts.query, ""))


def _origin(url: str) -> str:
    parts = urlsplit(canonical_resource_uri(url))
    return f"{parts.scheme}://{parts.netloc}"


def _path(url: str) -> str:
    # RFC 8414 §3.1 / RFC 9728 §3.1: a terminating "/" is removed before inserting the well-known segment.
    return urlsplit(url).path.rstrip("/")


def resource_matches(metadata_resource: str, server_url: str) -> bool:
    """True when a protected resource metadata ``resource`` names this MCP server.

    Same origin, and the metadata's path is the server's path or one of its parents (segment-wise), so a
    resource of ``https://host`` covers ``https://host/mcp`` but ``https://host/mc`` does not.
    """
    if _origin(metadata_resource) != _origin(server_url):
        return False
    prefix = _path(metadata_resource)
    path = _path(server_url)
    return path == prefix or path.startswith(prefix + "/")


def protected_resource_metadata_urls(server_url: str, challenge_url: Optional[str] = None) -> List[str]:
    """Where to look for RFC 9728 protected resource metadata, in order.

    1. ``resource_metadata`` from the 401's ``WWW-Authenticate`` (2025-06-18 on);
    2. the path-specific well-known URL, when the server URL has a path (2025-11-25 on);
    3. the root well-known URL (2025-11-25 on).
    """
    origin, path = _origin(server_url), _path(server_url)
    candidates = [challenge_url] if challenge_url else []
    if path:
        candidates.append(f"{origin}/.well-known/oauth-protected-resource{path}")
    candidates.append(f"{origin}/.well-known/oauth-protected-resource")
    return _unique(candidates)


def authorization_server_metadata_urls(issuer: str) -> List[str]:
    """Where to look for an authorization server's metadata, in order (2025-11-25 authorization.mdx).

    For an issuer with a path, ``https://as/tenant``: the RFC 8414 URL with the path appended after the
    well-known segment, then OpenID Connect Discovery the same way, then OIDC with the well-known segment
    appended to the issuer. Without a path: RFC 8414 then OIDC. (2025-06-18 defines only the first URL;
    trying the others costs a 404 on such servers.)
    """
    origin, path = _origin(issuer), _path(issuer)
    if path:
        return [
            f"{origin}/.well-known/oauth-authorization-server{path}",
            f"{origin}/.well-known/openid-configuration{path}",
            f"{origin}{path}/.well-known/openid-configuration",
        ]
    return [f"{origin}/.well-known/oauth-authorization-server", f"{origin}/.well-known/openid-configuration"]


def legacy_metadata_url(server_url: str) -> str:
    """2025-03-26 fallback when a server has no protected resource metadata: RFC 8414 metadata at the
    *authorization base URL*, which is the MCP URL with its path discarded."""
    return f"{_origin(server_url)}/.well-known/oauth-authorization-server"


def legacy_default_endpoints(server_url: str) -> Dict[str, str]:
    """2025-03-26 fallback when that metadata is 404 too: default endpoints at the authorization base URL.

    Returned as metadata, with the base URL as ``issuer``.
    """
    base = _origin(server_url)
    return {
        "issuer": base,
        "authorization_endpoint": f"{base}/authorize",
        "token_endpoint": f"{base}/token",
        "registration_endpoint": f"{base}/register",
    }


def check_protected_resource_metadata(document: Mapping[str, Any], server_url: str) -> None:
    """Refuse protected resource metadata that is not about this server or names no authorization server.

    Raises:
        AuthError: ``resource`` missing or not matching the server (RFC 9728 §3.3, RFC 8707), or an empty
        ``authorization_servers`` (2025-06-18: MUST list at least one).
    """
    resource = document.get("resource")
    if not isinstance(resource, str) or not resource_matches(resource, server_url):
        raise AuthError(
            f"protected resource metadata is for {resource!r}, not {canonical_resource_uri(server_url)}; "
            "refusing to use it"
        )
    servers = document.get("authorization_servers")
    if not isinstance(servers, list) or not servers or not all(isinstance(s, str) for s in servers):
        raise AuthError("protected resource metadata lists no authorization_servers")


def check_metadata_issuer(metadata: Mapping[str, Any], issuer: str) -> None:
    """The metadata ``issuer`` must be identical to the issuer its URL was built from (RFC 8414 §3.3; MCP
    2026-07-28 authorization-server-discovery.mdx). Otherwise another server could pose as this one.

    Raises:
        AuthError: on any difference (no normalization).
    """
    if metadata.get("issuer") != issuer:
        raise AuthError(
            f"authorization server metadata has issuer {metadata.get('issuer')!r}, expected {issuer!r}; "
            "refusing to use it"
        )


def check_pkce_support(metadata: Mapping[str, Any], protocol_version: str) -> None:
    """PKCE with S256 only. From 2025-11-25 the metadata MUST advertise it; earlier revisions tolerate a
    metadata document that is silent (PKCE is still sent: 2025-03-26 makes it REQUIRED for every AS).

    Raises:
        AuthError: ``code_challenge_methods_supported`` lacks S256, or is absent under 2025-11-25 or later.
    """
    methods = metadata.get("code_challenge_methods_supported")
    if methods is None:
        if rule_applies("pkce_methods_advertised", protocol_version):
            raise AuthError(
                "the authorization server does not advertise code_challenge_methods_supported, so PKCE "
                "cannot be relied on; refusing to authorize"
            )
        return
    if not isinstance(methods, list) or "S256" not in methods:
        raise AuthError("the authorization server does not support PKCE with S256; refusing to authorize")


def check_authorization_response_issuer(iss: Optional[str], issuer: str, advertised: bool) -> None:
    """RFC 9207 ``iss`` in the authorization response (MCP 2026-07-28, SEP-2468), for success and error
    responses alike:

    ==================  ================  =======================================
    metadata flag       ``iss`` present   action
    ==================  ================  =======================================
    true                yes               compare (exact string, no normalization)
    true                no                reject
    false / absent      yes               compare
    false / absent      no                proceed
    ==================  ================  =======================================

    Args:
        iss: the ``iss`` query parameter of the redirect, or None.
        issuer: the issuer recorded when the authorization request was made.
        advertised: ``authorization_response_iss_parameter_supported`` is true in the metadata.

    Raises:
        AuthError: per the table (a mix-up attack, or a server that broke its promise).
    """
    if iss is None:
        if advertised:
            raise AuthError("the authorization response lacks the iss parameter its server advertises")
        return
    if iss != issuer:
        raise AuthError(f"the authorization response comes from issuer {iss!r}, expected {issuer!r}")


def is_insufficient_scope(status: int, challenge: Optional["BearerChallenge"]) -> bool:
    """Whether a response asks for step-up authorization: 403 with a Bearer challenge naming scopes.

    RFC 6750 §3.1 gives such a challenge ``error="insufficient_scope"``. Some servers send only
    ``scope=``; on a 403 that can mean nothing else, so it counts too.
    """
    if status != 403 or challenge is None:
        return False
    return challenge.error == "insufficient_scope" or (challenge.error is None and bool(challenge.scope))


def select_scopes(
    challenged: Optional[Sequence[str]], configured: Optional[Sequence[str]],
    resource_supported: Optional[Sequence[str]],
) -> List[str]:
    """The scopes to request after a 401 (2025-11-25, SEP-835), first non-empty of:

    1. ``scope`` from the ``WWW-Authenticate`` challenge (authoritative);
    2. the scopes given to the auth object (``scopes=``);
    3. all of the protected resource metadata's ``scopes_supported``;

    otherwise none, and the ``scope`` parameter is omitted.
    """
    for candidate in (challenged, configured, resource_supported):
        if candidate:
            return _unique(candidate)
    return []


def add_step_up_scopes(previous: Sequence[str], challenged: Sequence[str]) -> List[str]:
    """Step-up after 403 ``insufficient_scope``: the union of what was requested before and what the
    challenge asks for (2026-07-28), so that stepping up never loses a scope."""
    return _unique(list(previous) + list(challenged))


def apply_offline_access(
    scopes: Sequence[str], authorization_server_supported: Optional[Sequence[str]], wanted: bool
) -> List[str]:
    """``offline_access`` only when the AS lists it in ``scopes_supported`` (SEP-2207).

    It is removed otherwise (even when a challenge named it), and added when listed, ``wanted`` (the
    client keeps refresh tokens) and other scopes are requested: asking for ``offline_access`` alone
    could get a token without the server's default scopes.
    """
    listed = "offline_access" in (authorization_server_supported or ())
    result = [scope for scope in scopes if scope != "offline_access" or listed]
    if listed and wanted and result and "offline_access" not in result:
        result.append("offline_access")
    return result


def application_type_for(redirect_uri: str) -> str:
    """DCR ``application_type`` (2026-07-28, SEP-837): ``native`` for loopback or private-scheme redirect
    URIs, ``web`` for remote ones. Sent in every revision: older servers ignore unknown metadata (RFC 7591
    §2)."""
    parts = urlsplit(redirect_uri)
    if parts.scheme not in ("http", "https") or (parts.hostname or "").lower() in _LOOPBACK_HOSTS:
        return "native"
    return "web"


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


def _registration_auth_method(supported: Optional[Sequence[str]], has_private_key: bool) -> str:
    # What to ask for in dynamic registration. A client on a user's machine cannot keep a secret, so it
    # registers as a public client ("none") unless the AS lists methods and "none" is not among them.
    preferred = (["private_key_jwt"] if has_private_key else []) + [
        "none", "client_secret_basic", "client_secret_post",
    ]
    if not supported:
        return preferred[0]
    for method in preferred:
        if method in supported:
            return method
    return "client_secret_basic"


def _unique(items: Iterable[str]) -> List[str]:
    return list(dict.fromkeys(items))


# ======================================================================================================
# WWW-Authenticate (RFC 9110 §11.6.1, RFC 6750 §3)
# ======================================================================================================

@dataclass(frozen=True)
class BearerChallenge:
    """The Bearer challenge of a ``WWW-Authenticate`` header."""

    error: Optional[str] = None
    error_description: Optional[str] = None
    scope: Optional[str] = None
    resource_metadata: Optional[str] = None

    @property
    def scopes(self) -> List[str]:
        """``scope`` split on spaces."""
        return self.scope.split() if self.scope else []


def _skip_spaces(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t":
        pos += 1
    return pos


def _read_token(text: str, pos: int) -> Tuple[str, int]:
    start = pos
    while pos < len(text) and text[pos] not in ' \t,="':
        pos += 1
    return text[start:pos], pos


def _read_quoted(text: str, pos: int) -> Tuple[str, int]:
    # pos is just past the opening quote; a backslash escapes the next character (RFC 9110 §5.6.4).
    chars: List[str] = []
    while pos < len(text) and text[pos] != '"':
        if text[pos] == "\\" and pos + 1 < len(text):
            pos += 1
        chars.append(text[pos])
        pos += 1
    return "".join(chars), pos + 1


def _parse_challenges(header: str) -> List[Tuple[str, Dict[str, str]]]:
    """All challenges in a header value as (lower-case scheme, {lower-case name: value})."""
    challenges: List[Tuple[str, Dict[str, str]]] = []
    pos = 0
    while pos < len(header):
        pos = _skip_spaces(header, pos)
        if pos < len(header) and header[pos] == ",":
            pos += 1
            continue
        scheme, pos = _read_token(header, pos)
        if not scheme:
            pos += 1  # stray character: skip it rather than loop
            continue
        params: Dict[str, str] = {}
        challenges.append((scheme.lower(), params))
        # Parameters follow until a token that is not followed by "=": that is the next scheme.
        while True:
            pos = _skip_spaces(header, pos)
            while pos < len(header) and header[pos] == ",":
                pos = _skip_spaces(header, pos + 1)
            name, after_name = _read_token(header, pos)
            after_name = _skip_spaces(header, after_name)
            if not name or after_name >= len(header) or header[after_name] != "=":
                break
            value_pos = _skip_spaces(header, after_name + 1)
            if value_pos < len(header) and header[value_pos] == '"':
                value, pos = _read_quoted(header, value_pos + 1)
            else:
                value, pos = _read_token(header, value_pos)
            params.setdefault(name.lower(), value)
    return challenges


def parse_bearer_challenge(header: Optional[str]) -> Optional[BearerChallenge]:
    """The Bearer challenge in a ``WWW-Authenticate`` value, or None when there is none."""
    if not header:
        return None
    for scheme, params in _parse_challenges(header):
        if scheme == "bearer":
            return BearerChallenge(
                error=params.get("error"), error_description=params.get("error_description"),
                scope=params.get("scope"), resource_metadata=params.get("resource_metadata"),
            )
    return None


# ======================================================================================================
# PKCE (RFC 7636) and client assertions (RFC 7523)
# ======================================================================================================

_PKCE_VERIFIER_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def pkce_challenge(verifier: str) -> str:
    """The S256 code challenge of a verifier: BASE64URL(SHA256(ASCII(verifier))) (RFC 7636 §4.2).

    Raises:
        ValueError: a verifier that is not 43-128 unreserved characters (RFC 7636 §4.1).
    """
    if not 43 <= len(verifier) <= 128 or not set(verifier) <= _PKCE_VERIFIER_CHARS:
        raise ValueError("a PKCE verifier is 43 to 128 unreserved characters")
    return jose.b64url_encode(hashlib.sha256(verifier.encode("ascii")).digest())


def pkce_pair() -> Tuple[str, str]:
    """A fresh ``(code_verifier, code_challenge)``: 64 random base64url characters and their S256 challenge."""
    verifier = secrets.token_urlsafe(48)
    return verifier, pkce_challenge(verifier)


JWT_BEARER_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
_ASSERTION_LIFETIME = 300


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


# ======================================================================================================
# Records. Their repr never shows a token, secret or code.
# ======================================================================================================

_REFRESH_MARGIN = 30.0  # seconds before expiry at which a token counts as expired


def _expiry(expires_in: Any, now: float) -> Optional[float]:
    if isinstance(expires_in, str) and expires_in.isdigit():
        expires_in = int(expires_in)  # some servers send the lifetime as a string
    if isinstance(expires_in, bool) or not isinstance(expires_in, (int, float)):
        return None
    return now + expires_in


@dataclass
class Tokens:
    """An access token and what came with it. ``expires_at`` and ``issued_at`` are `time.time()` values."""

    access_token: str = field(repr=False)
    token_type: str = "Bearer"
    refresh_token: Optional[str] = field(default=None, repr=False)
    scope: Optional[str] = None
    expires_at: Optional[float] = None
    issued_at: float = 0.0

    @classmethod
    def from_token_response(
        cls, data: Mapping[str, Any], *, now: float, requested_scope: Optional[str] = None,
        previous: Optional["Tokens"] = None,
    ) -> "Tokens":
        """Tokens from a successful token endpoint response (RFC 6749 §5.1).

        Args:
            data: the response JSON.
            now: the time the response arrived.
            requested_scope: the scope asked for; RFC 6749 §5.1 says an omitted ``scope`` means this one.
            previous: the tokens being refreshed. Their refresh token is kept unless a new one was issued
                (OAuth 2.1 §4.3.1: a rotated refresh token replaces the old one).

        Raises:
            AuthError: no ``access_token``, or a token type other than Bearer.
        """
        access_token = data.get("access_token")
        if not isinstance(access_token, str) or not access_token:
            raise AuthError("the token response has no access_token")
        token_type = data.get("token_type", "Bearer")
        if not isinstance(token_type, str) or token_type.lower() != "bearer":
            raise AuthError(f"unsupported token type {token_type!r} (only Bearer)")
        refresh_token = data.get("refresh_token")
        scope = data.get("scope")
        return cls(
            access_token=access_token,
            refresh_token=refresh_token if isinstance(refresh_token, str) else (
                previous.refresh_token if previous else None),
            scope=scope if isinstance(scope, str) else (previous.scope if previous else requested_scope),
            expires_at=_expiry(data.get("expires_in"), now),
            issued_at=now,
        )

    def needs_refresh(self, now: float) -> bool:
        """True when the token has expired or is about to (within 30 s, or a quarter of a short lifetime)."""
        if self.expires_at is None:
            return False
        margin = min(_REFRESH_MARGIN, (self.expires_at - self.issued_at) / 4)
        return now >= self.expires_at - margin

    def to_json(self) -> Dict[str, Any]:
        return {
            "access_token": self.access_token, "token_type": self.token_type,
            "refresh_token": self.refresh_token, "scope": self.scope,
            "expires_at": self.expires_at, "issued_at": self.issued_at,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "Tokens":
        return cls(
            access_token=data["access_token"], token_type=data.get("token_type", "Bearer"),
            refresh_token=data.get("refresh_token"), scope=data.get("scope"),
            expires_at=data.get("expires_at"), issued_at=data.get("issued_at", 0.0),
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
        return bool(self.client_secret_expires_at) and now >= float(self.client_secret_expires_at or 0)

    @classmethod
    def from_registration_response(
        cls, data: Mapping[str, Any], *, requested_method: str, redirect_uri: str
    ) -> "ClientRegistration":
        """The client from an RFC 7591 §3.2.1 registration response.

        Raises:
            AuthError: no ``client_id``.
        """
        client_id = data.get("client_id")
        if not isinstance(client_id, str) or not client_id:
            raise AuthError("the registration response has no client_id")
        secret = data.get("client_secret")
        method = data.get("token_endpoint_auth_method")
        uris = data.get("redirect_uris")
        expires = data.get("client_secret_expires_at")
        if not isinstance(secret, str):
            secret = None
        if not isinstance(method, str):
            # The server did not say. What we asked for, unless that needs a secret we were not given.
            needs_secret = requested_method in ("client_secret_basic", "client_secret_post")
            method = "none" if needs_secret and secret is None else requested_method
        return cls(
            client_id=client_id,
            client_secret=secret,
            token_endpoint_auth_method=method,
            redirect_uris=[u for u in uris if isinstance(u, str)] if isinstance(uris, list) else [redirect_uri],
            client_secret_expires_at=float(expires) if isinstance(expires, (int, float)) else None,
        )

    def to_json(self) -> Dict[str, Any]:
        return {
            "client_id": self.client_id, "client_secret": self.client_secret,
            "token_endpoint_auth_method": self.token_endpoint_auth_method,
            "redirect_uris": list(self.redirect_uris), "client_secret_expires_at": self.client_secret_expires_at,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "ClientRegistration":
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
        """Read the query of the redirect URL (the loopback request, or a 302 ``Location``)."""
        params = dict(parse_qsl(urlsplit(url).query))
        return cls(
            code=params.get("code"), state=params.get("state"), iss=params.get("iss"),
            error=params.get("error"), error_description=params.get("error_description"),
        )


def check_authorization_response(
    response: AuthorizationResponse, *, expected_state: str, issuer: str, iss_advertised: bool
) -> str:
    """Validate the authorization redirect and return its code.

    Checked before the code is redeemed, in this order: ``state`` (CSRF), ``iss`` (mix-up, see
    `check_authorization_response_issuer`, which applies to error responses too), then ``error``.

    Raises:
        AuthError: any check fails, the user or server refused, or there is no code.
    """
    if response.state != expected_state:
        raise AuthError("the authorization response state does not match the request; refusing it")
    check_authorization_response_issuer(response.iss, issuer, iss_advertised)
    if response.error:
        detail = f": {response.error_description}" if response.error_description else ""
        raise AuthError(f"authorization was refused: {response.error}{detail}")
    if not response.code:
        raise AuthError("the authorization response has no code")
    return response.code


# ======================================================================================================
# Token storage
# ======================================================================================================

class TokenStorage(abc.ABC):
    """Where sign-ins are kept. Tokens are keyed by authorization server issuer and resource; client
    registrations by issuer alone, because credentials from one AS MUST NOT be used with another
    (SEP-2352). Implementations must be safe to call from several threads."""

    @abc.abstractmethod
    def get_tokens(self, issuer: str, resource: str) -> Optional[Tokens]:
        """The stored tokens, or None."""

    @abc.abstractmethod
    def set_tokens(self, issuer: str, resource: str, tokens: Optional[Tokens]) -> None:
        """Store tokens; None forgets them."""

    @abc.abstractmethod
    def get_client(self, issuer: str) -> Optional[ClientRegistration]:
        """The client registered with this issuer, or None."""

    @abc.abstractmethod
    def set_client(self, issuer: str, client: Optional[ClientRegistration]) -> None:
        """Store a registration; None forgets it."""


class MemoryTokenStorage(TokenStorage):
    """Keeps everything in this process only (the default)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tokens: Dict[Tuple[str, str], Tokens] = {}
        self._clients: Dict[str, ClientRegistration] = {}

    def get_tokens(self, issuer: str, resource: str) -> Optional[Tokens]:
        with self._lock:
            return self._tokens.get((issuer, resource))

    def set_tokens(self, issuer: str, resource: str, tokens: Optional[Tokens]) -> None:
        with self._lock:
            if tokens is None:
                self._tokens.pop((issuer, resource), None)
            else:
                self._tokens[(issuer, resource)] = tokens

    def get_client(self, issuer: str) -> Optional[ClientRegistration]:
        with self._lock:
            return self._clients.get(issuer)

    def set_client(self, issuer: str, client: Optional[ClientRegistration]) -> None:
        with self._lock:
            if client is None:
                self._clients.pop(issuer, None)
            else:
                self._clients[issuer] = client


class FileTokenStorage(TokenStorage):
    """Keeps sign-ins in a JSON file that only the user can read (mode 0600).

    Every change rewrites the whole file atomically (a temporary file in the same directory, fsync,
    rename), so a crash never leaves half a file. The file is read on every lookup, so several processes
    see each other's sign-ins; two processes writing at the same moment can lose one of the writes, which
    costs a new sign-in, never a corrupt file.
    """

    _FORMAT = 1

    def __init__(self, path: Union[str, "os.PathLike[str]"]) -> None:
        self.path = os.fspath(path)
        self._lock = threading.Lock()

    def _load(self) -> Dict[str, Any]:
        try:
            with open(self.path, encoding="utf-8") as file:
                data = json.load(file)
        except FileNotFoundError:
            return {"format": self._FORMAT, "tokens": {}, "clients": {}}
        except (OSError, ValueError) as exc:
            raise AuthError(f"cannot read the token file {self.path}: {exc}") from exc
        if not isinstance(data, dict) or data.get("format") != self._FORMAT:
            raise AuthError(f"{self.path} is not a token file of this version")
        return data

    def _save(self, data: Dict[str, Any]) -> None:
        directory = os.path.dirname(os.path.abspath(self.path))
        os.makedirs(directory, mode=0o700, exist_ok=True)
        # mkstemp creates the file with mode 0600, so the secrets are never readable by others, not even
        # for the moment between creation and rename.
        fd, temporary = tempfile.mkstemp(prefix=".tokens-", suffix=".tmp", dir=directory)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as file:
                json.dump(data, file, indent=1, sort_keys=True)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, self.path)
        except BaseException:
            try:
                os.unlink(temporary)
            except OSError:
                pass
            raise

    def get_tokens(self, issuer: str, resource: str) -> Optional[Tokens]:
        with self._lock:
            entry = self._load()["tokens"].get(issuer, {}).get(resource)
        return Tokens.from_json(entry) if entry else None

    def set_tokens(self, issuer: str, resource: str, tokens: Optional[Tokens]) -> None:
        with self._lock:
            data = self._load()
            by_resource = data["tokens"].setdefault(issuer, {})
            if tokens is None:
                by_resource.pop(resource, None)
            else:
                by_resource[resource] = tokens.to_json()
            if not by_resource:
                del data["tokens"][issuer]
            self._save(data)

    def get_client(self, issuer: str) -> Optional[ClientRegistration]:
        with self._lock:
            entry = self._load()["clients"].get(issuer)
        return ClientRegistration.from_json(entry) if entry else None

    def set_client(self, issuer: str, client: Optional[ClientRegistration]) -> None:
        with self._lock:
            data = self._load()
            if client is None:
                data["clients"].pop(issuer, None)
            else:
                data["clients"][issuer] = client.to_json()
            self._save(data)


# ======================================================================================================
# The user's step: the browser and the loopback redirect (RFC 8252 §7.3)
# ======================================================================================================

_HANDLER_SOCKET_TIMEOUT = 10.0  # a connection that opens and says nothing must not hold the catcher
_SIGNED_IN_PAGE = (
    b"<!doctype html><meta charset=utf-8><title>Signed in</title>"
    b"<p>Sign-in finished. You can close this window.</p>"
)


class _LoopbackServer(socketserver.TCPServer):
    # Rebinding the port of the previous sign-in must not fail while its socket sits in TIME_WAIT.
    allow_reuse_address = True


class LoopbackRedirectCatcher:
    """Listens on 127.0.0.1 for the one browser redirect that ends an authorization.

    Use as a context manager, or call `close`.
    """

    def __init__(self, *, port: int = 0, path: str = "/callback", timeout: float = 300.0) -> None:
        """Args:
            port: the port to listen on; 0 picks a free one.
            path: the redirect URI path; requests for other paths get 404 and are ignored.
            timeout: how long `wait` waits for the redirect, in seconds.

        Raises:
            OSError: the port cannot be bound.
        """
        catcher = self

        class Handler(BaseHTTPRequestHandler):
            timeout = _HANDLER_SOCKET_TIMEOUT

            def do_GET(self) -> None:
                catcher._handle(self)

            def log_message(self, format: str, *args: Any) -> None:
                pass  # the request line carries the authorization code: it stays out of every log

        self.path = path
        self.timeout = timeout
        self._redirect: Optional[str] = None
        self._server = _LoopbackServer(("127.0.0.1", port), Handler)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.path}"

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        if urlsplit(handler.path).path != self.path:
            handler.send_error(404)
            return
        self._redirect = f"http://127.0.0.1:{self.port}{handler.path}"
        handler.send_response(200)
        handler.send_header("Content-Type", "text/html; charset=utf-8")
        handler.send_header("Content-Length", str(len(_SIGNED_IN_PAGE)))
        handler.send_header("Cache-Control", "no-store")
        handler.end_headers()
        handler.wfile.write(_SIGNED_IN_PAGE)

    def wait(self) -> str:
        """Serve until the redirect arrives and return its full URL.

        Raises:
            AuthError: nothing arrived within ``timeout`` seconds.
        """
        deadline = time.monotonic() + self.timeout
        while self._redirect is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AuthError(f"no authorization redirect arrived within {self.timeout:g} seconds")
            self._server.timeout = remaining
            self._server.handle_request()
        return self._redirect

    def close(self) -> None:
        self._server.server_close()

    def __enter__(self) -> "LoopbackRedirectCatcher":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()


AuthorizeCallback = Callable[[str], Union[AuthorizationResponse, str]]


class BrowserAuthorizer:
    """The default ``authorize`` callback of `OAuth`: opens the system browser at the authorization URL
    and catches the redirect on a loopback port.

    `redirect_uri` binds the port as soon as it is asked for, because the client must register the URI
    before the browser opens. Later sign-ins reuse the same port when it is free; when it is not, the
    redirect URI changes and `OAuth` registers again.
    """

    def __init__(
        self, *, port: int = 0, path: str = "/callback", timeout: float = 300.0,
        open_browser: Callable[[str], bool] = webbrowser.open,
    ) -> None:
        self._port = port
        self._path = path
        self._timeout = timeout
        self._open_browser = open_browser
        self._catcher: Optional[LoopbackRedirectCatcher] = None

    def _bound_catcher(self) -> LoopbackRedirectCatcher:
        if self._catcher is None:
            try:
                self._catcher = LoopbackRedirectCatcher(port=self._port, path=self._path, timeout=self._timeout)
            except OSError:
                if self._port == 0:
                    raise
                self._catcher = LoopbackRedirectCatcher(port=0, path=self._path, timeout=self._timeout)
            self._port = self._catcher.port
        return self._catcher

    @property
    def redirect_uri(self) -> str:
        return self._bound_catcher().redirect_uri

    def __call__(self, authorization_url: str) -> str:
        catcher = self._bound_catcher()
        self._catcher = None
        with catcher:
            if not self._open_browser(authorization_url):
                sys.stderr.write(f"Open this address in a browser to sign in:\n{authorization_url}\n")
            return catcher.wait()

    def close(self) -> None:
        """Release the port if one is bound."""
        if self._catcher is not None:
            self._catcher.close()
            self._catcher = None


# ======================================================================================================
# The flow
# ======================================================================================================

_JSON_ACCEPT = "application/json"
_FORM = "application/x-www-form-urlencoded"


def _json_object(body: bytes) -> Optional[Dict[str, Any]]:
    try:
        value = json.loads(body)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _oauth_error(what: str, status: int, data: Optional[Mapping[str, Any]]) -> AuthError:
    # Only the server's error code and description: a token must never end up in a message.
    detail = ""
    if data and isinstance(data.get("error"), str):
        detail = f": {data['error']}"
        if isinstance(data.get("error_description"), str):
            detail += f" ({data['error_description']})"
    return AuthError(f"{what} failed with HTTP {status}{detail}")


def _basic_credentials(client_id: str, secret: str) -> str:
    # RFC 6749 §2.3.1: both parts are form-urlencoded before base64. quote(safe="") reads back right with
    # both form decoding and plain percent decoding.
    raw = f"{quote(client_id, safe='')}:{quote(secret, safe='')}"
    return "Basic " + base64.b64encode(raw.encode("utf-8")).decode("ascii")


def _with_query(url: str, params: Mapping[str, str]) -> str:
    parts = urlsplit(url)
    query = urlencode(parse_qsl(parts.query) + list(params.items()))
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, parts.fragment))


def _scope_list(scopes: Optional[Union[str, Sequence[str]]]) -> Optional[List[str]]:
    if scopes is None:
        return None
    return scopes.split() if isinstance(scopes, str) else list(scopes)


def _with_bearer(request: HTTPRequest, tokens: Optional[Tokens]) -> HTTPRequest:
    headers = {name: value for name, value in request.headers.items() if name.lower() != "authorization"}
    if tokens is not None:
        headers["Authorization"] = f"Bearer {tokens.access_token}"
    return request._replace(headers=headers)


_PrivateKeySource = Union[str, bytes, Mapping[str, Any], jose.ECPrivateKey, jose.RSAPrivateKey]


@dataclass
class _Binding:
    """What discovery found for one MCP server, and the tokens in use for it."""

    server_url: str  # canonical MCP server URL
    issuer: Optional[str] = None
    metadata: Dict[str, Any] = field(default_factory=dict)
    legacy_defaults: bool = False  # the metadata is the 2025-03-26 default endpoints, not a document
    resource: Optional[str] = None  # the RFC 8707 value to send; None only on a pre-2025-06-18 fallback
    resource_scopes: List[str] = field(default_factory=list)  # PRM scopes_supported
    tokens: Optional[Tokens] = None
    requested_scopes: List[str] = field(default_factory=list)

    @property
    def storage_key(self) -> str:
        return self.resource or self.server_url


@dataclass
class _Attempt:
    """What one `auth_flow` call has tried, so that each remedy is tried at most once."""

    used_stored: bool = False
    refreshed: bool = False
    authorized: bool = False
    step_ups: int = 0


class BaseOAuth(abc.ABC):
    """The machinery shared by every grant: discovery, the token endpoint, refresh, retries and step-up.

    Subclasses say how a token is obtained (`_obtain_tokens`) and which client is in use (`_known_client`).
    One object may serve several MCP servers, and several threads: a lock makes sure that only one thread
    signs in while the others wait and then use the new token.
    """

    def __init__(
        self, *, scopes: Optional[Union[str, Sequence[str]]], storage: Optional[TokenStorage],
        protocol_version: str, max_step_up: int, private_key: Optional[_PrivateKeySource],
        clock: Callable[[], float],
    ) -> None:
        self.scopes = _scope_list(scopes)
        self.storage: TokenStorage = storage if storage is not None else MemoryTokenStorage()
        self.protocol_version = protocol_version
        self.max_step_up = max_step_up
        self._private_key: Optional[jose.PrivateKey] = (
            private_key if isinstance(private_key, (jose.ECPrivateKey, jose.RSAPrivateKey))
            else jose.load_private_key(private_key) if private_key is not None else None
        )
        self._clock = clock
        self._bindings: Dict[str, _Binding] = {}
        self._bindings_lock = threading.Lock()
        self._lock = threading.Lock()  # held by the one thread that is signing in or refreshing

    # -- hooks --------------------------------------------------------------------------------------

    @abc.abstractmethod
    def _obtain_tokens(self, binding: _Binding, scopes: List[str]) -> Generator[HTTPRequest, HTTPResponse, Tokens]:
        """Get new tokens for ``scopes`` from ``binding``'s authorization server."""

    @abc.abstractmethod
    def _known_client(self, binding: _Binding, redirect_uri: Optional[str] = None) -> Optional[ClientRegistration]:
        """The client to use with ``binding``'s authorization server, when one is known without registering."""

    _wants_refresh_tokens = False  # whether to ask for offline_access when the AS offers it

    # -- the flow -----------------------------------------------------------------------------------

    def auth_flow(self, request: HTTPRequest) -> Flow:
        """Send ``request`` with a bearer token, obtaining or renewing the token as the server requires.

        Yields the request (with ``Authorization`` when a token is known) and receives its response. On
        401 it rediscovers the authorization server and tries, each at most once: tokens another process
        stored, a refresh, a new sign-in. On 403 ``insufficient_scope`` it signs in again with the union
        of scopes, at most ``max_step_up`` times. Then it yields the request again with the new token. A
        token about to expire is refreshed before sending. The generator ends once a response needs no
        more authorization; that response is the caller's.

        Raises:
            AuthError: no acceptable token could be obtained.
        """
        binding = self._binding_for(request.url)
        if binding.tokens is not None and binding.tokens.needs_refresh(self._clock()):
            with self._lock:  # held while the refresh exchange runs; other threads wait, then reuse it
                if binding.tokens is not None and binding.tokens.needs_refresh(self._clock()):
                    yield from self._refresh(binding)
        attempt = _Attempt()
        sent = binding.tokens
        response = yield _with_bearer(request, sent)
        while True:
            challenge = parse_bearer_challenge(response.headers.get("www-authenticate"))
            if response.status == 401:
                with self._lock:
                    yield from self._recover_from_unauthorized(binding, sent, challenge, attempt)
            elif challenge is not None and is_insufficient_scope(response.status, challenge):
                attempt.step_ups += 1
                if attempt.step_ups > self.max_step_up:
                    raise AuthError(
                        f"the server still answers insufficient_scope after {self.max_step_up} step-up "
                        f"authorizations (scope {challenge.scope!r})"
                    )
                with self._lock:
                    yield from self._step_up(binding, sent, challenge)
            else:
                return
            sent = binding.tokens
            response = yield _with_bearer(request, sent)

    def _binding_for(self, url: str) -> _Binding:
        key = canonical_resource_uri(url)
        with self._bindings_lock:
            return self._bindings.setdefault(key, _Binding(server_url=key))

    def _recover_from_unauthorized(
        self, binding: _Binding, sent: Optional[Tokens], challenge: Optional[BearerChallenge], attempt: _Attempt
    ) -> Generator[HTTPRequest, HTTPResponse, None]:
        if binding.tokens is not sent:
            return  # another thread replaced the token while we waited for the lock: try that one first
        # Rediscover on every 401: the server may have moved to another authorization server (SEP-2352).
        yield from self._discover(binding, challenge)
        assert binding.issuer is not None
        stored = self.storage.get_tokens(binding.issuer, binding.storage_key)
        if not attempt.used_stored and stored is not None and stored != sent:
            attempt.used_stored = True  # another process (or an earlier run) signed in already
            binding.tokens = stored
            if not stored.needs_refresh(self._clock()):
                return
        if not attempt.refreshed and binding.tokens is not None and binding.tokens.refresh_token:
            attempt.refreshed = True
            if (yield from self._refresh(binding)):
                return
        if attempt.authorized:
            raise AuthError("the server rejected the token it was just issued (HTTP 401)")
        attempt.authorized = True
        scopes = select_scopes(challenge.scopes if challenge else None, self.scopes, binding.resource_scopes)
        yield from self._authorize(binding, scopes)

    def _step_up(
        self, binding: _Binding, sent: Optional[Tokens], challenge: BearerChallenge
    ) -> Generator[HTTPRequest, HTTPResponse, None]:
        if binding.tokens is not sent:
            return  # another thread stepped up meanwhile
        if binding.issuer is None:
            yield from self._discover(binding, challenge)
        scopes = add_step_up_scopes(binding.requested_scopes, challenge.scopes)
        yield from self._authorize(binding, scopes)

    def _authorize(self, binding: _Binding, scopes: List[str]) -> Generator[HTTPRequest, HTTPResponse, None]:
        scopes = apply_offline_access(scopes, binding.metadata.get("scopes_supported"), self._wants_refresh_tokens)
        _log.info("signing in to %s at %s", binding.server_url, binding.issuer)
        tokens = yield from self._obtain_tokens(binding, scopes)
        binding.requested_scopes = scopes
        self._store_tokens(binding, tokens)

    def _store_tokens(self, binding: _Binding, tokens: Optional[Tokens]) -> None:
        assert binding.issuer is not None
        binding.tokens = tokens
        self.storage.set_tokens(binding.issuer, binding.storage_key, tokens)

    # -- discovery ----------------------------------------------------------------------------------

    def _discover(
        self, binding: _Binding, challenge: Optional[BearerChallenge]
    ) -> Generator[HTTPRequest, HTTPResponse, None]:
        """Find the authorization server for ``binding`` (VERSIONS.md §3, steps 1-5)."""
        resource_metadata = yield from self._fetch_resource_metadata(
            binding.server_url, challenge.resource_metadata if challenge else None)
        if resource_metadata is not None:
            issuers: List[str] = resource_metadata["authorization_servers"]
            # Each listed server is independent; keep the one we hold credentials for while it is listed.
            issuer = binding.issuer if binding.issuer in issuers else issuers[0]
            metadata = yield from self._fetch_authorization_server_metadata(issuer)
            resource: Optional[str] = resource_metadata["resource"]
            resource_scopes = resource_metadata.get("scopes_supported")
            legacy = False
        else:
            issuer, metadata, legacy = yield from self._fetch_legacy_metadata(binding.server_url)
            resource = binding.server_url if rule_applies("resource_parameter", self.protocol_version) else None
            resource_scopes = None
        if binding.issuer is not None and issuer != binding.issuer:
            _log.info("%s moved from %s to %s", binding.server_url, binding.issuer, issuer)
            binding.tokens = None  # tokens and credentials of the old server are not valid at the new one
        binding.issuer = issuer
        binding.metadata = metadata
        binding.legacy_defaults = legacy
        binding.resource = resource
        binding.resource_scopes = [s for s in resource_scopes or [] if isinstance(s, str)]

    def _discovery_request(self, url: str) -> HTTPRequest:
        # MCP-Protocol-Version on discovery: SHOULD in 2025-03-26, and harmless everywhere else.
        return HTTPRequest("GET", url, {"Accept": _JSON_ACCEPT, "MCP-Protocol-Version": self.protocol_version})

    def _get_json(self, url: str) -> Generator[HTTPRequest, HTTPResponse, Optional[Dict[str, Any]]]:
        response = yield self._discovery_request(url)
        _log.debug("discovery GET %s -> %d", url, response.status)
        return _json_object(response.body) if response.status == 200 else None

    def _fetch_resource_metadata(
        self, server_url: str, challenge_url: Optional[str]
    ) -> Generator[HTTPRequest, HTTPResponse, Optional[Dict[str, Any]]]:
        for url in protected_resource_metadata_urls(server_url, challenge_url):
            document = yield from self._get_json(url)
            if document is not None:
                check_protected_resource_metadata(document, server_url)
                return document
        return None

    def _fetch_authorization_server_metadata(
        self, issuer: str
    ) -> Generator[HTTPRequest, HTTPResponse, Dict[str, Any]]:
        for url in authorization_server_metadata_urls(issuer):
            document = yield from self._get_json(url)
            if document is not None:
                check_metadata_issuer(document, issuer)
                return document
        raise AuthError(f"no authorization server metadata found for {issuer}")

    def _fetch_legacy_metadata(
        self, server_url: str
    ) -> Generator[HTTPRequest, HTTPResponse, Tuple[str, Dict[str, Any], bool]]:
        """The 2025-03-26 fallback for servers without protected resource metadata."""
        defaults = legacy_default_endpoints(server_url)
        issuer = defaults["issuer"]
        response = yield self._discovery_request(legacy_metadata_url(server_url))
        if response.status == 404:
            return issuer, defaults, True
        document = _json_object(response.body) if response.status == 200 else None
        if document is None:
            raise AuthError(
                f"{server_url} has no protected resource metadata, and {legacy_metadata_url(server_url)} "
                f"answered HTTP {response.status}"
            )
        check_metadata_issuer(document, issuer)
        return issuer, document, False

    # -- the token endpoint -------------------------------------------------------------------------

    def _client_authentication(
        self, binding: _Binding, client: ClientRegistration
    ) -> Tuple[Dict[str, str], Dict[str, str]]:
        """The form fields and headers that authenticate ``client`` at the token endpoint."""
        method = choose_token_endpoint_auth_method(
            client.token_endpoint_auth_method, binding.metadata.get("token_endpoint_auth_methods_supported"),
            has_secret=client.client_secret is not None, has_private_key=self._private_key is not None,
        )
        if method in ("client_secret_basic", "client_secret_post") and client.client_secret is None:
            raise AuthError(f"token endpoint authentication {method} needs a client secret")
        if method == "client_secret_basic":
            return {}, {"Authorization": _basic_credentials(client.client_id, client.client_secret or "")}
        if method == "client_secret_post":
            return {"client_id": client.client_id, "client_secret": client.client_secret or ""}, {}
        if method == "private_key_jwt":
            if self._private_key is None:
                raise AuthError("token endpoint authentication private_key_jwt needs private_key=")
            assert binding.issuer is not None
            assertion = client_assertion(client.client_id, binding.issuer, self._private_key, now=self._clock())
            return {
                "client_id": client.client_id, "client_assertion_type": JWT_BEARER_ASSERTION_TYPE,
                "client_assertion": assertion,
            }, {}
        if method != "none":
            raise AuthError(f"unsupported token endpoint authentication method {method!r}")
        return {"client_id": client.client_id}, {}

    def _post_token_endpoint(
        self, binding: _Binding, form: Dict[str, str], client: ClientRegistration
    ) -> Generator[HTTPRequest, HTTPResponse, Tuple[int, Optional[Dict[str, Any]]]]:
        endpoint = binding.metadata.get("token_endpoint")
        if not isinstance(endpoint, str):
            raise AuthError(f"the authorization server {binding.issuer} has no token_endpoint")
        extra_form, extra_headers = self._client_authentication(binding, client)
        headers = {"Content-Type": _FORM, "Accept": _JSON_ACCEPT, **extra_headers}
        response = yield HTTPRequest("POST", endpoint, headers, urlencode({**form, **extra_form}).encode("ascii"))
        return response.status, _json_object(response.body)

    def _request_tokens(
        self, binding: _Binding, form: Dict[str, str], client: ClientRegistration, scopes: List[str]
    ) -> Generator[HTTPRequest, HTTPResponse, Tokens]:
        status, data = yield from self._post_token_endpoint(binding, form, client)
        if status != 200 or data is None:
            raise _oauth_error(f"the {form['grant_type']} token request", status, data)
        return Tokens.from_token_response(data, now=self._clock(), requested_scope=" ".join(scopes) or None)

    def _refresh(self, binding: _Binding) -> Generator[HTTPRequest, HTTPResponse, bool]:
        """Refresh ``binding``'s tokens (OAuth 2.1 §4.3). True on success; on failure the dead tokens are
        forgotten so that the next attempt signs in afresh."""
        tokens = binding.tokens
        client = self._known_client(binding)
        if tokens is None or not tokens.refresh_token or client is None:
            return False
        form = {"grant_type": "refresh_token", "refresh_token": tokens.refresh_token}
        if binding.resource:
            form["resource"] = binding.resource
        status, data = yield from self._post_token_endpoint(binding, form, client)
        if status != 200 or data is None:
            _log.info("refreshing the token for %s failed with HTTP %d", binding.server_url, status)
            self._store_tokens(binding, None)
            return False
        self._store_tokens(binding, Tokens.from_token_response(data, now=self._clock(), previous=tokens))
        return True


def _check_client_metadata_url(url: str) -> None:
    # 2025-11-25 client registration: a Client ID Metadata Document URL is https and has a path.
    parts = urlsplit(url)
    if parts.scheme != "https" or parts.path in ("", "/"):
        raise ValueError("client_metadata_url must be an https URL with a path")


def _default_authorizer(redirect_uri: Optional[str]) -> BrowserAuthorizer:
    if redirect_uri is None:
        return BrowserAuthorizer()
    parts = urlsplit(redirect_uri)
    if parts.scheme != "http" or parts.hostname != "127.0.0.1":
        raise ValueError(
            "the built-in browser sign-in listens on http://127.0.0.1; pass authorize= for another redirect_uri")
    return BrowserAuthorizer(port=80 if parts.port is None else parts.port, path=parts.path or "/")


class OAuth(BaseOAuth):
    """Sign in to a protected MCP server as a user: the authorization code grant with PKCE.

    Pass it as ``Client(url, auth=OAuth(...))``. With no arguments it registers itself dynamically and
    opens the browser; ``client_id`` (pre-registered) or ``client_metadata_url`` (a Client ID Metadata
    Document) avoid dynamic registration.
    """

    def __init__(
        self, *, client_id: Optional[str] = None, client_secret: Optional[str] = None,
        client_metadata_url: Optional[str] = None, client_name: str = "mcplite",
        redirect_uri: Optional[str] = None, scopes: Optional[Union[str, Sequence[str]]] = None,
        storage: Optional[TokenStorage] = None, authorize: Optional[AuthorizeCallback] = None,
        token_endpoint_auth_method: Optional[str] = None, private_key: Optional[_PrivateKeySource] = None,
        protocol_version: str = DEFAULT_PROTOCOL_VERSION, max_step_up: int = 3,
        request_offline_access: bool = True, clock: Callable[[], float] = time.time,
    ) -> None:
        """Args:
            client_id, client_secret: a client registered with the authorization server beforehand.
            client_metadata_url: the https URL of this client's Client ID Metadata Document, used as the
                client id where the AS advertises ``client_id_metadata_document_supported``.
            client_name: the name shown to the user, sent in dynamic registration.
            redirect_uri: where the AS sends the browser back. Default: a free port on 127.0.0.1.
            scopes: scopes to request when the server's challenge names none (a string or a list).
            storage: where tokens and registrations live (default: memory; see `FileTokenStorage`).
            authorize: the user's step. Called with the authorization URL, returns the redirect URL (or an
                `AuthorizationResponse`). Default: `BrowserAuthorizer` (browser plus loopback listener).
            token_endpoint_auth_method: force one (``client_secret_basic``, ``client_secret_post``,
                ``private_key_jwt``, ``none``); default: chosen from the registration and AS metadata.
            private_key: for ``private_key_jwt``: PEM, JWK, or a `jose` key (ES256 or RS256).
            protocol_version: the MCP revision spoken; sent as ``MCP-Protocol-Version`` on discovery and
                selects the revision rules (`REVISION_RULES`).
            max_step_up: how many step-up sign-ins one request may cause before `AuthError`.
            request_offline_access: ask for ``offline_access`` where the AS lists it, to get refresh tokens.
            clock: the time source, for tests.

        Raises:
            ValueError: an invalid ``client_metadata_url``, or a non-loopback ``redirect_uri`` without
                ``authorize``.
        """
        super().__init__(
            scopes=scopes, storage=storage, protocol_version=protocol_version, max_step_up=max_step_up,
            private_key=private_key, clock=clock,
        )
        if client_metadata_url is not None:
            _check_client_metadata_url(client_metadata_url)
        self.client_id = client_id
        self.client_secret = client_secret
        self.client_metadata_url = client_metadata_url
        self.client_name = client_name
        self.token_endpoint_auth_method = token_endpoint_auth_method
        self._wants_refresh_tokens = request_offline_access
        self._redirect_uri = redirect_uri
        self.authorize: AuthorizeCallback = (
            authorize if authorize is not None else _default_authorizer(redirect_uri))

    def _redirect_uri_in_use(self) -> str:
        redirect_uri = self._redirect_uri or getattr(self.authorize, "redirect_uri", None)
        if not isinstance(redirect_uri, str):
            raise AuthError("no redirect URI: pass redirect_uri= (or an authorize callback that has one)")
        return redirect_uri

    def _known_client(self, binding: _Binding, redirect_uri: Optional[str] = None) -> Optional[ClientRegistration]:
        """Registration priority (2025-11-25): pre-registered, then the Client ID Metadata Document when
        the AS supports it, then an earlier dynamic registration with this same AS."""
        if self.client_id is not None:
            return ClientRegistration(self.client_id, self.client_secret, self.token_endpoint_auth_method)
        if self.client_metadata_url is not None and binding.metadata.get("client_id_metadata_document_supported") is True:
            method = "private_key_jwt" if self._private_key is not None else "none"
            return ClientRegistration(self.client_metadata_url, None, self.token_endpoint_auth_method or method)
        assert binding.issuer is not None
        stored = self.storage.get_client(binding.issuer)
        if stored is None or stored.secret_expired(self._clock()):
            return None
        if redirect_uri is not None and stored.redirect_uris and redirect_uri not in stored.redirect_uris:
            return None  # registered for another redirect URI (the loopback port changed)
        return stored

    def _client_for(
        self, binding: _Binding, redirect_uri: str, scopes: List[str]
    ) -> Generator[HTTPRequest, HTTPResponse, ClientRegistration]:
        known = self._known_client(binding, redirect_uri)
        if known is not None:
            return known
        endpoint = binding.metadata.get("registration_endpoint")
        if not isinstance(endpoint, str):
            raise AuthError(
                f"the authorization server {binding.issuer} offers no dynamic client registration; pass "
                "client_id= (a pre-registered client) or client_metadata_url="
            )
        client = yield from self._register(binding, endpoint, redirect_uri, scopes)
        assert binding.issuer is not None
        self.storage.set_client(binding.issuer, client)
        return client

    def _register(
        self, binding: _Binding, endpoint: str, redirect_uri: str, scopes: List[str]
    ) -> Generator[HTTPRequest, HTTPResponse, ClientRegistration]:
        """Dynamic client registration (RFC 7591)."""
        method = self.token_endpoint_auth_method or _registration_auth_method(
            binding.metadata.get("token_endpoint_auth_methods_supported"), self._private_key is not None)
        body: Dict[str, Any] = {
            "client_name": self.client_name,
            "redirect_uris": [redirect_uri],
            # refresh_token too: SEP-2207 asks clients that want refresh tokens to say so at registration.
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": method,
            "application_type": application_type_for(redirect_uri),
        }
        if scopes:
            body["scope"] = " ".join(scopes)
        if method == "private_key_jwt" and self._private_key is not None:
            body["jwks"] = {"keys": [self._private_key.public_key.to_jwk()]}
        headers = {"Content-Type": "application/json", "Accept": _JSON_ACCEPT}
        response = yield HTTPRequest("POST", endpoint, headers, json.dumps(body).encode("utf-8"))
        data = _json_object(response.body)
        if response.status not in (200, 201) or data is None:
            raise _oauth_error(f"dynamic client registration at {endpoint}", response.status, data)
        return ClientRegistration.from_registration_response(data, requested_method=method, redirect_uri=redirect_uri)

    def _obtain_tokens(self, binding: _Binding, scopes: List[str]) -> Generator[HTTPRequest, HTTPResponse, Tokens]:
        metadata = binding.metadata
        endpoint = metadata.get("authorization_endpoint")
        if not isinstance(endpoint, str):
            raise AuthError(f"the authorization server {binding.issuer} has no authorization_endpoint")
        if not binding.legacy_defaults:
            check_pkce_support(metadata, self.protocol_version)
        assert binding.issuer is not None
        redirect_uri = self._redirect_uri_in_use()
        client = yield from self._client_for(binding, redirect_uri, scopes)
        verifier, challenge = pkce_pair()
        state = secrets.token_urlsafe(32)
        params = {
            "response_type": "code", "client_id": client.client_id, "redirect_uri": redirect_uri,
            "code_challenge": challenge, "code_challenge_method": "S256", "state": state,
        }
        if scopes:
            params["scope"] = " ".join(scopes)
        if binding.resource:
            params["resource"] = binding.resource
        answer = self.authorize(_with_query(endpoint, params))
        response = answer if isinstance(answer, AuthorizationResponse) else AuthorizationResponse.from_redirect_url(answer)
        code = check_authorization_response(
            response, expected_state=state, issuer=binding.issuer,
            iss_advertised=metadata.get("authorization_response_iss_parameter_supported") is True,
        )
        form = {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri, "code_verifier": verifier}
        if binding.resource:
            form["resource"] = binding.resource
        return (yield from self._request_tokens(binding, form, client, scopes))


class ClientCredentials(BaseOAuth):
    """Machine-to-machine access: the client credentials grant (extension ``oauth-client-credentials``,
    SEP-1046), authenticated with a client secret or a ``private_key_jwt`` assertion."""

    def __init__(
        self, *, client_id: str, client_secret: Optional[str] = None, private_key: Optional[_PrivateKeySource] = None,
        scopes: Optional[Union[str, Sequence[str]]] = None, token_endpoint_auth_method: Optional[str] = None,
        storage: Optional[TokenStorage] = None, protocol_version: str = DEFAULT_PROTOCOL_VERSION,
        max_step_up: int = 3, clock: Callable[[], float] = time.time,
    ) -> None:
        """Args:
            client_id: the client's id at the authorization server.
            client_secret: for ``client_secret_basic`` / ``client_secret_post``.
            private_key: for ``private_key_jwt`` (PEM, JWK or a `jose` key; ES256 or RS256).
            Others: as for `OAuth`.

        Raises:
            ValueError: neither a secret nor a key.
        """
        if client_secret is None and private_key is None:
            raise ValueError("client credentials need client_secret= or private_key=")
        super().__init__(
            scopes=scopes, storage=storage, protocol_version=protocol_version, max_step_up=max_step_up,
            private_key=private_key, clock=clock,
        )
        self._client = ClientRegistration(client_id, client_secret, token_endpoint_auth_method)

    def _known_client(self, binding: _Binding, redirect_uri: Optional[str] = None) -> Optional[ClientRegistration]:
        return self._client

    def _obtain_tokens(self, binding: _Binding, scopes: List[str]) -> Generator[HTTPRequest, HTTPResponse, Tokens]:
        form = {"grant_type": "client_credentials"}
        if scopes:
            form["scope"] = " ".join(scopes)
        if binding.resource:
            form["resource"] = binding.resource
        return (yield from self._request_tokens(binding, form, self._client, scopes))


TOKEN_EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange"
JWT_BEARER_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"
ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id-jag"


class CrossAppAccess(BaseOAuth):
    """Enterprise-managed authorization (SEP-990, extension ``enterprise-managed-authorization``).

    The user signed in to the enterprise IdP already (single sign-on gave us an ID token). For each MCP
    server: exchange the ID token at the IdP for an Identity Assertion JWT Authorization Grant (ID-JAG,
    RFC 8693 token exchange), then present the ID-JAG at the MCP server's authorization server with the
    JWT bearer grant (RFC 7523 §2.1). No browser is involved.
    """

    def __init__(
        self, *, client_id: str, id_token: Union[str, Callable[[], str]], client_secret: Optional[str] = None,
        private_key: Optional[_PrivateKeySource] = None, idp_token_endpoint: Optional[str] = None,
        idp_issuer: Optional[str] = None, idp_client_id: Optional[str] = None,
        idp_client_secret: Optional[str] = None, scopes: Optional[Union[str, Sequence[str]]] = None,
        token_endpoint_auth_method: Optional[str] = None, storage: Optional[TokenStorage] = None,
        protocol_version: str = DEFAULT_PROTOCOL_VERSION, max_step_up: int = 3,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """Args:
            client_id, client_secret, private_key: this client at the MCP server's authorization server.
            id_token: the user's ID token from the IdP, or a callable returning a current one.
            idp_token_endpoint: the IdP's token endpoint; or give ``idp_issuer`` to discover it.
            idp_client_id, idp_client_secret: this client at the IdP.
            Others: as for `OAuth`.

        Raises:
            ValueError: neither ``idp_token_endpoint`` nor ``idp_issuer``.
        """
        if idp_token_endpoint is None and idp_issuer is None:
            raise ValueError("cross-app access needs idp_token_endpoint= or idp_issuer=")
        super().__init__(
            scopes=scopes, storage=storage, protocol_version=protocol_version, max_step_up=max_step_up,
            private_key=private_key, clock=clock,
        )
        self._client = ClientRegistration(client_id, client_secret, token_endpoint_auth_method)
        self._id_token = id_token
        self._idp_token_endpoint = idp_token_endpoint
        self._idp_issuer = idp_issuer
        self._idp_client_id = idp_client_id
        self._idp_client_secret = idp_client_secret

    def _known_client(self, binding: _Binding, redirect_uri: Optional[str] = None) -> Optional[ClientRegistration]:
        return self._client

    def _idp_endpoint(self) -> Generator[HTTPRequest, HTTPResponse, str]:
        if self._idp_token_endpoint is None:
            assert self._idp_issuer is not None
            metadata = yield from self._fetch_authorization_server_metadata(self._idp_issuer)
            endpoint = metadata.get("token_endpoint")
            if not isinstance(endpoint, str):
                raise AuthError(f"the IdP {self._idp_issuer} has no token_endpoint")
            self._idp_token_endpoint = endpoint
        return self._idp_token_endpoint

    def _exchange_id_token(self, binding: _Binding, scopes: List[str]) -> Generator[HTTPRequest, HTTPResponse, str]:
        """RFC 8693 token exchange at the IdP: the user's ID token for an ID-JAG for this AS and resource."""
        endpoint = yield from self._idp_endpoint()
        assert binding.issuer is not None
        id_token = self._id_token() if callable(self._id_token) else self._id_token
        form = {
            "grant_type": TOKEN_EXCHANGE_GRANT, "requested_token_type": ID_JAG_TOKEN_TYPE,
            "audience": binding.issuer, "subject_token": id_token, "subject_token_type": ID_TOKEN_TYPE,
        }
        if binding.resource:
            form["resource"] = binding.resource
        if scopes:
            form["scope"] = " ".join(scopes)
        headers = {"Content-Type": _FORM, "Accept": _JSON_ACCEPT}
        if self._idp_client_id is not None and self._idp_client_secret is not None:
            headers["Authorization"] = _basic_credentials(self._idp_client_id, self._idp_client_secret)
        elif self._idp_client_id is not None:
            form["client_id"] = self._idp_client_id
        response = yield HTTPRequest("POST", endpoint, headers, urlencode(form).encode("ascii"))
        data = _json_object(response.body)
        if response.status != 200 or data is None:
            raise _oauth_error("the token exchange at the IdP", response.status, data)
        grant = data.get("access_token")
        if data.get("issued_token_type") != ID_JAG_TOKEN_TYPE or not isinstance(grant, str) or not grant:
            raise AuthError("the IdP's token exchange response holds no ID-JAG")
        return grant

    def _obtain_tokens(self, binding: _Binding, scopes: List[str]) -> Generator[HTTPRequest, HTTPResponse, Tokens]:
        grant = yield from self._exchange_id_token(binding, scopes)
        form = {"grant_type": JWT_BEARER_GRANT, "assertion": grant}
        if scopes:
            form["scope"] = " ".join(scopes)
        if binding.resource:
            form["resource"] = binding.resource
        return (yield from self._request_tokens(binding, form, self._client, scopes))
