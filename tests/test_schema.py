"""Tests for mcplite.schema: schema generation, validation, binding and coercion."""

import enum
import functools
import sys
from dataclasses import dataclass, field
from typing import (
    AbstractSet, Any, Callable, Dict, FrozenSet, List, Mapping, NewType, Optional, Sequence, Set, Tuple, TypedDict,
    Union,
)
from typing import Annotated, Literal

import pytest

from mcplite.schema import validation as schema_module
from mcplite.schema.functions import FunctionSchema, Parameter, function_schema, to_jsonable, type_schema
from mcplite.schema.validation import ValidationError, coerce_from_string, compile_schema, validate

import schema_future_fixture as future
from support import run_concurrently


# --- fixtures: types used by several tables -------------------------------------------------------------


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Mixed(enum.Enum):
    ONE = 1
    TWO = "two"


@dataclass
class Point:
    x: int
    y: int = 0


@dataclass
class Tree:
    value: int
    children: List["Tree"] = field(default_factory=list)


@dataclass
class Line:
    start: Point
    end: Optional[Point] = None
    color: Color = Color.RED


@dataclass
class Positive:
    n: int

    def __post_init__(self) -> None:
        if self.n <= 0:
            raise ValueError("n must be positive")


class Movie(TypedDict):
    title: str
    year: int


class Draft(TypedDict, total=False):
    title: str
    origin: Point


class Review(Movie, total=False):
    stars: int


class FieldLike:
    """Stands in for a pydantic-style Field: anything with a ``description`` attribute."""

    def __init__(self, description: str) -> None:
        self.description = description


class Node(TypedDict):
    point: Point
    children: List["Node"]


UserId = NewType("UserId", int)


class Context:
    """Stands in for the server's Context class."""


class RequestContext(Context):
    pass


POINT_DEF = {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer", "default": 0}},
             "required": ["x"]}
POINT_REF = {"$ref": "#/$defs/Point"}
TREE_DEF = {"type": "object",
            "properties": {"value": {"type": "integer"},
                           "children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}},
            "required": ["value"]}


# --- type_schema ----------------------------------------------------------------------------------------

TYPE_SCHEMAS = [
    (int, {"type": "integer"}),
    (float, {"type": "number"}),
    (str, {"type": "string"}),
    (bool, {"type": "boolean"}),
    (None, {"type": "null"}),
    (type(None), {"type": "null"}),
    (Any, {}),
    (Optional[int], {"anyOf": [{"type": "integer"}, {"type": "null"}]}),
    (Union[int, str], {"anyOf": [{"type": "integer"}, {"type": "string"}]}),
    (Union[int, str, None], {"anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "null"}]}),
    (List[int], {"type": "array", "items": {"type": "integer"}}),
    (list[int], {"type": "array", "items": {"type": "integer"}}),
    (Sequence[str], {"type": "array", "items": {"type": "string"}}),
    (List[Any], {"type": "array"}),
    (list, {"type": "array"}),
    (List, {"type": "array"}),
    (Set[int], {"type": "array", "items": {"type": "integer"}, "uniqueItems": True}),
    (FrozenSet[str], {"type": "array", "items": {"type": "string"}, "uniqueItems": True}),
    (set, {"type": "array", "uniqueItems": True}),
    (Tuple[int, str], {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}],
                       "minItems": 2, "maxItems": 2}),
    (Tuple[int, ...], {"type": "array", "items": {"type": "integer"}}),
    (tuple, {"type": "array"}),
    (Dict[str, int], {"type": "object", "additionalProperties": {"type": "integer"}}),
    (dict[str, float], {"type": "object", "additionalProperties": {"type": "number"}}),
    (Mapping[str, List[int]], {"type": "object",
                               "additionalProperties": {"type": "array", "items": {"type": "integer"}}}),
    (Dict[str, Any], {"type": "object"}),
    (dict, {"type": "object"}),
    (Dict, {"type": "object"}),
    (Literal["a", "b"], {"type": "string", "enum": ["a", "b"]}),
    (Literal[1, 2], {"type": "integer", "enum": [1, 2]}),
    (Literal[True], {"type": "boolean", "enum": [True]}),
    (Literal[1, "a"], {"enum": [1, "a"]}),
    (Color, {"type": "string", "enum": ["red", "green"]}),
    (Level, {"type": "integer", "enum": [1, 2]}),
    (Mixed, {"enum": [1, "two"]}),
    (Annotated[int, "how many"], {"type": "integer", "description": "how many"}),
    (Annotated[str, FieldLike("a name")], {"type": "string", "description": "a name"}),
    (Annotated[int, object()], {"type": "integer"}),
    (UserId, {"type": "integer"}),
    (Point, {"$ref": "#/$defs/Point", "$defs": {"Point": POINT_DEF}}),
    (List[Point], {"type": "array", "items": POINT_REF, "$defs": {"Point": POINT_DEF}}),
    (Optional[Point], {"anyOf": [POINT_REF, {"type": "null"}], "$defs": {"Point": POINT_DEF}}),
    (Tree, {"$ref": "#/$defs/Tree", "$defs": {"Tree": TREE_DEF}}),
    (Line, {"$ref": "#/$defs/Line", "$defs": {
        "Line": {"type": "object",
                 "properties": {"start": POINT_REF,
                                "end": {"anyOf": [POINT_REF, {"type": "null"}], "default": None},
                                "color": {"type": "string", "enum": ["red", "green"], "default": "red"}},
                 "required": ["start"]},
        "Point": POINT_DEF}}),
    (Movie, {"$ref": "#/$defs/Movie", "$defs": {"Movie": {
        "type": "object", "properties": {"title": {"type": "string"}, "year": {"type": "integer"}},
        "required": ["title", "year"]}}}),
    (Draft, {"$ref": "#/$defs/Draft", "$defs": {
        "Draft": {"type": "object", "properties": {"title": {"type": "string"}, "origin": POINT_REF}},
        "Point": POINT_DEF}}),
    (Review, {"$ref": "#/$defs/Review", "$defs": {"Review": {
        "type": "object",
        "properties": {"title": {"type": "string"}, "year": {"type": "integer"}, "stars": {"type": "integer"}},
        "required": ["title", "year"]}}}),
]


@pytest.mark.parametrize("annotation, expected", TYPE_SCHEMAS, ids=[repr(row[0]) for row in TYPE_SCHEMAS])
def test_type_schema(annotation: Any, expected: Dict[str, Any]) -> None:
    assert type_schema(annotation) == expected


@pytest.mark.skipif(sys.version_info < (3, 10), reason="X | Y annotations need Python 3.10")
def test_type_schema_pep604_union() -> None:
    union = eval("int | None")  # written as a string so that this module still imports on Python 3.9
    assert type_schema(union) == {"anyOf": [{"type": "integer"}, {"type": "null"}]}


def test_type_schema_gives_same_named_classes_distinct_definitions() -> None:
    @dataclass
    class Labelled:
        label: str

    Labelled.__name__ = "Point"  # as if a second Point came from another module
    schema = type_schema(Tuple[Point, Labelled])
    assert schema["prefixItems"] == [{"$ref": "#/$defs/Point"}, {"$ref": "#/$defs/Point2"}]
    assert schema["$defs"]["Point2"]["properties"] == {"label": {"type": "string"}}


@pytest.mark.skipif(sys.version_info < (3, 11), reason="typing.NotRequired needs Python 3.11")
def test_type_schema_of_a_typeddict_with_not_required_keys() -> None:
    from typing import NotRequired  # type: ignore[attr-defined]

    book = TypedDict("book", {"title": str, "isbn": NotRequired[str]})  # type: ignore[misc]
    assert type_schema(book)["$defs"]["book"] == {
        "type": "object", "properties": {"title": {"type": "string"}, "isbn": {"type": "string"}},
        "required": ["title"]}


@pytest.mark.parametrize("annotation, message", [
    (complex, "complex"),
    (List[complex], "complex"),
    (Dict[int, str], "keys"),
    (object, "object"),
    (Callable[[int], int], "Callable"),
])
def test_type_schema_rejects_unsupported_types(annotation: Any, message: str) -> None:
    with pytest.raises(TypeError, match=message):
        type_schema(annotation)


def test_type_schema_names_the_dataclass_field_of_an_unsupported_type() -> None:
    @dataclass
    class Blob:
        data: complex

    with pytest.raises(TypeError, match="Blob.data"):
        type_schema(Blob)


# --- function_schema: parameters ------------------------------------------------------------------------


def test_function_schema_of_a_plain_function() -> None:
    def search(query: str, limit: int = 10, exact: bool = False, tags: Optional[List[str]] = None) -> str:
        """Search the catalogue."""
        return query

    schema = function_schema(search)
    assert schema.name == "search"
    assert schema.description == "Search the catalogue."
    assert schema.input_schema == {
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "limit": {"type": "integer", "default": 10},
            "exact": {"type": "boolean", "default": False},
            "tags": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}], "default": None},
        },
        "required": ["query"],
    }
    assert schema.parameters[0] == Parameter("query", {"type": "string"}, True, None)
    assert [p.required for p in schema.parameters] == [True, False, False, False]
    assert schema.output_schema is None and not schema.wraps_output and not schema.accepts_extra


