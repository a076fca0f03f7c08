"""Interoperability with the official MCP SDKs: their clients against our server, our client against theirs.

    python3 tests/interop/run.py          (from anywhere; CI runs it from the repository root)
    python3 tests/interop/run.py --install-python-sdk
                                          only install the Python SDK's venv (below) and exit: .ci/run does it
                                          before pytest, whose tests/test_deploy_sdk.py drives deployments with it
    python3 tests/interop/run.py tasks    (only the tasks legs of task_legs.py, and the peers they need)
    python3 tests/interop/run.py gateway  (only the gateway legs of gateway_legs.py, and the peers they need)

Installs the official Python SDK (PyPI ``mcp``, in a venv) and TypeScript SDK (npm
``@modelcontextprotocol/sdk`` 1.x, and the 2.x ``@modelcontextprotocol/client`` and ``@modelcontextprotocol/server``)
under ``.peers/`` (git-ignored) unless the pinned versions are already there, then runs these pairs over stdio,
Streamable HTTP and the legacy HTTP+SSE transport (`TRANSPORTS`):

    python-sdk (legacy) client        -> mcplite server (examples/interop_server.py), the initialize handshake
    python-sdk (auto) client          -> mcplite server, the client's default: server/discover, then 2026-07-28
                                         if the server offers it (else it falls back to the handshake)
    typescript-sdk client             -> mcplite server (1.x: the handshake only)
    typescript-sdk-v2 (legacy) client -> mcplite server (ts2_client.mjs; 2.x's default: the handshake)
    typescript-sdk-v2 (auto) client   -> mcplite server, as python-sdk (auto)
    mcplite (auto) client       -> python-sdk server (py_server.py; both eras): mcplite's default, which
                                   must end on 2026-07-28 here (sampling, elicitation, roots as input_required)
    mcplite (2025-11-25) client -> python-sdk server, pinned to the handshake (server-to-client requests)
    mcplite (auto) client       -> typescript-sdk server (ts_server.mjs; 1.x: the handshake only, so the
                                   probe must fall back to it)
    mcplite (2025-11-25) client -> typescript-sdk server
    mcplite (auto) client       -> typescript-sdk-v2 server (ts2_server.mjs; both eras), as python-sdk's;
                                   stdio and Streamable HTTP (the 2.x server has no HTTP+SSE transport)
    mcplite (2025-11-25) client -> typescript-sdk-v2 server
    mcplite client              -> the reference server @modelcontextprotocol/server-everything (everything.py,
                                   with its own checks: everything_client.py, everything.json)
    MCP Inspector CLI           -> mcplite server (inspector.py: @modelcontextprotocol/inspector --cli, one
                                   invocation per check)
    typescript-sdk (tasks) client -> mcplite server (examples/everything_server.py; task_legs.py,
                                   ts_tasks_client.mjs: the 1.x SDK's experimental tasks API, 2025-11-25 tasks)
    mcplite CLI                 -> server-everything: ``python -m mcplite call simulate-research-query`` runs
                                   its task to the report (task_legs.py)
    mcplite (auto) client       -> the reference time server, PyPI ``mcp-server-time`` in the Python SDK's venv,
                                   over stdio (server_time.py, time_client.py: its two tools' answers)
    python-sdk (auto, legacy), typescript-sdk-v2 (auto, legacy) clients
                                -> ``python -m mcplite gateway`` over stdio, ONE gateway in front of the
                                   python-sdk and typescript-sdk-v2 servers, server-everything, mcp-server-time
                                   and mcplite's example servers pinned to each era (gateway_legs.py, their
                                   checks in gateway_plan.json, made by gw_py_client.py and gw_ts_client.mjs)

Every server implements the same contract and every client makes the same checks (contract.json; the
checks are in checks.py and ts_checks.mjs): tools with structured output, progress, logging, sampling
and elicitation callbacks, roots (every client declares one fixed root, and the server's ``list_roots`` tool
must return exactly its URI), resources and templates, prompts. One line per check, then
``interop: N passed, M failed, K skipped``; the exit status is 1 if anything failed.

Protocol revisions. The "(auto)" legs against a server that speaks both eras are meant to speak 2026-07-28, the
modern era (`Side.modern`): the SDK clients against mcplite's server, mcplite's client against the servers of
`MODERN_SERVERS` and the time server. There the same checks run with what that revision changes (no
``logging/setLevel``: each request asks for its log messages in ``_meta``; sampling, elicitation and roots arrive as
input-required results, which the client fulfils with the same callbacks and retries). Every check line names the
version the client actually negotiated, so a silent fall-back to the handshake shows. With `EXPECT_MODERN` on, an
"(auto)" leg that did not negotiate 2026-07-28 fails its ``initialize`` check; off, the fall-back is printed as a
note and the leg runs the handshake checks. The legacy HTTP+SSE transport has no 2026-07-28 form: the modern legs
skip it (one SKIP line each). Every contract check runs on 2026-07-28 too; what that revision removes (``ping``,
``logging/setLevel``, ``resources/subscribe``, ``notifications/roots/list_changed``, server-to-client requests, log
messages for a request that did not ask for them) is not in the contract, which the modern legs meet without it.
mcplite's "(2025-11-25)" legs pin the handshake against the same servers, which then ask for sampling, elicitation
and roots with server-to-client requests.

Environment:
    INTEROP_PY_SDK_VERSION  the ``mcp`` version to install (default: PY_SDK_VERSION below).
    INTEROP_TS_SDK_VERSION  the ``@modelcontextprotocol/sdk`` version (default: TS_SDK_VERSION below).
    INTEROP_TS2_SDK_VERSION the ``@modelcontextprotocol/client`` and ``@modelcontextprotocol/server`` version
                            (default: TS2_SDK_VERSION below).
    INTEROP_EXPECT_MODERN   1 or 0: overrides `EXPECT_MODERN` below for one run (e.g. to try a branch).
    INTEROP_EVERYTHING_VERSION  the ``@modelcontextprotocol/server-everything`` version (default: in everything.py).
    INTEROP_TIME_VERSION    the ``mcp-server-time`` version (default: in server_time.py).
    INTEROP_INSPECTOR_VERSION   the ``@modelcontextprotocol/inspector`` version (default: in inspector.py).
    INTEROP_PYTHON          the Python (>= 3.10) for the Python SDK's venv (default: this one if new enough,
                            else the first of python3.11, 3.12, 3.13, 3.10 on PATH that runs).
    INTEROP_PEERS_DIR       where to install the peers (default: .peers in the repository).
    INTEROP_TIMEOUT         seconds one client run may take (default 120).
"""

