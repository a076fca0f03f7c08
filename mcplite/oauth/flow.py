"""The flow shared by every grant: tokens on requests (Bearer, or DPoP with a fresh proof each time),
discovery, the token endpoint, refresh, recovery from 401 and step-up on 403, as an I/O-free generator.

`BaseOAuth.auth_flow` is a generator (httpx-style): it yields an `HTTPRequest`, is sent the
`HTTPResponse`, and so on, until the caller's own request has had its final answer. It never touches
the network itself; the HTTP transport drives it over its connections, tests with canned responses.
Subclasses (`mcplite.oauth.grants`) say how a token is obtained and which client is in use.
"""

import abc
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Generator, List, Mapping, Optional, Sequence, Tuple, Union
from urllib.parse import urlencode

from ..errors import AuthError
from ..protocol import json_text
from ..transports.http_messages import AuthFlow, HTTPRequest, HTTPResponse
from . import dpop, jose
from .challenge import BearerChallenge, is_insufficient_scope, parse_auth_challenge
from .client_auth import client_authentication
from .destinations import check_metadata_destinations, check_oauth_destination
from .records import ClientRegistration, Tokens
from .rules import (
    DEFAULT_PROTOCOL_VERSION,
    add_step_up_scopes,
    apply_offline_access,
    auth_rules,
    authorization_server_metadata_urls,
    canonical_resource_uri,
    check_client_issuer,
    check_legacy_metadata_issuer,
    check_metadata_issuer,
    check_protected_resource_metadata,
    is_http_url,
    legacy_default_endpoints,
    legacy_metadata_url,
    origin_of,
    protected_resource_metadata_urls,
    select_scopes,
    without_malformed_lists,
)
from .storage import MemoryTokenStorage, TokenStorage

__all__ = ["BaseOAuth", "Binding", "PrivateKeySource", "TokenRequestRefused", "parse_json_object",
           "endpoint_of", "is_visible_ascii"]

_log = logging.getLogger("mcplite.oauth")

JSON_ACCEPT = "application/json"
FORM = "application/x-www-form-urlencoded"

#: A private key as the grants accept it: PEM, a JWK dict, or a `jose` key (ES256 or RS256).
PrivateKeySource = Union[str, bytes, Mapping[str, Any], jose.ECPrivateKey, jose.RSAPrivateKey]


def parse_json_object(body: bytes) -> Tuple[Optional[Dict[str, Any]], str]:
    """(the body as a JSON object, "") or (None, why it is not one), in words for an error message.

    The body is read as portable JSON (`protocol.json_text`): no NaN or Infinity, no number beyond a double or
    longer than 4300 characters, no nesting deeper than 128, so nothing in it can raise later (an expiry that
    overflows a float, a recursion) and every value is one any other client would read the same.
    """
    try:
        value = json_text.loads(body.decode("utf-8"))
    except UnicodeDecodeError:
        return None, "not UTF-8"
    except json_text.NotPortableJSON as exc:
        return None, f"not portable JSON ({exc})"
    except ValueError as exc:  # json.JSONDecodeError
        return None, f"not JSON ({exc}): {_excerpt(body)}"
    if not isinstance(value, dict):
        return None, f"{_JSON_KINDS.get(type(value), 'a JSON value')}, not an object"
    return value, ""


_JSON_KINDS = {list: "an array", str: "a string", int: "a number", float: "a number", bool: "a boolean",
               type(None): "null"}


def _excerpt(body: bytes, limit: int = 60) -> str:
    text = body[:limit * 4].decode("utf-8", "replace").strip()
    return repr(text if len(text) <= limit else text[:limit] + "...")


def endpoint_of(metadata: Mapping[str, Any], name: str, owner: str) -> str:
    """The URL of metadata member ``name`` (``token_endpoint``, ...): an http(s) URL in visible ASCII, since it
    goes on a request line as it is.

    Raises:
        AuthError: it is missing, or not such a URL (the message says which, and whose metadata it is).
    """
    value = metadata.get(name)
    if not isinstance(value, str):
        raise AuthError(f"{owner} has no {name}")
    if not is_http_url(value):
        raise AuthError(f"{owner} gives a {name} that is not an http(s) URL: {_clip(value)!r}")
    return value


def is_visible_ascii(value: str) -> bool:
    """Only visible ASCII (``%x21-7E``): what a URL is made of."""
    return value.isascii() and value.isprintable() and " " not in value


