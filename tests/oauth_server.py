"""A small OAuth 2.1 authorization server and protected MCP resource, for tests.

One object plays both roles at one origin. Talk to it in-process with `OAuthTestServer.send` (no
sockets: fast unit tests), or `start()` it on 127.0.0.1 with a free port and talk over real sockets.
To issue tokens for another resource server (mcplite's own HTTP server with `BearerAuth`), set
``resource`` to that server's URL and give it `introspect` as its ``verify``.

It checks what a strict server would: registered redirect URIs, PKCE S256, ``resource`` on both the
authorization and token requests, client authentication per the registered method (secrets and
``private_key_jwt`` assertions, verified with `mcplite.jose`), refresh token rotation, token expiry and
scopes. With ``dpop`` on it offers DPoP (RFC 9449): a token request with a proof (checked with
`mcplite.oauth.dpop`) gets a token bound to the proof's key (``cnf.jkt`` in `introspect`), and refreshing
it needs a proof by the same key; ``dpop_nonce`` makes it ask for that nonce first. Attributes are the
knobs that tests turn to make it misbehave in specific ways.
"""

import base64
import hashlib
import json
import secrets
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Optional, Tuple
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

from mcplite import jose
from mcplite.oauth import drive
from mcplite.oauth.dpop import USE_DPOP_NONCE, DPoPProofError, verify_proof
from mcplite.transports.http_messages import HTTPRequest, HTTPResponse
from support.http import ServerLoop

JWT_BEARER_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


@dataclass
class Client:
    client_id: str
    secret: Optional[str]
    auth_method: str
    redirect_uris: List[str]
    public_key: Optional[jose.PublicKey] = None
    registration: Dict[str, Any] = field(default_factory=dict)


@dataclass
class Grant:
    client_id: str
    scopes: List[str]
    resource: Optional[str]
    expires_at: Optional[float] = None
    jkt: Optional[str] = None  # the DPoP key the tokens are bound to


@dataclass
class PendingCode:
    grant: Grant
    redirect_uri: str
    challenge: str


def _json(status: int, value: Any, headers: Optional[Dict[str, str]] = None) -> HTTPResponse:
    return HTTPResponse(status, {"content-type": "application/json", **(headers or {})}, json.dumps(value).encode())


def _oauth_error(error: str, status: int = 400) -> HTTPResponse:
    return _json(status, {"error": error, "error_description": f"test server: {error}"})


