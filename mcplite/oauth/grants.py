"""The four ways to get a token, each a subclass of `BaseOAuth`:

- `OAuth`: the authorization code grant with PKCE, for a user at a browser (the MCP authorization spec);
- `ClientCredentials`: the client credentials grant for machines (extension ``oauth-client-credentials``);
- `CrossAppAccess`: enterprise-managed authorization (SEP-990): an RFC 8693 token exchange of the user's
  ID token for an ID-JAG at the enterprise IdP, then the RFC 7523 JWT bearer grant at the MCP server's AS;
- `JWTBearer`: workload identity federation (SEP-1933): a JWT the workload's platform issued, presented
  with the RFC 7523 JWT bearer grant, with no client registration at all.
"""

import hashlib
import json
import os
import secrets
import threading
import time
from typing import Any, Callable, Dict, Generator, List, Mapping, Optional, Sequence, Tuple, Union
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ..errors import AuthError
from ..transports.http_messages import HTTPRequest, HTTPResponse
from . import jose
from .client_auth import basic_credentials, registration_auth_method
from .flow import (FORM, JSON_ACCEPT, BaseOAuth, Binding, PrivateKeySource, TokenRequestRefused, endpoint_of,
                   oauth_error, parse_json_object)
from .loopback import AuthorizeCallback, default_authorizer
from .pkce import pkce_pair
from .records import AuthorizationResponse, ClientRegistration, Tokens
from .rules import DEFAULT_PROTOCOL_VERSION, application_type_for, check_authorization_response, check_pkce_support
from .storage import TokenStorage

__all__ = [
    "OAuth", "ClientCredentials", "CrossAppAccess", "JWTBearer",
    "TOKEN_EXCHANGE_GRANT", "JWT_BEARER_GRANT", "ID_TOKEN_TYPE", "ID_JAG_TOKEN_TYPE",
]

TOKEN_EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange"
JWT_BEARER_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"
ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id-jag"


def _with_query(url: str, params: Mapping[str, str]) -> str:
    parts = urlsplit(url)
    query = urlencode(parse_qsl(parts.query) + list(params.items()))
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, parts.fragment))


def _with_scope_and_resource(form: Dict[str, str], binding: Binding, scopes: List[str]) -> Dict[str, str]:
    """``form`` with the requested ``scope`` and the RFC 8707 ``resource``, where there are any."""
    if scopes:
        form["scope"] = " ".join(scopes)
    if binding.resource:
        form["resource"] = binding.resource
    return form


def _check_client_metadata_url(url: str) -> None:
    # 2025-11-25 client registration: a Client ID Metadata Document URL is https and has a path.
    parts = urlsplit(url)
    if parts.scheme != "https" or parts.path in ("", "/"):
        raise ValueError("client_metadata_url must be an https URL with a path")


