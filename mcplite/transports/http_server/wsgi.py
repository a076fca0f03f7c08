"""A `Server` as a PEP 3333 WSGI application, for gunicorn, waitress, mod_wsgi or ``wsgiref``.

    app = server.wsgi_app(stateless=True, allowed_hosts=["mcp.example.com"])   # gunicorn --workers 4 module:app

It is the same `HTTPApp` as the standard-library server, so it behaves the same with two differences:

- A request's handler runs on the WSGI server's thread, and messages it streams (progress, sampling
  requests...) are sent with the ``write`` callable that ``start_response`` returns, at once. Streams stay
  open for as long as a handler or a GET lasts, so sessions need a threaded worker (gunicorn ``--threads``
  or ``gthread``, waitress) with a thread for every open stream; a server that runs one request at a time
  (``wsgi.multithread`` false: gunicorn's default sync worker) refuses to open sessions, on the first
  request that would, with a 500 whose JSON-RPC error names the fixes. A pre-fork server with several
  processes needs ``stateless=True``, revision 2026-07-28, or a proxy that routes each session to its
  process (``session_id_prefix``, ``examples/deploy/``): sessions live in one process's memory, and there
  an unknown session id's 404 says so.
- A response cannot end before the application returns, so ``close_sse_stream`` does nothing (returns
  False) and the header / read timeouts are the WSGI server's own.

``allowed_hosts`` is required: a WSGI application cannot know the address its server binds (``gunicorn
--bind 0.0.0.0`` puts it on the network), so it cannot tell, as the standard-library server does, that
loopback names are enough. List the public names clients use, or give ``allowed_hosts=["*"]`` behind a proxy
that checks ``Host`` itself; without either, building the application raises `ValueError` naming the option.
Browsers are then trusted by ``allowed_origins`` only, or, when every allowed host is a loopback name, from
loopback origins.
"""

from __future__ import annotations  # annotations are not evaluated at import

import atexit
import weakref
from typing import Any, Callable, Dict, Iterable, List, Optional

from ..._log import log, use_stderr_by_default
from ..http_messages import lower_case_headers
from .app import MULTIPROCESS_SESSIONS, HTTPApp
from .adapter import Headers, IncomingRequest, Responder, reason_phrase
from .guards import unlisted_hosts
from .sqlitestore import SQLiteEventStore

TYPE_CHECKING = False  # typing.TYPE_CHECKING, spelt as in the rest of the package
if TYPE_CHECKING:
    from .. import SessionFactory

__all__ = ["WSGIApp", "wsgi_app", "SQLiteEventStore"]

StartResponse = Callable[..., Callable[[bytes], Any]]

#: Why a WSGI server that runs one request at a time cannot hold a ``subscriptions/listen`` stream open.
SINGLE_THREAD_STREAMS = (
    "Streams cannot work here: this WSGI server runs one request at a time (wsgi.multithread is false, e.g. "
    "gunicorn's default sync worker), and a subscriptions/listen stream would hold that one thread for as long "
    "as it lasts. Run threads (gunicorn --threads 8, which uses the gthread worker; waitress)")

#: Why a WSGI server that runs one request at a time cannot open sessions, and the fixes.
SINGLE_THREAD_SESSIONS = (
    "Sessions cannot work here: this WSGI server runs one request at a time (wsgi.multithread is false, e.g. "
    "gunicorn's default sync worker), and a session's GET stream or a server-to-client request (sampling, "
    "elicitation, roots) would hold that one thread forever. Run threads (gunicorn --threads 8, which uses the "
    "gthread worker; waitress), or serve without sessions: server.wsgi_app(stateless=True), or clients at "
    "revision 2026-07-28")


class _WSGIResponder(Responder):
    """Answers through ``start_response``: a complete body is returned, a stream written with ``write``."""

    can_end_early = False

    def __init__(self, start_response: StartResponse, head_only: bool) -> None:
        self._start_response = start_response
        self._head_only = head_only
        self._write: Optional[Callable[[bytes], Any]] = None
        #: What the application returns.
        self.body: List[bytes] = []

    def respond(self, status: int, headers: Headers, body: bytes) -> None:
        self._start_response(f"{status} {reason_phrase(status)}", headers + [("Content-Length", str(len(body)))])
        self.body = [] if self._head_only else [body]

    def start_stream(self, headers: Headers, first: bytes) -> None:
        self._write = self._start_response("200 OK", list(headers))
        self.write(first)

    def write(self, data: bytes) -> None:
        assert self._write is not None
        try:
            self._write(data)
        except OSError:
            raise
        except Exception as exc:  # servers report a vanished client in their own ways
            raise OSError(f"cannot write to the client: {exc}") from exc

    def end_stream(self, last: bytes = b"", *, close_connection: bool = False) -> None:
        """Write ``last``; the response itself ends when the application returns."""
        if last:
            self.write(last)