class OAuthTestServer:
    """The authorization server and protected resource. See the module docstring."""

    def __init__(self, base_url: str = "http://mcp.test", *, clock: Callable[[], float] = time.time) -> None:
        self.base_url = base_url
        self.clock = clock
        # Knobs.
        self.scopes_supported: List[str] = ["mcp:read", "mcp:write"]
        self.required_scopes: List[str] = ["mcp:read"]
        self.scope_in_challenge = True
        self.token_lifetime: Optional[int] = 3600
        self.issue_refresh_tokens = True
        self.advertise_iss = True
        self.iss_in_redirect = "correct"  # or "omit" or "wrong"
        self.code_challenge_methods: Optional[List[str]] = ["S256"]
        self.token_endpoint_auth_methods = ["none", "client_secret_basic", "client_secret_post", "private_key_jwt"]
        self.cimd_supported = False
        self.dynamic_registration = True
        self.dpop = False  # offer DPoP-bound tokens
        self.dpop_nonce: Optional[str] = None  # with dpop: the nonce token requests must carry
        self.resource: Optional[str] = None  # the resource tokens are for; None: this server's own /mcp
        self.clients: Dict[str, Client] = {}
        # Records.
        self.requests: List[HTTPRequest] = []
        self.access_tokens: Dict[str, Grant] = {}
        self.refresh_tokens: Dict[str, Grant] = {}
        self._codes: Dict[str, PendingCode] = {}
        self._lock = threading.Lock()
        self._loop: Optional[ServerLoop] = None

    # -- URLs ---------------------------------------------------------------------------------------

    @property
    def issuer(self) -> str:
        return self.base_url

    @property
    def mcp_url(self) -> str:
        return f"{self.base_url}/mcp"

    @property
    def protected_resource(self) -> str:
        """The resource whose tokens this server issues: ``resource``, or its own ``mcp_url``."""
        return self.resource or self.mcp_url

    @property
    def resource_metadata_url(self) -> str:
        return f"{self.base_url}/.well-known/oauth-protected-resource/mcp"

    # -- set-up helpers -----------------------------------------------------------------------------

    def add_client(
        self, client_id: str, *, secret: Optional[str] = None, auth_method: str = "client_secret_basic",
        redirect_uris: Optional[List[str]] = None, public_key: Optional[jose.PublicKey] = None,
    ) -> Client:
        client = Client(client_id, secret, auth_method, list(redirect_uris or []), public_key)
        self.clients[client_id] = client
        return client

    def paths(self) -> List[str]:
        """The path of every request received so far, in order."""
        return [urlsplit(request.url).path for request in self.requests]

    # -- serving ------------------------------------------------------------------------------------

    def send(self, request: HTTPRequest) -> HTTPResponse:
        """Handle one request in-process. Requests for another origin get 404."""
        with self._lock:
            self.requests.append(request)
            if not request.url.startswith(self.base_url + "/"):
                return HTTPResponse(404, {}, b"")
            return self._route(request)

    def start(self) -> "OAuthTestServer":
        """Serve on 127.0.0.1, a free port; ``base_url`` becomes that address."""
        server = self

        class Handler(BaseHTTPRequestHandler):
            timeout = 5  # a stuck client must not hang the test run

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                headers = {name: value for name, value in self.headers.items()}
                response = server.send(HTTPRequest(self.command, server.base_url + self.path, headers, body))
                self.send_response(response.status)
                for name, value in response.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(response.body)))
                self.end_headers()
                self.wfile.write(response.body)

            do_GET = do_POST = _serve

            def log_message(self, format: str, *args: Any) -> None:
                pass

        httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{httpd.server_address[1]}"
        self._loop = ServerLoop(httpd).start()
        return self

    def close(self) -> None:
        if self._loop is not None:
            self._loop.stop()
            self._loop = None

    def __enter__(self) -> "OAuthTestServer":
        return self.start()

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    # -- routes -------------------------------------------------------------------------------------

    def _route(self, request: HTTPRequest) -> HTTPResponse:
        parts = urlsplit(request.url)
        route = (request.method, parts.path)
        if route == ("GET", "/.well-known/oauth-protected-resource/mcp"):
            return _json(200, {
                "resource": self.mcp_url, "authorization_servers": [self.issuer],
                "scopes_supported": self.scopes_supported,
            })
        if route == ("GET", "/.well-known/oauth-authorization-server"):
            return _json(200, self._metadata())
        if route == ("POST", "/register") and self.dynamic_registration:
            return self._register(request)
        if route == ("GET", "/authorize"):
            return self._authorize(dict(parse_qsl(parts.query)))
        if route == ("POST", "/token"):
            return self._token(request)
        if route == ("POST", "/mcp"):
            return self._mcp(request)
        return HTTPResponse(404, {}, b"")

    def _metadata(self) -> Dict[str, Any]:
        metadata: Dict[str, Any] = {
            "issuer": self.issuer,
            "authorization_endpoint": f"{self.base_url}/authorize",
            "token_endpoint": f"{self.base_url}/token",
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
            "token_endpoint_auth_methods_supported": self.token_endpoint_auth_methods,
            "token_endpoint_auth_signing_alg_values_supported": ["ES256", "RS256"],
            "scopes_supported": self.scopes_supported,
            "authorization_response_iss_parameter_supported": self.advertise_iss,
            "client_id_metadata_document_supported": self.cimd_supported,
        }
        if self.dynamic_registration:
            metadata["registration_endpoint"] = f"{self.base_url}/register"
        if self.code_challenge_methods is not None:
            metadata["code_challenge_methods_supported"] = self.code_challenge_methods
        if self.dpop:
            metadata["dpop_signing_alg_values_supported"] = ["ES256"]
        return metadata

    def _register(self, request: HTTPRequest) -> HTTPResponse:
        body = json.loads(request.body or b"{}")
        method = body.get("token_endpoint_auth_method", "client_secret_basic")
        if method not in self.token_endpoint_auth_methods:
            return _oauth_error("invalid_client_metadata")
        public_key = None
        if method == "private_key_jwt":
            public_key = jose.load_public_key(body["jwks"]["keys"][0])
        client_id = f"client-{len(self.clients) + 1}"
        secret = None if method in ("none", "private_key_jwt") else secrets.token_urlsafe(16)
        client = self.add_client(
            client_id, secret=secret, auth_method=method, redirect_uris=body.get("redirect_uris", []),
            public_key=public_key)
        client.registration = body
        answer = {**body, "client_id": client_id, "token_endpoint_auth_method": method}
        if secret is not None:
            answer["client_secret"] = secret
        return _json(201, answer)

    def _authorize(self, query: Dict[str, str]) -> HTTPResponse:
        client = self.clients.get(query.get("client_id", ""))
        redirect_uri = query.get("redirect_uri", "")
        if client is None or redirect_uri not in client.redirect_uris:
            return _oauth_error("invalid_request")  # never redirect to an unregistered URI
        if (query.get("response_type") != "code" or query.get("code_challenge_method") != "S256"
                or not query.get("code_challenge") or query.get("resource") != self.protected_resource):
            return _oauth_error("invalid_request")
        code = secrets.token_urlsafe(16)
        self._codes[code] = PendingCode(
            Grant(client.client_id, query.get("scope", "").split(), query.get("resource")),
            redirect_uri, query["code_challenge"])
        params = {"code": code, "state": query.get("state", "")}
        if self.iss_in_redirect == "correct":
            params["iss"] = self.issuer
        elif self.iss_in_redirect == "wrong":
            params["iss"] = "https://evil.example"
        separator = "&" if "?" in redirect_uri else "?"
        return HTTPResponse(302, {"location": f"{redirect_uri}{separator}{urlencode(params)}"}, b"")

    def _authenticate_client(self, request: HTTPRequest, form: Dict[str, str]) -> Optional[Client]:
        """The client that authenticated per its registered method, or None."""
        authorization = {k.lower(): v for k, v in request.headers.items()}.get("authorization", "")
        if authorization.startswith("Basic "):
            client_id, _, secret = base64.b64decode(authorization[6:]).decode().partition(":")
            client = self.clients.get(unquote(client_id))
            ok = client is not None and client.auth_method == "client_secret_basic" and client.secret == unquote(secret)
            return client if ok else None
        client = self.clients.get(form.get("client_id", ""))
        if client is None:
            return None
        if client.auth_method == "client_secret_post":
            return client if form.get("client_secret") == client.secret else None
        if client.auth_method == "private_key_jwt":
            if form.get("client_assertion_type") != JWT_BEARER_ASSERTION_TYPE or client.public_key is None:
                return None
            try:
                _, claims = jose.jwt_decode(
                    form.get("client_assertion", ""), client.public_key, issuer=client.client_id,
                    audience=self.issuer, now=self.clock())
            except jose.JWTError:
                return None
            return client if claims.get("sub") == client.client_id else None
        return client if client.auth_method == "none" else None

    def _issue(self, grant: Grant, jkt: Optional[str] = None) -> HTTPResponse:
        access = f"at-{secrets.token_urlsafe(12)}"
        lifetime = self.token_lifetime
        grant = Grant(grant.client_id, grant.scopes, grant.resource, jkt=jkt)
        self.access_tokens[access] = Grant(
            grant.client_id, grant.scopes, grant.resource,
            self.clock() + lifetime if lifetime is not None else None, jkt)
        answer: Dict[str, Any] = {"access_token": access, "token_type": "DPoP" if jkt else "Bearer",
                                  "scope": " ".join(grant.scopes)}
        if lifetime is not None:
            answer["expires_in"] = lifetime
        if self.issue_refresh_tokens:
            refresh = f"rt-{secrets.token_urlsafe(12)}"
            self.refresh_tokens[refresh] = grant
            answer["refresh_token"] = refresh
        return _json(200, answer, {"cache-control": "no-store"})

    def _proof_key(self, request: HTTPRequest) -> Tuple[Optional[str], Optional[HTTPResponse]]:
        """(the thumbprint of a valid proof's key or None, or the refusal of a bad proof)."""
        proof = {k.lower(): v for k, v in request.headers.items()}.get("dpop")
        if not self.dpop or proof is None:
            return None, None
        wanted = self.dpop_nonce
        try:
            verified = verify_proof(proof, method="POST", url=f"{self.base_url}/token", now=self.clock(),
                                    nonce_valid=(lambda nonce: nonce == wanted) if wanted is not None else None)
        except DPoPProofError as refused:
            headers = {"dpop-nonce": wanted} if refused.error == USE_DPOP_NONCE and wanted is not None else {}
            return None, _json(400, {"error": refused.error}, headers)
        return verified.jkt, None

    def _token(self, request: HTTPRequest) -> HTTPResponse:
        form = dict(parse_qsl((request.body or b"").decode()))
        client = self._authenticate_client(request, form)
        if client is None:
            return _oauth_error("invalid_client", 401)
        jkt, refusal = self._proof_key(request)
        if refusal is not None:
            return refusal
        grant_type = form.get("grant_type")
        if grant_type == "authorization_code":
            pending = self._codes.pop(form.get("code", ""), None)
            if (pending is None or pending.grant.client_id != client.client_id
                    or pending.redirect_uri != form.get("redirect_uri")
                    or form.get("resource") != pending.grant.resource):
                return _oauth_error("invalid_grant")
            verifier = form.get("code_verifier", "")
            challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
            if challenge != pending.challenge:
                return _oauth_error("invalid_grant")
            return self._issue(pending.grant, jkt)
        if grant_type == "refresh_token":
            grant = self.refresh_tokens.pop(form.get("refresh_token", ""), None)  # rotation: single use
            if grant is None or grant.client_id != client.client_id or grant.jkt != jkt:  # RFC 9449 §5: same key
                return _oauth_error("invalid_grant")
            return self._issue(grant, jkt)
        if grant_type == "client_credentials":
            if form.get("resource") != self.protected_resource:
                return _oauth_error("invalid_target")
            return self._issue(Grant(client.client_id, form.get("scope", "").split(), form.get("resource")), jkt)
        return _oauth_error("unsupported_grant_type")

    def introspect(self, token: str) -> Optional[Dict[str, Any]]:
        """The claims of an access token it issued (RFC 7662 names), or None for an unknown one.

        Expiry is left to the claims' ``exp``, audience to ``aud``, as a resource server reads them.
        """
        with self._lock:
            grant = self.access_tokens.get(token)
        if grant is None:
            return None
        claims: Dict[str, Any] = {
            "active": True, "client_id": grant.client_id, "scope": " ".join(grant.scopes), "aud": grant.resource,
        }
        if grant.expires_at is not None:
            claims["exp"] = grant.expires_at
        if grant.jkt is not None:
            claims["cnf"] = {"jkt": grant.jkt}
        return claims

    def _challenge(self, status: int, error: str, scopes: List[str]) -> HTTPResponse:
        header = f'Bearer error="{error}", resource_metadata="{self.resource_metadata_url}"'
        if self.scope_in_challenge:
            header += f', scope="{" ".join(scopes)}"'
        return _json(status, {"error": error}, {"www-authenticate": header})

    def _mcp(self, request: HTTPRequest) -> HTTPResponse:
        authorization = {k.lower(): v for k, v in request.headers.items()}.get("authorization", "")
        grant = self.access_tokens.get(authorization[len("Bearer "):]) if authorization.startswith("Bearer ") else None
        if grant is None or (grant.expires_at is not None and self.clock() >= grant.expires_at):
            return self._challenge(401, "invalid_token", self.required_scopes)
        if grant.resource != self.protected_resource:
            return self._challenge(401, "invalid_token", self.required_scopes)
        if not set(self.required_scopes) <= set(grant.scopes):
            return self._challenge(403, "insufficient_scope", self.required_scopes)
        message = json.loads(request.body or b"{}")
        return _json(200, {"jsonrpc": "2.0", "id": message.get("id"), "result": {"ok": True}})


