"""HTTP by hand over raw sockets, for requests no well-behaved client would send, and answers no well-behaved
server would.

`exchange` sends bytes on a fresh connection, half-closes it (so a server waiting for more body sees the
end at once rather than after its read timeout), and reads the response head. The socket is closed with
a reset (SO_LINGER 0), so a hundred thousand connections leave no TIME_WAIT behind to exhaust the ports.

For the hostile servers of the client fuzzers: `incoming_requests` reads a client's requests off a socket, and
`response` builds the bytes of any answer, well-formed or not.
"""

import json
import socket
import struct
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

#: The most of a response head `exchange` reads.
MAX_HEAD = 64 * 1024


@dataclass
class Answer:
    """What came back: a status with its headers (and what body had arrived), or how the connection ended."""

    status: Optional[int] = None
    headers: Dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    #: "", or "closed" (ended without a status line), "reset" (connection reset), "timeout" (nothing in time)
    ended: str = ""


def connect(port: int, timeout: float) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def exchange(port: int, data: bytes, timeout: float, *, body_bytes: int = 0) -> Answer:
    """Send ``data`` on a new connection, half-close, and read the response head, plus at least
    ``body_bytes`` of what follows (-1: everything until the server closes)."""
    sock = connect(port, timeout)
    try:
        try:
            sock.sendall(data)
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass  # the server may refuse before reading everything: its answer is still to be read
        return read_answer(sock, body_bytes)
    finally:
        sock.close()


def read_answer(sock: socket.socket, body_bytes: int = 0) -> Answer:
    """Read one response head from ``sock`` (the socket's timeout bounds each read)."""
    received = b""
    try:
        while b"\r\n\r\n" not in received and len(received) < MAX_HEAD:
            chunk = sock.recv(65536)
            if not chunk:
                break
            received += chunk
        head, _, body = received.partition(b"\r\n\r\n")
        while body_bytes and (body_bytes < 0 or len(body) < body_bytes):
            chunk = sock.recv(65536)
            if not chunk:
                break
            body += chunk
            received += chunk
    except socket.timeout:
        return Answer(ended="timeout") if not received or body_bytes else _parse(received)
    except ConnectionResetError:
        return Answer(ended="reset") if not received else _parse(received)
    if not received:
        return Answer(ended="closed")
    return _parse(received)


def _parse(received: bytes) -> Answer:
    head, _, body = received.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    parts = lines[0].split(b" ", 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/") or not parts[1].isdigit():
        return Answer(ended="closed", body=received[:200])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        headers[name.strip().lower().decode("latin-1")] = value.strip().decode("latin-1")
    return Answer(int(parts[1]), headers, body)


def request(method: str, path: str, headers: Sequence[Tuple[str, str]], body: bytes = b"", *,
            version: str = "HTTP/1.1", length: bool = True) -> bytes:
    """The bytes of one request; ``length`` adds a Content-Length for ``body``."""
    lines = [f"{method} {path} {version}", "Host: 127.0.0.1"]
    lines.extend(f"{name}: {value}" for name, value in headers)
    if length and (body or method == "POST"):
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "replace") + body


def json_body(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()




def response(status: int, headers: Sequence[Tuple[str, str]], body: bytes, *, length: bool = True) -> bytes:
    """The bytes of one response; ``length`` adds a Content-Length for ``body`` (leave it out to lie)."""
    lines = [f"HTTP/1.1 {status} X"] + [f"{name}: {value}" for name, value in headers]
    if length:
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "replace") + body


def incoming_requests(sock: socket.socket) -> Iterator[Tuple[str, str, Dict[str, str], bytes]]:
    """Each request a client sends on ``sock``, in order, as (method, target, headers with lower-case names,
    body by its Content-Length), until the client closes. The clients here are ours: no chunked bodies."""
    buffer = b""
    while True:
        while b"\r\n\r\n" not in buffer:
            chunk = sock.recv(65536)
            if not chunk:
                return
            buffer += chunk
        head, _, buffer = buffer.partition(b"\r\n\r\n")
        lines: List[str] = head.decode("latin-1").split("\r\n")
        method, target = (lines[0].split(" ") + ["", ""])[:2]
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0") or "0")
        while len(buffer) < length:
            chunk = sock.recv(65536)
            if not chunk:
                return
            buffer += chunk
        body, buffer = buffer[:length], buffer[length:]
        yield method, target, headers, body
