"""The terminal: results printed on stdout, the server's logs and progress on stderr, questions answered on
stdin, and the ``mcplite`` logger shown on stderr; none of it fails on a narrow encoding.
"""

import codecs
import io
import json
import sys
import threading
from typing import IO, Any, Callable, Dict, List, Optional


# ---- stdout and stderr --------------------------------------------------------------------------------
def emit(value: Any, stream: Optional[IO[str]] = None) -> None:
    """Print a result as JSON: indented for a person at a terminal, one line for a pipe.

    On a stream that cannot encode all of Unicode (``PYTHONIOENCODING=cp1252``) the JSON is ASCII with
    ``\\uXXXX`` escapes, so it stays valid JSON rather than failing or being mangled.
    """
    out: IO[str] = stream or sys.stdout
    indent = 2 if out.isatty() else None
    out.write(json.dumps(value, indent=indent, ensure_ascii=not speaks_unicode(out)) + "\n")
    out.flush()


def show(text: str, stream: Optional[IO[str]] = None) -> None:
    """Print human output (a line break added)."""
    out: IO[str] = stream or sys.stdout
    out.write(text + "\n")
    out.flush()


def speaks_unicode(stream: IO[str]) -> bool:
    """Can ``stream`` encode every character? (A stream without an encoding, like StringIO, can.)"""
    encoding = getattr(stream, "encoding", None)
    if not encoding:
        return True
    try:
        return codecs.lookup(encoding).name.startswith("utf")
    except LookupError:
        return False


def tolerate_narrow_encodings() -> None:
    """Make stdout and stderr write what their encoding cannot hold as backslash escapes.

    A tool's text in Japanese must not crash the program on a cp1252 console (a traceback, and exit code 1,
    which would claim the tool failed). Only narrow streams are changed: UTF-8 ones can write everything.
    """
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and not speaks_unicode(stream) and stream.errors == "strict":
            stream.reconfigure(errors="backslashreplace")


class StderrReporter:
    """Shows the server's log messages and progress on stderr: a progress bar on a terminal, lines otherwise.

    Its methods are called on the client session's dispatcher thread, one at a time.
    """

    BAR_WIDTH = 30

    def __init__(self, stream: Optional[IO[str]] = None) -> None:
        self.stream = stream or sys.stderr
        self.is_terminal = self.stream.isatty()
        self._bar_shown = False

    def log(self, params: Dict[str, Any]) -> None:
        data = params.get("data")
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
        logger = f"{params['logger']}: " if params.get("logger") else ""
        self._line(f"[{params.get('level', 'info')}] {logger}{text}")

    def progress(self, done: float, total: Optional[float], message: Optional[str]) -> None:
        amount = f"{done:g}/{total:g}" if total else f"{done:g}"
        suffix = f" {message}" if message else ""
        if not self.is_terminal:
            self._line(f"progress: {amount}{suffix}")
            return
        filled = int(self.BAR_WIDTH * min(done / total, 1.0)) if total else 0
        bar = "#" * filled + "-" * (self.BAR_WIDTH - filled)
        self.stream.write(f"\r\033[K[{bar}] {amount}{suffix}")
        self.stream.flush()
        self._bar_shown = True

    def finish(self) -> None:
        """End the progress bar's line, if one is shown."""
        if self._bar_shown:
            self.stream.write("\n")
            self.stream.flush()
            self._bar_shown = False

    def error(self, message: str) -> None:
        self._line(f"mcplite: {message}")

    def note(self, message: str) -> None:
        """A line about what is happening (a task started), not an error."""
        self._line(message)

    def status(self, text: str) -> None:
        """A task's status and progress: rewritten in place on a terminal, one line each otherwise."""
        if not self.is_terminal:
            self._line(text)
            return
        self.stream.write(f"\r\033[K{text}")
        self.stream.flush()
        self._bar_shown = True

    def _line(self, text: str) -> None:
        self.finish()
        self.stream.write(text + "\n")
        self.stream.flush()


