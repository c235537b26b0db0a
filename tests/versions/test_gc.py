"""`dream gc --keep N`: versions older than 90 days and their unreferenced blobs go; nothing still needed does.

Versions are aged by rewriting their records (`helpers.aging.backdate`): every
version of the last 90 days stays whatever `--keep` says.
"""

from __future__ import annotations

import pytest

import dream.versions.gc as gc_module
from dream.errors import BadInput
from dream.store.records import DamagedRecord
from dream.store.layout import Layout
from dream.store.tree import read_tree
from dream.versions.gc import gc, versions_to_keep
from dream.versions.manifests import Blobs, Versions
from helpers.aging import backdate
from dream.versions.proposals import (
    ACCEPTED,
    PENDING,
    REJECTED,
    SUPERSEDED,
    Proposal,
    Proposals,
)


def blob_count(layout: Layout) -> int:
    """Objects stored, loose or packed."""
    return len(Blobs(layout).digests())


def write(store, name: str, text: str) -> None:
    (store / name).write_text(f"---\nname: {name}\ndescription: d\ntype: project\n---\n\n{text}\n")


def test_keep_one_deletes_old_versions_and_their_blobs(demo_store, cli):
    layout = Layout.open(demo_store)
    pid = cli("run", "--store", str(demo_store), "--json").json["proposal_id"]
    assert cli("accept", pid, "--store", str(demo_store)).code == 0
    write(demo_store, "scratch.md", "only in version 3")  # an edit made during the day ...
    cli("rollback", "1", "--store", str(demo_store))  # ... kept as a snapshot (3), then version 4 = 1
    versions = Versions(layout)
    assert versions.numbers() == [1, 2, 3, 4]
    scratch_digest = versions.get(3).files["scratch.md"]
    index_digest = versions.get(2).files["MEMORY.md"]  # the accepted index (also 3's), undone by the rollback
    assert index_digest != versions.get(4).files["MEMORY.md"]
    backdate(layout, 200)

    res = cli("gc", "--keep", "1", "--store", str(demo_store), "--json")
    assert res.code == 0, res.stderr
    assert res.json["deleted_versions"] == [1, 2, 3] and res.json["kept_versions"] == [4]
    assert versions.numbers() == [4]
    assert not Blobs(layout).has(index_digest)
    # scratch.md left the store (the rollback removed it): it stays restorable, through the removal ledger.
    assert Blobs(layout).has(scratch_digest)
    removed = cli("removed", "--store", str(demo_store), "--json").json["removed"]
    assert ("memory", "scratch.md", 3, "rollback") in {(r["kind"], r["path"], r["held_by"], r["source"])
                                                      for r in removed}
    # The accepted proposal was based on version 1, now gone: it goes too, with blobs only it held.
    assert res.json["proposals_deleted"] == [pid]
    assert Proposals(layout).ids() == []
    # Every remaining version is whole.
    assert versions.tree(4) == read_tree(demo_store)
    assert res.json["deleted_blobs"] >= 1 and res.json["freed_bytes"] > 0


def test_gc_is_in_the_history_with_what_it_removed_and_the_bytes_freed(demo_store, cli):
    layout = Layout.open(demo_store)
    pid = cli("run", "--store", str(demo_store), "--json").json["proposal_id"]
    assert cli("accept", pid, "--store", str(demo_store)).code == 0
    cli("rollback", "1", "--store", str(demo_store))
    backdate(layout, 200)

    res = cli("gc", "--keep", "1", "--store", str(demo_store), "--json")
    assert res.code == 0, res.stderr
    freed = res.json["freed_bytes"]
    assert freed > 0
    events = cli("history", "--store", str(demo_store), "--json").json["events"]
    gcs = [e for e in events if e["action"] == "gc"]
    assert len(gcs) == 1
    assert gcs[0]["detail"].startswith("deleted 2 version(s) 1-2, 1 decided proposal(s)")
    assert f"({freed} bytes freed); kept versions 3" in gcs[0]["detail"]
    shown = " ".join(cli("history", "--store", str(demo_store)).stdout.replace("│", " ").split())
    assert "action: gc" in shown and f"({freed} bytes freed)" in shown


