"""The WSGI application under wsgiref (threaded) and, where installed, under gunicorn with several workers."""

import json
import os
import signal
import socket
import socketserver
import subprocess
import sys
import threading
from typing import Any, Dict, Iterator, List, Tuple
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server
from wsgiref.util import setup_testing_defaults

import pytest

from mcplite.wsgi import WSGIApp
from support import ROOT, WAIT, Background, run_concurrently, wait_until
from support.http import Fixture, ServerLoop
from support.raw_http import EventReader, RawClient, Reply
from support.results import result_text


class _ThreadingWSGIServer(socketserver.ThreadingMixIn, WSGIServer):
    """wsgiref serves one request at a time; a call that waits for a sampling answer needs a second thread."""

    daemon_threads = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


class WSGIRef:
    """A WSGI app served by wsgiref on 127.0.0.1, with what `RawClient` needs of a server."""

    def __init__(self, app: WSGIApp) -> None:
        self.app = app
        self._server = make_server("127.0.0.1", 0, app, server_class=_ThreadingWSGIServer,
                                   handler_class=_QuietHandler)
        self.host, self.port = "127.0.0.1", self._server.server_address[1]
        self._loop = ServerLoop(self._server).start()

    def shutdown(self) -> None:
        self.app.close()
        self._loop.stop()


@pytest.fixture
def fixture() -> Fixture:
    return Fixture()


@pytest.fixture
def wsgiref_server(fixture: Fixture) -> Iterator[WSGIRef]:
    # threaded: wsgiref says wsgi.multithread is false even under ThreadingMixIn.
    server = WSGIRef(fixture.server.wsgi_app(allowed_hosts=["127.0.0.1"], threaded=True))
    yield server
    server.shutdown()


@pytest.fixture
def client(wsgiref_server: WSGIRef) -> RawClient:
    client = RawClient(wsgiref_server)  # type: ignore[arg-type]
    client.initialize(capabilities={"sampling": {}})
    return client


def test_json_answers_and_sessions(client: RawClient) -> None:
    reply = client.post(client.call("add", {"a": 2, "b": 2}))
    assert (reply.status, reply.headers["content-type"]) == (200, "application/json")
    assert result_text(reply.json()) == "4"
    assert client.post(client.call("add", {"a": 1, "b": 1}), {"MCP-Session-Id": "0" * 32}).status == 404


def test_messages_before_the_result_are_streamed_with_write(client: RawClient) -> None:
    stream = client.stream(client.call("chatty", progressToken="p"))
    assert stream.headers["content-type"] == "text/event-stream"
    assert [m.get("method") for m in stream.messages()] == ["notifications/progress", "notifications/message", None]


