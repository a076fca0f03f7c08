"""mcplite.oauth's spec rules as pure functions: URLs, checks, scope choice, challenges, PKCE, the
per-revision table. No flow, no network."""

from typing import Optional

import pytest

from mcplite.errors import AuthError
from mcplite.oauth import AuthorizationResponse, OAuth
from mcplite.oauth.advanced import (
    AUTH_RULES,
    BearerChallenge,
    add_step_up_scopes,
    application_type_for,
    apply_offline_access,
    auth_rules,
    authorization_server_metadata_urls,
    canonical_resource_uri,
    check_authorization_response,
    check_authorization_response_issuer,
    check_legacy_metadata_issuer,
    check_pkce_support,
    choose_token_endpoint_auth_method,
    is_insufficient_scope,
    legacy_default_endpoints,
    legacy_metadata_url,
    parse_bearer_challenge,
    pkce_challenge,
    pkce_pair,
    protected_resource_metadata_urls,
    resource_matches,
    select_scopes,
)
from mcplite.protocol.versions import SUPPORTED_VERSIONS

MCP = "https://api.example.com/v1/mcp"
PRM_HEADER_URL = "https://api.example.com/custom/prm"


def test_pkce_challenge_matches_rfc7636_appendix_b() -> None:
    assert pkce_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk") == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"


def test_pkce_pair_is_fresh_and_consistent() -> None:
    (v1, c1), (v2, _) = pkce_pair(), pkce_pair()
    assert v1 != v2 and 43 <= len(v1) <= 128
    assert pkce_challenge(v1) == c1


@pytest.mark.parametrize("verifier", ["short", "a" * 129, "a" * 42 + "!"])
def test_pkce_challenge_refuses_invalid_verifiers(verifier: str) -> None:
    with pytest.raises(ValueError):
        pkce_challenge(verifier)


def test_protected_resource_metadata_urls_header_then_path_then_root() -> None:
    assert protected_resource_metadata_urls(MCP, PRM_HEADER_URL) == [
        PRM_HEADER_URL,
        "https://api.example.com/.well-known/oauth-protected-resource/v1/mcp",
        "https://api.example.com/.well-known/oauth-protected-resource",
    ]
    assert protected_resource_metadata_urls("https://api.example.com/mcp/") == [
        "https://api.example.com/.well-known/oauth-protected-resource/mcp",
        "https://api.example.com/.well-known/oauth-protected-resource",
    ]
    assert protected_resource_metadata_urls("https://API.example.com") == [
        "https://api.example.com/.well-known/oauth-protected-resource"]


def test_authorization_server_metadata_urls_with_and_without_issuer_path() -> None:
    assert authorization_server_metadata_urls("https://auth.ex/tenant1") == [
        "https://auth.ex/.well-known/oauth-authorization-server/tenant1",
        "https://auth.ex/.well-known/openid-configuration/tenant1",
        "https://auth.ex/tenant1/.well-known/openid-configuration",
    ]
    assert authorization_server_metadata_urls("https://auth.ex") == [
        "https://auth.ex/.well-known/oauth-authorization-server",
        "https://auth.ex/.well-known/openid-configuration",
    ]


def test_legacy_2025_03_26_urls_drop_the_mcp_path() -> None:
    assert legacy_metadata_url(MCP) == "https://api.example.com/.well-known/oauth-authorization-server"
    assert legacy_default_endpoints(MCP) == {
        "issuer": "https://api.example.com",
        "authorization_endpoint": "https://api.example.com/authorize",
        "token_endpoint": "https://api.example.com/token",
        "registration_endpoint": "https://api.example.com/register",
    }


def test_canonical_resource_uri() -> None:
    assert canonical_resource_uri("HTTPS://API.Example.COM:443/v1/mcp#frag") == "https://api.example.com/v1/mcp"
    assert canonical_resource_uri("https://api.example.com/") == "https://api.example.com"
    assert canonical_resource_uri("http://127.0.0.1:8080/mcp?x=1") == "http://127.0.0.1:8080/mcp?x=1"
    assert canonical_resource_uri("http://[::1]:80/mcp") == "http://[::1]/mcp"


