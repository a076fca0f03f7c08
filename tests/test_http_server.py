"""The HTTP server over real sockets on 127.0.0.1, driven by the standard library's http.client."""

from http.client import HTTPException
import json
import socket
import threading
import time
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest

from mcplite import Context, Server
from mcplite.errors import ConnectionClosed
from mcplite.transports import MessageSink
from mcplite.transports.http_messages import ChecksRequests, PublishesRoutes
from mcplite.transports.http_server import HTTPOptions
from mcplite.transports.http_server.app import HTTPApp
from mcplite.transports.http_server.eventstore import InMemoryEventStore
from mcplite.transports.http_server.guards import LOOPBACK_HOSTS
from mcplite.transports.http_server.streams import Attachment, SessionTransport, Stream, StreamHost
from mcplite.http_server import LOOPBACK_HOSTS as DOCUMENTED_LOOPBACK_HOSTS
from mcplite.http_server import HTTPRefusal, HTTPServerThread
from support import WAIT, Background, run_concurrently, wait_until
from support.http import Fixture, serving
from support.raw_http import JSON_AND_SSE, EventReader, RawClient, Reply, exchange_until_closed
from support.results import result_text


@pytest.fixture
def fixture() -> Fixture:
    return Fixture()


@pytest.fixture
def http(fixture: Fixture) -> Iterator[HTTPServerThread]:
    with serving(fixture) as http:
        yield http


@pytest.fixture
def client(http: HTTPServerThread) -> RawClient:
    client = RawClient(http)
    client.initialize(capabilities={"sampling": {}})
    return client


def raw_exchange(http: HTTPServerThread, data: bytes, half_close: bool = True) -> bytes:
    """Send bytes on a fresh socket (then, by default, nothing more) and read until the server closes it."""
    return exchange_until_closed(http, data, half_close)


# ---- lifecycle and the plain JSON path --------------------------------------------------------------------
def test_initialize_answers_json_with_a_random_visible_ascii_session_id(http: HTTPServerThread) -> None:
    first, second = RawClient(http), RawClient(http)
    reply = first.initialize()
    second.initialize()
    assert reply.headers["content-type"] == "application/json"
    assert reply.json()["result"]["protocolVersion"] == "2025-11-25"
    assert first.session_id != second.session_id
    assert first.session_id and len(first.session_id) >= 32
    assert all(0x21 <= ord(char) <= 0x7E for char in first.session_id)


def test_a_request_answered_without_other_messages_is_one_json_body(client: RawClient) -> None:
    reply = client.post(client.call("add", {"a": 2, "b": 3}))
    assert reply.status == 200
    assert reply.headers["content-type"] == "application/json"
    assert reply.headers["mcp-session-id"] == client.session_id
    assert result_text(reply.json()) == "5"


def test_notifications_and_responses_are_accepted_with_202_and_no_body(client: RawClient) -> None:
    reply = client.post({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})
    assert (reply.status, reply.body) == (202, b"")
    reply = client.post({"jsonrpc": "2.0", "id": 999, "result": {}})  # an answer to nothing we asked
    assert (reply.status, reply.body) == (202, b"")


def test_connections_are_kept_alive_across_requests(client: RawClient) -> None:
    conn = client.connection()
    socks = []
    for n in range(3):
        reply = Reply(client.send("POST", client.call("add", {"a": n, "b": 1}), conn=conn))
        assert result_text(reply.json()) == str(n + 1)
        socks.append(conn.sock)
    assert socks[0] is not None and socks[0] is socks[1] is socks[2]


# ---- every status code of the spec ------------------------------------------------------------------------
@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", ""])
def test_a_body_that_is_not_json_is_415(client: RawClient, content_type: str) -> None:
    reply = client.post(client.call("add", {"a": 1, "b": 1}), {"Content-Type": content_type})
    assert reply.status == 415


@pytest.mark.parametrize("accept", ["application/json", "text/event-stream", "text/html", ""])
def test_a_post_that_does_not_accept_json_and_sse_is_406(client: RawClient, accept: str) -> None:
    assert client.post(client.call("add", {"a": 1, "b": 1}), {"Accept": accept}).status == 406


def test_wildcard_accept_values_are_honoured(client: RawClient) -> None:
    assert client.post(client.call("add", {"a": 1, "b": 1}), {"Accept": "*/*"}).status == 200
    assert client.post(client.call("add", {"a": 1, "b": 1}), {"Accept": "application/*, text/*;q=0.5"}).status == 200


def test_malformed_json_is_400_with_a_parse_error(client: RawClient) -> None:
    reply = client.post(b'{"jsonrpc": "2.0", "id": 1, "method": ')
    assert reply.status == 400
    assert reply.json()["error"]["code"] == -32700
    assert reply.json()["id"] is None


@pytest.mark.parametrize("body", [
    {"jsonrpc": "1.0", "id": 1, "method": "ping"},
    {"jsonrpc": "2.0", "id": 1, "method": 7},
    [],
    "just a string",
])
def test_an_invalid_jsonrpc_message_is_400_with_invalid_request(client: RawClient, body: Any) -> None:
    reply = client.post(json.dumps(body))
    assert reply.status == 400
    assert reply.json()["error"]["code"] == -32600


def test_initialize_sent_as_a_notification_is_not_a_handshake(http: HTTPServerThread) -> None:
    client = RawClient(http)
    assert client.post({"jsonrpc": "2.0", "method": "initialize"}).status == 400  # no session to deliver it to


