"""JSON Schema at run time: check JSON values against a schema, and parse text by one. Pure: no I/O.

This module owns `validate` and `compile_schema`, the subset of JSON Schema 2020-12 that tool schemas use,
compiled once per schema into nested checks (tool calls validate on every call: this is the hot path), and
`coerce_from_string`, which parses a command-line or prompt argument by the schema of its value. It knows
JSON values and schemas only: making schemas from Python types, and turning JSON back into the Python
values annotations promise, belong to `schema`.

Only local ``$ref`` pointers are ever followed: MCP forbids dereferencing network references.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import json
import math
import operator
import re
import threading

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see __init__)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, FrozenSet, List, Optional, Pattern, Sized, Tuple, Type, Union

    Schema = Dict[str, Any]
    _Check = Callable[[Any, Optional[str]], Tuple[str, ...]]
    _KeywordCompiler = Callable[[Schema, "_Compiler", FrozenSet[str]], Optional[_Check]]

__all__ = ["ValidationError", "validate", "compile_schema", "coerce_from_string", "json_type", "member_path"]



class ValidationError(ValueError):
    """A value does not match its JSON Schema.

    ``errors`` holds one line per problem, each starting with the JSON path of the offending value
    (``$`` is the whole value, then ``$.name``, ``$.items[0]``...). ``str(exc)`` joins them with "; ".
    """

    def __init__(self, errors: List[str]) -> None:
        super().__init__("; ".join(errors))
        self.errors = list(errors)


def validate(instance: Any, schema: Union[Schema, bool]) -> None:
    """Check a JSON value against a JSON Schema; raise `ValidationError` listing every problem.

    Supported keywords: type, enum, const, properties, required, additionalProperties, patternProperties,
    items, prefixItems, minItems, maxItems, uniqueItems, minimum, maximum, exclusiveMinimum,
    exclusiveMaximum, multipleOf, minLength, maxLength, pattern, allOf, anyOf, oneOf, not, and local
    "$ref" pointers ("#/$defs/Name", "#/definitions/Name"). Other keywords (format among them) and refs
    that do not resolve locally constrain nothing. "integer" means a Python int, never 3.0 nor a bool.

    Each schema is compiled once and the compiled form kept (for the last 256 schema objects compiled), so
    a schema must not be changed in place after it has been used: build a new dict instead.
    """
    check = _cached_check(schema)
    if check(instance, None):  # invalid: a second pass, with paths, lists the problems
        raise ValidationError(list(check(instance, "$")))


def compile_schema(schema: Union[Schema, bool]) -> Callable[[Any], List[str]]:
    """Compile a JSON Schema into a function that lists the problems of a value, as `validate` words them.

    For a schema used many times: the work that depends only on the schema (reading its keywords,
    resolving "$ref"s, compiling patterns) is done here once, and messages are built only for a value that
    fails. The schema must not be changed afterwards.

    Returns:
        A function from a JSON value to its problems, each "path: message"; an empty list when valid.
    """
    check = _compile_check(schema)

    def errors(instance: Any) -> List[str]:
        # Values are valid far more often than not: a pass without paths says so without building any text.
        return list(check(instance, "$")) if check(instance, None) else []
    return errors


# A check is a compiled schema: ``check(instance, path) -> problems``, the empty tuple when the instance is
# valid. Given a path ("$", "$.items[0]"...) it returns every problem as "path: message". Given None it only
# answers "valid or not", cheaply: any non-empty tuple (often `_INVALID`) means invalid, and no message is
# built; it passes None on to the checks of children. Valid values, the usual case, get only this pass.
_INVALID = ("invalid",)


def _compile_check(schema: Any, root: Any = None) -> _Check:
    """The check of `schema`, whose "$ref"s resolve in `root` (by default the schema itself)."""
    return _Compiler(schema if root is None else root).compile(schema) or _accept


def _accept(instance: Any, path: Optional[str]) -> Tuple[str, ...]:
    return ()


def _reject(instance: Any, path: Optional[str]) -> Tuple[str, ...]:
    """The check of the schema `false`."""
    return _INVALID if path is None else (f"{path}: no value is allowed here",)


_CACHE_SIZE = 256
# id(schema), or (id(root), id(schema)) for a schema inside another -> (the schemas, their check), oldest
# first. Holding the schemas keeps their ids from being reused by other objects while they are cached.
_cache: Dict[Any, Tuple[Any, _Check]] = {}
_cache_lock = threading.Lock()  # guards _cache: tools compile and look up schemas from many threads


def _cached_check(schema: Any, root: Any = None) -> _Check:
    """`_compile_check(schema, root)`, remembered."""
    key = id(schema) if root is None else (id(root), id(schema))
    entry = _cache.get(key)  # a single dict read needs no lock: only writers take it
    if entry is not None:
        return entry[1]
    check = _compile_check(schema, root)
    with _cache_lock:  # two threads may both compile a new schema: either result will do
        _cache[key] = ((root, schema), check)
        if len(_cache) > _CACHE_SIZE:
            del _cache[next(iter(_cache))]  # the oldest: hits are not tracked, to keep them lock-free
    return check


class _Compiler:
    """Compiles the schemas inside one root schema, where their local "$ref"s resolve, into checks."""

    def __init__(self, root: Any) -> None:
        self.root = root
        # (id(schema), refs) -> its check. The root keeps every schema in it alive while compiling.
        self._checks: Dict[Tuple[int, FrozenSet[str]], Optional[_Check]] = {}

    def compile(self, schema: Any, refs: FrozenSet[str] = frozenset()) -> Optional[_Check]:
        """The check for `schema`, or None when it accepts every value.

        `refs` are the "$ref"s already followed at this same path: following one again would loop forever
        without consuming any of the instance, so it is skipped. A child value starts with none.
        """
        key = (id(schema), refs)
        if key in self._checks:
            return self._checks[key]
        # A schema that contains itself (a "$ref" below one of its children) finds this forwarder while it
        # is still being compiled; the forwarder calls the finished check.
        finished: List[_Check] = []
        self._checks[key] = lambda instance, path: finished[0](instance, path)
        check = self._compile_node(schema, refs)
        finished.append(check or _accept)
        self._checks[key] = check
        return check

    def _compile_node(self, schema: Any, refs: FrozenSet[str]) -> Optional[_Check]:
        if schema is False:
            return _reject
        if not isinstance(schema, dict):
            return None  # true, or not a schema at all: nothing to check
        checks = [check for check in (compile_keyword(schema, self, refs) for compile_keyword in _KEYWORDS)
                  if check is not None]
        return _combine(self._compile_ref(schema, refs), _compile_type(schema), checks)

    def _compile_ref(self, schema: Schema, refs: FrozenSet[str]) -> Optional[_Check]:
        """"$ref": the schema it points to applies too. Remote and dangling refs constrain nothing."""
        ref = schema.get("$ref")
        if not isinstance(ref, str) or ref in refs:
            return None
        target = _resolve_pointer(self.root, ref)
        return None if target is None else self.compile(target, refs | {ref})


def _combine(ref: Optional[_Check], type_check: Optional[_Check], checks: List[_Check]) -> Optional[_Check]:
    """One schema's check from its parts: the "$ref" target's problems first, then the type's; a value of the
    wrong type has no other problem worth listing, else every other keyword's problems in order."""
    if ref is None and type_check is None and len(checks) <= 1:
        return checks[0] if checks else None
    if ref is None and not checks:
        return type_check

    def check_schema(instance: Any, path: Optional[str]) -> Tuple[str, ...]:
        problems = () if ref is None else ref(instance, path)
        if type_check is not None:
            wrong_type = type_check(instance, path)
            if wrong_type:
                return problems + wrong_type
        for check in checks:
            problems += check(instance, path)
        return problems
    return check_schema


