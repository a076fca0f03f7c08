"""The streams table's client (run.py's "streams"): thousands of open streams from one thread, one selector loop.

    python3 tests/bench/streams_client.py PORT SERVER_PID STREAMS CALLS

Against a server on 127.0.0.1:PORT serving streams_mc_server.py's resource and tools (``add``, ``touch``), it:

1. times CALLS sequential ``tools/call`` of ``add`` (2026-07-28, enveloped) on one keep-alive connection: idle;
2. reads the server's threads and RSS (/proc/SERVER_PID/status: Threads, VmRSS): the baseline;
3. opens STREAMS streams, half ``subscriptions/listen`` naming ``bench://watched`` (2026-07-28: open once the
   acknowledgement came), half session GET streams (2025-11-25: ``initialize``, ``notifications/initialized``,
   ``resources/subscribe``, then GET: open once its 200 head came), OPENING at a time, on raw non-blocking
   sockets; a stream that is refused is counted by what refused it (a status, a JSON-RPC error, a closed
   connection, no answer within HANDSHAKE_TIMEOUT);
4. reads threads and RSS with the streams open, at once and again after `HELD_AFTER` seconds of holding them
   (the request workers the opening burst started have ended idle by then);
5. calls ``touch`` UPDATES times, one after another: for each, the time from just before the call's request is
   sent to each open stream's receipt of its ``notifications/resources/updated`` event (the event arriving on
   the stream, read by this loop, which reads the streams as they become readable);
6. times CALLS ``add`` calls again, with the streams open;
7. leaves: closes every stream and ends each 2025-11-25 session with DELETE (a client that is done says so;
   the sessions would otherwise live until their idle timeout), then reads threads until they are back to the
   baseline (or SETTLE_TIMEOUT), and RSS then;
8. does 3 and 7 once more, a second crowd: CPython keeps most of the memory it grew, so RSS after the clients
   leave is not RSS before; what must hold is that the second crowd reuses what the first left (no leak).

It prints one JSON object. Standard library only, so that it measures any server alike.
"""

import json
import os
import resource
import selectors
import socket
import statistics
import sys
import time
from collections import Counter, deque
from typing import Any, Deque, Dict, Generator, List, Optional, Tuple

WATCHED = "bench://watched"
MARKER = b"notifications/resources/updated"
ACK = b"notifications/subscriptions/acknowledged"
HANDSHAKE, MODERN = "2025-11-25", "2026-07-28"
OPENING = 64  # streams being opened at once: a steady crowd of clients arriving, not one burst of thousands
HANDSHAKE_TIMEOUT = 60.0
UPDATES = 3
NOTIFY_TIMEOUT = 60.0
SETTLE_TIMEOUT = 30.0
#: Seconds the streams are held open after the opening burst before the server's threads are counted again:
#: longer than the idle time after which mcplite's request workers end (`_Workers.idle_timeout`, 5 s).
HELD_AFTER = 6.0
DELETERS = 8  # keep-alive connections that end the 2025-11-25 sessions
HOST = "127.0.0.1"  # the Host header: with the port, as any client sends it (the SDK refuses it without, 421)


def envelope() -> Dict[str, Any]:
    return {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "bench-streams", "version": "1"}}


def request(method: str, body: Any = None, headers: Optional[Dict[str, str]] = None) -> bytes:
    data = b"" if body is None else json.dumps(body).encode()
    lines = [f"{method} /mcp HTTP/1.1", f"Host: {HOST}", "Accept: application/json, text/event-stream"]
    if body is not None:
        lines += ["Content-Type: application/json", f"Content-Length: {len(data)}"]
    lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + data


