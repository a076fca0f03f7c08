"""The command line: talk to any MCP server, or serve a `Server` of yours.

    python -m mcplite [--timeout S] [--connect-timeout S] [--json | --human] [-v] [--log-level LEVEL]
                      [--protocol-version V] [--header K:V ...] [--auth] [--ask] [--root DIR ...]
                      [-e KEY=VAL ...] [--inherit-env] [--cwd DIR] COMMAND [ARGS] -- TARGET
    python -m mcplite listen [tools|prompts|resources|URI ...] -- TARGET
    python -m mcplite skills list | get NAME_OR_URI [FILE] -- TARGET
    python -m mcplite tasks get|cancel ID -- TARGET
    python -m mcplite serve FILE_OR_MODULE[:OBJECT] [--http HOST:PORT] [--stateless] [--json-response]
                            [--shutdown-grace S] [--allow-host HOST[:PORT] ...] [--allow-origin ORIGIN ...]
    python -m mcplite --version

TARGET, after the first ``--``, is one ``http(s)://`` URL or a server command line (spawned and spoken to
over stdio, with ``--cwd DIR`` as its working directory); ``--config FILE --server NAME`` takes it from an
``mcpServers`` JSON file instead. A server command inherits only the harmless part of our environment (PATH,
HOME, USER, the locale, the temporary directory: `stdio.INHERITED_ENV_VARS`), never its secrets; ``-e KEY=VAL``
(and a config entry's ``env``) adds to that, and ``--inherit-env`` passes the whole environment.

Results are for people on a terminal (tools as signatures such as ``add(a: integer, b?: string) -> integer``,
content as text with images and blobs summarised: `mcplite.cli_format`) and JSON when stdout is piped;
``--json`` and ``--human`` choose. Server logs, progress and our own messages go to stderr; ``-v`` (info),
``-vv`` (debug) or ``--log-level LEVEL`` show the ``mcplite`` logger there too. Output never fails on a
narrow encoding: what it cannot encode is written as backslash escapes (JSON as ``\\uXXXX``).

``--connect-timeout`` (default 30 s) bounds starting the server and the handshake; ``--timeout`` (default
60 s) bounds each request after that, so a short ``--timeout`` does not cut off a server that is slow to
start. After a timeout or Ctrl-C a stdio server is given 0.2 s to exit on EOF, then 0.2 s after SIGTERM
(after a command that finished, 2 s each): interrupting never leaves you waiting in silence.

Exit codes:

    ====  ==========================================================
    0     success
    1     the tool returned a result with ``isError``
    2     usage error (the command line is wrong)
    3     protocol or connection error
    4     timeout (``--connect-timeout`` or ``--timeout``)
    130   interrupted (Ctrl-C)
    ====  ==========================================================

``--auth`` signs in to a protected HTTP server with OAuth (the browser opens when a sign-in is needed);
the tokens are kept for the next run in the user's token file (`mcplite.oauth.user_token_file`).

The revision is chosen as `Client` chooses it (``--protocol-version auto``, the default: 2026-07-28 with a
server that speaks it, else the handshake); ``info`` says which. A tool that asks the user something
(elicitation) is answered on the terminal with ``--ask`` (the default when stdin is a terminal): the questions
go to stderr, the answers are read from stdin. ``--root DIR`` offers a directory as a root.

``call`` on a server that takes tasks (README, "Tasks") runs the call as a task: its status and progress are
shown on stderr until the result, and Ctrl-C cancels the task on the server before exiting (``--no-task``
calls directly). ``tasks get ID`` shows a task (with its result once it has one), ``tasks cancel ID`` cancels it.
"""

import argparse
import codecs
import functools
import importlib
import importlib.util
import io
import json
import os
import re
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Callable, Dict, List, NoReturn, Optional, Sequence, Tuple

from . import cli_format
from .client import Client
from .client.skills import resolve_relative
from .errors import MCPError
from .protocol.tasks import EXTENSION_ID as TASKS_EXTENSION
from .protocol.versions import HANDSHAKE_VERSIONS, LATEST_HANDSHAKE_VERSION, MODERN_VERSIONS
from .schema.validation import ValidationError, coerce_from_string
from .server import Server

__all__ = ["main", "build_parser", "UsageError", "Target", "split_target", "parse_target", "target_from_config",
           "user_sign_in", "TerminalElicitation", "package_version", "configure_logging",
           "parse_header", "parse_assignments", "tool_arguments", "emit", "StderrReporter", "load_server"]

EXIT_OK = 0
EXIT_TOOL_ERROR = 1
EXIT_USAGE = 2
EXIT_PROTOCOL = 3
EXIT_TIMEOUT = 4
EXIT_INTERRUPTED = 130  # the shell's convention for a Ctrl-C

SEPARATOR = "--"

DEFAULT_CONNECT_TIMEOUT = 30.0  # generous: npx, uvx and docker may download before the server starts
#: Seconds each step of stopping a stdio server (EOF, then SIGTERM) may take: short once the user gave up
#: (a timeout, Ctrl-C, a failed start), the transport's usual grace after a command that finished.
ABORT_SHUTDOWN = 0.2
GRACEFUL_SHUTDOWN = 2.0


class UsageError(Exception):
    """The command line is wrong (exit code 2); the message says how."""


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
    """The server ``name`` of an ``mcpServers`` JSON file (the format desktop MCP hosts use).

    Each entry has ``command`` (with optional ``args``, ``env``, ``cwd``) or ``url`` (with optional
    ``headers``). ``name`` may be None when the file has exactly one server.
    """
    try:
        with open(path, encoding="utf-8") as file:
            document = json.load(file)
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise UsageError(f"{path} is not valid JSON: {exc}") from None
    servers = document.get("mcpServers") if isinstance(document, dict) else None
    if not isinstance(servers, dict) or not servers:
        raise UsageError(f'{path} has no "mcpServers" object')
    if name is None:
        if len(servers) != 1:
            raise UsageError(f"{path} has several servers; choose one with --server ({', '.join(servers)})")
        name = next(iter(servers))
    entry = servers.get(name)
    if not isinstance(entry, dict):
        raise UsageError(f"{path} has no server {name!r} (it has: {', '.join(servers)})")
    assert name is not None
    if isinstance(entry.get("url"), str):
        return Target(url=entry["url"], headers=_string_map(entry, "headers", path, name))
    if isinstance(entry.get("command"), str):
        args = entry.get("args", [])
        if not isinstance(args, list) or not all(isinstance(arg, str) for arg in args):
            raise UsageError(f'{path}: server {name!r}: "args" must be a list of strings')
        cwd = entry.get("cwd")
        return Target(argv=[entry["command"], *args], env=_string_map(entry, "env", path, name) or None,
                      cwd=cwd if isinstance(cwd, str) else None)
    raise UsageError(f'{path}: server {name!r} has neither "command" nor "url"')


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


