"""The client's result cache (2026-07-28 ``ttlMs``/``cacheScope``; mcplite/client/cache.py).

First the pure `ResultCache` and `cache_key` as tables, with a clock the tests move. Then a `Client` against
mcplite's own server serving 2026-07-28, in memory and over HTTP, counting the requests that really went out
on the client's transport: reuse within the TTL, per page, per URI, never for a retry, dropped on change
notifications, ``cache=False``, handshake revisions untouched, private results bound to the credentials.
"""

import threading
from typing import Any, Dict, Iterator, List, Optional

import pytest

from mcplite import Client, Context, Server
from mcplite.client import era
from mcplite.client.cache import MAX_ENTRIES, ResultCache, cache_key
from mcplite.transports.http_client import HTTPClientTransport
from mcplite.transports.memory import memory_pair
from tests.support.http import serving
from tests.support.peers import Recording
from tests.support.wait import WAIT, wait_until


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def hinted(ttl: Any = 60_000, scope: Any = "public", **fields: Any) -> Dict[str, Any]:
    result = {"tools": [{"name": "a"}], **fields}
    if ttl is not ...:
        result["ttlMs"] = ttl
    if scope is not ...:
        result["cacheScope"] = scope
    return result


# -- the pure pieces -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("method, params, key", [
    ("tools/list", None, ("tools/list", None)),
    ("tools/list", {"cursor": "p2"}, ("tools/list", "p2")),  # each page on its own
    ("prompts/list", {}, ("prompts/list", None)),
    ("resources/list", {"cursor": "x"}, ("resources/list", "x")),
    ("resources/templates/list", None, ("resources/templates/list", None)),
    ("resources/read", {"uri": "file:///a"}, ("resources/read", "file:///a")),
    ("server/discover", None, ("server/discover",)),
    ("resources/read", {}, None),  # no URI: nothing to key it by
    ("resources/read", {"uri": "file:///a", "requestState": "s"}, None),  # a retry
    ("resources/read", {"uri": "file:///a", "inputResponses": {}}, None),
    ("tools/list", {"_meta": {"mine": 1}}, None),  # the caller's own _meta may change the answer
    ("tools/call", {"name": "a"}, None),
    ("prompts/get", {"name": "a"}, None),
    ("completion/complete", {}, None),
    ("ping", None, None),
])
def test_what_is_keyed_and_how(method, params, key):
    assert cache_key(method, params) == key


@pytest.mark.parametrize("result, kept", [
    (hinted(60_000), True),
    (hinted(1), True),
    (hinted(0), False),  # "do not reuse", the servers' default
    (hinted(...), False),  # handshake revisions: no hints at all
    (hinted(-5), False),
    (hinted(True), False),
    (hinted(1.5), False),
    (hinted("100"), False),
    (hinted(60_000, resultType="input_required", inputRequests={}), False),
    (hinted(60_000, resultType="complete"), True),
])
def test_only_complete_results_with_a_positive_integer_ttl_are_kept(result, kept):
    cache = ResultCache(clock=Clock())
    assert cache.put(("tools/list", None), result) is kept
    assert (cache.get(("tools/list", None)) is not None) is kept


def test_an_entry_lives_for_its_ttl_and_no_longer():
    clock = Clock()
    cache = ResultCache(clock=clock)
    cache.put(("tools/list", None), hinted(2_000))
    clock.now += 1.999
    assert cache.get(("tools/list", None)) == hinted(2_000)
    clock.now += 0.001
    assert cache.get(("tools/list", None)) is None
    assert len(cache) == 0  # an expired entry is dropped when found


