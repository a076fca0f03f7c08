"""The benchmark's tool served by mcplite.

    python3 tests/bench/mc_server.py                              (stdio)
    python3 tests/bench/mc_server.py http PORT stateless|default  (Streamable HTTP on 127.0.0.1, /mcp)

``stateless`` is mcplite's stateless JSON-response mode; ``default`` its default (sessions, SSE allowed).
"""

import sys

from mcplite import Server

server = Server("bench-mcplite")


@server.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


if __name__ == "__main__":
    if len(sys.argv) == 1:
        server.run()
    else:
        stateless = sys.argv[3] == "stateless"
        server.run(http=f"127.0.0.1:{sys.argv[2]}", stateless=stateless, json_response=stateless)
