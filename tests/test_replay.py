"""Replaying recordings (issue 36): record a real server once, then serve the recording and get the same results.

examples/everything_server.py runs as a real subprocess while mcplite's client records; the recording is then
served in memory (`ReplayServer`), by ``python3 -m mcplite replay`` over stdio and over ``--http``, and to the
official Python SDK's client. ``python3 -m mcplite record`` sits between a client and a server command as a
stdio pass-through. A request the recording does not hold gets an error naming the closest one it does.
"""

import glob
import json
import os
import re
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

from mcplite import Client, RemoteError, Server
from mcplite.cli import load_server
from mcplite.http_server import HTTPServerThread
from mcplite.recording import read_recording
from mcplite.replay import ReplayServer, differences, normalized

from support import ROOT, WAIT
from support.servers import pid_running

EVERYTHING = [sys.executable, str(ROOT / "examples" / "everything_server.py")]
ENV = {"PYTHONPATH": str(ROOT)}  # the servers import this checkout's mcplite
REPLAY = [sys.executable, "-m", "mcplite", "replay"]
PEERS = Path(os.environ.get("INTEROP_PEERS_DIR") or ROOT / ".peers")
SDK_PYTHON = PEERS / "py" / "bin" / "python"


def sampling(params: Dict[str, Any]) -> Dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "hi there"}, "model": "test-model"}


def elicitation(params: Dict[str, Any]) -> Dict[str, Any]:
    return {"action": "accept", "content": {"username": "ann", "email": "ann@example.com", "ok": True}}


def options(version: str) -> Dict[str, Any]:
    return {"protocol_version": version, "sampling": sampling, "elicitation": elicitation, "timeout": WAIT}


def session(client: Client) -> Dict[str, Any]:
    """The same session for recording and replaying: lists, calls with progress, logs, sampling, elicitation,
    a failing tool, a resource and a prompt. Returns everything the client was given."""
    progress: List[Tuple[Any, Any, Any]] = []
    logs: List[Any] = []
    client.on_log = logs.append  # type: ignore[attr-defined]
    return {
        "tools": client.list_tools(),
        "add": client.call_tool("add", {"a": 2, "b": 3}),
        "progress": client.call_tool("test_tool_with_progress", {},
                                     progress=lambda done, total, message: progress.append((done, total, message))),
        "logging": client.call_tool("test_tool_with_logging", {}),
        "sampling": client.call_tool("test_sampling", {"prompt": "hello"}),
        "elicitation": client.call_tool("test_elicitation", {"message": "who are you?"}),
        "error": client.call_tool("test_error_handling", {}),
        "resources": client.list_resources(),
        "read": client.read_resource("test://static-text"),
        "prompts": client.list_prompts(),
        "prompt": client.get_prompt("test_simple_prompt"),
        "progress seen": progress,
    }


@pytest.fixture(scope="module", params=["2025-11-25", "2026-07-28"])
def recorded(request: Any, tmp_path_factory: pytest.TempPathFactory) -> Tuple[str, Path, Dict[str, Any]]:
    """(revision, the recording, what the client got) of one session with the real everything server."""
    version: str = request.param
    path = tmp_path_factory.mktemp("cassette") / f"everything-{version}.jsonl"
    with Client.stdio(EVERYTHING, env=ENV, record=path, **options(version)) as client:
        results = session(client)
    assert results["progress seen"] == [(0, 100, "Completed step 0 of 100"), (50, 100, "Completed step 50 of 100"),
                                        (100, 100, "Completed step 100 of 100")]
    return version, path, results


def test_a_recording_notes_its_revision_and_replays_in_memory_with_the_same_results(recorded: Any) -> None:
    version, path, results = recorded
    noted = [entry["revision"] for entry in read_recording(path) if "revision" in entry]
    assert noted and set(noted) == {version}
    server = ReplayServer(path)
    with Client(server, **options(version)) as client:
        assert client.protocol_version == version
        assert session(client) == results
    assert server.misses == [] and server.unasked() == []


