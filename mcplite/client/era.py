"""Which protocol era a `Client` speaks with its server: the probe, the fallbacks, and the verdicts kept.

``protocol_version="auto"`` (the default) asks ``server/discover`` before anything else (MODERN.md, "Detecting the
era"; 2026-07-28 basic/versioning.mdx and transports):

    answer to the probe                                    verdict
    a DiscoverResult listing a version we speak            the envelope era, at that version
    a DiscoverResult listing none                          legacy: the initialize handshake
    -32022 listing an envelope-era version we speak        probe again once, at that version
    -32022 listing only handshake versions                 legacy
    -32022 listing no version we speak                     VersionMismatch
    any other JSON-RPC error; no answer within the probe   legacy
      timeout (stdio); an HTTP 4xx other than 401/403
    the server process exited during the probe (stdio)     the error (ConnectionClosed), and a legacy
                                                             verdict kept for the next connect
    HTTP 5xx, a network error                              the error: no verdict

A legacy verdict runs the handshake as before, and over HTTP the handshake's own fallback to HTTP+SSE. A legacy
server that answers ``initialize`` with ``-32022`` was pinned to the envelope era by an earlier probe that we gave
up on (a slow start): it is probed once more and spoken to in the envelope era. Verdicts are kept for the process,
per server (stdio: command, directory and environment; HTTP: the URL), so a script that connects again pays no
second probe. A pinned envelope-era version sends nothing at connect; a handshake version offers the handshake.

A stdio server is started once per connect, never again by the probe: a server that cannot bear the question
(it exits on an unknown method, go-sdk#1177) fails this connect, the error saying so, and the legacy verdict kept
makes the next connect in this process go straight to the handshake. A server that failed to start is not
started a second time, its error printed twice.

The whole connect runs against one `Deadline` (the ``timeout`` of `Client.connect`, by default the client's):
the probe waits ``min(probe_timeout, what is left)``, the handshake what is left after it. When it runs out,
`RequestTimeout` names the figure given and the step it ran out in.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import threading
import time

from ..errors import (
    UNSUPPORTED_PROTOCOL_VERSION,
    ConnectionClosed,
    HTTPError,
    RemoteError,
    RequestTimeout,
    ResponseLost,
    VersionMismatch,
)
from ..protocol.methods import SERVER_DISCOVER as DISCOVER
from ..protocol.versions import (
    ENVELOPE,
    ENVELOPE_VERSIONS,
    HANDSHAKE_VERSIONS,
    LATEST_ENVELOPE_VERSION,
    choose_envelope_version,
    revision,
)
from .cache import ResultCache

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    from typing import Any, Dict, Hashable, List, Optional, Tuple, Union

    Client = Any  # mcplite.client.Client (not imported: the package imports this module)

    #: A verdict: the envelope-era version to speak (with what the probe learnt), or LEGACY.
    Verdict = Union[str, Tuple[str, Optional[Dict[str, Any]]]]

__all__ = ["AUTO", "LEGACY", "DEFAULT_PROBE_TIMEOUT", "Deadline", "connect", "forget", "forget_verdicts"]

#: The default ``protocol_version``: probe, and speak the newest era both sides have.
AUTO = "auto"
#: The verdict "speak the handshake era".
LEGACY = "legacy"
#: Seconds the probe waits for an answer before taking the server for a legacy one (as python-sdk and
#: rust-sdk); capped by the connect timeout.
DEFAULT_PROBE_TIMEOUT = 10.0

# server key -> the envelope-era version it speaks, or LEGACY. Guarded by _VERDICTS_LOCK (clients may connect from
# several threads at once).
_VERDICTS: Dict[Hashable, str] = {}
_VERDICTS_LOCK = threading.Lock()
# ("server/discover", server key) -> the probe's DiscoverResult, for its ttlMs (`client.cache`): a client that
# connects again to a server known to speak the envelope era adopts it without asking. Locked on its own.
_DISCOVERED = ResultCache(max_entries=256)


class Deadline:
    """One bound for a whole connect: each step takes what is left of it (`left`), and names itself, so that
    running out says where. ``seconds`` None: no bound."""

    def __init__(self, seconds: Optional[float]) -> None:
        self.seconds = seconds
        self.end = None if seconds is None else time.monotonic() + seconds
        self.step = "starting the server"

    def left(self, step: str) -> Optional[float]:
        """Seconds left for ``step`` (None: no bound); `RequestTimeout` when none are left, naming the step
        before it (the one that used them up)."""
        if self.end is None:
            self.step = step
            return None
        remaining = self.end - time.monotonic()
        if remaining <= 0:
            raise self.expired()
        self.step = step
        return remaining

    @property
    def passed(self) -> bool:
        return self.end is not None and time.monotonic() >= self.end

    def expired(self) -> RequestTimeout:
        """The error of a connect that ran out of time."""
        return RequestTimeout(f"the server did not finish connecting within {self.seconds:g} s: the time ran out "
                              f"in {self.step}")


def forget_verdicts() -> None:
    """Forget every era verdict this process has kept (the next connection to each server probes again)."""
    with _VERDICTS_LOCK:
        _VERDICTS.clear()
    _DISCOVERED.clear()


def connect(client: Client, deadline: Deadline) -> None:
    """Bring ``client``'s started session to a revision: the probe, a pin or the handshake, within ``deadline``."""
    wanted = client._offered_version
    if wanted != AUTO:
        if revision(wanted).era == ENVELOPE:
            client.session.adopt(wanted, None, client.client_info, client.capabilities())
        else:
            client.session.initialize(client.client_info, client.capabilities(), protocol_version=wanted,
                                      timeout=deadline.left(_HANDSHAKE))
        return
    key = client._key
    with _VERDICTS_LOCK:
        known = _VERDICTS.get(key) if key is not None else None
    caching = key is not None and client._cache is not None
    if known is not None and known != LEGACY:
        result = _DISCOVERED.get((DISCOVER, key), client._auth_context()) if caching else None
        if result is not None and known not in (result.get("supportedVersions") or ()):
            result = None
        client.session.adopt(known, result, client.client_info, client.capabilities())
        return
    if known is None:
        version, result = _probe(client, deadline, key)
        if version != LEGACY:
            client.session.adopt(version, result, client.client_info, client.capabilities())
            _remember(key, version)
            if caching and result is not None:
                _DISCOVERED.put((DISCOVER, key), result, client._auth_context())
            return
    _handshake(client, deadline, key)


