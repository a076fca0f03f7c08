"""Revision 2026-07-28 from both ends, in one process: a tool that asks the user twice, a client that answers
from a plain callback, and a listen stream. Run it: ``python3 -m examples.envelope_client``.

The server's handler is written once, as for any revision (`ctx.elicit` blocks and returns the answer); on
2026-07-28 mcplite replays it each round. The client's ``elicitation=`` callback answers the questions as they
come back in ``input_required`` results; nothing in the calling code knows there were rounds.
"""

from typing import Any, Dict

from mcplite import Client, Context, Server

CONFIRM = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}

server = Server("files", version="1.0")


@server.tool
def delete_folder(path: str, ctx: Context) -> str:
    """Delete a folder after the user confirms twice."""
    first = ctx.elicit(f"Delete everything in {path}?", CONFIRM, key="first")  # ask first ...
    if first["action"] != "accept" or not first["content"]["ok"]:
        return "Kept."
    second = ctx.elicit("Sure? This cannot be undone.", CONFIRM, key="second")
    if second["action"] != "accept" or not second["content"]["ok"]:
        return "Kept."
    return f"Deleted {path}."  # ... act last: this runs once, in the last round


def ask_user(params: Dict[str, Any]) -> Dict[str, Any]:
    print("  asked:", params["message"])
    return {"action": "accept", "content": {"ok": True}}


def main() -> None:
    with Client(server, protocol_version="auto", elicitation=ask_user) as client:
        print("protocol:", client.protocol_version)
        print("result:", client.call_tool("delete_folder", {"path": "/tmp/old"})["content"][0]["text"])
        with client.listen(tools=True) as stream:
            server.add_tool(lambda: "hello", name="hello")  # a list change, heard on the stream
            method, _ = stream.next(timeout=10)  # type: ignore[misc]
            print("heard:", method)
        print("stream ended:", stream.end_reason)


if __name__ == "__main__":
    main()
