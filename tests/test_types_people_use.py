"""The types people bring from FastMCP and the official SDK, as tool parameters and results (issue 32).

dataclasses, TypedDict, NamedTuple, Enum; pydantic models (read by duck typing: mcplite never imports
pydantic); datetime, date, time, UUID, Decimal, Path and bytes with the JSON Schemas pydantic gives them (as
the official Python SDK publishes them). Arguments arrive as JSON and reach the function as the annotated
type; results are written as pydantic's ``model_dump(mode="json")`` writes them.
"""

import dataclasses
import datetime
import decimal
import enum
import json
import pathlib
import subprocess
import sys
import uuid
from typing import Any, Dict, List, NamedTuple, Optional, TypedDict

import pytest

from mcplite import Client, Server
from mcplite.schema.functions import function_schema, type_schema
from tests.support import ROOT
from tests.support.wait import WAIT

pydantic = pytest.importorskip("pydantic")


class Colour(enum.Enum):
    RED = "red"
    GREEN = "green"


@dataclasses.dataclass
class Booking:
    day: datetime.date
    seats: int = 1


class Address(TypedDict):
    city: str
    since: datetime.date


class Point(NamedTuple):
    x: int
    y: float = 0.0


class User(pydantic.BaseModel):
    name: str
    joined: datetime.datetime
    tags: List[str] = []


class Base64Bytes(pydantic.BaseModel):
    """bytes in pydantic's base64 mode, whose schema and writing we follow."""

    model_config = pydantic.ConfigDict(ser_json_bytes="base64", val_json_bytes="base64")
    value: bytes


UTC = datetime.timezone.utc
WHEN = datetime.datetime(2025, 1, 31, 12, 30, tzinfo=UTC)
ID = uuid.UUID("12345678-1234-5678-1234-567812345678")

#: annotation -> (the JSON Schema we publish, a JSON argument, the Python value it becomes, that value's JSON)
CASES: Dict[str, Any] = {
    "datetime": (datetime.datetime, {"type": "string", "format": "date-time"},
                 "2025-01-31T12:30:00Z", WHEN, "2025-01-31T12:30:00Z"),
    "date": (datetime.date, {"type": "string", "format": "date"}, "2025-01-31", datetime.date(2025, 1, 31),
             "2025-01-31"),
    "time": (datetime.time, {"type": "string", "format": "time"}, "12:30:05", datetime.time(12, 30, 5),
             "12:30:05"),
    "uuid": (uuid.UUID, {"type": "string", "format": "uuid"}, str(ID), ID, str(ID)),
    "decimal": (decimal.Decimal, {"anyOf": [{"type": "number"},
                                            {"type": "string", "pattern": r"^(?!^[-+.]*$)[+-]?0*\d*\.?\d*$"}]},
                "1.50", decimal.Decimal("1.50"), "1.50"),
    "path": (pathlib.Path, {"type": "string", "format": "path"}, "/srv/data.txt", pathlib.Path("/srv/data.txt"),
             "/srv/data.txt"),
    "bytes": (bytes, {"type": "string", "format": "base64url"}, "AP_-Pj8=", b"\x00\xff\xfe>?", "AP_-Pj8="),
    "enum": (Colour, {"type": "string", "enum": ["red", "green"]}, "green", Colour.GREEN, "green"),
    "namedtuple": (Point, {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "number", "default": 0.0}],
                           "minItems": 1, "maxItems": 2}, [3], Point(3, 0.0), [3, 0.0]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_each_type_has_the_schema_pydantic_gives_it(name: str) -> None:
    annotation, schema, *_ = CASES[name]
    assert type_schema(annotation) == schema
    theirs = pydantic.TypeAdapter(annotation).json_schema()
    theirs.pop("title", None)
    if name == "bytes":  # pydantic's base64 mode (its default reads UTF-8 text, which cannot carry any bytes)
        theirs = dict(Base64Bytes.model_json_schema()["properties"]["value"])
        theirs.pop("title")
    if name == "namedtuple":  # pydantic titles each item
        for item in theirs["prefixItems"]:
            item.pop("title")
    assert schema == theirs


def echo_server(annotation: Any) -> Server:
    server = Server("types")

    def echo(value: Any) -> Dict[str, Any]:
        return {"type": type(value).__name__, "value": value, "repr": repr(value)}

    echo.__annotations__ = {"value": annotation, "return": Dict[str, Any]}
    server.tool(echo)
    return server


@pytest.mark.parametrize("name", list(CASES))
def test_an_argument_arrives_as_the_annotated_type_and_its_value_goes_back_as_pydantic_writes_it(name: str) -> None:
    annotation, schema, argument, python, written = CASES[name]
    with Client(echo_server(annotation), timeout=WAIT) as client:
        assert client.list_tools()[0]["inputSchema"]["properties"]["value"] == schema
        result = client.call_tool("echo", {"value": argument})
    assert result.get("isError") is not True, result
    assert result["structuredContent"] == {"type": type(python).__name__, "value": written, "repr": repr(python)}
    if name == "bytes":
        assert written == Base64Bytes(value=python).model_dump(mode="json")["value"]
        assert Base64Bytes.model_validate_json(json.dumps({"value": argument})).value == python
    else:
        assert written == pydantic.TypeAdapter(annotation).dump_python(python, mode="json")