class OAuth(BaseOAuth):
    """Sign in to a protected MCP server as a user: the authorization code grant with PKCE.

    Pass it as ``Client(url, auth=OAuth(...))``. With no arguments it registers itself dynamically and
    opens the browser; ``client_id`` (pre-registered) or ``client_metadata_url`` (a Client ID Metadata
    Document) avoid dynamic registration.
    """

    def __init__(
        self, *, client_id: Optional[str] = None, client_secret: Optional[str] = None,
        client_metadata_url: Optional[str] = None, client_name: str = "mcplite",
        redirect_uri: Optional[str] = None, scopes: Optional[Union[str, Sequence[str]]] = None,
        storage: Optional[TokenStorage] = None, authorize: Optional[AuthorizeCallback] = None,
        token_endpoint_auth_method: Optional[str] = None, private_key: Optional[PrivateKeySource] = None,
        protocol_version: str = DEFAULT_PROTOCOL_VERSION, max_authorizations: int = 3,
        request_offline_access: bool = True, clock: Callable[[], float] = time.time,
        client_issuer: Optional[str] = None, dpop: bool = True, allow_private_networks: bool = False,
    ) -> None:
        """Args:
            client_id, client_secret: a client registered with the authorization server beforehand.
            client_metadata_url: the https URL of this client's Client ID Metadata Document, used as the
                client id where the AS advertises ``client_id_metadata_document_supported``.
            client_name: the name shown to the user, sent in dynamic registration.
            redirect_uri: where the AS sends the browser back. Default: a free port on 127.0.0.1.
            scopes: scopes to request when the server's challenge names none (a string or a list).
            storage: where tokens and registrations live (default: memory; see `FileTokenStorage`).
            authorize: the user's step. Called with the authorization URL, returns the redirect URL (or an
                `AuthorizationResponse`). Default: `BrowserAuthorizer` (browser plus loopback listener).
            token_endpoint_auth_method: force one (``client_secret_basic``, ``client_secret_post``,
                ``private_key_jwt``, ``none``); default: chosen from the registration and AS metadata.
            private_key: for ``private_key_jwt``: PEM, JWK, or a `jose` key (ES256 or RS256).
            protocol_version: the MCP revision spoken; sent as ``MCP-Protocol-Version`` on discovery and
                selects the revision's rules (`AUTH_RULES`).
            max_authorizations: how many sign-ins one request may cause (the first one and step-ups
                after 403 ``insufficient_scope`` together) before `AuthError`.
            request_offline_access: ask for ``offline_access`` where the AS lists it, to get refresh tokens.
            clock: the time source, for tests.
            client_issuer: the issuer ``client_id`` is registered with (see `BaseOAuth`); default: the first
                authorization server it is used with. A Client ID Metadata Document or a dynamic
                registration needs none: the first works with any server, the second is kept per issuer.
            dpop: ask for DPoP-bound tokens where the authorization server offers them (see `BaseOAuth`).
            allow_private_networks: let the servers send the client to loopback and private-network addresses
                wherever the MCP server is (see `BaseOAuth`; link-local and metadata addresses stay refused).

        Raises:
            ValueError: an invalid ``client_metadata_url``, or a non-loopback ``redirect_uri`` without
                ``authorize``.
        """
        super().__init__(
            scopes=scopes, storage=storage, protocol_version=protocol_version,
            max_authorizations=max_authorizations, private_key=private_key, clock=clock,
            client_issuer=client_issuer, dpop=dpop, allow_private_networks=allow_private_networks,
        )
        if client_metadata_url is not None:
            _check_client_metadata_url(client_metadata_url)
        self.client_id = client_id
        self.client_secret = client_secret
        self.client_metadata_url = client_metadata_url
        self.client_name = client_name
        self.token_endpoint_auth_method = token_endpoint_auth_method
        self._wants_refresh_tokens = request_offline_access
        self._redirect_uri = redirect_uri
        self.authorize: AuthorizeCallback = (
            authorize if authorize is not None else default_authorizer(redirect_uri))

    def _redirect_uri_in_use(self, binding: Binding) -> str:
        prefer = getattr(self.authorize, "prefer_redirect_uris", None)
        if self._redirect_uri is None and prefer is not None and binding.issuer is not None:
            stored = self.storage.get_client(binding.issuer)
            if stored is not None and stored.redirect_uris:
                prefer(stored.redirect_uris)  # the port of an earlier registration, so that it still fits
        redirect_uri = self._redirect_uri or getattr(self.authorize, "redirect_uri", None)
        if not isinstance(redirect_uri, str):
            raise AuthError("no redirect URI: pass redirect_uri= (or an authorize callback that has one)")
        return redirect_uri

    def _known_client(self, binding: Binding, redirect_uri: Optional[str] = None) -> Optional[ClientRegistration]:
        """Registration priority (2025-11-25): pre-registered, then the Client ID Metadata Document when
        the AS supports it, then an earlier dynamic registration with this same AS."""
        if self.client_id is not None:
            return self._preregistered(
                binding, ClientRegistration(self.client_id, self.client_secret, self.token_endpoint_auth_method))
        cimd_supported = binding.metadata.get("client_id_metadata_document_supported") is True
        if self.client_metadata_url is not None and cimd_supported:
            method = "private_key_jwt" if self._private_key is not None else "none"
            return ClientRegistration(self.client_metadata_url, None, self.token_endpoint_auth_method or method)
        assert binding.issuer is not None
        stored = self.storage.get_client(binding.issuer)
        if stored is None or stored.secret_expired(self._clock()):
            return None
        if redirect_uri is not None and stored.redirect_uris and redirect_uri not in stored.redirect_uris:
            return None  # registered for another redirect URI (the loopback port changed)
        return stored

    def _client_for(
        self, binding: Binding, redirect_uri: str, scopes: List[str]
    ) -> Generator[HTTPRequest, HTTPResponse, ClientRegistration]:
        known = self._known_client(binding, redirect_uri)
        if known is not None:
            return known
        if not isinstance(binding.metadata.get("registration_endpoint"), str):
            raise AuthError(
                f"the authorization server {binding.issuer} offers no dynamic client registration; pass "
                "client_id= (a pre-registered client) or client_metadata_url="
            )
        endpoint = endpoint_of(binding.metadata, "registration_endpoint", f"the authorization server {binding.issuer}")
        if not binding.legacy_defaults:
            self._check_destination(endpoint, f"the registration_endpoint of {binding.issuer}", binding.server_url)
        client = yield from self._register(binding, endpoint, redirect_uri, scopes)
        assert binding.issuer is not None
        self.storage.set_client(binding.issuer, client)
        return client

    def _register(
        self, binding: Binding, endpoint: str, redirect_uri: str, scopes: List[str]
    ) -> Generator[HTTPRequest, HTTPResponse, ClientRegistration]:
        """Dynamic client registration (RFC 7591)."""
        method = self.token_endpoint_auth_method or registration_auth_method(
            binding.metadata.get("token_endpoint_auth_methods_supported"), self._private_key is not None)
        body: Dict[str, Any] = {
            "client_name": self.client_name,
            "redirect_uris": [redirect_uri],
            # refresh_token too: SEP-2207 asks clients that want refresh tokens to say so at registration.
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": method,
            "application_type": application_type_for(redirect_uri),
        }
        if scopes:
            body["scope"] = " ".join(scopes)
        if method == "private_key_jwt" and self._private_key is not None:
            body["jwks"] = {"keys": [self._private_key.public_key.to_jwk()]}
        headers = {"Content-Type": "application/json", "Accept": JSON_ACCEPT}
        response = yield HTTPRequest("POST", endpoint, headers, json.dumps(body).encode("utf-8"))
        data, problem = parse_json_object(response.body)
        if response.status in (200, 201) and data is None:
            raise AuthError(f"the registration response from {endpoint} is {problem}")
        if response.status not in (200, 201) or data is None:
            raise oauth_error(f"dynamic client registration at {endpoint}", response.status, data)
        return ClientRegistration.from_registration_response(data, requested_method=method, redirect_uri=redirect_uri)

    def _obtain_tokens(self, binding: Binding, scopes: List[str]) -> Generator[HTTPRequest, HTTPResponse, Tokens]:
        metadata = binding.metadata
        endpoint = endpoint_of(metadata, "authorization_endpoint", f"the authorization server {binding.issuer}")
        if not binding.legacy_defaults:
            check_pkce_support(metadata, self.rules)
        assert binding.issuer is not None
        redirect_uri = self._redirect_uri_in_use(binding)
        client = yield from self._client_for(binding, redirect_uri, scopes)
        # Recorded with the verifier: the issuer this request goes to is the one the response must name.
        issuer = binding.issuer
        iss_advertised = metadata.get("authorization_response_iss_parameter_supported") is True
        verifier, challenge = pkce_pair()
        state = secrets.token_urlsafe(32)
        params = _with_scope_and_resource({
            "response_type": "code", "client_id": client.client_id, "redirect_uri": redirect_uri,
            "code_challenge": challenge, "code_challenge_method": "S256", "state": state,
        }, binding, scopes)
        answer = self.authorize(_with_query(endpoint, params))
        response = (answer if isinstance(answer, AuthorizationResponse)
                    else AuthorizationResponse.from_redirect_url(answer))
        code = check_authorization_response(
            response, expected_state=state, issuer=issuer, iss_advertised=iss_advertised)
        form = {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri,
                "code_verifier": verifier}
        if binding.resource:
            form["resource"] = binding.resource
        return (yield from self._request_tokens(binding, form, client, scopes))


