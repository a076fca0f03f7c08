"""The task store contract (`TaskStore`'s docstring), run against every store: in memory, SQLite, and Redis
(``examples/deploy/redis_store.py``, on a real redis-server).

- atomicity: a create is seen at once by another instance of the store; concurrent updates from two
  instances lose nothing; a change that raises changes nothing;
- ordering and owners: oldest first, ``owner`` None means the owner-less tasks only;
- expiry, the cap and purge, by the caller's clock;
- change notification (`TaskStore.watch`): a change made through another instance is told;
- the runner: a task whose runner process is gone is found ``failed`` by the next reader (SQLite: the process
  exited; Redis: its lease expired);
- across two processes, a real server running tasks (tests/fixtures/store_runner.py) and this test process as
  "the other host": a cancel made here reaches the handler running there (``ctx.cancelled``) within a fraction
  of a second, a task cancelled here while queued there never starts, and an answer given here
  (``tasks/update``) wakes the handler parked there, whose end wakes a ``tasks/result`` waiting here.
"""

import os
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Callable, Iterator, List, Tuple

import pytest
from support import ROOT, WAIT, run_concurrently, wait_until
from support.servers import Running, free_port, python_env, redis_server

from mcplite import Client
from mcplite.protocol import tasks as t
from mcplite.server.task_store import MemoryTaskStore, TaskLimitError, TaskStore
from mcplite.server.task_store_sqlite import SQLiteTaskStore
from mcplite.server.tasks import TaskManager

sys.path.insert(0, str(ROOT / "examples" / "deploy"))

NOW = 1_790_000_000.0
STORES = ["memory", "sqlite", "redis"]
SHARED = ["sqlite", "redis"]


def task(task_id: str, ttl_ms: Any = 10_000, owner: Any = None, at: float = NOW) -> t.TaskRecord:
    return t.new_task(task_id, t.EXTENSION, now=at, ttl_ms=ttl_ms, poll_interval_ms=100, owner=owner)


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: Any) -> Iterator[str]:
    pytest.importorskip("redis")
    folder = tmp_path_factory.mktemp("redis")
    running, port = redis_server(folder)
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        running.stop()


class Stores:
    """Makes stores of one kind that share their tasks (one SQLite file, one Redis prefix)."""

    def __init__(self, kind: str, tmp: Path, request: Any) -> None:
        self.kind = kind
        self.made: List[TaskStore] = []
        self.path = str(tmp / "tasks.db")
        self.prefix = f"t{uuid.uuid4().hex[:8]}"
        self.url = request.getfixturevalue("redis_url") if kind == "redis" else ""
        self.memory: Any = None

    @property
    def where(self) -> str:
        """How a subprocess finds the same store (tests/fixtures/store_runner.py)."""
        return self.path if self.kind == "sqlite" else f"{self.url}/{self.prefix}"

    def __call__(self, max_tasks: int = 100, lease: float = 30.0) -> TaskStore:
        store: TaskStore
        if self.kind == "memory":  # one process: "another instance" is the same store
            if self.memory is None:
                self.memory = MemoryTaskStore(max_tasks)
            return self.memory  # type: ignore[no-any-return]
        if self.kind == "sqlite":
            store = SQLiteTaskStore(self.path, max_tasks)
        else:
            from redis_store import RedisTaskStore

            store = RedisTaskStore(self.url, prefix=self.prefix, max_tasks=max_tasks, lease=lease)
        self.made.append(store)
        return store

    def close(self) -> None:
        for store in self.made:
            store.close()
        if self.memory is not None:
            self.memory.close()


@pytest.fixture(params=STORES)
def stores(request: Any, tmp_path: Path) -> Iterator[Stores]:
    made = Stores(request.param, tmp_path, request)
    yield made
    made.close()


@pytest.fixture(params=SHARED)
def shared(request: Any, tmp_path: Path) -> Iterator[Stores]:
    made = Stores(request.param, tmp_path, request)
    yield made
    made.close()


# ---- atomicity ------------------------------------------------------------------------------------------------
def test_create_is_seen_at_once_by_another_instance(stores: Stores) -> None:
    one, other = stores(), stores()
    one.create(task("a"), NOW)
    assert other.get("a", NOW) == task("a") and other.get("zz", NOW) is None
    with pytest.raises(ValueError):
        other.create(task("a"), NOW)
    asked = other.update("a", lambda r: t.ask(r, {"k": {"method": "m", "params": {}}}, now=NOW + 1), NOW + 1)
    assert asked is not None and asked.status == t.INPUT_REQUIRED
    assert one.get("a", NOW + 1) == asked
    assert one.update("zz", lambda r: r, NOW) is None


