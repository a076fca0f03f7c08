"""`mcplite.testing` as its users use it: a small test project in a temporary directory, run by pytest with the
plugin loaded, against the repository's examples in memory, over stdio and over HTTP; what its failures say;
and the promise that nothing imports pytest unless pytest loads the plugin.

The package is not installed here, so each run loads the plugin with ``-p mcplite.testing``; ``-p no:mcplite``
first keeps the installed entry point (CI installs the package) from registering the same module twice.
"""

import os
import subprocess
import sys
from typing import List

import pytest

from mcplite import Client, RPCError, Server
from mcplite.testing import (
    ClientCallbacks,
    assert_asked,
    assert_matches_output_schema,
    assert_tool_failed,
    assert_tool_succeeded,
)
from support import ROOT, WAIT

pytest_plugins = ["pytester"]

PLUGIN = ["-p", "no:mcplite", "-p", "mcplite.testing", "-p", "no:cacheprovider"]
EXAMPLES = ROOT / "examples"


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """A test project holding copies of the two example servers (and the skills the everything server serves),
    whose pytest finds this tree's mcplite on PYTHONPATH."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    for name in ("demo_server.py", "everything_server.py"):
        (pytester.path / name).write_text((EXAMPLES / name).read_text(encoding="utf-8"), encoding="utf-8")
    skills = pytester.path / "skills"
    for source in (EXAMPLES / "skills").rglob("*"):
        if source.is_file():
            target = skills / source.relative_to(EXAMPLES / "skills")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read_bytes())
    return pytester


def run(project: pytest.Pytester, *args: str) -> pytest.RunResult:
    """pytest run in a process of its own, as a user's is: in this one, the modules the examples import first
    would be dropped after each run (pytester restores sys.modules) and imported anew, classes and all."""
    return project.runpytest_subprocess(*PLUGIN, *(args or ["-q"]), timeout=WAIT * 6)


# ---- against the examples ----------------------------------------------------------------------------------
IN_MEMORY = '''
import pytest
from mcplite import SUPPORTED_VERSIONS
from mcplite.testing import assert_tool_succeeded

from demo_server import server


@pytest.mark.mcp_revisions("all")
def test_add_in_every_revision(mcp_client, mcp_revision):
    client = mcp_client(server)
    assert client.protocol_version == mcp_revision
    assert_tool_succeeded(client.call_tool("add", {"a": 2, "b": 3}), text="5")


@pytest.mark.mcp_revisions("2025-11-25", "2026-07-28")
def test_structured_where_the_revision_has_it(mcp_client):
    client = mcp_client(server)
    assert_tool_succeeded(client.call_tool("add", {"a": 2, "b": 3}), structured={"result": 5})


def test_without_the_marker_the_client_asks(mcp_client, mcp_revision):
    assert mcp_revision == "auto"
    assert mcp_client(server).protocol_version == SUPPORTED_VERSIONS[0]


def test_a_revision_of_its_own(mcp_client):
    assert mcp_client(server, protocol_version="2025-06-18").protocol_version == "2025-06-18"
'''


def test_the_marker_runs_a_test_once_per_revision_in_memory(project: pytest.Pytester) -> None:
    from mcplite import SUPPORTED_VERSIONS

    project.makepyfile(test_memory=IN_MEMORY)
    result = run(project, "-v")
    result.assert_outcomes(passed=len(SUPPORTED_VERSIONS) + 2 + 2)
    result.stdout.fnmatch_lines([f"*test_add_in_every_revision?{version}? PASSED*" for version in SUPPORTED_VERSIONS])
    result.stdout.fnmatch_lines(["*test_structured_where_the_revision_has_it?2026-07-28? PASSED*"])


OVER_STDIO = '''
import sys
from pathlib import Path

import pytest
from mcplite.testing import assert_tool_failed, assert_tool_succeeded

HERE = Path(__file__).parent


@pytest.mark.mcp_revisions("2025-11-25", "2026-07-28")
def test_a_server_file(mcp_client, mcp_revision):
    client = mcp_client(HERE / "demo_server.py")
    assert client.protocol_version == mcp_revision
    assert_tool_succeeded(client.call_tool("count_to", {"n": 3}), text="counted to 3")


def test_a_command(mcp_client):
    client = mcp_client([sys.executable, "-m", "mcplite", "serve", str(HERE / "everything_server.py")])
    assert_tool_failed(client.call_tool("test_error_handling"), contains="intentionally returns an error")
'''


def test_stdio_servers_from_a_file_and_from_a_command(project: pytest.Pytester) -> None:
    """The servers the factory spawns find the same mcplite as the tests (it passes its folder on)."""
    project.makepyfile(test_stdio=OVER_STDIO)
    run(project).assert_outcomes(passed=3)


OVER_HTTP = '''
import pytest
from mcplite.testing import ClientCallbacks, assert_asked, assert_matches_output_schema, assert_tool_failed
from mcplite.testing import assert_tool_succeeded

from everything_server import server


@pytest.mark.mcp_revisions("2025-11-25", "2026-07-28")
def test_what_the_server_asks_for(mcp_client, mcp_http_server):
    callbacks = ClientCallbacks(elicit={"username": "ada", "email": "ada@example.com"}, sample="Paris")
    client = mcp_client(mcp_http_server(server), **callbacks.options())
    answer = client.call_tool("test_elicitation", {"message": "Who are you?"})
    assert_tool_succeeded(answer, contains='"username": "ada"')
    assert_tool_succeeded(client.call_tool("test_sampling", {"prompt": "Capital of France?"}),
                          text="LLM response: Paris")
    assert_asked(callbacks, "elicitation", text="Who are you", times=1)
    asked = assert_asked(callbacks, "sampling", text="Capital of France", maxTokens=100)
    assert asked["messages"][0]["role"] == "user"
    assert_asked(callbacks, "roots", times=0)


@pytest.mark.mcp_revisions("2025-11-25", "2026-07-28")
def test_failures_both_ways(mcp_client, mcp_http_server):
    client = mcp_client(mcp_http_server(server).url)
    assert_tool_failed(client.call_tool("test_error_handling"), contains="intentionally")
    assert_tool_failed(lambda: client.call_tool("no_such_tool"), contains="no_such_tool", code=-32602)


def test_structured_content_matches_the_output_schema(mcp_client, mcp_http_server):
    client = mcp_client(mcp_http_server(server))
    tool = next(tool for tool in client.list_tools() if tool["name"] == "add")
    assert_matches_output_schema(client.call_tool("add", {"a": 1, "b": 2}), tool)
'''


def test_http_elicitation_sampling_and_failures(project: pytest.Pytester) -> None:
    project.makepyfile(test_http=OVER_HTTP)
    run(project).assert_outcomes(passed=5)


CLIENT_CODE = '''
from mcplite import Client
from mcplite.testing import assert_tool_succeeded


def forecast(client: Client, city: str) -> str:
    """The code under test: what a user's application does with an MCP server."""
    return client.call_tool("weather", {"city": city})["content"][0]["text"].upper()


