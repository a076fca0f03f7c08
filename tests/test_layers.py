"""The layer contract: which folder of mcplite may import which, and no import cycle between modules.

The folders are the layers (see docs/architecture.md). Every import statement in every module is
checked, wherever it is: at the top, inside a function, or under ``if TYPE_CHECKING:``; a type-only import
still says that one layer knows another. A function-level import may reach a few layers more than the
module's top level may (`LAZY_ALSO`): that is how `Server.run` loads the HTTP server only when asked.
"""

import ast
from pathlib import Path
from typing import Dict, Iterator, List, Set, Tuple

from support import ROOT

PACKAGE = ROOT / "mcplite"
MODULES = sorted(PACKAGE.rglob("*.py"))

#: group -> the groups its modules may import (a group is a folder, or a top-level module). A module may
#: always import modules of its own group. "transports" alone (no dot) is the transport contract in
#: transports/__init__.py; "transports.*" is any transport.
ALLOWED: Dict[str, Set[str]] = {
    "errors": set(),
    "_once": set(),  # the first-use loader: every layer may use it (ALWAYS)
    "_deprecated": set(),  # the deprecated spellings' __getattr__: every layer may use it (ALWAYS)
    "_options": set(),  # misspelt keyword options named, with the closest real one: every layer (ALWAYS)
    "_log": set(),
    "_sync": {"_log"},
    "_files": set(),  # creating private files: for the stores and the token file
    "protocol": {"errors"},
    "schema": {"protocol", "errors"},
    "content": {"protocol", "errors"},
    "transports": {"protocol", "_sync", "_log", "_files", "errors"},
    "session": {"transports", "protocol", "_sync", "_log", "errors"},
    "server": {"session", "schema", "protocol", "content", "transports", "transports.recording", "_sync", "_log",
               "_files", "errors"},
    "client": {"session", "schema", "protocol", "transports", "transports.recording", "_sync", "_log", "errors"},
    "oauth": {"transports.http_messages", "protocol.versions", "protocol.json_text", "_files", "errors"},
    # The gateway sits above both API layers: a Server in front, a Client per upstream.
    "gateway": {"client", "server", "session", "oauth", "schema", "protocol", "_sync", "_log", "errors"},
    # The inspector's page server: a Client driven from a browser, behind the HTTP server's Host/Origin checks.
    "inspector": {"client", "transports.recording", "transports.http_server.guards",
                  "transports.http_server.adapter", "protocol", "_log", "errors"},
    # The command line; ``record -- URL`` drives the HTTP client transport itself (a pass-through has no session).
    "cli": {"inspector", "gateway", "client", "server", "oauth", "schema", "protocol", "replay", "recording",
            "transports", "transports.http_client", "errors"},
    # The test helpers and the pytest plugin sit above both API layers: clients of servers, served over HTTP.
    "testing": {"client", "server", "http_server", "replay", "schema", "content", "protocol", "errors"},
    "__main__": {"cli"},
    "__init__": {"errors", "protocol", "schema", "client", "server", "session", "content", "gateway"},  # schema: Header
    # The documented import paths, one import each: see their docstrings.
    "http_server": {"transports.*"},
    "wsgi": {"transports.*"},
    "recording": {"transports.recording", "errors"},
    # Serving a recording: real server sessions (the session layer) answering from it.
    "replay": {"session", "transports", "transports.recording", "protocol", "_log", "errors"},
    "jose": {"oauth"},
}

#: What every module may import: pure helpers of no layer.
ALWAYS: Set[str] = {"_once", "_deprecated", "_options"}

#: What a function-level import may reach beyond ALLOWED: the API layer loads a transport when asked to.
LAZY_ALSO: Dict[str, Set[str]] = {
    "server": {"transports.*"},
    "client": {"transports.*"},
    "gateway": {"transports.*"},
    "replay": {"transports.*"},
}

