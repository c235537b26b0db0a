"""After a rollback, the proposal it undid says so: `dream proposals`, `dream history` and its page (#26)."""

from __future__ import annotations

from pathlib import Path


def test_a_rolled_back_proposal_is_not_listed_as_accepted(demo_store: Path, cli, tmp_path: Path) -> None:
    store = ["--store", str(demo_store)]
    pid = cli("run", *store, "--engine", "offline", "--json").json["proposal_id"]
    assert cli("accept", pid, *store).code == 0
    assert cli("rollback", "1", *store).code == 0

    listed = {p["id"]: p for p in cli("proposals", *store, "--json").json["proposals"]}
    assert listed[pid]["status"] == "rolled_back" and listed[pid]["accepted_version"] == 2
    shown = cli("proposals", *store, env={"COLUMNS": "200"}).stdout
    row = next(line for line in shown.splitlines() if pid in line)
    assert "rolled back" in row and "accepted" not in row

    events = cli("history", *store, "--json").json["events"]
    rollback = next(e for e in events if e["action"] == "rollback")
    assert f"rolls back proposal(s) {pid}" in rollback["detail"]
    assert f"rolls back proposal(s) {pid}" in cli("history", *store, env={"COLUMNS": "300"}).stdout

    html = tmp_path / "page.html"
    assert cli("diff", pid, *store, "--html", str(html)).code == 0
    assert "base version 1 · rolled back" in html.read_text(encoding="utf-8")


def test_a_rollback_to_a_later_version_undoes_nothing_earlier(demo_store: Path, cli) -> None:
    store = ["--store", str(demo_store)]
    pid = cli("run", *store, "--engine", "offline", "--json").json["proposal_id"]
    assert cli("accept", pid, *store).code == 0  # version 2
    assert cli("rollback", "2", *store).code == 0  # back to the accepted bytes: nothing undone
    listed = {p["id"]: p for p in cli("proposals", *store, "--json").json["proposals"]}
    assert listed[pid]["status"] == "accepted"
