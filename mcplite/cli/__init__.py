"""The command line: talk to any MCP server, or serve a `Server` of yours.

    python -m mcplite [--timeout S] [--connect-timeout S] [--json | --human] [-v] [--log-level LEVEL]
                      [--protocol-version V] [--header K:V ...] [--auth] [--ask] [--root DIR ...]
                      [-e KEY=VAL ...] [--inherit-env] [--cwd DIR] [--server-stderr show|hide] [--save DIR]
                      COMMAND [ARGS] -- TARGET
    python -m mcplite listen [tools|prompts|resources|URI ...] -- TARGET
    python -m mcplite skills list | get NAME_OR_URI [FILE] -- TARGET
    python -m mcplite tasks get|cancel ID -- TARGET
    python -m mcplite serve FILE_OR_MODULE[:OBJECT] [--http HOST:PORT] [--stateless] [--json-response]
                            [--shutdown-grace S] [--allow-host HOST[:PORT] ...] [--allow-origin ORIGIN ...]
    python -m mcplite gateway CONFIG [--check] [--http HOST:PORT] [--allow-host HOST[:PORT] ...] [--allow-origin ORIGIN ...]
    python -m mcplite record OUT -- COMMAND [ARGS...]
    python -m mcplite replay CASSETTE [--peer NAME] [--http HOST:PORT] [the HTTP options of serve]
    python -m mcplite inspect [SERVER_FILE] [--port N] [--no-browser] [-- TARGET]
    python -m mcplite completion bash|zsh|fish
    python -m mcplite --version

TARGET, after the first ``--``, is one ``http(s)://`` URL or a server command line (spawned and spoken to
over stdio, with ``--cwd DIR`` as its working directory); ``--config FILE --server NAME`` takes it from an
``mcpServers`` JSON file (or VS Code's ``servers``, ``.vscode/mcp.json``; its ``${input:...}`` values are
refused, naming the option that gives them) instead. A server named without the ``--`` gets the command line
to write. A server command inherits only the harmless part of our environment (PATH,
HOME, USER, the locale, the temporary directory: `stdio.INHERITED_ENV_VARS`), never its secrets; ``-e KEY=VAL``
(and a config entry's ``env``) adds to that, and ``--inherit-env`` passes the whole environment.

Results are for people on a terminal (tools as signatures such as ``add(a: integer, b?: string) -> integer``,
content as text with images and blobs summarised: `mcplite.cli.format`) and JSON when stdout is piped;
``--json`` and ``--human`` choose. Server logs, progress and our own messages go to stderr; ``-v`` (info),
``-vv`` (debug) or ``--log-level LEVEL`` show the ``mcplite`` logger there too. Output never fails on a
narrow encoding: what it cannot encode is written as backslash escapes (JSON as ``\\uXXXX``).

A server command's own stderr (banners, tracebacks) is shown as it comes; ``--server-stderr hide`` drops it,
keeping its last lines for the message if the server fails to start or dies. ``--save DIR`` writes the images,
audio and blobs of a ``call`` or ``read`` result to files in DIR (named from the resource URI's last segment, or
``TOOL-N.EXT``; reduced to safe characters, never outside DIR, never over an existing file) and says what it
wrote. A tool's error is said once: the result shows it; stderr repeats its text only when the result went out
as JSON. A value a server wraps as ``{"result": value}`` (a list, a number) is shown as the value itself.

Errors say the next step: a 401 names ``--auth`` and ``--header 'Authorization: Bearer ...'``, a 404 says to
check the path (``/mcp``), a tool that asks the user (elicitation) from a pipe names ``--ask``, a command that
cannot start says what to write instead, a server that misses PYTHONPATH says to pass it (`mcplite.cli.advice`).
``completion bash|zsh|fish`` prints a completion script written from the parser.

``--connect-timeout`` (default 30 s) bounds the whole connect: starting the server, the revision probe and the
handshake; ``--timeout`` (default 60 s) bounds each call after that (its input rounds included), so a short ``--timeout`` does not cut off a server that is slow to
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

``call`` on a server that takes tasks (docs/cli.md, "Tasks") runs the call as a task: its status and progress are
shown on stderr until the result, and Ctrl-C cancels the task on the server before exiting (``--no-task``
calls directly). ``tasks get ID`` shows a task (with its result once it has one), ``tasks cancel ID`` cancels it.
"""

