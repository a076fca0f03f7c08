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

A later era (2026-07-28: no handshake, ``server/discover``) is meant to arrive as a second `Era` with its
own tables beside `HANDSHAKE_ERA`; the functions below take the era as an argument and do not change.
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

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

from ..errors import INVALID_REQUEST, ConnectionClosed, LocalProtocolError, RPCError
from .jsonrpc import ERROR, NOTIFICATION, REQUEST, RESPONSE
from .methods import INITIALIZE, INITIALIZED, PING, SERVER_DISCOVER

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    from typing import Dict, FrozenSet, Optional, Tuple, Type, TypeVar

    from ..errors import MCPError
    from .versions import Revision

    #: (direction, message kind, method): what happened, as the session reports it to `advance`.
    Event = Tuple[str, str, str]
    #: What happens to an outgoing message: None (it may be sent) or the exception class and message to raise.
    OutgoingVerdict = Optional[Tuple[Type[MCPError], str]]
    #: What happens to an incoming request: None (it is taken) or the JSON-RPC error code and message to answer.
    IncomingVerdict = Optional[Tuple[int, str]]
    RuleKey = Tuple[str, str, str, str]  # (role, state, message kind, method or ANY)
    Verdict = TypeVar("Verdict")

__all__ = [
    "CLIENT", "SERVER", "NEW", "INITIALIZING", "NEGOTIATED", "READY", "CLOSED", "STATES", "SEND", "RECEIVE",
    "ANY", "CONNECTION_CLOSED", "HANDSHAKE_SKIPPED", "Era", "HANDSHAKE_ERA", "ERAS", "check_outgoing",
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

#: Events that are not a message: the connection ended; a stateless server starts as if initialized.
CONNECTION_CLOSED: Event = ("local", "closed", "")
HANDSHAKE_SKIPPED: Event = ("local", "handshake skipped", "")


class Era:
    """One family of protocol revisions' lifecycle: its transitions and what each role may send and accept.

    Args:
        name: what the era is called ("handshake").
        states: role -> the states that role passes through, in order.
        initial: the state a new session starts in.
        transitions: (role, state, event) -> the next state; an event with no row leaves the state as it is.
        outgoing: (role, state, kind, method or ANY) -> verdict on sending a request or notification.
        incoming: (role, state, kind, method or ANY) -> verdict on taking the peer's request or notification.
        unbatchable: (role, method) pairs of requests that role refuses inside a batch.
        uncancellable: methods whose requests may not be cancelled.
    """

    __slots__ = ("name", "states", "initial", "transitions", "outgoing", "incoming", "unbatchable", "uncancellable",
                 "quiet")

    def __init__(self, name: str, states: Dict[str, Tuple[str, ...]], initial: str,
                 transitions: Dict[Tuple[str, str, Event], str], outgoing: Dict[RuleKey, OutgoingVerdict],
                 incoming: Dict[RuleKey, IncomingVerdict],
                 unbatchable: FrozenSet[Tuple[str, str]], uncancellable: FrozenSet[str]) -> None:
        self.name = name
        self.states = states
        self.initial = initial
        self.transitions = transitions
        self.outgoing = outgoing
        self.incoming = incoming
        self.unbatchable = unbatchable
        self.uncancellable = uncancellable
        #: (role, state) -> the methods that have a rule of their own there, for the states in which every
        #: other method's message is allowed both ways and moves nothing (READY, mostly). A session asks
        #: `Lifecycle.untouched_by` first, so that ordinary traffic costs one set lookup and no lock.
        self.quiet: Dict[Tuple[str, str], FrozenSet[str]] = {}
        for role, role_states in states.items():
            for state in role_states:
                if any(outgoing.get((role, state, kind, ANY)) is not None for kind in (REQUEST, NOTIFICATION)) \
                        or incoming.get((role, state, REQUEST, ANY)) is not None:
                    continue
                named = {key[3] for key in (*outgoing, *incoming) if key[:2] == (role, state) and key[3] != ANY}
                named |= {key[2][2] for key in transitions if key[:2] == (role, state) and key[2][2]}
                named |= {method for unbatchable_role, method in unbatchable if unbatchable_role == role}
                self.quiet[role, state] = frozenset(named)

    def __repr__(self) -> str:
        return f"Era({self.name!r})"


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
    # A client that speaks 2026-07-28 (its probe found a modern server, or it was pinned) has no handshake.
    (CLIENT, NEW, HANDSHAKE_SKIPPED): READY,
    # notifications/initialized before initialize was answered has no row: it is ignored.
}
for _role in (CLIENT, SERVER):
    for _state in STATES:
        _HANDSHAKE_TRANSITIONS[_role, _state, CONNECTION_CLOSED] = CLOSED

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
    (SERVER, NEW, REQUEST, INITIALIZE): _CLIENT_ONLY,
    (SERVER, NEW, REQUEST, PING): None,
    (SERVER, NEW, REQUEST, ANY): _CLIENT_NOT_INITIALIZED,
    (SERVER, NEGOTIATED, REQUEST, INITIALIZE): _CLIENT_ONLY,
    (SERVER, NEGOTIATED, REQUEST, PING): None,
    (SERVER, NEGOTIATED, REQUEST, ANY): _CLIENT_NOT_INITIALIZED,
    (SERVER, READY, REQUEST, INITIALIZE): _CLIENT_ONLY,
    (SERVER, READY, REQUEST, ANY): None,
    (SERVER, CLOSED, REQUEST, ANY): _GONE,
    # -- server notifications: log messages and progress may go out before initialized (the spec allows
    # logging, and progress answers the client's own request)
    (SERVER, NEW, NOTIFICATION, INITIALIZED): _CLIENT_ONLY,
    (SERVER, NEW, NOTIFICATION, ANY): None,
    (SERVER, NEGOTIATED, NOTIFICATION, INITIALIZED): _CLIENT_ONLY,
    (SERVER, NEGOTIATED, NOTIFICATION, ANY): None,
    (SERVER, READY, NOTIFICATION, INITIALIZED): _CLIENT_ONLY,
    (SERVER, READY, NOTIFICATION, ANY): None,
    (SERVER, CLOSED, NOTIFICATION, ANY): _GONE,
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
    # -- client: the server's requests are handed to the client's handlers in every state. The spec says
    # a server sends none but ping before initialized; a client that refused them would gain nothing.
    (CLIENT, NEW, REQUEST, ANY): None,
    (CLIENT, INITIALIZING, REQUEST, ANY): None,
    (CLIENT, NEGOTIATED, REQUEST, ANY): None,
    (CLIENT, READY, REQUEST, ANY): None,
    (CLIENT, CLOSED, REQUEST, ANY): None,
}

