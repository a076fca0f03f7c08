"""The MCP lifecycle as a pure state machine, one per role (h11 style): no I/O, threads or clocks.

A session owns one `Lifecycle` and asks it before it sends a request or notification (`check_outgoing`) and
when the peer's request arrives (`check_incoming`); it then tells it what happened (`advance`). The rules
are tables, one `Era` per family of protocol revisions, so that the whole lifecycle can be read against the
spec in one place and tested without threads (tests/test_lifecycle.py). The state diagram is the comment
below.

What each side may send and accept in each state is in the `_HANDSHAKE_*` tables below. In short: before
the handshake only ``initialize`` (client) and ``ping`` (both) are requests either side may send or the
server will accept; ``initialize`` is never batched and never repeated; the server sends no request but
ping until the client has sent ``notifications/initialized``; once CLOSED nothing may be sent.

Two eras (`versions.ERA_NAMES`), one `Era` each: `HANDSHAKE_ERA` (2024-11-05 .. 2025-11-25) and `ENVELOPE_ERA`
(2026-07-28: no handshake, every request carries its revision in its envelope, ``params._meta``). Every session
starts in the handshake era's NEW, where nothing is decided yet; the events of its `switches` move it to the
envelope era (a client that adopts 2026-07-28; a server's first enveloped request, or a transport that knows).
"""

# The handshake era (revisions 2024-11-05 .. 2025-11-25). Every state goes to CLOSED when the connection
# ends; an event with no arrow (a ping, a tools/call, a misplaced notifications/initialized) leaves the
# state as it is.
#
#   client                                        server
#
#   NEW ◀──────────────────────────┐              NEW ◀──┐ send an initialize error (bad params)
#    │ send initialize             │               │ │ └──┘
#    ▼                             │ initialize    │ │
#   INITIALIZING ──────────────────┘ failed        │ └── stateless HTTP: handshake skipped ──┐
#    │ receive an initialize         (error,       │ send the initialize result               │
#    │ result we accept               timeout)     ▼                                          │
#    ▼                                            NEGOTIATED                                  │
#   NEGOTIATED                                     │ receive notifications/initialized        │
#    │ send notifications/initialized              ▼                                          │
#    ▼                                            READY ◀─────────────────────────────────────┘
#   READY
#
# The envelope era (2026-07-28). A session enters it from the handshake era's NEW, where both eras begin:
#
#   client                                        server
#
#   (handshake NEW)                               (handshake NEW) ──── the transport expects 2026-07-28 ──┐
#    │ adopt 2026-07-28 (the probe, a pin)         │ receive an enveloped request we accept             ▼
#    ▼                                             │ (but server/discover, a probe: it decides nothing)  NEW
#   READY                                          ▼                                                     │
#                                                 READY ◀──── receive an enveloped request we accept ───┘

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

from ..errors import (
    INVALID_PARAMS, INVALID_REQUEST, UNSUPPORTED_PROTOCOL_VERSION, ConnectionClosed, LocalProtocolError, RPCError,
)
from .jsonrpc import ERROR, NOTIFICATION, REQUEST, RESPONSE
from .methods import INITIALIZE, INITIALIZED, PING, SERVER_DISCOVER
from .versions import ENVELOPE, HANDSHAKE

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    from typing import Container, Dict, FrozenSet, Optional, Tuple, Type, TypeVar

    from ..errors import MCPError
    from .versions import Revision

    #: (direction, message kind, method): what happened, as the session reports it to `advance`.
    Event = Tuple[str, str, str]
    #: What happens to an outgoing message: None (it may be sent) or the exception class and message to raise.
    OutgoingVerdict = Optional[Tuple[Type[MCPError], str]]
    #: What happens to an incoming request: None (it is taken) or the JSON-RPC error code and message to answer.
    IncomingVerdict = Optional[Tuple[int, str]]
    RuleKey = Tuple[str, str, str, str]  # (role, state, message kind, method or ANY)
    MoveKey = Tuple[str, str, Event]  # (role, state, event), the event's method ANY for any method
    Verdict = TypeVar("Verdict")

