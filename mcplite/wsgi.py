"""`mcplite.wsgi`, a documented import path: the code lives in `mcplite.transports.http_server.wsgi`."""
from .transports.http_server.wsgi import *  # noqa: F401,F403
from .transports.http_server.wsgi import __all__  # noqa: F401
