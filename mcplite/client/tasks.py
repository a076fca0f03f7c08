"""`Task`: a tool call the server runs as a task, seen from the client (`Client.start_tool_call(..., task=True)`).

The handle is the same in every form:

- **extension** (2026-07-28, ``io.modelcontextprotocol/tasks``): ``tasks/get`` returns the task with its result,
  error or questions inlined; questions (``input_required``) are answered with the client's own sampling,
  elicitation and roots callbacks and sent with ``tasks/update``; ``tasks/cancel`` stops it;
- **core** (2025-11-25): ``tasks/get`` polls, ``tasks/result`` fetches the outcome once the task ended, the
  server's questions arrive as ordinary requests (the callbacks answer them), ``tasks/cancel`` stops it;
- **direct**: the server answered the call itself (a tool that is never a task, a fast one, or a server or
  revision without tasks): the handle is complete from the start.

`Task.wait` polls at the interval the server suggests (``pollIntervalMs`` / ``pollInterval``), blocking on an
event between polls, never spinning; a 2025-11-25 status notification for the task wakes it early.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import threading
import time

from ..errors import INTERNAL_ERROR, INVALID_PARAMS, RemoteError, RemoteProtocolError, RequestCancelled, RequestTimeout
from ..protocol.methods import CLIENT_CAPABILITIES_KEY
from ..protocol.tasks import CANCELLED, COMPLETED, EXTENSION_ID, FAILED, INPUT_REQUIRED, RELATED_TASK_KEY, TERMINAL

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Optional

    from ..protocol import types as t

    #: Sends one request: ``(method, params, timeout) -> result`` (the client's; timeout None: the client's).
    Send = Callable[[str, Dict[str, Any], Optional[float]], Dict[str, Any]]
    #: Answers one question: ``(method, params) -> result`` (the client's callbacks).
    Answer = Callable[[str, Dict[str, Any]], Dict[str, Any]]

__all__ = ["Task", "EXTENSION", "CORE", "DIRECT", "DEFAULT_POLL_SECONDS", "TASK_WAIT", "with_extension"]

EXTENSION = "extension"
CORE = "core"
DIRECT = "direct"
#: The polling interval when the server suggests none.
DEFAULT_POLL_SECONDS = 1.0
#: How long `Task.wait` and `Task.result` wait by default (a task may take long; this is still a bound).
TASK_WAIT = 3600.0


def with_extension(params: Dict[str, Any], capabilities: Dict[str, Any]) -> Dict[str, Any]:
    """``params`` with ``_meta`` declaring ``capabilities`` plus the tasks extension (2026-07-28: the
    extension's requests, and a call that may become a task, declare it per request)."""
    meta = dict(params.get("_meta") or {})
    declared = dict(meta.get(CLIENT_CAPABILITIES_KEY) or capabilities)
    declared["extensions"] = {**(declared.get("extensions") or {}), EXTENSION_ID: {}}
    meta[CLIENT_CAPABILITIES_KEY] = declared
    return {**params, "_meta": meta}


class Task:
    """A tool call running as a task on the server (or already answered, ``form == "direct"``).

    Attributes:
        name: the tool's name.
        task_id: the server's id for the task (None for a direct answer).
        form: "extension" (2026-07-28), "core" (2025-11-25) or "direct".
    """

    def __init__(self, name: str, form: str, info: Dict[str, Any], *, send: Send, answer: Answer,
                 capabilities: Callable[[], Dict[str, Any]], result: Optional[Dict[str, Any]] = None) -> None:
        self.name = name
        self.form = form
        self.task_id: Optional[str] = info.get("taskId")
        self._send = send
        self._answer = answer
        self._capabilities = capabilities
        # Guards _info and _result: the waiting thread, a canceller and the notification thread share them.
        self._lock = threading.Lock()
        self._info: Dict[str, Any] = dict(info)
        self._result: Optional[Dict[str, Any]] = result
        self._wake = threading.Event()  # set to cut a wait between polls short (a status notification, cancel)

    def __repr__(self) -> str:
        return f"Task({self.name!r}, {self.task_id!r}, {self.info.get('status')!r})"

    # ---- what is known -------------------------------------------------------------------------------------
    @property
    def info(self) -> Dict[str, Any]:
        """The task as last seen (``taskId``, ``status``, ``statusMessage``, times, TTL, poll interval)."""
        with self._lock:
            return dict(self._info)

    @property
    def done(self) -> bool:
        """Whether the task has ended, as last seen."""
        return self.info.get("status") in TERMINAL

    @property
    def progress(self) -> Optional[str]:
        """The task's ``statusMessage`` as last seen: the progress or log line its handler reported."""
        message = self.info.get("statusMessage")
        return message if isinstance(message, str) else None

    @property
    def poll_interval(self) -> float:
        """Seconds between polls: what the server suggests, else `DEFAULT_POLL_SECONDS`."""
        info = self.info
        milliseconds = info.get("pollIntervalMs", info.get("pollInterval"))
        if isinstance(milliseconds, (int, float)) and not isinstance(milliseconds, bool) and milliseconds > 0:
            return float(milliseconds) / 1000.0
        return DEFAULT_POLL_SECONDS

    # ---- asking the server ---------------------------------------------------------------------------------
    def status(self) -> str:
        """The task's status now (one ``tasks/get``, unless it already ended)."""
        if not self.done:
            self._refresh()
        return str(self.info.get("status"))

    def _request(self, method: str, params: Dict[str, Any]) -> Dict[str, Any]:
        if self.form == EXTENSION:
            params = with_extension(params, self._capabilities())
        return self._send(method, params, None)

    def _refresh(self) -> None:
        info = self._request("tasks/get", {"taskId": self.task_id})
        if info.get("taskId") != self.task_id or not isinstance(info.get("status"), str):
            raise RemoteProtocolError(f"tasks/get answered with another task or no status: {info!r}")
        self._update(info)

    def _update(self, info: Dict[str, Any]) -> None:
        with self._lock:
            self._info = {key: value for key, value in info.items() if key not in ("resultType", "_meta")}
            if self.form == EXTENSION and info.get("status") == COMPLETED and isinstance(info.get("result"), dict):
                self._result = info["result"]

    def notified(self, params: Dict[str, Any]) -> None:
        """A ``notifications/tasks/status`` for this task (2025-11-25): keep it, and wake a waiting `wait`."""
        if params.get("taskId") == self.task_id and isinstance(params.get("status"), str):
            with self._lock:
                self._info = {**self._info, **params}
            self._wake.set()

    def wait(self, timeout: Optional[float] = TASK_WAIT, *, on_poll: Optional[Callable[[Task], None]] = None) -> str:
        """Poll until the task ends; returns its final status ("completed", "failed" or "cancelled").

        Questions the task asks (2026-07-28, ``input_required``) are answered with the client's callbacks
        on the way. ``on_poll`` is called with the task after each poll (to show its status and progress).
        Raises `RequestTimeout` when ``timeout`` seconds pass first (the task goes on: wait again, or
        `cancel` it)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            status = self.status()
            if on_poll is not None:
                on_poll(self)
            if status in TERMINAL:
                return status
            if status == INPUT_REQUIRED and self.form == EXTENSION:
                self._answer_questions()
                continue
            if status == INPUT_REQUIRED and self.form == CORE and self._result is None:
                # 2025-11-25: the requestor SHOULD call tasks/result now; a server may hold its questions until
                # then (they come as requests, answered by the callbacks), and it answers once the task ended.
                try:
                    self._fetch_core_result(None if deadline is None else max(0.0, deadline - time.monotonic()))
                except RemoteError:
                    pass  # the task failed: the next tasks/get says so, and result() raises the error
                continue
            pause = self.poll_interval
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise RequestTimeout(f"task {self.task_id} of {self.name} is still {status} after {timeout:g} s")
                pause = min(pause, left)
            self._wake.wait(pause)
            self._wake.clear()

    def _answer_questions(self) -> None:
        requests = self.info.get("inputRequests")
        if not isinstance(requests, dict) or not requests:
            raise RemoteProtocolError(f"task {self.task_id} is input_required without inputRequests")
        answers = {}
        for key, request in requests.items():
            if not isinstance(request, dict) or not isinstance(request.get("method"), str):
                raise RemoteProtocolError(f"task {self.task_id}: input request {key!r} is not {{method, params}}")
            params = request.get("params")
            answers[key] = self._answer(request["method"], params if isinstance(params, dict) else {})
        self._request("tasks/update", {"taskId": self.task_id, "inputResponses": answers})

    def result(self, timeout: Optional[float] = TASK_WAIT) -> t.CallToolResult:
        """The tool's result, once the task has ended (waits as `wait` does).

        A tool that failed as a tool gives its result with ``isError`` (as `Client.call_tool` does).

        Raises:
            RemoteError: the task failed with a protocol error (its code, message and data).
            RequestCancelled: the task was cancelled.
            RequestTimeout: still running after ``timeout`` seconds.
        """
        if self._result is not None:
            return self._result  # type: ignore[return-value]
        status = self.wait(timeout)
        if status == CANCELLED:
            raise RequestCancelled(f"task {self.task_id} of {self.name} was cancelled")
        if self.form == CORE:  # the outcome comes from tasks/result, a result or the error itself
            with self._lock:
                fetched = self._result
            return (fetched if fetched is not None else self._fetch_core_result(timeout))  # type: ignore[return-value]
        if status == FAILED:
            error = self.info.get("error") or {}
            raise RemoteError(int(error.get("code", INTERNAL_ERROR)), str(error.get("message", "task failed")),
                              error.get("data"))
        with self._lock:
            inlined = self._result
        if inlined is None:
            raise RemoteProtocolError(f"task {self.task_id} completed without a result")
        return inlined

    def _fetch_core_result(self, timeout: Optional[float]) -> Dict[str, Any]:
        """2025-11-25 ``tasks/result``: blocks on the server until the task ends (at most ``timeout`` s); its
        result (kept), or its error raised as `RemoteError`."""
        result = dict(self._send("tasks/result", {"taskId": self.task_id}, TASK_WAIT if timeout is None else timeout))
        meta = {key: value for key, value in (result.pop("_meta", None) or {}).items() if key != RELATED_TASK_KEY}
        if meta:
            result["_meta"] = meta
        with self._lock:
            self._result = result
        return result

    def cancel(self) -> None:
        """Ask the server to cancel the task (``tasks/cancel``); a task that already ended is left as it is."""
        if self.task_id is None or self.done:
            return
        try:
            answer = self._request("tasks/cancel", {"taskId": self.task_id})
        except RemoteError as refusal:
            if refusal.code != INVALID_PARAMS:
                raise
            answer = {}  # 2025-11-25 refuses to cancel a task that just ended: see how it ended
        if self.form == CORE and isinstance(answer.get("status"), str):
            self._update(answer)
        else:
            self._refresh()  # the extension acknowledges only; the task says what became of it
        self._wake.set()
