"""mcplite's server in both protocol eras, interleaved in one run: the floor's raw client speaking each era.

    python3 tests/bench/era_client.py [--client session] WORKLOAD...   (WORKLOAD as in workload.py)

Its one JSON line has the figures of each era under ``"eras"``: ``{"eras": {"handshake": REPORT,
"modern": REPORT}}``, each REPORT as a workload.py client prints it (``version`` included).

``handshake`` is a 2025-11-25 client: ``initialize``, ``notifications/initialized``, then plain requests
(over HTTP with ``MCP-Protocol-Version: 2025-11-25`` and the session id, if the server gives one).
``modern`` is a 2026-07-28 client: ``server/discover``, then every request enveloped (``params._meta`` with the
protocol version, client capabilities and client info, as the official SDKs send them; over HTTP with the
``MCP-Protocol-Version``, ``Mcp-Method`` and ``Mcp-Name`` headers) and every result checked for
``resultType: "complete"``, so a server that answered in the wrong era fails the run.

The client is the floor's (floor_client.py, floor_http_client.py): JSON lines over pipes, ``http.client``
keep-alive, a few microseconds per call; on stdio each call's request is written from a per-era template
(`CALL_START` and `CALL_ENDS`: the constant part, ``_meta`` included, encoded once), so the client does the same work
in both eras but for the envelope's bytes and the longer answer it parses; so the
difference between the eras is what the server does, little diluted by the client's own cost (a full mcplite
client costs about as much per call as the server does). Both eras are connected at once (on stdio two
server processes of the same program, one per era, a connection's era being fixed; over HTTP the one
server run.py started) and their calls alternate in blocks of `BLOCK` calls, in the order ABBA..., so that
the drift of a shared machine, which moves a whole run by 20% here, falls on both eras alike. On stdio the
calls are also spread over `PAIRS` pairs of server processes, each era's started first in half of them: what
one process happens to get moves its figures by up to 10% (an A/A run, one era against itself on one pair of
processes, came out between 0.91x and 1.21x; on four pairs, between 0.96x and 1.06x).

``--client session`` (stdio only) puts mcplite's own JSON-RPC endpoint in the client's place instead: a bare
``mcplite.session.endpoint.Session`` (no lifecycle) over ``StdioClientTransport``, calls from threads as
mcplite's Client makes them; what the eras' difference becomes behind a client that costs as much as
mcplite's does.

``--client equalized`` (stdio only) is the raw client with its reading made the same in both eras: the
2025-11-25 client reads each answer as long as a 2026-07-28 one, the members every 2026-07-28 result ends
with (``resultType`` and the ``_meta`` server info, as ``server/discover`` showed them) spliced in before it
parses it (`EqualizedPipe`). A 2026-07-28 answer is some 100 bytes longer, which the raw client pays for in
parsing them (9.5k instructions more a call, callgrind: more than the server's whole difference between the
eras); what is left between the eras is the server's, and the pipe's few more bytes.

On stdio each era's figures also say how much CPU its server process spent per call (``server_cpu_us``, from
the kernel's per-thread run time, /proc/PID/task/*/schedstat, nanoseconds): the cost of the server's path
without the scheduling noise that latency and throughput carry on a shared machine.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

import workload
from floor_client import INITIALIZE, Pipe, call_message, check_response

MODERN_VERSION = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "bench-era", "version": "0"}}
DISCOVER = {"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": {"_meta": META}}


def modern_message(i: int) -> Dict[str, Any]:
    message = call_message(i)
    message["params"]["_meta"] = META
    return message


def check_modern(i: int, response: Dict[str, Any]) -> None:
    check_response(i, response)
    if response["result"].get("resultType") != "complete":
        workload.fail(f"call {i} was not answered as 2026-07-28: {response!r}")


def discovered(response: Any) -> str:
    """The version a ``server/discover`` answer agrees to, or the run fails."""
    versions = ((response or {}).get("result") or {}).get("supportedVersions") or []
    if MODERN_VERSION not in versions:
        workload.fail(f"server/discover does not offer {MODERN_VERSION}: {response!r}")
    return MODERN_VERSION


#: A call's request line, as `TemplatePipe.send_call` writes it: its start, the same in both eras, formatted with
#: the call's numbers; then the rest of the line, per era, encoded once (``_meta`` included) and appended as it
#: is. So what the client spends per call is the same few operations in both eras, and the difference between
#: them is the server's (and the pipe's few more bytes), not the client encoding the same ``_meta`` every time
#: (json.dumps of the enveloped request costs the client about 1.5 us more) nor formatting it (``%`` reads its
#: template character by character: 1.5k instructions more a call for the envelope's 190, callgrind).
CALL_START = '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"add","arguments":{"a":%d,"b":%d}'
CALL_ENDS = {"handshake": b"}}\n", "modern": b',"_meta":' + json.dumps(META, separators=(",", ":")).encode() + b"}}\n"}


class TemplatePipe(Pipe):
    """`Pipe`, its calls' requests written from `CALL_START` and the era's end in `CALL_ENDS`."""

    era = "handshake"
    end = CALL_ENDS[era]

    def send_call(self, i: int) -> None:
        a, b = workload.operands(i)
        self.writer.write((CALL_START % (i + 1, a, b)).encode() + self.end)  # type: ignore[union-attr]
        self.writer.flush()  # type: ignore[union-attr]


class EqualizedPipe(TemplatePipe):
    """``--client equalized``: the 2025-11-25 client, each answer read with `tail` spliced in before the result's
    closing brace, so that it parses as much as the 2026-07-28 client does."""

    tail = b""  # set by `connected`, from the 2026-07-28 server's ``server/discover`` answer

    def receive(self) -> Dict[str, Any]:
        line = self.reader.readline()  # type: ignore[union-attr]
        if line.endswith(b"}}\n"):  # (the result's brace and the answer's: as mcplite writes every answer)
            line = line[:-3] + self.tail + line[-3:]
        answer: Dict[str, Any] = json.loads(line)
        return answer


class ModernPipe(TemplatePipe):
    era = "modern"
    end = CALL_ENDS[era]
    #: The ``_meta`` of its ``server/discover`` answer: the server info every result carries.
    server_meta: Any = None

    def initialize(self) -> str:
        self.send(DISCOVER)
        answer = self.receive()
        self.server_meta = ((answer or {}).get("result") or {}).get("_meta")
        return discovered(answer)

    def message(self, i: int) -> Dict[str, Any]:
        return modern_message(i)

    # Called as it is (no method of its own around it): as many calls per answer as the handshake era's check.
    check = staticmethod(check_modern)


ERAS = ("handshake", "modern")
#: Calls in one block: the eras take turns block by block (a couple of milliseconds each).
BLOCK = 25
#: Pairs of server processes (one per era) that a stdio run's calls are spread over (see `main`).
PAIRS = 4
Timed = Tuple[List[float], float]  # latencies, and the seconds the calls took


def cpu_ns(pid: int) -> int:
    """The CPU time all live threads of process ``pid`` have run for, in nanoseconds (0 where Linux does
    not say). A server's threads live as long as it does, so differences of this are its CPU time."""
    total = 0
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as stat:
                total += int(stat.read().split()[0])
        except (OSError, ValueError, IndexError):
            continue  # it ended while we looked
    return total


