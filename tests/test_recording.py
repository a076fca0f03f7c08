"""Recordings (issue 33): every message of a connection, both ways, as JSON lines, with secrets redacted.

A real stdio server process and a real HTTP server on 127.0.0.1 record their side while the client records its
own; the two recordings must hold the same messages (what one side sent is what the other received), in both
eras, with times that never go back, secrets redacted, and the live messages untouched.
"""

import copy
import io
import json
import os
import stat
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

from mcplite import Client, RecordingError, RemoteError, Server
from mcplite.http_server import HTTPServerThread
from mcplite.recording import Recorder, RecordingTransport, read_recording, redact
from mcplite.transports import MessageSink
from mcplite.transports.memory import memory_pair

from support import ROOT, WAIT, Kept, run_concurrently

ERAS = ["2025-11-25", "2026-07-28"]
PASSWORD = "hunter2-secret"

SERVER_SOURCE = textwrap.dedent('''
    import sys
    sys.path.insert(0, {root!r})
    from mcplite import Context, Server

    server = Server("recorded")

    @server.tool
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool
    def count(n: int, ctx: Context) -> str:
        for i in range(n):
            ctx.progress(i + 1, n)
        return "counted"

    @server.tool
    def login(password: str) -> dict:
        return {{"access_token": "tok-" + password, "hint": "call with Bearer x"}}

    @server.tool
    def broken() -> str:
        raise ValueError("it broke")

    if __name__ == "__main__":
        server.run(record=sys.argv[1] if len(sys.argv) > 1 else None)
''')


def make_server() -> Server:
    namespace: Dict[str, Any] = {"__name__": "recorded_server"}
    exec(SERVER_SOURCE.format(root=str(ROOT)), namespace)
    server: Server = namespace["server"]
    return server


def session(client: Client) -> Dict[str, Any]:
    """The same session in every test: list, a call with progress, a secret both ways, an error, a tool that
    fails. Returns what the client was given, to check it is not redacted."""
    seen: List[Tuple[float, Any]] = []
    arguments = {"password": PASSWORD}
    assert {tool["name"] for tool in client.list_tools()} >= {"add", "count", "login", "broken"}
    assert client.call_tool("count", {"n": 3}, progress=lambda progress, total, message: seen.append(
        (progress, total))) is not None
    assert seen == [(1, 3), (2, 3), (3, 3)]
    login = client.call_tool("login", arguments)
    with pytest.raises(RemoteError):
        client.request("no/such/method", {})
    assert client.call_tool("broken").get("isError") is True
    assert arguments == {"password": PASSWORD}  # the caller's arguments: not redacted in place
    return dict(login)


def lines(path: Path) -> List[Dict[str, Any]]:
    return list(read_recording(path))


def messages(entries: List[Dict[str, Any]], direction: str) -> List[Any]:
    return [entry["message"] for entry in entries if entry["dir"] == direction]


def methods(entries: List[Dict[str, Any]], direction: str) -> List[str]:
    return [m["method"] for m in messages(entries, direction) if isinstance(m, dict) and "method" in m]


def check_recording(path: Path, peers: Any) -> List[Dict[str, Any]]:
    """What every recording must be: private, a header, whole lines in time order, no secret in it."""
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    text = path.read_text(encoding="utf-8")
    header = json.loads(text.splitlines()[0])
    assert header["mcplite_recording"] == 1 and "T" in header["started"]
    assert PASSWORD not in text and "Bearer x" not in text
    assert "[redacted]" in text
    entries = lines(path)  # checks every line, and that t never goes back
    times = [entry["t"] for entry in entries]
    assert times == sorted(times) and times[0] >= 0
    assert {entry["peer"] for entry in entries} <= set(peers), {entry["peer"] for entry in entries}
    return entries


