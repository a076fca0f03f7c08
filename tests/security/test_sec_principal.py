"""Sessions, tasks and sealed ``requestState`` belong to the principal that made them, over real HTTP servers.

The principal is who the HTTP ``authenticate`` hook says is calling (`mcplite.protocol.principal`). Covered:

- a session (Streamable HTTP: POST, GET stream, DELETE; legacy HTTP+SSE: ``/messages`` POST) named by another
  principal answers exactly as an unknown one (404, same body), and the log says why without the whole id;
- logs (access log, the server's request lines) show session ids cut short;
- claims that name nobody (token introspection's ``{"active": true}``) are refused tasks and ``requestState``
  (-32600) instead of sharing them with every such caller; ``username`` claims name someone;
- an owner-less (unauthenticated) caller and an owned one never see each other's tasks;
- the reading of ``requestState``: strict JSON, and every malformed state is `InvalidRequestState` (a seeded
  fuzzer, tests/reliability/fuzz_request_state.py);
- protections already held, kept held: a state sealed for another user, tool, arguments or server is refused,
  as is an expired or tampered one.
"""

import base64
import hashlib
import hmac
import json
import logging
import time
from http.client import HTTPConnection
from typing import Any, Dict, Iterator, List, Mapping, Optional, Tuple

import pytest
from support import WAIT
from support.http import serving
from support.raw_http import EnvelopeClient, EventReader, RawClient, Reply

from mcplite import Context, Server
from mcplite._log import redact_session_ids, session_label
from mcplite.protocol import request_state
from mcplite.protocol.request_state import InvalidRequestState, StateKeys, open_state, seal_state
from mcplite.protocol.principal import principal_of
from mcplite.server import default_principal
from mcplite.transports.http_messages import HTTPRefusal
from reliability.fuzz_request_state import run as fuzz_request_state

ISSUER = "https://as.example"
CONFIRM = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
ELICITING = {"elicitation": {}}
TASKS_2025 = "2025-11-25"


def build() -> Server:
    server = Server("principal-test", state_keys=[b"k" * 32])

    @server.tool
    def echo(text: str) -> str:
        """Say it back."""
        return text

    @server.tool(task="optional")
    def quick(n: int) -> int:
        """A task that ends at once."""
        return n

    @server.tool
    def confirm(ctx: Context, amount: int = 1) -> str:
        """Ask once (2026-07-28: an input round, with a sealed requestState)."""
        answer = ctx.elicit(f"Send {amount}?", CONFIRM, key="ok")
        return f"sent {amount}" if (answer.get("content") or {}).get("ok") else "kept"

    @server.tool
    def confirm_too(ctx: Context, amount: int = 1) -> str:
        """The same question, from another tool."""
        answer = ctx.elicit(f"Send {amount}?", CONFIRM, key="ok")
        return f"also sent {amount}" if (answer.get("content") or {}).get("ok") else "kept"

    return server


def bearer_name(headers: Mapping[str, str]) -> Optional[str]:
    value = headers.get("authorization", "")
    return value[len("Bearer "):] if value.startswith("Bearer ") else None


def by_subject(headers: Mapping[str, str]) -> Dict[str, Any]:
    """A JWT verifier's claims: an issuer and a subject."""
    name = bearer_name(headers)
    if name is None:
        raise HTTPRefusal(401, "Unauthorized")
    return {"iss": ISSUER, "sub": name, "aud": "mcp"}


def introspection(headers: Mapping[str, str]) -> Dict[str, Any]:
    """RFC 7662 introspection as some servers answer it: ``active`` and nothing else."""
    if bearer_name(headers) is None:
        raise HTTPRefusal(401, "Unauthorized")
    return {"active": True, "scope": "mcp"}


def introspection_with_username(headers: Mapping[str, str]) -> Dict[str, Any]:
    name = bearer_name(headers)
    if name is None:
        raise HTTPRefusal(401, "Unauthorized")
    return {"active": True, "username": name}