Samples = Dict[str, Dict[str, Any]]  # era -> {"latencies": [...], "elapsed": seconds, "cpu_ns": server CPU}


def interleaved(measure: Dict[str, Callable[[int], Timed]], count: int, servers: Optional[Dict[str, int]] = None,
                block_calls: int = BLOCK, into: Optional[Samples] = None) -> Samples:
    """``count`` calls of each era, in blocks of ``block_calls`` taken in turns (ABBA...): ``measure[era](n)``
    makes ``n`` calls and times them. Their samples (added to ``into``'s, when given); with ``servers`` (era ->
    the pid of its server process), the CPU time the servers spent on them too. `report` makes figures of them."""
    samples: Samples = into if into is not None else {
        era: {"latencies": [], "elapsed": 0.0, "cpu_ns": 0} for era in ERAS}
    blocks = max(1, count // block_calls)
    for block in range(blocks):
        size = share(count, blocks, block)
        for era in (ERAS if block % 2 == 0 else ERAS[::-1]):
            before = cpu_ns(servers[era]) if servers else 0
            times, seconds = measure[era](size)
            if servers:
                samples[era]["cpu_ns"] += cpu_ns(servers[era]) - before
            samples[era]["latencies"] += times
            samples[era]["elapsed"] += seconds
    return samples


def report(samples: Samples) -> Dict[str, Dict[str, Any]]:
    """The figures of each era over all its samples; ``server_cpu_us``, the server's CPU time per call, where
    the servers' CPU time was taken."""
    figures = {era: workload.figures(taken["latencies"], taken["elapsed"]) for era, taken in samples.items()}
    for era, taken in samples.items():
        if taken["cpu_ns"]:
            figures[era]["server_cpu_us"] = taken["cpu_ns"] / 1000.0 / max(1, len(taken["latencies"]))
    return figures


def share(count: int, parts: int, part: int) -> int:
    """Part ``part``'s share of ``count`` calls split into ``parts`` parts (the first ones take the remainder)."""
    return count // parts + (1 if part < count % parts else 0)


def one_by_one(call: Callable[[int], None]) -> Callable[[int], Timed]:
    """Measure ``n`` sequential calls of ``call``, numbered from 0."""
    def measure(count: int) -> Timed:
        clock = time.perf_counter
        latencies = []
        started = clock()
        for i in range(count):
            before = clock()
            call(i)
            latencies.append(clock() - before)
        return latencies, clock() - started
    return measure


def warm_up(call: Callable[[int], None]) -> None:
    for i in range(workload.WARMUP):
        call(workload.WARMUP_BASE + i)


def run_http(args: workload.Args) -> None:
    # Imported only here, as floor_client.py does.
    from floor_http_client import HTTP

    class HandshakeHTTP(HTTP):
        def initialize(self) -> str:
            version = super().initialize()
            self.headers["MCP-Protocol-Version"] = version  # what a 2025-11-25 client sends after initialize
            return version

    class ModernHTTP(HTTP):
        def headers_for(self, message: Dict[str, Any]) -> Dict[str, str]:
            headers = {**self.headers, "MCP-Protocol-Version": MODERN_VERSION, "Mcp-Method": message["method"]}
            name = message["params"].get("name")
            if name is not None:
                headers["Mcp-Name"] = name
            return headers

        def initialize(self) -> str:
            return discovered(self.post(DISCOVER)[0])

        def message(self, i: int) -> Dict[str, Any]:
            return modern_message(i)

        def check(self, i: int, response: Dict[str, Any]) -> None:
            check_modern(i, response)

    kinds = {"handshake": HandshakeHTTP, "modern": ModernHTTP}
    single = {era: kinds[era](args.url) for era in ERAS}
    versions = {era: connection.initialize() for era, connection in single.items()}
    for connection in single.values():
        warm_up(connection.call)
    sequential = report(interleaved({era: one_by_one(single[era].call) for era in ERAS}, args.sequential))
    crowds = {era: [kinds[era](args.url) for _ in range(args.clients)] for era in ERAS}
    for crowd in crowds.values():
        for connection in crowd:
            connection.initialize()
            connection.call(workload.WARMUP_BASE)

    def concurrently(era: str) -> Callable[[int], Timed]:
        calls: List[Callable[[int], None]] = [connection.call for connection in crowds[era]]
        return lambda count: workload.threaded_raw(calls, max(1, count // len(calls)))

    concurrent = report(interleaved({era: concurrently(era) for era in ERAS}, args.clients * args.per_client))
    workload.emit(eras={era: {"version": versions[era], "sequential": sequential[era],
                              "concurrent": concurrent[era]} for era in ERAS})


class SessionPipe:
    """`Pipe`'s interface over a bare mcplite `Session` (a JSON-RPC endpoint with no lifecycle) on stdio."""

    def __init__(self, argv: List[str], era: str) -> None:
        from mcplite.session.endpoint import Session
        from mcplite.transports.stdio import StdioClientTransport

        self.era = era
        # The whole environment, as the raw pipes' servers get it (and the bench puts mcplite on PYTHONPATH).
        self.transport = StdioClientTransport(argv, inherit_env=True)
        self.session = Session(self.transport, name="bench-era")
        self.session.start()
        assert self.transport.process is not None
        self.process = self.transport.process
        self.check = check_modern if era == "modern" else check_response
        self.meta = {"_meta": META} if era == "modern" else {}

    def initialize(self) -> str:
        if self.era == "modern":
            return discovered({"result": self.session.request("server/discover", {"_meta": META})})
        params: Dict[str, Any] = INITIALIZE["params"]  # type: ignore[assignment]
        result = self.session.request("initialize", params)
        self.session.notify("notifications/initialized")
        version: str = result["protocolVersion"]
        return version

    def call(self, i: int) -> None:
        a, b = workload.operands(i)
        result = self.session.request("tools/call", {"name": "add", "arguments": {"a": a, "b": b}, **self.meta})
        self.check(i, {"id": i + 1, "result": result})

    def pipelined_raw(self, count: int) -> Timed:
        """`workload.WINDOW` threads calling at once, as mcplite's Client is used (the stdio workload)."""
        return workload.threaded_raw([self.call] * workload.WINDOW, max(1, count // workload.WINDOW))

    def close(self) -> None:
        self.session.close()


def main() -> None:
    argv = sys.argv[1:]
    client = "raw"
    if argv[:1] == ["--client"]:
        client, argv = argv[1], argv[2:]
    if client not in ("raw", "session", "equalized"):
        workload.fail(f"era_client.py: unknown --client {client!r}: raw, session or equalized")
    args = workload.parse(argv)
    if args.mode == "http":
        if client != "raw":
            workload.fail(f"era_client.py: --client {client} is for stdio")
        run_http(args)
        return
    if args.mode in ("cold", "hold"):  # connect both eras, call once; hold: then wait to be measured
        pipes = connected(args.server, client)
        if args.mode == "hold":
            workload.hold(pipes["modern"].version)
        close(pipes)
        return
    # The calls are spread over `PAIRS` pairs of server processes, one pair after the other: what one process
    # happens to get (its core, its hash seed, its memory layout) moves its figures by as much as 10% on a
    # shared machine (an A/A run of one era against itself, one pair: 0.91x to 1.21x), and would otherwise
    # fall on one era alone.
    sequential: Optional[Samples] = None
    in_flight: Optional[Samples] = None
    versions: Dict[str, str] = {}
    for pair in range(PAIRS):
        # Each era's process is started first in half the pairs: the one started second has come out faster
        # in an A/A run (both processes serving the same era), by 5% with 8 calls in flight.
        pipes = connected(args.server, client, first=ERAS[pair % 2])
        versions = {era: pipe.version for era, pipe in pipes.items()}
        for pipe in pipes.values():
            warm_up(pipe.call)
        servers = {era: pipe.process.pid for era, pipe in pipes.items()}
        sequential = interleaved({era: one_by_one(pipe.call) for era, pipe in pipes.items()},
                                 share(args.sequential, PAIRS, pair), servers, into=sequential)
        # Threaded callers (--client session) get blocks of several calls each.
        in_flight = interleaved({era: pipe.pipelined_raw for era, pipe in pipes.items()},
                                share(args.in_flight, PAIRS, pair), servers,
                                BLOCK if client != "session" else BLOCK * workload.WINDOW, into=in_flight)
        close(pipes)
    assert sequential is not None and in_flight is not None
    sequential_figures, in_flight_figures = report(sequential), report(in_flight)
    workload.emit(eras={era: {"version": versions[era], "sequential": sequential_figures[era],
                              "in_flight": in_flight_figures[era]} for era in ERAS})


def connected(server: List[str], client: str, first: str = ERAS[0]) -> Dict[str, Any]:
    """One server process per era, ``first``'s started first, each connected as its era's client connects
    (``pipe.version`` says the revision it agreed to) and called once."""
    kinds = {"handshake": EqualizedPipe if client == "equalized" else TemplatePipe, "modern": ModernPipe}
    pipes: Dict[str, Any] = {}
    for era in sorted(ERAS, key=lambda era: era != first):
        pipes[era] = SessionPipe(server, era) if client == "session" else kinds[era](server)
    for era in ERAS:
        pipes[era].version = pipes[era].initialize()
    if client == "equalized":
        meta = json.dumps(pipes["modern"].server_meta, ensure_ascii=False, separators=(",", ":"))
        pipes["handshake"].tail = b',"resultType":"complete","_meta":' + meta.encode()
    for era in ERAS:
        pipes[era].call(0)
    return pipes


def close(pipes: Dict[str, Any]) -> None:
    for pipe in pipes.values():
        pipe.close()


if __name__ == "__main__":
    main()
