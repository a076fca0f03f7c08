"""Scenario many-streams: many open streams of both kinds, dropped at random and reopened, hear every numbered event.

The fixture server runs over HTTP (its default event store keeps the GET streams' events). Half the clients are
2025-11-25 sessions subscribed to test://numbered with their GET stream open; half are 2026-07-28
``subscriptions/listen`` streams naming it. Once all are open, the scenario publishes EVENTS numbered updates
(the ``announce`` tool, in batches). Each client drops its connection at random points (a plain close, mid-stream)
and reopens:

- a GET stream with ``Last-Event-ID`` (resumability, 2025-11-25): it must see every event 1..EVENTS exactly
  once, in order, across its drops;
- a listen with a new ``subscriptions/listen``: the spec gives listens no resumption (a client re-listens and
  refetches), so what it must see is each event at most once, in order, and within one listen no gap: every
  event published while it was acknowledged and open.

Then the clients leave (the sessions with DELETE): the server's threads and open descriptors must be back to
their baseline, with no traceback on its stderr.
"""

import importlib.util
import json
import os
import socket
import threading
import time
from typing import Any, Dict, List, Optional

from mcplite.protocol.sse import SSEParser

from .harness import ROOT, HTTPServerProcess, Result, Run, scenario, settle, steady, thread_count

NUMBERED = "test://numbered"
MARKER = "notifications/resources/updated"
WAIT = 30.0


