"""The stdio transport: newline-delimited UTF-8 JSON over a child process's pipes.

`StdioClientTransport` spawns the server and owns its lifetime: closing it closes the server's stdin,
waits, then terminates and finally kills, so no server process is ever left behind.
`StdioServerTransport` serves this process's stdin/stdout; while it runs, file descriptor 1 points at
stderr, so a stray ``print`` (or a child process) in a handler cannot corrupt the protocol stream.

One pipe each way carries every message in order, so neither transport needs a message's `Route`, and
`Transport.cancel` has nothing to abort: the session's ``notifications/cancelled`` is the cancellation.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import io
import os
import sys
import threading

from .._log import log
from ..errors import ConnectionClosed, TransportError
from ..protocol.jsonrpc import PEEK_SIZE, encode_bytes, too_large
from . import MessageSink, Transport, deliver_bytes, deliver_invalid

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see __init__)
if TYPE_CHECKING:
    import subprocess
    from typing import IO, Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

    from ..protocol.http_rules import Route

    StderrTarget = Union[None, IO[Any], Callable[[str], None]]

# `subprocess` (and `shutil`) are imported where a client spawns a server: a stdio *server* never needs
# them, and its start-up time is part of every client's cold start.

__all__ = ["StdioClientTransport", "StdioServerTransport", "DEFAULT_SHUTDOWN_TIMEOUT", "ABORT_SHUTDOWN_TIMEOUT",
           "DEFAULT_MAX_LINE_SIZE",
           "INHERITED_ENV_VARS", "INHERITED_ENV_PREFIXES", "server_environment"]


#: Seconds each shutdown step (EOF on stdin, then SIGTERM) waits before the next, harsher one.
DEFAULT_SHUTDOWN_TIMEOUT = 2.0
#: The same, for a server whose connect failed (`StdioClientTransport.abort`): it is not waited for.
ABORT_SHUTDOWN_TIMEOUT = 0.2
#: The longest message (one line, without its newline) either side reads, in bytes. A longer line is skipped to
#: its end, never held whole, and answered (see `_LineChannel`).
DEFAULT_MAX_LINE_SIZE = 64 * 1024 * 1024
#: What is read at a time while skipping the rest of a line that is too long.
_SKIP_CHUNK = 64 * 1024

#: The variables of this process's environment that a server it spawns inherits (unless ``inherit_env=True``):
#: what any program needs to run as this user (find programs, its home and temporary directory, the terminal,
#: the language), and nothing that usually carries a secret. Everything else (cloud keys, API tokens,
#: MCPLITE_STATE_KEYS, PYTHONPATH and VIRTUAL_ENV too) stays here: a server is given what it needs with ``env=``.
#: POSIX names, then Windows ones (os.environ spells those in capitals); a name absent here is simply not passed.
INHERITED_ENV_VARS: Tuple[str, ...] = (
    "HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "TMPDIR", "LANG", "LANGUAGE",
    "APPDATA", "COMSPEC", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATHEXT", "PROCESSOR_ARCHITECTURE",
    "SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "TMP", "USERNAME", "USERPROFILE", "WINDIR",
)
#: Name prefixes inherited as well: the locale's categories (LC_ALL, LC_CTYPE, LC_MESSAGES, ...).
INHERITED_ENV_PREFIXES: Tuple[str, ...] = ("LC_",)


def server_environment(env: Optional[Mapping[str, str]] = None, *, inherit_env: bool = False,
                       source: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
    """The environment a spawned server gets: the allowed part of ``source`` (this process's environment; all
    of it when ``inherit_env``), with ``env`` laid over it.

    An allowed variable whose value starts with ``()`` is left out: that is how an old bash exports a shell
    function, and a function named PATH or HOME is code for the server's shell to run, not a setting.
    """
    source = os.environ if source is None else source
    if inherit_env:
        chosen = dict(source)
    else:
        chosen = {name: value for name, value in source.items()
                  if (name in INHERITED_ENV_VARS or name.startswith(INHERITED_ENV_PREFIXES))
                  and not value.startswith("()")}
    if env:
        chosen.update(env)
    return chosen


class _LineChannel:
    """Reads lines from one pipe on a thread of its own and writes whole messages to another.

    ``owns_reader``: the reader thread closes the pipe it reads when it ends, and nobody else does. Closing a
    pipe under a thread that may still read it is a race with the process: the descriptor's number is free
    at once, the next pipe opened (the next server spawned) gets it, and the old thread's next read takes
    that pipe's first line. So a client's stdout pipe is closed by its reader, after its last read.

    A line longer than ``max_line_size`` bytes is never held whole: the reader keeps its first and last few KiB,
    skips the rest up to the newline, and reads on with the next line. Newline framing makes that safe (the
    next line is a message of its own, whatever the long one held), so the connection goes on: the long
    message becomes a -32600 error (`jsonrpc.too_large`) with its id when one end of it shows it. A request is
    answered with that error; an answer fails the request it answers, so its caller does not wait for a
    timeout; a message with no id that can be seen is answered with a null id, as JSON-RPC says.
    """

    def __init__(self, reader: IO[bytes], writer: IO[bytes], name: str, *, owns_reader: bool = False,
                 max_line_size: int = DEFAULT_MAX_LINE_SIZE) -> None:
        self._max_line_size = max_line_size
        self._reader = reader
        self._owns_reader = owns_reader
        self._writer = writer
        self._name = name
        # Serialises writes: one message, newline included, is one write.
        self._write_lock = threading.Lock()
        # Guards _closed and _writing; never held during a write, because a write to a peer that stopped
        # reading blocks until the peer dies, and close_writer() must not wait for it: close() has to go on
        # to terminate that peer.
        self._state_lock = threading.Lock()
        self._closed = False
        self._writing = False
        self._thread: Optional[threading.Thread] = None

    def start(self, sink: MessageSink, on_eof: Callable[[], Optional[BaseException]], *,
              answer_after_eof: bool = False) -> None:
        """Read on a thread of its own. ``answer_after_eof``: at EOF the peer may still read our output, so
        the sink is told `MessageSink.input_ended` (answer what came) rather than `connection_lost`."""
        self._thread = threading.Thread(target=self._read, args=(sink, on_eof, answer_after_eof),
                                        name=f"mcplite-{self._name}-reader", daemon=True)
        self._thread.start()

    def _read(self, sink: MessageSink, on_eof: Callable[[], Optional[BaseException]],
              answer_after_eof: bool) -> None:
        error: Optional[BaseException] = None
        try:
            readline = self._reader.readline
            longest = self._max_line_size + 1  # the message and its newline
            while True:
                line = readline(longest)
                if not line:
                    break
                if line.endswith(b"\n") or len(line) < longest:
                    if line.strip():
                        _deliver(line, sink, self._name)
                else:
                    head, tail, line = line[:PEEK_SIZE], line[-PEEK_SIZE:], b""  # let the long start go now
                    if not self._skip_long_line(head, tail, sink):
                        break  # the input ended inside it
        except (OSError, ValueError) as exc:  # ValueError: the pipe was closed under us
            error = exc
        finally:
            if self._owns_reader:
                _close_quietly(self._reader)  # after the last read (see the class docstring)
        reason = on_eof() or error
        if answer_after_eof:
            sink.input_ended(reason)
        else:
            sink.connection_lost(reason)

    def _skip_long_line(self, head: bytes, tail: bytes, sink: MessageSink) -> bool:
        """Read past the rest of a line that is too long, whose first and last bytes so far are ``head`` and
        ``tail``, keeping only its two ends, and report it (see the class docstring). Returns False when the input
        ended before the line did."""
        readline = self._reader.readline
        ended = False
        while True:
            more = readline(_SKIP_CHUNK)
            if not more:
                ended = True
                break
            tail = (tail + more)[-PEEK_SIZE:]
            if more.endswith(b"\n"):
                break
        log.warning("%s: skipped a line of more than %d bytes", self._name, self._max_line_size)
        try:
            deliver_invalid(too_large(self._max_line_size, head, tail, "max_line_size"), sink)
        except Exception:
            log.exception("%s: a message could not be taken; reading on", self._name)
        return not ended

    def send(self, message: Any) -> None:
        data = encode_bytes(message) + b"\n"
        with self._write_lock:
            with self._state_lock:
                if self._closed:
                    raise ConnectionClosed(f"{self._name}: connection closed")
                self._writing = True
            try:
                self._writer.write(data)
                self._writer.flush()
            except (OSError, ValueError) as exc:
                with self._state_lock:
                    self._closed = True
                raise ConnectionClosed(f"{self._name}: cannot write: {exc}") from exc
            finally:
                with self._state_lock:
                    self._writing = False
                    if self._closed:  # close_writer ran meanwhile and left closing the file to us
                        self._close_file()

    def close_writer(self) -> None:
        """Close our end of the pipe now, or, while a write is under way, as soon as it ends."""
        with self._state_lock:
            self._closed = True
            if not self._writing:
                self._close_file()

    def _close_file(self) -> None:
        try:
            self._writer.close()
        except (OSError, ValueError):
            pass

    def join(self, timeout: float) -> None:
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)


def _deliver(line: bytes, sink: MessageSink, name: str) -> None:
    """One line to the sink. Whatever goes wrong in taking it is that message's problem: only the end of the
    input (or a read that fails) ends the reader, never an error raised while handling what was read."""
    try:
        deliver_bytes(line, sink)
    except Exception:
        log.exception("%s: a message could not be taken; reading on", name)


def _close_quietly(stream: IO[bytes]) -> None:
    try:
        stream.close()
    except (OSError, ValueError):
        pass


def _split_for_message(command: Union[str, bytes]) -> List[str]:
    import shlex

    text = command.decode(errors="replace") if isinstance(command, bytes) else command
    try:
        return shlex.split(text)
    except ValueError:  # unbalanced quotes: the plain split still shows the idea
        return text.split()


def resolve_command(argv: Sequence[str]) -> List[str]:
    """The argv to spawn: on Windows ``npx`` must become ``npx.cmd``, which only a PATH search finds."""
    if isinstance(argv, (str, bytes)):
        # list("python3 server.py") would spawn "p": say what was meant instead.
        raise TypeError(f"the server command must be a list of arguments, not a string: {argv!r}; write "
                        f"{_split_for_message(argv)!r} (shlex.split(command) splits a command line)")
    if not argv:
        raise ValueError("the server command is empty")
    args = list(argv)
    if os.name == "nt":  # pragma: no cover - exercised on Windows only
        import shutil
        found = shutil.which(args[0])
        if found:
            args[0] = found
    return args


class StdioClientTransport(Transport):
    """Spawns ``argv`` and talks to it over its stdin/stdout.

    Args:
        argv: the server command line.
        env: environment variables for the server, laid over what it inherits.
        inherit_env: what the server inherits from this process's environment: by default (False) only the
            variables of `INHERITED_ENV_VARS` (and the locale's LC_*), so the secrets this process holds (cloud
            keys, tokens) do not reach every server it starts; True passes the whole environment.
        cwd: the working directory for the server.
        stderr: where the server's stderr goes: None (ours, the default), a file object, or a callable that
            receives each line (without the newline) on a thread of its own.
        shutdown_timeout: seconds each shutdown step waits before the next. The attribute of that name may be
            changed until `close()`: a program that was interrupted can stop its server sooner than one
            that finished.
        max_line_size: the largest message (one line) read from the server, in bytes (default 64 MiB). A
            longer one is skipped without being held in memory; the request it answers fails with a
            `jsonrpc.InvalidMessage` naming the limit, and the connection goes on.
    """

    def __init__(self, argv: Sequence[str], *, env: Optional[Dict[str, str]] = None, inherit_env: bool = False,
                 cwd: Optional[str] = None, stderr: StderrTarget = None,
                 shutdown_timeout: float = DEFAULT_SHUTDOWN_TIMEOUT,
                 max_line_size: int = DEFAULT_MAX_LINE_SIZE) -> None:
        if max_line_size < 1:
            raise ValueError(f"max_line_size must be at least 1 byte, not {max_line_size}")
        self.max_line_size = max_line_size
        self.argv = resolve_command(argv)
        # Taken now, as the environment is when the client is made: a respawn (`restarted`) gets the same.
        self._env = server_environment(env, inherit_env=inherit_env)
        self._cwd = cwd
        self._stderr = stderr
        self.shutdown_timeout = shutdown_timeout
        self.process: Optional["subprocess.Popen[bytes]"] = None
        self._channel: Optional[_LineChannel] = None
        self._stderr_thread: Optional[threading.Thread] = None
        self._closing = False

    def restarted(self) -> "StdioClientTransport":
        """A new transport for the same command, not started: a client whose server died (on its era probe,
        say) spawns it again with this."""
        fresh = StdioClientTransport(self.argv, cwd=self._cwd, stderr=self._stderr,
                                     shutdown_timeout=self.shutdown_timeout, max_line_size=self.max_line_size)
        fresh._env = self._env
        return fresh

    @property
    def identity(self) -> Tuple[Any, ...]:
        """What makes two transports spawn the same server: command, working directory and environment."""
        return (tuple(self.argv), self._cwd, tuple(sorted(self._env.items())))

    def start(self, sink: MessageSink) -> None:
        import subprocess
        if callable(self._stderr):
            stderr_arg: Any = subprocess.PIPE
        elif self._stderr is None:
            stderr_arg = None
        else:
            stderr_arg = self._stderr
        try:
            # A group of its own (POSIX: a new session): a server started through a wrapper (`sh -c`, `npx`)
            # is the wrapper's child, and close() must stop the whole tree, not the wrapper alone. It also keeps
            # the terminal's Ctrl-C from reaching the server before we close it in order.
            posix = os.name == "posix"
            self.process = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr_arg, env=self._env,
                cwd=self._cwd, bufsize=0, start_new_session=posix,
                creationflags=0 if posix else getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0))
        except OSError as exc:
            raise TransportError(f"cannot start {self.argv[0]!r}: {exc}") from exc
        assert self.process.stdin is not None and self.process.stdout is not None
        if callable(self._stderr):
            self._stderr_thread = threading.Thread(target=_pump_lines,
                                                   args=(_buffered(self.process.stderr), self._stderr),
                                                   name="mcplite-stdio-stderr", daemon=True)
            self._stderr_thread.start()
        # The reader closes the stdout pipe itself, after its last read (see _LineChannel): never `close`.
        self._channel = _LineChannel(_buffered(self.process.stdout), self.process.stdin, "stdio-client",
                                     owns_reader=True, max_line_size=self.max_line_size)
        self._channel.start(sink, self._exit_reason)

    def _exit_reason(self) -> Optional[BaseException]:
        """Called at EOF on the server's stdout: why the connection ended."""
        import subprocess
        assert self.process is not None
        try:
            code = self.process.wait(timeout=0.5)  # EOF usually means it is exiting right now
        except subprocess.TimeoutExpired:
            return None if self._closing else ConnectionClosed("the server closed its stdout")
        if self._closing or code == 0:
            return None
        return ConnectionClosed(f"the server exited with code {code}")

    def send(self, message: Any, route: Optional[Route] = None) -> None:
        if self._channel is None:
            raise ConnectionClosed("the transport is not started")
        self._channel.send(message)

    def abort(self) -> None:
        """Stop the server as `close` does, each step waiting `ABORT_SHUTDOWN_TIMEOUT` at most (a server that
        failed to connect, or did not in time, is not waited for)."""
        self.shutdown_timeout = min(self.shutdown_timeout, ABORT_SHUTDOWN_TIMEOUT)
        self.close()

    def close(self) -> None:
        """Stop the server and whatever it started: EOF on its stdin, then SIGTERM, then SIGKILL to its whole
        process group, each after ``shutdown_timeout``. A server that exits on EOF (the common case) costs no
        wait beyond its own exit; processes it leaves behind in its group get SIGTERM, then SIGKILL."""
        import subprocess
        self._closing = True
        process = self.process
        if process is None or self._channel is None:
            return
        self._channel.close_writer()
        try:
            process.wait(self.shutdown_timeout)
        except subprocess.TimeoutExpired:
            _signal_group(process, "SIGTERM")
            try:
                process.wait(self.shutdown_timeout)
            except subprocess.TimeoutExpired:
                _signal_group(process, "SIGKILL")
                process.wait()
        _stop_group(process, self.shutdown_timeout)
        # The pipes the server wrote are closed by the threads that read them, once they have read the end
        # (closing one under its reader would let the reader take the next spawned server's output: see
        # _LineChannel). The server has exited, so the end is there, unless a process it started holds the
        # pipe: then the thread and its pipe stay until that process lets go. We wait a little, not for that.
        self._channel.join(self.shutdown_timeout)
        if self._stderr_thread is not None:
            self._stderr_thread.join(self.shutdown_timeout)


