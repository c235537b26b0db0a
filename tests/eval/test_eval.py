"""`dream eval`: the case files, the checks, the scorecard and the command."""

from __future__ import annotations

from pathlib import Path

import pytest

from dream.errors import BadInput
from dream.eval import evaluate, load_cases
from dream.eval.cases import default_cases_dir
from dream.eval.checks import CHECKS, Outcome, Wrong, run_checks
from helpers.cli import in_process
from helpers.eval_cases import jenkins_case

CATEGORIES = {
    "withdrawn-hesitant", "split-redirected", "chatter-lookalikes-typed",
    "duplicates", "remember", "forget", "correction", "rules", "pointers", "orphans", "long-lines",
    "index-prose", "instructions-in-logs", "secrets", "team", "idempotence", "partial-accept",
    "chatter", "repeated", "scoped", "tasks", "questions", "corrections-said-naturally", "opposites", "memory-truth", "unseen-phrasing",
    "everyday-talk", "in-the-moment", "corrections-in-passing", "typed-fast", "look-alikes", "hedged-and-reported", "pasted", "confirmations", "irony-and-narration", "dates-in-memories",
    "take-backs", "code-switching", "conditional", "several-in-one", "forget-broad", "corrections-everyday", "dates-in-requests", "preferences",
    "polite-asks", "sweeping-remember", "emphatic", "forget-near-misses", "secrets-everyday", "self-corrections",
    "standing-instructions", "technical-content", "remember-contradicts",
    "people-change", "owner-formats", "forget-across-languages",
    "values-in-context", "across-sessions", "chatter-as-memory", "talk-about-memory", "relative-dates-cjk",
    "noticed-requests", "layout-codex", "instruction-files", "withdrawn-later", "split-narrowing", "pointing-back",
    "chatter-lookalikes", "dates-entangled", "secrets-not-filed", "stale-for-the-task",
    "noticed-diffs", "noticed-forgets", "noticed-long-sessions",
    "noticed-mid-sentence", "noticed-answers", "noticed-values", "noticed-dates", "noticed-chatter", "noticed-shapes", "withdrawn-by-dropping",
    "dates-unresolved", "split-narrowing-more", "withdrawn-more", "chatter-lookalikes-more", "dates-anchors-idioms",
    "create-certain",
}


def test_shipped_cases_cover_every_category_in_several_languages():
    cases = load_cases(default_cases_dir())
    assert {c.category for c in cases} == CATEGORIES
    assert all(sum(c.category == cat for c in cases) >= 4 for cat in CATEGORIES)
    said = " ".join(log.text for c in cases for log in c.logs)
    words = ("Olvida", "Vergiss", "oublie", "忘れて", "잊어줘", "забудь", "recuerda", "记住", "na verdade", "hatırla", "запомни")
    for word in words:
        assert word in said


def test_a_case_layout_is_named_for_the_file_or_the_case(tmp_path):
    folder = write_case(tmp_path / "cases", "category: c\nlayout: codex\ncases:\n  - id: a\n  - id: b\n"
                                             "    layout: claude-code\n")
    assert [c.layout.value for c in load_cases(folder)] == ["codex", "claude-code"]
    write_case(folder, "category: c\ncases:\n  - id: a\n    layout: cursor\n")
    with pytest.raises(BadInput, match="`layout:` is one of claude-code, codex, not 'cursor'"):
        load_cases(folder)


def write_case(folder: Path, body: str) -> Path:
    folder.mkdir(exist_ok=True)
    (folder / "one.yaml").write_text(body, encoding="utf-8")
    return folder


CASE = jenkins_case("forget", ["gone: reference_jenkins.md", "exists: feedback_tests.md"], "forget-jenkins")


