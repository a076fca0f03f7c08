"""mcplite's client (auto) against the reference time server, PyPI ``mcp-server-time``, over stdio.

run.py calls `run` after the SDK pairs. The server is installed into the Python SDK's venv (``.peers/py``) next
to ``mcp``, pinned (`TIME_VERSION`; its own pin, ``mcp>=2.3,<3``, takes the SDK run.py installs, and the install
names that ``mcp`` version so that pip never moves it). time_client.py spawns ``python -m mcp_server_time
--local-timezone UTC``, lists the tools, calls ``get_current_time`` and ``convert_time`` and checks the answers
(see there); each outcome goes into run.py's tally. The server serves both eras, so with `run.EXPECT_MODERN` the
leg must negotiate 2026-07-28.

Environment:
    INTEROP_TIME_VERSION  the ``mcp-server-time`` version to install (default: TIME_VERSION below).
"""

import glob
import os
import sys
from typing import Optional, Tuple

import run as interop  # run.py's helpers (when run.py is the main script, this is a second copy of it)

#: The mcp-server-time version this suite was last run and passed with.
TIME_VERSION = "2026.10.19"
CLIENT = os.path.join(interop.HERE, "time_client.py")
#: The check names time_client.py reports, in order (its CHECKS: not imported, as that module imports mcplite,
#: which run.py's own process need not reach).
CHECKS = ["initialize", "tools/list", "tools/call get_current_time", "tools/call convert_time"]


def installed() -> Optional[str]:
    """The version of mcp-server-time in the peers' venv, from its dist-info."""
    pattern = os.path.join(interop.PY_PEER, "lib", "python3*", "site-packages", "mcp_server_time-*.dist-info")
    for dist_info in glob.glob(pattern):
        return os.path.basename(dist_info)[len("mcp_server_time-"):-len(".dist-info")]
    return None


def install(version: str, sdk_version: str) -> Tuple[Optional[str], str]:
    """Make the peers' venv hold ``mcp-server-time==version`` beside ``mcp==sdk_version``."""
    if installed() == version:
        return None, "already installed"
    error = interop.run_logged([interop.PY_PEER_PYTHON, "-m", "pip", "install", "--disable-pip-version-check", "-q",
                                f"mcp-server-time=={version}", f"mcp=={sdk_version}"],
                               os.path.join(interop.PEERS, "time-install.log"), interop.INSTALL_TIMEOUT)
    return error, "installed"


def run(tally: "interop.Tally", sdk_version: str) -> None:
    """Install the time server, run our client against it over stdio, record every check."""
    version = os.environ.get("INTEROP_TIME_VERSION") or TIME_VERSION
    error, done = install(version, sdk_version)
    tally.record(error is None, f"install mcp-server-time mcp-server-time=={version}", error or done)
    if error is not None:
        return
    modern = interop.expect_modern()
    expect = ["--expect", interop.MODERN_VERSION] if modern else []
    client = interop.sides()["mcplite"]._replace(name="mcplite (auto)", client=[sys.executable, CLIENT, *expect],
                                                 modern=True)
    server = interop.Side("mcp-server-time", [], [interop.PY_PEER_PYTHON, "-m", "mcp_server_time",
                                                  "--local-timezone", "UTC"], lambda transport, port: [])
    interop.run_pair(tally, "stdio", client, server, CHECKS)