__all__ = [
    "CLIENT", "SERVER", "NEW", "INITIALIZING", "NEGOTIATED", "READY", "CLOSED", "STATES", "SEND", "RECEIVE",
    "ANY", "ENVELOPED", "CONNECTION_CLOSED", "HANDSHAKE_SKIPPED", "ENVELOPE_ADOPTED", "ENVELOPE_EXPECTED", "skipped_to",
    "Era", "HANDSHAKE_ERA", "ENVELOPE_ERA", "ERA_BY_NAME", "check_outgoing",
    "check_incoming", "check_incoming_batch", "advance", "cancellable", "Lifecycle",
]

# ---- the vocabulary ---------------------------------------------------------------------------------------
# Roles: which end of the session this lifecycle is.
CLIENT = "client"
SERVER = "server"

# States. Names are shared by both roles; the client alone passes through INITIALIZING (its initialize is
# in flight), while the server answers initialize at once, on its reader thread.
NEW = "new"  # nothing negotiated: initialize has not been sent (client) or answered (server)
INITIALIZING = "initializing"  # the client's initialize is in flight
NEGOTIATED = "negotiated"  # initialize answered; notifications/initialized not yet sent (client) or received
READY = "ready"  # the handshake is over: normal operation
CLOSED = "closed"  # the connection has ended
STATES = (NEW, INITIALIZING, NEGOTIATED, READY, CLOSED)

# Directions of an event, from this side's point of view.
SEND = "send"
RECEIVE = "receive"

#: In a rule, "any method that has no row of its own".
ANY = "*"

#: The kind of a request that carries a 2026-07-28 envelope (``params._meta`` naming its revision), as the
#: server tells the peer's requests apart; what a side sends is checked as a `REQUEST` of its era.
ENVELOPED = "enveloped request"

#: Events that are not a message: the connection ended; the session speaks an era without a handshake
#: (a stateless server, a 2026-07-28 client); the transport says the peer speaks 2026-07-28 (an HTTP request).
CONNECTION_CLOSED: Event = ("local", "closed", "")


def skipped_to(era: str) -> Event:
    """The event "the session speaks ``era`` (a `versions.ERA_NAMES` name) from now on, without a handshake"."""
    return ("local", "handshake skipped", era)


HANDSHAKE_SKIPPED = skipped_to(HANDSHAKE)
ENVELOPE_ADOPTED = skipped_to(ENVELOPE)
ENVELOPE_EXPECTED: Event = ("local", "expected", ENVELOPE)


class Era:
    """One family of protocol revisions' lifecycle: its transitions and what each role may send and accept.

    Args:
        name: what the era is called (a `versions.ERA_NAMES` name: the `Revision.era` of its revisions).
        states: role -> the states that role passes through, in order.
        transitions: (role, state, event) -> the next state; an event with no row leaves the state as it is.
            An event's method may be ANY: the row of every method with no row of its own. Every state goes
            to CLOSED when the connection ends, with no row.
        switches: (role, state, event) -> (another era's name, its state): the events that change the era.
        outgoing: (role, state, kind, method or ANY) -> verdict on sending a request or notification.
        incoming: (role, state, kind, method or ANY) -> verdict on taking the peer's request or notification.
        batched: (role, kind, method or ANY) -> verdict on the peer's request inside a JSON-RPC batch, before
            its unbatched rule.
        uncancellable: methods whose requests may not be cancelled.
    """

    __slots__ = ("name", "states", "transitions", "switches", "outgoing", "incoming", "batched",
                 "uncancellable", "quiet")

    def __init__(self, name: str, states: Dict[str, Tuple[str, ...]], transitions: Dict[MoveKey, str],
                 switches: Dict[MoveKey, Tuple[str, str]], outgoing: Dict[RuleKey, OutgoingVerdict],
                 incoming: Dict[RuleKey, IncomingVerdict], batched: Dict[Tuple[str, str, str], IncomingVerdict],
                 uncancellable: FrozenSet[str]) -> None:
        self.name = name
        self.states = states
        self.transitions = dict(transitions)
        for role, role_states in states.items():
            for state in role_states:
                self.transitions[role, state, CONNECTION_CLOSED] = CLOSED
        self.switches = switches
        self.outgoing = outgoing
        self.incoming = incoming
        self.batched = batched
        self.uncancellable = uncancellable
        #: (role, state) -> kind (REQUEST, NOTIFICATION) -> the methods that may be refused or move the state
        #: there: those with a rule of their own when every other method is allowed both ways and moves
        #: nothing (in READY, mostly), else every method (`_EVERY`). A session asks `Lifecycle.untouched_by`
        #: first, so that ordinary traffic costs one set lookup and no lock.
        self.quiet: Dict[Tuple[str, str], Dict[str, Container[str]]] = {}
        for role, role_states in states.items():
            for state in role_states:
                quiet: Dict[str, Container[str]] = {REQUEST: _EVERY, NOTIFICATION: _EVERY}
                self.quiet[role, state] = quiet
                for kind in (REQUEST, NOTIFICATION):
                    if outgoing.get((role, state, kind, ANY)) is not None \
                            or incoming.get((role, state, kind, ANY)) is not None:
                        continue
                    ruled = {key[3] for key in (*outgoing, *incoming) if key[:3] == (role, state, kind)}
                    moving = {key[2][2] for key in (*transitions, *switches)
                              if key[:2] == (role, state) and key[2][1] == kind}
                    moving |= {key[2] for key in batched if key[:2] == (role, kind)}
                    if ANY not in moving:  # (else every method of this kind may move it, or be refused)
                        quiet[kind] = frozenset((ruled | moving) - {ANY})

    def __repr__(self) -> str:
        return f"Era({self.name!r})"


