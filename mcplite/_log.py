"""The package's logger ("mcplite"), imported on first use.

`logging` takes longer to import than the rest of the client put together, and most processes never log
anything through it; `log.warning(...)` here imports it the first time a message is actually written.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see __init__)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["log"]


class _LazyLogger:
    def __getattr__(self, name: str) -> Any:
        import logging  # cached in sys.modules after the first time
        return getattr(logging.getLogger("mcplite"), name)


log: Any = _LazyLogger()
