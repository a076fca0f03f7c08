"""Threads in tests: `run_concurrently` for N workers at once, `Background` for one call that runs aside.

Both join with a timeout and check ``is_alive()`` before they look at what a thread recorded: a thread still
running after its join has recorded nothing yet, and ``assert not errors`` would pass on a hang.
"""

import threading
import time
from typing import Any, Callable, Iterable, List, Optional, Tuple

from .wait import WAIT


def run_concurrently(target: Callable[[Any], Any], inputs: Iterable[Any], timeout: float = WAIT) -> List[Any]:
    """Call ``target(x)`` for every ``x`` of ``inputs``, each in its own thread, all at once.

    Waits at most ``timeout`` s for all of them together; fails if any is still running, re-raises the first
    error any of them raised, and otherwise returns their results in the order of ``inputs``.
    """
    items = list(inputs)
    results: List[Any] = [None] * len(items)
    errors: List[Tuple[int, BaseException]] = []
    errors_lock = threading.Lock()  # guards errors: workers fail at the same time

    def work(index: int, item: Any) -> None:
        try:
            results[index] = target(item)
        except BaseException as exc:  # reported to the test thread below
            with errors_lock:
                errors.append((index, exc))

    threads = [threading.Thread(target=work, args=(index, item), name=f"run_concurrently-{index}", daemon=True)
               for index, item in enumerate(items)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + timeout
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    stuck = [items[index] for index, thread in enumerate(threads) if thread.is_alive()]
    assert not stuck, f"{len(stuck)} of {len(items)} workers still running after {timeout:g} s: inputs {stuck!r}"
    if errors:
        index, first = min(errors, key=lambda entry: entry[0])
        raise AssertionError(f"{len(errors)} of {len(items)} workers failed; the first, for input "
                             f"{items[index]!r}: {first!r}") from first
    return results


class Background:
    """One call running in a daemon thread, started at once: ``join()`` returns its result or raises its error.

    For tests that must do something while the call is blocked (and may check `is_alive` in between).
    """

    def __init__(self, target: Callable[..., Any], *args: Any, name: Optional[str] = None) -> None:
        self._target = target
        self._args = args
        self._result: Any = None
        self._error: Optional[BaseException] = None
        name = name or f"background {getattr(target, '__qualname__', target)!s}"
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._result = self._target(*self._args)
        except BaseException as exc:  # re-raised by join() in the test thread
            self._error = exc

    def is_alive(self) -> bool:
        return self._thread.is_alive()

    def wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` s for the call to end, without failing; True if it has ended."""
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def join(self, timeout: float = WAIT) -> Any:
        """Wait up to ``timeout`` s for the call to end; fail if it has not, else return its result or raise."""
        self._thread.join(timeout)
        assert not self._thread.is_alive(), f"{self._thread.name} still running after {timeout:g} s"
        if self._error is not None:
            raise self._error
        return self._result
