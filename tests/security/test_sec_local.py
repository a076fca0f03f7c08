"""Safer defaults on the local machine: what a spawned stdio server inherits, the modes of the files mcplite
creates, and front matter that cannot escape as anything but FrontmatterError.

The environment tests start real server processes (a tool that reports the server's environment), through
`Client.stdio` and through the ``mcplite`` command line.
"""

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest

from mcplite import Client
from mcplite.transports import stdio
from mcplite.transports.stdio import StdioClientTransport

from support import ROOT, WAIT, text_of
from support.servers import harness_env_options

# ---- 1. the environment a spawned server inherits ------------------------------------------------------------------

ENV_SERVER = f"""\
import json, os, sys
sys.path.insert(0, {str(ROOT)!r})  # this checkout's mcplite: the server inherits no PYTHONPATH
from mcplite import Server

server = Server("env-reporter")


@server.tool
def environ() -> str:
    return json.dumps(dict(os.environ))


if __name__ == "__main__":
    server.run()
"""

SECRET = "MCPLITE_SEC_TEST_SECRET"  # stands for AWS_SECRET_ACCESS_KEY, GITHUB_TOKEN, MCPLITE_STATE_KEYS, ...


@pytest.fixture
def env_server(tmp_path: Path) -> List[str]:
    script = tmp_path / "env_server.py"
    script.write_text(ENV_SERVER, encoding="utf-8")
    return [sys.executable, str(script)]


