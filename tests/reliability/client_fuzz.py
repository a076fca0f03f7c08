"""Scenarios client-fuzz-stdio and client-fuzz-http: hostile servers against our client.

The client is the entry point here: what a server sends it (lines on stdio; status lines, headers, JSON
bodies and SSE streams over HTTP) is seeded and hostile. Each call of ``echo(n)`` is answered in a way the
server chose (``verdict``): rightly, after junk (garbage frames, unknown SSE events, comments, odd line
ends, answers to nothing); or wrongly (a mutated answer, an error, a result of the wrong shape, broken
framing, a wrong Content-Type, silence). Passing means: every call answered rightly returns that answer,
whatever junk came first; every other call returns or raises an `MCPError` (never another exception, never
a hang past its timeout); and the connection still answers at the end. ``answered_but_timed_out`` counts
the calls answered with their id whose caller still waited for the timeout (a result that is not an
object is dropped as an invalid message rather than failing its call): a figure, not a failure.
"""

import json
import random
import socket
import socketserver
import sys
import threading
import time
from collections import Counter
from typing import Any, Dict, List, Optional, Tuple, cast

from mcplite import Client
from mcplite.errors import MCPError, RequestTimeout

from .frames import call_rng, choose, encode, mutate
from .harness import ROOT, Result, Run, scenario
from .hostile_peer import VERDICTS
from .rawhttp import incoming_requests, response

#: Seconds a call waits when it will not be answered rightly (some are never answered on purpose), and when
#: it will: a right answer may come after 70 KB of junk in 7-byte chunks, on a busy machine.
CALL_TIMEOUT = 0.3
RIGHT_TIMEOUT = 30.0
#: Verdicts whose answer carries the call's id, intact: the call could be settled at once.
ANSWERED_WITH_ID = ("error", "wrong_shape")
WORKERS = 8


