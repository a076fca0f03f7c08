"""DPoP (RFC 9449, SEP-1932): proofs, the client flow (a key per sign-in, a fresh proof per request, nonces from
both servers, Bearer where DPoP is not offered) against a scripted network, the resource server's verification
ladder as a table, and our client talking DPoP to our server over real HTTP."""

import json
from typing import Any, Dict, List, Optional, Tuple
from urllib.parse import parse_qsl, urlsplit

import pytest
from oauth_server import Clock, OAuthTestServer, follow_authorization_redirect  # tests/ is on sys.path
from support import WAIT
from support.canned import Canned, Route, json_response, without_query

from mcplite import Client, Context, Server, jose
from mcplite.errors import AuthError
from mcplite.http_server import HTTPServerThread
from mcplite.oauth import (
    BearerAuth,
    ClientCredentials,
    FileTokenStorage,
    HTTPRequest,
    HTTPResponse,
    MemoryTokenStorage,
    OAuth,
    Tokens,
    drive,
)
from mcplite.oauth.advanced import BearerChallenge, parse_auth_challenge, send_with_http_client
from mcplite.oauth.dpop import (
    INVALID_DPOP_PROOF,
    USE_DPOP_NONCE,
    DPoPProofError,
    NonceIssuer,
    ReplayCache,
    access_token_hash,
    htu_of,
    jwk_thumbprint,
    make_proof,
    verify_proof,
)
from mcplite.transports.http_messages import HTTPRefusal

MCP = "https://api.example.com/mcp"
ISSUER = "https://auth.example.com"
TOKEN_ENDPOINT = f"{ISSUER}/token"
NOW = 1_800_000_000.0


def header(request: HTTPRequest, name: str) -> Optional[str]:
    return {k.lower(): v for k, v in request.headers.items()}.get(name.lower())


def decoded(proof: str) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    head, payload, _ = proof.split(".")
    return json.loads(jose.b64url_decode(head)), json.loads(jose.b64url_decode(payload))


class Network(Canned):
    """A scripted deployment: an MCP server, its metadata and an authorization server that may offer DPoP."""

    def __init__(self, *, offer_dpop: bool = True, token_type: str = "DPoP", as_nonce: Optional[str] = None,
                 rs_nonce: Optional[str] = None, refresh: bool = False) -> None:
        self.token_type = token_type
        self.as_nonce = as_nonce
        self.rs_nonce = rs_nonce
        self.refresh = refresh
        self.issued = 0
        metadata: Dict[str, Any] = {
            "issuer": ISSUER, "authorization_endpoint": f"{ISSUER}/authorize", "token_endpoint": TOKEN_ENDPOINT,
            "code_challenge_methods_supported": ["S256"], "token_endpoint_auth_methods_supported": ["none"],
        }
        if offer_dpop:
            metadata["dpop_signing_alg_values_supported"] = ["ES256"]
        routes: Dict[Tuple[str, str], Route] = {
            ("POST", MCP): self.mcp,
            ("GET", "https://api.example.com/.well-known/oauth-protected-resource/mcp"):
                json_response(200, {"resource": MCP, "authorization_servers": [ISSUER]}),
            ("GET", f"{ISSUER}/.well-known/oauth-authorization-server"): json_response(200, metadata),
            ("POST", TOKEN_ENDPOINT): self.token,
        }
        super().__init__(routes)

    def token(self, request: HTTPRequest) -> HTTPResponse:
        proof = header(request, "dpop")
        if self.as_nonce is not None and proof is not None and decoded(proof)[1].get("nonce") != self.as_nonce:
            return json_response(400, {"error": USE_DPOP_NONCE}, {"dpop-nonce": self.as_nonce})
        self.issued += 1
        body: Dict[str, Any] = {"access_token": f"tok-{self.issued}", "expires_in": 3600,
                                "token_type": self.token_type if proof else "Bearer"}
        if self.refresh:
            body["refresh_token"] = f"rt-{self.issued}"
        return json_response(200, body)

    def mcp(self, request: HTTPRequest) -> HTTPResponse:
        authorization = header(request, "authorization")
        if authorization is None:
            return json_response(401, {"error": "unauthorized"}, {"www-authenticate": 'DPoP algs="ES256"'})
        proof = header(request, "dpop")
        if self.rs_nonce is not None and (proof is None or decoded(proof)[1].get("nonce") != self.rs_nonce):
            return json_response(401, {"error": USE_DPOP_NONCE}, {
                "www-authenticate": f'DPoP error="{USE_DPOP_NONCE}", algs="ES256"', "dpop-nonce": self.rs_nonce})
        return json_response(200, {"ok": True})

    def sent(self, method: str, url: str) -> List[HTTPRequest]:
        return [r for r in self.requests if r.method == method and without_query(r.url) == url]


