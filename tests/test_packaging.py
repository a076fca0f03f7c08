"""The package's promises about itself: standard library only, relative imports only (so it can be vendored
under another name), and an `__all__` that names only what exists."""

import ast
import importlib
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import zipfile
from pathlib import Path
from typing import Iterator, List, Set, Tuple

import pytest

from support import ROOT, WAIT

PACKAGE = ROOT / "mcplite"
MODULES = sorted(PACKAGE.rglob("*.py"))


def stdlib_module_names() -> Set[str]:
    """Top-level names of the standard library: exact from 3.10, found in the stdlib folder on 3.9."""
    names = getattr(sys, "stdlib_module_names", None)
    if names is not None:
        return set(names)
    found = set(sys.builtin_module_names)
    # The base interpreter's folders: inside a virtual environment "platstdlib" names the venv's own lib folder.
    base = {"base": sys.base_prefix, "platbase": sys.base_exec_prefix,
            "installed_base": sys.base_prefix, "installed_platbase": sys.base_exec_prefix}
    paths = sysconfig.get_paths(vars=base)
    for folder in (Path(paths["stdlib"]), Path(paths["platstdlib"]) / "lib-dynload"):
        for entry in folder.iterdir():
            # site-packages lives in the same folder on some layouts; its name is no module name, so it
            # never passes isidentifier(), and third-party code is never a direct child here.
            if entry.suffix == ".py" or (entry.is_dir() and (entry / "__init__.py").exists()):
                found.add(entry.stem if entry.suffix == ".py" else entry.name)
            elif entry.suffix in (".so", ".pyd"):
                found.add(entry.name.split(".")[0])
    return {name for name in found if name.isidentifier()}


