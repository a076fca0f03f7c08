"""Tasks: a tool call that outlives its request. The pure part: the record, its state table, the wire shapes.

Two forms exist (VERSIONS.md, "Tasks"):

- the **extension** ``io.modelcontextprotocol/tasks`` of revision 2026-07-28 (SEP-2663): the server alone
  decides to answer a ``tools/call`` of a client that declared the extension in its request's capabilities
  with a flat ``CreateTaskResult`` (``resultType: "task"``); the client polls ``tasks/get`` (the result or
  error inlined once terminal, the ``inputRequests`` while the task waits for input), answers questions
  with ``tasks/update`` and stops it with ``tasks/cancel``. No ``tasks/result``, no ``tasks/list``;
- the **core tasks** of revision 2025-11-25 (experimental): the client asks for a task with a ``task``
  param, the answer is ``{task: {...}}``, then ``tasks/get``, ``tasks/result`` (blocks until terminal),
  ``tasks/list``, ``tasks/cancel`` and ``notifications/tasks/status``; a tool says whether it may run as a
  task in ``execution.taskSupport``.

This module knows both and does no I/O: no threads, clocks (``now`` is always an argument) or stores. A task
is a `TaskRecord`; every change of status goes through `TRANSITIONS`, the one table of the lifecycle
(illegal moves raise `TaskStateError`, a bug of the caller):

    working --------> input_required --(every question answered)--> working
       |  \\                 |
       |   +--> completed / failed / cancelled <--+      (terminal: nothing leaves them)

`execution_mode` decides, from a tool's declared support and the request, how a ``tools/call`` is served.
Sources: ``seps/2663-tasks-extension.md``, ``docs/specification/2025-11-25/basic/utilities/tasks.mdx`` and
../shared/spec/CONFORMANCE-2026.md §4.7 (the wire fields the conformance suite checks).
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import time

from ..errors import INVALID_PARAMS, METHOD_NOT_FOUND, RPCError

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    from typing import Any, Dict, FrozenSet, Mapping, Optional

__all__ = [
    "EXTENSION_ID", "RELATED_TASK_KEY", "WORKING", "INPUT_REQUIRED", "COMPLETED", "FAILED", "CANCELLED",
    "STATUSES", "TERMINAL", "TRANSITIONS", "FORBIDDEN", "OPTIONAL", "REQUIRED", "TASK_SUPPORT",
    "SYNC", "EXTENSION", "CORE", "TaskStateError", "TaskRecord", "new_task", "move", "ask", "answer",
    "cancel", "settle", "expired", "check_support", "execution_mode", "extension_declared", "iso8601",
    "create_task_result", "detailed_task", "core_task", "unknown_task",
]

#: The extension's identifier, in ``capabilities.extensions`` of both sides.
EXTENSION_ID = "io.modelcontextprotocol/tasks"
#: 2025-11-25: the ``_meta`` key that ties a message to its task (``{"taskId": ...}``).
RELATED_TASK_KEY = "io.modelcontextprotocol/related-task"

WORKING = "working"
INPUT_REQUIRED = "input_required"
COMPLETED = "completed"
FAILED = "failed"
CANCELLED = "cancelled"
STATUSES = (WORKING, INPUT_REQUIRED, COMPLETED, FAILED, CANCELLED)
#: Statuses a task never leaves.
TERMINAL: FrozenSet[str] = frozenset({COMPLETED, FAILED, CANCELLED})

#: The lifecycle: status -> the statuses it may move to. The only place that says so.
TRANSITIONS: Dict[str, FrozenSet[str]] = {
    WORKING: frozenset({INPUT_REQUIRED, COMPLETED, FAILED, CANCELLED}),
    INPUT_REQUIRED: frozenset({WORKING, COMPLETED, FAILED, CANCELLED}),
    COMPLETED: frozenset(),
    FAILED: frozenset(),
    CANCELLED: frozenset(),
}

#: A tool's task support (2025-11-25 ``execution.taskSupport``; the same declaration drives the extension).
FORBIDDEN = "forbidden"
OPTIONAL = "optional"
REQUIRED = "required"
TASK_SUPPORT = (FORBIDDEN, OPTIONAL, REQUIRED)

#: How a ``tools/call`` is served (`execution_mode`).
SYNC = "sync"
EXTENSION = "extension"
CORE = "core"


class TaskStateError(ValueError):
    """A move the lifecycle does not allow (out of a terminal status, or to an unknown one): the caller's bug."""