def consent(url: str) -> str:
    query = dict(parse_qsl(urlsplit(url).query))
    return f"{query['redirect_uri']}?code=c&state={query['state']}"


def oauth(**kwargs: Any) -> OAuth:
    kwargs.setdefault("client_id", "cid")
    return OAuth(redirect_uri="http://127.0.0.1:1/cb", authorize=consent, clock=lambda: NOW, **kwargs)


def mcp_call(auth: Any, network: Network) -> HTTPResponse:
    return drive(auth.auth_flow(HTTPRequest("POST", MCP + "?q=1", {"Content-Type": "application/json"}, b"{}")),
                 network)


# ---- proofs ------------------------------------------------------------------------------------------------

def test_rfc_7638_thumbprint_example() -> None:
    jwk = {
        "kty": "RSA", "e": "AQAB", "alg": "RS256", "kid": "2011-04-29",
        "n": "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZC"
             "iFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHz"
             "u6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEg"
             "U8awapJzKnqDKgw",
    }
    assert jwk_thumbprint(jwk) == "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"


def test_a_proof_names_the_request_and_carries_only_the_public_key() -> None:
    key = jose.ECPrivateKey.generate()
    proof = make_proof(key, "post", "https://API.example.com/mcp?x=1#f", now=NOW, access_token="tok", nonce="n1")
    head, claims = decoded(proof)
    assert head["typ"] == "dpop+jwt" and head["alg"] == "ES256"
    assert head["jwk"] == key.public_key.to_jwk() and "d" not in head["jwk"]
    assert claims["htm"] == "POST" and claims["htu"] == "https://API.example.com/mcp"
    assert claims["iat"] == int(NOW) and claims["nonce"] == "n1" and claims["ath"] == access_token_hash("tok")
    again = decoded(make_proof(key, "POST", MCP, now=NOW))[1]
    assert again["jti"] != claims["jti"] and "ath" not in again and "nonce" not in again
    verified = verify_proof(proof, method="POST", url=MCP, now=NOW, access_token="tok")
    assert verified.jkt == jwk_thumbprint(key.public_key.to_jwk())


def test_htu_comparison_normalises_case_default_port_and_empty_path() -> None:
    assert htu_of("HTTPS://Example.COM:443?q") == "https://example.com/"
    assert htu_of("http://h:8080/a/b#x") == "http://h:8080/a/b"


# ---- the client --------------------------------------------------------------------------------------------

