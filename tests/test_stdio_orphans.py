"""A stdio server whose client dies without closing it (killed, crashed) must not outlive it.

The client never gets to call close(): the server learns of the death only from its stdin, whose write end
the dead client held, reaching EOF. These tests kill a real client process with SIGKILL and watch the
server, a process of its own session that neither the test nor the dead client can wait() for.
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support import ROOT, WAIT
from support.servers import pid_running

FIXTURE = str(Path(__file__).resolve().parent / "fixtures" / "stdio_server.py")

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc") or os.name != "posix",
                                reason="kills with POSIX signals and reads process states from /proc")

#: A client that connects, prints its server's pid, then waits to be killed (at most WAIT seconds).
CLIENT = """
import sys, time
from mcplite import Client
client = Client.stdio(sys.argv[1:], timeout={wait}).connect()
print(client.call_tool("pid")["structuredContent"]["result"], flush=True)
time.sleep({wait})
"""


def server_of_a_killed_client(server_argv: list) -> tuple:
    """Start a client process on ``server_argv``, kill it once it is connected: (the server's pid, when it died)."""
    client = subprocess.Popen([sys.executable, "-c", CLIENT.format(wait=WAIT), *server_argv],
                              stdout=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert client.stdout is not None
        line = client.stdout.readline()  # the client prints it once connected; WAIT bounds the client itself
        server_pid = int(line)
        assert pid_running(server_pid)
    finally:
        client.send_signal(signal.SIGKILL)
        client.wait(WAIT)
        if client.stdout is not None:
            client.stdout.close()
    return server_pid, time.monotonic()


def wait_gone(pid: int, timeout: float) -> float:
    """Seconds until ``pid`` stops running, or fail after ``timeout`` (after killing it, to leave nothing)."""
    started = time.monotonic()
    while pid_running(pid):
        if time.monotonic() - started > timeout:
            os.kill(pid, signal.SIGKILL)
            pytest.fail(f"server {pid} outlived its killed client by {timeout} s")
        time.sleep(0.01)
    return time.monotonic() - started


def test_a_server_whose_client_is_killed_exits_at_stdin_eof() -> None:
    server_pid, _ = server_of_a_killed_client([sys.executable, FIXTURE])
    assert wait_gone(server_pid, WAIT) < 2.0  # EOF arrives at once; the server drains and exits


def test_a_server_behind_a_wrapper_whose_client_is_killed_exits_too() -> None:
    # The wrapper (sh) passes its stdin to the server, so the server sees the same EOF.
    command = ["sh", "-c", f"{subprocess.list2cmdline([sys.executable, FIXTURE])}; true"]
    server_pid, _ = server_of_a_killed_client(command)
    assert wait_gone(server_pid, WAIT) < 2.0
