"""The gateway legs (issue 33): the official SDKs' clients through ONE mcplite gateway to six upstreams.

run.py calls `run` after the other legs. It writes one gateway configuration (`configuration`) whose upstreams
are, over stdio: the Python SDK 2.3.0's server (py_server.py), ``@modelcontextprotocol/server-everything``,
``mcp-server-time``, the TypeScript SDK 2.x's server (ts2_server.mjs), and mcplite's example servers pinned to
each era with examples/gateway/pinned_server.py (everything_server.py to the handshake, interop_server.py to
2026-07-28). py_server.py and ts2_server.mjs serve the contract's resources under a scheme each of their own
(``INTEROP_RESOURCE_SCHEME``): one URI cannot be served by two upstreams of one gateway.

Each front client spawns ``python3 -m mcplite gateway CONFIG`` over stdio and makes the checks of
gateway_plan.json: tools, resources and prompts of every upstream, an elicitation in each bridging direction
(a handshake front answering a 2026-07-28 upstream's input_required, a 2026-07-28 front answering a handshake
upstream's elicitation/create), progress from an upstream of each era, and one upstream killed between calls
(the next call to it is an error naming it, the others keep answering, it comes back). The fronts
(`fronts`): the Python SDK's client in its default mode (2026-07-28) and pinned to the handshake (legacy), and
the TypeScript SDK 2.x's client in the same two modes (gw_ts_client.mjs).
"""

import json
import os
import shutil
import sys
import tempfile
from typing import Any, Dict, List

import run as interop  # run.py's helpers (when run.py is the main script, this is a second copy of it)

with open(os.path.join(interop.HERE, "gateway_plan.json"), encoding="utf-8") as _file:
    PLAN: Dict[str, Any] = json.load(_file)
#: What a kill step reports, after its name (gw_py_client.py and gw_ts_client.mjs print these).
KILL_CHECKS = ("the next call is an error naming it", "the others keep working", "it comes back")


def check_names() -> List[str]:
    """The check lines a front client prints, in order."""
    names = ["initialize"]
    for step in PLAN["checks"]:
        names += [f"{step['name']} ({what})" for what in KILL_CHECKS] if step["op"] == "kill" else [step["name"]]
    return names


def configuration() -> Dict[str, Any]:
    """The gateway's configuration: the six upstreams of gateway_plan.json, each with its prefix."""
    node = shutil.which("node") or "node"
    python = interop.PY_PEER_PYTHON
    everything = os.path.join(interop.PEERS, "everything", "node_modules", "@modelcontextprotocol",
                              "server-everything", "dist", "index.js")
    ours = {"PYTHONPATH": interop.ROOT}

    def pinned(era: str, module: str) -> Dict[str, Any]:
        return {"command": sys.executable, "args": ["-m", "examples.gateway.pinned_server", era, module],
                "cwd": interop.ROOT, "env": ours}

    servers = {
        "py": {"command": python, "args": [os.path.join(interop.HERE, "py_server.py")],
               "env": {"INTEROP_RESOURCE_SCHEME": "pyinterop"}},
        "ev": {"command": node, "args": [everything, "stdio"]},
        "time": {"command": python, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]},
        "ts2": {"command": node, "args": [os.path.join(interop.HERE, "ts2_server.mjs")],
                "env": {"INTEROP_TS2_PEER": interop.TS2_PEER, "INTEROP_RESOURCE_SCHEME": "tsinterop"}},
        "hs": pinned("handshake", "examples.everything_server"),
        "env": pinned("envelope", "examples.interop_server"),
    }
    for name, server in servers.items():
        server["prefix"] = f"{name}_"
    return {"mcpServers": servers}


def fronts() -> List[interop.Side]:
    """The client legs, each spawning the gateway itself (its command comes after ``stdio --``)."""
    node = shutil.which("node") or "node"
    py = [interop.PY_PEER_PYTHON, os.path.join(interop.HERE, "gw_py_client.py")]
    ts2 = [node, os.path.join(interop.HERE, "gw_ts_client.mjs")]
    side = interop.Side("", [], [], lambda transport, port: [])
    return [side._replace(name="python-sdk (auto)", client=[*py, "--mode", "auto"], modern=True),
            side._replace(name="python-sdk (legacy)", client=[*py, "--mode", "legacy"]),
            side._replace(name="typescript-sdk-v2 (auto)", client=[*ts2, "--mode", "auto"], modern=True),
            side._replace(name="typescript-sdk-v2 (legacy)", client=[*ts2, "--mode", "legacy"])]


def install(tally: "interop.Tally", py_version: str) -> None:
    """Install the upstreams the other legs install (server-everything, mcp-server-time): for
    ``run.py gateway``, which runs these legs alone."""
    import everything
    import server_time

    version = os.environ.get("INTEROP_EVERYTHING_VERSION") or everything.EVERYTHING_VERSION
    error, done = everything.install(version)
    tally.record(error is None, f"install server-everything {everything.PACKAGE}@{version}", error or done)
    version = os.environ.get("INTEROP_TIME_VERSION") or server_time.TIME_VERSION
    error, done = server_time.install(version, py_version)
    tally.record(error is None, f"install mcp-server-time mcp-server-time=={version}", error or done)


def run(tally: "interop.Tally", peers: List[str]) -> None:
    """Every front through one gateway configuration; needs the Python SDK, both TypeScript SDKs' folders,
    server-everything and mcp-server-time installed (run.py installs them before)."""
    missing = [peer for peer in ("python-sdk", "typescript-sdk-v2") if peer not in peers]
    if missing:
        tally.skip("gateway legs", f"{', '.join(missing)} not installed")
        return
    with tempfile.TemporaryDirectory(prefix="mcplite-gateway-interop-") as scratch:
        config = os.path.join(scratch, "gateway.json")
        with open(config, "w", encoding="utf-8") as out:
            json.dump(configuration(), out, indent=2)
        gateway = interop.Side("mcplite gateway", [], [sys.executable, "-m", "mcplite", "gateway", config],
                               lambda transport, port: [])
        for front in fronts():
            interop.run_pair(tally, "stdio", front, gateway, check_names())