def check_both_sides(client_side: List[Dict[str, Any]], server_side: List[Dict[str, Any]]) -> None:
    """What one side sent, the other received, message for message."""
    assert messages(client_side, "send") == messages(server_side, "recv")
    assert messages(server_side, "send") == messages(client_side, "recv")
    sent = methods(client_side, "send")
    assert "tools/list" in sent and sent.count("tools/call") == 3 and "no/such/method" in sent
    assert methods(client_side, "recv").count("notifications/progress") == 3
    errors = [m for m in messages(client_side, "recv") if isinstance(m, dict) and "error" in m]
    assert [error["error"]["code"] for error in errors] == [-32601]
    logins = [m for m in messages(client_side, "recv")
              if isinstance(m, dict) and "access_token" in json.dumps(m.get("result", {}).get("structuredContent"))]
    assert logins and logins[0]["result"]["structuredContent"]["access_token"] == "[redacted]"


# ---- a whole session, both sides, both eras ------------------------------------------------------------------


@pytest.mark.parametrize("version", ERAS)
def test_a_stdio_session_is_recorded_alike_on_both_sides(tmp_path: Path, version: str) -> None:
    script = tmp_path / "server.py"
    script.write_text(SERVER_SOURCE.format(root=str(ROOT)), encoding="utf-8")
    client_file, server_file = tmp_path / "client.jsonl", tmp_path / "server.jsonl"
    argv = [sys.executable, str(script), str(server_file)]
    with Client.stdio(argv, record=str(client_file), protocol_version=version, timeout=WAIT) as client:
        process = client.transport.process  # a stdio transport's own attribute, through the recording
        login = session(client)
    assert login["structuredContent"]["access_token"] == "tok-" + PASSWORD  # live result: not redacted
    assert process.wait(WAIT) == 0  # the server has closed its recording
    client_side = check_recording(client_file, [" ".join(argv)])
    server_side = check_recording(server_file, ["client"])
    check_both_sides(client_side, server_side)
    first = methods(client_side, "send")[0]
    assert first == ("initialize" if version == "2025-11-25" else "tools/list")


@pytest.mark.parametrize("version", ERAS)
def test_an_http_session_is_recorded_alike_on_both_sides(tmp_path: Path, version: str) -> None:
    client_file, server_file = tmp_path / "client.jsonl", tmp_path / "server.jsonl"
    with HTTPServerThread(make_server(), "127.0.0.1:0", record=str(server_file)) as http:
        with Client(http.url, record=client_file, protocol_version=version, timeout=WAIT) as client:
            session_id = getattr(client.transport, "session_id", None)  # the HTTP transport's, through it
            login = session(client)
        host = f"127.0.0.1:{http.port}"
    assert login["structuredContent"]["access_token"] == "tok-" + PASSWORD
    client_side = check_recording(client_file, [host])
    if version == "2025-11-25":
        assert session_id is not None
        server_peers = [session_id[:8] + "..."]
    else:
        server_peers = ["stateless"]  # every 2026-07-28 request stands alone
    server_side = check_recording(server_file, server_peers)
    check_both_sides(client_side, server_side)


def test_one_recorder_holds_several_connections_each_under_its_peer_name(tmp_path: Path) -> None:
    path = tmp_path / "shared.jsonl"
    server = make_server()
    with Recorder(path, info={"gateway": "test"}) as recorder:
        with Client(server, record=recorder, record_as="first") as first, \
                Client(server, record=recorder, record_as="second") as second:
            first.call_tool("add", {"a": 1, "b": 2})
            second.call_tool("add", {"a": 3, "b": 4})
        assert not recorder.closed  # a Recorder given is its giver's to close
    assert recorder.closed
    header = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    assert header["info"] == {"gateway": "test"}
    entries = lines(path)
    assert {entry["peer"] for entry in entries} == {"first", "second"}
    calls = [m["params"]["arguments"] for m in messages(entries, "send") if m.get("method") == "tools/call"]
    assert sorted(calls, key=lambda a: a["a"]) == [{"a": 1, "b": 2}, {"a": 3, "b": 4}]


