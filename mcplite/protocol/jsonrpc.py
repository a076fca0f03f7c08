"""JSON-RPC 2.0 messages: build, encode, decode and check them. Pure: no I/O, no threads.

Messages stay plain dicts from the wire to the user; this module only decides what kind of message a dict is and
whether its JSON-RPC frame (``jsonrpc``, ``id``, ``method``, ``result``/``error``) is valid. Anything invalid raises
`InvalidMessage`, which knows the error response to send back (with the request's id when it could be read, else
``null``).

`RequestId` and `Message` are type aliases for type checkers (``if TYPE_CHECKING:``), not run-time names.

What `decode` accepts is portable JSON (`json_text`: no NaN/Infinity, no number beyond a double or longer than
`MAX_NUMBER_LENGTH` characters, no nesting deeper than `MAX_DEPTH`); anything else is a parse error (-32700),
whoever sent it (a client's request, a server's answer, an HTTP body, an SSE event).

Request ids are strings or integers (`is_valid_id`): the spec's ``string | number``, less fractional numbers,
which JSON-RPC says should not be used. An integer id of any length within the number bound is answered as it
came, exactly, even beyond what a double holds (a JavaScript peer would have rounded it; we never do).
When a message breaks one of these rules but can still be read leniently, the error carries its id: a request
is answered with its own id, so its sender fails at once; an answer fails the request it answers.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import re

from ..errors import INVALID_REQUEST, PARSE_ERROR, RemoteProtocolError, RPCError
from . import json_text
from .json_text import MAX_DEPTH, MAX_NUMBER_LENGTH

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see __init__)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Tuple, TypeGuard, Union

    RequestId = Union[str, int]
    Message = Dict[str, Any]

__all__ = [
    "REQUEST", "NOTIFICATION", "RESPONSE", "ERROR", "InvalidMessage",
    "request", "notification", "result", "error", "encode", "decode", "kind_of", "is_valid_id",
    "is_request", "request_ids", "response_ids", "id_in_use", "MAX_DEPTH", "MAX_NUMBER_LENGTH",
    "too_large", "EncodedMessage", "request_with_members", "result_with_members",
]

# The four kinds of message, as returned by `kind_of`.
REQUEST = "request"
NOTIFICATION = "notification"
RESPONSE = "response"
ERROR = "error"

# One encoder for the process (`json_text.encoder`: built once, not per call). allow_nan=False because
# NaN/Infinity are not JSON and other peers' parsers reject them.
_encode = json_text.encoder(ensure_ascii=False)
# The same, escaping everything beyond ASCII: for the rare message holding a string that is not valid Unicode.
_encode_ascii = json_text.encoder(ensure_ascii=True)


class InvalidMessage(RemoteProtocolError):
    """The peer sent something that is not a valid JSON-RPC message.

    ``code`` is the JSON-RPC error code to answer with and ``id`` the id to answer to (``None`` when it
    could not be read, which goes on the wire as ``null``). ``respond`` is false when the offending
    message must not be answered at all (a malformed response: answering it could loop).
    """

    def __init__(self, code: int, message: str, id: Optional[RequestId] = None, respond: bool = True) -> None:
        super().__init__(message)
        self.code = code
        self.id = id
        self.respond = respond

    def response(self) -> Message:
        return error(self.id, self.code, str(self))


def request(id: RequestId, method: str, params: Optional[Dict[str, Any]] = None) -> Message:
    msg: Message = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def notification(method: str, params: Optional[Dict[str, Any]] = None) -> Message:
    msg: Message = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def result(id: RequestId, value: Dict[str, Any]) -> Message:
    return {"jsonrpc": "2.0", "id": id, "result": value}


def error(id: Optional[RequestId], code: int, message: str, data: Any = None) -> Message:
    err: Dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": id, "error": err}


class EncodedMessage(dict):  # type: ignore[type-arg]
    """A message whose JSON text was written when it was made (`result_with_members`, `request_with_members`):
    `encode` writes ``text``.
    To everything else a plain message, whose members the text says (no message is changed once made)."""

    __slots__ = ("text",)
    text: str


def request_with_members(id: RequestId, method: str, head: Dict[str, Any], members: Dict[str, Any],
                         members_text: str) -> Message:
    """The request ``{"jsonrpc": "2.0", "id": id, "method": method, "params": {**head, **members}}``, its text
    written now (`with_members`): a 2026-07-28 client's requests all end with its ``_meta`` envelope."""
    return _with_members(EncodedMessage(jsonrpc="2.0", id=id, method=method, params={**head, **members}),
                         f'{{"jsonrpc":"2.0","id":{_encode(id)},"method":{_encode(method)},"params":',
                         head, members_text)


