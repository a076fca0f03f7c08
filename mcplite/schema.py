"""JSON Schema for plain Python functions: generate, validate, coerce. Pure: no I/O, no threads.

Tools and prompts are plain functions. This module reads a function's signature, type hints and docstring
into the JSON Schemas MCP needs (a tool's ``inputSchema`` and ``outputSchema``, a prompt's arguments),
checks JSON values against schemas, and turns validated JSON arguments back into the Python values the
annotations promise (dataclass instances, Enum members, tuples).

The sections below, in reading order:

* type -> schema: `type_schema`, one helper per family of annotations;
* function -> schema: `function_schema`, `FunctionSchema` (with `bind`), docstring parsing;
* validation: `validate`, the subset of JSON Schema 2020-12 that tool schemas use;
* values: `to_jsonable` (Python -> JSON), `coerce_from_string` (text -> JSON), JSON -> Python for `bind`.

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
import types
import typing
from typing import Any, Callable, Dict, FrozenSet, List, NamedTuple, Optional, Pattern, Tuple, Union
from typing import Annotated, Literal, get_args, get_origin
from urllib.parse import unquote

__all__ = [
    "ValidationError", "validate", "Parameter", "FunctionSchema", "function_schema", "type_schema",
    "to_jsonable", "coerce_from_string",
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
    if len(json_types) == 1 and next(iter(json_types)) in _TYPE_CHECKS:
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
        self._annotations = annotations  # parameter name -> Python annotation, for bind's conversions

    def __repr__(self) -> str:
        return f"FunctionSchema({self.name!r}, parameters={[p.name for p in self.parameters]})"

    def bind(self, arguments: Optional[Dict[str, Any]], *, from_strings: bool = False) -> Dict[str, Any]:
        """Validate JSON arguments and turn them into keyword arguments for the function.

        Missing optional arguments are left out (the Python default applies), unknown ones are dropped
        unless the function takes ``**kwargs``, and values become what their annotations promise:
        dataclass instances, Enum members, tuples, sets, floats.

        Args:
            arguments: the JSON object of arguments (None means none).
            from_strings: every value arrived as a string (prompt arguments); parse each one by its
                parameter's schema first, as `coerce_from_string` does.

        Raises:
            ValidationError: listing every argument that does not match the input schema.
        """
        arguments = {} if arguments is None else arguments
        if not isinstance(arguments, dict):
            raise ValidationError([f"$: expected object, got {_json_type(arguments)}"])
        if from_strings:
            arguments = self._parse_strings(arguments)
        validate(arguments, self.input_schema)
        kwargs = {}
        for name, value in arguments.items():
            if name in self._annotations:
                kwargs[name] = _to_python(value, self._annotations[name], _child("$", name))
            elif self.accepts_extra and name not in self.injected:
                kwargs[name] = value
        return kwargs

    def _parse_strings(self, arguments: Dict[str, Any]) -> Dict[str, Any]:
        parsed = dict(arguments)
        defs = self.input_schema.get("$defs")
        for parameter in self.parameters:
            text = arguments.get(parameter.name)
            if isinstance(text, str):
                schema = {**parameter.schema, "$defs": defs} if defs else parameter.schema
                try:
                    parsed[parameter.name] = coerce_from_string(text, schema)
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
    """
    errors = _Validator(schema).errors(instance, schema, "$")
    if errors:
        raise ValidationError(errors)


_TYPE_CHECKS: Dict[str, Callable[[Any], bool]] = {
    "null": lambda value: value is None,
    "boolean": lambda value: isinstance(value, bool),
    "integer": lambda value: isinstance(value, int) and not isinstance(value, bool),
    "number": lambda value: isinstance(value, (int, float)) and not isinstance(value, bool),
    "string": lambda value: isinstance(value, str),
    "array": lambda value: isinstance(value, list),
    "object": lambda value: isinstance(value, dict),
}

# (keyword, the comparison a valid number passes, its symbol for messages)
_BOUNDS = (
    ("minimum", operator.ge, ">="),
    ("exclusiveMinimum", operator.gt, ">"),
    ("maximum", operator.le, "<="),
    ("exclusiveMaximum", operator.lt, "<"),
)


