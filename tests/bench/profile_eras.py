"""The CPU cost of one ``tools/call`` in mcplite's server, per protocol era, without threads, pipes or noise.

    python3 tests/bench/profile_eras.py [--calls N] [--repeats R] [--profile [TOP]]
    python3 tests/bench/profile_eras.py --instructions [--calls N]

Where run.py's revision table says how much slower 2026-07-28 is end to end, this says why: it feeds
mc_server.py's server, in this process, the same requests era_client.py sends (each era on a session of its
own, connected as that era's client connects), as compact JSON lines decoded the way the stdio transport
decodes them (`jsonrpc.decode`), and has every
handler run inline (``receive(..., inline=True)``) into a transport that encodes each answer as stdio does
and keeps it. So the figure is the server's own Python path per request: decoding, the lifecycle or the
``_meta`` ladder, the handler, result shaping, encoding; not the pool, the pipes or the scheduler, which cost
the same in both eras and make up most of a real round trip (see the CPU rows of run.py's revision table).

It prints the median microseconds per request of each era over R alternating repeats and their ratio; with
``--profile``, a cProfile of each era and the TOP functions whose own time grew most from one to the other.
Every answer is checked (the sum, and ``resultType`` on 2026-07-28).

With ``--instructions`` it counts instead of timing: valgrind's callgrind counts the instructions of one era's
requests in a fresh process, each request served inside a C function that callgrind counts in alone, so
that only the server's path is counted; a figure that does not move with the load of the machine, so that a
change of a few percent can be seen on a busy one.
"""

import argparse
import cProfile
import json
import os
import pstats
import statistics
import sys
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(os.path.dirname(HERE)), HERE]  # mcplite from this tree; mc_server, era_client

import era_client  # noqa: E402
from floor_client import INITIALIZE, INITIALIZED, call_message, check_response  # noqa: E402
from mc_server import server  # noqa: E402

from mcplite.protocol import jsonrpc  # noqa: E402
from mcplite.transports import Transport  # noqa: E402

ERAS = era_client.ERAS


class Capture(Transport):
    """A stream transport that encodes every message as stdio does and keeps the bytes."""

    def __init__(self) -> None:
        self.sent: List[bytes] = []

    def start(self, sink: Any) -> None:
        pass

    def send(self, message: Any, route: Any = None) -> None:
        self.sent.append(jsonrpc.encode(message).encode("utf-8") + b"\n")

    def close(self) -> None:
        pass


def line(message: Dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"  # compact, as clients write it


def connected(era: str) -> Tuple[Capture, Any, Callable[[bytes], Any]]:
    """A started session of ``server`` whose client has connected as ``era``'s client does, and the decoder of
    its lines."""
    transport = Capture()
    session = server.create_session(transport)
    session.start()
    decode = jsonrpc.decode  # (as a stdio server's reader decodes each line)
    opening: List[Dict[str, Any]] = [era_client.DISCOVER] if era == "modern" else [INITIALIZE, INITIALIZED]
    for message in opening:
        session.receive(decode(line(message)), inline=True)
    return transport, session, decode


def requests(era: str, count: int) -> List[bytes]:
    build = era_client.modern_message if era == "modern" else call_message
    return [line(build(i)) for i in range(count)]


def run(era: str, count: int, profiler: Optional[cProfile.Profile] = None) -> float:
    """Microseconds per request over ``count`` requests of ``era`` on a fresh session; every answer checked."""
    transport, session, decode = connected(era)
    lines = requests(era, count)
    first = len(transport.sent)
    clock = time.thread_time  # CPU time of this thread: preemption by other processes does not count
    if profiler is not None:
        profiler.enable()
    started = clock()
    for data in lines:
        session.receive(decode(data), inline=True)
    elapsed = clock() - started
    if profiler is not None:
        profiler.disable()
    check_answers(era, transport.sent[first:], count)
    session.close()
    return elapsed / count * 1e6


def check_answers(era: str, answers: List[bytes], count: int) -> None:
    """Exits unless ``answers`` are the ``count`` right answers of ``era``, in order."""
    if len(answers) != count:
        raise SystemExit(f"profile_eras: {era}: {len(answers)} answers to {count} requests")
    check = era_client.check_modern if era == "modern" else check_response
    for i, answer in enumerate(answers):
        check(i, json.loads(answer))


def growth(profiles: Dict[str, cProfile.Profile], top: int, count: int) -> List[str]:
    """The ``top`` functions whose own time per request grew most from handshake to modern, then the few that
    shrank most (the handshake path's own steps that the modern path replaces). Profiled times: each call
    costs more than unprofiled, so compare them with each other, not with the medians above."""
    stats = {era: pstats.Stats(profile).stats for era, profile in profiles.items()}  # type: ignore[attr-defined]
    base, measured = stats["handshake"], stats["modern"]
    rows = []
    for key in set(base) | set(measured):
        before, after = base.get(key, (0, 0, 0.0, 0.0)), measured.get(key, (0, 0, 0.0, 0.0))
        name = f"{key[0].split(os.sep + 'mcplite' + os.sep)[-1]}:{key[1]}({key[2]})"
        rows.append(((after[2] - before[2]) / count * 1e6, before[1] / count, after[1] / count, name))
    rows.sort(key=lambda row: -row[0])
    shrank = [row for row in rows[::-1][:5] if row[0] < 0]
    lines = [f"{'+us/req':>8} {'calls/req hs':>12} {'modern':>6}  function (own time, profiled)"]
    lines += [f"{delta:+8.2f} {calls_before:12.1f} {calls_after:6.1f}  {name}"
              for delta, calls_before, calls_after, name in [*rows[:top], *shrank]]
    total = sum(row[0] for row in rows)
    lines.append(f"{total:+8.2f} {'':12} {'':6}  in all (profiled)")
    return lines


def served_in_starmap(era: str, count: int) -> None:
    """`run`'s requests, each served inside ``itertools.starmap``'s C step, which callgrind counts in alone
    (``--toggle-collect=starmap_next``): the server's own path, without building the requests or checking
    the answers (which cost more in 2026-07-28 too, but are the client's)."""
    import collections
    import itertools

    transport, session, decode = connected(era)
    lines = requests(era, count)
    first = len(transport.sent)

    def serve(data: bytes) -> None:
        session.receive(decode(data), inline=True)

    collections.deque(itertools.starmap(serve, ((data,) for data in lines)), maxlen=0)
    check_answers(era, transport.sent[first:], count)
    session.close()


def instructions(era: str, count: int) -> int:
    """The instructions the server executes for ``count`` requests of ``era`` (after a warm-up), counted by
    valgrind's callgrind: the same count whatever else the machine is doing."""
    import re
    import subprocess

    command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", "--collect-atstart=no",
               "--toggle-collect=starmap_next", sys.executable, os.path.abspath(__file__), "--one", era, str(count)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=900,
                          env={**os.environ, "PYTHONHASHSEED": "0"})
    found = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"profile_eras: callgrind failed ({done.returncode}): {done.stderr[-2000:]}")
    return int(found.group(1))


