"""JSON Schema for plain Python functions: generate, validate, coerce. Pure: no I/O, no threads.

Tools and prompts are plain functions. This module reads a function's signature, type hints and docstring
into the JSON Schemas MCP needs (a tool's ``inputSchema`` and ``outputSchema``, a prompt's arguments),
checks JSON values against schemas, and turns validated JSON arguments back into the Python values the
annotations promise (dataclass instances, Enum members, tuples).

The sections below, in reading order:

* type -> schema: `type_schema`, one helper per family of annotations;
* function -> schema: `function_schema`, `FunctionSchema` (with `bind`), docstring parsing;
* validation: `validate` and `compile_schema`, the subset of JSON Schema 2020-12 that tool schemas use,
  compiled once per schema into nested checks (tool calls validate on every call: this is the hot path);
* values: `to_jsonable` (Python -> JSON), `coerce_from_string` (text -> JSON);
* JSON -> Python for `bind`: converters planned once per function from its annotations.

Only local ``$ref`` pointers are ever followed: MCP forbids dereferencing network references.
"""

import collections.abc
import dataclasses
import decimal
import enum
import functools
import inspect
import json
import math
import operator
import re
import textwrap
import threading
import types
import typing
from typing import (
    Any, Callable, Dict, FrozenSet, List, NamedTuple, Optional, Pattern, Sized, Tuple, Type, Union,
)
from typing import Annotated, Literal, get_args, get_origin
from urllib.parse import unquote

__all__ = [
    "ValidationError", "validate", "compile_schema", "Parameter", "FunctionSchema", "function_schema",
    "type_schema", "to_jsonable", "coerce_from_string",
]

Schema = Dict[str, Any]

_NoneType = type(None)
# `X | Y` evaluates to types.UnionType on Python 3.10+; Python 3.9 only has typing.Union.
_UNION_ORIGINS: Tuple[Any, ...] = (Union, types.UnionType) if hasattr(types, "UnionType") else (Union,)
# Required[...] / NotRequired[...] (3.11+) only mark TypedDict keys; __required_keys__ already records them.
_KEY_QUALIFIERS = tuple(getattr(typing, name) for name in ("Required", "NotRequired") if hasattr(typing, name))

_PRIMITIVES = {int: "integer", float: "number", str: "string", bool: "boolean", _NoneType: "null"}
_ARRAY_ORIGINS = (list, collections.abc.Sequence, collections.abc.MutableSequence)
_SET_ORIGINS = (set, frozenset, collections.abc.Set, collections.abc.MutableSet)
_MAPPING_ORIGINS = (dict, collections.abc.Mapping, collections.abc.MutableMapping)


class ValidationError(ValueError):
    """A value does not match its JSON Schema.

    ``errors`` holds one line per problem, each starting with the JSON path of the offending value
    (``$`` is the whole value, then ``$.name``, ``$.items[0]``...). ``str(exc)`` joins them with "; ".
    """

    def __init__(self, errors: List[str]) -> None:
        super().__init__("; ".join(errors))
        self.errors = list(errors)


# --- type -> schema -------------------------------------------------------------------------------------


def type_schema(annotation: Any) -> Schema:
    """The JSON Schema for one Python type annotation.

    Dataclasses and TypedDicts become entries of a root ``"$defs"`` referenced by ``"$ref"``, so the
    returned dict may carry ``"$defs"``.

    Raises:
        TypeError: the annotation (or a type nested in it) has no JSON Schema.
    """
    defs = _Definitions()
    schema = _schema(annotation, defs)
    if defs.schemas:
        schema["$defs"] = defs.schemas
    return schema


class _Definitions:
    """The ``"$defs"`` of one schema being built: one named entry per dataclass or TypedDict."""

    def __init__(self) -> None:
        self.schemas: Dict[str, Schema] = {}
        self._names: Dict[type, str] = {}

    def ref(self, cls: type) -> Schema:
        name = self._names.get(cls)
        if name is None:
            name = cls.__name__
            suffix = 2
            while name in self.schemas:  # two classes with one name (from different modules)
                name = f"{cls.__name__}{suffix}"
                suffix += 1
            self._names[cls] = name
            self.schemas[name] = {}  # reserved first, so a class that refers to itself finds its own name
            self.schemas[name] = _class_schema(cls, self)
        return {"$ref": "#/$defs/" + name}


