"""The words of the command line that are not options: the server to talk to (after ``--``, or from an
``mcpServers`` file) and the ``key=value`` arguments for it, each read into a value or refused as a `UsageError`.
"""

import argparse
import json
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..schema.validation import ValidationError, coerce_from_string
from .exits import UsageError

SEPARATOR = "--"


@dataclass
class Target:
    """The server to talk to: a URL (with HTTP headers) or a command line (with environment and cwd)."""

    url: Optional[str] = None
    argv: Optional[List[str]] = None
    headers: Dict[str, str] = field(default_factory=dict)
    env: Optional[Dict[str, str]] = None
    inherit_env: bool = False  # the whole of our environment, not only the harmless part, for a command
    cwd: Optional[str] = None


# ---- the target ---------------------------------------------------------------------------------------
def split_target(argv: Sequence[str]) -> Tuple[List[str], Optional[List[str]]]:
    """Split the command line at the first ``--``: (our arguments, the target's words or None)."""
    words = list(argv)
    if SEPARATOR not in words:
        return words, None
    index = words.index(SEPARATOR)
    return words[:index], words[index + 1:]


def parse_target(words: Sequence[str]) -> Target:
    """The target named by the words after ``--``: one http(s) URL, or a command line to spawn."""
    if not words:
        raise UsageError("nothing after --: give a server URL or a command line")
    if len(words) == 1 and words[0].startswith(("http://", "https://")):
        return Target(url=words[0])
    return Target(argv=list(words))


def target_from_config(path: str, name: Optional[str]) -> Target:
    """The server ``name`` of a JSON file of servers: desktop hosts' ``mcpServers``, or VS Code's ``servers``
    (``.vscode/mcp.json``).

    Each entry has ``command`` (with optional ``args``, ``env``, ``cwd``) or ``url`` (with optional
    ``headers``); VS Code's also says its ``type`` (``stdio``, ``http`` or ``sse``). ``name`` may be None when
    the file has exactly one server. VS Code's ``inputs`` (values asked for when the server starts) are not
    asked for: an entry that uses ``${input:...}`` is refused, naming the option that gives the value instead.
    """
    try:
        with open(path, encoding="utf-8") as file:
            document = json.load(file)
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise UsageError(f"{path} is not valid JSON: {exc}") from None
    key = "mcpServers"
    if isinstance(document, dict) and "mcpServers" not in document and isinstance(document.get("servers"), dict):
        key = "servers"  # VS Code's mcp.json
    servers = document.get(key) if isinstance(document, dict) else None
    if not isinstance(servers, dict) or not servers:
        raise UsageError(f'{path} has no "mcpServers" object (nor VS Code\'s "servers")')
    if name is None:
        if len(servers) != 1:
            raise UsageError(f"{path} has several servers; choose one with --server ({', '.join(servers)})")
        name = next(iter(servers))
    entry = servers.get(name)
    if not isinstance(entry, dict):
        raise UsageError(f"{path} has no server {name!r} (it has: {', '.join(servers)})")
    assert name is not None
    _refuse_inputs(entry, path, name)
    kind = entry.get("type")
    if kind is not None and kind not in ("stdio", "http", "sse"):
        raise UsageError(f'{path}: server {name!r}: "type" {kind!r} is none of stdio, http, sse')
    if isinstance(entry.get("url"), str) and kind != "stdio":
        return Target(url=entry["url"], headers=_string_map(entry, "headers", path, name))
    if isinstance(entry.get("command"), str) and kind in (None, "stdio"):
        args = entry.get("args", [])
        if not isinstance(args, list) or not all(isinstance(arg, str) for arg in args):
            raise UsageError(f'{path}: server {name!r}: "args" must be a list of strings')
        cwd = entry.get("cwd")
        return Target(argv=[entry["command"], *args], env=_string_map(entry, "env", path, name) or None,
                      cwd=cwd if isinstance(cwd, str) else None)
    if kind is not None:
        needed = "command" if kind == "stdio" else "url"
        raise UsageError(f'{path}: server {name!r} of type {kind!r} has no "{needed}"')
    raise UsageError(f'{path}: server {name!r} has neither "command" nor "url"')


