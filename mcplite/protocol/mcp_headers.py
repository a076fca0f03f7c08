"""The request headers of revision 2026-07-28 that mirror the body: `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`.

Pure: no I/O, threads or clocks. Sources: the spec's ``basic/transports/streamable-http.mdx`` (2026-07-28),
sections "Standard Request Headers", "Custom Headers from Tool Parameters", "Value Encoding" and "Server
Validation"; ../shared/spec/CONFORMANCE-2026.md §4.0, §4.3, §4.4, §5.4, §5.5; ../shared/design/MODERN.md.

- A client sends `Mcp-Method` (the body's ``method``) on every request, `Mcp-Name` (``params.name``,
  ``params.uri`` or, under the tasks extension, ``params.taskId``) on the methods that name a target, and
  `Mcp-Param-{Name}` for each tool argument whose property carries ``"x-mcp-header": "{Name}"``.
- Values travel plain when they are visible ASCII or inner spaces, else as ``=?base64?{UTF-8 in base64}?=``
  (also any plain value that looks like that sentinel). `encode_value` and `decode_value` are the codec.
- A server compares each header with the body (after decoding; integers numerically) and refuses a missing,
  malformed or different one with HTTP 400 and JSON-RPC `-32020` (`check_request_headers`).
- A tool's ``x-mcp-header`` annotations are checked and turned into a map once, at registration
  (`header_map`), so that no call reads the schema again. A client drops a tool whose annotations are
  invalid (`check_schema` says why); a server refuses to register it (`header_map` raises `ValueError`).

A sibling of `http_rules` rather than part of it: `http_rules` is on every HTTP message's start-up path and
serves every revision, while these rules concern one revision and a tool schema walk that most processes
never need.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import binascii

from ..errors import HEADER_MISMATCH, RPCError
from . import methods
from .http_rules import PROTOCOL_VERSION_HEADER

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping, Optional, Tuple

__all__ = [
    "METHOD_HEADER", "NAME_HEADER", "PARAM_HEADER_PREFIX", "MAX_SAFE_INTEGER", "BASE64_PREFIX", "BASE64_SUFFIX",
    "NAME_FIELDS", "HeaderValueError", "ParamHeader", "encode_value", "decode_value", "check_schema",
    "header_map", "param_headers", "standard_headers", "check_request_headers", "check_param_headers",
]

#: The body's ``method``, on every request.
METHOD_HEADER = "Mcp-Method"
#: The target the request names (see `NAME_FIELDS`).
NAME_HEADER = "Mcp-Name"
#: Followed by the value of a property's ``x-mcp-header``: ``Mcp-Param-Region``.
PARAM_HEADER_PREFIX = "Mcp-Param-"

#: Integers in headers stay within JavaScript's safe range, ±(2^53 - 1) (spec: "Schema Extension").
MAX_SAFE_INTEGER = 2 ** 53 - 1

#: The sentinel around a base64 value; case-sensitive, exactly as written.
BASE64_PREFIX = "=?base64?"
BASE64_SUFFIX = "?="
#: Optional whitespace around a header value (RFC 9110), which receivers trim.
_OWS = " \t"
_SENTINEL_MIN = len(BASE64_PREFIX) + len(BASE64_SUFFIX)  # "=?base64?=" is too short to be a wrapper

#: method -> the ``params`` field that `Mcp-Name` mirrors. The ``tasks/*`` rows belong to the tasks extension
#: (CONFORMANCE-2026.md §4.7): a client without it never sends those methods.
NAME_FIELDS: Mapping[str, str] = {
    methods.TOOLS_CALL: "name",
    methods.PROMPTS_GET: "name",
    methods.RESOURCES_READ: "uri",
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}

#: RFC 9110 `tchar`: what a header name (and so an ``x-mcp-header`` value) may be made of.
_TCHARS = frozenset("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
#: What a property may be declared as to carry a header ("number" is not allowed: sep-2243).
_HEADER_TYPES = ("string", "integer", "boolean")
#: Schema keywords whose value maps names to subschemas (the names are not keywords).
_NAMED_SUBSCHEMAS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
#: Schema keywords whose value is data, not a schema: an "x-mcp-header" key inside is not an annotation.
_DATA_KEYWORDS = ("const", "default", "enum", "examples")


class HeaderValueError(ValueError):
    """A value cannot be carried in a header (encoding), or a header's value is malformed (decoding)."""


