"""The session: matching, concurrency, cancellation, timeouts, progress order, peer death, lifecycle."""

import logging
import re
import threading
import time

import pytest

from mcplite.protocol import jsonrpc, lifecycle
from mcplite.errors import (
    INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR, CapabilityError, ConnectionClosed,
    LocalProtocolError, RemoteError, RequestCancelled, RequestTimeout, RPCError, VersionMismatch,
)
from mcplite.transports.memory import memory_pair
from mcplite.session import ClientSession, PendingRequest, ServerSession, Session

from support import WAIT, Background, run_concurrently, wait_until

INIT_RESULT = {"capabilities": {"tools": {}}, "serverInfo": {"name": "t", "version": "1"}}


def make_pair(server_handler, client_handler=None, server_caps=None, **server_kwargs):
    client_end, server_end = memory_pair()
    server = ServerSession(server_end, initialize_result=lambda p: {
        "capabilities": server_caps if server_caps is not None else {"tools": {}},
        "serverInfo": {"name": "t", "version": "1"}}, handle_request=server_handler, **server_kwargs)
    client = ClientSession(client_end, handle_request=client_handler, default_timeout=WAIT)
    server.start()
    client.start()
    client.initialize({"name": "c", "version": "1"}, {"sampling": {}})
    assert server.initialized.wait(WAIT)
    return client, server


def echo(ctx):
    return {"echo": ctx.params}


def test_roundtrip_and_negotiated_state():
    client, server = make_pair(echo)
    assert client.request("tools/call", {"x": 1}) == {"echo": {"x": 1}}
    assert client.revision.version == "2025-11-25" == server.revision.version
    assert server.client_info == {"name": "c", "version": "1"}
    assert server.peer_capabilities == {"sampling": {}}
    client.close()


def test_hundred_concurrent_calls_from_eight_threads_each_get_their_own_answer():
    def slow_echo(ctx):
        time.sleep(0.001 * (ctx.params["n"] % 5))  # answers finish out of order
        return {"n": ctx.params["n"]}

    client, server = make_pair(slow_echo)
    errors = []

    def worker(base):
        for i in range(base, base + 100):
            if client.request("tools/call", {"n": i})["n"] != i:
                errors.append(i)

    run_concurrently(worker, [k * 1000 for k in range(8)], timeout=WAIT * 3)
    assert errors == []
    client.close()


def test_timeout_raises_and_cancels_the_handler_whose_late_answer_is_dropped():
    started, cancelled = threading.Event(), threading.Event()

    def stuck(ctx):
        started.set()
        if ctx.cancelled.wait(WAIT):
            cancelled.set()
        return {"late": True}

    client, server = make_pair(stuck)
    with pytest.raises(RequestTimeout):
        client.request("tools/call", {}, timeout=0.2)
    assert started.is_set() and cancelled.wait(WAIT)
    assert client.request("ping") == {}  # still usable
    client.close()


def test_cancel_pending_request():
    entered = threading.Event()

    def stuck(ctx):
        entered.set()
        ctx.cancelled.wait(WAIT)
        return {}

    client, server = make_pair(stuck)
    pending = client.send_request("tools/call", {})
    assert entered.wait(WAIT)
    assert pending.cancel("user gave up") is True
    with pytest.raises(RequestCancelled):
        pending.result()
    assert pending.cancel() is False
    client.close()


def test_a_cancel_that_comes_before_the_handler_looks_is_seen_when_it_looks():
    # `cancelled` makes its Event for the first waiter: a cancellation that came before must still show.
    entered, go_on = threading.Event(), threading.Event()
    seen = []

    def late_looker(ctx):
        entered.set()
        go_on.wait(WAIT)
        seen.append((ctx.cancelled.is_set(), ctx.cancelled.wait(0), ctx.cancelled.wait(WAIT)))
        return {}

    client, server = make_pair(late_looker)
    pending = client.send_request("tools/call", {})
    assert entered.wait(WAIT)
    assert pending.cancel() is True
    # The cancel notification reaches the server's reader thread.
    wait_until(lambda: any(ctx.cancelled.is_set() for ctx in list(server._in_flight.values())),
               message="the server never saw the cancellation")
    go_on.set()
    assert client.request("ping") == {}  # the cancelled request's handler has run on; the session is fine
    wait_until(lambda: seen)
    assert seen == [(True, True, True)]
    client.close()


