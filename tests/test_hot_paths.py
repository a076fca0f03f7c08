"""No import statement runs per message: once a connection is warm, calls run none, on either side.

An ``import`` or ``from ... import`` inside a function costs some 7-10k instructions each time it runs (a
relative from-import of a plain module even formats an AttributeError for its missing ``__path__``), more than
a whole JSON encoding of an answer. Modules loaded on first use are bound once, by small `functools.cache`
loaders (in `session.client` and `server.results`, for example). Every import statement executed during
the calls is recorded through ``builtins.__import__``, whichever thread runs it (client, reader, handler),
when mcplite's own code runs it: the standard library has its own (the HTTP server's ``Date`` header, made
afresh once a second, runs an ``import time`` in `email.utils`).
"""

import builtins
import collections
import os
import sys
from typing import Any, Callable, Dict, Iterator

import pytest
from support import WAIT

import mcplite
from mcplite import Client, Context, Gateway, Server
from mcplite.http_server import HTTPServerThread


def make_server() -> Server:
    server = Server("hot-paths", version="1")

    @server.tool
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool
    def info(name: str) -> Dict[str, Any]:
        return {"name": name}

    @server.tool
    def untyped(name):  # type: ignore[no-untyped-def]
        return {"a": [1, name]}

    @server.tool
    def blocks(name: str):  # type: ignore[no-untyped-def]
        return [name, {"type": "text", "text": "t"}]

    def schemad(**arguments: Any) -> str:
        return str(arguments)

    # A hand-written input schema: its arguments are validated against it on every call.
    server.add_tool(schemad, name="schemad", input_schema={"type": "object", "properties": {"n": {"type": "integer"}}})

    @server.tool
    def cancellable(ctx: Context) -> str:
        forget = ctx.on_cancel(lambda: None)  # as a gateway does, for the request it passes on
        forget()
        return "done"

    @server.resource("res://x")
    def res() -> str:
        return "x"

    @server.prompt
    def greet(name: str) -> str:
        return f"Hello {name}"

    return server


def calls(client: Client) -> None:
    for i in range(5):
        client.call_tool("add", {"a": i, "b": 1})
        client.call_tool("info", {"name": "x"})
        client.call_tool("untyped", {"name": "x"})
        client.call_tool("blocks", {"name": "x"})
        client.call_tool("schemad", {"n": 1})
        client.call_tool("cancellable")
        client.read_resource("res://x")
        client.get_prompt("greet", {"name": "y"})
        client.ping()


PACKAGE = os.path.dirname(os.path.abspath(mcplite.__file__)) + os.sep


def imports_during(work: Callable[[], None]) -> "collections.Counter[Any]":
    """Where in mcplite import statements ran while ``work()`` did, and how often."""
    seen: "collections.Counter[Any]" = collections.Counter()
    original = builtins.__import__

    def recording(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0) -> Any:
        caller = sys._getframe(1)
        if caller.f_code.co_filename.startswith(PACKAGE):
            seen[(caller.f_code.co_filename, caller.f_lineno, name)] += 1
        return original(name, globals, locals, fromlist, level)

    builtins.__import__ = recording
    try:
        work()
    finally:
        builtins.__import__ = original
    return seen


@pytest.fixture
def http_server() -> Iterator[Callable[[bool], str]]:
    running = []

    def start(stateless: bool) -> str:
        thread = HTTPServerThread(make_server(), stateless=stateless).start()
        running.append(thread)
        return thread.url

    yield start
    for thread in running:
        thread.shutdown()


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
@pytest.mark.parametrize("where", ["memory", "http-stateless", "http-sessions"])
def test_a_warm_connection_runs_no_import_statement_per_call(where, version, http_server):
    target: Any = make_server() if where == "memory" else http_server(where == "http-stateless")
    with Client(target, protocol_version=version, timeout=WAIT) as client:
        calls(client)  # warm: first uses load what they load
        seen = imports_during(lambda: calls(client))
    assert not seen, f"import statements ran per call: {dict(seen)}"


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
def test_a_warm_gateway_runs_no_import_statement_per_call(version: str) -> None:
    """A call through the gateway (in this process; its upstream the demo server over stdio, in either era)."""
    from support import ROOT

    config = {"mcpServers": {"demo": {"command": sys.executable, "args": ["-m", "examples.demo_server"],
                                      "cwd": str(ROOT), "protocol_version": version}}}
    with Gateway(config) as gateway, Client(gateway, protocol_version=version, timeout=WAIT) as client:
        def forwarded() -> None:
            for i in range(5):
                client.call_tool("demo_add", {"a": i, "b": 1})

        forwarded()
        seen = imports_during(forwarded)
    assert not seen, f"import statements ran per forwarded call: {dict(seen)}"
