"""The command line's human output: pure functions from protocol results (dicts) to text.

`mcplite.cli` prints these on a terminal (or with ``--human``); piped, or with ``--json``, it prints the
results as JSON instead. Nothing here talks to a server or writes to a stream, so each function is tested as
a table of inputs and outputs (tests/test_cli_format.py).

Tools read as signatures derived from their input schema (``add(a: integer, b?: string) -> integer``),
content blocks as their text or a one-line summary (``[image: image/png, 12.3 KiB]``): a person reading a
terminal wants the gist, and ``--json`` is there for everything else.
"""

import base64
import binascii
import json
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence

__all__ = [
    "schema_type", "tool_signature", "format_tools", "format_prompts", "format_resources", "format_templates",
    "format_size", "format_block", "format_call_result", "format_read_result", "format_prompt_result",
    "format_completion", "format_info", "format_notification", "format_list", "format_skills", "format_skill",
    "format_task", "wraps_result",
]

INDENT = "    "
#: How deep object schemas are spelled out as ``{key: type}``; deeper ones are just ``object``.
MAX_OBJECT_DEPTH = 2


# ---- schemas and signatures ---------------------------------------------------------------------------
def schema_type(schema: Any, defs: Optional[Mapping[str, Any]] = None, depth: int = 0) -> str:
    """A short type for a JSON Schema: ``integer``, ``array[string]``, ``"a"|"b"``, ``{x: number, y?: number}``.

    ``defs`` are the root schema's ``$defs``/``definitions``: a ``$ref`` into them is shown as the type it
    names (its definition's type when that is simple, else the definition's name).
    """
    if schema is True or schema is None or schema == {}:
        return "any"
    if schema is False:
        return "never"
    if not isinstance(schema, dict):
        return "any"
    defs = defs or {}
    if "const" in schema:
        return _literal(schema["const"])
    if isinstance(schema.get("enum"), list):
        return "|".join(_literal(value) for value in schema["enum"]) or "never"
    ref = schema.get("$ref")
    if isinstance(ref, str):
        name = ref.rsplit("/", 1)[-1]
        target = defs.get(name)
        # A definition that is an object is better named than spelled out: the name is what its author chose.
        if isinstance(target, dict) and not ("properties" in target or target.get("type") == "object"):
            return schema_type(target, defs, depth)
        return name or "any"
    for combinator in ("anyOf", "oneOf"):
        options = schema.get(combinator)
        if isinstance(options, list) and options:
            return "|".join(_unique(schema_type(option, defs, depth) for option in options))
    kind = schema.get("type")
    if isinstance(kind, list):
        return "|".join(_unique(schema_type({**schema, "type": one}, defs, depth) for one in kind)) or "any"
    if kind == "array" or (kind is None and "items" in schema):
        items = schema.get("items")
        if isinstance(items, list):  # a tuple (draft 7 spelling)
            return "[" + ", ".join(schema_type(item, defs, depth + 1) for item in items) + "]"
        if isinstance(schema.get("prefixItems"), list):
            return "[" + ", ".join(schema_type(item, defs, depth + 1) for item in schema["prefixItems"]) + "]"
        return f"array[{schema_type(items, defs, depth + 1)}]" if items is not None else "array"
    if kind == "object" or (kind is None and "properties" in schema):
        properties = schema.get("properties")
        if isinstance(properties, dict) and properties and depth < MAX_OBJECT_DEPTH:
            return "{" + ", ".join(_parameters(schema, defs, depth + 1)) + "}"
        return "object"
    if isinstance(kind, str):
        return kind
    return "any"


