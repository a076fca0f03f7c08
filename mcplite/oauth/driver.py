"""Running an auth flow over the network without the MCP transport: for the authorization step of a
headless client, for tests, and for anything that wants a token without an MCP session.

The HTTP client transport (``Client(url, auth=...)``) drives flows itself, over its own connections.
"""

import http.client
from typing import Any, Callable, Optional
from urllib.parse import urlsplit, urlunsplit

from ..errors import TransportError
from ..transports.http_messages import AuthFlow, HTTPRequest, HTTPResponse, lower_case_headers, read_at_most

__all__ = ["drive", "send_with_http_client", "DEFAULT_MAX_BODY_SIZE"]

#: The largest response body `send_with_http_client` reads, in bytes: OAuth documents are a few KiB.
DEFAULT_MAX_BODY_SIZE = 1024 * 1024


def drive(flow: AuthFlow, send: Callable[[HTTPRequest], HTTPResponse]) -> HTTPResponse:
    """Run an auth flow to its end, sending each request it yields with ``send``.

    Args:
        flow: the generator from `BaseOAuth.auth_flow`.
        send: performs one HTTP exchange (for example `send_with_http_client` with a timeout bound).

    Returns:
        The response to the last request, which is the caller's own request with credentials.

    Raises:
        AuthError: the flow could not obtain a token the server accepts.
        Whatever ``send`` raises (the flow is closed first, which releases its lock).
    """
    try:
        request = next(flow)
        while True:
            response = send(request)
            try:
                request = flow.send(response)
            except StopIteration:
                return response
    finally:
        flow.close()


def send_with_http_client(
    request: HTTPRequest, *, timeout: float, ssl_context: Optional[Any] = None,
    max_body_size: int = DEFAULT_MAX_BODY_SIZE,
) -> HTTPResponse:
    """Perform one exchange with `http.client`. Redirects are returned, never followed.

    Not following redirects matters: the authorization endpoint answers with a 302 whose ``Location``
    carries the code, and headless flows must read it rather than fetch it.

    Args:
        request: the request to send.
        timeout: socket timeout in seconds for connecting and for every read.
        ssl_context: an `ssl.SSLContext` for https URLs (the default context when None).
        max_body_size: the largest response body read, in bytes (default 1 MiB); a larger one is not read.
            The head is bounded by `http.client` (100 fields, 64 KiB a line).

    Raises:
        TransportError: an unsupported scheme or a URL that cannot be sent, the connection failed or timed out,
            or the response is larger than allowed.
    """
    parts = urlsplit(request.url)
    host = parts.hostname or ""
    connection: http.client.HTTPConnection
    if parts.scheme == "https":
        connection = http.client.HTTPSConnection(host, parts.port, timeout=timeout, context=ssl_context)
    elif parts.scheme == "http":
        connection = http.client.HTTPConnection(host, parts.port, timeout=timeout)
    else:
        raise TransportError(f"unsupported URL scheme {parts.scheme!r}")
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        connection.request(request.method, target, body=request.body, headers=dict(request.headers))
        raw = connection.getresponse()
        body = read_at_most(raw, max_body_size + 1)  # one byte more than allowed tells a body that is too long
        declared = raw.getheader("Content-Length") or ""
        if declared.isdigit() and len(body) < min(int(declared), max_body_size + 1):  # read(n) does not raise
            raise http.client.IncompleteRead(body, int(declared) - len(body))
    except (OSError, ValueError, http.client.HTTPException) as exc:  # ValueError: a URL or header not sendable
        raise TransportError(f"{request.method} {_without_query(request.url)} failed: {exc}") from exc
    finally:
        connection.close()
    if len(body) > max_body_size:
        raise TransportError(f"{request.method} {_without_query(request.url)}: the response body is larger than "
                             f"{max_body_size} bytes (max_body_size); not read")
    return HTTPResponse(raw.status, lower_case_headers(raw.getheaders()), body)


def _without_query(url: str) -> str:
    # Query strings can carry codes and state; error messages get the URL without them.
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
