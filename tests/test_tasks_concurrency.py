"""Tasks under load, from our own client against our own server: nothing lost, nothing leaked.

- 1,000 tasks started at once from 20 threads sharing 4 clients (`start_tool_call(task=True)`), in memory and over
  HTTP (the stdlib server), in both forms (the 2026-07-28 extension and 2025-11-25 core tasks): every one ends
  ``completed`` with its own result, while the server's bounded task pool (``task_workers``) never grows past
  its bound (the tasks queue for a thread). The store is capped at exactly 1,000: every one fits, none is
  refused, and the 1,001st is refused with the store's clear error (the cap, not the pool, is what refuses).
- Cancellation racing completion: tasks cancelled at random moments while they finish. Each ends in exactly
  one terminal state, the one the client saw (``completed`` with its own result, or ``cancelled``), the store
  agrees and never changes its mind, none is lost, and the threads of the run are gone once it is closed.

Every wait is bounded (`WAIT`, the client's timeouts).
"""

import random
import sys
import threading
import time
from contextlib import ExitStack, contextmanager
from typing import Any, Dict, Iterator, List, Tuple

import pytest
from support import ROOT, WAIT, run_concurrently, wait_until
from support.http import serving

from mcplite import Client
from mcplite.client.tasks import Task
from mcplite.errors import RemoteError, RequestCancelled
from mcplite.server.task_store import MemoryTaskStore

sys.path.insert(0, str(ROOT / "tests" / "fixtures"))
import tasks_server  # noqa: E402

ENVELOPE_VERSION = "2026-07-28"
CORE = "2025-11-25"
WIRES = [("memory", ENVELOPE_VERSION), ("memory", CORE), ("http", ENVELOPE_VERSION), ("http", CORE)]
TASKS = 1000
THREADS = 20
CLIENTS = 4  # the threads share them: several at once on each connection, several connections
#: For the runs of a thousand tasks at once: they take a few seconds on 3.11, several times that on 3.9 on a
#: busy machine (10 s was too short there).
BUSY_WAIT = 60.0
WORKERS = 4  # the server's task pool: far fewer threads than tasks, so most of them queue


def pool_threads(before: Any = ()) -> List[threading.Thread]:
    """The task-pool threads alive now, not counting ``before`` (those of servers of earlier tests, which end
    when their pools next go idle)."""
    return [thread for thread in threading.enumerate()
            if thread.name.startswith("mcplite-task") and thread not in before]


@contextmanager
def connected(wire: str, version: str, server: Any) -> Iterator[List[Client]]:
    """`CLIENTS` clients of ours on ``server``, in memory or over HTTP (a session each); the server's task pool
    is stopped afterwards."""
    try:
        with ExitStack() as stack:
            if wire == "memory":
                targets: List[Any] = [server] * CLIENTS
            else:
                targets = [stack.enter_context(serving(server)).url] * CLIENTS
            yield [stack.enter_context(Client(target, protocol_version=version, timeout=WAIT)) for target in targets]
    finally:
        server.close_tasks()


@contextmanager
def no_thread_left() -> Iterator[None]:
    """Fails unless every thread started in the block (pool, session, HTTP) is gone soon after it."""
    baseline = {thread.ident for thread in threading.enumerate()}
    yield
    wait_until(lambda: {thread.ident for thread in threading.enumerate()} <= baseline,
               message=f"threads left: {[t.name for t in threading.enumerate() if t.ident not in baseline]}")


def store_status(server: Any, task: Task) -> str:
    record = server.tasks.store.get(task.task_id, time.time())
    assert record is not None, f"task {task.task_id} is not in the store"
    return str(record.status)


