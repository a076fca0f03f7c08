"""The client-side rules of the MCP authorization spec, one small pure function each (VERSIONS.md §3).

Each function is named after the rule it implements and says where the rule comes from, so it can be
checked against the spec text. Where revisions differ, the difference is a field of `AuthRules`, one row
per revision in `AUTH_RULES`, the way `mcplite.protocol.versions` holds the protocol's own per-revision rules.
"""

import ipaddress
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence
from urllib.parse import urlsplit, urlunsplit

from ..errors import AuthError
from ..protocol.versions import LATEST_HANDSHAKE_VERSION, RevisionRecord, by_version
from ..transports.http_messages import LOOPBACK_HOSTNAMES
from .records import AuthorizationResponse

__all__ = [
    "AuthRules", "AUTH_RULES", "auth_rules", "DEFAULT_PROTOCOL_VERSION",
    "canonical_resource_uri", "resource_matches", "protected_resource_metadata_urls",
    "authorization_server_metadata_urls", "legacy_metadata_url", "legacy_default_endpoints",
    "check_protected_resource_metadata", "check_metadata_issuer", "check_legacy_metadata_issuer",
    "check_pkce_support", "check_authorization_response_issuer", "check_authorization_response",
    "check_client_issuer", "select_scopes", "add_step_up_scopes", "apply_offline_access", "application_type_for",
]

#: The revision whose rules an auth object follows unless told otherwise: the one `Client` offers by default.
DEFAULT_PROTOCOL_VERSION = LATEST_HANDSHAKE_VERSION


class AuthRules(RevisionRecord):
    """Where one revision's authorization rules for clients differ from the others'.

    Discovery is deliberately not here: it happens before the revision is negotiated (the first request
    is what gets the 401), so it always tries the URLs of every revision, in the order of VERSIONS.md §3
    "Discovery URL order for a multi-version client".

    Enforced in every revision, because the underlying RFCs already require them (MCP 2026-07-28 restates
    the first two as MUST): the metadata ``issuer`` equals the issuer the URL was built from (RFC 8414
    §3.3), the RFC 9207 ``iss`` table, ``state`` (OAuth 2.1 §4.1.2), PKCE with S256 (MCP 2025-03-26 on).
    A server of an older revision loses nothing by it: an authorization server that advertises
    ``authorization_response_iss_parameter_supported`` has promised ``iss`` whatever MCP revision its
    resource speaks (the conformance suite's 2025-11-25 mock does advertise it, and sends the right one).

    Also in every revision, from 2026-07-28's rules (client-registration.mdx "Authorization Server
    Binding"), because they only ever withhold credentials from a server they were not issued by:
    credentials and registrations are kept per issuer, a pre-registered client is bound to one issuer
    (`check_client_issuer`), and dynamic registration sends ``application_type`` (which RFC 7591 §2 tells
    servers that do not know it to ignore).
    """

    version: str
    #: RFC 8707 ``resource`` on the authorization and token requests even when the server has no
    #: protected resource metadata (the 2025-03-26 fallback). MUST from 2025-06-18; sent whenever
    #: protected resource metadata was found, in every revision.
    resource_parameter: bool
    #: Refuse to authorize when AS metadata lacks ``code_challenge_methods_supported`` (2025-11-25).
    pkce_methods_advertised: bool


# Oldest first, one row per revision of `mcplite.protocol.versions.REVISIONS` (tests/test_oauth_rules.py).
AUTH_RULES: Dict[str, AuthRules] = by_version((
    # 2024-11-05 has no authorization framework; a client that speaks it gets the oldest one there is.
    AuthRules(version="2024-11-05", resource_parameter=False, pkce_methods_advertised=False),
    AuthRules(version="2025-03-26", resource_parameter=False, pkce_methods_advertised=False),
    AuthRules(version="2025-06-18", resource_parameter=True, pkce_methods_advertised=False),
    AuthRules(version="2025-11-25", resource_parameter=True, pkce_methods_advertised=True),
    # 2026-07-28 restates both as MUST (authorization/index.mdx); its other rules (issuer checks) hold in
    # every revision already (the class docstring).
    AuthRules(version="2026-07-28", resource_parameter=True, pkce_methods_advertised=True),
))


def auth_rules(protocol_version: str) -> AuthRules:
    """The rules for a client speaking ``protocol_version``.

    Raises:
        ValueError: a revision this package does not speak.
    """
    try:
        return AUTH_RULES[protocol_version]
    except KeyError:
        raise ValueError(
            f"unsupported protocol version {protocol_version!r} (one of {', '.join(reversed(AUTH_RULES))})"
        ) from None


# ---- URLs -------------------------------------------------------------------------------------------