class _Every:
    """Contains every method: what may be refused or move the state, for a kind that is not quiet."""

    def __contains__(self, method: object) -> bool:
        return True


_EVERY = _Every()


# ---- the handshake era: 2024-11-05 .. 2025-11-25 ----------------------------------------------------------
# The refusals, worded as the session has always worded them (tests/test_session.py holds them).
_NOT_INITIALIZED = (LocalProtocolError, "{method}: the session is not initialized")
_UNDER_WAY = (LocalProtocolError, "{method}: the handshake is already under way")
_ALREADY_INITIALIZED = (LocalProtocolError, "the session is already initialized")
_NOT_ANSWERED = (LocalProtocolError, "{method}: the server has not answered initialize")
_ALREADY_SENT = (LocalProtocolError, "{method}: it has already been sent")
_CLIENT_NOT_INITIALIZED = (LocalProtocolError, "{method}: the client has not finished initializing")
_CLIENT_ONLY = (LocalProtocolError, "{method}: only a client sends it")
_GONE = (ConnectionClosed, "{method}: connection closed")
_BEFORE_INITIALIZE = (INVALID_REQUEST, "Invalid Request: {method} before initialize")
_REINITIALIZE = (INVALID_REQUEST, "Invalid Request: the session is already initialized")
_BATCHED_INITIALIZE = (INVALID_REQUEST, "Invalid Request: initialize cannot be batched")
_HANDSHAKE_CONNECTION = (INVALID_REQUEST, "Invalid Request: this connection serves the handshake protocol era "
                                          "(it began with initialize)")
_BATCHED_ENVELOPE = (INVALID_REQUEST, "Invalid Request: 2026-07-28 has no batches")

_HANDSHAKE_TRANSITIONS: Dict[Tuple[str, str, Event], str] = {
    (CLIENT, NEW, (SEND, REQUEST, INITIALIZE)): INITIALIZING,
    # The session reports an initialize that failed (an error answer, a timeout, a lost send) as an error
    # received: nothing was negotiated, so the client may try again.
    (CLIENT, INITIALIZING, (RECEIVE, ERROR, INITIALIZE)): NEW,
    # Only a result the client accepts (a version it speaks, a capabilities object) is reported; for any
    # other the client closes the session.
    (CLIENT, INITIALIZING, (RECEIVE, RESPONSE, INITIALIZE)): NEGOTIATED,
    (CLIENT, NEGOTIATED, (SEND, NOTIFICATION, INITIALIZED)): READY,
    # Reported just before the result goes out, so that no request the client sends on reading it can
    # find the server still NEW.
    (SERVER, NEW, (SEND, RESPONSE, INITIALIZE)): NEGOTIATED,
    (SERVER, NEW, (SEND, ERROR, INITIALIZE)): NEW,  # invalid params: still waiting for a good initialize
    (SERVER, NEGOTIATED, (RECEIVE, NOTIFICATION, INITIALIZED)): READY,
    (SERVER, NEW, HANDSHAKE_SKIPPED): READY,
    # server/discover is the client's era probe: a client that was merely slow may still send initialize
    # (2026-07-28 transports/stdio.mdx), so it decides nothing.
    (SERVER, NEW, (RECEIVE, ENVELOPED, SERVER_DISCOVER)): NEW,
    # notifications/initialized before initialize was answered has no row: it is ignored.
}