class ParamHeader:
    """One ``x-mcp-header`` annotation of a tool's input schema, checked (see `header_map`).

    - ``path``: the argument's property path from the schema root (``("region",)``, or deeper for nested
      objects);
    - ``header``: the full header name, ``Mcp-Param-{x-mcp-header}``, as declared;
    - ``key``: the same in lower case, for looking it up among received headers;
    - ``type``: ``"string"``, ``"integer"`` or ``"boolean"``, which decides how values compare.
    """

    __slots__ = ("path", "header", "key", "type")

    def __init__(self, path: Tuple[str, ...], header: str, type: str) -> None:
        self.path = path
        self.header = header
        self.key = header.lower()
        self.type = type

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, ParamHeader) and self.path == other.path and self.header == other.header
                and self.type == other.type)

    def __repr__(self) -> str:
        return f"ParamHeader({self.path!r}, {self.header!r}, {self.type!r})"


# -- values --------------------------------------------------------------------------------------------------

def _is_plain(text: str) -> bool:
    """Can ``text`` travel as it is: visible ASCII and inner spaces only, and not mistakable for the sentinel."""
    if not text:
        return True
    if text[0] == " " or text[-1] == " ":
        return False  # a receiver trims them
    for char in text:
        if not " " <= char <= "~":
            return False  # control characters (tab included), DEL, non-ASCII
    return not (text.startswith(BASE64_PREFIX) and text.endswith(BASE64_SUFFIX))


def encode_value(value: Any) -> str:
    """The header text of one value: a string, an integer within ±(2^53 - 1), or a boolean.

    A string that cannot travel plain (non-ASCII, control characters, leading or trailing spaces, or the
    look of the sentinel) becomes ``=?base64?…?=``; an integer becomes decimal text; a boolean ``true`` or
    ``false``. An integral float (JSON's ``3.0``) counts as an integer. Raises `HeaderValueError` otherwise;
    ``None`` is not a value (its header is omitted).
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int):
        if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
            return str(value)
        raise HeaderValueError(f"integer {value} is outside the safe range ±(2^53 - 1)")
    if isinstance(value, str):
        if _is_plain(value):
            return value
        encoded = binascii.b2a_base64(value.encode("utf-8"), newline=False).decode("ascii")
        return f"{BASE64_PREFIX}{encoded}{BASE64_SUFFIX}"
    raise HeaderValueError(f"a {type(value).__name__} value cannot be carried in a header "
                           "(only strings, integers and booleans)")


def decode_value(raw: str) -> str:
    """The text a received header value stands for: trimmed, and unwrapped from ``=?base64?…?=``.

    A value counts as base64 only when it is wrapped on both sides (``=?base64?SGVsbG8=`` is a literal).
    The base64 must be strict and canonical (padding present, alphabet only) and hold UTF-8. Raises
    `HeaderValueError` for such a wrapper, and for characters a header value may not hold (RFC 9110: visible
    ASCII, space and tab).
    """
    text = raw.strip(_OWS)
    for char in text:
        if not (" " <= char <= "~" or char == "\t"):
            raise HeaderValueError(f"invalid character {char!r}")
    if len(text) < _SENTINEL_MIN or not (text.startswith(BASE64_PREFIX) and text.endswith(BASE64_SUFFIX)):
        return text
    inner = text[len(BASE64_PREFIX):-len(BASE64_SUFFIX)]
    try:
        data = binascii.a2b_base64(inner)
    except binascii.Error as exc:
        raise HeaderValueError(f"invalid base64: {exc}") from None
    # a2b_base64 skips characters outside the alphabet and accepts stray bits: only the canonical spelling of
    # the bytes it read is strict base64.
    if binascii.b2a_base64(data, newline=False).decode("ascii") != inner:
        raise HeaderValueError("invalid base64: not the canonical encoding (stray characters or padding)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise HeaderValueError("invalid base64: the bytes are not UTF-8") from None


def _integer_of(text: str) -> Optional[int]:
    """The integer a header's text denotes, compared numerically: ``42``, ``042``, ``+42`` and ``42.0`` are
    all 42. None when the text is not a decimal number or not integral (``4.2``, ``1e3``, ``0x2a``)."""
    if text[:1] in "+-":
        sign, text = text[0], text[1:]
    else:
        sign = ""
    whole, dot, fraction = text.partition(".")
    if not (whole.isdigit() and whole.isascii()):
        return None
    if dot and not (fraction.isdigit() and fraction.isascii() and fraction.strip("0") == ""):
        return None
    return int(sign + whole)


def _body_text(value: Any) -> str:
    """A body value as an error message shows it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _matches(kind: str, text: str, value: Any) -> bool:
    """Does a decoded header ``text`` stand for the body ``value`` of a ``kind`` parameter?"""
    if kind == "integer":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        if isinstance(value, float):
            if not value.is_integer():
                return False
            value = int(value)
        return bool(_integer_of(text) == value)
    if kind == "boolean":
        return isinstance(value, bool) and text == ("true" if value else "false")
    return isinstance(value, str) and text == value


