"""A small MCP server over HTTP (Streamable HTTP at /mcp, plus the legacy HTTP+SSE endpoint at /sse).

    python3 -m examples.http_server                        # http://127.0.0.1:8000/mcp
    python3 -m examples.http_server 127.0.0.1:9000 --stateless

The same server as a WSGI application (`app` below), for gunicorn with several worker processes:

    gunicorn --workers 4 --bind 127.0.0.1:8000 examples.http_server:app
"""

import argparse

from mcplite import Context, Server
from mcplite.wsgi import wsgi_app

server = Server("http-demo", version="1.0.0")


@server.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool
def count_to(n: int, ctx: Context) -> str:
    """Count to n, reporting progress: the response becomes an SSE stream carrying each report."""
    for i in range(1, n + 1):
        ctx.progress(i, n)
    return f"counted to {n}"


@server.tool
def haiku(topic: str, ctx: Context) -> str:
    """Ask the client's model for a haiku (sampling, answered by the client in the middle of the call)."""
    return ctx.sample(f"Write a haiku about {topic}.", max_tokens=60)["content"]["text"]


#: For WSGI servers. Stateless, since worker processes share no memory; sampling needs sessions.
app = wsgi_app(server, stateless=True)

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("address", nargs="?", default="127.0.0.1:8000", help="host:port to listen on")
    parser.add_argument("--stateless", action="store_true", help="no sessions (for several processes)")
    options = parser.parse_args()
    server.run(http=options.address, stateless=options.stateless)
