"""Python types -> JSON Schema (`type_schema`), and Python values -> JSON (`to_jsonable`).

Dataclasses, TypedDicts and pydantic models become ``"$defs"`` entries; NamedTuples are arrays of fixed length;
``Annotated`` metadata adds descriptions and `Header` marks a parameter mirrored into an HTTP header
(2026-07-28). The standard classes with a string form get the schemas pydantic gives them, as the official
Python SDK publishes them (`STRING_FORMATS`). Pure: no I/O.

Pydantic models are read by what they have (``model_json_schema``, ``model_validate``, ``model_dump``):
pydantic is never imported here, so a server that does not use it does not need it.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import collections.abc
import enum
import json
import sys
import types
import typing
from typing import Annotated, Any, Dict, List, Literal, Optional, Tuple, Union, get_args, get_origin

from .validation import json_type

__all__ = ["Schema", "type_schema", "to_jsonable", "Header"]

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

#: The standard classes whose JSON form is a string, as (module, class): an annotation that is one (or a
#: subclass) gets the schema below, its argument is parsed into it and its value written as that string.
#: Looked up in sys.modules, never imported: an annotation cannot be a class whose module nobody imported
#: (and a server that uses none of them pays for none: tests/test_server_startup.py). datetime comes before
#: date, which it subclasses.
STRING_CLASSES = (("datetime", "datetime"), ("datetime", "date"), ("datetime", "time"), ("uuid", "UUID"),
                  ("decimal", "Decimal"), ("pathlib", "PurePath"))
#: What pydantic's ``TypeAdapter(X).json_schema()`` gives each of them (pydantic 2.13), as the official SDK
#: publishes them. Decimal: pydantic's validation-mode schema (a number, or a string of digits), which is
#: what a tool's arguments are read in; its values are written as strings, which that schema accepts too.
#: bytes: pydantic's base64 mode (``ser_json_bytes="base64"``: URL-safe base64 out, either alphabet in), not
#: its default, which reads a string's UTF-8 and cannot carry arbitrary bytes.
_DECIMAL_PATTERN = "^(?!^[-+.]*$)[+-]?0*\\d*\\.?\\d*$"  # pydantic's: digits with one point at most, a sign
STRING_FORMATS: Dict[str, Schema] = {
    "datetime": {"type": "string", "format": "date-time"},
    "date": {"type": "string", "format": "date"},
    "time": {"type": "string", "format": "time"},
    "UUID": {"type": "string", "format": "uuid"},
    "Decimal": {"anyOf": [{"type": "number"}, {"type": "string", "pattern": _DECIMAL_PATTERN}]},
    "PurePath": {"type": "string", "format": "path"},
    "bytes": {"type": "string", "format": "base64url"},
}


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
            self.schemas[name] = self._model_schema(cls) if is_model(cls) else _class_schema(cls, self)
        return {"$ref": "#/$defs/" + name}

    def _model_schema(self, cls: Any) -> Schema:
        """A pydantic model's own schema (``model_json_schema()``); the models it uses join these "$defs"
        under pydantic's names, which its "$ref"s use."""
        schema = dict(cls.model_json_schema())
        for name, definition in schema.pop("$defs", {}).items():
            self.schemas.setdefault(name, definition)
        return schema


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
        if _is_dataclass(annotation) or _is_typeddict(annotation) or is_model(annotation):
            return defs.ref(annotation)
        if _is_namedtuple(annotation):
            return _namedtuple_schema(annotation, defs)
        string_class = string_class_of(annotation)
        if string_class is not None:
            copy: Schema = json.loads(json.dumps(STRING_FORMATS[string_class]))  # its own, nested lists too
            return copy
    container = _container_schema(annotation, (), defs)  # bare list, dict, tuple, set...
    if container is None:
        import inspect  # here, not at the top: inspect is heavy, and this line is rarely reached

        if annotation is inspect.Parameter.empty:  # a signature's marker of a parameter without annotation
            return {}
        raise _unsupported(annotation)
    return container