def _schema(annotation: Any, defs: _Definitions) -> Schema:
    origin = get_origin(annotation)
    if origin is not None:
        return _generic_schema(annotation, origin, get_args(annotation), defs)
    if annotation is Any or annotation is inspect.Parameter.empty:
        return {}
    if annotation is None:
        return {"type": "null"}
    if hasattr(annotation, "__supertype__"):  # typing.NewType
        return _schema(annotation.__supertype__, defs)
    if isinstance(annotation, type):
        if issubclass(annotation, enum.Enum):
            return _enum_schema([member.value for member in annotation])
        if annotation in _PRIMITIVES:
            return {"type": _PRIMITIVES[annotation]}
        if _is_dataclass(annotation) or _is_typeddict(annotation):
            return defs.ref(annotation)
    container = _container_schema(annotation, (), defs)  # bare list, dict, tuple, set...
    if container is None:
        raise TypeError(f"unsupported type annotation {annotation!r}")
    return container


def _generic_schema(annotation: Any, origin: Any, args: Tuple[Any, ...], defs: _Definitions) -> Schema:
    if origin is Annotated:
        return _annotated_schema(args[0], args[1:], defs)
    if origin in _KEY_QUALIFIERS:
        return _schema(args[0], defs)
    if origin in _UNION_ORIGINS:
        return {"anyOf": [_schema(arm, defs) for arm in args]}
    if origin is Literal:
        return _enum_schema(list(args))
    container = _container_schema(origin, args, defs)
    if container is None:
        raise TypeError(f"unsupported type annotation {annotation!r}")
    return container


def _annotated_schema(annotation: Any, metadata: Tuple[Any, ...], defs: _Definitions) -> Schema:
    """Annotated[X, "text"] or Annotated[X, Field(description="text")]: X's schema with a description."""
    schema = _schema(annotation, defs)
    description = _description_of(metadata)
    if description is not None:
        schema = dict(schema, description=description)
    return schema


def _description_of(metadata: Tuple[Any, ...]) -> Optional[str]:
    for item in metadata:
        if isinstance(item, str):
            return item
        description = getattr(item, "description", None)
        if isinstance(description, str):
            return description
    return None


def _enum_schema(values: List[Any]) -> Schema:
    """Literal[...] values or an Enum's values; with a "type" when they all share one JSON type."""
    values = [to_jsonable(value) for value in values]
    json_types = {_json_type(value) for value in values}
    schema: Schema = {}
    if len(json_types) == 1 and next(iter(json_types)) in _TYPE_CLASSES:
        schema["type"] = json_types.pop()
    schema["enum"] = values
    return schema


def _container_schema(origin: Any, args: Tuple[Any, ...], defs: _Definitions) -> Optional[Schema]:
    """Arrays, sets, tuples and string-keyed mappings; None when `origin` is none of them."""
    if origin in _ARRAY_ORIGINS:
        return _array_schema(args[0] if args else Any, defs)
    if origin in _SET_ORIGINS:
        return dict(_array_schema(args[0] if args else Any, defs), uniqueItems=True)
    if origin is tuple:
        if not args:
            return {"type": "array"}
        if len(args) == 2 and args[1] is Ellipsis:  # tuple[X, ...]: any length
            return _array_schema(args[0], defs)
        return {"type": "array", "prefixItems": [_schema(arg, defs) for arg in args],
                "minItems": len(args), "maxItems": len(args)}
    if origin in _MAPPING_ORIGINS:
        if args and args[0] not in (str, Any):
            raise TypeError(f"JSON object keys are strings, not {args[0]!r}")
        schema: Schema = {"type": "object"}
        values = _schema(args[1], defs) if args else {}
        if values:  # additionalProperties {} would say nothing
            schema["additionalProperties"] = values
        return schema
    return None


def _array_schema(item: Any, defs: _Definitions) -> Schema:
    schema: Schema = {"type": "array"}
    items = _schema(item, defs)
    if items:  # items {} would say nothing
        schema["items"] = items
    return schema