def test_input_ended_answers_the_requests_in_flight_and_fails_new_outgoing_ones():
    # What a stdio server does when its stdin ends: the handler running is not cancelled, its own request
    # to the client fails at once (no answer can come), its answer is still sent, then the session closes.
    entered, go_on = threading.Event(), threading.Event()
    outcome = {}

    def handler(ctx):
        entered.set()
        go_on.wait(WAIT)
        try:
            ctx.session.request("sampling/createMessage", {"messages": []}, timeout=WAIT)
        except ConnectionClosed as exc:
            outcome["nested"] = str(exc)
        outcome["cancelled"] = ctx.cancelled.is_set()
        return {"done": True}

    client, server = make_pair(handler)
    pending = client.send_request("tools/call", {})
    assert entered.wait(WAIT)
    draining = Background(server.input_ended, None)
    wait_until(lambda: server._owed is not None)
    assert not server.closed.is_set()  # still waiting for the handler
    go_on.set()
    assert pending.result(WAIT) == {"done": True}
    draining.join()
    assert server.closed.is_set()
    assert outcome == {"nested": "sampling/createMessage: connection closed: the peer sends nothing more",
                       "cancelled": False}
    client.close()


def test_input_ended_waits_for_an_answer_that_is_being_written():
    # The race a pipe of requests ending at once (printf ... | server) used to lose: the handler had
    # returned and its answer was on its way out when stdin ended; the session no longer counted it as owed
    # and closed the output under it.
    client_end, server_end = memory_pair()
    writing, go_on = threading.Event(), threading.Event()
    send = server_end.send

    def slow_send(message, route=None):
        if "echo" in message.get("result", {}):
            writing.set()
            go_on.wait(WAIT)
        send(message, route)

    server_end.send = slow_send
    server = ServerSession(server_end, initialize_result=lambda p: INIT_RESULT, handle_request=echo)
    client = ClientSession(client_end, default_timeout=WAIT)
    server.start()
    client.start()
    client.initialize({"name": "c", "version": "1"}, {})
    answer = client.send_request("tools/call", {"x": 1})
    assert writing.wait(WAIT)
    draining = Background(server.input_ended, None)
    assert not draining.wait(0.2)  # the answer being written is still owed
    go_on.set()
    draining.join()
    assert answer.result(WAIT) == {"echo": {"x": 1}}
    assert server.closed.is_set()
    client.close()


def test_closing_the_session_ends_a_drain_that_waits_for_a_handler_that_never_returns():
    entered, release = threading.Event(), threading.Event()

    def stuck(ctx):
        entered.set()
        release.wait(WAIT)  # ignores its cancel event, as a careless handler would
        return {}

    client, server = make_pair(stuck)
    client.send_request("tools/call", {})
    assert entered.wait(WAIT)
    draining = Background(server.input_ended, None)
    assert not draining.wait(0.2)  # waiting for the answer it owes
    server.close()
    draining.join()
    release.set()
    client.close()


def test_progress_is_delivered_before_the_result_in_order():
    def work(ctx):
        for i in range(50):
            ctx.session.notify("notifications/progress", {"progressToken": ctx.progress_token, "progress": i,
                                                         "total": 50})
        return {"done": True}

    client, server = make_pair(work)
    seen = []
    result = client.request("tools/call", {}, progress=lambda p, total, msg: seen.append(p))
    assert result == {"done": True}
    assert seen == list(range(50))
    client.close()


def test_handler_can_make_nested_blocking_requests_to_the_peer():
    def ask_back(ctx):
        answer = ctx.session.request("sampling/createMessage", {"q": ctx.params["q"]}, timeout=WAIT)
        return {"answer": answer["a"]}

    client, server = make_pair(ask_back, client_handler=lambda ctx: {"a": ctx.params["q"] * 2})
    assert client.request("tools/call", {"q": 21}) == {"answer": 42}
    client.close()


