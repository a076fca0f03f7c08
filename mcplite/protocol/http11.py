"""HTTP/1.1 requests as RFC 9112 frames them, strictly: the request line, the header section, how the body is
framed, and a chunked body, each within its limits.

Pure: bytes in, values or `MalformedRequest` out; no sockets, threads or clocks. The standard-library server
(`transports/http_server/stdlib.py`) reads its socket and asks this module what the bytes mean.

Strict on purpose. A request that two parsers could frame differently (a proxy in front of this server, and
this server) is how a second request is smuggled inside the first, so a deviation in anything that decides
where a request ends is refused, never repaired. Two leniencies RFC 9112 allows are kept: a bare LF ends a
line of the request head (2.2), and list fields may hold empty elements (RFC 9110 5.6.1). Inside a chunked
body every line must end in CRLF: bare-LF tolerance there is a known smuggling vector.
"""

from typing import Dict, Optional, Protocol, Tuple

__all__ = [
    "MalformedRequest", "Reader", "MAX_LINE", "MAX_HEADERS", "MAX_HEAD_BYTES", "end_of_head", "parse_request_line",
    "parse_field_line", "parse_header_section", "body_framing", "parse_chunk_size_line", "read_chunked",
]

MAX_LINE = 65536  # the longest request line or header line read
MAX_HEADERS = 100
MAX_HEAD_BYTES = 131072  # the whole header section; each line is also below MAX_LINE
_MAX_CHUNK_LINE = 1024  # a chunk-size line, extensions included
_MAX_CHUNK_SIZE_DIGITS = 16  # significant hex digits: more announces a chunk beyond 2**64 bytes
_MAX_CHUNK_EXTENSIONS = 16384  # bytes of chunk extensions in one body: they are ignored, so bound what they cost
_TCHARS = "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_HEXDIG = "0123456789ABCDEFabcdef"
_DIGIT = "0123456789"  # not str.isdigit(), which also takes "²" and other Unicode digits
_OWS = " \t"
#: Fields a request may carry once (lower-case name -> how an error names it); a repeated one is 400.
_SINGLE_FIELDS = {"host": "Host", "mcp-session-id": "MCP-Session-Id"}


class MalformedRequest(Exception):
    """A request that breaks the HTTP/1.1 grammar or exceeds a parser limit; `status` is the answer to send.

    The connection is closed after the answer: where the next request would begin can no longer be trusted.
    """

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _is_token(text: str) -> bool:
    # strip() eats token characters from both ends and stops at anything else, so only a token leaves nothing.
    return bool(text) and not text.strip(_TCHARS)


def _has_control(text: str) -> bool:
    """Whether ``text`` holds a control character other than HTAB: NUL, CR, LF, ESC, DEL..."""
    if text.isprintable():  # the common case, answered in one pass in C
        return False
    return any((char < " " and char != "\t") or char == "\x7f" for char in text)


def _skip_token(text: str) -> str:
    rest = text.lstrip(_TCHARS)
    if len(rest) == len(text):
        raise MalformedRequest(400, "Bad Request: invalid chunk extension")
    return rest


def _skip_quoted_string(text: str) -> str:
    """What follows the quoted-string that ``text`` starts with (RFC 9110 5.6.4)."""
    index = 1
    while index < len(text):
        char = text[index]
        if char == '"':
            return text[index + 1:]
        if char == "\\":  # quoted-pair: the escaped character may be anything but a control
            index += 1
            char = text[index] if index < len(text) else "\x00"
        if (char < " " and char != "\t") or char == "\x7f":
            break
        index += 1
    raise MalformedRequest(400, "Bad Request: invalid chunk extension")


