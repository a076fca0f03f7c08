"""The exit codes of the command line, and the two exceptions that choose one (see `mcplite.cli`)."""

EXIT_OK = 0
EXIT_TOOL_ERROR = 1
EXIT_USAGE = 2
EXIT_PROTOCOL = 3
EXIT_TIMEOUT = 4
EXIT_INTERRUPTED = 130  # the shell's convention for a Ctrl-C


class UsageError(Exception):
    """The command line is wrong (exit code 2); the message says how."""


class TimedOut(Exception):
    """A wait ran out (exit code 4); the message says which and the option that sets it."""
