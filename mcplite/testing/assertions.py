"""Assertions about tool results whose failure says what came back, for any test runner.

Each helper raises `AssertionError` with a message of several lines: what was expected, what was got, and the
result itself (as indented JSON, cut at `SHOWN_CHARS`), so that a failing test needs no print to be understood.
``__tracebackhide__`` keeps pytest's traceback on the test's line rather than in here.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import json

from ..errors import RPCError

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    from typing import Any, Callable, List, Mapping, Optional, Tuple, Union

    from ..protocol import types as t

    #: What `assert_tool_failed` takes: the result, the error a call raised, or the call itself.
    Outcome = Union[Mapping[str, Any], RPCError, Callable[[], Any]]

__all__ = ["assert_tool_succeeded", "assert_tool_failed", "assert_matches_output_schema", "show"]

#: How much of a result a failure message shows: enough to recognise it, not a screenful of base64.
SHOWN_CHARS = 2000


def assert_tool_succeeded(result: Mapping[str, Any], *, text: Optional[str] = None, contains: Optional[str] = None,
                          structured: Any = None) -> t.CallToolResult:
    """Check that a tool call succeeded (no ``isError: true``), and return the result.

    Args:
        result: the `CallToolResult` of `Client.call_tool`.
        text: the result's whole text (its text blocks joined with newlines, `content.text_of`).
        contains: a part of that text.
        structured: the result's ``structuredContent``, exactly.
    """
    __tracebackhide__ = True
    got = _text(result)
    if result.get("isError"):
        raise AssertionError(_lines("expected the tool call to succeed, but it failed (isError: true)",
                                    ("its text", repr(got)), ("the result", show(result))))
    _check_text("the tool call succeeded, but", got, text, contains, result)
    if structured is not None and result.get("structuredContent") != structured:
        headline = ("the tool call succeeded, but returned no structuredContent" if "structuredContent" not in result
                    else "the tool call succeeded, but its structuredContent differs")
        raise AssertionError(_lines(headline, ("expected", show(structured)),
                                    ("got", show(result.get("structuredContent"))), ("the result", show(result))))
    return result  # type: ignore[return-value]  # a CallToolResult, checked as far as the caller asked


def assert_tool_failed(outcome: Outcome, *, text: Optional[str] = None, contains: Optional[str] = None,
                       code: Optional[int] = None) -> str:
    """Check that a tool call failed, either way a call fails, and return its failure's text.

    A tool fails with a result marked ``isError: true`` (the handler raised, or returned an error result), or
    the server refuses the call with a JSON-RPC error (an unknown tool, invalid arguments): `Client.call_tool`
    raises `RemoteError` then. So ``outcome`` is a result, the `RPCError` caught, or the call itself as a
    function of no arguments (``lambda: client.call_tool("divide", {"a": 1, "b": 0})``), which is run here.

    Args:
        text: the whole failure text: the result's text, or the error's message.
        contains: a part of it.
        code: the JSON-RPC error code the call must have been refused with (a result with isError has none).
    """
    __tracebackhide__ = True
    if callable(outcome):
        try:
            outcome = outcome()
        except RPCError as exc:
            outcome = exc
    if isinstance(outcome, RPCError):
        got = outcome.message
        shown = f"JSON-RPC error {outcome.code}: {outcome.message}" + (
            f"\n(data: {show(outcome.data)})" if outcome.data is not None else "")
        if code is not None and outcome.code != code:
            raise AssertionError(_lines(f"the tool call failed, but with JSON-RPC error {outcome.code}, not {code}",
                                        ("the error", shown)))
        _check_text("the tool call failed, but", got, text, contains, shown)
        return got
    if not isinstance(outcome, dict) or "content" not in outcome:
        raise AssertionError(_lines("expected a tool call's outcome: a CallToolResult, an RPCError or a function "
                                    "that makes the call", ("got", show(outcome))))
    got = _text(outcome)
    if not outcome.get("isError"):
        raise AssertionError(_lines("expected the tool call to fail, but it succeeded", ("its text", repr(got)),
                                    ("the result", show(outcome))))
    if code is not None:
        raise AssertionError(_lines(f"expected JSON-RPC error {code}, but the tool call failed with a result "
                                    "(isError: true)", ("its text", repr(got)), ("the result", show(outcome))))
    _check_text("the tool call failed, but", got, text, contains, outcome)
    return got


def assert_matches_output_schema(result: Mapping[str, Any], tool: Mapping[str, Any]) -> None:
    """Check a result's ``structuredContent`` against its tool's ``outputSchema``, with mcplite's validator.

    ``tool`` is the `Tool` as listed (``client.list_tools()``), or the output schema itself. (`Client` checks
    this on every call to a tool that declares a schema; this is for results got another way, and for a
    server's own tests: the message lists every mismatch by its JSON path.)
    """
    __tracebackhide__ = True
    from ..schema.validation import ValidationError, validate

    is_tool = "inputSchema" in tool or "name" in tool
    name = f"tool {tool.get('name')!r}" if is_tool else "the schema given"
    schema = tool.get("outputSchema") if is_tool else dict(tool)
    if not isinstance(schema, dict):
        raise AssertionError(_lines(f"{name} declares no outputSchema", ("the tool", show(tool))))
    if "structuredContent" not in result:
        raise AssertionError(_lines(f"the result has no structuredContent to check against the outputSchema of {name}",
                                    ("the result", show(result))))
    try:
        validate(result["structuredContent"], schema)
    except ValidationError as exc:
        raise AssertionError(_lines(f"the structuredContent does not match the outputSchema of {name}",
                                    ("mismatches", "\n".join(exc.errors)),
                                    ("structuredContent", show(result["structuredContent"])),
                                    ("outputSchema", show(schema)))) from None


# ---- the messages -------------------------------------------------------------------------------------------
def show(value: Any, *, one_line: bool = False) -> str:
    """A value as indented JSON (``one_line``: on one line; repr where JSON cannot say it), cut at `SHOWN_CHARS`."""
    try:
        text = json.dumps(value, indent=None if one_line else 2, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    if len(text) > SHOWN_CHARS:
        text = text[:SHOWN_CHARS] + f"\n... ({len(text) - SHOWN_CHARS} more characters)"
    return text


def _lines(headline: str, *parts: Tuple[str, str]) -> str:
    """A headline, then each (label, text) as ``  label: text`` with later lines of the text indented."""
    out: List[str] = [headline]
    for label, text in parts:
        body = text.splitlines() or [""]
        out.append(f"  {label}: {body[0]}")
        out.extend(f"    {line}" for line in body[1:])
    return "\n".join(out)


def _text(result: Mapping[str, Any]) -> str:
    from ..content import text_of

    return text_of(result)


def _check_text(headline: str, got: str, text: Optional[str], contains: Optional[str], shown: Any) -> None:
    __tracebackhide__ = True
    about = shown if isinstance(shown, str) else show(shown)
    label = "the error" if isinstance(shown, str) else "the result"
    if text is not None and got != text:
        raise AssertionError(_lines(f"{headline} its text differs", ("expected", repr(text)), ("got", repr(got)),
                                    (label, about)))
    if contains is not None and contains not in got:
        raise AssertionError(_lines(f"{headline} its text does not contain {contains!r}", ("got", repr(got)),
                                    (label, about)))
