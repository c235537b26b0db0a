"""Nothing said is lost across nights: notes for a person outlive the run that wrote them (dream.notes).

Each test drives `dream` as a person does: a night (`dream run`), then
`dream status`, `dream report`, `dream diff`, `dream notes`, `dream review`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from helpers.cli import assert_one_line_error
from helpers.git_project import commit, git, write

from dream.store.layout import Layout

DAY = 86_400.0

MEMORY = "# Memory\n\n- [Build cache](reference_build_cache.md) — remote cache at cache.corp.test:9092\n"
TOPIC = ("---\nname: Build cache\ndescription: remote cache at cache.corp.test:9092\ntype: reference\n---\n\n"
         "The remote build cache answers at cache.corp.test:9092; warm it before a release.\n")
NO_MATCH = "> please forget the note about the tuesday standup rota\n< sure\n"
DOUBTFUL = "> remember that the nightly export probably runs at 02:40 UTC\n< ok\n"


def a_store(root: Path, logs: dict[str, str]) -> Path:
    """A store of one memory and the given session logs (session id -> log text), all on 2026-11-20."""
    root.mkdir(parents=True)
    (root / "MEMORY.md").write_text(MEMORY)
    (root / "reference_build_cache.md").write_text(TOPIC)
    add_logs(root, logs, day="20")
    return root


def add_logs(root: Path, logs: dict[str, str], day: str) -> None:
    folder = root / "logs" / "2026" / "11" / day
    folder.mkdir(parents=True, exist_ok=True)
    for session, text in logs.items():
        (folder / f"{session}-talk.md").write_text(text)


def night(cli, store: Path) -> dict:
    result = cli("run", "--store", str(store), "--engine", "offline", "--force", "--json")
    assert result.code == 0, result.stderr
    return result.json


def open_notes(cli, store: Path) -> list[dict]:
    result = cli("notes", "--store", str(store), "--json")
    assert result.code == 0, result.stderr
    return result.json["shown"]


def test_a_noop_night_keeps_its_note_and_every_view_shows_it_until_answered(cli, tmp_path):
    store = a_store(tmp_path / "memory", {"s31": NO_MATCH})

    first = cli("run", "--store", str(store), "--engine", "offline", "--force").stdout
    status = cli("status", "--store", str(store), "--json").json["notes"]
    human = cli("status", "--store", str(store)).stdout
    report = cli("report", "--root", str(tmp_path), "--json").json

    assert first.startswith("noop") and "1 note(s) for a person, kept until answered" in first
    assert f"notes --store {store}" in first
    [note] = status["shown"]
    assert status["open"] == 1 and note["kind"] == "request"
    assert "tuesday standup rota" in note["text"] and (note["session"], note["date"], note["line"]) == (
        "s31", "2026-11-20", 1)
    assert "needs a person   1 open note(s)" in human and "tuesday standup rota" in human
    assert f"notes dismiss {note['id']} --store {store.resolve()}" in human
    assert [row["needs_person"] for row in report["stores"]] == [1] and report["total"]["needs_person"] == 1
    assert [run["needs_person"] for run in cli("history", "--store", str(store), "--json").json["runs"]] == [1]
    table = cli("report", "--root", str(tmp_path), env={"COLUMNS": "250"}).stdout
    assert "needs a person" in table

    # the next night proposes something else: its proposal carries the note still open from the first
    add_logs(store, {"s32": "> forget the build cache note, we dropped the remote cache\n< done\n"}, day="21")
    second = night(cli, store)
    diff = cli("diff", "--store", str(store), "--json").json
    markdown = cli("diff", "--store", str(store)).stdout
    page = tmp_path / "review.html"
    assert cli("diff", "--store", str(store), "--html", str(page)).code == 0

    assert second["status"] == "proposed"
    assert [n["id"] for n in diff["report"]["notes"]] == [note["id"]]
    assert "Still open from earlier nights (1)" in markdown and "tuesday standup rota" in markdown
    html = page.read_text()
    assert 'id="open-notes"' in html and "tuesday standup rota" in html
    assert f"dream notes dismiss {note['id']} --store {store.resolve()}" in html


def test_the_overview_page_lists_a_quiet_stores_notes_with_the_commands_that_answer_them(cli, tmp_path):
    quiet = a_store(tmp_path / "root" / "-work-quiet" / "memory", {"s33": DOUBTFUL})
    a_store(tmp_path / "root" / "-work-silent" / "memory", {})
    night(cli, quiet)
    overview = tmp_path / "overview.html"

    result = cli("status", "--root", str(tmp_path / "root"), "--html", str(overview), "--json")

    assert result.code == 0, result.stderr
    html = overview.read_text()
    [section] = re.findall(r'<section class="store-notes".*?</section>', html, re.S)
    assert str(quiet.resolve()) in section and "02:40 UTC" in section
    assert f"dream notes take 1 --store {quiet.resolve()}" in section
    assert f"dream notes dismiss 1 --store {quiet.resolve()}" in section


def test_the_same_note_read_again_is_one_note_and_said_again_in_a_later_session_is_a_new_one(cli, tmp_path):
    store = a_store(tmp_path / "memory", {"s41": NO_MATCH})
    night(cli, store)

    # the log grows (the session went on): it is read again, and the engine writes the same note again
    log = next(store.glob("logs/**/s41-talk.md"))
    log.write_text(NO_MATCH + "> thanks\n< anytime\n")
    night(cli, store)
    again = open_notes(cli, store)
    add_logs(store, {"s42": NO_MATCH}, day="22")
    night(cli, store)
    later = open_notes(cli, store)

    assert len(again) == 1
    assert sorted(n["session"] for n in later) == ["s41", "s42"]


def test_a_dismissed_note_never_comes_back(cli, tmp_path):
    store = a_store(tmp_path / "memory", {"s51": NO_MATCH})
    night(cli, store)
    [note] = open_notes(cli, store)

    nothing_to_take = cli("notes", "take", str(note["id"]), "--store", str(store))
    dismissed = cli("notes", "dismiss", str(note["id"]), "--store", str(store))
    log = next(store.glob("logs/**/s51-talk.md"))
    log.write_text(NO_MATCH + "> ok, one more thing later\n")
    night(cli, store)  # reads the log again: the engine writes the same note
    twice = cli("notes", "dismiss", str(note["id"]), "--store", str(store))

    assert_one_line_error(nothing_to_take, 1, f"note {note['id']} suggests no change", "notes dismiss")
    assert_one_line_error(cli("notes", "take", "--store", str(store)), 2, "take N")
    assert_one_line_error(cli("notes", "take", "7", "--store", str(store)), 2, "no note 7")
    assert dismissed.code == 0 and "dismissed" in dismissed.stdout
    assert open_notes(cli, store) == []
    assert cli("status", "--store", str(store), "--json").json["notes"]["open"] == 0
    assert_one_line_error(twice, 1, f"note {note['id']} is already dismissed")


def test_taking_a_suggestion_makes_an_ordinary_reviewed_change_with_its_evidence(cli, tmp_path):
    store = a_store(tmp_path / "memory", {"s61": DOUBTFUL})
    assert night(cli, store)["status"] == "noop"
    [note] = open_notes(cli, store)
    listed = cli("notes", "--store", str(store)).stdout

    taken = cli("notes", "take", str(note["id"]), "--store", str(store), "--json")
    diff = cli("diff", "--store", str(store), "--json").json
    untouched = (store / "MEMORY.md").read_text()
    accepted = cli("accept", "--store", str(store))

    assert f"notes take {note['id']} --store" in listed and "suggests: remember" in listed
    assert taken.code == 0, taken.stderr
    [change] = diff["changes"]
    assert change["kind"] == "request" and change["action"] == "created"
    assert change["evidence"]["session"] == "s61" and "02:40 UTC" in change["evidence"]["sentence"]
    assert untouched == MEMORY  # taking writes a proposal, never the store
    assert_one_line_error(cli("notes", "take", str(note["id"]), "--store", str(store)), 1, "already taken")
    assert accepted.code == 0, accepted.stderr
    assert "02:40 UTC" in (store / change["path"]).read_text()
    assert change["path"] in (store / "MEMORY.md").read_text()
    assert open_notes(cli, store) == []
    [row] = cli("report", "--store", str(store), "--json").json["stores"]
    assert (row["needs_person"], row["waiting_proposal"]) == (0, None)
    add_logs(store, {"s62": "> thanks, that is all for today\n"}, day="26")
    night(cli, store)  # a night settles the taken note: its proposal was accepted
    [done] = cli("notes", "--answered", "--store", str(store), "--json").json["answered"]
    assert (done["id"], done["status"]) == (note["id"], "applied")
    assert f"#{note['id']} applied in proposal" in cli("notes", "--answered", "--store", str(store)).stdout


def test_a_suggestion_taken_while_a_proposal_waits_goes_into_it(cli, tmp_path):
    talk = "> forget the build cache note, we dropped the remote cache\n< done\n" + DOUBTFUL
    store = a_store(tmp_path / "memory", {"s71": talk})
    first = night(cli, store)
    [note] = open_notes(cli, store)

    taken = cli("notes", "take", str(note["id"]), "--store", str(store), "--json").json
    proposals = cli("proposals", "--store", str(store), "--json").json["proposals"]
    diff = cli("diff", "--store", str(store), "--json").json

    assert first["status"] == "proposed" and taken["replaced"] == first["proposal_id"]
    assert [p["id"] for p in proposals if p["status"] == "pending"] == [taken["proposal_id"]]
    assert {c["action"] for c in diff["changes"]} == {"forgotten", "created"}
    assert cli("accept", "--store", str(store)).code == 0
    assert not (store / "reference_build_cache.md").exists()
    assert "02:40 UTC" in (store / taken["change"]["path"]).read_text()


def test_review_takes_a_suggestion_with_one_key(cli, tmp_path):
    store = a_store(tmp_path / "memory", {"s81": DOUBTFUL})
    night(cli, store)

    result = cli("review", "--store", str(store), input="t\na\ny\n")

    assert result.code == 0, result.stderr
    assert "suggests: remember" in result.stdout and "accepted" in result.stdout
    assert "02:40 UTC" in (store / "MEMORY.md").read_text()
    assert open_notes(cli, store) == []


def test_review_dismisses_or_leaves_a_note_with_one_key_and_then_says_no_proposal_waits(cli, tmp_path):
    later = "> remember that the audit export maybe moves to 03:15 UTC\n< ok\n"
    store = a_store(tmp_path / "memory", {"s82": DOUBTFUL, "s83": later})
    night(cli, store)

    result = cli("review", "--store", str(store), input="n\nd\n")

    assert result.code == 2 and "no pending proposal" in result.stderr
    assert [n["session"] for n in open_notes(cli, store)] == ["s82"]


def test_notes_older_than_the_fold_age_fold_into_a_count_and_dream_notes_lists_them(cli, tmp_path):
    store = a_store(tmp_path / "memory", {"s91": NO_MATCH})
    night(cli, store)
    backdate_notes(store, days=45)
    add_logs(store, {"s92": DOUBTFUL}, day="23")
    night(cli, store)

    status = cli("status", "--store", str(store), "--json").json["notes"]
    human = cli("status", "--store", str(store)).stdout
    every = open_notes(cli, store)

    assert (status["open"], status["folded"], status["fold_days"]) == (2, 1, 30)
    assert [n["session"] for n in status["shown"]] == ["s92"]
    assert "1 older open note(s) (over 30 days) folded" in human and f"notes --store {store.resolve()}" in human
    assert sorted(n["session"] for n in every) == ["s91", "s92"]  # none deleted unread
    (store / ".dream" / "config.toml").write_text("notes_fold_days = 60\n")
    assert cli("status", "--store", str(store), "--json").json["notes"]["folded"] == 0


def backdate_notes(store: Path, days: float) -> None:
    """Make every note look first written `days` days ago (the fold age is weeks; tests cannot wait)."""
    ledger = Layout(store.resolve()).dream / "notes.json"
    body = json.loads(ledger.read_text())
    for note in body["notes"]:
        note["first_seen"] -= days * DAY
    ledger.write_text(json.dumps(body))


def test_notes_are_redacted_before_they_are_kept(cli, tmp_path):
    secret = "ghp_" + "Z7q" * 12
    store = a_store(tmp_path / "memory", {"s93": f"> forget the note about the deploy token {secret}\n< ok\n"})
    night(cli, store)

    kept = (store / ".dream" / "notes.json").read_text()

    assert secret not in kept and "REDACTED" in kept
    assert "deploy token" in kept


def test_a_damaged_ledger_is_one_line_naming_it(cli, tmp_path):
    store = a_store(tmp_path / "memory", {"s94": NO_MATCH})
    night(cli, store)
    (store / ".dream" / "notes.json").write_text('{"format": 1, "notes": [{"id": "one"}]}')
    next(store.glob("logs/**/s94-talk.md")).write_text(NO_MATCH + "> and the rota too\n")  # a night with news

    for args in (["notes"], ["status"], ["run", "--engine", "offline", "--force"]):
        assert_one_line_error(cli(*args, "--store", str(store)), 2, "notes.json")
    report = cli("report", "--root", str(tmp_path), "--json")  # one store's damage never ends a fleet's report
    assert report.code == 0 and [r["needs_person"] for r in report.json["stores"]] == [None]
    (store / ".dream" / "notes.json").write_text('{"format": 9, "notes": []}')  # a newer dream's ledger
    assert_one_line_error(cli("notes", "--store", str(store)), 2, "notes.json", "format 9", "newer dream")
    (store / ".dream" / "notes.json").rename(store / "notes.json.damaged")
    night(cli, store)  # the refused night consumed nothing: its log is read again, its note comes back
    assert [n["session"] for n in open_notes(cli, store)] == ["s94"]


def test_requests_come_first_so_thirty_lint_findings_never_bury_one(cli, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q")
    write(project, {"src/app.py": "print('hi')\n"})
    commit(project, "one file")
    store = tmp_path / "memory"
    store.mkdir()
    cited = "".join(f"- `src/gone_{n}.py` holds part {n} of the importer.\n" for n in range(30))
    (store / "MEMORY.md").write_text("# Memory\n\n- [Importer](project_importer.md) — where the importer lives\n")
    (store / "project_importer.md").write_text(
        "---\nname: Importer\ndescription: where the importer lives\ntype: project\n---\n\n" + cited)
    (store / ".dream").mkdir()
    (store / ".dream" / "config.toml").write_text(f'project = "{project}"\n')
    add_logs(store, {"s95": NO_MATCH}, day="24")
    night(cli, store)

    shown = cli("status", "--store", str(store), "--json").json["notes"]["shown"]
    human = cli("status", "--store", str(store)).stdout

    kinds = [n["kind"] for n in shown]
    assert kinds.count("lint") == 30 and kinds[0] == "request"
    assert human.index("request (1)") < human.index("lint (30)")
    assert "… 25 more lint note(s)" in human and human.count("stale claim") == 5  # `dream notes` lists all 30


def test_a_later_night_carries_a_taken_change_and_a_rejected_one_is_asked_again(cli, tmp_path):
    store = a_store(tmp_path / "memory", {"s96": DOUBTFUL})
    night(cli, store)
    [note] = open_notes(cli, store)
    assert cli("notes", "take", str(note["id"]), "--store", str(store)).code == 0

    # a later night proposes again: its proposal replaces the one holding the taken change, and holds it too
    add_logs(store, {"s97": "> forget the build cache note, we dropped the remote cache\n< done\n"}, day="25")
    assert night(cli, store)["status"] == "proposed"
    changes = cli("diff", "--store", str(store), "--json").json["changes"]
    assert open_notes(cli, store) == []
    assert {c["action"] for c in changes} == {"forgotten", "created"}
    assert any(c["reason"].startswith(f"a person took note {note['id']}") for c in changes)

    # that proposal is rejected: the person's answer went with it, so the next night asks again
    assert cli("reject", "--store", str(store)).code == 0
    night(cli, store)
    assert [n["id"] for n in open_notes(cli, store)] == [note["id"]]


def test_notes_taken_one_after_the_other_are_all_accepted_together(cli, tmp_path):
    second = "> remember that the audit export maybe moves to 03:15 UTC\n< ok\n"
    store = a_store(tmp_path / "memory", {"s98": DOUBTFUL, "s99": second})
    night(cli, store)
    numbers = [n["id"] for n in open_notes(cli, store)]

    for number in numbers:
        assert cli("notes", "take", str(number), "--store", str(store)).code == 0
    assert cli("accept", "--store", str(store)).code == 0
    night(cli, store)

    assert len(numbers) == 2 and open_notes(cli, store) == []
    index = (store / "MEMORY.md").read_text()
    assert "02:40 UTC" in index and "03:15 UTC" in index
