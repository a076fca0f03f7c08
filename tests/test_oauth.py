"""mcplite.oauth's flow, driven with canned responses and the in-process test authorization server:
discovery, registration, PKCE/state/iss, token endpoint authentication, refresh, step-up, storage,
concurrency, client credentials and cross-app access. (The pure rules: test_oauth_rules.py; sockets and
the browser: test_oauth_io.py; the server side: test_auth_http.py.)"""

import logging
import os
import stat
import threading
from typing import Any, Callable, Dict, List, Optional, Tuple
from urllib.parse import urlsplit

import pytest

from mcplite import jose
from mcplite.errors import AuthError, TransportError
from mcplite.oauth import (
    AuthorizationResponse,
    ClientCredentials,
    ClientRegistration,
    CrossAppAccess,
    FileTokenStorage,
    HTTPRequest,
    HTTPResponse,
    MemoryTokenStorage,
    OAuth,
    Tokens,
    drive,
)
from mcplite.oauth.advanced import pkce_challenge
from oauth_server import (  # tests/ is on sys.path under pytest's default import mode
    Clock, CountingAuthorize, OAuthTestServer, call, decode_form, decode_query, follow_authorization_redirect,
    jsonrpc_request, split_basic,
)
from support import WAIT, Background
from support.canned import Canned, Route, json_response, without_query
from support.keys import EC_PKCS8_PEM, RFC7515_RSA_JWK

THREAD_TIMEOUT = WAIT
REDIRECT_URI = "http://127.0.0.1:8976/callback"  # registered, never contacted: tests read the 302 itself


def bearer_of(request: HTTPRequest) -> Optional[str]:
    value = {k.lower(): v for k, v in request.headers.items()}.get("authorization", "")
    return value[len("Bearer "):] if value.startswith("Bearer ") else None


# A canned deployment: MCP server with a path, an authorization server whose issuer has a path.
MCP = "https://api.example.com/v1/mcp"
PRM_HEADER_URL = "https://api.example.com/custom/prm"
ISSUER = "https://auth.example.com/tenant1"


def as_metadata(issuer: str = ISSUER, **overrides: Any) -> Dict[str, Any]:
    metadata = {
        "issuer": issuer,
        "authorization_endpoint": f"{issuer}/authorize",
        "token_endpoint": f"{issuer}/token",
        "registration_endpoint": f"{issuer}/register",
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
    }
    metadata.update(overrides)
    return {k: v for k, v in metadata.items() if v is not None}


def protected_mcp(good_token: str = "tok-1", challenge: str = f'Bearer resource_metadata="{PRM_HEADER_URL}"') -> Route:
    def handle(request: HTTPRequest) -> HTTPResponse:
        if bearer_of(request) == good_token:
            return json_response(200, {"ok": True})
        return json_response(401, {"error": "invalid_token"}, {"www-authenticate": challenge})
    return handle


def redirect_back(code: str = "code-1", iss: Optional[str] = None) -> Callable[[str], str]:
    """An authorize callback that consents at once and echoes the state, like a well-behaved AS."""
    def authorize(url: str) -> str:
        query = decode_query(url)
        extra = f"&iss={iss}" if iss else ""
        return f"{query['redirect_uri']}?code={code}&state={query['state']}{extra}"
    return authorize


def canned_deployment(**metadata_overrides: Any) -> Canned:
    return Canned({
        ("POST", MCP): protected_mcp(),
        ("GET", PRM_HEADER_URL): json_response(200, {"resource": MCP, "authorization_servers": [ISSUER]}),
        ("GET", "https://auth.example.com/tenant1/.well-known/openid-configuration"):
            json_response(200, as_metadata(**metadata_overrides)),
        ("POST", f"{ISSUER}/register"): json_response(201, {"client_id": "dyn-1"}),
        ("POST", f"{ISSUER}/token"): json_response(200, {"access_token": "tok-1", "token_type": "Bearer"}),
    })


def canned_oauth(**kwargs: Any) -> OAuth:
    kwargs.setdefault("authorize", redirect_back())
    kwargs.setdefault("redirect_uri", REDIRECT_URI)
    return OAuth(**kwargs)


def server_oauth(server: OAuthTestServer, **kwargs: Any) -> OAuth:
    kwargs.setdefault("authorize", follow_authorization_redirect(server.send))
    kwargs.setdefault("redirect_uri", REDIRECT_URI)
    return OAuth(**kwargs)


# ======================================================================================================
# Discovery, against canned responses
# ======================================================================================================


def test_full_discovery_order_with_header_and_issuer_path() -> None:
    network = canned_deployment()
    auth = canned_oauth()
    response = call(auth, network, MCP)
    assert response.status == 200
    assert network.calls() == [
        f"POST {MCP}",
        f"GET {PRM_HEADER_URL}",
        "GET https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
        "GET https://auth.example.com/.well-known/openid-configuration/tenant1",
        "GET https://auth.example.com/tenant1/.well-known/openid-configuration",
        f"POST {ISSUER}/register",
        f"POST {ISSUER}/token",
        f"POST {MCP}",
    ]
    discovery = [r for r in network.requests if r.method == "GET"]
    assert all(r.headers["MCP-Protocol-Version"] == "2025-11-25" for r in discovery)
    assert bearer_of(network.requests[-1]) == "tok-1"


def test_protected_resource_metadata_path_specific_then_root_without_header() -> None:
    network = canned_deployment()
    network.routes[("POST", MCP)] = protected_mcp(challenge="Bearer")
    del network.routes[("GET", PRM_HEADER_URL)]
    network.routes[("GET", "https://api.example.com/.well-known/oauth-protected-resource")] = json_response(
        200, {"resource": "https://api.example.com", "authorization_servers": [ISSUER]})
    authorize = CountingAuthorize(redirect_back())
    assert call(canned_oauth(authorize=authorize), network, MCP).status == 200
    assert network.calls()[1:3] == [
        "GET https://api.example.com/.well-known/oauth-protected-resource/v1/mcp",
        "GET https://api.example.com/.well-known/oauth-protected-resource",
    ]
    # The resource named in the metadata is what goes into the RFC 8707 parameter.
    assert decode_query(authorize.urls[0])["resource"] == "https://api.example.com"


