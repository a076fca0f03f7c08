"""Scenario http-fuzz: raw, hostile HTTP requests against ``python -m mcplite serve ... --http``.

Requests are built from templates of both eras (a 2025-11-25 session's POST, GET, DELETE; 2026-07-28
POSTs with their ``Mcp-*`` headers and ``_meta``; the legacy HTTP+SSE endpoints; methods nobody serves),
then spoiled: hostile bodies (`frames`), broken ``Content-Length`` and chunked framing, odd versions,
huge or binary headers, several requests in one write, or byte mutations of the whole request. Each is
sent on a fresh connection, which is half-closed after it; passing means every request gets a status
line or, for framing the server cannot read, a closed connection: never silence, never a 500 (501, 503 and
505 are precise refusals). After every batch a control ``ping`` on the scenario's own session must be
answered (and the sessions the batch opened are deleted, so the table of sessions stays small).
"""

import random
import time
from typing import Callable, Dict, List, Tuple

from .frames import VALID_BASE, encode, fuzz_frame, mutate, random_message
from .harness import HTTPServerProcess, Result, Run, percentile, scenario
from .rawhttp import Answer, exchange, json_body, request

BATCH = 100
LEGACY = "2025-11-25"
ENVELOPE_VERSION = "2026-07-28"
ACCEPT = ("Accept", "application/json, text/event-stream")
JSON_TYPE = ("Content-Type", "application/json")
#: Seconds a request may take to be answered (or closed) before it counts as a hang.
ANSWER_TIMEOUT = 15.0

Headers = List[Tuple[str, str]]


class _Fuzzer:
    """Makes the requests of one run; knows the live sessions the fuzzed requests may name."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.sessions: List[str] = ["0" * 32, "not-a-session"]

    def session(self) -> str:
        return self.rng.choice(self.sessions)

    def body(self) -> bytes:
        roll = self.rng.random()
        if roll < 0.5:
            return encode(random_message(self.rng))
        return fuzz_frame(self.rng, allow_large=False)

    def legacy_post(self) -> Tuple[str, str, Headers, bytes]:
        headers: Headers = [JSON_TYPE, ACCEPT, ("MCP-Protocol-Version", LEGACY)]
        if self.rng.random() < 0.8:
            headers.append(("MCP-Session-Id", self.session()))
        return "POST", "/mcp", headers, self.body()

    def envelope_post(self) -> Tuple[str, str, Headers, bytes]:
        message = random_message(self.rng)
        if isinstance(message.get("params"), dict) and self.rng.random() < 0.7:
            message["params"]["_meta"] = {"io.modelcontextprotocol/protocolVersion": ENVELOPE_VERSION,
                                          "io.modelcontextprotocol/clientCapabilities": {}}
        headers: Headers = [JSON_TYPE, ACCEPT, ("MCP-Protocol-Version", ENVELOPE_VERSION)]
        method = message.get("method")
        if isinstance(method, str) and self.rng.random() < 0.8:
            headers.append(("Mcp-Method", method))
        params = message.get("params")
        if isinstance(params, dict) and isinstance(params.get("name"), str) and self.rng.random() < 0.8:
            headers.append(("Mcp-Name", params["name"]))
        return "POST", "/mcp", headers, encode(message)

    def initialize(self) -> Tuple[str, str, Headers, bytes]:
        return "POST", "/mcp", [JSON_TYPE, ACCEPT], json_body(
            {"jsonrpc": "2.0", "id": "init", "method": "initialize",
             "params": {"protocolVersion": self.rng.choice([LEGACY, "2025-03-26", "2024-11-05"]),
                        "capabilities": {}, "clientInfo": {"name": "http-fuzz", "version": "1"}}})

    def other(self) -> Tuple[str, str, Headers, bytes]:
        rng = self.rng
        kind = rng.randrange(6)
        if kind == 0:  # the GET stream: its head is all we wait for
            return "GET", "/mcp", [("Accept", "text/event-stream"), ("MCP-Session-Id", self.session()),
                                   ("Last-Event-ID", rng.choice(["", "0:1", "x", "1:99999"]))], b""
        if kind == 1:
            return "DELETE", "/mcp", [("MCP-Session-Id", self.session())], b""
        if kind == 2:  # the legacy HTTP+SSE transport
            if rng.random() < 0.5:
                return "GET", "/sse", [("Accept", "text/event-stream")], b""
            return "POST", f"/messages?sessionId={rng.choice(['', 'x', self.session()])}", [JSON_TYPE], self.body()
        if kind == 3:
            return rng.choice(["PUT", "PATCH", "OPTIONS", "HEAD", "TRACE", "CONNECT", "BREW", "get"]), "/mcp", [], b""
        if kind == 4:
            return "POST", rng.choice(["/", "/mcp/", "/x", "/mcp?x=1", "//mcp", "/%2e%2e/mcp", "*",
                                       "http://127.0.0.1/mcp"]), [JSON_TYPE, ACCEPT], self.body()
        return "POST", "/mcp", [(rng.choice(["Content-Type", "Accept", "Host", "Origin", "MCP-Protocol-Version"]),
                                 rng.choice(["", "text/plain", "*/*", "http://evil.example", "1999-01-01",
                                             "\u00e9", "x" * 9000]))], self.body()

    def template(self) -> Tuple[str, str, Headers, bytes]:
        roll = self.rng.random()
        if roll < 0.35:
            return self.legacy_post()
        if roll < 0.65:
            return self.envelope_post()
        if roll < 0.68:
            return self.initialize()
        return self.other()

    def make(self) -> bytes:
        """One request's bytes (possibly several requests, possibly not HTTP at all)."""
        rng = self.rng
        method, path, headers, body = self.template()
        roll = rng.random()
        if roll < 0.45:
            return request(method, path, headers, body)
        if roll < 0.6:
            return request(method, path, headers + [("Transfer-Encoding", "chunked")],
                           _chunked(rng, body), length=False)
        if roll < 0.7:
            return _bad_length(rng, method, path, headers, body)
        if roll < 0.78:
            return _odd_head(rng, method, path, headers, body)
        if roll < 0.83:
            return b"".join(request(*self.template()) for _ in range(rng.randint(2, 4)))
        return mutate(rng, request(method, path, headers, body))