def test_never_deletes_the_base_of_a_pending_proposal(demo_store, cli):
    layout = Layout.open(demo_store)
    pid = cli("run", "--store", str(demo_store), "--json").json["proposal_id"]  # base version 1
    write(demo_store, "later.md", "written during the day")
    versions = Versions(layout)
    versions.record(read_tree(demo_store), "snapshot")  # version 2
    versions.record(read_tree(demo_store), "snapshot")  # version 3
    backdate(layout, 200)
    result = gc(demo_store, keep=1)
    assert result.kept_versions == [1, 3] and result.deleted_versions == [2]
    # The pending proposal can still be accepted, merging the day's edit.
    done = cli("accept", pid, "--store", str(demo_store), "--json")
    assert done.code == 0, done.stderr
    assert (demo_store / "later.md").exists()


def test_gc_keeps_everything_still_referenced(demo_store, cli):
    layout = Layout.open(demo_store)
    cli("run", "--store", str(demo_store), "--json")
    before = blob_count(layout)
    result = gc(demo_store, keep=5)
    assert result.deleted_versions == [] and result.deleted_blobs == 0
    assert blob_count(layout) == before


def test_versions_to_keep_always_has_the_current_one():
    old = dict.fromkeys([1, 2, 3, 4, 5], 0.0)  # all made before the cutoff
    assert versions_to_keep(old, 2, set(), cutoff=10.0) == [4, 5]
    assert versions_to_keep(old, 1, {2}, cutoff=10.0) == [2, 5]
    assert versions_to_keep({}, 3, {1}, cutoff=10.0) == []


def test_versions_to_keep_has_the_window_and_the_version_in_force_when_it_began():
    created = {1: 1.0, 2: 2.0, 3: 3.0, 4: 20.0, 5: 21.0}
    assert versions_to_keep(created, 1, set(), cutoff=10.0) == [3, 4, 5]  # 3 was the store at the cutoff


def test_keep_below_one_is_bad_input(demo_store, cli):
    with pytest.raises(BadInput):
        gc(demo_store, keep=0)
    res = cli("gc", "--keep", "0", "--store", str(demo_store))
    assert res.code == 2 and len(res.stderr.strip().splitlines()) == 1


# --- decided proposals -------------------------------------------------------------------------


def add_proposal(layout: Layout, pid: str, base: int, status: str, extra: dict[str, bytes]) -> Proposal:
    """A proposal whose tree is its base version plus `extra` files (their blobs stored)."""
    versions, proposals = Versions(layout), Proposals(layout)
    files = dict(versions.get(base).files) | versions.blobs.put_tree(extra)
    proposal = Proposal(pid, 0.0, base, "offline", f"run-{pid}", files, sorted(extra), status=status)
    return proposals.create(proposal, f"diff of {pid}\n", {"id": pid})


def blob_exists(layout: Layout, data: bytes) -> bool:
    from dream.store.tree import sha256
    return Blobs(layout).has(sha256(data))


@pytest.fixture
def mixed_store(demo_store):
    """Versions 1-3; decided proposals on version 1; one pending on 2; one rejected on 3."""
    layout = Layout.open(demo_store)
    layout.ensure()
    versions = Versions(layout)
    versions.record(read_tree(demo_store), "snapshot")  # 1
    add_proposal(layout, "p-accepted", 1, ACCEPTED, {"a.md": b"only in the accepted one"})
    add_proposal(layout, "p-rejected", 1, REJECTED, {"r.md": b"only in the rejected one", "v3.md": b"also in v3"})
    add_proposal(layout, "p-superseded", 1, SUPERSEDED,
                 {"s.md": b"only in the superseded one", "shared.md": b"shared with the pending one"})
    write(demo_store, "day.md", "written during the day")
    versions.record(read_tree(demo_store), "snapshot")  # 2
    (demo_store / "v3.md").write_bytes(b"also in v3")
    versions.record(read_tree(demo_store), "snapshot")  # 3
    add_proposal(layout, "p-pending", 2, PENDING,
                 {"p.md": b"only in the pending one", "shared.md": b"shared with the pending one"})
    add_proposal(layout, "p-recent", 3, REJECTED, {"n.md": b"rejected but on a kept version"})
    backdate(layout, 200)
    return demo_store