@pytest.mark.parametrize("wire,version", WIRES, ids=lambda value: str(value))
def test_a_thousand_concurrent_tasks_all_complete_with_their_own_results(wire: str, version: str) -> None:
    server = tasks_server.build(task_workers=WORKERS, task_poll_interval_ms=20,
                                task_store=MemoryTaskStore(max_tasks=TASKS))
    peak = [0]
    earlier = set(pool_threads())
    with no_thread_left(), connected(wire, version, server) as clients:
        def start(first: int) -> List[Tuple[int, Task]]:
            started, client = [], clients[first % CLIENTS]
            for n in range(first, TASKS, THREADS):
                started.append((n, client.start_tool_call("quick", {"n": n}, task=True)))
                peak[0] = max(peak[0], len(pool_threads(earlier)))
            return started

        def finish(handles: List[Tuple[int, Task]]) -> List[Tuple[int, Task, Dict[str, Any]]]:
            return [(n, task, dict(task.result(WAIT))) for n, task in handles]

        handles = run_concurrently(start, range(THREADS), timeout=BUSY_WAIT)
        outcomes = [item for part in run_concurrently(finish, handles, timeout=BUSY_WAIT) for item in part]

        assert len(outcomes) == TASKS
        assert sorted(n for n, _, _ in outcomes) == list(range(TASKS))  # none lost, none answered twice
        assert all(task.form == ("extension" if version == ENVELOPE_VERSION else "core") for _, task, _ in outcomes)
        assert len({task.task_id for _, task, _ in outcomes}) == TASKS
        for n, task, result in outcomes:
            assert not result.get("isError") and result["structuredContent"] == {"result": n}, (n, result)
            assert task.status() == "completed" and store_status(server, task) == "completed"
        assert 1 <= peak[0] <= WORKERS and len(pool_threads(earlier)) <= WORKERS  # bounded: the rest queued
        wait_until(lambda: server.tasks.running() == 0)
        with pytest.raises(RemoteError, match=f"{TASKS} tasks, its limit"):
            clients[0].start_tool_call("quick", {"n": TASKS}, task=True)


RACERS = 300


@pytest.mark.parametrize("wire,version", WIRES, ids=lambda value: str(value))
def test_cancels_racing_completion_settle_each_task_once_as_the_client_saw_it(wire: str, version: str) -> None:
    server = tasks_server.build(task_workers=WORKERS, task_poll_interval_ms=20)
    chance = random.Random(2663)
    plans = [(n, chance.uniform(0, 0.02), chance.uniform(0, 0.03)) for n in range(RACERS)]
    with no_thread_left(), connected(wire, version, server) as clients:
        def race(plan: Tuple[int, float, float]) -> Tuple[int, float, Task, str]:
            n, seconds, cancel_after = plan
            task = clients[n % CLIENTS].start_tool_call("sleepy", {"seconds": seconds}, task=True)
            time.sleep(cancel_after)  # a random moment: before, during or after the handler's end
            task.cancel()
            status = task.wait(WAIT)
            return n, seconds, task, status

        def chunk(part: List[Tuple[int, float, float]]) -> List[Tuple[int, float, Task, str]]:
            return [race(plan) for plan in part]

        parts = [plans[i::THREADS] for i in range(THREADS)]
        outcomes = [item for part in run_concurrently(chunk, parts, timeout=BUSY_WAIT) for item in part]
        assert sorted(n for n, _, _, _ in outcomes) == list(range(RACERS))  # none lost

        seen = {"completed": 0, "cancelled": 0}
        for n, seconds, task, status in outcomes:
            assert status in seen, (n, status, task.info)
            seen[status] += 1
            assert store_status(server, task) == status  # the store settled it once, as the client saw
            if status == "completed":
                result = task.result(WAIT)
                assert result["content"][0]["text"] == f"slept {seconds:g}", (n, result)  # its own, not "stopped"
            else:
                with pytest.raises(RequestCancelled):
                    task.result(WAIT)
        wait_until(lambda: server.tasks.running() == 0)
        for _, _, task, status in outcomes:  # settled means settled: a late handler changed nothing
            assert store_status(server, task) == status
        assert seen["completed"] and seen["cancelled"], seen  # the race went both ways
