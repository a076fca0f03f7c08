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
* ``mcp_cassette(target, path=None, **options)``: a connected `Client` of a recording of ``target`` (a
  cassette, ``cassettes/<test module>/<test name>.jsonl`` beside the test file): recorded from ``target`` or
  replayed by a `ReplayServer`, as ``--mcp-record`` says (`RECORD_MODES`).

``@pytest.mark.mcp_revisions("2025-11-25", "2026-07-28")`` (or ``"all"``) runs the test once per revision,
named by it (``test_add[2025-11-25]``); ``mcp_client`` connects in that revision.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, Generator, Iterator, List, Optional, Sequence, Tuple, Union

import pytest

from ..errors import RPCError
from ..replay import Exchange, ReplayServer

if TYPE_CHECKING:
    from ..client import Client
    from ..http_server import HTTPServerThread
    from ..server import Server

__all__ = ["MARKER_HELP", "RECORD_MODES", "revisions_of", "mcp_revision", "mcp_client", "mcp_server",
           "mcp_http_server", "mcp_cassette", "CassetteReplay"]

MARKER_HELP = ("mcp_revisions(*revisions): run the test once per MCP revision (\"all\": every revision mcplite "
               "speaks); the mcp_client fixture connects in each (mcplite.testing)")

#: The marker's word for every revision mcplite speaks.
ALL = "all"

#: What ``--mcp-record`` may say, VCR's record modes: "none" (the default) replays every cassette, and a missing
#: one is an error; "new" records the cassettes that are missing and replays the others; "all" records every
#: cassette afresh (the file is rewritten).
RECORD_MODES = ("none", "new", "all")
#: The folder, beside the test file, that the cassettes are kept in (one folder per test module).
CASSETTES = "cassettes"
#: Where a test's call failed, so that its teardown does not report the same miss twice.
_CALL_FAILED = "_mcplite_call_failed"


def revisions_of(args: Sequence[Any]) -> List[str]:
    """The revisions a marker's arguments name, checked: "all", or revisions mcplite speaks, at least one."""
    from ..protocol.versions import ENVELOPE_VERSIONS, HANDSHAKE_VERSIONS

    every = (*ENVELOPE_VERSIONS, *HANDSHAKE_VERSIONS)  # both eras, newest first
    if not args:
        raise ValueError("@pytest.mark.mcp_revisions needs revisions, e.g. mcp_revisions(\"2025-11-25\") "
                                "or mcp_revisions(\"all\")")
    wanted: List[str] = []
    for arg in args:
        for revision in (every if arg == ALL else [arg]):
            if revision not in every:
                raise ValueError(f"@pytest.mark.mcp_revisions: {revision!r} is not a revision mcplite "
                                        f"speaks ({', '.join(every)}, or \"all\")")
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


# ---- cassettes: record once, then replay --------------------------------------------------------------------
class CassetteReplay(ReplayServer):
    """A `ReplayServer` whose refusals name the cassette and how to record it again, and keep each for the
    fixture's teardown (a test may catch the refusal; a cassette that no longer covers the test still fails)."""

    def __init__(self, cassette: Path, shown: str) -> None:
        super().__init__(cassette)
        self.shown = shown
        self.refusals: List[str] = []

    def find(self, method: str, params: Any) -> Exchange:
        try:
            return super().find(method, params)
        except RPCError as exc:
            self.refusals.append(exc.message)
            raise RPCError(exc.code, f"{exc.message} [cassette {self.shown}: the test asks what was not recorded; "
                                     f"record it again with --mcp-record=all]", exc.data) from None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: Any) -> Generator[None, Any, None]:
    """pytest's hook: note a test whose call failed (`mcp_cassette` reports its misses only if the test did not)."""
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" and report.failed:
        setattr(item, _CALL_FAILED, True)