def imports(path: Path) -> Iterator[Tuple[int, str, int]]:
    """(line, module, relative level) for every import statement in a file, wherever it is."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, 0
        elif isinstance(node, ast.ImportFrom):
            yield node.lineno, node.module or "", node.level


def package_depth(path: Path) -> int:
    """How many packages contain the module: 1 for mcplite/x.py, 2 for mcplite/sub/x.py."""
    return len(path.relative_to(PACKAGE).parts)


def test_the_fallback_list_of_standard_modules_knows_the_usual_ones():
    names = stdlib_module_names()
    assert {"json", "threading", "subprocess", "typing", "http", "urllib", "sys", "_thread"} <= names
    assert not {"pytest", "mcplite", "site-packages"} & names


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_modules_import_only_the_standard_library_and_themselves_relatively(path):
    stdlib = stdlib_module_names()
    problems: List[str] = []
    for line, module, level in imports(path):
        top = module.split(".")[0]
        if level == 0 and top == "mcplite":
            problems.append(f"line {line}: absolute import of {module} (use a relative import)")
        elif level == 0 and top not in stdlib:
            problems.append(f"line {line}: {module} is not in the standard library")
        elif level > package_depth(path):
            problems.append(f"line {line}: relative import reaches outside the package")
    assert problems == []


def test_no_module_reaches_mcplite_by_name_at_run_time():
    """importlib.import_module("mcplite.x") and __import__ would survive the ast check above."""
    offenders = [str(path.relative_to(PACKAGE)) for path in MODULES
                 if any(text in path.read_text(encoding="utf-8")
                        for text in ('import_module("mcplite', "import_module('mcplite", '__import__("mcplite'))]
    assert offenders == []


def test_the_package_works_vendored_under_another_name(tmp_path):
    vendor = tmp_path / "vendorpkg" / "_vendor"
    shutil.copytree(PACKAGE, vendor / "mcplite", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "vendorpkg" / "__init__.py").write_text("")
    (vendor / "__init__.py").write_text("")
    script = tmp_path / "use_vendored.py"
    script.write_text(textwrap.dedent("""
        import sys

        from vendorpkg._vendor.mcplite import Client, Server
        from vendorpkg._vendor.mcplite import content

        server = Server("vendored")

        @server.tool
        def add(a: int, b: int) -> int:
            return a + b

        with Client(server, timeout=10) as client:
            result = client.call_tool("add", {"a": 2, "b": 3})
        assert result["structuredContent"] == {"result": 5}, result
        assert content.text("x") == {"type": "text", "text": "x"}
        leaked = sorted(name for name in sys.modules if name == "mcplite" or name.startswith("mcplite."))
        assert not leaked, leaked
        print("vendored ok")
    """))
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env["PYTHONPATH"] = str(tmp_path)
    # -s: no user site-packages; cwd is tmp_path, so the checkout's own mcplite is not importable.
    completed = subprocess.run([sys.executable, "-s", str(script)], cwd=str(tmp_path), env=env,
                               capture_output=True, text=True, timeout=WAIT * 3)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "vendored ok"


@pytest.mark.parametrize("path", [path for path in MODULES if path.name != "__main__.py"],  # it runs the CLI
                         ids=lambda p: str(p.relative_to(PACKAGE)))
def test_every_name_in_all_exists(path):
    parts = path.relative_to(ROOT).with_suffix("").parts
    name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    module = importlib.import_module(name)
    exported = getattr(module, "__all__", None)
    if exported is None:
        pytest.skip(f"{name} has no __all__")
    assert len(exported) == len(set(exported)), "duplicates in __all__"
    assert [item for item in exported if not hasattr(module, item)] == []



def test_the_wheel_carries_every_module_of_the_package(tmp_path):
    """A subpackage missing from pyproject's package list would install a broken mcplite."""
    setuptools = pytest.importorskip("setuptools")
    version = tuple(int(part) for part in setuptools.__version__.split(".")[:2])
    if version < (61, 0):
        pytest.skip("this setuptools cannot read PEP 621 metadata; the build backend asks for >= 61")
    if version < (70, 1) and importlib.util.find_spec("wheel") is None:
        pytest.skip("building a wheel offline needs the wheel package (CI installs it)")
    root = ROOT
    source = tmp_path / "source"  # a clean copy: an in-tree build/ folder would mask a missing package
    shutil.copytree(root / "mcplite", source / "mcplite", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "setup.cfg", "README.md"):
        shutil.copy(root / name, source / name)
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                            "-w", str(tmp_path), str(source)], capture_output=True, text=True, timeout=300)
    if build.returncode != 0 and "No module named pip" in build.stderr:
        pytest.skip("pip is not available")
    assert build.returncode == 0, build.stderr
    wheel, = tmp_path.glob("mcplite-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        shipped = {name for name in archive.namelist() if name.startswith("mcplite/")}
    expected = {path.relative_to(root).as_posix() for path in (root / "mcplite").rglob("*.py")}
    assert expected <= shipped
    assert "mcplite/py.typed" in shipped


# --- the public surface ------------------------------------------------------------------------------------

#: The names `import mcplite` promises, listed once here so that adding or dropping one is a visible decision.
PUBLIC_NAMES = {
    "Server", "Client", "Context", "ToolResult", "PendingRequest", "content", "Header",
    "Elicit", "ElicitURL", "Sample", "ListRoots", "InputRequired",
    "LATEST_VERSION", "SUPPORTED_VERSIONS",
    "MCPError", "ProtocolError", "LocalProtocolError", "CapabilityError", "RemoteProtocolError",
    "VersionMismatch", "RPCError", "RemoteError", "ResourceNotFound", "ConnectionClosed", "ResponseLost",
    "RequestTimeout", "RequestCancelled", "TransportError", "HTTPError", "SessionExpired", "AuthError",
}

#: The documented import paths other than `mcplite` itself, and the module each one presents.
DOCUMENTED_PATHS = {
    "mcplite.oauth": "mcplite.oauth",
    "mcplite.http_server": "mcplite.transports.http_server.stdlib",
    "mcplite.wsgi": "mcplite.transports.http_server.wsgi",
    "mcplite.jose": "mcplite.oauth.jose",
}


def test_the_public_names_of_mcplite_are_its_all():
    import mcplite

    assert set(mcplite.__all__) == PUBLIC_NAMES
    assert len(mcplite.__all__) == len(PUBLIC_NAMES), "duplicates in __all__"
    assert set(dir(mcplite)) >= PUBLIC_NAMES


def test_every_public_name_of_mcplite_is_defined_by_mcplite():
    import types

    import mcplite

    for name in sorted(PUBLIC_NAMES):
        value = getattr(mcplite, name)
        home = value.__name__ if isinstance(value, types.ModuleType) else getattr(value, "__module__", "mcplite")
        assert home == "mcplite" or home.startswith("mcplite."), (name, home)


def test_nothing_else_public_sits_in_the_mcplite_namespace():
    """What a user sees with dir(mcplite) beyond __all__ is submodules and the two module-level idioms."""
    import types

    import mcplite

    for name in sorted(PUBLIC_NAMES):
        getattr(mcplite, name)  # load every lazy name first: each import may add a submodule attribute
    extra = {name for name, value in vars(mcplite).items()
             if not name.startswith("_") and name not in PUBLIC_NAMES and not isinstance(value, types.ModuleType)}
    assert extra == {"TYPE_CHECKING", "annotations"}


@pytest.mark.parametrize("path,home", sorted(DOCUMENTED_PATHS.items()))
def test_the_documented_import_paths_present_their_modules_names(path, home):
    module, target = importlib.import_module(path), importlib.import_module(home)
    assert module.__all__ and list(module.__all__) == list(target.__all__)
    assert all(getattr(module, name) is getattr(target, name) for name in module.__all__)


def test_an_unknown_name_is_an_attribute_error_naming_it():
    import mcplite

    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        mcplite.Nope  # noqa: B018
