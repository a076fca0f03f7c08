"""The official MCP Inspector's CLI (``@modelcontextprotocol/inspector``) against mcplite's server.

run.py calls `run` after server-everything. It installs the pinned Inspector (npm) under
``.peers/inspector``, then, over stdio (the CLI spawns examples/interop_server.py), Streamable HTTP
(``/mcp``) and the legacy HTTP+SSE transport (``/sse``; our server is started here on a free port, as for
the SDK pairs), runs one ``--cli --method ... --format json`` invocation per check in `CHECKS` and
verifies the result it prints with the contract's values and checks.py's ``verify_*`` functions. Each
outcome is one line of run.py's tally, named ``[TRANSPORT] inspector cli -> mcplite server: CHECK``; a
failure prints the tail of the CLI's stdout and stderr (and of the HTTP server's output).

The invocations of one transport run a few at a time (`PARALLEL`): each is a node process that spends
most of its second starting up. The Inspector keeps a catalog, OAuth state and secrets under
``~/.mcp-inspector`` (and in the OS keychain): each run gets a throwaway HOME with every one of those
paths pointed into it, an in-memory secret store, no browser, no interactive OAuth and no proxy, so the
suite writes nothing outside that directory and talks to nothing but 127.0.0.1.

Environment:
    INTEROP_INSPECTOR_VERSION  the ``@modelcontextprotocol/inspector`` version to install
                               (default: INSPECTOR_VERSION below).
"""

import json
import os
import shutil
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple

import checks
import run as interop  # run.py's helpers (when run.py is the main script, this is a second copy of it)

#: The Inspector version this suite was last run and passed with.
INSPECTOR_VERSION = "2.12.0"
PACKAGE = "@modelcontextprotocol/inspector"
PEER = os.path.join(interop.PEERS, "inspector")
PACKAGE_DIR = os.path.join(PEER, "node_modules", "@modelcontextprotocol", "inspector")
LAUNCHER = os.path.join(PACKAGE_DIR, "clients", "launcher", "build", "index.js")
#: The CLI's ``--transport`` for each of run.py's transports.
CLI_TRANSPORTS = {"streamable-http": "http", "sse": "sse"}
#: How many CLI processes run at once.
PARALLEL = 3
CONTRACT = checks.CONTRACT
#: Environment variables that would send the CLI's HTTP requests to a proxy instead of 127.0.0.1.
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


class Check(NamedTuple):
    """One CLI invocation: its name in the tally, the CLI options, and what must hold of the result.

    ``verify`` gets the result and the transport (what the CLI negotiates depends on it: `auto_versions`).
    """

    name: str
    options: List[str]
    verify: Callable[[Dict[str, Any], str], None]


def auto_versions(transport: str) -> List[str]:
    """The protocol versions ``--protocol-era auto`` may end on over ``transport``: 2026-07-28 where it
    exists (only it when run.py's EXPECT_MODERN is on), else the handshake's."""
    if transport not in interop.MODERN_TRANSPORTS:
        return [CONTRACT["protocolVersion"]]
    if interop.expect_modern():
        return [CONTRACT["modernProtocolVersion"]]
    return [CONTRACT["protocolVersion"], CONTRACT["modernProtocolVersion"]]


def tool_call(tool: str) -> List[str]:
    """``tools/call`` options with the contract's arguments (JSON values, which the CLI parses back)."""
    options = ["--method", "tools/call", "--tool-name", tool]
    for key, value in CONTRACT[tool]["arguments"].items():
        options += ["--tool-arg", f"{key}={json.dumps(value, ensure_ascii=False)}"]
    return options


def verify_countdown(result: Dict[str, Any], transport: str) -> None:
    checks.expect_equal(checks.text_of(result), CONTRACT["countdown"]["text"], "countdown result")


CHECKS = [
    Check("initialize", ["--method", "initialize"],
          lambda result, _: checks.verify_initialize(result.get("protocolVersion"), result.get("serverInfo"))),
    # The 2026 protocol era probes with server/discover first and falls back to initialize when refused.
    Check("initialize (protocol-era auto)", ["--method", "initialize", "--protocol-era", "auto"],
          lambda result, transport: checks.verify_initialize(result.get("protocolVersion"), result.get("serverInfo"),
                                                             auto_versions(transport))),
    Check("tools/list", ["--method", "tools/list"], lambda result, _: checks.verify_tools_list(result["tools"])),
    Check("tools/call add (structured)", tool_call("add"),
          lambda result, _: checks.verify_structured("add", result)),
    Check("tools/call echo (structured)", tool_call("echo"),
          lambda result, _: checks.verify_structured("echo", result)),
    # Its log notifications (the CLI sets the level to debug on connecting) come before the result.
    Check("tools/call countdown", tool_call("countdown"), verify_countdown),
    Check("resources/list", ["--method", "resources/list"],
          lambda result, _: checks.verify_resources_list(result["resources"])),
    Check("resources/read", ["--method", "resources/read", "--uri", CONTRACT["resource"]["uri"]],
          lambda result, _: checks.verify_read(result, CONTRACT["resource"]["uri"], CONTRACT["resource"]["text"])),
    Check("resources/templates/list", ["--method", "resources/templates/list"],
          lambda result, _: checks.verify_templates_list(result["resourceTemplates"])),
    Check("resources/read (template)", ["--method", "resources/read", "--uri", CONTRACT["template"]["uri"]],
          lambda result, _: checks.verify_read(result, CONTRACT["template"]["uri"], CONTRACT["template"]["text"])),
    Check("prompts/list", ["--method", "prompts/list"],
          lambda result, _: checks.verify_prompts_list(result["prompts"])),
    Check("prompts/get",
          ["--method", "prompts/get", "--prompt-name", CONTRACT["prompt"]["name"], "--prompt-args",
           *(f"{key}={value}" for key, value in CONTRACT["prompt"]["arguments"].items())],
          lambda result, _: checks.verify_prompt(result)),
    Check("logging/setLevel", ["--method", "logging/setLevel", "--log-level", "debug"],
          lambda result, _: checks.expect_equal(result, {}, "logging/setLevel result")),
]