def result_with_members(id: RequestId, head: Dict[str, Any], members: Dict[str, Any], members_text: str) -> Message:
    """The answer ``{"jsonrpc": "2.0", "id": id, "result": {**head, **members}}``, its text written now
    (`with_members`): a 2026-07-28 server's results all end with ``resultType`` and its server info."""
    return _with_members(EncodedMessage(jsonrpc="2.0", id=id, result={**head, **members}),
                         f'{{"jsonrpc":"2.0","id":{_encode(id)},"result":', head, members_text)


def _with_members(message: EncodedMessage, start: str, head: Dict[str, Any], members_text: str) -> Message:
    """``message``, whose last member is ``head`` followed by members whose text is ``members_text`` (encoded
    once for many messages), with its text written now: ``start``, then ``head`` encoded with ``members_text`` in
    place of its closing brace. A ``head`` that is not JSON gives a plain message, whose encoding fails as any
    other's does."""
    try:
        head_text = _encode(head)
    except (TypeError, ValueError, RecursionError):
        return dict(message)
    separator = "," if len(head_text) > 2 else ""  # (no comma after an empty head's "{")
    message.text = f"{start}{head_text[:-1]}{separator}{members_text[1:]}}}"
    return message


def encode(message: Union[Message, List[Message]]) -> str:
    """Compact JSON text with no newline in it (stdio frames on newlines; json escapes them in strings).

    The text is always valid Unicode, so that it can be written as UTF-8: a string that is not (a lone
    surrogate, which a peer can send as ``"\\ud800"``, valid JSON) is written as its ``\\u`` escape, as it came.
    """
    text = message.text if type(message) is EncodedMessage else _encode(message)
    if text.isascii():  # (most messages: no surrogate can hide in ASCII text)
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _encode_ascii(message)
    return text


def encode_bytes(message: Union[Message, List[Message]]) -> bytes:
    """`encode`, as UTF-8 bytes: what the transports write. One encoding on the common path; a message with a
    string that is not valid Unicode is written with escapes (see `encode`) rather than failing."""
    text = message.text if type(message) is EncodedMessage else _encode(message)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _encode_ascii(message).encode("ascii")


def decode(data: Union[bytes, str]) -> Any:
    """Parse JSON text (UTF-8 bytes or str) within the module's rules (see the module docstring).

    Raises:
        InvalidMessage: -32700 when it is not JSON (or not UTF-8) or breaks a rule. For a message that breaks a
            rule or is not UTF-8 but can still be read, ``id`` is its id and ``respond`` says whether to answer it
            (a request: yes; an answer or a notification: no); else ``id`` is None and the error is answered with
            a null id.
    """
    text: Union[bytes, bytearray, memoryview, str] = data
    try:
        text = bytes(data).decode("utf-8") if isinstance(data, (bytes, bytearray, memoryview)) else data
        return json_text.loads(text)
    except json_text.NotPortableJSON as exc:
        raise _refusal(str(exc), text, exc.value) from None
    except UnicodeDecodeError as exc:
        # Not UTF-8: a byte in another encoding, most often inside a string. Read with the bad bytes replaced, it
        # may still show whose message it was.
        assert isinstance(text, (bytes, bytearray, memoryview))
        bad = bytes(text[exc.start:exc.start + 1]).hex()
        raise _exactly_identified(_refusal(f"not UTF-8 (byte 0x{bad} at {exc.start})", text,
                                           readable=bytes(text).decode("utf-8", "surrogateescape"))) from None
    except ValueError as exc:
        # The text itself, shortened: a stray print() in a stdio server shows up as what it printed.
        raise InvalidMessage(PARSE_ERROR, f"Parse error: {exc}: {_preview(text)}") from None


