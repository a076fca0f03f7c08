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
import tarfile
import textwrap
import zipfile
from pathlib import Path
from typing import Iterator, List, Set, Tuple

import pytest

from support import ROOT, WAIT

PACKAGE = ROOT / "mcplite"
MODULES = sorted(PACKAGE.rglob("*.py"))

#: The one module that imports something outside the standard library: the pytest plugin's fixtures, which
#: only pytest loads (`mcplite.testing.pytest_configure` registers them), so pytest stays a test-time need.
NOT_STDLIB_ALLOWED = {PACKAGE / "testing" / "fixtures.py": {"pytest"}}


def stdlib_module_names() -> Set[str]:
    """Top-level names of the standard library: exact from 3.10, found in the stdlib folder on 3.9."""
    names = getattr(sys, "stdlib_module_names", None)
    if names is not None:
        return set(names)
    return stdlib_module_names_from_folders()


def stdlib_module_names_from_folders() -> Set[str]:
    """The 3.9 fallback: builtin modules plus what the base interpreter's stdlib and lib-dynload folders hold."""
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
    # Called directly, so every Python runs the fallback that only 3.9 depends on (and this test runs in a
    # virtual environment in CI, where the folders must be the base interpreter's).
    names = stdlib_module_names_from_folders()
    assert {"json", "threading", "subprocess", "typing", "http", "urllib", "sys", "_thread", "select"} <= names
    assert not {"pytest", "mcplite", "site-packages", "setuptools", "_pytest"} & names


def test_the_fallback_list_accepts_every_standard_module_mcplite_imports():
    """What the 3.9 run of the import check sees: the fallback must know each module mcplite imports."""
    imported = {module.split(".")[0] for path in MODULES for _, module, level in imports(path)
                if level == 0 and module.split(".")[0] not in NOT_STDLIB_ALLOWED.get(path, set())}
    assert imported - stdlib_module_names_from_folders() == set()
    exact = getattr(sys, "stdlib_module_names", None)
    if exact is not None:  # 3.10+: and every one of them is standard for the exact list too
        assert imported <= set(exact)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_modules_import_only_the_standard_library_and_themselves_relatively(path):
    stdlib = stdlib_module_names()
    problems: List[str] = []
    for line, module, level in imports(path):
        top = module.split(".")[0]
        if level == 0 and top == "mcplite":
            problems.append(f"line {line}: absolute import of {module} (use a relative import)")
        elif level == 0 and top not in stdlib and top not in NOT_STDLIB_ALLOWED.get(path, set()):
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



#: What a checkout holds that no archive should: VCS data, caches, build output, peers the scripts install.
NOT_SOURCES = (".git", "__pycache__", "*.pyc", "*.egg-info", "build", "dist", ".pytest_cache", ".peers",
               ".conformance", ".conformance-0.1.16", ".benchmarks", ".venv", "node_modules", ".coverage", ".coverage.*",
               "htmlcov", ".mypy_cache", ".ruff_cache")


#: The PEP 517 hook that `python -m build --sdist --no-isolation` calls, without needing `build` installed.
BUILD_SDIST = "import sys; from setuptools import build_meta; print(build_meta.build_sdist(sys.argv[1]))"


def require_offline_build() -> None:
    """Skip when this interpreter cannot run the build backend offline; the `test` extra brings all of it."""
    setuptools = pytest.importorskip("setuptools")
    version = tuple(int(part) for part in setuptools.__version__.split(".")[:2])
    if version < (77, 0):
        pytest.skip("pyproject's SPDX license metadata needs setuptools >= 77 (the test extra installs it)")
    if importlib.util.find_spec("wheel") is None and version < (70, 1):  # older setuptools built wheels with it
        pytest.skip("building a wheel offline needs the wheel package (the test extra installs it)")


def build_wheel(source: Path, out: Path) -> Path:
    """The wheel pip builds from `source`, with this interpreter's setuptools (no download)."""
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                            "-w", str(out), str(source)], capture_output=True, text=True, timeout=300)
    if build.returncode != 0 and "No module named pip" in build.stderr:
        pytest.skip("pip is not available")
    assert build.returncode == 0, build.stderr
    wheel, = out.glob("mcplite-*.whl")
    return wheel


