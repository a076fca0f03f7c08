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
status is 0, or 3 when the server exited with another status.

With a URL in place of the command (``record OUT -- https://host/mcp``, with ``--header`` and ``--auth`` as the
other commands take them), it is a bridge from stdio to Streamable HTTP (or HTTP+SSE), as mcp-remote is: each line
the client writes is sent to the server with the headers its revision asks for (the session id, the protocol
version, and on 2026-07-28 ``Mcp-Method``, ``Mcp-Name`` and the ``Mcp-Param-*`` of the tools the server listed),
and each message the server sends (an answer, or an event of a stream) is written back as one line. HTTP has no
bytes to pass through unchanged: the messages are recorded as they pass. A request the server refuses at the
HTTP level (401, 404...) is answered to the client as a JSON-RPC error saying so.

``replay`` serves CASSETTE with `mcplite.replay.ReplayServer`, over stdio or Streamable HTTP.
"""

import argparse
import os
import signal
import subprocess
import sys
import threading
from typing import IO, Any, Dict, List, Optional, Set

from ..errors import CONNECTION_CLOSED, MCPError, RecordingError
from ..protocol import methods
from ..protocol.http_rules import Route, route
from ..protocol.jsonrpc import InvalidMessage, decode, encode_bytes, error
from ..protocol.mcp_headers import HeaderValueError, header_map, param_headers, standard_headers
from ..protocol.versions import ENVELOPE, LATEST_HANDSHAKE_VERSION, Revision, is_supported
from ..protocol.versions import revision as revision_of
from ..recording import Recorder
from ..transports import MessageSink
from ..transports.http_client import HTTPClientTransport
from .exits import EXIT_OK, EXIT_PROTOCOL, UsageError
from .serve import http_options_given, http_serving_options

#: Seconds the server has to exit once its stdin is closed, then once terminated.
EXIT_GRACE = 2.0
_CHUNK = 65536


class _Lines:
    """Cuts what passes into lines and records each whole one; the bytes themselves pass untouched.

    A line is kept in the pieces it came in (each piece searched once for its end: a long line costs no
    rescans), up to `max_line_size` bytes; past that it is recorded as ``invalid`` and the rest of it passes
    unrecorded, so a peer that never ends a line cannot grow our memory."""

    #: The longest line recorded, in bytes: the stdio transport's default ``max_line_size`` (64 MiB).
    max_line_size = 64 * 1024 * 1024

    def __init__(self, recorder: Recorder, peer: str, sent: bool) -> None:
        self._peer = recorder.peer(peer)  # (each direction its own: a revision is noted where it is first seen)
        self._sent = sent
        self._parts: List[bytes] = []  # the line so far
        self._size = 0  # the bytes in _parts
        self._skipping = False  # the line outgrew max_line_size: its rest is not recorded

    def feed(self, data: bytes) -> None:
        start = 0
        while True:
            end = data.find(b"\n", start)
            if end < 0:
                self._add(data[start:])
                return
            self._add(data[start:end])
            if not self._skipping:
                self._record(b"".join(self._parts))
            self._parts, self._size, self._skipping = [], 0, False
            start = end + 1

    def _add(self, piece: bytes) -> None:
        if self._skipping or not piece:
            return
        if self._size + len(piece) > self.max_line_size:
            self._parts, self._size, self._skipping = [], 0, True
            self._peer.recorder.record(self._peer.name, "send" if self._sent else "recv",
                                       invalid=f"a line of more than {self.max_line_size} bytes (not recorded)")
            return
        self._parts.append(piece)
        self._size += len(piece)

    def finish(self) -> None:
        line = b"".join(self._parts)
        if not self._skipping and line.strip():
            self._record(line)
        self._parts, self._size, self._skipping = [], 0, False

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
        raise UsageError("record needs the server's command or URL after --: record OUT -- COMMAND [ARGS...]")
    if len(target_words) == 1 and target_words[0].startswith(("http://", "https://")):
        return _record_url(args, target_words[0])
    if args.auth or args.headers:
        raise UsageError("--auth and --header apply to an http(s) server, not a command")
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


class _HTTPBridge(MessageSink):
    """Stdio on one side (the MCP client that started ``record``), an HTTP server on the other (see the module
    docstring). Reads stdin on the calling thread; the HTTP transport delivers on its reader threads, each
    message written under ``_write_lock`` as one line."""

    def __init__(self, transport: HTTPClientTransport, lines: Any, out: IO[bytes]) -> None:
        self.transport = transport
        self._peer = lines
        self._out = out
        self._write_lock = threading.Lock()  # guards _out: answers come on several reader threads
        self._revision: Optional[Revision] = None  # the handshake's, once the server answered initialize
        self._initialize_ids: Set[Any] = set()
        self._tools_list_ids: Set[Any] = set()
        self._param_maps: Dict[str, Any] = {}  # tool name -> its Mcp-Param-* map (2026-07-28)
        #: Set when either side has ended.
        self.lost = threading.Event()

    # ---- the client's side: stdin ---------------------------------------------------------------------------
    def run(self, stdin: IO[bytes]) -> None:
        """Pass messages both ways until the client's input ends or the server's connection does."""
        self.transport.start(self)
        reader = threading.Thread(target=self._read, args=(stdin,), name="mcplite-record-stdin", daemon=True)
        reader.start()
        self.lost.wait()  # (set by the end of stdin, the end of the connection, or the client gone)

    def _read(self, stdin: IO[bytes]) -> None:
        try:
            for line in iter(stdin.readline, b""):
                if self.lost.is_set():
                    break
                if not line.strip():
                    continue
                try:
                    message = decode(line)
                except InvalidMessage as exc:
                    self._peer.recorder.record(self._peer.name, "send", invalid=str(exc))
                    continue
                self._peer.sent(message)
                self._send(message)
        finally:
            self.lost.set()

    def _send(self, message: Any) -> None:
        route = self._route(message)
        try:
            self.transport.send(message, route)
        except MCPError as exc:  # refused at the HTTP level, or the connection is gone
            request_id = message.get("id") if isinstance(message, dict) and "method" in message else None
            if request_id is None:
                print(f"mcplite record: {route.method or 'a message'} was not delivered: {exc}", file=sys.stderr)
            else:
                self.fail_request(request_id, exc)

    def _route(self, message: Any) -> Route:
        headers: Optional[Dict[str, str]] = None
        revision = self._revision
        if isinstance(message, dict) and isinstance(message.get("method"), str):
            method = message["method"]
            given = message.get("params")
            params: Dict[str, Any] = given if isinstance(given, dict) else {}
            if method == methods.INITIALIZE and "id" in message:
                self._initialize_ids.add(message["id"])
            elif method == methods.TOOLS_LIST and "id" in message:
                self._tools_list_ids.add(message["id"])
            meta = params.get("_meta")
            version = meta.get(methods.PROTOCOL_VERSION_KEY) if isinstance(meta, dict) else None
            if isinstance(version, str) and is_supported(version, ENVELOPE):
                revision = revision_of(version)
                headers = standard_headers(message)
                name = params.get("name") if method == methods.TOOLS_CALL else None
                param_map = self._param_maps.get(name) if isinstance(name, str) else None
                if param_map:
                    try:
                        headers.update(param_headers(param_map, params.get("arguments")))
                    except HeaderValueError:
                        pass  # the server refuses it, as it would refuse the client's own headers
        return route(message, revision, None, headers)

    # ---- the server's side: the transport's sink -----------------------------------------------------------
    def receive(self, value: Any) -> None:
        self._peer.received(value)
        if isinstance(value, dict) and "id" in value and isinstance(value.get("result"), dict):
            result = value["result"]
            if value["id"] in self._initialize_ids and isinstance(result.get("protocolVersion"), str) \
                    and is_supported(result["protocolVersion"]):
                self._revision = revision_of(result["protocolVersion"])
            elif value["id"] in self._tools_list_ids:
                for tool in result.get("tools") or []:
                    if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                        self._param_maps[tool["name"]] = header_map(tool.get("inputSchema"))
        self._write(encode_bytes(value))

    def receive_invalid(self, exc: InvalidMessage) -> None:
        self._peer.received_invalid(exc)

    def connection_lost(self, exc: Optional[BaseException]) -> None:
        if exc is not None:
            print(f"mcplite record: the connection to the server ended: {exc}", file=sys.stderr)
        self.lost.set()

    def fail_request(self, request_id: Any, exc: BaseException) -> None:
        """No answer will come from the server for the client's request: the client gets an error instead."""
        answer = error(request_id, CONNECTION_CLOSED, f"mcplite record: {exc}")
        self._peer.received(answer)
        self._write(encode_bytes(answer))

    def _write(self, data: bytes) -> None:
        with self._write_lock:
            try:
                self._out.write(data + b"\n")
                self._out.flush()
            except (OSError, ValueError):  # the client has gone
                self.lost.set()


def _record_url(args: argparse.Namespace, url: str) -> int:
    """``record OUT -- URL``: the stdio-to-HTTP bridge (`_HTTPBridge`), recorded."""
    from .commands import user_sign_in
    from .targets import parse_header

    headers = dict(parse_header(header) for header in args.headers)
    auth = user_sign_in(LATEST_HANDSHAKE_VERSION) if args.auth else None
    try:
        transport = HTTPClientTransport(url, headers=headers, auth=auth)
    except ValueError as exc:
        raise UsageError(f"{url}: {exc}") from None
    try:
        recorder = Recorder(args.output)
    except OSError as exc:
        raise UsageError(f"cannot write {args.output}: {exc.strerror or exc}") from None
    restore = _terminate_on_sigterm()
    out: IO[bytes] = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
    bridge = _HTTPBridge(transport, recorder.peer(url), out)
    try:
        bridge.run(os.fdopen(os.dup(sys.stdin.fileno()), "rb"))
    except KeyboardInterrupt:
        pass
    finally:
        transport.close()
        restore()
        recorder.close()
        out.close()
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