HANDSHAKE_ERA = Era(
    "handshake",
    # The server answers initialize at once, so it is never INITIALIZING.
    states={CLIENT: STATES, SERVER: (NEW, NEGOTIATED, READY, CLOSED)},
    initial=NEW,
    transitions=_HANDSHAKE_TRANSITIONS,
    outgoing=_HANDSHAKE_OUTGOING,
    incoming=_HANDSHAKE_INCOMING,
    # The spec (2025-03-26, the one revision with batches) forbids batching initialize.
    unbatchable=frozenset({(SERVER, INITIALIZE)}),
    # The spec forbids cancelling initialize: the handshake would be left half done. A server/discover probe
    # that times out is not cancelled either: to a legacy server that request never existed.
    uncancellable=frozenset({INITIALIZE, SERVER_DISCOVER}),
)
#: Every era, by name.
ERAS: Dict[str, Era] = {HANDSHAKE_ERA.name: HANDSHAKE_ERA}


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

    ``batched`` says the request came inside a JSON-RPC batch. Notifications and responses are always
    taken (a notification cannot be answered).
    """
    if kind != REQUEST:
        return None
    if batched and (role, method) in era.unbatchable:
        code, message = _BATCHED_INITIALIZE
        return RPCError(code, message)
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


def advance(role: str, state: str, event: Event, era: Era = HANDSHAKE_ERA) -> str:
    """The state after ``event``; the same state when the event does not move this role's lifecycle."""
    return era.transitions.get((role, state, event), state)


def cancellable(method: str, era: Era = HANDSHAKE_ERA) -> bool:
    """Whether a request for ``method`` may be cancelled (`notifications/cancelled`)."""
    return method not in era.uncancellable


class Lifecycle:
    """One session's place in the lifecycle: its role, its era and its current state.

    Pure bookkeeping with no lock: the owner serialises the calls that change it (`advance`, `send`, `close`)
    and may read `state` from any thread.
    """

    __slots__ = ("role", "era", "state", "_quiet")

    def __init__(self, role: str, era: Era = HANDSHAKE_ERA) -> None:
        if role not in (CLIENT, SERVER):
            raise ValueError(f"unknown role {role!r}")
        self.role = role
        self.era = era
        self.state = era.initial
        # The methods with rules of their own in this state when the state is quiet (`Era.quiet`), else None:
        # one attribute, so that a reader on another thread sees a consistent value without a lock.
        self._quiet: Optional[FrozenSet[str]] = era.quiet.get((role, self.state))

    def untouched_by(self, method: str) -> bool:
        """True when no message for ``method`` can be refused or move the lifecycle in the current state.

        Safe to call without the owner's lock: a stale answer is only ever False (the caller then takes the
        slow path under its lock), or True for a session that is closing, whose transport refuses the send.
        """
        quiet = self._quiet
        return quiet is not None and method not in quiet

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

    def advance(self, event: Event) -> str:
        """Move on by ``event``; returns the new state."""
        state = advance(self.role, self.state, event, self.era)
        if state != self.state:
            self.state = state
            self._quiet = self.era.quiet.get((self.role, state))
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
