"""The noticing stage: what the request reader does not read reaches a person with a suggested change; talk
that names no memory, tasks, questions and withdrawn requests do not."""

from __future__ import annotations

from datetime import date

import pytest

from helpers.offline_engine import indexed, run, sessions, topic

DAY, NEXT = date(2026, 3, 9), date(2026, 3, 10)
TREE = indexed(
    ("reference_gateway.md", "Gateway", "gateway on port 7070", "reference", "The gateway listens on port 7070."),
    ("project_backups.md", "Backups", "backups run at 02:00 on bk-2", "project", "Backups run at 02:00 on bk-2."),
)


@pytest.mark.parametrize("said, suggested", [
    ("the backups notes can go", "forget `project_backups.md`?"),
    ("gateway: 7070 → 7071", "in `reference_gateway.md`, 7070 → 7071?"),
    ("s/7070/7072/ please", "in `reference_gateway.md`, 7070 → 7072?"),
    ("备份那条删掉吧 backups", "forget `project_backups.md`?"),
])
def test_a_noticed_sentence_reaches_a_person_with_a_suggested_change(tmp_path, said, suggested):
    out, result = run(tmp_path, TREE, sessions(("s1", DAY, "user", said)))
    assert result.changes == [] or all(c.kind != "request" for c in result.changes)  # noticed, never applied
    assert any(f"“{said}”" in item and suggested in item for item in result.needs_person), result.needs_person


@pytest.mark.parametrize("said", [
    "remember when the backups ran twice and filled the disk?",
    "remember to restart the gateway after the deploy",
    "I always forget to check the backups",
    "delete the tmp folder and rerun",
])
def test_questions_tasks_and_talk_reach_no_one(tmp_path, said):
    out, result = run(tmp_path, TREE, sessions(("s1", DAY, "user", said)))
    assert result.needs_person == [] and out == {k: v for k, v in TREE.items()}


@pytest.mark.parametrize("said", [
    "the backups migration on bk-2 failed again, rerun it",  # es/pt "migr", it "migrati" read "migration"
    "add type annotations to the gateway handler",  # it "annot"
    "another gateway timeout on port 7070 during the backups",  # pt "anot" read "another"
    "es notable lo lento que va el gateway con los backups",  # es "nota" read "notable"
    "ho notato che il gateway rallenta durante i backups",  # it "nota" read "notato"
    "a notação dos backups no gateway mudou",  # pt "nota" read "notação"
])
def test_a_stem_of_one_language_does_not_notice_an_everyday_word_of_another(tmp_path, said):
    """Noticing stems match a word's start in any language: a Spanish one must not fire on English talk (a
    night of 5 MB of ordinary logs put 1,611 sentences with "migration" before a person)."""
    out, result = run(tmp_path, TREE, sessions(("s1", DAY, "user", said)))
    assert result.needs_person == [] and out == {k: v for k, v in TREE.items()}


def test_a_forget_withdrawn_the_next_day_removes_nothing(tmp_path):
    rows = sessions(("s1", DAY, "user", "forget the backups note"),
                    ("s2", NEXT, "user", "about yesterday: keep the backups note after all"))
    out, result = run(tmp_path, TREE, rows)
    assert "project_backups.md" in out and result.changes == []


def test_a_bare_keep_it_after_a_forget_withdraws_it(tmp_path):
    rows = sessions(("s1", DAY, "user", "forget the backups note"), ("s1", DAY, "assistant", "Remove it?"),
                    ("s1", DAY, "user", "hmm no, keep it"))
    out, _ = run(tmp_path, TREE, rows)
    assert "project_backups.md" in out


def test_a_value_inside_a_host_name_is_never_edited(tmp_path):
    tree = {"MEMORY.md": "- [Backups](project_backups.md) — backups on bk-2.internal\n".encode(),
            "project_backups.md": topic("Backups", "backups on bk-2.internal", "project",
                                        "Backups run on bk-2.internal:9000.")}
    out, result = run(tmp_path, tree, sessions(("s1", DAY, "user", "actually backups run on bk-3 now, not bk-2")))
    assert out["project_backups.md"] == tree["project_backups.md"]
    assert any("bk-3" in item and "inside a longer name" in item for item in result.needs_person)