def _refusal(reason: str, text: Union[bytes, bytearray, memoryview, str], value: Any = None,
             readable: Optional[str] = None) -> InvalidMessage:
    """The parse error for a message that breaks one of the rules, with its id when it can still be read: from
    the message read leniently (``readable``: the text to read, when ``text`` is bytes that are not UTF-8), or
    else (nested too deep even for that) from its two ends, as `too_large` does."""
    if readable is None and isinstance(text, str):
        readable = text
    if value is None and readable is not None:
        try:
            value = json_text.loads_leniently(readable)
        except (ValueError, RecursionError):
            value = None
    if isinstance(value, dict):
        id, respond = _identify(value, value.get("id"))
    elif readable is not None and value is None:
        id, respond = _identify_by_ends(readable[:PEEK_SIZE], readable[-PEEK_SIZE:])
    else:
        id, respond = None, True
    return InvalidMessage(PARSE_ERROR, f"Parse error: {reason}: {_preview(text)}", id, respond)


def _exactly_identified(refusal: InvalidMessage) -> InvalidMessage:
    """``refusal``, read from bytes that are not all UTF-8 (decoded with ``surrogateescape``), without its id
    unless that id was read exactly: an id holding a bad byte (now a surrogate U+DC80..U+DCFF) is not the id the
    peer sent, and JSON-RPC answers ``null`` when the id cannot be told. (A string id escaped as ``"\\udc80"``
    in the JSON is indistinguishable and loses its id too: ``null`` is never a wrong answer.)"""
    id = refusal.id
    if isinstance(id, str) and not all(char < "\udc80" or char > "\udcff" for char in id):
        refusal.id = None
    return refusal


def _identify(members: Dict[str, Any], raw_id: Any) -> Tuple[Optional[RequestId], bool]:
    """(the id to name in the error, whether to answer it) for a message that is unusable but whose members
    ``members`` (all, or those that could be read) and id ``raw_id`` are known.

    A request is answered with its id; an answer is not answered (its id fails the request it answers) and
    neither is a notification; anything else is answered with a null id, as JSON-RPC says.
    """
    if not is_valid_id(raw_id):
        return None, not ("method" in members and "id" not in members)
    if "method" in members:
        return raw_id, True
    if "result" in members or "error" in members:
        return raw_id, False
    return None, True


# ---- a message too large to read: what can be known of it from its two ends ------------------------------
#: How much of each end of an oversized message `too_large` looks at.
PEEK_SIZE = 4096
# The id as the object's last member, or last but "jsonrpc", at the very end of the message: the order of
# the TypeScript SDK ({result, jsonrpc, id}; {method, params, jsonrpc, id}). Anchored at the end, so the "id"
# of an object nested in the message (`{"result":{"id":5}}`) cannot match.
_TRAILING_ID = re.compile(r'"id"\s*:\s*(-?\d{1,20}|"(?:[^"\\]|\\.){0,256}")\s*'
                          r'(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?\}\s*$')


def too_large(limit: int, head: bytes, tail: bytes, setting: str) -> InvalidMessage:
    """The error for a message of more than ``limit`` bytes that was skipped unread, with its id when one end of
    it shows the id: a request is answered with it (-32600), an answer fails the request it answers.

    Args:
        limit: the bound the message broke.
        head, tail: its first and last bytes (`PEEK_SIZE` of each is enough).
        setting: the name of the option that sets the bound, for the message.
    """
    id, respond = _identify_by_ends(head[:PEEK_SIZE].decode("utf-8", "surrogateescape"),
                                    tail[-PEEK_SIZE:].decode("utf-8", "surrogateescape"))
    what = "Invalid Request" if respond else "Invalid response"
    return _exactly_identified(InvalidMessage(
        INVALID_REQUEST, f"{what}: larger than {limit} bytes ({setting}); skipped unread", id, respond))


def _identify_by_ends(head: str, tail: str) -> Tuple[Optional[RequestId], bool]:
    """`_identify` for a message known only by its first and last characters."""
    members = json_text.leading_members(head)
    raw_id = members.get("id")
    if not is_valid_id(raw_id):
        # "method" comes before anything large in every SDK's order; "result"/"error" is the large member itself,
        # so the id, when it is not ahead of it, is at the very end.
        found = _TRAILING_ID.search(tail)
        if found is not None:
            try:
                raw_id = json_text.loads_leniently(found.group(1))
            except ValueError:
                pass
    if not is_valid_id(raw_id):
        return None, True  # a notification, or a request whose id is out of sight: answered with a null id
    return _identify(members, raw_id)