def _is_integer(value: Any) -> bool:
    return isinstance(value, int) and value.__class__ is not bool


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and value.__class__ is not bool


# JSON type name -> the Python classes of its values. bool is a subclass of int, yet only "boolean" has it.
_TYPE_CLASSES: Dict[str, Tuple[type, ...]] = {
    "null": (type(None),), "boolean": (bool,), "integer": (int,), "number": (int, float), "string": (str,),
    "array": (list,), "object": (dict,),
}


def _has_type(value: Any, name: str) -> bool:
    """Whether `value` is of the JSON type `name` (one of `_TYPE_CLASSES`)."""
    return isinstance(value, _TYPE_CLASSES[name]) and (name == "boolean" or value.__class__ is not bool)


def _compile_type(schema: Schema) -> Optional[_Check]:
    """"type": one name or a list of names."""
    names = _type_names(schema)
    if not names or any(name not in _TYPE_CLASSES for name in names):
        return None  # no type, or one JSON Schema does not define: every value passes
    classes = tuple(cls for name in names for cls in _TYPE_CLASSES[name])
    booleans = "boolean" in names
    expected = " or ".join(names)

    def check_type(instance: Any, path: Optional[str]) -> Tuple[str, ...]:
        if isinstance(instance, classes) and (booleans or instance.__class__ is not bool):  # as `_has_type`
            return ()
        if path is None:
            return _INVALID
        return (f"{path}: expected {expected}, got {json_type(instance) or type(instance).__name__}",)
    return check_type


