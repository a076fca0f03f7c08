"""The command line (`mcplite.cli`): its pieces, then every command against the fixture server.

Most tests run `main([...])` in this process (stdout and stderr captured) against the fixture
`examples/everything_server.py` spawned over stdio by `python -m mcplite serve`, so each command crosses a
real process boundary. The HTTP tests serve the same fixture with `serve --http` and are skipped until
`mcplite.http_server` exists.
"""

import importlib.util
import io
import json
import os
import select
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator, List, Tuple

import pytest

from mcplite import Server
from mcplite.cli import (
    StderrReporter, UsageError, emit, load_server, main, parse_header, parse_target, split_target,
    target_from_config, tool_arguments,
)

from support import ROOT, WAIT, wait_until
from support.servers import harness_env, harness_env_options

FIXTURE = str(ROOT / "examples" / "everything_server.py")
SERVE_FIXTURE = [sys.executable, "-m", "mcplite", "serve", FIXTURE]


@pytest.fixture(autouse=True)
def importable_package(monkeypatch: pytest.MonkeyPatch) -> None:
    """`mcplite` subprocesses import mcplite from this checkout, wherever pytest runs, and pass that on to the
    servers they spawn (see `cli`), which inherit no PYTHONPATH by default."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))


def run(capsys: pytest.CaptureFixture, *argv: str) -> Tuple[int, str, str]:
    """main(argv) -> (exit status, stdout, stderr)."""
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def run_json(capsys: pytest.CaptureFixture, *argv: str) -> Any:
    status, out, err = run(capsys, *argv)
    assert status == 0, err
    return json.loads(out)


# ---- the target ---------------------------------------------------------------------------------------
def test_split_target_at_the_first_separator_only() -> None:
    assert split_target(["call", "x", "--", "srv", "--", "y"]) == (["call", "x"], ["srv", "--", "y"])
    assert split_target(["ping"]) == (["ping"], None)


def test_parse_target_url_or_command() -> None:
    assert parse_target(["http://h:1/mcp"]).url == "http://h:1/mcp"
    assert parse_target(["https://h/mcp"]).url == "https://h/mcp"
    assert parse_target(["python3", "s.py"]).argv == ["python3", "s.py"]
    assert parse_target(["server"]).argv == ["server"]
    with pytest.raises(UsageError):
        parse_target([])


def write_config(tmp_path: Path, servers: Any) -> str:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return str(path)


def test_config_command_entry(tmp_path: Path) -> None:
    path = write_config(tmp_path, {"a": {"command": "py", "args": ["s.py", "-v"], "env": {"K": "V"}, "cwd": "/tmp"},
                                   "b": {"url": "http://h/mcp", "headers": {"X-Key": "1"}}})
    target = target_from_config(path, "a")
    assert (target.argv, target.env, target.cwd, target.url) == (["py", "s.py", "-v"], {"K": "V"}, "/tmp", None)
    target = target_from_config(path, "b")
    assert (target.url, target.headers, target.argv) == ("http://h/mcp", {"X-Key": "1"}, None)


def test_config_with_one_server_needs_no_name(tmp_path: Path) -> None:
    assert target_from_config(write_config(tmp_path, {"only": {"command": "x"}}), None).argv == ["x"]


@pytest.mark.parametrize("servers, name, message", [
    ({"a": {"command": "x"}, "b": {"command": "y"}}, None, "choose one with --server (a, b)"),
    ({"a": {"command": "x"}}, "zz", "no server 'zz' (it has: a)"),
    ({"a": {"args": []}}, "a", 'neither "command" nor "url"'),
    ({"a": {"command": "x", "args": "s.py"}}, "a", '"args" must be a list of strings'),
    ({"a": {"url": "http://h", "headers": {"n": 1}}}, "a", '"headers" must be an object of strings'),
    ({}, None, 'no "mcpServers" object'),
])
def test_config_errors(tmp_path: Path, servers: Any, name: Any, message: str) -> None:
    with pytest.raises(UsageError) as caught:
        target_from_config(write_config(tmp_path, servers), name)
    assert message in str(caught.value)


def test_config_file_problems(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="cannot read"):
        target_from_config(str(tmp_path / "missing.json"), None)
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    with pytest.raises(UsageError, match="not valid JSON"):
        target_from_config(str(bad), None)


def test_parse_header() -> None:
    assert parse_header("Authorization: Bearer a:b") == ("Authorization", "Bearer a:b")
    for bad in ("no-colon", ": value"):
        with pytest.raises(UsageError):
            parse_header(bad)


# ---- argument coercion --------------------------------------------------------------------------------
SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "count": {"type": "integer"},
        "ratio": {"type": "number"},
        "flag": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "where": {"$ref": "#/$defs/place"},
    },
    "$defs": {"place": {"type": "object", "properties": {"city": {"type": "string"}}}},
}


def test_values_are_read_by_their_schema() -> None:
    arguments = tool_arguments(["name=007", "count=7", "ratio=0.5", "flag=true", 'tags=["a","b"]',
                                'where={"city": "Oslo"}'], None, SCHEMA)
    assert arguments == {"name": "007", "count": 7, "ratio": 0.5, "flag": True, "tags": ["a", "b"],
                         "where": {"city": "Oslo"}}


def test_a_string_field_keeps_text_that_looks_like_json() -> None:
    assert tool_arguments(["name=true", "name2=true"], None, SCHEMA) == {"name": "true", "name2": True}


def test_keys_the_schema_does_not_describe_are_json_when_they_parse() -> None:
    assert tool_arguments(["n=12", "s=hello", "o={\"a\": 1}", "e="], None, {}) == {
        "n": 12, "s": "hello", "o": {"a": 1}, "e": ""}


def test_args_json_is_overlaid_by_pairs() -> None:
    assert tool_arguments(["count=2"], '{"count": 1, "name": "x"}', SCHEMA) == {"count": 2, "name": "x"}


@pytest.mark.parametrize("pairs, args_json, message", [
    (["count=many"], None, 'count=many: cannot parse "many" as integer'),
    (["novalue"], None, "'novalue': expected key=value"),
    (["=1"], None, "expected key=value"),
    ([], "[1]", "--args must be a JSON object"),
    ([], "{", "--args is not valid JSON"),
])
def test_argument_errors(pairs: List[str], args_json: Any, message: str) -> None:
    with pytest.raises(UsageError) as caught:
        tool_arguments(pairs, args_json, SCHEMA)
    assert message in str(caught.value)


# ---- stdout and stderr --------------------------------------------------------------------------------
class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_emit_is_indented_only_on_a_terminal() -> None:
    pipe, terminal = io.StringIO(), Terminal()
    emit({"a": [1]}, pipe)
    emit({"a": [1]}, terminal)
    assert pipe.getvalue() == '{"a": [1]}\n'
    assert terminal.getvalue() == '{\n  "a": [\n    1\n  ]\n}\n'


def test_reporter_writes_lines_to_a_pipe() -> None:
    stream = io.StringIO()
    reporter = StderrReporter(stream)
    reporter.progress(1, 4, "one")
    reporter.log({"level": "warning", "logger": "db", "data": {"rows": 3}})
    reporter.progress(2, None, None)
    reporter.finish()
    assert stream.getvalue() == 'progress: 1/4 one\n[warning] db: {"rows": 3}\nprogress: 2\n'


def test_reporter_draws_a_bar_on_a_terminal() -> None:
    stream = Terminal()
    reporter = StderrReporter(stream)
    reporter.progress(50, 100, None)
    assert stream.getvalue().endswith("[" + "#" * 15 + "-" * 15 + "] 50/100")
    reporter.log({"level": "info", "data": "hello"})  # a log line starts below the bar
    assert stream.getvalue().endswith("50/100\n[info] hello\n")
    reporter.progress(100, 100, "done")
    reporter.finish()
    assert stream.getvalue().endswith("[" + "#" * 30 + "] 100/100 done\n")


# ---- serve: finding the Server ------------------------------------------------------------------------
def write_module(tmp_path: Path, name: str, body: str) -> str:
    path = tmp_path / f"{name}.py"
    path.write_text("from mcplite import Server\n" + body)
    return str(path)


def test_load_server_finds_the_only_server(tmp_path: Path) -> None:
    path = write_module(tmp_path, "one_server", "app = Server('one')\nalias = app\n")
    server = load_server(path)
    assert isinstance(server, Server) and server.name == "one"


def test_load_server_by_object_name(tmp_path: Path) -> None:
    path = write_module(tmp_path, "two_servers", "a = Server('a')\nclass Box:\n    b = Server('b')\n")
    assert load_server(f"{path}:Box.b").name == "b"
    assert load_server(f"{path}:a").name == "a"


def test_load_server_by_module_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_module(tmp_path, "cli_module_server", "srv = Server('by-module')\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    assert load_server("cli_module_server").name == "by-module"


@pytest.mark.parametrize("body, suffix, message", [
    ("a = Server('a')\nb = Server('b')\n", "", "several Server objects (a, b)"),
    ("x = 1\n", "", "defines no Server object"),
    ("x = 1\n", ":x", "is a int, not a Server"),
    ("x = 1\n", ":y", "has no 'y'"),
    ("raise RuntimeError('broken at import')\n", "", "RuntimeError: broken at import"),
])
def test_load_server_errors(tmp_path: Path, body: str, suffix: str, message: str) -> None:
    path = write_module(tmp_path, f"bad_{abs(hash(body + suffix))}", body)
    with pytest.raises(UsageError) as caught:
        load_server(path + suffix)
    assert message in str(caught.value)


def test_load_server_missing_file(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such file"):
        load_server(str(tmp_path / "absent.py"))


def test_serve_options_need_http(capsys: pytest.CaptureFixture) -> None:
    status, out, err = run(capsys, "serve", FIXTURE, "--stateless")
    assert status == 2 and "need --http" in err


# ---- every command, over stdio ------------------------------------------------------------------------
def test_info(capsys: pytest.CaptureFixture) -> None:
    info = run_json(capsys, "info", "--", *SERVE_FIXTURE)
    assert (info["protocolVersion"], info["era"]) == ("2026-07-28", "envelope")  # "auto": the fixture speaks it
    assert info["serverInfo"]["name"] == "mcplite-everything"
    assert set(info["capabilities"]) >= {"tools", "resources", "prompts", "logging", "completions"}
    assert info["instructions"].startswith("The conformance suite's fixture")


def test_protocol_version_option(capsys: pytest.CaptureFixture) -> None:
    info = run_json(capsys, "--protocol-version", "2025-03-26", "info", "--", *SERVE_FIXTURE)
    assert (info["protocolVersion"], info["era"]) == ("2025-03-26", "handshake")
    assert info["serverInfo"]["name"] == "mcplite-everything"


@pytest.mark.parametrize("kind, key, expected", [
    ("tools", "tools", {"add", "test_simple_text", "test_reconnection", "json_schema_2020_12_tool"}),
    ("resources", "resources", {"test://static-text", "test://static-binary", "test://watched-resource"}),
    ("templates", "resourceTemplates", {"test://template/{id}/data"}),
    ("prompts", "prompts", {"test_simple_prompt", "test_prompt_with_arguments", "test_prompt_with_image"}),
])
def test_list(capsys: pytest.CaptureFixture, kind: str, key: str, expected: set) -> None:
    listed = run_json(capsys, "list", kind, "--", *SERVE_FIXTURE)
    assert list(listed) == [key]
    names = {item.get("name") if kind in ("tools", "prompts") else item.get("uri", item.get("uriTemplate"))
             for item in listed[key]}
    assert expected <= names


def test_call_coerces_by_the_input_schema(capsys: pytest.CaptureFixture) -> None:
    result = run_json(capsys, "call", "add", "a=2", "b=40", "--", *SERVE_FIXTURE)
    assert result["structuredContent"] == {"result": 42}


def test_call_keeps_string_fields_text_and_follows_refs(capsys: pytest.CaptureFixture) -> None:
    # json_schema_2020_12_tool lists name as a string and address as a "$ref" into "$defs" (and requires a
    # phone or an email).
    result = run_json(capsys, "call", "json_schema_2020_12_tool", "name=007", 'address={"city": "Oslo"}',
                      "email=ada@example.com", "--", *SERVE_FIXTURE)
    echoed = json.loads(result["content"][0]["text"].split("with: ", 1)[1])
    assert echoed == {"name": "007", "address": {"city": "Oslo"}, "email": "ada@example.com"}


def test_call_with_args_json(capsys: pytest.CaptureFixture) -> None:
    result = run_json(capsys, "call", "add", "--args", '{"a": 1, "b": 1}', "b=5", "--", *SERVE_FIXTURE)
    assert result["structuredContent"] == {"result": 6}


def test_call_tool_error_exits_1(capsys: pytest.CaptureFixture) -> None:
    status, out, err = run(capsys, "call", "test_error_handling", "--", *SERVE_FIXTURE)
    assert status == 1
    assert json.loads(out)["isError"] is True
    assert err.strip() == ("mcplite: tool test_error_handling returned an error: RuntimeError: "
                           "This tool intentionally returns an error for testing")


RAW_ERROR_SERVER = """
import json, sys