# ---- the record ---------------------------------------------------------------------------------------------
class TaskRecord:
    """One task, as a store keeps it. Treat as immutable: the functions below return changed copies.

    Attributes:
        task_id: the server-minted, unguessable id.
        form: `EXTENSION` (2026-07-28) or `CORE` (2025-11-25): which wire shapes its clients read.
        status: one of `STATUSES`.
        status_message: a line for people (progress, the reason of a cancel or failure), or None.
        created_at, updated_at: seconds since the epoch.
        ttl_ms: how long after its creation the task is kept, in milliseconds (None: until the store's cap).
        poll_interval_ms: how often a client should poll.
        result: the request's result once ``completed`` (a ``CallToolResult``, ``isError`` for a tool error).
        error: the JSON-RPC error object once ``failed`` (``{code, message, data?}``).
        input_requests: key -> ``{method, params}``: the questions waiting for an answer (``input_required``).
        input_responses: key -> answer: answers delivered, not yet taken by the running handler.
        progress: the last progress the handler reported (``{progress, total?, message?}``), or None.
        owner: who created it (the request's principal), or None; only the owner may see it.
        tool: the name of the tool it runs (for logs and listings).
    """

    __slots__ = ("task_id", "form", "status", "status_message", "created_at", "updated_at", "ttl_ms",
                 "poll_interval_ms", "result", "error", "input_requests", "input_responses", "progress", "owner",
                 "tool")

    def __init__(self, task_id: str, form: str, status: str, *, created_at: float, updated_at: float,
                 ttl_ms: Optional[int], poll_interval_ms: int, status_message: Optional[str] = None,
                 result: Optional[Dict[str, Any]] = None, error: Optional[Dict[str, Any]] = None,
                 input_requests: Optional[Dict[str, Any]] = None, input_responses: Optional[Dict[str, Any]] = None,
                 progress: Optional[Dict[str, Any]] = None, owner: Optional[str] = None, tool: str = "") -> None:
        self.task_id = task_id
        self.form = form
        self.status = status
        self.status_message = status_message
        self.created_at = created_at
        self.updated_at = updated_at
        self.ttl_ms = ttl_ms
        self.poll_interval_ms = poll_interval_ms
        self.result = result
        self.error = error
        self.input_requests: Dict[str, Any] = input_requests or {}
        self.input_responses: Dict[str, Any] = input_responses or {}
        self.progress = progress
        self.owner = owner
        self.tool = tool

    def replace(self, **changes: Any) -> TaskRecord:
        """A copy with ``changes`` applied (the dicts are copied, so neither record sees the other's edits)."""
        fields = self.to_dict()
        fields.update(changes)
        return TaskRecord.from_dict(fields)

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    def to_dict(self) -> Dict[str, Any]:
        """The record as JSON-able data (what a persistent store writes): every field, by its name."""
        data = {name: getattr(self, name) for name in TaskRecord.__slots__}
        for name in ("input_requests", "input_responses"):  # copies: `replace` builds the new record from them
            data[name] = dict(data[name])
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TaskRecord:
        fields = dict(data)
        return cls(fields.pop("task_id"), fields.pop("form"), fields.pop("status"), **fields)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TaskRecord) and self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]  # holds dicts

    def __repr__(self) -> str:
        return f"TaskRecord({self.task_id!r}, {self.form!r}, {self.status!r})"


def new_task(task_id: str, form: str, *, now: float, ttl_ms: Optional[int], poll_interval_ms: int,
             owner: Optional[str] = None, tool: str = "") -> TaskRecord:
    """A task just created: ``working``, created and updated ``now``."""
    if form not in (EXTENSION, CORE):
        raise ValueError(f"a task's form is {EXTENSION!r} or {CORE!r}, not {form!r}")
    return TaskRecord(task_id, form, WORKING, created_at=now, updated_at=now, ttl_ms=ttl_ms,
                      poll_interval_ms=poll_interval_ms, owner=owner, tool=tool)