def test_function_schema_without_parameters_or_annotations() -> None:
    def ping():  # type: ignore[no-untyped-def]
        pass

    def echo(value, times=2):  # type: ignore[no-untyped-def]
        return value

    assert function_schema(ping).input_schema == {"type": "object", "properties": {}}
    assert function_schema(ping).description is None
    assert function_schema(echo).input_schema == {
        "type": "object", "properties": {"value": {}, "times": {"default": 2}}, "required": ["value"]}


def test_function_schema_hoists_definitions_to_the_root() -> None:
    def draw(line: Line, points: List[Point]) -> None:
        pass

    schema = function_schema(draw).input_schema
    assert schema["properties"] == {"line": {"$ref": "#/$defs/Line"},
                                    "points": {"type": "array", "items": POINT_REF}}
    assert list(schema["$defs"]) == ["Line", "Point"]


def test_function_schema_skips_defaults_that_are_not_json() -> None:
    sentinel = object()

    def f(a: Any = sentinel, b: Tuple[int, int] = (1, 2), c: Color = Color.GREEN) -> None:
        pass

    properties = function_schema(f).input_schema["properties"]
    assert properties["a"] == {}
    assert properties["b"]["default"] == [1, 2]
    assert properties["c"]["default"] == "green"


def test_function_schema_injects_skip_types() -> None:
    def tool(ctx: Context, name: str, other: Optional[RequestContext] = None) -> str:
        return name

    schema = function_schema(tool, skip_types=(Context,))
    assert schema.injected == {"ctx": Context, "other": Context}
    assert [p.name for p in schema.parameters] == ["name"]
    assert schema.input_schema == {"type": "object", "properties": {"name": {"type": "string"}},
                                   "required": ["name"]}


def test_function_schema_without_skip_types_rejects_a_context_parameter() -> None:
    def tool(ctx: Context) -> None:
        pass

    with pytest.raises(TypeError, match=r"tool\(\): parameter 'ctx'"):
        function_schema(tool)


