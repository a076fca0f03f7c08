"""The deployments of examples/deploy/app.py driven by mcplite's client and by the official Python SDK's client
(PyPI ``mcp``, the interop suite's venv .peers/py; tests/interop/sdk_deploy_client.py, run as a subprocess):

- for each configuration of `CONFIGURATIONS` (gunicorn, one worker with threads, sessions at 2025-11-25;
  gunicorn ``-w 4`` stateless at 2026-07-28; waitress with threads, sessions at 2025-11-25), 1,000 calls across 8
  concurrent clients with none failed, once with mcplite's client and once with the SDK's;
- the SDK's client at 2026-07-28 answers input-required rounds (elicitation, then sampling) that are each taken
  by another gunicorn worker (``-w 4 --preload --max-requests 1``).

Without the SDK's venv the SDK's tests skip with the reason on a developer's machine and fail in CI (``CI``
set): ``.ci/run`` installs it (``tests/interop/run.py --install-python-sdk``) before the tests run.
"""

import glob
import json
import os
import subprocess
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, NamedTuple, Set

import pytest
from support import ROOT, WAIT, run_concurrently
from support.servers import Served, gunicorn, python_env, waitress

from mcplite import Client

APP = "examples.deploy.app:app"
CLIENTS, PER_CLIENT = 8, 125  # 1,000 calls
#: The whole run of 1,000 calls may take this long on a loaded two-core machine (a call takes milliseconds).
RUN_TIMEOUT = 12 * WAIT
SDK_VERSION = "2.3.0"
PEERS = Path(os.environ.get("INTEROP_PEERS_DIR") or ROOT / ".peers")
SDK_PYTHON = PEERS / "py" / "bin" / "python"
SDK_CLIENT = ROOT / "tests" / "interop" / "sdk_deploy_client.py"
#: The SDK's ``mode`` for each revision: the handshake era is its "legacy" mode.
SDK_MODE = {"2025-11-25": "legacy", "2026-07-28": "2026-07-28"}


class Configuration(NamedTuple):
    name: str
    start: Callable[[Path], Served]
    version: str  # the revision both clients are pinned to
    spread: bool  # whether the calls must reach more than one process


def gunicorn_threads(tmp: Path) -> Served:
    return gunicorn(tmp, APP, ["--threads", "24"])  # each session's GET stream holds a thread


def gunicorn_stateless(tmp: Path) -> Served:
    return gunicorn(tmp, APP, ["-w", "4", "--preload"], env=python_env(STATELESS="1"))


def waitress_threads(tmp: Path) -> Served:
    return waitress(tmp, APP, ["--threads=24"])  # 8 GET streams and 8 calls at once, with room to spare


CONFIGURATIONS = [
    Configuration("gunicorn-1-worker-threads-sessions", gunicorn_threads, "2025-11-25", False),
    Configuration("gunicorn-4-workers-stateless", gunicorn_stateless, "2026-07-28", True),
    Configuration("waitress-threads-sessions", waitress_threads, "2025-11-25", False),
]


def require_sdk() -> None:
    """Skip (fail in CI) unless the interop suite's venv holds the official Python SDK."""
    found = glob.glob(str(PEERS / "py" / "lib" / "python3*" / "site-packages" / "mcp-*.dist-info"))
    if SDK_PYTHON.exists() and found:
        return
    reason = (f"the official Python SDK (mcp {SDK_VERSION}) is not installed in {PEERS / 'py'} "
              f"(python3 tests/interop/run.py --install-python-sdk; .ci/run installs it)")
    if os.environ.get("CI"):
        pytest.fail(f"CI must have it: {reason}")
    pytest.skip(reason)


def run_sdk(*args: str) -> Dict[str, Any]:
    """Run the SDK's client program; the JSON tally it printed."""
    completed = subprocess.run([str(SDK_PYTHON), str(SDK_CLIENT), *args], capture_output=True, text=True,
                               timeout=RUN_TIMEOUT, stdin=subprocess.DEVNULL)
    assert completed.returncode == 0, completed.stderr[-3000:]
    lines = completed.stdout.strip().splitlines()
    assert lines, f"the SDK's client printed nothing:\n{completed.stderr[-3000:]}"
    report: Dict[str, Any] = json.loads(lines[-1])
    return report


@pytest.fixture(params=CONFIGURATIONS, ids=[configuration.name for configuration in CONFIGURATIONS])
def deployment(request: Any, tmp_path: Path) -> Iterator[Dict[str, Any]]:
    configuration: Configuration = request.param
    served = configuration.start(tmp_path)
    try:
        yield {"configuration": configuration, "served": served}
    finally:
        served.stop()


def test_a_thousand_calls_from_eight_mcplite_clients(deployment: Dict[str, Any]) -> None:
    configuration: Configuration = deployment["configuration"]
    served: Served = deployment["served"]

    def calls(_: int) -> List[int]:
        with Client(served.url, protocol_version=configuration.version, timeout=WAIT) as client:
            assert client.protocol_version == configuration.version
            return [client.call_tool("whoami")["structuredContent"]["result"] for _ in range(PER_CLIENT)]

    answers = [pid for pids in run_concurrently(calls, range(CLIENTS), timeout=RUN_TIMEOUT) for pid in pids]
    assert len(answers) == CLIENTS * PER_CLIENT and all(isinstance(pid, int) and pid > 0 for pid in answers)
    processes: Set[int] = set(answers)
    assert len(processes) >= 2 if configuration.spread else len(processes) == 1


def test_a_thousand_calls_from_eight_python_sdk_clients(deployment: Dict[str, Any]) -> None:
    require_sdk()
    configuration: Configuration = deployment["configuration"]
    served: Served = deployment["served"]
    tally = run_sdk("calls", served.url, SDK_MODE[configuration.version], str(CLIENTS), str(PER_CLIENT))
    assert tally["failed"] == 0, tally["errors"]
    assert tally["ok"] == CLIENTS * PER_CLIENT
    assert tally["versions"] == [configuration.version]
    assert len(tally["pids"]) >= 2 if configuration.spread else len(tally["pids"]) == 1


def test_python_sdk_answers_input_rounds_that_cross_workers(tmp_path: Path) -> None:
    require_sdk()
    # --max-requests 1: each worker is replaced after one request, so each round of a call reaches another
    # process than the round before (which worker the kernel picks is not ours to choose); --preload shares
    # the key that seals requestState.
    served = gunicorn(tmp_path, APP, ["-w", "4", "--preload", "--max-requests", "1"])
    try:
        report = run_sdk("rounds", served.url, "2026-07-28", "3")
    finally:
        served.stop()
    assert report["failed"] == 0, report["errors"]
    assert report["versions"] == ["2026-07-28"]
    results = report["results"]
    assert len(results) == 3 and all(result["summary"] == "short" for result in results)
    # Three rounds of each call (ask, sample, answer), each answered by a different process.
    assert all(len({result["asked_by"], result["sampled_by"], result["answered_by"]}) == 3 for result in results)
    assert "requestState" not in served.output()  # shared key: no warning