def test_a_client_closes_the_recorder_it_opened_and_names_its_server_by_default(tmp_path: Path) -> None:
    path = tmp_path / "own.jsonl"
    with Client(make_server(), record=path) as client:
        client.call_tool("add", {"a": 1, "b": 2})
        recorder = client.transport.peer.recorder
        assert not recorder.closed
    assert recorder.closed
    assert {entry["peer"] for entry in lines(path)} == {"recorded"}  # an in-process server: its name


def test_record_as_without_record_is_refused() -> None:
    with pytest.raises(TypeError, match="record_as"):
        Client(make_server(), record_as="x")


# ---- the wrapper -----------------------------------------------------------------------------------------------


def test_the_wrapper_passes_the_live_message_on_unchanged_and_forwards_attributes() -> None:
    inner = Kept()
    inner.shutdown_timeout = 1.0  # type: ignore[attr-defined]  # as a stdio transport has
    buffer = io.StringIO()
    recorder = Recorder(buffer)
    transport = RecordingTransport(inner, recorder.peer("p"))
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": "login", "arguments": {"password": "pw", "nested": [{"Authorization": "Bearer t"}]}}}
    before = copy.deepcopy(message)
    transport.send(message)
    assert inner.sent == [message] and inner.sent[0] is message and message == before
    assert transport.inner is inner and transport.wants_route is False
    assert transport.shutdown_timeout == 1.0  # read through
    setattr(transport, "shutdown_timeout", 5.0)  # the command line sets a stdio transport's grace this way
    assert inner.shutdown_timeout == 5.0  # type: ignore[attr-defined]
    recorder.close()
    buffer.seek(0)
    (entry,) = read_recording(buffer)
    assert entry["message"]["params"]["arguments"] == {"password": "[redacted]",
                                                       "nested": [{"Authorization": "[redacted]"}]}


def test_what_arrives_is_recorded_before_the_session_sees_it_and_invalid_input_too() -> None:
    client_end, server_end = memory_pair()
    buffer = io.StringIO()
    recorder = Recorder(buffer)
    received: List[Any] = []
    done = threading.Event()

    class Collect(MessageSink):
        def receive(self, value: Any) -> None:
            received.append(value)
            done.set()

        def receive_invalid(self, exc: Any) -> None:
            received.append(("invalid", str(exc)))

        def connection_lost(self, exc: Any) -> None:
            pass

    recording = RecordingTransport(server_end, recorder.peer("client"))
    recording.start(Collect())
    client_end.start(Collect())
    client_end._peer._inbox.put(b"not json at all {")  # type: ignore[union-attr]  # bytes that do not decode
    client_end.send({"jsonrpc": "2.0", "method": "notifications/x", "params": {"token": "abc"}})
    assert done.wait(WAIT)
    recording.close()
    assert received[0][0] == "invalid"
    assert received[1] == {"jsonrpc": "2.0", "method": "notifications/x", "params": {"token": "abc"}}  # live
    recorder.close()
    buffer.seek(0)
    invalid, message = read_recording(buffer)
    assert invalid["dir"] == "recv" and "not json" in invalid["invalid"] and "message" not in invalid
    assert message["message"]["params"] == {"token": "[redacted]"}


# ---- redaction -------------------------------------------------------------------------------------------------


