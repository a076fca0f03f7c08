"""One request the gateway passes on to an upstream, and the questions the upstream asks on its way.

A `Call` is the upstream request in flight (its rounds, on 2026-07-28), and a mailbox between whoever drives
it and the front handler that answers the upstream's questions. Most calls take one request, sent from the
thread that has the front's request, and the answer finishes the call on the thread that reads it
(`Call.send_from_front`), so a call starts no thread. A tool call over a stream front waits on no thread at
all: its outcome answers the front from that reading thread (`Call.answer_later`, its timeout kept by
`Deadlines`), until a question hands it to a thread that serves it as the rest are served, waiting in
`Call.serve`. A call that takes more than one request (the upstream's input rounds, a task) is handed to a
driver thread of its own (`Call.hand_off`). The same mailbox serves the four pairings of eras:

    front \\ upstream   handshake (asks with requests)              2026-07-28 (answers input_required)
    handshake          the upstream's elicitation/create reaches   its inputRequests are answered one by one
                       the Call, the front handler asks its        by the front handler with ctx.ask, which
                       client (ctx.ask) and answers                sends its client a request and waits
    2026-07-28         the front handler's ctx.ask suspends it:    the same: the driver keeps the upstream's
                       the front gets input_required, the Call     requestState and retries it when the
                       stays parked here (its id sealed in the     front's answer arrives
                       front's requestState with ctx.remember),
                       and the front's retry answers it

The upstream's request is sent once and stays in flight across the front's rounds: the retry continues the
same upstream call. So a retry must reach this process (docs/gateway.md, "Several workers").
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict

from .._log import log
from ..errors import (CONNECTION_CLOSED, INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND, RequestCancelled,
                      RequestTimeout, RPCError)
from ..protocol import methods
from ..protocol.input_rounds import InputRequest, Suspend

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional, Tuple

    from ..client.tasks import Task
    from ..server.context import Context
    from ..session.pending import PendingRequest

__all__ = ["Call", "CallTable", "Deadlines", "CALL_KEY", "ANSWER_TIMEOUT"]

#: What the front's ``requestState`` remembers the call under (`Context.remember`).
CALL_KEY = "io.mcplite.gateway/call"
#: The key prefix of the upstream's n-th question in the front's input rounds.
QUESTION_KEY = "upstream-"
#: Seconds an upstream question waits for the front's answer (a person may be typing), and how long a finished
#: call whose front went away is kept for a late retry.
ANSWER_TIMEOUT = 600.0

#: Every how many new calls the table drops the finished calls nobody came back for.
_SWEEP_EVERY = 64

#: The client capability each question needs.
_CAPABILITY = {methods.ELICIT: "elicitation", methods.SAMPLING_CREATE: "sampling", methods.ROOTS_LIST: "roots"}


class Call:
    """One request forwarded to an upstream: the front handler sends it (`send_from_front`), or a driver thread
    does (`run`), and the front answers its questions (`serve`). ``front`` is the `Context` of the front execution serving it now (None between the
    rounds of a 2026-07-28 front), where upstream progress and log messages go."""

    def __init__(self, call_id: str, upstream: str, method: str, params: Dict[str, Any]) -> None:
        self.id = call_id
        self.upstream = upstream
        self.method = method
        self.params = params
        self.front: Optional[Context] = None
        self.pending: Optional[PendingRequest] = None  # the upstream request in flight now
        self.task: Optional[Task] = None  # the upstream task this call waits on (a call passed on as a task)
        self.finished_at: Optional[float] = None
        # Guards everything below. The driver's `ask` waits for the front's answer on ``_asking``, a condition of
        # this lock made by the first question (most calls ask none).
        self._lock = threading.Lock()
        self._asking: Optional[threading.Condition] = None
        # The front's wake-up (`serve` waits on it): a lock released once something is posted for the front (an
        # outcome, a question), and taken again by the front. Cheaper than waiting on the condition, whose waker
        # still holds its lock as the waiter wakes (a second switch per call). Released iff _signalled.
        self._signal = threading.Lock()
        self._signal.acquire()
        self._signalled = False
        self._asked = 0  # questions asked so far
        self._question: Optional[Tuple[int, str, Dict[str, Any]]] = None  # the one waiting for its answer
        self._answer: Optional[Tuple[bool, Any]] = None  # (ok, the result or the error) for _question
        self._outcome: Optional[Tuple[bool, Any]] = None  # (ok, the result or the error) of the call
        self._cancelled = False
        #: When the upstream request sent from the front's thread times out (`send_from_front`); None while a
        #: driver thread (which keeps its own time) or nothing waits on it.
        self._expires: Optional[float] = None
        self._timeout = 0.0
        #: Called once with this call when it ends (the upstream stops counting it in flight).
        self.on_finish: Optional[Callable[[Call], None]] = None
        #: While no thread waits for this call (`answer_later`): (what its outcome goes to, what its first
        #: question goes to). Guarded by _lock.
        self._later: Optional[Tuple[Callable[[Call], None], Callable[[Call], None]]] = None

    # ---- the common path: no thread of its own --------------------------------------------------------------
    def send_from_front(self, pending: PendingRequest, timeout: float,
                        settled: Callable[[Call, PendingRequest], None]) -> None:
        """The upstream request was sent from the front handler's thread (the common case: no driver thread).
        ``settled(call, pending)`` runs once, on the thread that settles ``pending`` (the upstream's reader or
        dispatcher), and finishes the call or hands it to a driver thread; `serve` waits for either, and for
        the upstream's questions, cancelling ``pending`` after ``timeout`` seconds."""
        self.watch(pending)
        self._timeout = timeout
        self._expires = time.monotonic() + timeout
        once = threading.Lock()

        def on_settled() -> None:
            if once.acquire(blocking=False):  # (the hook and the check below may both see it settled)
                settled(self, pending)

        pending.on_settled = on_settled
        if pending.done():  # settled before the hook was in place
            on_settled()

    def answer_later(self, complete: Callable[[Call], None], escalate: Callable[[Call], None]) -> None:
        """No thread waits for this call: the front's session took the request, to answer it later. Its outcome
        goes to ``complete(call)``, on the thread that finishes it; its first question to ``escalate(call)``,
        which starts a thread that serves the call (`serve`) from then on, as the usual way does. Set before
        the request is sent (so without the lock: nothing else can touch the call yet)."""
        self._later = (complete, escalate)

    def expire(self) -> None:
        """Its deadline has passed (`Deadlines`): time the call out, unless it has ended or a driver thread,
        which keeps its own time, has taken it over."""
        with self._lock:
            due = self._outcome is None and self._expires is not None
        if due:
            self._time_out()

    def hand_off(self, drive: Callable[[Call], Dict[str, Any]]) -> None:
        """Go on with ``drive`` on a driver thread of its own: the upstream wants more than one request (its
        input rounds, a task), whose waits must outlast a 2026-07-28 front's rounds."""
        self._expires = None
        threading.Thread(target=self.run, args=(drive,), daemon=True,
                         name=f"mcplite-gateway-call-{self.upstream}").start()

    def finish(self, ok: bool, value: Any) -> None:
        """The call's outcome (the first one given counts): the front's `serve` returns or raises it."""
        with self._lock:
            if self._outcome is not None:
                return
            self._outcome = (ok, value)
            self._expires = None
            self.finished_at = time.monotonic()
            wake = not self._signalled
            self._signalled = True
            later, self._later = self._later, None
        on_finish = self.on_finish
        if on_finish is not None:
            on_finish(self)  # (before the front wakes: it does not wait for this thread to let go of the GIL)
        if later is not None:
            later[0](self)  # nobody waits: the front is answered from here
        elif wake:
            self._signal.release()

    @property
    def outcome(self) -> Tuple[bool, Any]:
        """(True, the result) or (False, the error), once the call is `done`."""
        outcome = self._outcome
        assert outcome is not None
        return outcome

    # ---- the driver's side ---------------------------------------------------------------------------------
    def run(self, send: Callable[[Call], Dict[str, Any]]) -> None:
        """Send the request (``send`` does, with its rounds) and keep its outcome for the front."""
        try:
            outcome: Tuple[bool, Any] = (True, send(self))
        except BaseException as exc:  # every failure is the front's to report
            outcome = (False, exc)
        self.finish(*outcome)

    def ask(self, method: str, params: Dict[str, Any]) -> Dict[str, Any]:
        """Ask the front the upstream's question; its answer (raises what the front could not answer with)."""
        deadline = time.monotonic() + ANSWER_TIMEOUT
        with self._lock:
            if self._cancelled:
                raise RequestCancelled("the call was cancelled")
            self._question, self._answer = (self._asked, method, params), None
            self._asked += 1
            asking = self._asking
            if asking is None:
                asking = self._asking = threading.Condition(self._lock)
            if not self._signalled:
                self._signalled = True
                self._signal.release()
            later, self._later = self._later, None
        if later is not None:
            later[1](self)  # nobody serves the front yet: a thread will (`serve`), and take the question
        with self._lock:
            while self._answer is None and not self._cancelled:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                asking.wait(remaining)
            answer = self._taken_answer()
        if answer is None:
            if self._cancelled:
                raise RequestCancelled("the call was cancelled")
            raise RequestTimeout(f"{method}: the client did not answer within {ANSWER_TIMEOUT:g} s")
        ok, value = answer
        if not ok:
            raise value
        return value  # type: ignore[no-any-return]

    def _taken_answer(self) -> Optional[Tuple[bool, Any]]:
        """The answer to the question asked (None: none came), the question cleared. Under the lock."""
        answer, self._question, self._answer = self._answer, None, None
        return answer

    def progress(self, progress: float, total: Optional[float], message: Optional[str]) -> None:
        front = self.front
        if front is not None:
            front.progress(progress, total, message)

    def watch(self, pending: PendingRequest) -> None:
        """The upstream request now in flight: a cancel from the front reaches it."""
        self.pending = pending
        if self._cancelled:
            pending.cancel("cancelled by the gateway's client")

    def watch_task(self, task: Task) -> None:
        """The upstream task this call now waits on: a cancel from the front cancels it (``tasks/cancel``)."""
        self.task = task
        if self._cancelled:
            _cancel_task(task)

    @property
    def task_id(self) -> Optional[str]:
        """The upstream's id of the task this call waits on, or None."""
        task = self.task
        return task.task_id if task is not None else None

    # ---- the front's side ------------------------------------------------------------------------------------
    def cancel(self) -> None:
        """The front cancelled: give up the upstream request (or task) and any question waiting."""
        with self._lock:
            self._cancelled = True
            if self._asking is not None:
                self._asking.notify_all()
        pending = self.pending
        if pending is not None:
            pending.cancel("cancelled by the gateway's client")
        task = self.task
        if task is not None:
            _cancel_task(task)

    @property
    def done(self) -> bool:
        return self._outcome is not None

    @property
    def succeeded(self) -> bool:
        """Whether the upstream answered it with a result."""
        outcome = self._outcome
        return outcome is not None and outcome[0]

    def serve(self, ctx: Context) -> Dict[str, Any]:
        """Answer the upstream's questions through ``ctx`` until the call ends; its result (or its error raised).

        On a 2026-07-28 front an unanswered question unwinds this with `Suspend` (the call stays here)."""
        self.front = ctx
        try:
            while True:
                timed_out = False
                while True:
                    with self._lock:
                        outcome, question = self._outcome, self._question
                        if outcome is not None or (question is not None and self._answer is None):
                            break
                        expires = self._expires
                    if expires is None:
                        self._signal.acquire()
                    elif not self._signal.acquire(timeout=max(expires - time.monotonic(), 0)):
                        with self._lock:  # (a driver may have taken over meanwhile: it keeps its own time)
                            expires = self._expires
                            timed_out = self._outcome is None and expires is not None and time.monotonic() >= expires
                        if timed_out:
                            break
                        continue
                    with self._lock:
                        self._signalled = False  # taken: the next post releases it again
                if timed_out:  # the upstream request sent from the front's thread had no answer in time
                    self._time_out()
                    continue
                if outcome is not None:
                    ok, value = outcome
                    if not ok:
                        raise value
                    return value  # type: ignore[no-any-return]
                assert question is not None
                index, method, params = question
                if method == methods.ELICIT and params.get("mode") == "form":
                    # The upstream says "form" because the gateway declared URL mode too: the front's own
                    # server says it again where its client declared URL mode (Context._legacy_params).
                    params = {name: value for name, value in params.items() if name != "mode"}
                key = f"{QUESTION_KEY}{index}"
                try:
                    answer: Tuple[bool, Any] = (True, ctx.ask({key: InputRequest(method, params,
                                                                                _CAPABILITY.get(method, method))})[key])
                except Suspend:
                    raise
                except RPCError as exc:
                    answer = (False, RPCError(exc.code, exc.message, exc.data))
                except Exception as exc:  # CapabilityError: the front's client cannot answer this kind
                    answer = (False, RPCError(METHOD_NOT_FOUND, f"the gateway's client cannot answer {method}: {exc}"))
                with self._lock:
                    if self._question is not None and self._question[0] == index and self._answer is None:
                        self._answer = answer
                        if self._asking is not None:
                            self._asking.notify_all()
        finally:
            self.front = None

    def _time_out(self) -> None:
        """Give up the upstream request sent from the front (`send_from_front`): it settles with
        `RequestTimeout` (and the upstream is told), which finishes the call."""
        pending = self.pending
        assert pending is not None
        self.finish(False, RequestTimeout(f"{self.method} timed out after {self._timeout:g} s"))
        pending.cancel(f"timed out after {self._timeout:g} s")