# ---- stdout and stderr --------------------------------------------------------------------------------
def emit(value: Any, stream: Optional[IO[str]] = None) -> None:
    """Print a result as JSON: indented for a person at a terminal, one line for a pipe.

    On a stream that cannot encode all of Unicode (``PYTHONIOENCODING=cp1252``) the JSON is ASCII with
    ``\\uXXXX`` escapes, so it stays valid JSON rather than failing or being mangled.
    """
    out: IO[str] = stream or sys.stdout
    indent = 2 if out.isatty() else None
    out.write(json.dumps(value, indent=indent, ensure_ascii=not speaks_unicode(out)) + "\n")
    out.flush()


def show(text: str, stream: Optional[IO[str]] = None) -> None:
    """Print human output (a line break added)."""
    out: IO[str] = stream or sys.stdout
    out.write(text + "\n")
    out.flush()


def speaks_unicode(stream: IO[str]) -> bool:
    """Can ``stream`` encode every character? (A stream without an encoding, like StringIO, can.)"""
    encoding = getattr(stream, "encoding", None)
    if not encoding:
        return True
    try:
        return codecs.lookup(encoding).name.startswith("utf")
    except LookupError:
        return False


def tolerate_narrow_encodings() -> None:
    """Make stdout and stderr write what their encoding cannot hold as backslash escapes.

    A tool's text in Japanese must not crash the program on a cp1252 console (a traceback, and exit code 1,
    which would claim the tool failed). Only narrow streams are changed: UTF-8 ones can write everything.
    """
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and not speaks_unicode(stream) and stream.errors == "strict":
            stream.reconfigure(errors="backslashreplace")


class StderrReporter:
    """Shows the server's log messages and progress on stderr: a progress bar on a terminal, lines otherwise.

    Its methods are called on the client session's dispatcher thread, one at a time.
    """

    BAR_WIDTH = 30

    def __init__(self, stream: Optional[IO[str]] = None) -> None:
        self.stream = stream or sys.stderr
        self.is_terminal = self.stream.isatty()
        self._bar_shown = False

    def log(self, params: Dict[str, Any]) -> None:
        data = params.get("data")
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
        logger = f"{params['logger']}: " if params.get("logger") else ""
        self._line(f"[{params.get('level', 'info')}] {logger}{text}")

    def progress(self, done: float, total: Optional[float], message: Optional[str]) -> None:
        amount = f"{done:g}/{total:g}" if total else f"{done:g}"
        suffix = f" {message}" if message else ""
        if not self.is_terminal:
            self._line(f"progress: {amount}{suffix}")
            return
        filled = int(self.BAR_WIDTH * min(done / total, 1.0)) if total else 0
        bar = "#" * filled + "-" * (self.BAR_WIDTH - filled)
        self.stream.write(f"\r\033[K[{bar}] {amount}{suffix}")
        self.stream.flush()
        self._bar_shown = True

    def finish(self) -> None:
        """End the progress bar's line, if one is shown."""
        if self._bar_shown:
            self.stream.write("\n")
            self.stream.flush()
            self._bar_shown = False

    def error(self, message: str) -> None:
        self._line(f"mcplite: {message}")

    def note(self, message: str) -> None:
        """A line about what is happening (a task started), not an error."""
        self._line(message)

    def status(self, text: str) -> None:
        """A task's status and progress: rewritten in place on a terminal, one line each otherwise."""
        if not self.is_terminal:
            self._line(text)
            return
        self.stream.write(f"\r\033[K{text}")
        self.stream.flush()
        self._bar_shown = True

    def _line(self, text: str) -> None:
        self.finish()
        self.stream.write(text + "\n")
        self.stream.flush()


# ---- answering the server's questions on the terminal ---------------------------------------------------
class TerminalElicitation:
    """Answers elicitation by asking on the terminal: the question and each field's prompt go to ``output``
    (stderr), the answers are read from ``input`` (stdin), one line each.

    A form is accepted, declined or cancelled first (Enter accepts); then each field of its schema is asked
    for, read by its type (booleans: y/n; numbers and integers; enums: one of the choices, or its number), an
    empty line keeping the default or leaving an optional field out. A URL is shown, to be opened by the user.
    The end of the input cancels. One question at a time, even when several calls ask at once.
    """

    def __init__(self, input: Optional[IO[str]] = None, output: Optional[IO[str]] = None) -> None:
        self._input = input
        self._output = output
        self._lock = threading.Lock()  # one conversation with the user at a time

    def __call__(self, params: Dict[str, Any]) -> Dict[str, Any]:
        with self._lock:
            try:
                return self._ask(params)
            except EOFError:
                return {"action": "cancel"}

    def _say(self, text: str) -> None:
        stream = self._output or sys.stderr
        stream.write(text)
        stream.flush()

    def _read(self, prompt: str) -> str:
        self._say(prompt)
        line = (self._input or sys.stdin).readline()
        if not line:
            raise EOFError
        return line.rstrip("\r\n")

    def _ask(self, params: Dict[str, Any]) -> Dict[str, Any]:
        self._say(f"\nThe server asks: {params.get('message', '')}\n")
        if params.get("mode") == "url":
            self._say(f"Open this URL to answer: {params.get('url')}\n")
        action = self._read("Answer? [A]ccept, (d)ecline, (c)ancel: ").strip().lower()
        if action.startswith("d"):
            return {"action": "decline"}
        if action.startswith("c"):
            return {"action": "cancel"}
        if params.get("mode") == "url":
            return {"action": "accept"}
        schema = params.get("requestedSchema") or {}
        required = set(schema.get("required") or ())
        content: Dict[str, Any] = {}
        for name, field_schema in (schema.get("properties") or {}).items():
            value = self._field(name, field_schema, name in required)
            if value is not None:
                content[name] = value
        return {"action": "accept", "content": content}

    def _field(self, name: str, schema: Dict[str, Any], required: bool) -> Any:
        """Ask for one field until the answer fits its type; None leaves it out."""
        kind = schema.get("type", "string")
        choices = _choices(schema)
        label = schema.get("title") or name
        hint = "/".join(choices) if choices else "y/n" if kind == "boolean" else kind
        default = schema.get("default")
        suffix = f" [{_shown(default)}]" if default is not None else "" if required else " (optional)"
        if schema.get("description"):
            self._say(f"  {schema['description']}\n")
        while True:
            text = self._read(f"  {label} ({hint}){suffix}: ").strip()
            if not text:
                if default is not None or not required:
                    return default
                self._say("  an answer is needed\n")
                continue
            try:
                return _read_value(text, kind, choices)
            except ValueError as problem:
                self._say(f"  {problem}\n")