# Where both eras begin, the events that decide for 2026-07-28 (MODERN.md, "Detecting the era").
_HANDSHAKE_SWITCHES: Dict[MoveKey, Tuple[str, str]] = {
    # A client that speaks 2026-07-28 (its probe found an envelope-era server, or it was pinned).
    (CLIENT, NEW, ENVELOPE_ADOPTED): (ENVELOPE, READY),
    # The server's first enveloped request that the `_meta` ladder accepts (server/discover aside: above).
    (SERVER, NEW, (RECEIVE, ENVELOPED, ANY)): (ENVELOPE, READY),
    (SERVER, NEW, ENVELOPE_ADOPTED): (ENVELOPE, READY),  # stateless at a 2026-07-28 revision
    (SERVER, NEW, ENVELOPE_EXPECTED): (ENVELOPE, NEW),  # an HTTP request at 2026-07-28: its ladder still to run
}

# What this side may send. Responses are not checked: they answer a request the peer was allowed to send.
_HANDSHAKE_OUTGOING: Dict[RuleKey, OutgoingVerdict] = {
    # -- client requests
    (CLIENT, NEW, REQUEST, INITIALIZE): None,
    (CLIENT, NEW, REQUEST, PING): None,
    (CLIENT, NEW, REQUEST, SERVER_DISCOVER): None,  # the era probe (2026-07-28), before any handshake
    (CLIENT, NEW, REQUEST, ANY): _NOT_INITIALIZED,
    (CLIENT, INITIALIZING, REQUEST, INITIALIZE): _UNDER_WAY,
    (CLIENT, INITIALIZING, REQUEST, PING): None,
    (CLIENT, INITIALIZING, REQUEST, ANY): _NOT_INITIALIZED,
    # The spec asks the client to send notifications/initialized before anything but ping; mcplite sends
    # it straight after accepting the result, and does not hold back other threads' requests meanwhile.
    (CLIENT, NEGOTIATED, REQUEST, INITIALIZE): _ALREADY_INITIALIZED,
    (CLIENT, NEGOTIATED, REQUEST, ANY): None,
    (CLIENT, READY, REQUEST, INITIALIZE): _ALREADY_INITIALIZED,
    (CLIENT, READY, REQUEST, ANY): None,
    (CLIENT, CLOSED, REQUEST, ANY): _GONE,
    # -- client notifications (cancelled, progress, roots/list_changed: any time)
    (CLIENT, NEW, NOTIFICATION, INITIALIZED): _NOT_ANSWERED,
    (CLIENT, NEW, NOTIFICATION, ANY): None,
    (CLIENT, INITIALIZING, NOTIFICATION, INITIALIZED): _NOT_ANSWERED,
    (CLIENT, INITIALIZING, NOTIFICATION, ANY): None,
    (CLIENT, NEGOTIATED, NOTIFICATION, INITIALIZED): None,
    (CLIENT, NEGOTIATED, NOTIFICATION, ANY): None,
    (CLIENT, READY, NOTIFICATION, INITIALIZED): _ALREADY_SENT,
    (CLIENT, READY, NOTIFICATION, ANY): None,
    (CLIENT, CLOSED, NOTIFICATION, ANY): _GONE,
    # -- server requests: only ping until the client has sent notifications/initialized
    (SERVER, NEW, REQUEST, PING): None,
    (SERVER, NEW, REQUEST, ANY): _CLIENT_NOT_INITIALIZED,
    (SERVER, NEGOTIATED, REQUEST, PING): None,
    (SERVER, NEGOTIATED, REQUEST, ANY): _CLIENT_NOT_INITIALIZED,
    (SERVER, READY, REQUEST, ANY): None,
    (SERVER, CLOSED, REQUEST, ANY): _GONE,
    # -- server notifications: log messages and progress may go out before initialized (the spec allows
    # logging, and progress answers the client's own request)
    **{(SERVER, state, NOTIFICATION, ANY): None for state in (NEW, NEGOTIATED, READY)},
    (SERVER, CLOSED, NOTIFICATION, ANY): _GONE,
    # -- server: initialize and notifications/initialized are the client's, whatever the state
    **{(SERVER, state, kind, method): _CLIENT_ONLY for state in (NEW, NEGOTIATED, READY)
       for kind, method in ((REQUEST, INITIALIZE), (NOTIFICATION, INITIALIZED))},
}