class _Validator:
    """Checks values against schemas that live in one root schema, where local "$ref" pointers resolve."""

    def __init__(self, root: Any) -> None:
        self.root = root

    def errors(self, instance: Any, schema: Any, path: str, refs: FrozenSet[str] = frozenset()) -> List[str]:
        """Every problem of `instance` (at `path`) against `schema`.

        `refs` are the "$ref"s already followed at this same path: following one again would loop forever
        without consuming any of the instance, so it is skipped. Moving into a child value resets them.
        """
        if schema is True:
            return []
        if schema is False:
            return [f"{path}: no value is allowed here"]
        if not isinstance(schema, dict):
            return []  # not a schema: nothing to check
        errors = []
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref not in refs:
            target = _resolve_pointer(self.root, ref)
            if target is not None:
                errors += self.errors(instance, target, path, refs | {ref})
        type_errors = self._type(instance, schema, path)
        if type_errors:  # a value of the wrong type has no other problem worth listing
            return errors + type_errors
        errors += self._enum(instance, schema, path)
        errors += self._object(instance, schema, path)
        errors += self._array(instance, schema, path)
        errors += self._number(instance, schema, path)
        errors += self._string(instance, schema, path)
        errors += self._combinators(instance, schema, path, refs)
        return errors

    def _type(self, instance: Any, schema: Schema, path: str) -> List[str]:
        names = _type_names(schema)
        if not names or any(_TYPE_CHECKS.get(name, lambda value: True)(instance) for name in names):
            return []
        return [f"{path}: expected {' or '.join(map(str, names))}, got {_json_type(instance)}"]

    def _enum(self, instance: Any, schema: Schema, path: str) -> List[str]:
        errors = []
        allowed = schema.get("enum")
        if isinstance(allowed, list) and not any(_json_equal(instance, value) for value in allowed):
            errors.append(f"{path}: {_show(instance)} is not one of {_show(allowed)}")
        if "const" in schema and not _json_equal(instance, schema["const"]):
            errors.append(f"{path}: expected {_show(schema['const'])}, got {_show(instance)}")
        return errors

    def _object(self, instance: Any, schema: Schema, path: str) -> List[str]:
        if not isinstance(instance, dict):
            return []
        errors = []
        for name in _list(schema.get("required")):
            if name not in instance:
                errors.append(f"{_child(path, name)}: missing required property")
        properties = _dict(schema.get("properties"))
        patterns = [(_compile(pattern), sub) for pattern, sub in _dict(schema.get("patternProperties")).items()]
        additional = schema.get("additionalProperties", True)
        for key, value in instance.items():
            child = _child(path, key)
            matched = key in properties
            if matched:
                errors += self.errors(value, properties[key], child)
            for regex, sub in patterns:
                if regex is not None and regex.search(key):
                    matched = True
                    errors += self.errors(value, sub, child)
            if matched:
                continue
            if additional is False:
                errors.append(f"{child}: unexpected property")
            else:
                errors += self.errors(value, additional, child)
        return errors

    def _array(self, instance: Any, schema: Schema, path: str) -> List[str]:
        if not isinstance(instance, list):
            return []
        errors = []
        prefix, items = schema.get("prefixItems"), schema.get("items")
        if isinstance(items, list):  # the draft 4-7 spelling of prefixItems
            prefix, items = items, schema.get("additionalItems")
        prefix = _list(prefix)
        for index, item in enumerate(instance):
            sub = prefix[index] if index < len(prefix) else items
            if sub is not None:
                errors += self.errors(item, sub, f"{path}[{index}]")
        if _is_count(schema.get("minItems")) and len(instance) < schema["minItems"]:
            errors.append(f"{path}: expected at least {schema['minItems']} items, got {len(instance)}")
        if _is_count(schema.get("maxItems")) and len(instance) > schema["maxItems"]:
            errors.append(f"{path}: expected at most {schema['maxItems']} items, got {len(instance)}")
        if schema.get("uniqueItems") is True:
            for later, item in enumerate(instance):
                earlier = next((i for i in range(later) if _json_equal(instance[i], item)), None)
                if earlier is not None:
                    errors.append(f"{path}: items must be unique, but [{earlier}] and [{later}] are equal")
        return errors

    def _number(self, instance: Any, schema: Schema, path: str) -> List[str]:
        if not _TYPE_CHECKS["number"](instance):
            return []
        errors = []
        for keyword, passes, symbol in _BOUNDS:
            bound: Any = schema.get(keyword)
            if _TYPE_CHECKS["number"](bound) and not passes(instance, bound):
                errors.append(f"{path}: {_show(instance)} is not {symbol} {_show(bound)} ({keyword})")
        step: Any = schema.get("multipleOf")
        if _TYPE_CHECKS["number"](step) and step > 0 and not _is_multiple(instance, step):
            errors.append(f"{path}: {_show(instance)} is not a multiple of {_show(step)}")
        return errors

    def _string(self, instance: Any, schema: Schema, path: str) -> List[str]:
        if not isinstance(instance, str):
            return []
        errors = []
        if _is_count(schema.get("minLength")) and len(instance) < schema["minLength"]:
            errors.append(f"{path}: expected at least {schema['minLength']} characters, got {len(instance)}")
        if _is_count(schema.get("maxLength")) and len(instance) > schema["maxLength"]:
            errors.append(f"{path}: expected at most {schema['maxLength']} characters, got {len(instance)}")
        pattern = schema.get("pattern")
        regex = _compile(pattern) if isinstance(pattern, str) else None
        if regex is not None and not regex.search(instance):
            errors.append(f"{path}: {_show(instance)} does not match the pattern {_show(pattern)}")
        return errors

    def _combinators(self, instance: Any, schema: Schema, path: str, refs: FrozenSet[str]) -> List[str]:
        errors = []
        for sub in _list(schema.get("allOf")):
            errors += self.errors(instance, sub, path, refs)
        for keyword in ("anyOf", "oneOf"):
            branches = schema.get(keyword)
            if not isinstance(branches, list):
                continue
            branch_errors = [self.errors(instance, sub, path, refs) for sub in branches]
            matches = sum(1 for found in branch_errors if not found)
            if matches == 0:
                # Problems at this very path drop the repeated path; deeper ones keep theirs.
                reasons = [error[len(path) + 2:] if error.startswith(path + ": ") else error
                           for error in sum(branch_errors, [])]
                errors.append(f"{path}: matches none of the {keyword} schemas [{' | '.join(reasons)}]")
            elif keyword == "oneOf" and matches > 1:
                errors.append(f"{path}: matches {matches} of the oneOf schemas, expected exactly one")
        if "not" in schema and not self.errors(instance, schema["not"], path, refs):
            errors.append(f'{path}: must not match the "not" schema')
        return errors


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
    for name, check in _TYPE_CHECKS.items():
        if check(value):
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


