"""Tool schemas on the client (2026-07-28 SEP-1613: JSON Schema 2020-12 is the dialect).

The client hands a tool's ``inputSchema`` and ``outputSchema`` back exactly as the server wrote them
(``$schema``, ``$defs``, ``$ref``, ``additionalProperties``, keywords it does not know), in every era and on the
wire, and its output check follows local ``$ref`` pointers but never fetches a network one: the check opens no
socket, and a remote ``$ref`` constrains nothing (conformance: json-schema-ref-no-deref,
json-schema-2020-12-preservation).
"""

import json
import socket
from typing import Any, Dict, List

import pytest

from mcplite import Client, Server
from tests.support.http import serving
from tests.support.wait import WAIT

REMOTE = "https://schemas.example.invalid/address.json"

INPUT_SCHEMA: Dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "urn:mcplite:test:order",
    "type": "object",
    "$defs": {
        "item": {"type": "object", "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}},
                 "required": ["sku"], "additionalProperties": False},
    },
    "properties": {
        "items": {"type": "array", "items": {"$ref": "#/$defs/item"}, "minItems": 1},
        "ship_to": {"$ref": REMOTE},
        "note": {"type": ["string", "null"], "x-vendor-keyword": {"kept": True}},
    },
    "required": ["items"],
    "additionalProperties": False,
    "unevaluatedProperties": False,
    "dependentRequired": {"note": ["items"]},
}

OUTPUT_SCHEMA: Dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {"total": {"type": "integer", "minimum": 0}},
    "properties": {"total": {"$ref": "#/$defs/total"}, "address": {"$ref": REMOTE}},
    "required": ["total"],
    "additionalProperties": False,
}


def order_server() -> Server:
    server = Server("schemas")

    def order(items: List[Dict[str, Any]], ship_to: Any = None, note: Any = None) -> Dict[str, Any]:
        return {"total": sum(item.get("qty", 1) for item in items), "address": {"anything": "goes"}}

    def bad_order(items: List[Dict[str, Any]]) -> Dict[str, Any]:
        return {"total": -1}  # breaks the local $ref's minimum

    server.add_tool(order, input_schema=INPUT_SCHEMA, output_schema=OUTPUT_SCHEMA)
    server.add_tool(bad_order, input_schema=INPUT_SCHEMA, output_schema=OUTPUT_SCHEMA)
    return server


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> List[Any]:
    """Record (and refuse) every outbound connection made outside 127.0.0.1."""
    attempts: List[Any] = []
    real = socket.create_connection

    def guarded(address: Any, *args: Any, **kwargs: Any) -> Any:
        if address[0] not in ("127.0.0.1", "localhost", "::1"):
            attempts.append(address)
            raise OSError(f"test: no network ({address})")
        return real(address, *args, **kwargs)

    monkeypatch.setattr(socket, "create_connection", guarded)
    return attempts


def by_name(tools: List[Dict[str, Any]], name: str) -> Dict[str, Any]:
    return next(tool for tool in tools if tool["name"] == name)


@pytest.mark.parametrize("version", ["auto", "2025-11-25", "2025-06-18"])
def test_schemas_come_back_byte_for_byte_in_memory(version, no_network):
    with Client(order_server(), timeout=WAIT, protocol_version=version) as client:
        tool = by_name(client.list_tools(), "order")
        assert json.dumps(tool["inputSchema"], sort_keys=False) == json.dumps(INPUT_SCHEMA, sort_keys=False)
        assert tool["outputSchema"] == OUTPUT_SCHEMA
        assert list(tool["inputSchema"]) == list(INPUT_SCHEMA)  # the server's key order, too
    assert no_network == []


def test_schemas_come_back_byte_for_byte_over_http(no_network):
    with serving(order_server()) as http, Client(http.url, timeout=WAIT) as client:
        assert client.protocol_version == "2026-07-28"
        tool = by_name(client.list_tools(), "order")
        assert json.dumps(tool["inputSchema"]) == json.dumps(INPUT_SCHEMA)
        assert json.dumps(tool["outputSchema"]) == json.dumps(OUTPUT_SCHEMA)
    assert no_network == []


def test_the_output_check_follows_local_refs_and_never_fetches_a_remote_one(no_network):
    with Client(order_server(), timeout=WAIT) as client:
        result = client.call_tool("order", {"items": [{"sku": "a", "qty": 2}, {"sku": "b"}]})
        assert result["structuredContent"] == {"total": 3, "address": {"anything": "goes"}}
        from mcplite.errors import RemoteProtocolError

        with pytest.raises(RemoteProtocolError, match="does not match its outputSchema"):
            client.call_tool("bad_order", {"items": [{"sku": "a"}]})
    assert no_network == []  # the remote $ref was never resolved