# -- schemas -------------------------------------------------------------------------------------------------

def _declared_type(schema: Mapping[str, Any]) -> Optional[str]:
    """The one header type a property declares (``["string", "null"]`` counts as string), or None."""
    declared = schema.get("type")
    if isinstance(declared, str):
        return declared if declared in _HEADER_TYPES else None
    if isinstance(declared, list):
        kinds = [kind for kind in declared if kind != "null"]
        if len(kinds) == 1 and kinds[0] in _HEADER_TYPES:
            return kinds[0]  # type: ignore[no-any-return]
    return None


def _bounds_problem(schema: Mapping[str, Any]) -> Optional[str]:
    """Why an integer property's bounds leave the safe range, or None."""
    for keyword, limit in (("minimum", MAX_SAFE_INTEGER), ("maximum", MAX_SAFE_INTEGER),
                           ("exclusiveMinimum", MAX_SAFE_INTEGER + 1), ("exclusiveMaximum", MAX_SAFE_INTEGER + 1)):
        bound = schema.get(keyword)
        if isinstance(bound, (int, float)) and not isinstance(bound, bool) and not -limit <= bound <= limit:
            return f"{keyword} {bound} is outside the safe integer range ±(2^53 - 1)"
    return None


def _annotation_problem(where: str, schema: Mapping[str, Any], seen: Dict[str, str]) -> Optional[str]:
    """Why the ``x-mcp-header`` of the property at ``where`` is invalid, or None (and ``seen`` records it)."""
    name = schema["x-mcp-header"]
    if not isinstance(name, str):
        return f"x-mcp-header of {where} must be a string, not {name!r}"
    if name == "":
        return f"x-mcp-header of {where} is empty"
    bad = [char for char in name if char not in _TCHARS]
    if bad:
        return (f"x-mcp-header {name!r} of {where} is not an HTTP header-name token "
                f"(character {bad[0]!r} is not allowed)")
    other = seen.get(name.lower())
    if other is not None:
        return f"x-mcp-header {name!r} of {where} repeats the one of {other} (names are case-insensitive)"
    seen[name.lower()] = where
    kind = _declared_type(schema)
    if kind is None:
        return (f"x-mcp-header {name!r} of {where}: the property's type {schema.get('type')!r} cannot carry a "
                "header (only string, integer or boolean)")
    if kind == "integer":
        problem = _bounds_problem(schema)
        if problem is not None:
            return f"x-mcp-header {name!r} of {where}: {problem}"
    return None


def _stray_annotation(schema: Any, pointer: str) -> Optional[str]:
    """The JSON pointer of an ``x-mcp-header`` inside ``schema`` (a subschema reached through a keyword other
    than ``properties``, where no annotation may be), or None."""
    if isinstance(schema, list):
        for index, item in enumerate(schema):
            found = _stray_annotation(item, f"{pointer}/{index}")
            if found is not None:
                return found
        return None
    if not isinstance(schema, dict):
        return None
    if "x-mcp-header" in schema:
        return pointer or "/"
    for keyword, value in schema.items():
        if keyword in _DATA_KEYWORDS:
            continue
        if keyword in _NAMED_SUBSCHEMAS and isinstance(value, dict):
            for name, subschema in value.items():
                found = _stray_annotation(subschema, f"{pointer}/{keyword}/{name}")
                if found is not None:
                    return found
        else:
            found = _stray_annotation(value, f"{pointer}/{keyword}")
            if found is not None:
                return found
    return None


