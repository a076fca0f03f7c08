"""Authorization over real sockets: ``Client(url, auth=OAuth(...))`` against mcplite's own HTTP server
protected by `BearerAuth`, with tests/oauth_server.py as the authorization server; the server side's
challenges and metadata documents on the wire; the HTTP client closing auth flows whatever happens; the
command line's ``--auth``."""

import contextlib
import json
import os
import socket
import stat
import subprocess
import sys
import threading
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest

from mcplite import Client, Context, HTTPError, Server
from mcplite.transports.http_client import streamable
from mcplite.cli import main as cli_main
from mcplite.errors import AuthError
from mcplite.transports.http_messages import AuthFlow, HTTPRequest, HTTPResponse
from mcplite.http_server import HTTPServerThread
from mcplite.oauth import BearerAuth, FileTokenStorage, MemoryTokenStorage, OAuth
from mcplite.oauth.advanced import parse_bearer_challenge, protected_resource_metadata_path, send_with_http_client
from oauth_server import (  # tests/ is on sys.path under pytest's default import mode
    Clock, CountingAuthorize, OAuthTestServer, follow_authorization_redirect,
)
from support import ROOT, WAIT, Background
from support.http import serving

REDIRECT_URI = "http://127.0.0.1:8976/callback"  # registered, never contacted: the 302 is read, not followed


def send(request: HTTPRequest) -> HTTPResponse:
    return send_with_http_client(request, timeout=WAIT)


def whoami_server() -> Server:
    server = Server("protected")

    @server.tool
    def whoami(ctx: Context) -> Dict[str, Any]:
        """Who the bearer token says the caller is."""
        return {"client_id": ctx.auth["client_id"], "scope": ctx.auth["scope"]}

    return server


class Deployment:
    """The authorization server, and mcplite's HTTP server protected by `BearerAuth` (tokens checked by
    asking the authorization server, as RFC 7662 introspection would)."""

    def __init__(self, authorization_server: OAuthTestServer, http: HTTPServerThread, bearer: BearerAuth) -> None:
        self.authorization_server = authorization_server
        self.http = http
        self.bearer = bearer
        self.url = http.url

    def oauth(self, **options: Any) -> OAuth:
        options.setdefault("authorize", CountingAuthorize(follow_authorization_redirect(send)))
        options.setdefault("redirect_uri", REDIRECT_URI)
        options.setdefault("clock", self.authorization_server.clock)
        return OAuth(**options)


@contextlib.contextmanager
def deployment(clock: Optional[Clock] = None, record: Optional[str] = None) -> Iterator[Deployment]:
    clock = clock or Clock()
    with OAuthTestServer(clock=clock) as authorization_server:
        http = HTTPServerThread(whoami_server(), record=record)  # bound now, so its URL (the resource) is known
        authorization_server.resource = http.url
        bearer = BearerAuth(
            authorization_server.introspect, resource=http.url, authorization_servers=[authorization_server.issuer],
            required_scopes=["mcp:read"], scopes_supported=["mcp:read", "mcp:write"], clock=clock,
        )
        # The URL is only known once the socket is bound: install the hook and its routes before serving.
        http.app.authenticate = bearer
        http.app.extra_routes.update(bearer.well_known_routes())
        with http:
            yield Deployment(authorization_server, http, bearer)


def post_initialize(url: str, headers: Optional[Dict[str, str]] = None) -> HTTPResponse:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
    request_headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                       **(headers or {})}
    return send(HTTPRequest("POST", url, request_headers, body.encode()))


# ---- the client, end to end ---------------------------------------------------------------------------

def test_a_client_signs_in_and_the_handler_sees_the_token_claims() -> None:
    with deployment() as site:
        auth = site.oauth()
        with Client(site.url, auth=auth, timeout=WAIT) as client:
            result = client.call_tool("whoami")
            client.list_tools()  # the same token again, no new sign-in
        paths = site.authorization_server.paths()
    assert result["structuredContent"] == {"client_id": "client-1", "scope": "mcp:read"}
    assert paths == ["/.well-known/oauth-authorization-server", "/register", "/authorize", "/token"]
    assert len(auth.authorize.urls) == 1  # type: ignore[attr-defined]


