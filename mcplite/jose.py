"""`mcplite.jose`, a documented import path: the code lives in `mcplite.oauth.jose`."""
from .oauth.jose import *  # noqa: F401,F403
from .oauth.jose import __all__  # noqa: F401
