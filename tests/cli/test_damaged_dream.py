"""Damaged or odd `.dream/` contents and CLI inputs: one-line errors (exit 2), never `internal error`.

Each case runs the real `dream` command on a demo store that had one offline
run (so it has a version, a pending proposal, a state file and a history),
damages one thing, and checks the exit code, the single stderr line naming
the damaged file, and that the memory files were not touched.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from helpers.stores import snapshot_bytes

from dream.store.tree import read_tree


def _pending(store: Path) -> Path:
    (folder,) = (store / ".dream" / "proposals").iterdir()
    return folder / "proposal.json"


def _one_error_line(result, names: str, code: int = 2) -> None:
    assert result.code == code, (result.code, result.stdout, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert "internal error" not in result.stderr
    assert lines[0].startswith("dream: error:") and names in lines[0], lines[0]


def test_dream_path_is_a_file(demo_store, cli):
    (demo_store / ".dream").write_text("")
    before = read_tree(demo_store)
    for args in (["run"], ["status"], ["accept"], ["reject"], ["gc", "--keep", "1"], ["show", "1"],
                 ["history"], ["proposals"]):
        _one_error_line(cli(*args, "--store", str(demo_store)), str(demo_store / ".dream"))
    assert read_tree(demo_store) == before


@pytest.mark.parametrize("content", ["[1, 2]", '{"last_consolidated_at": "yesterday"}', '{"failures": null}', "{nope"])
def test_damaged_state_file(dreamed, cli, content):
    state = dreamed / ".dream" / "state.json"
    state.write_text(content)
    before = read_tree(dreamed)
    for args in (["status"], ["run"], ["run", "--force"]):
        result = cli(*args, "--store", str(dreamed), "--engine", "offline") if args[0] == "run" else \
            cli(*args, "--store", str(dreamed))
        _one_error_line(result, str(state))
        assert "delete it" in result.stderr
    assert state.read_text() == content  # not "repaired" into a fresh, gate-opening state
    assert read_tree(dreamed) == before


def test_damaged_state_is_one_error_row_of_the_fleet(dreamed, tmp_path, cli):
    other = tmp_path / "other"
    other.mkdir()
    (other / "MEMORY.md").write_text("- [A](a.md) — a\n")
    (dreamed / ".dream" / "state.json").write_text('{"last_consolidated_at": "yesterday"}')
    result = cli("status", "--all", "--root", str(tmp_path), "--json")
    assert result.code == 0, result.stderr
    rows = {r["store"]: r for r in result.json["stores"]}
    assert "state.json" in rows[str(dreamed)]["error"]
    assert "error" not in rows[str(other)] and rows[str(other)]["gate"]

    from dream.pipeline.fleet import check_store
    entry = check_store(dreamed)
    assert entry.reason == "error" and "state.json" in entry.message


def test_version_manifest_missing_keys(dreamed, cli):
    manifest = dreamed / ".dream" / "versions" / "000001.json"
    manifest.write_text('{"number": 1}')
    before = read_tree(dreamed)
    for args in (["accept"], ["show", "1"], ["rollback", "1"], ["gc", "--keep", "1"]):
        _one_error_line(cli(*args, "--store", str(dreamed)), str(manifest))
    result = cli("run", "--force", "--engine", "offline", "--store", str(dreamed))
    assert "internal error" not in result.stderr and str(manifest) in result.stderr
    assert result.code in (1, 2)
    assert read_tree(dreamed) == before


@pytest.mark.parametrize("damage", [
    {"tree": 7},  # the record names its root tree ...
    {"tree": "0" * 64},  # ... one that is not in the version store
    {"files": {"MEMORY.md": 7}},  # a record in the first layout, listing every file
])
def test_version_manifest_with_wrong_types(dreamed, cli, damage):
    manifest = dreamed / ".dream" / "versions" / "000001.json"
    raw = json.loads(manifest.read_text())
    raw.pop("tree")
    manifest.write_text(json.dumps({**raw, **damage}))
    _one_error_line(cli("show", "1", "--store", str(dreamed)), str(manifest))


def test_proposal_with_null_files_is_refused_by_id_and_gc_keeps_blobs(dreamed, cli):
    path = _pending(dreamed)
    raw = json.loads(path.read_text())
    raw["files"] = None
    path.write_text(json.dumps(raw))
    blobs = sorted((dreamed / ".dream" / "objects").rglob("*"))
    before = read_tree(dreamed)
    _one_error_line(cli("accept", raw["id"], "--store", str(dreamed)), str(path))
    _one_error_line(cli("gc", "--keep", "1", "--store", str(dreamed)), str(path))
    assert sorted((dreamed / ".dream" / "objects").rglob("*")) == blobs  # gc deleted nothing
    assert read_tree(dreamed) == before


def test_one_damaged_proposal_does_not_fail_the_store(dreamed, cli):
    path = _pending(dreamed)
    path.write_text('{"id": "x"}')
    result = cli("run", "--force", "--json", "--engine", "offline", "--store", str(dreamed))
    assert result.code == 0, result.stderr
    assert result.json["status"] in ("proposed", "noop")
    assert "internal error" not in result.stderr

    status = cli("status", "--json", "--store", str(dreamed))
    assert status.code == 0, status.stderr
    assert status.stderr.startswith("dream: warning:") and str(path) in status.stderr
    assert path.parent.name in status.json["damaged_proposals"]

    listing = cli("proposals", "--json", "--store", str(dreamed))
    assert listing.code == 0
    assert {"id": path.parent.name, "status": "damaged"}.items() <= next(
        p for p in listing.json["proposals"] if p["id"] == path.parent.name).items()


@pytest.mark.parametrize("limit", ["-1", "0"])  # 0 printed "no runs yet" over a store with runs
def test_history_limit_must_be_at_least_one(dreamed, cli, limit):
    result = cli("history", "--limit", limit, "--store", str(dreamed))
    _one_error_line(result, "--limit")


def test_diff_html_into_a_folder(dreamed, cli, tmp_path):
    _one_error_line(cli("diff", "--html", str(tmp_path), "--store", str(dreamed)), str(tmp_path))
    missing = tmp_path / "no" / "page.html"
    _one_error_line(cli("diff", "--html", str(missing), "--store", str(dreamed)), str(missing))


def test_import_from_a_missing_path(dreamed, cli, tmp_path):
    missing = tmp_path / "nonexistent"
    _one_error_line(cli("import", "--from", "codex", str(missing), "--store", str(dreamed)), str(missing))


def test_damaged_history_lines_do_not_fail_a_done_reject(dreamed, cli):
    history = dreamed / ".dream" / "history.jsonl"
    with history.open("ab") as f:
        f.write(b'garbage\n{"kind": "event", "at": "2026-')  # a stray edit, then a write cut short
    result = cli("reject", "--json", "--store", str(dreamed))
    assert result.code == 0, result.stderr
    assert result.json["status"] == "rejected"
    listed = cli("history", "--json", "--store", str(dreamed))
    assert listed.code == 0
    assert [e["action"] for e in listed.json["events"]] == ["reject"] and len(listed.json["runs"]) == 1
    assert [d["line"] for d in listed.json["damaged_lines"]] == [2, 3]
    assert "internal error" not in result.stderr + listed.stderr and str(history) in listed.stderr


def test_a_damaged_old_history_database_is_moved_aside(dreamed, cli):
    old = dreamed / ".dream" / "history.duckdb"
    old.write_text("garbage")
    result = cli("reject", "--json", "--store", str(dreamed))
    assert result.code == 0, result.stderr
    assert "internal error" not in result.stderr and str(old) in result.stderr
    aside = list(old.parent.glob("history.duckdb.damaged-*"))
    assert len(aside) == 1 and aside[0].read_text() == "garbage"  # kept for inspection
    listed = cli("history", "--json", "--store", str(dreamed))
    assert listed.code == 0 and listed.stderr == ""
    assert [e["action"] for e in listed.json["events"]] == ["reject"]


def test_a_history_that_is_no_file_does_not_fail_a_run_or_accept(dreamed, cli):
    history = dreamed / ".dream" / "history.jsonl"
    history.unlink()
    history.mkdir()
    accepted = cli("accept", "--json", "--store", str(dreamed))
    assert accepted.code == 0 and accepted.json["status"] == "accepted", accepted.stderr
    history.unlink()
    os.mkfifo(history)  # a reader of a FIFO would wait for a writer forever
    ran = cli("run", "--force", "--json", "--engine", "offline", "--store", str(dreamed))
    assert ran.code == 0 and ran.json["status"] in ("proposed", "noop"), ran.stderr
    assert "internal error" not in ran.stderr + accepted.stderr
    assert len(list(history.parent.glob("history.jsonl.not-a-file-*"))) == 2
    listed = cli("history", "--json", "--store", str(dreamed)).json
    assert [r["run_id"] for r in listed["runs"]] == [ran.json["run_id"]]


def test_a_history_reader_names_the_file_it_cannot_read(dreamed, cli):
    history = dreamed / ".dream" / "history.jsonl"
    history.unlink()
    history.mkdir()
    _one_error_line(cli("history", "--store", str(dreamed)), str(history))
    assert history.is_dir()  # a reader never moves it


def test_oversized_memory_file_stops_the_run(dreamed, cli):
    from dream.pipeline.run import MAX_MEMORY_FILE_BYTES

    big = dreamed / "runaway.md"
    big.write_bytes(b"---\nname: runaway\ndescription: x\ntype: project\n---\n\n"
                    + b"filler line of a runaway file\n" * (MAX_MEMORY_FILE_BYTES // 20))
    before = snapshot_bytes(dreamed)
    _one_error_line(cli("run", "--force", "--engine", "offline", "--store", str(dreamed)), str(big))
    assert snapshot_bytes(dreamed) == before


def test_an_index_over_the_file_limit_is_shrunk_to_its_budget_not_refused(dreamed, cli):
    from dream.pipeline.run import MAX_MEMORY_FILE_BYTES
    from dream.store.validate import MAX_INDEX_LINES

    index = dreamed / "MEMORY.md"
    rules = [f"- Rule {n}: keep build {n} artefacts for a week".encode() for n in range(MAX_MEMORY_FILE_BYTES // 40)]
    index.write_bytes(index.read_bytes() + b"\n".join(rules) + b"\n")
    assert index.stat().st_size > MAX_MEMORY_FILE_BYTES
    result = cli("run", "--force", "--engine", "offline", "--store", str(dreamed))
    assert result.code == 0, result.stderr
    assert cli("accept", "--store", str(dreamed)).code == 0
    assert len(index.read_text().splitlines()) <= MAX_INDEX_LINES
    kept = (index.read_text() + "".join(p.read_text() for p in dreamed.glob("archive*.md"))).splitlines()
    assert set(line.decode() for line in rules) <= set(kept)  # every rule is in the index or an archive
    assert all(p.stat().st_size < MAX_MEMORY_FILE_BYTES for p in dreamed.glob("*.md"))
