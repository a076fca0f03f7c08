"""Workload identity federation (SEP-1933): `JWTBearer` presents the workload's JWT with the RFC 7523 grant,
registers nothing, never falls back to another grant, never presents a refused assertion again, and re-reads
a file-based assertion when the file changes (as Kubernetes rotates projected tokens)."""

import json
import os
from typing import Any, Dict, List, Optional
from urllib.parse import parse_qsl

import pytest

from mcplite import jose
from mcplite.errors import AuthError
from mcplite.oauth import HTTPRequest, HTTPResponse, JWTBearer, TokenRequestRefused, drive
from mcplite.oauth.advanced import JWT_BEARER_GRANT

MCP = "https://api.example.com/mcp"
ISSUER = "https://auth.example.com"
NOW = 1_800_000_000.0


def workload_jwt(subject: str = "workload", expires: float = NOW + 600, audience: Any = ISSUER) -> str:
    key = jose.ECPrivateKey.generate()
    return jose.jwt_encode({"iss": "https://idp.example", "sub": subject, "aud": audience, "exp": int(expires)}, key)


def json_response(status: int, value: Any, headers: Optional[Dict[str, str]] = None) -> HTTPResponse:
    return HTTPResponse(status, {"content-type": "application/json", **(headers or {})}, json.dumps(value).encode())


class Deployment:
    """An MCP server and an authorization server that accepts the JWT bearer grant only, with no
    registration endpoint. ``answers`` scripts the token endpoint; each token is good for ``good`` requests."""

    def __init__(self, answers: Optional[List[HTTPResponse]] = None, *, dpop: bool = False) -> None:
        self.requests: List[HTTPRequest] = []
        self.answers = answers or []
        self.valid: Optional[str] = None
        self.issued = 0
        self.metadata: Dict[str, Any] = {
            "issuer": ISSUER, "token_endpoint": f"{ISSUER}/token", "grant_types_supported": [JWT_BEARER_GRANT],
            "token_endpoint_auth_methods_supported": ["none"],
        }
        if dpop:
            self.metadata["dpop_signing_alg_values_supported"] = ["ES256"]

    def __call__(self, request: HTTPRequest) -> HTTPResponse:
        self.requests.append(request)
        url = request.url
        if url == f"{ISSUER}/.well-known/oauth-authorization-server":
            return json_response(200, self.metadata)
        if url == "https://api.example.com/.well-known/oauth-protected-resource/mcp":
            return json_response(200, {"resource": MCP, "authorization_servers": [ISSUER]})
        if url == f"{ISSUER}/token":
            if self.answers:
                return self.answers.pop(0)
            self.issued += 1
            self.valid = f"tok-{self.issued}"
            token_type = "DPoP" if "dpop" in {k.lower() for k in request.headers} else "Bearer"
            return json_response(200, {"access_token": self.valid, "token_type": token_type, "expires_in": 3600})
        if url == MCP:
            authorization = {k.lower(): v for k, v in request.headers.items()}.get("authorization", "")
            if self.valid is not None and authorization.endswith(" " + self.valid):
                return json_response(200, {"ok": True})
            return json_response(401, {}, {"www-authenticate": 'Bearer error="invalid_token"'})
        return HTTPResponse(404, {}, b"")

    def token_requests(self) -> List[Dict[str, str]]:
        return [dict(form_of(r)) for r in self.requests if r.url == f"{ISSUER}/token"]

    def revoke(self) -> None:
        self.valid = None


def form_of(request: HTTPRequest) -> Dict[str, str]:
    return dict(parse_qsl((request.body or b"").decode("ascii")))


def call(auth: JWTBearer, network: Deployment) -> HTTPResponse:
    return drive(auth.auth_flow(HTTPRequest("POST", MCP, {}, b"{}")), network)


def test_the_assertion_is_presented_with_the_jwt_bearer_grant_and_no_registration() -> None:
    assertion = workload_jwt()
    network = Deployment()
    assert call(JWTBearer(assertion=assertion, clock=lambda: NOW), network).status == 200
    (form,) = network.token_requests()
    assert form == {"grant_type": JWT_BEARER_GRANT, "assertion": assertion, "resource": MCP}
    assert not any("register" in r.url for r in network.requests)
    assert "authorization" not in {k.lower() for r in network.requests if r.url.endswith("/token") for k in r.headers}


def test_a_client_id_and_scopes_are_sent_when_given() -> None:
    network = Deployment()
    call(JWTBearer(assertion=workload_jwt(), client_id="wl", scopes="mcp:read", clock=lambda: NOW), network)
    (form,) = network.token_requests()
    assert form["client_id"] == "wl" and form["scope"] == "mcp:read"


@pytest.mark.parametrize("sources", [{}, {"assertion": "a", "assertion_provider": lambda: "b"}])
def test_exactly_one_source(sources: Dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="exactly one"):
        JWTBearer(**sources)


