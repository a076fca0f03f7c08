"""What the package logs, and where it goes (mcplite/_log.py).

- A library is quiet: the ``mcplite`` logger has a NullHandler, so a program that configured no logging sees
  nothing of ours on stderr (logging's last-resort handler is not reached).
- A process the server owns (`Server.run`) sends our WARNINGs to stderr, among them a failed tool with its
  traceback; unless the application configured logging itself.
- ``access_log=True`` writes one line per HTTP request (``mcplite.access``), under the built-in server and
  under a WSGI server alike.
"""

import json
import logging
import subprocess
import sys
import textwrap
import threading
from typing import Any, Dict, List
from wsgiref.simple_server import WSGIRequestHandler, make_server

import pytest

from mcplite import Client, Server
from mcplite._log import use_stderr_by_default
from tests.support import ROOT
from tests.support.http import serving
from tests.support.wait import WAIT

FAILING_SERVER = textwrap.dedent('''
    import logging, sys
    from mcplite import Server

    server = Server("failing")

    @server.tool
    def explode(user: str) -> str:
        return {"alice": "ok"}[user]

    if "--configured" in sys.argv:
        logging.basicConfig(stream=sys.stderr, format="APP %(name)s %(message)s", level=logging.ERROR)
    server.run()
''')


def run_server_and_call(tmp_path: Any, *extra: str) -> str:
    """The stderr of a stdio server whose tool raised once, after it exited."""
    script = tmp_path / "failing.py"
    script.write_text(FAILING_SERVER)
    log_file = tmp_path / "stderr.txt"
    with open(log_file, "w") as stderr:
        with Client.stdio([sys.executable, str(script), *extra], stderr=stderr, timeout=WAIT,
                          env={"PYTHONPATH": str(ROOT)}) as client:
            result = client.call_tool("explode", {"user": "bob"})
            assert result["isError"] and result["content"][0]["text"] == "KeyError: 'bob'"
    return log_file.read_text()


def test_a_served_process_logs_a_failed_tool_with_its_traceback_on_stderr(tmp_path):
    stderr = run_server_and_call(tmp_path)
    assert "mcplite: WARNING: tool explode failed" in stderr
    assert "Traceback (most recent call last)" in stderr and "KeyError: 'bob'" in stderr


def test_an_application_that_configured_logging_keeps_its_own_configuration(tmp_path):
    stderr = run_server_and_call(tmp_path, "--configured")  # root at ERROR, its own format
    assert "tool explode failed" not in stderr and "Traceback" not in stderr


def test_a_library_user_who_configured_nothing_sees_nothing_of_ours():
    # A warning the client logs (a tool left out for an invalid x-mcp-header annotation would do; any
    # mcplite warning will): in a fresh interpreter, with no logging configured, stderr stays empty.
    code = textwrap.dedent('''
        from mcplite._log import log
        log.warning("this must not reach stderr")
        log.error("nor this")
        import logging
        assert any(isinstance(h, logging.NullHandler) for h in logging.getLogger("mcplite").handlers)
        print("ok")
    ''')
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=WAIT, cwd=str(ROOT))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok" and done.stderr == ""


def test_use_stderr_by_default_adds_one_handler_only_when_nothing_is_configured():
    code = textwrap.dedent('''
        import logging, sys
        from mcplite._log import use_stderr_by_default, log
        assert use_stderr_by_default() is True
        assert use_stderr_by_default() is False   # once
        log.info("hidden: below WARNING")
        log.warning("shown")
    ''')
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=WAIT, cwd=str(ROOT))
    assert done.returncode == 0, done.stderr
    assert done.stderr == "mcplite: WARNING: shown\n"
    assert use_stderr_by_default is not None


def access_lines(records: List[logging.LogRecord]) -> List[str]:
    return [record.getMessage() for record in records if record.name == "mcplite.access"]


def small_server() -> Server:
    server = Server("logged")

    @server.tool
    def add(a: int, b: int) -> int:
        return a + b

    return server


def test_the_access_log_is_off_by_default(caplog):
    with caplog.at_level(logging.DEBUG, logger="mcplite.access"):
        with serving(small_server()) as http, Client(http.url, timeout=WAIT) as client:
            client.call_tool("add", {"a": 1, "b": 2})
    assert access_lines(caplog.records) == []