# Which of the peer's requests this side takes; a refused one is answered with the error. Notifications
# have no rows: one cannot be answered, so a misplaced one is ignored (the transitions have no row for it).
_HANDSHAKE_INCOMING: Dict[RuleKey, IncomingVerdict] = {
    # -- server: nothing but initialize and ping before initialize; initialize once
    (SERVER, NEW, REQUEST, INITIALIZE): None,  # the handshake: the session answers it itself
    (SERVER, NEW, REQUEST, PING): None,
    (SERVER, NEW, REQUEST, ANY): _BEFORE_INITIALIZE,
    # Requests between the initialize result and notifications/initialized are taken: the spec asks the
    # client to wait, but a client's request sent on reading the result would otherwise race its own
    # notification over HTTP, where each message has its own connection.
    (SERVER, NEGOTIATED, REQUEST, INITIALIZE): _REINITIALIZE,
    (SERVER, NEGOTIATED, REQUEST, ANY): None,
    (SERVER, READY, REQUEST, INITIALIZE): _REINITIALIZE,
    (SERVER, READY, REQUEST, ANY): None,
    (SERVER, CLOSED, REQUEST, ANY): None,  # nobody is left to answer: the session drops it
    # -- server: an enveloped request before the handshake is 2026-07-28's (its `_meta` ladder decides); after
    # it, the connection has chosen its era
    (SERVER, NEW, ENVELOPED, ANY): None,
    (SERVER, NEGOTIATED, ENVELOPED, ANY): _HANDSHAKE_CONNECTION,
    (SERVER, READY, ENVELOPED, ANY): _HANDSHAKE_CONNECTION,
    (SERVER, CLOSED, ENVELOPED, ANY): None,
    # -- client: the server's requests are handed to the client's handlers in every state. The spec says
    # a server sends none but ping before initialized; a client that refused them would gain nothing.
    **{(CLIENT, state, REQUEST, ANY): None for state in STATES},
}

HANDSHAKE_ERA = Era(
    HANDSHAKE,
    # The server answers initialize at once, so it is never INITIALIZING.
    states={CLIENT: STATES, SERVER: (NEW, NEGOTIATED, READY, CLOSED)},
    transitions=_HANDSHAKE_TRANSITIONS,
    switches=_HANDSHAKE_SWITCHES,
    outgoing=_HANDSHAKE_OUTGOING,
    incoming=_HANDSHAKE_INCOMING,
    # The spec (2025-03-26, the one revision with batches) forbids batching initialize, and 2026-07-28 has
    # no batches at all.
    batched={(SERVER, REQUEST, INITIALIZE): _BATCHED_INITIALIZE, (SERVER, ENVELOPED, ANY): _BATCHED_ENVELOPE},
    # The spec forbids cancelling initialize: the handshake would be left half done. A server/discover probe
    # that times out is not cancelled either: to a legacy server that request never existed.
    uncancellable=frozenset({INITIALIZE, SERVER_DISCOVER}),
)

# ---- the envelope era: 2026-07-28 ---------------------------------------------------------------------------
# No handshake: the client stamps every request with its revision and capabilities, and the server, which
# sends no requests, asks the client through input-required rounds instead.
_NO_SERVER_REQUESTS = (LocalProtocolError, "{method}: a 2026-07-28 server sends no requests; a handler asks the "
                       "client through input-required rounds (ctx.elicit, ctx.sample, ctx.list_roots)")
# -32022: the session adds the versions it speaks as the error's data.
_NO_INITIALIZE = (UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version: this connection speaks 2026-07-28, "
                                                "which has no initialize")
_MISSING_META = (INVALID_PARAMS, "Invalid params: missing _meta (this connection speaks 2026-07-28, where every "
                                 "request carries its protocol version and client capabilities)")

_ENVELOPE_TRANSITIONS: Dict[MoveKey, str] = {
    (SERVER, NEW, (RECEIVE, ENVELOPED, ANY)): READY,
    (SERVER, NEW, (RECEIVE, ENVELOPED, SERVER_DISCOVER)): NEW,  # a probe decides nothing, as above
}

