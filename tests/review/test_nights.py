"""Nights on the demo store, through the command line: nothing the user said is lost.

A proposal may wait for days. Each test plays nights as a user meets them
(run, run again before anyone reviewed, accept part, reject part, roll
back, run again) and checks that every request reached the store or a
person's explicit "no". The demo's sessions ask to correct the database to
Postgres 16 (project_database.md), to forget Jenkins (reference_jenkins.md)
and to remember new things (new topic files).
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest


def run(cli, store: Path, *more: str) -> dict:
    result = cli("run", "--store", str(store), "--engine", "offline", "--json", *more)
    assert result.code == 0, result.stderr
    return result.json


def ok(cli, *args: str) -> dict:
    result = cli(*args, "--json")
    assert result.code == 0, result.stderr
    return result.json


def proposal(cli, store: Path, proposal_id: str | None = None) -> dict:
    return ok(cli, "diff", *([proposal_id] if proposal_id else []), "--store", str(store))


def pending(cli, store: Path) -> list[dict]:
    return [p for p in ok(cli, "proposals", "--store", str(store))["proposals"] if p["status"] == "pending"]


def added_by(first: dict, store_before: set[str]) -> set[str]:
    """The memory files the first proposal creates."""
    return {f for f in first["files_changed"] if f not in store_before}


def new_session(store: Path, name: str, text: str) -> Path:
    log = store / "logs/2026/11/28" / name
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(text)
    return log


def assert_every_request_landed(store: Path, new_files: set[str]) -> None:
    database = (store / "project_database.md").read_text()
    assert "Postgres 16" in database and "15" in database  # corrected, with what it was
    assert not (store / "reference_jenkins.md").exists()  # forgotten
    assert new_files and all((store / f).is_file() for f in new_files), sorted(f for f in new_files if not (store / f).exists())


def memory_files(store: Path) -> set[str]:
    return {p.relative_to(store).as_posix() for p in store.rglob("*.md")
            if not {"logs", ".dream"} & set(p.relative_to(store).parts)}


def test_a_waiting_proposal_keeps_its_requests_when_the_next_night_runs(cli, demo_store):
    """Run, then run again the next night before anyone reviewed, then accept."""
    before = memory_files(demo_store)
    first = run(cli, demo_store)
    assert first["status"] == "proposed"
    p1 = proposal(cli, demo_store)
    new_session(demo_store, "s20-deploy-notes.md", "> remember that deploys to staging go out at 14:00 UTC\n< Noted.\n")

    second = run(cli, demo_store, "--force")  # before 24 h: forced, as the next night would be due
    assert second["status"] == "proposed"
    assert second["sessions_read"] == first["sessions_read"] + 1  # the waiting proposal's sessions, and the new one
    statuses = {p["id"]: p["status"] for p in ok(cli, "proposals", "--store", str(demo_store))["proposals"]}
    assert statuses[first["proposal_id"]] == "superseded"
    p2 = proposal(cli, demo_store)
    assert set(p1["files_changed"]) <= set(p2["files_changed"])

    waiting = ok(cli, "status", "--store", str(demo_store))["gate"]
    assert waiting["sessions_waiting"] == second["sessions_read"] and waiting["sessions_new"] == 0

    ok(cli, "accept", "--store", str(demo_store))
    assert_every_request_landed(demo_store, added_by(p1, before))
    assert ok(cli, "status", "--store", str(demo_store))["gate"]["sessions_waiting"] == 0
    assert run(cli, demo_store, "--force")["sessions_read"] == 0


def test_a_partial_accept_leaves_the_rest_pending_rebased_onto_the_new_version(cli, demo_store):
    """Run, accept one file, run: the skipped changes are proposed again, not closed."""
    before = memory_files(demo_store)
    first = run(cli, demo_store)
    p1 = proposal(cli, demo_store)
    taken = ok(cli, "accept", "--store", str(demo_store), "--only", "project_database.md")
    assert taken["taken"] == ["project_database.md"] and taken["new_proposal_id"]

    rest = pending(cli, demo_store)
    assert [p["id"] for p in rest] == [taken["new_proposal_id"]]
    left = proposal(cli, demo_store, taken["new_proposal_id"])
    assert left["base_version"] == taken["version"]
    assert set(left["files_changed"]) == set(p1["files_changed"]) - {"project_database.md"}
    assert ok(cli, "status", "--store", str(demo_store))["gate"]["sessions_waiting"] > 0

    quiet = run(cli, demo_store, "--force")  # the next night, nothing new: the rest stands as it is
    assert quiet["status"] == "noop" and [p["id"] for p in pending(cli, demo_store)] == [taken["new_proposal_id"]]

    new_session(demo_store, "s21-more.md", "> remember that the ledger API has a rate limit of 50 rps\n< Noted.\n")
    again = run(cli, demo_store, "--force")  # something new: read with what the pending rest holds
    assert again["status"] == "proposed" and again["sessions_read"] > 1
    assert set(left["files_changed"]) <= set(proposal(cli, demo_store)["files_changed"])
    ok(cli, "accept", "--store", str(demo_store))
    assert_every_request_landed(demo_store, added_by(p1, before))
    assert first["proposal_id"] != again["proposal_id"]


def test_the_rest_of_a_partial_accept_can_be_accepted_as_it_stands(cli, demo_store):
    before = memory_files(demo_store)
    run(cli, demo_store)
    p1 = proposal(cli, demo_store)
    ok(cli, "accept", "--store", str(demo_store), "--only", "project_database.md")
    ok(cli, "accept", "--store", str(demo_store))  # the newest pending: the rest
    assert_every_request_landed(demo_store, added_by(p1, before))
    assert run(cli, demo_store, "--force")["sessions_read"] == 0  # every session was decided on


def test_rejecting_one_file_consumes_only_that_file(cli, demo_store):
    """Run, reject the Jenkins forget, run: the rest stays pending; the forget comes back."""
    run(cli, demo_store)
    p1 = proposal(cli, demo_store)
    said_no = ok(cli, "reject", "--store", str(demo_store), "--only", "reference_jenkins.md")
    assert said_no["status"] == "rejected" and said_no["skipped"] == ["reference_jenkins.md"]
    rest = proposal(cli, demo_store, said_no["new_proposal_id"])
    assert set(rest["files_changed"]) == set(p1["files_changed"]) - {"reference_jenkins.md"}

    again = run(cli, demo_store, "--force")
    assert "reference_jenkins.md" in proposal(cli, demo_store, again["proposal_id"])["files_changed"]
    assert "project_database.md" in proposal(cli, demo_store, again["proposal_id"])["files_changed"]


def test_rejecting_one_file_with_forget_requests_is_a_no_that_stays(cli, demo_store):
    run(cli, demo_store)
    said_no = ok(cli, "reject", "--store", str(demo_store), "--only", "reference_jenkins.md", "--forget-requests")
    ok(cli, "accept", "--store", str(demo_store), said_no["new_proposal_id"])
    assert (demo_store / "reference_jenkins.md").exists()  # the person's "no"
    assert "Postgres 16" in (demo_store / "project_database.md").read_text()
    after = run(cli, demo_store, "--force")
    assert after["sessions_read"] == 0 and (demo_store / "reference_jenkins.md").exists()


def test_rejecting_a_file_the_rest_needs_is_refused(cli, demo_store):
    run(cli, demo_store)
    p1 = proposal(cli, demo_store)
    new_file = next(f for f in p1["files_changed"] if not (demo_store / f).exists() and f != "archive.md")
    refused = cli("reject", "--store", str(demo_store), "--only", new_file)
    assert refused.code != 0 and "MEMORY.md" in refused.stderr and "Traceback" not in refused.stderr
    assert pending(cli, demo_store)[0]["id"] == p1["proposal_id"]


def test_a_rollback_offers_the_undone_requests_again(cli, demo_store):
    before = memory_files(demo_store)
    first = run(cli, demo_store)
    p1 = proposal(cli, demo_store)
    ok(cli, "accept", "--store", str(demo_store))
    ok(cli, "rollback", str(first["base_version"]), "--store", str(demo_store))
    assert (demo_store / "reference_jenkins.md").exists()
    again = run(cli, demo_store, "--force")
    assert again["status"] == "proposed" and again["sessions_read"] == first["sessions_read"]
    ok(cli, "accept", "--store", str(demo_store))
    assert_every_request_landed(demo_store, added_by(p1, before))


# ------------------------------------------------ a log is known by its content (issue 22, item 4)


def test_a_log_copied_with_its_old_mtime_is_read(cli, demo_store, tmp_path):
    """A log whose mtime predates the last dream, as `cp -p` or `rsync -a` leave it, is read."""
    run(cli, demo_store)
    ok(cli, "accept", "--store", str(demo_store))
    elsewhere = tmp_path / "s30-laptop.md"
    elsewhere.write_text("> remember that the laptop's VPN profile is called acme-staging\n< Noted.\n")
    old = time.time() - 30 * 86400
    os.utime(elsewhere, (old, old))
    copied = demo_store / "logs/2026/11/29/s30-laptop.md"
    copied.parent.mkdir(parents=True)
    shutil.copy2(elsewhere, copied)  # cp -p
    assert copied.stat().st_mtime == pytest.approx(old)
    assert ok(cli, "status", "--store", str(demo_store))["gate"]["sessions_new"] == 1
    again = run(cli, demo_store, "--force")
    assert again["sessions_read"] == 1 and again["status"] == "proposed"


def test_a_log_rewritten_with_the_same_size_is_read_again(cli, demo_store):
    run(cli, demo_store)
    ok(cli, "accept", "--store", str(demo_store))
    log = next((demo_store / "logs").rglob("s08*.md"))
    text = log.read_text()
    log.write_text(text.replace("a", "e", 1))  # same size, another content, a new mtime
    assert ok(cli, "status", "--store", str(demo_store))["gate"]["sessions_new"] == 1
    touched = next((demo_store / "logs").rglob("s07*.md"))
    os.utime(touched)  # a new mtime alone: the same content, not read again
    assert ok(cli, "status", "--store", str(demo_store))["gate"]["sessions_new"] == 1


def test_a_last_dream_dated_in_the_future_does_not_keep_the_gate_shut(cli, demo_store):
    """A last dream stamped 5 years ahead is not trusted: the gate opens, with a warning."""
    run(cli, demo_store)
    ok(cli, "accept", "--store", str(demo_store))
    state_file = demo_store / ".dream/state.json"
    state = json.loads(state_file.read_text())
    state["last_consolidated_at"] = time.time() + 5 * 365 * 86400
    state_file.write_text(json.dumps(state))
    for n in range(5):
        new_session(demo_store, f"s4{n}-more.md", f"> remember that build {n} is green\n< Noted.\n")
    gate = ok(cli, "status", "--store", str(demo_store))["gate"]
    assert gate["open"] and gate["reason"] is None
    assert any("in the future" in w for w in gate["warnings"])
    again = run(cli, demo_store)  # not forced
    assert again["status"] == "proposed"
    assert json.loads(state_file.read_text())["last_consolidated_at"] < time.time() + 60


def test_a_plain_sessions_json_from_before_is_read_and_replaced_by_the_compressed_ledger(cli, demo_store):
    import gzip

    run(cli, demo_store)
    ok(cli, "accept", "--store", str(demo_store))
    dream = demo_store / ".dream"
    logs = json.loads(gzip.decompress((dream / "sessions.json.gz").read_bytes()))["logs"]
    assert logs and all(entry["sha256"] for entry in logs.values())
    # the ledger as dream wrote it before it was compressed
    (dream / "sessions.json").write_text(json.dumps({"logs": logs}, indent=1) + "\n")
    (dream / "sessions.json.gz").unlink()
    assert ok(cli, "status", "--store", str(demo_store))["gate"]["sessions_new"] == 0
    new_session(demo_store, "s31-new.md", "> remember that the nightly export runs at 02:00 UTC\n< Noted.\n")
    again = run(cli, demo_store, "--force")
    assert again["sessions_read"] == 1 and again["status"] == "proposed"
    assert not (dream / "sessions.json").exists()
    kept = json.loads(gzip.decompress((dream / "sessions.json.gz").read_bytes()))["logs"]
    assert set(logs) < set(kept)
