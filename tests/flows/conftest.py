"""Every test here drives Prefect: a temporary server for the session, or a real one with a worker.

Starting a server takes tens of seconds on two loaded cores, so the whole
folder is marked slow: the default run leaves it out, `.ci/run` runs it,
one module per xdist worker (`--dist loadfile`), since each worker that runs
a test of a module starts that module's server for itself.
"""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).parent


def pytest_ignore_collect(collection_path: Path, config) -> bool | None:
    # With the default `-m 'not slow'` every test here would be deselected
    # after collection, and collecting imports Prefect's test harness: seconds
    # of CPU in each xdist worker, for nothing. Named on the command line,
    # they are collected, so that pytest says they were deselected.
    if config.getoption("markexpr") == "not slow" and not _named(config):
        return True
    return None


def _named(config) -> bool:
    here = config.invocation_params.dir
    for arg in config.args:
        path = (here / arg.split("::")[0]).resolve()
        if path == HERE or HERE in path.parents:
            return True
    return False


@pytest.hookimpl(tryfirst=True)  # before -m reads the marks
def pytest_collection_modifyitems(items):
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.slow)
