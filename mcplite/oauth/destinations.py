"""Where the OAuth client agrees to go when a server tells it where: one pure check, made before any connection.

An MCP server names its protected resource metadata (the 401's ``resource_metadata``) and its authorization
servers; an authorization server names its endpoints. A hostile server could name anything: the cloud metadata
service (``http://169.254.169.254/...``, where a GET returns the machine's credentials), an admin service on the
client's own network, or a plain-http token endpoint that would collect the client secret in the clear. So every
URL a server names passes `check_oauth_destination` before it is fetched, posted to or opened in a browser:

1. Never a link-local address (169.254.0.0/16, fe80::/10), a cloud metadata address or name
   (`METADATA_HOSTS`), nor an address nothing should connect to (unspecified, multicast, reserved, broadcast),
   whatever the options and even on the MCP server's own origin.
2. The MCP server's own origin (scheme, host and port the caller chose) is otherwise always allowed: naming it
   sends the client nowhere it was not going already.
3. Elsewhere, https only, except on loopback (``localhost``, 127.0.0.0/8, ``::1``).
4. A loopback address only when the MCP server is on loopback too; a private address (`PRIVATE_NETWORKS`) only
   when the MCP server is an address in the same private network; any other non-public address never. Unless
   the caller opted in with ``allow_private_networks=True`` (an option of every grant), which lifts rule 4 only.

Hosts are judged as written, without resolving names: a DNS answer could change between the check and the
connection (rebinding), and the flow does no I/O of its own. Literal addresses in every form the system
resolver reads as one (``2852039166``, ``0xa9.0xfe.0xa9.0xfe``, ``127.1``, IPv4-mapped and NAT64 IPv6) are
read as the address they are. A name is taken as public: one that resolves to a private or link-local address
is not caught here. Rule 3 limits what that gives an attacker: over https, the peer must present a certificate
valid for the name, which an internal plain-http service (a metadata service, say) cannot, so the handshake
fails before a byte of the request is sent.
"""

import ipaddress
import re
from typing import Any, FrozenSet, Mapping, Optional, Tuple, Union
from urllib.parse import urlsplit

from ..errors import AuthError
from ..transports.http_messages import LOOPBACK_HOSTNAMES
from .rules import is_http_url, origin_of

__all__ = ["check_oauth_destination", "check_metadata_destinations", "host_kind", "METADATA_HOSTS", "PRIVATE_NETWORKS",
           "METADATA_URL_MEMBERS"]

Address = Union[ipaddress.IPv4Address, ipaddress.IPv6Address]
Network = Union[ipaddress.IPv4Network, ipaddress.IPv6Network]

#: Cloud instance metadata services, by name and by address (the link-local ones are refused as link-local
#: anyway; they are listed for the message). Known ones, not every one there is.
METADATA_HOSTS: FrozenSet[str] = frozenset((
    "metadata", "metadata.google.internal", "metadata.goog",  # Google Cloud
    "instance-data", "instance-data.ec2.internal", "fd00:ec2::254", "fd00:ec2::23",  # AWS (IMDS over IPv6)
    "169.254.169.254", "169.254.170.2", "169.254.169.253",  # AWS, Azure, GCP, OpenStack...; ECS; AWS DNS
    "100.100.100.200",  # Alibaba Cloud (in 100.64.0.0/10, not link-local)
    "metadata.azure.com", "metadata.oraclecloud.com",
))

#: The private networks a server may name only when the MCP server is an address in the same one (or with
#: ``allow_private_networks``): RFC 1918, shared address space (RFC 6598, carrier-grade NAT and some cloud
#: internals), IPv6 unique local addresses.
PRIVATE_NETWORKS: Tuple[Network, ...] = tuple(ipaddress.ip_network(n) for n in (
    "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "fc00::/7",
))

_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_IPV4_PART = re.compile(r"0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*")


def _legacy_ipv4(host: str) -> Optional[ipaddress.IPv4Address]:
    """The IPv4 address ``host`` is to ``inet_aton`` (which ``getaddrinfo`` uses before any lookup): one to four
    parts, each decimal, octal (a leading 0) or hex (0x), the last filling the bytes left. None: not one."""
    parts = host.split(".")
    if not 1 <= len(parts) <= 4 or not all(_IPV4_PART.fullmatch(part) for part in parts):
        return None
    # Leading zeros are allowed (strtoul reads them), but a part with more than 11 significant digits is beyond
    # 32 bits whatever its base, so not an address: refused before int() reads a host of any length.
    if any(len(part[2:].lstrip("0") if part[:2].lower() == "0x" else part.lstrip("0")) > 11 for part in parts):
        return None
    values = [int(part, 16) if part[:2].lower() == "0x" else int(part, 8) if part.startswith("0") else int(part)
              for part in parts]
    *head, last = values
    if any(value > 255 for value in head) or last >= 256 ** (4 - len(head)):
        return None
    number = last
    for index, value in enumerate(head):
        number += value << (8 * (3 - index))
    return ipaddress.IPv4Address(number)