def test_header_url_failure_falls_back_to_well_known() -> None:
    network = canned_deployment()
    network.routes[("GET", "https://api.example.com/.well-known/oauth-protected-resource/v1/mcp")] = (
        network.routes.pop(("GET", PRM_HEADER_URL)))
    assert call(canned_oauth(), network, MCP).status == 200
    assert network.calls()[1:3] == [
        f"GET {PRM_HEADER_URL}", "GET https://api.example.com/.well-known/oauth-protected-resource/v1/mcp"]


def test_issuer_mismatch_in_metadata_is_refused() -> None:
    network = canned_deployment(issuer="https://auth.example.com/other")
    authorize = CountingAuthorize(redirect_back())
    with pytest.raises(AuthError, match="issuer"):
        call(canned_oauth(authorize=authorize), network, MCP)
    assert authorize.urls == [] and not any("/register" in c or "/token" in c for c in network.calls())


def test_resource_mismatch_is_refused_before_contacting_any_authorization_server() -> None:
    network = canned_deployment()
    network.routes[("GET", PRM_HEADER_URL)] = json_response(
        200, {"resource": "https://evil.example.com/v1/mcp", "authorization_servers": [ISSUER]})
    with pytest.raises(AuthError, match="evil.example.com"):
        call(canned_oauth(), network, MCP)
    assert not any("auth.example.com" in c for c in network.calls())


def test_resource_metadata_without_authorization_servers_is_refused() -> None:
    network = canned_deployment()
    network.routes[("GET", PRM_HEADER_URL)] = json_response(200, {"resource": MCP, "authorization_servers": []})
    with pytest.raises(AuthError, match="authorization_servers"):
        call(canned_oauth(), network, MCP)


UNUSABLE_URLS = ["https://api.example.com/\ud800", "https://api.example.com/\u00e9", "//api.example.com/prm",
                 "not a url", "ftp://api.example.com/prm", "https://[::1", "https://api.example.com:99999/prm",
                 "https://api.example.com/a b"]


def sendable(url: str) -> bool:
    """What a request line can carry: an http(s) URL in visible ASCII, with a host and a valid port."""
    if not (url.isascii() and url.isprintable() and " " not in url):
        return False
    try:
        parts = urlsplit(url)
        parts.port
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)


@pytest.mark.parametrize("url", UNUSABLE_URLS)
def test_an_unusable_resource_metadata_url_in_the_challenge_is_never_requested(url: str) -> None:
    # Found by the reliability suite's oauth-fuzz: such a URL went on a request line as it was, and the HTTP
    # transport raised UnicodeEncodeError or ValueError, not an MCPError.
    network = canned_deployment()
    network.routes[("POST", MCP)] = protected_mcp(challenge=f'Bearer resource_metadata="{url}"')
    network.routes[("GET", "https://api.example.com/.well-known/oauth-protected-resource/v1/mcp")] = (
        network.routes.pop(("GET", PRM_HEADER_URL)))
    assert call(canned_oauth(), network, MCP).status == 200
    assert all(sendable(request.url) for request in network.requests), network.calls()


@pytest.mark.parametrize("url", UNUSABLE_URLS)
@pytest.mark.parametrize("member", ["authorization_servers", "resource"])
def test_resource_metadata_naming_an_unusable_url_is_refused(member: str, url: str) -> None:
    network = canned_deployment()
    document = {"resource": MCP, "authorization_servers": [ISSUER]}
    document[member] = [url] if member == "authorization_servers" else url
    network.routes[("GET", PRM_HEADER_URL)] = json_response(200, document)
    with pytest.raises(AuthError, match=member):
        call(canned_oauth(), network, MCP)
    assert all(sendable(request.url) for request in network.requests), network.calls()


@pytest.mark.parametrize("scopes", [5, "mcp", {"a": 1}, None, True])
def test_resource_metadata_scopes_supported_that_is_not_a_list_is_ignored(scopes: Any) -> None:
    network = canned_deployment()
    network.routes[("GET", PRM_HEADER_URL)] = json_response(
        200, {"resource": MCP, "authorization_servers": [ISSUER], "scopes_supported": scopes})
    assert call(canned_oauth(), network, MCP).status == 200


@pytest.mark.parametrize("member", ["token_endpoint_auth_methods_supported", "dpop_signing_alg_values_supported",
                                    "scopes_supported", "grant_types_supported"])
@pytest.mark.parametrize("value", [5, 1.5, True, "none", {"a": 1}])
def test_authorization_server_metadata_lists_of_the_wrong_type_are_ignored(member: str, value: Any) -> None:
    # Found by oauth-fuzz: `method in supported` raised TypeError for a number where a list belongs.
    network = canned_deployment(**{member: value})
    assert call(canned_oauth(), network, MCP).status == 200


@pytest.mark.parametrize("url", UNUSABLE_URLS)
@pytest.mark.parametrize("member", ["authorization_endpoint", "token_endpoint"])
def test_authorization_server_metadata_with_an_unusable_endpoint_is_refused(member: str, url: str) -> None:
    # Found by oauth-fuzz: a bad port or an unclosed IPv6 bracket raised ValueError, not AuthError.
    network = canned_deployment(**{member: url})
    with pytest.raises(AuthError, match=member):
        call(canned_oauth(), network, MCP)
    assert all(sendable(request.url) for request in network.requests), network.calls()


def test_resource_metadata_scopes_that_are_no_scope_tokens_are_not_requested() -> None:
    # Found by oauth-fuzz: a lone surrogate among scopes_supported went into the token request's form, and
    # encoding it raised UnicodeEncodeError.
    network = canned_deployment()
    network.routes[("GET", PRM_HEADER_URL)] = json_response(
        200, {"resource": MCP, "authorization_servers": [ISSUER], "scopes_supported": ["\ud83d", "a b", "mcp"]})
    authorize = CountingAuthorize(redirect_back())
    assert call(canned_oauth(authorize=authorize), network, MCP).status == 200
    assert authorize.scopes() == ["mcp"]


