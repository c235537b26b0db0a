"""Audit: who did what and when (accept, reject, rollback, rebase), show, diff --from/--to, auto_accept."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from dream.history import actor
from dream.store.layout import Layout
from dream.versions.manifests import Versions


def events_by_action(cli, store) -> dict[str, dict]:
    res = cli("history", "--store", str(store), "--json")
    assert res.code == 0, res.stderr
    return {e["action"]: e for e in res.json["events"]}


def test_history_records_who_when_and_the_comment(demo_store, cli):
    s = str(demo_store)
    first = cli("run", "--store", s, "--json").json["proposal_id"]
    assert cli("reject", first, "--store", s, "-m", "too eager").code == 0
    role = demo_store / "user_role.md"
    role.write_text(role.read_text() + "\nFirst new fact.\n")  # the agent writes during the day
    second = cli("run", "--store", s, "--force", "--json").json["proposal_id"]
    role.write_text(role.read_text() + "\nSecond new fact.\n")  # and again: the proposal is now stale
    rebased = cli("rebase", second, "--store", s, "--comment", "store moved on", "--json")
    assert rebased.code == 0, rebased.stderr
    third = rebased.json["new_proposal_id"]
    assert third and third != second
    assert cli("accept", third, "--store", s, "--comment", "looks right").code == 0
    assert cli("rollback", "1", "--store", s, "-m", "undo").code == 0

    events = events_by_action(cli, demo_store)
    assert set(events) == {"reject", "rebase", "accept", "rollback"}
    assert events["reject"]["comment"] == "too eager" and events["reject"]["proposal_id"] == first
    assert events["rebase"]["comment"] == "store moved on" and events["rebase"]["detail"] == f"replaced by {third}"
    assert events["accept"]["comment"] == "looks right" and events["accept"]["proposal_id"] == third
    assert events["rollback"]["comment"] == "undo"
    assert events["rollback"]["detail"] == f"to version 1; rolls back proposal(s) {third}"
    now = datetime.now(timezone.utc)
    for e in events.values():
        assert e["actor"] == actor() and "@" in e["actor"]
        assert now - timedelta(minutes=10) < datetime.fromisoformat(e["at"]) <= now + timedelta(seconds=5)

    proposals = {p["id"]: p["status"] for p in cli("proposals", "--store", s, "--json").json["proposals"]}
    assert proposals[second] == "superseded" and proposals[third] == "rolled_back"  # the rollback undid it
    table = cli("history", "--store", s, env={"COLUMNS": "300"}).stdout
    assert "looks right" in table and "rebase" in table


def test_rebase_reads_the_same_sessions_as_the_stale_proposal(demo_store, cli):
    s = str(demo_store)
    stale = cli("run", "--store", s, "--json").json
    (demo_store / "user_role.md").write_text((demo_store / "user_role.md").read_text() + "\nNew fact.\n")
    res = cli("rebase", "--store", s, "--json").json
    fresh = cli("diff", res["new_proposal_id"], "--store", s, "--json").json
    # The forget request came from a session read by the stale run: the fresh proposal still applies it.
    assert any(c["action"] == "forgotten" for c in fresh["report"]["changes"])
    assert fresh["base_version"] == stale["base_version"] + 1
    assert cli("accept", "--store", s).code == 0
    assert "New fact." in (demo_store / "user_role.md").read_text()


def test_show_prints_a_version_file_and_lists_files(demo_store, cli):
    s = str(demo_store)
    pid = cli("run", "--store", s, "--json").json["proposal_id"]
    cli("accept", pid, "--store", s)
    v1 = Versions(Layout.open(demo_store)).tree(1)
    shown = cli("show", "1", "MEMORY.md", "--store", s)
    assert shown.code == 0 and shown.stdout.encode() == v1["MEMORY.md"]
    listing = cli("show", "2", "--store", s, "--json").json
    assert listing["version"] == 2 and listing["source"] == "accept" and "kafka_consumer_lag.md" in listing["files"]
    missing = cli("show", "1", "nope.md", "--store", s)
    assert missing.code == 2 and "nope.md" in missing.stderr and len(missing.stderr.splitlines()) == 1
    assert cli("show", "99", "--store", s).code == 2


def test_diff_from_to_compares_any_two_versions(demo_store, cli, tmp_path):
    s = str(demo_store)
    pid = cli("run", "--store", s, "--json").json["proposal_id"]
    cli("accept", pid, "--store", s)
    res = cli("diff", "--from", "1", "--to", "2", "--store", s, "--json").json
    assert res["from"] == 1 and res["to"] == 2
    assert "reference_jenkins.md" in res["files_changed"] and "+++ /dev/null" in res["diff"]
    back = cli("diff", "--from", "2", "--to", "1", "--store", s, "--json").json
    assert back["files_changed"] == res["files_changed"] and "--- /dev/null" in back["diff"]
    page = tmp_path / "v.html"
    assert cli("diff", "--from", "1", "--to", "2", "--html", str(page), "--store", s).code == 0
    assert "Versions 1 → 2" in page.read_text()
    assert cli("diff", "--from", "1", "--to", "7", "--store", s).code == 2


def enable_auto_accept(store) -> None:
    (store / ".dream").mkdir(exist_ok=True)
    (store / ".dream" / "config.toml").write_text("auto_accept = true\n")


def test_auto_accept_waits_when_the_proposal_drops_something(demo_store, cli):
    enable_auto_accept(demo_store)
    # The demo's sessions ask to forget a memory: that drops lines, so it waits for review, while
    # the housekeeping goes in.
    out = cli("run", "--store", str(demo_store), "--json").json
    status = cli("status", "--store", str(demo_store), "--json").json
    assert out["accepted_version"] == 2 and len(status["pending"]) == 1
    held = cli("diff", status["pending"][0], "--store", str(demo_store), "--json").json["changes"]
    assert ("forgotten", "reference_jenkins.md") in {(c["action"], c["path"]) for c in held}
    assert (demo_store / "reference_jenkins.md").exists()
    assert any("wait for a person" in item for item in out["needs_person"])


def test_auto_accept_accepts_when_nothing_is_dropped(demo_store, cli):
    enable_auto_accept(demo_store)
    next(demo_store.glob("logs/**/s08-jenkins-cleanup.md")).unlink()  # no forget request this time
    out = cli("run", "--store", str(demo_store), "--json").json
    status = cli("status", "--store", str(demo_store), "--json").json
    assert out["status"] == "proposed" and status["current_version"] == 2 and out["accepted_version"] == 2
    accept_event = events_by_action(cli, demo_store)["accept"]
    assert accept_event["actor"] == "policy:auto_accept" and accept_event["proposal_id"] == out["proposal_id"]
    assert "drops nothing" in accept_event["comment"]
    # The demo's sessions hold a correction: housekeeping went in, the correction waits for a person.
    assert len(status["pending"]) == 1 and status["pending"][0] != out["proposal_id"]
    taken = cli("diff", out["proposal_id"], "--store", str(demo_store), "--json").json["changes"]
    held = cli("diff", status["pending"][0], "--store", str(demo_store), "--json").json["changes"]
    requests = [c for c in held if c["kind"] == "request"]
    assert requests and all(c["evidence"]["sentence"] and c["evidence"]["line"] >= 1 for c in requests)
    accepted = set(cli("diff", "--from", "1", "--to", "2", "--store", str(demo_store), "--json").json["files_changed"])
    assert accepted and not accepted & ({c["path"] for c in requests} | {"MEMORY.md"})
    assert {c["kind"] for c in taken} >= {"housekeeping", "request"}
