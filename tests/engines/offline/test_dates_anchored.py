"""Relative dates are made absolute only from a date that certainly anchors them, in the words of the language
they were said in; anything else is left as written and put to a person (issue 36 item 5; wording of their own)."""

from __future__ import annotations

from datetime import date

import pytest

from dream.engines.offline import dates
from helpers.offline_engine import run, sessions, topic

WEDNESDAY = date(2026, 9, 16)


@pytest.mark.parametrize("said, written", [
    ("de sprintdemo is morgen", "de sprintdemo is op 2026-09-17"),  # Dutch: "op", never German "am"
    ("gisteren is de release van de app gemaakt", "op 2026-09-15 is de release van de app gemaakt"),
    ("ab morgen gilt der Freeze für die App", "ab 2026-09-17 gilt der Freeze für die App"),  # German still German
    ("the freeze starts morgen", "the freeze starts morgen"),  # Dutch or German? neither is written
    ("Heute Morgen ist der Build auf dem CI rot", "Heute Morgen ist der Build auf dem CI rot"),  # this morning
])
def test_a_word_two_languages_share_is_written_in_the_one_the_line_reads_as(said, written):
    assert dates.rewrite_line(said, WEDNESDAY)[0] == written


def test_the_sentence_a_request_was_taken_from_tells_the_language_of_a_shared_word():
    assert dates.rewrite_line("demo morgen", WEDNESDAY, said="onthoud: demo morgen")[0] == "demo op 2026-09-17"
    assert dates.rewrite_line("demo morgen", WEDNESDAY, said="merk dir: demo morgen")[0] == "demo am 2026-09-17"


@pytest.mark.parametrize("said, written", [
    ("we switched the queue to kafka today", "we switched the queue to kafka on 2026-09-16"),  # an event
    ("the load test runs today", "the load test runs on 2026-09-16"),  # a plan
    ("the old endpoints are the ones in use today", "the old endpoints are the ones in use as of 2026-09-16"),
    ("tomorrow is the cut-off for the vendor forms", "2026-09-17 is the cut-off for the vendor forms"),
    ("we rotate the certs tonight", "we rotate the certs on 2026-09-16"),
])
def test_today_is_as_of_only_for_a_state_and_a_date_as_subject_is_bare(said, written):
    assert dates.rewrite_line(said, WEDNESDAY)[0] == written


@pytest.mark.parametrize("said, left", [
    ("the queue filled up two weeks ago or so", "two weeks ago"),
    ("the failover drill is tomorrow afternoon", "tomorrow"),
    ("der Cutover ist morgen früh", "morgen"),
    ("we rebuilt the index around yesterday", "yesterday"),
    ("it's 1am here and the index broke yesterday", "yesterday"),  # the calendar day or the one before?
])
def test_a_hedged_date_or_a_part_of_a_day_is_left_as_written_and_named(said, left):
    text, rewritten, unresolved = dates.rewrite_line(said, WEDNESDAY)
    assert text == said and rewritten == [] and [u.phrase for u in unresolved] == [left]


@pytest.mark.parametrize("said, word", [
    ("el broker se reinició hace cuatro días", "días"),
    ("le broker a redémarré il y a quatre jours", "jours"),
    ("der Broker lief vor vier Tagen neu an", "Tagen"),
    ("브로커는 나흘 전에, 출시는 세 달 뒤", "달 뒤"),
    ("四天前重启了消息队列", "天前"),
])
def test_a_relative_date_no_row_reads_is_named_and_left(said, word):
    text, rewritten, unresolved = dates.rewrite_line(said, WEDNESDAY)
    assert text == said and rewritten == [] and any(u.phrase.startswith(word) for u in unresolved)


def test_a_line_or_heading_dated_otherwise_than_the_file_is_left_as_written():
    lines = ["## 2026-09-02", "- the queue stalled yesterday", "## notes", "- 2026-09-09: broker restarted yesterday",
             "- the queue stalled yesterday"]
    out, rewritten, unresolved = dates.rewrite_lines(lines, WEDNESDAY)
    assert out[:4] == lines[:4] and out[4] == "- the queue stalled on 2026-09-15"
    assert [(u.line, u.phrase) for u in unresolved] == [(1, "yesterday"), (3, "yesterday")]
    assert [(r.line, r.absolute) for r in rewritten] == [(4, "2026-09-15")]


def test_relative_dates_of_a_memory_no_one_date_anchors_are_each_put_to_a_person(tmp_path):
    tree = {
        "MEMORY.md": "- [Q](queue.md) — q\n- [B](broker.md) — b\n".encode(),
        "queue.md": topic("queue", "q", "project", "The queue stalled yesterday.", created="2026-09-01",
                          updated="2026-09-10"),
        "broker.md": topic("broker", "b", "project", "Broker restarts in zwei Wochen."),
    }
    out, result = run(tmp_path, tree)
    assert out == tree
    assert any(n.startswith("queue.md line 9: “yesterday” left as written: its dates disagree") for n in
               result.needs_person)
    assert any(n.startswith("broker.md line 7: “Wochen” left as written: no source date") for n in result.needs_person)


@pytest.mark.parametrize("said", [
    "pinned at commit 7be21c0d: pin the base image, unpin tomorrow",
    "ran git commit -m skip the flaky test until tomorrow",
])
def test_a_commit_message_keeps_its_own_words(said):
    assert dates.rewrite_line(said, WEDNESDAY) == (said, [], [])


def test_a_memory_with_no_date_counts_from_the_one_day_of_the_session_that_wrote_it(tmp_path):
    origin = "5d2e8c41-7a3b-4f90-b1c6-2e9d8f7a6b54"
    tree = {"MEMORY.md": "- [Q](queue.md) — q\n".encode(),
            "queue.md": topic("queue", "q", "project", "The queue was drained yesterday.", originSessionId=origin)}
    out, _ = run(tmp_path, tree, sessions((origin, WEDNESDAY, "user", "looks fine, thanks")))
    assert "The queue was drained on 2026-09-15." in out["queue.md"].decode()
    out, result = run(tmp_path / "other", tree, sessions(("another", WEDNESDAY, "user", "looks fine, thanks")))
    assert out["queue.md"] == tree["queue.md"] and any("“yesterday”" in n for n in result.needs_person)