def optional_sign_in(headers: Mapping[str, str]) -> Optional[Dict[str, Any]]:
    """Anyone may call; a token says who."""
    name = bearer_name(headers)
    return None if name is None else {"iss": ISSUER, "sub": name}


def as_user(http: Any, name: Optional[str], version: str = TASKS_2025) -> RawClient:
    client = RawClient(http, version)
    if name is not None:
        client.extra["Authorization"] = f"Bearer {name}"
    return client


def envelope_as(http: Any, name: Optional[str], capabilities: Optional[Dict[str, Any]] = None) -> EnvelopeClient:
    client = EnvelopeClient(http, capabilities)
    if name is not None:
        client.extra["Authorization"] = f"Bearer {name}"
    return client


def unknown_session_reply(client: RawClient, method: str, *, session_id: str = "f" * 32) -> Reply:
    """What ``client`` is answered for a session id nobody has: the reference every foreign id must match."""
    own = client.session_id
    client.session_id = session_id
    try:
        return request(client, method)
    finally:
        client.session_id = own


def request(client: RawClient, method: str) -> Reply:
    if method == "POST":  # one id, so that two refusals that name it can be compared byte for byte
        return client.post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    if method == "GET":
        return Reply(client.send("GET", None, {"Accept": "text/event-stream"}))
    return Reply(client.send("DELETE"))


@pytest.fixture
def signed_in() -> Iterator[Any]:
    with serving(build(), authenticate=by_subject, legacy_sse=True) as http:
        yield http


# ---- 1. a session belongs to the principal that opened it -----------------------------------------------------
@pytest.mark.parametrize("method", ["POST", "GET", "DELETE"])
def test_another_principal_naming_a_session_gets_the_unknown_session_404(signed_in: Any, method: str,
                                                                        caplog: Any) -> None:
    ann, bob = as_user(signed_in, "ann"), as_user(signed_in, "bob")
    ann.initialize()
    assert ann.session_id is not None
    reference = unknown_session_reply(bob, method)
    assert reference.status == 404
    bob.session_id = ann.session_id  # a leaked id, sent with bob's own valid token
    with caplog.at_level(logging.INFO, logger="mcplite"):
        answered = request(bob, method)
    assert (answered.status, answered.body) == (reference.status, reference.body)
    assert answered.headers.get("content-type") == reference.headers.get("content-type")
    said = [record.getMessage() for record in caplog.records if "another principal" in record.getMessage()]
    assert len(said) == 1 and record_level(caplog, said[0]) >= logging.INFO
    assert ann.session_id not in said[0] and ann.session_id[:8] in said[0]
    # ann's session was neither used, ended nor taken: it answers her as before
    assert ann.post(ann.request("tools/list")).status == 200


def record_level(caplog: Any, message: str) -> int:
    return next(record.levelno for record in caplog.records if record.getMessage() == message)


def test_a_foreign_delete_leaves_the_session_alive_and_its_owner_can_end_it(signed_in: Any) -> None:
    ann, bob = as_user(signed_in, "ann"), as_user(signed_in, "bob")
    ann.initialize()
    bob.session_id = ann.session_id
    assert request(bob, "DELETE").status == 404
    assert ann.post(ann.call("echo", {"text": "still here"})).status == 200
    assert request(ann, "DELETE").status == 200
    assert request(ann, "POST").status == 404  # ended by its owner


def test_an_anonymous_session_and_a_signed_in_one_are_not_each_others() -> None:
    with serving(build(), authenticate=optional_sign_in) as http:
        anonymous, ann = as_user(http, None), as_user(http, "ann")
        anonymous.initialize()
        ann.initialize()
        anonymous.session_id, ann.session_id = ann.session_id, anonymous.session_id
        assert request(anonymous, "POST").status == 404
        assert request(ann, "POST").status == 404
        anonymous.session_id, ann.session_id = ann.session_id, anonymous.session_id
        assert request(anonymous, "POST").status == 200 and request(ann, "POST").status == 200


