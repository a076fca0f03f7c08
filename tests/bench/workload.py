"""What the benchmark's Python client programs share: the command line, the calls, the checks, the figures.

Each client program (``mc_client.py``, ``py_client.py``, ``floor_client.py``; ``ts_client.mjs`` mirrors
this in JavaScript) runs one workload itself and prints one JSON line, so that its process start-up is not
counted in per-call figures::

    CLIENT stdio SEQUENTIAL IN_FLIGHT -- SERVER...   {"version", "sequential": FIGURES, "in_flight": FIGURES}
    CLIENT http URL SEQUENTIAL CLIENTS PER_CLIENT    {"version", "sequential": FIGURES, "concurrent": FIGURES}
    CLIENT cold -- SERVER...                         spawn, initialize, call once, close (timed from outside)
    CLIENT hold -- SERVER...                         initialize, call once, print {"version"}, wait for stdin

``IN_FLIGHT`` calls are spread over `WINDOW` concurrent callers on one connection; ``CLIENTS`` HTTP clients
make ``PER_CLIENT`` calls each. FIGURES is ``{"calls", "calls_per_s", "p50_ms", "p99_ms"}``, timed after
`WARMUP` calls that are not. Every call is ``add(a, b)`` with operands that differ per call (`operands`), and
every result is checked (`check`): a wrong one ends the program with status 1 and the reason on stderr.

Standard library only, Python >= 3.9: the official SDK's client imports this from its own venv.
"""

import json
import sys
import threading
import time
from typing import Any, Callable, Dict, List, NamedTuple, NoReturn, Optional, Sequence, Tuple

#: Calls kept in flight on one connection in the ``stdio`` workload.
WINDOW = 8
#: Calls made before the timed ones, so that first-call costs (lazy imports, JIT, caches) are not timed.
WARMUP = 50
#: Where warm-up calls number their operands, apart from the timed calls'.
WARMUP_BASE = 1_000_000


class Args(NamedTuple):
    """One client program's command line (see the module docstring)."""

    mode: str
    server: List[str]
    url: str = ""
    sequential: int = 0
    in_flight: int = 0
    clients: int = 0
    per_client: int = 0


def parse(argv: Sequence[str]) -> Args:
    """Parse a client program's arguments (``sys.argv[1:]``); exits with a usage message when they are wrong."""
    try:
        mode = argv[0]
        if mode in ("stdio", "cold", "hold"):
            counts, server = _split_server(argv[1:])
            if mode == "stdio":
                sequential, in_flight = (int(n) for n in counts)
                return Args(mode, server, sequential=sequential, in_flight=in_flight)
            if counts:
                raise ValueError(counts)
            return Args(mode, server)
        if mode == "http":
            url, sequential, clients, per_client = argv[1], int(argv[2]), int(argv[3]), int(argv[4])
            return Args(mode, [], url=url, sequential=sequential, clients=clients, per_client=per_client)
    except (IndexError, ValueError):
        pass
    fail("usage: CLIENT stdio SEQUENTIAL IN_FLIGHT -- SERVER... | http URL SEQUENTIAL CLIENTS PER_CLIENT | "
         "cold -- SERVER... | hold -- SERVER...")


def _split_server(rest: Sequence[str]) -> Tuple[List[str], List[str]]:
    separator = list(rest).index("--")
    server = list(rest[separator + 1:])
    if not server:
        raise ValueError("no server command")
    return list(rest[:separator]), server


def operands(i: int) -> Tuple[int, int]:
    """The arguments of call ``i``: a different sum for every call, so a mixed-up answer is caught."""
    return i, i + 1


def check(i: int, structured: Optional[Dict[str, Any]], text: Optional[str], is_error: bool = False) -> None:
    """Fail unless a result of call ``i`` says ``a + b``: ``structuredContent`` when present, else the text."""
    a, b = operands(i)
    expected = a + b
    if is_error:
        fail(f"add({a}, {b}) returned an error result: {text!r}")
    if structured is not None:
        if structured != {"result": expected}:
            fail(f"add({a}, {b}) returned structuredContent {structured!r}, expected {{'result': {expected}}}")
    elif text != str(expected):
        fail(f"add({a}, {b}) returned text {text!r}, expected {expected!r}")


def check_wire(i: int, result: Dict[str, Any]) -> None:
    """`check` a ``CallToolResult`` as a JSON object."""
    content = result.get("content") or [{}]
    check(i, result.get("structuredContent"), content[0].get("text"), bool(result.get("isError")))


def figures(latencies: Sequence[float], elapsed: float) -> Dict[str, Any]:
    """Calls per second over ``elapsed`` seconds, and the median and 99th percentile latency in ms."""
    ordered = sorted(latencies)
    count = len(ordered)

    def percentile(q: float) -> float:
        return ordered[min(count - 1, int(q * count))] * 1000.0

    return {"calls": count, "calls_per_s": count / elapsed, "p50_ms": percentile(0.5), "p99_ms": percentile(0.99)}


def sequential(call: Callable[[int], None], count: int) -> Dict[str, Any]:
    """Warm up, then make ``count`` calls one after the other (``call(i)`` calls and checks); their figures."""
    for i in range(min(WARMUP, count)):
        call(WARMUP_BASE + i)
    latencies: List[float] = []
    clock = time.perf_counter
    started = clock()
    for i in range(count):
        before = clock()
        call(i)
        latencies.append(clock() - before)
    return figures(latencies, clock() - started)


def threaded(calls: Sequence[Callable[[int], None]], per_caller: int) -> Dict[str, Any]:
    """Make ``per_caller`` calls from each of ``calls`` at once, one thread each; the figures of them all.

    Caller ``k`` numbers its calls from ``k * per_caller``. Threads start together (a barrier) and the clock
    runs from the barrier to the last thread's end.
    """
    return figures(*threaded_raw(calls, per_caller))


def threaded_raw(calls: Sequence[Callable[[int], None]], per_caller: int) -> Tuple[List[float], float]:
    """`threaded`'s calls; their latencies and the seconds they took."""
    latencies: List[List[float]] = [[] for _ in calls]
    errors: List[BaseException] = []
    barrier = threading.Barrier(len(calls) + 1)
    clock = time.perf_counter

    def run(k: int) -> None:
        mine = latencies[k]
        try:
            barrier.wait()
            for i in range(k * per_caller, (k + 1) * per_caller):
                before = clock()
                calls[k](i)
                mine.append(clock() - before)
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(k,), daemon=True) for k in range(len(calls))]
    for thread in threads:
        thread.start()
    barrier.wait()
    started = clock()
    for thread in threads:
        thread.join()
    elapsed = clock() - started
    if errors:
        fail(f"a concurrent call failed: {errors[0]!r}")
    return [latency for mine in latencies for latency in mine], elapsed


def emit(**fields: Any) -> None:
    """Print the program's one JSON line."""
    print(json.dumps(fields), flush=True)


def hold(version: Optional[str]) -> None:
    """Say the connection is ready and idle (for the peak-RSS reading), then wait until stdin ends."""
    emit(version=version)
    sys.stdin.read()


def fail(message: str) -> NoReturn:
    print(f"bench client: {message}", file=sys.stderr, flush=True)
    sys.exit(1)
