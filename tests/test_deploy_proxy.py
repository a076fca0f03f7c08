"""Two server processes standing for two hosts, behind nginx with ``examples/deploy/nginx-sessions.conf``.

- Revision 2026-07-28: round-robin, the requestState keys shared by configuration (``MCPLITE_STATE_KEYS``): the
  input-required rounds of one call are answered by both hosts.
- Sessions (2025-11-25, and legacy HTTP+SSE): each process names its sessions (``session_id_prefix``), nginx
  routes every request of a session to its owner: several concurrent clients call tools that elicit and
  sample, and hear a resource update on their GET stream.
"""

import queue
import re
import sys
from pathlib import Path
from typing import Any, Dict, List, Set

import pytest
from support import ROOT, WAIT, run_concurrently, wait_until
from support.servers import Running, Served, free_port, gunicorn, nginx, python_env, require_binary

from mcplite import Client

CONFIG = ROOT / "examples" / "deploy" / "nginx-sessions.conf"
KEYS = "42" * 32

#: For the tests that make many calls through real servers at once: far more than they take (a few
#: seconds), for a CI machine busy with other work (10 s was once too short for 40 calls of 3 rounds each).
BUSY_WAIT = 60.0


def accept(params: Dict[str, Any]) -> Dict[str, Any]:
    return {"action": "accept", "content": {"ok": True}}


def summarize(params: Dict[str, Any]) -> Dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "short"}, "model": "test"}


class Front:
    """nginx on a port of its own, proxying to two upstream ports as the shipped configuration does."""

    def __init__(self, tmp: Path, first: int, second: int) -> None:
        self.port = free_port()
        config = CONFIG.read_text()
        for shipped, port in (("127.0.0.1:8000", self.port), ("127.0.0.1:8001", first), ("127.0.0.1:8002", second)):
            assert shipped in config
            config = config.replace(shipped, f"127.0.0.1:{port}")
        self.nginx = nginx(tmp, config)
        self.nginx.wait_for_port(self.port)  # (stops nginx if it never listens)
        self.url = f"http://127.0.0.1:{self.port}/mcp"

    def stop(self) -> None:
        self.nginx.stop()


def test_input_rounds_cross_two_hosts_behind_nginx(tmp_path: Path, cleanup: List[Any]) -> None:
    require_binary("nginx")
    hosts: List[Served] = []
    for name in ("host-a", "host-b"):  # keys by configuration: the hosts share no memory
        hosts.append(gunicorn(tmp_path, "examples.deploy.app:app", ["-w", "2"], name=name,
                              env=python_env(MCPLITE_STATE_KEYS=KEYS, STATELESS="1")))
        cleanup.append(hosts[-1])
    front = Front(tmp_path, hosts[0].port, hosts[1].port)
    cleanup.append(front)

    def calls(_: int) -> List[Dict[str, Any]]:
        with Client(front.url, protocol_version="2026-07-28", timeout=WAIT, elicitation=accept,
                    sampling=summarize) as enveloped:
            return [enveloped.call_tool("confirm_and_summarize", {"topic": "hosts"})["structuredContent"]
                    for _ in range(10)]

    results = [result for batch in run_concurrently(calls, range(4), timeout=BUSY_WAIT) for result in batch]
    assert len(results) == 40 and all(result["summary"] == "short" for result in results)
    assert any(len({r["asked_by"], r["sampled_by"], r["answered_by"]}) > 1 for r in results)
    assert len({r["answered_by"] for r in results}) >= 2  # both hosts (nginx alternates)


def start_two_processes(tmp_path: Path, cleanup: List[Any], env: Dict[str, str]) -> Front:
    """The shipped launcher (`examples.deploy.two_processes`) on two free ports, and nginx in front."""
    ports = [free_port(), free_port()]
    launcher = Running("two_processes", [sys.executable, "-m", "examples.deploy.two_processes", "--ports",
                                         *map(str, ports)], tmp_path / "launcher.log", env=python_env(**env))
    cleanup.append(launcher)
    for port in ports:
        launcher.wait_for_port(port)
    front = Front(tmp_path, *ports)
    cleanup.append(front)
    return front


def test_sessions_are_routed_to_their_process_by_nginx(tmp_path: Path, cleanup: List[Any]) -> None:
    require_binary("nginx")
    front = start_two_processes(tmp_path, cleanup, {})

    def session(index: int) -> str:
        updates: "queue.Queue[str]" = queue.Queue()
        with Client(front.url, protocol_version="2025-11-25", timeout=WAIT, elicitation=accept, sampling=summarize,
                    on_resource_updated=updates.put) as client:
            session_id = client.transport.session_id  # type: ignore[attr-defined]
            assert re.fullmatch(r"[ab]-[0-9a-f]{32}", session_id), session_id
            owners: Set[int] = set()
            for _ in range(5):  # a sampling and an elicitation request in the middle of each call
                result = client.call_tool("confirm_and_summarize", {"topic": f"session {index}"})
                assert result["structuredContent"]["summary"] == "short"
                owners.add(client.call_tool("whoami")["structuredContent"]["result"])
            assert len(owners) == 1  # every request of the session reached the process that owns it
            uri = f"note://n{index}"
            client.subscribe_resource(uri)
            wait_until(lambda: client.transport.dialect.listening)  # type: ignore[attr-defined]  # GET stream open
            client.call_tool("write_note", {"name": f"n{index}", "text": "hello"})
            assert updates.get(timeout=WAIT) == uri  # on the session's GET stream, through nginx
        return session_id[:2]

    prefixes = run_concurrently(session, range(8), timeout=BUSY_WAIT)
    assert set(prefixes) == {"a-", "b-"}  # nginx spread the new sessions over both processes


def test_legacy_sse_sessions_are_routed_by_their_query_parameter(tmp_path: Path, cleanup: List[Any]) -> None:
    require_binary("nginx")
    front = start_two_processes(tmp_path, cleanup, {})
    url = front.url.replace("/mcp", "/sse")

    def session(index: int) -> int:
        with Client(url, protocol_version="2024-11-05", timeout=WAIT, elicitation=accept, sampling=summarize,
                    transport="sse") as client:
            owner = client.call_tool("whoami")["content"][0]["text"]  # 2024-11-05: no structuredContent
            for _ in range(3):
                assert client.call_tool("whoami")["content"][0]["text"] == owner
            return int(owner)

    assert len(set(run_concurrently(session, range(6), timeout=BUSY_WAIT))) == 2


def test_session_id_prefix_is_checked_and_used() -> None:
    from mcplite import Server
    from mcplite.http_server import HTTPServerThread
    from mcplite.transports.http_server import HTTPOptions

    for bad in ("a b", "a/", "é", "x" * 65):
        with pytest.raises(ValueError, match="session_id_prefix"):
            HTTPOptions(session_id_prefix=bad)
    with HTTPServerThread(Server("prefixed"), "127.0.0.1:0", session_id_prefix="host-1.") as http:
        with Client(http.url, protocol_version="2025-11-25", timeout=WAIT) as client:
            assert client.transport.session_id.startswith("host-1.")  # type: ignore[attr-defined]