def _chunked(rng: random.Random, body: bytes) -> bytes:
    """``body`` in chunks, well formed or not."""
    pieces = []
    at = 0
    while at < len(body):
        size = rng.randint(1, max(1, len(body)))
        pieces.append(b"%x\r\n%b\r\n" % (len(body[at:at + size]), body[at:at + size]))
        at += size
    roll = rng.random()
    if roll < 0.5:
        return b"".join(pieces) + b"0\r\n\r\n"
    spoilers: List[Callable[[], bytes]] = [
        lambda: b"".join(pieces),  # no last chunk
        lambda: b"".join(pieces) + b"0\r\nX-Trailer: 1\r\n\r\n",
        lambda: b"zz\r\n" + body + b"\r\n0\r\n\r\n",
        lambda: b"-5\r\n" + body + b"\r\n0\r\n\r\n",
        lambda: b"%x\r\n%b\r\n0\r\n\r\n" % (len(body) + 10, body),
        lambda: b"%x;ext=1\r\n%b\r\n0\r\n\r\n" % (len(body), body),
        lambda: b"%x\n%b\n0\n\n" % (len(body), body),
        lambda: b"ffffffffffffffffffff\r\n" + body,
        lambda: b"%x\r\n%bXX0\r\n\r\n" % (len(body), body),
        lambda: b" %x \r\n%b\r\n0\r\n\r\n" % (len(body), body),
        lambda: b"0x%x\r\n%b\r\n0\r\n\r\n" % (len(body), body),
    ]
    return rng.choice(spoilers)()


def _bad_length(rng: random.Random, method: str, path: str, headers: Headers, body: bytes) -> bytes:
    length = rng.choice([str(len(body) + 50), str(max(0, len(body) - 5)), "-1", "abc", "1e3", "99999999999999",
                         f"{len(body)}, {len(body)}", f"+{len(body)}", ""])
    extra: Headers = [("Content-Length", length)]
    if rng.random() < 0.3:
        extra.append(("Content-Length", str(len(body))))
    if rng.random() < 0.2:
        extra.append(("Transfer-Encoding", rng.choice(["chunked", "gzip", "chunked, identity", "x"])))
    return request(method, path, headers + extra, body, length=False)


def _odd_head(rng: random.Random, method: str, path: str, headers: Headers, body: bytes) -> bytes:
    kind = rng.randrange(7)
    if kind == 0:
        version = rng.choice(["HTTP/1.0", "HTTP/2.0", "HTTP/1.1x", "", "HTTP/0.9"])
        return request(method, path, headers, body, version=version)
    if kind == 1:
        return request(method, path, headers + [("X-Big", "a" * rng.choice([8000, 70000]))], body)
    if kind == 2:
        return request(method, path, headers + [(f"X-{i}", "v") for i in range(rng.choice([50, 150]))], body)
    if kind == 3:
        return request(method, path, headers + [("Expect", "100-continue")], body)
    if kind == 4:  # an obsolete folded header, a header without a colon, binary in a header
        raw = request(method, path, headers, body)
        return raw.replace(b"\r\n", rng.choice([b"\r\n folded\r\n", b"\r\nno-colon\r\n", b"\r\nX: \xff\x00\r\n"]), 1)
    if kind == 5:
        return request(method, path + "?" + "q" * 70000, headers, body)
    return request(method, path, headers, body).replace(b"\r\n", b"\n")


