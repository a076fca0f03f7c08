"""The server side: protect an MCP endpoint with bearer tokens, as an OAuth resource server (2025-06-18 on).

    auth = BearerAuth(verify_token, resource="https://mcp.example.com/mcp",
                      authorization_servers=["https://auth.example.com"], required_scopes=["mcp"])
    server.run(http="0.0.0.0:8000", authenticate=auth)      # HTTPApp(server, authenticate=auth) alike

`BearerAuth` is `HTTPApp`'s ``authenticate`` hook. It answers a request without a valid token with 401 and
``WWW-Authenticate: Bearer resource_metadata="...", scope="..."``, one whose token lacks a required scope
with 403 ``error="insufficient_scope"``, and serves the RFC 9728 protected resource metadata document at
its well-known URLs, so clients can find the authorization server. Handlers see the token's claims as
`Context.auth`.

Checking the token itself is the ``verify`` callable's job: introspect it at the authorization server
(RFC 7662), or verify a JWT (RFC 9068) with `mcplite.jose.jwt_decode`. It must check that the token was
issued for this server (its audience): the spec forbids accepting tokens meant for others.
"""

import json
import time
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple
from urllib.parse import urlsplit

from ..transports.http_messages import HTTPRefusal, PublishesRoutes
from .challenge import BearerChallenge
from .rules import canonical_resource_uri, origin_of, path_of

__all__ = ["BearerAuth", "protected_resource_metadata_path"]

#: What ``verify`` returns for a good token: its claims (RFC 7662 / RFC 9068 names), or None.
Claims = Mapping[str, Any]
#: The ``(status, headers, body)`` of a document served by `BearerAuth.well_known_routes`.
Document = Tuple[int, List[Tuple[str, str]], bytes]

_WELL_KNOWN = "/.well-known/oauth-protected-resource"


def protected_resource_metadata_path(resource: str) -> str:
    """The path of a resource's metadata document (RFC 9728 §3.1): the well-known segment, then the
    resource's own path (``https://host/mcp`` -> ``/.well-known/oauth-protected-resource/mcp``)."""
    return _WELL_KNOWN + path_of(resource)