def _class_schema(cls: type, defs: _Definitions) -> Schema:
    """The object schema of a dataclass (its init fields) or a TypedDict (its keys)."""
    hints = _type_hints(cls, cls.__name__)
    properties: Schema = {}
    if _is_dataclass(cls):
        fields = [field for field in dataclasses.fields(cls) if field.init]
        names = [field.name for field in fields]
        defaults = {field.name: field.default for field in fields if field.default is not dataclasses.MISSING}
        required = [field.name for field in fields
                    if field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING]
    else:
        names = list(hints)
        required = [name for name in names if name in cls.__required_keys__]  # type: ignore[attr-defined]
        defaults = {}
    for name in names:
        try:
            properties[name] = _schema(hints.get(name, Any), defs)
        except TypeError as exc:
            raise TypeError(f"{cls.__name__}.{name}: {exc}") from None
        if name in defaults:
            _add_default(properties[name], defaults[name])
    return _object_schema(properties, required)


def _object_schema(properties: Schema, required: List[str]) -> Schema:
    schema: Schema = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


def _add_default(schema: Schema, default: Any) -> None:
    """Advertise a Python default in the schema, when it has a JSON form."""
    try:
        value = to_jsonable(default)
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return  # the Python default still applies; it is just not advertised
    schema["default"] = value


def _is_dataclass(annotation: Any) -> bool:
    return isinstance(annotation, type) and dataclasses.is_dataclass(annotation)


def _is_typeddict(annotation: Any) -> bool:
    # typing.is_typeddict only exists from Python 3.10; every TypedDict class has __required_keys__ (3.9+).
    return (isinstance(annotation, type) and issubclass(annotation, dict)
            and hasattr(annotation, "__required_keys__"))


def _unwrap(annotation: Any) -> Any:
    """Strip Annotated, NewType and Required/NotRequired: none of them changes the Python value."""
    while True:
        origin = get_origin(annotation)
        if origin is Annotated or origin in _KEY_QUALIFIERS:
            annotation = get_args(annotation)[0]
        elif origin is None and hasattr(annotation, "__supertype__"):
            annotation = annotation.__supertype__
        else:
            return annotation


def _type_hints(obj: Any, what: str) -> Dict[str, Any]:
    try:
        return typing.get_type_hints(obj, include_extras=True)
    except NameError as exc:
        raise TypeError(f"cannot resolve the type hints of {what}: {exc}") from exc


# --- function -> schema ---------------------------------------------------------------------------------


class Parameter(NamedTuple):
    """One argument of a tool or prompt, as its schema advertises it."""

    name: str
    schema: Schema
    required: bool
    description: Optional[str]


class FunctionSchema:
    """What `function_schema` learned about a function: its JSON Schemas and how to call it.

    Attributes:
        name: the function's name.
        description: its docstring without the Args/Parameters section (None when there is none).
        parameters: the arguments a caller supplies, in signature order (injected ones excluded).
        injected: parameter name -> the skip type it matched; the caller of the function fills these in.
        input_schema: the object schema of the arguments (with "$defs" when any).
        output_schema: the schema of the structured result, None when the result is plain content.
        wraps_output: the result is not an object, so structured content is ``{"result": value}``.
        accepts_extra: the function has ``**kwargs``, so `bind` passes unknown arguments through.

    The input schema and the conversions `bind` makes are compiled when the object is made: treat the
    attributes as read-only.
    """

    def __init__(self, name: str, description: Optional[str], parameters: List[Parameter],
                 injected: Dict[str, type], input_schema: Schema, output_schema: Optional[Schema],
                 wraps_output: bool, accepts_extra: bool, annotations: Dict[str, Any]) -> None:
        self.name = name
        self.description = description
        self.parameters = parameters
        self.injected = injected
        self.input_schema = input_schema
        self.output_schema = output_schema
        self.wraps_output = wraps_output
        self.accepts_extra = accepts_extra
        self._parameter_names = frozenset(annotations)
        self._check_arguments = _compile_check(input_schema)
        # Only the parameters whose annotation promises more than the JSON value (a dataclass, an Enum...).
        self._converters = _argument_converters(annotations)
        # Each parameter's schema with the shared "$defs", so that its "$ref"s resolve when parsing text.
        defs = input_schema.get("$defs")
        self._text_schemas = [(p.name, {**p.schema, "$defs": defs} if defs else p.schema) for p in parameters]

    def __repr__(self) -> str:
        return f"FunctionSchema({self.name!r}, parameters={[p.name for p in self.parameters]})"

    def bind(self, arguments: Optional[Dict[str, Any]], *, from_strings: bool = False) -> Dict[str, Any]:
        """Validate JSON arguments and turn them into keyword arguments for the function.

        Missing optional arguments are left out (the Python default applies), unknown ones are dropped
        unless the function takes ``**kwargs``, and values become what their annotations promise:
        dataclass instances, Enum members, tuples, sets, floats. Values that already are (strings, lists
        of strings...) are passed on as they are, not copied.

        Args:
            arguments: the JSON object of arguments (None means none).
            from_strings: every value arrived as a string (prompt arguments); parse each one by its
                parameter's schema first, as `coerce_from_string` does.

        Raises:
            ValidationError: listing every argument that does not match the input schema.
        """
        if arguments is None:
            arguments = {}
        elif not isinstance(arguments, dict):
            raise ValidationError([f"$: expected object, got {_json_type(arguments)}"])
        if from_strings:
            arguments = self._parse_strings(arguments)
        if self._check_arguments(arguments, None):  # invalid: a second pass, with paths, lists the problems
            raise ValidationError(list(self._check_arguments(arguments, "$")))
        if arguments.keys() <= self._parameter_names:  # the usual case: no unknown arguments to drop
            kwargs = dict(arguments)
        elif self.accepts_extra:
            kwargs = {name: value for name, value in arguments.items() if name not in self.injected}
        else:
            kwargs = {name: value for name, value in arguments.items() if name in self._parameter_names}
        if self._converters:
            for name, (convert, path) in self._converters.items():
                if name in kwargs:
                    kwargs[name] = convert(kwargs[name], path)
        return kwargs

    def _parse_strings(self, arguments: Dict[str, Any]) -> Dict[str, Any]:
        parsed = dict(arguments)
        for name, schema in self._text_schemas:
            text = arguments.get(name)
            if isinstance(text, str):
                try:
                    parsed[name] = coerce_from_string(text, schema)
                except ValidationError:
                    pass  # keep the text: validation then reports the mismatch with the argument's path
        return parsed

    def structure_output(self, value: Any) -> Any:
        """The JSON value for ``structuredContent``: `to_jsonable(value)`, wrapped when `wraps_output`."""
        value = to_jsonable(value)
        return {"result": value} if self.wraps_output else value


