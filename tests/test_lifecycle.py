"""The MCP lifecycle state machine (protocol/lifecycle.py), row by row: no threads, no sockets.

The expected verdicts are written out here, not read from the module's tables, so that a changed table
row fails a test. The messages and codes are the ones the sessions have always put on the wire or raised.
"""

import pytest

from mcplite.errors import INVALID_REQUEST, ConnectionClosed, LocalProtocolError, RPCError
from mcplite.protocol import lifecycle as lc
from mcplite.protocol.jsonrpc import ERROR, NOTIFICATION, REQUEST, RESPONSE
from mcplite.protocol.lifecycle import (
    CLIENT, CLOSED, INITIALIZING, NEGOTIATED, NEW, READY, RECEIVE, SEND, SERVER, Lifecycle,
)
from mcplite.protocol.versions import revision

INIT, PING, INITIALIZED, CALL, LOG = (
    "initialize", "ping", "notifications/initialized", "tools/call", "notifications/message")

# The refusals, as (exception class, message) for what we send and (code, message) for what we take.
NOT_INITIALIZED = (LocalProtocolError, "{method}: the session is not initialized")
UNDER_WAY = (LocalProtocolError, "{method}: the handshake is already under way")
ALREADY = (LocalProtocolError, "the session is already initialized")
NOT_ANSWERED = (LocalProtocolError, "{method}: the server has not answered initialize")
ALREADY_SENT = (LocalProtocolError, "{method}: it has already been sent")
CLIENT_NOT_READY = (LocalProtocolError, "{method}: the client has not finished initializing")
CLIENT_ONLY = (LocalProtocolError, "{method}: only a client sends it")
GONE = (ConnectionClosed, "{method}: connection closed")
BEFORE = (INVALID_REQUEST, "Invalid Request: {method} before initialize")
REINIT = (INVALID_REQUEST, "Invalid Request: the session is already initialized")
BATCHED = (INVALID_REQUEST, "Invalid Request: initialize cannot be batched")

CLIENT_STATES = (NEW, INITIALIZING, NEGOTIATED, READY, CLOSED)
SERVER_STATES = (NEW, NEGOTIATED, READY, CLOSED)
ROLE_STATES = [(CLIENT, state) for state in CLIENT_STATES] + [(SERVER, state) for state in SERVER_STATES]

# ---- what each side may send: (role, state) -> verdict per (kind, method) ---------------------------------
SEND_COLUMNS = [(REQUEST, INIT), (REQUEST, PING), (REQUEST, CALL),
                (NOTIFICATION, INITIALIZED), (NOTIFICATION, LOG)]
SENDS = {
    (CLIENT, NEW): (None, None, NOT_INITIALIZED, NOT_ANSWERED, None),
    (CLIENT, INITIALIZING): (UNDER_WAY, None, NOT_INITIALIZED, NOT_ANSWERED, None),
    (CLIENT, NEGOTIATED): (ALREADY, None, None, None, None),
    (CLIENT, READY): (ALREADY, None, None, ALREADY_SENT, None),
    (CLIENT, CLOSED): (GONE, GONE, GONE, GONE, GONE),
    (SERVER, NEW): (CLIENT_ONLY, None, CLIENT_NOT_READY, CLIENT_ONLY, None),
    (SERVER, NEGOTIATED): (CLIENT_ONLY, None, CLIENT_NOT_READY, CLIENT_ONLY, None),
    (SERVER, READY): (CLIENT_ONLY, None, None, CLIENT_ONLY, None),
    (SERVER, CLOSED): (GONE, GONE, GONE, GONE, GONE),
}
SEND_ROWS = [(role, state, kind, method, verdict)
             for (role, state), verdicts in SENDS.items()
             for (kind, method), verdict in zip(SEND_COLUMNS, verdicts)]


@pytest.mark.parametrize("role, state, kind, method, verdict", SEND_ROWS)
def test_what_each_side_may_send(role, state, kind, method, verdict):
    error = lc.check_outgoing(role, state, kind, method)
    if verdict is None:
        assert error is None
    else:
        error_class, template = verdict
        assert type(error) is error_class
        assert str(error) == template.format(method=method)


