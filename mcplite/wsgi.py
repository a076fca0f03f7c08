"""`mcplite.wsgi`: serving under a WSGI server, and the event store processes of one host share.

The one documented way to serve a `Server` under WSGI (gunicorn, waitress, mod_wsgi) is
``app = server.wsgi_app(allowed_hosts=[...], ...)``. `SQLiteEventStore` keeps resumable SSE events in a
SQLite file that every process of a host shares (``event_store=``).

Advanced: `WSGIApp` is the class `Server.wsgi_app` returns, importable from here but not in `__all__`. The
module-level `wsgi_app(server, ...)` is deprecated (``server.wsgi_app(...)``): it works until mcplite 0.2, with
a warning.

The code lives in `mcplite.transports.http_server.wsgi`.
"""

from ._deprecated import deprecated_names
from .transports.http_server import wsgi as _wsgi
from .transports.http_server.wsgi import SQLiteEventStore, WSGIApp

__all__ = ["SQLiteEventStore"]

#: Advanced names, importable but not in `__all__` (see above).
ADVANCED = ("WSGIApp",)

__getattr__ = deprecated_names(__name__, {
    "wsgi_app": (_wsgi.wsgi_app, "use server.wsgi_app(...) (it goes in mcplite 0.2)")})