def assert_wheel_carries_the_license(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        info, = {name.split("/")[0] for name in names if name.split("/")[0].endswith(".dist-info")}
        metadata = archive.read(f"{info}/METADATA").decode("utf-8")
        assert archive.read(f"{info}/licenses/LICENSE") == (ROOT / "LICENSE").read_bytes()
    assert "License-Expression: MIT" in metadata.splitlines()
    assert "License-File: LICENSE" in metadata.splitlines()


def test_the_wheel_carries_every_module_of_the_package_and_the_license(tmp_path):
    """A subpackage missing from pyproject's package list would install a broken mcplite."""
    require_offline_build()
    root = ROOT
    source = tmp_path / "source"  # a clean copy: an in-tree build/ folder would mask a missing package
    shutil.copytree(root / "mcplite", source / "mcplite", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "setup.cfg", "README.md", "LICENSE"):
        shutil.copy(root / name, source / name)
    wheel = build_wheel(source, tmp_path)
    with zipfile.ZipFile(wheel) as archive:
        shipped = {name for name in archive.namelist() if name.startswith("mcplite/")}
    expected = {path.relative_to(root).as_posix() for path in (root / "mcplite").rglob("*.py")}
    assert expected <= shipped
    assert "mcplite/py.typed" in shipped
    # The inspector's page is package data: `mcplite inspect` serves it from the installed package.
    assert {f"mcplite/inspector/page/{name}" for name in ("index.html", "app.js", "style.css")} <= shipped
    with zipfile.ZipFile(wheel) as archive:  # pytest finds the plugin by its entry point once installed
        info, = {name.split("/")[0] for name in archive.namelist() if name.split("/")[0].endswith(".dist-info")}
        entry_points = archive.read(f"{info}/entry_points.txt").decode("utf-8")
    assert "[pytest11]\nmcplite = mcplite.testing\n" in entry_points, entry_points
    assert_wheel_carries_the_license(wheel)


def test_the_sdist_carries_the_license_and_everything_its_tests_need(tmp_path):
    """Unpack the sdist, install it with the test extra, run pytest: that works only if the archive holds the
    tests' helpers (tests/support, conftest, fixtures, the helper servers) and the examples they run."""
    require_offline_build()
    source = tmp_path / "source"  # a copy, so the build's egg-info never lands in the checkout
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*NOT_SOURCES))
    out = tmp_path / "out"
    out.mkdir()
    build = subprocess.run(
        [sys.executable, "-c", BUILD_SDIST, str(out)],
        cwd=str(source), capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr
    sdist, = out.glob("mcplite-*.tar.gz")
    with tarfile.open(sdist) as archive:
        top = archive.getnames()[0].split("/")[0]
        shipped = {name[len(top) + 1:] for name in archive.getnames() if name.startswith(top + "/")}
        assert archive.extractfile(f"{top}/LICENSE").read() == (ROOT / "LICENSE").read_bytes()
        # Python 3.12+ asks for an extraction filter; the archive is our own, made a moment ago.
        extract_kwargs = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        archive.extractall(tmp_path / "unpacked", **extract_kwargs)
    wanted = {path.relative_to(source).as_posix() for folder in ("tests", "examples", "docs")
              for path in (source / folder).rglob("*") if path.is_file()}
    assert wanted, "the copy of the checkout holds no tests"
    assert sorted(wanted - shipped) == []
    assert {"LICENSE", "README.md", "CHANGELOG.md", "SECURITY.md", "pyproject.toml", "setup.cfg"} <= shipped
    assert not [name for name in shipped if "__pycache__" in name or name.endswith(".pyc")]
    # The unpacked tree collects every test: no helper module or fixture file is missing from it. The unpacked
    # mcplite comes first on sys.path (python -m puts the working directory there), not this checkout's.
    unpacked = tmp_path / "unpacked" / top
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "COVERAGE_PROCESS_START")}
    collect = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
                             cwd=str(unpacked), env=env, capture_output=True, text=True, timeout=300)
    assert collect.returncode == 0, collect.stdout[-3000:] + collect.stderr[-3000:]
    assert " tests collected" in collect.stdout and "error" not in collect.stdout.splitlines()[-1]
    # And pip builds the wheel from the unpacked sdist, license included.
    assert_wheel_carries_the_license(build_wheel(unpacked, tmp_path))


# --- the public surface ------------------------------------------------------------------------------------

