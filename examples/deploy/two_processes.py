"""Start two server processes of the deployment example, standing for two hosts behind nginx-sessions.conf.

    python3 -m examples.deploy.two_processes                    # a on 127.0.0.1:8001, b on 127.0.0.1:8002
    python3 -m examples.deploy.two_processes --ports 9001 9002  # other ports
    python3 -m examples.deploy.two_processes --gunicorn         # each a gunicorn with threads instead

Each process names its sessions with a prefix of its own (``SESSION_ID_PREFIX=a-``, ``b-``), which nginx
routes by, and both get the same ``MCPLITE_STATE_KEYS`` (a fresh pair unless set), so that a 2026-07-28
input round may come back to either. ``REDIS_URL`` and ``EVENT_DB``, when set, pass through (see `app`).
Runs until Ctrl-C or SIGTERM, then stops both.
"""

import argparse
import os
import secrets
import signal
import subprocess
import sys
import threading
from typing import Any, List

PREFIXES = ("a-", "b-")


def command(port: int, gunicorn: bool) -> List[str]:
    if gunicorn:  # one process per host with threads: sessions need a thread per open stream
        return [sys.executable, "-m", "gunicorn", "--threads", "16", "--bind", f"127.0.0.1:{port}",
                "examples.deploy.app:app"]
    return [sys.executable, "-m", "examples.deploy.app", "--port", str(port)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ports", type=int, nargs=2, default=[8001, 8002])
    parser.add_argument("--gunicorn", action="store_true", help="serve with gunicorn --threads 16")
    args = parser.parse_args()
    keys = os.environ.get("MCPLITE_STATE_KEYS") or secrets.token_hex(32)
    children = [subprocess.Popen(command(port, args.gunicorn),
                                 env={**os.environ, "SESSION_ID_PREFIX": prefix, "MCPLITE_STATE_KEYS": keys})
                for port, prefix in zip(args.ports, PREFIXES)]
    stop = threading.Event()

    def on_signal(signum: int, frame: Any) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        while not stop.wait(1.0) and all(child.poll() is None for child in children):
            pass
    finally:
        for child in children:
            if child.poll() is None:
                child.terminate()
        for child in children:
            try:
                child.wait(10)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
    sys.exit(max((child.returncode or 0) for child in children) if not stop.is_set() else 0)


if __name__ == "__main__":
    main()
