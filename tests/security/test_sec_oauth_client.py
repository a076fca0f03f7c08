"""Security: the OAuth client goes only where it is safe to go, whatever a server names.

A hostile MCP server (or authorization server) names URLs: the 401's ``resource_metadata``, the
``authorization_servers``, the endpoints of the metadata. The client must not fetch the cloud metadata service,
post a client secret over plain http or to a private address, nor follow a redirect anywhere
(`mcplite.oauth.destinations`). Tested three ways: the pure check with a table of URLs; the flow with a scripted
network of a hostile remote deployment (`Canned`: no real remote peer exists); and real servers on 127.0.0.1 with
every outgoing connection recorded, to show that the refused URLs are refused before any connection is tried.
Also: the malformed-document fuzzer (tests/reliability/fuzz_oauth_documents.py), and the protections the client
held already (PKCE S256 only, ``state``, RFC 9207 ``iss``, the resource indicator), so that they stay held.
"""

import socket
import time
from contextlib import contextmanager
from typing import Any, Dict, Iterator, List, Optional, Tuple
from urllib.parse import urlsplit

import pytest
from oauth_server import OAuthTestServer, decode_form, decode_query, follow_authorization_redirect, jsonrpc_request
from reliability import fuzz_oauth_documents
from support.canned import Canned, Route, json_response
from support.keys import EC_PKCS8_PEM

from mcplite import Client
from mcplite.errors import AuthError
from mcplite.oauth import ClientCredentials, CrossAppAccess, HTTPRequest, HTTPResponse, JWTBearer, OAuth, drive
from mcplite.oauth.advanced import send_with_http_client
from mcplite.oauth.destinations import check_oauth_destination, host_kind

SOCKET_TIMEOUT = 5.0
REDIRECT_URI = "http://127.0.0.1:8976/callback"  # never contacted: the tests read the 302 themselves

# ---- the pure check -------------------------------------------------------------------------------------------

#: Never, whatever the options, wherever the MCP server is (each spelling reaches the metadata service, a
#: link-local address, or an address nothing should connect to: `getaddrinfo` reads 2852039166 as 169.254.169.254).
NEVER = [
    "http://169.254.169.254/latest/meta-data/iam/security-credentials/", "https://169.254.169.254/",
    "http://metadata.google.internal/computeMetadata/v1/", "https://metadata.google.internal./x",
    "http://metadata/x", "https://METADATA.GOOGLE.INTERNAL/x", "http://instance-data/x", "http://100.100.100.200/x",
    "http://2852039166/x", "http://0xa9.0xfe.0xa9.0xfe/x", "http://0251.0376.0251.0376/x", "http://169.254.43518/x",
    "http://[::ffff:169.254.169.254]/x", "http://[::ffff:a9fe:a9fe]/x", "http://[64:ff9b::a9fe:a9fe]/x",
    "http://[2002:a9fe:a9fe::1]/x", "https://[fd00:ec2::254]/x", "http://[fe80::1]/x", "https://169.254.10.10/x",
    "http://169.254.169.254.:80/x", "http://0.0.0.0:8080/x", "http://[::]/x", "http://224.0.0.1/x",
    "http://255.255.255.255/x", "http://240.0.0.1/x",
]


@pytest.mark.parametrize("url", NEVER)
@pytest.mark.parametrize("server_url", ["same origin", "http://127.0.0.1:8000/mcp", "https://mcp.example.com/mcp",
                                        "http://10.0.0.9/mcp"])
def test_link_local_and_metadata_addresses_are_refused_whatever_the_options(url: str, server_url: str) -> None:
    if server_url == "same origin":
        server_url = url
    with pytest.raises(AuthError) as refused:
        check_oauth_destination(url, what="the token_endpoint", server_url=server_url, allow_private_networks=True)
    assert url[:60] in str(refused.value) and "never goes there" in str(refused.value)