def _clip(value: str, limit: int = 80) -> str:
    return value if len(value) <= limit else value[:limit] + "..."


def _oauth_error_text(what: str, status: int, data: Optional[Mapping[str, Any]]) -> str:
    detail = ""
    if data and isinstance(data.get("error"), str):
        detail = f": {data['error']}"
        if isinstance(data.get("error_description"), str):
            detail += f" ({data['error_description']})"
    return f"{what} failed with HTTP {status}{detail}"


def oauth_error(what: str, status: int, data: Optional[Mapping[str, Any]]) -> AuthError:
    """An `AuthError` for a failed OAuth request, carrying only the server's ``error`` and description:
    a token must never end up in a message."""
    return AuthError(_oauth_error_text(what, status, data))


class TokenRequestRefused(AuthError):
    """The token endpoint refused to issue tokens: ``status`` is the HTTP status, ``error`` the OAuth error
    code (``invalid_grant``, ``invalid_scope``, ``unauthorized_client``...; None when the body had none)."""

    def __init__(self, grant_type: str, status: int, data: Optional[Mapping[str, Any]]) -> None:
        super().__init__(_oauth_error_text(f"the {grant_type} token request", status, data))
        self.status = status
        code = data.get("error") if data else None
        self.error: Optional[str] = code if isinstance(code, str) else None


def _scope_list(scopes: Optional[Union[str, Sequence[str]]]) -> Optional[List[str]]:
    if scopes is None:
        return None
    return scopes.split() if isinstance(scopes, str) else list(scopes)


def _without(headers: Mapping[str, str], *names: str) -> Dict[str, str]:
    return {name: value for name, value in headers.items() if name.lower() not in names}


@dataclass
class Binding:
    """What discovery found for one MCP server, and the tokens in use for it."""

    server_url: str  # canonical MCP server URL
    issuer: Optional[str] = None
    metadata: Dict[str, Any] = field(default_factory=dict)
    legacy_defaults: bool = False  # the metadata is the 2025-03-26 default endpoints, not a document
    resource: Optional[str] = None  # the RFC 8707 value to send; None only on a pre-2025-06-18 fallback
    resource_scopes: List[str] = field(default_factory=list)  # PRM scopes_supported
    tokens: Optional[Tokens] = None
    requested_scopes: List[str] = field(default_factory=list)

    @property
    def storage_key(self) -> str:
        """The resource the tokens are stored under (with the issuer)."""
        return self.resource or self.server_url


@dataclass
class _Attempt:
    """What one `auth_flow` call has tried, so that each remedy is tried a bounded number of times."""

    used_stored: bool = False
    refreshed: bool = False
    authorizations: int = 0  # sign-ins (the first one and step-ups) caused by this request
    sent_nonce: Optional[str] = None  # the DPoP nonce of the last proof sent
    nonce_retried: bool = False  # sent again once already for a server's use_dpop_nonce