def test_python_m_mcplite_replay_serves_it_over_stdio(recorded: Any) -> None:
    version, path, results = recorded
    with Client.stdio([*REPLAY, str(path)], env=ENV, **options(version)) as client:
        assert session(client) == results
        process = client.transport.process  # type: ignore[attr-defined]
    assert process.wait(WAIT) == 0


def test_python_m_mcplite_replay_serves_it_over_http(recorded: Any) -> None:
    version, path, results = recorded
    with served_over_http(path) as url:
        with Client(url, **options(version)) as client:
            assert session(client) == results


class served_over_http:
    """``python3 -m mcplite replay CASSETTE --http 127.0.0.1:0`` as a subprocess; its URL, from its banner."""

    def __init__(self, path: Path) -> None:
        self.process = subprocess.Popen([*REPLAY, str(path), "--http", "127.0.0.1:0"], cwd=ROOT,
                                        env={**os.environ, **ENV}, stdin=subprocess.DEVNULL,
                                        stderr=subprocess.PIPE, text=True)

    def __enter__(self) -> str:
        assert self.process.stderr is not None
        found: List[str] = []
        reader = threading.Thread(target=lambda: found.append(self.process.stderr.readline()),  # type: ignore
                                  daemon=True)
        reader.start()
        reader.join(WAIT)
        match = re.search(r"(http://\S+)", found[0] if found else "")
        assert match, f"no banner: {found}"
        return match.group(1)

    def __exit__(self, *exc_info: Any) -> None:
        self.process.terminate()
        assert self.process.wait(WAIT) == 0  # SIGTERM: a graceful stop


def test_an_unrecorded_request_gets_an_error_naming_the_closest_recorded_one(recorded: Any) -> None:
    version, path, _ = recorded
    server = ReplayServer(path)
    with Client(server, **options(version)) as client:
        with pytest.raises(RemoteError) as caught:
            client.call_tool("add", {"a": 2, "b": 5})
        assert caught.value.code == -32602
        message = caught.value.message
        assert 'the closest recorded is tools/call {"arguments": {"a": 2, "b": 3}, "name": "add"}' in message
        assert "params.arguments.b: recorded 3, asked 5" in message
        assert caught.value.data["closest"]["params"]["arguments"] == {"a": 2, "b": 3}
        with pytest.raises(RemoteError) as caught:
            client.complete({"type": "ref/prompt", "name": "test_simple_prompt"}, "x")
        assert caught.value.code == -32601 and "completion/complete is not in the recording" in caught.value.message
        assert client.call_tool("add", {"a": 2, "b": 3})["structuredContent"] == {"result": 5}  # still serving
    assert [method for method, _ in server.misses] == ["tools/call", "completion/complete"]


def test_matching_leaves_out_what_varies_and_a_redacted_value_matches_any() -> None:
    asked = {"name": "t", "requestState": "sealed-1", "when": "2026-01-31T12:00:00.123Z",
             "_meta": {"progressToken": 7, "io.modelcontextprotocol/clientInfo": {"name": "x"}, "mine": 1}}
    assert normalized(asked) == {"name": "t", "when": "<timestamp>", "_meta": {"mine": 1}}
    assert differences(normalized({"password": "[redacted]", "n": 1}), {"password": "hunter2", "n": 1}) == []
    assert differences({"a": [1, 2]}, {"a": [1, 3], "b": 0}) == ["params.a[1]: recorded 2, asked 3",
                                                                "params.b: not recorded, asked 0"]