@pytest.mark.parametrize("resource, expected", [
    ("https://api.example.com/v1/mcp", True),
    ("https://api.example.com/v1/mcp/", True),
    ("https://api.example.com", True),  # a parent resource covers the endpoint
    ("https://api.example.com/v1", True),
    ("https://api.example.com/v1/mc", False),  # not a path segment boundary
    ("https://api.example.com/v2", False),
    ("https://evil.example.com/v1/mcp", False),
    ("http://api.example.com/v1/mcp", False),
    ("https://api.example.com:8443/v1/mcp", False),
])
def test_resource_matches(resource: str, expected: bool) -> None:
    assert resource_matches(resource, MCP) is expected


def test_parse_bearer_challenge() -> None:
    header = ('Basic realm="x", Bearer realm="mcp", error="insufficient_scope", '
              'scope="files:read files:write", resource_metadata="https://a.example/prm?x=1,2", '
              'error_description="need \\"more\\""')
    assert parse_bearer_challenge(header) == BearerChallenge(
        error="insufficient_scope", error_description='need "more"', scope="files:read files:write",
        resource_metadata="https://a.example/prm?x=1,2")
    assert parse_bearer_challenge("bearer scope=a, Basic realm=b") == BearerChallenge(scope="a")
    assert parse_bearer_challenge('Bearer') == BearerChallenge()
    assert parse_bearer_challenge('Basic realm="x"') is None
    assert parse_bearer_challenge(None) is None


def test_a_written_challenge_reads_back_the_same() -> None:
    challenge = BearerChallenge(error="invalid_token", error_description='say "hi" \\ bye', scope="a b",
                                resource_metadata="https://h.example/.well-known/oauth-protected-resource/mcp")
    header = challenge.to_header()
    assert header.startswith('Bearer resource_metadata="https://h.example/')
    assert parse_bearer_challenge(header) == challenge
    assert BearerChallenge().to_header() == "Bearer"
    assert parse_bearer_challenge(BearerChallenge(scope="x").to_header()) == BearerChallenge(scope="x")


def test_insufficient_scope_detection() -> None:
    assert is_insufficient_scope(403, BearerChallenge(error="insufficient_scope", scope="a"))
    assert is_insufficient_scope(403, BearerChallenge(scope="a b"))  # servers that leave out error=
    assert not is_insufficient_scope(403, BearerChallenge(error="invalid_token", scope="a"))
    assert not is_insufficient_scope(403, BearerChallenge())
    assert not is_insufficient_scope(403, None)
    assert not is_insufficient_scope(401, BearerChallenge(error="insufficient_scope"))


def test_scope_selection_priority() -> None:
    assert select_scopes(["a"], ["b"], ["c", "d"]) == ["a"]
    assert select_scopes(None, ["b"], ["c", "d"]) == ["b"]
    assert select_scopes([], None, ["c", "d", "c"]) == ["c", "d"]
    assert select_scopes(None, None, None) == []


def test_step_up_requests_the_union() -> None:
    assert add_step_up_scopes(["read"], ["read", "write"]) == ["read", "write"]
    assert add_step_up_scopes(["read", "admin"], ["write"]) == ["read", "admin", "write"]


def test_offline_access_only_when_the_authorization_server_lists_it() -> None:
    assert apply_offline_access(["a", "offline_access"], ["a"], wanted=True) == ["a"]
    assert apply_offline_access(["a"], ["a", "offline_access"], wanted=True) == ["a", "offline_access"]
    assert apply_offline_access(["a"], ["a", "offline_access"], wanted=False) == ["a"]
    assert apply_offline_access([], ["offline_access"], wanted=True) == []


