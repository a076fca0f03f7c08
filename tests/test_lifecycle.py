"""The MCP lifecycle state machine (protocol/lifecycle.py), row by row: no threads, no sockets.

The expected verdicts are written out here, not read from the module's tables, so that a changed table
row fails a test. The messages and codes are the ones the sessions have always put on the wire or raised.
"""

import pytest

from mcplite.errors import (
    INVALID_PARAMS, INVALID_REQUEST, UNSUPPORTED_PROTOCOL_VERSION, ConnectionClosed, LocalProtocolError, RPCError,
)
from mcplite.protocol import lifecycle as lc
from mcplite.protocol.jsonrpc import ERROR, NOTIFICATION, REQUEST, RESPONSE
from mcplite.protocol.lifecycle import (
    CLIENT, CLOSED, ENVELOPED, HANDSHAKE_ERA, INITIALIZING, ENVELOPE_ERA, NEGOTIATED, NEW, READY, RECEIVE, SEND, SERVER,
    Lifecycle,
)
from mcplite.protocol.versions import revision

INIT, PING, INITIALIZED, CALL, LOG, DISCOVER = (
    "initialize", "ping", "notifications/initialized", "tools/call", "notifications/message", "server/discover")
HS, MO = HANDSHAKE_ERA, ENVELOPE_ERA

# The refusals, as (exception class, message) for what we send and (code, message) for what we take.
NOT_INITIALIZED = (LocalProtocolError, "{method}: the session is not initialized")
UNDER_WAY = (LocalProtocolError, "{method}: the handshake is already under way")
ALREADY = (LocalProtocolError, "the session is already initialized")
NOT_ANSWERED = (LocalProtocolError, "{method}: the server has not answered initialize")
ALREADY_SENT = (LocalProtocolError, "{method}: it has already been sent")
CLIENT_NOT_READY = (LocalProtocolError, "{method}: the client has not finished initializing")
CLIENT_ONLY = (LocalProtocolError, "{method}: only a client sends it")
NO_REQUESTS = (LocalProtocolError, "{method}: a 2026-07-28 server sends no requests; a handler asks the client "
               "through input-required rounds (ctx.elicit, ctx.sample, ctx.list_roots)")
GONE = (ConnectionClosed, "{method}: connection closed")
BEFORE = (INVALID_REQUEST, "Invalid Request: {method} before initialize")
REINIT = (INVALID_REQUEST, "Invalid Request: the session is already initialized")
BATCHED = (INVALID_REQUEST, "Invalid Request: initialize cannot be batched")
HANDSHAKE_CONNECTION = (INVALID_REQUEST, "Invalid Request: this connection serves the handshake protocol era "
                                         "(it began with initialize)")
NO_BATCHES = (INVALID_REQUEST, "Invalid Request: 2026-07-28 has no batches")
NO_INITIALIZE = (UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version: this connection speaks 2026-07-28, "
                                               "which has no initialize")
MISSING_META = (INVALID_PARAMS, "Invalid params: missing _meta (this connection speaks 2026-07-28, where every "
                                "request carries its protocol version and client capabilities)")

STATES = {
    HS: {CLIENT: (NEW, INITIALIZING, NEGOTIATED, READY, CLOSED), SERVER: (NEW, NEGOTIATED, READY, CLOSED)},
    MO: {CLIENT: (READY, CLOSED), SERVER: (NEW, READY, CLOSED)},
}
ERA_ROLE_STATES = [(era, role, state) for era, roles in STATES.items()
                   for role, states in roles.items() for state in states]
SERVER_STATES = [(era, state) for era, role, state in ERA_ROLE_STATES if role == SERVER]


def assert_refusal(error, verdict, method):
    if verdict is None:
        assert error is None
    elif isinstance(verdict[0], int):  # what we take: an RPCError with the code, no data
        code, template = verdict
        assert type(error) is RPCError
        assert (error.code, error.message, error.data) == (code, template.format(method=method), None)
    else:
        error_class, template = verdict
        assert type(error) is error_class
        assert str(error) == template.format(method=method)


# ---- what each side may send: (era, role, state) -> verdict per (kind, method) --------------------------
SEND_COLUMNS = [(REQUEST, INIT), (REQUEST, PING), (REQUEST, CALL),
                (NOTIFICATION, INITIALIZED), (NOTIFICATION, LOG)]
