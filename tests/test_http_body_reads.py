"""Reading an HTTP response body up to a bound allocates only what arrives (`read_at_most`).

Before Python 3.10, ``http.client.HTTPResponse.read(n)`` allocates ``n`` bytes up front. mcplite's client read
every answer with ``read(max_message_size + 1)``, 64 MiB by default, so on 3.9 every tool call over HTTP mapped
and zeroed 64 MiB: about 50 ms of system time a call, sixty times slower than on 3.10 (1,000 calls from 20
threads: 70 s, and 1.3 s with the fix). These tests measure the allocation with `tracemalloc` against a real
server, for each way a body's end is told (Content-Length, chunked, the connection's close), and end to end
through a `Client`; on 3.9 they fail without the fix.
"""

import http.client
import json
import tracemalloc
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Iterator, Tuple, TypeVar

import pytest
from support import WAIT
from support.http import ServerLoop, serving

from mcplite import Client, Server
from mcplite.transports.http_messages import read_at_most

MiB = 1024 * 1024
BIG = 64 * MiB  # the client's default max_message_size
BODY = b"x" * 5000
T = TypeVar("T")


class BodyHandler(BaseHTTPRequestHandler):
    """GET /length, /chunked or /close: `BODY`, its end told by Content-Length, chunking or the close."""

    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        self.send_response(200)
        if self.path == "/length":
            self.send_header("Content-Length", str(len(BODY)))
            self.end_headers()
            self.wfile.write(BODY)
        elif self.path == "/chunked":
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for start in range(0, len(BODY), 1000):
                piece = BODY[start:start + 1000]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.write(b"0\r\n\r\n")
        else:
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(BODY)
            self.close_connection = True

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def body_server() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), BodyHandler)
    server.daemon_threads = True
    with ServerLoop(server):
        yield server.server_address[1]
    server.server_close()


def allocation_peak(work: Callable[[], T]) -> Tuple[T, int]:
    """What ``work()`` returns and the most memory Python had allocated for it at once, in bytes."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        value = work()
        return value, tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


def get(port: int, path: str) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT)
    connection.request("GET", path)
    return connection.getresponse()


@pytest.mark.parametrize("path", ["/length", "/chunked", "/close"])
def test_a_small_body_under_a_large_bound_costs_its_own_size(body_server: int, path: str) -> None:
    response = get(body_server, path)
    body, peak = allocation_peak(lambda: read_at_most(response, BIG + 1))
    assert body == BODY
    assert peak < MiB, f"reading {len(BODY)} bytes allocated {peak} bytes"


@pytest.mark.parametrize("path", ["/length", "/chunked", "/close"])
def test_a_body_longer_than_the_bound_is_read_only_up_to_it(body_server: int, path: str) -> None:
    response = get(body_server, path)
    assert read_at_most(response, 1001) == BODY[:1001]
    assert read_at_most(response, len(BODY)) == BODY[1001:]  # the rest is still there, in order
    assert read_at_most(response, 10) == b""  # and then the end


def test_a_tool_call_over_http_allocates_its_answer_not_the_message_bound() -> None:
    server = Server("small answers")

    @server.tool
    def echo(text: str) -> str:
        return text

    with serving(server) as http_server, Client(http_server.url, timeout=WAIT) as client:
        assert client.call_tool("echo", {"text": "warm up"})["content"][0]["text"] == "warm up"
        result, peak = allocation_peak(lambda: client.call_tool("echo", {"text": "hello"}))
    assert result["content"][0]["text"] == "hello"
    assert peak < 4 * MiB, f"one small call allocated {peak} bytes ({json.dumps(result)[:80]})"
