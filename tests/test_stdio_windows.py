"""The Windows half of stopping a stdio server's whole tree, checked where it can be off Windows.

On Windows a server runs in a process group of its own (CREATE_NEW_PROCESS_GROUP): close() sends the group
CTRL_BREAK_EVENT, then ends the server's process tree with ``taskkill /F /T``, which reaches a server behind
``cmd /c`` or ``npx``. There is no Windows machine here: these tests check the command and how a failure of it
falls back, with a stand-in for ``subprocess.run``; the POSIX path is tested for real in test_stdio.py.
"""

import subprocess
from typing import Any, List

from mcplite.transports.stdio import _kill_tree, _taskkill_command


class Done:
    def __init__(self, returncode: int) -> None:
        self.returncode = returncode


def test_the_tree_is_ended_by_pid_forcefully_and_with_its_children() -> None:
    assert _taskkill_command(4242) == ["taskkill", "/F", "/T", "/PID", "4242"]


def test_kill_tree_runs_taskkill_and_reports_success() -> None:
    ran: List[Any] = []

    def run(command: List[str], **options: Any) -> Done:
        ran.append((command, options["timeout"]))
        return Done(0)

    assert _kill_tree(7, run) is True
    assert ran == [(["taskkill", "/F", "/T", "/PID", "7"], 10)]


def test_kill_tree_reports_failure_so_that_close_falls_back_to_killing_the_server() -> None:
    def missing(command: List[str], **options: Any) -> Done:
        raise FileNotFoundError("taskkill")

    def hung(command: List[str], **options: Any) -> Done:
        raise subprocess.TimeoutExpired(command, 10)

    assert _kill_tree(7, missing) is False
    assert _kill_tree(7, hung) is False
    assert _kill_tree(7, lambda command, **options: Done(128)) is False  # no such process