import glob
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from typing import IO, Callable, Dict, Iterator, List, NamedTuple, Optional, Tuple

#: The peer versions this suite was last run and passed with.
PY_SDK_VERSION = "2.3.0"
TS_SDK_VERSION = "1.32.2"
#: The TypeScript SDK's 2.x client and server (each brings @modelcontextprotocol/core at the same version).
TS2_SDK_VERSION = "2.4.0"

#: Whether the legs meant to speak 2026-07-28 (the "(auto)" clients) must negotiate it: True since mcplite's
#: server speaks that revision (issue 12), so a silent fall-back to the handshake fails their initialize check.
#: INTEROP_EXPECT_MODERN=0 turns it off for one run (a server restricted to the handshake era, say).
EXPECT_MODERN = True

#: The transports every pair runs over, and the endpoint each HTTP one has on every server here.
TRANSPORTS = ("stdio", "streamable-http", "sse")
ENDPOINTS = {"streamable-http": "/mcp", "sse": "/sse"}

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PEERS = os.environ.get("INTEROP_PEERS_DIR") or os.path.join(ROOT, ".peers")
PY_PEER = os.path.join(PEERS, "py")
TS_PEER = os.path.join(PEERS, "ts")
TS2_PEER = os.path.join(PEERS, "ts2")
PY_PEER_PYTHON = os.path.join(PY_PEER, "bin", "python")
CLIENT_TIMEOUT = float(os.environ.get("INTEROP_TIMEOUT", "120"))
SERVER_START_TIMEOUT = 30.0
INSTALL_TIMEOUT = 600.0
with open(os.path.join(HERE, "contract.json"), encoding="utf-8") as contract:
    _CONTRACT = json.load(contract)
CHECKS: List[str] = _CONTRACT["checks"]
#: The modern era's revision, the one the "(auto)" legs are meant to negotiate.
MODERN_VERSION: str = _CONTRACT["modernProtocolVersion"]


