"""mcplite's client against the official reference server, ``@modelcontextprotocol/server-everything``.

run.py calls `run` after the SDK pairs. It installs the pinned server (npm) under ``.peers/everything``,
a folder of its own so that the server runs on the SDK its own dependencies choose, whatever run.py's
TypeScript pin is. Then, over stdio (the client spawns the server), Streamable HTTP (``/mcp``) and the
legacy HTTP+SSE transport (``/sse``; the server is started here on a free port, in a process group of its
own that is killed afterwards), everything_client.py makes the checks listed in everything.json, and
each outcome is added to run.py's tally.

Environment:
    INTEROP_EVERYTHING_VERSION  the ``@modelcontextprotocol/server-everything`` version to install
                                (default: EVERYTHING_VERSION below).
"""

import json
import os
import shutil
import sys
from typing import Dict, List, Optional, Tuple

import run as interop  # run.py's helpers (when run.py is the main script, this is a second copy of it)

#: The server-everything version this suite was last run and passed with.
EVERYTHING_VERSION = "2026.8.31"
PACKAGE = "@modelcontextprotocol/server-everything"
PEER = os.path.join(interop.PEERS, "everything")
PACKAGE_DIR = os.path.join(PEER, "node_modules", "@modelcontextprotocol", "server-everything")
CLIENT = os.path.join(interop.HERE, "everything_client.py")
#: The server's first argument for each transport.
MODES = {"stdio": "stdio", "streamable-http": "streamableHttp", "sse": "sse"}
with open(os.path.join(interop.HERE, "everything.json"), encoding="utf-8") as _file:
    PLAN: Dict[str, List[str]] = json.load(_file)


def install(version: str) -> Tuple[Optional[str], str]:
    """Make .peers/everything hold ``PACKAGE@version``. Returns (error or None, what was done)."""
    return interop.install_npm(PACKAGE, version, PEER, "everything-install.log")


def sides() -> Tuple[interop.Side, interop.Side]:
    """(our side with everything_client.py as its client, the reference server), for run.py's `run_pair`."""
    ours = interop.sides()["mcplite"]._replace(client=[sys.executable, CLIENT])
    node = shutil.which("node") or "node"
    index = os.path.join(PACKAGE_DIR, "dist", "index.js")
    # No client of its own; it reads its port from the environment only.
    server = interop.Side("everything", [], [node, index, MODES["stdio"]],
                          lambda transport, port: ["env", f"PORT={port}", node, index, MODES[transport]])
    return ours, server


def checks(transport: str) -> List[str]:
    """What everything_client.py reports over ``transport``, in order."""
    return PLAN["checks"] + (PLAN["httpChecks"] if transport != "stdio" else [])


def run(tally: "interop.Tally") -> None:
    """Install the reference server, run our client against it over every transport, record every check."""
    version = os.environ.get("INTEROP_EVERYTHING_VERSION") or EVERYTHING_VERSION
    error, done = install(version)
    sdk = interop.installed_npm_version(PEER, "@modelcontextprotocol/sdk")
    tally.record(error is None, f"install server-everything {PACKAGE}@{version}",
                 error or f"{done} (on @modelcontextprotocol/sdk {sdk})")
    if error is not None:
        return
    client, server = sides()
    for transport in interop.TRANSPORTS:
        interop.run_pair(tally, transport, client, server, checks(transport))
