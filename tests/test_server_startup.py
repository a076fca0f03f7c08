"""What a server's start-up costs (issue 7): the modules it keeps out, and the light paths that keep them out.

A server that registers ordinary handlers must not import inspect, dataclasses, textwrap, decimal, mimetypes
or urllib.parse: `schema` reads plain functions from their code objects and cleans docstrings itself, and
the other modules are imported where their rare uses are. These tests pin both halves: nothing heavy is
imported, and the light paths give what the heavy ones would.
"""

import inspect
import logging
import os
import re
import subprocess
import sys
from typing import Any, Callable, List, Tuple

import pytest

from mcplite import Server
from mcplite.schema.functions import _NO_DEFAULT, _signature, function_schema
from mcplite.schema.validation import ValidationError, validate
from mcplite.server.registry import _follows_naming_rules

from support import WAIT

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

HEAVY_MODULES = ["inspect", "dataclasses", "textwrap", "decimal", "mimetypes", "urllib.parse"]

SERVER_SCRIPT = '''
import sys
already = set(sys.modules)  # what the interpreter's start-up (site, .pth files) imported is not mcplite's
from typing import Optional
from mcplite import Server

server = Server("startup")

@server.tool
def add(a: int, b: int = 1, *, scale: Optional[float] = None) -> int:
    """Add two integers.

    Args:
        a: the first.
        b: the second.
        scale: a factor.
    """
    return a + b

@server.resource("notes://{name}")
def note(name: str) -> str:
    """A note."""
    return name

@server.prompt
def greet(who: str) -> str:
    """Greet someone."""
    return "hello " + who

tool = server._tools["add"]
assert tool.schema.bind({"a": 1, "b": 2}) == {"a": 1, "b": 2}, "the tool was not registered as expected"
print(" ".join(name for name in HEAVY if name in sys.modules and name not in already))
'''


IMPORT_SCRIPT = '''
import sys
sys.path.insert(0, ROOT)  # run with -S: no site, so no .pth file has imported typing already
import json, queue, threading  # what start-up needs; whatever they import (warnings, from 3.13) is theirs
already = set(sys.modules)
from mcplite import Server, Client, ToolResult, Context, content
print(" ".join(sorted(name for name in sys.modules if name not in already)))
'''

#: What importing the package must not load: `typing` (and what it brings), the TypedDicts, the schema
#: machinery, and the modules of rarely used paths. They load when a handler is registered or used.
NOT_AT_IMPORT = ["typing", "mcplite.protocol.types", "mcplite.schema.functions", "mcplite.schema.from_types",
                 "mcplite.schema.convert", "mcplite.schema.uritemplate", "base64", "importlib",
                 "subprocess", "logging", "inspect", "contextlib", "warnings"]


def test_importing_the_package_loads_neither_typing_nor_the_schema_machinery() -> None:
    script = f"ROOT = {ROOT!r}\n{IMPORT_SCRIPT}"
    completed = subprocess.run([sys.executable, "-S", "-c", script], capture_output=True, text=True,
                               timeout=WAIT * 3)
    assert completed.returncode == 0, completed.stderr
    loaded = completed.stdout.split()
    assert "mcplite.server" in loaded and "mcplite.client" in loaded, loaded  # the names really were loaded
    assert [name for name in NOT_AT_IMPORT if name in loaded] == []


CLIENT_ONLY_SCRIPT = '''
import sys
sys.path.insert(0, ROOT)
from mcplite import Client
print(" ".join(sorted(name for name in sys.modules if name.startswith("mcplite"))))
'''


def test_importing_the_client_loads_nothing_of_the_server_side() -> None:
    """A client never loads the server's session, the server API or the validator it may never need."""
    completed = subprocess.run([sys.executable, "-S", "-c", f"ROOT = {ROOT!r}\n{CLIENT_ONLY_SCRIPT}"],
                               capture_output=True, text=True, timeout=WAIT * 3)
    assert completed.returncode == 0, completed.stderr
    loaded = completed.stdout.split()
    assert "mcplite.client" in loaded and "mcplite.session.client" in loaded, loaded
    unwanted = ["mcplite.server", "mcplite.session.server", "mcplite.schema.validation", "mcplite.transports.memory"]
    assert [name for name in unwanted if name in loaded] == []


SERVER_ONLY_SCRIPT = '''
import sys
sys.path.insert(0, ROOT)  # run with -S: no site, so nothing has imported threading, re or json already
import os  # but site imports os in every ordinary start-up
already = set(sys.modules)
from mcplite import Server
print(" ".join(sorted(name for name in sys.modules if name not in already)))
server = Server("startup")
print(" ".join(sorted(name for name in sys.modules if name.startswith("mcplite") or name == "threading")))
'''

#: Everything ``from mcplite import Server`` may load: the class, its base `Registry`, what the package itself
#: loads, and `__future__` (``from __future__ import annotations`` imports it). Not threading, re or json, not
#: the session layer, not the 2026-07-28 machinery.
SERVER_IMPORT = ["__future__", "mcplite", "mcplite._log", "mcplite._once", "mcplite.errors",
                 "mcplite.protocol", "mcplite.protocol.methods", "mcplite.protocol.versions", "mcplite.server", "mcplite.server.registry"]
#: What building a `Server` adds: its parts (event bus and connections, listen streams, caching hints, the
#: requestState key ring), threading for their locks and `_sync` for the fan-out of one event to many
#: streams. The session layer waits for the first connection.
SERVER_PARTS = ["mcplite.protocol.request_state", "mcplite.server.caching", "mcplite.server.listen",
                "mcplite.server.connections", "mcplite._sync", "threading"]


