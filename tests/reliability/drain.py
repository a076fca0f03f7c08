"""Scenario sigterm-drain: an HTTP server told to stop (SIGTERM) while calls are in flight.

Eight clients (half 2025-11-25, half 2026-07-28) each have a 2 s ``pause`` running and one more client
holds an idle keep-alive connection when ``python -m mcplite serve ... --http`` gets SIGTERM. The server
must finish what it started (every call in flight answered), then exit promptly (within 5 s of the
signal, whatever the idle connection does) and cleanly (status 0).
"""

import signal
import threading
import time
from typing import List

from mcplite import Client
from mcplite.content import text_of

from .harness import HTTPServerProcess, Result, Run, ms, scenario
from .rawhttp import connect, request

#: The longest a server may take to exit after SIGTERM, in seconds.
EXIT_WITHIN = 5.0
#: How long each call in flight runs; SIGTERM comes half way through.
CALL_MS = 2000


@scenario("sigterm-drain", quick_timeout=60, long_timeout=60)
def sigterm_drain(run: Run) -> Result:
    result = Result()
    server = HTTPServerProcess(run)
    clients = [Client(server.url, protocol_version="2025-11-25" if i % 2 else "auto", timeout=30).connect()
               for i in range(8)]
    for client in clients:  # the tools' output schemas known, so no call needs a tools/list after SIGTERM
        client.list_tools()
    answers: List[str] = []
    failures: List[str] = []
    lock = threading.Lock()  # guards answers and failures

    def call(client: Client) -> None:
        try:
            answer = client.call_tool("pause", {"ms": CALL_MS})
            with lock:
                answers.append(text_of(answer))
        except Exception as exc:  # noqa: BLE001
            with lock:
                failures.append(f"{type(exc).__name__}: {exc}"[:200])

    threads = [threading.Thread(target=call, args=(client,), daemon=True) for client in clients]
    for thread in threads:
        thread.start()
    idle = connect(server.port, 10)  # a keep-alive connection between two requests
    idle.sendall(request("POST", "/mcp", [("Content-Type", "application/json")], b"{}"))
    time.sleep(CALL_MS / 2000)  # half way through the calls: they are running on the server
    started = time.monotonic()
    server.process.send_signal(signal.SIGTERM)
    try:
        code = server.process.wait(EXIT_WITHIN * 3)
    except Exception:  # noqa: BLE001
        code = None
    exit_time = time.monotonic() - started
    for thread in threads:
        thread.join(10)
    idle.close()
    for client in clients:
        client.close()
    server.stop()
    result.figures.update(in_flight=len(clients), answered=len(answers), failed=len(failures), exit_code=str(code),
                          exit_time=ms(exit_time))
    result.check(len(answers) == len(clients), f"{len(failures)} calls in flight at SIGTERM were not answered: "
                                               f"{failures[:2]}")
    result.check(code == 0, f"the server's exit status after SIGTERM was {code}, not 0")
    result.check(exit_time <= EXIT_WITHIN, f"the server took {exit_time:.1f} s to exit after SIGTERM")
    return result
