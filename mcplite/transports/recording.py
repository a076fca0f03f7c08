"""Recording every message a connection carries, in both directions, as JSON lines (issue 33; replayed by 36).

A `Recorder` writes one file. What records into it is a transport wrapped by `RecordingTransport` (a client's
transport, a stdio server's), or, on the HTTP server, each session a `RecordingFactory` makes; each records
under a *peer* name, so that one file can hold several connections (a gateway's upstreams and its front).

The format. The first line is the header; every later line is one message, in the order they were recorded::

    {"mcplite_recording": 1, "started": "2026-01-31T12:00:00.123456+00:00"}
    {"t": 0.001204, "peer": "python3 server.py", "dir": "send", "message": {"jsonrpc": "2.0", "id": 1, ...}}
    {"t": 0.043917, "peer": "python3 server.py", "dir": "recv", "message": {"jsonrpc": "2.0", "id": 1, ...}}

    header field         what it holds
    mcplite_recording    the format's version: 1
    started              when the recording began: wall-clock time, ISO 8601 with its UTC offset
    info                 (only when given to `Recorder`) an object of the recording program's own

    line field  what it holds
    t           seconds since the recording began (``time.monotonic``), rounded to the microsecond;
                never less than the line before's
    peer        the name the connection records under: a client's server (its command or URL host, or
                ``record_as``), ``client`` for a stdio server, an HTTP server's session (its id cut to
                eight characters as the logs show it, ``stateless`` for a session without an id)
    dir         "send": this process sent it to that peer; "recv": it arrived from that peer
    message     the JSON-RPC message (an object) or batch (an array) whole, as sent or as decoded, with
                secrets redacted (see below)
    invalid     instead of ``message``: something arrived that did not decode; the decoder's error,
                which quotes the start of what arrived (at most 200 characters)
    headers     (only over HTTP) the HTTP headers the message came with (an HTTP server: the request's
                headers, lower case), or the protocol headers it was sent with (an HTTP client:
                ``MCP-Protocol-Version``, ``Mcp-Method``...), redacted
    revision    (only on the line that makes it known) the protocol revision: an ``initialize`` answer's
                ``protocolVersion``, or a 2026-07-28 request's ``_meta`` version when it differs from the
                peer's last one; it holds for the peer's later lines

A message is recorded as it is handed to the transport, before it is written, so that an answer can never be
recorded before its request; a send that then fails (the connection was gone) is still in the recording. Over
HTTP the server records the messages the HTTP app hands its sessions: what the app refuses before any session
sees it (a body that is not JSON) is not recorded.

Redaction (on a copy: the message the session and its caller hold is never changed; docs/architecture.md,
ownership). A string or number under a key that names a secret, whatever its case and with ``-`` and ``_``
ignored (`SECRET_KEYS`: ``access_token``, ``refreshToken``, ``client_secret``, ``password``, ``token``,
``Authorization``, ``Cookie``, ``api_key``, ``Mcp-Session-Id``, the sealed ``requestState``, ...), becomes
``"[redacted]"``; an object or array under
such a key is gone through the same way (a tool's input schema may have a property named ``password``: its
schema stays). In every other string, the credential of ``Bearer <credential>`` and anything shaped like a JWT
become ``[redacted]``. A recording can still hold secrets this cannot recognise (a token in a tool's free
text): treat the file as private. It is created with mode 0600.

Lines are written whole, one at a time (the writers share a lock) and flushed at once: a process that dies
loses nothing it had recorded. `read_recording` reads a file back, checking every line.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import json
import os
import re
import threading
import time

from .._files import create_private_file
from .._log import log, session_label
from ..errors import RecordingError
from ..protocol import json_text
from . import MessageSink, Transport

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see __init__)
if TYPE_CHECKING:
    from typing import IO, Any, Callable, Dict, Iterator, Mapping, Optional, Sequence, Tuple, Union

    from ..protocol.http_rules import Route
    from ..protocol.jsonrpc import InvalidMessage, RequestId
    from . import HostedSession, RequestInfo, SessionFactory

    RecordTo = Union[str, "os.PathLike[str]", "Recorder"]

__all__ = ["Recorder", "RecordingPeer", "RecordingTransport", "RecordingFactory", "read_recording", "redact",
           "open_recorder", "revision_of", "FORMAT_VERSION", "REDACTED", "SECRET_KEYS"]

#: The version the header's ``mcplite_recording`` field holds.
FORMAT_VERSION = 1
#: What a redacted value becomes.
REDACTED = "[redacted]"
#: The keys whose string and number values are redacted: lower case, without ``-`` and ``_``.
SECRET_KEYS = frozenset({
    "accesstoken", "refreshtoken", "idtoken", "token", "subjecttoken", "actortoken", "clientsecret", "secret",
    "password", "passwd", "passphrase", "authorization", "proxyauthorization", "apikey", "xapikey", "assertion",
    "clientassertion", "codeverifier", "cookie", "setcookie", "privatekey", "mcpsessionid", "sessionid",
    "requeststate",
})
#: The longest ``invalid`` text recorded.
INVALID_CHARS = 200

# "Bearer <credential>" (RFC 6750's token68) and the three base64url parts of a JWS or JWT.
_CREDENTIALS = re.compile(r"(?i)(\bbearer\s+)[A-Za-z0-9\-._~+/]+=*|\beyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*")


def _redact_text(text: str) -> str:
    if text[:1] in ("{", "[") and len(text) > 1:
        # JSON inside a string: a tool's structured result is mirrored as the text of a content block. Its
        # secrets are redacted as a message's are, and the text re-encoded only when something was.
        try:
            inner = json.loads(text)
        except ValueError:
            pass
        else:
            if isinstance(inner, (dict, list)):
                redacted = redact(inner)
                return text if redacted == inner else json.dumps(redacted, ensure_ascii=False)
    if "earer" not in text and "EARER" not in text and "eyJ" not in text:  # the common case: no regex run
        return text
    return _CREDENTIALS.sub(lambda match: (match.group(1) or "") + REDACTED, text)


def _is_secret_key(key: str) -> bool:
    return key.lower().replace("-", "").replace("_", "") in SECRET_KEYS


def redact(value: Any) -> Any:
    """A copy of the JSON value ``value`` with its secrets redacted (see the module docstring); ``value`` itself
    is left as it was. Strings, numbers and the rest are returned as they are, or redacted."""
    if isinstance(value, dict):
        copy: Dict[Any, Any] = {}
        for key, item in value.items():
            if isinstance(key, str) and _is_secret_key(key) and isinstance(item, (str, int, float)) \
                    and not isinstance(item, bool):
                copy[key] = REDACTED
            else:
                copy[key] = redact(item)
        return copy
    if isinstance(value, (list, tuple)):
        return [redact(item) for item in value]
    if isinstance(value, str):
        return _redact_text(value)
    return value


def _not_json(value: Any) -> str:
    """What a value JSON cannot hold is recorded as (the send itself fails in the transport)."""
    return f"<not JSON: {type(value).__name__}>"


class Recorder:
    """Writes a recording: the header line at once, then one line per `record` call. Thread-safe.

    Args:
        file: a path (a new file is created with mode 0600; an existing one is emptied, keeping its mode), or
            a text file open for writing (the caller's: `close` flushes it but leaves it open).
        info: a JSON object of the caller's, written in the header as ``info`` (the gateway's upstreams).
        clock: the monotonic clock ``t`` is measured with (tests pass their own).

    A write that fails (a full disk) is logged once and ends the recording; the connections go on.
    Use it as a context manager, or call `close`.
    """

    def __init__(self, file: Union[str, "os.PathLike[str]", IO[str]], *, info: Optional[Mapping[str, Any]] = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        # Guards _file, _last and the order of lines: each line is timed and written under it.
        self._lock = threading.Lock()
        if isinstance(file, (str, os.PathLike)):
            path = os.fsdecode(os.fspath(file))
            create_private_file(path)
            self._file: Optional[IO[str]] = open(path, "w", encoding="utf-8", newline="\n")
            self._owns_file = True
            self.name = path
        else:
            self._file = file
            self._owns_file = False
            self.name = str(getattr(file, "name", "<stream>"))
        import datetime

        header: Dict[str, Any] = {"mcplite_recording": FORMAT_VERSION,
                                  "started": datetime.datetime.now(datetime.timezone.utc).isoformat()}
        if info is not None:
            header["info"] = dict(info)
        self._start = clock()
        self._last = 0.0
        self._write(json.dumps(header, ensure_ascii=False, default=_not_json))

    @property
    def closed(self) -> bool:
        return self._file is None

    def peer(self, name: str) -> RecordingPeer:
        """What one connection records with, under the peer name ``name``."""
        return RecordingPeer(self, name)

    def record(self, peer: str, direction: str, message: Any = None, *, invalid: Optional[str] = None,
               headers: Optional[Mapping[str, str]] = None, revision: Optional[str] = None) -> None:
        """Write one line: ``message`` (redacted on a copy) sent to (``direction`` "send") or received from
        ("recv") ``peer``; or, with ``invalid``, the error of something received that did not decode.
        ``headers``: the HTTP headers it came or went with (redacted); ``revision``: the protocol revision this
        message made known (see the module docstring). Nothing happens once the recorder is closed (a message
        that arrives while its connection closes)."""
        if self._file is None:
            return
        if invalid is not None:
            entry: Dict[str, Any] = {"invalid": _redact_text(invalid[:INVALID_CHARS])}
        else:
            entry = {"message": redact(message)}
        if headers:
            entry["headers"] = redact({str(name): str(value) for name, value in headers.items()})
        if revision is not None:
            entry["revision"] = revision
        with self._lock:
            # Timed under the lock, so that the times of the lines in the file never go down.
            t = max(self._last, round(self._clock() - self._start, 6))
            self._last = t
            line = json.dumps({"t": t, "peer": peer, "dir": direction, **entry}, ensure_ascii=False,
                              default=_not_json)
            self._write_locked(line)

    def _write(self, line: str) -> None:
        with self._lock:
            self._write_locked(line)

    def _write_locked(self, line: str) -> None:
        file = self._file
        if file is None:
            return
        try:
            file.write(line + "\n")
            file.flush()
        except (OSError, ValueError) as exc:  # a full disk, a file closed under us: the connection goes on
            log.warning("mcplite: recording to %s stopped: %s", self.name, exc)
            self._file = None
            if self._owns_file:
                try:
                    file.close()
                except (OSError, ValueError):
                    pass

    def close(self) -> None:
        """Stop recording (idempotent): a file this recorder opened is closed, one given to it is flushed."""
        with self._lock:
            file, self._file = self._file, None
        if file is None:
            return
        try:
            if self._owns_file:
                file.close()
            else:
                file.flush()
        except (OSError, ValueError):
            pass

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Recorder({self.name!r}{', closed' if self.closed else ''})"


class RecordingPeer:
    """One connection's side of a `Recorder`: records under its peer name, noting the protocol revision on the
    line that makes it known (`revision_of`)."""

    __slots__ = ("recorder", "name", "revision")

    def __init__(self, recorder: Recorder, name: str) -> None:
        self.recorder = recorder
        self.name = name
        #: The last revision noted for this peer (None before any).
        self.revision: Optional[str] = None

    def _noted(self, message: Any) -> Optional[str]:
        found = revision_of(message)
        if found is None or found == self.revision:
            return None
        self.revision = found  # (a race between two threads at most notes it twice: harmless)
        return found

    def sent(self, message: Any, headers: Optional[Mapping[str, str]] = None) -> None:
        self.recorder.record(self.name, "send", message, headers=headers, revision=self._noted(message))

    def received(self, message: Any, headers: Optional[Mapping[str, str]] = None) -> None:
        self.recorder.record(self.name, "recv", message, headers=headers, revision=self._noted(message))

    def received_invalid(self, error: BaseException) -> None:
        self.recorder.record(self.name, "recv", invalid=str(error))


#: Where a 2026-07-28 request names its revision: its ``params._meta`` key (`methods.PROTOCOL_VERSION_KEY`).
_ENVELOPE_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"


def revision_of(message: Any) -> Optional[str]:
    """The protocol revision a message makes known, or None: an ``initialize`` answer's ``protocolVersion`` (the
    handshake era), or the version in a 2026-07-28 request's ``_meta`` envelope."""
    if not isinstance(message, dict):
        return None  # (a batch: only the handshake era has them, and its initialize is never batched)
    result = message.get("result")
    if isinstance(result, dict):
        version = result.get("protocolVersion")
        return version if isinstance(version, str) and "serverInfo" in result else None
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get(_ENVELOPE_VERSION_KEY) if isinstance(meta, dict) else None
    return version if isinstance(version, str) and "method" in message else None