def test_the_access_log_has_a_line_per_request_under_the_built_in_server(caplog):
    caplog.set_level(logging.INFO, logger="mcplite.access")
    with serving(small_server(), access_log=True) as http:
        with Client(http.url, timeout=WAIT, protocol_version="2026-07-28") as client:
            client.call_tool("add", {"a": 1, "b": 2})
        with Client(http.url, timeout=WAIT, protocol_version="2025-11-25") as client:
            client.call_tool("add", {"a": 2, "b": 2})
    lines = access_lines(caplog.records)
    enveloped = [line for line in lines if "tools/call" in line and "session=" not in line]
    assert len(enveloped) == 1
    assert enveloped[0].startswith('127.0.0.1 "POST /mcp" 200 ') and enveloped[0].endswith(" tools/call")
    legacy = [line for line in lines if "tools/call" in line and "session=" in line]
    assert len(legacy) == 1
    assert any(line.startswith('127.0.0.1 "POST /mcp" 200 ') and line.endswith("initialize") for line in lines)
    assert any('"DELETE /mcp"' in line for line in lines)  # the legacy client ends its session


def test_the_access_log_works_under_a_wsgi_server(caplog):
    caplog.set_level(logging.INFO, logger="mcplite.access")

    class Quiet(WSGIRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

    app = small_server().wsgi_app(stateless=True, json_response=True, access_log=True,
                                  allowed_hosts=["127.0.0.1"])
    httpd = make_server("127.0.0.1", 0, app, handler_class=Quiet)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{httpd.server_port}/mcp"
        with Client(url, timeout=WAIT, protocol_version="2026-07-28") as client:
            assert client.call_tool("add", {"a": 1, "b": 2})["structuredContent"] == {"result": 3}
        bad = subprocess_free_post(url, b"{not json")
        assert bad == 400
    finally:
        httpd.shutdown()
        thread.join(WAIT)
        httpd.server_close()
    lines = access_lines(caplog.records)
    assert any(line.startswith('127.0.0.1 "POST /mcp" 200 ') and line.endswith(" tools/call") for line in lines)
    assert any(line.startswith('127.0.0.1 "POST /mcp" 400 ') and line.endswith(" -") for line in lines)


def subprocess_free_post(url: str, body: bytes) -> int:
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url, data=body, method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=WAIT) as response:
            return int(response.status)
    except urllib.error.HTTPError as refusal:
        return int(refusal.code)


@pytest.mark.parametrize("body, method", [
    (b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}', "tools/list"),
    (b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]', "ping"),
    (b'{"jsonrpc":"2.0","id":1,"result":{}}', "-"),
    (b"", "-"),
    (json.dumps({"jsonrpc": "2.0", "id": 1, "method": "x" * 500}).encode(), "-"),  # too long for a log line
])
def test_the_mcp_method_of_a_request_for_the_log(body: bytes, method: str):
    from mcplite.transports.http_server.access import mcp_method_of
    from mcplite.transports.http_server.adapter import IncomingRequest

    assert mcp_method_of(IncomingRequest("POST", "/mcp", "", {}, body)) == method
    headers: Dict[str, str] = {"mcp-method": "tools/call"}
    assert mcp_method_of(IncomingRequest("POST", "/mcp", "", headers, body)) == "tools/call"


def test_a_peer_that_sends_junk_does_not_fill_the_log(caplog):
    # A stdio server fed a million invalid frames used to write a WARNING line for each (685,905 lines in the
    # reliability suite's long fuzz): the first 20 are logged, then one in 1,000, each one at DEBUG.
    from mcplite.protocol.jsonrpc import InvalidMessage
    from mcplite.session.endpoint import Session
    from mcplite.transports.memory import memory_pair

    ours, theirs = memory_pair()
    session = Session(ours, name="junk")
    caplog.set_level(logging.DEBUG, logger="mcplite")
    for n in range(2500):
        session.receive_invalid(InvalidMessage(-32700, f"Parse error {n}", respond=False))
    session.close()
    warnings = [record.getMessage() for record in caplog.records if record.levelno == logging.WARNING]
    debug = [record for record in caplog.records if record.levelno == logging.DEBUG
             and "invalid message" in record.getMessage()]
    assert len(warnings) == 22
    assert warnings[19].endswith("Parse error 19")
    assert "2000 invalid messages from peer so far" in warnings[21] and warnings[21].endswith("Parse error 1999")
    assert len(debug) == 2500 - 22
