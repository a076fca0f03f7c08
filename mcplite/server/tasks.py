"""Tasks on the server: running a tool call as a task, and the ``tasks/*`` methods of both forms.

A tool declares its task support once, ``@server.tool(task="optional")`` (or ``"required"``; ``"forbidden"``
is the default), and `protocol.tasks.execution_mode` decides per request how a call is served: directly, as
a 2026-07-28 extension task, or as a 2025-11-25 core task. As a task, the handler is the same function with
the same `Context` API, run on the server's bounded task pool (`TaskManager`, ``Server(task_workers=...)``):

- ``ctx.progress`` and ``ctx.log`` are recorded on the task (its ``statusMessage``); on a 2025-11-25 task
  with a progress token, progress notifications also go to the client while its connection lasts;
- ``ctx.elicit``/``ctx.sample``/``ctx.list_roots``/``ctx.ask`` park the task in ``input_required`` with the
  questions and block the handler's thread until ``tasks/update`` answers them all (2026-07-28). On a
  2025-11-25 task they are requests to the client, as in any call, tagged with the task (``related-task``);
- ``tasks/cancel`` settles the task ``cancelled`` at once and sets ``ctx.cancelled``;
- what the handler returns is the task's result (``completed``); a tool error (an exception, an ``isError``
  result) is ``completed`` with ``isError``; an `RPCError` it raises is ``failed`` with that error inlined.

A task is created in the store before its ``CreateTaskResult`` is sent, so a ``tasks/get`` right after it
resolves. Tasks belong to whoever created them (the request's principal, as for ``requestState``): another
caller is told the task does not exist. The store (`task_store`) bounds how many tasks exist; the pool bounds
how many run at once (the others wait their turn, ``working``).

A handler that parks holds a pool thread while it waits. The wait is woken by the ``tasks/update`` that
answers it. With a store shared by several processes (SQLite, Redis) the process that runs a task is the one
that created it (`task_store.TaskStore`, "the runner"); a change made through another process (a cancel, an
answer, the end a ``tasks/result`` waits for) reaches it through the store's `TaskStore.watch`, at once. A
store that cannot notify is re-read every `RECHECK_SECONDS` instead; one that can is still re-read every
`SAFETY_RECHECK_SECONDS`, for a notification lost while the store was unreachable and for a runner gone
without a word (its task is found ``failed`` by that read).

A process that stops (`TaskManager.close`: `Server.close_tasks`, called by `Server.run`, on exit under WSGI)
settles the tasks it runs ``failed`` rather than leave them ``working`` for their clients.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import threading
import time
import uuid

from .._log import log
from .._sync import DaemonPool, LazyEvent
from ..errors import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND, RemoteError, RPCError
from ..protocol import tasks as states
from ..protocol.envelope import missing_capabilities_error
from ..protocol.input_rounds import InputRequired, Round, check_answer, key_pending
from ..schema.validation import validate
from .context import ELICIT_TIMEOUT, Context
from .coroutines import COROUTINE, run as run_coroutine
from .handlers import request_owner
from .results import describe_exception, error_result, tool_result
from .task_store import MemoryTaskStore, TaskLimitError

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Mapping, Optional

    from ..protocol.input_rounds import InputRequest
    from ..session import RequestContext
    from .registry import Registry, ToolEntry
    from .connections import Connection
    from .task_store import TaskStore

__all__ = ["TaskManager", "TaskCancelled", "DEFAULT_TASK_TTL_MS", "DEFAULT_POLL_INTERVAL_MS", "RECHECK_SECONDS",
           "SAFETY_RECHECK_SECONDS"]

#: How long a task is kept after its creation, by default (one hour).
DEFAULT_TASK_TTL_MS = 3_600_000
#: How often clients are asked to poll, by default.
DEFAULT_POLL_INTERVAL_MS = 500
#: How often a waiting handler (or ``tasks/result``) re-reads a store that cannot notify (`TaskStore.watch`),
#: for changes made by another process.
RECHECK_SECONDS = 1.0
#: How often it re-reads a store that notifies: for a notification lost on the way, and a runner gone silently.
SAFETY_RECHECK_SECONDS = 5.0


class TaskCancelled(BaseException):
    """Unwinds a task's handler that waits for input when the task is cancelled. A BaseException, so that an
    ``except Exception`` in the handler does not turn the cancel into a result."""


class _Live:
    """What this process knows of a task it runs: the cancel flag its `Context` shows, and the condition its
    parked handler (and ``tasks/result``) waits on, notified on every change this process makes to the task."""

    __slots__ = ("cancelled", "changed", "on_change", "status")

    def __init__(self, status: str, on_change: Optional[Callable[[states.TaskRecord], None]] = None) -> None:
        self.cancelled = LazyEvent()
        self.changed = threading.Condition()
        #: Called with the new record after each change of status (a 2025-11-25 task's status notification).
        self.on_change = on_change
        #: The status last announced to ``on_change`` (under ``changed``): a change heard twice, from this
        #: process and from the store's notification, is announced once.
        self.status = status

    def announce(self, record: Optional[states.TaskRecord]) -> None:
        """Call ``on_change`` if ``record``'s status is new."""
        if self.on_change is None or record is None:
            return
        with self.changed:
            if record.status == self.status:
                return
            self.status = record.status
        self.on_change(record)

    def notify(self) -> None:
        with self.changed:
            self.changed.notify_all()


