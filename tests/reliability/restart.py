"""Scenario server-restart: the HTTP server goes away and comes back on the same port under its clients.

A 2026-07-28 client and a 2025-11-25 client are connected when the server stops (SIGTERM). While it is down,
a call must fail at once with an `MCPError` (connection refused), not wait for its timeout. Once a new server
listens on the same port, the 2026-07-28 client (no session) must simply work again; the 2025-11-25 client
must be told its session is gone (`SessionExpired`, at once), and a new client must connect. Three rounds
(twenty in long mode).
"""

import time
from typing import List

from mcplite import Client
from mcplite.errors import MCPError, SessionExpired

from .harness import HTTPServerProcess, Result, Run, ms, scenario

#: How soon a call to a server that is down (or restarted) must fail, in seconds.
FAIL_WITHIN = 2.0


def _call(client: Client, n: int) -> str:
    """"ok", or the name of the MCPError the call raised (anything else propagates)."""
    try:
        answer = client.call_tool("echo", {"n": n}, timeout=30)
    except MCPError as exc:
        return type(exc).__name__
    return "ok" if (answer.get("structuredContent") or {}).get("result") == n else f"wrong answer {answer}"


@scenario("server-restart", quick_timeout=120, long_timeout=600)
def server_restart(run: Run) -> Result:
    rounds = run.size(3, 20)
    result = Result()
    problems: List[str] = []
    slowest = 0.0
    server = HTTPServerProcess(run)
    port = server.port
    enveloped = Client(server.url, timeout=30).connect()
    legacy = Client(server.url, protocol_version="2025-11-25", timeout=30).connect()
    try:
        for round in range(rounds):
            server.stop()
            for name, client in (("2026-07-28", enveloped), ("2025-11-25", legacy)):
                started = time.monotonic()
                outcome = _call(client, round)
                slowest = max(slowest, time.monotonic() - started)
                if outcome == "ok" or outcome.startswith("wrong"):
                    problems.append(f"round {round}, {name}, server down: {outcome}")
            server = HTTPServerProcess(run, address=f"127.0.0.1:{port}")
            outcome = _call(enveloped, round)
            if outcome != "ok":
                problems.append(f"round {round}, 2026-07-28 after the restart: {outcome}")
            started = time.monotonic()
            try:
                legacy.call_tool("echo", {"n": round}, timeout=30)
                problems.append(f"round {round}, 2025-11-25 after the restart: answered on a session the new "
                                "server never made")
            except SessionExpired:
                pass
            except MCPError as exc:
                problems.append(f"round {round}, 2025-11-25 after the restart: {type(exc).__name__}: {exc}")
            slowest = max(slowest, time.monotonic() - started)
            legacy.close()
            legacy = Client(server.url, protocol_version="2025-11-25", timeout=30).connect()
            outcome = _call(legacy, round)
            if outcome != "ok":
                problems.append(f"round {round}, a new 2025-11-25 client: {outcome}")
    finally:
        enveloped.close()
        legacy.close()
        server.stop()
    result.figures.update(rounds=rounds, slowest_failure=ms(slowest), problems=len(problems))
    result.check(not problems, f"{len(problems)} problems: {problems[:3]}")
    result.check(slowest <= FAIL_WITHIN, f"a call to a server that was down or restarted took {slowest:.1f} s to fail")
    return result

