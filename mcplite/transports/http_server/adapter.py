"""The adapter seam: one HTTP request as the server core (`HTTPApp`) sees it, and how the core answers it.

The seam between the core and the HTTP servers in front of it: an adapter (the standard library's server in
`http_server`, PEP 3333 in `wsgi`) parses a request into an `IncomingRequest` and implements `Responder`.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import abc
from http import HTTPStatus
from typing import TYPE_CHECKING, Callable, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from ...errors import INVALID_REQUEST
from ...protocol import jsonrpc

if TYPE_CHECKING:
    import threading

    from ...protocol.jsonrpc import RequestId

__all__ = ["Headers", "IncomingRequest", "RouteHandler", "Responder", "reason_phrase"]

Headers = List[Tuple[str, str]]

JSON_HEADERS: Headers = [("Content-Type", "application/json")]
_REASONS = {status.value: status.phrase for status in HTTPStatus}


def reason_phrase(status: int) -> str:
    """The standard reason phrase of an HTTP status ("" for an unknown one)."""
    return _REASONS.get(status, "")


class IncomingRequest(NamedTuple):
    """One HTTP request, as an adapter hands it to `HTTPApp.handle`."""

    method: str
    #: The path below the application's mount point, without the query string.
    path: str
    query: str
    #: Header names in lower case; repeated headers joined with ", ".
    headers: Mapping[str, str]
    body: bytes
    #: Where the application is mounted (WSGI ``SCRIPT_NAME``); prefixes the URLs it hands out.
    script_name: str = ""
    #: The client's address as the adapter knows it (for the access log; "" when unknown).
    remote: str = ""


#: Answers a GET on one of `HTTPApp`'s extra ``routes``: ``(status, headers, body)``.
RouteHandler = Callable[[IncomingRequest], Tuple[int, Headers, bytes]]


class Responder(abc.ABC):
    """How `HTTPApp` answers one request: implemented by each HTTP server adapter.

    A response is either complete (`respond`) or streamed (`start_stream`, `write`..., `end_stream`).
    Stream methods may be called from any thread, never two at once; they raise `OSError` once the client
    has gone. Adapters add the framing headers (Content-Length, Transfer-Encoding, Connection) themselves.
    """

    #: False where a response cannot end before the application returns (WSGI).
    can_end_early = True
    #: Whether `park` takes streams (the stdlib server): a listen's thread then does not wait for its end.
    can_park = False

    @abc.abstractmethod
    def respond(self, status: int, headers: Headers, body: bytes) -> None:
        """Send a complete response."""

    @abc.abstractmethod
    def start_stream(self, headers: Headers, first: bytes) -> None:
        """Send ``200 OK`` with ``headers`` and the first bytes of a body that goes on."""

    @abc.abstractmethod
    def write(self, data: bytes) -> None:
        """Send more of the streamed body, at once."""

    @abc.abstractmethod
    def end_stream(self, last: bytes = b"", *, close_connection: bool = False) -> None:
        """Send ``last`` and end the streamed body (and the connection too, if asked and possible)."""

    def wait_released(self, released: threading.Event) -> bool:
        """Block the thread of a long-lived stream (a GET's) until ``released`` is set: True. An adapter that
        can see its client leave while nothing is being written returns False then, at once, so that the
        stream is let go without waiting for a keep-alive write to fail. This one cannot: it only waits."""
        released.wait()
        return True

    def wake(self) -> None:
        """``released`` was just set: make a `wait_released` in progress see it, or a parked stream (`park`)."""

    def park(self, released: threading.Event, done: Callable[[bool], None]) -> bool:
        """Hand the rest of a long-lived stream to the adapter, so that no thread waits for it: True if it took it.

        The caller then returns at once, without ending the response: from now on `write` and `end_stream`
        only queue their bytes, which the adapter sends as the client reads them. Once ``released`` is set (and
        `wake` called) or the client is seen to leave, the adapter calls ``done(client_left)`` once, on a thread
        of its own, for the caller's cleanup (what it would have done after `wait_released`). False (this one)
        where the adapter cannot: the caller waits with `wait_released`.
        """
        return False


def error_body(message: str, code: int = INVALID_REQUEST, id: Optional[RequestId] = None) -> bytes:
    """The body of every error answer: a JSON-RPC error response, encoded."""
    return jsonrpc.encode_bytes(jsonrpc.error(id, code, message))


class Reject(Exception):
    """An error answer: raised by the checks, sent by `HTTPApp.handle` with a JSON-RPC error body."""

    def __init__(self, status: int, message: str, code: int = INVALID_REQUEST, *,
                 headers: Sequence[Tuple[str, str]] = (), id: Optional[RequestId] = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.id = id
        self.headers = list(headers)
        self.body = error_body(message, code, id)

    def answering(self, id: Optional[RequestId]) -> "Reject":
        """The same refusal, addressed to request ``id`` (when it has no id yet)."""
        if self.id is not None or id is None:
            return self
        return Reject(self.status, str(self), self.code, headers=self.headers, id=id)
