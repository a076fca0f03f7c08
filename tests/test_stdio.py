"""stdio against real subprocesses: `Client.stdio` and the server side in tests/fixtures/stdio_server.py.

Each test starts a real Python process (sys.executable) and checks what a user would see: answers, the
server's stderr, how fast a dead server is noticed, and that no process outlives its client.
"""

import json
import os
import queue
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, List

import pytest

from mcplite import Client, ConnectionClosed, RequestCancelled, TransportError
from mcplite.transports.stdio import StdioClientTransport

from support import WAIT, Background, run_concurrently, text_of, wait_until
from support.servers import pid_running

FIXTURES = Path(__file__).resolve().parent / "fixtures"
FIXTURE = str(FIXTURES / "stdio_server.py")
SERVER = [sys.executable, FIXTURE]
SHUTDOWN = 0.5  # each shutdown step's timeout in the tests that measure shutdown

pytestmark = pytest.mark.skipif(os.name != "posix", reason="the fixtures use POSIX signals and echo")


def pid_is_gone(pid: int) -> bool:
    """True once no process has this pid (our children are reaped by the transport's wait)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


class Lines:
    """A stderr callback that queues each line, read with a timeout."""

    def __init__(self) -> None:
        self.lines: "queue.Queue[str]" = queue.Queue()

    def __call__(self, line: str) -> None:
        self.lines.put(line)

    def until(self, wanted: str) -> List[str]:
        seen = []
        while True:
            line = self.lines.get(timeout=WAIT)
            seen.append(line)
            if line == wanted:
                return seen


def test_a_call_over_stdio_and_the_server_exits_cleanly_on_stdin_eof():
    transport = StdioClientTransport(SERVER, shutdown_timeout=WAIT)
    with Client(transport, timeout=WAIT) as client:
        assert client.server_info == {"name": "stdio-fixture", "version": "1.0"}
        assert client.call_tool("echo", {"n": 7})["structuredContent"] == {"result": 7}
        pid = client.call_tool("pid")["structuredContent"]["result"]
        assert pid == transport.process.pid
        start = time.monotonic()
    # Closing stdin was enough: the server exited by itself, with status 0, long before any SIGTERM.
    assert transport.process.returncode == 0
    assert time.monotonic() - start < WAIT / 2
    assert pid_is_gone(pid)


def test_env_is_laid_over_ours_and_cwd_is_used(tmp_path):
    with Client.stdio(SERVER, env={"MCPLITE_TEST_VALUE": "from the test"}, cwd=str(tmp_path),
                      timeout=WAIT) as client:
        assert text_of(client.call_tool("environment", {"name": "MCPLITE_TEST_VALUE"})) == "from the test"
        assert text_of(client.call_tool("environment", {"name": "PATH"})) == os.environ["PATH"]
        assert os.path.realpath(text_of(client.call_tool("cwd"))) == os.path.realpath(str(tmp_path))


def test_the_server_inherits_only_the_harmless_part_of_our_environment(monkeypatch):
    """(tests/security/test_sec_local.py holds the allow-list itself; this is the fixture's view of it.)"""
    monkeypatch.setenv("MCPLITE_INHERITED", "inherited")
    with Client.stdio(SERVER, timeout=WAIT) as client:
        assert text_of(client.call_tool("environment", {"name": "MCPLITE_INHERITED"})) == "<unset>"
    with Client.stdio(SERVER, inherit_env=True, timeout=WAIT) as client:
        assert text_of(client.call_tool("environment", {"name": "MCPLITE_INHERITED"})) == "inherited"


def test_stderr_lines_reach_the_callback():
    stderr = Lines()
    with Client.stdio(SERVER, stderr=stderr, timeout=WAIT) as client:
        assert text_of(client.call_tool("to_stderr", {"lines": 3})) == "written"
        assert stderr.until("stderr line 2")[-3:] == ["stderr line 0", "stderr line 1", "stderr line 2"]


def test_stderr_can_go_to_a_file(tmp_path):
    path = tmp_path / "server.log"
    with open(path, "w") as log_file:
        with Client.stdio(SERVER, stderr=log_file, timeout=WAIT) as client:
            client.call_tool("to_stderr", {"lines": 2})
    assert "stderr line 0\nstderr line 1\n" in path.read_text()


def test_stdout_writes_in_a_tool_go_to_stderr_and_leave_the_stream_intact():
    stderr = Lines()
    with Client.stdio(SERVER, stderr=stderr, timeout=WAIT) as client:
        assert text_of(client.call_tool("noisy")) == "quiet on stdout"
        assert set(stderr.until("child process noise")) >= {
            "print noise", "sys.stdout noise", "fd 1 noise", "child process noise"}
        assert client.call_tool("echo", {"n": 1})["structuredContent"] == {"result": 1}


def test_the_server_writes_nothing_but_protocol_messages_to_stdout():
    """Drive the fixture by hand and read its raw stdout: every line must be a JSON-RPC message."""
    process = subprocess.Popen(SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        messages = [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "noisy", "arguments": {}}},
        ]
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
        process.stdin.flush()
        lines = [process.stdout.readline(), process.stdout.readline()]  # the two answers, in this order
        rest, errors = process.communicate(timeout=WAIT)  # closes stdin: the server must now exit by itself
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(WAIT)
    answers = [json.loads(line) for line in lines]
    assert [a["id"] for a in answers] == [1, 2]
    assert answers[1]["result"]["content"] == [{"type": "text", "text": "quiet on stdout"}]
    assert rest == b""
    assert b"print noise" in errors and b"child process noise" in errors
    assert process.returncode == 0


