"""Fixtures shared by the test modules (helpers live in the support package), and subprocess coverage."""

import os
import sys
from pathlib import Path
from typing import Any, Iterator, List

import pytest
from support import ROOT, RawPeer
from support.servers import HARNESS_ENV

from mcplite.transports.memory import memory_pair


def pytest_configure(config: pytest.Config) -> None:
    measure_subprocesses()
    hear_ctrl_c()


def hear_ctrl_c() -> None:
    """Take Ctrl-C back when this run was started with SIGINT ignored (a shell's background job without job
    control: ``nohup cmd &``). Every process the tests start would inherit the ignore, and the tests that stop a
    server or a command with Ctrl-C would wait for an exit that never comes. A handler, unlike an ignore, is not
    inherited: the children get the default again."""
    import signal

    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def measure_subprocesses() -> None:
    """When this run is measured (``coverage run -m pytest``), make the Python processes it spawns measure too.

    Each such process starts coverage from ``COVERAGE_PROCESS_START`` (this checkout's setup.cfg, whose
    ``parallel = true`` gives every process its own data file) and writes next to this run's data file,
    whatever its working directory, for ``coverage combine`` to merge. Nothing changes in a plain run.
    """
    coverage = sys.modules.get("coverage")
    current = coverage.Coverage.current() if coverage is not None else None
    if current is None:
        return
    os.environ.setdefault("COVERAGE_PROCESS_START", str(ROOT / "setup.cfg"))
    os.environ.setdefault("COVERAGE_FILE", os.path.abspath(current.config.data_file))
    startup = str(Path(__file__).resolve().parent / "support" / "coverage_startup")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [startup, os.environ.get("PYTHONPATH")]))
    # A server spawned by this process inherits only stdio.INHERITED_ENV_VARS: in a measured run it inherits
    # coverage's settings too, so every test's server is measured without each test passing them.
    # (A server spawned by a `mcplite` subprocess gets them from the test: support.harness_env_options.)
    from mcplite.transports import stdio

    stdio.INHERITED_ENV_VARS += tuple(name for name in HARNESS_ENV if name not in stdio.INHERITED_ENV_VARS)


@pytest.fixture(autouse=True)
def fresh_era_verdicts() -> Iterator[None]:
    """Each test starts with no era verdict kept (`client.era`): the verdicts are per process and keyed by URL,
    and tests reuse ports, so a server of another era on a port an earlier test used would be taken for that
    test's server until its first request is refused."""
    from mcplite.client import era

    era.forget_verdicts()
    yield


@pytest.fixture
def raw_pair():
    """(session-side transport, RawPeer on the other end)."""
    ours, theirs = memory_pair()
    peer = RawPeer(theirs)
    yield ours, peer
    theirs.close()


@pytest.fixture
def cleanup() -> Iterator[List[Any]]:
    """A list a test appends what it starts to (anything with ``stop()``: real servers, proxies); each is
    stopped when the test ends, the last started first, whether it passed or not."""
    started: List[Any] = []
    yield started
    for thing in reversed(started):
        thing.stop()