def test_redaction_reaches_every_depth_on_a_copy() -> None:
    message = {
        "jsonrpc": "2.0", "id": 7,
        "result": {
            "structuredContent": {"session": {"accessToken": "a1", "refresh_token": "r1", "id_token": "i1",
                                              "token_type": "Bearer", "expires_in": 3600}},
            "content": [{"type": "text", "text": "use Authorization: Bearer abc.def-ghi please"},
                        {"type": "text", "text": "a JWT eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln here"},
                        {"type": "text", "text": json.dumps({"client_secret": "cs", "ok": True})}],
            "headers": {"Authorization": "Basic dXNlcjpwYXNz", "Cookie": "a=b", "Mcp-Session-Id": "s1",
                        "X-API-Key": "k", "Accept": "application/json"},
            "deep": [[{"PASSWORD": 12345, "apiKey": "k2", "code_verifier": "v", "assertion": "jwt"}]],
            # A schema with a property named like a secret keeps its schema: only values are redacted.
            "inputSchema": {"properties": {"password": {"type": "string"}}, "required": ["password"]},
        },
    }
    live = copy.deepcopy(message)
    redacted = redact(message)
    assert message == live  # the live message is untouched
    result = redacted["result"]
    assert result["structuredContent"]["session"] == {"accessToken": "[redacted]", "refresh_token": "[redacted]",
                                                      "id_token": "[redacted]", "token_type": "Bearer",
                                                      "expires_in": 3600}
    assert result["content"][0]["text"] == "use Authorization: Bearer [redacted] please"
    assert result["content"][1]["text"] == "a JWT [redacted] here"
    assert json.loads(result["content"][2]["text"]) == {"client_secret": "[redacted]", "ok": True}
    assert result["headers"] == {"Authorization": "[redacted]", "Cookie": "[redacted]",
                                 "Mcp-Session-Id": "[redacted]", "X-API-Key": "[redacted]",
                                 "Accept": "application/json"}
    assert result["deep"] == [[{"PASSWORD": "[redacted]", "apiKey": "[redacted]", "code_verifier": "[redacted]",
                                "assertion": "[redacted]"}]]
    assert result["inputSchema"] == live["result"]["inputSchema"]
    assert redacted["id"] == 7 and redacted["jsonrpc"] == "2.0"


def test_a_message_with_nothing_secret_is_recorded_as_it_is() -> None:
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": "add", "arguments": {"a": 1, "text": "{not json", "progressToken": 5},
                          "_meta": {"progressToken": "p1"}}}
    assert redact(message) == message


# ---- the writer ----------------------------------------------------------------------------------------------


def test_many_threads_write_whole_lines_in_time_order(tmp_path: Path) -> None:
    path = tmp_path / "busy.jsonl"
    recorder = Recorder(path)
    big = "x" * 20_000  # longer than any pipe or buffer writes at once

    def writer(number: int) -> None:
        peer = recorder.peer(f"peer-{number}")
        for i in range(100):
            peer.sent({"jsonrpc": "2.0", "id": i, "method": "m", "params": {"who": number, "pad": big}})
            peer.received({"jsonrpc": "2.0", "id": i, "result": {}})

    run_concurrently(writer, range(8))
    recorder.close()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    entries = lines(path)  # each line whole JSON, times never going back
    assert len(entries) == 8 * 200
    for number in range(8):
        mine = [e for e in entries if e["peer"] == f"peer-{number}" and e["dir"] == "send"]
        assert [e["message"]["id"] for e in mine] == list(range(100))
        assert all(e["message"]["params"]["pad"] == big for e in mine)


def test_each_line_is_on_disk_as_soon_as_it_is_recorded(tmp_path: Path) -> None:
    path = tmp_path / "flushed.jsonl"
    recorder = Recorder(path)
    recorder.peer("p").sent({"jsonrpc": "2.0", "method": "ping"})
    # Read by another process while the recorder is open: nothing waits in a buffer.
    out = subprocess.run([sys.executable, "-c", "import sys; print(len(open(sys.argv[1]).read().splitlines()))",
                          str(path)], capture_output=True, text=True, timeout=WAIT)
    assert out.stdout.strip() == "2"
    recorder.close()
    recorder.peer("p").sent({"jsonrpc": "2.0", "method": "late"})  # after close: dropped, no error
    assert len(path.read_text().splitlines()) == 2


def test_an_existing_file_is_emptied_and_keeps_its_mode(tmp_path: Path) -> None:
    path = tmp_path / "again.jsonl"
    path.write_text("old\n")
    os.chmod(path, 0o640)
    Recorder(path).close()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640
    assert list(read_recording(path)) == []


def test_a_value_json_cannot_hold_is_recorded_without_failing() -> None:
    buffer = io.StringIO()
    with Recorder(buffer) as recorder:
        recorder.peer("p").sent({"jsonrpc": "2.0", "method": "m", "params": {"when": object()}})
    buffer.seek(0)
    (entry,) = read_recording(buffer)
    assert entry["message"]["params"]["when"].startswith("<not JSON")


