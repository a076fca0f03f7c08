"""RFC 6570 URI templates (all four levels): expansion, and matching a concrete URI back to its values.

MCP servers publish resource templates such as ``weather://{city}/current{?units}``. Clients expand them
(`URITemplate.expand`); servers match an incoming ``resources/read`` URI against their templates to find
the handler and its arguments (`URITemplate.match`).

Matching reverses expansion, which is not always unambiguous (``{a}{b}`` can split ``xy`` three ways);
the rules used are documented on `URITemplate.match`.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import re
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple, Union

__all__ = ["URITemplate", "is_template"]


class _Operator(NamedTuple):
    """One row of the RFC 6570 appendix A table."""

    first: str  # emitted before the first defined variable
    separator: str  # emitted between variables (and between exploded items)
    named: bool  # "name=value" pairs rather than bare values
    if_empty: str  # emitted after the name when a named value is empty
    allow_reserved: bool  # reserved characters and pct-encoded triplets pass unencoded


_OPERATORS = {
    "": _Operator("", ",", False, "", False),
    "+": _Operator("", ",", False, "", True),
    "#": _Operator("#", ",", False, "", True),
    ".": _Operator(".", ".", False, "", False),
    "/": _Operator("/", "/", False, "", False),
    ";": _Operator(";", ";", True, "", False),
    "?": _Operator("?", "&", True, "=", False),
    "&": _Operator("&", "&", True, "=", False),
}
# Reserved by RFC 6570 section 2.2 for future extensions; a template using them is not valid today.
_FUTURE_OPERATORS = "=,!@|"

# What a URI may hold for each operator when matching. Simple values and path segments never contain an
# unencoded "/" (expansion encodes it), so they stop at one; reserved and fragment values may hold anything.
# Lazy quantifiers leave as much as possible to the template's trailing parts (a literal, a query).
_CAPTURE_PATTERNS = {
    "": r"[^/?#]*?",
    "+": r".*?",
    "#": r"(?:\#.*?)?",
    ".": r"(?:\.[^/?#]*?)?",
    ";": r"(?:;[^/?#]*?)?",
    "?": r"(?:\?[^#]*?)?",
    "&": r"(?:&[^#]*?)?",
}
_PATH_SEGMENT = r"/[^/?#]*"
# The operators whose every value is (within) one path segment: a value that decodes to one holding "/"
# (sent as %2F) does not match them, as its raw "/" would not. Reserved ({+var}) and fragment ({#var})
# values may hold "/" by RFC 6570; query and matrix values ({?q}, {;p}) are data, not segments.
_WITHIN_A_SEGMENT = ("", ".", "/")

# Patterns compiled on first use (and kept by re), not with the module: every server imports it, and many
# serve no template.
_EXPRESSION = r"\{([^{}]*)\}"
_VARSPEC = (
    r"(?P<name>(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*)"
    r"(?::(?P<prefix>[1-9][0-9]{0,3})|(?P<explode>\*))?"
)
_PCT_TRIPLET = r"(%[0-9A-Fa-f]{2})"
_RESERVED = ":/?#[]@!$&'()*+,;="
_UNRESERVED = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"  # RFC 3986 2.3: never encoded


class _VarSpec(NamedTuple):
    name: str
    prefix: Optional[int]  # ":N": keep only the first N characters of a string value
    explode: bool  # "*": one item per list member / dict pair


class _Expression(NamedTuple):
    operator: str
    variables: Tuple[_VarSpec, ...]


_Value = Union[str, List[str], Dict[str, str]]  # a normalized defined value: string, list or pairs


def is_template(text: str) -> bool:
    """Return whether ``text`` contains a template expression such as ``{id}``."""
    return re.search(r"\{[^{}]+\}", text) is not None


class URITemplate:
    """A parsed RFC 6570 URI template.

    Attributes:
        template: the template text.
        variables: the variable names in order of first appearance.
    """

    def __init__(self, template: str) -> None:
        """Parse ``template``.

        Raises:
            ValueError: unbalanced braces, an empty expression, an operator reserved for future use, or
                an invalid variable name or modifier.
        """
        self.template = template
        self._parts: List[Union[str, _Expression]] = []  # literals are stored already encoded
        position = 0
        for found in re.finditer(_EXPRESSION, template):
            self._add_literal(template[position : found.start()])
            self._parts.append(_parse_expression(found.group(1), template))
            position = found.end()
        self._add_literal(template[position:])
        self.variables: List[str] = list(
            dict.fromkeys(spec.name for part in self._parts if isinstance(part, _Expression) for spec in part.variables)
        )
        self._matcher, self._groups = _compile_matcher(self._parts)

    def _add_literal(self, literal: str) -> None:
        if "{" in literal or "}" in literal:
            raise ValueError(f"unbalanced brace in URI template {self.template!r}")
        if literal:
            # RFC 6570 section 3.1: characters not allowed in a URI are pct-encoded, the rest copied.
            self._parts.append(_encode(literal, allow_reserved=True))

    def expand(self, values: Mapping[str, Any]) -> str:
        """Expand the template.

        Args:
            values: variable values. A string or number is a single value (booleans become
                ``true``/``false``); a list or tuple is a list; a mapping is a list of (name, value)
                pairs. ``None``, an empty list and an empty mapping are undefined, and so are ``None``
                members inside lists and mappings. Variables missing from ``values`` are undefined.

        Returns:
            The URI. Undefined variables vanish together with their operator's punctuation.

        Raises:
            ValueError: a prefix modifier (``{var:3}``) applied to a list or mapping.
        """
        output = []
        for part in self._parts:
            if isinstance(part, str):
                output.append(part)
            else:
                output.append(_expand_expression(part, values))
        return "".join(output)

    def match(self, uri: str) -> Optional[Dict[str, Any]]:
        """Find the variable values that expand to ``uri``.

        Args:
            uri: a concrete URI.

        Returns:
            None if ``uri`` does not fit the template, else the pct-decoded values of the variables
            present in it: a string per variable, or a list of strings for an exploded variable
            (``{/path*}``, ``{?tag*}``). Variables absent from the URI are absent from the result.

        How ambiguities are settled:
            - ``{var}`` matches within one path segment (no ``/``, ``?`` or ``#``, and no ``%2F``, which would
              decode to ``/``: ``{name}`` never yields ``../../etc/passwd``), and so do each of ``{.var}`` and
              ``{/var}``'s values; ``{+var}`` and ``{#var}`` match anything, ``/`` included; ``{/var*}``
              matches any number of segments.
            - Each expression takes as little as the rest of the template allows.
            - Query expressions (``{?a,b}`` and the ``{&c}`` that directly follow it) are matched by
              name, in any order; each one is optional, but a parameter the template does not name, or
              one repeated without ``*``, makes the URI not match.
            - In a positional expression with several variables (``{x,y}``, ``{/a,b}``), values are
              assigned left to right; an exploded variable takes every value not needed by the
              variables after it; surplus values join the last variable.
            - A prefix (``{var:3}``) is not enforced: the value comes back as it appears in the URI.
            - Mapping values cannot be told apart from lists: exploded ones come back as lists of
              ``"key=value"`` strings (positional) or do not match (named).
            - A variable used twice must have the same value at each place.
        """
        found = self._matcher.fullmatch(uri)
        if found is None:
            return None
        result: Dict[str, Any] = {}
        for index, group in enumerate(self._groups, start=1):
            if not _decode_group(group, found.group(index), result):
                return None
        return result

    def __str__(self) -> str:
        return self.template

    def __repr__(self) -> str:
        return f"URITemplate({self.template!r})"


def _parse_expression(body: str, template: str) -> _Expression:
    operator = body[:1]
    if operator and operator in _FUTURE_OPERATORS:
        raise ValueError(f"operator {operator!r} is reserved for future use in URI template {template!r}")
    if operator not in _OPERATORS:
        operator = ""
    specs = []
    for varspec in body[len(operator) :].split(","):
        parsed = re.fullmatch(_VARSPEC, varspec)
        if parsed is None:
            raise ValueError(f"invalid variable {varspec!r} in URI template {template!r}")
        prefix = parsed.group("prefix")
        specs.append(_VarSpec(parsed.group("name"), int(prefix) if prefix else None, bool(parsed.group("explode"))))
    return _Expression(operator, tuple(specs))


# -- expansion ---------------------------------------------------------------------------------------


def _encode(text: str, allow_reserved: bool) -> str:
    """Pct-encode ``text`` as UTF-8, leaving unreserved characters (and, if allowed, reserved ones and
    existing pct-encoded triplets) as they are."""
    if not allow_reserved:
        return _quote(text, safe="")
    pieces = re.split(_PCT_TRIPLET, text)  # odd indexes hold the triplets, which pass unchanged
    return "".join(piece if index % 2 else _quote(piece, safe=_RESERVED) for index, piece in enumerate(pieces))


def _scalar_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else str(value)


def _normalize(value: Any) -> Optional[_Value]:
    """Turn a caller's value into a string, a list or a pair dict; None when RFC 6570 calls it undefined."""
    if value is None:
        return None
    if isinstance(value, Mapping):
        pairs = {_scalar_text(key): _scalar_text(item) for key, item in value.items() if item is not None}
        return pairs or None
    if isinstance(value, (list, tuple)):
        items = [_scalar_text(item) for item in value if item is not None]
        return items or None
    return _scalar_text(value)