def _walk(schema: Mapping[str, Any], path: Tuple[str, ...], pointer: str, seen: Dict[str, str],
          found: List[ParamHeader]) -> Optional[str]:
    """Collect the annotations statically reachable from ``schema`` (through ``properties`` only) into
    ``found``; return the first problem, or None."""
    for keyword, value in schema.items():
        if keyword in _DATA_KEYWORDS or keyword == "x-mcp-header":
            continue
        if keyword != "properties" or not isinstance(value, dict):
            stray = _stray_annotation(value, f"{pointer}/{keyword}")
            if stray is not None:
                return (f"x-mcp-header at {stray} is not reachable from the schema root through `properties` "
                        "alone")
            continue
        for name, subschema in value.items():
            if not isinstance(subschema, dict):
                continue
            sub_path = path + (name,)
            sub_pointer = f"{pointer}/properties/{name}"
            if "x-mcp-header" in subschema:
                problem = _annotation_problem(".".join(sub_path), subschema, seen)
                if problem is not None:
                    return problem
                found.append(ParamHeader(sub_path, PARAM_HEADER_PREFIX + subschema["x-mcp-header"],
                                         _declared_type(subschema) or "string"))
            problem = _walk(subschema, sub_path, sub_pointer, seen, found)
            if problem is not None:
                return problem
    return None


def _scan(input_schema: Any) -> Tuple[Optional[str], List[ParamHeader]]:
    if not isinstance(input_schema, dict):
        return f"the input schema must be an object, not {type(input_schema).__name__}", []
    if "x-mcp-header" in input_schema:
        return "x-mcp-header on the schema root (only a property can carry a header)", []
    found: List[ParamHeader] = []
    problem = _walk(input_schema, (), "", {}, found)
    return problem, found


def check_schema(input_schema: Any) -> Optional[str]:
    """Why a tool's ``inputSchema`` carries an invalid ``x-mcp-header``, or None when all are valid.

    A client drops such a tool from its list (and should log the reason). The rules: only on properties
    reached from the root through ``properties`` alone; a non-empty RFC 9110 token, unique case-insensitively;
    only on ``string``, ``integer`` or ``boolean`` properties; integer bounds within ±(2^53 - 1).
    """
    return _scan(input_schema)[0]


def header_map(input_schema: Any) -> Dict[Tuple[str, ...], ParamHeader]:
    """The checked ``x-mcp-header`` annotations of a tool's ``inputSchema``: ``{property path: ParamHeader}``.

    Computed once when the tool is registered or listed. Raises `ValueError` naming the first problem (see
    `check_schema`). A schema without annotations gives an empty map.
    """
    problem, found = _scan(input_schema)
    if problem is not None:
        raise ValueError(problem)
    return {entry.path: entry for entry in found}


# -- requests ------------------------------------------------------------------------------------------------

_ABSENT = object()


def _argument(arguments: Any, path: Tuple[str, ...]) -> Any:
    """The argument at ``path``, or `_ABSENT` when there is none (null counts as none: no header)."""
    value = arguments
    for name in path:
        if not isinstance(value, dict):
            return _ABSENT
        value = value.get(name, _ABSENT)
        if value is _ABSENT:
            return _ABSENT
    return _ABSENT if value is None else value


def param_headers(param_map: Mapping[Tuple[str, ...], ParamHeader], arguments: Any) -> Dict[str, str]:
    """The ``Mcp-Param-*`` headers a client sends with a ``tools/call`` carrying ``arguments``.

    An argument that is null or absent gets no header. Raises `HeaderValueError` for a value that cannot be
    carried (an integer outside the safe range, an object where a string was declared).
    """
    headers: Dict[str, str] = {}
    for entry in param_map.values():
        value = _argument(arguments, entry.path)
        if value is not _ABSENT:
            try:
                headers[entry.header] = encode_value(value)
            except HeaderValueError as exc:
                raise HeaderValueError(f"argument {'.'.join(entry.path)!r} for {entry.header}: {exc}") from None
    return headers


def standard_headers(message: Any) -> Dict[str, str]:
    """The headers that mirror a request's body: `Mcp-Method`, `Mcp-Name` where the method names a target
    (encoded like any value), and `MCP-Protocol-Version` when the body's ``_meta`` states one."""
    headers: Dict[str, str] = {}
    if not isinstance(message, dict):
        return headers
    method = message.get("method")
    if not isinstance(method, str):
        return headers
    params = message.get("params")
    if isinstance(params, dict):
        meta = params.get("_meta")
        if isinstance(meta, dict) and isinstance(meta.get(methods.PROTOCOL_VERSION_KEY), str):
            headers[PROTOCOL_VERSION_HEADER] = meta[methods.PROTOCOL_VERSION_KEY]
    headers[METHOD_HEADER] = method
    field = NAME_FIELDS.get(method)
    if field is not None and isinstance(params, dict) and isinstance(params.get(field), str):
        headers[NAME_HEADER] = encode_value(params[field])
    return headers


def _mismatch(message: str) -> RPCError:
    return RPCError(HEADER_MISMATCH, f"Header mismatch: {message}")


