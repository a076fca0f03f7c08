"""The floor of any process in the middle: bytes copied both ways between stdio and mc_server.py, unparsed.

    python3 tests/bench/floor_proxy.py

run.py's floor-proxy column of the gateway table. What a gateway costs beyond this is its own work (parsing,
routing, bridging); this much any middle process costs on the machine: a third process on the same cores, and
two more pipe hops for every message. Its upstream is mc_server.py run by ``MCPLITE_BENCH_PYTHON`` with mcplite
from ``MCPLITE_BENCH_ROOT``, as the gateway's is (gateway.json). Standard library only: one thread per direction,
each a loop of ``os.read`` and ``os.write`` on the raw descriptors (no buffering, no decoding).
"""

import os
import subprocess
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))


def copy(source: int, target: int) -> None:
    """Copy until ``source`` ends, then close ``target`` (the other side sees the end too)."""
    try:
        while True:
            data = os.read(source, 65536)
            if not data:
                break
            view = memoryview(data)
            while view:
                view = view[os.write(target, view):]
    except OSError:
        pass
    finally:
        os.close(target)


def main() -> int:
    upstream = subprocess.Popen([os.environ["MCPLITE_BENCH_PYTHON"], os.path.join(HERE, "mc_server.py")],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                env={**os.environ, "PYTHONPATH": os.environ["MCPLITE_BENCH_ROOT"]})
    assert upstream.stdin is not None and upstream.stdout is not None
    down = threading.Thread(target=copy, args=(sys.stdin.fileno(), os.dup(upstream.stdin.fileno())), daemon=True)
    upstream.stdin.close()
    down.start()
    copy(os.dup(upstream.stdout.fileno()), sys.stdout.fileno())
    upstream.stdout.close()
    return upstream.wait()


if __name__ == "__main__":
    sys.exit(main())
