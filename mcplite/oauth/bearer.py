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

Sender-constrained tokens (DPoP, RFC 9449, SEP-1932)::

    auth = BearerAuth(verify_token, resource=..., authorization_servers=[...], dpop="required", dpop_nonce=True)

With ``dpop="allowed"`` or ``"required"`` a request may (or must) present its token as ``Authorization: DPoP``
with a proof in the ``DPoP`` header. The proof is checked against the request (`mcplite.oauth.dpop.verify_proof`:
signature, ``htm``, ``htu``, ``ath``, ``iat`` within ``dpop_window``, a ``jti`` used once) and against the key
the token is bound to, which ``verify`` reports as the claim ``cnf.jkt`` (RFC 9449 §6; an introspection
response or a JWT access token carries it). A bound token presented as a plain bearer token is refused in every
mode. With ``dpop_nonce`` the server also makes clients sign a nonce it issued (``DPoP-Nonce``), which bounds a
proof's life more tightly than ``iat``. ``jti`` values are remembered in this process only: behind a load balancer,
a replay to another instance is caught only by ``iat`` (and nonces).
"""

import hmac
import json
import time
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union
from urllib.parse import urlsplit

from ..transports.http_messages import ChecksRequests, HTTPRefusal, PublishesRoutes
from . import dpop as dpop_proofs
from . import jose
from .challenge import BearerChallenge
from .rules import canonical_resource_uri, origin_of, path_of

__all__ = ["BearerAuth", "StaticTokenAuth", "protected_resource_metadata_path"]

#: What ``verify`` returns for a good token: its claims (RFC 7662 / RFC 9068 names), or None.
Claims = Mapping[str, Any]
#: The ``(status, headers, body)`` of a document served by `BearerAuth.well_known_routes`.
Document = Tuple[int, List[Tuple[str, str]], bytes]

_WELL_KNOWN = "/.well-known/oauth-protected-resource"


def protected_resource_metadata_path(resource: str) -> str:
    """The path of a resource's metadata document (RFC 9728 §3.1): the well-known segment, then the
    resource's own path (``https://host/mcp`` -> ``/.well-known/oauth-protected-resource/mcp``)."""
    return _WELL_KNOWN + path_of(resource)


#: The ``dpop`` modes of `BearerAuth`: bearer tokens only, both, DPoP-bound tokens only.
DPOP_MODES = ("off", "allowed", "required")


class StaticTokenAuth:
    """An ``authenticate`` hook that accepts fixed bearer tokens: ``Authorization: Bearer <token>``, one of
    ``tokens``. For a server only known clients reach (a gateway in a cluster, a tool on a team's network), where
    an authorization server would be too much; `BearerAuth` is the OAuth way.

        server.run(http="0.0.0.0:8000", authenticate=StaticTokenAuth({os.environ["MCP_TOKEN"]: "ci"}))

    Args:
        tokens: the tokens accepted, each with the principal it names (``{token: name}``; a list of tokens
            names them ``client-1``, ``client-2``... in order). The principal owns the sessions, tasks and
            ``requestState`` its requests open; handlers see ``{"sub": name}`` as `Context.auth`.

    A request without one of them is answered 401 with ``WWW-Authenticate: Bearer``. Every token is compared
    in constant time, and all of them each time, so the answer's timing tells nothing of a near miss.

    Raises:
        ValueError: no token, or one shorter than 16 characters (a token a person could guess).
    """

    def __init__(self, tokens: Union[Mapping[str, str], Sequence[str]]) -> None:
        named = dict(tokens) if isinstance(tokens, Mapping) else {
            token: f"client-{index}" for index, token in enumerate(tokens, 1)}
        if not named:
            raise ValueError("StaticTokenAuth needs at least one token")
        for token in named:
            if not isinstance(token, str) or len(token) < 16:
                raise ValueError("every token must be a string of at least 16 characters (secrets.token_urlsafe() "
                                 "gives one)")
        self._tokens = [(token.encode("utf-8"), name) for token, name in named.items()]

    def __call__(self, headers: Mapping[str, str]) -> Claims:
        scheme, _, presented = headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and presented.strip():
            candidate = presented.strip().encode("utf-8", "surrogatepass")
            found: Optional[str] = None
            for token, name in self._tokens:  # all of them, so that the time taken does not say which was near
                if hmac.compare_digest(candidate, token):
                    found = name
            if found is not None:
                return {"sub": found}
        raise HTTPRefusal(401, "a valid bearer token is required", www_authenticate='Bearer error="invalid_token"'
                          if presented.strip() else "Bearer")