def parse_request_line(line: bytes) -> Tuple[str, str, str]:
    """``method SP request-target SP HTTP-version`` and its line end -> (method, target, version).

    Exactly one SP between the parts: reading "any whitespace" as a separator is how two parsers come to
    disagree (RFC 9112 3). Raises `MalformedRequest`: 400, or 505 for a well-formed version other than 1.0/1.1.
    """
    text = str(line, "iso-8859-1")
    if text.endswith("\r\n"):
        text = text[:-2]
    elif text.endswith("\n"):
        text = text[:-1]
    else:
        raise MalformedRequest(400, "Bad Request: the request line is incomplete")
    parts = text.split(" ")
    if len(parts) != 3:
        raise MalformedRequest(400, "Bad Request: the request line is not 'method SP target SP version'")
    method, target, version = parts
    if not _is_token(method):
        raise MalformedRequest(400, "Bad Request: the method is not a token")
    if not (target and target.isascii() and target.isprintable()):
        raise MalformedRequest(400, "Bad Request: the request target holds a character that is not visible ASCII")
    if not (len(version) == 8 and version.startswith("HTTP/") and version[5] in _DIGIT and version[6] == "."
            and version[7] in _DIGIT):
        raise MalformedRequest(400, "Bad Request: the HTTP version is malformed")
    if version not in ("HTTP/1.0", "HTTP/1.1"):
        raise MalformedRequest(505, f"HTTP Version Not Supported: {version}")
    return method, target, version


def parse_field_line(line: str) -> Tuple[str, str]:
    """``field-name ":" OWS field-value OWS``, without its line end -> (lower-case name, value).

    Refused with 400: obsolete line folding (a line that starts with SP or HTAB, RFC 9112 5.2), a name that is
    not a token (which includes whitespace before the colon, 5.1), and a control character in the value (bare
    CR, NUL and the like, RFC 9110 5.5). The value may hold obs-text (bytes 0x80-0xFF, read as Latin-1).
    """
    if line[:1] in (" ", "\t"):
        raise MalformedRequest(400, "Bad Request: obsolete line folding")
    name, colon, value = line.partition(":")
    if not colon:
        raise MalformedRequest(400, "Bad Request: a header line has no colon")
    if not _is_token(name):
        raise MalformedRequest(400, "Bad Request: a header name is not a token")
    value = value.strip(_OWS)  # OWS only: str.strip() would also eat "\x0b", "\x1c" and "\xa0"
    if "\r" in value:
        raise MalformedRequest(400, "Bad Request: bare CR in a header value")
    if _has_control(value):
        raise MalformedRequest(400, "Bad Request: control character in a header value")
    return name.lower(), value


def parse_header_section(block: bytes, max_line: int = MAX_LINE, max_fields: int = MAX_HEADERS,
                         max_bytes: int = MAX_HEAD_BYTES) -> Dict[str, str]:
    """The header field lines of a request head, without the empty line that ends them -> {lower-case name: value}.

    Lines end in CRLF or a bare LF; repeated fields are joined with ", " (RFC 9110 5.3), except those that may
    appear once: ``Host`` (RFC 9112 3.2) and ``MCP-Session-Id`` (one session per request), refused with 400.
    A section, a line or a field count beyond the limits is 431 (RFC 6585 5).
    ``block`` may also be a section cut short (the client stopped, or a limit was reached while reading).
    """
    if len(block) > max_bytes:
        raise MalformedRequest(431, "Request Header Fields Too Large: the header section is too large")
    text = str(block, "iso-8859-1").replace("\r\n", "\n")  # a CR left is a bare CR, refused below
    lines = text.split("\n")
    if not lines[-1]:
        lines.pop()  # what follows the last line end
    if len(lines) > max_fields:
        raise MalformedRequest(431, "Request Header Fields Too Large: too many header fields")
    # This runs for every request, so the common case is checked in C: lines of printable characters, and
    # names (all at once, below) of ASCII letters, digits and "-". Anything else goes through `parse_field_line`,
    # the full grammar, which raises on the first line that breaks it.
    headers: Dict[str, str] = {}
    for line in lines:
        if len(line) >= max_line:
            raise MalformedRequest(431, "Request Header Fields Too Large: a header line is too long")
        name, colon, value = line.partition(":")
        if colon and name and line.isprintable():
            name, value = name.lower(), value.strip(_OWS)
        else:
            name, value = parse_field_line(line)
        if name not in headers:
            headers[name] = value
        elif name in _SINGLE_FIELDS:
            raise MalformedRequest(400, f"Bad Request: more than one {_SINGLE_FIELDS[name]} header")
        else:
            headers[name] = f"{headers[name]}, {value}"
    names = "".join(headers)  # lower-cased, which maps no Latin-1 character into ASCII
    if not (names.isascii() and names.replace("-", "").isalnum()):
        for line in lines:
            parse_field_line(line)
    return headers