SENDS = {
    (HS, CLIENT, NEW): (None, None, NOT_INITIALIZED, NOT_ANSWERED, None),
    (HS, CLIENT, INITIALIZING): (UNDER_WAY, None, NOT_INITIALIZED, NOT_ANSWERED, None),
    (HS, CLIENT, NEGOTIATED): (ALREADY, None, None, None, None),
    (HS, CLIENT, READY): (ALREADY, None, None, ALREADY_SENT, None),
    (HS, CLIENT, CLOSED): (GONE, GONE, GONE, GONE, GONE),
    (HS, SERVER, NEW): (CLIENT_ONLY, None, CLIENT_NOT_READY, CLIENT_ONLY, None),
    (HS, SERVER, NEGOTIATED): (CLIENT_ONLY, None, CLIENT_NOT_READY, CLIENT_ONLY, None),
    (HS, SERVER, READY): (CLIENT_ONLY, None, None, CLIENT_ONLY, None),
    (HS, SERVER, CLOSED): (GONE, GONE, GONE, GONE, GONE),
    (MO, CLIENT, READY): (ALREADY, None, None, ALREADY_SENT, None),
    (MO, CLIENT, CLOSED): (GONE, GONE, GONE, GONE, GONE),
    (MO, SERVER, NEW): (NO_REQUESTS, NO_REQUESTS, NO_REQUESTS, CLIENT_ONLY, None),
    (MO, SERVER, READY): (NO_REQUESTS, NO_REQUESTS, NO_REQUESTS, CLIENT_ONLY, None),
    (MO, SERVER, CLOSED): (NO_REQUESTS, NO_REQUESTS, NO_REQUESTS, GONE, GONE),
}
SEND_ROWS = [(era, role, state, kind, method, verdict)
             for (era, role, state), verdicts in SENDS.items()
             for (kind, method), verdict in zip(SEND_COLUMNS, verdicts)]


@pytest.mark.parametrize("era, role, state, kind, method, verdict", SEND_ROWS)
def test_what_each_side_may_send(era, role, state, kind, method, verdict):
    assert_refusal(lc.check_outgoing(role, state, kind, method, era), verdict, method)


def test_a_new_client_may_probe_with_server_discover_and_never_cancels_it():
    assert lc.check_outgoing(CLIENT, NEW, REQUEST, DISCOVER) is None  # before any handshake
    assert type(lc.check_outgoing(CLIENT, INITIALIZING, REQUEST, DISCOVER)) is LocalProtocolError
    assert lc.check_outgoing(CLIENT, READY, REQUEST, DISCOVER, MO) is None  # an envelope-era session's liveness check
    assert not lc.cancellable(DISCOVER) and not lc.cancellable(INIT) and lc.cancellable(CALL)
    assert not lc.cancellable(DISCOVER, MO) and lc.cancellable(CALL, MO)


@pytest.mark.parametrize("era, role, state", ERA_ROLE_STATES)
@pytest.mark.parametrize("kind", [RESPONSE, ERROR])
def test_answers_are_never_held_back(era, role, state, kind):
    assert lc.check_outgoing(role, state, kind, INIT, era) is None


# ---- what each side takes: (era, role, state) -> verdict per request ----------------------------------------
TAKE_COLUMNS = [(REQUEST, INIT), (REQUEST, PING), (REQUEST, CALL)]
TAKES = {
    (HS, CLIENT, NEW): (None, None, None),
    (HS, CLIENT, INITIALIZING): (None, None, None),
    (HS, CLIENT, NEGOTIATED): (None, None, None),
    (HS, CLIENT, READY): (None, None, None),
    (HS, CLIENT, CLOSED): (None, None, None),
    (HS, SERVER, NEW): (None, None, BEFORE),
    (HS, SERVER, NEGOTIATED): (REINIT, None, None),
    (HS, SERVER, READY): (REINIT, None, None),
    (HS, SERVER, CLOSED): (None, None, None),
    (MO, CLIENT, READY): (None, None, None),
    (MO, CLIENT, CLOSED): (None, None, None),
    (MO, SERVER, NEW): (NO_INITIALIZE, MISSING_META, MISSING_META),
    (MO, SERVER, READY): (NO_INITIALIZE, MISSING_META, MISSING_META),
    (MO, SERVER, CLOSED): (None, None, None),
}
TAKE_ROWS = [(era, role, state, kind, method, verdict)
             for (era, role, state), verdicts in TAKES.items()
             for (kind, method), verdict in zip(TAKE_COLUMNS, verdicts)]


