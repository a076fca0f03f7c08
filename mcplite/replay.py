"""`mcplite.replay`: serve a recording (docs/recording.md) as a server, answering what it recorded.

    server = ReplayServer("session.jsonl")
    with Client(server) as client:            # in this process
        client.call_tool("add", {"a": 1, "b": 2})
    server.run()                              # over stdio, or server.run(http="127.0.0.1:8000")

A `ReplayServer` is what `Client(...)` connects to in memory, and what ``python -m mcplite replay CASSETTE``
serves. It speaks through real sessions (`session.ServerSession`): the handshake, ``ping``, the 2026-07-28
``_meta`` ladder and the HTTP transport are the library's own, and every other request is answered from the
recording.

What is replayed. A recording is read as one side's view of each connection: a peer whose first line the
recording process received was a client of it (the recording process served it: ``server.run(record=...)``, a
gateway's front, an HTTP server's sessions); one whose first line it sent was a server (a `Client`'s recording,
``python -m mcplite record``, a gateway's upstream). The server's side is replayed. By default: every peer that was
a client of the recording process (a gateway's front), else the one peer that was a server; ``peer=`` names one.

Matching. A request is answered with the recorded answer of a recorded request of the same method whose params,
normalized, are equal: the first such not yet answered, else the last one (a client that asks twice). Normalized:
the JSON-RPC id is not compared (nor any session id: they are HTTP headers); ``requestState`` is left out
wherever it is; in ``_meta``, the fields that vary per request or per client are left out (``progressToken``,
and 2026-07-28's envelope: ``io.modelcontextprotocol/protocolVersion``, ``clientInfo``, ``clientCapabilities``,
``logLevel``); a string that is an ISO 8601 timestamp matches any timestamp; a value the recording redacted
(``"[redacted]"``) matches any value, since the live request is redacted the same way before comparing. A request
that matches nothing gets a JSON-RPC error (-32601 when the method was never recorded, else -32602) whose
message names the closest recorded request of that method (the fewest differing fields) and what differs.

The recorded server's requests and notifications are replayed where they were recorded: those it sent while a
request was in progress before that request's answer (a progress notification under the live request's
``progressToken``; a request such as ``sampling/createMessage`` waits for the client's answer, which is not
checked), those it sent after an answer (before the client's next message) just after the replayed answer.
Nothing waits for the recorded times.

``initialize`` is answered by the session with the recorded answer's server info, capabilities and instructions
(from ``server/discover``'s when the recording has no handshake), at the revision the client asks for. The
revisions offered are the handshake's, and 2026-07-28 only when the recording was made at it.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import json
import os
import re
import threading

from ._log import log
from .errors import INVALID_PARAMS, METHOD_NOT_FOUND, MCPError, RecordingError, RPCError
from .protocol import methods
from .protocol.versions import ENVELOPE_VERSIONS, HANDSHAKE_VERSIONS
from .transports import Transport
from .transports.recording import REDACTED, read_recording, redact

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    from typing import IO, Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

    from .protocol.http_rules import Route
    from .session import RequestContext
    from .session.server import ServerSession
    from .transports import MessageSink

    _CassetteSource = Union[str, "os.PathLike[str]", IO[str], Iterable[Dict[str, Any]]]

__all__ = ["ReplayServer", "Exchange", "normalized", "differences"]

#: The ``_meta`` fields left out when matching: they vary per request (the progress token) or per client (the
#: 2026-07-28 envelope), not with what is asked.
VARYING_META = frozenset({methods.PROGRESS_TOKEN_KEY, methods.PROTOCOL_VERSION_KEY, methods.CLIENT_INFO_KEY,
                          methods.CLIENT_CAPABILITIES_KEY, methods.LOG_LEVEL_KEY})
#: What a timestamp becomes when matching.
TIMESTAMP = "<timestamp>"
_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?\Z")
#: The most differences one error message lists.
_SHOWN_DIFFERENCES = 5


def normalized(value: Any) -> Any:
    """``value`` (a request's params) as it is compared (see the module docstring): a copy without
    ``requestState`` and the varying ``_meta`` fields, its timestamps made alike."""
    if isinstance(value, dict):
        copy: Dict[str, Any] = {}
        for key, item in value.items():
            if key == "requestState":
                continue
            if key == "_meta" and isinstance(item, dict):
                meta = {name: normalized(field) for name, field in item.items()
                        if name not in VARYING_META and name != "requestState"}
                if meta:
                    copy[key] = meta
                continue
            copy[key] = normalized(item)
        return copy
    if isinstance(value, list):
        return [normalized(item) for item in value]
    if isinstance(value, str) and len(value) >= 16 and _TIMESTAMP.match(value):
        return TIMESTAMP
    return value


def _short(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def differences(recorded: Any, asked: Any, path: str = "params") -> List[str]:
    """What differs between two normalized values, one line per differing field (``params.arguments.b:
    recorded 2, asked 5``); empty when they match. A recorded ``"[redacted]"`` matches anything."""
    if recorded == asked or recorded == REDACTED:
        return []
    if isinstance(recorded, dict) and isinstance(asked, dict):
        found: List[str] = []
        for key in sorted(set(recorded) | set(asked), key=str):
            where = f"{path}.{key}"
            if key not in asked:
                found.append(f"{where}: recorded {_short(recorded[key])}, absent")
            elif key not in recorded:
                found.append(f"{where}: not recorded, asked {_short(asked[key])}")
            else:
                found.extend(differences(recorded[key], asked[key], where))
        return found
    if isinstance(recorded, list) and isinstance(asked, list) and len(recorded) == len(asked):
        found = []
        for index, (was, now) in enumerate(zip(recorded, asked)):
            found.extend(differences(was, now, f"{path}[{index}]"))
        return found
    return [f"{path}: recorded {_short(recorded)}, asked {_short(asked)}"]


class Exchange:
    """One recorded request and what the server did about it.

    Attributes:
        peer: the peer name it was recorded under.
        method, params: the request (params as recorded, redacted).
        key: ``params`` `normalized`: what a live request's is compared with.
        answer: the recorded answer (the JSON-RPC response, ``result`` or ``error``); None if it had none.
        during: the server's requests and notifications sent before the answer, while this request was the
            latest one in progress.
        after: those sent after the answer, before the client's next message.
        asked: how many times it has been answered in this replay.
    """

    __slots__ = ("peer", "method", "params", "key", "answer", "during", "after", "asked")

    def __init__(self, peer: str, method: str, params: Any) -> None:
        self.peer = peer
        self.method = method
        self.params = params if params is not None else {}
        self.key = normalized(self.params)
        self.answer: Optional[Dict[str, Any]] = None
        self.during: List[Dict[str, Any]] = []
        self.after: List[Dict[str, Any]] = []
        self.asked = 0

    def __repr__(self) -> str:
        return f"Exchange({self.method} {_short(self.params)}, peer={self.peer!r})"


def _id_key(request_id: Any) -> str:
    return json.dumps(request_id)


def _is_server_side(entries: List[Dict[str, Any]]) -> bool:
    """Whether the recording process served this peer: the first thing on a connection comes from the client."""
    return bool(entries[0]["dir"] == "recv")


def _exchanges(peer: str, entries: List[Dict[str, Any]]) -> List[Exchange]:
    """The requests a client made on one connection, each with the server's answer and what it sent around it."""
    from_client = "recv" if _is_server_side(entries) else "send"
    found: List[Exchange] = []
    in_progress: Dict[str, Exchange] = {}  # by request id, oldest first
    answered_last: Optional[Exchange] = None  # whose `after` the server's messages go to, until the client speaks
    for entry in entries:
        message = entry.get("message")
        for item in message if isinstance(message, list) else [message]:
            if not isinstance(item, dict):
                continue
            if entry["dir"] == from_client:
                answered_last = None
                if isinstance(item.get("method"), str) and "id" in item:
                    exchange = Exchange(peer, item["method"], item.get("params"))
                    in_progress[_id_key(item["id"])] = exchange
                    found.append(exchange)
            elif "method" not in item:  # an answer
                key = _id_key(item.get("id"))
                if key in in_progress:
                    answered_last = in_progress.pop(key)
                    answered_last.answer = item
            elif isinstance(item.get("method"), str):  # the server's own request or notification
                owner = _owner(item, in_progress)
                if owner is not None:
                    owner.during.append(item)
                elif answered_last is not None:
                    answered_last.after.append(item)
    return found


def _owner(message: Dict[str, Any], in_progress: Dict[str, Exchange]) -> Optional[Exchange]:
    """The request in progress a message of the server's belongs to: the one whose progress token it reports,
    else the latest one."""
    if not in_progress:
        return None
    params = message.get("params")
    token = params.get("progressToken") if isinstance(params, dict) else None
    if token is not None:
        for exchange in in_progress.values():
            meta = exchange.params.get("_meta") if isinstance(exchange.params, dict) else None
            if isinstance(meta, dict) and meta.get("progressToken") == token:
                return exchange
    return list(in_progress.values())[-1]


class _AfterAnswers(Transport):
    """The session's transport, which sends what the recording's server sent after an answer just after the
    replayed one (`ReplayServer._answer` says which answer by its id). Anything else is the wrapped transport's."""

    def __init__(self, inner: Transport) -> None:
        self.inner = inner
        self.wants_route = inner.wants_route
        self.session: Optional[ServerSession] = None
        # Guards _after: filled on a handler's thread, taken on the one that sends the answer.
        self._lock = threading.Lock()
        self._after: Dict[str, List[Dict[str, Any]]] = {}

    def follow(self, request_id: Any, messages: List[Dict[str, Any]]) -> None:
        with self._lock:
            self._after[_id_key(request_id)] = messages

    def start(self, sink: MessageSink) -> None:
        self.inner.start(sink)

    def send(self, message: Any, route: Optional[Route] = None) -> None:
        self.inner.send(message, route)
        if self._after and isinstance(message, dict) and "method" not in message:
            with self._lock:
                following = self._after.pop(_id_key(message.get("id")), None)
            if following and self.session is not None:
                for item in following:
                    _send_own(self.session, item, None, wait=False)

    def cancel(self, request_id: Any) -> bool:
        return self.inner.cancel(request_id)

    def close(self) -> None:
        self.inner.close()

    def abort(self) -> None:
        self.inner.abort()

    def set_deadline(self, deadline: Optional[float]) -> None:
        self.inner.set_deadline(deadline)

    def __getattr__(self, name: str) -> Any:  # (an HTTP session transport's session_id, host...)
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)


