"""Module-level definitions under postponed evaluation: every annotation here is a string at runtime."""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional


@dataclass
class Item:
    name: str
    tags: List[str]


def add_items(items: List[Item], limit: Optional[int] = None) -> Item:
    """Add items.

    Args:
        items: what to add.
    """
    return items[0]


def count(text: str) -> int:
    return len(text)