# ---- answering the server's questions on the terminal ---------------------------------------------------
class TerminalElicitation:
    """Answers elicitation by asking on the terminal: the question and each field's prompt go to ``output``
    (stderr), the answers are read from ``input`` (stdin), one line each.

    A form is accepted, declined or cancelled first (Enter accepts); then each field of its schema is asked
    for, read by its type (booleans: y/n; numbers and integers; enums: one of the choices, or its number), an
    empty line keeping the default or leaving an optional field out. A URL is shown, to be opened by the user.
    The end of the input cancels. One question at a time, even when several calls ask at once.
    """

    def __init__(self, input: Optional[IO[str]] = None, output: Optional[IO[str]] = None) -> None:
        self._input = input
        self._output = output
        self._lock = threading.Lock()  # one conversation with the user at a time

    def __call__(self, params: Dict[str, Any]) -> Dict[str, Any]:
        with self._lock:
            try:
                return self._ask(params)
            except EOFError:
                return {"action": "cancel"}

    def _say(self, text: str) -> None:
        stream = self._output or sys.stderr
        stream.write(text)
        stream.flush()

    def _read(self, prompt: str) -> str:
        self._say(prompt)
        line = (self._input or sys.stdin).readline()
        if not line:
            raise EOFError
        return line.rstrip("\r\n")

    def _ask(self, params: Dict[str, Any]) -> Dict[str, Any]:
        self._say(f"\nThe server asks: {params.get('message', '')}\n")
        if params.get("mode") == "url":
            self._say(f"Open this URL to answer: {params.get('url')}\n")
        action = self._read("Answer? [A]ccept, (d)ecline, (c)ancel: ").strip().lower()
        if action.startswith("d"):
            return {"action": "decline"}
        if action.startswith("c"):
            return {"action": "cancel"}
        if params.get("mode") == "url":
            return {"action": "accept"}
        schema = params.get("requestedSchema") or {}
        required = set(schema.get("required") or ())
        content: Dict[str, Any] = {}
        for name, field_schema in (schema.get("properties") or {}).items():
            value = self._field(name, field_schema, name in required)
            if value is not None:
                content[name] = value
        return {"action": "accept", "content": content}

    def _field(self, name: str, schema: Dict[str, Any], required: bool) -> Any:
        """Ask for one field until the answer fits its type; None leaves it out."""
        kind = schema.get("type", "string")
        choices = _choices(schema)
        label = schema.get("title") or name
        hint = "/".join(choices) if choices else "y/n" if kind == "boolean" else kind
        default = schema.get("default")
        suffix = f" [{_shown(default)}]" if default is not None else "" if required else " (optional)"
        if schema.get("description"):
            self._say(f"  {schema['description']}\n")
        while True:
            text = self._read(f"  {label} ({hint}){suffix}: ").strip()
            if not text:
                if default is not None or not required:
                    return default
                self._say("  an answer is needed\n")
                continue
            try:
                return _read_value(text, kind, choices)
            except ValueError as problem:
                self._say(f"  {problem}\n")


def _choices(schema: Dict[str, Any]) -> List[str]:
    if isinstance(schema.get("enum"), list):
        return [str(choice) for choice in schema["enum"]]
    options = schema.get("oneOf") or schema.get("anyOf")
    if isinstance(options, list):
        return [str(option["const"]) for option in options if isinstance(option, dict) and "const" in option]
    return []


def _shown(value: Any) -> str:
    return ("y" if value else "n") if isinstance(value, bool) else str(value)


def _read_value(text: str, kind: str, choices: List[str]) -> Any:
    """One typed answer; ValueError says what was expected."""
    if choices:
        if text.isdigit() and 1 <= int(text) <= len(choices) and text not in choices:
            return choices[int(text) - 1]
        if text not in choices:
            raise ValueError(f"one of {', '.join(choices)}")
        return text
    if kind == "boolean":
        if text.lower() in ("y", "yes", "true", "1"):
            return True
        if text.lower() in ("n", "no", "false", "0"):
            return False
        raise ValueError("y or n")
    if kind == "integer":
        try:
            return int(text)
        except ValueError:
            raise ValueError("a whole number") from None
    if kind == "number":
        try:
            return float(text) if any(mark in text for mark in ".eE") else int(text)
        except ValueError:
            raise ValueError("a number") from None
    return text


# ---- logging and the version ----------------------------------------------------------------------------
_LOG_LEVELS = ("debug", "info", "warning", "error", "critical")
#: The ``mcplite.cli`` logger once `configure_logging` asked for one; until then nothing imports `logging`
#: (it costs more start-up time than the rest of a command).
_logger: Any = None


def _note(level: int, message: str, *args: Any) -> None:
    if _logger is not None:
        _logger.log(level, message, *args)


def configure_logging(level: Optional[str], verbose: int, stream: Optional[IO[str]] = None) -> Callable[[], None]:
    """Show the ``mcplite`` logger on ``stream`` (stderr) at ``level``, or at info (``-v``) or debug
    (``-vv``); ``level`` wins over ``verbose``. Without either, warnings only, tersely (a peer that breaks the
    protocol, a tool left out): the command line is a process of the package's own, so they are not hidden
    as a library's are (`mcplite._log`). Returns what undoes it (for `main` run in-process)."""
    global _logger
    import logging

    quiet = level is None and not verbose
    numeric = logging.WARNING if quiet else getattr(logging, level.upper()) if level else \
        logging.INFO if verbose == 1 else logging.DEBUG
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(logging.Formatter("%(name)s: %(levelname)s: %(message)s" if quiet else
                                           "%(asctime)s %(levelname)s %(name)s: %(message)s"))
    package_logger = logging.getLogger("mcplite")
    saved_level = package_logger.level
    package_logger.addHandler(handler)
    package_logger.setLevel(numeric)
    _logger = logging.getLogger("mcplite.cli")

    def undo() -> None:
        global _logger
        package_logger.removeHandler(handler)
        package_logger.setLevel(saved_level)
        _logger = None

    return undo