def test_peer_death_fails_every_pending_call_at_once():
    gate = threading.Event()
    client, server = make_pair(lambda ctx: gate.wait(WAIT) and {})
    pendings = [client.send_request("tools/call", {}) for _ in range(5)]
    start = time.monotonic()
    server.close()
    for pending in pendings:
        with pytest.raises(ConnectionClosed):
            pending.result(WAIT)
    assert time.monotonic() - start < 2
    with pytest.raises(ConnectionClosed):
        client.request("ping")
    gate.set()


def test_requests_before_initialize_are_refused(raw_pair):
    ours, peer = raw_pair
    server = ServerSession(ours, initialize_result=lambda p: INIT_RESULT, handle_request=echo)
    server.start()
    answer = peer.request(1, "tools/list")
    assert answer["error"]["code"] == INVALID_REQUEST
    assert answer["error"]["message"] == "Invalid Request: tools/list before initialize"
    assert peer.request(2, "ping") == {"jsonrpc": "2.0", "id": 2, "result": {}}
    init = peer.initialize()
    assert init["result"]["protocolVersion"] == "2025-11-25"
    again = peer.request(3, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}})
    assert again["error"]["code"] == INVALID_REQUEST
    assert again["error"]["message"] == "Invalid Request: the session is already initialized"


def test_the_server_lifecycle_moves_with_the_handshake_and_ignores_initialized_before_initialize(raw_pair):
    ours, peer = raw_pair
    server = ServerSession(ours, initialize_result=lambda p: INIT_RESULT, handle_request=echo)
    server.start()
    assert server.lifecycle.state == lifecycle.NEW and server.lifecycle.awaiting_initialize
    peer.send(jsonrpc.notification("notifications/initialized"))
    assert peer.request(1, "ping")["result"] == {}  # taken after the notification, on the same reader
    assert server.lifecycle.state == lifecycle.NEW and not server.initialized.is_set()
    bad = peer.request(2, "initialize", {"capabilities": {}})
    assert bad["error"] == {"code": INVALID_PARAMS, "message": "Invalid params: initialize needs protocolVersion "
                                                               "(a string) and capabilities (an object)"}
    assert server.lifecycle.state == lifecycle.NEW  # a good initialize may still come
    assert peer.request(3, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}})["result"]
    assert server.lifecycle.state == lifecycle.NEGOTIATED and not server.initialized.is_set()
    assert peer.request(4, "tools/call", {"a": 1})["result"] == {"echo": {"a": 1}}  # taken before initialized
    with pytest.raises(LocalProtocolError, match="^roots/list: the client has not finished initializing$"):
        server.send_request("roots/list")
    peer.send(jsonrpc.notification("notifications/initialized"))
    assert server.initialized.wait(WAIT)
    assert server.lifecycle.state == lifecycle.READY
    server.close()
    assert server.lifecycle.state == lifecycle.CLOSED


def test_initialize_in_a_batch_is_refused_by_name(raw_pair):
    ours, peer = raw_pair
    ServerSession(ours, initialize_result=lambda p: INIT_RESULT, handle_request=echo).start()
    peer.send([jsonrpc.request(1, "initialize", {"protocolVersion": "2025-03-26", "capabilities": {}})])
    assert peer.next() == jsonrpc.error(None, INVALID_REQUEST, "Invalid Request: batches are not allowed in the "
                                                               "handshake")
    peer.initialize("2025-03-26")
    peer.send([jsonrpc.request(2, "initialize", {"protocolVersion": "2025-03-26", "capabilities": {}}),
               jsonrpc.request(3, "ping")])
    answers = {answer["id"]: answer for answer in peer.next()}
    assert answers[2] == jsonrpc.error(2, INVALID_REQUEST, "Invalid Request: initialize cannot be batched")
    assert answers[3] == jsonrpc.result(3, {})


