"""`Gateway`: many MCP servers behind one, in any revision on either side.

    gateway = Gateway("my-gateway.json")       # {"mcpServers": {...}} (mcplite.gateway.config)
    gateway.run()                              # stdio; or run(http="127.0.0.1:8000"), wsgi_app(), Client(gateway)

A `Gateway` is a `Server` whose tools, prompts, resources, resource templates and completions are its
upstreams', under their gateway names (`config.UpstreamConfig.front_name`; resources keep their URIs). Each
upstream is a `Client` (`upstream.Upstream`), connected in whatever revision it speaks; each front client
speaks its own. A request to a gateway name is passed on to its upstream as a `bridge.Call`, which carries
progress, log messages and cancellation, and bridges the upstream's questions to the front client whatever
the two eras are (the table in `bridge`). A tool call the front makes as a task runs as a task upstream
(`_send_task`), and a front client's resource subscription is relayed to the upstream serving the URI, whose
updates reach every front subscriber. docs/gateway.md is the guide.

The package, by concern: `config` (the file), `upstream` (one upstream's connection, restarts, questions),
`catalog` (what each upstream serves, under its front names), `bridge` (one forwarded request and its
questions).
"""

from __future__ import annotations

import itertools
import os
import secrets
import threading
from collections.abc import Mapping

from ..errors import (CONNECTION_CLOSED, INTERNAL_ERROR, INVALID_PARAMS, MISSING_REQUIRED_CLIENT_CAPABILITY,
                      RESOURCE_NOT_FOUND,
                      ConnectionClosed, RemoteError, RequestTimeout, RPCError, ResourceNotFound)
from ..protocol import methods
from ..protocol.tasks import EXTENSION_ID as TASKS_EXTENSION
from ..client.input_rounds import InputRounds
from ..server import Server, _results
from ..server.context import Context
from ..schema.validation import ValidationError
from ..server.results import ToolResult, error_result
from .bridge import CALL_KEY, Call, CallTable, Deadlines, gone, unavailable
from .catalog import Catalog
from .config import ConfigError, GatewayConfig, UpstreamConfig, load_config, parse_config
from .upstream import KINDS, Upstream

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Tuple, Union

    from ..session.pending import PendingRequest

__all__ = ["Gateway", "ConfigError", "GatewayConfig", "UpstreamConfig", "load_config", "parse_config"]