def function_schema(fn: Callable[..., Any], *, skip_types: Tuple[type, ...] = (),
                    output: bool = True) -> FunctionSchema:
    """Read a function's signature, type hints and docstring into its MCP schemas.

    Args:
        fn: a function, method, functools.partial or callable object. String annotations (and
            ``from __future__ import annotations``) are resolved in the function's module.
        skip_types: parameters annotated with one of these classes (or Optional of one) are injected by
            the caller instead of being arguments; the server passes its Context class here.
        output: also derive the output schema from the return annotation.

    Raises:
        TypeError: a parameter's annotation has no JSON Schema, a hint cannot be resolved, or a
            parameter cannot be passed by keyword (``*args``, positional-only).
    """
    name, doc, annotated = _inspect_callable(fn)
    description, argument_docs = _parse_docstring(doc)
    hints = _type_hints(annotated, name)
    defs = _Definitions()
    parameters: List[Parameter] = []
    injected: Dict[str, type] = {}
    annotations: Dict[str, Any] = {}
    accepts_extra = False
    for param in inspect.signature(fn).parameters.values():
        if param.kind is inspect.Parameter.VAR_KEYWORD:
            accepts_extra = True
            continue
        if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.POSITIONAL_ONLY):
            raise TypeError(f"{name}(): parameter {param.name!r} cannot be passed by keyword")
        annotation = hints.get(param.name, Any)
        skip_type = _skip_type(annotation, skip_types)
        if skip_type is not None:
            injected[param.name] = skip_type
            continue
        parameter = _parameter(name, param, annotation, argument_docs.get(param.name), defs)
        parameters.append(parameter)
        annotations[param.name] = annotation
    properties = {parameter.name: parameter.schema for parameter in parameters}
    input_schema = _object_schema(properties, [p.name for p in parameters if p.required])
    if defs.schemas:
        input_schema["$defs"] = defs.schemas
    output_schema, wraps_output = _output_schema(hints.get("return", Any)) if output else (None, False)
    return FunctionSchema(name, description, parameters, injected, input_schema, output_schema, wraps_output,
                          accepts_extra, annotations)


