"""Who a request comes from: the principal of what an HTTP ``authenticate`` hook returned.

Sessions, tasks and sealed ``requestState`` belong to the principal that made them; another principal is told
they do not exist. `principal_of` is the default reading (``Server(bind_principal=...)`` replaces it), in this
order:

1. an object with a ``principal`` attribute (a non-empty str): that string, as the application chose it;
2. token claims (a dict) with ``sub``: ``"iss|sub|client"``, the client being ``client_id`` or else ``azp``;
3. claims with ``username`` (token introspection, RFC 7662) and no ``sub``: ``"iss||client|username"``;
4. claims with ``client_id`` or ``azp`` and neither of those (a client acting for itself): ``"iss||client"``;
5. a str or an int (a user name, an account number): its ``repr``; another object whose class defines
   ``__repr__``: that ``repr``.

Anything else names nobody: ``None`` (unauthenticated) or claims with none of those members (an introspection
answer may hold ``active`` alone), ``iss`` alone (everyone of one issuer), a bool (``True`` for "let in"), an
object that only has ``object.__repr__`` (its address, which a later object may reuse). For those it returns
None, and the server then refuses the features that belong to someone, rather than pool every caller as one.

In the joined forms a ``|`` or ``\\`` inside a value is escaped with a backslash, so the fields are told apart,
and the forms are told apart by their fields: ``"iss|sub|client"`` has a non-empty second field, the other two
an empty one, and of those ``"iss||client|username"`` has four fields where ``"iss||client"`` has three. So two
different identities never give one string. The ``"iss|sub|client"`` form is the one earlier versions gave,
unchanged for values without ``|`` or ``\\``.

Pure: no I/O, no imports.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    from typing import Any, Dict, Optional

__all__ = ["principal_of"]


def principal_of(auth: Any) -> Optional[str]:
    """The principal ``auth`` names (see the module docstring), or None when it names nobody."""
    if auth is None or isinstance(auth, bool):
        return None
    explicit = getattr(auth, "principal", None)
    if isinstance(explicit, str) and explicit:
        return explicit
    if isinstance(auth, dict):
        return _from_claims(auth)
    if isinstance(auth, (str, int)):
        return repr(auth)
    representation: Any = type(auth).__repr__
    if representation is object.__repr__:  # its address: not who it is, and reused once it is collected
        return None
    return repr(auth)


def _from_claims(claims: Dict[Any, Any]) -> Optional[str]:
    issuer = _member(claims, "iss")
    subject = _member(claims, "sub")
    client = _member(claims, "client_id") or _member(claims, "azp")
    if subject:
        return "|".join((issuer, subject, client))
    username = _member(claims, "username")
    if username:
        return "|".join((issuer, "", client, username))
    if client:
        return "|".join((issuer, "", client))
    return None


def _member(claims: Dict[Any, Any], name: str) -> str:
    """A claim as text, escaped for joining; "" when absent, null or empty."""
    value = claims.get(name)
    if value is None:
        return ""
    return str(value).replace("\\", "\\\\").replace("|", "\\|")
