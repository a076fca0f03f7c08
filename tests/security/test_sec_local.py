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
from mcplite.transports.stdio import INHERITED_ENV_VARS, StdioClientTransport, server_environment

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
    extra = {name for name in seen if name not in INHERITED_ENV_VARS and not name.startswith("LC_")}
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
    assert server_environment(source=source) == {"PATH": "/bin", "HOME": "/home/u", "LC_ALL": "C"}
    assert server_environment({"TOKEN": "mine"}, source=source)["TOKEN"] == "mine"
    assert server_environment(inherit_env=True, source=source) == source


def test_the_allow_list_itself() -> None:
    """The names users rely on (the SECURITY notes list them), and none that carries a credential."""
    assert set(INHERITED_ENV_VARS) >= {"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "TMPDIR", "LANG",
                                       "APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATHEXT",
                                       "PROCESSOR_ARCHITECTURE", "SYSTEMDRIVE", "SYSTEMROOT", "TEMP",
                                       "USERNAME", "USERPROFILE", "COMSPEC"}
    # (a measured run adds coverage's variables and PYTHONPATH in tests/conftest.py: not the product's list)
    product = [name for name in INHERITED_ENV_VARS if name not in ("PYTHONPATH", "COVERAGE_PROCESS_START",
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
