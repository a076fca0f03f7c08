"""`Server`: register tools, resources, prompts and completions with decorators; serve them.

A `Server` is the registry and the method tables (one per era). Each connection gets its own `ServerSession`
(from `connect`), so one `Server` serves one stdio client or many HTTP clients at once. Handlers are plain
functions; their signatures become JSON Schemas (`schema`), and whatever they return is turned into the
wire shape. A handler that declares a parameter annotated with `Context` gets one: progress, logging,
sampling, elicitation, roots and the cancel event of the request it is answering. A handler may be
``async def``: it runs to completion on the worker thread that serves its request, on that thread's own event
loop (`coroutines`), and a cancel from the client reaches it as CancelledError at its next await.

The package, by concern:

- `registry`: the typed catalogs and the decorators that fill them (`Server` inherits `Registry`);
- `handlers`: the request handlers the method tables below name;
- `results`: a handler's value turned into its wire shape (`ToolResult`, content blocks, pages);
- `context`: `Context`, what a handler can do about its request;
- `coroutines`: ``async def`` handlers, run on their worker thread's own event loop;
- `connections`: the handshake connections and their state (log level, resource subscriptions), who hears
  what, and the one path of server events (`Server.publish`, through the event bus) to both eras;
- `listen`: ``subscriptions/listen`` (2026-07-28): the listen streams and the request that opens one.

Server events: `add_tool`, `remove_prompt` and the other changes of a catalog, and `notify_resource_updated`,
publish an event (the notification, ``{"method": ..., "params": ...}``) on the server's event bus. Every
process subscribed to the bus sends it to its handshake connections (list changes to all, resource updates to
the subscribers of the URI) and to its listen streams whose filter names it. ``Server(event_bus=...)``
replaces the default in-process bus for a deployment of several processes.

Only this module and `registry` load with the class; each other part loads when it is first needed, so a
process that imports Server only to, say, print its version does not pay for them (tests/test_server_startup.py
holds the list): `connections`, `listen`, `caching`, `request_state` and `threading` when a Server is built (its
parts), the session layer with its first connection (`create_session`), `handlers` (and the 2026-07-28
envelope rules) with the first request, and `context`, `results` and `schema` (which needs `typing`) with the
first registration.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import os

from .._once import once
from ..errors import INVALID_REQUEST, METHOD_NOT_FOUND, RPCError
from ..protocol import methods
from ..protocol.versions import ENVELOPE_VERSIONS, HANDSHAKE_VERSIONS, negotiate, revision
from .registry import Registry, drop_none

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Type, Union

    from ..protocol import types as t
    from ..protocol.request_state import StateCodec, StateKeys
    from ..session import RequestContext
    from ..session.endpoint import Deferred
    from ..session.server import ServerSession
    from ..transports import Transport
    from ..transports.recording import RecordTo
    from .context import ELICIT_TIMEOUT as ELICIT_TIMEOUT  # the elicitation default, as it was here
    from .context import Context
    from .results import CompleteMembers, ToolResult
    from .connections import Connection, Event
    from .task_store import TaskStore
    from .tasks import TaskManager

    #: A request handler of the method table: the server, the connection the request came on, the request;
    #: returns the result, or a `Deferred` to answer later (subscriptions/listen).
    Handler = Callable[[Registry, Connection, RequestContext], Union[Dict[str, Any], Deferred]]

__all__ = ["Server", "Context", "ToolResult"]

#: The public names defined in submodules that load on first use (PEP 562), as in mcplite/__init__.
_LAZY = {"Context": ".context", "ELICIT_TIMEOUT": ".context", "ToolResult": ".results"}


def __getattr__(name: str) -> Any:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(__import__(module_name[1:], globals(), None, [name], 1), name)
    globals()[name] = value  # the next lookup is an ordinary attribute
    return value


class Server(Registry):
    """An MCP server: a registry of tools, resources, prompts and completions.

    Args:
        name: the server's name in `serverInfo`.
        version: the server's version in `serverInfo`.
        title, description, website_url, icons: optional `serverInfo` fields.
        instructions: text the client may give its model about how to use this server.
        page_size: items per page in list results (None: everything in one page).
        max_workers: concurrent requests per connection.
        state_keys: the keys that seal ``requestState`` (2026-07-28 input rounds, which may come back to
            another worker or after a restart): a `StateKeys` ring, a list of secrets (32+ bytes each, the
            first mints, all verify), or their ``"hex,hex"`` form. Default: the ``MCPLITE_STATE_KEYS``
            environment variable, else one random key drawn now, which the workers a server forks after
            building it (``gunicorn --preload``) share, and nobody else.
        state_codec: replaces the HMAC signature of ``requestState`` (``seal(bytes) -> str``,
            ``unseal(str) -> bytes``), e.g. to encrypt it; the state is signed, not encrypted, by default.
        state_ttl: seconds a ``requestState`` stays valid.
        bind_principal: ``auth -> str or None``: who a request comes from, from what the HTTP ``authenticate``
            hook returned: the owner of the sessions, tasks and ``requestState`` it makes, which no other
            principal may use. Default: `default_principal` (an object's ``principal`` attribute, else the
            token claims ``iss`` with ``sub``, ``username`` or ``client_id``/``azp``). None for an
            authenticated request means it names nobody: its tasks and ``requestState`` are refused (-32600)
            rather than shared with every other such caller.
        supported_versions: protocol revisions to accept, newest first (default: all we implement, both eras;
            without an envelope-era one the server speaks only the handshake era, without a handshake one only
            2026-07-28).
        cache_ttl_ms, cache_scope: the caching hints of revision 2026-07-28 (``ttlMs``, ``cacheScope``) on the
            results of ``server/discover``, the lists and ``resources/read``: how many milliseconds a client may
            reuse one (0: not at all), and for whom (``"public"``: anyone; ``"private"``: the same
            authorization only). A resource overrides them with ``@server.resource(uri, ttl_ms=...,
            cache_scope=...)``. `ValueError` for a ttl that is not an integer >= 0, or another scope.
        list_ttl_ms, list_scope: the same for the four lists only (None: ``cache_ttl_ms``, ``cache_scope``).
        max_listens: how many ``subscriptions/listen`` streams (2026-07-28) may be open at once, over every
            connection; beyond it a listen is refused with ``-32603``. Over HTTP each holds a thread.
        event_bus: where server events go (`publish`): an object with ``publish(event)`` and
            ``subscribe(callback)`` that calls every subscriber, this process's included. Default: this process
            only (`connections.LocalEventBus`); several processes serving one server share one.
        task_store: where tasks are kept (tools registered with ``task=``; docs/servers.md, "Tasks"): a
            `task_store.TaskStore`, e.g. ``SQLiteTaskStore(path)`` so tasks survive a restart and are shared by
            the processes of one host. Default: in memory, at most 10,000 tasks.
        task_workers: how many task handlers run at once (a bounded pool; more tasks wait their turn).
        task_ttl_ms: how long a task is kept after its creation, in milliseconds (None: until the store is full).
        task_poll_interval_ms: how often clients are asked to poll a task.

    Registration (`tool`, `resource`, `prompt`, `completion`, `notification` and the ``add_*`` and
    ``remove_*`` methods) is inherited from `Registry`.
    """

    def __init__(self, name: str, version: str = "0.1.0", *, title: Optional[str] = None,
                 description: Optional[str] = None, website_url: Optional[str] = None,
                 icons: Optional[List[t.Icon]] = None, instructions: Optional[str] = None,
                 page_size: Optional[int] = None, max_workers: int = 16,
                 supported_versions: Sequence[str] = ENVELOPE_VERSIONS + HANDSHAKE_VERSIONS,
                 state_keys: Union[StateKeys, Sequence[bytes], str, None] = None,
                 state_codec: Optional[StateCodec] = None, state_ttl: float = 3600,  # request_state.DEFAULT_TTL
                 bind_principal: Optional[Callable[[Any], Optional[str]]] = None, cache_ttl_ms: int = 0,
                 cache_scope: str = "private", list_ttl_ms: Optional[int] = None,
                 list_scope: Optional[str] = None, max_listens: int = 1024, event_bus: Any = None,
                 task_store: Optional[TaskStore] = None, task_workers: int = 8,
                 task_ttl_ms: Optional[int] = 3_600_000, task_poll_interval_ms: int = 500) -> None:
        # Imported here rather than at the top: a server's parts load when one is built, not with the class
        # (see the module docstring).
        import threading

        from .caching import CachePolicy
        from .listen import ListenRegistry
        from .connections import Connections

        super().__init__(Connections(event_bus), page_size)
        #: The key ring that seals and opens ``requestState`` (2026-07-28 input rounds); see `state_keys_source`.
        self.state_keys, self.state_keys_source = _state_keys(state_keys)
        self.state_codec = state_codec
        self.state_ttl = state_ttl
        self.bind_principal = bind_principal or default_principal
        self._built_in = os.getpid()  # an ephemeral key drawn here is shared only with processes forked later
        #: The caching hints for each cacheable request (`caching.CachePolicy.hints`).
        self.cache = CachePolicy(cache_ttl_ms, cache_scope, list_ttl_ms=list_ttl_ms, list_scope=list_scope,
                                 resource_hints=self._resource_cache_hints)
        self.name = name
        self.version = version
        self.info: Dict[str, Any] = {"name": name, "version": version,
                                     **drop_none(title=title, description=description, websiteUrl=website_url,
                                                 icons=icons)}
        self._members: Optional[CompleteMembers] = None  # (see `_complete_members`)
        self.instructions = instructions
        self.max_workers = max_workers
        self.supported_versions = tuple(supported_versions)
        #: The open ``subscriptions/listen`` streams (2026-07-28); ``len(server.listens)`` is how many.
        self.listens = ListenRegistry(self._connections.bus, max_listens)
        self._task_options: Dict[str, Any] = {"store": task_store, "max_workers": task_workers,
                                              "ttl_ms": task_ttl_ms, "poll_interval_ms": task_poll_interval_ms}
        self._tasks: Optional[TaskManager] = None
        self._tasks_lock = threading.Lock()  # guards making _tasks (once)

    @property
    def tasks(self) -> TaskManager:
        """The server's tasks (`tasks.TaskManager`): the store, the pool, cancel. Made on first use."""
        manager = self._tasks
        if manager is None:
            from .tasks import TaskManager

            with self._tasks_lock:
                manager = self._tasks
                if manager is None:
                    manager = self._tasks = TaskManager(**self._task_options)
        return manager

    def multiprocess_warning(self) -> Optional[str]:
        """Why a server run by several processes would refuse its own ``requestState``s, or None.

        Asked by the WSGI adapter when the server says it runs several processes (``wsgi.multiprocess``): an
        ephemeral key drawn in this very process (not inherited by fork) is one no other worker has.
        """
        if not self.state_keys.ephemeral or self._built_in != os.getpid():
            return None
        return ("this server runs in several processes, each with a key of its own for requestState: a "
                "2026-07-28 input round that reaches another worker will be refused (-32602). Set "
                "Server(state_keys=...) or MCPLITE_STATE_KEYS, or build the app before forking (gunicorn --preload)")

    def owner_of(self, auth: Any) -> Optional[str]:
        """Who owns the tasks and ``requestState`` of a request whose ``authenticate`` hook returned ``auth``.

        What `bind_principal` finds in ``auth``; None for a request that is not authenticated (``auth`` is
        None, as on stdio): owner-less. Raises `RPCError` -32600 when it is authenticated but `bind_principal`
        finds nobody in ``auth``: pooling such callers as one would show each the others' tasks."""
        principal = self.bind_principal(auth)
        if principal is None and auth is not None:
            raise RPCError(INVALID_REQUEST, "Invalid Request: tasks and requestState belong to the caller, and "
                           "these credentials name nobody (no sub, username or client_id claim); the server "
                           "can name the caller with Server(bind_principal=...)")
        return principal

    # ---- server-initiated notifications -----------------------------------------------------------------
    def notify_resource_updated(self, uri: str) -> None:
        """Tell every client subscribed to ``uri`` that it changed (`notifications/resources/updated`).

        Subscribed: with ``resources/subscribe`` (up to 2025-11-25) or a listen naming ``uri`` (2026-07-28).
        """
        self.publish({"method": methods.RESOURCE_UPDATED, "params": {"uri": uri}})

    def publish(self, event: Event) -> None:
        """Send a server event to every client that hears it, through the event bus (see the module docstring).

        ``event`` is the notification, ``{"method": ..., "params": {...}}``: the list changes and resource
        updates reach handshake connections and the listen streams whose filter names them; any other method
        reaches handshake connections only.
        """
        self._connections.publish(event)

    def log(self, level: str, data: Any, logger: Optional[str] = None) -> None:
        """Send a log message not tied to any request to every connected client that wants it."""
        self._connections.log(level, data, logger)

    # ---- connections ------------------------------------------------------------------------------------
    def capabilities(self) -> Dict[str, Any]:
        """The `ServerCapabilities` this server declares.

        All of them, whatever is registered right now: tools, resources and prompts can be added while a
        client is connected, and a capability cannot be declared after the handshake. The skills extension
        (``extensions["io.modelcontextprotocol/skills"]``) is declared from the first `add_skills` on.
        """
        capabilities: Dict[str, Any] = {
            "tools": {"listChanged": True}, "resources": {"subscribe": True, "listChanged": True},
            "prompts": {"listChanged": True}, "logging": {}, "completions": {}}
        if self._skill_index is not None:  # the skills extension, declared once a skill was added
            from ..protocol.skills import EXTENSION
            capabilities.setdefault("extensions", {})[EXTENSION] = (
                {"directoryRead": True} if self.skills_directory_read else {})
        return capabilities

    def _initialize_result(self, params: Dict[str, Any]) -> Dict[str, Any]:
        capabilities = self.capabilities()
        try:
            core_tasks = revision(negotiate(params.get("protocolVersion"), self.supported_versions)).core_tasks
        except ValueError:
            core_tasks = False
        # 2025-11-25: tool calls may run as tasks. Declared only by a server with a tool registered with task=
        # (unlike the other capabilities): a client that sees it may ask for tasks, and plans around them.
        if core_tasks and any(tool.task_support != "forbidden" for tool in self._tools.values()):
            capabilities["tasks"] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
        result: Dict[str, Any] = {"capabilities": capabilities, "serverInfo": self.info}
        if self.instructions:
            result["instructions"] = self.instructions
        return result

    def create_session(self, transport: Transport, *, max_workers: Optional[int] = None) -> ServerSession:
        """A session serving this server over ``transport``, not yet started (transports call this)."""
        holder: List[Connection] = []
        session: ServerSession
        session = _session_class()(
            transport, initialize_result=self._initialize_result, supported_versions=self.supported_versions,
            answer_request=lambda ctx: self._serve(holder[0], ctx),
            take_request=(lambda ctx: self._take_request(holder[0], ctx)) if self._takes_requests else None,
            handle_notification=lambda method, params: self._notification(session, method, params),
            max_workers=max_workers or self.max_workers, name=f"mcplite-server-{self.name}")
        holder.append(self._connections.add(session))
        session.on_close(lambda: self._connections.forget(session))
        return session

    def connect(self, transport: Transport, *, max_workers: Optional[int] = None) -> ServerSession:
        """Serve this server over ``transport``; returns the started session."""
        session = self.create_session(transport, max_workers=max_workers)
        session.start()
        return session

    def run(self, http: Optional[str] = None, **options: Any) -> None:
        """Serve until the client goes away: stdio by default, or Streamable HTTP on ``"host:port"``.

        Options are the HTTP server's; over stdio, ``max_line_size`` and ``record`` (see `serve_stdio`). Over
        either, ``record=`` records every message as JSON lines (`mcplite.recording`; over HTTP each session
        under its own peer name: see `HTTPOptions`).
        The process is the server's then: unless the application configured logging, the package's warnings
        (a tool that raised, with its traceback) go to stderr (`mcplite._log.use_stderr_by_default`)."""
        from .._log import use_stderr_by_default

        use_stderr_by_default()
        if http is not None:
            from ..transports.http_server.stdlib import serve  # the HTTP server is only imported by those who use it
            try:
                serve(self, http, **options)
            finally:
                self.close_tasks()
            return
        self.serve_stdio(max_line_size=options.get("max_line_size"), record=options.get("record"))

    def wsgi_app(self, **options: Any) -> Any:
        """This server as a PEP 3333 WSGI application (gunicorn, waitress, mod_wsgi); options as for HTTP."""
        from ..transports.http_server.wsgi import wsgi_app
        return wsgi_app(self, **options)

    def serve_stdio(self, *, max_line_size: Optional[int] = None, record: Optional[RecordTo] = None) -> None:
        """Serve this process's stdin/stdout until stdin ends (or Ctrl-C). ``max_line_size``: the largest request
        read, in bytes (default 64 MiB; see `stdio.StdioServerTransport`). ``record``: record every message,
        both ways, under the peer name ``client`` (`mcplite.recording`): a path (created with mode 0600, closed
        on the way out) or a `Recorder` (its giver's to close)."""
        from ..transports.stdio import DEFAULT_MAX_LINE_SIZE, StdioServerTransport
        transport: Transport = StdioServerTransport(
            max_line_size=DEFAULT_MAX_LINE_SIZE if max_line_size is None else max_line_size)
        if record is not None:
            from ..transports.recording import RecordingTransport, open_recorder  # only servers that record

            recorder, opened = open_recorder(record)
            transport = RecordingTransport(transport, recorder.peer("client"), owns_recorder=opened)
        session = self.connect(transport)
        try:
            # A wait with a timeout, repeated: on Windows a wait without one cannot be interrupted by Ctrl-C.
            while not session.closed.wait(3600):
                pass
        except KeyboardInterrupt:
            pass
        finally:
            session.close()
            self.close_tasks()

    def close_tasks(self) -> None:
        """Stop the tasks this process runs: each is settled ``failed`` in the store (its clients learn the
        server stopped), its handler sees ``ctx.cancelled``, and the task pool stops.

        `run` and `serve_stdio` call it on the way out, and a WSGI app (`wsgi_app`) when its process exits (a
        gunicorn worker stopped gracefully); a process that exits waits for the task handlers still running,
        so a handler should honour ``ctx.cancelled``."""
        if self._tasks is not None:
            self._tasks.close()

    # ---- the way of a request: down to its handler, and back up as its answer ---------------------------------
    def _serve(self, connection: Connection, ctx: RequestContext) -> Union[Dict[str, Any], Deferred]:
        """The session's `answer_request`: the answer to ``ctx``, or a `Deferred` (a listen, answered later).

        The request's era is decided once, here, from what the session found (an envelope, 2026-07-28): it
        picks the era's method table (a method of the other era is unknown) and the shape of the result on
        its way back up (`results.answer`, or the handshake era's plain result).
        """
        enveloped = ctx.envelope is not None
        handler = _method_tables()[enveloped].get(ctx.method)
        if handler is None:
            raise RPCError(METHOD_NOT_FOUND, f"Method not found: {ctx.method}")
        result = handler(self, connection, ctx)
        if not isinstance(result, dict):  # a Deferred: answered later, with a result its handler shaped
            return result
        if enveloped:
            return _results().answer(result, ctx, self, self._complete_members())  # type: ignore[no-any-return]
        if "resultType" in result or "ttlMs" in result:  # a handler's 2026-07-28 fields, on an older revision
            result = _results().strip_envelope_era_fields(result)
        return {"jsonrpc": "2.0", "id": ctx.id, "result": result}

    #: Whether `_take_request` is asked first about each request that would go to a session's handler pool.
    _takes_requests = False

    def _take_request(self, connection: Connection, ctx: RequestContext) -> bool:
        """On the session's reader thread, before ``ctx`` goes to the handler pool: True when this has taken it,
        to answer it later (`Session.answer_later`) without a thread of the pool (a `Gateway`'s calls). Asked
        only when `_takes_requests` is set; must not block."""
        return False

    def _complete_members(self) -> Optional[CompleteMembers]:
        """What every complete 2026-07-28 result of this server ends with, for its `info` as it is now (made
        again when the info changes, whole or in place); None while the info is not JSON."""
        members = self._members
        if members is None or members.info != self.info:  # (a comparison in C, per answer)
            try:
                members = _results().CompleteMembers(self.info)
            except (TypeError, ValueError, RecursionError):
                return None
            self._members = members
        return members

    def _notification(self, session: ServerSession, method: str, params: Dict[str, Any]) -> None:
        handler = self.notification_handlers.get(method)
        if handler is not None:
            handler(params, session)