def test_function_schema_accepts_kwargs_and_rejects_args() -> None:
    def extra(a: int, **options: Any) -> None:
        pass

    def star(*values: int) -> None:
        pass

    def positional(a: int, /) -> None:  # noqa: E225 - positional-only, valid on 3.8+
        pass

    assert function_schema(extra).accepts_extra
    assert list(function_schema(extra).input_schema["properties"]) == ["a"]
    with pytest.raises(TypeError, match="'values'"):
        function_schema(star)
    with pytest.raises(TypeError, match="'a'"):
        function_schema(positional)


def test_function_schema_names_the_parameter_of_an_unsupported_type() -> None:
    def upload(name: str, data: List[complex]) -> None:
        pass

    with pytest.raises(TypeError, match=r"upload\(\): parameter 'data': .*complex"):
        function_schema(upload)


def test_function_schema_reports_unresolvable_hints_as_type_errors() -> None:
    def broken(a: "Missing") -> None:  # type: ignore[name-defined]  # noqa: F821
        pass

    with pytest.raises(TypeError, match="Missing"):
        function_schema(broken)


def test_function_schema_of_methods_partials_and_callable_objects() -> None:
    class Calculator:
        """A calculator."""

        def add(self, a: int, b: int = 1) -> int:
            """Add two numbers."""
            return a + b

        def __call__(self, x: float) -> float:
            """Double x."""
            return 2 * x

    def scale(value: float, factor: int, offset: int = 0) -> float:
        """Scale a value."""
        return value * factor + offset

    method = function_schema(Calculator().add)
    assert (method.name, method.description) == ("add", "Add two numbers.")
    assert list(method.input_schema["properties"]) == ["a", "b"]
    assert method.output_schema == {"type": "object", "properties": {"result": {"type": "integer"}},
                                    "required": ["result"], "x-fastmcp-wrap-result": True}

    obj = function_schema(Calculator())
    assert (obj.name, obj.description) == ("Calculator", "Double x.")
    assert obj.input_schema == {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]}

    cls = function_schema(Point)
    assert (cls.name, cls.input_schema) == ("Point", {"type": "object", "properties": POINT_DEF["properties"],
                                                      "required": ["x"]})

    partial = function_schema(functools.partial(scale, 2.0, offset=5))
    assert (partial.name, partial.description) == ("scale", "Scale a value.")
    assert partial.input_schema == {"type": "object", "properties": {
        "factor": {"type": "integer"}, "offset": {"type": "integer", "default": 5}}, "required": ["factor"]}


def test_function_schema_follows_functools_wraps() -> None:
    def decorator(fn: Any) -> Any:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return fn(*args, **kwargs)
        return wrapper

    @decorator
    def greet(name: str) -> str:
        """Greet someone."""
        return name

    schema = function_schema(greet)
    assert schema.description == "Greet someone."
    assert schema.input_schema["properties"] == {"name": {"type": "string"}}