@pytest.mark.parametrize("scope, same_context_hit, other_context_hit", [
    ("public", True, True),
    ("private", True, False),
    (..., True, False),  # no scope said: treated as private
    ("shared", True, False),  # an unknown scope: treated as private
])
def test_private_results_are_reused_only_under_the_same_authorization(scope, same_context_hit, other_context_hit):
    cache = ResultCache(clock=Clock())
    cache.put(("resources/read", "x://a"), hinted(60_000, scope), context=("Bearer", "token-1"))
    assert (cache.get(("resources/read", "x://a"), ("Bearer", "token-2")) is not None) is other_context_hit
    if other_context_hit:
        assert cache.get(("resources/read", "x://a"), ("Bearer", "token-1")) is not None
    else:
        assert cache.get(("resources/read", "x://a"), ("Bearer", "token-1")) is None  # dropped on the mismatch
        cache.put(("resources/read", "x://a"), hinted(60_000, scope), context=("Bearer", "token-1"))
        assert (cache.get(("resources/read", "x://a"), ("Bearer", "token-1")) is not None) is same_context_hit


def test_results_are_copied_in_and_out():
    cache = ResultCache(clock=Clock())
    original = hinted(60_000)
    cache.put(("tools/list", None), original)
    original["tools"].append({"name": "edited after put"})
    first = cache.get(("tools/list", None))
    assert first is not None and first["tools"] == [{"name": "a"}]
    first["tools"].clear()
    assert cache.get(("tools/list", None))["tools"] == [{"name": "a"}]  # type: ignore[index]
    assert cache.hits == 2


def test_the_oldest_entry_goes_first_past_the_cap():
    cache = ResultCache(clock=Clock(), max_entries=3)
    for uri in ("x://1", "x://2", "x://3", "x://4"):
        cache.put(("resources/read", uri), hinted())
    assert len(cache) == 3
    assert cache.get(("resources/read", "x://1")) is None
    assert cache.get(("resources/read", "x://4")) is not None
    assert MAX_ENTRIES >= 256


def test_notifications_drop_what_they_name():
    cache = ResultCache(clock=Clock())
    for key in [("tools/list", None), ("tools/list", "p2"), ("prompts/list", None), ("resources/list", None),
                ("resources/templates/list", None), ("resources/read", "x://a"), ("resources/read", "x://b")]:
        cache.put(key, hinted())
    cache.drop_for("notifications/tools/list_changed", {})
    assert cache.get(("tools/list", None)) is None and cache.get(("tools/list", "p2")) is None
    assert cache.get(("prompts/list", None)) is not None
    cache.drop_for("notifications/resources/list_changed", None)
    assert cache.get(("resources/list", None)) is None and cache.get(("resources/templates/list", None)) is None
    cache.drop_for("notifications/resources/updated", {"uri": "x://a"})
    assert cache.get(("resources/read", "x://a")) is None and cache.get(("resources/read", "x://b")) is not None
    cache.drop_for("notifications/message", {"level": "info"})  # not a change notification: nothing happens
    assert len(cache) == 2
    cache.clear()
    assert len(cache) == 0


def test_the_cache_is_safe_under_threads():
    cache = ResultCache(clock=Clock(), max_entries=50)
    errors: List[BaseException] = []

    def churn(n: int) -> None:
        try:
            for i in range(500):
                key = ("resources/read", f"x://{n}/{i % 80}")
                cache.put(key, hinted())
                cache.get(key)
                if i % 50 == 0:
                    cache.drop_for("notifications/resources/updated", {"uri": key[1]})
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=churn, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT)
    assert not errors and len(cache) <= 50


# -- a Client against mcplite's server ------------------------------------------------------------------------

def cached_server(**options: Any) -> Server:
    server = Server("cached", **{"cache_ttl_ms": 60_000, "cache_scope": "public", **options})
    reads: Dict[str, int] = {}
    server.reads = reads  # type: ignore[attr-defined]

    @server.tool
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool
    def mul(a: int, b: int) -> int:
        return a * b

    @server.resource("file:///plain.txt")
    def plain() -> str:
        reads["plain"] = reads.get("plain", 0) + 1
        return f"plain #{reads['plain']}"

    @server.resource("file:///fresh.txt", ttl_ms=0)
    def fresh() -> str:
        return "fresh"

    @server.resource("file:///asks.txt")
    def asks(ctx: Context) -> str:
        answer = ctx.elicit("Which?", {"type": "object", "properties": {"x": {"type": "string"}}})
        return f"asked: {answer.get('content')}"

    @server.prompt
    def hello() -> str:
        return "hello"

    return server


