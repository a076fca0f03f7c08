"""What every scenario shares: the run's settings, the result record, servers in subprocesses, /proc readings.

A scenario is a function ``run(run: Run) -> Result`` registered with `scenario`. It starts its servers with
`Run.spawn` (so the runner can kill them if the scenario hangs), checks what it measured, and returns the
figures it measured and the problems it found; any problem fails the run.
"""

import math
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Callable, Dict, List, Optional, Sequence, Union

ROOT = Path(__file__).resolve().parents[2]
SERVER_FILE = str(Path(__file__).resolve().parent / "server.py")

Figure = Union[int, float, str]


@dataclass
class Result:
    """What a scenario measured (in the order it should be printed) and what went wrong."""

    figures: Dict[str, Figure] = field(default_factory=dict)
    problems: List[str] = field(default_factory=list)

    def check(self, condition: bool, problem: str) -> None:
        """Record ``problem`` unless ``condition`` holds."""
        if not condition:
            self.problems.append(problem)


@dataclass
class Scenario:
    name: str
    run: Callable[["Run"], Result]
    #: Hard limits in seconds for the quick and the long mode; a scenario past its limit is a hang.
    quick_timeout: float
    long_timeout: float


#: The scenarios in the order they run (`scenario` appends).
SCENARIOS: List[Scenario] = []


def scenario(name: str, *, quick_timeout: float, long_timeout: float) -> Callable[[Callable[["Run"], Result]],
                                                                                 Callable[["Run"], Result]]:
    """Register a scenario function under ``name``."""
    def register(function: Callable[["Run"], Result]) -> Callable[["Run"], Result]:
        SCENARIOS.append(Scenario(name, function, quick_timeout, long_timeout))
        return function
    return register


class Run:
    """One scenario's settings (mode, seed) and the processes it started.

    Attributes:
        long: the long mode (the issue's figures) rather than the quick one (CI's).
        seed: this scenario's seed; the same seed makes the same input.
        rng: a random generator seeded with it.
    """

    def __init__(self, long: bool, seed: int) -> None:
        self.long = long
        self.seed = seed
        self.rng = random.Random(seed)
        # Guards _processes: the scenario's thread adds, the runner's kills after a hang.
        self._lock = threading.Lock()
        self._processes: List["subprocess.Popen[bytes]"] = []

    def size(self, quick: int, long: int) -> int:
        """The figure for this mode."""
        return long if self.long else quick

    def spawn(self, argv: Sequence[str], *, stdin: Optional[int] = subprocess.PIPE,
              stdout: Optional[int] = subprocess.PIPE,
              stderr: Optional[int] = subprocess.PIPE) -> "subprocess.Popen[bytes]":
        """Start a process of this checkout (PYTHONPATH set) in a process group of its own; `kill_all` ends it."""
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        process = subprocess.Popen(list(argv), stdin=stdin, stdout=stdout, stderr=stderr, env=env, cwd=str(ROOT),
                                   start_new_session=True)
        with self._lock:
            self._processes.append(process)
        return process

    def kill_all(self) -> List[int]:
        """SIGKILL every process group this scenario started that is still running; returns their pids."""
        with self._lock:
            processes = list(self._processes)
        killed = []
        for process in processes:
            if process.poll() is None:
                killed.append(process.pid)
                try:
                    os.killpg(process.pid, signal.SIGKILL)
                except OSError:
                    pass
                process.wait(5)
        return killed


def stdio_server_argv() -> List[str]:
    """The fixture server over stdio, as a user starts one."""
    return [sys.executable, "-m", "mcplite", "serve", SERVER_FILE]


