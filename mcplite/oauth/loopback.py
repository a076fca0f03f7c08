"""The user's step of a sign-in: open the browser at the authorization URL and catch the redirect on a
loopback port (RFC 8252 §7.3). This is the one part of the flow that is I/O by nature."""

import socketserver
import sys
import time
import webbrowser
from http.server import BaseHTTPRequestHandler
from typing import Any, Callable, Optional, Sequence, Union
from urllib.parse import urlsplit

from ..errors import AuthError
from .records import AuthorizationResponse

__all__ = ["AuthorizeCallback", "LoopbackRedirectCatcher", "BrowserAuthorizer", "default_authorizer"]

#: `OAuth`'s ``authorize`` step: called with the authorization URL, it has the user consent and returns
#: the URL the authorization server redirected to (or its parameters as an `AuthorizationResponse`).
AuthorizeCallback = Callable[[str], Union[AuthorizationResponse, str]]

_HANDLER_SOCKET_TIMEOUT = 10.0  # a connection that opens and says nothing must not hold the catcher
_SIGNED_IN_PAGE = (
    b"<!doctype html><meta charset=utf-8><title>Signed in</title>"
    b"<p>Sign-in finished. You can close this window.</p>"
)


class _LoopbackServer(socketserver.TCPServer):
    # Rebinding the port of the previous sign-in must not fail while its socket sits in TIME_WAIT.
    allow_reuse_address = True


class LoopbackRedirectCatcher:
    """Listens on 127.0.0.1 for the one browser redirect that ends an authorization.

    Use as a context manager, or call `close`.
    """

    def __init__(self, *, port: int = 0, path: str = "/callback", timeout: float = 300.0) -> None:
        """Args:
            port: the port to listen on; 0 picks a free one.
            path: the redirect URI path; requests for other paths get 404 and are ignored.
            timeout: how long `wait` waits for the redirect, in seconds.

        Raises:
            OSError: the port cannot be bound.
        """
        catcher = self

        class Handler(BaseHTTPRequestHandler):
            timeout = _HANDLER_SOCKET_TIMEOUT

            def do_GET(self) -> None:
                catcher._handle(self)

            def log_message(self, format: str, *args: Any) -> None:
                pass  # the request line carries the authorization code: it stays out of every log

        self.path = path
        self.timeout = timeout
        self._redirect: Optional[str] = None
        self._server = _LoopbackServer(("127.0.0.1", port), Handler)

    @property
    def port(self) -> int:
        """The port listened on."""
        return int(self._server.server_address[1])

    @property
    def redirect_uri(self) -> str:
        """``http://127.0.0.1:PORT/PATH``: the redirect URI to register and send."""
        return f"http://127.0.0.1:{self.port}{self.path}"

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        if urlsplit(handler.path).path != self.path:
            handler.send_error(404)
            return
        self._redirect = f"http://127.0.0.1:{self.port}{handler.path}"
        handler.send_response(200)
        handler.send_header("Content-Type", "text/html; charset=utf-8")
        handler.send_header("Content-Length", str(len(_SIGNED_IN_PAGE)))
        handler.send_header("Cache-Control", "no-store")
        handler.end_headers()
        handler.wfile.write(_SIGNED_IN_PAGE)

    def wait(self) -> str:
        """Serve until the redirect arrives and return its full URL.

        Raises:
            AuthError: nothing arrived within ``timeout`` seconds.
        """
        deadline = time.monotonic() + self.timeout
        while self._redirect is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AuthError(f"no authorization redirect arrived within {self.timeout:g} seconds")
            self._server.timeout = remaining
            self._server.handle_request()
        return self._redirect

    def close(self) -> None:
        """Stop listening."""
        self._server.server_close()

    def __enter__(self) -> "LoopbackRedirectCatcher":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()


class BrowserAuthorizer:
    """The default ``authorize`` callback of `OAuth`: opens the system browser at the authorization URL
    and catches the redirect on a loopback port.

    `redirect_uri` binds the port as soon as it is asked for, because the client must register the URI
    before the browser opens. Later sign-ins reuse the same port when it is free, and so does a later
    process: `OAuth` offers it the redirect URIs of the stored registration (`prefer_redirect_uris`). When
    that port is taken, the redirect URI changes and `OAuth` registers again.
    """

    def __init__(
        self, *, port: int = 0, path: str = "/callback", timeout: float = 300.0,
        open_browser: Optional[Callable[[str], bool]] = None,
    ) -> None:
        """Args:
            port: the loopback port to listen on; 0 picks a free one.
            path: the redirect URI path.
            timeout: how long to wait for the user, in seconds.
            open_browser: opens a URL, returns False when it could not (default: `webbrowser.open`).
        """
        self._port = port
        self._path = path
        self._timeout = timeout
        self._open_browser = open_browser
        self._catcher: Optional[LoopbackRedirectCatcher] = None

    def _bound_catcher(self) -> LoopbackRedirectCatcher:
        if self._catcher is None:
            try:
                self._catcher = LoopbackRedirectCatcher(port=self._port, path=self._path, timeout=self._timeout)
            except OSError:
                if self._port == 0:
                    raise
                self._catcher = LoopbackRedirectCatcher(port=0, path=self._path, timeout=self._timeout)
            self._port = self._catcher.port
        return self._catcher

    @property
    def redirect_uri(self) -> str:
        """The loopback redirect URI of the next sign-in (binding its port now)."""
        return self._bound_catcher().redirect_uri

    def prefer_redirect_uris(self, uris: Sequence[str]) -> None:
        """Listen on the port of the first of ``uris`` that this listener could serve (same path, on
        127.0.0.1), if no port was chosen yet: a client registered with that URI is then used again rather
        than registering a new one for every process. A port that is taken falls back to a free one."""
        if self._catcher is not None or self._port != 0:
            return
        for uri in uris:
            parts = urlsplit(uri)
            if parts.scheme == "http" and parts.hostname == "127.0.0.1" and parts.port and parts.path == self._path:
                self._port = parts.port
                return

    def __call__(self, authorization_url: str) -> str:
        """Open the browser at ``authorization_url`` (or print it, when no browser opens) and return the
        redirect URL the browser is sent back to.

        Raises:
            AuthError: no redirect arrived within ``timeout`` seconds.
        """
        catcher = self._bound_catcher()
        self._catcher = None
        with catcher:
            # webbrowser.open is looked up now, not at import: tests and embedding programs replace it.
            open_browser = self._open_browser or webbrowser.open
            if not open_browser(authorization_url):
                sys.stderr.write(f"Open this address in a browser to sign in:\n{authorization_url}\n")
            return catcher.wait()

    def close(self) -> None:
        """Release the port if one is bound."""
        if self._catcher is not None:
            self._catcher.close()
            self._catcher = None


def default_authorizer(redirect_uri: Optional[str]) -> BrowserAuthorizer:
    """The `BrowserAuthorizer` for a redirect URI on 127.0.0.1 (any free port when None).

    Raises:
        ValueError: a redirect URI the built-in listener cannot serve.
    """
    if redirect_uri is None:
        return BrowserAuthorizer()
    parts = urlsplit(redirect_uri)
    if parts.scheme != "http" or parts.hostname != "127.0.0.1":
        raise ValueError(
            "the built-in browser sign-in listens on http://127.0.0.1; pass authorize= for another redirect_uri")
    return BrowserAuthorizer(port=80 if parts.port is None else parts.port, path=parts.path or "/")