def _parameter(function: str, param: inspect.Parameter, annotation: Any, doc: Optional[str],
               defs: _Definitions) -> Parameter:
    try:
        schema = dict(_schema(annotation, defs))
    except TypeError as exc:
        raise TypeError(f"{function}(): parameter {param.name!r}: {exc}") from None
    description = schema.get("description") or doc  # an Annotated description wins over the docstring
    if description:
        schema["description"] = description
    required = param.default is inspect.Parameter.empty
    if not required:
        _add_default(schema, param.default)
    return Parameter(param.name, schema, required, description)


def _inspect_callable(fn: Callable[..., Any]) -> Tuple[str, Optional[str], Callable[..., Any]]:
    """The name, the docstring and the annotated function behind `fn`."""
    target: Any = fn
    while isinstance(target, functools.partial):
        target = target.func
    if inspect.isroutine(target):
        name, doc = target.__name__, target.__doc__
    elif inspect.isclass(target):  # calling a class runs its __init__
        name, doc, target = target.__name__, target.__doc__, target.__init__
    else:  # a callable object: its class's __call__ carries the annotations
        cls = type(target)
        name, doc, target = cls.__name__, cls.__call__.__doc__ or cls.__doc__, cls.__call__
    # Hints come from the innermost function, as inspect.signature reads its parameters from there too.
    return name, doc, inspect.unwrap(getattr(target, "__func__", target))


def _skip_type(annotation: Any, skip_types: Tuple[type, ...]) -> Optional[type]:
    """The skip type that `annotation` (or Optional of it) is, or a subclass of; None when none."""
    annotation = _unwrap(annotation)
    if get_origin(annotation) in _UNION_ORIGINS:
        arms = [arm for arm in get_args(annotation) if arm is not _NoneType]
        if len(arms) != 1:
            return None
        annotation = _unwrap(arms[0])
    if get_origin(annotation) is None and isinstance(annotation, type):
        for skip_type in skip_types:
            if issubclass(annotation, skip_type):
                return skip_type
    return None


def _output_schema(annotation: Any) -> Tuple[Optional[Schema], bool]:
    """(output schema, wraps_output) for a return annotation.

    Text is a tool's natural content, so no annotation, None, Any and str give no schema. So does a type
    with no JSON Schema (such as a server's content classes): its value is content, not structured data.
    Objects are their own schema; anything else is wrapped as {"result": value}.
    """
    bare = _unwrap(annotation)
    if bare is Any or bare is _NoneType or bare is None or bare is str:
        return None, False
    try:
        schema = type_schema(annotation)
    except TypeError:
        return None, False
    origin = get_origin(bare)
    if origin is None and (_is_dataclass(bare) or _is_typeddict(bare)):
        return _inline_root_ref(schema), False
    if (origin or bare) in _MAPPING_ORIGINS:
        return schema, False
    defs = schema.pop("$defs", None)
    wrapped = _object_schema({"result": schema}, ["result"])
    if defs:
        wrapped["$defs"] = defs
    return wrapped, True


def _inline_root_ref(schema: Schema) -> Schema:
    """Replace a root {"$ref": "#/$defs/X"} by X itself: MCP wants "type": "object" at an outputSchema's root.

    X stays in "$defs" only when something still refers to it (a recursive class).
    """
    ref = schema["$ref"]
    name = ref[len("#/$defs/"):]
    defs = dict(schema["$defs"])
    definition = defs.pop(name)
    root = {**definition, **{key: value for key, value in schema.items() if key not in ("$ref", "$defs")}}
    if _refers_to(root, ref) or _refers_to(defs, ref):
        defs[name] = definition
    if defs:
        root["$defs"] = defs
    return root


def _refers_to(node: Any, ref: str) -> bool:
    """Whether a "$ref" to `ref` occurs anywhere in `node`."""
    if isinstance(node, dict):
        return node.get("$ref") == ref or any(_refers_to(value, ref) for value in node.values())
    if isinstance(node, list):
        return any(_refers_to(item, ref) for item in node)
    return False


# Docstring sections that describe the arguments, Google style ("Args:" then indented entries) and NumPy
# style ("Parameters" underlined with dashes, then "name : type" entries with indented descriptions).
_GOOGLE_HEADERS = ("Args:", "Arguments:", "Parameters:")
_GOOGLE_ENTRY = re.compile(r"^\*{0,2}(?P<name>\w+)\s*(?:\([^)]*\))?\s*:\s*(?P<text>.*)$")  # name (type): text
_NUMPY_HEADER = "Parameters"
_NUMPY_ENTRY = re.compile(r"^\*{0,2}(?P<name>\w+)\s*(?::.*)?$")  # name : type