def _signal_group(process: "subprocess.Popen[bytes]", name: str) -> None:
    """Send SIGTERM or SIGKILL to the server's process group (POSIX); on Windows, the polite form is a
    CTRL_BREAK_EVENT to the server's process group and the sure one ends the server's whole process tree."""
    if os.name == "posix":
        import signal

        try:
            os.killpg(process.pid, getattr(signal, name))  # the group's id is the server's pid (a new session)
            return
        except (ProcessLookupError, PermissionError):
            return  # nobody left in the group
    if name == "SIGTERM":  # pragma: no cover - Windows
        import signal

        try:  # the group (CREATE_NEW_PROCESS_GROUP) shares our console: a .cmd wrapper's child gets it too
            os.kill(process.pid, getattr(signal, "CTRL_BREAK_EVENT"))
        except (OSError, AttributeError):
            process.terminate()  # no console to send it through: the server alone
    else:  # pragma: no cover - Windows
        if not _kill_tree(process.pid):
            process.kill()


def _taskkill_command(pid: int) -> List[str]:
    """The command that ends process ``pid`` and every process it started, at once (Windows keeps parent
    links, not process groups, so the tree is the way to reach a server behind ``cmd /c`` or ``npx``)."""
    return ["taskkill", "/F", "/T", "/PID", str(pid)]


