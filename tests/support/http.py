"""HTTP servers in tests: `serving` (our `HTTPServerThread`), `ServerLoop` (a test's own socketserver), `Fixture`.

`serving` is the one harness that starts mcplite's HTTP server: on 127.0.0.1, a free port, stopped when the
block ends. `ServerLoop` runs the accept loop of a server a test writes itself (a scripted or broken server,
an authorization server, a proxy) so that stopping it is immediate: socketserver's ``serve_forever`` notices
``shutdown()`` only at its next poll, which cost every test that used one up to a poll interval.
"""

import contextlib
import selectors
import socket
import socketserver
import threading
from typing import Any, Dict, Iterator, Optional

from mcplite import Context, Server
from mcplite.http_server import HTTPServerThread
from mcplite.transports import RequestInfo

from .wait import WAIT


class Fixture:
    """A `Server` with tools that exercise the HTTP transports, and the gates its tests open."""

    def __init__(self) -> None:
        self.server = Server("http-test")
        self.gate = threading.Event()  # tools that wait for the test wait for this
        self.started = threading.Event()  # set by tools once they run
        server = self.server

        @server.tool
        def add(a: int, b: int) -> int:
            """Add two numbers."""
            return a + b

        @server.tool
        def chatty(ctx: Context) -> str:
            """Progress and a log message before the result."""
            ctx.progress(1, 2)
            ctx.info("halfway")
            return "done"

        @server.tool
        def ask_model(prompt: str, ctx: Context) -> str:
            """Sampling in the middle of a call."""
            return ctx.sample(prompt, max_tokens=10, timeout=WAIT)["content"]["text"]

        @server.tool
        def whoami(ctx: Context) -> str:
            return f"{ctx.client_info.get('name')}@{ctx.transport_info.get('session_id')}"

        @server.tool
        def claims(ctx: Context) -> Any:
            return ctx.transport_info.get("auth")

        @server.tool
        def request_info(ctx: Context) -> Dict[str, Any]:
            """What the handler knows of its HTTP request, read from the typed record."""
            info = ctx.request_info
            assert isinstance(info, RequestInfo)
            return {"session_id": info.session_id, "auth": info.auth, "accept": info.headers.get("accept"),
                    "same_as_dict": ctx.transport_info == {"headers": info.headers, "auth": info.auth,
                                                           "session_id": info.session_id,
                                                           "close_sse_stream": info.close_sse_stream},
                    "context_auth": ctx.auth}

        @server.tool
        def reconnect(ctx: Context, wait: bool = False) -> str:
            """Closes its own SSE stream after one event, like the conformance fixture's test_reconnection."""
            ctx.info("one")
            closed = ctx.transport_info["close_sse_stream"]()
            self.started.set()
            if wait:
                self.gate.wait(WAIT)
            ctx.info("two")
            ctx.info("three")
            return f"closed={closed}"

        @server.tool
        def gated(ctx: Context) -> str:
            """Sends one event, then waits for the test (or for cancellation)."""
            ctx.info("waiting")
            self.started.set()
            self.gate.wait(WAIT)
            ctx.info("after")
            return "released"

        @server.tool
        def silent_wait(ctx: Context) -> str:
            """Sends nothing and waits for cancellation (or the gate)."""
            self.started.set()
            while not ctx.cancelled.wait(0.01) and not self.gate.is_set():
                pass
            return "finished"


@contextlib.contextmanager
def serving(server: Any = None, **options: Any) -> Iterator[HTTPServerThread]:
    """Serve ``server`` (a `Server`, or a `Fixture`; a new `Fixture` if None) over HTTP on 127.0.0.1, a free
    port, for the duration of the block; ``options`` go to `HTTPServerThread`."""
    if server is None:
        server = Fixture()
    if isinstance(server, Fixture):
        server = server.server
    http = HTTPServerThread(server, "127.0.0.1:0", **options).start()
    try:
        yield http
    finally:
        http.shutdown()


class ServerLoop:
    """Runs a socketserver's accept loop in a daemon thread until `stop`, which wakes the loop at once.

    The loop waits on the listening socket and on a socket pair; `stop` writes to the pair. (``serve_forever``
    with ``shutdown()`` would instead wait for its next poll.)
    """

    def __init__(self, server: socketserver.BaseServer, name: Optional[str] = None) -> None:
        self.server = server
        # handle_request() is called only once the listening socket is readable: it must never wait itself.
        server.timeout = 0
        self._wake_reader, self._wake_writer = socket.socketpair()
        self._thread = threading.Thread(target=self._loop, name=name or f"{type(server).__name__}-loop", daemon=True)

    def start(self) -> "ServerLoop":
        self._thread.start()
        return self

    def _loop(self) -> None:
        with selectors.DefaultSelector() as selector:
            selector.register(self.server, selectors.EVENT_READ)
            selector.register(self._wake_reader, selectors.EVENT_READ)
            while True:
                ready = [key.fileobj for key, _ in selector.select()]
                if self._wake_reader in ready:
                    return
                self.server.handle_request()

    def stop(self, timeout: float = WAIT) -> None:
        """End the loop, wait (up to ``timeout`` s) for it, and close the server's socket."""
        if self._thread.ident is not None:
            self._wake_writer.send(b"\0")
            self._thread.join(timeout)
            assert not self._thread.is_alive(), f"{self._thread.name} did not stop within {timeout:g} s"
        self.server.server_close()
        self._wake_reader.close()
        self._wake_writer.close()

    def __enter__(self) -> "ServerLoop":
        return self.start()

    def __exit__(self, *exc_info: Any) -> None:
        self.stop()
