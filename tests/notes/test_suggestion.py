"""What a note suggests, read from its words, and that change made exactly or not at all (dream.notes.suggestion)."""

from __future__ import annotations

from datetime import date

import pytest

from dream.errors import Refused
from dream.notes import NoteKind, kind_of, note_key
from dream.notes.suggestion import Action, Suggestion, apply, sentence_of, suggestion_of

TODAY = date(2026, 11, 30)
INDEX = ("# Memory\n\n- [Queue](project_queue.md) — broker on port 5671\n"
         "- [Wiki](reference_wiki.md) — handbook at wiki.corp.test\n")
QUEUE = ("---\nname: Queue\ndescription: broker on port 5671\ntype: project\n---\n\n"
         "The broker listens on port 5671; its admin UI is at mq-5671.corp.test.\n")
WIKI = "---\nname: Wiki\ndescription: handbook at wiki.corp.test\ntype: reference\n---\n\nThe handbook.\n"
TREE = {"MEMORY.md": INDEX.encode(), "project_queue.md": QUEUE.encode(), "reference_wiki.md": WIKI.encode()}


@pytest.mark.parametrize("text, expected", [
    ("“drop the wiki note” (session s3, 2026-11-02, line 7): forget `reference_wiki.md`?",
     Suggestion(Action.FORGET, path="reference_wiki.md")),
    ("“broker moved to 5672” (session s3, 2026-11-02, line 9): in `project_queue.md`, 5671 → 5672?",
     Suggestion(Action.REPLACE, path="project_queue.md", old="5671", new="5672")),
    ("… may ask to remember something, but its intent is not plain; not filed. Candidate memory: “the VPN is vpn3.corp.test”",
     Suggestion(Action.REMEMBER, text="the VPN is vpn3.corp.test")),
    ("“the wiki notes can go” (session s3, 2026-11-02, line 8) may ask to change memory; nothing changed. "
     "Suggested change: forget `reference_wiki.md`?", Suggestion(Action.FORGET, path="reference_wiki.md")),
    ("“5671 → 5672” (session s3, 2026-11-02, line 9) may ask to change memory; nothing changed. "
     "Suggested change: 5671 → 5672 in which of `a.md`, `b.md`?", None),
    ("forget “the queue” (session s3, 2026-11-02, line 4): several memories match equally well (a.md, b.md); "
     "nothing removed", None),
])
def test_a_suggestion_is_read_from_the_notes_words(text, expected):
    assert suggestion_of(text) == expected


def test_kinds_rank_requests_before_dates_memories_and_lint():
    assert kind_of("stale claim: project_x.md:3: `src/a.py` is not in the tree at 3a068cd") == NoteKind.LINT
    assert kind_of("“next Friday” in “ship it next Friday” (session s1, Monday 2026-11-02) may be 2026-11-06 or "
                   "2026-11-13: left as written; write the date it means") == NoteKind.DATE
    assert kind_of("forget “x” (session s1, 2026-11-02, line 3): no memory matches; nothing removed") == NoteKind.REQUEST
    assert kind_of("a.md and b.md contradict each other (91% alike): keep which?") == NoteKind.MEMORY
    assert kind_of("`a.md` and `b.md` look alike (similarity 65%): merge?") == NoteKind.LINT  # ranks last
    assert list(NoteKind) == [NoteKind.REQUEST, NoteKind.DATE, NoteKind.MEMORY, NoteKind.LINT]


def test_a_note_written_again_with_another_commit_is_the_same_note_and_another_session_is_not():
    said = "forget “x” (session s1, 2026-11-02, line 3): no memory matches"
    assert note_key("stale claim: a.md:1: `b.py` is not in the tree at 3a068cd") == \
        note_key("stale claim: a.md:1: `b.py` is not in the tree at 9f1e2d4")
    assert note_key(said) != note_key(said.replace("session s1", "session s2"))
    uuid = "forget “x” (session 9f0e0000-0000-4000-8000-00000000000{}, 2026-11-02, line 3): no memory matches"
    assert note_key(uuid.format(1)) != note_key(uuid.format(2))
    assert sentence_of(said) == "x"


def test_forget_removes_the_file_and_its_index_line():
    tree, path, _ = apply(Suggestion(Action.FORGET, path="reference_wiki.md"), TREE, TODAY)

    assert path == "reference_wiki.md" and "reference_wiki.md" not in tree
    assert "wiki" not in tree["MEMORY.md"].decode() and "project_queue.md" in tree["MEMORY.md"].decode()


def test_replace_changes_whole_tokens_only_never_inside_a_host_name():
    tree, _, detail = apply(Suggestion(Action.REPLACE, path="project_queue.md", old="5671", new="5672"), TREE, TODAY)

    topic = tree["project_queue.md"].decode()
    assert "listens on port 5672" in topic and "mq-5671.corp.test" in topic
    assert "description: broker on port 5672" in topic
    assert "broker on port 5672" in tree["MEMORY.md"].decode()
    assert detail.startswith("2 place(s)")


@pytest.mark.parametrize("suggestion, why", [
    (Suggestion(Action.REPLACE, path="project_queue.md", old="corp", new="prod"), "as a whole word"),
    (Suggestion(Action.FORGET, path="project_gone.md"), "no such memory file"),
])
def test_a_change_that_no_longer_fits_changes_nothing(suggestion, why):
    with pytest.raises(Refused, match=why):
        apply(suggestion, TREE, TODAY)


def test_remember_files_a_memory_and_indexes_it_within_the_line_limit():
    long = "the release train leaves every second Thursday " + "and the freeze starts the Monday before " * 4
    tree, path, _ = apply(Suggestion(Action.REMEMBER, text=long), TREE, TODAY)

    assert path.startswith("project_the_release_train") and "every second Thursday" in tree[path].decode()
    [line] = [line for line in tree["MEMORY.md"].decode().splitlines() if path in line]
    assert len(line) <= 150