def test_the_client_lifecycle_refuses_a_second_initialize_and_allows_a_retry_after_a_refusal(raw_pair):
    ours, peer = raw_pair
    client = ClientSession(ours, default_timeout=WAIT)
    client.start()
    with pytest.raises(LocalProtocolError, match="^tools/list: the session is not initialized$"):
        client.send_request("tools/list")
    with pytest.raises(LocalProtocolError, match="^notifications/initialized: the server has not answered"):
        client.notify("notifications/initialized")
    answers = iter([jsonrpc.error("?", INVALID_PARAMS, "no"),
                    jsonrpc.result("?", {"protocolVersion": "2025-11-25", "capabilities": {}})])

    errors = []

    def answer_one():
        request = peer.next()
        try:  # checked while the client's initialize is in flight
            assert client.lifecycle.state == lifecycle.INITIALIZING
            with pytest.raises(LocalProtocolError, match="^initialize: the handshake is already under way$"):
                client.initialize({"name": "c", "version": "1"}, {})
        except BaseException as exc:
            errors.append(exc)
        peer.send({**next(answers), "id": request["id"]})

    for expected in (RemoteError, None):
        answerer = threading.Thread(target=answer_one)
        answerer.start()
        if expected is None:
            client.initialize({"name": "c", "version": "1"}, {})
        else:
            with pytest.raises(expected):
                client.initialize({"name": "c", "version": "1"}, {})
            assert client.lifecycle.state == lifecycle.NEW  # nothing negotiated: may be tried again
        answerer.join(WAIT)
        assert not answerer.is_alive() and not errors
    assert peer.next()["method"] == "notifications/initialized"
    assert client.lifecycle.state == lifecycle.READY
    with pytest.raises(LocalProtocolError, match="^the session is already initialized$"):
        client.initialize({"name": "c", "version": "1"}, {})
    client.close()
    assert client.lifecycle.state == lifecycle.CLOSED
    with pytest.raises(ConnectionClosed, match="^tools/list: connection closed$"):
        client.send_request("tools/list")


def test_server_counter_offers_its_latest_version_for_an_unknown_one(raw_pair):
    ours, peer = raw_pair
    ServerSession(ours, initialize_result=lambda p: INIT_RESULT).start()
    assert peer.initialize("1999-01-01")["result"]["protocolVersion"] == "2025-11-25"


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
def test_server_echoes_each_supported_version(raw_pair, version):
    ours, peer = raw_pair
    ServerSession(ours, initialize_result=lambda p: INIT_RESULT).start()
    assert peer.initialize(version)["result"]["protocolVersion"] == version


def test_client_refuses_a_version_it_does_not_speak(raw_pair):
    ours, peer = raw_pair
    client = ClientSession(ours, default_timeout=WAIT)
    client.start()

    def answer():
        request = peer.next()
        peer.send(jsonrpc.result(request["id"], {"protocolVersion": "2099-01-01", "capabilities": {},
                                                 "serverInfo": {"name": "x", "version": "1"}}))

    answering = Background(answer)
    with pytest.raises(VersionMismatch) as info:
        client.initialize({"name": "c", "version": "1"}, {})
    answering.join()
    assert info.value.offered == "2099-01-01"
    assert client.closed.wait(WAIT)


def test_capability_checks_happen_before_anything_is_sent():
    client, server = make_pair(echo, server_caps={"tools": {}})
    with pytest.raises(CapabilityError, match="prompts"):
        client.request("prompts/list")
    with pytest.raises(CapabilityError, match="resources.subscribe"):
        client.request("resources/subscribe", {"uri": "x"})
    with pytest.raises(LocalProtocolError):
        ClientSession(memory_pair()[0]).send_request("tools/list")
    client.close()


def test_server_may_not_send_requests_the_client_did_not_declare():
    client, server = make_pair(echo)
    with pytest.raises(CapabilityError, match="roots"):
        server.request("roots/list")
    client.close()


