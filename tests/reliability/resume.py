"""Scenario sse-resume: answer streams cut at random points, resumed with ``Last-Event-ID``.

The fixture server runs over HTTP with a reconnection delay of 20 ms (its default event store keeps the
events). A 2025-11-25 `Client` talks to it through the `ChaosProxy`, which cuts request streams (and the
GET streams that resume them) at random byte offsets after their first event. Each call is ``sequence``,
which reports progress 1..N before answering N: the client must see each step exactly once, in order, and
the answer, however many times its stream was cut.
"""

from typing import List, Optional

from mcplite import Client

from .chaos import ChaosProxy
from .harness import HTTPServerProcess, Result, Run, scenario

STEPS = 30
#: Bytes of one ``sequence`` answer stream, roughly: the cuts fall anywhere in it (or just past it).
SPAN = 6000


@scenario("sse-resume", quick_timeout=120, long_timeout=900)
def sse_resume(run: Run) -> Result:
    target = run.size(20, 100)
    result = Result()
    server = HTTPServerProcess(run, direct_options=["--sse-retry", "20"])
    proxy = ChaosProxy(("127.0.0.1", server.port), run.rng, cuts=target, span=SPAN).start()
    calls = failed = lost = duplicated = out_of_order = events = 0
    failures: List[str] = []
    try:
        with Client(f"http://127.0.0.1:{proxy.port}/mcp", protocol_version="2025-11-25", timeout=30) as client:
            while proxy.cuts_made < target and calls < target * 20:
                seen: List[float] = []

                def progress(value: float, total: Optional[float], message: Optional[str]) -> None:
                    seen.append(value)

                calls += 1
                try:
                    answer = client.call_tool("sequence", {"count": STEPS}, progress=progress)
                except Exception as exc:  # noqa: BLE001  (any failure of a resumable call is a loss to report)
                    failed += 1
                    failures.append(f"call {calls}: {type(exc).__name__}: {exc}")
                    continue
                events += len(seen)
                unique = set(seen)
                lost += len(set(range(1, STEPS + 1)) - unique)
                duplicated += len(seen) - len(unique)
                out_of_order += seen != sorted(seen)
                if (answer.get("structuredContent") or {}).get("result") != STEPS:
                    failures.append(f"call {calls}: wrong answer {answer}")
    finally:
        proxy.close()
        server.stop()
    result.figures.update(calls=calls, drops=proxy.cuts_made, resumptions=proxy.resumptions, events=events, lost=lost,
                          duplicated=duplicated,
                          out_of_order=out_of_order, failed_calls=failed)
    result.check(proxy.cuts_made >= target, f"only {proxy.cuts_made} of {target} cuts were made in {calls} calls")
    result.check(lost == 0, f"{lost} progress events lost")
    result.check(duplicated == 0, f"{duplicated} progress events duplicated")
    result.check(out_of_order == 0, f"{out_of_order} calls saw their progress out of order")
    result.check(not failures, f"{len(failures)} calls failed: {failures[:3]}")
    result.check(server.tracebacks() == 0, "tracebacks on the server's stderr")
    return result
