"""The client's choice of protocol era: the probe, its fallbacks, pins, and verdicts kept (client/era.py).

In memory against mcplite's own Server (both eras, one era), and over stdio against `support/era_server.py`,
which misbehaves on the probe in each of the ways the spec and the peers' trackers describe.
"""

import queue
import sys
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

from mcplite import Client, Server
from mcplite.client import era
from mcplite.errors import ConnectionClosed, VersionMismatch
from mcplite.protocol.versions import ENVELOPE_VERSIONS, HANDSHAKE_VERSIONS
from mcplite.transports.memory import memory_pair

from support import WAIT, RawPeer

ERA_SERVER = str(Path(__file__).parent / "support" / "era_server.py")
ENVELOPE_VERSION = "2026-07-28"


@pytest.fixture(autouse=True)
def fresh_verdicts() -> Iterator[None]:
    era.forget_verdicts()
    yield
    era.forget_verdicts()


def make_server(**options: Any) -> Server:
    server = Server("era-test", version="2.0", instructions="Hello.", **options)

    @server.tool
    def add(a: int, b: int) -> int:
        return a + b

    return server


def sent(log: Path) -> List[str]:
    return [line for line in log.read_text().split() if line != "respawned"]


def stdio(behaviour: str, log: Path, **options: Any) -> Client:
    return Client.stdio([sys.executable, ERA_SERVER, behaviour, str(log)], timeout=WAIT,
                        protocol_version=options.pop("protocol_version", "auto"), **options)


# ---- in memory, against mcplite's Server --------------------------------------------------------------------

def test_auto_speaks_2026_07_28_with_a_server_that_does() -> None:
    with Client(make_server(), timeout=WAIT, protocol_version="auto") as client:
        assert client.protocol_version == ENVELOPE_VERSION
        assert client.discover_result is not None and client.discover_result["supportedVersions"] == [ENVELOPE_VERSION]
        assert client.server_info == {"name": "era-test", "version": "2.0"}
        assert client.instructions == "Hello."
        assert "tools" in client.server_capabilities
        assert client.call_tool("add", {"a": 2, "b": 3})["structuredContent"] == {"result": 5}
        assert [tool["name"] for tool in client.list_tools()] == ["add"]
        client.ping()  # server/discover: 2026-07-28 has no ping
        client.set_logging_level("debug")  # stamped on later requests, nothing sent now
        assert client.session.log_level == "debug"
        assert client.call_tool("add", {"a": 1, "b": 1})["structuredContent"] == {"result": 2}


def test_auto_falls_back_to_the_handshake_with_a_legacy_only_server() -> None:
    server = make_server(supported_versions=HANDSHAKE_VERSIONS)
    with Client(server, timeout=WAIT, protocol_version="auto") as client:
        assert client.protocol_version == "2025-11-25"
        assert client.discover_result is None
        assert client.call_tool("add", {"a": 2, "b": 3})["structuredContent"] == {"result": 5}


def test_a_pin_sends_nothing_at_connect_and_learns_the_server_on_first_need() -> None:
    ours, theirs = memory_pair()
    peer = RawPeer(ours)
    client = Client(theirs, timeout=WAIT, protocol_version=ENVELOPE_VERSION).connect()
    try:
        assert client.protocol_version == ENVELOPE_VERSION
        with pytest.raises(queue.Empty):  # no probe, no handshake
            peer.next(timeout=0.2)
    finally:
        client.close()
    with Client(make_server(), timeout=WAIT, protocol_version=ENVELOPE_VERSION) as client:
        assert client.discover_result is None
        assert client.server_info == {"name": "era-test", "version": "2.0"}  # asked now
        assert client.discover_result is not None


def test_a_handshake_version_still_offers_the_handshake() -> None:
    with Client(make_server(), timeout=WAIT, protocol_version="2025-06-18") as client:
        assert client.protocol_version == "2025-06-18"


def test_an_unknown_protocol_version_is_refused_at_construction() -> None:
    with pytest.raises(ValueError, match="protocol_version"):
        Client(make_server(), protocol_version="2030-01-01")