def test_a_sign_in_binds_the_token_to_a_new_key_and_every_request_carries_a_fresh_proof() -> None:
    network = Network()
    auth = oauth()
    assert mcp_call(auth, network).status == 200
    assert mcp_call(auth, network).status == 200
    (token_request,) = network.sent("POST", TOKEN_ENDPOINT)
    head, claims = decoded(header(token_request, "dpop") or "")
    assert claims["htm"] == "POST" and claims["htu"] == TOKEN_ENDPOINT and "ath" not in claims
    jkt = jwk_thumbprint(head["jwk"])
    authorized = [r for r in network.sent("POST", MCP) if header(r, "authorization")]
    assert len(authorized) == 2
    jtis = set()
    for request in authorized:
        assert header(request, "authorization") == "DPoP tok-1"
        verified = verify_proof(header(request, "dpop"), method="POST", url=MCP, now=NOW, access_token="tok-1",
                                jkt=jkt)
        assert verified.claims["htu"] == MCP  # without the query
        jtis.add(verified.claims["jti"])
    assert len(jtis) == 2
    # A second sign-in (another client) gets a key of its own.
    other = Network()
    mcp_call(oauth(), other)
    assert jwk_thumbprint(decoded(header(other.sent("POST", TOKEN_ENDPOINT)[0], "dpop") or "")[0]["jwk"]) != jkt


@pytest.mark.parametrize("offer, token_type, dpop", [(False, "DPoP", True), (True, "Bearer", True),
                                                     (True, "DPoP", False)])
def test_bearer_where_dpop_is_not_offered_not_granted_or_not_wanted(offer: bool, token_type: str, dpop: bool) -> None:
    network = Network(offer_dpop=offer, token_type=token_type)
    assert mcp_call(oauth(dpop=dpop), network).status == 200
    token_request = network.sent("POST", TOKEN_ENDPOINT)[0]
    assert (header(token_request, "dpop") is not None) == (offer and dpop)
    last = network.requests[-1]
    assert header(last, "authorization") == "Bearer tok-1" and header(last, "dpop") is None


def test_a_dpop_token_without_a_proof_is_refused() -> None:
    with pytest.raises(AuthError, match="no DPoP proof"):
        Tokens.from_token_response({"access_token": "x", "token_type": "DPoP"}, now=0)


def test_the_authorization_servers_nonce_is_used_on_one_retry() -> None:
    network = Network(as_nonce="as-n")
    assert mcp_call(oauth(), network).status == 200
    first, second = network.sent("POST", TOKEN_ENDPOINT)
    assert "nonce" not in decoded(header(first, "dpop") or "")[1]
    assert decoded(header(second, "dpop") or "")[1]["nonce"] == "as-n"
    assert decoded(header(second, "dpop") or "")[1]["jti"] != decoded(header(first, "dpop") or "")[1]["jti"]


def test_an_authorization_server_that_keeps_asking_for_the_same_nonce_is_not_asked_again() -> None:
    network = Network(as_nonce="as-n")
    network.routes[("POST", TOKEN_ENDPOINT)] = json_response(400, {"error": USE_DPOP_NONCE}, {"dpop-nonce": "as-n"})
    with pytest.raises(AuthError, match=USE_DPOP_NONCE):
        mcp_call(oauth(), network)
    assert len(network.sent("POST", TOKEN_ENDPOINT)) == 2


def test_the_resource_servers_nonce_is_used_on_one_retry_and_then_from_the_start() -> None:
    network = Network(rs_nonce="rs-n")
    auth = oauth()
    assert mcp_call(auth, network).status == 200
    nonces = [decoded(header(r, "dpop") or "")[1].get("nonce") for r in network.sent("POST", MCP) if header(r, "dpop")]
    assert nonces == [None, "rs-n"]
    before = len(network.requests)
    assert mcp_call(auth, network).status == 200
    (again,) = network.requests[before:]
    assert decoded(header(again, "dpop") or "")[1]["nonce"] == "rs-n"
    assert len(network.sent("POST", TOKEN_ENDPOINT)) == 1  # a nonce challenge is not a reason to sign in again