def _preview(data: Union[bytes, bytearray, memoryview, str], limit: int = 80) -> str:
    text = data if isinstance(data, str) else bytes(data[:limit * 4]).decode("utf-8", "backslashreplace")
    text = text.strip()
    return repr(text if len(text) <= limit else text[:limit] + "...")


def is_valid_id(value: Any) -> TypeGuard[RequestId]:
    """Request ids are strings or integers: never bool (a subclass of int in Python), never null."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def is_request(msg: Any) -> bool:
    """A request (it has a method and an id), without checking the rest of its frame."""
    return isinstance(msg, dict) and "method" in msg and "id" in msg


def request_ids(message: Any) -> List[RequestId]:
    """The ids of the requests in one message or a batch: what its answers must respond to."""
    if not isinstance(message, list):  # one message: the common case, with no loop
        return [message["id"]] if is_request(message) else []
    return [item["id"] for item in message if is_request(item)]


def response_ids(message: Any) -> List[RequestId]:
    """The ids of the requests that the responses in one message or a batch answer (null ids left out)."""
    items = message if isinstance(message, list) else (message,)
    return [item["id"] for item in items
            if isinstance(item, dict) and "method" not in item and item.get("id") is not None]


def id_in_use(id: RequestId) -> RPCError:
    """The refusal of a request whose id is still in use by an unanswered request of the same peer.

    The session checks its requests in flight; the HTTP server checks first, when it routes a POST, because
    the answer to a reused id would otherwise travel on the stream of the request that holds the id.
    """
    return RPCError(INVALID_REQUEST, f"Invalid Request: id {id!r} is already in use")


def kind_of(msg: Any) -> str:
    """Check one decoded message's JSON-RPC frame and return its kind: REQUEST, NOTIFICATION, RESPONSE or ERROR.

    Raises `InvalidMessage` (-32600) naming what is wrong, carrying the id when it is a valid one.
    """
    if not isinstance(msg, dict):
        raise InvalidMessage(INVALID_REQUEST, "Invalid Request: a message must be a JSON object")
    raw_id = msg.get("id")
    id = raw_id if is_valid_id(raw_id) else None
    if msg.get("jsonrpc") != "2.0":
        raise InvalidMessage(INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"', id)
    if "method" in msg:
        method = msg["method"]
        if not isinstance(method, str) or not method:
            raise InvalidMessage(INVALID_REQUEST, 'Invalid Request: "method" must be a non-empty string', id)
        params = msg.get("params")
        if params is not None and not isinstance(params, dict):
            # MCP only ever uses by-name params; JSON-RPC's positional arrays have no meaning here.
            raise InvalidMessage(INVALID_REQUEST, 'Invalid Request: "params" must be an object', id)
        if "id" not in msg:
            return NOTIFICATION
        if id is None:
            raise InvalidMessage(INVALID_REQUEST, 'Invalid Request: "id" must be a string or an integer')
        if "result" in msg or "error" in msg:
            raise InvalidMessage(INVALID_REQUEST, "Invalid Request: a request cannot carry a result", id)
        return REQUEST
    # A response. It is never answered, whatever is wrong with it.
    if "result" in msg:
        if "error" in msg:
            raise InvalidMessage(INVALID_REQUEST, "Invalid response: both result and error", id, respond=False)
        if id is None:
            raise InvalidMessage(INVALID_REQUEST, "Invalid response: bad id", id, respond=False)
        if not isinstance(msg["result"], dict):
            raise InvalidMessage(INVALID_REQUEST, "Invalid response: result must be an object", id, respond=False)
        return RESPONSE
    if "error" in msg:
        err = msg["error"]
        if not (isinstance(err, dict) and isinstance(err.get("code"), int) and isinstance(err.get("message"), str)):
            raise InvalidMessage(INVALID_REQUEST, "Invalid error response: bad error object", id, respond=False)
        if raw_id is not None and id is None:
            raise InvalidMessage(INVALID_REQUEST, "Invalid error response: bad id", None, respond=False)
        return ERROR
    raise InvalidMessage(INVALID_REQUEST, "Invalid Request: no method, result or error", id)
