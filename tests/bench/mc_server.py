"""The benchmark's tool served by mcplite.

    python3 tests/bench/mc_server.py                              (stdio)
    python3 tests/bench/mc_server.py http PORT stateless|default  (Streamable HTTP on 127.0.0.1, /mcp)

``stateless`` is mcplite's stateless JSON-response mode; ``default`` its default (sessions, SSE allowed).
With ``BENCH_WORKERS=N`` (stateless only), the same server runs as a WSGI app (mc_wsgi.py) on gunicorn with N
sync worker processes, ``--preload`` (one requestState key for all): this program becomes gunicorn, so it must
run on a Python that has gunicorn (the bench runs it on its own Python, not the clean venv).
With ``MCPLITE_BENCH_ASYNC=1`` its tool is ``async def`` (what an async handler costs: run.py's mcplite-async).
With ``MCPLITE_BENCH_LEGACY_ONLY=1`` it serves the handshake revisions only, as a server that predates
2026-07-28 (what the probe of ``protocol_version="auto"`` costs is measured against it).
"""

import os
import sys

from mcplite import Server
from mcplite.protocol.versions import ENVELOPE_VERSIONS, HANDSHAKE_VERSIONS

legacy_only = os.environ.get("MCPLITE_BENCH_LEGACY_ONLY") == "1"
versions = HANDSHAKE_VERSIONS if legacy_only else ENVELOPE_VERSIONS + HANDSHAKE_VERSIONS
server = Server("bench-mcplite", supported_versions=versions)


if os.environ.get("MCPLITE_BENCH_ASYNC") == "1":  # the same tool written async def (run.py's mcplite-async)
    @server.tool
    async def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b
else:
    @server.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b


if __name__ == "__main__":
    if len(sys.argv) == 1:
        server.run()
    elif os.environ.get("BENCH_WORKERS"):
        if sys.argv[3] != "stateless":
            sys.exit("mc_server.py: BENCH_WORKERS is for the stateless mode only (sessions live in one process)")
        here = os.path.dirname(os.path.abspath(__file__))
        from gunicorn.config import KNOWN_SETTINGS

        # gunicorn 25+: without this, every instance shares ~/.gunicorn/gunicorn.ctl.
        control = ["--no-control-socket"] if any(s.name == "control_socket_disable" for s in KNOWN_SETTINGS) else []
        os.execv(sys.executable, [sys.executable, "-m", "gunicorn", "--workers", os.environ["BENCH_WORKERS"],
                                  "--preload", "--bind", f"127.0.0.1:{sys.argv[2]}", "--chdir", here,
                                  "--log-level", "warning", *control, "mc_wsgi:app"])
    else:
        stateless = sys.argv[3] == "stateless"
        server.run(http=f"127.0.0.1:{sys.argv[2]}", stateless=stateless, json_response=stateless)
