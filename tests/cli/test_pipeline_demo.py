"""The whole path on the demo store, driven through the CLI as a user would."""

from __future__ import annotations

from dream.store.layout import Layout
from dream.store.tree import read_tree
from dream.versions.proposals import Proposals
from helpers.stores import file_modes, snapshot_bytes


# Files the demo's proposal rewrites (dated, struck through, index), given unusual modes.
ODD_MODES = {"MEMORY.md": 0o640, "project_idempotency_keys.md": 0o600, "project_database.md": 0o604}


def test_run_diff_accept_noop_rollback(demo_store, cli):
    for rel, mode in ODD_MODES.items():
        (demo_store / rel).chmod(mode)
    original = snapshot_bytes(demo_store)
    modes = file_modes(demo_store)

    run = cli("run", "--store", str(demo_store), "--json")
    assert run.code == 0, run.stderr
    out = run.json
    assert out["status"] == "proposed"
    assert out["engine"] == "offline"
    assert out["base_version"] == 1
    assert out["changes"] > 0
    assert snapshot_bytes(demo_store) == original, "a run must not touch the store"

    diff = cli("diff", "--store", str(demo_store), "--json").json
    patch = diff["diff"]
    # merged duplicates: the exact duplicate's file goes away
    assert "+++ /dev/null" in patch
    # the moved pointer now points into ops/
    assert any(l.startswith("+") and "ops/oncall_runbook.md" in l for l in patch.splitlines())
    # relative dates became absolute
    assert any(l.startswith("-") and "yesterday" in l for l in patch.splitlines())
    assert any(l.startswith("+") and "2026-" in l for l in patch.splitlines())

    acc = cli("accept", out["proposal_id"], "--store", str(demo_store), "--json")
    assert acc.code == 0, acc.stderr
    assert {k: acc.json[k] for k in ("status", "proposal_id", "version")} == \
        {"status": "accepted", "proposal_id": out["proposal_id"], "version": 2}
    proposals = Proposals(Layout.open(demo_store))
    proposal_tree = proposals.tree(proposals.get(out["proposal_id"]))
    assert read_tree(demo_store) == proposal_tree
    assert all(proposal_tree[rel] != original[rel] for rel in ODD_MODES), "the mode check must cover rewrites"
    after = file_modes(demo_store)
    assert {rel: after[rel] for rel in modes if rel in after} == {rel: modes[rel] for rel in modes if rel in after}
    # Logs are input only: accept leaves them as they were.
    assert {k: v for k, v in snapshot_bytes(demo_store).items() if k.startswith("logs/")} == \
        {k: v for k, v in original.items() if k.startswith("logs/")}

    again = cli("run", "--store", str(demo_store), "--force", "--json").json
    assert again["status"] == "noop"

    back = cli("rollback", "1", "--store", str(demo_store), "--json")
    assert back.code == 0, back.stderr
    assert back.json["version"] == 3
    assert snapshot_bytes(demo_store) == original
    assert {rel: file_modes(demo_store)[rel] for rel in ODD_MODES} == ODD_MODES


def test_status_and_history_report_the_run(demo_store, cli):
    cli("run", "--store", str(demo_store), "--json")
    status = cli("status", "--store", str(demo_store), "--json").json
    assert status["current_version"] == 1
    assert len(status["pending"]) == 1
    assert status["lock"] is None
    assert status["gate"]["open"] is False and status["gate"]["reason"] == "hours"
    hist = cli("history", "--store", str(demo_store), "--json").json
    assert [r["status"] for r in hist["runs"]] == ["proposed"]
    assert hist["runs"][0]["sessions_read"] >= 8


def test_gate_closed_run_is_a_recorded_skip(demo_store, cli):
    assert cli("run", "--store", str(demo_store), "--json").json["status"] == "proposed"
    second = cli("run", "--store", str(demo_store), "--json")
    assert second.code == 0
    assert second.json["status"] == "skipped" and second.json["reason"] == "hours"
    runs = cli("history", "--store", str(demo_store), "--json").json["runs"]
    assert runs[0]["status"] == "skipped" and runs[0]["reason"] == "hours"


def test_reject_leaves_store_and_closes_proposal(demo_store, cli):
    original = snapshot_bytes(demo_store)
    pid = cli("run", "--store", str(demo_store), "--json").json["proposal_id"]
    rej = cli("reject", pid, "--store", str(demo_store), "--json")
    assert rej.code == 0 and rej.json["status"] == "rejected"
    assert snapshot_bytes(demo_store) == original
    again = cli("accept", pid, "--store", str(demo_store))
    assert again.code == 1 and "rejected" in again.stderr


def test_accept_keeps_store_edits_made_after_proposal(demo_store, cli):
    # Issue 5 replaced "refuse when the store changed" by a three-way merge (tests/test_merge.py).
    pid = cli("run", "--store", str(demo_store), "--json").json["proposal_id"]
    edited = demo_store / "user_role.md"
    edited.write_text(edited.read_text() + "\nA new fact written during the day.\n")
    res = cli("accept", pid, "--store", str(demo_store), "--json")
    assert res.code == 0, res.stderr
    assert "A new fact written during the day." in edited.read_text()
    assert res.json["pre_accept_version"] == 2 and res.json["version"] == 3