#: What to write instead of an annotation that has no JSON Schema, the end of its registration error.
_WRITE_INSTEAD = ("annotate it with a JSON type (str, int, float, bool, None, list[...], dict[str, ...], Any), "
                  "an Enum, a Literal, datetime, date, time, UUID, Decimal, Path or bytes (or Optional/Union "
                  "of these); for a class of your own, make it a dataclass, a TypedDict, a NamedTuple or a "
                  "pydantic model")


def _unsupported(annotation: Any) -> TypeError:
    """The error of an annotation with no JSON Schema, saying what would have one."""
    name = annotation.__qualname__ if isinstance(annotation, type) else repr(annotation)
    return TypeError(f"{name} is not a type a JSON value can be read into: {_WRITE_INSTEAD}")


def string_class_of(annotation: type) -> Optional[str]:
    """Which of `STRING_CLASSES` (or bytes) the class `annotation` is, or subclasses: its name, or None."""
    if annotation is bytes:
        return "bytes"
    for module_name, name in STRING_CLASSES:
        module = sys.modules.get(module_name)
        if module is not None and issubclass(annotation, getattr(module, name)):
            return name
    return None


def is_model(annotation: Any) -> bool:
    """Whether ``annotation`` is a pydantic model class (read by duck typing: pydantic is not imported)."""
    return (isinstance(annotation, type) and callable(getattr(annotation, "model_json_schema", None))
            and callable(getattr(annotation, "model_validate", None)))


def _is_namedtuple(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, tuple) and hasattr(annotation, "_fields")


def _namedtuple_schema(cls: type, defs: _Definitions) -> Schema:
    """A NamedTuple as pydantic has it: an array of its fields, in order; the ones with a default may be left
    off the end."""
    hints = _type_hints(cls, cls.__name__)
    fields: Tuple[str, ...] = cls._fields  # type: ignore[attr-defined]
    defaults: Dict[str, Any] = cls._field_defaults  # type: ignore[attr-defined]
    items = []
    for name in fields:
        try:
            item = _schema(hints.get(name, Any), defs)
        except TypeError as exc:
            raise TypeError(f"{cls.__name__}.{name}: {exc}") from None
        if name in defaults:
            item = dict(item)
            _add_default(item, defaults[name])
        items.append(item)
    return {"type": "array", "prefixItems": items, "minItems": len([n for n in fields if n not in defaults]),
            "maxItems": len(fields)}


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
        raise _unsupported(annotation)
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
            raise TypeError(f"JSON object keys are strings, not {args[0]!r}: write dict[str, ...] "
                            "(or a list of pairs)")
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
    if isinstance(value, (list, tuple, set, frozenset)):  # a NamedTuple too, as pydantic writes one
        return [to_jsonable(item) for item in value]
    model_dump = getattr(value, "model_dump", None)
    if model_dump is not None and is_model(kind):  # a pydantic model
        return model_dump(mode="json")
    if isinstance(kind, type):
        string_class = string_class_of(kind) if kind is not bytearray else "bytes"
        if string_class is not None:
            return _string_form(value, string_class)
    return value


def _string_form(value: Any, string_class: str) -> str:
    """The JSON string of a value of one of `STRING_CLASSES` (or bytes), as pydantic's ``model_dump(mode="json")``
    writes it: ISO 8601 (UTC as ``Z``), a UUID's and a Path's str, a Decimal's digits, bytes in URL-safe base64."""
    if string_class == "bytes":
        import base64

        return base64.urlsafe_b64encode(bytes(value)).decode("ascii")
    if string_class in ("datetime", "time"):
        text: str = value.isoformat()
        return text[:-6] + "Z" if text.endswith("+00:00") else text
    if string_class == "date":
        return value.isoformat()  # type: ignore[no-any-return]
    return str(value)
