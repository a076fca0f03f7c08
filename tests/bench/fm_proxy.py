"""FastMCP's proxy in front of the benchmark's mcplite server, over stdio: run.py's fastmcp-proxy.

    .peers/fastmcp/bin/python tests/bench/fm_proxy.py

Serves stdio; its one upstream is mc_server.py run by ``MCPLITE_BENCH_PYTHON`` with mcplite from
``MCPLITE_BENCH_ROOT`` (the same upstream, and the same Python, as the gateway's in gateway.json). Made the way
FastMCP's documentation recommends, ``create_proxy`` of a stdio transport; FastMCP keeps the upstream process
alive between the sessions it opens to it (``keep_alive``, its default).
"""

import os

from fastmcp.client.transports import StdioTransport
from fastmcp.server import create_proxy

HERE = os.path.dirname(os.path.abspath(__file__))

upstream = StdioTransport(command=os.environ["MCPLITE_BENCH_PYTHON"], args=[os.path.join(HERE, "mc_server.py")],
                          env={"PYTHONPATH": os.environ["MCPLITE_BENCH_ROOT"]})
proxy = create_proxy(upstream, name="bench-fastmcp-proxy")

if __name__ == "__main__":
    proxy.run(show_banner=False)
