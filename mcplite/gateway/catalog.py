"""What the upstreams serve, registered on the gateway's `Server` under their front names.

Tools and prompts appear as their upstream's `front_name` (renamed, then prefixed); resources and resource
templates keep their URIs and are read from the upstream that listed them; completions of a prompt argument or
a template variable go to the prompt's or template's upstream. Each upstream's lists replace its entries as a
whole (a diff: what is unchanged stays, so front clients see list_changed only for a real change; the `Server`'s
add and remove send it). A front name that another upstream already serves is refused: at start the gateway
fails naming both (`ConfigError`); later (a list that changed, an upstream that came back) the newcomer's entry
is left out with a warning.
"""

from __future__ import annotations

import threading
from typing import Any  # at run time: the handlers' annotations below are read by function_schema

from .._log import log
from ..server.context import Context
from .config import ConfigError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, Dict, List, Optional, Tuple

    from .upstream import Upstream

__all__ = ["Catalog"]

_SINGULAR = {"tools": "tool", "prompts": "prompt", "resources": "resource", "templates": "resource template"}
#: How to tell two upstreams' entries apart: names take a prefix or a rename; URIs are kept as they are.
_ADVICE = {"tools": "give one of them a prefix or a rename", "prompts": "give one of them a prefix or a rename",
           "resources": 'leave it out of one of them ("resources": {"deny": [the URI]} in its configuration)',
           "templates": 'leave it out of one of them ("resources": {"deny": [the template]} in its configuration)'}


