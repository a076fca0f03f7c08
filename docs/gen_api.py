"""Writes docs/api.md, the API reference, from the public names themselves: ``python3 docs/gen_api.py``.

The public surface is the ``__all__`` of each documented module (`MODULES`); every name gets one entry with
its signature (or value) and the first paragraph of its docstring (at most three lines). The text must not
depend on the Python version or the run: annotations are printed as written in the source (the package uses
``from __future__ import annotations``), sentinels by their name, sets sorted. `tests/test_api_reference.py`
fails when the committed file differs from what this script prints, or when a public name is missing.

    python3 docs/gen_api.py            # rewrite docs/api.md
    python3 docs/gen_api.py --check    # exit 1 when docs/api.md is stale
"""

from __future__ import annotations

import ast
import importlib
import inspect
import os
import re
import sys
import types
import typing
from typing import Any, Callable, Dict, List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUTPUT = os.path.join(ROOT, "docs", "api.md")

#: The documented modules, whose ``__all__`` is the public surface.
MODULES = ["mcplite", "mcplite.content", "mcplite.errors", "mcplite.http_server", "mcplite.wsgi", "mcplite.recording",
           "mcplite.replay", "mcplite.oauth", "mcplite.oauth.advanced", "mcplite.gateway", "mcplite.testing"]

#: The sections, in order: a title, an introduction, and which (module, name) pairs belong there.
GROUPS: List[Tuple[str, str, Callable[[str, str, Any], bool]]] = [
    ("Client", "`from mcplite import Client`: one connection to one server (in-process, stdio or HTTP), blocking "
     "methods that return the wire dicts typed as the `TypedDict`s of `mcplite.protocol.types`.",
     lambda module, name, obj: module == "mcplite" and name in ("Client", "PendingRequest")),
    ("Server and Context", "`from mcplite import Server`: decorators register tools, resources and prompts; a "
     "handler that declares a `Context` parameter can log, report progress and ask the client for input. "
     "`Elicit`, `ElicitURL`, `Sample`, `ListRoots` and `InputRequired` are the questions a 2026-07-28 handler "
     "asks.",
     lambda module, name, obj: module == "mcplite" and name in (
         "Server", "Context", "ToolResult", "Header", "Elicit", "ElicitURL", "Sample", "ListRoots",
         "InputRequired")),
    ("Content helpers", "`mcplite.content` builds content blocks in their wire shape (`text`, `image`, "
     "`audio`, `resource`, `resource_link`, `message`) and reads results back without casts: "
     "`text_of(result)` joins the text of a `CallToolResult`, a `GetPromptResult` or a `ReadResourceResult`; "
     "`blob_of(result)` decodes its one binary item; `structured_of(result)` returns `structuredContent` or "
     "raises a `ValueError` that says why there is none. Together with the required keys of the wire types "
     "(`result[\"content\"]`, `tool[\"name\"]`, `block[\"type\"]`), a script that uses them passes "
     "`mypy --strict` and pyright's strict mode (`tests/test_typed_results.py` checks one).",
     lambda module, name, obj: module == "mcplite.content" or name == "content"),
    ("HTTP serving", "One way per server kind: the built-in server is `server.run(http=\"host:port\")` (until "
     "SIGTERM or Ctrl-C), or `HTTPServerThread` from `mcplite.http_server` in the background (tests, embedding); "
     "under WSGI it is `server.wsgi_app(...)`. The names here are what those take. (`mcplite.http_server` also "
     "holds the core, `HTTPApp`, for writing another adapter: advanced, outside `__all__`.)",
     lambda module, name, obj: module in ("mcplite.http_server", "mcplite.wsgi")),
    ("Recording", "`mcplite.recording`: every message of a connection, both ways, as JSON lines with secrets "
     "redacted (`record=` on `Client`, `Client.stdio`, `Server.run`, `HTTPServerThread`, `Server.wsgi_app`), and "
     "`read_recording` to read one back. The format is in [recording.md](recording.md).",
     lambda module, name, obj: module == "mcplite.recording"),
    ("Replay", "`mcplite.replay`: a recording served as a server (`ReplayServer`: `Client(ReplayServer(path))` in "
     "memory, `.run()` over stdio, `.run(http=...)`), answering the requests it recorded; matching and "
     "normalization are in [recording.md](recording.md#replaying).",
     lambda module, name, obj: module == "mcplite.replay"),
    ("OAuth", "`mcplite.oauth`: what a user configures: the OAuth 2.1 grants, token storage, the browser step, "
     "running a flow with `drive`, and bearer tokens on the server.",
     lambda module, name, obj: module == "mcplite.oauth"),
    ("OAuth, advanced", "`mcplite.oauth.advanced`: the pieces under `mcplite.oauth`, for those who build on them: "
     "the specification's rules as functions, challenge parsing, PKCE, client assertions, DPoP proofs by hand, "
     "the grants' base class. Public, but it changes more readily than `mcplite.oauth`. (Until 0.2 these names "
     "are importable from `mcplite.oauth` too, with a `DeprecationWarning`.)",
     lambda module, name, obj: module == "mcplite.oauth.advanced"),
    ("Gateway", "`from mcplite import Gateway`: many MCP servers behind one (docs/gateway.md); "
     "`mcplite.gateway` also holds its configuration's reader and its error.",
     lambda module, name, obj: module == "mcplite.gateway" or name == "Gateway"),
    ("Testing", "`mcplite.testing`: assertions about tool results whose failures show what came back, and "
     "scripted answers to a server's questions that record what it asked. Under pytest it is also a plugin: the "
     "fixtures `mcp_client`, `mcp_server`, `mcp_http_server`, `mcp_revision`, `mcp_cassette` (record once, then "
     "replay: `--mcp-record=none|new|all`) and the marker `@pytest.mark.mcp_revisions(...)` "
     "([testing.md](testing.md)).",
     lambda module, name, obj: module == "mcplite.testing"),
    ("Errors", "Every exception mcplite raises on purpose derives from `MCPError`; they are importable from "
     "`mcplite` and from `mcplite.errors`.",
     lambda module, name, obj: isinstance(obj, type) and issubclass(obj, BaseException)),
    ("Protocol constants", "The revisions this package speaks, and the JSON-RPC and MCP error codes.",
     lambda module, name, obj: True),
]


