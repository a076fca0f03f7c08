"""Where the gateway's time goes: every thread of ``python3 -m mcplite gateway`` under cProfile, its CPU too.

    python3 tests/bench/profile_gateway.py [CALLS] [--in-flight] [--sort tottime|cumtime] [--top N]

mcplite's `Client` (this process) calls ``add`` through the gateway of tests/bench/gateway.json, whose upstream
is mc_server.py: CALLS sequential calls after 200 to warm up (``--in-flight``: the same spread over
run.py's WINDOW threads). The gateway runs in a child process where each thread runs under a `cProfile.Profile`
of its own (cProfile profiles only the thread that enabled it; the gateway's work is on its session's and its
calls' threads), merged when it exits; the CPU time the gateway process spent per call is printed before the
profile (the bench's figures are of the client's clock: this says how much of them is the gateway's work).
"""

import argparse
import os
import pstats
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [ROOT, HERE]

#: Run in the gateway's process: profile each thread it starts, and the main thread; dump them all at exit.
CHILD = r"""
import atexit, cProfile, pstats, sys, threading
out = sys.argv[1]
profiles = []
lock = threading.Lock()
original_run = threading.Thread.run

def profiled_run(self):
    profile = cProfile.Profile()
    with lock:
        profiles.append(profile)
    profile.enable()
    try:
        original_run(self)
    finally:
        profile.disable()

threading.Thread.run = profiled_run
main = cProfile.Profile()
profiles.append(main)

def dump():
    main.disable()
    with lock:
        stats = pstats.Stats(*profiles)
    stats.dump_stats(out)

atexit.register(dump)
sys.argv = ["mcplite", "gateway", sys.argv[2]]
main.enable()
import runpy
runpy.run_module("mcplite", run_name="__main__", alter_sys=True)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("calls", nargs="?", type=int, default=2000)
    parser.add_argument("--in-flight", action="store_true", help="spread the calls over WINDOW threads")
    parser.add_argument("--sort", default="tottime")
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--callers", help="also print the callers of the functions matching this pattern")
    args = parser.parse_args()

    import workload
    from mcplite import Client

    os.environ.update(MCPLITE_BENCH_PYTHON=sys.executable, MCPLITE_BENCH_DIR=HERE, MCPLITE_BENCH_ROOT=ROOT)
    with tempfile.TemporaryDirectory() as scratch:
        out = os.path.join(scratch, "gateway.prof")
        argv = [sys.executable, "-c", CHILD, out, os.path.join(HERE, "gateway.json")]
        with Client.stdio(argv, inherit_env=True, cwd=ROOT, shutdown_timeout=60) as client:
            pid = client.transport.process.pid  # type: ignore[attr-defined]

            def call(i: int) -> None:
                a, b = workload.operands(i)
                workload.check_wire(i, client.call_tool("add", {"a": a, "b": b}))  # type: ignore[arg-type]

            for i in range(200):
                call(workload.WARMUP_BASE + i)
            before = cpu_seconds(pid)
            started = time.perf_counter()
            if args.in_flight:
                figures = workload.threaded([call] * workload.WINDOW, args.calls // workload.WINDOW)
            else:
                figures = workload.sequential(call, args.calls)
            elapsed = time.perf_counter() - started
            spent = cpu_seconds(pid) - before
        deadline = time.monotonic() + 120
        while not os.path.exists(out) and time.monotonic() < deadline:
            time.sleep(0.05)  # the child writes its profile at exit, after the pipe closed
        calls = figures["calls"]
        print(f"{calls} calls in {elapsed:.2f} s: {figures['calls_per_s']:.0f} calls/s, p50 {figures['p50_ms']:.3f} ms "
              f"(under the profiler); gateway CPU {spent * 1e6 / calls:.0f} us a call")
        stats = pstats.Stats(out)
        stats.sort_stats(args.sort).print_stats(args.top)
        if args.callers:
            stats.print_callers(args.callers)


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of process ``pid`` and its finished children, in seconds (/proc/PID/stat)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


if __name__ == "__main__":
    main()