def test_no_authorization_server_metadata_anywhere_is_an_error() -> None:
    network = canned_deployment()
    del network.routes[("GET", "https://auth.example.com/tenant1/.well-known/openid-configuration")]
    with pytest.raises(AuthError, match="no authorization server metadata"):
        call(canned_oauth(), network, MCP)


def legacy_deployment() -> Canned:
    origin = "https://api.example.com"
    return Canned({
        ("POST", MCP): protected_mcp(challenge="Bearer"),
        ("POST", f"{origin}/register"): json_response(201, {"client_id": "legacy-1"}),
        ("POST", f"{origin}/token"): json_response(200, {"access_token": "tok-1", "token_type": "bearer"}),
    })


def test_2025_03_26_origin_rooted_metadata_when_there_is_no_resource_metadata() -> None:
    network = legacy_deployment()
    network.routes[("GET", "https://api.example.com/.well-known/oauth-authorization-server")] = json_response(
        200, as_metadata("https://api.example.com", authorization_endpoint="https://api.example.com/oauth/authz"))
    authorize = CountingAuthorize(redirect_back())
    assert call(canned_oauth(authorize=authorize), network, MCP).status == 200
    assert network.calls()[1:4] == [
        "GET https://api.example.com/.well-known/oauth-protected-resource/v1/mcp",
        "GET https://api.example.com/.well-known/oauth-protected-resource",
        "GET https://api.example.com/.well-known/oauth-authorization-server",
    ]
    assert network.requests[3].headers["MCP-Protocol-Version"] == "2025-11-25"
    assert without_query(authorize.urls[0]) == "https://api.example.com/oauth/authz"


@pytest.mark.parametrize("protocol_version, resource", [
    ("2025-03-26", None),  # that revision has no resource parameter
    ("2025-11-25", MCP),
])
def test_2025_03_26_default_endpoints_when_metadata_is_404(protocol_version: str, resource: Optional[str]) -> None:
    network = legacy_deployment()
    authorize = CountingAuthorize(redirect_back())
    auth = canned_oauth(authorize=authorize, protocol_version=protocol_version)
    assert call(auth, network, MCP).status == 200
    assert network.calls()[3:] == [
        "GET https://api.example.com/.well-known/oauth-authorization-server",
        "POST https://api.example.com/register",
        "POST https://api.example.com/token",
        f"POST {MCP}",
    ]
    assert without_query(authorize.urls[0]) == "https://api.example.com/authorize"
    assert decode_query(authorize.urls[0]).get("resource") == resource
    assert decode_form(network.requests[-2]).get("resource") == resource


def test_2025_03_26_metadata_whose_issuer_has_a_path_is_used_and_keys_the_registration() -> None:
    network = legacy_deployment()
    issuer = "https://api.example.com/oauth"
    network.routes[("GET", "https://api.example.com/.well-known/oauth-authorization-server")] = json_response(
        200, as_metadata(issuer, registration_endpoint="https://api.example.com/register",
                         token_endpoint="https://api.example.com/token"))
    storage = MemoryTokenStorage()
    authorize = CountingAuthorize(redirect_back(iss=issuer))
    assert call(canned_oauth(authorize=authorize, storage=storage), network, MCP).status == 200
    assert without_query(authorize.urls[0]) == f"{issuer}/authorize"
    registration = storage.get_client(issuer)
    assert registration is not None and registration.client_id == "legacy-1"


def test_2025_03_26_metadata_naming_an_issuer_elsewhere_is_refused() -> None:
    network = legacy_deployment()
    network.routes[("GET", "https://api.example.com/.well-known/oauth-authorization-server")] = json_response(
        200, as_metadata("https://evil.example"))
    authorize = CountingAuthorize(redirect_back())
    with pytest.raises(AuthError, match="refusing"):
        call(canned_oauth(authorize=authorize), network, MCP)
    assert authorize.urls == []


def test_2025_03_26_metadata_server_error_is_an_auth_error() -> None:
    network = legacy_deployment()
    network.routes[("GET", "https://api.example.com/.well-known/oauth-authorization-server")] = HTTPResponse(500, {}, b"")
    with pytest.raises(AuthError, match="HTTP 500"):
        call(canned_oauth(), network, MCP)


def test_responses_that_need_no_authorization_pass_through() -> None:
    network = Canned({("POST", MCP): json_response(500, {"oops": True})})
    assert call(canned_oauth(), network, MCP).status == 500
    assert network.calls() == [f"POST {MCP}"]


def test_a_403_without_insufficient_scope_is_not_a_step_up() -> None:
    network = Canned({("POST", MCP): json_response(403, {}, {"www-authenticate": 'Bearer error="invalid_token"'})})
    assert call(canned_oauth(), network, MCP).status == 403
    assert len(network.requests) == 1


def test_existing_authorization_header_is_replaced_whatever_its_case() -> None:
    network = canned_deployment()
    request = jsonrpc_request(MCP)
    request.headers["authorization"] = "Bearer stale"
    assert drive(canned_oauth().auth_flow(request), network).status == 200
    final = network.requests[-1].headers
    assert [k for k in final if k.lower() == "authorization"] == ["Authorization"]
    assert final["Authorization"] == "Bearer tok-1"


# ======================================================================================================
# Registration
# ======================================================================================================


def test_dynamic_registration_body() -> None:
    server = OAuthTestServer()
    auth = server_oauth(server, client_name="Test App")
    assert call(auth, server.send, server.mcp_url).status == 200
    registration = server.clients["client-1"].registration
    assert registration["client_name"] == "Test App"
    assert registration["redirect_uris"] == [REDIRECT_URI]
    assert registration["application_type"] == "native"
    assert "refresh_token" in registration["grant_types"] and "authorization_code" in registration["grant_types"]
    assert registration["token_endpoint_auth_method"] == "none"  # a public client where the AS allows it


