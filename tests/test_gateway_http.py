"""HTTP upstreams behind the gateway: Streamable HTTP in both eras and legacy HTTP+SSE, with ``headers`` that reach
the upstream and never a client of the gateway; and the gateway served over HTTP with its own authentication.

Upstreams are mcplite servers on 127.0.0.1 (`HTTPServerThread`); every wait is bounded by WAIT.
"""

import json
import logging
from typing import Any, Dict, List

import pytest
from support import WAIT, wait_until
from support.http import serving

from mcplite import Client, Context, Gateway, RemoteError, Server
from mcplite.http_server import HTTPRefusal
from mcplite.protocol.versions import ENVELOPE_VERSIONS, HANDSHAKE_VERSIONS

SECRET = "s3cr3t-upstream-key-4711"
FRONTS = {"handshake": "2025-11-25", "envelope": ENVELOPE_VERSIONS[0]}


def keyed_server(era: str, seen: List[str]) -> Server:
    """An upstream whose tool says whether its request carried the key, and asks the model a question."""
    server = Server("keyed", supported_versions=HANDSHAKE_VERSIONS if era != "envelope" else ENVELOPE_VERSIONS)

    @server.tool
    def add(a: int, b: int, ctx: Context) -> int:
        seen.append(ctx.transport_info.get("headers", {}).get("x-api-key", ""))
        ctx.info(f"adding {a} and {b}")
        return a + b

    @server.tool
    def ask_model(prompt: str, ctx: Context) -> str:
        return str(ctx.sample(prompt, max_tokens=10)["content"]["text"])

    @server.tool
    def fail() -> str:
        raise ValueError("this tool fails")

    return server


def check_key(headers: Dict[str, str]) -> Dict[str, Any]:
    if headers.get("x-api-key") != SECRET:
        raise HTTPRefusal(401, "a key is needed")
    return {"sub": "gateway"}


def answer(params: Dict[str, Any]) -> Dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "pong"}, "model": "m"}


def everything_the_front_saw(client: Client, logs: List[Any]) -> str:
    seen: List[Any] = [client.list_tools(), client.list_resources(), client.list_prompts(), logs,
                       client.server_info, client.server_capabilities]
    return json.dumps(seen, default=repr)


@pytest.mark.parametrize("era, transport", [("handshake", "http"), ("envelope", "http"), ("legacy", "sse")])
def test_an_http_upstream_gets_its_headers_and_the_front_never_sees_them(era: str, transport: str,
                                                                         caplog: Any) -> None:
    caplog.set_level(logging.DEBUG, logger="mcplite")
    seen: List[str] = []
    upstream = keyed_server(era, seen)
    if era == "legacy":
        upstream.supported_versions = ("2024-11-05",)
    logs: List[Any] = []
    with serving(upstream, authenticate=check_key) as http:
        url = http.url if transport == "http" else http.url.replace("/mcp", "/sse")
        entry = {"type": transport, "url": url, "headers": {"X-Api-Key": "${KEY}"}}
        wrong = {"type": transport, "url": url, "headers": {"X-Api-Key": "wrong-" + SECRET}, "prefix": "w_"}
        config = {"servers": {"keyed": entry, "refused": wrong}}  # (VS Code's shape: "type")
        with Gateway(config, environ={"KEY": SECRET}, restart_delay=WAIT) as gateway, \
                Client(gateway, protocol_version=FRONTS["handshake"], sampling=answer, on_log=logs.append) as client:
            client.set_logging_level("debug")
            rows = {row["name"]: row for row in gateway.status()}
            assert rows["keyed"]["state"] == "up" and rows["keyed"]["transport"] == transport
            assert rows["keyed"]["revision"] == (FRONTS[era] if era != "legacy" else "2024-11-05")
            assert rows["refused"]["state"] == "down" and "401" in rows["refused"]["error"]
            # (2024-11-05 has no structured results: the front tool then declares no outputSchema either)
            assert client.call_tool("keyed_add", {"a": 2, "b": 3})["content"][0]["text"] == "5"
            assert seen == [SECRET]  # the upstream saw the key
            assert client.call_tool("keyed_ask_model", {"prompt": "ping"})["content"][0]["text"] == "pong"
            failed = client.call_tool("keyed_fail")
            assert failed.get("isError") is True
            with pytest.raises(RemoteError) as refused:
                client.call_tool("w_add", {"a": 1, "b": 1})
            wait_until(lambda: logs)
            shown = everything_the_front_saw(client, logs) + json.dumps([failed, str(refused.value), rows])
            assert SECRET not in shown  # ... and no client of the gateway ever does
            assert "adding 2 and 3" in shown
            assert SECRET not in repr(gateway.config.upstreams)
    assert SECRET not in caplog.text  # nor its log