# ---- the reader ----------------------------------------------------------------------------------------------


HEADER = '{"mcplite_recording": 1, "started": "2026-01-01T00:00:00+00:00"}\n'
LINE = '{"t": 0.5, "peer": "p", "dir": "send", "message": {"jsonrpc": "2.0", "method": "ping"}}\n'


@pytest.mark.parametrize("text, problem", [
    ("", "empty"),
    ('{"t": 0}\n', "header"),
    ('{"mcplite_recording": 2}\n', "format 2"),
    (HEADER + "not json\n", "line 2 is not JSON"),
    (HEADER + "[1]\n", "line 2 is not a JSON object"),
    (HEADER + LINE + LINE.replace("0.5", "0.25"), "line 3: t goes back"),
    (HEADER + LINE.replace('"send"', '"sent"'), "dir"),
    (HEADER + LINE.replace('"peer": "p"', '"peer": 1'), "peer"),
    (HEADER + LINE.replace('"message": {"jsonrpc": "2.0", "method": "ping"}', '"message": 3'), "message"),
    (HEADER + '{"t": 1, "peer": "p", "dir": "recv"}\n', "either message or invalid"),
    # Read within the JSON reader's bounds: its own error, never a RecursionError.
    (HEADER + '{"t": 1, "peer": "p", "dir": "recv", "message": ' + "[" * 100000 + "]" * 100000 + "}\n",
     "line 2: nesting deeper than"),
    (HEADER + '{"t": 1e999, "peer": "p", "dir": "recv", "message": {}}\n', "line 2"),
])
def test_the_reader_refuses_what_is_not_a_recording(text: str, problem: str) -> None:
    with pytest.raises(RecordingError, match=problem):
        list(read_recording(io.StringIO(text)))


def test_the_reader_leaves_out_a_last_line_cut_short(tmp_path: Path) -> None:
    path = tmp_path / "cut.jsonl"
    path.write_text(HEADER + LINE + LINE[:30], encoding="utf-8")
    assert [entry["t"] for entry in read_recording(path)] == [0.5]


# ---- what it costs those who do not record ----------------------------------------------------------------------


def test_a_client_or_server_that_does_not_record_does_not_load_the_recorder() -> None:
    code = textwrap.dedent('''
        import sys
        sys.path.insert(0, sys.argv[1])
        from mcplite import Client, Server
        server = Server("quiet")
        @server.tool
        def add(a: int, b: int) -> int:
            return a + b
        with Client(server) as client:
            client.call_tool("add", {"a": 1, "b": 2})
        assert "mcplite.transports.recording" not in sys.modules, "loaded"
        assert "mcplite.recording" not in sys.modules, "loaded"
    ''')
    out = subprocess.run([sys.executable, "-c", code, str(ROOT)], capture_output=True, text=True, timeout=WAIT)
    assert out.returncode == 0, out.stderr


def test_a_legacy_http_sse_session_is_recorded_alike_on_both_sides(tmp_path: Path) -> None:
    client_file, server_file = tmp_path / "client.jsonl", tmp_path / "server.jsonl"
    with HTTPServerThread(make_server(), "127.0.0.1:0", record=server_file) as http:
        # (Pinned: "auto" would first probe with server/discover, which the legacy endpoint refuses before any
        # session sees it, so only the client's recording would hold it.)
        with Client(http.url.replace("/mcp", "/sse"), transport="sse", record=client_file, timeout=WAIT,
                    protocol_version="2025-11-25") as client:
            session(client)
    client_side = check_recording(client_file, [f"127.0.0.1:{http.port}"])
    server_side = check_recording(server_file, {entry["peer"] for entry in lines(server_file)})
    assert len({entry["peer"] for entry in server_side}) == 1  # one session: its id's label
    assert server_side[0]["peer"].endswith("...")
    check_both_sides(client_side, server_side)