def test_preregistered_client_is_used_without_registering() -> None:
    server = OAuthTestServer()
    server.add_client("pre-1", secret="s3cret", redirect_uris=[REDIRECT_URI])
    assert call(server_oauth(server, client_id="pre-1", client_secret="s3cret"), server.send, server.mcp_url).status == 200
    assert "/register" not in server.paths()
    token_request = next(r for r in server.requests if r.url.endswith("/token"))
    assert split_basic(token_request.headers["Authorization"]) == ("pre-1", "s3cret")


def test_client_id_metadata_document_when_supported() -> None:
    network = canned_deployment(client_id_metadata_document_supported=True)
    authorize = CountingAuthorize(redirect_back())
    cimd = "https://app.example.com/oauth/client.json"
    assert call(canned_oauth(authorize=authorize, client_metadata_url=cimd), network, MCP).status == 200
    assert f"POST {ISSUER}/register" not in network.calls()
    assert decode_query(authorize.urls[0])["client_id"] == cimd
    assert decode_form(network.requests[-2])["client_id"] == cimd


def test_client_id_metadata_document_is_not_used_when_unsupported() -> None:
    network = canned_deployment()
    authorize = CountingAuthorize(redirect_back())
    auth = canned_oauth(authorize=authorize, client_metadata_url="https://app.example.com/oauth/client.json")
    assert call(auth, network, MCP).status == 200
    assert f"POST {ISSUER}/register" in network.calls()
    assert decode_query(authorize.urls[0])["client_id"] == "dyn-1"


@pytest.mark.parametrize("url", ["http://app.example.com/c.json", "https://app.example.com", "https://app.example.com/"])
def test_client_metadata_url_must_be_https_with_a_path(url: str) -> None:
    with pytest.raises(ValueError):
        OAuth(client_metadata_url=url, authorize=redirect_back(), redirect_uri=REDIRECT_URI)


def test_no_registration_endpoint_and_no_client_is_an_error() -> None:
    network = canned_deployment(registration_endpoint=None)
    with pytest.raises(AuthError, match="client_id="):
        call(canned_oauth(), network, MCP)


def test_registration_is_reused_with_the_same_authorization_server() -> None:
    server = OAuthTestServer()
    storage = MemoryTokenStorage()
    assert call(server_oauth(server, storage=storage), server.send, server.mcp_url).status == 200
    server.access_tokens.clear()
    server.refresh_tokens.clear()
    assert call(server_oauth(server, storage=storage), server.send, server.mcp_url).status == 200
    assert server.paths().count("/register") == 1
    assert storage.get_client(server.issuer) == ClientRegistration(
        "client-1", None, "none", [REDIRECT_URI], None)


def test_a_new_redirect_uri_means_a_new_registration() -> None:
    server = OAuthTestServer()
    storage = MemoryTokenStorage()
    call(server_oauth(server, storage=storage), server.send, server.mcp_url)
    server.access_tokens.clear()
    server.refresh_tokens.clear()
    other = "http://127.0.0.1:8977/callback"
    assert call(server_oauth(server, storage=storage, redirect_uri=other), server.send, server.mcp_url).status == 200
    assert server.paths().count("/register") == 2
    assert server.clients["client-2"].redirect_uris == [other]


def test_authorization_server_migration_registers_again_and_never_reuses_credentials() -> None:
    as1, as2 = "https://as1.example", "https://as2.example"
    state = {"current": as1}

    def prm(request: HTTPRequest) -> HTTPResponse:
        return json_response(200, {"resource": MCP, "authorization_servers": [state["current"]]})

    def mcp(request: HTTPRequest) -> HTTPResponse:
        if bearer_of(request) == f"tok-{state['current']}":
            return json_response(200, {})
        return json_response(401, {}, {"www-authenticate": f'Bearer resource_metadata="{PRM_HEADER_URL}"'})

    routes: Dict[Tuple[str, str], Route] = {("POST", MCP): mcp, ("GET", PRM_HEADER_URL): prm}
    for issuer in (as1, as2):
        routes[("GET", f"{issuer}/.well-known/oauth-authorization-server")] = json_response(200, as_metadata(issuer))
        routes[("POST", f"{issuer}/register")] = json_response(201, {"client_id": f"client-of-{issuer}"})
        routes[("POST", f"{issuer}/token")] = json_response(200, {"access_token": f"tok-{issuer}", "refresh_token": f"rt-{issuer}"})
    network = Canned(routes)
    authorize = CountingAuthorize(redirect_back())
    storage = MemoryTokenStorage()
    auth = canned_oauth(authorize=authorize, storage=storage)
    assert call(auth, network, MCP).status == 200
    state["current"] = as2
    assert call(auth, network, MCP).status == 200
    assert f"POST {as2}/register" in network.calls()
    at_as2 = [r for r in network.requests if r.url.startswith(as2)]
    sent_to_as2 = [value for r in at_as2 for value in list(decode_query(r.url).values()) + list(decode_form(r).values())]
    assert f"client-of-{as1}" not in sent_to_as2
    assert f"rt-{as1}" not in sent_to_as2  # no refresh with the old server's token either
    assert decode_query(authorize.urls[1])["client_id"] == f"client-of-{as2}"
    assert storage.get_client(as1) is not None and storage.get_client(as2) is not None


def test_tokens_from_the_previous_authorization_server_are_not_refreshed_at_the_new_one() -> None:
    as1, as2 = "https://as1.example", "https://as2.example"
    state = {"current": as1}
    routes: Dict[Tuple[str, str], Route] = {
        ("GET", PRM_HEADER_URL): lambda r: json_response(
            200, {"resource": MCP, "authorization_servers": [state["current"]]}),
        ("POST", MCP): lambda r: json_response(200, {}) if bearer_of(r) == f"tok-{state['current']}" else json_response(
            401, {}, {"www-authenticate": f'Bearer resource_metadata="{PRM_HEADER_URL}"'}),
    }
    for issuer in (as1, as2):
        routes[("GET", f"{issuer}/.well-known/oauth-authorization-server")] = json_response(
            200, as_metadata(issuer, client_id_metadata_document_supported=True))
        routes[("POST", f"{issuer}/token")] = json_response(200, {"access_token": f"tok-{issuer}", "refresh_token": f"rt-{issuer}"})
    network = Canned(routes)
    # A Client ID Metadata Document is valid at both servers, so a refresh would be possible. (A pre-registered
    # client is refused at the new server altogether: tests/test_oauth_2026.py.)
    auth = canned_oauth(client_metadata_url="https://app.example.com/oauth/client.json")
    call(auth, network, MCP)
    state["current"] = as2
    assert call(auth, network, MCP).status == 200
    grants_at_as2 = [decode_form(r) for r in network.requests if r.url == f"{as2}/token"]
    assert [form["grant_type"] for form in grants_at_as2] == ["authorization_code"]


