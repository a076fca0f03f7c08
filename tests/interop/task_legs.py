"""Tasks across implementations (issue 17): the official TypeScript SDK's client drives tasks on our server, and
our CLI runs a task on the reference server.

run.py calls `run` after the SDK pairs (or alone: ``python3 tests/interop/run.py tasks``). Two legs, each
over stdio, Streamable HTTP and the legacy HTTP+SSE transport, every check one line of run.py's tally:

- typescript-sdk client -> mcplite everything server: ts_tasks_client.mjs, the 1.x SDK's experimental tasks API
  (``client.experimental.tasks.callToolStream``, 2025-11-25 core tasks) against examples/everything_server.py
  (the fixture with task tools; examples/interop_server.py, the contract's server, has none): a task goes
  working -> completed with its result, and a task's question (``input_required``) is answered by the SDK's
  elicitation handler (`TASK_CHECKS`).
- mcplite CLI -> server-everything: ``python -m mcplite call simulate-research-query topic=quantum -- SERVER``
  (the reference server as everything.py installs and starts it) runs the tool as a task to its report
  (`CLI_CHECKS`): the exit status, the report, and the task's statuses the CLI showed on stderr.
"""

import json
import re
import sys
from typing import Dict, List, Optional, Tuple

import everything
import run as interop  # run.py's helpers (when run.py is the main script, this is a second copy of it)

#: What ts_tasks_client.mjs reports, in order.
TASK_CHECKS = [
    "tasks capability and tools/list taskSupport",
    "callToolStream slow_compute working -> completed with its result",
    "callToolStream confirm_delete input_required -> elicitation answered -> completed",
    "tasks/get and tasks/list show both tasks completed",
]
#: What the CLI leg checks, in order.
CLI_CHECKS = ["exit status 0", "the research report as the result", "ran as a task: working -> completed"]
TOPIC = "quantum"
STATUS_LINE = re.compile(r"task (working|input_required|completed|failed|cancelled): ")


def our_task_server() -> interop.Side:
    """examples/everything_server.py: over stdio as a module, over HTTP with ``mcplite serve`` (/mcp and /sse)."""
    module = [sys.executable, "-m", "examples.everything_server"]
    return interop.Side("mcplite (everything_server.py)", [], module, lambda transport, port: [
        sys.executable, "-m", "mcplite", "serve", "--http", f"127.0.0.1:{port}", "examples/everything_server.py"])


def ts_tasks_client() -> interop.Side:
    node = interop.shutil.which("node") or "node"
    return interop.Side("typescript-sdk (tasks)", [node, interop.os.path.join(interop.HERE, "ts_tasks_client.mjs")],
                        [], lambda transport, port: [])


def cli_outcomes(code: Optional[int], out: str, err: str) -> Dict[str, Tuple[bool, str]]:
    """The CLI leg's checks from the CLI's exit status, its stdout (the CallToolResult as JSON) and stderr."""
    outcomes = {CLI_CHECKS[0]: (code == 0, "timed out" if code is None else f"exited with {code}")}
    try:
        result = json.loads(out)
        text = "".join(item.get("text", "") for item in result.get("content", []))
        ok = (text.startswith(f"# Research Report: {TOPIC}") and "Stage 4: Generating report" in text
              and not result.get("isError"))
        outcomes[CLI_CHECKS[1]] = (ok, f"{len(text)} characters, {text.splitlines()[0] if text else ''!r}")
    except (ValueError, AttributeError) as exc:
        outcomes[CLI_CHECKS[1]] = (False, f"not a CallToolResult ({exc}): {out[:200]!r}")
    # The CLI shows "task ID started", then "task STATUS: MESSAGE" on each poll that changed something.
    started = [line.split()[1] for line in err.splitlines() if re.fullmatch(r"task \S+ started", line.strip())]
    statuses = [found.group(1) for found in map(STATUS_LINE.match, err.splitlines()) if found]
    shown = " -> ".join(dict.fromkeys(statuses))  # each status once, in order
    outcomes[CLI_CHECKS[2]] = (len(started) == 1 and bool(statuses) and statuses[0] == "working"
                               and statuses[-1] == "completed",
                               f"task {started[0] if started else '(none started)'}: {shown} "
                               f"({len(statuses)} status lines)")
    return outcomes


def run_cli(tally: "interop.Tally", transport: str, server: interop.Side) -> None:
    label = f"[{transport}] mcplite CLI -> {server.name} server: call simulate-research-query"
    started = interop.time.monotonic()
    try:
        with interop.serving(server, transport) as target:
            args = target.args if transport == "stdio" else ["--", *target.args]
            code, out, err = interop.run_client([sys.executable, "-m", "mcplite", "call", "simulate-research-query",
                                                 f"topic={TOPIC}", *args])
            server_output = target.server_output()
    except interop.ServerDidNotStart as exc:
        for name in CLI_CHECKS:
            tally.record(False, f"{label}: {name}", str(exc)[:500])
        return
    outcomes = cli_outcomes(code, out, err)
    for name in CLI_CHECKS:
        ok, detail = outcomes[name]
        tally.record(ok, f"{label}: {name}", detail)
    if not all(ok for ok, _ in outcomes.values()):
        for source, text in (("cli", err), ("server", server_output)):
            print("".join(f"    {source} | {line}\n" for line in text.strip().splitlines()[-40:]), end="", flush=True)
    print(f"     {label}: {interop.time.monotonic() - started:.1f} s", flush=True)


def run(tally: "interop.Tally", peers: List[str]) -> None:
    """Both legs over every transport; the TypeScript one only if run.py installed the 1.x SDK (``peers``)."""
    for transport in interop.TRANSPORTS:
        if "typescript-sdk" in peers:
            interop.run_pair(tally, transport, ts_tasks_client(), our_task_server(), TASK_CHECKS)
        else:
            tally.skip(f"[{transport}] typescript-sdk (tasks) client -> mcplite server", "the 1.x SDK is not installed")
    version = interop.os.environ.get("INTEROP_EVERYTHING_VERSION") or everything.EVERYTHING_VERSION
    error, done = everything.install(version)
    if error is not None:
        tally.record(False, f"install server-everything {everything.PACKAGE}@{version} (for the CLI task leg)", error)
        return
    _, reference = everything.sides()
    for transport in interop.TRANSPORTS:
        run_cli(tally, transport, reference)