def _expand_expression(expression: _Expression, values: Mapping[str, Any]) -> str:
    operator = _OPERATORS[expression.operator]
    expanded = []
    for spec in expression.variables:
        value = _normalize(values.get(spec.name))
        if value is not None:
            expanded.append(_expand_variable(operator, spec, value))
    if not expanded:
        return ""
    return operator.first + operator.separator.join(expanded)


def _expand_variable(operator: _Operator, spec: _VarSpec, value: _Value) -> str:
    def encode(text: str) -> str:
        return _encode(text, operator.allow_reserved)

    if isinstance(value, str):
        if spec.prefix is not None:
            value = value[: spec.prefix]
        return _named(operator, spec.name, encode(value))
    if spec.prefix is not None:
        raise ValueError(f"prefix modifier on {spec.name!r} needs a string, not a list or mapping")
    if isinstance(value, dict):
        if not spec.explode:
            joined = ",".join(encode(key) + "," + encode(item) for key, item in value.items())
            return _named(operator, spec.name, joined)
        if operator.named:
            return operator.separator.join(_named(operator, encode(key), encode(item)) for key, item in value.items())
        return operator.separator.join(encode(key) + "=" + encode(item) for key, item in value.items())
    if not spec.explode:
        return _named(operator, spec.name, ",".join(encode(item) for item in value))
    return operator.separator.join(_named(operator, spec.name, encode(item)) for item in value)