# Each keyword compiler below reads its keywords from one schema and returns their check, or None when
# they are absent (or say nothing). `compiler.compile(sub)` compiles a child value's schema; schemas that
# apply at the same path (allOf, anyOf, oneOf, not) pass `refs` on.

_HASHED = frozenset({str, int, float})  # scalars whose Python equality is JSON's


def _compile_enum(schema: Schema, compiler: _Compiler, refs: FrozenSet[str]) -> Optional[_Check]:
    """"enum": the value equals (as JSON sees it) one of a list."""
    allowed = schema.get("enum")
    if not isinstance(allowed, list):
        return None
    # Strings and numbers are found by hashing; anything else (true is not 1, lists, objects) by a scan.
    hashed = frozenset(value for value in allowed if value.__class__ in _HASHED and value == value)  # not NaN

    def check_enum(instance: Any, path: Optional[str]) -> Tuple[str, ...]:
        if instance.__class__ in _HASHED and instance in hashed:
            return ()
        if any(_json_equal(instance, value) for value in allowed):
            return ()
        if path is None:
            return _INVALID
        return (f"{path}: {_show(instance)} is not one of {_show(allowed)}",)
    return check_enum


def _compile_const(schema: Schema, compiler: _Compiler, refs: FrozenSet[str]) -> Optional[_Check]:
    """"const": the value equals (as JSON sees it) this one."""
    if "const" not in schema:
        return None
    expected = schema["const"]

    def check_const(instance: Any, path: Optional[str]) -> Tuple[str, ...]:
        if _json_equal(instance, expected):
            return ()
        if path is None:
            return _INVALID
        return (f"{path}: expected {_show(expected)}, got {_show(instance)}",)
    return check_const


def _compile_required(schema: Schema, compiler: _Compiler, refs: FrozenSet[str]) -> Optional[_Check]:
    """"required": property names an object must have."""
    names = _list(schema.get("required"))
    if not names:
        return None
    # Names are strings in any sensible schema: then a set of them is checked in one step.
    required = frozenset(names) if all(isinstance(name, str) for name in names) else None

    def check_required(instance: Any, path: Optional[str]) -> Tuple[str, ...]:
        if not isinstance(instance, dict):
            return ()
        if instance.keys() >= required if required is not None else all(name in instance for name in names):
            return ()
        if path is None:
            return _INVALID
        return tuple(f"{member_path(path, name)}: missing required property"
                     for name in names if name not in instance)
    return check_required


def _compile_properties(schema: Schema, compiler: _Compiler, refs: FrozenSet[str]) -> Optional[_Check]:
    """"properties", "patternProperties" and "additionalProperties": each member of an object by its name.

    A member matches its "properties" entry and every pattern that finds its name; one that matches none
    of them is checked against "additionalProperties" instead (false forbids it).
    """
    properties = {name: compiler.compile(sub) for name, sub in _dict(schema.get("properties")).items()}
    patterns = [(regex, compiler.compile(sub)) for regex, sub in
                ((_compile(pattern), sub) for pattern, sub in _dict(schema.get("patternProperties")).items())
                if regex is not None]  # a pattern Python cannot compile matches nothing
    additional = schema.get("additionalProperties", True)
    forbid_others = additional is False
    others = None if forbid_others else compiler.compile(additional)
    if not forbid_others and others is None and not patterns:
        return _compile_named_properties(properties)

    def check_properties(instance: Any, path: Optional[str]) -> Tuple[str, ...]:
        if not isinstance(instance, dict):
            return ()
        problems: Tuple[str, ...] = ()
        for key, value in instance.items():
            child = None if path is None else member_path(path, key)
            check = properties.get(key, _UNLISTED)
            matched = check is not _UNLISTED
            if matched and check is not None:
                problems += check(value, child)
            for regex, check in patterns:
                if regex.search(key):
                    matched = True
                    if check is not None:
                        problems += check(value, child)
            if matched:
                continue
            if forbid_others:
                problems += _INVALID if child is None else (f"{child}: unexpected property",)
            elif others is not None:
                problems += others(value, child)
        return problems
    return check_properties