def test_a_resource_server_that_asks_for_a_new_nonce_every_time_gets_one_retry_per_request() -> None:
    network = Network()
    auth = oauth()
    mcp_call(auth, network)  # signed in
    count = iter(range(100))

    def always_another(request: HTTPRequest) -> HTTPResponse:
        return json_response(401, {"error": USE_DPOP_NONCE}, {
            "www-authenticate": f'DPoP error="{USE_DPOP_NONCE}"', "dpop-nonce": f"n-{next(count)}"})

    network.routes[("POST", MCP)] = always_another
    before = len(network.requests)
    with pytest.raises(AuthError):
        mcp_call(auth, network)
    mcp_requests = [r for r in network.requests[before:] if r.url.startswith(MCP)]
    assert len(mcp_requests) <= 4  # the request, its nonce retry, and the retry after one new sign-in


def test_the_key_is_stored_with_the_tokens_and_used_by_the_next_process(tmp_path: Any) -> None:
    path = tmp_path / "tokens.json"
    network = Network()
    mcp_call(oauth(storage=FileTokenStorage(path)), network)
    jkt = jwk_thumbprint(decoded(header(network.sent("POST", TOKEN_ENDPOINT)[0], "dpop") or "")[0]["jwk"])
    stored = FileTokenStorage(path).get_tokens(ISSUER, MCP)
    assert stored is not None and stored.is_dpop and stored.token_type == "DPoP" and "d" in (stored.dpop_jwk or {})
    assert (stored.dpop_jwk or {})["d"] not in repr(stored)  # the private key never shows
    later = oauth(storage=FileTokenStorage(path))
    before = len(network.requests)
    assert mcp_call(later, network).status == 200
    last = network.requests[-1]
    assert len(network.requests) - before == 4  # 401, metadata, metadata, the retry with the stored token
    assert verify_proof(header(last, "dpop"), method="POST", url=MCP, now=NOW, access_token="tok-1", jkt=jkt)


def test_a_refresh_proves_possession_of_the_same_key() -> None:
    network = Network(refresh=True)
    clock = [NOW]
    auth = ClientCredentials(client_id="cid", client_secret="s", clock=lambda: clock[0])
    mcp_call(auth, network)
    clock[0] += 3600  # expired: refreshed before the next request
    mcp_call(auth, network)
    first, refresh = network.sent("POST", TOKEN_ENDPOINT)
    assert dict(parse_qsl((refresh.body or b"").decode()))["grant_type"] == "refresh_token"
    assert decoded(header(first, "dpop") or "")[0]["jwk"] == decoded(header(refresh, "dpop") or "")[0]["jwk"]
    assert header(network.requests[-1], "authorization") == "DPoP tok-2"


def test_memory_storage_keeps_the_key_object() -> None:
    storage = MemoryTokenStorage()
    network = Network()
    mcp_call(oauth(storage=storage), network)
    tokens = storage.get_tokens(ISSUER, MCP)
    assert tokens is not None and tokens.dpop_key is not None
    assert Tokens.from_json(tokens.to_json()) == tokens


# ---- the resource server's ladder ----------------------------------------------------------------------------

KEY = jose.ECPrivateKey.generate()
OTHER_KEY = jose.ECPrivateKey.generate()
JKT = jwk_thumbprint(KEY.public_key.to_jwk())


def signed(claims: Dict[str, Any], head: Optional[Dict[str, Any]] = None, key: jose.PrivateKey = KEY) -> str:
    base = {"typ": "dpop+jwt", "jwk": key.public_key.to_jwk()}
    return jose.jwt_encode(claims, key, headers={**base, **(head or {})})


def good_claims(**changes: Any) -> Dict[str, Any]:
    claims = {"jti": "j-1", "htm": "POST", "htu": MCP, "iat": int(NOW), "ath": access_token_hash("tok")}
    claims.update(changes)
    return {k: v for k, v in claims.items() if v is not None}


def rewritten_header(proof: str, **changes: Any) -> str:
    head, payload, signature = proof.split(".")
    values = {**json.loads(jose.b64url_decode(head)), **changes}
    return f"{jose.b64url_encode(json.dumps(values).encode())}.{payload}.{signature}"