def test_gc_deletes_old_decided_proposals_and_only_their_blobs(mixed_store, cli):
    layout = Layout.open(mixed_store)
    res = cli("gc", "--keep", "1", "--store", str(mixed_store), "--json")
    assert res.code == 0, res.stderr
    assert res.json["kept_versions"] == [2, 3]  # 2 is the pending proposal's base
    assert sorted(res.json["proposals_deleted"]) == ["p-accepted", "p-rejected", "p-superseded"]
    assert Proposals(layout).ids() == ["p-pending", "p-recent"]
    assert not (layout.proposals / "p-accepted").exists()
    for gone in (b"only in the accepted one", b"only in the rejected one", b"only in the superseded one"):
        assert not blob_exists(layout, gone)
    for kept in (b"also in v3", b"shared with the pending one", b"only in the pending one",
                 b"rejected but on a kept version"):
        assert blob_exists(layout, kept)
    # What is left is whole: the pending proposal's tree and the kept versions read back.
    proposals = Proposals(layout)
    assert proposals.tree(proposals.get("p-pending"))["shared.md"] == b"shared with the pending one"
    assert proposals.tree(proposals.get("p-recent"))["n.md"] == b"rejected but on a kept version"
    assert Versions(layout).tree(3) == read_tree(mixed_store)
    assert not any((layout.dream / "gc-trash").iterdir())


def test_history_works_and_diff_of_a_deleted_proposal_is_a_one_line_error(mixed_store, cli):
    assert cli("gc", "--keep", "1", "--store", str(mixed_store)).code == 0
    hist = cli("history", "--store", str(mixed_store), "--json")
    assert hist.code == 0, hist.stderr
    assert set(hist.json) == {"runs", "events", "damaged_lines"} and hist.json["damaged_lines"] == []
    gone = cli("diff", "p-rejected", "--store", str(mixed_store))
    assert gone.code == 2 and gone.stdout == ""
    assert len(gone.stderr.strip().splitlines()) == 1 and "no proposal 'p-rejected'" in gone.stderr
    assert cli("diff", "p-pending", "--store", str(mixed_store)).code == 0


def test_keep_proposals_keeps_decided_ones_and_their_blobs(mixed_store):
    layout = Layout.open(mixed_store)
    result = gc(mixed_store, keep=1, keep_proposals=True)
    assert result.proposals_deleted == [] and result.deleted_versions == [1]
    assert len(Proposals(layout).ids()) == 5
    assert blob_exists(layout, b"only in the accepted one")


def test_an_old_pending_proposal_pins_its_base_and_the_decided_ones_on_it(demo_store):
    layout = Layout.open(demo_store)
    layout.ensure()
    versions = Versions(layout)
    versions.record(read_tree(demo_store), "snapshot")  # 1
    add_proposal(layout, "old-pending", 1, PENDING, {"p.md": b"pending on 1"})
    add_proposal(layout, "old-rejected", 1, REJECTED, {"r.md": b"rejected on 1"})
    write(demo_store, "day.md", "later")
    versions.record(read_tree(demo_store), "snapshot")  # 2
    backdate(layout, 200)
    result = gc(demo_store, keep=1)
    assert result.kept_versions == [1, 2] and result.proposals_deleted == []
    assert blob_exists(layout, b"pending on 1") and blob_exists(layout, b"rejected on 1")


def test_a_damaged_proposal_makes_gc_refuse_and_delete_nothing(mixed_store, cli):
    layout = Layout.open(mixed_store)
    (layout.proposals / "p-recent" / "proposal.json").write_text("{not json")
    before = blob_count(layout)
    with pytest.raises(DamagedRecord):
        gc(mixed_store, keep=1)
    res = cli("gc", "--keep", "1", "--store", str(mixed_store))
    assert res.code == 2 and len(res.stderr.strip().splitlines()) == 1
    assert blob_count(layout) == before and Versions(layout).numbers() == [1, 2, 3]
    assert (layout.proposals / "p-accepted" / "proposal.json").is_file()


def test_an_interrupted_gc_leaves_no_manifest_pointing_at_deleted_blobs(mixed_store, monkeypatch):
    layout = Layout.open(mixed_store)

    def crash(folder):
        raise KeyboardInterrupt("power cut while emptying the trash")

    monkeypatch.setattr(gc_module, "_remove_folder", crash)
    with pytest.raises(KeyboardInterrupt):
        gc(mixed_store, keep=1)
    # The first proposal left proposals/ in one rename; no blob was deleted yet.
    remaining = Proposals(layout).all(skip_damaged=False)
    assert len(remaining) == 4
    for proposal in remaining:
        Proposals(layout).tree(proposal)  # every manifest still finds all its blobs
    assert blob_exists(layout, b"only in the accepted one")
    monkeypatch.undo()
    result = gc(mixed_store, keep=1)  # the next gc finishes the job
    assert Proposals(layout).ids() == ["p-pending", "p-recent"]
    assert not any((layout.dream / "gc-trash").iterdir())
    assert not blob_exists(layout, b"only in the accepted one")
    assert len(result.proposals_deleted) == 2  # the third was already out of proposals/