_UNLISTED: Any = object()  # `check_properties`: the member's name is not in "properties"


def _compile_named_properties(properties: Dict[str, Optional[_Check]]) -> Optional[_Check]:
    """`check_properties` for the common case of "properties" alone: other members are not checked."""
    checks = {name: check for name, check in properties.items() if check is not None}
    if not checks:
        return None

    def check_named_properties(instance: Any, path: Optional[str]) -> Tuple[str, ...]:
        if not isinstance(instance, dict):
            return ()
        if path is None:  # the hot loop: stop at the first problem
            for key, value in instance.items():
                check = checks.get(key)
                if check is not None and check(value, None):
                    return _INVALID
            return ()
        problems: Tuple[str, ...] = ()
        for key, value in instance.items():
            check = checks.get(key)
            if check is not None:
                problems += check(value, member_path(path, key))
        return problems
    return check_named_properties


def _compile_items(schema: Schema, compiler: _Compiler, refs: FrozenSet[str]) -> Optional[_Check]:
    """"prefixItems" then "items" (or their draft 4-7 spellings: "items" as a list, then "additionalItems")."""
    prefix, rest = schema.get("prefixItems"), schema.get("items")
    if isinstance(rest, list):
        prefix, rest = rest, schema.get("additionalItems")
    leading = [compiler.compile(sub) for sub in _list(prefix)]
    others = compiler.compile(rest)
    if others is None and all(check is None for check in leading):
        return None

    def check_items(instance: Any, path: Optional[str]) -> Tuple[str, ...]:
        if not isinstance(instance, list):
            return ()
        problems: Tuple[str, ...] = ()
        for index, item in enumerate(instance):
            check = leading[index] if index < len(leading) else others
            if check is not None:
                problems += check(item, None if path is None else f"{path}[{index}]")
        return problems
    return check_items


def _compile_item_count(schema: Schema, compiler: _Compiler, refs: FrozenSet[str]) -> Optional[_Check]:
    """"minItems" and "maxItems"."""
    return _compile_size(schema.get("minItems"), schema.get("maxItems"), list, "items")


def _compile_length(schema: Schema, compiler: _Compiler, refs: FrozenSet[str]) -> Optional[_Check]:
    """"minLength" and "maxLength" (in code points, as Python counts them)."""
    return _compile_size(schema.get("minLength"), schema.get("maxLength"), str, "characters")


def _compile_size(least: Any, most: Any, kind: Type[Sized], unit: str) -> Optional[_Check]:
    if not _is_integer(least) and not _is_integer(most):
        return None
    low = least if _is_integer(least) else 0
    high = most if _is_integer(most) else math.inf

    def check_size(instance: Any, path: Optional[str]) -> Tuple[str, ...]:
        if not isinstance(instance, kind) or low <= len(instance) <= high:
            return ()
        if path is None:
            return _INVALID
        size, problems = len(instance), []
        if size < low:
            problems.append(f"{path}: expected at least {low} {unit}, got {size}")
        if size > high:  # as well, when the minimum exceeds the maximum
            problems.append(f"{path}: expected at most {high} {unit}, got {size}")
        return tuple(problems)
    return check_size


def _compile_unique_items(schema: Schema, compiler: _Compiler, refs: FrozenSet[str]) -> Optional[_Check]:
    """"uniqueItems": no two items of an array are equal (as JSON sees it)."""
    if schema.get("uniqueItems") is not True:
        return None

    def check_unique_items(instance: Any, path: Optional[str]) -> Tuple[str, ...]:
        if not isinstance(instance, list):
            return ()
        if all(item.__class__ in _HASHED for item in instance) and len(set(instance)) == len(instance):
            return ()  # distinct as Python compares strings and numbers, so distinct as JSON does
        problems = []
        for later, item in enumerate(instance):
            earlier = next((i for i in range(later) if _json_equal(instance[i], item)), None)
            if earlier is not None:
                if path is None:
                    return _INVALID
                problems.append(f"{path}: items must be unique, but [{earlier}] and [{later}] are equal")
        return tuple(problems)
    return check_unique_items


