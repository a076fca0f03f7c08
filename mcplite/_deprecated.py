"""`deprecated_names`: old spellings of public names that keep working, with a `DeprecationWarning`, until 0.2."""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import warnings  # (the interpreter has loaded it already)

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    from typing import Any, Callable, Mapping, Tuple

__all__ = ["deprecated_names"]


def deprecated_names(module: str, names: Mapping[str, Tuple[Any, str]]) -> Callable[[str], Any]:
    """A module's ``__getattr__`` (PEP 562) for its deprecated ``names``, each mapped to (its value, what to use
    instead and when it goes, for the warning). Any other missing name is an `AttributeError`, as usual."""

    def __getattr__(name: str) -> Any:
        if name not in names:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        value, instead = names[name]
        warnings.warn(f"{module}.{name} is deprecated: {instead}", DeprecationWarning, stacklevel=2)
        return value

    return __getattr__