def test_a_trash_that_is_a_file_is_refused_before_anything_is_deleted(mixed_store, cli):
    layout = Layout.open(mixed_store)
    (layout.dream / "gc-trash").write_text("not a folder")
    res = cli("gc", "--keep", "1", "--store", str(mixed_store))
    assert res.code == 2 and len(res.stderr.strip().splitlines()) == 1 and "gc-trash" in res.stderr
    assert len(Proposals(layout).ids()) == 5 and Versions(layout).numbers() == [1, 2, 3]


# --- the 90-day floor ----------------------------------------------------------------------------


def test_every_version_of_the_last_90_days_stays_whatever_keep_says(demo_store, cli):
    layout = Layout.open(demo_store)
    pid = cli("run", "--store", str(demo_store), "--json").json["proposal_id"]
    assert cli("accept", pid, "--store", str(demo_store)).code == 0
    write(demo_store, "scratch.md", "a day's edit")
    Versions(layout).record(read_tree(demo_store), "snapshot")
    backdate(layout, 89, [1, 2, 3])  # 89 days old: inside the window
    res = cli("gc", "--keep", "1", "--store", str(demo_store), "--json")
    assert res.code == 0, res.stderr
    assert res.json["deleted_versions"] == [] and res.json["kept_versions"] == [1, 2, 3]
    for number in (1, 2, 3):
        assert cli("show", str(number), "MEMORY.md", "--store", str(demo_store)).code == 0


def test_a_window_below_90_days_is_refused_in_a_config_and_in_code(demo_store, cli):
    layout = Layout.open(demo_store)
    Versions(layout).record(read_tree(demo_store), "snapshot")
    (layout.dream / "config.toml").write_text("keep_days = 30\n")
    res = cli("gc", "--keep", "1", "--store", str(demo_store))
    assert res.code == 2 and len(res.stderr.strip().splitlines()) == 1 and "keep_days" in res.stderr
    with pytest.raises(BadInput, match="at least 90"):
        gc(demo_store, keep=1, keep_days=30)


# --- removed memories outlive their versions ----------------------------------------------------------

SLACK = ("---\nname: Slack alerts integration\ndescription: deploy notices via webhook\ntype: project\n---\n"
         "Deploy notices are posted to #ops through the incoming webhook.\n")
SLACK_LINE = "- [Slack alerts integration](project_slack_alerts.md) — deploy notices via webhook"


@pytest.fixture
def forgotten(tmp_path, cli):
    """A store whose Slack memory a forget request removed (run and accept), then two more versions."""
    store = tmp_path / "store"
    files = {"MEMORY.md": SLACK_LINE + "\n- [Database](project_database.md) — Postgres 15\n",
             "project_slack_alerts.md": SLACK,
             "project_database.md": "---\nname: Database\ndescription: Postgres 15\ntype: project\n---\nPostgres 15.\n",
             "logs/2026/11/20/s1-slack.md": "> forget the slack alerts integration, we retired it last week\n< ok\n"}
    for rel, text in files.items():
        (store / rel).parent.mkdir(parents=True, exist_ok=True)
        (store / rel).write_text(text)
    assert cli("run", "--store", str(store), "--engine", "offline", "--force").code == 0
    assert cli("accept", "--store", str(store)).code == 0
    assert not (store / "project_slack_alerts.md").exists()
    layout = Layout.open(store)
    for day in ("one", "two"):
        write(store, f"{day}.md", f"day {day}")
        Versions(layout).record(read_tree(store), "snapshot")
    return store


def test_a_removed_memory_stays_listed_and_restorable_after_gc_collects_its_versions(forgotten, cli):
    layout = Layout.open(forgotten)
    backdate(layout, 200)
    before = cli("removed", "--store", str(forgotten), "--json").json["removed"]
    assert {(r["kind"], r["path"]) for r in before} == {("memory", "project_slack_alerts.md"),
                                                        ("index line", "project_slack_alerts.md")}
    result = gc(forgotten, keep=1)
    assert result.kept_versions == [Versions(layout).current()] and len(result.deleted_versions) >= 2
    assert not any("project_slack_alerts.md" in Versions(layout).get(n).files for n in result.kept_versions)
    after = cli("removed", "--store", str(forgotten), "--json").json["removed"]
    assert after == before  # the same rows, why and proposal included, though their versions are gone
    res = cli("restore", "project_slack_alerts.md", "--store", str(forgotten), "--json")
    assert res.code == 0, res.stderr
    assert (forgotten / "project_slack_alerts.md").read_text() == SLACK
    assert SLACK_LINE in (forgotten / "MEMORY.md").read_text().splitlines()