class HTTPServerProcess:
    """The fixture server over HTTP in a subprocess: `url`, `pid`, and `stop` (SIGTERM, then SIGKILL)."""

    def __init__(self, run: Run, *, direct_options: Sequence[str] = (), address: str = "127.0.0.1:0",
                 timeout: float = 30.0) -> None:
        if direct_options:  # options the command line does not offer: run the fixture's own main
            argv = [sys.executable, SERVER_FILE, "--http", address, *direct_options]
        else:
            argv = [sys.executable, "-m", "mcplite", "serve", SERVER_FILE, "--http", address]
        self.process = run.spawn(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        self.pid = self.process.pid
        self.url = _read_url(self.process, timeout)
        self.port = int(self.url.rsplit(":", 1)[1].split("/", 1)[0])
        self.stderr_lines: List[str] = []
        # Keep reading stderr, or a chatty server would block on a full pipe.
        self._drain = threading.Thread(target=self._read_stderr, name="server-stderr", daemon=True)
        self._drain.start()

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        for raw in self.process.stderr:
            self.stderr_lines.append(raw.decode("utf-8", "replace").rstrip("\n"))

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self, timeout: float = 10.0) -> float:
        """SIGTERM, wait up to ``timeout`` s, then SIGKILL; returns the seconds the server took to exit."""
        started = time.monotonic()
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.pid, signal.SIGKILL)
                self.process.wait(5)
        self._drain.join(5)
        return time.monotonic() - started

    def tracebacks(self) -> int:
        return sum(1 for line in self.stderr_lines if line.startswith("Traceback"))


def _read_url(process: "subprocess.Popen[bytes]", timeout: float) -> str:
    """The URL the server prints on stderr once it listens ("mcplite: serving 'name' at URL")."""
    assert process.stderr is not None
    found: List[str] = []
    reader = threading.Thread(target=lambda: found.append(_url_line(process.stderr)), daemon=True)  # type: ignore[arg-type]
    reader.start()
    reader.join(timeout)
    if not found or not found[0]:
        process.kill()
        raise RuntimeError(f"the HTTP server did not say where it listens within {timeout} s")
    return found[0]


def _url_line(stream: IO[bytes]) -> str:
    for raw in stream:
        match = re.search(r" at (http://\S+)", raw.decode("utf-8", "replace"))
        if match:
            return match.group(1)
    return ""


def fill_pools(client: Any, calls: int = 100, timeout: float = 120.0) -> None:
    """``calls`` calls of ``pause`` in flight at once, from threads, so the pools on both sides (the server's
    handler pool, the client's readers) grow to their size: the baseline a leak check compares with."""
    threads = [threading.Thread(target=client.call_tool, args=("pause", {"ms": 20}), daemon=True)
               for _ in range(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout)


# ---- /proc readings -------------------------------------------------------------------------------------
def proc_status(pid: int) -> Dict[str, str]:
    """The fields of /proc/PID/status ({} once the process is gone)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            return dict(line.rstrip("\n").split(":\t", 1) for line in status if ":\t" in line)
    except OSError:
        return {}


def rss_kib(pid: int) -> int:
    """Resident memory of ``pid`` in KiB (VmRSS)."""
    return int(proc_status(pid).get("VmRSS", "0 kB").split()[0])


def peak_rss_kib(pid: int) -> int:
    """The most resident memory ``pid`` has had, in KiB (VmHWM)."""
    return int(proc_status(pid).get("VmHWM", "0 kB").split()[0])


def thread_count(pid: int) -> int:
    return int(proc_status(pid).get("Threads", "0"))


def settle(read: Callable[[], int], target: int, timeout: float) -> int:
    """Read ``read()`` until it is at most ``target`` or ``timeout`` s pass; returns the last reading.

    For counts that fall back to a baseline once threads notice their peers left: a bounded wait, never a
    fixed sleep.
    """
    deadline = time.monotonic() + timeout
    value = read()
    while value > target and time.monotonic() < deadline:
        time.sleep(0.05)
        value = read()
    return value


def steady(read: Callable[[], int], quiet: float = 0.3, timeout: float = 5.0) -> int:
    """``read()`` once it has not changed for ``quiet`` s (or after ``timeout`` s): a baseline to compare with."""
    deadline = time.monotonic() + timeout
    value = read()
    since = time.monotonic()
    while time.monotonic() - since < quiet and time.monotonic() < deadline:
        time.sleep(0.05)
        now = read()
        if now != value:
            value, since = now, time.monotonic()
    return value


def percentile(values: Sequence[float], fraction: float) -> float:
    """The ``fraction`` (0..1) percentile of ``values`` (nearest rank); 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(fraction * len(ordered)) - 1))]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}ms"