def test_a_server_killed_mid_call_fails_the_call_promptly():
    stderr = Lines()
    client = Client.stdio(SERVER, stderr=stderr, timeout=WAIT).connect()
    try:
        pid = client.call_tool("pid")["structuredContent"]["result"]
        pending = client.start_tool_call("block")
        stderr.until("blocking")
        os.kill(pid, signal.SIGKILL)
        start = time.monotonic()
        with pytest.raises(ConnectionClosed, match="code -9"):
            pending.result(WAIT)
        assert time.monotonic() - start < 2.0
        with pytest.raises(ConnectionClosed):
            client.ping()
    finally:
        client.close()
    assert pid_is_gone(pid)


def test_cancelling_a_call_reaches_the_server_process():
    stderr = Lines()
    with Client.stdio(SERVER, stderr=stderr, timeout=WAIT) as client:
        pending = client.start_tool_call("block")
        stderr.until("blocking")
        pending.cancel()
        with pytest.raises(RequestCancelled):
            pending.result(WAIT)
        # The handler saw its cancel event and returned, freeing its worker; the server still answers.
        assert client.call_tool("echo", {"n": 3})["structuredContent"] == {"result": 3}


def test_closing_with_a_call_in_flight_leaves_no_process_behind():
    stderr = Lines()
    client = Client.stdio(SERVER, stderr=stderr, timeout=WAIT, shutdown_timeout=SHUTDOWN).connect()
    pid = client.call_tool("pid")["structuredContent"]["result"]
    pending = client.start_tool_call("block")
    stderr.until("blocking")
    start = time.monotonic()
    client.close()
    assert time.monotonic() - start < 3 * SHUTDOWN + 1.0
    with pytest.raises(ConnectionClosed):
        pending.result(WAIT)
    assert pid_is_gone(pid)


@pytest.mark.parametrize("flags, signal_number, steps", [
    (["--stubborn"], signal.SIGTERM, 1),  # ignores EOF: SIGTERM after one timeout
    (["--stubborn", "--ignore-sigterm"], signal.SIGKILL, 2),  # ignores SIGTERM too: SIGKILL after two
])
def test_a_server_that_ignores_stdin_eof_is_terminated_then_killed(flags, signal_number, steps):
    transport = StdioClientTransport(SERVER + flags, shutdown_timeout=SHUTDOWN)
    with Client(transport, timeout=WAIT) as client:
        assert client.call_tool("echo", {"n": 2})["structuredContent"] == {"result": 2}
        start = time.monotonic()
    elapsed = time.monotonic() - start
    assert transport.process.returncode == -signal_number
    assert steps * SHUTDOWN <= elapsed < (steps + 2) * SHUTDOWN + 1.0
    assert pid_is_gone(transport.process.pid)


