"""The client side of the 2024-11-05 HTTP+SSE transport, for servers that predate Streamable HTTP.

One GET stream carries everything the server says, starting with an ``endpoint`` event naming the URL
that each of our messages is POSTed to; the POSTs are answered "Accepted", and the answers come on the
stream. `HTTPClientTransport` (in `http_client`) chooses this mode with ``transport="sse"``, or falls
back to it when a server refuses Streamable HTTP.
"""

import http.client
import threading
import urllib.parse
from typing import TYPE_CHECKING, Any, List, Optional

from ...errors import ConnectionClosed, HTTPError, MCPError, RemoteProtocolError
from ...protocol.sse import Event, SSEParser
from .pool import EVENT_STREAM, JSON, Exchange, deliver_event, describe, read_sse

if TYPE_CHECKING:
    from . import HTTPClientTransport

__all__ = ["LegacySSE"]


class LegacySSE:
    """One HTTP+SSE connection: the event stream, read by its own daemon thread, and the POSTs to the
    endpoint it names. What arrives goes to ``owner`` (`deliver`, `deliver_invalid`, `lost`)."""

    def __init__(self, owner: "HTTPClientTransport") -> None:
        self._owner = owner
        self._url = owner.url
        self._conns = owner.connections
        self._headers = {**owner.headers, "Content-Type": JSON}
        self._endpoint = ""
        self._exchange: Optional[Exchange] = None
        self._closing = False

    def connect(self) -> None:
        """GET the SSE stream and wait (up to `timeout`) for its ``endpoint`` event.

        Raises:
            HTTPError: the GET failed, or the stream ended before naming an endpoint.
            RemoteProtocolError: the endpoint is on another origin.
        """
        headers = {**self._owner.headers, "Accept": EVENT_STREAM}
        exchange = self._conns.request("GET", self._url, headers, None, self._owner.timeout)
        if exchange.status != 200 or exchange.content_type != EVENT_STREAM:
            raise exchange.failure("expected the HTTP+SSE event stream")
        parser = SSEParser()
        early: List[Event] = []  # events that came with the endpoint, delivered once reading starts
        try:
            while not self._endpoint:
                chunk = exchange.read_chunk()
                if not chunk:
                    raise HTTPError(f"GET {self._url}: the event stream ended before its endpoint event",
                                    status=exchange.status)
                for event in parser.feed(chunk):
                    if event.event == "endpoint" and not self._endpoint:
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
                deliver_event(event, self._owner.deliver, self._owner.deliver_invalid)
            return self._closing

        on_chunk(early)
        reason = read_sse(exchange, parser, on_chunk, self._owner.sse_read_timeout)
        if not self._closing:
            self._owner.lost(ConnectionClosed(f"GET {self._url}: the event stream ended"
                                              + (f": {reason}" if reason else "")))

    def send(self, message: Any, body: bytes) -> None:
        if self._closing:
            raise ConnectionClosed("the HTTP+SSE connection is closed")
        exchange = self._conns.request("POST", self._endpoint, self._headers, body, self._owner.timeout)
        if not 200 <= exchange.status < 300:
            raise exchange.failure()
        exchange.read()  # "Accepted", or nothing: the answer comes on the event stream

    def close(self) -> None:
        self._closing = True
        if self._exchange is not None:
            self._exchange.interrupt()