def _choices(schema: Dict[str, Any]) -> List[str]:
    if isinstance(schema.get("enum"), list):
        return [str(choice) for choice in schema["enum"]]
    options = schema.get("oneOf") or schema.get("anyOf")
    if isinstance(options, list):
        return [str(option["const"]) for option in options if isinstance(option, dict) and "const" in option]
    return []


def _shown(value: Any) -> str:
    return ("y" if value else "n") if isinstance(value, bool) else str(value)


def _read_value(text: str, kind: str, choices: List[str]) -> Any:
    """One typed answer; ValueError says what was expected."""
    if choices:
        if text.isdigit() and 1 <= int(text) <= len(choices) and text not in choices:
            return choices[int(text) - 1]
        if text not in choices:
            raise ValueError(f"one of {', '.join(choices)}")
        return text
    if kind == "boolean":
        if text.lower() in ("y", "yes", "true", "1"):
            return True
        if text.lower() in ("n", "no", "false", "0"):
            return False
        raise ValueError("y or n")
    if kind == "integer":
        try:
            return int(text)
        except ValueError:
            raise ValueError("a whole number") from None
    if kind == "number":
        try:
            return float(text) if any(mark in text for mark in ".eE") else int(text)
        except ValueError:
            raise ValueError("a number") from None
    return text


# ---- the commands that talk to a server ---------------------------------------------------------------
Command = Callable[[Client, argparse.Namespace, StderrReporter], int]


def _output(args: argparse.Namespace, value: Any, human: Callable[[Any], str]) -> None:
    """Print a result: ``human(value)`` for a person (``--human``, or a terminal), else JSON."""
    if getattr(args, "human_output", False):
        show(human(value))
    else:
        emit(value)


def _info(client: Client, args: argparse.Namespace, reporter: StderrReporter) -> int:
    _output(args, {"protocolVersion": client.protocol_version,
                   "era": "modern" if client.session.modern else "handshake",
                   "serverInfo": client.server_info, "capabilities": client.server_capabilities,
                   "instructions": client.instructions}, cli_format.format_info)
    return EXIT_OK


_LISTS = {  # what `list` takes -> (the Client method, the result's key)
    "tools": (Client.list_tools, "tools"),
    "resources": (Client.list_resources, "resources"),
    "templates": (Client.list_resource_templates, "resourceTemplates"),
    "prompts": (Client.list_prompts, "prompts"),
}


def _list(client: Client, args: argparse.Namespace, reporter: StderrReporter) -> int:
    method, key = _LISTS[args.kind]
    _output(args, {key: method(client)}, lambda listed: cli_format.format_list(key, listed[key]))
    return EXIT_OK


def _call(client: Client, args: argparse.Namespace, reporter: StderrReporter) -> int:
    # The tool's input schema says how to read each key=value, so the list comes first.
    tools = {tool["name"]: tool for tool in client.list_tools()}
    if args.tool not in tools:
        raise UsageError(f"the server has no tool {args.tool!r} (it has: {', '.join(tools) or 'none'})")
    arguments = tool_arguments(args.arguments, args.args_json, tools[args.tool].get("inputSchema") or {})
    try:
        result: Dict[str, Any]
        if args.task is not False and _takes_tasks(client, dict(tools[args.tool])):
            result = _call_task(client, args.tool, arguments, reporter)
        else:
            result = dict(client.call_tool(args.tool, arguments, progress=reporter.progress))
    finally:
        reporter.finish()
    _output(args, result, cli_format.format_call_result)
    if result.get("isError"):
        texts = [str(block.get("text", "")) for block in result.get("content", []) if block.get("type") == "text"]
        summary = " ".join(" ".join(texts).split())  # one line, however many the tool wrote
        reporter.error(f"tool {args.tool} returned an error" + (f": {summary}" if summary else ""))
        return EXIT_TOOL_ERROR
    return EXIT_OK


def _takes_tasks(client: Client, tool: Dict[str, Any]) -> bool:
    """Whether ``call`` goes through a task: the server takes tasks (2026-07-28: it declares the extension and
    decides per call; 2025-11-25: it declares task support and lists the tool as taking them)."""
    capabilities = client.server_capabilities
    if client.session.modern:
        extensions = capabilities.get("extensions")
        return isinstance(extensions, dict) and TASKS_EXTENSION in extensions
    execution = tool.get("execution")
    return isinstance(capabilities.get("tasks"), dict) and isinstance(execution, dict) and \
        execution.get("taskSupport") in ("optional", "required")


def _call_task(client: Client, tool: str, arguments: Dict[str, Any], reporter: StderrReporter) -> Dict[str, Any]:
    """Call ``tool`` as a task, showing its status and progress on stderr until the result; Ctrl-C cancels it."""
    task = client.start_tool_call(tool, arguments, task=True, progress=reporter.progress)
    if task.task_id is None:  # the server answered at once
        return dict(task.result())
    shown: List[Any] = [None]

    def show(polled: Any) -> None:
        line = (polled.info.get("status"), polled.progress)
        if line != shown[0]:
            shown[0] = line
            reporter.status(f"task {line[0]}" + (f": {line[1]}" if line[1] else ""))

    try:  # from here a Ctrl-C cancels the task (the server knows it by now)
        reporter.note(f"task {task.task_id} started")
        task.wait(None, on_poll=show)
    except KeyboardInterrupt:
        reporter.finish()
        try:
            task.cancel()
            reporter.error(f"cancelled task {task.task_id}")
        except (MCPError, OSError) as exc:
            reporter.error(f"could not cancel task {task.task_id}: {_one_line(exc)}")
        raise
    reporter.finish()
    return dict(task.result())


