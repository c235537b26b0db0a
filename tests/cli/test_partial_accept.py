"""A partial accept leaves a whole store, and what is left of the proposal is counted as itself (issue 39).

An ops team's store, dreamed once: six requests become six new files, and
the new MEMORY.md points to each. Taking one new file without MEMORY.md
(`dream accept --only`, or `n` on the index in `dream review`) takes that
file's index line too, so no memory is written that no agent reads. The
rest stays pending as a proposal of its own: the report, `dream diff`, its
JSON, the review page, `dream status` and `dream report --all` name it by
its own id and count its own files.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dream.store.model import Store, parse_index_line, resolve_link
from dream.store.tree import read_tree

TAKEN = "project_invoices_archived_bucket_acct.md"
CLUSTERS = 4


@pytest.fixture
def ops(home: Path, tmp_path: Path, cli) -> Path:
    store = tmp_path / "stores" / "ops"
    logs = store / "logs" / "2026" / "11" / "21"
    logs.mkdir(parents=True)
    (store / "MEMORY.md").write_text("- [Notes](project_notes.md) — notes of the ops team\n")
    (store / "project_notes.md").write_text(
        "---\nname: Notes\ndescription: notes of the ops team\ntype: project\n---\n\nNotes of the ops team.\n")
    for n in range(1, CLUSTERS + 1):
        (logs / f"s{n}-ops.md").write_text(
            f"> remember that the lighthouse cluster {n} is paged through Opsgenie team number {n}\n< Noted.\n")
    (logs / "s9-ops.md").write_text(
        "> remember that invoices are archived in the bucket acct-archive-eu for ten years\n< Noted.\n")
    ran = cli("run", "--store", str(store), "--engine", "offline", "--json")
    assert ran.json["status"] == "proposed", ran.stdout
    assert TAKEN in cli("diff", "--store", str(store), "--json").json["files_changed"]
    return store


def indexed(store: Path) -> set[str]:
    tree = read_tree(store)
    lines = Store.from_tree({"MEMORY.md": tree["MEMORY.md"]}).index_lines
    return {resolve_link("MEMORY.md", link) for line in lines for link in parse_index_line(line).links}


def assert_whole(store: Path) -> None:
    """Every memory file is in the index, and every index line points to a file."""
    files = {p.name for p in store.glob("*.md") if p.name != "MEMORY.md"}
    assert indexed(store) == files, (indexed(store) ^ files)


def test_accept_only_a_new_file_takes_its_index_line_too(ops: Path, cli) -> None:
    accepted = cli("accept", "--only", TAKEN, "--store", str(ops))
    assert accepted.code == 0, accepted.stderr
    assert f"MEMORY.md: took the index line(s) of {TAKEN} too" in accepted.stdout
    assert (ops / TAKEN).is_file() and TAKEN in indexed(ops)
    assert_whole(ops)
    assert "lighthouse" not in (ops / "MEMORY.md").read_text()  # the rest of the new index is not taken


def test_review_taking_a_new_file_but_not_the_index_takes_its_line(ops: Path, cli) -> None:
    changed = cli("diff", "--store", str(ops), "--json").json["files_changed"]
    answers = "".join("y\n" if path == TAKEN else "n\n" for path in changed) + "y\n"
    reviewed = cli("review", "--store", str(ops), "--json", input=answers)
    assert reviewed.code == 0, reviewed.stderr
    assert reviewed.json["taken"] == [TAKEN] and reviewed.json["index_lines_taken_for"] == [TAKEN]
    assert f"MEMORY.md gets the index line(s) of {TAKEN}, so the agent reads it" in reviewed.stderr  # before writing
    assert_whole(ops)


def test_the_rest_of_a_partly_accepted_proposal_is_counted_as_itself(ops: Path, cli, tmp_path: Path) -> None:
    first = cli("diff", "--store", str(ops), "--json").json
    accepted = cli("accept", "--only", TAKEN, "--store", str(ops), "--json").json
    rest = accepted["new_proposal_id"]
    assert rest and rest != first["proposal_id"]

    shown = cli("diff", "--store", str(ops), "--json").json
    assert shown["proposal_id"] == shown["report"]["proposal_id"] == rest
    files = shown["files_changed"]
    assert TAKEN not in files and len(files) == len(first["files_changed"]) - 1 == CLUSTERS + 1
    assert shown["counts"]["files"] == len(files)

    text = cli("diff", "--store", str(ops)).stdout
    assert text.startswith(f"# Dream proposal {rest}\n") and first["proposal_id"] not in text.splitlines()[0]
    assert f"- files changed: {len(files)}\n" in text
    assert re.search(rf" in {len(files)} file\(s\)", text)

    page = tmp_path / "rest.html"
    assert cli("diff", "--store", str(ops), "--html", str(page)).code == 0
    html = page.read_text(encoding="utf-8")
    assert f'id="count-files">{len(files)}<' in html and rest in html

    assert cli("status", "--store", str(ops), "--json").json["pending"] == [rest]
    report = cli("report", "--root", str(ops.parent), "--json").json
    [row] = report["stores"]
    assert (row["waiting_proposal"], report["total"]["waiting"]) == (rest, 1), report

    assert cli("accept", "--store", str(ops)).code == 0  # the rest, decided: nothing waits any more
    after = cli("report", "--root", str(ops.parent), "--json").json
    assert (after["stores"][0]["waiting_proposal"], after["total"]["waiting"]) == (None, 0), after
    assert_whole(ops)