# (keyword, the comparison a valid number passes, its symbol for messages)
_BOUNDS = (
    ("minimum", operator.ge, ">="),
    ("exclusiveMinimum", operator.gt, ">"),
    ("maximum", operator.le, "<="),
    ("exclusiveMaximum", operator.lt, "<"),
)


def _compile_bounds(schema: Schema, compiler: _Compiler, refs: FrozenSet[str]) -> Optional[_Check]:
    """"minimum", "exclusiveMinimum", "maximum" and "exclusiveMaximum"."""
    bounds = [(keyword, passes, symbol, schema[keyword]) for keyword, passes, symbol in _BOUNDS
              if _is_number(schema.get(keyword))]  # draft 4's boolean exclusiveMinimum is not a bound
    if not bounds:
        return None

    def check_bounds(instance: Any, path: Optional[str]) -> Tuple[str, ...]:
        if not _is_number(instance) or all(passes(instance, bound) for _, passes, _, bound in bounds):
            return ()
        if path is None:
            return _INVALID
        return tuple(f"{path}: {_show(instance)} is not {symbol} {_show(bound)} ({keyword})"
                     for keyword, passes, symbol, bound in bounds if not passes(instance, bound))
    return check_bounds


def _compile_multiple_of(schema: Schema, compiler: _Compiler, refs: FrozenSet[str]) -> Optional[_Check]:
    """"multipleOf": a positive number."""
    step: Any = schema.get("multipleOf")
    if not _is_number(step) or step <= 0:
        return None

    def check_multiple_of(instance: Any, path: Optional[str]) -> Tuple[str, ...]:
        if not _is_number(instance) or _is_multiple(instance, step):
            return ()
        if path is None:
            return _INVALID
        return (f"{path}: {_show(instance)} is not a multiple of {_show(step)}",)
    return check_multiple_of


def _compile_pattern(schema: Schema, compiler: _Compiler, refs: FrozenSet[str]) -> Optional[_Check]:
    """"pattern": a regular expression found anywhere in a string (one Python cannot compile says nothing)."""
    pattern = schema.get("pattern")
    regex = _compile(pattern) if isinstance(pattern, str) else None
    if regex is None:
        return None

    def check_pattern(instance: Any, path: Optional[str]) -> Tuple[str, ...]:
        if not isinstance(instance, str) or regex.search(instance):
            return ()
        if path is None:
            return _INVALID
        return (f"{path}: {_show(instance)} does not match the pattern {_show(pattern)}",)
    return check_pattern


def _compile_all_of(schema: Schema, compiler: _Compiler, refs: FrozenSet[str]) -> Optional[_Check]:
    """"allOf": every schema of a list applies; their problems are listed together."""
    checks = [check for check in (compiler.compile(sub, refs) for sub in _list(schema.get("allOf")))
              if check is not None]
    if len(checks) <= 1:
        return checks[0] if checks else None

    def check_all_of(instance: Any, path: Optional[str]) -> Tuple[str, ...]:
        problems: Tuple[str, ...] = ()
        for check in checks:
            problems += check(instance, path)
        return problems
    return check_all_of


def _compile_any_of(schema: Schema, compiler: _Compiler, refs: FrozenSet[str]) -> Optional[_Check]:
    """"anyOf": at least one schema of a list accepts the value."""
    branches = _compile_branches(schema, "anyOf", compiler, refs)
    if branches is None:
        return None

    def check_any_of(instance: Any, path: Optional[str]) -> Tuple[str, ...]:
        for branch in branches:
            if not branch(instance, None):
                return ()
        if path is None:
            return _INVALID
        return _matches_none("anyOf", branches, instance, path)
    return check_any_of


def _compile_one_of(schema: Schema, compiler: _Compiler, refs: FrozenSet[str]) -> Optional[_Check]:
    """"oneOf": exactly one schema of a list accepts the value."""
    branches = _compile_branches(schema, "oneOf", compiler, refs)
    if branches is None:
        return None

    def check_one_of(instance: Any, path: Optional[str]) -> Tuple[str, ...]:
        matches = sum(1 for branch in branches if not branch(instance, None))
        if matches == 1:
            return ()
        if path is None:
            return _INVALID
        if matches > 1:
            return (f"{path}: matches {matches} of the oneOf schemas, expected exactly one",)
        return _matches_none("oneOf", branches, instance, path)
    return check_one_of


