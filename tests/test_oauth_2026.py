"""The authorization rules of revision 2026-07-28 in mcplite's OAuth client, as tables, over real sockets
(the test authorization server on 127.0.0.1, port 0):

- RFC 9207 ``iss`` in the authorization response, checked before the code is redeemed (the four rows of
  VERSIONS.md §3, exact comparison, error responses too), in every revision;
- authorization server metadata whose ``issuer`` is not the one its URL was built from (RFC 8414 §3.3);
- credentials and registrations kept per issuer: a server that moves to another authorization server gets a
  fresh registration there, and a pre-registered client is never presented to another server (SEP-2352);
- ``application_type`` in dynamic registration (SEP-837);
- ``resource`` exactly as the protected resource metadata states it (RFC 8707, RFC 9728 §3.3);
- ``offline_access`` only where the authorization server lists it, ``refresh_token`` in DCR (SEP-2207).
"""

import json
import re
from contextlib import contextmanager
from typing import Any, Callable, Dict, Iterator, List, Optional, TypeVar
from urllib.parse import urlencode

import pytest

from mcplite.errors import AuthError
from mcplite.oauth import (
    AuthorizationResponse,
    ClientCredentials,
    FileTokenStorage,
    HTTPRequest,
    HTTPResponse,
    MemoryTokenStorage,
    OAuth,
)
from mcplite.oauth.advanced import (
    AUTH_RULES,
    application_type_for,
    check_authorization_response_issuer,
    send_with_http_client,
)
from oauth_server import (  # tests/ is on sys.path under pytest's default import mode
    CountingAuthorize, OAuthTestServer, call, decode_form, decode_query, follow_authorization_redirect, split_basic,
)

SOCKET_TIMEOUT = 5.0
REDIRECT_URI = "http://127.0.0.1:8976/callback"  # registered, never contacted: tests read the 302 itself
EVIL = "https://evil.example.com"


def send(request: HTTPRequest) -> HTTPResponse:
    return send_with_http_client(request, timeout=SOCKET_TIMEOUT)


class Server2026(OAuthTestServer):
    """The test authorization server and resource with the knobs of the 2026-07-28 scenarios."""

    def __init__(self) -> None:
        super().__init__()
        self.advertise_iss: Optional[bool] = True  # type: ignore[assignment]  # None: the flag is absent
        self.iss_value: Optional[Callable[[str], str]] = None  # the iss the redirect carries, from the issuer
        self.authorize_error: Optional[str] = None  # answer the authorization request with this error
        self.metadata_issuer: Optional[str] = None  # what the metadata claims as its issuer
        self.prm_resource: Optional[str] = None  # what the protected resource metadata names as resource
        self.as_scopes_supported: Any = "same"  # the AS metadata's: "same" as the PRM's, None for none
        self.challenge_scopes: Optional[List[str]] = None  # the 401's scope=, when not the required ones

    def _metadata(self) -> Dict[str, Any]:
        metadata = super()._metadata()
        if self.advertise_iss is None:
            del metadata["authorization_response_iss_parameter_supported"]
        if self.metadata_issuer is not None:
            metadata["issuer"] = self.metadata_issuer
        if self.as_scopes_supported is None:
            del metadata["scopes_supported"]
        elif self.as_scopes_supported != "same":
            metadata["scopes_supported"] = self.as_scopes_supported
        return metadata

    def _challenge(self, status: int, error: str, scopes: List[str]) -> HTTPResponse:
        return super()._challenge(status, error, self.challenge_scopes if self.challenge_scopes else scopes)

    def _authorize(self, query: Dict[str, str]) -> HTTPResponse:
        response = super()._authorize(query)
        if response.status != 302:
            return response
        params = decode_query(response.headers["location"])
        if self.authorize_error is not None:
            params = {"error": self.authorize_error, "state": params["state"], **(
                {"iss": params["iss"]} if "iss" in params else {})}
        if self.iss_value is not None:
            params["iss"] = self.iss_value(self.issuer)
        location = query["redirect_uri"] + "?" + urlencode(params)
        return HTTPResponse(302, {"location": location}, b"")

    def _route(self, request: HTTPRequest) -> HTTPResponse:
        response = super()._route(request)
        if request.url.endswith("/.well-known/oauth-protected-resource/mcp") and self.prm_resource is not None:
            document = json.loads(response.body)
            document["resource"] = self.prm_resource
            response = response._replace(body=json.dumps(document).encode())
        return response


