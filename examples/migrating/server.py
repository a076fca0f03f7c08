"""A notes server moved from FastMCP to mcplite: docs/migrating.md shows the FastMCP original beside it.

Serve it over stdio:   python3 server.py
Or over HTTP:          python3 server.py --http 127.0.0.1:8000
Test it:               python3 -m pytest -q test_server.py
"""

import sys
from dataclasses import dataclass
from typing import Dict, List

from mcplite import Context, Server

server = Server("Notes", version="1.0.0")                 # FastMCP("Notes")

# What a FastMCP lifespan would open once per server is opened once per process here: the module runs once,
# and code after server.run() runs when the server stops (see the end of this file).
NOTES: Dict[str, str] = {"1": "Buy milk", "2": "Call Ada about the MCP demo"}


@dataclass
class Confirm:
    """The form delete_note shows the user: one checkbox."""

    ok: bool


@server.tool                                              # @mcp.tool
def add_note(text: str) -> str:
    """Add a note; returns its id."""
    note_id = str(len(NOTES) + 1)
    NOTES[note_id] = text
    return note_id


@server.tool
def search(query: str, ctx: Context) -> List[str]:       # async def, await ctx.info(...) in FastMCP
    """The ids of the notes that contain the query."""
    ctx.info(f"searching {len(NOTES)} notes")
    found = []
    for done, (note_id, text) in enumerate(sorted(NOTES.items()), 1):
        ctx.progress(done, len(NOTES))                    # await ctx.report_progress(done, len(NOTES))
        if query.lower() in text.lower():
            found.append(note_id)
    return found


@server.tool
def delete_note(note_id: str, ctx: Context) -> str:
    """Delete a note, after asking the user."""
    answer = ctx.elicit(f"Delete note {note_id}?", Confirm)   # await ctx.elicit(..., response_type=Confirm)
    if answer["action"] != "accept" or not answer["content"]["ok"]:   # answer.action, answer.data.ok
        return "kept"
    NOTES.pop(note_id, None)                              # act after the last question: see docs/migrating.md
    return "deleted"


@server.resource("notes://{note_id}")                     # @mcp.resource("notes://{note_id}")
def note(note_id: str) -> str:
    """One note's text."""
    return NOTES[note_id]


@server.prompt                                            # @mcp.prompt
def summarize(note_id: str) -> str:
    """Ask for a summary of one note."""
    return f"Summarize this note:\n\n{note(note_id)}"     # a resource is a plain function: call it


if __name__ == "__main__":
    if sys.argv[1:2] == ["--http"]:
        server.run(http=sys.argv[2])                      # mcp.run(transport="http", host=..., port=...)
    else:
        server.run()                                      # mcp.run(): stdio
