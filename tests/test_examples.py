"""The examples that run on their own, run as a user would: ``python3 -m examples.NAME`` from the root."""

import os
import subprocess
import sys

from support import WAIT

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_example(name: str) -> str:
    completed = subprocess.run([sys.executable, "-m", f"examples.{name}"], cwd=ROOT, capture_output=True,
                               text=True, timeout=WAIT * 3)
    assert completed.returncode == 0, completed.stderr
    return completed.stdout


def test_sampling_tools_example_plans_with_the_tool_result() -> None:
    assert run_example("sampling_tools").strip() == "It will be snow, -3 °C: visit the museums, then a sauna."


def test_demo_client_talks_to_the_demo_server_over_stdio() -> None:
    lines = run_example("demo_client").splitlines()
    assert 'add(2, 3): {"result": 5}' in lines
    assert 'count_to(3): "counted to 3"' in lines
    assert lines.count('  progress: [2, 3, "counted 2"]') == 1
    assert 'greeting://Ada: "Hello, Ada!"' in lines


def test_envelope_client_example_answers_two_rounds_and_hears_a_list_change() -> None:
    assert run_example("envelope_client").splitlines() == [
        "protocol: 2026-07-28",
        "  asked: Delete everything in /tmp/old?",
        "  asked: Sure? This cannot be undone.",
        "result: Deleted /tmp/old.",
        "heard: notifications/tools/list_changed",
        "stream ended: local",
    ]
