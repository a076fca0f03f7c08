"""``python -m mcplite``: the command line (see `mcplite.cli`)."""

import sys

from .cli import main

sys.exit(main())