def _send_own(session: ServerSession, message: Dict[str, Any], ctx: Optional[RequestContext], *, wait: bool) -> None:
    """Replay one request or notification the recorded server sent, on the live ``session`` (during ``ctx``)."""
    method: str = message["method"]
    params = message.get("params")
    related = ctx.id if ctx is not None else None
    try:
        if "id" in message:
            pending = session.send_request(method, params, related_request_id=related)
            if wait:
                pending.result()
            return
        if method == methods.PROGRESS:
            token = ctx.progress_token if ctx is not None else None
            if token is None:
                return  # the live request asked for no progress
            params = {**(params or {}), "progressToken": token}
        session.notify(method, params, related_request_id=related)
    except MCPError as exc:  # the client cannot take it (no such capability, the connection went): go on
        log.debug("mcplite: replay: %s not replayed: %s", method, exc)


class ReplayServer:
    """A server that answers what a recording recorded (see the module docstring).

    Args:
        cassette: a recording: its path, a text file open on it, or its lines as `read_recording` yields them.
        peer: the peer name whose connection to replay (default: see the module docstring).
        name: the server's name in logs (default: ``replay of`` the file's name).
        max_workers: concurrent requests per connection.

    Raises:
        RecordingError: not a recording, ``peer`` names no peer in it, several peers and none chosen, or
            nothing to replay.

    Attributes:
        exchanges: every recorded request, in the order recorded (`Exchange`).
        misses: the requests asked that matched nothing, as ``(method, params)``, in the order asked.
    """

    def __init__(self, cassette: _CassetteSource, *, peer: Optional[str] = None, name: Optional[str] = None,
                 max_workers: int = 8) -> None:
        entries: List[Dict[str, Any]]
        if isinstance(cassette, (str, os.PathLike)):
            source = os.fsdecode(os.fspath(cassette))
            entries = list(read_recording(source))
        elif hasattr(cassette, "readline"):
            source = str(getattr(cassette, "name", "<stream>"))
            entries = list(read_recording(cassette))  # type: ignore[arg-type]
        else:
            source = "<lines>"
            given: Any = cassette  # (an iterable of lines: what is left of the union)
            entries = [dict(entry) for entry in given]
        self.name = name or f"replay of {os.path.basename(source)}"
        self.max_workers = max_workers
        by_peer: Dict[str, List[Dict[str, Any]]] = {}
        for entry in entries:
            by_peer.setdefault(entry["peer"], []).append(entry)
        self.exchanges: List[Exchange] = []
        for chosen in _chosen_peers(by_peer, peer, source):
            self.exchanges.extend(_exchanges(chosen, by_peer[chosen]))
        if not self.exchanges:
            raise RecordingError(f"{source}: no request to replay")
        self.misses: List[Tuple[str, Any]] = []
        self._by_method: Dict[str, List[Exchange]] = {}
        for exchange in self.exchanges:
            self._by_method.setdefault(exchange.method, []).append(exchange)
        # Guards the `asked` counts and `misses`: HTTP sessions answer on several threads at once.
        self._lock = threading.Lock()
        enveloped = any(isinstance(exchange.params.get("_meta"), dict)
                        and methods.PROTOCOL_VERSION_KEY in exchange.params["_meta"] for exchange in self.exchanges)
        #: The revisions offered: the handshake's, and 2026-07-28's when the recording speaks it.
        self.supported_versions: Tuple[str, ...] = tuple(ENVELOPE_VERSIONS if enveloped else ()) + HANDSHAKE_VERSIONS
        self._initialize = _initialize_result(self.exchanges)

    # ---- serving --------------------------------------------------------------------------------------------
    def create_session(self, transport: Transport) -> ServerSession:
        """A session answering from the recording over ``transport``, not yet started (transports call this)."""
        from .session.server import ServerSession

        wrapped = _AfterAnswers(transport)
        session = ServerSession(wrapped, initialize_result=lambda params: dict(self._initialize),
                                supported_versions=self.supported_versions,
                                answer_request=lambda ctx: self._answer(wrapped, ctx),
                                max_workers=self.max_workers, name=f"mcplite-{self.name}")
        wrapped.session = session
        return session

    def connect(self, transport: Transport) -> ServerSession:
        """Serve the recording over ``transport``; returns the started session (`Client(replay_server)` calls it)."""
        session = self.create_session(transport)
        session.start()
        return session

    def run(self, http: Optional[str] = None, **options: Any) -> None:
        """Serve until the client goes away: stdio by default, or Streamable HTTP on ``"host:port"`` with the
        HTTP server's options (as `Server.run`)."""
        from ._log import use_stderr_by_default

        use_stderr_by_default()
        if http is not None:
            from .transports.http_server.stdlib import serve

            serve(self, http, **options)
            return
        from .transports.stdio import StdioServerTransport

        session = self.connect(StdioServerTransport())
        try:
            while not session.closed.wait(3600):  # (with a timeout: Ctrl-C interrupts it on Windows too)
                pass
        except KeyboardInterrupt:
            pass
        finally:
            session.close()

    # ---- answering ------------------------------------------------------------------------------------------
    def find(self, method: str, params: Any) -> Exchange:
        """The recorded exchange that answers a request (see the module docstring), counted as asked.

        Raises:
            RPCError: nothing recorded matches: -32601 (the method was never recorded) or -32602, naming the
                closest recorded request and what differs.
        """
        key = normalized(redact(params if params is not None else {}))
        candidates = self._by_method.get(method, [])
        with self._lock:
            matching = [exchange for exchange in candidates if not differences(exchange.key, key)]
            if matching:
                chosen = next((exchange for exchange in matching if exchange.asked == 0), matching[-1])
                chosen.asked += 1
                return chosen
            self.misses.append((method, params))
        if not candidates:
            recorded = ", ".join(sorted(self._by_method)) or "none"
            raise RPCError(METHOD_NOT_FOUND, f"Method not found: {method} is not in the recording (recorded: "
                                             f"{recorded})", {"recorded": sorted(self._by_method)})
        scored = [(differences(exchange.key, key), exchange) for exchange in candidates]
        found, closest = min(scored, key=lambda pair: len(pair[0]))
        shown = "; ".join(found[:_SHOWN_DIFFERENCES]) + ("; ..." if len(found) > _SHOWN_DIFFERENCES else "")
        # Both shown normalized: the envelope's _meta would hide what differs.
        raise RPCError(INVALID_PARAMS, f"Not in the recording: {method} {_short(key, 200)}; the closest recorded "
                                       f"is {method} {_short(closest.key, 200)} ({shown})",
                       {"closest": {"method": method, "params": closest.params}, "differences": found})

    def unasked(self) -> List[Exchange]:
        """The recorded requests no one has asked in this replay (``initialize`` and ``ping`` are the session's)."""
        with self._lock:
            return [exchange for exchange in self.exchanges if exchange.asked == 0
                    and exchange.method not in (methods.INITIALIZE, methods.PING)]

    def _answer(self, transport: _AfterAnswers, ctx: RequestContext) -> Dict[str, Any]:
        """The recorded answer to ``ctx``, under its id, after what the server sent while answering it."""
        exchange = self.find(ctx.method, ctx.params)
        for message in exchange.during:
            _send_own(ctx.session, message, ctx, wait=True)  # type: ignore[arg-type]
        if exchange.answer is None:
            raise RPCError(INVALID_PARAMS, f"{ctx.method}: the recording has this request but not its answer (the "
                                           "recording ended first)")
        if exchange.after:
            transport.follow(ctx.id, exchange.after)
        return {**exchange.answer, "id": ctx.id}  # the recorded answer as it was, but for its id

    def __repr__(self) -> str:
        return f"ReplayServer({self.name!r}, {len(self.exchanges)} requests)"


