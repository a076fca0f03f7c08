"""The one test timeout, `WAIT`, and `wait_until` for conditions that no event announces.

`WAIT` bounds every single wait in the suite: a test that can hang is a bug. It is generous (10 s) because a
loaded CI machine can stall a thread for seconds; set ``MCPLITE_TEST_WAIT`` to raise it on a slower machine
(or to lower it while hunting a hang). Nothing may *sleep* for WAIT: it is only ever an upper bound.
"""

import os
import time
from typing import Any, Callable


def _wait_from_environment() -> float:
    raw = os.environ.get("MCPLITE_TEST_WAIT", "").strip()
    if not raw:
        return 10.0
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"MCPLITE_TEST_WAIT must be a number of seconds, got {raw!r}") from None
    if not value > 0:
        raise ValueError(f"MCPLITE_TEST_WAIT must be positive, got {raw!r}")
    return value


WAIT = _wait_from_environment()  # seconds any single wait in a test may take before the test fails


def wait_until(predicate: Callable[[], Any], timeout: float = WAIT,
               message: str = "condition not reached in time") -> Any:
    """Poll ``predicate`` until it returns something true, and return that; fail after ``timeout`` s.

    Only for state that no event, queue or condition announces (another thread's bookkeeping, a port that
    starts listening, a process that starts): where something can be waited on, wait on it instead. The poll
    starts at 1 ms and backs off to 50 ms, so quick conditions cost little and slow ones little CPU.
    """
    deadline = time.monotonic() + timeout
    pause = 0.001
    while True:
        value = predicate()
        if value:
            return value
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise AssertionError(f"{message} (waited {timeout:g} s)")
        time.sleep(min(pause, remaining))
        pause = min(pause * 2, 0.05)
