"""Start coverage in a Python process that a measured test run spawned (a stdio server, a CLI run).

tests/conftest.py puts this directory on PYTHONPATH and sets COVERAGE_PROCESS_START only when the run itself is
measured (``coverage run -m pytest``); a plain ``pytest`` run never sees it. Recent coverage releases install a
``.pth`` file that does the same; this covers older ones, and `process_startup` starts coverage only once.
"""

import os

if os.environ.get("COVERAGE_PROCESS_START"):
    try:
        import coverage
    except ImportError:  # a subprocess with another interpreter: nothing to measure with
        pass
    else:
        coverage.process_startup()