ALLOWED: List[Tuple[str, str, bool]] = [
    ("https://auth.example.com/token", "https://mcp.example.com/mcp", False),
    ("https://auth.example.com/token", "http://127.0.0.1:8000/mcp", False),
    ("http://localhost:9000/token", "http://127.0.0.1:8000/mcp", False),  # the conformance suite's set-up
    ("http://127.0.0.2/token", "http://localhost/mcp", False),
    ("http://[::1]:9/token", "http://127.0.0.1/mcp", False),
    ("http://127.1:9/token", "http://[::1]/mcp", False),
    ("http://mcp.example.com/token", "http://mcp.example.com/mcp", False),  # the origin the caller chose
    ("https://10.1.2.3/token", "http://10.9.9.9:8080/mcp", False),  # the MCP server's own private network
    ("https://172.16.0.1/token", "https://172.31.255.254/mcp", False),
    ("https://[fd12::1]/token", "http://[fd99::5]/mcp", False),
    ("https://192.168.1.1/token", "https://mcp.example.com/mcp", True),
    ("http://localhost:9/token", "https://mcp.example.com/mcp", True),
    ("https://[fc00::1]/token", "https://mcp.example.com/mcp", True),
    ("https://192.0.2.7/token", "https://mcp.example.com/mcp", True),
]


@pytest.mark.parametrize("url, server_url, allow", ALLOWED)
def test_what_is_allowed(url: str, server_url: str, allow: bool) -> None:
    check_oauth_destination(url, what="the token_endpoint", server_url=server_url, allow_private_networks=allow)


REFUSED: List[Tuple[str, str, bool, str]] = [
    ("http://auth.example.com/token", "https://mcp.example.com/mcp", False, "over https only"),
    ("http://auth.example.com/token", "http://127.0.0.1/mcp", True, "over https only"),
    ("http://10.0.0.5/token", "http://10.0.0.9/mcp", True, "over https only"),  # opting in never allows plain http
    ("http://evil.example.com:443/token", "https://evil.example.com/mcp", False, "over https only"),
    ("https://10.0.0.5/token", "https://mcp.example.com/mcp", False, "private network 10.0.0.0/8"),
    ("https://10.0.0.5/token", "https://mcp.internal.example/mcp", False, "private network"),  # a name: unknown
    ("https://192.168.1.1/token", "http://10.0.0.9/mcp", False, "private network 192.168.0.0/16"),
    ("https://100.64.0.1/token", "https://mcp.example.com/mcp", False, "private network 100.64.0.0/10"),
    ("https://[fc00::1]/token", "https://mcp.example.com/mcp", False, "private network fc00::/7"),
    ("http://127.0.0.1:9/token", "https://mcp.example.com/mcp", False, "a loopback address"),
    ("http://localhost/token", "https://10.0.0.9/mcp", False, "a loopback address"),
    ("https://192.0.2.7/token", "https://mcp.example.com/mcp", False, "not public"),
    ("ftp://auth.example.com/token", "https://mcp.example.com/mcp", True, "not an http(s) URL"),
]


@pytest.mark.parametrize("url, server_url, allow, rule", REFUSED)
def test_what_is_refused_names_the_url_and_the_rule(url: str, server_url: str, allow: bool, rule: str) -> None:
    with pytest.raises(AuthError) as refused:
        check_oauth_destination(url, what="the token_endpoint", server_url=server_url, allow_private_networks=allow)
    message = str(refused.value)
    assert url in message and rule in message and "the token_endpoint" in message
    if "network" in rule or "loopback" in rule or "public" in rule:
        assert "allow_private_networks=True" in message


