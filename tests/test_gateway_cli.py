"""``python3 -m mcplite gateway``: --check's table and exit status, serving over stdio, and its upstreams ending
with it."""

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from typing import Any

from support import ROOT, WAIT, wait_until
from support.servers import pid_running

from mcplite import Client, RemoteError


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


def test_a_killed_upstream_fails_its_call_cleanly_comes_back_and_the_gateway_lives_on(tmp_path: Any) -> None:
    """The gateway as a process (`python3 -m mcplite gateway`), its upstream SIGKILLed while a call is in flight
    and again between calls: the call in flight answers an error naming the upstream (no hang), the front hears
    its tools withdrawn (list_changed), the upstream is started again by itself and its tools come back."""
    path = tmp_path / "gw.json"
    pid_file = tmp_path / "pid"
    script = (f"import os, runpy; open({str(pid_file)!r}, 'w').write(str(os.getpid())); "
              "runpy.run_module('examples.everything_server', run_name='__main__')")
    path.write_text(json.dumps({"mcpServers": {
        "ev": {"command": sys.executable, "args": ["-c", script], "cwd": str(ROOT), "tools": {"allow": ["add", "slow_*"]}},
        "demo": {"command": sys.executable, "args": ["-m", "examples.demo_server"], "cwd": str(ROOT)}}}))
    changed: "queue.Queue[str]" = queue.Queue()

    def upstream_pid(other_than: int = 0) -> int:
        return wait_until(lambda: pid_file.exists() and pid_file.read_text().isdigit()
                          and int(pid_file.read_text()) != other_than and int(pid_file.read_text()),
                          message="the upstream did not (re)start")

    def tools_changed() -> None:
        while changed.get(timeout=WAIT) != "tools":  # (its prompts and resources change too)
            pass

    def kill(pid: int) -> None:
        while not changed.empty():  # what came before: the next change is the one this kill makes
            changed.get_nowait()
        os.kill(pid, signal.SIGKILL)

    def adds() -> Any:
        try:
            return client.call_tool("ev_add", {"a": 2, "b": 2}).get("structuredContent")
        except RemoteError:  # withdrawn: an unknown tool for now
            return None

    def comes_back(killed: int) -> int:
        tools_changed()  # its tools were withdrawn (and maybe added again already)
        started = upstream_pid(other_than=killed)
        assert wait_until(adds, message="the upstream's tools did not come back") == {"result": 4}
        assert "ev_add" in {tool["name"] for tool in client.list_tools()}
        return started

    with Client.stdio([sys.executable, "-m", "mcplite", "gateway", str(path)], cwd=str(ROOT), timeout=WAIT,
                      on_list_changed=changed.put) as client:
        gateway_process = client.transport.process  # type: ignore[attr-defined]
        assert client.call_tool("ev_add", {"a": 1, "b": 2})["structuredContent"] == {"result": 3}
        first = upstream_pid()
        # 1. Killed while a call is in flight.
        running = threading.Event()
        pending = client.start_tool_call("ev_slow_compute", {"seconds": WAIT * 4},
                                         progress=lambda *report: running.set())
        assert running.wait(WAIT), "the slow call did not start upstream"
        kill(first)
        result = client.finish_tool_call("ev_slow_compute", pending, timeout=WAIT)
        assert result.get("isError") is True and "upstream 'ev'" in result["content"][0]["text"], result
        assert client.call_tool("demo_add", {"a": 1, "b": 1})["structuredContent"] == {"result": 2}  # the others serve
        second = comes_back(first)
        # 2. Killed between calls.
        kill(second)
        third = comes_back(second)
        assert gateway_process.poll() is None  # the gateway never died
    assert gateway_process.wait(WAIT) == 0
    wait_until(lambda: not pid_running(third), message="the upstream outlived the gateway")
    assert not pid_running(first) and not pid_running(second)


def test_record_writes_the_front_and_every_upstream_with_secrets_redacted(tmp_path: Any) -> None:
    from mcplite.recording import read_recording

    path = tmp_path / "gw.json"
    recording = tmp_path / "gateway.jsonl"
    demo = {"command": sys.executable, "args": ["-m", "examples.demo_server"], "cwd": str(ROOT)}
    path.write_text(json.dumps({"mcpServers": {"demo": demo}}))
    with Client.stdio([sys.executable, "-m", "mcplite", "gateway", str(path), "--record", str(recording)],
                      cwd=str(ROOT)) as client:
        client.call_tool("demo_add", {"a": 2, "b": 5, "password": "hunter2"}, raise_on_error=False)  # a secret
        assert client.call_tool("demo_add", {"a": 2, "b": 5})["structuredContent"] == {"result": 7}
        gateway_process = client.transport.process  # type: ignore[attr-defined]
    assert gateway_process.wait(WAIT) == 0
    assert os.stat(recording).st_mode & 0o777 == 0o600
    header = json.loads(recording.read_text().splitlines()[0])
    assert header["info"] == {"gateway": {"upstreams": ["demo"]}}
    entries = list(read_recording(str(recording)))
    peers = {(entry["peer"], entry["dir"]) for entry in entries}
    assert {("client", "recv"), ("client", "send"), ("demo", "send"), ("demo", "recv")} <= peers
    calls = [entry["message"] for entry in entries if entry["dir"] == "send" and entry["peer"] == "demo"
             and isinstance(entry["message"], dict) and entry["message"].get("method") == "tools/call"]
    assert [call["params"]["name"] for call in calls][-1] == "add"  # the upstream's own name, not the front's
    assert "hunter2" not in recording.read_text()
    times = [entry["t"] for entry in entries]
    assert times == sorted(times)
