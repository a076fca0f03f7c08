"""A raw Streamable HTTP client for tests of the HTTP server adapters: every request and header by hand.

`RawClient` talks to anything with ``host`` and ``port`` (an `HTTPServerThread`, a WSGI server, gunicorn).
"""

import json
import socket
import time
from collections import deque
from http.client import HTTPConnection, HTTPResponse
from typing import Any, Deque, Dict, List, Optional

from mcplite.protocol.sse import Event, SSEParser

from .wait import WAIT

JSON_AND_SSE = "application/json, text/event-stream"


def exchange_until_closed(server: Any, data: bytes, half_close: bool = False) -> bytes:
    """Send ``data`` on a fresh connection to ``server`` (``host``, ``port``) and read until the server closes
    it, which must happen within WAIT.

    Without ``half_close`` the client keeps its sending side open, so the close is the server's own decision.
    """
    deadline = time.monotonic() + WAIT
    with socket.create_connection((server.host, server.port), timeout=WAIT) as sock:
        sock.sendall(data)
        if half_close:
            sock.shutdown(socket.SHUT_WR)
        received = bytearray()
        while True:
            sock.settimeout(max(deadline - time.monotonic(), 0.01))
            try:
                chunk = sock.recv(65536)
            except socket.timeout:
                raise AssertionError(f"the server kept the connection open; it sent {bytes(received)[:200]!r}")
            if not chunk:
                return bytes(received)
            received += chunk


class Reply:
    """A complete response: status, headers (lower-case names) and body."""

    def __init__(self, response: HTTPResponse) -> None:
        self.status = response.status
        self.headers = {name.lower(): value for name, value in response.getheaders()}
        self.body = response.read()

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def events(self) -> List[Event]:
        parser = SSEParser()
        return parser.feed(self.body) + parser.close()


class EventReader:
    """Reads an SSE response as it arrives."""

    def __init__(self, response: HTTPResponse) -> None:
        self.response = response
        self.status = response.status
        self.headers = {name.lower(): value for name, value in response.getheaders()}
        self.parser = SSEParser()
        self.raw = bytearray()
        self._pending: Deque[Event] = deque()

    def next(self) -> Optional[Event]:
        """The next event, or None once the stream has ended."""
        while not self._pending:
            chunk = self.response.read1(65536)
            if not chunk:
                return None
            self.raw += chunk
            self._pending.extend(self.parser.feed(chunk))
        return self._pending.popleft()

    def rest(self) -> List[Event]:
        events = []
        while True:
            event = self.next()
            if event is None:
                return events
            events.append(event)

    def messages(self) -> List[Any]:
        return [json.loads(event.data) for event in self.rest()]

    def read_raw_until(self, marker: bytes) -> None:
        """Read (for at most WAIT seconds) until ``marker`` has arrived."""
        deadline = time.monotonic() + WAIT
        while marker not in self.raw:
            assert time.monotonic() < deadline, bytes(self.raw)
            chunk = self.response.read1(65536)
            assert chunk, "the stream ended"
            self.raw += chunk

    def drop(self) -> None:
        """Close the connection, as a client whose network failed."""
        self.response.connection.close()  # type: ignore[attr-defined]


