"""Every example in README.md and docs/*.md runs as written, type-checks, and every command in them is spelled
``python3``; every relative link in them leads to a file, and to a heading where it names one.

docs/api.md is left out: it is generated from the docstrings (docs/gen_api.py) and has no examples to run.

Each ```python block is a complete program: imports included, no undefined names, nothing borrowed from the
block before it. An HTML comment on the line before a fence says how the block is run:

* no mark: ``python3 block.py`` in an empty directory (``PYTHONPATH`` is this tree), exit code 0;
* ``<!-- readme-test: server=NAME -->``: a stdio server; written as ``NAME.py``, started with
  ``Client.stdio``, and its ``tools/list`` must answer;
* ``<!-- readme-test: client-of=NAME -->``: run as above, with server NAME's block beside it as ``NAME.py``
  (the client starts it itself, e.g. ``Client.stdio(["python3", "server.py"])``); the server block is looked
  up in the same file;
* ``<!-- readme-test: pytest -->``: a pytest test file (``test_NAME.py``), run by pytest with mcplite's plugin
  (``-p mcplite.testing``: docs/testing.md); every test in it must pass. ``<!-- readme-test: pytest,
  client-of=NAME -->`` puts server NAME's block beside it as ``NAME.py``, which the tests import or start;
  words after ``pytest`` are options of the run (``<!-- readme-test: pytest --mcp-record=new -->``);
* ``<!-- readme-test: skip (reason) -->``: not run, for what needs a browser or a network beyond 127.0.0.1;
  the reason is shown as the skip's reason. It is still type-checked.

A failure names the block by its file, its line there and its first line.
"""

import importlib.util
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, NamedTuple, Optional, Set

import pytest

from mcplite import Client
from support import WAIT

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
#: The Markdown files whose examples run: the README and every page of docs/ but the generated reference.
DOCUMENTS = [README] + sorted(path for path in (ROOT / "docs").glob("*.md") if path.name != "api.md")

_FENCE = re.compile(r"^```(\w*)\s*$")
_MARK = re.compile(r"^<!--\s*readme-test:\s*(.*?)\s*-->$")
#: ``python`` run as a command: followed by an option, a script, or the end of a code span.
_BARE_PYTHON = re.compile(r"(?<![\w./-])python(?=\s+-|\s+\S+\.py\b|`)")
#: Seconds a block may run. A block starts Python once or twice (a client and the server it spawns); the
#: margin over WAIT is for a loaded machine, as tests/test_examples.py allows.
RUN_TIMEOUT = WAIT * 3


class Block(NamedTuple):
    lang: str
    line: int  # the line number in its file of the block's first line of code
    code: str
    mark: Optional[str]  # the readme-test mark before the fence, if any
    source: str = "README.md"  # the file, relative to the root

    @property
    def name(self) -> str:
        first = next((line for line in self.code.splitlines() if line.strip()), "")
        return f"{self.source} line {self.line} ({first.strip()[:60]!r})"

    @property
    def stem(self) -> str:
        """A name for the block's script, unique across the documents: ``readme_block_12``, ``servers_block_40``."""
        return f"{Path(self.source).stem.lower()}_block_{self.line}"


def fenced_blocks(text: str, source: str = "README.md") -> List[Block]:
    """The fenced code blocks of a Markdown text, with their language and readme-test mark."""
    blocks: List[Block] = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        match = _FENCE.match(lines[index])
        if not match:
            index += 1
            continue
        start = index
        index += 1
        while index < len(lines) and lines[index].rstrip() != "```":
            index += 1
        if index == len(lines):
            raise AssertionError(f"{source} line {start + 1}: a fence that is never closed")
        before = lines[start - 1].strip() if start else ""
        mark = _MARK.match(before)
        blocks.append(Block(match.group(1), start + 2, "\n".join(lines[start + 1:index]) + "\n",
                            mark.group(1) if mark else None, source))
        index += 1
    return blocks


