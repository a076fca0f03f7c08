"""Scenario spawn-close: stdio servers spawned and closed over and over, half of them behind ``sh -c``.

Each cycle spawns the fixture server with `Client.stdio`, calls a tool, and closes the client, timing the
close. Half the servers are started through a shell that stays their parent (``sh -c '...; exit $?'``, the
way ``npx`` or a wrapper script starts a server). Every server gets a marker in its environment; after the
cycles, no process with the marker may be left (the shells' children included), and no zombie child of
this process. Leftovers are killed so a failed run cleans up after itself.
"""

import os
import shlex
import signal
import sys
import time
from typing import List

from mcplite import Client

from .harness import ROOT, SERVER_FILE, Result, Run, ms, scenario

MARKER_NAME = "MCPLITE_RELIABILITY_MARKER"
#: A close should take no grace period in the common case; this much is a failure.
SLOW_CLOSE = 2.0


def processes_with(marker: str) -> List[int]:
    """The pids of the processes whose environment holds ``MARKER_NAME=marker`` (ours only are readable)."""
    needle = f"{MARKER_NAME}={marker}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as environ:
                if needle in environ.read().split(b"\0"):
                    found.append(int(entry))
        except OSError:
            continue
    return found


def zombie_children() -> List[int]:
    """Children of this process that exited and were never waited for."""
    zombies = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] == "Z" and int(fields[1]) == os.getpid():
            zombies.append(int(entry))
    return zombies


@scenario("spawn-close", quick_timeout=150, long_timeout=1800)
def spawn_close(run: Run) -> Result:
    cycles = run.size(50, 1_000)
    marker = f"{os.getpid()}-{run.seed}-{time.monotonic_ns()}"
    env = {"PYTHONPATH": str(ROOT), MARKER_NAME: marker}
    direct = [sys.executable, "-m", "mcplite", "serve", SERVER_FILE]
    wrapped = ["sh", "-c", " ".join(shlex.quote(part) for part in direct) + "; exit $?"]
    result = Result()
    close_times: List[float] = []
    failures: List[str] = []
    slow: List[str] = []
    for cycle in range(cycles):
        argv = wrapped if cycle % 2 else direct
        try:
            with Client.stdio(argv, env=env, timeout=30) as client:
                answer = client.call_tool("echo", {"n": cycle})
                if (answer.get("structuredContent") or {}).get("result") != cycle:
                    failures.append(f"cycle {cycle}: wrong answer {answer}")
                started = time.monotonic()
            close_times.append(time.monotonic() - started)
        except Exception as exc:  # noqa: BLE001
            failures.append(f"cycle {cycle} ({'sh -c' if cycle % 2 else 'direct'}): {type(exc).__name__}: {exc}")
            continue
        if close_times[-1] > SLOW_CLOSE:
            slow.append(f"cycle {cycle} ({'sh -c' if cycle % 2 else 'direct'}): {close_times[-1]:.2f}s")
    left = processes_with(marker)
    zombies = zombie_children()
    for pid in left:  # clean up after a failure
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    wrapped_times = close_times[1::2]
    result.figures.update(cycles=cycles, failed=len(failures), left=len(left), zombies=len(zombies),
                          close_mean=ms(sum(close_times) / len(close_times)) if close_times else "-",
                          close_max=ms(max(close_times, default=0)),
                          close_max_sh=ms(max(wrapped_times, default=0)))
    result.check(not failures, f"{len(failures)} cycles failed: {failures[:3]}")
    result.check(not left, f"processes left running: {left}")
    result.check(not zombies, f"zombie children: {zombies}")
    result.check(not slow, f"{len(slow)} closes took over {SLOW_CLOSE:g} s: {slow[:3]}")
    return result