def test_step_up_when_the_server_comes_to_require_more_scope() -> None:
    with deployment() as site:
        auth = site.oauth()
        with Client(site.url, auth=auth, timeout=WAIT) as client:
            client.call_tool("whoami")
            site.bearer.required_scopes = ["mcp:read", "mcp:write"]
            result = client.call_tool("whoami")
    assert result["structuredContent"]["scope"] == "mcp:read mcp:write"
    assert auth.authorize.scopes() == ["mcp:read", "mcp:read mcp:write"]  # type: ignore[attr-defined]


def test_an_expired_token_is_refreshed_without_signing_in_again() -> None:
    clock = Clock()
    with deployment(clock) as site:
        site.authorization_server.token_lifetime = 60
        auth = site.oauth()
        with Client(site.url, auth=auth, timeout=WAIT) as client:
            client.call_tool("whoami")
            clock.advance(61)
            client.call_tool("whoami")
        paths = site.authorization_server.paths()
    assert paths.count("/authorize") == 1 and paths.count("/token") == 2


def test_tokens_kept_in_a_file_serve_the_next_client(tmp_path: Any) -> None:
    storage = FileTokenStorage(tmp_path / "tokens.json")
    with deployment() as site:
        with Client(site.url, auth=site.oauth(storage=storage), timeout=WAIT) as client:
            client.call_tool("whoami")
        later = site.oauth(storage=storage)
        with Client(site.url, auth=later, timeout=WAIT) as client:
            client.call_tool("whoami")
    assert later.authorize.urls == []  # type: ignore[attr-defined]


def test_a_refused_sign_in_fails_connect_with_auth_error() -> None:
    with deployment() as site:
        site.authorization_server.iss_in_redirect = "wrong"  # a mix-up attack: the client must refuse
        with pytest.raises(AuthError, match="issuer"):
            Client(site.url, auth=site.oauth(), timeout=WAIT).connect()


def test_auth_is_not_imported_unless_used() -> None:
    script = ("import sys, mcplite, mcplite.client; mcplite.Client('http://127.0.0.1:9/mcp'); "
              "print(sorted(m for m in sys.modules if m.startswith('mcplite.oauth') or m == 'mcplite.jose'))")
    completed = subprocess.run([sys.executable, "-c", script], cwd=str(ROOT), capture_output=True, text=True,
                               timeout=WAIT * 3)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "[]"


# ---- the server side on the wire ----------------------------------------------------------------------

def test_a_request_without_a_token_gets_the_challenge_and_the_metadata_url() -> None:
    with deployment() as site:
        response = post_initialize(site.url)
    assert response.status == 401
    challenge = parse_bearer_challenge(response.headers["www-authenticate"])
    assert challenge is not None and challenge.error is None  # RFC 6750 §3.1: no credentials, no error code
    assert challenge.scope == "mcp:read"
    assert challenge.resource_metadata == site.url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")
    assert json.loads(response.body)["error"]["message"].startswith("Unauthorized")


@pytest.mark.parametrize("authorization", ["Bearer nonsense", "Basic dXNlcjpwYXNz", "Bearer "])
def test_a_bad_or_foreign_credential_gets_401(authorization: str) -> None:
    with deployment() as site:
        response = post_initialize(site.url, {"Authorization": authorization})
    assert response.status == 401
    challenge = parse_bearer_challenge(response.headers["www-authenticate"])
    assert challenge is not None
    assert challenge.error == ("invalid_token" if authorization == "Bearer nonsense" else None)


def test_a_token_without_the_required_scope_gets_403_insufficient_scope() -> None:
    with deployment() as site:
        site.bearer.verify = lambda token: {"scope": "mcp:write", "aud": site.url}
        response = post_initialize(site.url, {"Authorization": "Bearer t"})
    assert response.status == 403
    challenge = parse_bearer_challenge(response.headers["www-authenticate"])
    assert challenge is not None and challenge.error == "insufficient_scope" and challenge.scope == "mcp:read"


@pytest.mark.parametrize("claims, status", [
    ({"scope": "mcp:read", "aud": "http://other.example/mcp"}, 401),   # issued for another server
    ({"scope": "mcp:read", "aud": ["x", "{url}"]}, 200),               # one of several audiences
    ({"scope": "mcp:read", "exp": 1_000.0}, 401),                      # expired (the clock is far later)
    ({"scope": ["mcp:read", "other"]}, 200),                           # scope as a list
])
def test_audience_expiry_and_scope_claims(claims: Dict[str, Any], status: int) -> None:
    with deployment() as site:
        if "aud" in claims and isinstance(claims["aud"], list):
            claims = {**claims, "aud": [a.format(url=site.url) for a in claims["aud"]]}
        site.bearer.verify = lambda token: claims
        response = post_initialize(site.url, {"Authorization": "Bearer t"})
    assert response.status == status