def modern_call(call_id: int, name: str, arguments: Dict[str, Any]) -> bytes:
    return request("POST", {"jsonrpc": "2.0", "id": call_id, "method": "tools/call",
                            "params": {"name": name, "arguments": arguments, "_meta": envelope()}},
                   {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": name})


class Reader:
    """One HTTP/1.1 response at a time, read as it arrives: the head, then the body (Content-Length or chunked,
    decoded); a stream's body grows for as long as it is open."""

    def __init__(self) -> None:
        self.raw = bytearray()
        self.reset()

    def reset(self) -> None:
        self.status: Optional[int] = None
        self.headers: Dict[str, str] = {}
        self.body = bytearray()
        self.complete = False
        self._chunked = False
        self._length = 0
        self._chunk_state = "size"  # "size", "data", "crlf", "trailer"
        self._chunk_left = 0

    def feed(self, data: bytes) -> None:
        self.raw += data
        self._advance()

    def _advance(self) -> None:
        raw = self.raw
        if self.status is None:
            end = raw.find(b"\r\n\r\n")
            if end < 0:
                return
            lines = bytes(raw[:end]).decode("latin-1").split("\r\n")
            del raw[:end + 4]
            self.status = int(lines[0].split()[1])
            for line in lines[1:]:
                name, _, value = line.partition(":")
                self.headers[name.strip().lower()] = value.strip()
            self._chunked = "chunked" in self.headers.get("transfer-encoding", "").lower()
            self._length = int(self.headers.get("content-length", "0"))
        if not self._chunked:
            if len(raw) >= self._length:
                self.body += raw[:self._length]
                del raw[:self._length]
                self.complete = True
            return
        while not self.complete:
            if self._chunk_state == "size" or self._chunk_state == "trailer":
                end = raw.find(b"\r\n")
                if end < 0:
                    return
                line = bytes(raw[:end])
                del raw[:end + 2]
                if self._chunk_state == "trailer":
                    self.complete = not line
                    continue
                self._chunk_left = int(line.split(b";")[0], 16)
                self._chunk_state = "data" if self._chunk_left else "trailer"
            elif self._chunk_state == "data":
                if not raw:
                    return
                take = min(self._chunk_left, len(raw))
                self.body += raw[:take]
                del raw[:take]
                self._chunk_left -= take
                if not self._chunk_left:
                    self._chunk_state = "crlf"
            else:
                if len(raw) < 2:
                    return
                del raw[:2]
                self._chunk_state = "size"

    def error(self) -> Optional[str]:
        """The JSON-RPC error in the body, shortly, if there is one."""
        at = self.body.find(b'"error"')
        if at < 0:
            return None
        text = bytes(self.body[at:at + 160]).decode("utf-8", "replace")
        code = text.split('"code":', 1)[1].split(",", 1)[0].strip() if '"code":' in text else "?"
        message = text.split('"message":', 1)[1].split('"')[1] if '"message":' in text else ""
        return f"JSON-RPC error {code}: {message[:70]}"


#: What a connection's flow yields: (the request's bytes, "complete" to resume at the response's end, "head" at
#: its head, "ack" once the listen acknowledgement came); it is sent back the Reader.
Flow = Generator[Tuple[bytes, str], Reader, Optional[str]]


class Conn:
    """One client connection run by `Loop`: its flow's requests, then (for a stream) the stream's events."""

    def __init__(self, loop: "Loop", flow: Flow, kind: str) -> None:
        self.loop, self.flow, self.kind = loop, flow, kind
        self.sock = socket.socket()
        self.sock.setblocking(False)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.reader = Reader()
        self.out = b""
        self.until = ""
        self.connected = False
        self.state = "opening"  # "opening", "open" (a stream), "done" (its flow ended), "failed"
        self.session: Optional[str] = None
        self.deadline = time.monotonic() + HANDSHAKE_TIMEOUT
        self.seen = 0  # MARKER events read since the stream opened
        self.tail = b""
        error = self.sock.connect_ex(("127.0.0.1", loop.port))
        if error not in (0, 115):  # EINPROGRESS
            self.sock.close()
            self.state = "failed"
            loop.refused[f"connect: {os.strerror(error)}"] += 1
            return
        loop.selector.register(self.sock, selectors.EVENT_WRITE, self)
        self._step(None)

    def _step(self, reader: Optional[Reader]) -> None:
        try:
            data, self.until = self.flow.send(reader)  # type: ignore[arg-type]
        except StopIteration as stop:
            if stop.value:
                self.fail(stop.value)
            else:
                self.state = "open" if self.kind != "worker" else "done"
                self.loop.opened(self)
            return
        if reader is not None:
            raw = reader.raw
            self.reader = Reader()
            self.reader.raw = raw  # (bytes of a next response, if any)
        self.out += data
        if self.connected:
            self._write()

    def _write(self) -> None:
        try:
            sent = self.sock.send(self.out)
        except BlockingIOError:
            sent = 0
        except OSError as exc:
            self.fail(f"send: {exc.strerror or exc}")
            return
        self.out = self.out[sent:]
        self.loop.selector.modify(self.sock, selectors.EVENT_READ | (selectors.EVENT_WRITE if self.out else 0), self)

    def ready(self, mask: int) -> None:
        if mask & selectors.EVENT_WRITE:
            if not self.connected:
                error = self.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                if error:
                    self.fail(f"connect: {os.strerror(error)}")
                    return
                self.connected = True
            self._write()
        if mask & selectors.EVENT_READ:
            self._read()

    def _read(self) -> None:
        got = False
        while True:
            try:
                data = self.sock.recv(262144)
            except BlockingIOError:
                break
            except OSError as exc:
                self.fail(f"connection {exc.strerror or exc}")
                return
            if not data:
                self.fail("closed by the server" if self.state != "open" else "stream ended by the server")
                return
            self.reader.feed(data)
            got = True
        if not got:
            return
        if self.state == "open":
            self._scan()
            return
        reader = self.reader
        if self.until == "complete" and reader.complete:
            self._step(reader)
        elif self.until == "head" and reader.status is not None:
            self._step(reader)
        elif self.until == "ack" and reader.status is not None and (
                reader.status != 200 or reader.complete or ACK in reader.body):
            self._step(reader)

    def _scan(self) -> None:
        body = self.reader.body
        text = self.tail + bytes(body)
        found = text.count(MARKER)
        self.tail = text[-len(MARKER) + 1:]
        body.clear()
        if found:
            self.seen += found
            self.loop.heard(self, found)
        if self.reader.complete:
            self.fail("stream ended by the server")

    def fail(self, reason: str) -> None:
        if self.state in ("failed", "closed"):
            return
        was_open = self.state == "open"
        self.state = "failed"
        self.close()
        self.loop.failed(self, reason, was_open)

    def close(self) -> None:
        try:
            self.loop.selector.unregister(self.sock)
        except (KeyError, ValueError):
            pass
        self.sock.close()
        if self.state != "failed":
            self.state = "closed"


def listen_flow(listen_id: int) -> Flow:
    reader = yield request("POST", {"jsonrpc": "2.0", "id": listen_id, "method": "subscriptions/listen", "params": {
        "_meta": envelope(), "notifications": {"resourceSubscriptions": [WATCHED]}}},
        {"MCP-Protocol-Version": MODERN, "Mcp-Method": "subscriptions/listen"}), "ack"
    if reader.status != 200:
        return f"HTTP {reader.status}"
    if ACK not in reader.body:
        return reader.error() or "no acknowledgement"
    reader.body.clear()
    return None


def session_flow(conn_box: List[Conn]) -> Flow:
    reader = yield request("POST", {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "bench-streams", "version": "1"}}}), \
        "complete"
    if reader.status != 200 or "mcp-session-id" not in reader.headers:
        return f"initialize: HTTP {reader.status}" + (f", {reader.error()}" if reader.error() else "")
    session = reader.headers["mcp-session-id"]
    conn_box[0].session = session
    headers = {"Mcp-Session-Id": session, "MCP-Protocol-Version": HANDSHAKE}
    reader = yield request("POST", {"jsonrpc": "2.0", "method": "notifications/initialized"}, headers), "complete"
    if reader.status != 202:
        return f"notifications/initialized: HTTP {reader.status}"
    reader = yield request("POST", {"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe",
                                    "params": {"uri": WATCHED}}, headers), "complete"
    if reader.status != 200 or reader.error():
        return f"resources/subscribe: HTTP {reader.status}" + (f", {reader.error()}" if reader.error() else "")
    reader = yield request("GET", None, {**headers, "Accept": "text/event-stream"}), "head"
    if reader.status != 200:
        return f"GET: HTTP {reader.status}"
    return None