def tampered(proof: str) -> str:
    head, payload, signature = proof.split(".")
    claims = json.loads(jose.b64url_decode(payload))
    claims["htm"] = "GET"
    return f"{head}.{jose.b64url_encode(json.dumps(claims).encode())}.{signature}"


LADDER = [
    ("missing", None, INVALID_DPOP_PROOF, "required"),
    ("two proofs", signed(good_claims()) + ", " + signed(good_claims()), INVALID_DPOP_PROOF, "more than one"),
    ("not a JWT", "abc.def", INVALID_DPOP_PROOF, "not a JWT"),
    ("wrong typ", signed(good_claims(), {"typ": "JWT"}), INVALID_DPOP_PROOF, "typ"),
    ("alg none", rewritten_header(signed(good_claims()), alg="none"), INVALID_DPOP_PROOF, "alg"),
    ("symmetric alg", rewritten_header(signed(good_claims()), alg="HS256"), INVALID_DPOP_PROOF, "alg"),
    ("jwk of another algorithm", rewritten_header(signed(good_claims()), alg="RS256"), INVALID_DPOP_PROOF, "alg"),
    ("no jwk", signed(good_claims(), {"jwk": None}), INVALID_DPOP_PROOF, "jwk"),
    ("private jwk", signed(good_claims(), {"jwk": KEY.to_jwk()}), INVALID_DPOP_PROOF, "private"),
    ("tampered signature", tampered(signed(good_claims())), INVALID_DPOP_PROOF, "does not verify"),
    ("signed by another key", signed(good_claims(), {"jwk": KEY.public_key.to_jwk()}, key=OTHER_KEY),
     INVALID_DPOP_PROOF, "does not verify"),
    ("no jti", signed(good_claims(jti=None)), INVALID_DPOP_PROOF, "jti"),
    ("wrong htm", signed(good_claims(htm="GET")), INVALID_DPOP_PROOF, "htm"),
    ("wrong htu", signed(good_claims(htu="https://api.example.com/other")), INVALID_DPOP_PROOF, "htu"),
    ("htu with a query", signed(good_claims(htu=MCP + "?a=1")), INVALID_DPOP_PROOF, "htu"),
    ("stale iat", signed(good_claims(iat=int(NOW) - 301)), INVALID_DPOP_PROOF, "iat"),
    ("future iat", signed(good_claims(iat=int(NOW) + 301)), INVALID_DPOP_PROOF, "iat"),
    ("wrong ath", signed(good_claims(ath=access_token_hash("other"))), INVALID_DPOP_PROOF, "ath"),
    ("no ath", signed(good_claims(ath=None)), INVALID_DPOP_PROOF, "ath"),
    ("wrong key for the token", signed(good_claims(), key=OTHER_KEY), INVALID_DPOP_PROOF, "bound"),
]


@pytest.mark.parametrize("name, proof, error, message", LADDER, ids=[row[0] for row in LADDER])
def test_verification_ladder_refuses(name: str, proof: Optional[str], error: str, message: Optional[str]) -> None:
    with pytest.raises(DPoPProofError) as caught:
        verify_proof(proof, method="POST", url=MCP, now=NOW, access_token="tok", jkt=JKT)
    assert caught.value.error == error
    if message is not None:
        assert message in str(caught.value)


def test_verification_accepts_a_good_proof_at_the_edges_of_the_window() -> None:
    for iat in (int(NOW) - 300, int(NOW) + 300):
        verified = verify_proof(signed(good_claims(iat=iat)), method="post", url=MCP.upper().replace("/MCP", "/mcp"),
                                now=NOW, access_token="tok", jkt=JKT)
        assert verified.jkt == JKT


