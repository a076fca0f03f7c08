"""Seeded random messages against a real server: whatever arrives, the connection stays usable.

The server is examples/everything_server.py (every feature registered). Each round sends a burst of
random JSON-RPC traffic (valid and invalid JSON-RPC frames, known and unknown methods, random params, batches,
bytes that are not JSON) and then must still answer a ping; no fault of ours may be logged at ERROR. The
HTTP half drives `HTTPApp.handle` with random methods, paths, headers and bodies: every request must get a
response and nothing may raise. Seeds are fixed, so a failure reproduces.
"""

import json
import logging
import random
import sys
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

from mcplite.transports.http_server.app import HTTPApp
from mcplite.transports.http_server.adapter import IncomingRequest, Responder
from mcplite.transports.memory import memory_pair

from support import Background, RawPeer

# An exception on a thread (a transport's reader, say) fails the test rather than printing a warning.
pytestmark = pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning")

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
import everything_server  # noqa: E402  (an example, not a package)

METHODS = ["initialize", "ping", "tools/list", "tools/call", "resources/list", "resources/read",
           "resources/templates/list", "resources/subscribe", "resources/unsubscribe", "prompts/list",
           "prompts/get", "completion/complete", "logging/setLevel", "unknown/method", "notifications/cancelled",
           "notifications/progress", "notifications/initialized", "notifications/roots/list_changed"]
NAMES = ["test_simple_text", "test_image_content", "test_error_handling", "test_tool_with_logging",
         "test://static-text", "test_simple_prompt", "test_prompt_with_arguments", "ref/prompt", "ref/resource"]
KEYS = ["name", "arguments", "uri", "level", "ref", "argument", "cursor", "requestId", "progressToken", "progress",
        "_meta", "type", "value"]


def random_value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth > 2 or roll < 0.4:
        return rng.choice([None, True, 0, -5, 1.5, 2 ** 64, "", "a", "\u0000", *NAMES, [], {}])
    if roll < 0.6:
        return [random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {rng.choice(KEYS): random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))}


def random_message(rng: random.Random, id: int) -> Dict[str, Any]:
    method = rng.choice(METHODS)
    message: Dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method, "params": random_value(rng)}
    if isinstance(message["params"], dict) and rng.random() < 0.3:
        message["params"]["name"] = rng.choice(NAMES)
    if rng.random() < 0.2:
        del message["params"]
    if rng.random() < 0.05:
        message["id"] = rng.choice([None, True, 1.5, [1], {"a": 1}])
    if method.startswith("notifications/"):
        message.pop("id", None)
    return message


class ErrorLog(logging.Handler):
    """Collects what the "mcplite" logger says at ERROR or above."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: List[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record.getMessage() + (f": {record.exc_info[1]!r}" if record.exc_info else ""))


@pytest.fixture
def errors() -> Iterator[List[str]]:
    handler = ErrorLog()
    logger = logging.getLogger("mcplite")
    logger.addHandler(handler)
    try:
        yield handler.records
    finally:
        logger.removeHandler(handler)


@pytest.mark.parametrize("seed", range(6))
def test_random_traffic_leaves_a_server_connection_answering(seed: int, errors: List[str]) -> None:
    rng = random.Random(seed)
    client_end, server_end = memory_pair()
    everything_server.server.connect(server_end)
    peer = RawPeer(client_end)
    try:
        version = rng.choice(["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
        answer = peer.request(0, "initialize", {"protocolVersion": version, "capabilities": {},
                                                "clientInfo": {"name": "fuzz", "version": "1"}})
        assert "result" in answer, answer
        peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        for id in range(1, 120):
            roll = rng.random()
            if roll < 0.03:
                peer.send_raw(b"{not json")
            elif roll < 0.06:
                peer.send([random_message(rng, id), random_message(rng, -id)])
            else:
                peer.send(random_message(rng, id))
        assert peer.request("last", "ping")["result"] == {}
    finally:
        client_end.close()
    assert errors == []


class Recorder(Responder):
    def __init__(self) -> None:
        self.status = 0

    def respond(self, status: int, headers: Any, body: bytes) -> None:
        self.status = status

    def start_stream(self, headers: Any, first: bytes = b"") -> None:
        self.status = 200

    def write(self, data: bytes) -> None:
        pass

    def end_stream(self, last: bytes = b"", *, close_connection: bool = False) -> None:
        pass


@pytest.mark.parametrize("stateless", [False, True], ids=["sessions", "stateless"])
def test_random_http_requests_all_get_an_answer_and_raise_nothing(stateless: bool, errors: List[str]) -> None:
    rng = random.Random(11 + stateless)
    app = HTTPApp(everything_server.server, stateless=stateless, json_response=rng.random() < 0.5)
    base = {"host": "127.0.0.1:1", "content-type": "application/json", "accept": "application/json, text/event-stream"}
    values = ["", "x", "2025-11-25", "2024-11-05", "application/json", "text/plain", "*/*", "http://evil.example",
              "127.0.0.1:1", "\u00e9", "0" * 300]
    unanswered = []
    for trial in range(400):
        headers = dict(base)
        for name in rng.sample(["mcp-session-id", "mcp-protocol-version", "last-event-id", "origin", "content-type",
                                "accept", "host"], rng.randint(0, 3)):
            headers[name] = rng.choice(values)
        body = rng.choice([b"", b"{", b"[]", b"[1]", b"null", b"1", bytes(rng.randrange(256) for _ in range(20)),
                           json.dumps(random_message(rng, trial)).encode()])
        # GET opens an event stream that stays open until the client leaves: not a request to fuzz here.
        request = IncomingRequest(rng.choice(["POST", "POST", "POST", "DELETE", "PUT"]),
                                  rng.choice(["/mcp", "/mcp/", "/", "/messages", "/x"]),
                                  rng.choice(["", "sessionId=abc", "sessionId="]), headers, body)
        recorder = Recorder()
        Background(app.handle, request, recorder, name=f"request {trial}: {request}").join()
        if recorder.status == 0:
            unanswered.append(request)
    app.close()
    assert unanswered == [] and errors == []