def test_without_authenticate_a_session_works_as_it_always_did() -> None:
    """Held before: no authenticate, no principal; the session id alone is the session (passes on old code)."""
    with serving(build()) as http:
        one = as_user(http, None)
        one.initialize()
        other = as_user(http, None)
        other.session_id = one.session_id
        assert request(other, "POST").status == 200
        assert request(other, "DELETE").status == 200


def legacy_session(http: Any, name: str) -> Tuple[EventReader, str]:
    """A legacy HTTP+SSE connection of ``name``: its stream and its messages URL."""
    client = as_user(http, name)
    stream = EventReader(client.send("GET", None, {"Accept": "text/event-stream"}, path="/sse"))
    endpoint = stream.next()
    assert endpoint is not None and endpoint.event == "endpoint"
    return stream, endpoint.data


def legacy_post(http: Any, name: str, url: str, body: Any) -> Reply:
    conn = HTTPConnection(http.host, http.port, timeout=WAIT)
    try:
        conn.request("POST", url, json.dumps(body), {"Content-Type": "application/json",
                                                     "Authorization": f"Bearer {name}"})
        return Reply(conn.getresponse())
    finally:
        conn.close()


def test_a_legacy_messages_post_of_another_principal_gets_the_unknown_session_404(signed_in: Any,
                                                                                  caplog: Any) -> None:
    stream, url = legacy_session(signed_in, "ann")
    try:
        session_id = url.split("session_id=")[1]
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        reference = legacy_post(signed_in, "bob", url.replace(session_id, "f" * 32), ping)
        assert reference.status == 404
        with caplog.at_level(logging.DEBUG, logger="mcplite"):
            foreign = legacy_post(signed_in, "bob", url, ping)
        assert (foreign.status, foreign.body) == (reference.status, reference.body)
        assert any("another principal" in record.getMessage() for record in caplog.records)
        # nothing of any log line holds the whole id (the request line of the POST included)
        assert all(session_id not in record.getMessage() for record in caplog.records)
        init = {"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {
            "protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "old", "version": "1"}}}
        assert legacy_post(signed_in, "ann", url, init).status == 202  # the owner still gets in
        answer = stream.next()
        assert answer is not None and json.loads(answer.data)["id"] == 2
    finally:
        stream.response.close()


def test_the_access_log_and_request_lines_show_session_ids_cut_short(caplog: Any) -> None:
    with serving(build(), authenticate=by_subject, legacy_sse=True, access_log=True) as http:
        ann = as_user(http, "ann")
        with caplog.at_level(logging.DEBUG):
            ann.initialize()
            assert ann.post(ann.call("echo", {"text": "hi"})).status == 200
            stream, url = legacy_session(http, "ann")
            try:
                assert legacy_post(http, "ann", url, {"jsonrpc": "2.0", "method": "ping", "id": 1}).status == 202
            finally:
                stream.response.close()
    assert ann.session_id is not None
    legacy_id = url.split("session_id=")[1]
    lines = [record.getMessage() for record in caplog.records]
    access = [record.getMessage() for record in caplog.records if record.name == "mcplite.access"]
    assert any(f"session={ann.session_id[:8]}..." in line for line in access), access
    for secret in (ann.session_id, legacy_id):
        assert not [line for line in lines if secret in line]
    assert any('"POST /messages"' in line and f"session={legacy_id[:8]}..." in line for line in access), access


def test_a_request_line_logged_by_the_http_server_shows_the_legacy_session_id_cut_short() -> None:
    line = '"POST /messages?session_id=0123456789abcdef0123456789abcdef&x=1 HTTP/1.1" 400 -'
    assert redact_session_ids(line) == '"POST /messages?session_id=01234567...&x=1 HTTP/1.1" 400 -'
    assert session_label("0123456789abcdef") == "01234567..." and session_label("abc") == "abc"
    assert session_label("\x00\n" + "a" * 20) == "??aaaaaa..."


# ---- 2. tasks and requestState need a principal -------------------------------------------------------------
def task_call(client: RawClient, n: int) -> Dict[str, Any]:
    return client.post(client.request("tools/call", {"name": "quick", "arguments": {"n": n},
                                                     "task": {"ttl": 60_000}})).json()


def tasks_of(client: RawClient) -> List[str]:
    answer = client.post(client.request("tasks/list")).json()
    return [task["taskId"] for task in answer["result"]["tasks"]]


def task_request(client: RawClient, method: str, task_id: str) -> Dict[str, Any]:
    return client.post(client.request(method, {"taskId": task_id})).json()  # type: ignore[no-any-return]


def test_claims_that_name_nobody_are_refused_tasks_rather_than_pooled() -> None:
    with serving(build(), authenticate=introspection) as http:
        ann, bob = as_user(http, "ann"), as_user(http, "bob")
        ann.initialize()
        bob.initialize()
        refused = task_call(ann, 1)
        assert refused["error"]["code"] == -32600 and "name nobody" in refused["error"]["message"]
        listed = bob.post(bob.request("tasks/list")).json()
        assert listed["error"]["code"] == -32600
        assert task_request(bob, "tasks/get", "anything")["error"]["code"] == -32600
        # what needs no owner still works for them
        assert ann.post(ann.call("echo", {"text": "hi"})).json()["result"]["content"][0]["text"] == "hi"


def test_username_claims_name_the_owner_of_a_task() -> None:
    with serving(build(), authenticate=introspection_with_username) as http:
        ann, bob = as_user(http, "ann"), as_user(http, "bob")
        ann.initialize()
        bob.initialize()
        task_id = task_call(ann, 7)["result"]["task"]["taskId"]
        assert ann.post(ann.request("tasks/result", {"taskId": task_id})).json()["result"]["content"][0][
            "text"] == "7"
        assert tasks_of(ann) == [task_id] and tasks_of(bob) == []
        for method in ("tasks/get", "tasks/result", "tasks/cancel"):
            assert task_request(bob, method, task_id)["error"]["code"] == -32602


def test_an_owner_less_caller_and_an_owner_never_see_each_others_tasks() -> None:
    with serving(build(), authenticate=optional_sign_in) as http:
        anonymous, ann = as_user(http, None), as_user(http, "ann")
        anonymous.initialize()
        ann.initialize()
        owned = task_call(ann, 1)["result"]["task"]["taskId"]
        owner_less = task_call(anonymous, 2)["result"]["task"]["taskId"]
        assert tasks_of(anonymous) == [owner_less]
        assert tasks_of(ann) == [owned]
        for method in ("tasks/get", "tasks/result", "tasks/cancel"):
            assert task_request(anonymous, method, owned)["error"]["code"] == -32602
            assert task_request(ann, method, owner_less)["error"]["code"] == -32602


def input_round(client: EnvelopeClient, tool: str = "confirm", arguments: Optional[Dict[str, Any]] = None
                ) -> Dict[str, Any]:
    body = client.enveloped("tools/call", {"name": tool, "arguments": arguments or {"amount": 5}})
    return client.post(body, client.envelope_headers(body)).json()  # type: ignore[no-any-return]


def retry(client: EnvelopeClient, state: Any, tool: str = "confirm", arguments: Optional[Dict[str, Any]] = None
          ) -> Dict[str, Any]:
    body = client.enveloped("tools/call", {"name": tool, "arguments": arguments or {"amount": 5},
                                        "inputResponses": {"ok": {"action": "accept", "content": {"ok": True}}},
                                        "requestState": state})
    return client.post(body, client.envelope_headers(body)).json()  # type: ignore[no-any-return]


def test_claims_that_name_nobody_are_refused_a_request_state_at_the_first_round() -> None:
    with serving(build(), authenticate=introspection) as http:
        answer = input_round(envelope_as(http, "ann", ELICITING))
        assert answer["error"]["code"] == -32600 and "requestState" in answer["error"]["message"]


def test_a_request_state_of_one_username_is_refused_to_another() -> None:
    with serving(build(), authenticate=introspection_with_username) as http:
        ann, bob = envelope_as(http, "ann", ELICITING), envelope_as(http, "bob", ELICITING)
        state = input_round(ann)["result"]["requestState"]
        refused = retry(bob, state)
        assert refused["error"] == {"code": -32602, "message": "Invalid or expired requestState"}
        assert retry(ann, state)["result"]["content"][0]["text"] == "sent 5"


# ---- the principal itself -----------------------------------------------------------------------------------
class Who:
    def __init__(self, principal: str) -> None:
        self.principal = principal


class Plain:
    """No principal attribute and no __repr__ of its own: its repr is its address."""


class Named:
    def __repr__(self) -> str:
        return "Named(7)"


@pytest.mark.parametrize("auth,expected", [
    ({"iss": ISSUER, "sub": "ann"}, f"{ISSUER}|ann|"),  # the string earlier versions gave, unchanged
    ({"iss": ISSUER, "sub": "ann", "client_id": "app"}, f"{ISSUER}|ann|app"),
    ({"iss": ISSUER, "sub": "ann", "azp": "app"}, f"{ISSUER}|ann|app"),
    ({"sub": 42}, "|42|"),
    ({"iss": ISSUER, "client_id": "app"}, f"{ISSUER}||app"),
    ({"active": True, "username": "ann"}, "|||ann"),
    ({"active": True, "username": "ann", "client_id": "app", "iss": ISSUER}, f"{ISSUER}||app|ann"),
    ({"active": True, "sub": "s", "username": "ann"}, "|s|"),  # sub wins: it is the stable one
    ({"sub": "a|b"}, "|a\\|b|"),
    (Who("tenant-1/ann"), "tenant-1/ann"),
    ("ann", "'ann'"),
    (7, "7"),
    (Named(), "Named(7)"),
    (None, None),
    ({"active": True}, None),
    ({"active": True, "iss": ISSUER}, None),  # one issuer is not one user
    ({"sub": None, "client_id": ""}, None),
    (True, None),
    (Plain(), None),
    (Who(""), None),
])
def test_the_principal_of_what_authenticate_returned(auth: Any, expected: Optional[str]) -> None:
    assert principal_of(auth) == expected
    assert default_principal(auth) == expected


def test_different_identities_never_give_one_principal() -> None:
    claims = [{"iss": "a|b", "sub": "c"}, {"iss": "a", "sub": "b|c"}, {"iss": "a", "sub": "b", "client_id": "c"},
              {"iss": "a", "username": "b|c"}, {"iss": "a", "client_id": "b", "username": "c"},
              {"iss": "a", "sub": "", "client_id": "b|c"}, {"iss": "a\\", "sub": "b"}, {"iss": "a", "sub": "\\b"}]
    principals = [principal_of(c) for c in claims]
    assert None not in principals and len(set(principals)) == len(principals), principals


def test_authenticate_can_name_the_principal_itself() -> None:
    def tenant_sign_in(headers: Mapping[str, str]) -> Who:
        name = bearer_name(headers)
        if name is None:
            raise HTTPRefusal(401, "Unauthorized")
        return Who(f"tenant/{name}")

    with serving(build(), authenticate=tenant_sign_in) as http:
        ann, bob = as_user(http, "ann"), as_user(http, "bob")
        ann.initialize()
        bob.initialize()
        task_id = task_call(ann, 3)["result"]["task"]["taskId"]
        assert tasks_of(ann) == [task_id] and tasks_of(bob) == []
        bob.session_id = ann.session_id
        assert request(bob, "POST").status == 404


# ---- 3. reading requestState -------------------------------------------------------------------------------
KEYS = StateKeys([b"k" * 32])
NOW = 1_800_000_000
BINDING: Dict[str, Any] = {"method": "tools/call", "target": "confirm", "arguments": {"amount": 5},
                           "audience": "principal-test"}
ENVELOPE: Dict[str, Any] = {"r": 1, "asked": {}, "answers": {}, "memo": {}}


def signed(payload: bytes) -> str:
    """A token the ring's key signed around any payload bytes (the formula of MODERN.md, computed here)."""
    def b64(raw: bytes) -> str:
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")

    k_mac = hmac.new(b"k" * 32, b"mcplite/request-state/v1", hashlib.sha256).digest()
    kid = hashlib.sha256(b"mcplite/kid" + k_mac).digest()[:4].hex()
    body = b64(payload)
    return f"v1.{body}.{b64(hmac.new(k_mac, f'v1.{kid}.{body}'.encode('ascii'), hashlib.sha256).digest())}"


def valid_payload(**changes: Any) -> Dict[str, Any]:
    token = seal_state(ENVELOPE, keys=KEYS, now=NOW, principal=None, **BINDING)
    body = token.split(".")[1]
    payload: Dict[str, Any] = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    payload.update(changes)
    return payload


def opened(token: Any, codec: Any = None) -> Dict[str, Any]:
    return open_state(token, keys=KEYS, now=NOW + 1, principal=None, codec=codec, **BINDING)


def test_the_signer_of_these_tests_is_the_servers() -> None:
    assert opened(signed(json.dumps(valid_payload()).encode())) == ENVELOPE


#: A signature of the right length and alphabet (32 bytes): what reaches the MAC check.
SIGNATURE = "A" * 43


@pytest.mark.parametrize("token", [
    f"v1.\u00e9AAA.{SIGNATURE}", f"v1.AAAA\U0001f600.{SIGNATURE}", f"v1.\ud800.{SIGNATURE}", "v1.AAAA.\u00e9",
    "\u00e9", "v1\udfff.a.b", "v\u0661.a.b",
], ids=["non-ascii body", "emoji body", "surrogate body", "non-ascii signature", "non-ascii", "surrogate version",
        "digit"])
def test_a_non_ascii_token_is_an_invalid_request_state(token: str) -> None:
    with pytest.raises(InvalidRequestState):
        opened(token)


@pytest.mark.parametrize("payload", [
    b'{"user": NaN}', b'{"user": 1e400}', b'{"user": Infinity}', b"[" * 100_000, b'{"a":' * 50_000,
    b"\xff\xfe", b"\xef\xbb\xbf{}", b'{"user": ' + b"9" * 5000 + b"}",
], ids=["NaN", "1e400", "Infinity", "deep array", "deep object", "not UTF-8", "BOM", "huge integer"])
def test_a_signed_payload_the_strict_reader_refuses_is_an_invalid_request_state(payload: bytes) -> None:
    text = payload
    if payload.startswith(b'{"user": '):  # a valid payload, whose user member is spoiled
        good = json.dumps(valid_payload()).encode()
        text = good[:-1] + b', "user": ' + payload[len(b'{"user": '):-1] + b"}"
    with pytest.raises(InvalidRequestState):
        opened(signed(text))


@pytest.mark.parametrize("changes", [{"v": True}, {"v": 1.0}, {"kid": ["x"]}, {"exp": 1e20}, {"r": True},
                                     {"asked": [1]}, {"p": 5}, {"a": None}, {"m": {"x": 1}}])
def test_claims_of_the_wrong_type_are_an_invalid_request_state(changes: Dict[str, Any]) -> None:
    with pytest.raises(InvalidRequestState):
        opened(signed(json.dumps(valid_payload(**changes)).encode()))


class Handing:
    def __init__(self, value: Any) -> None:
        self.value = value

    def seal(self, payload: bytes) -> str:
        return "x"

    def unseal(self, token: str) -> Any:
        return self.value


@pytest.mark.parametrize("value", [None, 5, ["x"], "not json", "[" * 100_000, b"\xff", "{\"user\": NaN}"],
                         ids=["None", "int", "list", "not JSON", "deep", "not UTF-8", "NaN"])
def test_whatever_a_codec_hands_back_that_is_not_a_payload_is_an_invalid_request_state(value: Any) -> None:
    with pytest.raises(InvalidRequestState):
        opened("token", codec=Handing(value))


def test_a_codec_may_hand_back_the_payload_as_text() -> None:
    assert opened("token", codec=Handing(json.dumps(valid_payload()))) == ENVELOPE


def test_the_request_state_fuzzer_finds_nothing_but_invalid_request_states() -> None:
    started = time.monotonic()
    outcomes: Dict[str, int] = {}
    for seed in (1, 2):
        fuzz_request_state(seed, 1500, on_case=lambda n, outcome: outcomes.update(
            {outcome: outcomes.get(outcome, 0) + 1}))
    assert outcomes["refused"] > 2000 and outcomes.get("opened", 0) > 0  # some mutations leave it valid
    assert time.monotonic() - started < 5


def test_a_non_ascii_request_state_over_http_is_the_frozen_refusal() -> None:
    with serving(build()) as http:
        answer = retry(envelope_as(http, None, ELICITING), f"v1.\u00e9\u00e9.{SIGNATURE}")
        assert answer["error"] == {"code": -32602, "message": "Invalid or expired requestState"}


# ---- 4. protections already held, kept held (these pass on the old code too) ------------------------------------
def test_a_request_state_sealed_for_one_subject_is_refused_to_another_over_http() -> None:
    with serving(build(), authenticate=by_subject) as http:
        ann, bob = envelope_as(http, "ann", ELICITING), envelope_as(http, "bob", ELICITING)
        state = input_round(ann)["result"]["requestState"]
        assert retry(bob, state)["error"]["code"] == -32602
        assert retry(ann, state)["result"]["content"][0]["text"] == "sent 5"


def test_a_request_state_is_refused_for_another_tool_or_other_arguments_over_http() -> None:
    with serving(build(), authenticate=by_subject) as http:
        ann = envelope_as(http, "ann", ELICITING)
        state = input_round(ann)["result"]["requestState"]
        assert retry(ann, state, tool="confirm_too")["error"]["code"] == -32602
        assert retry(ann, state, arguments={"amount": 500})["error"]["code"] == -32602


def test_a_request_state_of_another_server_is_refused_over_http() -> None:
    """Another server (another audience) with the same keys: the state is not its."""
    other = build()
    other.name = "another-server"
    with serving(build(), authenticate=by_subject) as first, serving(other, authenticate=by_subject) as second:
        state = input_round(envelope_as(first, "ann", ELICITING))["result"]["requestState"]
        assert retry(envelope_as(second, "ann", ELICITING), state)["error"]["code"] == -32602


def test_a_tampered_request_state_is_refused_over_http() -> None:
    with serving(build(), authenticate=by_subject) as http:
        ann = envelope_as(http, "ann", ELICITING)
        state = input_round(ann)["result"]["requestState"]
        version, body, signature = state.split(".")
        flipped = body[:10] + ("A" if body[10] != "A" else "B") + body[11:]
        assert retry(ann, f"{version}.{flipped}.{signature}")["error"]["code"] == -32602


def test_an_expired_request_state_is_refused() -> None:
    token = seal_state(ENVELOPE, keys=KEYS, now=NOW, ttl=60, principal="p", **BINDING)
    assert open_state(token, keys=KEYS, now=NOW + 59, principal="p", **BINDING) == ENVELOPE
    with pytest.raises(InvalidRequestState) as refused:
        open_state(token, keys=KEYS, now=NOW + 60, principal="p", **BINDING)
    assert "expired" in refused.value.reason
    assert refused.value.message == request_state.INVALID_STATE_MESSAGE


def test_an_expired_request_state_is_refused_over_http() -> None:
    """A state the server's own keys sealed for ann, for this very call, that expired a minute ago."""
    with serving(build(), authenticate=by_subject) as http:
        ann = envelope_as(http, "ann", ELICITING)
        now = time.time()
        expired = seal_state(ENVELOPE, keys=KEYS, now=now - 120, ttl=60, principal=f"{ISSUER}|ann|", **BINDING)
        fresh = seal_state(ENVELOPE, keys=KEYS, now=now, ttl=60, principal=f"{ISSUER}|ann|", **BINDING)
        assert retry(ann, expired)["error"]["code"] == -32602
        assert "result" in retry(ann, fresh)  # the same state, not expired, opens (the handler asks again)
