"""The benchmark's Python SDK server (py_server.py) as an ASGI application, stateless with JSON responses: what
``py_server.py http PORT stateless`` serves under uvicorn's worker processes when ``BENCH_WORKERS`` is set
(uvicorn imports the application by name in each worker)."""

from py_server import server

app = server.streamable_http_app(stateless_http=True, json_response=True)
