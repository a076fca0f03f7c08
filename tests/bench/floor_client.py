"""The stdlib floor's client over stdio (see workload.py for the command line): JSON lines over a child's
pipes, messages as an MCP client sends them, against floor_server.py. ``http`` mode is floor_http_client.py."""

import json
import subprocess
import sys
import time
from typing import Any, Dict, List, Tuple

import workload

INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
              "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                         "clientInfo": {"name": "bench-floor", "version": "0"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def call_message(i: int) -> Dict[str, Any]:
    a, b = workload.operands(i)
    return {"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
            "params": {"name": "add", "arguments": {"a": a, "b": b}}}


def check_response(i: int, response: Dict[str, Any]) -> None:
    if response.get("id") != i + 1:
        workload.fail(f"call {i} got the response to id {response.get('id')!r}")
    workload.check_wire(i, response["result"])


class Pipe:
    """A server process spoken to in JSON lines (era_client.py varies its messages: `message`, `check`)."""

    def __init__(self, argv: List[str]) -> None:
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.writer, self.reader = self.process.stdin, self.process.stdout

    def send(self, message: Dict[str, Any]) -> None:
        self.writer.write(json.dumps(message).encode() + b"\n")  # type: ignore[union-attr]
        self.writer.flush()  # type: ignore[union-attr]

    def receive(self) -> Dict[str, Any]:
        return json.loads(self.reader.readline())  # type: ignore[union-attr]

    def initialize(self) -> str:
        self.send(INITIALIZE)
        version: str = self.receive()["result"]["protocolVersion"]
        self.send(INITIALIZED)
        return version

    def message(self, i: int) -> Dict[str, Any]:
        """The request of call ``i``."""
        return call_message(i)

    def check(self, i: int, response: Dict[str, Any]) -> None:
        """Fail unless ``response`` answers call ``i`` rightly."""
        check_response(i, response)

    def send_call(self, i: int) -> None:
        """Write call ``i``'s request (era_client.py writes its own from a template)."""
        self.send(self.message(i))

    def call(self, i: int) -> None:
        self.send_call(i)
        self.check(i, self.receive())

    def pipelined(self, count: int) -> Dict[str, Any]:
        """``count`` calls with `workload.WINDOW` of them in flight: a new one is sent as each answer comes."""
        return workload.figures(*self.pipelined_raw(count))

    def pipelined_raw(self, count: int) -> Tuple[List[float], float]:
        """`pipelined`'s calls; their latencies and the seconds they took."""
        sent: Dict[int, float] = {}
        latencies: List[float] = []
        clock = time.perf_counter
        started = clock()
        for i in range(min(workload.WINDOW, count)):
            sent[i] = clock()
            self.send_call(i)
        for answered in range(count):
            response = self.receive()
            i = response["id"] - 1
            latencies.append(clock() - sent.pop(i))
            self.check(i, response)
            following = answered + workload.WINDOW
            if following < count:
                sent[following] = clock()
                self.send_call(following)
        return latencies, clock() - started

    def close(self) -> None:
        self.writer.close()  # type: ignore[union-attr]
        self.process.wait()


def main() -> None:
    args = workload.parse(sys.argv[1:])
    if args.mode == "http":
        # Imported only here, so that the stdio floor's start-up time and memory hold nothing of HTTP.
        from floor_http_client import run_http
        run_http(args)
        return
    pipe = Pipe(args.server)
    version = pipe.initialize()
    pipe.call(0)
    if args.mode == "hold":
        workload.hold(version)
    elif args.mode == "stdio":
        sequential = workload.sequential(pipe.call, args.sequential)
        workload.emit(version=version, sequential=sequential, in_flight=pipe.pipelined(args.in_flight))
    pipe.close()


if __name__ == "__main__":
    main()
