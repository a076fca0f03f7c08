"""``gateway``: serve the MCP servers of a JSON configuration behind one (`mcplite.gateway`), or check them.

    python -m mcplite gateway CONFIG [--http HOST:PORT] [--allow-host H ...] [--allow-origin O ...] [--check]
                                     [--access-log] [--auth-token-env VAR | --authenticate MODULE:OBJECT]
                                     [--record FILE]

Over stdio by default; ``--http HOST:PORT`` serves Streamable HTTP at ``/mcp`` with the options of ``serve``.
``--record FILE`` writes every message, both ways, for each upstream (under its name) and for the front, as
JSON lines with secrets redacted (`mcplite.recording`). ``--check`` starts every upstream, prints one row per upstream (name, transport, revision, the number of tools,
resources and prompts, or the error) and exits 0 when all are up, else 3.
"""

import argparse
from typing import Any, Dict, List

from ..gateway import ConfigError, Gateway
from .exits import EXIT_OK, EXIT_PROTOCOL, UsageError
from .serve import HTTP_OPTION_NAMES, http_options_given, http_serving_options
from .terminal import show


def run_gateway(args: argparse.Namespace) -> int:
    if args.http is None and http_options_given(args):
        raise UsageError(f"{HTTP_OPTION_NAMES} need --http HOST:PORT")
    try:
        gateway = Gateway(args.config_file, record=args.record)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    if args.check:
        return _check(gateway)
    options = http_serving_options(args)
    try:
        gateway.run(http=args.http, **options)
    except ConfigError as exc:  # two upstreams giving one name, found when they started
        raise UsageError(str(exc)) from None
    except ValueError as exc:  # the address or an option refused before serving
        raise UsageError(str(exc)) from None
    return EXIT_OK


def _check(gateway: Gateway) -> int:
    try:
        gateway.start()
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    try:
        rows = gateway.status()
    finally:
        gateway.close()
    show(format_table(rows))
    return EXIT_OK if all(row["state"] == "up" and not row["error"] for row in rows) else EXIT_PROTOCOL


def format_table(rows: List[Dict[str, Any]]) -> str:
    """The ``--check`` table: a header, then one line per upstream (its error in place of the counts)."""
    header = ["NAME", "TRANSPORT", "REVISION", "TOOLS", "RESOURCES", "PROMPTS"]
    lines = [header]
    for row in rows:
        if row["state"] == "up" and not row["error"]:
            lines.append([row["name"], row["transport"], row["revision"] or "-", str(row["tools"]),
                          str(row["resources"] + row["templates"]), str(row["prompts"])])
        else:
            lines.append([row["name"], row["transport"], "-", f"error: {row['error']}"])
    widths = [max(len(line[column]) for line in lines if column < len(line)) for column in range(len(header))]
    return "\n".join("  ".join(cell.ljust(widths[index]) if index < len(line) - 1 else cell
                               for index, cell in enumerate(line)) for line in lines)