def test_parse_error_answered_with_null_id_and_connection_stays_usable(raw_pair):
    ours, peer = raw_pair
    ServerSession(ours, initialize_result=lambda p: INIT_RESULT, handle_request=echo).start()
    peer.initialize()
    peer.send_raw(b"{not json")
    answer = peer.next()
    assert answer["id"] is None and answer["error"]["code"] == PARSE_ERROR
    peer.send({"jsonrpc": "2.0", "id": 5, "method": 7})
    assert peer.next()["error"] == {"code": INVALID_REQUEST, "message": 'Invalid Request: "method" must be a non-empty string'}
    assert peer.request(6, "tools/call", {"k": 1})["result"] == {"echo": {"k": 1}}


def test_unknown_method_and_duplicate_in_flight_id(raw_pair):
    ours, peer = raw_pair
    gate = threading.Event()
    session = ServerSession(ours, initialize_result=lambda p: INIT_RESULT,
                            handle_request=lambda ctx: gate.wait(WAIT) and {"ok": True})
    session.start()
    peer.initialize()
    peer.send(jsonrpc.request(9, "slow"))
    peer.send(jsonrpc.request(9, "slow"))
    assert peer.next() == jsonrpc.error(9, INVALID_REQUEST, "Invalid Request: id 9 is already in use")
    gate.set()
    assert peer.next() == {"jsonrpc": "2.0", "id": 9, "result": {"ok": True}}


def test_a_session_without_handlers_answers_method_not_found(raw_pair):
    ours, peer = raw_pair
    Session(ours).start()
    assert peer.request(1, "anything")["error"]["code"] == METHOD_NOT_FOUND


def test_batches_only_in_2025_03_26(raw_pair):
    ours, peer = raw_pair
    ServerSession(ours, initialize_result=lambda p: INIT_RESULT, handle_request=echo).start()
    peer.initialize("2025-03-26")
    peer.send([jsonrpc.request(1, "a", {"i": 1}), jsonrpc.notification("n"), jsonrpc.request(2, "ping"),
               {"jsonrpc": "2.0", "id": 3}])
    answers = peer.next()
    assert isinstance(answers, list)
    by_id = {a["id"]: a for a in answers}
    assert by_id[1]["result"] == {"echo": {"i": 1}}
    assert by_id[2]["result"] == {}
    assert by_id[3]["error"]["code"] == INVALID_REQUEST
    peer.send([])
    assert peer.next()["error"]["code"] == INVALID_REQUEST


def test_batches_refused_after_2025_03_26(raw_pair):
    ours, peer = raw_pair
    ServerSession(ours, initialize_result=lambda p: INIT_RESULT, handle_request=echo).start()
    peer.initialize("2025-06-18")
    peer.send([jsonrpc.request(1, "a")])
    answer = peer.next()
    assert answer["id"] is None and answer["error"]["code"] == INVALID_REQUEST
    assert answer["error"]["message"] == "Invalid Request: batches are not allowed in 2025-06-18"


def test_handler_errors_become_json_rpc_errors():
    def fail(ctx):
        if ctx.params.get("rpc"):
            from mcplite.errors import RPCError
            raise RPCError(-32099, "custom", {"why": 1})
        raise ValueError("boom")

    client, server = make_pair(fail)
    with pytest.raises(RemoteError) as info:
        client.request("tools/call", {"rpc": True})
    assert (info.value.code, info.value.message, info.value.data) == (-32099, "custom", {"why": 1})
    with pytest.raises(RemoteError) as info:
        client.request("tools/call", {})
    # An unexpected exception is not shown to the peer (it may hold paths or secrets): an error id is, which the
    # server's log line carries too.
    assert info.value.code == -32603 and "boom" not in info.value.message
    assert re.fullmatch(r"Internal error \(error id [0-9a-f]{12}\)", info.value.message)
    client.close()


def test_an_answer_that_wins_the_race_but_is_never_delivered_is_still_a_timeout():
    # The answer was taken from the pending map (so the timeout cannot settle it), but the dispatcher that
    # should deliver it is stuck: result() must end with RequestTimeout, not hang or fail an assertion.
    session = Session(memory_pair()[0], default_timeout=0.05)
    pending = PendingRequest(session, 1, "tools/call", on_progress=None)
    session._abandon = lambda *args: False  # type: ignore[assignment]
    started = time.monotonic()
    with pytest.raises(RequestTimeout, match="not delivered"):
        pending.result(timeout=0.05)
    assert time.monotonic() - started < WAIT


