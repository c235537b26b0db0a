"""The scorecard tells four endings apart (passed, wrong, noted, silent), counts chatter put before a
person, and shows a blind set only as counts per category."""

from __future__ import annotations

import json
from pathlib import Path

from dream.eval import evaluate, load_cases
from dream.eval.said import quoted_entries, user_entries
from dream.eval.scorecard import Ending
from helpers.cli import in_process

STORE = """
    store:
      MEMORY.md: |
        - [Grafana](reference_grafana.md) — dashboards on grafana.internal
      reference_grafana.md: |
        ---
        name: Grafana
        description: dashboards on grafana.internal
        type: reference
        ---
        Latency dashboards live on grafana.internal/d/latency.
"""


def case(case_id: str, said: str, expect: list[str], extra: str = "") -> str:
    checks = "".join(f"      - {check}\n" for check in expect)
    return (f"  - id: {case_id}\n{extra}{STORE}    logs:\n      - date: 2026-11-20\n        text: |\n"
            f"          > {said}\n          < Okay.\n    expect:\n{checks}")


def write(folder: Path, category: str, *cases: str) -> Path:
    folder.mkdir(exist_ok=True)
    (folder / f"{category}.yaml").write_text(f"category: {category}\ncases:\n" + "".join(cases), encoding="utf-8")
    return folder


# A forget of a memory the store does not hold: the engine asks a person, quoting the sentence.
NOTED = case("noted", "please forget the note about the Kafka consumer lag alerts", ["gone: reference_grafana.md"])
# Nothing in this line asks for anything the engine reads or notices (no "now", "these days", arrow or memory
# word: "… these days" reaches a person as a change said): nobody is told.
SILENT = case("silent", "the dashboards are on grafana.example.org",
              ["contains: {file: reference_grafana.md, text: grafana.example.org}"])
PASSED = case("passed-case", "forget the grafana dashboards", ["gone: reference_grafana.md"])
WRONG = case("wrong", "forget the grafana dashboards", ["exists: reference_grafana.md"])
CHATTER = case("chit-chat", "lol the build is green again, nice", ["no_changes: true"])


def test_each_case_ends_one_of_four_ways(tmp_path):
    card = evaluate(write(tmp_path / "cases", "mixed", NOTED, SILENT, PASSED, WRONG), "offline")
    assert {r.id: r.ending for r in card.results} == {
        "noted": Ending.NOTED, "silent": Ending.SILENT, "passed-case": Ending.PASSED, "wrong": Ending.WRONG}
    overall = card.to_json()["overall"]
    assert (overall["passed"], overall["cases_with_wrong_changes"], overall["silent"], overall["noted"]) == (1, 1, 1, 1)


def test_chatter_counts_its_lines_and_those_put_before_a_person(tmp_path):
    noisy = case("noisy", "please forget the note about the Kafka consumer lag alerts", ["no_changes: true"],
                 extra="    chatter: true\n")
    card = evaluate(write(tmp_path / "cases", "chatter", CHATTER, noisy), "offline")
    scores = card.to_json()["overall"]
    assert scores["chatter_cases"] == 2 and scores["chatter_lines"] == 2
    assert scores["chatter_lines_noted"] == 1 and scores["chatter_noted_percent"] == 50.0
    assert scores["chatter_files_changed"] == 0


def test_a_case_expecting_a_note_is_not_chatter_unless_it_says_so(tmp_path):
    asked = case("asked", "maybe forget grafana?", ["no_changes: true", "needs_person: grafana"])
    opted_out = case("hedged", "maybe we should drop the grafana note", ["no_changes: true"],
                     extra="    chatter: false\n")
    cases = load_cases(write(tmp_path / "cases", "c", CHATTER, asked, opted_out))
    assert [c.chatter for c in cases] == [True, False, False]
    (tmp_path / "cases" / "c.yaml").write_text("category: c\nchatter: false\ncases:\n" + CHATTER, encoding="utf-8")
    assert [c.chatter for c in load_cases(tmp_path / "cases")] == [False]  # the file's default


def test_user_entries_and_the_notes_that_quote_them():
    log = "> first line\nstill the first entry\n< assistant reply\n. tool output\n> port: 8080 → 8081 please\n"
    entries = user_entries(log)
    assert entries == ["first line still the first entry", "port: 8080 → 8081 please"]
    notes = ["“port: 8080 → 8081…” (session s001, 2026-11-20, line 3): no memory states “8080”"]
    assert quoted_entries(entries, notes) == [False, True]
    assert quoted_entries(["forget about the cache settings entirely"], ["“cache” is in two memories"]) == [False]


