"""mcplite's client against the reference time server (PyPI ``mcp-server-time``, on the Python SDK 2.x).

    python3 tests/interop/time_client.py [--expect V] stdio -- COMMAND [ARG...]

server_time.py starts this with mcplite importable and the server's command (``python -m mcp_server_time
--local-timezone UTC`` in the peers' venv), and reads a ``NEGOTIATED version`` line, then one ``PASS``/``FAIL``
line per check of `CHECKS`. The client is in its default mode, ``protocol_version="auto"``: the server serves
both eras, so the probe should end on 2026-07-28 (``--expect``). The expected answers come from the server's
documented behaviour: ``get_current_time`` is now in the zone asked, ``convert_time`` turns a wall-clock HH:MM
of one zone into another's, with the offset between them ("+9.0h"); both answer with ``structuredContent`` and
its JSON as text.
"""

import json
import sys
from datetime import datetime, timedelta, timezone
from typing import Any, Dict, List, Mapping

from checks import CONTRACT, WAIT, CheckFailed, Report, expect, expect_equal, verify_initialize

from mcplite import Client

#: The check names, in the order the client reports them (server_time.py counts on them).
CHECKS = ["initialize", "tools/list", "tools/call get_current_time", "tools/call convert_time"]
TOOLS = ("get_current_time", "convert_time")
#: Asia/Tokyo has kept UTC+9 without daylight saving since 1951: the conversion's answer is fixed.
CONVERSION = {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}
#: How far the server's "now" may be from ours (a slow start on a loaded machine, never minutes).
CLOCK_SLACK = timedelta(minutes=5)


def payload(result: Mapping[str, Any]) -> Dict[str, Any]:
    """The tool's answer: its ``structuredContent``, which must agree with the JSON of its text block if any."""
    expect(not result.get("isError"), f"the tool failed: {result!r}")
    texts = [block.get("text") for block in result.get("content") or [] if block.get("type") == "text"]
    from_text = None
    if texts:
        try:
            from_text = json.loads(texts[0])
        except ValueError:
            raise CheckFailed(f"the text content is not JSON: {texts[0]!r}") from None
    structured = result.get("structuredContent")
    if structured is None:
        expect(isinstance(from_text, dict), f"neither structuredContent nor a JSON object as text: {result!r}")
        return from_text
    if from_text is not None:
        expect_equal(from_text, structured, "the text content (as JSON) against structuredContent")
    return structured


def moment(value: Any, what: str) -> datetime:
    """An ISO 8601 datetime with its UTC offset."""
    expect(isinstance(value, str), f"{what}: not a string: {value!r}")
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise CheckFailed(f"{what}: not an ISO 8601 datetime: {value!r}") from None
    expect(parsed.utcoffset() is not None, f"{what}: no UTC offset: {value!r}")
    return parsed


def verify_time_result(found: Mapping[str, Any], zone: str, offset: timedelta, what: str) -> datetime:
    """One ``TimeResult`` (timezone, datetime, day_of_week, is_dst) for ``zone``, at UTC ``offset``."""
    expect_equal(found.get("timezone"), zone, f"{what} timezone")
    when = moment(found.get("datetime"), f"{what} datetime")
    expect_equal(when.utcoffset(), offset, f"{what} UTC offset")
    expect_equal(found.get("day_of_week"), when.strftime("%A"), f"{what} day_of_week")
    expect_equal(found.get("is_dst"), False, f"{what} is_dst")
    return when


def verify_tools(tools: List[Mapping[str, Any]]) -> None:
    by_name = {tool.get("name"): tool for tool in tools}
    for name in TOOLS:
        expect(name in by_name, f"{name} not in tools/list: {sorted(by_name)}")
        expect(by_name[name].get("inputSchema", {}).get("type") == "object", f"{name}: inputSchema is not an object")
    properties = by_name["convert_time"]["inputSchema"].get("properties") or {}
    expect(set(CONVERSION) <= set(properties), f"convert_time arguments: {sorted(properties)}")


def verify_current_time(result: Mapping[str, Any]) -> None:
    asked = datetime.now(timezone.utc)
    when = verify_time_result(payload(result), "UTC", timedelta(0), "get_current_time")
    expect(abs(when - asked) < CLOCK_SLACK, f"get_current_time is {when.isoformat()}, ours {asked.isoformat()}")


def verify_conversion(result: Mapping[str, Any]) -> None:
    found = payload(result)
    source = verify_time_result(found.get("source") or {}, "UTC", timedelta(0), "source")
    target = verify_time_result(found.get("target") or {}, "Asia/Tokyo", timedelta(hours=9), "target")
    expect_equal((source.hour, source.minute), (12, 0), "source wall-clock time")
    expect_equal((target.hour, target.minute), (21, 0), "target wall-clock time")
    expect_equal(target, source, "source and target as instants")
    expect_equal(found.get("time_difference"), "+9.0h", "time_difference")


def main(argv: List[str]) -> int:
    expected: List[str] = []
    if argv[:1] == ["--expect"]:
        expected, argv = [argv[1]], argv[2:]
    transport, command = argv[0], [arg for arg in argv[1:] if arg != "--"]
    report = Report()
    if transport != "stdio":
        report.outcome("initialize", CheckFailed(f"time_client.py runs over stdio only, not {transport}"))
        return 1
    try:
        client = Client.stdio(command, timeout=WAIT).connect()
    except Exception as exc:
        report.outcome("initialize", exc)
        return 1
    report.negotiated(client.protocol_version)
    try:
        report.run("initialize", lambda: verify_initialize(client.protocol_version, client.server_info,
                                                           expected or [CONTRACT["protocolVersion"],
                                                                       CONTRACT["modernProtocolVersion"]]))
        report.run("tools/list", lambda: verify_tools(client.list_tools()))
        report.run("tools/call get_current_time",
                   lambda: verify_current_time(client.call_tool("get_current_time", {"timezone": "UTC"})))
        report.run("tools/call convert_time", lambda: verify_conversion(client.call_tool("convert_time", CONVERSION)))
    finally:
        client.close()
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