def connect(server: Server, **options: Any) -> "tuple[Client, Recording]":
    client_end, server_end = memory_pair()
    server.connect(server_end)
    counting = Recording(client_end)
    client = Client(counting, timeout=WAIT, **options)
    client.connect()
    return client, counting


def test_lists_and_reads_are_reused_within_their_ttl():
    server = cached_server()
    client, sent = connect(server)
    with client:
        assert client.protocol_version == "2026-07-28"
        first = client.list_tools()
        assert client.list_tools() == first
        assert sent.count("tools/list") == 1
        assert client.read_resource("file:///plain.txt")["contents"][0]["text"] == "plain #1"
        assert client.read_resource("file:///plain.txt")["contents"][0]["text"] == "plain #1"
        assert server.reads == {"plain": 1} and sent.count("resources/read") == 1  # type: ignore[attr-defined]
        client.list_prompts(), client.list_prompts()
        assert sent.count("prompts/list") == 1
        # A resource with ttl_ms=0 is asked every time.
        client.read_resource("file:///fresh.txt"), client.read_resource("file:///fresh.txt")
        assert sent.count("resources/read") == 3
        client.clear_cache()
        client.list_tools()
        assert sent.count("tools/list") == 2


def test_cache_false_and_servers_at_ttl_zero_always_ask():
    for server, options in [(cached_server(), {"cache": False}), (cached_server(cache_ttl_ms=0), {})]:
        client, sent = connect(server, **options)
        with client:
            client.list_tools(), client.list_tools()
            client.read_resource("file:///plain.txt"), client.read_resource("file:///plain.txt")
            assert sent.count("tools/list") == 2 and sent.count("resources/read") == 2


def test_the_handshake_era_is_never_cached():
    client, sent = connect(cached_server(), protocol_version="2025-11-25")
    with client:
        client.list_tools(), client.list_tools()
        assert sent.count("tools/list") == 2


def test_each_page_is_cached_on_its_own():
    client, sent = connect(cached_server(page_size=1))
    with client:
        assert [tool["name"] for tool in client.list_tools()] == ["add", "mul"]
        assert sent.count("tools/list") == 2
        assert [tool["name"] for tool in client.list_tools()] == ["add", "mul"]
        assert sent.count("tools/list") == 2


def test_a_read_that_took_input_rounds_is_not_kept():
    def elicitation(params: Dict[str, Any]) -> Dict[str, Any]:
        return {"action": "accept", "content": {"x": "y"}}

    client, sent = connect(cached_server(), elicitation=elicitation)
    with client:
        assert client.read_resource("file:///asks.txt")["contents"][0]["text"] == "asked: {'x': 'y'}"
        assert sent.count("resources/read") == 2  # the first leg and its retry
        client.read_resource("file:///asks.txt")
        assert sent.count("resources/read") == 4  # asked again, rounds and all


def test_change_notifications_drop_the_entries_they_name():
    changes: List[str] = []
    updated: List[str] = []
    server = cached_server()
    client, sent = connect(server, on_list_changed=changes.append, on_resource_updated=updated.append)
    with client:
        client.list_tools()
        client.subscribe_resource("file:///plain.txt")
        client.read_resource("file:///plain.txt")

        @server.tool
        def late() -> str:
            return "late"

        wait_until(lambda: "tools" in changes)
        assert "late" in [tool["name"] for tool in client.list_tools()]
        assert sent.count("tools/list") == 2
        server.notify_resource_updated("file:///plain.txt")
        wait_until(lambda: updated == ["file:///plain.txt"])
        assert client.read_resource("file:///plain.txt")["contents"][0]["text"] == "plain #2"
        assert sent.count("resources/read") == 2