_PROBE = "the revision probe, server/discover"
_HANDSHAKE = "the handshake, initialize"


def forget(key: Optional[Hashable]) -> None:
    """Forget the verdict on one server: it refused the revision it was remembered to speak (it was replaced by
    one that speaks another, at the same URL or command), so its next connection probes again."""
    if key is not None:
        with _VERDICTS_LOCK:
            _VERDICTS.pop(key, None)
        _DISCOVERED.drop((DISCOVER, key))


def _remember(key: Optional[Hashable], verdict: str) -> None:
    if key is not None:
        with _VERDICTS_LOCK:
            _VERDICTS[key] = verdict


def _probe(client: Client, deadline: Deadline, key: Optional[Hashable]) -> Tuple[str, Optional[Dict[str, Any]]]:
    """Ask ``server/discover``: (the envelope-era version to speak, the DiscoverResult), or (LEGACY, None)."""
    version = LATEST_ENVELOPE_VERSION
    assert version is not None
    for attempt in range(3):  # the first probe, one at a version the server named, one after a broken stream
        left = deadline.left(_PROBE)
        try:
            result = client.session.discover(client.client_info, client.capabilities(), version=version,
                                             timeout=client.probe_timeout if left is None
                                             else min(client.probe_timeout, left))
        except RemoteError as refusal:
            if refusal.code != UNSUPPORTED_PROTOCOL_VERSION:
                return LEGACY, None  # a legacy server: method not found, "no session", ...
            offered = _supported(refusal.data)
            mutual = choose_envelope_version(offered)
            if mutual is not None:
                if attempt == 0 or mutual != version:
                    version = mutual  # (even the same version: some servers refuse the first request whatever)
                    continue
                return LEGACY, None
            if not offered or any(v in HANDSHAKE_VERSIONS for v in offered):
                return LEGACY, None
            raise VersionMismatch(f"the server speaks {', '.join(offered)}; this client speaks "
                                  f"{', '.join(ENVELOPE_VERSIONS + HANDSHAKE_VERSIONS)}", requested=version) from None
        except RequestTimeout:
            return LEGACY, None
        except HTTPError as exc:
            if 400 <= exc.status < 500:
                return LEGACY, None  # 404, 405, 400 "missing session id": a handshake-era endpoint
            raise
        except ResponseLost:
            if attempt == 2:
                raise
            continue  # the response stream broke (HTTP): discover is safe to ask again
        except ConnectionClosed as exc:
            if not (isinstance(key, tuple) and key[0] == "stdio"):
                raise
            # It died on the probe, or before it (a server that fails to start): not started again (its error,
            # its start-up side effects would come twice). A server that cannot bear the question (go-sdk#1177)
            # gets the handshake at the next connect.
            _remember(key, LEGACY)
            raise ConnectionClosed(f"{exc} (a server that exits on a method it does not know gets the handshake at "
                                   f"the next connect; or pin protocol_version={HANDSHAKE_VERSIONS[0]!r})") from exc
        mutual = choose_envelope_version(result.get("supportedVersions") or [])
        if mutual is None:
            return LEGACY, None
        return mutual, result if mutual == version else None
    return LEGACY, None


def _supported(data: Any) -> List[str]:
    supported = data.get("supported") if isinstance(data, dict) else None
    return [v for v in supported if isinstance(v, str)] if isinstance(supported, list) else []


def _handshake(client: Client, deadline: Deadline, key: Optional[Hashable]) -> None:
    """The initialize handshake; if the server turns out to be pinned to the envelope era, the probe once more."""
    try:
        client.session.initialize(client.client_info, client.capabilities(), timeout=deadline.left(_HANDSHAKE))
    except RemoteError as refusal:
        if refusal.code != UNSUPPORTED_PROTOCOL_VERSION or choose_envelope_version(_supported(refusal.data)) is None:
            raise
        # A server pinned to 2026-07-28 by a probe we had given up on (it was slow to start): speak it.
        version, result = _probe(client, deadline, key)
        if version == LEGACY:
            raise
        client.session.adopt(version, result, client.client_info, client.capabilities())
        _remember(key, version)
        return
    _remember(key, LEGACY)