def test_a_new_client_may_probe_with_server_discover_and_never_cancels_it():
    assert lc.check_outgoing(CLIENT, NEW, REQUEST, "server/discover") is None  # before any handshake
    assert type(lc.check_outgoing(CLIENT, INITIALIZING, REQUEST, "server/discover")) is LocalProtocolError
    assert not lc.cancellable("server/discover") and not lc.cancellable(INIT) and lc.cancellable(CALL)


@pytest.mark.parametrize("role, state", ROLE_STATES)
@pytest.mark.parametrize("kind", [RESPONSE, ERROR])
def test_answers_are_never_held_back(role, state, kind):
    assert lc.check_outgoing(role, state, kind, INIT) is None


# ---- what each side takes: (role, state) -> verdict per method of a request ---------------------------------
TAKE_COLUMNS = [INIT, PING, CALL]
TAKES = {
    (CLIENT, NEW): (None, None, None),
    (CLIENT, INITIALIZING): (None, None, None),
    (CLIENT, NEGOTIATED): (None, None, None),
    (CLIENT, READY): (None, None, None),
    (CLIENT, CLOSED): (None, None, None),
    (SERVER, NEW): (None, None, BEFORE),
    (SERVER, NEGOTIATED): (REINIT, None, None),
    (SERVER, READY): (REINIT, None, None),
    (SERVER, CLOSED): (None, None, None),
}
TAKE_ROWS = [(role, state, method, verdict)
             for (role, state), verdicts in TAKES.items()
             for method, verdict in zip(TAKE_COLUMNS, verdicts)]


@pytest.mark.parametrize("role, state, method, verdict", TAKE_ROWS)
def test_which_requests_each_side_takes(role, state, method, verdict):
    error = lc.check_incoming(role, state, REQUEST, method)
    if verdict is None:
        assert error is None
    else:
        code, template = verdict
        assert type(error) is RPCError
        assert (error.code, error.message, error.data) == (code, template.format(method=method), None)


@pytest.mark.parametrize("role, state", ROLE_STATES)
@pytest.mark.parametrize("method", [INIT, PING, INITIALIZED, CALL, LOG])
@pytest.mark.parametrize("kind", [NOTIFICATION, RESPONSE, ERROR])
def test_notifications_and_answers_are_never_refused(role, state, method, kind):
    assert lc.check_incoming(role, state, kind, method) is None


@pytest.mark.parametrize("state", SERVER_STATES)
def test_the_server_refuses_initialize_in_a_batch_whatever_its_state(state):
    error = lc.check_incoming(SERVER, state, REQUEST, INIT, batched=True)
    assert (error.code, error.message) == BATCHED


@pytest.mark.parametrize("role, state", ROLE_STATES)
def test_other_requests_in_a_batch_follow_their_unbatched_rule(role, state):
    for method in (PING, CALL):
        assert repr(lc.check_incoming(role, state, REQUEST, method, batched=True)) == repr(
            lc.check_incoming(role, state, REQUEST, method))
    if role == CLIENT:  # a client has no handshake to protect: initialize goes to its handler
        assert lc.check_incoming(role, state, REQUEST, INIT, batched=True) is None


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
]
_ = None  # the state does not change
MOVES = {
    (CLIENT, NEW): (INITIALIZING, _, _, _, _, _, _, _, _, _, READY, CLOSED),  # skipped: a 2026-07-28 client
    (CLIENT, INITIALIZING): (_, NEGOTIATED, NEW, _, _, _, _, _, _, _, _, CLOSED),
    (CLIENT, NEGOTIATED): (_, _, _, READY, _, _, _, _, _, _, _, CLOSED),
    (CLIENT, READY): (_, _, _, _, _, _, _, _, _, _, _, CLOSED),
    (CLIENT, CLOSED): (_, _, _, _, _, _, _, _, _, _, _, _),
    (SERVER, NEW): (_, _, _, _, NEGOTIATED, _, _, _, _, _, READY, CLOSED),
    (SERVER, NEGOTIATED): (_, _, _, _, _, _, _, READY, _, _, _, CLOSED),
    (SERVER, READY): (_, _, _, _, _, _, _, _, _, _, _, CLOSED),
    (SERVER, CLOSED): (_, _, _, _, _, _, _, _, _, _, _, _),
}
MOVE_ROWS = [(role, state, event, after if after is not None else state)
             for (role, state), afters in MOVES.items()
             for event, after in zip(EVENT_COLUMNS, afters)]


@pytest.mark.parametrize("role, state, event, after", MOVE_ROWS)
def test_transitions(role, state, event, after):
    assert lc.advance(role, state, event) == after


