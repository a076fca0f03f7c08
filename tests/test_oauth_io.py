"""mcplite.oauth's I/O: the loopback listener, the browser sign-in, `send_with_http_client`, and full
flows over real sockets against the test authorization server."""

import json
import socket
from typing import List, Tuple

import pytest

from mcplite import jose
from mcplite.errors import AuthError, TransportError
from mcplite.oauth import BrowserAuthorizer, ClientCredentials, HTTPRequest, HTTPResponse, MemoryTokenStorage, OAuth
from mcplite.oauth.advanced import LoopbackRedirectCatcher, parse_bearer_challenge, send_with_http_client
from oauth_server import (  # tests/ is on sys.path under pytest's default import mode
    Clock, CountingAuthorize, OAuthTestServer, call, decode_query, follow_authorization_redirect,
)
from support import WAIT, Background

SOCKET_TIMEOUT = 5.0
THREAD_TIMEOUT = WAIT
REDIRECT_URI = "http://127.0.0.1:8976/callback"  # registered, never contacted: tests read the 302 itself


def get(url: str) -> HTTPResponse:
    return send_with_http_client(HTTPRequest("GET", url, {}, None), timeout=SOCKET_TIMEOUT)


def test_loopback_catcher_returns_the_redirect_and_ignores_other_paths() -> None:
    with LoopbackRedirectCatcher(timeout=THREAD_TIMEOUT) as catcher:
        base = f"http://127.0.0.1:{catcher.port}"
        browser = Background(lambda: (get(f"{base}/favicon.ico"), get(f"{base}/callback?code=c&state=s")))
        redirect = catcher.wait()
        favicon, callback = browser.join(THREAD_TIMEOUT)
    assert redirect == f"{base}/callback?code=c&state=s"
    assert favicon.status == 404 and callback.status == 200 and b"close this window" in callback.body


def test_loopback_catcher_times_out() -> None:
    with LoopbackRedirectCatcher(timeout=0.2) as catcher:
        with pytest.raises(AuthError, match="no authorization redirect"):
            catcher.wait()


def test_browser_authorizer_opens_the_url_and_returns_the_redirect() -> None:
    opened: List[str] = []

    def fake_browser(url: str) -> bool:
        opened.append(url)
        Background(get, decode_query(url)["redirect_uri"] + "?code=c&state=s")
        return True

    authorizer = BrowserAuthorizer(open_browser=fake_browser, timeout=THREAD_TIMEOUT)
    redirect_uri = authorizer.redirect_uri
    assert redirect_uri.startswith("http://127.0.0.1:") and redirect_uri.endswith("/callback")
    result = authorizer(f"https://as.example/authorize?redirect_uri={redirect_uri}")
    assert result == f"{redirect_uri}?code=c&state=s" and len(opened) == 1
    assert authorizer.redirect_uri == redirect_uri  # the same port again for the next sign-in
    authorizer.close()