class TaskManager:
    """A server's tasks: the store, the pool that runs them, and what this process knows of the running ones.

    Args:
        store: where tasks are kept (default: a `MemoryTaskStore`).
        max_workers: how many task handlers run at once; more tasks wait, ``working``, for a thread.
        ttl_ms: how long a task is kept after its creation (None: until the store's cap). A 2025-11-25 client
            may ask for less.
        poll_interval_ms: the polling interval suggested to clients.
        clock: seconds since the epoch (tests pass a fake).
    """

    def __init__(self, store: Optional[TaskStore] = None, *, max_workers: int = 8,
                 ttl_ms: Optional[int] = DEFAULT_TASK_TTL_MS, poll_interval_ms: int = DEFAULT_POLL_INTERVAL_MS,
                 clock: Callable[[], float] = time.time) -> None:
        if max_workers < 1:
            raise ValueError("task_workers must be at least 1")
        if ttl_ms is not None and (type(ttl_ms) is not int or ttl_ms <= 0):
            raise ValueError(f"a task TTL is a positive number of milliseconds or None, not {ttl_ms!r}")
        if type(poll_interval_ms) is not int or poll_interval_ms <= 0:
            raise ValueError(f"a poll interval is a positive number of milliseconds, not {poll_interval_ms!r}")
        self.store: TaskStore = store if store is not None else MemoryTaskStore()
        self.max_workers = max_workers
        self.ttl_ms = ttl_ms
        self.poll_interval_ms = poll_interval_ms
        self.clock = clock
        # Guards _live, the making of _pool and the start of watching.
        self._lock = threading.Lock()
        self._live: Dict[str, _Live] = {}
        # Watching the store (`TaskStore.watch`) starts with the first task or wait of this process (not at
        # construction: a WSGI server may fork after building the app); _watching says whether the store
        # notifies, _unwatch how to stop.
        self._watch_started = False
        self._watching = False
        self._unwatch: Optional[Callable[[], None]] = None
        # Woken by the store's notifications about tasks this process does not run: what a ``tasks/result``
        # waiting here for another process's task waits on.
        self._elsewhere = threading.Condition()
        # Daemon threads (as the session's handlers): a handler that ignores its cancel cannot hold up exit.
        self._pool: Optional[DaemonPool] = None

    # ---- running a tool as a task ------------------------------------------------------------------------
    def start(self, server: Registry, connection: Connection, ctx: RequestContext, tool: ToolEntry,
              kwargs: Dict[str, Any], form: str, answers: Optional[Dict[str, Any]] = None,
              ttl_ms: Optional[int] = None) -> states.TaskRecord:
        """Create a task for a ``tools/call`` and queue its handler; returns the new record (in the store).

        ``answers``: the `Round.snapshot` of a handler that gathered input before `Context.start_task`.
        ``ttl_ms``: the TTL a 2025-11-25 client asked for (at most the server's). Raises `RPCError` -32603 when
        the store is full.
        """
        now = self.clock()
        ttl = self.ttl_ms if ttl_ms is None or (self.ttl_ms is not None and ttl_ms > self.ttl_ms) else ttl_ms
        record = states.new_task(uuid.uuid4().hex, form, now=now, ttl_ms=ttl, poll_interval_ms=self.poll_interval_ms,
                                 owner=request_owner(server, ctx), tool=str(tool.definition["name"]))
        try:
            self.store.create(record, now)
        except TaskLimitError as exc:
            raise RPCError(INTERNAL_ERROR, f"Internal error: cannot create a task: {exc}") from None
        except Exception as exc:
            raise _unavailable(exc) from None
        self._watch()
        live = _Live(record.status, _status_notifier(connection) if form == states.CORE else None)
        with self._lock:
            self._live[record.task_id] = live
            if self._pool is None:
                self._pool = DaemonPool(self.max_workers, "mcplite-task")
            pool = self._pool
        if not pool.submit(self._run, server, connection, ctx, tool, kwargs, record, live, answers):
            self._change(record.task_id, lambda r: states.settle(  # the server is shutting down
                r, states.FAILED, now=self.clock(), error={"code": INTERNAL_ERROR, "message": "Internal error: "
                                                           "the server is shutting down"}))
        return record

    def _run(self, server: Registry, connection: Connection, ctx: RequestContext, tool: ToolEntry,
             kwargs: Dict[str, Any], record: states.TaskRecord, live: _Live,
             answers: Optional[Dict[str, Any]]) -> None:
        task_id = record.task_id
        try:
            if live.cancelled.is_set():  # cancelled while it waited for a thread
                return
            current = self.store.get(task_id, self.clock())
            if current is None or current.terminal:  # cancelled through another process, before its turn
                return
            # The answers gathered before the task started, if any; made on this thread, the one that asks.
            round = Round(answers, None, validate) if record.form == states.EXTENSION else None
            ended = self._outcome(server, connection, ctx, tool, kwargs, record, live, round)
            if ended is not None:
                status, payload = ended
                if status == states.COMPLETED and payload.get("isError") and record.form == states.CORE:
                    status = states.FAILED  # 2025-11-25 calls a tool error "failed" (keeping the result)
                is_error = status == states.FAILED and "code" in payload
                self._change(task_id, lambda r: states.settle(
                    r, status, now=self.clock(), result=None if is_error else payload,
                    error=payload if is_error else None))
        except BaseException:  # the pool would swallow it: log, and end the task rather than leave it working
            log.warning("task %s of tool %s failed", task_id, record.tool, exc_info=True)
            self._change(task_id, lambda r: states.settle(
                r, states.FAILED, now=self.clock(), error={"code": INTERNAL_ERROR, "message": "Internal error"}))
        finally:
            with self._lock:
                self._live.pop(task_id, None)
            live.notify()

    def _outcome(self, server: Registry, connection: Connection, ctx: RequestContext, tool: ToolEntry,
                 kwargs: Dict[str, Any], record: states.TaskRecord, live: _Live, round: Optional[Round]
                 ) -> Optional[Any]:
        """Run the handler: ``(status, result or error)`` to settle the task with, or None (cancelled)."""
        try:
            value = self._call(server, connection, ctx, tool, kwargs, record, live, round)
            for _ in range(8):  # the explicit form inside a task: ask, then run again with the answers
                if not isinstance(value, InputRequired):
                    break
                context = self._context(server, connection, ctx, record, live, None)
                got = context._park(value.requests, ELICIT_TIMEOUT)
                value = self._call(server, connection, ctx, tool, kwargs, record, live,
                                   Round({"user": value.state} if value.state is not None else {}, got))
            if isinstance(value, InputRequired):
                raise RPCError(INTERNAL_ERROR, f"Internal error: {record.tool} kept asking (8 rounds)")
            return states.COMPLETED, tool_result(value, tool.definition, tool.schema)
        except TaskCancelled:
            return None
        except RPCError as exc:
            if isinstance(exc, RemoteError):  # a request to the client was refused: the tool failing
                return states.COMPLETED, error_result(str(exc))
            error: Dict[str, Any] = {"code": exc.code, "message": exc.message}
            if exc.data is not None:
                error["data"] = exc.data
            return states.FAILED, error
        except Exception as exc:
            log.warning("tool %s failed (task %s)", record.tool, record.task_id, exc_info=True)
            return states.COMPLETED, error_result(describe_exception(exc))

    def _context(self, server: Registry, connection: Connection, ctx: RequestContext, record: states.TaskRecord,
                 live: _Live, round: Optional[Round]) -> TaskContext:
        return TaskContext(server, connection, ctx, round, manager=self, task=record, live=live)

    def _call(self, server: Registry, connection: Connection, ctx: RequestContext, tool: ToolEntry,
              kwargs: Dict[str, Any], record: states.TaskRecord, live: _Live, round: Optional[Round]) -> Any:
        call = dict(kwargs)
        for name in tool.schema.injected:
            call[name] = self._context(server, connection, ctx, record, live, round)
        value = tool.fn(**call)
        if value.__class__ is COROUTINE:  # an ``async def`` tool: cancelled with the task (`coroutines`)
            return run_coroutine(value, live, TaskCancelled)
        return value

    # ---- changes -----------------------------------------------------------------------------------------
    def _change(self, task_id: str, change: Callable[[states.TaskRecord], states.TaskRecord]
                ) -> Optional[states.TaskRecord]:
        """Apply ``change`` in the store and wake whoever in this process waits on the task."""
        raised: List[BaseException] = []

        def changing(record: states.TaskRecord) -> states.TaskRecord:
            try:
                return change(record)
            except BaseException as exc:
                raised.append(exc)
                raise

        try:
            record = self.store.update(task_id, changing, self.clock())
        except Exception as exc:
            if raised and exc is raised[-1]:  # the change's own error (an illegal move): the caller's
                raise
            raise _unavailable(exc) from None
        with self._lock:
            live = self._live.get(task_id)
        if live is not None:
            # The notification first: a client then hears "completed" before the tasks/result it wakes.
            live.announce(record)
            live.notify()
        return record

    # ---- what the store tells -----------------------------------------------------------------------------
    def _watch(self) -> None:
        """Start hearing the store's changes (`TaskStore.watch`), once."""
        with self._lock:
            if self._watch_started:
                return
            self._watch_started = True
        try:
            unwatch = self.store.watch(self._changed)
        except Exception:  # unreachable now (Redis down): re-read the store meanwhile, and try again next time
            log.warning("cannot watch the task store", exc_info=True)
            with self._lock:
                self._watch_started = False
            return
        with self._lock:
            self._unwatch = unwatch
            self._watching = unwatch is not None

    def _changed(self, task_id: str) -> None:
        """The store says ``task_id`` changed (here or in another process): tell whoever here cares."""
        with self._lock:
            live = self._live.get(task_id)
        if live is None:  # not run here: maybe a tasks/result waits for it
            with self._elsewhere:
                self._elsewhere.notify_all()
            return
        record = self.store.get(task_id, self.clock())
        if record is None or record.status == states.CANCELLED:
            live.cancelled.set()  # the store says cancelled already: no handler can complete it first
        live.announce(record)
        live.notify()

    def _recheck(self) -> float:
        """How long a wait may go without re-reading the store."""
        return SAFETY_RECHECK_SECONDS if self._watching else RECHECK_SECONDS

    def find(self, task_id: Any, owner: Optional[str]) -> states.TaskRecord:
        """The task ``task_id`` of ``owner``; the -32602 of an unknown task otherwise (also for another
        owner's: a task id is not a capability to see someone else's work)."""
        if not isinstance(task_id, str):
            raise RPCError(INVALID_PARAMS, "Invalid params: taskId must be a string")
        try:
            record = self.store.get(task_id, self.clock())
        except Exception as exc:
            raise _unavailable(exc) from None
        if record is None or record.owner != owner:
            raise states.unknown_task(task_id)
        return record

    def update(self, task_id: str, owner: Optional[str], responses: Any) -> states.TaskRecord:
        """Deliver answers (``tasks/update``): checked against the questions they answer (-32602 if one does
        not fit); keys the task is not waiting for are ignored."""
        if not isinstance(responses, dict):
            raise RPCError(INVALID_PARAMS, "Invalid params: inputResponses must be an object")
        record = self.find(task_id, owner)
        for key, response in responses.items():
            request = record.input_requests.get(key)
            if isinstance(request, dict):
                check_answer(str(request.get("method")), request.get("params") or {}, response, validate)
        changed = self._change(task_id, lambda r: states.answer(r, responses, now=self.clock()))
        return changed if changed is not None else record

    def cancel(self, task_id: str, owner: Optional[str]) -> states.TaskRecord:
        """Cancel the task (``tasks/cancel``): ``cancelled`` at once unless it already ended; its handler sees
        ``ctx.cancelled`` (and one waiting for input is unwound)."""
        self.find(task_id, owner)
        changed = self._change(task_id, lambda r: states.cancel(r, now=self.clock()))
        if changed is None:
            raise states.unknown_task(task_id)
        # The flag only once the store says cancelled: a handler that saw it first could return (what it makes
        # of a cancel) and settle the task completed before this cancel did, which would then find it ended.
        with self._lock:
            live = self._live.get(task_id)
        if live is not None and changed.status == states.CANCELLED:
            live.cancelled.set()
            live.notify()  # a handler parked for input was woken by the change before the flag: again, with it
        return changed

    def wait_ended(self, task_id: str, owner: Optional[str], timeout: float) -> states.TaskRecord:
        """The task once it has ended (2025-11-25 ``tasks/result``), or as it is when ``timeout`` passes."""
        deadline = time.monotonic() + timeout
        self._watch()
        with self._lock:
            live = self._live.get(task_id)
        condition = live.changed if live is not None else self._elsewhere
        with condition:  # the read under the condition: a change told after it wakes the wait below
            record = self.find(task_id, owner)
            while not record.terminal:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                condition.wait(min(remaining, self._recheck()))
                record = self.find(task_id, owner)
        return record

    def running(self) -> int:
        """How many tasks this process is running or has queued."""
        with self._lock:
            return len(self._live)

    def close(self) -> None:
        """Stop what this process runs and its pool (waiting for nothing): each of its unfinished tasks is
        settled ``failed`` (its clients learn the server stopped, rather than poll ``working`` until its TTL),
        then its handler sees ``ctx.cancelled``."""
        with self._lock:
            pool, self._pool = self._pool, None
            lives = list(self._live.items())
            unwatch, self._unwatch = self._unwatch, None
            self._watch_started = self._watching = False  # a task started after this watches again
        for task_id, live in lives:
            try:
                self._change(task_id, lambda r: states.settle(r, states.FAILED, now=self.clock(), error={
                    "code": INTERNAL_ERROR, "message": "Internal error: the server process running this task "
                                                       "stopped"}))
            except Exception:  # the store is unreachable: its own rule (a lease, a dead process) ends the task
                log.warning("task %s: could not record that it stopped", task_id, exc_info=True)
            live.cancelled.set()
            live.notify()
        if pool is not None:
            pool.shutdown()  # queued tasks see their cancel flag and end at once; running ones were told
        if unwatch is not None:
            unwatch()