def _address_of(host: str) -> Optional[Address]:
    """The address a URL's host is, when it is one; an IPv6 address that carries an IPv4 one is that one."""
    address: Optional[Address] = _legacy_ipv4(host)
    if address is None and ":" in host:
        try:
            address = ipaddress.IPv6Address(host.split("%", 1)[0])  # without a zone (fe80::1%eth0)
        except ValueError:
            return None
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return address.ipv4_mapped
        if address in _NAT64:
            return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if address.sixtofour is not None:
            return address.sixtofour
    return address


def host_kind(host: str) -> Tuple[str, Optional[Network]]:
    """What a URL's host (as `urllib.parse.urlsplit(url).hostname` gives it) is, judged without resolving it:

    - ``("metadata", None)``, ``("link-local", None)``, ``("unusable", None)``: never to be contacted;
    - ``("loopback", None)``;
    - ``("private", network)``: an address in one of `PRIVATE_NETWORKS`;
    - ``("non-public", None)``: another address that is not public (documentation, benchmarking...);
    - ``("public", None)``: a public address, or a name.
    """
    name = host.lower()
    name = name[:-1] if name.endswith(".") else name  # "metadata.google.internal." is the same host
    if name in METADATA_HOSTS:
        return "metadata", None
    if name in LOOPBACK_HOSTNAMES:
        return "loopback", None
    address = _address_of(name)
    if address is None:
        return "public", None
    if str(address) in METADATA_HOSTS:
        return "metadata", None
    if address.is_link_local:
        return "link-local", None
    if address.is_loopback:
        return "loopback", None
    if (address.is_unspecified or address.is_multicast or address.is_reserved
            or address == ipaddress.IPv4Address("255.255.255.255")):
        return "unusable", None
    network = next((n for n in PRIVATE_NETWORKS if address.version == n.version and address in n), None)
    if network is not None:
        return "private", network
    return ("public", None) if address.is_global else ("non-public", None)


_NEVER = {
    "metadata": "a cloud metadata service",
    "link-local": "a link-local address (169.254.0.0/16, fe80::/10)",
    "unusable": "an address no client should connect to (unspecified, multicast, reserved or broadcast)",
}


def check_oauth_destination(url: str, *, what: str, server_url: str, allow_private_networks: bool = False) -> None:
    """Refuse a URL a server named unless the OAuth client may go there (the rules are in the module docstring).

    Args:
        url: an http(s) URL named by the MCP server or an authorization server.
        what: what it is, for the message (``"the token_endpoint of https://as.example"``).
        server_url: the server the caller chose (the MCP server's URL; for an identity provider the caller
            configured, its issuer): its origin is allowed, and it decides which network is "the same".
        allow_private_networks: lift the loopback and private network rule (never the others).

    Raises:
        AuthError: the URL is refused; the message names it and the rule.
    """
    shown = url if len(url) <= 120 else url[:120] + "..."
    if not is_http_url(url):
        raise AuthError(f"{what} {shown!r} is not an http(s) URL")
    parts = urlsplit(url)
    host = parts.hostname or ""
    kind, network = host_kind(host)
    if kind in _NEVER:
        raise AuthError(f"{what} {shown!r} is {_NEVER[kind]}; the OAuth client never goes there")
    if origin_of(url) == origin_of(server_url):
        return
    if parts.scheme.lower() != "https" and kind != "loopback":
        raise AuthError(f"{what} {shown!r} is plain http on a host that is not loopback; the OAuth client "
                        "goes there over https only")
    if allow_private_networks or kind == "public":
        return
    server_kind, server_network = host_kind(urlsplit(server_url).hostname or "")
    if kind == "loopback" and server_kind == "loopback":
        return
    if kind == "private" and server_network == network:
        return
    where = {"loopback": "a loopback address", "private": f"an address in the private network {network}",
             "non-public": "an address that is not public"}[kind]
    raise AuthError(f"{what} {shown!r} is {where}, and the MCP server {server_url} is not in that network; "
                    "refused (pass allow_private_networks=True to the OAuth client to allow it)")


#: The members of authorization server metadata (RFC 8414 §2, OpenID Connect Discovery, RFC 8628, RFC 9126,
#: RFC 9449) that are URLs a client may be sent to: each is checked when the metadata is accepted, used or not.
METADATA_URL_MEMBERS = (
    "authorization_endpoint", "token_endpoint", "registration_endpoint", "jwks_uri", "revocation_endpoint",
    "introspection_endpoint", "userinfo_endpoint", "device_authorization_endpoint",
    "pushed_authorization_request_endpoint", "end_session_endpoint", "backchannel_authentication_endpoint",
)


def check_metadata_destinations(metadata: Mapping[str, Any], *, owner: str, server_url: str,
                                allow_private_networks: bool = False) -> None:
    """`check_oauth_destination` on each of `METADATA_URL_MEMBERS` that ``metadata`` gives as an http(s) URL
    (one that is no such URL is refused where it is used, by `mcplite.oauth.flow.endpoint_of`).

    Raises:
        AuthError: one is refused.
    """
    for name in METADATA_URL_MEMBERS:
        value = metadata.get(name)
        if isinstance(value, str) and is_http_url(value):
            check_oauth_destination(value, what=f"the {name} of {owner}", server_url=server_url,
                                    allow_private_networks=allow_private_networks)
