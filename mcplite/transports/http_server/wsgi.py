"""A `Server` as a PEP 3333 WSGI application, for gunicorn, waitress, mod_wsgi or ``wsgiref``.

    from mcplite.wsgi import wsgi_app
    app = wsgi_app(server, stateless=True)      # gunicorn --workers 4 module:app

It is the same `HTTPApp` as the standard-library server, so it behaves the same with two differences:

- A request's handler runs on the WSGI server's thread, and messages it streams (progress, sampling
  requests...) are sent with the ``write`` callable that ``start_response`` returns, at once. Streams stay
  open for as long as a handler or a GET lasts, so use a threaded worker (gunicorn ``--threads`` or
  ``gthread``, waitress) for sessions; a pre-fork server with several processes needs ``stateless=True``
  (or sticky sessions), since sessions live in one process's memory.
- A response cannot end before the application returns, so ``close_sse_stream`` does nothing (returns
  False) and the header / read timeouts are the WSGI server's own.

The Host allow-list is off unless ``allowed_hosts`` is given: behind a load balancer only the deployment
knows its public names.
"""

from __future__ import annotations  # annotations are not evaluated at import

from typing import Any, Callable, Dict, Iterable, List, Optional

from ..._log import log
from ..http_messages import lower_case_headers
from .app import HTTPApp
from .exchange import Headers, IncomingRequest, Responder, reason_phrase

TYPE_CHECKING = False  # typing.TYPE_CHECKING, spelt as in the rest of the package
if TYPE_CHECKING:
    from .. import SessionFactory

__all__ = ["WSGIApp", "wsgi_app"]

StartResponse = Callable[..., Callable[[bytes], Any]]


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
    """The WSGI callable. ``options`` are those of `HTTPApp`, the fields of `HTTPOptions` (path, stateless, ...)."""

    def __init__(self, server: SessionFactory, **options: Any) -> None:
        self.http = HTTPApp(server, **options)
        self._deployment_checked = False  # the first request tells whether this server runs several processes

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
        """Warn, once, of a setting that cannot work in a multi-process deployment (PEP 3333 ``wsgi.multiprocess``)."""
        check = getattr(self.http.server, "multiprocess_warning", None)
        problem = check() if check is not None and environ.get("wsgi.multiprocess") else None
        if problem:
            log.warning("mcplite WSGI: %s", problem)

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
        """End every session and stream."""
        self.http.close()


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
