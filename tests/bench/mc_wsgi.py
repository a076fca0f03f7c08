"""The benchmark's mcplite server (mc_server.py) as a WSGI application, stateless with JSON responses: what
``mc_server.py http PORT stateless`` serves under gunicorn when ``BENCH_WORKERS`` is set (``gunicorn --chdir
tests/bench mc_wsgi:app``)."""

from mc_server import server

app = server.wsgi_app(stateless=True, json_response=True, allowed_hosts=["localhost", "127.0.0.1"])
