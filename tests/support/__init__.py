"""Test helpers shared by the test modules. Every wait here has a timeout: a test that can hang is a bug.

- `wait`: `WAIT`, the one timeout (``MCPLITE_TEST_WAIT`` sets it), and `wait_until`.
- `threads`: `run_concurrently` and `Background`, which join with a timeout and check ``is_alive()``.
- `http`: `serving` (the one harness for our HTTP server), `ServerLoop` (a test's own socketserver, stopped at
  once), `Fixture` (a server whose tools exercise the HTTP transports).
- `raw_http`: `RawClient`, a Streamable HTTP client by hand, with `Reply` and `EventReader`.
- `peers`: `RawPeer`, the far end of an in-memory transport; `Recording`, a transport that remembers what it sent;
  `Kept`, one that goes nowhere and keeps what it is given.
- `results`: `text_of` and `result_text`.
- `keys`: the private keys the JOSE and OAuth tests share.
- `canned`: `Canned`, a scripted network of routes for the OAuth client's flows, and `json_response`.
- `coverage_startup`: the ``sitecustomize`` that lets spawned Python processes measure coverage (see conftest).
"""

from pathlib import Path

from .peers import Kept, RawPeer, Recording
from .results import result_text, text_of
from .threads import Background, run_concurrently
from .wait import WAIT, wait_until

ROOT = Path(__file__).resolve().parent.parent.parent

__all__ = ["ROOT", "WAIT", "Background", "Kept", "RawPeer", "Recording", "result_text", "run_concurrently", "text_of",
           "wait_until"]