class Gateway(Server):
    """A `Server` that serves what its upstream servers serve.

    Args:
        config: the path of a JSON configuration file, its parsed dict, or a `GatewayConfig`
            (`mcplite.gateway.config` says what it holds).
        name, version: the gateway's own `serverInfo`.
        restart_delay, max_restart_delay: seconds before an upstream that failed is started again: the first
            pause, doubling up to the longest.
        start_timeout: seconds `start` waits for the upstreams' first connection (each is in front once it is
            up; a slower one is added when it comes).
        environ: what ``${VAR}`` in the configuration reads (default: this process's environment).
        server_options: the `Server`'s (``page_size``, ``state_keys``, ``supported_versions``...).

    `start` (called by `run`, `wsgi_app` and the first connection) connects the upstreams; `close` ends them.
    Raises `ConfigError` for a configuration that cannot be used, and from `start` for two upstreams that
    give the same front name.
    """

    _takes_requests = True  # a tool call is passed on from the front's reader thread (`_call_later`)

    def __init__(self, config: Union[str, os.PathLike[str], Mapping[str, Any], GatewayConfig], *,
                 name: str = "mcplite-gateway", version: str = "0.1.0", restart_delay: float = 0.5,
                 max_restart_delay: float = 30.0, start_timeout: float = 30.0,
                 environ: Optional[Mapping[str, str]] = None, record: Any = None, **server_options: Any) -> None:
        if isinstance(config, GatewayConfig):
            parsed = config
        elif isinstance(config, Mapping):
            parsed = parse_config(dict(config), environ=environ)
        else:
            parsed = load_config(config, environ)
        super().__init__(name, version, **server_options)
        self.config = parsed
        self.start_timeout = start_timeout
        #: The upstreams by name, in configuration order.
        #: Where every message is recorded (`mcplite.recording`), both ways, for each upstream (under its name)
        #: and for the front (``client`` over stdio, each HTTP session's label); None: nothing is.
        self.recorder: Any = None
        self._closes_recorder = False
        if record is not None:
            from ..transports.recording import Recorder, open_recorder

            if isinstance(record, Recorder):
                self.recorder = record
            else:
                self.recorder = Recorder(record, info={"gateway": {"upstreams": [u.name for u in parsed.upstreams]}})
                self._closes_recorder = True
        self.upstreams: Dict[str, Upstream] = {
            upstream.name: Upstream(upstream, self, restart_delay=restart_delay, max_restart_delay=max_restart_delay,
                                    connect_timeout=start_timeout, recorder=self.recorder)
            for upstream in parsed.upstreams}
        self.calls = CallTable()
        self._deadlines = Deadlines()
        #: Front requests begun the quick way whose upstream asked a question: the usual way, on the thread
        #: started for it, takes their call from here (`forward`). No lock: each request's entry is put by one
        #: thread before it starts the one that pops it, and a dict's put and pop are each atomic.
        self._adopting: Dict[Any, Call] = {}
        self._id_prefix = secrets.token_urlsafe(9) + "."
        self._call_numbers = itertools.count(1)
        self.catalog = Catalog(self)
        self._start_lock = threading.Lock()  # guards _started (start runs once)
        self._started = False

    # ---- lifetime ------------------------------------------------------------------------------------------
    def start(self) -> Gateway:
        """Connect every upstream and wait (up to ``start_timeout``) for each to be up or to have failed once.

        Raises `ConfigError` when two upstreams give the same front name (the gateway is closed then)."""
        with self._start_lock:
            if self._started:
                return self
            self._started = True
        for upstream in self.upstreams.values():
            upstream.start()
        for upstream in self.upstreams.values():
            upstream.settled.wait(self.start_timeout)
        conflict = self.catalog.start_conflict()
        if conflict is not None:
            self.close()
            raise conflict
        self.catalog.started()
        return self

    def close(self) -> None:
        """Cancel the calls in flight and end every upstream (a stdio upstream's process is stopped)."""
        self.calls.cancel_all()
        self._deadlines.close()
        for upstream in self.upstreams.values():
            upstream.close()
        if self._closes_recorder:
            self.recorder.close()

    def __enter__(self) -> Gateway:
        return self.start()

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def create_session(self, transport: Any, *, max_workers: Optional[int] = None) -> Any:
        self.start()
        return super().create_session(transport, max_workers=max_workers)

    def run(self, http: Optional[str] = None, **options: Any) -> None:
        """Serve as `Server.run` does (stdio, or ``http="host:port"``); the front's messages go to the gateway's
        recording too, when it has one."""
        self.start()
        if self.recorder is not None:
            options.setdefault("record", self.recorder)
        try:
            super().run(http, **options)
        finally:
            self.close()

    def wsgi_app(self, **options: Any) -> Any:
        self.start()
        return super().wsgi_app(**options)

    def status(self) -> List[Dict[str, Any]]:
        """One row per upstream: ``name``, ``transport``, ``state``, ``revision``, the counts of ``tools``,
        ``prompts``, ``resources`` and ``templates`` served, and ``error`` (why it is down, or None)."""
        rows = []
        for upstream in self.upstreams.values():
            up = upstream.state == "up"
            rows.append({"name": upstream.name, "transport": upstream.config.transport, "state": upstream.state,
                         "revision": upstream.revision if up else None,
                         **{kind: upstream.counts.get(kind, 0) if up else 0 for kind in KINDS},
                         "error": None if up and not upstream.cause else upstream.describe_down()})
        return rows

    # ---- what the upstreams tell (their supervisor threads) -------------------------------------------------
    def upstream_up(self, upstream: Upstream, listing: Dict[str, List[Dict[str, Any]]]) -> None:
        self.catalog.replace(upstream, listing)

    def upstream_changed(self, upstream: Upstream, kind: str, items: List[Dict[str, Any]]) -> None:
        self.catalog.replace(upstream, {kind: items})

    def upstream_down(self, upstream: Upstream) -> None:
        self.catalog.withdraw(upstream)

    # ---- resource subscriptions ------------------------------------------------------------------------------
    def _serve(self, connection: Any, ctx: Any) -> Any:
        # A subscription (``resources/subscribe``, or a 2026-07-28 listen naming resources) is relayed to the
        # upstream serving each URI before the front server records it; the upstream's updates come back
        # through `notify_resource_updated`, which reaches every front subscriber.
        if ctx.method == methods.RESOURCES_SUBSCRIBE:
            self._relay_subscriptions([ctx.params.get("uri")])
        elif ctx.method == methods.SUBSCRIPTIONS_LISTEN:
            wanted = ctx.params.get("notifications")
            self._relay_subscriptions(wanted.get("resourceSubscriptions") if isinstance(wanted, dict) else None)
        try:
            return super()._serve(connection, ctx)
        except RPCError as exc:
            if exc.code not in (INVALID_PARAMS, RESOURCE_NOT_FOUND):
                raise
            down = self._down_upstream(ctx)
            if down is None:
                raise
            # An entry of an upstream that is down: say so, as a call in flight when it died is told.
            error = unavailable(down.name, down.describe_down())
            if ctx.method != methods.TOOLS_CALL:
                raise error from None
            result = error_result(error.message)  # the model reads why
            if ctx.envelope is not None:
                return _results().answer(result, ctx, self, self._complete_members())
            return {"jsonrpc": "2.0", "id": ctx.id, "result": result}

    def _down_upstream(self, ctx: Any) -> Optional[Upstream]:
        """The upstream, now down, that served what ``ctx`` names (a tool, a prompt, a resource), or None."""
        kind, key = {methods.TOOLS_CALL: ("tools", "name"), methods.PROMPTS_GET: ("prompts", "name"),
                     methods.RESOURCES_READ: ("resources", "uri")}.get(ctx.method, (None, None))
        name = ctx.params.get(key) if key is not None else None
        owner = self.catalog.down_owner(kind, name) if kind is not None and isinstance(name, str) else None
        upstream = self.upstreams.get(owner) if owner is not None else None
        return upstream if upstream is not None and upstream.state != "up" else None

    def _relay_subscriptions(self, uris: Any) -> None:
        if not isinstance(uris, list):
            return
        for uri in uris:
            owner = self.catalog.owner_of_uri(uri) if isinstance(uri, str) else None
            if owner is not None:
                self.upstreams[owner].subscribe(uri)

    # ---- passing a request on -------------------------------------------------------------------------------
    def forward(self, upstream: Upstream, method: str, params: Dict[str, Any], ctx: Context,
                as_task: bool = False) -> Dict[str, Any]:
        """Pass a request on to ``upstream`` and answer its questions through ``ctx``; its result.

        On a 2026-07-28 front the call's id rides in the front's ``requestState`` (`Context.remember`), so the
        front's retry finds the same upstream call here and continues it. ``as_task``: a tool call run as a
        task upstream (where the upstream makes one), waited for here."""
        # A call begun the quick way (`_call_later`) whose upstream asks a question is adopted here, under its id.
        adopted = self._adopting.pop(ctx._request, None) if ctx.round == 0 else None
        call_id: str = ctx.remember(CALL_KEY, self._new_call_id if adopted is None else lambda: adopted.id)
        found = adopted if ctx.round == 0 else self.calls.get(call_id)  # (a first round's id is new)
        if found is not None:
            call = found
            if adopted is not None:
                call.front = ctx
                self.calls.add(call)
        else:
            if ctx.round > 0:
                raise gone(upstream.name)
            if upstream.client is None:
                raise unavailable(upstream.name, upstream.describe_down())
            call = Call(call_id, upstream.name, method, params)
            call.front = ctx  # before anything is sent: the upstream's first progress report finds it
            call.on_finish = upstream.untrack
            self.calls.add(call)
            upstream.track(call)
            if as_task:
                call.hand_off(lambda call: _send_task(upstream, call))
            else:
                _send_from_front(upstream, call, ctx._request.progress_token is not None)
        forget = ctx.on_cancel(call.cancel)
        try:
            result = call.serve(ctx)
        except BaseException as exc:
            if not call.done:  # (Suspend: the call waits here for the front's next round)
                raise
            self.calls.discard(call)
            error = _front_error(upstream, exc)
            if error is exc:
                raise
            raise error from None
        finally:
            forget()
        self.calls.discard(call)
        return _without_envelope_fields(result)

    # ---- the quick way for a tool call: no thread waits for it ----------------------------------------------
    def _take_request(self, connection: Any, ctx: Any) -> bool:
        return ctx.method == methods.TOOLS_CALL and ctx.batch is None and self._call_later(connection, ctx)

    def _call_later(self, connection: Any, ctx: Any) -> bool:
        """A front ``tools/call`` passed on with nothing in the way, on the thread that read it (`_take_request`:
        stdio, memory and the legacy SSE transport; over Streamable HTTP each request has a thread of its own).
        True: the front is answered from the thread that reads the upstream's answer
        (`Session.answer_later`). False leaves it to the usual way (`forward`, on a thread of the front's pool):
        a tool that may run as a task, a 2026-07-28 retry, a tool that is not (or no longer) an upstream's, an
        upstream that is down, and arguments the tool's schema refuses (the usual way says why).

        The usual way has a thread of the pool wait for the upstream's answer and wake to answer: two thread
        switches per call that this way saves. It is the same call: a question the upstream asks on the way
        hands it to a thread of its own that takes the usual way from there (``escalate``; `forward` adopts
        the call), and its outcome is answered as `forward` and `call_tool_of` answer it (`_answer_of`)."""
        params = ctx.params
        name = params.get("name")
        route = self.catalog.tool_routes.get(name) if isinstance(name, str) else None
        if route is None:
            return False
        upstream, upstream_name, support = route
        tool = self._tools.get(name)
        arguments = params.get("arguments")
        if arguments is None:
            arguments = {}
        if tool is None or upstream.client is None or support != "forbidden" or not isinstance(arguments, dict) \
                or "task" in params or "requestState" in params or "inputResponses" in params:
            return False
        try:
            tool.bind(arguments)  # (the front's check of the arguments, as the usual way makes it)
        except ValidationError:
            return False  # the usual way answers what is wrong with them
        call = Call(self._new_call_id(), upstream.name, methods.TOOLS_CALL, {"name": upstream_name,
                                                                           "arguments": arguments})
        call.front = front = Context(self, connection, ctx)
        timeout = upstream.config.timeout
        deadlines = self._deadlines

        def finished(call: Call) -> None:
            deadlines.discard(call, timeout)
            upstream.untrack(call)

        def complete(call: Call) -> None:
            forget()
            connection.session.answer_later(ctx, lambda ctx: self._answer_of(ctx, upstream, call))

        def escalate(call: Call) -> None:
            self._adopting[ctx] = call
            threading.Thread(target=self._serve_asked, args=(connection, ctx, call),
                             name=f"mcplite-gateway-call-{upstream.name}", daemon=True).start()

        call.on_finish = finished
        call.answer_later(complete, escalate)
        upstream.track(call)
        forget = front.on_cancel(call.cancel)
        _send_from_front(upstream, call, ctx.progress_token is not None)
        if not call.done:  # (timed from when it was sent: `Call.expire` needs it sent; one that failed to send
            deadlines.add(call, timeout)  # has ended, and an end racing this leaves an entry `expire` skips)
        return True

    def _serve_asked(self, connection: Any, ctx: Any, call: Call) -> None:
        """Serve a call begun the quick way whose upstream asked a question: the usual way, which adopts it."""
        try:
            connection.session.answer_later(ctx, lambda ctx: self._serve(connection, ctx))
        finally:
            if self._adopting.pop(ctx, None) is not None:  # the usual way never reached it (the tool is gone)
                call.cancel()

    def _answer_of(self, ctx: Any, upstream: Upstream, call: Call) -> Dict[str, Any]:
        """The front's answer to a tool call passed on the quick way (`_call_later`), from its outcome."""
        ok, value = call.outcome
        if ok:
            result = _without_envelope_fields(value)
        else:
            error = _front_error(upstream, value)
            if error.code not in (INTERNAL_ERROR, CONNECTION_CLOSED):
                raise error
            result = error_result(error.message)  # the upstream is down, or failed: the model reads why
        if not ctx.revision.structured_output:
            result.pop("structuredContent", None)
        if ctx.envelope is not None:
            return _results().answer(result, ctx, self, self._complete_members())  # type: ignore[no-any-return]
        return {"jsonrpc": "2.0", "id": ctx.id, "result": result}

    def _new_call_id(self) -> str:
        """A call's id: unique to this gateway process (its random part), and then counted. It rides in a
        2026-07-28 front's ``requestState``, which the front server seals: it need not be unguessable."""
        return f"{self._id_prefix}{next(self._call_numbers)}"

    # the handlers registered for each upstream's entries (`catalog`)
    def call_tool_of(self, upstream: Upstream, name: str, ctx: Context, task_support: str = "forbidden") -> Any:
        """A front ``tools/call``: passed on as a task when the front runs it as one (and the upstream takes
        tasks: ``task_support``, the front tool's, mirrors it), or when the upstream runs the tool only as one."""
        arguments = _front_params(ctx).get("arguments") or {}
        as_task = task_support != "forbidden" and (ctx.task_id is not None or task_support == "required")
        try:
            result = self.forward(upstream, methods.TOOLS_CALL, {"name": name, "arguments": arguments}, ctx,
                                  as_task)
        except RPCError as exc:
            if exc.code not in (INTERNAL_ERROR, CONNECTION_CLOSED):
                raise
            result = error_result(exc.message)  # the upstream is down, or failed: the model reads why
        value = ToolResult()
        value.clear()
        value.update(result)
        return value

    def get_prompt_of(self, upstream: Upstream, name: str, ctx: Context) -> Any:
        arguments = _front_params(ctx).get("arguments")
        params: Dict[str, Any] = {"name": name}
        if arguments:
            params["arguments"] = arguments
        return self.forward(upstream, methods.PROMPTS_GET, params, ctx)

    def read_resource_of(self, upstream: Upstream, ctx: Context) -> Any:
        uri = _front_params(ctx).get("uri")
        try:
            result = self.forward(upstream, methods.RESOURCES_READ, {"uri": uri}, ctx)
        except RPCError as exc:
            # Not found is told with another code from 2026-07-28 on: the front's revision picks it again.
            if exc.code == RESOURCE_NOT_FOUND or (exc.code == -32602 and upstream.revision == "2026-07-28"):
                raise ResourceNotFound(str(uri), exc.message) from None
            raise
        return list(result.get("contents") or [])

    def complete_of(self, upstream: Upstream, ref: Dict[str, Any], argument: str, value: str,
                    chosen: Dict[str, Any]) -> Any:
        client = upstream.client
        if client is None:
            raise unavailable(upstream.name, upstream.describe_down())
        try:
            return client.complete(ref, argument, value, context=chosen or None, timeout=upstream.config.timeout)
        except RemoteError as refusal:
            raise RPCError(refusal.code, refusal.message, refusal.data) from None
        except (ConnectionClosed, RequestTimeout) as exc:  # it went down, or hangs: say which and why
            raise unavailable(upstream.name, f"{exc or type(exc).__name__}; {upstream.describe_down()}") from None


