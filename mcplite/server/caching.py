"""The caching hints a server gives on revision 2026-07-28: `ttlMs` and `cacheScope` (`CachePolicy`).

Revision 2026-07-28 (SEP-2549, the spec's ``server/utilities/caching.mdx``) has a server state on every
complete result of a cacheable method how long a client may reuse it (``ttlMs``, an integer of milliseconds,
0 meaning "do not reuse") and for whom (``cacheScope``: ``"public"``, anyone; ``"private"``, only the same
authorization context). The cacheable methods are ``server/discover``, the four lists and ``resources/read``,
and the skills extension's ``skills/list`` and ``skills/get``.

`CachePolicy` holds what a server was configured with and answers "which hints for this request": server
defaults (``ttlMs`` 0, ``"private"``, which change nothing for a client), an override for the four lists, and
per-resource overrides (a resource read through a template takes the template's). Values are checked when
configured, so that a wrong one fails at start-up, not on a request. Pure: no I/O, no threads, no locks; the
per-resource overrides are read through a function the registry supplies, so that they live in one place
(the resource's entry). Stamping the hints on results, and only for revisions that have them, is
`results.shape_result`'s.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

from ..protocol import methods
from ..protocol.methods import SKILLS_GET, SKILLS_LIST

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    from typing import Callable, Dict, Optional, Tuple

    #: The hints one resource overrides: (ttlMs, cacheScope), either None to keep the server's default.
    ResourceHints = Tuple[Optional[int], Optional[str]]
    #: A resource URI (as read) -> the overrides of the resource or template that serves it (None: none).
    ResourceLookup = Callable[[str], Optional[ResourceHints]]

__all__ = ["CachePolicy", "SCOPES", "DISCOVER", "LIST_METHODS", "SKILL_METHODS", "CACHEABLE_METHODS", "check_ttl_ms",
           "check_scope"]

#: The values of ``cacheScope``.
SCOPES = ("public", "private")

#: The discovery request of 2026-07-28.
DISCOVER = methods.SERVER_DISCOVER
#: The lists whose hints ``list_ttl_ms`` and ``list_scope`` set.
LIST_METHODS = (methods.TOOLS_LIST, methods.PROMPTS_LIST, methods.RESOURCES_LIST, methods.RESOURCES_TEMPLATES_LIST)
#: The skills extension's two methods (``skills/list`` takes the lists' hints, ``skills/get`` the defaults).
SKILL_METHODS = (SKILLS_LIST, SKILLS_GET)
#: Every method whose complete result carries the hints.
CACHEABLE_METHODS = frozenset((DISCOVER, methods.RESOURCES_READ) + LIST_METHODS + SKILL_METHODS)


def check_ttl_ms(value: object, what: str = "ttl_ms") -> int:
    """``value`` when it is a valid ``ttlMs`` (an integer >= 0, not a bool), else `ValueError`."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{what} must be an integer number of milliseconds >= 0, not {value!r}")
    return value


def check_scope(value: object, what: str = "cache_scope") -> str:
    """``value`` when it is a valid ``cacheScope`` (``"public"`` or ``"private"``), else `ValueError`."""
    if not isinstance(value, str) or value not in SCOPES:
        raise ValueError(f'{what} must be "public" or "private", not {value!r}')
    return value


class CachePolicy:
    """Which ``ttlMs`` and ``cacheScope`` each cacheable request gets.

    Args:
        ttl_ms: the default ``ttlMs`` of every cacheable method (0: clients do not reuse results).
        scope: the default ``cacheScope`` (``"private"``: reuse only within the same authorization).
        list_ttl_ms, list_scope: override the defaults for ``tools/list``, ``prompts/list``,
            ``resources/list`` and ``resources/templates/list`` (None: the defaults).
        resource_hints: a resource URI -> the ``(ttl_ms, scope)`` overrides of the resource or template that
            serves it, either None to keep the default (the registry supplies it; None: no overrides).

    Raises `ValueError` for a ttl that is not an integer >= 0 or a scope other than public or private.
    The policy is not changed after it is made; the overrides of resources change with the resources.
    """

    __slots__ = ("ttl_ms", "scope", "list_ttl_ms", "list_scope", "_by_method", "_resource_hints")

    def __init__(self, ttl_ms: int = 0, scope: str = "private", *, list_ttl_ms: Optional[int] = None,
                 list_scope: Optional[str] = None, resource_hints: Optional[ResourceLookup] = None) -> None:
        self.ttl_ms = check_ttl_ms(ttl_ms, "cache_ttl_ms")
        self.scope = check_scope(scope, "cache_scope")
        self.list_ttl_ms = self.ttl_ms if list_ttl_ms is None else check_ttl_ms(list_ttl_ms, "list_ttl_ms")
        self.list_scope = self.scope if list_scope is None else check_scope(list_scope, "list_scope")
        # Every cacheable method but resources/read answers from this table: one lookup per request.
        defaults = (self.ttl_ms, self.scope)
        lists = (self.list_ttl_ms, self.list_scope)
        self._by_method: Dict[str, Tuple[int, str]] = {DISCOVER: defaults, SKILLS_GET: defaults,
                                                       **{m: lists for m in LIST_METHODS + (SKILLS_LIST,)}}
        self._resource_hints = resource_hints

    def __repr__(self) -> str:
        return (f"CachePolicy(ttl_ms={self.ttl_ms!r}, scope={self.scope!r}, list_ttl_ms={self.list_ttl_ms!r}, "
                f"list_scope={self.list_scope!r})")

    def hints(self, method: str, uri: Optional[str] = None) -> Optional[Tuple[int, str]]:
        """``(ttlMs, cacheScope)`` for a request of ``method`` (``uri``: what ``resources/read`` reads), or
        None when the method is not cacheable."""
        found = self._by_method.get(method)
        if found is not None:
            return found
        if method != methods.RESOURCES_READ:
            return None
        overrides = None
        if uri is not None and self._resource_hints is not None:
            overrides = self._resource_hints(uri)
        if overrides is None:
            return self.ttl_ms, self.scope
        ttl_ms, scope = overrides
        return (self.ttl_ms if ttl_ms is None else ttl_ms), (self.scope if scope is None else scope)
