"""The pytest fixtures and the ``mcp_revisions`` marker: the one module of mcplite that imports pytest.

Only pytest loads it: `mcplite.testing.pytest_configure` registers it as a plugin. Every fixture here is a
factory, and closes or stops what it made when the test ends (whether the test passed or not), the last made
first:

* ``mcp_client(target, **options)``: a connected `Client`. ``target`` is a `Server` (in memory), a server
  file (``"server.py"``, run over stdio with this Python), a command (``["python3", "-m", "pkg"]``, stdio), an
  ``http(s)://`` URL, or what ``mcp_http_server`` returned. The revision is the test's ``mcp_revision``
  unless ``protocol_version=`` says otherwise; other options go to `Client` (``timeout``, ``sampling``...).
* ``mcp_server(name, **options)``: a fresh `Server` to register tools on, for tests of client code.
* ``mcp_http_server(server, address="127.0.0.1:0", **options)``: the server over HTTP in a background thread
  (`HTTPServerThread`, started); its ``.url`` is what a client connects to.
* ``mcp_revision``: the revision this run of the test speaks: one of the marker's, or "auto" without it.

``@pytest.mark.mcp_revisions("2025-11-25", "2026-07-28")`` (or ``"all"``) runs the test once per revision,
named by it (``test_add[2025-11-25]``); ``mcp_client`` connects in that revision.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, Callable, Iterator, List, Optional, Sequence

import pytest

if TYPE_CHECKING:
    from ..client import Client
    from ..http_server import HTTPServerThread
    from ..server import Server

__all__ = ["MARKER_HELP", "revisions_of", "mcp_revision", "mcp_client", "mcp_server", "mcp_http_server"]

MARKER_HELP = ("mcp_revisions(*revisions): run the test once per MCP revision (\"all\": every revision mcplite "
               "speaks); the mcp_client fixture connects in each (mcplite.testing)")

#: The marker's word for every revision mcplite speaks.
ALL = "all"


def revisions_of(args: Sequence[Any]) -> List[str]:
    """The revisions a marker's arguments name, checked: "all", or revisions mcplite speaks, at least one."""
    from ..protocol.versions import SUPPORTED_VERSIONS

    if not args:
        raise ValueError("@pytest.mark.mcp_revisions needs revisions, e.g. mcp_revisions(\"2025-11-25\") "
                                "or mcp_revisions(\"all\")")
    wanted: List[str] = []
    for arg in args:
        for revision in (SUPPORTED_VERSIONS if arg == ALL else [arg]):
            if revision not in SUPPORTED_VERSIONS:
                raise ValueError(f"@pytest.mark.mcp_revisions: {revision!r} is not a revision mcplite "
                                        f"speaks ({', '.join(SUPPORTED_VERSIONS)}, or \"all\")")
            if revision not in wanted:
                wanted.append(revision)
    return wanted


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """pytest's hook: a test marked ``mcp_revisions`` runs once per revision, as ``mcp_revision``'s value."""
    marker = metafunc.definition.get_closest_marker("mcp_revisions")
    if marker is None:
        return
    if "mcp_revision" not in metafunc.fixturenames:
        pytest.fail("@pytest.mark.mcp_revisions runs the test once per revision for the mcp_client fixture (or "
                    "mcp_revision), and this test uses neither", pytrace=False)
    try:
        revisions = revisions_of(marker.args)
    except ValueError as exc:
        pytest.fail(str(exc), pytrace=False)
    metafunc.parametrize("mcp_revision", revisions, indirect=True, ids=revisions)


@pytest.fixture
def mcp_revision(request: pytest.FixtureRequest) -> str:
    """The MCP revision this run of the test speaks: one of ``@pytest.mark.mcp_revisions``, else "auto" (the
    client asks the server and speaks the newest revision both know)."""
    return str(getattr(request, "param", "auto"))


@pytest.fixture
def mcp_server() -> Iterator[Callable[..., Server]]:
    """A factory of fresh `Server`s (``mcp_server("weather")``, options as `Server`'s) to register tools on,
    for tests of the code that calls them; each one's task pool is stopped when the test ends."""
    from ..server import Server

    made: List[Server] = []

    def make(name: str = "test-server", **options: Any) -> Server:
        server = Server(name, **options)
        made.append(server)
        return server

    yield make
    for server in reversed(made):
        server.close_tasks()


@pytest.fixture
def mcp_http_server() -> Iterator[Callable[..., HTTPServerThread]]:
    """A factory that serves a `Server` over HTTP in a background thread: ``mcp_http_server(server).url`` is
    the address to connect to (options as `HTTPServerThread`'s); each one is shut down when the test ends."""
    from ..http_server import HTTPServerThread

    started: List[HTTPServerThread] = []

    def serve(server: Server, address: str = "127.0.0.1:0", **options: Any) -> HTTPServerThread:
        http = HTTPServerThread(server, address, **options).start()
        started.append(http)
        return http

    yield serve
    for http in reversed(started):
        http.shutdown()


@pytest.fixture
def mcp_client(mcp_revision: str, mcp_http_server: Any, mcp_server: Any) -> Iterator[Callable[..., Client]]:
    """A factory of connected `Client`s, each closed when the test ends.

    ``mcp_client(target, protocol_version=None, **options)``: ``target`` is a `Server` (in memory), a server
    file (run over stdio with this Python), a command as a list (stdio), an ``http(s)://`` URL, or what
    ``mcp_http_server`` returned. The revision is the test's ``mcp_revision`` unless ``protocol_version``
    says otherwise. A stdio server gets this process's ``PYTHONPATH``, with this mcplite's folder first, so
    it imports the same mcplite as the test does.
    """
    # (It asks for the two other factories so that pytest sets them up first and stops their servers only
    # after these clients are closed.)
    from ..client import era

    era.forget_verdicts()  # a port an earlier test's server of another era used is a new server now
    made: List[Client] = []

    def connect(target: Any, *, protocol_version: Optional[str] = None, **options: Any) -> Client:
        client = _client_for(target, protocol_version or mcp_revision, options)
        client.connect()
        made.append(client)
        return client

    yield connect
    for client in reversed(made):
        client.close()


def _client_for(target: Any, protocol_version: str, options: Any) -> Client:
    from ..client import Client
    from ..server import Server

    if isinstance(target, Server):
        return Client(target, protocol_version=protocol_version, **options)
    url = getattr(target, "url", None)
    if isinstance(url, str):  # an HTTPServerThread
        return Client(url, protocol_version=protocol_version, **options)
    if isinstance(target, (str, os.PathLike)):
        text = os.fspath(target)
        if text.startswith(("http://", "https://")):
            return Client(text, protocol_version=protocol_version, **options)
        if os.path.isfile(text):
            return _stdio([sys.executable, text], protocol_version, options)
        raise ValueError(f"mcp_client: {text!r} is neither a URL nor a server file that exists")
    if isinstance(target, (list, tuple)) and target and all(isinstance(word, str) for word in target):
        return _stdio(list(target), protocol_version, options)
    raise TypeError(f"mcp_client: a Server, a server file, a command (a list), a URL or an HTTP server to "
                    f"connect to, not {type(target).__name__}")


def _stdio(argv: List[str], protocol_version: str, options: Any) -> Client:
    from ..client import Client

    if not options.get("inherit_env"):
        env = dict(options.pop("env", None) or {})
        here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # holds mcplite/
        env.setdefault("PYTHONPATH", os.pathsep.join(filter(None, [here, os.environ.get("PYTHONPATH")])))
        options["env"] = env
    return Client.stdio(argv, protocol_version=protocol_version, **options)