def test_a_missing_session_id_is_400_and_an_unknown_one_404(client: RawClient) -> None:
    headers = client.headers()
    del headers["MCP-Session-Id"]
    conn = client.connection()
    call = client.call("add", {"a": 1, "b": 1})
    conn.request("POST", "/mcp", json.dumps(call), headers)
    reply = conn.getresponse()
    assert reply.status == 400
    assert json.loads(reply.read())["id"] == call["id"]  # the refusal names the request it refuses
    unknown = client.post(client.call("add", {"a": 1, "b": 1}), {"MCP-Session-Id": "f" * 32})
    assert unknown.status == 404


@pytest.mark.parametrize("version", ["2099-01-01", "2000-01-01", "invalid-protocol-version"])
def test_an_unsupported_protocol_version_header_is_400(client: RawClient, version: str) -> None:
    reply = client.post(client.call("add", {"a": 1, "b": 1}), {"MCP-Protocol-Version": version})
    assert reply.status == 400
    assert version in reply.json()["error"]["message"]


@pytest.mark.parametrize("strict", [False, True])
def test_a_missing_protocol_version_header(fixture: Fixture, strict: bool) -> None:
    """Served under the negotiated revision, or refused from 2025-06-18 with require_version_header."""
    with serving(fixture, require_version_header=strict) as http:
        for version, required in (("2025-06-18", True), ("2025-11-25", True), ("2025-03-26", False)):
            client = RawClient(http, version)
            client.initialize()
            headers = client.headers()
            del headers["MCP-Protocol-Version"]
            conn = client.connection()
            conn.request("POST", "/mcp", json.dumps(client.call("add", {"a": 1, "b": 1})), headers)
            reply = Reply(conn.getresponse())
            if strict and required:
                assert reply.status == 400, version
                continue
            assert reply.status == 200, version
            has_structured = "structuredContent" in reply.json()["result"]
            assert has_structured == (version != "2025-03-26")  # the session's revision, not 2025-03-26
            # Any supported version is accepted, not only the negotiated one (the conformance suite does this).
            status = client.post(client.call("add", {"a": 1, "b": 1}), {"MCP-Protocol-Version": "2025-03-26"}).status
            assert status == 200


def test_unknown_paths_are_404_and_other_methods_405_with_allow(http: HTTPServerThread) -> None:
    client = RawClient(http)
    assert client.post(client.request("ping"), path="/other").status == 404
    reply = Reply(client.send("PUT", b"{}"))
    assert reply.status == 405
    assert reply.headers["allow"] == "DELETE, GET, POST"


def test_a_garbage_request_does_not_take_the_server_down(client: RawClient, http: HTTPServerThread) -> None:
    assert b"400" in raw_exchange(http, b"GARBAGE\r\n\r\n")  # an HTTP/0.9-style answer: no status line
    assert raw_exchange(http, b"POST /mcp HTTP/1.1\r\nContent-Length: nope\r\n\r\n").startswith(b"HTTP/1.1 400")
    # What could smuggle a request past a proxy: whitespace before a colon, obsolete line folding.
    assert raw_exchange(http, b"POST /mcp HTTP/1.1\r\nContent-Length : 2\r\n\r\n{}").startswith(b"HTTP/1.1 400")
    assert raw_exchange(http, b"POST /mcp HTTP/1.1\r\nX-A: 1\r\n folded\r\n\r\n").startswith(b"HTTP/1.1 400")
    assert result_text(client.post(client.call("add", {"a": 1, "b": 1})).json()) == "2"


def test_a_chunked_request_body_is_read(client: RawClient, http: HTTPServerThread) -> None:
    body = json.dumps(client.call("add", {"a": 20, "b": 22})).encode()
    head = "".join(f"{name}: {value}\r\n" for name, value in client.headers().items())
    request = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{http.port}\r\n{head}Transfer-Encoding: chunked\r\n"
               f"Connection: close\r\n\r\n").encode() + b"%x\r\n%b\r\n0\r\n\r\n" % (len(body), body)
    response = raw_exchange(http, request)
    assert response.startswith(b"HTTP/1.1 200") and b'"text":"42"' in response


# ---- SSE on a POST ----------------------------------------------------------------------------------------
def test_progress_and_logs_switch_the_response_to_sse_before_the_result(client: RawClient) -> None:
    stream = client.stream(client.call("chatty", progressToken="tok"))
    assert stream.headers["content-type"] == "text/event-stream"
    assert stream.headers["x-accel-buffering"] == "no"
    assert stream.headers["mcp-session-id"] == client.session_id
    messages = stream.messages()
    assert [m.get("method") for m in messages] == ["notifications/progress", "notifications/message", None]
    assert messages[0]["params"]["progressToken"] == "tok"
    assert result_text(messages[2]) == "done"


def test_sse_streams_start_with_a_priming_event_from_2025_11_25(http: HTTPServerThread) -> None:
    client = RawClient(http, "2025-11-25")
    client.initialize()
    stream = client.stream(client.call("chatty", progressToken="t"))
    events = stream.rest()
    assert stream.raw.startswith(b"id: ")
    first_block = bytes(stream.raw).split(b"\n\n", 1)[0].split(b"\n")
    assert first_block[1:] == [b"retry: 1000", b"data:"]  # id, retry, empty data
    ids = [event.id for event in events]
    assert len(set(ids)) == len(ids) == 3
    assert all(event_id.split(":")[0] == ids[0].split(":")[0] for event_id in ids)  # one stream


def test_before_2025_11_25_events_have_ids_but_no_priming_event(http: HTTPServerThread) -> None:
    client = RawClient(http, "2025-06-18")
    client.initialize()
    stream = client.stream(client.call("chatty", progressToken="t"))
    events = stream.rest()
    assert len(events) == 3 and all(event.id for event in events)
    assert b"retry:" not in stream.raw and b"data:\n\n" not in stream.raw