@pytest.mark.parametrize("era, role, state, kind, method, verdict", TAKE_ROWS)
def test_which_requests_each_side_takes(era, role, state, kind, method, verdict):
    assert_refusal(lc.check_incoming(role, state, kind, method, era=era), verdict, method)


# An enveloped request (a 2026-07-28 `_meta`), as the server tells it apart: before the handshake it is
# taken (the `_meta` ladder decides), after it the connection has chosen the handshake era.
ENVELOPED_TAKES = {(HS, NEW): None, (HS, NEGOTIATED): HANDSHAKE_CONNECTION, (HS, READY): HANDSHAKE_CONNECTION,
                   (HS, CLOSED): None, (MO, NEW): None, (MO, READY): None, (MO, CLOSED): None}


@pytest.mark.parametrize("era, state", SERVER_STATES)
@pytest.mark.parametrize("method", [INIT, PING, CALL, DISCOVER])
def test_which_enveloped_requests_the_server_takes(era, state, method):
    assert_refusal(lc.check_incoming(SERVER, state, ENVELOPED, method, era=era), ENVELOPED_TAKES[era, state], method)
    # In a batch (only a 2025-03-26 handshake takes one), never: 2026-07-28 has none.
    assert_refusal(lc.check_incoming(SERVER, state, ENVELOPED, method, batched=True, era=era), NO_BATCHES, method)


@pytest.mark.parametrize("era, role, state", ERA_ROLE_STATES)
@pytest.mark.parametrize("method", [INIT, PING, INITIALIZED, CALL, LOG])
@pytest.mark.parametrize("kind", [NOTIFICATION, RESPONSE, ERROR])
def test_notifications_and_answers_are_never_refused(era, role, state, method, kind):
    assert lc.check_incoming(role, state, kind, method, era=era) is None


@pytest.mark.parametrize("state", STATES[HS][SERVER])
def test_the_server_refuses_initialize_in_a_batch_whatever_its_state(state):
    error = lc.check_incoming(SERVER, state, REQUEST, INIT, batched=True)
    assert (error.code, error.message) == BATCHED


@pytest.mark.parametrize("era, role, state", ERA_ROLE_STATES)
def test_other_requests_in_a_batch_follow_their_unbatched_rule(era, role, state):
    methods = (PING, CALL) if era is HS else (INIT, PING, CALL)  # (no initialize handshake to protect)
    for method in methods:
        assert repr(lc.check_incoming(role, state, REQUEST, method, batched=True, era=era)) == repr(
            lc.check_incoming(role, state, REQUEST, method, era=era))
    if role == CLIENT:  # a client has no handshake to protect: initialize goes to its handler
        assert lc.check_incoming(role, state, REQUEST, INIT, batched=True, era=era) is None


# ---- batches -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("state, version, message", [
    (NEW, None, "Invalid Request: batches are not allowed in the handshake"),
    (INITIALIZING, None, "Invalid Request: batches are not allowed in the handshake"),
    (NEW, "2025-03-26", "Invalid Request: batches are not allowed in the handshake"),
    (NEGOTIATED, "2025-03-26", None),
    (READY, "2025-03-26", None),
    (NEGOTIATED, "2024-11-05", "Invalid Request: batches are not allowed in 2024-11-05"),
    (READY, "2025-06-18", "Invalid Request: batches are not allowed in 2025-06-18"),
    (READY, "2025-11-25", "Invalid Request: batches are not allowed in 2025-11-25"),
    (READY, "2026-07-28", "Invalid Request: batches are not allowed in 2026-07-28"),
])
def test_batches_only_once_a_revision_that_has_them_is_negotiated(state, version, message):
    error = lc.check_incoming_batch(state, revision(version) if version else None)
    if message is None:
        assert error is None
    else:
        assert (error.code, error.message) == (INVALID_REQUEST, message)