for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue  # a notification
    method, answer = msg["method"], None
    if method == "initialize":
        answer = {"result": {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                             "serverInfo": {"name": "raw", "version": "1"}}}
    elif method == "tools/list":
        answer = {"result": {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}}
    elif method == "tools/call":  # a content list that is not all blocks: the summary skips what is not one
        answer = {"result": {"content": ["junk", 7, {"type": "text", "text": "bad\\n  thing"}], "isError": True}}
    else:
        answer = {"error": {"code": -32601, "message": "Method not found"}}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], **answer}) + "\\n")
    sys.stdout.flush()
"""


def test_call_tool_error_summary_skips_content_that_is_not_a_block(capsys: pytest.CaptureFixture,
                                                                     tmp_path: Path) -> None:
    script = tmp_path / "raw_error_server.py"
    script.write_text(RAW_ERROR_SERVER)
    status, out, err = run(capsys, "call", "t", "--", sys.executable, str(script))
    assert status == 1 and json.loads(out)["content"][0] == "junk"
    assert err.strip() == "mcplite: tool t returned an error: bad thing"


def test_call_progress_goes_to_stderr(capsys: pytest.CaptureFixture) -> None:
    status, out, err = run(capsys, "call", "test_tool_with_progress", "--", *SERVE_FIXTURE)
    assert status == 0 and json.loads(out)["content"][0]["text"] == "Tool with progress executed successfully"
    assert [line for line in err.splitlines() if line.startswith("progress:")] == [
        "progress: 0/100 Completed step 0 of 100", "progress: 50/100 Completed step 50 of 100",
        "progress: 100/100 Completed step 100 of 100"]


def test_call_logs_go_to_stderr(capsys: pytest.CaptureFixture) -> None:
    status, out, err = run(capsys, "call", "test_tool_with_logging", "--", *SERVE_FIXTURE)
    assert status == 0 and "Tool with logging executed successfully" in out
    assert [line for line in err.splitlines() if line.startswith("[info]")] == [
        "[info] Tool execution started", "[info] Tool processing data", "[info] Tool execution completed"]


def test_read(capsys: pytest.CaptureFixture) -> None:
    result = run_json(capsys, "read", "test://template/42/data", "--", *SERVE_FIXTURE)
    assert result["contents"][0]["uri"] == "test://template/42/data"
    assert json.loads(result["contents"][0]["text"])["id"] == "42"


def test_prompt_arguments_stay_text(capsys: pytest.CaptureFixture) -> None:
    result = run_json(capsys, "prompt", "test_prompt_with_arguments", "arg1=1", "arg2=x y", "--", *SERVE_FIXTURE)
    assert result["messages"][0]["content"]["text"] == "Prompt with arguments: arg1='1', arg2='x y'"


def test_complete_prompt_argument(capsys: pytest.CaptureFixture) -> None:
    result = run_json(capsys, "complete", "prompt", "test_prompt_with_arguments", "arg1", "par", "--", *SERVE_FIXTURE)
    assert result == {"completion": {"values": ["paris", "park", "party"]}}


def test_complete_template_variable(capsys: pytest.CaptureFixture) -> None:
    result = run_json(capsys, "complete", "resource", "test://template/{id}/data", "id", "4",
                      "--context", "other=1", "--", *SERVE_FIXTURE)
    assert result == {"completion": {"values": ["42"]}}


def test_ping(capsys: pytest.CaptureFixture) -> None:
    assert run_json(capsys, "ping", "--", *SERVE_FIXTURE) == {}


def test_config_file_target(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    path = write_config(tmp_path, {"everything": {"command": sys.executable,
                                                  "args": ["-m", "mcplite", "serve", FIXTURE],
                                                  "env": {"UNUSED": "1", **harness_env()}, "cwd": str(tmp_path)},
                                   "other": {"url": "http://127.0.0.1:9/mcp"}})
    result = run_json(capsys, "--config", path, "--server", "everything", "call", "add", "a=1", "b=2")
    assert result["structuredContent"] == {"result": 3}


# ---- exit codes ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("argv, message", [
    (["call", "no_such_tool", "--", *SERVE_FIXTURE], "the server has no tool 'no_such_tool'"),
    (["call", "add", "a=one", "--", *SERVE_FIXTURE], 'a=one: cannot parse "one" as integer'),
    (["ping"], "no server"),
    (["--header", "K: V", "ping", "--", *SERVE_FIXTURE], "--header only applies to an http(s) server"),
    (["--server", "x", "ping"], "--server needs --config"),
    (["--config", "x.json", "ping", "--", "srv"], "not both"),
    (["frobnicate", "--", "srv"], "invalid choice: 'frobnicate'"),
    (["list", "things", "--", "srv"], "invalid choice: 'things'"),
    (["--protocol-version", "1999-01-01", "ping", "--", "srv"], "invalid choice: '1999-01-01'"),
    (["serve", FIXTURE, "--", "x"], "serve takes no server after --"),
])
def test_usage_errors_exit_2_with_one_line(capsys: pytest.CaptureFixture, argv: List[str], message: str) -> None:
    status, out, err = run(capsys, *argv)
    assert status == 2 and out == ""
    assert len(err.splitlines()) == 1 and err.startswith("mcplite: ") and message in err


@pytest.mark.parametrize("argv, message", [
    (["read", "test://nowhere", "--", *SERVE_FIXTURE], "RemoteError: Resource not found: test://nowhere"),
    (["ping", "--", sys.executable, "-c", "pass"], "Connection"),  # the server exits at once
    (["ping", "--", str(ROOT / "no-such-server")], "cannot start"),
])
def test_protocol_and_connection_errors_exit_3(capsys: pytest.CaptureFixture, argv: List[str], message: str) -> None:
    status, out, err = run(capsys, *argv)
    assert status == 3 and out == ""
    assert len(err.splitlines()) == 1 and message in err


@pytest.mark.parametrize("command", ["info", "list", "call", "read", "prompt", "complete", "ping", "serve"])
def test_every_command_has_help_with_an_example(capsys: pytest.CaptureFixture, command: str) -> None:
    status, out, err = run(capsys, command, "--help")
    assert status == 0
    examples = out.split("examples:\n", 1)[1]
    assert f"mcplite {command} " in examples


def test_python_dash_m_entry_point() -> None:
    """`python -m mcplite` runs main and exits with its status."""
    done = subprocess.run([sys.executable, "-m", "mcplite", "call", "add", "a=3", "b=4", "--", *SERVE_FIXTURE],
                          capture_output=True, text=True, timeout=WAIT, cwd=str(ROOT))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["structuredContent"] == {"result": 7}
    done = subprocess.run([sys.executable, "-m", "mcplite", "--help"], capture_output=True, text=True,
                          timeout=WAIT, cwd=str(ROOT))
    assert done.returncode == 0 and done.stdout.startswith("usage: python -m mcplite")


# ---- over HTTP ----------------------------------------------------------------------------------------
needs_http = pytest.mark.skipif(importlib.util.find_spec("mcplite.http_server") is None,
                                reason="mcplite.http_server is not written yet")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for_port(port: int, process: "subprocess.Popen[bytes]") -> None:
    """Block until the server accepts connections (or fail after WAIT seconds)."""
    def listening() -> bool:  # the server is still starting: nothing to be notified by but the port itself
        assert process.poll() is None, "the server exited before listening"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            return False

    wait_until(listening, message=f"nothing listened on port {port}")


def http_fixture(*options: str) -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen([*SERVE_FIXTURE, "--http", f"127.0.0.1:{port}", *options],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(WAIT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(WAIT)


@pytest.fixture
def http_server() -> Iterator[str]:
    yield from http_fixture()


@needs_http
def test_http_commands(capsys: pytest.CaptureFixture, http_server: str) -> None:
    url = f"{http_server}/mcp"
    assert run_json(capsys, "info", "--", url)["serverInfo"]["name"] == "mcplite-everything"
    assert "add" in {tool["name"] for tool in run_json(capsys, "list", "tools", "--", url)["tools"]}
    assert run_json(capsys, "--header", "X-Test: 1", "call", "add", "a=1", "b=2", "--", url)[
        "structuredContent"] == {"result": 3}
    assert run_json(capsys, "read", "test://static-text", "--", url)["contents"][0]["text"].startswith("This is")
    assert run_json(capsys, "ping", "--", url) == {}
    status, out, err = run(capsys, "call", "test_tool_with_progress", "--", url)
    assert status == 0 and err.count("progress:") == 3


@needs_http
def test_http_legacy_sse_endpoint(capsys: pytest.CaptureFixture, http_server: str) -> None:
    result = run_json(capsys, "--protocol-version", "2024-11-05", "call", "add", "a=2", "b=2", "--",
                      f"{http_server}/sse")
    assert result["content"][0]["text"] == "4"


@needs_http
@pytest.mark.parametrize("option", ["--stateless", "--json-response"])
def test_http_serve_modes(capsys: pytest.CaptureFixture, option: str) -> None:
    for base in http_fixture(option):
        assert run_json(capsys, "call", "add", "a=5", "b=5", "--", f"{base}/mcp")["structuredContent"] == {
            "result": 10}


def test_http_connection_refused_exits_3(capsys: pytest.CaptureFixture) -> None:
    status, out, err = run(capsys, "ping", "--", f"http://127.0.0.1:{free_port()}/mcp")
    assert status == 3 and out == "" and len(err.splitlines()) == 1


# ---- answering questions, roots, listening ----------------------------------------------------------------
def cli(*argv: str, stdin: str = "") -> subprocess.CompletedProcess:
    """``python -m mcplite ARGV`` in a process of its own, ``stdin`` piped in (so not a terminal)."""
    return subprocess.run([sys.executable, "-m", "mcplite", *harness_env_options(argv), *argv], input=stdin,
                          capture_output=True, text=True, timeout=WAIT * 2)


@pytest.mark.parametrize("version", ["auto", "2025-11-25"])
def test_ask_answers_a_form_from_stdin(version: str) -> None:
    """On 2026-07-28 the question comes back as an input-required round, on 2025-11-25 as a request: the
    same prompts on stderr, the same answers from stdin."""
    done = cli("--protocol-version", version, "--ask", "call", "test_elicitation", "message=Who are you?", "--",
               *SERVE_FIXTURE, stdin="\nada\nada@example.com\n")
    assert done.returncode == 0, done.stderr
    assert '"username": "ada"' in json.loads(done.stdout)["content"][0]["text"]
    assert "The server asks: Who are you?" in done.stderr and "email" in done.stderr


def test_ask_declines_and_the_end_of_input_cancels() -> None:
    declined = cli("--ask", "call", "test_elicitation", "message=hi", "--", *SERVE_FIXTURE, stdin="d\n")
    assert "action=decline" in json.loads(declined.stdout)["content"][0]["text"]
    cancelled = cli("--ask", "call", "test_elicitation", "message=hi", "--", *SERVE_FIXTURE, stdin="")
    assert "action=cancel" in json.loads(cancelled.stdout)["content"][0]["text"]


def test_without_ask_elicitation_is_not_declared() -> None:
    done = cli("--no-ask", "call", "test_elicitation", "message=hi", "--", *SERVE_FIXTURE)
    assert done.returncode == 3 and "Missing required client capability: elicitation" in done.stderr


def test_terminal_elicitation_reads_each_field_by_its_type() -> None:
    from mcplite.cli import TerminalElicitation

    answers = io.StringIO("a\nmaybe\ny\nx\n2\n\n3\n")
    asked = io.StringIO()
    result = TerminalElicitation(answers, asked)({"message": "Settings", "requestedSchema": {
        "type": "object", "required": ["ok", "size"],
        "properties": {"ok": {"type": "boolean"}, "size": {"type": "integer"},
                       "name": {"type": "string", "default": "anon"},
                       "color": {"type": "string", "enum": ["red", "green", "blue"]}}}})
    assert result == {"action": "accept", "content": {"ok": True, "size": 2, "name": "anon", "color": "blue"}}
    assert "y or n" in asked.getvalue() and "a whole number" in asked.getvalue()


ROOTS_SERVER = """
from mcplite import Context, Server