def test_a_replayed_jti_is_refused_within_the_window_and_forgotten_after() -> None:
    replay = ReplayCache(window=300)
    proof = signed(good_claims())
    verify_proof(proof, method="POST", url=MCP, now=NOW, access_token="tok", jkt=JKT, replay=replay)
    with pytest.raises(DPoPProofError, match="used before"):
        verify_proof(proof, method="POST", url=MCP, now=NOW + 10, access_token="tok", jkt=JKT, replay=replay)
    assert replay.first_use("j-1", NOW + 601)  # forgotten once no proof with it could pass the iat check


def test_a_refused_proof_does_not_use_up_its_jti() -> None:
    replay = ReplayCache()
    with pytest.raises(DPoPProofError):
        verify_proof(signed(good_claims()), method="POST", url=MCP, now=NOW, access_token="other", jkt=JKT,
                     replay=replay)
    verify_proof(signed(good_claims()), method="POST", url=MCP, now=NOW, access_token="tok", jkt=JKT, replay=replay)


def test_the_replay_cache_is_bounded() -> None:
    replay = ReplayCache(window=300, max_entries=3)
    for jti in "abcd":
        assert replay.first_use(jti, NOW)
    assert replay.first_use("a", NOW)  # the oldest was forgotten to make room
    assert not replay.first_use("d", NOW)


def test_nonces() -> None:
    issuer = NonceIssuer(lifetime=60, secret=b"s" * 32)
    nonce = issuer.issue(NOW)
    assert issuer.is_valid(nonce, NOW + 60)
    assert not issuer.is_valid(nonce, NOW + 61)
    assert not issuer.is_valid(None, NOW) and not issuer.is_valid("garbage!", NOW)
    assert not NonceIssuer(secret=b"t" * 32).is_valid(nonce, NOW)
    with pytest.raises(DPoPProofError) as caught:
        verify_proof(signed(good_claims()), method="POST", url=MCP, now=NOW, access_token="tok",
                     nonce_valid=lambda n: issuer.is_valid(n, NOW))
    assert caught.value.error == USE_DPOP_NONCE
    verify_proof(signed(good_claims(nonce=nonce)), method="POST", url=MCP, now=NOW, access_token="tok",
                 nonce_valid=lambda n: issuer.is_valid(n, NOW))


# ---- the resource server: BearerAuth with dpop= --------------------------------------------------------------

RESOURCE = "https://api.example.com/mcp"
BOUND = {"client_id": "c", "scope": "mcp", "aud": RESOURCE, "cnf": {"jkt": JKT}}


def guard(mode: str = "required", **options: Any) -> BearerAuth:
    tokens = {"bound": BOUND, "plain": {"client_id": "c", "scope": "mcp", "aud": RESOURCE}}
    return BearerAuth(tokens.get, resource=RESOURCE, authorization_servers=[ISSUER], dpop=mode,
                      clock=lambda: NOW, **options)


def refusal_of(auth: BearerAuth, headers: Dict[str, str], method: str = "POST", path: str = "/mcp") -> HTTPRefusal:
    with pytest.raises(HTTPRefusal) as caught:
        auth.authenticate_request(method, path, headers)
    return caught.value


def challenges(refusal: HTTPRefusal) -> List[BearerChallenge]:
    found = []
    for name, value in refusal.headers:
        if name.lower() == "www-authenticate":
            for prefer in (True, False):
                challenge = parse_auth_challenge(value, prefer_dpop=prefer)
                if challenge is not None and challenge not in found:
                    found.append(challenge)
    return found


def proof_for(token: str = "bound", *, key: jose.ECPrivateKey = KEY, url: str = RESOURCE, method: str = "POST",
              nonce: Optional[str] = None, now: float = NOW) -> Dict[str, str]:
    return {"authorization": f"DPoP {token}",
            "dpop": make_proof(key, method, url, now=now, access_token=token, nonce=nonce)}


