"""Scenarios cancel-stdio and cancel-http: thousands of calls, half of them cancelled at random moments.

Calls of ``pause`` (a random 0-40 ms, cut short by cancellation) go out in bursts; a random half of each
burst is cancelled in random order with random gaps, so cancellations land before the server reads the
call, while it waits in the handler queue, while it runs, and after it answered. Passing means: every call
not cancelled is answered ("waited"); a cancelled call raises `RequestCancelled`, or, when its answer won
the race (``cancel()`` returned False), has that answer; the connection still answers afterwards; and the
server's threads are back to their warmed-up baseline. Over HTTP, half the clients speak 2025-11-25
(``notifications/cancelled``) and half 2026-07-28 (closing the request's connection).
"""

import random
import threading
import time
from typing import Dict, List

from mcplite import Client
from mcplite.errors import RequestCancelled

from .harness import (
    HTTPServerProcess,
    Result,
    Run,
    fill_pools,
    scenario,
    settle,
    stdio_server_argv,
    steady,
    thread_count,
)

WAIT = 60.0


class _Tally:
    """What the calls of a scenario came to."""

    def __init__(self) -> None:
        self.calls = 0
        self.cancelled = 0  # cancel() took effect
        self.raced = 0  # cancel() came after the answer
        self.answered = 0
        self.problems: List[str] = []
        self.lock = threading.Lock()  # guards every field (HTTP clients run in threads)

    def figures(self) -> Dict[str, int]:
        return {"calls": self.calls, "cancelled": self.cancelled, "answer_won": self.raced,
                "answered": self.answered, "lost": len(self.problems)}


def _churn(client: Client, rng: random.Random, calls: int, burst: int, tally: _Tally) -> None:
    """Send ``calls`` pauses in bursts, cancel a random half of each burst, and check every outcome."""
    sent = 0
    while sent < calls:
        size = min(burst, calls - sent)
        pending = [client.start_tool_call("pause", {"ms": rng.randrange(40)}) for _ in range(size)]
        chosen = rng.sample(range(size), size // 2)
        took_effect = set()
        for index in chosen:
            time.sleep(rng.uniform(0, 0.0005))
            if pending[index].cancel("churn"):
                took_effect.add(index)
        for index, request in enumerate(pending):
            try:
                answer = request.result(WAIT)
            except RequestCancelled:
                if index not in took_effect:
                    with tally.lock:
                        tally.problems.append(f"call {sent + index}: cancelled though not cancelled by us")
                continue
            except Exception as exc:  # noqa: BLE001  (a lost call)
                with tally.lock:
                    tally.problems.append(f"call {sent + index}: {type(exc).__name__}: {exc}")
                continue
            content = answer.get("content") or [{}]
            text = content[0].get("text")
            with tally.lock:
                tally.answered += 1
                if index in chosen:
                    tally.raced += 1
                if text != "waited":
                    tally.problems.append(f"call {sent + index}: answer {answer}")
        with tally.lock:
            tally.calls += size
            tally.cancelled += len(took_effect)
        sent += size
    client.ping(timeout=WAIT) if not client.session.enveloped else client.list_tools(timeout=WAIT)


@scenario("cancel-stdio", quick_timeout=120, long_timeout=900)
def cancel_stdio(run: Run) -> Result:
    calls = run.size(2_000, 20_000)
    result = Result()
    tally = _Tally()
    with Client.stdio(stdio_server_argv(), timeout=WAIT) as client:
        pid = client.transport.process.pid  # type: ignore[attr-defined]
        fill_pools(client, 40)
        baseline = steady(lambda: thread_count(pid))
        _churn(client, run.rng, calls, 200, tally)
        after = settle(lambda: thread_count(pid), baseline, 10)
    result.figures.update(**tally.figures(), threads=f"{baseline}->{after}")
    result.check(not tally.problems, f"{len(tally.problems)} calls lost or wrong: {tally.problems[:3]}")
    result.check(after <= baseline, f"server threads {after} after the churn, {baseline} before")
    return result


@scenario("cancel-http", quick_timeout=150, long_timeout=900)
def cancel_http(run: Run) -> Result:
    calls = run.size(1_000, 10_000)
    clients = 4
    result = Result()
    tally = _Tally()
    server = HTTPServerProcess(run)
    with Client(server.url, timeout=WAIT) as warm:
        fill_pools(warm, 40)
    baseline = steady(lambda: thread_count(server.pid))
    seeds = [run.rng.randrange(2 ** 32) for _ in range(clients)]

    def churn(index: int) -> None:
        try:
            with Client(server.url, protocol_version="2025-11-25" if index % 2 else "auto", timeout=WAIT) as client:
                _churn(client, random.Random(seeds[index]), calls // clients, 50, tally)
        except Exception as exc:  # noqa: BLE001
            with tally.lock:
                tally.problems.append(f"client {index}: {type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=churn, args=(index,), daemon=True) for index in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT * 5)
    after = settle(lambda: thread_count(server.pid), baseline, 10)
    server.stop()
    result.figures.update(**tally.figures(), threads=f"{baseline}->{after}", tracebacks=server.tracebacks())
    result.check(not any(thread.is_alive() for thread in threads), "clients still churning")
    result.check(not tally.problems, f"{len(tally.problems)} calls lost or wrong: {tally.problems[:3]}")
    result.check(after <= baseline, f"server threads {after} after the churn, {baseline} before")
    result.check(server.tracebacks() == 0, "tracebacks on the server's stderr")
    return result