S = TypeVar("S", bound=OAuthTestServer)


@contextmanager
def running(server: S) -> Iterator[S]:
    """``server`` serving on 127.0.0.1 (a free port) for the duration."""
    server.start()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def server() -> Iterator[Server2026]:
    with running(Server2026()) as started:
        yield started


def sign_in(server: OAuthTestServer, **kwargs: Any) -> HTTPResponse:
    kwargs.setdefault("redirect_uri", REDIRECT_URI)
    kwargs.setdefault("authorize", follow_authorization_redirect(send))  # reads the 302, never follows it
    return call(OAuth(**kwargs), send, server.mcp_url)


# ======================================================================================================
# RFC 9207 iss, before the code is redeemed
# ======================================================================================================

SAME = (lambda issuer: issuer)
ISS_ROWS = [
    # advertised (None: the flag is absent), the iss sent (None: omitted), accepted, what a refusal says
    (True, SAME, True, None),
    (True, None, False, "received none"),
    (True, lambda issuer: EVIL, False, EVIL),
    (True, lambda issuer: issuer + "/", False, "compared exactly"),  # no URL normalisation
    (True, lambda issuer: issuer.upper(), False, "compared exactly"),
    (True, lambda issuer: "", False, "compared exactly"),  # present but empty is present
    (False, SAME, True, None),
    (False, None, True, None),
    (False, lambda issuer: EVIL, False, EVIL),  # present though not advertised: still compared
    (None, SAME, True, None),
    (None, None, True, None),
    (None, lambda issuer: EVIL, False, EVIL),
    (None, lambda issuer: issuer + "/", False, "compared exactly"),
]
ISS_IDS = ["adv-equal", "adv-missing", "adv-other", "adv-slash", "adv-case", "adv-empty", "false-equal",
           "false-missing", "false-other", "absent-equal", "absent-missing", "absent-other", "absent-slash"]


@pytest.mark.parametrize("version", sorted(AUTH_RULES))
@pytest.mark.parametrize("advertised, iss, accepted, refusal", ISS_ROWS, ids=ISS_IDS)
def test_iss_table_in_every_revision(
    server: Server2026, version: str, advertised: Optional[bool], iss: Optional[Callable[[str], str]],
    accepted: bool, refusal: Optional[str],
) -> None:
    server.advertise_iss = advertised
    server.iss_in_redirect = "omit"
    server.iss_value = iss
    if accepted:
        assert sign_in(server, protocol_version=version).status == 200
        assert server.paths().count("/token") == 1
        return
    with pytest.raises(AuthError) as refused:
        sign_in(server, protocol_version=version)
    assert refusal is not None and refusal in str(refused.value)
    assert repr(server.issuer) in str(refused.value)  # names what was expected ...
    assert "/authorize" in server.paths() and "/token" not in server.paths()  # ... and never redeems the code


@pytest.mark.parametrize("advertised, iss, accepted, refusal", ISS_ROWS, ids=ISS_IDS)
def test_iss_table_on_error_responses(
    server: Server2026, advertised: Optional[bool], iss: Optional[Callable[[str], str]], accepted: bool,
    refusal: Optional[str],
) -> None:
    # An error redirect gets the same check: a forged "access_denied" from another server is a mix-up too.
    server.advertise_iss = advertised
    server.iss_in_redirect = "omit"
    server.iss_value = iss
    server.authorize_error = "access_denied"
    with pytest.raises(AuthError) as refused:
        sign_in(server)
    message = str(refused.value)
    if accepted:  # the iss check passed, so what the user is told is the server's own answer
        assert "authorization was refused: access_denied" in message
    else:
        assert refusal is not None and refusal in message and "access_denied" not in message
    assert "/token" not in server.paths()