def test_a_change_that_raises_changes_nothing(stores: Stores) -> None:
    store = stores()
    store.create(task("a"), NOW)
    done = store.update("a", lambda r: t.settle(r, t.COMPLETED, now=NOW, result={"content": []}), NOW)
    with pytest.raises(t.TaskStateError):
        store.update("a", lambda r: t.ask(r, {"k": {}}, now=NOW), NOW)
    assert store.get("a", NOW) == done


def test_concurrent_updates_through_two_instances_lose_nothing(stores: Stores) -> None:
    instances = [stores(), stores()]
    instances[0].create(task("a").replace(progress={"n": 0}), NOW)

    def bump(which: int) -> None:
        for _ in range(25):
            instances[which % 2].update("a", lambda r: r.replace(progress={"n": r.progress["n"] + 1}), NOW)

    run_concurrently(bump, range(8))
    record = instances[1].get("a", NOW)
    assert record is not None and record.progress == {"n": 200}


# ---- ordering, owners, expiry ---------------------------------------------------------------------------------
def test_list_is_oldest_first_and_scoped_to_the_owner(stores: Stores) -> None:
    store = stores()
    store.create(task("a", owner="ann"), NOW)
    store.create(task("b", owner="bob", at=NOW + 1), NOW + 1)
    store.create(task("c", at=NOW + 2), NOW + 2)
    store.create(task("d", owner="bob", at=NOW + 3), NOW + 3)
    store.create(task("e", at=NOW + 3), NOW + 3)  # the same instant as d: creation order
    assert [r.task_id for r in store.list(NOW + 4, "bob")] == ["b", "d"]
    assert [r.task_id for r in store.list(NOW + 4, None)] == ["c", "e"]  # nobody's tasks, not everyone's
    assert store.list(NOW + 4, "carol") == []


def test_expiry_the_cap_and_purge(stores: Stores) -> None:
    store = stores(max_tasks=2)
    store.create(task("short", ttl_ms=1000), NOW)
    store.create(task("long", ttl_ms=None), NOW)
    with pytest.raises(TaskLimitError, match="2 tasks, its limit"):
        store.create(task("third"), NOW + 0.5)
    assert store.get("short", NOW + 1.0) is None  # expired at its TTL
    assert store.update("short", lambda r: r, NOW + 1.0) is None
    store.create(task("third"), NOW + 1.0)  # the expired one made room
    assert [record.task_id for record in store.list(NOW + 1.0, None)] == ["long", "third"]
    assert store.purge(NOW + 11) == 1 and [record.task_id for record in store.list(NOW + 11, None)] == ["long"]
    assert store.purge(NOW + 11) == 0


# ---- change notification -------------------------------------------------------------------------------------
def test_a_change_made_through_another_instance_is_told(stores: Stores) -> None:
    watched, other = stores(), stores()
    heard: List[str] = []
    told = threading.Event()

    def hear(task_id: str) -> None:
        heard.append(task_id)
        if task_id == "a" and (watched.get("a", NOW) or task("a")).status == t.CANCELLED:
            told.set()

    stop = watched.watch(hear)
    assert stop is not None, "every store here can tell"
    watched.create(task("a"), NOW)
    other.update("a", lambda r: t.cancel(r, now=NOW), NOW)
    assert told.wait(WAIT), heard
    stop()
    count = len(heard)
    other.create(task("b"), NOW)
    time.sleep(0.3)  # nothing to wait for: a watcher stopped hears nothing more
    assert len(heard) == count


def test_a_change_made_before_the_watching_thread_runs_is_told(stores: Stores, monkeypatch: Any) -> None:
    """``watch`` decides where the watching starts before it returns, not when its thread first runs: on a busy
    machine (CI, five Pythons) the thread ran after the change, took it as the start, and told nothing."""
    original_run = threading.Thread.run

    def late_run(thread: threading.Thread) -> None:
        time.sleep(0.3)  # every thread started from here on runs late
        original_run(thread)

    watched, other = stores(), stores()
    told = threading.Event()
    monkeypatch.setattr(threading.Thread, "run", late_run)
    stop = watched.watch(lambda task_id: told.set() if task_id == "a" else None)
    assert stop is not None
    other.create(task("a"), NOW)  # before the watching thread has run
    assert told.wait(WAIT)
    stop()


def test_a_store_that_cannot_tell_says_so() -> None:
    assert TaskStore().watch(lambda task_id: None) is None


# ---- the runner ----------------------------------------------------------------------------------------------
CREATE_AND_DIE = """
import os, sys
sys.path.insert(0, sys.argv[3])
from mcplite.protocol import tasks as t
sys.path.insert(0, sys.argv[3] + "/tests/fixtures")
from store_runner import open_store
store = open_store(sys.argv[1], sys.argv[2])
store.create(t.new_task("orphan", t.EXTENSION, now=1.0, ttl_ms=None, poll_interval_ms=100), 1.0)
os._exit(0)  # gone without a word: no close, no shutdown
"""


