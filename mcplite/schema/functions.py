"""JSON Schema for plain Python functions: from type hints to schemas, and from JSON back to Python values.

Tools and prompts are plain functions. This module owns reading a function's signature, type hints and
docstring into the JSON Schemas MCP needs (a tool's ``inputSchema`` and ``outputSchema``, a prompt's
arguments), and turning validated JSON arguments back into the Python values the annotations promise
(dataclass instances, Enum members, tuples). Checking values against schemas and parsing text by a schema
are `validation`'s: this module uses them, and re-exports their names for existing callers. Pure: no I/O.

The sections below, in reading order:

* type -> schema: `type_schema`, one helper per family of annotations;
* function -> schema: `function_schema`, `FunctionSchema` (with `bind`), docstring parsing;
* Python -> JSON: `to_jsonable`;
* JSON -> Python for `bind`: converters planned once per function from its annotations.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import collections.abc
import enum
import functools
import json
import re
import sys
import types
import typing
from typing import (
    Annotated,
    Any,
    Callable,
    Dict,
    List,
    Literal,
    NamedTuple,
    Optional,
    Tuple,
    Union,
    get_args,
    get_origin,
)

# validate and compile_schema are not used here: like ValidationError and coerce_from_string, they are
# re-exported (see __all__) for the callers that import them from here, where they used to live.
# The check that compile_schema wraps: `bind` runs on every tool call, and calling it directly saves a call.
from .validation import (
    ValidationError,
    _compile_check,
    coerce_from_string,
    compile_schema,
    json_type,
    member_path,
    validate,
)

__all__ = [
    "ValidationError", "validate", "compile_schema", "Parameter", "FunctionSchema", "function_schema",
    "type_schema", "to_jsonable", "coerce_from_string", "Header",
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
    if annotation is Any:
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
        import inspect  # here, not at the top: inspect is heavy, and this line is rarely reached

        if annotation is inspect.Parameter.empty:  # a signature's marker of a parameter without annotation
            return {}
        raise TypeError(f"unsupported type annotation {annotation!r}")
    return container


def _generic_schema(annotation: Any, origin: Any, args: Tuple[Any, ...], defs: _Definitions) -> Schema:
    if origin is Annotated:
        return _annotated_schema(args[0], args[1:], defs)
    if origin in _KEY_QUALIFIERS:
        return _schema(args[0], defs)
    if origin in _UNION_ORIGINS:
        arms = [_schema(arm, defs) for arm in args]
        headers = [arm.pop("x-mcp-header") for arm in arms if "x-mcp-header" in arm]
        if len(headers) == 1:  # Optional[Annotated[str, Header(...)]]: the header is the parameter's
            return _with_header({"anyOf": arms}, headers[0])
        if headers:
            raise TypeError(f"{annotation!r}: a union may carry one Header, not {len(headers)}")
        return {"anyOf": arms}
    if origin is Literal:
        return _enum_schema(list(args))
    container = _container_schema(origin, args, defs)
    if container is None:
        raise TypeError(f"unsupported type annotation {annotation!r}")
    return container


class Header:
    """Metadata for ``Annotated``: a tool parameter that the client also sends as an HTTP header.

    ``Annotated[str, Header("Region")]`` puts ``"x-mcp-header": "Region"`` in the parameter's JSON schema.
    On revision 2026-07-28 over HTTP a client then sends the argument's value as ``Mcp-Param-Region`` too,
    so that gateways and load balancers can route on it without reading the body; the server checks that
    the header matches the body. Only ``str``, ``int`` and ``bool`` parameters (or Optional of one) may
    carry a header. The name must be an HTTP token (letters, digits, ``-`` ...) unique within the tool,
    case-insensitively; a tool that breaks these rules is refused at registration with a `ValueError`.

    Example::

        from typing import Annotated
        from mcplite import Header, Server

        server = Server("db")

        @server.tool
        def run_sql(region: Annotated[str, Header("Region")], query: str) -> str:
            "Run a query in one region."
            ...

    A description may sit beside it: ``Annotated[str, Header("Region"), "the data centre"]``.
    """

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name  # checked with the whole schema at registration, where the tool's name is known

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Header) and self.name == other.name

    def __hash__(self) -> int:
        return hash((Header, self.name))

    def __repr__(self) -> str:
        return f"Header({self.name!r})"


def _annotated_schema(annotation: Any, metadata: Tuple[Any, ...], defs: _Definitions) -> Schema:
    """Annotated[X, "text"] or Annotated[X, Field(description="text")]: X's schema with a description;
    Annotated[X, Header("Name")]: with ``"x-mcp-header": "Name"``."""
    schema = _schema(annotation, defs)
    description = _description_of(metadata)
    if description is not None:
        schema = dict(schema, description=description)
    for item in metadata:
        if isinstance(item, Header):
            schema = _with_header(schema, item.name)
    return schema


def _with_header(schema: Schema, name: str) -> Schema:
    """``schema`` annotated with ``"x-mcp-header": name``.

    Optional[X] is ``{"anyOf": [X, {"type": "null"}]}``, which a header's rules do not read as a string,
    integer or boolean (nor as a type list: peers, and the conformance suite, want ``"type"`` to be one
    primitive). When one arm is a bare primitive type and the other null, the header's schema is that arm
    alone: null means "no header" (streamable-http.mdx), and an optional parameter may be left out, which says
    the same. Anything else keeps its shape and is judged at registration.
    """
    arms = schema.get("anyOf")
    if isinstance(arms, list) and len(arms) == 2 and {"type": "null"} in arms:
        (other,) = [arm for arm in arms if arm != {"type": "null"}]
        if isinstance(other, dict) and isinstance(other.get("type"), str) and set(other) <= {"type", "description"}:
            schema = {**{key: value for key, value in schema.items() if key != "anyOf"}, **other}
    return dict(schema, **{"x-mcp-header": name})


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
    json_types = {json_type(value) for value in values}
    schema: Schema = {}
    if len(json_types) == 1 and None not in json_types:
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
        import dataclasses  # already loaded: see _is_dataclass

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
    # The attribute dataclasses.is_dataclass looks for. The dataclasses module is imported only where a
    # dataclass is met, and then costs nothing: the program that made the class has imported it already.
    return isinstance(annotation, type) and hasattr(annotation, "__dataclass_fields__")


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
    except TypeError as exc:
        if "unsupported operand type(s) for |" in str(exc) and sys.version_info < (3, 10):
            # A string hint (or `from __future__ import annotations`) written `X | None`: evaluating it needs
            # Python 3.10; typing's own message names neither the function nor the cure.
            raise TypeError(f"cannot resolve the type hints of {what}: a hint uses `X | Y`, which needs Python "
                            f"3.10 or newer; on Python {sys.version_info[0]}.{sys.version_info[1]} write "
                            "Optional[X] or Union[X, Y] (from typing)") from exc
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
        if from_strings and isinstance(arguments, dict):
            arguments = self._parse_strings(arguments)
        # The input schema's "type": "object" refuses a non-object too. Invalid values only get a second
        # pass, which lists the problems with their paths.
        if self._check_arguments(arguments, None):
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
    for param_name, kind, default in _signature(fn):
        if kind == "VAR_KEYWORD":
            accepts_extra = True
            continue
        if kind in ("VAR_POSITIONAL", "POSITIONAL_ONLY"):
            raise TypeError(f"{name}(): parameter {param_name!r} cannot be passed by keyword")
        annotation = hints.get(param_name, Any)
        skip_type = _skip_type(annotation, skip_types)
        if skip_type is not None:
            injected[param_name] = skip_type
            continue
        parameter = _parameter(name, param_name, default, annotation, argument_docs.get(param_name), defs)
        parameters.append(parameter)
        annotations[param_name] = annotation
    properties = {parameter.name: parameter.schema for parameter in parameters}
    input_schema = _object_schema(properties, [p.name for p in parameters if p.required])
    if defs.schemas:
        input_schema["$defs"] = defs.schemas
    output_schema, wraps_output = _output_schema(hints.get("return", Any)) if output else (None, False)
    return FunctionSchema(name, description, parameters, injected, input_schema, output_schema, wraps_output,
                          accepts_extra, annotations)


# One parameter of a signature, as function_schema reads it: (name, kind, default). The kind is the name of
# an inspect.Parameter kind ("POSITIONAL_ONLY", "KEYWORD_ONLY", "VAR_KEYWORD"...); the default is
# _NO_DEFAULT when there is none.
_Param = Tuple[str, str, Any]
_NO_DEFAULT: Any = object()

# Flags of a code object (inspect.CO_VARARGS, inspect.CO_VARKEYWORDS): the function takes *args, **kwargs.
_CO_VARARGS = 0x04
_CO_VARKEYWORDS = 0x08


def _is_plain_function(fn: Any) -> bool:
    """Whether `fn` is a function made by ``def`` or ``lambda`` that carries no attributes (such as the
    ``__wrapped__`` of functools.wraps, or a ``__signature__``), so that its code object tells its signature.

    Such functions, the usual tools and prompts, are read without inspect: importing it (and the ast, dis
    and tokenize modules it imports) would weigh on every server's start-up. Anything else (methods,
    partials, classes, callable objects, wrappers) is left to inspect.
    """
    return type(fn) is types.FunctionType and not fn.__dict__


def _signature(fn: Callable[..., Any]) -> List[_Param]:
    """The parameters of `fn` as inspect.signature lists them, in order."""
    if not _is_plain_function(fn):
        import inspect

        return [(p.name, p.kind.name, _NO_DEFAULT if p.default is p.empty else p.default)
                for p in inspect.signature(fn).parameters.values()]
    code = fn.__code__
    # co_varnames starts with the positional parameters, then the keyword-only ones, then *args and **kwargs.
    names = code.co_varnames
    positional, keyword_only = code.co_argcount, code.co_kwonlyargcount
    defaults = fn.__defaults__ or ()
    first_default = positional - len(defaults)  # the defaults belong to the last positional parameters
    params: List[_Param] = []
    for index in range(positional):
        kind = "POSITIONAL_ONLY" if index < code.co_posonlyargcount else "POSITIONAL_OR_KEYWORD"
        default = defaults[index - first_default] if index >= first_default else _NO_DEFAULT
        params.append((names[index], kind, default))
    next_name = positional + keyword_only
    if code.co_flags & _CO_VARARGS:
        params.append((names[next_name], "VAR_POSITIONAL", _NO_DEFAULT))
        next_name += 1
    keyword_defaults = fn.__kwdefaults__ or {}
    params.extend((name, "KEYWORD_ONLY", keyword_defaults.get(name, _NO_DEFAULT))
                  for name in names[positional:positional + keyword_only])
    if code.co_flags & _CO_VARKEYWORDS:
        params.append((names[next_name], "VAR_KEYWORD", _NO_DEFAULT))
    return params


def _parameter(function: str, name: str, default: Any, annotation: Any, doc: Optional[str],
               defs: _Definitions) -> Parameter:
    try:
        schema = dict(_schema(annotation, defs))
    except TypeError as exc:
        raise TypeError(f"{function}(): parameter {name!r}: {exc}") from None
    description = schema.get("description") or doc  # an Annotated description wins over the docstring
    if description:
        schema["description"] = description
    required = default is _NO_DEFAULT
    if not required:
        _add_default(schema, default)
    return Parameter(name, schema, required, description)


def _inspect_callable(fn: Callable[..., Any]) -> Tuple[str, Optional[str], Callable[..., Any]]:
    """The name, the docstring and the annotated function behind `fn`."""
    if _is_plain_function(fn):
        return fn.__name__, fn.__doc__, fn
    import inspect  # see _is_plain_function

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
# The entry patterns are compiled on first use (and kept by re): compiling them with the module would slow
# every server's start-up, and many docstrings have no such section.
_GOOGLE_HEADERS = ("Args:", "Arguments:", "Parameters:")
_GOOGLE_ENTRY = r"^\*{0,2}(?P<name>\w+)\s*(?:\([^)]*\))?\s*:\s*(?P<text>.*)$"  # name (type): text
_NUMPY_HEADER = "Parameters"
_NUMPY_ENTRY = r"^\*{0,2}(?P<name>\w+)\s*(?::.*)?$"  # name : type


def _parse_docstring(doc: Optional[str]) -> Tuple[Optional[str], Dict[str, str]]:
    """Split a docstring into its description (without the arguments section) and per-argument texts."""
    if not doc:
        return None, {}
    lines = _docstring_lines(doc)
    section = _find_arguments_section(lines)
    if section is None:
        return "\n".join(lines).strip() or None, {}
    start, body, end, entry = section
    rest = "\n".join(lines[:start] + lines[end:]).strip()
    return rest or None, _argument_texts(lines[body:end], entry)


def _docstring_lines(doc: str) -> List[str]:
    """The lines of a docstring cleaned as inspect.cleandoc cleans them, each right-stripped: tabs expanded,
    the first line's indent and the indent the other lines share removed (blank lines at either end stay).

    Not inspect.cleandoc itself: importing inspect would weigh on every server's start-up.
    """
    lines = [line.rstrip() for line in doc.expandtabs().splitlines()]
    return [lines[0].lstrip(" ")] + _dedent(lines[1:])


def _dedent(lines: List[str]) -> List[str]:
    """Right-stripped lines without the indent their non-blank lines share, as textwrap.dedent does."""
    margin = min((len(line) - len(line.lstrip(" ")) for line in lines if line), default=0)
    return [line[margin:] for line in lines]


def _find_arguments_section(lines: List[str]) -> Optional[Tuple[int, int, int, str]]:
    """(header line, first body line, end line, entry pattern) of the arguments section, if any."""
    for start, line in enumerate(lines):
        if line in _GOOGLE_HEADERS:  # the common indent is gone: headers sit at column 0
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


def _argument_texts(body: List[str], entry: str) -> Dict[str, str]:
    """name -> description from a section body: entries at its left margin, continuations indented."""
    texts: Dict[str, List[str]] = {}
    current: Optional[str] = None
    for line in _dedent(body):
        match = re.match(entry, line) if line[:1] not in (" ", "\t") else None
        if match:
            current = str(match.group("name"))
            texts[current] = [match.groupdict().get("text") or ""]
        elif current is not None and line.strip():
            texts[current].append(line.strip())
    joined = {name: " ".join(part for part in parts if part) for name, parts in texts.items()}
    return {name: text for name, text in joined.items() if text}


# --- Python -> JSON -------------------------------------------------------------------------------------


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
    if hasattr(type(value), "__dataclass_fields__"):  # a dataclass instance (see _is_dataclass)
        import dataclasses

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
            converters[name] = (convert, member_path("$", name))
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
    return float(value) if isinstance(value, int) and value.__class__ is not bool else value


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
    import dataclasses  # already loaded: see _is_dataclass

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
    return f"{text}[{key}]" if isinstance(key, int) else member_path(text, key)
