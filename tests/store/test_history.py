"""The history: JSON lines appended by concurrent processes, read back through DuckDB.

Most cases write records through the library (fast) and read them back with
the real `dream history` command; the concurrency case starts real processes.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import duckdb
import orjson
import pytest
from filelock import FileLock

from dream import history
from dream.errors import BadInput
from dream.outcomes import RunOutcome, Status, Usage
from dream.store.layout import Layout

REPO = Path(__file__).resolve().parents[2]


def make_store(folder: Path) -> Layout:
    folder.mkdir(parents=True)
    (folder / "MEMORY.md").write_text("- [A](a.md) — a\n")
    return Layout.open(folder)


def record_run(layout: Layout, run_id: str, started_at: float, **fields) -> None:
    outcome = RunOutcome(status=Status.PROPOSED, engine="offline", run_id=run_id, duration_s=1.5,
                         usage=Usage(input_tokens=7, output_tokens=3, cost_usd=0.25), **fields)
    history.record_run(layout, outcome, started_at)


@pytest.fixture
def store(tmp_path) -> Layout:
    return make_store(tmp_path / "store")


def lines_of(layout: Layout) -> list[bytes]:
    return layout.history.read_bytes().splitlines()


def test_a_run_and_an_event_are_one_json_line_each_and_read_back_typed(store, cli):
    record_run(store, "r1", 1_700_000_000.25, proposal_id="p1", base_version=3)
    history.record_event(store, "reject", "p1", comment="not [/b] yet", who="ann@box")

    first, second = map(orjson.loads, lines_of(store))
    assert first["kind"] == "run" and first["started_at"] == "2023-11-14T22:13:20.250000+00:00"
    assert second["kind"] == "event" and second["comment"] == "not [/b] yet"
    [run] = history.runs(store)
    assert run["started_at"] == datetime(2023, 11, 14, 22, 13, 20, 250000, tzinfo=timezone.utc)
    assert (run["input_tokens"], run["cost_usd"], run["base_version"]) == (7, 0.25, 3)
    assert set(run) == set(history.RUN_COLUMNS)
    [event] = history.events(store)
    assert set(event) == set(history.EVENT_COLUMNS) and event["actor"] == "ann@box"

    listed = cli("history", "--store", str(store.root), "--json")
    assert listed.code == 0 and listed.stderr == ""
    assert set(listed.json) == {"runs", "events", "damaged_lines"} and listed.json["damaged_lines"] == []
    table = cli("history", "--store", str(store.root), env={"COLUMNS": "300"})
    assert table.code == 0 and "not [/b] yet" in table.stdout  # a comment is text, not markup


def test_newest_first_and_limit(store):
    for i in (2, 0, 1):  # appended out of order: the query orders by time, not by line
        record_run(store, f"r{i}", 1_700_000_000 + i)
    assert [r["run_id"] for r in history.runs(store)] == ["r2", "r1", "r0"]
    assert [r["run_id"] for r in history.runs(store, limit=1)] == ["r2"]
    assert history.runs(store, limit=0) == []


def test_an_empty_or_missing_history_has_no_rows_and_reading_writes_nothing(store):
    assert history.read(store, strict=True).runs == [] and not store.dream.exists()
    store.dream.mkdir()
    store.history.write_bytes(b"")
    assert history.read(store, strict=True).to_json() == {"runs": [], "events": [], "damaged_lines": []}
    assert sorted(p.name for p in store.dream.iterdir()) == ["history.jsonl"]


def test_damaged_lines_are_skipped_and_named_by_line(store, cli):
    record_run(store, "before", 1_700_000_000)
    with store.history.open("ab") as f:
        f.write(b'garbage\n[1, 2]\n{"kind": "run", "started_at": "yesterday", "status": "x"}\n'
                b'{"kind": "event", "at": "2024-01-01T00:00:00+00:00", "action": "accept", "version": "3"}\n'
                b'{"kind": "from-a-newer-dream"}\n\n'
                b'{"kind": "run", "run_id": "cut short", "started_at": "2024-01-0')  # a crash mid-write
    record_run(store, "after", 1_700_000_100)  # closes the cut line off: it spoils only itself

    listed = cli("history", "--store", str(store.root), "--json")

    assert listed.code == 0, listed.stderr
    assert [r["run_id"] for r in listed.json["runs"]] == ["after", "before"]
    assert listed.json["events"] == []
    damaged = {d["line"]: d["problem"] for d in listed.json["damaged_lines"]}
    assert damaged == {2: "not valid JSON", 3: "not a JSON object", 4: "started_at is not TIMESTAMPTZ",
                       5: "version is not INTEGER", 8: "not valid JSON"}
    [warning] = listed.stderr.splitlines()
    assert warning.startswith(f"dream: warning: {store.history}: skipped 5 damaged lines (lines 2, 3, 4, 5, 8;")


def test_an_unterminated_last_line_is_reported(store):
    record_run(store, "r1", 1_700_000_000)
    with store.history.open("ab") as f:
        f.write(b'{"kind": "run", "run_id": "r2"')
    found = history.read(store)
    assert [r["run_id"] for r in found.runs] == ["r1"]
    assert [(d.line, d.problem.split()[0]) for d in found.damaged] == [(2, "unterminated")]


def test_a_fifo_as_history_never_hangs_a_reader_or_a_writer(store, spawned_cli):
    store.dream.mkdir()
    os.mkfifo(store.history)

    started = time.monotonic()
    listed = spawned_cli("history", "--store", str(store.root), timeout=60)  # a process, so a hang would time out
    assert listed.code == 2 and listed.stderr.count("\n") == 1, listed.stderr
    assert listed.stderr.startswith("dream: error:") and str(store.history) in listed.stderr
    assert store.history.is_fifo()  # a reader never moves it
    assert history.runs(store) == []  # callers that only consult it get no rows

    history.record_event(store, "reject", "p1")  # a writer moves it aside and starts anew
    assert time.monotonic() - started < 30
    assert [e["action"] for e in history.events(store)] == ["reject"]
    [aside] = store.dream.glob("history.jsonl.not-a-file-*")
    assert aside.is_fifo()


def test_a_symlinked_history_is_not_followed(store, tmp_path, capsys):
    elsewhere = tmp_path / "elsewhere.jsonl"
    elsewhere.write_bytes(b'{"kind": "event", "at": "2024-01-01T00:00:00+00:00", "action": "planted"}\n')
    store.dream.mkdir()
    store.history.symlink_to(elsewhere)

    with pytest.raises(BadInput, match="symlink"):
        history.read(store, strict=True)
    history.record_event(store, "reject")

    assert elsewhere.read_bytes().count(b"\n") == 1  # the target was neither read as ours nor written
    assert [e["action"] for e in history.events(store)] == ["reject"]
    assert "moved to history.jsonl.not-a-file-" in capsys.readouterr().err


def test_four_processes_appending_at_once_never_interleave(store, tmp_path):
    go = tmp_path / "go"
    # Lines longer than any write buffer, so a writer that split a line in
    # several writes, or skipped the lock, would show torn lines.
    script = (
        "import sys, time\nfrom pathlib import Path\nfrom dream import history\nfrom dream.store.layout import Layout\n"
        "layout, n, go = Layout(Path(sys.argv[1])), sys.argv[2], Path(sys.argv[3])\n"
        "while not go.exists(): time.sleep(0.01)\n"
        "for i in range(50):\n"
        "    history.record_event(layout, 'note', comment=f'{n}-{i}-' + n * 70_000)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    procs = [subprocess.Popen([sys.executable, "-c", script, str(store.root), str(n), str(go)], env=env,
                              stderr=subprocess.PIPE) for n in range(4)]
    time.sleep(0.5)
    go.touch()
    errors = [p.communicate(timeout=300)[1] for p in procs]

    assert [p.returncode for p in procs] == [0, 0, 0, 0], errors
    assert errors == [b""] * 4
    lines = lines_of(store)
    assert len(lines) == 200
    comments = [orjson.loads(line)["comment"] for line in lines]
    assert sorted(c.split("-")[0] + "-" + c.split("-")[1] for c in comments) == sorted(
        f"{n}-{i}" for n in range(4) for i in range(50))
    assert all(c.endswith(c[0] * 70_000) for c in comments)
    assert len(history.events(store, limit=1000)) == 200


def test_a_stuck_lock_holder_costs_seconds_not_the_record(store, monkeypatch, capsys):
    store.dream.mkdir()
    monkeypatch.setattr(history, "LOCK_WAIT", 0.2)
    with FileLock(str(store.history_lock)):
        started = time.monotonic()
        history.record_event(store, "reject")
        assert time.monotonic() - started < 5
    assert [e["action"] for e in history.events(store)] == ["reject"]
    assert "held for over 0.2 s" in capsys.readouterr().err


def test_whether_an_event_is_recorded_is_read_from_the_history_tail(store):
    assert not history.event_recorded(store, "accept", 3)  # no history yet
    history.record_event(store, "accept", "p1", 3)
    record_run(store, "r1", 1_700_000_000)
    with store.history.open("ab") as f:
        f.write(b'garbage\n{"kind": "event", "action": "accept", "version": "4"}\n[1]\n')
    assert history.event_recorded(store, "accept", 3)
    assert not history.event_recorded(store, "accept", 4)  # "4" is no version: the damaged line counts for nothing
    assert not history.event_recorded(store, "rollback", 3)


def test_an_accept_on_a_store_with_events_does_not_import_duckdb(demo_store, cli):
    """Every store after its first accept has an event in its history; accept reads it from the tail."""
    assert cli("run", "--store", str(demo_store), "--engine", "offline").code == 0
    history.record_event(Layout.open(demo_store), "reject", "an-earlier-proposal")
    code = ("import sys; from dream.cli.app import main; code = main(['accept', '--store', sys.argv[1]]); "
            "sys.exit(code or 3 * ('duckdb' in sys.modules))")
    accepted = subprocess.run([sys.executable, "-c", code, str(demo_store)], cwd=REPO, capture_output=True, text=True)
    assert accepted.returncode == 0, accepted.stderr
    assert [e["action"] for e in history.events(Layout.open(demo_store))] == ["accept", "reject"]


def test_reading_the_history_module_does_not_import_duckdb():
    code = "import sys, dream.history; sys.exit('duckdb' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], cwd=REPO).returncode == 0


# The history's tables as dream/history.py created them before the JSON lines.
OLD_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id VARCHAR, started_at TIMESTAMPTZ, finished_at TIMESTAMPTZ,
    status VARCHAR, reason VARCHAR, engine VARCHAR,
    sessions_read INTEGER, changes INTEGER, duration_s DOUBLE,
    proposal_id VARCHAR, base_version INTEGER,
    input_tokens BIGINT, output_tokens BIGINT, cache_read_tokens BIGINT,
    cache_creation_tokens BIGINT, turns INTEGER, cost_usd DOUBLE,
    redactions INTEGER, error VARCHAR
);
CREATE TABLE IF NOT EXISTS events (
    "at" TIMESTAMPTZ, action VARCHAR, proposal_id VARCHAR, version INTEGER,
    actor VARCHAR, comment VARCHAR, detail VARCHAR
);
"""


