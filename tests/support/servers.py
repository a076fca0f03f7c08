"""Real servers for the deployment tests: gunicorn, mcplite's built-in server, nginx and redis-server as
subprocesses on 127.0.0.1, each stopped (SIGTERM, then SIGKILL) within WAIT.

A binary that is missing skips its test with the reason on a developer's machine, and fails it in CI
(``CI`` set): ``.ci/run`` installs every one of them.
"""

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence

import pytest

from . import ROOT
from .wait import WAIT, wait_until


def require_binary(name: str) -> str:
    """The path of ``name`` (searched in PATH and the sbin folders); skip, or fail in CI, when absent."""
    found = shutil.which(name) or shutil.which(name, path="/usr/sbin:/usr/local/sbin:/sbin")
    if found is None:
        reason = f"{name} is not installed (apt-get install {name}; .ci/run installs it)"
        if os.environ.get("CI"):
            pytest.fail(f"CI must have it: {reason}")
        pytest.skip(reason)
    return found


def require_module(name: str) -> None:
    """Skip (fail in CI) when the Python module ``name`` is not installed."""
    try:
        __import__(name)
    except ImportError:
        reason = f"the Python package {name} is not installed (.ci/run installs it)"
        if os.environ.get("CI"):
            pytest.fail(f"CI must have it: {reason}")
        pytest.skip(reason)


def free_port() -> int:
    """A port free on 127.0.0.1 right now (for servers that must be told a port: nginx, redis-server)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def listening_socket() -> socket.socket:
    """A socket listening on a free port of 127.0.0.1, to hand to a server by file descriptor (no race)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)
    return listener


#: What a server the tests spawn needs from the test run's environment that mcplite does not pass a server by
#: default (`stdio.INHERITED_ENV_VARS`): this checkout on PYTHONPATH, and coverage's settings in a measured run
#: (tests/conftest.py). Tests pass them explicitly, as a user passes a server what it needs with ``env=``/``-e``.
HARNESS_ENV = ("PYTHONPATH", "COVERAGE_PROCESS_START", "COVERAGE_FILE")


def harness_env() -> Dict[str, str]:
    """The `HARNESS_ENV` variables this test run has set."""
    return {name: os.environ[name] for name in HARNESS_ENV if name in os.environ}


def harness_env_options(argv: Sequence[str]) -> List[str]:
    """``-e NAME=VALUE`` options passing `harness_env` to the server of a ``mcplite`` command line ``argv``,
    when it names a server command (after ``--``, or with ``--config``) rather than a URL."""
    words = list(argv)
    if "--" in words:
        after = words[words.index("--") + 1:]
        if not after or after[0].startswith(("http://", "https://")):
            return []
    elif "--config" not in words:
        return []
    return [option for name, value in harness_env().items() for option in ("-e", f"{name}={value}")]


def python_env(**extra: str) -> Dict[str, str]:
    """The environment of a Python subprocess that imports mcplite and the examples from this checkout."""
    return {**os.environ, "PYTHONPATH": str(ROOT), **extra}


class Running:
    """A server subprocess, its output in a log file (shown when it fails to start)."""

    def __init__(self, name: str, args: Sequence[str], log: Path, env: Optional[Dict[str, str]] = None,
                 pass_fds: Sequence[int] = (), cwd: Optional[str] = None) -> None:
        self.name = name
        self.log = log
        with open(log, "wb") as out:
            self.process = subprocess.Popen(list(args), env=env, stdout=out, stderr=subprocess.STDOUT,
                                            pass_fds=list(pass_fds), cwd=cwd or str(ROOT))

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_for(self, ready: Callable[[], bool], failure: str) -> None:
        """Wait until ``ready()`` (bounded: ``failure`` is the message when it never is), failing at once if the
        process exits; a process that did not become ready is stopped, so a failed start leaves nothing behind."""
        def started() -> bool:
            if self.process.poll() is not None:
                raise AssertionError(f"{self.name} exited with {self.process.returncode}:\n{self.output()}")
            return ready()

        try:
            wait_until(started, 3 * WAIT, failure)
        except BaseException:
            self.stop()
            raise

    def wait_for_port(self, port: int) -> None:
        """`wait_for` ``port`` to accept connections."""
        def accepting() -> bool:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=WAIT).close()
                return True
            except OSError:
                return False

        self.wait_for(accepting, f"{self.name} did not listen on {port}")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(WAIT)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(WAIT)


def http_answers(port: int, path: str = "/healthz") -> bool:
    """Whether an HTTP server on ``port`` answers a GET with 200 (the example app's readiness route)."""
    from http.client import HTTPConnection

    connection = HTTPConnection("127.0.0.1", port, timeout=WAIT)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        response.read()
        return response.status == 200
    except OSError:
        return False
    finally:
        connection.close()