# ---- transitions ---------------------------------------------------------------------------------------------
EVENT_COLUMNS = [
    (SEND, REQUEST, INIT), (RECEIVE, RESPONSE, INIT), (RECEIVE, ERROR, INIT), (SEND, NOTIFICATION, INITIALIZED),
    (SEND, RESPONSE, INIT), (SEND, ERROR, INIT), (RECEIVE, REQUEST, INIT), (RECEIVE, NOTIFICATION, INITIALIZED),
    (SEND, REQUEST, PING), (RECEIVE, REQUEST, CALL), lc.HANDSHAKE_SKIPPED, lc.CONNECTION_CLOSED,
    lc.ENVELOPE_ADOPTED, lc.ENVELOPE_EXPECTED, (RECEIVE, ENVELOPED, CALL), (RECEIVE, ENVELOPED, DISCOVER),
]
_ = None  # the state does not change


def M(state):  # noqa: N802 - reads as a table cell: the state, in the envelope era
    return (MO, state)


MOVES = {
    (HS, CLIENT, NEW): (INITIALIZING, _, _, _, _, _, _, _, _, _, _, CLOSED, M(READY), _, _, _),
    (HS, CLIENT, INITIALIZING): (_, NEGOTIATED, NEW, _, _, _, _, _, _, _, _, CLOSED, _, _, _, _),
    (HS, CLIENT, NEGOTIATED): (_, _, _, READY, _, _, _, _, _, _, _, CLOSED, _, _, _, _),
    (HS, CLIENT, READY): (_, _, _, _, _, _, _, _, _, _, _, CLOSED, _, _, _, _),
    (HS, CLIENT, CLOSED): (_, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _),
    # NEW, where both eras begin: initialize, a stateless start, or an enveloped request decide the era.
    (HS, SERVER, NEW): (_, _, _, _, NEGOTIATED, _, _, _, _, _, READY, CLOSED, M(READY), M(NEW), M(READY), _),
    (HS, SERVER, NEGOTIATED): (_, _, _, _, _, _, _, READY, _, _, _, CLOSED, _, _, _, _),
    (HS, SERVER, READY): (_, _, _, _, _, _, _, _, _, _, _, CLOSED, _, _, _, _),
    (HS, SERVER, CLOSED): (_, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _),
    (MO, CLIENT, READY): (_, _, _, _, _, _, _, _, _, _, _, CLOSED, _, _, _, _),
    (MO, CLIENT, CLOSED): (_, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _),
    (MO, SERVER, NEW): (_, _, _, _, _, _, _, _, _, _, _, CLOSED, _, _, READY, _),  # a probe decides nothing
    (MO, SERVER, READY): (_, _, _, _, _, _, _, _, _, _, _, CLOSED, _, _, _, _),
    (MO, SERVER, CLOSED): (_, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _),
}


def _after(era, state, after):
    if after is None:
        return (era, state)
    return after if isinstance(after, tuple) else (era, after)


MOVE_ROWS = [(era, role, state, event, _after(era, state, after))
             for (era, role, state), afters in MOVES.items()
             for event, after in zip(EVENT_COLUMNS, afters)]


@pytest.mark.parametrize("era, role, state, event, after", MOVE_ROWS)
def test_transitions(era, role, state, event, after):
    assert lc.advance(role, state, event, era) == after


def test_every_state_of_every_role_is_in_the_tables():
    assert lc.ERA_BY_NAME == {"handshake": HS, "envelope": MO}
    assert set(SENDS) == set(TAKES) == set(MOVES) == set(ERA_ROLE_STATES)
    for era, roles in STATES.items():
        assert era.states == roles
        for role, states in roles.items():
            for state in states:
                for kind in (REQUEST, NOTIFICATION):
                    assert (role, state, kind, lc.ANY) in era.outgoing
                assert (role, state, REQUEST, lc.ANY) in era.incoming
        # Every row names a state its role has in this era, and every switch one of the other era's: no dead rows.
        for role, state, _kind, _method in list(era.outgoing) + list(era.incoming):
            assert state in era.states[role]
        for role, state, _event in list(era.transitions) + list(era.switches):
            assert state in era.states[role]
        for (role, _state, _event), after in era.transitions.items():
            assert after in era.states[role]
        for (role, _state, _event), (name, after) in era.switches.items():
            assert name != era.name and after in lc.ERA_BY_NAME[name].states[role]