def test_an_orphan_holding_the_servers_pipes_does_not_hold_up_close():
    stderr = Lines()
    client = Client.stdio(SERVER + ["--orphan"], stderr=stderr, timeout=WAIT, shutdown_timeout=SHUTDOWN).connect()
    orphans = client.call_tool("orphan_pids")["structuredContent"]["result"]
    try:
        start = time.monotonic()
        client.close()  # the server exits at EOF, but its pipes stay open in the orphan
        assert time.monotonic() - start < 3 * SHUTDOWN + 1.0
    finally:
        for pid in orphans:
            os.kill(pid, signal.SIGKILL)


needs_proc = pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads process states from /proc")


@needs_proc
def test_a_server_behind_a_wrapper_is_stopped_with_the_wrapper():
    # `sh -c "server; ..."` (or npx, or a .cmd): the server is the wrapper's child. Signalling the wrapper alone
    # left the server running, orphaned; the whole process group is signalled now.
    command = ["sh", "-c", f"{subprocess.list2cmdline(SERVER + ['--stubborn'])}; true"]
    with Client.stdio(command, timeout=WAIT, shutdown_timeout=SHUTDOWN) as client:
        server_pid = client.call_tool("pid")["structuredContent"]["result"]
        start = time.monotonic()
    elapsed = time.monotonic() - start
    assert not pid_running(server_pid)
    assert SHUTDOWN <= elapsed < 2 * SHUTDOWN + 1.0  # EOF ignored: one timeout, then SIGTERM to the group


@needs_proc
def test_processes_a_server_started_are_ended_with_it():
    client = Client.stdio(SERVER + ["--orphan"], timeout=WAIT, shutdown_timeout=SHUTDOWN).connect()
    orphans = client.call_tool("orphan_pids")["structuredContent"]["result"]
    try:
        client.close()
        assert not any(pid_running(pid) for pid in orphans)
    finally:
        for pid in orphans:
            if pid_running(pid):
                os.kill(pid, signal.SIGKILL)


def test_a_server_behind_a_wrapper_that_exits_at_eof_costs_no_grace_period():
    command = ["sh", "-c", f"{subprocess.list2cmdline(SERVER)}; true"]
    client = Client.stdio(command, timeout=WAIT, shutdown_timeout=WAIT).connect()
    assert client.call_tool("echo", {"n": 3})["structuredContent"] == {"result": 3}
    start = time.monotonic()
    client.close()
    assert time.monotonic() - start < 1.0  # the server's own exit, nothing more


def test_large_messages_arrive_whole_and_fast():
    size = 8 * 1024 * 1024
    with Client.stdio(SERVER, timeout=WAIT) as client:
        start = time.monotonic()
        text = text_of(client.call_tool("big", {"size": size}))
        elapsed = time.monotonic() - start
    assert text == "x" * size
    assert elapsed < 4.0  # a line read byte by byte from a raw pipe takes several seconds here


def test_close_does_not_wait_for_a_write_blocked_on_a_server_that_stopped_reading():
    client = Client.stdio([sys.executable, str(FIXTURES / "deaf_server.py")], timeout=WAIT,  # (it knows only initialize)
                          shutdown_timeout=SHUTDOWN, protocol_version="2025-11-25").connect()
    sender = Background(client.call_tool, "anything", {"data": "x" * 4_000_000})
    assert not sender.wait(0.3)  # blocked writing: the server reads nothing
    start = time.monotonic()
    Background(client.close).join()
    assert time.monotonic() - start < 3 * SHUTDOWN + 1.0
    with pytest.raises(ConnectionClosed):
        sender.join()


def test_a_zero_shutdown_timeout_stops_the_server_at_once():
    with Client.stdio(SERVER + ["--stubborn"], timeout=WAIT, shutdown_timeout=0) as client:
        pid = client.call_tool("pid")["structuredContent"]["result"]
        start = time.monotonic()
    assert time.monotonic() - start < 1.0
    assert pid_is_gone(pid)


def test_a_hundred_concurrent_calls_from_eight_threads_over_one_connection():
    failures: List[Any] = []
    with Client.stdio(SERVER, timeout=WAIT) as client:
        def worker(numbers: List[int]) -> None:
            for n in numbers:
                if client.call_tool("echo", {"n": n})["structuredContent"] != {"result": n}:
                    failures.append(n)

        run_concurrently(worker, [list(range(k, 100, 8)) for k in range(8)], timeout=WAIT * 3)
    assert failures == []


