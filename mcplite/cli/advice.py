"""What went wrong, said once, with the next step: the messages for the failures a new user meets first.

`explain` turns an exception (and what the command line said: the target, the options, the server's last
stderr lines) into the line `main` prints, or None for the plain ``Type: message``. docs/troubleshooting.md
lists each case; tests/test_mistakes.py runs each one against a real server.
"""

import argparse
import os
import shlex
import shutil
from typing import Any, List, Optional, Sequence
from urllib.parse import urlsplit, urlunsplit

from ..errors import MISSING_REQUIRED_CLIENT_CAPABILITY, ConnectionClosed, HTTPError, RPCError, SessionExpired, \
    TransportError
from .targets import Target

#: The server's stderr lines kept for a message when ``--server-stderr hide`` drops the rest.
STDERR_TAIL_LINES = 20
#: The ones of them shown under an error (the end of a traceback is the part that says what happened).
STDERR_SHOWN_LINES = 10


def explain(exc: BaseException, target: Optional[Target], args: Optional[argparse.Namespace],
            stderr_tail: Sequence[str] = ()) -> Optional[str]:
    """The message for ``exc`` with the next step, or None when there is nothing better to say than its text."""
    if isinstance(exc, HTTPError) and not isinstance(exc, SessionExpired) and target is not None and target.url:
        if exc.status == 401:
            return _unauthorized(target, args)
        if exc.status == 404:
            return _not_found(target.url)
    if isinstance(exc, RPCError) and exc.code == MISSING_REQUIRED_CLIENT_CAPABILITY and "elicitation" in exc.message:
        return f"{type(exc).__name__}: {exc.message}: {ELICITATION_ADVICE}"
    if isinstance(exc, TransportError) and isinstance(exc.__cause__, OSError) and target is not None and target.argv:
        return _cannot_start(exc.__cause__, target)
    if isinstance(exc, ConnectionClosed) and target is not None and target.argv:
        return _server_died(exc, target, args, stderr_tail)
    return None


#: Why a tool that asks the user failed, and how to let it ask (`--ask`).
ELICITATION_ADVICE = ("the tool asks the user a question (elicitation), and mcplite offers to answer only when "
                      "stdin is a terminal or with --ask. Add --ask: the questions go to stderr and the answers "
                      "are read from stdin (from a pipe, one line per answer; the end of the input cancels)")


def _unauthorized(target: Target, args: Optional[argparse.Namespace]) -> str:
    head = f"HTTP 401 Unauthorized from {target.url}"
    if any(name.lower() == "authorization" for name in target.headers):
        return f"{head}: the server refused the Authorization header given: check the token, or sign in with --auth " \
               "(OAuth) instead"
    if args is not None and getattr(args, "auth", False):
        return f"{head}, even after signing in with --auth: the token lacks what the server wants"
    return f"{head}: the server wants credentials. Sign in with --auth (OAuth: the browser opens), or send a " \
           "token with --header 'Authorization: Bearer TOKEN'"


def _not_found(url: str) -> str:
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    if path.endswith("/mcp") or path.endswith("/sse"):
        step = "check the URL's path (mcplite serve --http answers at /mcp, and /sse for legacy HTTP+SSE)"
    else:
        guess = urlunsplit(parts._replace(path=path + "/mcp", query="", fragment=""))
        step = f"check the URL's path: MCP servers usually answer at /mcp ({guess})"
    return f"HTTP 404 Not Found from {url}: no MCP endpoint at this path; {step}"


def _cannot_start(error: OSError, target: Target) -> str:
    assert target.argv is not None
    command, rest = target.argv[0], target.argv[1:]
    where = os.path.join(target.cwd or os.getcwd(), command)
    python = "python3" if shutil.which("python3") else "python"
    if isinstance(error, PermissionError) and os.path.isfile(where):
        fix = f"run it with its interpreter: -- {_line([python, command, *rest])}" if command.endswith(".py") \
            else f"make it executable (chmod +x {shlex.quote(command)})"
        return f"cannot start {command}: it is not executable; {fix}"
    if isinstance(error, FileNotFoundError):
        if command.endswith(".py"):
            return f"cannot start {command}: a Python file is not a command; run it with Python: " \
                   f"-- {_line([python, command, *rest])}"
        if os.path.isfile(where) and os.sep not in command:
            return f"cannot start {command}: a file here is not a command on PATH; name it as a path: " \
                   f"-- {_line(['./' + command, *rest])}"
        if command == "python" and shutil.which("python3"):
            return f"cannot start python: there is no 'python' command here, but python3 is: " \
                   f"-- {_line(['python3', *rest])}"
        if os.sep in command or (os.altsep and os.altsep in command):
            return f"cannot start {command}: no such file (or its #! interpreter is missing)"
        return f"cannot start {command}: no command of that name on PATH; check the spelling, or give its full path"
    return f"cannot start {command}: {error.strerror or error}"


def _server_died(exc: ConnectionClosed, target: Target, args: Optional[argparse.Namespace],
                 stderr_tail: Sequence[str]) -> Optional[str]:
    lines: List[str] = []
    hidden = args is not None and getattr(args, "server_stderr", "show") == "hide"
    if stderr_tail and hidden:  # (shown, they are above already)
        shown = list(stderr_tail)[-STDERR_SHOWN_LINES:]
        lines += ["the server's last lines on stderr:"] + ["  " + line for line in shown]
    missing_path = "PYTHONPATH" in os.environ and not target.inherit_env and "PYTHONPATH" not in (target.env or {})
    if missing_path and any("No module named" in line for line in stderr_tail):
        lines.append("(a server inherits no PYTHONPATH: pass it with -e PYTHONPATH=\"$PYTHONPATH\", or use "
                     "--inherit-env)")
    if not lines:
        return None
    return " ".join(f"{type(exc).__name__}: {exc}".split()) + "\n" + "\n".join(lines)


def _line(words: Sequence[Any]) -> str:
    return " ".join(shlex.quote(str(word)) for word in words)
