"""Tests for mcplite.protocol.sse: WHATWG parsing edge cases, the encoder, and arbitrary chunk splits."""

from typing import Callable, List, Sequence

import pytest

from mcplite.errors import RemoteProtocolError
from mcplite.protocol.sse import Event, SSEError, SSEParser, encode_comment, encode_event


def parse(*chunks: bytes) -> List[Event]:
    """Feed the chunks to a fresh parser and return every event, including any from close()."""
    parser = SSEParser()
    events: List[Event] = []
    for chunk in chunks:
        events.extend(parser.feed(chunk))
    events.extend(parser.close())
    return events


def data_of(events: Sequence[Event]) -> List[str]:
    return [event.data for event in events]


# -- line ends ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("end", [b"\n", b"\r", b"\r\n"])
def test_each_line_end_style(end: bytes) -> None:
    stream = b"data: a" + end + b"data: b" + end + end + b"data: c" + end + end
    assert data_of(parse(stream)) == ["a\nb", "c"]


def test_mixed_line_ends_in_one_stream() -> None:
    stream = b"data: a\rdata: b\r\ndata: c\n\r\ndata: d\r\r"
    assert data_of(parse(stream)) == ["a\nb\nc", "d"]


def test_cr_at_chunk_end_then_lf_is_one_line_end() -> None:
    # Counting "\r" | "\n" as two line ends would insert blank lines: "a" and "b" would be two events.
    events = parse(b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n")
    assert data_of(events) == ["a\nb"]


def test_cr_at_chunk_end_completes_the_line_immediately() -> None:
    parser = SSEParser()
    assert parser.feed(b"data: a\n\r") == [Event("a", id="")]
    assert parser.feed(b"\ndata: b\n\n") == [Event("b", id="")]


def test_cr_then_non_lf_in_next_chunk() -> None:
    assert data_of(parse(b"data: a\r", b"\r")) == ["a"]


def test_lf_after_cr_is_skipped_only_once() -> None:
    # CR | LF LF: the first LF belongs to the CRLF, the second is the blank line.
    assert data_of(parse(b"data: a\r", b"\n\n")) == ["a"]


# -- byte order mark and encoding --------------------------------------------------------------------


def test_bom_at_start_is_dropped() -> None:
    assert data_of(parse(b"\xef\xbb\xbfdata: a\n\n")) == ["a"]


def test_bom_split_across_chunks() -> None:
    assert data_of(parse(b"\xef", b"\xbb", b"\xbfdata: a\n\n")) == ["a"]
    assert data_of(parse(b"", b"\xef\xbb", b"\xbf", b"data: a\n\n")) == ["a"]


def test_bom_only_stripped_at_stream_start() -> None:
    # A second BOM is part of the field name, so "\ufeffdata" is an unknown field and ignored.
    assert parse(b"\xef\xbb\xbf\xef\xbb\xbfdata: a\n\n") == []
    assert data_of(parse(b"data: a\n\n\xef\xbb\xbfdata: b\n\ndata: c\n\n")) == ["a", "c"]


def test_partial_bom_that_is_not_a_bom_is_kept() -> None:
    # b"\xef" followed by something else is an invalid UTF-8 byte, replaced, not silently dropped.
    assert data_of(parse(b"\xef", b"data: a\n\ndata: b\n\n")) == ["b"]
    assert data_of(parse(b"data: \xef", b"\n\n")) == ["\ufffd"]


def test_multibyte_utf8_split_across_chunks() -> None:
    encoded = "data: h\u00e9llo \u20ac \U0001f600\n\n".encode("utf-8")
    for cut in range(len(encoded) + 1):
        assert data_of(parse(encoded[:cut], encoded[cut:])) == ["h\u00e9llo \u20ac \U0001f600"], cut


def test_invalid_utf8_is_replaced() -> None:
    assert data_of(parse(b"data: a\xffb\n\n")) == ["a\ufffdb"]
    # A truncated sequence at the end of a line is one replacement character.
    assert data_of(parse(b"data: \xe2\x82\n\n")) == ["\ufffd"]


# -- fields ------------------------------------------------------------------------------------------


def test_comments_are_counted_and_dispatch_nothing() -> None:
    parser = SSEParser()
    assert parser.feed(b": keep-alive\n\n:\n\n") == []
    assert parser.comments == 2
    assert parser.feed(b"data: a\n: inside an event\ndata: b\n\n") == [Event("a\nb", id="")]
    assert parser.comments == 3


@pytest.mark.parametrize(
    "line, expected",
    [
        (b"data", ""),  # no colon: the whole line is the field name, value ""
        (b"data:", ""),
        (b"data: ", ""),
        (b"data:x", "x"),
        (b"data: x", "x"),
        (b"data:  x", " x"),  # only one space is stripped
        (b"data: x ", "x "),
        (b"data:a:b", "a:b"),  # only the first colon separates
    ],
)
def test_data_field_spacing(line: bytes, expected: str) -> None:
    # A second data line makes the event non-empty, so the first line's exact value is observable.
    assert data_of(parse(line + b"\ndata: end\n\n")) == [expected + "\nend"]


def test_field_names_are_case_sensitive_and_unknown_ones_ignored() -> None:
    assert parse(b"Data: a\n\n") == []
    assert parse(b"data : a\n\n") == []
    assert parse(b"foo: bar\ndata: a\n\n") == [Event("a", id="")]


def test_multiline_data_keeps_inner_empty_lines() -> None:
    assert data_of(parse(b"data: a\ndata:\ndata: b\ndata\n\n")) == ["a\n\nb\n"]


def test_event_type_applies_to_one_event_only() -> None:
    events = parse(b"event: ping\ndata: 1\n\ndata: 2\n\nevent:\ndata: 3\n\n")
    assert [(event.event, event.data) for event in events] == [("ping", "1"), ("message", "2"), ("message", "3")]


def test_event_type_is_reset_even_when_nothing_is_dispatched() -> None:
    assert parse(b"event: endpoint\n\ndata: x\n\n") == [Event("x", "message", "")]


def test_last_event_id_persists_and_is_reported_on_each_event() -> None:
    parser = SSEParser()
    events = parser.feed(b"id: 1\ndata: a\n\ndata: b\n\nid: 2\ndata: c\n\n")
    assert [(event.data, event.id) for event in events] == [("a", "1"), ("b", "1"), ("c", "2")]
    assert parser.last_event_id == "2"


def test_initial_last_event_id_is_empty() -> None:
    parser = SSEParser()
    assert parser.last_event_id == ""
    assert parser.feed(b"data: a\n\n") == [Event("a", id="")]


def test_empty_id_resets_the_last_event_id() -> None:
    parser = SSEParser()
    events = parser.feed(b"id: 7\ndata: a\n\nid\ndata: b\n\n")
    assert [event.id for event in events] == ["7", ""]
    assert parser.last_event_id == ""


def test_id_containing_nul_is_ignored() -> None:
    parser = SSEParser()
    events = parser.feed(b"id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n")
    assert [event.id for event in events] == ["1", "1"]
    assert parser.last_event_id == "1"


def test_last_event_id_changes_only_when_a_block_ends() -> None:
    parser = SSEParser()
    parser.feed(b"id: 1\ndata: a\n\nid: 2\ndata: partial\n")
    assert parser.last_event_id == "1"
    assert parser.close() == []
    assert parser.last_event_id == "1"


def test_priming_event_sets_last_event_id_and_dispatches_nothing() -> None:
    parser = SSEParser()
    assert parser.feed(b"id: stream-1:0\nretry: 500\ndata:\n\n") == []
    assert parser.last_event_id == "stream-1:0"
    assert parser.retry == 500
    events = parser.feed(b'data: {"jsonrpc":"2.0"}\n\n')
    assert events == [Event('{"jsonrpc":"2.0"}', id="stream-1:0")]
    assert events[0].retry is None  # the retry belonged to the priming block


def test_block_without_data_field_sets_id_and_dispatches_nothing() -> None:
    parser = SSEParser()
    assert parser.feed(b"id: 9\n\n") == []
    assert parser.last_event_id == "9"


@pytest.mark.parametrize("value", [b"", b"abc", b"10a", b"-1", b"1.5", b"  100", b"\xd9\xa3"])  # last: Arabic 3
def test_retry_without_only_ascii_digits_is_ignored(value: bytes) -> None:
    parser = SSEParser()
    events = parser.feed(b"retry: 100\ndata: a\n\nretry:" + value + b"\ndata: b\n\n")
    assert [event.retry for event in events] == [100, None]
    assert parser.retry == 100


def test_retry_is_recorded_on_its_event_and_on_the_parser() -> None:
    parser = SSEParser()
    assert parser.retry is None
    events = parser.feed(b"retry:3000\ndata: a\n\n")
    assert events == [Event("a", id="", retry=3000)]
    assert parser.retry == 3000


def test_unterminated_last_event_is_discarded() -> None:
    parser = SSEParser()
    assert parser.feed(b"data: a\n\ndata: b\n") == [Event("a", id="")]
    assert parser.close() == []
    assert data_of(parse(b"data: a\n\ndata: b")) == ["a"]


def test_events_are_returned_by_the_chunk_that_completes_them() -> None:
    parser = SSEParser()
    assert parser.feed(b"data: a\n") == []
    assert parser.feed(b"\ndata: b\n\ndata: c\n") == [Event("a", id=""), Event("b", id="")]
    assert parser.feed(b"\n") == [Event("c", id="")]


# -- size limit --------------------------------------------------------------------------------------


def test_long_unterminated_line_raises() -> None:
    parser = SSEParser(max_event_size=100)
    parser.feed(b"data: " + b"x" * 90)
    with pytest.raises(SSEError):
        parser.feed(b"x" * 10)


def test_large_event_made_of_many_lines_raises() -> None:
    parser = SSEParser(max_event_size=100)
    with pytest.raises(SSEError):
        parser.feed(b"data: 0123456789\n" * 20)


def test_events_up_to_the_limit_are_accepted_repeatedly() -> None:
    parser = SSEParser(max_event_size=100)
    block = b"data: " + b"x" * 90 + b"\n\n"
    for _ in range(5):
        assert parser.feed(block) == [Event("x" * 90, id="")]


@pytest.mark.parametrize("chunks", [
    [b"data: " + b"x" * 200 + b"\n\n"],                   # one chunk, line end included
    [b"data: " + b"x" * 200],                             # one chunk, no line end yet
    [b"data: "] + [b"x"] * 200,                           # a byte at a time
    [b"data: " + b"x" * 60 + b"\r", b"data: " + b"x" * 60 + b"\n"],  # two lines of one event, CR and LF
    [b"\xef\xbb\xbf" + b"data: " + b"x" * 200],               # after a byte order mark
])
def test_the_bound_holds_however_the_stream_is_cut(chunks: List[bytes]) -> None:
    parser = SSEParser(max_event_size=100)
    with pytest.raises(SSEError, match="larger than 100 bytes"):
        for chunk in chunks:
            parser.feed(chunk)


def test_text_that_is_not_valid_unicode_passes_through_as_its_escape() -> None:
    """A lone surrogate reaches the parser as JSON's escape (ASCII): the parser passes it on unchanged, and its
    reader decodes it (tests/test_hostile_input.py shows the client taking such an answer)."""
    assert SSEParser().feed(b'data: {"text":"\\ud800"}\n\n') == [Event('{"text":"\\ud800"}', id="")]


def test_sse_error_is_a_value_error_and_a_remote_protocol_error() -> None:
    assert issubclass(SSEError, ValueError)
    assert issubclass(SSEError, RemoteProtocolError)


def test_long_line_in_many_small_chunks() -> None:
    parser = SSEParser()
    assert parser.feed(b"data: ") == []
    for _ in range(200):
        assert parser.feed(b"y" * 1000) == []
    assert data_of(parser.feed(b"\n\n")) == ["y" * 200_000]


# -- encoder -----------------------------------------------------------------------------------------


def test_encode_priming_event() -> None:
    assert encode_event("", id="x") == b"id: x\ndata:\n\n"
    assert encode_event("", id="x", retry=500) == b"id: x\nretry: 500\ndata:\n\n"


def test_encode_field_order_and_multiline_data() -> None:
    assert encode_event("a\nb", event="message", id="1", retry=0) == (
        b"event: message\nid: 1\nretry: 0\ndata: a\ndata: b\n\n"
    )
    assert encode_event("a\r\nb\rc\n") == b"data: a\ndata: b\ndata: c\ndata:\n\n"
    assert encode_event(" lead") == b"data:  lead\n\n"
    assert encode_event("\u20ac") == "data: \u20ac\n\n".encode("utf-8")


@pytest.mark.parametrize("bad_id", ["a\nb", "a\rb", "a\0b"])
def test_encode_rejects_bad_ids(bad_id: str) -> None:
    with pytest.raises(ValueError):
        encode_event("x", id=bad_id)


def test_encode_rejects_bad_event_type_and_retry() -> None:
    with pytest.raises(ValueError):
        encode_event("x", event="a\nb")
    with pytest.raises(ValueError):
        encode_event("x", retry=-1)


def test_encode_comment() -> None:
    assert encode_comment() == b":\n\n"
    assert encode_comment(" keep-alive") == b": keep-alive\n\n"
    with pytest.raises(ValueError):
        encode_comment("a\nb")
    parser = SSEParser()
    assert parser.feed(encode_comment("ping")) == []
    assert parser.comments == 1


# -- round trips at every split ----------------------------------------------------------------------

ROUND_TRIP_EVENTS = [
    Event("", id="prime-0", retry=250),  # priming: nothing dispatched
    Event('{"jsonrpc":"2.0","id":1}', id="e1"),
    Event("line one\nline two\n\nline four", event="update"),
    Event(" leading space and trailing \n", id=""),
    Event("h\u00e9llo \u20ac \U0001f600 :colon", event="\u00e9v\u00e9nement", id="\u00e9-2", retry=1000),
]


def encoded_stream() -> bytes:
    blocks = [encode_event(e.data, event=e.event, id=e.id, retry=e.retry) for e in ROUND_TRIP_EVENTS]
    blocks.insert(2, encode_comment(" keep-alive"))
    return b"".join(blocks)


def expected_events() -> List[Event]:
    expected = []
    last_id = ""
    for event in ROUND_TRIP_EVENTS:
        last_id = last_id if event.id is None else event.id
        if event.data:
            expected.append(Event(event.data, event.event, last_id, event.retry))
    return expected


def as_crlf(stream: bytes) -> bytes:
    return stream.replace(b"\n", b"\r\n")


def as_cr(stream: bytes) -> bytes:
    return stream.replace(b"\n", b"\r")


@pytest.mark.parametrize("transform", [bytes, as_crlf, as_cr], ids=["lf", "crlf", "cr"])
@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"], ids=["no-bom", "bom"])
def test_round_trip_split_at_every_position(transform: Callable[[bytes], bytes], bom: bytes) -> None:
    stream = bom + transform(encoded_stream())
    expected = expected_events()
    assert parse(stream) == expected
    for cut in range(len(stream) + 1):
        assert parse(stream[:cut], stream[cut:]) == expected, cut


@pytest.mark.parametrize("transform", [bytes, as_crlf], ids=["lf", "crlf"])
def test_round_trip_split_at_every_pair_of_positions(transform: Callable[[bytes], bytes]) -> None:
    stream = b"\xef\xbb\xbf" + transform(b"".join(encode_event(e.data, id=e.id) for e in ROUND_TRIP_EVENTS[:4]))
    expected = [
        Event('{"jsonrpc":"2.0","id":1}', id="e1"),
        Event("line one\nline two\n\nline four", id="e1"),
        Event(" leading space and trailing \n", id=""),
    ]
    for first in range(len(stream) + 1):
        for second in range(first, len(stream) + 1):
            assert parse(stream[:first], stream[first:second], stream[second:]) == expected, (first, second)


def test_round_trip_byte_by_byte() -> None:
    stream = b"\xef\xbb\xbf" + as_crlf(encoded_stream())
    parser = SSEParser()
    events: List[Event] = []
    for index in range(len(stream)):
        events.extend(parser.feed(stream[index : index + 1]))
    assert events == expected_events()
    assert parser.last_event_id == "\u00e9-2"
    assert parser.retry == 1000
    assert parser.comments == 1