#: The names `import mcplite` promises, listed once here so that adding or dropping one is a visible decision.
PUBLIC_NAMES = {
    "Server", "Client", "Gateway", "Context", "ToolResult", "PendingRequest", "content", "Header",
    "Elicit", "ElicitURL", "Sample", "ListRoots", "InputRequired",
    "LATEST_VERSION", "SUPPORTED_VERSIONS",
    "MCPError", "ProtocolError", "LocalProtocolError", "CapabilityError", "RemoteProtocolError",
    "VersionMismatch", "RPCError", "RemoteError", "ResourceNotFound", "ConnectionClosed", "ResponseLost",
    "RequestTimeout", "RequestCancelled", "TransportError", "HTTPError", "SessionExpired", "AuthError",
    "SkillVerificationError", "RecordingError",
}

#: The documented import paths other than `mcplite` itself and what each one promises (its `__all__`), listed
#: here for the same reason. Each module's own docstring says what else it holds (advanced, or deprecated).
DOCUMENTED_PATHS = {
    "mcplite.oauth": {
        "OAuth", "ClientCredentials", "CrossAppAccess", "JWTBearer", "TokenRequestRefused",
        "TokenStorage", "MemoryTokenStorage", "FileTokenStorage", "user_token_file", "Tokens", "ClientRegistration",
        "AuthorizeCallback", "AuthorizationResponse", "BrowserAuthorizer",
        "drive", "HTTPRequest", "HTTPResponse", "BearerAuth", "StaticTokenAuth", "NonceIssuer",
    },
    "mcplite.oauth.advanced": {
        "BaseOAuth", "AuthFlow", "send_with_http_client", "LoopbackRedirectCatcher", "protected_resource_metadata_path",
        "make_proof", "verify_proof", "DPoPProofError", "ReplayCache", "jwk_thumbprint",
        "DEFAULT_PROTOCOL_VERSION", "AuthRules", "AUTH_RULES", "auth_rules",
        "canonical_resource_uri", "resource_matches", "protected_resource_metadata_urls",
        "authorization_server_metadata_urls", "legacy_metadata_url", "legacy_default_endpoints",
        "check_protected_resource_metadata", "check_metadata_issuer", "check_legacy_metadata_issuer",
        "check_pkce_support", "check_authorization_response", "check_authorization_response_issuer",
        "check_client_issuer", "select_scopes", "add_step_up_scopes", "apply_offline_access", "application_type_for",
        "choose_token_endpoint_auth_method",
        "BearerChallenge", "parse_bearer_challenge", "parse_auth_challenge", "is_insufficient_scope",
        "pkce_pair", "pkce_challenge", "client_assertion",
        "JWT_BEARER_ASSERTION_TYPE", "TOKEN_EXCHANGE_GRANT", "JWT_BEARER_GRANT", "ID_TOKEN_TYPE", "ID_JAG_TOKEN_TYPE",
    },
    "mcplite.http_server": {
        "HTTPServerThread", "HTTPRefusal", "IncomingRequest", "LOOPBACK_HOSTS", "EventStore", "InMemoryEventStore",
    },
    "mcplite.wsgi": {"SQLiteEventStore"},
    "mcplite.gateway": {"Gateway", "ConfigError", "GatewayConfig", "UpstreamConfig", "load_config", "parse_config"},
    "mcplite.recording": {"Recorder", "RecordingTransport", "read_recording", "redact", "RecordingError"},
    "mcplite.testing": {"assert_tool_succeeded", "assert_tool_failed", "assert_matches_output_schema",
                        "ClientCallbacks", "assert_asked"},
    "mcplite.replay": {"ReplayServer", "Exchange", "normalized", "differences"},
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


@pytest.mark.parametrize("path,names", sorted(DOCUMENTED_PATHS.items()))
def test_the_documented_import_paths_promise_their_listed_names(path, names):
    module = importlib.import_module(path)
    assert set(module.__all__) == names
    assert len(module.__all__) == len(names), "duplicates in __all__"
    assert all(getattr(module, name).__module__.startswith("mcplite.") for name in module.__all__
               if isinstance(getattr(module, name), type))


def test_mcplite_jose_presents_the_jose_module():
    """`mcplite.jose` is a documented path (the JWT examples of docs/auth.md) onto `mcplite.oauth.jose`."""
    module, target = importlib.import_module("mcplite.jose"), importlib.import_module("mcplite.oauth.jose")
    assert module.__all__ and list(module.__all__) == list(target.__all__)
    assert all(getattr(module, name) is getattr(target, name) for name in module.__all__)


def test_an_unknown_name_is_an_attribute_error_naming_it():
    import mcplite

    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        mcplite.Nope  # noqa: B018
