"""The task stores, in memory and SQLite: the interface's promises (atomic updates, expiry, the cap, owners),
and what only SQLite gives (a restart keeps the tasks, two processes share them, a dead process's tasks end).
"""

import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest
from support import ROOT, WAIT, run_concurrently

from mcplite.protocol import tasks as t
from mcplite.server.task_store import MemoryTaskStore, TaskLimitError, TaskStore
from mcplite.server.task_store_sqlite import SQLiteTaskStore

NOW = 1_790_000_000.0


def task(task_id: str, ttl_ms: Any = 10_000, owner: Any = None, at: float = NOW) -> t.TaskRecord:
    return t.new_task(task_id, t.EXTENSION, now=at, ttl_ms=ttl_ms, poll_interval_ms=100, owner=owner)


@pytest.fixture(params=["memory", "sqlite"])
def make(request: Any, tmp_path: Path) -> Iterator[Any]:
    made = []

    def make(max_tasks: int = 100) -> TaskStore:
        store: TaskStore = MemoryTaskStore(max_tasks) if request.param == "memory" else \
            SQLiteTaskStore(tmp_path / "tasks.db", max_tasks)
        made.append(store)
        return store
    yield make
    for store in made:
        store.close()


def test_create_get_update(make: Any) -> None:
    store = make()
    store.create(task("a"), NOW)
    assert store.get("a", NOW) == task("a") and store.get("zz", NOW) is None
    with pytest.raises(ValueError):
        store.create(task("a"), NOW)
    asked = store.update("a", lambda r: t.ask(r, {"k": {"method": "m", "params": {}}}, now=NOW + 1), NOW + 1)
    assert asked is not None and asked.status == t.INPUT_REQUIRED
    assert store.get("a", NOW + 1) == asked
    assert store.update("zz", lambda r: r, NOW) is None


def test_a_change_that_raises_changes_nothing(make: Any) -> None:
    store = make()
    store.create(task("a"), NOW)
    done = store.update("a", lambda r: t.settle(r, t.COMPLETED, now=NOW, result={"content": []}), NOW)
    with pytest.raises(t.TaskStateError):
        store.update("a", lambda r: t.ask(r, {"k": {}}, now=NOW), NOW)
    assert store.get("a", NOW) == done


def test_updates_are_atomic(make: Any) -> None:
    store = make()
    store.create(task("a").replace(progress={"n": 0}), NOW)

    def bump(_: Any) -> None:
        for _ in range(50):
            store.update("a", lambda r: r.replace(progress={"n": r.progress["n"] + 1}), NOW)

    run_concurrently(bump, range(8))
    record = store.get("a", NOW)
    assert record is not None and record.progress == {"n": 400}


def test_expiry_and_the_cap(make: Any) -> None:
    store = make(max_tasks=2)
    store.create(task("short", ttl_ms=1000), NOW)
    store.create(task("long", ttl_ms=None), NOW)
    with pytest.raises(TaskLimitError, match="2 tasks, its limit"):
        store.create(task("third"), NOW + 0.5)
    assert store.get("short", NOW + 1.0) is None  # expired at its TTL
    store.create(task("third"), NOW + 1.0)  # the expired one made room
    assert [record.task_id for record in store.list(NOW + 1.0, None)] == ["long", "third"]
    assert store.purge(NOW + 11) == 1 and [record.task_id for record in store.list(NOW + 11, None)] == ["long"]


def test_list_by_owner(make: Any) -> None:
    store = make()
    store.create(task("a", owner="ann"), NOW)
    store.create(task("b", owner="bob", at=NOW + 1), NOW + 1)
    store.create(task("c", at=NOW + 2), NOW + 2)
    assert [r.task_id for r in store.list(NOW + 3, "bob")] == ["b"]
    assert [r.task_id for r in store.list(NOW + 3, None)] == ["c"]  # nobody's tasks, not everyone's


# ---- SQLite only ----------------------------------------------------------------------------------------------
def test_sqlite_tasks_survive_a_reopen_and_are_shared(tmp_path: Path) -> None:
    first = SQLiteTaskStore(tmp_path / "shared.db")
    second = SQLiteTaskStore(tmp_path / "shared.db")  # another worker of the same host
    try:
        first.create(task("a"), NOW)
        changed = second.update("a", lambda r: t.cancel(r, now=NOW + 1), NOW + 1)
        assert first.get("a", NOW + 1) == changed
    finally:
        first.close()
        second.close()
    reopened = SQLiteTaskStore(tmp_path / "shared.db")
    try:
        record = reopened.get("a", NOW + 2)
        assert record is not None and record.status == t.CANCELLED
    finally:
        reopened.close()


CREATE_AND_EXIT = """
import sys
from mcplite.protocol import tasks as t
from mcplite.server.task_store_sqlite import SQLiteTaskStore
store = SQLiteTaskStore(sys.argv[1])
store.create(t.new_task("orphan", t.EXTENSION, now=1.0, ttl_ms=None, poll_interval_ms=100), 1.0)
store.close()
"""


def test_sqlite_settles_the_tasks_of_a_process_that_ended(tmp_path: Path) -> None:
    path = tmp_path / "orphans.db"
    subprocess.run([sys.executable, "-c", CREATE_AND_EXIT, str(path)], check=True, timeout=WAIT,
                   env={**os.environ, "PYTHONPATH": str(ROOT)})
    store = SQLiteTaskStore(path)
    try:
        record = store.get("orphan", 2.0)
        assert record is not None and record.status == t.FAILED
        assert record.error is not None and "process running this task ended" in record.error["message"]
    finally:
        store.close()
