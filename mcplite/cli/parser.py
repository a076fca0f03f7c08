"""The argument parser, for everything before the ``--``, and ``--version``."""

import argparse
import importlib
import os
import re
import shlex
import sys
from pathlib import Path
from typing import Any, List, NoReturn, Optional, Sequence

from ..protocol.versions import ENVELOPE_VERSIONS, HANDSHAKE_VERSIONS
from .exits import UsageError
from .terminal import _LOG_LEVELS

DEFAULT_CONNECT_TIMEOUT = 30.0  # generous: npx, uvx and docker may download before the server starts


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
    path = pyproject or Path(__file__).resolve().parents[2] / "pyproject.toml"
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
                                   or of VS Code's mcp.json: {"servers": {"NAME": {"type", "command", ...}}}

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
    "completion": "{prog} completion bash > ~/.local/share/bash-completion/completions/mcplite\n"
                  "  {prog} completion zsh > ~/.zfunc/_mcplite\n"
                  "  {prog} completion fish > ~/.config/fish/completions/mcplite.fish",
    "gateway": "{prog} gateway examples/gateway/gateway.json --check\n"
               "  {prog} gateway my-gateway.json --http 127.0.0.1:8000",
    "serve": "{prog} serve examples/everything_server.py --http 127.0.0.1:8000\n"
             "  {prog} serve mypackage.server:app",
    "record": "{prog} record session.jsonl -- python3 server.py\n"
              "  {prog} record session.jsonl -- https://mcp.example.com/mcp\n"
              "  (in a desktop host's config: \"command\": \"python3\", \"args\": [\"-m\", \"mcplite\", \"record\", "
              "\"/tmp/session.jsonl\", \"--\", \"npx\", \"-y\", \"some-server\"])",
    "inspect": "{prog} inspect examples/everything_server.py\n"
               "  {prog} inspect -- http://127.0.0.1:8000/mcp\n"
               "  {prog} inspect --no-browser --port 6274 -- npx -y @modelcontextprotocol/server-everything",
    "replay": "{prog} replay session.jsonl\n"
              "  {prog} replay session.jsonl --http 127.0.0.1:8000",
}


_OVERVIEW_EXAMPLES = """\
  {prog} call add a=2 b=3 -- python3 -m mcplite serve examples/everything_server.py
  {prog} --timeout 10 list tools -- http://127.0.0.1:8000/mcp
  {prog} --header 'Authorization: Bearer TOKEN' info -- https://example.com/mcp
  {prog} --auth list tools -- https://example.com/mcp     (sign in with OAuth; tokens kept for next time)
  {prog} serve examples/everything_server.py --http 127.0.0.1:8000"""


def _program_name() -> str:
    return "python -m mcplite" if os.path.basename(sys.argv[0]) == "__main__.py" else "mcplite"


def typed_program(prog: str) -> str:
    """The program as the user typed it (``python3 -m mcplite``), for a command line to copy; else ``prog``."""
    typed = getattr(sys, "orig_argv", None)  # Python 3.10+
    if prog == "mcplite" or not isinstance(typed, list) or len(typed) < len(sys.argv):
        return prog
    program = typed[:len(typed) - len(sys.argv) + 1]
    if program[-2:] != ["-m", "mcplite"]:  # main() called by another program
        return prog
    return " ".join(shlex.quote(word) for word in program)