def public_names() -> Dict[Tuple[Any, ...], List[Tuple[str, str, Any]]]:
    """Each public object (by identity) -> the (module, name) paths it is public under, in `MODULES` order."""
    paths: Dict[Tuple[Any, ...], List[Tuple[str, str, Any]]] = {}
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        for name in module.__all__:
            obj = getattr(module, name)
            # Constants equal by value are different names: only classes, functions and modules are shared.
            shared = isinstance(obj, (type, types.FunctionType, types.ModuleType))
            key = ("object", id(obj)) if shared else ("name", module_name, name)
            paths.setdefault(key, []).append((module_name, name, obj))
    return paths


# ---- rendering ----------------------------------------------------------------------------------------------
_SOURCES: Dict[str, Optional[Tuple[str, ast.Module]]] = {}


def _source_tree(module_name: str) -> Optional[Tuple[str, ast.Module]]:
    if module_name not in _SOURCES:
        _SOURCES[module_name] = _parse(module_name)
    return _SOURCES[module_name]


def _parse(module_name: str) -> Optional[Tuple[str, ast.Module]]:
    module = sys.modules.get(module_name)
    path = getattr(module, "__file__", None)
    if not path or not path.endswith(".py"):
        return None
    with open(path, encoding="utf-8") as file:
        source = file.read()
    return source, ast.parse(source)


def _assignment(name: str) -> Optional[Tuple[str, List[str], ast.stmt]]:
    """The module-level assignment of ``name`` in some mcplite module: (its source, the lines, the node)."""
    for module_name in sorted(m for m in sys.modules if m == "mcplite" or m.startswith("mcplite.")):
        found = _source_tree(module_name)
        if found is None:
            continue
        source, tree = found
        for node in tree.body:
            targets = (node.targets if isinstance(node, ast.Assign)
                       else [node.target] if isinstance(node, ast.AnnAssign) and node.value is not None else [])
            if any(isinstance(target, ast.Name) and target.id == name for target in targets):
                return source, source.splitlines(), node
    return None


def _value(name: str, obj: Any) -> str:
    if isinstance(obj, (str, int, float, bool)) or obj is None:
        return repr(obj)
    if isinstance(obj, tuple) and all(isinstance(item, (str, int)) for item in obj):
        return repr(obj)
    if isinstance(obj, frozenset):
        return "frozenset({" + ", ".join(repr(item) for item in sorted(obj)) + "})"
    if isinstance(obj, dict):
        return "{" + ", ".join(f"{key!r}: ..." for key in sorted(obj)) + "}"
    found = _assignment(name)
    if found is not None:
        source, _, node = found
        segment = ast.get_source_segment(source, node.value)
        if segment:
            return " ".join(segment.split())
    return f"<{type(obj).__name__}>"


