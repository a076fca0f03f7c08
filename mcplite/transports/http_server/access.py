"""The HTTP access log: one line per request answered, on the ``mcplite.access`` logger (``access_log=True``).

    127.0.0.1 "POST /mcp" 200 312B 1.4ms tools/call session=5f2c1a9b...

The address (when the adapter knows it), the request's method and path, the status, the bytes of body sent, the
time from the request's arrival to the end of its response, the MCP method (its ``Mcp-Method`` header, or the
first ``"method"`` of the body) and the session id's first characters (its ``MCP-Session-Id``, or the
``session_id`` of a legacy HTTP+SSE POST; `_log.session_label`: the whole id is a credential, and stays out of
logs). A streamed response is logged when it ends, with status 200 and the bytes of every event; one the client
left is logged with the bytes sent until then. Works the same under every adapter (the built-in server, WSGI),
since it wraps the `Responder` the adapter gives `HTTPApp`.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import re
import time

from ..._log import access_log, session_label
from .adapter import IncomingRequest, Responder

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    import threading
    from typing import Callable, Optional

    from .adapter import Headers

__all__ = ["AccessRecorder", "mcp_method_of"]

# The first "method" member of a JSON-RPC body: enough for a log line, and no second parse of the body.
_METHOD = re.compile(rb'"method"\s*:\s*"([^"\\]{1,128})"')


def mcp_method_of(request: IncomingRequest) -> str:
    """The MCP method a request carries, for the log ("-" when none: a GET, a response, a bad body)."""
    header = request.headers.get("mcp-method")
    if header:
        return header
    match = _METHOD.search(request.body, 0, 4096)
    return match.group(1).decode("ascii", "replace") if match else "-"


class AccessRecorder(Responder):
    """Passes a response on to the adapter's `Responder`, counting it, and logs its line once (`finish`)."""

    def __init__(self, inner: Responder, request: IncomingRequest) -> None:
        self._inner = inner
        self._request = request
        self._started = time.monotonic()
        self._status: Optional[int] = None
        self._sent = 0
        self.can_end_early = inner.can_end_early
        self.can_park = inner.can_park
        #: The stream was handed to the adapter (`park`): its line is written when it ends, not by the app.
        self.parked = False

    def respond(self, status: int, headers: Headers, body: bytes) -> None:
        self._status = status
        self._inner.respond(status, headers, body)
        self._sent += len(body)

    def start_stream(self, headers: Headers, first: bytes) -> None:
        self._status = 200
        self._inner.start_stream(headers, first)
        self._sent += len(first)

    def write(self, data: bytes) -> None:
        self._inner.write(data)
        self._sent += len(data)

    def end_stream(self, last: bytes = b"", *, close_connection: bool = False) -> None:
        self._inner.end_stream(last, close_connection=close_connection)
        self._sent += len(last)

    def wake(self) -> None:
        self._inner.wake()

    def wait_released(self, released: threading.Event) -> bool:
        return self._inner.wait_released(released)

    def park(self, released: threading.Event, done: Callable[[bool], None]) -> bool:
        def then(client_left: bool) -> None:
            try:
                done(client_left)
            finally:
                self.finish()  # the stream has ended: its line now, with what it sent

        self.parked = self._inner.park(released, then)
        return self.parked

    def finish(self) -> None:
        """Write the line (the response is complete, or the client has gone)."""
        request = self._request
        session = request.headers.get("mcp-session-id") or _legacy_session_id(request.query)
        access_log.info('%s "%s %s" %s %dB %.1fms %s%s', request.remote or "-", request.method,
                        request.script_name + request.path, self._status if self._status is not None else "-",
                        self._sent, (time.monotonic() - self._started) * 1000, mcp_method_of(request),
                        f" session={session_label(session)}" if session else "")


def _legacy_session_id(query: str) -> Optional[str]:
    """The session a legacy HTTP+SSE POST names in its query (``/messages?session_id=...``), or None."""
    if "session_id=" not in query:
        return None
    from urllib.parse import parse_qs

    return parse_qs(query).get("session_id", [None])[0]
