"""`Client`: connect to an MCP server and call it with plain blocking methods.

    with Client.stdio(["python3", "server.py"]) as client:
        client.call_tool("add", {"a": 1, "b": 2})

A `Client` is a context manager: entering connects and runs the handshake, leaving closes the connection
(and stops a stdio server process). Every method blocks until the answer arrives or its ``timeout``
(default: the client's) runs out. The server's requests (sampling, elicitation, roots) and notifications
reach the callbacks given to the constructor, on the session's threads, never the caller's.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import collections
import time
import weakref

from .._log import log
from .._once import once
from .._options import keyword_names, refuse_unknown
from .._sync import DEFAULT
from ..errors import (
    HEADER_MISMATCH,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION,
    CapabilityError,
    LocalProtocolError,
    RemoteError,
    RemoteProtocolError,
    RequestTimeout,
    ResponseLost,
)
from ..protocol import methods
from ..protocol.tasks import EXTENSION_ID as TASKS_EXTENSION
from ..protocol.versions import choose_envelope_version
from ..session.client import ClientSession
from ..session.endpoint import RequestContext
from ..session.pending import DEFAULT_TIMEOUT, PendingRequest
from ..transports import Transport
from .cache import ResultCache, cache_key
from .callbacks import InputCallbacks
from .input_rounds import InputRounds  # (small, and imported here rather than per call)

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see __init__)
if TYPE_CHECKING:
    from typing import (
        Any,
        Callable,
        Dict,
        FrozenSet,
        Hashable,
        Iterator,
        List,
        Literal,
        Mapping,
        MutableMapping,
        NamedTuple,
        Optional,
        Sequence,
        Tuple,
        Union,
        overload,
    )

    from ..protocol import types as t
    from ..session.pending import ProgressCallback
    from .callbacks import ElicitationCallback, RootsSource, SamplingCallback
    from .listen import Subscription, SubscriptionRegistry
    from .skills import LoadedSkill
    from .tasks import Task
    from ..transports.recording import RecordTo

__all__ = ["Client"]


CLIENT_INFO: Dict[str, Any] = {"name": "mcplite", "version": "0.1.0"}

if TYPE_CHECKING:
    class _Call(NamedTuple):
        """How one call runs, decided once at the top (`Client._plan`), before anything is sent; `Client._run`
        takes it down to the session and its answer back up."""

        method: str
        params: Optional[Dict[str, Any]]  # the first request's, whole (the tasks extension, a resume's answers)
        timeout: Any
        progress: Optional[ProgressCallback]
        headers: Optional[Mapping[str, str]]  # extra HTTP headers of each request (a tool call's Mcp-Param-*)
        task: Optional[str]  # "extension" (2026-07-28), "core" (2025-11-25), or None: not a task
        rounds: Optional[str]  # "answer" (run them), "return" (the first result as it came), None: no rounds
        enveloped: bool  # 2026-07-28: the refusals and broken streams `_run` sends a request again for apply
else:
    _Call = collections.namedtuple("_Call", "method params timeout progress headers task rounds enveloped")
_new_call = tuple.__new__  # a `_Call` from the tuple of its fields, without a named tuple's Python constructor


#: Requests sent again once (new id) when their 2026-07-28 response stream breaks: they change nothing on the
#: server. A tools/call is sent again only when the listed tool says it is read-only or idempotent.
REPEATABLE = frozenset({
    methods.SERVER_DISCOVER, methods.TOOLS_LIST, methods.PROMPTS_LIST, methods.RESOURCES_LIST,
    methods.RESOURCES_TEMPLATES_LIST, methods.RESOURCES_READ, methods.PROMPTS_GET, methods.COMPLETE,
})


@once
def _validation() -> Any:
    """The schema validator, loaded by its first use (most clients never check an output schema) and kept: no
    import statement per call (tests/test_hot_paths.py)."""
    from ..schema import validation

    return validation

class Client:
    """A connection to one MCP server.

    Args:
        target: a `Server` (served in memory, in this process), an ``http(s)://`` URL (Streamable HTTP, or
            the legacy HTTP+SSE transport for old servers), or a `Transport`. For a subprocess over stdio
            use `Client.stdio`.
        client_info: our `Implementation` (name, version, ...).
        protocol_version: "auto" (the default): ask ``server/discover`` and speak 2026-07-28 where the server
            does, else the handshake (see `client.era`); a 2026-07-28 version: speak it without asking; a
            handshake version (e.g. "2025-11-25"): offer it in ``initialize`` (the server may answer with an
            older one we also speak). ``client.protocol_version`` says what was chosen.
        probe_timeout: seconds the ``server/discover`` probe waits before taking the server for a legacy one
            (at most what is left of the connect's timeout).
        max_input_rounds: how many input-required rounds one call may take (2026-07-28) before giving up.
        timeout: the default bound, in seconds, of each call (all its requests together: see `call_tool`) and
            of the whole connect (`connect`); None: no bound. Over HTTP it also bounds connecting and waiting
            for each answer's headers.
        sampling: answers `sampling/createMessage` (params dict -> `CreateMessageResult` dict).
        sampling_features: the sampling sub-capabilities to declare (2025-11-25): "tools" (the callback
            handles ``tools`` and ``toolChoice``) and/or "context" (it honours ``includeContext``). A
            request with ``tools`` is refused (-32602) unless "tools" is declared.
        elicitation: answers `elicitation/create` (params dict -> `ElicitResult` dict).
        elicitation_modes: the elicitation modes to declare (2025-11-25): "form" and/or "url".
        roots: the roots to offer, or a function returning them.
        on_log: called with each `notifications/message` params dict.
        on_resource_updated: called with the URI of a subscribed resource that changed.
        on_list_changed: called with "tools", "resources" or "prompts" when the server's list changed.
        on_notification: called with (method, params) for every other notification.
        cache: reuse results the server marks reusable (2026-07-28 ``ttlMs``/``cacheScope``: discover, list
            pages, resource reads; see `client.cache`); False: always ask. Servers default to ``ttlMs: 0``, so
            this changes nothing unless the server opts in. ``client.clear_cache()`` forgets what was kept.
        record: record every message of the connection, both ways, as JSON lines (`mcplite.recording`): a
            path (created with mode 0600; the client closes it when it closes), or a `Recorder` (its giver's to
            close: several connections may share one file).
        record_as: the peer name the messages are recorded under (default: the server's command, its URL's
            host and port, or an in-process server's name).
        http_options: keyword arguments for the HTTP transport: ``headers``, ``auth``, ``ssl_context``,
            ``cafile``, ``transport`` ("auto", "streamable" or "sse"), ``on_response``; see
            `http_client.HTTPClientTransport`.

    A keyword that is none of these is a `TypeError` naming it and the closest real one.
    """

    def __init__(self, target: Any = None, *, client_info: Optional[Dict[str, Any]] = None,
                 protocol_version: str = "auto", timeout: float = DEFAULT_TIMEOUT,
                 probe_timeout: float = 10.0, max_input_rounds: int = 10,
                 sampling: Optional[SamplingCallback] = None, sampling_features: Sequence[str] = (),
                 elicitation: Optional[ElicitationCallback] = None, elicitation_modes: Sequence[str] = ("form",),
                 roots: Optional[RootsSource] = None,
                 on_log: Optional[Callable[[Dict[str, Any]], None]] = None,
                 on_resource_updated: Optional[Callable[[str], None]] = None,
                 on_list_changed: Optional[Callable[[str], None]] = None,
                 on_notification: Optional[Callable[[str, Dict[str, Any]], None]] = None,
                 cache: bool = True, record: Optional[RecordTo] = None, record_as: Optional[str] = None,
                 **http_options: Any) -> None:
        if protocol_version != "auto":
            from ..protocol.versions import is_supported

            if not is_supported(protocol_version):
                raise ValueError(f"protocol_version must be 'auto' or a revision this library speaks, "
                                 f"not {protocol_version!r}")
        self._transport = _transport_for(target, http_options, timeout)
        if record is not None:
            self._transport = _recording(self._transport, record, record_as or _peer_name(target, self._transport))
        elif record_as is not None:
            raise TypeError("Client() got record_as= without record=: it names the peer of a recording")
        self.client_info = {**CLIENT_INFO, **(client_info or {})}
        self._offered_version = protocol_version
        self.timeout = timeout
        self.probe_timeout = probe_timeout
        self.max_input_rounds = max_input_rounds
        #: The server key era verdicts are kept under.
        self._key: Optional[Hashable] = _server_key_of(target, self._transport)
        self._callbacks = InputCallbacks(sampling=sampling, sampling_features=sampling_features,
                                         elicitation=elicitation, elicitation_modes=elicitation_modes, roots=roots)
        self._on_log = on_log
        self._on_resource_updated = on_resource_updated
        self._on_list_changed = on_list_changed
        self._on_notification = on_notification
        self._cache: Optional[ResultCache] = ResultCache() if cache else None
        self._output_schemas: Optional[Dict[str, Optional[Dict[str, Any]]]] = None
        # The listed tools' execution.taskSupport (2025-11-25), and the task handles by id (for the status
        # notifications that wake their waits): weak, a handle the caller dropped is not kept.
        self._task_supports: Optional[Dict[str, Optional[str]]] = None
        self._task_handles: MutableMapping[str, Task] = weakref.WeakValueDictionary()
        #: The listed tools annotated read-only or idempotent: safe to call again after a broken stream.
        self._repeatable_tools: FrozenSet[str] = frozenset()
        self._started = False
        self.session = self._new_session(self._transport)
        # Mcp-Param-* maps of the tools listed on an envelope-era session (tool name -> path -> header).
        self._param_maps: Optional[Dict[str, Any]] = None  # (None: not listed yet)
        # 2026-07-28: the listen streams open, and the one the client keeps for its callbacks and
        # `subscribe_resource` (the "managed" stream), with the resources it names.
        self._listens: Optional[SubscriptionRegistry] = None
        self._managed: Optional[Subscription] = None
        self._managed_uris: List[str] = []

    def _new_session(self, transport: Transport) -> ClientSession:
        return ClientSession(transport, handle_request=self._handle_request,
                             handle_notification=self._handle_notification, default_timeout=self.timeout,
                             name="mcplite-client")

    @classmethod
    def stdio(cls, argv: Sequence[str], *, env: Optional[Dict[str, str]] = None, inherit_env: bool = False,
              cwd: Optional[str] = None, stderr: Any = None, shutdown_timeout: Optional[float] = None,
              max_line_size: Optional[int] = None, **options: Any) -> "Client":
        """A client for a server process spawned from ``argv`` and spoken to over its stdin/stdout.

        The server inherits only the harmless part of this process's environment (PATH, HOME, USER, the locale,
        the temporary directory: `stdio.INHERITED_ENV_VARS`), never its secrets; ``env`` adds to that, and
        ``inherit_env=True`` passes the whole environment. ``stderr`` is None (pass the server's stderr
        through), a file, or a callable taking each line. ``max_line_size``: the largest message read from the
        server, in bytes (default 64 MiB; see `stdio.StdioClientTransport`).
        """
        if cls.__init__ is Client.__init__:  # (a subclass's own options are its own business)
            refuse_unknown("Client.stdio", options, keyword_names(Client.__init__) + keyword_names(Client.stdio))
        from ..transports.stdio import DEFAULT_MAX_LINE_SIZE, DEFAULT_SHUTDOWN_TIMEOUT, StdioClientTransport
        transport = StdioClientTransport(argv, env=env, inherit_env=inherit_env, cwd=cwd, stderr=stderr,
                                         shutdown_timeout=DEFAULT_SHUTDOWN_TIMEOUT if shutdown_timeout is None
                                         else shutdown_timeout,
                                         max_line_size=DEFAULT_MAX_LINE_SIZE if max_line_size is None
                                         else max_line_size)
        return cls(transport, **options)

    # ---- lifetime ---------------------------------------------------------------------------------------
    def connect(self, timeout: Any = DEFAULT) -> "Client":
        """Start the transport and run the handshake (what ``with`` does).

        ``timeout`` (default: the client's ``timeout``; None: no bound) bounds the whole connect, as one
        deadline each step takes what is left of: starting the server, the revision probe (at most
        ``probe_timeout`` of it) and the handshake. When it runs out, `RequestTimeout` names that figure and
        the step it ran out in. A connect that fails closes the connection at once: a stdio server is stopped
        without the usual grace (`stdio.ABORT_SHUTDOWN_TIMEOUT` a step).

        Raises `LocalProtocolError` if this client was connected before (a client connects once).
        """
        if self._started:
            raise LocalProtocolError("this client is already connected (a Client connects once)")
        self._started = True
        from . import era  # (not at import: a client that never connects does not need it)

        deadline = era.Deadline(self.timeout if timeout is DEFAULT else timeout)
        transport = self._transport
        transport.set_deadline(deadline.end)
        try:
            self.session.start()
            era.connect(self, deadline)
            if self.session.enveloped and self._server_notifies():
                self._listen_for_callbacks(deadline.left("opening the listen stream, subscriptions/listen"))
        except BaseException as exc:
            transport.abort()
            self.close()
            if deadline.passed and _timed_out(exc):
                raise deadline.expired() from exc
            raise
        finally:
            transport.set_deadline(None)
        return self

    def close(self) -> None:
        """Close the connection; pending calls fail with `ConnectionClosed`, listen streams end ("local")."""
        if self._listens is not None:
            self._listens.closing()
        self.session.close()

    def __enter__(self) -> "Client":
        # `with Client(...).connect() as client:` is fine: entering does not connect twice.
        return self if self._started else self.connect()

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def capabilities(self) -> Dict[str, Any]:
        """The `ClientCapabilities` we declare: what the callbacks given to the constructor can answer."""
        return self._callbacks.capabilities()

    @property
    def transport(self) -> Transport:
        """The transport in use (for HTTP, ``client.transport.transport`` says "streamable" or "sse")."""
        return self._transport

    # ---- what the handshake told us ---------------------------------------------------------------------
    @property
    def protocol_version(self) -> Optional[str]:
        return self.session.revision.version if self.session.revision else None

    @property
    def discover_result(self) -> Optional[Dict[str, Any]]:
        """The server's ``server/discover`` answer (2026-07-28), or None (a handshake; a pin not yet asked)."""
        return self.session.discover_result

    @property
    def server_info(self) -> Dict[str, Any]:
        self._learn()
        return self.session.server_info

    @property
    def server_capabilities(self) -> Dict[str, Any]:
        self._learn()
        return self.session.peer_capabilities

    @property
    def instructions(self) -> Optional[str]:
        self._learn()
        return self.session.instructions

    def _learn(self) -> None:
        """Under a 2026-07-28 pin nothing was asked at connect: ask ``server/discover`` on first need."""
        session = self.session
        if session.enveloped and session.discover_result is None and session.revision is not None:
            session.learn(self._discover(self.timeout, cached=True))

    def _discover(self, timeout: Any, cached: bool = False) -> Dict[str, Any]:
        """``server/discover`` at the session's revision, sent again once if its response stream broke;
        ``cached``: a result the cache still holds will do (not for `ping`, which asks to hear the server)."""
        session = self.session
        assert session.revision is not None
        if cached:
            return self._through_cache(methods.SERVER_DISCOVER, None, lambda: self._discover(timeout))
        try:
            return session.discover(self.client_info, self.capabilities(), version=session.revision.version,
                                    timeout=timeout)
        except ResponseLost:
            log.info("the response stream of server/discover broke; sending it again")
        return session.discover(self.client_info, self.capabilities(), version=session.revision.version,
                                timeout=timeout)

    # ---- generic requests -------------------------------------------------------------------------------
    def request(self, method: str, params: Optional[Dict[str, Any]] = None, *, timeout: Any = DEFAULT,
                progress: Optional[ProgressCallback] = None,
                headers: Optional[Mapping[str, str]] = None) -> Dict[str, Any]:
        """Send any request and return its raw result.

        On 2026-07-28, a request refused with ``-32022`` (the server wants another revision, or refuses the
        first request whatever it says) is sent again once at the newest revision both sides name; one whose
        HTTP response stream broke (`ResponseLost`) is sent again once when it is safe to repeat (`REPEATABLE`,
        or a tool listed as read-only or idempotent), else `ResponseLost` is raised: the request may or may
        not have run. ``headers``: extra HTTP headers for this request alone (2026-07-28; ``Mcp-Param-*``)."""
        return self._run(_new_call(_Call, (method, params, timeout, progress, headers, None, None,
                                           self.session.enveloped)))

    def _through_cache(self, method: str, params: Optional[Dict[str, Any]], fetch: Callable[[], Dict[str, Any]],
                       storable: Callable[[], bool] = lambda: True) -> Dict[str, Any]:
        """``fetch()``'s result, or the cache's while it holds a fresh one (2026-07-28; `client.cache`);
        what ``fetch`` returns is kept when its hints allow it and ``storable()`` says yes."""
        cache = self._cache
        key = cache_key(method, params) if cache is not None and self.session.enveloped else None
        if key is None:
            return fetch()
        assert cache is not None
        context = self._auth_context()
        result = cache.get(key, context)
        if result is None:
            result = fetch()
            if storable():
                cache.put(key, result, context)
        return result

    def _auth_context(self) -> Hashable:
        """Who the server sees us as, for ``cacheScope: "private"`` entries: the transport says (HTTP: the
        credentials in use), else one context for the connection."""
        context = getattr(self._transport, "auth_context", None)
        return context() if context is not None else None

    def clear_cache(self) -> None:
        """Forget every result the cache kept (the next discover, list or read asks the server)."""
        if self._cache is not None:
            self._cache.clear()

    # ---- how a call runs: decided once at the top (`_plan`), then down once (`_run`) ------------------------
    def _plan(self, method: str, params: Dict[str, Any], timeout: Any, progress: Optional[ProgressCallback] = None,
              input_required: str = "answer", input_responses: Optional[Dict[str, Any]] = None,
              request_state: Optional[str] = None, task: Optional[bool] = False, ttl_ms: Optional[int] = None,
              meta: Optional[Dict[str, Any]] = None) -> _Call:
        """How a call will run: its era (the session's now), its rounds (2026-07-28: "answer", a task's always,
        or "return") and a tool call's task form (``task``: True asked for, None only where the tool must be a
        task, False never): "extension" (2026-07-28: declared, the server decides) or "core" (2025-11-25: asked
        for a tool the server lists as taking tasks; the tools are listed once to know). ``meta``: the caller's."""
        if input_required not in ("answer", "return"):
            raise ValueError(f"input_required must be 'answer' or 'return', not {input_required!r}")
        enveloped = self.session.enveloped
        if meta:
            params["_meta"] = meta
        if input_responses is not None or request_state is not None:
            if not enveloped:
                raise LocalProtocolError("input_responses and request_state belong to 2026-07-28; this session "
                                         f"speaks {self.protocol_version}")
            params = {**params, **({"inputResponses": input_responses} if input_responses is not None else {}),
                      **({"requestState": request_state} if request_state is not None else {})}
        form: Optional[str] = None  # (tasks.EXTENSION or tasks.CORE: a task)
        headers: Optional[Dict[str, str]] = None
        if method == methods.TOOLS_CALL:
            if enveloped:
                if task:
                    from .tasks import EXTENSION, with_extension

                    form, params = EXTENSION, with_extension(params, self.capabilities())
                headers = self._param_headers(params)
            elif task is not False:
                support = self._core_task_support(params["name"], timeout)
                if support == "required" or (task and support == "optional"):
                    from .tasks import CORE

                    form = CORE
                    params["task"] = {} if ttl_ms is None else {"ttl": ttl_ms}
        return _new_call(_Call, (method, params, timeout, progress, headers, form,
                                 ("answer" if form else input_required) if enveloped else None, enveloped))

    def _run(self, call: _Call, rounds_taken: Optional[List[int]] = None) -> Dict[str, Any]:
        """The one way down for a call: each request (a new id each time) to the session, its result back here,
        until its input rounds (`client.input_rounds`) end; ``rounds_taken`` gets an item per round. On 2026-07-28 a
        request is sent again once for each of: ``-32022`` naming revisions we speak, a broken response stream
        (`ResponseLost`) when safe to repeat, a tool call's ``Mcp-Param-*`` headers refused (``-32020``: the
        tools are listed afresh first). The call's ``timeout`` bounds all of its requests together: each one
        waits what is left of it; the time the callbacks take to answer a round is not counted."""
        method, params, timeout, progress, headers, task, rounds, enveloped = call
        session = self.session
        if timeout is DEFAULT:
            timeout = session.default_timeout
        started = time.monotonic()  # (less the callbacks' time, once a round was answered)
        left = timeout
        sent = 0  # requests sent so far
        again: Tuple[Any, ...] = ()  # what this request was sent again for
        input_rounds: Optional[InputRounds] = None
        while True:
            if sent and timeout is not None:
                left = timeout - (time.monotonic() - started)
                if left <= 0:
                    raise RequestTimeout(f"{method} timed out after {timeout:g} s, over {sent} requests")
            sent += 1
            try:
                result = session.send_request(method, params, progress=progress, headers=headers).result(left)
            except RequestTimeout:
                if sent == 1:
                    raise
                raise RequestTimeout(f"{method} timed out after {timeout:g} s, over {sent} requests") from None
            except ResponseLost:
                if ResponseLost in again or not (method in REPEATABLE or (
                        method == methods.TOOLS_CALL and params and params.get("name") in self._repeatable_tools)):
                    raise
                log.info("the response stream of %s broke; sending it again", method)
                again += (ResponseLost,)
            except RemoteError as refusal:
                if not enveloped or refusal.code in again:
                    raise
                if refusal.code == UNSUPPORTED_PROTOCOL_VERSION:
                    data = refusal.data if isinstance(refusal.data, dict) else {}
                    version = choose_envelope_version(data.get("supported") or [])
                    if version is None:
                        # It speaks no 2026-07-28 revision after all: a server remembered to (another one now
                        # answers at this URL or command) is probed again at the next connect.
                        from . import era  # (an error path: loaded by the connect already)

                        era.forget(self._key)
                        raise
                    session.adopt(version, session.discover_result, self.client_info, self.capabilities())
                elif refusal.code == HEADER_MISMATCH and method == methods.TOOLS_CALL and rounds \
                        and params is not None:  # (a planned tool call: a `request` keeps the caller's headers)
                    self.list_tools(timeout=left if timeout is None else max(timeout - (time.monotonic() - started),
                                                                             0.0))
                    headers = self._param_headers(params)
                else:
                    raise
                again += (refusal.code,)
            else:
                if rounds != "answer":
                    return result
                if input_rounds is None:
                    assert call.params is not None  # (a call with rounds was planned, with its params)
                    input_rounds = InputRounds(call.params, self._callbacks.answer_input_request,
                                               self.max_input_rounds, ("complete", "task") if task else ("complete",))
                answering = time.monotonic()
                step = input_rounds.after(result)
                if step is None:
                    return result
                started += time.monotonic() - answering  # the callbacks' time is not the server's
                params, pause = step
                again = ()
                if pause:
                    time.sleep(pause)
                if rounds_taken is not None:
                    rounds_taken.append(1)

    def send_request(self, method: str, params: Optional[Dict[str, Any]] = None, *,
                     progress: Optional[ProgressCallback] = None) -> PendingRequest:
        """Send any request without waiting; the `PendingRequest` can be waited on or cancelled."""
        return self.session.send_request(method, params, progress=progress)

    def notify(self, method: str, params: Optional[Dict[str, Any]] = None) -> None:
        self.session.notify(method, params)

    def ping(self, *, timeout: Any = DEFAULT) -> None:
        """Check the server is alive (2026-07-28 has no ping: ``server/discover`` is the liveness check)."""
        session = self.session
        if session.enveloped and session.revision is not None:
            self._discover(timeout)
        else:
            session.ping(timeout)

    # ---- tools ------------------------------------------------------------------------------------------
    def iter_tools(self, *, timeout: Any = DEFAULT) -> Iterator[t.Tool]:
        """Every tool, fetching pages as the iteration reaches them."""
        return self._iterate(methods.TOOLS_LIST, "tools", timeout)

    def list_tools(self, *, timeout: Any = DEFAULT) -> List[t.Tool]:
        """Every tool (all pages). Also remembers their output schemas for `call_tool`'s check.

        On 2026-07-28 a tool whose ``x-mcp-header`` annotations are invalid is left out, with a warning
        naming it and the reason (streamable-http.mdx: a client must not call it); the headers of the others
        are sent with their calls (``Mcp-Param-*``)."""
        tools = list(self.iter_tools(timeout=timeout))
        if self.session.enveloped:
            tools = self._keep_headed(tools)
        self._output_schemas = {tool["name"]: tool.get("outputSchema") for tool in tools}
        self._task_supports = {tool["name"]: _task_support_of(tool) for tool in tools}
        self._repeatable_tools = frozenset(tool["name"] for tool in tools if _repeatable_tool(tool))
        return tools

    def _keep_headed(self, tools: List[t.Tool]) -> List[t.Tool]:
        """The tools whose ``x-mcp-header`` annotations are valid; their header maps are kept for calls."""
        from ..protocol.mcp_headers import header_map

        kept: List[t.Tool] = []
        maps: Dict[str, Any] = {}
        for tool in tools:
            try:
                maps[tool["name"]] = header_map(tool.get("inputSchema"))
            except ValueError as problem:
                log.warning("tool %r left out: its x-mcp-header annotations are invalid: %s", tool.get("name"),
                            problem)
            else:
                kept.append(tool)
        self._param_maps = maps
        return kept

    def call_tool(self, name: str, arguments: Optional[Dict[str, Any]] = None, *, timeout: Any = DEFAULT,
                  progress: Optional[ProgressCallback] = None, meta: Optional[Dict[str, Any]] = None,
                  raise_on_error: bool = False, input_required: str = "answer",
                  input_responses: Optional[Dict[str, Any]] = None,
                  request_state: Optional[str] = None, task: bool = False) -> t.CallToolResult:
        """Call a tool and return its `CallToolResult`: the way to call a tool (`start_tool_call` sends one
        without waiting).

        ``task=True`` runs the call as a task where the server can and waits for its result;
        a tool the server only runs as a task (``-32021`` naming the tasks extension on 2026-07-28, a tool
        listed ``taskSupport: "required"`` by a 2025-11-25 server that declares task support: the tools are
        listed once to know) is called that way without being asked.

        A tool that fails returns a result with ``isError: true``; ``raise_on_error=True`` raises
        `RemoteError` instead. When the tool declares an ``outputSchema``, ``structuredContent`` is checked
        against it (`RemoteProtocolError` when it does not match).

        On 2026-07-28 a tool that needs input answers ``input_required``: the questions go to the same
        ``sampling``, ``elicitation`` and ``roots`` callbacks as a server's requests do on older revisions,
        and the call is sent again with the answers, as many rounds as it takes (up to ``max_input_rounds``).

        ``timeout`` (default: the client's) bounds the whole call, its rounds' requests together (the time the
        callbacks take to answer, a person's say, is not counted); given explicitly, it bounds the wait for a
        task too, else a task is waited for up to an hour (`tasks.TASK_WAIT`). `RequestTimeout` when it runs out
        (a task goes on: `task` finds it again by id).

        Args:
            progress: called with ``(progress, total, message)`` for each progress report, before the
                result is returned.
            input_required: "answer" (the default: run the rounds), or "return": give back the first result
                as it came, ``input_required`` included (``resultType``, ``inputRequests``, ``requestState``),
                to be answered later.
            input_responses, request_state: resume such a flow: the answers (by ``inputRequests`` key) and
                the ``requestState`` string exactly as received.
        """
        started = time.monotonic()
        call = self._plan(methods.TOOLS_CALL, {"name": name, "arguments": arguments or {}}, timeout, progress,
                          input_required, input_responses, request_state, task or None, None, meta)
        try:
            result = self._run(call)
        except RemoteError as refusal:
            if call.task is not None or not _needs_tasks(refusal):
                raise
            call = self._plan(methods.TOOLS_CALL, {"name": name, "arguments": arguments or {}}, timeout, progress,
                              task=True, meta=meta)
            result = self._run(call)
        if call.task is not None:
            result = dict(self._task_result(self._task_of(call, name, result), timeout, started))
        elif call.rounds == "return" and result.get("resultType", "complete") != "complete":
            return result  # type: ignore[return-value]  # input_required="return"
        return self._checked_tool_result(name, result, timeout, raise_on_error)

    # ---- tasks ----------------------------------------------------------------------------------------------
    def start_task(self, name: str, arguments: Optional[Dict[str, Any]] = None, *, ttl_ms: Optional[int] = None,
                   timeout: Any = DEFAULT, meta: Optional[Dict[str, Any]] = None,
                   progress: Optional[ProgressCallback] = None) -> Task:
        """Deprecated (it goes in mcplite 0.2): ``start_tool_call(name, arguments, task=True, ...)``."""
        import warnings

        warnings.warn("Client.start_task is deprecated: use client.start_tool_call(name, arguments, task=True) "
                      "(it goes in mcplite 0.2)", DeprecationWarning, stacklevel=2)
        return self.start_tool_call(name, arguments, task=True, ttl_ms=ttl_ms, timeout=timeout, meta=meta,
                                    progress=progress)

    def task(self, task_id: str, *, timeout: Any = DEFAULT) -> Task:
        """A handle for a task started earlier (by this client, another one, or before a restart): its state
        is read now with ``tasks/get``. `RemoteError` -32602 when the server does not know it."""
        from .tasks import CORE, EXTENSION

        handle = self._task_handle("", EXTENSION if self.session.enveloped else CORE, {"taskId": task_id}, timeout)
        handle.status()
        return handle

    def _task_handle(self, name: str, form: str, info: Dict[str, Any], timeout: Any,
                     result: Optional[Dict[str, Any]] = None) -> Task:
        from .tasks import Task

        def send(method: str, params: Dict[str, Any], wait: Optional[float]) -> Dict[str, Any]:
            return self.request(method, params, timeout=timeout if wait is None else wait)

        handle = Task(name, form, info, send=send,
                      answer=self._callbacks.answer_input_request, capabilities=self.capabilities, result=result)
        if handle.task_id is not None:
            self._task_handles[handle.task_id] = handle
        return handle

    def _task_of(self, call: _Call, name: str, result: Dict[str, Any]) -> Task:
        """The handle of a tool call made with ``task=True`` (or that had to be a task), from its first answer:
        the task the server made, or a handle already done holding the result it answered directly."""
        from .tasks import CORE, DIRECT, EXTENSION

        if call.task == EXTENSION and result.get("resultType") == "task":
            return self._task_handle(name, EXTENSION, result, call.timeout)
        if call.task == CORE:
            created = result.get("task")
            if isinstance(created, dict) and isinstance(created.get("taskId"), str):
                return self._task_handle(name, CORE, created, call.timeout)
            if "content" not in result:
                raise RemoteProtocolError(f"tools/call as a task answered neither a task nor a result: {result!r}")
        # A direct answer (no task form for this tool here, or the server answered at once): checked as call_tool
        # checks one.
        result = dict(self._checked_tool_result(name, result, call.timeout, False))
        return self._task_handle(name, DIRECT, {"status": "completed"}, call.timeout, result)

    @staticmethod
    def _task_result(handle: Task, timeout: Any, started: float) -> Dict[str, Any]:
        """A task's result for `call_tool`: waited for up to what is left of an explicit ``timeout``, else up to
        `tasks.TASK_WAIT`."""
        from .tasks import TASK_WAIT

        if timeout is DEFAULT:
            return dict(handle.result(TASK_WAIT))
        try:
            return dict(handle.result(None if timeout is None else max(timeout - (time.monotonic() - started), 0.0)))
        except RequestTimeout:
            raise RequestTimeout(f"tools/call {handle.name} timed out after {timeout:g} s: its task {handle.task_id} "
                                 "goes on (client.task(task_id) finds it again)") from None

    def _checked_tool_result(self, name: str, result: Dict[str, Any], timeout: Any,
                             raise_on_error: bool) -> t.CallToolResult:
        """A finished tool call's result as `call_tool` returns it, however it came: an error result raised
        (``raise_on_error``) or returned as it is, else its structured content checked."""
        if not result.get("isError"):
            self._check_structured(name, result, timeout)
        elif raise_on_error:
            raise RemoteError(0, _result_text(result) or f"tool {name} failed", result)
        return result  # type: ignore[return-value]

    def _core_task_support(self, name: str, timeout: Any) -> Optional[str]:
        """A tool's listed ``execution.taskSupport`` (the tools are listed when not known yet) if this 2025-11-25
        session's server takes tool calls as tasks (``tasks.requests.tools.call``), else None."""
        declared: Any = self.session.peer_capabilities  # (a handshake's: known since initialize)
        for key in ("tasks", "requests", "tools", "call"):
            declared = declared.get(key) if isinstance(declared, dict) else None
        revision = self.session.revision
        if not isinstance(declared, dict) or revision is None or not revision.core_tasks:
            return None  # (most servers)
        if self._task_supports is None or name not in self._task_supports:
            self.list_tools(timeout=timeout)
        return (self._task_supports or {}).get(name)

    def _param_headers(self, params: Dict[str, Any]) -> Optional[Dict[str, str]]:
        """The ``Mcp-Param-*`` headers of a tool call, from the tool's listed annotations (None: not listed)."""
        maps = self._param_maps
        param_map = maps.get(params["name"]) if maps is not None else None
        if not param_map:
            return None
        from ..protocol.mcp_headers import HeaderValueError, param_headers

        try:
            return param_headers(param_map, params.get("arguments"))
        except HeaderValueError as exc:
            raise LocalProtocolError(f"tool {params['name']}: {exc}") from None

    if TYPE_CHECKING:  # what start_tool_call returns depends on ``task`` (typing is not imported at run time)
        @overload
        def start_tool_call(self, name: str, arguments: Optional[Dict[str, Any]] = None, *,
                            task: Literal[False] = False, progress: Optional[ProgressCallback] = None,
                            meta: Optional[Dict[str, Any]] = None) -> PendingRequest: ...

        @overload
        def start_tool_call(self, name: str, arguments: Optional[Dict[str, Any]] = None, *, task: Literal[True],
                            progress: Optional[ProgressCallback] = None, meta: Optional[Dict[str, Any]] = None,
                            ttl_ms: Optional[int] = None, timeout: Any = DEFAULT) -> Task: ...

        @overload
        def start_tool_call(self, name: str, arguments: Optional[Dict[str, Any]] = None, *, task: bool,
                            progress: Optional[ProgressCallback] = None, meta: Optional[Dict[str, Any]] = None,
                            ttl_ms: Optional[int] = None, timeout: Any = DEFAULT) -> Union[PendingRequest, Task]: ...

    def start_tool_call(self, name: str, arguments: Optional[Dict[str, Any]] = None, *, task: bool = False,
                        progress: Optional[ProgressCallback] = None, meta: Optional[Dict[str, Any]] = None,
                        ttl_ms: Optional[int] = None, timeout: Any = DEFAULT) -> Union[PendingRequest, Task]:
        """Send a tool call without waiting for its result, and return a handle to it.

        ``task=False`` (the default): a `PendingRequest`, the request in flight on this connection:
        ``result(timeout)`` waits for it (`finish_tool_call` checks it as `call_tool` does), ``cancel()``
        sends ``notifications/cancelled``. It lives as long as the connection.

        ``task=True``: a `client.tasks.Task` (``status()``, ``wait()``, ``result()``, ``cancel()``,
        ``progress``, ``task_id``): the call runs as a task where the server can, which the server keeps, so
        that it can be polled, cancelled or found again by id (`task`) from another connection. On
        2026-07-28 the call declares the tasks extension and the server decides: a task, or (a tool that is
        never a task, or one that finished at once) the result itself, in a handle that is already done;
        questions the tool asks before its task starts are answered with the callbacks, as in `call_tool`.
        On 2025-11-25 the call asks for a task (``task: {ttl}``; ``ttl_ms`` is a wish the server may lower)
        when the server declares task support and lists the tool as taking tasks (the tools are listed once
        if they were not); otherwise, and on older revisions, the tool is called directly. ``timeout`` bounds
        the requests sent now, together; waiting for the task is `Task.wait`'s. A direct answer is checked as
        `call_tool` checks one (``structuredContent`` against the tool's ``outputSchema``). ``progress`` hears the progress the
        call reports while it is answered directly (a task's progress is `Task.progress`, read at each poll).
        """
        if ttl_ms is not None and not task:
            raise ValueError("ttl_ms is the lifetime of a task: it needs task=True")
        call = self._plan(methods.TOOLS_CALL, {"name": name, "arguments": arguments or {}}, timeout, progress,
                          task=task, ttl_ms=ttl_ms, meta=meta)
        if task:
            return self._task_of(call, name, self._run(call))
        return self.session.send_request(call.method, call.params, progress=progress, headers=call.headers)

    def finish_tool_call(self, name: str, pending: PendingRequest, *, timeout: Any = DEFAULT,
                         raise_on_error: bool = False) -> t.CallToolResult:
        """Wait for a call from `start_tool_call` and check its result as `call_tool` does."""
        return self._checked_tool_result(name, pending.result(timeout), timeout, raise_on_error)

    def _check_structured(self, name: str, result: Dict[str, Any], timeout: Any) -> None:
        revision = self.session.revision
        if revision is None or not revision.structured_output:
            return
        if self._output_schemas is None or name not in self._output_schemas:
            self.list_tools(timeout=timeout)  # learn the tool's output schema once
        schema = (self._output_schemas or {}).get(name)
        if schema is None:
            return
        if "structuredContent" not in result:
            raise RemoteProtocolError(f"tool {name} declares an outputSchema but returned no structuredContent")
        validation = _validation()
        try:
            validation.validate(result["structuredContent"], schema)
        except validation.ValidationError as exc:
            raise RemoteProtocolError(f"tool {name} returned structuredContent that does not match its "
                                      f"outputSchema: {exc}") from None

    # ---- resources --------------------------------------------------------------------------------------
    def iter_resources(self, *, timeout: Any = DEFAULT) -> Iterator[t.Resource]:
        return self._iterate(methods.RESOURCES_LIST, "resources", timeout)

    def list_resources(self, *, timeout: Any = DEFAULT) -> List[t.Resource]:
        return list(self.iter_resources(timeout=timeout))

    def iter_resource_templates(self, *, timeout: Any = DEFAULT) -> Iterator[t.ResourceTemplate]:
        return self._iterate(methods.RESOURCES_TEMPLATES_LIST, "resourceTemplates", timeout)

    def list_resource_templates(self, *, timeout: Any = DEFAULT) -> List[t.ResourceTemplate]:
        return list(self.iter_resource_templates(timeout=timeout))

    def read_resource(self, uri: str, *, timeout: Any = DEFAULT, input_required: str = "answer",
                      input_responses: Optional[Dict[str, Any]] = None,
                      request_state: Optional[str] = None) -> t.ReadResourceResult:
        """The resource's `ReadResourceResult` (``{"contents": [...]}``). On 2026-07-28 a read may ask for
        input: the rounds run as for `call_tool` (same ``input_required``, ``input_responses``,
        ``request_state``)."""
        call = self._plan(methods.RESOURCES_READ, {"uri": uri}, timeout, None, input_required, input_responses,
                          request_state)
        if call.rounds != "answer":  # a handshake revision (nothing is cached), or the caller answers the rounds
            return self._run(call)  # type: ignore[return-value]
        rounds: List[int] = []  # a read that took rounds is a retry's answer: never kept (nor a resumed one)
        return self._through_cache(call.method, call.params, lambda: self._run(call, rounds),  # type: ignore
                                   storable=lambda: not rounds)

    def subscribe_resource(self, uri: str, *, timeout: Any = DEFAULT) -> None:
        """Ask for `on_resource_updated` calls when ``uri`` changes. On 2026-07-28 the client's own listen
        stream is opened again naming it (``resources/subscribe`` is gone)."""
        if self.session.enveloped:
            if uri not in self._managed_uris:
                self._managed_uris.append(uri)
                self._relisten(timeout)
            return
        self.request(methods.RESOURCES_SUBSCRIBE, {"uri": uri}, timeout=timeout)

    def unsubscribe_resource(self, uri: str, *, timeout: Any = DEFAULT) -> None:
        if self.session.enveloped:
            if uri in self._managed_uris:
                self._managed_uris.remove(uri)
                self._relisten(timeout)
            return
        self.request(methods.RESOURCES_UNSUBSCRIBE, {"uri": uri}, timeout=timeout)

    # ---- 2026-07-28: listen streams -----------------------------------------------------------------------
    def listen(self, *, tools: bool = False, prompts: bool = False, resources: bool = False,
               uris: Sequence[str] = (), timeout: Any = DEFAULT) -> Subscription:
        """Open a ``subscriptions/listen`` stream (2026-07-28): a `Subscription` to iterate for ``(method,
        params)`` notifications: list changes of the kinds asked for, updates of the resources named. It is
        open once the server acknowledged it (``subscription.honored``: what the server will deliver;
        ``timeout`` bounds that wait only). Close it, or use it in a ``with`` block.

        Raises:
            LocalProtocolError: the session speaks a handshake revision (use the ``on_list_changed`` and
                ``on_resource_updated`` callbacks and `subscribe_resource` there).
        """
        if not self.session.enveloped:
            raise LocalProtocolError(f"listen is 2026-07-28's; this session speaks {self.protocol_version}: use "
                                     "on_list_changed=, on_resource_updated= and subscribe_resource()")
        return self._listen_registry().open(self.session, tools=tools, prompts=prompts, resources=resources,
                                            uris=uris, timeout=timeout)

    def _listen_registry(self) -> SubscriptionRegistry:
        if self._listens is None:
            from .listen import SubscriptionRegistry  # (only 2026-07-28 clients that listen load it)

            self._listens = SubscriptionRegistry()
        return self._listens

    def _server_notifies(self) -> bool:
        """Whether the server declared a notification the callbacks would hear: a ``listChanged`` (for
        ``on_list_changed``) or ``resources.subscribe`` (for ``on_resource_updated``). 2026-07-28 has no
        capability of its own for ``subscriptions/listen``: these flags are what a listen can deliver. Under a
        2026-07-28 pin the capabilities are not known yet (nothing was asked): a listen is tried then."""
        if self._on_list_changed is None and self._on_resource_updated is None:
            return False
        if self.session.discover_result is None:
            return True
        declared = self.session.peer_capabilities
        if self._on_list_changed is not None and any(
                isinstance(declared.get(kind), dict) and declared[kind].get("listChanged")
                for kind in ("tools", "prompts", "resources")):
            return True
        resources = declared.get("resources")
        return self._on_resource_updated is not None and isinstance(resources, dict) \
            and bool(resources.get("subscribe"))

    def _listen_for_callbacks(self, timeout: Any) -> None:
        """Open the managed listen stream on connecting. A server that refuses ``subscriptions/listen`` as an
        unknown method sends no notifications: the connection goes on without them."""
        try:
            self._relisten(timeout)
        except RemoteError as refusal:
            if refusal.code != METHOD_NOT_FOUND:
                raise
            log.debug("the server refused subscriptions/listen (%s): no list_changed or resource updates",
                      refusal)

    def _relisten(self, timeout: Any) -> None:
        """(Re)open the managed stream behind the callbacks and `subscribe_resource`, then close the old one."""
        old = self._managed
        self._managed = self._listen_registry().open(
            self.session, tools=self._on_list_changed is not None, prompts=self._on_list_changed is not None,
            resources=self._on_list_changed is not None,
            uris=self._managed_uris if self._on_resource_updated is not None else (), timeout=timeout,
            sink=self._dispatch_notification)
        if old is not None:
            old.close()

    # ---- prompts ----------------------------------------------------------------------------------------
    def iter_prompts(self, *, timeout: Any = DEFAULT) -> Iterator[t.Prompt]:
        return self._iterate(methods.PROMPTS_LIST, "prompts", timeout)

    def list_prompts(self, *, timeout: Any = DEFAULT) -> List[t.Prompt]:
        return list(self.iter_prompts(timeout=timeout))

    def get_prompt(self, name: str, arguments: Optional[Dict[str, str]] = None, *,
                   timeout: Any = DEFAULT, input_required: str = "answer",
                   input_responses: Optional[Dict[str, Any]] = None,
                   request_state: Optional[str] = None) -> t.GetPromptResult:
        """The prompt's `GetPromptResult`. On 2026-07-28 it may ask for input: the rounds run as for
        `call_tool`."""
        params: Dict[str, Any] = {"name": name}
        if arguments:
            params["arguments"] = {key: value if isinstance(value, str) else str(value)
                                   for key, value in arguments.items()}
        return self._run(self._plan(methods.PROMPTS_GET, params, timeout, None, input_required,  # type: ignore
                                    input_responses, request_state))

    # ---- skills (the extension io.modelcontextprotocol/skills, SEP-2640; see client.skills) -------------
    @property
    def skills_extension(self) -> Optional[Dict[str, Any]]:
        """The server's settings of the skills extension (``{}``, ``{"directoryRead": true}``), or None when
        it does not declare the extension."""
        from ..protocol.skills import EXTENSION

        settings = (self.server_capabilities.get("extensions") or {}).get(EXTENSION)
        return settings if isinstance(settings, dict) else None

    def _need_skills(self, directory_read: bool = False) -> None:
        settings = self.skills_extension
        if settings is None:
            raise CapabilityError("the server does not declare the skills extension (io.modelcontextprotocol/skills)")
        if directory_read and settings.get("directoryRead") is not True:
            raise CapabilityError("the server does not declare directoryRead: resources/directory/read is not "
                                  "to be called")

    def iter_skills(self, *, timeout: Any = DEFAULT) -> Iterator[t.Skill]:
        """Every skill entry the server lists (``skills/list``), fetching pages as the iteration reaches them."""
        self._need_skills()
        return self._iterate("skills/list", "skills", timeout)

    def list_skills(self, *, timeout: Any = DEFAULT) -> List[t.Skill]:
        """Every skill entry the server lists (all pages): ``uri``, ``frontmatter``, ``resources``. No file is
        read (the extension forbids fetching ahead of need). An empty listing does not prove the server has no
        skills: a URI is enough to `get_skill` or `load_skill` one.

        Raises `CapabilityError` when the server does not declare the extension.
        """
        return list(self.iter_skills(timeout=timeout))

    def get_skill(self, skill: str, *, timeout: Any = DEFAULT) -> t.Skill:
        """One skill's current entry (``skills/get``): ``skill`` is the URI of its ``SKILL.md``, or a name,
        looked up in the listing (an error when several skills have it). No file is read.

        Raises `CapabilityError` (no skills extension), `RemoteError` (-32602: no such skill served),
        `LocalProtocolError` (a name no listed skill or several have).
        """
        self._need_skills()
        uri = skill if "://" in skill else self._skill_uri(skill, timeout)
        result = self.request("skills/get", {"uri": uri}, timeout=timeout)
        entry = result.get("skill")
        if not isinstance(entry, dict):
            raise RemoteProtocolError(f"skills/get for {uri} returned no skill object")
        return entry  # type: ignore[return-value]

    def _skill_uri(self, name: str, timeout: Any) -> str:
        from .skills import find_by_name

        entry = find_by_name(self.list_skills(timeout=timeout), name)
        if entry is None:
            raise LocalProtocolError(f"the server lists no skill named {name!r}; give its URI")
        return entry["uri"]

    def load_skill(self, skill: Any, *, timeout: Any = DEFAULT) -> LoadedSkill:
        """Load a skill: read its ``SKILL.md`` now and verify it against the entry (its size and SHA-256
        digest, then its frontmatter field by field). ``skill`` is an entry (from `list_skills`), a URI or a
        name (then `get_skill` fetches the current entry). Supporting files are read later, when asked, with
        the returned `LoadedSkill`'s ``read``, and verified against the same entry.

        Raises `SkillVerificationError` on any mismatch (the content is not used), `CapabilityError` when the
        server does not declare the extension.
        """
        from .skills import load

        entry: Any = skill if isinstance(skill, dict) else self.get_skill(skill, timeout=timeout)
        return load(entry, lambda uri: self.read_skill_bytes(uri, timeout=timeout))

    def read_skill_bytes(self, uri: str, *, timeout: Any = DEFAULT) -> bytes:
        """The raw bytes of a skill file, read with ``resources/read`` and NOT verified: use `load_skill` (and
        its ``read``), which check them against the skill's entry."""
        from ..protocol.skills import contents_bytes

        return contents_bytes(self.read_resource(uri, timeout=timeout).get("contents"), uri)

    def read_directory(self, uri: str, *, timeout: Any = DEFAULT) -> List[t.Resource]:
        """The direct children of a directory resource (``resources/directory/read``, all pages); a child
        directory has ``mimeType`` ``inode/directory``. Only against a server that declares ``directoryRead``
        (`CapabilityError` otherwise); a URI that is not a directory is answered -32602 (`RemoteError`).
        A listing is a live view, not part of any skill entry: it grants no file to a loaded skill."""
        self._need_skills(directory_read=True)
        return list(self._iterate("resources/directory/read", "resources", timeout, {"uri": uri}))

    # ---- completion and logging -------------------------------------------------------------------------
    def complete(self, ref: Dict[str, Any], argument: str, value: str = "", *,
                 context: Optional[Dict[str, str]] = None, timeout: Any = DEFAULT) -> Dict[str, Any]:
        """Completions for one argument: ``ref`` is ``{"type": "ref/prompt", "name"}`` or
        ``{"type": "ref/resource", "uri"}``. Returns the ``completion`` object (``values``, ...)."""
        params: Dict[str, Any] = {"ref": ref, "argument": {"name": argument, "value": value}}
        if context:
            params["context"] = {"arguments": context}
        completion: Dict[str, Any] = self.request(methods.COMPLETE, params, timeout=timeout)["completion"]
        return completion

    def set_logging_level(self, level: str, *, timeout: Any = DEFAULT) -> None:
        """Ask for log messages at ``level`` and above (``on_log``). On 2026-07-28 the level rides in every
        later request's ``_meta`` (no request is sent now)."""
        if level not in methods.LOGGING_LEVELS:
            raise LocalProtocolError(f"unknown log level {level!r}; use one of {', '.join(methods.LOGGING_LEVELS)}")
        if self.session.enveloped:
            self.session.log_level = level
            return
        self.request(methods.LOGGING_SET_LEVEL, {"level": level}, timeout=timeout)

    def notify_roots_changed(self) -> None:
        """Tell the server our roots changed (it will ask for them again). On 2026-07-28 roots are asked per
        request, so there is nothing to tell."""
        if not self.session.enveloped:
            self.notify(methods.ROOTS_LIST_CHANGED)

    # ---- pagination -------------------------------------------------------------------------------------
    def _iterate(self, method: str, key: str, timeout: Any, fixed: Optional[Dict[str, Any]] = None) -> Iterator[Any]:
        """Every item of every page; ``fixed``: the params every page's request carries besides its cursor."""
        cursor: Optional[str] = None
        seen = set()
        while True:
            params = {**(fixed or {}), "cursor": cursor} if cursor is not None else fixed
            page = self._through_cache(method, params,
                                       lambda: self.request(method, params, timeout=timeout))  # noqa: B023
            yield from page.get(key) or []
            cursor = page.get("nextCursor")
            if not cursor:
                return
            if cursor in seen:  # a server that hands out the same cursor again would loop us forever
                raise RemoteProtocolError(f"{method}: the server repeated cursor {cursor!r}")
            seen.add(cursor)

    # ---- the server's requests and notifications (session threads) --------------------------------------
    def _handle_request(self, ctx: RequestContext) -> Dict[str, Any]:
        return self._callbacks.answer_input_request(ctx.method, ctx.params)

    def _handle_notification(self, method: str, params: Dict[str, Any]) -> None:
        if self._cache is not None and (method in _LIST_CHANGED or method == methods.RESOURCE_UPDATED):
            self._cache.drop_for(method, params)  # whoever the notification is for, what it names is stale
        listens = self._listens
        if listens is not None and listens.deliver(method, params):
            return  # on a listen stream (2026-07-28): its subscription has it
        self._dispatch_notification(method, params)

    def _dispatch_notification(self, method: str, params: Dict[str, Any]) -> None:
        """A notification to the callbacks given to the constructor."""
        if method == TASK_STATUS:
            handle = self._task_handles.get(params.get("taskId"))  # type: ignore[arg-type]
            if handle is not None:
                handle.notified(params)
        if method == methods.LOG_MESSAGE and self._on_log is not None:
            self._on_log(params)
        elif method == methods.RESOURCE_UPDATED and self._on_resource_updated is not None:
            self._on_resource_updated(params.get("uri", ""))
        elif method in _LIST_CHANGED:
            if method == methods.TOOLS_LIST_CHANGED:
                self._output_schemas = None
            if self._on_list_changed is not None:
                self._on_list_changed(_LIST_CHANGED[method])
        elif self._on_notification is not None:
            self._on_notification(method, params)


_LIST_CHANGED = {methods.TOOLS_LIST_CHANGED: "tools", methods.RESOURCES_LIST_CHANGED: "resources",
                 methods.PROMPTS_LIST_CHANGED: "prompts"}


#: 2025-11-25: a task's status changed (routed to its `Task` handle, then to ``on_notification``).
TASK_STATUS = "notifications/tasks/status"


def _needs_tasks(refusal: RemoteError) -> bool:
    """Whether a refusal is the ``-32021`` of a tool that runs only as a task (2026-07-28 tasks extension)."""
    if refusal.code != MISSING_REQUIRED_CLIENT_CAPABILITY or not isinstance(refusal.data, dict):
        return False
    required = refusal.data.get("requiredCapabilities")
    extensions = required.get("extensions") if isinstance(required, dict) else None
    return isinstance(extensions, dict) and TASKS_EXTENSION in extensions


def _task_support_of(tool: t.Tool) -> Optional[str]:
    """A listed tool's ``execution.taskSupport`` (2025-11-25), or None."""
    execution: Any = tool.get("execution")
    support = execution.get("taskSupport") if isinstance(execution, dict) else None
    return support if isinstance(support, str) else None


def _repeatable_tool(tool: t.Tool) -> bool:
    annotations = tool.get("annotations")
    return isinstance(annotations, dict) and (annotations.get("readOnlyHint") is True
                                              or annotations.get("idempotentHint") is True)


def _timed_out(exc: BaseException) -> bool:
    """Whether a step of a connect failed for want of time: no answer in time, or (HTTP) no response."""
    from ..errors import HTTPError

    return isinstance(exc, TimeoutError) or (isinstance(exc, HTTPError) and exc.status == 0)


def _result_text(result: Dict[str, Any]) -> str:
    return "\n".join(block.get("text", "") for block in result.get("content", []) if block.get("type") == "text")


def _server_key_of(target: Any, transport: Transport) -> Optional[Hashable]:
    """What era verdicts are kept under (see `client.era`): the URL, or the command that spawns the server;
    None for an in-process server or a transport of the caller's (nothing says two are the same server)."""
    if isinstance(target, str):
        return ("http", target)
    identity = getattr(transport, "identity", None)
    return ("stdio", identity) if identity is not None else None


def _peer_name(target: Any, transport: Transport) -> str:
    """The peer name a client records its server under: its URL's host and port, its command, or its name."""
    if isinstance(target, str):
        from urllib.parse import urlsplit

        parts = urlsplit(target)
        return f"{parts.hostname}:{parts.port}" if parts.port is not None else str(parts.hostname)
    argv = getattr(transport, "argv", None)
    if argv:
        return " ".join(str(arg) for arg in argv)
    name = getattr(target, "name", None)
    return name if isinstance(name, str) else "server"


def _recording(transport: Transport, record: Any, peer: str) -> Transport:
    """``transport``, recorded under ``peer`` (``record``: a path, opened here and closed with the transport,
    or a `Recorder`, its giver's)."""
    from ..transports.recording import RecordingTransport, open_recorder  # only clients that record load it

    recorder, opened = open_recorder(record)
    return RecordingTransport(transport, recorder.peer(peer), owns_recorder=opened)


def _transport_for(target: Any, http_options: Dict[str, Any], timeout: float) -> Transport:
    is_url = isinstance(target, str) and target.startswith(("http://", "https://"))
    if http_options:
        from ..transports.http_client import HTTPClientTransport  # (the names of its options)

        http_names = tuple(name for name in keyword_names(HTTPClientTransport.__init__) if name != "url")
        refuse_unknown("Client", http_options, keyword_names(Client.__init__) + http_names)
        if not is_url:
            raise TypeError(f"Client() got HTTP options ({', '.join(sorted(http_options))}) for {target!r}: they "
                            "need an http(s) URL")
    if isinstance(target, Transport):
        return target
    serve_over: Any = getattr(target, "connect", None)
    if callable(serve_over):
        # A `Server` (or anything that serves over a transport given to its `connect`), in this process: known by
        # what it does rather than by its class, so that the client layer does not import the server layer.
        from ..transports.memory import memory_pair  # only in-process clients (tests, mostly) need it

        client_end, server_end = memory_pair()
        serve_over(server_end)
        return client_end
    if is_url:
        from ..transports.http_client import HTTPClientTransport  # only those who use HTTP pay for importing it
        return HTTPClientTransport(target, timeout=timeout, **http_options)
    raise TypeError(f"Client() takes a Server, an http(s):// URL or a Transport, not {target!r}; "
                    "use Client.stdio(argv) for a subprocess")