def test_iss_is_checked_against_the_issuer_the_request_went_to() -> None:
    # Two servers: each authorization response must name the one its own request went to.
    with running(Server2026()) as first, running(Server2026()) as second:
        first.iss_value = lambda issuer: second.issuer
        with pytest.raises(AuthError, match=re.escape(repr(first.issuer))):
            sign_in(first)
        assert "/token" not in first.paths()
        assert sign_in(second).status == 200


@pytest.mark.parametrize("query", [
    "code=c&state=s&iss=a&iss=b", "code=c&code=d&state=s", "code=c&state=s&state=t", "error=x&error=y&state=s",
])
def test_an_authorization_response_that_repeats_a_parameter_is_refused(query: str) -> None:
    with pytest.raises(AuthError, match="repeats"):
        AuthorizationResponse.from_redirect_url(f"{REDIRECT_URI}?{query}")


def test_unknown_redirect_parameters_may_repeat_and_empty_ones_stay_present() -> None:
    response = AuthorizationResponse.from_redirect_url(f"{REDIRECT_URI}?x=1&x=2&code=c&state=s&iss=")
    assert (response.code, response.state, response.iss) == ("c", "s", "")
    with pytest.raises(AuthError):
        check_authorization_response_issuer(response.iss, "https://as.example", advertised=False)


# ======================================================================================================
# Authorization server metadata issuer (RFC 8414 §3.3)
# ======================================================================================================


@pytest.mark.parametrize("claimed", [
    "https://attacker.example.com", "{issuer}/", "{issuer}/tenant", "{issuer_upper}", "{issuer_other_port}", "",
])
def test_metadata_naming_another_issuer_is_refused_before_any_other_request(server: Server2026, claimed: str) -> None:
    scheme, _, rest = server.issuer.partition("://")
    server.metadata_issuer = claimed.format(
        issuer=server.issuer, issuer_upper=f"{scheme.upper()}://{rest}",
        issuer_other_port=server.issuer.rsplit(":", 1)[0] + ":1")
    authorize = CountingAuthorize(follow_authorization_redirect(send))
    with pytest.raises(AuthError) as refused:
        sign_in(server, authorize=authorize)
    assert repr(server.issuer) in str(refused.value) and repr(server.metadata_issuer) in str(refused.value)
    assert server.paths() == [
        "/mcp", "/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-authorization-server"]
    assert authorize.urls == []


def test_metadata_with_the_issuer_it_was_built_from_is_used(server: Server2026) -> None:
    server.metadata_issuer = server.issuer
    assert sign_in(server).status == 200


# ======================================================================================================
# Credentials and registrations per issuer (SEP-2352)
# ======================================================================================================


class MovingResource(Server2026):
    """The resource and its first authorization server. After the first authorized request it moves to
    ``second`` (the conformance scenario auth/authorization-server-migration): the protected resource
    metadata names ``second`` from then on, and only tokens ``second`` issued are accepted."""

    def __init__(self, second: OAuthTestServer) -> None:
        super().__init__()
        self.second = second
        self.moved = False

    def _route(self, request: HTTPRequest) -> HTTPResponse:
        response = super()._route(request)
        if self.moved and request.url.endswith("/.well-known/oauth-protected-resource/mcp"):
            document = json.loads(response.body)
            document["authorization_servers"] = [self.second.issuer]
            response = response._replace(body=json.dumps(document).encode())
        return response

    def _mcp(self, request: HTTPRequest) -> HTTPResponse:
        if not self.moved:
            response = super()._mcp(request)
            self.moved = response.status == 200
            return response
        token = {k.lower(): v for k, v in request.headers.items()}.get("authorization", "")[len("Bearer "):]
        claims = self.second.introspect(token)
        if claims is None or claims["aud"] != self.mcp_url:
            return self._challenge(401, "invalid_token", self.required_scopes)
        return HTTPResponse(200, {"content-type": "application/json"}, b'{"jsonrpc": "2.0", "id": 1, "result": {}}')