# ======================================================================================================
# PKCE, state, iss, resource
# ======================================================================================================


def test_authorization_and_token_requests_carry_pkce_state_and_resource() -> None:
    server = OAuthTestServer()
    authorize = CountingAuthorize(follow_authorization_redirect(server.send))
    assert call(server_oauth(server, authorize=authorize), server.send, server.mcp_url).status == 200
    query = decode_query(authorize.urls[0])
    assert query["code_challenge_method"] == "S256" and len(query["state"]) >= 32
    assert query["resource"] == server.mcp_url and query["scope"] == "mcp:read"
    token_form = decode_form(next(r for r in server.requests if r.url.endswith("/token")))
    assert pkce_challenge(token_form["code_verifier"]) == query["code_challenge"]
    assert token_form["resource"] == server.mcp_url and token_form["redirect_uri"] == REDIRECT_URI


@pytest.mark.parametrize("methods", [None, ["plain"]])
def test_authorization_refused_without_s256_support(methods: Optional[List[str]]) -> None:
    server = OAuthTestServer()
    server.code_challenge_methods = methods
    with pytest.raises(AuthError):
        call(server_oauth(server), server.send, server.mcp_url)
    assert "/authorize" not in server.paths() and "/register" not in server.paths()


def test_silent_pkce_metadata_is_tolerated_by_a_2025_06_18_client() -> None:
    server = OAuthTestServer()
    server.code_challenge_methods = None
    assert call(server_oauth(server, protocol_version="2025-06-18"), server.send, server.mcp_url).status == 200


def test_state_mismatch_is_refused_before_redeeming_the_code() -> None:
    server = OAuthTestServer()
    follow = follow_authorization_redirect(server.send)

    def tampered(url: str) -> str:
        return follow(url).replace("state=", "state=x")

    with pytest.raises(AuthError, match="state"):
        call(server_oauth(server, authorize=tampered), server.send, server.mcp_url)
    assert "/token" not in server.paths()


@pytest.mark.parametrize("advertise, sent, ok", [
    (True, "correct", True), (True, "omit", False), (True, "wrong", False),
    (False, "omit", True), (False, "wrong", False),
])
def test_iss_in_the_redirect(advertise: bool, sent: str, ok: bool) -> None:
    server = OAuthTestServer()
    server.advertise_iss, server.iss_in_redirect = advertise, sent
    if ok:
        assert call(server_oauth(server), server.send, server.mcp_url).status == 200
    else:
        with pytest.raises(AuthError):
            call(server_oauth(server), server.send, server.mcp_url)
        assert "/authorize" in server.paths() and "/token" not in server.paths()


def test_refused_consent_is_reported() -> None:
    def deny(url: str) -> AuthorizationResponse:
        return AuthorizationResponse(state=decode_query(url)["state"], error="access_denied", error_description="no")

    with pytest.raises(AuthError, match="access_denied"):
        call(canned_oauth(authorize=deny), canned_deployment(), MCP)


def test_authorize_may_return_an_authorization_response() -> None:
    def consent(url: str) -> AuthorizationResponse:
        return AuthorizationResponse(code="code-1", state=decode_query(url)["state"])

    assert call(canned_oauth(authorize=consent), canned_deployment(), MCP).status == 200


# ======================================================================================================
# Token endpoint authentication
# ======================================================================================================


@pytest.mark.parametrize("method", ["client_secret_basic", "client_secret_post", "none"])
def test_token_endpoint_authentication_follows_the_registration(method: str) -> None:
    server = OAuthTestServer()
    server.token_endpoint_auth_methods = [method]
    assert call(server_oauth(server), server.send, server.mcp_url).status == 200
    token_request = next(r for r in server.requests if r.url.endswith("/token"))
    form = decode_form(token_request)
    client = server.clients["client-1"]
    if method == "client_secret_basic":
        assert split_basic(token_request.headers["Authorization"]) == (client.client_id, client.secret)
        assert "client_secret" not in form
    elif method == "client_secret_post":
        assert (form["client_id"], form["client_secret"]) == (client.client_id, client.secret)
        assert "Authorization" not in token_request.headers
    else:
        assert form["client_id"] == client.client_id and "client_secret" not in form
        assert "Authorization" not in token_request.headers


@pytest.mark.parametrize("key", [jose.ECPrivateKey.generate(), None], ids=["ES256", "RS256"])
def test_private_key_jwt_with_a_preregistered_client(key: Optional[jose.PrivateKey]) -> None:
    private = key if key is not None else jose.load_private_key(RFC7515_RSA_JWK)
    server = OAuthTestServer()
    server.add_client("jwt-1", auth_method="private_key_jwt", redirect_uris=[REDIRECT_URI], public_key=private.public_key)
    auth = server_oauth(server, client_id="jwt-1", private_key=private)
    assert call(auth, server.send, server.mcp_url).status == 200
    form = decode_form(next(r for r in server.requests if r.url.endswith("/token")))
    header, claims = jose.jwt_decode(form["client_assertion"], private.public_key)
    assert header["alg"] == private.algorithm
    assert (claims["iss"], claims["sub"], claims["aud"]) == ("jwt-1", "jwt-1", server.issuer)
    assert claims["exp"] > claims["iat"]


def test_dynamic_registration_with_private_key_jwt_sends_the_public_key() -> None:
    server = OAuthTestServer()
    server.token_endpoint_auth_methods = ["private_key_jwt"]
    key = jose.ECPrivateKey.generate()
    assert call(server_oauth(server, private_key=key.to_jwk()), server.send, server.mcp_url).status == 200
    assert server.clients["client-1"].public_key == key.public_key


