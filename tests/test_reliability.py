"""The reliability suite's own parts, cheaply: the runner lists every scenario, the chaos proxy cuts where it
says, the fuzzers' ids stay out of the control range. The suite itself runs as ``python3 -m tests.reliability``
(CI runs its quick mode); pytest never collects it (setup.cfg ignores tests/reliability)."""

import json
import random
import socket
import subprocess
import sys
import threading
from typing import List

import pytest
from reliability.__main__ import RUN_ORDER
from reliability.chaos import ChaosProxy
from reliability.frames import VALID_BASE, VALID_END, fuzz_frame
from reliability.harness import SCENARIOS, percentile
from support import ROOT, WAIT

STREAM_HEAD = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")


def test_the_runner_lists_every_scenario_in_its_order() -> None:
    completed = subprocess.run([sys.executable, "-m", "tests.reliability", "--list"], cwd=ROOT, capture_output=True,
                               text=True, timeout=WAIT)
    listed = [line.split()[0] for line in completed.stdout.splitlines()]
    assert completed.returncode == 0, completed.stderr
    assert listed == list(RUN_ORDER)
    assert sorted(listed) == sorted(entry.name for entry in SCENARIOS)


def test_an_unknown_scenario_is_a_usage_error() -> None:
    completed = subprocess.run([sys.executable, "-m", "tests.reliability", "--only", "nope"], cwd=ROOT,
                               capture_output=True, text=True, timeout=WAIT)
    assert completed.returncode == 2 and "no scenario named nope" in completed.stderr


def _serve_once(listener: socket.socket, response: bytes) -> None:
    """Accept one connection, read one request head, answer ``response``, close."""
    conn, _ = listener.accept()
    with conn:
        conn.settimeout(WAIT)
        received = b""
        while b"\r\n\r\n" not in received:
            received += conn.recv(4096)
        conn.sendall(response)


def _through_proxy(response: bytes, request: bytes, cuts: int, span: int) -> bytes:
    """What a client receives of ``response`` through a `ChaosProxy`."""
    listener = socket.create_server(("127.0.0.1", 0))
    server = threading.Thread(target=_serve_once, args=(listener, response), daemon=True)
    server.start()
    proxy = ChaosProxy(listener.getsockname(), random.Random(3), cuts=cuts, span=span).start()
    try:
        with socket.create_connection(("127.0.0.1", proxy.port), WAIT) as client:
            client.sendall(request)
            received = b""
            while True:
                chunk = client.recv(65536)
                if not chunk:
                    return received
                received += chunk
    finally:
        proxy.close()
        server.join(WAIT)
        listener.close()


def _events(count: int) -> bytes:
    chunks: List[bytes] = []
    for n in range(count):
        event = b"id: 0:%d\ndata: {\"n\":%d}\n\n" % (n, n)
        chunks.append(b"%x\r\n%b\r\n" % (len(event), event))
    return b"".join(chunks) + b"0\r\n\r\n"


def test_the_proxy_cuts_a_post_answer_stream_after_its_first_event() -> None:
    body = _events(50)
    received = _through_proxy(STREAM_HEAD + body, b"POST /mcp HTTP/1.1\r\nContent-Length: 0\r\n\r\n", 1, 300)
    first_event_end = len(STREAM_HEAD) + body.index(b"\n\n") + 2
    assert first_event_end <= len(received) <= first_event_end + 300
    assert received == (STREAM_HEAD + body)[:len(received)]


@pytest.mark.parametrize("request_head", [b"GET /mcp HTTP/1.1\r\n\r\n",
                                          b"POST /mcp HTTP/1.1\r\nContent-Length: 0\r\n\r\n"],
                         ids=["listen stream", "no cuts left"])
def test_the_proxy_relays_whole_what_it_must_not_cut(request_head: bytes) -> None:
    response = STREAM_HEAD + _events(20)
    cuts = 1 if request_head.startswith(b"GET") else 0
    assert _through_proxy(response, request_head, cuts, 100) == response


def test_fuzzed_frames_hold_no_newline_and_no_id_in_the_control_range() -> None:
    rng = random.Random(0)
    for _ in range(3000):
        frame = fuzz_frame(rng, allow_large=False)
        assert b"\n" not in frame
        try:
            value = json.loads(frame)
        except (ValueError, RecursionError):  # not JSON, or nested deeper than Python's parser goes
            continue
        for message in value if isinstance(value, list) else [value]:
            id = message.get("id") if isinstance(message, dict) else None
            assert not (type(id) is int and VALID_BASE <= id < VALID_END), frame


@pytest.mark.parametrize("values, fraction, expected", [([], 0.99, 0.0), ([5.0], 0.5, 5.0),
                                                        ([float(n) for n in range(1, 101)], 0.99, 99.0),
                                                        ([float(n) for n in range(1, 101)], 0.5, 50.0)])
def test_percentile_is_the_nearest_rank(values: List[float], fraction: float, expected: float) -> None:
    assert percentile(values, fraction) == expected
