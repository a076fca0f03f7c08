"""`Server`: register tools, resources, prompts and completions with decorators; serve them.

A `Server` is the registry and the method table. Each connection gets its own `ServerSession` (from
`connect`), so one `Server` serves one stdio client or many HTTP clients at once. Handlers are plain
functions; their signatures become JSON Schemas (`schema`), and whatever they return is turned into the
wire shape. A handler that declares a parameter annotated with `Context` gets one: progress, logging,
sampling, elicitation, roots and the cancel event of the request it is answering.

The package, by concern:

- `registry`: the typed catalogs and the decorators that fill them (`Server` inherits `Registry`);
- `handlers`: the request handlers the method table below names;
- `results`: a handler's value turned into its wire shape (`ToolResult`, content blocks, pages);
- `context`: `Context`, what a handler can do about its request;
- `subscriptions`: per-connection state (log level, resource subscriptions), who hears what, and the one path
  of server events (`Server.publish`, through the event bus) to both eras;
- `listen`: ``subscriptions/listen`` (2026-07-28): the listen streams and the request that opens one.

Server events: `add_tool`, `remove_prompt` and the other changes of a catalog, and `notify_resource_updated`,
publish an event (the notification, ``{"method": ..., "params": ...}``) on the server's event bus. Every
process subscribed to the bus sends it to its handshake connections (list changes to all, resource updates to
the subscribers of the URI) and to its listen streams whose filter names it. ``Server(event_bus=...)``
replaces the default in-process bus for a deployment of several processes.

Only this module, `registry`, `subscriptions` and `listen` load with the server: `handlers` loads with the
first request, and `context`, `results` and `schema` (which needs `typing`) with the first registration, so a
process that imports Server only to, say, print its version does not pay for them.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

from ..errors import METHOD_NOT_FOUND, RPCError
from ..protocol import methods
from ..protocol.envelope import MODERN_ONLY_METHODS
from ..protocol.versions import HANDSHAKE_VERSIONS, MODERN_VERSIONS
from ..session.endpoint import Deferred
from ..session.server import ServerSession
from .listen import Listens
from .registry import Registry, drop_none
from .subscriptions import Connections

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

    from ..protocol import types as t
    from ..session import RequestContext
    from ..transports import Transport
    from .context import ELICIT_TIMEOUT as ELICIT_TIMEOUT  # the elicitation default, as it was here
    from .context import Context
    from .results import ToolResult
    from .subscriptions import Connection, Event

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
        supported_versions: protocol revisions to accept, newest first (default: all we implement, both eras;
            without a modern one the server speaks only the handshake era, without a handshake one only 2026-07-28).
        max_listens: how many ``subscriptions/listen`` streams (2026-07-28) may be open at once, over every
            connection; beyond it a listen is refused with ``-32603``. Over HTTP each holds a thread.
        event_bus: where server events go (`publish`): an object with ``publish(event)`` and
            ``subscribe(callback)`` that calls every subscriber, this process's included. Default: this process
            only (`subscriptions.LocalEventBus`); several processes serving one server share one.

    Registration (`tool`, `resource`, `prompt`, `completion`, `notification` and the ``add_*`` and
    ``remove_*`` methods) is inherited from `Registry`.
    """

    def __init__(self, name: str, version: str = "0.1.0", *, title: Optional[str] = None,
                 description: Optional[str] = None, website_url: Optional[str] = None,
                 icons: Optional[List[t.Icon]] = None, instructions: Optional[str] = None,
                 page_size: Optional[int] = None, max_workers: int = 16,
                 supported_versions: Sequence[str] = MODERN_VERSIONS + HANDSHAKE_VERSIONS, max_listens: int = 1024,
                 event_bus: Any = None) -> None:
        super().__init__(Connections(event_bus), page_size)
        self.name = name
        self.version = version
        self.info: Dict[str, Any] = {"name": name, "version": version,
                                     **drop_none(title=title, description=description, websiteUrl=website_url,
                                                 icons=icons)}
        self.instructions = instructions
        self.max_workers = max_workers
        self.supported_versions = tuple(supported_versions)
        #: The open ``subscriptions/listen`` streams (2026-07-28); ``len(server.listens)`` is how many.
        self.listens = Listens(self._connections.bus, max_listens)

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
        client is connected, and a capability cannot be declared after the handshake.
        """
        return {"tools": {"listChanged": True}, "resources": {"subscribe": True, "listChanged": True},
                "prompts": {"listChanged": True}, "logging": {}, "completions": {}}

    def _initialize_result(self, params: Dict[str, Any]) -> Dict[str, Any]:
        result: Dict[str, Any] = {"capabilities": self.capabilities(), "serverInfo": self.info}
        if self.instructions:
            result["instructions"] = self.instructions
        return result

    def create_session(self, transport: Transport, *, max_workers: Optional[int] = None) -> ServerSession:
        """A session serving this server over ``transport``, not yet started (transports call this)."""
        holder: List[Connection] = []
        session: ServerSession
        session = ServerSession(
            transport, initialize_result=self._initialize_result, supported_versions=self.supported_versions,
            handle_request=lambda ctx: self._handle(holder[0], ctx),
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
        """Serve until the client goes away: stdio by default, or Streamable HTTP on ``"host:port"``."""
        if http is not None:
            from ..transports.http_server.stdlib import serve  # the HTTP server is only imported by those who use it
            serve(self, http, **options)
            return
        self.serve_stdio()

    def wsgi_app(self, **options: Any) -> Any:
        """This server as a PEP 3333 WSGI application (gunicorn, waitress, mod_wsgi); options as for HTTP."""
        from ..transports.http_server.wsgi import wsgi_app
        return wsgi_app(self, **options)

    def serve_stdio(self) -> None:
        """Serve this process's stdin/stdout until stdin ends (or Ctrl-C)."""
        from ..transports.stdio import StdioServerTransport
        session = self.connect(StdioServerTransport())
        try:
            # A wait with a timeout, repeated: on Windows a wait without one cannot be interrupted by Ctrl-C.
            while not session.closed.wait(3600):
                pass
        except KeyboardInterrupt:
            pass
        finally:
            session.close()

    # ---- method table -----------------------------------------------------------------------------------
    def _handle(self, connection: Connection, ctx: RequestContext) -> Union[Dict[str, Any], Deferred]:
        handler = (_METHODS if _METHODS is not None else _method_table()).get(ctx.method)
        if handler is None or (ctx.envelope is None and ctx.method in MODERN_ONLY_METHODS):
            raise RPCError(METHOD_NOT_FOUND, f"Method not found: {ctx.method}")
        result = handler(self, connection, ctx)
        if isinstance(result, Deferred):  # answered later (a listen), with a result its handler shaped
            return result
        revision = ctx.revision
        if revision is not None and revision.result_type:
            from .results import shape_result  # loaded with the handlers by then: a lookup

            return shape_result(result, ctx, self)
        if "resultType" in result or "ttlMs" in result:  # a handler's 2026-07-28 fields, on an older revision
            from .results import strip_modern_fields

            return strip_modern_fields(result)
        return result

    def cache_hints(self, method: str, uri: Optional[str] = None) -> Optional[Tuple[int, str]]:
        """``(ttlMs, cacheScope)`` for a complete result of ``method`` (2026-07-28), None if it is not cacheable."""
        if method in _CACHEABLE:
            return 0, "private"
        return None

    def _notification(self, session: ServerSession, method: str, params: Dict[str, Any]) -> None:
        handler = self.notification_handlers.get(method)
        if handler is not None:
            handler(params, session)