class _Plan:
    """How one upstream request is sent: its session, params, HTTP headers, input rounds and progress."""

    __slots__ = ("session", "params", "headers", "rounds", "progress")

    def __init__(self, upstream: Upstream, call: Call, params: Optional[Dict[str, Any]],
                 endings: Tuple[str, ...], progress: bool) -> None:
        client = upstream.client
        if client is None:
            raise ConnectionClosed(upstream.describe_down())
        self.session = session = client.session
        self.params = params = dict(call.params if params is None else params)
        self.headers: Optional[Dict[str, str]] = None
        self.rounds: Optional[InputRounds] = None
        # A progress token upstream only for a front request that carried one: a request with a progress
        # callback is settled through the upstream client's dispatcher thread (after its reports), which
        # costs a thread hop (and often a thread start) per call.
        self.progress = call.progress if progress else None
        if session.enveloped:
            if call.method == methods.TOOLS_CALL:
                # The tool's Mcp-Param-* headers, as Client.call_tool would send them (client hook wished: a
                # public way to send a planned call with its headers and get its PendingRequest).
                self.headers = client._param_headers(params)
            if call.method in (methods.TOOLS_CALL, methods.PROMPTS_GET, methods.RESOURCES_READ):
                self.rounds = InputRounds(params, call.ask, client.max_input_rounds, endings)

    def send(self, call: Call) -> PendingRequest:
        pending = self.session.send_request(call.method, self.params, progress=self.progress, headers=self.headers)
        call.watch(pending)
        return pending


