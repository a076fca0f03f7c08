"""`mcplite.wsgi`: serving under a WSGI server, and the event store processes of one host share.

The one documented way to serve a `Server` under WSGI (gunicorn, waitress, mod_wsgi) is
``app = server.wsgi_app(allowed_hosts=[...], ...)``. `SQLiteEventStore` keeps resumable SSE events in a
SQLite file that every process of a host shares (``event_store=``).

Advanced: `WSGIApp` is the class `Server.wsgi_app` returns, importable from here but not in `__all__`. The
module-level `wsgi_app(server, ...)` is deprecated (``server.wsgi_app(...)``): it works until mcplite 0.2, with
a warning.

The code lives in `mcplite.transports.http_server.wsgi`.
"""

from typing import Any, List

from .transports.http_server.wsgi import SQLiteEventStore, WSGIApp

__all__ = ["SQLiteEventStore"]

#: Advanced names, importable but not in `__all__` (see above).
ADVANCED = ("WSGIApp",)


def __getattr__(name: str) -> Any:
    if name != "wsgi_app":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import warnings

    warnings.warn("mcplite.wsgi.wsgi_app is deprecated: use server.wsgi_app(...) (it goes in mcplite 0.2)",
                  DeprecationWarning, stacklevel=2)
    from .transports.http_server import wsgi

    return wsgi.wsgi_app


def __dir__() -> List[str]:
    return sorted(set(globals()) | set(__all__))
