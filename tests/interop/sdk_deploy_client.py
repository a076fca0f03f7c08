"""The official Python SDK's client (PyPI ``mcp`` 2.x) driving a deployment of examples/deploy/app.py; run by
the SDK's venv (.peers/py/bin/python), as a subprocess of tests/test_deploy_sdk.py. Prints one JSON line.

    sdk_deploy_client.py calls URL MODE CLIENTS PER_CLIENT
        CLIENTS clients (one ``mcp.Client`` each, all connected at once, one task each) call ``whoami``
        PER_CLIENT times each: {"versions": [...], "ok": N, "failed": N, "errors": [...], "pids": [...]}.
        A call fails on an exception, an error result or an answer that is not a process id; a client that
        cannot connect fails all its calls. Every call is counted: one failure does not stop the others.
    sdk_deploy_client.py rounds URL MODE CALLS
        One client calls ``confirm_and_summarize`` CALLS times, its elicitation and sampling callbacks answering
        the server's questions (on 2026-07-28: input-required rounds, retried by the SDK's driver):
        {"versions": [...], "results": [structuredContent...], "failed": N, "errors": [...]}.

MODE is the client's ``mode``: ``legacy`` (the initialize handshake), ``auto`` or a modern revision. Standard
library and the SDK only (mcplite is not importable in that venv).
"""

import json
import sys
from typing import Any, Dict, List

import anyio
import mcp_types as types
from mcp import Client

#: Seconds one request may wait for its answer.
READ_TIMEOUT = 30.0
#: How many error messages the tally keeps (the count has them all).
KEPT_ERRORS = 5


class Tally:
    def __init__(self) -> None:
        self.ok = 0
        self.failed = 0
        self.errors: List[str] = []
        self.versions: List[str] = []
        self.pids: List[int] = []

    def fail(self, count: int, why: str) -> None:
        self.failed += count
        if len(self.errors) < KEPT_ERRORS:
            self.errors.append(why[:300])


async def on_elicitation(context: Any, params: Any) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"ok": True})


async def on_sampling(context: Any, params: Any) -> types.CreateMessageResult:
    return types.CreateMessageResult(role="assistant", content=types.TextContent(type="text", text="short"),
                                     model="test")


def client(url: str, mode: str) -> Client:
    return Client(url, mode=mode, read_timeout_seconds=READ_TIMEOUT, elicitation_callback=on_elicitation,
                  sampling_callback=on_sampling)


async def calls(url: str, mode: str, clients: int, per_client: int) -> Dict[str, Any]:
    tally = Tally()

    async def one_client() -> None:
        done = 0
        try:
            async with client(url, mode) as connected:
                tally.versions.append(str(connected.protocol_version))
                for _ in range(per_client):
                    done += 1
                    try:
                        result = await connected.call_tool("whoami", {})
                        pid = (result.structured_content or {}).get("result")
                        if result.is_error or not isinstance(pid, int) or pid <= 0:
                            tally.fail(1, f"unexpected result: {result!r}")
                        else:
                            tally.ok += 1
                            tally.pids.append(pid)
                    except Exception as exc:
                        tally.fail(1, f"call: {exc!r}")
        except Exception as exc:  # connecting or closing failed: the calls not made failed too
            tally.fail(per_client - done, f"client: {exc!r}")

    async with anyio.create_task_group() as tasks:
        for _ in range(clients):
            tasks.start_soon(one_client)
    return {"versions": sorted(set(tally.versions)), "ok": tally.ok, "failed": tally.failed, "errors": tally.errors,
            "pids": sorted(set(tally.pids))}


async def rounds(url: str, mode: str, count: int) -> Dict[str, Any]:
    tally = Tally()
    results: List[Any] = []
    try:
        async with client(url, mode) as connected:
            tally.versions.append(str(connected.protocol_version))
            for index in range(count):
                try:
                    result = await connected.call_tool("confirm_and_summarize", {"topic": f"sdk {index}"})
                    if result.is_error:
                        tally.fail(1, f"error result: {result!r}")
                    else:
                        results.append(result.structured_content)
                except Exception as exc:
                    tally.fail(1, f"call: {exc!r}")
    except Exception as exc:
        tally.fail(count - len(results) - tally.failed, f"client: {exc!r}")
    return {"versions": tally.versions, "results": results, "failed": tally.failed, "errors": tally.errors}


def main(argv: List[str]) -> None:
    if argv[:1] == ["calls"] and len(argv) == 5:
        report = anyio.run(calls, argv[1], argv[2], int(argv[3]), int(argv[4]))
    elif argv[:1] == ["rounds"] and len(argv) == 4:
        report = anyio.run(rounds, argv[1], argv[2], int(argv[3]))
    else:
        sys.exit("usage: sdk_deploy_client.py calls URL MODE CLIENTS PER_CLIENT | rounds URL MODE CALLS")
    print(json.dumps(report), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