import argparse
import sys
from collections import deque
from typing import Callable, Deque, List, Optional, Sequence

from ..errors import MCPError
from .advice import STDERR_TAIL_LINES, explain
from .commands import _one_line, _run, connect, user_sign_in
from .completion import completion_script
from .exits import (
    EXIT_INTERRUPTED, EXIT_OK, EXIT_PROTOCOL, EXIT_TIMEOUT, EXIT_TOOL_ERROR, EXIT_USAGE, TimedOut, UsageError,
)
from .parser import _program_name, build_parser, missing_separator, package_version, parse_arguments
from .serve import _serve, load_server
from .targets import (
    Target, parse_assignments, parse_header, parse_target, resolve_target, split_target, target_from_config,
    tool_arguments,
)
from .terminal import StderrReporter, TerminalElicitation, configure_logging, emit, show, tolerate_narrow_encodings

__all__ = ["main", "build_parser", "UsageError", "Target", "split_target", "parse_target", "target_from_config",
           "user_sign_in", "TerminalElicitation", "package_version", "configure_logging",
           "parse_header", "parse_assignments", "tool_arguments", "emit", "StderrReporter", "load_server",
           "EXIT_OK", "EXIT_TOOL_ERROR", "EXIT_USAGE", "EXIT_PROTOCOL", "EXIT_TIMEOUT", "EXIT_INTERRUPTED"]


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the command line; returns the exit status (the console script exits with it)."""
    tolerate_narrow_encodings()
    words, target_words = split_target(sys.argv[1:] if argv is None else argv)
    reporter = StderrReporter()
    undo_logging: Callable[[], None] = lambda: None
    args: Optional[argparse.Namespace] = None
    target: Optional[Target] = None
    stderr_tail: Deque[str] = deque(maxlen=STDERR_TAIL_LINES)
    try:
        parser = build_parser(_program_name())
        args = parse_arguments(parser, words, has_target=target_words is not None)
        undo_logging = configure_logging(args.log_level, args.verbose)
        if args.command == "completion":
            show(completion_script(parser, args.shell))
            return EXIT_OK
        if args.command == "serve":
            if target_words is not None:
                raise UsageError("serve takes no server after --")
            return _serve(args)
        if args.command == "gateway":
            if target_words is not None:
                raise UsageError("gateway takes no server after --: its servers are in CONFIG")
            from .gateway import run_gateway  # (only a gateway loads the gateway)

            return run_gateway(args)
        if args.command == "record":
            from .record import run_record

            return run_record(args, target_words)
        if args.command == "replay":
            if target_words is not None:
                raise UsageError("replay takes no server after --: it serves CASSETTE")
            from .record import run_replay

            return run_replay(args)
        if args.command == "inspect":
            from .inspector import run_inspect  # (only the inspector loads its page's server)

            return run_inspect(args, target_words, reporter)
        if target_words is None and args.config is None:
            stray = _stray_target(args)
            if stray:
                raise missing_separator(parser.prog, words, stray)
        if args.save is not None and args.command not in ("call", "read"):
            raise UsageError("--save only applies to call and read")
        output = getattr(args, "output", None)
        args.human_output = output == "human" or (output is None and sys.stdout.isatty())
        target = resolve_target(args, target_words)
        args.stderr_tail = stderr_tail
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
        reporter.error(explain(exc, target, args, stderr_tail) or f"{type(exc).__name__}: {_one_line(exc)}")
        return EXIT_PROTOCOL
    except KeyboardInterrupt:
        reporter.error("interrupted")
        return EXIT_INTERRUPTED
    except SystemExit as exc:  # --help, --version
        return exc.code if isinstance(exc.code, int) else EXIT_OK
    finally:
        undo_logging()


def _stray_target(args: argparse.Namespace) -> List[str]:
    """Words at the end of a ``key=value`` or ``listen`` list that look like a server named without ``--``
    (``call add python3 server.py``): none of them is ``key=value`` (or, for ``listen``, a kind or a URI)."""
    listed: List[str] = list(getattr(args, "arguments", None) or getattr(args, "what", None) or [])
    stray: List[str] = []
    for word in reversed(listed):
        if "=" in word or (args.command == "listen" and (":" in word or word in ("tools", "prompts", "resources"))):
            break
        stray.insert(0, word)
    return stray
