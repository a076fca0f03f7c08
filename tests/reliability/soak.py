"""Scenarios soak and slow-client: memory and threads over many calls, and a trickling client.

soak: one stdio connection, 5,000 calls (50,000 in long mode) one after another, mostly ``echo``, with a
``tools/list`` every 10th and a ``sequence`` with progress every 50th. The server's RSS (VmRSS) and threads
are sampled along the way; after a warm-up (the first tenth), RSS may grow by at most 5 MiB, and the
threads must end where the warm-up left them.

slow-client: raw sockets that each send a valid 2026-07-28 ``tools/call`` one byte every 25 ms (10 of them, 50 in
long mode; each head arrives within the server's 10 s ``header_timeout``) while four clients keep calling; their
latency must stay bounded, every trickled request must then be answered, and the server's threads must come back
to their baseline.
"""

import socket
import threading
import time
from typing import List

from mcplite import Client

from .harness import (
    HTTPServerProcess,
    Result,
    Run,
    fill_pools,
    ms,
    percentile,
    rss_kib,
    scenario,
    settle,
    stdio_server_argv,
    steady,
    thread_count,
)
from .rawhttp import connect, json_body, read_answer, request

#: The most RSS may grow after the warm-up, in KiB.
RSS_GROWTH_LIMIT = 5 * 1024
SAMPLES = 50
WAIT = 60.0


