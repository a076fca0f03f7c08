"""OAuth 2.1 for MCP: the client (discovery, registration, PKCE sign-in, refresh, step-up) as an I/O-free
flow, and the server's bearer token check.

Clients::

    Client("https://host/mcp", auth=OAuth())                          # a user signs in at a browser
    Client(url, auth=OAuth(storage=FileTokenStorage(user_token_file())))  # ... and stays signed in
    Client(url, auth=ClientCredentials(client_id=..., client_secret=...))  # a machine
    Client(url, auth=JWTBearer(assertion_file="/var/run/secrets/tokens/mcp"))  # a workload (SEP-1933)

Servers::

    HTTPApp(server, authenticate=BearerAuth(verify, resource="https://host/mcp",
                                            authorization_servers=["https://auth.example"]))

Where the protocol revisions differ (VERSIONS.md §3), the choice is made in `rules`, in small functions
named after the rule, so each can be checked against the spec text. The modules, bottom up:

- `records` (tokens, registrations, the authorization redirect), `challenge` (``WWW-Authenticate``),
  `pkce`, `rules` (the spec's rules and the per-revision `AUTH_RULES`), `client_auth` (authenticating at
  the token endpoint), `destinations` (where a server may send the client: checked before any URL a server
  names is used), `storage` (where sign-ins are kept);
- `flow`: `BaseOAuth.auth_flow`, the generator every grant shares; `grants`: `OAuth`,
  `ClientCredentials`, `CrossAppAccess`, `JWTBearer`; `dpop`: DPoP proofs, made and checked;
- I/O: `loopback` (the browser and its redirect), `driver` (running a flow with `http.client`);
- the server side: `bearer` (`BearerAuth`).
"""

from ..transports.http_messages import AuthFlow, HTTPRequest, HTTPResponse
from .bearer import BearerAuth, protected_resource_metadata_path
from .challenge import BearerChallenge, is_insufficient_scope, parse_auth_challenge, parse_bearer_challenge
from .client_auth import JWT_BEARER_ASSERTION_TYPE, choose_token_endpoint_auth_method, client_assertion
from .dpop import DPoPProofError, NonceIssuer, ReplayCache, jwk_thumbprint, make_proof, verify_proof
from .driver import drive, send_with_http_client
from .flow import BaseOAuth, TokenRequestRefused
from .grants import (
    ID_JAG_TOKEN_TYPE,
    ID_TOKEN_TYPE,
    JWT_BEARER_GRANT,
    TOKEN_EXCHANGE_GRANT,
    ClientCredentials,
    CrossAppAccess,
    JWTBearer,
    OAuth,
)
from .loopback import AuthorizeCallback, BrowserAuthorizer, LoopbackRedirectCatcher
from .pkce import pkce_challenge, pkce_pair
from .records import AuthorizationResponse, ClientRegistration, Tokens
from .rules import (
    AUTH_RULES,
    DEFAULT_PROTOCOL_VERSION,
    AuthRules,
    add_step_up_scopes,
    application_type_for,
    apply_offline_access,
    auth_rules,
    authorization_server_metadata_urls,
    canonical_resource_uri,
    check_authorization_response,
    check_authorization_response_issuer,
    check_client_issuer,
    check_legacy_metadata_issuer,
    check_metadata_issuer,
    check_pkce_support,
    check_protected_resource_metadata,
    legacy_default_endpoints,
    legacy_metadata_url,
    protected_resource_metadata_urls,
    resource_matches,
    select_scopes,
)
from .storage import FileTokenStorage, MemoryTokenStorage, TokenStorage, user_token_file

__all__ = [
    # the grants, and what they share
    "OAuth", "ClientCredentials", "CrossAppAccess", "JWTBearer", "BaseOAuth", "TokenRequestRefused",
    "TokenStorage", "MemoryTokenStorage", "FileTokenStorage", "user_token_file",
    "AuthorizeCallback", "BrowserAuthorizer", "LoopbackRedirectCatcher",
    "Tokens", "ClientRegistration", "AuthorizationResponse",
    # running a flow
    "HTTPRequest", "HTTPResponse", "AuthFlow", "drive", "send_with_http_client",
    # the server side
    "BearerAuth", "protected_resource_metadata_path",
    # DPoP (RFC 9449): proofs made and checked
    "make_proof", "verify_proof", "DPoPProofError", "ReplayCache", "NonceIssuer", "jwk_thumbprint",
    # the spec's rules
    "DEFAULT_PROTOCOL_VERSION", "AuthRules", "AUTH_RULES", "auth_rules",
    "canonical_resource_uri", "resource_matches", "protected_resource_metadata_urls",
    "authorization_server_metadata_urls", "legacy_metadata_url", "legacy_default_endpoints",
    "check_protected_resource_metadata", "check_metadata_issuer", "check_legacy_metadata_issuer",
    "check_pkce_support", "check_authorization_response", "check_authorization_response_issuer",
    "check_client_issuer", "select_scopes", "add_step_up_scopes", "apply_offline_access", "application_type_for",
    "choose_token_endpoint_auth_method",
    "BearerChallenge", "parse_bearer_challenge", "parse_auth_challenge", "is_insufficient_scope",
    "pkce_pair", "pkce_challenge", "client_assertion",
    "JWT_BEARER_ASSERTION_TYPE", "TOKEN_EXCHANGE_GRANT", "JWT_BEARER_GRANT", "ID_TOKEN_TYPE", "ID_JAG_TOKEN_TYPE",
]