class BaseOAuth(abc.ABC):
    """The machinery shared by every grant: discovery, the token endpoint, refresh, retries and step-up.

    Subclasses say how a token is obtained (`_obtain_tokens`) and which client is in use (`_known_client`).
    One object may serve several MCP servers, and several threads: a lock makes sure that only one thread
    signs in while the others wait and then use the new token.
    """

    def __init__(
        self, *, scopes: Optional[Union[str, Sequence[str]]] = None, storage: Optional[TokenStorage] = None,
        protocol_version: str = DEFAULT_PROTOCOL_VERSION, max_authorizations: int = 3,
        private_key: Optional[PrivateKeySource] = None, clock: Callable[[], float] = time.time,
        client_issuer: Optional[str] = None, dpop: bool = True, allow_private_networks: bool = False,
    ) -> None:
        """Args:
            scopes: scopes to request when the server's challenge names none (a string or a list).
            storage: where tokens and registrations live (default: memory; see `FileTokenStorage`).
            protocol_version: the MCP revision spoken; sent as ``MCP-Protocol-Version`` on discovery and
                selects the revision's rules (`AUTH_RULES`).
            max_authorizations: how many times one request may make the client sign in (the first time
                and step-ups after 403 ``insufficient_scope`` together) before `AuthError`.
            private_key: for ``private_key_jwt`` client authentication.
            clock: the time source, for tests.
            client_issuer: the issuer of the authorization server a pre-registered client was registered
                with. Its credentials are presented there only; a server that names another one is an
                `AuthError`. Default: the first authorization server the client is used with.
            dpop: ask for DPoP-bound tokens (RFC 9449) where the authorization server offers them (ES256 in
                its ``dpop_signing_alg_values_supported``): a new P-256 key per sign-in, kept with the
                tokens; ``Authorization: DPoP`` and a fresh proof on every request. Elsewhere, and when the
                server answers with a Bearer token anyway, tokens are Bearer tokens.
            allow_private_networks: let the servers send the client to loopback and private-network addresses
                (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7, other non-public ones) wherever the MCP
                server is. By default a URL a server names (resource metadata, authorization servers, their
                endpoints) may be such an address only when the MCP server is in that same network. Link-local
                and cloud metadata addresses stay refused, and plain http stays for loopback only
                (`mcplite.oauth.destinations`).

        Raises:
            ValueError: an unsupported ``protocol_version``.
            jose.JWTError: a private key that cannot be read.
        """
        self.scopes = _scope_list(scopes)
        self.storage: TokenStorage = storage if storage is not None else MemoryTokenStorage()
        self.protocol_version = protocol_version
        self.rules = auth_rules(protocol_version)
        self.max_authorizations = max_authorizations
        self._private_key: Optional[jose.PrivateKey] = (
            private_key if isinstance(private_key, (jose.ECPrivateKey, jose.RSAPrivateKey))
            else jose.load_private_key(private_key) if private_key is not None else None
        )
        self._clock = clock
        self.dpop = dpop
        self.allow_private_networks = allow_private_networks
        self._bindings: Dict[str, Binding] = {}
        # The latest DPoP-Nonce each server (by origin) gave, for the next proof sent there (RFC 9449 §8-9).
        self._dpop_nonces: Dict[str, str] = {}
        # The issuer a pre-registered client belongs to (client-registration.mdx, "Authorization Server
        # Binding"): given, or taken from the first authorization server it is used with.
        self._client_issuer = client_issuer
        # guards _bindings (MCP server URL -> its auth server), _client_issuer and _dpop_nonces
        self._bindings_lock = threading.Lock()
        self._lock = threading.Lock()  # held by the one thread that is signing in or refreshing

    # -- hooks --------------------------------------------------------------------------------------

    @abc.abstractmethod
    def _obtain_tokens(self, binding: Binding, scopes: List[str]) -> Generator[HTTPRequest, HTTPResponse, Tokens]:
        """Get new tokens for ``scopes`` from ``binding``'s authorization server."""

    @abc.abstractmethod
    def _known_client(self, binding: Binding, redirect_uri: Optional[str] = None) -> Optional[ClientRegistration]:
        """The client to use with ``binding``'s authorization server, when one is known without registering."""

    _wants_refresh_tokens = False  # whether to ask for offline_access when the AS offers it

    def _preregistered(self, binding: Binding, client: ClientRegistration) -> ClientRegistration:
        """``client``, a pre-registered one, for use with ``binding``'s authorization server: bound to the
        first issuer it meets unless ``client_issuer`` named one, and refused with any other.

        Raises:
            AuthError: the client belongs to another authorization server (`check_client_issuer`).
        """
        assert binding.issuer is not None
        with self._bindings_lock:
            if self._client_issuer is None:
                self._client_issuer = binding.issuer
            registered_with = self._client_issuer
        check_client_issuer(client.client_id, registered_with, binding.issuer)
        return client

    # -- the flow -----------------------------------------------------------------------------------

    def auth_flow(self, request: HTTPRequest) -> AuthFlow:
        """Send ``request`` with a bearer token, obtaining or renewing the token as the server requires.

        Yields the request (with ``Authorization`` when a token is known) and receives its response. On
        401 it rediscovers the authorization server and tries, each at most once: tokens another process
        stored, a refresh, a new sign-in. On 403 ``insufficient_scope`` it signs in again with the union
        of scopes, as long as this request has caused fewer than ``max_authorizations`` sign-ins. Then it
        yields the request again with the new token. A token about to expire is refreshed before sending.
        The generator ends once a response needs no more authorization; that response is the caller's.

        The flow holds a lock while it signs in or refreshes, across its yields: whoever drives it must
        close it (`drive` does) however the exchange ends.

        Raises:
            AuthError: no acceptable token could be obtained.
        """
        binding = self._binding_for(request.url)
        if binding.tokens is not None and binding.tokens.needs_refresh(self._clock()):
            with self._lock:  # held while the refresh exchange runs; other threads wait, then reuse it
                if binding.tokens is not None and binding.tokens.needs_refresh(self._clock()):
                    yield from self._refresh(binding)
        attempt = _Attempt()
        sent = binding.tokens
        response = yield self._with_credentials(request, sent, attempt)
        while True:
            self._remember_nonce(request.url, response)
            challenge = parse_auth_challenge(
                response.headers.get("www-authenticate"), prefer_dpop=sent is not None and sent.is_dpop)
            if self._asks_for_new_nonce(request.url, response, challenge, sent, attempt):
                pass  # RFC 9449 §9: sign again with the server's nonce, the same token
            elif response.status == 401:
                with self._lock:
                    yield from self._recover_from_unauthorized(binding, sent, challenge, attempt)
            elif challenge is not None and is_insufficient_scope(response.status, challenge):
                if attempt.authorizations >= self.max_authorizations:
                    raise AuthError(
                        f"the server still answers insufficient_scope after {attempt.authorizations} "
                        f"sign-ins (scope {challenge.scope!r}); giving up"
                    )
                with self._lock:
                    yield from self._step_up(binding, sent, challenge, attempt)
            else:
                return
            sent = binding.tokens
            response = yield self._with_credentials(request, sent, attempt)

    def _with_credentials(self, request: HTTPRequest, tokens: Optional[Tokens], attempt: _Attempt) -> HTTPRequest:
        """``request`` with ``tokens``: ``Bearer``, or ``DPoP`` and a proof made for this very sending."""
        headers = _without(request.headers, "authorization", "dpop")
        if tokens is None:
            return request._replace(headers=headers)
        key = tokens.dpop_key
        if key is None:
            headers["Authorization"] = f"Bearer {tokens.access_token}"
            return request._replace(headers=headers)
        attempt.sent_nonce = self._nonce_for(request.url)
        headers["Authorization"] = f"{dpop.DPOP_SCHEME} {tokens.access_token}"
        headers["DPoP"] = dpop.make_proof(key, request.method, request.url, now=self._clock(),
                                          access_token=tokens.access_token, nonce=attempt.sent_nonce)
        return request._replace(headers=headers)

    def _nonce_for(self, url: str) -> Optional[str]:
        with self._bindings_lock:
            return self._dpop_nonces.get(origin_of(url))

    def _remember_nonce(self, url: str, response: HTTPResponse) -> None:
        """Keep a ``DPoP-Nonce`` the server sent, whatever the response: the next proof carries it."""
        nonce = response.headers.get("dpop-nonce")
        if nonce:
            with self._bindings_lock:
                self._dpop_nonces[origin_of(url)] = nonce.strip()

    def _asks_for_new_nonce(
        self, url: str, response: HTTPResponse, challenge: Optional[BearerChallenge], sent: Optional[Tokens],
        attempt: _Attempt,
    ) -> bool:
        """True when the server refused our DPoP proof for want of a nonce and gave one the proof did not carry:
        then the request is sent again with it, once per request (a server that asks again every time would
        otherwise keep the client in a loop); a second refusal is handled as any 401."""
        if (response.status != 401 or sent is None or not sent.is_dpop or attempt.nonce_retried
                or challenge is None or challenge.scheme != dpop.DPOP_SCHEME
                or challenge.error != dpop.USE_DPOP_NONCE):
            return False
        nonce = self._nonce_for(url)
        attempt.nonce_retried = nonce is not None and nonce != attempt.sent_nonce
        return attempt.nonce_retried

    def credential_for(self, url: str) -> Optional[str]:
        """The access token in use for the MCP server at ``url`` (None: none yet). A client's cache keeps
        ``cacheScope: "private"`` results for one credential: a new token fetches them again."""
        tokens = self._binding_for(url).tokens
        return tokens.access_token if tokens is not None else None

    def _binding_for(self, url: str) -> Binding:
        key = canonical_resource_uri(url)
        with self._bindings_lock:
            return self._bindings.setdefault(key, Binding(server_url=key))

    def _recover_from_unauthorized(
        self, binding: Binding, sent: Optional[Tokens], challenge: Optional[BearerChallenge], attempt: _Attempt
    ) -> Generator[HTTPRequest, HTTPResponse, None]:
        if binding.tokens is not sent:
            return  # another thread replaced the token while we waited for the lock: try that one first
        # Rediscover on every 401: the server may have moved to another authorization server (SEP-2352).
        yield from self._discover(binding, challenge)
        assert binding.issuer is not None
        stored = self.storage.get_tokens(binding.issuer, binding.storage_key)
        if not attempt.used_stored and stored is not None and stored != sent:
            attempt.used_stored = True  # another process (or an earlier run) signed in already
            binding.tokens = stored
            if not stored.needs_refresh(self._clock()):
                return
        if not attempt.refreshed and binding.tokens is not None and binding.tokens.refresh_token:
            attempt.refreshed = True
            if (yield from self._refresh(binding)):
                return
        if attempt.authorizations:
            raise AuthError("the server rejected the token it was just issued (HTTP 401)")
        scopes = select_scopes(challenge.scopes if challenge else None, self.scopes, binding.resource_scopes)
        yield from self._authorize(binding, scopes, attempt)

    def _step_up(
        self, binding: Binding, sent: Optional[Tokens], challenge: BearerChallenge, attempt: _Attempt
    ) -> Generator[HTTPRequest, HTTPResponse, None]:
        if binding.tokens is not sent:
            return  # another thread stepped up meanwhile
        if binding.issuer is None:
            yield from self._discover(binding, challenge)
        scopes = add_step_up_scopes(binding.requested_scopes, challenge.scopes)
        yield from self._authorize(binding, scopes, attempt)

    def _authorize(
        self, binding: Binding, scopes: List[str], attempt: _Attempt
    ) -> Generator[HTTPRequest, HTTPResponse, None]:
        attempt.authorizations += 1
        scopes = apply_offline_access(scopes, binding.metadata.get("scopes_supported"), self._wants_refresh_tokens)
        _log.info("signing in to %s at %s", binding.server_url, binding.issuer)
        tokens = yield from self._obtain_tokens(binding, scopes)
        binding.requested_scopes = scopes
        self._store_tokens(binding, tokens)

    def _store_tokens(self, binding: Binding, tokens: Optional[Tokens]) -> None:
        assert binding.issuer is not None
        binding.tokens = tokens
        self.storage.set_tokens(binding.issuer, binding.storage_key, tokens)

    # -- discovery ----------------------------------------------------------------------------------

    def _discover(
        self, binding: Binding, challenge: Optional[BearerChallenge]
    ) -> Generator[HTTPRequest, HTTPResponse, None]:
        """Find the authorization server for ``binding`` (VERSIONS.md §3, steps 1-5)."""
        resource_metadata = yield from self._fetch_resource_metadata(
            binding.server_url, challenge.resource_metadata if challenge else None)
        if resource_metadata is not None:
            issuers: List[str] = resource_metadata["authorization_servers"]
            for listed in issuers:  # every one, used or not: a server that names a forbidden one is not trusted
                self._check_destination(listed, "the authorization server", binding.server_url)
            # Each listed server is independent; keep the one we hold credentials for while it is listed.
            issuer = next((i for i in (binding.issuer, self._client_issuer) if i in issuers), issuers[0])
            metadata = yield from self._fetch_authorization_server_metadata(issuer, binding.server_url)
            resource: Optional[str] = resource_metadata["resource"]
            resource_scopes = resource_metadata.get("scopes_supported")
            legacy = False
        else:
            issuer, metadata, legacy = yield from self._fetch_legacy_metadata(binding.server_url)
            resource = binding.server_url if self.rules.resource_parameter else None
            resource_scopes = None
        if binding.issuer is not None and issuer != binding.issuer:
            _log.info("%s moved from %s to %s", binding.server_url, binding.issuer, issuer)
            binding.tokens = None  # tokens and credentials of the old server are not valid at the new one
        binding.issuer = issuer
        binding.metadata = metadata
        binding.legacy_defaults = legacy
        binding.resource = resource
        # Anything but a list (a number, a string) says nothing usable about scopes: ignored, not fatal.
        # Only scope tokens (RFC 6749 §3.3: visible ASCII, no space) can go into a request.
        binding.resource_scopes = [s for s in resource_scopes if isinstance(s, str) and s and is_visible_ascii(s)] \
            if isinstance(resource_scopes, list) else []

    def _check_destination(self, url: str, what: str, server_url: str) -> None:
        """Refuse ``url``, named by a server, unless the client may go there (`check_oauth_destination`)."""
        check_oauth_destination(url, what=f"{what} named by a server", server_url=server_url,
                                allow_private_networks=self.allow_private_networks)

    def _discovery_request(self, url: str) -> HTTPRequest:
        # MCP-Protocol-Version on discovery: SHOULD in 2025-03-26, and harmless everywhere else.
        return HTTPRequest("GET", url, {"Accept": JSON_ACCEPT, "MCP-Protocol-Version": self.protocol_version})

    def _get_json(self, url: str, problems: Optional[List[str]] = None
                  ) -> Generator[HTTPRequest, HTTPResponse, Optional[Dict[str, Any]]]:
        """The document at ``url``, or None (not there, or unusable: then why is added to ``problems``)."""
        response = yield self._discovery_request(url)
        _log.debug("discovery GET %s -> %d", url, response.status)
        if response.status != 200:
            return None
        document, problem = parse_json_object(response.body)
        if document is None:
            _log.info("discovery GET %s: the document is %s", url, problem)
            if problems is not None:
                problems.append(f"{url} is {problem}")
        return document

    def _fetch_resource_metadata(
        self, server_url: str, challenge_url: Optional[str]
    ) -> Generator[HTTPRequest, HTTPResponse, Optional[Dict[str, Any]]]:
        if challenge_url is not None and is_http_url(challenge_url):  # (any other value is skipped as absent)
            self._check_destination(challenge_url, "the resource_metadata of the 401", server_url)
        for url in protected_resource_metadata_urls(server_url, challenge_url):
            document = yield from self._get_json(url)
            if document is not None:
                check_protected_resource_metadata(document, server_url)
                return document
        return None

    def _fetch_authorization_server_metadata(
        self, issuer: str, server_url: str
    ) -> Generator[HTTPRequest, HTTPResponse, Dict[str, Any]]:
        """The metadata of ``issuer``, whose endpoints are checked with ``server_url`` as the server the caller
        chose (`check_oauth_destination`)."""
        problems: List[str] = []
        for url in authorization_server_metadata_urls(issuer):
            document = yield from self._get_json(url, problems)
            if document is not None:
                check_metadata_issuer(document, issuer)
                check_metadata_destinations(document, owner=f"the authorization server {issuer}",
                                            server_url=server_url, allow_private_networks=self.allow_private_networks)
                return without_malformed_lists(document)
        raise AuthError(f"no authorization server metadata found for {issuer}"
                        + (f" ({'; '.join(problems)})" if problems else ""))

    def _fetch_legacy_metadata(
        self, server_url: str
    ) -> Generator[HTTPRequest, HTTPResponse, Tuple[str, Dict[str, Any], bool]]:
        """The 2025-03-26 fallback for servers without protected resource metadata."""
        response = yield self._discovery_request(legacy_metadata_url(server_url))
        if response.status == 404:
            defaults = legacy_default_endpoints(server_url)
            return defaults["issuer"], defaults, True
        document, problem = parse_json_object(response.body) if response.status == 200 else (None, "")
        if document is None:
            raise AuthError(
                f"{server_url} has no protected resource metadata, and {legacy_metadata_url(server_url)} "
                f"answered HTTP {response.status}" + (f" with a body that is {problem}" if problem else "")
            )
        issuer = check_legacy_metadata_issuer(document, server_url)
        check_metadata_destinations(document, owner=f"the authorization server {issuer}", server_url=server_url,
                                    allow_private_networks=self.allow_private_networks)
        return issuer, without_malformed_lists(document), False

    # -- the token endpoint -------------------------------------------------------------------------

    def _post_token_endpoint(
        self, binding: Binding, form: Dict[str, str], client: Optional[ClientRegistration],
        dpop_key: Optional[jose.ECPrivateKey] = None,
    ) -> Generator[HTTPRequest, HTTPResponse, Tuple[int, Optional[Dict[str, Any]], str]]:
        """POST ``form`` to the token endpoint, authenticated as ``client`` (None: no client at all, as
        workload identity federation has), with a DPoP proof by ``dpop_key`` when one is given: (status, the
        answer as a JSON object or None, why it is None).

        An authorization server that wants a nonce in the proof answers 400 ``use_dpop_nonce`` with a
        ``DPoP-Nonce`` header (RFC 9449 §8): the request is sent once more, with a new proof carrying it.
        """
        endpoint = endpoint_of(binding.metadata, "token_endpoint", f"the authorization server {binding.issuer}")
        assert binding.issuer is not None
        # Checked with the metadata already; again here, where credentials are about to leave (a secret, an
        # assertion, a refresh token), so that nothing reaches a token endpoint that did not pass.
        if not binding.legacy_defaults:
            self._check_destination(endpoint, f"the token_endpoint of {binding.issuer}", binding.server_url)
        sent_nonce: Optional[str] = None
        retried = False
        while True:
            extra_form: Dict[str, str] = {}
            headers = {"Content-Type": FORM, "Accept": JSON_ACCEPT}
            if client is not None:
                # Made anew for each sending: a private_key_jwt assertion's jti must not repeat.
                extra_form, extra_headers = client_authentication(
                    client, supported=binding.metadata.get("token_endpoint_auth_methods_supported"),
                    issuer=binding.issuer, private_key=self._private_key, now=self._clock(),
                )
                headers.update(extra_headers)
            if dpop_key is not None:
                sent_nonce = self._nonce_for(endpoint)
                headers["DPoP"] = dpop.make_proof(dpop_key, "POST", endpoint, now=self._clock(), nonce=sent_nonce)
            body = urlencode({**form, **extra_form}).encode("ascii")
            response = yield HTTPRequest("POST", endpoint, headers, body)
            self._remember_nonce(endpoint, response)
            data, problem = parse_json_object(response.body)
            wants_nonce = (dpop_key is not None and response.status == 400 and data is not None
                           and data.get("error") == dpop.USE_DPOP_NONCE)
            if retried or not wants_nonce or self._nonce_for(endpoint) in (None, sent_nonce):
                return response.status, data, f"the {form['grant_type']} token response from {endpoint} is {problem}"
            retried = True

    def _offers_dpop(self, binding: Binding) -> bool:
        """Whether to ask ``binding``'s authorization server for DPoP-bound tokens: it lists ES256, the
        algorithm `mcplite.jose` signs proofs with (RFC 9449 §5.1)."""
        algorithms = binding.metadata.get("dpop_signing_alg_values_supported")
        return self.dpop and isinstance(algorithms, list) and "ES256" in algorithms

    def _request_tokens(
        self, binding: Binding, form: Dict[str, str], client: Optional[ClientRegistration], scopes: List[str]
    ) -> Generator[HTTPRequest, HTTPResponse, Tokens]:
        """Get new tokens with the grant in ``form``; DPoP-bound ones, with a key made for this sign-in,
        where the authorization server offers them."""
        dpop_key = jose.ECPrivateKey.generate() if self._offers_dpop(binding) else None
        status, data, problem = yield from self._post_token_endpoint(binding, form, client, dpop_key)
        if status == 200 and data is None:
            raise AuthError(problem)
        if status != 200 or data is None:
            raise TokenRequestRefused(form["grant_type"], status, data)
        return Tokens.from_token_response(
            data, now=self._clock(), requested_scope=" ".join(scopes) or None, dpop_key=dpop_key)

    def _refresh(self, binding: Binding) -> Generator[HTTPRequest, HTTPResponse, bool]:
        """Refresh ``binding``'s tokens (OAuth 2.1 §4.3). True on success; on failure the dead tokens are
        forgotten so that the next attempt signs in afresh."""
        tokens = binding.tokens
        client = self._known_client(binding)
        if tokens is None or not tokens.refresh_token or client is None:
            return False
        form = {"grant_type": "refresh_token", "refresh_token": tokens.refresh_token}
        if binding.resource:
            form["resource"] = binding.resource
        # RFC 9449 §5: a refresh token issued with a proof is refreshed with a proof by the same key.
        dpop_key = tokens.dpop_key
        status, data, problem = yield from self._post_token_endpoint(binding, form, client, dpop_key)
        if status != 200 or data is None:
            _log.info("refreshing the token for %s failed with HTTP %d%s", binding.server_url, status,
                      f": {problem}" if status == 200 else "")
            self._store_tokens(binding, None)
            return False
        self._store_tokens(binding, Tokens.from_token_response(
            data, now=self._clock(), previous=tokens, dpop_key=dpop_key))
        return True