@scenario("soak", quick_timeout=150, long_timeout=1200)
def soak(run: Run) -> Result:
    calls = run.size(5_000, 50_000)
    warm_up = calls // 10
    result = Result()
    samples: List[int] = []
    wrong: List[str] = []
    progress_seen: List[float] = []
    with Client.stdio(stdio_server_argv(), timeout=WAIT) as client:
        pid = client.transport.process.pid  # type: ignore[attr-defined]
        baseline_rss = baseline_threads = 0
        peak_threads = 0
        listed = len(client.list_tools())  # every list must say the same (the server's tools, as registered)
        started = time.monotonic()
        for n in range(calls):
            if n == warm_up:
                fill_pools(client)  # the handler pool at its size: it grows on demand, which is no leak
                baseline_rss = rss_kib(pid)
                baseline_threads = steady(lambda: thread_count(pid))
            if n % 50 == 49:
                client.call_tool("sequence", {"count": 5},
                                 progress=lambda value, total, message: progress_seen.append(value))
            elif n % 10 == 9:
                if len(client.list_tools()) != listed or listed < 3:
                    wrong.append(f"call {n}: tools/list")
            else:
                answer = client.call_tool("echo", {"n": n})
                if (answer.get("structuredContent") or {}).get("result") != n:
                    wrong.append(f"call {n}: {answer}")
            if n > warm_up and n % max(1, calls // SAMPLES) == 0:
                samples.append(rss_kib(pid))
                peak_threads = max(peak_threads, thread_count(pid))
        elapsed = time.monotonic() - started
        samples.append(rss_kib(pid))
        after_threads = settle(lambda: thread_count(pid), baseline_threads, 10)
    growth = max(samples) - baseline_rss
    expected_progress = (calls // 50) * 5
    result.figures.update(calls=calls, calls_per_s=int(calls / elapsed), wrong=len(wrong),
                          rss_after_warm_up=f"{baseline_rss / 1024:.1f}MiB", rss_end=f"{samples[-1] / 1024:.1f}MiB",
                          rss_growth=f"{growth / 1024:.2f}MiB", progress=f"{len(progress_seen)}/{expected_progress}",
                          threads=f"{baseline_threads}->{peak_threads}->{after_threads}")
    result.check(not wrong, f"{len(wrong)} wrong answers: {wrong[:3]}")
    result.check(len(progress_seen) == expected_progress, "progress notifications lost or duplicated")
    result.check(growth <= RSS_GROWTH_LIMIT, f"RSS grew by {growth} KiB after the warm-up (limit {RSS_GROWTH_LIMIT})")
    result.check(after_threads <= baseline_threads, f"server threads {after_threads} at the end, {baseline_threads} "
                                                    "after the warm-up")
    return result


#: The pause between a trickled request's bytes: slow, yet its head (some 210 bytes) arrives within the server's
#: ``header_timeout`` (10 s), past which a client that has not sent its head is cut off as a slowloris
#: (tests/security/test_sec_http.py).
TRICKLE_PAUSE = 0.025


def _trickled_request(n: int) -> bytes:
    """A complete 2026-07-28 tools/call of echo(n)."""
    headers = [("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream"),
               ("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", "tools/call"), ("Mcp-Name", "echo")]
    return request("POST", "/mcp", headers,
                   json_body({"jsonrpc": "2.0", "id": n, "method": "tools/call",
                              "params": {"name": "echo", "arguments": {"n": n},
                                         "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                                                   "io.modelcontextprotocol/clientCapabilities": {}}}}))


@scenario("slow-client", quick_timeout=120, long_timeout=300)
def slow_client(run: Run) -> Result:
    slow_count = run.size(10, 50)
    result = Result()
    server = HTTPServerProcess(run)
    with Client(server.url, timeout=WAIT) as warm:  # threads the server starts once, on first use
        warm.call_tool("echo", {"n": 0})
    baseline = steady(lambda: thread_count(server.pid))
    payloads = [_trickled_request(n) for n in range(slow_count)]
    sockets = [connect(server.port, WAIT) for _ in range(slow_count)]
    done = threading.Event()
    latencies: List[float] = []
    failures: List[str] = []
    lock = threading.Lock()  # guards latencies and failures

    def busy(index: int) -> None:
        try:
            with Client(server.url, timeout=WAIT) as client:
                n = 0
                while not done.is_set():
                    started = time.monotonic()
                    answer = client.call_tool("echo", {"n": n})
                    with lock:
                        latencies.append(time.monotonic() - started)
                        if (answer.get("structuredContent") or {}).get("result") != n:
                            failures.append(f"busy client {index}: wrong answer {answer}")
                    n += 1
        except Exception as exc:  # noqa: BLE001
            with lock:
                failures.append(f"busy client {index}: {type(exc).__name__}: {exc}")

    workers = [threading.Thread(target=busy, args=(index,), daemon=True) for index in range(4)]
    for worker in workers:
        worker.start()
    started = time.monotonic()
    longest = max(len(payload) for payload in payloads)
    for offset in range(longest):  # one byte per socket every TRICKLE_PAUSE
        for sock, payload in zip(sockets, payloads):
            if offset < len(payload):
                sock.sendall(payload[offset:offset + 1])
                if offset == len(payload) - 1:
                    sock.shutdown(socket.SHUT_WR)  # so the server closes after answering
        time.sleep(TRICKLE_PAUSE)
    trickle_time = time.monotonic() - started
    answered = 0
    for n, sock in enumerate(sockets):
        answer = read_answer(sock, body_bytes=-1)
        sock.close()
        if answer.status == 200 and b'"structuredContent":{"result":%d}' % n in answer.body:
            answered += 1
        else:
            failures.append(f"trickled request {n}: {answer.status} {answer.ended} {answer.body[:120]!r}")
    done.set()
    for worker in workers:
        worker.join(WAIT)
    after = settle(lambda: thread_count(server.pid), baseline, 10)
    server.stop()
    result.figures.update(slow_clients=slow_count, trickle=f"{trickle_time:.1f}s", trickled_answered=answered,
                          busy_calls=len(latencies), p99=ms(percentile(latencies, 0.99)),
                          max=ms(max(latencies, default=0)), threads=f"{baseline}->{after}")
    result.check(not failures, f"{len(failures)} failures: {failures[:3]}")
    result.check(len(latencies) > 0 and percentile(latencies, 0.99) < 1.0,
                 "the other clients' p99 latency reached 1 s while slow clients trickled")
    result.check(after <= baseline, f"server threads {after} after the slow clients left, {baseline} before")
    return result