def move(record: TaskRecord, status: str, *, now: float, **changes: Any) -> TaskRecord:
    """``record`` in ``status`` (with ``changes``), if `TRANSITIONS` allows it; else `TaskStateError`."""
    allowed = TRANSITIONS.get(record.status)
    if allowed is None or status not in TRANSITIONS:
        raise TaskStateError(f"unknown task status {record.status!r} -> {status!r}")
    if status != record.status and status not in allowed:
        raise TaskStateError(f"task {record.task_id}: {record.status} cannot become {status}")
    return record.replace(status=status, updated_at=now, **changes)


def ask(record: TaskRecord, requests: Mapping[str, Any], *, now: float) -> TaskRecord:
    """The task waiting for answers to ``requests`` (key -> ``{method, params}``) besides those it waits for."""
    if record.terminal:
        raise TaskStateError(f"task {record.task_id} is {record.status}: it cannot ask anything")
    merged = {**record.input_requests, **requests}
    return move(record, INPUT_REQUIRED, now=now, input_requests=merged)


def answer(record: TaskRecord, responses: Mapping[str, Any], *, now: float) -> TaskRecord:
    """The task with the answers to the questions it asked: each answered key leaves ``input_requests`` for
    ``input_responses``; keys it did not ask (or asked and had answered) are ignored (SEP-2663 ``tasks/update``).
    Once nothing is left to answer, the task is ``working`` again. A terminal task is returned unchanged."""
    taken = {key: value for key, value in responses.items() if key in record.input_requests}
    if record.terminal or not taken:
        return record
    waiting = {key: value for key, value in record.input_requests.items() if key not in taken}
    status = INPUT_REQUIRED if waiting else WORKING
    return move(record, status, now=now, input_requests=waiting,
                input_responses={**record.input_responses, **taken})


def settle(record: TaskRecord, status: str, *, now: float, result: Optional[Dict[str, Any]] = None,
           error: Optional[Dict[str, Any]] = None, message: Optional[str] = None) -> TaskRecord:
    """The task ended: `COMPLETED` with ``result``, `FAILED` with ``error``, or `CANCELLED`. A task that
    already ended keeps its first ending (a handler that finishes after a cancel does not undo it).

    A 2025-11-25 task whose tool reported an error is `FAILED` with that ``result`` (``isError``: tasks.mdx,
    "Task Status"); the extension calls the same outcome `COMPLETED` (SEP-2663)."""
    if status not in TERMINAL:
        raise TaskStateError(f"{status!r} is not an ending")
    if status == COMPLETED and result is None:
        raise TaskStateError("a completed task needs its result")
    if status == FAILED and error is None and result is None:
        raise TaskStateError("a failed task needs its error (or, 2025-11-25, the tool error's result)")
    if record.terminal:
        return record
    return move(record, status, now=now, result=result if status != CANCELLED else None,
                error=error if status == FAILED else None, input_requests={}, input_responses={},
                status_message=message if message is not None else record.status_message)


def cancel(record: TaskRecord, *, now: float, message: str = "Cancelled by the client") -> TaskRecord:
    """The task cancelled; a task that already ended is returned as it is (a cancel is idempotent)."""
    return settle(record, CANCELLED, now=now, message=message)


def expired(record: TaskRecord, now: float) -> bool:
    """Whether the task's TTL (counted from its creation) has passed: a store may forget it then."""
    return record.ttl_ms is not None and now >= record.created_at + record.ttl_ms / 1000.0


def unknown_task(task_id: Any) -> RPCError:
    """The ``-32602`` for a task id the server does not know (or no longer does, or may not show)."""
    return RPCError(INVALID_PARAMS, f"Invalid params: unknown task {task_id!r}")


# ---- how a tools/call is served -----------------------------------------------------------------------------
def check_support(support: str) -> str:
    """``support`` if it is one of `TASK_SUPPORT`, else ValueError (checked when a tool is registered)."""
    if support not in TASK_SUPPORT:
        raise ValueError(f"task support is one of {', '.join(TASK_SUPPORT)}, not {support!r}")
    return support


def extension_declared(client_capabilities: Any) -> bool:
    """Whether a request's client capabilities declare the tasks extension."""
    extensions = client_capabilities.get("extensions") if isinstance(client_capabilities, dict) else None
    return isinstance(extensions, dict) and isinstance(extensions.get(EXTENSION_ID), dict)