#: The states of each role in the envelope era: a client enters it ready; a server NEW only when its transport
#: expects the era before any request.
_ENVELOPE_STATES = {CLIENT: (READY, CLOSED), SERVER: (NEW, READY, CLOSED)}


def _as_in_the_handshake_era(handshake_rules: Dict[RuleKey, Verdict], own: Dict[RuleKey, Verdict]
                             ) -> Dict[RuleKey, Verdict]:
    """The envelope era's rules: ``own``, and the handshake era's rows for every (role, state, kind) of this era
    that ``own`` leaves out (what a READY client sends and takes, say, is the same in both eras)."""
    ruled = {key[:3] for key in own}
    shared = {key: verdict for key, verdict in handshake_rules.items()
              if key[1] in _ENVELOPE_STATES[key[0]] and key[:3] not in ruled}
    return {**shared, **own}


_ENVELOPE_OUTGOING: Dict[RuleKey, OutgoingVerdict] = _as_in_the_handshake_era(_HANDSHAKE_OUTGOING, {
    # -- server: no requests at all, whatever the state (NEW: its transport expects the era, READY, CLOSED)
    **{(SERVER, state, REQUEST, ANY): _NO_SERVER_REQUESTS for state in _ENVELOPE_STATES[SERVER]},
})

_ENVELOPE_INCOMING: Dict[RuleKey, IncomingVerdict] = _as_in_the_handshake_era(_HANDSHAKE_INCOMING, {
    # -- server: every request carries the envelope (its `_meta` ladder runs next; NEW takes it as above)
    (SERVER, READY, ENVELOPED, ANY): None,
    **{(SERVER, state, REQUEST, INITIALIZE): _NO_INITIALIZE for state in (NEW, READY)},
    **{(SERVER, state, REQUEST, ANY): _MISSING_META for state in (NEW, READY)},
})

ENVELOPE_ERA = Era(
    ENVELOPE,
    states=_ENVELOPE_STATES,
    transitions=_ENVELOPE_TRANSITIONS,
    switches={},
    outgoing=_ENVELOPE_OUTGOING,
    incoming=_ENVELOPE_INCOMING,
    batched={(SERVER, ENVELOPED, ANY): _BATCHED_ENVELOPE},
    uncancellable=frozenset({SERVER_DISCOVER}),
)

#: Every era, by name (`versions.ERA_NAMES`, `Revision.era`).
ERA_BY_NAME: Dict[str, Era] = {HANDSHAKE_ERA.name: HANDSHAKE_ERA, ENVELOPE_ERA.name: ENVELOPE_ERA}


# ---- the rules as functions -------------------------------------------------------------------------------
def _rule(table: Dict[RuleKey, Verdict], role: str, state: str, kind: str, method: str) -> Verdict:
    key = (role, state, kind, method)
    if key in table:
        return table[key]
    return table[(role, state, kind, ANY)]  # KeyError: a role, state or kind the era does not know


def check_outgoing(role: str, state: str, kind: str, method: str, era: Era = HANDSHAKE_ERA
                   ) -> Optional[MCPError]:
    """Why ``role`` may not send a ``kind`` message for ``method`` in ``state``, or None when it may.

    The error is a `LocalProtocolError` for a message the lifecycle forbids, and a `ConnectionClosed` once
    the session is CLOSED. Responses are always allowed.
    """
    if kind not in (REQUEST, NOTIFICATION):
        return None
    verdict = _rule(era.outgoing, role, state, kind, method)
    if verdict is None:
        return None
    error_class, template = verdict
    return error_class(template.format(method=method))


def check_incoming(role: str, state: str, kind: str, method: str, *, batched: bool = False,
                   era: Era = HANDSHAKE_ERA) -> Optional[RPCError]:
    """The error to answer the peer's ``kind`` message for ``method`` with in ``state``, or None to take it.

    ``kind`` is `REQUEST` or `ENVELOPED` for a request; ``batched`` says it came inside a JSON-RPC batch.
    Notifications and responses are always taken (a notification cannot be answered).
    """
    if kind != REQUEST and kind != ENVELOPED:
        return None
    verdict = (era.batched.get((role, kind, method)) or era.batched.get((role, kind, ANY))) if batched else None
    if verdict is None:
        verdict = _rule(era.incoming, role, state, kind, method)
        if verdict is None:
            return None
    code, template = verdict
    return RPCError(code, template.format(method=method))


