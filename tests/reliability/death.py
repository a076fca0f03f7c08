"""Scenario peer-death: the server process dies (SIGKILL) with calls in flight.

Over stdio, 200 calls of ``pause`` are in flight on one connection; over HTTP, 40 (from four clients, both
eras). The server is killed. Every pending call must fail at once, with an `MCPError` (`ConnectionClosed`
over stdio), well before its own timeout: nobody is left waiting on a dead peer. Repeated three times (ten in
long mode) per transport.
"""

import os
import signal
import threading
import time
from typing import List, Optional, Tuple

from mcplite import Client
from mcplite.errors import MCPError

from .harness import HTTPServerProcess, Result, Run, ms, scenario, stdio_server_argv

#: The calls' own timeout, and how soon after the kill every one must have failed.
CALL_TIMEOUT = 30.0
FAIL_WITHIN = 3.0


def _fail_times(calls: List[Tuple[Client, int]], kill: threading.Event,
                killed_at: List[float]) -> Tuple[List[float], List[str]]:
    """Run each (client, n) call on a thread until it ends; returns, for each, the seconds from the kill
    (``killed_at[0]``, set before ``kill``) to its end, and what ended otherwise than in an `MCPError`."""
    times: List[float] = []
    wrong: List[str] = []
    lock = threading.Lock()  # guards times and wrong

    def call(client: Client) -> None:
        try:
            client.call_tool("pause", {"ms": 2000}, timeout=CALL_TIMEOUT)
            outcome = "answered after the kill"
        except MCPError:
            outcome = ""
        except Exception as exc:  # noqa: BLE001
            outcome = f"{type(exc).__name__}: {exc}"
        with lock:
            times.append(time.monotonic())
            if outcome:
                wrong.append(outcome[:200])

    threads = [threading.Thread(target=call, args=(client,), daemon=True) for client, _ in calls]
    for thread in threads:
        thread.start()
    kill.wait(CALL_TIMEOUT)
    for thread in threads:
        thread.join(CALL_TIMEOUT + 5)
    return [at - killed_at[0] for at in times], wrong


@scenario("peer-death", quick_timeout=120, long_timeout=600)
def peer_death(run: Run) -> Result:
    rounds = run.size(3, 10)
    result = Result()
    delays: List[float] = []
    problems: List[str] = []
    for round in range(rounds):
        for transport in ("stdio", "http"):
            kill = threading.Event()
            killed_at: List[float] = []
            server: Optional[HTTPServerProcess] = None
            if transport == "stdio":
                clients = [Client.stdio(stdio_server_argv(), timeout=CALL_TIMEOUT).connect()]
                per_client = 200
                pid = clients[0].transport.process.pid  # type: ignore[attr-defined]
            else:
                server = HTTPServerProcess(run)
                clients = [Client(server.url, protocol_version="2025-11-25" if i % 2 else "auto",
                                  timeout=CALL_TIMEOUT).connect() for i in range(4)]
                per_client = 10
                pid = server.pid
            for client in clients:
                client.list_tools()  # no tools/list needed after the kill
            calls = [(client, n) for client in clients for n in range(per_client)]
            outcome: List[Tuple[List[float], List[str]]] = []
            runner = threading.Thread(target=lambda: outcome.append(_fail_times(calls, kill, killed_at)), daemon=True)
            runner.start()
            time.sleep(0.5)  # the calls are sent and running (each takes 2 s)
            killed_at.append(time.monotonic())
            os.kill(pid, signal.SIGKILL)
            kill.set()
            runner.join(CALL_TIMEOUT + 10)
            for client in clients:
                client.close()
            if server is not None:
                server.stop()
            if not outcome:
                problems.append(f"round {round} {transport}: the calls did not finish")
                continue
            times, wrong = outcome[0]
            delays.extend(times)
            problems.extend(f"round {round} {transport}: {entry}" for entry in wrong[:2])
            if len(times) != len(calls):
                problems.append(f"round {round} {transport}: {len(calls) - len(times)} calls still waiting")
    slow = [delay for delay in delays if delay > FAIL_WITHIN]
    result.figures.update(rounds=rounds, calls=len(delays), failed_max_after_kill=ms(max(delays, default=0)),
                          slow=len(slow))
    result.check(not problems, f"{len(problems)} problems: {problems[:3]}")
    result.check(not slow, f"{len(slow)} calls failed later than {FAIL_WITHIN:g} s after the kill")
    return result