def test_client_code_against_a_fake_server(mcp_server, mcp_client):
    server = mcp_server("weather")

    @server.tool
    def weather(city: str) -> str:
        return f"sunny in {city}"

    assert forecast(mcp_client(server), "Oslo") == "SUNNY IN OSLO"


def test_over_http_too(mcp_server, mcp_http_server, mcp_client):
    server = mcp_server("weather")

    @server.tool
    def weather(city: str) -> str:
        return "rain"

    http = mcp_http_server(server)
    assert http.url.startswith("http://127.0.0.1:")
    assert forecast(mcp_client(http), "Bergen") == "RAIN"
'''


def test_a_fake_server_for_client_code(project: pytest.Pytester) -> None:
    project.makepyfile(test_client_code=CLIENT_CODE)
    run(project).assert_outcomes(passed=2)


TEARDOWN = '''
import socket
from pathlib import Path
from urllib.parse import urlsplit

from demo_server import server

made = {}


def test_makes_them(mcp_client, mcp_http_server):
    http = mcp_http_server(server)
    made["memory"] = mcp_client(server)
    made["http"] = mcp_client(http)
    made["stdio"] = mcp_client(Path(__file__).parent / "demo_server.py")
    made["url"] = http.url


def test_they_are_closed_after_it():
    assert all(made[kind].session.is_closed for kind in ("memory", "http", "stdio"))
    assert made["stdio"].transport.process.poll() is not None  # the server process has ended
    address = urlsplit(made["url"])
    try:
        socket.create_connection((address.hostname, address.port), timeout=5).close()
    except OSError:
        pass  # refused: the HTTP server is stopped
    else:
        raise AssertionError("the HTTP server still accepts connections")
'''


def test_what_the_factories_made_is_closed_when_the_test_ends(project: pytest.Pytester) -> None:
    project.makepyfile(test_teardown=TEARDOWN)
    run(project).assert_outcomes(passed=2)


# ---- what failures say --------------------------------------------------------------------------------------
FAILING = '''
from mcplite.testing import ClientCallbacks, assert_asked, assert_matches_output_schema, assert_tool_failed
from mcplite.testing import assert_tool_succeeded