def open_recorder(record: RecordTo) -> Tuple[Recorder, bool]:
    """The recorder a ``record=`` option names, and whether the caller opened it (and so closes it): a path is
    opened here; a `Recorder` is its giver's to close."""
    if isinstance(record, Recorder):
        return record, False
    return Recorder(record), True


class _RecordingSink(MessageSink):
    """Records what the wrapped transport delivers, then hands it on."""

    def __init__(self, inner: MessageSink, peer: RecordingPeer) -> None:
        self._inner = inner
        self._peer = peer

    def receive(self, value: Any) -> None:
        self._peer.received(value)
        self._inner.receive(value)

    def receive_invalid(self, exc: InvalidMessage) -> None:
        self._peer.received_invalid(exc)
        self._inner.receive_invalid(exc)

    def connection_lost(self, exc: Optional[BaseException]) -> None:
        self._inner.connection_lost(exc)

    def input_ended(self, exc: Optional[BaseException]) -> None:
        self._inner.input_ended(exc)

    def fail_request(self, request_id: RequestId, exc: BaseException) -> None:
        self._inner.fail_request(request_id, exc)


#: The attributes a `RecordingTransport` keeps for itself; every other one is the wrapped transport's.
_OWN_ATTRIBUTES = frozenset({"inner", "peer", "wants_route", "_owns_recorder", "_sent_headers"})


