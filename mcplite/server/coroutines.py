"""Handlers written ``async def``: each call runs to completion on the worker thread that serves its request.

mcplite serves with threads, not asyncio. A handler that is a coroutine function (a tool, a resource or
template, a prompt, a completer, a task's tool) returns a coroutine; `run` runs it on an event loop private
to the calling thread, made by that thread's first such call and kept for its later ones (`threading.local`),
so no loop is set up per call and no loop is shared between threads. `asyncio` itself is imported by the first
coroutine run, never by a server whose handlers are all plain functions.

`Context` methods work from inside such a handler as they do from a plain one: they block until they are
done (a progress notification written, an elicitation answered). That blocks the handler's loop meanwhile,
which harms nobody: the loop is that one thread's, and serves that one request.

Cancellation: when the client cancels the request (``notifications/cancelled``, a closed connection, a
``tasks/cancel``), the coroutine gets `asyncio.CancelledError` at its next ``await``; if it lets it through,
the handler ends as a cancelled plain handler does (the request gets no answer; the task stays cancelled).
What the handler starts with ``asyncio.create_task`` and does not await runs only while a later handler runs
on the same thread: await what you start.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import threading
import types

from .._sync import LazyEvent

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    import asyncio
    from typing import Any, Callable, Coroutine, Optional

__all__ = ["COROUTINE", "run", "watch_cancel"]

#: What calling an ``async def`` function returns (`types.CoroutineType`): the class a handler's value is
#: compared with (``value.__class__ is COROUTINE``: the cheapest test, made on every call of every handler).
COROUTINE = types.CoroutineType


class _ThreadLoop(threading.local):
    """This thread's event loop (None until its first coroutine), closed when the thread ends."""

    loop: Optional[asyncio.AbstractEventLoop] = None
    closer: Optional[_Closer] = None


class _Closer:
    """Closes a thread's loop when the thread ends (its thread-local values are dropped then)."""

    __slots__ = ("loop",)

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop

    def __del__(self) -> None:
        try:
            self.loop.close()
        except Exception:  # at interpreter exit the loop's modules may be half gone; nothing to save then
            pass


_thread = _ThreadLoop()
#: `asyncio`, once the first coroutine has imported it (an import statement per call would cost ~10k
#: instructions: tests/bench/README.md).
_asyncio: Any = None


class _Watched(LazyEvent):
    """A request's (or task's) cancel flag while its coroutine runs: set, it also cancels the coroutine.

    It stands in for the flag it replaces (``before``) and reads it too, so a cancel that reached the old flag
    as the swap happened still counts."""

    __slots__ = ("_before", "on_set")

    def __init__(self, before: LazyEvent, on_set: Optional[Callable[[], Any]]) -> None:
        super().__init__()
        self._before = before
        self.on_set = on_set

    def is_set(self) -> bool:
        return self._set or self._before.is_set()

    def set(self) -> None:
        super().set()
        on_set = self.on_set
        if on_set is not None:
            on_set()


def watch_cancel(holder: Any, callback: Callable[[], Any]) -> Callable[[], None]:
    """Call ``callback()`` when ``holder``'s ``cancelled`` flag is set (at once when it already is): the flag is
    replaced, for good, by one that also calls it (`_Watched`). Returns the function that takes the callback
    back. ``holder``: a request's `RequestContext`, or a task's record of what runs."""
    before: LazyEvent = holder.cancelled
    watched = _Watched(before, callback)
    holder.cancelled = watched
    if before.is_set():
        watched.on_set = None
        callback()

    def forget() -> None:
        watched.on_set = None  # a cancel from now on has nothing to stop
    return forget


def _loop() -> asyncio.AbstractEventLoop:
    """This thread's event loop, made by its first call."""
    global _asyncio
    loop = _thread.loop
    if loop is None or loop.is_closed():
        if _asyncio is None:
            import asyncio

            _asyncio = asyncio
        loop = _thread.loop = _asyncio.new_event_loop()
        _thread.closer = _Closer(loop)
    return loop


def run(coroutine: Coroutine[Any, Any, Any], holder: Any, cancelled: Callable[[], BaseException]) -> Any:
    """Run a handler's coroutine to its end on this thread's loop, and return its value (or raise its error).

    ``holder`` has the ``cancelled`` flag (a `LazyEvent`) whose setting cancels the coroutine: the request's
    `RequestContext`, or a task's record of what runs. A coroutine that ends by that cancel raises
    ``cancelled()`` instead of the `asyncio.CancelledError` (a BaseException no caller expects); one cancelled
    by anything else is an error of the handler's (RuntimeError).

    The loop first runs once (`loop.stop` before `run_forever`: one pass over what is ready), which is all a
    handler that never waits on anything needs: most do. Only one that is still waiting after it has its flag
    replaced, for good, by one that also cancels it (`_Watched`), and the loop run until it ends. A cancel
    cannot interrupt the first pass, which runs without a pause; one that came meanwhile is seen right after.
    """
    loop = _loop()
    task = loop.create_task(coroutine)
    before: LazyEvent = holder.cancelled
    if before.is_set():  # cancelled already: the coroutine starts cancelled
        task.cancel()
    loop.stop()
    loop.run_forever()
    if not task.done():
        # (a cancel that came during the first pass is seen at once: `watch_cancel` calls the callback then)
        forget = watch_cancel(holder, lambda: loop.call_soon_threadsafe(task.cancel))
        try:
            loop.run_until_complete(task)
        except _asyncio.CancelledError:
            pass  # told apart below
        finally:
            forget()  # a cancel from now on has no coroutine to interrupt
    if task.cancelled():
        if holder.cancelled.is_set():
            raise cancelled() from None
        raise RuntimeError("the handler's coroutine was cancelled (not by the client)") from None
    return task.result()