@pytest.fixture
def moving() -> Iterator[MovingResource]:
    with running(OAuthTestServer()) as second:
        second.token_endpoint_auth_methods = ["client_secret_basic"]  # registrations come with a secret
        second.add_client("client-1")  # someone registered there before: its ids differ from the first's
        with running(MovingResource(second)) as first:
            first.token_endpoint_auth_methods = ["client_secret_basic"]
            second.resource = first.mcp_url
            yield first


def presented_at(server: OAuthTestServer) -> List[str]:
    """Every value the client sent ``server``: query and form parameters, and Basic credentials."""
    values: List[str] = []
    for request in server.requests:
        values += decode_query(request.url).values()
        if request.body and not request.body.startswith(b"{"):
            values += decode_form(request).values()
        authorization = {k.lower(): v for k, v in request.headers.items()}.get("authorization", "")
        if authorization.startswith("Basic "):
            values += split_basic(authorization)
    return values


@pytest.mark.parametrize("storage_kind", ["memory", "file"])
def test_a_server_that_moves_gets_a_fresh_registration_at_the_new_authorization_server(
    moving: MovingResource, tmp_path: Any, storage_kind: str,
) -> None:
    storage = MemoryTokenStorage() if storage_kind == "memory" else FileTokenStorage(tmp_path / "tokens.json")
    authorize = CountingAuthorize(follow_authorization_redirect(send))
    auth = OAuth(redirect_uri=REDIRECT_URI, authorize=authorize, storage=storage)
    assert call(auth, send, moving.mcp_url).status == 200  # signs in at the first server; it moves
    assert call(auth, send, moving.mcp_url).status == 200  # 401, PRM names the second: register there
    second = moving.second
    assert moving.paths().count("/register") == 1 and second.paths().count("/register") == 1
    first_client = storage.get_client(moving.issuer)
    second_client = storage.get_client(second.issuer)
    assert first_client is not None and second_client is not None
    assert first_client.client_secret and second_client.client_secret
    leaked = {first_client.client_id, first_client.client_secret}
    assert not leaked & set(presented_at(second))  # neither at /authorize, /token, nor in Basic auth
    assert [decode_query(url)["client_id"] for url in authorize.urls] == [
        first_client.client_id, second_client.client_id]
    assert [url.split("?", 1)[0] for url in authorize.urls] == [
        f"{moving.issuer}/authorize", f"{second.issuer}/authorize"]
    # The tokens are kept per issuer too: the second server's do not replace the first's.
    assert storage.get_tokens(moving.issuer, moving.mcp_url) is not None
    assert storage.get_tokens(second.issuer, moving.mcp_url) is not None


def test_the_first_servers_tokens_are_never_sent_to_the_second(moving: MovingResource) -> None:
    # A Client ID Metadata Document is valid at both servers, so a refresh at the second would be possible.
    cimd = "https://app.example.com/oauth/client.json"
    for server in (moving, moving.second):
        server.cimd_supported = True
        server.add_client(cimd, auth_method="none", redirect_uris=[REDIRECT_URI])
    storage = MemoryTokenStorage()
    auth = OAuth(client_metadata_url=cimd, redirect_uri=REDIRECT_URI, authorize=follow_authorization_redirect(send),
                 storage=storage)
    assert call(auth, send, moving.mcp_url).status == 200
    first_tokens = storage.get_tokens(moving.issuer, moving.mcp_url)
    assert first_tokens is not None and first_tokens.refresh_token
    assert call(auth, send, moving.mcp_url).status == 200
    grants = [decode_form(r)["grant_type"] for r in moving.second.requests if r.url.endswith("/token")]
    assert grants == ["authorization_code"]
    assert first_tokens.refresh_token not in presented_at(moving.second)
    assert "/register" not in moving.paths() + moving.second.paths()