def check_incoming_batch(state: str, revision: Optional[Revision]) -> Optional[RPCError]:
    """The error to answer a JSON-RPC batch with, or None when ``revision`` accepts batches in ``state``.

    Batches exist only in revisions that have them (2025-03-26), so none is taken before the handshake
    has negotiated one.
    """
    if revision is None or state in (NEW, INITIALIZING):
        return RPCError(INVALID_REQUEST, "Invalid Request: batches are not allowed in the handshake")
    if not revision.batching:
        return RPCError(INVALID_REQUEST, f"Invalid Request: batches are not allowed in {revision.version}")
    return None


def advance(role: str, state: str, event: Event, era: Era = HANDSHAKE_ERA) -> Tuple[Era, str]:
    """The era and state after ``event``; the same when the event does not move this role's lifecycle."""
    for key in ((role, state, event), (role, state, (event[0], event[1], ANY))):
        if key in era.transitions:
            return era, era.transitions[key]
        if key in era.switches:
            name, to = era.switches[key]
            return ERA_BY_NAME[name], to
    return era, state


def cancellable(method: str, era: Era = HANDSHAKE_ERA) -> bool:
    """Whether a request for ``method`` may be cancelled (`notifications/cancelled`)."""
    return method not in era.uncancellable


class Lifecycle:
    """One session's place in the lifecycle: its role, its era and its current state.

    Pure bookkeeping with no lock: the owner serialises the calls that change it (`advance`, `send`, `close`)
    and may read `state` from any thread.
    """

    __slots__ = ("role", "era", "state", "_quiet")

    def __init__(self, role: str) -> None:
        if role not in (CLIENT, SERVER):
            raise ValueError(f"unknown role {role!r}")
        self.role = role
        self.era, self.state = HANDSHAKE_ERA, NEW  # where both eras begin
        # Per kind, the methods with rules of their own in this state when the kind is quiet there
        # (`Era.quiet`): one attribute, so that a reader on another thread sees a consistent value without a lock.
        self._quiet: Dict[str, Container[str]] = HANDSHAKE_ERA.quiet[role, NEW]

    def untouched_by(self, kind: str, method: str) -> bool:
        """True when no ``kind`` message for ``method`` can be refused or move the lifecycle in the current state.

        Safe to call without the owner's lock: a stale answer is only ever False (the caller then takes the
        slow path under its lock), or True for a session that is closing, whose transport refuses the send.
        """
        return method not in self._quiet[kind]

    def __repr__(self) -> str:
        return f"Lifecycle({self.role!r}, {self.era.name!r}, state={self.state!r})"

    @property
    def awaiting_initialize(self) -> bool:
        """Nothing has been negotiated yet: initialize is still to be sent (client) or answered (server)."""
        return self.state in (NEW, INITIALIZING)

    def check_outgoing(self, kind: str, method: str) -> Optional[MCPError]:
        return check_outgoing(self.role, self.state, kind, method, self.era)

    def check_incoming(self, kind: str, method: str, *, batched: bool = False) -> Optional[RPCError]:
        return check_incoming(self.role, self.state, kind, method, batched=batched, era=self.era)

    def check_incoming_batch(self, revision: Optional[Revision]) -> Optional[RPCError]:
        return check_incoming_batch(self.state, revision)

    def moved_by(self, event: Event) -> bool:
        """Whether ``event`` would move the lifecycle (to another state or era), without moving it."""
        return advance(self.role, self.state, event, self.era) != (self.era, self.state)

    def advance(self, event: Event) -> str:
        """Move on by ``event``; returns the new state."""
        era, state = advance(self.role, self.state, event, self.era)
        if state != self.state or era is not self.era:
            self.era, self.state = era, state
            self._quiet = era.quiet[self.role, state]
        return state

    def send(self, kind: str, method: str) -> Optional[MCPError]:
        """Check a message about to be sent and, when it may be, move on as if it had been (h11's `send`).

        Returns the refusal (and leaves the state as it is) when it may not be sent.
        """
        error = self.check_outgoing(kind, method)
        if error is None:
            self.advance((SEND, kind, method))
        return error

    def close(self) -> None:
        self.advance(CONNECTION_CLOSED)
