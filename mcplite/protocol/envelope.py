"""The per-request envelope of revision 2026-07-28, inbound: `_meta` keys, the era of a body, the ladder.

Pure: no I/O, threads or clocks. `session.ServerSession` runs the ladder on every enveloped request (stdio,
in memory, and the HTTP server's throwaway sessions), with the HTTP headers when there are some.

From 2026-07-28 there is no ``initialize``: every request names its revision, client and capabilities in
``params._meta`` under reserved ``io.modelcontextprotocol/*`` keys, and the server accepts or refuses each
request on its own. Sources: the spec's ``basic/index.mdx`` (2026-07-28) §"_meta" ("Per-request protocol
fields"), ``basic/versioning.mdx`` (the ``-32022`` example), ``basic/transports/streamable-http.mdx`` (status
codes); ../shared/spec/CONFORMANCE-2026.md §4.0 (the order of the checks), §4.1 (``server-stateless``);
../shared/design/MODERN.md ("The HTTP server", "Detecting the era", spec point 9).

- `classify` tells an enveloped body ("envelope") from ``initialize`` ("handshake"), body first.
- `read_envelope` runs the ladder on one request and returns an `Envelope`, or raises the `RPCError` to answer
  with. The rungs, in the order the conformance suite and both v2 peers use:

  1. ``_meta`` missing, or without a string protocol version or an object of client capabilities: ``-32602``;
  2. on HTTP, an ``MCP-Protocol-Version`` header missing or different from ``_meta``'s: ``-32020``;
  3. a version this server does not serve statelessly: ``-32022``, ``data = {supported, requested}`` where
     ``supported`` lists every version the server speaks, both eras (the spec's own example does);
  4. on HTTP, ``Mcp-Method`` / ``Mcp-Name`` against the body: ``-32020`` (`mcp_headers`);
  5. (the caller's) ``Mcp-Param-*`` of the called tool: ``-32020``, also `mcp_headers`;
  6. a method 2026-07-28 removed (``initialize``, ``ping``, ``logging/setLevel``, ``resources/subscribe``,
     ``resources/unsubscribe``): ``-32601``;
  7. the optional keys, once the revision that defines them is known: client info not an object, an unknown
     log level, a progress token that is neither a string nor a number: ``-32602``.

- `http_status` maps the code of an error answer to its HTTP status; `missing_capabilities_error` builds the
  ``-32021`` a handler raises when the request did not declare a capability it needs.

A sibling of `versions` rather than part of it: the supported version lists are arguments, so a test can feed
it any lists. The era names `classify` answers are the table's (`versions.ENVELOPE`, `versions.HANDSHAKE`).
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up


from .._once import once
from ..errors import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    PARSE_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
    RPCError,
)
from . import methods
from .http_rules import PROTOCOL_VERSION_HEADER as VERSION_HEADER  # repeats _meta's version on HTTP
from .methods import (  # the reserved _meta keys: defined with the protocol's other string constants
    CLIENT_CAPABILITIES_KEY,
    CLIENT_INFO_KEY,
    LOG_LEVEL_KEY,
    META_PREFIX,
    PROGRESS_TOKEN_KEY,
    PROTOCOL_VERSION_KEY,
    SERVER_INFO_KEY,
    SUBSCRIPTION_ID_KEY,
)
from .versions import ENVELOPE, HANDSHAKE  # the era names `classify` answers

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    from typing import Any, Callable, Collection, Dict, Iterable, Mapping, Optional, Tuple, Union

__all__ = [
    "META_PREFIX", "PROTOCOL_VERSION_KEY", "CLIENT_INFO_KEY", "CLIENT_CAPABILITIES_KEY", "LOG_LEVEL_KEY",
    "SUBSCRIPTION_ID_KEY", "SERVER_INFO_KEY", "PROGRESS_TOKEN_KEY", "VERSION_HEADER",
    "REMOVED_METHODS", "ENVELOPE_ONLY_METHODS", "Envelope", "classify", "read_envelope", "http_status",
    "missing_capabilities_error",
]

#: Methods 2026-07-28 removed: a request for one, enveloped, is an unknown method (CONFORMANCE-2026 §4.0.6).
#: Until the version table lists each revision's methods, this is the one place that knows them.
REMOVED_METHODS = frozenset({
    methods.INITIALIZE, methods.PING, methods.LOGGING_SET_LEVEL, methods.RESOURCES_SUBSCRIBE,
    methods.RESOURCES_UNSUBSCRIBE,
})

#: Methods that exist only from 2026-07-28: without an envelope (a handshake-era request) they are unknown.
ENVELOPE_ONLY_METHODS = frozenset({methods.SERVER_DISCOVER, methods.SUBSCRIPTIONS_LISTEN})

# The codes answered with 400 Bad Request (streamable-http.mdx; MODERN.md "The HTTP server", step 5).
_BAD_REQUEST_CODES = frozenset({
    PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS, HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION,
})
_OWS = " \t"  # optional whitespace around a header value (RFC 9110), trimmed before comparing


class Envelope:
    """What one request's ``_meta`` says about it, once the ladder accepted it. Read-only.

    ``version``: the revision the request speaks (one of the server's envelope-era versions). ``client_info``: the
    client's ``Implementation`` object, or None when not sent (for display and logs only). ``client_capabilities``:
    the capabilities declared for this request (``{}`` declares none). ``log_level``: the least severe level
    the request wants, or None (then the server emits no log messages for it). ``progress_token``: the
    request's ``progressToken``, or None (then no progress notifications).
    """

    __slots__ = ("version", "client_info", "client_capabilities", "log_level", "progress_token")

    version: str
    client_info: Optional[Dict[str, Any]]
    client_capabilities: Dict[str, Any]
    log_level: Optional[str]
    progress_token: Optional[Union[str, int, float]]

    def __init__(self, version: str, client_capabilities: Dict[str, Any], *,
                 client_info: Optional[Dict[str, Any]] = None, log_level: Optional[str] = None,
                 progress_token: Optional[Union[str, int, float]] = None) -> None:
        setter = object.__setattr__  # one per field, unrolled: this runs once per 2026-07-28 request
        setter(self, "version", version)
        setter(self, "client_info", client_info)
        setter(self, "client_capabilities", client_capabilities)
        setter(self, "log_level", log_level)
        setter(self, "progress_token", progress_token)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("an Envelope is read-only")

    def _key(self) -> Tuple[Any, ...]:
        return (self.version, self.client_info, self.client_capabilities, self.log_level, self.progress_token)

    def __eq__(self, other: object) -> bool:
        return type(other) is Envelope and self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]  # holds dicts: equal by value, not hashable

    def __repr__(self) -> str:
        return ("Envelope(version={!r}, client_capabilities={!r}, client_info={!r}, log_level={!r}, "
                "progress_token={!r})").format(self.version, self.client_capabilities, self.client_info,
                                               self.log_level, self.progress_token)


def classify(body: Any) -> Optional[str]:
    """The era a decoded message asks for: `ENVELOPE`, `HANDSHAKE`, or None when the body does not say.

    `ENVELOPE` when the message names a method and its ``params._meta`` carries `PROTOCOL_VERSION_KEY`
    (whatever its value: a malformed envelope is still an envelope, and the ladder answers it); this holds
    for ``initialize`` too, which the ladder then refuses as removed (CONFORMANCE-2026 §4.1, checks 17-21).
    `HANDSHAKE` for an ``initialize`` request without it. None for everything else: other unenveloped
    messages, responses, batches (a JSON array: 2026-07-28 has no batches) and non-objects. The body
    decides before any header does (MODERN.md spec point 2): a caller falls back on the header only on None.
    """
    if not isinstance(body, dict) or not isinstance(body.get("method"), str):
        return None
    params = body.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if isinstance(meta, dict) and PROTOCOL_VERSION_KEY in meta:
        return ENVELOPE
    if body["method"] == methods.INITIALIZE and "id" in body:
        return HANDSHAKE
    return None


def _invalid(message: str) -> RPCError:
    return RPCError(INVALID_PARAMS, f"Invalid params: {message}")


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def read_envelope(method: str, params: Any, *, supported_envelope: Collection[str], supported_all: Iterable[str],
                  headers: Optional[Mapping[str, str]] = None) -> Envelope:
    """Run the ladder (module docstring) on one request; the `Envelope`, or raise the `RPCError` to answer.

    ``method`` and ``params``: the request's (``params`` as received: None when absent). ``supported_envelope``:
    the versions this server serves per request; ``supported_all``: every version it speaks, both eras, in
    the order to list them in ``-32022``'s ``data.supported``. ``headers``: the HTTP request's headers (names
    in any case) when the request came over HTTP, so rungs 2 and 4 run; None on stdio and in memory.
    Rung 5 (``Mcp-Param-*``) needs the called tool and stays with the caller (`mcp_headers`); it applies to
    ``tools/call`` only, which rung 6 never refuses, so running it after this call keeps the order.
    """
    # Rung 1: the required keys (basic/index.mdx: "A request missing any required field is malformed").
    meta = params.get("_meta") if isinstance(params, dict) else None
    if meta is None:
        raise _invalid("missing _meta (a 2026-07-28 request carries its protocol version and client "
                       "capabilities there)")
    if not isinstance(meta, dict):
        raise _invalid("_meta must be an object")
    version = meta.get(PROTOCOL_VERSION_KEY)
    if version is None:
        raise _invalid(f"missing required _meta field {PROTOCOL_VERSION_KEY}")
    if not isinstance(version, str):
        raise _invalid(f"_meta field {PROTOCOL_VERSION_KEY} must be a string")
    capabilities = meta.get(CLIENT_CAPABILITIES_KEY)
    if capabilities is None:
        raise _invalid(f"missing required _meta field {CLIENT_CAPABILITIES_KEY}")
    if not isinstance(capabilities, dict):
        raise _invalid(f"_meta field {CLIENT_CAPABILITIES_KEY} must be an object")
    # Rung 2: the version header repeats the body's (checked before support: a header naming a supported
    # version over a body naming another is a mismatch, not an unsupported version; conformance check 14).
    if headers is not None:
        received = {name.lower(): value for name, value in headers.items()}
        raw = received.get(VERSION_HEADER.lower())
        if raw is None:
            raise RPCError(HEADER_MISMATCH, f"Header mismatch: missing required {VERSION_HEADER} header")
        if raw.strip(_OWS) != version:
            raise RPCError(HEADER_MISMATCH, f"Header mismatch: {VERSION_HEADER} header value "
                                            f"'{raw.strip(_OWS)}' does not match body value '{version}'")
    # Rung 3: a version served per request. A handshake version in _meta is refused the same way: that era
    # is reached through initialize only, and data.supported tells the client so (MODERN.md spec point 9).
    if version not in supported_envelope:
        raise RPCError(UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version",
                       {"supported": list(supported_all), "requested": version})
    # Rung 4: Mcp-Method and Mcp-Name against the body. The id only marks the message as a request.
    if headers is not None:
        mismatch = _header_checker()(headers, {"jsonrpc": "2.0", "id": 0, "method": method, "params": params})
        if mismatch is not None:
            raise mismatch
    # Rung 6: methods this revision no longer has.
    if method in REMOVED_METHODS:
        raise RPCError(METHOD_NOT_FOUND, f"Method not found: {method}")
    # Rung 7: the optional keys.
    client_info = meta.get(CLIENT_INFO_KEY)
    if client_info is not None and not isinstance(client_info, dict):
        raise _invalid(f"_meta field {CLIENT_INFO_KEY} must be an object")
    log_level = meta.get(LOG_LEVEL_KEY)
    if log_level is not None and log_level not in methods.LOGGING_LEVELS:
        raise _invalid(f"_meta field {LOG_LEVEL_KEY} must be one of {', '.join(methods.LOGGING_LEVELS)}")
    token = meta.get(PROGRESS_TOKEN_KEY)
    if token is not None and not (isinstance(token, str) or _is_number(token)):
        raise _invalid(f"_meta field {PROGRESS_TOKEN_KEY} must be a string or a number")
    return Envelope(version, capabilities, client_info=client_info, log_level=log_level, progress_token=token)


def http_status(code: int) -> int:
    """The HTTP status of a response whose JSON-RPC error has this code (streamable-http.mdx, 2026-07-28).

    ``-32700``, ``-32600``, ``-32602``, ``-32020``, ``-32021`` and ``-32022``: 400; ``-32601``: 404 (so a
    client can tell a legacy endpoint from an unknown method); anything else, ``-32603`` included: 200 with
    the error in the body.
    """
    if code in _BAD_REQUEST_CODES:
        return 400
    if code == METHOD_NOT_FOUND:
        return 404
    return 200


def missing_capabilities_error(required: Union[Mapping[str, Any], Iterable[str]]) -> RPCError:
    """The ``-32021`` error for a request that did not declare capabilities its processing needs.

    ``required``: the missing capabilities as a ``ClientCapabilities`` object (``{"sampling": {}}``,
    sub-fields kept), or as names (``["sampling"]``, each declared as ``{}``). ``data.requiredCapabilities``
    is always an object keyed by capability, never a list (CONFORMANCE-2026 §4.1, checks 15-16).
    """
    if isinstance(required, str):
        raise TypeError("pass capability names as a list or a mapping, not one string")
    if hasattr(required, "items"):
        capabilities: Dict[str, Any] = dict(required)  # type: ignore[arg-type]
    else:
        capabilities = {name: {} for name in required}
    if not capabilities:
        raise ValueError("a -32021 error names at least one missing capability")
    names = ", ".join(sorted(capabilities))
    return RPCError(MISSING_REQUIRED_CLIENT_CAPABILITY, f"Missing required client capability: {names}",
                    {"requiredCapabilities": capabilities})


@once
def _header_checker() -> Callable[..., Optional[RPCError]]:
    """`mcp_headers.check_request_headers`, loaded by the first request with headers: only HTTP requests have
    them, and a stdio server need not load the header codec."""
    from .mcp_headers import check_request_headers

    return check_request_headers
