"""Which capability the receiver of a request must have declared, every rule in one place.

Two kinds of rule, both about the *receiver's* declared capabilities (the client's `ClientCapabilities`
for a server-to-client request, the server's `ServerCapabilities` for a client-to-server one):

- by method: `tools/call` needs ``tools``, `sampling/createMessage` needs ``sampling`` (`missing_capability`,
  checked by the session before any request goes out);
- by what a request carries (2025-11-25): a sampling request with ``tools`` needs ``sampling.tools``
  (`client/sampling.mdx:82-86`), a URL-mode elicitation needs ``elicitation.url`` (`client/elicitation.mdx`)
  (`missing_request_capability`, checked by the server's `Context` before it sends and by the client when
  such a request arrives).

Pure: the callers decide what a missing capability means (an exception, an error response) and word it.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

from . import methods

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see __init__)
if TYPE_CHECKING:
    from typing import Any, Dict, Mapping, Optional

    from .versions import Revision

__all__ = [
    "REQUIRED_SERVER_CAPABILITY", "REQUIRED_CLIENT_CAPABILITY", "missing_capability", "missing_request_capability",
    "sampling_tools_declared", "url_elicitation_supported",
]

# Which capability the *receiver* must have declared before a method may be sent to it. A dotted path
# means a sub-flag ("resources.subscribe"). Methods not listed need no capability. The completions
# capability only exists from 2025-03-26: `missing_capability` skips it for older peers.
REQUIRED_SERVER_CAPABILITY: Dict[str, str] = {
    methods.TOOLS_LIST: "tools",
    methods.TOOLS_CALL: "tools",
    methods.RESOURCES_LIST: "resources",
    methods.RESOURCES_TEMPLATES_LIST: "resources",
    methods.RESOURCES_READ: "resources",
    methods.RESOURCES_SUBSCRIBE: "resources.subscribe",
    methods.RESOURCES_UNSUBSCRIBE: "resources.subscribe",
    methods.PROMPTS_LIST: "prompts",
    methods.PROMPTS_GET: "prompts",
    methods.LOGGING_SET_LEVEL: "logging",
    methods.COMPLETE: "completions",
}
REQUIRED_CLIENT_CAPABILITY: Dict[str, str] = {
    methods.SAMPLING_CREATE: "sampling",
    methods.ELICIT: "elicitation",
    methods.ROOTS_LIST: "roots",
}


def missing_capability(method: str, peer_capabilities: Optional[Dict[str, Any]], rev: Revision, *, peer_is_server: bool
                       ) -> Optional[str]:
    """The capability path the peer lacks for `method`, or None when the method may be sent.

    A capability is declared when each step of its path is present and neither null nor false.
    """
    table = REQUIRED_SERVER_CAPABILITY if peer_is_server else REQUIRED_CLIENT_CAPABILITY
    path = table.get(method)
    if path is None or (path == "completions" and not rev.annotations_audio_completions):
        return None
    node: object = peer_capabilities or {}
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node or node[part] is None or node[part] is False:
            return path
        node = node[part]
    return None


def missing_request_capability(method: str, params: Mapping[str, Any], client_capabilities: Optional[Dict[str, Any]],
                               rev: Optional[Revision]) -> Optional[str]:
    """The capability path a server-to-client request with these ``params`` needs and the client did not
    declare, or None. Only what the params add is checked here; the method's own capability is
    `missing_capability`'s.
    """
    if method == methods.SAMPLING_CREATE and "tools" in params and not sampling_tools_declared(client_capabilities):
        return "sampling.tools"
    if method == methods.ELICIT and params.get("mode") == "url" and not url_elicitation_supported(
            client_capabilities, rev):
        return "elicitation.url"
    return None


def sampling_tools_declared(client_capabilities: Optional[Dict[str, Any]]) -> bool:
    """The client declared ``sampling.tools`` (as an object), so sampling requests may carry ``tools``."""
    sampling = (client_capabilities or {}).get("sampling")
    return isinstance(sampling, dict) and isinstance(sampling.get("tools"), dict)


def url_elicitation_supported(client_capabilities: Optional[Dict[str, Any]], rev: Optional[Revision]) -> bool:
    """URL-mode elicitation may be used: the revision has it and the client declared ``elicitation.url``.

    It also says whether elicitation requests carry a ``mode`` at all: a client that knows only form mode
    (or a revision before 2025-11-25) gets requests without one.
    """
    elicitation = (client_capabilities or {}).get("elicitation")
    return bool(rev and rev.url_elicitation and isinstance(elicitation, dict) and "url" in elicitation)
