"""The HTTP messages that cross module boundaries, defined once.

- `HTTPRequest` / `HTTPResponse`: one exchange as an auth flow sees it. The HTTP client transport sends
  the requests an ``auth`` object's flow yields and sends it back each response (`AuthFlow`); the OAuth
  client (`mcplite.oauth`) builds and reads them without doing any I/O itself.
- `HTTPRefusal`: what an HTTP server's ``authenticate`` hook raises to answer 401/403 (the server-side
  bearer token check in `mcplite.oauth` raises it; `mcplite.http_server` sends it).
- `PublishesRoutes`: the optional half of an ``authenticate`` hook, documents it serves to everyone.
- `ChecksRequests`: the other optional half, for a hook that needs the request's method and path too.
- `lower_case_headers`: header fields as every HTTP message here holds them (lower-case names, repeated
  fields joined), the one normalisation of the client, the OAuth driver and the WSGI adapter.
- `read_at_most`: a response body read up to a bound, the one way the client and the OAuth driver read one.

This module imports nothing from the package, so every layer may use it.
"""

import abc
from typing import TYPE_CHECKING, Any, Callable, Dict, Generator, Iterable, List, Mapping, NamedTuple, Optional, Tuple

if TYPE_CHECKING:  # the server side imports this module too, and never needs http.client
    import http.client

__all__ = ["HTTPRequest", "HTTPResponse", "AuthFlow", "HTTPRefusal", "PublishesRoutes", "ChecksRequests",
           "lower_case_headers", "read_at_most", "LOOPBACK_HOSTS", "LOOPBACK_HOSTNAMES"]

#: The loopback host names, as a ``Host`` header spells them: the server accepts these by default when bound
#: to a loopback address, and their hosts are the loopback origins it accepts.
LOOPBACK_HOSTS: Tuple[str, ...] = ("localhost", "127.0.0.1", "[::1]")

#: The same hosts as `urllib.parse.urlsplit(url).hostname` gives them (an IPv6 address without brackets):
#: what the server's Origin check compares with, and the names the OAuth client's "plain http only on loopback"
#: rule takes for loopback with any 127.0.0.0/8 address (`mcplite.oauth.destinations`).
LOOPBACK_HOSTNAMES = frozenset(host.strip("[]") for host in LOOPBACK_HOSTS)


class HTTPRequest(NamedTuple):
    """One HTTP request that a client sends: an absolute URL, headers as given, an optional body."""

    method: str
    url: str
    headers: Mapping[str, str]
    body: Optional[bytes] = None


class HTTPResponse(NamedTuple):
    """One HTTP response as an auth flow reads it.

    ``headers`` has lower-case names (repeated headers joined with ", "): look names up in lower case.
    ``body`` is the whole body, except for an SSE stream, which the HTTP client never reads ahead: there
    it is ``b""``.
    """

    status: int
    headers: Mapping[str, str]
    body: bytes = b""


#: What ``auth.auth_flow(request)`` returns: a generator that yields requests to send (the caller's own,
#: with credentials, and any it needs on the way), is sent each one's `HTTPResponse`, and ends when the
#: response to the last request it yielded is the one the caller should use.
AuthFlow = Generator[HTTPRequest, HTTPResponse, None]


class HTTPRefusal(Exception):
    """Raise from an HTTP server's ``authenticate`` hook to refuse a request.

    Args:
        status: 401 (no or bad credentials) or 403 (not allowed).
        message: the error message of the JSON-RPC error body.
        www_authenticate: the ``WWW-Authenticate`` header value, for example
            ``'Bearer resource_metadata="https://host/.well-known/oauth-protected-resource"'``.
        headers: any other headers to send.
    """

    def __init__(self, status: int = 401, message: str = "Unauthorized", *, www_authenticate: Optional[str] = None,
                 headers: Optional[List[Tuple[str, str]]] = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers: List[Tuple[str, str]] = list(headers or [])
        if www_authenticate is not None:
            self.headers.append(("WWW-Authenticate", www_authenticate))


class PublishesRoutes(abc.ABC):
    """An HTTP server's ``authenticate`` hook that also has documents to serve without authentication.

    The hook itself is any callable ``headers -> claims`` (raising `HTTPRefusal`). One that also defines
    ``well_known_routes()`` (`mcplite.oauth.BearerAuth`: the RFC 9728 metadata a client reads before it has a
    token) has those routes served beside the MCP endpoint. The check is structural, as for the ABCs of
    `collections.abc`: a hook need not inherit from this class, only define the method.
    """

    __slots__ = ()

    @abc.abstractmethod
    def well_known_routes(self) -> Mapping[str, Callable[[Any], Tuple[int, List[Tuple[str, str]], bytes]]]:
        """``{path: handler}``: a handler takes the request and returns ``(status, headers, body)``."""

    @classmethod
    def __subclasshook__(cls, other: type) -> Any:
        if cls is PublishesRoutes:
            return callable(getattr(other, "well_known_routes", None)) or NotImplemented
        return NotImplemented


class ChecksRequests(abc.ABC):
    """An HTTP server's ``authenticate`` hook that needs more of the request than its headers: a DPoP proof
    (`mcplite.oauth.BearerAuth` with ``dpop=``) names the request's method and URL. The server then calls
    ``authenticate_request`` instead of the hook itself. Structural, like `PublishesRoutes`."""

    __slots__ = ()

    @abc.abstractmethod
    def authenticate_request(self, method: str, path: str, headers: Mapping[str, str]) -> Any:
        """Check one request; returns the caller's claims or raises `HTTPRefusal`.

        Args:
            method: the HTTP method.
            path: the path the client addressed (below the host, mount point included), without the query.
            headers: the request headers, with lower-case names.
        """

    @classmethod
    def __subclasshook__(cls, other: type) -> Any:
        if cls is ChecksRequests:
            return callable(getattr(other, "authenticate_request", None)) or NotImplemented
        return NotImplemented


def lower_case_headers(pairs: Iterable[Tuple[str, str]]) -> Dict[str, str]:
    """Response headers as `HTTPResponse` holds them: lower-case names, repeated ones joined with ", "."""
    joined: Dict[str, str] = {}
    for name, value in pairs:
        key = name.lower()
        joined[key] = f"{joined[key]}, {value}" if key in joined else value
    return joined


#: What `read_at_most` asks the socket for at a time when the length is not known ahead.
_READ_CHUNK = 64 * 1024


def read_at_most(response: "http.client.HTTPResponse", size: int) -> bytes:
    """Up to ``size`` bytes of ``response``'s body (fewer if it ends first), allocating only what arrives.

    Not ``response.read(size)``: before Python 3.10, `http.client` allocates the whole ``size`` up front (a
    zero-filled bytearray) and reads into it. With ``size`` a message bound of 64 MiB, every response cost a
    64 MiB allocation, and mapping and zeroing it took some 50 ms of system time: a small tool call over HTTP
    was sixty times slower on 3.9 than on 3.10. So a declared length that fits is read at once, and a body
    of unknown length (chunked, or ended by the close) piece by piece as it comes.

    Errors are `http.client`'s own (`OSError`, `http.client.HTTPException`); a body that ends before its
    declared length is returned short, as ``read(n)`` does: the caller compares it with Content-Length.
    """
    remaining = response.length  # what is left of a declared Content-Length; None when chunked or unknown
    if remaining is not None and remaining <= size:
        return response.read(remaining)
    parts: List[bytes] = []
    got = 0
    while got < size:
        part = response.read1(min(_READ_CHUNK, size - got))
        if not part:
            break
        parts.append(part)
        got += len(part)
    return b"".join(parts)
