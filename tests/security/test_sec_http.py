"""HTTP server hardening: DNS rebinding on a public bind, exception text in errors, silent connections, ids read
from bytes that are not UTF-8, ``%2F`` in a simple URI-template variable, and the HTTP/1.1 grammar that already held.

Every server is real (127.0.0.1, or 0.0.0.0 reached through 127.0.0.1 with the ``Host`` a LAN client would send),
and every peer a raw socket, an HTTP connection or a subprocess.
"""

import json
import logging
import re
import socket
import subprocess
import sys
import time
from typing import Any, Dict, Iterator, List, Optional

import pytest

from mcplite import Client, Server
from mcplite.errors import RemoteError, RPCError
from mcplite.http_server import HTTPServerThread
from support import ROOT, WAIT
from support.raw_http import exchange_until_closed

ERROR_ID = re.compile(r"Internal error \(error id ([0-9a-f]{12})\)")
PING = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
SECRET = "hunter2-at-/srv/secret/db.sqlite"


def make_server() -> Server:
    server = Server("hardening")
    read: List[str] = []
    server.read_names = read  # type: ignore[attr-defined]

    @server.tool
    def explode() -> str:
        raise ValueError(SECRET)

    @server.tool
    def refuse() -> str:
        raise RPCError(-32050, "refused on purpose: quota")

    @server.resource("doc:///docs/{name}")
    def doc(name: str) -> str:
        read.append(name)
        return f"doc {name}"

    @server.resource("tree:///{+path}")
    def tree(path: str) -> str:
        return f"path {path}"

    @server.resource("broken://{name}")
    def broken(name: str) -> str:
        raise OSError(SECRET)

    return server


def post(http: Any, body: bytes, host: Optional[str] = None, **headers: str) -> Any:
    """One stateless POST over a fresh connection to ``http`` (``host``, ``port``): (status, JSON body)."""
    from http.client import HTTPConnection

    conn = HTTPConnection("127.0.0.1", http.port, timeout=WAIT)
    try:
        fields = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                  "MCP-Protocol-Version": "2025-11-25", "Host": host or f"127.0.0.1:{http.port}", **headers}
        conn.request("POST", "/mcp", body, {name.replace("_", "-"): value for name, value in fields.items()})
        response = conn.getresponse()
        data = response.read()
        return response.status, (json.loads(data) if data else None)
    finally:
        conn.close()


@pytest.fixture
def loopback() -> Iterator[HTTPServerThread]:
    with HTTPServerThread(make_server(), "127.0.0.1:0", stateless=True) as http:
        yield http


# ---- 1. DNS rebinding ----------------------------------------------------------------------------------------
def test_a_public_bind_without_allowed_hosts_refuses_to_start() -> None:
    with pytest.raises(ValueError) as refused:
        HTTPServerThread(make_server(), "0.0.0.0:0")
    assert "allowed_hosts" in str(refused.value) and "--allow-host" in str(refused.value)
    assert "'*'" in str(refused.value)  # the documented way out


def test_allowed_hosts_star_opts_out_of_the_host_check_but_not_of_the_origin_check() -> None:
    with HTTPServerThread(make_server(), "0.0.0.0:0", stateless=True, allowed_hosts=["*"]) as http:
        assert post(http, PING, host="anything.example:1")[0] == 200
        # A rebinding page sends its own name as Host and Origin: that pair proves nothing.
        assert post(http, PING, host="evil.example.com", Origin="http://evil.example.com")[0] == 403
        # Nor does a loopback origin, on a server others can reach.
        assert post(http, PING, Origin="http://localhost:6274")[0] == 403


def test_origin_equal_to_host_is_refused_on_a_lan_server_unless_listed() -> None:
    with HTTPServerThread(make_server(), "0.0.0.0:0", stateless=True, allowed_hosts=["mcp.lan"]) as http:
        own = f"mcp.lan:{http.port}"
        assert post(http, PING, host=own)[0] == 200  # a client that is not a browser sends no Origin
        assert post(http, PING, host=own, Origin=f"http://{own}")[0] == 403
        assert post(http, PING, host="evil.example.com")[0] == 403
    with HTTPServerThread(make_server(), "0.0.0.0:0", stateless=True, allowed_hosts=["mcp.lan"],
                          allowed_origins=["http://app.lan"]) as http:
        assert post(http, PING, host="mcp.lan", Origin="http://app.lan")[0] == 200