from demo_server import server
import everything_server


def test_wrong_text(mcp_client):
    assert_tool_succeeded(mcp_client(server).call_tool("add", {"a": 2, "b": 3}), text="6")


def test_an_error_result(mcp_client):
    client = mcp_client(everything_server.server)
    assert_tool_succeeded(client.call_tool("test_error_handling"))


def test_did_not_fail(mcp_client):
    assert_tool_failed(mcp_client(server).call_tool("add", {"a": 2, "b": 3}))


def test_another_error(mcp_client):
    assert_tool_failed(lambda: mcp_client(server).call_tool("subtract"), contains="no such thing")


def test_not_asked(mcp_client):
    callbacks = ClientCallbacks(elicit="decline", sample="Paris")
    client = mcp_client(everything_server.server, **callbacks.options())
    client.call_tool("test_elicitation", {"message": "Who are you?"})
    assert_asked(callbacks, "sampling")


def test_schema_mismatch(mcp_client):
    tool = {"name": "add", "inputSchema": {"type": "object"},
            "outputSchema": {"type": "object", "properties": {"result": {"type": "string"}}}}
    assert_matches_output_schema(mcp_client(server).call_tool("add", {"a": 2, "b": 3}), tool)
'''


def test_failures_read_well(project: pytest.Pytester) -> None:
    project.makepyfile(test_failing=FAILING)
    result = run(project)
    result.assert_outcomes(failed=6)
    result.stdout.fnmatch_lines([
        "E*AssertionError: the tool call succeeded, but its text differs",
        "E*  expected: '6'",
        "E*  got: '5'",
        "E*  the result: {",
    ], consecutive=True)
    result.stdout.fnmatch_lines([
        "E*AssertionError: expected the tool call to succeed, but it failed (isError: true)",
        "E*  its text: 'RuntimeError: This tool intentionally returns an error for testing'",
    ], consecutive=True)
    result.stdout.fnmatch_lines(["E*AssertionError: expected the tool call to fail, but it succeeded",
                                 "E*  its text: '5'"], consecutive=True)
    result.stdout.fnmatch_lines([
        "E*AssertionError: the tool call failed, but its text does not contain 'no such thing'",
        "E*  got: *",
        "E*  the error: JSON-RPC error -32602: *",
    ], consecutive=True)
    result.stdout.fnmatch_lines([
        "E*AssertionError: the server did not ask the client for sampling",
        "E*  it asked: 1 request(s):",
        'E*    1. elicitation/create {"message": "Who are you?", *',
    ], consecutive=True)
    result.stdout.fnmatch_lines([
        "E*AssertionError: the structuredContent does not match the outputSchema of tool 'add'",
        "E*  mismatches: $.result: *string*",
    ], consecutive=True)
    # pytest shows the test's line, not the helper's insides (__tracebackhide__).
    assert "mcplite/testing/assertions.py" not in result.stdout.str()


MISUSED = {
    "test_unknown_revision": '''
import pytest


@pytest.mark.mcp_revisions("1999-01-01")
def test_unknown_revision(mcp_client):
    pass
''',
    "test_no_client": '''
import pytest


@pytest.mark.mcp_revisions("2025-11-25")
def test_no_client():
    pass
