"""The stdlib floor's HTTP client: ``http.client`` keep-alive connections (TCP_NODELAY) to floor_http_server.py."""

import http.client
import json
import socket
from typing import Any, Callable, Dict, List, Optional, Tuple
from urllib.parse import urlsplit

import workload
from floor_client import INITIALIZE, INITIALIZED, call_message, check_response


class HTTP:
    """One keep-alive connection, with the session id the server gave (if any) on every request.

    era_client.py varies its messages (`message`, `check`, `initialize`) and headers (`headers_for`).
    """

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.path = parts.path
        self.connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port)
        self.connection.connect()
        self.connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}

    def post(self, message: Dict[str, Any]) -> Tuple[Optional[Dict[str, Any]], Optional[str]]:
        """Send one message; returns (the JSON-RPC response or None for 202, the session id header)."""
        self.connection.request("POST", self.path, json.dumps(message).encode(), self.headers_for(message))
        response = self.connection.getresponse()
        body = response.read()
        if response.status == 202:
            return None, None
        if response.status != 200:
            workload.fail(f"HTTP {response.status}: {body!r}")
        if response.getheader("Content-Type") == "text/event-stream":
            body = body.split(b"data: ", 1)[1]
        return json.loads(body), response.getheader("Mcp-Session-Id")

    def initialize(self) -> str:
        response, session = self.post(INITIALIZE)
        if response is None:
            workload.fail("initialize was not answered")
        if session:
            self.headers["Mcp-Session-Id"] = session
        self.post(INITIALIZED)
        version: str = response["result"]["protocolVersion"]
        return version

    def headers_for(self, message: Dict[str, Any]) -> Dict[str, str]:
        """The headers to POST ``message`` with."""
        return self.headers

    def message(self, i: int) -> Dict[str, Any]:
        """The request of call ``i``."""
        return call_message(i)

    def check(self, i: int, response: Dict[str, Any]) -> None:
        """Fail unless ``response`` answers call ``i`` rightly."""
        check_response(i, response)

    def call(self, i: int) -> None:
        response, _ = self.post(self.message(i))
        if response is None:
            workload.fail(f"call {i} was not answered")
        self.check(i, response)


def run_http(args: workload.Args, connection: Callable[[str], HTTP] = HTTP) -> None:
    """The ``http`` workload (see workload.py), over connections made by ``connection(url)``."""
    client = connection(args.url)
    version = client.initialize()
    sequential = workload.sequential(client.call, args.sequential)
    clients = [connection(args.url) for _ in range(args.clients)]
    for each in clients:
        each.initialize()
        each.call(workload.WARMUP_BASE)
    calls: List[Callable[[int], None]] = [each.call for each in clients]
    workload.emit(version=version, sequential=sequential, concurrent=workload.threaded(calls, args.per_client))