def test_dataclass_typeddict_and_pydantic_model_parameters_and_results() -> None:
    server = Server("records")

    @server.tool
    def book(booking: Booking, address: Address, user: User) -> Dict[str, Any]:
        assert isinstance(booking, Booking) and isinstance(booking.day, datetime.date)
        assert isinstance(address["since"], datetime.date)
        assert isinstance(user, User) and user.joined == WHEN
        return {"booking": booking, "address": address, "user": user}

    @server.tool
    def whoami() -> User:
        return User(name="ada", joined=WHEN, tags=["admin"])

    with Client(server, timeout=WAIT) as client:
        tools = {tool["name"]: tool for tool in client.list_tools()}
        schema = tools["book"]["inputSchema"]
        assert schema["$defs"]["User"] == User.model_json_schema()
        assert schema["$defs"]["Booking"]["properties"]["day"] == {"type": "string", "format": "date"}
        assert tools["whoami"]["outputSchema"] == User.model_json_schema()
        result = client.call_tool("book", {"booking": {"day": "2025-02-01"},
                                           "address": {"city": "Paris", "since": "2020-05-01"},
                                           "user": {"name": "ada", "joined": "2025-01-31T12:30:00Z"}})
        assert result["structuredContent"] == {
            "booking": {"day": "2025-02-01", "seats": 1}, "address": {"city": "Paris", "since": "2020-05-01"},
            "user": {"name": "ada", "joined": "2025-01-31T12:30:00Z", "tags": []}}
        assert client.call_tool("whoami")["structuredContent"] == {"name": "ada", "joined": "2025-01-31T12:30:00Z",
                                                                   "tags": ["admin"]}
        refused = client.call_tool("book", {"booking": {"day": "2025-02-01"},
                                            "address": {"city": "Paris", "since": "2020-05-01"},
                                            "user": {"name": "ada", "joined": "not a date"}})
        assert refused["isError"] is True and "$.user" in refused["content"][0]["text"]


@pytest.mark.parametrize("name, bad", [("datetime", "yesterday"), ("date", "31/01/2025"), ("uuid", "nope"),
                                       ("decimal", "NaN"), ("bytes", "***"), ("time", "noon")])
def test_a_string_that_does_not_parse_is_invalid_arguments_naming_the_parameter(name: str, bad: str) -> None:
    with Client(echo_server(CASES[name][0]), timeout=WAIT) as client:
        result = client.call_tool("echo", {"value": bad})
    assert result["isError"] is True
    assert result["content"][0]["text"].startswith("Invalid arguments for tool echo: $.value")


def test_results_of_these_types_without_an_output_schema_are_written_as_json() -> None:
    server = Server("results")

    @server.tool(output_schema=False)
    def everything() -> Any:
        return {"when": WHEN, "id": ID, "price": decimal.Decimal("9.99"), "file": pathlib.Path("/a/b"),
                "raw": b"\x00\x01", "colour": Colour.RED, "point": Point(1, 2.5),
                "user": User(name="ada", joined=WHEN), "day": datetime.date(2025, 1, 31)}

    with Client(server, timeout=WAIT) as client:
        result = client.call_tool("everything")
    expected = {"when": "2025-01-31T12:30:00Z", "id": str(ID), "price": "9.99", "file": "/a/b", "raw": "AAE=",
                "colour": "red", "point": [1, 2.5], "user": {"name": "ada", "joined": "2025-01-31T12:30:00Z",
                                                             "tags": []}, "day": "2025-01-31"}
    assert result["structuredContent"] == expected
    assert json.loads(result["content"][0]["text"]) == expected


def test_optional_and_list_of_these_types_convert_item_by_item() -> None:
    def plan(days: List[datetime.date], at: Optional[datetime.time] = None) -> str:
        return ",".join(day.isoformat() for day in days) + ("" if at is None else "@" + at.isoformat())

    schema = function_schema(plan)
    kwargs = schema.bind({"days": ["2025-01-01", "2025-01-02"], "at": "09:00:00"})
    assert plan(**kwargs) == "2025-01-01,2025-01-02@09:00:00"
    assert schema.bind({"days": [], "at": None}) == {"days": [], "at": None}


def test_a_prompt_argument_and_a_template_variable_arrive_converted() -> None:
    server = Server("strings")

    @server.prompt
    def agenda(day: datetime.date) -> str:
        return f"{day:%A}"

    @server.resource("orders://{order_id}")
    def order(order_id: uuid.UUID) -> str:
        return f"order {order_id.int}"

    with Client(server, timeout=WAIT) as client:
        assert client.get_prompt("agenda", {"day": "2025-01-31"})["messages"][0]["content"]["text"] == "Friday"
        assert client.read_resource(f"orders://{ID}")["contents"][0]["text"] == f"order {ID.int}"


def test_mcplite_reads_pydantic_models_without_importing_pydantic() -> None:
    script = (f"import sys; sys.path.insert(0, {str(ROOT)!r})\n"
              "from mcplite import Server\n"
              "import datetime, uuid\n"
              "server = Server('x')\n"
              "@server.tool\n"
              "def f(when: datetime.datetime, ident: uuid.UUID) -> str:\n"
              "    return ''\n"
              "print('pydantic' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=WAIT)
    assert done.stdout.strip() == "False", done.stderr