def test_a_later_sign_in_at_the_first_server_reuses_its_own_registration(moving: MovingResource) -> None:
    storage = MemoryTokenStorage()
    auth = OAuth(redirect_uri=REDIRECT_URI, authorize=follow_authorization_redirect(send), storage=storage)
    call(auth, send, moving.mcp_url)
    call(auth, send, moving.mcp_url)
    registered = storage.get_client(moving.issuer)
    # It moves back; another process with the same storage finds the first server's registration by issuer.
    moving.moved = False
    moving.access_tokens.clear()
    storage.set_tokens(moving.issuer, moving.mcp_url, None)
    later = OAuth(redirect_uri=REDIRECT_URI, authorize=follow_authorization_redirect(send), storage=storage)
    assert call(later, send, moving.mcp_url).status == 200
    assert moving.paths().count("/register") == 1
    assert registered is not None and registered.client_id in presented_at(moving)


def test_a_pre_registered_client_is_never_presented_to_another_authorization_server(moving: MovingResource) -> None:
    moving.add_client("pre-1", secret="pre-secret", redirect_uris=[REDIRECT_URI])
    auth = OAuth(client_id="pre-1", client_secret="pre-secret", redirect_uri=REDIRECT_URI,
                 authorize=follow_authorization_redirect(send))
    assert call(auth, send, moving.mcp_url).status == 200
    with pytest.raises(AuthError) as refused:
        call(auth, send, moving.mcp_url)
    message = str(refused.value)
    assert repr(moving.issuer) in message and repr(moving.second.issuer) in message and "pre-secret" not in message
    assert moving.second.paths() == ["/.well-known/oauth-authorization-server"]  # nothing presented there


def test_a_pre_registered_client_names_its_issuer(server: Server2026) -> None:
    server.add_client("pre-1", secret="pre-secret", redirect_uris=[REDIRECT_URI])
    with pytest.raises(AuthError, match="pre-1"):
        sign_in(server, client_id="pre-1", client_secret="pre-secret", client_issuer="https://elsewhere.example")
    assert "/authorize" not in server.paths() and "/token" not in server.paths()
    assert sign_in(server, client_id="pre-1", client_secret="pre-secret", client_issuer=server.issuer).status == 200


def test_client_credentials_are_bound_to_their_issuer(server: Server2026) -> None:
    server.add_client("svc", secret="svc-secret")
    refused = ClientCredentials(client_id="svc", client_secret="svc-secret", client_issuer="https://other.example")
    with pytest.raises(AuthError, match="svc"):
        call(refused, send, server.mcp_url)
    assert "/token" not in server.paths()
    bound = ClientCredentials(client_id="svc", client_secret="svc-secret", client_issuer=server.issuer)
    assert call(bound, send, server.mcp_url).status == 200


def test_a_pre_registered_clients_issuer_is_preferred_among_those_listed() -> None:
    with running(Server2026()) as own, running(OAuthTestServer()) as other:
        own.add_client("pre-1", secret="pre-secret", redirect_uris=[REDIRECT_URI])
        listing = own._route

        def two_servers(request: HTTPRequest) -> HTTPResponse:
            response = listing(request)
            if request.url.endswith("/.well-known/oauth-protected-resource/mcp"):
                document = json.loads(response.body)
                document["authorization_servers"] = [other.issuer, own.issuer]
                response = response._replace(body=json.dumps(document).encode())
            return response

        own._route = two_servers  # type: ignore[method-assign]
        assert sign_in(own, client_id="pre-1", client_secret="pre-secret", client_issuer=own.issuer).status == 200
        assert other.requests == []


# ======================================================================================================
# application_type in dynamic registration (SEP-837)
# ======================================================================================================


@pytest.mark.parametrize("redirect_uri, application_type", [
    ("http://127.0.0.1:8976/callback", "native"),
    ("http://localhost:3000/callback", "native"),
    ("http://LOCALHOST:3000/callback", "native"),
    ("http://[::1]:3000/callback", "native"),
    ("http://127.0.0.2:3000/callback", "native"),
    ("http://app.localhost:3000/callback", "native"),
    ("com.example.app:/oauth/callback", "native"),  # a private-use scheme (RFC 8252 §7.1)
    ("https://app.example.com/callback", "web"),
    ("http://app.example.com/callback", "web"),
    ("https://localhost.example.com/callback", "web"),
    ("https://10.0.0.1/callback", "web"),
])
def test_application_type_table(redirect_uri: str, application_type: str) -> None:
    assert application_type_for(redirect_uri) == application_type