def old_history(layout: Layout) -> None:
    layout.dream.mkdir(exist_ok=True)
    with duckdb.connect(str(layout.legacy_history)) as con:
        con.execute(OLD_SCHEMA)
        con.execute("INSERT INTO runs VALUES ('old-run', '2025-01-02 03:04:05+00', '2025-01-02 03:04:07+00', "
                    "'proposed', NULL, 'claude', 4, 2, 2.0, 'p-old', 1, 1000, 200, 50, 5, 3, 0.125, 1, NULL)")
        con.execute("INSERT INTO events VALUES ('2025-01-03 00:00:00+00', 'accept', 'p-old', 2, 'ann@box', "
                    "'looks right', NULL)")


def test_an_old_duckdb_history_is_migrated_once(demo_store, cli):
    layout = Layout.open(demo_store)
    old_history(layout)

    ran = cli("run", "--store", str(demo_store), "--json", "--engine", "offline")
    assert ran.code == 0, ran.stderr
    listed = cli("history", "--store", str(demo_store), "--json").json
    again = cli("history", "--store", str(demo_store), "--json").json

    assert again == listed
    assert [r["run_id"] for r in listed["runs"]] == [ran.json["run_id"], "old-run"]
    old = listed["runs"][1]
    assert (old["engine"], old["input_tokens"], old["cache_read_tokens"], old["cost_usd"]) == ("claude", 1000, 50, 0.125)
    assert datetime.fromisoformat(old["started_at"]) == datetime(2025, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
    assert [(e["action"], e["actor"], e["comment"]) for e in listed["events"]] == [("accept", "ann@box", "looks right")]
    assert not layout.legacy_history.exists()
    assert (layout.dream / "history.duckdb.migrated").is_file()
    assert sum(b'"old-run"' in line for line in lines_of(layout)) == 1


def test_a_busy_old_history_is_left_for_later(store, capsys):
    old_history(store)
    hold = "import duckdb, sys, time\ncon = duckdb.connect(sys.argv[1]); print('ready', flush=True); time.sleep(60)"
    holder = subprocess.Popen([sys.executable, "-c", hold, str(store.legacy_history)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "ready\n"
        assert history.runs(store) == []
        assert store.legacy_history.is_file()
        assert "in use by another process" in capsys.readouterr().err
    finally:
        holder.kill()
        holder.wait()
    assert [r["run_id"] for r in history.runs(store)] == ["old-run"]


def test_history_all_is_one_query_over_every_store(tmp_path, home, cli):
    root = tmp_path / "fleet"
    first, second = make_store(root / "a" / "memory"), make_store(root / "b" / "memory")
    make_store(root / "c" / "memory")  # never ran: no history file, no rows
    record_run(first, "a1", 1_700_000_000)
    record_run(second, "b1", 1_700_000_050)
    record_run(first, "a2", 1_700_000_100)
    history.record_event(second, "reject", "p", comment="no")
    with second.history.open("ab") as f:
        f.write(b"garbage\n")

    listed = cli("history", "--root", str(root), "--json")
    top = cli("history", "--all", "--root", str(root), "--limit", "2", "--json")

    assert listed.code == 0, listed.stderr
    runs = [(r["run_id"], r["store"]) for r in listed.json["runs"]]
    assert runs == [("a2", str(first.root)), ("b1", str(second.root)), ("a1", str(first.root))]
    assert [(e["action"], e["store"]) for e in listed.json["events"]] == [("reject", str(second.root))]
    assert len(listed.json["stores"]) == 3
    assert [(d["file"], d["line"]) for d in listed.json["damaged_lines"]] == [(str(second.history), 3)]
    assert str(second.history) in listed.stderr
    assert [r["run_id"] for r in top.json["runs"]] == ["a2", "b1"]
    assert history.fleet_runs([first.root, second.root], limit=1)[0]["run_id"] == "a2"
    table = cli("history", "--root", str(root), env={"COLUMNS": "300"})
    assert table.code == 0 and f"runs (stores under {first.root.parent.parent})" in table.stdout
    assert str(first.root.relative_to(first.root.parent.parent)) in table.stdout  # each store by what sets it apart


def test_a_comment_that_is_not_utf8_is_kept_not_fatal(store):
    history.record_event(store, "reject", comment="bad \udcff byte")  # what a Latin-1 terminal's argv becomes
    assert [e["comment"] for e in history.events(store)] == ["bad \ufffd byte"]


def test_null_keys_are_left_out_of_a_line_and_an_old_line_spelling_them_out_reads_the_same(store):
    record_run(store, "new", 1_700_000_100.0)
    [line] = lines_of(store)
    written = orjson.loads(line)
    assert None not in written.values() and "error" not in written
    old = {**{name: None for name in history.RUN_COLUMNS}, **written, "run_id": "old", "started_at": written["started_at"]}
    with store.history.open("ab") as fh:
        fh.write(orjson.dumps({"kind": "run", **old}) + b"\n")
    runs = {row["run_id"]: row for row in history.runs(store)}
    assert set(runs) == {"new", "old"}
    assert {k: v for k, v in runs["new"].items() if k != "run_id"} == {k: v for k, v in runs["old"].items() if k != "run_id"}
    assert runs["new"]["error"] is None and runs["new"]["status"] == written["status"]
