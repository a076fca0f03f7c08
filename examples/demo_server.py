"""A small MCP server: two tools, a resource, a resource template and a prompt.

Serve it over stdio:   python3 -m examples.demo_server
Talk to it:            python3 -m examples.demo_client
"""

import platform

from mcplite import Context, Server

server = Server("demo", version="1.0.0", instructions="Arithmetic and greetings, for trying mcplite out.")


@server.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool
def count_to(n: int, ctx: Context) -> str:
    """Count to n, reporting progress and logging each step."""
    for i in range(1, n + 1):
        ctx.progress(i, n, message=f"counted {i}")
        ctx.info(f"step {i} of {n}")
    return f"counted to {n}"


@server.resource("demo://python-version", mime_type="text/plain")
def python_version() -> str:
    """The Python version the server runs on."""
    return platform.python_version()


@server.resource("greeting://{name}")
def greeting(name: str) -> str:
    """A greeting for anyone."""
    return f"Hello, {name}!"


@server.prompt
def review(code: str, language: str = "python") -> str:
    """Ask for a code review."""
    return f"Please review this {language} code:\n\n{code}"


if __name__ == "__main__":
    server.run()
