"""OAuth 2.1 for MCP: the client (discovery, registration, PKCE sign-in, refresh, step-up) as an I/O-free
flow, and the server's bearer token check.

Clients::

    Client("https://host/mcp", auth=OAuth())                          # a user signs in at a browser
    Client(url, auth=OAuth(storage=FileTokenStorage(user_token_file())))  # ... and stays signed in
    Client(url, auth=ClientCredentials(client_id=..., client_secret=...))  # a machine
    Client(url, auth=JWTBearer(assertion_file="/var/run/secrets/tokens/mcp"))  # a workload (SEP-1933)

Servers::

    server.run(http="0.0.0.0:8000", allowed_hosts=["host"],
               authenticate=BearerAuth(verify, resource="https://host/mcp",
                                       authorization_servers=["https://auth.example"]))

This module exports what a user configures: the grants, token storage, the browser step, `drive` (running
a flow with `http.client`) and, on the server, `BearerAuth` and its `NonceIssuer`. The rest (the spec's
rules as functions, challenge parsing, PKCE, DPoP proofs by hand, the grants' base class) is
`mcplite.oauth.advanced`; imported from here, its names still work until 0.2, with a `DeprecationWarning`.

Where the protocol revisions differ (VERSIONS.md §3), the choice is made in `rules`, in small functions
named after the rule, so each can be checked against the spec text. The modules, bottom up:

- `records` (tokens, registrations, the authorization redirect), `challenge` (``WWW-Authenticate``),
  `pkce`, `rules` (the spec's rules and the per-revision `AUTH_RULES`), `client_auth` (authenticating at
  the token endpoint), `destinations` (where a server may send the client: checked before any URL a server
  names is used), `storage` (where sign-ins are kept);
- `flow`: `BaseOAuth.auth_flow`, the generator every grant shares; `grants`: `OAuth`,
  `ClientCredentials`, `CrossAppAccess`, `JWTBearer`; `dpop`: DPoP proofs, made and checked;
- I/O: `loopback` (the browser and its redirect), `driver` (running a flow with `http.client`);
- the server side: `bearer` (`BearerAuth`, and `StaticTokenAuth` for fixed tokens).
"""

from .._deprecated import deprecated_names
from ..transports.http_messages import HTTPRequest, HTTPResponse
from . import advanced
from .bearer import BearerAuth, StaticTokenAuth
from .dpop import NonceIssuer
from .driver import drive
from .flow import TokenRequestRefused
from .grants import ClientCredentials, CrossAppAccess, JWTBearer, OAuth
from .loopback import AuthorizeCallback, BrowserAuthorizer
from .records import AuthorizationResponse, ClientRegistration, Tokens
from .storage import FileTokenStorage, MemoryTokenStorage, TokenStorage, user_token_file

__all__ = [
    # the grants
    "OAuth", "ClientCredentials", "CrossAppAccess", "JWTBearer", "TokenRequestRefused",
    # where sign-ins are kept
    "TokenStorage", "MemoryTokenStorage", "FileTokenStorage", "user_token_file", "Tokens", "ClientRegistration",
    # the user's step in a browser
    "AuthorizeCallback", "AuthorizationResponse", "BrowserAuthorizer",
    # running a flow elsewhere than in a Client
    "drive", "HTTPRequest", "HTTPResponse",
    # the server side
    "BearerAuth", "StaticTokenAuth", "NonceIssuer",
]


__getattr__ = deprecated_names(__name__, {
    name: (getattr(advanced, name), "import it from mcplite.oauth.advanced (the old path goes in mcplite 0.2)")
    for name in advanced.__all__})