@pytest.fixture
def parent_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Secrets in our environment, and an allowed variable of each kind (a name, a locale prefix)."""
    monkeypatch.setenv(SECRET, "s3cr3t")
    monkeypatch.setenv("MCPLITE_STATE_KEYS", "00" * 32)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws-secret")
    monkeypatch.setenv("LANG", "C.UTF-8")
    monkeypatch.setenv("LC_MESSAGES", "C")
    monkeypatch.setenv("HOME", str(Path.home()))


def server_env(client: Client) -> Dict[str, str]:
    return json.loads(text_of(client.call_tool("environ", timeout=WAIT)))


@pytest.mark.usefixtures("parent_env")
def test_a_server_gets_the_allow_list_and_not_our_secrets(env_server: List[str]) -> None:
    with Client.stdio(env_server, timeout=WAIT) as client:
        seen = server_env(client)
    for name in (SECRET, "MCPLITE_STATE_KEYS", "AWS_SECRET_ACCESS_KEY"):
        assert name not in seen
    assert seen["HOME"] == str(Path.home()) and seen["PATH"] == os.environ["PATH"]
    assert seen["LANG"] == "C.UTF-8" and seen["LC_MESSAGES"] == "C"
    # Nothing outside the allow-list (Python itself may add a variable or two on some platforms: none here).
    extra = {name for name in seen if name not in stdio.INHERITED_ENV_VARS and not name.startswith("LC_")}
    assert extra <= {"__CF_USER_TEXT_ENCODING"}, extra  # (macOS adds that one to every process)


@pytest.mark.usefixtures("parent_env")
def test_env_adds_to_the_allow_list_and_may_override_it(env_server: List[str]) -> None:
    with Client.stdio(env_server, env={"API_KEY": "for-this-server", "LANG": "en_US.UTF-8"}, timeout=WAIT) as client:
        seen = server_env(client)
    assert seen["API_KEY"] == "for-this-server" and seen["LANG"] == "en_US.UTF-8"
    assert SECRET not in seen and "PATH" in seen


@pytest.mark.usefixtures("parent_env")
def test_inherit_env_passes_everything(env_server: List[str]) -> None:
    with Client.stdio(env_server, inherit_env=True, env={"EXTRA": "1"}, timeout=WAIT) as client:
        seen = server_env(client)
    assert seen[SECRET] == "s3cr3t" and seen["AWS_SECRET_ACCESS_KEY"] == "aws-secret" and seen["EXTRA"] == "1"


@pytest.mark.usefixtures("parent_env")
def test_a_respawned_server_gets_the_same_environment() -> None:
    transport = StdioClientTransport([sys.executable, "-c", "pass"], env={"A": "1"})
    assert transport.restarted().identity == transport.identity
    assert SECRET not in dict(transport.identity[2]) and dict(transport.identity[2])["A"] == "1"


def test_server_environment_rules() -> None:
    source = {"PATH": "/bin", "HOME": "/home/u", "LC_ALL": "C", "LCX": "no", "TOKEN": "t",
              "SHELL": "() { echo pwned; }", "Path": "mixed case is another name on POSIX"}
    assert stdio.server_environment(source=source) == {"PATH": "/bin", "HOME": "/home/u", "LC_ALL": "C"}
    assert stdio.server_environment({"TOKEN": "mine"}, source=source)["TOKEN"] == "mine"
    assert stdio.server_environment(inherit_env=True, source=source) == source


def test_the_allow_list_itself() -> None:
    """The names users rely on (the SECURITY notes list them), and none that carries a credential."""
    assert set(stdio.INHERITED_ENV_VARS) >= {"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "TMPDIR", "LANG",
                                       "APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATHEXT",
                                       "PROCESSOR_ARCHITECTURE", "SYSTEMDRIVE", "SYSTEMROOT", "TEMP",
                                       "USERNAME", "USERPROFILE", "COMSPEC"}
    # (a measured run adds coverage's variables and PYTHONPATH in tests/conftest.py: not the product's list)
    product = [name for name in stdio.INHERITED_ENV_VARS if name not in ("PYTHONPATH", "COVERAGE_PROCESS_START",
                                                                  "COVERAGE_FILE")]
    for name in product:
        assert not any(word in name for word in ("KEY", "TOKEN", "SECRET", "PASS", "AUTH", "PROXY", "SSH"))
    assert stdio.INHERITED_ENV_PREFIXES == ("LC_",)


def cli(*argv: str) -> "subprocess.CompletedProcess[str]":
    return subprocess.run([sys.executable, "-m", "mcplite", *harness_env_options(argv), *argv], cwd=str(ROOT),
                          capture_output=True, text=True, timeout=WAIT * 2)


def cli_server_env(done: "subprocess.CompletedProcess[str]") -> Dict[str, str]:
    assert done.returncode == 0, done.stderr
    return json.loads(json.loads(done.stdout)["content"][0]["text"])


@pytest.mark.usefixtures("parent_env")
def test_the_command_line_gives_a_server_the_allow_list(env_server: List[str]) -> None:
    seen = cli_server_env(cli("--json", "-e", "API_KEY=k", "call", "environ", "--", *env_server))
    assert SECRET not in seen and "MCPLITE_STATE_KEYS" not in seen
    assert seen["API_KEY"] == "k" and seen["PATH"] == os.environ["PATH"]
    seen = cli_server_env(cli("--json", "--inherit-env", "call", "environ", "--", *env_server))
    assert seen[SECRET] == "s3cr3t"


@pytest.mark.usefixtures("parent_env")
def test_a_config_entry_env_adds_to_the_allow_list(env_server: List[str], tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"s": {"command": env_server[0], "args": env_server[1:],
                                                       "env": {"FROM_CONFIG": "yes"}}}}))
    seen = cli_server_env(cli("--json", "--config", str(config), "call", "environ"))
    assert seen["FROM_CONFIG"] == "yes" and SECRET not in seen


def test_inherit_env_is_for_a_server_command_only() -> None:
    done = cli("--inherit-env", "ping", "--", "http://127.0.0.1:9/mcp")
    assert done.returncode == 2 and "only apply to a server command" in done.stderr


# ---- 2. the files mcplite creates are its user's alone ---------------------------------------------------------------

posix_modes = pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX's")


@pytest.fixture
def umask_022():
    """The common umask, under which a file is created 0644 and a directory 0755 unless asked otherwise."""
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


def sqlite_files(directory: Path, name: str) -> List[Path]:
    """The database and the files SQLite keeps beside it (WAL mode: -wal and -shm)."""
    return sorted(path for path in directory.iterdir() if path.name.startswith(name))


@posix_modes
@pytest.mark.usefixtures("umask_022")
def test_the_sqlite_task_store_is_created_0600(tmp_path: Path) -> None:
    from mcplite.server.task_store_sqlite import SQLiteTaskStore

    # Kept open: its schema is written, so the -wal and -shm files exist until the last connection closes
    # (a store left to the garbage collector may close at once, and SQLite then removes them).
    store = SQLiteTaskStore(str(tmp_path / "tasks.db"))
    try:
        files = sqlite_files(tmp_path, "tasks.db")
        assert {path.name for path in files} >= {"tasks.db", "tasks.db-wal", "tasks.db-shm"}
        assert {path.name: mode(path) for path in files} == {path.name: 0o600 for path in files}
    finally:
        store.close()


@posix_modes
@pytest.mark.usefixtures("umask_022")
def test_the_sqlite_event_store_is_created_0600(tmp_path: Path) -> None:
    from mcplite.transports.http_server.sqlitestore import SQLiteEventStore

    store = SQLiteEventStore(str(tmp_path / "events.db"))
    store.append("session", "stream", 1, "data: {}")
    files = sqlite_files(tmp_path, "events.db")
    assert {path.name for path in files} >= {"events.db", "events.db-wal", "events.db-shm"}
    assert {path.name: mode(path) for path in files} == {path.name: 0o600 for path in files}
    store.close()


@posix_modes
@pytest.mark.usefixtures("umask_022")
def test_the_token_file_is_0600_in_directories_made_0700(tmp_path: Path) -> None:
    from mcplite.oauth import FileTokenStorage
    from mcplite.oauth.records import Tokens

    path = tmp_path / "config" / "mcplite" / "tokens.json"
    FileTokenStorage(path).set_tokens("https://as.example", "https://rs.example/mcp", Tokens("access"))
    assert mode(path) == 0o600
    assert mode(path.parent) == 0o700 and mode(path.parent.parent) == 0o700  # every directory mcplite made
    assert [entry.name for entry in path.parent.iterdir()] == ["tokens.json"]  # no temporary file left


@posix_modes
@pytest.mark.usefixtures("umask_022")
def test_an_existing_file_or_directory_keeps_its_mode(tmp_path: Path) -> None:
    """A store shared on purpose (0640 for a group of services) is not quietly made 0600."""
    from mcplite.transports.http_server.sqlitestore import SQLiteEventStore

    shared = tmp_path / "shared"
    shared.mkdir(mode=0o750)
    database = shared / "events.db"
    database.touch(mode=0o640)
    os.chmod(shared, 0o750)
    os.chmod(database, 0o640)
    store = SQLiteEventStore(str(database))
    store.append("session", "stream", 1, "data: {}")
    store.close()
    assert mode(database) == 0o640 and mode(shared) == 0o750


@posix_modes
def test_the_mode_is_exact_whatever_the_umask(tmp_path: Path) -> None:
    """A umask that takes the owner's write bit must not leave an unwritable store; one of 0 no open one."""
    from mcplite._files import create_private_file, private_directories

    for umask in (0o000, 0o277):
        previous = os.umask(umask)
        try:
            directory = tmp_path / f"made-{umask:o}" / "deeper"
            private_directories(str(directory))
            assert create_private_file(str(directory / "file")) is True
            assert create_private_file(str(directory / "file")) is False  # there already: left alone
        finally:
            os.umask(previous)
        assert mode(directory / "file") == 0o600
        assert mode(directory) == 0o700 and mode(directory.parent) == 0o700


