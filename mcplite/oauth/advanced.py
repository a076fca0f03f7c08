"""`mcplite.oauth.advanced`: the parts of the OAuth client and server that most users never name.

`mcplite.oauth` exports what a user configures: the grants, token storage, the browser step, `drive`, and the
server's `BearerAuth`. This module gathers the rest, for those who build on the pieces: the specification's
rules as small functions (each named after the rule, checkable against the spec text), the parsing of
``WWW-Authenticate`` challenges, PKCE, client assertions, DPoP proofs made and checked by hand, the base
class of the grants, and the constants of the extension grants. Nothing here is needed to sign in or to
check tokens; it is public and documented (docs/api.md, "OAuth, advanced"), but it changes more readily
than `mcplite.oauth`. The code lives in the modules of `mcplite.oauth`; this module only re-exports it.
"""

from ..transports.http_messages import AuthFlow
from .bearer import protected_resource_metadata_path
from .challenge import BearerChallenge, is_insufficient_scope, parse_auth_challenge, parse_bearer_challenge
from .client_auth import JWT_BEARER_ASSERTION_TYPE, choose_token_endpoint_auth_method, client_assertion
from .dpop import DPoPProofError, ReplayCache, jwk_thumbprint, make_proof, verify_proof
from .driver import send_with_http_client
from .flow import BaseOAuth
from .grants import ID_JAG_TOKEN_TYPE, ID_TOKEN_TYPE, JWT_BEARER_GRANT, TOKEN_EXCHANGE_GRANT
from .loopback import LoopbackRedirectCatcher
from .pkce import pkce_challenge, pkce_pair
from . import rules
from .rules import *  # noqa: F403  (the spec's rules: every name of `rules.__all__`, added below)

__all__ = [
    # building a grant, running a flow by hand
    "BaseOAuth", "AuthFlow", "send_with_http_client", "LoopbackRedirectCatcher",
    # the server side
    "protected_resource_metadata_path",
    # DPoP (RFC 9449): proofs made and checked
    "make_proof", "verify_proof", "DPoPProofError", "ReplayCache", "jwk_thumbprint",
    "choose_token_endpoint_auth_method",
    "BearerChallenge", "parse_bearer_challenge", "parse_auth_challenge", "is_insufficient_scope",
    "pkce_pair", "pkce_challenge", "client_assertion",
    "JWT_BEARER_ASSERTION_TYPE", "TOKEN_EXCHANGE_GRANT", "JWT_BEARER_GRANT", "ID_TOKEN_TYPE", "ID_JAG_TOKEN_TYPE",
]
__all__ += rules.__all__  # the spec's rules
