"""``python3 -m mcplite gateway``: --check's table and exit status, serving over stdio, and its upstreams ending
with it."""

import json
import subprocess
import sys
from typing import Any

from support import ROOT, WAIT, wait_until
from support.servers import pid_running

from mcplite import Client


def check(config: Any, tmp_path: Any) -> "subprocess.CompletedProcess[str]":
    path = tmp_path / "gw.json"
    path.write_text(json.dumps(config))
    return subprocess.run([sys.executable, "-m", "mcplite", "gateway", str(path), "--check"], cwd=ROOT,
                          capture_output=True, text=True, timeout=WAIT * 3)


def test_check_prints_a_row_per_upstream_and_exits_0_when_all_are_up(tmp_path: Any) -> None:
    done = check({"mcpServers": {"demo": {"command": sys.executable, "args": ["-m", "examples.demo_server"]}}},
                 tmp_path)
    assert done.returncode == 0, done.stderr
    header, row = done.stdout.splitlines()
    assert header.split() == ["NAME", "TRANSPORT", "REVISION", "TOOLS", "RESOURCES", "PROMPTS"]
    assert row.split() == ["demo", "stdio", "2026-07-28", "2", "2", "1"]


def test_check_exits_3_naming_the_upstream_that_failed_and_why(tmp_path: Any) -> None:
    done = check({"mcpServers": {
        "demo": {"command": sys.executable, "args": ["-m", "examples.demo_server"]},
        "broken": {"command": sys.executable, "args": ["-c", "import sys; sys.stderr.write('boom\\n'); sys.exit(1)"]},
    }}, tmp_path)
    assert done.returncode == 3
    broken = [line for line in done.stdout.splitlines() if line.startswith("broken")]
    assert broken and "error:" in broken[0] and "boom" in broken[0], done.stdout


def test_a_config_error_is_a_usage_error_naming_the_key(tmp_path: Any) -> None:
    done = check({"mcpServers": {"demo": {"command": "x", "timeout": -1}}}, tmp_path)
    assert done.returncode == 2 and "'timeout'" in done.stderr and "'demo'" in done.stderr


def test_the_gateway_serves_over_stdio_and_its_upstreams_end_with_it(tmp_path: Any) -> None:
    path = tmp_path / "gw.json"
    pid_file = tmp_path / "pid"
    # The upstream writes its pid, then serves the demo server.
    script = (f"import os, runpy; open({str(pid_file)!r}, 'w').write(str(os.getpid())); "
              "runpy.run_module('examples.demo_server', run_name='__main__')")
    path.write_text(json.dumps({"mcpServers": {"demo": {"command": sys.executable, "args": ["-c", script],
                                                        "cwd": str(ROOT)}}}))
    with Client.stdio([sys.executable, "-m", "mcplite", "gateway", str(path)], cwd=str(ROOT)) as client:
        assert client.call_tool("demo_add", {"a": 2, "b": 5})["structuredContent"] == {"result": 7}
        upstream_pid = int(pid_file.read_text())
        gateway_process = client.transport.process  # type: ignore[attr-defined]
    assert gateway_process.wait(WAIT) == 0
    wait_until(lambda: not pid_running(upstream_pid), message="the upstream outlived the gateway")
