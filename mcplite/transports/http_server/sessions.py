"""The table of live stateful sessions, and the housekeeping thread that keeps streams alive and expires sessions.

A stateful session (Streamable HTTP with ``MCP-Session-Id``, or a legacy HTTP+SSE connection) lives here from
the request that opens it until it closes. Every request that uses it checks it out (`SessionTable.checkout`)
and back in (`SessionTable.checkin`): a session is idle only while nothing has it checked out, so a long
handler or an open GET stream never lets it expire. One daemon thread, started on first use, writes keep-alive
comments on silent streams and ends sessions idle for longer than ``session_idle_timeout``.

A full table (``max_sessions``) does not lock new clients out: a new session evicts the session that has been
idle longest, closed as expiry closes it (its client's next request gets 404 and initializes again). Only
when every session is in use (a request or a stream has it checked out) is the new one refused with 503.

A session belongs to the principal that opened it (who ``authenticate`` says is calling; None on a server
without it): a request of another principal that names it is answered exactly as for an unknown id (404), so a
session id that leaked (a log, a proxy) lets nobody else in, and a prober cannot tell a live id from a dead
one. The server's log says why, with the id cut short (`_log.session_label`), as every log line shows ids.

The table is also the streams' `StreamHost`: every response that carries a stream, stateful or stateless, is
registered here (`track`) for the keep-alives.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import secrets
import threading
import time

from ..._log import log, session_label
from ...protocol.http_rules import is_valid_session_id
from .adapter import Reject
from .streams import Attachment, SessionTransport, Stream, StreamHost

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    from typing import Callable, Dict, Mapping, Optional

    from .. import HostedSession, SessionFactory
    from . import HTTPOptions
    from .eventstore import EventStore

__all__ = ["SessionEntry", "SessionTable"]


class SessionEntry:
    """A live stateful session, and how recently a request used it (fields guarded by the table's lock)."""

    __slots__ = ("session", "transport", "principal", "busy", "last_active")

    def __init__(self, session: HostedSession, transport: SessionTransport, now: float,
                 principal: Optional[str] = None) -> None:
        self.session = session
        self.transport = transport
        #: Who opened it (`principal.principal_of` of authenticate's claims); only they may use it.
        self.principal = principal
        self.busy = 1  # requests and streams in progress; the session is never idle while this is > 0
        self.last_active = now


class SessionTable(StreamHost):
    """The live sessions of one app, by id; the keep-alive registry of its streams.

    Args:
        factory: makes each session (the `Server`).
        options: the app's settings (``max_sessions``, ``session_idle_timeout``, ``keepalive_interval``,
            ``json_response``, ``sse_retry``).
        event_store: where resumable events are kept, None when streams are not resumable.
        clock: what idleness is measured with, in seconds (tests set a clock they can move).
    """

    def __init__(self, factory: SessionFactory, options: HTTPOptions, event_store: Optional[EventStore], *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._factory = factory
        self.clock = clock
        self.max_sessions = options.max_sessions
        self.idle_timeout = options.session_idle_timeout
        self.keepalive_interval = options.keepalive_interval
        self.json_response = options.json_response
        self.sse_retry = options.sse_retry
        self.event_store = event_store
        self.session_id_prefix = options.session_id_prefix  # says which process owns a session, to a proxy
        # Guards _sessions, _attachments, _housekeeper and every SessionEntry's busy and last_active.
        self._lock = threading.Lock()
        self._sessions: Dict[str, SessionEntry] = {}
        self._attachments: Dict[Attachment, Stream] = {}  # every response carrying a stream, for keep-alives
        self._housekeeper: Optional[threading.Thread] = None
        self._stopping = threading.Event()

    # ---- sessions ---------------------------------------------------------------------------------------
    def new_session(self, transport: SessionTransport) -> HostedSession:
        """A session over ``transport`` from the factory, started; not in the table (stateless, or on its way)."""
        session = self._factory.create_session(transport)
        transport.session = session
        session.start()  # hands the transport its sink; starts no thread
        return session

    def open(self, *, legacy: bool, principal: Optional[str] = None) -> SessionEntry:
        """Create a stateful session of ``principal``, checked out (the caller checks it in).

        At the cap the longest-idle session is evicted to make room; 503 only when every session is in use.
        """
        self.expire_idle(self.clock())
        session_id = self.session_id_prefix + secrets.token_hex(16)
        transport = SessionTransport(self, session_id, legacy=legacy)
        session = self.new_session(transport)
        entry = SessionEntry(session, transport, self.clock(), principal)
        evicted: Optional[SessionEntry] = None
        with self._lock:
            full = len(self._sessions) >= self.max_sessions
            if full:
                victim = self._longest_idle()
                if victim is not None:
                    # Out of the table under the lock that chose it: no checkout can take it now, and no other
                    # `open` can choose it too.
                    evicted = self._sessions.pop(victim)
                    full = False
            if not full:
                self._sessions[session_id] = entry
        if evicted is not None:
            log.info("mcplite HTTP: %d sessions live: evicting the longest-idle one", self.max_sessions)
            evicted.session.close()  # as expiry does; its close hook finds it already gone from the table
        if full:
            session.close()
            raise Reject(503, "Service Unavailable: too many sessions, all in use", headers=[("Retry-After", "5")])
        session.on_close(lambda: self._forget(session_id))
        self._ensure_housekeeper()
        return entry

    def _longest_idle(self) -> Optional[str]:
        """The id of the session nothing has checked out that was used least recently; None if all are in use.

        Called with _lock held. A linear scan: it runs only when the table is full, once per new session.
        """
        idle = [(entry.last_active, session_id) for session_id, entry in self._sessions.items() if entry.busy == 0]
        return min(idle)[1] if idle else None

    def _forget(self, session_id: str) -> None:
        with self._lock:
            self._sessions.pop(session_id, None)

    def checkout(self, headers: Mapping[str, str], principal: Optional[str] = None) -> SessionEntry:
        """The Streamable HTTP session the request's ``MCP-Session-Id`` names, as `checkout_id`; 400 without
        one, or for one that is not visible ASCII."""
        session_id = headers.get("mcp-session-id")
        if session_id is None:
            raise Reject(400, "Bad Request: the MCP-Session-Id header is required")
        if not is_valid_session_id(session_id) or "," in session_id:
            # Not a 404, which would tell the client to start a new session: no session could have this id (ours
            # are hex). A comma is how a WSGI server joins two headers ("a,b"; the stdlib server refuses them
            # while parsing).
            raise Reject(400, "Bad Request: MCP-Session-Id must be one value of visible ASCII characters "
                              "(0x21 to 0x7E)")
        return self.checkout_id(session_id, legacy=False, principal=principal)

    def checkout_id(self, session_id: str, *, legacy: bool, principal: Optional[str] = None) -> SessionEntry:
        """The live session with this id, marked busy until `checkin`; 404 if unknown, expired, or another
        principal's (the same 404: see the module docstring)."""
        now = self.clock()
        foreign = False
        with self._lock:
            entry = self._sessions.get(session_id)
            if entry is not None and not self._is_idle(entry, now) and entry.transport.legacy == legacy:
                if entry.principal == principal:
                    entry.busy += 1
                    entry.last_active = now
                    return entry
                foreign = True  # neither used nor kept alive by the stranger
        if foreign:
            log.warning("mcplite HTTP: session %s is another principal's: refused as unknown (404)",
                        session_label(session_id))
        elif entry is not None and self._is_idle(entry, now):
            entry.session.close()
        raise Reject(404, "Session not found")

    def checkin(self, entry: SessionEntry) -> None:
        """The request that checked ``entry`` out is done with it."""
        with self._lock:
            entry.busy -= 1
            entry.last_active = self.clock()

    def _is_idle(self, entry: SessionEntry, now: float) -> bool:
        timeout = self.idle_timeout
        return timeout is not None and entry.busy == 0 and now - entry.last_active > timeout

    def expire_idle(self, now: float) -> None:
        """End every session idle for longer than ``session_idle_timeout`` at ``now``."""
        with self._lock:
            idle = [entry for entry in self._sessions.values() if self._is_idle(entry, now)]
        for entry in idle:
            entry.session.close()  # its close hook removes it from _sessions

    def end_streams(self) -> None:
        """End every open GET stream cleanly, so that none holds up a draining server.

        A Streamable HTTP session lives on without its standalone stream (its requests in progress still get
        their answers); a legacy HTTP+SSE session, whose stream is the connection, ends with it.
        """
        with self._lock:
            entries = list(self._sessions.values())
        for entry in entries:
            if entry.transport.legacy:
                entry.session.close()
            else:
                entry.transport.standalone.detach()

    def close(self) -> None:
        """End every session (and so every stream) and the housekeeping thread: the server is shutting down."""
        self._stopping.set()
        with self._lock:
            entries = list(self._sessions.values())
            self._sessions.clear()
        for entry in entries:
            entry.session.close()

    # ---- keep-alives (StreamHost) -----------------------------------------------------------------------
    def track(self, out: Attachment, stream: Stream) -> Attachment:
        with self._lock:
            self._attachments[out] = stream
        self._ensure_housekeeper()
        return out

    def untrack(self, out: Attachment) -> None:
        with self._lock:
            self._attachments.pop(out, None)

    def _ensure_housekeeper(self) -> None:
        if self._housekeeper is not None or (self.keepalive_interval is None and self.idle_timeout is None):
            return
        with self._lock:
            if self._housekeeper is not None or self._stopping.is_set():
                return
            # Started on first use, not in __init__: a WSGI server may fork workers after building the app.
            self._housekeeper = threading.Thread(target=self._housekeep, name="mcplite-http-housekeeper",
                                                 daemon=True)
        self._housekeeper.start()

    def _housekeep(self) -> None:
        tick = min(x for x in (self.keepalive_interval, self.idle_timeout) if x is not None)
        while not self._stopping.wait(tick):
            now = self.clock()
            if self.keepalive_interval is not None:
                with self._lock:
                    tracked = list(self._attachments.items())
                for out, stream in tracked:
                    stream.keepalive(out, now - self.keepalive_interval)
            self.expire_idle(now)