def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_module(name: str) -> bool:
    path = ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def imports(path: Path) -> Iterator[Tuple[int, str, bool]]:
    """(line, imported mcplite module, at function level) for every relative import in a file.

    ``from . import x`` names the module ``x`` when there is one, and the package otherwise."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    here = module_name(path).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    lazy_nodes: Set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lazy_nodes.update(id(inner) for inner in ast.walk(node) if inner is not node)
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or node.level == 0:
            continue
        base = package[:len(package) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
        lazy = id(node) in lazy_nodes
        submodules = [f"{target}.{alias.name}" for alias in node.names if is_module(f"{target}.{alias.name}")]
        if submodules:
            for name in submodules:
                yield node.lineno, name, lazy
            if len(submodules) == len(node.names):
                continue
        yield node.lineno, target, lazy


def group_of(module: str) -> str:
    """mcplite.transports.stdio -> transports; mcplite.errors -> errors; mcplite -> __init__."""
    parts = module.split(".")[1:]
    return parts[0] if parts else "__init__"


def matches(rule: str, inside: str) -> bool:
    """Does a rule of ALLOWED cover a module path inside mcplite (``transports.http_messages``)?"""
    if rule.endswith(".*"):
        return inside.startswith(rule[:-1])
    if rule == "transports":  # the contract only, not every transport
        return inside == rule
    return inside == rule or inside.startswith(rule + ".")


def allowed(source: str, target: str, lazy: bool) -> bool:
    group = group_of(source)
    if group == group_of(target):
        return True
    rules = ALLOWED[group] | ALWAYS | (LAZY_ALSO.get(group, set()) if lazy else set())
    inside = ".".join(target.split(".")[1:])
    return any(matches(rule, inside) for rule in rules)


def violations() -> List[Tuple[str, str]]:
    found = []
    for path in MODULES:
        source = module_name(path)
        assert group_of(source) in ALLOWED, f"{source}: a new top-level module or folder needs a row in ALLOWED"
        for _, target, lazy in imports(path):
            if not allowed(source, target, lazy):
                found.append((source, target))
    return sorted(set(found))


def test_the_rules_themselves_read_as_intended() -> None:
    assert allowed("mcplite.session", "mcplite.transports", lazy=False)  # the contract
    assert not allowed("mcplite.session", "mcplite.transports.stdio", lazy=False)  # a transport
    assert not allowed("mcplite.server", "mcplite.transports.stdio", lazy=False)
    assert allowed("mcplite.server", "mcplite.transports.stdio", lazy=True)
    assert allowed("mcplite.oauth.flow", "mcplite.transports.http_messages", lazy=False)
    assert not allowed("mcplite.oauth.flow", "mcplite.transports.http_client", lazy=True)
    assert allowed("mcplite.schema.functions", "mcplite.protocol.types", lazy=False)
    assert not allowed("mcplite.protocol.versions", "mcplite.session", lazy=True)
    assert not allowed("mcplite.transports.http_server.app", "mcplite.session", lazy=False)
    assert allowed("mcplite.transports.http_server.app", "mcplite.transports.http_server.streams", lazy=False)


def test_every_import_keeps_the_layer_contract() -> None:
    assert violations() == []


def test_the_command_lines_human_output_is_pure() -> None:
    """`cli/format.py` turns result dicts into text and imports nothing of mcplite (its tests are tables)."""
    assert list(imports(PACKAGE / "cli" / "format.py")) == []


def test_no_import_cycle_between_modules() -> None:
    graph: Dict[str, Set[str]] = {}
    for path in MODULES:
        source = module_name(path)
        graph[source] = {target for _, target, _ in imports(path) if target != source}
    cycles: List[List[str]] = []
    state: Dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(node: str, trail: List[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append(trail[trail.index(nxt):] + [nxt] if nxt in trail else [node, nxt])
            elif nxt not in state:
                visit(nxt, trail + [nxt])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    assert cycles == []