def gunicorn(tmp: Path, app: str, args: Sequence[str], env: Optional[Dict[str, str]] = None,
             name: str = "gunicorn") -> "Served":
    """``gunicorn ARGS APP`` on a fresh port of 127.0.0.1 (its socket passed by descriptor), once it answers."""
    require_module("gunicorn")
    from gunicorn.config import KNOWN_SETTINGS

    if any(setting.name == "control_socket_disable" for setting in KNOWN_SETTINGS):
        args = ["--no-control-socket", *args]  # gunicorn 25+: else every instance shares ~/.gunicorn/gunicorn.ctl
    listener = listening_socket()
    port = listener.getsockname()[1]
    try:
        running = Running(name, [sys.executable, "-m", "gunicorn", "--bind", f"fd://{listener.fileno()}",
                                 "--log-level", "warning", "--graceful-timeout", "2", *args, app],
                          tmp / f"{name}.log", env=env or python_env(), pass_fds=[listener.fileno()])
    finally:
        listener.close()  # the server holds its own copy
    running.wait_for(lambda: http_answers(port), f"{name} did not answer")
    return Served(running, port)


class Served:
    """A running HTTP server and its port; ``url`` is its MCP endpoint."""

    def __init__(self, running: Running, port: int) -> None:
        self.running = running
        self.port = port
        self.url = f"http://127.0.0.1:{port}/mcp"
        self.host = "127.0.0.1"

    def stop(self) -> None:
        self.running.stop()

    def output(self) -> str:
        return self.running.output()


def waitress(tmp: Path, app: str, args: Sequence[str], env: Optional[Dict[str, str]] = None) -> "Served":
    """``waitress-serve ARGS APP`` on a fresh port of 127.0.0.1, once it answers."""
    require_module("waitress")
    port = free_port()
    running = Running("waitress", [sys.executable, "-m", "waitress", f"--listen=127.0.0.1:{port}", *args, app],
                      tmp / "waitress.log", env=env or python_env())
    running.wait_for_port(port)
    return Served(running, port)


def builtin_server(tmp: Path, name: str, env: Dict[str, str]) -> Served:
    """``python3 -m examples.deploy.app --port P``: the deployment example on mcplite's own threaded server."""
    port = free_port()
    running = Running(name, [sys.executable, "-m", "examples.deploy.app", "--port", str(port)], tmp / f"{name}.log",
                      env=python_env(**env))
    running.wait_for_port(port)
    return Served(running, port)


def nginx(tmp: Path, config: str) -> Running:
    """nginx in the foreground with ``config`` (a whole nginx.conf), its files under ``tmp/nginx``."""
    binary = require_binary("nginx")
    prefix = tmp / "nginx"
    prefix.mkdir(exist_ok=True)
    # Temporary files and logs under the test's own folder, not the system's.
    local = "\n".join(f"    {directive} {prefix / folder};" for directive, folder in (
        ("client_body_temp_path", "body"), ("proxy_temp_path", "proxy"), ("fastcgi_temp_path", "fastcgi"),
        ("uwsgi_temp_path", "uwsgi"), ("scgi_temp_path", "scgi")))
    assert "\nhttp {\n" in config
    config = config.replace("\nhttp {\n", f"\nhttp {{\n{local}\n    access_log {prefix / 'access.log'};\n", 1)
    conf = prefix / "nginx.conf"
    conf.write_text(config)
    return Running("nginx", [binary, "-p", str(prefix), "-c", str(conf), "-g",
                             f"daemon off; pid {prefix / 'nginx.pid'}; error_log stderr warn;"],
                   tmp / "nginx.log")


def redis_server(tmp: Path) -> "tuple[Running, int]":
    """redis-server on a fresh port, no persistence; returns it and its port once it accepts connections."""
    binary = require_binary("redis-server")
    port = free_port()
    running = Running("redis-server", [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                                       "--appendonly", "no", "--dir", str(tmp)], tmp / "redis.log")
    running.wait_for_port(port)
    return running, port


def pid_running(pid: int) -> bool:
    """True while process ``pid`` runs (Linux: from /proc): a zombie, an orphan its new parent has not reaped
    yet, does not count."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rpartition(b")")[2].split()[0] != b"Z"  # the state, after "(comm)"
    except (FileNotFoundError, ProcessLookupError):  # gone; or reaped between the open and the read (ESRCH)
        return False


def stop_all(servers: List[Running]) -> None:
    for server in reversed(servers):
        server.stop()


def elapsed(since: float) -> float:
    return time.monotonic() - since