class CallTable:
    """The calls in flight in this gateway process, by id: a 2026-07-28 front's retry finds its call here."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # guards _calls
        self._calls: Dict[str, Call] = {}
        self._added = 0  # calls added so far

    def add(self, call: Call) -> None:
        with self._lock:
            self._added += 1
            if self._added % _SWEEP_EVERY == 0:
                # Calls whose front never came back for the outcome (a 2026-07-28 client that gave up between
                # rounds): dropped a while after they ended, now and then on a new call rather than by a thread
                # of their own.
                now = time.monotonic()
                stale = [key for key, old in self._calls.items()
                         if old.finished_at is not None and now - old.finished_at > ANSWER_TIMEOUT]
                for key in stale:
                    del self._calls[key]
            self._calls[call.id] = call

    def get(self, call_id: str) -> Optional[Call]:
        with self._lock:
            return self._calls.get(call_id)

    def discard(self, call: Call) -> None:
        with self._lock:
            if self._calls.get(call.id) is call:
                del self._calls[call.id]

    def cancel_all(self) -> None:
        with self._lock:
            calls = list(self._calls.values())
            self._calls.clear()
        for call in calls:
            call.cancel()


class Deadlines:
    """Times out the calls that no thread waits for (`Call.answer_later`): one thread per gateway, started by
    the first such call and asleep until the earliest deadline.

    The calls are kept by timeout, each group in the order they were added, so its first is its earliest, and
    a call leaves when it ends (`discard`): an ended call is not kept until its deadline. The thread never
    sleeps past the longest timeout it knows, so a call added while it sleeps wakes it only if its timeout is
    shorter than any before: a gateway whose upstreams share a timeout wakes it for none."""

    def __init__(self) -> None:
        # Guards everything below; the thread waits on _wake, a condition of it.
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._groups: Dict[float, OrderedDict[Call, float]] = {}
        self._wakes_at = 0.0  # when the thread looks next (0: it does not run yet)
        self._closed = False

    def add(self, call: Call, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        with self._lock:
            if self._closed:  # (the gateway is closing: its upstreams end every call)
                return
            group = self._groups.get(timeout)
            if group is None:
                group = self._groups[timeout] = OrderedDict()
            group[call] = deadline
            if not self._wakes_at:
                self._wakes_at = deadline
                threading.Thread(target=self._run, name="mcplite-gateway-deadlines", daemon=True).start()
            elif deadline < self._wakes_at:
                self._wake.notify()

    def discard(self, call: Call, timeout: float) -> None:
        with self._lock:
            group = self._groups.get(timeout)
            if group is not None:
                group.pop(call, None)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._wake.notify()

    def _run(self) -> None:
        with self._lock:
            while not self._closed:
                now = time.monotonic()
                due: List[Call] = []
                wakes_at = now + max(self._groups)  # (no call yet: a call added now is due no sooner)
                for group in self._groups.values():
                    while group:
                        call, deadline = next(iter(group.items()))
                        if deadline > now:
                            wakes_at = min(wakes_at, deadline)
                            break
                        del group[call]
                        due.append(call)
                if due:
                    self._lock.release()
                    try:
                        for call in due:
                            call.expire()
                    finally:
                        self._lock.acquire()
                    continue
                self._wakes_at = wakes_at
                self._wake.wait(wakes_at - now)


def _cancel_task(task: Task) -> None:
    """``tasks/cancel`` to the upstream, on a thread of its own: the canceller (the front's cancel, on a session
    thread) does not wait for the upstream's answer; the call's driver sees the task end."""
    def cancel() -> None:
        try:
            task.cancel()
        except Exception as exc:  # the upstream went away, or the task ended meanwhile
            log.info("gateway: cancelling task %s upstream failed: %s", task.task_id, exc)

    threading.Thread(target=cancel, name="mcplite-gateway-cancel", daemon=True).start()


def gone(upstream: str) -> RPCError:
    """The error for a 2026-07-28 retry whose call is not in this process."""
    return RPCError(INVALID_PARAMS, f"the gateway no longer holds the call to {upstream!r} this input round "
                                    "continues (it ended, timed out, or another gateway process holds it): call again")


def unavailable(upstream: str, cause: str) -> RPCError:
    """The error for a request to an upstream that is down (or went down meanwhile): -32000, the code SDKs give
    a closed connection, with a message naming the upstream and why (a tool call answers it as an error
    result instead)."""
    return RPCError(CONNECTION_CLOSED, f"upstream {upstream!r} is unavailable: {cause}")


def log_failure(upstream: str, method: str, exc: BaseException) -> None:
    log.info("gateway: %s to %s failed: %s", method, upstream, exc)