# ---- the Lifecycle object: both eras end to end ------------------------------------------------------------
def test_client_handshake():
    life = Lifecycle(CLIENT)
    assert (life.state, life.awaiting_initialize) == (NEW, True)
    assert str(life.send(REQUEST, CALL)) == "tools/call: the session is not initialized"
    assert life.send(REQUEST, PING) is None and life.state == NEW
    assert life.send(REQUEST, INIT) is None
    assert (life.state, life.awaiting_initialize) == (INITIALIZING, True)
    assert str(life.send(REQUEST, INIT)) == "initialize: the handshake is already under way"
    assert life.state == INITIALIZING  # a refusal does not move it
    assert life.advance((RECEIVE, ERROR, INIT)) == NEW  # refused, timed out: may be tried again
    assert life.send(REQUEST, INIT) is None
    assert life.advance((RECEIVE, RESPONSE, INIT)) == NEGOTIATED
    assert not life.awaiting_initialize
    assert life.send(REQUEST, CALL) is None
    assert life.send(NOTIFICATION, INITIALIZED) is None and life.state == READY
    assert str(life.send(REQUEST, INIT)) == "the session is already initialized"
    life.close()
    assert life.state == CLOSED and not life.awaiting_initialize
    error = life.send(REQUEST, PING)
    assert isinstance(error, ConnectionClosed) and str(error) == "ping: connection closed"
    assert life.advance((RECEIVE, RESPONSE, INIT)) == CLOSED  # a late answer does not reopen it
    assert life.era is HS


def test_server_handshake():
    life = Lifecycle(SERVER)
    assert life.check_incoming(REQUEST, CALL).message == "Invalid Request: tools/call before initialize"
    assert life.check_incoming(REQUEST, INIT) is None
    assert life.advance((SEND, ERROR, INIT)) == NEW  # bad params: still waiting
    assert life.advance((RECEIVE, NOTIFICATION, INITIALIZED)) == NEW  # before initialize: ignored
    assert life.advance((SEND, RESPONSE, INIT)) == NEGOTIATED
    assert life.check_incoming(REQUEST, CALL) is None
    assert life.check_incoming(REQUEST, INIT).message == "Invalid Request: the session is already initialized"
    assert life.check_incoming(ENVELOPED, CALL).message == HANDSHAKE_CONNECTION[1]
    assert str(life.send(REQUEST, "roots/list")) == "roots/list: the client has not finished initializing"
    assert life.send(REQUEST, PING) is None
    assert life.advance((RECEIVE, NOTIFICATION, INITIALIZED)) == READY
    assert life.send(REQUEST, "roots/list") is None
    assert life.era is HS


def test_a_stateless_server_skips_the_handshake():
    life = Lifecycle(SERVER)
    assert life.advance(lc.HANDSHAKE_SKIPPED) == READY
    assert life.era is HS and life.send(REQUEST, "sampling/createMessage") is None
    enveloped = Lifecycle(SERVER)
    assert enveloped.advance(lc.skipped_to("envelope")) == READY and enveloped.era is MO


def test_a_client_adopts_2026_07_28_without_a_handshake():
    life = Lifecycle(CLIENT)
    assert life.send(REQUEST, DISCOVER) is None and (life.era, life.state) == (HS, NEW)  # the probe
    assert life.advance(lc.ENVELOPE_ADOPTED) == READY and life.era is MO
    assert life.send(REQUEST, CALL) is None and life.send(NOTIFICATION, "notifications/cancelled") is None
    assert str(life.send(REQUEST, INIT)) == "the session is already initialized"
    assert life.advance(lc.ENVELOPE_ADOPTED) == READY  # no way back to, or out of, the other era
    life.close()
    assert life.state == CLOSED and life.era is MO
    assert isinstance(life.send(REQUEST, CALL), ConnectionClosed)


def test_a_server_decides_its_era_on_the_first_enveloped_request_but_a_probe():
    life = Lifecycle(SERVER)
    assert life.check_incoming(ENVELOPED, DISCOVER) is None
    assert not life.moved_by((RECEIVE, ENVELOPED, DISCOVER))  # a probe that was merely slow: initialize may follow
    assert life.advance((RECEIVE, ENVELOPED, DISCOVER)) == NEW and life.era is HS
    assert life.moved_by((RECEIVE, ENVELOPED, CALL))
    assert life.advance((RECEIVE, ENVELOPED, CALL)) == READY and life.era is MO
    assert not life.moved_by((RECEIVE, ENVELOPED, CALL))
    # From now on every request carries the envelope; the server sends none.
    assert life.check_incoming(ENVELOPED, CALL) is None
    refusal = life.check_incoming(REQUEST, INIT)
    assert (refusal.code, refusal.message) == NO_INITIALIZE
    assert (life.check_incoming(REQUEST, PING).code, life.check_incoming(REQUEST, CALL).code) == (INVALID_PARAMS,) * 2
    assert str(life.send(REQUEST, "sampling/createMessage")) == NO_REQUESTS[1].format(method="sampling/createMessage")
    assert life.send(NOTIFICATION, LOG) is None and life.send(NOTIFICATION, "notifications/progress") is None
    assert repr(life) == "Lifecycle('server', 'envelope', state='ready')"


