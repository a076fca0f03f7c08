"""Server-Sent Events: an incremental parser and an encoder, with no I/O.

The parser follows the WHATWG HTML "server-sent events" interpretation rules
(https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation) with one
deliberate difference, explained in `SSEParser`: an event whose data is empty is not returned.

Both directions work on bytes. The HTTP transports feed whatever the socket delivered to `SSEParser.feed`
and write what `encode_event` / `encode_comment` return.
"""

import re
from typing import List, NamedTuple, Optional

from ..errors import RemoteProtocolError

__all__ = ["SSEError", "Event", "SSEParser", "encode_event", "encode_comment"]

_BOM = b"\xef\xbb\xbf"
_LINE_END = re.compile(r"\r\n|\r|\n")
_DEFAULT_MAX_EVENT_SIZE = 16 * 1024 * 1024


class SSEError(RemoteProtocolError, ValueError):
    """The event stream broke a limit of this parser (an oversized line or event)."""


class Event(NamedTuple):
    """One dispatched server-sent event.

    ``id`` is the last event id in force when the event was dispatched ("" when none was ever set), so
    an event without an ``id`` field carries the id of an earlier one. ``retry`` is the reconnection
    time (ms) set inside this event's own block, if any.
    """

    data: str
    event: str = "message"
    id: Optional[str] = None
    retry: Optional[int] = None


class SSEParser:
    """Turns an event stream, fed in arbitrary byte chunks, into `Event` objects.

    Attributes:
        last_event_id: the id to send as ``Last-Event-ID`` when reconnecting. As in WHATWG it only
            changes when an event block ends (blank line), so an id inside a block cut off by the end of
            the stream is not taken: resuming after an event we never saw would lose it.
        retry: the latest valid ``retry`` value in milliseconds, or None.
        comments: how many comment lines (keep-alives) were seen.

    Difference from WHATWG: a block whose data is empty (``data:`` alone, or no ``data`` field) returns
    no event. WHATWG would dispatch a MessageEvent with empty data for ``data:``; MCP messages are never
    empty, and MCP's "priming event" (``id: x`` + ``data:``) exists only to set the last event id, which
    this parser records all the same.
    """

    def __init__(self, *, max_event_size: int = _DEFAULT_MAX_EVENT_SIZE) -> None:
        """Args:
        max_event_size: the longest unterminated line (bytes) and the largest event data
            (characters) that the parser buffers; anything longer raises `SSEError`.
        """
        self.max_event_size = max_event_size
        self.last_event_id = ""
        self.retry: Optional[int] = None
        self.comments = 0
        self._at_stream_start = True
        self._partial_line = bytearray()  # bytes after the last line end seen; never holds a line end
        self._skip_leading_lf = False  # the previous chunk ended with CR: a LF now completes a CRLF
        self._data_lines: List[str] = []
        self._data_size = 0
        self._event_type = ""
        self._id_buffer = ""
        self._block_retry: Optional[int] = None

    def feed(self, chunk: bytes) -> List[Event]:
        """Consume the next bytes of the stream.

        Args:
            chunk: any slice of the stream; it may split a line, a CRLF or a UTF-8 character.

        Returns:
            The events completed by this chunk, in order.

        Raises:
            SSEError: a line or an event's data exceeds ``max_event_size``.
        """
        if self._at_stream_start:
            chunk = self._strip_bom(chunk)
        if self._skip_leading_lf and chunk:
            self._skip_leading_lf = False
            if chunk[:1] == b"\n":
                chunk = chunk[1:]
        if not chunk:
            return []
        # Only the new chunk is searched for line ends: the buffered partial line has none, so a long
        # line arriving in many small chunks costs linear, not quadratic, time.
        last_cr = chunk.rfind(b"\r")
        last_end = max(last_cr, chunk.rfind(b"\n"))
        if last_end < 0:
            self._partial_line += chunk
            self._check_size(len(self._partial_line))
            return []
        complete = bytes(self._partial_line) + chunk[: last_end + 1]
        self._partial_line = bytearray(chunk[last_end + 1 :])
        self._check_size(len(self._partial_line))
        # A CR ends its line at once; remember to drop the LF of a CRLF that the next chunk may start with.
        self._skip_leading_lf = last_cr == last_end == len(chunk) - 1
        # Decoding whole lines never splits a UTF-8 sequence: line ends are ASCII bytes.
        text = complete.decode("utf-8", "replace")
        lines = text.split("\n") if "\r" not in text else _LINE_END.split(text)
        lines.pop()  # `complete` ends with a line end, so the last piece is always ""
        events: List[Event] = []
        for line in lines:
            self._process_line(line, events)
        return events

    def close(self) -> List[Event]:
        """Signal the end of the stream.

        Returns:
            Always ``[]``: per WHATWG an event not terminated by a blank line is discarded. Callers
            still call it so that the discarding is explicit.
        """
        self._partial_line = bytearray()
        self._skip_leading_lf = False
        self._reset_block()
        return []

    def _strip_bom(self, chunk: bytes) -> bytes:
        """Drop a UTF-8 byte order mark at the very start of the stream, even when split across chunks."""
        pending = bytes(self._partial_line) + chunk
        if len(pending) < len(_BOM) and _BOM.startswith(pending):
            self._partial_line = bytearray(pending)  # not enough bytes yet to tell
            return b""
        self._at_stream_start = False
        self._partial_line = bytearray()
        return pending[len(_BOM) :] if pending.startswith(_BOM) else pending

    def _process_line(self, line: str, events: List[Event]) -> None:
        if not line:
            self._dispatch(events)
            return
        if line[0] == ":":
            self.comments += 1
            return
        name, colon, value = line.partition(":")
        if colon and value[:1] == " ":
            value = value[1:]
        if name == "data":
            self._data_lines.append(value)
            self._data_size += len(value) + 1
            self._check_size(self._data_size)
        elif name == "event":
            self._event_type = value
        elif name == "id":
            if "\0" not in value:
                self._id_buffer = value
        elif name == "retry":
            if value.isascii() and value.isdigit():
                self.retry = self._block_retry = int(value)
        # Any other field name is ignored, as WHATWG requires.

    def _dispatch(self, events: List[Event]) -> None:
        self.last_event_id = self._id_buffer
        data = "\n".join(self._data_lines)  # each line + "\n", without the final "\n"
        if data:
            events.append(Event(data, self._event_type or "message", self.last_event_id, self._block_retry))
        self._reset_block()

    def _reset_block(self) -> None:
        # The id buffer is deliberately kept: the last event id persists across events.
        self._data_lines = []
        self._data_size = 0
        self._event_type = ""
        self._block_retry = None

    def _check_size(self, size: int) -> None:
        if size > self.max_event_size:
            raise SSEError(f"server-sent event larger than {self.max_event_size} bytes")


