"""The HTTP/1.1 request grammar (`mcplite.protocol.http11`, RFC 9112), driven with bytes alone, table by table.

The same grammar over a real socket, with hostile requests and a fuzz of chunked bodies: test_http_grammar.py.
"""

import io
from typing import Dict, Optional, Tuple

import pytest

from mcplite.protocol.http11 import (
    MAX_LINE, MalformedRequest, body_framing, end_of_head, parse_chunk_size_line, parse_field_line,
    parse_header_section, parse_request_line, read_chunked,
)


@pytest.mark.parametrize("line, expected", [
    (b"0\r\n", 0), (b"2d\r\n", 45), (b"2D\r\n", 45), (b"000a\r\n", 10), (b"ffffffffffffffff\r\n", 2**64 - 1),
    (b"00000000000000000000000000ff\r\n", 255),  # leading zeros are not significant digits
    (b"5;a\r\n", 5), (b"5;a=b\r\n", 5), (b"5;a=b;c=d\r\n", 5), (b"5 ; a = b ;c\r\n", 5),  # BWS is parsed
    (b'5;a="x y;\\"z"\r\n', 5), (b'5;a=""\r\n', 5), (b'5;a="\xe9\\\xe9"\r\n', 5),  # quoted-string, obs-text
])
def test_a_chunk_size_line_is_1_hexdig_then_well_formed_extensions(line: bytes, expected: int) -> None:
    assert parse_chunk_size_line(line) == expected


@pytest.mark.parametrize("line", [
    b"0x2d\r\n", b"+2d\r\n", b"-2d\r\n", b"2_d\r\n", b" 2d\r\n", b"2d \r\n", b"2d\t\r\n", b"2g\r\n", b"\r\n",
    b"\xb2\r\n", b"2d\n", b"2d\r\r\n", b"2d\r", b"2d", b"2d\r\n\r\n",  # int(x, 16) takes the first five
    b"5;\r\n", b"5;=b\r\n", b"5;a=\r\n", b"5;a b\r\n", b"5;a=b c\r\n", b"5;a;\r\n", b"5;a \r\n", b"5 \r\n",
    b"5;a\x00\r\n", b"5;a=\x00\r\n", b'5;a="x\r\n', b'5;a="x\x00"\r\n', b'5;a="x\\\x7f"\r\n', b'5;a="x"y\r\n',
    b"5;a\rb\r\n", b"5,a\r\n", b"5;a=b=c\r\n",
])
def test_a_malformed_chunk_size_line_is_400(line: bytes) -> None:
    with pytest.raises(MalformedRequest) as caught:
        parse_chunk_size_line(line)
    assert caught.value.status == 400


def test_a_chunk_size_beyond_16_significant_hex_digits_is_413() -> None:
    with pytest.raises(MalformedRequest) as caught:
        parse_chunk_size_line(b"10000000000000000\r\n")
    assert caught.value.status == 413


@pytest.mark.parametrize("line, expected", [
    (b"GET /mcp HTTP/1.1\r\n", ("GET", "/mcp", "HTTP/1.1")),
    (b"POST http://h/mcp?a=b HTTP/1.0\n", ("POST", "http://h/mcp?a=b", "HTTP/1.0")),  # bare LF (RFC 9112 2.2)
    (b"X-CUSTOM! * HTTP/1.1\r\n", ("X-CUSTOM!", "*", "HTTP/1.1")),
])
def test_a_request_line(line: bytes, expected: Tuple[str, str, str]) -> None:
    assert parse_request_line(line) == expected


