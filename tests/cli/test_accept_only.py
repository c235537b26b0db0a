"""`dream accept --only a.md b.md` as the docs write it (docs/reviewing.md): several files after one flag."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dream.cli.app import file_lists

REVIEWING = Path(__file__).resolve().parents[2] / "docs" / "reviewing.md"
TWO_FILES = ["feedback_small_prs.md", "project_database.md"]  # changed, not added: taking them alone breaks nothing


def test_the_docs_write_several_files_after_one_flag() -> None:
    assert "`dream accept ID --only a.md b.md` or `--except c.md`" in REVIEWING.read_text(encoding="utf-8")


@pytest.mark.parametrize("args", [
    ["accept", "--only", *TWO_FILES],
    ["accept", "{id}", "--only", *TWO_FILES],
    ["accept", "--only", *TWO_FILES, "{id}"],
    ["accept", f"--only={TWO_FILES[0]}", TWO_FILES[1]],
    ["accept", "--only", TWO_FILES[0], "--only", TWO_FILES[1]],
])
def test_accept_only_takes_every_file_named(dreamed: Path, cli, args: list[str]) -> None:
    pending = cli("proposals", "--store", str(dreamed), "--json").json["proposals"][0]["id"]
    changed = cli("diff", "--store", str(dreamed), "--json").json["files_changed"]

    result = cli(*[a.replace("{id}", pending) for a in args], "--store", str(dreamed), "--json")

    assert result.code == 0, result.stderr
    assert result.json["proposal_id"] == pending and result.json["taken"] == TWO_FILES
    assert sorted(result.json["skipped"]) == sorted(set(changed) - set(TWO_FILES))


def test_except_takes_several_too_and_a_file_not_in_the_proposal_is_named(dreamed: Path, cli) -> None:
    wrong = cli("accept", "--only", TWO_FILES[0], "notes.md", "--store", str(dreamed))
    assert wrong.code == 2 and wrong.stdout == ""
    assert re.fullmatch(r"dream: error: proposal \S+: 'notes.md' is not among its changed files .*\n", wrong.stderr)

    result = cli("accept", "--except", *TWO_FILES, "--store", str(dreamed), "--json")
    assert result.code == 0, result.stderr
    assert result.json["skipped"] == TWO_FILES


def test_only_file_names_join_the_list() -> None:
    assert file_lists(["accept", "--only", "a.md", "b.md", "20261201-1-ab", "-s", "x"]) == [
        "accept", "--only", "a.md", "--only", "b.md", "20261201-1-ab", "-s", "x"]
    assert file_lists(["accept", "--except", "c.md", "--json", "d.md"]) == [
        "accept", "--except", "c.md", "--json", "d.md"]  # another option ends the list
    assert file_lists(["show", "3", "--", "--only", "a.md", "b.md"]) == ["show", "3", "--", "--only", "a.md", "b.md"]