''',
}


def test_an_unknown_revision_is_a_usage_error_naming_it(project: pytest.Pytester) -> None:
    project.makepyfile(**MISUSED)
    result = run(project)
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(["*'1999-01-01' is not a revision mcplite speaks (2026-07-28, 2025-11-25, *"])
    result.stdout.fnmatch_lines(["*mcp_revisions runs the test once per revision for the mcp_client fixture*"])
    assert "Traceback" not in result.stdout.str() and "fixtures.py" not in result.stdout.str()


def test_the_marker_is_registered(project: pytest.Pytester) -> None:
    result = run(project, "--markers")
    result.stdout.fnmatch_lines(["@pytest.mark.mcp_revisions(*revisions): run the test once per MCP revision*"])


# ---- the helpers without pytest's help -----------------------------------------------------------------------
def test_importing_mcplite_or_its_test_helpers_does_not_import_pytest() -> None:
    script = f"""
import sys
sys.path.insert(0, {str(ROOT)!r})
import mcplite
from mcplite import Client, Server
from mcplite.testing import ClientCallbacks, assert_asked, assert_tool_succeeded, assert_tool_failed

server = Server("plain")

@server.tool
def add(a: int, b: int) -> int:
    return a + b

callbacks = ClientCallbacks(roots=["file:///tmp"])
with Client(server, timeout=10, **callbacks.options()) as client:
    assert_tool_succeeded(client.call_tool("add", {{"a": 1, "b": 2}}), text="3")
    assert_tool_failed(lambda: client.call_tool("nope"))
print(sorted(name for name in sys.modules if name.split(".")[0] in ("pytest", "_pytest", "pluggy")))
"""
    completed = subprocess.run([sys.executable, "-S", "-c", script], capture_output=True, text=True,
                               timeout=WAIT * 3)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "[]"


def test_the_helpers_return_what_they_checked() -> None:
    server = Server("plain")

    @server.tool
    def halve(n: int) -> int:
        if n % 2:
            raise ValueError(f"{n} is odd")
        return n // 2

    callbacks = ClientCallbacks(roots=["file:///work", {"uri": "file:///tmp", "name": "tmp"}])
    with Client(server, timeout=WAIT, **callbacks.options()) as client:
        result = assert_tool_succeeded(client.call_tool("halve", {"n": 4}), text="2", structured={"result": 2})
        assert result["content"][0]["text"] == "2"
        assert assert_tool_failed(client.call_tool("halve", {"n": 3}), text="ValueError: 3 is odd") == "ValueError: 3 is odd"
        try:
            client.call_tool("nothing")
        except RPCError as refusal:
            assert "nothing" in assert_tool_failed(refusal, code=refusal.code)
    assert callbacks.requests == []  # roots offered, never asked for
    with pytest.raises(AssertionError, match="did not ask the client for roots"):
        assert_asked(callbacks, "roots")
    with pytest.raises(ValueError, match="unknown kind of request 'questions'"):
        assert_asked(callbacks, "questions")


def test_roots_answers_are_recorded_in_every_form() -> None:
    callbacks = ClientCallbacks(roots=["file:///work", {"uri": "file:///tmp", "name": "tmp"}])
    roots = callbacks.options()["roots"]
    assert roots() == [{"uri": "file:///work"}, {"uri": "file:///tmp", "name": "tmp"}]
    assert assert_asked(callbacks, "roots/list", times=1) == {}
    sampling = ClientCallbacks(sample=lambda params: {"role": "assistant", "model": "m", "content": {
        "type": "text", "text": str(params["maxTokens"])}}).options()["sampling"]
    assert sampling({"messages": [], "maxTokens": 7})["content"]["text"] == "7"
    elicit: List[ClientCallbacks] = [ClientCallbacks(elicit=answer) for answer in
                                     ("cancel", {"action": "decline"}, {"name": "ada"})]
    assert [callbacks.options()["elicitation"]({"message": "?"}) for callbacks in elicit] == [
        {"action": "cancel"}, {"action": "decline"}, {"action": "accept", "content": {"name": "ada"}}]


def test_the_output_schema_may_be_given_alone_and_a_tool_without_one_is_named() -> None:
    result = {"content": [], "structuredContent": {"n": 2}}
    assert_matches_output_schema(result, {"type": "object", "properties": {"n": {"type": "integer"}}})
    with pytest.raises(AssertionError, match=r"(?s)does not match the outputSchema of the schema given\n"
                                             r"  mismatches: \$\.n: expected string"):
        assert_matches_output_schema(result, {"type": "object", "properties": {"n": {"type": "string"}}})
    with pytest.raises(AssertionError, match="tool 'echo' declares no outputSchema"):
        assert_matches_output_schema(result, {"name": "echo", "inputSchema": {"type": "object"}})
    with pytest.raises(AssertionError, match="the result has no structuredContent"):
        assert_matches_output_schema({"content": []}, {"type": "object"})


# ---- cassettes: record once, then replay ---------------------------------------------------------------------
CASSETTE = '''
from pathlib import Path

import pytest
from mcplite.testing import assert_tool_succeeded

HERE = Path(__file__).parent


def test_add(mcp_cassette):
    client = mcp_cassette(HERE / "demo_server.py")
    assert_tool_succeeded(client.call_tool("add", {"a": 2, "b": 3}), text="5")
    assert_tool_succeeded(client.call_tool("count_to", {"n": 2}), text="counted to 2")


@pytest.mark.mcp_revisions("2025-11-25", "2026-07-28")
def test_in_each_revision(mcp_cassette, mcp_revision):
    client = mcp_cassette(HERE / "demo_server.py")
    assert client.protocol_version == mcp_revision
    assert_tool_succeeded(client.call_tool("add", {"a": 1, "b": 1}), text="2")