def test_a_loopback_server_keeps_its_browser_clients_and_refuses_a_rebinding_page() -> None:
    with HTTPServerThread(make_server(), "127.0.0.1:0", stateless=True) as http:
        assert post(http, PING, Origin="http://localhost:6274")[0] == 200  # the Inspector, say
        assert post(http, PING, Origin=f"http://127.0.0.1:{http.port}")[0] == 200
        assert post(http, PING, Origin="http://[::1]:3000")[0] == 200
        assert post(http, PING, host="evil.example.com", Origin="http://evil.example.com")[0] == 403
        assert post(http, PING, Origin="http://[::1")[0] == 403  # malformed: refused, not a 500
    # Even with the Host check off on loopback, a rebinding page's Origin is not a loopback one.
    with HTTPServerThread(make_server(), "127.0.0.1:0", stateless=True, allowed_hosts=["*"]) as http:
        assert post(http, PING, host=f"evil.example.com:{http.port}",
                    Origin=f"http://evil.example.com:{http.port}")[0] == 403
        assert post(http, PING, host=f"evil.example.com:{http.port}")[0] == 200  # the opt-out
    # A loopback server behind a proxy that names it: still on loopback, so loopback origins still pass.
    with HTTPServerThread(make_server(), "127.0.0.1:0", stateless=True, allowed_hosts=["mcp.example"]) as http:
        assert post(http, PING, host="mcp.example", Origin="http://localhost:5173")[0] == 200
        assert post(http, PING, host="mcp.example", Origin="http://mcp.example")[0] == 403


def test_wsgi_requires_allowed_hosts_when_built() -> None:
    with pytest.raises(ValueError) as refused:
        make_server().wsgi_app(stateless=True)
    assert "allowed_hosts" in str(refused.value) and "WSGI" in str(refused.value)
    assert make_server().wsgi_app(stateless=True, allowed_hosts=["*"]) is not None
    # Loopback names only: the app is on loopback, so a loopback origin passes; a lookalike does not.
    app = make_server().wsgi_app(stateless=True, allowed_hosts=["localhost", "127.0.0.1"])
    assert app.http.guard.on_loopback
    assert not make_server().wsgi_app(stateless=True, allowed_hosts=["mcp.example"]).http.guard.on_loopback