def _tasks(client: Client, args: argparse.Namespace, reporter: StderrReporter) -> int:
    """``tasks get ID`` / ``tasks cancel ID``: a task by its id (one started earlier, by anyone allowed to)."""
    task = client.task(args.task_id)
    if args.action == "cancel":
        task.cancel()
    info = task.info
    if args.action == "get" and task.done and info.get("status") != "cancelled" and "result" not in info \
            and "error" not in info:
        try:  # 2025-11-25: the outcome is not part of the task: fetch it, it is there
            info["result"] = dict(task.result())
        except MCPError as exc:
            info["error"] = {"message": _one_line(exc)}
    _output(args, info, cli_format.format_task)
    return EXIT_OK


def _read(client: Client, args: argparse.Namespace, reporter: StderrReporter) -> int:
    _output(args, client.read_resource(args.uri), cli_format.format_read_result)
    return EXIT_OK


def _prompt(client: Client, args: argparse.Namespace, reporter: StderrReporter) -> int:
    _output(args, client.get_prompt(args.name, parse_assignments(args.arguments)),  # prompt arguments are text
            cli_format.format_prompt_result)
    return EXIT_OK


def _complete(client: Client, args: argparse.Namespace, reporter: StderrReporter) -> int:
    if args.kind == "prompt":
        ref = {"type": "ref/prompt", "name": args.ref}
    else:
        ref = {"type": "ref/resource", "uri": args.ref}
    completion = client.complete(ref, args.argument, args.value, context=parse_assignments(args.context) or None)
    _output(args, {"completion": completion}, lambda value: cli_format.format_completion(value["completion"]))
    return EXIT_OK


def _skills(client: Client, args: argparse.Namespace, reporter: StderrReporter) -> int:
    """``skills list``: the entries (no file is read); ``skills get NAME [FILE]``: the entry, and SKILL.md (or
    FILE) read and verified against it (digest, size, frontmatter): a mismatch is an error, never printed."""
    if args.action == "list":
        if args.name is not None:
            raise UsageError("skills list takes no NAME (skills get NAME shows one)")
        _output(args, {"skills": client.list_skills()}, lambda value: cli_format.format_skills(value["skills"]))
        return EXIT_OK
    if args.name is None:
        raise UsageError("skills get needs the skill's NAME or the URI of its SKILL.md")
    entry = client.get_skill(args.name)
    skill = client.load_skill(entry)
    uri = skill.uri if args.file is None else resolve_relative(skill.entry, args.file)
    data = skill.text.encode("utf-8") if args.file is None else skill.read(uri)
    shown: Dict[str, Any] = {"skill": entry, "uri": uri}
    try:
        shown["text"] = data.decode("utf-8")
    except UnicodeDecodeError:
        import base64

        shown["blob"] = base64.b64encode(data).decode("ascii")
    _output(args, shown, cli_format.format_skill)
    return EXIT_OK


def _ping(client: Client, args: argparse.Namespace, reporter: StderrReporter) -> int:
    started = time.monotonic()
    client.ping()
    _output(args, {}, lambda _: f"ok ({(time.monotonic() - started) * 1000:.0f} ms)")
    return EXIT_OK


_LIST_KINDS = ("tools", "prompts", "resources")


def _listen(client: Client, args: argparse.Namespace, reporter: StderrReporter) -> int:
    """Print each notification as one JSON line as it comes, until Ctrl-C or the end of the stream."""
    kinds = {word for word in args.what if word in _LIST_KINDS}
    uris = [word for word in args.what if word not in _LIST_KINDS]
    if not args.what:
        kinds = set(_LIST_KINDS)
    if client.session.modern:
        with client.listen(tools="tools" in kinds, prompts="prompts" in kinds, resources="resources" in kinds,
                           uris=uris) as stream:
            for method, params in stream:
                _print_line({"method": method, "params": params}, args)
        reporter.error(f"the listen stream ended ({stream.end_reason})"
                       + (f": {stream.error}" if stream.error is not None else ""))
        return EXIT_PROTOCOL if stream.end_reason == "lost" else EXIT_OK
    # The handshake era: the server sends what changed unasked; resources/subscribe for each URI.
    for uri in uris:
        client.subscribe_resource(uri)
    client.session.closed.wait()
    reporter.error("the server closed the connection")
    return EXIT_OK


def _print_line(value: Dict[str, Any], args: argparse.Namespace) -> None:
    """One notification: a JSON line, or ``method {params}`` for a person."""
    if getattr(args, "human_output", False):
        line = cli_format.format_notification(value["method"], value.get("params"))
    else:
        line = json.dumps(value, ensure_ascii=not speaks_unicode(sys.stdout))
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _handshake_listener(args: argparse.Namespace) -> Dict[str, Any]:
    """For ``listen`` on a handshake-era server: the callbacks that print what ``args.what`` asks for."""
    kinds = {word for word in args.what if word in _LIST_KINDS} or (set() if args.what else set(_LIST_KINDS))
    uris = {word for word in args.what if word not in _LIST_KINDS}

    def changed(kind: str) -> None:
        if kind in kinds:
            _print_line({"method": f"notifications/{kind}/list_changed", "params": {}}, args)

    def updated(uri: str) -> None:
        if uri in uris:
            _print_line({"method": "notifications/resources/updated", "params": {"uri": uri}}, args)

    return {"on_list_changed": changed, "on_resource_updated": updated}