class RecordingTransport(Transport):
    """Wraps any transport: each message sent is recorded as "send" and each one delivered as "recv" (with what
    did not decode), under ``peer``'s name; everything else is the wrapped transport's. Reading or setting any
    other attribute reaches it (a stdio transport's ``process``, an HTTP one's ``session_id``); so does
    ``.inner``.

    Args:
        inner: the transport to record.
        peer: what to record with (`Recorder.peer`).
        owns_recorder: close ``peer``'s recorder when this transport closes (it was opened for it).
        sent_headers: record the protocol headers of what is sent (an HTTP client's requests; not an HTTP
            server's answers, whose lines would repeat the version header).
    """

    inner: Transport
    peer: RecordingPeer
    _owns_recorder: bool
    _sent_headers: bool

    def __init__(self, inner: Transport, peer: RecordingPeer, *, owns_recorder: bool = False,
                 sent_headers: bool = True) -> None:
        object.__setattr__(self, "inner", inner)
        object.__setattr__(self, "_sent_headers", sent_headers)
        object.__setattr__(self, "peer", peer)
        object.__setattr__(self, "wants_route", inner.wants_route)
        object.__setattr__(self, "_owns_recorder", owns_recorder)

    def start(self, sink: MessageSink) -> None:
        self.inner.start(_RecordingSink(sink, self.peer))

    def send(self, message: Any, route: Optional[Route] = None) -> None:
        # (route.headers: the protocol headers an HTTP client sends the message with; a stream has none)
        self.peer.sent(message, route.headers if route is not None and self._sent_headers else None)  # before the write: the answer cannot be recorded before its request
        self.inner.send(message, route)

    def cancel(self, request_id: RequestId) -> bool:
        return self.inner.cancel(request_id)

    def close(self) -> None:
        try:
            self.inner.close()
        finally:
            self._close_recorder()

    def abort(self) -> None:
        try:
            self.inner.abort()
        finally:
            self._close_recorder()

    def set_deadline(self, deadline: Optional[float]) -> None:
        self.inner.set_deadline(deadline)

    def _close_recorder(self) -> None:
        if self._owns_recorder:
            self.peer.recorder.close()

    def __getattr__(self, name: str) -> Any:  # only for what this class does not have itself
        if name == "inner":  # (during unpickling or before __init__: no recursion)
            raise AttributeError(name)
        return getattr(self.inner, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _OWN_ATTRIBUTES:
            object.__setattr__(self, name, value)
        else:
            setattr(self.inner, name, value)

    def __repr__(self) -> str:
        return f"RecordingTransport({self.inner!r}, peer={self.peer.name!r})"


# ---- the HTTP server: its sessions are made per client by the app, which hands each one its messages ----------


class _RecordingSession:
    """A hosted session whose incoming messages are recorded as the HTTP app hands them over (its outgoing ones
    are recorded by its `RecordingTransport`). Anything else is the session's."""

    def __init__(self, inner: HostedSession, peer: RecordingPeer) -> None:
        self._inner = inner
        self._peer = peer

    @property
    def revision(self) -> Any:
        return self._inner.revision

    @property
    def lifecycle(self) -> Any:
        return self._inner.lifecycle

    def start(self) -> None:
        self._inner.start()

    def close(self) -> None:
        self._inner.close()

    def on_close(self, hook: Callable[[], None]) -> None:
        self._inner.on_close(hook)

    def receive(self, value: Any, *, inline: bool = False, request_info: Optional[RequestInfo] = None,
                wait_deferred: bool = True) -> None:
        self._peer.received(value, request_info.headers if request_info is not None else None)
        self._inner.receive(value, inline=inline, request_info=request_info, wait_deferred=wait_deferred)

    def assume_initialized(self, version: str) -> None:
        self._inner.assume_initialized(version)

    def expect_envelope(self) -> None:
        self._inner.expect_envelope()

    def __getattr__(self, name: str) -> Any:
        if name == "_inner":
            raise AttributeError(name)
        return getattr(self._inner, name)


class RecordingFactory:
    """A `SessionFactory` (the `Server`) whose sessions are recorded, for an HTTP app: each session under its own
    peer name, its ``Mcp-Session-Id`` (or legacy ``session_id``) as the logs show it, after the app's
    ``session_id_prefix``; ``stateless`` for a session without one (stateless serving, 2026-07-28 requests).
    Anything else (``supported_versions``, ``bind_principal``, ``name``) is the wrapped factory's."""

    def __init__(self, factory: SessionFactory, recorder: Recorder) -> None:
        self._factory = factory
        self.recorder = recorder

    @property
    def supported_versions(self) -> Sequence[str]:
        return self._factory.supported_versions

    def create_session(self, transport: Transport) -> HostedSession:
        session_id: Optional[str] = getattr(transport, "session_id", None)
        if session_id is None:
            name = "stateless"
        else:
            prefix = getattr(getattr(transport, "host", None), "session_id_prefix", "")
            name = session_label(session_id[len(prefix):] if prefix and session_id.startswith(prefix)
                                 else session_id)
        peer = self.recorder.peer(name)
        return _RecordingSession(self._factory.create_session(RecordingTransport(transport, peer, sent_headers=False)),
                                 peer)

    def __getattr__(self, name: str) -> Any:
        if name == "_factory":
            raise AttributeError(name)
        return getattr(self._factory, name)


# ---- reading a recording back ---------------------------------------------------------------------------------


def read_recording(file: Union[str, "os.PathLike[str]", IO[str]]) -> Iterator[Dict[str, Any]]:
    """The lines of a recording after its header, one dict each (``t``, ``peer``, ``dir``, and ``message`` or
    ``invalid``), checked as they are read.

    Raises `RecordingError` (naming the line) for a file that is not a recording (no header, a version other
    than `FORMAT_VERSION`), or a line that is not one of its lines. A last line cut short (the recording
    process died while writing it) is left out, as if it had not been begun.
    """
    if isinstance(file, (str, os.PathLike)):
        name = os.fsdecode(os.fspath(file))
        with open(name, encoding="utf-8", newline="\n") as opened:
            yield from _read_lines(opened, name)
    else:
        yield from _read_lines(file, str(getattr(file, "name", "<stream>")))


def _read_lines(file: IO[str], name: str) -> Iterator[Dict[str, Any]]:
    header = file.readline()
    if not header:
        raise RecordingError(f"{name}: empty: not an mcplite recording")
    value = _parse(header, name, 1)
    if value is None or value.get("mcplite_recording") is None:
        raise RecordingError(f"{name}: line 1 is not an mcplite recording's header")
    if value["mcplite_recording"] != FORMAT_VERSION:
        raise RecordingError(f"{name}: recording format {value['mcplite_recording']!r}; this version of mcplite "
                             f"reads {FORMAT_VERSION}")
    number = 1
    last = 0.0
    for line in file:
        number += 1
        entry = _parse(line, name, number)
        if entry is None:  # an unfinished last line
            return
        problem = _problem(entry, last)
        if problem:
            raise RecordingError(f"{name}: line {number}: {problem}")
        last = entry["t"]
        yield entry


def _parse(line: str, name: str, number: int) -> Optional[Dict[str, Any]]:
    """One line's JSON object; None for a last line cut short (no newline, and not whole JSON)."""
    try:
        value = json_text.loads(line)  # bounded: deep nesting or a huge number is refused, not a RecursionError
    except json_text.NotPortableJSON as exc:
        raise RecordingError(f"{name}: line {number}: {exc}") from None
    except ValueError:
        if not line.endswith("\n"):
            return None
        raise RecordingError(f"{name}: line {number} is not JSON") from None
    if not isinstance(value, dict):
        raise RecordingError(f"{name}: line {number} is not a JSON object")
    return value


def _problem(entry: Dict[str, Any], last: float) -> str:
    """What is wrong with one line of a recording; "" when nothing is."""
    t = entry.get("t")
    if not isinstance(t, (int, float)) or isinstance(t, bool) or t < 0:
        return "t must be a number of seconds, at least 0"
    if t < last:
        return f"t goes back in time ({t} after {last})"
    if not isinstance(entry.get("peer"), str):
        return "peer must be a string"
    if entry.get("dir") not in ("send", "recv"):
        return "dir must be \"send\" or \"recv\""
    has_message, has_invalid = "message" in entry, "invalid" in entry
    if has_message == has_invalid:
        return "a line holds either message or invalid"
    if has_invalid and not isinstance(entry["invalid"], str):
        return "invalid must be a string"
    if has_message and not isinstance(entry["message"], (dict, list)):
        return "message must be a JSON-RPC message (an object) or batch (an array)"
    headers = entry.get("headers")
    if headers is not None and not (isinstance(headers, dict) and all(isinstance(v, str) for v in headers.values())):
        return "headers must be an object of strings"
    if "revision" in entry and not isinstance(entry["revision"], str):
        return "revision must be a string"
    return ""