def test_close_leaves_the_servers_stdout_to_its_reader_until_the_reader_has_read_the_end():
    # A process the server started holds its stdout for a moment after the server exits: the reader sees
    # no end yet when close() gives up waiting for it. Closing the pipe then would free its descriptor's
    # number under a thread that may still read it; the next pipe opened gets that number, and the old reader
    # takes its first line (seen: the first answer of the next client's server, lost to the closed client).
    # So the reader closes its pipe itself, after its last read.
    # (A session of its own: close() ends the server's process group, and this one must outlive it.)
    holder = [sys.executable, "-c", "import os, time; os.setsid(); time.sleep(1.5)"]
    command = ["sh", "-c", f"{subprocess.list2cmdline(holder)} & exec {subprocess.list2cmdline(SERVER)}"]
    client = Client.stdio(command, timeout=WAIT, shutdown_timeout=0.2, protocol_version="2025-11-25")
    with client:
        assert client.call_tool("echo", {"n": 1})["structuredContent"] == {"result": 1}
    transport = client.transport
    assert isinstance(transport, StdioClientTransport) and transport.process is not None
    stdout = transport.process.stdout
    assert stdout is not None
    assert not stdout.closed  # still being read: the holder has not let go
    wait_until(lambda: stdout.closed, message="the reader did not close the pipe after its end")


def test_a_command_that_does_not_exist_is_a_transport_error(tmp_path):
    missing = str(tmp_path / "no-such-server")
    with pytest.raises(TransportError, match="no-such-server"):
        with Client.stdio([missing], timeout=WAIT):
            pass  # pragma: no cover - never reached


def test_an_empty_command_is_refused():
    with pytest.raises(ValueError):
        Client.stdio([])


def test_a_server_that_exits_at_once_is_a_closed_connection():
    client = Client.stdio([sys.executable, str(FIXTURES / "exits_at_once.py")], timeout=WAIT)
    start = time.monotonic()
    with pytest.raises(ConnectionClosed, match="code 3"):
        client.connect()
    assert time.monotonic() - start < WAIT / 2


# --- a server whose stdin ends answers what it has read ----------------------------------------------------


def test_a_server_answers_every_request_it_read_before_stdin_ended() -> None:
    # ``printf '...' | server``: every request is written, then stdin closes at once. The echo tool sleeps
    # a little, so most calls are still running when EOF arrives; each must still be answered.
    lines = [{"jsonrpc": "2.0", "id": 0, "method": "initialize",
              "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "sh", "version": "1"}}},
             {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    lines += [{"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": "echo", "arguments": {"n": n}}}
              for n in range(1, 41)]
    lines.append({"jsonrpc": "2.0", "id": "last", "method": "ping"})
    stdin = "".join(json.dumps(line) + "\n" for line in lines)
    completed = subprocess.run(SERVER, input=stdin, capture_output=True, text=True, timeout=WAIT * 3)
    assert completed.returncode == 0, completed.stderr
    answers = {message["id"]: message for message in map(json.loads, completed.stdout.splitlines())}
    assert sorted(answers, key=str) == sorted([0, "last", *range(1, 41)], key=str)
    for n in range(1, 41):
        assert answers[n]["result"]["structuredContent"] == {"result": n}
    assert answers["last"]["result"] == {}


def test_closing_after_cancelling_a_call_whose_handler_ignores_it_does_not_wait_for_that_handler() -> None:
    # At stdin's end the server waits for the answers it owes, but not for requests the client cancelled:
    # so closing is not held up (and escalated to SIGTERM) by a handler that never looks at its cancel event.
    stderr = Lines()
    transport = StdioClientTransport(SERVER, stderr=stderr, shutdown_timeout=WAIT)
    client = Client(transport, timeout=WAIT).connect()
    pending = client.start_tool_call("deaf", {"seconds": 30})
    stderr.until("deaf")
    pending.cancel()
    start = time.monotonic()
    client.close()
    assert time.monotonic() - start < 3.0
    assert transport.process.returncode == 0  # it exited by itself, not by SIGTERM