def test_every_state_of_every_role_is_in_the_tables():
    era = lc.HANDSHAKE_ERA
    assert era.states == {CLIENT: CLIENT_STATES, SERVER: SERVER_STATES}
    assert set(SENDS) == set(TAKES) == set(MOVES) == set(ROLE_STATES)
    for role, state in ROLE_STATES:
        for kind in (REQUEST, NOTIFICATION):
            assert (role, state, kind, lc.ANY) in era.outgoing
        assert (role, state, REQUEST, lc.ANY) in era.incoming
    # Every row names a state its role has: no dead rows.
    for role, state, _kind, _method in list(era.outgoing) + list(era.incoming):
        assert state in era.states[role]
    for role, state, _event in era.transitions:
        assert state in lc.STATES


# ---- the Lifecycle object: the handshakes end to end ---------------------------------------------------------
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


def test_server_handshake():
    life = Lifecycle(SERVER)
    assert life.check_incoming(REQUEST, CALL).message == "Invalid Request: tools/call before initialize"
    assert life.check_incoming(REQUEST, INIT) is None
    assert life.advance((SEND, ERROR, INIT)) == NEW  # bad params: still waiting
    assert life.advance((RECEIVE, NOTIFICATION, INITIALIZED)) == NEW  # before initialize: ignored
    assert life.advance((SEND, RESPONSE, INIT)) == NEGOTIATED
    assert life.check_incoming(REQUEST, CALL) is None
    assert life.check_incoming(REQUEST, INIT).message == "Invalid Request: the session is already initialized"
    assert str(life.send(REQUEST, "roots/list")) == "roots/list: the client has not finished initializing"
    assert life.send(REQUEST, PING) is None
    assert life.advance((RECEIVE, NOTIFICATION, INITIALIZED)) == READY
    assert life.send(REQUEST, "roots/list") is None


def test_a_stateless_server_skips_the_handshake():
    life = Lifecycle(SERVER)
    assert life.advance(lc.HANDSHAKE_SKIPPED) == READY
    assert life.send(REQUEST, "sampling/createMessage") is None


def test_initialize_is_the_one_request_that_cannot_be_cancelled():
    assert not lc.cancellable(INIT)
    assert lc.cancellable(PING) and lc.cancellable(CALL)


def test_a_lifecycle_has_a_role():
    with pytest.raises(ValueError):
        Lifecycle("peer")
    assert repr(Lifecycle(SERVER)) == "Lifecycle('server', 'handshake', state='new')"
    assert lc.ERAS == {"handshake": lc.HANDSHAKE_ERA}


# ---- the fast path: untouched_by must never let through what the tables would refuse or act on -----------
QUIET_STATES = {(CLIENT, NEGOTIATED), (CLIENT, READY), (SERVER, READY)}


@pytest.mark.parametrize("role,state", ROLE_STATES)
def test_untouched_by_agrees_with_the_tables(role: str, state: str) -> None:
    life = Lifecycle(role)
    life.state = state
    life._quiet = lc.HANDSHAKE_ERA.quiet.get((role, state))  # as advance() would have set it
    assert ((role, state) in QUIET_STATES) == (life._quiet is not None)
    for method in (INIT, PING, INITIALIZED, CALL, LOG, "sampling/createMessage", "notifications/cancelled"):
        if not life.untouched_by(method):
            continue
        assert method not in (INIT, INITIALIZED), (role, state, method)
        for kind in (REQUEST, NOTIFICATION):
            assert lc.check_outgoing(role, state, kind, method) is None
            for direction in (SEND, RECEIVE):
                assert lc.advance(role, state, (direction, kind, method)) == state
        assert lc.check_incoming(role, state, REQUEST, method, batched=True) is None


def test_a_session_reaching_ready_becomes_quiet_and_closing_ends_it() -> None:
    life = Lifecycle(SERVER)
    assert not life.untouched_by(CALL)  # NEW: tools/call is refused before initialize
    life.advance((SEND, RESPONSE, INIT))
    assert not life.untouched_by(CALL)  # NEGOTIATED: the server may not send requests yet
    life.advance((RECEIVE, NOTIFICATION, INITIALIZED))
    assert life.state == READY and life.untouched_by(CALL) and not life.untouched_by(INIT)
    life.close()
    assert life.state == CLOSED and not life.untouched_by(CALL)