def _parse_docstring(doc: Optional[str]) -> Tuple[Optional[str], Dict[str, str]]:
    """Split a docstring into its description (without the arguments section) and per-argument texts."""
    if not doc:
        return None, {}
    lines = [line.rstrip() for line in inspect.cleandoc(doc).splitlines()]
    section = _find_arguments_section(lines)
    if section is None:
        return "\n".join(lines).strip() or None, {}
    start, body, end, entry = section
    rest = "\n".join(lines[:start] + lines[end:]).strip()
    return rest or None, _argument_texts(lines[body:end], entry)


def _find_arguments_section(lines: List[str]) -> Optional[Tuple[int, int, int, Pattern[str]]]:
    """(header line, first body line, end line, entry pattern) of the arguments section, if any."""
    for start, line in enumerate(lines):
        if line in _GOOGLE_HEADERS:  # cleandoc removed the common indent: headers sit at column 0
            end = start + 1
            while end < len(lines) and (not lines[end] or lines[end][0].isspace()):
                end += 1
            return start, start + 1, end, _GOOGLE_ENTRY
        if line == _NUMPY_HEADER and _is_underline(lines, start + 1):
            end = start + 2
            while end < len(lines) and not (lines[end] and not lines[end][0].isspace()
                                            and _is_underline(lines, end + 1)):
                end += 1
            return start, start + 2, end, _NUMPY_ENTRY
    return None


def _is_underline(lines: List[str], index: int) -> bool:
    return index < len(lines) and bool(lines[index].strip()) and set(lines[index].strip()) == {"-"}


def _argument_texts(body: List[str], entry: Pattern[str]) -> Dict[str, str]:
    """name -> description from a section body: entries at its left margin, continuations indented."""
    texts: Dict[str, List[str]] = {}
    current: Optional[str] = None
    for line in textwrap.dedent("\n".join(body)).splitlines():
        match = entry.match(line) if line[:1] not in (" ", "\t") else None
        if match:
            current = match.group("name")
            texts[current] = [match.groupdict().get("text") or ""]
        elif current is not None and line.strip():
            texts[current].append(line.strip())
    joined = {name: " ".join(part for part in parts if part) for name, parts in texts.items()}
    return {name: text for name, text in joined.items() if text}


# --- validation -----------------------------------------------------------------------------------------


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
_Check = Callable[[Any, Optional[str]], Tuple[str, ...]]
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
_cache_lock = threading.Lock()


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
    "null": (_NoneType,), "boolean": (bool,), "integer": (int,), "number": (int, float), "string": (str,),
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
        return (f"{path}: expected {expected}, got {_json_type(instance)}",)
    return check_type