COMMANDS: Dict[str, Command] = {
    "info": _info, "list": _list, "call": _call, "read": _read, "prompt": _prompt, "complete": _complete,
    "ping": _ping, "listen": _listen, "skills": _skills, "tasks": _tasks,
}


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
    if args.env or args.cwd is not None or args.inherit_env:
        if target.url is not None:
            raise UsageError("-e/--env, --inherit-env and --cwd only apply to a server command (stdio), not to a "
                             "URL")
        target.env = {**(target.env or {}), **parse_assignments(args.env, option="-e", shape="KEY=VALUE")}
        target.inherit_env = args.inherit_env
        if args.cwd is not None:
            if not os.path.isdir(args.cwd):
                raise UsageError(f"--cwd {args.cwd}: not a directory")
            target.cwd = args.cwd
    return target


def connect(target: Target, args: argparse.Namespace, reporter: StderrReporter) -> Client:
    """A connected `Client` for ``target`` (the handshake is done)."""
    options: Dict[str, Any] = {"protocol_version": args.protocol_version, "on_log": reporter.log}
    if args.timeout is not None:
        options["timeout"] = args.timeout
    if args.roots:
        options["roots"] = [{"uri": Path(root).resolve().as_uri(), "name": Path(root).resolve().name or "/"}
                            for root in args.roots]
    if args.ask if args.ask is not None else sys.stdin.isatty():
        options["elicitation"] = TerminalElicitation()
        options["elicitation_modes"] = ("form", "url")
    if args.command == "listen" and args.protocol_version in HANDSHAKE_VERSIONS:
        options.update(_handshake_listener(args))
    if args.auth and target.url is None:
        raise UsageError("--auth only applies to an http(s) server")
    if target.url is not None:
        if target.headers:
            options["headers"] = target.headers
        if args.auth:
            options["auth"] = user_sign_in(args.protocol_version if args.protocol_version in HANDSHAKE_VERSIONS
                                           else LATEST_HANDSHAKE_VERSION)
        try:
            client = Client(target.url, **options)
        except ValueError as exc:  # a URL the HTTP transport cannot use
            raise UsageError(f"{target.url}: {exc}") from None
    else:
        assert target.argv is not None
        _note(20, "starting %s%s", " ".join(target.argv), f" in {target.cwd}" if target.cwd else "")
        # Stopped quickly unless the command finishes (see _close): a server that failed to start, timed out
        # or was interrupted is not waited for.
        client = Client.stdio(target.argv, env=target.env, inherit_env=target.inherit_env, cwd=target.cwd,
                              shutdown_timeout=ABORT_SHUTDOWN, **options)
    started = time.monotonic()
    try:
        client.connect(timeout=args.connect_timeout)
    except TimeoutError as exc:
        raise TimedOut(f"{type(exc).__name__}: the server did not finish connecting within "
                       f"{args.connect_timeout:g} s (raise it with --connect-timeout S)") from None
    _note(20, "connected to %s %s in %.0f ms, protocol %s (%s)", client.server_info.get("name"),
          client.server_info.get("version", ""), (time.monotonic() - started) * 1000, client.protocol_version,
          "modern" if client.session.modern else "handshake")
    if client.session.modern:
        # 2026-07-28 sends a request's log messages only when it names a level; the handshake revisions send
        # them all until told otherwise. Ask for them all, so both show the same on stderr.
        client.set_logging_level("debug")
    if args.command == "listen" and not client.session.modern and args.protocol_version not in HANDSHAKE_VERSIONS:
        client.close()  # "auto" chose the handshake: listening needs the callbacks from the start
        args.protocol_version = client.protocol_version
        return connect(target, args, reporter)
    return client


class TimedOut(Exception):
    """A wait ran out (exit code 4); the message says which and the option that sets it."""


def _close(client: Client, graceful: bool) -> None:
    """Close the client; a stdio server gets the usual grace to exit only when ``graceful``."""
    transport = client.transport
    if graceful and hasattr(transport, "shutdown_timeout"):
        setattr(transport, "shutdown_timeout", GRACEFUL_SHUTDOWN)  # a stdio transport's (checked just above)
    _note(10, "closing the connection%s", "" if graceful else " (stopping the server at once)")
    client.close()


def user_sign_in(protocol_version: str) -> Any:
    """The ``--auth`` sign-in: OAuth in the user's browser, its tokens kept in the user's token file.

    Imported here, not at the top: only ``--auth`` needs the OAuth client.
    """
    from .oauth import FileTokenStorage, OAuth, user_token_file

    return OAuth(storage=FileTokenStorage(user_token_file()), client_name="mcplite command line",
                 protocol_version=protocol_version)


# ---- serve --------------------------------------------------------------------------------------------
def load_server(spec: str) -> Server:
    """The `Server` named by ``FILE_OR_MODULE[:OBJECT]``.

    A path to a ``.py`` file is run as a module (its folder first on ``sys.path``, as ``python FILE``
    would); anything else is imported as a module name. Without ``:OBJECT``, the module must hold exactly
    one `Server`. ``OBJECT`` may be dotted (``app.server``).

    Raises:
        UsageError: the file or module cannot be loaded, or holds no (or several) servers.
    """
    location, object_path = _split_object(spec)
    module = _load_module(location)
    if object_path:
        try:
            found = functools.reduce(getattr, object_path.split("."), module)
        except AttributeError:
            raise UsageError(f"{location} has no {object_path!r}") from None
        if not isinstance(found, Server):
            raise UsageError(f"{location}:{object_path} is a {type(found).__name__}, not a Server")
        return found
    servers: Dict[int, Tuple[str, Server]] = {}  # by identity: one server may have several names
    for name, value in vars(module).items():
        if isinstance(value, Server):
            servers.setdefault(id(value), (name, value))
    if len(servers) == 1:
        return next(iter(servers.values()))[1]
    if not servers:
        raise UsageError(f"{location} defines no Server object")
    names = ", ".join(sorted(name for name, _ in servers.values()))
    raise UsageError(f"{location} defines several Server objects ({names}); choose one with {location}:NAME")


def _split_object(spec: str) -> Tuple[str, Optional[str]]:
    location, colon, object_path = spec.rpartition(":")
    # Only a dotted name after the colon is an object: "C:\\servers\\x.py" is a path, not "C:" + object.
    if colon and location and all(part.isidentifier() for part in object_path.split(".")):
        return location, object_path
    return spec, None


