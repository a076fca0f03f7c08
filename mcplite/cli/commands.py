"""The commands that talk to a server (``info``, ``call``, ``listen``...), and connecting to it first."""

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

from ..client import Client
from ..client.skills import resolve_relative
from ..errors import MCPError
from ..protocol.tasks import EXTENSION_ID as TASKS_EXTENSION
from ..protocol.versions import HANDSHAKE_VERSIONS, LATEST_HANDSHAKE_VERSION
from . import format as cli_format
from .advice import ELICITATION_ADVICE
from .exits import EXIT_OK, EXIT_PROTOCOL, EXIT_TOOL_ERROR, TimedOut, UsageError
from .save import save_parts
from .targets import Target, parse_assignments, tool_arguments
from .terminal import StderrReporter, TerminalElicitation, _note, emit, show, speaks_unicode

#: Seconds each step of stopping a stdio server (EOF, then SIGTERM) may take: short once the user gave up
#: (a timeout, Ctrl-C, a failed start), the transport's usual grace after a command that finished.
ABORT_SHUTDOWN = 0.2
GRACEFUL_SHUTDOWN = 2.0


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
                   "era": "envelope" if client.session.enveloped else "handshake",
                   "serverInfo": client.server_info, "capabilities": client.server_capabilities,
                   "instructions": client.instructions}, cli_format.format_info)
    return EXIT_OK