def count_instructions(calls: int) -> None:
    """Instructions per request of each era, and their ratio."""
    per_request = {}
    for era in ERAS:
        per_request[era] = instructions(era, calls) / calls
        print(f"{era:>9}: {per_request[era]:,.0f} instructions/request (callgrind, {calls} requests)", flush=True)
    print(f"   modern: {per_request['modern'] - per_request['handshake']:+,.0f} instructions/request, "
          f"{per_request['modern'] / per_request['handshake']:.3f}x handshake")


def main(argv: List[str]) -> int:
    if argv[:1] == ["--one"]:  # one era's run, under callgrind (see `instructions`)
        run(argv[1], 200)
        served_in_starmap(argv[1], int(argv[2]))
        return 0
    parser = argparse.ArgumentParser(description="The server's CPU per tools/call in each protocol era.")
    parser.add_argument("--calls", type=int, default=20000, help="requests per era and repeat (default 20000)")
    parser.add_argument("--repeats", type=int, default=7, help="alternating repeats (default 7)")
    parser.add_argument("--profile", type=int, nargs="?", const=25, metavar="TOP",
                        help="also profile each era and list the TOP functions that grew most (default 25)")
    parser.add_argument("--instructions", action="store_true",
                        help="count instructions per request with valgrind's callgrind instead of timing "
                             "(deterministic on a busy machine; --calls 2000 is plenty)")
    args = parser.parse_args(argv)
    if args.instructions:
        count_instructions(args.calls)
        return 0
    for era in ERAS:  # warm: the method table, the tool's schema, the caches
        run(era, 1000)
    samples: Dict[str, List[float]] = {era: [] for era in ERAS}
    for repeat in range(args.repeats):
        for era in (ERAS if repeat % 2 == 0 else ERAS[::-1]):
            samples[era].append(run(era, args.calls))
    medians = {era: statistics.median(values) for era, values in samples.items()}
    for era in ERAS:
        print(f"{era:>9}: {medians[era]:6.2f} us/request (median of {args.repeats}; min {min(samples[era]):.2f})")
    print(f"   modern: {medians['modern'] - medians['handshake']:+6.2f} us/request, "
          f"{medians['modern'] / medians['handshake']:.3f}x handshake")
    if args.profile:
        profiles = {era: cProfile.Profile() for era in ERAS}
        for era in ERAS:
            run(era, args.calls, profiles[era])
        print("", *growth(profiles, args.profile, args.calls), sep="\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