server = Server("roots")


@server.tool
def roots(ctx: Context) -> str:
    return " ".join(root["uri"] for root in ctx.list_roots())
"""


@pytest.mark.parametrize("version", ["auto", "2025-11-25"])
def test_root_offers_directories(tmp_path: Path, version: str) -> None:
    server_file = write_module(tmp_path, "roots_server", ROOTS_SERVER)
    (tmp_path / "a").mkdir()
    done = cli("--protocol-version", version, "--root", str(tmp_path / "a"), "--root", str(tmp_path), "call",
               "roots", "--", sys.executable, "-m", "mcplite", "serve", server_file)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["content"][0]["text"] == f"{(tmp_path / 'a').as_uri()} {tmp_path.as_uri()}"


@needs_http
@pytest.mark.parametrize("version", ["auto", "2025-11-25"])
def test_listen_prints_each_change_as_a_json_line(http_server: str, version: str) -> None:
    import signal

    url = f"{http_server}/mcp"
    listener = subprocess.Popen([sys.executable, "-m", "mcplite", "--protocol-version", version, "listen", "tools",
                                 "--", url], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        def changed() -> bool:  # until the listener is listening, a change may go unheard: change again
            assert cli("call", "test_trigger_tool_change", "--", url).returncode == 0
            ready, _, _ = select.select([listener.stdout], [], [], 0.5)
            return bool(ready)

        wait_until(changed, message="the listener printed nothing")
        line = json.loads(listener.stdout.readline())
        assert line["method"] == "notifications/tools/list_changed"
        listener.send_signal(signal.SIGINT)
        assert listener.wait(WAIT) == 130
    finally:
        if listener.poll() is None:
            listener.kill()
            listener.wait(WAIT)
        listener.stdout.close()
        listener.stderr.close()


# ---- for people and for machines: output modes, options, exit codes ------------------------------------
TOOLS_SERVER = """
import os
import time
from pathlib import Path
from typing import List, Literal, Optional

