"""The interop checks, on wire-shaped dicts, shared by the two Python clients (mcplite's and the SDK's).

Every client makes the same calls in the same order (contract.json's "checks"), turns each answer into
the JSON the server sent, and hands it to the `verify_*` function of that check here. `Report` prints one
line per check, ``PASS name`` or ``FAIL name: why``, which run.py collects, after a ``NEGOTIATED version``
line from clients that can tell which protocol version they ended on. ts_checks.mjs does the same in
JavaScript. Standard library only, Python 3.9: mcplite's client runs this under any Python we support.
"""

import json
import os
import sys
import threading
import traceback
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "contract.json"), encoding="utf-8") as _file:
    CONTRACT: Dict[str, Any] = json.load(_file)
#: Seconds a client waits for any one answer or notification.
WAIT = 15.0


class CheckFailed(Exception):
    """A check saw something other than the contract says."""


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise CheckFailed(message)


def expect_equal(actual: Any, expected: Any, what: str) -> None:
    expect(actual == expected, f"{what}: expected {expected!r}, got {actual!r}")


class Report:
    """Prints each check's outcome as soon as it is known; a failing check does not stop the others."""

    def __init__(self) -> None:
        self.failed = 0

    def outcome(self, name: str, error: Optional[BaseException]) -> None:
        if error is None:
            line = f"PASS {name}"
        else:
            self.failed += 1
            detail = str(error) if isinstance(error, CheckFailed) else f"{type(error).__name__}: {error}"
            line = f"FAIL {name}: {' '.join(detail.split())[:500]}"
            if not isinstance(error, CheckFailed):
                traceback.print_exception(type(error), error, error.__traceback__, file=sys.stderr)
        print(line, flush=True)

    def negotiated(self, version: Optional[str]) -> None:
        """Say which protocol version the connection ended on (run.py puts it on every check line)."""
        print(f"NEGOTIATED {version}", flush=True)

    def run(self, name: str, check: Callable[[], None]) -> None:
        try:
            check()
        except Exception as exc:
            self.outcome(name, exc)
        else:
            self.outcome(name, None)


def text_of(result: Mapping[str, Any]) -> str:
    """The text of a result's single text content block."""
    content = result.get("content")
    if not (isinstance(content, list) and len(content) == 1 and content[0].get("type") == "text"):
        raise CheckFailed(f"expected one text content block, got {content!r}")
    return content[0]["text"]


# ---- the checks -----------------------------------------------------------------------------------------
def verify_initialize(protocol_version: Optional[str], server_info: Optional[Mapping[str, Any]],
                      expected: Optional[Sequence[str]] = None) -> None:
    """The connection is up on one of the ``expected`` protocol versions (default: the contract's handshake one)
    and the server named itself."""
    accepted = list(expected) if expected else [CONTRACT["protocolVersion"]]
    expect(protocol_version in accepted,
           f"negotiated protocol version: expected {' or '.join(accepted)}, got {protocol_version!r}")
    expect(bool(server_info and server_info.get("name")), f"serverInfo has no name: {server_info!r}")


def verify_tools_list(tools: Sequence[Mapping[str, Any]]) -> None:
    by_name = {tool["name"]: tool for tool in tools}
    missing = [name for name in CONTRACT["tools"] if name not in by_name]
    expect(not missing, f"tools missing from tools/list: {missing} (got {sorted(by_name)})")
    for name in CONTRACT["tools"]:
        expect(by_name[name].get("inputSchema", {}).get("type") == "object", f"{name}: inputSchema is not an object")
    for name in CONTRACT["structuredTools"]:
        schema = by_name[name].get("outputSchema")
        expect(isinstance(schema, dict) and schema.get("type") == "object",
               f"{name}: no object outputSchema: {schema!r}")


def verify_structured(tool: str, result: Mapping[str, Any]) -> None:
    expected = CONTRACT[tool]["structured"]
    expect(not result.get("isError"), f"{tool} failed: {result!r}")
    expect_equal(result.get("structuredContent"), expected, f"{tool} structuredContent")
    # Structured results also carry their JSON as text, for clients that only read content. A scalar
    # return wrapped as {"result": value} may be serialised either wrapped or bare.
    accepted = [expected, expected["result"]] if list(expected) == ["result"] else [expected]
    text = json.loads(text_of(result))
    expect(text in accepted, f"{tool} text content (as JSON): expected one of {accepted!r}, got {text!r}")


def verify_progress(reports: Sequence[Sequence[Any]], result: Mapping[str, Any]) -> None:
    steps = CONTRACT["countdown"]["arguments"]["steps"]
    expect_equal(text_of(result), CONTRACT["countdown"]["text"], "countdown result")
    expect_equal([(float(p), float(t) if t is not None else None) for p, t, *_ in reports],
                 [(float(i), float(steps)) for i in range(1, steps + 1)], "progress reports (progress, total)")


class LogCollector:
    """Collects `notifications/message` params; `wait_for` blocks until enough have come or time is up."""

    def __init__(self) -> None:
        self.messages: List[Dict[str, Any]] = []
        self._changed = threading.Condition()

    def __call__(self, params: Dict[str, Any]) -> None:
        with self._changed:
            self.messages.append(params)
            self._changed.notify_all()

    def wait_for(self, count: int, timeout: float = WAIT) -> List[Dict[str, Any]]:
        with self._changed:
            self._changed.wait_for(lambda: len(self.messages) >= count, timeout)
            return list(self.messages)