class RawClient:
    """One MCP client speaking Streamable HTTP by hand."""

    def __init__(self, http: Any, version: str = "2025-11-25") -> None:
        self.http = http
        self.version = version
        self.session_id: Optional[str] = None
        self.extra: Dict[str, str] = {}  # sent with every request (credentials)
        self._ids = iter(range(1, 10**6))

    def connection(self) -> HTTPConnection:
        return HTTPConnection(self.http.host, self.http.port, timeout=WAIT)

    def headers(self, extra: Optional[Dict[str, str]] = None) -> Dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": JSON_AND_SSE, **self.extra}
        if self.session_id is not None:
            headers["MCP-Session-Id"] = self.session_id
            headers["MCP-Protocol-Version"] = self.version
        headers.update(extra or {})
        return headers

    def send(self, method: str, body: Any = None, headers: Optional[Dict[str, str]] = None,
             path: str = "/mcp", conn: Optional[HTTPConnection] = None) -> HTTPResponse:
        conn = conn or self.connection()
        data = body if isinstance(body, (bytes, str)) or body is None else json.dumps(body)
        conn.request(method, path, data, self.headers(headers))
        response = conn.getresponse()
        response.connection = conn  # type: ignore[attr-defined]  # so that a test can drop it
        return response

    def post(self, body: Any, headers: Optional[Dict[str, str]] = None, **kwargs: Any) -> Reply:
        return Reply(self.send("POST", body, headers, **kwargs))

    def stream(self, body: Any, headers: Optional[Dict[str, str]] = None) -> EventReader:
        return EventReader(self.send("POST", body, headers))

    def get(self, headers: Optional[Dict[str, str]] = None) -> EventReader:
        return EventReader(self.send("GET", None, {"Accept": "text/event-stream", **(headers or {})}))

    def request(self, method: str, params: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        return {"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": params or {}}

    def call(self, tool: str, arguments: Optional[Dict[str, Any]] = None, **meta: Any) -> Dict[str, Any]:
        params: Dict[str, Any] = {"name": tool, "arguments": arguments or {}}
        if meta:
            params["_meta"] = meta
        return self.request("tools/call", params)

    def initialize(self, capabilities: Optional[Dict[str, Any]] = None, name: str = "raw") -> Reply:
        reply = self.post(self.request("initialize", {"protocolVersion": self.version, "clientInfo": {
            "name": name, "version": "1"}, "capabilities": capabilities or {}}))
        assert reply.status == 200, reply.body
        self.session_id = reply.headers["mcp-session-id"]
        assert self.post({"jsonrpc": "2.0", "method": "notifications/initialized"}).status == 202
        return reply


#: The protocol revision of the envelope era, and what its requests' ``_meta`` carries by default.
ENVELOPE_VERSION = "2026-07-28"


def envelope(capabilities: Optional[Dict[str, Any]] = None, **extra: Any) -> Dict[str, Any]:
    """A 2026-07-28 request's ``_meta``: the version, the client capabilities (none by default), ``extra`` keys
    (``logLevel="info"`` becomes ``io.modelcontextprotocol/logLevel``; ``progressToken`` stays as it is)."""
    meta: Dict[str, Any] = {"io.modelcontextprotocol/protocolVersion": ENVELOPE_VERSION,
                            "io.modelcontextprotocol/clientCapabilities": capabilities or {},
                            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"}}
    for key, value in extra.items():
        meta[key if key == "progressToken" else f"io.modelcontextprotocol/{key}"] = value
    return meta


class EnvelopeClient(RawClient):
    """A 2026-07-28 client by hand: no session; every request enveloped, with the standard headers."""

    def __init__(self, http: Any, capabilities: Optional[Dict[str, Any]] = None) -> None:
        super().__init__(http, ENVELOPE_VERSION)
        self.capabilities = capabilities or {}

    def enveloped(self, method: str, params: Optional[Dict[str, Any]] = None, **meta: Any) -> Dict[str, Any]:
        """An enveloped request (``meta`` as for `envelope`; ``capabilities=`` overrides the client's)."""
        capabilities = meta.pop("capabilities", self.capabilities)
        return self.request(method, {**(params or {}), "_meta": envelope(capabilities, **meta)})

    def envelope_headers(self, body: Dict[str, Any]) -> Dict[str, str]:
        """The headers a conforming client sends with ``body``: version, Mcp-Method and (where named) Mcp-Name."""
        headers = {"MCP-Protocol-Version": ENVELOPE_VERSION, "Mcp-Method": body["method"]}
        params = body.get("params") or {}
        if body["method"] in ("tools/call", "prompts/get"):
            headers["Mcp-Name"] = params.get("name", "")
        elif body["method"] == "resources/read":
            headers["Mcp-Name"] = params.get("uri", "")
        elif body["method"] in ("tasks/get", "tasks/update", "tasks/cancel"):  # the tasks extension's
            headers["Mcp-Name"] = params.get("taskId", "")
        return headers

    def post(self, body: Any, headers: Optional[Dict[str, str]] = None, **kwargs: Any) -> Reply:
        if isinstance(body, dict) and "method" in body:
            headers = {**self.envelope_headers(body), **(headers or {})}
        return super().post(body, headers, **kwargs)

    def stream(self, body: Any, headers: Optional[Dict[str, str]] = None) -> EventReader:
        if isinstance(body, dict) and "method" in body:
            headers = {**self.envelope_headers(body), **(headers or {})}
        return super().stream(body, headers)