def test_a_refused_grant_is_an_error_with_no_fallback_and_the_same_assertion_is_not_presented_again() -> None:
    network = Deployment([json_response(400, {"error": "invalid_grant", "error_description": "bad audience"})])
    auth = JWTBearer(assertion=workload_jwt(), clock=lambda: NOW)
    with pytest.raises(TokenRequestRefused) as refused:
        call(auth, network)
    assert refused.value.status == 400 and refused.value.error == "invalid_grant"
    assert len(network.token_requests()) == 1
    with pytest.raises(AuthError, match="not presented again"):
        call(auth, network)
    assert [form["grant_type"] for form in network.token_requests()] == [JWT_BEARER_GRANT]


def test_a_server_error_does_not_condemn_the_assertion() -> None:
    network = Deployment([json_response(503, {})])
    auth = JWTBearer(assertion=workload_jwt(), clock=lambda: NOW)
    with pytest.raises(TokenRequestRefused):
        call(auth, network)
    assert call(auth, network).status == 200
    assert len(network.token_requests()) == 2


def test_an_expired_assertion_is_not_sent() -> None:
    network = Deployment()
    with pytest.raises(AuthError, match="expired"):
        call(JWTBearer(assertion=workload_jwt(expires=NOW - 1), clock=lambda: NOW), network)
    assert network.token_requests() == []


def test_a_provider_is_asked_for_each_token_request() -> None:
    issued = iter([workload_jwt("one"), workload_jwt("two")])
    asked: List[str] = []

    def provide() -> str:
        asked.append(next(issued))
        return asked[-1]

    network = Deployment()
    auth = JWTBearer(assertion_provider=provide, clock=lambda: NOW)
    call(auth, network)
    network.revoke()
    assert call(auth, network).status == 200
    assert [form["assertion"] for form in network.token_requests()] == asked


def test_a_file_assertion_is_re_read_when_the_file_changes(tmp_path: Any) -> None:
    path = tmp_path / "token"
    first, second = workload_jwt("one"), workload_jwt("two")
    path.write_text(first + "\n")
    network = Deployment()
    auth = JWTBearer(assertion_file=path, clock=lambda: NOW)
    call(auth, network)
    assert auth.assertion() == first  # unchanged file: the cached value
    # Kubernetes-style rotation: a new file renamed over the old one.
    rotated = tmp_path / "token.new"
    rotated.write_text(second)
    os.replace(rotated, path)
    network.revoke()
    assert call(auth, network).status == 200
    assert [form["assertion"] for form in network.token_requests()] == [first, second]


def test_a_rotated_file_lifts_the_refusal(tmp_path: Any) -> None:
    path = tmp_path / "token"
    path.write_text(workload_jwt("stale"))
    network = Deployment([json_response(400, {"error": "invalid_grant"})])
    auth = JWTBearer(assertion_file=str(path), clock=lambda: NOW)
    with pytest.raises(TokenRequestRefused):
        call(auth, network)
    with pytest.raises(AuthError, match="not presented again"):
        call(auth, network)
    path.write_text(workload_jwt("fresh") + "  ")  # another size: seen as changed even within one mtime tick
    assert call(auth, network).status == 200


def test_a_missing_or_empty_file_is_an_auth_error(tmp_path: Any) -> None:
    with pytest.raises(AuthError, match="cannot read"):
        JWTBearer(assertion_file=tmp_path / "absent").assertion()
    (tmp_path / "empty").write_text("\n")
    with pytest.raises(AuthError, match="empty"):
        JWTBearer(assertion_file=tmp_path / "empty").assertion()


def test_dpop_where_the_authorization_server_offers_it() -> None:
    network = Deployment(dpop=True)
    assert call(JWTBearer(assertion=workload_jwt()), network).status == 200
    last = {k.lower(): v for k, v in network.requests[-1].headers.items()}
    assert last["authorization"] == "DPoP tok-1" and "dpop" in last


@pytest.mark.parametrize("audience", [ISSUER + "/", f"{ISSUER}/token", ["https://other.example", ISSUER]])
def test_an_assertion_for_this_authorization_server_is_sent(audience: Any) -> None:
    network = Deployment()
    assert call(JWTBearer(assertion=workload_jwt(audience=audience), clock=lambda: NOW), network).status == 200


@pytest.mark.parametrize("audience", ["https://attacker.example", None])
def test_an_assertion_for_another_authorization_server_is_never_sent_there(audience: Any) -> None:
    network = Deployment()
    with pytest.raises(AuthError, match="not for"):
        call(JWTBearer(assertion=workload_jwt(audience=audience), clock=lambda: NOW), network)
    assert network.token_requests() == []


def test_an_opaque_assertion_needs_the_audience_check_turned_off() -> None:
    with pytest.raises(AuthError, match="not for"):
        call(JWTBearer(assertion="opaque-credential", clock=lambda: NOW), Deployment())
    network = Deployment()
    trusting = JWTBearer(assertion="opaque-credential", check_audience=False, clock=lambda: NOW)
    assert call(trusting, network).status == 200
    assert network.token_requests()[0]["assertion"] == "opaque-credential"
