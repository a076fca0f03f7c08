"""Running an auth flow over the network without the MCP transport: for the authorization step of a
headless client, for tests, and for anything that wants a token without an MCP session.

The HTTP client transport (``Client(url, auth=...)``) drives flows itself, over its own connections.
"""

import http.client
from typing import Any, Callable, Optional
from urllib.parse import urlsplit, urlunsplit

from ..errors import TransportError
from ..transports.http_messages import AuthFlow, HTTPRequest, HTTPResponse, lower_case_headers

__all__ = ["drive", "send_with_http_client"]


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
    request: HTTPRequest, *, timeout: float, ssl_context: Optional[Any] = None
) -> HTTPResponse:
    """Perform one exchange with `http.client`. Redirects are returned, never followed.

    Not following redirects matters: the authorization endpoint answers with a 302 whose ``Location``
    carries the code, and headless flows must read it rather than fetch it.

    Args:
        request: the request to send.
        timeout: socket timeout in seconds for connecting and for every read.
        ssl_context: an `ssl.SSLContext` for https URLs (the default context when None).

    Raises:
        TransportError: an unsupported scheme, or the connection failed or timed out.
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
        body = raw.read()
    except (OSError, http.client.HTTPException) as exc:
        raise TransportError(f"{request.method} {_without_query(request.url)} failed: {exc}") from exc
    finally:
        connection.close()
    return HTTPResponse(raw.status, lower_case_headers(raw.getheaders()), body)


def _without_query(url: str) -> str:
    # Query strings can carry codes and state; error messages get the URL without them.
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
