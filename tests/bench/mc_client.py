"""The benchmark's workloads run by mcplite's client (see workload.py for the command line).

``MCPLITE_BENCH_PROTOCOL`` (default "auto", the client's own default) is the ``protocol_version`` it asks for.
"""

import os
import sys
from typing import Callable, List

import workload
from mcplite import Client


def caller(client: Client) -> Callable[[int], None]:
    def call(i: int) -> None:
        a, b = workload.operands(i)
        workload.check_wire(i, client.call_tool("add", {"a": a, "b": b}))  # type: ignore[arg-type]
    return call


def main() -> None:
    args = workload.parse(sys.argv[1:])
    version = os.environ.get("MCPLITE_BENCH_PROTOCOL", "auto")
    if args.mode == "http":
        with Client(args.url, protocol_version=version) as client:
            sequential = workload.sequential(caller(client), args.sequential)
            version = client.protocol_version
        clients: List[Client] = [Client(args.url, protocol_version=version).connect() for _ in range(args.clients)]
        try:
            for client in clients:
                caller(client)(workload.WARMUP_BASE)
            concurrent = workload.threaded([caller(client) for client in clients], args.per_client)
        finally:
            for client in clients:
                client.close()
        workload.emit(version=version, sequential=sequential, concurrent=concurrent)
        return
    # The whole environment, as py_client.py gives the official SDK's server (the bench puts mcplite on
    # PYTHONPATH, which a server started with the default allow-list would not see).
    with Client.stdio(args.server, protocol_version=version, inherit_env=True) as client:
        call = caller(client)
        if args.mode == "cold":
            call(0)
        elif args.mode == "hold":
            call(0)
            workload.hold(client.protocol_version)
        else:
            sequential = workload.sequential(call, args.sequential)
            in_flight = workload.threaded([call] * workload.WINDOW, args.in_flight // workload.WINDOW)
            workload.emit(version=client.protocol_version, sequential=sequential, in_flight=in_flight)


if __name__ == "__main__":
    main()
