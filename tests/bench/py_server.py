"""The benchmark's tool served by the official Python SDK (PyPI ``mcp`` 2.x, ``MCPServer``), run by .peers/py.

    .peers/py/bin/python tests/bench/py_server.py                              (stdio)
    .peers/py/bin/python tests/bench/py_server.py http PORT stateless|default  (Streamable HTTP, uvicorn)

``stateless`` is the SDK's ``stateless_http=True, json_response=True``; ``default`` its defaults (sessions,
SSE responses). Log level WARNING, so that neither the SDK nor uvicorn logs every request. With
``BENCH_WORKERS=N`` (stateless only), uvicorn runs the same server (py_asgi.py) in N worker processes.
"""

import os
import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("bench-python-sdk", log_level="WARNING")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


if __name__ == "__main__":
    if len(sys.argv) == 1:
        server.run("stdio")
    elif os.environ.get("BENCH_WORKERS"):
        if sys.argv[3] != "stateless":
            sys.exit("py_server.py: BENCH_WORKERS is for the stateless mode only (sessions live in one process)")
        here = os.path.dirname(os.path.abspath(__file__))
        # uvicorn's own command line, as users deploy it. (uvicorn.run("py_asgi:app", workers=N) called from
        # here started workers that died at once without a message, in a trial; the command line works.)
        os.execv(sys.executable, [sys.executable, "-m", "uvicorn", "--workers", os.environ["BENCH_WORKERS"],
                                  "--host", "127.0.0.1", "--port", sys.argv[2], "--app-dir", here,
                                  "--log-level", "warning", "py_asgi:app"])
    else:
        stateless = sys.argv[3] == "stateless"
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]), stateless_http=stateless,
                   json_response=stateless)
