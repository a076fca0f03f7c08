"""The strict HTTP/1.1 request grammar of the standard-library server (RFC 9112), over its sockets.

Two parts (the grammar's pure functions are tested alone, with bytes, in test_http11.py): hostile heads and
bodies sent over a real socket to a real server on 127.0.0.1, each answered with one exact status and then a
closed connection (a request pipelined behind a hostile one is never served: that is what a smuggled request
would be); and a seeded fuzz of a valid chunked POST, checked against an independent reading of the grammar
written here with regular expressions.
"""

import logging
import random
import re
import time
from typing import Dict, Iterator, List

import pytest

from mcplite import Server
from mcplite.transports.http_server.stdlib import HTTPServerThread
from support.raw_http import exchange_until_closed as exchange

MAX_BODY = 4096
BODY = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
HEAD = (b"Host: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
        b"MCP-Protocol-Version: 2025-11-25\r\n")


def request(*fields: bytes, line: bytes = b"POST /mcp HTTP/1.1", body: bytes = b"", head: bytes = HEAD) -> bytes:
    """A request: ``line``, the usual head plus ``fields`` (each without its CRLF), then ``body`` as it is."""
    return line + b"\r\n" + head + b"".join(field + b"\r\n" for field in fields) + b"\r\n" + body


def chunked(*fields: bytes, body: bytes) -> bytes:
    return request(b"Transfer-Encoding: chunked", *fields, body=body)


def sized(body: bytes = BODY, *fields: bytes) -> bytes:
    return request(b"Content-Length: %d" % len(body), *fields, body=body)


CHUNKED_BODY = b"10\r\n" + BODY[:16] + b"\r\n" + b"%x\r\n" % (len(BODY) - 16) + BODY[16:] + b"\r\n0\r\n\r\n"
FOLLOW_UP = sized(BODY, b"Connection: close")  # pipelined behind a request, to see whether it is served


# ---- over a socket ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def http() -> Iterator[HTTPServerThread]:
    # Stateless with JSON answers: a ping is answered 200 with one JSON body, and no session piles up.
    server = HTTPServerThread(Server("grammar"), stateless=True, json_response=True, max_body_size=MAX_BODY)
    with server:
        yield server


def statuses(data: bytes) -> List[int]:
    """The status of each response in ``data``; every response of this server has a Content-Length."""
    found = []
    while data:
        head, blank, rest = data.partition(b"\r\n\r\n")
        assert blank, data
        status_line, *lines = head.split(b"\r\n")
        assert status_line.startswith(b"HTTP/1.1 "), data
        fields = dict(line.lower().split(b": ", 1) for line in lines)
        length = int(fields[b"content-length"])
        found.append(int(status_line.split(b" ")[1]))
        data = rest[length:]
    return found


