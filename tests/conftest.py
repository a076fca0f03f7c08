"""Fixtures shared by the test modules (helpers live in support.py)."""

import pytest

from mcplite.transports.memory import memory_pair
from support import RawPeer


@pytest.fixture
def raw_pair():
    """(session-side transport, RawPeer on the other end)."""
    ours, theirs = memory_pair()
    peer = RawPeer(theirs)
    yield ours, peer
    theirs.close()