def test_required_dpop_challenges_for_dpop_only_and_says_so_in_the_metadata() -> None:
    auth = guard("required")
    (challenge,) = challenges(refusal_of(auth, {}))
    assert challenge.scheme == "DPoP" and challenge.error is None and challenge.algs == "ES256 RS256"
    assert challenge.resource_metadata == auth.resource_metadata_url
    (again,) = challenges(refusal_of(auth, {"authorization": "Bearer plain"}))
    assert again.scheme == "DPoP"
    metadata = auth.metadata()
    assert metadata["dpop_signing_alg_values_supported"] == ["ES256", "RS256"]
    assert metadata["dpop_bound_access_tokens_required"] is True


def test_allowed_dpop_offers_both_schemes_and_takes_plain_bearer_tokens() -> None:
    auth = guard("allowed")
    assert [c.scheme for c in challenges(refusal_of(auth, {}))] == ["DPoP", "Bearer"]
    assert auth.authenticate_request("POST", "/mcp", {"authorization": "Bearer plain"})["client_id"] == "c"
    assert "dpop_bound_access_tokens_required" not in auth.metadata()
    assert "dpop_signing_alg_values_supported" not in guard("off").metadata()


@pytest.mark.parametrize("mode", ["off", "allowed"])
def test_a_bound_token_sent_as_a_bearer_token_is_refused(mode: str) -> None:
    refusal = refusal_of(guard(mode), {"authorization": "Bearer bound"})
    assert refusal.status == 401 and any(c.error == "invalid_token" for c in challenges(refusal))


def test_dpop_is_not_understood_when_off() -> None:
    (challenge,) = challenges(refusal_of(guard("off"), proof_for()))
    assert challenge.scheme == "Bearer" and challenge.error is None


def test_a_good_proof_is_accepted_once() -> None:
    auth = guard()
    headers = proof_for()
    assert auth.authenticate_request("POST", "/mcp", headers) == BOUND
    (challenge,) = challenges(refusal_of(auth, headers))
    assert challenge.scheme == "DPoP" and challenge.error == INVALID_DPOP_PROOF
    assert "used before" in (challenge.error_description or "")


@pytest.mark.parametrize("headers, error", [
    (proof_for(key=OTHER_KEY), INVALID_DPOP_PROOF),                       # not the key the token is bound to
    (proof_for(url="https://api.example.com/other"), INVALID_DPOP_PROOF),  # a proof for another endpoint
    (proof_for(method="GET"), INVALID_DPOP_PROOF),
    (proof_for(now=NOW - 1000), INVALID_DPOP_PROOF),
    ({"authorization": "DPoP bound"}, INVALID_DPOP_PROOF),                # no proof at all
    (proof_for("plain"), "invalid_token"),                                # a token not bound to any key
    (proof_for("unknown"), "invalid_token"),
], ids=["wrong key", "wrong htu", "wrong htm", "stale", "no proof", "unbound token", "unknown token"])
def test_bad_dpop_requests_get_a_dpop_challenge_with_the_error(headers: Dict[str, str], error: str) -> None:
    refusal = refusal_of(guard(), headers)
    (challenge,) = challenges(refusal)
    assert refusal.status == 401 and challenge.scheme == "DPoP" and challenge.error == error


def test_the_proof_names_the_path_the_request_came_to() -> None:
    auth = guard()
    assert auth.authenticate_request("GET", "/mcp", proof_for(method="GET")) == BOUND
    refusal_of(auth, proof_for(), path="/elsewhere")


def test_nonces_are_required_when_configured() -> None:
    auth = guard(dpop_nonce=True)
    first = refusal_of(auth, {})
    nonce = dict(first.headers)["DPoP-Nonce"]  # offered up front, so a client can sign it at once
    refused = refusal_of(auth, proof_for())
    (challenge,) = challenges(refused)
    assert challenge.error == USE_DPOP_NONCE and dict(refused.headers)["DPoP-Nonce"]
    assert auth.authenticate_request("POST", "/mcp", proof_for(nonce=nonce)) == BOUND
    (wrong,) = challenges(refusal_of(auth, proof_for(nonce="made-up")))
    assert wrong.error == USE_DPOP_NONCE