def _send(upstream: Upstream, call: Call, params: Optional[Dict[str, Any]] = None,
          endings: Tuple[str, ...] = ("complete",), progress: bool = True) -> Dict[str, Any]:
    """Send ``call`` (or ``params`` in its place) to ``upstream`` and run its 2026-07-28 input rounds, asking
    the call's front each question, until a result of the kinds ``endings`` names (on a driver thread)."""
    plan = _Plan(upstream, call, params, endings, progress)
    return _rounds(upstream, call, plan, plan.send(call).result(upstream.config.timeout))


def _rounds(upstream: Upstream, call: Call, plan: _Plan, result: Dict[str, Any]) -> Dict[str, Any]:
    """The input rounds after the upstream's ``result``, until a final one (on a driver thread)."""
    while True:
        step = plan.rounds.after(result) if plan.rounds is not None else None
        if step is None:
            return result
        plan.params, pause = step
        if pause:
            threading.Event().wait(pause)  # the upstream is working and asked nothing: ask again a little later
        result = plan.send(call).result(upstream.config.timeout)


def _send_from_front(upstream: Upstream, call: Call, progress: bool) -> None:
    """Send ``call`` from the front handler's thread, which waits for it in `Call.serve`: its answer finishes
    the call on the thread that settles it, so a call that one request answers starts no thread. An answer
    that asks for more (input rounds, or a tool the upstream runs only as a task) hands the call to a driver
    thread (`Call.hand_off`)."""
    try:
        plan = _Plan(upstream, call, None, ("complete",), progress)
        pending = plan.send(call)
    except BaseException as exc:
        call.finish(False, exc)
        return

    def settled(call: Call, pending: PendingRequest) -> None:
        # (On the upstream's reader or dispatcher thread: nothing here may wait. Input rounds answer questions,
        # which wait for the front: a driver thread runs them.)
        try:
            result = pending.result(0)
        except RemoteError as refusal:
            if refusal.code == MISSING_REQUIRED_CLIENT_CAPABILITY and call.method == methods.TOOLS_CALL \
                    and TASKS_EXTENSION in str(refusal.data):
                call.hand_off(lambda call: _send_task(upstream, call))  # it runs only as a task
            else:
                call.finish(False, refusal)
            return
        except BaseException as exc:
            call.finish(False, exc)
            return
        if plan.rounds is None or (isinstance(result, dict) and result.get("resultType", "complete") == "complete"):
            call.finish(True, result)
        else:
            call.hand_off(lambda call: _rounds(upstream, call, plan, result))

    call.send_from_front(pending, upstream.config.timeout, settled)