class Tally:
    """Counts and prints check outcomes, one line each."""

    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0
        self.skipped = 0

    def record(self, ok: bool, name: str, detail: str = "") -> None:
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        print(f"{'PASS' if ok else 'FAIL'} {name}{': ' + detail if detail else ''}", flush=True)

    def skip(self, name: str, reason: str) -> None:
        """A check (or a whole pair) that cannot run by design, with why."""
        self.skipped += 1
        print(f"SKIP {name}: {reason}", flush=True)


# ---- installing the peers -------------------------------------------------------------------------------
def run_logged(argv: List[str], log_path: str, timeout: float) -> Optional[str]:
    """Run an install step with its output in ``log_path``; None on success, else why it failed."""
    with open(log_path, "ab") as log:
        log.write(f"$ {' '.join(argv)}\n".encode())
        log.flush()
        try:
            code = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                  timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            return f"{argv[0]} {argv[1]} took longer than {timeout:.0f} s (see {log_path})"
        except OSError as exc:
            return f"cannot run {argv[0]}: {exc}"
    return None if code == 0 else f"{' '.join(argv[:3])}... exited with {code} (see {log_path})"


def peer_python() -> Optional[str]:
    """A Python >= 3.10 for the Python SDK (which needs it): this one when new enough, else the first
    that runs of python3.11 (the one the pins were tested with), 3.12, 3.13, 3.10, python3."""
    chosen = os.environ.get("INTEROP_PYTHON")
    if chosen:
        return chosen
    if sys.version_info >= (3, 10):
        return sys.executable
    for name in ("python3.11", "python3.12", "python3.13", "python3.10", "python3"):
        found = shutil.which(name)
        if found is None:
            continue
        # A version manager's shim may be on PATH for a version it does not activate: ask the Python itself.
        try:
            probe = subprocess.run([found, "-c", "import sys; sys.exit(sys.version_info < (3, 10))"],
                                   stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if probe.returncode == 0:
            return found
    return None


def installed_py_sdk() -> Optional[str]:
    """The version of ``mcp`` in the peer venv, read from its dist-info (no process needed)."""
    if not os.path.exists(PY_PEER_PYTHON):
        return None
    for dist_info in glob.glob(os.path.join(PY_PEER, "lib", "python3*", "site-packages", "mcp-*.dist-info")):
        return os.path.basename(dist_info)[len("mcp-"):-len(".dist-info")]
    return None


def install_py_sdk(version: str) -> Tuple[Optional[str], str]:
    """Make the venv hold ``mcp==version``. Returns (error or None, what was done)."""
    if installed_py_sdk() == version:
        return None, "already installed"
    log_path = os.path.join(PEERS, "py-install.log")
    if not os.path.exists(PY_PEER_PYTHON):
        python = peer_python()
        if python is None:
            return "no Python >= 3.10 found for the Python SDK (set INTEROP_PYTHON)", ""
        error = run_logged([python, "-m", "venv", "--clear", PY_PEER], log_path, INSTALL_TIMEOUT)
        if error:
            return error, ""
    error = run_logged([PY_PEER_PYTHON, "-m", "pip", "install", "--disable-pip-version-check", "-q",
                        f"mcp=={version}"], log_path, INSTALL_TIMEOUT)
    return error, "installed"


def installed_npm_version(folder: str, package: str) -> Optional[str]:
    """The version of npm ``package`` installed under ``folder`` (from its package.json), or None."""
    try:
        with open(os.path.join(folder, "node_modules", *package.split("/"), "package.json"),
                  encoding="utf-8") as file:
            return json.load(file).get("version")
    except (OSError, ValueError):
        return None


def install_npm(package: str, version: str, folder: str, log_name: str,
                also: Tuple[str, ...] = ()) -> Tuple[Optional[str], str]:
    """Make ``folder`` (under .peers) hold ``package@version`` and each package of ``also`` at the same version,
    unless it already does; npm's output goes to ``.peers/LOG_NAME``. Returns (error or None, what was done)."""
    packages = (package, *also)
    if all(installed_npm_version(folder, name) == version for name in packages):
        return None, "already installed"
    npm = shutil.which("npm")
    if npm is None:
        return "npm is not on PATH", ""
    error = run_logged([npm, "install", "--prefix", folder, "--no-audit", "--no-fund", "--save-exact",
                        *(f"{name}@{version}" for name in packages)], os.path.join(PEERS, log_name), INSTALL_TIMEOUT)
    return error, "installed"


def installed_ts_sdk() -> Optional[str]:
    """The version of ``@modelcontextprotocol/sdk`` in .peers/ts."""
    return installed_npm_version(TS_PEER, "@modelcontextprotocol/sdk")


def install_ts_sdk(version: str) -> Tuple[Optional[str], str]:
    """Make .peers/ts hold ``@modelcontextprotocol/sdk@version``. Returns (error or None, what was done)."""
    return install_npm("@modelcontextprotocol/sdk", version, TS_PEER, "ts-install.log")


def install_ts2_sdk(version: str) -> Tuple[Optional[str], str]:
    """Make .peers/ts2 hold ``@modelcontextprotocol/client@version`` and ``@modelcontextprotocol/server@version``
    (one folder, sharing the ``@modelcontextprotocol/core`` both pin; the 1.x SDK stays in .peers/ts).
    Returns (error or None, what was done)."""
    return install_npm("@modelcontextprotocol/client", version, TS2_PEER, "ts2-install.log",
                       also=("@modelcontextprotocol/server",))


# ---- running one client against one server ----------------------------------------------------------
class Side(NamedTuple):
    """One implementation: how to start its client and its server.

    ``client`` is the argv before the transport arguments (``stdio -- SERVER...`` or ``TRANSPORT URL``);
    ``server`` serves stdio; ``http_server(transport, port)`` serves that HTTP transport on 127.0.0.1.
    ``modern``: a client leg meant to negotiate 2026-07-28 (see `EXPECT_MODERN`).
    """

    name: str
    client: List[str]
    server: List[str]
    http_server: Callable[[str, int], List[str]]
    modern: bool = False


def sides() -> Dict[str, Side]:
    node = shutil.which("node") or "node"
    # As a module from the repository root (every process's cwd), so that mcplite is importable even when
    # a client gives the server a minimal environment without PYTHONPATH (the Python SDK's does).
    ours = [sys.executable, "-m", "examples.interop_server"]
    py_server = [PY_PEER_PYTHON, os.path.join(HERE, "py_server.py")]
    ts_server = [node, os.path.join(HERE, "ts_server.mjs")]
    ts2_server = [node, os.path.join(HERE, "ts2_server.mjs")]
    return {
        # One mcplite server serves both HTTP transports.
        "mcplite": Side("mcplite", [sys.executable, os.path.join(HERE, "mcplite_client.py")], ours,
                        lambda transport, port: [*ours, f"127.0.0.1:{port}"]),
        "python-sdk": Side("python-sdk", [PY_PEER_PYTHON, os.path.join(HERE, "py_client.py")], py_server,
                           lambda transport, port: [*py_server, transport, str(port)]),
        "typescript-sdk": Side("typescript-sdk", [node, os.path.join(HERE, "ts_client.mjs")], ts_server,
                               lambda transport, port: [*ts_server, transport, str(port)]),
        # The 2.x SDK's client legs are built by `peer_clients` (ts2_client.mjs, a mode each); this is its server.
        "typescript-sdk-v2": Side("typescript-sdk-v2", [], ts2_server,
                                  lambda transport, port: [*ts2_server, transport, str(port)]),
    }


#: Transports on which a client can speak 2026-07-28 (the HTTP+SSE transport is handshake-only).
MODERN_TRANSPORTS = ("stdio", "streamable-http")


def peer_clients(peer: str, every: Dict[str, Side], expect_modern: bool) -> List[Side]:
    """The official ``peer`` SDK's client legs against our server: one per negotiation mode it has.

    The "(legacy)" leg pins the handshake; the "(auto)" leg is the client's probe-then-fall-back mode, meant to
    end on 2026-07-28, and told so (``--expect``) when `EXPECT_MODERN` holds.
    """
    expect = ["--expect", MODERN_VERSION] if expect_modern else []
    if peer == "python-sdk":
        side = every["python-sdk"]
        return [side._replace(name="python-sdk (legacy)", client=[*side.client, "--mode", "legacy"]),
                side._replace(name="python-sdk (auto)", client=[*side.client, "--mode", "auto", *expect], modern=True)]
    if peer == "typescript-sdk-v2":
        ts2 = [shutil.which("node") or "node", os.path.join(HERE, "ts2_client.mjs")]
        side = Side("typescript-sdk-v2", ts2, [], lambda transport, port: [])  # a client only: no server here
        return [side._replace(name="typescript-sdk-v2 (legacy)", client=[*ts2, "--mode", "legacy"]),
                side._replace(name="typescript-sdk-v2 (auto)", client=[*ts2, "--mode", "auto", *expect], modern=True)]
    return [every[peer]]


#: The servers of the peers that speak 2026-07-28 (both eras): mcplite's "(auto)" leg must end on it there. The
#: 1.x TypeScript SDK's server speaks only the handshake: the "(auto)" leg must fall back to it.
MODERN_SERVERS = ("python-sdk", "typescript-sdk-v2")
#: The revision mcplite's "(2025-11-25)" legs pin: the contract's handshake one.
HANDSHAKE_VERSION: str = _CONTRACT["protocolVersion"]
#: Servers without the HTTP+SSE transport (the 2.x TypeScript SDK has none): their "sse" pairs are skipped.
NO_SSE_SERVERS = ("typescript-sdk-v2",)


def our_clients(server: str, ours: Side, expect_modern: bool) -> List[Side]:
    """mcplite's client legs against ``server``'s peer server: "(auto)", mcplite's default (probe, then
    2026-07-28 or the handshake), and "(2025-11-25)", pinned to the handshake.

    Against a server of `MODERN_SERVERS` the auto leg is a modern one (`Side.modern`), told to end on 2026-07-28
    when `EXPECT_MODERN` holds; against a handshake-only server it must end on the handshake's version.
    """
    if server in MODERN_SERVERS:
        expect = ["--expect", MODERN_VERSION] if expect_modern else []
    else:
        expect = ["--expect", HANDSHAKE_VERSION]
    return [ours._replace(name="mcplite (auto)", client=[*ours.client, "--protocol", "auto", *expect],
                          modern=server in MODERN_SERVERS),
            ours._replace(name=f"mcplite ({HANDSHAKE_VERSION})",
                          client=[*ours.client, "--protocol", HANDSHAKE_VERSION, "--expect", HANDSHAKE_VERSION])]


def expect_modern() -> bool:
    """`EXPECT_MODERN`, unless INTEROP_EXPECT_MODERN says otherwise for this run."""
    chosen = os.environ.get("INTEROP_EXPECT_MODERN", "").strip().lower()
    return EXPECT_MODERN if not chosen else chosen not in ("0", "false", "no", "off")


def child_env() -> Dict[str, str]:
    """mcplite importable from the repository; the TypeScript scripts told where the SDK is."""
    env = dict(os.environ, INTEROP_TS_PEER=TS_PEER, INTEROP_TS2_PEER=TS2_PEER, PYTHONUNBUFFERED="1")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (ROOT, env.get("PYTHONPATH")) if p)
    return env


