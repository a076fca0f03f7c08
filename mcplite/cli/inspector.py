"""``inspect``: connect to the server, serve the inspector's page on loopback, print its URL, open the browser.

The URL is the first line on stdout (a script or a test reads it); our notes go to stderr. Ctrl-C (or SIGTERM)
closes the page's server and the client, which stops a stdio server process.
"""

import argparse
import shlex
import signal
import sys
import threading
from typing import Any, Dict, List, Optional

from ..client import Client
from ..inspector import Inspector
from .commands import connect
from .exits import EXIT_INTERRUPTED, EXIT_OK, UsageError
from .targets import Target, resolve_target
from .terminal import StderrReporter


def inspect_target(args: argparse.Namespace, target_words: Optional[List[str]]) -> Target:
    """The server: ``SERVER_FILE`` (served over stdio by this Python), or the usual ``-- TARGET``/``--config``."""
    if args.server_file is None:
        return resolve_target(args, target_words)
    if target_words is not None or args.config is not None:
        raise UsageError("give the server either as SERVER_FILE or after -- (or with --config), not both")
    return resolve_target(args, [sys.executable, "-m", "mcplite", "serve", args.server_file])


def describe_target(args: argparse.Namespace, target: Target, target_words: Optional[List[str]]) -> Dict[str, Any]:
    """How "copy as command" names the server: the command line's words and the Python that connects."""
    if args.config is not None:
        words = f"--config {shlex.quote(args.config)}" + (f" --server {shlex.quote(args.server)}" if args.server else "")
    elif args.server_file is not None:
        words = "-- python3 -m mcplite serve " + shlex.quote(args.server_file)
    else:
        words = "-- " + " ".join(shlex.quote(word) for word in target_words or [])
    if target.url is not None:
        python = f"Client({target.url!r})"
    else:
        argv = ["python3", "-m", "mcplite", "serve", args.server_file] if args.server_file is not None \
            else list(target.argv or [])
        python = f"Client.stdio({argv!r})"
    return {"words": words, "python": python, "transport": "http" if target.url is not None else "stdio",
            "protocolVersion": args.protocol_version}


def run_inspect(args: argparse.Namespace, target_words: Optional[List[str]], reporter: StderrReporter) -> int:
    target = inspect_target(args, target_words)
    args.stderr_tail = None

    def make_client(options: Dict[str, Any]) -> Client:
        return connect(target, args, reporter, options)

    inspector = Inspector(make_client, target=describe_target(args, target, target_words), port=args.port)
    try:
        inspector.connect()  # (a server that cannot start fails the command, as every other command does)
        url = inspector.start()
        print(url, flush=True)
        reporter.note("serving the inspector on 127.0.0.1; Ctrl-C stops it")
        if args.browser:
            import webbrowser

            threading.Thread(target=webbrowser.open, args=(url,), daemon=True).start()
        _stop_on_sigterm(inspector)
        inspector.wait()
        return EXIT_OK
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    finally:
        inspector.close()


def _stop_on_sigterm(inspector: Inspector) -> None:
    """SIGTERM closes the page's server and the client as Ctrl-C does (no server process left behind)."""
    if threading.current_thread() is not threading.main_thread():
        return
    try:
        signal.signal(signal.SIGTERM, lambda signum, frame: inspector.close())
    except (ValueError, OSError):  # not the main interpreter
        pass