def test_json_response_mode_never_streams(fixture: Fixture) -> None:
    with serving(fixture, json_response=True) as http:
        client = RawClient(http)
        client.initialize()
        reply = client.post(client.call("chatty", progressToken="t"), {"Accept": "application/json"})
        assert reply.headers["content-type"] == "application/json"
        assert result_text(reply.json()) == "done"


def test_a_sampling_request_is_answered_mid_call_by_a_separate_post(client: RawClient) -> None:
    stream = client.stream(client.call("ask_model", {"prompt": "What is up?"}))
    sampling = json.loads(stream.next().data)  # type: ignore[union-attr]
    assert sampling["method"] == "sampling/createMessage"
    assert sampling["params"]["messages"][0]["content"]["text"] == "What is up?"
    answer = {"jsonrpc": "2.0", "id": sampling["id"],
              "result": {"role": "assistant", "content": {"type": "text", "text": "the sky"}, "model": "m"}}
    assert client.post(answer).status == 202
    assert result_text(stream.messages()[-1]) == "the sky"


def test_cancelling_a_call_ends_its_stream_without_a_response(client: RawClient, fixture: Fixture) -> None:
    call = client.call("silent_wait")
    caller = Background(client.post, call)
    assert fixture.started.wait(WAIT)
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": call["id"]}}
    assert client.post(cancel).status == 202
    reply = caller.join()
    assert reply.status == 200
    assert reply.headers["content-type"] == "text/event-stream"
    assert reply.events == []


def test_a_request_id_in_flight_cannot_be_reused(client: RawClient, fixture: Fixture) -> None:
    call = client.call("gated")
    first = client.stream(call)
    assert fixture.started.wait(WAIT)
    refused = client.post(call)
    assert refused.status == 400
    assert refused.json()["error"] == {"code": -32600,
                                       "message": f"Invalid Request: id {call['id']!r} is already in use"}
    fixture.gate.set()
    assert result_text(first.messages()[-1]) == "released"


def test_concurrent_sessions_stay_apart(http: HTTPServerThread) -> None:
    results: Dict[int, List[str]] = {}

    def run(n: int) -> None:
        client = RawClient(http)
        client.initialize(name=f"client{n}")
        results[n] = [result_text(client.post(client.call("whoami")).json()) for _ in range(5)]
        results[n].append(client.session_id or "")

    run_concurrently(run, range(8))
    for n, answers in results.items():
        session_id = answers.pop()
        assert answers == [f"client{n}@{session_id}"] * 5
    assert len({answers[0] for answers in results.values()}) == 8


def test_concurrent_posts_in_one_session_each_get_their_own_stream(client: RawClient, fixture: Fixture) -> None:
    streams = [client.stream(client.call("gated")) for _ in range(3)]
    first_events = [stream.next() for stream in streams]
    assert all(event is not None and json.loads(event.data)["params"]["data"] == "waiting" for event in first_events)
    stream_ids = {event.id.split(":")[0] for event in first_events if event is not None}
    assert len(stream_ids) == 3
    fixture.gate.set()
    for stream in streams:
        messages = stream.messages()
        assert [m.get("method") for m in messages] == ["notifications/message", None]


# ---- the standalone GET stream ----------------------------------------------------------------------------
def test_server_notifications_go_to_the_get_stream_and_only_there(client: RawClient, fixture: Fixture) -> None:
    listener = client.get()
    assert listener.status == 200 and listener.headers["content-type"] == "text/event-stream"
    post = client.stream(client.call("gated"))
    assert post.next() is not None
    fixture.server.add_tool(lambda: "new", name="late_tool")
    changed = listener.next()
    assert changed is not None and json.loads(changed.data)["method"] == "notifications/tools/list_changed"
    fixture.gate.set()
    assert [m.get("method") for m in post.messages()] == ["notifications/message", None]  # nothing broadcast


def test_a_second_standalone_stream_is_409(client: RawClient) -> None:
    # The first stream is held open: dropped, its socket would close and the server would free the stream at once.
    first = client.get()
    assert first.status == 200
    assert client.get().status == 409


def test_get_needs_a_session_and_an_sse_accept(client: RawClient, http: HTTPServerThread) -> None:
    assert client.get({"Accept": "application/json"}).status == 406
    assert RawClient(http).get().status == 400


def test_idle_streams_get_keepalive_comments(fixture: Fixture) -> None:
    with serving(fixture, keepalive_interval=0.05) as http:
        client = RawClient(http)
        client.initialize()
        listener = client.get()
        listener.read_raw_until(b":\n\n")
        # A POST whose handler stays silent switches to SSE to carry the comments too.
        post = client.stream(client.call("silent_wait"))
        assert post.headers["content-type"] == "text/event-stream"
        post.read_raw_until(b":\n\n")
        fixture.gate.set()
        assert result_text(post.messages()[-1]) == "finished"


def test_get_and_delete_can_be_disabled_with_405_and_allow(fixture: Fixture) -> None:
    with serving(fixture, allow_get=False, allow_delete=False) as http:
        client = RawClient(http)
        client.initialize()
        for method in ("GET", "DELETE"):
            reply = Reply(client.send(method, None, {"Accept": "text/event-stream"}))
            assert reply.status == 405
            assert reply.headers["allow"] == "POST"


# ---- sessions ---------------------------------------------------------------------------------------------
def test_delete_ends_the_session(client: RawClient) -> None:
    listener = client.get()
    assert Reply(client.send("DELETE")).status == 200
    assert listener.rest() == []  # its stream ended
    assert client.post(client.call("add", {"a": 1, "b": 1})).status == 404
    assert Reply(client.send("DELETE")).status == 404