def test_every_line_that_withdraws_passes_the_quick_filter():
    """The polars filter in front of the withdrawal check drops no line the check would read: every user line of
    every visible eval case that withdraws holds one of the filter's texts (and most lines do not)."""
    import polars as pl

    from dream.engines.offline.notice import _withdrawal, _withdrawal_texts
    from dream.eval.cases import default_cases_dir, load_cases

    said = [line[2:] for case in load_cases(default_cases_dir()) for log in case.logs
            for line in log.text.splitlines() if line.startswith("> ")]
    kept = pl.Series(said).str.contains(_withdrawal_texts())
    withdrawing = [text for text in said if _withdrawal(text)]
    assert len(withdrawing) > 20
    assert all(kept[i] for i, text in enumerate(said) if _withdrawal(text))
    assert kept.sum() < len(said) / 2  # worth having even here, where most lines ask for something


def _asked(result, said: str, suggested: str) -> bool:
    return any(f"“{said}”" in item and suggested in item for item in result.needs_person)


@pytest.mark.parametrize("said, suggested", [
    ("バックアップのメモ古いよ backups", "`project_backups.md`"),  # a Latin word inside Japanese is a word
    ("backups 2:00 → 3:30", "in `project_backups.md`, 2:00 → 3:30?"),
    ("s/7070/7075", "in `reference_gateway.md`, 7070 → 7075?"),  # no closing slash
    ("gateway 7071 (was 7070)", "in `reference_gateway.md`, 7070 → 7071?"),  # two values, one stated
    ("el puerto del gateway pasó de 7070 a 7079", "in `reference_gateway.md`, 7070 → 7079?"),
    ("der Gateway läuft jetzt auf 7077", "`reference_gateway.md`"),  # 'jetzt' and a value of the memory's shape
    ("remeber that the docs site builds with mkdocs 1.6", "remember “the docs site builds with mkdocs 1.6”?"),
    ("백업 메모는 이제 필요 없어, 지워줘", "forget a memory, but which?"),  # a memory word and a dismissal, no name
])
def test_changes_said_without_a_request_form_reach_a_person(tmp_path, said, suggested):
    out, result = run(tmp_path, TREE, sessions(("s1", DAY, "user", said)))
    assert out == TREE and _asked(result, said, suggested), result.needs_person


@pytest.mark.parametrize("said", [
    "the gateway answers 503 now, weird",  # a number of no shape the memory holds (not a port)
    "bump the lockfile 1.4.2 → 1.4.3 and tag it",  # no memory states 1.4.2 or is named
    "run sed -i 's/7070/7071/' compose.yml and restart",  # a command to run, not a correction
    "the gateway handled 1200 requests in 300ms",  # two values, neither stated
])
def test_numbers_and_arrows_in_talk_reach_no_one(tmp_path, said):
    out, result = run(tmp_path, TREE, sessions(("s1", DAY, "user", said)))
    assert result.needs_person == [] and out == TREE


def test_a_pasted_diff_is_noticed_and_quoted_with_its_lines(tmp_path):
    rows = sessions(("s1", DAY, "user", "env update:\n- GATEWAY_PORT=7070\n+ GATEWAY_PORT=7074"))
    out, result = run(tmp_path, TREE, rows)
    assert out == TREE
    assert _asked(result, "env update: - GATEWAY_PORT=7070 + GATEWAY_PORT=7074", "7070 → 7074?"), result.needs_person


def test_a_yes_to_the_assistants_question_about_a_memory_reaches_a_person(tmp_path):
    rows = sessions(("s1", DAY, "user", "we moved backups off bk-2"),
                    ("s1", DAY, "assistant", "Should I delete project_backups.md from memory?"),
                    ("s1", DAY, "user", "yep"))
    out, result = run(tmp_path, TREE, rows)
    assert out == TREE and _asked(result, "yep", "for `project_backups.md`?"), result.needs_person


def test_a_yes_to_a_question_that_changes_no_memory_reaches_no_one(tmp_path):
    rows = sessions(("s1", DAY, "user", "where is the backup host?"),
                    ("s1", DAY, "assistant", "It is in project_backups.md. Want me to open project_backups.md?"),
                    ("s1", DAY, "user", "yes"))
    _, result = run(tmp_path, TREE, rows)
    assert result.needs_person == []


def test_a_request_that_names_nothing_is_completed_by_the_answer_to_which_one(tmp_path):
    rows = sessions(("s1", DAY, "user", "one of the notes is stale, get rid of it"),
                    ("s1", DAY, "assistant", "Which one?"), ("s1", DAY, "user", "backups"))
    out, result = run(tmp_path, TREE, rows)
    assert out == TREE and _asked(result, "one of the notes is stale, get rid of it", "forget `project_backups.md`?")


