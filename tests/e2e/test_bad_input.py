"""Bad input on the command line: one clear line on stderr, never a traceback, from the installed command.

The runs that tolerate bad input in a store are in tests/cli/test_bad_input_tolerated.py.
"""

from __future__ import annotations

import pytest
from helpers.cli import assert_one_line_error


@pytest.fixture
def cli(spawned_cli):
    """The installed command in a child process: no traceback may reach stderr from anywhere in it,
    including what the interpreter itself prints outside dream's own error handling."""
    return spawned_cli


def test_missing_store(tmp_path, cli):
    res = cli("run", "--store", str(tmp_path / "nope"), "--json")
    assert_one_line_error(res, 2, "nope", "does not exist")
    assert res.stdout == ""


def test_store_is_a_file(tmp_path, cli):
    f = tmp_path / "file"
    f.write_text("x")
    assert_one_line_error(cli("status", "--store", str(f)), 2, "not a folder")


def test_folder_that_is_not_a_store_is_refused_untouched(tmp_path, cli):
    (tmp_path / "notes.txt").write_text("not memory")
    res = cli("run", "--store", str(tmp_path), "--force")
    assert_one_line_error(res, 2, "not a memory store", "create MEMORY.md there to make it one")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_unknown_proposal_and_version(demo_store, cli):
    assert_one_line_error(cli("accept", "nope", "--store", str(demo_store)), 2, "no proposal")
    assert_one_line_error(cli("rollback", "7", "--store", str(demo_store)), 2, "no version 7")
    assert_one_line_error(cli("rollback", "seven", "--store", str(demo_store)), 2, "version")


def test_bad_usage_is_one_line(cli):
    assert_one_line_error(cli("run", "--no-such-flag"), 2, "no-such-flag")


def test_bad_store_config(demo_store, cli):
    (demo_store / ".dream").mkdir()
    (demo_store / ".dream" / "config.toml").write_text("min_sessions = 'many'\n")
    assert_one_line_error(cli("run", "--store", str(demo_store)), 2, "config.toml", "min_sessions")
