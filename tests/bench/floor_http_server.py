"""The stdlib floor's HTTP server: ``ThreadingHTTPServer`` answering floor_server.answer() on 127.0.0.1.

Connections are kept alive, with TCP_NODELAY and each response in one write. ``sse`` mode adds what the MCP
default mode costs at the least: a session id handed out on ``initialize`` and checked on every later
request, and the response framed as one SSE event.
"""

import json
import socket
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Set

from floor_server import answer


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    sse = False
    sessions: Set[str] = set()

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def do_POST(self) -> None:
        message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        headers = b""
        if self.sse:
            if message.get("method") == "initialize":
                session = uuid.uuid4().hex
                self.sessions.add(session)
                headers = b"Mcp-Session-Id: %s\r\n" % session.encode()
            elif self.headers.get("Mcp-Session-Id") not in self.sessions:
                self.send_error(404)
                return
        response = answer(message)
        if response is None:
            self.wfile.write(b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n%s\r\n" % headers)
            return
        body = json.dumps(response).encode()
        if self.sse:
            body = b"event: message\ndata: %s\n\n" % body
        kind = b"text/event-stream" if self.sse else b"application/json"
        self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %d\r\n%s\r\n%s"
                         % (kind, len(body), headers, body))

    def log_message(self, format: str, *args: Any) -> None:
        pass


def serve_http(port: int, *, sse: bool) -> None:
    """Serve until killed."""
    Handler.sse = sse
    httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    httpd.daemon_threads = True
    httpd.serve_forever()