@posix_modes
def test_a_planted_symbolic_link_is_not_followed_to_create_a_file(tmp_path: Path) -> None:
    from mcplite._files import create_private_file

    target = tmp_path / "elsewhere"
    (tmp_path / "link").symlink_to(target)
    assert create_private_file(str(tmp_path / "link")) is False
    assert not target.exists()


def test_in_memory_and_unopenable_databases_behave_as_before(tmp_path: Path) -> None:
    import sqlite3

    from mcplite.server.task_store_sqlite import SQLiteTaskStore

    SQLiteTaskStore(":memory:")
    assert not (Path.cwd() / ":memory:").exists()
    with pytest.raises(sqlite3.OperationalError):
        SQLiteTaskStore(str(tmp_path / "no-such-directory" / "tasks.db"))


# ---- 3. front matter: FrontmatterError, whatever the text ------------------------------------------------------------

def nested(shape: str, depth: int) -> str:
    """Front matter with collections nested ``depth`` deep (the top mapping counts as one)."""
    inner = depth - 1
    if shape == "block-mapping":
        return "k:\n" + "".join(" " * (level + 1) + f"k{level}:\n" for level in range(inner - 1)) + \
            " " * inner + "leaf: v\n"
    if shape == "block-sequence":
        return "k:\n" + "".join(" " * (level + 1) + "-\n" for level in range(inner - 1)) + " " * inner + "- x\n"
    if shape == "compact-items":  # each "- k:" is two: a sequence and the mapping that is its item
        pairs, odd = divmod(inner - 1, 2)
        return "k:\n" + "".join(" " * (2 * level) + "- k:\n" for level in range(pairs)) + \
            " " * (2 * pairs) + ("- [v]\n" if odd else "- v\n")
    if shape == "flow-sequence":
        return "k: " + "[" * inner + "1" + "]" * inner + "\n"
    assert shape == "flow-mapping"
    return "k: " + "{a: " * inner + "1" + "}" * inner + "\n"


