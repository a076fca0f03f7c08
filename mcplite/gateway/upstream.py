"""One server behind the gateway: its connection (a `Client`), kept up by a supervisor thread.

The supervisor connects, lists what the server serves and hands it to the gateway (`Owner.upstream_up`), then
waits for the server's list changes (each kind is listed again) or the connection's end. A server that will not
start, or dies, is withdrawn (`Owner.upstream_down`: its tools leave the front's lists) and connected again
after a pause that doubles from ``restart_delay`` up to ``max_restart_delay``; the pause starts over once a
connection succeeds. The gateway never dies because an upstream did.

The server's questions reach `Upstream.answer`: on 2026-07-28 the driver of the call that got ``input_required``
asks its own `Call`; a handshake-era server's requests carry no link to the call that caused them over stdio
(nor, as mcplite's client reports them, over HTTP), so they go to the one call in flight on this upstream, and
are refused when several are (docs/gateway.md, "Questions").
"""

from __future__ import annotations

import collections
import threading

from .._log import log
from ..errors import INTERNAL_ERROR, MCPError, RPCError
from ..protocol import methods
from ..protocol.tasks import EXTENSION_ID as TASKS_EXTENSION
from ..protocol.tasks import FORBIDDEN, OPTIONAL, RELATED_TASK_KEY, REQUIRED

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Deque, Dict, List, Optional, Set

    from ..client import Client
    from .bridge import Call
    from .config import UpstreamConfig

__all__ = ["Upstream", "KINDS", "STDERR_LINES"]

#: What an upstream serves, each listed on its own: tools, prompts, resources, resource templates.
KINDS = ("tools", "prompts", "resources", "templates")
#: How many of an upstream's last stderr lines are kept for the error that reports it down.
STDERR_LINES = 20
#: Which kinds a list_changed names ("resources" changes both lists of resources).
_CHANGED = {"tools": ("tools",), "prompts": ("prompts",), "resources": ("resources", "templates")}