@pytest.fixture
def mcp_cassette(request: pytest.FixtureRequest, mcp_revision: str,
                 mcp_client: Callable[..., Client]) -> Iterator[Callable[..., Client]]:
    """A factory of connected `Client`s of a recorded ``target``: recorded once, then replayed.

    ``mcp_cassette(target, path=None, *, protocol_version=None, **options)``: ``target`` and the options are
    ``mcp_client``'s. The cassette is ``path`` (relative to the test file's folder), by default
    ``cassettes/<test module>/<test name>.jsonl`` beside the test file (a second cassette of the same test:
    ``<test name>-2.jsonl``...); under ``@pytest.mark.mcp_revisions`` its name holds the revision, one cassette
    per revision. ``--mcp-record`` (`RECORD_MODES`) says whether to record it (a client of ``target`` with
    ``record=`` the cassette) or replay it (a client of a `ReplayServer` of it: ``target`` is not touched).
    A missing cassette under "none" fails the test, naming the file and the option. When the test ends, a
    request the cassette did not have fails it (at teardown, if the test did not fail on it already).
    """
    mode = str(request.config.getoption("mcp_record", "none"))
    test_file = Path(str(getattr(request.node, "path", None) or request.node.fspath))
    marked = request.node.get_closest_marker("mcp_revisions") is not None
    used: Dict[Path, int] = {}
    replays: List[Tuple[Client, CassetteReplay]] = []

    def connect(target: Any, path: Union[str, "os.PathLike[str]", None] = None, *,
                protocol_version: Optional[str] = None, **options: Any) -> Client:
        __tracebackhide__ = True
        cassette = _cassette_path(test_file, request.node.name, path, mcp_revision if marked else None, used)
        shown = _shown(cassette)
        if mode == "all" or (mode == "new" and not cassette.exists()):
            cassette.parent.mkdir(parents=True, exist_ok=True)
            options.setdefault("record_as", "server")  # (not the command: it holds this machine's paths)
            return mcp_client(target, protocol_version=protocol_version, record=str(cassette), **options)
        if not cassette.exists():
            pytest.fail(f"mcp_cassette: no cassette {shown}: record it with --mcp-record=new (records the "
                        f"missing cassettes) or --mcp-record=all (records every one afresh)", pytrace=False)
        from ..client import Client

        replay = CassetteReplay(cassette, shown)
        kept = set(_keyword_names(Client.__init__)) - {"record", "record_as"}  # not stdio's or HTTP's options
        client = Client(replay, protocol_version=protocol_version or mcp_revision,
                        **{name: value for name, value in options.items() if name in kept})
        replays.append((client, replay))
        client.connect()
        return client

    yield connect
    failed = getattr(request.node, _CALL_FAILED, False)
    for client, replay in reversed(replays):
        client.close()
        if replay.refusals and not failed:
            listed = "\n".join(f"  {number}. {refusal}" for number, refusal in enumerate(replay.refusals, 1))
            pytest.fail(f"mcp_cassette: {len(replay.refusals)} request(s) not in the cassette {replay.shown} "
                        f"(record it again with --mcp-record=all):\n{listed}", pytrace=False)


def _keyword_names(function: Callable[..., Any]) -> Tuple[str, ...]:
    from .._options import keyword_names

    return keyword_names(function)


def _cassette_path(test_file: Path, test_name: str, path: Any, revision: Optional[str],
                   used: Dict[Path, int]) -> Path:
    """Where a cassette is: ``path`` (with the revision in its name under the marker), or by default
    ``cassettes/<module>/<test name>.jsonl`` (``test_add[2025-11-25]``: ``test_add.2025-11-25.jsonl``)."""
    if path is not None:
        cassette = test_file.parent / Path(path)
        if revision is not None:
            cassette = cassette.with_name(f"{cassette.stem}.{revision}{cassette.suffix or '.jsonl'}")
    else:
        stem = re.sub(r"[^\w.-]+", "_", test_name.replace("[", ".").rstrip("]"))
        cassette = test_file.parent / CASSETTES / test_file.stem / f"{stem}.jsonl"
    used[cassette] = used.get(cassette, 0) + 1
    if used[cassette] > 1:  # a second client of the same test
        cassette = cassette.with_name(f"{cassette.stem}-{used[cassette]}{cassette.suffix}")
    return cassette


def _shown(path: Path) -> str:
    """A path as a message shows it: relative to the working directory when it is under it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)