# Each keyword compiler below reads its keywords from one schema and returns their check, or None when
# they are absent (or say nothing). `compiler.compile(sub)` compiles a child value's schema; schemas that
# apply at the same path (allOf, anyOf, oneOf, not) pass `refs` on.
_KeywordCompiler = Callable[[Schema, _Compiler, FrozenSet[str]], Optional[_Check]]

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
        return tuple(f"{_child(path, name)}: missing required property"
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
            child = None if path is None else _child(path, key)
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
                problems += check(value, _child(path, key))
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
    if not _is_count(least) and not _is_count(most):
        return None
    low = least if _is_count(least) else 0
    high = most if _is_count(most) else math.inf

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
        token = unquote(token).replace("~1", "/").replace("~0", "~")
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
    # which float division gets wrong.
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


def _json_type(value: Any) -> str:
    """The JSON type name of a value, for schemas and messages (a Python type name when it has none)."""
    for name in _TYPE_CLASSES:
        if _has_type(value, name):
            return name
    return type(value).__name__


def _child(path: str, key: Any) -> str:
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


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# --- values ---------------------------------------------------------------------------------------------


_JSON_SCALARS = frozenset({str, int, float, bool, _NoneType})


def to_jsonable(value: Any) -> Any:
    """A Python value in its JSON form, recursively: dataclasses become dicts, Enum members their values,
    tuples and sets lists. Other values are returned unchanged, and so are (uncopied) lists of scalars and
    string-keyed dicts of scalars, which already are JSON.

    Raises:
        TypeError: a dict key is not a string (JSON object keys are).
    """
    kind = value.__class__
    if kind in _JSON_SCALARS:
        return value
    if kind is dict and all(key.__class__ is str and item.__class__ in _JSON_SCALARS
                            for key, item in value.items()):
        return value
    if kind is list and all(item.__class__ in _JSON_SCALARS for item in value):
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: to_jsonable(getattr(value, field.name)) for field in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return to_jsonable(value.value)
    if isinstance(value, dict):
        for key in value:
            if not isinstance(key, str):
                raise TypeError(f"JSON object keys must be strings, got {key!r}")
        return {key: to_jsonable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_jsonable(item) for item in value]
    return value


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


def _parse_as(text: str, json_type: str) -> Any:
    """Parse text as one JSON type; ValueError when it is not one."""
    if json_type == "string":
        return text
    if json_type == "integer":
        return int(text)
    if json_type == "number":
        try:
            return int(text)
        except ValueError:
            number = float(text)
            if not math.isfinite(number):  # float() accepts "nan" and "inf"; JSON has neither
                raise ValueError("not a finite number") from None
            return number
    if json_type == "boolean":
        word = text.strip().lower()
        if word in ("true", "1"):
            return True
        if word in ("false", "0"):
            return False
        raise ValueError("not a boolean")
    if json_type == "null":
        if text.strip() == "null":
            return None
        raise ValueError("not null")
    if json_type in ("object", "array"):
        value = _load_json(text)
        if not _has_type(value, json_type):
            raise ValueError(f"not an {json_type}")
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


# --- JSON -> Python, for bind ---------------------------------------------------------------------------

# A converter turns a validated JSON value into what an annotation promises: ``convert(value, path)``.
# Converters are planned once per annotation; None stands for "the JSON value already is it". The path is
# needed only for the message of a dataclass that rejects its values, so it is kept as nested
# (parent, key) pairs (an int key is an array index) and turned into text by `_path_text` only then.
_Convert = Callable[[Any, Any], Any]


def _argument_converters(annotations: Dict[str, Any]) -> Dict[str, Tuple[_Convert, str]]:
    """Parameter name -> (its converter, its path), for the parameters whose JSON value needs converting."""
    classes: Dict[type, Optional[_Convert]] = {}
    converters = {}
    for name, annotation in annotations.items():
        convert = _converter(annotation, classes)
        if convert is not None:
            converters[name] = (convert, _child("$", name))
    return converters


def _converter(annotation: Any, classes: Dict[type, Optional[_Convert]]) -> Optional[_Convert]:
    """The converter for `annotation`: dataclass instances, Enum members, tuples, sets and floats, with
    containers converted item by item; None when the JSON value needs no converting.

    `classes` holds the converters of the dataclasses and TypedDicts planned so far: a class that contains
    itself finds its own converter there.
    """
    annotation = _unwrap(annotation)
    origin, args = get_origin(annotation), get_args(annotation)
    if origin in _UNION_ORIGINS:
        return _union_converter(args, classes)
    if origin is None and isinstance(annotation, type):
        if issubclass(annotation, enum.Enum):
            return _enum_converter(annotation)
        if annotation is float:
            return _float_converter
        if _is_dataclass(annotation):
            return _dataclass_converter(annotation, classes)
        if _is_typeddict(annotation):
            return _typeddict_converter(annotation, classes)
    container = origin or annotation
    if container is tuple and args and args[-1] is not Ellipsis:
        return _fixed_tuple_converter(args, classes)
    if container is tuple or container in _SET_ORIGINS or container in _ARRAY_ORIGINS:
        return _sequence_converter(container, args[0] if args else Any, classes)
    if container in _MAPPING_ORIGINS and len(args) == 2:
        return _mapping_converter(args[1], classes)
    return None


def _float_converter(value: Any, path: Any) -> Any:
    return float(value) if _is_integer(value) else value


def _enum_converter(cls: type) -> _Convert:
    def convert_enum(value: Any, path: Any) -> Any:
        return cls(value)
    return convert_enum


def _union_converter(arms: Tuple[Any, ...], classes: Dict[type, Optional[_Convert]]) -> Optional[_Convert]:
    """Convert by the first arm of the union whose schema accepts the value; None stays None."""
    arms = tuple(arm for arm in arms if arm is not _NoneType)
    if len(arms) == 1:  # Optional[X]: no need to ask X's schema
        only = _converter(arms[0], classes)
        if only is None:
            return None

        def convert_optional(value: Any, path: Any) -> Any:
            return None if value is None else only(value, path)
        return convert_optional
    converters = [_converter(arm, classes) for arm in arms]
    if all(convert is None for convert in converters):
        return None
    choices = [(_compile_check(type_schema(arm)), convert) for arm, convert in zip(arms, converters)]

    def convert_union(value: Any, path: Any) -> Any:
        if value is None:
            return None
        for check, convert in choices:
            if not check(value, None):
                return value if convert is None else convert(value, path)
        return value
    return convert_union


def _dataclass_converter(cls: type, classes: Dict[type, Optional[_Convert]]) -> _Convert:
    """A JSON object becomes an instance, built from its init fields (the class's defaults fill the rest)."""
    if cls in classes:
        return classes[cls]  # type: ignore[return-value]  # a dataclass always has a converter
    fields: List[Tuple[str, Optional[_Convert]]] = []  # (init field, its converter), filled in below

    def convert_dataclass(value: Any, path: Any) -> Any:
        if not isinstance(value, dict):
            return value
        kwargs = {name: value[name] if convert is None else convert(value[name], (path, name))
                  for name, convert in fields if name in value}
        try:
            return cls(**kwargs)
        except (TypeError, ValueError) as exc:  # e.g. a __post_init__ that rejects the values
            raise ValidationError([f"{_path_text(path)}: {exc}"]) from exc

    classes[cls] = convert_dataclass
    hints = _type_hints(cls, cls.__name__)
    fields.extend((field.name, _converter(hints.get(field.name, Any), classes))
                  for field in dataclasses.fields(cls) if field.init)
    return convert_dataclass


def _typeddict_converter(cls: type, classes: Dict[type, Optional[_Convert]]) -> Optional[_Convert]:
    """A TypedDict stays a dict; the values of its keys are converted by the keys' annotations."""
    if cls in classes:
        return classes[cls]
    converters: Dict[str, _Convert] = {}  # filled in below

    def convert_typeddict(value: Any, path: Any) -> Any:
        if not isinstance(value, dict):
            return value
        return {key: item if key not in converters else converters[key](item, (path, key))
                for key, item in value.items()}

    classes[cls] = convert_typeddict
    for key, hint in _type_hints(cls, cls.__name__).items():
        convert = _converter(hint, classes)
        if convert is not None:
            converters[key] = convert
    if not converters:  # then nothing refers to convert_typeddict either: a converter would refer back
        classes[cls] = None
    return classes[cls]


def _fixed_tuple_converter(args: Tuple[Any, ...], classes: Dict[type, Optional[_Convert]]) -> _Convert:
    """tuple[X, Y]: each item by its own annotation."""
    converters = [_converter(arg, classes) for arg in args]

    def convert_tuple(value: Any, path: Any) -> Any:
        if not isinstance(value, list):
            return value
        return tuple(item if convert is None else convert(item, (path, index))
                     for index, (item, convert) in enumerate(zip(value, converters)))
    return convert_tuple


def _sequence_converter(container: Any, item: Any,
                        classes: Dict[type, Optional[_Convert]]) -> Optional[_Convert]:
    """A JSON array becomes a tuple (tuple[X, ...]), a set or frozenset, or stays a list, of converted items."""
    convert_item = _converter(item, classes)
    build: Optional[Callable[[Any], Any]] = None  # a list stays the list it is
    if container is tuple or container is frozenset:
        build = container
    elif container in _SET_ORIGINS:
        build = set
    if build is None and convert_item is None:
        return None

    def convert_sequence(value: Any, path: Any) -> Any:
        if not isinstance(value, list):
            return value
        items = value if convert_item is None else [convert_item(x, (path, i)) for i, x in enumerate(value)]
        return items if build is None else build(items)
    return convert_sequence


def _mapping_converter(item: Any, classes: Dict[type, Optional[_Convert]]) -> Optional[_Convert]:
    """dict[str, X]: each value by X."""
    convert_item = _converter(item, classes)
    if convert_item is None:
        return None

    def convert_mapping(value: Any, path: Any) -> Any:
        if not isinstance(value, dict):
            return value
        return {key: convert_item(item, (path, str(key))) for key, item in value.items()}
    return convert_mapping


def _path_text(path: Any) -> str:
    """The text of a path kept as (parent, key) pairs: "$.items[1].start"."""
    if isinstance(path, str):
        return path
    parent, key = path
    text = _path_text(parent)
    return f"{text}[{key}]" if isinstance(key, int) else _child(text, key)
