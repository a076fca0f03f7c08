"""The checks a request passes before it reaches a route, and the one list of loopback host names.

Pure functions of the request's headers and the app's settings: each returns quietly or raises `Reject`
with the status the spec asks for.

- ``Host`` against an allow-list (DNS rebinding, 403), ``Origin`` against an allow-list or, by default, the
  loopback origins when the server is on loopback (403): `RequestGuard.check_host_and_origin`.
- ``Content-Type`` and ``Accept`` of a POST (415, 406) and ``Accept`` of a GET stream (406).
- the body size limit (413), which the adapters apply while they read the body.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

from urllib.parse import urlsplit

from ..http_messages import LOOPBACK_HOSTNAMES, LOOPBACK_HOSTS
from .adapter import Reject

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    from typing import FrozenSet, Mapping, Optional, Sequence, Set, Tuple

__all__ = ["LOOPBACK_HOSTS", "RequestGuard", "check_post_media", "check_stream_accept", "media_types", "accepts",
           "unlisted_hosts"]


def unlisted_hosts(where: str) -> str:
    """Why a server ``where`` (``"bound to 0.0.0.0"``) refuses to start without ``allowed_hosts``, and the fixes."""
    return (f"allowed_hosts is required for a server {where}: list the host names clients use to reach it "
            f"(allowed_hosts=['mcp.example.com', '192.168.1.20:8000']; --allow-host on the command line), or "
            f"give allowed_hosts=['*'] to accept any Host (behind a proxy that checks it). Without the list, a "
            f"web page that any browser able to reach this server visits can drive it by DNS rebinding")


def media_types(value: str) -> Set[str]:
    """The media types of a ``Content-Type`` or ``Accept`` value, lower case, without parameters."""
    return {part.split(";", 1)[0].strip().lower() for part in value.split(",")}


def accepts(accept: Set[str], media_type: str) -> bool:
    """Does an ``Accept`` list (`media_types`) admit ``media_type``, directly or by a wildcard?"""
    major = media_type.split("/", 1)[0]
    return media_type in accept or "*/*" in accept or f"{major}/*" in accept


def split_host(value: str) -> Tuple[str, str]:
    """``"Host:port"`` -> (lower-case host, port or ""); IPv6 hosts keep their brackets."""
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        host, rest = value[: end + 1], value[end + 1:]
        return host, rest[1:] if rest.startswith(":") else ""
    host, _, port = value.partition(":")
    return host, port


def check_post_media(headers: Mapping[str, str], json_response: bool) -> None:
    """A POST must send JSON (415) and accept both JSON and SSE (406; JSON alone in JSON response mode)."""
    if "application/json" not in media_types(headers.get("content-type", "")):
        raise Reject(415, "Unsupported Media Type: Content-Type must be application/json")
    accept = media_types(headers.get("accept", ""))
    wants_events = json_response or accepts(accept, "text/event-stream")
    if not accepts(accept, "application/json") or not wants_events:
        raise Reject(406, "Not Acceptable: Accept must list application/json and text/event-stream")


def check_stream_accept(headers: Mapping[str, str]) -> None:
    """A GET that opens or resumes a stream must accept SSE (406)."""
    if not accepts(media_types(headers.get("accept", "")), "text/event-stream"):
        raise Reject(406, "Not Acceptable: Accept must list text/event-stream")


class RequestGuard:
    """The checks of one app's settings: which hosts and origins it accepts, and how large a body.

    Args:
        allowed_hosts: ``"name"`` (any port) or ``"name:port"``; ``["*"]`` or None accepts any ``Host``.
        allowed_origins: ``"scheme://host[:port]"`` or ``"*"``; None accepts the loopback origins when the server
            is on loopback, and no other.
        max_body_size: the largest request body accepted, in bytes.
        on_loopback: whether the server can only be reached through loopback: the adapter says so when it knows
            its address (the standard-library server); None judges by ``allowed_hosts`` (loopback names only).

    Why an ``Origin`` equal to the ``Host`` is not taken for the server's own: in a DNS rebinding attack the
    attacker's page and the host it rebinds are one name, so the browser sends both headers with the
    attacker's name. Only a list, or loopback on both sides, tells a page the server trusts.
    """

    def __init__(self, allowed_hosts: Optional[Sequence[str]], allowed_origins: Optional[Sequence[str]],
                 max_body_size: int, on_loopback: Optional[bool] = None) -> None:
        self.max_body_size = max_body_size
        self._any_port_hosts: Optional[FrozenSet[str]] = None
        self._host_ports: FrozenSet[str] = frozenset()
        names = [value.strip().lower() for value in allowed_hosts or ()]
        if allowed_hosts is not None and "*" not in names:
            self._any_port_hosts = frozenset(name for name in names if not split_host(name)[1])
            self._host_ports = frozenset(name for name in names if split_host(name)[1])
        self._allowed_origins = None if allowed_origins is None else frozenset(o.rstrip("/") for o in allowed_origins)
        if on_loopback is None:
            on_loopback = self._any_port_hosts is not None and bool(names) and all(
                split_host(name)[0].strip("[]") in LOOPBACK_HOSTNAMES for name in names)
        #: Whether a loopback ``Origin`` is accepted without ``allowed_origins``: the server is on loopback.
        self.on_loopback = on_loopback

    def check_host_and_origin(self, headers: Mapping[str, str]) -> None:
        """403 for a ``Host`` not on the allow-list (DNS rebinding) or an ``Origin`` not allowed."""
        host_header = headers.get("host", "")
        if self._any_port_hosts is not None:
            host, port = split_host(host_header)
            if host not in self._any_port_hosts and f"{host}:{port}" not in self._host_ports:
                raise Reject(403, f"Forbidden: Host {host_header!r} is not allowed")
        origin = headers.get("origin")
        if origin is not None and not self._origin_allowed(origin):
            raise Reject(403, f"Forbidden: Origin {origin!r} is not allowed")

    def _origin_allowed(self, origin: str) -> bool:
        if self._allowed_origins is not None:
            return "*" in self._allowed_origins or origin.rstrip("/") in self._allowed_origins
        if not self.on_loopback:
            return False  # browsers are trusted only by name (allowed_origins) on a server others can reach
        try:
            parts = urlsplit(origin)
        except ValueError:  # a malformed IPv6 literal
            return False
        if parts.scheme not in ("http", "https"):
            return False  # "null" (sandboxed pages, files) and anything stranger
        return parts.hostname in LOOPBACK_HOSTNAMES

    def body_too_large(self, size: int) -> bool:
        """Is a body of ``size`` bytes (declared or read so far) over the limit (413)?"""
        return size > self.max_body_size