@pytest.fixture
def fresh_verdicts() -> Iterator[None]:
    """No era verdict (nor the discover results kept with them) from other tests, before or after."""
    era.forget_verdicts()
    yield
    era.forget_verdicts()


@pytest.fixture
def http_requests(monkeypatch: pytest.MonkeyPatch) -> List[str]:
    """The method of every request any HTTP client transport sends, in order."""
    sent: List[str] = []
    original = HTTPClientTransport.send

    def send(self: HTTPClientTransport, message: Any, route: Any = None) -> None:
        if isinstance(message, dict) and "id" in message and "method" in message:
            sent.append(message["method"])
        original(self, message, route)

    monkeypatch.setattr(HTTPClientTransport, "send", send)
    return sent


def test_server_info_comes_from_the_probe_and_a_second_client_reuses_a_public_discover(fresh_verdicts, http_requests):
    with serving(cached_server()) as http:
        with Client(HTTPClientTransport(http.url, timeout=WAIT), timeout=WAIT) as first:
            assert first.server_info["name"] == "cached"
        assert http_requests == ["server/discover"]
        # The era verdict is kept per server key: a URL. A Transport of the caller's has no key, so the
        # second client names the URL.
        with Client(http.url, timeout=WAIT) as second:
            assert second.server_info["name"] == "cached"
            assert second.discover_result is not None


def test_a_url_client_asks_discover_once_per_ttl_across_clients(fresh_verdicts, http_requests):
    server = cached_server()

    @server.tool
    def noop() -> str:
        return "ok"

    with serving(server) as http:
        for _ in range(3):
            with Client(http.url, timeout=WAIT) as client:
                assert client.server_info["name"] == "cached"
                assert client.call_tool("noop")["content"][0]["text"] == "ok"
    assert http_requests.count("server/discover") == 1
    assert http_requests.count("tools/call") == 3


def test_private_results_are_fetched_again_when_the_credentials_change():
    with serving(cached_server(cache_scope="private")) as http:
        transport = HTTPClientTransport(http.url, timeout=WAIT, headers={"Authorization": "Bearer one"})
        with Client(transport, timeout=WAIT) as client:
            before = client.read_resource("file:///plain.txt")["contents"][0]["text"]
            assert client.read_resource("file:///plain.txt")["contents"][0]["text"] == before
            transport.headers["Authorization"] = "Bearer two"
            assert client.read_resource("file:///plain.txt")["contents"][0]["text"] != before


def test_public_results_survive_a_change_of_credentials():
    with serving(cached_server(cache_scope="public")) as http:
        transport = HTTPClientTransport(http.url, timeout=WAIT, headers={"Authorization": "Bearer one"})
        with Client(transport, timeout=WAIT) as client:
            before = client.read_resource("file:///plain.txt")["contents"][0]["text"]
            transport.headers["Authorization"] = "Bearer two"
            assert client.read_resource("file:///plain.txt")["contents"][0]["text"] == before


def test_the_auth_context_names_the_oauth_credential():
    class FakeAuth:
        def __init__(self) -> None:
            self.token: Optional[str] = "t1"

        def auth_flow(self, request: Any) -> Any:  # never driven here
            raise AssertionError

        def credential_for(self, url: str) -> Optional[str]:
            return self.token

    auth = FakeAuth()
    transport = HTTPClientTransport("http://127.0.0.1:9/mcp", auth=auth)
    assert transport.auth_context() == (None, "t1")
    auth.token = "t2"
    assert transport.auth_context() == (None, "t2")
    plain = HTTPClientTransport("http://127.0.0.1:9/mcp", headers={"authorization": "Basic x"})
    assert plain.auth_context() == ("Basic x", None)
