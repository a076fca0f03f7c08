"""The client side of the 2024-11-05 HTTP+SSE transport, for servers that predate Streamable HTTP.

One GET stream carries everything the server says, starting with an ``endpoint`` event naming the URL
that each of our messages is POSTed to; the POSTs are answered "Accepted", and the answers come on the
stream. `HTTPClientTransport` chooses this dialect with ``transport="sse"``, or falls back to it when a server
refuses Streamable HTTP. Like every dialect, it knows the transport only as a `dialect.DialectHost`.

The revision of this transport has no protocol headers, so a message's route is not needed; nor is
`cancel`, since every answer comes on the one stream (the session drops one it no longer waits for).
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import http.client
import threading
import urllib.parse
from typing import TYPE_CHECKING, Any, List, Optional

from ...errors import ConnectionClosed, HTTPError, MCPError, RemoteProtocolError
from ...protocol.http_rules import ENDPOINT_EVENT, EVENT_STREAM, JSON
from ...protocol.sse import Event, SSEParser
from .pool import Exchange, deliver_event, describe, read_sse

if TYPE_CHECKING:
    from ...protocol.http_rules import Route
    from ...protocol.jsonrpc import RequestId
    from .dialect import DialectHost

__all__ = ["LegacySSE"]


class LegacySSE:
    """One HTTP+SSE connection: the event stream, read by its own daemon thread, and the POSTs to the
    endpoint it names. What arrives goes to ``host`` (`deliver`, `deliver_invalid`, `lost`)."""

    #: This transport has no session id (the endpoint URL plays that part).
    session_id: Optional[str] = None

    def __init__(self, host: DialectHost) -> None:
        self._host = host
        self._url = host.url
        self._conns = host.connections
        self._headers = {**host.headers, "Content-Type": JSON}
        self._endpoint = ""
        self._exchange: Optional[Exchange] = None
        self._closing = False

    def connect(self) -> None:
        """GET the SSE stream and wait (up to `timeout`) for its ``endpoint`` event.

        Raises:
            HTTPError: the GET failed, or the stream ended before naming an endpoint.
            RemoteProtocolError: the endpoint is on another origin.
        """
        headers = {**self._host.headers, "Accept": EVENT_STREAM}
        exchange = self._conns.request("GET", self._url, headers, None, self._host.send_timeout())
        if exchange.status != 200 or exchange.content_type != EVENT_STREAM:
            raise exchange.failure("expected the HTTP+SSE event stream")
        parser = SSEParser(max_event_size=self._host.max_message_size)
        early: List[Event] = []  # events that came with the endpoint, delivered once reading starts
        try:
            while not self._endpoint:
                chunk = exchange.read_chunk()
                if not chunk:
                    raise HTTPError(f"GET {self._url}: the event stream ended before its endpoint event",
                                    status=exchange.status)
                for event in parser.feed(chunk):
                    if event.event == ENDPOINT_EVENT and not self._endpoint:
                        self._endpoint = self._check_endpoint(event.data)
                    else:
                        early.append(event)
        except (OSError, ValueError, http.client.HTTPException) as exc:  # ValueError includes SSEError
            exchange.close()
            raise HTTPError(f"GET {self._url}: no endpoint event: {describe(exc)}", status=exchange.status) from exc
        except MCPError:
            exchange.close()
            raise
        self._exchange = exchange
        threading.Thread(target=self._read, args=(exchange, parser, early), name="mcplite-http-sse",
                         daemon=True).start()

    def _check_endpoint(self, data: str) -> str:
        endpoint = urllib.parse.urljoin(self._url, data.strip())
        ours, theirs = urllib.parse.urlsplit(self._url), urllib.parse.urlsplit(endpoint)
        if (ours.scheme, ours.netloc) != (theirs.scheme, theirs.netloc):
            raise RemoteProtocolError(f"the server's endpoint {endpoint!r} is not on the origin of {self._url!r}")
        return endpoint

    def _read(self, exchange: Exchange, parser: SSEParser, early: List[Event]) -> None:
        def on_chunk(events: List[Event]) -> bool:
            for event in events:
                deliver_event(event, self._host.deliver, self._host.deliver_invalid)
            return self._closing

        on_chunk(early)
        try:
            reason = read_sse(exchange, parser, on_chunk, self._host.sse_read_timeout)
        except RemoteProtocolError as exc:
            # An event too large: this one stream carries every answer and cannot be resumed in this revision,
            # so the connection ends, failing every request at once rather than leaving them to time out.
            self._host.lost(exc)
            return
        if not self._closing:
            self._host.lost(ConnectionClosed(f"GET {self._url}: the event stream ended"
                                              + (f": {reason}" if reason else "")))

    def send(self, message: Any, body: bytes, route: Route) -> None:
        if self._closing:
            raise ConnectionClosed("the HTTP+SSE connection is closed")
        exchange = self._conns.request("POST", self._endpoint, self._headers, body, self._host.send_timeout())
        if not 200 <= exchange.status < 300:
            raise exchange.failure()
        exchange.read()  # "Accepted", or nothing: the answer comes on the event stream

    def cancel(self, request_id: RequestId) -> bool:
        """Nothing to stop: the answer would come on the one stream, which goes on."""
        return False

    def close(self) -> None:
        self._closing = True
        if self._exchange is not None:
            self._exchange.interrupt()