class TaskContext(Context):
    """The `Context` of a handler that runs as a task: the same API, with the task behind it."""

    def __init__(self, server: Any, connection: Connection, request: RequestContext, round: Optional[Round], *,
                 manager: TaskManager, task: states.TaskRecord, live: _Live) -> None:
        super().__init__(server, connection, request, round)
        self._manager = manager
        self._task = task
        self._live = live

    @property
    def task_id(self) -> Optional[str]:
        return self._task.task_id

    @property
    def cancelled(self) -> LazyEvent:
        return self._live.cancelled

    @property
    def is_cancelled(self) -> bool:
        """Whether the task was cancelled: here, or through another process sharing the store (read from it)."""
        if self._live.cancelled.is_set():
            return True
        if self._manager._watching:  # the store tells of a cancel made elsewhere: the flag is the answer
            return False
        record = self._manager.store.get(self._task.task_id, self._manager.clock())
        if record is None or record.status == states.CANCELLED:
            self._live.cancelled.set()
            return True
        return False

    def on_cancel(self, callback: Callable[[], Any]) -> Callable[[], None]:
        """Call ``callback()`` when the task is cancelled (``tasks/cancel``, or the server closing); at once when
        it already is. Returns a function that takes the callback back (`Context.on_cancel`, for a task)."""
        from .coroutines import watch_cancel

        return watch_cancel(self._live, callback)  # TaskManager.cancel sets the flag it finds there: this one

    @property
    def _core(self) -> bool:
        return self._task.form == states.CORE

    def progress(self, progress: float, total: Optional[float] = None, message: Optional[str] = None) -> None:
        """Record progress on the task (its ``statusMessage``); a 2025-11-25 task also notifies the client
        (with the request's progress token, for as long as its connection lasts)."""
        report: Dict[str, Any] = {"progress": progress}
        if total is not None:
            report["total"] = total
        if message is not None:
            report["message"] = message
        text = message if message is not None else (f"{progress:g}/{total:g}" if total is not None else f"{progress:g}")
        self._manager._change(self._task.task_id, lambda r: r.replace(progress=report, status_message=text)
                              if not r.terminal else r)
        if self._core and self._request.progress_token is not None and not self.session.closed.is_set():
            try:
                super().progress(progress, total, message)
            except Exception:  # the client went away: the task goes on
                pass

    def log(self, level: str, data: Any, logger: Optional[str] = None) -> None:
        """Record the message on the task (its ``statusMessage``); a 2025-11-25 task also sends it as usual."""
        text = data if isinstance(data, str) else repr(data)
        self._manager._change(self._task.task_id, lambda r: r.replace(status_message=text) if not r.terminal else r)
        if self._core and not self.session.closed.is_set():
            try:
                super().log(level, data, logger)
            except Exception:
                pass

    # -- questions --
    def _ask_one(self, key: Optional[str], request: InputRequest, timeout: Optional[float]) -> Any:
        return self.ask({key: request} if key is not None else {"": request}, timeout=timeout)[
            key if key is not None else ""]

    def ask(self, questions: Mapping[str, InputRequest], *, timeout: Optional[float] = ELICIT_TIMEOUT
            ) -> Dict[str, Any]:
        for request in questions.values():
            self._check_capability(request)
        if self._core:  # 2025-11-25: requests to the client, tied to the task
            return self._ask_core(questions, timeout)
        answers: Dict[str, Any] = {}
        missing: Dict[str, Dict[str, Any]] = {}
        named: Dict[str, str] = {}  # the key asked -> the key given ("" for an unnamed question)
        for given, request in questions.items():
            key, answer = self._resolve(given or None, request)
            named[key] = given
            if key_pending(answer):
                missing[key] = request.to_request()
            else:
                answers[given] = answer
        if missing:
            got = self._park(missing, timeout)
            for key, answer in got.items():
                answers[named[key]] = answer
        return answers

    def _resolve(self, key: Optional[str], request: InputRequest) -> Any:
        """``(key, answer)`` from the answers gathered before the task started, or ``(key, pending marker)``."""
        assert self._round is not None  # an extension task always has one (`TaskManager._run`)
        return self._round.lookup(key, request)

    def _park(self, requests: Dict[str, Dict[str, Any]], timeout: Optional[float]) -> Dict[str, Any]:
        """Put the task in ``input_required`` with ``requests`` and wait until every one is answered."""
        manager, task_id = self._manager, self._task.task_id
        if manager._change(task_id, lambda r: states.ask(r, requests, now=manager.clock())
                           if not r.terminal else r) is None:
            raise TaskCancelled()
        deadline = None if timeout is None else time.monotonic() + timeout
        condition = self._live.changed
        with condition:
            while True:
                record = manager.store.get(task_id, manager.clock())
                if record is None or record.status == states.CANCELLED or self._live.cancelled.is_set():
                    raise TaskCancelled()
                if all(key in record.input_responses for key in requests):
                    break
                recheck = manager._recheck()
                remaining = recheck if deadline is None else min(deadline - time.monotonic(), recheck)
                if remaining <= 0:
                    raise RPCError(INTERNAL_ERROR, f"Internal error: no answer to {sorted(requests)} within "
                                                   f"{timeout:g} s")
                condition.wait(remaining)
        got = {key: record.input_responses[key] for key in requests}
        manager._change(task_id, lambda r: r.replace(input_responses={
            key: value for key, value in r.input_responses.items() if key not in requests}))
        return got

    def _ask_core(self, questions: Mapping[str, InputRequest], timeout: Optional[float]) -> Dict[str, Any]:
        manager, task_id = self._manager, self._task.task_id
        wire = {key: request.to_request() for key, request in questions.items()}
        manager._change(task_id, lambda r: states.ask(r, wire, now=manager.clock()) if not r.terminal else r)
        meta = {states.RELATED_TASK_KEY: {"taskId": task_id}}
        try:
            pending = {key: self.session.send_request(request.method,
                                                      {**self._legacy_params(request), "_meta": meta})
                       for key, request in questions.items()}
            answers = {key: self._legacy_answer(questions[key], waiting.result(timeout))
                       for key, waiting in pending.items()}
        finally:
            manager._change(task_id, lambda r: states.answer(r, {key: None for key in wire}, now=manager.clock())
                            if not r.terminal else r)
        manager._change(task_id, lambda r: r.replace(input_responses={}))
        return answers


