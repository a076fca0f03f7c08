"""The common mistakes of a first hour, and the messages they get (each message asserted).

- ``Client.stdio("python3 server.py")``: a string where a list belongs.
- A stray ``print()`` in a stdio server: the parse error names the line it printed.
- ``http_proxy`` set for something else: a failed request to 127.0.0.1 names the proxy and the way around it.
- ``str | None`` in a string hint (or under ``from __future__ import annotations``) on Python 3.9.
"""

import logging
import socket
import sys
import textwrap
from typing import Any

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
        (lambda: Client.stdio(["server"], recrod="x"), "Client.stdio() got an unexpected keyword argument 'recrod'"),
        (lambda: Client.stdio(["server"], timout=3),
         "Client.stdio() got an unexpected keyword argument 'timout': did you mean 'timeout'?"),
        (lambda: Client.stdio(["server"], shutdown_timout=1),
         "Client.stdio() got an unexpected keyword argument 'shutdown_timout': did you mean 'shutdown_timeout'?"),
        (lambda: Client.stdio(["server"], recrod="x", nonsense=1),
         "Client.stdio() got unexpected keyword arguments 'recrod', 'nonsense'"),
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
