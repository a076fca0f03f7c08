"""What a resource handler may return (issue 32): JSON data under a JSON MIME type, and a template's lookup
that finds nothing (KeyError, FileNotFoundError) answered as "resource not found" in each revision's code."""

import dataclasses
import datetime
import json
from typing import Any, Dict

import pytest

from mcplite import Client, Server
from mcplite.errors import RESOURCE_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR, RemoteError
from mcplite.protocol.versions import LATEST_HANDSHAKE_VERSION
from tests.support.wait import WAIT

USERS = {"42": {"name": "Ada", "roles": ["admin"]}}


@dataclasses.dataclass
class Report:
    day: datetime.date
    total: int


def json_server() -> Server:
    server = Server("json")

    @server.resource("users://{user_id}", mime_type="application/json")
    def user(user_id: str) -> Dict[str, Any]:
        return USERS[user_id]  # a KeyError for an unknown user: not found

    @server.resource("users://all", mime_type="application/json")
    def everyone() -> Any:
        return [{"id": key, **value} for key, value in USERS.items()]

    @server.resource("reports://latest", mime_type="application/vnd.report+json")
    def latest() -> Report:
        return Report(datetime.date(2025, 1, 31), 7)

    @server.resource("files://{name}", mime_type="text/plain")
    def read_file(name: str) -> str:
        with open(f"/nonexistent-mcplite-dir/{name}") as handle:  # FileNotFoundError: not found
            return handle.read()

    @server.resource("config://main")
    def broken() -> str:
        return {}["missing"]  # a fixed resource's own KeyError stays an internal error

    @server.resource("contents://{name}", mime_type="application/json")
    def contents(name: str) -> Dict[str, Any]:
        return {"text": '{"as": "is"}'}  # a contents dict is still taken as contents

    return server


@pytest.mark.parametrize("version", [LATEST_HANDSHAKE_VERSION, "2026-07-28"])
def test_a_dict_or_list_under_a_json_mime_type_is_sent_as_json_text(version: str) -> None:
    with Client(json_server(), timeout=WAIT, protocol_version=version) as client:
        (entry,) = client.read_resource("users://42")["contents"]
        assert entry["mimeType"] == "application/json" and json.loads(entry["text"]) == USERS["42"]
        (entry,) = client.read_resource("users://all")["contents"]
        assert json.loads(entry["text"]) == [{"id": "42", "name": "Ada", "roles": ["admin"]}]
        (entry,) = client.read_resource("reports://latest")["contents"]
        assert entry["mimeType"] == "application/vnd.report+json"
        assert json.loads(entry["text"]) == {"day": "2025-01-31", "total": 7}
        assert client.read_resource("contents://x")["contents"] == [
            {"uri": "contents://x", "mimeType": "application/json", "text": '{"as": "is"}'}]


@pytest.mark.parametrize("version, code", [(LATEST_HANDSHAKE_VERSION, RESOURCE_NOT_FOUND),
                                           ("2026-07-28", INVALID_PARAMS)])
@pytest.mark.parametrize("uri", ["users://7", "files://missing.txt"])
def test_a_templates_key_error_or_file_not_found_is_resource_not_found(version: str, code: int, uri: str) -> None:
    with Client(json_server(), timeout=WAIT, protocol_version=version) as client:
        with pytest.raises(RemoteError) as refused:
            client.read_resource(uri)
    assert refused.value.code == code
    assert refused.value.message == f"Resource not found: {uri}"
    assert refused.value.data == {"uri": uri}


def test_a_fixed_resources_own_key_error_is_still_an_internal_error() -> None:
    with Client(json_server(), timeout=WAIT) as client:
        with pytest.raises(RemoteError) as refused:
            client.read_resource("config://main")
    assert refused.value.code == INTERNAL_ERROR


def test_a_dict_without_a_json_mime_type_is_refused_saying_what_to_do() -> None:
    server = Server("plain")

    @server.resource("data://x")
    def data() -> Dict[str, Any]:
        return {"a": 1}

    with Client(server, timeout=WAIT) as client:
        with pytest.raises(RemoteError) as refused:
            client.read_resource("data://x")
    assert refused.value.code == INTERNAL_ERROR  # the author's mistake; the log has the hint
    from mcplite.server.results import resource_contents

    with pytest.raises(TypeError, match='mime_type="application/json"'):
        resource_contents({"a": 1}, "data://x", None)
