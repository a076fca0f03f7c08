"""The command line's human output (`mcplite.cli.format`), as tables: result dicts in, text out."""

import base64
from typing import Any, Dict, List

import pytest

from mcplite.cli.format import (
    format_block, format_call_result, format_completion, format_info, format_notification, format_prompt_result,
    format_prompts, format_read_result, format_resources, format_size, format_skill, format_skills, format_templates,
    format_tools, schema_type, tool_signature,
)

DEFS = {"place": {"type": "object", "properties": {"city": {"type": "string"}}}, "id": {"type": "integer"}}


@pytest.mark.parametrize("schema, expected", [
    ({"type": "integer"}, "integer"),
    ({}, "any"),
    (True, "any"),
    ({"type": "array", "items": {"type": "string"}}, "array[string]"),
    ({"type": "array"}, "array"),
    ({"type": "array", "items": {"type": "array", "items": {"type": "number"}}}, "array[array[number]]"),
    ({"type": "string", "enum": ["a", "b"]}, '"a"|"b"'),
    ({"enum": [1, None]}, "1|null"),
    ({"const": "x"}, '"x"'),
    ({"type": ["string", "null"]}, "string|null"),
    ({"anyOf": [{"type": "string"}, {"type": "null"}]}, "string|null"),
    ({"oneOf": [{"type": "integer"}, {"type": "integer", "minimum": 3}]}, "integer"),
    ({"type": "object"}, "object"),
    ({"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}}, "required": ["x"]},
     "{x: number, y?: number}"),
    ({"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {
        "type": "object", "properties": {"c": {"type": "integer"}}}}}}}, "{a?: {b?: object}}"),
    ({"$ref": "#/$defs/place"}, "place"),
    ({"$ref": "#/$defs/id"}, "integer"),
    ({"type": "array", "prefixItems": [{"type": "number"}, {"type": "string"}]}, "[number, string]"),
])
def test_schema_types(schema: Any, expected: str) -> None:
    assert schema_type(schema, DEFS) == expected


@pytest.mark.parametrize("tool, expected", [
    ({"name": "ping", "inputSchema": {"type": "object"}}, "ping()"),
    ({"name": "add", "inputSchema": {"type": "object", "properties": {"a": {"type": "integer"},
                                                                      "b": {"type": "integer"}},
                                     "required": ["a", "b"]},
      "outputSchema": {"type": "object", "properties": {"result": {"type": "integer"}}, "required": ["result"]}},
     "add(a: integer, b: integer) -> integer"),
    ({"name": "find", "inputSchema": {"type": "object", "properties": {
        "q": {"type": "string"}, "limit": {"type": "integer", "default": 10},
        "where": {"$ref": "#/$defs/place"}}, "required": ["q"], "$defs": DEFS},
      "outputSchema": {"type": "object", "properties": {"hits": {"type": "array", "items": {"type": "string"}}}}},
     "find(q: string, limit?: integer = 10, where?: place) -> {hits?: array[string]}"),
    ({"name": "odd"}, "odd()"),
])
def test_tool_signatures(tool: Dict[str, Any], expected: str) -> None:
    assert tool_signature(tool) == expected


def test_tools_listing_puts_the_description_below_indented() -> None:
    tools = [{"name": "a", "title": "The A", "description": "First line.\nSecond line.", "inputSchema": {}},
             {"name": "b", "inputSchema": {}}]
    assert format_tools(tools) == "a()  (The A)\n    First line.\n    Second line.\nb()"
    assert format_tools([]) == "(no tools)"


def test_prompts_resources_and_templates_listings() -> None:
    prompts = [{"name": "review", "description": "Review code.",
                "arguments": [{"name": "code", "required": True, "description": "The code."}, {"name": "lang"}]}]
    assert format_prompts(prompts) == "review(code, lang?)\n    Review code.\n      code: The code."
    resources = [{"uri": "file:///a.txt", "name": "a", "mimeType": "text/plain", "description": "A file.",
                  "size": 2048}, {"uri": "mem://x", "name": "mem://x"}]
    assert format_resources(resources) == "file:///a.txt (text/plain) - a, 2.0 KiB\n    A file.\nmem://x"
    templates = [{"uriTemplate": "users://{id}", "name": "user", "mimeType": "application/json"}]
    assert format_templates(templates) == "users://{id} (application/json) - user"


