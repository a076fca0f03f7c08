"""`mcplite.http_server`: the built-in HTTP server, for embedding and tests (`HTTPServerThread`).

The one documented way to serve over HTTP with the built-in server is `Server.run(http="host:port")` (blocking
until SIGTERM or Ctrl-C); in the background, `with HTTPServerThread(server, "127.0.0.1:0") as http:`. Under
WSGI it is `Server.wsgi_app(...)`. This module's other public names are what those take: `HTTPRefusal` (an
``authenticate`` hook raises it), `IncomingRequest` (what a ``routes`` handler is given), `LOOPBACK_HOSTS` and
the event stores.

Advanced, for writing another adapter in front of the core: `HTTPApp` (the core: one parsed request in, an
answer through a `Responder`), `Responder`, `Headers`, `RouteHandler` and `reason_phrase` are importable from
here but are not in `__all__`, and change more readily. `serve` and `start_http_server` are deprecated
(`Server.run(http=...)`, `HTTPServerThread(...).start()`): they work until mcplite 0.2, with a warning.

The code lives in `mcplite.transports.http_server`.
"""

from ._deprecated import deprecated_names
from .transports.http_server import stdlib as _stdlib
from .transports.http_server.app import HTTPApp
from .transports.http_server.eventstore import EventStore, InMemoryEventStore
from .transports.http_server.adapter import Headers, IncomingRequest, Responder, RouteHandler, reason_phrase
from .transports.http_server.guards import LOOPBACK_HOSTS
from .transports.http_server.stdlib import HTTPServerThread
from .transports.http_messages import HTTPRefusal

__all__ = ["HTTPServerThread", "HTTPRefusal", "IncomingRequest", "LOOPBACK_HOSTS", "EventStore", "InMemoryEventStore"]

#: Advanced names, importable but not in `__all__` (see above).
ADVANCED = ("HTTPApp", "Responder", "Headers", "RouteHandler", "reason_phrase")

#: The deprecated names and what to use instead: they work until mcplite 0.2, with a `DeprecationWarning`.
__getattr__ = deprecated_names(__name__, {
    "serve": (_stdlib.serve, "use Server.run(http=address, ...) (it goes in mcplite 0.2)"),
    "start_http_server": (_stdlib.start_http_server, "use HTTPServerThread(server, address, ...).start(), or use "
                                                     "it as a context manager (it goes in mcplite 0.2)"),
})
