"""The inspector: one page in the browser that shows and drives one MCP server (``mcplite inspect``).

The page (``page/``: plain HTML, CSS and JavaScript, shipped as package data, nothing fetched from the network)
talks to a small JSON-over-HTTP API served here on loopback, over one connected `Client`:

- ``POST /api/ACTION`` with a JSON object, answered with a JSON object (``{"result": ...}`` or
  ``{"error": {"type", "message"}}``): each request runs on its own thread of the standard library's threading
  server, so a blocking call (a tool that asks the user something) never holds up the others;
- ``GET /events``: a server-sent event stream (`protocol.sse.encode_event`) of everything the page shows as it
  comes: every JSON-RPC message both ways (``wire``: a `Recorder` line, secrets redacted, with the protocol
  headers over HTTP), ``http``: each HTTP response's status and headers with the request's headers as sent
  (the session id in clear), which the page puts with the message that request carried, the server's
  notifications, progress, task status, and the server's requests for input
  (``input``: elicitation, sampling, roots), which the page answers with ``POST /api/answer``. The callback that
  asked blocks on that answer (or on `Inspector.answer_timeout`, then cancels).

Who may use it. The URL printed carries a random token (`secrets.token_urlsafe`); the page, its files, its
events and every API request must present it (a query ``token=`` or the ``X-Inspector-Token`` header),
compared in constant time: another local user's process, or a page of another site in the user's own browser,
does not know it. On top of that the ``Host`` must be the loopback address and port served (DNS rebinding)
and an ``Origin``, when sent, must be this page's own (`transports.http_server.guards.RequestGuard`); a
refusal is a 403 with no detail of the token. The server binds 127.0.0.1 only.
"""

from __future__ import annotations

import hmac
import io
import json
import queue
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple, cast
from urllib.parse import parse_qs, urlsplit

from .._log import log
from ..client import Client
from ..errors import MCPError
from ..protocol.sse import encode_comment, encode_event
from ..transports.http_server.adapter import Reject
from ..transports.http_server.guards import RequestGuard
from ..protocol import json_text
from ..protocol.http_rules import SESSION_ID_HEADER
from ..transports.recording import Recorder, redact

__all__ = ["Inspector", "ConnectClient", "ANSWER_TIMEOUT", "TOKEN_HEADER"]

#: Makes a connected `Client` given the keyword options the inspector needs (its callbacks, ``record``).
ConnectClient = Callable[[Dict[str, Any]], Client]

#: Seconds a server's request for input waits for the person's answer in the page before it is cancelled.
ANSWER_TIMEOUT = 600.0
#: The header the page's API requests carry the token in (an EventSource cannot set headers: it uses ``token=``).
TOKEN_HEADER = "X-Inspector-Token"
#: How many events a page that connects late (or reloads) is sent again: the handshake's messages, at least.
HISTORY = 2000
#: Seconds between keep-alive comments on an idle event stream.
KEEPALIVE = 15.0
MAX_BODY = 8 * 1024 * 1024

_PAGE_FILES = {"/": ("index.html", "text/html; charset=utf-8"),
               "/app.js": ("app.js", "text/javascript; charset=utf-8"),
               "/style.css": ("style.css", "text/css; charset=utf-8")}
# Nothing from the network: scripts, styles and connections to this origin only; images and audio of results
# arrive as data: URLs.
_CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
        "media-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")


class _WireFile(io.StringIO):
    """What a `Recorder` writes to: each line (one message, redacted) goes to the page as a ``wire`` event (nothing
    is kept: a StringIO only for its type, a text file)."""

    def __init__(self, emit: Callable[[str, str], None]) -> None:
        super().__init__()
        self._emit = emit

    def write(self, text: str) -> int:
        line = text.rstrip("\n")
        if line and '"mcplite_recording"' not in line[:40]:  # (the header line: not a message)
            self._emit("wire", line)
        return len(text)


class _Question:
    """One request of the server's waiting for the person's answer in the page."""

    __slots__ = ("method", "params", "answered", "answer")

    def __init__(self, method: str, params: Dict[str, Any]) -> None:
        self.method = method
        self.params = params
        self.answered = threading.Event()
        self.answer: Optional[Dict[str, Any]] = None


