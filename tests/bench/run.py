"""Speed and weight of mcplite beside the official SDKs and a standard-library floor, in one interleaved run.

    python3 tests/bench/run.py [--quick] [--rounds N] [--strict] [--only NAME,...]

Installs the official Python SDK (PyPI ``mcp``) and TypeScript SDK (npm ``@modelcontextprotocol/sdk``)
under ``.peers/`` exactly as tests/interop/run.py does (its install functions, pins and folders: a peer
already installed there is not installed again), then runs the same workloads against four
implementations, each client against its own server, all with one tool ``add(a: int, b: int) -> int``:

    floor           plain Python: JSON lines over pipes; http.client keep-alive against ThreadingHTTPServer
                    with TCP_NODELAY (floor_client.py, floor_server.py and their floor_http_* halves)
    mcplite         mc_client.py, mc_server.py
    python-sdk      py_client.py, py_server.py, in the .peers/py venv
    typescript-sdk  ts_client.mjs, ts_server.mjs (and ts_import.mjs), on node

and, for the revision table (issue 12: mcplite's server on 2026-07-28 against itself on 2025-11-25), on the
stdio and HTTP workloads only:

    mcplite-eras    mc_server.py driven by era_client.py, the floor's raw client, connected in both eras at
                    once (2025-11-25: initialize, then plain requests; 2026-07-28: every request enveloped),
                    their calls alternating in short blocks: the same server program, the same client and
                    the same moments of the machine for both, so that their ratio is the cost of the server's
                    2026-07-28 path; on stdio also the CPU time each server process spent per call
    mcplite-eras-session
                    the same on stdio, with a bare mcplite Session (JSON-RPC, no lifecycle) as the client
                    (era_client.py --client session): the difference behind a client as costly as mcplite's
    mcplite-eras-equalized
                    the same on stdio, with the raw client reading as much in both eras (era_client.py
                    --client equalized: the 2025-11-25 answers parsed with a 2026-07-28 result's members
                    spliced in): what is left of the difference when the client's parsing of the longer
                    2026-07-28 answers is taken out, the server's own; unscored, beside the scored pair
    python-sdk-handshake, python-sdk-modern
                    mc_server.py driven by the official Python SDK's client pinned to each era (py_client.py
                    --mode legacy | 2026-07-28), one after the other: a real peer, on stdio; its own cost per
                    call is so much larger than the server's that its ratio says little about the server

and, for the scale-out table (issue 16: several processes behind one port, stateless, on the HTTP stateless
workload only; its row of interest is the 8 concurrent clients'):

    mcplite-gunicorn    mc_client.py against mc_server.py as a WSGI app (mc_wsgi.py) on gunicorn with
                        `SCALE_WORKERS` sync workers (``--preload``), beside one mcplite process (the
                        mcplite column: its built-in threaded server); gunicorn runs on this Python (the
                        clean venv has no gunicorn; left out with a note where gunicorn is not installed)
    python-sdk-uvicorn  py_client.py against py_server.py's app (py_asgi.py) on uvicorn with
                        `SCALE_WORKERS` worker processes, beside the SDK in one process when it ran;
                        uvicorn as deployed, whose --workers leaves Nagle's algorithm on (`SCALE_NOTE`)
    mcplite-hosts-2, mcplite-hosts-4
                        2 and 4 gunicorn masters standing for as many hosts (mc_hosts.py: each one gthread
                        worker, no --preload), nginx round-robin in front without affinity, the Redis task
                        store, event store and bus (MCPLITE_REDIS_URL, one MCPLITE_STATE_KEYS): mc_client.py's
                        HTTP stateless workload through nginx, and handoff_client.py on the same hosts, the time
                        from a task's completion on one host to its result on another (`HANDOFF_RUNS` runs,
                        p50 and max); left out with a note without gunicorn, redis-py, redis-server or nginx

and, for one line after it (issue 32: what an ``async def`` tool costs against a plain one):

    mcplite-async   mc_client.py against mc_server.py with its tool written ``async def``
                    (MCPLITE_BENCH_ASYNC=1), on stdio only, beside mcplite's own stdio figures: the ratio of
                    their calls/s must reach `ASYNC_TARGET` (an async tool costs within 25% of a plain one)

and, for the gateway table (issue 33: what ``python3 -m mcplite gateway`` adds to a call, beside FastMCP's proxy),
on stdio only, with mcplite's stdio figures (mc_client.py straight to mc_server.py) as the direct calls:

    mcplite-gateway mc_client.py against ``python3 -m mcplite gateway gateway.json``, whose one upstream is
                    mc_server.py (``"prefix": ""``: the tool keeps its name), run by the same Python
    fastmcp-proxy   mc_client.py against FastMCP's proxy of the same upstream (fm_proxy.py: ``create_proxy`` of
                    a stdio transport), FastMCP `FASTMCP_VERSION` in a venv of its own, ``.peers/fastmcp``
    floor-proxy     mc_client.py against floor_proxy.py, which copies bytes both ways between its stdio and the
                    same upstream without reading them: what any process in the middle costs on the machine (a
                    third process on the same cores, two more pipe hops a message), the floor under the gateway

its targets (`GATEWAY_TARGETS`): through the gateway at least half the direct calls/s, at most 0.3 ms added to
the p50, and at least 5x FastMCP's proxy's calls/s (tests/bench/profile_gateway.py profiles the gateway's
process, every thread of it)

and, for one line after it (issue 13: what protocol_version="auto" costs against a server without 2026-07-28):

    mcplite-probe-pinned, mcplite-probe-auto
                    mc_client.py pinned to 2025-11-25, and with "auto", against mc_server.py serving the
                    handshake revisions only (MCPLITE_BENCH_LEGACY_ONLY=1): cold starts only

and, for the streams table (issue 34: thousands of open streams on one process; ``--only streams`` runs it alone
and then replaces only its section of RESULTS.md), once after the rounds, `STREAM_COUNTS` (``--quick``:
`STREAM_COUNTS_QUICK`) streams, half ``subscriptions/listen``, half session GET streams, held by streams_client.py
(one selectors loop, no thread per stream) against streams_mc_server.py on mcplite's built-in server and
streams_py_server.py on the Python SDK with uvicorn, the counts' server order alternating; `streams_table` says
what it reports and checks mcplite's `STREAM_TARGETS` at the largest count

mcplite and the floor run in ``.peers/bench-py``, an empty venv of the Python the SDK's venv is made
from, so that all three Python sides start alike, with nothing but their own code on the path.

Workloads, run once per implementation in each round:

    import       ``from mcplite import Client`` / ``Server`` and the peers' equivalents, a fresh process each
    cold start   a client process that spawns the stdio server, initializes, calls once and exits
    stdio        sequential calls (calls/s, p50, p99), then calls with WINDOW in flight on one connection
    HTTP         Streamable HTTP: sequential calls from one client, then HTTP_CLIENTS concurrent clients,
                 against the server in stateless JSON-response mode and in its default mode (sessions, SSE)
    peak RSS     VmHWM of the idle stdio server after initialize and one call, and of its client

Import time and cold start are timed from here around a fresh process; every other figure is timed by the
client program itself around its calls (workload.py), so process start-up does not pollute it, and every
call's result is checked there. Each peer speaks its own default protocol revision, recorded in the table
(mcp 2.x negotiates 2026-07-28, which has no sessions: its "default mode" rows are that revision's).

Rounds interleave the implementations (A B C D for each workload) in an order rotated each round, so that
the drift of a shared, noisy machine falls on all of them alike; the table gives the median over rounds
and the mcplite/peer ratios, which hold where absolute figures do not. It is printed and, unless
``--quick``, written to tests/bench/RESULTS.md with the date and machine.

The revision table gives, for each pair of `ERA_PAIRS`, each metric on 2026-07-28 over the same on 2025-11-25
as the median of the rounds' ratios (mcplite-eras runs `ERA_PASSES` times a round, each run a ratio of its
own); with era_client, on stdio, 2026-07-28 must stay within 10% of 2025-11-25 (0.90x, `ERA_TARGETS`): a guard
against regressions, not a goal worth complexity (tests/bench/README.md has the instruction counts). It follows the main table, on screen and in RESULTS.md.

Exit status: 1 when a workload of mcplite, mcplite-eras or the floor failed (a wrong result, a crash, a
timeout), or with ``--strict`` when mcplite misses a target of `TARGETS` or `ERA_TARGETS`; a peer that
cannot be installed or run is reported and left out. A full run takes about 6 minutes on 2 busy cores;
``--quick`` (CI) about 90 s, and about 35 s more for the scale-out table (measured: mcplite-gunicorn 3 s,
python-sdk-uvicorn 31 s, most of it the SDK's client and its 4 workers' start on a loaded machine), and about
8 s for the hosts' rows (measured: mcplite-hosts-2 3 s, mcplite-hosts-4 4 s).

Environment: FASTMCP_VERSION (the fastmcp to install, default `FASTMCP_VERSION`); as tests/interop/run.py (INTEROP_PY_SDK_VERSION, INTEROP_TS_SDK_VERSION, INTEROP_PYTHON,
INTEROP_PEERS_DIR, INTEROP_TIMEOUT: the seconds one program may run).
"""

import argparse
import datetime
import glob
import importlib.util
import json
import os
import platform
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from typing import Any, Callable, Dict, Iterator, List, NamedTuple, Optional, Sequence, Set, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
RESULTS = os.path.join(HERE, "RESULTS.md")