def test_instances_sharing_a_nonce_issuer_accept_each_others_nonces() -> None:
    shared = NonceIssuer(secret=b"k" * 32)
    one, two = guard(dpop_nonce=shared), guard(dpop_nonce=shared)
    nonce = dict(refusal_of(one, {}).headers)["DPoP-Nonce"]
    assert two.authenticate_request("POST", "/mcp", proof_for(nonce=nonce)) == BOUND


def test_insufficient_scope_is_answered_in_the_dpop_scheme() -> None:
    auth = guard(required_scopes=["admin"])
    refusal = refusal_of(auth, proof_for())
    (challenge,) = challenges(refusal)
    assert refusal.status == 403 and challenge.scheme == "DPoP" and challenge.error == "insufficient_scope"


def test_bad_options_are_refused() -> None:
    with pytest.raises(ValueError, match="dpop"):
        guard("sometimes")
    with pytest.raises(ValueError, match="algorithms"):
        guard(dpop_algorithms=["HS256"])


# ---- end to end: our client and our server, over real HTTP -----------------------------------------------------

def whoami_server() -> Server:
    server = Server("dpop-protected")

    @server.tool
    def whoami(ctx: Context) -> Dict[str, Any]:
        """The key the caller proved it holds."""
        return {"client_id": ctx.auth["client_id"], "jkt": ctx.auth["cnf"]["jkt"]}

    return server


def send(request: HTTPRequest) -> HTTPResponse:
    return send_with_http_client(request, timeout=WAIT)


def test_our_client_and_our_server_speak_dpop_with_nonces_on_both_sides() -> None:
    clock = Clock()
    with OAuthTestServer(clock=clock) as authorization_server:
        authorization_server.dpop = True
        authorization_server.dpop_nonce = "as-nonce"
        http = HTTPServerThread(whoami_server())
        authorization_server.resource = http.url
        bearer = BearerAuth(authorization_server.introspect, resource=http.url,
                            authorization_servers=[authorization_server.issuer], required_scopes=["mcp:read"],
                            clock=clock, dpop="required", dpop_nonce=True)
        http.app.authenticate = bearer
        http.app.extra_routes.update(bearer.well_known_routes())
        with http:
            auth = OAuth(authorize=follow_authorization_redirect(send), redirect_uri="http://127.0.0.1:8976/cb",
                         clock=clock)
            with Client(http.url, auth=auth, timeout=WAIT) as client:
                first = client.call_tool("whoami")["structuredContent"]
                second = client.call_tool("whoami")["structuredContent"]
            token = auth.credential_for(http.url)
            assert token is not None
            stolen = send(HTTPRequest("POST", http.url, {
                "Authorization": f"Bearer {token}", "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream"}, b'{"jsonrpc":"2.0","id":1,"method":"ping"}'))
            thief = proof_for(token, key=jose.ECPrivateKey.generate(), url=http.url, now=clock())
            with_other_key = send(HTTPRequest("POST", http.url, {
                "Authorization": thief["authorization"], "DPoP": thief["dpop"], "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream"}, b'{"jsonrpc":"2.0","id":1,"method":"ping"}'))
        token_requests = [r for r in authorization_server.requests if r.url.endswith("/token")]
    assert first == second and first["client_id"] == "client-1"
    stored = auth.storage.get_tokens(authorization_server.issuer, http.url)
    assert stored is not None and stored.is_dpop and first["jkt"] == jwk_thumbprint(stored.dpop_jwk or {})
    # The AS asked for its nonce once; the proof that carried it got the token.
    assert [decoded(header(r, "dpop") or "")[1].get("nonce") for r in token_requests] == [None, "as-nonce"]
    assert stolen.status == 401 and "DPoP" in stolen.headers["www-authenticate"]
    assert with_other_key.status == 401 and INVALID_DPOP_PROOF in with_other_key.headers["www-authenticate"]