@pytest.mark.parametrize("line, status", [
    (b"GET  /mcp HTTP/1.1\r\n", 400), (b"GET /mcp  HTTP/1.1\r\n", 400), (b" GET /mcp HTTP/1.1\r\n", 400),
    (b"GET /mcp HTTP/1.1 \r\n", 400), (b"GET\t/mcp HTTP/1.1\r\n", 400), (b"GET /mcp\r\n", 400), (b"\r\n", 400),
    (b"GET /a b HTTP/1.1\r\n", 400), (b"G@T /mcp HTTP/1.1\r\n", 400), (b"GET /m\x00cp HTTP/1.1\r\n", 400),
    (b"GET /m\x7fcp HTTP/1.1\r\n", 400), (b"GET /caf\xe9 HTTP/1.1\r\n", 400), (b"GET /mcp\rHTTP/1.1\r\n", 400),
    (b"GET /mcp HTTP/1.1\r\r\n", 400), (b"GET /mcp HTTP/1.1", 400), (b"GET /mcp http/1.1\r\n", 400),
    (b"GET /mcp HTTP/1.10\r\n", 400), (b"GET /mcp HTTP/1.x\r\n", 400), (b"GET /mcp HTTP/\xb9.1\r\n", 400),
    (b"GET /mcp HTTP/2.0\r\n", 505), (b"GET /mcp HTTP/1.2\r\n", 505), (b"GET /mcp HTTP/0.9\r\n", 505),
])
def test_a_malformed_request_line(line: bytes, status: int) -> None:
    with pytest.raises(MalformedRequest) as caught:
        parse_request_line(line)
    assert caught.value.status == status


@pytest.mark.parametrize("line, expected", [
    ("Content-Length: 5", ("content-length", "5")), ("X-A:5", ("x-a", "5")), ("X-A: \t 5 \t ", ("x-a", "5")),
    ("X-A:", ("x-a", "")), ("X-A: a \t b", ("x-a", "a \t b")), ("X-A: caf\xe9 \xa0", ("x-a", "caf\xe9 \xa0")),
    ("!#$%&'*+-.^_`|~: x", ("!#$%&'*+-.^_`|~", "x")),
])
def test_a_field_line(line: str, expected: Tuple[str, str]) -> None:
    assert parse_field_line(line) == expected


@pytest.mark.parametrize("line", [
    " X-A: 1", "\tX-A: 1", "X-A : 1", "X-A\t: 1", "X A: 1", "X-A 1", ": 1", "X-\x00: 1", "X-\xe9: 1", "X-A: a\x00b",
    "X-A: a\rb", "X-A: a\r", "X-A: a\x01b", "X-A: a\x7fb", "X-A: a\x0bb", "X-A: \x1b[31m", "X-A: a\nb", "",
])
def test_a_malformed_field_line_is_400(line: str) -> None:
    with pytest.raises(MalformedRequest) as caught:
        parse_field_line(line)
    assert caught.value.status == 400


def test_a_header_section_joins_repeated_fields_and_takes_either_line_end() -> None:
    block = b"A: 1\r\nB: 2\nA: 3\r\nHost: h\r\n"
    assert parse_header_section(block) == {"a": "1, 3", "b": "2", "host": "h"}
    assert parse_header_section(b"") == {}
    # Off the fast path (names of letters, digits and "-"; printable lines), still by the same grammar.
    assert parse_header_section(b"X_A~1: a\tb\r\nY: caf\xe9\x85\r\n") == {"x_a~1": "a\tb", "y": "caf\xe9\x85"}


@pytest.mark.parametrize("block, status", [
    (b"Host: a\nHost: b\n", 400),  # RFC 9112 3.2: one Host
    (b"Host: a\nhost: a\n", 400),
    (b"A: 1\r\nB: 2\r\nC: 3\r\n", 431),  # three fields; two allowed here
    (b"A: 123456789\r\n", 431),  # a line of 12 bytes; 10 allowed here
    (b"A: 1\r\nB: 2\r\nC", 431),  # cut short by the limit while reading
    (b"A: 1234\r\nB: 1234\r\n", 431),  # 20 bytes; 16 allowed here
    (b"A: 1\r\n B: 2\r\n", 400),
    (b"X@A: 1\n", 400), (b"A: 1\nX(: 1\n", 400), (b"A: 1\nB:\x00\n", 400), (b"A: 1\r\r\n", 400),
])
def test_a_header_section_with_a_duplicate_host_or_beyond_a_limit(block: bytes, status: int) -> None:
    with pytest.raises(MalformedRequest) as caught:
        parse_header_section(block, max_line=10, max_fields=2, max_bytes=16)
    assert caught.value.status == status