_LISTS = {  # what `list` takes (the parser's choices) -> (the Client method, the result's key)
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
        if args.task is False or (client.session.enveloped and TASKS_EXTENSION not in
                                  (client.server_capabilities.get("extensions") or {})):
            result = dict(client.call_tool(args.tool, arguments, progress=reporter.progress))
        else:  # the client decides whether it is a task (2025-11-25: the server's task support, the tool's)
            result = _call_task(client, args.tool, arguments, reporter)
    finally:
        reporter.finish()
    _output(args, result, lambda value: cli_format.format_call_result(value, tools[args.tool].get("outputSchema")))
    _save(args, result.get("content") or [], args.tool, reporter)
    if result.get("isError"):
        texts = [str(block.get("text", "")) for block in result.get("content") or []
                 if isinstance(block, dict) and block.get("type") == "text"]
        summary = " ".join(" ".join(texts).split())  # one line, however many the tool wrote
        # Said once: printed for a person, the result already says it; as JSON, stderr is where a person looks.
        line = f"tool {args.tool} returned an error"
        if not getattr(args, "human_output", False) and summary:
            line += f": {summary}"
        if "elicitation" in summary and "capability" in summary and "elicitation" not in client.capabilities():
            line += f" ({ELICITATION_ADVICE})"
        reporter.error(line)
        return EXIT_TOOL_ERROR
    return EXIT_OK


def _save(args: argparse.Namespace, blocks: List[Any], stem: str, reporter: StderrReporter) -> None:
    """``--save DIR``: write the binary parts of a result to files, and say what was written."""
    if getattr(args, "save", None) is None:
        return
    try:
        written = save_parts(args.save, blocks, stem)
    except ValueError as exc:  # the server's data, not the command line, is wrong
        reporter.error(f"--save: {exc}")
        return
    for path, size in written:
        reporter.note(f"saved {path} ({cli_format.format_size(size)})")
    if not written:
        reporter.note(f"--save {args.save}: the result has no image, audio or blob to save")


def _call_task(client: Client, tool: str, arguments: Dict[str, Any], reporter: StderrReporter) -> Dict[str, Any]:
    """Call ``tool`` as a task, showing its status and progress on stderr until the result; Ctrl-C cancels it."""
    task = client.start_tool_call(tool, arguments, task=True, progress=reporter.progress)
    if task.task_id is None:  # the server answered at once
        return dict(task.result())
    shown: List[Any] = [None]

    def report(polled: Any) -> None:
        line = (polled.info.get("status"), polled.progress)
        if line != shown[0]:
            shown[0] = line
            reporter.status(f"task {line[0]}" + (f": {line[1]}" if line[1] else ""))

    try:  # from here a Ctrl-C cancels the task (the server knows it by now)
        reporter.note(f"task {task.task_id} started")
        task.wait(None, on_poll=report)
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
    result = client.read_resource(args.uri)
    _output(args, result, cli_format.format_read_result)
    _save(args, list(result.get("contents") or []), "resource", reporter)
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
    kinds, uris = _listen_filter(args.what)
    if client.session.enveloped:
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
    show(line)


def _listen_filter(what: List[str]) -> Tuple[Set[str], List[str]]:
    """The list kinds and the resource URIs ``listen`` asks for (no words: the three lists)."""
    kinds = {word for word in what if word in _LIST_KINDS}
    return kinds if what else set(_LIST_KINDS), [word for word in what if word not in _LIST_KINDS]


def _handshake_listener(args: argparse.Namespace) -> Dict[str, Any]:
    """For ``listen`` on a handshake-era server: the callbacks that print what ``args.what`` asks for."""
    kinds, uris = _listen_filter(args.what)

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


def connect(target: Target, args: argparse.Namespace, reporter: StderrReporter,
            extra: Optional[Dict[str, Any]] = None) -> Client:
    """A connected `Client` for ``target`` (the handshake is done); ``extra``: more `Client` options, which win
    (the inspector's callbacks)."""
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
    options.update(extra or {})
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
        # The server's stderr: shown as it comes (or not: --server-stderr hide), its last lines kept for the
        # message if it fails (a traceback's last line names what it missed).
        tail = getattr(args, "stderr_tail", None)
        hide = args.server_stderr == "hide"

        def server_stderr(line: str) -> None:
            if tail is not None:
                tail.append(line)
            if not hide:
                _echo_server_line(line)

        client = Client.stdio(target.argv, env=target.env, inherit_env=target.inherit_env, cwd=target.cwd,
                              shutdown_timeout=ABORT_SHUTDOWN, stderr=server_stderr, **options)
    started = time.monotonic()
    try:
        client.connect(timeout=args.connect_timeout)
    except TimeoutError as exc:
        raise TimedOut(f"{type(exc).__name__}: {_one_line(exc)} (raise it with --connect-timeout S)") from None
    _note(20, "connected to %s %s in %.0f ms, protocol %s (%s)", client.server_info.get("name"),
          client.server_info.get("version", ""), (time.monotonic() - started) * 1000, client.protocol_version,
          "envelope" if client.session.enveloped else "handshake")
    if client.session.enveloped:
        # 2026-07-28 sends a request's log messages only when it names a level; the handshake revisions send
        # them all until told otherwise. Ask for them all, so both show the same on stderr.
        client.set_logging_level("debug")
    if args.command == "listen" and not client.session.enveloped and args.protocol_version not in HANDSHAKE_VERSIONS:
        client.close()  # "auto" chose the handshake: listening needs the callbacks from the start
        args.protocol_version = client.protocol_version
        return connect(target, args, reporter, extra)
    return client


def _echo_server_line(line: str) -> None:
    """A line of the server's stderr, on this process's own stderr (where the server wrote it before)."""
    stream = sys.__stderr__ or sys.stderr
    try:
        stream.write(line + "\n")
        stream.flush()
    except (OSError, ValueError, UnicodeError):  # our stderr is gone or narrow: the line is the server's, not ours
        pass


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
    from ..oauth import FileTokenStorage, OAuth, user_token_file

    return OAuth(storage=FileTokenStorage(user_token_file()), client_name="mcplite command line",
                 protocol_version=protocol_version)


def _run(client: Client, args: argparse.Namespace, reporter: StderrReporter) -> int:
    """Run the command on a connected client, then close it: with the server's usual grace to exit when the
    command ran its course (even to an error), at once after a timeout or Ctrl-C."""
    graceful = True
    try:
        return COMMANDS[args.command](client, args, reporter)
    except (KeyboardInterrupt, TimeoutError):
        graceful = False
        reporter.finish()
        raise
    finally:
        _close(client, graceful)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__