class ClientCredentials(BaseOAuth):
    """Machine-to-machine access: the client credentials grant (extension ``oauth-client-credentials``,
    SEP-1046), authenticated with a client secret or a ``private_key_jwt`` assertion."""

    def __init__(
        self, *, client_id: str, client_secret: Optional[str] = None, private_key: Optional[PrivateKeySource] = None,
        scopes: Optional[Union[str, Sequence[str]]] = None, token_endpoint_auth_method: Optional[str] = None,
        storage: Optional[TokenStorage] = None, protocol_version: str = DEFAULT_PROTOCOL_VERSION,
        max_authorizations: int = 3, clock: Callable[[], float] = time.time, client_issuer: Optional[str] = None,
        dpop: bool = True, allow_private_networks: bool = False,
    ) -> None:
        """Args:
            client_id: the client's id at the authorization server.
            client_secret: for ``client_secret_basic`` / ``client_secret_post``.
            private_key: for ``private_key_jwt`` (PEM, JWK or a `jose` key; ES256 or RS256).
            Others: as for `OAuth`.

        Raises:
            ValueError: neither a secret nor a key.
        """
        if client_secret is None and private_key is None:
            raise ValueError("client credentials need client_secret= or private_key=")
        super().__init__(
            scopes=scopes, storage=storage, protocol_version=protocol_version,
            max_authorizations=max_authorizations, private_key=private_key, clock=clock,
            client_issuer=client_issuer, dpop=dpop, allow_private_networks=allow_private_networks,
        )
        self._client = ClientRegistration(client_id, client_secret, token_endpoint_auth_method)

    def _known_client(self, binding: Binding, redirect_uri: Optional[str] = None) -> Optional[ClientRegistration]:
        return self._preregistered(binding, self._client)

    def _obtain_tokens(self, binding: Binding, scopes: List[str]) -> Generator[HTTPRequest, HTTPResponse, Tokens]:
        client = self._preregistered(binding, self._client)
        form = _with_scope_and_resource({"grant_type": "client_credentials"}, binding, scopes)
        return (yield from self._request_tokens(binding, form, client, scopes))