def _bench_client() -> Any:
    """tests/bench/streams_client.py (its request builders and incremental HTTP response `Reader`)."""
    spec = importlib.util.spec_from_file_location("streams_client", os.path.join(ROOT, "tests", "bench",
                                                                                 "streams_client.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


raw = _bench_client()
raw.WATCHED = NUMBERED  # (its flows subscribe to raw.WATCHED)


def open_fds(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0


class StreamClient:
    """One client on a thread of its own: opens its stream, reads numbered events, drops and reopens at the
    numbers in ``drops``, until it has seen ``last`` (or given up)."""

    def __init__(self, port: int, kind: str, index: int, drops: List[int], last: int) -> None:
        self.port, self.kind, self.index, self.drops, self.last = port, kind, index, drops, last
        self.seen: List[int] = []
        self.segments: List[List[int]] = [[]]  # listen: the events of each listen opened
        self.session: Optional[str] = None
        self.last_id: Optional[str] = None
        self.problems: List[str] = []
        self.reopened = 0
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._run, name=f"{kind}-{index}", daemon=True)

    def _connect(self) -> socket.socket:
        sock = socket.create_connection(("127.0.0.1", self.port), WAIT)
        sock.settimeout(WAIT)
        return sock

    def _exchange(self, sock: socket.socket, data: bytes, until: str) -> Any:
        sock.sendall(data)
        reader = raw.Reader()
        while True:
            if until == "complete" and reader.complete or until == "head" and reader.status is not None:
                return reader
            if until == "ack" and reader.status is not None and (raw.ACK in reader.body or reader.complete
                                                                 or reader.status != 200):
                return reader
            chunk = sock.recv(65536)
            if not chunk:
                raise EOFError("the server closed the connection")
            reader.feed(chunk)

    def _open(self) -> Any:
        """Open (or reopen) the stream: its socket and its Reader, positioned after the head (and the ack)."""
        sock = self._connect()
        if self.kind == "listen":
            reader = self._exchange(sock, raw.request("POST", {
                "jsonrpc": "2.0", "id": self.index, "method": "subscriptions/listen",
                "params": {"_meta": raw.envelope(), "notifications": {"resourceSubscriptions": [NUMBERED]}}},
                {"MCP-Protocol-Version": raw.MODERN, "Mcp-Method": "subscriptions/listen"}), "ack")
            if reader.status != 200 or raw.ACK not in reader.body:
                raise RuntimeError(f"listen refused: {reader.status} {bytes(reader.body[:200])!r}")
            reader.body = reader.body[reader.body.find(raw.ACK):]
            reader.body = reader.body[reader.body.find(b"\n\n") + 2:] if b"\n\n" in reader.body else bytearray()
            return sock, reader
        headers = {"MCP-Protocol-Version": raw.HANDSHAKE}
        if self.session is None:
            reader = self._exchange(sock, raw.request("POST", {
                "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                    "protocolVersion": raw.HANDSHAKE, "capabilities": {},
                    "clientInfo": {"name": "many-streams", "version": "1"}}}), "complete")
            self.session = reader.headers["mcp-session-id"]
            headers["Mcp-Session-Id"] = self.session
            self._exchange(sock, raw.request("POST", {"jsonrpc": "2.0", "method": "notifications/initialized"},
                                             headers), "complete")
            reader = self._exchange(sock, raw.request("POST", {
                "jsonrpc": "2.0", "id": 2, "method": "resources/subscribe", "params": {"uri": NUMBERED}}, headers),
                "complete")
            if reader.status != 200 or reader.error():
                raise RuntimeError(f"subscribe refused: {reader.status} {reader.error()}")
        headers["Mcp-Session-Id"] = self.session
        headers["Accept"] = "text/event-stream"
        if self.last_id is not None:
            headers["Last-Event-ID"] = self.last_id
        reader = self._exchange(sock, raw.request("GET", None, headers), "head")
        if reader.status != 200:
            raise RuntimeError(f"GET refused: {reader.status}")
        return sock, reader

    def _run(self) -> None:
        deadline = time.monotonic() + WAIT * 4
        try:
            sock, reader = self._open()
            self.ready.set()
            parser = SSEParser()
            while (not self.seen or self.seen[-1] < self.last) and time.monotonic() < deadline:
                if self.drops and self.seen and self.seen[-1] >= self.drops[0]:
                    self.drops.pop(0)
                    sock.close()  # the client drops: mid-stream, whatever is in flight
                    sock, reader = self._open()
                    parser = SSEParser()
                    self.reopened += 1
                    self.segments.append([])
                    continue
                chunk = sock.recv(65536)
                if not chunk:
                    raise EOFError("the server ended the stream")
                reader.feed(chunk)
                events = parser.feed(bytes(reader.body))
                reader.body.clear()
                for event in events:
                    if MARKER not in event.data:
                        continue
                    number = json.loads(event.data)["params"]["_meta"]["n"]
                    self.seen.append(number)
                    self.segments[-1].append(number)
                    if event.id:
                        self.last_id = event.id
            sock.close()
        except Exception as exc:  # noqa: BLE001  (any failure is this client's problem to report)
            self.problems.append(f"{self.kind} {self.index}: {type(exc).__name__}: {exc}")
        finally:
            self.ready.set()

    def check(self) -> List[str]:
        problems = list(self.problems)
        if self.kind == "get":
            if self.seen != list(range(1, self.last + 1)):
                missing = sorted(set(range(1, self.last + 1)) - set(self.seen))
                problems.append(f"GET {self.index}: {len(self.seen)} events for {self.last}, missing {missing[:5]}, "
                                f"repeated {len(self.seen) - len(set(self.seen))}")
        else:
            if self.seen != sorted(set(self.seen)):
                problems.append(f"listen {self.index}: events repeated or out of order")
            for segment in self.segments:
                if segment and segment != list(range(segment[0], segment[-1] + 1)):
                    problems.append(f"listen {self.index}: a gap within one listen: {segment[:10]}...")
            if not self.seen or self.seen[-1] != self.last:
                problems.append(f"listen {self.index}: did not hear the last event {self.last}")
        return problems


@scenario("many-streams", quick_timeout=90, long_timeout=900)
def many_streams(run: Run) -> Result:
    clients_wanted = run.size(40, 200)
    # The GET streams' events stay within what the server's event store keeps (10,000 in all; long: 100 x 80).
    events = run.size(150, 80)
    batch = 15
    result = Result()
    server = HTTPServerProcess(run)
    clients: List[StreamClient] = []
    try:
        # Warm up first (the server starts its reactor and housekeeping with the first connection and session):
        # one stream of each kind, opened and left; the baseline is what stays.
        with raw_call(server.port) as call:
            call("announce", {"first": 0, "count": 0})
        for kind in ("get", "listen"):
            warm = StreamClient(server.port, kind, 0, [], 0)
            sock, _ = warm._open()
            sock.close()
            if warm.session:
                leave(server.port, [warm.session])
        baseline_threads = steady(lambda: thread_count(server.pid))
        baseline_fds = steady(lambda: open_fds(server.pid))
        for index in range(clients_wanted):
            kind = "get" if index % 2 else "listen"
            # Drops within the first 80% of the events, so that every client is open again for the last ones.
            drops = sorted(run.rng.sample(range(1, int(events * 0.8)), run.rng.randint(1, 3)))
            clients.append(StreamClient(server.port, kind, index + 1, drops, events))
        for client in clients:
            client.thread.start()
        for client in clients:
            client.ready.wait(WAIT)
        with raw_call(server.port) as call:
            for first in range(1, events + 1, batch):
                call("announce", {"first": first, "count": min(batch, events + 1 - first)})
                time.sleep(run.rng.uniform(0.0, 0.05))  # drops and reopenings fall between and within batches
        for client in clients:
            client.thread.join(WAIT * 4)
        problems = [problem for client in clients for problem in client.check()]
        leave(server.port, [client.session for client in clients if client.session])
        threads = settle(lambda: thread_count(server.pid), baseline_threads, 15)
        fds = settle(lambda: open_fds(server.pid), baseline_fds, 15)
        result.figures.update(clients=len(clients), events=events,
                              drops=sum(client.reopened for client in clients),
                              delivered=sum(len(client.seen) for client in clients),
                              threads=f"{baseline_threads}->{threads}", fds=f"{baseline_fds}->{fds}")
        result.check(not problems, f"{len(problems)} problems: {problems[:3]}")
        result.check(not any(client.thread.is_alive() for client in clients), "clients still reading")
        result.check(threads <= baseline_threads, f"server threads {threads} after, {baseline_threads} before")
        result.check(fds <= baseline_fds, f"server descriptors {fds} after, {baseline_fds} before")
    finally:
        server.stop()
    result.check(server.tracebacks() == 0, "tracebacks on the server's stderr")
    return result


class raw_call:
    """Sequential 2026-07-28 tool calls on one keep-alive connection (``with raw_call(port) as call``)."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), WAIT)
        self.sock.settimeout(WAIT)
        self.number = 0

    def __enter__(self) -> Any:
        return self.call

    def __exit__(self, *exc_info: Any) -> None:
        self.sock.close()

    def call(self, name: str, arguments: Dict[str, Any]) -> None:
        self.number += 1
        self.sock.sendall(raw.modern_call(self.number, name, arguments))
        reader = raw.Reader()
        while not reader.complete:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("the server closed the call's connection")
            reader.feed(chunk)
        if reader.status != 200 or reader.error():
            raise RuntimeError(f"{name}: {reader.status} {reader.error()}")


def leave(port: int, sessions: List[str]) -> None:
    """End the 2025-11-25 sessions (DELETE), as clients that are done do."""
    with socket.create_connection(("127.0.0.1", port), WAIT) as sock:
        sock.settimeout(WAIT)
        for session in sessions:
            sock.sendall(raw.request("DELETE", None, {"Mcp-Session-Id": session,
                                                      "MCP-Protocol-Version": raw.HANDSHAKE}))
            reader = raw.Reader()
            while not reader.complete:
                chunk = sock.recv(65536)
                if not chunk:
                    return
                reader.feed(chunk)
