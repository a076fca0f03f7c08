"""Portable JSON: what every peer's parser reads the same. Pure: no I/O.

Python's `json` reads more than JSON, and more than other parsers agree on. `loads` reads the rest as it
does, and refuses, with `NotPortableJSON` naming the rule:

- ``NaN``, ``Infinity`` and ``-Infinity`` (not JSON at all);
- a number that overflows a double (``1e400``): it would come back as ``inf``, which no encoder may write;
- a number token longer than `MAX_NUMBER_LENGTH` (4300) characters: CPython 3.11's integer-conversion limit,
  enforced on every version (on 3.9 and 3.10 converting such an integer costs quadratic time);
- nesting deeper than `MAX_DEPTH` (128) arrays and objects: past that a recursive reader (ours, or the code that
  handles the value) may exhaust the stack, and where that happens would depend on the interpreter.

Integers are otherwise exact, whatever their size (beyond 2**53 too, where a JavaScript peer would round).
`jsonrpc.decode` (every message, on every transport) and the OAuth client's documents read JSON through here.

`encoder` is the writing side's `json.JSONEncoder.encode` without the set-up it repeats for every call
(every answer, every tool's text content is written through one).
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import gc
import json
import re
import sys
from itertools import compress

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional, Tuple, TypeVar

    JSONValue = TypeVar("JSONValue")

__all__ = ["MAX_DEPTH", "MAX_NUMBER_LENGTH", "NotPortableJSON", "loads", "loads_leniently", "leading_members",
           "encoder", "copied"]

#: The deepest nesting of arrays and objects `loads` accepts (serde_json's default; .NET's is 64). Real MCP
#: messages stay well under 30, JSON Schemas included.
MAX_DEPTH = 128
#: The longest number token `loads` accepts, in characters (CPython 3.11's default integer-conversion limit).
MAX_NUMBER_LENGTH = 4300


class NotPortableJSON(ValueError):
    """Valid for Python's `json`, but not JSON every peer reads the same: the message says which rule it breaks.
    ``value`` is the text as parsed, when only its nesting broke the rules (else None)."""

    def __init__(self, message: str, value: Any = None) -> None:
        super().__init__(message)
        self.value = value


def _parse_int(token: str) -> int:
    if len(token) - token.startswith("-") > MAX_NUMBER_LENGTH:
        raise NotPortableJSON(f"an integer of more than {MAX_NUMBER_LENGTH} digits")
    return int(token)


def _parse_float(token: str) -> float:
    if len(token) > MAX_NUMBER_LENGTH:
        raise NotPortableJSON(f"a number of {len(token)} characters (at most {MAX_NUMBER_LENGTH})")
    value = float(token)
    if value - value != 0:  # inf - inf is nan; every finite value gives 0
        raise NotPortableJSON(f"the number {_clip(token)} is beyond the range of a double")
    return value


def _parse_constant(token: str) -> Any:
    raise NotPortableJSON(f"{token} is not JSON")


def _clip(token: str, limit: int = 40) -> str:
    return token if len(token) <= limit else token[:limit] + "..."


def _reader(decoder: json.JSONDecoder) -> Callable[[str], Any]:
    """``decoder.decode``, for less: its scanner called directly (what ``decode`` calls, in C, through two Python
    frames and two regular-expression matches; tests/bench/README.md has the figures).

    Exact: a text the scanner reads whole, up to JSON whitespace (what ``decode`` skips after the value), is what
    ``decode`` returns; anything else (leading whitespace, a value that does not start or that is followed by
    more) is handed to ``decode`` itself, for the same value or the same error.
    """
    # (scan_once: what JSONDecoder.__init__ makes of it, json.scanner's C scanner; typeshed leaves it out)
    scan: Callable[[str, int], Tuple[Any, int]] = decoder.scan_once  # type: ignore[attr-defined]
    whole = decoder.decode

    def read(text: str) -> Any:
        try:
            value, end = scan(text, 0)
        except StopIteration:  # no value at the start (or, nested, where one was expected): decode says which
            return whole(text)
        if end != len(text) and text[end:].strip(" \t\n\r"):
            return whole(text)  # (its "Extra data")
        return value

    return read


# Python's own reader, with the hooks that refuse what is not portable JSON, in four versions. parse_constant only
# runs for NaN/Infinity, which are rare. parse_int runs for every integer, so it is left out where the interpreter
# bounds integer conversion itself at no more than MAX_NUMBER_LENGTH digits (3.11+, the default): then the C
# reader's own int() refuses the long ones, for nothing on the common path. parse_float runs for every fraction;
# a large text does without it and has its floats checked by the walk that checks its nesting (`_inspect`),
# which costs less than a Python call per float.
_DECODERS = {
    (check_ints, check_floats): _reader(json.JSONDecoder(parse_int=_parse_int if check_ints else None,
                                                         parse_float=_parse_float if check_floats else None,
                                                         parse_constant=_parse_constant))
    for check_ints in (False, True) for check_floats in (False, True)
}
_int_digits_limit = getattr(sys, "get_int_max_str_digits", None)  # 3.11+
#: Texts longer than this (characters) have their floats and nesting checked by one walk after parsing.
_WALK_ABOVE = 16 * 1024
#: The longest text without a ``[`` that cannot nest deeper than `MAX_DEPTH`, so needs no bracket count. Without
#: arrays only objects nest, and an object that holds the next level spends at least 5 characters on it
#: (``{``, the member name's two quotes, ``:``, ``}``), the innermost at least 2 (``{}``): nesting deeper
#: than MAX_DEPTH takes 5 * MAX_DEPTH + 2 characters at least. (2026-07-28 requests, with their ``_meta``,
#: are mostly 256 to 640 characters without an array: one memchr instead of two counts.)
_OBJECTS_ONLY_SAFE = 5 * MAX_DEPTH + 1
_INFINITY = float("inf")


def _lenient_int(token: str) -> Optional[int]:
    try:
        return _parse_int(token)
    except ValueError:  # ours, or the interpreter's own digit limit
        return None


# Reads a refused message anyway, for its id alone: every number that is not portable becomes None.
_lenient = json.JSONDecoder(parse_int=_lenient_int, parse_float=lambda token: None,
                            parse_constant=lambda token: None)
#: Reads text that breaks the number rules anyway (every number that is not portable becomes None): to name
#: what an unusable message was, never to use it. Raises ValueError or RecursionError.
loads_leniently = _lenient.decode
_is_container = frozenset((dict, list)).__contains__
_is_float = frozenset((float,)).__contains__
_referents = gc.get_referents

_MEMBER_NAME = re.compile(r'\s*"((?:[^"\\]|\\.)*)"\s*:\s*')
_NEXT_MEMBER = re.compile(r"\s*,")


def loads(text: str) -> Any:
    """Parse JSON text within the rules above.

    Raises:
        NotPortableJSON: valid for Python's `json`, but it breaks a rule (the message names it).
        ValueError: not JSON (`json.JSONDecodeError`).
    """
    limit = _int_digits_limit() if _int_digits_limit is not None else 0
    # Nesting can only be deep where there are many brackets (and so many characters): counting them costs
    # little next to parsing, and nothing for the short messages that are most of them (at most two
    # characters a level, or five without arrays: see _OBJECTS_ONLY_SAFE).
    size = len(text)
    walk = size > _WALK_ABOVE or (size > 2 * MAX_DEPTH and (size > _OBJECTS_ONLY_SAFE or "[" in text)
                                  and text.count("[") + text.count("{") > MAX_DEPTH)
    try:
        value = _DECODERS[not 0 < limit <= MAX_NUMBER_LENGTH, not walk](text)
    except RecursionError:
        raise NotPortableJSON(f"nesting deeper than {MAX_DEPTH} levels") from None
    except NotPortableJSON:
        raise
    except ValueError as exc:
        if "integer string conversion" in str(exc):  # the interpreter's own digit limit (see above)
            raise NotPortableJSON(f"an integer of more than {MAX_NUMBER_LENGTH} digits") from None
        raise
    if walk:
        problem = _inspect(value)
        if problem:
            raise NotPortableJSON(problem, value)
    return value


def _inspect(value: Any) -> str:
    """What breaks the rules in a parsed value, beyond what the parser's hooks saw: nesting deeper than
    `MAX_DEPTH`, or (parsed without the float hook) a number that overflowed to infinity. "" when nothing.

    Breadth first, one level at a time, with the iteration in C: `gc.get_referents` lists the members of a
    whole level at once (a dict's values, a list's items; JSON objects have only str keys), so the Python work
    is per level, not per node.
    """
    if type(value) is float:
        return "a number beyond the range of a double" if value - value != 0 else ""
    level: List[Any] = [value] if _is_container(type(value)) else []
    depth = 0
    while level:
        depth += 1
        if depth > MAX_DEPTH:
            return f"nesting deeper than {MAX_DEPTH} levels"
        members = _referents(*level)
        types = list(map(type, members))
        level = list(compress(members, map(_is_container, types)))
        if float in types:
            floats = list(compress(members, map(_is_float, types)))
            if max(floats) == _INFINITY or min(floats) == -_INFINITY:  # (no NaN: parse_constant refuses it)
                return "a number beyond the range of a double"
    return ""


def leading_members(text: str) -> Dict[str, Any]:
    """The members at the start of a JSON object's text whose values are scalars, up to the first array or
    object (recorded with the value None) or the end of ``text``: what can be read of a message cut short."""
    members: Dict[str, Any] = {}
    start = text.lstrip()
    if not start.startswith("{"):
        return members
    text, pos = start, 1
    while True:
        name = _MEMBER_NAME.match(text, pos)
        if name is None:
            return members
        try:
            key = loads_leniently(f'"{name.group(1)}"')
        except ValueError:
            return members
        pos = name.end()
        if text[pos:pos + 1] in ("[", "{"):
            members[key] = None  # the large value, most likely: nothing after it can be read
            return members
        try:
            members[key], pos = _lenient.raw_decode(text, pos)
        except ValueError:
            return members
        separator = _NEXT_MEMBER.match(text, pos)
        if separator is None:
            return members
        pos = separator.end()


def copied(value: JSONValue) -> JSONValue:
    """A JSON value's own copy: its objects and arrays new, all the way down (strings and numbers are immutable,
    and anything else is returned as it is). What mcplite hands to user code shares nothing with other messages."""
    if isinstance(value, dict):
        return {key: copied(item) for key, item in value.items()}  # type: ignore[return-value]
    if isinstance(value, list):
        return [copied(item) for item in value]  # type: ignore[return-value]
    return value


def encoder(*, ensure_ascii: bool, separators: Tuple[str, str] = (",", ":"),
            allow_nan: bool = False) -> Callable[[Any], str]:
    """``json.JSONEncoder(ensure_ascii=..., separators=..., allow_nan=...).encode``, for less.

    ``JSONEncoder.encode`` builds a new C encoder for every call (its arguments parsed, a closure made, a dict
    for the circular-reference check; tests/bench/README.md has the figures). This
    builds one, once, with no circular-reference check, and joins what it writes: the same text, and the same
    errors for what is not JSON (TypeError, or ValueError for NaN when ``allow_nan`` is false). A value that
    holds itself, which the check would have caught, recurses until RecursionError instead; then the value
    is encoded again by ``encode`` itself, which raises its ValueError ("Circular reference detected").
    Keeping no state, it is shared by every thread (a check's dict could not be: where Python code runs in the
    middle of a value, a thread writing the same shared object would take the other's mark for a cycle). Where
    Python has no C encoder (``json.encoder.c_make_encoder`` None), this is ``encode`` itself.
    """
    whole = json.JSONEncoder(ensure_ascii=ensure_ascii, separators=separators, allow_nan=allow_nan)
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return whole.encode
    strings = json.encoder.encode_basestring_ascii if ensure_ascii else json.encoder.encode_basestring
    item_separator, key_separator = separators
    # The arguments JSONEncoder.iterencode passes, with None for the markers: no circular-reference check.
    chunks = make(None, whole.default, strings, None, key_separator, item_separator, False, False, allow_nan)
    join = "".join

    def encode(value: Any) -> str:
        try:
            return join(chunks(value, 0))
        except RecursionError:
            return whole.encode(value)  # a cycle: its own error; or nested too deep for either: RecursionError

    return encode
