"""The gateway legs' checks (gateway_plan.json) made by the official Python SDK's client through mcplite's gateway.

    .peers/py/bin/python tests/interop/gw_py_client.py [--mode legacy|auto] stdio -- GATEWAY COMMAND...

Prints ``NEGOTIATED version``, then one ``PASS name`` or ``FAIL name: why`` per check of the plan (a kill check
prints three: gateway_legs.check_names). The elicitation callback fills any form it is shown (`fill_form`);
sampling and roots are declared too, so that every question an upstream may ask has somewhere to go.
"""

import json
import os
import signal
import sys
import time
import warnings
from typing import Any, Dict, List

import anyio
import mcp_types as types
from checks import WAIT, Report, expect, expect_equal
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPDeprecationWarning

warnings.simplefilter("ignore", MCPDeprecationWarning)
HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "gateway_plan.json"), encoding="utf-8") as _file:
    PLAN: Dict[str, Any] = json.load(_file)
#: What a kill step reports, each after its name in parentheses (gateway_legs.KILL_CHECKS).
KILLED = ("the next call is an error naming it", "the others keep working", "it comes back")
#: What the filled form answers, by the field's name (else by its type).
ANSWERS = {"name": "Ada", "username": "ada", "email": "ada@example.com", "age": 36}


def wire(model: Any) -> Dict[str, Any]:
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


def fill_form(params: Dict[str, Any]) -> Dict[str, Any]:
    """Accept any elicitation, each field of its form filled (`ANSWERS`, else a value of its type)."""
    content: Dict[str, Any] = {}
    for field, schema in ((params.get("requestedSchema") or {}).get("properties") or {}).items():
        kind = schema.get("type")
        default = 36 if kind in ("integer", "number") else True if kind == "boolean" else "Ada"
        content[field] = ANSWERS.get(field, default)
    return {"action": "accept", "content": content}


def text_of(result: Dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in result.get("content") or [] if block.get("type") == "text")


def verify_call(step: Dict[str, Any], result: Dict[str, Any], progress: List[Any]) -> None:
    """The result of a ``call`` step holds what the step says it must."""
    text = text_of(result)
    if step.get("isError"):
        expect(result.get("isError") is True, f"expected an error result, got {result!r}")
        return
    expect(not result.get("isError"), f"an error result: {text!r}")
    if "structured" in step:
        expect_equal(result.get("structuredContent"), step["structured"], "structuredContent")
    if "text" in step:
        expect_equal(text, step["text"], "text")
    if "textStartsWith" in step:
        expect(text.startswith(step["textStartsWith"]), f"text {text!r} does not start with {step['textStartsWith']!r}")
    if "textContains" in step:
        expect(step["textContains"] in text, f"text {text!r} does not contain {step['textContains']!r}")
    if "progress" in step:
        expect(len(progress) >= step["progress"], f"{len(progress)} progress notifications, expected "
                                                  f"{step['progress']}: {progress!r}")


