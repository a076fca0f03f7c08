"""Decoding a connection's messages that end with the same ``_meta``: its text parsed once. Pure: no I/O.

A 2026-07-28 client puts the same envelope on every request it sends (protocol version, client capabilities,
client info), and, as the official SDKs and mcplite write it, last: ``..."_meta":{...}}}``. Parsing those
couple of hundred bytes again for every request was most of what a 2026-07-28 ``tools/call`` cost the server
beyond a 2025-11-25 one (``tests/bench/profile_eras.py``). A 2026-07-28 server's results end the same way
(``_meta`` with its server info), for the client's reader. `RepeatedMetaDecoder.decode` gives exactly what
`jsonrpc.decode` gives for every input, and reads a repeated envelope's text only once.

How, and why it is exact. Once a connection has sent two messages in a row whose texts end with the same
``"_meta":RAW}}`` (RAW a small JSON object, parsed and checked by itself then, under every rule of
`json_text`), a line ``P"_meta":RAW}}`` is decoded as ``P"_meta":"N"}}``, where ``N`` is a random nonce of
this decoder's that never leaves it, and is used only when that parses and its ``params._meta`` (or, in an
answer, ``result._meta``) is ``N``:

- the replaced text is a complete JSON value (RAW), so where the shorter text parses, the original parses to
  the same value but for that one member, and breaks no rule the shorter one keeps: RAW broke none, nests at
  most `_MAX_BRACKETS` deep below the two objects around it, and every other token is the same;
- the member holding ``N`` is the one whose text was replaced: the suffix can only be read as tokens, a
  member's name and value (``P`` cannot end inside a string, or the quote before ``_meta`` would end the
  string and ``_meta`` not parse; nor before a value, or the ``:`` after ``"_meta"`` would not parse), and no
  peer can write ``N`` anywhere else without knowing it.

Anything else (no learned suffix, another ending, a shorter text that does not parse or puts ``N`` elsewhere)
is decoded whole, as `jsonrpc.decode` always did, errors included: the fallback is the only path that raises.

What a repeated ``_meta`` decodes to is shared. Each message gets a dict of its own for it, whose values (the
capabilities, client and server info objects) are those of the message it was learned from. A decoder made
with ``share_requests`` (a server's stdio reader) goes further for requests: a request's ``_meta`` is the
learned dict itself, the same object in every request that repeated it (the one the request it was learned
from was given), so that the server session, which keeps the envelope it last accepted (`session.server`),
tells a repeat by identity, and neither copies nor compares a dict per request. There, code that reads a
request never changes its ``_meta``: the server hands its handlers a copy (`Context.meta`). Elsewhere
(notifications, answers, a client's reader, whose caller is handed what it reads) a dict each.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import os

from .jsonrpc import InvalidMessage, decode

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    from typing import Any, Dict, Optional

__all__ = ["RepeatedMetaDecoder"]

_KEY = b'"_meta"'
#: The largest envelope text the decoder learns (bytes): real ones are 150 to 400.
_MAX_RAW = 2048
#: At most this many ``{`` and ``[`` in a learned envelope, which bounds how deep it nests (see the docstring).
_MAX_BRACKETS = 16


class RepeatedMetaDecoder:
    """`jsonrpc.decode` for one connection's lines, reading a ``_meta`` that repeats only once (see above).

    One per connection, used by its reader thread alone (no lock). ``decode(line)`` takes one framed message,
    its line ending included or not, and returns or raises exactly what ``jsonrpc.decode(line)`` does; a line
    that is not ``bytes`` (a bytearray, a memoryview) is always decoded whole. ``share_requests``: requests
    that repeat the learned ``_meta`` all get the one dict (see above).
    """

    __slots__ = ("_suffix", "_stand_in", "_stand_in_text", "_meta", "_candidate", "_share")

    def __init__(self, share_requests: bool = False) -> None:
        self._share = share_requests
        #: The learned ending (``"_meta":RAW}}`` and the line end), or None; its text with RAW replaced by
        #: the nonce; and RAW's value.
        self._suffix: Optional[bytes] = None
        self._stand_in = os.urandom(16).hex()  # (os, not secrets: no more to import at start-up)
        self._stand_in_text = b""
        self._meta: Dict[str, Any] = {}
        #: The ending of the last line decoded whole that could be learned: learned when the next one repeats it.
        self._candidate: Optional[bytes] = None

    def decode(self, line: bytes) -> Any:
        suffix = self._suffix
        # removesuffix checks and cuts in one call, and gives back the very line when it does not end so (for
        # bytes exactly: what the transports read). endswith and a slice took 1.8x the instructions, through
        # code no other step of a request runs (argument parsing, a slice object), so with more cache misses.
        before = line.removesuffix(suffix) if suffix is not None and type(line) is bytes else line
        if before is not line:
            try:
                value = decode(before + self._stand_in_text)
            except InvalidMessage:
                value = None  # decoded whole below, for the error the original text deserves
            if type(value) is dict:
                params = value.get("params")
                if type(params) is dict and params.get("_meta") == self._stand_in:
                    # A request's, where shared: the learned dict itself (see the module docstring).
                    params["_meta"] = self._meta if self._share and "id" in value else self._meta.copy()
                    return value
                result = value.get("result")
                if type(result) is dict and result.get("_meta") == self._stand_in:
                    result["_meta"] = self._meta.copy()  # an answer's: a dict of its own
                    return value
        value = decode(line)
        if type(value) is dict:
            params = value.get("params")
            holder = params or value.get("result")
            if type(holder) is dict and type(holder.get("_meta")) is dict and type(line) is bytes:
                self._consider(line, holder["_meta"], self._share and holder is params and "id" in value)
        return value

    def _consider(self, line: bytes, meta_read: Dict[str, Any], shared: bool) -> None:
        """Learn ``line``'s ending if the last line decoded whole ended the same way (one parse of RAW, not one
        per request of a client whose ``_meta`` changes every time). ``meta_read``: the ``_meta`` its message
        was given; ``shared``: a request's, on a decoder that shares requests' ``_meta``."""
        end = len(line)
        while end and line[end - 1] in b" \t\r\n":
            end -= 1
        start = line.rfind(_KEY, 0, end)
        if start < 0 or end - start > _MAX_RAW + 16 or line[end - 2:end] != b"}}":
            return  # (nor is a long ending kept as the candidate)
        ending = line[start:]
        if ending != self._candidate:
            self._candidate = ending
            return
        raw = line[start + len(_KEY):end - 2].lstrip()
        if not raw.startswith(b":"):
            return
        raw = raw[1:]
        if len(raw) > _MAX_RAW or raw.count(b"{") + raw.count(b"[") > _MAX_BRACKETS:
            return
        try:
            meta = decode(raw)
        except InvalidMessage:
            return
        if type(meta) is not dict:
            return
        if meta == meta_read:
            # A shared request's very dict, for every later repeat (see the module docstring): the server session
            # keeps it when this request is the first to repeat the envelope it accepted, and tells the later
            # ones by identity. Otherwise its values, in a dict of the decoder's own (that one is the message's),
            # so that a session comparing each later _meta with one it kept of this message finds the same
            # objects.
            meta = meta_read if shared else dict(meta_read)
        self._suffix, self._meta = ending, meta
        self._stand_in_text = _KEY + b':"' + self._stand_in.encode("ascii") + b'"' + line[end - 2:]