def to_jsonable(value: Any) -> Any:
    """A Python value in its JSON form, recursively: dataclasses become dicts, Enum members their values,
    tuples and sets lists. Other values are returned unchanged.

    Raises:
        TypeError: a dict key is not a string (JSON object keys are).
    """
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
        return _coerce(text, schema, _Validator(schema), frozenset())
    except ValueError as exc:
        raise ValidationError([f"$: {exc}"]) from None


def _coerce(text: str, schema: Any, validator: _Validator, refs: FrozenSet[str]) -> Any:
    if not isinstance(schema, dict):
        return _json_or_text(text)
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref not in refs:
        target = _resolve_pointer(validator.root, ref)
        if target is not None:
            return _coerce(text, target, validator, refs | {ref})
    names = _type_names(schema)
    if names:
        candidates = [(_attempt(_parse_as, text, name), schema) for name in names]
        return _choose(candidates, validator, f"cannot parse {_show(text)} as {' or '.join(names)}")
    for keyword in ("anyOf", "oneOf"):
        branches = schema.get(keyword)
        if isinstance(branches, list):
            candidates = [(_attempt(_coerce, text, branch, validator, refs), branch) for branch in branches]
            return _choose(candidates, validator, f"{_show(text)} parses as none of the {keyword} schemas")
    return _json_or_text(text)


