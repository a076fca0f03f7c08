"""What a new user meets in the second hour: timeouts that bound what they say, a stdio server started once,
HTTP errors that fit on a line (issue 32).

- A connect's ``timeout`` (the client's, or ``connect(timeout=)``, or the CLI's ``--connect-timeout``) bounds the
  whole connect: the probe, the handshake, an HTTP send that waits; the close after a failed connect is quick.
  Asserted by the wall clock over stdio, over HTTP (a server that takes the request and never answers) and
  against a silent socket (accepts, never reads).
- A call's ``timeout`` bounds the whole call: all its input rounds together, the callbacks' time not counted.
- The revision probe never starts a stdio server twice.
- An HTML error page becomes one line of an error message, said once for the two HTTP transports tried.
"""

import http.server
import json
import os
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

import pytest
from support import ROOT, WAIT
from support.http import serving

from mcplite import Client, Server
from mcplite.client import era
from mcplite.errors import ConnectionClosed, HTTPError, RemoteProtocolError, RequestTimeout

#: How much longer than its timeout a bounded wait may take (thread hand-offs, a loaded machine, the close).
MARGIN = 1.5

RAW_SERVER = textwrap.dedent('''
    """A stdio server by hand: python3 raw.py BEHAVIOUR LOG. Appends "start" to LOG as it starts."""
    import json, signal, sys, time

    behaviour, log = sys.argv[1], sys.argv[2]
    with open(log, "a") as out:
        out.write("start\\n")
    if behaviour == "fail":  # a server that cannot start: says why, exits 1
        sys.stderr.write("raw: config.toml not found\\n")
        sys.exit(1)
    if behaviour == "silent":  # reads everything, answers nothing
        for line in sys.stdin:
            pass
        sys.exit(0)
    if behaviour == "stubborn":  # answers nothing, ignores EOF and SIGTERM: only SIGKILL ends it
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        for line in sys.stdin:
            pass
        time.sleep(120)
        sys.exit(0)

    ENVELOPE = "2026-07-28"
    TOOLS = [{"name": "hold", "inputSchema": {"type": "object"}},
             {"name": "rounds", "inputSchema": {"type": "object"}},
             {"name": "ask", "inputSchema": {"type": "object"}},
             {"name": "bad", "inputSchema": {"type": "object"},
              "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}]
    ELICIT = {"method": "elicitation/create",
              "params": {"message": "ok?", "requestedSchema": {"type": "object", "properties": {}}}}

    def send(message):
        sys.stdout.write(json.dumps(message) + "\\n")
        sys.stdout.flush()

    for line in sys.stdin:
        message = json.loads(line)
        method, id, params = message.get("method"), message.get("id"), message.get("params") or {}
        if id is None:
            continue
        def answer(result):
            send({"jsonrpc": "2.0", "id": id, "result": result})
        if method == "server/discover" and behaviour == "envelope":
            answer({"supportedVersions": [ENVELOPE], "capabilities": {"tools": {}}, "resultType": "complete",
                    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "raw", "version": "1"}}})
        elif method == "initialize" and behaviour == "handshake":
            answer({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                    "serverInfo": {"name": "raw", "version": "1"}})
        elif method == "tools/list":
            answer({"tools": TOOLS, "resultType": "complete"})
        elif method == "tools/call" and params.get("name") == "bad":
            answer({"content": [], "structuredContent": {"n": "not a number"}, "resultType": "complete"})
        elif method == "tools/call" and params.get("name") == "rounds":  # slow, and never done
            time.sleep(0.3)
            answer({"resultType": "input_required", "requestState": "again"})
        elif method == "tools/call" and params.get("name") == "ask":
            if "inputResponses" in params:
                answer({"content": [{"type": "text", "text": "thanks"}], "resultType": "complete"})
            else:
                answer({"resultType": "input_required", "inputRequests": {"a": ELICIT}})
        elif method == "tools/call":
            pass  # hold: taken, never answered
        else:
            send({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}})
''')

ENVELOPE_SERVER = textwrap.dedent('''
    import sys
    with open(sys.argv[1], "a") as out:
        out.write("start\\n")
    from mcplite import Server
    server = Server("envelope-only", supported_versions=["2026-07-28"])

    @server.tool
    def hi() -> str:
        return "hi"

    server.run()
''')


@pytest.fixture(autouse=True)
def fresh_verdicts() -> Iterator[None]:
    era.forget_verdicts()
    yield
    era.forget_verdicts()


@pytest.fixture
def raw(tmp_path: Path) -> Any:
    """``raw(behaviour, **options)``: a Client.stdio for the raw server, and the log of its starts."""
    script = tmp_path / "raw.py"
    script.write_text(RAW_SERVER)
    log = tmp_path / "starts.log"

    def make(behaviour: str, **options: Any) -> Client:
        return Client.stdio([sys.executable, str(script), behaviour, str(log)], **options)

    make.log = log  # type: ignore[attr-defined]
    return make