def stop(process: "subprocess.Popen[bytes]") -> None:
    """Stop a process started in a group of its own, with everything it started there."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=5)
            return
        except subprocess.TimeoutExpired:
            continue


class ServerDidNotStart(Exception):
    pass


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Target(NamedTuple):
    """How a client reaches a server: its arguments after the transport name, and the server's output."""

    args: List[str]
    server_output: Callable[[], str]  # "" when the client starts the server: its stderr is the client's


@contextmanager
def serving(server: Side, transport: str) -> Iterator[Target]:
    """Make ``server`` reachable over ``transport`` for as long as the block runs.

    For stdio the client starts the server, from the command line given; for HTTP the server is started
    here and the client is given its URL. Raises `ServerDidNotStart` when it does not listen in time.
    """
    if transport == "stdio":
        yield Target(["--", *server.server], str)
        return
    port = free_port()
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(server.http_server(transport, port), cwd=ROOT, env=child_env(),
                                   stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
        try:
            wait_until_listening(process, port, log)
            yield Target([f"http://127.0.0.1:{port}{ENDPOINTS[transport]}"], lambda: read_all(log))
        finally:
            stop(process)


def read_all(file: IO[bytes]) -> str:
    file.seek(0)
    return file.read().decode("utf-8", "replace")


def wait_until_listening(process: "subprocess.Popen[bytes]", port: int, log: IO[bytes]) -> None:
    """Return once ``port`` accepts connections; raise `ServerDidNotStart` if the process dies or time runs out."""
    deadline = time.monotonic() + SERVER_START_TIMEOUT
    while time.monotonic() < deadline and process.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)  # nothing tells us when a server of another SDK is listening but trying
    output = " ".join(read_all(log).split()[-60:])
    state = "did not listen in time" if process.poll() is None else f"exited with {process.returncode}"
    raise ServerDidNotStart(f"the server {state}" + (f": {output}" if output else ""))