def _unavailable(exc: Exception) -> RPCError:
    """The error a client gets when the store fails (a database or Redis that cannot be reached): what it
    says, without the store's own message (addresses, paths), which goes to the log."""
    log.warning("the task store failed: %s", exc, exc_info=True)
    return RPCError(INTERNAL_ERROR, "Internal error: the task store is unavailable; try again later")


def _status_notifier(connection: Connection) -> Callable[[states.TaskRecord], None]:
    """Tells a 2025-11-25 client of each change of its task's status (``notifications/tasks/status``, a MAY),
    while its connection lasts."""
    session = connection.session

    def notify(record: states.TaskRecord) -> None:
        if session.closed.is_set():
            return
        try:
            session.notify(STATUS_NOTIFICATION, states.core_task(record))
        except Exception:  # the client went away meanwhile: it polls, or it is gone
            pass
    return notify


#: 2025-11-25: a task's status changed.
STATUS_NOTIFICATION = "notifications/tasks/status"


# ---- the methods ---------------------------------------------------------------------------------------------
def _manager(server: Registry) -> TaskManager:
    info: Any = server
    manager: TaskManager = info.tasks
    return manager


def _envelope_gate(ctx: RequestContext) -> None:
    """2026-07-28: the tasks methods exist only for a request that declares the extension (-32021)."""
    envelope = ctx.envelope
    assert envelope is not None
    if not states.extension_declared(envelope.client_capabilities):
        raise missing_capabilities_error({"extensions": {states.EXTENSION_ID: {}}})