class WSGIApp:
    """The WSGI callable. ``options`` are those of `HTTPApp`, the fields of `HTTPOptions` (path, stateless, ...).

    Args:
        server: the `Server` to serve.
        threaded: whether the WSGI server runs requests on several threads at once. None (the default) believes
            its ``wsgi.multithread``; say True for a server that runs threads but says otherwise (``wsgiref``
            with ``socketserver.ThreadingMixIn``), False to refuse sessions whatever it says.
        **options: the fields of `HTTPOptions`; ``allowed_hosts`` is required (``["*"]`` accepts any ``Host``).

    Raises:
        ValueError: no ``allowed_hosts``, or an option `HTTPApp` refuses.
    """

    def __init__(self, server: SessionFactory, *, threaded: Optional[bool] = None, **options: Any) -> None:
        if options.get("allowed_hosts") is None:
            raise ValueError(unlisted_hosts("under WSGI, which cannot know the address it is served on"))
        self.http = HTTPApp(server, **options)
        self.threaded = threaded
        self._deployment_checked = False  # the first request tells what kind of server runs this app
        # WSGI has no shutdown hook: the tasks this process runs are settled when it exits (a gunicorn worker
        # stopped gracefully exits through sys.exit), else they would read "working" until their TTL. A weak
        # reference: an app dropped before the exit is not kept alive by the hook.
        close_tasks = getattr(server, "close_tasks", None)
        if close_tasks is not None:
            atexit.register(_close_tasks_at_exit, weakref.WeakMethod(close_tasks))

    def __call__(self, environ: Dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        if not self._deployment_checked:
            self._deployment_checked = True
            self._check_deployment(environ)
        method = environ["REQUEST_METHOD"]
        responder = _WSGIResponder(start_response, method == "HEAD")
        headers = _headers(environ)
        body = self._read_body(environ)
        if body is None:
            self.http.refuse(responder, 413, "Payload Too Large")
            return responder.body
        request = IncomingRequest(method, environ.get("PATH_INFO") or "/", environ.get("QUERY_STRING", ""), headers,
                              body, environ.get("SCRIPT_NAME", ""), environ.get("REMOTE_ADDR", ""))
        try:
            self.http.handle(request, responder)
        except OSError:
            pass  # the client left in the middle of a stream
        return responder.body

    def _check_deployment(self, environ: Dict[str, Any]) -> None:
        """Learn from the first request what kind of server runs this app, and what cannot work on it.

        PEP 3333 says whether the server runs requests on several threads (``wsgi.multithread``) and in several
        processes (``wsgi.multiprocess``). One request at a time (gunicorn's default sync worker) cannot hold a
        session: its GET stream, or a handler waiting for the client's answer to a sampling request, would hold
        the only thread forever. Such a server refuses to open sessions, at once and with the fix, rather than
        hang (`SINGLE_THREAD_SESSIONS`), and a listen likewise (`SINGLE_THREAD_STREAMS`). Several processes
        without affinity lose sessions between requests: an unknown session id is answered with why. Each problem
        is logged once.
        """
        http = self.http
        if http.options.access_log:
            # Asked for, so it must be seen: to stderr unless the application configured logging (gunicorn's
            # own loggers are not the root's), as under Server.run. Here, not in __init__: by the first request
            # the application has configured whatever it was going to.
            use_stderr_by_default()
        problems: List[str] = []
        sessions = http.serves_sessions
        threaded = self.threaded if self.threaded is not None else environ.get("wsgi.multithread", False)
        server = environ.get("SERVER_SOFTWARE", "this WSGI server")
        if not threaded:  # a listen (2026-07-28) would hold the one thread too: refused when asked for
            http.stream_refusal = (500, f"{SINGLE_THREAD_STREAMS} (server: {server})")
        if sessions and not threaded:
            http.session_refusal = (500, f"{SINGLE_THREAD_SESSIONS} (server: {server})")
            problems.append(http.session_refusal[1])
        if environ.get("wsgi.multiprocess", False):
            http.multiprocess = True
            if sessions and http.session_refusal is None:
                problems.append(MULTIPROCESS_SESSIONS)
            check = getattr(http.server, "multiprocess_warning", None)
            problem = check() if check is not None else None
            if problem:
                problems.append(problem)
        if problems:
            # The operator must see these even where the application configured no logging (gunicorn's own
            # loggers are not the root's): a broken deployment goes to stderr by default, as under Server.run.
            use_stderr_by_default()
            for problem in problems:
                log.warning("WSGI deployment: %s", problem)

    def _read_body(self, environ: Dict[str, Any]) -> Optional[bytes]:
        """The request body, or None when it is larger than allowed."""
        guard = self.http.guard
        length = environ.get("CONTENT_LENGTH") or ""
        stream = environ["wsgi.input"]
        if length.isascii() and length.isdigit():  # the server has validated it (PEP 3333)
            if guard.body_too_large(int(length)):
                return None
            body: bytes = stream.read(int(length))
            return body
        # A chunked body that the server de-chunks announces itself with wsgi.input_terminated.
        body = stream.read(guard.max_body_size + 1) if environ.get("wsgi.input_terminated") else b""
        return None if guard.body_too_large(len(body)) else body

    def close(self) -> None:
        """End every session and stream, and stop the server's tasks (`Server.close_tasks`)."""
        self.http.close()
        close_tasks = getattr(self.http.server, "close_tasks", None)
        if close_tasks is not None:
            close_tasks()


def _close_tasks_at_exit(close_tasks: Any) -> None:
    method = close_tasks()
    if method is not None:
        method()


def _headers(environ: Dict[str, Any]) -> Dict[str, str]:
    """The request's header fields from the CGI-style environ (``HTTP_X_FOO``; ``CONTENT_TYPE`` and
    ``CONTENT_LENGTH`` have no prefix), as `IncomingRequest` holds them."""
    fields = [(key[5:].replace("_", "-"), value) for key, value in environ.items() if key.startswith("HTTP_")]
    fields.extend((key.replace("_", "-"), environ[key]) for key in ("CONTENT_TYPE", "CONTENT_LENGTH")
                  if environ.get(key))
    return lower_case_headers(fields)


def wsgi_app(server: SessionFactory, **options: Any) -> WSGIApp:
    """A WSGI application serving ``server``; see `WSGIApp` and `HTTPApp` for the options."""
    return WSGIApp(server, **options)
