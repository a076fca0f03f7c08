"""Where sign-ins are kept between requests and between runs: `MemoryTokenStorage` (the default) and
`FileTokenStorage` (a private JSON file, as the command line's ``--auth`` uses)."""

import abc
import json
import os
import tempfile
import threading
from typing import Any, Dict, Optional, Tuple, Union

from .._files import private_directories
from ..errors import AuthError
from .records import ClientRegistration, Tokens

__all__ = ["TokenStorage", "MemoryTokenStorage", "FileTokenStorage", "user_token_file"]


def user_token_file() -> str:
    """The token file of the user running this program: ``tokens.json`` in ``$XDG_CONFIG_HOME/mcplite``,
    or in ``~/.config/mcplite`` when that variable is unset (XDG Base Directory specification)."""
    config_home = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(config_home, "mcplite", "tokens.json")


class TokenStorage(abc.ABC):
    """Where sign-ins are kept. Tokens are keyed by authorization server issuer and resource; client
    registrations by issuer alone, because credentials from one AS MUST NOT be used with another
    (SEP-2352). Implementations must be safe to call from several threads."""

    @abc.abstractmethod
    def get_tokens(self, issuer: str, resource: str) -> Optional[Tokens]:
        """The stored tokens, or None."""

    @abc.abstractmethod
    def set_tokens(self, issuer: str, resource: str, tokens: Optional[Tokens]) -> None:
        """Store tokens; None forgets them."""

    @abc.abstractmethod
    def get_client(self, issuer: str) -> Optional[ClientRegistration]:
        """The client registered with this issuer, or None."""

    @abc.abstractmethod
    def set_client(self, issuer: str, client: Optional[ClientRegistration]) -> None:
        """Store a registration; None forgets it."""


class MemoryTokenStorage(TokenStorage):
    """Keeps everything in this process only (the default)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # guards _tokens and _clients
        self._tokens: Dict[Tuple[str, str], Tokens] = {}
        self._clients: Dict[str, ClientRegistration] = {}

    def get_tokens(self, issuer: str, resource: str) -> Optional[Tokens]:
        with self._lock:
            return self._tokens.get((issuer, resource))

    def set_tokens(self, issuer: str, resource: str, tokens: Optional[Tokens]) -> None:
        with self._lock:
            if tokens is None:
                self._tokens.pop((issuer, resource), None)
            else:
                self._tokens[(issuer, resource)] = tokens

    def get_client(self, issuer: str) -> Optional[ClientRegistration]:
        with self._lock:
            return self._clients.get(issuer)

    def set_client(self, issuer: str, client: Optional[ClientRegistration]) -> None:
        with self._lock:
            if client is None:
                self._clients.pop(issuer, None)
            else:
                self._clients[issuer] = client


class FileTokenStorage(TokenStorage):
    """Keeps sign-ins in a JSON file that only the user can read (mode 0600).

    Every change rewrites the whole file atomically (a temporary file in the same directory, fsync,
    rename), so a crash never leaves half a file. The file is read on every lookup, so several processes
    see each other's sign-ins; two processes writing at the same moment can lose one of the writes, which
    costs a new sign-in, never a corrupt file.
    """

    _FORMAT = 1

    def __init__(self, path: Union[str, "os.PathLike[str]"]) -> None:
        self.path = os.fspath(path)
        # Serialises read-modify-write of the file between this process's threads (not other processes).
        self._lock = threading.Lock()

    def _load(self) -> Dict[str, Any]:
        try:
            with open(self.path, encoding="utf-8") as file:
                data = json.load(file)
        except FileNotFoundError:
            return {"format": self._FORMAT, "tokens": {}, "clients": {}}
        except (OSError, ValueError) as exc:
            raise AuthError(f"cannot read the token file {self.path}: {exc}") from exc
        if not isinstance(data, dict) or data.get("format") != self._FORMAT:
            raise AuthError(f"{self.path} is not a token file of this version")
        return data

    def _save(self, data: Dict[str, Any]) -> None:
        directory = os.path.dirname(os.path.abspath(self.path))
        private_directories(directory)  # 0700, each one we make (an existing one keeps its mode)
        # mkstemp creates the file with mode 0600, so the secrets are never readable by others, not even
        # for the moment between creation and rename.
        fd, temporary = tempfile.mkstemp(prefix=".tokens-", suffix=".tmp", dir=directory)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as file:
                json.dump(data, file, indent=1, sort_keys=True)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, self.path)
        except BaseException:
            try:
                os.unlink(temporary)
            except OSError:
                pass
            raise

    def get_tokens(self, issuer: str, resource: str) -> Optional[Tokens]:
        with self._lock:
            entry = self._load()["tokens"].get(issuer, {}).get(resource)
        return Tokens.from_json(entry) if entry else None

    def set_tokens(self, issuer: str, resource: str, tokens: Optional[Tokens]) -> None:
        with self._lock:
            data = self._load()
            by_resource = data["tokens"].setdefault(issuer, {})
            if tokens is None:
                by_resource.pop(resource, None)
            else:
                by_resource[resource] = tokens.to_json()
            if not by_resource:
                del data["tokens"][issuer]
            self._save(data)

    def get_client(self, issuer: str) -> Optional[ClientRegistration]:
        with self._lock:
            entry = self._load()["clients"].get(issuer)
        return ClientRegistration.from_json(entry) if entry else None

    def set_client(self, issuer: str, client: Optional[ClientRegistration]) -> None:
        with self._lock:
            data = self._load()
            if client is None:
                data["clients"].pop(issuer, None)
            else:
                data["clients"][issuer] = client.to_json()
            self._save(data)