def test_a_repeated_mcp_session_id_is_400_even_with_the_same_value() -> None:
    with pytest.raises(MalformedRequest) as caught:  # one session per request: not joined into "a, a"
        parse_header_section(b"Host: h\r\nMcp-Session-Id: a\r\nmcp-session-id: a\r\n")
    assert (caught.value.status, caught.value.message) == (400, "Bad Request: more than one MCP-Session-Id header")


@pytest.mark.parametrize("headers, version, expected", [
    ({}, "HTTP/1.1", 0), ({"content-length": "5"}, "HTTP/1.1", 5), ({"content-length": "5"}, "HTTP/1.0", 5),
    ({"content-length": "007"}, "HTTP/1.1", 7), ({"content-length": "5, 5"}, "HTTP/1.1", 5),
    ({"content-length": "5,5 ,\t5"}, "HTTP/1.1", 5), ({"content-length": "0" * 40}, "HTTP/1.1", 0),
    ({"transfer-encoding": "chunked"}, "HTTP/1.1", None), ({"transfer-encoding": "Chunked"}, "HTTP/1.1", None),
    ({"transfer-encoding": ", chunked ,"}, "HTTP/1.1", None),  # empty list elements (RFC 9110 5.6.1)
])
def test_body_framing(headers: Dict[str, str], version: str, expected: Optional[int]) -> None:
    assert body_framing(headers, version) == expected


@pytest.mark.parametrize("headers, version, status", [
    ({"transfer-encoding": "chunked", "content-length": "5"}, "HTTP/1.1", 400),
    ({"transfer-encoding": "chunked", "content-length": "0"}, "HTTP/1.1", 400),
    ({"transfer-encoding": "chunked"}, "HTTP/1.0", 400),  # RFC 9112 6.1: faulty framing in HTTP/1.0
    ({"transfer-encoding": "gzip"}, "HTTP/1.1", 400),  # RFC 9112 6.3: final coding not chunked is a MUST-400
    ({"transfer-encoding": "chunked, gzip"}, "HTTP/1.1", 400), ({"transfer-encoding": "identity"}, "HTTP/1.1", 400),
    ({"transfer-encoding": ""}, "HTTP/1.1", 400), ({"transfer-encoding": ","}, "HTTP/1.1", 400),
    ({"transfer-encoding": "chunked;q=1"}, "HTTP/1.1", 400), ({"transfer-encoding": "xchunked"}, "HTTP/1.1", 400),
    ({"transfer-encoding": "chunked, chunked"}, "HTTP/1.1", 400),
    ({"transfer-encoding": "gzip, chunked"}, "HTTP/1.1", 501),  # framed, but a coding we do not implement
    ({"content-length": "5, 6"}, "HTTP/1.1", 400), ({"content-length": "5,"}, "HTTP/1.1", 400),
    ({"content-length": "+5"}, "HTTP/1.1", 400), ({"content-length": "-5"}, "HTTP/1.1", 400),
    ({"content-length": "0x5"}, "HTTP/1.1", 400), ({"content-length": "5.0"}, "HTTP/1.1", 400),
    ({"content-length": "5 5"}, "HTTP/1.1", 400), ({"content-length": ""}, "HTTP/1.1", 400),
    ({"content-length": "\xb2"}, "HTTP/1.1", 400), ({"content-length": "1_0"}, "HTTP/1.1", 400),
    ({"content-length": "9" * 19}, "HTTP/1.1", 413), ({"content-length": "9" * 5000}, "HTTP/1.1", 413),
])
def test_body_framing_refused(headers: Dict[str, str], version: str, status: int) -> None:
    with pytest.raises(MalformedRequest) as caught:
        body_framing(headers, version)
    assert caught.value.status == status