HOSTILE_HEADS = {
    # the request line
    "double space": (request(line=b"POST  /mcp HTTP/1.1", body=b""), 400),
    "trailing space": (request(line=b"POST /mcp HTTP/1.1 "), 400),
    "tab separator": (request(line=b"POST\t/mcp HTTP/1.1"), 400),
    "two words": (request(line=b"POST /mcp"), 400),
    "method not a token": (request(line=b"P(ST /mcp HTTP/1.1"), 400),
    "NUL in target": (request(line=b"POST /m\x00cp HTTP/1.1"), 400),
    "non-ASCII target": (request(line=b"POST /caf\xe9 HTTP/1.1"), 400),
    "bare CR in request line": (request(line=b"POST /mcp\rHTTP/1.1"), 400),
    "lower-case version": (request(line=b"POST /mcp http/1.1"), 400),
    "malformed version": (request(line=b"POST /mcp HTTP/1.1.1"), 400),
    "HTTP/2.0": (request(line=b"POST /mcp HTTP/2.0"), 505),
    "HTTP/1.2": (request(line=b"POST /mcp HTTP/1.2"), 505),
    "HTTP/0.9": (request(line=b"POST /mcp HTTP/0.9"), 505),
    "request line too long": (request(line=b"GET /" + b"a" * 70000 + b" HTTP/1.1"), 414),
    "unknown method": (request(b"Content-Length: 2", line=b"BREW /mcp HTTP/1.1", body=b"{}"), 501),
    # the header fields
    "space before colon": (request(b"Content-Length : 2", body=b"{}"), 400),
    "tab before colon": (request(b"Content-Length\t: 2", body=b"{}"), 400),
    "whitespace before the first field": (request(head=b" X-A: 1\r\n" + HEAD), 400),
    "obs-fold": (request(b"X-A: 1", b"\tfolded"), 400),
    "space in a name": (request(b"X A: 1"), 400),
    "no colon": (request(b"X-A 1"), 400),
    "empty name": (request(b": 1"), 400),
    "NUL in a name": (request(b"X-\x00: 1"), 400),
    "NUL in a value": (request(b"X-A: a\x00b"), 400),
    "bare CR in a value": (request(b"X-A: a\rb"), 400),
    "CR CR LF": (request(b"X-A: a\r"), 400),
    "ESC in a value": (request(b"X-A: \x1b[31m"), 400),
    "DEL in a value": (request(b"X-A: a\x7f"), 400),
    "no Host": (request(head=HEAD.replace(b"Host: 127.0.0.1\r\n", b"")), 400),
    "two Hosts": (request(b"Host: evil.example"), 400),
    "two MCP-Session-Ids": (request(b"MCP-Session-Id: a", b"Mcp-Session-Id: b"), 400),
    "too many fields": (request(*[b"X-F-%d: x" % i for i in range(101)]), 431),
    "a line too long": (request(b"X-Long: " + b"x" * 65536), 431),
    "a head too large": (request(*[b"X-Big-%d: " % i + b"x" * 60000 for i in range(3)]), 431),
    # the framing fields
    "Content-Length values differ": (request(b"Content-Length: 2", b"Content-Length: 3", body=b"{}"), 400),
    "Content-Length list": (request(b"Content-Length: 2, 3", body=b"{}"), 400),
    "signed Content-Length": (request(b"Content-Length: +2", body=b"{}"), 400),
    "negative Content-Length": (request(b"Content-Length: -2", body=b"{}"), 400),
    "hex Content-Length": (request(b"Content-Length: 0x2", body=b"{}"), 400),
    "empty Content-Length": (request(b"Content-Length:", body=b"{}"), 400),
    "huge Content-Length": (request(b"Content-Length: " + b"9" * 30), 413),
    "Transfer-Encoding and Content-Length": (request(b"Transfer-Encoding: chunked", b"Content-Length: 3",
                                                     body=b"0\r\n\r\n"), 400),
    "Content-Length and Transfer-Encoding": (request(b"Content-Length: 5", b"Transfer-Encoding: chunked",
                                                     body=b"0\r\n\r\n"), 400),
    "final coding not chunked": (request(b"Transfer-Encoding: chunked, gzip", body=b"0\r\n\r\n"), 400),
    "only gzip": (request(b"Transfer-Encoding: gzip", body=b"0\r\n\r\n"), 400),
    "chunked twice": (request(b"Transfer-Encoding: chunked", b"Transfer-Encoding: chunked", body=b"0\r\n\r\n"), 400),
    "unimplemented coding": (request(b"Transfer-Encoding: gzip, chunked", body=b"0\r\n\r\n"), 501),
    "Transfer-Encoding in HTTP/1.0": (request(b"Transfer-Encoding: chunked", line=b"POST /mcp HTTP/1.0",
                                              body=b"0\r\n\r\n"), 400),
}

