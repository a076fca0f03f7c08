"""`mcplite.http_server`, a documented import path: the code lives in `mcplite.transports.http_server.stdlib`."""
from .transports.http_server.stdlib import *  # noqa: F401,F403
from .transports.http_server.stdlib import __all__  # noqa: F401
