"""The common mistakes of a first hour, and the messages they get (each message asserted).

- ``Client.stdio("python3 server.py")``: a string where a list belongs.
- A stray ``print()`` in a stdio server: the parse error names the line it printed.
- ``http_proxy`` set for something else: a failed request to 127.0.0.1 names the proxy and the way around it.
- ``str | None`` in a string hint (or under ``from __future__ import annotations``) on Python 3.9.
- The command line: a 401, a wrong path (404), a tool that asks the user from a pipe, a server named without
  ``--``, a command that cannot start, a server that exits at once or misses PYTHONPATH.
"""

import http.server
import logging
import socket
import sys
import textwrap
from pathlib import Path
from typing import Any, List

import pytest

from mcplite import Client, Server
from mcplite.errors import HTTPError
from mcplite.protocol.jsonrpc import InvalidMessage, decode
from tests.support import ROOT
from tests.support.wait import WAIT


@pytest.mark.parametrize("command, suggestion", [
    ("python3 server.py", "['python3', 'server.py']"),
    ("node 'my server.js' --port 1", "['node', 'my server.js', '--port', '1']"),
    (b"python3 s.py", "['python3', 's.py']"),
])
def test_a_command_line_given_as_a_string_is_refused_with_the_list_to_write(command, suggestion):
    with pytest.raises(TypeError) as refused:
        Client.stdio(command)
    message = str(refused.value)
    assert message.startswith("the server command must be a list of arguments, not a string: ")
    assert f"write {suggestion}" in message and "shlex.split" in message


STRAY_SERVER = textwrap.dedent('''
    print("Loading my server...")
    from mcplite import Server

    server = Server("stray")

    @server.tool
    def hi() -> str:
        return "hi"

    server.run()
''')


def test_a_stray_print_in_a_stdio_server_is_named_in_the_warning(tmp_path, caplog):
    script = tmp_path / "stray.py"
    script.write_text(STRAY_SERVER)
    with caplog.at_level(logging.WARNING, logger="mcplite"):
        with Client.stdio([sys.executable, str(script)], env={"PYTHONPATH": str(ROOT)}, timeout=WAIT) as client:
            assert client.call_tool("hi")["content"][0]["text"] == "hi"  # the line is skipped, the call works
    warnings = [record.getMessage() for record in caplog.records if "invalid message from peer" in record.getMessage()]
    assert len(warnings) == 1
    assert warnings[0].endswith("Parse error: Expecting value: line 1 column 1 (char 0): 'Loading my server...'")


@pytest.mark.parametrize("text, tail", [
    (b"Hello", ": 'Hello'"),
    ("  spaced out \n", ": 'spaced out'"),
    (b"x" * 200, ": '" + "x" * 80 + "...'"),
    (b"\xff\xfe not utf-8", ": '\\\\xff\\\\xfe not utf-8'"),
])
def test_a_parse_error_shows_the_text_shortened(text: Any, tail: str):
    with pytest.raises(InvalidMessage) as refused:
        decode(text)
    assert str(refused.value).startswith("Parse error: ")
    assert str(refused.value).endswith(tail)


def test_a_request_through_a_proxy_that_is_not_there_names_the_proxy(monkeypatch):
    with socket.socket() as placeholder:  # a port nobody listens on: the "proxy"
        placeholder.bind(("127.0.0.1", 0))
        port = placeholder.getsockname()[1]
    monkeypatch.setenv("http_proxy", f"http://127.0.0.1:{port}")
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    with pytest.raises(HTTPError) as failed:
        Client("http://127.0.0.2:9/mcp", timeout=WAIT, protocol_version="2025-11-25").connect()
    message = str(failed.value)
    assert f"through the proxy 127.0.0.1:{port} (from the http_proxy environment variable; add the host to " \
           "NO_PROXY to connect directly)" in message
    assert "Connection refused" in message


def test_without_a_proxy_the_message_says_nothing_of_one(monkeypatch):
    for name in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    with socket.socket() as placeholder:
        placeholder.bind(("127.0.0.1", 0))
        port = placeholder.getsockname()[1]
    with pytest.raises(HTTPError) as failed:
        Client(f"http://127.0.0.1:{port}/mcp", timeout=WAIT, protocol_version="2025-11-25").connect()
    assert "proxy" not in str(failed.value) and "no response" in str(failed.value)


@pytest.mark.skipif(sys.version_info >= (3, 10), reason="`X | Y` in a hint works from Python 3.10 on")
def test_a_pep604_string_hint_on_python_3_9_says_what_to_write():
    server = Server("hints")

    def lookup(user: "str | None" = None) -> str:
        return user or ""

    with pytest.raises(TypeError) as refused:
        server.tool(lookup)
    assert "cannot resolve the type hints of lookup" in str(refused.value)
    assert "needs Python 3.10 or newer; on Python 3.9 write Optional[X] or Union[X, Y]" in str(refused.value)


