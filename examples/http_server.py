"""A small MCP server over HTTP (Streamable HTTP at /mcp, plus the legacy HTTP+SSE endpoint at /sse).

    python3 -m examples.http_server                        # http://127.0.0.1:8000/mcp
    python3 -m examples.http_server 127.0.0.1:9000 --stateless
    python3 -m examples.http_server 0.0.0.0:8000 --allow-host myhost.lan   # on the network: name the host

The same server as a WSGI application (`app` below), for gunicorn with several worker processes:

    gunicorn --workers 4 --bind 127.0.0.1:8000 examples.http_server:app
"""

import argparse

from mcplite import Context, Server

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


#: For WSGI servers. Stateless, since worker processes share no memory; sampling needs sessions. A WSGI app
#: cannot know its address, so it names the Host values it accepts: here the loopback names, for the bind
#: above; list your public names for another (or "*" behind a proxy that checks Host).
app = server.wsgi_app(stateless=True, allowed_hosts=["localhost", "127.0.0.1"])

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("address", nargs="?", default="127.0.0.1:8000", help="host:port to listen on")
    parser.add_argument("--stateless", action="store_true", help="no sessions (for several processes)")
    parser.add_argument("--allow-host", action="append", dest="allowed_hosts", metavar="HOST",
                        help="a Host name clients use (required beyond loopback; '*' for any)")
    options = parser.parse_args()
    server.run(http=options.address, stateless=options.stateless, allowed_hosts=options.allowed_hosts)