def test_hosts_are_judged_as_written_and_never_resolved(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_lookup(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"a name was resolved: {args}")
    monkeypatch.setattr(socket, "getaddrinfo", no_lookup)
    monkeypatch.setattr(socket, "gethostbyname", no_lookup)
    assert host_kind("auth.example.com") == ("public", None)
    assert host_kind("127.1")[0] == "loopback" and host_kind("LOCALHOST")[0] == "loopback"
    assert host_kind("2852039166")[0] == "metadata" and host_kind("169.254.1.1")[0] == "link-local"
    check_oauth_destination("https://intranet.example/token", what="x", server_url="https://mcp.example.com/mcp")


# ---- a hostile remote deployment, scripted ----------------------------------------------------------------------

MCP = "https://mcp.example.com/mcp"
PRM = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
ISSUER = "https://auth.example.com"
AS_METADATA = f"{ISSUER}/.well-known/oauth-authorization-server"


def _metadata(**overrides: Any) -> Dict[str, Any]:
    metadata = {"issuer": ISSUER, "authorization_endpoint": f"{ISSUER}/authorize", "token_endpoint": f"{ISSUER}/token",
                "registration_endpoint": f"{ISSUER}/register", "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["client_secret_basic", "none"]}
    metadata.update(overrides)
    return metadata


def hostile(*, challenge_url: str = PRM, servers: Optional[List[str]] = None, extra: Optional[Dict[Any, Route]] = None,
            **metadata: Any) -> Canned:
    """The scripted network of ``MCP``: its 401 names ``challenge_url``, its metadata ``servers``, and the
    authorization server's metadata has ``metadata`` over the defaults; tokens are issued at ``ISSUER``."""
    def mcp(request: HTTPRequest) -> HTTPResponse:
        if {k.lower(): v for k, v in request.headers.items()}.get("authorization") == "Bearer tok":
            return json_response(200, {"jsonrpc": "2.0", "id": 1, "result": {}})
        return json_response(401, {}, {"www-authenticate": f'Bearer resource_metadata="{challenge_url}"'})
    routes: Dict[Any, Route] = {
        ("POST", MCP): mcp,
        ("GET", PRM): json_response(200, {"resource": MCP, "authorization_servers": servers or [ISSUER]}),
        ("GET", AS_METADATA): json_response(200, _metadata(**metadata)),
        ("POST", f"{ISSUER}/token"): json_response(200, {"access_token": "tok", "token_type": "Bearer"}),
        ("POST", f"{ISSUER}/register"): json_response(201, {"client_id": "dyn"}),
    }
    routes.update(extra or {})
    return Canned(routes)


def hosts_contacted(network: Canned) -> List[str]:
    return sorted({urlsplit(request.url).netloc for request in network.requests})


def never_authorize(url: str) -> str:
    raise AssertionError(f"the user was sent to {url}")


def secret_client(**options: Any) -> ClientCredentials:
    return ClientCredentials(client_id="svc", client_secret="s3cret", dpop=False, **options)


@pytest.mark.parametrize("url", ["http://169.254.169.254/latest/meta-data/", "http://[fe80::1]/prm",
                                 "https://10.0.0.5/.well-known/oauth-protected-resource", "http://127.0.0.1:1/prm",
                                 "http://evil.example/prm"])
def test_a_resource_metadata_url_of_the_401_that_is_not_safe_is_refused_before_it_is_fetched(url: str) -> None:
    network = hostile(challenge_url=url)
    with pytest.raises(AuthError, match="resource_metadata of the 401") as refused:
        drive(secret_client().auth_flow(jsonrpc_request(MCP)), network)
    assert url in str(refused.value)
    assert network.calls() == [f"POST {MCP}"]  # nothing was fetched


@pytest.mark.parametrize("listed", [["http://169.254.169.254/"], [ISSUER, "http://metadata.google.internal"],
                                    ["http://auth.example.com"], ["https://192.168.0.1/as"]])
def test_authorization_servers_that_are_not_safe_are_refused_before_any_is_asked(listed: List[str]) -> None:
    network = hostile(servers=listed)
    with pytest.raises(AuthError, match="the authorization server named by a server"):
        drive(secret_client().auth_flow(jsonrpc_request(MCP)), network)
    assert hosts_contacted(network) == ["mcp.example.com"]


@pytest.mark.parametrize("endpoint", ["http://10.0.0.5/token", "https://10.0.0.5/token", "http://[fe80::1]/token",
                                      "http://auth.example.com/t", "http://2852039166/token", "http://127.0.0.1:8/t"])
def test_the_client_secret_never_goes_to_a_token_endpoint_that_is_not_safe(endpoint: str) -> None:
    network = hostile(token_endpoint=endpoint)
    with pytest.raises(AuthError, match="token_endpoint") as refused:
        drive(secret_client().auth_flow(jsonrpc_request(MCP)), network)
    assert endpoint in str(refused.value)
    assert [r for r in network.requests if r.method == "POST" and r.url != MCP] == []
    assert not any("authorization" in {k.lower() for k in r.headers} for r in network.requests)


@pytest.mark.parametrize("member", ["registration_endpoint", "authorization_endpoint", "jwks_uri",
                                   "revocation_endpoint", "userinfo_endpoint"])
def test_every_endpoint_of_the_metadata_is_checked_whether_it_is_used_or_not(member: str) -> None:
    network = hostile(**{member: "http://169.254.169.254/x"})
    auth = OAuth(authorize=never_authorize, redirect_uri=REDIRECT_URI, dpop=False)
    with pytest.raises(AuthError, match=f"the {member} of the authorization server {ISSUER}"):
        drive(auth.auth_flow(jsonrpc_request(MCP)), network)
    assert hosts_contacted(network) == ["auth.example.com", "mcp.example.com"]
    assert [r.method for r in network.requests if "auth.example.com" in r.url] == ["GET"]  # the metadata only


def test_the_private_key_assertion_and_the_workload_assertion_stay_away_from_an_unsafe_token_endpoint() -> None:
    network = hostile(token_endpoint="https://192.168.7.7/token")
    keyed = ClientCredentials(client_id="svc", private_key=EC_PKCS8_PEM, dpop=False)
    with pytest.raises(AuthError, match="private network 192.168.0.0/16"):
        drive(keyed.auth_flow(jsonrpc_request(MCP)), network)
    workload = JWTBearer(assertion=fuzz_oauth_documents._jwt({"aud": ISSUER, "sub": "w"}), dpop=False)
    with pytest.raises(AuthError, match="private network 192.168.0.0/16"):
        drive(workload.auth_flow(jsonrpc_request(MCP)), network)
    assert all(urlsplit(r.url).hostname != "192.168.7.7" for r in network.requests)


def test_the_2025_03_26_fallback_checks_the_metadata_it_finds() -> None:
    network = Canned({
        ("POST", MCP): json_response(401, {}, {"www-authenticate": "Bearer"}),
        ("GET", "https://mcp.example.com/.well-known/oauth-authorization-server"): json_response(200, {
            "issuer": "https://mcp.example.com", "authorization_endpoint": "https://mcp.example.com/authorize",
            "token_endpoint": "http://169.254.169.254/token"}),
    })
    auth = ClientCredentials(client_id="svc", client_secret="s", dpop=False, protocol_version="2025-03-26")
    with pytest.raises(AuthError, match="169.254.169.254"):
        drive(auth.auth_flow(jsonrpc_request(MCP)), network)
    assert not any("169.254" in r.url for r in network.requests)


def test_cross_app_access_checks_the_identity_providers_metadata_too() -> None:
    idp = "https://idp.example.com"
    network = hostile(extra={("GET", f"{idp}/.well-known/oauth-authorization-server"): json_response(200, {
        "issuer": idp, "token_endpoint": "http://metadata.google.internal/token"})})
    auth = CrossAppAccess(client_id="svc", client_secret="s", id_token="id-token", idp_issuer=idp, dpop=False)
    with pytest.raises(AuthError, match="metadata.google.internal"):
        drive(auth.auth_flow(jsonrpc_request(MCP)), network)
    assert not any(r.method == "POST" and r.url != MCP for r in network.requests)  # the ID token stayed here


def test_allow_private_networks_lets_a_private_token_endpoint_through_and_nothing_more() -> None:
    private = "https://10.0.0.5/token"
    network = hostile(token_endpoint=private, extra={
        ("POST", private): json_response(200, {"access_token": "tok", "token_type": "Bearer"})})
    response = drive(secret_client(allow_private_networks=True).auth_flow(jsonrpc_request(MCP)), network)
    assert response.status == 200 and f"POST {private}" in network.calls()
    # plain http and link-local stay refused with it
    for endpoint in ("http://10.0.0.5/token", "https://169.254.169.254/token"):
        with pytest.raises(AuthError):
            drive(secret_client(allow_private_networks=True).auth_flow(jsonrpc_request(MCP)),
                  hostile(token_endpoint=endpoint))


def test_a_safe_remote_deployment_still_signs_in() -> None:
    network = hostile()
    assert drive(secret_client().auth_flow(jsonrpc_request(MCP)), network).status == 200
    assert f"POST {ISSUER}/token" in network.calls()


# ---- real servers on 127.0.0.1, every connection recorded ---------------------------------------------------------

@pytest.fixture
def connections(monkeypatch: pytest.MonkeyPatch) -> List[Tuple[str, int]]:
    """Every (host, port) a connection is opened to from here on; anything but 127.0.0.1 is refused (OSError),
    so that a test that went astray fails rather than touches the network."""
    opened: List[Tuple[str, int]] = []
    real = socket.create_connection

    def create_connection(address: Tuple[str, int], *args: Any, **kwargs: Any) -> socket.socket:
        opened.append((address[0], address[1]))
        if address[0] not in ("127.0.0.1", "localhost"):
            raise OSError(f"test: no connection to {address} allowed")
        return real(address, *args, **kwargs)
    monkeypatch.setattr(socket, "create_connection", create_connection)
    return opened


class HostileServer(OAuthTestServer):
    """The test authorization server and resource on 127.0.0.1, naming what a test says: ``challenge_url`` in
    its 401s, ``metadata_overrides`` in its authorization server metadata, ``redirects`` {path: location} (307)."""

    def __init__(self) -> None:
        super().__init__()
        self.challenge_url: Optional[str] = None
        self.metadata_overrides: Dict[str, Any] = {}
        self.redirects: Dict[str, str] = {}

    @property
    def resource_metadata_url(self) -> str:
        return self.challenge_url or super().resource_metadata_url

    def _metadata(self) -> Dict[str, Any]:
        return {**super()._metadata(), **self.metadata_overrides}

    def _route(self, request: HTTPRequest) -> HTTPResponse:
        location = self.redirects.get(urlsplit(request.url).path)
        if location is not None:
            return HTTPResponse(307, {"location": location, "content-type": "application/json"}, b"{}")
        return super()._route(request)


@contextmanager
def running(server: OAuthTestServer) -> Iterator[Any]:
    server.start()
    try:
        yield server
    finally:
        server.close()


def send(request: HTTPRequest) -> HTTPResponse:
    return send_with_http_client(request, timeout=SOCKET_TIMEOUT)


def port_of(server: OAuthTestServer) -> int:
    return int(server.base_url.rsplit(":", 1)[1])


@pytest.mark.parametrize("named", ["http://169.254.169.254/latest/meta-data/", "http://2852039166/",
                                   "http://[::ffff:169.254.169.254]/", "https://metadata.google.internal/x"])
def test_a_hostile_mcp_server_on_loopback_cannot_send_the_client_to_the_metadata_service(
        named: str, connections: List[Tuple[str, int]]) -> None:
    with running(HostileServer()) as server:
        server.challenge_url = named
        with pytest.raises(AuthError, match="never goes there"):
            with Client(server.mcp_url, auth=secret_client(), timeout=SOCKET_TIMEOUT) as client:
                client.list_tools()
    assert {address for address in connections} == {("127.0.0.1", port_of(server))}
    assert all(named not in r.url for r in server.requests)


@pytest.mark.parametrize("endpoint", ["http://10.0.0.5/token", "https://192.168.1.10/token", "http://0xa9fea9fe/token",
                                      "http://metadata/token", "http://evil.example/token"])
def test_a_hostile_authorization_server_on_loopback_never_gets_the_secret_sent_elsewhere(
        endpoint: str, connections: List[Tuple[str, int]]) -> None:
    with running(HostileServer()) as server:
        server.add_client("svc", secret="s3cret")
        server.metadata_overrides = {"token_endpoint": endpoint}
        with pytest.raises(AuthError, match="token_endpoint"):
            drive(secret_client().auth_flow(jsonrpc_request(server.mcp_url)), send)
    assert set(connections) == {("127.0.0.1", port_of(server))}
    assert [r.method for r in server.requests if r.method == "POST" and not r.url.endswith("/mcp")] == []


def test_the_same_loopback_deployment_signs_in_when_it_names_safe_urls(connections: List[Tuple[str, int]]) -> None:
    with running(HostileServer()) as server:
        server.add_client("svc", secret="s3cret")
        assert drive(secret_client().auth_flow(jsonrpc_request(server.mcp_url)), send).status == 200
    assert set(connections) == {("127.0.0.1", port_of(server))}


@pytest.mark.parametrize("path, refused", [
    ("/token", True), ("/.well-known/oauth-authorization-server", True),
    # the 2025-03-26 fallback then finds the authorization server at the origin: signed in, with no redirect taken
    ("/.well-known/oauth-protected-resource/mcp", False),
])
def test_redirects_are_never_followed(path: str, refused: bool, connections: List[Tuple[str, int]]) -> None:
    with running(HostileServer()) as server, running(HostileServer()) as elsewhere:
        server.add_client("svc", secret="s3cret")
        elsewhere.add_client("svc", secret="s3cret")
        server.redirects = {path: f"{elsewhere.base_url}{path}"}
        if refused:
            with pytest.raises(AuthError, match="307|no authorization server metadata"):
                drive(secret_client().auth_flow(jsonrpc_request(server.mcp_url)), send)
            with pytest.raises(AuthError):  # the same over the HTTP client transport's own connections
                with Client(server.mcp_url, auth=secret_client(), timeout=SOCKET_TIMEOUT) as client:
                    client.list_tools()
        else:
            assert drive(secret_client().auth_flow(jsonrpc_request(server.mcp_url)), send).status == 200
        assert path in [urlsplit(r.url).path for r in server.requests]  # the redirect was served
    assert elsewhere.requests == []
    assert {port for _, port in connections} == {port_of(server)}


# ---- malformed documents end in AuthError ----------------------------------------------------------------------

def test_malformed_metadata_and_token_responses_end_in_auth_error_and_go_nowhere_unsafe() -> None:
    started = time.monotonic()
    fuzz_oauth_documents.run(seed=20260728, cases=1200)
    assert time.monotonic() - started < 15  # about 1.5 s alone; a loaded machine gets room


@pytest.mark.parametrize("body", [
    b"[" * 100_000 + b"]" * 100_000, b'{"access_token":"\\ud800","token_type":"Bearer"}', b"\xff\xfe{}",
    b'{"access_token":"t","expires_in":1e400}', b'{"access_token":"t","expires_in":' + b"9" * 5000 + b"}",
    b'{"access_token":["t"]}', b'{"access_token":"t","token_type":{"a":1}}', b'{"access_token":"t\\r\\nX: y"}',
    b'{"access_token":"t","expires_in":NaN}', b"null", b'"text"', b'{"a":1,"a":2}',
])
def test_each_kind_of_malformed_token_response_is_an_auth_error(body: bytes) -> None:
    network = hostile(extra={("POST", f"{ISSUER}/token"): HTTPResponse(200, {"content-type": "application/json"},
                                                                       body)})
    with pytest.raises(AuthError):
        drive(secret_client().auth_flow(jsonrpc_request(MCP)), network)


# ---- protections held already (these pass on the old code too) ------------------------------------------------

def test_pkce_is_s256_only() -> None:
    seen: List[str] = []

    def authorize(url: str) -> str:
        seen.append(url)
        query = decode_query(url)
        return f"{query['redirect_uri']}?code=c&state={query['state']}"
    for methods in (["plain"], ["plain", "S256"], ["S256"]):
        network = hostile(code_challenge_methods_supported=methods)
        auth = OAuth(client_id="app", authorize=authorize, redirect_uri=REDIRECT_URI, dpop=False)
        if "S256" not in methods:
            with pytest.raises(AuthError, match="S256"):
                drive(auth.auth_flow(jsonrpc_request(MCP)), network)
        else:
            drive(auth.auth_flow(jsonrpc_request(MCP)), network)
    assert len(seen) == 2 and all(decode_query(url)["code_challenge_method"] == "S256" for url in seen)


@pytest.mark.parametrize("tamper", ["state", "iss", "both"])
def test_state_and_iss_are_checked_before_the_code_is_redeemed(tamper: str) -> None:
    def authorize(url: str) -> str:
        query = decode_query(url)
        state = "forged" if tamper in ("state", "both") else query["state"]
        iss = "https://evil.example" if tamper in ("iss", "both") else ISSUER
        return f"{query['redirect_uri']}?code=c&state={state}&iss={iss}"
    network = hostile(authorization_response_iss_parameter_supported=True)
    auth = OAuth(client_id="app", authorize=authorize, redirect_uri=REDIRECT_URI, dpop=False)
    with pytest.raises(AuthError, match="state" if tamper != "iss" else "issuer"):
        drive(auth.auth_flow(jsonrpc_request(MCP)), network)
    assert f"POST {ISSUER}/token" not in network.calls()


def test_a_missing_iss_is_refused_where_the_server_promised_it() -> None:
    def authorize(url: str) -> str:
        query = decode_query(url)
        return f"{query['redirect_uri']}?code=c&state={query['state']}"
    network = hostile(authorization_response_iss_parameter_supported=True)
    auth = OAuth(client_id="app", authorize=authorize, redirect_uri=REDIRECT_URI, dpop=False)
    with pytest.raises(AuthError, match="no iss"):
        drive(auth.auth_flow(jsonrpc_request(MCP)), network)
    assert f"POST {ISSUER}/token" not in network.calls()


def test_the_resource_indicator_names_the_mcp_server_and_foreign_resource_metadata_is_refused() -> None:
    with running(HostileServer()) as server:  # it refuses a code or token request without the right resource
        auth = OAuth(authorize=follow_authorization_redirect(send), redirect_uri=REDIRECT_URI, dpop=False)
        assert drive(auth.auth_flow(jsonrpc_request(server.mcp_url)), send).status == 200
        token_forms = [decode_form(r) for r in server.requests if r.url.endswith("/token")]
        assert token_forms and all(form["resource"] == server.mcp_url for form in token_forms)
    network = hostile(extra={("GET", PRM): json_response(200, {"resource": "https://other.example.com/mcp",
                                                               "authorization_servers": [ISSUER]})})
    with pytest.raises(AuthError, match="refusing to use it"):
        drive(secret_client().auth_flow(jsonrpc_request(MCP)), network)
    assert hosts_contacted(network) == ["mcp.example.com"]


@pytest.mark.parametrize("host", ["1" * 5000, "0x" + "f" * 5000, "0" * 5000 + "1.2.3.4"])
def test_a_numeric_host_of_any_length_is_judged_quickly_without_a_bare_error(host: str) -> None:
    """A host of digits too long for an address is a name (so https only), never int()'s digit-limit ValueError;
    leading zeros still read as the address they spell (``0x000...a9`` is 169)."""
    started = time.monotonic()
    kind, _ = host_kind(host)
    assert kind == "public"  # a name (or, for the last, 1.2.3.4): public, so https only
    assert time.monotonic() - started < 0.05
    with pytest.raises(AuthError, match="https only"):
        check_oauth_destination(f"http://{host}/token", what="the token endpoint",
                                server_url="https://mcp.example.com/mcp")
    assert host_kind("0x" + "0" * 5000 + "a9.0xfe.0xa9.0xfe")[0] == "metadata"