def test_function_schema_resolves_postponed_annotations() -> None:
    schema = function_schema(future.add_items)
    item = {"type": "object", "properties": {"name": {"type": "string"},
                                             "tags": {"type": "array", "items": {"type": "string"}}},
            "required": ["name", "tags"]}
    assert schema.input_schema == {
        "type": "object",
        "properties": {"items": {"type": "array", "items": {"$ref": "#/$defs/Item"},
                                 "description": "what to add."},
                       "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None}},
        "required": ["items"],
        "$defs": {"Item": item},
    }
    assert schema.output_schema == item and not schema.wraps_output
    assert schema.bind({"items": [{"name": "a", "tags": ["x"]}]}) == {"items": [future.Item("a", ["x"])]}
    assert function_schema(future.count).output_schema == {
        "type": "object", "properties": {"result": {"type": "integer"}}, "required": ["result"],
        "x-fastmcp-wrap-result": True}


def test_function_schema_resolves_postponed_annotations_in_exec_source() -> None:
    source = (
        "from __future__ import annotations\n"
        "from typing import Dict, Optional\n"
        "def tally(counts: Dict[str, int], label: Optional[str] = None) -> Dict[str, int]:\n"
        "    return counts\n"
    )
    namespace: Dict[str, Any] = {}
    exec(source, namespace)
    schema = function_schema(namespace["tally"])
    assert schema.input_schema["properties"]["counts"] == {"type": "object",
                                                           "additionalProperties": {"type": "integer"}}
    assert schema.output_schema == {"type": "object", "additionalProperties": {"type": "integer"}}


# --- function_schema: docstrings ------------------------------------------------------------------------


def google(city: str, days: int = 3, units: Annotated[str, "metric or imperial"] = "metric") -> str:
    """Get the weather forecast.

    Looks the city up first.

    Args:
        city: The city name,
            for example "Paris".
        days (int): How many days.
        units: Ignored: the Annotated description wins.

    Returns:
        The forecast as text.
    """
    return city


def numpy_style(city: str, days: int = 3) -> str:
    """Get the weather forecast.

    Parameters
    ----------
    city : str
        The city name.
    days : int, optional
        How many
        days.

    Returns
    -------
    str
        The forecast.
    """
    return city


def arguments_last(a: int, **extra: Any) -> None:
    """Do a thing.

    Arguments:
        a: The a.
        **extra: Anything else.
    """


DOCSTRINGS = [
    (google, "Get the weather forecast.\n\nLooks the city up first.\n\nReturns:\n    The forecast as text.",
     {"city": 'The city name, for example "Paris".', "days": "How many days.", "units": "metric or imperial"}),
    (numpy_style, "Get the weather forecast.\n\nReturns\n-------\nstr\n    The forecast.",
     {"city": "The city name.", "days": "How many days."}),
    (arguments_last, "Do a thing.", {"a": "The a."}),
]


@pytest.mark.parametrize("fn, description, parameters", DOCSTRINGS, ids=[row[0].__name__ for row in DOCSTRINGS])
def test_docstring_arguments_become_parameter_descriptions(fn: Any, description: str,
                                                           parameters: Dict[str, str]) -> None:
    schema = function_schema(fn)
    assert schema.description == description
    assert {p.name: p.description for p in schema.parameters} == parameters
    for name, text in parameters.items():
        assert schema.input_schema["properties"][name]["description"] == text


# --- function_schema: output ----------------------------------------------------------------------------


_NO_ANNOTATION = object()


def _returning(annotation: Any) -> Any:
    """A function whose return annotation is `annotation` (none at all for _NO_ANNOTATION)."""
    def fn() -> None:
        pass
    if annotation is _NO_ANNOTATION:
        del fn.__annotations__["return"]
    else:
        fn.__annotations__["return"] = annotation
    return fn


def _wrapped(schema: Dict[str, Any]) -> Dict[str, Any]:
    return {"type": "object", "properties": {"result": schema}, "required": ["result"], "x-fastmcp-wrap-result": True}


OUTPUTS = [
    (_NO_ANNOTATION, None, False),
    (None, None, False),
    (Any, None, False),
    (str, None, False),
    (bytes, {"type": "object", "properties": {"result": {"type": "string", "format": "base64url"}},
             "required": ["result"], "x-fastmcp-wrap-result": True}, True),  # base64, as pydantic's base64 mode writes it
    (Point, POINT_DEF, False),
    (Movie, {"type": "object", "properties": {"title": {"type": "string"}, "year": {"type": "integer"}},
             "required": ["title", "year"]}, False),
    (Dict[str, int], {"type": "object", "additionalProperties": {"type": "integer"}}, False),
    (dict, {"type": "object"}, False),
    (int, _wrapped({"type": "integer"}), True),
    (float, _wrapped({"type": "number"}), True),
    (bool, _wrapped({"type": "boolean"}), True),
    (List[str], _wrapped({"type": "array", "items": {"type": "string"}}), True),
    (Optional[str], _wrapped({"anyOf": [{"type": "string"}, {"type": "null"}]}), True),
    (Literal["yes", "no"], _wrapped({"type": "string", "enum": ["yes", "no"]}), True),
    (Color, _wrapped({"type": "string", "enum": ["red", "green"]}), True),
    (Tuple[int, int], _wrapped({"type": "array", "prefixItems": [{"type": "integer"}, {"type": "integer"}],
                                "minItems": 2, "maxItems": 2}), True),
    (Union[int, str], _wrapped({"anyOf": [{"type": "integer"}, {"type": "string"}]}), True),
    (List[Point], dict(_wrapped({"type": "array", "items": POINT_REF}), **{"$defs": {"Point": POINT_DEF}}), True),
    (Line, {**type_schema(Line)["$defs"]["Line"], "$defs": {"Point": POINT_DEF}}, False),
    (Tree, {**TREE_DEF, "$defs": {"Tree": TREE_DEF}}, False),  # recursive: the definition must stay
]


@pytest.mark.parametrize("annotation, schema, wraps", OUTPUTS, ids=[repr(row[0]) for row in OUTPUTS])
def test_output_schema(annotation: Any, schema: Optional[Dict[str, Any]], wraps: bool) -> None:
    result = function_schema(_returning(annotation))
    assert result.output_schema == schema
    assert result.wraps_output is wraps


def test_output_schema_can_be_turned_off() -> None:
    schema = function_schema(_returning(int), output=False)
    assert schema.output_schema is None and not schema.wraps_output


@pytest.mark.parametrize("annotation, value, structured", [
    (int, 3, {"result": 3}),
    (List[Color], [Color.RED], {"result": ["red"]}),
    (Tuple[int, str], (1, "a"), {"result": [1, "a"]}),
    (Point, Point(1, 2), {"x": 1, "y": 2}),
    (Dict[str, Point], {"p": Point(3)}, {"p": {"x": 3, "y": 0}}),
])
def test_structure_output(annotation: Any, value: Any, structured: Any) -> None:
    schema = function_schema(_returning(annotation))
    assert schema.structure_output(value) == structured
    assert schema.output_schema is not None
    validate(structured, schema.output_schema)


# --- bind -----------------------------------------------------------------------------------------------


def _bind_target(point: Point, line: Optional[Line] = None, points: Sequence[Point] = (),
                 pair: Tuple[int, str] = (0, ""), span: Tuple[float, ...] = (), color: Color = Color.RED,
                 level: Optional[Level] = None,
                 tags: AbstractSet[str] = frozenset(), frozen: FrozenSet[int] = frozenset(), ratio: float = 1.0,
                 named: Dict[str, Point] = {}, draft: Optional[Draft] = None,  # noqa: B006 - never mutated
                 shape: Union[Point, Tree, None] = None, user: UserId = UserId(0)) -> None:
    pass


BINDINGS = [
    ({"point": {"x": 1}}, {"point": Point(1)}),
    ({"point": {"x": 1}, "line": {"start": {"x": 2}, "end": {"x": 3, "y": 4}, "color": "green"}},
     {"point": Point(1), "line": Line(Point(2), Point(3, 4), Color.GREEN)}),
    ({"point": {"x": 1}, "line": None}, {"point": Point(1), "line": None}),
    ({"point": {"x": 1}, "points": [{"x": 5}, {"x": 6, "y": 7}]},
     {"point": Point(1), "points": [Point(5), Point(6, 7)]}),
    ({"point": {"x": 1}, "pair": [2, "b"], "span": [1, 2.5]},
     {"point": Point(1), "pair": (2, "b"), "span": (1.0, 2.5)}),
    ({"point": {"x": 1}, "color": "green", "level": 2},
     {"point": Point(1), "color": Color.GREEN, "level": Level.HIGH}),
    ({"point": {"x": 1}, "tags": ["a", "b"], "frozen": [1]},
     {"point": Point(1), "tags": {"a", "b"}, "frozen": frozenset({1})}),
    ({"point": {"x": 1}, "ratio": 2}, {"point": Point(1), "ratio": 2.0}),
    ({"point": {"x": 1}, "named": {"a": {"x": 9}}}, {"point": Point(1), "named": {"a": Point(9)}}),
    ({"point": {"x": 1}, "draft": {"origin": {"x": 2}}}, {"point": Point(1), "draft": {"origin": Point(2)}}),
    ({"point": {"x": 1}, "shape": {"value": 1, "children": [{"value": 2}]}},
     {"point": Point(1), "shape": Tree(1, [Tree(2)])}),
    ({"point": {"x": 1}, "shape": {"x": 4}}, {"point": Point(1), "shape": Point(4)}),
    ({"point": {"x": 1}, "user": 7}, {"point": Point(1), "user": 7}),
    ({"point": {"x": 1}, "unknown": 1}, {"point": Point(1)}),  # unknown arguments are dropped
]


@pytest.mark.parametrize("arguments, kwargs", BINDINGS)
def test_bind_converts_json_to_annotated_types(arguments: Dict[str, Any], kwargs: Dict[str, Any]) -> None:
    bound = function_schema(_bind_target).bind(arguments)
    assert bound == kwargs
    assert [type(value) for value in bound.values()] == [type(value) for value in kwargs.values()]


def test_bind_keeps_extra_arguments_for_kwargs_but_never_injected_names() -> None:
    def tool(ctx: Context, a: int = 0, **extra: Any) -> None:
        pass

    schema = function_schema(tool, skip_types=(Context,))
    assert schema.bind({"a": 1, "b": [2], "ctx": "forged"}) == {"a": 1, "b": [2]}
    assert schema.bind(None) == {}


BIND_ERRORS = [
    ({}, ["$.point: missing required property"]),
    ({"point": {"x": "1"}}, ["$.point.x: expected integer, got string"]),
    ({"point": {"x": 1}, "points": [{"x": 1}, {}]}, ["$.points[1].x: missing required property"]),
    ({"point": {"x": 1}, "pair": [1]}, ["$.pair: expected at least 2 items, got 1"]),
    ({"point": {"x": 1}, "color": "blue"}, ['$.color: "blue" is not one of ["red", "green"]']),
    ({"point": {"x": 1}, "ratio": True}, ["$.ratio: expected number, got boolean"]),
    ({"point": True, "ratio": None},
     ["$.point: expected object, got boolean", "$.ratio: expected number, got null"]),
]


@pytest.mark.parametrize("arguments, errors", BIND_ERRORS)
def test_bind_reports_every_invalid_argument(arguments: Dict[str, Any], errors: List[str]) -> None:
    with pytest.raises(ValidationError) as caught:
        function_schema(_bind_target).bind(arguments)
    assert caught.value.errors == errors
    assert str(caught.value) == "; ".join(errors)


def test_bind_rejects_arguments_that_are_not_an_object() -> None:
    with pytest.raises(ValidationError, match=r"^\$: expected object, got array$"):
        function_schema(_bind_target).bind([1])  # type: ignore[arg-type]


def test_bind_reports_a_dataclass_that_rejects_its_values() -> None:
    def f(items: List[Positive]) -> None:
        pass

    with pytest.raises(ValidationError) as caught:
        function_schema(f).bind({"items": [{"n": 1}, {"n": -1}]})
    assert caught.value.errors == ["$.items[1]: n must be positive"]


def test_bind_converts_inside_a_recursive_typeddict() -> None:
    def f(node: Node) -> None:
        pass

    tree = {"point": {"x": 1}, "children": [{"point": {"x": 2, "y": 3}, "children": []}]}
    assert function_schema(f).bind({"node": tree}) == {
        "node": {"point": Point(1), "children": [{"point": Point(2, 3), "children": []}]}}
    with pytest.raises(ValidationError) as caught:
        function_schema(f).bind({"node": {"point": {"x": 1}, "children": [{"point": {}, "children": []}]}})
    assert caught.value.errors == ["$.node.children[0].point.x: missing required property"]


def test_bind_passes_values_that_need_no_conversion_as_they_are() -> None:
    def search(query: str, tags: Optional[List[str]] = None, where: Optional[Dict[str, Any]] = None,
               points: Optional[List[Point]] = None) -> None:
        pass

    tags, where, points = ["a", "b"], {"near": [1, 2]}, [{"x": 1}]
    bound = function_schema(search).bind({"query": "q", "tags": tags, "where": where, "points": points})
    assert bound["tags"] is tags and bound["where"] is where
    assert bound["points"] == [Point(1)] and points == [{"x": 1}]  # converted into a new list


def _prompt(topic: str, count: int, ratio: float = 1.0, loud: bool = False, point: Optional[Point] = None,
            level: Level = Level.LOW, anything: Any = None) -> str:
    return topic


FROM_STRINGS = [
    ({"topic": "42", "count": "3"}, {"topic": "42", "count": 3}),
    ({"topic": "t", "count": "3", "ratio": "2.5", "loud": "true"},
     {"topic": "t", "count": 3, "ratio": 2.5, "loud": True}),
    ({"topic": "t", "count": "3", "point": '{"x": 1}'}, {"topic": "t", "count": 3, "point": Point(1)}),
    ({"topic": "t", "count": "3", "point": "null"}, {"topic": "t", "count": 3, "point": None}),
    ({"topic": "t", "count": "3", "level": "2"}, {"topic": "t", "count": 3, "level": Level.HIGH}),
    ({"topic": "t", "count": "3", "anything": "[1]"}, {"topic": "t", "count": 3, "anything": [1]}),
    ({"topic": "t", "count": "3", "anything": "plain words"},
     {"topic": "t", "count": 3, "anything": "plain words"}),
]


@pytest.mark.parametrize("arguments, kwargs", FROM_STRINGS)
def test_bind_from_strings_parses_by_schema(arguments: Dict[str, Any], kwargs: Dict[str, Any]) -> None:
    assert function_schema(_prompt).bind(arguments, from_strings=True) == kwargs


def test_bind_from_strings_reports_text_that_does_not_parse() -> None:
    with pytest.raises(ValidationError) as caught:
        function_schema(_prompt).bind({"topic": "t", "count": "three", "loud": "maybe"}, from_strings=True)
    assert caught.value.errors == ["$.count: expected integer, got string", "$.loud: expected boolean, got string"]


# --- validate -------------------------------------------------------------------------------------------

DEFS = {"$defs": {"positive": {"type": "integer", "minimum": 1}},
        "definitions": {"name": {"type": "string", "minLength": 1}}}

INVALID = [
    # type
    ("x", {"type": "integer"}, ["$: expected integer, got string"]),
    (3.0, {"type": "integer"}, ["$: expected integer, got number"]),
    (True, {"type": "integer"}, ["$: expected integer, got boolean"]),
    (True, {"type": "number"}, ["$: expected number, got boolean"]),
    (1, {"type": "boolean"}, ["$: expected boolean, got integer"]),
    (None, {"type": ["string", "integer"]}, ["$: expected string or integer, got null"]),
    ((1, 2), {"type": "array"}, ["$: expected array, got tuple"]),
    # enum / const
    ("c", {"enum": ["a", "b"]}, ['$: "c" is not one of ["a", "b"]']),
    (True, {"enum": [1]}, ["$: true is not one of [1]"]),
    (2, {"const": 1}, ["$: expected 1, got 2"]),
    ({"a": [True]}, {"const": {"a": [1]}}, ['$: expected {"a": [1]}, got {"a": [true]}']),
    # objects
    ({}, {"required": ["a", "b c"]}, ["$.a: missing required property", '$["b c"]: missing required property']),
    ({"a": {"b": "x"}}, {"properties": {"a": {"properties": {"b": {"type": "integer"}}}}},
     ["$.a.b: expected integer, got string"]),
    ({"a": 1, "z": 2}, {"properties": {"a": {}}, "additionalProperties": False}, ["$.z: unexpected property"]),
    ({"a": 1, "z": "2"}, {"properties": {"a": {}}, "additionalProperties": {"type": "integer"}},
     ["$.z: expected integer, got string"]),
    ({"x_1": "a", "y": 1}, {"patternProperties": {"^x_": {"type": "integer"}}, "additionalProperties": False},
     ["$.x_1: expected integer, got string", "$.y: unexpected property"]),
    # arrays
    ([1, "a"], {"items": {"type": "integer"}}, ["$[1]: expected integer, got string"]),
    (["a", "b", 3], {"prefixItems": [{"type": "string"}, {"type": "integer"}], "items": {"type": "string"}},
     ["$[1]: expected integer, got string", "$[2]: expected string, got integer"]),
    (["a", 1], {"items": [{"type": "string"}], "additionalItems": False}, ["$[1]: no value is allowed here"]),
    ([], {"minItems": 1}, ["$: expected at least 1 items, got 0"]),
    ([1, 2], {"maxItems": 1}, ["$: expected at most 1 items, got 2"]),
    ([1, 2, 1, True], {"uniqueItems": True}, ["$: items must be unique, but [0] and [2] are equal"]),
    ([{"a": 1}, {"a": 1.0}], {"uniqueItems": True}, ["$: items must be unique, but [0] and [1] are equal"]),
    # numbers
    (0, {"minimum": 1}, ["$: 0 is not >= 1 (minimum)"]),
    (1, {"exclusiveMinimum": 1}, ["$: 1 is not > 1 (exclusiveMinimum)"]),
    (2.5, {"maximum": 2}, ["$: 2.5 is not <= 2 (maximum)"]),
    (2, {"exclusiveMaximum": 2}, ["$: 2 is not < 2 (exclusiveMaximum)"]),
    (7, {"multipleOf": 2}, ["$: 7 is not a multiple of 2"]),
    (0.35, {"multipleOf": 0.1}, ["$: 0.35 is not a multiple of 0.1"]),
    # strings
    ("", {"minLength": 1}, ["$: expected at least 1 characters, got 0"]),
    ("abc", {"maxLength": 2}, ["$: expected at most 2 characters, got 3"]),
    ("abc", {"pattern": "^b"}, ['$: "abc" does not match the pattern "^b"']),
    # combinators
    ("x", {"anyOf": [{"type": "integer"}, {"type": "null"}]},
     ["$: matches none of the anyOf schemas [expected integer, got string | expected null, got string]"]),
    ({"a": "x"}, {"anyOf": [{"properties": {"a": {"type": "integer"}}}, {"type": "array"}]},
     ["$: matches none of the anyOf schemas [$.a: expected integer, got string | expected array, got object]"]),
    (5, {"oneOf": [{"type": "integer"}, {"minimum": 0}]},
     ["$: matches 2 of the oneOf schemas, expected exactly one"]),
    ("x", {"oneOf": [{"type": "integer"}]},
     ["$: matches none of the oneOf schemas [expected integer, got string]"]),
    (5, {"allOf": [{"type": "integer"}, {"minimum": 6}, {"maximum": 4}]},
     ["$: 5 is not >= 6 (minimum)", "$: 5 is not <= 4 (maximum)"]),
    (5, {"not": {"type": "integer"}}, ['$: must not match the "not" schema']),
    # boolean schemas and references
    (1, False, ["$: no value is allowed here"]),
    ({"a": 1}, {"properties": {"a": False}}, ["$.a: no value is allowed here"]),
    (0, dict(DEFS, **{"$ref": "#/$defs/positive"}), ["$: 0 is not >= 1 (minimum)"]),
    ({"n": ""}, dict(DEFS, properties={"n": {"$ref": "#/definitions/name"}}),
     ["$.n: expected at least 1 characters, got 0"]),
    (0, dict(DEFS, **{"$ref": "#/$defs/positive", "maximum": -1}),
     ["$: 0 is not >= 1 (minimum)", "$: 0 is not <= -1 (maximum)"]),
    ({"a": {"a": {"a": 1}}}, {"type": "object", "properties": {"a": {"$ref": "#"}}},
     ["$.a.a.a: expected object, got integer"]),
    ("x", {"$defs": {"pair": [{"type": "integer"}]}, "$ref": "#/$defs/pair/0"},
     ["$: expected integer, got string"]),
    ({(1, 2): "v"}, {"const": 1}, ["$: expected 1, got {(1, 2): 'v'}"]),  # not JSON: shown as Python
    # several problems at once
    ({"a": "x", "b": [1, "y"]}, {"properties": {"a": {"type": "integer"}, "b": {"items": {"type": "integer"}}},
                                 "required": ["c"]},
     ["$.c: missing required property", "$.a: expected integer, got string",
      "$.b[1]: expected integer, got string"]),
]


@pytest.mark.parametrize("instance, schema, errors", INVALID)
def test_validate_reports_every_problem_with_its_path(instance: Any, schema: Any, errors: List[str]) -> None:
    with pytest.raises(ValidationError) as caught:
        validate(instance, schema)
    assert caught.value.errors == errors


CYCLE = {"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"anyOf": [{"$ref": "#/$defs/a"}, {"type": "integer"}]}},
         "$ref": "#/$defs/a"}

VALID = [
    (3, {"type": "integer"}),
    (3, {"type": "number"}),
    (3.5, {"type": "number"}),
    (None, {"type": ["string", "null"]}),
    (1, {"type": "mystery"}),  # unknown type names constrain nothing
    (1.0, {"enum": [1]}),
    ({"b": 1, "a": [1]}, {"const": {"a": [1.0], "b": 1}}),
    ({"x": 1}, {"properties": {"y": {"type": "string"}}}),
    ([1, True], {"uniqueItems": True}),
    (0.3, {"multipleOf": 0.1}),
    (10 ** 30, {"multipleOf": 10}),
    ("😀", {"maxLength": 1}),
    ("xabc", {"pattern": "abc"}),
    ("a", {"pattern": "("}),  # a pattern Python cannot compile constrains nothing
    ("2020-13-45", {"type": "string", "format": "date"}),  # format is not checked
    (1, {"x-unknown": {"type": "string"}, "title": "t"}),
    (1, True),
    (1, {}),
    (1, {"$ref": "https://example.com/schema.json"}),  # never fetched
    (1, {"$ref": "#/$defs/missing"}),
    (5, CYCLE),
    ("x", {"$defs": {"loop": {"$ref": "#/$defs/loop"}}, "$ref": "#/$defs/loop"}),
    ({"value": 1, "children": [{"value": 2, "children": []}]},
     {"$defs": {"Tree": TREE_DEF}, "$ref": "#/$defs/Tree"}),
    ({"a/b": 1}, {"$defs": {"x~y": {"type": "integer"}}, "properties": {"a/b": {"$ref": "#/$defs/x~0y"}}}),
    (2, {"oneOf": [{"type": "integer"}, {"type": "string"}]}),
    ("a", {"not": {"type": "integer"}}),
    (1, {"exclusiveMinimum": True}),  # draft-4 boolean form: not a bound
    ({"a": 1}, {"properties": {"a": 5}}),  # not a schema: nothing to check
    (1e300, {"multipleOf": 0.7}),  # beyond Decimal's precision: not judged
]


@pytest.mark.parametrize("instance, schema", VALID)
def test_validate_accepts(instance: Any, schema: Any) -> None:
    validate(instance, schema)


def test_validate_treats_a_ref_cycle_as_constraining_nothing_more() -> None:
    validate("x", CYCLE)  # the anyOf branch that loops back is skipped, so it accepts
    looping = {"$defs": {"a": {"$ref": "#/$defs/a", "type": "integer"}}, "$ref": "#/$defs/a"}
    with pytest.raises(ValidationError) as caught:
        validate("x", looping)
    assert caught.value.errors == ["$: expected integer, got string"]


@pytest.mark.parametrize("instance, schema, errors", INVALID + [(instance, schema, []) for instance, schema in VALID])
def test_compile_schema_lists_the_problems_validate_reports(instance: Any, schema: Any, errors: List[str]) -> None:
    problems = compile_schema(schema)
    assert problems(instance) == errors
    assert problems(instance) == errors  # a compiled schema keeps no state between values


def test_validate_never_confuses_schemas_that_share_an_id() -> None:
    # Each schema is dropped straight away, so Python may reuse its id for the next one: the cache must not
    # hand the next schema the previous one's validator. More schemas than the cache holds, to evict too.
    for bound in range(600):
        validate(bound, {"maximum": bound})
        with pytest.raises(ValidationError, match=rf"^\$: {bound + 1} is not <= {bound} \(maximum\)$"):
            validate(bound + 1, {"maximum": bound})
    assert len(schema_module._cache) <= schema_module._CACHE_SIZE


def test_validate_from_many_threads() -> None:
    schemas = [{"type": "object", "properties": {"n": {"minimum": n}}} for n in range(400)]  # more than cached
    wrong: List[str] = []

    def work(offset: int) -> None:
        for index in range(len(schemas)):
            n = (index + offset) % len(schemas)
            validate({"n": n}, schemas[n])
            try:
                validate({"n": n - 1}, schemas[n])
                wrong.append(f"{n - 1} passed minimum {n}")
            except ValidationError:
                pass

    run_concurrently(work, [offset * 97 for offset in range(4)])
    assert wrong == []


def test_validation_error_is_a_value_error() -> None:
    error = ValidationError(["$.a: one", "$.b: two"])
    assert isinstance(error, ValueError)
    assert str(error) == "$.a: one; $.b: two"


# --- coerce_from_string ---------------------------------------------------------------------------------

COERCIONS = [
    ("42", {"type": "string"}, "42"),
    ("42", {"type": "integer"}, 42),
    ("-7", {"type": "number"}, -7),
    ("2.5", {"type": "number"}, 2.5),
    ("true", {"type": "boolean"}, True),
    ("FALSE", {"type": "boolean"}, False),
    ("1", {"type": "boolean"}, True),
    ("0", {"type": "boolean"}, False),
    ("null", {"type": "null"}, None),
    ('{"a": 1}', {"type": "object"}, {"a": 1}),
    ("[1, 2]", {"type": "array"}, [1, 2]),
    ("[1, 2]", {}, [1, 2]),
    ("12", {}, 12),
    ("hello world", {}, "hello world"),
    ("NaN", {}, "NaN"),  # not JSON, so it stays text
    ("7", True, 7),
    ("5", {"anyOf": [{"type": "string"}, {"type": "integer"}]}, "5"),
    ("5", {"anyOf": [{"type": "integer"}, {"type": "string"}]}, 5),
    ("null", {"anyOf": [{"type": "integer"}, {"type": "null"}]}, None),
    ("x", {"oneOf": [{"type": "integer"}, {"type": "string", "enum": ["x"]}]}, "x"),
    ("b", {"type": ["integer", "string"]}, "b"),
    ("5", {"type": ["string", "integer"], "pattern": "^[a-z]+$"}, 5),  # "5" parses as a string but fails
    ("-1", {"type": ["integer", "boolean"], "minimum": 0}, -1),  # nothing validates: the first parse wins
    ("3", {"$defs": {"n": {"type": "integer"}}, "$ref": "#/$defs/n"}, 3),
    ('{"x": 1}', {"$defs": {"P": {"type": "object"}}, "anyOf": [{"$ref": "#/$defs/P"}, {"type": "null"}]},
     {"x": 1}),
    ("3", {"$defs": {"loop": {"$ref": "#/$defs/loop"}}, "$ref": "#/$defs/loop"}, 3),
    ("red", {"type": "string", "enum": ["red"]}, "red"),
    ("[1]", {"type": "mystery"}, [1]),
    ("x", {"type": "mystery"}, "x"),
]


@pytest.mark.parametrize("text, schema, value", COERCIONS)
def test_coerce_from_string(text: str, schema: Any, value: Any) -> None:
    result = coerce_from_string(text, schema)
    assert result == value and type(result) is type(value)


@pytest.mark.parametrize("text, schema, message", [
    ("abc", {"type": "integer"}, '$: cannot parse "abc" as integer'),
    ("2.5", {"type": "integer"}, '$: cannot parse "2.5" as integer'),
    ("inf", {"type": "number"}, '$: cannot parse "inf" as number'),
    ("yes", {"type": "boolean"}, '$: cannot parse "yes" as boolean'),
    ("[1]", {"type": "object"}, '$: cannot parse "[1]" as object'),
    ("{", {"type": "array"}, '$: cannot parse "{" as array'),
    ("x", {"type": ["integer", "null"]}, '$: cannot parse "x" as integer or null'),
    ("x", {"anyOf": [{"type": "integer"}, {"type": "boolean"}]}, '$: "x" parses as none of the anyOf schemas'),
])
def test_coerce_from_string_rejects_unparsable_text(text: str, schema: Dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError) as caught:
        coerce_from_string(text, schema)
    assert caught.value.errors == [message]


# --- to_jsonable ----------------------------------------------------------------------------------------

JSONABLE = [
    (Point(1, 2), {"x": 1, "y": 2}),
    (Line(Point(1)), {"start": {"x": 1, "y": 0}, "end": None, "color": "red"}),
    (Color.GREEN, "green"),
    (Level.HIGH, 2),
    ((1, (2, 3)), [1, [2, 3]]),
    (frozenset({"a"}), ["a"]),
    ({"k": [Point(0), {5}]}, {"k": [{"x": 0, "y": 0}, [5]]}),
    ({"title": "t", "year": 1}, {"title": "t", "year": 1}),
    ("text", "text"),
    (None, None),
    (2.5, 2.5),
]


@pytest.mark.parametrize("value, expected", JSONABLE)
def test_to_jsonable(value: Any, expected: Any) -> None:
    assert to_jsonable(value) == expected


def test_to_jsonable_returns_json_as_it_is() -> None:
    flat, items = {"a": 1, "b": None}, ["x", 2.5, True]
    assert to_jsonable(flat) is flat and to_jsonable(items) is items
    nested = {"p": Point(1), "tags": items}
    assert to_jsonable(nested) == {"p": {"x": 1, "y": 0}, "tags": items} and nested["p"] == Point(1)


def test_to_jsonable_requires_string_keys() -> None:
    with pytest.raises(TypeError, match="keys must be strings"):
        to_jsonable({"ok": {1: "no"}})


def test_function_schema_repr_names_the_function() -> None:
    assert repr(function_schema(google)) == "FunctionSchema('google', parameters=['city', 'days', 'units'])"
    assert isinstance(function_schema(google), FunctionSchema)