_DEFAULT_PORTS = {"http": 80, "https": 443}


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


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` of a URL, canonicalized."""
    parts = urlsplit(canonical_resource_uri(url))
    return f"{parts.scheme}://{parts.netloc}"


def path_of(url: str) -> str:
    """The path of a URL without its trailing "/": RFC 8414 §3.1 and RFC 9728 §3.1 remove it before
    inserting the well-known segment."""
    return urlsplit(url).path.rstrip("/")


def resource_matches(metadata_resource: str, server_url: str) -> bool:
    """True when a protected resource metadata ``resource`` names this MCP server.

    Same origin, and the metadata's path is the server's path or one of its parents (segment-wise), so a
    resource of ``https://host`` covers ``https://host/mcp`` but ``https://host/mc`` does not.
    """
    if origin_of(metadata_resource) != origin_of(server_url):
        return False
    prefix = path_of(metadata_resource)
    path = path_of(server_url)
    return path == prefix or path.startswith(prefix + "/")


def is_http_url(value: Any) -> bool:
    """True for an absolute http(s) URL with a host and a valid port, in visible ASCII: what can go on a
    request line as it is. URLs taken from what servers send are checked with it before they are requested."""
    if not isinstance(value, str) or not (value.isascii() and value.isprintable()) or " " in value:
        return False
    try:
        parts = urlsplit(value)
        parts.port  # raises ValueError for a port that is not a number in range
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)


def protected_resource_metadata_urls(server_url: str, challenge_url: Optional[str] = None) -> List[str]:
    """Where to look for RFC 9728 protected resource metadata, in order.

    1. ``resource_metadata`` from the 401's ``WWW-Authenticate`` (2025-06-18 on), unless it is no http(s)
       URL (`is_http_url`): then it is skipped like an absent one;
    2. the path-specific well-known URL, when the server URL has a path (2025-11-25 on);
    3. the root well-known URL (2025-11-25 on).
    """
    origin, path = origin_of(server_url), path_of(server_url)
    candidates = [challenge_url] if challenge_url is not None and is_http_url(challenge_url) else []
    if path:
        candidates.append(f"{origin}/.well-known/oauth-protected-resource{path}")
    candidates.append(f"{origin}/.well-known/oauth-protected-resource")
    return unique(candidates)


def authorization_server_metadata_urls(issuer: str) -> List[str]:
    """Where to look for an authorization server's metadata, in order (2025-11-25 authorization.mdx).

    For an issuer with a path, ``https://as/tenant``: the RFC 8414 URL with the path appended after the
    well-known segment, then OpenID Connect Discovery the same way, then OIDC with the well-known segment
    appended to the issuer. Without a path: RFC 8414 then OIDC. (2025-06-18 defines only the first URL;
    trying the others costs a 404 on such servers.)
    """
    origin, path = origin_of(issuer), path_of(issuer)
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
    return f"{origin_of(server_url)}/.well-known/oauth-authorization-server"


def legacy_default_endpoints(server_url: str) -> Dict[str, str]:
    """2025-03-26 fallback when that metadata is 404 too: default endpoints at the authorization base URL.

    Returned as metadata, with the base URL as ``issuer``.
    """
    base = origin_of(server_url)
    return {
        "issuer": base,
        "authorization_endpoint": f"{base}/authorize",
        "token_endpoint": f"{base}/token",
        "registration_endpoint": f"{base}/register",
    }


# ---- checks on what the servers say -----------------------------------------------------------------

def check_protected_resource_metadata(document: Mapping[str, Any], server_url: str) -> None:
    """Refuse protected resource metadata that is not about this server or names no authorization server.

    Raises:
        AuthError: ``resource`` missing or not matching the server (RFC 9728 §3.3, RFC 8707), an empty
        ``authorization_servers`` (2025-06-18: MUST list at least one), or one listed that is not an http(s)
        URL (`is_http_url`; its metadata URLs are built from it).
    """
    resource = document.get("resource")
    if not isinstance(resource, str) or not is_http_url(resource) or not resource_matches(resource, server_url):
        raise AuthError(
            f"protected resource metadata is for {resource!r}, not {canonical_resource_uri(server_url)}; "
            "refusing to use it"
        )
    servers = document.get("authorization_servers")
    if not isinstance(servers, list) or not servers or not all(isinstance(s, str) for s in servers):
        raise AuthError("protected resource metadata lists no authorization_servers")
    unusable = next((s for s in servers if not is_http_url(s)), None)
    if unusable is not None:
        raise AuthError(f"protected resource metadata lists authorization_servers {unusable[:80]!r}, which is not "
                        "an http(s) URL; refusing to use it")


#: Authorization server metadata members that are lists of strings (RFC 8414 §2, RFC 9449 §5.1).
METADATA_LIST_MEMBERS = (
    "scopes_supported", "response_types_supported", "grant_types_supported", "token_endpoint_auth_methods_supported",
    "token_endpoint_auth_signing_alg_values_supported", "code_challenge_methods_supported",
    "dpop_signing_alg_values_supported",
)


def without_malformed_lists(metadata: Mapping[str, Any]) -> Dict[str, Any]:
    """``metadata`` with each of `METADATA_LIST_MEMBERS` that is not a list dropped (as if absent) and the
    others reduced to their strings: what follows tests membership (``"none" in supported``), which a number
    or a string in their place would break or fool."""
    usable = dict(metadata)
    for name in METADATA_LIST_MEMBERS:
        if name in usable:
            value = usable[name]
            if isinstance(value, list):
                usable[name] = [item for item in value if isinstance(item, str)]
            else:
                del usable[name]
    return usable


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


def check_legacy_metadata_issuer(metadata: Mapping[str, Any], server_url: str) -> str:
    """The issuer of metadata found by the 2025-03-26 fallback, which must be on the MCP server's origin.

    2025-03-26 puts the metadata at the MCP server's origin whatever the issuer is called (its issuer
    may have a path, ``https://host/oauth``), so there is no issuer to compare with exactly; the
    document's own is adopted, as long as it is on the origin the document came from, so that another
    server cannot be named.

    Returns:
        The issuer, for keying credentials and for the RFC 9207 ``iss`` check.

    Raises:
        AuthError: no issuer, or one on another origin.
    """
    issuer = metadata.get("issuer")
    if not isinstance(issuer, str) or not issuer or origin_of(issuer) != origin_of(server_url):
        raise AuthError(
            f"authorization server metadata at {legacy_metadata_url(server_url)} has issuer {issuer!r}, "
            f"not on {origin_of(server_url)}; refusing to use it"
        )
    return issuer


def check_pkce_support(metadata: Mapping[str, Any], rules: AuthRules) -> None:
    """PKCE with S256 only. From 2025-11-25 the metadata MUST advertise it; earlier revisions tolerate a
    metadata document that is silent (PKCE is still sent: 2025-03-26 makes it REQUIRED for every AS).

    Raises:
        AuthError: ``code_challenge_methods_supported`` lacks S256, or is absent under 2025-11-25 or later.
    """
    methods = metadata.get("code_challenge_methods_supported")
    if methods is None:
        if rules.pkce_methods_advertised:
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
            raise AuthError(
                f"the authorization response has no iss parameter, though its authorization server advertises "
                f"authorization_response_iss_parameter_supported (expected iss {issuer!r}, received none); "
                "refusing it before redeeming the code"
            )
        return
    if iss != issuer:
        raise AuthError(
            f"the authorization response names issuer {iss!r}, but the request went to {issuer!r} (RFC 9207, "
            "compared exactly); refusing it before redeeming the code: another authorization server may "
            "be posing as this one"
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


def check_client_issuer(client_id: str, registered_with: str, issuer: str) -> None:
    """Client credentials are used only with the authorization server that issued them (MCP 2026-07-28
    client-registration.mdx, "Authorization Server Binding"; SEP-2352): a pre-registered client whose
    server is no longer the one protected resource metadata names is an error, not a silent retry there.

    Raises:
        AuthError: ``issuer`` is not ``registered_with`` (exact string comparison, as issuers are compared).
    """
    if issuer != registered_with:
        raise AuthError(
            f"client {client_id!r} is registered with the authorization server {registered_with!r}, but the "
            f"server now names {issuer!r}; its credentials are never presented to another authorization "
            "server (give a client for the new one, or none to register there)"
        )


# ---- what to ask for --------------------------------------------------------------------------------

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
            return unique(candidate)
    return []


def add_step_up_scopes(previous: Sequence[str], challenged: Sequence[str]) -> List[str]:
    """Step-up after 403 ``insufficient_scope``: the union of what was requested before and what the
    challenge asks for (2026-07-28), so that stepping up never loses a scope."""
    return unique(list(previous) + list(challenged))


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
    §2).

    Loopback is ``localhost`` and its subdomains (RFC 6761 §6.3), and any loopback address (127.0.0.0/8,
    ``::1``), not only the spellings the HTTP server accepts by default.
    """
    parts = urlsplit(redirect_uri)
    if parts.scheme not in ("http", "https"):
        return "native"
    host = (parts.hostname or "").lower()
    if host in LOOPBACK_HOSTNAMES or host.endswith(".localhost"):
        return "native"
    try:
        return "native" if ipaddress.ip_address(host).is_loopback else "web"
    except ValueError:  # a host name
        return "web"


def unique(items: Iterable[str]) -> List[str]:
    """``items`` without repeats, in first-seen order."""
    return list(dict.fromkeys(items))