from mcplite import Server, ToolResult, content

time.sleep(float(os.environ.get("SLOW_START", "0")))  # a server that is slow to start (npx, docker, ...)
server = Server("cli-tools")


@server.tool
def shaped(count: int, tags: List[str], mode: Literal["fast", "slow"] = "fast", note: Optional[str] = None) -> int:
    \"\"\"Count things.\"\"\"
    return count


@server.tool
def picture() -> ToolResult:
    \"\"\"A caption, an image of 12,600 bytes and a link.\"\"\"
    return ToolResult(["a picture:", content.image(b"\\x89PNG" + bytes(12_596), "image/png"),
                       content.resource_link("file:///tmp/a.txt", "a", mime_type="text/plain")])


@server.tool
def echo(text: str) -> str:
    \"\"\"Return the text.\"\"\"
    return text


@server.tool
def where(name: str) -> str:
    \"\"\"The environment variable NAME and the working directory.\"\"\"
    return f"{os.environ.get(name)} {os.getcwd()}"


@server.tool
def nap(seconds: float, mark: str) -> str:
    \"\"\"Write this process's id to the file MARK (the call is running), then sleep.\"\"\"
    Path(mark).write_text(str(os.getpid()))
    time.sleep(seconds)
    return "rested"
"""


@pytest.fixture
def tools_server(tmp_path: Path) -> List[str]:
    """The command line of a server with the tools above (an absolute path: some tests change the cwd)."""
    return [sys.executable, "-m", "mcplite", "serve", write_module(tmp_path, "cli_tools_server", TOOLS_SERVER)]


def test_human_listing_shows_each_tool_as_a_signature(tools_server: List[str]) -> None:
    done = cli("--human", "list", "tools", "--", *tools_server)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    index = lines.index('shaped(count: integer, tags: array[string], mode?: "fast"|"slow" = "fast", '
                        'note?: string|null) -> integer')
    assert lines[index + 1] == "    Count things."
    assert "echo(text: string)" in lines  # a str result has no output schema: no return type


def test_human_mode_is_also_an_option_after_the_command() -> None:
    done = cli("list", "tools", "--human", "--", *SERVE_FIXTURE)
    assert done.returncode == 0, done.stderr
    assert "add(a: integer, b: integer) -> integer" in done.stdout.splitlines()


def test_human_call_summarises_an_image_and_a_link(tools_server: List[str]) -> None:
    done = cli("--human", "call", "picture", "--", *tools_server)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ("a picture:\n[image: image/png, 12.3 KiB]\n"
                           "[resource link: file:///tmp/a.txt, text/plain - a]\n")


def test_human_info_is_aligned_key_value_lines() -> None:
    done = cli("--human", "info", "--", *SERVE_FIXTURE)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[:2] == ["server:       mcplite-everything 1.0.0",
                                            "protocol:     2026-07-28 (envelope)"]


def test_json_when_piped_is_todays_output(tools_server: List[str]) -> None:
    piped = cli("call", "echo", "text=hi", "--", *tools_server)
    forced = cli("--json", "call", "echo", "text=hi", "--", *tools_server)
    assert piped.returncode == forced.returncode == 0
    assert piped.stdout == forced.stdout
    assert piped.stdout.count("\n") == 1  # one line, as before
    assert json.loads(piped.stdout)["content"] == [{"type": "text", "text": "hi"}]


def test_json_and_human_exclude_each_other() -> None:
    done = cli("--json", "--human", "ping", "--", *SERVE_FIXTURE)
    assert done.returncode == 2 and "not allowed with argument" in done.stderr


def test_version() -> None:
    import mcplite

    done = cli("--version")
    assert (done.returncode, done.stdout) == (0, f"mcplite {mcplite.__version__}\n")


def test_package_version_falls_back_to_pyproject(tmp_path: Path) -> None:
    from mcplite.cli import package_version

    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[build-system]\nversion = "0"\n\n[project]\nname = "x"\nversion = "9.8.7"\n')
    # `string` has no __version__ and no distribution: only the file is left.
    assert package_version("string", pyproject) == "9.8.7"
    assert package_version("string", tmp_path / "absent.toml") == "unknown"


def test_verbose_shows_what_mcplite_does_on_stderr(tools_server: List[str]) -> None:
    quiet = cli("call", "echo", "text=hi", "--", *tools_server)
    assert quiet.returncode == 0 and "mcplite.cli" not in quiet.stderr
    info = cli("-v", "call", "echo", "text=hi", "--", *tools_server)
    assert info.returncode == 0 and json.loads(info.stdout)["content"][0]["text"] == "hi"
    assert "INFO mcplite.cli: connected to cli-tools" in info.stderr and "DEBUG" not in info.stderr
    debug = cli("-vv", "call", "echo", "text=hi", "--", *tools_server)
    assert "DEBUG mcplite.cli: closing the connection" in debug.stderr
    leveled = cli("-vv", "--log-level", "warning", "call", "echo", "text=hi", "--", *tools_server)
    assert leveled.returncode == 0 and "mcplite.cli" not in leveled.stderr  # --log-level wins


def test_env_and_cwd_reach_a_stdio_server(tools_server: List[str], tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    done = cli("-e", "CLI_GREETING=hello=there", "--env", "OTHER=1", "--cwd", str(work), "call", "where",
               "name=CLI_GREETING", "--", *tools_server)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["content"][0]["text"] == f"hello=there {work}"


def test_env_is_laid_over_a_config_entry(tools_server: List[str], tmp_path: Path) -> None:
    path = write_config(tmp_path, {"s": {"command": tools_server[0], "args": tools_server[1:],
                                         "env": {"A": "from-config", "B": "kept"}}})
    done = cli("--config", path, "-e", "A=from-option", "call", "where", "name=A")
    assert json.loads(done.stdout)["content"][0]["text"].startswith("from-option ")


@pytest.mark.parametrize("argv, message", [
    (["-e", "K=V", "ping", "--", "http://127.0.0.1:9/mcp"], "only apply to a server command"),
    (["--cwd", ".", "ping", "--", "http://127.0.0.1:9/mcp"], "only apply to a server command"),
    (["--cwd", "/no/such/dir", "ping", "--", "srv"], "not a directory"),
    (["-e", "NOEQUALS", "ping", "--", "srv"], "expected KEY=VALUE"),
    (["--timeout", "0", "ping", "--", "srv"], "must be more than 0"),
    (["--connect-timeout", "soon", "ping", "--", "srv"], "not a number of seconds"),
    (["--log-level", "loud", "ping", "--", "srv"], "invalid choice: 'loud'"),
])
def test_new_options_usage_errors(capsys: pytest.CaptureFixture, argv: List[str], message: str) -> None:
    status, out, err = run(capsys, *argv)
    assert status == 2 and out == "" and message in err


def test_a_short_timeout_does_not_cut_off_a_slow_start(tools_server: List[str]) -> None:
    """--timeout bounds each request once connected; --connect-timeout (30 s by default) the start."""
    done = cli("-e", "SLOW_START=1.2", "--timeout", "0.5", "call", "echo", "text=late", "--", *tools_server)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["content"][0]["text"] == "late"
    started = time.monotonic()
    done = cli("-e", "SLOW_START=1.2", "--connect-timeout", "0.3", "call", "echo", "text=late", "--", *tools_server)
    assert done.returncode == 4 and done.stdout == ""
    assert "did not finish connecting within 0.3 s" in done.stderr and "--connect-timeout" in done.stderr
    assert time.monotonic() - started < WAIT


@pytest.mark.parametrize("argv, status", [
    (["call", "echo", "text=ok"], 0),
    (["call", "nap", "seconds=x", "mark=m"], 2),
    (["call", "no_such_tool"], 2),
    (["read", "test://nothing"], 3),
    (["--timeout", "0.3", "call", "nap", "seconds=30", "mark={mark}"], 4),
])
def test_each_exit_code(tools_server: List[str], tmp_path: Path, argv: List[str], status: int) -> None:
    done = cli(*[word.format(mark=tmp_path / "mark") for word in argv], "--", *tools_server)
    assert done.returncode == status, done.stderr
    assert (done.stderr == "") == (status == 0)


def test_a_tool_error_exits_1_in_a_process_of_its_own() -> None:
    done = cli("--human", "call", "test_error_handling", "--", *SERVE_FIXTURE)
    assert done.returncode == 1
    assert done.stdout == "RuntimeError: This tool intentionally returns an error for testing\n"


def test_a_timeout_exits_4_without_waiting_for_the_server(tools_server: List[str], tmp_path: Path) -> None:
    started = time.monotonic()
    done = cli("--timeout", "0.5", "call", "nap", "seconds=30", f"mark={tmp_path / 'mark'}", "--", *tools_server)
    assert done.returncode == 4 and done.stdout == ""
    assert "RequestTimeout: tools/call timed out after 0.5 s (raise it with --timeout S)" in done.stderr
    assert time.monotonic() - started < 0.5 + 5  # not 0.5 s + the transport's 2 s grace + ...
    assert_process_gone(int((tmp_path / "mark").read_text()))


def assert_process_gone(pid: int) -> None:
    def gone() -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False

    wait_until(gone, message=f"the server (pid {pid}) is still running")


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to one process is a POSIX thing")
def test_ctrl_c_exits_130_within_a_second_and_a_half(tools_server: List[str], tmp_path: Path) -> None:
    import signal

    mark = tmp_path / "mark"
    process = subprocess.Popen([sys.executable, "-m", "mcplite", "call", "nap", "seconds=30", f"mark={mark}", "--",
                                *tools_server], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_until(mark.exists, message="the tool never started")
        interrupted = time.monotonic()
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=WAIT)
        elapsed = time.monotonic() - interrupted
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate(timeout=WAIT)
    assert process.returncode == 130 and out == ""
    assert err == "mcplite: interrupted\n"
    assert elapsed < 1.5, f"exiting took {elapsed:.2f} s after Ctrl-C"
    assert_process_gone(int(mark.read_text()))


@pytest.mark.parametrize("mode, expected", [
    ("--json", '"text": "\\u65e5\\u672c"'),  # still valid JSON: ASCII with \\u escapes
    ("--human", "\\u65e5\\u672c\n"),  # backslash escapes rather than a crash
])
def test_a_narrow_stdout_encoding_does_not_crash(tools_server: List[str], monkeypatch: pytest.MonkeyPatch,
                                                 mode: str, expected: str) -> None:
    monkeypatch.setenv("PYTHONIOENCODING", "cp1252")
    done = subprocess.run([sys.executable, "-m", "mcplite", mode, "call", "echo", "text=日本", "--", *tools_server],
                          capture_output=True, timeout=WAIT * 2)
    assert done.returncode == 0, done.stderr
    out = done.stdout.decode("cp1252")
    assert expected in out
    if mode == "--json":
        assert json.loads(out)["content"][0]["text"] == "日本"


def test_the_exit_code_table_is_the_same_in_the_docstring_and_the_docs() -> None:
    import re

    import mcplite.cli as cli_module

    documented = {code: meaning.replace("``", "`")  # reStructuredText literals are Markdown code in the docs
                  for code, meaning in re.findall(r"^    (\d+)\s{2,}(.+)$", cli_module.__doc__ or "", re.MULTILINE)}
    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    section = page.split("# The command line", 1)[1].split("\n## ", 1)[0]
    in_docs = dict(re.findall(r"^\| (\d+) \| (.+) \|$", section, re.MULTILINE))
    assert documented == in_docs
    assert set(documented) == {str(code) for code in (cli_module.EXIT_OK, cli_module.EXIT_TOOL_ERROR,
                                                      cli_module.EXIT_USAGE, cli_module.EXIT_PROTOCOL,
                                                      cli_module.EXIT_TIMEOUT, cli_module.EXIT_INTERRUPTED)}


# ---- tasks ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
def test_call_runs_a_task_tool_as_a_task_showing_its_status(capsys: pytest.CaptureFixture, version: str) -> None:
    status, out, err = run(capsys, "--protocol-version", version, "--json", "call", "slow_compute", "seconds=0.6",
                           "label=demo", "--", *SERVE_FIXTURE)
    assert status == 0, err
    assert json.loads(out)["content"][0]["text"] == "Computed demo in 0.6 s"
    assert "task " in err and " started" in err and "task completed" in err
    status, out, err = run(capsys, "--protocol-version", version, "--json", "call", "slow_compute", "seconds=0",
                           "--no-task", "--", *SERVE_FIXTURE)
    assert status == 0 and "task" not in err and json.loads(out)["content"][0]["text"].startswith("Computed")


@needs_http
@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to one process is a POSIX thing")
def test_ctrl_c_cancels_the_task_and_tasks_get_shows_it(capsys: pytest.CaptureFixture, http_server: str) -> None:
    import re
    import signal

    url = f"{http_server}/mcp"
    process = subprocess.Popen([sys.executable, "-m", "mcplite", "call", "slow_compute", "seconds=60", "--", url],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        started = process.stderr.readline()  # "task ID started"; the line comes before any wait
        match = re.match(r"task ([0-9a-f]+) started", started)
        assert match, started
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=WAIT)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate(timeout=WAIT)
    task_id = match.group(1)
    assert process.returncode == 130 and f"mcplite: cancelled task {task_id}" in err
    shown = run_json(capsys, "tasks", "get", task_id, "--", url)
    assert shown["taskId"] == task_id and shown["status"] == "cancelled"
    assert run_json(capsys, "tasks", "cancel", task_id, "--", url)["status"] == "cancelled"  # idempotent
    status, out, err = run(capsys, "--human", "tasks", "get", task_id, "--", url)
    assert status == 0 and out.startswith(f"task {task_id}: cancelled")
    status, out, err = run(capsys, "tasks", "get", "no-such-task", "--", url)
    assert status == 3 and "unknown task" in err


# ---- a quieter command line -----------------------------------------------------------------------------------
def test_a_tool_error_is_said_once_for_a_person(capsys: pytest.CaptureFixture) -> None:
    status, out, err = run(capsys, "--human", "call", "test_error_handling", "--", *SERVE_FIXTURE)
    assert status == 1
    assert out == "RuntimeError: This tool intentionally returns an error for testing\n"
    assert err == "mcplite: tool test_error_handling returned an error\n"  # the text once, on stdout


NOISY_SERVER = """
import os
import sys
from mcplite import Server