def _send_task(upstream: Upstream, call: Call) -> Dict[str, Any]:
    """Send the tool call ``call`` to ``upstream`` as a task and wait for the task's result.

    2026-07-28: the call declares the tasks extension and the upstream decides (a task, or the result at once);
    2025-11-25: the call carries a ``task`` param. The task's questions reach the call's front: inlined in
    ``tasks/get`` (2026-07-28, answered by `Call.ask`), or as requests tagged with the task (2025-11-25,
    `Upstream.answer` finds the call by the task's id). A cancel from the front cancels the task."""
    from ..client.tasks import CORE, EXTENSION, TASK_WAIT, Task, with_extension

    client = upstream.client
    if client is None:
        raise ConnectionClosed(upstream.describe_down())
    timeout = upstream.config.timeout
    if client.session.enveloped:
        form = EXTENSION
        result = _send(upstream, call, with_extension(call.params, client.capabilities()), ("complete", "task"))
        info: Any = result if result.get("resultType") == "task" else None
    else:
        form = CORE
        result = _send(upstream, call, {**call.params, "task": {}})
        info = result.get("task")
    if not isinstance(info, dict) or not isinstance(info.get("taskId"), str):
        return result  # answered at once

    def send(method: str, params: Dict[str, Any], wait: Optional[float]) -> Dict[str, Any]:
        return client.request(method, params, timeout=timeout if wait is None else wait)

    # (client hook wished: Client.start_tool_call(..., task=True, answer=...) returning this handle, so that
    # the task's questions go to this call rather than the client's callbacks.)
    task = Task(str(call.params.get("name")), form, info, send=send, answer=call.ask, capabilities=client.capabilities)
    call.watch_task(task)
    return dict(task.result(TASK_WAIT))