def _chosen_peers(by_peer: Dict[str, List[Dict[str, Any]]], peer: Optional[str], source: str) -> List[str]:
    if peer is not None:
        if peer not in by_peer:
            raise RecordingError(f"{source}: no peer {peer!r} (peers: {', '.join(sorted(by_peer)) or 'none'})")
        return [peer]
    served = [name for name, entries in by_peer.items() if _is_server_side(entries)]
    if served:
        return served
    if len(by_peer) == 1:
        return list(by_peer)
    raise RecordingError(f"{source}: several servers were recorded ({', '.join(sorted(by_peer))}): choose one "
                         "(peer=, or --peer)")


def _initialize_result(exchanges: Sequence[Exchange]) -> Dict[str, Any]:
    """What ``initialize`` is answered with (without ``protocolVersion``): the recorded answer's, else what the
    recorded ``server/discover`` answer says."""
    for exchange in exchanges:
        result = (exchange.answer or {}).get("result")
        if exchange.method == methods.INITIALIZE and isinstance(result, dict):
            return {key: value for key, value in result.items() if key != "protocolVersion"}
    for exchange in exchanges:
        result = (exchange.answer or {}).get("result")
        if exchange.method == methods.SERVER_DISCOVER and isinstance(result, dict):
            meta = result.get("_meta")
            info = meta.get(methods.SERVER_INFO_KEY) if isinstance(meta, dict) else None
            initialize = {"capabilities": result.get("capabilities") or {},
                          "serverInfo": info if isinstance(info, dict) else {"name": "mcplite-replay",
                                                                              "version": "0"}}
            if isinstance(result.get("instructions"), str):
                initialize["instructions"] = result["instructions"]
            return initialize
    return {"capabilities": {}, "serverInfo": {"name": "mcplite-replay", "version": "0"}}