def body_framing(headers: Dict[str, str], version: str) -> Optional[int]:
    """How a request's body is delimited (RFC 9112 6.3): its length in bytes, or None when it is chunked.

    ``headers`` as `parse_header_section` returns them. Raises `MalformedRequest`:

    - 400 for ``Transfer-Encoding`` together with ``Content-Length`` (which of the two a proxy obeyed cannot be
      known), for ``Transfer-Encoding`` in an HTTP/1.0 request (6.1: its framing is faulty), for codings whose
      final one is not ``chunked`` (6.3: the length cannot be determined, so 400 is a MUST; 501 would suggest
      the request could be framed), and for ``chunked`` applied twice;
    - 501 for a coding applied under a final ``chunked`` (``gzip, chunked``): well framed, but a transfer
      coding this server does not implement (6.1);
    - 400 for a ``Content-Length`` that is not ``1*DIGIT`` (signs, hex, spaces) or a list of differing values;
      a list of one value repeated is that value (RFC 9110 8.6);
    - 413 for a ``Content-Length`` of more than 18 significant digits.
    """
    coding = headers.get("transfer-encoding")
    length = headers.get("content-length")
    if coding is not None:
        if length is not None:
            raise MalformedRequest(400, "Bad Request: both Transfer-Encoding and Content-Length")
        if version != "HTTP/1.1":
            raise MalformedRequest(400, f"Bad Request: Transfer-Encoding in an {version} request")
        codings = [element.strip(_OWS).lower() for element in coding.split(",")]
        codings = [element for element in codings if element]
        if not codings or codings[-1] != "chunked":
            raise MalformedRequest(400, "Bad Request: the final transfer coding is not chunked")
        if "chunked" in codings[:-1]:
            raise MalformedRequest(400, "Bad Request: chunked is applied more than once")
        if len(codings) > 1:
            raise MalformedRequest(501, f"Not Implemented: transfer coding {codings[0]!r}")
        return None
    if length is None:
        return 0
    values = {element.strip(_OWS) for element in length.split(",")}
    value = values.pop()
    if values:
        raise MalformedRequest(400, "Bad Request: Content-Length values differ")
    if not value or value.strip(_DIGIT):
        raise MalformedRequest(400, "Bad Request: invalid Content-Length")
    digits = value.lstrip("0") or "0"
    if len(digits) > 18:
        raise MalformedRequest(413, "Payload Too Large")
    return int(digits)


def parse_chunk_size_line(line: bytes) -> int:
    """``chunk-size [ chunk-ext ] CRLF`` -> the chunk size (RFC 9112 7.1).

    chunk-size is ``1*HEXDIG``: no sign, no ``0x``, no ``_``, no surrounding whitespace (all of which ``int(x,
    16)`` would take). Extensions are ignored but must be well formed, ``*( BWS ";" BWS name [ BWS "=" BWS
    value ] )`` with a token or quoted-string value, so that no other parser can read a line end inside one.
    Raises `MalformedRequest`: 400, or 413 for a size of more than 16 significant hex digits.
    """
    if not line.endswith(b"\r\n"):
        raise MalformedRequest(400, "Bad Request: a chunk-size line does not end in CRLF")
    text = str(line[:-2], "iso-8859-1")
    extensions = text.lstrip(_HEXDIG)
    digits = text[:len(text) - len(extensions)]
    if not digits:
        raise MalformedRequest(400, "Bad Request: invalid chunk size")
    if extensions and extensions.lstrip(_OWS)[:1] != ";":
        raise MalformedRequest(400, "Bad Request: invalid chunk size")
    rest = extensions
    while rest:
        rest = rest.lstrip(_OWS)
        if rest[:1] != ";":
            raise MalformedRequest(400, "Bad Request: invalid chunk extension")
        rest = _skip_token(rest[1:].lstrip(_OWS))
        after_name = rest.lstrip(_OWS)
        if after_name[:1] == "=":
            value = after_name[1:].lstrip(_OWS)
            rest = _skip_quoted_string(value) if value[:1] == '"' else _skip_token(value)
    significant = digits.lstrip("0") or "0"
    if len(significant) > _MAX_CHUNK_SIZE_DIGITS:
        raise MalformedRequest(413, "Payload Too Large")
    return int(significant, 16)