class Inspector:
    """The page's server, and the one client it drives.

    Args:
        connect: makes a connected `Client` from the keyword options given (`ConnectClient`); called again by
            the page's "reconnect".
        target: how the page names the server in "copy as command": ``{"words": "-- python3 server.py",
            "python": "Client.stdio(['python3', 'server.py'])", "transport": "stdio"}``.
        port: the port to serve on, 0 for a free one.
        answer_timeout: seconds a server's question waits for the person's answer.
    """

    def __init__(self, connect: ConnectClient, *, target: Optional[Dict[str, Any]] = None, port: int = 0,
                 answer_timeout: float = ANSWER_TIMEOUT) -> None:
        self._connect = connect
        self.target = dict(target or {})
        self.answer_timeout = answer_timeout
        self.token = secrets.token_urlsafe(24)
        self._lock = threading.Lock()
        self._history: List[bytes] = []
        self._listeners: List["queue.Queue[Optional[bytes]]"] = []
        self._event_id = 0
        self._questions: Dict[str, _Question] = {}
        self._roots: List[Dict[str, Any]] = []
        self._client: Optional[Client] = None
        self._connect_error: Optional[str] = None
        self._closed = threading.Event()
        self._httpd = _Server(("127.0.0.1", port), _Handler)
        self._httpd.inspector = self
        self.port = int(self._httpd.server_address[1])
        self._guard = RequestGuard([f"127.0.0.1:{self.port}", f"localhost:{self.port}"],
                                   [f"http://127.0.0.1:{self.port}", f"http://localhost:{self.port}"], MAX_BODY)
        self._thread: Optional[threading.Thread] = None

    @property
    def url(self) -> str:
        """The page's address, token included."""
        return f"http://127.0.0.1:{self.port}/?token={self.token}"

    @property
    def client(self) -> Optional[Client]:
        return self._client

    # ---- lifetime ---------------------------------------------------------------------------------------
    def connect(self) -> None:
        """Connect the client (closing one connected before); raises what connecting raised."""
        self.disconnect()
        options: Dict[str, Any] = {
            "record": Recorder(_WireFile(self.emit)),
            "elicitation": lambda params: self._ask("elicitation/create", params),
            "elicitation_modes": ("form", "url"),
            "sampling": lambda params: self._ask("sampling/createMessage", params),
            # A person may answer a request that offers tools (in text: the page shows the tools offered).
            "sampling_features": ("tools",),
            "roots": lambda: list(self._roots),
            "on_log": lambda params: self._notify("notifications/message", params),
            "on_list_changed": lambda kind: self._notify(f"notifications/{kind}/list_changed", {}),
            "on_resource_updated": lambda uri: self._notify("notifications/resources/updated", {"uri": uri}),
            "on_notification": self._notify,
        }
        if self.target.get("transport") == "http":
            options["on_response"] = self._http_response
        try:
            client = self._connect(options)
        except BaseException as exc:
            self._connect_error = f"{type(exc).__name__}: {exc}"
            self.emit("state", json.dumps(self.info()))
            raise
        with self._lock:
            self._client, self._connect_error = client, None
        self.emit("state", json.dumps(self.info()))

    def disconnect(self) -> None:
        with self._lock:
            client, self._client = self._client, None
            questions, self._questions = list(self._questions.values()), {}
        for question in questions:
            question.answered.set()  # (no answer: the callback cancels)
        if client is not None:
            client.close()
            self.emit("state", json.dumps(self.info()))

    def start(self) -> str:
        """Serve the page on a thread; returns its URL."""
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.2},
                                        name="mcplite-inspector", daemon=True)
        self._thread.start()
        return self.url

    def close(self) -> None:
        """Stop serving, end the event streams and close the client (a stdio server process is stopped)."""
        if self._closed.is_set():
            return
        self._closed.set()
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            listener.put(None)
        self._httpd.shutdown() if self._thread is not None else None
        self._httpd.server_close()
        self.disconnect()

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Block until `close` (True), or ``timeout`` seconds (False)."""
        return self._closed.wait(timeout)

    # ---- events to the page -----------------------------------------------------------------------------
    def emit(self, event: str, data: str) -> None:
        """Send one event to every page listening, and keep it for pages that connect later."""
        with self._lock:
            self._event_id += 1
            block = encode_event(data, event=event, id=str(self._event_id))
            self._history.append(block)
            if len(self._history) > HISTORY:
                del self._history[:len(self._history) - HISTORY]
            listeners = list(self._listeners)
        for listener in listeners:
            listener.put(block)

    def _http_response(self, request: Any, status: int, headers: Dict[str, str]) -> None:
        """An HTTP response's headers, and those of the request it answers as sent, for the log (``http``); the
        page puts them with the message that request carried (``key``: `_wire_key`)."""
        # (request: an HTTPRequest, its method, headers and body read; the layers keep this module off its module)
        self.emit("http", json.dumps({"method": request.method, "status": status, "key": _wire_key(request.body),
                                      "request": _shown_headers(request.headers), "response": _shown_headers(headers)}))

    def _notify(self, method: str, params: Dict[str, Any]) -> None:
        self.emit("notify", json.dumps({"method": method, "params": params}))

    def _listen(self) -> Tuple["queue.Queue[Optional[bytes]]", List[bytes]]:
        listener: "queue.Queue[Optional[bytes]]" = queue.Queue()
        with self._lock:
            self._listeners.append(listener)
            return listener, list(self._history)

    def _unlisten(self, listener: "queue.Queue[Optional[bytes]]") -> None:
        with self._lock:
            if listener in self._listeners:
                self._listeners.remove(listener)

    # ---- the server's questions -------------------------------------------------------------------------
    def _ask(self, method: str, params: Dict[str, Any]) -> Dict[str, Any]:
        """Show the question in the page and wait for the person's answer (cancelled after `answer_timeout`)."""
        question_id = secrets.token_hex(8)
        question = _Question(method, params)
        with self._lock:
            self._questions[question_id] = question
        self.emit("input", json.dumps({"id": question_id, "method": method, "params": params}))
        try:
            question.answered.wait(self.answer_timeout)
        finally:
            with self._lock:
                self._questions.pop(question_id, None)
            self.emit("input_done", json.dumps({"id": question_id}))
        if question.answer is not None:
            return question.answer
        if method == "elicitation/create":
            return {"action": "cancel"}
        raise MCPError(f"no answer to {method} from the page")

    # ---- the API ----------------------------------------------------------------------------------------
    def info(self) -> Dict[str, Any]:
        client = self._client
        shown: Dict[str, Any] = {"connected": client is not None, "target": self.target,
                                 "error": self._connect_error, "roots": self._roots}
        if client is not None:
            transport = client.transport
            kind = getattr(transport, "transport", None)  # an HTTP client's "streamable" or "sse"
            shown.update({
                "protocolVersion": client.protocol_version,
                "era": "envelope" if client.session.enveloped else "handshake",
                "transport": f"http ({kind})" if isinstance(kind, str) else self.target.get("transport", "stdio"),
                "serverInfo": client.server_info, "capabilities": client.server_capabilities,
                "instructions": client.instructions, "clientCapabilities": client.capabilities(),
                "sessionId": getattr(transport, "session_id", None),
            })
        return shown

    def call(self, action: str, body: Dict[str, Any]) -> Any:
        """Run one API action (the part of the path after ``/api/``) with its JSON body."""
        if action == "info":
            return self.info()
        if action == "connect":
            self.connect()
            return self.info()
        if action == "disconnect":
            self.disconnect()
            return self.info()
        if action == "answer":
            with self._lock:
                question = self._questions.get(str(body.get("id")))
            if question is None:
                raise LookupError("that question is no longer waiting")
            answer = body.get("result")
            if not isinstance(answer, dict):
                raise ValueError("result must be an object")
            question.answer = answer
            question.answered.set()
            return {}
        if action == "roots":
            roots = body.get("roots")
            if not isinstance(roots, list) or not all(isinstance(r, dict) and isinstance(r.get("uri"), str)
                                                      for r in roots):
                raise ValueError("roots must be a list of {uri, name?}")
            self._roots = [dict(root) for root in roots]
            client = self._client
            if client is not None:
                client.notify_roots_changed()
            return {"roots": self._roots}
        client = self._client
        if client is None:
            raise ConnectionError("not connected: reconnect first")
        return self._client_call(client, action, body)

    def _client_call(self, client: Client, action: str, body: Dict[str, Any]) -> Any:
        if action == "list":
            kind = body.get("kind")
            listers: Dict[str, Callable[[], List[Any]]] = {
                "tools": client.list_tools, "resources": client.list_resources,
                "templates": client.list_resource_templates, "prompts": client.list_prompts}
            if kind not in listers:
                raise ValueError("kind must be tools, resources, templates or prompts")
            return listers[str(kind)]()
        if action == "call":
            return self._call_tool(client, str(body.get("name")), _object(body.get("arguments")),
                                   str(body.get("callId", "")), bool(body.get("task")))
        if action == "read":
            return client.read_resource(str(body.get("uri")))
        if action == "prompt":
            return client.get_prompt(str(body.get("name")),
                                     {str(k): str(v) for k, v in _object(body.get("arguments")).items()})
        if action == "complete":
            return client.complete(_object(body.get("ref")), str(body.get("argument")), str(body.get("value", "")),
                                   context={str(k): str(v) for k, v in _object(body.get("context")).items()} or None)
        if action == "subscribe":
            client.subscribe_resource(str(body.get("uri")))
            return {}
        if action == "unsubscribe":
            client.unsubscribe_resource(str(body.get("uri")))
            return {}
        if action == "log_level":
            client.set_logging_level(str(body.get("level")))
            return {}
        if action == "ping":
            started = time.monotonic()
            client.ping()
            return {"ms": round((time.monotonic() - started) * 1000, 1)}
        if action == "task_get":
            task = client.task(str(body.get("taskId")))
            info = task.info
            if task.done and info.get("status") == "completed" and "result" not in info:
                info["result"] = dict(task.result())
            return info
        if action == "task_cancel":
            task = client.task(str(body.get("taskId")))
            task.cancel()
            return task.info
        raise LookupError(f"no action {action!r}")

    def _call_tool(self, client: Client, name: str, arguments: Dict[str, Any], call_id: str, as_task: bool) -> Any:
        def progress(done: float, total: Optional[float], message: Optional[str]) -> None:
            self.emit("progress", json.dumps({"callId": call_id, "progress": done, "total": total,
                                              "message": message}))

        if not as_task:
            return client.call_tool(name, arguments, progress=progress)
        task = client.start_tool_call(name, arguments, task=True, progress=progress)

        def polled(handle: Any) -> None:
            self.emit("task", json.dumps({"callId": call_id, "tool": name, **handle.info}))

        if task.task_id is not None:
            polled(task)
            task.wait(None, on_poll=polled)
            polled(task)
        return dict(task.result())

    # ---- checks of each request ---------------------------------------------------------------------------
    def check(self, headers: Dict[str, str], query: Dict[str, List[str]]) -> Optional[Tuple[int, str]]:
        """None when the request may be served, else (status, reason)."""
        try:
            self._guard.check_host_and_origin(headers)
        except Reject as refusal:
            return refusal.status, str(refusal)
        given = headers.get(TOKEN_HEADER.lower()) or (query.get("token") or [""])[0]
        if not hmac.compare_digest(given.encode("utf-8", "replace"), self.token.encode("ascii")):
            return 403, "Forbidden: this page's token is missing or wrong (open the URL mcplite inspect printed)"
        return None