print("NOISY BANNER v1", file=sys.stderr)
server = Server("noisy")


@server.tool
def crash() -> str:
    print("about to crash", file=sys.stderr)
    sys.stderr.flush()
    os._exit(7)


@server.tool
def hello() -> str:
    return "hello"
"""


def test_server_stderr_hide_drops_the_banner_and_keeps_the_last_lines_for_a_failure(tmp_path: Path) -> None:
    server = [sys.executable, "-m", "mcplite", "serve", write_module(tmp_path, "noisy_server", NOISY_SERVER)]
    shown = cli("call", "hello", "--", *server)
    assert shown.returncode == 0 and "NOISY BANNER v1" in shown.stderr
    hidden = cli("--server-stderr", "hide", "call", "hello", "--", *server)
    assert hidden.returncode == 0 and hidden.stderr == ""
    crashed = cli("--server-stderr", "hide", "call", "crash", "--", *server)
    assert crashed.returncode == 3
    assert "the server's last lines on stderr:\n  NOISY BANNER v1\n  about to crash\n" in crashed.stderr
    status = cli("--server-stderr", "hide", "ping", "--", "http://127.0.0.1:9/mcp")
    assert status.returncode == 2 and "--server-stderr only apply to a server command" in status.stderr


SAVING_SERVER = """
from mcplite import Server, ToolResult, content

