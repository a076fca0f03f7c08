"""Scenarios http-load and stdio-load: many calls in flight at once, none lost.

http-load: `Client`s on ``python -m mcplite serve ... --http`` (half 2025-11-25 sessions, half 2026-07-28),
20 caller threads each, released together by a barrier: 50 clients, 1,000 ``tools/call`` at once, in long
mode (five rounds); 10 clients, 200 at once, in quick mode, which stays under the server's default
``max_connections`` (256): beyond it connections are turned away with 503 and the client does not retry
them, so the long mode loses calls until that is fixed. stdio-load: one stdio connection with thousands of
calls sent before the first answer is read. Both report latency percentiles and the server's threads, and
fail unless every call is answered correctly and the server's threads are back to their baseline after
(measured after a warm-up burst, so the server's pools have grown to their size).
"""

import functools
import threading
import time
from typing import Dict, List

from mcplite import Client
from mcplite.session.pending import PendingRequest

from .harness import (
    HTTPServerProcess,
    Result,
    Run,
    fill_pools,
    ms,
    peak_rss_kib,
    percentile,
    scenario,
    settle,
    stdio_server_argv,
    steady,
    thread_count,
)

CLIENTS = 50
CALLS_PER_CLIENT = 20
WAIT = 120.0


@scenario("http-load", quick_timeout=120, long_timeout=600)
def http_load(run: Run) -> Result:
    rounds = run.size(1, 5)
    clients_count = run.size(10, CLIENTS)
    result = Result()
    server = HTTPServerProcess(run)
    with Client(server.url, timeout=WAIT) as warm:
        fill_pools(warm)
    baseline = steady(lambda: thread_count(server.pid))
    latencies: List[float] = []
    failures: List[str] = []
    lock = threading.Lock()  # guards latencies and failures
    peak_threads = 0
    clients = [Client(server.url, protocol_version="2025-11-25" if i % 2 else "auto", timeout=WAIT).connect()
               for i in range(clients_count)]
    try:
        for round in range(rounds):
            barrier = threading.Barrier(clients_count * CALLS_PER_CLIENT)

            def call(client: Client, n: int) -> None:
                barrier.wait(WAIT)
                started = time.monotonic()
                try:
                    answer = client.call_tool("echo", {"n": n}, timeout=WAIT)
                    elapsed = time.monotonic() - started
                    with lock:
                        if (answer.get("structuredContent") or {}).get("result") != n:
                            failures.append(f"call {n}: wrong answer {answer}")
                        latencies.append(elapsed)
                except Exception as exc:  # noqa: BLE001  (a lost call, whatever the error)
                    with lock:
                        failures.append(f"call {n}: {type(exc).__name__}: {exc}")

            threads = [threading.Thread(target=call, args=(clients[i], round * 10 ** 6 + i * CALLS_PER_CLIENT + j),
                                        daemon=True)
                       for i in range(clients_count) for j in range(CALLS_PER_CLIENT)]
            for thread in threads:
                thread.start()
            peak_threads = max(peak_threads, thread_count(server.pid))
            deadline = time.monotonic() + WAIT
            for thread in threads:
                thread.join(max(0.0, deadline - time.monotonic()))
                peak_threads = max(peak_threads, thread_count(server.pid))
            result.check(not any(thread.is_alive() for thread in threads), f"round {round}: callers still waiting")
    finally:
        for client in clients:
            client.close()
    after = settle(lambda: thread_count(server.pid), baseline, 10)
    calls = rounds * clients_count * CALLS_PER_CLIENT
    result.figures.update(clients=clients_count, calls=calls, answered=len(latencies), lost=calls - len(latencies),
                          p50=ms(percentile(latencies, 0.5)), p99=ms(percentile(latencies, 0.99)),
                          max=ms(max(latencies, default=0)), threads=f"{baseline}->{peak_threads}->{after}",
                          peak_rss=f"{peak_rss_kib(server.pid) // 1024}MiB")
    server.stop()
    result.check(not failures, f"{len(failures)} calls failed: {failures[:3]}")
    result.check(after <= baseline, f"server threads {after} after the clients left, {baseline} before")
    return result


def _stamp(settled: Dict[int, float], n: int) -> None:
    """Note when call ``n`` was answered (on the thread that settled it), unless noted already."""
    settled.setdefault(n, time.monotonic())


@scenario("stdio-load", quick_timeout=90, long_timeout=300)
def stdio_load(run: Run) -> Result:
    calls = run.size(5_000, 20_000)
    result = Result()
    settled: Dict[int, float] = {}
    with Client.stdio(stdio_server_argv(), timeout=WAIT) as client:
        pid = client.transport.process.pid  # type: ignore[attr-defined]
        fill_pools(client)
        baseline = steady(lambda: thread_count(pid))
        sent: List[PendingRequest] = []
        started: List[float] = []
        for n in range(calls):
            started.append(time.monotonic())
            pending = client.start_tool_call("echo", {"n": n})
            pending.on_settled = functools.partial(_stamp, settled, n)
            if pending.done():  # settled before the callback was set
                settled.setdefault(n, time.monotonic())
            sent.append(pending)
        peak_threads = thread_count(pid)
        wrong = []
        lost = 0
        for n, pending in enumerate(sent):
            try:
                answer = pending.result(WAIT)
            except Exception as exc:  # noqa: BLE001
                lost += 1
                wrong.append(f"call {n}: {type(exc).__name__}: {exc}")
                continue
            if (answer.get("structuredContent") or {}).get("result") != n:
                wrong.append(f"call {n}: wrong answer {answer}")
        total = max(settled.values(), default=started[0]) - started[0]
        after = settle(lambda: thread_count(pid), baseline, 10)
        rss = peak_rss_kib(pid)
    latencies = [settled[n] - started[n] for n in settled]
    result.figures.update(in_flight=calls, answered=calls - lost, lost=lost,
                          calls_per_s=int(calls / total) if total else 0,
                          p50=ms(percentile(latencies, 0.5)), p99=ms(percentile(latencies, 0.99)),
                          threads=f"{baseline}->{peak_threads}->{after}", peak_rss=f"{rss // 1024}MiB")
    result.check(not wrong, f"{len(wrong)} calls lost or wrong: {wrong[:3]}")
    result.check(after <= baseline, f"server threads {after} after the calls, {baseline} before")
    return result