def serve_one_raw_response(raw: bytes) -> Tuple[int, Background]:
    """A one-shot server that answers the first request with ``raw`` bytes (to send what http.server can't)."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(SOCKET_TIMEOUT)

    def answer() -> None:
        with listener:
            connection, _ = listener.accept()
            with connection:
                connection.settimeout(SOCKET_TIMEOUT)
                connection.recv(65536)
                connection.sendall(raw)

    port = listener.getsockname()[1]
    return port, Background(answer)


def test_send_with_http_client_joins_repeated_headers_and_lowercases_names() -> None:
    port, server = serve_one_raw_response(
        b"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"x\"\r\n"
        b"WWW-Authenticate: Bearer scope=\"a b\"\r\nContent-Length: 2\r\nConnection: close\r\n\r\nno")
    response = get(f"http://127.0.0.1:{port}/mcp")
    server.join(THREAD_TIMEOUT)
    assert response.status == 401 and response.body == b"no"
    assert response.headers["www-authenticate"] == 'Basic realm="x", Bearer scope="a b"'
    challenge = parse_bearer_challenge(response.headers["www-authenticate"])
    assert challenge is not None and challenge.scopes == ["a", "b"]


def test_the_built_in_browser_sign_in_listens_where_the_redirect_uri_says() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    auth = OAuth(redirect_uri=f"http://127.0.0.1:{port}/oauth/done")
    authorizer = auth.authorize
    assert isinstance(authorizer, BrowserAuthorizer)
    assert authorizer.redirect_uri == f"http://127.0.0.1:{port}/oauth/done"
    authorizer.close()
    with pytest.raises(ValueError, match="authorize="):
        OAuth(redirect_uri="https://app.example.com/callback")


def test_send_with_http_client_reports_connection_failures() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(TransportError, match="failed") as failure:
        get(f"http://127.0.0.1:{port}/?code=secret-code")
    assert "secret-code" not in str(failure.value)  # query strings can carry codes: kept out of messages


def test_full_sign_in_refresh_and_reuse_over_real_sockets() -> None:
    clock = Clock()

    def send(request: HTTPRequest) -> HTTPResponse:
        return send_with_http_client(request, timeout=SOCKET_TIMEOUT)

    with OAuthTestServer(clock=clock) as server:
        server.token_lifetime = 60
        authorize = CountingAuthorize(follow_authorization_redirect(send))  # reads the 302, never follows it
        auth = OAuth(authorize=authorize, redirect_uri=REDIRECT_URI, clock=clock)
        first = call(auth, send, server.mcp_url)
        assert first.status == 200 and json.loads(first.body)["result"] == {"ok": True}
        assert server.paths() == [
            "/mcp", "/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-authorization-server",
            "/register", "/authorize", "/token", "/mcp"]
        assert call(auth, send, server.mcp_url).status == 200
        clock.advance(61)
        assert call(auth, send, server.mcp_url).status == 200
        assert server.paths()[-3:] == ["/mcp", "/token", "/mcp"]
        assert len(authorize.urls) == 1


def test_client_credentials_with_private_key_jwt_over_real_sockets() -> None:
    key = jose.ECPrivateKey.generate()
    with OAuthTestServer() as server:
        server.add_client("svc", auth_method="private_key_jwt", public_key=key.public_key)
        auth = ClientCredentials(client_id="svc", private_key=key)
        response = call(auth, lambda r: send_with_http_client(r, timeout=SOCKET_TIMEOUT), server.mcp_url)
    assert response.status == 200


@pytest.mark.parametrize("port_taken", [False, True], ids=["port free", "port taken"])
def test_a_later_process_listens_on_the_registered_port_and_does_not_register_again(port_taken: bool) -> None:
    # Each command-line run is a new process with a new BrowserAuthorizer: it must take the port the
    # stored registration names, or every run would register one more client at the authorization server.
    # When something else holds that port, it signs in on another one and registers again.
    def send(request: HTTPRequest) -> HTTPResponse:
        return send_with_http_client(request, timeout=SOCKET_TIMEOUT)

    browsers: List[Background] = []

    def browser(url: str) -> bool:  # consents at once: follows the 302 to the loopback listener
        location = follow_authorization_redirect(send)(url)
        browsers.append(Background(get, location))
        return True

    with OAuthTestServer() as server:
        stored = MemoryTokenStorage()
        first = BrowserAuthorizer(open_browser=browser, timeout=THREAD_TIMEOUT)
        assert call(OAuth(storage=stored, authorize=first), send, server.mcp_url).status == 200
        registered_uri = first.redirect_uri
        first.close()
        # The next process: the same registration on disk, but no tokens (as after they expired).
        later = MemoryTokenStorage()
        later.set_client(server.issuer, stored.get_client(server.issuer))
        squatter = socket.socket()
        if port_taken:
            squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # the first sign-in's is in TIME_WAIT
            squatter.bind(("127.0.0.1", int(registered_uri.split(":")[2].split("/")[0])))
            squatter.listen()
        with squatter:
            second = BrowserAuthorizer(open_browser=browser, timeout=THREAD_TIMEOUT)
            assert call(OAuth(storage=later, authorize=second), send, server.mcp_url).status == 200
            assert (second.redirect_uri == registered_uri) is not port_taken
            second.close()
        assert server.paths().count("/register") == (2 if port_taken else 1)
        assert server.paths().count("/authorize") == 2
    for opened in browsers:
        opened.join(THREAD_TIMEOUT)