def run_client(argv: List[str], env: Optional[Dict[str, str]] = None) -> Tuple[Optional[int], str, str]:
    """Run a client to the end or the timeout; returns (exit code or None on timeout, stdout, stderr).

    ``env`` is the client's environment (default: `child_env`).

    The client runs in a process group of its own, which a timeout kills: that takes the server with it
    unless the client put the server in a group of its own, in which case the server sees its stdin
    close. Output goes to files, not pipes, so a server that outlives its client cannot keep us waiting
    for the end of a pipe it inherited.
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen(argv, cwd=ROOT, env=child_env() if env is None else env,
                                   stdin=subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=True)
        try:
            code: Optional[int] = process.wait(timeout=CLIENT_TIMEOUT)
        except subprocess.TimeoutExpired:
            stop(process)
            code = None
        return code, read_all(out), read_all(err)


def run_pair(tally: Tally, transport: str, client: Side, server: Side, checks: List[str] = CHECKS) -> None:
    """Run ``client`` against ``server`` and record one outcome per check (by default, the contract's)."""
    label = f"[{transport}] {client.name} client -> {server.name} server"
    started = time.monotonic()
    try:
        with serving(server, transport) as target:
            code, out, err = run_client([*client.client, transport, *target.args])
            server_output = target.server_output()
    except ServerDidNotStart as exc:
        for name in checks:
            tally.record(False, f"{label}: {name}", str(exc)[:500])
        return
    outcomes: Dict[str, Tuple[bool, str]] = {}
    negotiated = None
    for line in out.splitlines():
        verdict, _, rest = line.partition(" ")
        name, _, detail = rest.partition(": ")
        if verdict in ("PASS", "FAIL") and name in checks:
            outcomes[name] = (verdict == "PASS", detail)
        elif verdict == "NEGOTIATED":
            negotiated = rest.strip()
    if negotiated is not None:
        # On every line: which revision the pair actually spoke, so that a fall-back to the handshake shows.
        label = f"[{transport}] {client.name} client -> {server.name} server, {negotiated}"
        if client.modern and negotiated != MODERN_VERSION:
            print(f"note: {label}: fell back to the handshake, not {MODERN_VERSION} "
                  f"({'a failure: EXPECT_MODERN is on' if expect_modern() else 'EXPECT_MODERN is off'})", flush=True)
    ended = "timed out" if code is None else f"exited with {code}"
    for name in checks:
        ok, detail = outcomes.get(name, (False, f"no result (the client {ended})"))
        tally.record(ok, f"{label}: {name}", detail)
    all_passed = len(outcomes) == len(checks) and all(ok for ok, _ in outcomes.values())
    if all_passed and code != 0:
        tally.record(False, f"{label}: client exit status", f"every check passed but the client {ended}")
    if not all_passed or code != 0:
        # For whoever reads the log: the client's stderr (over stdio, the server's too), and the HTTP server's.
        for source, text in (("client", err), ("server", server_output)):
            print("".join(f"    {source} | {line}\n" for line in text.strip().splitlines()[-40:]), end="", flush=True)
    print(f"     {label}: {time.monotonic() - started:.1f} s", flush=True)


def main(argv: List[str]) -> int:
    """Every pair, or with ``tasks`` only the tasks legs (task_legs.py) and the peers they need."""
    if argv not in ([], ["tasks"], ["gateway"]):
        print(f"usage: {sys.argv[0]} [tasks | gateway | --install-python-sdk]", file=sys.stderr)
        return 2
    only_tasks = argv == ["tasks"]
    only_gateway = argv == ["gateway"]
    started = time.monotonic()
    tally = Tally()
    os.makedirs(PEERS, exist_ok=True)
    py_version = os.environ.get("INTEROP_PY_SDK_VERSION") or PY_SDK_VERSION
    ts_version = os.environ.get("INTEROP_TS_SDK_VERSION") or TS_SDK_VERSION
    ts2_version = os.environ.get("INTEROP_TS2_SDK_VERSION") or TS2_SDK_VERSION
    installs = (("python-sdk", f"mcp=={py_version}", install_py_sdk, py_version),
                ("typescript-sdk", f"@modelcontextprotocol/sdk@{ts_version}", install_ts_sdk, ts_version),
                ("typescript-sdk-v2", f"@modelcontextprotocol/client+server@{ts2_version}", install_ts2_sdk,
                 ts2_version))
    peers = []
    for name, package, install, version in installs:
        if only_tasks and name != "typescript-sdk":
            continue
        error, done = install(version)
        tally.record(error is None, f"install {name} {package}", error or done)
        if error is None:
            peers.append(name)

    import gateway_legs  # (imported here, as everything below)
    import task_legs
    if only_tasks:
        task_legs.run(tally, peers)
        return finish(tally, started)
    if only_gateway:
        gateway_legs.install(tally, py_version)
        gateway_legs.run(tally, peers)
        return finish(tally, started)
    every = sides()
    ours = every["mcplite"]
    modern = expect_modern()
    print(f"interop: EXPECT_MODERN is {'on' if modern else 'off'}: the (auto) legs "
          f"{'must negotiate' if modern else 'may fall back from'} {MODERN_VERSION}", flush=True)
    for transport in TRANSPORTS:
        for name in peers:
            for client in peer_clients(name, every, modern):
                if client.modern and transport not in MODERN_TRANSPORTS:
                    tally.skip(f"[{transport}] {client.name} client -> {ours.name} server",
                               f"{MODERN_VERSION} has no HTTP+SSE transport (the legacy leg covers it)")
                else:
                    run_pair(tally, transport, client, ours)
            for client in our_clients(name, ours, modern):  # our client against the peer's server
                server = every[name]
                if transport == "sse" and name in NO_SSE_SERVERS:
                    tally.skip(f"[{transport}] {client.name} client -> {server.name} server",
                               "the 2.x TypeScript SDK's server has no HTTP+SSE transport")
                elif client.modern and transport not in MODERN_TRANSPORTS:
                    tally.skip(f"[{transport}] {client.name} client -> {server.name} server",
                               f"{MODERN_VERSION} has no HTTP+SSE transport (the {HANDSHAKE_VERSION} leg covers it)")
                else:
                    run_pair(tally, transport, client, server)
    # Imported here: tests/bench/run.py loads this file as a module, from where everything.py is not importable.
    import everything
    everything.run(tally)
    import inspector
    inspector.run(tally)
    if "python-sdk" in peers:  # the time server runs in the Python SDK's venv
        import server_time
        server_time.run(tally, py_version)
    task_legs.run(tally, peers)
    gateway_legs.run(tally, peers)  # after everything.py and server_time.py, which install its upstreams
    return finish(tally, started)


def finish(tally: Tally, started: float) -> int:
    """Print the run's time and tally; the exit status (1 if anything failed)."""
    print(f"interop: took {time.monotonic() - started:.1f} s", flush=True)
    print(f"interop: {tally.passed} passed, {tally.failed} failed, {tally.skipped} skipped", flush=True)
    return 1 if tally.failed else 0


def install_python_sdk_only() -> int:
    """``--install-python-sdk``: make .peers hold the pinned ``mcp`` and ``mcp-server-time`` (.peers/py) and
    ``@modelcontextprotocol/server-everything`` (as `main` would), and nothing else: pytest's deployment tests use
    the SDK's client, the gateway tests the time server, and the inspector's test server-everything."""
    import server_time  # beside this file; it imports this module back, so only once main's globals exist

    os.makedirs(PEERS, exist_ok=True)
    version = os.environ.get("INTEROP_PY_SDK_VERSION") or PY_SDK_VERSION
    error, done = install_py_sdk(version)
    print(f"interop: install python-sdk mcp=={version}: {error or done}", flush=True)
    if error:
        return 1
    time_version = os.environ.get("INTEROP_TIME_VERSION") or server_time.TIME_VERSION
    error, done = server_time.install(time_version, version)
    print(f"interop: install mcp-server-time=={time_version}: {error or done}", flush=True)
    if error:
        return 1
    import everything  # beside this file, as server_time: the inspector's test drives it too

    everything_version = os.environ.get("INTEROP_EVERYTHING_VERSION") or everything.EVERYTHING_VERSION
    error, done = everything.install(everything_version)
    print(f"interop: install {everything.PACKAGE}@{everything_version}: {error or done}", flush=True)
    return 1 if error else 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--install-python-sdk"]:
        sys.exit(install_python_sdk_only())
    sys.exit(main(sys.argv[1:]))