class BearerAuth(PublishesRoutes):
    """An ``authenticate`` hook for `HTTPApp` that accepts ``Authorization: Bearer <token>``.

    Claims: ``verify`` returns a mapping for a good token. Its ``scope`` (a space-separated string, or a
    list) is compared with ``required_scopes``; when it has ``aud`` (RFC 7519: a string or a list) it
    must name ``resource``, and when it has ``exp`` (seconds since the epoch) it must be in the future:
    a ``verify`` that returns an introspection response or a JWT's claims as they are gets those checks
    for free. The claims become `Context.auth` (``ctx.request_info.auth``).
    """

    def __init__(
        self, verify: Callable[[str], Optional[Claims]], *, resource: str, authorization_servers: Sequence[str],
        scopes_supported: Optional[Sequence[str]] = None, required_scopes: Sequence[str] = (),
        resource_name: Optional[str] = None, metadata: Optional[Mapping[str, Any]] = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """Args:
            verify: takes the token and returns its claims, or None when it is not valid (unknown,
                revoked, expired, issued for another resource).
            resource: this MCP server's URL as clients use it (``https://host/mcp``): the resource
                identifier of RFC 8707/9728, and where the metadata URL is derived from.
            authorization_servers: issuer URLs of the authorization servers that issue its tokens.
            scopes_supported: the scopes to advertise in the metadata (default: ``required_scopes``).
            required_scopes: scopes every request needs; named in every challenge.
            resource_name: a human-readable name for the metadata.
            metadata: more RFC 9728 fields for the metadata document (they override the computed ones).
            clock: the time source, for ``exp``.

        Raises:
            ValueError: ``resource`` is not an absolute http(s) URL, or no authorization server is given.
        """
        parts = urlsplit(resource)
        if parts.scheme.lower() not in ("https", "http") or not parts.hostname:
            raise ValueError(f"resource must be an absolute http(s) URL, not {resource!r}")
        if not authorization_servers:
            raise ValueError("at least one authorization server is needed (RFC 9728, MCP 2025-06-18)")
        self.verify = verify
        self.resource = canonical_resource_uri(resource)
        self.authorization_servers = list(authorization_servers)
        self.required_scopes = list(required_scopes)
        self.scopes_supported = list(scopes_supported) if scopes_supported is not None else list(required_scopes)
        self.resource_name = resource_name
        self.extra_metadata = dict(metadata or {})
        self._clock = clock

    @property
    def resource_metadata_url(self) -> str:
        """Where the metadata document is: the URL every challenge names."""
        return origin_of(self.resource) + protected_resource_metadata_path(self.resource)

    def metadata(self) -> Dict[str, Any]:
        """The protected resource metadata document (RFC 9728 §2)."""
        document: Dict[str, Any] = {
            "resource": self.resource,
            "authorization_servers": self.authorization_servers,
            "bearer_methods_supported": ["header"],  # MCP: never in the query string
        }
        if self.scopes_supported:
            document["scopes_supported"] = self.scopes_supported
        if self.resource_name is not None:
            document["resource_name"] = self.resource_name
        document.update(self.extra_metadata)
        return document

    def well_known_routes(self) -> Dict[str, Callable[[Any], Document]]:
        """The metadata document's paths (for `HTTPApp`'s ``routes``): path-specific and root.

        Clients try the URL from the challenge first, then the path-specific well-known URL, then the
        root one (2025-11-25); serving both helps clients that skip the challenge's URL.
        """
        routes: Dict[str, Callable[[Any], Document]] = {_WELL_KNOWN: self._serve_metadata}
        routes[protected_resource_metadata_path(self.resource)] = self._serve_metadata
        return routes

    def _serve_metadata(self, request: Any) -> Document:
        body = json.dumps(self.metadata()).encode("utf-8")
        return 200, [("Content-Type", "application/json"), ("Cache-Control", "max-age=3600")], body

    def __call__(self, headers: Mapping[str, str]) -> Claims:
        """Check a request's token; returns its claims.

        Args:
            headers: the request headers, with lower-case names.

        Raises:
            HTTPRefusal: 401 without a valid token (``error="invalid_token"`` when one was sent),
                403 ``insufficient_scope`` when it lacks a required scope.
        """
        scheme, _, token = headers.get("authorization", "").strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            # RFC 6750 §3.1: no error code when the request carried no credentials at all.
            raise self._refusal(401, "Unauthorized: a bearer token is required")
        claims = self.verify(token)
        if claims is None or not self._audience_ok(claims) or self._expired(claims):
            raise self._refusal(401, "Unauthorized: the bearer token is not valid", error="invalid_token")
        missing = [scope for scope in self.required_scopes if scope not in _scopes_of(claims)]
        if missing:
            raise self._refusal(403, f"Forbidden: the token lacks scope {' '.join(missing)}",
                                error="insufficient_scope")
        return claims

    def _refusal(self, status: int, message: str, error: Optional[str] = None) -> HTTPRefusal:
        challenge = BearerChallenge(
            error=error, scope=" ".join(self.required_scopes) or None, resource_metadata=self.resource_metadata_url,
        )
        return HTTPRefusal(status, message, www_authenticate=challenge.to_header())

    def _audience_ok(self, claims: Claims) -> bool:
        audience = claims.get("aud")
        if audience is None:
            return True  # verify() vouched for the token and its claims name no audience to compare
        audiences = [audience] if isinstance(audience, str) else audience
        return isinstance(audiences, list) and any(
            isinstance(a, str) and canonical_resource_uri(a) == self.resource for a in audiences)

    def _expired(self, claims: Claims) -> bool:
        expires = claims.get("exp")
        return isinstance(expires, (int, float)) and not isinstance(expires, bool) and self._clock() >= expires


def _scopes_of(claims: Claims) -> List[str]:
    scope = claims.get("scope")
    if isinstance(scope, str):
        return scope.split()
    if isinstance(scope, list):
        return [item for item in scope if isinstance(item, str)]
    return []