server = Server("saving")


@server.tool
def media() -> ToolResult:
    return ToolResult(["two files:", content.image(b"\\x89PNG-bytes", "image/png"),
                       content.audio(b"RIFF-bytes", "audio/wav"),
                       content.resource("x://host/dir/report%20final.pdf", b"%PDF", "application/pdf"),
                       content.resource("x://host/../..", b"dots", "application/octet-stream"),
                       content.resource("x://host/%2e%2e%2fescape", b"up", None)])


@server.resource("blob://files/{name}", mime_type="application/octet-stream")
def blob(name: str) -> bytes:
    return name.encode()
"""


def test_save_writes_binary_parts_under_safe_names_in_dir(tmp_path: Path) -> None:
    server = [sys.executable, "-m", "mcplite", "serve", write_module(tmp_path, "saving_server", SAVING_SERVER)]
    out = tmp_path / "out"
    done = cli("--save", str(out), "call", "media", "--", *server)
    assert done.returncode == 0, done.stderr
    assert sorted(path.name for path in out.iterdir()) == [
        "_escape", "media-1.png", "media-2.wav", "media-4.bin", "report_final.pdf"]
    assert (out / "media-1.png").read_bytes() == b"\x89PNG-bytes" and (out / "_escape").read_bytes() == b"up"
    assert {path.name for path in tmp_path.iterdir()} - {"__pycache__"} == {"out", "saving_server.py"}  # nothing outside
    assert f"saved {out / 'media-1.png'} (10 B)" in done.stderr.splitlines()
    again = cli("--save", str(out), "read", "blob://files/media-1.png", "--", *server)
    assert again.returncode == 0, again.stderr
    assert (out / "media-1-2.png").read_bytes() == b"media-1.png"  # never written over
    assert (out / "media-1.png").read_bytes() == b"\x89PNG-bytes"
    refused = cli("--save", str(out), "info", "--", *server)
    assert refused.returncode == 2 and "--save only applies to call and read" in refused.stderr


@pytest.mark.parametrize("uri, mime, name", [
    ("file:///etc/passwd", None, "passwd"),
    ("x://h/..", "image/png", "t-3.png"),
    ("x://h/%2F..%2F..%2Fetc", None, "_.._.._etc"),
    ("x://h/.hidden", None, "hidden"),
    (None, "audio/mpeg", "t-3.mp3"),
    (None, "application/x-unknown", "t-3.bin"),
    ("x://h/C:%5Cwin", None, "C__win"),
])
def test_save_names(uri: Any, mime: Any, name: str) -> None:
    from mcplite.cli.save import safe_name

    assert safe_name(uri, mime, "t", 3) == name


def test_vscode_config_format(tools_server: List[str], tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({
        "inputs": [{"type": "promptString", "id": "key", "description": "API key", "password": True}],
        "servers": {"tools": {"type": "stdio", "command": tools_server[0], "args": tools_server[1:],
                              "env": {"GREETING": "from-vscode"}},
                    "asks": {"type": "stdio", "command": "x", "env": {"API_KEY": "${input:key}"}},
                    "web": {"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"X-Key": "1"}},
                    "odd": {"type": "websocket", "url": "ws://h"}}}))
    done = cli("--config", str(path), "--server", "tools", "call", "where", "name=GREETING")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["content"][0]["text"].startswith("from-vscode ")
    web = target_from_config(str(path), "web")
    assert (web.url, web.headers) == ("http://127.0.0.1:9/mcp", {"X-Key": "1"})
    with pytest.raises(UsageError) as asks:
        target_from_config(str(path), "asks")
    assert "env.API_KEY uses '${input:key}', a VS Code input" in str(asks.value) and "-e KEY=VALUE" in str(asks.value)
    with pytest.raises(UsageError, match="is none of stdio, http, sse"):
        target_from_config(str(path), "odd")


LIST_SERVER = """
from typing import List
from mcplite import Server