def delete_flow(sessions: Deque[str]) -> Flow:
    while sessions:
        session = sessions.popleft()
        yield request("DELETE", None, {"Mcp-Session-Id": session, "MCP-Protocol-Version": HANDSHAKE}), "complete"
    return None


class Loop:
    """The one selector loop: every connection of the run, none with a thread."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.selector = selectors.DefaultSelector()
        self.refused: Counter = Counter()
        self.streams: List[Conn] = []
        self.opening = 0
        self.ended_open = Counter()  # streams the server ended after they opened: why
        self.waiting: Dict[Conn, float] = {}  # streams that have not heard the current update yet -> since
        self.latencies: List[float] = []
        self.trigger_sent = 0.0

    def pump(self, timeout: float) -> None:
        for key, mask in self.selector.select(timeout):
            key.data.ready(mask)

    def opened(self, conn: Conn) -> None:
        if conn.kind != "worker":
            self.opening -= 1
            self.streams.append(conn)

    def failed(self, conn: Conn, reason: str, was_open: bool) -> None:
        if conn.kind == "worker":
            self.refused[f"(deleting sessions) {reason}"] += 1
        elif was_open:
            self.ended_open[reason] += 1
            self.waiting.pop(conn, None)
        else:
            self.opening -= 1
            self.refused[reason] += 1

    def heard(self, conn: Conn, found: int) -> None:
        if conn in self.waiting:
            del self.waiting[conn]
            self.latencies.append(time.perf_counter() - self.trigger_sent)

    def open_streams(self, count: int) -> float:
        started = time.perf_counter()
        made = 0
        pending: List[Conn] = []
        while made < count or self.opening:
            while made < count and self.opening < OPENING:
                self.opening += 1
                if made % 2 == 0:
                    conn = Conn(self, listen_flow(made), "listen")
                else:
                    box: List[Conn] = []  # (the flow reads it after its first answer, when it holds the Conn)
                    conn = Conn(self, session_flow(box), "get")
                    box.append(conn)
                pending.append(conn)
                made += 1
            self.pump(0.5)
            now = time.monotonic()
            for conn in pending:
                if conn.state == "opening" and now > conn.deadline:
                    conn.fail(f"no answer within {HANDSHAKE_TIMEOUT:.0f} s")
            pending = [conn for conn in pending if conn.state == "opening"]
        return time.perf_counter() - started

    def notify(self, number: int) -> Tuple[int, Optional[str]]:
        """One update: call ``touch`` and read until every open stream has heard it. Returns (streams that did
        not hear it in time, the call's error if it failed)."""
        self.waiting = {conn: 0.0 for conn in self.streams if conn.state == "open"}
        trigger = socket.create_connection(("127.0.0.1", self.port))
        trigger.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        data = modern_call(10_000 + number, "touch", {})
        self.trigger_sent = time.perf_counter()
        trigger.sendall(data)
        trigger.setblocking(False)
        reader = Reader()
        self.selector.register(trigger, selectors.EVENT_READ, None)
        deadline = time.monotonic() + NOTIFY_TIMEOUT
        try:
            while (self.waiting or not reader.complete) and time.monotonic() < deadline:
                for key, mask in self.selector.select(1.0):
                    if key.data is None:
                        try:
                            chunk = trigger.recv(65536)
                        except BlockingIOError:
                            continue
                        if not chunk:
                            return len(self.waiting), "the trigger's connection was closed"
                        reader.feed(chunk)
                    else:
                        key.data.ready(mask)
        finally:
            self.selector.unregister(trigger)
            trigger.close()
        missed = len(self.waiting)
        self.waiting = {}
        return missed, None if reader.complete and not reader.error() else (reader.error() or "no answer to touch")

    def leave(self) -> float:
        started = time.perf_counter()
        sessions: Deque[str] = deque()
        for conn in self.streams:
            if conn.session:
                sessions.append(conn.session)
            conn.close()
        deleters = [Conn(self, delete_flow(sessions), "worker") for _ in range(min(DELETERS, len(sessions)))]
        deadline = time.monotonic() + 300.0
        while any(conn.state not in ("done", "failed") for conn in deleters) and time.monotonic() < deadline:
            self.pump(0.5)
        for conn in deleters:
            conn.close()
        return time.perf_counter() - started


def call_latencies(port: int, calls: int) -> Tuple[List[float], Optional[str]]:
    """``calls`` sequential ``add`` calls on one keep-alive connection; their times in seconds."""
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.settimeout(30.0)
    times: List[float] = []
    reader = Reader()
    try:
        for number in range(calls + 5):  # the first five warm the connection and the server's paths up
            started = time.perf_counter()
            sock.sendall(modern_call(number + 1, "add", {"a": number, "b": 1}))
            while not reader.complete:
                data = sock.recv(65536)
                if not data:
                    return times, "the server closed the call's connection"
                reader.feed(data)
            elapsed = time.perf_counter() - started
            if b'"structuredContent":{"result":%d}' % (number + 1) not in reader.body.replace(b" ", b""):
                return times, f"a wrong answer: {bytes(reader.body[:200])!r}"
            if number >= 5:
                times.append(elapsed)
            raw = reader.raw
            reader = Reader()
            reader.raw = raw
    except OSError as exc:
        return times, f"{type(exc).__name__}: {exc}"
    finally:
        sock.close()
    return times, None


def status(pid: int) -> Tuple[int, float]:
    """The server's threads and resident memory in MiB."""
    with open(f"/proc/{pid}/status") as text:
        fields = dict(line.split(":", 1) for line in text if ":" in line)
    return int(fields["Threads"]), int(fields["VmRSS"].split()[0]) / 1024.0


def quantiles(values: List[float]) -> Dict[str, float]:
    if not values:
        return {}
    ordered = sorted(values)

    def at(fraction: float) -> float:
        return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] * 1000.0

    return {"p50": statistics.median(ordered) * 1000.0, "p99": at(0.99), "max": ordered[-1] * 1000.0}