def test_a_lazy_event_wakes_a_waiter_whether_it_was_set_before_or_during_the_wait():
    from mcplite.session import LazyEvent

    early = LazyEvent()
    early.set()
    assert early.is_set() and early.wait(0) and early.wait(WAIT)
    late = LazyEvent()
    assert not late.wait(0.01) and not late.is_set()
    waiter = Background(late.wait, WAIT)
    time.sleep(0.05)  # let it block in wait (the test passes either way; this makes the wake-up path likely)
    late.set()
    assert waiter.join() is True and late.is_set()
    many = LazyEvent()  # several first waiters at once must share one Event
    waiters = [Background(many.wait, WAIT) for _ in range(8)]
    many.set()
    assert [waiter.join() for waiter in waiters] == [True] * 8


def raw_client_of(server_handler):
    """A started ServerSession driven by a RawPeer that has done the handshake by hand."""
    from support import RawPeer

    client_end, server_end = memory_pair()
    server = ServerSession(server_end, initialize_result=lambda p: dict(INIT_RESULT), handle_request=server_handler)
    server.start()
    peer = RawPeer(client_end)
    answer = peer.request(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                            "clientInfo": {"name": "raw", "version": "1"}})
    assert "result" in answer, answer
    peer.send(jsonrpc.notification("notifications/initialized"))
    return peer, server


@pytest.mark.parametrize("method, params", [
    ("notifications/cancelled", {"requestId": [1, 2]}),
    ("notifications/cancelled", {"requestId": {"id": 1}}),
    ("notifications/cancelled", {"requestId": True}),
    ("notifications/progress", {"progressToken": {"t": 1}, "progress": 1}),
    ("notifications/progress", {"progressToken": [1], "progress": 1}),
])
def test_notifications_naming_an_impossible_id_are_ignored_and_the_connection_lives_on(method, params):
    # Found by fuzzing: a list or object as requestId / progressToken is not even a dict key, and used to
    # raise on the reader thread, which ended it and left the connection deaf.
    peer, server = raw_client_of(lambda ctx: {"ok": True})
    peer.send(jsonrpc.notification(method, params))
    assert peer.request(1, "tools/call", {})["result"] == {"ok": True}
    peer.transport.close()


def test_a_fault_while_taking_a_message_answers_its_request_with_an_internal_error_and_reads_on(monkeypatch):
    peer, server = raw_client_of(lambda ctx: {"ok": True})
    real = server._accept_request
    calls = []

    def broken_once(msg, batch, inline, transport_info=None):
        calls.append(msg["id"])
        if len(calls) == 1:
            raise RuntimeError("a bug in the session")
        return real(msg, batch, inline, transport_info)

    monkeypatch.setattr(server, "_accept_request", broken_once)
    error = peer.request(1, "tools/call", {})["error"]
    assert error["code"] == INTERNAL_ERROR
    assert re.fullmatch(r"Internal error \(error id [0-9a-f]{12}\)", error["message"])
    assert peer.request(2, "tools/call", {})["result"] == {"ok": True}  # the reader thread lived on
    peer.transport.close()


def test_a_batch_answered_after_the_connection_closed_is_dropped_quietly(raw_pair, caplog):
    """The last answer of a batch may be ready only after the peer has gone: nothing to send it to, and no
    error to log (the handler pool used to log the ConnectionClosed as a failed job)."""
    ours, peer = raw_pair
    gate = threading.Event()
    entered = []

    def slow(ctx):
        entered.append(ctx.id)
        gate.wait(WAIT)
        return {"late": True}

    session = ServerSession(ours, initialize_result=lambda p: INIT_RESULT, handle_request=slow)
    session.start()
    peer.initialize("2025-03-26")
    caplog.set_level(logging.DEBUG, logger="mcplite")
    # The ping is answered at once, but its answer waits in the batch for the slow request's.
    peer.send([jsonrpc.request(1, "ping"), jsonrpc.request(2, "slow")])
    wait_until(lambda: entered == [2], message="the slow request is being handled")
    session.close()
    gate.set()
    wait_until(lambda: any("batch" in r.getMessage() or "job failed" in r.getMessage() for r in caplog.records),
               message="the batch's fate was logged")
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
    assert any("the answers to a batch were dropped" in r.getMessage() for r in caplog.records)