def install(version: str) -> Tuple[Optional[str], str]:
    """Make .peers/inspector hold ``PACKAGE@version``. Returns (error or None, what was done)."""
    return interop.install_npm(PACKAGE, version, PEER, "inspector-install.log")


def cli_env(home: str) -> Dict[str, str]:
    """run.py's child environment, with every place the Inspector keeps state inside ``home``."""
    env = interop.child_env()
    for name in PROXY_VARIABLES:
        env.pop(name, None)
    storage = os.path.join(home, "storage")
    env.update(
        HOME=home,
        MCP_STORAGE_DIR=storage,
        MCP_INSPECTOR_OAUTH_STATE_PATH=os.path.join(storage, "oauth.json"),  # read before MCP_STORAGE_DIR
        MCP_CLIENT_CONFIG_PATH=os.path.join(storage, "client.json"),
        MCP_CATALOG_PATH=os.path.join(home, "mcp.json"),
        MCP_INSPECTOR_SECRET_STORE="memory",  # not the OS keychain, which HOME does not move
        MCP_INSPECTOR_SECRET_FILE=os.path.join(home, "secrets.json"),
        MCP_AUTO_OPEN_ENABLED="false",
        NO_COLOR="1",
    )
    return env


def outcome(check: Check, transport: str, code: Optional[int], out: str, err: str) -> Tuple[bool, str]:
    """Whether the CLI's run over ``transport`` passed ``check``, and why not."""
    if code != 0:
        ended = "timed out" if code is None else f"exited with {code}"
        envelope = err.strip().splitlines()[-1:] or [""]
        return False, f"the CLI {ended}: {envelope[0][:400]}"
    try:
        result = json.loads(out)["result"]
        check.verify(result, transport)
    except checks.CheckFailed as exc:
        return False, " ".join(str(exc).split())[:500]
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        return False, f"unexpected output ({type(exc).__name__}: {exc}): {' '.join(out.split())[:300]}"
    return True, ""


def run_transport(tally: "interop.Tally", transport: str, ours: "interop.Side", env: Dict[str, str]) -> None:
    label = f"[{transport}] inspector cli -> mcplite server"
    started = time.monotonic()
    cli = [shutil.which("node") or "node", LAUNCHER, "--cli"]
    try:
        with interop.serving(ours, transport) as target:
            if transport == "stdio":
                # The server command, then "--": the CLI's own options follow it (its flags start with "-").
                connect = [*target.args[1:], "--"]
            else:
                connect = ["--transport", CLI_TRANSPORTS[transport], "--server-url", target.args[0]]
            common = ["--format", "json", "--stored-auth-only"]
            with ThreadPoolExecutor(PARALLEL) as pool:
                argvs = [[*cli, *connect, *check.options, *common] for check in CHECKS]
                runs = list(pool.map(lambda argv: interop.run_client(argv, env), argvs))
            server_output = target.server_output()
    except interop.ServerDidNotStart as exc:
        for check in CHECKS:
            tally.record(False, f"{label}: {check.name}", str(exc)[:500])
        return
    failed = False
    for check, argv, (code, out, err) in zip(CHECKS, argvs, runs):
        ok, detail = outcome(check, transport, code, out, err)
        tally.record(ok, f"{label}: {check.name}", detail)
        if not ok:
            failed = True
            # For whoever reads the log: what the CLI printed (over stdio, the server's stderr is in its own).
            print(f"    cli | $ {' '.join(argv)}", flush=True)
            for source, text in (("cli stdout", out), ("cli stderr", err)):
                print("".join(f"    {source} | {line}\n" for line in text.strip().splitlines()[-20:]), end="",
                      flush=True)
    if failed and server_output.strip():
        print("".join(f"    server | {line}\n" for line in server_output.strip().splitlines()[-40:]), end="",
              flush=True)
    print(f"     {label}: {time.monotonic() - started:.1f} s", flush=True)


def run(tally: "interop.Tally") -> None:
    """Install the Inspector, run its CLI against our server over every transport, record every check."""
    version = os.environ.get("INTEROP_INSPECTOR_VERSION") or INSPECTOR_VERSION
    error, done = install(version)
    if error is None and not os.path.exists(LAUNCHER):
        error = f"{PACKAGE}@{version} has no {os.path.relpath(LAUNCHER, PACKAGE_DIR)}"
    tally.record(error is None, f"install inspector {PACKAGE}@{version}", error or done)
    if error is not None:
        return
    ours = interop.sides()["mcplite"]
    with tempfile.TemporaryDirectory(prefix="interop-inspector-") as home:
        env = cli_env(home)
        for transport in interop.TRANSPORTS:
            run_transport(tally, transport, ours, env)