@pytest.mark.skipif(sys.version_info < (3, 10), reason="`X | Y` needs Python 3.10")
def test_a_pep604_string_hint_works_where_python_has_it():
    server = Server("hints")

    def lookup(user: "str | None" = None) -> str:
        return user or ""

    server.tool(lookup)
    with Client(server, timeout=WAIT) as client:
        schema = client.list_tools()[0]["inputSchema"]["properties"]["user"]
        assert schema.get("anyOf") or schema.get("type")


class Point:  # a class of one's own, not a dataclass: nothing says how to read it from JSON
    def __init__(self, x: int) -> None:
        self.x = x


def _misspelt_options() -> Any:
    from mcplite.transports.http_server.app import HTTPApp

    url = "http://127.0.0.1:9/mcp"  # (nothing is sent: the options are refused as the client is made)
    return [
        (lambda: Client.stdio(["server"], recrod="x"),
         "Client.stdio() got an unexpected keyword argument 'recrod': did you mean 'record'?"),
        (lambda: Client.stdio(["server"], nonsense=1), "Client.stdio() got an unexpected keyword argument 'nonsense'"),
        (lambda: Client.stdio(["server"], timout=3),
         "Client.stdio() got an unexpected keyword argument 'timout': did you mean 'timeout'?"),
        (lambda: Client.stdio(["server"], shutdown_timout=1),
         "Client.stdio() got an unexpected keyword argument 'shutdown_timout': did you mean 'shutdown_timeout'?"),
        (lambda: Client.stdio(["server"], recrod="x", nonsense=1),
         "Client.stdio() got unexpected keyword arguments 'recrod' (did you mean 'record'?), 'nonsense'"),
        (lambda: Client(url, hedaers={"A": "b"}), "Client() got an unexpected keyword argument 'hedaers': did you mean "
                                                  "'headers'?"),
        (lambda: Client(url, probe_timout=1),
         "Client() got an unexpected keyword argument 'probe_timout': did you mean 'probe_timeout'?"),
        (lambda: Client(url, transprot="sse"),
         "Client() got an unexpected keyword argument 'transprot': did you mean 'transport'?"),
        (lambda: Client(Server("s"), headers={}), "Client() got HTTP options (headers) for <mcplite.server.Server"),
        (lambda: HTTPApp(Server("s"), stateles=True),
         "HTTPOptions() got an unexpected keyword argument 'stateles': did you mean 'stateless'?"),
    ]


@pytest.mark.parametrize("make, message", _misspelt_options())
def test_a_misspelt_option_is_refused_naming_it_and_the_closest_real_one(make: Any, message: str) -> None:
    with pytest.raises(TypeError) as refused:
        make()
    assert str(refused.value).startswith(message), str(refused.value)


def _unsupported_annotations() -> Any:
    import datetime
    from typing import Callable, Dict, List

    return [
        (Point, "Point is not a type a JSON value can be read into", "make it a dataclass"),
        (List[Point], "Point is not a type a JSON value can be read into", "a pydantic model"),
        (complex, "complex is not a type a JSON value can be read into", "annotate it with a JSON type"),
        (datetime.timedelta, "timedelta is not a type", "datetime, date, time, UUID, Decimal, Path or bytes"),
        (Callable[[int], int], "is not a type a JSON value can be read into", "annotate it with a JSON type"),
        (Dict[int, str], "JSON object keys are strings", "write dict[str, ...]"),
    ]


@pytest.mark.parametrize("annotation, problem, instead", _unsupported_annotations())
@pytest.mark.parametrize("kind", ["tool", "prompt", "resource"])
def test_an_annotation_json_cannot_carry_is_refused_at_the_decorator_naming_what_to_write(
        kind: str, annotation: Any, problem: str, instead: str) -> None:
    server = Server("types")

    def find(where: Any) -> str:
        return ""

    find.__annotations__ = {"where": annotation, "return": str}
    register = {"tool": server.tool, "prompt": server.prompt, "resource": server.resource("places://{where}")}[kind]
    with pytest.raises(TypeError) as refused:
        register(find)
    message = str(refused.value)
    assert message.startswith("find(): parameter 'where': "), message
    assert problem in message and instead in message, message


# ---- the command line: each error with its next step (README, "Troubleshooting") ---------------------------
EVERYTHING = [sys.executable, "-m", "mcplite", "serve", str(ROOT / "examples" / "everything_server.py")]


