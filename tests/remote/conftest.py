"""The memory-store server, seeded with the demo store, for the mirror tests."""

from __future__ import annotations

import pytest
from helpers.fake_memory_store import memory_store  # noqa: F401  (fixture)
from helpers.stores import DEMO

from dream.store.tree import read_tree


@pytest.fixture
def seeded(memory_store):
    """The service holds the demo store's memories; returns (server, {path: text} as seeded)."""
    for rel, data in sorted(read_tree(DEMO).items()):
        memory_store.put("/" + rel, data.decode())
    return memory_store, memory_store.files()
