"""`Inspecting`: ``python -m mcplite inspect`` run as a real subprocess, its URL read from its first line of stdout,
stopped with Ctrl-C (SIGINT) at the end, and `everything_over_http`, the everything server over HTTP."""

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Iterator, List, Optional
from urllib.parse import parse_qs, urlsplit

from . import ROOT
from .servers import Running, free_port, python_env
from .wait import WAIT

EVERYTHING = str(ROOT / "examples" / "everything_server.py")


def processes_marked(mark: str) -> List[int]:
    """The pids of the processes whose environment holds ``MCPLITE_TEST_MARK=mark`` (Linux: /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if f"MCPLITE_TEST_MARK={mark}".encode() in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


class Inspecting:
    """A running ``mcplite inspect``: ``url`` (the first line it printed), ``printed_at`` (monotonic time of that)."""

    def __init__(self, *argv: str) -> None:
        self.mark = uuid.uuid4().hex  # in the environment of the server it spawns too (-e), to find it afterwards
        stdio = not any(word.startswith("http://") for word in argv)
        options = ["--server-stderr", "hide", "-e", f"MCPLITE_TEST_MARK={self.mark}"] if stdio else []
        command = [sys.executable, "-m", "mcplite", *options, *argv]
        self.process = subprocess.Popen(command, env=python_env(MCPLITE_TEST_MARK=self.mark), cwd=str(ROOT),
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line: List[str] = []
        reader = threading.Thread(target=lambda: line.append(self.process.stdout.readline()  # type: ignore[union-attr]
                                                             ), daemon=True)
        reader.start()
        reader.join(3 * WAIT)
        self.printed_at = time.monotonic()
        if not line or not line[0].startswith("http://"):
            self.process.kill()
            raise AssertionError(f"inspect printed no URL: {line!r}\n{self.process.stderr.read()}")  # type: ignore[union-attr]
        self.url = line[0].strip()
        parts = urlsplit(self.url)
        self.port = int(parts.port or 0)
        self.token = parse_qs(parts.query)["token"][0]

    def stop(self) -> int:
        """Ctrl-C, as a person would; returns the exit status."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(WAIT)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(WAIT)
                raise AssertionError("inspect did not stop on Ctrl-C")
        return int(self.process.returncode)


@contextlib.contextmanager
def inspecting(*argv: str) -> Iterator[Inspecting]:
    running = Inspecting(*argv)
    try:
        yield running
    finally:
        running.stop()


@contextlib.contextmanager
def everything_over_http(tmp_path: Path) -> Iterator[str]:
    """The everything server over Streamable HTTP on a free port; yields its /mcp URL."""
    port = free_port()
    server = Running("everything server", [sys.executable, "-m", "mcplite", "serve", EVERYTHING, "--http",
                                           f"127.0.0.1:{port}"], tmp_path / "everything.log", env=python_env())
    try:
        server.wait_for_port(port)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.stop()


def still_running(pids: List[int], wait: Optional[float] = None) -> List[int]:
    """Those of ``pids`` still alive after up to ``wait`` seconds."""
    deadline = time.monotonic() + (WAIT if wait is None else wait)
    while True:
        alive = [pid for pid in pids if Path(f"/proc/{pid}").exists() and
                 b"zombie" not in Path(f"/proc/{pid}/status").read_bytes().lower()]
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.05)