class BearerAuth(PublishesRoutes, ChecksRequests):
    """An ``authenticate`` hook for `HTTPApp` that accepts ``Authorization: Bearer <token>``, and DPoP-bound
    tokens (``Authorization: DPoP <token>`` with a proof) when ``dpop`` is ``"allowed"`` or ``"required"``.

    Claims: ``verify`` returns a mapping for a good token. Its ``scope`` (a space-separated string, or a
    list) is compared with ``required_scopes``; when it has ``aud`` (RFC 7519: a string or a list) it
    must name ``resource``, and when it has ``exp`` (seconds since the epoch, a finite number) it must be
    in the future: a ``verify`` that returns an introspection response or a JWT's claims as they are gets
    those checks for free. The claims become `Context.auth` (``ctx.request_info.auth``).
    """

    def __init__(
        self, verify: Callable[[str], Optional[Claims]], *, resource: str, authorization_servers: Sequence[str],
        scopes_supported: Optional[Sequence[str]] = None, required_scopes: Sequence[str] = (),
        resource_name: Optional[str] = None, metadata: Optional[Mapping[str, Any]] = None,
        clock: Callable[[], float] = time.time, dpop: str = "off",
        dpop_nonce: Union[bool, dpop_proofs.NonceIssuer] = False,
        dpop_window: float = dpop_proofs.DEFAULT_WINDOW, dpop_algorithms: Sequence[str] = dpop_proofs.DPOP_ALGORITHMS,
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
            clock: the time source, for ``exp`` and DPoP proofs.
            dpop: ``"off"`` (bearer tokens only), ``"allowed"`` (bearer tokens and DPoP-bound ones) or
                ``"required"`` (DPoP-bound tokens only; the metadata says ``dpop_bound_access_tokens_required``).
            dpop_nonce: make DPoP clients sign a nonce this server issued (answered ``use_dpop_nonce`` with a
                ``DPoP-Nonce`` header until they do). True: stateless nonces under a secret of this process,
                valid ``dpop_window`` seconds; a `NonceIssuer` with a shared ``secret`` lets several instances
                behind one URL accept each other's nonces.
            dpop_window: how far a proof's ``iat`` may be from now, either way (SEP-1932: five minutes).
            dpop_algorithms: the proof algorithms accepted (at most ES256 and RS256).

        Raises:
            ValueError: ``resource`` is not an absolute http(s) URL, no authorization server is given, an
                unknown ``dpop`` mode, or a proof algorithm that cannot be verified.
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
        if dpop not in DPOP_MODES:
            raise ValueError(f"dpop must be one of {', '.join(DPOP_MODES)}, not {dpop!r}")
        unknown = [alg for alg in dpop_algorithms if alg not in dpop_proofs.DPOP_ALGORITHMS]
        if unknown or not dpop_algorithms:
            raise ValueError(f"DPoP proof algorithms must be among {' '.join(dpop_proofs.DPOP_ALGORITHMS)}")
        self.dpop = dpop
        self.dpop_algorithms = list(dpop_algorithms)
        self.dpop_window = dpop_window
        self._replay = dpop_proofs.ReplayCache(dpop_window)
        self._nonces: Optional[dpop_proofs.NonceIssuer] = None
        if isinstance(dpop_nonce, dpop_proofs.NonceIssuer):
            self._nonces = dpop_nonce
        elif dpop_nonce and dpop != "off":
            self._nonces = dpop_proofs.NonceIssuer(dpop_window)

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
        if self.dpop != "off":  # RFC 9728 §2
            document["dpop_signing_alg_values_supported"] = self.dpop_algorithms
            if self.dpop == "required":
                document["dpop_bound_access_tokens_required"] = True
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
        serve = self._serve_metadata
        return {_WELL_KNOWN: serve, protected_resource_metadata_path(self.resource): serve}

    def _serve_metadata(self, request: Any) -> Document:
        body = json.dumps(self.metadata()).encode("utf-8")
        return 200, [("Content-Type", "application/json"), ("Cache-Control", "max-age=3600")], body

    def __call__(self, headers: Mapping[str, str]) -> Claims:
        """Check a request's token, as if it were a POST to ``resource``; returns its claims. (`HTTPApp` calls
        `authenticate_request`, which knows the request's method and path, as DPoP proofs need.)

        Raises:
            HTTPRefusal: as `authenticate_request`.
        """
        return self.authenticate_request("POST", path_of(self.resource) or "/", headers)

    def authenticate_request(self, method: str, path: str, headers: Mapping[str, str]) -> Claims:
        """Check a request's token (and DPoP proof); returns the token's claims.

        Args:
            method: the request's HTTP method.
            path: the path it was sent to, without the query; with this server's origin (from ``resource``)
                it is the URL a proof's ``htu`` must name.
            headers: the request headers, with lower-case names.

        Raises:
            HTTPRefusal: 401 without a valid token (``error="invalid_token"`` when one was sent; for DPoP,
                ``invalid_dpop_proof`` or ``use_dpop_nonce`` with a ``DPoP-Nonce`` header), 403
                ``insufficient_scope`` when it lacks a required scope.
        """
        scheme, _, token = headers.get("authorization", "").strip().partition(" ")
        scheme, token = scheme.lower(), token.strip()
        dpop_used = scheme == "dpop" and self.dpop != "off"
        if not token or not (dpop_used or (scheme == "bearer" and self.dpop != "required")):
            # RFC 6750 §3.1: no error code when the request carried no (acceptable) credentials.
            what = "a DPoP-bound token" if self.dpop == "required" else "a bearer token"
            raise self._refusal(401, f"Unauthorized: {what} is required")
        claims = self.verify(token)
        if claims is None or not self._audience_ok(claims) or self._expired(claims):
            raise self._refusal(401, "Unauthorized: the access token is not valid", error="invalid_token",
                                dpop_used=dpop_used)
        bound_to = _bound_key(claims)
        if dpop_used:
            if bound_to is None:
                raise self._refusal(401, "Unauthorized: the access token is not DPoP-bound", error="invalid_token",
                                    dpop_used=True)
            self._check_proof(method, path, headers, token, bound_to)
        elif bound_to is not None:
            # RFC 9449 §7.2: a DPoP-bound token presented as a bearer token may have been stolen.
            raise self._refusal(401, "Unauthorized: a DPoP-bound token must be sent with the DPoP scheme",
                                error="invalid_token")
        missing = [scope for scope in self.required_scopes if scope not in _scopes_of(claims)]
        if missing:
            raise self._refusal(403, f"Forbidden: the token lacks scope {' '.join(missing)}",
                                error="insufficient_scope", dpop_used=dpop_used)
        return claims

    def _check_proof(self, method: str, path: str, headers: Mapping[str, str], token: str, jkt: str) -> None:
        now = self._clock()
        nonces = self._nonces
        try:
            dpop_proofs.verify_proof(
                headers.get("dpop"), method=method, url=origin_of(self.resource) + path, now=now,
                access_token=token, jkt=jkt, window=self.dpop_window, algorithms=self.dpop_algorithms,
                nonce_valid=(lambda nonce: nonces.is_valid(nonce, now)) if nonces is not None else None,
                replay=self._replay,
            )
        except dpop_proofs.DPoPProofError as refused:
            raise self._refusal(401, f"Unauthorized: {refused.description}", error=refused.error,
                                description=refused.description, dpop_used=True) from None

    def _refusal(self, status: int, message: str, error: Optional[str] = None, *, description: Optional[str] = None,
                 dpop_used: bool = False) -> HTTPRefusal:
        """The refusal with the challenges the request calls for (RFC 6750 §3, RFC 9449 §7.1): the error goes
        in the challenge of the scheme the client used; a request with no credentials gets a challenge for
        each scheme this server takes. A DPoP challenge comes with a fresh nonce when nonces are required."""
        scope = " ".join(self.required_scopes) or None
        challenges: List[BearerChallenge] = []
        if self.dpop != "off" and (dpop_used or error is None):
            challenges.append(BearerChallenge(
                scheme="DPoP", error=error if dpop_used else None, error_description=description if dpop_used else None,
                scope=scope, resource_metadata=self.resource_metadata_url, algs=" ".join(self.dpop_algorithms)))
        if self.dpop != "required" and not dpop_used:
            challenges.append(BearerChallenge(error=error, scope=scope, resource_metadata=self.resource_metadata_url))
        refusal = HTTPRefusal(status, message, headers=[("WWW-Authenticate", c.to_header()) for c in challenges])
        if self._nonces is not None and any(c.scheme == "DPoP" for c in challenges):
            refusal.headers.append(("DPoP-Nonce", self._nonces.issue(self._clock())))
        return refusal

    def _audience_ok(self, claims: Claims) -> bool:
        audience = claims.get("aud")
        if audience is None:
            return True  # verify() vouched for the token and its claims name no audience to compare
        audiences = [audience] if isinstance(audience, str) else audience
        return isinstance(audiences, list) and any(
            isinstance(a, str) and canonical_resource_uri(a) == self.resource for a in audiences)

    def _expired(self, claims: Claims) -> bool:
        """Whether the claims' ``exp`` has passed; an ``exp`` that is not a finite number (a string, NaN, a
        bool: what a careless ``verify`` may pass on) counts as passed rather than as never; null as absent."""
        if "exp" not in claims or claims["exp"] is None:
            return False
        try:
            expires = jose.numeric_date(claims, "exp")
        except jose.JWTError:
            return True
        return expires is not None and self._clock() >= expires


def _bound_key(claims: Claims) -> Optional[str]:
    """The thumbprint a token is bound to: its ``cnf.jkt`` (RFC 9449 §6), or None."""
    confirmation = claims.get("cnf")
    jkt = confirmation.get("jkt") if isinstance(confirmation, Mapping) else None
    return jkt if isinstance(jkt, str) and jkt else None


def _scopes_of(claims: Claims) -> List[str]:
    scope = claims.get("scope")
    if isinstance(scope, str):
        return scope.split()
    if isinstance(scope, list):
        return [item for item in scope if isinstance(item, str)]
    return []