HOSTILE_BODIES = {
    "0x prefix": (b"0x2d\r\n", 400),
    "plus sign": (b"+2d\r\n", 400),
    "minus zero": (b"-0\r\n\r\n", 400),
    "underscore": (b"2_d\r\n", 400),
    "leading space": (b" 2d\r\n", 400),
    "trailing space": (b"2d \r\n", 400),
    "bare LF after the size": (b"%x\n" % len(BODY) + BODY + b"\r\n0\r\n\r\n", 400),
    "empty size": (b"\r\n", 400),
    "not hex": (b"2g\r\n", 400),
    "size beyond 16 digits": (b"10000000000000000\r\n", 413),
    "size beyond the limit": (b"%x\r\n" % (MAX_BODY + 1), 413),
    "sizes beyond the limit in all": (b"800\r\n" + b"x" * 0x800 + b"\r\n801\r\n", 413),
    "chunk-size line too long": (b"5;a=" + b"b" * 2000 + b"\r\n", 400),
    "extension without a name": (b"%x;\r\n" % len(BODY) + BODY + b"\r\n0\r\n\r\n", 400),
    "extension with a space": (b"%x;a b\r\n" % len(BODY) + BODY + b"\r\n0\r\n\r\n", 400),
    "extension with NUL": (b"%x;a=\x00\r\n" % len(BODY) + BODY + b"\r\n0\r\n\r\n", 400),
    "extension with bare CR": (b"%x;a=b\rc\r\n" % len(BODY) + BODY + b"\r\n0\r\n\r\n", 400),
    "unterminated quoted extension": (b'%x;a="b\r\n' % len(BODY) + BODY + b"\r\n0\r\n\r\n", 400),
    "extension flood": (b"".join(b"1;" + b"e" * 1000 + b"\r\n \r\n" for _ in range(20)), 413),
    "data longer than its size": (b"2\r\n{}XX\r\n0\r\n\r\n", 400),
    "data then bare LF": (b"2\r\n{}\n0\r\n\r\n", 400),
    "data then nothing": (b"2\r\n{}0\r\n\r\n", 400),
    "last chunk then bare LF": (b"%x\r\n" % len(BODY) + BODY + b"\r\n0\r\n\n", 400),
    "trailer with space before colon": (b"%x\r\n" % len(BODY) + BODY + b"\r\n0\r\nX-T : 1\r\n\r\n", 400),
    "trailer obs-fold": (b"%x\r\n" % len(BODY) + BODY + b"\r\n0\r\nX-T: 1\r\n folded\r\n\r\n", 400),
    "trailer with NUL": (b"%x\r\n" % len(BODY) + BODY + b"\r\n0\r\nX-T: a\x00\r\n\r\n", 400),
    "trailer with bare LF": (b"%x\r\n" % len(BODY) + BODY + b"\r\n0\r\nX-T: 1\n\r\n", 400),
    "too many trailers": (b"%x\r\n" % len(BODY) + BODY + b"\r\n0\r\n" + b"X-T: 1\r\n" * 101 + b"\r\n", 431),
    "trailer section too large": (b"%x\r\n" % len(BODY) + BODY + b"\r\n0\r\n"
                                  + b"".join(b"X-T-%d: %b\r\n" % (i, b"t" * 60000) for i in range(3)) + b"\r\n", 431),
    "trailer line too long": (b"%x\r\n" % len(BODY) + BODY + b"\r\n0\r\nX-T: " + b"t" * 65536 + b"\r\n\r\n", 431),
}


@pytest.mark.parametrize("data, status", HOSTILE_HEADS.values(), ids=HOSTILE_HEADS.keys())
def test_a_hostile_head_gets_one_exact_answer_and_a_closed_connection(http: HTTPServerThread, data: bytes,
                                                                      status: int) -> None:
    assert statuses(exchange(http, data + FOLLOW_UP)) == [status]


@pytest.mark.parametrize("body, status", HOSTILE_BODIES.values(), ids=HOSTILE_BODIES.keys())
def test_a_hostile_chunked_body_gets_one_exact_answer_and_a_closed_connection(http: HTTPServerThread, body: bytes,
                                                                              status: int) -> None:
    assert statuses(exchange(http, chunked(body=body) + FOLLOW_UP)) == [status]


def test_the_expect_100_continue_path_checks_the_framing_first(http: HTTPServerThread) -> None:
    both = request(b"Expect: 100-continue", b"Transfer-Encoding: chunked", b"Content-Length: 2")
    assert statuses(exchange(http, both)) == [400]
    assert statuses(exchange(http, request(b"Expect: 100-continue", b"Content-Length: %d" % (MAX_BODY + 1)))) == [413]