def test_a_gc_killed_after_its_ledger_lists_each_removal_once_and_the_next_gc_finishes(forgotten, cli,
                                                                                        monkeypatch):
    layout = Layout.open(forgotten)
    backdate(layout, 200)
    before = cli("removed", "--store", str(forgotten), "--json").json["removed"]
    numbers = Versions(layout).numbers()

    def crash(self, number):
        raise KeyboardInterrupt("power cut before the first version was deleted")

    monkeypatch.setattr(Versions, "delete", crash)
    with pytest.raises(KeyboardInterrupt):
        gc(forgotten, keep=1)
    assert Versions(layout).numbers() == numbers  # the ledger is written, no version deleted
    assert cli("removed", "--store", str(forgotten), "--json").json["removed"] == before
    monkeypatch.undo()
    gc(forgotten, keep=1)
    assert Versions(layout).numbers() == numbers[-1:]
    assert cli("removed", "--store", str(forgotten), "--json").json["removed"] == before


def test_a_damaged_ledger_stops_gc_and_restore_with_one_line(forgotten, cli):
    layout = Layout.open(forgotten)
    backdate(layout, 200)
    gc(forgotten, keep=1)
    (layout.dream / "removed.json.gz").write_bytes(b"not gzip")
    numbers = Versions(layout).numbers()
    for args in (["gc", "--keep", "1"], ["removed"], ["restore", "project_slack_alerts.md"]):
        res = cli(*args, "--store", str(forgotten))
        assert res.code == 2 and len(res.stderr.strip().splitlines()) == 1 and "removed.json.gz" in res.stderr
    assert Versions(layout).numbers() == numbers


# --- gc after accept ------------------------------------------------------------------------------


def remember(store) -> None:
    """A new session asking to remember something: the next run proposes."""
    log = store / "logs/2026/11/21/s2-ci.md"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("> remember that CI runs on the self-hosted runners\n< ok\n")


def test_accept_collects_versions_older_than_the_window_by_itself(forgotten, cli):
    layout = Layout.open(forgotten)
    backdate(layout, 200)
    old = Versions(layout).numbers()
    remember(forgotten)
    assert cli("run", "--store", str(forgotten), "--engine", "offline", "--force").code == 0
    res = cli("accept", "--store", str(forgotten), "--json")
    assert res.code == 0, res.stderr
    left = Versions(layout).numbers()
    assert old[-1] in left and not set(old[:-1]) & set(left)  # the version in force 90 days ago stays
    assert left[-1] == res.json["version"]
    assert Blobs(layout).loose() == {}  # what is kept is packed
    assert cli("restore", "project_slack_alerts.md", "--store", str(forgotten)).code == 0


def test_auto_gc_off_leaves_every_version(forgotten, cli):
    layout = Layout.open(forgotten)
    (layout.dream / "config.toml").write_text("auto_gc = false\n")
    backdate(layout, 200)
    old = Versions(layout).numbers()
    remember(forgotten)
    assert cli("run", "--store", str(forgotten), "--engine", "offline", "--force").code == 0
    assert cli("accept", "--store", str(forgotten)).code == 0
    assert set(old) <= set(Versions(layout).numbers())


def test_an_auto_gc_that_cannot_run_warns_and_the_accept_stands(forgotten, cli):
    layout = Layout.open(forgotten)
    backdate(layout, 200)
    remember(forgotten)
    assert cli("run", "--store", str(forgotten), "--engine", "offline", "--force").code == 0
    old = Versions(layout).numbers()
    (layout.dream / "removed.json.gz").write_bytes(b"damaged")  # gc needs the ledger: it refuses
    res = cli("accept", "--store", str(forgotten), "--json")
    assert res.code == 0 and res.json["status"] == "accepted"
    assert "automatic gc skipped" in res.stderr and "removed.json.gz" in res.stderr
    assert Versions(layout).numbers() == [*old, res.json["version"]]