# ======================================================================================================
# Refresh, step-up and retries
# ======================================================================================================


def test_token_about_to_expire_is_refreshed_before_sending() -> None:
    clock = Clock()
    server = OAuthTestServer(clock=clock)
    server.token_lifetime = 100
    auth = server_oauth(server, clock=clock)
    call(auth, server.send, server.mcp_url)
    clock.advance(90)  # inside the refresh margin, not yet expired
    before = len(server.requests)
    assert call(auth, server.send, server.mcp_url).status == 200
    assert server.paths()[before:] == ["/token", "/mcp"]
    assert decode_form(server.requests[before])["grant_type"] == "refresh_token"


def test_rejected_token_is_refreshed_then_retried() -> None:
    server = OAuthTestServer()
    authorize = CountingAuthorize(follow_authorization_redirect(server.send))
    auth = server_oauth(server, authorize=authorize)
    call(auth, server.send, server.mcp_url)
    server.access_tokens.clear()  # revoked
    before = len(server.requests)
    assert call(auth, server.send, server.mcp_url).status == 200
    paths = server.paths()[before:]
    assert paths[0] == "/mcp" and paths[-2:] == ["/token", "/mcp"] and "/authorize" not in paths
    assert len(authorize.urls) == 1


def test_rotated_refresh_tokens_are_kept() -> None:
    server = OAuthTestServer()
    auth = server_oauth(server)
    call(auth, server.send, server.mcp_url)
    for _ in range(3):  # the server accepts each refresh token once, so each refresh needs the newest
        server.access_tokens.clear()
        assert call(auth, server.send, server.mcp_url).status == 200
    assert server.paths().count("/authorize") == 1


def test_failed_refresh_falls_back_to_a_new_sign_in() -> None:
    server = OAuthTestServer()
    authorize = CountingAuthorize(follow_authorization_redirect(server.send))
    auth = server_oauth(server, authorize=authorize)
    call(auth, server.send, server.mcp_url)
    server.access_tokens.clear()
    server.refresh_tokens.clear()
    assert call(auth, server.send, server.mcp_url).status == 200
    assert len(authorize.urls) == 2


def test_refresh_keeps_the_old_refresh_token_unless_rotated() -> None:
    old = Tokens("at-1", refresh_token="rt-1", scope="a")
    kept = Tokens.from_token_response({"access_token": "at-2", "expires_in": "60"}, now=10, previous=old)
    assert (kept.refresh_token, kept.scope, kept.expires_at) == ("rt-1", "a", 70)
    rotated = Tokens.from_token_response({"access_token": "at-3", "refresh_token": "rt-2"}, now=10, previous=old)
    assert rotated.refresh_token == "rt-2"


def test_token_responses_that_are_not_bearer_are_refused() -> None:
    with pytest.raises(AuthError, match="DPoP"):
        Tokens.from_token_response({"access_token": "x", "token_type": "DPoP"}, now=0)
    with pytest.raises(AuthError, match="access_token"):
        Tokens.from_token_response({"token_type": "Bearer"}, now=0)


def test_step_up_asks_for_the_union_of_scopes() -> None:
    server = OAuthTestServer()
    authorize = CountingAuthorize(follow_authorization_redirect(server.send))
    auth = server_oauth(server, authorize=authorize)
    assert call(auth, server.send, server.mcp_url).status == 200
    server.required_scopes = ["mcp:write"]
    assert call(auth, server.send, server.mcp_url).status == 200
    assert authorize.scopes() == ["mcp:read", "mcp:read mcp:write"]


def test_step_up_gives_up_after_max_authorizations_sign_ins() -> None:
    def always_insufficient(request: HTTPRequest) -> HTTPResponse:
        if bearer_of(request) is None:
            return json_response(401, {}, {"www-authenticate": f'Bearer resource_metadata="{PRM_HEADER_URL}"'})
        return json_response(403, {}, {"www-authenticate": 'Bearer error="insufficient_scope", scope="admin"'})

    network = canned_deployment()
    network.routes[("POST", MCP)] = always_insufficient
    authorize = CountingAuthorize(redirect_back())
    with pytest.raises(AuthError, match="after 3 sign-ins"):
        call(canned_oauth(authorize=authorize), network, MCP)
    assert len(authorize.urls) == 3  # the first sign-in, then two step-ups: three in all
    assert authorize.scopes()[1:] == ["admin"] * 2


def test_the_sign_in_budget_is_per_request() -> None:
    scopes_needed = ["a"]

    def needs_scopes(request: HTTPRequest) -> HTTPResponse:
        token = bearer_of(request)
        if token is None:
            challenge = f'Bearer resource_metadata="{PRM_HEADER_URL}", scope="a"'
            return json_response(401, {}, {"www-authenticate": challenge})
        if not set(scopes_needed) <= set(token.split("+")):
            scope = " ".join(scopes_needed)
            return json_response(403, {}, {"www-authenticate": f'Bearer error="insufficient_scope", scope="{scope}"'})
        return json_response(200, {"ok": True})

    def token_for_requested_scopes(request: HTTPRequest) -> HTTPResponse:
        return json_response(200, {"access_token": "+".join(decode_query(urls[-1]).get("scope", "").split()),
                                   "token_type": "Bearer"})

    network = canned_deployment()
    network.routes[("POST", MCP)] = needs_scopes
    network.routes[("POST", f"{ISSUER}/token")] = token_for_requested_scopes
    authorize = CountingAuthorize(redirect_back())
    urls = authorize.urls
    auth = canned_oauth(authorize=authorize, max_authorizations=2)
    scopes_needed[:] = ["a", "b"]
    assert call(auth, network, MCP).status == 200  # sign-in for a, step-up to a b: two sign-ins
    scopes_needed[:] = ["a", "b", "c"]
    assert call(auth, network, MCP).status == 200  # a new request may step up again
    scopes_needed[:] = ["a", "b", "c", "d", "e"]
    assert call(auth, network, MCP).status == 200
    assert authorize.scopes() == ["a", "a b", "a b c", "a b c d e"]