def prose_and_commands(text: str) -> List[tuple]:
    """(line number, line) of every line outside ```python blocks: prose, indented and shell blocks."""
    kept = []
    in_python = False
    in_fence = False
    for number, line in enumerate(text.splitlines(), 1):
        match = _FENCE.match(line)
        if match and not in_fence:
            in_fence, in_python = True, match.group(1) == "python"
            continue
        if in_fence and line.rstrip() == "```":
            in_fence = in_python = False
            continue
        if not in_python:
            kept.append((number, line))
    return kept


def python_blocks(text: str, source: str = "README.md") -> List[Block]:
    return [block for block in fenced_blocks(text, source) if block.lang == "python"]


def servers_of(blocks: List[Block]) -> Dict[str, Block]:
    servers: Dict[str, Block] = {}
    for block in blocks:
        if block.mark and block.mark.startswith("server="):
            name = block.mark[len("server="):]
            assert name not in servers, f"{block.name}: a second server named {name!r}"
            servers[name] = block
    return servers


def environment() -> Dict[str, str]:
    """This tree first on PYTHONPATH (after it, what conftest put there for a measured run)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    # "python3" in a block is the Python running the tests, whatever PATH says.
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    return env


def vendor_mcplite(workdir: Path) -> None:
    """mcplite beside the scripts, as a vendored copy: the server a client block spawns inherits no PYTHONPATH
    (a server gets only the harmless part of its client's environment), so it finds mcplite there, as it would
    where mcplite is installed."""
    try:
        (workdir / "mcplite").symlink_to(ROOT / "mcplite", target_is_directory=True)
    except OSError:  # no symbolic links (Windows without the privilege): a copy does the same
        shutil.copytree(ROOT / "mcplite", workdir / "mcplite")


def run_block(block: Block, servers: Dict[str, Block], workdir: Path) -> None:
    """Run one block as its mark says; an AssertionError naming the block when it fails."""
    mark = block.mark or ""
    if mark.startswith("skip"):
        reason = mark[len("skip"):].strip().strip("()").strip()
        assert reason, f"{block.name}: a skip needs a reason: <!-- readme-test: skip (why) -->"
        pytest.skip(f"{block.name}: {reason}")
    if is_pytest_block(block):
        run_pytest_block(block, servers, workdir)
        return
    if mark.startswith("server="):
        script = workdir / f"{mark[len('server='):]}.py"
        script.write_text(block.code, encoding="utf-8")
        with Client.stdio([sys.executable, script.name], cwd=str(workdir), env=environment(),
                          timeout=WAIT) as client:
            assert client.list_tools(timeout=WAIT), f"{block.name}: the server lists no tools"
        return
    if mark.startswith("client-of="):
        name = mark[len("client-of="):]
        assert name in servers, f"{block.name}: no block is marked <!-- readme-test: server={name} -->"
        (workdir / f"{name}.py").write_text(servers[name].code, encoding="utf-8")
        vendor_mcplite(workdir)
    elif mark:
        raise AssertionError(f"{block.name}: unknown mark {mark!r}")
    script = workdir / f"{block.stem}.py"
    script.write_text(block.code, encoding="utf-8")
    try:
        completed = subprocess.run([sys.executable, script.name], cwd=str(workdir), env=environment(),
                                   stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                   timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"{block.name}: still running after {RUN_TIMEOUT} s\n"
                             f"stderr:\n{exc.stderr!r}") from None
    assert completed.returncode == 0, (f"{block.name} exited with {completed.returncode}\n"
                                       f"stdout:\n{completed.stdout}\nstderr:\n{completed.stderr}")


def is_pytest_block(block: Block) -> bool:
    return (block.mark or "").partition(",")[0].split()[:1] == ["pytest"]


def pytest_options_of(block: Block) -> List[str]:
    """The options a ``pytest`` block's run gets: the words after ``pytest`` in its mark, before any comma."""
    return (block.mark or "").partition(",")[0].split()[1:]


def server_of_pytest_block(block: Block) -> Optional[str]:
    """The server a ``pytest, client-of=NAME`` block imports or starts: NAME; None for a plain ``pytest``."""
    rest = (block.mark or "").partition(",")[2].strip()
    if not rest:
        return None
    assert rest.startswith("client-of="), f"{block.name}: unknown mark {block.mark!r}"
    return rest[len("client-of="):]


def run_pytest_block(block: Block, servers: Dict[str, Block], workdir: Path) -> None:
    """A pytest test file, run by pytest with mcplite's plugin; every test must pass (none collected fails)."""
    name = server_of_pytest_block(block)
    if name is not None:
        assert name in servers, f"{block.name}: no block is marked <!-- readme-test: server={name} -->"
        (workdir / f"{name}.py").write_text(servers[name].code, encoding="utf-8")
    script = workdir / f"test_{block.stem}.py"
    script.write_text(block.code, encoding="utf-8")
    # -p no:mcplite: where mcplite is installed its entry point loads the same plugin, which may not load twice.
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:mcplite", "-p", "mcplite.testing",
               "-p", "no:cacheprovider", *pytest_options_of(block), script.name]
    try:
        completed = subprocess.run(command, cwd=str(workdir), env=environment(), stdin=subprocess.DEVNULL,
                                   capture_output=True, text=True, timeout=RUN_TIMEOUT * 2)
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"{block.name}: pytest still running after {RUN_TIMEOUT * 2} s\n"
                             f"stdout:\n{exc.stdout!r}") from None
    assert completed.returncode == 0, (f"{block.name}: pytest exited with {completed.returncode}\n"
                                       f"stdout:\n{completed.stdout}\nstderr:\n{completed.stderr}")


