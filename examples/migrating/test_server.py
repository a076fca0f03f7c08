"""Tests for the notes server, as its author would write them: pytest, plain functions, no event loop.

`Client(server)` runs the server in this process (FastMCP's in-memory `Client(mcp)`); one test starts it
over stdio, as an MCP host would.
"""

import os
import sys
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional

import pytest

import mcplite
from mcplite import Client, RemoteError
from mcplite.content import structured_of, text_of
from server import NOTES, server

HERE = Path(__file__).resolve().parent


@pytest.fixture(autouse=True)
def fresh_notes() -> Iterator[None]:
    """Every test starts from the two notes the module defines."""
    saved = dict(NOTES)
    yield
    NOTES.clear()
    NOTES.update(saved)


def answer_with(ok: bool) -> Any:
    """An elicitation callback: the user ticks the box (or not) and accepts the form."""
    return lambda params: {"action": "accept", "content": {"ok": ok}}


def test_it_offers_its_tools_resource_and_prompt() -> None:
    with Client(server) as client:
        assert {tool["name"] for tool in client.list_tools()} == {"add_note", "search", "delete_note"}
        assert [t["uriTemplate"] for t in client.list_resource_templates()] == ["notes://{note_id}"]
        assert [prompt["name"] for prompt in client.list_prompts()] == ["summarize"]


def test_a_new_note_can_be_read_back() -> None:
    with Client(server) as client:
        note_id = text_of(client.call_tool("add_note", {"text": "Water the plants"}))  # a str is text
        assert note_id == "3"
        assert text_of(client.read_resource(f"notes://{note_id}")) == "Water the plants"


def test_search_reports_progress_and_logs() -> None:
    progress: List[Optional[float]] = []
    logs: List[Dict[str, Any]] = []
    with Client(server, on_log=logs.append) as client:
        client.set_logging_level("info")
        result = client.call_tool("search", {"query": "ADA"},
                                  progress=lambda done, total, message: progress.append(done))
    assert structured_of(result) == {"result": ["2"]}
    assert progress == [1, 2]
    assert [log["data"] for log in logs] == ["searching 2 notes"]


def test_delete_asks_first_and_keeps_the_note_when_told_no() -> None:
    with Client(server, elicitation=answer_with(False)) as client:
        assert text_of(client.call_tool("delete_note", {"note_id": "1"})) == "kept"
    assert "1" in NOTES
    with Client(server, elicitation=answer_with(True)) as client:
        assert text_of(client.call_tool("delete_note", {"note_id": "1"})) == "deleted"
    assert "1" not in NOTES


def test_a_client_that_cannot_be_asked_gets_an_error_not_a_deletion() -> None:
    with Client(server) as client:  # no elicitation callback: the client declares no elicitation
        with pytest.raises(RemoteError, match="elicitation"):
            client.call_tool("delete_note", {"note_id": "1"})
    assert "1" in NOTES


def test_the_prompt_quotes_the_note() -> None:
    with Client(server) as client:
        prompt = client.get_prompt("summarize", {"note_id": "2"})
    assert prompt["messages"][0]["content"] == {"type": "text",
                                                "text": "Summarize this note:\n\nCall Ada about the MCP demo"}


def test_over_stdio_as_a_host_runs_it() -> None:
    # A stdio server inherits only PATH, HOME and the like; PYTHONPATH names the mcplite these tests import,
    # which matters only where it is not installed (a checkout).
    env = {"PYTHONPATH": str(Path(mcplite.__file__).resolve().parent.parent)}
    with Client.stdio([sys.executable, "server.py"], cwd=str(HERE), env=env, timeout=30) as client:
        assert text_of(client.call_tool("add_note", {"text": "from stdio"})) == "3"
        assert text_of(client.read_resource("notes://3")) == "from stdio"
    assert "3" not in NOTES  # that was the other process's memory
