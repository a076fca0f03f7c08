"""docs/api.md cannot drift: every public name has an entry, every entry names something public, and the
committed file is exactly what docs/gen_api.py produces now."""

import importlib
import os
import re
import sys
from typing import Set

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
API_MD = os.path.join(ROOT, "docs", "api.md")
sys.path.insert(0, os.path.join(ROOT, "docs"))

import gen_api  # noqa: E402  (docs/ is not a package)

#: Each entry: a ``### Name`` heading, a blank line, then the line of its import paths.
ENTRY = re.compile(r"^### (\S+)\n\n((?:`[\w.]+`(?:, )?)+)$", re.MULTILINE)


def public_paths() -> Set[str]:
    paths = set()
    for module_name in gen_api.MODULES:
        module = importlib.import_module(module_name)
        paths.update(f"{module_name}.{name}" for name in module.__all__)
    return paths


def documented_paths() -> Set[str]:
    with open(API_MD, encoding="utf-8") as file:
        text = file.read()
    paths = set()
    for heading, line in ENTRY.findall(text):
        names = re.findall(r"`([\w.]+)`", line)
        assert names, heading
        paths.update(names)
    return paths


def test_the_documented_modules_are_the_documented_import_paths() -> None:
    # The import paths docs/architecture.md lists, less `mcplite.jose` (a JOSE toolkit, documented in its
    # module), plus the two modules whose names the reference covers too: content helpers and the errors' codes;
    # and the advanced part of `mcplite.oauth`, in a section of its own that says so; the gateway's package; and
    # the test helpers (whose pytest fixtures docs/testing.md describes).
    assert gen_api.MODULES == ["mcplite", "mcplite.content", "mcplite.errors", "mcplite.http_server",
                               "mcplite.wsgi", "mcplite.recording", "mcplite.replay", "mcplite.oauth",
                               "mcplite.oauth.advanced", "mcplite.gateway", "mcplite.testing"]


def test_every_public_name_has_an_entry() -> None:
    missing = public_paths() - documented_paths()
    assert not missing, f"public but not in docs/api.md (run python3 docs/gen_api.py): {sorted(missing)}"


def test_every_entry_names_something_public() -> None:
    stale = documented_paths() - public_paths()
    assert not stale, f"in docs/api.md but no longer public (run python3 docs/gen_api.py): {sorted(stale)}"


def test_every_entry_is_found_by_the_pattern_the_checks_read() -> None:
    with open(API_MD, encoding="utf-8") as file:
        text = file.read()
    assert len(ENTRY.findall(text)) == text.count("\n### ")


def test_the_committed_file_is_what_the_script_writes_now() -> None:
    with open(API_MD, encoding="utf-8") as file:
        committed = file.read()
    generated = gen_api.render()
    if committed != generated:
        import difflib

        diff = "".join(list(difflib.unified_diff(committed.splitlines(True), generated.splitlines(True),
                                                 "docs/api.md (committed)", "docs/gen_api.py (now)"))[:60])
        pytest.fail(f"docs/api.md is stale: run python3 docs/gen_api.py\n{diff}")


def test_every_class_and_function_has_a_summary() -> None:
    with open(API_MD, encoding="utf-8") as file:
        text = file.read()
    # An entry's code block is followed by its summary paragraph (or by nothing: a constant without a comment).
    bare = re.findall(r"^### (\S+)\n\n[^\n]+\n\n```python\n(?:class|def) [^\n]+\n```\n\n(?=### |## |- |$)", text,
                      re.MULTILINE)
    assert not bare, f"classes and functions without a docstring: {bare}"
