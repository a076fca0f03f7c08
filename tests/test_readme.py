"""Every example in README.md runs as written, type-checks, and every command in it is spelled ``python3``.

Each ```python block is a complete program: imports included, no undefined names, nothing borrowed from the
block before it. An HTML comment on the line before a fence says how the block is run:

* no mark: ``python3 block.py`` in an empty directory (``PYTHONPATH`` is this tree), exit code 0;
* ``<!-- readme-test: server=NAME -->``: a stdio server; written as ``NAME.py``, started with
  ``Client.stdio``, and its ``tools/list`` must answer;
* ``<!-- readme-test: client-of=NAME -->``: run as above, with server NAME's block beside it as ``NAME.py``
  (the client starts it itself, e.g. ``Client.stdio(["python3", "server.py"])``);
* ``<!-- readme-test: skip (reason) -->``: not run, for what needs a browser or a network beyond 127.0.0.1;
  the reason is shown as the skip's reason. It is still type-checked.

A failure names the block by its line in README.md and its first line.
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
from typing import Dict, List, NamedTuple, Optional

import pytest

from mcplite import Client
from support import WAIT

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"

_FENCE = re.compile(r"^```(\w*)\s*$")
_MARK = re.compile(r"^<!--\s*readme-test:\s*(.*?)\s*-->$")
#: ``python`` run as a command: followed by an option, a script, or the end of a code span.
_BARE_PYTHON = re.compile(r"(?<![\w./-])python(?=\s+-|\s+\S+\.py\b|`)")
#: Seconds a block may run. A block starts Python once or twice (a client and the server it spawns); the
#: margin over WAIT is for a loaded machine, as tests/test_examples.py allows.
RUN_TIMEOUT = WAIT * 3


class Block(NamedTuple):
    lang: str
    line: int  # the line number in README.md of the block's first line of code
    code: str
    mark: Optional[str]  # the readme-test mark before the fence, if any

    @property
    def name(self) -> str:
        first = next((line for line in self.code.splitlines() if line.strip()), "")
        return f"README.md line {self.line} ({first.strip()[:60]!r})"


def fenced_blocks(text: str) -> List[Block]:
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
            raise AssertionError(f"README.md line {start + 1}: a fence that is never closed")
        before = lines[start - 1].strip() if start else ""
        mark = _MARK.match(before)
        blocks.append(Block(match.group(1), start + 2, "\n".join(lines[start + 1:index]) + "\n",
                            mark.group(1) if mark else None))
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


def python_blocks(text: str) -> List[Block]:
    return [block for block in fenced_blocks(text) if block.lang == "python"]


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
    script = workdir / f"readme_block_{block.line}.py"
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


_TEXT = README.read_text(encoding="utf-8")
_BLOCKS = python_blocks(_TEXT)


def test_the_readme_has_python_examples() -> None:
    assert len(_BLOCKS) >= 5
    assert servers_of(_BLOCKS)


@pytest.mark.parametrize("block", _BLOCKS, ids=[f"line{block.line}" for block in _BLOCKS])
def test_readme_python_block_runs(block: Block, tmp_path: Path) -> None:
    run_block(block, servers_of(_BLOCKS), tmp_path)


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
    bare = [f"line {number}: {line.strip()}" for number, line in prose_and_commands(_TEXT)
            if _BARE_PYTHON.search(line)]
    assert not bare, "commands in README.md should run python3, not python:\n" + "\n".join(bare)


def mcplite_commands(text: str) -> List[tuple]:
    """(line, words after "python3 -m mcplite") of each command line in README.md, synopses left out."""
    commands = []
    for number, line in prose_and_commands(text):
        stripped = line.strip()
        if stripped.startswith("python3 -m mcplite ") and "[" not in stripped:
            commands.append((number, shlex.split(stripped, comments=True)[3:]))
    return commands


def test_mcplite_commands_parse() -> None:
    from mcplite.cli import build_parser, parse_arguments, split_target

    commands = mcplite_commands(_TEXT)
    assert len(commands) >= 8
    for number, words in commands:
        if words in (["--version"], ["--help"]):  # they exit: run them, which is cheap
            completed = subprocess.run([sys.executable, "-m", "mcplite", *words], cwd=str(ROOT),
                                       env=environment(), capture_output=True, text=True, timeout=WAIT)
            assert completed.returncode == 0, f"README.md line {number}: {completed.stderr}"
            continue
        own, target = split_target(words)
        args = parse_arguments(build_parser(), own)  # raises UsageError on a wrong command line
        assert args.command, f"README.md line {number}: no command in {words}"
        assert (target is not None) == (args.command != "serve"), f"README.md line {number}: {words}"


# ---- type checks --------------------------------------------------------------------------------------


def _write_blocks(folder: Path) -> List[str]:
    """Each python block as a file of its own in ``folder``, named by its README line; the names."""
    files = []
    for block in _BLOCKS:
        path = folder / f"readme_block_{block.line}.py"
        path.write_text(block.code, encoding="utf-8")
        files.append(path.name)
    return files


def _in_readme_lines(report: str) -> str:
    """A checker's report with each block file's line turned into the README's line."""
    return re.sub(r"readme_block_(\d+)\.py:(\d+)",
                  lambda m: f"README.md:{int(m.group(1)) + int(m.group(2)) - 1}", report)


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
    assert completed.returncode == 0, f"mypy --strict on the README's examples:\n{report}{completed.stderr}"


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
    assert completed.returncode == 0, f"pyright on the README's examples:\n{report}{completed.stderr}"