class Catalog:
    """The gateway's entries and the upstream each came from."""

    def __init__(self, gateway: Any) -> None:
        self._gateway = gateway  # the Gateway (a Server): its add_* and remove_*, and its forward handlers
        # Guards _owners, _starting and _conflict, and is held while the Server's catalogs are changed, so
        # that two upstreams' lists are never merged at once.
        self._lock = threading.Lock()
        #: (kind, front name or URI) -> (the upstream's name, the upstream's definition).
        self._owners: Dict[Tuple[str, str], Tuple[str, Dict[str, Any]]] = {}
        self._starting = True
        self._conflict: Optional[ConfigError] = None
        #: (kind, front name or URI) -> the upstream that served it when it went down: a request to one is
        #: answered "upstream X is unavailable" (not "unknown") until the upstream is back.
        self._down: Dict[Tuple[str, str], str] = {}
        #: Front tool name -> (its upstream, the upstream's name for it, its task support): read without the
        #: lock by the gateway's quick way for a call (`Gateway._call_later`).
        self.tool_routes: Dict[str, Tuple[Upstream, str, str]] = {}

    def start_conflict(self) -> Optional[ConfigError]:
        with self._lock:
            return self._conflict

    def started(self) -> None:
        with self._lock:
            self._starting = False

    def owner(self, kind: str, key: str) -> Optional[str]:
        with self._lock:
            owned = self._owners.get((kind, key))
        return owned[0] if owned is not None else None

    def owner_of_uri(self, uri: str) -> Optional[str]:
        """The upstream that lists resource ``uri``, or a template it matches; None when none does."""
        from ..schema.uritemplate import URITemplate

        with self._lock:
            owned = self._owners.get(("resources", uri))
            if owned is not None:
                return owned[0]
            templates = [(key, owner) for (kind, key), (owner, _) in self._owners.items() if kind == "templates"]
        for template, owner in templates:
            try:
                if URITemplate(template).match(uri) is not None:
                    return owner
            except ValueError:
                continue
        return None

    def down_owner(self, kind: str, key: str) -> Optional[str]:
        """The upstream, now down, that served the ``kind`` entry ``key`` (a name, or for "resources" a URI, which
        may also match one of its templates); None when no down upstream did, or another serves it now."""
        from ..schema.uritemplate import URITemplate

        with self._lock:
            if (kind, key) in self._owners:
                return None
            owner = self._down.get((kind, key))
            if owner is not None or kind != "resources":
                return owner
            templates = [(template, owner) for (down_kind, template), owner in self._down.items()
                         if down_kind == "templates"]
        for template, owner in templates:
            try:
                if URITemplate(template).match(key) is not None:
                    return owner
            except ValueError:
                continue
        return None

    def replace(self, upstream: Upstream, listing: Dict[str, List[Dict[str, Any]]]) -> None:
        """``upstream``'s entries of each kind in ``listing`` become those listed."""
        for kind, items in listing.items():
            wanted: Dict[str, Tuple[str, Dict[str, Any]]] = {}
            for item in items:
                named = _names(upstream, kind, item)
                if named is not None:
                    wanted[named[0]] = (named[1], item)
            with self._lock:
                for key in [key for key, owner in self._down.items() if owner == upstream.name and key[0] == kind]:
                    del self._down[key]  # it is up: what it serves now is all it serves
                self._merge(upstream, kind, wanted)

    def withdraw(self, upstream: Upstream) -> None:
        """Remove every entry of ``upstream`` (it is down), remembering which they were."""
        with self._lock:
            for (kind, key), (owner, _) in self._owners.items():
                if owner == upstream.name:
                    self._down[(kind, key)] = owner
            for kind in _SINGULAR:
                self._merge(upstream, kind, {})

    def _merge(self, upstream: Upstream, kind: str, wanted: Dict[str, Tuple[str, Dict[str, Any]]]) -> None:
        current = {key: definition for (owned_kind, key), (owner, definition) in self._owners.items()
                   if owned_kind == kind and owner == upstream.name}
        for key, definition in current.items():
            if key not in wanted or wanted[key][1] != definition:
                self._remove(kind, key)
                del self._owners[(kind, key)]
        for key, (name, definition) in wanted.items():
            if current.get(key) == definition:
                continue
            other = self._owners.get((kind, key))
            if other is not None:
                problem = ConfigError(f"the {_SINGULAR[kind]} {key!r} is served by both {other[0]!r} and "
                                      f"{upstream.name!r}: {_ADVICE[kind]}")
                if self._starting:
                    self._conflict = self._conflict or problem
                log.warning("gateway: %s; %s's is left out", problem, upstream.name)
                continue
            try:
                self._add(upstream, kind, key, name, definition)
            except (ValueError, TypeError) as exc:
                log.warning("gateway: %s %r of %s is left out: %s", _SINGULAR[kind], key, upstream.name, exc)
                continue
            self._owners[(kind, key)] = (upstream.name, definition)

    def _remove(self, kind: str, key: str) -> None:
        gateway = self._gateway
        try:
            if kind == "tools":
                self.tool_routes.pop(key, None)
                gateway.remove_tool(key)
            elif kind == "prompts":
                gateway.remove_prompt(key)
            else:
                gateway.remove_resource(key)
        except KeyError:
            pass

    def _add(self, upstream: Upstream, kind: str, key: str, name: str, definition: Dict[str, Any]) -> None:
        gateway = self._gateway
        common = {"title": definition.get("title"), "icons": definition.get("icons"), "meta": definition.get("_meta")}
        if kind == "tools":
            support = upstream.task_support(definition)

            def call_tool(gateway_context: Context, **arguments: Any) -> Any:
                return gateway.call_tool_of(upstream, name, gateway_context, support)

            gateway.add_tool(call_tool, name=key, description=definition.get("description") or "", task=support,
                             annotations=definition.get("annotations"),
                             input_schema=definition.get("inputSchema") or {"type": "object"},
                             output_schema=_output_schema(upstream, definition), **common)
            self.tool_routes[key] = (upstream, name, support)
        elif kind == "prompts":
            def get_prompt(gateway_context: Context, **arguments: Any) -> Any:
                return gateway.get_prompt_of(upstream, name, gateway_context)

            arguments = [argument for argument in definition.get("arguments") or [] if isinstance(argument, dict)]
            gateway.add_prompt(get_prompt, name=key, description=definition.get("description") or "",
                               arguments=arguments, **common)
            self._complete(upstream, {"type": "ref/prompt", "name": name},
                           [argument.get("name") for argument in arguments], prompt=key)
        else:
            def read_resource(gateway_context: Context, **variables: Any) -> Any:
                return gateway.read_resource_of(upstream, gateway_context)

            gateway.add_resource(read_resource, key, name=definition.get("name") or key,
                                 description=definition.get("description"), mime_type=definition.get("mimeType"),
                                 size=definition.get("size") if kind == "resources" else None,
                                 annotations=definition.get("annotations"), **common)
            if kind == "templates":
                from ..schema.uritemplate import URITemplate

                self._complete(upstream, {"type": "ref/resource", "uri": key}, URITemplate(key).variables,
                               resource=key)

    def _complete(self, upstream: Upstream, ref: Dict[str, Any], arguments: List[Any], **target: str) -> None:
        """Pass completions of each argument on to ``upstream`` (when it offers completions at all)."""
        client = upstream.client
        if client is None or "completions" not in client.server_capabilities:
            return
        gateway = self._gateway
        for argument in arguments:
            if isinstance(argument, str):
                gateway.completion(argument=argument, **target)(_completer(gateway, upstream, ref, argument))


def _completer(gateway: Any, upstream: Upstream, ref: Dict[str, Any], argument: str) -> Callable[[str, Dict[str, Any]], Any]:
    def complete(value: str, chosen: Dict[str, Any]) -> Any:
        return gateway.complete_of(upstream, ref, argument, value, chosen)
    return complete


def _output_schema(upstream: Upstream, tool: Dict[str, Any]) -> Any:
    """The front tool's ``outputSchema``: the upstream's, unless its revision has no structured results (before
    2025-06-18 a server may list one and still answer text only, which a front client would refuse)."""
    client = upstream.client
    revision = client.session.revision if client is not None else None
    if revision is not None and not revision.structured_output:
        return False
    return tool.get("outputSchema") or False


def _names(upstream: Upstream, kind: str, item: Dict[str, Any]) -> Optional[Tuple[str, str]]:
    """(front name or URI, the upstream's name or URI) of a listed item, or None for one not shown."""
    config = upstream.config
    if kind in ("tools", "prompts"):
        name = item.get("name")
        if not isinstance(name, str):
            return None
        if kind == "tools" and not config.shows_tool(name):
            return None
        return config.front_name(name), name
    uri = item.get("uri" if kind == "resources" else "uriTemplate")
    return (uri, uri) if isinstance(uri, str) and config.shows_resource(uri) else None