def test_protected_resource_metadata_is_served_without_a_token_at_both_well_known_paths() -> None:
    with deployment() as site:
        origin = site.url[: -len("/mcp")]
        documents = [send(HTTPRequest("GET", origin + path, {})) for path in (
            "/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource")]
        post = send(HTTPRequest("POST", origin + "/.well-known/oauth-protected-resource", {}, b"{}"))
    for document in documents:
        assert document.status == 200 and document.headers["content-type"] == "application/json"
        assert json.loads(document.body) == {
            "resource": site.url, "authorization_servers": [site.authorization_server.issuer],
            "scopes_supported": ["mcp:read", "mcp:write"], "bearer_methods_supported": ["header"],
        }
    assert post.status == 405 and post.headers["allow"] == "GET"


def test_extra_routes_are_answered_before_authenticate() -> None:
    def refuse_everyone(headers: Any) -> Any:
        raise AssertionError("authenticate must not run for an extra route")

    routes = {"/health": lambda request: (200, [("Content-Type", "text/plain")], b"ok " + request.method.encode())}
    with serving(Server("s"), authenticate=refuse_everyone, routes=routes) as http:
        response = send(HTTPRequest("GET", http.url.replace("/mcp", "/health/"), {}))
    assert (response.status, response.body) == (200, b"ok GET")


def test_bearer_auth_checks_its_arguments() -> None:
    with pytest.raises(ValueError, match="absolute"):
        BearerAuth(lambda token: {}, resource="/mcp", authorization_servers=["https://as.example"])
    with pytest.raises(ValueError, match="authorization server"):
        BearerAuth(lambda token: {}, resource="https://h.example/mcp", authorization_servers=[])
    bearer = BearerAuth(lambda token: {}, resource="HTTPS://H.example:443/", authorization_servers=["https://a"])
    assert bearer.resource == "https://h.example"
    assert list(bearer.well_known_routes()) == ["/.well-known/oauth-protected-resource"]
    assert protected_resource_metadata_path("https://h.example/a/mcp/") == "/.well-known/oauth-protected-resource/a/mcp"


# ---- the HTTP client always closes the flow ----------------------------------------------------------