def test_a_sampling_request_is_answered_mid_call(client: RawClient) -> None:
    stream = client.stream(client.call("ask_model", {"prompt": "hello?"}))
    sampling = json.loads(stream.next().data)  # type: ignore[union-attr]
    answer = {"jsonrpc": "2.0", "id": sampling["id"],
              "result": {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"}}
    assert client.post(answer).status == 202
    assert result_text(stream.messages()[-1]) == "hi"


def test_the_get_stream_and_delete(client: RawClient, fixture: Fixture) -> None:
    listener = client.get()
    assert listener.status == 200
    fixture.server.add_tool(lambda: "x", name="late")
    changed = listener.next()
    assert changed is not None and json.loads(changed.data)["method"] == "notifications/tools/list_changed"
    assert Reply(client.send("DELETE")).status == 200
    assert listener.rest() == []


def test_a_stream_cannot_be_closed_early_under_wsgi(client: RawClient) -> None:
    messages = client.stream(client.call("reconnect")).messages()
    assert [m["params"]["data"] for m in messages[:-1]] == ["one", "two", "three"]
    assert result_text(messages[-1]) == "closed=False"


def test_security_checks_and_body_limit(fixture: Fixture) -> None:
    server = WSGIRef(fixture.server.wsgi_app(allowed_hosts=["127.0.0.1"], max_body_size=100, threaded=True))
    try:
        client = RawClient(server)  # type: ignore[arg-type]
        assert client.post(client.request("ping"), {"Host": "evil.example.com"}).status == 403
        assert client.post(client.request("ping"), {"Origin": "https://evil.example.com"}).status == 403
        assert client.post(client.request("ping", {"pad": "x" * 200})).status == 413
    finally:
        server.shutdown()


def test_the_legacy_endpoint_url_includes_the_mount_point(fixture: Fixture) -> None:
    app = fixture.server.wsgi_app(allowed_hosts=["*"], threaded=True)  # run on a thread of the test's
    written: List[bytes] = []
    endpoint_sent = threading.Event()

    def start_response(status: str, headers: List[Tuple[str, str]]) -> Any:
        def write(data: bytes) -> None:
            written.append(data)
            endpoint_sent.set()
        return write

    environ: Dict[str, Any] = {"REQUEST_METHOD": "GET", "SCRIPT_NAME": "/tools", "PATH_INFO": "/sse",
                               "HTTP_ACCEPT": "text/event-stream"}
    setup_testing_defaults(environ)
    stream = Background(app, environ, start_response)
    assert endpoint_sent.wait(WAIT)
    app.close()  # ends the stream, so the application returns
    stream.join()
    assert written[0].startswith(b"event: endpoint\ndata: /tools/messages?session_id=")


# ---- gunicorn: several worker processes, stateless ---------------------------------------------------------
GUNICORN_APP = '''
import os
import time

from mcplite import Context, Server

server = Server("gunicorn-test")


@server.tool
def worker(pause: float = 0.0) -> int:
    """The pid of the worker process that ran the call."""
    time.sleep(pause)
    return os.getpid()


@server.tool
def chatty(ctx: Context) -> str:
    ctx.progress(1, 2)
    return "done"


app = server.wsgi_app(stateless=True, allowed_hosts=["127.0.0.1"])
'''


@pytest.fixture
def gunicorn(tmp_path: Any) -> Iterator[RawClient]:
    pytest.importorskip("gunicorn")
    (tmp_path / "mcp_gunicorn_app.py").write_text(GUNICORN_APP)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    port = listener.getsockname()[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path)])}
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "--workers", "3", "--bind", f"fd://{listener.fileno()}",
         "--log-level", "warning", "mcp_gunicorn_app:app"],
        env=env, cwd=str(tmp_path), pass_fds=[listener.fileno()])
    listener.close()  # the workers hold their own copy
    server = type("Address", (), {"host": "127.0.0.1", "port": port})()
    client = RawClient(server)  # type: ignore[arg-type]
    try:
        def answering() -> bool:  # gunicorn boots its workers in the background
            assert process.poll() is None, "gunicorn exited"
            try:
                return client.post(client.request("ping")).status == 200
            except OSError:
                return False

        wait_until(answering, 3 * WAIT, "gunicorn did not start")
        yield client
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(WAIT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(WAIT)


def test_stateless_calls_are_served_by_several_gunicorn_workers(gunicorn: RawClient) -> None:
    init = gunicorn.post(gunicorn.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                                          "clientInfo": {"name": "g", "version": "1"}}))
    assert init.status == 200 and "mcp-session-id" not in init.headers

    def call(_: int) -> int:
        reply = gunicorn.post(gunicorn.call("worker", {"pause": 0.5}), {"MCP-Protocol-Version": "2025-06-18"})
        return reply.json()["result"]["structuredContent"]["result"]

    # Sync workers serve one request at a time: concurrent slow calls must spread over the processes.
    pids = run_concurrently(call, range(6))
    assert len(set(pids)) >= 2
    streamed = EventReader(gunicorn.send("POST", gunicorn.call("chatty", progressToken=1)))
    assert [m.get("method") for m in streamed.messages()] == ["notifications/progress", None]


def test_server_wsgi_app_is_the_same_adapter():
    from examples.demo_server import server

    from mcplite.wsgi import WSGIApp
    assert isinstance(server.wsgi_app(stateless=True, allowed_hosts=["*"]), WSGIApp)


def test_two_session_ids_joined_by_the_wsgi_server_are_400_not_404(client: RawClient,
                                                                  wsgiref_server: WSGIRef) -> None:
    assert client.session_id is not None
    body = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
    session_id = client.session_id.encode()
    request = (b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json,"
               b" text/event-stream\r\nConnection: close\r\nMcp-Session-Id: %b\r\nMcp-Session-Id: %b\r\n"
               b"Content-Length: %d\r\n\r\n%b" % (session_id, session_id, len(body), body))
    with socket.create_connection((wsgiref_server.host, wsgiref_server.port), timeout=WAIT) as sock:
        sock.sendall(request)
        answer = b""
        while not answer.endswith(b"}"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
    assert answer.startswith(b"HTTP/1.0 400 ") or answer.startswith(b"HTTP/1.1 400 "), answer  # (wsgiref: "a,a")
    assert b"MCP-Session-Id must be one value" in answer