def _comment(name: str) -> str:
    """The ``#:`` comment above a constant's assignment, or the comment at the end of its line."""
    found = _assignment(name)
    if found is None:
        return ""
    _, lines, node = found
    above: List[str] = []
    index = node.lineno - 2
    while index >= 0 and lines[index].lstrip().startswith("#:"):
        above.insert(0, lines[index].lstrip()[2:].strip())
        index -= 1
    if above:
        return " ".join(above)
    match = re.search(r"#\s*(.+)$", lines[node.end_lineno - 1] if node.end_lineno else "")
    return match.group(1).strip() if match and "noqa" not in match.group(1) else ""


def _annotation(annotation: Any) -> str:
    """As written, whatever the Python version made of it: ``from __future__ import annotations`` leaves a
    string; otherwise typing objects (whose repr changes between versions) are spelled out here."""
    if isinstance(annotation, str):
        return annotation.strip("'\"")
    if annotation is None or annotation is type(None):
        return "None"
    if isinstance(annotation, typing.ForwardRef):
        return annotation.__forward_arg__
    if isinstance(annotation, type) and not typing.get_args(annotation):
        return annotation.__qualname__
    if isinstance(annotation, list):
        return "[" + ", ".join(_annotation(item) for item in annotation) + "]"
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Union:
        if len(args) == 2 and type(None) in args:
            return f"Optional[{_annotation(next(arg for arg in args if arg is not type(None)))}]"
        return "Union[" + ", ".join(_annotation(arg) for arg in args) + "]"
    if origin is typing.Literal:
        return "Literal[" + ", ".join(repr(arg) for arg in args) + "]"
    name = getattr(annotation, "_name", None) or getattr(origin, "__name__", None)
    if name and args:
        return f"{name}[" + ", ".join(_annotation(arg) for arg in args) + "]"
    return re.sub(r"\b(typing|collections\.abc)\.", "", repr(annotation))


def _default(value: Any, owner: Any) -> str:
    text = repr(value)
    if text.startswith("<built-in function") or isinstance(value, types.FunctionType):
        return f"{value.__module__}.{value.__qualname__}"
    if " at 0x" in text:  # a sentinel object: its name where it was defined
        module = sys.modules.get(getattr(owner, "__module__", "") or "")
        for name, candidate in sorted(vars(module).items()) if module else []:
            if candidate is value:
                return name
        return "..."
    return text


def signature(fn: Any, owner: Any = None, annotations: bool = True, returns: bool = True) -> Optional[str]:
    """``(params) -> return``, built parameter by parameter so that no Python version's formatting shows."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    parts: List[str] = []
    star_done = False
    params = list(sig.parameters.values())
    if owner is not None and params and params[0].name in ("self", "cls", "_cls"):
        params = params[1:]
    for index, param in enumerate(params):
        if param.kind is param.KEYWORD_ONLY and not star_done:
            parts.append("*")
            star_done = True
        prefix = {param.VAR_POSITIONAL: "*", param.VAR_KEYWORD: "**"}.get(param.kind, "")
        if param.kind is param.VAR_POSITIONAL:
            star_done = True
        text = prefix + param.name
        if annotations and param.annotation is not param.empty:
            text += ": " + _annotation(param.annotation)
        if param.default is not param.empty:
            text += (" = " if annotations and param.annotation is not param.empty else "=") + _default(
                param.default, owner or fn)
        parts.append(text)
        if param.kind is param.POSITIONAL_ONLY and (index + 1 == len(params)
                                                     or params[index + 1].kind is not param.POSITIONAL_ONLY):
            parts.append("/")
    result = "(" + ", ".join(parts) + ")"
    if returns and sig.return_annotation is not sig.empty:
        result += " -> " + _annotation(sig.return_annotation)
    return result


def summary(obj: Any) -> str:
    """The first paragraph of ``obj``'s own docstring, at most three lines, as one line."""
    doc = obj.__doc__ if isinstance(obj, (type, types.FunctionType, types.ModuleType, property)) else None
    if not doc or not isinstance(doc, str):
        return ""
    if isinstance(obj, type) and doc.startswith(obj.__name__ + "("):  # a dataclass's generated docstring
        return ""
    paragraph = inspect.cleandoc(doc).split("\n\n")[0].splitlines()
    text = " ".join(line.strip() for line in paragraph[:3])
    if len(paragraph) > 3:
        cut = text.rfind(". ")
        text = text[:cut + 1] if cut > 0 else text + " ..."
    return text