def test_the_task_of_a_runner_that_is_gone_is_failed_by_the_next_reader(shared: Stores) -> None:
    reader = shared()  # open before the runner dies: the next read finds it gone, not only the next opening
    subprocess.run([sys.executable, "-c", CREATE_AND_DIE, shared.kind, shared.where, str(ROOT)], check=True,
                   timeout=WAIT, env=python_env())
    started = time.monotonic()
    # SQLite: at once (the process is gone); Redis: once the runner's lease (1 s there) has expired.
    wait_until(lambda: reader.get("orphan", 2.0).status == t.FAILED, WAIT, "the orphan stayed working")  # type: ignore[union-attr]
    record = reader.get("orphan", 2.0)
    assert record is not None and record.error is not None and "Internal error" in record.error["message"]
    assert time.monotonic() - started < 3.0
    assert [r.status for r in reader.list(2.0, None)] == [t.FAILED]


def test_a_live_runner_keeps_its_task(shared: Stores) -> None:
    runner, reader = shared(lease=0.5), shared()
    runner.create(task("kept", ttl_ms=None), NOW)
    time.sleep(1.2)  # past the lease, twice over: renewed meanwhile
    record = reader.get("kept", NOW)
    assert record is not None and record.status == t.WORKING


# ---- across two processes --------------------------------------------------------------------------------------
@pytest.fixture
def runner(shared: Stores, tmp_path: Path) -> Iterator[Tuple[Stores, Client]]:
    """A server process running its tasks in ``shared``'s store, and a client of it (2026-07-28)."""
    port = free_port()
    process = Running("store-runner", [sys.executable, str(ROOT / "tests" / "fixtures" / "store_runner.py"),
                                       shared.kind, shared.where, str(port)], tmp_path / "runner.log",
                      env=python_env())
    try:
        process.wait_for_port(port)
        with Client(f"http://127.0.0.1:{port}/mcp", protocol_version="2026-07-28", timeout=WAIT,
                    elicitation=lambda params: {"action": "decline"}) as client:  # declares it; never asked here
            yield shared, client
    finally:
        process.stop()


def marker(tmp: Path, name: str) -> str:
    return str(tmp / name)


def seen(path: str) -> Callable[[], bool]:
    return lambda: os.path.exists(path)


def test_a_cancel_made_here_reaches_the_handler_running_there(runner: Tuple[Stores, Client],
                                                              tmp_path: Path) -> None:
    shared, client = runner
    here = TaskManager(shared())  # "the other host": it shares the store, not the process
    first, second = marker(tmp_path, "first"), marker(tmp_path, "second")
    running = client.start_tool_call("hold", {"marker": first}, task=True)
    queued = client.start_tool_call("hold", {"marker": second}, task=True)  # one worker there: it waits
    wait_until(seen(first + ".started"), WAIT, "the first task did not start")
    here.cancel(queued.task_id, None)
    cancelled_at = time.time()
    here.cancel(running.task_id, None)
    wait_until(seen(first), WAIT, "the handler never heard of its cancel")
    what, when = Path(first).read_text().split()
    assert what == "cancelled" and float(when) - cancelled_at < 1.0, (what, float(when) - cancelled_at)
    time.sleep(0.5)  # the queued one had its turn by now, if it were to start
    assert not os.path.exists(second + ".started"), "a task cancelled while queued started anyway"
    assert running.status() == t.CANCELLED and queued.status() == t.CANCELLED
    here.close()


def test_an_answer_given_here_wakes_the_handler_there_and_its_end_wakes_a_wait_here(
        runner: Tuple[Stores, Client]) -> None:
    shared, client = runner
    here = TaskManager(shared())
    took: List[float] = []
    for _ in range(3):
        handle = client.start_tool_call("confirm", {}, task=True)
        wait_until(lambda: here.find(handle.task_id, None).status == t.INPUT_REQUIRED, WAIT)
        started = time.monotonic()
        here.update(handle.task_id, None, {"ok": {"action": "accept", "content": {"ok": True}}})
        ended = here.wait_ended(handle.task_id, None, WAIT)
        took.append(time.monotonic() - started)
        assert ended.status == t.COMPLETED, ended
        assert ended.result is not None and ended.result["content"][0]["text"] == "went"
    # Woken by the changes, not by a poll (a poll every second took a second each time); the best of three
    # rounds, as a busy machine may delay one.
    assert min(took) < 0.3, f"from the answer to the end heard here: {took}"
    here.close()
