"""The benchmark's workloads run by the official Python SDK's client (``mcp.Client``, its defaults), on
anyio as the SDK is; see workload.py for the command line. Run by .peers/py/bin/python.

``py_client.py --mode MODE WORKLOAD...`` passes ``mode=MODE`` to ``mcp.Client`` (``legacy``: the initialize
handshake; ``2026-07-28``: that revision only; the default, ``auto``, probes ``server/discover`` first), as
the revision table does against mcplite's server."""

import os
import sys
import time
from contextlib import AsyncExitStack
from typing import Any, Awaitable, Callable, Dict, List

import anyio
import workload
from mcp import Client, StdioServerParameters

Call = Callable[[int], Awaitable[None]]


def caller(client: Client) -> Call:
    async def call(i: int) -> None:
        a, b = workload.operands(i)
        result = await client.call_tool("add", {"a": a, "b": b})
        text = getattr(result.content[0], "text", None) if result.content else None
        workload.check(i, result.structured_content, text, bool(result.is_error))
    return call


async def sequential(call: Call, count: int) -> Dict[str, Any]:
    for i in range(min(workload.WARMUP, count)):
        await call(workload.WARMUP_BASE + i)
    latencies: List[float] = []
    clock = time.perf_counter
    started = clock()
    for i in range(count):
        before = clock()
        await call(i)
        latencies.append(clock() - before)
    return workload.figures(latencies, clock() - started)


async def concurrent(calls: List[Call], per_caller: int) -> Dict[str, Any]:
    """The asyncio counterpart of `workload.threaded`: one task per caller, all started together."""
    latencies: List[float] = []
    clock = time.perf_counter

    async def run(k: int) -> None:
        for i in range(k * per_caller, (k + 1) * per_caller):
            before = clock()
            await calls[k](i)
            latencies.append(clock() - before)

    started = clock()
    async with anyio.create_task_group() as tasks:
        for k in range(len(calls)):
            tasks.start_soon(run, k)
    return workload.figures(latencies, clock() - started)


async def main() -> None:
    argv = sys.argv[1:]
    options: Dict[str, Any] = {}
    if argv[:1] == ["--mode"]:
        options["mode"], argv = argv[1], argv[2:]
    args = workload.parse(argv)
    if args.mode == "http":
        async with Client(args.url, **options) as client:
            result = await sequential(caller(client), args.sequential)
            version = client.protocol_version
        async with AsyncExitStack() as stack:
            clients = [await stack.enter_async_context(Client(args.url, **options)) for _ in range(args.clients)]
            for client in clients:
                await caller(client)(workload.WARMUP_BASE)
            spread = await concurrent([caller(client) for client in clients], args.per_client)
        workload.emit(version=version, sequential=result, concurrent=spread)
        return
    server = StdioServerParameters(command=args.server[0], args=args.server[1:], env=dict(os.environ))
    async with Client(server, **options) as client:
        call = caller(client)
        if args.mode == "cold":
            await call(0)
        elif args.mode == "hold":
            await call(0)
            await anyio.to_thread.run_sync(workload.hold, client.protocol_version)
        else:
            result = await sequential(call, args.sequential)
            in_flight = await concurrent([call] * workload.WINDOW, args.in_flight // workload.WINDOW)
            workload.emit(version=client.protocol_version, sequential=result, in_flight=in_flight)


if __name__ == "__main__":
    anyio.run(main)