def _named(operator: _Operator, name: str, encoded: str) -> str:
    """Prefix ``name=`` for named operators (``;``, ``?``, ``&``); other operators emit the bare value."""
    if not operator.named:
        return encoded
    if not encoded:
        return name + operator.if_empty
    return name + "=" + encoded


# -- matching ----------------------------------------------------------------------------------------


def _compile_matcher(parts: Sequence[Union[str, _Expression]]) -> Tuple["re.Pattern[str]", List[_Expression]]:
    """Build one regex with a capturing group per expression (or per run of query expressions).

    A ``{&...}`` directly after a ``{?...}`` or ``{&...}`` joins that expression's group, so query
    parameters can be matched by name in any order; the group keeps the first expression's operator.
    """
    pattern: List[str] = []
    groups: List[_Expression] = []
    after_query = False  # the previous part was a query expression, with no literal in between
    for part in parts:
        if isinstance(part, str):
            pattern.append(re.escape(part))
            after_query = False
        elif part.operator == "&" and after_query:
            groups[-1] = _Expression(groups[-1].operator, groups[-1].variables + part.variables)
        else:
            groups.append(part)
            pattern.append(f"({_capture_pattern(part)})")
            after_query = part.operator in ("?", "&")
    return re.compile("".join(pattern), re.DOTALL), groups


def _capture_pattern(expression: _Expression) -> str:
    if expression.operator != "/":
        return _CAPTURE_PATTERNS[expression.operator]
    if any(spec.explode for spec in expression.variables):
        return f"(?:{_PATH_SEGMENT})*"
    return f"(?:{_PATH_SEGMENT}){{0,{len(expression.variables)}}}"


def _decode_group(expression: _Expression, text: str, result: Dict[str, Any]) -> bool:
    """Add the values held by ``text`` (what one group captured) to ``result``; False if they do not fit."""
    operator = _OPERATORS[expression.operator]
    if operator.first:
        if not text:
            return True  # every variable of the expression was undefined
        text = text[len(operator.first) :]
    if operator.named:
        values = _decode_named(expression.variables, text.split(operator.separator))
    else:
        values = _decode_positional(expression.variables, text, operator.separator)
    if values is None:
        return False
    if expression.operator in _WITHIN_A_SEGMENT and any(
            "/" in (value if isinstance(value, str) else "".join(value)) for value in values.values()):
        return False  # "..%2F..%2Fetc" is not one segment: a handler would join "../../etc" into a path
    for name, value in values.items():
        if result.setdefault(name, value) != value:
            return False
    return True


def _decode_named(specs: Sequence[_VarSpec], pairs: List[str]) -> Optional[Dict[str, Any]]:
    exploded_by_name = {spec.name: spec.explode for spec in specs}
    values: Dict[str, Any] = {}
    for pair in pairs:
        if not pair:
            continue  # tolerate "?" alone or a stray "&"
        name, _, raw = pair.partition("=")
        if name not in exploded_by_name:
            return None
        value = _unquote(raw)
        if exploded_by_name[name]:
            values.setdefault(name, []).append(value)
        elif name in values:
            return None
        else:
            values[name] = value
    return values


def _decode_positional(specs: Sequence[_VarSpec], text: str, separator: str) -> Dict[str, Any]:
    if len(specs) == 1 and not specs[0].explode:
        # A lone variable owns the whole text, separators included (a non-exploded list, a "+" value).
        return {specs[0].name: _unquote(text)}
    items = text.split(separator)
    values: Dict[str, Any] = {}
    for index, spec in enumerate(specs):
        if not items:
            break
        needed_after = len(specs) - index - 1
        if spec.explode:
            taken = max(len(items) - needed_after, 1)
            values[spec.name] = [_unquote(item) for item in items[:taken]]
        else:
            taken = len(items) if needed_after == 0 else 1
            values[spec.name] = _unquote(separator.join(items[:taken]))
        items = items[taken:]
    return values


# -- percent-encoding --------------------------------------------------------------------------------
# urllib.parse (and the ipaddress module it imports) is loaded on first use rather than with this module,
# which every server imports: most templates a server registers, and the URIs it matches, have nothing to
# encode or decode.


def _quote(text: str, safe: str) -> str:
    if not text.strip(_UNRESERVED + safe):
        return text  # as quote would return it
    from urllib.parse import quote

    return quote(text, safe=safe)


def _unquote(text: str) -> str:
    if "%" not in text:
        return text  # as unquote would return it
    from urllib.parse import unquote

    return unquote(text)
