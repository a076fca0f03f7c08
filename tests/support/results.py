"""Reading MCP results in assertions."""

from typing import Any, Dict


def text_of(result: Dict[str, Any]) -> str:
    """The text of a tool result's first content block (a `CallToolResult` as a dict)."""
    return result["content"][0]["text"]


def result_text(message: Dict[str, Any]) -> str:
    """The text of the first content block of the tool result a JSON-RPC response carries."""
    return text_of(message["result"])