def _load_module(location: str) -> Any:
    is_file = location.endswith(".py") or os.sep in location or (os.altsep or os.sep) in location
    try:
        if is_file:
            return _load_file(location)
        if os.getcwd() not in sys.path:  # `python -m` would find modules in the current folder too
            sys.path.insert(0, os.getcwd())
        return importlib.import_module(location)
    except UsageError:
        raise
    except Exception as exc:  # the module's own failure: report it as the reason it cannot be served
        raise UsageError(f"cannot load {location}: {type(exc).__name__}: {exc}") from None


def _load_file(path: str) -> Any:
    path = os.path.abspath(path)
    if not os.path.isfile(path):
        raise UsageError(f"no such file: {path}")
    name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise UsageError(f"cannot load {path} as Python")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(path))
    # Registered under its name, as an imported module is: dataclasses and string annotations in it look
    # their module up there. A name already taken (a file called json.py) is left alone.
    sys.modules.setdefault(name, module)
    spec.loader.exec_module(module)
    return module


def _serve(args: argparse.Namespace) -> int:
    server = load_server(args.target)
    options: Dict[str, Any] = {}
    if args.stateless:
        options["stateless"] = True
    if args.json_response:
        options["json_response"] = True
    if args.shutdown_grace is not None:
        options["shutdown_grace"] = args.shutdown_grace
    if args.allow_hosts:
        options["allowed_hosts"] = args.allow_hosts
    if args.allow_origins:
        options["allowed_origins"] = args.allow_origins
    if options and args.http is None:
        raise UsageError("--stateless, --json-response, --shutdown-grace, --allow-host and --allow-origin need "
                         "--http HOST:PORT")
    try:
        server.run(http=args.http, **options)
    except ValueError as exc:  # the address or an option refused before serving (a public address, no --allow-host)
        raise UsageError(str(exc)) from None
    return EXIT_OK


# ---- logging and the version ----------------------------------------------------------------------------
_LOG_LEVELS = ("debug", "info", "warning", "error", "critical")
#: The ``mcplite.cli`` logger once `configure_logging` asked for one; until then nothing imports `logging`
#: (it costs more start-up time than the rest of a command).
_logger: Any = None


def _note(level: int, message: str, *args: Any) -> None:
    if _logger is not None:
        _logger.log(level, message, *args)


def configure_logging(level: Optional[str], verbose: int, stream: Optional[IO[str]] = None) -> Callable[[], None]:
    """Show the ``mcplite`` logger on ``stream`` (stderr) at ``level``, or at info (``-v``) or debug
    (``-vv``); ``level`` wins over ``verbose``. Without either, warnings only, tersely (a peer that breaks the
    protocol, a tool left out): the command line is a process of the package's own, so they are not hidden
    as a library's are (`mcplite._log`). Returns what undoes it (for `main` run in-process)."""
    global _logger
    import logging

    quiet = level is None and not verbose
    numeric = logging.WARNING if quiet else getattr(logging, level.upper()) if level else \
        logging.INFO if verbose == 1 else logging.DEBUG
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(logging.Formatter("%(name)s: %(levelname)s: %(message)s" if quiet else
                                           "%(asctime)s %(levelname)s %(name)s: %(message)s"))
    package_logger = logging.getLogger("mcplite")
    saved_level = package_logger.level
    package_logger.addHandler(handler)
    package_logger.setLevel(numeric)
    _logger = logging.getLogger("mcplite.cli")

    def undo() -> None:
        global _logger
        package_logger.removeHandler(handler)
        package_logger.setLevel(saved_level)
        _logger = None

    return undo


def package_version(package: str = "mcplite", pyproject: Optional[Path] = None) -> str:
    """The installed version: the package's ``__version__``, else its distribution metadata, else the
    ``version`` in the source tree's pyproject.toml, else "unknown"."""
    try:
        version = getattr(importlib.import_module(package), "__version__", None)
    except ImportError:
        version = None
    if isinstance(version, str) and version:
        return version
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as distribution_version

    try:
        return distribution_version(package)
    except PackageNotFoundError:
        pass
    path = pyproject or Path(__file__).resolve().parent.parent / "pyproject.toml"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return "unknown"
    project = re.search(r"^\[project\]\s*$(.*?)(?=^\[|\Z)", text, re.MULTILINE | re.DOTALL)
    found = re.search(r'^version\s*=\s*["\']([^"\']+)["\']', project.group(1) if project else "", re.MULTILINE)
    return found.group(1) if found else "unknown"


# ---- the parser ---------------------------------------------------------------------------------------
class _Parser(argparse.ArgumentParser):
    """An ArgumentParser that raises `UsageError` rather than printing usage and exiting."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see {self.prog} --help)")


_TARGET_HELP = """\
the server (TARGET, after --):
  -- http://host:port/mcp          an HTTP server (Streamable HTTP, or legacy HTTP+SSE)
  -- COMMAND [ARGS...]             a server process, spoken to over its stdin and stdout
  --config FILE --server NAME      a server of an "mcpServers" JSON file, as desktop MCP hosts use:
                                   {"mcpServers": {"NAME": {"command", "args", "env", "cwd"} or {"url", "headers"}}}