def _core_gate(ctx: RequestContext) -> None:
    """Up to 2025-11-25: the methods exist only on a revision with core tasks."""
    revision = ctx.revision
    if revision is None or not revision.core_tasks:
        raise RPCError(METHOD_NOT_FOUND, f"Method not found: {ctx.method}")


def _task_id(ctx: RequestContext) -> Any:
    return ctx.params.get("taskId")


# 2026-07-28 (the extension): tasks/get, tasks/update, tasks/cancel.
def envelope_get(server: Registry, connection: Connection, ctx: RequestContext) -> Dict[str, Any]:
    """``tasks/get``: a ``DetailedTask``, its result, error or questions inlined."""
    _envelope_gate(ctx)
    return states.detailed_task(_manager(server).find(_task_id(ctx), request_owner(server, ctx)))


def envelope_update(server: Registry, connection: Connection, ctx: RequestContext) -> Dict[str, Any]:
    """``tasks/update``: answers to a task's questions; an empty acknowledgement."""
    _envelope_gate(ctx)
    _manager(server).update(_task_id(ctx), request_owner(server, ctx), ctx.params.get("inputResponses"))
    return {}


def envelope_cancel(server: Registry, connection: Connection, ctx: RequestContext) -> Dict[str, Any]:
    """``tasks/cancel``: an empty acknowledgement (also for a task that already ended)."""
    _envelope_gate(ctx)
    _manager(server).cancel(_task_id(ctx), request_owner(server, ctx))
    return {}