@pytest.mark.parametrize("buffer, searched, expected", [
    (b"", 0, 0), (b"\r\n", 0, 2), (b"\n", 0, 1),  # no fields at all
    (b"Host: h\r\n\r\nbody", 0, 11), (b"Host: h\n\nbody", 0, 9), (b"A: 1\r\nB: 2\n\r\n", 0, 13),
    (b"Host: h\r\n", 0, 0), (b"Host: h\r\n\r", 0, 0),  # not arrived yet
    (b"Host: h\r\n\r\n", 9, 11),  # the empty line begins in the last bytes searched before
    (b"A: 1\n\nB: 2\r\n\r\n", 0, 6),  # the first empty line ends the head
])
def test_the_end_of_a_head(buffer: bytes, searched: int, expected: int) -> None:
    assert end_of_head(bytearray(buffer), searched) == expected


@pytest.mark.parametrize("data, limit, expected", [
    (b"0\r\n\r\n", 10, b""),
    (b"5\r\nhello\r\n0\r\n\r\n", 10, b"hello"),
    (b"3\r\nhel\r\n2;a=b\r\nlo\r\n0\r\n\r\n", 5, b"hello"),  # exactly the limit
    (b"5\r\nhello\r\n0\r\nX-A: 1\r\nX-B: 2\r\n\r\n", 10, b"hello"),  # trailers checked, then dropped
    (b"5\r\nhello\r\n0\r\n\r\nGET / HTTP/1.1\r\n", 10, b"hello"),  # what follows is the next request's
])
def test_a_chunked_body(data: bytes, limit: int, expected: bytes) -> None:
    reader = io.BytesIO(data)
    assert read_chunked(reader, limit) == expected
    assert data[reader.tell():] in (b"", b"GET / HTTP/1.1\r\n")


@pytest.mark.parametrize("data", [
    b"", b"5\r\n", b"5\r\nhel", b"5\r\nhello", b"5\r\nhello\r", b"5", b"5\r\nhello\r\n0\r\n",
    b"5\r\nhello\r\n0\r\nX-A: 1\r\n",
])
def test_a_chunked_body_cut_short_is_none(data: bytes) -> None:
    assert read_chunked(io.BytesIO(data), 10) is None


LIMIT = 1 << 20


@pytest.mark.parametrize("data, limit, status", [
    (b"6\r\nhello!\r\n0\r\n\r\n", 5, 413),  # beyond the limit
    (b"3\r\nhel\r\n3\r\nlo!\r\n0\r\n\r\n", 5, 413),  # the limit counts the whole body
    (b"5\nhello\r\n0\r\n\r\n", LIMIT, 400),  # a bare LF after the size
    (b"5\r\nhello\n0\r\n\r\n", LIMIT, 400),  # chunk data that does not end in CRLF
    (b"5\r\nhelloXX0\r\n\r\n", LIMIT, 400),
    (b"0x5\r\nhello\r\n0\r\n\r\n", LIMIT, 400),
    (b"1" * 1024 + b"\r\n", LIMIT, 400),  # a chunk-size line too long
    (b"0\r\nX-A: 1\n\r\n", LIMIT, 400),  # a trailer line that does not end in CRLF
    (b"0\r\nX A: 1\r\n\r\n", LIMIT, 400),  # a malformed trailer field
    (b"0\r\n" + b"X: 1\r\n" * 101 + b"\r\n", LIMIT, 431),  # too many trailer fields
    (b"0\r\nX: " + b"a" * MAX_LINE + b"\r\n\r\n", LIMIT, 431),  # a trailer line too long
    (b"0\r\n" + (b"X: " + b"a" * 60000 + b"\r\n") * 3 + b"\r\n", LIMIT, 431),  # a trailer section too large
    (b"".join(b"1;" + b"e" * 1000 + b"\r\nx\r\n" for _ in range(17)), LIMIT, 413),  # too many chunk extensions
], ids=lambda value: repr(value)[:40] if isinstance(value, bytes) else None)
def test_a_malformed_chunked_body(data: bytes, limit: int, status: int) -> None:
    with pytest.raises(MalformedRequest) as caught:
        read_chunked(io.BytesIO(data), limit)
    assert caught.value.status == status