def _class_init(cls: type) -> Optional[str]:
    for klass in cls.__mro__:
        if klass is object or klass.__module__ == "builtins":
            return None
        for method in ("__init__", "__new__"):
            fn = vars(klass).get(method)
            if isinstance(fn, staticmethod):
                fn = fn.__func__
            if isinstance(fn, types.FunctionType):
                return signature(fn, owner=cls, returns=False)
    return None


def _members(cls: type) -> List[str]:
    """The public methods and properties a class defines or inherits from mcplite classes, one bullet each."""
    seen: Dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if not klass.__module__.startswith("mcplite"):
            continue
        for name, member in vars(klass).items():
            if name.startswith("_"):
                continue
            if summary(member).startswith("Deprecated"):  # still works, no longer documented
                continue
            if isinstance(member, (classmethod, staticmethod)):
                member = member.__func__
            if isinstance(member, property):
                seen[name] = f"- `{name}` (property)" + _tail(summary(member))
            elif isinstance(member, types.FunctionType):
                sig = signature(member, owner=cls, annotations=False) or "(...)"
                seen[name] = f"- `{name}{sig}`" + _tail(summary(member))
    return list(seen.values())


def _tail(text: str) -> str:
    return f": {text}" if text else ""


def entry(paths: List[Tuple[str, str, Any]]) -> str:
    module_name, name, obj = paths[0]
    names = ", ".join(f"`{module}.{alias}`" for module, alias, _ in paths)
    lines = [f"### {name}", "", names, ""]
    if isinstance(obj, types.ModuleType):
        lines += [f"The module `{obj.__name__}`.", ""]
    elif isinstance(obj, type):
        bases = [base.__name__ for base in obj.__bases__ if base is not object]
        bases = [base for base in bases if base not in ("ABC", "Generic", "Protocol")]
        sig = _class_init(obj) if not issubclass(obj, BaseException) or "__init__" in vars(obj) else None
        head = f"class {name}" + (sig or "") + (f"  # ({', '.join(bases)})" if bases else "")
        lines += ["```python", head, "```", ""]
    elif isinstance(obj, types.FunctionType):
        lines += ["```python", f"def {name}{signature(obj) or '(...)'}", "```", ""]
    else:
        lines += ["```python", f"{name} = {_value(name, obj)}", "```", ""]
    text = summary(obj) if isinstance(obj, (type, types.FunctionType, types.ModuleType)) else _comment(name)
    if text:
        lines += [text, ""]
    if isinstance(obj, type) and not issubclass(obj, BaseException):
        members = _members(obj)
        if members:
            lines += members + [""]
    return "\n".join(lines)


def render() -> str:
    remaining = list(public_names().values())
    out = [
        "# API reference",
        "",
        "<!-- Generated by docs/gen_api.py from the public names themselves; do not edit by hand: run",
        "     `python3 docs/gen_api.py`. tests/test_api_reference.py fails when this file is stale. -->",
        "",
        "One entry per public name of " + ", ".join(f"`{m}`" for m in MODULES) + " (each module's "
        "`__all__`). Under each heading: the import paths, the signature or value, and the first paragraph of "
        "the docstring; a class lists its public methods. The wire types the results are typed as are the "
        "`TypedDict`s of `mcplite.protocol.types`, where the keys the 2025-11-25 schema requires are required.",
        "",
    ]
    for title, intro, belongs in GROUPS:
        chosen = [paths for paths in remaining if any(belongs(m, n, o) for m, n, o in paths)]
        remaining = [paths for paths in remaining if paths not in chosen]
        out += [f"## {title}", "", intro, ""]
        out += [entry(paths) for paths in chosen]
    assert not remaining, remaining
    return "\n".join(out).rstrip("\n") + "\n"


def main(argv: List[str]) -> int:
    sys.path.insert(0, ROOT)
    text = render()
    if "--check" in argv:
        with open(OUTPUT, encoding="utf-8") as file:
            if file.read() != text:
                print("docs/api.md is stale: run python3 docs/gen_api.py", file=sys.stderr)
                return 1
        return 0
    with open(OUTPUT, "w", encoding="utf-8") as file:
        file.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
