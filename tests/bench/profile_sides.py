"""Instructions per ``tools/call`` on each side, client and server, in each protocol era (valgrind's callgrind).

    python3 tests/bench/profile_sides.py [CALLS]

mcplite's `Client` calls mc_server.py's server on one thread: the client's transport hands each request's
bytes to the server session (served inline) and its answer's bytes back, so that callgrind can count each
side alone (``--toggle-collect``: the client's calls run inside ``itertools.starmap``, the server's work inside
``itertools.filterfalse``, whose C steps switch counting on and off). Both sides encode and decode as a stream
transport does. The counts do not move with the load of the machine: tests/bench/README.md records them.
"""

import collections
import itertools
import os
import re
import subprocess
import sys
from typing import Any, Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(os.path.dirname(HERE)), HERE]  # mcplite from this tree; mc_server

from mc_server import server  # noqa: E402

from mcplite import Client  # noqa: E402
from mcplite.protocol import jsonrpc  # noqa: E402
from mcplite.transports import MessageSink, Transport  # noqa: E402

ERAS = {"handshake": "2025-11-25", "modern": "2026-07-28"}
counting = False  # set once the warm-up is done


class ServerEnd(Transport):
    def __init__(self) -> None:
        self.sent: List[bytes] = []

    def start(self, sink: MessageSink) -> None:
        pass

    def send(self, message: Any, route: Any = None) -> None:
        self.sent.append(jsonrpc.encode_bytes(message) + b"\n")

    def close(self) -> None:
        pass


class Loop(Transport):
    """The client's end: each message served by a session of ``server`` inline, its answers delivered at once."""

    def __init__(self) -> None:
        self.server_end = ServerEnd()
        self.session = server.create_session(self.server_end)
        self.session.start()
        self.sink: Optional[MessageSink] = None

    def start(self, sink: MessageSink) -> None:
        self.sink = sink

    def serve(self, data: bytes) -> bool:
        self.session.receive(jsonrpc.decode(data), inline=True)
        return True

    def send(self, message: Any, route: Any = None) -> None:
        data = jsonrpc.encode_bytes(message) + b"\n"
        if counting:
            collections.deque(itertools.filterfalse(self.serve, (data,)), maxlen=0)
        else:
            self.serve(data)
        sent, self.server_end.sent = self.server_end.sent, []
        assert self.sink is not None
        for answer in sent:
            self.sink.receive(jsonrpc.decode(answer))

    def close(self) -> None:
        sink, self.sink = self.sink, None
        if sink is not None:
            sink.connection_lost(None)


def one(side: str, era: str, count: int) -> None:
    """``count`` calls of ``era`` after a warm-up, the counted side's work toggled on (see the docstring)."""
    global counting
    client = Client(Loop(), protocol_version=ERAS[era]).connect()

    def call(i: int) -> None:
        result = client.call_tool("add", {"a": i, "b": 1})
        assert result["structuredContent"]["result"] == i + 1, result

    for i in range(200):
        call(i)
    counting = True
    if side == "client":
        collections.deque(itertools.starmap(call, ((i,) for i in range(count))), maxlen=0)
    else:
        for i in range(count):
            call(i)
    client.close()


def instructions(side: str, era: str, count: int) -> float:
    toggles = ["--toggle-collect=filterfalse_next"] + (["--toggle-collect=starmap_next"] if side == "client" else [])
    command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", "--collect-atstart=no", *toggles,
               sys.executable, os.path.abspath(__file__), "--one", side, era, str(count)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=1800,
                          env={**os.environ, "PYTHONHASHSEED": "0"})
    found = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"profile_sides: callgrind failed ({done.returncode}): {done.stderr[-2000:]}")
    return int(found.group(1)) / count


def main(argv: List[str]) -> int:
    if argv[:1] == ["--one"]:
        one(argv[1], argv[2], int(argv[3]))
        return 0
    count = int(argv[0]) if argv else 500
    for side in ("server", "client"):
        per_call: Dict[str, float] = {era: instructions(side, era, count) for era in ERAS}
        print(f"{side}: " + ", ".join(f"{era} {value:,.0f}" for era, value in per_call.items())
              + f" instructions/call; modern {per_call['modern'] / per_call['handshake']:.3f}x", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