def _compile_branches(schema: Schema, keyword: str, compiler: _Compiler,
                      refs: FrozenSet[str]) -> Optional[List[_Check]]:
    branches = schema.get(keyword)
    if not isinstance(branches, list):
        return None
    return [compiler.compile(sub, refs) or _accept for sub in branches]


def _matches_none(keyword: str, branches: List[_Check], instance: Any, path: str) -> Tuple[str, ...]:
    # Problems at this very path drop the repeated path; deeper ones keep theirs.
    reasons = [problem[len(path) + 2:] if problem.startswith(path + ": ") else problem
               for branch in branches for problem in branch(instance, path)]
    return (f"{path}: matches none of the {keyword} schemas [{' | '.join(reasons)}]",)


def _compile_not(schema: Schema, compiler: _Compiler, refs: FrozenSet[str]) -> Optional[_Check]:
    """"not": the schema must reject the value."""
    if "not" not in schema:
        return None
    forbidden = compiler.compile(schema["not"], refs) or _accept

    def check_not(instance: Any, path: Optional[str]) -> Tuple[str, ...]:
        if forbidden(instance, None):
            return ()
        if path is None:
            return _INVALID
        return (f'{path}: must not match the "not" schema',)
    return check_not


# The keywords besides "$ref" and "type", in the order their problems are listed.
_KEYWORDS: Tuple[_KeywordCompiler, ...] = (
    _compile_enum, _compile_const,
    _compile_required, _compile_properties,
    _compile_items, _compile_item_count, _compile_unique_items,
    _compile_bounds, _compile_multiple_of,
    _compile_length, _compile_pattern,
    _compile_all_of, _compile_any_of, _compile_one_of, _compile_not,
)


def _type_names(schema: Schema) -> List[str]:
    """The "type" keyword as a list: it may be one name or several."""
    expected = schema.get("type")
    if isinstance(expected, str):
        return [expected]
    return [name for name in _list(expected) if isinstance(name, str)]


def _resolve_pointer(root: Any, ref: str) -> Any:
    """The schema a local "$ref" ("#", "#/$defs/Name", any JSON pointer) names, or None.

    None for remote refs (MCP forbids fetching them, so they constrain nothing) and for missing targets.
    """
    if ref == "#":
        return root
    if not ref.startswith("#/"):
        return None
    node = root
    for token in ref[2:].split("/"):
        if "%" in token:  # percent-encoded, as URI fragments may be (urllib.parse is loaded only then)
            from urllib.parse import unquote

            token = unquote(token)
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return None
    return node


def _compile(pattern: str) -> Optional[Pattern[str]]:
    """The compiled pattern, or None for one Python cannot compile (it then constrains nothing)."""
    try:
        return re.compile(pattern)
    except (re.error, TypeError):
        return None


def _is_multiple(value: Union[int, float], step: Union[int, float]) -> bool:
    if isinstance(value, int) and isinstance(step, int):
        return value % step == 0
    # Decimal arithmetic on the shortest repr is exact for decimal literals: 0.3 is a multiple of 0.1,
    # which float division gets wrong. Imported here: fractional steps are rare, and decimal is heavy.
    import decimal

    try:
        return decimal.Decimal(repr(value)) % decimal.Decimal(repr(step)) == 0
    except decimal.InvalidOperation:  # a quotient beyond Decimal's precision, or infinity: cannot judge
        return True


def _json_equal(a: Any, b: Any) -> bool:
    """Equality as JSON sees it: true is not 1 (as it is in Python), but 1 equals 1.0."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_json_equal(a[key], b[key]) for key in a)
    return bool(a == b)


def json_type(value: Any) -> Optional[str]:
    """The JSON type name of a value ("integer", "object"...), None for a value JSON cannot hold."""
    for name in _TYPE_CLASSES:
        if _has_type(value, name):
            return name
    return None


def member_path(path: str, key: Any) -> str:
    """The path of member `key` of the value at `path`, as messages write it: ``$.name``, ``$["a b"]``."""
    key = str(key)
    return f"{path}.{key}" if key.isidentifier() else f"{path}[{json.dumps(key)}]"


def _show(value: Any, limit: int = 60) -> str:
    """A value as (shortened) JSON text for messages."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=repr)
    except (TypeError, ValueError):  # keys JSON cannot hold; a value nested in itself
        text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _list(value: Any) -> List[Any]:
    return value if isinstance(value, list) else []