def mcplite_cli(*argv: str, stdin: str = "", env: Any = None, cwd: Any = None) -> "subprocess.CompletedProcess[str]":
    """``python -m mcplite ARGV`` in a process of its own, stdin a pipe; servers it spawns get this checkout's
    PYTHONPATH with ``-e`` (they inherit none), unless ``env`` says otherwise."""
    import os
    import subprocess

    environment = {**os.environ, "PYTHONPATH": str(ROOT)} if env is None else env
    return subprocess.run([sys.executable, "-m", "mcplite", *argv], input=stdin, capture_output=True, text=True,
                          timeout=WAIT * 2, env=environment, cwd=cwd)


class _Refusing(http.server.BaseHTTPRequestHandler):
    """Answers every request with the status its path asks for: /mcp 401, anything else 404 with an HTML page."""

    def _answer(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path.startswith("/mcp"):
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Bearer error="invalid_token"')
            body = b'{"error": "invalid_token"}'
        else:
            self.send_response(404)
            self.send_header("Content-Type", "text/html")
            body = b"<!DOCTYPE html><html><head><title>404 Not Found</title></head><body><h1>Not Found</h1>" \
                   + b"<p>nothing here</p>" * 40 + b"</body></html>"
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_DELETE = _answer

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def refusing_server() -> Any:
    from tests.support.http import ServerLoop

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Refusing)
    loop = ServerLoop(server).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        loop.stop()


def test_cli_401_suggests_auth_or_an_authorization_header(refusing_server: str) -> None:
    done = mcplite_cli("ping", "--", f"{refusing_server}/mcp")
    assert done.returncode == 3 and done.stdout == ""
    assert done.stderr == (f"mcplite: HTTP 401 Unauthorized from {refusing_server}/mcp: the server wants credentials. "
                           "Sign in with --auth (OAuth: the browser opens), or send a token with --header "
                           "'Authorization: Bearer TOKEN'\n")
    refused = mcplite_cli("--header", "Authorization: Bearer wrong", "ping", "--", f"{refusing_server}/mcp")
    assert "the server refused the Authorization header given: check the token" in refused.stderr


@pytest.mark.parametrize("path, step", [
    ("/", "MCP servers usually answer at /mcp ({base}/mcp)"),
    ("/api/mcp/", "check the URL's path (mcplite serve --http answers at /mcp"),
])
def test_cli_404_is_one_short_line_that_says_to_check_the_path(refusing_server: str, path: str, step: str) -> None:
    done = mcplite_cli("ping", "--", refusing_server + path)
    assert done.returncode == 3 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and "<html" not in done.stderr.lower()
    assert done.stderr.count("404") == 1  # once, though the HTTP+SSE fallback was refused too
    assert done.stderr.startswith(f"mcplite: HTTP 404 Not Found from {refusing_server}{path}: no MCP endpoint at "
                                  "this path; ")
    assert step.format(base=refusing_server) in done.stderr


@pytest.mark.parametrize("version", ["auto", "2025-11-25"])
def test_cli_a_tool_that_asks_the_user_from_a_pipe_suggests_ask(version: str) -> None:
    """2026-07-28 refuses the call (-32021); 2025-11-25 runs it, and the tool fails: both say --ask."""
    done = mcplite_cli("--protocol-version", version, "--server-stderr", "hide", "call", "test_elicitation",
                       "message=hi", "--", *EVERYTHING)
    assert done.returncode == (3 if version == "auto" else 1)
    assert "Add --ask: the questions go to stderr and the answers are read from stdin (from a pipe, one line per " \
           "answer; the end of the input cancels)" in done.stderr
    assert len(done.stderr.splitlines()) == 1


@pytest.mark.parametrize("command", [["list", "tools"], ["call", "add", "a=1"], ["call", "add"], ["ping"]])
def test_cli_a_server_without_the_separator_gets_the_line_to_write(command: List[str]) -> None:
    done = mcplite_cli(*command, "python3", "server.py")
    assert done.returncode == 2 and done.stdout == ""
    assert "unrecognized arguments" not in done.stderr
    assert done.stderr.startswith("mcplite: put -- before the server: ")
    assert done.stderr.rstrip("\n").endswith(f"-m mcplite {' '.join(command)} -- python3 server.py")


def test_cli_the_separator_line_in_process(capsys: pytest.CaptureFixture) -> None:
    from mcplite.cli import main

    assert main(["call", "add", "a=1", "python3", "s.py"]) == 2
    assert capsys.readouterr().err.endswith("mcplite call add a=1 -- python3 s.py\n")
    assert main(["info", "server.py"]) == 2  # a script is run by python3
    assert capsys.readouterr().err.endswith("mcplite info -- python3 server.py\n")
    assert main(["listen", "tools", "node", "server.js"]) == 2
    assert capsys.readouterr().err.endswith("mcplite listen tools -- node server.js\n")


