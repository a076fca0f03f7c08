"""The shared test harnesses fail the way a test needs them to: on a hang, on a worker's error, on a timeout."""

import os
import socket
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest
from support import ROOT, WAIT, Background, run_concurrently, text_of, wait_until
from support.http import ServerLoop, serving

from mcplite import Client, Server


def test_wait_until_returns_the_predicates_value_and_fails_with_the_message() -> None:
    values = iter([0, None, "ready"])
    assert wait_until(lambda: next(values)) == "ready"
    with pytest.raises(AssertionError, match="never true"):
        wait_until(lambda: False, timeout=0.01, message="never true")


def test_wait_is_read_from_the_environment() -> None:
    code = "from support import WAIT; print(WAIT)"
    env = {**os.environ, "MCPLITE_TEST_WAIT": "2.5", "PYTHONPATH": str(ROOT / "tests")}
    completed = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=WAIT)
    assert completed.stdout.strip() == "2.5", completed.stderr
    env["MCPLITE_TEST_WAIT"] = "soon"
    completed = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=WAIT)
    assert completed.returncode != 0 and "MCPLITE_TEST_WAIT must be a number" in completed.stderr


def test_run_concurrently_returns_results_in_order_and_runs_the_workers_at_once() -> None:
    barrier = threading.Barrier(4, timeout=WAIT)  # passes only if all four run at the same time
    assert run_concurrently(lambda n: (barrier.wait(), n * n)[1], range(4)) == [0, 1, 4, 9]


def test_run_concurrently_reports_a_workers_error_and_a_worker_that_hangs() -> None:
    def fail_on_two(n: int) -> int:
        if n == 2:
            raise ValueError("two")
        return n

    with pytest.raises(AssertionError, match="1 of 3 workers failed.*input 2") as info:
        run_concurrently(fail_on_two, range(3))
    assert isinstance(info.value.__cause__, ValueError)
    release = threading.Event()
    try:
        with pytest.raises(AssertionError, match=r"1 of 2 workers still running after 0.05 s: inputs \[1\]"):
            run_concurrently(lambda n: n == 0 or release.wait(WAIT), range(2), timeout=0.05)
    finally:
        release.set()


def test_background_returns_or_raises_and_fails_when_still_running() -> None:
    assert Background(lambda a, b: a + b, 1, 2).join() == 3
    with pytest.raises(KeyError):
        Background({}.__getitem__, "missing").join()
    release = threading.Event()
    blocked = Background(release.wait, WAIT, name="blocked")
    assert not blocked.wait(0.01) and blocked.is_alive()
    with pytest.raises(AssertionError, match="blocked still running"):
        blocked.join(0.01)
    release.set()
    assert blocked.join() is True


def test_server_loop_serves_until_stopped() -> None:
    class Hello(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", "5")
            self.end_headers()
            self.wfile.write(b"hello")

        def log_message(self, *args: object) -> None:
            pass

    loop = ServerLoop(HTTPServer(("127.0.0.1", 0), Hello)).start()
    port = loop.server.server_address[1]
    with socket.create_connection(("127.0.0.1", port), timeout=WAIT) as sock:
        sock.sendall(b"GET / HTTP/1.0\r\n\r\n")
        assert sock.makefile("rb").read().endswith(b"hello")
    loop.stop()
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=1).close()


def test_serving_serves_on_a_free_loopback_port_until_the_block_ends() -> None:
    server = Server("s")
    server.add_tool(lambda: "hi", name="hi")
    with serving(server) as http, Client(http.url, timeout=WAIT) as client:
        assert http.url.startswith("http://127.0.0.1:") and http.port != 0
        assert text_of(client.call_tool("hi")) == "hi"
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", http.port), timeout=1).close()