def _wire_key(body: Optional[bytes]) -> Optional[str]:
    """What the page finds the sent message of an HTTP request by (app.js ``wireKey`` computes the same from the
    message): ``request <id>``, ``answer <id>`` or ``notification <method>``, ids as JSON; a batch by its first
    message; None for a request without a message (GET, DELETE)."""
    try:
        message = json.loads(body) if body else None
    except ValueError:
        return None
    if isinstance(message, list):
        message = message[0] if message else None
    if not isinstance(message, dict):
        return None
    if "method" not in message:
        return "answer " + json.dumps(message.get("id"))
    if "id" in message:
        return "request " + json.dumps(message["id"])
    return "notification " + str(message["method"])


def _shown_headers(headers: Mapping[str, str]) -> Dict[str, str]:
    """HTTP headers for the page: redacted as a recording's are, except the session id, which the page shows
    anyway (its connection panel) and which a person watching the wire needs to see change."""
    return {name: value if name.lower() == SESSION_ID_HEADER.lower() else str(redact({name: value})[name])
            for name, value in headers.items()}


def _object(value: Any) -> Dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError("expected a JSON object")
    return value


def _page_file(name: str) -> bytes:
    return (resources.files(__name__) / "page" / name).read_bytes()


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # an event stream's thread never holds up the exit
    inspector: Inspector


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "mcplite-inspector"

    @property
    def inspector(self) -> Inspector:
        return cast(_Server, self.server).inspector

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("inspector: " + format, *args)

    def _refuse(self, status: int, reason: str) -> None:
        self._send(status, json.dumps({"error": {"type": "Refused", "message": reason}}).encode("utf-8"),
                   "application/json")

    def _send(self, status: int, body: bytes, content_type: str, extra: Tuple[Tuple[str, str], ...] = ()) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")  # (the token is in the URL)
        for name, value in extra:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _checked(self) -> Optional[Tuple[str, Dict[str, List[str]]]]:
        parts = urlsplit(self.path)
        query = parse_qs(parts.query)
        headers = {name.lower(): value for name, value in self.headers.items()}
        refusal = self.inspector.check(headers, query)
        if refusal is not None:
            self._refuse(*refusal)
            return None
        return parts.path, query

    def do_GET(self) -> None:
        checked = self._checked()
        if checked is None:
            return
        path, _ = checked
        if path == "/events":
            self._events()
        elif path in _PAGE_FILES:
            name, content_type = _PAGE_FILES[path]
            body = _page_file(name)
            if name == "index.html":  # the page's own files are asked for with the token too
                body = body.replace(b"__TOKEN__", self.inspector.token.encode("ascii"))
            self._send(200, body, content_type, (("Content-Security-Policy", _CSP),))
        else:
            self._refuse(404, "Not Found")

    def do_POST(self) -> None:
        checked = self._checked()
        if checked is None:
            return
        path, _ = checked
        if not path.startswith("/api/"):
            self._refuse(404, "Not Found")
            return
        if "application/json" not in self.headers.get("Content-Type", ""):
            self._refuse(415, "Unsupported Media Type: send application/json")  # (no cross-site simple form)
            return
        declared = self.headers.get("Content-Length") or "0"
        length = int(declared) if declared.isascii() and declared.isdigit() else -1
        if length < 0:  # (a negative length would read to the end of the connection)
            self._refuse(400, "Bad Request: Content-Length must be a number of bytes")
            return
        if length > MAX_BODY:
            self._refuse(413, "Payload Too Large")
            return
        try:
            # The bounded reader: deep nesting is a ValueError answered like any other, not a RecursionError.
            body = json_text.loads(self.rfile.read(length).decode("utf-8") or "{}")
            if not isinstance(body, dict):
                raise ValueError("the body must be a JSON object")
            answer: Dict[str, Any] = {"result": self.inspector.call(path[len("/api/"):], body)}
        except Exception as exc:  # the page shows every failure as it is: a person is looking
            answer = {"error": {"type": type(exc).__name__, "message": str(exc) or type(exc).__name__}}
        self._send(200, json.dumps(answer, default=str).encode("utf-8"), "application/json")

    def _events(self) -> None:
        inspector = self.inspector
        listener, history = inspector._listen()
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(b"".join(history) or encode_comment("ready"))
            self.wfile.flush()
            while not inspector._closed.is_set():
                try:
                    block = listener.get(timeout=KEEPALIVE)
                except queue.Empty:
                    block = encode_comment()
                if block is None:
                    break
                self.wfile.write(block)
                self.wfile.flush()
        except (OSError, ValueError):  # the page went away
            pass
        finally:
            inspector._unlisten(listener)
            self.close_connection = True
