"""The client's answers to a server's requests for input: sampling, elicitation and roots.

A server asks its client for input in the middle of handling a request: a completion from the client's model
(`sampling/createMessage`), something from the user (`elicitation/create`), or the client's roots
(`roots/list`). Up to revision 2025-11-25 these arrive as requests on the connection; from 2026-07-28 they
arrive inside an ``input_required`` result, to be answered and sent back with the retried request. Either
way the answer is the same: `InputCallbacks.answer_input_request`, given the method and its params. The
callbacks also decide the capabilities the client declares, so what is declared and what is answered
cannot drift apart.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

from ..errors import INVALID_PARAMS, METHOD_NOT_FOUND, RPCError
from ..protocol import methods
from ..protocol.capabilities import missing_request_capability

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Optional, Sequence, Union

    from ..protocol import types as t

    SamplingCallback = Callable[[Dict[str, Any]], Dict[str, Any]]
    ElicitationCallback = Callable[[Dict[str, Any]], Dict[str, Any]]
    RootsSource = Union[Sequence[t.Root], Callable[[], Sequence[t.Root]]]

__all__ = ["InputCallbacks"]


class InputCallbacks:
    """What the application gave the `Client` to answer a server's requests for input with (None: nothing)."""

    __slots__ = ("sampling", "sampling_features", "elicitation", "elicitation_modes", "roots")

    def __init__(self, *, sampling: Optional[SamplingCallback] = None, sampling_features: Sequence[str] = (),
                 elicitation: Optional[ElicitationCallback] = None, elicitation_modes: Sequence[str] = ("form",),
                 roots: Optional[RootsSource] = None) -> None:
        self.sampling = sampling
        self.sampling_features = tuple(sampling_features)
        self.elicitation = elicitation
        self.elicitation_modes = tuple(elicitation_modes)
        self.roots = roots

    def capabilities(self) -> Dict[str, Any]:
        """The `ClientCapabilities` these callbacks can honour."""
        caps: Dict[str, Any] = {}
        if self.sampling is not None:
            caps["sampling"] = {feature: {} for feature in self.sampling_features}
        if self.elicitation is not None:
            caps["elicitation"] = {mode: {} for mode in self.elicitation_modes}
        if self.roots is not None:
            caps["roots"] = {"listChanged": True}
        return caps

    def answer_input_request(self, method: str, params: Dict[str, Any]) -> Dict[str, Any]:
        """The result for one request for input, from the callback that answers ``method``.

        Raises:
            RPCError: -32601 when no callback answers ``method``; -32602 for a sampling request that
                carries tools when the sampling callback did not declare the "tools" feature.
        """
        if method == methods.SAMPLING_CREATE and self.sampling is not None:
            if missing_request_capability(method, params, self.capabilities(), None):  # sampling.tools
                raise RPCError(INVALID_PARAMS, "Invalid params: this client did not declare sampling.tools, so "
                                               "a sampling request may not carry tools")
            return self.sampling(params)
        if method == methods.ELICIT and self.elicitation is not None:
            return self.elicitation(params)
        if method == methods.ROOTS_LIST and self.roots is not None:
            roots = self.roots() if callable(self.roots) else self.roots
            return {"roots": list(roots)}
        raise RPCError(METHOD_NOT_FOUND, f"Method not found: {method}")