def _dict(value: Any) -> Dict[str, Any]:
    return value if isinstance(value, dict) else {}


# --- text -> JSON ---------------------------------------------------------------------------------------


def coerce_from_string(text: str, schema: Union[Schema, bool]) -> Any:
    """Parse a command-line or prompt argument by the schema of the value it stands for.

    A string schema keeps the text as is; integer, number, boolean ("true"/"false"/"1"/"0") and null
    ("null") are parsed; object and array are parsed as JSON. With several types, or anyOf/oneOf, the
    first type or branch whose parse also validates wins (else the first that parsed). Without a type,
    the text is parsed as JSON when it is JSON, else kept. "$ref"s are followed within `schema`.

    Raises:
        ValidationError: the text parses as none of the schema's types.
    """
    try:
        return _coerce(text, schema, schema, frozenset())
    except ValueError as exc:
        raise ValidationError([f"$: {exc}"]) from None


def _coerce(text: str, schema: Any, root: Any, refs: FrozenSet[str]) -> Any:
    """`coerce_from_string` for a schema inside `root`; `refs` as in `_Compiler.compile`."""
    if not isinstance(schema, dict):
        return _json_or_text(text)
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref not in refs:
        target = _resolve_pointer(root, ref)
        if target is not None:
            return _coerce(text, target, root, refs | {ref})
    names = _type_names(schema)
    if names:
        candidates = [(_attempt(_parse_as, text, name), schema) for name in names]
        return _choose(candidates, root, f"cannot parse {_show(text)} as {' or '.join(names)}")
    for keyword in ("anyOf", "oneOf"):
        branches = schema.get(keyword)
        if isinstance(branches, list):
            candidates = [(_attempt(_coerce, text, branch, root, refs), branch) for branch in branches]
            return _choose(candidates, root, f"{_show(text)} parses as none of the {keyword} schemas")
    return _json_or_text(text)


_UNPARSED = object()  # what `_attempt` returns for a parse that failed


def _attempt(parse: Callable[..., Any], *args: Any) -> Any:
    try:
        return parse(*args)
    except ValueError:
        return _UNPARSED


def _choose(candidates: List[Tuple[Any, Any]], root: Any, failure: str) -> Any:
    """The first parsed value that validates against its schema, else the first parsed value at all (whose
    problem validation will then report), else ValueError(failure)."""
    parsed = [(value, schema) for value, schema in candidates if value is not _UNPARSED]
    if not parsed:
        raise ValueError(failure)
    for value, schema in parsed:
        if not _cached_check(schema, root)(value, None):
            return value
    return parsed[0][0]


def _parse_as(text: str, type_name: str) -> Any:
    """Parse text as one JSON type; ValueError when it is not one."""
    if type_name == "string":
        return text
    if type_name == "integer":
        return int(text)
    if type_name == "number":
        try:
            return int(text)
        except ValueError:
            number = float(text)
            if not math.isfinite(number):  # float() accepts "nan" and "inf"; JSON has neither
                raise ValueError("not a finite number") from None
            return number
    if type_name == "boolean":
        word = text.strip().lower()
        if word in ("true", "1"):
            return True
        if word in ("false", "0"):
            return False
        raise ValueError("not a boolean")
    if type_name == "null":
        if text.strip() == "null":
            return None
        raise ValueError("not null")
    if type_name in ("object", "array"):
        value = _load_json(text)
        if not _has_type(value, type_name):
            raise ValueError(f"not an {type_name}")
        return value
    return _json_or_text(text)  # a type name JSON Schema does not define


def _load_json(text: str) -> Any:
    """Strict JSON: NaN and Infinity, which Python's json module accepts by default, are not JSON."""
    def reject(constant: str) -> Any:
        raise ValueError(f"{constant} is not JSON")
    return json.loads(text, parse_constant=reject)


def _json_or_text(text: str) -> Any:
    try:
        return _load_json(text)
    except ValueError:
        return text