exit status: 0 success, 1 the tool returned isError, 2 usage error, 3 protocol or connection error,
             4 timeout, 130 interrupted (Ctrl-C)"""

_EXAMPLES = {
    "info": "{prog} info -- python3 server.py",
    "list": "{prog} list tools -- http://127.0.0.1:8000/mcp",
    "call": "{prog} call add a=2 b=3 -- python3 -m mcplite serve examples/everything_server.py\n"
            "  {prog} call search --args '{{\"query\": \"mcp\", \"limit\": 5}}' -- http://127.0.0.1:8000/mcp",
    "read": "{prog} read test://static-text -- python3 server.py",
    "prompt": "{prog} prompt test_prompt_with_arguments arg1=hello arg2=world -- python3 server.py",
    "complete": "{prog} complete prompt test_prompt_with_arguments arg1 pa -- python3 server.py\n"
                "  {prog} complete resource 'test://template/{{id}}/data' id 1 -- python3 server.py",
    "ping": "{prog} ping --config ~/.config/mcp.json --server weather",
    "tasks": "{prog} tasks get 5d1c0e8a -- http://127.0.0.1:8000/mcp\n"
             "  {prog} tasks cancel 5d1c0e8a -- http://127.0.0.1:8000/mcp",
    "listen": "{prog} listen -- http://127.0.0.1:8000/mcp\n"
              "  {prog} listen tools file:///etc/app.cfg -- python3 server.py",
    "skills": "{prog} skills list -- python3 -m mcplite serve examples/everything_server.py\n"
              "  {prog} skills get everything-server references/tools.md -- http://127.0.0.1:8000/mcp",
    "serve": "{prog} serve examples/everything_server.py --http 127.0.0.1:8000\n"
             "  {prog} serve mypackage.server:app",
}


_OVERVIEW_EXAMPLES = """\
  {prog} call add a=2 b=3 -- python3 -m mcplite serve examples/everything_server.py
  {prog} --timeout 10 list tools -- http://127.0.0.1:8000/mcp
  {prog} --header 'Authorization: Bearer TOKEN' info -- https://example.com/mcp
  {prog} --auth list tools -- https://example.com/mcp     (sign in with OAuth; tokens kept for next time)
  {prog} serve examples/everything_server.py --http 127.0.0.1:8000"""


def _program_name() -> str:
    return "python -m mcplite" if os.path.basename(sys.argv[0]) == "__main__.py" else "mcplite"


def build_parser(prog: str = "mcplite") -> argparse.ArgumentParser:
    """The argument parser for everything before the ``--`` (the target is split off first)."""
    formatter = argparse.RawDescriptionHelpFormatter
    parser = _Parser(
        prog=prog, formatter_class=formatter,
        description="Talk to an MCP server from the command line, or serve one.\n"
                    "Results are for people on a terminal and JSON when piped (--json, --human choose);\n"
                    "the server's logs and progress go to stderr.\n"
                    "Run COMMAND --help for the help of each command.",
        epilog=_TARGET_HELP + "\n\nexamples:\n" + _OVERVIEW_EXAMPLES.format(prog=prog))
    parser.add_argument("--version", action="version", version=f"mcplite {package_version()}",
                        help="print mcplite's version and exit")
    _add_output_options(parser, argparse.SUPPRESS)
    parser.add_argument("--timeout", type=_seconds, metavar="S",
                        help="seconds to wait for each answer once connected (default 60)")
    parser.add_argument("--connect-timeout", type=_seconds, default=DEFAULT_CONNECT_TIMEOUT, metavar="S",
                        help="seconds to wait for the server to start and finish the handshake "
                             f"(default {DEFAULT_CONNECT_TIMEOUT:g})")
    parser.add_argument("-v", "--verbose", action="count", default=0,
                        help="show what mcplite does on stderr: -v info, -vv debug")
    parser.add_argument("--log-level", choices=_LOG_LEVELS, type=str.lower, metavar="LEVEL",
                        help=f"the level of the mcplite logger on stderr ({', '.join(_LOG_LEVELS)}); "
                             "wins over -v")
    parser.add_argument("-e", "--env", action="append", default=[], metavar="KEY=VAL",
                        help="set an environment variable for a server command (repeatable; stdio only): it "
                             "inherits only PATH, HOME, USER, the locale and the like, not our secrets")
    parser.add_argument("--inherit-env", action="store_true",
                        help="pass a server command this process's whole environment, secrets included "
                             "(stdio only)")
    parser.add_argument("--cwd", metavar="DIR", help="the working directory of a server command (stdio only)")
    versions = ["auto", *MODERN_VERSIONS, *HANDSHAKE_VERSIONS]
    parser.add_argument("--protocol-version", choices=versions, default="auto", metavar="V",
                        help="the protocol revision: auto (the default: 2026-07-28 with a server that speaks it, else "
                             f"the handshake), or one of {', '.join(versions[1:])}")
    parser.add_argument("--ask", action=argparse.BooleanOptionalAction, default=None,
                        help="answer the server's questions (elicitation) on the terminal: they go to stderr, the "
                             "answers are read from stdin (default: when stdin is a terminal)")
    parser.add_argument("--root", action="append", default=[], dest="roots", metavar="DIR",
                        help="offer DIR to the server as a root (repeatable)")
    parser.add_argument("--header", action="append", default=[], dest="headers", metavar="K:V",
                        help="an HTTP header to send with every request (repeatable)")
    parser.add_argument("--auth", action="store_true",
                        help="sign in to a protected http(s) server with OAuth: the browser opens when needed, "
                             "and the tokens are kept in $XDG_CONFIG_HOME/mcplite/tokens.json "
                             "(~/.config/mcplite/tokens.json), readable by you only")
    parser.add_argument("--config", metavar="FILE", help='an "mcpServers" JSON file to take the server from')
    parser.add_argument("--server", metavar="NAME", help="the server's name in --config")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True

    def command(name: str, help: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help, description=help[0].upper() + help[1:] + ".",
                                  prog=f"{prog} {name}", formatter_class=formatter,
                                  epilog="examples:\n  " + _EXAMPLES[name].format(prog=prog))
        if name != "serve":
            # Also after the command (`list tools --json`); SUPPRESS keeps a value given before it.
            _add_output_options(sub, argparse.SUPPRESS)
        return sub

    command("info", "print the server's protocolVersion, serverInfo, capabilities and instructions")
    listing = command("list", "list the server's tools, resources, resource templates or prompts (all pages)")
    listing.add_argument("kind", choices=list(_LISTS))
    call = command("call", "call a tool and print its CallToolResult")
    call.add_argument("tool", metavar="TOOL")
    call.add_argument("arguments", nargs="*", metavar="key=value",
                      help="an argument; the value is read by the tool's input schema (text stays text)")
    call.add_argument("--args", dest="args_json", metavar="JSON", help="arguments as one JSON object")
    call.add_argument("--task", action=argparse.BooleanOptionalAction, default=None,
                      help="run the call as a task where the server takes tasks, showing its status until the "
                           "result; Ctrl-C cancels it (default: whenever the server takes tasks; --no-task: "
                           "call directly)")
    read = command("read", "read a resource and print its contents")
    read.add_argument("uri", metavar="URI")
    prompt = command("prompt", "get a prompt and print its messages")
    prompt.add_argument("name", metavar="NAME")
    prompt.add_argument("arguments", nargs="*", metavar="key=value", help="a prompt argument")
    complete = command("complete", "ask for completions of a prompt argument or a resource template variable")
    complete.add_argument("kind", choices=["prompt", "resource"])
    complete.add_argument("ref", metavar="NAME_OR_URI", help="the prompt's name or the resource template")
    complete.add_argument("argument", metavar="ARGUMENT", help="the argument (or template variable) to complete")
    complete.add_argument("value", nargs="?", default="", metavar="VALUE", help="what has been typed so far")
    complete.add_argument("--context", action="append", default=[], metavar="key=value",
                          help="an argument already chosen (repeatable)")
    command("ping", "check that the server answers")
    tasks = command("tasks", "show or cancel a task (a tool call the server runs in the background) by its id")
    tasks.add_argument("action", choices=["get", "cancel"])
    tasks.add_argument("task_id", metavar="ID")
    listen = command("listen", "print the server's notifications as JSON lines as they come, until Ctrl-C")
    listen.add_argument("what", nargs="*", metavar="tools|prompts|resources|URI",
                        help="the lists whose changes to print, and resources whose updates to print "
                             "(default: the three lists)")
    skills = command("skills", "list the server's skills (skills extension), or get one: its entry and SKILL.md "
                               "or another of its files, verified against the entry")
    skills.add_argument("action", choices=["list", "get"])
    skills.add_argument("name", nargs="?", metavar="NAME_OR_URI", help="get: the skill's name or SKILL.md URI")
    skills.add_argument("file", nargs="?", metavar="FILE",
                        help="get: the file to print, relative to the skill (default: SKILL.md)")
    serve = command("serve", "serve a Server object over stdio, or over HTTP with --http")
    serve.add_argument("target", metavar="FILE_OR_MODULE[:OBJECT]",
                       help="a .py file or a module name; OBJECT names the Server when there are several")
    serve.add_argument("--http", metavar="HOST:PORT",
                       help="serve Streamable HTTP at /mcp (and legacy HTTP+SSE at /sse) instead of stdio")
    serve.add_argument("--stateless", action="store_true", help="HTTP without sessions: each request stands alone")
    serve.add_argument("--json-response", action="store_true",
                       help="answer HTTP requests with JSON bodies rather than SSE streams")
    serve.add_argument("--shutdown-grace", type=_seconds, metavar="S",
                       help="on SIGTERM or Ctrl-C, seconds the HTTP requests in progress have to be answered "
                            "before the server exits (default 5)")
    serve.add_argument("--allow-host", action="append", default=[], dest="allow_hosts", metavar="HOST[:PORT]",
                       help="a Host the HTTP server accepts (repeat for more; '*' for any): required to serve on an "
                            "address other than loopback, where it stops DNS rebinding (default: the loopback names)")
    serve.add_argument("--allow-origin", action="append", default=[], dest="allow_origins", metavar="ORIGIN",
                       help="a browser Origin (scheme://host[:port]) the HTTP server accepts (repeat for more; '*' "
                            "for any; default: loopback origins on a loopback address, none elsewhere)")
    return parser


def _add_output_options(parser: argparse.ArgumentParser, default: Any) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--json", dest="output", action="store_const", const="json", default=default,
                       help="print results as JSON (the default when stdout is not a terminal)")
    group.add_argument("--human", dest="output", action="store_const", const="human", default=default,
                       help="print results for people (the default on a terminal)")


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text!r}: must be more than 0")
    return value


def parse_arguments(parser: argparse.ArgumentParser, words: List[str]) -> argparse.Namespace:
    """Parse our words; ``key=value`` pairs may also come after options (``call t --args J k=v``).

    argparse gives a ``nargs="*"`` positional only the words before the first option, so the pairs it
    leaves over are added here; any other leftover word is an error.
    """
    args, extra = parser.parse_known_args(words)
    if extra and hasattr(args, "arguments") and all("=" in word and not word.startswith("-") for word in extra):
        args.arguments += extra
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    return args


# ---- entry point --------------------------------------------------------------------------------------
def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the command line; returns the exit status (the console script exits with it)."""
    tolerate_narrow_encodings()
    words, target_words = split_target(sys.argv[1:] if argv is None else argv)
    reporter = StderrReporter()
    undo_logging: Callable[[], None] = lambda: None
    try:
        args = parse_arguments(build_parser(_program_name()), words)
        undo_logging = configure_logging(args.log_level, args.verbose)
        if args.command == "serve":
            if target_words is not None:
                raise UsageError("serve takes no server after --")
            return _serve(args)
        output = getattr(args, "output", None)
        args.human_output = output == "human" or (output is None and sys.stdout.isatty())
        target = resolve_target(args, target_words)
        return _run(connect(target, args, reporter), args, reporter)
    except UsageError as exc:
        reporter.error(str(exc))
        return EXIT_USAGE
    except TimedOut as exc:
        reporter.error(str(exc))
        return EXIT_TIMEOUT
    except TimeoutError as exc:  # RequestTimeout, or a socket's
        reporter.error(f"{type(exc).__name__}: {_one_line(exc)} (raise it with --timeout S)")
        return EXIT_TIMEOUT
    except (MCPError, OSError) as exc:  # the server, the protocol or the connection failed
        reporter.error(f"{type(exc).__name__}: {_one_line(exc)}")
        return EXIT_PROTOCOL
    except KeyboardInterrupt:
        reporter.error("interrupted")
        return EXIT_INTERRUPTED
    except SystemExit as exc:  # --help, --version
        return exc.code if isinstance(exc.code, int) else EXIT_OK
    finally:
        undo_logging()


def _run(client: Client, args: argparse.Namespace, reporter: StderrReporter) -> int:
    """Run the command on a connected client, then close it: with the server's usual grace to exit when the
    command ran its course (even to an error), at once after a timeout or Ctrl-C."""
    graceful = False
    try:
        status = COMMANDS[args.command](client, args, reporter)
        graceful = True
        return status
    except (KeyboardInterrupt, TimeoutError):
        reporter.finish()
        raise
    except BaseException:
        graceful = True
        raise
    finally:
        _close(client, graceful)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__