def source_of(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


_TEXTS = {source_of(path): path.read_text(encoding="utf-8") for path in DOCUMENTS}
_BLOCKS_BY_FILE = {source: python_blocks(text, source) for source, text in _TEXTS.items()}
_BLOCKS = [block for blocks in _BLOCKS_BY_FILE.values() for block in blocks]
#: Each file's server blocks: a client-of mark names a server of its own file.
_SERVERS = {source: servers_of(blocks) for source, blocks in _BLOCKS_BY_FILE.items()}


def test_the_readme_and_the_docs_have_python_examples() -> None:
    assert len(_BLOCKS_BY_FILE["README.md"]) >= 2 and _SERVERS["README.md"]
    assert {"docs/servers.md", "docs/clients.md", "docs/http.md", "docs/auth.md"} <= set(_TEXTS)
    assert len(_BLOCKS) >= 10


@pytest.mark.parametrize("block", _BLOCKS, ids=[block.stem for block in _BLOCKS])
def test_python_block_runs(block: Block, tmp_path: Path) -> None:
    run_block(block, _SERVERS[block.source], tmp_path)


def test_every_client_block_names_a_server_of_its_own_file() -> None:
    for block in _BLOCKS:
        if block.mark and block.mark.startswith("client-of="):
            assert block.mark[len("client-of="):] in _SERVERS[block.source], f"{block.name}: no such server here"
        if is_pytest_block(block) and server_of_pytest_block(block) is not None:
            assert server_of_pytest_block(block) in _SERVERS[block.source], f"{block.name}: no such server here"


# ---- links --------------------------------------------------------------------------------------------

_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def outside_fences(text: str) -> List[tuple]:
    """(line number, line) of every line outside fenced blocks of any language."""
    kept, in_fence = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if _FENCE.match(line) and not in_fence:
            in_fence = True
        elif in_fence and line.rstrip() == "```":
            in_fence = False
        elif not in_fence:
            kept.append((number, line))
    return kept


def anchors(text: str) -> Set[str]:
    """The anchors GitHub makes of a Markdown text's headings: lower case, punctuation dropped, spaces to -."""
    found = set()
    for _, line in outside_fences(text):
        heading = re.match(r"^#{1,6}\s+(.*?)\s*$", line)
        if heading:
            found.add(re.sub(r"[^\w\- ]", "", heading.group(1).lower()).replace(" ", "-"))
    return found


def test_anchors_are_made_as_github_makes_them() -> None:
    assert anchors("# Over HTTP\n## Revision 2026-07-28, for server authors\n```\n# a comment\n```\n"
                   "### `ctx.elicit` and friends\n") == {
        "over-http", "revision-2026-07-28-for-server-authors", "ctxelicit-and-friends"}


def test_relative_links_lead_somewhere() -> None:
    broken = []
    for source, text in _TEXTS.items():
        here = (ROOT / source).parent
        for number, line in outside_fences(text):
            for target in _LINK.findall(line):
                if re.match(r"^[a-z]+:", target):  # https:, mailto:: not followed
                    continue
                path, _, fragment = target.partition("#")
                file = (here / path).resolve() if path else ROOT / source
                if not file.exists():
                    broken.append(f"{source} line {number}: {target}: no such file")
                elif fragment and file.suffix == ".md" and fragment not in anchors(file.read_text(encoding="utf-8")):
                    broken.append(f"{source} line {number}: {target}: no such heading")
    assert not broken, "\n".join(broken)


# ---- the runner itself fails, and names the block -----------------------------------------------------

_BROKEN = """\
Some text.

```python
print("fine")
```

<!-- readme-test: client-of=nowhere -->
```python
print("orphan")
```

```python
x = undefined_name
```
"""


def test_a_block_that_raises_fails_naming_its_line(tmp_path: Path) -> None:
    fine, orphan, broken = python_blocks(_BROKEN)
    run_block(fine, {}, tmp_path)
    with pytest.raises(AssertionError, match=r"README.md line 13 \('x = undefined_name'\) exited with 1"):
        run_block(broken, {}, tmp_path)
    with pytest.raises(AssertionError, match=r"line 9 .*server=nowhere"):
        run_block(orphan, {}, tmp_path)


def test_a_pytest_block_runs_its_tests_and_fails_naming_its_line(tmp_path: Path) -> None:
    passing, failing = python_blocks("<!-- readme-test: pytest -->\n```python\ndef test_ok() -> None:\n"
                                     "    assert True\n```\n\n<!-- readme-test: pytest -->\n```python\n"
                                     "def test_no() -> None:\n    assert False\n```\n")
    run_block(passing, {}, tmp_path)
    with pytest.raises(AssertionError, match=r"README.md line 9 \('def test_no\(\) -> None:'\): pytest exited with 1"):
        run_block(failing, {}, tmp_path)


def test_a_skip_without_a_reason_fails(tmp_path: Path) -> None:
    (block,) = python_blocks("<!-- readme-test: skip -->\n```python\npass\n```\n")
    with pytest.raises(AssertionError, match="a skip needs a reason"):
        run_block(block, {}, tmp_path)


def test_bare_python_is_found() -> None:
    found = [line for _, line in prose_and_commands(
        "    python -m mcplite info\n`python server.py`\n```python\nimport python\n```\n    python3 -m x\n"
        "Python 3.9 or newer, `python`\n")
        if _BARE_PYTHON.search(line)]
    assert found == ["    python -m mcplite info", "`python server.py`", "Python 3.9 or newer, `python`"]


# ---- commands -----------------------------------------------------------------------------------------


def test_commands_say_python3() -> None:
    bare = [f"{source} line {number}: {line.strip()}" for source, text in _TEXTS.items()
            for number, line in prose_and_commands(text) if _BARE_PYTHON.search(line)]
    assert not bare, "commands in README.md and docs/ should run python3, not python:\n" + "\n".join(bare)


def mcplite_commands(text: str) -> List[tuple]:
    """(line, words after "python3 -m mcplite") of each command line in a text, synopses left out."""
    commands = []
    for number, line in prose_and_commands(text):
        stripped = line.strip()
        if stripped.startswith("python3 -m mcplite ") and "[" not in stripped:
            commands.append((number, shlex.split(stripped, comments=True)[3:]))
    return commands


def test_mcplite_commands_parse() -> None:
    from mcplite.cli import build_parser, parse_arguments, split_target

    commands = [(f"{source} line {number}", words) for source, text in _TEXTS.items()
                for number, words in mcplite_commands(text)]
    assert len(commands) >= 8 and any(where.startswith("README.md") for where, _ in commands)
    for where, words in commands:
        if words in (["--version"], ["--help"]):  # they exit: run them, which is cheap
            completed = subprocess.run([sys.executable, "-m", "mcplite", *words], cwd=str(ROOT),
                                       env=environment(), capture_output=True, text=True, timeout=WAIT)
            assert completed.returncode == 0, f"{where}: {completed.stderr}"
            continue
        own, target = split_target(words)
        args = parse_arguments(build_parser(), own)  # raises UsageError on a wrong command line
        assert args.command, f"{where}: no command in {words}"
        if args.command == "inspect":  # a server after --, or as SERVER_FILE, or from --config
            assert (target is not None) + (args.server_file is not None) + (args.config is not None) == 1, where
            continue
        assert (target is not None) == (args.command not in ("serve", "gateway", "completion", "replay")), f"{where}: {words}"


# ---- type checks --------------------------------------------------------------------------------------


def _write_blocks(folder: Path) -> List[str]:
    """Each python block as a file of its own in ``folder``, named by its file and line; the names. The server a
    pytest block imports is written beside them under its own name (``NAME.py``), so that the import resolves."""
    files = []
    for block in _BLOCKS:
        path = folder / f"{block.stem}.py"
        path.write_text(block.code, encoding="utf-8")
        files.append(path.name)
        name = server_of_pytest_block(block) if is_pytest_block(block) else None
        if name is not None:
            (folder / f"{name}.py").write_text(_SERVERS[block.source][name].code, encoding="utf-8")
    return files


_SOURCE_OF_STEM = {Path(source).stem.lower(): source for source in _TEXTS}


def _in_readme_lines(report: str) -> str:
    """A checker's report with each block file's line turned into the line of its Markdown file."""
    return re.sub(r"(\w+?)_block_(\d+)\.py:(\d+)",
                  lambda m: f"{_SOURCE_OF_STEM.get(m.group(1), m.group(1))}:{int(m.group(2)) + int(m.group(3)) - 1}",
                  report)


def test_readme_python_blocks_type_check(tmp_path: Path) -> None:
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (CI installs mypy 2.4.1): the README's examples are not type-checked")
    files = _write_blocks(tmp_path)
    completed = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--ignore-missing-imports",
         "--cache-dir", str(tmp_path / ".mypy_cache"), "--no-error-summary", *files],
        cwd=str(tmp_path), env=dict(environment(), MYPYPATH=str(ROOT)), capture_output=True, text=True,
        timeout=WAIT * 18)  # a cold mypy run checks mcplite too: tens of seconds on a loaded machine
    report = _in_readme_lines(completed.stdout)
    assert completed.returncode == 0, f"mypy --strict on the examples:\n{report}{completed.stderr}"


def test_readme_python_blocks_pass_pyright(tmp_path: Path) -> None:
    pyright = shutil.which("pyright")
    if pyright is None:
        pytest.skip("pyright is not installed (CI installs pyright 1.1.414): the README's examples are not checked")
    files = _write_blocks(tmp_path)
    # The tree's mcplite, as a user who installed it would see it; the checker's default rules.
    (tmp_path / "pyrightconfig.json").write_text(json.dumps({"extraPaths": [str(ROOT)], "pythonVersion": "3.9"}))
    completed = subprocess.run([pyright, *files], cwd=str(tmp_path), env=environment(), capture_output=True,
                               text=True, timeout=WAIT * 18)
    report = _in_readme_lines(completed.stdout)
    assert completed.returncode == 0, f"pyright on the examples:\n{report}{completed.stderr}"