class CrossAppAccess(BaseOAuth):
    """Enterprise-managed authorization (SEP-990, extension ``enterprise-managed-authorization``).

    The user signed in to the enterprise IdP already (single sign-on gave us an ID token). For each MCP
    server: exchange the ID token at the IdP for an Identity Assertion JWT Authorization Grant (ID-JAG,
    RFC 8693 token exchange), then present the ID-JAG at the MCP server's authorization server with the
    JWT bearer grant (RFC 7523 §2.1). No browser is involved.
    """

    def __init__(
        self, *, client_id: str, id_token: Union[str, Callable[[], str]], client_secret: Optional[str] = None,
        private_key: Optional[PrivateKeySource] = None, idp_token_endpoint: Optional[str] = None,
        idp_issuer: Optional[str] = None, idp_client_id: Optional[str] = None,
        idp_client_secret: Optional[str] = None, scopes: Optional[Union[str, Sequence[str]]] = None,
        token_endpoint_auth_method: Optional[str] = None, storage: Optional[TokenStorage] = None,
        protocol_version: str = DEFAULT_PROTOCOL_VERSION, max_authorizations: int = 3,
        clock: Callable[[], float] = time.time, client_issuer: Optional[str] = None, dpop: bool = True,
        allow_private_networks: bool = False,
    ) -> None:
        """Args:
            client_id, client_secret, private_key: this client at the MCP server's authorization server.
            id_token: the user's ID token from the IdP, or a callable returning a current one.
            idp_token_endpoint: the IdP's token endpoint; or give ``idp_issuer`` to discover it.
            idp_client_id, idp_client_secret: this client at the IdP.
            Others: as for `OAuth`.

        Raises:
            ValueError: neither ``idp_token_endpoint`` nor ``idp_issuer``.
        """
        if idp_token_endpoint is None and idp_issuer is None:
            raise ValueError("cross-app access needs idp_token_endpoint= or idp_issuer=")
        super().__init__(
            scopes=scopes, storage=storage, protocol_version=protocol_version,
            max_authorizations=max_authorizations, private_key=private_key, clock=clock,
            client_issuer=client_issuer, dpop=dpop, allow_private_networks=allow_private_networks,
        )
        self._client = ClientRegistration(client_id, client_secret, token_endpoint_auth_method)
        self._id_token = id_token
        self._idp_token_endpoint = idp_token_endpoint
        self._idp_issuer = idp_issuer
        self._idp_client_id = idp_client_id
        self._idp_client_secret = idp_client_secret

    def _known_client(self, binding: Binding, redirect_uri: Optional[str] = None) -> Optional[ClientRegistration]:
        return self._preregistered(binding, self._client)

    def _idp_endpoint(self) -> Generator[HTTPRequest, HTTPResponse, str]:
        if self._idp_token_endpoint is None:
            assert self._idp_issuer is not None
            # The IdP is the caller's choice, as the MCP server is: its own network is "the same" one.
            metadata = yield from self._fetch_authorization_server_metadata(self._idp_issuer, self._idp_issuer)
            self._idp_token_endpoint = endpoint_of(metadata, "token_endpoint", f"the IdP {self._idp_issuer}")
        return self._idp_token_endpoint

    def _exchange_id_token(self, binding: Binding, scopes: List[str]) -> Generator[HTTPRequest, HTTPResponse, str]:
        """RFC 8693 token exchange at the IdP: the user's ID token for an ID-JAG for this AS and resource."""
        endpoint = yield from self._idp_endpoint()
        assert binding.issuer is not None
        id_token = self._id_token() if callable(self._id_token) else self._id_token
        form = _with_scope_and_resource({
            "grant_type": TOKEN_EXCHANGE_GRANT, "requested_token_type": ID_JAG_TOKEN_TYPE,
            "audience": binding.issuer, "subject_token": id_token, "subject_token_type": ID_TOKEN_TYPE,
        }, binding, scopes)
        headers = {"Content-Type": FORM, "Accept": JSON_ACCEPT}
        if self._idp_client_id is not None and self._idp_client_secret is not None:
            headers["Authorization"] = basic_credentials(self._idp_client_id, self._idp_client_secret)
        elif self._idp_client_id is not None:
            form["client_id"] = self._idp_client_id
        response = yield HTTPRequest("POST", endpoint, headers, urlencode(form).encode("ascii"))
        data, problem = parse_json_object(response.body)
        if response.status == 200 and data is None:
            raise AuthError(f"the IdP's token exchange response from {endpoint} is {problem}")
        if response.status != 200 or data is None:
            raise oauth_error("the token exchange at the IdP", response.status, data)
        grant = data.get("access_token")
        if data.get("issued_token_type") != ID_JAG_TOKEN_TYPE or not isinstance(grant, str) or not grant:
            raise AuthError("the IdP's token exchange response holds no ID-JAG")
        return grant

    def _obtain_tokens(self, binding: Binding, scopes: List[str]) -> Generator[HTTPRequest, HTTPResponse, Tokens]:
        client = self._preregistered(binding, self._client)  # before the IdP is asked for a grant for it
        grant = yield from self._exchange_id_token(binding, scopes)
        form = _with_scope_and_resource({"grant_type": JWT_BEARER_GRANT, "assertion": grant}, binding, scopes)
        return (yield from self._request_tokens(binding, form, client, scopes))


