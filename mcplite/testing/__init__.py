"""`mcplite.testing`: test MCP servers and the code that uses them, with pytest or without.

The assertion helpers are plain functions that raise `AssertionError` with a message that shows what came
back, so they read well in any test runner::

    from mcplite.testing import assert_tool_succeeded

    assert_tool_succeeded(client.call_tool("add", {"a": 2, "b": 3}), text="5")

`ClientCallbacks` answers a server's questions (sampling, elicitation, roots) the way a test scripts them and
keeps every request the server made, for `assert_asked`.

Under pytest this module is also a plugin (the ``pytest11`` entry point of the installed package; in a
checkout or a vendored copy: ``-p mcplite.testing``, or ``pytest_plugins = ["mcplite.testing"]`` in
conftest.py). It brings the fixtures ``mcp_client``, ``mcp_server``, ``mcp_http_server``, ``mcp_revision``
and ``mcp_cassette`` (record once, then replay: the option ``--mcp-record=none|new|all``), and the marker
``@pytest.mark.mcp_revisions(...)``: see `mcplite.testing.fixtures` and docs/testing.md. Importing this module never imports pytest: the fixtures are registered by
`pytest_configure`, which only pytest calls.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

from .assertions import assert_matches_output_schema, assert_tool_failed, assert_tool_succeeded
from .callbacks import ClientCallbacks, assert_asked

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["assert_tool_succeeded", "assert_tool_failed", "assert_matches_output_schema", "ClientCallbacks",
           "assert_asked"]


def pytest_addoption(parser: Any) -> None:
    """pytest's hook: the ``--mcp-record`` option of the ``mcp_cassette`` fixture (`fixtures.RECORD_MODES`).

    Declared here, not in `fixtures`: options must be known before the command line is parsed, and
    `pytest_configure` registers the fixtures only after."""
    group = parser.getgroup("mcplite", "mcplite.testing")
    group.addoption("--mcp-record", dest="mcp_record", default="none", choices=("none", "new", "all"),
                    help="mcp_cassette: none (the default): replay the cassettes, a missing one is an error; new: "
                         "record the cassettes that are missing, replay the others; all: record every one afresh")


def pytest_configure(config: Any) -> None:
    """pytest's hook: declare the ``mcp_revisions`` marker and register the fixtures (`fixtures`).

    The fixtures live in a module of their own because they need pytest at import; this hook is the one
    place that imports it, and only pytest calls it."""
    from . import fixtures

    config.addinivalue_line("markers", fixtures.MARKER_HELP)
    if not config.pluginmanager.is_registered(fixtures):
        config.pluginmanager.register(fixtures, "mcplite.testing.fixtures")