def test_the_session_builds_a_route_only_for_transports_that_read_it():
    from mcplite.protocol.http_rules import Route
    from mcplite.transports import Transport

    class Recording(Transport):
        def __init__(self, wants_route):
            self.wants_route = wants_route
            self.routes = []

        def start(self, sink):
            pass

        def send(self, message, route=None):
            self.routes.append(route)

        def close(self):
            pass

    for wants in (False, True):
        transport = Recording(wants)
        session = Session(transport)
        session.start()
        session.notify("notifications/progress", {"progressToken": 1, "progress": 1}, related_request_id=7)
        route, = transport.routes
        if wants:
            assert isinstance(route, Route) and route.related_request_id == 7
            assert route.method == "notifications/progress"
        else:
            assert route is None


# ---- the dispatcher: a thread only while there is something to run --------------------------------------------
def test_an_idle_session_has_no_dispatcher_thread_and_one_starts_on_demand():
    seen = []
    ran = threading.Event()

    def record(method, params):
        seen.append(threading.current_thread())
        ran.set()

    session = Session(memory_pair()[0], handle_notification=record)
    session.receive(jsonrpc.notification("notifications/message", {"n": 0}))
    assert ran.wait(WAIT)
    seen[0].join(WAIT)  # it ends once the queue is empty
    assert not seen[0].is_alive()
    ran.clear()
    session.receive(jsonrpc.notification("notifications/message", {"n": 1}))  # a new one starts for it
    assert ran.wait(WAIT) and seen[1] is not seen[0]
    session.close()


def test_callbacks_keep_their_order_and_none_is_lost_across_dispatcher_restarts():
    import random

    rng = random.Random(15)
    order, threads = [], set()
    ran = threading.Condition()  # notified after each callback
    total = 3000

    def record(method, params):
        if rng.random() < 0.01:
            time.sleep(0.001)  # a slow callback now and then, so that the queue backs up behind it
        with ran:
            order.append(params["n"])
            threads.add(threading.current_thread())
            ran.notify_all()

    session = Session(memory_pair()[0], handle_notification=record)
    for n in range(total):
        session.receive(jsonrpc.notification("notifications/message", {"n": n}))  # (this thread is the reader)
        pause = rng.random()
        if pause < 0.05:
            # Wait for the dispatcher to run dry and end: the next message needs a new one.
            with ran:
                assert ran.wait_for(lambda: len(order) == n + 1, WAIT)
                running = list(threads)
            for thread in running:
                thread.join(WAIT)
                assert not thread.is_alive(), "the dispatcher outlived its work"
        elif pause < 0.3:
            time.sleep(0)  # yield: the dispatcher may be deciding to end just as the next message arrives
    with ran:
        assert ran.wait_for(lambda: len(order) == total, WAIT)
    assert order == list(range(total))
    assert len(threads) > 50  # it did end and start again, many times
    for thread in threads:
        thread.join(WAIT)
        assert not thread.is_alive()
    session.close()


def test_a_deferred_request_is_held_before_its_start_runs_so_a_close_then_answers_it():
    # A listen's acknowledgement is its Deferred's `start`: run once the session holds the request. A close
    # that follows it at once (a shutdown just after the client heard the acknowledgement) finds the request
    # and answers it with `final`. Before, the acknowledgement went out from the handler, and a close in
    # between ended the stream with no answer.
    from mcplite.session.endpoint import Deferred

    started = threading.Event()

    def deferring(ctx):
        def start():
            started.set()
            server.close()  # the server ends the session the moment the peer could know of the request
        return Deferred({"ended": "gracefully"}, start=start)

    client, server = make_pair(deferring)
    pending = client.send_request("tools/call", {})
    assert pending.result(WAIT) == {"ended": "gracefully"}
    assert started.is_set()
    client.close()