# ---- python3 -m mcplite record: a stdio pass-through ----------------------------------------------------------
def test_record_passes_a_whole_session_through_and_leaves_no_process(tmp_path: Path) -> None:
    out = tmp_path / "demo.jsonl"
    demo = [sys.executable, str(ROOT / "examples" / "demo_server.py")]
    with Client.stdio([sys.executable, "-m", "mcplite", "record", str(out), "--", *demo], env=ENV,
                      timeout=WAIT) as client:
        assert client.call_tool("add", {"a": 2, "b": 40})["structuredContent"] == {"result": 42}
        tools = client.list_tools()
        recorder = client.transport.process  # type: ignore[attr-defined]
        server_pid = int(subprocess.check_output(["pgrep", "-P", str(recorder.pid)], text=True).split()[0])
    assert recorder.wait(WAIT) == 0
    assert not pid_running(server_pid)
    assert os.stat(out).st_mode & 0o777 == 0o600
    entries = list(read_recording(out))
    assert {entry["peer"] for entry in entries} == {" ".join(demo)}
    methods = [entry["message"].get("method") for entry in entries if entry["dir"] == "send"]
    assert methods[0] in ("server/discover", "initialize") and "tools/call" in methods and methods[-1] == "tools/list"
    answers = [entry["message"] for entry in entries if entry["dir"] == "recv"]
    assert answers[-1]["result"]["tools"] == tools  # what the client got is what was recorded
    with Client(ReplayServer(out), timeout=WAIT) as client:  # and it replays
        assert client.call_tool("add", {"a": 2, "b": 40})["structuredContent"] == {"result": 42}


def test_record_ends_when_the_server_ends_and_refuses_a_url(tmp_path: Path) -> None:
    out = tmp_path / "gone.jsonl"
    done = subprocess.run([sys.executable, "-m", "mcplite", "record", str(out), "--", sys.executable, "-c",
                           "print('not json'); import sys; sys.exit(5)"], cwd=ROOT, capture_output=True,
                          text=True, timeout=WAIT, stdin=subprocess.PIPE)  # our stdin stays open: the server ends it
    assert done.returncode == 3 and done.stdout == "not json\n" and "status 5" in done.stderr
    assert [entry["dir"] for entry in read_recording(out)] == ["recv"] and "invalid" in list(read_recording(out))[0]


# ---- record OUT -- URL: a stdio-to-HTTP bridge -----------------------------------------------------------------
@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
def test_record_bridges_stdio_to_an_http_server_and_the_recording_replays(tmp_path: Path, version: str) -> None:
    """A stdio client through ``record OUT -- URL`` to the everything server over HTTP: the whole session works in
    either era (the server's requests, sampling and elicitation, come back through the bridge and the answers go
    out), and the recording replays to the same results."""
    server = load_server(str(ROOT / "examples" / "everything_server.py"))
    out = tmp_path / "bridged.jsonl"
    with HTTPServerThread(server, "127.0.0.1:0") as http:
        with Client.stdio([sys.executable, "-m", "mcplite", "record", str(out), "--", http.url], env=ENV,
                          **options(version)) as client:
            live = session(client)
            bridge = client.transport.process  # type: ignore[attr-defined]
    assert bridge.wait(WAIT) == 0
    assert live["add"]["structuredContent"] == {"result": 5}
    assert live["elicitation"]["content"] and "ann" in json.dumps(live["elicitation"])
    assert len(live["progress seen"]) == 3
    entries = list(read_recording(out))
    assert {entry["dir"] for entry in entries if "message" in entry} == {"send", "recv"}
    assert any(entry.get("revision") == version for entry in entries)
    with Client(ReplayServer(str(out)), **options(version)) as replayed:
        again = session(replayed)
    assert again == live


def test_record_to_a_url_answers_a_refused_request_with_an_error_and_ends_with_the_client(tmp_path: Path) -> None:
    """Nothing listens at the URL: the client's request gets a JSON-RPC error naming the failure (not a hang),
    and the bridge ends when the client's input does."""
    from support.servers import free_port

    out = tmp_path / "refused.jsonl"
    line = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
    done = subprocess.run([sys.executable, "-m", "mcplite", "record", str(out), "--",
                           f"http://127.0.0.1:{free_port()}/mcp"], cwd=ROOT, input=line + "\n", capture_output=True,
                          text=True, timeout=WAIT)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["id"] == 1 and answer["error"]["code"] == -32000 and "mcplite record" in answer["error"]["message"]
    assert [entry["dir"] for entry in read_recording(out)] == ["send", "recv"]