@pytest.mark.parametrize("advertised, iss, accepted", [
    (True, "https://as.example", True),
    (True, "https://evil.example", False),
    (True, None, False),
    (False, "https://as.example", True),
    (False, "https://evil.example", False),
    (False, None, True),
    (True, "https://as.example/", False),  # exact string comparison, no normalization
])
def test_rfc9207_iss_table(advertised: bool, iss: Optional[str], accepted: bool) -> None:
    if accepted:
        check_authorization_response_issuer(iss, "https://as.example", advertised)
    else:
        with pytest.raises(AuthError):
            check_authorization_response_issuer(iss, "https://as.example", advertised)


def test_iss_is_checked_on_error_responses_too() -> None:
    response = AuthorizationResponse(state="s", iss="https://evil.example", error="access_denied")
    with pytest.raises(AuthError, match="issuer"):
        check_authorization_response(response, expected_state="s", issuer="https://as.example", iss_advertised=False)


def test_legacy_metadata_issuer_is_adopted_only_on_the_servers_origin() -> None:
    # 2025-03-26 finds the metadata at the MCP server's origin whatever the issuer's path is.
    issuer = "https://api.example.com/oauth"
    assert check_legacy_metadata_issuer({"issuer": issuer}, MCP) == issuer
    assert check_legacy_metadata_issuer({"issuer": "https://API.example.com:443"}, MCP) == "https://API.example.com:443"
    for bad in ({"issuer": "https://evil.example/oauth"}, {"issuer": "http://api.example.com"}, {}, {"issuer": 7}):
        with pytest.raises(AuthError, match="refusing"):
            check_legacy_metadata_issuer(bad, MCP)


def test_pkce_support_check_per_revision() -> None:
    check_pkce_support({"code_challenge_methods_supported": ["plain", "S256"]}, auth_rules("2025-11-25"))
    check_pkce_support({}, auth_rules("2025-06-18"))  # silent metadata: tolerated before 2025-11-25
    with pytest.raises(AuthError, match="does not advertise"):
        check_pkce_support({}, auth_rules("2025-11-25"))
    with pytest.raises(AuthError, match="S256"):
        check_pkce_support({"code_challenge_methods_supported": ["plain"]}, auth_rules("2025-06-18"))


def test_revision_rules() -> None:
    assert not auth_rules("2025-03-26").resource_parameter
    assert auth_rules("2025-06-18").resource_parameter
    assert not auth_rules("2025-06-18").pkce_methods_advertised
    assert auth_rules("2025-11-25").pkce_methods_advertised
    assert auth_rules("2024-11-05") == auth_rules("2025-03-26")._replace(version="2024-11-05")


def test_every_supported_revision_has_authorization_rules() -> None:
    assert sorted(AUTH_RULES) == sorted(SUPPORTED_VERSIONS)
    with pytest.raises(ValueError, match="unsupported protocol version"):
        auth_rules("2023-01-01")
    with pytest.raises(ValueError, match="unsupported protocol version"):
        OAuth(protocol_version="2023-01-01", authorize=lambda url: url)


def test_token_endpoint_auth_method_choice() -> None:
    choose = choose_token_endpoint_auth_method
    assert choose("client_secret_post", ["client_secret_basic"], has_secret=True, has_private_key=False) == "client_secret_post"
    assert choose(None, None, has_secret=True, has_private_key=False) == "client_secret_basic"  # RFC 8414 default
    assert choose(None, ["client_secret_post"], has_secret=True, has_private_key=False) == "client_secret_post"
    assert choose(None, ["none"], has_secret=True, has_private_key=False) == "none"
    assert choose(None, ["private_key_jwt", "client_secret_basic"], has_secret=True, has_private_key=True) == "private_key_jwt"
    assert choose(None, None, has_secret=False, has_private_key=True) == "private_key_jwt"
    assert choose(None, None, has_secret=False, has_private_key=False) == "none"


def test_application_type() -> None:
    assert application_type_for("http://127.0.0.1:5000/cb") == "native"
    assert application_type_for("http://localhost/cb") == "native"
    assert application_type_for("com.example.app:/cb") == "native"
    assert application_type_for("https://app.example.com/cb") == "web"