def _state_keys(keys: Union[StateKeys, Sequence[bytes], str, None]) -> Tuple[StateKeys, str]:
    """The key ring a server was given, and where it came from ("argument", the variable's name, "ephemeral")."""
    from ..protocol.request_state import STATE_KEYS_ENV, StateKeys  # a part of the server: loaded when one is built

    if isinstance(keys, StateKeys):
        return keys, "argument"
    if isinstance(keys, str):
        return StateKeys.from_hex(keys), "argument"
    if keys is not None:
        return StateKeys(keys), "argument"
    configured = os.environ.get(STATE_KEYS_ENV)
    if configured:
        return StateKeys.from_hex(configured), STATE_KEYS_ENV
    return StateKeys.generate(), "ephemeral"


def default_principal(auth: Any) -> Optional[str]:
    """Who a request comes from (`Server` ``bind_principal``), or None when ``auth`` names nobody.

    In this order: an object's ``principal`` attribute; token claims with ``sub`` (``"iss|sub|client"``, as
    before), with ``username`` (``"iss||client|username"``), with ``client_id`` or ``azp`` alone
    (``"iss||client"``); a str or int's ``repr``. Claims with none of those (``{"active": true}``, ``iss``
    alone), a bool and a plain object name nobody. See `mcplite.protocol.principal`."""
    from ..protocol.principal import principal_of

    return principal_of(auth)