VALID = {
    "Content-Length": sized(),
    "Content-Length repeated": request(b"Content-Length: %d" % len(BODY), b"Content-Length: %d" % len(BODY),
                                       body=BODY),
    "Content-Length list of one value": request(b"Content-Length: %d, %d" % (len(BODY), len(BODY)), body=BODY),
    "Content-Length with leading zeros": request(b"Content-Length: 000%d" % len(BODY), body=BODY),
    "chunked": chunked(body=CHUNKED_BODY),
    "chunked in capitals": request(b"Transfer-Encoding: CHUNKED", body=CHUNKED_BODY),
    "chunked with empty list elements": request(b"Transfer-Encoding: , chunked,", body=CHUNKED_BODY),
    "upper-case and padded sizes": chunked(body=b"000%X\r\n" % len(BODY) + BODY + b"\r\n0000\r\n\r\n"),
    "extensions": chunked(body=b'%x;a=1 ; b ;c="x;\\"y\\"" ;d\r\n' % len(BODY) + BODY + b"\r\n0;end\r\n\r\n"),
    "trailers": chunked(body=CHUNKED_BODY[:-2] + b"X-Trailer: 1\r\nX-Other:\r\n\r\n"),
    "obs-text and tabs in values": sized(BODY, b"X-A: caf\xe9\t\xa0ok"),
    "bare LF line ends": request(b"Content-Length: %d" % len(BODY), body=BODY).replace(b"\r\n", b"\n"),
}


@pytest.mark.parametrize("data", VALID.values(), ids=VALID.keys())
def test_a_well_formed_request_is_served_and_framed_exactly(http: HTTPServerThread, data: bytes) -> None:
    # The request pipelined behind it is read from where this one ends: a framing off by a byte would show.
    assert statuses(exchange(http, data + FOLLOW_UP)) == [200, 200]


def test_an_http_1_0_request_is_served_then_closed(http: HTTPServerThread) -> None:
    data = request(b"Content-Length: %d" % len(BODY), line=b"POST /mcp HTTP/1.0", body=BODY)
    assert statuses(exchange(http, data + FOLLOW_UP)) == [200]


@pytest.mark.parametrize("cut", [b"%x\r\n" % len(BODY), b"%x\r\n{" % len(BODY), CHUNKED_BODY[:-2],
                                 CHUNKED_BODY[:-1], b"%x" % len(BODY)])
def test_a_chunked_body_cut_short_is_never_served(http: HTTPServerThread, cut: bytes) -> None:
    assert exchange(http, chunked(body=cut), half_close=True) == b""


# ---- fuzzing ------------------------------------------------------------------------------------------------
# An independent reading of the grammar, in regular expressions, to judge what the fuzzer sends. It keeps the
# server's two documented leniencies (a bare LF ends a head line; empty list elements) and nothing else.
TOKEN = rb"[-!#$%&'*+.^_`|~0-9A-Za-z]+"
FIELD_VCHAR = rb"[\x21-\x7e\x80-\xff]"
FIELD = rb"(" + TOKEN + rb"):[ \t]*(" + FIELD_VCHAR + rb"(?:[ \t\x21-\x7e\x80-\xff]*" + FIELD_VCHAR + rb")?)?[ \t]*"
REQUEST_LINE = re.compile(rb"(" + TOKEN + rb") [\x21-\x7e]+ HTTP/1\.([01])\r?\n")
HEAD_FIELD_LINE = re.compile(FIELD + rb"\r?\n")
TRAILER_LINE = re.compile(FIELD + rb"\r\n")
QUOTED = rb'"(?:[\t \x21\x23-\x5b\x5d-\x7e\x80-\xff]|\\[\t \x21-\x7e\x80-\xff])*"'
CHUNK_LINE = re.compile(rb"([0-9A-Fa-f]+)(?:[ \t]*;[ \t]*" + TOKEN + rb"(?:[ \t]*=[ \t]*(?:" + TOKEN + rb"|" + QUOTED
                        + rb"))?)*\r\n")