def end_of_head(buffer: bytearray, searched: int) -> int:
    """Where the empty line that ends a request's header fields ends in ``buffer``; 0 if it has not arrived.

    Lines end with CRLF or a bare LF; there may be no fields at all. The first ``searched`` bytes have been
    searched before, but an empty line may begin in their last two.
    """
    for empty_head in (b"\r\n", b"\n"):
        if buffer.startswith(empty_head):
            return len(empty_head)
    since = max(searched - 2, 0)
    crlf, lf = buffer.find(b"\n\r\n", since), buffer.find(b"\n\n", since)
    if crlf >= 0 and (lf < 0 or crlf < lf):
        return crlf + 3
    return lf + 2 if lf >= 0 else 0


class Reader(Protocol):
    """Where a chunked body is read from: a connection's buffered input, or `io.BytesIO`."""

    def readline(self, limit: int) -> bytes:
        """One line with its "\\n", cut at ``limit`` bytes; shorter at the end of the input."""
        ...

    def read(self, size: int) -> bytes:
        """``size`` bytes; fewer at the end of the input."""
        ...


def read_chunked(reader: Reader, limit: int) -> Optional[bytes]:
    """A chunked body (RFC 9112 7.1) of at most ``limit`` bytes, its trailer section checked and dropped; None
    if the input ends first (the client left).

    Every line ends in CRLF, and so does every chunk's data. Raises `MalformedRequest`.
    """
    body = bytearray()
    extension_bytes = 0
    while True:
        line = reader.readline(_MAX_CHUNK_LINE)
        if not line.endswith(b"\n"):
            if len(line) < _MAX_CHUNK_LINE:
                return None
            raise MalformedRequest(400, "Bad Request: a chunk-size line is too long")
        size = parse_chunk_size_line(line)
        semicolon = line.find(b";")
        if semicolon >= 0:  # ignored, yet read: a flood of extensions must still end
            extension_bytes += len(line) - semicolon
            if extension_bytes > _MAX_CHUNK_EXTENSIONS:
                raise MalformedRequest(413, "Payload Too Large: too many chunk extensions")
        if size == 0:
            return bytes(body) if _read_trailer_section(reader) else None
        if len(body) + size > limit:
            raise MalformedRequest(413, "Payload Too Large")
        chunk = reader.read(size + 2)
        if len(chunk) < size + 2:
            return None
        if not chunk.endswith(b"\r\n"):
            raise MalformedRequest(400, "Bad Request: chunk data does not end in CRLF")
        body += chunk[:size]


def _read_trailer_section(reader: Reader) -> bool:
    """Read the trailer fields after the last chunk, up to the empty line; False if the client left.

    No trailer field is used, but each must be a well-formed field line ending in CRLF, and the section is
    bounded as the header section is: as many lines, each as long, and as many bytes in all. Raises
    `MalformedRequest`.
    """
    size = 0
    for _ in range(MAX_HEADERS + 1):
        line = reader.readline(MAX_LINE)
        if line == b"\r\n":
            return True
        if not line.endswith(b"\n"):
            if len(line) < MAX_LINE:
                return False
            raise MalformedRequest(431, "Request Header Fields Too Large: a trailer line is too long")
        size += len(line)
        if size > MAX_HEAD_BYTES:
            raise MalformedRequest(431, "Request Header Fields Too Large: the trailer section is too large")
        if not line.endswith(b"\r\n"):
            raise MalformedRequest(400, "Bad Request: a trailer line does not end in CRLF")
        parse_field_line(str(line[:-2], "iso-8859-1"))
    raise MalformedRequest(431, "Request Header Fields Too Large: too many trailer fields")