# Loaded by their first use and kept (`_once.once`): what a server loads only when it serves, rather than
# with the server, without an import statement run per request or session.
@once
def _session_class() -> Type[ServerSession]:
    """`session.server.ServerSession`: the session layer (and `threading`) loads with the first connection."""
    from ..session.server import ServerSession as session_class

    return session_class


@once
def _results() -> Any:
    """`server.results`, for shaping 2026-07-28 results (loaded with the handlers by then)."""
    from . import results

    return results


@once
def _method_tables() -> Tuple[Dict[str, Handler], Dict[str, Handler]]:
    """Each era's method table, request method -> its handler: (the handshake era's, 2026-07-28's). Importing
    the handlers: a server that never answers a request never loads them. (Two first requests on two threads
    may both build them: the same tables.)"""
    from ..protocol.envelope import ENVELOPE_ONLY_METHODS, REMOVED_METHODS
    from . import connections, handlers, listen, tasks

    def on_connection(handle: Callable[[Connection, RequestContext], Dict[str, Any]]) -> Handler:
        return lambda server, connection, ctx: handle(connection, ctx)

    both: Dict[str, Handler] = {
        methods.SERVER_DISCOVER: handlers.discover,
        methods.TOOLS_LIST: handlers.list_tools,
        methods.TOOLS_CALL: handlers.call_tool,
        methods.RESOURCES_LIST: handlers.list_resources,
        methods.RESOURCES_TEMPLATES_LIST: handlers.list_templates,
        methods.RESOURCES_READ: handlers.read_resource,
        methods.RESOURCES_SUBSCRIBE: on_connection(connections.subscribe),
        methods.RESOURCES_UNSUBSCRIBE: on_connection(connections.unsubscribe),
        methods.PROMPTS_LIST: handlers.list_prompts,
        methods.PROMPTS_GET: handlers.get_prompt,
        methods.COMPLETE: handlers.complete,
        methods.LOGGING_SET_LEVEL: on_connection(connections.set_level),
        methods.SUBSCRIPTIONS_LISTEN: listen.listen,
        # the skills extension: its module loads with the first such request
        "skills/list": _skills_handler("list_skills"),
        "skills/get": _skills_handler("get_skill"),
        "resources/directory/read": _skills_handler("read_directory"),
    }
    # Without an envelope (the handshake era) a method that exists only from 2026-07-28 is unknown; with one,
    # the `_meta` ladder has already refused the methods 2026-07-28 removed.
    handshake = {method: handle for method, handle in both.items() if method not in ENVELOPE_ONLY_METHODS}
    enveloped = {method: handle for method, handle in both.items() if method not in REMOVED_METHODS}
    return {**handshake, **tasks.HANDSHAKE_METHODS}, {**enveloped, **tasks.ENVELOPE_METHODS}


def _skills_handler(name: str) -> Handler:
    """A handler of `server.skills` by name, imported on its first call (a server without skills never loads it)."""
    def handle(server: Registry, connection: Connection, ctx: RequestContext) -> Dict[str, Any]:
        from . import skills

        result: Dict[str, Any] = getattr(skills, name)(server, connection, ctx)
        return result
    return handle