def starts(log: Path) -> int:
    return log.read_text().count("start") if log.exists() else 0


class Held:
    """An HTTP server on 127.0.0.1 that reads each request and never answers it (until the test ends)."""

    def __init__(self) -> None:
        release = self.release = threading.Event()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                release.wait(WAIT * 3)

            do_GET = do_POST

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/mcp"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(WAIT)


class Silent:
    """A socket on 127.0.0.1 that accepts connections and never reads or writes (until the test ends)."""

    def __init__(self) -> None:
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}/mcp"
        self.accepted: List[socket.socket] = []
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.accepted.append(conn)

    def close(self) -> None:
        try:
            self.listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.listener.close()
        self.thread.join(WAIT)
        for conn in self.accepted:
            conn.close()


@pytest.fixture
def held() -> Iterator[Held]:
    server = Held()
    yield server
    server.close()


@pytest.fixture
def silent() -> Iterator[Silent]:
    server = Silent()
    yield server
    server.close()


def timed(action: Any) -> Tuple[BaseException, float]:
    """What ``action()`` raised, and how long it took."""
    start = time.monotonic()
    with pytest.raises(Exception) as raised:
        action()
    return raised.value, time.monotonic() - start


# ---- a connect's timeout bounds the whole connect ----------------------------------------------------------------

CONNECT = 2.0


@pytest.mark.parametrize("given", ["client", "connect"])
@pytest.mark.parametrize("peer", ["stdio", "stdio-stubborn", "http", "silent-socket"])
def test_a_connect_timeout_bounds_the_whole_connect(peer: str, given: str, raw: Any, held: Held,
                                                     silent: Silent) -> None:
    in_client: Dict[str, Any] = {"timeout": CONNECT} if given == "client" else {}
    if peer.startswith("stdio"):
        client = raw("stubborn" if peer == "stdio-stubborn" else "silent", **in_client)
    else:
        client = Client(held.url if peer == "http" else silent.url, **in_client)
    error, elapsed = timed(lambda: client.connect(**({} if given == "client" else {"timeout": CONNECT})))
    assert elapsed < CONNECT + MARGIN, f"{peer}: {elapsed:.1f} s"
    assert isinstance(error, RequestTimeout) and isinstance(error, TimeoutError)
    assert str(error) == ("the server did not finish connecting within 2 s: the time ran out in the revision probe, "
                          "server/discover")
    if peer.startswith("stdio"):
        process = client.transport.process  # type: ignore[attr-defined]
        assert process.poll() is not None  # stopped, not left behind (the stubborn one by SIGKILL)
        assert starts(raw.log) == 1


def test_the_probe_takes_its_share_and_the_handshake_the_rest(raw: Any) -> None:
    client = raw("silent", probe_timeout=0.5)
    error, elapsed = timed(lambda: client.connect(timeout=CONNECT))
    assert elapsed < CONNECT + MARGIN
    assert str(error) == ("the server did not finish connecting within 2 s: the time ran out in the handshake, "
                          "initialize")


def test_a_connect_under_the_deadline_still_connects(raw: Any) -> None:
    with raw("handshake", probe_timeout=0.5).connect(timeout=WAIT) as client:
        assert client.protocol_version == "2025-11-25"


def test_the_cli_connect_timeout_bounds_an_http_connect(silent: Silent) -> None:
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "mcplite", "--connect-timeout", "3", "info", "--", silent.url],
                          cwd=ROOT, capture_output=True, text=True, timeout=WAIT * 3,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    elapsed = time.monotonic() - start
    assert done.returncode == 4, done.stderr  # EXIT_TIMEOUT
    assert elapsed < 3 + MARGIN + 0.5, f"{elapsed:.1f} s"  # (+ the interpreter's start)
    assert "within 3 s" in done.stderr


# ---- a call's timeout bounds the whole call ------------------------------------------------------------------

CALL = 1.5


def holding_server(release: threading.Event) -> Server:
    server = Server("holding")

    @server.tool
    def hold() -> str:
        release.wait(WAIT * 3)
        return "late"

    return server


@pytest.mark.parametrize("peer", ["stdio-handshake", "stdio-envelope", "http-envelope", "http-handshake",
                                  "silent-socket"])