class _Outcomes:
    """What the calls came to, by request id (guarded by `lock`: the calls run on several threads)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.right: Dict[Any, bool] = {}  # request id -> the call returned the right answer
        self.errors: Counter[str] = Counter()
        self.raised: Dict[Any, str] = {}  # request id -> the MCPError it raised
        #: Calls answered with their id (an error, a result of the wrong shape) that still waited for their timeout:
        #: not a loss, but not the precise error at once either.
        self.late = 0
        self.foreign: List[str] = []  # exceptions outside MCPError

    def run_calls(self, client: Client, numbers: List[int], seed: int, verdicts: List[Tuple[str, int]]) -> None:
        for n in numbers:
            verdict = choose(call_rng(seed, n), verdicts)
            right = verdict.startswith("right")
            pending = client.start_tool_call("echo", {"n": n})
            try:
                answer = client.finish_tool_call("echo", pending, timeout=RIGHT_TIMEOUT if right else CALL_TIMEOUT)
            except MCPError as exc:
                with self.lock:
                    self.right[pending.id] = False
                    self.errors[type(exc).__name__] += 1
                    self.raised[pending.id] = f"{type(exc).__name__}: {exc}"[:200]
                    self.late += isinstance(exc, RequestTimeout) and verdict in ANSWERED_WITH_ID
                continue
            except Exception as exc:  # noqa: BLE001  (what this scenario looks for)
                with self.lock:
                    self.right[pending.id] = False
                    self.foreign.append(f"call {n}: {type(exc).__name__}: {exc}"[:300])
                continue
            content = answer.get("content")
            first = content[0] if isinstance(content, list) and content else None
            text = first.get("text") if isinstance(first, dict) else None
            with self.lock:
                self.right[pending.id] = text == str(n)

    def run(self, client: Client, calls: int, seed: int, verdicts: List[Tuple[str, int]]) -> None:
        """Make ``calls`` calls from `WORKERS` threads; a call's timeout is short unless it will be answered
        rightly (the peer's verdict for it is drawn here too)."""
        threads = [threading.Thread(target=self.run_calls, args=(client, list(range(worker, calls, WORKERS)), seed,
                                                                 verdicts), daemon=True) for worker in range(WORKERS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(RIGHT_TIMEOUT + calls * CALL_TIMEOUT)

    def check(self, result: Result, verdicts: Dict[Any, str], usable: Optional[str]) -> None:
        rightly_sent = [id for id, verdict in verdicts.items() if verdict.startswith("right")]
        lost = [id for id in rightly_sent if not self.right.get(id)]
        kinds = Counter(verdicts.values())
        result.figures.update(calls=len(self.right), answered_rightly=len(rightly_sent),
                              returned_rightly=sum(self.right.values()), lost=len(lost), foreign=len(self.foreign),
                              answered_but_timed_out=self.late,
                              **{f"verdict_{name}": count for name, count in sorted(kinds.items())},
                              **{f"raised_{name}": count for name, count in sorted(self.errors.items())})
        result.check(len(verdicts) == len(self.right),
                     f"{len(self.right)} calls made, {len(verdicts)} seen by the server")
        result.check(not lost, f"{len(lost)} rightly answered calls did not return their answer: " + "; ".join(
            f"id {id} ({verdicts[id]}): {self.raised.get(id, 'a wrong result')}" for id in lost[:3]))
        result.check(not self.foreign, f"{len(self.foreign)} exceptions outside MCPError: {self.foreign[:3]}")
        result.check(usable is None, f"the connection was not usable afterwards: {usable}")


@scenario("client-fuzz-stdio", quick_timeout=120, long_timeout=900)
def client_fuzz_stdio(run: Run) -> Result:
    calls = run.size(800, 10_000)
    result = Result()
    verdicts: Dict[Any, str] = {}

    def on_stderr(line: str) -> None:
        if line.startswith("verdict "):
            _, id, verdict = line.split()
            verdicts[int(id)] = verdict

    outcomes = _Outcomes()
    peer = str(ROOT / "tests" / "reliability" / "hostile_peer.py")
    with Client.stdio([sys.executable, peer, str(run.seed)], stderr=on_stderr, protocol_version="2025-11-25",
                      timeout=10) as client:
        client.list_tools()
        outcomes.run(client, calls, run.seed, VERDICTS)
        usable: Optional[str] = None
        try:
            client.ping(timeout=10)
        except Exception as exc:  # noqa: BLE001
            usable = f"{type(exc).__name__}: {exc}"
    outcomes.check(result, verdicts, usable)
    return result


# ---- HTTP --------------------------------------------------------------------------------------------------
HTTP_VERDICTS = [("right_json", 30), ("right_sse", 40), ("mutated", 5), ("error_status", 5), ("wrong_type", 3),
                 ("bad_framing", 6), ("wrong_shape", 5), ("silent", 3), ("closed", 3)]
_SESSION = "0123456789abcdef0123456789abcdef"


def _sse_junk(rng: random.Random) -> bytes:
    """Events and lines a client must skip: comments, unknown events, non-JSON data, odd fields."""
    return rng.choice([
        b": a comment\n\n", b"event: other\ndata: {\"x\": 1}\n\n", b"retry: soon\n\n", b"id: \n\n", b"\n\n\n",
        b"data:\n\n", b"field-without-colon\n\n", b": " + b"c" * 70_000 + b"\n\n", b"event: ping\n\n",
        b"id: 9:9\nretry: 5\n\n", b"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":"
        b"{\"level\":\"info\",\"data\":\"hi\"}}\r\n\r\n",
    ])


def _answer(message: Dict[str, Any]) -> bytes:
    n = (message.get("params") or {}).get("arguments", {}).get("n")
    return encode({"jsonrpc": "2.0", "id": message["id"], "result": {"content": [{"type": "text", "text": str(n)}]}})


class _HostileHTTP(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, seed: int) -> None:
        super().__init__(("127.0.0.1", 0), _HostileHandler)
        self.seed = seed
        self.lock = threading.Lock()  # guards verdicts
        self.verdicts: Dict[Any, str] = {}


class _HostileHandler(socketserver.BaseRequestHandler):
    @property
    def hostile(self) -> _HostileHTTP:
        return cast(_HostileHTTP, self.server)

    def handle(self) -> None:
        sock: socket.socket = self.request
        sock.settimeout(10)
        for method, _, _, body in incoming_requests(sock):
            if not self.respond(sock, method, body):
                return

    def respond(self, sock: socket.socket, method: str, body: bytes) -> bool:
        """Answer one request; False when the connection must end."""
        if method != "POST":
            sock.sendall(response(405 if method == "GET" else 200, [], b""))
            return True
        message = json.loads(body)
        session = [("Mcp-Session-Id", _SESSION)]
        if "id" not in message:
            sock.sendall(response(202, [], b""))
            return True
        if message["method"] == "initialize":
            initialized = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                           "serverInfo": {"name": "hostile", "version": "1"}}
            sock.sendall(response(200, [("Content-Type", "application/json")] + session, encode(
                {"jsonrpc": "2.0", "id": message["id"], "result": initialized})))
            return True
        if message["method"] != "tools/call":
            result: Any = {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]} \
                if message["method"] == "tools/list" else {}
            sock.sendall(response(200, [("Content-Type", "application/json")], encode(
                {"jsonrpc": "2.0", "id": message["id"], "result": result})))
            return True
        rng = call_rng(self.hostile.seed, (message.get("params") or {}).get("arguments", {}).get("n"))
        verdict = choose(rng, HTTP_VERDICTS)  # first: the client draws the same to know what to expect
        with self.hostile.lock:
            self.hostile.verdicts[message["id"]] = verdict
        answer = _answer(message)
        sse = [("Content-Type", "text/event-stream")]
        if verdict == "right_json":
            json_type = rng.choice(["application/json", "application/json; charset=utf-8", "Application/JSON"])
            sock.sendall(response(200, [("Content-Type", json_type)], answer))
        elif verdict == "right_sse":
            events = b"".join(_sse_junk(rng) for _ in range(rng.randint(0, 4)))
            data = events + b"event: message\ndata: " + answer + b"\n\n"
            data = data.replace(b"\n", rng.choice([b"\n", b"\r\n", b"\r"]))
            if rng.random() < 0.5:
                pieces = [data[at:at + 7] for at in range(0, len(data), 7)]
                chunked = b"".join(b"%x\r\n%b\r\n" % (len(piece), piece) for piece in pieces) + b"0\r\n\r\n"
                sock.sendall(response(200, sse + [("Transfer-Encoding", "chunked")], chunked, length=False))
            else:
                sock.sendall(response(200, sse, data))
        elif verdict == "mutated":
            sock.sendall(mutate(rng, response(200, rng.choice([sse, [("Content-Type", "application/json")]]),
                                              b"data: " + answer + b"\n\n" if rng.random() < 0.5 else answer)))
            return False
        elif verdict == "error_status":
            status = rng.choice([400, 403, 409, 500, 502, 503])  # drawn first: a seed replays as before
            body = rng.choice([b"", b"{", encode({"jsonrpc": "2.0", "id": message["id"],
                                                   "error": {"code": -32603, "message": "x"}})])
            sock.sendall(response(status, [("Content-Type", "application/json")], body))
        elif verdict == "wrong_type":
            wrong_type = rng.choice(["text/html", "", "application/xml", "text/plain"])
            sock.sendall(response(200, [("Content-Type", wrong_type)], answer))
        elif verdict == "bad_framing":
            spoiled = rng.choice([
                response(200, [("Content-Type", "application/json"), ("Content-Length", "99999")], answer,
                         length=False),
                response(200, sse + [("Transfer-Encoding", "chunked")], b"zz\r\n" + answer, length=False),
                response(200, sse + [("Transfer-Encoding", "chunked")], b"5\r\ndata: " + answer, length=False),
                b"HTTP/1.1 200\r\n\r\n", b"HTTP/9 ok\r\n\r\n" + answer, b"garbage\r\n\r\n",
                response(200, [("Content-Type", "application/json"), ("X", "\x00\x01")], answer),
            ])
            sock.sendall(spoiled)
            return False
        elif verdict == "wrong_shape":
            sock.sendall(response(200, [("Content-Type", "application/json")], encode({
                "jsonrpc": "2.0", "id": message["id"],
                "result": rng.choice([None, [], "text", 5, {"content": "x"}, {"content": None}])})))
        elif verdict == "silent":
            time.sleep(CALL_TIMEOUT * 2)  # the client gives up first
            return False
        return verdict != "closed"


@scenario("client-fuzz-http", quick_timeout=120, long_timeout=900)
def client_fuzzresponse(run: Run) -> Result:
    calls = run.size(800, 10_000)
    result = Result()
    server = _HostileHTTP(run.seed)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    outcomes = _Outcomes()
    usable: Optional[str] = None
    try:
        with Client(f"http://127.0.0.1:{server.server_address[1]}/mcp", protocol_version="2025-11-25",
                    timeout=10) as client:
            client.list_tools()
            outcomes.run(client, calls, run.seed, HTTP_VERDICTS)
            try:
                client.ping(timeout=10)
            except Exception as exc:  # noqa: BLE001
                usable = f"{type(exc).__name__}: {exc}"
    finally:
        server.shutdown()
        server.server_close()
    with server.lock:
        verdicts = dict(server.verdicts)
    outcomes.check(result, verdicts, usable)
    return result