def _kill_tree(pid: int, run: Optional[Callable[..., Any]] = None) -> bool:
    """End ``pid``'s process tree with taskkill (Windows); False when that could not be done."""
    import subprocess

    try:
        done = (run or subprocess.run)(_taskkill_command(pid), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return False
    return getattr(done, "returncode", 1) == 0


def _group_alive(pgid: int) -> bool:
    """Whether a process of group ``pgid`` still runs. A zombie does not count: its parent (init, for an orphan)
    may be slow to reap it, or never reap it in a container whose init does not, and it holds nothing open."""
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    try:
        entries = os.listdir("/proc")
    except OSError:
        return True  # no /proc (macOS): the signal's answer is all there is
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rpartition(b")")[2].split()  # after "(comm)", which may hold spaces
        except OSError:
            continue  # gone meanwhile
        if len(fields) > 2 and fields[2] == str(pgid).encode() and fields[0] != b"Z":
            return True
    return False


def _stop_group(process: "subprocess.Popen[bytes]", timeout: float) -> None:
    """The server has exited: end what it left in its group (a wrapper's child, a helper it started), politely
    first, then for sure. Nothing to do, and no wait, when the group is already empty (the common case)."""
    if os.name != "posix" or not _group_alive(process.pid):
        return
    import time

    _signal_group(process, "SIGTERM")
    deadline = time.monotonic() + timeout
    while _group_alive(process.pid):  # not our children: no wait() to block on, so look every 10 ms
        if time.monotonic() >= deadline:
            _signal_group(process, "SIGKILL")
            return
        time.sleep(0.01)


def _buffered(pipe: Optional[IO[bytes]]) -> IO[bytes]:
    """A buffered reader over one of the child's pipes.

    The pipes are unbuffered (bufsize=0), so closing one never waits for a reader blocked on it; but lines
    read from a raw pipe cost a system call per byte, so each reader thread reads through a buffer.
    """
    return io.BufferedReader(pipe)  # type: ignore[type-var]  # an unbuffered pipe is a RawIOBase


def _pump_lines(pipe: Optional[IO[bytes]], callback: Callable[[str], None]) -> None:
    """Hand each line of ``pipe`` to ``callback`` until the end; then close the pipe (only its reader may)."""
    if pipe is None:
        return
    try:
        for raw in iter(pipe.readline, b""):
            try:
                callback(raw.decode("utf-8", "replace").rstrip("\r\n"))
            except Exception:
                log.exception("stderr callback failed")
    except (OSError, ValueError):
        pass
    finally:
        _close_quietly(pipe)


class StdioServerTransport(Transport):
    """Serves this process's stdin and stdout (or the given binary streams).

    When serving the real fd 1, the protocol keeps a private duplicate of it and fd 1 itself is pointed at
    stderr (and ``sys.stdout`` at ``sys.stderr``) until `close()`, so nothing else can write to the stream.

    ``max_line_size`` is the largest request (one line) read, in bytes (default 64 MiB): a longer one is skipped
    without being held in memory and answered with -32600 (with its id when it shows), and the next line is
    read as usual.
    """

    def __init__(self, stdin: Optional[IO[bytes]] = None, stdout: Optional[IO[bytes]] = None, *,
                 max_line_size: int = DEFAULT_MAX_LINE_SIZE) -> None:
        if max_line_size < 1:
            raise ValueError(f"max_line_size must be at least 1 byte, not {max_line_size}")
        self.max_line_size = max_line_size
        self._stdin = stdin
        self._stdout = stdout
        self._restore: Optional[Callable[[], None]] = None
        self._channel: Optional[_LineChannel] = None
        self._lock = threading.Lock()  # guards _restore, so it runs once

    def start(self, sink: MessageSink) -> None:
        stdin = self._stdin if self._stdin is not None else sys.stdin.buffer
        stdout = self._stdout if self._stdout is not None else self._take_stdout()
        self._channel = _LineChannel(stdin, stdout, "stdio-server", max_line_size=self.max_line_size)
        # A client may close our stdin and still read stdout (``printf '...' | server``): answer first.
        self._channel.start(sink, lambda: None, answer_after_eof=True)

    def _take_stdout(self) -> IO[bytes]:
        sys.stdout.flush()
        saved_fd = os.dup(1)
        os.dup2(2, 1)  # fd 1 is now stderr: prints, C extensions and child processes land there
        saved_stdout = sys.stdout
        sys.stdout = sys.stderr

        def restore() -> None:
            sys.stdout = saved_stdout
            os.dup2(saved_fd, 1)
            os.close(saved_fd)

        self._restore = restore
        return os.fdopen(os.dup(saved_fd), "wb", buffering=0)

    def send(self, message: Any, route: Optional[Route] = None) -> None:
        if self._channel is None:
            raise ConnectionClosed("the transport is not started")
        self._channel.send(message)

    def close(self) -> None:
        if self._channel is not None:
            self._channel.close_writer()
        with self._lock:
            restore, self._restore = self._restore, None
        if restore is not None:
            restore()