def _unverified_claims(assertion: str) -> Dict[str, Any]:
    """The claims of a JWT, read without verifying it: only to decide whether to send it at all."""
    parts = assertion.split(".")
    if len(parts) != 3:
        return {}
    try:
        return jose.json_object_part(parts[1], "claims")
    except jose.JWTError:
        return {}


def _audience_names(claims: Mapping[str, Any], accepted: Sequence[str]) -> bool:
    """Whether a JWT's ``aud`` (a string or a list) names one of ``accepted``, a trailing slash aside."""
    audience = claims.get("aud")
    audiences = [audience] if isinstance(audience, str) else audience if isinstance(audience, list) else []
    wanted = {url.rstrip("/") for url in accepted}
    return any(isinstance(a, str) and a.rstrip("/") in wanted for a in audiences)


class JWTBearer(BaseOAuth):
    """Workload identity federation (SEP-1933, extension ``workload-identity-federation``): a workload that
    holds a JWT from its platform (a Kubernetes service account token, a SPIFFE JWT-SVID, a cloud identity
    token) presents it at the MCP server's authorization server with the RFC 7523 JWT bearer grant, and gets
    an access token. No client registration, no client secret: the authorization server trusts the JWT's
    issuer.

    Exactly one source of the assertion::

        JWTBearer(assertion=token)                                   # a fixed JWT
        JWTBearer(assertion_file="/var/run/secrets/tokens/mcp")      # re-read whenever the file changes
        JWTBearer(assertion_provider=fetch_token)                    # called for each token request

    The assertion is sent only to an authorization server its ``aud`` names (the issuer or the token endpoint,
    SEP-1933): the MCP server chooses the authorization server, and a server that named one the assertion is
    not for would otherwise collect a credential it could replay at the real one.

    A refused grant is an `AuthError`, and the flow never falls back to another grant. The refused assertion
    is not presented again (the server would refuse it again): the next attempt waits for the source to
    give a different one, as a rotated file does. An assertion whose ``exp`` has passed is not sent at all.
    """

    def __init__(
        self, *, assertion: Optional[str] = None, assertion_file: Optional[Union[str, "os.PathLike[str]"]] = None,
        assertion_provider: Optional[Callable[[], str]] = None, client_id: Optional[str] = None,
        scopes: Optional[Union[str, Sequence[str]]] = None, storage: Optional[TokenStorage] = None,
        protocol_version: str = DEFAULT_PROTOCOL_VERSION, max_authorizations: int = 3,
        clock: Callable[[], float] = time.time, dpop: bool = True, check_audience: bool = True,
        allow_private_networks: bool = False,
    ) -> None:
        """Args:
            assertion: the workload's JWT.
            assertion_file: a file holding it, re-read when it changes (Kubernetes rotates projected
                service account tokens by replacing the file).
            assertion_provider: a callable returning a current one.
            client_id: sent as ``client_id`` where an authorization server wants one; the grant needs none.
            check_audience: refuse to send an assertion whose ``aud`` names neither the issuer nor the token
                endpoint of the authorization server the MCP server points to. Turn it off only for an
                opaque assertion, and only where the MCP server is trusted.
            Others: as for `OAuth`.

        Raises:
            ValueError: not exactly one of ``assertion``, ``assertion_file`` and ``assertion_provider``.
        """
        if sum(source is not None for source in (assertion, assertion_file, assertion_provider)) != 1:
            raise ValueError("JWTBearer needs exactly one of assertion=, assertion_file= and assertion_provider=")
        super().__init__(
            scopes=scopes, storage=storage, protocol_version=protocol_version,
            max_authorizations=max_authorizations, clock=clock, dpop=dpop,
            allow_private_networks=allow_private_networks,
        )
        self._assertion = assertion
        self._assertion_file = os.fspath(assertion_file) if assertion_file is not None else None
        self._assertion_provider = assertion_provider
        self._client = ClientRegistration(client_id, None, "none") if client_id is not None else None
        self.check_audience = check_audience
        # guards _file_state, _file_assertion and _refused (token requests run under the flow's lock, but
        # assertion() may be called from anywhere)
        self._assertion_lock = threading.Lock()
        self._file_state: Optional[Tuple[int, int, int, int]] = None  # (device, inode, size, mtime) last read
        self._file_assertion: Optional[str] = None
        self._refused: Optional[str] = None  # SHA-256 of the assertion the server last refused

    def assertion(self) -> str:
        """The current assertion from the configured source.

        Raises:
            AuthError: the file cannot be read, or the source gives an empty assertion.
        """
        if self._assertion is not None:
            value = self._assertion
        elif self._assertion_provider is not None:
            value = self._assertion_provider()
        else:
            value = self._read_assertion_file()
        value = value.strip() if isinstance(value, str) else ""
        if not value:
            raise AuthError("the workload identity assertion is empty")
        return value

    def _read_assertion_file(self) -> str:
        assert self._assertion_file is not None
        try:
            info = os.stat(self._assertion_file)  # follows the symlink Kubernetes swaps on rotation
            state = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)
            with self._assertion_lock:
                if state == self._file_state and self._file_assertion is not None:
                    return self._file_assertion
            with open(self._assertion_file, encoding="utf-8") as file:
                value = file.read()
        except OSError as exc:
            raise AuthError(f"cannot read the workload identity assertion {self._assertion_file}: {exc}") from exc
        with self._assertion_lock:
            self._file_state, self._file_assertion = state, value
        return value

    def _known_client(self, binding: Binding, redirect_uri: Optional[str] = None) -> Optional[ClientRegistration]:
        return self._client

    def _obtain_tokens(self, binding: Binding, scopes: List[str]) -> Generator[HTTPRequest, HTTPResponse, Tokens]:
        assertion = self.assertion()
        digest = hashlib.sha256(assertion.encode("utf-8")).hexdigest()
        with self._assertion_lock:
            refused = digest == self._refused
        if refused:
            raise AuthError("the authorization server refused this workload identity assertion before; it is "
                            "not presented again until the source gives a new one")
        claims = _unverified_claims(assertion)
        expiry = claims.get("exp")
        if isinstance(expiry, (int, float)) and not isinstance(expiry, bool) and expiry <= self._clock():
            raise AuthError("the workload identity assertion has expired; it needs a new one from its issuer")
        assert binding.issuer is not None
        endpoint = binding.metadata.get("token_endpoint")
        accepted = [binding.issuer] + ([endpoint] if isinstance(endpoint, str) else [])
        if self.check_audience and not _audience_names(claims, accepted):
            raise AuthError(f"the workload identity assertion is not for {binding.issuer} (its aud names neither "
                            "the issuer nor its token endpoint); not sending it there")
        form = _with_scope_and_resource({"grant_type": JWT_BEARER_GRANT, "assertion": assertion}, binding, scopes)
        try:
            return (yield from self._request_tokens(binding, form, self._client, scopes))
        except TokenRequestRefused as refusal:
            if 400 <= refusal.status < 500:  # the server judged the assertion (a 5xx judged nothing)
                with self._assertion_lock:
                    self._refused = digest
            raise
