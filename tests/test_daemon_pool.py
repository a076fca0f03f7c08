"""`mcplite._sync.DaemonPool`: threads started as jobs need them, up to the limit, then reused."""

import threading
from typing import List

import pytest
from support import WAIT, wait_until

from mcplite._sync import DaemonPool


def pool_threads(name: str) -> List[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name.startswith(name + "-")]


def test_jobs_beyond_the_limit_wait_for_a_thread_and_all_run() -> None:
    pool = DaemonPool(3, "pool-limit")
    gate = threading.Event()
    ran: List[int] = []
    lock = threading.Lock()  # guards ran

    def job(n: int) -> None:
        gate.wait(WAIT)
        with lock:
            ran.append(n)

    try:
        for n in range(20):
            assert pool.submit(job, n)
        assert len(pool_threads("pool-limit")) == 3  # three busy threads; seventeen jobs queued
        gate.set()
        wait_until(lambda: len(ran) == 20)
        assert sorted(ran) == list(range(20))
        assert len(pool_threads("pool-limit")) == 3  # reused, never more
    finally:
        gate.set()
        pool.shutdown()
    wait_until(lambda: not pool_threads("pool-limit"))


def test_an_idle_thread_is_reused_rather_than_a_new_one_started() -> None:
    pool = DaemonPool(4, "pool-reuse")
    done = threading.Semaphore(0)
    try:
        for _ in range(10):  # one at a time: each finds the thread of the one before idle
            pool.submit(done.release)
            assert done.acquire(timeout=WAIT)
            wait_until(lambda: pool._idle == 1)
        assert len(pool_threads("pool-reuse")) == 1
    finally:
        pool.shutdown()


def test_a_thread_that_cannot_start_fails_the_submit_and_leaves_the_pool_usable(
        monkeypatch: pytest.MonkeyPatch) -> None:
    pool = DaemonPool(2, "pool-nothread")
    real_start = threading.Thread.start

    def refuse(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", refuse)  # no real way to run out of threads in a test
    ran = threading.Event()
    with pytest.raises(RuntimeError, match="can't start new thread"):
        pool.submit(ran.set)
    assert pool._threads == 0 and not ran.is_set()  # not counted, not queued: the caller knows it did not run
    monkeypatch.setattr(threading.Thread, "start", real_start)
    try:
        assert pool.submit(ran.set)
        assert ran.wait(WAIT)
    finally:
        pool.shutdown()


def test_submit_after_shutdown_runs_nothing() -> None:
    pool = DaemonPool(2, "pool-stopped")
    pool.shutdown()
    ran = threading.Event()
    assert pool.submit(ran.set) is False
    assert not ran.wait(0.05)
