"""A gateway's configuration: which MCP servers to put behind it, and how their names appear in front.

Pure: `load_config` reads one file; everything else works on the parsed JSON. Two shapes are read, the ones
desktop hosts write:

    {"mcpServers": {NAME: {"command", "args", "env", "cwd"} | {"url", "headers"}}}     Claude Desktop, Cursor
    {"servers": {NAME: {"type": "stdio" | "http" | "sse", ...}}}                      VS Code's mcp.json

with these gateway keys on each server (all optional):

    prefix            put before each tool and prompt name (default: NAME + "_", as FastMCP's mount does;
                      "" keeps the names as they are)
    tools             {"allow": [glob, ...], "deny": [glob, ...]}: which of the server's tools to show,
                      matched against the server's own names (before rename and prefix); deny wins
    resources         {"allow": [glob, ...], "deny": [glob, ...]}: which of the server's resources and resource
                      templates to show, matched against their URIs (a template's uriTemplate); deny wins (two
                      servers listing one URI: deny it on one of them)
    rename            {"old": "new"}: a tool or prompt's name, applied before the prefix (the front name of
                      "old" is prefix + "new")
    timeout           seconds each request to the server may take (default 60)
    protocol_version  pin the revision spoken to the server ("2025-06-18", "2026-07-28"; default: "auto")
    auth              "oauth": sign in to an HTTP server with OAuth (`mcplite.oauth.OAuth`, its token file)
    disabled          true: leave the server out

Strings may name environment variables: ``${env:VAR}`` or ``${VAR}`` (a variable that is not set is an error
naming it). Every error is a `ConfigError` naming the file, the server and the key.
"""

from __future__ import annotations

import fnmatch
import os
import re

from ..errors import MCPError
from ..protocol import json_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

__all__ = ["ConfigError", "UpstreamConfig", "GatewayConfig", "load_config", "parse_config"]

#: Seconds a request to an upstream may take unless its ``timeout`` says otherwise.
DEFAULT_TIMEOUT = 60.0

_VARIABLE = re.compile(r"\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)\}")
_SERVER_KEYS = {"command", "args", "env", "cwd", "url", "headers", "type", "prefix", "tools", "resources", "rename",
                "timeout", "protocol_version", "auth", "disabled", "envFile", "description"}


class ConfigError(MCPError, ValueError):
    """A gateway configuration that cannot be used; the message names the file, the server and the key."""


class UpstreamConfig:
    """One server behind the gateway, as its configuration says.

    ``transport`` is "stdio", "http" (Streamable HTTP, falling back to HTTP+SSE) or "sse"; ``argv``, ``env``
    and ``cwd`` are a stdio server's; ``url`` and ``headers`` an HTTP one's.
    """

    __slots__ = ("name", "transport", "argv", "env", "cwd", "url", "headers", "prefix", "allow", "deny",
                 "resource_allow", "resource_deny", "rename", "timeout", "protocol_version", "auth")

    def __init__(self, name: str, transport: str, *, argv: Sequence[str] = (), env: Optional[Dict[str, str]] = None,
                 cwd: Optional[str] = None, url: Optional[str] = None, headers: Optional[Dict[str, str]] = None,
                 prefix: Optional[str] = None, allow: Sequence[str] = (), deny: Sequence[str] = (),
                 rename: Optional[Dict[str, str]] = None, timeout: float = DEFAULT_TIMEOUT,
                 protocol_version: str = "auto", auth: Optional[str] = None, resource_allow: Sequence[str] = (),
                 resource_deny: Sequence[str] = ()) -> None:
        self.name = name
        self.transport = transport
        self.argv = list(argv)
        self.env = dict(env or {})
        self.cwd = cwd
        self.url = url
        self.headers = dict(headers or {})
        self.prefix = f"{name}_" if prefix is None else prefix
        self.allow = list(allow)
        self.deny = list(deny)
        self.resource_allow = list(resource_allow)
        self.resource_deny = list(resource_deny)
        self.rename = dict(rename or {})
        self.timeout = timeout
        self.protocol_version = protocol_version
        self.auth = auth

    def shows_tool(self, name: str) -> bool:
        """Whether the upstream's tool ``name`` (its own name) is shown: allowed (or no allow list), not denied."""
        if any(fnmatch.fnmatchcase(name, pattern) for pattern in self.deny):
            return False
        return not self.allow or any(fnmatch.fnmatchcase(name, pattern) for pattern in self.allow)

    def shows_resource(self, uri: str) -> bool:
        """Whether the resource ``uri`` (or template, by its ``uriTemplate``) is shown: allowed, not denied."""
        if any(fnmatch.fnmatchcase(uri, pattern) for pattern in self.resource_deny):
            return False
        return not self.resource_allow or any(fnmatch.fnmatchcase(uri, pattern) for pattern in self.resource_allow)

    def front_name(self, name: str) -> str:
        """The name a tool or prompt of this upstream has in front: renamed, then prefixed."""
        return self.prefix + self.rename.get(name, name)

    def __repr__(self) -> str:  # never the headers or env: they hold secrets
        where = self.url if self.transport != "stdio" else " ".join(self.argv)
        return f"UpstreamConfig({self.name!r}, {self.transport!r}, {where!r})"


class GatewayConfig:
    """The servers of a configuration, in file order, and where it came from (``source``)."""

    __slots__ = ("upstreams", "source")

    def __init__(self, upstreams: Sequence[UpstreamConfig], source: str = "<dict>") -> None:
        self.upstreams = list(upstreams)
        self.source = source