@pytest.mark.parametrize("size, expected", [
    (0, "0 B"), (1023, "1023 B"), (1024, "1.0 KiB"), (12_600, "12.3 KiB"), (3 * 2 ** 20, "3.0 MiB"),
    (5 * 2 ** 30, "5.0 GiB"),
])
def test_sizes(size: int, expected: str) -> None:
    assert format_size(size) == expected


PNG = base64.b64encode(bytes(12_600)).decode()


@pytest.mark.parametrize("block, expected", [
    ({"type": "text", "text": "hello\nworld"}, "hello\nworld"),
    ({"type": "image", "mimeType": "image/png", "data": PNG}, "[image: image/png, 12.3 KiB]"),
    ({"type": "audio", "mimeType": "audio/wav", "data": "AAAA"}, "[audio: audio/wav, 3 B]"),
    ({"type": "image", "mimeType": "image/png", "data": "not base64!"}, "[image: image/png, not base64]"),
    ({"type": "resource", "resource": {"uri": "a://b", "mimeType": "text/plain", "text": "abc"}},
     "[resource: a://b, text/plain, 3 characters]"),
    ({"type": "resource", "resource": {"uri": "a://c", "blob": base64.b64encode(bytes(2048)).decode()}},
     "[resource: a://c, 2.0 KiB]"),
    ({"type": "resource_link", "uri": "file:///x", "name": "x", "mimeType": "text/csv", "size": 10},
     "[resource link: file:///x, text/csv, 10 B - x]"),
    ({"type": "resource_link", "uri": "file:///y", "name": "file:///y"}, "[resource link: file:///y]"),
    ({"type": "video", "url": "v"}, '[video: {"type": "video", "url": "v"}]'),
])
def test_content_blocks(block: Dict[str, Any], expected: str) -> None:
    assert format_block(block) == expected


@pytest.mark.parametrize("result, expected", [
    ({"content": [{"type": "text", "text": "4"}], "structuredContent": {"result": 4}}, "4"),
    ({"content": [], "structuredContent": {"a": [1]}}, '{\n  "a": [\n    1\n  ]\n}'),
    ({"content": [{"type": "image", "mimeType": "image/png", "data": "AAAA"}], "structuredContent": {"n": 1}},
     '[image: image/png, 3 B]\n{\n  "n": 1\n}'),
    ({"content": []}, "(no content)"),
    ({"content": [{"type": "text", "text": "boom"}], "isError": True}, "boom"),
])
def test_call_results(result: Dict[str, Any], expected: str) -> None:
    assert format_call_result(result) == expected


def test_read_prompt_and_completion_results() -> None:
    assert format_read_result({"contents": [{"uri": "a://1", "text": "just this"}]}) == "just this"
    assert format_read_result({"contents": [{"uri": "a://1", "mimeType": "text/plain", "text": "one"},
                                            {"uri": "a://2", "blob": "AAAA"}]}) == (
        "[a://1, text/plain, 3 characters]\none\n[a://2, 3 B]")
    assert format_prompt_result({"description": "Greets.", "messages": [
        {"role": "user", "content": {"type": "text", "text": "Hi"}},
        {"role": "assistant", "content": {"type": "image", "mimeType": "image/png", "data": "AAAA"}}]}) == (
        "Greets.\nuser: Hi\nassistant: [image: image/png, 3 B]")
    assert format_completion({"values": ["paris", "park"], "total": 5, "hasMore": True}) == "paris\npark\n(3 more)"
    assert format_completion({"values": []}) == "(no completions)"