def test_the_gateway_over_http_with_its_own_authentication() -> None:
    """`Gateway` served with an ``authenticate`` hook of its own (docs/gateway.md has the same thing as a
    program; the command line's ``--auth-token-env`` is tested below)."""
    seen: List[str] = []
    with serving(keyed_server("handshake", seen), authenticate=check_key) as upstream_http, \
            Gateway({"mcpServers": {"keyed": {"url": upstream_http.url, "headers": {"X-Api-Key": SECRET}}}}) \
            as gateway, serving(gateway, authenticate=lambda headers: (
                {"sub": "ada"} if headers.get("authorization") == "Bearer front-token"
                else (_ for _ in ()).throw(HTTPRefusal(401, "sign in")))) as front:
        from mcplite.errors import HTTPError

        with pytest.raises(HTTPError) as refused:
            Client(front.url, timeout=WAIT).connect()
        assert refused.value.status == 401
        with Client(front.url, headers={"Authorization": "Bearer front-token"}, timeout=WAIT) as client:
            assert client.call_tool("keyed_add", {"a": 1, "b": 2})["structuredContent"] == {"result": 3}


# ---- an OAuth upstream: the client's sign-in and its token file, never shown to the front --------------------
def test_an_oauth_upstream_signs_in_once_and_its_token_stays_in_the_gateway(tmp_path: Any, monkeypatch: Any) -> None:
    """``"auth": "oauth"``: the gateway signs in with the user's browser the first time (the OAuth client, its
    token file under $XDG_CONFIG_HOME), and a second gateway reuses the tokens with no browser at all."""
    from oauth_server import OAuthTestServer, follow_authorization_redirect  # tests/ is on sys.path
    from support import Background

    from mcplite.oauth import BearerAuth
    from mcplite.oauth.advanced import send_with_http_client
    from mcplite.transports.http_messages import HTTPRequest

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))

    def send(request: HTTPRequest) -> Any:
        return send_with_http_client(request, timeout=WAIT)

    opened: List[str] = []

    def browser(url: str) -> bool:
        """The user consents: the authorization server redirects the browser to the loopback listener."""
        opened.append(url)
        Background(send, HTTPRequest("GET", follow_authorization_redirect(send)(url), {}))
        return True

    monkeypatch.setattr("webbrowser.open", browser)
    server = Server("protected")
    tokens_seen: List[str] = []

    @server.tool
    def whoami(ctx: Context) -> str:
        tokens_seen.append(ctx.transport_info.get("headers", {}).get("authorization", ""))
        return str(ctx.auth["client_id"])

    with OAuthTestServer() as authorization_server, serving(server) as upstream_http:
        authorization_server.resource = upstream_http.url
        bearer = BearerAuth(authorization_server.introspect, resource=upstream_http.url,
                            authorization_servers=[authorization_server.issuer], required_scopes=["mcp:read"])
        upstream_http.app.authenticate = bearer
        upstream_http.app.extra_routes.update(bearer.well_known_routes())
        config = {"mcpServers": {"private": {"url": upstream_http.url, "auth": "oauth"}}}
        for attempt in range(2):
            with Gateway(config) as gateway, Client(gateway, timeout=WAIT) as client:
                assert gateway.upstreams["private"].state == "up", gateway.status()
                result = client.call_tool("private_whoami")
                assert result["content"][0]["text"] == "client-1"
                shown = json.dumps([result, client.list_tools(), client.server_info, gateway.status()])
        assert len(opened) == 1  # the second gateway used the token file
    token_file = tmp_path / "mcplite" / "tokens.json"
    assert upstream_http.url in token_file.read_text()
    token = tokens_seen[-1].split()[-1]
    assert tokens_seen[-1].startswith("Bearer ") and len(token) > 10
    assert token not in shown


# ---- the command line: gateway --http with --auth-token-env and --access-log ---------------------------------
def test_gateway_http_from_the_command_line_with_a_token_and_an_access_log(tmp_path: Any) -> None:
    import os
    import subprocess
    import sys

    from support import ROOT
    from support.servers import Running, free_port

    from mcplite.errors import HTTPError

    path = tmp_path / "gw.json"
    path.write_text(json.dumps({"mcpServers": {"demo": {"command": sys.executable,
                                                        "args": ["-m", "examples.demo_server"], "cwd": str(ROOT)}}}))
    token = "gw-token-" + "x" * 24
    port = free_port()
    gateway = Running("gateway", [sys.executable, "-m", "mcplite", "gateway", str(path), "--http",
                                  f"127.0.0.1:{port}", "--auth-token-env", "GW_TOKEN", "--access-log"],
                      tmp_path / "gateway.log", env={**os.environ, "PYTHONPATH": str(ROOT), "GW_TOKEN": token})
    try:
        gateway.wait_for_port(port)
        url = f"http://127.0.0.1:{port}/mcp"
        for wrong in ({}, {"Authorization": "Bearer " + token[:-1]}):
            with pytest.raises(HTTPError) as refused:
                Client(url, headers=wrong, timeout=WAIT).connect()
            assert refused.value.status == 401
        with Client(url, headers={"Authorization": f"Bearer {token}"}, timeout=WAIT) as client:
            assert client.call_tool("demo_add", {"a": 2, "b": 3})["structuredContent"] == {"result": 5}
    finally:
        gateway.stop()
    log = gateway.output()
    assert '"POST /mcp" 401' in log and '"POST /mcp" 200' in log, log
    assert token not in log
    unset = subprocess.run([sys.executable, "-m", "mcplite", "gateway", str(path), "--http", "127.0.0.1:0",
                            "--auth-token-env", "NO_SUCH_VARIABLE_HERE"], cwd=ROOT, capture_output=True, text=True,
                           timeout=WAIT)
    assert unset.returncode == 2 and "NO_SUCH_VARIABLE_HERE is not set" in unset.stderr