def depth_of(value: object) -> int:
    if isinstance(value, dict):
        return 1 + max((depth_of(item) for item in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((depth_of(item) for item in value), default=0)
    return 0


SHAPES = ["block-mapping", "block-sequence", "compact-items", "flow-sequence", "flow-mapping"]


@pytest.mark.parametrize("shape", SHAPES)
def test_deep_nesting_is_a_frontmatter_error_not_a_recursion_error(shape: str) -> None:
    from mcplite.protocol.frontmatter import MAX_DEPTH, FrontmatterError, load_yaml

    assert depth_of(load_yaml(nested(shape, MAX_DEPTH))) == MAX_DEPTH  # as deep as allowed: read
    for depth in (MAX_DEPTH + 1, 5_000):
        with pytest.raises(FrontmatterError, match=f"nested more than {MAX_DEPTH} deep"):
            load_yaml(nested(shape, depth))


def test_block_and_flow_nesting_count_together() -> None:
    from mcplite.protocol.frontmatter import MAX_DEPTH, FrontmatterError, load_yaml

    half = MAX_DEPTH // 2
    text = "".join(" " * level + f"k{level}:\n" for level in range(half)) + " " * half + "x: " + \
        "[" * half + "1" + "]" * half + "\n"
    with pytest.raises(FrontmatterError, match="nested more than"):
        load_yaml(text)


@pytest.mark.parametrize("text, words", [
    ('d: "\\U00110000"', "not a Unicode character"),
    ('d: "\\UFFFFFFFF"', "not a Unicode character"),  # was OverflowError
    ('d: "\\U99999999"', "not a Unicode character"),
    ('d: "\\ud800"', "not a Unicode character"),  # a lone surrogate: UnicodeEncodeError on the wire
    ('d: "\\udfff tail"', "not a Unicode character"),
    ("d: \ud800", "lone surrogate"),
    ("d: [a, \udc80]", "lone surrogate"),
    ("d: 1e999", "too large for a float"),  # was float('inf'), which JSON cannot carry
    ("d: [-1e400]", "too large for a float"),
    ("d: {[a]: 1}", "a flow collection as a key"),
    ("d: [[a]: 1]", "a flow collection as a key"),
    ("d: {a, a}", "duplicate key"),
])
def test_what_json_cannot_carry_is_a_frontmatter_error(text: str, words: str) -> None:
    from mcplite.protocol.frontmatter import FrontmatterError, load_yaml

    with pytest.raises(FrontmatterError, match=words):
        load_yaml(text)


def test_flow_keys_are_strings_as_written() -> None:
    from mcplite.protocol.frontmatter import load_yaml

    assert load_yaml("d: [: 3, ~: 4]\ne: {1: a, null: b, c}") == {"d": [{"": 3}, {"~": 4}],
                                                                    "e": {"1": "a", "null": "b", "c": None}}


def test_a_hostile_skill_md_from_a_server_fails_verification_cleanly() -> None:
    """A client checks the SKILL.md a server sends: deep nesting must not crash it with RecursionError."""
    from mcplite.protocol.skills import SkillVerificationError, digest, verify_skill_file

    data = ("---\nname: evil\ndescription: x\nk: " + "[" * 100_000 + "\n---\n").encode()
    entry = {"uri": "skill://evil/SKILL.md", "frontmatter": {"name": "evil", "description": "x"},
             "resources": [{"uri": "skill://evil/SKILL.md", "size": len(data), "digest": digest(data)}]}
    with pytest.raises(SkillVerificationError, match="nested more than"):
        verify_skill_file(entry, data)


def test_a_hostile_skill_md_on_disk_is_a_value_error(tmp_path: Path) -> None:
    from mcplite.server.skills import load_skill

    skill = tmp_path / "evil"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: evil\ndescription: x\n" +
                                    "".join(" " * level + f"k{level}:\n" for level in range(3_000)) + "---\n")
    with pytest.raises(ValueError, match="nested more than"):
        load_skill(str(skill), "evil")


def test_the_front_matter_fuzzer_finds_nothing_and_is_fast() -> None:
    import time

    from reliability.fuzz_frontmatter import run

    started = time.monotonic()
    run(seed=20260728, cases=2_500)
    assert time.monotonic() - started < WAIT  # about 2.5 s here; WAIT leaves room for a loaded machine


def test_the_front_matter_fuzzer_reports_a_failure_with_a_reproduce_line(monkeypatch: pytest.MonkeyPatch) -> None:
    import reliability.fuzz_frontmatter as fuzz

    def crashes(text: str) -> None:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(fuzz, "parse_frontmatter", crashes)
    with pytest.raises(AssertionError) as failure:
        fuzz.run(seed=7, cases=3)
    message = str(failure.value)
    assert "case 0 of seed 7: RecursionError" in message and "check(make_case(7, 0))" in message


@pytest.mark.parametrize("literal", ["0x" + "f" * 5000, "0o" + "7" * 6000])
def test_a_hex_or_octal_integer_too_long_for_json_is_a_frontmatter_error(literal: str) -> None:
    """int() reads hex and octal at any length; the value would then fail json.dumps (and str()) with the
    interpreter's digit limit, outside FrontmatterError."""
    from mcplite.protocol.frontmatter import FrontmatterError, load_yaml

    with pytest.raises(FrontmatterError, match="beyond 4300 digits"):
        load_yaml(f"name: x\nsize: {literal}\n")
    assert load_yaml("size: 0xff\n") == {"size": 255}