def execution_mode(support: str, *, enveloped: bool, extension: bool, core_tasks: bool, task_param: Any) -> str:
    """How to serve a ``tools/call`` of a tool with task ``support``: `SYNC`, `EXTENSION` or `CORE`.

    Args:
        enveloped: the request speaks 2026-07-28 (the extension's era).
        extension: its client capabilities declare the extension (`extension_declared`).
        core_tasks: its revision has core tasks (2025-11-25).
        task_param: its ``task`` param (2025-11-25's request for a task), None when absent.

    Raises:
        RPCError: 2026-07-28, a ``required`` tool and no extension: ``-32021`` naming it (SEP-2663).
            2025-11-25: ``-32601`` for a ``task`` param to a ``forbidden`` tool, or none to a ``required``
            one (tasks.mdx, "Tool-Level Negotiation"); ``-32602`` for a ``task`` param that is not an object.
    """
    if enveloped:
        # The extension has no per-request opt-in: a v1 ``task`` param is tolerated and means nothing.
        if support == FORBIDDEN:
            return SYNC
        if extension:
            return EXTENSION
        if support == REQUIRED:
            from .envelope import missing_capabilities_error

            raise missing_capabilities_error({"extensions": {EXTENSION_ID: {}}})
        return SYNC
    if not core_tasks:
        return SYNC  # a revision without tasks: the tool runs as an ordinary call
    if task_param is None:
        if support == REQUIRED:
            # -32601 by the tool-level rule (a MUST), not the -32600 the error section allows for a method.
            raise RPCError(METHOD_NOT_FOUND, "This tool must be called as a task (task param)")
        return SYNC
    if not isinstance(task_param, dict):
        raise RPCError(INVALID_PARAMS, "Invalid params: task must be an object")
    if support == FORBIDDEN:
        raise RPCError(METHOD_NOT_FOUND, "This tool does not support task-augmented execution")
    return CORE


# ---- wire shapes ---------------------------------------------------------------------------------------------
def iso8601(seconds: float) -> str:
    """An instant as ISO 8601 in UTC with milliseconds: ``2026-11-26T10:42:32.123Z``."""
    whole = int(seconds)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + ".%03dZ" % int((seconds - whole) * 1000)


def _task_fields(record: TaskRecord) -> Dict[str, Any]:
    fields: Dict[str, Any] = {"taskId": record.task_id, "status": record.status}
    if record.status_message is not None:
        fields["statusMessage"] = record.status_message
    fields["createdAt"] = iso8601(record.created_at)
    fields["lastUpdatedAt"] = iso8601(record.updated_at)
    return fields


def create_task_result(record: TaskRecord) -> Dict[str, Any]:
    """2026-07-28: the flat ``CreateTaskResult`` a ``tools/call`` answers with: ``resultType: "task"``, the
    task's id, status, times, ``ttlMs`` (null: unlimited) and ``pollIntervalMs``. Never the result, an error,
    questions or a ``requestState`` (those are `detailed_task`'s, or not on this wire at all)."""
    return {"resultType": "task", **_task_fields(record), "ttlMs": record.ttl_ms,
            "pollIntervalMs": record.poll_interval_ms}


def detailed_task(record: TaskRecord) -> Dict[str, Any]:
    """2026-07-28: the ``DetailedTask`` of ``tasks/get``: the task, with the result inlined once ``completed``,
    the error once ``failed``, and the pending ``inputRequests`` while ``input_required``."""
    shaped = {**_task_fields(record), "ttlMs": record.ttl_ms, "pollIntervalMs": record.poll_interval_ms}
    if record.status == COMPLETED and record.result is not None:
        shaped["result"] = record.result
    elif record.status == FAILED and record.error is not None:
        shaped["error"] = record.error
    elif record.status == INPUT_REQUIRED:
        shaped["inputRequests"] = dict(record.input_requests)
    return shaped


def core_task(record: TaskRecord) -> Dict[str, Any]:
    """2025-11-25: the ``Task`` object (``tasks/get``, ``tasks/list``, ``{task: ...}``, status notifications):
    ``ttl`` and ``pollInterval`` in milliseconds, no inlined result."""
    return {**_task_fields(record), "ttl": record.ttl_ms, "pollInterval": record.poll_interval_ms}