def test_a_call_timeout_bounds_the_call(peer: str, raw: Any, silent: Silent) -> None:
    release = threading.Event()
    with serving(holding_server(release)) as http_server:
        if peer.startswith("stdio"):
            client = raw(peer.split("-")[1], timeout=WAIT)
        elif peer == "silent-socket":  # a 2026-07-28 pin sends nothing at connect: the call is the first request
            client = Client(silent.url, timeout=WAIT, protocol_version="2026-07-28")
        else:
            client = Client(http_server.url, timeout=WAIT,
                            protocol_version="2025-11-25" if peer == "http-handshake" else "auto")
        with client:
            error, elapsed = timed(lambda: client.call_tool("hold", timeout=CALL))
        release.set()
    assert elapsed < CALL + MARGIN, f"{peer}: {elapsed:.1f} s"
    assert isinstance(error, RequestTimeout) and str(error) == "tools/call timed out after 1.5 s"


def test_a_call_timeout_bounds_all_its_input_rounds_together(raw: Any) -> None:
    with raw("envelope", timeout=WAIT) as client:
        assert client.protocol_version == "2026-07-28"
        error, elapsed = timed(lambda: client.call_tool("rounds", timeout=CALL))
    assert elapsed < CALL + MARGIN, f"{elapsed:.1f} s"
    assert isinstance(error, RequestTimeout)
    assert str(error).startswith("tools/call timed out after 1.5 s, over ") and str(error).endswith(" requests")


def test_the_time_the_callbacks_take_is_not_the_calls(raw: Any) -> None:
    def slow_person(params: Dict[str, Any]) -> Dict[str, Any]:
        time.sleep(CALL * 1.5)  # a person answering takes longer than the call's timeout
        return {"action": "accept", "content": {}}

    with raw("envelope", timeout=WAIT, elicitation=slow_person) as client:
        result = client.call_tool("ask", timeout=CALL)
    assert result["content"][0]["text"] == "thanks"


# ---- the probe never starts a stdio server twice ---------------------------------------------------------------

def test_a_handshake_server_is_started_once(raw: Any) -> None:
    with raw("handshake", timeout=WAIT) as client:
        assert client.protocol_version == "2025-11-25"
    assert starts(raw.log) == 1


def test_an_envelope_server_is_started_once(tmp_path: Path) -> None:
    script, log = tmp_path / "envelope.py", tmp_path / "starts.log"
    script.write_text(ENVELOPE_SERVER)
    with Client.stdio([sys.executable, str(script), str(log)], env={"PYTHONPATH": str(ROOT)}, timeout=WAIT) as client:
        assert client.protocol_version == "2026-07-28"
        assert client.call_tool("hi")["content"][0]["text"] == "hi"
    assert starts(log) == 1


def test_a_server_that_fails_at_start_is_started_once_and_its_error_said_once(raw: Any) -> None:
    said: List[str] = []
    client = raw("fail", timeout=WAIT, stderr=said.append)
    error, elapsed = timed(client.connect)
    assert isinstance(error, ConnectionClosed) and "exited with code 1" in str(error)
    assert starts(raw.log) == 1
    assert said == ["raw: config.toml not found"]
    assert elapsed < MARGIN


# ---- an HTML error page is one line of the message ----------------------------------------------------------

class NotFound(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_error(404)  # http.server's own HTML page

    do_POST = do_GET

    def log_message(self, *args: Any) -> None:
        pass


def test_a_wrong_path_is_one_short_message_for_both_transports() -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), NotFound)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/wrong"
    try:
        with pytest.raises(HTTPError) as refused:
            Client(url, timeout=WAIT).connect()
    finally:
        server.shutdown()
        server.server_close()
        thread.join(WAIT)
    message = str(refused.value)
    assert message == (f"POST {url}: HTTP 404 Not Found -- Error response (and the same from GET {url} for the legacy "
                       "HTTP+SSE transport)")
    assert refused.value.status == 404 and "<html" in refused.value.body  # the page itself is still at hand


# ---- start_tool_call(task=True) checks a direct answer as call_tool does -------------------------------------

def test_a_direct_answer_to_a_task_call_is_checked_against_the_output_schema(raw: Any) -> None:
    with raw("envelope", timeout=WAIT) as client:
        assert client.protocol_version == "2026-07-28"
        with pytest.raises(RemoteProtocolError, match="does not match its outputSchema"):
            client.start_tool_call("bad", task=True)
        with pytest.raises(RemoteProtocolError, match="does not match its outputSchema"):
            client.call_tool("bad", task=True)


def test_an_http_error_quotes_a_json_rpc_error_message_whole() -> None:
    # A JSON-RPC error in an error body is written for people: its message is quoted whole (the WSGI
    # single-thread refusal names --threads at its end, 300 characters in), not clipped at the first 200
    # characters of the raw JSON.
    from mcplite.transports.http_client.pool import summary

    message = "this WSGI server runs one request at a time " + "x" * 250 + " (gunicorn: --threads 8)"
    body = '{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":' + json.dumps(message) + '}}'
    assert summary(body) == f"error -32603: {message}"
    assert summary('{"not": "an error"}') == '{"not": "an error"}'
    assert summary("{broken") == "{broken"
