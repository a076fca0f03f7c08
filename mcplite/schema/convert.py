"""JSON -> Python for `FunctionSchema.bind`: validated JSON arguments become what the annotations promise.

Dataclass instances, NamedTuples, pydantic models, Enum members, tuples, sets, floats, and the standard classes
written as strings (datetime, date, time, UUID, Decimal, Path, bytes), with containers converted item by item.
A string that does not parse into its class is a `ValidationError` naming the argument. Pure.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import enum
from typing import Any, Callable, Dict, List, Optional, Tuple, get_args, get_origin

from .from_types import (
    _ARRAY_ORIGINS, _MAPPING_ORIGINS, _SET_ORIGINS, _UNION_ORIGINS, _is_dataclass, _is_namedtuple, _is_typeddict,
    _NoneType, _type_hints, _unwrap, is_model, string_class_of, type_schema,
)
from .validation import ValidationError, _compile_check, member_path

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
        if _is_namedtuple(annotation):
            return _namedtuple_converter(annotation, classes)
        if is_model(annotation):
            return _model_converter(annotation)
        string_class = string_class_of(annotation)
        if string_class is not None:
            return _string_converter(annotation, string_class)
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


#: What each of `from_types.STRING_CLASSES` (and bytes) is written as, for the message of a string that is not.
_WRITTEN_AS = {"datetime": "an ISO 8601 date-time (2025-01-31T12:00:00Z)", "date": "an ISO 8601 date (2025-01-31)",
               "time": "an ISO 8601 time (12:00:00)", "UUID": "a UUID", "Decimal": "a decimal number",
               "PurePath": "a path", "bytes": "base64"}


def _string_converter(cls: type, string_class: str) -> _Convert:
    """A JSON string (a number too, for Decimal) becomes an instance of ``cls``; ValidationError when it does not
    parse. ISO 8601 text ending in ``Z`` is read as UTC on every Python (fromisoformat takes it from 3.11 only)."""
    def parse_iso(text: Any) -> Any:
        if text[-1:] in ("Z", "z"):
            text = text[:-1] + "+00:00"
        return cls.fromisoformat(text)  # type: ignore[attr-defined]

    def parse_decimal(value: Any) -> Any:
        if value.__class__ is bool:
            raise ValueError(value)
        number = cls(str(value) if isinstance(value, float) else value)
        if not number.is_finite():  # pydantic refuses NaN and infinities too
            raise ValueError(value)
        return number

    def parse_base64(text: Any) -> Any:
        import base64

        standard = text.replace("-", "+").replace("_", "/")  # URL-safe or standard, padded or not
        return base64.b64decode(standard + "=" * (-len(standard) % 4), validate=True)

    parse: Callable[[Any], Any] = {  # UUID, Path and date read their own text
        "datetime": parse_iso, "time": parse_iso, "Decimal": parse_decimal, "bytes": parse_base64,
        "date": getattr(cls, "fromisoformat", cls)}.get(string_class, cls)
    written_as = _WRITTEN_AS[string_class]

    def convert_string(value: Any, path: Any) -> Any:
        if isinstance(value, cls):
            return value
        try:
            return parse(value)
        except (TypeError, ValueError, ArithmeticError) as exc:  # binascii.Error is a ValueError
            raise ValidationError([f"{_path_text(path)}: {value!r} is not {written_as}"]) from exc
    return convert_string


def _namedtuple_converter(cls: type, classes: Dict[type, Optional[_Convert]]) -> _Convert:
    """A JSON array becomes the NamedTuple, its items converted by its fields' annotations."""
    hints = _type_hints(cls, cls.__name__)
    converters = [_converter(hints.get(name, Any), classes) for name in cls._fields]  # type: ignore[attr-defined]

    def convert_namedtuple(value: Any, path: Any) -> Any:
        if not isinstance(value, list):
            return value
        return cls(*(item if convert is None else convert(item, (path, index))
                     for index, (item, convert) in enumerate(zip(value, converters))))
    return convert_namedtuple


def _model_converter(cls: Any) -> _Convert:
    """A JSON object becomes the pydantic model, by its own ``model_validate``; its errors name the argument."""
    def convert_model(value: Any, path: Any) -> Any:
        try:
            return cls.model_validate(value)
        except ValueError as exc:  # pydantic's ValidationError is a ValueError
            raise ValidationError([f"{_path_text(path)}: {exc}"]) from exc
    return convert_model


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