def _load_interop() -> Any:
    """tests/interop/run.py as a module (it is not in a package, and its name is this file's)."""
    spec = importlib.util.spec_from_file_location("interop_run", os.path.join(ROOT, "tests", "interop", "run.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


interop = _load_interop()
BENCH_VENV = os.path.join(interop.PEERS, "bench-py")
#: FastMCP, whose proxy the gateway table measures, in a venv of its own (it pins its own ``mcp``).
FASTMCP_VERSION = "4.2.3"
FASTMCP_VENV = os.path.join(interop.PEERS, "fastmcp")
FASTMCP_PYTHON = os.path.join(FASTMCP_VENV, "bin", "python")
TIMEOUT: float = interop.CLIENT_TIMEOUT

#: Calls in flight on one stdio connection (workload.WINDOW) and concurrent HTTP clients.
WINDOW = 8
HTTP_CLIENTS = 8


class Sizes(NamedTuple):
    """How much each round does."""

    rounds: int
    stdio_sequential: int
    stdio_in_flight: int
    http_sequential: int
    http_per_client: int  # calls by each of the HTTP_CLIENTS concurrent clients
    repeats: int  # fresh processes per round for each import and cold-start figure
    handoff_runs: int  # tasks handed from one host to another (the scale-out table's hosts)


FULL = Sizes(rounds=3, stdio_sequential=2000, stdio_in_flight=1000, http_sequential=1000, http_per_client=100,
             repeats=3, handoff_runs=30)
QUICK = Sizes(rounds=1, stdio_sequential=500, stdio_in_flight=400, http_sequential=200, http_per_client=25,
              repeats=2, handoff_runs=10)


# ---- the implementations ----------------------------------------------------------------------------------
class Implementation(NamedTuple):
    """How to run one implementation's programs (their command lines are in workload.py).

    Every server program serves stdio with no arguments and HTTP with ``http PORT stateless|default``.
    """

    name: str
    client: List[str]
    server: List[str]
    import_client: List[str]
    import_server: List[str]
    workloads: Tuple[str, ...] = ()  # the names in WORKLOADS it runs; empty: all of them
    #: Times each of its workloads runs in a round, every run a sample of its own: the revision table's
    #: ratios are within a few percent of 1, where one run's noise on a shared machine is about 8%, and
    #: these runs are short, so they are taken more often than the peers' to have the same confidence.
    passes: int = 1


def implementations(python: str, peer_python: str, node: str) -> Dict[str, Implementation]:
    """Every implementation, by name, in table order: the floor, mcplite, then the peers."""

    def here(name: str) -> str:
        return os.path.join(HERE, name)

    def in_python(name: str, interpreter: str, client: str, server: str, imports: Tuple[str, str]) -> Implementation:
        return Implementation(name, [interpreter, here(client)], [interpreter, here(server)],
                              [interpreter, "-c", imports[0]], [interpreter, "-c", imports[1]])

    def against_legacy(name: str, version: str) -> Implementation:
        """mcplite's client asking for ``version`` of mcplite's server serving the handshake revisions only."""
        return Implementation(name, ["env", f"MCPLITE_BENCH_PROTOCOL={version}", python, here("mc_client.py")],
                              ["env", "MCPLITE_BENCH_LEGACY_ONLY=1", python, here("mc_server.py")], [], [],
                              PROBE_WORKLOADS)

    def scaled_out(name: str, client: List[str], server: List[str]) -> Implementation:
        """``server`` run with ``BENCH_WORKERS``: several processes behind one port (stateless only)."""
        return Implementation(name, client, ["env", f"BENCH_WORKERS={SCALE_WORKERS}", *server], [], [],
                              SCALE_WORKLOADS)

    def hosts(name: str, count: int) -> Implementation:
        """``count`` hosts behind nginx with Redis (mc_hosts.py, on this Python: it has gunicorn and redis-py)."""
        return Implementation(name, [python, here("mc_client.py")],
                              ["env", f"BENCH_HOSTS={count}", sys.executable, here("mc_hosts.py")], [], [],
                              HOSTS_WORKLOADS)

    def behind(name: str, front: List[str]) -> Implementation:
        """mcplite's client against ``front``, a program serving mc_server.py (run by ``python``) over stdio."""
        where = [f"MCPLITE_BENCH_PYTHON={python}", f"MCPLITE_BENCH_DIR={HERE}", f"MCPLITE_BENCH_ROOT={ROOT}"]
        return Implementation(name, [python, here("mc_client.py")], ["env", *where, *front], [], [],
                              GATEWAY_WORKLOADS)

    def sdk_by_era(era: str, mode: str) -> Implementation:
        return Implementation(f"python-sdk-{era}", [peer_python, here("py_client.py"), "--mode", mode],
                              [python, here("mc_server.py")], [], [], SDK_ERA_WORKLOADS)

    return {
        # The floor imports what its stdio client and server need from the standard library.
        "floor": in_python("floor", python, "floor_client.py", "floor_server.py",
                           ("import json, subprocess, threading", "import json, sys")),
        "mcplite": in_python("mcplite", python, "mc_client.py", "mc_server.py",
                             ("from mcplite import Client", "from mcplite import Server")),
        "mcplite-eras": Implementation("mcplite-eras", [python, here("era_client.py")], [python, here("mc_server.py")],
                                       [], [], ERA_WORKLOADS, passes=ERA_PASSES),
        "mcplite-eras-session": Implementation("mcplite-eras-session",
                                               [python, here("era_client.py"), "--client", "session"],
                                               [python, here("mc_server.py")], [], [], SESSION_ERA_WORKLOADS),
        "mcplite-eras-equalized": Implementation("mcplite-eras-equalized",
                                                 [python, here("era_client.py"), "--client", "equalized"],
                                                 [python, here("mc_server.py")], [], [], SESSION_ERA_WORKLOADS,
                                                 passes=ERA_PASSES),
        ASYNC: Implementation(ASYNC, [python, here("mc_client.py")],
                              ["env", "MCPLITE_BENCH_ASYNC=1", python, here("mc_server.py")], [], [],
                              ASYNC_WORKLOADS),
        GATEWAY: behind(GATEWAY, [python, "-m", "mcplite", "gateway", here("gateway.json")]),
        FASTMCP_PROXY: behind(FASTMCP_PROXY, [FASTMCP_PYTHON, here("fm_proxy.py")]),
        FLOOR_PROXY: behind(FLOOR_PROXY, [python, here("floor_proxy.py")]),
        "mcplite-probe-pinned": against_legacy("mcplite-probe-pinned", "2025-11-25"),
        "mcplite-probe-auto": against_legacy("mcplite-probe-auto", "auto"),
        "python-sdk": in_python("python-sdk", peer_python, "py_client.py", "py_server.py",
                                ("from mcp import Client, StdioServerParameters",
                                 "from mcp.server.mcpserver import MCPServer")),
        "mcplite-gunicorn": scaled_out("mcplite-gunicorn", [python, here("mc_client.py")],
                                       [sys.executable, here("mc_server.py")]),
        HOSTS_2: hosts(HOSTS_2, 2),
        HOSTS_4: hosts(HOSTS_4, 4),
        "python-sdk-uvicorn": scaled_out("python-sdk-uvicorn", [peer_python, here("py_client.py")],
                                         [peer_python, here("py_server.py")]),
        "python-sdk-handshake": sdk_by_era("handshake", "legacy"),
        "python-sdk-modern": sdk_by_era("modern", "2026-07-28"),
        "typescript-sdk": Implementation("typescript-sdk", [node, here("ts_client.mjs")], [node, here("ts_server.mjs")],
                                         [node, here("ts_import.mjs"), "client"],
                                         [node, here("ts_import.mjs"), "server"]),
    }


def clean_python() -> Tuple[Optional[str], str]:
    """The Python for mcplite and the floor, made on first use: a venv with nothing installed, of the Python
    the SDK's venv is made from. Returns (its path, or None and why not)."""
    python = os.path.join(BENCH_VENV, "bin", "python")
    if os.path.exists(python):
        return python, ""
    os.makedirs(interop.PEERS, exist_ok=True)  # for the log, on a machine where nothing was installed yet
    base = interop.peer_python() or sys.executable
    error = interop.run_logged([base, "-m", "venv", "--without-pip", BENCH_VENV],
                               os.path.join(interop.PEERS, "bench-py-install.log"), interop.INSTALL_TIMEOUT)
    return (None, error) if error else (python, "")


def installed_fastmcp() -> Optional[str]:
    """The version of ``fastmcp`` in .peers/fastmcp, read from its dist-info."""
    if not os.path.exists(FASTMCP_PYTHON):
        return None
    for dist_info in glob.glob(os.path.join(FASTMCP_VENV, "lib", "python3*", "site-packages", "fastmcp-*.dist-info")):
        return os.path.basename(dist_info)[len("fastmcp-"):-len(".dist-info")]
    return None


def install_fastmcp(version: str) -> Tuple[Optional[str], str]:
    """Make .peers/fastmcp hold ``fastmcp==version`` (as interop.install_py_sdk does the SDK's venv)."""
    if installed_fastmcp() == version:
        return None, "already installed"
    log_path = os.path.join(interop.PEERS, "fastmcp-install.log")
    if not os.path.exists(FASTMCP_PYTHON):
        python = interop.peer_python()
        if python is None:
            return "no Python >= 3.10 found for FastMCP (set INTEROP_PYTHON)", ""
        error = interop.run_logged([python, "-m", "venv", "--clear", FASTMCP_VENV], log_path, interop.INSTALL_TIMEOUT)
        if error:
            return error, ""
    error = interop.run_logged([FASTMCP_PYTHON, "-m", "pip", "install", "--disable-pip-version-check", "-q",
                                f"fastmcp=={version}"], log_path, interop.INSTALL_TIMEOUT)
    return error, "installed"


def install_peers(wanted: Sequence[str]) -> Tuple[List[str], List[str]]:
    """Install the peers among ``wanted`` as the interop suite does; returns (the names ready, a note on each peer)."""
    installs = {
        "fastmcp": ("fastmcp", install_fastmcp, os.environ.get("FASTMCP_VERSION") or FASTMCP_VERSION),
        "python-sdk": ("mcp", interop.install_py_sdk,
                       os.environ.get("INTEROP_PY_SDK_VERSION") or interop.PY_SDK_VERSION),
        "typescript-sdk": ("@modelcontextprotocol/sdk", interop.install_ts_sdk,
                           os.environ.get("INTEROP_TS_SDK_VERSION") or interop.TS_SDK_VERSION),
    }
    os.makedirs(interop.PEERS, exist_ok=True)
    ready, notes = [], []
    errors: Dict[str, Optional[str]] = {}  # peer -> why it cannot be installed (None: installed)
    for name in wanted:
        if name == SCALED_MCPLITE and importlib.util.find_spec("gunicorn") is None:
            print(f"bench: gunicorn is not installed for {sys.executable}: {name} left out", flush=True)
            notes.append(f"gunicorn (NOT AVAILABLE for {name}: pip install gunicorn)")
            continue
        if name in HOSTS_NAMES:
            missing = [module for module in ("gunicorn", "redis") if importlib.util.find_spec(module) is None]
            missing += [program for program in ("redis-server", "nginx")
                        if not (shutil.which(program) or shutil.which(program, path="/usr/sbin:/usr/local/sbin"))]
            if missing:
                print(f"bench: {', '.join(missing)} not installed: {name} left out", flush=True)
                notes.append(f"{', '.join(missing)} (NOT AVAILABLE for {name})")
                continue
        peer = PEER_OF.get(name, name)
        if peer not in installs:
            ready.append(name)
            continue
        if peer not in errors:
            package, install, version = installs[peer]
            error, done = install(version)
            print(f"bench: {package} {version}: {error or done}", flush=True)
            notes.append(f"{package} {version}" + (f" (NOT AVAILABLE: {error})" if error else ""))
            errors[peer] = error
        if errors[peer] is None:
            ready.append(name)
    return ready, notes


# ---- running programs -------------------------------------------------------------------------------------
#: The environment of every program: the interop suite's (mcplite importable, the TypeScript SDK's folder).
ENV: Dict[str, str] = {}


class WorkloadFailed(Exception):
    pass


def tail(text: str, lines: int = 12) -> str:
    """What a failed program said: the client programs' own complaints if any (an SDK may follow them with a
    long traceback), else its last lines."""
    said = text.strip().splitlines()
    return " | ".join([line for line in said if line.startswith("bench client:")] or said[-lines:])


def timed_run(argv: List[str]) -> float:
    """Run a program to its end; the ms from just before its launch to its exit."""
    with tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        process = subprocess.Popen(argv, cwd=ROOT, env=ENV, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                   stderr=err, start_new_session=True)
        # A plain blocking wait, with a timer for the time limit: Popen.wait(timeout=...) polls with sleeps
        # that double up to 50 ms, which rounded every figure here up to 64 ms, 114 ms, 164 ms...
        expired = threading.Event()
        watchdog = threading.Timer(TIMEOUT, lambda: (expired.set(), interop.stop(process)))
        watchdog.start()
        try:
            code = process.wait()
        finally:
            watchdog.cancel()
        elapsed = (time.perf_counter() - started) * 1000.0
        if expired.is_set():
            raise WorkloadFailed(f"{' '.join(argv[1:3])} took longer than {TIMEOUT:.0f} s")
        if code != 0:
            raise WorkloadFailed(f"{' '.join(argv[1:3])} exited with {code}: {tail(interop.read_all(err))}")
    return elapsed


def run_client(argv: List[str]) -> Dict[str, Any]:
    """Run a client program to its end; the JSON object it printed last."""
    code, out, err = interop.run_client(argv)
    if code != 0:
        raise WorkloadFailed(f"the client {'timed out' if code is None else f'exited with {code}'}: {tail(err)}")
    try:
        report: Dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    except (IndexError, ValueError):
        raise WorkloadFailed(f"the client printed no figures: {tail(out + err)}") from None
    return report


@contextmanager
def http_server(impl: Implementation, mode: str) -> Iterator[str]:
    """Run ``impl``'s HTTP server on a free loopback port while the block runs; yields its endpoint's URL."""
    port = interop.free_port()
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen([*impl.server, "http", str(port), mode], cwd=ROOT, env=ENV,
                                   stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
        try:
            try:
                interop.wait_until_listening(process, port, log)
            except interop.ServerDidNotStart as exc:
                raise WorkloadFailed(str(exc)[:500]) from None
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            interop.stop(process)


def peak_rss_mib(pid: int) -> float:
    """The peak resident set size (VmHWM) of a live process, in MiB."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    raise WorkloadFailed(f"no VmHWM for process {pid}")


def descendants(pid: int) -> List[int]:
    """The live processes started, directly or not, by ``pid``."""
    parent_of: Dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    parent_of[int(entry)] = int(stat.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue  # it ended while we looked
    found, generation = [], [pid]
    while generation:
        generation = [child for child, parent in parent_of.items() if parent in generation]
        found += generation
    return found


# ---- the workloads: each runs one implementation once ------------------------------------------------------
class Outcome(NamedTuple):
    figures: Dict[str, float]  # metric -> value
    versions: Dict[str, str]  # transport -> the protocol revision negotiated


def import_times(impl: Implementation, sizes: Sizes) -> Outcome:
    client = [timed_run(impl.import_client) for _ in range(sizes.repeats)]
    server = [timed_run(impl.import_server) for _ in range(sizes.repeats)]
    return Outcome({"import_client": statistics.median(client), "import_server": statistics.median(server)}, {})


def cold_start(impl: Implementation, sizes: Sizes) -> Outcome:
    times = [timed_run([*impl.client, "cold", "--", *impl.server]) for _ in range(sizes.repeats)]
    return Outcome({"cold": statistics.median(times)}, {})


def outcome(report: Dict[str, Any], transport: str, figures: Callable[[Dict[str, Any]], Dict[str, float]]) -> Outcome:
    """A client's report as an `Outcome`, ``figures(report)`` its metrics; for era_client.py, whose report
    holds one per protocol era under ``"eras"``, the metrics and transports of each are named ``ERA/...``."""
    if "eras" not in report:
        return Outcome(figures(report), {transport: report["version"]})
    metrics: Dict[str, float] = {}
    versions: Dict[str, str] = {}
    for era, its_report in report["eras"].items():
        metrics.update({f"{era}/{metric}": value for metric, value in figures(its_report).items()})
        versions[f"{era}/{transport}"] = its_report["version"]
    return Outcome(metrics, versions)


def stdio_calls(impl: Implementation, sizes: Sizes) -> Outcome:
    def figures(report: Dict[str, Any]) -> Dict[str, float]:
        sequential, in_flight = report["sequential"], report["in_flight"]
        found = {"stdio_seq": sequential["calls_per_s"], "stdio_p50": sequential["p50_ms"],
                 "stdio_p99": sequential["p99_ms"], "stdio_in_flight": in_flight["calls_per_s"]}
        if "server_cpu_us" in sequential:  # era_client.py
            found.update(stdio_cpu_seq=sequential["server_cpu_us"], stdio_cpu_in_flight=in_flight["server_cpu_us"])
        return found

    report = run_client([*impl.client, "stdio", str(sizes.stdio_sequential), str(sizes.stdio_in_flight), "--",
                         *impl.server])
    return outcome(report, "stdio", figures)


def http_calls(mode: str, prefix: str) -> Callable[[Implementation, Sizes], Outcome]:
    """The HTTP workload against servers in ``mode``; its metrics are named ``PREFIX_1`` and ``PREFIX_8``."""
    def workload(impl: Implementation, sizes: Sizes) -> Outcome:
        with http_server(impl, mode) as url:
            report = run_client([*impl.client, "http", url, str(sizes.http_sequential), str(HTTP_CLIENTS),
                                 str(sizes.http_per_client)])
        return outcome(report, f"http {mode}", lambda its: {f"{prefix}_1": its["sequential"]["calls_per_s"],
                                                            f"{prefix}_8": its["concurrent"]["calls_per_s"]})
    return workload


def hosts_calls(impl: Implementation, sizes: Sizes) -> Outcome:
    """The HTTP stateless workload through nginx, then handoff_client.py, against the same hosts (one start)."""
    with http_server(impl, "stateless") as url:
        calls = run_client([*impl.client, "http", url, str(sizes.http_sequential), str(HTTP_CLIENTS),
                            str(sizes.http_per_client)])
        handed = run_client([impl.client[0], os.path.join(HERE, "handoff_client.py"), url, str(sizes.handoff_runs),
                             str(HANDOFF_AFTER)])
    return Outcome({"http_json_1": calls["sequential"]["calls_per_s"], "http_json_8": calls["concurrent"]["calls_per_s"],
                    "handoff_p50": handed["handoff"]["p50_ms"], "handoff_max": handed["handoff"]["max_ms"]},
                   {"http stateless": calls["version"], "handoff": handed["version"]})


def peak_rss(impl: Implementation, sizes: Sizes) -> Outcome:
    """Start a client in ``hold`` mode; once it says it is ready, read its VmHWM and its server's."""
    with tempfile.TemporaryFile() as err:
        process = subprocess.Popen([*impl.client, "hold", "--", *impl.server], cwd=ROOT, env=ENV,
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, start_new_session=True)
        assert process.stdout is not None and process.stdin is not None
        try:
            ready, _, _ = select.select([process.stdout], [], [], TIMEOUT)
            line = process.stdout.readline() if ready else b""
            if not line:
                raise WorkloadFailed(f"the client did not get ready: {tail(interop.read_all(err))}")
            servers = descendants(process.pid)
            if not servers:
                raise WorkloadFailed("the client has no server process")
            figures = {"rss_client": peak_rss_mib(process.pid),
                       "rss_server": sum(peak_rss_mib(pid) for pid in servers)}
            process.stdin.close()
            if process.wait(timeout=TIMEOUT) != 0:
                raise WorkloadFailed(f"the client exited with {process.returncode}: {tail(interop.read_all(err))}")
        finally:
            interop.stop(process)
    return Outcome(figures, {})


#: In the order they run in each round.
WORKLOADS: List[Tuple[str, Callable[[Implementation, Sizes], Outcome]]] = [
    ("import", import_times),
    ("cold start", cold_start),
    ("stdio", stdio_calls),
    ("http stateless", http_calls("stateless", "http_json")),
    ("http default", http_calls("default", "http_sse")),
    ("peak rss", peak_rss),
    ("hosts", hosts_calls),
]
#: What the revision table measures (import, cold start and memory are the main table's).
ERA_WORKLOADS = ("stdio", "http stateless", "http default")
#: Runs of each mcplite-eras workload per round (`Implementation.passes`): 9 samples of each ratio in a full run.
ERA_PASSES = 3
SDK_ERA_WORKLOADS = SESSION_ERA_WORKLOADS = ("stdio",)
#: What an async def tool costs: mcplite's stdio workload with the tool written async (`async_lines`).
ASYNC = "mcplite-async"
ASYNC_WORKLOADS = ("stdio",)
#: Its calls/s over mcplite's own must reach this: a call costs at most 1.25x a plain tool's (1 / 1.25).
ASYNC_TARGET = 0.80
#: The gateway table (`gateway_table`): mcplite's gateway and FastMCP's proxy in front of mc_server.py, stdio only.
GATEWAY, FASTMCP_PROXY, FLOOR_PROXY = "mcplite-gateway", "fastmcp-proxy", "floor-proxy"
GATEWAY_WORKLOADS = ("stdio",)
#: What the gateway must reach (issue 33): (metric, against, factor). calls/s: the gateway's >= factor x the
#: other's ("mcplite" is the direct calls); "stdio_p50_added": the gateway's p50 minus the direct p50, in ms, <= factor.
GATEWAY_TARGETS: List[Tuple[str, str, float]] = [
    ("stdio_seq", "mcplite", 0.5), ("stdio_in_flight", "mcplite", 0.5),
    ("stdio_p50_added", "mcplite", 0.3),
    ("stdio_seq", FASTMCP_PROXY, 5.0), ("stdio_in_flight", FASTMCP_PROXY, 5.0),
]
#: What the probe of protocol_version="auto" costs against a server without 2026-07-28: a cold start each way.
PROBE_WORKLOADS = ("cold start",)
PROBE_PINNED, PROBE_AUTO = "mcplite-probe-pinned", "mcplite-probe-auto"
#: The scale-out table's servers: worker processes behind one port, on the stateless HTTP workload only.
SCALE_WORKERS = 4
SCALE_WORKLOADS = ("http stateless",)
SCALED_MCPLITE, SCALED_SDK = "mcplite-gunicorn", "python-sdk-uvicorn"
#: Several hosts behind nginx with Redis (mc_hosts.py): the HTTP stateless workload and the handoff, one start.
HOSTS_2, HOSTS_4 = "mcplite-hosts-2", "mcplite-hosts-4"
HOSTS_NAMES = {HOSTS_2, HOSTS_4}
HOSTS_WORKLOADS = ("hosts",)
#: Seconds the handed-off task runs: long enough for the other host's tasks/result to be waiting when it ends.
HANDOFF_AFTER = 0.1
#: Its columns: (implementation, heading), in order; and its ratios: (numerator, denominator).
SCALE_COLUMNS = [("mcplite", "mcplite, 1 process"),
                 (SCALED_MCPLITE, f"mcplite, gunicorn -w {SCALE_WORKERS} (sync)"),
                 (HOSTS_2, "mcplite, 2 hosts + nginx + Redis"),
                 (HOSTS_4, "mcplite, 4 hosts + nginx + Redis"),
                 ("python-sdk", "Python SDK, 1 process"),
                 (SCALED_SDK, f"Python SDK, uvicorn --workers {SCALE_WORKERS}")]
SCALE_RATIOS = [(SCALED_MCPLITE, "mcplite"), (HOSTS_2, "mcplite"), (HOSTS_4, "mcplite"), (SCALED_MCPLITE, SCALED_SDK),
                ("mcplite", "python-sdk")]
SCALE_NAMES = {SCALED_MCPLITE, SCALED_SDK, *HOSTS_NAMES}
#: Printed under the scale-out table: what its figures hold besides the servers' own speed.
SCALE_NOTE = ("gunicorn's sync workers close the connection after every response (each call pays a TCP connect); "
              "uvicorn --workers N (0.54) leaves Nagle's algorithm on for the connections its workers accept "
              "(Kludex/uvicorn#3149), so each keep-alive request after the first waits for a delayed ACK (~40 ms); "
              "one uvicorn process does not. The hosts are gunicorn masters of one gthread worker each, nginx "
              "keeping connections to them alive, all on this one machine: they share its cores, so the figures "
              "show what the hops and Redis cost, not what more machines would add.")


class Record:
    """What the rounds gathered, per implementation: samples of each metric, revisions, failures, time spent."""

    def __init__(self, names: Sequence[str]) -> None:
        self.samples: Dict[str, Dict[str, List[float]]] = {name: {} for name in names}
        self.versions: Dict[str, Dict[str, Set[str]]] = {name: {} for name in names}
        self.failures: Dict[str, List[str]] = {}
        self.seconds: Dict[str, float] = {name: 0.0 for name in names}

    def add(self, name: str, outcome: Outcome) -> None:
        for metric, value in outcome.figures.items():
            self.samples[name].setdefault(metric, []).append(value)
        for transport, version in outcome.versions.items():
            self.versions[name].setdefault(transport, set()).add(version)

    def fail(self, name: str, what: str) -> None:
        self.failures.setdefault(name, []).append(what)
        print(f"bench: FAILED {name}: {what}", flush=True)

    def medians(self) -> Dict[str, Dict[str, float]]:
        return {name: {metric: statistics.median(values) for metric, values in metrics.items()}
                for name, metrics in self.samples.items()}


def run_rounds(impls: Sequence[Implementation], sizes: Sizes, record: Record) -> None:
    for round_index in range(sizes.rounds):
        started = time.monotonic()
        shift = round_index % len(impls)
        order = [*impls[shift:], *impls[:shift]]
        for workload_name, workload in WORKLOADS:
            for impl in order:
                if impl.workloads and workload_name not in impl.workloads:
                    continue
                if not impl.workloads and workload_name in HOSTS_WORKLOADS:  # the hosts' own: not "all"
                    continue
                workload_started = time.monotonic()
                for _ in range(impl.passes):
                    try:
                        record.add(impl.name, workload(impl, sizes))
                    except WorkloadFailed as exc:
                        record.fail(impl.name, f"round {round_index + 1}, {workload_name}: {exc}")
                record.seconds[impl.name] += time.monotonic() - workload_started
        print(f"bench: round {round_index + 1}/{sizes.rounds} ({', '.join(impl.name for impl in order)}): "
              f"{time.monotonic() - started:.0f} s", flush=True)


# ---- the table --------------------------------------------------------------------------------------------
class Row(NamedTuple):
    metric: str
    label: str
    unit: str  # "calls/s" is better higher; "ms" and "MiB" better lower


ROWS = [
    Row("import_client", "import client", "ms"),
    Row("import_server", "import server", "ms"),
    Row("cold", "cold start (launch -> exit)", "ms"),
    Row("stdio_seq", "stdio sequential", "calls/s"),
    Row("stdio_p50", "stdio sequential p50", "ms"),
    Row("stdio_p99", "stdio sequential p99", "ms"),
    Row("stdio_in_flight", f"stdio {WINDOW} in flight", "calls/s"),
    Row("http_json_1", "HTTP stateless JSON, 1 client", "calls/s"),
    Row("http_json_8", f"HTTP stateless JSON, {HTTP_CLIENTS} clients", "calls/s"),
    Row("http_sse_1", "HTTP default (sessions, SSE), 1 client", "calls/s"),
    Row("http_sse_8", f"HTTP default (sessions, SSE), {HTTP_CLIENTS} clients", "calls/s"),
    Row("rss_server", "idle stdio server peak RSS", "MiB"),
    Row("rss_client", "stdio client peak RSS", "MiB"),
]
TRANSPORTS = ("stdio", "http stateless", "http default")
#: The scale-out table's rows for the hosts' handoff (`hosts_calls`).
HANDOFF_ROWS = [Row("handoff_p50", "task done on host A -> its result on host B (2025-11-25 tasks/result), p50", "ms"),
                Row("handoff_max", "task done on host A -> its result on host B, max", "ms")]

#: What mcplite must reach (issue 7): metric -> [(peer, factor)]. For calls/s mcplite >= factor x the peer's
#: figure, for ms and MiB mcplite <= factor x the peer's.
TARGETS: Dict[str, List[Tuple[str, float]]] = {
    "import_client": [("floor", 1.5)],
    "import_server": [("floor", 1.5)],
    "cold": [("floor", 2.0)],
    "stdio_seq": [("typescript-sdk", 1.1), ("floor", 0.35)],
    "stdio_in_flight": [("typescript-sdk", 1.0)],
    "http_json_1": [("floor", 0.5)],
    "http_json_8": [("floor", 0.5)],
    "http_sse_1": [("python-sdk", 3.0)],
    "rss_server": [("floor", 1.5)],
}
SHORT = {"floor": "floor", "mcplite": "mcplite", "mcplite-eras": "mcplite's server in both eras",
         "mcplite-eras-session": "the same, mcplite's Session as the client",
         "mcplite-eras-equalized": "the same, the raw client reading as much in both eras",
         "mcplite-async": "mcplite, its tool async def",
         "mcplite-probe-pinned": "mcplite 2025-11-25 -> legacy-only server",
         "mcplite-probe-auto": "mcplite auto -> legacy-only server",
         "python-sdk": "Python SDK", "typescript-sdk": "TS SDK",
         "python-sdk-handshake": "Python SDK -> mcplite 2025-11-25",
         "python-sdk-modern": "Python SDK -> mcplite 2026-07-28",
         "mcplite-gunicorn": "mcplite gunicorn -w 4", "python-sdk-uvicorn": "Python SDK uvicorn --workers 4",
         HOSTS_2: "mcplite on 2 hosts behind nginx, Redis stores", HOSTS_4: "mcplite on 4 hosts behind nginx, Redis stores",
         GATEWAY: "mcplite -> mcplite's gateway -> mcplite", FASTMCP_PROXY: "mcplite -> FastMCP proxy -> mcplite",
         FLOOR_PROXY: "mcplite -> byte copier -> mcplite",
         "streams": "the streams table (mcplite and the Python SDK holding thousands of open streams)"}
#: The implementations that are a peer's program with another server: the peer they need installed.
PEER_OF = {"python-sdk-handshake": "python-sdk", "python-sdk-modern": "python-sdk", "python-sdk-uvicorn": "python-sdk",
           FASTMCP_PROXY: "fastmcp"}


class EraSide(NamedTuple):
    """Where the revision table finds one era's figures: an implementation, and the prefix of their names."""

    implementation: str
    prefix: str


class EraPair(NamedTuple):
    """Two columns of the revision table and their ratio: one client driving mcplite's server in each era."""

    client: str  # who drives the server, for the column headings
    base: EraSide  # speaking ERA_BASE
    measured: EraSide  # speaking ERA_MEASURED
    scored: bool  # whether ERA_TARGETS apply to its ratios


ERA_BASE, ERA_MEASURED = "2025-11-25", "2026-07-28"
ERA_PAIRS = [EraPair("era_client", EraSide("mcplite-eras", "handshake/"), EraSide("mcplite-eras", "modern/"), True),
             EraPair("era_client, reading equalized", EraSide("mcplite-eras-equalized", "handshake/"),
                     EraSide("mcplite-eras-equalized", "modern/"), False),
             EraPair("Session client", EraSide("mcplite-eras-session", "handshake/"),
                     EraSide("mcplite-eras-session", "modern/"), False),
             EraPair("Python SDK", EraSide("python-sdk-handshake", ""), EraSide("python-sdk-modern", ""), False)]
#: The implementations that appear in the revision table only.
ERA_NAMES = {side.implementation for pair in ERA_PAIRS for side in (pair.base, pair.measured)}
#: The revision table's rows: those of the main table that it measures, and the servers' CPU time (era_client).
ERA_ROWS = [*(row for row in ROWS if row.metric.startswith(("stdio", "http"))),
            Row("stdio_cpu_seq", "stdio sequential, server CPU per call", "us"),
            Row("stdio_cpu_in_flight", f"stdio {WINDOW} in flight, server CPU per call", "us")]
#: What mcplite's server on 2026-07-28 must reach against itself on 2025-11-25 (issue 12): metric -> factor,
#: read as in TARGETS.
#: A guard against regressions, not a goal worth complexity: 2026-07-28 within 10% of 2025-11-25 on stdio.
ERA_TARGETS: Dict[str, float] = {"stdio_seq": 0.90, "stdio_in_flight": 0.90}
RATIO_NOTE = "mcplite/peer: calls/s above 1x means mcplite is faster; ms and MiB below 1x mean it is lighter."


def number(value: Optional[float], unit: str) -> str:
    if value is None:
        return "-"
    if unit == "calls/s":
        return f"{value:,.0f}"
    return f"{value:,.2f}" if value < 10 else f"{value:,.1f}"


def verdict(row: Row, medians: Dict[str, Dict[str, float]]) -> Tuple[str, Optional[bool]]:
    """The row's target as text, and whether mcplite met it (None: no target, or a figure is missing)."""
    goals = TARGETS.get(row.metric, [])
    higher = row.unit == "calls/s"
    text = ", ".join(f"{'>=' if higher else '<='} {factor:g}x {SHORT[peer]}" for peer, factor in goals)
    ours = medians.get("mcplite", {}).get(row.metric)
    theirs = [(medians.get(peer, {}).get(row.metric), factor) for peer, factor in goals]
    if not goals or ours is None or any(value is None for value, _ in theirs):
        return text, None
    return text, all(ours >= factor * value if higher else ours <= factor * value  # type: ignore[operator]
                     for value, factor in theirs)


def table(names: Sequence[str], medians: Dict[str, Dict[str, float]],
          versions: Dict[str, Dict[str, Set[str]]]) -> Tuple[List[str], List[str]]:
    """The Markdown table's lines, and the targets mcplite missed."""
    peers = [name for name in names if name != "mcplite"] if "mcplite" in names else []
    header = ["workload", "unit", *(SHORT[name] for name in names), *(f"mcplite/{SHORT[peer]}" for peer in peers),
              "mcplite must reach", "met"]
    rows: List[List[str]] = []
    missed: List[str] = []
    for row in ROWS:
        cells = [row.label, row.unit, *(number(medians[name].get(row.metric), row.unit) for name in names)]
        ours = medians.get("mcplite", {}).get(row.metric)
        for peer in peers:
            theirs = medians[peer].get(row.metric)
            cells.append(f"{ours / theirs:.2f}x" if ours is not None and theirs else "-")
        text, met = verdict(row, medians)
        cells += [text, "" if not text else "?" if met is None else "yes" if met else "**NO**"]
        rows.append(cells)
        if met is False:
            missed.append(f"{row.label}: {text}")
    for transport in TRANSPORTS:
        cells = [f"protocol revision, {transport}", "",
                 *(", ".join(sorted(versions[name].get(transport, ()))) or "-" for name in names)]
        rows.append(cells + [""] * (len(header) - len(cells)))
    return markdown(header, rows), missed


def paired_ratio(measured: Sequence[float], base: Sequence[float]) -> Optional[float]:
    """The median of the rounds' ratios measured/base when every round has both figures, else the ratio of
    the medians (a round in which one of them failed)."""
    if not measured or not base:
        return None
    if len(measured) == len(base) and all(base):
        return statistics.median(m / b for m, b in zip(measured, base))
    return statistics.median(measured) / statistics.median(base) if statistics.median(base) else None


def era_table(names: Sequence[str], record: Record) -> Tuple[List[str], List[str]]:
    """The revision table's lines (mcplite's server on 2026-07-28 beside itself on 2025-11-25, for each pair of
    `ERA_PAIRS` whose implementations ran), and the targets of `ERA_TARGETS` it missed."""
    pairs = [pair for pair in ERA_PAIRS if pair.base.implementation in names and pair.measured.implementation in names]
    header = ["workload (mcplite's server)", "unit"]
    for pair in pairs:
        header += [f"{pair.client} {ERA_BASE}", f"{pair.client} {ERA_MEASURED}", f"{pair.client} ratio"]
    header += [f"{ERA_MEASURED}/{ERA_BASE} must reach", "met"]

    def samples(side: EraSide, metric: str) -> List[float]:
        return record.samples[side.implementation].get(side.prefix + metric, [])

    rows: List[List[str]] = []
    missed: List[str] = []
    for row in ERA_ROWS:
        if not any(samples(pair.base, row.metric) for pair in pairs):
            continue  # a metric no pair measured (the SDK pair's HTTP, the CPU time of a run without era_client)
        cells = [row.label, row.unit]
        factor = ERA_TARGETS.get(row.metric)
        met: Optional[bool] = None
        for pair in pairs:
            base, measured = samples(pair.base, row.metric), samples(pair.measured, row.metric)
            ratio = paired_ratio(measured, base)
            cells += [*(number(statistics.median(values) if values else None, row.unit) for values in (base, measured)),
                      "-" if ratio is None else f"{ratio:.3f}x"]
            if pair.scored and factor is not None and ratio is not None:
                met = ratio >= factor if row.unit == "calls/s" else ratio <= factor
        text = "" if factor is None else f"{'>=' if row.unit == 'calls/s' else '<='} {factor:g}x"
        cells += [text, "" if not text else "?" if met is None else "yes" if met else "**NO**"]
        rows.append(cells)
        if met is False:
            missed.append(f"{row.label}, {ERA_MEASURED}/{ERA_BASE} with era_client: {text}")
    for transport in TRANSPORTS:
        cells = [f"protocol revision, {transport}", ""]
        for pair in pairs:
            cells += [", ".join(sorted(record.versions[side.implementation].get(side.prefix + transport, ()))) or "-"
                      for side in (pair.base, pair.measured)] + [""]
        rows.append(cells + [""] * (len(header) - len(cells)))
    return markdown(header, rows), missed


def scale_table(names: Sequence[str], medians: Dict[str, Dict[str, float]],
                versions: Dict[str, Dict[str, Set[str]]]) -> List[str]:
    """The scale-out table (stateless HTTP, several worker processes against one), or nothing when neither
    scaled-out implementation ran; a ratio is higher-is-faster, its columns' short names in its heading."""
    if not SCALE_NAMES & set(names):
        return []
    columns = [(name, heading) for name, heading in SCALE_COLUMNS if name in names]
    ratios = [(top, bottom) for top, bottom in SCALE_RATIOS if top in names and bottom in names]
    header = ["workload (stateless, JSON responses)", "unit", *(heading for _, heading in columns),
              *(f"{SHORT_SCALE[top]}/{SHORT_SCALE[bottom]}" for top, bottom in ratios)]
    rows: List[List[str]] = []
    for row in [*ROWS, *HANDOFF_ROWS]:
        if row.metric not in ("http_json_1", "http_json_8") and not (row in HANDOFF_ROWS and HOSTS_NAMES & set(names)):
            continue
        cells = [row.label, row.unit, *(number(medians[name].get(row.metric), row.unit) for name, _ in columns)]
        for top, bottom in ratios:
            ours, theirs = medians[top].get(row.metric), medians[bottom].get(row.metric)
            cells.append(f"{ours / theirs:.2f}x" if ours is not None and theirs else "-")
        rows.append(cells)
    cells = ["protocol revision", "", *(", ".join(sorted(versions[name].get("http stateless", ()))) or "-"
                                        for name, _ in columns)]
    rows.append(cells + [""] * (len(header) - len(cells)))
    return [*markdown(header, rows, text_after=0), "", SCALE_NOTE]


#: The scale-out table's short names, for its ratio headings.
SHORT_SCALE = {"mcplite": "mcplite 1", SCALED_MCPLITE: "mcplite gunicorn", HOSTS_2: "2 hosts", HOSTS_4: "4 hosts",
               "python-sdk": "SDK 1",
               SCALED_SDK: "SDK uvicorn"}


def async_lines(names: Sequence[str], record: Record) -> Tuple[List[str], List[str]]:
    """One sentence: an ``async def`` tool's stdio calls/s beside a plain tool's (the median of the rounds'
    ratios), and the target it missed, if it did."""
    if ASYNC not in names or "mcplite" not in names:
        return [], []
    sentences: List[str] = []
    missed: List[str] = []
    for metric, label in (("stdio_seq", "sequential"), ("stdio_in_flight", f"{WINDOW} in flight")):
        theirs, ours = record.samples["mcplite"].get(metric, []), record.samples[ASYNC].get(metric, [])
        ratio = paired_ratio(ours, theirs)
        if ratio is None:
            continue
        sentences.append(f"{label} {statistics.median(ours):.0f} against {statistics.median(theirs):.0f} calls/s, "
                         f"{ratio:.3f}x")
        if ratio < ASYNC_TARGET:
            missed.append(f"async def tool, stdio {label}: {ratio:.3f}x of a plain tool's calls/s, "
                          f"must reach {ASYNC_TARGET:g}x")
    if not sentences:
        return [], missed
    return [f"An async def tool on stdio (must reach {ASYNC_TARGET:g}x a plain tool's calls/s): "
            + "; ".join(sentences) + "."], missed


def paired_difference(measured: Sequence[float], base: Sequence[float]) -> Optional[float]:
    """`paired_ratio`'s counterpart for a difference: the median of the rounds' measured - base."""
    if not measured or not base:
        return None
    if len(measured) == len(base):
        return statistics.median(m - b for m, b in zip(measured, base))
    return statistics.median(measured) - statistics.median(base)


def gateway_table(names: Sequence[str], record: Record) -> Tuple[List[str], List[str]]:
    """The gateway table (stdio calls straight to mc_server.py, through mcplite's gateway, through FastMCP's
    proxy; the ratios and what each middle adds to the p50), its targets with whether each is met, and the targets
    of `GATEWAY_TARGETS` missed. Nothing unless the gateway ran."""
    if GATEWAY not in names:
        return [], []
    columns = [name for name in ("mcplite", FLOOR_PROXY, GATEWAY, FASTMCP_PROXY) if name in names]
    heading = {"mcplite": "direct (mc_client -> mc_server)", GATEWAY: "through mcplite's gateway",
               FASTMCP_PROXY: f"through FastMCP {FASTMCP_VERSION}'s proxy",
               FLOOR_PROXY: "through a byte copier (floor_proxy.py)"}
    pairs = [(top, bottom) for top, bottom in ((FLOOR_PROXY, "mcplite"), (GATEWAY, "mcplite"),
                                                (GATEWAY, FLOOR_PROXY), (FASTMCP_PROXY, "mcplite"),
                                                (GATEWAY, FASTMCP_PROXY)) if top in names and bottom in names]
    short = {"mcplite": "direct", GATEWAY: "gateway", FASTMCP_PROXY: "FastMCP proxy", FLOOR_PROXY: "copier"}

    def samples(name: str, metric: str) -> List[float]:
        return record.samples[name].get(metric, [])

    def measure(metric: str, against: str) -> Optional[float]:
        if metric == "stdio_p50_added":
            return paired_difference(samples(GATEWAY, "stdio_p50"), samples(against, "stdio_p50"))
        return paired_ratio(samples(GATEWAY, metric), samples(against, metric))

    header = ["stdio, mc_client.py", "unit", *(heading[name] for name in columns),
              *(f"{short[top]}/{short[bottom]}" for top, bottom in pairs)]
    rows: List[List[str]] = []
    for row in ROWS:
        if row.metric not in ("stdio_seq", "stdio_p50", "stdio_p99", "stdio_in_flight"):
            continue
        cells = [row.label, row.unit,
                 *(number(statistics.median(samples(name, row.metric)) if samples(name, row.metric) else None,
                          row.unit) for name in columns)]
        for top, bottom in pairs:
            ratio = paired_ratio(samples(top, row.metric), samples(bottom, row.metric))
            cells.append("-" if ratio is None else f"{ratio:.2f}x")
        rows.append(cells)
    added = ["stdio sequential p50 added to the direct call's", "ms"]
    for name in columns:
        difference = paired_difference(samples(name, "stdio_p50"), samples("mcplite", "stdio_p50"))
        added.append("-" if name == "mcplite" or difference is None else f"{difference:+.3f}")
    rows.append(added + [""] * len(pairs))
    rows.append(["protocol revision (front, and the middle's to mc_server.py)", "",
                 *(", ".join(sorted(record.versions[name].get("stdio", ()))) or "-" for name in columns)]
                + [""] * len(pairs))
    lines = markdown(header, rows, text_after=0)
    checks: List[List[str]] = []
    missed: List[str] = []
    for metric, against, factor in GATEWAY_TARGETS:
        if against not in names:
            continue
        value = measure(metric, against)
        label = next((row.label for row in ROWS if row.metric == metric), "stdio sequential p50")
        if metric == "stdio_p50_added":
            text, shown = f"the gateway adds <= {factor:g} ms to the direct p50", \
                "-" if value is None else f"{value:+.3f} ms"
            met = None if value is None else value <= factor
        else:
            text, shown = f"gateway >= {factor:g}x {short[against]}", "-" if value is None else f"{value:.2f}x"
            met = None if value is None else value >= factor
        checks.append([f"{label}: {text}", shown, "?" if met is None else "yes" if met else "**NO**"])
        if met is False:
            missed.append(f"{label}: {text}; measured {shown}")
    if checks:
        lines += ["", *markdown(["gateway target", "measured", "met"], checks, text_after=1)]
    return lines, missed


# ---- the streams table (issue 34) ----------------------------------------------------------------------------
#: The streams table's name for --only; it is a table, not an implementation: it runs once, after the rounds.
STREAMS = "streams"
#: Open streams at once (half subscriptions/listen, half session GET streams), and sequential calls timed idle
#: and with them open; --quick uses the smaller counts.
STREAM_COUNTS, STREAM_COUNTS_QUICK = (1000, 5000, 10000), (200, 1000)
STREAM_CALLS, STREAM_CALLS_QUICK = 500, 200
#: Seconds after the opening burst at which the threads holding the streams are counted (streams_client.HELD_AFTER).
STREAM_HELD_AFTER = 6.0
#: The seconds one server's run at one count may take (the SDK opens 10,000 streams in about a minute here).
STREAM_TIMEOUT = 900.0
#: mcplite's targets at the largest count: server threads and RSS (MiB) with the streams open, the p99 of an
#: update's delivery (ms), a call's p50 and p99 with the streams open over idle, and how much a second crowd
#: of as many streams may add to the RSS the first left, as a fraction of what the first took: CPython keeps
#: the arenas it grew (pymalloc frees an arena only when it is empty, glibc trims only the top of its heaps),
#: so a process seldom gives back all it took, and "back to baseline" is that what it kept is reused.
STREAM_TARGETS = {"threads": 64, "rss": 400.0, "notify_p99": 2000.0, "call_ratio": 3.0, "rss_back": 0.25}
STREAM_SERVERS = [("mcplite", "mcplite (built-in server)"), ("python-sdk", "Python SDK on uvicorn")]


def stream_server_argv(name: str, python: str, port: int, count: int) -> List[str]:
    if name == "mcplite":
        return [python, os.path.join(HERE, "streams_mc_server.py"), str(port), str(count)]
    return [interop.PY_PEER_PYTHON, os.path.join(HERE, "streams_py_server.py"), str(port), str(count)]


def stream_run(name: str, python: str, count: int, calls: int) -> Dict[str, Any]:
    """One server holding ``count`` streams from streams_client.py: the client's report (see its docstring)."""
    port = interop.free_port()
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(stream_server_argv(name, python, port, count), cwd=ROOT, env=ENV,
                                   stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
        try:
            try:
                interop.wait_until_listening(process, port, log)
            except interop.ServerDidNotStart as exc:
                raise WorkloadFailed(str(exc)[:500]) from None
            try:
                done = subprocess.run([python, os.path.join(HERE, "streams_client.py"), str(port), str(process.pid),
                                       str(count), str(calls)], cwd=ROOT, env=ENV, capture_output=True, text=True,
                                      timeout=STREAM_TIMEOUT)
            except subprocess.TimeoutExpired:
                raise WorkloadFailed(f"the client took longer than {STREAM_TIMEOUT:.0f} s") from None
            if done.returncode != 0 or not done.stdout.strip():
                raise WorkloadFailed(f"the client exited with {done.returncode}: {tail(done.stdout + done.stderr)}")
            report: Dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
            if process.poll() is not None:
                report["errors"].append(f"the server exited with {process.returncode}: "
                                        f"{tail(interop.read_all(log))}")
            return report
        finally:
            interop.stop(process)


def run_streams(python: str, quick: bool, record: Record) -> Dict[Tuple[str, int], Dict[str, Any]]:
    """The streams table's runs: for each count, each server (the SDK's when it is installed), their order
    alternating from one count to the next."""
    counts = STREAM_COUNTS_QUICK if quick else STREAM_COUNTS
    calls = STREAM_CALLS_QUICK if quick else STREAM_CALLS
    servers = [name for name, _ in STREAM_SERVERS if name == "mcplite" or os.path.exists(interop.PY_PEER_PYTHON)]
    reports: Dict[Tuple[str, int], Dict[str, Any]] = {}
    for index, count in enumerate(counts):
        for name in (servers if index % 2 == 0 else servers[::-1]):
            started = time.monotonic()
            try:
                reports[(name, count)] = stream_run(name, python, count, calls)
            except WorkloadFailed as exc:
                record.fail(f"{STREAMS} {name}", f"{count} streams: {exc}")
            record.seconds[f"{STREAMS} {name}"] = record.seconds.get(f"{STREAMS} {name}", 0.0) + \
                time.monotonic() - started
            print(f"bench: streams: {name}, {count:,}: {time.monotonic() - started:.0f} s", flush=True)
    return reports


STREAM_RSS_NOTE = ("after: read once the clients have closed their streams and DELETEd their sessions and the "
                   "server's threads are back to the number before (or after 30 s); then a 2nd crowd of as many "
                   "streams opens and leaves the same way")


def streams_table(reports: Dict[Tuple[str, int], Dict[str, Any]], quick: bool) -> Tuple[List[str], List[str]]:
    """The streams table (per count and server: accepted, threads, RSS, an update's delivery, calls idle and
    with the streams open, threads and RSS after the clients left), mcplite's targets at the largest count
    with whether each is met, and the targets missed."""
    if not reports:
        return [], []
    counts = sorted({count for _, count in reports})
    heading = dict(STREAM_SERVERS)
    header = ["open streams (half listen, half GET)", "server", "accepted", "threads opening -> held", "RSS open MiB",
              "update p50 ms", "update p99 ms", "update max ms", "call p50 idle -> open ms",
              "call p99 idle -> open ms", "threads before -> after -> after a 2nd crowd",
              "RSS before -> after -> after a 2nd crowd MiB", "refused by"]
    rows: List[List[str]] = []

    def pair(before: Optional[float], after: Optional[float], digits: int = 2) -> str:
        if before is None or after is None:
            return "-"
        return f"{before:.{digits}f} -> {after:.{digits}f}"

    def quantile(report: Dict[str, Any], what: str, which: str) -> Optional[float]:
        value = report.get(what, {}).get(which)
        return None if value is None else float(value)

    for count in counts:
        for name, _ in STREAM_SERVERS:
            report = reports.get((name, count))
            if report is None:
                rows.append([f"{count:,}", heading[name], *["-"] * (len(header) - 3), "did not run (see below)"])
                continue
            refused = [f"{reason} x{times}" for reason, times in report["refused"].items()]
            refused += [f"ended by the server after opening: {reason} x{times}"
                        for reason, times in report["ended_by_server"].items()]
            if report["notify_missed"]:
                refused.append(f"{report['notify_missed']} deliveries missing after {60} s")
            refused += report["errors"]
            rows.append([
                f"{count:,}", heading[name], f"{report['accepted']:,} / {report['wanted']:,}",
                f"{report['threads_open']} -> {report['threads_held']}", f"{report['rss_open']:.0f}",
                *(number(quantile(report, "notify", which), "ms") for which in ("p50", "p99", "max")),
                pair(quantile(report, "calls_idle", "p50"), quantile(report, "calls_open", "p50")),
                pair(quantile(report, "calls_idle", "p99"), quantile(report, "calls_open", "p99")),
                f"{report['threads_before']} -> {report['threads_after']} -> {report['threads_after_again']}",
                f"{report['rss_before']:.0f} -> {report['rss_after']:.0f} -> {report['rss_after_again']:.0f}",
                "; ".join(refused) or "-"])
    lines = markdown(header, rows, text_after=1)
    largest = counts[-1]
    lines += ["", f"{'--quick: smaller counts (' + ', '.join(f'{c:,}' for c in counts) + '). ' if quick else ''}"
              f"Each server process holds one count's streams from one client process (streams_client.py: raw "
              f"non-blocking sockets, one selectors loop, {64} streams being opened at once), half "
              f"2026-07-28 subscriptions/listen naming bench://watched, half 2025-11-25 sessions (initialize, "
              f"resources/subscribe, then GET /mcp kept open). mcplite's server raises only the policy caps "
              f"max_listens and max_sessions to the count; max_connections (16384), max_workers (256) and "
              f"every other limit keep their defaults. threads and RSS: /proc/PID/status (Threads, VmRSS) of the "
              f"server once the streams are open (threads: at once, after the opening burst of requests, and "
              f"held: {STREAM_HELD_AFTER:g} s later, once the request workers that burst started have ended idle). update: from just before a tools/call of `touch` (which "
              f"announces an update of the resource) is sent to each stream's receipt of its "
              f"notifications/resources/updated event, over 3 updates one after another. call: a 2026-07-28 "
              f"tools/call of `add`, sequential on one keep-alive connection, {STREAM_CALLS_QUICK if quick else STREAM_CALLS} "
              f"calls before the streams open (idle) and as many with them open. {STREAM_RSS_NOTE}."]
    report = reports.get(("mcplite", largest))
    if report is None:
        return lines, [f"streams: mcplite did not run at {largest:,} streams"]
    targets = STREAM_TARGETS
    checks: List[Tuple[str, str, bool]] = []
    checks.append(("every stream accepted", f"{report['accepted']:,} / {report['wanted']:,}",
                   report["accepted"] == report["wanted"] and not report["notify_missed"]))
    checks.append((f"server threads holding the streams open <= {targets['threads']}", str(report["threads_held"]),
                   report["threads_held"] <= targets["threads"]))
    checks.append((f"server RSS with the streams open <= {targets['rss']:g} MiB", f"{report['rss_open']:.0f} MiB",
                   report["rss_open"] <= targets["rss"]))
    p99 = quantile(report, "notify", "p99")
    checks.append((f"an update reaches every stream: p99 <= {targets['notify_p99'] / 1000:g} s",
                   "-" if p99 is None else f"{p99:.0f} ms", p99 is not None and p99 <= targets["notify_p99"]))
    for which in ("p50", "p99"):
        idle, busy = quantile(report, "calls_idle", which), quantile(report, "calls_open", which)
        ratio = None if not idle or busy is None else busy / idle
        checks.append((f"call {which} with the streams open <= {targets['call_ratio']:g}x idle",
                       "-" if ratio is None else f"{ratio:.2f}x ({idle:.2f} -> {busy:.2f} ms)",
                       ratio is not None and ratio <= targets["call_ratio"]))
    checks.append(("threads back to baseline after the clients leave (after <= before, both crowds)",
                   f"{report['threads_before']} -> {report['threads_after']} ({report['settle_s']:.1f} s) -> "
                   f"{report['threads_after_again']}",
                   max(report["threads_after"], report["threads_after_again"]) <= report["threads_before"]))
    grown = report["rss_after_again"] - report["rss_after"]
    allowed = targets["rss_back"] * max(report["rss_open"] - report["rss_before"], 0.0)
    checks.append((f"memory back to baseline: a 2nd crowd adds <= {targets['rss_back']:.0%} of what the first "
                   f"took to the RSS left after it",
                   f"{report['rss_after']:.0f} -> {report['rss_after_again']:.0f} MiB ({grown:+.0f}, "
                   f"allowed {allowed:+.0f})", grown <= allowed))
    lines += ["", *markdown([f"target (mcplite, {largest:,} streams)", "measured", "met"],
                            [[text, shown, "yes" if met else "**NO**"] for text, shown, met in checks],
                            text_after=1)]
    missed = [f"streams, mcplite at {largest:,}: {text}; measured {shown}" for text, shown, met in checks if not met]
    return lines, missed


STREAMS_HEADING = "## Open streams (issue 34)"


def merge_streams_results(section: List[str], about: List[str], command: str) -> None:
    """A run of the streams table alone: put its section into RESULTS.md in place of the old one, leaving
    the other tables as the last full run wrote them."""
    try:
        with open(RESULTS, encoding="utf-8") as existing:
            text = existing.read()
    except OSError:
        text = "# mcplite benchmark results\n"
    start = text.find(STREAMS_HEADING)
    if start >= 0:
        end = text.find("\n## ", start + len(STREAMS_HEADING))
        text = text[:start].rstrip("\n") + ("\n\n" + text[end + 1:] if end >= 0 else "")
    block = [STREAMS_HEADING, "", f"Written by `{command}`.", "", *(f"- {line}" for line in about), "", *section]
    with open(RESULTS, "w", encoding="utf-8") as out:
        out.write(text.rstrip("\n") + "\n\n" + "\n".join(block) + "\n")


def probe_lines(names: Sequence[str], medians: Dict[str, Dict[str, float]]) -> List[str]:
    """One sentence: what ``protocol_version="auto"`` adds to a cold start against a legacy-only stdio server,
    beside the round trip of one call (the probe is one request the server refuses)."""
    if PROBE_PINNED not in names or PROBE_AUTO not in names:
        return []
    pinned, auto = medians[PROBE_PINNED].get("cold"), medians[PROBE_AUTO].get("cold")
    if pinned is None or auto is None:
        return []
    call = medians.get("mcplite", {}).get("stdio_p50")
    trip = f"; one stdio call's round trip (p50) is {call:.2f} ms" if call is not None else ""
    return [f"The probe against a server without 2026-07-28 (stdio, cold start launch -> exit): "
            f"{auto:.1f} ms with protocol_version=\"auto\", {pinned:.1f} ms pinned to 2025-11-25: "
            f"{auto - pinned:+.1f} ms{trip}."]


def markdown(header: List[str], rows: List[List[str]], text_after: int = 2) -> List[str]:
    """A Markdown table; the columns between the first two and the last ``text_after`` are numbers
    (right-aligned)."""
    numeric = range(2, len(header) - text_after)
    widths = [max(len(cells[column]) for cells in [header, *rows]) for column in range(len(header))]
    rule = "|".join("-" * (width + 1) + (":" if column in numeric else "-") for column, width in enumerate(widths))
    lines = [" | ".join(cell.rjust(width) if column in numeric else cell.ljust(width)
                        for column, (cell, width) in enumerate(zip(cells, widths))) for cells in [header, *rows]]
    return [f"| {lines[0]} |", f"|{rule}|", *(f"| {line} |" for line in lines[1:])]


# ---- the run ----------------------------------------------------------------------------------------------
def machine() -> str:
    cpu = "unknown cpu"
    try:
        with open("/proc/cpuinfo") as info:
            cpu = next((line.split(":", 1)[1].strip() for line in info if line.startswith("model name")), cpu)
    except OSError:
        pass
    return f"{platform.machine()}, {cpu}, {len(os.sched_getaffinity(0))} cpus"  # uname -m, the model, nproc


def output_of(argv: List[str]) -> str:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=30).stdout.strip() or "?"
    except (OSError, subprocess.TimeoutExpired):
        return "?"


def write_results(lines: List[str], about: List[str], command: str) -> None:
    text = "\n".join([
        "# mcplite benchmark results",
        "",
        f"Written by `{command}`; tests/bench/run.py's docstring says what each row measures.",
        "Medians of interleaved rounds on a shared machine: compare the ratios, not the absolute figures.",
        RATIO_NOTE,
        "",
        *(f"- {line}" for line in about),
        "",
        *lines,
        "",
    ])
    with open(RESULTS, "w", encoding="utf-8") as out:
        out.write(text)


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Benchmark mcplite beside the official SDKs and a stdlib floor.")
    parser.add_argument("--quick", action="store_true", help="fewer rounds and calls (CI); RESULTS.md is left alone")
    parser.add_argument("--rounds", type=int, help=f"rounds (default {FULL.rounds}, or {QUICK.rounds} with --quick)")
    parser.add_argument("--strict", action="store_true", help="exit 1 when mcplite misses a target")
    parser.add_argument("--only", help="comma-separated implementations (default: all): " + ", ".join(SHORT))
    args = parser.parse_args(argv)
    if args.rounds is not None and args.rounds < 1:
        parser.error("--rounds must be at least 1")
    args.only = [name.strip() for name in args.only.split(",")] if args.only else list(SHORT)
    unknown = [name for name in args.only if name not in SHORT]
    if unknown:
        parser.error(f"unknown implementation(s): {', '.join(unknown)}")
    return args


def main(argv: Sequence[str]) -> int:
    args = parse_args(argv)
    started = time.monotonic()
    sizes = QUICK if args.quick else FULL
    if args.rounds is not None:
        sizes = sizes._replace(rounds=args.rounds)
    python, error = clean_python()
    if python is None:
        print(f"bench: cannot make a venv for mcplite and the floor: {error}", file=sys.stderr)
        return 1
    node = shutil.which("node") or "node"
    every = implementations(python, interop.PY_PEER_PYTHON, node)
    # With bytecode caching (pip compiled the SDKs' bytecode when it installed them; mcplite gets its cache
    # too). interop.run_client builds its environment from ours.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    ENV.update(interop.child_env())
    names, peer_notes = install_peers([name for name in every if name in args.only])
    streams_wanted = STREAMS in args.only
    if streams_wanted and "python-sdk" not in args.only:
        peer_notes += install_peers(["python-sdk"])[1]  # the table's other server (not a round's implementation)
    record = Record(names)

    # An untimed cold start first: it writes bytecode caches and warms the OS's file cache for every program.
    for name in list(names):
        try:
            timed_run([*every[name].client, "cold", "--", *every[name].server])
        except WorkloadFailed as exc:
            record.fail(name, f"left out, it cannot start: {exc}")
            names.remove(name)
    if names:
        run_rounds([every[name] for name in names], sizes, record)

    medians = record.medians()
    main_names = [name for name in names
                  if name not in ERA_NAMES and name not in SCALE_NAMES
                  and name not in (PROBE_PINNED, PROBE_AUTO, ASYNC, GATEWAY, FASTMCP_PROXY, FLOOR_PROXY)]
    lines, missed = table(main_names, medians, record.versions) if main_names else ([], [])
    scale = scale_table(names, medians, record.versions)
    if scale:
        lines += ["", *scale]
    if any(name in ERA_NAMES for name in names):
        era_lines, era_missed = era_table(names, record)
        lines += ["", *era_lines]
        missed += era_missed
    async_line, async_missed = async_lines(names, record)
    if async_line:
        lines += ["", *async_line]
    missed += async_missed
    gateway_lines, gateway_missed = gateway_table(names, record)
    if gateway_lines:
        lines += ["", *gateway_lines]
    missed += gateway_missed
    probe = probe_lines(names, medians)
    if probe:
        lines += ["", *probe]
    streams_lines: List[str] = []
    if streams_wanted:
        streams_lines, streams_missed = streams_table(run_streams(python, args.quick, record), args.quick)
        if streams_lines:
            streams_lines = [STREAMS_HEADING, "", *streams_lines]
            lines += ([""] if lines else []) + streams_lines
        missed += streams_missed
    version_of = ["-c", "import platform; print(platform.python_version())"]
    about = [
        f"{datetime.datetime.now():%Y-%m-%d %H:%M}; {machine()}; Python {output_of([python, *version_of])} "
        f"(the SDK's venv: {output_of([interop.PY_PEER_PYTHON, *version_of])}), node {output_of([node, '--version'])}; "
        f"peers: {', '.join(peer_notes) or 'none'}",
        f"{sizes.rounds} round(s), medians over them; per round and implementation: {sizes.stdio_sequential} "
        f"sequential and {sizes.stdio_in_flight} in-flight stdio calls; per HTTP mode {sizes.http_sequential} "
        f"sequential calls and {HTTP_CLIENTS} clients x {sizes.http_per_client}; {sizes.repeats} fresh processes "
        f"per round for each import and cold-start figure",
        f"took {time.monotonic() - started:.0f} s (" +
        ", ".join(f"{name} {seconds:.0f} s" for name, seconds in record.seconds.items()) + ")",
    ]
    print("", *lines, "", *about, RATIO_NOTE, sep="\n")
    for target in missed:
        print(f"bench: target missed: {target}")
    for name, failures in record.failures.items():
        for failure in failures:
            print(f"bench: {name} failed: {failure}")
    if not args.quick and not names and streams_lines:  # the streams table alone: the other tables stay
        merge_streams_results(streams_lines[2:], [about[0], about[2]], " ".join(["python3 tests/bench/run.py", *argv]))
        print(f"bench: wrote the streams section of {os.path.relpath(RESULTS, ROOT)}")
    elif not args.quick:
        write_results(lines, about, " ".join(["python3 tests/bench/run.py", *argv]))
        print(f"bench: wrote {os.path.relpath(RESULTS, ROOT)}")
    if any(name in record.failures for name in ("mcplite", "floor", "mcplite-eras", SCALED_MCPLITE, HOSTS_2, HOSTS_4, ASYNC, GATEWAY,
                                                f"{STREAMS} mcplite")):
        print("bench: FAILED: a workload of mcplite or of the floor failed")
        return 1
    if args.strict and missed:
        print(f"bench: FAILED: --strict and {len(missed)} target(s) missed")
        return 1
    print(f"bench: {len(missed)} target(s) missed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
