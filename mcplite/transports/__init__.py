"""The contract between a transport and the session that uses it.

A transport moves whole JSON-RPC messages and knows nothing of MCP. The session hands it a `MessageSink`
once (`start`); from then on the transport calls the sink from its reader thread, in arrival order:

- ``receive(value)`` for every decoded JSON value (one message, or a list for a JSON-RPC batch);
- ``receive_invalid(exc)`` for bytes that were not JSON, so the session can answer -32700;
- ``connection_lost(exc)`` exactly once, when nothing more will arrive (EOF, peer death, `close()`), or
  instead ``input_ended(exc)`` when nothing more will arrive but the peer still reads what we send (a
  stdio server's stdin ended): the session answers what it has, then ends as for ``connection_lost``;
- ``fail_request(id, exc)`` when the transport knows one of our requests will never be answered (an HTTP
  exchange that failed), so its caller gets ``exc`` at once rather than a timeout.

`send` may be called from any thread; each transport serialises its own writes.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import abc

from ..protocol.jsonrpc import InvalidMessage, decode

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see __init__)
if TYPE_CHECKING:
    from typing import Any, Optional

    from ..protocol.jsonrpc import RequestId

__all__ = ["MessageSink", "Transport", "deliver_bytes"]


class MessageSink(abc.ABC):
    """What a transport delivers to (implemented by `session.Session`)."""

    @abc.abstractmethod
    def receive(self, value: Any) -> None:
        """One decoded JSON value from the peer."""

    @abc.abstractmethod
    def receive_invalid(self, exc: InvalidMessage) -> None:
        """Bytes from the peer that did not decode."""

    @abc.abstractmethod
    def connection_lost(self, exc: Optional[BaseException]) -> None:
        """Nothing more will arrive; ``exc`` says why when it was not an orderly close."""

    def input_ended(self, exc: Optional[BaseException]) -> None:
        """Nothing more will arrive, but the peer may still read what we send (a stdio server's stdin
        ended): answer what has arrived, then close. By default the same as `connection_lost`."""
        self.connection_lost(exc)

    def fail_request(self, request_id: RequestId, exc: BaseException) -> None:
        """Our request ``request_id`` will get no answer: its caller should get ``exc`` now."""
        raise NotImplementedError


class Transport(abc.ABC):
    """Moves JSON-RPC messages between this process and one peer."""

    @abc.abstractmethod
    def start(self, sink: MessageSink) -> None:
        """Begin delivering incoming messages to ``sink``. Called once."""

    @abc.abstractmethod
    def send(self, message: Any, *, related_request_id: Optional[RequestId] = None) -> None:
        """Send one message (or a batch list). Thread-safe.

        ``related_request_id`` names the incoming request this message belongs to (progress, logs and
        server requests made while handling it); transports with per-request streams route by it.
        Raises `ConnectionClosed` when the connection is gone.
        """

    @abc.abstractmethod
    def close(self) -> None:
        """Close the connection (idempotent). The sink then gets ``connection_lost`` if it has not yet."""


def deliver_bytes(data: bytes, sink: MessageSink) -> None:
    """Decode one framed message and hand it to ``sink`` (the common path of the stream transports)."""
    try:
        value = decode(data)
    except InvalidMessage as exc:
        sink.receive_invalid(exc)
    else:
        sink.receive(value)