def load_config(path: Union[str, os.PathLike[str]], environ: Optional[Mapping[str, str]] = None) -> GatewayConfig:
    """The configuration in the JSON file at ``path`` (`parse_config`)."""
    source = os.fspath(path)
    try:
        with open(source, encoding="utf-8") as file:
            document = json_text.loads(file.read())  # bounded: deep nesting is refused, not a RecursionError
    except OSError as exc:
        raise ConfigError(f"{source}: cannot read it: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ConfigError(f"{source}: not valid JSON: {exc}") from None
    return parse_config(document, source=source, environ=environ)


def parse_config(document: Any, *, source: str = "<dict>",
                 environ: Optional[Mapping[str, str]] = None) -> GatewayConfig:
    """The configuration in a parsed JSON document (``mcpServers`` or VS Code's ``servers``).

    ``environ`` is what ``${VAR}`` reads (default: this process's environment). Raises `ConfigError`.
    """
    env = os.environ if environ is None else environ
    if not isinstance(document, dict):
        raise ConfigError(f"{source}: the configuration must be a JSON object")
    key = "mcpServers" if "mcpServers" in document else "servers" if "servers" in document else None
    if key is None:
        raise ConfigError(f'{source}: no "mcpServers" object (nor VS Code\'s "servers")')
    servers = document[key]
    if not isinstance(servers, dict):
        raise ConfigError(f"{source}: {key!r} must be an object of servers by name")
    upstreams = []
    for name, entry in servers.items():
        where = _Where(source, name)
        if not isinstance(entry, dict):
            raise where.error(None, "must be an object")
        if entry.get("disabled") is True:
            continue
        upstreams.append(_upstream(name, _interpolated(entry, env, where), where))
    return GatewayConfig(upstreams, source)


class _Where:
    """The file and server an error is about."""

    def __init__(self, source: str, server: str) -> None:
        self.source, self.server = source, server

    def error(self, key: Optional[str], message: str) -> ConfigError:
        place = f"server {self.server!r}" + (f", key {key!r}" if key else "")
        return ConfigError(f"{self.source}: {place}: {message}")


def _interpolated(value: Any, env: Mapping[str, str], where: _Where, key: Optional[str] = None) -> Any:
    """``value`` with ``${env:VAR}`` and ``${VAR}`` replaced in every string (keys of objects too)."""
    if isinstance(value, str):
        def replace(match: Any) -> str:
            name = match.group(1)
            if name not in env:
                raise where.error(key, f"the environment variable {name} is not set")
            return env[name]
        return _VARIABLE.sub(replace, value)
    if isinstance(value, list):
        return [_interpolated(item, env, where, key) for item in value]
    if isinstance(value, dict):
        return {name: _interpolated(item, env, where, key or name) for name, item in value.items()}
    return value


def _upstream(name: str, entry: Dict[str, Any], where: _Where) -> UpstreamConfig:
    unknown = sorted(set(entry) - _SERVER_KEYS)
    if unknown:
        raise where.error(unknown[0], "unknown key (a typo?)")
    kind = entry.get("type")
    if kind is None:
        kind = "stdio" if "command" in entry else "http" if "url" in entry else None
    if kind == "streamable-http":
        kind = "http"
    if kind not in ("stdio", "http", "sse"):
        raise where.error("type", 'say "command" (a server process) or "url" (an HTTP server), or a type of '
                                  f'"stdio", "http" or "sse" (not {kind!r})')
    options: Dict[str, Any] = {}
    if kind == "stdio":
        command = entry.get("command")
        if not isinstance(command, str) or not command:
            raise where.error("command", "must be a non-empty string")
        args = entry.get("args", [])
        if not isinstance(args, list) or not all(isinstance(arg, str) for arg in args):
            raise where.error("args", "must be a list of strings")
        options["argv"] = [command, *args]
        options["env"] = _strings(entry, "env", where)
        cwd = entry.get("cwd")
        if cwd is not None and not isinstance(cwd, str):
            raise where.error("cwd", "must be a string")
        options["cwd"] = cwd
    else:
        url = entry.get("url")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise where.error("url", "must be an http:// or https:// URL")
        options["url"] = url
        options["headers"] = _strings(entry, "headers", where)
        auth = entry.get("auth")
        if auth not in (None, "oauth"):
            raise where.error("auth", f'the one value known is "oauth", not {auth!r}')
        options["auth"] = auth
    prefix = entry.get("prefix")
    if prefix is not None and not isinstance(prefix, str):
        raise where.error("prefix", "must be a string")
    for key, option in (("tools", ""), ("resources", "resource_")):
        chosen = entry.get(key, {})
        if not isinstance(chosen, dict) or set(chosen) - {"allow", "deny"}:
            raise where.error(key, 'must be {"allow": [globs], "deny": [globs]}')
        for part in ("allow", "deny"):
            globs = chosen.get(part, [])
            if not isinstance(globs, list) or not all(isinstance(glob, str) for glob in globs):
                raise where.error(key, f"{part} must be a list of glob strings")
            options[option + part] = globs
    options["rename"] = _strings(entry, "rename", where)
    timeout = entry.get("timeout", DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise where.error("timeout", f"must be a number of seconds above 0, not {timeout!r}")
    version = entry.get("protocol_version", "auto")
    if version != "auto":
        from ..protocol.versions import is_supported

        if not isinstance(version, str) or not is_supported(version):
            raise where.error("protocol_version", f'must be "auto" or a revision mcplite speaks, not {version!r}')
    return UpstreamConfig(name, kind, prefix=prefix, timeout=float(timeout), protocol_version=version, **options)


def _strings(entry: Dict[str, Any], key: str, where: _Where) -> Dict[str, str]:
    value = entry.get(key, {})
    if not isinstance(value, dict) or not all(isinstance(item, str) for item in value.values()):
        raise where.error(key, "must be an object of strings")
    return dict(value)

