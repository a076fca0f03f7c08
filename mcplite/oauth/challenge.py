"""The Bearer and DPoP challenges of ``WWW-Authenticate`` (RFC 9110 §11.6.1, RFC 6750 §3, RFC 9728 §5.1,
RFC 9449 §7.1): read by clients, written by servers."""

from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

__all__ = ["BearerChallenge", "parse_bearer_challenge", "parse_auth_challenge", "is_insufficient_scope"]


@dataclass(frozen=True)
class BearerChallenge:
    """The Bearer challenge of a ``WWW-Authenticate`` header, or a DPoP one (``scheme="DPoP"``, RFC 9449
    §7.1), which has the same parameters plus ``algs``."""

    error: Optional[str] = None
    error_description: Optional[str] = None
    scope: Optional[str] = None
    resource_metadata: Optional[str] = None
    scheme: str = "Bearer"
    algs: Optional[str] = None  # DPoP only: the proof algorithms accepted, space-separated

    @property
    def scopes(self) -> List[str]:
        """``scope`` split on spaces."""
        return self.scope.split() if self.scope else []

    def to_header(self) -> str:
        """The ``WWW-Authenticate`` value: the scheme and each parameter that is set, as a quoted string."""
        params = [
            (name, value) for name, value in (
                ("resource_metadata", self.resource_metadata), ("scope", self.scope), ("error", self.error),
                ("error_description", self.error_description), ("algs", self.algs),
            ) if value is not None
        ]
        if not params:
            return self.scheme
        return f"{self.scheme} " + ", ".join(f'{name}="{_quote(value)}"' for name, value in params)


def _quote(value: str) -> str:
    # RFC 9110 §5.6.4: a backslash escapes '"' and '\' inside a quoted string.
    return value.replace("\\", "\\\\").replace('"', '\\"')


def _skip_spaces(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t":
        pos += 1
    return pos


def _read_token(text: str, pos: int) -> Tuple[str, int]:
    start = pos
    while pos < len(text) and text[pos] not in ' \t,="':
        pos += 1
    return text[start:pos], pos


def _read_quoted(text: str, pos: int) -> Tuple[str, int]:
    # pos is just past the opening quote; a backslash escapes the next character (RFC 9110 §5.6.4).
    chars: List[str] = []
    while pos < len(text) and text[pos] != '"':
        if text[pos] == "\\" and pos + 1 < len(text):
            pos += 1
        chars.append(text[pos])
        pos += 1
    return "".join(chars), pos + 1


def _parse_challenges(header: str) -> List[Tuple[str, Dict[str, str]]]:
    """All challenges in a header value as (lower-case scheme, {lower-case name: value})."""
    challenges: List[Tuple[str, Dict[str, str]]] = []
    pos = 0
    while pos < len(header):
        pos = _skip_spaces(header, pos)
        if pos < len(header) and header[pos] == ",":
            pos += 1
            continue
        scheme, pos = _read_token(header, pos)
        if not scheme:
            pos += 1  # stray character: skip it rather than loop
            continue
        params: Dict[str, str] = {}
        challenges.append((scheme.lower(), params))
        # Parameters follow until a token that is not followed by "=": that is the next scheme.
        while True:
            pos = _skip_spaces(header, pos)
            while pos < len(header) and header[pos] == ",":
                pos = _skip_spaces(header, pos + 1)
            name, after_name = _read_token(header, pos)
            after_name = _skip_spaces(header, after_name)
            if not name or after_name >= len(header) or header[after_name] != "=":
                break
            value_pos = _skip_spaces(header, after_name + 1)
            if value_pos < len(header) and header[value_pos] == '"':
                value, pos = _read_quoted(header, value_pos + 1)
            else:
                value, pos = _read_token(header, value_pos)
            params.setdefault(name.lower(), value)
    return challenges


def _challenge(scheme: str, params: Dict[str, str]) -> BearerChallenge:
    return BearerChallenge(
        error=params.get("error"), error_description=params.get("error_description"),
        scope=params.get("scope"), resource_metadata=params.get("resource_metadata"),
        scheme="DPoP" if scheme == "dpop" else "Bearer", algs=params.get("algs"),
    )


def parse_bearer_challenge(header: Optional[str]) -> Optional[BearerChallenge]:
    """The Bearer challenge in a ``WWW-Authenticate`` value, or None when there is none."""
    if not header:
        return None
    for scheme, params in _parse_challenges(header):
        if scheme == "bearer":
            return _challenge(scheme, params)
    return None


def parse_auth_challenge(header: Optional[str], *, prefer_dpop: bool = False) -> Optional[BearerChallenge]:
    """The Bearer or DPoP challenge in a ``WWW-Authenticate`` value (None: neither).

    A server that takes both sends both (RFC 9449 §7.2); the one for the scheme the client used answers
    its request, so ``prefer_dpop`` picks DPoP when there are two. Either carries ``resource_metadata``.
    """
    if not header:
        return None
    found = {scheme: params for scheme, params in reversed(_parse_challenges(header))
             if scheme in ("bearer", "dpop")}
    order = ("dpop", "bearer") if prefer_dpop else ("bearer", "dpop")
    for scheme in order:
        if scheme in found:
            return _challenge(scheme, found[scheme])
    return None


def is_insufficient_scope(status: int, challenge: Optional[BearerChallenge]) -> bool:
    """Whether a response asks for step-up authorization: 403 with a Bearer challenge naming scopes.

    RFC 6750 §3.1 gives such a challenge ``error="insufficient_scope"``. Some servers send only
    ``scope=``; on a 403 that can mean nothing else, so it counts too.
    """
    if status != 403 or challenge is None:
        return False
    return challenge.error == "insufficient_scope" or (challenge.error is None and bool(challenge.scope))