def test_a_case_runs_through_the_pipeline_and_scores(tmp_path):
    card = evaluate(write_case(tmp_path / "cases", CASE), "offline")
    assert [r.passed for r in card.results] == [True]
    assert card.to_json()["categories"] == {"forget": {
        "passed": 1, "total": 1, "percent": 100.0, "wrong_changes": 0, "cases_with_wrong_changes": 0,
        "silent": 0, "noted": 0, "misses": 0, "files_changed": 2,  # the forgotten memory and the index
        "wrong_shapes": {},
        "chatter_cases": 0, "chatter_files_changed": 0, "chatter_lines": 0, "chatter_lines_noted": 0,
        "chatter_noted_percent": 0.0}}


def test_a_failing_expectation_fails_the_case(tmp_path):
    card = evaluate(write_case(tmp_path / "cases", CASE.replace("gone: reference_jenkins.md",
                                                                "exists: reference_jenkins.md")), "offline")
    assert card.results[0].failures == ["exists: reference_jenkins.md is not in the store"]
    assert card.results[0].wrong == card.results[0].failures  # a memory removed that should stay
    assert card.rows()[-1] == ["overall", "0/1", "0.0%", "1", "0", "0", "0", "2", "-"]


def test_a_miss_is_scored_apart_from_a_wrong_change(tmp_path):
    card = evaluate(write_case(tmp_path / "cases", CASE.replace("gone: reference_jenkins.md",
                                                                "gone: feedback_tests.md")), "offline")
    result = card.results[0]
    assert result.wrong == []
    assert result.misses == ["gone: feedback_tests.md is still in the store"]
    failed = in_process("eval", "--cases", str(tmp_path / "cases"))
    assert failed.code == 1 and "MISS forget/forget-jenkins" in failed.stdout


def test_cases_may_name_one_file(tmp_path):
    one = write_case(tmp_path / "cases", CASE) / "one.yaml"
    card = in_process("eval", "--cases", str(one), "--json")
    assert card.code == 0 and [c["id"] for c in card.json["cases"]] == ["forget-jenkins"]
    (tmp_path / "notes.txt").write_text("not a case")
    refused = in_process("eval", "--cases", str(tmp_path / "notes.txt"))
    assert refused.code == 2 and "no eval case files" in refused.stderr and "Traceback" not in refused.stderr


def _known(case: str, known_miss: str) -> str:
    return case.replace("    store:\n", f"    known_miss: {known_miss}\n    store:\n", 1)


def test_a_known_miss_is_still_counted_but_does_not_fail_the_run(tmp_path):
    missed = CASE.replace("gone: reference_jenkins.md", "gone: feedback_tests.md")
    write_case(tmp_path / "cases", _known(missed, "{offline: the request names another memory}"))
    card = in_process("eval", "--cases", str(tmp_path / "cases"), "--json").json
    assert card["overall"]["misses"] == 1 and card["overall"]["passed"] == 0
    assert card["cases"][0]["known_miss"] == "the request names another memory"
    shown = in_process("eval", "--cases", str(tmp_path / "cases"))
    assert shown.code == 0 and "MISS (known: the request names another memory) forget/forget-jenkins" in shown.stdout


@pytest.mark.parametrize("known_miss", ["{claude: only the model reads this}", "a reason for every engine"])
def test_a_known_miss_never_excuses_a_wrong_change_nor_another_engines_miss(tmp_path, known_miss):
    wrong = CASE.replace("gone: reference_jenkins.md", "exists: reference_jenkins.md")
    write_case(tmp_path / "cases", _known(wrong, known_miss))
    assert in_process("eval", "--cases", str(tmp_path / "cases")).code == 1
    if known_miss.startswith("{claude"):
        missed = CASE.replace("gone: reference_jenkins.md", "gone: feedback_tests.md")
        write_case(tmp_path / "cases", _known(missed, known_miss))
        assert in_process("eval", "--cases", str(tmp_path / "cases")).code == 1


