"""Keyword options checked by name: a misspelt one is a `TypeError` that names it and the closest real one.

Python says as much for a function's own keywords, but an option that travels in ``**options`` to somewhere
else (a transport, a dataclass of settings) is either dropped on the way or refused with no hint. Every layer may
use this (tests/test_layers.py: ALWAYS).
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see __init__)
if TYPE_CHECKING:
    from typing import Any, Callable, Collection, Iterable, Tuple

__all__ = ["keyword_names", "refuse_unknown"]


def keyword_names(function: Callable[..., Any]) -> Tuple[str, ...]:
    """The names ``function`` takes by keyword (its parameters but ``self`` and ``*args``/``**kwargs``), read from
    its code object rather than with `inspect`, which is slow to import."""
    code = function.__code__
    names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    return tuple(name for name in names if name not in ("self", "cls"))


def refuse_unknown(where: str, given: Iterable[str], known: Collection[str]) -> None:
    """Raise `TypeError` for the names of ``given`` that are not in ``known``, as Python words it for a function
    (``where``: how the caller wrote it, "Client.stdio"), with the closest known name: "Client.stdio() got an
    unexpected keyword argument 'recrod': did you mean 'record'?"."""
    unknown = [name for name in given if name not in known]
    if not unknown:
        return
    import difflib

    described = []
    for name in unknown:
        matches = difflib.get_close_matches(name, list(known), n=1)
        described.append((repr(name), repr(matches[0]) if matches else None))
    if len(described) == 1:
        name, close = described[0]
        raise TypeError(f"{where}() got an unexpected keyword argument {name}"
                        + (f": did you mean {close}?" if close else ""))
    raise TypeError(f"{where}() got unexpected keyword arguments "
                    + ", ".join(name + (f" (did you mean {close}?)" if close else "") for name, close in described))