#: The methods whose complete results carry caching hints (2026-07-28 server/utilities/caching.mdx).
_CACHEABLE = frozenset({methods.SERVER_DISCOVER, methods.TOOLS_LIST, methods.PROMPTS_LIST, methods.RESOURCES_LIST,
                        methods.RESOURCES_TEMPLATES_LIST, methods.RESOURCES_READ})

#: Request method -> its handler; set by the first request any server answers (see `_method_table`).
_METHODS: Optional[Dict[str, Handler]] = None


def _method_table() -> Dict[str, Handler]:
    """The method table, importing the handlers: a server that never answers a request never loads them.

    Two first requests on two threads may both build it: they build the same table, and binding the
    global is atomic, so no lock is needed.
    """
    global _METHODS
    from . import handlers, listen, subscriptions

    def on_connection(handle: Callable[[Connection, RequestContext], Dict[str, Any]]) -> Handler:
        return lambda server, connection, ctx: handle(connection, ctx)

    _METHODS = {
        methods.SERVER_DISCOVER: handlers.discover,
        methods.TOOLS_LIST: handlers.list_tools,
        methods.TOOLS_CALL: handlers.call_tool,
        methods.RESOURCES_LIST: handlers.list_resources,
        methods.RESOURCES_TEMPLATES_LIST: handlers.list_templates,
        methods.RESOURCES_READ: handlers.read_resource,
        methods.RESOURCES_SUBSCRIBE: on_connection(subscriptions.subscribe),
        methods.RESOURCES_UNSUBSCRIBE: on_connection(subscriptions.unsubscribe),
        methods.PROMPTS_LIST: handlers.list_prompts,
        methods.PROMPTS_GET: handlers.get_prompt,
        methods.COMPLETE: handlers.complete,
        methods.LOGGING_SET_LEVEL: on_connection(subscriptions.set_level),
        methods.SUBSCRIPTIONS_LISTEN: listen.listen,
    }
    return _METHODS