def test_a_envelope_request_refused_with_32022_is_sent_again_at_a_version_named() -> None:
    # What the conformance scenario request-metadata does: the first request is refused whatever it says.
    ours, theirs = memory_pair()
    peer = RawPeer(ours)
    client = Client(theirs, timeout=WAIT, protocol_version=ENVELOPE_VERSION).connect()
    try:
        from support import Background

        listing = Background(client.list_tools)
        first = peer.next()
        assert first["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == ENVELOPE_VERSION
        peer.send({"jsonrpc": "2.0", "id": first["id"], "error": {
            "code": -32022, "message": "Unsupported protocol version", "data": {"supported": [ENVELOPE_VERSION]}}})
        retry = peer.next()
        assert retry["method"] == "tools/list" and retry["id"] != first["id"]
        peer.send({"jsonrpc": "2.0", "id": retry["id"], "result": {"tools": [], "resultType": "complete"}})
        assert listing.join() == []
    finally:
        client.close()


# ---- over stdio, against servers that misbehave on the probe ------------------------------------------------

@pytest.mark.parametrize("behaviour", ["legacy", "old-only"])
def test_a_legacy_server_gets_the_handshake_after_one_probe(tmp_path: Path, behaviour: str) -> None:
    log = tmp_path / "log"
    with stdio(behaviour, log) as client:
        assert client.protocol_version == "2025-11-25"
        assert client.list_tools()[0]["name"] == "echo"
    assert sent(log) == ["server/discover", "initialize", "tools/list"]


def test_a_silent_server_is_legacy_after_the_probe_timeout(tmp_path: Path) -> None:
    log = tmp_path / "log"
    with stdio("silent", log, probe_timeout=0.3) as client:
        assert client.protocol_version == "2025-11-25"
    assert sent(log) == ["server/discover", "initialize"]


def test_a_server_that_dies_on_the_probe_is_not_started_again_and_gets_the_handshake_next_time(tmp_path: Path) -> None:
    log = tmp_path / "log"
    with pytest.raises(ConnectionClosed, match="exited with code 3.*gets the handshake at the next connect"):
        stdio("exits", log).connect()
    assert log.read_text().split() == ["server/discover", "respawned"]  # one process (its "respawned" mark)
    with stdio("exits", log) as client:  # the verdict kept: no probe
        assert client.protocol_version == "2025-11-25"
        assert client.list_tools()[0]["name"] == "echo"
    assert log.read_text().split() == ["server/discover", "respawned", "initialize", "tools/list"]


def test_a_32022_naming_our_version_is_probed_once_more(tmp_path: Path) -> None:
    log = tmp_path / "log"
    with stdio("refuse-once", log) as client:
        assert client.protocol_version == ENVELOPE_VERSION
        assert client.server_info == {"name": "era-server", "version": "1"}
    assert sent(log) == ["server/discover", "server/discover"]


def test_a_32022_naming_only_unknown_versions_is_a_version_mismatch(tmp_path: Path) -> None:
    with pytest.raises(VersionMismatch, match="2099-01-01"):
        stdio("unknown", tmp_path / "log").connect()


def test_a_server_pinned_envelope_by_a_slow_probe_is_probed_again(tmp_path: Path) -> None:
    log = tmp_path / "log"
    with stdio("pinned", log, probe_timeout=0.3) as client:
        assert client.protocol_version == ENVELOPE_VERSION
        assert client.list_tools()[0]["name"] == "echo"
    assert sent(log) == ["server/discover", "initialize", "server/discover", "tools/list"]


def test_verdicts_are_kept_per_server_for_the_process(tmp_path: Path) -> None:
    log = tmp_path / "log"
    with stdio("legacy", log) as client:
        assert client.protocol_version == "2025-11-25"
    with stdio("legacy", log) as client:  # the same command: no second probe
        assert client.protocol_version == "2025-11-25"
    assert sent(log) == ["server/discover", "initialize", "initialize"]
    envelope_log = tmp_path / "envelope"
    for _ in range(2):
        with stdio("envelope", envelope_log) as client:
            assert client.protocol_version == ENVELOPE_VERSION
    assert sent(envelope_log) == ["server/discover"]  # the second connection adopts 2026-07-28 at once


def test_every_request_of_a_envelope_session_carries_the_envelope() -> None:
    ours, theirs = memory_pair()
    peer = RawPeer(ours)
    client = Client(theirs, timeout=WAIT, protocol_version=ENVELOPE_VERSION, client_info={"name": "me", "version": "9"},
                    elicitation=lambda params: {"action": "decline"}).connect()
    try:
        from support import Background

        client.set_logging_level("info")
        call = Background(lambda: client.request("tools/list", {"_meta": {"custom": 1}}))
        message: Dict[str, Any] = peer.next()
        assert message["params"]["_meta"] == {
            "io.modelcontextprotocol/protocolVersion": ENVELOPE_VERSION,
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
            "io.modelcontextprotocol/clientInfo": {"name": "me", "version": "9"},
            "io.modelcontextprotocol/logLevel": "info", "custom": 1}
        peer.send({"jsonrpc": "2.0", "id": message["id"], "result": {"tools": []}})
        assert call.join() == {"tools": []}
    finally:
        client.close()


def test_envelope_versions_are_listed() -> None:
    assert ENVELOPE_VERSION in ENVELOPE_VERSIONS


def test_a_server_replaced_by_one_of_the_other_era_is_probed_again() -> None:
    """A URL remembered to speak 2026-07-28, now served by a handshake-only server (it was redeployed; a test's
    port reused): the adopted session's first request is refused with -32022 naming only handshake revisions,
    and that forgets the verdict, so the next connection probes and speaks the handshake (before, every later
    connection adopted 2026-07-28 again and failed: a gateway's upstream never came back)."""
    from mcplite.errors import RemoteError
    from mcplite.http_server import HTTPServerThread
    from mcplite.protocol.versions import HANDSHAKE_VERSIONS as handshake

    with HTTPServerThread(make_server(), "127.0.0.1:0") as first:
        url, port = first.url, first.port
        with Client(url, timeout=WAIT) as client:
            assert client.protocol_version == ENVELOPE_VERSION
    with HTTPServerThread(make_server(supported_versions=handshake), f"127.0.0.1:{port}") as second:
        assert second.url == url
        with Client(url, timeout=WAIT) as client:  # adopted from memory: nothing asked yet
            with pytest.raises(RemoteError) as refused:
                client.list_tools()
            assert refused.value.code == -32022
        with Client(url, timeout=WAIT) as client:
            assert client.protocol_version == "2025-11-25"
            assert client.call_tool("add", {"a": 1, "b": 2})["structuredContent"] == {"result": 3}