server = Server("lists")


@server.tool
def names() -> List[str]:
    return ["ada", "grace"]
"""


def test_a_list_result_is_shown_unwrapped(tmp_path: Path) -> None:
    server = [sys.executable, "-m", "mcplite", "serve", write_module(tmp_path, "list_server", LIST_SERVER)]
    done = cli("--human", "call", "names", "--", *server)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == ["ada", "grace"]  # not {"result": [...]}
    raw = cli("call", "names", "--", *server)
    assert json.loads(raw.stdout)["structuredContent"] == {"result": ["ada", "grace"]}  # JSON: the result as sent
    listed = cli("list", "tools", "--", *server)
    assert json.loads(listed.stdout)["tools"][0]["outputSchema"]["x-fastmcp-wrap-result"] is True  # FastMCP's mark


# ---- shell completion -------------------------------------------------------------------------------------------
def completion(shell: str) -> str:
    done = cli("completion", shell)
    assert done.returncode == 0, done.stderr
    return done.stdout


def bash_completes(script: Path, *words: str) -> List[str]:
    """What the bash completion function offers for the command line ``words`` (the last one being typed)."""
    quoted = " ".join("'" + word.replace("'", "'\\''") + "'" for word in words)
    program = f"source {script}; COMP_WORDS=(mcplite {quoted}); COMP_CWORD={len(words)}; _mcplite; " \
              'printf "%s\\n" "${COMPREPLY[@]}"'
    done = subprocess.run(["bash", "--norc", "--noprofile", "-c", program], capture_output=True, text=True,
                          timeout=WAIT)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


@pytest.mark.skipif(not shutil.which("bash"), reason="bash is not installed")
def test_bash_completion_is_valid_and_completes_commands_options_and_choices(tmp_path: Path) -> None:
    script = tmp_path / "mcplite.bash"
    script.write_text(completion("bash"))
    assert subprocess.run(["bash", "-n", str(script)], timeout=WAIT).returncode == 0
    assert bash_completes(script, "li") == ["list", "listen"]
    assert bash_completes(script, "--timeout", "5", "list", "") == ["tools", "resources", "templates", "prompts"]
    assert bash_completes(script, "--server-") == ["--server-stderr"]
    assert bash_completes(script, "--server-stderr", "h") == ["hide"]
    assert bash_completes(script, "--protocol-version", "2025-1") == ["2025-11-25"]
    assert "--no-task" in bash_completes(script, "call", "add", "--")
    assert bash_completes(script, "completion", "") == ["bash", "zsh", "fish"]
    (tmp_path / "server.py").write_text("")
    assert bash_completes(script, "ping", "--", str(tmp_path / "serv")) == [str(tmp_path / "server.py")]


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_zsh_and_fish_completion(shell: str, tmp_path: Path) -> None:
    text = completion(shell)
    for word in ("info", "list", "call", "read", "listen", "serve", "completion", "server-stderr", "protocol-version"):
        assert word in text
    if shutil.which(shell):
        script = tmp_path / f"mcplite.{shell}"
        script.write_text(text)
        checked = subprocess.run([shell, "-n", str(script)], capture_output=True, text=True, timeout=WAIT)
        assert checked.returncode == 0, checked.stderr
    if shell == "fish" and shutil.which("fish"):
        offered = subprocess.run(["fish", "--no-config", "-c", f"source {tmp_path / 'mcplite.fish'}; "
                                  "complete -C 'mcplite list '"], capture_output=True, text=True, timeout=WAIT)
        assert sorted(line.split("\t")[0] for line in offered.stdout.splitlines()) == [
            "prompts", "resources", "templates", "tools"]