def test_scores_only_shows_no_case_ids_sentences_or_failures(tmp_path):
    folder = write(tmp_path / "cases", "mixed", NOTED, SILENT, PASSED)
    shown = in_process("eval", "--cases", str(folder), "--scores-only")
    assert shown.code == 0  # misses alone do not fail a scores-only run: only wrong changes do
    assert "mixed" in shown.stdout and "1/3" in shown.stdout
    for secret in ("passed-case", "kafka", "grafana", "gone:", "miss "):
        assert secret not in shown.stdout.lower()
    data = in_process("eval", "--cases", str(folder), "--scores-only", "--json").json
    assert set(data) == {"engine", "overall", "categories"} and "kafka" not in json.dumps(data).lower()
    assert data["overall"]["silent"] == 1 and data["overall"]["noted"] == 1
    assert in_process("eval", "--cases", str(write(tmp_path / "w", "w", WRONG)), "--scores-only").code == 1


def test_a_blind_wrong_change_shows_its_check_and_the_dreams_action_but_no_words(tmp_path):
    shown = in_process("eval", "--cases", str(write(tmp_path / "w", "w", WRONG)), "--scores-only")
    assert "wrong in w: exists <- request forgotten (1 case)" in shown.stdout
    assert "grafana" not in shown.stdout.lower() and "wrong" not in shown.stdout.split("wrong in w")[1].split("\n")[0][3:]
    data = in_process("eval", "--cases", str(tmp_path / "w"), "--scores-only", "--json").json
    assert data["categories"]["w"]["wrong_shapes"] == {"exists <- request forgotten": 1}


def test_a_blind_case_file_that_does_not_load_is_reported_without_its_text(tmp_path):
    folder = tmp_path / "blind"
    folder.mkdir()
    (folder / "secret.yaml").write_text("category: x\ncases:\n  - id: the-secret-id\n    steps: [dance]\n",
                                        encoding="utf-8")
    result = in_process("eval", "--blind", "--cases", str(folder))
    assert result.code == 2 and "details hidden" in result.stderr
    assert "the-secret-id" not in result.stderr + result.stdout and "dance" not in result.stderr


HOUSEKEEPING = """  - id: alike-names
    store:
      MEMORY.md: |
        - [K](feedback_kurz.md)
        - [A](feedback_aus.md)
      feedback_kurz.md: |
        ---
        name: Kurze Variablennamen
        description: keine kurzen Variablennamen wie $x, $tmp oder $cnt verwenden
        type: feedback
        ---
        Keine kurzen Variablennamen wie `$x`, `$tmp` oder `$cnt` verwenden, auch nicht in Schleifen.
      feedback_aus.md: |
        ---
        name: Variablennamen ausschreiben
        description: Variablennamen immer ausschreiben, keine kurzen Namen wie $tmp oder $cnt
        type: feedback
        ---
        Variablennamen immer ausschreiben: `$counter` statt `$cnt`, keine kurzen Namen.
    expect:
      - one_left: [feedback_kurz.md, feedback_aus.md]
"""


def test_a_housekeeping_miss_is_noted_when_a_note_names_the_files_it_expected_changed(tmp_path):
    # No user line to quote: the pair left apart is listed for a person by name, so nobody is left untold.
    card = evaluate(write(tmp_path / "cases", "duplicates", HOUSEKEEPING), "offline")
    assert [(r.ending, r.named) for r in card.results] == [(Ending.NOTED, True)]


def test_a_housekeeping_miss_nobody_is_told_of_stays_silent(tmp_path):
    unnamed = HOUSEKEEPING.replace("one_left: [feedback_kurz.md, feedback_aus.md]", "gone: feedback_aus.md")
    unnamed = unnamed.replace("description: Variablennamen immer ausschreiben, keine kurzen Namen wie $tmp oder $cnt",
                              "description: Closures bekommen einen Namen, wenn sie länger als drei Zeilen sind")
    card = evaluate(write(tmp_path / "cases", "duplicates", unnamed), "offline")
    assert [r.ending for r in card.results] == [Ending.SILENT]


def test_a_case_that_cannot_run_fails_the_scorecard_and_is_not_counted_silent(tmp_path):
    """A broken engine, phrase file or setting must not pass as a night of silent misses (a blind run exits 0
    on misses): the count of cases that could not run and the first error, exit 1."""
    broken = case("broken", "forget the grafana dashboards", ["gone: reference_grafana.md"],
                  extra="    settings:\n      similarity_threshold: not-a-number\n")
    folder = write(tmp_path / "cases", "mixed", broken, PASSED)
    shown = in_process("eval", "--cases", str(folder))
    assert shown.code == 1 and "1 case(s) could not run; first: step run" in shown.stderr, shown.stderr
    assert "similarity_threshold" in shown.stderr
    blind = in_process("eval", "--blind", "--cases", str(folder))
    assert blind.code == 1 and "1 case(s) could not run" in blind.stderr and "details hidden" in blind.stderr
    assert "grafana" not in blind.stderr + blind.stdout