def _refuse_inputs(entry: Dict[str, Any], path: str, name: str) -> None:
    """VS Code fills ``${input:ID}`` by asking the user when the server starts; we refuse it, saying how to
    give the value (``-e``, ``--header``) instead. (``${env:X}`` and the like are VS Code's too.)"""
    def walk(value: Any, where: str) -> None:
        if isinstance(value, str) and "${input:" in value:
            option = "-e KEY=VALUE" if where.startswith("env") else "--header 'NAME: VALUE'" \
                if where.startswith("headers") else "the value itself in the file"
            raise UsageError(f'{path}: server {name!r}: {where} uses {value!r}, a VS Code input (asked for when VS '
                             f'Code starts the server), which mcplite does not ask for: give it with {option}')
        if isinstance(value, dict):
            for key, item in value.items():
                walk(item, f"{where}.{key}" if where else str(key))
        elif isinstance(value, list):
            for index, item in enumerate(value):
                walk(item, f"{where}[{index}]")

    walk(entry, "")


def _string_map(entry: Dict[str, Any], key: str, path: str, name: str) -> Dict[str, str]:
    value = entry.get(key, {})
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise UsageError(f'{path}: server {name!r}: "{key}" must be an object of strings')
    return dict(value)


def parse_header(text: str) -> Tuple[str, str]:
    """``"Name: value"`` -> ``("Name", "value")``."""
    name, colon, value = text.partition(":")
    if not colon or not name.strip():
        raise UsageError(f"--header {text!r}: expected NAME:VALUE")
    return name.strip(), value.strip()


# ---- arguments ----------------------------------------------------------------------------------------
def parse_assignments(pairs: Sequence[str], *, option: str = "", shape: str = "key=value") -> Dict[str, str]:
    """``["a=1", "b=x"]`` -> ``{"a": "1", "b": "x"}`` (values are still text, may be empty and may hold
    ``=``); ``option`` and ``shape`` name the option in the usage error (``-e``, ``KEY=VALUE``)."""
    assignments = {}
    for pair in pairs:
        key, equals, value = pair.partition("=")
        if not equals or not key:
            raise UsageError(f"{option + ' ' if option else ''}{pair!r}: expected {shape}")
        assignments[key] = value
    return assignments


def tool_arguments(pairs: Sequence[str], args_json: Optional[str], input_schema: Dict[str, Any]) -> Dict[str, Any]:
    """The arguments of a tool call: ``--args`` JSON, overlaid by ``key=value`` pairs.

    Each value is parsed by the schema of its property (a string-typed field stays text, an integer field
    becomes an int); a key the schema does not describe is parsed as JSON when it is JSON, else kept.

    Raises:
        UsageError: bad syntax, ``--args`` that is not a JSON object, or a value its schema cannot parse.
    """
    arguments: Dict[str, Any] = {}
    if args_json is not None:
        try:
            arguments = json.loads(args_json)
        except ValueError as exc:
            raise UsageError(f"--args is not valid JSON: {exc}") from None
        if not isinstance(arguments, dict):
            raise UsageError("--args must be a JSON object")
    properties = input_schema.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    defs = {key: input_schema[key] for key in ("$defs", "definitions") if key in input_schema}
    for key, text in parse_assignments(pairs).items():
        schema = properties.get(key, True)
        if isinstance(schema, dict) and defs:
            schema = {**schema, **defs}  # so the property's "$ref"s resolve
        try:
            arguments[key] = coerce_from_string(text, schema)
        except ValidationError as exc:
            # The path is always "$" (the value itself): name the argument instead.
            reasons = "; ".join(error[len("$: "):] if error.startswith("$: ") else error for error in exc.errors)
            raise UsageError(f"{key}={text}: {reasons}") from None
    return arguments


def resolve_target(args: argparse.Namespace, target_words: Optional[List[str]]) -> Target:
    """The target from the words after ``--`` or from ``--config``/``--server``, with ``--header``s."""
    if args.config is not None:
        if target_words is not None:
            raise UsageError("give the server either after -- or with --config, not both")
        target = target_from_config(args.config, args.server)
    elif args.server is not None:
        raise UsageError("--server needs --config FILE")
    elif target_words is None:
        raise UsageError("no server: end the command with -- URL or -- COMMAND [ARGS], or use --config")
    else:
        target = parse_target(target_words)
    if args.headers:
        if target.url is None:
            raise UsageError("--header only applies to an http(s) server")
        target.headers.update(parse_header(text) for text in args.headers)
    if args.env or args.cwd is not None or args.inherit_env or getattr(args, "server_stderr", "show") != "show":
        if target.url is not None:
            raise UsageError("-e/--env, --inherit-env, --cwd and --server-stderr only apply to a server command "
                             "(stdio), not to a URL")
        target.env = {**(target.env or {}), **parse_assignments(args.env, option="-e", shape="KEY=VALUE")}
        target.inherit_env = args.inherit_env
        if args.cwd is not None:
            if not os.path.isdir(args.cwd):
                raise UsageError(f"--cwd {args.cwd}: not a directory")
            target.cwd = args.cwd
    return target