# ---- the official Python SDK's client ---------------------------------------------------------------------------
SDK_CLIENT = textwrap.dedent('''
    import json, sys
    import anyio
    from mcp import Client, StdioServerParameters

    def wire(model):
        return model.model_dump(by_alias=True, exclude_none=True, mode="json")

    async def main():
        server = StdioServerParameters(command=sys.argv[1], args=sys.argv[2:], env={"PYTHONPATH": %r})
        async with Client(server, mode="legacy", read_timeout_seconds=30) as client:
            tools = await client.list_tools()
            results = {"tools": sorted(tool.name for tool in tools.tools)}
            for name, arguments in [("add", {"a": 2, "b": 3}), ("test_simple_text", {}),
                                    ("test_error_handling", {}), ("test_image_content", {})]:
                results[name] = wire(await client.call_tool(name, arguments))
            results["read"] = wire(await client.read_resource("test://static-text"))
            results["prompt"] = wire(await client.get_prompt("test_simple_prompt"))
        print(json.dumps(results))

    anyio.run(main)
''' % str(ROOT))


def run_sdk_client(script: Path, *server: str) -> Dict[str, Any]:
    done = subprocess.run([str(SDK_PYTHON), str(script), *server], capture_output=True, text=True, timeout=WAIT * 3,
                          stdin=subprocess.DEVNULL, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    result: Dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_the_python_sdks_client_recorded_through_record_gets_the_same_results_from_replay(tmp_path: Path) -> None:
    if not (SDK_PYTHON.exists() and glob.glob(str(PEERS / "py" / "lib" / "python3*" / "site-packages" / "mcp-*"))):
        pytest.skip(f"the official Python SDK is not installed in {PEERS / 'py'} (tests/interop/run.py "
                    "--install-python-sdk)")
    script = tmp_path / "sdk_client.py"
    script.write_text(SDK_CLIENT)
    out = tmp_path / "sdk.jsonl"
    live = run_sdk_client(script, sys.executable, "-m", "mcplite", "record", str(out), "--", *EVERYTHING)
    assert live["add"]["structuredContent"] == {"result": 5} and live["test_error_handling"]["isError"] is True
    assert [entry["message"].get("method") for entry in read_recording(out)][0] == "initialize"
    assert run_sdk_client(script, *REPLAY, str(out)) == live


# ---- a recording made by the gateway ----------------------------------------------------------------------------
def test_a_gateway_recording_replays_its_front(tmp_path: Path) -> None:
    config = tmp_path / "gw.json"
    recording = tmp_path / "gateway.jsonl"
    demo = {"command": sys.executable, "args": ["-m", "examples.demo_server"], "cwd": str(ROOT), "env": ENV}
    config.write_text(json.dumps({"mcpServers": {"demo": demo}}))
    with Client.stdio([sys.executable, "-m", "mcplite", "gateway", str(config), "--record", str(recording)],
                      cwd=str(ROOT), env=ENV, timeout=WAIT) as client:
        live = (client.list_tools(), client.call_tool("demo_add", {"a": 2, "b": 5}))
    with pytest.raises(Exception, match="no peer 'nobody'"):
        ReplayServer(recording, peer="nobody")
    with Client(ReplayServer(recording), timeout=WAIT) as client:  # the front: what the gateway served
        assert (client.list_tools(), client.call_tool("demo_add", {"a": 2, "b": 5})) == live
    with Client(ReplayServer(recording, peer="demo"), timeout=WAIT) as client:  # or one of its upstreams
        assert client.call_tool("add", {"a": 2, "b": 5})["structuredContent"] == {"result": 7}


# ---- the format: headers, the revision, secrets ---------------------------------------------------------------
def test_an_http_recording_holds_the_headers_redacted_and_the_request_state_is_a_placeholder(tmp_path: Path) -> None:
    server: Server = load_server(str(ROOT / "examples" / "everything_server.py"))
    client_file, server_file = tmp_path / "client.jsonl", tmp_path / "server.jsonl"
    token = "s3cret-token-0123456789abcdef"
    from mcplite.oauth.bearer import StaticTokenAuth

    with HTTPServerThread(server, "127.0.0.1:0", record=server_file, authenticate=StaticTokenAuth([token])) as http:
        with Client(http.url, record=client_file, headers={"Authorization": f"Bearer {token}",
                                                           "Cookie": "sid=hunter2"}, **options("2026-07-28")) as client:
            live = client.call_tool("test_input_required_result_request_state", {})
    assert "state-ok: confirmed=True" in live["content"][0]["text"]
    for path in (client_file, server_file):
        text = path.read_text()
        assert token not in text and "hunter2" not in text
        entries = list(read_recording(path))
        states = [entry["message"]["params"]["requestState"] for entry in entries
                  if "requestState" in (entry["message"].get("params") or {})]
        states += [entry["message"]["result"]["requestState"] for entry in entries
                   if "requestState" in (entry["message"].get("result") or {})]
        assert states and set(states) == {"[redacted]"}
    headers = [entry["headers"] for entry in read_recording(server_file) if "headers" in entry]
    assert all(entry["dir"] == "recv" for entry in read_recording(server_file) if "headers" in entry)
    assert headers and all(h["authorization"] == "[redacted]" and h["cookie"] == "[redacted]" for h in headers)
    assert all(h["mcp-protocol-version"] == "2026-07-28" for h in headers)
    sent = [entry["headers"] for entry in read_recording(client_file) if entry["dir"] == "send" and "headers" in entry]
    assert any(h.get("Mcp-Method") == "tools/call" for h in sent)
    with Client(ReplayServer(client_file), **options("2026-07-28")) as client:  # the input rounds replay too
        assert client.call_tool("test_input_required_result_request_state", {}) == live


# ---- Python 3.9 writes, 3.13 reads ------------------------------------------------------------------------------
def _pyenv(minor: str) -> str:
    found = sorted(glob.glob(f"/root/.pyenv/versions/3.{minor}.*/bin/python3"))
    if not found:
        pytest.skip(f"Python 3.{minor} is not installed under /root/.pyenv/versions")
    return found[-1]


def test_a_recording_written_by_python_3_9_replays_on_3_13(tmp_path: Path) -> None:
    old, new = _pyenv("9"), _pyenv("13")
    out = tmp_path / "py39.jsonl"
    client = textwrap.dedent('''
        import json, sys
        from mcplite import Client
        with Client.stdio(sys.argv[2:], record=sys.argv[1] if sys.argv[1] != "-" else None,
                          protocol_version="2025-11-25", env={"PYTHONPATH": %r}, timeout=30) as client:
            print(json.dumps([client.call_tool("add", {"a": 2, "b": 3}), client.list_prompts()]))
    ''' % str(ROOT))
    env = {**os.environ, **ENV}
    recorded = subprocess.run([old, "-c", client, str(out), old, *EVERYTHING[1:]], capture_output=True, text=True,
                              env=env, cwd=ROOT, timeout=WAIT * 3)
    assert recorded.returncode == 0, recorded.stderr[-2000:]
    replayed = subprocess.run([new, "-c", client, "-", new, "-m", "mcplite", "replay", str(out)],
                              capture_output=True, text=True, env=env, cwd=ROOT, timeout=WAIT * 3)
    assert replayed.returncode == 0, replayed.stderr[-2000:]
    assert json.loads(replayed.stdout) == json.loads(recorded.stdout)


def test_record_cuts_lines_of_any_size_in_pieces_and_bounds_the_one_it_keeps(tmp_path: Path) -> None:
    """The recorder's line cutter: lines split across reads are whole in the recording; a line past the bound is
    recorded as invalid and its rest dropped (what passes through is untouched: it is not the cutter's)."""
    from mcplite.cli.record import _Lines
    from mcplite.recording import Recorder

    out = tmp_path / "cut.jsonl"
    recorder = Recorder(str(out))
    lines = _Lines(recorder, "server", sent=False)
    lines.max_line_size = 100
    message = json.dumps({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}})
    for piece in (message[:10].encode(), message[10:].encode() + b"\n" + b"x" * 80, b"y" * 80,
                  b"z\n" + message.encode() + b"\n"):
        lines.feed(piece)
    lines.finish()
    recorder.close()
    entries = [entry for entry in read_recording(out)]
    assert [entry.get("message", {}).get("method") for entry in entries if "message" in entry] == \
        ["notifications/progress", "notifications/progress"]
    invalid = [entry["invalid"] for entry in entries if "invalid" in entry]
    assert invalid == ["a line of more than 100 bytes (not recorded)"]