_UNPARSED = object()  # what `_attempt` returns for a parse that failed


def _attempt(parse: Callable[..., Any], *args: Any) -> Any:
    try:
        return parse(*args)
    except ValueError:
        return _UNPARSED


def _choose(candidates: List[Tuple[Any, Any]], validator: _Validator, failure: str) -> Any:
    """The first parsed value that validates against its schema, else the first parsed value at all (whose
    problem validation will then report), else ValueError(failure)."""
    parsed = [(value, schema) for value, schema in candidates if value is not _UNPARSED]
    if not parsed:
        raise ValueError(failure)
    for value, schema in parsed:
        if not validator.errors(value, schema, "$"):
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
        if not _TYPE_CHECKS[json_type](value):
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


def _to_python(value: Any, annotation: Any, path: str) -> Any:
    """Turn a validated JSON value into what `annotation` promises: dataclass instances, Enum members,
    tuples, sets and floats; containers are converted item by item. Anything else passes unchanged."""
    annotation = _unwrap(annotation)
    origin, args = get_origin(annotation), get_args(annotation)
    if origin in _UNION_ORIGINS:
        return _union_to_python(value, args, path)
    if origin is None and isinstance(annotation, type):
        if issubclass(annotation, enum.Enum):
            return annotation(value)
        if annotation is float and _TYPE_CHECKS["integer"](value):
            return float(value)
        if _is_dataclass(annotation) and isinstance(value, dict):
            return _dataclass_to_python(value, annotation, path)
        if _is_typeddict(annotation) and isinstance(value, dict):
            hints = _type_hints(annotation, annotation.__name__)
            return {key: _to_python(item, hints.get(key, Any), _child(path, key))
                    for key, item in value.items()}
    container = origin or annotation
    if isinstance(value, list):
        if container is tuple:
            item_types = _tuple_item_types(args, len(value))
            return tuple(_to_python(item, item_type, f"{path}[{index}]")
                         for index, (item, item_type) in enumerate(zip(value, item_types)))
        items = [_to_python(item, args[0] if args else Any, f"{path}[{i}]") for i, item in enumerate(value)]
        if container in _SET_ORIGINS:
            return frozenset(items) if container is frozenset else set(items)
        if container in _ARRAY_ORIGINS:
            return items
    if isinstance(value, dict) and container in _MAPPING_ORIGINS and len(args) == 2:
        return {key: _to_python(item, args[1], _child(path, key)) for key, item in value.items()}
    return value


def _tuple_item_types(args: Tuple[Any, ...], length: int) -> List[Any]:
    if args and args[-1] is not Ellipsis:  # tuple[X, Y]
        return list(args)
    return [args[0] if args else Any] * length  # tuple[X, ...] or a bare tuple


def _union_to_python(value: Any, arms: Tuple[Any, ...], path: str) -> Any:
    """Convert by the first arm of the union whose schema accepts the value."""
    if value is None:
        return None
    candidates = [arm for arm in arms if arm is not _NoneType]
    for arm in candidates:
        if len(candidates) == 1 or _accepts(arm, value):
            return _to_python(value, arm, path)
    return value


def _accepts(annotation: Any, value: Any) -> bool:
    schema = type_schema(annotation)
    return not _Validator(schema).errors(value, schema, "$")


def _dataclass_to_python(value: Dict[str, Any], cls: type, path: str) -> Any:
    hints = _type_hints(cls, cls.__name__)
    kwargs = {field.name: _to_python(value[field.name], hints.get(field.name, Any), _child(path, field.name))
              for field in dataclasses.fields(cls) if field.init and field.name in value}
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as exc:  # e.g. a __post_init__ that rejects the values
        raise ValidationError([f"{path}: {exc}"]) from exc