def _missing(header: str) -> RPCError:
    return _mismatch(f"missing required {header} header")


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return "integer"
    return {float: "number", str: "string", list: "array", dict: "object"}.get(type(value), type(value).__name__)


def _a(noun: str) -> str:
    return f"an {noun}" if noun[:1] in "aeiou" else f"a {noun}"


def _differs(header: str, raw: str, body: Any, kind: str = "string") -> RPCError:
    shown = raw.strip(_OWS)
    body_type = _json_type(body)
    # "'1' does not match '1'" would puzzle: say when the body's value is not of the declared type.
    aside = "" if body_type == kind else f" ({_a(body_type)}, not {_a(kind)})"
    return _mismatch(f"{header} header value '{shown}' does not match body value '{_body_text(body)}'{aside}")


def _invalid(header: str, raw: str, problem: HeaderValueError) -> RPCError:
    shown = raw.strip(_OWS)
    return _mismatch(f"{header} header value '{shown}' is malformed: {problem}")


def check_request_headers(headers: Mapping[str, str], message: Any,
                          param_map: Optional[Mapping[Tuple[str, ...], ParamHeader]] = None) -> Optional[RPCError]:
    """None when the mirrored headers match the body, else the `-32020` error to answer with (HTTP 400).

    ``headers``: the received headers, names in any case (values trimmed before comparing; repeated headers
    joined with ", " compare as one value, so a repeated header with the same value twice is a mismatch).
    ``message``: the decoded body. ``param_map``: the `header_map` of the called tool on ``tools/call``.

    - `Mcp-Method` must equal ``method`` exactly (case-sensitive); it is required on requests, and checked on
      notifications when present.
    - `Mcp-Name` must equal the field `NAME_FIELDS` names, after decoding. When the body lacks that field (or
      it is not a string) the header is not required: the body is invalid and its own validation says so.
    - Each ``Mcp-Param-*`` of ``param_map`` must match its argument after decoding, integers numerically. A
      null or absent argument needs no header; a header without an argument in the body is a mismatch.

    The protocol-version header is not checked here: the envelope ladder checks it in its own step.
    """
    if not isinstance(message, dict):
        return None
    method = message.get("method")
    if not isinstance(method, str):
        return None
    received = {name.lower(): value for name, value in headers.items()}
    raw = received.get("mcp-method")
    if raw is None:
        if "id" in message:
            return _missing(METHOD_HEADER)
    elif raw.strip(_OWS) != method:
        return _differs(METHOD_HEADER, raw, method)
    params = message.get("params")
    field = NAME_FIELDS.get(method)
    if field is not None and isinstance(params, dict) and isinstance(params.get(field), str):
        raw = received.get("mcp-name")
        if raw is None:
            return _missing(NAME_HEADER)
        try:
            text = decode_value(raw)
        except HeaderValueError as exc:
            return _invalid(NAME_HEADER, raw, exc)
        if text != params[field]:
            return _differs(NAME_HEADER, raw, params[field])
    if param_map:
        arguments = params.get("arguments") if isinstance(params, dict) else None
        return _check_params(received, param_map, arguments)
    return None


def check_param_headers(headers: Mapping[str, str], param_map: Mapping[Tuple[str, ...], ParamHeader],
                        arguments: Any) -> Optional[RPCError]:
    """The ``Mcp-Param-*`` part of `check_request_headers` alone: None when every header of ``param_map``
    matches its argument in ``arguments`` (the ``tools/call`` body's), else the `-32020` error.

    For a caller that checks `Mcp-Method` and `Mcp-Name` in its own step. ``headers``: names in any case.
    """
    if not param_map:
        return None
    return _check_params({name.lower(): value for name, value in headers.items()}, param_map, arguments)


def _check_params(received: Mapping[str, str], param_map: Mapping[Tuple[str, ...], ParamHeader],
                  arguments: Any) -> Optional[RPCError]:
    """`check_param_headers` over ``received`` headers whose names are already in lower case."""
    for entry in param_map.values():
        value = _argument(arguments, entry.path)
        raw = received.get(entry.key)
        if raw is None:
            if value is not _ABSENT:
                return _missing(entry.header)
            continue
        try:
            text = decode_value(raw)
        except HeaderValueError as exc:
            return _invalid(entry.header, raw, exc)
        if value is _ABSENT:
            return _mismatch(f"{entry.header} header is present but the body has no value for "
                             f"'{'.'.join(entry.path)}'")
        if not _matches(entry.type, text, value):
            return _differs(entry.header, raw, value, entry.type)
    return None