class _Control:
    """The scenario's own session: `ping` must always work."""

    def __init__(self, port: int) -> None:
        self.port = port
        answer = exchange(port, request("POST", "/mcp", [JSON_TYPE, ACCEPT], json_body(
            {"jsonrpc": "2.0", "id": 0, "method": "initialize",
             "params": {"protocolVersion": LEGACY, "capabilities": {},
                        "clientInfo": {"name": "http-fuzz-control", "version": "1"}}})), ANSWER_TIMEOUT, body_bytes=-1)
        self.session = answer.headers.get("mcp-session-id", "")
        if answer.status != 200 or not self.session:
            raise RuntimeError(f"the control session could not be opened: {answer}")
        self.headers: Headers = [JSON_TYPE, ACCEPT, ("MCP-Protocol-Version", LEGACY), ("MCP-Session-Id", self.session)]
        exchange(port, request("POST", "/mcp", self.headers, json_body(
            {"jsonrpc": "2.0", "method": "notifications/initialized"})), ANSWER_TIMEOUT)
        self.pings = 0

    def ping(self) -> Tuple[bool, float, Answer]:
        id = VALID_BASE + self.pings
        self.pings += 1
        started = time.monotonic()
        answer = exchange(self.port, request("POST", "/mcp", self.headers, json_body(
            {"jsonrpc": "2.0", "id": id, "method": "ping"})), ANSWER_TIMEOUT, body_bytes=-1)
        elapsed = time.monotonic() - started
        return answer.status == 200 and f'"id":{id},"result":{{}}'.encode() in answer.body, elapsed, answer


@scenario("http-fuzz", quick_timeout=150, long_timeout=3600)
def http_fuzz(run: Run) -> Result:
    total = run.size(3_000, 100_000)
    result = Result()
    server = HTTPServerProcess(run)
    fuzzer = _Fuzzer(run.rng)
    control = _Control(server.port)
    statuses: Dict[str, int] = {}
    hangs: List[str] = []
    errors: List[str] = []
    health_failures: List[str] = []
    health_times: List[float] = []
    sent = 0
    started = time.monotonic()
    while sent < total and server.alive():
        opened: List[str] = []
        for _ in range(min(BATCH, total - sent)):
            data = fuzzer.make()
            answer = exchange(server.port, data, ANSWER_TIMEOUT)
            sent += 1
            key = f"{answer.status // 100}xx" if answer.status is not None else answer.ended
            statuses[key] = statuses.get(key, 0) + 1
            if answer.ended == "timeout":
                hangs.append(f"request {sent}: {data[:160]!r}")
            elif answer.status == 500:  # 501, 503, 505 are precise refusals; 500 is a fault of ours
                errors.append(f"request {sent} got {answer.status}: {data[:160]!r}")
            session = answer.headers.get("mcp-session-id")
            if session and session != control.session:
                opened.append(session)
        fuzzer.sessions[2:] = opened[:3]  # the next batch may name a few live sessions
        for session in opened[3:]:
            exchange(server.port, request("DELETE", "/mcp", [("MCP-Session-Id", session)]), ANSWER_TIMEOUT)
        ok, elapsed, answer = control.ping()
        health_times.append(elapsed)
        if not ok:
            health_failures.append(f"after request {sent}: {answer.status} {answer.ended} {answer.body[:120]!r}")
    elapsed = time.monotonic() - started
    alive = server.alive()
    stop_time = server.stop()
    result.figures.update(requests=sent, **dict(sorted(statuses.items())), hangs=len(hangs), server_errors=len(errors),
                          health_checks=len(health_times), health_failed=len(health_failures),
                          health_p99=f"{percentile(health_times, 0.99) * 1000:.1f}ms",
                          requests_per_s=int(sent / elapsed) if elapsed else 0,
                          tracebacks=server.tracebacks(), sigterm_exit=f"{stop_time:.2f}s")
    result.check(alive, f"the server died after {sent} requests")
    result.check(not hangs, f"{len(hangs)} requests neither answered nor closed within {ANSWER_TIMEOUT:g} s: "
                            f"{hangs[:3]}")
    result.check(not errors, f"{len(errors)} requests got 500: {errors[:3]}")
    result.check(not health_failures, f"{len(health_failures)} control pings failed: {health_failures[:3]}")
    result.check(server.tracebacks() == 0, "tracebacks on the server's stderr: " + " | ".join(
        line for line in server.stderr_lines if "Error" in line)[:400])
    return result