def test_a_deferred_whose_start_fails_ends_without_answer_and_runs_on_end():
    from mcplite.session.endpoint import Deferred

    ended = threading.Event()

    def deferring(ctx):
        def start():
            raise ConnectionError("gone")
        return Deferred({"never": "sent"}, on_end=ended.set, start=start)

    client, server = make_pair(deferring)
    pending = client.send_request("tools/call", {})
    assert ended.wait(WAIT)
    with pytest.raises(RequestTimeout):
        pending.result(0.3)
    client.close()
    server.close()


# ---- take_request: a request taken on the reader thread and answered later (the gateway's quick way) --------
def later_pair():
    held = []
    arrived = threading.Condition()

    def take(ctx):
        with arrived:
            held.append(ctx)
            arrived.notify_all()
        return ctx.params.get("take", True)

    client, server = make_pair(echo, take_request=take)

    def next_held(count):
        with arrived:
            assert arrived.wait_for(lambda: len(held) >= count, WAIT)
        return held[count - 1]
    return client, server, next_held


def test_a_request_not_taken_goes_to_its_handler():
    client, server, next_held = later_pair()
    assert client.request("tools/call", {"take": False}) == {"echo": {"take": False}}
    client.close()


def test_a_request_answered_later_is_answered_from_another_thread_and_leaves_flight():
    client, server, next_held = later_pair()
    first, second = client.send_request("tools/call", {"n": 1}), client.send_request("tools/call", {"n": 2})
    one, two = next_held(1), next_held(2)
    assert set(server._in_flight) == {one.id, two.id}  # in flight, though no thread handles them
    answering = Background(server.answer_later, two, lambda ctx: jsonrpc.result(ctx.id, {"n": ctx.params["n"]}))
    answering.join()
    assert second.result(WAIT) == {"n": 2}
    def refuse(ctx):
        raise RPCError(-32001, "refused later")

    server.answer_later(one, refuse)  # raises as a handler would: the error is the answer
    with pytest.raises(RemoteError, match="refused later") as raised:
        first.result(WAIT)
    assert raised.value.code == -32001
    assert server._in_flight == {}
    client.close()


def test_a_request_answered_later_that_the_peer_cancelled_is_not_answered():
    client, server, next_held = later_pair()
    pending = client.send_request("tools/call", {})
    ctx = next_held(1)
    pending.cancel()
    assert ctx.cancelled.wait(WAIT)
    sent = []
    original = server._send
    server._send = lambda message, *args, **kwargs: (sent.append(message), original(message, *args, **kwargs))
    server.answer_later(ctx, lambda ctx: jsonrpc.result(ctx.id, {"too": "late"}))
    assert sent == [] and server._in_flight == {}
    client.close()


def test_input_ended_waits_for_a_request_answered_later():
    client, server, next_held = later_pair()
    pending = client.send_request("tools/call", {})
    ctx = next_held(1)
    draining = Background(server.input_ended, None)
    wait_until(lambda: server._owed is not None)
    assert not server.closed.is_set() and server._owed == {ctx.id}  # owed, though no thread handles it
    server.answer_later(ctx, lambda ctx: jsonrpc.result(ctx.id, {"done": True}))
    assert pending.result(WAIT) == {"done": True}
    draining.join()
    assert server.closed.is_set()
    client.close()


def test_a_taker_that_fails_answers_the_request_with_an_internal_error_and_the_session_goes_on():
    def take(ctx):
        if ctx.params.get("fail"):
            raise KeyError("a fault of the taker's")
        return False

    client, server = make_pair(echo, take_request=take)
    with pytest.raises(RemoteError, match="Internal error") as raised:
        client.request("tools/call", {"fail": True})
    assert raised.value.code == INTERNAL_ERROR
    assert client.request("tools/call", {"x": 1}) == {"echo": {"x": 1}}
    client.close()