class Upstream:
    """One upstream server: its configuration, its client while connected, its state and its calls in flight.

    ``state`` is "starting", "up", "down" or "closed"; ``cause`` says why it is down; ``revision`` is the
    revision negotiated; ``counts`` how many tools, prompts, resources and templates it serves."""

    def __init__(self, config: UpstreamConfig, owner: Any, *, restart_delay: float = 0.5,
                 max_restart_delay: float = 30.0, connect_timeout: float = 30.0, recorder: Any = None) -> None:
        self.config = config
        self.recorder = recorder  # records this upstream's messages under its name (None: not recorded)
        self.name = config.name
        self._owner = owner  # the Gateway: upstream_up, upstream_changed, upstream_down, log
        self.restart_delay = restart_delay
        self.max_restart_delay = max_restart_delay
        self.connect_timeout = connect_timeout
        self.client: Optional[Client] = None
        self.state = "starting"
        self.cause: Optional[str] = None
        self.revision: Optional[str] = None
        self.counts: Dict[str, int] = {}
        self.connections = 0  # how many times it came up
        self.stderr: Deque[str] = collections.deque(maxlen=STDERR_LINES)
        # How many stderr lines this process wrote since it was (re)started, and how many of them came before
        # its last answer to a call: the lines that can explain why it went down are those after that.
        self._stderr_count = 0
        self._stderr_answered = 0
        self._generation = 0  # one per start: a late line of an earlier process is not this one's
        #: Set once the first attempt to connect has ended, either way.
        self.settled = threading.Event()
        # Guards _changed, _lost, _closing and in_flight; the supervisor waits on it.
        self._cond = threading.Condition()
        self._changed: Set[str] = set()
        self._lost = False
        self._closing = False
        self.in_flight: List[Call] = []
        #: The resource URIs the gateway's clients subscribed to on this upstream (kept across its restarts).
        self.subscribed: Set[str] = set()
        self._thread: Optional[threading.Thread] = None

    # ---- lifetime ------------------------------------------------------------------------------------------
    def start(self) -> None:
        self._thread = threading.Thread(target=self._supervise, name=f"mcplite-gateway-{self.name}", daemon=True)
        self._thread.start()

    def close(self, timeout: float = 10.0) -> None:
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        client = self.client
        if client is not None:
            client.close()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)
        self.state = "closed"

    def describe_down(self) -> str:
        """Why calls cannot reach it: the cause, and its last stderr lines when it has any."""
        cause = self.cause or ("it is starting" if self.state == "starting" else "it is not connected")
        fresh = self._stderr_count - self._stderr_answered  # (lines written before its last answer explain nothing)
        lines = [line for line in list(self.stderr)[-fresh:] if line.strip()][-5:] if fresh > 0 else []
        return cause + (f"; its last stderr lines: {' | '.join(lines)}" if lines else "")

    # ---- the supervisor --------------------------------------------------------------------------------------
    def _supervise(self) -> None:
        delay = self.restart_delay
        while not self._closing:
            try:
                client = self._connect()
            except Exception as exc:
                self._went_down(f"it did not start: {_describe(exc)}")
                if self._pause(delay):
                    return
                delay = min(delay * 2, self.max_restart_delay)
                continue
            delay = self.restart_delay
            self._serve(client)
            if self._closing:
                return
            self._pause(delay)
            delay = min(delay * 2, self.max_restart_delay)

    def _pause(self, seconds: float) -> bool:
        """Wait ``seconds`` before the next attempt; True when the gateway is closing."""
        with self._cond:
            if not self._closing:
                self._cond.wait(seconds)
            return self._closing

    def _connect(self) -> Client:
        from ..client import Client

        config = self.config
        options: Dict[str, Any] = {
            "client_info": {"name": "mcplite-gateway", "version": "0.1.0"}, "timeout": config.timeout,
            "protocol_version": config.protocol_version, "elicitation": self._elicit,
            "elicitation_modes": ("form", "url"), "sampling": self._sample, "roots": self._roots,
            "on_log": self._log, "on_list_changed": self._list_changed, "on_resource_updated": self._updated,
            # Sampling with tools is declared whatever the front client: the question reaches a front client
            # that declared it, and one that did not refuses it (as the upstream would have).
            "sampling_features": ("tools",)}
        if self.recorder is not None:
            options.update(record=self.recorder, record_as=self.name)
        with self._cond:
            self._lost = False
            self._changed = set()
        if config.transport == "stdio":
            self._generation += 1
            generation = self._generation
            self.stderr.clear()
            self._stderr_count = self._stderr_answered = 0

            def heard(line: str) -> None:
                if self._generation == generation:
                    self.stderr.append(line)
                    self._stderr_count += 1

            client = Client.stdio(config.argv, env=config.env, cwd=config.cwd, stderr=heard, **options)
        else:
            http: Dict[str, Any] = {"headers": config.headers}
            if config.transport == "sse":
                http["transport"] = "sse"
            if config.auth == "oauth":
                from ..oauth import FileTokenStorage, OAuth, user_token_file

                http["auth"] = OAuth(storage=FileTokenStorage(user_token_file()))
            client = Client(config.url, **options, **http)
        client.connect(timeout=self.connect_timeout)
        client.session.on_close(self._connection_ended)
        if client.session.is_closed:
            self._connection_ended()
        return client

    def _serve(self, client: Client) -> None:
        """List what it serves and keep the lists fresh until the connection ends (or the gateway closes)."""
        try:
            listing = {kind: self._list(client, kind) for kind in KINDS}
            self._ask_for_logs(client)
        except Exception as exc:
            client.close()
            self._went_down(f"listing failed: {_describe(exc)}")
            return
        self.client, self.revision, self.cause = client, client.protocol_version, None
        self.counts = {kind: len(items) for kind, items in listing.items()}
        self.state = "up"
        self.connections += 1
        try:
            self._owner.upstream_up(self, listing)
        except Exception as exc:  # a collision refused at start: the gateway reports it
            self.cause = str(exc)
        self.settled.set()
        with self._cond:
            uris = sorted(self.subscribed)
        for uri in uris:  # subscriptions made before it went down (or before it came up)
            self._subscribe(client, uri)
        while True:
            with self._cond:
                while not (self._changed or self._lost or self._closing):
                    self._cond.wait()
                kinds, self._changed = self._changed, set()
                if self._lost or self._closing:
                    break
            try:
                for kind in sorted(kinds):
                    items = self._list(client, kind)
                    self.counts[kind] = len(items)
                    self._owner.upstream_changed(self, kind, items)
            except Exception as exc:
                log.info("gateway: listing %s of %s failed: %s", kinds, self.name, exc)
                if client.session.is_closed:
                    break
        reason = client.session.close_reason
        self.client = None
        client.close()
        if not self._closing:
            self._went_down(f"it exited: {_describe(reason)}" if reason is not None else "its connection ended")

    def _went_down(self, cause: str) -> None:
        was_up = self.state == "up"
        self.state, self.cause, self.client = "down", cause, None
        log.warning("gateway: upstream %s is down: %s", self.name, self.describe_down())
        if was_up:
            self._owner.upstream_down(self)
        self.settled.set()

    def _connection_ended(self) -> None:
        with self._cond:
            self._lost = True
            self._cond.notify_all()

    def _list(self, client: Client, kind: str) -> List[Dict[str, Any]]:
        declared = client.server_capabilities
        items: List[Any] = []
        if kind == "tools" and "tools" in declared:
            items = client.list_tools()
        elif kind == "prompts" and "prompts" in declared:
            items = client.list_prompts()
        elif kind == "resources" and "resources" in declared:
            items = client.list_resources()
        elif kind == "templates" and "resources" in declared:
            items = client.list_resource_templates()
        return [dict(item) for item in items]

    def task_support(self, tool: Dict[str, Any]) -> str:
        """How the front offers the upstream's ``tool`` as a task ("forbidden", "optional", "required"): as a
        2025-11-25 upstream that takes tool calls as tasks lists it; "optional" on a 2026-07-28 upstream that
        declares the tasks extension (it decides per call; a call it answers at once ends the front's task)."""
        client = self.client
        if client is None:
            return FORBIDDEN
        declared: Any = client.server_capabilities
        if client.session.enveloped:
            extensions = declared.get("extensions")
            return OPTIONAL if isinstance(extensions, dict) and TASKS_EXTENSION in extensions else FORBIDDEN
        for key in ("tasks", "requests", "tools", "call"):
            declared = declared.get(key) if isinstance(declared, dict) else None
        execution = tool.get("execution")
        support = execution.get("taskSupport") if isinstance(execution, dict) else None
        return support if isinstance(declared, dict) and support in (OPTIONAL, REQUIRED) else FORBIDDEN

    def _ask_for_logs(self, client: Client) -> None:
        """Every log message, filtered in front by what each front client asked for."""
        if "logging" in client.server_capabilities:
            try:
                client.set_logging_level("debug")
            except MCPError as exc:
                log.info("gateway: %s refused logging/setLevel: %s", self.name, exc)

    # ---- resource subscriptions ---------------------------------------------------------------------------------
    def subscribe(self, uri: str) -> None:
        """A gateway client subscribed to ``uri``, which this upstream serves: subscribe to it here once (and
        again each time the upstream comes back). Never raises: an upstream that refuses is logged."""
        with self._cond:
            if uri in self.subscribed:
                return
            self.subscribed.add(uri)
        client = self.client
        if client is not None:
            self._subscribe(client, uri)

    def _subscribe(self, client: Client, uri: str) -> None:
        resources = client.server_capabilities.get("resources")
        if not (isinstance(resources, dict) and resources.get("subscribe")):
            return  # it sends no updates: the front subscription stays the front server's alone
        try:
            client.subscribe_resource(uri, timeout=self.config.timeout)  # (2026-07-28: its listen stream)
        except Exception as exc:
            log.warning("gateway: %s refused the subscription to %s: %s", self.name, uri, exc)

    def _updated(self, uri: str) -> None:
        self._owner.notify_resource_updated(uri)

    # ---- what the client's callbacks get (on its session's threads) -------------------------------------------
    def _list_changed(self, kind: str) -> None:
        with self._cond:
            self._changed.update(_CHANGED.get(kind, ()))
            self._cond.notify_all()

    def _log(self, params: Dict[str, Any]) -> None:
        call = self._only_call()
        level, data, logger = params.get("level", "info"), params.get("data"), params.get("logger")
        if level not in methods.LOGGING_LEVELS:
            level = "info"
        logger = logger if isinstance(logger, str) else self.name
        front = call.front if call is not None else None
        try:
            if front is not None:
                front.log(level, data, logger)
            else:
                self._owner.log(level, data, logger)
        except Exception as exc:  # a front that went away meanwhile
            log.debug("gateway: a log message of %s was dropped: %s", self.name, exc)

    def _elicit(self, params: Dict[str, Any]) -> Dict[str, Any]:
        return self.answer(methods.ELICIT, params)

    def _sample(self, params: Dict[str, Any]) -> Dict[str, Any]:
        return self.answer(methods.SAMPLING_CREATE, params)

    def _roots(self) -> List[Any]:
        if self._only_call() is None:
            return []  # asked outside any call (on connecting): the gateway itself offers no roots
        roots: List[Any] = self.answer(methods.ROOTS_LIST, {}).get("roots", [])
        return roots

    def answer(self, method: str, params: Dict[str, Any]) -> Dict[str, Any]:
        """A handshake-era upstream's question, asked of the front call it belongs to: the call waiting on the
        task the question names (2025-11-25 tags a task's requests with it), else the one call in flight."""
        meta = params.get("_meta")
        related = meta.get(RELATED_TASK_KEY) if isinstance(meta, dict) else None
        task_id = related.get("taskId") if isinstance(related, dict) else None
        with self._cond:
            calls = list(self.in_flight)
        if task_id is not None:
            # (A question asked before the task's creation was answered to us has no owner yet: the rule below.)
            calls = [call for call in calls if call.task_id == task_id][:1] or calls
            # The upstream's task id is its own business: the front's question is tied to the front's call.
            kept = {key: value for key, value in meta.items() if key != RELATED_TASK_KEY}  # type: ignore[union-attr]
            params = {key: value for key, value in params.items() if key != "_meta"}
            if kept:
                params["_meta"] = kept
        if len(calls) != 1:
            raise RPCError(INTERNAL_ERROR, f"the gateway cannot tell which of its {len(calls)} calls to "
                                           f"{self.name!r} this {method} belongs to" if calls else
                           f"the gateway has no call to {self.name!r} in flight to ask {method} for")
        return calls[0].ask(method, params)

    def _only_call(self) -> Optional[Call]:
        with self._cond:
            return self.in_flight[0] if len(self.in_flight) == 1 else None

    def track(self, call: Call) -> None:
        with self._cond:
            self.in_flight.append(call)

    def untrack(self, call: Call) -> None:
        with self._cond:
            if call in self.in_flight:
                self.in_flight.remove(call)
        if call.succeeded:
            self._stderr_answered = self._stderr_count


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