'''

CASSETTES = ["test_add.jsonl", "test_in_each_revision.2025-11-25.jsonl", "test_in_each_revision.2026-07-28.jsonl"]


def test_a_cassette_is_recorded_once_then_replayed_without_the_server(project: pytest.Pytester) -> None:
    project.makepyfile(test_cassette=CASSETTE)
    run(project, "-q", "--mcp-record=new").assert_outcomes(passed=3)
    folder = project.path / "cassettes" / "test_cassette"
    assert sorted(path.name for path in folder.iterdir()) == CASSETTES
    recorded = {name: (folder / name).read_text(encoding="utf-8") for name in CASSETTES}
    assert '"count_to"' in recorded["test_add.jsonl"]
    for revision in ("2025-11-25", "2026-07-28"):
        assert f'"revision": "{revision}"' in recorded[f"test_in_each_revision.{revision}.jsonl"]
    assert str(project.path) not in recorded["test_add.jsonl"]  # recorded as "server", not by its command

    (project.path / "demo_server.py").unlink()  # no server any more: only the cassettes answer
    run(project, "-q").assert_outcomes(passed=3)  # (--mcp-record=none is the default)
    run(project, "-q", "--mcp-record=none").assert_outcomes(passed=3)
    run(project, "-q", "--mcp-record=new").assert_outcomes(passed=3)  # every cassette is there: replayed
    assert {name: (folder / name).read_text(encoding="utf-8") for name in CASSETTES} == recorded


def test_all_records_every_cassette_afresh(project: pytest.Pytester) -> None:
    project.makepyfile(test_cassette=CASSETTE)
    folder = project.path / "cassettes" / "test_cassette"
    folder.mkdir(parents=True)
    (folder / "test_add.jsonl").write_text("stale\n", encoding="utf-8")
    run(project, "-q", "--mcp-record=all", "-k", "test_add").assert_outcomes(passed=1)
    rewritten = (folder / "test_add.jsonl").read_text(encoding="utf-8")
    assert rewritten.startswith('{"mcplite_recording": 1') and '"count_to"' in rewritten


def test_without_its_cassette_a_test_fails_naming_the_file_and_the_option(project: pytest.Pytester) -> None:
    project.makepyfile(test_cassette=CASSETTE)
    result = run(project, "-q", "-k", "test_add")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*mcp_cassette: no cassette cassettes/test_cassette/test_add.jsonl: record it with "
                                 "--mcp-record=new*"])
    assert not (project.path / "cassettes").exists()


CHANGED = '''
from pathlib import Path

from mcplite import RPCError
from mcplite.testing import assert_tool_succeeded

HERE = Path(__file__).parent


def test_add(mcp_cassette):
    client = mcp_cassette(HERE / "demo_server.py")
    assert_tool_succeeded(client.call_tool("add", {"a": 2, "b": 4}), text="6")
    assert_tool_succeeded(client.call_tool("count_to", {"n": 2}), text="counted to 2")


def test_in_each_revision(mcp_cassette):
    client = mcp_cassette(HERE / "demo_server.py", "cassettes/test_cassette/test_add.jsonl")
    try:  # code that swallows the error: the cassette still fails the test, at teardown
        client.call_tool("add", {"a": 2, "b": 7})
    except RPCError:
        pass
'''


def test_a_request_the_cassette_lacks_fails_the_test_naming_it(project: pytest.Pytester) -> None:
    project.makepyfile(test_cassette=CASSETTE)
    run(project, "-q", "--mcp-record=new", "-k", "test_add").assert_outcomes(passed=1)
    project.makepyfile(test_cassette=CHANGED)
    result = run(project, "-q")
    result.assert_outcomes(failed=1, passed=1, errors=1)
    result.stdout.fnmatch_lines(['*Not in the recording: tools/call {"arguments": {"a": 2, "b": 4}, "name": "add"};'
                                 " the closest recorded is *(params.arguments.b: recorded 3, asked 4) [[]cassette "
                                 "cassettes/test_cassette/test_add.jsonl: *record it again with --mcp-record=all[]]*"])
    result.stdout.fnmatch_lines(["*ERROR at teardown of test_in_each_revision*"])
    result.stdout.fnmatch_lines([
        "*mcp_cassette: 1 request(s) not in the cassette cassettes/test_cassette/test_add.jsonl (record it again "
        "with --mcp-record=all):",
        '*1. Not in the recording: tools/call {"arguments": {"a": 2, "b": 7}, "name": "add"}*asked 7)',
    ], consecutive=True)


def test_the_record_option_is_registered(project: pytest.Pytester) -> None:
    result = run(project, "--help")
    result.stdout.fnmatch_lines(["*--mcp-record={none,new,all}*"])