def _front_error(upstream: Upstream, exc: BaseException) -> RPCError:
    """What the front is answered for a call that ended with ``exc``: the upstream's own JSON-RPC error as it
    was, "unavailable" for a connection that ended, and an internal error naming the upstream for the rest."""
    if isinstance(exc, RemoteError):
        return RPCError(exc.code, exc.message, exc.data)
    if isinstance(exc, ConnectionClosed):
        return unavailable(upstream.name, f"{exc or 'its connection ended'}; {upstream.describe_down()}")
    if isinstance(exc, RPCError):
        return exc
    return RPCError(INTERNAL_ERROR, f"upstream {upstream.name!r}: {type(exc).__name__}: {exc}")


def _front_params(ctx: Context) -> Dict[str, Any]:
    """The front request's params, not copied (`Context.request_params` copies them for user code): the gateway
    only reads them and sends them on, and the copy costs more than the rest of the call's own work."""
    return ctx._request.params


def _without_envelope_fields(result: Dict[str, Any]) -> Dict[str, Any]:
    """An upstream's 2026-07-28 result without what belongs to its own answer (its serverInfo, its caching
    hints): the gateway's answer adds its own."""
    kept = dict(result)
    for key in ("resultType", "ttlMs", "cacheScope"):
        kept.pop(key, None)
    meta = kept.get("_meta")
    if isinstance(meta, dict):
        meta = {key: value for key, value in meta.items() if not key.startswith("io.modelcontextprotocol/")}
        if meta:
            kept["_meta"] = meta
        else:
            del kept["_meta"]
    return kept