def _literal(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _unique(words: Iterable[str]) -> List[str]:
    return list(dict.fromkeys(words))  # (in their first order)


def _parameters(schema: Dict[str, Any], defs: Mapping[str, Any], depth: int) -> List[str]:
    """``name: type`` for each property, ``name?: type`` for an optional one, `` = default`` when it has one."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return []
    listed = schema.get("required")
    required: List[Any] = listed if isinstance(listed, list) else []
    words = []
    for name, prop in properties.items():
        mark = "" if name in required else "?"
        word = f"{name}{mark}: {schema_type(prop, defs, depth)}"
        if isinstance(prop, dict) and prop.get("default") is not None:
            word += f" = {_literal(prop['default'])}"
        words.append(word)
    return words


def _defs(schema: Any) -> Dict[str, Any]:
    if not isinstance(schema, dict):
        return {}
    found: Dict[str, Any] = {}
    for key in ("definitions", "$defs"):
        if isinstance(schema.get(key), dict):
            found.update(schema[key])
    return found


def wraps_result(schema: Any) -> bool:
    """Is ``schema`` an output schema that wraps a value that is not an object as ``{"result": value}``?

    structuredContent must be an object (2025-06-18 to 2025-11-25), so servers wrap the rest: mcplite and
    the official Python SDK by the shape alone (one required property, ``result``), FastMCP 2 marking it
    ``"x-fastmcp-wrap-result": true`` as well.
    """
    if not isinstance(schema, dict):
        return False
    if schema.get("x-fastmcp-wrap-result") is True:
        return True
    properties = schema.get("properties")
    return isinstance(properties, dict) and list(properties) == ["result"] and schema.get("required") == ["result"]


def _output_type(schema: Any) -> Optional[str]:
    """The return type: a server that wraps a plain value as ``{"result": value}`` shows the value's type."""
    if not isinstance(schema, dict):
        return None
    if wraps_result(schema) and isinstance(schema.get("properties"), dict) and "result" in schema["properties"]:
        return schema_type(schema["properties"]["result"], _defs(schema), 1)
    return schema_type(schema, _defs(schema))


def tool_signature(tool: Mapping[str, Any]) -> str:
    """``name(a: integer, b?: string) -> integer``: the parameters from the input schema, the return type
    from the output schema (when the tool has one)."""
    schema = tool.get("inputSchema") if isinstance(tool.get("inputSchema"), dict) else {}
    assert isinstance(schema, dict)
    signature = f"{tool.get('name', '?')}({', '.join(_parameters(schema, _defs(schema), 1))})"
    returns = _output_type(tool.get("outputSchema"))
    return f"{signature} -> {returns}" if returns else signature


def _described(head: str, description: Any) -> List[str]:
    lines = [head]
    if isinstance(description, str) and description.strip():
        lines += [(INDENT + line).rstrip() for line in description.strip().splitlines()]
    return lines


def format_tools(tools: Sequence[Mapping[str, Any]]) -> str:
    """Each tool as its signature, its title and description below it, indented."""
    lines: List[str] = []
    for tool in tools:
        title = tool.get("title") or (tool.get("annotations") or {}).get("title")
        head = tool_signature(tool) + (f"  ({title})" if title and title != tool.get("name") else "")
        lines += _described(head, tool.get("description"))
    return _joined(lines, "no tools")


def format_prompts(prompts: Sequence[Mapping[str, Any]]) -> str:
    """``name(arg1, arg2?)`` (optional arguments marked ``?``) and the description below."""
    lines: List[str] = []
    for prompt in prompts:
        arguments = [f"{argument.get('name', '?')}{'' if argument.get('required') else '?'}"
                     for argument in prompt.get("arguments") or [] if isinstance(argument, dict)]
        lines += _described(f"{prompt.get('name', '?')}({', '.join(arguments)})", prompt.get("description"))
        for argument in prompt.get("arguments") or []:
            if isinstance(argument, dict) and argument.get("description"):
                lines.append(f"{INDENT}  {argument.get('name')}: {argument['description']}")
    return _joined(lines, "no prompts")


def _resource_head(uri: Any, item: Mapping[str, Any]) -> str:
    head = str(uri)
    if item.get("mimeType"):
        head += f" ({item['mimeType']})"
    name = item.get("title") or item.get("name")
    if name and name != uri:
        head += f" - {name}"
    return head


def format_resources(resources: Sequence[Mapping[str, Any]]) -> str:
    """``uri (mimeType) - name`` and the description below."""
    lines: List[str] = []
    for resource in resources:
        head = _resource_head(resource.get("uri", "?"), resource)
        if isinstance(resource.get("size"), int):
            head += f", {format_size(resource['size'])}"
        lines += _described(head, resource.get("description"))
    return _joined(lines, "no resources")


def format_templates(templates: Sequence[Mapping[str, Any]]) -> str:
    lines: List[str] = []
    for template in templates:
        lines += _described(_resource_head(template.get("uriTemplate", "?"), template), template.get("description"))
    return _joined(lines, "no resource templates")


def format_list(key: str, items: Sequence[Mapping[str, Any]]) -> str:
    """The listing for ``list KIND``, by the result's key."""
    return {"tools": format_tools, "prompts": format_prompts, "resources": format_resources,
            "resourceTemplates": format_templates}[key](items)


def _skill_files(entry: Mapping[str, Any]) -> str:
    """``3 files, 1.2 KiB`` from an entry's resources, or ``dynamic`` (no manifest)."""
    resources = entry.get("resources")
    if not isinstance(resources, list):
        return str(resources)
    total = sum(item.get("size", 0) for item in resources
                if isinstance(item, dict) and isinstance(item.get("size"), int))
    return f"{len(resources)} file{'' if len(resources) == 1 else 's'}, {format_size(total)}"


def format_skills(skills: Sequence[Mapping[str, Any]]) -> str:
    """Each skill entry as ``name  uri  (N files, size)`` and its description below."""
    lines: List[str] = []
    for entry in skills:
        frontmatter = entry.get("frontmatter") if isinstance(entry.get("frontmatter"), dict) else {}
        assert isinstance(frontmatter, dict)
        head = f"{frontmatter.get('name', '?')}  {entry.get('uri', '?')}  ({_skill_files(entry)})"
        lines += _described(head, frontmatter.get("description"))
    return _joined(lines, "no skills")


def format_skill(value: Mapping[str, Any]) -> str:
    """``skills get``: the entry (name, uri, description, every other frontmatter field, the files with their
    sizes), a blank line, then the file read (verified) as text, or a summary of a binary one."""
    entry = value.get("skill") if isinstance(value.get("skill"), dict) else {}
    assert isinstance(entry, dict)
    lines = format_skills([entry]).splitlines()
    frontmatter = entry.get("frontmatter") if isinstance(entry.get("frontmatter"), dict) else {}
    assert isinstance(frontmatter, dict)
    for key, field in frontmatter.items():
        if key not in ("name", "description"):
            lines.append(f"{INDENT}{key}: {field if isinstance(field, str) else json.dumps(field)}")
    resources = entry.get("resources")
    for item in resources if isinstance(resources, list) else []:
        if isinstance(item, dict):
            size = item.get("size")
            lines.append(f"{INDENT}- {item.get('uri')}" + (f" ({format_size(size)})" if isinstance(size, int) else ""))
    if isinstance(value.get("text"), str):
        lines += ["", value["text"].rstrip("\n")]
    elif isinstance(value.get("blob"), str):
        lines += ["", f"[{_contents_summary(value)}]"]
    return "\n".join(lines)


def _joined(lines: List[str], empty: str) -> str:
    return "\n".join(lines) if lines else f"({empty})"


# ---- content --------------------------------------------------------------------------------------------
def format_size(size: int) -> str:
    """Bytes for a person: ``512 B``, ``12.3 KiB``, ``4.0 MiB``."""
    if size < 1024:
        return f"{size} B"
    value = size / 1024
    for unit in ("KiB", "MiB"):
        if value < 1024:
            return f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"


def _decoded_size(data: Any) -> Optional[int]:
    """The byte count of base64 ``data`` (None when it is not base64)."""
    if not isinstance(data, str):
        return None
    try:
        return len(base64.b64decode(data, validate=True))
    except (binascii.Error, ValueError):
        return None


def _size_words(data: Any) -> str:
    size = _decoded_size(data)
    return format_size(size) if size is not None else "not base64"


def format_block(block: Any) -> str:
    """One content block: text as it is, anything else as a bracketed one-line summary."""
    if not isinstance(block, dict):
        return json.dumps(block, ensure_ascii=False)
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind in ("image", "audio"):
        return f"[{kind}: {block.get('mimeType', 'unknown type')}, {_size_words(block.get('data'))}]"
    if kind == "resource":
        return "[resource: " + _contents_summary(block.get("resource") or {}) + "]"
    if kind == "resource_link":
        words = [str(block.get("uri", "?"))]
        if block.get("mimeType"):
            words.append(str(block["mimeType"]))
        if isinstance(block.get("size"), int):
            words.append(format_size(block["size"]))
        name = block.get("title") or block.get("name")
        return "[resource link: " + ", ".join(words) + (f" - {name}" if name and name != block.get("uri") else "") + "]"
    return f"[{kind}: {json.dumps(block, ensure_ascii=False, sort_keys=True)}]"


def _contents_summary(contents: Mapping[str, Any]) -> str:
    """``uri, mimeType, size`` of a resource's contents (text or blob)."""
    words = [str(contents.get("uri", "?"))]
    if contents.get("mimeType"):
        words.append(str(contents["mimeType"]))
    if isinstance(contents.get("text"), str):
        words.append(f"{len(contents['text'])} characters")
    elif "blob" in contents:
        words.append(_size_words(contents.get("blob")))
    return ", ".join(words)


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


def format_call_result(result: Mapping[str, Any], output_schema: Any = None) -> str:
    """A CallToolResult: its content blocks one after another; ``structuredContent`` pretty-printed when no
    block is text (then the structure is the answer), or when there is no content at all.

    When the tool's ``output_schema`` wraps a value as ``{"result": value}`` (`wraps_result`), the value is
    the answer: it is shown unwrapped, and in place of text blocks that split it up (the official Python
    SDK writes a list as one text block per item).
    """
    blocks = [block for block in result.get("content") or []]
    structured = result.get("structuredContent")
    if wraps_result(output_schema) and isinstance(structured, dict) and list(structured) == ["result"] \
            and not result.get("isError"):
        others = [format_block(block) for block in blocks
                  if not (isinstance(block, dict) and block.get("type") == "text")]
        value = structured["result"]
        return "\n".join([value if isinstance(value, str) else _pretty(value), *others])
    parts = [format_block(block) for block in blocks]
    has_text = any(isinstance(block, dict) and block.get("type") == "text" for block in blocks)
    if "structuredContent" in result and not has_text:
        parts.append(_pretty(structured))
    if not parts:
        return "(no content)"
    return "\n".join(parts)


def format_read_result(result: Mapping[str, Any]) -> str:
    """A ReadResourceResult: a lone text is printed as it is; several contents each under their uri; blobs
    are summarised."""
    contents = [item for item in result.get("contents") or [] if isinstance(item, dict)]
    text = contents[0].get("text") if len(contents) == 1 else None
    if isinstance(text, str):
        return text
    parts = []
    for item in contents:
        parts.append(f"[{_contents_summary(item)}]")
        if isinstance(item.get("text"), str):
            parts.append(item["text"])
    return "\n".join(parts) if parts else "(no contents)"


def format_prompt_result(result: Mapping[str, Any]) -> str:
    """A GetPromptResult: the description, then ``role: content`` for each message."""
    lines = []
    if result.get("description"):
        lines.append(str(result["description"]))
    for message in result.get("messages") or []:
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        blocks = content if isinstance(content, list) else [content]
        text = "\n".join(format_block(block) for block in blocks)
        lines.append(f"{message.get('role', '?')}: {text}")
    return "\n".join(lines) if lines else "(no messages)"


def format_completion(completion: Mapping[str, Any]) -> str:
    """One value a line, and how many more the server has when it says."""
    values = [str(value) for value in completion.get("values") or []]
    lines = values or ["(no completions)"]
    total = completion.get("total")
    if isinstance(total, int) and total > len(values):
        lines.append(f"({total - len(values)} more)")
    elif completion.get("hasMore"):
        lines.append("(more)")
    return "\n".join(lines)


def _capability_words(capabilities: Mapping[str, Any]) -> str:
    words = []
    for name, value in capabilities.items():
        flags = [key for key, flag in value.items() if flag is True] if isinstance(value, dict) else []
        words.append(f"{name} ({', '.join(flags)})" if flags else name)
    return ", ".join(words) or "none"


def format_info(info: Mapping[str, Any]) -> str:
    """The ``info`` result as aligned ``key: value`` lines."""
    server = info.get("serverInfo") or {}
    name = " ".join(str(part) for part in (server.get("name"), server.get("version")) if part)
    rows = [("server", name or "(unnamed)")]
    if server.get("title"):
        rows.append(("title", str(server["title"])))
    rows.append(("protocol", f"{info.get('protocolVersion')} ({info.get('era')})"))
    rows.append(("capabilities", _capability_words(info.get("capabilities") or {})))
    if info.get("instructions"):
        rows.append(("instructions", str(info["instructions"])))
    width = max(len(key) for key, _ in rows) + 1
    lines = []
    for key, value in rows:
        first, *rest = value.splitlines() or [""]
        lines.append(f"{key + ':':<{width}} {first}")
        lines += [" " * (width + 1) + line for line in rest]  # a long instructions text stays in its column
    return "\n".join(lines)


def format_notification(method: str, params: Optional[Mapping[str, Any]]) -> str:
    """One line for ``listen``: the method, then its params (if any) as compact JSON."""
    if not params:
        return method
    return f"{method} {json.dumps(params, ensure_ascii=False, separators=(',', ':'))}"


def format_task(task: Mapping[str, Any]) -> str:
    """A task (``tasks get``): ``task ID: status (message)``, its times, then its result, error or questions."""
    head = f"task {task.get('taskId')}: {task.get('status')}"
    if task.get("statusMessage"):
        head += f" ({task['statusMessage']})"
    lines = [head]
    for key, label in (("createdAt", "created"), ("lastUpdatedAt", "updated")):
        if task.get(key):
            lines.append(f"{INDENT}{label} {task[key]}")
    result, error, questions = task.get("result"), task.get("error"), task.get("inputRequests")
    if isinstance(result, Mapping):
        lines.append(format_call_result(result))
    if isinstance(error, Mapping):
        code = f" {error['code']}" if "code" in error else ""
        lines.append(f"error{code}: {error.get('message', '')}")
    if isinstance(questions, Mapping):
        for key, request in questions.items():
            method = request.get("method") if isinstance(request, Mapping) else None
            lines.append(f"{INDENT}waiting for {key}: {method}")
    return "\n".join(lines)