def test_a_noticed_sentence_taken_back_later_reaches_no_one(tmp_path):
    rows = sessions(("s1", DAY, "user", "scrap the backups note, bk-2 is going away"),
                    ("s2", NEXT, "user", "re the backups note from yesterday: leave it, bk-2 stays"))
    out, result = run(tmp_path, TREE, rows)
    assert out == TREE and result.needs_person == []


def test_a_remember_withdrawn_the_next_day_reaches_no_one(tmp_path):
    rows = sessions(("s1", DAY, "user", "remember that the gateway moves to port 7090"),
                    ("s2", NEXT, "user", "forget what I said yesterday about the gateway, the move is off"))
    out, result = run(tmp_path, TREE, rows)
    assert out == TREE and result.needs_person == []


@pytest.mark.parametrize("said, phrase", [
    ("remember the pen test is early next quarter", "next quarter"),
    ("记住：下个月初迁移备份", "下个月初"),  # never half rewritten ("2026-04初")
    ("覚えておいて：来月末にバックアップを移す", "来月末"),
    ("remember the backup move is mid next month", "next month"),
])
def test_a_relative_date_no_row_reads_is_left_as_written_and_noted(tmp_path, said, phrase):
    out, result = run(tmp_path, TREE, sessions(("s1", DAY, "user", said)))
    new = [text.decode() for name, text in out.items() if name not in TREE]
    assert new and not any("2026-04" in text for text in new)
    assert any(f"“{phrase}”" in item for item in result.needs_person), result.needs_person


@pytest.mark.parametrize("said, suggested", [
    ("gateway: 7070 => 7071", "in `reference_gateway.md`, 7070 → 7071?"),  # "=>" between values: no lambda
    ("bk-2 is gone, backups run on bk-3", "in `project_backups.md`, bk-2 → bk-3?"),  # one-digit hosts
    ("gatewayのポート、今は7071だよ", "update `reference_gateway.md`"),  # a value ends where kana go on
    ("网关那条记忆过时了，现在是7071", "update a memory to say what this sentence says, but which?"),
])
def test_a_change_said_without_a_request_form_reaches_a_person(tmp_path, said, suggested):
    out, result = run(tmp_path, TREE, sessions(("s1", DAY, "user", said)))
    assert out == dict(TREE)
    assert any(f"“{said}”" in item and suggested in item for item in result.needs_person), result.needs_person


@pytest.mark.parametrize("before, said, suggested", [
    ("Your backups note still says bk-2.", "yeah get rid of it", "forget `project_backups.md`?"),
    ("Want me to remember the release freeze dates?", "yes please", "remember what the assistant offered"),
    ("The freeze starts on the 14th and ends on the 28th.", "それメモっといて", "remember what was said just before"),
])
def test_a_line_that_points_at_the_assistants_reaches_a_person(tmp_path, before, said, suggested):
    out, result = run(tmp_path, TREE, sessions(("s1", DAY, "assistant", before), ("s1", DAY, "user", said)))
    assert out == dict(TREE)
    assert any(f"“{said}”" in item and suggested in item for item in result.needs_person), result.needs_person


@pytest.mark.parametrize("before, said", [
    ("Should I update the snapshot tests?", "yes please"),  # a yes to work, not to keeping something
    ("Should I raise the memory limit to 2GB?", "yes"),
    ("Your backups note still says bk-2.", "yeah I know, later"),  # a yes to no question at all
])
def test_a_yes_to_work_reaches_no_one(tmp_path, before, said):
    out, result = run(tmp_path, TREE, sessions(("s1", DAY, "assistant", before), ("s1", DAY, "user", said)))
    assert result.needs_person == [] and out == dict(TREE)


def test_a_request_typed_below_a_paste_reaches_a_person(tmp_path):
    log = "\n".join(f"10:{i:02d} worker-{i % 3} done in {40 + i}ms" for i in range(20))
    entry = f"here's the worker log:\n{log}\n\nbtw the backups notes can go"
    out, result = run(tmp_path, TREE, sessions(("s1", DAY, "user", entry)))
    assert out == dict(TREE)
    assert any("forget `project_backups.md`?" in item for item in result.needs_person), result.needs_person


def test_a_thank_you_typed_below_a_paste_reaches_no_one(tmp_path):
    log = "\n".join(f"10:{i:02d} worker-{i % 3} done in {40 + i}ms" for i in range(20))
    out, result = run(tmp_path, TREE, sessions(("s1", DAY, "user", f"here's the log:\n{log}\n\nthanks, fine now")))
    assert result.needs_person == [] and out == dict(TREE)