def frames_one_request(data: bytes) -> bool:
    """Whether ``data`` starts with one complete, unambiguously framed request (RFC 9112)."""
    match = REQUEST_LINE.match(data)
    if not match:
        return False
    minor, position = match.group(2), match.end()
    fields: Dict[bytes, List[bytes]] = {}
    while not data.startswith((b"\r\n", b"\n"), position):
        match = HEAD_FIELD_LINE.match(data, position)
        if not match:
            return False
        fields.setdefault(match.group(1).lower(), []).append(match.group(2) or b"")
        position = match.end()
    position += 2 if data.startswith(b"\r\n", position) else 1
    hosts, codings, lengths = (fields.get(name, []) for name in (b"host", b"transfer-encoding", b"content-length"))
    if len(hosts) > 1 or (minor == b"1" and not hosts) or len(fields.get(b"mcp-session-id", [])) > 1:
        return False
    if codings:
        elements = [element.strip(b" \t").lower() for value in codings for element in value.split(b",")]
        return not lengths and minor == b"1" and [e for e in elements if e] == [b"chunked"] and \
            chunked_body_is_complete(data, position)
    if lengths:
        values = {element.strip(b" \t") for value in lengths for element in value.split(b",")}
        return len(values) == 1 and re.fullmatch(rb"[0-9]+", next(iter(values))) is not None and \
            len(data) - position >= int(next(iter(values)))
    return True


def chunked_body_is_complete(data: bytes, position: int) -> bool:
    while True:
        match = CHUNK_LINE.match(data, position)
        if not match:
            return False
        size, position = int(match.group(1), 16), match.end()
        if size == 0:
            break
        if data[position + size:position + size + 2] != b"\r\n":
            return False
        position += size + 2
    while not data.startswith(b"\r\n", position):
        match = TRAILER_LINE.match(data, position)
        if not match:
            return False
        position = match.end()
    return True


SEED_REQUEST = chunked(b"Connection: close", body=b"10;x=1\r\n" + BODY[:16] + b'\r\n%x;q="v"\r\n' % (len(BODY) - 16)
                       + BODY[16:] + b"\r\n0\r\nX-Trailer: t\r\n\r\n")
INTERESTING = b"0123456789aAfFxX+- \t\r\n;=\":,\\\x00\x7f\xff"


def mutate(data: bytes, rng: random.Random) -> bytes:
    """One to three random edits: replace, insert or delete a byte, or copy a slice elsewhere."""
    buffer = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        at = rng.randrange(len(buffer) + 1)
        operation = rng.randrange(4)
        if operation == 0 and at < len(buffer):
            buffer[at] = rng.choice(INTERESTING)
        elif operation == 1:
            buffer.insert(at, rng.choice(INTERESTING))
        elif operation == 2 and at < len(buffer):
            del buffer[at]
        else:
            start = rng.randrange(len(buffer))
            buffer[at:at] = buffer[start:start + rng.randint(1, 8)]
    return bytes(buffer)


def test_the_oracle_agrees_with_the_tables() -> None:
    assert frames_one_request(SEED_REQUEST) and all(frames_one_request(data) for data in VALID.values())
    # Only the grammar's refusals: the limits (413, 431) and 501 are the server's choices, not the grammar's.
    assert not any(frames_one_request(chunked(body=body)) for body, status in HOSTILE_BODIES.values() if status == 400)
    assert not any(frames_one_request(data) for data, status in HOSTILE_HEADS.values() if status in (400, 505))


def test_fuzzed_chunked_posts_never_crash_hang_or_pass_malformed(http: HTTPServerThread,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="mcplite")
    assert statuses(exchange(http, SEED_REQUEST)) == [200]
    rng = random.Random(20260728)
    stop = time.monotonic() + 20  # a bound on time as well as on count: the machine is shared
    sent = 0
    while sent < 1000 and time.monotonic() < stop:
        data = mutate(SEED_REQUEST, rng)
        sent += 1
        answer = exchange(http, data, half_close=True)  # exchange() fails the test if the server hangs
        if not answer:
            continue  # closed without a word: the request never ended
        status = int(answer.split(b" ", 2)[1])
        assert status != 500, (data, answer)
        if 200 <= status < 300:
            assert frames_one_request(data), (data, answer)
    assert sent >= 50
    assert statuses(exchange(http, SEED_REQUEST)) == [200]  # and the server still serves
    assert not [record for record in caplog.records if record.exc_info], "a connection thread failed"