def test_a_server_told_by_its_transport_waits_for_the_first_enveloped_request():
    life = Lifecycle(SERVER)
    assert life.advance(lc.ENVELOPE_EXPECTED) == NEW and life.era is MO and life.awaiting_initialize
    assert life.check_incoming(REQUEST, CALL).message == MISSING_META[1]  # not "before initialize"
    assert life.advance((RECEIVE, ENVELOPED, DISCOVER)) == NEW
    assert life.advance((RECEIVE, ENVELOPED, CALL)) == READY and life.era is MO


def test_initialize_is_the_one_request_that_cannot_be_cancelled():
    assert not lc.cancellable(INIT)
    assert lc.cancellable(PING) and lc.cancellable(CALL)


def test_a_lifecycle_has_a_role():
    with pytest.raises(ValueError):
        Lifecycle("peer")
    assert repr(Lifecycle(SERVER)) == "Lifecycle('server', 'handshake', state='new')"


# ---- the fast path: untouched_by must never let through what the tables would refuse or act on -----------
# (era, role, state) -> the kinds of message that are quiet there.
QUIET = {
    (HS, CLIENT, NEW): {NOTIFICATION}, (HS, CLIENT, INITIALIZING): {NOTIFICATION},
    (HS, CLIENT, NEGOTIATED): {REQUEST, NOTIFICATION}, (HS, CLIENT, READY): {REQUEST, NOTIFICATION},
    (HS, SERVER, NEW): {NOTIFICATION}, (HS, SERVER, NEGOTIATED): {NOTIFICATION},
    (HS, SERVER, READY): {REQUEST, NOTIFICATION},
    (MO, CLIENT, READY): {REQUEST, NOTIFICATION}, (MO, SERVER, NEW): {NOTIFICATION},
    (MO, SERVER, READY): {NOTIFICATION},
}


@pytest.mark.parametrize("era, role, state", ERA_ROLE_STATES)
def test_untouched_by_agrees_with_the_tables(era, role, state) -> None:
    life = Lifecycle(role)
    life.era, life.state = era, state
    life._quiet = era.quiet[role, state]  # as advance() would have set it
    assert {kind for kind in (REQUEST, NOTIFICATION) if life.untouched_by(kind, "no/such-method")} == QUIET.get(
        (era, role, state), set())
    for kind in (REQUEST, NOTIFICATION):
        for method in (INIT, PING, INITIALIZED, CALL, LOG, DISCOVER, "sampling/createMessage",
                       "notifications/cancelled"):
            if not life.untouched_by(kind, method):
                continue
            assert (kind, method) not in ((REQUEST, INIT), (NOTIFICATION, INITIALIZED)), (era, role, state)
            assert lc.check_outgoing(role, state, kind, method, era) is None
            for direction in (SEND, RECEIVE):
                assert lc.advance(role, state, (direction, kind, method), era) == (era, state)
            assert lc.check_incoming(role, state, kind, method, batched=True, era=era) is None


def test_a_session_reaching_ready_becomes_quiet_and_closing_ends_it() -> None:
    life = Lifecycle(SERVER)
    assert not life.untouched_by(REQUEST, CALL)  # NEW: tools/call is refused before initialize
    life.advance((SEND, RESPONSE, INIT))
    assert not life.untouched_by(REQUEST, CALL)  # NEGOTIATED: the server may not send requests yet
    assert life.untouched_by(NOTIFICATION, LOG)  # but it may log
    life.advance((RECEIVE, NOTIFICATION, INITIALIZED))
    assert life.state == READY and life.untouched_by(REQUEST, CALL) and not life.untouched_by(REQUEST, INIT)
    life.close()
    assert life.state == CLOSED and not life.untouched_by(REQUEST, CALL)
    assert not life.untouched_by(NOTIFICATION, LOG)
