"""The real git project with history (tests/helpers/git_project.py) and a store that cites it, for every lint test."""

from __future__ import annotations

import pytest

from helpers.git_project import make_project, make_store


@pytest.fixture
def project(tmp_path):
    """(the project's folder, {"added": c1, "renamed": c2, "removed": c3})."""
    root = tmp_path / "project"
    return root, make_project(root)


@pytest.fixture
def store(tmp_path, project):
    """A store whose memories cite the project, which its config names."""
    return make_store(tmp_path / "store", project[0])
