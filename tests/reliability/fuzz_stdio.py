"""Scenario stdio-fuzz: a real stdio server fed hostile frames with control requests among them.

The server is ``python -m mcplite serve tests/reliability/server.py``. After a valid handshake, frames go
in large batches: nine hostile frames (`frames.fuzz_frame`) for each control request (a ``tools/call`` of
``echo`` or a ``ping`` with an integer id from `VALID_BASE`). A reader thread takes every line the server
writes. Passing means: each control request answered exactly once and correctly, every line the server
wrote is strict JSON, no traceback on its stderr, and the server still alive at the end, then leaving at
EOF with status 0.
"""

import json
import subprocess
import threading
import time
from typing import Any, Dict, List

from .frames import VALID_BASE, VALID_END, encode, fuzz_frame
from .harness import Result, Run, scenario, stdio_server_argv

#: Frames written per write(): large batches keep the pipe full, which is what makes a million affordable.
BATCH = 4000


def _reject_constant(name: str) -> Any:
    raise ValueError(f"non-standard JSON constant {name}")


class _Answers:
    """Reads the server's stdout on a thread: counts the answers to control requests by id."""

    def __init__(self, process: "subprocess.Popen[bytes]") -> None:
        self._process = process
        self.counts: Dict[int, int] = {}
        self.wrong: List[str] = []
        self.not_json: List[bytes] = []
        self.lines = 0
        # Signalled whenever a control answer arrives, so the writer's final wait needs no polling.
        self.arrived = threading.Condition()
        self.thread = threading.Thread(target=self._read, name="stdio-fuzz-reader", daemon=True)
        self.thread.start()

    def _read(self) -> None:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            self.lines += 1
            try:
                value = json.loads(line, parse_constant=_reject_constant)
            except ValueError:
                self.not_json.append(line[:200])
                continue
            for message in value if isinstance(value, list) else [value]:
                self._note(message)
        with self.arrived:
            self.arrived.notify_all()

    def _note(self, message: Any) -> None:
        if not isinstance(message, dict):
            return
        id = message.get("id")
        if type(id) is not int or not VALID_BASE <= id < VALID_END:
            return
        with self.arrived:
            self.counts[id] = self.counts.get(id, 0) + 1
            self.arrived.notify_all()
        n = id - VALID_BASE
        result = message.get("result")
        expected: Any = {} if n % 2 else {"result": n}
        got = result if n % 2 else (result or {}).get("structuredContent")
        if got != expected:
            self.wrong.append(f"id {id}: {json.dumps(message)[:200]}")

    def wait_for(self, ids: int, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        with self.arrived:
            while len(self.counts) < ids and self.thread.is_alive():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return
                self.arrived.wait(remaining)


def _control(n: int) -> bytes:
    """Control request n: an echo of n (even n) or a ping (odd n)."""
    if n % 2:
        return encode({"jsonrpc": "2.0", "id": VALID_BASE + n, "method": "ping"})
    return encode({"jsonrpc": "2.0", "id": VALID_BASE + n, "method": "tools/call",
                   "params": {"name": "echo", "arguments": {"n": n}}})


@scenario("stdio-fuzz", quick_timeout=150, long_timeout=1800)
def stdio_fuzz(run: Run) -> Result:
    total = run.size(20_000, 1_000_000)
    result = Result()
    process = run.spawn(stdio_server_argv())
    assert process.stdin is not None and process.stderr is not None
    stderr_lines: List[bytes] = []
    drain = threading.Thread(target=lambda: stderr_lines.extend(process.stderr), daemon=True)  # type: ignore[arg-type]
    drain.start()
    answers = _Answers(process)
    handshake = [encode({"jsonrpc": "2.0", "id": "init", "method": "initialize",
                         "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                                    "clientInfo": {"name": "stdio-fuzz", "version": "1"}}}),
                 encode({"jsonrpc": "2.0", "method": "notifications/initialized"})]
    started = time.monotonic()
    frames = controls = 0
    batch: List[bytes] = handshake
    try:
        while frames < total:
            if frames % 10 == 9:
                batch.append(_control(controls))
                controls += 1
            else:
                batch.append(fuzz_frame(run.rng))
            frames += 1
            if len(batch) >= BATCH or frames == total:
                process.stdin.write(b"\n".join(batch) + b"\n")
                process.stdin.flush()
                batch = []
        answers.wait_for(controls, 60)
    except BrokenPipeError:
        result.problems.append(f"the server closed its stdin after {frames} frames")
    elapsed = time.monotonic() - started
    alive = process.poll() is None
    exit_started = time.monotonic()
    try:
        process.stdin.close()
    except BrokenPipeError:
        pass
    try:
        code = process.wait(10)
    except subprocess.TimeoutExpired:
        code = None
    exit_time = time.monotonic() - exit_started
    answers.thread.join(10)
    drain.join(10)
    lost = sum(1 for n in range(controls) if VALID_BASE + n not in answers.counts)
    duplicated = sum(count - 1 for count in answers.counts.values())
    tracebacks = sum(1 for line in stderr_lines if line.startswith(b"Traceback"))
    result.figures.update(frames=frames, controls=controls, answered=len(answers.counts), lost=lost,
                          duplicated=duplicated, wrong=len(answers.wrong), not_json=len(answers.not_json),
                          lines_out=answers.lines, stderr_lines=len(stderr_lines), tracebacks=tracebacks,
                          frames_per_s=int(frames / elapsed) if elapsed else 0, exit=f"{code}@{exit_time:.2f}s")
    result.check(alive, "the server died during the run")
    result.check(lost == 0, f"{lost} control requests never answered (first: "
                 f"{[n for n in range(controls) if VALID_BASE + n not in answers.counts][:5]})")
    result.check(duplicated == 0, f"{duplicated} duplicated answers")
    result.check(not answers.wrong, f"wrong answers: {answers.wrong[:3]}")
    result.check(not answers.not_json, f"lines on stdout that are not strict JSON: {answers.not_json[:3]}")
    result.check(tracebacks == 0, "tracebacks on stderr: " + " | ".join(
        line.decode("utf-8", "replace").strip() for line in stderr_lines if line.startswith(b"Traceback"))[:300])
    result.check(code == 0, f"the server did not leave with status 0 within 10 s of EOF (status {code})")
    return result