def main(argv: List[str]) -> int:
    global HOST
    port, pid, count, calls = int(argv[0]), int(argv[1]), int(argv[2]), int(argv[3])
    HOST = f"127.0.0.1:{port}"
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    report: Dict[str, Any] = {"wanted": count, "fd_limit": hard}
    errors: List[str] = []
    idle, error = call_latencies(port, calls)
    if error:
        errors.append(f"idle calls: {error}")
    report["calls_idle"] = quantiles(idle)
    report["threads_before"], report["rss_before"] = status(pid)
    loop = Loop(port)
    report["open_s"] = loop.open_streams(count)
    for _ in range(10):  # a last look for any stream the server ends at once
        loop.pump(0.05)
    report["accepted"] = sum(1 for conn in loop.streams if conn.state == "open")
    report["accepted_listen"] = sum(1 for conn in loop.streams if conn.state == "open" and conn.kind == "listen")
    report["accepted_get"] = sum(1 for conn in loop.streams if conn.state == "open" and conn.kind == "get")
    report["threads_open"], report["rss_open"] = status(pid)
    # The opening was a burst of requests (64 at once), which the server's handler pool may have met with as
    # many threads; they end once idle (mcplite: 5 s). What holding the streams costs is counted after that.
    held_until = time.monotonic() + HELD_AFTER
    while time.monotonic() < held_until:
        loop.pump(0.05)
    report["threads_held"], report["rss_held"] = status(pid)
    missed = 0
    for number in range(1, UPDATES + 1):
        lost, error = loop.notify(number)
        missed += lost
        if error:
            errors.append(f"update {number}: {error}")
    report["notify"] = quantiles(loop.latencies)
    report["notify_received"], report["notify_missed"] = len(loop.latencies), missed
    busy, error = call_latencies(port, calls)
    if error:
        errors.append(f"calls with the streams open: {error}")
    report["calls_open"] = quantiles(busy)
    report["ended_by_server"] = dict(loop.ended_open)
    report["leave_s"] = loop.leave()
    started = time.monotonic()
    threads, rss = status(pid)
    while threads > report["threads_before"] and time.monotonic() - started < SETTLE_TIMEOUT:
        time.sleep(0.1)
        threads, rss = status(pid)
    report["settle_s"] = time.monotonic() - started
    report["threads_after"], report["rss_after"] = threads, rss
    # A second crowd, opened and gone: what the first left behind must be reused, not added to.
    again = Loop(port)
    again.open_streams(count)
    report["accepted_again"] = sum(1 for conn in again.streams if conn.state == "open")
    again.leave()
    started = time.monotonic()
    threads, rss = status(pid)
    while threads > report["threads_before"] and time.monotonic() - started < SETTLE_TIMEOUT:
        time.sleep(0.1)
        threads, rss = status(pid)
    report["threads_after_again"], report["rss_after_again"] = threads, rss
    for reason, times in again.refused.items():
        loop.refused[f"(second crowd) {reason}"] += times
    report["refused"] = dict(loop.refused)
    report["errors"] = errors
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