class LockingAuth:
    """An ``auth`` whose flow holds a lock across its first yield, as `BaseOAuth` does while it refreshes.

    It keeps its flows: garbage collection would close a forgotten one and hide the leak, but only when
    nothing else (a traceback, say) still refers to it.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.closed = threading.Event()
        self.flows: List[AuthFlow] = []

    def auth_flow(self, request: HTTPRequest) -> AuthFlow:
        flow = self._flow(request)
        self.flows.append(flow)
        return flow

    def _flow(self, request: HTTPRequest) -> AuthFlow:
        if not self.lock.acquire(timeout=WAIT):  # a leaked flow holds it: fail rather than hang
            raise AssertionError("the lock is still held by a flow nobody closed")
        try:
            yield request
        finally:
            self.lock.release()
            self.closed.set()


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_the_flow_is_closed_when_the_request_cannot_be_sent() -> None:
    auth = LockingAuth()
    with pytest.raises(HTTPError):
        Client(f"http://127.0.0.1:{closed_port()}/mcp", auth=auth, timeout=WAIT).connect()
    assert auth.closed.is_set() and not auth.lock.locked()


def test_the_flow_is_closed_when_no_response_comes() -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(WAIT)

    def hang_up() -> None:
        with listener:
            connection, _ = listener.accept()
            with connection:
                connection.settimeout(WAIT)
                connection.recv(65536)  # the request arrives; the connection closes without an answer

    hanging_up = Background(hang_up)
    auth = LockingAuth()
    with pytest.raises(HTTPError, match="no response"):
        Client(f"http://127.0.0.1:{listener.getsockname()[1]}/mcp", auth=auth, timeout=WAIT,
               transport="streamable").connect()
    hanging_up.join()
    assert auth.closed.is_set() and not auth.lock.locked()


def test_the_flow_is_closed_when_no_reader_can_take_the_request(monkeypatch: Any) -> None:
    auth = LockingAuth()
    with serving(whoami_server()) as http, Client(http.url, auth=auth, timeout=WAIT) as client:
        def no_thread(*args: Any) -> None:
            raise RuntimeError("can't start new thread")

        monkeypatch.setattr(streamable.DaemonPool, "submit", no_thread)  # the reader threads
        with pytest.raises(RuntimeError, match="new thread"):
            client.list_tools()
        monkeypatch.undo()
        assert all(flow.gi_frame is None for flow in auth.flows)  # every flow ran to its end or was closed
        assert not auth.lock.locked()


def test_a_refresh_that_cannot_reach_the_authorization_server_releases_the_sign_in_lock() -> None:
    clock = Clock()
    with deployment(clock) as site:
        site.authorization_server.token_lifetime = 60
        auth = site.oauth()
        with Client(site.url, auth=auth, timeout=WAIT) as client:
            client.call_tool("whoami")
            site.authorization_server.close()  # the refresh will be refused
            clock.advance(61)
            with pytest.raises(HTTPError):
                client.call_tool("whoami")
            # Private, but it is exactly what leaked: a lock held by a flow nobody closed.
            assert auth._lock.acquire(timeout=WAIT)
            auth._lock.release()


# ---- the command line ---------------------------------------------------------------------------------

def run_cli(argv: List[str], capsys: Any) -> Tuple[int, str, str]:
    status = cli_main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_cli_auth_signs_in_once_and_keeps_the_tokens_in_the_users_config(
    tmp_path: Any, monkeypatch: Any, capsys: Any
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    opened: List[str] = []

    def browser(url: str) -> bool:
        """The user consents: the authorization server redirects the browser to the loopback listener."""
        opened.append(url)
        location = follow_authorization_redirect(send)(url)
        Background(send, HTTPRequest("GET", location, {}))
        return True

    monkeypatch.setattr("webbrowser.open", browser)
    with deployment() as site:
        first = run_cli(["--auth", "call", "whoami", "--", site.url], capsys)
        second = run_cli(["--auth", "call", "whoami", "--", site.url], capsys)
    assert first[0] == 0 and second[0] == 0, first[2] + second[2]
    assert json.loads(second[1])["structuredContent"]["scope"] == "mcp:read"
    assert len(opened) == 1
    token_file = tmp_path / "mcplite" / "tokens.json"
    assert stat.S_IMODE(os.stat(token_file).st_mode) == 0o600
    assert site.url in token_file.read_text()


def test_cli_auth_needs_an_http_server(capsys: Any) -> None:
    status, _, err = run_cli(["--auth", "ping", "--", sys.executable, "-c", "pass"], capsys)
    assert status == 2 and "--auth only applies to an http(s) server" in err


# ---- StaticTokenAuth, and serve's --auth-token-env / --authenticate -------------------------------------
def test_static_tokens_name_their_principal_and_refuse_everything_else() -> None:
    from mcplite.http_server import HTTPRefusal
    from mcplite.oauth import StaticTokenAuth

    ada, bob = "a" * 20, "b" * 20
    auth = StaticTokenAuth({ada: "ada", bob: "bob"})
    assert auth({"authorization": f"Bearer {ada}"}) == {"sub": "ada"}
    assert auth({"authorization": f"bearer  {bob} "}) == {"sub": "bob"}  # the scheme is case-insensitive
    assert StaticTokenAuth([ada, bob])({"authorization": f"Bearer {bob}"}) == {"sub": "client-2"}
    for headers in ({}, {"authorization": ""}, {"authorization": f"Basic {ada}"}, {"authorization": "Bearer " + ada[:-1]},
                    {"authorization": f"Bearer {ada}x"}, {"authorization": "Bearer \udcff" + ada}):
        with pytest.raises(HTTPRefusal) as refused:
            auth(headers)
        assert refused.value.status == 401
        assert dict(refused.value.headers)["WWW-Authenticate"].startswith("Bearer")
    for bad in ({}, ["short"], {"x" * 15: "p"}):
        with pytest.raises(ValueError):
            StaticTokenAuth(bad)


def test_serve_takes_a_token_from_the_environment_or_a_hook_of_yours(tmp_path: Any) -> None:
    from support.servers import Running, free_port

    hook = tmp_path / "hooks.py"
    hook.write_text("from mcplite.http_server import HTTPRefusal\n"
                    "def check(headers):\n"
                    "    if headers.get('x-team') != 'blue':\n"
                    "        raise HTTPRefusal(403, 'blue team only')\n"
                    "    return {'sub': 'blue'}\n"
                    "not_a_hook = 42\n")
    token = "t" * 32
    for options, good, bad in (
            (["--auth-token-env", "SERVE_TOKEN"], {"Authorization": f"Bearer {token}"}, (401, {})),
            (["--authenticate", f"{hook}:check"], {"X-Team": "blue"}, (403, {"X-Team": "red"}))):
        port = free_port()
        served = Running("serve", [sys.executable, "-m", "mcplite", "serve", "examples/demo_server.py", "--http",
                                   f"127.0.0.1:{port}", *options], tmp_path / "serve.log",
                         env={**os.environ, "PYTHONPATH": str(ROOT), "SERVE_TOKEN": token})
        try:
            served.wait_for_port(port)
            url = f"http://127.0.0.1:{port}/mcp"
            with pytest.raises(HTTPError) as refused:
                Client(url, headers=bad[1], timeout=WAIT).connect()
            assert refused.value.status == bad[0]
            with Client(url, headers=good, timeout=WAIT) as client:
                assert client.call_tool("add", {"a": 1, "b": 2})["structuredContent"] == {"result": 3}
        finally:
            served.stop()
    for spec, message in ((f"{hook}:not_a_hook", "not an authenticate hook"), (str(hook), "needs FILE_OR_MODULE:OBJECT"),
                          (f"{hook}:absent", "has no 'absent'")):
        done = subprocess.run([sys.executable, "-m", "mcplite", "serve", "examples/demo_server.py", "--http",
                               "127.0.0.1:0", "--authenticate", spec], cwd=ROOT, capture_output=True, text=True,
                              timeout=WAIT, env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert done.returncode == 2 and message in done.stderr, done.stderr
    short = subprocess.run([sys.executable, "-m", "mcplite", "serve", "examples/demo_server.py", "--http",
                            "127.0.0.1:0", "--auth-token-env", "SHORT"], cwd=ROOT, capture_output=True, text=True,
                           timeout=WAIT, env={**os.environ, "PYTHONPATH": str(ROOT), "SHORT": "abc"})
    assert short.returncode == 2 and "at least 16 characters" in short.stderr
    both = subprocess.run([sys.executable, "-m", "mcplite", "serve", "examples/demo_server.py", "--auth-token-env",
                           "SHORT"], cwd=ROOT, capture_output=True, text=True, timeout=WAIT)
    assert both.returncode == 2 and "need --http" in both.stderr


# ---- a recording of a signed-in session: no token in it ----------------------------------------------------
def test_a_recording_of_an_oauth_session_holds_no_token_and_replays(tmp_path: Any) -> None:
    """``record=`` on a client that signs in with OAuth (tokens from tests/oauth_server.py, refreshed once): the
    recording names the headers the client sent, with no access or refresh token anywhere in it, and it
    replays (`mcplite.replay.ReplayServer`) to the same results."""
    from mcplite.recording import read_recording
    from mcplite.replay import ReplayServer

    clock = Clock()
    path, server_path = tmp_path / "signed-in.jsonl", tmp_path / "server-side.jsonl"
    with deployment(clock, record=str(server_path)) as site:
        site.authorization_server.token_lifetime = 60
        auth = site.oauth(storage=MemoryTokenStorage())
        with Client(site.url, auth=auth, timeout=WAIT, record=str(path)) as client:
            first = client.call_tool("whoami")
            clock.advance(61)  # expired: the next request refreshes it
            second = client.call_tool("whoami")
        tokens = auth.storage.get_tokens(site.authorization_server.issuer, site.url)
        issued = list(site.authorization_server.access_tokens)  # every access token it gave out (two: refreshed)
    assert tokens is not None and tokens.access_token and tokens.refresh_token and len(issued) == 2
    for recording in (path, server_path):
        text = recording.read_text()
        for secret in {tokens.access_token, tokens.refresh_token, *issued}:
            assert secret not in text, recording.name
    # The server saw the Authorization header of every request: recorded, redacted.
    seen = [line["headers"] for line in read_recording(str(server_path)) if line.get("headers")]
    assert seen and all(headers.get("authorization") == "[redacted]" for headers in seen), seen[:2]
    assert first["structuredContent"] == second["structuredContent"]
    with Client(ReplayServer(str(path)), timeout=WAIT) as replayed:
        assert replayed.call_tool("whoami")["structuredContent"] == first["structuredContent"]