def follow_authorization_redirect(send: Callable[[HTTPRequest], HTTPResponse]) -> Callable[[str], str]:
    """An ``authorize`` callback for tests: fetch the authorization URL and return the 302 ``Location``,
    the way a browser would hand it to the loopback listener (the consent is implied)."""

    def authorize(url: str) -> str:
        response = send(HTTPRequest("GET", url, {}, None))
        assert response.status == 302, f"authorization endpoint answered {response.status}: {response.body!r}"
        return response.headers["location"]

    return authorize


def jsonrpc_request(url: str, method: str = "tools/list", id: int = 1) -> HTTPRequest:
    body = json.dumps({"jsonrpc": "2.0", "id": id, "method": method}).encode()
    return HTTPRequest("POST", url, {"Content-Type": "application/json", "Accept": "application/json"}, body)


def decode_query(url: str) -> Dict[str, str]:
    return dict(parse_qsl(urlsplit(url).query))


def decode_form(request: HTTPRequest) -> Dict[str, str]:
    return dict(parse_qsl((request.body or b"").decode()))


def split_basic(header: str) -> Tuple[str, str]:
    client_id, _, secret = base64.b64decode(header[len("Basic "):]).decode().partition(":")
    return unquote(client_id), unquote(secret)


# ---- helpers for tests that drive flows ----------------------------------------------------------------

class Clock:
    """A clock that moves only when told to."""

    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class CountingAuthorize:
    """Wraps an ``authorize`` callback and keeps every authorization URL it was called with."""

    def __init__(self, inner: Callable[[str], Any]) -> None:
        self.inner = inner
        self.urls: List[str] = []

    def __call__(self, url: str) -> Any:
        self.urls.append(url)
        return self.inner(url)

    def scopes(self) -> List[Optional[str]]:
        return [decode_query(url).get("scope") for url in self.urls]


def call(auth: Any, send: Callable[[HTTPRequest], HTTPResponse], url: str) -> HTTPResponse:
    """One MCP request through ``auth``, every exchange made by ``send``."""
    return drive(auth.auth_flow(jsonrpc_request(url)), send)
