"""The migration example (docs/migrating.md) passes its own tests, run as its user would run them.

``examples/migrating/test_server.py`` is written as the author of a server moved from FastMCP would write it:
pytest, ``from server import server``, run from its folder. The suite's ``testpaths`` is ``tests``, so this
file runs it, in a pytest of its own with this tree's mcplite on the path (an installed one, for its user).
"""

import os
import re
import subprocess
import sys
from pathlib import Path

from support import WAIT

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "migrating"


def test_the_migrated_server_passes_its_tests() -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_server.py"],
        cwd=str(EXAMPLE), env=env, capture_output=True, text=True, timeout=WAIT * 6)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert re.search(r"\b7 passed", completed.stdout), completed.stdout