def test_info_lines_are_aligned() -> None:
    info = {"protocolVersion": "2025-11-25", "era": "handshake",
            "serverInfo": {"name": "demo", "version": "1.2"},
            "capabilities": {"tools": {"listChanged": True}, "logging": {}},
            "instructions": "Use it.\nWisely."}
    assert format_info(info) == ("server:       demo 1.2\n"
                                 "protocol:     2025-11-25 (handshake)\n"
                                 "capabilities: tools (listChanged), logging\n"
                                 "instructions: Use it.\n"
                                 "              Wisely.")


def test_notifications_are_one_line() -> None:
    assert format_notification("notifications/tools/list_changed", {}) == "notifications/tools/list_changed"
    assert format_notification("notifications/resources/updated", {"uri": "a://b"}) == (
        'notifications/resources/updated {"uri":"a://b"}')


# ---- skills ---------------------------------------------------------------------------------------------
SKILL_ENTRY = {
    "uri": "skill://pdf/SKILL.md", "frontmatter": {"name": "pdf", "description": "PDF work.", "license": "MIT",
                                                   "metadata": {"v": "1"}},
    "resources": [{"uri": "skill://pdf/SKILL.md", "digest": "sha256:" + "0" * 64, "size": 1000},
                  {"uri": "skill://pdf/a.md", "digest": "sha256:" + "1" * 64, "size": 2000}],
}


@pytest.mark.parametrize("skills, expected", [
    ([SKILL_ENTRY], "pdf  skill://pdf/SKILL.md  (2 files, 2.9 KiB)\n    PDF work."),
    ([{**SKILL_ENTRY, "resources": "dynamic"}], "pdf  skill://pdf/SKILL.md  (dynamic)\n    PDF work."),
    ([{**SKILL_ENTRY, "resources": SKILL_ENTRY["resources"][:1]}], "pdf  skill://pdf/SKILL.md  (1 file, 1000 B)\n"
                                                                   "    PDF work."),
    ([], "(no skills)"),
])
def test_skills_listing(skills: List[Dict[str, Any]], expected: str) -> None:
    assert format_skills(skills) == expected


def test_a_skill_with_its_fields_files_and_text() -> None:
    text = format_skill({"skill": SKILL_ENTRY, "uri": "skill://pdf/SKILL.md", "text": "---\nname: pdf\n---\n\n"})
    assert text.splitlines() == [
        "pdf  skill://pdf/SKILL.md  (2 files, 2.9 KiB)", "    PDF work.", "    license: MIT",
        '    metadata: {"v": "1"}', "    - skill://pdf/SKILL.md (1000 B)", "    - skill://pdf/a.md (2.0 KiB)", "",
        "---", "name: pdf", "---"]
    binary = format_skill({"skill": SKILL_ENTRY, "uri": "skill://pdf/a.bin", "blob": "AAEC"})
    assert binary.endswith("\n\n[skill://pdf/a.bin, 3 B]")


SDK_LIST_RESULT = {  # what the official Python SDK answers for `-> list[str]`: one text block per item
    "content": [{"type": "text", "text": "ada"}, {"type": "text", "text": "grace"}],
    "structuredContent": {"result": ["ada", "grace"]}}


@pytest.mark.parametrize("schema", [
    {"type": "object", "properties": {"result": {"type": "array"}}, "required": ["result"]},  # mcplite, the SDK
    {"type": "object", "properties": {"result": {"type": "array"}}, "required": ["result"],
     "x-fastmcp-wrap-result": True},  # FastMCP 2, and mcplite now
])
def test_a_wrapped_result_is_shown_as_its_value(schema: Any) -> None:
    from mcplite.cli.format import format_call_result, wraps_result

    assert wraps_result(schema)
    assert format_call_result(SDK_LIST_RESULT, schema) == '[\n  "ada",\n  "grace"\n]'
    assert format_call_result({"content": [], "structuredContent": {"result": "hi"}}, schema) == "hi"
    assert format_call_result(SDK_LIST_RESULT) == "ada\ngrace"  # no schema: the content, as before
    assert not wraps_result({"type": "object", "properties": {"result": {}, "more": {}}, "required": ["result"]})