def encode_event(
    data: str, *, event: Optional[str] = None, id: Optional[str] = None, retry: Optional[int] = None
) -> bytes:
    """Encode one event block.

    Args:
        data: the payload; each of its lines (split on CRLF, CR or LF) becomes one ``data:`` line, so the
            parser returns it with every line end turned into LF. ``""`` gives a bare ``data:`` line,
            which makes ``encode_event("", id="x")`` MCP's priming event ``b"id: x\\ndata:\\n\\n"``.
        event: the event type; omitted means "message".
        id: the event id (sets the peer's last event id).
        retry: the reconnection time in milliseconds.

    Returns:
        The UTF-8 block, ending with the blank line that dispatches it.

    Raises:
        ValueError: ``event`` or ``id`` contains a line end (``id`` also NUL, which the peer would
            ignore), or ``retry`` is negative.
    """
    fields = []
    if event is not None:
        _reject_chars(event, "\r\n", "event type")
        fields.append(f"event: {event}\n")
    if id is not None:
        _reject_chars(id, "\0\r\n", "event id")
        fields.append(f"id: {id}\n")
    if retry is not None:
        if retry < 0:
            raise ValueError(f"retry must be >= 0 ms, got {retry}")
        fields.append(f"retry: {int(retry)}\n")
    lines = data.split("\n") if "\r" not in data else _LINE_END.split(data)
    fields.extend(f"data: {line}\n" if line else "data:\n" for line in lines)
    fields.append("\n")
    return "".join(fields).encode("utf-8")


def encode_comment(text: str = "") -> bytes:
    """Encode a comment block (``:text`` and a blank line): a keep-alive that dispatches no event.

    Raises:
        ValueError: ``text`` contains a line end.
    """
    _reject_chars(text, "\r\n", "comment")
    return f":{text}\n\n".encode("utf-8")


def _reject_chars(value: str, forbidden: str, what: str) -> None:
    if any(char in value for char in forbidden):
        raise ValueError(f"{what} must not contain {forbidden!r}: {value!r}")
