"""`mcplite._sync.DaemonPool`: threads started as jobs need them, up to the limit, then reused."""

import threading
from contextlib import contextmanager
from typing import Iterable, Iterator, List

import pytest
from support import WAIT, wait_until

from mcplite._sync import DaemonPool


def pool_threads(name: str) -> List[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name.startswith(name + "-")]


@contextmanager
def running(limit: int, name: str, gates: Iterable[threading.Event] = ()) -> Iterator[DaemonPool]:
    """A pool, shut down when the block ends, ``gates`` set first (so that jobs waiting on them end, whatever
    failed); once it ended well, its threads are gone before the test goes on."""
    pool = DaemonPool(limit, name)
    try:
        yield pool
    finally:
        for gate in gates:
            gate.set()
        pool.shutdown()
    wait_until(lambda: not pool_threads(name))


def test_jobs_beyond_the_limit_wait_for_a_thread_and_all_run() -> None:
    gate = threading.Event()
    ran: List[int] = []
    lock = threading.Lock()  # guards ran

    def job(n: int) -> None:
        gate.wait(WAIT)
        with lock:
            ran.append(n)

    with running(3, "pool-limit", [gate]) as pool:
        for n in range(20):
            assert pool.submit(job, n)
        assert len(pool_threads("pool-limit")) == 3  # three busy threads; seventeen jobs queued
        gate.set()
        wait_until(lambda: len(ran) == 20)
        assert sorted(ran) == list(range(20))
        assert len(pool_threads("pool-limit")) == 3  # reused, never more


def test_an_idle_thread_is_reused_rather_than_a_new_one_started() -> None:
    done = threading.Semaphore(0)
    with running(4, "pool-reuse") as pool:
        for _ in range(10):  # one at a time: each finds the thread of the one before idle
            pool.submit(done.release)
            assert done.acquire(timeout=WAIT)
            wait_until(lambda: len(pool._idle) == 1)
        assert len(pool_threads("pool-reuse")) == 1


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


def test_a_job_goes_to_the_thread_that_went_idle_last() -> None:
    # Hand-off by name: the other idle thread sleeps on (a steady stream of one-at-a-time jobs, as a stdio
    # client sends, keeps one warm thread instead of waking a different one each time).
    release = {"first": threading.Event(), "second": threading.Event()}
    ran_on: List[str] = []
    done = threading.Event()

    def where() -> None:
        ran_on.append(threading.current_thread().name)
        done.set()

    with running(2, "pool-lifo", release.values()) as pool:
        pool.submit(release["first"].wait, WAIT)
        pool.submit(release["second"].wait, WAIT)  # a second thread: the first is busy
        wait_until(lambda: len(pool_threads("pool-lifo")) == 2)
        for idle, which in enumerate(("first", "second"), 1):  # the first job's thread goes idle first
            release[which].set()
            wait_until(lambda: len(pool._idle) == idle)
        for _ in range(5):  # each finds the same thread idle last
            done.clear()
            pool.submit(where)
            assert done.wait(WAIT)
            wait_until(lambda: len(pool._idle) == 2)
        assert ran_on == ["pool-lifo-2"] * 5  # the thread started for "second", which went idle last


def test_jobs_beyond_the_limit_run_in_the_order_they_came() -> None:
    gate = threading.Event()
    ran: List[int] = []
    finished = threading.Event()

    def job(n: int) -> None:
        ran.append(n)  # one thread: no lock needed
        if n == 10:
            finished.set()

    with running(1, "pool-order", [gate]) as pool:
        pool.submit(gate.wait, WAIT)
        for n in range(1, 11):
            pool.submit(job, n)
        gate.set()
        assert finished.wait(WAIT)
        assert ran == list(range(1, 11))


def test_a_failing_job_is_logged_and_its_thread_runs_the_next(caplog: pytest.LogCaptureFixture) -> None:
    ran = threading.Event()

    def fail() -> None:
        raise RuntimeError("boom")

    with running(1, "pool-fail") as pool:
        pool.submit(fail)
        wait_until(lambda: len(pool._idle) == 1)
        pool.submit(ran.set)
        assert ran.wait(WAIT)
        assert len(pool_threads("pool-fail")) == 1
        assert any("a job failed" in record.getMessage() for record in caplog.records)


def test_shutdown_ends_idle_threads_and_lets_busy_ones_finish_the_queue() -> None:
    pool = DaemonPool(1, "pool-drain")
    gate = threading.Event()
    ran: List[int] = []
    try:
        pool.submit(gate.wait, WAIT)
        for n in range(3):
            pool.submit(ran.append, n)
        pool.shutdown()  # the three queued jobs still run, then the thread ends
        assert pool.submit(ran.append, 99) is False
        gate.set()
        wait_until(lambda: not pool_threads("pool-drain"))
        assert ran == [0, 1, 2]
    finally:
        gate.set()
    idle = DaemonPool(2, "pool-idle-end")
    done = threading.Event()
    idle.submit(done.set)
    assert done.wait(WAIT)
    wait_until(lambda: len(idle._idle) == 1)
    idle.shutdown()
    wait_until(lambda: not pool_threads("pool-idle-end"))
