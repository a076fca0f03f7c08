"""``record`` and ``replay``: record any MCP client's session with a server command, and serve a recording.

    python -m mcplite record OUT -- COMMAND [ARGS...]
    python -m mcplite replay CASSETTE [--peer NAME] [--http HOST:PORT] [the HTTP options of serve]

``record`` is a stdio pass-through: the MCP client (a desktop host, an SDK) starts it in place of the server, and
it starts COMMAND. Every byte the client writes goes to the server's stdin and every byte the server writes to its
stdout comes back, unchanged and in the same pieces (nothing is decoded and encoded again: the recording is made of
a copy); each line is recorded in OUT (`mcplite.recording`, under the command line as the peer name, "send" for the
client's lines, "recv" for the server's; a line that is not JSON, such as a banner on stdout, as ``invalid``). The
server's stderr is ours, and its environment ours (the client chose it for the server). It ends when either side
ends: the client closing our stdin closes the server's (which then exits; after 2 s it is terminated, after 2 more
killed), the server exiting (or closing its stdout) ends us, and SIGTERM or Ctrl-C ends the server first. The exit
status is 0, or 3 when the server exited with another status. Only commands: an HTTP server is recorded by a
client (``Client(url, record=...)``) or by the gateway in front of it (``gateway --record``).

``replay`` serves CASSETTE with `mcplite.replay.ReplayServer`, over stdio or Streamable HTTP.
"""

import argparse
import os
import signal
import subprocess
import sys
import threading
from typing import IO, Any, List, Optional

from ..errors import RecordingError
from ..protocol.jsonrpc import InvalidMessage, decode
from ..recording import Recorder
from .exits import EXIT_OK, EXIT_PROTOCOL, UsageError
from .serve import http_options_given, http_serving_options

#: Seconds the server has to exit once its stdin is closed, then once terminated.
EXIT_GRACE = 2.0
_CHUNK = 65536


class _Lines:
    """Cuts what passes into lines and records each whole one; the bytes themselves pass untouched."""

    def __init__(self, recorder: Recorder, peer: str, sent: bool) -> None:
        self._peer = recorder.peer(peer)  # (each direction its own: a revision is noted where it is first seen)
        self._sent = sent
        self._pending = b""

    def feed(self, data: bytes) -> None:
        self._pending += data
        while True:
            end = self._pending.find(b"\n")
            if end < 0:
                return
            line, self._pending = self._pending[:end], self._pending[end + 1:]
            self._record(line)

    def finish(self) -> None:
        if self._pending.strip():
            self._record(self._pending)
        self._pending = b""

    def _record(self, line: bytes) -> None:
        if not line.strip():
            return
        try:
            value = decode(line)
        except InvalidMessage as exc:
            self._peer.recorder.record(self._peer.name, "send" if self._sent else "recv", invalid=str(exc))
        else:
            (self._peer.sent if self._sent else self._peer.received)(value)


def _pump(read_fd: int, write: Any, lines: _Lines) -> None:
    """Copy from ``read_fd`` to ``write`` (a binary stream) until EOF, recording the lines; close ``write``."""
    try:
        while True:
            data = os.read(read_fd, _CHUNK)  # (os.read: no buffer lock a daemon thread could hold at exit)
            if not data:
                break
            lines.feed(data)
            try:
                write.write(data)
                write.flush()
            except (OSError, ValueError):  # the other side has gone: what follows has nowhere to go
                break
    except OSError:
        pass
    finally:
        lines.finish()
        try:
            write.close()
        except (OSError, ValueError):
            pass


def run_record(args: argparse.Namespace, target_words: Optional[List[str]]) -> int:
    if not target_words:
        raise UsageError("record needs the server's command after --: record OUT -- COMMAND [ARGS...]")
    if len(target_words) == 1 and target_words[0].startswith(("http://", "https://")):
        raise UsageError("record takes a server command, not a URL: to record an HTTP server, record with the "
                         "client (Client(url, record=FILE)) or put the gateway in front of it (gateway CONFIG "
                         "--record FILE)")
    peer = " ".join(target_words)
    try:
        recorder = Recorder(args.output)
    except OSError as exc:
        raise UsageError(f"cannot write {args.output}: {exc.strerror or exc}") from None
    try:
        process = subprocess.Popen(target_words, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=args.cwd,
                                   bufsize=0)
    except OSError as exc:
        recorder.close()
        raise UsageError(f"cannot start {target_words[0]}: {exc.strerror or exc}") from None
    restore = _terminate_on_sigterm()
    try:
        assert process.stdin is not None and process.stdout is not None
        up = threading.Thread(target=_pump, args=(sys.stdin.fileno(), process.stdin,
                                                  _Lines(recorder, peer, sent=True)),
                              name="mcplite-record-up", daemon=True)
        up.start()
        out: IO[bytes] = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
        _pump(process.stdout.fileno(), out, _Lines(recorder, peer, sent=False))
        status = _wait(process)
    except KeyboardInterrupt:
        status = None
    finally:
        _end(process)
        restore()
        recorder.close()
    if status:
        print(f"mcplite record: the server exited with status {status}", file=sys.stderr)
        return EXIT_PROTOCOL
    return EXIT_OK


def _wait(process: "subprocess.Popen[bytes]") -> Optional[int]:
    try:
        return process.wait(EXIT_GRACE)
    except subprocess.TimeoutExpired:  # its stdout closed, but it lives on
        return None


def _end(process: "subprocess.Popen[bytes]") -> None:
    """Leave no server behind: its stdin closed, then SIGTERM, then SIGKILL, each after `EXIT_GRACE`."""
    if process.stdin is not None:
        try:
            process.stdin.close()
        except OSError:
            pass
    if process.poll() is None:
        try:
            process.wait(EXIT_GRACE)
        except subprocess.TimeoutExpired:
            process.terminate()
            try:
                process.wait(EXIT_GRACE)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
    if process.stdout is not None:
        process.stdout.close()


def _terminate_on_sigterm() -> Any:
    """SIGTERM ends the pass-through as Ctrl-C does (the server is then ended); returns what undoes it."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "SIGTERM"):
        return lambda: None

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    return lambda: signal.signal(signal.SIGTERM, previous)


def run_replay(args: argparse.Namespace) -> int:
    from ..replay import ReplayServer

    if args.http is None and http_options_given(args):
        raise UsageError("the HTTP options need --http HOST:PORT")
    try:
        server = ReplayServer(args.cassette, peer=args.peer)
    except (RecordingError, OSError) as exc:
        raise UsageError(str(exc)) from None
    try:
        server.run(http=args.http, **http_serving_options(args))
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return EXIT_OK