def test_a_401_after_a_fresh_sign_in_ends_with_an_error_not_a_loop() -> None:
    network = canned_deployment()
    network.routes[("POST", MCP)] = protected_mcp(good_token="never")
    authorize = CountingAuthorize(redirect_back())
    with pytest.raises(AuthError, match="just issued"):
        call(canned_oauth(authorize=authorize), network, MCP)
    assert len(authorize.urls) == 1


def test_scopes_from_protected_resource_metadata_when_the_challenge_has_none() -> None:
    server = OAuthTestServer()
    server.scope_in_challenge = False
    authorize = CountingAuthorize(follow_authorization_redirect(server.send))
    assert call(server_oauth(server, authorize=authorize), server.send, server.mcp_url).status == 200
    assert authorize.scopes() == ["mcp:read mcp:write"]


def test_scope_is_omitted_when_nothing_names_one() -> None:
    server = OAuthTestServer()
    server.scope_in_challenge = False
    server.scopes_supported = []
    server.required_scopes = []
    authorize = CountingAuthorize(follow_authorization_redirect(server.send))
    assert call(server_oauth(server, authorize=authorize), server.send, server.mcp_url).status == 200
    assert authorize.scopes() == [None]


def test_configured_scopes_are_used_when_the_challenge_has_none() -> None:
    server = OAuthTestServer()
    server.scope_in_challenge = False
    authorize = CountingAuthorize(follow_authorization_redirect(server.send))
    auth = server_oauth(server, authorize=authorize, scopes="mcp:read")
    assert call(auth, server.send, server.mcp_url).status == 200
    assert authorize.scopes() == ["mcp:read"]


def test_offline_access_requested_only_where_listed() -> None:
    server = OAuthTestServer()
    server.scopes_supported = ["mcp:read", "offline_access"]
    authorize = CountingAuthorize(follow_authorization_redirect(server.send))
    call(server_oauth(server, authorize=authorize), server.send, server.mcp_url)
    other = OAuthTestServer()
    other_authorize = CountingAuthorize(follow_authorization_redirect(other.send))
    call(server_oauth(other, authorize=other_authorize), other.send, other.mcp_url)
    assert authorize.scopes() == ["mcp:read offline_access"]
    assert other_authorize.scopes() == ["mcp:read"]


# ======================================================================================================
# Storage and redaction
# ======================================================================================================


@pytest.mark.parametrize("make", [lambda p: MemoryTokenStorage(), lambda p: FileTokenStorage(p / "tokens.json")],
                         ids=["memory", "file"])
def test_storage_round_trip(tmp_path: Any, make: Callable[[Any], Any]) -> None:
    storage = make(tmp_path)
    tokens = Tokens("at", refresh_token="rt", scope="a b", expires_at=5.0, issued_at=1.0)
    client = ClientRegistration("cid", "secret", "client_secret_post", ["http://127.0.0.1/cb"], 0)
    assert storage.get_tokens("https://as", "https://rs") is None
    storage.set_tokens("https://as", "https://rs", tokens)
    storage.set_client("https://as", client)
    assert storage.get_tokens("https://as", "https://rs") == tokens
    assert storage.get_tokens("https://other-as", "https://rs") is None
    assert storage.get_client("https://as") == client
    storage.set_tokens("https://as", "https://rs", None)
    storage.set_client("https://as", None)
    assert storage.get_tokens("https://as", "https://rs") is None and storage.get_client("https://as") is None


def test_file_storage_is_private_and_written_atomically(tmp_path: Any) -> None:
    path = tmp_path / "state" / "tokens.json"
    storage = FileTokenStorage(path)
    storage.set_tokens("https://as", "https://rs", Tokens("at"))
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    assert os.listdir(path.parent) == ["tokens.json"]  # no temporary file left behind
    assert FileTokenStorage(path).get_tokens("https://as", "https://rs") == Tokens("at")


def test_corrupt_token_file_is_an_auth_error(tmp_path: Any) -> None:
    path = tmp_path / "tokens.json"
    path.write_text("{not json")
    with pytest.raises(AuthError, match="token file"):
        FileTokenStorage(path).get_tokens("https://as", "https://rs")


def test_a_new_process_uses_stored_tokens_without_signing_in_again(tmp_path: Any) -> None:
    server = OAuthTestServer()
    path = tmp_path / "tokens.json"
    assert call(server_oauth(server, storage=FileTokenStorage(path)), server.send, server.mcp_url).status == 200

    def must_not_sign_in(url: str) -> str:
        raise AssertionError("signed in again")

    fresh = server_oauth(server, storage=FileTokenStorage(path), authorize=must_not_sign_in)
    before = len(server.requests)
    assert call(fresh, server.send, server.mcp_url).status == 200
    assert server.paths()[before:] == [
        "/mcp", "/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-authorization-server", "/mcp"]


def test_reprs_hide_tokens_secrets_and_codes() -> None:
    shown = repr(Tokens("AT-SECRET", refresh_token="RT-SECRET", scope="a"))
    shown += repr(ClientRegistration("cid", "CLIENT-SECRET"))
    shown += repr(AuthorizationResponse(code="CODE-SECRET", state="s"))
    assert "Tokens(" in shown and "cid" in shown
    for secret in ("AT-SECRET", "RT-SECRET", "CLIENT-SECRET", "CODE-SECRET"):
        assert secret not in shown


def test_tokens_never_appear_in_urls_or_logs(caplog: Any) -> None:
    server = OAuthTestServer()
    auth = server_oauth(server)
    with caplog.at_level(logging.DEBUG, logger="mcplite"):
        call(auth, server.send, server.mcp_url)
        server.access_tokens.clear()
        call(auth, server.send, server.mcp_url)  # a refresh too
    secrets_seen = list(server.refresh_tokens) + [
        t for r in server.requests for t in [decode_form(r).get("refresh_token"), decode_form(r).get("code")] if t]
    secrets_seen += [token for token in map(bearer_of, server.requests) if token]
    assert secrets_seen and caplog.records
    for secret in secrets_seen:
        assert all(secret not in r.url for r in server.requests if not r.url.startswith(REDIRECT_URI))
        assert secret not in caplog.text