@pytest.mark.parametrize("body, message", [
    ("category: x\ncases: 3\n", "needs `category:` and a list under `cases:`"),
    ("category: x\ncases:\n  - id: a\n    expect: [{bogus: 1}]\n", "unknown check"),
    ("category: x\ncases:\n  - id: a\n    steps: [dance]\n", "unknown step"),
    ("category: x\ncases:\n  - id: a\n    logs: [{date: someday, text: hi}]\n", "is not a date"),
    ("category: [x\n", "cannot read eval cases"),
    ("category: x\ncases:\n  - id: a\n    known_miss: [1]\n", "is a reason, or a map"),
    ("category: x\ncases:\n  - id: a\n    instructions: [CLAUDE.md]\n", "maps instruction file paths"),
    ("category: x\ncases:\n  - id: a\n    instructions: {../CLAUDE.md: x}\n", "is not a path inside"),
    ("category: x\ncases:\n  - id: a\n    instructions: {~root/CLAUDE.md: x}\n", "is not a path inside"),
])
def test_bad_case_files_are_named_in_one_line(tmp_path, body, message):
    folder = write_case(tmp_path / "cases", body)
    with pytest.raises(BadInput, match=message):
        load_cases(folder)
    result = in_process("eval", "--cases", str(folder))
    assert result.code == 2 and message.split("`")[0] in result.stderr and "Traceback" not in result.stderr


def outcome(**after: str) -> Outcome:
    before = {"MEMORY.md": "- [A](a.md) — Postgres 15\n", "a.md": "Production runs Postgres 15.\n"}
    return Outcome(before=before, after=after or dict(before))


def test_checks_hold_and_fail():
    o = outcome(**{"MEMORY.md": "- [A](a.md) — Postgres 16\nSee [gone](gone.md).\n",
                   "a.md": "Production runs Postgres 16 (was Postgres 15 until 2026-11-20).\n"})
    assert CHECKS["not_current"](o, "Postgres 15") is None
    assert CHECKS["not_current"](outcome(), "Postgres 15") is not None
    assert "gone.md" in CHECKS["pointers_ok"](o, True)
    assert CHECKS["new_files"](o, 0) is None
    slug = outcome(**{"MEMORY.md": "- [feedback-use-keys](feedback-use-keys.md)\n"})
    assert CHECKS["titles_clean"](slug, True) is not None
    assert CHECKS["titles_clean"](o, True) is None
    assert run_checks(o, [{"index_has": "Postgres 16"}, {"index_lacks": "Postgres 16"}]) == [
        "index_lacks: MEMORY.md still says 'Postgres 16'"]


def test_a_fact_lost_is_wrong_and_a_fact_never_saved_is_a_miss():
    lost = run_checks(outcome(**{"MEMORY.md": "- [A](a.md) — the database\n", "a.md": "Production.\n"}),
                      [{"anywhere": "Postgres 15"}])
    assert lost == ["anywhere: no memory file says 'Postgres 15' any more"] and isinstance(lost[0], Wrong)
    never = run_checks(outcome(), [{"anywhere": "restored every night at 02:00"}])
    assert never == ["anywhere: no memory file says 'restored every night at 02:00'"]
    assert not isinstance(never[0], Wrong)


def test_eval_command_prints_table_and_json(tmp_path):
    folder = write_case(tmp_path / "cases", CASE)
    table = in_process("eval", "--cases", str(folder))
    assert table.code == 0 and "forget" in table.stdout and "1/1" in table.stdout
    data = in_process("eval", "--cases", str(folder), "--json").json
    assert data["engine"] == "offline" and data["overall"]["passed"] == data["overall"]["total"] == 1
    assert data["overall"]["wrong_changes"] == data["overall"]["misses"] == 0


def test_an_engine_crash_fails_its_case_not_the_scorecard(tmp_path, monkeypatch):
    from dream.eval import runner

    def broken(*args, **kwargs):
        raise RuntimeError("engine bug")

    monkeypatch.setattr(runner, "run", broken)
    card = evaluate(write_case(tmp_path / "cases", CASE), "offline")
    assert card.results[0].failures[0] == "step run: internal error: RuntimeError: engine bug"
