"""The client's result cache for revision 2026-07-28: reuse what the server said may be reused.

On 2026-07-28 a server stamps every complete result of ``server/discover``, the four lists and
``resources/read`` with ``ttlMs`` (how long a client may reuse it; 0: not at all) and ``cacheScope``
(``"public"``: anyone may reuse it; ``"private"``: only the same authorization context) (SEP-2549,
``server/utilities/caching.mdx``). The rules this cache keeps:

    what                          key                        reused while
    server/discover               (method,)                  ttlMs has not run out, and the scope holds
    a list page                   (method, cursor)           the same (each page on its own: pagination.mdx)
    resources/read                (method, uri)              the same
    anything else                 never cached

    the scope holds:  "public", or the authorization context is the one the result was fetched under

    dropped:  a list's pages on its list_changed notification; a read on its resource's updated
              notification; everything when asked (`clear`), on a change of authorization for private entries

A result is cached only when it is complete and came from a first request: never one that took input-required
rounds, carried ``inputResponses``/``requestState``, or was sent with the caller's own ``_meta`` (the server may
have answered differently). Handshake revisions have no ``ttlMs``, so nothing of theirs is ever stored. Servers
default to ``ttlMs: 0``: the cache is inert unless the server opts in.

Entries are copied in and out (a caller who edits a result it got does not edit the cache), and there are at
most `MAX_ENTRIES` (the oldest goes first). Pure apart from its lock: the clock is passed in, no I/O, no
threads.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import copy
import threading
import time
from collections import OrderedDict

from ..protocol import methods

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Hashable, Optional, Tuple

    Key = Tuple[Any, ...]

__all__ = ["ResultCache", "MAX_ENTRIES", "LIST_OF", "cache_key"]

#: Entries one client keeps at most; past it the oldest is dropped.
MAX_ENTRIES = 1024

#: A list_changed notification -> the list method whose pages it makes stale.
LIST_OF = {
    methods.TOOLS_LIST_CHANGED: (methods.TOOLS_LIST,),
    methods.PROMPTS_LIST_CHANGED: (methods.PROMPTS_LIST,),
    methods.RESOURCES_LIST_CHANGED: (methods.RESOURCES_LIST, methods.RESOURCES_TEMPLATES_LIST),
}

_LISTS = frozenset((methods.TOOLS_LIST, methods.PROMPTS_LIST, methods.RESOURCES_LIST,
                    methods.RESOURCES_TEMPLATES_LIST))


def cache_key(method: str, params: Optional[Dict[str, Any]]) -> Optional[Key]:
    """The key a request's result is kept under, or None when the request is not one to cache (a method
    without hints, or params that make it a retry or the caller's own: ``inputResponses``, ``requestState``,
    ``_meta``)."""
    params = params or {}
    if "inputResponses" in params or "requestState" in params or "_meta" in params:
        return None
    if method in _LISTS:
        return (method, params.get("cursor"))
    if method == methods.RESOURCES_READ:
        uri = params.get("uri")
        return (method, uri) if isinstance(uri, str) else None
    if method == methods.SERVER_DISCOVER:
        return (method,)
    return None


class _Entry:
    __slots__ = ("result", "expires", "private", "context")

    def __init__(self, result: Dict[str, Any], expires: float, private: bool, context: Hashable) -> None:
        self.result = result
        self.expires = expires
        self.private = private
        self.context = context


class ResultCache:
    """Complete results kept for their ``ttlMs``, by `cache_key`. Safe to use from several threads.

    Args:
        clock: seconds, monotonic (for tests).
        max_entries: the most entries kept.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic, max_entries: int = MAX_ENTRIES) -> None:
        self._clock = clock
        self._max = max_entries
        self._entries: OrderedDict[Key, _Entry] = OrderedDict()
        self._lock = threading.Lock()  # guards _entries (a Client is shared by threads)
        #: How many requests were answered from the cache (for tests and curious users).
        self.hits = 0

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def get(self, key: Key, context: Hashable = None) -> Optional[Dict[str, Any]]:
        """A copy of the result kept under ``key`` if it is still fresh and may be reused under ``context``
        (the caller's authorization context), else None."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            if self._clock() >= entry.expires or (entry.private and entry.context != context):
                del self._entries[key]
                return None
            self.hits += 1
            result = entry.result
        return copy.deepcopy(result)

    def put(self, key: Key, result: Dict[str, Any], context: Hashable = None) -> bool:
        """Keep ``result`` under ``key`` when its hints allow it: a complete result whose ``ttlMs`` is a
        positive integer. Returns whether it was kept."""
        ttl = result.get("ttlMs")
        if isinstance(ttl, bool) or not isinstance(ttl, int) or ttl <= 0:
            return False
        if result.get("resultType", "complete") != "complete":
            return False
        private = result.get("cacheScope") != "public"  # absent or unknown: the careful reading
        entry = _Entry(copy.deepcopy(result), self._clock() + ttl / 1000.0, private, context)
        with self._lock:
            self._entries.pop(key, None)
            self._entries[key] = entry
            while len(self._entries) > self._max:
                self._entries.popitem(last=False)
        return True

    def drop(self, key: Key) -> None:
        """Forget the result kept under ``key``, if any."""
        with self._lock:
            self._entries.pop(key, None)

    def drop_method(self, method: str) -> None:
        """Forget every kept result of ``method`` (all pages of a list)."""
        with self._lock:
            for key in [key for key in self._entries if key[0] == method]:
                del self._entries[key]

    def drop_for(self, notification: str, params: Optional[Dict[str, Any]]) -> None:
        """Forget what a change notification makes stale: a list's pages, or one resource's read."""
        if notification == methods.RESOURCE_UPDATED:
            uri = (params or {}).get("uri")
            with self._lock:
                self._entries.pop((methods.RESOURCES_READ, uri), None)
            return
        for method in LIST_OF.get(notification, ()):
            self.drop_method(method)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