class MovableClock:
    """A clock for expiry tests: time moves only when the test says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_idle_sessions_expire(fixture: Fixture) -> None:
    with serving(fixture, session_idle_timeout=60) as http:
        clock = http.app.sessions.clock = MovableClock()
        idle, listening, fresh = RawClient(http), RawClient(http), RawClient(http)
        idle.initialize()
        listening.initialize()
        listener = listening.get()
        clock.now += 59
        fresh.initialize()
        clock.now += 2  # idle has been idle for 61 s, fresh for 2 s
        assert idle.post(idle.call("add", {"a": 1, "b": 1})).status == 404
        assert fresh.post(fresh.call("add", {"a": 1, "b": 1})).status == 200
        # An open stream keeps its session alive.
        assert listening.post(listening.call("add", {"a": 1, "b": 1})).status == 200
        assert listener.status == 200


def checked_in(http: HTTPServerThread) -> None:
    """Wait until every request has checked its session back in: the server does so just after answering."""
    wait_until(lambda: all(entry.busy == 0 for entry in list(http.app.sessions._sessions.values())))


def test_a_full_table_evicts_the_longest_idle_session(fixture: Fixture) -> None:
    with serving(fixture, max_sessions=2) as http:
        clock = http.app.sessions.clock = MovableClock()
        first, second, third = RawClient(http), RawClient(http), RawClient(http)
        first.initialize()
        checked_in(http)
        clock.now += 1
        second.initialize()
        checked_in(http)
        clock.now += 1
        assert first.post(first.call("add", {"a": 1, "b": 1})).status == 200  # second is now the longest idle
        checked_in(http)
        clock.now += 1
        third.initialize()  # not 503: the table made room
        assert second.post(second.call("add", {"a": 1, "b": 1})).status == 404  # closed, as expiry closes it
        assert first.post(first.call("add", {"a": 1, "b": 1})).status == 200
        assert third.post(third.call("add", {"a": 1, "b": 1})).status == 200
        assert len(http.app.sessions._sessions) == 2


def test_a_new_session_is_refused_only_when_every_session_is_in_use(fixture: Fixture) -> None:
    with serving(fixture, max_sessions=2) as http:
        first, second = RawClient(http), RawClient(http)
        first.initialize()
        second.initialize()
        first_stream, second_stream = first.get(), second.get()  # an open stream keeps its session in use
        assert first_stream.status == second_stream.status == 200
        third = RawClient(http)
        reply = third.post(third.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                                         "clientInfo": {"name": "x", "version": "1"}}))
        assert reply.status == 503 and reply.headers["retry-after"] == "5"
        assert first.post(first.call("add", {"a": 1, "b": 1})).status == 200  # nobody was evicted
        assert Reply(first.send("DELETE")).status == 200
        assert first_stream.rest() == []  # (its stream ended with its session)
        third.initialize()
        assert second.post(second.call("add", {"a": 1, "b": 1})).status == 200


@pytest.mark.parametrize("value, status", [
    (b"caf\xe9", 400),  # obs-text: a Latin-1 byte the grammar allows in a value, but no session id holds
    (b"a b", 400), (b"a,b", 400), (b"a, b", 400),  # two headers as a WSGI server joins them
    (b"0123456789abcdef0123456789abcdef", 404),  # well formed, just unknown: start a new session
])
def test_a_session_id_no_session_could_have_is_400_not_404(http: HTTPServerThread, value: bytes, status: int) -> None:
    body = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
    request = (b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: "
               b"application/json, text/event-stream\r\nConnection: close\r\nMCP-Session-Id: " + value
               + b"\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    answer = exchange_until_closed(http, request)
    assert answer.startswith(b"HTTP/1.1 %d " % status), answer
    if status == 400:
        assert b"MCP-Session-Id must be one value of visible ASCII" in answer


def test_a_failed_initialize_establishes_no_session(http: HTTPServerThread) -> None:
    client = RawClient(http)
    reply = client.post(client.request("initialize", {"capabilities": {}}))  # no protocolVersion
    assert reply.status == 200
    assert reply.json()["error"]["code"] == -32602
    assert "mcp-session-id" not in reply.headers


# ---- resumability -----------------------------------------------------------------------------------------
def read_until_closed(stream: EventReader) -> Tuple[List[Any], str]:
    events = stream.rest()
    return [json.loads(event.data) for event in events], stream.parser.last_event_id


def log_texts(messages: List[Any]) -> List[str]:
    return [m["params"]["data"] if m.get("method") else result_text(m) for m in messages]


def test_a_stream_closed_by_the_server_resumes_without_loss_or_duplicates(client: RawClient,
                                                                           fixture: Fixture) -> None:
    post = client.stream(client.call("reconnect", {"wait": True}))
    messages, last_event_id = read_until_closed(post)
    assert log_texts(messages) == ["one"]
    assert post.parser.retry == 1000
    resumed = client.get({"Last-Event-ID": last_event_id})
    assert resumed.status == 200
    fixture.gate.set()  # the handler goes on while the client is attached again
    events = resumed.rest()
    assert log_texts([json.loads(e.data) for e in events]) == ["two", "three", "closed=True"]
    ids = [last_event_id] + [e.id for e in events]
    assert len(set(ids)) == len(ids) and len({i.split(":")[0] for i in ids}) == 1


def test_events_sent_while_the_client_was_away_are_replayed(client: RawClient, fixture: Fixture) -> None:
    post = client.stream(client.call("reconnect"))  # does not wait: finishes before we resume
    messages, last_event_id = read_until_closed(post)
    assert log_texts(messages) == ["one"]
    fixture.started.wait(WAIT)
    stream_id, seq = last_event_id.split(":")
    replay = client.get({"Last-Event-ID": last_event_id})
    assert log_texts(replay.messages()) == ["two", "three", "closed=True"]
    # Resuming from any point replays exactly what followed it.
    later = client.get({"Last-Event-ID": f"{stream_id}:{int(seq) + 2}"})
    assert log_texts(later.messages()) == ["closed=True"]


def test_a_client_that_drops_the_connection_resumes_where_it_left(client: RawClient, fixture: Fixture) -> None:
    post = client.stream(client.call("gated"))
    first = post.next()
    assert first is not None and json.loads(first.data)["params"]["data"] == "waiting"
    post.drop()  # the client goes away; the handler does not notice
    fixture.gate.set()
    resumed = client.get({"Last-Event-ID": first.id})
    assert log_texts(resumed.messages()) == ["after", "released"]


def test_resumption_never_crosses_sessions_or_streams(client: RawClient, http: HTTPServerThread,
                                                      fixture: Fixture) -> None:
    post = client.stream(client.call("reconnect"))
    _, last_event_id = read_until_closed(post)
    fixture.started.wait(WAIT)
    stranger = RawClient(http)
    stranger.initialize()
    assert stranger.get({"Last-Event-ID": last_event_id}).status == 400
    listener = client.get()
    fixture.server.add_tool(lambda: "x", name="another")
    notice = listener.next()
    assert notice is not None and notice.id.split(":")[0] != last_event_id.split(":")[0]
    listener.drop()
    fixture.server.remove_tool("another")  # sent while the client is away: kept for the standalone stream
    standalone = client.get({"Last-Event-ID": notice.id})
    missed = standalone.next()
    assert missed is not None and json.loads(missed.data)["method"] == "notifications/tools/list_changed"
    assert missed.id.split(":")[0] == notice.id.split(":")[0]
    assert Reply(client.send("DELETE")).status == 200
    assert standalone.rest() == []  # nothing else was replayed on it


def test_the_in_memory_event_store_is_bounded_and_never_skips_silently() -> None:
    store = InMemoryEventStore(max_events=3)
    for seq in (1, 2, 3):
        store.append("s1", "1", seq, f"e{seq}")
    assert store.replay("s1", "1", 1) == [(2, "e2"), (3, "e3")]
    assert store.replay("s2", "1", 0) is None  # another session's stream is unknown
    store.append("s2", "1", 1, "other")  # evicts s1's oldest event
    assert store.replay("s1", "1", 0) is None  # event 1 is gone: resuming from before it is refused
    assert store.replay("s1", "1", 1) == [(2, "e2"), (3, "e3")]
    store.forget("s1")
    assert store.replay("s1", "1", 1) is None
    assert store.replay("s2", "1", 0) == [(1, "other")]


def test_a_resumption_past_evicted_events_is_refused(fixture: Fixture) -> None:
    with serving(fixture, event_store=InMemoryEventStore(max_events=2)) as http:
        client = RawClient(http)
        client.initialize()
        stream = client.stream(client.call("chatty", progressToken=1))
        events = stream.rest()
        assert len(events) == 3  # the first of them has been evicted from the store
        assert client.get({"Last-Event-ID": events[1].id}).messages()[-1]["result"]["content"][0]["text"] == "done"
        assert client.get({"Last-Event-ID": events[0].id.split(":")[0] + ":0"}).status == 400


@pytest.mark.parametrize("last_event_id", ["garbage", "1:x", "99:1", "0:999"])
def test_an_unknown_last_event_id_is_400(client: RawClient, last_event_id: str) -> None:
    assert client.get({"Last-Event-ID": last_event_id}).status == 400


def test_close_sse_stream_does_nothing_before_2025_11_25(http: HTTPServerThread) -> None:
    client = RawClient(http, "2025-06-18")
    client.initialize()
    messages = client.stream(client.call("reconnect")).messages()
    assert log_texts(messages) == ["one", "two", "three", "closed=False"]


# ---- security ---------------------------------------------------------------------------------------------
def test_dns_rebinding_is_refused_and_the_urls_own_host_accepted(http: HTTPServerThread) -> None:
    client = RawClient(http)
    init = client.request("initialize", {"protocolVersion": "2024-11-05", "capabilities": {},
                                         "clientInfo": {"name": "x", "version": "1"}})
    assert client.post(init, {"Host": "evil.example.com"}).status == 403
    assert client.post(init, {"Host": "evil.example.com:80"}).status == 403
    assert client.post(init, {"Origin": "http://evil.example.com"}).status == 403
    assert client.post(init, {"Origin": "null"}).status == 403
    assert client.post(init, {"Host": f"127.0.0.1:{http.port}"}).status == 200
    assert client.post(init, {"Host": f"localhost:{http.port}"}).status == 200
    assert client.post(init, {"Origin": "http://localhost:6274"}).status == 200


def test_explicit_host_and_origin_allow_lists(fixture: Fixture) -> None:
    with serving(fixture, allowed_hosts=["mcp.example:443"], allowed_origins=["https://app.example"]) as http:
        client = RawClient(http)
        init = client.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                             "clientInfo": {"name": "x", "version": "1"}})
        assert client.post(init, {"Host": f"127.0.0.1:{http.port}"}).status == 403
        assert client.post(init, {"Host": "mcp.example:443", "Origin": "http://localhost:1"}).status == 403
        assert client.post(init, {"Host": "mcp.example:443", "Origin": "https://app.example"}).status == 200


def test_the_authenticate_hook_refuses_with_401_or_403_and_passes_claims(fixture: Fixture) -> None:
    def authenticate(headers: Any) -> Dict[str, str]:
        token = headers.get("authorization")
        if token is None:
            raise HTTPRefusal(401, www_authenticate='Bearer resource_metadata="http://x/.well-known/prm"')
        if token != "Bearer good":
            raise HTTPRefusal(403, "Forbidden", www_authenticate='Bearer error="insufficient_scope"')
        return {"sub": "alice"}

    with serving(fixture, authenticate=authenticate) as http:
        client = RawClient(http)
        refused = client.post(client.request("ping"))
        assert refused.status == 401
        assert refused.headers["www-authenticate"].startswith("Bearer resource_metadata=")
        forbidden = client.post(client.request("ping"), {"Authorization": "Bearer bad"})
        assert forbidden.status == 403 and forbidden.headers["www-authenticate"].endswith('"insufficient_scope"')
        client.extra["Authorization"] = "Bearer good"
        client.initialize()
        assert json.loads(result_text(client.post(client.call("claims")).json())) == {"sub": "alice"}


def test_handlers_get_their_http_request_as_a_request_info_record(client: RawClient, fixture: Fixture) -> None:
    reply = client.post(client.call("request_info"))
    assert reply.status == 200
    assert json.loads(result_text(reply.json())) == {
        "session_id": client.session_id, "auth": None, "accept": JSON_AND_SSE, "same_as_dict": True,
        "context_auth": None}
    with serving(fixture, stateless=True) as http:
        stateless = RawClient(http)
        stateless.extra["MCP-Protocol-Version"] = "2025-11-25"
        answer = json.loads(result_text(stateless.post(stateless.call("request_info")).json()))
        assert answer["session_id"] is None and answer["same_as_dict"] is True


class RouteHook:
    """An ``authenticate`` hook that publishes a document without inheriting from `PublishesRoutes`."""

    def __call__(self, headers: Any) -> Dict[str, str]:
        if headers.get("authorization") != "Bearer good":
            raise HTTPRefusal(401)
        return {"sub": "bob"}

    def well_known_routes(self) -> Dict[str, Any]:
        return {"/.well-known/doc": lambda request: (200, [("Content-Type", "text/plain")], b"public")}


def test_a_hook_that_publishes_routes_has_them_served_without_authentication(fixture: Fixture) -> None:
    assert isinstance(RouteHook(), PublishesRoutes) and not isinstance(lambda headers: None, PublishesRoutes)
    with serving(fixture, authenticate=RouteHook()) as http:
        client = RawClient(http)
        document = Reply(client.send("GET", path="/.well-known/doc"))
        assert (document.status, document.body) == (200, b"public")
        assert client.post(client.request("ping")).status == 401


class RequestHook:
    """An ``authenticate`` hook that wants the method and path too (as DPoP proofs do), by structure alone."""

    def __init__(self) -> None:
        self.seen: List[Tuple[str, str]] = []

    def __call__(self, headers: Any) -> None:
        raise AssertionError("a ChecksRequests hook is called through authenticate_request")

    def authenticate_request(self, method: str, path: str, headers: Any) -> Dict[str, str]:
        self.seen.append((method, path))
        return {"sub": "bob"}


def test_a_hook_that_checks_requests_gets_their_method_and_path(fixture: Fixture) -> None:
    hook = RequestHook()
    assert isinstance(hook, ChecksRequests) and not isinstance(RouteHook(), ChecksRequests)
    with serving(fixture, authenticate=hook) as http:
        assert RawClient(http).initialize().status == 200
    assert hook.seen and set(hook.seen) == {("POST", "/mcp")}


def test_options_are_checked_when_the_app_is_made(fixture: Fixture) -> None:
    with pytest.raises(TypeError):
        HTTPApp(fixture.server, no_such_option=True)
    with pytest.raises(ValueError, match="sse_path"):
        HTTPApp(fixture.server, sse_path="sse")
    app = HTTPApp(fixture.server, max_body_size=10, resumable=False)
    assert app.options == HTTPOptions(max_body_size=10, resumable=False)
    assert app.max_body_size == 10 and app.event_store is None


def test_there_is_one_loopback_host_list() -> None:
    assert DOCUMENTED_LOOPBACK_HOSTS is LOOPBACK_HOSTS


class _Host(StreamHost):
    json_response = False
    sse_retry = 1000
    event_store = None

    def track(self, out: Attachment, stream: Stream) -> Attachment:
        return out

    def untrack(self, out: Attachment) -> None:
        pass


class _Sink(MessageSink):
    def __init__(self) -> None:
        self.lost: List[Optional[BaseException]] = []

    def receive(self, value: Any) -> None:
        raise AssertionError("nothing is read from an HTTP session transport")

    def receive_invalid(self, exc: Any) -> None:
        raise AssertionError("nothing is read from an HTTP session transport")

    def connection_lost(self, exc: Optional[BaseException]) -> None:
        self.lost.append(exc)


def test_closing_a_session_transport_reports_connection_lost_once() -> None:
    transport = SessionTransport(_Host(), "id")
    sink = _Sink()
    transport.start(sink)
    transport.close()
    transport.close()
    assert sink.lost == [None]
    assert transport.closed


def test_an_oversized_body_is_413(fixture: Fixture) -> None:
    with serving(fixture, max_body_size=1000) as http:
        client = RawClient(http)
        big = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "x" * 5000}})
        assert client.post(big).status == 413
        # Announced but never sent: refused without reading it.
        head = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 99999999\r\n\r\n"
        assert raw_exchange(http, head).startswith(b"HTTP/1.1 413")
        expect = head.replace(b"\r\n\r\n", b"\r\nExpect: 100-continue\r\n\r\n")
        assert raw_exchange(http, expect).startswith(b"HTTP/1.1 413")


def test_a_slow_or_silent_client_is_cut_off_without_blocking_others(fixture: Fixture) -> None:
    with serving(fixture, header_timeout=0.5, read_timeout=0.5) as http:
        client = RawClient(http)
        client.initialize()
        with socket.create_connection((http.host, http.port), timeout=0.05) as slow:
            started = time.monotonic()
            slow.sendall(b"POST /mcp HTTP/1.1\r\nX-Slow: ")
            while True:  # one header byte every 50 ms: each read is quick, the whole request is not
                assert time.monotonic() - started < 3, "the slow client was never cut off"
                try:
                    slow.sendall(b"x")
                    if slow.recv(1) == b"":
                        break  # the server closed the connection
                except socket.timeout:
                    continue
                except OSError:
                    break
            assert time.monotonic() - started >= 0.4
        silent = raw_exchange(http, b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{",
                              half_close=False)
        assert silent.startswith(b"HTTP/1.1 408")
        assert client.post(client.call("add", {"a": 1, "b": 1})).status == 200


def test_connections_beyond_the_cap_get_503(fixture: Fixture) -> None:
    with serving(fixture, max_connections=2) as http:
        # Connections are accepted in order, so the third finds both slots taken.
        held = [socket.create_connection((http.host, http.port), timeout=WAIT) for _ in range(2)]
        refused = raw_exchange(http, b"", half_close=False)
        assert refused.startswith(b"HTTP/1.1 503")
        for sock in held:
            sock.close()
        client = RawClient(http)

        def served() -> bool:  # the slots come back as the server notices the closed connections
            try:
                return client.post(client.request("ping")).status == 400  # served (no session): a slot was free
            except (OSError, HTTPException):
                return False

        wait_until(served, message="no connection slot came back")


# ---- stateless mode and batches ---------------------------------------------------------------------------
def test_stateless_mode_needs_no_session(fixture: Fixture) -> None:
    with serving(fixture, stateless=True) as http:
        client = RawClient(http)
        init = client.post(client.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                                          "clientInfo": {"name": "x", "version": "1"}}))
        assert init.status == 200 and "mcp-session-id" not in init.headers
        old = client.post(client.call("add", {"a": 1, "b": 2}), {"MCP-Protocol-Version": "2025-03-26"})
        new = client.post(client.call("add", {"a": 1, "b": 2}), {"MCP-Protocol-Version": "2025-06-18"})
        default = client.post(client.call("add", {"a": 1, "b": 2}))
        assert "structuredContent" not in old.json()["result"] and "structuredContent" not in default.json()["result"]
        assert new.json()["result"]["structuredContent"] == {"result": 3}
        assert client.post({"jsonrpc": "2.0", "method": "notifications/initialized"}).status == 202
        assert client.post(client.call("add"), {"MCP-Protocol-Version": "1999-01-01"}).status == 400
        for method in ("GET", "DELETE"):
            reply = Reply(client.send(method, None, {"Accept": "text/event-stream"}))
            assert (reply.status, reply.headers["allow"]) == (405, "POST")
        streamed = client.stream(client.call("chatty", progressToken=1), {"MCP-Protocol-Version": "2025-11-25"})
        assert b"retry:" not in streamed.raw and len(streamed.messages()) == 3  # no resumption without sessions


def test_batches_are_answered_in_2025_03_26_only(http: HTTPServerThread) -> None:
    old = RawClient(http, "2025-03-26")
    old.initialize()
    reply = old.post([old.call("add", {"a": 1, "b": 1}), old.request("ping"),
                      {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}])
    assert reply.status == 200 and reply.headers["content-type"] == "application/json"
    answers = sorted(reply.json(), key=lambda m: m["id"])
    assert result_text(answers[0]) == "2" and answers[1]["result"] == {}
    assert old.post([{"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}]).status == 202
    streamed = old.stream([old.call("chatty", progressToken=1), old.call("add", {"a": 2, "b": 2})])
    assert sorted(m.get("method") or "result" for m in streamed.messages()) == [
        "notifications/message", "notifications/progress", "result", "result"]
    new = RawClient(http, "2025-06-18")
    new.initialize()
    assert new.post([new.request("ping")]).status == 400
    assert new.post([new.request("initialize")]).status == 400


# ---- the legacy HTTP+SSE transport ------------------------------------------------------------------------
def test_legacy_sse_transport(http: HTTPServerThread) -> None:
    client = RawClient(http)
    stream = EventReader(client.send("GET", None, {"Accept": "text/event-stream"}, path="/sse"))
    endpoint = stream.next()
    assert endpoint is not None and endpoint.event == "endpoint"
    assert endpoint.data.startswith("/messages?session_id=")
    conn = client.connection()

    def legacy_post(body: Any) -> Reply:
        data = body if isinstance(body, bytes) else json.dumps(body)
        conn.request("POST", endpoint.data, data, {"Content-Type": "application/json"})
        return Reply(conn.getresponse())

    reply = legacy_post(client.request("initialize", {"protocolVersion": "2024-11-05", "capabilities": {},
                                                      "clientInfo": {"name": "old", "version": "1"}}))
    assert (reply.status, reply.body) == (202, b"Accepted")
    init = json.loads(stream.next().data)  # type: ignore[union-attr]
    assert init["result"]["protocolVersion"] == "2024-11-05"
    assert legacy_post({"jsonrpc": "2.0", "method": "notifications/initialized"}).status == 202
    assert legacy_post(client.call("add", {"a": 4, "b": 5})).status == 202
    assert result_text(json.loads(stream.next().data)) == "9"  # type: ignore[union-attr]
    assert legacy_post(b"{nope").status == 400
    conn.request("POST", "/messages?session_id=unknown", "{}", {"Content-Type": "application/json"})
    assert conn.getresponse().status == 404
    conn.close()
    assert client.post(b"{}", path="/messages").status == 400


# ---- shutdown ---------------------------------------------------------------------------------------------
def test_shutdown_ends_open_streams_promptly(fixture: Fixture) -> None:
    http = HTTPServerThread(fixture.server).start()
    client = RawClient(http)
    client.initialize()
    listener = client.get()
    started = time.monotonic()
    http.shutdown()
    assert listener.rest() == []
    assert time.monotonic() - started < 3
    with pytest.raises(OSError):
        socket.create_connection((http.host, http.port), timeout=1).close()


# ---- the request head parser ----------------------------------------------------------------------------
def head_exchange(http: HTTPServerThread, chunks: List[bytes]) -> bytes:
    """Send ``chunks`` one write at a time on a fresh socket; return the status line the server answers."""
    host, port = http.url.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=WAIT) as sock:
        for chunk in chunks:
            sock.sendall(chunk)
        reader = sock.makefile("rb")
        return reader.readline().rstrip()


def ping_head(extra: bytes = b"", line_end: bytes = b"\r\n") -> bytes:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}).encode()
    lines = [b"POST /mcp HTTP/1.1", b"Host: 127.0.0.1", b"Content-Type: application/json",
             b"Accept: application/json, text/event-stream", b"Content-Length: %d" % len(body), b"Connection: close"]
    return line_end.join(lines) + line_end + extra + line_end + body


def test_the_head_parser_accepts_lf_only_line_ends(http: HTTPServerThread) -> None:
    assert head_exchange(http, [ping_head(line_end=b"\n")]).startswith(b"HTTP/1.1 200")


def test_the_head_parser_takes_a_head_that_arrives_byte_by_byte(http: HTTPServerThread) -> None:
    head = ping_head()
    assert head_exchange(http, [head[i:i + 1] for i in range(len(head))]).startswith(b"HTTP/1.1 200")


def test_the_head_parser_refuses_too_many_headers_and_too_long_lines(http: HTTPServerThread) -> None:
    many = b"".join(b"X-Filler-%d: x\r\n" % i for i in range(101))
    assert head_exchange(http, [ping_head(extra=many)]).startswith(b"HTTP/1.1 431")
    assert head_exchange(http, [ping_head(extra=b"X-Long: " + b"x" * 65536 + b"\r\n")]).startswith(b"HTTP/1.1 431")
    assert head_exchange(http, [ping_head()]).startswith(b"HTTP/1.1 200")  # and the server still serves


def test_a_request_to_a_client_whose_get_stream_is_not_open_yet_waits_for_it() -> None:
    """A client opens its GET stream after the handshake, on a thread of its own; a 2025-11-25 task that asks
    at once can be ahead of it. The question waits for the stream (up to `FIRST_LISTENER_GRACE`) rather than
    failing the task with "no open stream" (seen in CI on a loaded machine)."""
    server = Server("early-asker")
    asking = threading.Event()

    @server.tool(task="optional")
    def confirm(ctx: Context) -> str:
        asking.set()
        answer = ctx.elicit("Go?", {"type": "object", "properties": {"ok": {"type": "boolean"}}})
        return "went" if (answer.get("content") or {}).get("ok") else "stayed"

    with serving(server) as http:
        client = RawClient(http)
        client.initialize(capabilities={"elicitation": {}})
        made = client.post(client.request("tools/call", {"name": "confirm", "arguments": {}, "task": {}})).json()
        task_id = made["result"]["task"]["taskId"]
        assert asking.wait(WAIT)  # the task is asking now, before any GET stream exists
        stream = client.get()
        question = stream.next()
        assert question is not None
        request = json.loads(question.data)
        assert request["method"] == "elicitation/create"
        answer = {"jsonrpc": "2.0", "id": request["id"], "result": {"action": "accept", "content": {"ok": True}}}
        assert client.post(answer).status == 202
        final = client.post(client.request("tasks/result", {"taskId": task_id})).json()["result"]
        assert final["content"][0]["text"] == "went"
        stream.drop()


def test_a_request_to_a_client_that_closed_its_get_stream_fails_at_once() -> None:
    """The wait is for a first listener only: a client that listened and left is not waited for."""
    transport = SessionTransport(_Host(), "id")
    transport.standalone.opened = True  # a client listened once, and has gone
    started = time.monotonic()
    with pytest.raises(ConnectionClosed, match="no open stream"):
        transport.send({"jsonrpc": "2.0", "id": 1, "method": "roots/list"})
    assert time.monotonic() - started < 1.0


def test_a_closed_session_wakes_a_request_waiting_for_a_first_listener() -> None:
    transport = SessionTransport(_Host(), "id")
    failures: List[BaseException] = []

    def ask() -> None:
        try:
            transport.send({"jsonrpc": "2.0", "id": 1, "method": "roots/list"})
        except ConnectionClosed as exc:
            failures.append(exc)

    asker = threading.Thread(target=ask)
    started = time.monotonic()
    asker.start()
    wait_until(lambda: transport.standalone._first_listener is not None)  # the request is waiting
    transport.close()
    asker.join(WAIT)
    assert not asker.is_alive() and len(failures) == 1
    assert time.monotonic() - started < 3.0  # well within FIRST_LISTENER_GRACE: the close woke it


def test_a_client_that_never_listens_costs_one_grace_not_one_per_request(monkeypatch: pytest.MonkeyPatch) -> None:
    from mcplite.transports.http_server import streams

    monkeypatch.setattr(streams, "FIRST_LISTENER_GRACE", 0.2)
    transport = SessionTransport(_Host(), "id")
    started = time.monotonic()
    for request_id in (1, 2, 3):
        with pytest.raises(ConnectionClosed, match="no open stream"):
            transport.send({"jsonrpc": "2.0", "id": request_id, "method": "roots/list"})
    assert 0.2 <= time.monotonic() - started < 0.35  # the first waited out the grace; the others did not wait
