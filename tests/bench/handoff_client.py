"""How long a task's result takes to reach another host: the scale-out table's handoff rows (mc_hosts.py).

    python3 tests/bench/handoff_client.py FRONT_URL RUNS AFTER   {"version", "handoff": {"runs", "p50_ms", "max_ms"}}

Reads the hosts' own endpoints from the front's ``GET /hosts``; then, RUNS times, starts the task ``finish``
(which ends AFTER seconds later) on one host directly and asks another host directly for its result with
2025-11-25's ``tasks/result``, which waits on that host until the task ends: the figure is the time from the
handler's end on the first host (``finished_at``, the machine's monotonic clock) to the result's arrival here.
The hosts take turns (run i: host i, then host i + 1). Stateless (no sessions), so any host serves either step.
"""

import sys
import time
import urllib.request
from typing import List

import workload
from mcplite import Client


def main() -> None:
    if len(sys.argv) != 4:
        workload.fail("usage: handoff_client.py FRONT_URL RUNS AFTER")
    front, runs, after = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    with urllib.request.urlopen(front.rsplit("/", 1)[0] + "/hosts", timeout=10) as answer:
        urls = answer.read().decode().split()
    if len(urls) < 2:
        workload.fail(f"fewer than two hosts: {urls}")
    clients = [Client(url, protocol_version="2025-11-25", timeout=60).connect() for url in urls]
    delays: List[float] = []
    try:
        for i in range(runs + 1):  # the first is a warm-up (connections, the hosts' subscriptions)
            started = clients[i % len(clients)].start_tool_call("finish", {"after": after}, task=True)
            if started.task_id is None:
                workload.fail("finish was not run as a task")
            result = clients[(i + 1) % len(clients)].request("tasks/result", {"taskId": started.task_id})
            arrived = time.monotonic()
            finished = (result.get("structuredContent") or {}).get("finished_at")
            if not isinstance(finished, float):
                workload.fail(f"no finished_at in {result}")
            if i:
                delays.append(arrived - finished)
        version = clients[0].protocol_version
    finally:
        for client in clients:
            client.close()
    delays.sort()
    workload.emit(version=version, handoff={"runs": len(delays), "p50_ms": delays[len(delays) // 2] * 1000.0,
                                            "max_ms": delays[-1] * 1000.0})


if __name__ == "__main__":
    main()