def test_importing_the_server_loads_the_class_and_building_one_its_parts_not_the_session_layer() -> None:
    completed = subprocess.run([sys.executable, "-S", "-c", f"ROOT = {ROOT!r}\n{SERVER_ONLY_SCRIPT}"],
                               capture_output=True, text=True, timeout=WAIT * 3)
    assert completed.returncode == 0, completed.stderr
    imported, built = (line.split() for line in completed.stdout.splitlines())
    assert imported == SERVER_IMPORT
    assert built == sorted(SERVER_IMPORT[1:] + SERVER_PARTS)


def test_the_servers_default_state_ttl_is_the_protocols() -> None:
    """`Server` spells request_state.DEFAULT_TTL as a literal, so that its signature does not import
    request_state with the class."""
    from mcplite.protocol.request_state import DEFAULT_TTL

    assert inspect.signature(Server).parameters["state_ttl"].default == DEFAULT_TTL
    assert Server("ttl").state_ttl == DEFAULT_TTL


def test_a_server_with_ordinary_handlers_imports_no_heavy_module() -> None:
    script = f"HEAVY = {HEAVY_MODULES!r}\n{SERVER_SCRIPT}"
    completed = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True,
                               timeout=WAIT * 3)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.split() == []


# --- plain functions read from their code objects -------------------------------------------------------


def _locals_and_cells(a: int, *args: int, key: str = "k", **extra: Any) -> Callable[[], Any]:
    total = a + len(args)  # a local variable: co_varnames lists it after the parameters

    def inner() -> Any:  # captures parameters, which makes them cell variables too
        return total, args, key, extra
    return inner


PLAIN_FUNCTIONS: List[Tuple[str, Callable[..., Any]]] = [
    ("no parameters", lambda: None),
    ("positional with defaults", lambda a, b=2, c=None: None),
    ("every kind", lambda p, q=1, /, r=2, *args, s, t=3, **kw: None),
    ("keyword-only without defaults", lambda *, x, y: None),
    ("keyword-only mixed", lambda a, *, x=1, y: None),
    ("only *args", lambda *args: None),
    ("only **kwargs", lambda **kwargs: None),
    ("*args and **kwargs", lambda *args, **kwargs: None),
    ("locals and cells", _locals_and_cells),
    ("mutable default", lambda items=[]: None),  # noqa: B006  # the very object must come back
]


@pytest.mark.parametrize("fn", [fn for _, fn in PLAIN_FUNCTIONS], ids=[name for name, _ in PLAIN_FUNCTIONS])
def test_plain_function_parameters_read_as_inspect_reads_them(fn: Callable[..., Any]) -> None:
    expected = [(p.name, p.kind.name, _NO_DEFAULT if p.default is p.empty else p.default)
                for p in inspect.signature(fn).parameters.values()]
    read = _signature(fn)
    assert read == expected
    assert all(mine is theirs for (_, _, mine), (_, _, theirs) in zip(read, expected))  # the very objects


def test_a_function_that_carries_a_signature_is_read_by_inspect() -> None:
    def anything(*args: Any, **kwargs: Any) -> int:
        return 0

    anything.__signature__ = inspect.Signature([  # type: ignore[attr-defined]
        inspect.Parameter("count", inspect.Parameter.KEYWORD_ONLY, default=3)])
    schema = function_schema(anything)
    assert schema.input_schema == {"type": "object", "properties": {"count": {"default": 3}}}
    assert not schema.accepts_extra


def test_a_plain_function_with_positional_only_parameters_is_refused_by_name() -> None:
    def area(width: int, /, height: int) -> int:
        return width * height

    with pytest.raises(TypeError, match="parameter 'width' cannot be passed by keyword"):
        function_schema(area)


def test_docstrings_are_cleaned_as_inspect_cleans_them() -> None:
    def tabbed(city: str) -> str:
        """Forecast.\n\n\tDetails.\n\n\tArgs:\n\t\tcity: the city,\n\t\t\tin full.\n\t"""
        return city

    schema = function_schema(tabbed)
    assert schema.description == "Forecast.\n\nDetails."
    assert schema.parameters[0].description == "the city, in full."


TOOL_NAMES = ["add", "a", "A.b-c_9", "x" * 128, "x" * 129, "", "add numbers", "add\n", "\nadd", "tool/call", "café",
              "add\x00", "-", "..", "add\t"]


@pytest.mark.parametrize("name", TOOL_NAMES, ids=[repr(name) for name in TOOL_NAMES])
def test_tool_names_are_checked_as_the_specs_pattern_checks_them(name: str) -> None:
    """The registry checks names without compiling a regular expression, and fully: no newline after the end."""
    assert _follows_naming_rules(name) == bool(re.fullmatch(r"[A-Za-z0-9_.\-]{1,128}", name))


def test_a_tool_name_against_the_rules_is_registered_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    server = Server("names")
    with caplog.at_level(logging.WARNING, logger="mcplite"):
        server.add_tool(lambda: "ok", name="add numbers")
        server.add_tool(lambda: "ok", name="add_numbers")
    assert [record.getMessage() for record in caplog.records] == [
        "tool name 'add numbers' does not follow the spec's naming rules ([A-Za-z0-9_.-], 1-128)"]
    assert sorted(server._tools) == ["add numbers", "add_numbers"]


# --- the rare uses that import their module on first use ------------------------------------------------


def test_a_percent_encoded_ref_still_resolves() -> None:
    schema = {"$defs": {"a b": {"type": "integer"}}, "$ref": "#/$defs/a%20b"}
    validate(3, schema)
    with pytest.raises(ValidationError, match="integer"):
        validate("three", schema)