def test_cli_a_command_that_cannot_start_says_what_to_write(tmp_path: Path) -> None:
    script = tmp_path / "server.py"
    script.write_text("print('never run')\n")
    not_a_command = mcplite_cli("ping", "--", "server.py", "--flag", cwd=tmp_path)
    assert not_a_command.stderr == "mcplite: cannot start server.py: a Python file is not a command; run it with " \
                                   "Python: -- python3 server.py --flag\n"
    not_executable = mcplite_cli("ping", "--", "./server.py", cwd=tmp_path)
    assert not_executable.stderr == "mcplite: cannot start ./server.py: it is not executable; run it with its " \
                                    "interpreter: -- python3 ./server.py\n"
    misspelt = mcplite_cli("ping", "--", "pyhton3", "server.py", cwd=tmp_path)
    assert misspelt.stderr == "mcplite: cannot start pyhton3: no command of that name on PATH; check the " \
                              "spelling, or give its full path\n"
    assert {not_a_command.returncode, not_executable.returncode, misspelt.returncode} == {3}


def test_cli_python_that_is_not_there_suggests_python3(tmp_path: Path) -> None:
    import os

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    os.symlink(sys.executable, bin_dir / "python3")  # a PATH with python3 and no python
    done = mcplite_cli("ping", "--", "python", "server.py",
                       env={**os.environ, "PATH": str(bin_dir), "PYTHONPATH": str(ROOT)})
    assert done.returncode == 3
    assert done.stderr == "mcplite: cannot start python: there is no 'python' command here, but python3 is: " \
                          "-- python3 server.py\n"


DYING_SERVER = textwrap.dedent('''
    import sys
    print("my-server 1.0: loading settings", file=sys.stderr)
    for line in range(30):
        print(f"detail {line}", file=sys.stderr)
    sys.exit("settings.toml: no such file")
''')


def test_cli_a_server_that_exits_at_once_shows_its_last_stderr_lines_once(tmp_path: Path) -> None:
    script = tmp_path / "dying.py"
    script.write_text(DYING_SERVER)
    hidden = mcplite_cli("--server-stderr", "hide", "--protocol-version", "2025-11-25", "ping", "--",
                         sys.executable, str(script))
    assert hidden.returncode == 3
    lines = hidden.stderr.splitlines()
    assert lines[0].startswith("mcplite: ConnectionClosed: ") and "exited with code 1" in lines[0]
    assert lines[1:] == ["the server's last lines on stderr:"] + [f"  detail {n}" for n in range(21, 30)] + [
        "  settings.toml: no such file"]
    shown = mcplite_cli("--protocol-version", "2025-11-25", "ping", "--", sys.executable, str(script))
    assert shown.returncode == 3
    assert shown.stderr.count("settings.toml: no such file") == 1  # as the server wrote it, not again
    assert shown.stderr.splitlines()[-1].startswith("mcplite: ConnectionClosed: ")


def test_cli_a_server_missing_pythonpath_is_told_to_pass_it(tmp_path: Path) -> None:
    import os

    # The server imports a module found only through PYTHONPATH (mcplite itself may be installed, as in CI).
    library = tmp_path / "lib"
    library.mkdir()
    (library / "settings_of_my_server.py").write_text("NAME = 'x'\n")
    script = tmp_path / "needs_pythonpath.py"
    script.write_text("import settings_of_my_server\nfrom mcplite import Server\n"
                      "Server(settings_of_my_server.NAME).run()\n")
    search_path = f"{library}{os.pathsep}{ROOT}"
    environment = {**os.environ, "PYTHONPATH": search_path}
    done = mcplite_cli("ping", "--", sys.executable, str(script), cwd=tmp_path, env=environment)  # set, not passed
    assert done.returncode == 3
    assert "ModuleNotFoundError: No module named " in done.stderr
    assert done.stderr.rstrip("\n").endswith('(a server inherits no PYTHONPATH: pass it with -e '
                                             'PYTHONPATH="$PYTHONPATH", or use --inherit-env)')
    passed = mcplite_cli("-e", f"PYTHONPATH={search_path}", "ping", "--", sys.executable, str(script),
                         cwd=tmp_path, env=environment)
    assert passed.returncode == 0, passed.stderr
    assert "PYTHONPATH" not in passed.stderr and os.environ.get("PYTHONPATH") != ""