def serve_cli(*words: str) -> "subprocess.Popen[str]":
    return subprocess.Popen([sys.executable, "-m", "mcplite", "serve", "examples/demo_server.py", *words],
                            cwd=str(ROOT), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def test_the_command_line_refuses_a_public_address_without_allow_host() -> None:
    process = serve_cli("--http", "0.0.0.0:0")
    try:
        _, err = process.communicate(timeout=WAIT)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 2 and "--allow-host" in err and "allowed_hosts" in err


def test_the_command_line_serves_a_public_address_with_allow_host() -> None:
    process = serve_cli("--http", "0.0.0.0:0", "--allow-host", "mcp.lan")
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        assert "serving" in line, line
        port = int(re.search(r":(\d+)/mcp", line).group(1))  # type: ignore[union-attr]
        target = type("Address", (), {"port": port})()
        assert post(target, PING, host="mcp.lan")[0] in (200, 400)  # reached: not refused by Host
        assert post(target, PING, host="evil.example.com")[0] == 403
    finally:
        process.terminate()
        process.communicate(timeout=WAIT)


# ---- 2. no exception text in a 500 or a -32603 ----------------------------------------------------------------
def test_a_500_carries_an_error_id_that_the_log_line_carries_too(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR, logger="mcplite")

    def authenticate(headers: Any) -> Any:
        raise RuntimeError(SECRET)  # a hook's bug: not an HTTPRefusal

    with HTTPServerThread(make_server(), "127.0.0.1:0", stateless=True, authenticate=authenticate) as http:
        status, body = post(http, PING)
    assert status == 500 and SECRET not in json.dumps(body)
    error_id = ERROR_ID.fullmatch(body["error"]["message"]).group(1)  # type: ignore[union-attr]
    logged = [r for r in caplog.records if error_id in r.getMessage()]
    assert logged and logged[0].exc_info is not None and SECRET in str(logged[0].exc_info[1])


def test_an_unexpected_handler_failure_answers_an_error_id_not_its_text(loopback: HTTPServerThread,
                                                                       caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR, logger="mcplite")
    with Client(loopback.url, timeout=WAIT) as client:
        with pytest.raises(RemoteError) as failed:
            client.read_resource("broken://x")
        assert failed.value.code == -32603 and SECRET not in failed.value.message
        error_id = ERROR_ID.fullmatch(failed.value.message).group(1)  # type: ignore[union-attr]
        assert any(error_id in r.getMessage() and r.exc_info for r in caplog.records)
        # What stays: an RPCError raised on purpose keeps its words, and a tool's exception is its isError result.
        with pytest.raises(RemoteError) as chosen:
            client.call_tool("refuse")
        assert (chosen.value.code, chosen.value.message) == (-32050, "refused on purpose: quota")
        result = client.call_tool("explode")
        assert result["isError"] and SECRET in result["content"][0]["text"]


# ---- 3. a connection that sends no request line --------------------------------------------------------------
def closed_after(sock: socket.socket) -> float:
    """Seconds until the server closes ``sock`` (reading and dropping what it sends); fails after WAIT."""
    start = time.monotonic()
    sock.settimeout(WAIT)
    while sock.recv(65536):
        pass
    return time.monotonic() - start


def test_the_head_timeout_is_short_by_default_and_distinct_from_keep_alive() -> None:
    with HTTPServerThread(make_server(), "127.0.0.1:0") as http:
        assert http._httpd.header_timeout == 10.0 and http._httpd.keepalive_timeout == 30.0


def test_a_silent_connection_is_closed_at_the_head_timeout_but_an_idle_keep_alive_one_is_not() -> None:
    with HTTPServerThread(make_server(), "127.0.0.1:0", stateless=True, header_timeout=0.5,
                          keepalive_timeout=WAIT) as http:
        with socket.create_connection(("127.0.0.1", http.port), timeout=WAIT) as silent:
            assert closed_after(silent) < 0.5 + 2.0
        with socket.create_connection(("127.0.0.1", http.port), timeout=WAIT) as trickle:
            trickle.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and never the rest of its head
            assert closed_after(trickle) < 0.5 + 2.0
        request = (b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                   b"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\n"
                   b"Content-Length: %d\r\n\r\n%b" % (len(PING), PING))
        with socket.create_connection(("127.0.0.1", http.port), timeout=WAIT) as kept:
            for _ in range(2):  # idle between them for longer than the head timeout: keep-alive's own timeout
                kept.sendall(request)
                reply = kept.recv(65536)
                assert reply.startswith(b"HTTP/1.1 200 "), reply
                time.sleep(1.0)  # (the idle time under test, not a wait for a message)


# ---- 4. an id in bytes that are not UTF-8 ---------------------------------------------------------------------
BAD_ID = b'{"jsonrpc":"2.0","id":"a\xffb","method":"ping"}'
GOOD_ID_BAD_PARAMS = b'{"jsonrpc":"2.0","id":"k\xc3\xa9y","method":"ping","params":{"x":"\xff"}}'


def test_stdio_answers_an_id_it_cannot_read_exactly_with_null() -> None:
    process = subprocess.Popen([sys.executable, "-m", "mcplite", "serve", "examples/demo_server.py"],
                               cwd=str(ROOT), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL)
    try:
        out, _ = process.communicate(BAD_ID + b"\n" + GOOD_ID_BAD_PARAMS + b"\n", timeout=WAIT)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    answers = [json.loads(line) for line in out.splitlines()]
    assert [(a["id"], a["error"]["code"]) for a in answers] == [(None, -32700), ("k\u00e9y", -32700)]


def test_http_answers_an_id_it_cannot_read_exactly_with_null(loopback: HTTPServerThread) -> None:
    status, body = post(loopback, BAD_ID)
    assert status == 400 and body["id"] is None and body["error"]["code"] == -32700
    status, body = post(loopback, GOOD_ID_BAD_PARAMS)
    assert status == 400 and body["id"] == "k\u00e9y"


# ---- 5. a simple URI-template variable never holds "/" ----------------------------------------------------------
def test_a_simple_template_variable_does_not_match_an_encoded_slash() -> None:
    server = make_server()
    with HTTPServerThread(server, "127.0.0.1:0", stateless=True) as http, Client(http.url, timeout=WAIT) as client:
        for uri in ("doc:///docs/..%2F..%2Fetc%2Fpasswd", "doc:///docs/..%2f..%2fetc%2fpasswd",
                    "doc:///docs/../../etc/passwd"):
            with pytest.raises(RemoteError):
                client.read_resource(uri)
        assert client.read_resource("doc:///docs/a%20b")["contents"][0]["text"] == "doc a b"
        # Reserved expansion keeps RFC 6570's meaning: "/" is allowed, and %2F decodes to it.
        assert client.read_resource("tree:///a/b%2Fc")["contents"][0]["text"] == "path a/b/c"
    assert server.read_names == ["a b"]  # type: ignore[attr-defined]


# ---- 6. protections that already held (they pass on the old code too) ------------------------------------------
def raw(*fields: bytes, line: bytes = b"POST /mcp HTTP/1.1", body: bytes = b"") -> bytes:
    head = (b"Host: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
            b"MCP-Protocol-Version: 2025-11-25\r\n")
    return line + b"\r\n" + head + b"".join(field + b"\r\n" for field in fields) + b"\r\n" + body


def status_of(reply: bytes) -> int:
    return int(reply.split(b" ", 2)[1])


@pytest.fixture
def small() -> Iterator[HTTPServerThread]:
    with HTTPServerThread(make_server(), "127.0.0.1:0", stateless=True, max_body_size=1024) as http:
        yield http


SMUGGLED = b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


@pytest.mark.parametrize("request_bytes, status", [
    (raw(b"X-Big: " + b"a" * 70000), 431),
    (raw(*[b"X-%d: 1" % n for n in range(150)]), 431),
    (raw(b"Content-Length: 2048", body=b"x" * 2048), 413),
    (raw(b"Transfer-Encoding: chunked", body=b"800\r\n" + b"x" * 2048 + b"\r\n0\r\n\r\n"), 413),
    (raw(b"Transfer-Encoding: chunked", body=b"0x5\r\nhello\r\n0\r\n\r\n"), 400),
    (raw(b"Transfer-Encoding: chunked", body=b"+5\r\nhello\r\n0\r\n\r\n"), 400),
    (raw(b"Transfer-Encoding: chunked", body=b"5 \r\nhello\r\n0\r\n\r\n"), 400),
    (raw(b"Transfer-Encoding: chunked", body=b"5\nhello\r\n0\r\n\r\n"), 400),
    (raw(b"Transfer-Encoding: chunked", body=b"f" * 20 + b"\r\n"), 413),
    (raw(b"Transfer-Encoding: chunked", b"Content-Length: 5", body=b"0\r\n\r\n" + SMUGGLED), 400),
    (raw(b"Content-Length: 5", b"Content-Length: 6", body=b"hello!" + SMUGGLED), 400),
    (raw(b"Content-Length: +5", body=b"hello" + SMUGGLED), 400),
    (raw(b"Transfer-Encoding: chunked, identity", body=b"0\r\n\r\n" + SMUGGLED), 400),
    (raw(b"Transfer-Encoding: xchunked", body=b"0\r\n\r\n" + SMUGGLED), 400),
    (raw(b"Transfer-Encoding : chunked", body=b"0\r\n\r\n" + SMUGGLED), 400),
    (raw(b"X-Folded: a", b" b", b"Content-Length: 0", body=SMUGGLED), 400),
    (raw(b"Host: second.example", body=SMUGGLED), 400),
    (raw(line=b"POST  /mcp HTTP/1.1", body=SMUGGLED), 400),
    (raw(line=b"POST /mcp HTTP/2.0"), 505),
    (raw(b"X-Bare: a\rb", body=SMUGGLED), 400),
])
def test_the_http_grammar_and_limits_hold(small: HTTPServerThread, request_bytes: bytes, status: int) -> None:
    reply = exchange_until_closed(small, request_bytes)
    assert status_of(reply) == status, reply[:200]
    assert reply.count(b"HTTP/1.1 ") == 1  # nothing smuggled behind it was served, and the connection closed


def test_the_loopback_host_allow_list_holds(small: HTTPServerThread) -> None:
    assert post(small, PING)[0] == 200
    assert post(small, PING, host="localhost")[0] == 200
    assert post(small, PING, host="evil.example.com")[0] == 403
    assert post(small, PING, host=f"evil.example.com:{small.port}")[0] == 403
    assert post(small, PING, host="127.0.0.1.evil.example.com")[0] == 403


def test_the_body_limit_holds_with_or_without_expect_continue(small: HTTPServerThread) -> None:
    reply = exchange_until_closed(small, raw(b"Content-Length: 4096", b"Expect: 100-continue"))
    assert status_of(reply) == 413 and b"100 Continue" not in reply
    body = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"' + b"x" * 1100 + b'"}}'
    assert post(small, body)[0] == 413