def verify_logs(messages: Sequence[Mapping[str, Any]]) -> None:
    expected = CONTRACT["countdown"]["logs"]
    expect_equal([m.get("data") for m in messages], expected, "log messages")
    expect(all(m.get("level") == "info" for m in messages), f"log levels are not all info: {messages!r}")


class SamplingModel:
    """The client's stand-in model: answers every `sampling/createMessage` and remembers what it was asked."""

    def __init__(self) -> None:
        self.requests: List[Dict[str, Any]] = []

    def __call__(self, params: Dict[str, Any]) -> Dict[str, Any]:
        self.requests.append(params)
        return {"role": "assistant", "content": {"type": "text", "text": CONTRACT["sampling"]["reply"]},
                "model": CONTRACT["sampling"]["model"], "stopReason": "endTurn"}


def verify_sampling(model: SamplingModel, result: Mapping[str, Any]) -> None:
    expect_equal(text_of(result), CONTRACT["sampling"]["text"], "ask_model result")
    expect_equal(len(model.requests), 1, "sampling requests received")
    params = model.requests[0]
    messages = params.get("messages") or [{}]
    expect_equal(messages[0].get("role"), "user", "sampled message role")
    expect_equal(messages[0].get("content"), {"type": "text", "text": CONTRACT["sampling"]["arguments"]["prompt"]},
                 "sampled message content")
    expect(isinstance(params.get("maxTokens"), int), f"sampling request has no integer maxTokens: {params!r}")


class ElicitingUser:
    """The client's stand-in user: accepts every form with the contract's answer and remembers the form."""

    def __init__(self) -> None:
        self.requests: List[Dict[str, Any]] = []

    def __call__(self, params: Dict[str, Any]) -> Dict[str, Any]:
        self.requests.append(params)
        return {"action": "accept", "content": CONTRACT["elicitation"]["answer"]}


def verify_elicitation(user: ElicitingUser, result: Mapping[str, Any]) -> None:
    expect_equal(text_of(result), CONTRACT["elicitation"]["text"], "ask_user result")
    expect_equal(len(user.requests), 1, "elicitation requests received")
    params = user.requests[0]
    expect_equal(params.get("message"), CONTRACT["elicitation"]["message"], "elicitation message")
    expect(params.get("mode", "form") == "form", f"elicitation mode is not form: {params!r}")
    schema = params.get("requestedSchema") or {}
    expect_equal(schema.get("type"), "object", "requestedSchema type")
    expect_equal(sorted(schema.get("properties") or {}), sorted(CONTRACT["elicitation"]["fields"]),
                 "requestedSchema properties")


class ClientRoots:
    """The client's roots: the contract's fixed list, for every `roots/list`; counts how often it was asked."""

    def __init__(self) -> None:
        self.asked = 0

    def __call__(self, *_: Any) -> List[Dict[str, Any]]:
        self.asked += 1
        return [dict(root) for root in CONTRACT["roots"]["declared"]]


def verify_roots(roots: ClientRoots, result: Mapping[str, Any]) -> None:
    """list_roots answered with exactly the root URIs the client declared, which it was asked for."""
    expect(not result.get("isError"), f"list_roots failed: {result!r}")
    text = text_of(result)
    try:
        uris = json.loads(text)
    except ValueError:
        raise CheckFailed(f"list_roots text is not JSON: {text!r}") from None
    expect_equal(uris, CONTRACT["roots"]["text"], "list_roots result (root URIs)")
    expect(roots.asked >= 1, "the client was never asked for its roots")


def verify_resources_list(resources: Sequence[Mapping[str, Any]]) -> None:
    uris = [resource.get("uri") for resource in resources]
    expect(CONTRACT["resource"]["uri"] in uris, f"{CONTRACT['resource']['uri']} not in resources/list: {uris}")


def verify_read(result: Mapping[str, Any], uri: str, text: str) -> None:
    contents = result.get("contents") or []
    expect_equal(len(contents), 1, "number of contents")
    expect_equal(contents[0].get("uri"), uri, "contents uri")
    expect_equal(contents[0].get("text"), text, "contents text")


def verify_templates_list(templates: Sequence[Mapping[str, Any]]) -> None:
    found = [template.get("uriTemplate") for template in templates]
    expect(CONTRACT["template"]["uriTemplate"] in found, f"template not in resources/templates/list: {found}")


def verify_prompts_list(prompts: Sequence[Mapping[str, Any]]) -> None:
    by_name = {prompt["name"]: prompt for prompt in prompts}
    name = CONTRACT["prompt"]["name"]
    expect(name in by_name, f"prompt {name} not in prompts/list: {sorted(by_name)}")
    arguments = {arg["name"]: arg for arg in by_name[name].get("arguments") or []}
    expect(arguments.get("name", {}).get("required") is True, f"{name}: argument 'name' is not required: {arguments}")


def verify_prompt(result: Mapping[str, Any]) -> None:
    messages = result.get("messages") or []
    expect_equal(len(messages), 1, "number of prompt messages")
    expect_equal(messages[0].get("role"), "user", "prompt message role")
    expect_equal(messages[0].get("content"), {"type": "text", "text": CONTRACT["prompt"]["text"]},
                 "prompt message content")