@pytest.mark.parametrize("version", sorted(AUTH_RULES))
def test_dynamic_registration_sends_application_type_and_refresh_token_in_every_revision(
    server: Server2026, version: str,
) -> None:
    assert sign_in(server, protocol_version=version).status == 200
    registration = next(iter(server.clients.values())).registration
    assert registration["application_type"] == "native"
    assert registration["grant_types"] == ["authorization_code", "refresh_token"]


def test_a_remote_redirect_registers_as_a_web_application(server: Server2026) -> None:
    remote = "https://app.example.com/callback"
    assert sign_in(server, redirect_uri=remote).status == 200
    assert next(iter(server.clients.values())).registration["application_type"] == "web"


# ======================================================================================================
# resource exactly as the protected resource metadata states it
# ======================================================================================================


@pytest.mark.parametrize("resource", ["{mcp}", "{mcp}/", "{base}", "{base}/", "{upper_scheme}", "{mcp}?tenant=a"])
def test_resource_is_sent_byte_for_byte_as_the_metadata_states_it(server: Server2026, resource: str) -> None:
    scheme, _, rest = server.mcp_url.partition("://")
    server.prm_resource = server.resource = resource.format(
        mcp=server.mcp_url, base=server.base_url, upper_scheme=f"{scheme.upper()}://{rest}")
    authorize = CountingAuthorize(follow_authorization_redirect(send))
    assert sign_in(server, authorize=authorize).status == 200  # the server checks both requests itself
    token_request = next(r for r in server.requests if r.url.endswith("/token"))
    assert decode_query(authorize.urls[0])["resource"] == server.prm_resource
    assert decode_form(token_request)["resource"] == server.prm_resource


def test_resource_on_refresh_is_the_metadatas_too(server: Server2026) -> None:
    server.prm_resource = server.resource = server.base_url + "/"
    auth = OAuth(redirect_uri=REDIRECT_URI, authorize=follow_authorization_redirect(send))
    assert call(auth, send, server.mcp_url).status == 200
    server.access_tokens.clear()  # the token is rejected: the client refreshes
    assert call(auth, send, server.mcp_url).status == 200
    forms = [decode_form(r) for r in server.requests if r.url.endswith("/token")]
    assert [(f["grant_type"], f["resource"]) for f in forms] == [
        ("authorization_code", server.base_url + "/"), ("refresh_token", server.base_url + "/")]


# ======================================================================================================
# offline_access (SEP-2207)
# ======================================================================================================


@pytest.mark.parametrize("as_scopes, wanted, challenged, requested", [
    (["mcp:read", "offline_access"], True, ["mcp:read"], "mcp:read offline_access"),
    (["mcp:read", "offline_access"], False, ["mcp:read"], "mcp:read"),
    (["mcp:read"], True, ["mcp:read"], "mcp:read"),
    (None, True, ["mcp:read"], "mcp:read"),  # the AS lists no scopes at all
    (["mcp:read"], True, ["mcp:read", "offline_access"], "mcp:read"),  # not even when challenged
    (["mcp:read", "offline_access"], True, ["mcp:read", "offline_access"], "mcp:read offline_access"),
])
def test_offline_access_only_where_the_authorization_server_lists_it(
    server: Server2026, as_scopes: Optional[List[str]], wanted: bool, challenged: List[str], requested: str,
) -> None:
    server.scopes_supported = ["mcp:read"]  # the protected resource's: never offline_access
    server.as_scopes_supported = as_scopes
    server.challenge_scopes = challenged
    authorize = CountingAuthorize(follow_authorization_redirect(send))
    assert sign_in(server, authorize=authorize, request_offline_access=wanted).status == 200
    assert authorize.scopes() == [requested]
