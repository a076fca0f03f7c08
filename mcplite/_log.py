"""The package's loggers, imported on first use: ``mcplite`` (everything) and ``mcplite.access`` (HTTP).

    logger            what it says                                             level
    mcplite           a tool that raised (with its traceback), a peer that     WARNING
                      broke the protocol, a connection that failed
                      requests refused, streams dropped, era decisions         INFO / DEBUG
    mcplite.access    one line per HTTP request answered, when the server      INFO
                      was started with ``access_log=True``

A library stays quiet unless its application asks: the ``mcplite`` logger has a `logging.NullHandler`, so
nothing reaches ``sys.stderr`` through logging's last-resort handler in a program that configured no logging.
`Server.run` (the server owns the process then) calls `use_stderr_by_default`, which sends WARNING and above
to stderr unless the application configured logging itself. To see more: ``logging.basicConfig(level=...)``,
or ``logging.getLogger("mcplite").setLevel(logging.DEBUG)`` with a handler of yours.

`logging` takes longer to import than the rest of the client put together, and most processes never log
anything through it; ``log.warning(...)`` here imports it the first time a message is actually written.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see __init__)
if TYPE_CHECKING:
    from typing import Any, Optional

__all__ = ["log", "access_log", "use_stderr_by_default", "session_label", "redact_session_ids", "new_error_id",
           "LOGGER_NAME", "ACCESS_LOGGER_NAME", "SESSION_LABEL_CHARS"]

LOGGER_NAME = "mcplite"
ACCESS_LOGGER_NAME = "mcplite.access"
#: What `use_stderr_by_default` writes: the level, the logger, the message (and a traceback when there is one).
STDERR_FORMAT = "%(name)s: %(levelname)s: %(message)s"


def _package_logger() -> Any:
    import logging  # cached in sys.modules after the first time

    logger = logging.getLogger(LOGGER_NAME)
    if not any(isinstance(handler, logging.NullHandler) for handler in logger.handlers):
        logger.addHandler(logging.NullHandler())  # a library is silent unless its application configures logging
    return logger


class _LazyLogger:
    def __init__(self, name: str) -> None:
        self._name = name
        self._logger: Optional[Any] = None

    def __getattr__(self, name: str) -> Any:
        logger = self._logger
        if logger is None:
            import logging

            package = _package_logger()
            logger = self._logger = package if self._name == LOGGER_NAME else logging.getLogger(self._name)
        return getattr(logger, name)


#: How many characters of a session id the logs show: enough to tell sessions apart, too few to use one.
SESSION_LABEL_CHARS = 8


def session_label(session_id: str) -> str:
    """A session id as every log line shows it: its first `SESSION_LABEL_CHARS` characters and ``...``.

    A session id is a bearer secret (whoever sends it is heard as that session, until it checks who is
    calling), and logs are read by more people than the server's clients; the rest of the id stays out of them.
    Characters outside visible ASCII are shown as ``?`` (the id may be a client's invention)."""
    shown = "".join(c if "!" <= c <= "~" else "?" for c in session_id[:SESSION_LABEL_CHARS])
    return shown + "..." if len(session_id) > SESSION_LABEL_CHARS else shown


def redact_session_ids(text: str) -> str:
    """``text`` (a request line, a URL) with each ``session_id=<id>`` of the legacy HTTP+SSE endpoint cut to its
    `session_label`."""
    if "session_id=" not in text:
        return text
    import re

    return re.sub(r"session_id=([^&\s\"]*)", lambda match: "session_id=" + session_label(match.group(1)), text)


def new_error_id() -> str:
    """A short random id for one unexpected failure: the peer is told the id, never the exception, and the log line
    with the traceback carries the same id, so that an operator can find what a user reports."""
    import os

    return os.urandom(6).hex()


log: Any = _LazyLogger(LOGGER_NAME)
access_log: Any = _LazyLogger(ACCESS_LOGGER_NAME)


def use_stderr_by_default(level: Optional[int] = None) -> bool:
    """Send the package's WARNING messages (and above; ``level`` to choose) to stderr, unless the application
    configured logging: a handler on the root logger or on ``mcplite`` other than our `NullHandler`. For the
    processes the package owns (`Server.run`, the command line). Returns whether a handler was added."""
    import logging
    import sys

    package = _package_logger()
    configured = logging.getLogger().handlers or [
        handler for handler in package.handlers if not isinstance(handler, logging.NullHandler)]
    if configured:
        return False
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(STDERR_FORMAT))
    package.addHandler(handler)
    if level is not None:
        package.setLevel(level)
    elif package.level == logging.NOTSET:
        package.setLevel(logging.WARNING)
    return True