def test_token_endpoint_errors_carry_only_the_server_error() -> None:
    network = canned_deployment()
    network.routes[("POST", f"{ISSUER}/token")] = json_response(
        400, {"error": "invalid_grant", "error_description": "expired code"})
    with pytest.raises(AuthError) as info:
        call(canned_oauth(), network, MCP)
    assert str(info.value) == "the authorization_code token request failed with HTTP 400: invalid_grant (expired code)"


# ======================================================================================================
# Concurrency and driving
# ======================================================================================================


def test_one_sign_in_serves_threads_that_were_waiting_for_it() -> None:
    server = OAuthTestServer()
    follow = follow_authorization_redirect(server.send)
    in_consent, release = threading.Event(), threading.Event()

    def slow_consent(url: str) -> str:
        in_consent.set()
        assert release.wait(THREAD_TIMEOUT)
        return follow(url)

    authorize = CountingAuthorize(slow_consent)
    auth = server_oauth(server, authorize=authorize)
    first = Background(call, auth, server.send, server.mcp_url)
    assert in_consent.wait(THREAD_TIMEOUT)
    second = Background(call, auth, server.send, server.mcp_url)
    release.set()
    assert first.join(THREAD_TIMEOUT).status == 200 and second.join(THREAD_TIMEOUT).status == 200
    assert len(authorize.urls) == 1
    # The waiting thread retried with the new token straight away, without discovering again.
    assert server.paths().count("/.well-known/oauth-protected-resource/mcp") == 1


def test_drive_releases_the_flow_when_sending_fails() -> None:
    server = OAuthTestServer()
    auth = server_oauth(server)

    def failing_token_endpoint(request: HTTPRequest) -> HTTPResponse:
        if request.url.endswith("/token"):
            raise TransportError("connection reset")
        return server.send(request)

    with pytest.raises(TransportError) as failure:
        call(auth, failing_token_endpoint, server.mcp_url)
    # The traceback keeps drive's frame, and with it the flow, alive: only an explicit close releases it.
    retry = Background(call, auth, server.send, server.mcp_url, name="the call after the failed flow (kept its lock?)")
    assert failure.value.__traceback__ is not None
    assert retry.join(THREAD_TIMEOUT).status == 200


# ======================================================================================================
# Client credentials and cross-app access
# ======================================================================================================


def test_client_credentials_with_a_secret() -> None:
    server = OAuthTestServer()
    server.add_client("svc", secret="svc-secret")
    auth = ClientCredentials(client_id="svc", client_secret="svc-secret")
    assert call(auth, server.send, server.mcp_url).status == 200
    token_request = next(r for r in server.requests if r.url.endswith("/token"))
    form = decode_form(token_request)
    assert form == {"grant_type": "client_credentials", "scope": "mcp:read", "resource": server.mcp_url}
    assert split_basic(token_request.headers["Authorization"]) == ("svc", "svc-secret")


def test_client_credentials_with_a_pem_key() -> None:
    key = jose.load_private_key(EC_PKCS8_PEM)
    server = OAuthTestServer()
    server.add_client("svc", auth_method="private_key_jwt", public_key=key.public_key)
    auth = ClientCredentials(client_id="svc", private_key=EC_PKCS8_PEM, scopes=["mcp:read"])
    assert call(auth, server.send, server.mcp_url).status == 200
    form = decode_form(next(r for r in server.requests if r.url.endswith("/token")))
    assert form["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    assert "client_secret" not in form


def test_client_credentials_need_a_secret_or_a_key() -> None:
    with pytest.raises(ValueError):
        ClientCredentials(client_id="svc")


IDP = "https://idp.example.com"


def cross_app_network() -> Canned:
    def idp_token(request: HTTPRequest) -> HTTPResponse:
        return json_response(200, {
            "access_token": "id-jag-1", "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag",
            "token_type": "N_A"})

    network = canned_deployment(token_endpoint_auth_methods_supported=["client_secret_basic"])
    network.routes[("POST", f"{IDP}/token")] = idp_token
    network.routes[("GET", f"{IDP}/.well-known/openid-configuration")] = json_response(
        200, {"issuer": IDP, "token_endpoint": f"{IDP}/token"})
    return network


@pytest.mark.parametrize("idp", [{"idp_token_endpoint": f"{IDP}/token"}, {"idp_issuer": IDP}])
def test_cross_app_access_exchanges_the_id_token_then_uses_the_jwt_bearer_grant(idp: Dict[str, Any]) -> None:
    network = cross_app_network()
    auth = CrossAppAccess(
        client_id="mcp-client", client_secret="mcp-secret", id_token=lambda: "user-id-token",
        idp_client_id="idp-client", scopes="files:read", **idp)
    assert call(auth, network, MCP).status == 200
    exchange = next(r for r in network.requests if r.url == f"{IDP}/token")
    assert decode_form(exchange) == {
        "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
        "requested_token_type": "urn:ietf:params:oauth:token-type:id-jag",
        "audience": ISSUER, "resource": MCP, "scope": "files:read",
        "subject_token": "user-id-token", "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
        "client_id": "idp-client",
    }
    grant = next(r for r in network.requests if r.url == f"{ISSUER}/token")
    assert decode_form(grant) == {
        "grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer", "assertion": "id-jag-1",
        "scope": "files:read", "resource": MCP,
    }
    assert split_basic(grant.headers["Authorization"]) == ("mcp-client", "mcp-secret")
    assert network.calls().index(f"POST {IDP}/token") < network.calls().index(f"POST {ISSUER}/token")


def test_cross_app_access_refuses_a_response_without_an_id_jag() -> None:
    network = cross_app_network()
    network.routes[("POST", f"{IDP}/token")] = json_response(200, {"access_token": "x", "issued_token_type": "other"})
    auth = CrossAppAccess(client_id="c", client_secret="s", id_token="t", idp_token_endpoint=f"{IDP}/token")
    with pytest.raises(AuthError, match="ID-JAG"):
        call(auth, network, MCP)