def processes_with(marker: str) -> List[int]:
    """The processes started (directly or not) by this one whose command line contains ``marker``."""
    parent_of: Dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    parent_of[int(entry)] = int(stat.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found, generation = [], [os.getpid()]
    while generation:
        generation = [child for child, parent in parent_of.items() if parent in generation]
        found += generation
    matching = []
    for pid in found:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                if marker in cmdline.read().replace(b"\0", b" ").decode("utf-8", "replace"):
                    matching.append(pid)
        except OSError:
            continue
    return matching


async def run(target: List[str], mode: str) -> int:
    report = Report()

    async def on_elicitation(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult.model_validate(fill_form(wire(params)))

    async def on_sampling(context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        return types.CreateMessageResult.model_validate(
            {"role": "assistant", "content": {"type": "text", "text": "4"}, "model": "gateway-interop"})

    async def on_list_roots(context: Any) -> types.ListRootsResult:
        return types.ListRootsResult.model_validate({"roots": [{"uri": "file:///interop/root"}]})

    client = Client(StdioServerParameters(command=target[0], args=target[1:], cwd=os.getcwd()),
                    read_timeout_seconds=WAIT, elicitation_callback=on_elicitation, sampling_callback=on_sampling,
                    list_roots_callback=on_list_roots, mode=mode)
    try:
        await client.__aenter__()
    except Exception as exc:
        report.outcome("initialize", exc)
        return 1
    report.negotiated(client.protocol_version)
    report.outcome("initialize", None)

    async def call(tool: str, arguments: Dict[str, Any], progress: List[Any]) -> Dict[str, Any]:
        async def on_progress(done: float, total: Any, message: Any) -> None:
            progress.append((done, total, message))
        return wire(await client.call_tool(tool, arguments, progress_callback=on_progress))

    async def step_of(step: Dict[str, Any]) -> None:
        op = step["op"]
        if op in ("list_tools", "list_prompts", "list_resources"):
            listed = {"list_tools": lambda: client.list_tools(), "list_prompts": lambda: client.list_prompts(),
                      "list_resources": lambda: client.list_resources()}[op]
            page = wire(await listed())
            items = page.get({"list_tools": "tools", "list_prompts": "prompts", "list_resources": "resources"}[op])
            names = {item.get("uri") or item.get("name") for item in items}
            missing = [name for name in step["includes"] if name not in names]
            expect(not missing, f"not listed: {missing} (listed: {sorted(names)})")
        elif op == "call":
            progress: List[Any] = []
            verify_call(step, await call(step["tool"], step["arguments"], progress), progress)
        elif op == "read":
            contents = wire(await client.read_resource(step["uri"]))["contents"]
            expect_equal([(c.get("uri"), c.get("text")) for c in contents], [(step["uri"], step["text"])], "contents")
        elif op == "get_prompt":
            result = wire(await client.get_prompt(step["prompt"], step["arguments"]))
            texts = " ".join(m["content"].get("text", "") for m in result["messages"])
            expect(step["textContains"] in texts, f"messages {texts!r} do not contain {step['textContains']!r}")

    async def kill(step: Dict[str, Any]) -> None:
        name = step["name"]
        pids = processes_with(step["marker"])
        try:
            expect(len(pids) == 1, f"expected one process with {step['marker']!r}, found {pids}")
            os.kill(pids[0], signal.SIGKILL)
            result = await call(step["tool"], {}, [])
            expect(result.get("isError") is True, f"the call after the kill was not an error: {result!r}")
            expect(repr(step["upstream"]) in text_of(result),
                   f"the error does not name {step['upstream']!r}: {text_of(result)!r}")
        except Exception as exc:
            report.outcome(f"{name} ({KILLED[0]})", exc)
        else:
            report.outcome(f"{name} ({KILLED[0]})", None)
        try:
            for other in step["others"]:
                result = await call(other["tool"], other["arguments"], [])
                expect(not result.get("isError"), f"{other['tool']}: {text_of(result)!r}")
        except Exception as exc:
            report.outcome(f"{name} ({KILLED[1]})", exc)
        else:
            report.outcome(f"{name} ({KILLED[1]})", None)
        deadline = time.monotonic() + step["comeBackSeconds"]
        last: Any = None
        while time.monotonic() < deadline:
            try:
                result = await call(step["tool"], {}, [])
                if not result.get("isError"):
                    break
                last = text_of(result)
            except Exception as exc:  # the tool is withdrawn while it is down: unknown until it is back
                last = exc
            await anyio.sleep(0.25)  # it restarts by itself after 0.5 s, then 1 s...
        else:
            report.outcome(f"{name} ({KILLED[2]})", AssertionError(
                f"{step['tool']} did not answer within {step['comeBackSeconds']} s; last: {last!r}"))
            return
        report.outcome(f"{name} ({KILLED[2]})", None)

    try:
        for step in PLAN["checks"]:
            if step["op"] == "kill":
                await kill(step)
                continue
            try:
                await step_of(step)
            except Exception as exc:
                report.outcome(step["name"], exc)
            else:
                report.outcome(step["name"], None)
    finally:
        await client.__aexit__(None, None, None)
    return 1 if report.failed else 0


def main(argv: List[str]) -> int:
    mode = "auto"
    if argv[:1] == ["--mode"]:
        mode, argv = argv[1], argv[2:]
    if argv[:1] != ["stdio"]:
        print("usage: gw_py_client.py [--mode legacy|auto] stdio -- GATEWAY COMMAND...", file=sys.stderr)
        return 2
    return anyio.run(run, [arg for arg in argv[1:] if arg != "--"], mode)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
