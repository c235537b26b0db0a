"""Every test here drives Prefect: a temporary server for the session, or a real one with a worker.

Starting a server takes tens of seconds on two loaded cores, so the whole
folder is marked slow: the default run leaves it out, `.ci/run` runs it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).parent


def pytest_collection_modifyitems(items):
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.slow)