# Up to 2025-11-25 (core tasks): tasks/get, tasks/cancel, tasks/result, tasks/list.
def core_get(server: Registry, connection: Connection, ctx: RequestContext) -> Dict[str, Any]:
    """``tasks/get``: the task."""
    _core_gate(ctx)
    return states.core_task(_manager(server).find(_task_id(ctx), request_owner(server, ctx)))


def core_cancel(server: Registry, connection: Connection, ctx: RequestContext) -> Dict[str, Any]:
    """``tasks/cancel``: the task (``-32602`` for one that already ended, as that revision says)."""
    _core_gate(ctx)
    manager = _manager(server)
    owner = request_owner(server, ctx)
    if manager.find(_task_id(ctx), owner).terminal:
        raise RPCError(INVALID_PARAMS, "Invalid params: the task has already ended and cannot be cancelled")
    return states.core_task(manager.cancel(_task_id(ctx), owner))


#: How long a 2025-11-25 ``tasks/result`` waits for its task to end before answering with an error.
RESULT_WAIT_SECONDS = 3600.0


def core_result(server: Registry, connection: Connection, ctx: RequestContext) -> Dict[str, Any]:
    """``tasks/result``: wait until the task ends; its result, or its error."""
    _core_gate(ctx)
    record = _manager(server).wait_ended(_task_id(ctx), request_owner(server, ctx), RESULT_WAIT_SECONDS)
    meta = {states.RELATED_TASK_KEY: {"taskId": record.task_id}}
    if record.status in (states.COMPLETED, states.FAILED) and record.result is not None:  # a tool error too
        result = dict(record.result)
        result["_meta"] = {**(result.get("_meta") or {}), **meta}
        return result
    if record.status == states.FAILED and record.error is not None:
        raise RPCError(int(record.error.get("code", INTERNAL_ERROR)), str(record.error.get("message", "")),
                       record.error.get("data"))
    if record.status == states.CANCELLED:
        raise RPCError(INVALID_PARAMS, "Invalid params: the task was cancelled")
    raise RPCError(INTERNAL_ERROR, "Internal error: the task has not ended")


def core_list(server: Registry, connection: Connection, ctx: RequestContext) -> Dict[str, Any]:
    """``tasks/list``: the caller's tasks, oldest first, paginated like the other lists."""
    _core_gate(ctx)
    from .results import page

    manager = _manager(server)
    owner = request_owner(server, ctx)  # (its -32600, for credentials that name nobody, is the caller's to see)
    try:
        records = manager.store.list(manager.clock(), owner)
    except Exception as exc:
        raise _unavailable(exc) from None
    return page("tasks", [states.core_task(record) for record in records], ctx.params, server.page_size)


#: The method tables' rows for tasks, per era (`server._method_tables`): the other era's methods are unknown.
HANDSHAKE_METHODS = {"tasks/get": core_get, "tasks/cancel": core_cancel, "tasks/result": core_result,
                     "tasks/list": core_list}
ENVELOPE_METHODS = {"tasks/get": envelope_get, "tasks/update": envelope_update, "tasks/cancel": envelope_cancel}
