"""Files and directories mcplite creates, made readable by their owner only.

What mcplite writes to disk is private: OAuth tokens, and the SQLite stores of tasks and stream events, whose rows
hold tool results and session ids. A file is created with mode 0600 and a directory with 0700, at the moment of
creation (``os.open``/``os.mkdir`` with that mode, then ``fchmod`` so an unusual umask cannot leave the owner
without write access), never by a ``chmod`` afterwards that would leave a moment when others may open it; and
without changing the umask, which is the whole process's, not this thread's.

A file or directory that already exists keeps its mode: a deployment may share a store between users on
purpose (a group that several services run as), and a quiet ``chmod`` of someone's file would break that.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import os

__all__ = ["create_private_file", "create_private_database", "private_directories", "FILE_MODE", "DIRECTORY_MODE"]

FILE_MODE = 0o600
DIRECTORY_MODE = 0o700


def private_directories(directory: str) -> None:
    """Make ``directory`` and each missing parent of it with mode 0700 (``os.makedirs`` gives that mode to the
    last one only). Directories that exist are left as they are."""
    missing = []
    path = os.path.abspath(directory)
    while not os.path.isdir(path):
        missing.append(path)
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    for path in reversed(missing):
        try:
            os.mkdir(path, DIRECTORY_MODE)
        except FileExistsError:
            continue  # another process made it meanwhile: its mode is its maker's
        _set_mode(path, DIRECTORY_MODE)


def create_private_file(path: str) -> bool:
    """Create the empty file ``path`` with mode 0600, unless it exists; True when this call created it.

    ``O_EXCL`` makes the creation atomic: the file is this call's, with its mode, or it was there before (a
    symbolic link counts as there, even a dangling one, so this never creates a file somewhere else).
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        descriptor = os.open(path, flags, FILE_MODE)
    except FileExistsError:
        return False
    try:
        if hasattr(os, "fchmod"):  # POSIX: exactly 0600, whatever the umask took away
            os.fchmod(descriptor, FILE_MODE)
    finally:
        os.close(descriptor)
    return True


def create_private_database(path: str) -> None:
    """Before ``sqlite3.connect(path)``: create the database file with mode 0600 when it does not exist.

    SQLite gives the files it makes beside a database (``-wal``, ``-shm``, ``-journal``) the database file's
    own mode, so they are private too. Nothing to do for an in-memory or temporary database (``":memory:"``,
    ``""``); a path that cannot be created (no such directory, no permission) is left to ``sqlite3.connect``,
    which reports it as it always has.
    """
    if path in ("", ":memory:"):
        return
    try:
        create_private_file(path)
    except OSError:
        pass


def _set_mode(path: str, mode: int) -> None:
    """The exact mode for a directory this process just made (the umask may have taken bits from it)."""
    if os.name == "posix":
        try:
            os.chmod(path, mode)  # ours since the mkdir above; 0700 & ~umask is never wider than 0700
        except OSError:
            pass