def missing_separator(prog: str, words: Sequence[str], target: Sequence[str]) -> UsageError:
    """The error for a server named without the ``--`` before it: the command line to write instead.

    ``target`` are the last of ``words``: what argparse could not place (``list tools python3 server.py``),
    or the trailing words a ``key=value`` list took that are no ``key=value`` (``call add python3 s.py``).
    """
    head = list(words[:len(words) - len(target)])
    if target and target[0].endswith(".py") and not os.access(target[0], os.X_OK):
        target = ["python3", *target]  # a script is run by Python, not as a command
    fixed = " ".join([typed_program(prog), *(shlex.quote(word) for word in [*head, "--", *target])])
    return UsageError(f"put -- before the server: {fixed}")


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
    versions = ["auto", *ENVELOPE_VERSIONS, *HANDSHAKE_VERSIONS]
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
    parser.add_argument("--server-stderr", choices=["show", "hide"], default="show",
                        help="a server command's own stderr (banners, tracebacks): show it as it comes (the "
                             "default), or hide it, keeping its last lines for the message if the server fails")
    parser.add_argument("--save", metavar="DIR",
                        help="write the images, audio and blobs of a tool result or a resource read to files in "
                             "DIR (named from the URI, or TOOL-N.EXT), and say what was written")
    parser.add_argument("--config", metavar="FILE",
                        help='a JSON file to take the server from: "mcpServers" (desktop hosts) or "servers" '
                             "(VS Code's mcp.json)")
    parser.add_argument("--server", metavar="NAME", help="the server's name in --config")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True

    def command(name: str, help: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help, description=help[0].upper() + help[1:] + ".",
                                  prog=f"{prog} {name}", formatter_class=formatter,
                                  epilog="examples:\n  " + _EXAMPLES[name].format(prog=prog))
        if name not in ("serve", "completion", "gateway", "record", "replay", "inspect"):
            # Also after the command (`list tools --json`); SUPPRESS keeps a value given before it.
            _add_output_options(sub, argparse.SUPPRESS)
        return sub

    command("info", "print the server's protocolVersion, serverInfo, capabilities and instructions")
    listing = command("list", "list the server's tools, resources, resource templates or prompts (all pages)")
    listing.add_argument("kind", choices=["tools", "resources", "templates", "prompts"])
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
    completion = command("completion", "print a shell completion script for bash, zsh or fish")
    completion.add_argument("shell", choices=["bash", "zsh", "fish"])
    serve = command("serve", "serve a Server object over stdio, or over HTTP with --http")
    serve.add_argument("target", metavar="FILE_OR_MODULE[:OBJECT]",
                       help="a .py file or a module name; OBJECT names the Server when there are several")
    serve.add_argument("--http", metavar="HOST:PORT",
                       help="serve Streamable HTTP at /mcp (and legacy HTTP+SSE at /sse) instead of stdio")
    serve.add_argument("--stateless", action="store_true", help="HTTP without sessions: each request stands alone")
    serve.add_argument("--json-response", action="store_true",
                       help="answer HTTP requests with JSON bodies rather than SSE streams")
    _add_http_serving_options(serve)
    gateway = command("gateway", "serve the MCP servers of a JSON configuration behind one (docs/gateway.md), "
                                 "over stdio or over HTTP with --http")
    gateway.add_argument("config_file", metavar="CONFIG",
                         help='a JSON file of servers: "mcpServers" (desktop hosts) or "servers" (VS Code), with '
                              "the gateway's keys (prefix, tools, rename, timeout, protocol_version)")
    gateway.add_argument("--check", action="store_true",
                         help="start every server, print a table of them (revision, counts, or the error) and exit: "
                              "0 if all are up, else 3")
    gateway.add_argument("--http", metavar="HOST:PORT", help="serve Streamable HTTP at /mcp instead of stdio")
    _add_http_serving_options(gateway)
    gateway.add_argument("--record", metavar="FILE",
                         help="write every message, both ways, for each server and for the front, to FILE as JSON "
                              "lines, secrets redacted (docs/recording.md)")
    record = command("record", "pass stdio through to the server command after -- (or bridge it to the server URL "
                               "after --) and record every message, both ways, to OUT (docs/recording.md): put it "
                               "where an MCP client starts its server")
    record.add_argument("output", metavar="OUT", help="the recording to write (JSON lines, mode 0600)")
    inspect = command("inspect", "open a page in the browser that shows and drives the server, and every message "
                                 "both ways (docs/inspector.md); Ctrl-C stops it")
    inspect.add_argument("server_file", nargs="?", metavar="SERVER_FILE",
                         help="a .py file with a Server, served over stdio (instead of -- TARGET)")
    inspect.add_argument("--port", type=int, default=0, help="the port of the page on 127.0.0.1 (default: a free one)")
    inspect.add_argument("--no-browser", dest="browser", action="store_false",
                         help="print the page's URL but do not open a browser")
    replay = command("replay", "serve a recording as a server over stdio, or over HTTP with --http, answering the "
                               "requests it recorded (docs/recording.md)")
    replay.add_argument("cassette", metavar="CASSETTE", help="a recording (record, --record, record=)")
    replay.add_argument("--peer", metavar="NAME",
                        help="the connection of the recording to replay, by its peer name (default: the one the "
                             "recording process served, else its only server)")
    replay.add_argument("--http", metavar="HOST:PORT", help="serve Streamable HTTP at /mcp instead of stdio")
    _add_http_serving_options(replay)
    return parser


def _add_http_serving_options(parser: argparse.ArgumentParser) -> None:
    """The options of serving over HTTP that ``serve`` and ``gateway`` share (`serve.http_serving_options`)."""
    parser.add_argument("--shutdown-grace", type=_seconds, metavar="S",
                        help="on SIGTERM or Ctrl-C, seconds the HTTP requests in progress have to be answered "
                             "before the server exits (default 5)")
    parser.add_argument("--allow-host", action="append", default=[], dest="allow_hosts", metavar="HOST[:PORT]",
                        help="a Host the HTTP server accepts (repeat for more; '*' for any): required to serve on "
                             "an address other than loopback, where it stops DNS rebinding (default: the loopback "
                             "names)")
    parser.add_argument("--allow-origin", action="append", default=[], dest="allow_origins", metavar="ORIGIN",
                        help="a browser Origin (scheme://host[:port]) the HTTP server accepts (repeat for more; "
                             "'*' for any; default: loopback origins on a loopback address, none elsewhere)")
    parser.add_argument("--access-log", action="store_true",
                        help="write one line per HTTP request to stderr (client, method, path, status, bytes, "
                             "milliseconds, MCP method and session)")
    auth = parser.add_mutually_exclusive_group()
    auth.add_argument("--auth-token-env", metavar="VAR",
                      help="require 'Authorization: Bearer TOKEN' on every HTTP request, TOKEN being the value of "
                           "the environment variable VAR (at least 16 characters; StaticTokenAuth)")
    auth.add_argument("--authenticate", metavar="MODULE:OBJECT",
                      help="the HTTP authenticate hook: a callable (or a BearerAuth) in a .py file or a module, as "
                           "serve names a Server")


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


def parse_arguments(parser: argparse.ArgumentParser, words: List[str], has_target: bool = True) -> argparse.Namespace:
    """Parse our words; ``key=value`` pairs may also come after options (``call t --args J k=v``).

    argparse gives a ``nargs="*"`` positional only the words before the first option, so the pairs it
    leaves over are added here; any other leftover word is an error. Without a ``--`` (``has_target``
    False), leftover words at the end are a server named without it: the error shows the line to write.
    """
    args, extra = parser.parse_known_args(words)
    if extra and hasattr(args, "arguments") and all("=" in word and not word.startswith("-") for word in extra):
        args.arguments += extra
    elif extra:
        if not has_target and getattr(args, "command", None) not in ("serve", "gateway", "record", "replay") and list(words[-len(extra):]) == extra \
                and not extra[0].startswith("-"):
            raise missing_separator(parser.prog, words, extra)
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    return args
