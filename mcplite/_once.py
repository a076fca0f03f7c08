"""`once`: a function's result, computed by its first call and kept. The one way mcplite loads on first use.

What a module needs only when it serves (the session layer, the handlers, a precomputed table) is loaded by
the first call that needs it rather than at import, so `import mcplite` stays light, and is then kept, so no
import statement runs per message. Two threads that make the first call at once may both compute the value;
each gets a correct one, and one of them is kept (a list append is atomic). Not `functools.cache`: importing
functools (and collections, which it loads) costs more than this whole module on Pythons whose start-up
has not loaded it already.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    from typing import Callable, List, TypeVar

    T = TypeVar("T")

__all__ = ["once"]


def once(compute: Callable[[], T]) -> Callable[[], T]:
    """``compute`` as a function that runs it on its first call and returns that first result ever after."""
    kept: List[T] = []

    def first_result() -> T:
        if not kept:
            kept.append(compute())
        return kept[0]

    first_result.__name__ = compute.__name__
    first_result.__qualname__ = compute.__qualname__
    first_result.__doc__ = compute.__doc__
    return first_result
